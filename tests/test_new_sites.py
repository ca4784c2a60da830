"""Sites the query's words never name are opened all the same, in a real crawl behind a local proxy.

The hub links forty pages of ``notes.test``, whose anchors and pages are full of the
query's words and which link on to ever more such pages. Every note's footer also links a
site whose name says nothing of the query: "Reference manual" (``manual.test``). Only that site holds the
pages that answer the query, linked from its start page by their titles. A frontier
ranked by the links' words alone would fetch notes for ever; ``ADAPTIVE_NEW_DOMAIN_SHARE``
gives the unseen site one fetch early, and its start page's links do the rest.
"""

from __future__ import annotations

import pytest

from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl, serve_as_proxy

QUERY = "blue widget assembly"
# The manual is found after a few notes (in free order, up to ~90 fetches under load), its answers
# about 20 fetches later; ranked by words alone, it is still not reached after CONTROL_BUDGET.
BUDGET = 250
CONTROL_BUDGET = 150
NOTES_ON_HUB = 40
ANSWERS = [f"http://manual.test/assembly/{n}" for n in range(5)]


def _page(title: str, links: list[tuple[str, str]], body: str = "") -> bytes:
    anchors = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p><ul>{anchors}</ul></body></html>".encode()


def _answer(host: str, path: str) -> tuple[int, bytes]:
    if host == "hub.test":
        notes = [(f"http://notes.test/{n}", f"blue widget notes {n}") for n in range(NOTES_ON_HUB)]
        return 200, _page("Hub", notes)
    if host == "notes.test":  # an endless region of near misses
        n = int(path.strip("/") or 0)
        links = [(f"/{n * 3 + k + NOTES_ON_HUB}", f"blue widget notes {n * 3 + k + NOTES_ON_HUB}") for k in range(3)]
        links.append(("http://manual.test/", "Reference manual"))
        return 200, _page(f"Blue widget notes {n}", links, "a note on blue widget colours")
    if host == "manual.test":
        if path == "/":
            return 200, _page("Manual", [(url, f"Blue widget assembly step {url[-1]}") for url in ANSWERS])
        return 200, _page(f"Blue widget assembly {path}", [], "how to do blue widget assembly: " * 20)
    return 404, b""


@pytest.fixture
def proxy(monkeypatch):
    yield from serve_as_proxy(monkeypatch, _answer)  # it answers for every host itself


async def _crawl(budget: int, **overrides):
    settings = project_settings(CLOSESPIDER_PAGECOUNT=budget, ADAPTIVE_SELF_STOP=False, **overrides)
    return await run_crawl(FocusedSpider, settings, query=QUERY, start_urls="http://hub.test/")


@crawl_test
async def test_a_site_whose_name_shares_no_word_with_the_query_is_opened_and_its_answers_fetched(proxy):
    result = await _crawl(BUDGET)  # the default profile, the default strategy
    fetched = result.fetched
    assert set(ANSWERS) <= set(fetched), f"answers fetched: {sorted(set(ANSWERS) & set(fetched))}"
    assert result.crawler.stats.get_value("adaptive/filtered/new_domain", 0) >= 1


@crawl_test
async def test_without_a_share_for_new_sites_the_words_of_the_links_keep_the_crawl_away(proxy):
    # The control: links ranked by their words alone never reach the manual within the budget.
    # (Without the in-flight limit either: on a loaded machine notes.test answers slowly enough
    # for it to pass over its links for another domain's, the manual's.)
    result = await _crawl(
        CONTROL_BUDGET, ADAPTIVE_NEW_DOMAIN_SHARE=0.0, ADAPTIVE_STRATEGY="bestfirst", ADAPTIVE_DOMAIN_IN_FLIGHT=-1
    )
    assert "http://manual.test/" not in result.fetched
    assert not set(ANSWERS) & set(result.fetched)


# -- a site the share opened does not draw the crawl away from the start site -------------------
DOCS_QUERY = "subprocess child process pipes"
DOCS_ANSWER = "http://docs.test/library/subprocess"
# The start page's table of contents: no entry shares a word with the query, and the one
# that leads to the answer comes last.
DOCS_CONTENTS = [f"/chapter{n}" for n in range(14)] + ["/library/"]


def _docs_answer(host: str, path: str) -> tuple[int, bytes]:
    if host == "docs.test":
        if path == "/":
            links = [(href, f"Chapter {n}") for n, href in enumerate(DOCS_CONTENTS)]
            return 200, _page("Documentation", [*links, ("http://sphinx.test/", "Sphinx")])
        if path == "/library/":
            return 200, _page("Library", [("/library/pipes", "pipes"), ("/library/subprocess", "subprocess")])
        if path.startswith("/library/"):
            return 200, _page(f"{path[9:]} module", [], "subprocess child process pipes: " * 20)
        return 200, _page(f"Chapter {path}", [("/", "Home")], "a chapter on something else")
    if host == "sphinx.test":  # a large site whose pages share one common word with the query
        if path == "/":
            return 200, _page("Sphinx", [("/release-process", "Release process")])
        n = 0 if path == "/release-process" else int(path.strip("/p"))
        links = [(f"/p{n * 4 + k + 1}", f"Page {n * 4 + k + 1}") for k in range(4)]
        return 200, _page("Release process" if n == 0 else f"Page {n}", links, "the release process: " * 10)
    return 404, b""


@pytest.fixture
def docs_proxy(monkeypatch):
    yield from serve_as_proxy(monkeypatch, _docs_answer)


async def _crawl_docs(**overrides):
    # One request at a time, two per round: the order is the same at every run.
    settings = project_settings(
        CLOSESPIDER_PAGECOUNT=60, CONCURRENT_REQUESTS=1, ADAPTIVE_PAGES_PER_ROUND=2, **overrides
    )
    return await run_crawl(FocusedSpider, settings, query=DOCS_QUERY, start_urls="http://docs.test/")


@crawl_test
async def test_the_start_pages_contents_come_before_the_weak_links_of_a_site_the_share_opened(docs_proxy):
    # The Python docs' "Created using Sphinx": the share opens sphinx.test, whose "release
    # process" page scores about .45 for the query; its links' priors (parent relevance alone)
    # are above the contents' 0, but during the cold start both count as no sign of relevance.
    result = await _crawl_docs()
    assert "http://sphinx.test/release-process" in result.fetched  # the share did open the site
    assert DOCS_ANSWER in result.fetched[:30], result.fetched


@crawl_test
async def test_without_a_cold_start_the_opened_sites_weak_links_keep_the_crawl_away(docs_proxy):
    # The control: ranked by their priors from the first page on, sphinx.test's links win.
    result = await _crawl_docs(ADAPTIVE_COLD_START_PAGES=0)
    assert DOCS_ANSWER not in result.fetched, result.fetched
