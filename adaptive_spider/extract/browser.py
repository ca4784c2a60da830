"""Render every page in a headless browser when the ``javascript`` profile is on.

scrapy-playwright only sends requests whose ``meta["playwright"]`` is true to
the browser. This middleware sets it on every request that does not decide
for itself, so pages whose content is written by JavaScript are extracted
without spider changes. robots.txt requests stay on plain HTTP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


class BrowserRenderingMiddleware:
    """Downloader middleware that marks requests for scrapy-playwright's browser."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BrowserRenderingMiddleware:
        if not _browser_handles_http(crawler.settings):
            raise NotConfigured(
                "DOWNLOAD_HANDLERS do not route http and https to scrapy-playwright; "
                "use the javascript settings profile"
            )
        return cls()

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if "playwright" in request.meta or request.meta.get("dont_obey_robotstxt"):
            return None
        request.meta["playwright"] = True
        return None


def _browser_handles_http(settings: BaseSettings) -> bool:
    handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
    try:
        playwright_handler = load_object(PLAYWRIGHT_HANDLER)
    except ImportError:
        return False
    for scheme in ("http", "https"):
        handler = handlers.get(scheme)
        if handler is None or load_object(handler) is not playwright_handler:
            return False
    return True
