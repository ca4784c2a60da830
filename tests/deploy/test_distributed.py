"""Several workers, one crawl: the shared frontier, synchronisation and stop in a
real redis-server on 127.0.0.1, and real ``scrapy crawl`` worker processes."""

from __future__ import annotations

import collections
import contextlib
import json
import subprocess
import sys
import threading

import numpy as np
import pytest
import redis
from scrapy import Request
from scrapy.exceptions import CloseSpider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.distributed.coordination import WorkerRegistry
from adaptive_spider.distributed.localredis import LocalRedis, free_port
from adaptive_spider.distributed.queue import CrawlKeys, SharedQueue
from adaptive_spider.distributed.scheduler import DistributedScheduler
from adaptive_spider.distributed.sync import DomainProfileSync, ModelSync, TermStatisticsSync
from adaptive_spider.frontier.domains import DomainProfiles
from adaptive_spider.frontier.learn.qnet import QNetwork
from adaptive_spider.relevance.pagetext import PageFields
from adaptive_spider.relevance.scoring import QueryTerms, RelevanceScorer
from adaptive_spider.settings.config import ConfigError
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl
from tests.deploy.conftest import PROJECT, clean_env, finish, read_jsonl, start_crawl
from tests.deploy.test_dropin import PLAIN_PROJECT


@pytest.fixture
def connection(redis_server):
    return redis.Redis.from_url(redis_server.url)


KEYS = CrawlKeys("test:crawl")


# -- the shared queue and the registry --------------------------------------------------------
def test_the_shared_queue_gives_the_best_requests_first_and_each_once(connection):
    first, second = SharedQueue(connection, KEYS, "w1"), SharedQueue(connection, KEYS, "w2")
    first.push([b"a", b"b", b"c", b"d"], [1.0, 3.0, 3.0, 2.0])
    assert first.pop(2) == [b"b", b"c"]  # best first; a tie goes to the earlier
    assert connection.hget(KEYS.workers, "w1") == b"busy"
    assert second.pop(5) == [b"d", b"a"]
    assert len(first) == 0 and first.pop(3) == []

    first.push([str(i).encode() for i in range(600)], np.zeros(600))
    taken: dict[str, list] = {"w1": [], "w2": []}

    def drain(queue):
        while batch := queue.pop(7):
            taken[queue.worker].extend(batch)

    threads = [threading.Thread(target=drain, args=(queue,)) for queue in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken["w1"] + taken["w2"]) == sorted(str(i).encode() for i in range(600))
    assert not set(taken["w1"]) & set(taken["w2"])


def test_the_crawl_is_done_when_nothing_is_queued_and_every_live_worker_idles(connection):
    one, two = (WorkerRegistry(connection, KEYS, name, timeout=30) for name in ("w1", "w2"))
    one.join(QUERY)
    two.join(QUERY)
    assert not one.crawl_done()
    one.mark_idle()
    assert not two.crawl_done()
    two.mark_idle()
    assert one.crawl_done()
    SharedQueue(connection, KEYS, "w3").push([b"x"], [0.0])
    assert not one.crawl_done()
    assert SharedQueue(connection, KEYS, "w2").pop(1) == [b"x"]  # taking work marks w2 busy
    assert not one.crawl_done()
    # A worker silent for longer than the timeout is no longer waited for.
    connection.hset(KEYS.heartbeats, "w2", 0)
    assert one.crawl_done() and one.live_workers() == 1


def test_the_stop_is_recorded_once_and_a_worker_with_another_query_is_refused(connection):
    one, two = (WorkerRegistry(connection, KEYS, name, timeout=30) for name in ("w1", "w2"))
    one.join(QUERY)
    assert one.record_stop("finished")
    assert not two.record_stop("closespider_pagecount")
    assert two.stop_record() == {"reason": "finished", "worker": "w1"}
    with pytest.raises(ConfigError, match="ADAPTIVE_QUERY"):
        two.join("cooking recipes")


# -- synchronisation ------------------------------------------------------------------------
def test_domain_profiles_become_crawl_wide_sums_without_double_counting(connection):
    a, b = DomainProfiles(), DomainProfiles()
    sync_a, sync_b = DomainProfileSync(connection, KEYS), DomainProfileSync(connection, KEYS)
    a.id_of("b.test")  # different local ids for the same domain
    a.record_response("a.test", 200, 0.1)
    a.record_relevance("a.test", 0.8)
    sync_a.record_latency("a.test", 0.1)
    b.record_failure("a.test", dns=True)
    b.record_response("a.test", 503, 0.3)
    sync_b.record_latency("a.test", 0.3)
    for sync, profiles in ((sync_a, a), (sync_b, b), (sync_a, a)):
        sync.sync(profiles)
    for profiles in (a, b):
        profile = profiles.get("a.test")
        assert (profile.attempts, profile.failures, profile.dns_failures, profile.pages) == (3, 2, 1, 1)
        assert dict(profile.statuses) == {200: 1, 503: 1}
        assert sorted(profile.latencies) == [0.1, 0.3]
    assert a.ids["a.test"] == 1 and b.ids["a.test"] == 0  # ids the frontiers hold stay valid
    np.testing.assert_allclose(a.features(np.array([1])), b.features(np.array([0])))

    b.record_response("a.test", 200, 0.2)
    sync_b.sync(b)
    sync_a.sync(a)
    sync_b.sync(b)
    assert a.get("a.test").attempts == b.get("a.test").attempts == 4


def test_term_statistics_are_shared_so_workers_score_pages_alike(connection):
    terms = QueryTerms(QUERY)
    a, b = RelevanceScorer(terms), RelevanceScorer(terms)
    page = PageFields(title="Telescopes", headings="", body="a telescope sees a galaxy", url="http://a.test/")
    a.score_page(PageFields(title="Planets", body="planet orbit planet", url="http://a.test/p"))
    a.score_page(PageFields(title="Shop", body="nothing here", url="http://a.test/s"))
    b.score_page(PageFields(title="Galaxies", body="galaxy galaxy star", url="http://b.test/g"))
    sync_a, sync_b = TermStatisticsSync(connection, KEYS), TermStatisticsSync(connection, KEYS)
    sync_a.sync(a)
    sync_b.sync(b)
    sync_a.sync(a)
    assert a.n_pages == b.n_pages == 3
    np.testing.assert_allclose(a.doc_freq, b.doc_freq)
    assert a.score_page(page, learn=False) == pytest.approx(b.score_page(page, learn=False))


class _Agent:
    def __init__(self, seed):
        self.online = QNetwork(random_state=seed)
        self.target = QNetwork(random_state=seed + 1)


class _Learner:
    """The part of a learning strategy that model synchronisation reads: its agent and experience."""

    def __init__(self, seed, n_observed):
        self.agent = _Agent(seed)
        self.n_observed = n_observed


def test_workers_average_their_models_weighted_by_experience(connection):
    novice, expert = _Learner(seed=1, n_observed=10), _Learner(seed=2, n_observed=30)
    expected = [0.25 * w1 + 0.75 * w2 for w1, w2 in zip(novice.agent.online.weights, expert.agent.online.weights)]
    ModelSync(connection, KEYS, "novice").sync(novice)
    ModelSync(connection, KEYS, "expert").sync(expert)
    ModelSync(connection, KEYS, "novice").sync(novice)
    for mine, theirs, want in zip(novice.agent.online.weights, expert.agent.online.weights, expected):
        np.testing.assert_allclose(mine, want)
        np.testing.assert_allclose(theirs, want)
    X = np.random.default_rng(0).random((5, 11))
    np.testing.assert_allclose(novice.agent.target.predict(X), expert.agent.target.predict(X))
    assert not ModelSync(connection, KEYS, "bfs").sync(object())  # no model: nothing shared


# -- real crawls -----------------------------------------------------------------------------
#: Two crawls of two workers each, run at the same time: to the end (keys kept to
#: read the stop record), and to a crawl-wide budget (keys deleted by the last worker).
SCENARIOS = {
    "to_the_end": ("-s", "SCHEDULER_PERSIST=True"),
    "budget": ("-s", "ADAPTIVE_DISTRIBUTED_MAX_PAGES=150"),
}


def start_workers(n, url, redis_url, directory, *settings) -> list:
    workers = []
    for index in range(n):
        out, log = directory / f"worker{index}.jsonl", directory / f"worker{index}.log"
        command = [
            sys.executable, "-m", "scrapy", "crawl", "focused", "-a", f"query={QUERY}", "-a", f"start_urls={url}",
            "-s", f"REDIS_URL={redis_url}", "-s", "ROBOTSTXT_OBEY=False", "-s", "ADAPTIVE_SELF_STOP=False", "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FILE={log}",
            "-O", str(out), *settings,
        ]  # fmt: skip
        workers.append((subprocess.Popen(command, cwd=PROJECT, env=clean_env(SCRAPY_PROJECT="distributed")), out, log))
    return workers


def wait_workers(workers) -> list[tuple[list, str]]:
    codes = [process.wait(timeout=120) for process, _, _ in workers]
    assert codes == [0] * len(workers), [log.read_text()[-2000:] for _, _, log in workers]
    return [(read_jsonl(out), log.read_text(encoding="utf-8")) for _, out, log in workers]


@pytest.fixture(scope="module")
def shared_crawls(tmp_path_factory):
    """scenario -> (site, requests the site answered in order, [(items, log)] per worker, Redis URL)."""
    with contextlib.ExitStack() as stack:
        running = {}
        for name, settings in SCENARIOS.items():
            # A demo site (386 pages, 60 relevant) logging every request it answers.
            site, served = DemoSite(seed=0, hubs_per_topic=3, articles_per_hub=20), []
            server, url = serve(site, request_log=served)
            stack.callback(server.shutdown)
            redis_server = stack.enter_context(LocalRedis())
            workers = start_workers(2, url, redis_server.url, tmp_path_factory.mktemp(name), *settings)
            running[name] = (site, served, workers, redis_server.url)
        yield {
            name: (site, served, wait_workers(workers), url) for name, (site, served, workers, url) in running.items()
        }


def fetches_to_reach(paths, relevant, share):
    found = 0
    for index, path in enumerate(paths, 1):
        found += path in relevant
        if found >= share * len(relevant):
            return index
    return None


def test_two_workers_share_one_crawl_to_its_end(shared_crawls):
    site, served, workers, redis_url = shared_crawls["to_the_end"]
    counts = collections.Counter(served)
    assert [path for path, n in counts.items() if n > 1] == []  # no URL fetched twice
    assert set(counts) == set(site.pages)  # ... and the whole site fetched
    assert all(len(items) >= 0.1 * len(site.pages) for items, _ in workers)  # both workers fetched
    # The relevant region first: half of it within 60% of the site (one process
    # needs ~85 fetches, breadth-first ~340; two workers spend more fetches while
    # the one that found the way in is still parsing it, ~100-200).
    assert fetches_to_reach(served, site.relevant, 0.5) <= 0.6 * len(site.pages)
    # Stopped once: one worker recorded why, both finished.
    assert sum("Recorded the crawl's stop: finished" in log for _, log in workers) == 1
    assert all("'finish_reason': 'finished'" in log for _, log in workers)
    record = json.loads(redis.Redis.from_url(redis_url).get("adaptive:focused:stop"))
    assert record["reason"] == "finished"


def test_a_crawl_wide_budget_stops_every_worker(shared_crawls):
    _, served, workers, redis_url = shared_crawls["budget"]
    assert max(collections.Counter(served).values()) == 1
    # Requests already on their way when the budget is reached still complete.
    assert 150 <= len(served) <= 150 + 2 * 16
    assert sum("Recorded the crawl's stop: closespider_pagecount" in log for _, log in workers) == 1
    assert all("'finish_reason': 'closespider_pagecount'" in log for _, log in workers)
    # Without SCHEDULER_PERSIST, the last worker out deleted the crawl's keys.
    assert redis.Redis.from_url(redis_url).keys("adaptive:focused:*") == []


@crawl_test
async def test_an_unreachable_redis_closes_the_crawl_with_its_reason(small_site):
    _, url = small_site
    settings: Settings = project_settings(
        SCHEDULER="adaptive_spider.distributed.scheduler.DistributedScheduler",
        REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
    )
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    assert result.stats["finish_reason"] == "redis_unavailable"
    assert result.fetched == []


def worker(redis_url: str, query: str = QUERY) -> tuple[DistributedScheduler, FocusedSpider]:
    crawler = get_crawler(
        FocusedSpider, {"REDIS_URL": redis_url, "ADAPTIVE_QUERY": query, "ADAPTIVE_DISTRIBUTED_BATCH": 4}
    )
    return DistributedScheduler.from_crawler(crawler), FocusedSpider.from_crawler(
        crawler, start_urls="http://127.0.0.1:9/"
    )


def open_worker(redis_url: str) -> DistributedScheduler:
    scheduler, spider = worker(redis_url)
    scheduler.open(spider)
    return scheduler


@crawl_test
async def test_a_worker_that_leaves_gives_back_what_it_held_and_a_stop_ends_the_crawl(redis_server):
    url = "http://127.0.0.1:9/"
    leaving = open_worker(redis_server.url)
    for path in range(20):
        assert leaving.enqueue_request(Request(f"{url}astronomy/{path}.html", meta={"link_text": "telescope"}))
    assert not leaving.enqueue_request(Request(f"{url}astronomy/3.html"))  # the shared filter
    released = leaving.next_request()
    queue = SharedQueue(redis.Redis.from_url(redis_server.url), leaving.keys, "test")
    assert len(queue) == 16  # the worker holds a batch of 4
    leaving.close("shutdown")  # Ctrl-C: this worker goes, the crawl goes on
    assert len(queue) == 19 and leaving.registry.stop_record() is None
    intruder, spider = worker(redis_server.url, query="cooking recipes")
    with pytest.raises(CloseSpider) as refused:
        intruder.open(spider)
    assert refused.value.reason == "bad_configuration"
    intruder.close("bad_configuration")  # refused, it stops nothing
    assert len(queue) == 19 and leaving.registry.stop_record() is None
    staying = open_worker(redis_server.url)
    urls = {request.url for request in iter(staying.next_request, None)}
    assert len(urls) == 19 and released.url not in urls
    staying.close("closespider_pagecount")  # any other reason stops the whole crawl
    assert staying.stats.get_value("adaptive/distributed/stop_recorded") == "closespider_pagecount"
    # The last worker out of a stopped crawl deletes it (no SCHEDULER_PERSIST).
    assert queue.server.keys(f"{staying.keys.prefix}:*") == []


def test_a_scrapy_redis_project_switches_to_the_shared_focused_crawl_with_one_addon(redis_server, small_site, tmp_path):
    # The plain project as a scrapy-redis project (its SCHEDULER and dupefilter), plus DistributedAddon.
    _, url = small_site
    scrapy_redis_project = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "REDIS_URL": redis_server.url,
        "ADDONS": json.dumps({"adaptive_spider.profiles.DistributedAddon": 0}),
        "ADAPTIVE_QUERY": QUERY,
        "CLOSESPIDER_PAGECOUNT": "20",
    }
    options = [part for name, value in scrapy_redis_project.items() for part in ("-s", f"{name}={value}")]
    process = start_crawl("pages", tmp_path / "pages.jsonl", "-a", f"url={url}", *options,
                          cwd=PLAIN_PROJECT, SCRAPY_PROJECT="plain", PYTHONPATH=str(PROJECT))  # fmt: skip
    items, log = finish(process)
    assert "replaces scrapy-redis' scrapy_redis.scheduler.Scheduler" in log
    assert "is not focused" not in log
    assert "'adaptive/distributed/worker'" in log and "'adaptive/released'" in log
    assert len(items) >= 20


@crawl_test
async def test_a_worker_judges_a_url_it_met_before_without_a_fingerprint(redis_server):
    url = "http://127.0.0.1:9/"
    scheduler = open_worker(redis_server.url)
    fingerprinted = []
    original = scheduler.df.request_fingerprint

    def counting(request):
        fingerprinted.append(request.url)
        return original(request)

    scheduler.df.request_fingerprint = counting
    assert scheduler.enqueue_request(Request(f"{url}astronomy/1.html"))
    for _ in range(3):
        assert not scheduler.enqueue_request(Request(f"{url}astronomy/1.html"))
    # Another worker's URL is the shared filter's to judge, once.
    other = open_worker(redis_server.url)
    assert other.enqueue_request(Request(f"{url}astronomy/2.html"))
    assert not scheduler.enqueue_request(Request(f"{url}astronomy/2.html"))
    assert not scheduler.enqueue_request(Request(f"{url}astronomy/2.html"))
    # Each URL once here and once in the shared filter's own check, none for the repeats.
    assert fingerprinted == [f"{url}astronomy/1.html"] * 2 + [f"{url}astronomy/2.html"] * 2
    assert scheduler.stats.get_value("dupefilter/filtered") == 5
    # So the worker's spider side drops a page's links to them before they reach it.
    settled = scheduler.state.is_settled_url
    assert settled is not None and settled(f"{url}astronomy/1.html") and settled(f"{url}astronomy/2.html")
    assert not settled(f"{url}astronomy/3.html")
    other.close("shutdown")
    scheduler.close("finished")
    assert scheduler.state.is_settled_url is None
