"""Links whose host cannot exist (placeholders in documentation) are dropped at enqueue."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from adaptive_spider.crawl.canonical import has_valid_host, parts_have_valid_host
from benchmarks import localsite
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl


@pytest.mark.parametrize(
    "url",
    [
        "http://<servername",
        "http://%3Cusername%3E@<servername",
        "https://<host>:<port>/path",
        "http://a..b/",
        "http://-bad.example/",
        "http://example.com:99999/",
        "http:///path",
    ],
)
def test_placeholder_and_malformed_hosts_are_invalid(url):
    assert not has_valid_host(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://hub.test/",
        "https://docs.python.org/3/library/asyncio.html",
        "http://127.0.0.1:8080/a?b=c",
        "http://[::1]:8080/",
        "http://a_b.example.com/",
        "http://xn--bcher-kva.de/",
        "http://localhost/",
        "http://example.com./",
        "data:text/html,hello",
    ],
)
def test_real_hosts_and_other_schemes_are_kept(url):
    assert has_valid_host(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://hub.test?q=http://<servername",
        "http://<servername#http://hub.test/",
        "HTTP://Hub.Test/a",
        "https://hub.test:80x/",
        "http://hub.test/redirect?to=http://<x>",
        "http://user@hub.test:8080#frag",
        "ftp://<servername/",
        "http:/hub.test/",
    ],
)
def test_the_authority_decides_as_a_full_parse_does(url):
    # Each scheme and authority is judged once; the rest of the URL must not change the answer.
    assert has_valid_host(url) == parts_have_valid_host(urlsplit(url))
    assert has_valid_host(url) == has_valid_host(url)  # the remembered answer is the same


# -- in a real crawl ---------------------------------------------------------------------------
PLACEHOLDER_PAGE = b"""<html><head><title>Widgets setup</title></head><body><h1>Widgets setup</h1>
<p>Point your client at <a href="http://<servername">http://&lt;servername</a> or at
<a href="http://%3Cusername%3E@<servername">http://&lt;username&gt;@&lt;servername</a>,
then read <a href="/widgets.html">the widgets page</a>.</p></body></html>"""
WIDGETS_PAGE = b"<html><head><title>Widgets</title></head><body><h1>Widgets</h1><p>widgets</p></body></html>"


@pytest.fixture
def placeholder_site():
    server, url = localsite.serve(
        lambda host, path: (200, WIDGETS_PAGE if path == "/widgets.html" else PLACEHOLDER_PAGE)
    )
    yield url
    server.shutdown()
    server.server_close()


@crawl_test
async def test_placeholder_links_are_dropped_at_enqueue_and_reported(placeholder_site):
    result = await run_crawl(FocusedSpider, project_settings(), query="widgets", start_urls=placeholder_site)
    stats = result.stats
    assert set(result.fetched) == {placeholder_site, placeholder_site + "widgets.html"}
    assert stats["adaptive/filtered/malformed_url"] == 2
    assert not stats.get("downloader/exception_count")  # nothing was tried, so nothing failed
    assert stats["adaptive/report/links/rules/malformed_url"] == 2  # the crawl report's row


# -- a host that cannot be connected to --------------------------------------------------------
LOCAL_PAGES = 25


def local_page(n: int) -> bytes:
    """Local page ``n`` links the next five (a frontier with other work while a host is
    probed); page 3 links a host that is down too: port 1 here refuses connections."""
    links = "".join(f'<a href="/local-{m}.html">widgets {m}</a> ' for m in range(n + 1, min(n + 6, LOCAL_PAGES)))
    if n == 3:
        links += "".join(f'<a href="http://localhost:1/widgets-{i}.html">widgets {i}</a> ' for i in range(8))
    return (
        f"<html><head><title>Widgets {n}</title></head><body><h1>Widgets {n}</h1><p>{links}</p></body></html>".encode()
    )


@pytest.fixture
def down_host_site():
    def page(host, path):
        if path.startswith("/local-"):
            return 200, local_page(int(path[len("/local-") :].split(".")[0]))
        return 200, b'<html><body><h1>Widgets</h1><a href="/local-0.html">widgets</a></body></html>'

    server, url = localsite.serve(page)
    yield url
    server.shutdown()
    server.server_close()


def refusals(stats: dict) -> tuple[int, int]:
    """Refused connections of downloads (robots.txt's included) and of robots.txt, by the
    exception's name (Scrapy's or Twisted's)."""

    def count(prefix: str) -> int:
        return sum(v for k, v in stats.items() if k.startswith(prefix) and "ConnectionRefusedError" in k)

    return count("downloader/exception_type_count/"), count("robotstxt/exception_count/")


def local_site_crawled(result, url: str) -> bool:
    pages = {url} | {f"{url}local-{n}.html" for n in range(LOCAL_PAGES)}
    return pages <= set(result.fetched)


@crawl_test
async def test_a_host_whose_robots_txt_refuses_connections_gets_no_page_request(down_host_site):
    # The default profile retries once: robots.txt is refused twice, and the host's page
    # requests, released while it was fetched, are not sent.
    result = await run_crawl(
        FocusedSpider, project_settings(ROBOTSTXT_OBEY=True), query="widgets", start_urls=down_host_site
    )
    stats = result.stats
    downloads_refused, robots_refused = refusals(stats)
    assert robots_refused == 1 and downloads_refused == 2  # robots.txt and its retry
    assert stats["adaptive/filtered/unreachable"] == 8
    assert local_site_crawled(result, down_host_site)


@crawl_test
async def test_a_host_that_refuses_connections_is_tried_with_the_rule_off(down_host_site):
    settings = project_settings(ROBOTSTXT_OBEY=True, ADAPTIVE_UNREACHABLE_FAILURES=0)
    result = await run_crawl(FocusedSpider, settings, query="widgets", start_urls=down_host_site)
    downloads_refused, robots_refused = refusals(result.stats)
    assert robots_refused == 1 and downloads_refused > 2  # its pages were sent, and refused
    assert not result.stats.get("adaptive/filtered/unreachable")
