"""Domain health from transport outcomes, in a real crawl of three hosts behind a local proxy.

- ``shop.test``: every product page links to category pages that do not exist (404). A site
  with dead links is not a failing host: the crawl fetches every product.
- ``down.test``: answers 503 to most requests. It is dropped as unreliable.
- ``slow.test``: answers every request late. It is held back, never dropped, and its
  relevant pages are still fetched.
- ``gone.test``: answers 404 to every request, though the hub links thirty of its pages. A
  host that never serves a page is dropped after ``ADAPTIVE_DEAD_DOMAIN_ANSWERS`` answers.
"""

from __future__ import annotations

import time
import zlib

import pytest
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.utils.httpobj import urlparse_cached

from adaptive_spider.crawl.engine_internals import download_slot
from adaptive_spider.crawl.state import CrawlState
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl, serve_as_proxy

QUERY = "blue widget"
PRODUCTS = 60
DEAD_CATEGORIES = 20
DOWN_PAGES = 30
SLOW_PAGES = 30
SLOW_SECONDS = 0.3
GONE_PAGES = 30


def _page(title: str, links: list[str], body: str = "") -> bytes:
    anchors = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p><ul>{anchors}</ul></body></html>".encode()


def _answer(host: str, path: str) -> tuple[int, bytes]:
    if host == "hub.test":
        return 200, _page(
            "Hub",
            [("http://shop.test/", "blue widget shop"), ("http://slow.test/", "blue widget archive")]
            + [(f"http://down.test/news/{n}", f"blue widget news {n}") for n in range(DOWN_PAGES)]
            + [(f"http://gone.test/widgets/{n}", f"blue widget guide {n}") for n in range(GONE_PAGES)],
        )
    if host == "shop.test":
        if path == "/":
            return 200, _page("Shop", [(f"/product/{n}", f"blue widget {n}") for n in range(PRODUCTS)])
        if path.startswith("/product/"):
            n = int(path.rsplit("/", 1)[1])
            dead = [(f"/category/{(n + k) % DEAD_CATEGORIES}", "category") for k in range(3)]
            more = [(f"/product/{(n + 1) % PRODUCTS}", f"blue widget {(n + 1) % PRODUCTS}")]
            return 200, _page(f"Blue widget {n}", dead + more, "a blue widget for sale")
        return 404, b"<html><body>Not found</body></html>"
    if host == "down.test":
        # Most requests fail, the same way every time (Scrapy retries a 503 twice).
        if zlib.crc32(path.encode()) % 5 != 0:
            return 503, b"<html><body>Service unavailable</body></html>"
        return 200, _page(f"Blue widget news {path}", [], "blue widget")
    if host in ("slow.test", "slower.test"):
        time.sleep(SLOW_SECONDS)
        if path == "/":
            return 200, _page("Archive", [(f"/item/{n}", f"blue widget archive {n}") for n in range(SLOW_PAGES)])
        return 200, _page(f"Blue widget archive {path}", [], "the blue widget, archived")
    return 404, b""


@pytest.fixture
def proxy(monkeypatch):
    yield from serve_as_proxy(monkeypatch, _answer)  # it answers for every host itself


@crawl_test
async def test_dead_links_do_not_drop_a_host_but_failing_and_gone_hosts_are_dropped_and_slow_ones_kept(proxy):
    settings = project_settings(
        ADAPTIVE_SLOW_DOMAIN_MS=150,
        CONCURRENT_REQUESTS_PER_DOMAIN=2,
        CONCURRENT_REQUESTS=4,
        RETRY_TIMES=1,
        DOWNLOAD_TIMEOUT=10,
    )
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls="http://hub.test/")
    fetched = set(result.fetched)
    stats = result.stats

    products = {f"http://shop.test/product/{n}" for n in range(PRODUCTS)}
    assert products <= fetched, f"{len(products - fetched)} products never fetched"
    dead = {url for url in fetched if "/category/" in url}
    assert len(dead) == DEAD_CATEGORIES  # fetched, answered 404, and the host kept its place

    domains = CrawlState.of(result.crawler).domains
    shop, down, slow = domains.get("shop.test"), domains.get("down.test"), domains.get("slow.test")
    assert shop.failures == 0 and shop.statuses[404] >= DEAD_CATEGORIES
    assert down.failure_rate > 0.5
    assert stats.get("adaptive/filtered/unreliable", 0) > 0
    news = {url for url in fetched if url.startswith("http://down.test/news/")}
    assert len(news) < DOWN_PAGES  # dropped: what was still queued is never fetched

    slow_items = {f"http://slow.test/item/{n}" for n in range(SLOW_PAGES)}
    assert slow_items <= fetched  # held back, never dropped
    assert slow.failures == 0 and slow.median_latency_ms > 150
    assert stats.get("adaptive/filtered/deferred_slow", 0) > 0

    gone = {url for url in fetched if url.startswith("http://gone.test/")}
    # Dropped once five answers came back without a page: only what was released by then is fetched.
    assert 5 <= len(gone) <= GONE_PAGES // 2, sorted(gone)
    assert stats.get("adaptive/filtered/dead_domain", 0) > 0


class SlotWatch:
    """Writes down, for each host, the most requests its download slot held at once
    (downloading or waiting in the slot's queue)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.most: dict[str, int] = {}
        crawler.signals.connect(self.reached, signals.request_reached_downloader)

    def reached(self, request, spider):
        key, slot = download_slot(self.crawler, request)
        if slot is not None:
            self.most[key] = max(self.most.get(key, 0), len(slot.active))


@pytest.mark.parametrize("limit", [0, -1], ids=["default", "no-limit"])
@crawl_test
async def test_a_slow_host_never_holds_more_than_its_slot_of_the_downloader(proxy, limit):
    # slow.test's items are the best links, and it is slow, but not slow enough to be held back:
    # its requests would wait in its download slot, holding the places shop.test could use.
    settings = project_settings(
        ADAPTIVE_SLOW_DOMAIN_MS=60_000,
        ADAPTIVE_DOMAIN_IN_FLIGHT=limit,
        ADAPTIVE_DOMAIN_IN_FLIGHT_MS=SLOW_SECONDS * 1000 / 2,
        CONCURRENT_REQUESTS_PER_DOMAIN=2,
        CONCURRENT_REQUESTS=6,
        RETRY_TIMES=0,
    )
    runner = CrawlerRunner(settings)
    crawler = runner.create_crawler(FocusedSpider)
    watch = SlotWatch(crawler)
    await crawler.crawl_async(query="blue widget archive", start_urls="http://hub.test/")
    if limit == 0:  # the default: as many as the slot downloads at once
        assert watch.most["slow.test"] <= 2, watch.most  # (fast shop.test's may queue: they start at once)
        assert crawler.stats.get_value("adaptive/filtered/parked_busy", 0) > 0
    else:  # without a limit the slow host's requests queue up in its slot
        assert watch.most["slow.test"] > 2, watch.most


class SlowSlotsWatch(SlotWatch):
    """Also writes down the most requests the slow hosts' slots held at once, together, once
    every slow host has answered: a host is known to be slow from its first answer on, and
    until then its first request is a probe, which the cap does not count."""

    def __init__(self, crawler, slow_hosts):
        super().__init__(crawler)
        self.slow_hosts = slow_hosts
        self.most_together = 0
        self.answered: set = set()
        self.slots: dict = {}
        crawler.signals.connect(self.response_received, signal=signals.response_received)

    def response_received(self, response, request, spider):
        host = urlparse_cached(request).hostname
        if host in self.slow_hosts:
            self.answered.add(host)

    def reached(self, request, spider):
        super().reached(request, spider)
        key, slot = download_slot(self.crawler, request)
        if key in self.slow_hosts and slot is not None:
            self.slots[key] = slot
        if len(self.answered) == len(self.slow_hosts):
            together = sum(len(slot.active) for slot in self.slots.values())
            self.most_together = max(self.most_together, together)


def _two_slow_hosts(host: str, path: str) -> tuple[int, bytes]:
    if host == "hub.test":
        return 200, _page(
            "Hub",
            [
                ("http://slow.test/", "blue widget archive"),
                ("http://slower.test/", "blue widget archive"),
                ("http://shop.test/", "shop"),
            ],
        )
    return _answer(host, path)


@pytest.fixture
def two_slow_hosts(monkeypatch):
    yield from serve_as_proxy(monkeypatch, _two_slow_hosts)


@pytest.mark.parametrize("share", [0.5, 1.0], ids=["half", "no-limit"])
@crawl_test
async def test_slow_hosts_together_hold_at_most_their_share_of_the_downloader(two_slow_hosts, share):
    # Two slow hosts hold the best links; each may have 3 requests in flight, and the
    # downloader 6: without ADAPTIVE_SLOW_DOMAINS_SHARE they would take every place.
    settings = project_settings(
        ADAPTIVE_SLOW_DOMAIN_MS=60_000,
        ADAPTIVE_DOMAIN_IN_FLIGHT_MS=SLOW_SECONDS * 1000 / 2,
        ADAPTIVE_SLOW_DOMAINS_SHARE=share,
        CONCURRENT_REQUESTS_PER_DOMAIN=3,
        CONCURRENT_REQUESTS=6,
        RETRY_TIMES=0,
    )
    runner = CrawlerRunner(settings)
    crawler = runner.create_crawler(FocusedSpider)
    watch = SlowSlotsWatch(crawler, ("slow.test", "slower.test"))
    await crawler.crawl_async(query="blue widget archive", start_urls="http://hub.test/")
    fetched = crawler.stats.get_value("response_received_count", 0)
    assert fetched > 2 * SLOW_PAGES  # both archives, held back or not, are crawled
    if share < 1.0:
        assert watch.most_together <= 3, watch.most_together
    else:
        assert watch.most_together > 3, watch.most_together
