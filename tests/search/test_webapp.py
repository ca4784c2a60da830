"""The result page: routes and escaping (in-process), then in headless Chromium."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from adaptive_spider.search import SearchIndex, SynonymDictionary
from adaptive_spider.search.webapp import SearchApp, make_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE_TITLE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
HOSTILE_ID = '"><svg onload="window.__pwned=3">'


@pytest.fixture
def app(posts):
    index = SearchIndex(fields=["title", "body"])
    index.add(posts)
    index.add([{"id": HOSTILE_ID, "title": HOSTILE_TITLE, "body": "hostile telescope", "votes": 2}])
    other = SearchIndex(fields=["text"], id_field="url")
    other.add([{"url": "http://127.0.0.1/moon", "text": "the moon orbits the earth"}])
    synonyms = SynonymDictionary([["venv", "virtual environment"]])
    return SearchApp({"posts": index, "astronomy": other}, synonyms=synonyms)


def get(app, target):
    status, kind, body = app.respond(target)
    return status, kind, body.decode()


def test_page_shows_each_hit_as_a_result_with_the_query_words_marked(app):
    status, kind, html = get(app, "/?index=posts&q=pip+install")
    assert status == 200 and kind.startswith("text/html")
    assert "<table" not in html
    assert (
        '<li class="hit"><span class="title"><mark>pip</mark> <mark>install</mark> does not work behind a proxy</span>'
        in html
    )
    assert '<div class="url">p3</div>' in html  # no URL: the id, and the title is not a link
    assert (
        '<p class="snippet"><mark>pip</mark> <mark>install</mark> times out; configure the proxy for <mark>pip</mark>.</p>'
        in html
    )
    assert '<div class="meta">score ' in html and " · votes 40</div>" in html
    assert '<option value="astronomy"' in html


def test_a_url_becomes_the_title_link_and_stemmed_words_are_marked(app):
    _, _, html = get(app, "/?index=astronomy&q=orbiting")
    assert '<a class="title" href="http://127.0.0.1/moon">http://127.0.0.1/moon</a>' in html  # no title field: the URL
    assert '<p class="snippet">the moon <mark>orbits</mark> the earth</p>' in html


@pytest.fixture
def pages_app():
    """Crawled pages: URL ids, a title and a long text, 25 of them matching "telescope"."""
    index = SearchIndex(fields=["title", "text"], id_field="url")
    filler = "Plain words about the night sky fill this part of the page. " * 8
    index.add(
        {
            "url": f"http://127.0.0.1/page-{n}.html",
            "title": f"Telescope notes {n}",
            "text": f"{filler}A refracting telescope uses a lens; a reflecting telescope a mirror. {filler}",
        }
        for n in range(25)
    )
    index.add([{"url": "javascript:alert(1)", "title": "Telescope trap", "text": "telescope"}])
    return SearchApp({"pages": index})


def test_snippet_is_the_window_around_the_query_words(pages_app):
    _, _, html = get(pages_app, "/?q=telescope+lens&top=30")
    snippet = html.split('<p class="snippet">', 1)[1].split("</p>", 1)[0]
    assert snippet.startswith("…") and snippet.endswith("…")
    assert (
        "A refracting <mark>telescope</mark> uses a <mark>lens</mark>; a reflecting <mark>telescope</mark> a mirror."
        in snippet
    )
    assert len(snippet.replace("<mark>", "").replace("</mark>", "")) <= 250
    assert '<a class="title" href="http://127.0.0.1/page-' in html
    assert '<span class="title"><mark>Telescope</mark> trap</span>' in html  # only http(s) URLs are links
    assert 'href="javascript:' not in html


def test_paging_keeps_the_search_and_offsets_the_hits(pages_app):
    _, _, html = get(pages_app, "/?q=telescope&top=10&k=1.5")
    assert "26 matching documents, showing 1–10" in html and html.count('<li class="hit">') == 10
    assert '<a rel="next" class="next" href="/?q=telescope&amp;top=10&amp;k=1.5&amp;page=2">Next →</a>' in html
    assert 'rel="prev"' not in html and "Page 1 of 3" in html
    _, _, page3 = get(pages_app, "/?q=telescope&top=10&k=1.5&page=3")
    assert "showing 21–26" in page3 and '<ol id="results" start="21">' in page3 and page3.count('<li class="hit">') == 6
    assert 'rel="next"' not in page3 and 'href="/?q=telescope&amp;top=10&amp;k=1.5&amp;page=2">← Previous</a>' in page3
    first = {hit["id"] for hit in json.loads(get(pages_app, "/api/search?q=telescope&top=10")[2])["hits"]}
    third = {hit["id"] for hit in json.loads(get(pages_app, "/api/search?q=telescope&top=10&page=3")[2])["hits"]}
    assert len(first) == 10 and len(third) == 6 and not first & third
    _, _, past = get(pages_app, "/?q=telescope&top=10&page=9")
    assert "page 9 is past the last one" in past and 'href="/?q=telescope&amp;top=10&amp;page=3">← Previous' in past
    status, _, html = get(pages_app, "/?q=telescope&page=0")
    assert status == 400 and "page must be between 1" in html


def test_every_shown_string_is_escaped(app):
    _, _, html = get(app, "/?index=posts&q=hostile+telescope")
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "&quot;&gt;&lt;svg onload=" in html
    _, _, html = get(app, '/?index=posts&q="><script>alert(1)</script>')
    assert "<script>alert(1)</script>" not in html
    assert 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in html


def test_bad_input_is_shown_as_an_error(app):
    status, _, html = get(app, "/?index=posts&q=+")
    assert status == 400 and "empty query" in html
    status, _, html = get(app, "/?index=posts&q=pip&formula=__import__('os')")
    assert status == 400 and "formula: unexpected character" in html
    status, _, html = get(app, "/?index=<b>nope</b>&q=pip")
    assert status == 400 and "unknown index &#x27;&lt;b&gt;nope&lt;/b&gt;&#x27;" in html
    status, _, body = get(app, "/api/search?index=posts&q=pip&formula=stars")
    assert status == 400 and json.loads(body)["error"].startswith("formula: unknown field 'stars'")


def test_suggest_api_completes_and_adds_synonyms(app):
    status, kind, body = get(app, "/api/suggest?index=posts&q=virtual+envi")
    assert status == 200 and kind == "application/json"
    assert json.loads(body)["suggestions"][0] == "virtual environment"
    _, _, body = get(app, "/api/suggest?index=posts&q=venv")
    assert "virtual environment" in json.loads(body)["suggestions"]


def test_index_selector_switches_index(app):
    _, _, body = get(app, "/api/search?index=astronomy&q=moon")
    assert json.loads(body)["hits"][0]["id"] == "http://127.0.0.1/moon"
    _, _, html = get(app, "/?index=astronomy&q=moon")
    assert '<a class="title" href="http://127.0.0.1/moon">' in html


def test_server_binds_to_loopback_by_default(app):
    server = make_server(app, port=0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


def serve(app):
    server = make_server(app, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def served(app):
    yield from serve(app)


@pytest.fixture
def served_pages(pages_app):
    yield from serve(pages_app)


def in_browser(check) -> None:
    """Run ``check(page)`` in headless Chromium on its own thread.

    Playwright's sync API refuses to run where an asyncio loop is running,
    which pytest's asyncio reactor makes the case on the main thread.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    failure = []

    def run():
        try:
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                try:
                    check(browser.new_page())
                finally:
                    browser.close()
        except BaseException as error:  # re-raised on the test's thread
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the browser did not finish within 60 s"
    if failure:
        raise failure[0]


@pytest.mark.browser
def test_browser_search_suggestion_and_escaping(served):
    in_browser(lambda page: search_suggest_and_escape(page, served))


def search_suggest_and_escape(page, served):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{served}/?index=posts")

    # A suggestion while typing; choosing it runs the search.
    page.type("#q", "virtual envi", delay=20)
    suggestion = page.locator("#suggestions li").first
    suggestion.wait_for(state="visible", timeout=5000)
    assert suggestion.text_content() == "virtual environment"
    suggestion.dispatch_event("mousedown")
    page.wait_for_url("**q=virtual+environment**", timeout=5000)
    ids = page.locator("#results .hit .url").all_text_contents()
    assert set(ids[:2]) == {"p1", "p5"}

    # A hostile document title is shown as text and never runs.
    page.fill("#q", "hostile telescope")
    page.press("#q", "Enter")
    page.wait_for_url("**q=hostile+telescope**", timeout=5000)
    first = page.locator("#results .hit").first
    assert first.locator(".url").text_content() == HOSTILE_ID
    assert first.locator(".title").text_content() == HOSTILE_TITLE
    assert page.locator("#results img, #results script, #results svg").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert errors == []


@pytest.mark.browser
def test_browser_result_page_reads_like_one(served_pages):
    in_browser(lambda page: results_and_paging(page, served_pages))


def results_and_paging(page, served):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{served}/?q=telescope+lens&top=10")
    hits = page.locator("#results .hit")
    assert hits.count() == 10
    title = hits.first.locator("a.title")
    assert title.get_attribute("href").startswith("http://127.0.0.1/page-")
    assert title.text_content().startswith("Telescope notes")
    assert hits.first.locator(".url").text_content() == title.get_attribute("href")
    marked = hits.first.locator(".snippet mark").all_text_contents()
    assert {"telescope", "lens"} <= set(marked)
    assert page.locator("#total").text_content() == "26 matching documents, showing 1–10"

    # The next page keeps the query and shows the next ten.
    page.locator("a[rel=next]").click()
    page.wait_for_url("**page=2**", timeout=5000)
    assert page.locator("#q").input_value() == "telescope lens"
    assert page.locator("#total").text_content().endswith("showing 11–20")
    assert page.locator("a[rel=prev]").count() == 1 and page.locator("a[rel=next]").count() == 1
    assert errors == []
