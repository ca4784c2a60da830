"""RobotsCrawlDelay: the ``Crawl-delay`` of robots.txt becomes the site's download delay.

Scrapy's RobotsTxtMiddleware obeys ``Allow``/``Disallow`` but not
``Crawl-delay``. This extension listens to the ``robots_parsed`` signal, reads
the delay the site asks of our user agent, caps it at
``ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX`` seconds (0 turns the extension off), and
makes it the minimum delay of the site's download slot, without random jitter
(jitter would go below the delay the site asked for). A larger
``DOWNLOAD_DELAY`` or AutoThrottle delay still wins. The delay is applied
again to every request that reaches the downloader, because Scrapy recreates
idle slots and AutoThrottle adjusts their delay.
Stats: ``adaptive/robotstxt/crawl_delay_sites``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from adaptive_spider.crawl.engine_internals import download_slot
from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)


class RobotsCrawlDelay:
    """Extension that honours robots.txt ``Crawl-delay`` per download slot."""

    def __init__(self, crawler: Crawler, max_delay: float) -> None:
        self.crawler = crawler
        self.max_delay = max_delay
        self.delays: dict[str, float] = {}
        settings = crawler.settings
        self.user_agent = settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT") or ""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsCrawlDelay:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        max_delay = AdaptiveConfig.from_settings(crawler.settings).robotstxt_crawl_delay_max
        if not max_delay:
            raise NotConfigured("ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX is 0")
        extension = cls(crawler, max_delay)
        crawler.signals.connect(extension.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(extension.request_reached_downloader, signal=signals.request_reached_downloader)
        return extension

    def robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        user_agent = request.headers.get(b"User-Agent") or self.user_agent
        delay = robotparser.crawl_delay(user_agent)
        if not delay or delay <= 0:
            return
        key, slot = download_slot(self.crawler, request)
        if not key:
            return
        self.delays[key] = min(float(delay), self.max_delay)
        self.crawler.stats.inc_value("adaptive/robotstxt/crawl_delay_sites")
        logger.info("robots.txt of %s asks for a crawl delay of %ss; using %ss", key, delay, self.delays[key])
        self._apply(key, slot)

    def request_reached_downloader(self, request: Request, spider: Spider | None = None) -> None:
        if self.delays:
            key, slot = download_slot(self.crawler, request)
            if key in self.delays:
                self._apply(key, slot)

    def _apply(self, key: str, slot: Any | None) -> None:
        """Scrapy recreates a slot that was idle for a while: the delay is set again on each request."""
        if slot is None:
            return
        delay = self.delays[key]
        if slot.delay < delay:
            slot.delay = delay
        if not hasattr(slot, "jitter"):  # Scrapy < 2.19
            slot.randomize_delay = False
        elif slot.jitter:
            slot.jitter = 0.0
