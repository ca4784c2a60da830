"""The self-stop in an existing project: the plain project's spiders, with the
add-on and ``ADAPTIVE_SELF_STOP`` on, close by themselves as ``scrapy crawl
focused`` does, though they yield items of their own (``{"url", "title"}``, no
relevance) or none at all. The knowledge base is the pages the RelevanceMiddleware
analysed, not the items.

Run as ``scrapy crawl`` subprocesses from the plain project's directory (as
test_dropin does), each with the whole site as its budget: a crawl that ends
before it closed itself. The fetched pages are read from the DEBUG log
(``Crawled (200) <GET ...>``), since the item-less spider leaves no feed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.deploy.conftest import PROJECT, finish, relevant_urls, start_crawl
from tests.deploy.test_dropin import PLAIN_PROJECT
from tests.test_sufficiency_crawl import QUERY as ANSWER_QUERY
from tests.test_sufficiency_crawl import AnswerSite, serve_fast

SELF_STOPS = ("sufficient", "plateau", "no_promising_links")
#: name -> (spider, settings profile of the plain project's scrapy.cfg): a CrawlSpider
#: with items of its own and the add-on, a Spider with items of its own and every
#: component spelled out, a Spider with no items at all.
VARIANTS = {
    "crawlspider-items": ("pages", "default"),
    "spider-items-explicit": ("links", "explicit"),
    "spider-no-items": ("follow", "default"),
}
_CRAWLED = re.compile(r"Crawled \(200\) <GET (\S+)>")
_FINISH = re.compile(r"'finish_reason': '(\w+)'")


def self_stopping_crawl(spider: str, profile: str, url: str, budget: int, out: Path, *arguments: str):
    """Start the plain project's ``spider`` with the self-stop on and ``budget`` pages."""
    return start_crawl(
        spider, out, "-a", f"url={url}", "-s", f"CLOSESPIDER_PAGECOUNT={budget}", *arguments,
        cwd=PLAIN_PROJECT, self_stop=True, log_level="DEBUG", SCRAPY_PROJECT=profile, PYTHONPATH=str(PROJECT),
    )  # fmt: skip


def outcome(process) -> tuple[str, list[str], list[dict], str]:
    """finish_reason, fetched URLs in order, items and log of a finished crawl."""
    items, log = finish(process)
    reason = _FINISH.search(log)
    assert reason, log[-3000:]
    return reason.group(1), _CRAWLED.findall(log), items, log


@pytest.fixture(scope="module")
def answer_site():
    site = AnswerSite()
    server, url = serve_fast(site)
    yield site, url.rstrip("/")
    server.shutdown()


@pytest.fixture(scope="module")
def demo_crawls(small_site, tmp_path_factory) -> dict[str, tuple[str, list[str], list[dict], str]]:
    """Every variant on the demo site at once: name -> outcome."""
    site, url = small_site
    directory = tmp_path_factory.mktemp("selfstop")
    running = {
        name: self_stopping_crawl(spider, profile, url, len(site.pages), directory / f"{name}.jsonl")
        for name, (spider, profile) in VARIANTS.items()
    }
    return {name: outcome(process) for name, process in running.items()}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_any_spider_of_a_project_stops_by_itself_in_the_relevant_region(variant, demo_crawls, small_site):
    site, url = small_site
    reason, fetched, items, log = demo_crawls[variant]
    budget = len(site.pages)
    assert "'adaptive/released'" in log  # the AdaptiveScheduler ordered the crawl
    assert reason in SELF_STOPS, log[-3000:]
    assert f"Sufficiency: stopping the crawl ({reason})" in log
    # Well before its budget: a breadth-first crawl reaches the relevant region only after
    # ~300 of the 386 pages. This one reads the region and stops once no page as good as its
    # best has come for as many pages as it took to find them (ADAPTIVE_STOP_SETTLE), as
    # `scrapy crawl focused` does.
    assert len(fetched) < budget * 0.6, fetched
    relevant = relevant_urls(site, url)
    reached = set(fetched) & relevant
    assert len(reached) >= 0.9 * len(relevant), (len(reached), fetched)
    pages = int(re.search(r"'adaptive/sufficiency/pages': (\d+)", log).group(1))
    changed = int(re.search(r"'adaptive/sufficiency/best_changed_at': (\d+)", log).group(1))
    stop_page = int(re.search(r"'adaptive/sufficiency/stop_page': (\d+)", log).group(1))
    assert stop_page >= changed + max(10, changed), log[-3000:]
    # The knowledge base is the pages, not the items: one page each, whatever was yielded.
    assert pages == len(fetched)
    if variant == "spider-no-items":
        assert items == []
    else:
        assert all(set(item) == {"url", "title"} for item in items) and len(items) == len(fetched)


def test_a_spider_without_items_stops_sufficient_after_the_answer_pages(answer_site, tmp_path):
    """As test_sufficiency_crawl's focused crawl of the same site: the three answer pages
    fetched, then `sufficient` well before the end of the site."""
    site, url = answer_site
    budget = len(site.pages)
    # The pace's window (ADAPTIVE_STOP_HARVEST_WINDOW, 100) sized to the site's 120 pages, as there.
    query = "-s", f"ADAPTIVE_QUERY={ANSWER_QUERY}", "-s", "ADAPTIVE_STOP_HARVEST_WINDOW=30"
    process = self_stopping_crawl("follow", "default", url + "/", budget, tmp_path / "answer.jsonl", *query)
    reason, fetched, items, log = outcome(process)
    assert reason == "sufficient", log[-3000:]
    assert site.relevant <= {u.removeprefix(url) for u in fetched}, fetched
    assert len(fetched) < budget * 2 / 3
    assert items == []


def test_a_spider_without_items_on_a_site_without_relevant_content_closes_early(answer_site, tmp_path):
    site, url = answer_site
    budget = len(site.pages)
    query = "-s", "ADAPTIVE_QUERY=quantum chromodynamics lattice"
    process = self_stopping_crawl("follow", "default", url + "/", budget, tmp_path / "none.jsonl", *query)
    reason, fetched, _, log = outcome(process)
    assert reason in ("no_promising_links", "plateau"), log[-3000:]
    assert len(fetched) <= 40 < budget
