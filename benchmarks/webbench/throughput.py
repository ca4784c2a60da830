"""How fast stock Scrapy crawls the offline web through its server.

Starts the server in its own process (as users run it), then crawls from the hub
with a minimal stock spider that follows every link (default settings, robots.txt
obeyed, ``http_proxy``/``https_proxy`` pointing at the server) until it has
``--pages`` responses, and prints responses per second::

    python -m benchmarks.webbench.throughput --pages 1000
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor

SERVER_MODULE = "benchmarks.webbench.server"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


class FollowAllSpider(scrapy.Spider):
    """Stock Scrapy: follow every link Scrapy's default LinkExtractor finds.

    Given ``urls``, it fetches exactly those instead (still extracting the links of
    each page, not following them): the same work on every run, to compare servers.
    """

    name = "follow_all"

    def __init__(self, start_url: str = "http://hub.test/", urls: list[str] | None = None, **kwargs):
        super().__init__(**kwargs)
        self.start_url = start_url
        self.urls = urls
        self.link_extractor = LinkExtractor()

    async def start(self):
        for url in self.urls or [self.start_url]:
            yield scrapy.Request(url)

    def parse(self, response):
        if isinstance(response, TextResponse):
            links = self.link_extractor.extract_links(response)
            if self.urls is None:
                for link in links:
                    yield response.follow(link.url)


@contextmanager
def server_process(extra_args: list[str]) -> Iterator[str]:
    """Run the offline web's server in a child process; yields its proxy URL.

    Once it has ended, its CPU time counts in ``cpu_seconds(resource.RUSAGE_CHILDREN)``.
    """
    command = [sys.executable, "-m", SERVER_MODULE, "--port", "0", *extra_args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    try:
        first_line = process.stdout.readline()
        if "http_proxy=" not in first_line:
            raise RuntimeError(f"offline web server did not start: {first_line.strip() or 'no output'}")
        yield first_line.split("http_proxy=", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=10)


def fixed_urls(start: str, pages: int, folder: str | None, host: str) -> list[str]:
    """The first ``pages`` http URLs a breadth-first crawl of the offline web fetches."""
    from benchmarks.webbench.linkgraph import crawl as breadth_first
    from benchmarks.webbench.web import OfflineWeb

    web = OfflineWeb.from_folder(folder, host) if folder else OfflineWeb()
    return list(breadth_first(web, start, max_fetches=pages).status)


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def crawl(proxy_url: str, pages: int, start_url: str, urls: list[str] | None = None) -> dict:
    """Crawl through ``proxy_url`` until ``pages`` responses; returns Scrapy's stats."""
    os.environ["http_proxy"] = os.environ["https_proxy"] = proxy_url
    os.environ.pop("no_proxy", None)
    process = CrawlerProcess(
        {
            "ROBOTSTXT_OBEY": True,
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "CLOSESPIDER_PAGECOUNT": pages,
            "LOG_LEVEL": "CRITICAL",  # https links fail by design (CONNECT refused): no tracebacks
        }
    )
    crawler = process.create_crawler(FollowAllSpider)
    process.crawl(crawler, start_url=start_url, urls=urls)
    process.start()
    return crawler.stats.get_stats()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stock Scrapy's crawl speed through the offline web's server.")
    parser.add_argument("--pages", type=int, default=1000, help="stop after this many responses (default 1000)")
    parser.add_argument("--start", default="http://hub.test/", help="start URL (default: the hub)")
    parser.add_argument("--folder", help="serve this folder of HTML files instead of the Debian packages")
    parser.add_argument("--host", default="site.test", help="host name of --folder")
    parser.add_argument(
        "--fixed",
        action="store_true",
        help="fetch the first --pages URLs of a breadth-first crawl instead of following links: "
        "the same pages on every run, to compare servers",
    )
    args = parser.parse_args(argv)
    urls = fixed_urls(args.start, args.pages, args.folder, args.host) if args.fixed else None
    server_args = ["--folder", args.folder, "--host", args.host] if args.folder else []
    server_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    with server_process(server_args) as proxy_url:
        crawler_cpu = cpu_seconds(resource.RUSAGE_SELF)
        stats = crawl(proxy_url, args.pages, args.start, urls)
        crawler_cpu = cpu_seconds(resource.RUSAGE_SELF) - crawler_cpu
    server_cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - server_cpu
    responses = stats.get("response_received_count", 0)
    elapsed = stats.get("elapsed_time_seconds") or float("nan")
    statuses = {
        key.rsplit("/", 1)[1]: value
        for key, value in sorted(stats.items())
        if key.startswith("downloader/response_status_count/")
    }
    print(
        f"stock Scrapy through the offline web: {responses} responses in {elapsed:.1f} s "
        f"= {responses / elapsed:.1f} pages/s"
    )
    print(
        f"  statuses {statuses}, download errors {stats.get('downloader/exception_count', 0)} "
        "(https links: CONNECT refused), "
        f"finish reason {stats.get('finish_reason')}"
    )
    print(
        f"  CPU: Scrapy {crawler_cpu:.1f} s ({responses / crawler_cpu:.0f} responses per CPU second), "
        f"server {server_cpu:.1f} s ({100 * server_cpu / elapsed:.0f}% of one core)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
