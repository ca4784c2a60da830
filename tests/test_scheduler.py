"""AdaptiveScheduler as Scrapy sees it: the BaseScheduler contract, Scrapy's
dupefilter semantics, priority order, JOBDIR persistence, and explanations."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from scrapy.dupefilters import BaseDupeFilter, RFPDupeFilter
from scrapy.utils.request import RequestFingerprinter
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.canonical import judges_by_url
from adaptive_spider.crawl.scheduler import AdaptiveScheduler
from adaptive_spider.crawl.state import DECISION_KEY, PARENT_KEY, CrawlState
from tests.conftest import crawl_test

URLS = ["http://foo.test/a", "http://foo.test/b", "http://foo.test/c"]
PRIORITIES = [
    ("http://foo.test/a", -2),
    ("http://foo.test/d", 1),
    ("http://foo.test/b", -1),
    ("http://foo.test/c", 0),
    ("http://foo.test/e", 2),
]


def make_scheduler(jobdir=None, **settings):
    settings = {"JOBDIR": str(jobdir) if jobdir else None, "ADAPTIVE_STRATEGY": "bfs", **settings}
    crawler = get_crawler(Spider, settings)
    crawler.spider = spider = Spider.from_crawler(crawler, name="spider")
    scheduler = AdaptiveScheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler


def drain(scheduler):
    out = []
    while scheduler.has_pending_requests():
        request = scheduler.next_request()
        assert request is not None
        out.append(request)
    return out


def test_is_a_base_scheduler():
    assert isinstance(AdaptiveScheduler(BaseDupeFilter()), BaseScheduler)


def test_length_and_pending():
    scheduler = make_scheduler()
    assert not scheduler.has_pending_requests() and len(scheduler) == 0
    for url in URLS:
        assert scheduler.enqueue_request(Request(url))
    assert scheduler.has_pending_requests() and len(scheduler) == 3
    scheduler.next_request()
    assert len(scheduler) == 2


def test_bfs_is_fifo():
    scheduler = make_scheduler()
    for url in URLS:
        scheduler.enqueue_request(Request(url))
    assert [r.url for r in drain(scheduler)] == URLS


def test_priorities_come_first():
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="tres")
    for url, priority in PRIORITIES:
        scheduler.enqueue_request(Request(url, priority=priority))
    assert [r.priority for r in drain(scheduler)] == [2, 1, 0, -1, -2]


def test_duplicates_return_false_unless_dont_filter():
    scheduler = make_scheduler()
    assert scheduler.enqueue_request(Request("http://foo.test/a"))
    assert not scheduler.enqueue_request(Request("http://foo.test/a"))
    assert not scheduler.enqueue_request(Request("http://foo.test/a#fragment"))
    assert scheduler.enqueue_request(Request("http://foo.test/a", dont_filter=True))
    assert len(scheduler) == 2


def test_plain_requests_get_defaults_and_an_explanation():
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="tres", ADAPTIVE_QUERY="widgets")
    scheduler.enqueue_request(Request("http://foo.test/widgets.html"))
    request = scheduler.next_request()
    decision = request.meta[DECISION_KEY]
    assert decision["strategy"] == "tres" and "leaf" in decision and "score" in decision
    features = dict(
        zip(
            __import__("adaptive_spider.frontier.features", fromlist=["FEATURE_NAMES"]).FEATURE_NAMES,
            decision["features"],
        )
    )
    assert features["depth"] == 0 and features["parent_score"] == 0
    assert features["anchor_similarity"] > 0  # the URL word matches the query


@pytest.mark.parametrize("strategy", ["bfs", "tres", "linkgroups", "bestfirst", "dfs", "random"])
def test_jobdir_reopen_keeps_queue_and_priorities(tmp_path, strategy):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_STRATEGY=strategy, DUPEFILTER_CLASS=RFPDupeFilter)
    for url, priority in PRIORITIES:
        scheduler.enqueue_request(Request(url, priority=priority))
    first = scheduler.next_request()  # handed to the engine: in flight, not queued any more
    scheduler.close("shutdown")
    reopened = make_scheduler(tmp_path, ADAPTIVE_STRATEGY=strategy, DUPEFILTER_CLASS=RFPDupeFilter)
    assert len(reopened) == len(PRIORITIES) - 1
    assert first.priority == 2
    assert [r.priority for r in drain(reopened)] == [1, 0, -1, -2]
    assert not reopened.enqueue_request(Request("http://foo.test/c"))  # the dupefilter persisted too


def test_jobdir_restores_model_and_domain_profiles(tmp_path):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_STRATEGY="tres", ADAPTIVE_QUERY="widgets")
    state = scheduler.state
    for i in range(40):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}", meta={"link_text": "widgets" if i % 2 else "other"}))
    for _ in range(30):
        request = scheduler.next_request()
        state.domains.record_response("foo.test", 200, 0.1)
        state._record_page(request, request.url, 0.9 if "widgets" in request.meta["link_text"] else 0.0)
    weights_before = [w.copy() for w in scheduler.frontier.strategy.agent.online.weights]
    leaves_before = scheduler.frontier.strategy.partition.n_leaves
    scheduler.close("shutdown")

    reopened = make_scheduler(tmp_path, ADAPTIVE_STRATEGY="tres", ADAPTIVE_QUERY="widgets")
    tres = reopened.frontier.strategy
    assert len(reopened) == 10
    assert tres.partition.n_leaves == leaves_before
    assert all((a == b).all() for a, b in zip(tres.agent.online.weights, weights_before))
    assert reopened.state.domains.get("foo.test").attempts == 30
    assert len(reopened.state.pages) == 30


def test_child_requests_carry_their_parent_page():
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="tres", ADAPTIVE_QUERY="widgets")
    state: CrawlState = scheduler.state
    parent = state.pages.add(domain_id=state.domains.id_of("foo.test"), relevance=0.8)
    scheduler.enqueue_request(Request("http://foo.test/child", meta={PARENT_KEY: parent, "link_text": "Next"}))
    request = scheduler.next_request()
    features = dict(
        zip(
            __import__("adaptive_spider.frontier.features", fromlist=["FEATURE_NAMES"]).FEATURE_NAMES,
            request.meta[DECISION_KEY]["features"],
        )
    )
    assert features["parent_score"] == pytest.approx(0.8)


class OneShotSpider(Spider):
    name = "one_shot"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url] * 6

    def parse(self, response):
        pass


@crawl_test
async def test_full_crawl_with_plain_spider(demo_site):
    """Scrapy's own integration case: six identical start URLs, no dupefilter."""
    _, url = demo_site
    crawler = get_crawler(
        OneShotSpider,
        {
            "SCHEDULER": AdaptiveScheduler,
            "ADAPTIVE_STRATEGY": "bfs",
            "DUPEFILTER_CLASS": BaseDupeFilter,
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
        },
    )
    await crawler.crawl_async(url)
    assert crawler.stats.get_value("downloader/response_count") == 6


@pytest.mark.parametrize("strategy", ["bfs", "tres"])
def test_a_higher_priority_request_goes_before_the_ready_batch(strategy):
    """As in Scrapy's priority queue: a redirect or retry (priority raised) arriving
    after a batch was prepared is still served next."""
    scheduler = make_scheduler(ADAPTIVE_STRATEGY=strategy)
    scheduler.state.domains.record_response("foo.test", 200, 0.1)  # no probe of a new domain first
    for i in range(6):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    scheduler.next_request()
    assert len(scheduler.ready) > 1, "the batch is prepared ahead"
    scheduler.enqueue_request(Request("http://foo.test/redirected", priority=2))
    assert scheduler.next_request().url == "http://foo.test/redirected"
    assert len(drain(scheduler)) == 5


def test_a_reward_with_no_frontier_attached_is_logged_not_lost_silently(caplog):
    state = CrawlState.of(get_crawler(Spider, {}))
    request = Request("http://foo.test/a", meta={DECISION_KEY: {"features": [0.0] * 11, "leaf": -1}})
    with caplog.at_level("WARNING", logger="adaptive_spider.crawl.state"):
        state.reward_nothing(request)
        state.reward_nothing(Request("http://foo.test/b", meta={DECISION_KEY: {"features": [0.0] * 11}}))
    assert caplog.text.count("no frontier is attached") == 1
    assert not request.meta[DECISION_KEY].get("rewarded")
    scheduler = make_scheduler(ADAPTIVE_STRATEGY="tres")
    assert scheduler.state.frontier is scheduler.frontier, "the scheduler attaches its frontier when it opens"


def test_a_repeated_url_is_a_duplicate_without_a_second_fingerprint():
    scheduler = make_scheduler(DUPEFILTER_CLASS=RFPDupeFilter)
    fingerprinter = scheduler.df.fingerprinter
    fingerprinted = []
    original = fingerprinter.fingerprint

    def counting(request):
        fingerprinted.append(request.url)
        return original(request)

    fingerprinter.fingerprint = counting
    assert scheduler.enqueue_request(Request("http://foo.test/a"))
    for _ in range(3):
        assert not scheduler.enqueue_request(Request("http://foo.test/a"))
    # Another spelling of the URL is the dupefilter's to judge, once.
    assert not scheduler.enqueue_request(Request("http://foo.test/a#top"))
    assert not scheduler.enqueue_request(Request("http://foo.test/a#top"))
    # A POST to the same URL is another request.
    assert scheduler.enqueue_request(Request("http://foo.test/a", method="POST", body=b"q=1"))
    assert fingerprinted == ["http://foo.test/a", "http://foo.test/a#top", "http://foo.test/a"]
    assert scheduler.stats.get_value("dupefilter/filtered") == 5
    assert len(scheduler) == 2


class LanguageFingerprinter(RequestFingerprinter):
    """Tells apart the requests of one URL by the language they ask for."""

    def fingerprint(self, request):
        return super().fingerprint(request) + request.headers.get(b"Accept-Language", b"")


def test_a_fingerprinter_of_ones_own_judges_every_request():
    scheduler = make_scheduler(DUPEFILTER_CLASS=RFPDupeFilter, REQUEST_FINGERPRINTER_CLASS=LanguageFingerprinter)
    assert scheduler.enqueue_request(Request("http://foo.test/a", headers={"Accept-Language": "en"}))
    assert scheduler.enqueue_request(Request("http://foo.test/a", headers={"Accept-Language": "de"}))
    assert not scheduler.enqueue_request(Request("http://foo.test/a", headers={"Accept-Language": "de"}))
    assert len(scheduler) == 2


def test_the_dupefilters_that_judge_a_request_by_its_url_alone():
    from scrapy_redis.dupefilter import RFPDupeFilter as RedisDupeFilter

    class SomeUrlsOnly(RFPDupeFilter):
        def request_seen(self, request):
            return "keep" not in request.url and super().request_seen(request)

    assert judges_by_url(RFPDupeFilter, RequestFingerprinter)
    assert judges_by_url(RedisDupeFilter, RequestFingerprinter)
    assert not judges_by_url(RFPDupeFilter, LanguageFingerprinter)
    assert not judges_by_url(SomeUrlsOnly, RequestFingerprinter)
    assert not judges_by_url(BaseDupeFilter, RequestFingerprinter)
    # The scheduler asks it of the filter it was given.
    assert make_scheduler(DUPEFILTER_CLASS=RFPDupeFilter)._seen_urls is not None
    assert make_scheduler(DUPEFILTER_CLASS=SomeUrlsOnly)._seen_urls is None
