"""AdaptiveScheduler: a Scrapy scheduler whose order is learned during the crawl.

The scheduler is Scrapy's adapter to the
:class:`~adaptive_spider.frontier.frontier.Frontier`. Requests pass Scrapy's
dupefilter (``DUPEFILTER_CLASS``, with ``dont_filter`` respected, as in Scrapy's
own scheduler), get their link evidence (:mod:`adaptive_spider.frontier.linkevidence`:
the static part of their feature vector, from ``depth``, the page they were
found on and ``link_text``) and join the frontier. When the downloader asks for
work, the frontier's strategy (``ADAPTIVE_STRATEGY``: tres, linkgroups,
bestfirst, gain, bfs, dfs, random) chooses a round of ``ADAPTIVE_PAGES_PER_ROUND``
requests into a ready queue. Each released request carries the reason it was
chosen in ``request.meta["adaptive"]`` (leaf, score, features). A domain with as many
requests in flight as its download slot takes (``ADAPTIVE_DOMAIN_IN_FLIGHT``) is passed
over for other domains' in that round, so one slow host never fills the downloader.

With ``JOBDIR`` the queue is saved, journaled and restored by a
:class:`~adaptive_spider.crawl.jobdir.JobDirQueue`.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import request_from_dict

from adaptive_spider.crawl.canonical import has_valid_host, judges_by_url
from adaptive_spider.crawl.engine_internals import requests_in_progress
from adaptive_spider.crawl.jobdir import JobDirQueue, request_to_dict, snapshot_items
from adaptive_spider.crawl.state import DECISION_KEY, PARENT_KEY, CrawlState, request_domain
from adaptive_spider.frontier.domains import DomainLoad
from adaptive_spider.frontier.features import describe
from adaptive_spider.frontier.frontier import Frontier
from adaptive_spider.frontier.linkevidence import (
    LinkEvidence,
    ValuedLink,
    anchor_text,
    link_evidence,
    record_outlink,
    valued_link,
)
from adaptive_spider.settings.components import build
from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.dupefilters import BaseDupeFilter
    from scrapy.statscollectors import StatsCollector

    from adaptive_spider.frontier.strategies.base import Strategy
    from adaptive_spider.sufficiency.linkvalues import LinkValues

__all__ = ["AdaptiveScheduler", "SchedulerStats", "anchor_text", "snapshot_items"]

logger = logging.getLogger(__name__)

#: The meta keys that describe the link a request came from (taken over by a better link).
LINK_META_KEYS = (
    PARENT_KEY,
    "link_text",
    "link_context",
    "link_description",
    "link_other_anchors",
    "link_language",
)
#: How much higher a later link's prior must be to take the place of the first link.
PRIOR_MARGIN = 0.01
#: Most URLs kept to answer their repeats (``canonical.judges_by_url``); the set is emptied when
#: full, which costs the next repeats a fingerprint each.
SEEN_URLS_MAX = 200_000
# Enqueued requests counted before the stats are told (a stats call per request costs
# more than the count; the stats are exact at each refill and at close).
_STATS_BATCH = 1024


class SchedulerStats:
    """The scheduler's ``adaptive/...`` statistics; the per-request counts are batched."""

    def __init__(self, stats: StatsCollector | None):
        self.stats = stats
        # Counts not yet added to the stats (see flush).
        self._unreported = {"enqueued": 0, "released": 0}

    def inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"adaptive/{key}", count)

    def count(self, key: str) -> None:
        """Count an enqueued or released request; the stats hear of it in batches."""
        unreported = self._unreported
        unreported[key] += 1
        if unreported[key] >= _STATS_BATCH:
            self.flush()

    def flush(self) -> None:
        for key, count in self._unreported.items():
            if count:
                self.inc(key, count)
                self._unreported[key] = 0

    def set_frontier(self, frontier_stats: dict) -> None:
        self.flush()
        if self.stats is None:
            return
        for key, value in frontier_stats.items():
            self.stats.set_value(f"adaptive/frontier/{key}", value)


def domain_in_flight_limit(config: AdaptiveConfig, crawler: Crawler | None) -> int:
    """``ADAPTIVE_DOMAIN_IN_FLIGHT``, with 0 read as the download slot's concurrency (-1: none)."""
    if config.domain_in_flight:
        return config.domain_in_flight
    if crawler is None:
        return -1
    settings = crawler.settings
    return settings.getint("CONCURRENT_REQUESTS_PER_IP") or settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") or -1


def slow_domains_limit(config: AdaptiveConfig, crawler: Crawler | None) -> int:
    """Most requests in flight of the slow domains together: ``ADAPTIVE_SLOW_DOMAINS_SHARE`` of
    ``CONCURRENT_REQUESTS``, at least one (-1: no limit, the share is 1 or nothing to take it of)."""
    if config.slow_domains_share >= 1.0 or crawler is None:
        return -1
    return max(1, int(config.slow_domains_share * crawler.settings.getint("CONCURRENT_REQUESTS")))


class AdaptiveScheduler(BaseScheduler):
    """Stores the crawl's requests and releases them in a learned order.

    Works with any spider's plain Requests: a request without ``depth``,
    ``link_text`` or a parent page gets depth 0, no anchor text and no parent
    score. An explicit ``Request.priority`` is a tier above the learned order.
    """

    def __init__(
        self,
        dupefilter: BaseDupeFilter,
        state: CrawlState | None = None,
        jobdir: str | None = None,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
    ):
        self.df = dupefilter
        # The URLs of GET requests the dupefilter has judged, to answer their repeats without
        # a fingerprint: a page's menus link the pages its siblings' do, and a fingerprint (a
        # canonical URL, a SHA-1) costs more than the rest of a repeat's way (None: the
        # dupefilter's verdicts need the whole request).
        fingerprinter = getattr(dupefilter, "fingerprinter", None)
        self._seen_urls: set[str] | None = set() if judges_by_url(type(dupefilter), type(fingerprinter)) else None
        self.state = state if state is not None else CrawlState(AdaptiveConfig.from_settings({}), stats)
        self.config = self.state.config
        self.stats = stats
        self.crawler = crawler
        self.counts = SchedulerStats(stats)
        self.link_values = self._link_values()
        self.frontier = Frontier(
            self.config, self.state.domains, self.state.pages, self.link_values, self._build_strategy
        )
        self.ready: deque = deque()
        self._n_released = 0
        self.spider: Spider | None = None
        self._log_decisions = self.config.log_decisions and logger.isEnabledFor(logging.DEBUG)
        self.domain_in_flight = domain_in_flight_limit(self.config, crawler)
        self.slow_in_flight = slow_domains_limit(self.config, crawler)
        self.jobdir = (
            JobDirQueue(jobdir, self.state, self.frontier, self.ready, dupefilter, crawler, self._add, self.counts.inc)
            if jobdir
            else None
        )

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

    def _build_strategy(
        self, cls: type[Strategy], frontier: Frontier, config: Any, rng: np.random.Generator
    ) -> Strategy:
        """The frontier's strategy, made as Scrapy makes a component: a strategy of one's own
        (``ADAPTIVE_STRATEGY`` = a dotted path) may have ``from_crawler(crawler, frontier, config, rng)``."""
        return cast("Strategy", build(cls, self.crawler, self.config.as_settings(), frontier, config, rng))

    def _link_values(self) -> LinkValues | None:
        """The sufficiency link values, the frontier's listener: told of every link
        queued, released or dropped, and of every request handed to the engine."""
        return self.state.knowledge.links

    # -- lifecycle -------------------------------------------------------------------------
    def open(self, spider: Spider) -> Any:
        self.spider = spider
        self.state.attach_frontier(self.frontier)
        if self._seen_urls is not None:
            # The spider side may then drop a page's links to such URLs before they cost the
            # middlewares below it, the engine's signal and this scheduler anything.
            self.state.is_settled_url = self._is_settled
        if self.jobdir is not None:
            self.jobdir.load(spider)
        logger.info(
            "AdaptiveScheduler: strategy %s, %d queued", self.config.strategy, len(self), extra={"spider": spider}
        )
        return self.df.open()

    def close(self, reason: str) -> Any:
        self.state.is_settled_url = None
        self.counts.set_frontier(self.frontier.stats())
        if self.jobdir is not None:
            self.jobdir.save()
        return self.df.close(reason)

    def has_pending_requests(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        return len(self.ready) + len(self.frontier)

    # -- enqueue -----------------------------------------------------------------------------
    def enqueue_request(self, request: Request) -> bool:
        if self._is_malformed(request):
            return False
        if not request.dont_filter and self._request_seen(request):
            self.df.log(request, cast("Spider", self.spider))  # open() set it before any request
            self._offer_better_link(request)
            return False
        if self.jobdir is not None:
            if self.jobdir.start_request_seen_before(request):
                return False
            self.jobdir.record_enqueued(request)
        self._add(request)
        self.counts.count("enqueued")
        return True

    def _request_seen(self, request: Request) -> bool:
        """The dupefilter's verdict, given without it for a URL it has judged already."""
        if not self._judged_by_url(request):
            return self.df.request_seen(request)
        if self._judged(request):
            return True
        return self._note_judged(request, self.df.request_seen(request))

    def _judged_by_url(self, request: Request) -> bool:
        return self._seen_urls is not None and request.method == "GET" and not request.body

    def _judged(self, request: Request) -> bool:
        """Whether the dupefilter has judged the request's URL (a GET request's, the set kept)."""
        return request.url in cast("set[str]", self._seen_urls)

    def _note_judged(self, request: Request, seen: bool) -> bool:
        """Keep the URL of a request the dupefilter has just judged; returns its verdict."""
        seen_urls = cast("set[str]", self._seen_urls)
        if len(seen_urls) >= SEEN_URLS_MAX:
            seen_urls.clear()
        seen_urls.add(request.url)
        return seen

    def _is_settled(self, url: str) -> bool:
        """Whether a GET request without a body for ``url`` would be refused as a duplicate,
        with no queued entry a better link could update: the dupefilter judged the URL, and the
        frontier released or dropped it (or ranks by no link prior: bfs, dfs and random)."""
        return url in cast("set[str]", self._seen_urls) and self.frontier.queued_entry(url) is None

    def _is_malformed(self, request: Request) -> bool:
        """A link whose host cannot exist (a placeholder such as ``http://<servername``) is
        dropped here, counted, and never reaches the dupefilter or the downloader."""
        if has_valid_host(request.url):
            return False
        self.counts.inc("filtered/malformed_url")
        return True

    def _add(self, request: Request) -> int:
        """Queue a request with its link evidence; its link joins its page's outlinks."""
        evidence = self._link_evidence(request)
        record_outlink(self.state.pages, request, evidence)
        return self.frontier.add(request, *evidence.as_tuple(), preview=evidence.preview)

    def _link_evidence(self, request: Request, valued: ValuedLink | None = None) -> LinkEvidence:
        return link_evidence(request, self.state, self.frontier.round, valued)

    def _offer_better_link(self, request: Request) -> None:
        """A duplicate of a queued request may come from a better link (a page's own
        title where the first link was an index's bare name): the queued entry then
        takes this link's features and prior. The request stays a duplicate."""
        entry = self.frontier.queued_entry(request.url)
        if entry is None:
            return
        valued = valued_link(request, self.state)
        # A learner's targets read a page's outlinks, its links to URLs still queued too
        # (the next states of its transitions): with a learner, this link joins its page's
        # outlinks whether or not it wins. Other strategies read no outlinks.
        learns = self.frontier.strategy.learns
        evidence = self._link_evidence(request, valued) if learns else None
        if evidence is not None:
            record_outlink(self.state.pages, request, evidence)
        if valued.prior <= self.frontier.prior_of(entry) + PRIOR_MARGIN:
            return
        if evidence is None:
            evidence = self._link_evidence(request, valued)

        def take_link_meta(queued: Request) -> None:
            for key in LINK_META_KEYS:
                if key in request.meta:
                    queued.meta[key] = request.meta[key]
                else:
                    queued.meta.pop(key, None)

        self.frontier.take_better_link(entry, take_link_meta, *evidence.as_tuple(), preview=evidence.preview)
        self.counts.inc("relinked")

    # -- release -------------------------------------------------------------------------------
    def next_request(self) -> Request | None:
        if self.jobdir is not None:
            self.jobdir.before_next_request()
        if not self.ready:
            self._refill(self.config.pages_per_round)
            if not self.ready:
                return None
        elif self.frontier.top_tier() > self.ready[0][0].priority:
            # A request of a higher priority (a redirect, a retry) goes before the batch, as in Scrapy.
            self._refill(1, front=True)
        request, decision = self.ready.popleft()
        self._n_released += 1
        if self.link_values is not None:
            self.link_values.on_handed_to_engine(request)
        self.counts.count("released")
        if self.jobdir is not None:
            self.jobdir.record_taken(request)
        if self._log_decisions:
            logger.debug(
                "Released %s (leaf %s, score %.4f): %s",
                request.url,
                decision["leaf"],
                decision["score"],
                describe(decision["features"]),
                extra={"spider": self.spider},
            )
        return request

    def _refill(self, n: int, front: bool = False) -> None:
        self.counts.flush()
        filtered_before = dict(self.frontier.filtered)
        batch = self.frontier.next_batch(n, self._hold_below(), self._domain_load(), self._blind_below())
        for reason, count in self.frontier.filtered.items():
            if count != filtered_before.get(reason, 0):
                self.counts.inc(f"filtered/{reason}", count - filtered_before.get(reason, 0))
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
            if choice.tokens is not None:  # the link's hashed tokens: learned from with its reward
                decision["link"] = choice.tokens.tolist()
            request.meta[DECISION_KEY] = decision
            if front:
                self.ready.appendleft((request, decision))
            else:
                self.ready.append((request, decision))

    def _blind_below(self) -> float | None:
        """During the cold start: the link prior below which a link shows no sign of relevance."""
        config = self.config
        if not config.hold_below or self._n_released >= config.cold_start_pages:
            return None
        if not self.frontier.strategy.ranks_by_link_prior:
            return None  # bfs, dfs, random: an order that ignores link evidence stays that order
        return config.hold_below

    def _hold_below(self) -> float | None:
        """During the cold start, links with no evidence of relevance wait while
        enough requests are in flight: their answers may reveal better links,
        and early concurrency otherwise fills up with blind fetches."""
        below = self._blind_below()
        return below if below is not None and self._in_flight() >= self.config.hold_in_flight else None

    def _domain_load(self) -> DomainLoad | None:
        """Requests in flight per domain (the engine's and the ready queue's), with the limit
        per domain (``ADAPTIVE_DOMAIN_IN_FLIGHT``)."""
        if self.domain_in_flight < 0:
            return None
        counts: Counter[int] = Counter()
        for request in self._requests_in_flight():
            counts[self.state.domains.id_of(request_domain(request))] += 1
        for request, _ in self.ready:
            counts[self.state.domains.id_of(request_domain(request))] += 1
        return DomainLoad(counts, self.domain_in_flight, self.slow_in_flight)

    def _requests_in_flight(self) -> Iterable[Request]:
        """Released requests not fully processed yet (the lockstep harness gives its own view)."""
        return requests_in_progress(self.crawler) or ()

    def _in_flight(self) -> int:
        """Released requests whose pages have not been parsed yet (download and scraping):
        their links are not known, whatever the timing of the downloads."""
        in_progress = requests_in_progress(self.crawler)
        return len(in_progress) if in_progress is not None else 0

    # -- requests as data (JOBDIR, a shared queue) ------------------------------------------------
    def _serialize(self, request: Request) -> dict | None:
        return request_to_dict(request, self.spider)

    def _deserialize(self, data: dict) -> Request:
        return request_from_dict(data, spider=self.spider)
