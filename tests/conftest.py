"""Shared fixtures: the generated demo site on 127.0.0.1 and a helper that runs
real Scrapy crawls in the test process (pytest-twisted, asyncio reactor)."""

from __future__ import annotations

import functools

import pytest
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro

from adaptive_spider.demo.site import DemoSite, serve

TEST_SETTINGS = {
    "LOG_LEVEL": "WARNING",
    "REMOTE_CONTROL_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "ROBOTSTXT_OBEY": False,
    # Whole crawls to their budget; the sufficiency tests turn the self-stop on.
    "ADAPTIVE_SELF_STOP": False,
}


def crawl_test(test):
    """Run an ``async def`` test on the asyncio reactor (as Scrapy's own tests do)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return deferred_from_coro(test(*args, **kwargs))

    return wrapper


@pytest.fixture(scope="session")
def demo_site():
    """The demo site (a relevant region behind generic hub pages), served locally."""
    site = DemoSite(seed=0)
    server, url = serve(site)
    yield site, url
    server.shutdown()


def project_settings(**overrides) -> Settings:
    """The project's default profile with test overrides (quiet, no robots)."""
    settings = Settings()
    settings.setmodule("settings_profiles.default", priority="project")
    settings.update(TEST_SETTINGS, priority="project")
    settings.update(overrides, priority="cmdline")
    return settings


class CrawlResult:
    """What a test crawl did: its crawler (stats, state), items and fetch order."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.items: list = []
        self.fetched: list[str] = []
        crawler.signals.connect(self._item, signals.item_scraped)
        crawler.signals.connect(self._response, signals.response_received)

    def _item(self, item, response, spider):
        self.items.append(item)

    def _response(self, response, request, spider):
        self.fetched.append(response.url)

    @property
    def stats(self) -> dict:
        return self.crawler.stats.get_stats()

    def fetches_to_reach(self, relevant: set[str], share: float) -> int | None:
        """Fetches until ``share`` of ``relevant`` was fetched (None: never)."""
        need = max(1, int(share * len(relevant) + 0.999))
        found = 0
        for index, url in enumerate(self.fetched, 1):
            if url in relevant:
                found += 1
                if found >= need:
                    return index
        return None


async def run_crawl(spidercls, settings: Settings | None = None, **spider_kwargs) -> CrawlResult:
    """Run one crawl to its end and return what it did."""
    runner = CrawlerRunner(settings or project_settings())
    crawler = runner.create_crawler(spidercls)
    result = CrawlResult(crawler)
    await crawler.crawl_async(**spider_kwargs)
    return result
