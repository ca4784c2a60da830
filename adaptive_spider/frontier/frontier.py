"""The frontier: queued requests in priority tiers, ordered by a strategy,
filtered by domain before release.

An explicit ``Request.priority`` is a tier above the learned order: the highest
non-empty tier is served first, and the strategy orders the entries inside it.
Before a chosen request is released, the domain filters run: a domain over its
page cap or with too many failures is dropped (counted by reason); a slow domain
is deferred until nothing faster is left; a domain with its share of requests in
flight is passed over for other domains' (see :class:`~adaptive_spider.frontier.domains.DomainLoad`);
and a domain never fetched before is probed with one request, the others waiting
until it answers (a dead host costs one fetch, not a round of them). A share of each
round (``ADAPTIVE_NEW_DOMAIN_SHARE``) goes to domains nothing was released to yet, one
link each, whatever the strategy's scores: they cannot judge a site none of whose pages
was seen (:mod:`adaptive_spider.frontier.newdomains` keeps those links).

A :class:`FrontierListener` hears of every entry that joins or leaves (the
sufficiency link values keep each queued link's expected gain that way), and a
strategy reads the entries through the frontier's public methods only (see
:class:`~adaptive_spider.frontier.strategies.base.QueuedEntries`).

Why one module of some 700 lines: tiers, domain filters, probes, the cold-start hold and
the listener all act on the same entries in one release round; split, each would need the
others' state. The new-domain share, which only reads them, has a module of its own.
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from adaptive_spider.frontier.features import DEPTH_SCALE, STATIC_NAMES, assemble
from adaptive_spider.frontier.learn.linkclassifier import TOKEN_WIDTH, link_tokens
from adaptive_spider.frontier.linkevidence import anchor_text, link_context
from adaptive_spider.frontier.newdomains import NewDomainShare
from adaptive_spider.frontier.sections import EntrySections
from adaptive_spider.frontier.store import FrontierStore
from adaptive_spider.frontier.strategies.base import Choice, Strategy
from adaptive_spider.frontier.strategies.baselines import (
    BestFirst,
    BreadthFirst,
    DepthFirst,
    RandomOrder,
)
from adaptive_spider.frontier.strategies.gain import ExpectedGain
from adaptive_spider.frontier.strategies.linkgroups import LinkGroups
from adaptive_spider.frontier.strategies.tres import Tres
from adaptive_spider.settings.components import load_class

if TYPE_CHECKING:
    from scrapy import Request

    from adaptive_spider.frontier.domains import DomainLoad, DomainProfiles
    from adaptive_spider.frontier.pagelog import PageLog
    from adaptive_spider.relevance.linkpreview import LinkPreview

STRATEGY_CLASSES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (Tres, LinkGroups, BestFirst, ExpectedGain, BreadthFirst, DepthFirst, RandomOrder)
}
#: How far a round looks past entries of busy domains: this many times the round's size.
BUSY_PASSES_PER_ROUND = 4
#: Makes the strategy: ``build(cls, frontier, config, rng)`` (the scheduler's goes through the
#: class's ``from_crawler``, if it has one, as Scrapy builds its components).
StrategyBuilder = Callable[[type[Strategy], "Frontier", Any, np.random.Generator], Strategy]


def strategy_class(name: str) -> type[Strategy]:
    """The class of ``ADAPTIVE_STRATEGY``: a built-in name, or the dotted path of a Strategy subclass."""
    if name in STRATEGY_CLASSES:
        return STRATEGY_CLASSES[name]
    cls = load_class(name)
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        raise TypeError(f"ADAPTIVE_STRATEGY: {name} is not a Strategy subclass")
    return cls


def _construct(cls: type[Strategy], frontier: Frontier, config: Any, rng: np.random.Generator) -> Strategy:
    return cls(frontier, config, rng)


_ANCHOR_SIMILARITY = STATIC_NAMES.index("anchor_similarity")
_DEPTH = STATIC_NAMES.index("depth")


class FrontierListener(Protocol):
    """Hears of every entry that joins or leaves the frontier."""

    def on_queued(
        self, entry: int, request: Request, parent_relevance: float, domain_id: int, preview: LinkPreview | None
    ) -> None:
        """``request`` joined as ``entry``; its link was found on a page of relevance
        ``parent_relevance`` (``preview``: the parsed link, when the caller had it)."""

    def on_released(self, entry: int, request: Request) -> None:
        """``entry`` left for the scheduler's ready queue as ``request``."""

    def on_dropped(self, entry: int) -> None:
        """``entry`` left without release (a domain filter, a better link to its URL)."""


class Frontier:
    """Queued entries, their tiers, the strategy that orders them, and the release filters.

    Parameters
    ----------
    config : AdaptiveConfig
        The crawl's validated settings.
    domains : DomainProfiles
        Read for domain features and filters.
    pages : PageLog
        Read for sibling scores and next actions.
    listener : FrontierListener, optional
        Told of every entry that joins or leaves.
    build_strategy : StrategyBuilder, optional
        Makes the strategy of ``config.strategy`` (default: its class called with
        ``(frontier, config, rng)``).
    """

    def __init__(
        self,
        config: Any,
        domains: DomainProfiles,
        pages: PageLog,
        listener: FrontierListener | None = None,
        build_strategy: StrategyBuilder | None = None,
    ):
        self.config = config
        self.domains = domains
        self.pages = pages
        self.listener = listener
        self.rng = np.random.default_rng(config.seed)
        cls = strategy_class(config.strategy)
        self.strategy: Strategy = (build_strategy or _construct)(cls, self, config, self.rng)
        # A link's hashed URL and anchor tokens are kept only for a strategy that reads them.
        self.store = FrontierStore(token_width=TOKEN_WIDTH if self.strategy.reads_link_tokens else 0)
        # Each entry's site section, for a strategy that reads many entries' section lifts at once.
        self.entry_sections = EntrySections() if self.strategy.reads_section_lifts and pages.sections.enabled else None
        self.tier_sizes: Counter = Counter()
        # Entries of slow domains, released when nothing faster is left.
        self.slow_deferred: deque = deque()
        # Entries of never-fetched domains, by domain, waiting for its probe to answer.
        self.waiting: dict[int, list] = {}
        # Domains whose probe was given up on (see _release_deferred): no longer probed.
        self.unprobed: set[int] = set()
        self.round = 0
        self.filtered: Counter = Counter()
        # URL -> entry of queued requests the dupefilter screens (not dont_filter): where a
        # later link to the same URL finds the entry (the URL string is the request's own).
        self.queued_urls: dict[str, int] = {}
        # Entries of busy slow domains, out of the strategy's reach: domain -> heap of
        # (-score, arrival order, tier, entry). During a round: the requests in flight per domain.
        self.parked: dict[int, list[tuple[float, int, int, int]]] = {}
        self._load: DomainLoad | None = None
        self._parked_this_round = 0
        #: The share of each round for sites not entered yet (ADAPTIVE_NEW_DOMAIN_SHARE).
        self.new_domains = NewDomainShare(self, config)
        self.n_released = 0
        # Entries released this round outside the strategy, which still holds their ids.
        self._explored_now: set[int] = set()

    def __len__(self) -> int:
        return len(self.store)

    # -- adding -----------------------------------------------------------------------
    def add(
        self,
        request: Request,
        static: np.ndarray,
        domain_id: int,
        parent_id: int,
        prior: float,
        order: int | None = None,
        preview: LinkPreview | None = None,
    ) -> int:
        """Queue a request with its link's evidence; ``order`` keeps the place of an
        entry it replaces; returns its entry id."""
        group = self.pages.group_of(parent_id, link_context(request))
        tokens = link_tokens(request.url, anchor_text(request)) if self.strategy.reads_link_tokens else None
        entry = self.store.add(request, static, domain_id, parent_id, prior, group, order, tokens)
        if self.entry_sections is not None:
            self.entry_sections.note(entry, request.url)
        tier = int(request.priority)
        self.tier_sizes[tier] += 1
        if self.listener is not None:  # first: the gain strategy reads the entry's link value
            self.listener.on_queued(entry, request, self.pages.parent_score(parent_id), domain_id, preview)
        self.strategy.push(tier, entry)
        if not request.dont_filter:
            self.queued_urls[request.url] = entry
        self.new_domains.note_link(domain_id, entry, prior)
        return entry

    def top_tier(self) -> float:
        """The highest priority tier with queued entries (-inf when none)."""
        sizes = self.tier_sizes
        if len(sizes) == 1:  # the usual crawl: every request of priority 0 (asked before each release)
            for tier, size in sizes.items():
                return tier if size else float("-inf")
        return max((tier for tier, size in sizes.items() if size), default=float("-inf"))

    def queued_entry(self, url: str) -> int | None:
        """The queued entry of a URL, if a strategy ranked by link prior could move it."""
        if not self.strategy.ranks_by_link_prior:
            return None
        return self.queued_urls.get(url)

    def take_better_link(
        self,
        entry: int,
        update_meta: Callable[[Request], None],
        static: np.ndarray,
        domain_id: int,
        parent_id: int,
        prior: float,
        preview: LinkPreview | None = None,
    ) -> int:
        """Give a queued entry the evidence of a better link to its URL: its request
        (its meta changed by ``update_meta(request)``) is queued again with these features and
        prior, in its first place of arrival; the strategy drops the old id when it meets it.
        """
        request = self.store.take_keeping_id(entry)
        order = int(self.store.order[entry])
        self.tier_sizes[int(request.priority)] -= 1
        if self.listener is not None:
            self.listener.on_dropped(entry)
        update_meta(request)
        return self.add(request, static, domain_id, parent_id, prior, order, preview)

    def take_all(self) -> Iterator[tuple[Request, np.ndarray, int, int, float]]:
        """Remove every queued entry: ``(request, static, domain id, parent, prior)`` of each."""
        store = self.store
        for entry in store.live_ids().tolist():
            item = (
                store.requests[entry],
                store.static[entry].copy(),
                int(store.domain[entry]),
                int(store.parent[entry]),
                float(store.prior[entry]),
            )
            store.take(entry)
            if self.listener is not None:
                self.listener.on_dropped(entry)
            yield item

    def revalue(self, value: Callable[[str, Mapping[str, Any], int], tuple[float, float]]) -> int:
        """Value every queued entry anew: ``value(url, meta, parent page id)`` gives its
        ``(anchor_similarity, link prior)``; the strategy then re-orders what it holds.
        Returns the number of entries valued (the cost is one call per queued entry)."""
        store = self.store
        entries = store.live_ids().tolist()
        for entry in entries:
            url, meta = store.requests.url_and_meta(entry)
            similarity, prior = value(url, meta, int(store.parent[entry]))
            store.static[entry, _ANCHOR_SIMILARITY] = similarity
            store.prior[entry] = prior + 0.0
        self.strategy.reorder()
        self.new_domains.rebuild(entries)  # the young domains' links, by the new priors
        return len(entries)

    # -- what strategies read (QueuedEntries) -------------------------------------------
    def priors(self, entries: np.ndarray) -> np.ndarray:
        return self.store.priors(entries)

    def arrival_orders(self, entries: np.ndarray) -> np.ndarray:
        return self.store.arrival_orders(entries)

    def prior_of(self, entry: int) -> float:
        return float(self.store.prior[entry])

    def depths(self, entries: np.ndarray) -> np.ndarray:
        return np.rint(self.store.static[entries, _DEPTH] * DEPTH_SCALE)

    def sibling_misses(self, entry: int) -> float:
        """Fetched links of an entry's sibling group, while none of them led to a relevant page."""
        return self.pages.misses(int(self.store.group[entry]))

    def sibling_misses_of(self, entries: np.ndarray) -> np.ndarray:
        """:meth:`sibling_misses` of many entries at once."""
        return self.pages.misses_of(self.store.group[entries])

    def arrival_order_of(self, entry: int) -> int:
        return int(self.store.order[entry])

    def section_lift(self, entry: int) -> float:
        """What the fetched pages of an entry's site section were worth, against the crawl's
        mean (:meth:`~adaptive_spider.frontier.sections.SectionReturns.lift`; 1 when off)."""
        return self.pages.sections.lift(self.store.requests.url(entry))

    def section_lifts(self, entries: np.ndarray) -> np.ndarray:
        """:meth:`section_lift` of many entries at once."""
        if self.entry_sections is None:
            return np.ones(len(entries))
        return self.entry_sections.lifts(entries, self.pages.sections)

    def take_raised_sections(self) -> list[str]:
        """Sections whose lift rose notably since their entries were last ranked."""
        return self.pages.sections.take_raised()

    def is_queued(self, entry: int) -> bool:
        return bool(self.store.live[entry])

    def explored_share(self) -> float:
        return self.new_domains.n_explored / self.n_released if self.n_released else 0.0

    def expected_gain(self, entry: int) -> float:
        """The listener's current expected gain of a queued entry (its link prior without one)."""
        gain = getattr(self.listener, "gain", None)
        value = gain(entry) if gain is not None else None
        return float(self.store.prior[entry]) if value is None else value

    def link_tokens(self, entries: np.ndarray) -> np.ndarray:
        """The hashed URL and anchor tokens of entries (n x TOKEN_WIDTH; a strategy that reads them only)."""
        return self.store.tokens[entries]

    def url_of(self, entry: int) -> str:
        return self.store.requests.url(entry)

    def tier_of(self, entry: int) -> int:
        return self.store.requests.priority(entry)

    def parent_of(self, entry: int) -> int:
        return int(self.store.parent[entry])

    def domain_of(self, entry: int) -> int:
        return int(self.store.domain[entry])

    def page_domain(self, page_id: int) -> int:
        return int(self.pages.domain[page_id])

    def features(self, entries: np.ndarray) -> np.ndarray:
        """Current 11-feature vectors of queued entries."""
        store = self.store
        return assemble(
            store.static[entries],
            self.domains.features(store.domain[entries]),
            self.pages.sibling_scores(store.group[entries]),
        )

    def next_actions(self, page_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Current feature vectors (b x k x 11) of the kept outlinks of each page,
        their link priors (b x k) and which of them exist (b x k): the next states
        of the DQN's transitions."""
        static, domain_ids, groups, priors, mask = self.pages.children_of(page_keys)
        b, k, _ = static.shape
        vectors = assemble(
            static.reshape(b * k, -1),
            self.domains.features(domain_ids.reshape(-1)),
            self.pages.sibling_scores(groups.reshape(-1)),
        )
        return vectors.reshape(b, k, -1), priors, mask

    # -- releasing ----------------------------------------------------------------------
    def next_batch(
        self,
        n: int,
        hold_below: float | None = None,
        in_flight: DomainLoad | None = None,
        blind_below: float | None = None,
    ) -> list[tuple[Request, Choice]]:
        """Up to ``n`` requests for the ready queue, best first, each with its
        :class:`Choice` (leaf, score and the features it had when chosen).

        With ``hold_below``, a chosen entry whose link prior is lower stays queued
        and ends the round: the caller would rather wait for better links.

        With ``in_flight``, a chosen entry of a slow domain that has as many requests in
        flight as it may is *parked* (out of the strategy's reach) and the round looks
        further for other domains' entries (at most ``BUSY_PASSES_PER_ROUND`` times ``n``
        parked per round): released anyway, it would wait in the downloader's queue for
        that domain, holding a place another domain's request could use. A parked
        domain's best entries go back to the strategy as its requests complete, as many
        as it has free places (all of them when the caller gives no ``in_flight``).

        ``blind_below`` (during the cold start only): links whose prior is lower show no sign
        of relevance; the strategy may rank them otherwise (Strategy.rank_blind_links).
        """
        self.round += 1
        self.strategy.rank_blind_links(blind_below)
        self._wake_probed_domains()
        self._load = in_flight
        if in_flight is not None and in_flight.slow_limit >= 0:
            in_flight.slow_count = sum(n for d, n in in_flight.counts.items() if self._slow_enough(d))
        self._unpark()
        self._parked_this_round = 0
        accepted: list[tuple[int, Choice]] = []
        exploring = self.new_domains.links(n)
        try:
            held = self._select(n - len(exploring), n, hold_below, accepted)
            self._explore(exploring, accepted)
            if held:
                return self._release(accepted)
            if exploring and len(accepted) < n:  # the strategy had chosen some of them itself
                self._select(n, n, hold_below, accepted)
            if not accepted:
                # With parked entries, requests are in flight: a probe may still answer.
                self._release_deferred(n, accepted, give_up_probes=not self.parked)
            return self._release(accepted)
        finally:
            self._load = None
            self._explored_now.clear()

    def _select(self, target: int, n: int, hold_below: float | None, accepted: list) -> bool:
        """Accept the strategy's choices until ``target`` are accepted; whether a weak link
        (prior below ``hold_below``) ended the round."""
        for tier in sorted((t for t, size in self.tier_sizes.items() if size), reverse=True):
            while len(accepted) < target and self.strategy.count(tier) and not self._looked_far_enough(n):
                choices = [c for c in self.strategy.select(tier, target - len(accepted)) if self._still_queued(c.entry)]
                weak = [] if hold_below is None else [c for c in choices if self.store.prior[c.entry] < hold_below]
                for choice in choices:
                    if choice in weak:
                        self.strategy.push(tier, choice.entry)
                    else:
                        self._filter_by_domain(tier, choice, accepted)
                if weak:
                    return True
            if accepted or self._looked_far_enough(n):
                break
        return False

    def _explore(self, exploring: list[tuple[int, int]], accepted: list) -> None:
        """Accept the new domains' links reserved for this round, unless the strategy chose them
        (or another link of their domain) meanwhile."""
        if not exploring:
            return
        chosen = {choice.entry for _, choice in accepted}
        for tier, entry in exploring:
            domain_id = int(self.store.domain[entry])
            if entry in chosen or not self.store.live[entry] or not self.new_domains.is_young(domain_id):
                continue
            if self.is_busy(domain_id):  # requests in flight, from before a restart
                continue
            prior = float(self.store.prior[entry])
            tokens = self.store.tokens[entry] if self.strategy.reads_link_tokens else None
            self._explored_now.add(entry)
            self.new_domains.n_explored += 1
            self.filtered["new_domain"] += 1
            self._accept(tier, Choice(entry, score=prior, prior=prior, tokens=tokens), accepted)

    def _looked_far_enough(self, n: int) -> bool:
        return self._parked_this_round >= BUSY_PASSES_PER_ROUND * n

    def is_busy(self, domain_id: int) -> bool:
        """Whether a domain has its share of requests in flight, and is slow enough for it to matter."""
        load = self._load
        return load is not None and load.is_busy(domain_id) and self._slow_enough(domain_id)

    def _park(self, tier: int, choice: Choice, domain_id: int) -> None:
        """Keep a busy domain's chosen entry out of the strategy until the domain has a free place
        (the strategy would choose it again in every round, and never reach other domains')."""
        order = self.arrival_order_of(choice.entry)
        heapq.heappush(self.parked.setdefault(domain_id, []), (-choice.score, order, tier, choice.entry))
        self._parked_this_round += 1
        self.filtered["parked_busy"] += 1

    def _unpark(self) -> None:
        """Give parked entries back to the strategy: a domain's best ones, as many as it has
        free places (every one when there is no load to go by, or the domain is no longer slow)."""
        load = self._load
        for domain_id in list(self.parked):
            heap = self.parked[domain_id]
            if load is None or not self.is_busy(domain_id):
                free = len(heap) if load is None or not self._slow_enough(domain_id) else load.free(domain_id)
                for _ in range(min(free, len(heap))):
                    _, _, tier, entry = heapq.heappop(heap)
                    if self._still_queued(entry):
                        self.strategy.push(tier, entry)
                if not heap:
                    del self.parked[domain_id]

    def _slow_enough(self, domain_id: int) -> bool:
        threshold = self.config.domain_in_flight_ms
        # One answer is enough: a domain's first requests are the ones that would fill the downloader.
        return threshold <= 0 or self.domains.is_slow(domain_id, threshold, min_answers=1)

    def _wake_probed_domains(self, force: bool = False) -> None:
        """Return to the strategy the entries of domains whose probe has answered."""
        for domain_id in [d for d in self.waiting if force or not self.domains.is_untried(d)]:
            for tier, choice in self.waiting.pop(domain_id):
                if self._still_queued(choice.entry):
                    self.strategy.push(tier, choice.entry)

    def _still_queued(self, entry: int) -> bool:
        """Whether an entry a strategy gave back is still queued (not replaced by a better
        link); a replaced one's id is free from now on."""
        if self.store.live[entry]:
            return True
        self.store.free_id(entry)
        return False

    def _filter_by_domain(self, tier: int, choice: Choice, accepted: list) -> None:
        """Accept a chosen entry, or drop it (capped, unreliable, dead or unreachable domain), defer it (slow
        domain) or let it wait for its domain's probe (never-fetched domain)."""
        domain_id = int(self.store.domain[choice.entry])
        reason = self.drop_reason(domain_id)
        if reason:
            self._drop(tier, choice.entry, reason)
        elif self.domains.is_slow(domain_id, self.config.slow_domain_ms):
            choice.features = None  # released in a later round: with the features of then
            self.slow_deferred.append((tier, choice))
            self.filtered["deferred_slow"] += 1
        elif self.strategy.probes_new_domains and self.domains.is_untried(domain_id) and domain_id not in self.unprobed:
            choice.features = None
            self.waiting.setdefault(domain_id, []).append((tier, choice))
        elif self.is_busy(domain_id):
            self._park(tier, choice, domain_id)
        else:
            self._accept(tier, choice, accepted)

    def _accept(self, tier: int, choice: Choice, accepted: list) -> None:
        # Count the release now, so a domain cap holds within one batch too.
        domain_id = int(self.store.domain[choice.entry])
        self.domains.record_release(domain_id)
        load = self._load
        if load is not None:
            load.add(domain_id, slow=load.slow_limit >= 0 and self._slow_enough(domain_id))
        accepted.append((tier, choice))

    def _release_deferred(self, n: int, accepted: list, give_up_probes: bool = True) -> None:
        """When nothing else is left: accept the entries of slow domains, or else those
        waiting for a probe."""
        if not self.slow_deferred and self.waiting:
            if not give_up_probes:
                return
            # Nothing else is left: a probe that never answers (filtered before download)
            # must not keep its domain's entries waiting for ever. Nor send them to wait
            # again: every later round would walk the whole frontier back into waiting.
            self.unprobed.update(self.waiting)
            self._wake_probed_domains(force=True)
            for tier in sorted(self.tier_sizes, reverse=True):
                while len(accepted) < n and self.strategy.count(tier) and not self._looked_far_enough(n):
                    for choice in self.strategy.select(tier, n - len(accepted)):
                        if not self._still_queued(choice.entry):
                            continue
                        domain_id = int(self.store.domain[choice.entry])
                        if self.is_busy(domain_id):
                            self._park(tier, choice, domain_id)
                        else:
                            self._accept(tier, choice, accepted)
            return
        busy = []
        while self.slow_deferred and len(accepted) < n:
            tier, choice = self.slow_deferred.popleft()
            if not self._still_queued(choice.entry):
                continue
            domain_id = int(self.store.domain[choice.entry])
            reason = self.drop_reason(domain_id)
            if reason:
                self._drop(tier, choice.entry, reason)
            elif self.is_busy(domain_id):
                busy.append((tier, choice))
            else:
                self._accept(tier, choice, accepted)
        self.slow_deferred.extendleft(reversed(busy))  # first in line again, in their order

    def _release(self, accepted: list) -> list[tuple[Request, Choice]]:
        if not accepted:
            return []
        # A strategy that scored its choices with their features gave them along (same round, same values).
        unscored = [choice for _, choice in accepted if choice.features is None]
        if unscored:
            vectors = self.features(np.array([choice.entry for choice in unscored], dtype=np.int64))
            for choice, vector in zip(unscored, vectors):
                choice.features = vector
        released = []
        listener = self.listener
        self.n_released += len(accepted)
        for tier, choice in accepted:
            choice.prior = float(self.store.prior[choice.entry])
            request = self._take(tier, choice.entry, keep_id=choice.entry in self._explored_now)
            if listener is not None:
                listener.on_released(choice.entry, request)
            released.append((request, choice))
        return released

    def drop_reason(self, domain_id: int) -> str | None:
        config = self.config
        if self.domains.is_capped(domain_id, config.domain_max_pages):
            return "domain_cap"
        if self.domains.is_unreliable(domain_id, config.unreliable_threshold):
            return "unreliable"
        if self.domains.is_dead(domain_id, config.dead_domain_answers):
            return "dead_domain"
        if self.domains.is_unreachable(domain_id, config.unreachable_failures):
            return "unreachable"
        return None

    def _drop(self, tier: int, entry: int, reason: str) -> None:
        self._take(tier, entry)
        self.filtered[reason] += 1
        if self.listener is not None:
            self.listener.on_dropped(entry)

    def _take(self, tier: int, entry: int, keep_id: bool = False) -> Request:
        """Remove a released or dropped entry; ``keep_id``: the strategy still holds its id
        (it frees the id when it gives the entry back, see :meth:`_still_queued`)."""
        self.tier_sizes[tier] -= 1
        request = self.store.take_keeping_id(entry) if keep_id else self.store.take(entry)
        if self.queued_urls.get(request.url) == entry:
            del self.queued_urls[request.url]
        return request

    # -- learning ------------------------------------------------------------------------
    def observe(
        self, x: Any, reward: float, page_key: int, leaf: int = -1, prior: float = 0.0, link: Any = None
    ) -> None:
        """A released entry's page (``page_key``, -1: none) answered with ``reward``: the strategy learns.

        ``link``: the hashed tokens of the entry's link, when the strategy gave them with its choice.
        """
        x = np.asarray(x, dtype=np.float32)
        if link is None:  # a strategy of one's own keeps its signature
            self.strategy.observe(x, reward, page_key, leaf, prior)
        else:  # only a strategy that gave its choices tokens gets them back (Tres.observe)
            strategy: Any = self.strategy
            strategy.observe(x, reward, page_key, leaf, prior, link=np.asarray(link, dtype=np.int32))

    def stats(self) -> dict:
        waiting = sum(len(entries) for entries in self.waiting.values())
        return {
            "queued": len(self),
            "held": len(self.slow_deferred),
            "waiting": waiting,
            "parked": sum(len(heap) for heap in self.parked.values()),
            "rounds": self.round,
            **self.strategy.stats(),
        }

    # -- persistence ---------------------------------------------------------------------
    def state_dict(self, serialize: Callable[[Request], dict | None] | None) -> dict:
        """Everything queued (requests through ``serialize``) and the strategy's model.

        Requests ``serialize`` rejects (returns ``None``) are counted, not saved. Without
        ``serialize``, the queue is left out (the JOBDIR journal holds it already).
        """
        store = self.store
        entries, lost = [], 0
        live = sorted(store.live_ids(), key=lambda e: store.order[e]) if serialize is not None else []
        for entry in live:
            request = store.requests[entry]
            data = serialize(request) if serialize is not None else None
            if data is None:
                lost += 1
                continue
            entries.append(
                {
                    "request": data,
                    "static": store.static[entry].copy(),
                    "domain": self.domains.profiles[store.domain[entry]].name,
                    "parent": int(store.parent[entry]),
                    "prior": float(store.prior[entry]),
                }
            )
        return {
            "entries": entries,
            "unserializable": lost,
            "round": self.round,
            "filtered": dict(self.filtered),
            "strategy": self.strategy.state_dict(),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict, deserialize: Callable[[dict], Request]) -> None:
        self.round = state["round"]
        self.filtered.update(state["filtered"])
        self.strategy.load_state_dict(state["strategy"])
        self.rng.bit_generator.state = state["rng"]
        for item in state["entries"]:
            request = deserialize(item["request"])
            domain_id = self.domains.id_of(item["domain"])
            self.add(request, item["static"], domain_id, item["parent"], item["prior"])
