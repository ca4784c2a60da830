"""scrapy-redis conventions: a job-scoped key prefix, start URLs pushed to a Redis list."""

from __future__ import annotations

import logging

import redis
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from adaptive_spider.demo.site import QUERY
from adaptive_spider.distributed.scheduler import DistributedScheduler
from adaptive_spider.distributed.starturls import crawl_prefix, key_prefix
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl


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
