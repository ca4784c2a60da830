"""Simulated crawls of the offline web, for fast experiments with the frontier.

The real components (AdaptiveScheduler, RelevanceMiddleware,
DomainProfileMiddleware, the focused spider's parsing) run against
``OfflineWeb.get`` instead of the network: a loop keeps ``concurrency``
requests in flight and completes them in release order, follows redirects as
Scrapy's RedirectMiddleware does, drops what robots.txt disallows and feeds
every response through the same code paths as a crawl. A 1000-page crawl takes
seconds instead of half a minute, so settings can be compared on many topics;
the figures to report still come from real crawls (``benchmarks.focus``).

    python -m benchmarks.simulate --strategies tres,bestfirst --set ADAPTIVE_QNET_GAMMA=0.5
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urljoin

from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.settings import Settings
from scrapy.statscollectors import MemoryStatsCollector

from adaptive_spider.crawl.downloadermiddlewares import DomainProfileMiddleware
from adaptive_spider.crawl.scheduler import AdaptiveScheduler
from adaptive_spider.crawl.spidermiddlewares import RelevanceMiddleware
from adaptive_spider.crawl.state import CrawlState
from benchmarks.focus import SHARED, Run, summarize
from spiders.focused import FocusedSpider


class Robots:
    """robots.txt of each host of the offline web, parsed once (as RobotsTxtMiddleware would)."""

    def __init__(self, web):
        self.web = web
        self.parsers = {}

    def allowed(self, url: str) -> bool:
        from urllib.parse import urlsplit

        from protego import Protego

        host = urlsplit(url).netloc
        if host not in self.parsers:
            answer = self.web.get(f"http://{host}/robots.txt")
            body = answer.body.decode("utf-8", "replace") if answer.status == 200 else ""
            self.parsers[host] = Protego.parse(body)
        return self.parsers[host].can_fetch(url, "adaptive_spider")


class SimulatedCrawler:
    """Just enough of a Crawler for the components: settings, stats, a spider."""

    def __init__(self, settings: Settings, in_flight):
        self.settings = settings
        self.stats = MemoryStatsCollector(self)
        self.spider = None
        self.engine = SimpleNamespace(downloader=SimpleNamespace(active=in_flight))


def simulated_crawl(web, topic: dict, settings_dict: dict, budget: int, concurrency: int = 16) -> Run:
    settings = Settings()
    settings.setmodule("adaptive_spider.settings.defaults", priority="default")
    settings.update(settings_dict, priority="cmdline")
    settings.set("ADAPTIVE_QUERY", topic["query"], "spider")
    settings.set("ADAPTIVE_KEYWORDS", topic.get("keywords", []), "spider")
    in_flight: deque = deque()
    crawler = SimulatedCrawler(settings, in_flight)
    spider = FocusedSpider(query=topic["query"], start_urls=",".join(topic["seeds"]))
    spider.crawler = crawler
    crawler.spider = spider
    from scrapy.dupefilters import RFPDupeFilter

    scheduler = AdaptiveScheduler(RFPDupeFilter(), CrawlState.of(crawler), stats=crawler.stats, crawler=crawler)
    scheduler.open(spider)
    relevance = RelevanceMiddleware(CrawlState.of(crawler))
    domains = DomainProfileMiddleware(CrawlState.of(crawler))
    for url in spider.start_urls:
        scheduler.enqueue_request(Request(url, dont_filter=True))

    robots = Robots(web)
    run = Run(topic["id"], settings_dict.get("ADAPTIVE_STRATEGY", "tres"))
    started = time.perf_counter()
    while len(run.fetched) < budget:
        while len(in_flight) < concurrency:
            request = scheduler.next_request()
            if request is None:
                break
            if not robots.allowed(request.url):
                continue
            in_flight.append(request)
        if not in_flight:
            break
        request = in_flight.popleft()
        answer = web.get(request.url)
        request.meta["download_latency"] = 0.01
        if answer.status in (301, 302) and answer.location:
            redirected = request.replace(url=urljoin(request.url, answer.location), priority=request.priority + 2)
            scheduler.enqueue_request(redirected)
            continue
        run.fetched.append(request.url)
        response_cls = HtmlResponse if answer.is_html else Response
        response = response_cls(
            request.url, status=answer.status, headers=answer.headers, body=answer.body, request=request
        )
        domains.process_response(request, response)
        if answer.status >= 400:
            continue
        relevance.process_spider_input(response)
        depth = request.meta.get("depth", 0)
        for output in relevance.process_spider_output(response, spider.parse(response)):
            if isinstance(output, Request):
                output.meta.setdefault("depth", depth + 1)
                scheduler.enqueue_request(output)
    run.seconds = time.perf_counter() - started
    run.finish_reason = "budget" if len(run.fetched) >= budget else "frontier empty"
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", default=str(SHARED / "topics-dev.json"))
    parser.add_argument("--labels", default=str(SHARED / "labels-dev.json"))
    parser.add_argument("--topic", help="comma-separated topic ids (default: all)")
    parser.add_argument("--strategies", default="tres,bestfirst")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seeds", default="0", help="comma-separated ADAPTIVE_SEED values to average over")
    parser.add_argument("--set", action="append", default=[], help="extra setting NAME=VALUE")
    args = parser.parse_args(argv)

    from benchmarks.webbench.web import OfflineWeb

    web = OfflineWeb()
    topics = json.loads(Path(args.topics).read_text())["topics"]
    labels = json.loads(Path(args.labels).read_text())
    if args.topic:
        topics = [t for t in topics if t["id"] in args.topic.split(",")]
    extra = dict(item.split("=", 1) for item in args.set)
    strategies = args.strategies.split(",")
    results: dict = {}
    for topic in topics:
        relevant = set(labels[topic["id"]])
        for strategy in strategies:
            per_seed = []
            for seed in args.seeds.split(","):
                run = simulated_crawl(
                    web,
                    topic,
                    {"ADAPTIVE_STRATEGY": strategy, "ADAPTIVE_SEED": seed, **extra},
                    args.budget,
                    args.concurrency,
                )
                per_seed.append(run.metrics(relevant, args.budget))
            metrics = {key: _mean([m[key] for m in per_seed]) for key in per_seed[0]}
            metrics["budget"] = args.budget
            results.setdefault(topic["id"], {})[strategy] = metrics
            print(
                f"{topic['id']:<20} {strategy:<11} N50 {metrics['N50']} N90 {metrics['N90']} R@1000 {metrics['R@1000']}",
                flush=True,
            )
    print(summarize(results, strategies))
    return 0


def _mean(values):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return round(statistics.mean(values), 3)
    if all(v is None or isinstance(v, int) for v in values):
        return round(statistics.mean(v if v is not None else 1001 for v in values), 1)
    return values[0]


if __name__ == "__main__":
    sys.exit(main())
