"""Learning-free strategies: breadth-first, depth-first, random and best-first.

They share the frontier's storage, tiers and domain filters with the learned
strategies, so a comparison between them measures the order alone.
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict, deque
from typing import Any

import numpy as np

from adaptive_spider.frontier.sections import section_of
from adaptive_spider.frontier.strategies.base import Choice, QueuedEntries, Strategy, blind_rank, focus_key


class TierPools(Strategy):
    """Entries kept in one container per tier (``pool_type``); subclasses say how
    an entry goes in (:meth:`push`) and which come out (:meth:`select`)."""

    pool_type: Any = list

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        self.pools: dict[int, Any] = defaultdict(self.pool_type)

    def push(self, tier: int, entry: int) -> None:
        self.pools[tier].append(entry)

    def count(self, tier: int) -> int:
        return len(self.pools[tier])


class BreadthFirst(TierPools):
    """First in, first out within a tier: Scrapy's BFO order."""

    name = "bfs"
    probes_new_domains = False
    explores_new_domains = False
    pool_type = deque

    def select(self, tier: int, n: int) -> list[Choice]:
        queue = self.pools[tier]
        return [Choice(queue.popleft()) for _ in range(min(n, len(queue)))]


class DepthFirst(BreadthFirst):
    """Last in, first out within a tier: Scrapy's default DFO order."""

    name = "dfs"

    def select(self, tier: int, n: int) -> list[Choice]:
        queue = self.pools[tier]
        return [Choice(queue.pop()) for _ in range(min(n, len(queue)))]


class RandomOrder(TierPools):
    """Uniformly random order (seeded)."""

    name = "random"
    probes_new_domains = False
    explores_new_domains = False

    def select(self, tier: int, n: int) -> list[Choice]:
        pool = self.pools[tier]
        chosen = []
        for _ in range(min(n, len(pool))):
            index = int(self.rng.integers(len(pool)))
            pool[index], pool[-1] = pool[-1], pool[index]
            chosen.append(Choice(pool.pop()))
        return chosen


class BestFirst(TierPools):
    """Highest link prior first (anchor and URL words, then the linking page's relevance).

    A link whose sibling group has missed so far (its fetched links led to no relevant
    page) ranks by its prior times ``patience / (patience + misses)``
    (``ADAPTIVE_SIBLING_PATIENCE``): a long list under a heading that shares one word
    with the query ("Variables" for "condition variables") is tried, and then gives way; a
    table of contents none of whose fetched links was relevant gives way as a whole, more
    slowly (:meth:`~adaptive_spider.frontier.pagelog.PageLog.misses`).
    A key is lowered when its entry comes to the top (lazily) rather than for every queued
    sibling at each fetch. A group's first hit after misses does not raise its waiting
    links at once: they get their prior back at the next revaluation (:meth:`reorder`,
    when the query expansion changes), as a reorder per hit would cost a pass over the queue.

    A link's prior is also multiplied by its site section's lift (``ADAPTIVE_SECTION_LIFT``,
    :mod:`~adaptive_spider.frontier.sections`): a package whose fetched classes were relevant
    brings forward its other classes, whose bare names share no word with the query, and a
    class page that was relevant brings forward the members filed in the directory named
    after it (cppreference's ``binomial_distribution/reset.html``). A heap
    cannot raise a key in place, so a section whose lift rose has its queued links pushed again
    under a new generation, and the older items are skipped when they surface.

    During the cold start, a link with no sign of relevance (prior below ``ADAPTIVE_HOLD_BELOW``)
    ranks by :func:`~adaptive_spider.frontier.strategies.base.blind_rank`: nearest the seeds
    first. The start page's table of contents, whose entries share no word with the query, comes
    before the links of a site the new-domain share opened whose only sign is a page that shares
    one common word with the query ("process" for "subprocess child process pipes").
    """

    name = "bestfirst"
    ranks_by_link_prior = True

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        self.patience = float(config.sibling_patience)
        self.blind_below: float | None = None
        self.lifts = float(getattr(config, "section_lift", 1.0)) > 1.0
        # Each queued entry's heap item is the one of its generation: a section's rise pushes
        # its entries again (a heap cannot raise a key in place) and the older items go stale.
        # (An array by entry id, 0 for none: 8 bytes an entry where a dict takes about 100.)
        self.generation = np.zeros(1024, dtype=np.int64)
        self._generations = 0
        self.stale: dict[int, int] = defaultdict(int)
        # The entries pushed under each (tier, site section): those a section's rise re-ranks.
        self.by_section: dict[tuple[int, str], array] = {}

    def rank_blind_links(self, below: float | None) -> None:
        if below != self.blind_below:
            self.blind_below = below
            self.reorder()

    def key_of(self, entry: int) -> float:
        """The rank of an entry now: its link prior, lowered while its siblings miss, times its
        site section's lift (a blind link's :func:`blind_rank` during the cold start)."""
        prior = self.frontier.prior_of(entry)
        below = self.blind_below
        if below is not None and prior < below:
            entries = np.array([entry])
            return float(blind_rank(self.frontier.priors(entries), self.frontier.depths(entries), below)[0])
        misses = self.frontier.sibling_misses(entry) if self.patience else 0.0
        lift = self.frontier.section_lift(entry) if self.lifts and self.frontier.is_queued(entry) else 1.0
        return focus_key(prior, misses, lift, self.patience)

    def count(self, tier: int) -> int:
        return len(self.pools[tier]) - self.stale[tier]

    def push(self, tier: int, entry: int) -> None:
        self._push(tier, entry, self.key_of(entry))
        if self.lifts and self.frontier.is_queued(entry):
            key = (tier, section_of(self.frontier.url_of(entry)))
            entries = self.by_section.get(key)
            if entries is None:
                entries = self.by_section[key] = array("q")
            entries.append(entry)

    def _push(self, tier: int, entry: int, key: float) -> None:
        if entry >= len(self.generation):
            self.generation = np.concatenate([self.generation, np.zeros(entry + 1, dtype=np.int64)])
        if self.generation[entry]:
            self.stale[tier] += 1  # its older item is superseded
        self._generations += 1
        self.generation[entry] = self._generations
        heapq.heappush(self.pools[tier], (-key, self.frontier.arrival_order_of(entry), self._generations, entry))

    def _generation_of(self, entry: int) -> int:
        """The generation of an entry's current heap item (0: it has none)."""
        return int(self.generation[entry]) if entry < len(self.generation) else 0

    def _raise_sections(self) -> None:
        """Rank anew the queued entries of the sections whose lift rose (lowering is lazy)."""
        for section in self.frontier.take_raised_sections():
            for tier in list(self.pools):
                entries = self.by_section.get((tier, section))
                if entries is None:
                    continue
                kept: dict[int, None] = {}
                for entry in entries:
                    # A released entry's id is reused by the next link queued, maybe in another
                    # tier (a redirect's or a retry's priority): pushed here, its item in its own tier's
                    # heap would go stale uncounted, and that tier would never look empty.
                    if (
                        self._generation_of(entry)
                        and self.frontier.is_queued(entry)
                        and entry not in kept
                        and self.frontier.tier_of(entry) == tier
                    ):
                        self._push(tier, entry, self.key_of(entry))
                        kept[entry] = None
                self.by_section[(tier, section)] = array("q", kept)

    def reorder(self) -> None:
        for tier, heap in self.pools.items():
            # Replaced entries' ids stay in (the frontier frees them when they come out).
            heap[:] = [
                (-self.key_of(entry), order, generation, entry)
                for _, order, generation, entry in heap
                if self._generation_of(entry) == generation
            ]
            heapq.heapify(heap)
            self.stale[tier] = 0

    def select(self, tier: int, n: int) -> list[Choice]:
        if self.lifts:
            self._raise_sections()
        heap = self.pools[tier]
        chosen: list[Choice] = []
        while heap and len(chosen) < n:
            negative_key, order, generation, entry = heapq.heappop(heap)
            if self._generation_of(entry) != generation:
                self.stale[tier] -= 1
                continue
            key = self.key_of(entry) if self.patience or self.lifts else -negative_key
            if key < -negative_key - 1e-9:  # its siblings or section missed since it was ranked: back in, lower
                heapq.heappush(heap, (-key, order, generation, entry))
                continue
            self.generation[entry] = 0
            chosen.append(Choice(entry, score=key))
        if not heap:  # nothing stale can be left in an empty heap, whatever was counted
            self.stale[tier] = 0
        return chosen
