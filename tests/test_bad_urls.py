"""Links whose host cannot exist (placeholders in documentation) are dropped at enqueue."""

from __future__ import annotations

import pytest

from adaptive_spider.crawl.canonical import has_valid_host


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
