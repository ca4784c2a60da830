"""The crawl report: its figures agree with what the server saw and what the crawl
yielded, it is logged and written as JSON, and it works for any spider."""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import urlsplit

import scrapy
from scrapy.settings import Settings

from adaptive_spider.crawl.report import CrawlReport, format_report
from adaptive_spider.demo.site import DemoSite, serve
from tests.conftest import TEST_SETTINGS, crawl_test, run_crawl

NO_RESPONSE = ("/hang.html", "/huge.html")  # a timeout and a cancelled body: exceptions, not responses


def test_report_agrees_with_the_server_and_the_items(trap_crawl):
    site, url, log, items, report = trap_crawl
    targets = [target for _, target in site.log if urlsplit(target).path != "/robots.txt"]
    answered = [t for t in targets if urlsplit(t).path not in NO_RESPONSE]
    expected_classes = Counter(f"{site.respond(t)[0] // 100}xx" for t in answered)
    pages, links, documents = report["pages"], report["links"], report["documents"]
    assert pages["visited"] == len(answered)
    assert pages["status_classes"] == {f"{c}xx": expected_classes.get(f"{c}xx", 0) for c in range(1, 6)}
    assert pages["download_errors"] == len(targets) - len(answered)
    assert documents["total"] == len(items)
    relevant = sum(item["relevance"] >= report["relevance"]["threshold"] for item in items)
    assert report["relevance"]["relevant_pages"] == relevant
    assert report["relevance"]["harvest_rate"] == round(relevant / len(items), 4)
    assert links["excluded_by_robots"] == 3
    assert links["rules"]["trap_calendar"] > 0 and links["excluded_by_rules"] == sum(links["rules"].values())
    assert links["redirects"] == 7  # loop: a -> b; chain: 0 -> 1 ... -> 5 (b -> a is a duplicate)
    assert links["collected"] > links["already_seen"] > 0
    assert report["time"]["average_per_page_seconds"] == round(report["time"]["total_seconds"] / pages["visited"], 4)
    assert report["finish_reason"] == "finished"


def test_report_is_logged_and_in_the_stats(trap_crawl):
    site, url, log, items, report = trap_crawl
    assert "Crawl report (focused, finish reason: finished)" in log
    summary = log[log.index("Crawl report") :]
    for label in ("links collected", "pages visited", "time", "documents", "harvest rate", "excluded by robots 3"):
        assert label in summary
    assert report["stats"]["adaptive/report/pages/visited"] == report["pages"]["visited"]
    assert report["stats"]["adaptive/report/links/excluded_by_robots"] == 3


class PlainSpider(scrapy.Spider):
    """A spider that knows nothing of adaptive_spider: dict items with a relevance score."""

    name = "plain"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "relevance": 1.0 if "astronomy" in response.url else 0.0}
        yield from response.follow_all(css="a", callback=self.parse)


@crawl_test
async def test_report_works_for_any_spider(tmp_path):
    site = DemoSite(seed=4, hubs_per_topic=1, articles_per_hub=3)
    server, url = serve(site)
    path = tmp_path / "report.json"
    settings = Settings()
    settings.update({**TEST_SETTINGS, "EXTENSIONS": {CrawlReport: 0}, "ADAPTIVE_REPORT_FILE": str(path)})
    try:
        result = await run_crawl(PlainSpider, settings, url=url)
    finally:
        server.shutdown()
    report = json.loads(path.read_text())
    assert report["spider"] == "plain" and report["finish_reason"] == "finished"
    assert report["pages"]["visited"] == len(result.fetched) == len(site.pages)
    assert report["documents"]["total"] == len(result.items)
    relevant = sum(item["relevance"] >= 0.35 for item in result.items)
    assert report["relevance"]["relevant_pages"] == relevant > 0
    assert report["links"]["already_seen"] > 0  # Scrapy's own scheduler and dupefilter
    assert "adaptive/pages" not in report["stats"]


def test_summary_reads_as_a_table():
    report = {
        "spider": "s",
        "finish_reason": "closespider_pagecount",
        "links": {
            "collected": 10,
            "already_seen": 4,
            "cross_site": 1,
            "excluded_by_robots": 2,
            "excluded_by_rules": 1,
            "rules": {"trap_calendar": 1},
            "redirects": 0,
            "retries": 0,
        },
        "pages": {
            "visited": 3,
            "status_classes": {"1xx": 0, "2xx": 2, "3xx": 0, "4xx": 1, "5xx": 0},
            "download_errors": 0,
        },
        "time": {"total_seconds": 1.5, "average_per_page_seconds": 0.5},
        "documents": {"total": 2, "duplicates": 1},
        "relevance": {"threshold": 0.35, "pages": 2, "relevant_pages": 1, "harvest_rate": 0.5},
    }
    lines = format_report(report).splitlines()
    assert lines[0] == "Crawl report (s, finish reason: closespider_pagecount)"
    assert "excluded by rules 1 (trap_calendar 1)" in lines[1]
    assert "status 2xx 2, 4xx 1" in lines[3] and "500 ms per page" in lines[4]
    assert "duplicates 1" in lines[5] and "0.500" in lines[6]
    assert len(lines) == 7  # nothing learned: no line for it
    report["query"] = {"learned": ["regex", "loglevel"]}
    assert format_report(report).splitlines()[7] == "  query learned     regex, loglevel"
    report["relevance"]["copies"] = {"same_text": 4, "other_language": 2}
    report["query"]["language"] = "en"
    assert (
        format_report(report)
        .splitlines()[6]
        .endswith("(relevance >= 0.35); copies not counted: 4 of pages fetched before, 2 not in en")
    )
