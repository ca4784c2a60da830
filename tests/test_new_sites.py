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
