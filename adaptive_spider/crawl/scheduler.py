"""AdaptiveScheduler: a Scrapy scheduler whose order is learned during the crawl.

Requests pass Scrapy's dupefilter (``DUPEFILTER_CLASS``, with ``dont_filter``
respected, as in Scrapy's own scheduler), get the static part of their feature
vector from their context (``depth``, the page they were found on,
``link_text``), and join the :class:`~adaptive_spider.frontier.frontier.Frontier`.
When the downloader asks for work, the frontier's strategy
(``ADAPTIVE_STRATEGY``: tres, linkgroups, bestfirst, bfs, dfs, random) chooses a
round of ``ADAPTIVE_PAGES_PER_ROUND`` requests into a ready queue. Each released
request carries the reason it was chosen in ``request.meta["adaptive"]`` (leaf,
score, features).

With ``JOBDIR``, the frontier, the model and the domain profiles are saved when
the crawl stops and restored when it resumes. With ``ADAPTIVE_JOURNAL`` (the
default) the queue is also journaled as the crawl goes and snapshotted every
``ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS``, so a killed crawl resumes without losing
a queued request (see :mod:`adaptive_spider.frontier.journal`).
"""

from __future__ import annotations

import logging
import pickle
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import request_from_dict

from adaptive_spider.frontier import features as F
from adaptive_spider.settings.config import AdaptiveConfig
from adaptive_spider.frontier.strategies.base import link_prior
from adaptive_spider.frontier.frontier import Frontier, link_context
from adaptive_spider.frontier.journal import (
    ADD,
    DONE,
    SEQ_KEY,
    TAKE,
    FrontierJournal,
    replay,
    requests_in_progress,
)
from adaptive_spider.relevance.linkpreview import LinkPreview
from adaptive_spider.sufficiency.linkvalues import GAIN_KEY
from adaptive_spider.crawl.state import DECISION_KEY, PARENT_KEY, CrawlState, request_domain

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

STATE_FILE = "adaptive_frontier.pickle"
#: The meta keys that describe the link a request came from (taken over by a better link).
LINK_META_KEYS = (PARENT_KEY, "link_text", "link_context")
#: How much higher a later link's prior must be to take the place of the first link.
PRIOR_MARGIN = 0.01
_PARENT_SCORE = F.STATIC_NAMES.index("parent_score")
# Enqueued requests counted before the stats are told (a stats call per request costs
# more than the count; the stats are exact at each refill and at close).
_STATS_BATCH = 1024


class AdaptiveScheduler(BaseScheduler):
    """Stores the crawl's requests and releases them in a learned order.

    Works with any spider's plain Requests: a request without ``depth``,
    ``link_text`` or a parent page gets depth 0, no anchor text and no parent
    score. An explicit ``Request.priority`` is a tier above the learned order.
    """

    def __init__(self, dupefilter, state: CrawlState | None = None, jobdir: str | None = None, stats=None, crawler=None):
        self.df = dupefilter
        self.state = state if state is not None else CrawlState(AdaptiveConfig.from_settings({}), stats)
        self.config = self.state.config
        self.jobdir = jobdir
        self.stats = stats
        self.crawler = crawler
        self.frontier = Frontier(self.config, self.state.domains, self.state.pages)
        self.ready: deque = deque()
        self._released = 0
        # Counts not yet added to the stats (see _flush_counts).
        self._unreported = {"enqueued": 0, "released": 0}
        self.spider = None
        self._log_decisions = self.config.log_decisions and logger.isEnabledFor(logging.DEBUG)
        # Durable queue (JOBDIR + ADAPTIVE_JOURNAL): requests taken and not yet done, by sequence number.
        self.journal = FrontierJournal(jobdir, self.config.journal_snapshot_seconds) if jobdir and self.config.journal else None
        self.in_flight: dict[int, Request] = {}
        self._resumed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AdaptiveScheduler:
        dupefilter_cls = load_object(crawler.settings["DUPEFILTER_CLASS"])
        return cls(
            dupefilter=build_from_crawler(dupefilter_cls, crawler),
            state=CrawlState.of(crawler),
            jobdir=job_dir(crawler.settings),
            stats=crawler.stats,
            crawler=crawler,
        )

    # -- lifecycle -------------------------------------------------------------------------
    def open(self, spider: Spider):
        self.spider = spider
        self.state.frontier = self.frontier
        if self.jobdir:
            self._load()
        self._track_link_values()
        logger.info(
            "AdaptiveScheduler: strategy %s, %d queued", self.config.strategy, len(self), extra={"spider": spider}
        )
        return self.df.open()

    def close(self, reason: str):
        self._update_stats()
        if self.jobdir:
            self._save()
        return self.df.close(reason)

    def has_pending_requests(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        return len(self.ready) + len(self.frontier)

    # -- enqueue -----------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            self._merge_link_evidence(request)
            return False
        if self._start_request_seen_before(request):
            return False
        if self.journal is not None:
            # Before queueing: the frontier keeps a packed copy of the meta, which must hold the sequence number.
            self._journal_add(request)
        self._add(request)
        self._count("enqueued")
        return True

    def _add(self, request: Request) -> int:
        anchor = anchor_text(request)
        preview = LinkPreview.of(request, self.state.terms, anchor)
        static, domain_id, parent, prior = self._link_context(request, preview)
        entry = self.frontier.add(request, static, domain_id, parent, prior)
        self._value_link(entry, request, static, domain_id, anchor, preview)
        return entry

    def _value_link(self, entry: int, request: Request, static, domain_id: int, anchor: str, preview: LinkPreview) -> None:
        """Let the sufficiency link values know of a queued link."""
        parent_score = float(static[_PARENT_SCORE])
        self.state.knowledge.links.add(entry, anchor, request.url, parent_score, domain_id, preview)

    def _merge_link_evidence(self, request: Request) -> None:
        """A duplicate of a queued request may come from a better link (a page's own
        title where the first link was an index's bare name): the queued entry then
        takes this link's features and prior. The request stays a duplicate."""
        entry = self.frontier.queued_entry(request.url)
        if entry is None:
            return
        anchor = anchor_text(request)
        preview = LinkPreview.of(request, self.state.terms, anchor)
        static, domain_id, parent, prior = self._link_context(request, preview)
        if prior <= float(self.frontier.store.prior[entry]) + PRIOR_MARGIN:
            return

        def take_link_meta(queued: Request) -> None:
            for key in LINK_META_KEYS:
                if key in request.meta:
                    queued.meta[key] = request.meta[key]
                else:
                    queued.meta.pop(key, None)

        new_entry = self.frontier.relink(entry, take_link_meta, static, domain_id, parent, prior)
        self._value_link(new_entry, request, static, domain_id, anchor, preview)
        self._inc("relinked")

    def _link_context(self, request: Request, preview: LinkPreview | None = None) -> tuple:
        """``(static features, domain id, parent page id, link prior)`` of a new request.

        Separate from :meth:`_add` so that a subclass can queue the request
        elsewhere (the distributed scheduler queues it in Redis).
        """
        meta = request.meta
        if preview is None:
            preview = LinkPreview.of(request, self.state.terms, anchor_text(request))
        parent = meta.get(PARENT_KEY, -1)
        if not isinstance(parent, int):
            parent = -1
        parent_score = self.state.parent_score(parent)
        similarity = self.state.scorer.score_term_ids(preview.term_ids)
        context = meta.get("link_context") or ""
        context_similarity = self.state.context_similarity(context) if isinstance(context, str) and context else 0.0
        prior = link_prior(similarity, parent_score, context_similarity, self.config.prior_weights)
        static = F.static_vector(
            depth=int(meta.get("depth", 0) or 0),
            parent_score=parent_score,
            anchor_similarity=similarity,
            path_segments=preview.path_depth,
            has_query=preview.has_query,
            round_discovered=self.frontier.round,
        )
        domain_id = self.state.domains.id_of(preview.domain)
        if parent >= 0:
            group = self.state.pages.group_of(parent, link_context(request))
            self.state.pages.add_child(parent, static, domain_id, prior, group)
        return static, domain_id, parent, prior

    # -- release -------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        if self.journal is not None:
            self._journal_tick()
        if not self.ready:
            self._refill(self.config.pages_per_round)
            if not self.ready:
                return None
        elif self.frontier.top_tier() > self.ready[0][0].priority:
            # A request of a higher priority (a redirect, a retry) goes before the batch, as in Scrapy.
            self._refill(1, front=True)
        request, decision = self.ready.popleft()
        self._released += 1
        self.state.knowledge.links.dispatch(request)
        self._count("released")
        if self.journal is not None:
            self._journal_take(request)
        if self._log_decisions:
            logger.debug(
                "Released %s (leaf %s, score %.4f): %s",
                request.url,
                decision["leaf"],
                decision["score"],
                F.describe(decision["features"]),
                extra={"spider": self.spider},
            )
        return request

    def _refill(self, n: int, front: bool = False) -> None:
        self._flush_counts()
        filtered_before = dict(self.frontier.filtered)
        batch = self.frontier.next_batch(n, self._hold_below())
        for reason, count in self.frontier.filtered.items():
            if count != filtered_before.get(reason, 0):
                self._inc(f"filtered/{reason}", count - filtered_before.get(reason, 0))
        if not batch:
            return
        # One rounding for the whole round; float64 first, so each value is exactly
        # Python's round(float(v), 5) of the float32 feature (x * 1e5 is exact in float64).
        rounded = np.round(np.array([choice.features for _, choice in batch], dtype=np.float64), 5).tolist()
        for (request, choice), features in zip(batch, rounded):
            decision = {
                "strategy": self.config.strategy,
                "leaf": choice.leaf,
                "score": round(choice.score, 6),
                "prior": round(choice.prior, 6),
                "round": self.frontier.round,
                "features": features,
            }
            request.meta[DECISION_KEY] = decision
            request.meta[GAIN_KEY] = round(self.state.knowledge.links.release(choice.entry, request), 6)
            if front:
                self.ready.appendleft((request, decision))
            else:
                self.ready.append((request, decision))

    def _hold_below(self) -> float | None:
        """During the cold start, links with no evidence of relevance wait while
        enough requests are in flight: their answers may reveal better links,
        and early concurrency otherwise fills up with blind fetches."""
        config = self.config
        if not config.hold_below or self._released >= config.cold_start_pages:
            return None
        if not self.frontier.strategy.ranks_by_link_prior:
            return None  # bfs, dfs, random: an order that ignores link evidence stays that order
        return config.hold_below if self._in_flight() >= config.hold_in_flight else None

    def _in_flight(self) -> int:
        """Released requests whose pages have not been parsed yet (download and scraping):
        their links are not known, whatever the timing of the downloads."""
        in_progress = requests_in_progress(self.crawler)
        return len(in_progress) if in_progress is not None else 0

    # -- sufficiency: keep the link values (adaptive_spider.sufficiency.linkvalues) in step with the frontier --
    def _track_link_values(self) -> None:
        """Let the link values see entries the frontier drops, and value what JOBDIR restored."""
        links = self.state.knowledge.links
        store = self.frontier.store
        links.bind(lambda entry: entry < len(store.requests) and store.requests[entry] is not None)
        for entry in store.live_ids():
            request = store.requests[entry]
            anchor = request.meta.get("link_text") or ""
            parent = request.meta.get(PARENT_KEY, -1)
            parent_score = self.state.parent_score(parent if isinstance(parent, int) else -1)
            links.add(int(entry), anchor if isinstance(anchor, str) else "", request.url, parent_score, int(store.domain[entry]))

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"adaptive/{key}", count)

    def _count(self, key: str) -> None:
        """Count an enqueued or released request; the stats hear of it in batches."""
        unreported = self._unreported
        unreported[key] += 1
        if unreported[key] >= _STATS_BATCH:
            self._flush_counts()

    def _flush_counts(self) -> None:
        for key, count in self._unreported.items():
            if count:
                self._inc(key, count)
                self._unreported[key] = 0

    def _update_stats(self) -> None:
        self._flush_counts()
        if self.stats is None:
            return
        for key, value in self.frontier.stats().items():
            self.stats.set_value(f"adaptive/frontier/{key}", value)

    # -- JOBDIR ----------------------------------------------------------------------------------
    def _state_path(self) -> Path:
        return Path(self.jobdir) / STATE_FILE

    def _serialize(self, request: Request) -> dict | None:
        try:
            data = request.to_dict(spider=self.spider)
            pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a lambda callback, an unpicklable meta value...
            logger.warning("Unable to save request %s in JOBDIR: %s", request, exc, extra={"spider": self.spider})
            return None
        return data

    def _deserialize(self, data: dict) -> Request:
        return request_from_dict(data, spider=self.spider)

    def _snapshot(self, *, in_flight: bool) -> dict:
        ready = []
        for request, decision in self.ready:
            data = self._serialize(request)
            if data is not None:
                ready.append(
                    {"request": data, "features": decision["features"], "prior": decision["prior"], "parent": request.meta.get(PARENT_KEY, -1)}
                )
        flying = [data for data in map(self._serialize, self.in_flight.values()) if data is not None] if in_flight else []
        snapshot = {
            "version": 2,
            "strategy": self.config.strategy,
            "crawl": self.state.state_dict(),
            "frontier": self.frontier.state_dict(self._serialize),
            "ready": ready,
            "in_flight": flying,
        }
        lost = snapshot["frontier"]["unserializable"] + len(self.ready) - len(ready)
        if lost:
            self._inc("unserializable", lost)
        return snapshot

    def _save(self) -> None:
        # At a clean close the engine has finished every request it was given:
        # nothing is in flight any more.
        snapshot = self._snapshot(in_flight=False)
        if self.journal is not None:
            self._flush_dupefilter()
            self.journal.write_snapshot(snapshot)
            self.journal.close()
            path = self.journal.snapshot_path
        else:
            path = self._state_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".partial")
            with partial.open("wb") as handle:
                pickle.dump(snapshot, handle, protocol=pickle.HIGHEST_PROTOCOL)
            partial.replace(path)
        saved = len(snapshot["frontier"]["entries"]) + len(snapshot["ready"])
        logger.info("AdaptiveScheduler: saved %d queued requests to %s", saved, path, extra={"spider": self.spider})

    def _load(self) -> None:
        if self.journal is not None:
            snapshot, events = self.journal.recover()
        else:
            path = self._state_path()
            snapshot, events = (pickle.loads(path.read_bytes()) if path.exists() else None), []
        if snapshot is None and not events:
            return
        self._resumed = True
        queued, in_flight = {}, {}
        if snapshot is not None:
            if snapshot.get("strategy") != self.config.strategy:
                logger.warning(
                    "JOBDIR was crawled with strategy %s; the model is not reused for %s",
                    snapshot.get("strategy"),
                    self.config.strategy,
                    extra={"spider": self.spider},
                )
                snapshot["frontier"]["strategy"] = self.frontier.strategy.state_dict()
            self.state.load_state_dict(snapshot["crawl"])
            self.frontier.load_state_dict({**snapshot["frontier"], "entries": []}, self._deserialize)
            queued, in_flight = snapshot_items(snapshot)
        queued, in_flight = replay(queued, in_flight, events)
        for _, item in sorted({**queued, **in_flight}.items()):
            self._restore(*item)
        self._inc("resume/queued", len(queued))
        self._inc("resume/in_flight", len(in_flight))
        self._inc("resume/journal_events", len(events))
        logger.info(
            "AdaptiveScheduler: resumed %d queued and %d in-flight requests from JOBDIR (%d journal events)",
            len(queued),
            len(in_flight),
            len(events),
            extra={"spider": self.spider},
        )
        if self.journal is not None:
            self._write_snapshot()  # a fresh generation: the old journal may end in a torn record
        else:
            self._state_path().unlink()

    def _restore(self, kind: str, data) -> None:
        """Queue again one request of a snapshot or journal."""
        if kind == "entry":
            request = self._deserialize(data["request"])
            self.frontier.add(request, data["static"], self.state.domains.id_of(data["domain"]), data["parent"], data["prior"])
        elif kind == "ready":
            request = self._deserialize(data["request"])
            features = data["features"]
            static = [features[F.FEATURE_NAMES.index(name)] for name in F.STATIC_NAMES]
            domain_id = self.state.domains.id_of(request_domain(request))
            self.frontier.add(request, static, domain_id, data["parent"], data.get("prior", 0.0))
        else:  # journaled after the snapshot (or in flight at it): features are computed again
            request = self._deserialize(data)
            parent = request.meta.get(PARENT_KEY, -1)
            if isinstance(parent, int) and parent >= len(self.state.pages):
                request.meta[PARENT_KEY] = -1  # a page fetched after the snapshot: not in the restored log
            if not request.dont_filter or request.meta.get("is_start_request"):
                self.df.request_seen(request)  # the dupefilter file may have lost its tail
            self._add(request)

    # -- journal (JOBDIR + ADAPTIVE_JOURNAL) ------------------------------------------------------
    def _start_request_seen_before(self, request: Request) -> bool:
        """A resumed crawl does not fetch its start requests again.

        Start requests are ``dont_filter`` (Scrapy's convention), so the
        dupefilter never sees them; with JOBDIR their fingerprints are recorded
        anyway, and on resume the ones already seen are dropped (each is either
        done or restored from the journal).
        """
        if not (self.jobdir and request.dont_filter and request.meta.get("is_start_request")):
            return False
        return self.df.request_seen(request) and self._resumed

    def _journal_add(self, request: Request) -> None:
        self._flush_dupefilter()
        seq = self.journal.assign(request.meta)
        try:
            self.journal.append((ADD, seq, request.to_dict(spider=self.spider)))
        except Exception as exc:  # a lambda callback, an unpicklable meta value...
            logger.warning("Unable to journal request %s in JOBDIR: %s", request, exc, extra={"spider": self.spider})
            del request.meta[SEQ_KEY]
            self._inc("unserializable")
            return
        # While the downloader is full the engine asks for no request, so finished
        # requests are also recorded here (the fewer on record as in flight, the
        # fewer fetched again after a kill).
        self._settle_in_flight()

    def _journal_take(self, request: Request) -> None:
        seq = request.meta.get(SEQ_KEY)
        if seq is not None:
            self.journal.append((TAKE, seq))
            self.in_flight[seq] = request

    def _journal_tick(self) -> None:
        """Record the requests the engine has finished with; snapshot when due."""
        self._settle_in_flight()
        if self.journal.snapshot_due():
            self._write_snapshot()

    def _settle_in_flight(self) -> None:
        """Record as done the taken requests the engine has finished with."""
        if not self.in_flight:
            return
        in_progress = requests_in_progress(self.crawler)
        if in_progress is not None:
            for seq in [seq for seq, request in self.in_flight.items() if request not in in_progress]:
                del self.in_flight[seq]
                self.journal.append((DONE, seq))

    def _write_snapshot(self) -> None:
        self._flush_dupefilter()
        self.journal.write_snapshot(self._snapshot(in_flight=True))
        self._inc("journal/snapshots")

    def _flush_dupefilter(self) -> None:
        """Hand the dupefilter's buffered fingerprints (RFPDupeFilter's requests.seen)
        to the operating system, so they survive a killed process."""
        file = getattr(self.df, "file", None)
        if file is not None and hasattr(file, "flush"):
            file.flush()


def anchor_text(request: Request) -> str:
    """The anchor text of a request's link ("" when the spider gave none)."""
    anchor = request.meta.get("link_text") or ""
    return anchor if isinstance(anchor, str) else ""


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
