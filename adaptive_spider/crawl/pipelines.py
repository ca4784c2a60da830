"""Item pipelines of a focused crawl.

:class:`SufficiencyPipeline` feeds every page the crawl analysed into the
crawl's knowledge base statistics (:mod:`adaptive_spider.sufficiency.estimator`)
and stops the crawl when it knows enough: after each page it asks the self-stop's
rule (:mod:`adaptive_spider.sufficiency.stopping`: ``sufficient``, ``plateau``,
``no_promising_links``, none before the crawl's best pages settle), giving it what
only a crawl knows: whether the page was promising and whether the frontier's best
expected gain (:mod:`adaptive_spider.sufficiency.linkvalues`, queued, ready and
in-flight links) is low. ``ADAPTIVE_STOP_CRITERIA`` chooses the criteria and
``ADAPTIVE_SELF_STOP = False`` turns them all off, so that only Scrapy's
``CLOSESPIDER_*`` budgets (which always apply) end the crawl. Raising CloseSpider in
a pipeline does not stop Scrapy 2.19, so the pipeline asks the engine to close the
spider.

It also logs a progress line every ``ADAPTIVE_SUFFICIENCY_LOG_INTERVAL`` seconds
(``LOGSTATS_INTERVAL`` by default), puts a summary in the stats under
``adaptive/sufficiency/`` at close and, with ``ADAPTIVE_SUFFICIENCY_REPORT``,
writes a JSON report (``auto``: next to the feed file).

The knowledge base is the crawl's pages, not its items: the pipeline listens to
:meth:`CrawlState.on_page <adaptive_spider.crawl.state.CrawlState.on_page>` and
takes each HTML page once, as the RelevanceMiddleware analysed it (fields,
relevance, content hash, term counts), before the spider's callback runs. So the
self-stop works for any spider, one that yields its own items or none at all.
It is still an item pipeline because that is where a project lists it and where
Scrapy opens and closes it with the spider.

Items: the page item of an analysed page (the ``focused`` spider's PageItem, or
any item with ``url`` and a numeric ``relevance`` for that URL) adds nothing, the
page is in already; a page item for a URL the crawl did not analyse (a project
without the RelevanceMiddleware, pages a spider builds itself) is added from the
item, as a saved feed is offline. Template documents (items with a ``template``
key) and other items pass through untouched.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro

from adaptive_spider.crawl.engine_internals import requests_in_progress
from adaptive_spider.crawl.state import CrawlState, PageAnalysis
from adaptive_spider.sufficiency.pages import KnowledgePage, is_page_item
from adaptive_spider.sufficiency.stopping import StopRule

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.utils.asyncio import AsyncioLoopingCall
    from twisted.internet.defer import Deferred
    from twisted.internet.task import LoopingCall

logger = logging.getLogger(__name__)

STATS_PREFIX = "adaptive/sufficiency"
_AUTO = ("auto", "true", "yes", "1")
#: URLs of the latest analysed pages, whose page items are not added again. A spider
#: yields a page's item while the page is parsed, so a recent window is enough, and a
#: long crawl does not keep every URL.
RECENT_PAGES = 4096


class SufficiencyPipeline:
    """Keeps the knowledge base's sufficiency statistics and stops the crawl when it knows enough."""

    def __init__(self, crawler: Crawler, state: CrawlState, log_interval: float = 60.0) -> None:
        self.crawler = crawler
        self.state = state
        self.config = state.config
        self.knowledge = state.knowledge
        self.estimator = state.knowledge.estimator
        self.log_interval = log_interval
        self.stop_reason: str | None = None
        #: Pages in the knowledge base when the self-stop decided (pages still in flight
        #: then are fetched and added before the spider closes).
        self.stop_page: int | None = None
        self.rule = StopRule(state.config, self.estimator)
        self._closing: Deferred[None] | None = None
        self._task: AsyncioLoopingCall | LoopingCall | None = None
        # URL -> None of pages added from the crawl's analysis (an ordered set, bounded).
        self._analysed: OrderedDict[str, None] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SufficiencyPipeline:
        state = CrawlState.of(crawler)
        if not len(state.terms):
            raise NotConfigured("SufficiencyPipeline: the query has no terms (ADAPTIVE_QUERY or -a query=...)")
        interval = state.config.sufficiency_log_interval or crawler.settings.getfloat("LOGSTATS_INTERVAL")
        pipeline = cls(crawler, state, interval)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        state.on_page(pipeline.page_analysed)
        return pipeline

    # -- lifecycle ---------------------------------------------------------------------------
    def open_spider(self, spider: Spider | None = None) -> None:
        if self.log_interval > 0:
            self._task = create_looping_call(self.log_progress)
            self._task.start(self.log_interval, now=False)

    def page_analysed(self, analysis: PageAnalysis) -> None:
        """A page the crawl fetched and analysed (CrawlState's page listener): into the
        knowledge base, whatever the spider yields for it."""
        url = analysis.fields.url
        self._analysed[url] = None
        self._analysed.move_to_end(url)
        if len(self._analysed) > RECENT_PAGES:
            self._analysed.popitem(last=False)
        self.add_page(KnowledgePage.from_analysis(analysis.fields, analysis.relevance, analysis.sha1, analysis.counts))

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not ItemAdapter.is_item(item):
            return item
        adapter = ItemAdapter(item)
        if not is_page_item(adapter) or str(adapter.get("url") or "") in self._analysed:
            return item  # not a page, or its page is in the knowledge base already
        self.add_page(KnowledgePage.from_item(adapter))
        return item

    def add_page(self, page: KnowledgePage) -> None:
        """One page into the knowledge base, then the stop criteria."""
        self.estimator.update(page)
        if logger.isEnabledFor(logging.DEBUG):
            gain, url = self.best_link() if self._has_link_values() else (0.0, None)
            logger.debug(
                "Sufficiency after %s (relevance %.3f): IS %.3f, best gain %.3f (%s)",
                page.fields.url,
                page.relevance,
                self.estimator.metrics().sufficiency,
                gain,
                url,
                extra={"spider": self.crawler.spider},
            )
        if self.config.self_stop and self._closing is None:
            reason = self.stop_criterion(page.fields.url)
            if reason:
                self.stop(reason)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._task is not None and self._task.running:
            self._task.stop()
        summary = self.summary()
        stats = self.crawler.stats
        for key, value in summary.items():
            stats.set_value(f"{STATS_PREFIX}/{key}", value)
        logger.info("Sufficiency at close (%s): %s", reason, self.progress_text(summary), extra={"spider": spider})
        path = self.report_path()
        if path is not None:
            self.write_report(path, reason, summary)

    # -- stopping ----------------------------------------------------------------------------
    def stop_criterion(self, url: str) -> str | None:
        """The stop rule's answer after the page at ``url`` (asked once per page)."""
        config = self.config
        has_links = self._has_link_values()
        released = self.knowledge.links.released_gain(url) if has_links else None
        promising = not has_links or (released is not None and released >= config.stop_min_gain)
        low_gain = (
            "no_promising_links" in config.stop_criteria and has_links and self.best_gain() < config.stop_min_gain
        )
        held_before = self.rule.held
        reason = self.rule.after_page(promising=promising, low_gain=low_gain)
        if held_before is None and self.rule.held is not None:
            logger.info(
                "Sufficiency: %s holds after %d pages, but the best pages changed at page %d; "
                "not stopping before page %d unless they change again (ADAPTIVE_STOP_SETTLE), "
                "nor while pages near the best still come at their pace (ADAPTIVE_STOP_HARVEST_WINDOW)",
                self.rule.held,
                self.estimator.n_pages,
                self.estimator.best_changed_at,
                self.rule.settled_page(),
                extra={"spider": self.crawler.spider},
            )
        return reason

    def stop(self, reason: str) -> None:
        """Close the spider through the engine with ``reason`` as its finish_reason."""
        self.stop_reason = reason
        self.stop_page = self.estimator.n_pages
        logger.info(
            "Sufficiency: stopping the crawl (%s): %s",
            reason,
            self.progress_text(self.summary()),
            extra={"spider": self.crawler.spider},
        )
        self._closing = deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))
        self._closing.addErrback(
            lambda failure: logger.error("Sufficiency: could not close the spider: %s", failure.getErrorMessage())
        )

    def _has_link_values(self) -> bool:
        """Whether a scheduler keeps link values (the AdaptiveScheduler); without one there
        is no frontier to judge."""
        return self.knowledge.links.added > 0

    def best_gain(self) -> float:
        return self.best_link()[0]

    def best_link(self) -> tuple[float, str | None]:
        """Best expected gain of a queued, ready or in-flight link, and its URL."""
        return self.knowledge.links.best_pending_link(self.in_flight())

    def in_flight(self) -> list[Request]:
        """Requests the engine has taken from the scheduler and not finished with:
        downloading, or downloaded and waiting to be parsed (their pages may still
        bring what the query lacks)."""
        requests = requests_in_progress(self.crawler)
        return list(requests or ())

    # -- progress and reports ------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        summary = self.estimator.metrics().as_dict()
        summary["best_gain"] = round(self.best_gain(), 4) if self._has_link_values() else None
        summary["best_changed_at"] = self.estimator.best_changed_at
        if self.stop_reason:
            summary["stop_reason"] = self.stop_reason
            summary["stop_page"] = self.stop_page
        return summary

    def progress_text(self, summary: dict[str, Any]) -> str:
        best = summary.get("best_gain")
        return (
            f"{summary['pages']} pages ({summary['relevant_pages']} relevant, harvest rate "
            f"{summary['harvest_rate']:.2f}), "
            f"coverage {summary['coverage']:.2f}, consistency {summary['consistency']:.2f}, "
            f"saturation {summary['saturation']:.2f}, confidence (IS) {summary['sufficiency']:.2f}"
            f"/{self.config.stop_threshold:.2f}, best frontier gain {'n/a' if best is None else f'{best:.3f}'}, "
            f"best pages unchanged since page {summary['best_changed_at']}"
        )

    def log_progress(self) -> None:
        logger.info("Sufficiency: %s", self.progress_text(self.summary()), extra={"spider": self.crawler.spider})

    def report_path(self) -> Path | None:
        """Where the JSON report goes: ADAPTIVE_SUFFICIENCY_REPORT, or next to the feed for ``auto``."""
        setting = self.config.sufficiency_report
        if not setting:
            return None
        if setting.lower() not in _AUTO:
            return Path(setting)
        for uri in self.crawler.settings.getdict("FEEDS"):
            uri = str(uri)
            if "%(" in uri or ("://" in uri and not uri.startswith("file://")):
                continue
            feed = Path(uri.removeprefix("file://"))
            return feed.with_name(feed.name.split(".")[0] + ".sufficiency.json")
        return Path("sufficiency.json")

    def write_report(self, path: Path, reason: str, summary: dict[str, Any]) -> None:
        config = self.config
        report = {
            "query": config.query,
            "keywords": list(config.keywords),
            "finish_reason": reason,
            "stop_reason": self.stop_reason,
            "summary": summary,
            "stop_settings": {
                "self_stop": config.self_stop,
                "criteria": list(config.stop_criteria),
                "threshold": config.stop_threshold,
                "plateau_window": config.stop_plateau_window,
                "plateau_epsilon": config.stop_plateau_epsilon,
                "min_gain": config.stop_min_gain,
                "patience": config.stop_patience,
                "min_pages": config.stop_min_pages,
                "best_pages": config.stop_best_pages,
                "settle": config.stop_settle,
                "harvest_window": config.stop_harvest_window,
                "harvest_drop": config.stop_harvest_drop,
            },
            **self.estimator.report(),
            "sufficiency_by_page": [round(value, 4) for value in self.estimator.history],
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(report, indent=1), encoding="utf-8")
        except OSError as exc:
            logger.error("Sufficiency: could not write the report %s: %s", path, exc)
            return
        logger.info("Sufficiency: report written to %s", path)
