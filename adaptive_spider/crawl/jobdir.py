"""The scheduler's queue in Scrapy's JOBDIR: saved at close, restored at open.

With ``JOBDIR``, the frontier, the model, the domain profiles and the page log
are saved when the crawl stops and restored when it resumes. With
``ADAPTIVE_JOURNAL`` (the default) the queue is also journaled as the crawl goes
(an ``add`` record per accepted request, a ``take`` per request handed to the
engine, a ``done`` per request the engine finished with) and snapshotted every
``ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS``, so a killed crawl resumes without losing a
queued request (see :mod:`adaptive_spider.frontier.journal`).

:class:`JobDirQueue` is what the :class:`~adaptive_spider.crawl.scheduler.AdaptiveScheduler`
holds when JOBDIR is set; it reads the scheduler's frontier and ready queue and
queues restored requests through the scheduler.
"""

from __future__ import annotations

import logging
import pickle
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy.utils.request import request_from_dict

from adaptive_spider.crawl.engine_internals import requests_in_progress
from adaptive_spider.crawl.state import PARENT_KEY, CrawlState, request_domain
from adaptive_spider.frontier.features import FEATURE_NAMES, STATIC_NAMES
from adaptive_spider.frontier.journal import (
    ADD,
    DONE,
    SEQ_KEY,
    TAKE,
    FrontierJournal,
    replay,
    request_data,
)

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from adaptive_spider.frontier.frontier import Frontier

logger = logging.getLogger(__name__)

#: The snapshot of a JOBDIR without the journal (ADAPTIVE_JOURNAL off).
STATE_FILE = "adaptive_frontier.pickle"
_STATIC_COLUMNS = [FEATURE_NAMES.index(name) for name in STATIC_NAMES]


def request_to_dict(request: Request, spider: Spider | None) -> dict | None:
    """A request as a picklable dict, or None (logged) when it cannot be one."""
    try:
        data = request.to_dict(spider=spider)
        pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # a lambda callback, an unpicklable meta value...
        logger.warning("Unable to save request %s in JOBDIR: %s", request, exc, extra={"spider": spider})
        return None
    return data


def snapshot_items(snapshot: dict) -> tuple[dict[int, tuple[str, object]], dict[int, tuple[str, object]]]:
    """The queued and the in-flight requests of a snapshot, each by sequence number
    (requests saved without one come first, in their order)."""
    queued: dict[int, tuple[str, object]] = {}
    in_flight: dict[int, tuple[str, object]] = {}
    unnumbered = -(10**12)
    groups = (
        (queued, "entry", snapshot["frontier"]["entries"]),
        (queued, "ready", snapshot["ready"]),
        (in_flight, "journal", snapshot.get("in_flight", [])),
    )
    for items, kind, group in groups:
        for data in group:
            request = data if kind == "journal" else data["request"]
            seq = request.get("meta", {}).get(SEQ_KEY)
            if seq is None:
                seq, unnumbered = unnumbered, unnumbered + 1
            items[seq] = (kind, data)
    return queued, in_flight


def queue_on_disk(jobdir: str | Path) -> tuple[set[str], set[str]]:
    """URLs queued and in flight according to a JOBDIR: what a crawl resumed from it starts
    from (for checks and benchmarks; a resume itself goes through :class:`JobDirQueue`)."""
    snapshot, events = FrontierJournal(str(jobdir)).recover()
    queued, in_flight = replay(*(snapshot_items(snapshot) if snapshot else ({}, {})), events)

    def url(item: tuple[str, Any]) -> str:
        kind, data = item
        return str(request_data(data)["url"] if kind == "journal" else data["request"]["url"])

    return {url(item) for item in queued.values()}, {url(item) for item in in_flight.values()}


class JobDirQueue:
    """Saves and restores a scheduler's queue in JOBDIR, and journals it in between.

    Parameters
    ----------
    jobdir : str
        Scrapy's JOBDIR.
    state : CrawlState
        Saved and restored with the queue (scorer, domains, page log, knowledge).
    frontier : Frontier
        The queued entries and the strategy's model.
    ready : deque
        The scheduler's ready queue of ``(request, decision)``.
    dupefilter
        The scheduler's dupefilter (start requests are recorded in it; its file is flushed).
    crawler : Crawler, optional
        Tells which requests the engine is still working on.
    requeue : callable
        Queues a request again with features computed anew (the scheduler's own add).
    inc_stat : callable
        ``(key, count)``: counts a scheduler statistic.
    """

    def __init__(
        self,
        jobdir: str,
        state: CrawlState,
        frontier: Frontier,
        ready: deque,
        dupefilter: Any,
        crawler: Crawler | None,
        requeue: Callable[[Request], int],
        inc_stat: Callable[[str, int], None],
    ):
        self.dir = jobdir
        self.state = state
        self.config = state.config
        self.frontier = frontier
        self.ready = ready
        self.df = dupefilter
        self.crawler = crawler
        self.requeue = requeue
        self.inc_stat = inc_stat
        self.spider: Spider | None = None
        self.journal = FrontierJournal(jobdir, self.config.journal_snapshot_seconds) if self.config.journal else None
        # Requests handed to the engine and not done yet, by sequence number (with the journal).
        self.in_flight: dict[int, Request] = {}
        self.resumed = False

    # -- the scheduler's events -------------------------------------------------------------
    def start_request_seen_before(self, request: Request) -> bool:
        """A resumed crawl does not fetch its start requests again.

        Start requests are ``dont_filter`` (Scrapy's convention), so the
        dupefilter never sees them; with JOBDIR their fingerprints are recorded
        anyway, and on resume the ones already seen are dropped (each is either
        done or restored from the journal).
        """
        if not (request.dont_filter and request.meta.get("is_start_request")):
            return False
        return self.df.request_seen(request) and self.resumed

    def record_enqueued(self, request: Request) -> None:
        """Journal a request about to be queued (before: the frontier keeps a packed copy
        of its meta, which must hold the sequence number)."""
        if self.journal is None:
            return
        self._flush_dupefilter()
        seq = self.journal.assign(request.meta)
        try:
            # Pickled apart: compaction copies the record without unpickling the request.
            data = pickle.dumps(request.to_dict(spider=self.spider), protocol=pickle.HIGHEST_PROTOCOL)
            self.journal.append((ADD, seq, data))
        except Exception as exc:  # a lambda callback, an unpicklable meta value...
            logger.warning("Unable to journal request %s in JOBDIR: %s", request, exc, extra={"spider": self.spider})
            del request.meta[SEQ_KEY]
            self.inc_stat("unserializable", 1)
            return
        # While the downloader is full the engine asks for no request, so finished
        # requests are also recorded here (the fewer on record as in flight, the
        # fewer fetched again after a kill).
        self._settle_in_flight()

    def before_next_request(self) -> None:
        """Record the requests the engine has finished with; snapshot when due."""
        if self.journal is None:
            return
        self._settle_in_flight()
        if self.journal.snapshot_due():
            self.write_snapshot()

    def record_taken(self, request: Request) -> None:
        """Journal a request handed to the engine."""
        if self.journal is None:
            return
        seq = request.meta.get(SEQ_KEY)
        if seq is not None:
            self.journal.append((TAKE, seq))
            self.in_flight[seq] = request

    def _settle_in_flight(self) -> None:
        """Record as done the taken requests the engine has finished with."""
        if not self.in_flight or self.journal is None:
            return
        in_progress = requests_in_progress(self.crawler)
        if in_progress is not None:
            for seq in [seq for seq, request in self.in_flight.items() if request not in in_progress]:
                del self.in_flight[seq]
                self.journal.append((DONE, seq))

    # -- saving ------------------------------------------------------------------------------
    def _state_path(self) -> Path:
        return Path(self.dir) / STATE_FILE

    def _serialize(self, request: Request) -> dict | None:
        return request_to_dict(request, self.spider)

    def _deserialize(self, data: dict) -> Request:
        return request_from_dict(data, spider=self.spider)

    def snapshot(self) -> dict:
        """Everything to resume from without the journal (written at a clean close, when
        nothing is in flight): the queue (frontier and ready queue) and the crawl state."""
        ready = []
        for request, decision in self.ready:
            data = self._serialize(request)
            if data is not None:
                ready.append(
                    {
                        "request": data,
                        "features": decision["features"],
                        "prior": decision["prior"],
                        "parent": request.meta.get(PARENT_KEY, -1),
                    }
                )
        snapshot: dict[str, Any] = {
            "version": 2,
            "strategy": self.config.strategy,
            "crawl": self.state.state_dict(),
            "frontier": self.frontier.state_dict(self._serialize),
            "ready": ready,
            "in_flight": [],
        }
        lost = snapshot["frontier"]["unserializable"] + len(self.ready) - len(ready)
        if lost:
            self.inc_stat("unserializable", lost)
        return snapshot

    def state_snapshot(self) -> dict:
        """The crawl's state without its queue (model, domain profiles, page log, knowledge):
        with the journal, the queue is on disk already."""
        return {
            "version": 3,
            "strategy": self.config.strategy,
            "crawl": self.state.state_dict(),
            "frontier": self.frontier.state_dict(None),
            "ready": [],
            "in_flight": [],
        }

    def save(self) -> None:
        """Save the queue at a clean close."""
        if self.journal is not None:
            # At a clean close the engine has finished every request it was given.
            for seq in self.in_flight:
                self.journal.append((DONE, seq))
            self.in_flight.clear()
            self._flush_dupefilter()
            self.journal.write_snapshot(self.state_snapshot(), wait=True)
            self.journal.close()
            logger.info(
                "AdaptiveScheduler: %d queued requests are in %s",
                len(self.frontier) + len(self.ready),
                self.journal.base_path,
                extra={"spider": self.spider},
            )
            return
        # At a clean close the engine has finished every request it was given:
        # nothing is in flight any more.
        snapshot = self.snapshot()
        path = self._state_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with partial.open("wb") as handle:
            pickle.dump(snapshot, handle, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)
        saved = len(snapshot["frontier"]["entries"]) + len(snapshot["ready"])
        logger.info("AdaptiveScheduler: saved %d queued requests to %s", saved, path, extra={"spider": self.spider})

    def write_snapshot(self) -> None:
        """A periodic snapshot (with the journal): the crawl's state now; the journal
        generations before it are compacted in the background."""
        assert self.journal is not None, "periodic snapshots belong to the journal"
        self._flush_dupefilter()
        self.journal.write_snapshot(self.state_snapshot())
        self.inc_stat("journal/snapshots", 1)

    def _flush_dupefilter(self) -> None:
        """Hand the dupefilter's buffered fingerprints (RFPDupeFilter's requests.seen)
        to the operating system, so they survive a killed process."""
        file = getattr(self.df, "file", None)
        if file is not None and hasattr(file, "flush"):
            file.flush()

    # -- restoring -----------------------------------------------------------------------------
    def load(self, spider: Spider) -> None:
        """Restore what JOBDIR holds (nothing on a first run)."""
        self.spider = spider
        if self.journal is not None:
            snapshot, events = self.journal.recover()
        else:
            path = self._state_path()
            snapshot, events = (pickle.loads(path.read_bytes()) if path.exists() else None), []
        if snapshot is None and not events:
            return
        self.resumed = True
        queued: dict[int, Any] = {}
        in_flight: dict[int, Any] = {}
        if snapshot is not None:
            if snapshot.get("strategy") != self.config.strategy:
                logger.warning(
                    "JOBDIR was crawled with strategy %s; the model is not reused for %s",
                    snapshot.get("strategy"),
                    self.config.strategy,
                    extra={"spider": spider},
                )
                snapshot["frontier"]["strategy"] = self.frontier.strategy.state_dict()
            self.state.load_state_dict(snapshot["crawl"])
            self.frontier.load_state_dict({**snapshot["frontier"], "entries": []}, self._deserialize)
            queued, in_flight = snapshot_items(snapshot)
        queued, in_flight = replay(queued, in_flight, events)
        for _, item in sorted({**queued, **in_flight}.items()):
            self._restore(*item)
        self.inc_stat("resume/queued", len(queued))
        self.inc_stat("resume/in_flight", len(in_flight))
        self.inc_stat("resume/journal_events", len(events))
        logger.info(
            "AdaptiveScheduler: resumed %d queued and %d in-flight requests from JOBDIR (%d journal events)",
            len(queued),
            len(in_flight),
            len(events),
            extra={"spider": spider},
        )
        if self.journal is not None:
            self.write_snapshot()  # a fresh generation: the old journal may end in a torn record
        else:
            self._state_path().unlink()

    def _restore(self, kind: str, data: Any) -> None:
        """Queue again one request of a snapshot or journal."""
        if kind == "entry":
            request = self._deserialize(data["request"])
            domain_id = self.state.domains.id_of(data["domain"])
            self.frontier.add(request, data["static"], domain_id, data["parent"], data["prior"])
        elif kind == "ready":
            request = self._deserialize(data["request"])
            features = data["features"]
            static = np.array([features[column] for column in _STATIC_COLUMNS], dtype=np.float32)
            domain_id = self.state.domains.id_of(request_domain(request))
            self.frontier.add(request, static, domain_id, data["parent"], data.get("prior", 0.0))
        else:  # from the journal: features are computed again
            request = self._deserialize(request_data(data))
            parent = request.meta.get(PARENT_KEY, -1)
            if isinstance(parent, int) and parent >= len(self.state.pages):
                request.meta[PARENT_KEY] = -1  # a page fetched after the snapshot: not in the restored log
            if not request.dont_filter or request.meta.get("is_start_request"):
                self.df.request_seen(request)  # the dupefilter file may have lost its tail
            self.requeue(request)
