"""One real crawl of the benchmark: the ``focused`` spider, one strategy, one topic, through the proxy.

The strategies are the AdaptiveScheduler's (``ADAPTIVE_STRATEGY``); ``stock`` is
the same spider without adaptive_spider's add-on, on Scrapy's own scheduler in
breadth-first order (FIFO queues, ``DEPTH_PRIORITY = 1``, ``ScrapyPriorityQueue``). Every crawl obeys
robots.txt, does not retry, and is stopped by the harness once it has fetched
``budget`` pages (:class:`FetchRecorder`); pages/s is measured up to that fetch.
With ``order="lockstep"`` the fetch order is pinned (see
:mod:`benchmarks.harness.lockstep`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scrapy import Request, signals
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings
from scrapy.utils.defer import _schedule_coro

from adaptive_spider.addon import SCHEDULER as ADAPTIVE_SCHEDULER
from adaptive_spider.profiles import apply_profile_settings
from benchmarks.harness.lockstep import lockstep_settings
from benchmarks.harness.metrics import Run
from benchmarks.harness.topics import Topic
from spiders.focused import FocusedSpider

STRATEGIES = ("tres", "linkgroups", "bestfirst", "gain", "bfs", "random")
STOCK = "stock"
STOCK_SCHEDULER = "scrapy.core.scheduler.Scheduler"
ORDERS = ("lockstep", "free")
BUDGET_REASON = "budget"
INTERRUPTED_REASON = "interrupted"


@dataclass
class CrawlOptions:
    """What every crawl of a run shares."""

    budget: int = 1000
    seed: int = 0
    order: str = "lockstep"
    window: int = 0  # 0: CONCURRENT_REQUESTS
    extra: dict = field(default_factory=dict)  # further Scrapy settings (--set); "{topic}" is the topic's id

    def for_topic(self, topic_id: str) -> CrawlOptions:
        """These options with ``{topic}`` in a setting's value replaced by the topic's id
        (a training file per topic, say)."""
        extra = {
            name: value.replace("{topic}", topic_id) if isinstance(value, str) else value
            for name, value in self.extra.items()
        }
        return CrawlOptions(self.budget, self.seed, self.order, self.window, extra)


def crawl_settings(strategy: str, options: CrawlOptions) -> Settings:
    """The project's default profile with the benchmark's settings for ``strategy``."""
    settings = Settings()
    settings.setmodule("settings_profiles.default", priority="project")
    # The profile's crawl settings (its add-on's) now: the stock crawl runs without add-ons
    # but with the same limits, and the lockstep window reads CONCURRENT_REQUESTS.
    apply_profile_settings(settings)
    common = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": True,
        "RETRY_ENABLED": False,
        "HTTPPROXY_ENABLED": True,
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "CLOSESPIDER_PAGECOUNT": 0,  # the harness counts pages itself (robots.txt excluded)
        "LOGSTATS_INTERVAL": 0,
    }
    if strategy == STOCK:
        scheduler = STOCK_SCHEDULER
        common.update(
            {
                "ADDONS": {},
                "DEPTH_PRIORITY": 1,
                "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
                "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
                # Scrapy's default DownloaderAwarePriorityQueue picks the domain with the fewest
                # downloads in flight: an order that follows download timing, so reruns cannot agree.
                "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
            }
        )
    else:
        scheduler = ADAPTIVE_SCHEDULER
        # The focus metrics are read at fixed budgets: the crawl must not stop itself before them.
        common.update({"ADAPTIVE_STRATEGY": strategy, "ADAPTIVE_SEED": options.seed, "ADAPTIVE_SELF_STOP": False})
    common["SCHEDULER"] = scheduler
    if options.order == "lockstep":
        window = options.window or settings.getint("CONCURRENT_REQUESTS")
        settings.update(lockstep_settings(scheduler, window), priority="cmdline")
        common.pop("SCHEDULER")
    extra = dict(options.extra)
    if strategy == STOCK:
        # Stock Scrapy is the pace a focused crawl is compared with: a page relevance model set for
        # the focused crawls (--set ADAPTIVE_RELEVANCE=...) is never read by its order, and loading
        # it there counted the model's start in stock's seconds (docs/benchmarks.md).
        extra.pop("ADAPTIVE_RELEVANCE", None)
    settings.update({**common, **extra}, priority="cmdline")
    return settings


class FetchRecorder:
    """Records a crawl's fetches in order and stops it after ``budget`` of them.

    A fetch is a response that reaches the engine (after redirects), robots.txt
    excluded. ``on_fetch(run, elapsed)`` is called after each fetch (for progress).
    """

    def __init__(self, crawler, run: Run, budget: int, on_fetch: Callable | None = None):
        self.crawler = crawler
        self.run = run
        self.budget = budget
        self.on_fetch = on_fetch
        self.started_wall = self.started_cpu = 0.0
        self.reached: tuple[float, float] | None = None
        crawler.signals.connect(self.response_received, signals.response_received)

    def start_clock(self) -> None:
        self.started_wall, self.started_cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.started_wall, time.process_time() - self.started_cpu

    def response_received(self, response, request, spider):
        if request.meta.get("dont_obey_robotstxt") and response.url.endswith("/robots.txt"):
            return
        if len(self.run.fetched) >= self.budget:
            return  # in flight when the budget was reached: not counted
        self.run.fetched.append(response.url)
        if self.on_fetch is not None:
            self.on_fetch(self.run, self.elapsed()[0])
        if len(self.run.fetched) == self.budget:
            self.reached = self.elapsed()
            stop(self.crawler, BUDGET_REASON)

    def finish(self) -> None:
        wall, cpu = self.reached or self.elapsed()
        self.run.seconds, self.run.cpu_seconds = wall, cpu
        try:
            self.crawler.stats  # noqa: B018 - Scrapy raises here until the crawl has started
        except RuntimeError:
            return  # the crawl failed before it started (a setting it refused): nothing to read
        reason = self.crawler.stats.get_value("finish_reason") or ""
        self.run.finish_reason = reason
        terms = self.crawler.stats.get_value("adaptive/expansion/terms") or ""
        self.run.learned = terms  # results.json: query_learned of each run
        self.run.failed = failed_requests(self.crawler.stats.get_stats())
        self.run.links = link_counts(self.crawler.stats.get_stats())
        self.run.model_pages = model_pages(self.crawler.stats.get_stats())
        if terms:  # what the query learned, beside the progress lines (the crawl logs at WARNING)
            print(f"{self.run.topic} {self.run.strategy}: query expansion {terms}", flush=True)


def failed_requests(stats: dict) -> dict:
    """What a crawl sent that gave no page, to its end (requests in flight at the budget included):
    ``download_errors`` (exceptions, robots.txt fetches included, not requests ignored before
    download), ``robots_txt_errors``, ``hosts_tried`` (robots.txt fetches: one per host when the
    crawl obeys robots.txt) and ``unreachable_dropped`` (links to hosts found unreachable, dropped
    untried: ``ADAPTIVE_UNREACHABLE_FAILURES``)."""
    ignored = stats.get("downloader/exception_type_count/scrapy.exceptions.IgnoreRequest", 0)
    return {
        "download_errors": stats.get("downloader/exception_count", 0) - ignored,
        "robots_txt_errors": sum(v for k, v in stats.items() if k.startswith("robotstxt/exception_count/")),
        "hosts_tried": stats.get("robotstxt/request_count", 0),
        "unreachable_dropped": stats.get("adaptive/filtered/unreachable", 0),
    }


def model_pages(stats: dict) -> dict:
    """Pages a relevance model in worker processes scored (``scored``) and pages it could not take
    (``busy``: judged by the query's score alone); empty for a crawl without one."""
    scored = stats.get("adaptive/relevance/model_scored", 0)
    busy = stats.get("adaptive/relevance/model_busy", 0)
    return {"scored": scored, "busy": busy} if scored or busy else {}


def link_counts(stats: dict) -> dict:
    """What became of the links a crawl's spider yielded, to its end: ``enqueued`` (queued by
    the scheduler: Scrapy's ``scheduler/enqueued``, the add-on's ``adaptive/enqueued``), ``dupefilter_filtered`` (refused by the scheduler's dupefilter), and the
    repeats the relevance middleware dropped before the scheduler: ``same_page_repeats`` (a
    page's repeats of its own links) and ``settled_repeats`` (links to URLs the scheduler had
    judged and no longer held). Stock Scrapy has the first two only."""
    return {
        "enqueued": stats.get("scheduler/enqueued", stats.get("adaptive/enqueued", 0)),
        "dupefilter_filtered": stats.get("dupefilter/filtered", 0),
        "same_page_repeats": stats.get("adaptive/links/same_page_repeats", 0),
        "settled_repeats": stats.get("adaptive/links/settled_repeats", 0),
    }


def stop(crawler, reason: str) -> None:
    """Close a running crawl gracefully (requests in flight finish, nothing new is released).

    A crawl still starting is closed as soon as its engine runs.
    """
    lockstep = getattr(crawler, "_harness_lockstep", None)
    if lockstep is not None:
        lockstep.stopping = True
    try:
        engine = crawler.engine
    except RuntimeError:  # Scrapy 2.19: no engine yet
        engine = None
    if engine is not None and engine.running and engine.spider is not None:
        _schedule_coro(engine.close_spider_async(reason=reason))
    elif crawler.crawling:
        from twisted.internet import reactor

        reactor.callLater(0.05, stop, crawler, reason)


async def run_crawl(
    topic: Topic,
    strategy: str,
    options: CrawlOptions,
    *,
    on_fetch: Callable | None = None,
    on_crawler: Callable | None = None,
) -> Run:
    """Crawl ``topic`` with ``strategy`` to its budget (or its end) and return what was fetched.

    ``on_crawler(crawler)`` is called before the crawl starts (to stop it from outside).
    """
    crawler = CrawlerRunner(crawl_settings(strategy, options.for_topic(topic.id))).create_crawler(FocusedSpider)
    return await crawl_to_budget(
        crawler, Run(topic.id, strategy), options.budget, topic.spider_arguments(), on_fetch, on_crawler
    )


async def replay_crawl(
    topic: Topic,
    urls: list[str],
    options: CrawlOptions,
    *,
    on_fetch: Callable | None = None,
    on_crawler: Callable | None = None,
) -> Run:
    """Stock Scrapy fetching exactly ``urls`` (another crawl's fetch order) with the same parsing.

    The spider yields every link as in a crawl and stock Scrapy's scheduler takes
    them (dupefilter, queues), but ``urls`` come first (a higher priority), and the
    crawl stops after ``len(urls)`` fetches. Its pages/s is stock Scrapy's speed on
    the very pages a strategy fetched, so the ratio of the two is the extension's
    own cost, whatever the pages' sizes.
    """
    crawler = CrawlerRunner(crawl_settings(STOCK, options.for_topic(topic.id))).create_crawler(ReplaySpider)
    arguments = {"query": topic.query, "start_urls": topic.seeds[0], "urls": urls}
    return await crawl_to_budget(crawler, Run(topic.id, f"{STOCK}-replay"), len(urls), arguments, on_fetch, on_crawler)


async def crawl_to_budget(crawler, run: Run, budget: int, arguments: dict, on_fetch=None, on_crawler=None) -> Run:
    """Run ``crawler`` (spider ``arguments``) until ``budget`` fetches or its end; ``run`` records them."""
    recorder = FetchRecorder(crawler, run, budget, on_fetch)
    if on_crawler is not None:
        on_crawler(crawler)
    recorder.start_clock()
    try:
        await crawler.crawl_async(**arguments)
    finally:
        recorder.finish()
    return run


class ReplaySpider(FocusedSpider):
    """The focused spider whose start requests are a given list of URLs, fetched before any link it follows."""

    name = "focused_replay"
    #: Above any followed link (0, lowered by depth): the list is fetched first, in order.
    LIST_PRIORITY = 1_000_000

    def __init__(self, *args, urls=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.urls = list(urls)

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, dont_filter=True, priority=self.LIST_PRIORITY)
