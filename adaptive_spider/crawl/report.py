"""CrawlReport: what a crawl did, in one table, when it closes.

Users debug a crawl's configuration with a few numbers: how many links it
found and what became of them, how many pages it fetched and how fast, which
status codes came back, how many documents were new, how many pages were
relevant. This extension counts them from Scrapy's signals and stats for any
spider, and when the spider closes

- sets them as stats under ``adaptive/report/``,
- logs a human-readable summary (``ADAPTIVE_REPORT``, on by default),
- writes them as JSON to ``ADAPTIVE_REPORT_FILE`` when that setting names a file.

Definitions (also in docs/robustness.md):

- *links collected*: requests the spider yielded (start requests included),
  counted when they reach the scheduler or when a spider middleware rule drops
  them (the relevance middleware's repeats too); redirects and retries are counted apart;
- *already seen*: requests rejected as duplicates, by the scheduler's dupefilter or
  before it by the relevance middleware (a page's repeats of its own links, and its
  links to URLs the scheduler judged and no longer holds);
- *cross-site*: collected links to another host than the page they were found on;
- *excluded by robots*: requests robots.txt forbade;
- *excluded by rules*: requests dropped by a rule (trap guards, URL pattern
  limits, DEPTH_LIMIT, URLLENGTH_LIMIT, off-site, frontier domain filters);
- *pages visited*: responses downloaded (redirects and error statuses included,
  robots.txt files not), with their status codes by class; *download errors*:
  downloads that ended in an exception (timeouts, refused connections, bodies
  over DOWNLOAD_MAXSIZE; not requests a middleware ignored on purpose);
- *documents*: items scraped; *duplicates*: items whose content SHA-1 was seen
  before (DuplicateContentPipeline);
- *harvest rate*: relevant pages / pages, a page being relevant when its
  relevance is at least ``ADAPTIVE_RELEVANT_THRESHOLD`` and it is no *copy*: a page whose
  text the crawl fetched under another URL, or in another language than the crawl's
  (``ADAPTIVE_LANGUAGE``, ``ADAPTIVE_COPY_WEIGHT``);
- *query learned*: the words the crawl learned from its best pages and added to the
  query (``adaptive_spider.relevance.expansion``: "regex" for "regular expressions"), so
  that a user sees what a query without keywords came to mean.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from datetime import datetime
from numbers import Number
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsFloat, cast

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured

from adaptive_spider.crawl.canonical import host_of
from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Stats (name -> rule) of requests dropped by a rule, after or before the scheduler.
RULE_STATS = {
    "depth/request_ignored_count": "depth_limit",
    "urllength/request_ignored_count": "url_length",
    "offsite/filtered": "offsite",
    "adaptive/filtered/domain_cap": "domain_cap",
    "adaptive/filtered/unreliable": "unreliable_domain",
    "adaptive/filtered/dead_domain": "dead_domain",
    "adaptive/filtered/unreachable": "unreachable_host",
    "adaptive/filtered/malformed_url": "malformed_url",
}
#: Of those, the ones dropped before the scheduler (so not counted as scheduled).
SPIDER_SIDE_RULES = ("depth_limit", "url_length")
TRAP_STATS_PREFIX = "adaptive/traps/"
#: Stats of the repeats the relevance middleware drops before the scheduler (duplicates all),
#: and of those the links to another host.
REPEAT_STATS = ("adaptive/links/same_page_repeats", "adaptive/links/settled_repeats")
REPEATS_CROSS_SITE_STAT = "adaptive/links/repeats_cross_site"


def status_classes(stats: dict[str, Any]) -> dict[str, int]:
    """Responses by status class (1xx-5xx), robots.txt files not included."""
    classes: Counter[str] = Counter()
    for prefix, sign in (("downloader/response_status_count/", 1), ("robotstxt/response_status_count/", -1)):
        for name, count in stats.items():
            if name.startswith(prefix) and name[len(prefix) :].isdigit():
                classes[f"{name[len(prefix)]}xx"] += sign * count
    return {f"{c}xx": classes.get(f"{c}xx", 0) for c in range(1, 6)}


class CrawlReport:
    """Extension that reports links, pages, time, statuses, documents and harvest rate."""

    def __init__(self, crawler: Crawler, config: AdaptiveConfig) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.log_summary = config.report
        self.path = config.report_file
        self.relevant_threshold = config.relevant_threshold
        self.counts: Counter[str] = Counter()
        self.item_relevance: list[float] = []
        self._referer_hosts: dict[bytes, str] = {}
        self.started: float | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlReport:
        config = AdaptiveConfig.from_settings(crawler.settings)
        if not (config.report or config.report_file):
            raise NotConfigured("ADAPTIVE_REPORT is off and ADAPTIVE_REPORT_FILE is empty")
        report = cls(crawler, config)
        connect = crawler.signals.connect
        connect(report.spider_opened, signal=signals.spider_opened)
        connect(report.request_scheduled, signal=signals.request_scheduled)
        connect(report.item_scraped, signal=signals.item_scraped)
        connect(report.spider_closed, signal=signals.spider_closed)
        return report

    # -- counting --------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.started = time.monotonic()

    def request_scheduled(self, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if meta.get("retry_times"):
            self.counts["retries"] += 1
        elif meta.get("redirect_urls"):
            self.counts["redirects"] += 1
        else:
            self.counts["scheduled_links"] += 1
            referer = request.headers.get(b"Referer")
            # A plain parse: Scrapy's weakly keyed parse cache costs more to fill than a parse,
            # and the request the scheduler queues is not the one the downloader sees.
            if referer and self._referer_host(referer) != host_of(request.url):
                self.counts["cross_site"] += 1

    def _referer_host(self, referer: bytes) -> str:
        # Many links share a referer: parse each one once.
        host = self._referer_hosts.get(referer)
        if host is None:
            if len(self._referer_hosts) > 10_000:
                self._referer_hosts.clear()
            host = self._referer_hosts[referer] = host_of(referer.decode("latin-1"))
        return host

    def item_scraped(self, item: Any, response: Response | None = None, spider: Spider | None = None) -> None:
        relevance = ItemAdapter(item).get("relevance") if ItemAdapter.is_item(item) else None
        if isinstance(relevance, Number) and not isinstance(relevance, bool):
            self.item_relevance.append(float(cast(SupportsFloat, relevance)))  # numbers.Number has no __float__

    # -- the report --------------------------------------------------------------------------
    def spider_closed(self, spider: Spider, reason: str) -> None:
        report = self.build(spider.name, reason)
        self._set_stats(report)
        if self.log_summary:
            logger.info("%s", format_report(report), extra={"spider": spider})
        if self.path:
            self._write(report)

    def build(self, spider_name: str, reason: str) -> dict[str, Any]:
        stats = self.stats.get_stats()
        rules = {rule: stats[name] for name, rule in RULE_STATS.items() if stats.get(name)}
        for name, value in stats.items():
            if name.startswith(TRAP_STATS_PREFIX):
                rules[f"trap_{name[len(TRAP_STATS_PREFIX) :]}"] = value
        dropped_by_spider_rules = sum(v for k, v in rules.items() if k in SPIDER_SIDE_RULES or k.startswith("trap_"))
        elapsed = time.monotonic() - self.started if self.started is not None else 0.0
        statuses = status_classes(stats)
        visited = sum(statuses.values())
        ignored = stats.get("downloader/exception_type_count/scrapy.exceptions.IgnoreRequest", 0)
        documents = stats.get("adaptive/documents", stats.get("item_scraped_count", 0))
        pages, relevant = self._relevance_counts(stats)
        repeats = sum(stats.get(name, 0) for name in REPEAT_STATS)
        return {
            "spider": spider_name,
            "finish_reason": reason,
            "links": {
                "collected": self.counts["scheduled_links"] + dropped_by_spider_rules + repeats,
                # Scrapy's dupefilters count what they filter (a signal per duplicate costs more).
                "already_seen": stats.get("dupefilter/filtered", 0) + repeats,
                "cross_site": self.counts["cross_site"] + stats.get(REPEATS_CROSS_SITE_STAT, 0),
                "excluded_by_robots": stats.get("robotstxt/forbidden", 0),
                "excluded_by_rules": sum(rules.values()),
                "rules": dict(sorted(rules.items())),
                "redirects": self.counts["redirects"],
                "retries": self.counts["retries"],
            },
            "pages": {
                "visited": visited,
                "status_classes": statuses,
                "download_errors": stats.get("downloader/exception_count", 0) - ignored,
            },
            "time": {
                "total_seconds": round(elapsed, 3),
                # From the total as shown, so that a reader's division gives the same figure.
                "average_per_page_seconds": round(round(elapsed, 3) / visited, 4) if visited else None,
            },
            "documents": {"total": documents, "duplicates": stats.get("adaptive/duplicates", 0)},
            "relevance": {
                "threshold": self.relevant_threshold,
                "pages": pages,
                "relevant_pages": relevant,
                "harvest_rate": round(relevant / pages, 4) if pages else None,
                "copies": {
                    "same_text": stats.get("adaptive/copies/same_text", 0),
                    "other_language": stats.get("adaptive/copies/other_language", 0),
                },
            },
            "query": {
                "learned": str(stats.get("adaptive/expansion/terms") or "").split(),
                "language": stats.get("adaptive/language") or None,
            },
        }

    def _relevance_counts(self, stats: dict[str, Any]) -> tuple[int, int]:
        """Pages scored and relevant ones: the relevance middleware's stats, else the items'."""
        if stats.get("adaptive/pages"):
            return stats["adaptive/pages"], stats.get("adaptive/relevant_pages", 0)
        scores = self.item_relevance
        return len(scores), sum(score >= self.relevant_threshold for score in scores)

    def _set_stats(self, report: dict[str, Any]) -> None:
        for section in ("links", "pages", "time", "documents", "relevance"):
            for name, value in report[section].items():
                if isinstance(value, dict):
                    for key, count in value.items():
                        self.stats.set_value(f"adaptive/report/{section}/{name}/{key}", count)
                elif value is not None:
                    self.stats.set_value(f"adaptive/report/{section}/{name}", value)

    def _write(self, report: dict[str, Any]) -> None:
        document = {**report, "stats": self.stats.get_stats()}
        try:
            Path(self.path).write_text(json.dumps(document, indent=2, default=_json_default) + "\n", encoding="utf-8")
        except OSError as exc:
            logger.error("Cannot write the crawl report to %s: %s", self.path, exc)


def _copies(copies: dict[str, int], language: str | None) -> str:
    """The report's words for the pages that were copies, when there were any."""
    same, other = copies.get("same_text", 0), copies.get("other_language", 0)
    if not same and not other:
        return ""
    return f"; copies not counted: {same} of pages fetched before, {other} not in {language or 'its language'}"


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def format_report(report: dict[str, Any]) -> str:
    """The report as a few aligned lines for the log."""
    links, pages, times = report["links"], report["pages"], report["time"]
    documents, relevance = report["documents"], report["relevance"]
    rules = ", ".join(f"{name} {count}" for name, count in links["rules"].items())
    statuses = ", ".join(f"{name} {count}" for name, count in pages["status_classes"].items() if count)
    average = times["average_per_page_seconds"]
    harvest = relevance["harvest_rate"]
    lines = [
        f"Crawl report ({report['spider']}, finish reason: {report['finish_reason']})",
        f"  links collected   {links['collected']:>8}   already seen {links['already_seen']}, "
        f"cross-site {links['cross_site']}, excluded by robots {links['excluded_by_robots']}, "
        f"excluded by rules {links['excluded_by_rules']}" + (f" ({rules})" if rules else ""),
        f"                               redirects {links['redirects']}, retries {links['retries']}",
        f"  pages visited     {pages['visited']:>8}   status {statuses or 'none'}; "
        f"download errors {pages['download_errors']}",
        f"  time              {times['total_seconds']:>7.1f}s   "
        + (f"{1000 * average:.0f} ms per page" if average is not None else "no pages"),
        f"  documents         {documents['total']:>8}   duplicates {documents['duplicates']}",
        "  harvest rate      "
        + (
            f"{harvest:>8.3f}   {relevance['relevant_pages']} relevant of {relevance['pages']} pages "
            f"(relevance >= {relevance['threshold']})"
            + _copies(relevance.get("copies", {}), report.get("query", {}).get("language"))
            if harvest is not None
            else "     n/a   no page was scored"
        ),
    ]
    learned = report.get("query", {}).get("learned")
    if learned:
        lines.append(f"  query learned     {', '.join(learned)}")
    return "\n".join(lines)
