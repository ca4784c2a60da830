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
the crawl stops and restored when it resumes.
"""

from __future__ import annotations

import logging
import pickle
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import request_from_dict

from adaptive_spider import features as F
from adaptive_spider.config import AdaptiveConfig
from adaptive_spider.frontier.base import link_prior
from adaptive_spider.frontier.frontier import Frontier
from adaptive_spider.linkvalue import GAIN_KEY
from adaptive_spider.state import DECISION_KEY, PARENT_KEY, CrawlState, domain_of

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

STATE_FILE = "adaptive_frontier.pickle"


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
        self.spider = None
        self._log_decisions = self.config.log_decisions and logger.isEnabledFor(logging.DEBUG)

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
            return False
        self._add(request)
        self._inc("enqueued")
        return True

    def _add(self, request: Request) -> int:
        meta = request.meta
        parent = meta.get(PARENT_KEY, -1)
        if not isinstance(parent, int):
            parent = -1
        parent_score = self.state.parent_score(parent)
        anchor = meta.get("link_text") or ""
        similarity = self.state.link_similarity(anchor if isinstance(anchor, str) else "", request.url)
        static = F.static_features(
            request.url,
            depth=int(meta.get("depth", 0) or 0),
            parent_score=parent_score,
            anchor_similarity=similarity,
            round_discovered=self.frontier.round,
        )
        domain_id = self.state.domains.id_of(domain_of(request.url))
        if parent >= 0:
            self.state.pages.add_child(parent, static, domain_id)
        entry = self.frontier.add(request, static, domain_id, parent, link_prior(similarity, parent_score))
        self.state.knowledge.links.add(entry, anchor if isinstance(anchor, str) else "", request.url, parent_score, domain_id)
        return entry

    # -- release -------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        if not self.ready:
            self._refill()
            if not self.ready:
                return None
        request, decision = self.ready.popleft()
        self.state.knowledge.links.dispatch(request)
        self._inc("released")
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

    def _refill(self) -> None:
        filtered_before = dict(self.frontier.filtered)
        batch = self.frontier.next_batch(self.config.pages_per_round)
        for reason, count in self.frontier.filtered.items():
            if count != filtered_before.get(reason, 0):
                self._inc(f"filtered/{reason}", count - filtered_before.get(reason, 0))
        for request, choice in batch:
            decision = {
                "strategy": self.config.strategy,
                "leaf": choice.leaf,
                "score": round(choice.score, 6),
                "round": self.frontier.round,
                "features": [round(float(v), 5) for v in choice.features],
            }
            request.meta[DECISION_KEY] = decision
            request.meta[GAIN_KEY] = round(self.state.knowledge.links.release(choice.entry, request), 6)
            self.ready.append((request, decision))

    # -- sufficiency: keep the link values (adaptive_spider.linkvalue) in step with the frontier --
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

    def _update_stats(self) -> None:
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

    def _save(self) -> None:
        ready = []
        for request, decision in self.ready:
            data = self._serialize(request)
            if data is not None:
                ready.append({"request": data, "features": decision["features"], "parent": request.meta.get(PARENT_KEY, -1)})
        snapshot = {
            "version": 1,
            "strategy": self.config.strategy,
            "crawl": self.state.state_dict(),
            "frontier": self.frontier.state_dict(self._serialize),
            "ready": ready,
        }
        path = self._state_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with partial.open("wb") as handle:
            pickle.dump(snapshot, handle, protocol=pickle.HIGHEST_PROTOCOL)
        partial.replace(path)
        saved = len(snapshot["frontier"]["entries"]) + len(ready)
        lost = snapshot["frontier"]["unserializable"] + len(self.ready) - len(ready)
        if lost:
            self._inc("unserializable", lost)
        logger.info("AdaptiveScheduler: saved %d queued requests to %s", saved, path, extra={"spider": self.spider})

    def _load(self) -> None:
        path = self._state_path()
        if not path.exists():
            return
        with path.open("rb") as handle:
            snapshot = pickle.load(handle)
        if snapshot.get("strategy") != self.config.strategy:
            logger.warning(
                "JOBDIR was crawled with strategy %s; the model is not reused for %s",
                snapshot.get("strategy"),
                self.config.strategy,
                extra={"spider": self.spider},
            )
            snapshot["frontier"]["strategy"] = self.frontier.strategy.state_dict()
        self.state.load_state_dict(snapshot["crawl"])
        self.frontier.load_state_dict(snapshot["frontier"], self._deserialize)
        for item in snapshot["ready"]:
            request = self._deserialize(item["request"])
            features = item["features"]
            static = [features[F.FEATURE_NAMES.index(name)] for name in F.STATIC_NAMES]
            domain_id = self.state.domains.id_of(domain_of(request.url))
            self.frontier.add(request, static, domain_id, item["parent"], link_prior(static[2], static[1]))
        path.unlink()
