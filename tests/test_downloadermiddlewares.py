"""DomainProfileMiddleware: what it records of each outcome, and what it leaves out."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError

from adaptive_spider.crawl.downloadermiddlewares import DomainProfileMiddleware
from adaptive_spider.crawl.state import CrawlState


def middleware():
    crawler = get_crawler(Spider, {"ADAPTIVE_QUERY": "widgets"})
    return DomainProfileMiddleware.from_crawler(crawler), CrawlState.of(crawler).domains


def test_pages_errors_and_dns_failures_are_recorded():
    mw, domains = middleware()
    page = Request("http://a.test/page", meta={"download_latency": 0.2})
    mw.process_response(page, HtmlResponse(page.url, status=200, body=b"<html></html>", request=page))
    missing = Request("http://a.test/missing")
    mw.process_response(missing, Response(missing.url, status=404, request=missing))
    down = Request("http://a.test/down")
    mw.process_response(down, Response(down.url, status=503, request=down))
    mw.process_exception(Request("http://b.test/"), DNSLookupError("no such host"))
    a, b = domains.get("a.test"), domains.get("b.test")
    # The 404 is kept in the statuses but is no failure of the host; the 503 is.
    assert (a.attempts, a.failures, dict(a.statuses), list(a.latencies)) == (3, 1, {200: 1, 404: 1, 503: 1}, [0.2])
    assert (b.attempts, b.failures, b.dns_failures) == (1, 1, 1)


@pytest.mark.parametrize(
    "status, host_failure",
    [(200, False), (301, False), (403, False), (404, False), (410, False), (429, True), (500, True), (503, True)],
)
def test_only_transport_statuses_count_against_a_host(status, host_failure):
    mw, domains = middleware()
    request = Request("http://a.test/page")
    mw.process_response(request, Response(request.url, status=status, request=request))
    assert domains.get("a.test").failures == int(host_failure)


def test_robots_txt_and_ignored_requests_say_nothing_of_the_domain():
    mw, domains = middleware()
    robots = Request("http://a.test/robots.txt", meta={"dont_obey_robotstxt": True})
    mw.process_response(robots, Response(robots.url, status=404, request=robots))
    mw.process_exception(robots, DNSLookupError("no such host"))
    mw.process_exception(Request("http://a.test/private"), IgnoreRequest("forbidden by robots.txt"))
    profile = domains.get("a.test")
    assert (profile.attempts, profile.failures, dict(profile.statuses)) == (0, 0, {})
    # The domain's first page is still to come: the frontier keeps waiting for its probe.
    domains.record_release(domains.id_of("a.test"))
    assert domains.is_untried(domains.id_of("a.test"))


def test_a_host_that_cannot_be_connected_to_is_unreachable_and_its_requests_are_not_sent():
    from scrapy.core.downloader.handlers.http11 import TunnelError
    from scrapy.exceptions import CannotResolveHostError, DownloadConnectionRefusedError, DownloadTimeoutError

    mw, domains = middleware()
    robots = Request("http://down.test/robots.txt", meta={"dont_obey_robotstxt": True})
    mw.process_exception(robots, DownloadConnectionRefusedError("refused"))
    down = domains.get("down.test")
    assert (down.attempts, down.unreachable) == (0, 1)  # robots.txt is no attempt of a page, but it counts here
    page = Request("http://down.test/page")
    mw.process_request(page)  # one refusal is not enough: sent
    mw.process_exception(page, TunnelError("the proxy refused the tunnel"))
    assert domains.is_unreachable(domains.id_of("down.test"), 2)
    with pytest.raises(IgnoreRequest):
        mw.process_request(Request("http://down.test/other"))
    # A timeout is no failure to connect, and a host that answered once is reachable.
    mw.process_exception(Request("http://slow.test/"), DownloadTimeoutError("took too long"))
    mw.process_exception(Request("http://slow.test/"), DownloadTimeoutError("took too long"))
    assert domains.get("slow.test").unreachable == 0
    ok = Request("http://flaky.test/a")
    mw.process_response(ok, Response(ok.url, status=404, request=ok))
    for _ in range(3):
        mw.process_exception(Request("http://flaky.test/b"), CannotResolveHostError("no such host"))
    assert domains.get("flaky.test").dns_failures == 3  # Scrapy 2.19's own exception for DNS failures
    assert not domains.is_unreachable(domains.id_of("flaky.test"), 2)
    mw.process_request(Request("http://flaky.test/c"))  # sent


def test_a_domain_profile_pickled_before_unreachable_existed_loads():
    import pickle

    from adaptive_spider.frontier.domains import DomainProfile

    profile = DomainProfile("a.test")
    profile.attempts = 3
    state = profile.__reduce_ex__(2)
    slots = dict(state[2][1])
    del slots["unreachable"]
    old = pickle.loads(pickle.dumps(profile))  # the ordinary round trip
    assert old.unreachable == 0 and old.attempts == 3
    restored = DomainProfile.__new__(DomainProfile)
    restored.__setstate__((None, slots))
    assert (restored.attempts, restored.unreachable) == (3, 0)
