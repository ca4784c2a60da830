"""Read robots.txt from another location than ``/robots.txt``.

Scrapy's ``RobotsTxtMiddleware`` fetches ``scheme://host/robots.txt`` for each
site through ``engine.download_async``, marked ``dont_obey_robotstxt``. That
request passes through the downloader middlewares like any other, so this
middleware rewrites its URL to the configured location and Scrapy's own
middleware parses and enforces whatever comes back. Nothing of Scrapy's
robots.txt logic is repeated here.

Setting ``ADAPTIVE_ROBOTSTXT_LOCATIONS``: a mapping of site (``host[:port]``
as in the URL, or ``*`` for every site) to an ``http(s)`` URL or a path
starting with ``/`` (resolved on the requested site). Templates set it from
their ``options.robots_txt``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.http import Request
from scrapy.utils.httpobj import urlparse_cached

from adaptive_spider.extract.schema import robots_txt_site_entry

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

ROBOTS_PATH = "/robots.txt"
# Set on a rewritten request, so a location that is itself /robots.txt of a
# mapped site is not rewritten again.
RELOCATED_META_KEY = "adaptive_robotstxt_relocated"


class RobotsTxtLocationMiddleware:
    """Downloader middleware that points Scrapy's robots.txt requests at configured locations."""

    def __init__(self, locations: dict[str, str], stats: StatsCollector | None = None) -> None:
        self.locations = dict(locations)
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtLocationMiddleware:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured("ROBOTSTXT_OBEY is off, so no robots.txt is read")
        raw = settings.getdict("ADAPTIVE_ROBOTSTXT_LOCATIONS")
        if not raw:
            raise NotConfigured("ADAPTIVE_ROBOTSTXT_LOCATIONS is empty")
        locations: dict[str, str] = {}
        for site, location in raw.items():
            try:
                site, location = robots_txt_site_entry(site, location)
            except ValueError as exc:
                raise ValueError(f"ADAPTIVE_ROBOTSTXT_LOCATIONS[{site!r}]: {exc}") from None
            locations[site] = location
        return cls(locations, crawler.stats)

    def location_for(self, request: Request) -> str | None:
        """The robots.txt URL to fetch instead of *request*'s, or None to keep it."""
        url = urlparse_cached(request)
        location = self.locations.get(url.netloc, self.locations.get("*"))
        if location is None:
            return None
        if location.startswith("/"):
            location = f"{url.scheme}://{url.netloc}{location}"
        return None if location == request.url else location

    def process_request(self, request: Request, spider: Spider | None = None) -> Request | None:
        if not request.meta.get("dont_obey_robotstxt") or request.meta.get(RELOCATED_META_KEY):
            return None
        if urlparse_cached(request).path != ROBOTS_PATH:
            return None
        location = self.location_for(request)
        if location is None:
            return None
        logger.debug("Reading robots.txt of %s from %s", request.url, location)
        if self.stats is not None:
            self.stats.inc_value("adaptive/robotstxt/relocated")
        # A Request returned here is downloaded in place of this one by
        # engine.download_async, and its response goes back to RobotsTxtMiddleware.
        return request.replace(url=location, meta={**request.meta, RELOCATED_META_KEY: True})
