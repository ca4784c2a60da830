"""Copies of what the crawl has: translations and the same text under other URLs.

A translated manual links every page to its translations ("Available languages: de | fr"),
and a packaged one puts each untranslated page's English text under every language's
path (Debian's Apache manual: ``/de/mod/mod_env.html`` is the English page). Their
URLs and words say what the originals say, so a focused crawl that has the original
would spend its budget on them. The crawl knows its language (``ADAPTIVE_LANGUAGE``,
"auto": the one its relevant pages declare), treats a page in another language or
with text it already fetched as a copy (rewarded as a miss) and lowers the prior of
links to other languages and of every link of a copy (``ADAPTIVE_COPY_WEIGHT``).
"""

from __future__ import annotations

import pytest
import scrapy
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.frontier.linkevidence import link_evidence
from adaptive_spider.relevance.links import PageLinks, language_tag
from adaptive_spider.settings.parsers import ConfigError
from benchmarks import localsite
from spiders.focused import FocusedSpider
from tests.conftest import TEST_SETTINGS, crawl_test, project_settings, run_crawl

QUERY = "telescope mirrors and lenses for observing planets"
LANGUAGES = ("en", "de", "fr", "ja")
#: The manual's pages about the query, and the rest (each says a query word or none).
TOPIC_PAGES = {
    "mirrors": "Telescope mirrors",
    "lenses": "Telescope lenses",
    "eyepieces": "Telescope eyepieces and lenses",
    "mounts": "Telescope mounts for observing",
    "planets": "Observing planets with a telescope",
    "coatings": "Mirror coatings and lens coatings",
}
OTHER_PAGES = {
    "install": "Installing the software",
    "licence": "Licence",
    "sky": "The night sky for observing",
    "weather": "Weather and seeing",
}
#: The pages each language translated; the others are the English text under its path.
TRANSLATED = {"de": {"mirrors", "install"}, "fr": set(TOPIC_PAGES) | set(OTHER_PAGES), "ja": {"lenses"}}


def _english_body(name: str, title: str) -> str:
    words = f"{title}. " * 3
    if name in TOPIC_PAGES:
        words += "A telescope gathers light with mirrors or lenses; observing the planets needs both. " * 4
    else:
        words += "This chapter explains the program, its options and where its files go. " * 4
    return f"<p>{words}</p>"


def manual_page(language: str, name: str) -> str:
    """A page of the manual as served under ``/manual/<language>/`` (an index for "index")."""
    if language != "en" and name != "index" and name not in TRANSLATED[language]:
        return manual_page("en", name)  # the English page's file under the language's path
    if name == "index":
        title = "Manual" if language == "en" else f"Manual ({language})"
        items = "".join(
            f'<li><a href="{page}.html">{heading}</a></li>' for page, heading in {**TOPIC_PAGES, **OTHER_PAGES}.items()
        )
        body = f"<ul>{items}</ul>"
    else:
        title = {**TOPIC_PAGES, **OTHER_PAGES}[name]
        body = _english_body(name, title) if language == "en" else (
            f"<p>{title} ({language}). " + "Ein Fernrohr sammelt Licht mit Spiegeln oder Linsen. " * 8 + "</p>"
        )  # fmt: skip
    alternates = " | ".join(
        f'<a href="../{other}/{name}.html" hreflang="{other}" rel="alternate">&nbsp;{other}&nbsp;</a>'
        for other in LANGUAGES
        if other != language and (other == "en" or name == "index" or name in TRANSLATED[other])
    )
    see_also = "".join(f'<li><a href="{page}.html">{heading}</a></li>' for page, heading in TOPIC_PAGES.items())
    return (
        f'<html lang="{language}"><head><title>{title}</title></head><body><h1>{title}</h1>'
        f"<p>Available languages: {alternates}</p>{body}"
        f'<h2>See also</h2><ul>{see_also}</ul><p><a href="index.html">Index</a></p></body></html>'
    )


def answer(host: str, path: str) -> tuple[int, bytes]:
    parts = path.strip("/").split("/")
    if len(parts) == 3 and parts[0] == "manual" and parts[1] in LANGUAGES and parts[2].endswith(".html"):
        name = parts[2][: -len(".html")]
        if name == "index" or name in TOPIC_PAGES or name in OTHER_PAGES:
            return 200, manual_page(parts[1], name).encode()
    return 404, b"<html><body>Not found</body></html>"


@pytest.fixture(scope="module")
def manual():
    server, url = localsite.serve(answer)
    yield url.rstrip("/")
    server.shutdown()


async def _crawl(base: str, **settings) -> tuple[list[str], dict]:
    pages = len(LANGUAGES) * (1 + len(TOPIC_PAGES) + len(OTHER_PAGES))
    crawl_settings = project_settings(
        ADAPTIVE_STRATEGY="bestfirst", CLOSESPIDER_PAGECOUNT=pages + 1, CONCURRENT_REQUESTS=1, **settings
    )
    result = await run_crawl(FocusedSpider, crawl_settings, query=QUERY, start_urls=f"{base}/manual/en/index.html")
    # Each page once, in the order first fetched (the start page comes again through its "Index" links:
    # a start request is not filtered, so its URL is not marked seen).
    return list(dict.fromkeys(url[len(base) :] for url in result.fetched)), result.stats


@crawl_test
async def test_a_crawl_takes_its_languages_pages_before_translations_and_copies(manual):
    order, stats = await _crawl(manual)
    english = [index for index, path in enumerate(order) if path.startswith("/manual/en/")]
    others = [index for index, path in enumerate(order) if not path.startswith("/manual/en/")]
    assert len(english) == 1 + len(TOPIC_PAGES) + len(OTHER_PAGES), order
    # Every English page, those that say no query word too, before any translation or copy.
    assert max(english) < min(others), order
    # The crawl to the site's end took the copies last; the report says what they were.
    assert stats["adaptive/language"] == "en"
    copies = (
        stats["adaptive/report/relevance/copies/same_text"],
        stats["adaptive/report/relevance/copies/other_language"],
    )
    untranslated = sum(len(TOPIC_PAGES) + len(OTHER_PAGES) - len(TRANSLATED[language]) for language in ("de", "ja"))
    assert len(order) == len(LANGUAGES) * len(english)  # the whole site
    # The start page fetched again (its "Index" links) is a copy of its text too.
    assert copies == (untranslated + 1, len(order) - len(english) - untranslated), order


@crawl_test
async def test_without_the_copy_weight_translations_come_before_the_english_pages_they_outrank(manual):
    """The same crawl with copies fetched as any page (the order before): the translations
    of the telescope pages, whose URLs and text say the query's words, come first."""
    order, _ = await _crawl(manual, ADAPTIVE_COPY_WEIGHT=1.0)
    first_other = min(index for index, path in enumerate(order) if not path.startswith("/manual/en/"))
    last_english = max(index for index, path in enumerate(order) if path.startswith("/manual/en/"))
    assert first_other < last_english, order


def _state(**settings) -> CrawlState:
    crawler = get_crawler(scrapy.Spider, {**TEST_SETTINGS, "ADAPTIVE_QUERY": QUERY, **settings})
    return CrawlState.of(crawler)


def _response(url: str, html: str) -> HtmlResponse:
    return HtmlResponse(url, body=html.encode(), encoding="utf-8", request=Request(url))


def test_a_links_hreflang_and_its_pages_language_are_read():
    html = (
        '<html lang="en-US"><body><a href="/de/a.html" hreflang="de-AT">de</a> <a href="/b.html">b</a> '
        '<a href="/any.html" hreflang="x-default">any</a></body></html>'
    )
    links = PageLinks.of(_response("http://a.test/a.html", html))
    assert links.language == "en"
    assert {link.url.rsplit("/", 1)[1]: link.language for link in links.followable} == {
        "a.html": "de",
        "b.html": "",
        "any.html": "",
    }
    assert language_tag("zh_CN") == "zh" and language_tag("") == "" and language_tag("1x") == ""


def test_a_page_whose_text_was_fetched_under_another_url_is_a_copy_and_its_links_lowered():
    state = _state()
    original = state.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    other = state.analyze(_response("http://a.test/en/lenses.html", manual_page("en", "lenses")))
    assert other.page_id not in state.copy_pages  # another page's text: no copy
    mirror = state.analyze(_response("http://a.test/da/mirrors.html", manual_page("en", "mirrors")))
    assert mirror.page_id in state.copy_pages and original.page_id not in state.copy_pages
    assert mirror.relevance == original.relevance > 0  # the page's relevance stays its own
    assert state.parent_score(mirror.page_id) == 0.0  # to the frontier it is a miss
    assert state.parent_score(original.page_id) == pytest.approx(original.relevance, abs=1e-6)

    def prior(parent: int) -> float:
        meta = {"link_text": "Observing planets", "adaptive_parent": parent}
        return link_evidence(Request("http://a.test/da/planets.html", meta=meta), state, 0).prior

    lowered = prior(mirror.page_id)
    state.copy_pages.discard(mirror.page_id)
    assert lowered == pytest.approx(state.config.copy_weight * prior(mirror.page_id))

    short = "<html><body><p>Moved.</p></body></html>"  # a stub says too little to tell pages apart
    first, second = (state.analyze(_response(f"http://a.test/old{i}.html", short)) for i in range(2))
    assert first.page_id not in state.copy_pages and second.page_id not in state.copy_pages

    nothing_copied = _state(ADAPTIVE_COPY_WEIGHT=1)
    nothing_copied.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    mirror = nothing_copied.analyze(_response("http://a.test/da/mirrors.html", manual_page("en", "mirrors")))
    assert not nothing_copied.copy_pages
    assert nothing_copied.parent_score(mirror.page_id) == pytest.approx(mirror.relevance, abs=1e-6)


def test_pages_and_links_in_another_language_than_the_crawls_are_copies():
    state = _state()
    assert state.language == ""  # nothing declared yet: no language is another
    english = state.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    assert state.language == "en" and english.page_id not in state.copy_pages
    german = state.analyze(_response("http://a.test/de/mirrors.html", manual_page("de", "mirrors")))
    assert german.page_id in state.copy_pages

    def prior(language: str) -> float:
        meta = {"link_text": "Telescope lenses", "adaptive_parent": english.page_id, "link_language": language}
        return link_evidence(Request("http://a.test/de/lenses.html", meta=meta), state, 0).prior

    assert prior("de") == pytest.approx(state.config.copy_weight * prior("en"))
    assert prior("") == prior("en")  # a language no one declared is the crawl's

    anything = _state(ADAPTIVE_LANGUAGE="any")
    anything.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    german = anything.analyze(_response("http://a.test/de/mirrors.html", manual_page("de", "mirrors")))
    assert german.page_id not in anything.copy_pages and anything.language == ""

    fixed = _state(ADAPTIVE_LANGUAGE="de-DE")
    assert fixed.language == "de"
    english = fixed.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    assert english.page_id in fixed.copy_pages


def test_the_crawls_language_is_the_one_its_relevant_pages_declare():
    """A site's pages about other things in another language do not make it the crawl's:
    the languages weigh by the relevance of their pages."""
    state = _state()
    for index in range(3):
        off_topic = f'<html lang="de"><head><title>Kochen {index}</title></head><body><p>Brot backen.</p></body></html>'
        state.analyze(_response(f"http://a.test/de/kochen{index}.html", off_topic))
    assert state.language == "de"
    state.analyze(_response("http://a.test/en/mirrors.html", manual_page("en", "mirrors")))
    assert state.language == "en"


@pytest.mark.parametrize(("value", "message"), [("english!", "ADAPTIVE_LANGUAGE"), ("12", "language tag")])
def test_a_bad_language_names_the_setting(value, message):
    with pytest.raises(ConfigError, match=message):
        _state(ADAPTIVE_LANGUAGE=value)
