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
    "status, host_failure", [(200, False), (301, False), (403, False), (404, False), (410, False), (429, True), (500, True), (503, True)]
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
