"""Expected information gain first: the founding paper's own loop as a frontier order.

Crawl4AI's adaptive crawler ranks links by expected information gain, relevance x novelty
x authority. The project computes that gain for the stop decision
(:mod:`adaptive_spider.sufficiency.linkvalues`); this strategy orders the frontier by it.
Unlike the link prior, the gain moves as the crawl learns: novelty falls for links whose
query terms the fetched pages already cover well, and a domain's authority follows the
relevance of its pages. So the heap is re-valued lazily, as the link values' own heap is:
the top entry is valued anew when it is taken and goes back if it lost its place.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any

import numpy as np

from adaptive_spider.frontier.strategies.base import Choice, QueuedEntries, Strategy

#: Most entries valued anew per chosen entry (beyond, the top's last value is taken as is).
MAX_REVALUED = 16


class ExpectedGain(Strategy):
    """Highest expected gain first (``ADAPTIVE_STRATEGY = "gain"``)."""

    name = "gain"
    ranks_by_link_prior = True  # a better link to a queued URL brings a better preview

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        # Per tier: (-gain, arrival order, entry).
        self.heaps: dict[int, list[tuple[float, int, int]]] = defaultdict(list)
        self.revalued = 0

    def push(self, tier: int, entry: int) -> None:
        frontier = self.frontier
        heapq.heappush(self.heaps[tier], (-frontier.expected_gain(entry), frontier.arrival_order_of(entry), entry))

    def count(self, tier: int) -> int:
        return len(self.heaps[tier])

    def select(self, tier: int, n: int) -> list[Choice]:
        heap = self.heaps[tier]
        chosen: list[Choice] = []
        while heap and len(chosen) < n:
            chosen.append(self._take_best(heap))
        return chosen

    def _take_best(self, heap: list[tuple[float, int, int]]) -> Choice:
        frontier = self.frontier
        for _ in range(MAX_REVALUED):
            _, order, entry = heapq.heappop(heap)
            value = frontier.expected_gain(entry)
            self.revalued += 1
            if not heap or -value <= heap[0][0]:
                return Choice(entry, score=value)
            heapq.heappush(heap, (-value, order, entry))  # lost its place: valued anew, back in line
        _, _, entry = heapq.heappop(heap)
        return Choice(entry, score=frontier.expected_gain(entry))

    def stats(self) -> dict:
        return {"revalued": self.revalued}
