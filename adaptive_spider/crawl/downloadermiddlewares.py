"""DomainProfileMiddleware: what each domain's downloads were like.

It records, per domain, the latency Scrapy measured (``download_latency``), the
status of every response and every failure (exceptions, 5xx, DNS errors). robots.txt fetches
are left out, except a failure to connect at all: robots.txt is on the same host and port as
the pages, so it says the pages cannot be reached either. The frontier reads these profiles
as features and as filters (slow, unreliable, unreachable).
A fetch that gives no page (an error status or an exception) is also a reward
of 0 for the decision that released it.

Enable it with a priority above Scrapy's RetryMiddleware and RedirectMiddleware
(the add-on uses 950) so that it sees each raw outcome before they act on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import CannotResolveHostError, DownloadConnectionRefusedError, IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, NoRouteError

from adaptive_spider.crawl.engine_internals import tunnel_errors
from adaptive_spider.crawl.state import CrawlState, domain_of, request_domain
from adaptive_spider.relevance.pagetext import is_html

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.defer import Deferred


class DomainProfileMiddleware:
    """Downloader middleware that keeps the crawl's domain profiles up to date."""

    def __init__(self, state: CrawlState) -> None:
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DomainProfileMiddleware:
        return cls(CrawlState.of(crawler))

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        """A request released before its host was found unreachable (waiting for robots.txt,
        or in the downloader's queue) is not sent: it would fail as the others did."""
        if _is_robots_txt(request):
            return None
        domains, domain = self.state.domains, request_domain(request)
        domain_id = domains.ids.get(domain)
        if domain_id is not None and domains.is_unreachable(domain_id, self.state.config.unreachable_failures):
            self.state.inc_stat("filtered/unreachable")
            self.state.reward_nothing(request)
            raise IgnoreRequest(f"{domain} could not be connected to")
        return None

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
        if isinstance(exception, IgnoreRequest):
            # Dropped before download (robots.txt, offsite...): not the domain's failure.
            return None
        unreachable = isinstance(exception, CONNECTION_FAILURES)
        if _is_robots_txt(request):
            if unreachable:
                self.state.domains.record_unreachable(request_domain(request))
            return None
        dns = isinstance(exception, DNS_FAILURES)
        self.state.domains.record_failure(request_domain(request), dns=dns, unreachable=unreachable)
        self.state.inc_stat("download_failures/dns" if dns else "download_failures/other")
        self.state.reward_nothing(request)
        return None


#: A host name that does not resolve: Scrapy 2.19's download handlers raise their own
#: exception for it, other handlers (and earlier releases) Twisted's.
DNS_FAILURES = (CannotResolveHostError, DNSLookupError)
#: Failures to connect at all, before any answer: the host's name does not resolve, it
#: refuses the connection or has no route, or the proxy refuses the tunnel to it. A timeout
#: is not one: a slow host may answer the next time.
CONNECTION_FAILURES = (
    *DNS_FAILURES,
    DownloadConnectionRefusedError,
    ConnectionRefusedError,
    NoRouteError,
    *tunnel_errors(),
)


def _is_robots_txt(request: Request) -> bool:
    """RobotsTxtMiddleware's own fetch: most hosts answer it with a 404, which says
    nothing of their pages, and its answer is not the domain's first page."""
    return bool(request.meta.get("dont_obey_robotstxt")) and request.url.endswith("/robots.txt")


class ModelScoreMiddleware:
    """Downloader middleware that starts a relevance model's score of each HTML page in the
    model's worker processes as the page arrives (``ADAPTIVE_EMBEDDING_PROCESSES``), and hands the
    page on when the score is in: the spider middleware then finds it ready, and the crawl's
    thread fetches and parses other pages meanwhile.

    The add-on enables it with priority 10, the last to see a response: what it scores is what
    the spider gets (redirects followed, bodies decompressed).
    """

    def __init__(self, state: CrawlState) -> None:
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ModelScoreMiddleware:
        state = CrawlState.of(crawler)
        if not state.scores_later:
            # No reason given on purpose: Scrapy logs a warning for one, and a crawl whose
            # model scores in its own thread (the default, BM25) has nothing to be warned of.
            raise NotConfigured
        return cls(state)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response | Coroutine[Any, Any, Response]:
        if _is_robots_txt(request) or response.status >= 400 or not is_html(response):
            return response
        pending = self.state.score_ahead(response)
        if pending is None:
            return response
        return self._after(pending, response)

    @staticmethod
    async def _after(pending: Deferred[Any], response: Response) -> Response:
        await maybe_deferred_to_future(pending)
        return response
