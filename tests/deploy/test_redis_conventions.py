"""scrapy-redis conventions: a job-scoped key prefix, start URLs pushed to a Redis list, and
two Scrapyd jobs of ``focused`` on one redis-server that do not collide."""

from __future__ import annotations

import contextlib
import datetime
import json
import logging

import pytest
import redis
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.distributed.scheduler import DistributedScheduler
from adaptive_spider.distributed.starturls import crawl_prefix, key_prefix
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl
from tests.deploy.conftest import deploy


def prefix_of(monkeypatch, job: str | None, **settings) -> str:
    if job is None:
        monkeypatch.delenv("SCRAPY_JOB", raising=False)
    else:
        monkeypatch.setenv("SCRAPY_JOB", job)
    crawler = get_crawler(FocusedSpider, {"ADAPTIVE_QUERY": QUERY, "REDIS_URL": "redis://127.0.0.1:9/0", **settings})
    prefix = crawl_prefix(crawler)
    assert DistributedScheduler.from_crawler(crawler).keys.prefix == prefix
    return prefix


def test_each_scrapyd_job_gets_its_own_key_prefix_unless_the_project_names_one(monkeypatch):
    first, second = prefix_of(monkeypatch, "job-1"), prefix_of(monkeypatch, "job-2")
    assert first == "adaptive:focused:job-1" and second == "adaptive:focused:job-2"
    assert prefix_of(monkeypatch, None) == "adaptive:focused"  # outside Scrapyd: as before
    # An explicit key wins, job or not (the workers of one crawl, scheduled as several jobs).
    assert prefix_of(monkeypatch, "job-1", ADAPTIVE_DISTRIBUTED_KEY="mine:%(spider)s") == "mine:focused"
    # The add-on's default value (addon priority) is not an explicit choice.
    settings = Settings()
    settings.set("ADAPTIVE_DISTRIBUTED_KEY", "adaptive:%(spider)s", "addon")
    assert key_prefix(settings, "focused", "job-3") == "adaptive:focused:job-3"


def test_the_job_comes_from_the_spider_argument_too(monkeypatch):
    monkeypatch.delenv("SCRAPY_JOB", raising=False)
    crawler = get_crawler(FocusedSpider, {"ADAPTIVE_QUERY": QUERY})
    crawler.spider = FocusedSpider.from_crawler(crawler, start_urls="http://127.0.0.1:9/", _job="abc")
    assert crawl_prefix(crawler) == "adaptive:focused:abc"


def test_start_urls_may_come_from_redis_alone():
    settings = Settings({"ADAPTIVE_REDIS_START_URLS_KEY": "%(prefix)s:start_urls"})
    FocusedSpider.check_arguments(settings, query=QUERY)
    FocusedSpider.check_arguments(Settings(), query=QUERY, start_urls_key="urls")


@crawl_test
async def test_workers_pop_start_urls_pushed_to_redis(redis_server, small_site, monkeypatch, caplog):
    monkeypatch.delenv("SCRAPY_JOB", raising=False)
    _, url = small_site
    base = url.rstrip("/")
    pushed = [f"{base}/astronomy/", f"{base}/more/"]
    server = redis.Redis.from_url(redis_server.url)
    server.lpush("adaptive:focused:start_urls", *pushed)
    settings = project_settings(
        ADDONS={"adaptive_spider.profiles.DistributedAddon": 0},
        REDIS_URL=redis_server.url,
        DEPTH_LIMIT=1,
        ADAPTIVE_REDIS_START_URLS_WAIT=0.5,
    )
    with caplog.at_level(logging.INFO):
        result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls_key="%(prefix)s:start_urls")
    assert set(pushed) <= set(result.fetched)
    assert result.stats["finish_reason"] == "finished"
    assert server.llen("adaptive:focused:start_urls") == 0
    assert "joined crawl adaptive:focused (Redis key prefix" in caplog.text
    assert "start URLs from the Redis list adaptive:focused:start_urls" in caplog.text


# -- two Scrapyd jobs on one Redis -------------------------------------------------------------
#: Two crawls at once, each of its own site (its own port) and query: a request of one crawl
#: in the other's queue would show in its items; a shared prefix refuses the second query.
JOBS = {
    "astronomy": (QUERY, dict(seed=0, relevant_topic="astronomy")),
    "cooking": ("cooking recipes oven flour and dough", dict(seed=1, relevant_topic="cooking")),
}


@pytest.fixture
def two_sites():
    sites = {}
    with contextlib.ExitStack() as stack:
        for name, (_, options) in JOBS.items():
            site = DemoSite(hubs_per_topic=2, articles_per_hub=12, **options)  # 170 pages
            server, url = serve(site, latency=0.01)  # a little latency: both jobs stay busy a while
            stack.callback(server.shutdown)
            sites[name] = (site, url)
        yield sites


def job_time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value)


def test_two_scrapyd_jobs_with_different_queries_share_one_redis_without_colliding(
    redis_server_or_skip, scrapyd_or_skip, project_copy, two_sites
):
    scrapyd = scrapyd_or_skip
    deploy(project_copy, scrapyd)
    jobs = {}
    for name, (query, _) in JOBS.items():
        _, url = two_sites[name]
        scheduled = scrapyd.post(
            "schedule.json",
            [
                ("project", "adaptive_spider"),
                ("spider", "focused"),
                ("query", query),
                ("start_urls", url),
                ("setting", 'ADDONS={"adaptive_spider.profiles.DistributedAddon": 0}'),
                ("setting", f"REDIS_URL={redis_server_or_skip.url}"),
                ("setting", "SCHEDULER_PERSIST=True"),  # the keys stay, to be read below
                ("setting", "ADAPTIVE_SELF_STOP=False"),  # the whole site: all of a job's pages, none of the other's
                ("setting", "ROBOTSTXT_OBEY=False"),
            ],
        )
        assert scheduled["status"] == "ok", scheduled
        jobs[name] = scheduled["jobid"]
    finished = {name: scrapyd.wait_for_job("adaptive_spider", job, timeout=60) for name, job in jobs.items()}

    # Both ran at once (scrapyd runs two processes), ...
    first, second = finished.values()
    assert job_time(first["start_time"]) < job_time(second["end_time"])
    assert job_time(second["start_time"]) < job_time(first["end_time"])
    connection = redis.Redis.from_url(redis_server_or_skip.url)
    for name, job in jobs.items():
        site, url = two_sites[name]
        log = scrapyd.get(finished[name]["log_url"].lstrip("/")).decode()
        items = [json.loads(line) for line in scrapyd.get(finished[name]["items_url"].lstrip("/")).splitlines()]
        prefix = f"adaptive:focused:{job}"
        # ... each under the key prefix of its job id, ...
        assert f"joined crawl {prefix} (Redis key prefix" in log, log[-3000:]
        assert "Recorded the crawl's stop: finished" in log and "'finish_reason': 'finished'" in log
        # ... each to the end of its own site, every page once and none of the other's.
        urls = [item["url"] for item in items]
        assert len(urls) == len(set(urls))
        assert set(urls) == {url.rstrip("/") + path for path in site.pages}
        assert connection.get(f"{prefix}:query").decode() == JOBS[name][0]
        assert json.loads(connection.get(f"{prefix}:stop"))["reason"] == "finished"
    # Nothing under the prefix a crawl outside Scrapyd would use.
    assert connection.keys("adaptive:focused:*") and not connection.exists(
        "adaptive:focused:queue", "adaptive:focused:stop"
    )
