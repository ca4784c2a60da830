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
    server, url = localsite.serve(lambda host, path: (200, WIDGETS_PAGE if path == "/widgets.html" else PLACEHOLDER_PAGE))
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
