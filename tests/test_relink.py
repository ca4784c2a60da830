"""A later, better link to a queued URL takes the place of the first one.

Scrapy's dupefilter keeps the first request for a URL; a focused crawl that
first meets a page through a bare index entry would rank it by that weak link
for ever. With a strategy that ranks by link prior, the duplicate's link
evidence replaces the queued entry's (the duplicate itself is still refused).
"""

from __future__ import annotations

import pytest
from scrapy import Request

from adaptive_spider.crawl.state import PARENT_KEY
from tests.test_scheduler import drain, make_scheduler

QUERY = "regular expression operations"


def queue_then_relink(strategy, **settings):
    scheduler = make_scheduler(ADAPTIVE_STRATEGY=strategy, ADAPTIVE_QUERY=QUERY, **settings)
    state = scheduler.state
    index = state.pages.add(domain_id=state.domains.id_of("docs.test"), relevance=0.1)
    guide = state.pages.add(domain_id=state.domains.id_of("docs.test"), relevance=0.7)
    assert scheduler.enqueue_request(Request("http://docs.test/re.html", meta={"link_text": "re", PARENT_KEY: index}))
    for i in range(5):
        scheduler.enqueue_request(
            Request(f"http://docs.test/lib{i}.html", meta={"link_text": f"expression module {i}", PARENT_KEY: index})
        )
    better = Request(
        "http://docs.test/re.html", meta={"link_text": "re — Regular expression operations", PARENT_KEY: guide}
    )
    assert not scheduler.enqueue_request(better), "a duplicate is still refused"
    return scheduler, guide


@pytest.mark.parametrize("strategy", ["bestfirst", "tres", "linkgroups"])
def test_better_link_moves_a_queued_url_up_and_keeps_the_queue_exact(strategy):
    scheduler, guide = queue_then_relink(strategy, ADAPTIVE_WARMUP_PAGES=0)
    assert len(scheduler) == 6
    assert scheduler.stats.get_value("adaptive/relinked") == 1
    released = drain(scheduler)
    urls = [r.url for r in released]
    assert sorted(urls) == sorted(set(urls)) and len(urls) == 6, "every URL once"
    assert len(scheduler) == 0 and not scheduler.has_pending_requests()
    first = released[0]
    if strategy == "bestfirst":
        assert first.url == "http://docs.test/re.html"
    relinked = next(r for r in released if r.url.endswith("/re.html"))
    assert relinked.meta["link_text"].startswith("re — Regular") and relinked.meta[PARENT_KEY] == guide


def test_a_worse_link_changes_nothing_and_bfs_keeps_scrapys_first_link():
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="bestfirst", ADAPTIVE_QUERY=QUERY)
    scheduler.enqueue_request(Request("http://docs.test/re.html", meta={"link_text": "Regular expression operations"}))
    assert not scheduler.enqueue_request(Request("http://docs.test/re.html", meta={"link_text": "re"}))
    assert scheduler.stats.get_value("adaptive/relinked") is None
    assert scheduler.next_request().meta["link_text"] == "Regular expression operations"

    bfs, _ = queue_then_relink("bfs")
    assert bfs.stats.get_value("adaptive/relinked") is None
    released = drain(bfs)
    assert released[0].url.endswith("/re.html") and released[0].meta["link_text"] == "re"


def test_relinked_ids_are_reused_only_after_the_strategy_gives_them_back():
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="bestfirst", ADAPTIVE_QUERY=QUERY)
    for round_ in range(30):
        weak, strong = f"link {round_}", f"regular expression operations {round_}"
        url = f"http://docs.test/page{round_ % 7}.html?r={round_}"
        scheduler.enqueue_request(Request(url, meta={"link_text": weak}))
        scheduler.enqueue_request(Request(url, meta={"link_text": strong}))
        if round_ % 3 == 2:
            scheduler.next_request()
    rest = drain(scheduler)
    assert scheduler.stats.get_value("adaptive/relinked") == 30
    assert len(rest) == 20 and len({r.url for r in rest}) == 20
    assert all(r.meta["link_text"].startswith("regular") for r in rest)


@pytest.mark.parametrize("better", [True, False])
def test_a_learners_page_keeps_its_links_to_queued_urls_among_its_outlinks(better):
    # The Q-network's next state of a page is its outlinks: a link to a URL already queued
    # (a duplicate, refused) is one of them whether or not it is the better link.
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="tres", ADAPTIVE_QUERY=QUERY, ADAPTIVE_WARMUP_PAGES=0)
    state = scheduler.state
    index = state.pages.add(domain_id=state.domains.id_of("docs.test"), relevance=0.1)
    other = state.pages.add(domain_id=state.domains.id_of("docs.test"), relevance=0.7 if better else 0.0)
    assert scheduler.enqueue_request(Request("http://docs.test/re.html", meta={"link_text": "re", PARENT_KEY: index}))
    anchor = "re — Regular expression operations" if better else ""
    assert not scheduler.enqueue_request(
        Request("http://docs.test/re.html", meta={"link_text": anchor, PARENT_KEY: other})
    )
    assert (scheduler.stats.get_value("adaptive/relinked") == 1) is better
    assert state.pages.child_n[index] == 1 and state.pages.child_n[other] == 1
