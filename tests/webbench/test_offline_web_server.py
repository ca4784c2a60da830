"""The offline web's server through real sockets: proxy requests, Host headers, keep-alive, Scrapy."""

import http.client
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_twisted
import scrapy
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.test import get_crawler

from benchmarks.webbench.server import serve

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(sample_web):
    server, port = serve(sample_web)
    yield server
    server.close()


def fetch(port, target, method="GET", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request(method, target, headers=headers or {})
    response = connection.getresponse()
    result = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return result


def test_proxy_request_answers_what_get_answers(server, sample_web):
    url = "http://site.test/sub/b.html"
    status, headers, body = fetch(server.port, url)
    expected = sample_web.get(url)
    assert (status, body) == (expected.status, expected.body)
    assert headers["Content-Type"] == expected.headers["Content-Type"]
    assert int(headers["Content-Length"]) == len(body)


def test_host_header_request_and_redirect(server):
    status, headers, _ = fetch(server.port, "/sub/", headers={"Host": "site.test"})
    assert (status, headers["Location"]) == (301, "http://site.test/sub/index.html")
    status, _, body = fetch(server.port, "/", headers={"Host": "hub.test"})
    assert status == 200 and b"Local documentation hub" in body


def test_unknown_host_is_404_and_connect_is_refused(server):
    assert fetch(server.port, "http://github.com/scrapy/scrapy")[0] == 404
    assert fetch(server.port, "site.test:443", method="CONNECT")[0] == 501


def test_request_without_host_is_a_bad_request(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"GET /index.html HTTP/1.0\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 400")


def test_keep_alive_serves_many_requests_on_one_connection(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    statuses, sockets = [], set()
    for target in ("http://site.test/index.html", "http://site.test/missing.html", "http://hub.test/"):
        connection.request("GET", target)
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
        sockets.add(id(connection.sock))
    connection.close()
    assert statuses == [200, 404, 200]
    assert len(sockets) == 1


def test_head_has_headers_and_no_body(server):
    status, headers, body = fetch(server.port, "http://site.test/a.html", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0


def test_close_releases_the_port(sample_web):
    server, port = serve(sample_web)
    assert fetch(port, "http://hub.test/")[0] == 200
    server.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_serves_on_loopback_only(sample_web):
    with pytest.raises(ValueError, match=r"127\.0\.0\.1 only"):
        serve(sample_web, host="0.0.0.0")


def test_command_line_prints_the_proxy_to_use(sample_folder):
    command = [
        sys.executable,
        "-m",
        "benchmarks.webbench.server",
        "--port",
        "0",
        "--folder",
        str(sample_folder),
        "--host",
        "cli.test",
    ]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        first_line = process.stdout.readline()
        assert "http_proxy=http://127.0.0.1:" in first_line
        port = int(first_line.split("http_proxy=http://127.0.0.1:")[1].split()[0])
        assert fetch(port, "http://cli.test/a.html")[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_command_line_names_a_bad_folder(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.webbench.server", "--folder", str(tmp_path / "none")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "not a folder" in result.stderr


class FollowAll(scrapy.Spider):
    name = "follow_all"

    async def start(self):
        yield scrapy.Request("http://hub.test/")

    def parse(self, response):
        if isinstance(response, TextResponse):
            for link in LinkExtractor().extract_links(response):
                yield response.follow(link.url)


@pytest_twisted.ensureDeferred
async def test_scrapy_crawls_the_site_through_the_proxy(server, monkeypatch):
    monkeypatch.setenv("http_proxy", server.proxy_url)
    monkeypatch.setenv("https_proxy", server.proxy_url)
    monkeypatch.delenv("no_proxy", raising=False)
    crawler = get_crawler(
        FollowAll,
        {
            "ROBOTSTXT_OBEY": True,
            "RETRY_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "LOG_LEVEL": "WARNING",
        },
    )
    answered = {}

    def record(response, request):
        answered[request.url.partition("#")[0]] = response.status

    crawler.signals.connect(record, signal=scrapy.signals.response_received)  # a weak reference: keep `record`
    await crawler.crawl()
    assert {url for url, status in answered.items() if status == 200 and "robots" not in url} == {
        "http://hub.test/",
        "http://site.test/index.html",
        "http://site.test/a.html",
        "http://site.test/sub/index.html",
        "http://site.test/sub/b.html",
    }
    assert crawler.stats.get_value("downloader/response_status_count/301") == 2  # /sub/ and the root
    assert answered["http://site.test/missing.html"] == 404
    assert answered["http://elsewhere.invalid/page.html"] == 404
    assert answered["http://site.test/robots.txt"] == 200
    assert "http://site.test/private/secret.html" not in answered
