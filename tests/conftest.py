"""Shared fixtures: the generated demo site on 127.0.0.1 and a helper that runs
real Scrapy crawls in the test process (pytest-twisted, asyncio reactor)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.demo.traps import TrapSite
from adaptive_spider.demo.traps import serve as serve_traps

PROJECT = Path(__file__).resolve().parent.parent

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


def serve_as_proxy(monkeypatch, answer):
    """Serve ``answer(host, path)`` on 127.0.0.1 as every crawl's HTTP proxy (nothing leaves
    the machine, whatever host a URL names); yields the proxy's URL, for a fixture."""
    from benchmarks import localsite

    server, base = localsite.serve(answer)
    url = base.rstrip("/")
    monkeypatch.setenv("http_proxy", url)
    monkeypatch.setenv("https_proxy", url)
    monkeypatch.delenv("no_proxy", raising=False)
    yield url
    server.shutdown()
    server.server_close()


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


# -- the trap site, crawled once for the robustness tests (test_traps.py, test_report.py) ----------
TRAP_BUDGET = 500


@pytest.fixture(scope="session")
def trap_crawl(tmp_path_factory):
    """One ``scrapy crawl focused`` of the trap site (default profile, robots.txt obeyed,
    CLOSESPIDER_PAGECOUNT=500): the site (with its request log), its URL, the crawl's
    log, its items and its JSON crawl report."""
    tmp = tmp_path_factory.mktemp("traps")
    site = TrapSite(hang_seconds=10)
    server, url = serve_traps(site)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "focused",
        "-a",
        f"query={QUERY}",
        "-a",
        f"start_urls={url}",
        "-O",
        str(tmp / "items.jsonl"),
        "-s",
        f"CLOSESPIDER_PAGECOUNT={TRAP_BUDGET}",
        "-s",
        "DOWNLOAD_TIMEOUT=1.5",
        "-s",
        f"DOWNLOAD_MAXSIZE={1024 * 1024}",
        "-s",
        f"ADAPTIVE_REPORT_FILE={tmp / 'report.json'}",
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        "ADAPTIVE_SELF_STOP=False",
    ]
    try:
        done = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in (tmp / "items.jsonl").read_text().splitlines()]
    report = json.loads((tmp / "report.json").read_text())
    return site, url, done.stderr, items, report
