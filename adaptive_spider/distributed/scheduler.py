"""DistributedScheduler: the AdaptiveScheduler of one worker of a shared crawl.

Requests a worker's spider yields pass the shared duplicate filter
(scrapy-redis' ``RFPDupeFilter``; start requests too, so a start URL is
fetched by one worker only), get their features from their context as in the
AdaptiveScheduler, are scored by the worker's learned model and go to the
shared sorted set in Redis. When its downloader asks for work, a worker takes
the ``ADAPTIVE_DISTRIBUTED_BATCH`` best requests of the crawl into its local
frontier, whose strategy and domain filters choose the release order with
current features, exactly as in a single-process crawl.

A worker with nothing to do looks for work every ``ADAPTIVE_DISTRIBUTED_POLL_INTERVAL``
seconds and wakes its engine when some appears. The crawl is done when the
shared queue is empty and every live worker is idle; the first worker to stop
the crawl (done, a crawl-wide page budget, or any close reason other than a
shutdown of that worker alone) records the reason once, and the others follow.
When a worker leaves a crawl that goes on, the requests it held return to the
shared queue; the last worker out of a stopped crawl deletes its keys unless
``SCHEDULER_PERSIST`` is set.

Why one module of some 400 lines: it is the AdaptiveScheduler's counterpart on Redis (the
shared queue's publish, claim and wake-up cycle); its payloads are apart (sharedentries).
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import socket
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro

from adaptive_spider.crawl.scheduler import AdaptiveScheduler
from adaptive_spider.crawl.state import PARENT_KEY, CrawlState, domain_of
from adaptive_spider.distributed.coordination import WorkerRegistry
from adaptive_spider.distributed.queue import CrawlKeys, SharedQueue
from adaptive_spider.distributed.sharedentries import entry_payload, entry_scores
from adaptive_spider.distributed.starturls import crawl_prefix
from adaptive_spider.distributed.sync import (
    DomainProfileSync,
    ModelSync,
    TermStatisticsSync,
)
from adaptive_spider.extras import missing_extra_message
from adaptive_spider.frontier.features import FEATURE_NAMES, STATIC_NAMES
from adaptive_spider.frontier.linkevidence import record_outlink
from adaptive_spider.settings.config import ConfigError

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from adaptive_spider.sufficiency.linkvalues import LinkValues

try:
    from redis.exceptions import RedisError
    from scrapy_redis.connection import get_redis_from_settings
    from scrapy_redis.dupefilter import RFPDupeFilter
except ImportError:  # the optional "distributed" extra is not installed
    get_redis_from_settings = None
    # A name bound to one of two classes is untypable; without redis, from_crawler refuses to build the scheduler.
    RedisError = OSError  # type: ignore[misc,assignment]

logger = logging.getLogger(__name__)

#: Close reasons that take one worker out of the crawl without stopping the others.
WORKER_ONLY_REASONS = frozenset({"shutdown", "redis_unavailable"})
#: Outgoing requests are scored and sent to Redis in batches of at most this many.
OUTBOX_SIZE = 256
_STATIC_COLUMNS = [FEATURE_NAMES.index(name) for name in STATIC_NAMES]


def worker_id() -> str:
    # Host and pid say where a worker runs; the suffix keeps ids apart where
    # hosts share a name and pids repeat (containers).
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class DistributedScheduler(AdaptiveScheduler):
    """An AdaptiveScheduler whose frontier, duplicate filter, domain profiles and
    model are shared with the other workers of the crawl through Redis."""

    def __init__(
        self,
        server: Any,
        dupefilter: Any,
        state: CrawlState,
        keys: CrawlKeys,
        *,
        persist: bool = False,
        flush_on_start: bool = False,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
    ) -> None:
        super().__init__(dupefilter, state=state, jobdir=None, stats=stats, crawler=crawler)
        self.server = server
        self.keys = keys
        self.worker = worker_id()
        self.persist = persist
        self.flush_on_start = flush_on_start
        self.queue = SharedQueue(server, keys, self.worker)
        self.registry = WorkerRegistry(server, keys, self.worker, self.config.distributed_worker_timeout)
        self.domain_sync = DomainProfileSync(server, keys)
        self.term_sync = TermStatisticsSync(server, keys)
        self.model_sync = ModelSync(server, keys, self.worker)
        self.outbox: list[tuple] = []
        self.seen_here: set[str] = set()
        self.rng = np.random.default_rng(self.config.seed)
        self.loop = create_looping_call(self._tick)
        self.joined = False
        self.starving = False
        self.stopping = False
        self.last_sync = 0.0
        self._wake_request: Request | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DistributedScheduler:
        if get_redis_from_settings is None:
            raise NotConfigured(missing_extra_message("distributed", "DistributedScheduler"))
        settings = crawler.settings
        state = CrawlState.of(crawler)
        keys = CrawlKeys(crawl_prefix(crawler))
        server = get_redis_from_settings(settings)
        return cls(
            server,
            RFPDupeFilter(server, key=keys.dupefilter, debug=settings.getbool("DUPEFILTER_DEBUG")),
            state,
            keys,
            persist=settings.getbool("SCHEDULER_PERSIST"),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START"),
            stats=crawler.stats,
            crawler=crawler,
        )

    def _link_values(self) -> LinkValues | None:
        """None: a worker keeps no sufficiency link values (its frontier holds a share of
        the crawl's queue only; the sufficiency stop judges the links of a whole frontier)."""
        return None

    # -- lifecycle -----------------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        self.state.attach_frontier(self.frontier)
        if self._seen_urls is not None:  # a page's links to URLs met before are dropped spider-side
            self.state.is_settled_url = self._is_settled
        try:
            if self.flush_on_start:
                self._delete_keys()
            stop = self.registry.stop_record()
            if stop is not None:
                logger.error(
                    "The crawl %s already stopped (%s); start a new one with another ADAPTIVE_DISTRIBUTED_KEY "
                    "or -s SCHEDULER_FLUSH_ON_START=True",
                    self.keys.prefix,
                    stop["reason"],
                    extra={"spider": spider},
                )
                raise CloseSpider(stop["reason"])
            self.registry.join(self.config.query)
            self.joined = True
        except RedisError as exc:
            logger.error("Cannot use Redis for the distributed crawl: %s", exc, extra={"spider": spider})
            raise CloseSpider("redis_unavailable") from None
        except ConfigError as exc:
            logger.error("%s", exc, extra={"spider": spider})
            raise CloseSpider("bad_configuration") from None
        if self.crawler is not None:
            self.crawler.signals.connect(self._spider_idle, signals.spider_idle)
            self.crawler.signals.connect(self._response_received, signals.response_received)
        self.loop.start(self.config.distributed_poll_interval, now=False)
        self._set_stat("worker", self.worker)
        logger.info(
            "DistributedScheduler: worker %s joined crawl %s (Redis key prefix; strategy %s, %d queued)",
            self.worker,
            self.keys.prefix,
            self.config.strategy,
            len(self.queue),
            extra={"spider": spider},
        )
        return None

    def close(self, reason: str) -> Any:
        self.state.is_settled_url = None
        if self.loop.running:
            self.loop.stop()
        if not self.joined:  # refused at open: nothing of the crawl to record or give back
            return None
        try:
            stop = self.registry.stop_record()
            if stop is None and reason not in WORKER_ONLY_REASONS:
                stop = self._record_stop(reason)
            if stop is None or self.persist:
                self._return_held_requests()
            self._sync()
            remaining = self.registry.leave()
            if stop is not None and remaining == 0 and not self.persist:
                self._delete_keys()
        except RedisError as exc:
            logger.error("Redis failed while leaving the crawl: %s", exc, extra={"spider": self.spider})
        self.counts.set_frontier(self.frontier.stats())
        # Not the dupefilter's close(): scrapy-redis' would delete the crawl's fingerprints.
        return None

    def __len__(self) -> int:
        return super().__len__() + len(self.outbox)

    def has_pending_requests(self) -> bool:
        if len(self):
            return True
        if self.stopping:
            return False
        try:
            return len(self.queue) > 0
        except RedisError:
            return False

    # -- enqueue: to the shared queue ------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if request is self._wake_request:
            return True  # already held locally; engine.crawl() only woke the engine
        if self._is_malformed(request):
            return False
        if self._shared_duplicate(request):
            self.df.log(request, cast("Spider", self.spider))  # open() set it before any request
            # scrapy-redis' filter does not count what it filters; Scrapy's own does.
            if self.stats is not None:
                self.stats.inc_value("dupefilter/filtered")
            return False
        evidence = self._link_evidence(request)
        record_outlink(self.state.pages, request, evidence)
        self.outbox.append((request, *evidence.as_tuple()))
        self.counts.inc("enqueued")
        if len(self.outbox) >= OUTBOX_SIZE:
            self._publish()
        return True

    def _shared_duplicate(self, request: Request) -> bool:
        # A start request is dont_filter, yet every worker's spider yields it:
        # the shared filter lets one worker have it (retries keep dont_filter).
        meta = request.meta
        first_start = meta.get("is_start_request") and not meta.get("retry_times")
        if request.dont_filter and not first_start:
            return False
        # Most duplicates are links this worker met before: answered without a
        # Redis round trip, and a URL met before without a fingerprint. A fingerprint
        # new here asks the shared filter.
        by_url = not request.dont_filter and self._judged_by_url(request)
        if by_url and self._judged(request):
            return True
        fingerprint = cast(Any, self.df).request_fingerprint(request)  # scrapy-redis' RFPDupeFilter
        if fingerprint in self.seen_here:
            seen = True
        else:
            self.seen_here.add(fingerprint)
            seen = self.df.request_seen(request)
        return self._note_judged(request, seen) if by_url else seen

    def _publish(self) -> None:
        """Score the outgoing requests with the current model and queue them in Redis."""
        entries, self.outbox = self.outbox, []
        if entries:
            self._queue_shared(entries)

    def _queue_shared(self, entries: list[tuple]) -> None:
        """Queue ``(request, static, domain id, parent, prior)`` entries in Redis; an
        entry that cannot be serialized stays in the local frontier, and so do all
        of them when Redis fails."""
        scores = entry_scores(self.frontier.strategy, self.state, entries, self.rng)
        shared, payloads, shared_scores = [], [], []
        for entry, score in zip(entries, scores):
            data = self._serialize(entry[0])
            if data is None:
                self.frontier.add(*entry)
                self.counts.inc("distributed/kept_local")
                continue
            domain = self.state.domains.profiles[entry[2]].name
            shared.append(entry)
            payloads.append(entry_payload(data, entry, domain, self.worker))
            shared_scores.append(score)
        try:
            self.queue.push(payloads, shared_scores)
        except RedisError:
            for entry in shared:  # not lost: this worker fetches them itself
                self.frontier.add(*entry)
            raise
        self.counts.inc("distributed/published", len(payloads))

    # -- release: from the shared queue ---------------------------------------------------------
    def next_request(self) -> Request | None:
        if self.stopping:
            return None
        try:
            self._publish()
            if not self.ready and len(self.frontier) < self.config.distributed_batch:
                self._pull(self.config.distributed_batch - len(self.frontier))
        except RedisError as exc:
            logger.warning("Redis failed; working from local requests: %s", exc, extra={"spider": self.spider})
        request = super().next_request()
        self.starving = request is None
        return request

    def _pull(self, count: int) -> int:
        """Move up to ``count`` of the crawl's best requests into the local frontier."""
        pulled = 0
        for raw in self.queue.pop(count):
            try:
                payload = pickle.loads(raw)
                request = self._deserialize(payload["request"])
            except Exception as exc:  # a callback this worker's spider lacks, a broken payload
                logger.warning(
                    "Skipped a shared request this worker cannot rebuild: %s", exc, extra={"spider": self.spider}
                )
                self.counts.inc("distributed/unreadable")
                continue
            parent = payload["parent"]
            if payload["worker"] != self.worker:
                # Page ids are local to the worker that fetched the page.
                parent = -1
                request.meta.pop(PARENT_KEY, None)
                self.counts.inc("distributed/pulled_from_peers")
            domain_id = self.state.domains.id_of(payload["domain"])
            static = np.asarray(payload["static"], dtype=np.float32)
            self.frontier.add(request, static, domain_id, parent, payload["prior"])
            pulled += 1
        self.counts.inc("distributed/pulled", pulled)
        return pulled

    def _return_held_requests(self) -> None:
        """Give the requests this worker holds back to the shared queue."""
        self._publish()
        entries = list(self.frontier.take_all())
        while self.ready:
            request, decision = self.ready.popleft()
            static = np.asarray(decision["features"], dtype=np.float32)[_STATIC_COLUMNS]
            parent = request.meta.get(PARENT_KEY, -1)
            domain_id = self.state.domains.id_of(domain_of(request.url))
            entries.append((request, static, domain_id, parent if isinstance(parent, int) else -1, decision["prior"]))
        if entries:
            self._queue_shared(entries)
            logger.info("Returned %d requests to the shared queue", len(entries), extra={"spider": self.spider})

    # -- coordination --------------------------------------------------------------------------
    def _tick(self) -> None:
        """Heartbeat, follow a stop, synchronise when due, and wake the engine when work appears."""
        if self.stopping:
            return
        try:
            self.registry.heartbeat()
            stop = self.registry.stop_record()
            if stop is not None:
                self._follow_stop(stop)
                return
            if time.monotonic() - self.last_sync >= self.config.distributed_sync_interval:
                self._sync()
            if self.starving and not len(self) and len(self.queue):
                self._wake()
        except RedisError as exc:
            logger.warning("Redis failed: %s", exc, extra={"spider": self.spider})
        except Exception:
            logger.exception("Distributed scheduler tick failed", extra={"spider": self.spider})

    def _sync(self) -> None:
        self.domain_sync.sync(self.state.domains)
        self.term_sync.sync(self.state.scorer)
        if self.model_sync.sync(self.frontier.strategy):
            self.counts.inc("distributed/model_syncs")
        self.counts.inc("distributed/syncs")
        self.last_sync = time.monotonic()

    def _wake(self) -> None:
        self._pull(self.config.distributed_batch)
        self._refill(self.config.pages_per_round)
        if not self.ready or self.crawler is None or self.crawler.engine is None:
            return
        self.starving = False
        # engine.crawl() is Scrapy's public way to wake an idle engine; the request
        # comes straight back to enqueue_request, which knows it is already held.
        self._wake_request = self.ready[0][0]
        try:
            self.crawler.engine.crawl(self._wake_request)
        finally:
            self._wake_request = None

    def _spider_idle(self, spider: Spider) -> None:
        if self.stopping:
            return
        try:
            self.registry.mark_idle()
            stop = self.registry.stop_record()
            if stop is None and self.registry.crawl_done():
                stop = self._record_stop("finished")
        except RedisError as exc:
            logger.error(
                "Redis failed; this worker cannot tell whether the crawl is done: %s",
                exc,
                extra={"spider": self.spider},
            )
            stop = {"reason": "redis_unavailable", "worker": self.worker}
        if stop is not None:
            self.stopping = True
            raise CloseSpider(stop["reason"])
        raise DontCloseSpider

    def _response_received(self, response: Response, request: Request, spider: Spider) -> None:
        latency = request.meta.get("download_latency")
        if latency is not None:
            self.domain_sync.record_latency(domain_of(response.url), latency)
        budget = self.config.distributed_max_pages
        if budget and not self.stopping and self.registry.count_page() >= budget:
            self._follow_stop(self._record_stop("closespider_pagecount"))

    def _record_stop(self, reason: str) -> dict[str, Any]:
        if self.registry.record_stop(reason):
            self._set_stat("stop_recorded", reason)
            logger.info("Recorded the crawl's stop: %s", reason, extra={"spider": self.spider})
        return self.registry.stop_record() or {"reason": reason, "worker": self.worker}

    def _follow_stop(self, stop: dict[str, Any]) -> None:
        if self.stopping or self.crawler is None or self.crawler.engine is None:
            return
        self.stopping = True
        if stop["worker"] != self.worker:
            logger.info(
                "Worker %s stopped the crawl (%s); stopping too",
                stop["worker"],
                stop["reason"],
                extra={"spider": self.spider},
            )
        closing = deferred_from_coro(self.crawler.engine.close_spider_async(reason=stop["reason"]))
        closing.addErrback(lambda failure: logger.debug("Closing after the crawl's stop: %s", failure.value))

    def _delete_keys(self) -> None:
        keys = list(self.server.scan_iter(match=self.keys.pattern(), count=1000))
        for start in range(0, len(keys), 500):
            self.server.delete(*keys[start : start + 500])

    def _set_stat(self, key: str, value: Any) -> None:
        if self.stats is not None:
            self.stats.set_value(f"adaptive/distributed/{key}", value)
