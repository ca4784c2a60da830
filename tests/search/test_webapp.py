"""The result page: routes and escaping (in-process), then in headless Chromium."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from adaptive_spider.search import SearchIndex, SynonymDictionary
from adaptive_spider.search.webapp import SearchApp, make_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
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


def test_page_lists_results_with_a_column_per_field(app):
    status, kind, html = get(app, "/?index=posts&q=pip+install")
    assert status == 200 and kind.startswith("text/html")
    assert "<th>id</th><th>title</th><th>body</th><th>votes</th><th>score</th>" in html
    assert "pip install does not work behind a proxy" in html
    assert '<option value="astronomy"' in html


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
    assert "<th>url</th><th>text</th><th>score</th>" in html


def test_server_binds_to_loopback_by_default(app):
    server = make_server(app, port=0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


@pytest.fixture
def served(app):
    server = make_server(app, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


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
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=CHROMIUM_ARGS)
                try:
                    check(browser.new_page())
                finally:
                    browser.close()
        except BaseException as error:  # noqa: BLE001 (re-raised on the test's thread)
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
    ids = page.locator("#results tbody tr td:first-child").all_text_contents()
    assert set(ids[:2]) == {"p1", "p5"}

    # A hostile document title is shown as text and never runs.
    page.fill("#q", "hostile telescope")
    page.press("#q", "Enter")
    page.wait_for_url("**q=hostile+telescope**", timeout=5000)
    cells = page.locator("#results tbody tr").first.locator("td").all_text_contents()
    assert cells[0] == HOSTILE_ID
    assert cells[1] == HOSTILE_TITLE
    assert page.locator("#results img, #results script, #results svg").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert errors == []
