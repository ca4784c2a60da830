"""Lockstep: real concurrent crawls whose fetch order does not depend on timing.

Why a rerun of a concurrent crawl fetches in another order: Scrapy keeps up to
``CONCURRENT_REQUESTS`` downloads in flight, and whichever answers first is
parsed first. So the order in which pages are scored, links enqueued, rewards
learned and domain profiles updated (robots.txt answers included) depends on
the server's and the machine's timing, and with it every later decision of a
learning frontier. A breadth-first frontier is affected too (the order of
enqueued links follows the order of parsing).

Lockstep pins that order and nothing else. Every request the scheduler releases
gets a sequence number; a response (or download error) is handed on to the
middlewares, the spider and the scheduler only when every earlier request has
been fully processed (its callback's output enqueued), and the scheduler takes
its decisions only at those completions, keeping exactly ``window`` requests
between release and completion. That is the simulator's loop
(``benchmarks/simulate.py``: keep ``window`` requests in flight, complete the
oldest) run by the real components over real sockets: downloads still overlap
(up to ``window`` of them), parsing stays serial as it always is in Scrapy, so
pages/s moves little (measured in docs/benchmarks.md).

Three components share one :class:`Lockstep` per crawler:

* :class:`LockstepScheduler` wraps the crawl's real scheduler
  (``HARNESS_LOCKSTEP_SCHEDULER``: the AdaptiveScheduler or Scrapy's own),
  numbers released requests and hears of completions;
* :class:`LockstepGate`, the innermost downloader middleware, holds each
  response until its turn; robots.txt answers take the turn of the request that
  asked for them (recorded by :class:`RobotsTurnMarker`, just outside Scrapy's
  RobotsTxtMiddleware), since they update domain profiles too;
* :class:`LockstepStartMiddleware` tells when the spider's start requests are
  all enqueued: the first decision waits for them.

A completion is when Scrapy's engine drops the request from its slot, after
the download, the middlewares, the callback and its outputs (the one place of
Scrapy's private API used here: ``engine._slot``).
"""

from __future__ import annotations

import logging
from collections import deque

from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

#: request.meta key of a released request's sequence number.
SEQ_KEY = "harness_seq"
SETTINGS = {
    "SCHEDULER": "benchmarks.harness.lockstep.LockstepScheduler",
    "DOWNLOADER_MIDDLEWARES": {
        "benchmarks.harness.lockstep.RobotsTurnMarker": 99,  # just outside RobotsTxtMiddleware (100)
        "benchmarks.harness.lockstep.LockstepGate": 990,  # innermost: before DomainProfileMiddleware (950)
    },
    "SPIDER_MIDDLEWARES": {"benchmarks.harness.lockstep.LockstepStartMiddleware": 1},
}


def lockstep_settings(scheduler: str, window: int) -> dict:
    """Settings that run a crawl in lockstep around ``scheduler`` (an import path)."""
    return {**SETTINGS, "HARNESS_LOCKSTEP_SCHEDULER": scheduler, "HARNESS_LOCKSTEP_WINDOW": window}


class Lockstep:
    """The turn-taking state of one crawl: what was released, what completed, who waits."""

    def __init__(self, window: int):
        if window < 1:
            raise ValueError(f"HARNESS_LOCKSTEP_WINDOW: must be >= 1, got {window}")
        self.window = window
        self.released = 0
        self.completed = 0
        self.started = False
        self.stopping = False
        self.fill = lambda: None  # set by the scheduler
        self._waiting: dict[int, list[Deferred]] = {}
        self._robots_turn: dict[str, int] = {}
        self._in_flight: dict[int, object] = {}

    @classmethod
    def of(cls, crawler) -> Lockstep:
        lockstep = getattr(crawler, "_harness_lockstep", None)
        if lockstep is None:
            lockstep = cls(
                crawler.settings.getint("HARNESS_LOCKSTEP_WINDOW") or crawler.settings.getint("CONCURRENT_REQUESTS")
            )
            crawler._harness_lockstep = lockstep
        return lockstep

    @property
    def in_flight(self) -> int:
        return self.released - self.completed

    def number(self, request) -> None:
        request.meta[SEQ_KEY] = self.released
        self._in_flight[self.released] = request
        self.released += 1

    def requests_in_flight(self):
        """Released requests not completed yet (in release order)."""
        return self._in_flight.values()

    def mark_robots_turn(self, request) -> None:
        """The first numbered request of a host to reach RobotsTxtMiddleware fetches its robots.txt."""
        seq = request.meta.get(SEQ_KEY)
        if seq is not None:
            self._robots_turn.setdefault(urlparse_cached(request).netloc, seq)

    def turn_of(self, request) -> int | None:
        seq = request.meta.get(SEQ_KEY)
        if seq is not None:
            return seq
        if request.meta.get("dont_obey_robotstxt") and urlparse_cached(request).path == "/robots.txt":
            return self._robots_turn.get(urlparse_cached(request).netloc)
        return None

    async def wait_turn(self, request) -> None:
        turn = self.turn_of(request)
        if turn is None or turn <= self.completed:
            return
        waiter: Deferred = Deferred()
        self._waiting.setdefault(turn, []).append(waiter)
        await maybe_deferred_to_future(waiter)

    def complete(self, request) -> None:
        seq = request.meta.get(SEQ_KEY)
        if seq is None:
            return
        if seq != self.completed:
            # Only a request that skipped the gate could get here; say so rather than hang.
            logger.warning("lockstep: request %s completed out of turn (%s, expected %s)", request, seq, self.completed)
            return
        self._in_flight.pop(seq, None)
        self.completed += 1
        for waiter in self._waiting.pop(self.completed, []):
            waiter.callback(None)
        if not self.stopping:
            self.fill()


class LockstepScheduler(BaseScheduler):
    """Wraps a scheduler: decides only at completions, ``window`` requests between release and completion."""

    def __init__(self, inner: BaseScheduler, lockstep: Lockstep, crawler=None):
        self.inner = inner
        self.lockstep = lockstep
        self.crawler = crawler
        self.buffer: deque = deque()
        lockstep.fill = self.fill
        if hasattr(inner, "_in_flight"):
            # The AdaptiveScheduler's cold-start hold counts the engine's requests in progress;
            # requests buffered here are not the engine's yet, so it would count by timing.
            inner._in_flight = lambda: lockstep.in_flight
        if hasattr(inner, "_requests_in_flight"):
            # Likewise its busy-domain check: the requests between release and completion.
            inner._requests_in_flight = lockstep.requests_in_flight

    @classmethod
    def from_crawler(cls, crawler):
        path = crawler.settings.get("HARNESS_LOCKSTEP_SCHEDULER")
        if not path:
            raise ValueError("HARNESS_LOCKSTEP_SCHEDULER: missing (the scheduler to run in lockstep)")
        inner = build_from_crawler(load_object(path), crawler)
        return cls(inner, Lockstep.of(crawler), crawler)

    def open(self, spider):
        if self.crawler is not None:
            self._hear_completions(self.crawler.engine)
        return self.inner.open(spider)

    def close(self, reason):
        self.lockstep.stopping = True
        return self.inner.close(reason)

    def _hear_completions(self, engine) -> None:
        slot = engine._slot  # private: the engine drops a request from its slot once fully processed
        remove_request = slot.remove_request

        def remove_and_complete(request):
            remove_request(request)
            self.lockstep.complete(request)

        slot.remove_request = remove_and_complete

    def has_pending_requests(self) -> bool:
        return bool(self.buffer) or self.inner.has_pending_requests()

    def __len__(self) -> int:
        return len(self.buffer) + len(self.inner)

    def enqueue_request(self, request) -> bool:
        return self.inner.enqueue_request(request)

    def next_request(self):
        lockstep = self.lockstep
        if not self.buffer and lockstep.started and lockstep.in_flight == 0:
            self.fill()  # nothing in flight: nothing can change until a decision is taken
        return self.buffer.popleft() if self.buffer else None

    def fill(self) -> None:
        """A decision point: release requests until ``window`` are between release and completion."""
        lockstep = self.lockstep
        if not lockstep.started or lockstep.stopping:
            return
        while lockstep.in_flight < lockstep.window:
            request = self.inner.next_request()
            if request is None:
                break
            lockstep.number(request)
            self.buffer.append(request)

    def start_finished(self) -> None:
        self.lockstep.started = True
        self.fill()
        if self.buffer and self.crawler is not None:
            self.crawler.engine._slot.nextcall.schedule()


class LockstepGate:
    """Innermost downloader middleware: hands a response or error on only in its turn."""

    def __init__(self, lockstep: Lockstep):
        self.lockstep = lockstep

    @classmethod
    def from_crawler(cls, crawler):
        return cls(Lockstep.of(crawler))

    async def process_response(self, request, response, spider=None):
        await self.lockstep.wait_turn(request)
        return response

    async def process_exception(self, request, exception, spider=None):
        await self.lockstep.wait_turn(request)
        return None


class RobotsTurnMarker:
    """Downloader middleware just outside RobotsTxtMiddleware: notes which request will ask for a host's robots.txt."""

    def __init__(self, lockstep: Lockstep):
        self.lockstep = lockstep

    @classmethod
    def from_crawler(cls, crawler):
        return cls(Lockstep.of(crawler))

    def process_request(self, request, spider=None):
        self.lockstep.mark_robots_turn(request)


class LockstepStartMiddleware:
    """Spider middleware: the first decision is taken once every start request is enqueued."""

    def __init__(self, crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_start(self, start):
        async for item_or_request in start:
            yield item_or_request
        scheduler = self.crawler.engine.scheduler
        if isinstance(scheduler, LockstepScheduler):
            scheduler.start_finished()
