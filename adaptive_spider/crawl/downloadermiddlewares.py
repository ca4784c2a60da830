"""DomainProfileMiddleware: what each domain's downloads were like.

It records, per domain, the latency Scrapy measured (``download_latency``), the
status of every response and every failure (exceptions, 5xx, DNS errors). robots.txt fetches
are left out. The frontier reads these profiles as features and as filters (slow, unreliable).
A fetch that gives no page (an error status or an exception) is also a reward
of 0 for the decision that released it.

Enable it with a priority above Scrapy's RetryMiddleware and RedirectMiddleware
(the add-on uses 950) so that it sees each raw outcome before they act on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from twisted.internet.error import DNSLookupError

from adaptive_spider.crawl.state import CrawlState, domain_of, request_domain

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response


class DomainProfileMiddleware:
    """Downloader middleware that keeps the crawl's domain profiles up to date."""

    def __init__(self, state: CrawlState) -> None:
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DomainProfileMiddleware:
        return cls(CrawlState.of(crawler))

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if _is_robots_txt(request):
            return response
        latency = request.meta.get("download_latency")
        self.state.domains.record_response(domain_of(response.url), response.status, latency)
        if response.status >= 400:
            # An error page is a fetch that found nothing: it lowers the domain's relevance.
            self.state.domains.record_relevance(domain_of(response.url), 0.0)
            self.state.reward_nothing(request)
        return response

    def process_exception(self, request: Request, exception: Exception, spider: Spider | None = None) -> None:
        if isinstance(exception, IgnoreRequest) or _is_robots_txt(request):
            # Dropped before download (robots.txt, offsite...): not the domain's failure.
            return None
        dns = isinstance(exception, DNSLookupError)
        self.state.domains.record_failure(request_domain(request), dns=dns)
        self.state.inc_stat("download_failures/dns" if dns else "download_failures/other")
        self.state.reward_nothing(request)
        return None


def _is_robots_txt(request: Request) -> bool:
    """RobotsTxtMiddleware's own fetch: most hosts answer it with a 404, which says
    nothing of their pages, and its answer is not the domain's first page."""
    return bool(request.meta.get("dont_obey_robotstxt")) and request.url.endswith("/robots.txt")
