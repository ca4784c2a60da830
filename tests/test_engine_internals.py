"""The two engine internals this project reads (adaptive_spider.crawl.engine_internals).

The first test fails loudly when a Scrapy release renames them: then the shim's fallbacks
are in force (in-flight requests by the downloader's active set only, no Crawl-delay), and
the shim must be updated before the upper pin on Scrapy is lifted again.
"""

from __future__ import annotations

import asyncio
import http.server
import logging
import threading
from types import SimpleNamespace

import scrapy

from adaptive_spider.crawl import engine_internals
from adaptive_spider.crawl.engine_internals import download_slot, requests_in_progress
from tests.conftest import crawl_test, project_settings, run_crawl


class ProbeSpider(scrapy.Spider):
    """Looks at the engine from inside a callback, where the request is certainly in progress."""

    name = "probe"
    custom_settings = {"CLOSESPIDER_PAGECOUNT": 5}

    def __init__(self, url: str = "", **kwargs):
        super().__init__(**kwargs)
        self.url = url
        self.seen: list[dict] = []

    async def start(self):
        yield scrapy.Request(self.url)

    def parse(self, response):
        in_progress = requests_in_progress(self.crawler)
        key, slot = download_slot(self.crawler, response.request)
        self.seen.append(
            {
                "in_progress": in_progress is not None and response.request in in_progress,
                "key": key,
                "slot_delay": getattr(slot, "delay", None),
            }
        )
        yield from response.follow_all(css="a", callback=self.parse)


@crawl_test
async def test_scrapy_still_has_the_engine_internals_the_shim_reads(demo_site, caplog):
    _, url = demo_site
    caplog.set_level(logging.ERROR, logger=engine_internals.__name__)
    result = await run_crawl(ProbeSpider, project_settings(), url=url)
    seen = result.crawler.spider.seen
    assert seen, "the probe spider parsed nothing"
    assert all(probe["in_progress"] for probe in seen), "engine._slot.inprogress is gone or changed meaning"
    assert all(probe["key"] == "127.0.0.1" and probe["slot_delay"] is not None for probe in seen), (
        "downloader.get_slot_key / downloader.slots changed"
    )
    assert not caplog.records


def test_without_the_engine_slot_set_the_downloader_active_set_is_used_and_an_error_logged(caplog, monkeypatch):
    monkeypatch.setattr(engine_internals, "_warned", set())
    active = {object()}
    crawler = SimpleNamespace(
        engine=SimpleNamespace(_slot=SimpleNamespace(), downloader=SimpleNamespace(active=active))
    )
    with caplog.at_level(logging.ERROR, logger=engine_internals.__name__):
        assert requests_in_progress(crawler) is active
        assert requests_in_progress(crawler) is active
    assert len(caplog.records) == 1 and "engine._slot.inprogress" in caplog.records[0].getMessage()


def test_before_the_crawl_starts_nothing_is_in_progress():
    assert requests_in_progress(None) is None
    assert requests_in_progress(SimpleNamespace(engine=None)) is None
    assert requests_in_progress(SimpleNamespace(engine=SimpleNamespace(_slot=None))) is None


class RefusingProxy(http.server.BaseHTTPRequestHandler):
    """An HTTP proxy that refuses every ``CONNECT`` and keeps the connection open (HTTP/1.1
    allows it; the big web's reference server does it); the server counts open connections."""

    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.open_connections += 1

    def finish(self):
        with self.server.lock:
            self.server.open_connections -= 1
        super().finish()

    def do_CONNECT(self):
        body = b"CONNECT not supported\n"
        self.send_response(405)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class HttpsThroughProxySpider(scrapy.Spider):
    name = "https_through_proxy"

    def __init__(self, proxy: str = "", n: int = 6, **kwargs):
        super().__init__(**kwargs)
        self.proxy, self.n = proxy, n
        self.failures: list = []

    async def start(self):
        for i in range(self.n):
            yield scrapy.Request(f"https://site{i}.test/", meta={"proxy": self.proxy}, errback=self.failures.append)

    def parse(self, response):
        pass


@crawl_test
async def test_a_connect_the_proxy_refuses_does_not_leave_its_socket_open():
    """Scrapy 2.19 fails the request of a refused tunnel and keeps the socket: a long crawl
    through such a proxy runs out of file descriptors. The add-on makes it close the socket."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RefusingProxy)
    server.daemon_threads = True
    server.lock, server.open_connections = threading.Lock(), 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        proxy = f"http://127.0.0.1:{server.server_address[1]}"
        result = await run_crawl(HttpsThroughProxySpider, project_settings(), proxy=proxy, n=6)
        failures = result.crawler.spider.failures
        assert len(failures) == 6 and all("CONNECT" in str(failure.value) for failure in failures)
        for _ in range(50):  # the server's threads see the close a moment later
            if server.open_connections == 0:
                break
            await asyncio.sleep(0.1)
        assert server.open_connections == 0, f"{server.open_connections} refused tunnels left open"
    finally:
        server.shutdown()
        server.server_close()


def test_scrapy_still_raises_its_tunnel_error_where_the_domain_profiles_look_for_it():
    from adaptive_spider.crawl.downloadermiddlewares import CONNECTION_FAILURES
    from adaptive_spider.crawl.engine_internals import tunnel_errors

    errors = tunnel_errors()  # fails here, not silently in a crawl, when Scrapy moves it
    assert len(errors) == 1 and errors[0].__name__ == "TunnelError"
    assert errors[0] in CONNECTION_FAILURES
