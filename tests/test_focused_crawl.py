"""Real crawls of the generated demo site through Scrapy: the focused spider,
the learned order against breadth-first, and pages that must not stop a crawl."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl

PROJECT = Path(__file__).resolve().parent.parent


def relevant_urls(site, base_url):
    return {base_url.rstrip("/") + path for path in site.relevant}


@crawl_test
async def test_tres_reaches_the_relevant_region_far_sooner_than_bfs(demo_site):
    site, url = demo_site
    relevant = relevant_urls(site, url)
    reached = {}
    for strategy in ("bfs", "tres"):
        settings = project_settings(ADAPTIVE_STRATEGY=strategy, CLOSESPIDER_PAGECOUNT=len(site.pages))
        result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
        reached[strategy] = result.fetches_to_reach(relevant, 0.5)
    assert reached["tres"] is not None and reached["bfs"] is not None
    # bfs needs most of the site before half the region; tres goes there early.
    assert reached["tres"] * 3 < reached["bfs"], reached


@crawl_test
async def test_page_items_carry_every_field(demo_site):
    site, url = demo_site
    # One request at a time: the scores' term statistics follow the fetch order, which then
    # does not depend on the machine's load.
    settings = project_settings(CLOSESPIDER_PAGECOUNT=200, CONCURRENT_REQUESTS=1)
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    assert len(result.items) >= 190
    item = next(i for i in result.items if i["depth"] >= 1)
    assert set(item.keys()) == {
        "url",
        "title",
        "headings",
        "text",
        "depth",
        "status",
        "relevance",
        "sha1",
        "fetched_at",
        "referer",
    }
    assert item["status"] == 200 and 0.0 <= item["relevance"] <= 1.0 and len(item["sha1"]) == 40
    assert item["referer"].startswith(url)
    relevant = relevant_urls(site, url)
    scores_in = [i["relevance"] for i in result.items if i["url"] in relevant]
    scores_out = [i["relevance"] for i in result.items if i["url"] not in relevant]
    assert scores_in and min(scores_in) > max(scores_out)
    stats = result.stats
    assert stats["adaptive/released"] >= 190 and stats["adaptive/enqueued"] > stats["adaptive/released"]


@pytest.fixture
def odd_site():
    site = DemoSite(seed=1, hubs_per_topic=1, articles_per_hub=3)
    site.extra.update(
        {
            "/data.json": (200, "application/json", b'{"not": "html"}'),
            "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(200)),
            "/broken.html": (200, "text/html", b"<html><body><div><p>unclosed <a href='/more/'>astronomy"),
            "/binary.html": (200, "text/html", bytes(range(256)) * 20),
            "/error.html": (500, "text/html", b"<html>oops</html>"),
        }
    )
    links = "".join(f'<a href="{p}">{p}</a>' for p in (*site.extra, "/missing.html"))
    site.pages["/"] = site.pages["/"].replace("</body>", links + "</body>")
    server, url = serve(site)
    yield site, url
    server.shutdown()


@crawl_test
async def test_odd_pages_never_stop_the_crawl(odd_site):
    site, url = odd_site
    settings = project_settings(RETRY_ENABLED=False)
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    stats = result.stats
    assert stats["finish_reason"] == "finished"
    assert stats["downloader/response_status_count/404"] == 1
    assert stats["downloader/response_status_count/500"] == 1
    assert "spider_exceptions" not in " ".join(stats)
    urls = {item["url"] for item in result.items}
    assert url + "broken.html" in urls  # malformed HTML is still a page
    assert url + "data.json" not in urls and url + "image.png" not in urls
    assert len(urls) == len(site.pages) + 2  # every generated page, plus broken and binary-as-html


def run_scrapy(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=PROJECT, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "start_urls=http://127.0.0.1:9/"], "query: missing"),
        (["-a", "query=  ", "-a", "start_urls=http://127.0.0.1:9/"], "query: missing"),
        (["-a", "query=x"], "start_urls: missing"),
        (["-a", "query=x", "-a", "start_urls=not-a-url"], "start_urls: not an absolute"),
        (
            ["-a", "query=x", "-a", "start_urls=http://127.0.0.1:9/", "-s", "ADAPTIVE_STRATEGY=magic"],
            "ADAPTIVE_STRATEGY: unknown",
        ),
        (
            ["-a", "query=x", "-a", "start_urls=http://127.0.0.1:9/", "-s", "ADAPTIVE_PAGES_PER_ROUND=-3"],
            "ADAPTIVE_PAGES_PER_ROUND: must be",
        ),
    ],
)
def test_bad_arguments_fail_at_start_with_one_line(args, message):
    done = run_scrapy("crawl", "focused", *args)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert message in last
    assert "Traceback" not in done.stderr
