"""Fixtures for the extraction tests: a local site of fixture pages and real template crawls."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.settings import Settings

from adaptive_spider.demo.site import start_server
from adaptive_spider.profiles import apply_profile_settings
from spiders.template import TemplateSpider

FIXTURES = Path(__file__).parent / "fixtures"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the base class's name
        pass


@pytest.fixture(scope="session")
def fixture_site():
    """Base URL of an HTTP server on 127.0.0.1 serving tests/extract/fixtures/."""
    handler = functools.partial(_QuietHandler, directory=str(FIXTURES))
    server, url = start_server(handler)
    yield url
    server.shutdown()
    server.server_close()


@dataclass
class CrawlResult:
    documents: list[dict] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)  # URLs of responses, robots.txt included
    stats: dict = field(default_factory=dict)


def profile_settings(profile: str, **overrides) -> Settings:
    """A settings profile as `scrapy crawl` would load it, plus test overrides.

    ADDONS is emptied after the profile add-on's own crawl settings are applied
    (for ``javascript``: the browser): these tests measure extraction, not the
    focused crawl's components (tested with the focused spider), and keep the
    order of fetches plain Scrapy's.
    """
    settings = Settings()
    settings.setmodule(f"settings_profiles.{profile}", priority="project")
    apply_profile_settings(settings)
    settings.setdict(
        {
            "ADDONS": {},
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "LOG_LEVEL": "INFO",
            **overrides,
        },
        priority="project",
    )
    return settings


@pytest.fixture
def crawl_template():
    """An async function that runs the `template` spider in this process and returns what it got."""

    async def crawl(template, start_urls, profile="default", **overrides) -> CrawlResult:
        crawler = Crawler(TemplateSpider, profile_settings(profile, **overrides))
        result = CrawlResult()

        def on_item(item, response, spider):
            result.documents.append(dict(item))

        def on_response(response, request, spider):
            result.fetched.append(response.url)

        crawler.signals.connect(on_item, signal=signals.item_scraped)
        crawler.signals.connect(on_response, signal=signals.response_received)
        await crawler.crawl(template=str(template), start_urls=",".join(start_urls))
        result.stats = crawler.stats.get_stats()
        return result

    return crawl
