"""Learning-free strategies: breadth-first, depth-first, random and best-first.

They share the frontier's storage, tiers and domain filters with the learned
strategies, so a comparison between them measures the order alone.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque

from adaptive_spider.frontier.strategies.base import Choice, Strategy


class BreadthFirst(Strategy):
    """First in, first out within a tier: Scrapy's BFO order."""

    name = "bfs"
    probes_new_domains = False

    def __init__(self, frontier, config, rng):
        super().__init__(frontier, config, rng)
        self.queues: dict[int, deque] = defaultdict(deque)

    def push(self, tier, entry):
        self.queues[tier].append(entry)

    def select(self, tier, n):
        queue = self.queues[tier]
        return [Choice(queue.popleft()) for _ in range(min(n, len(queue)))]

    def count(self, tier):
        return len(self.queues[tier])


class DepthFirst(BreadthFirst):
    """Last in, first out within a tier: Scrapy's default DFO order."""

    name = "dfs"

    def select(self, tier, n):
        queue = self.queues[tier]
        return [Choice(queue.pop()) for _ in range(min(n, len(queue)))]


class RandomOrder(Strategy):
    """Uniformly random order (seeded)."""

    name = "random"
    probes_new_domains = False

    def __init__(self, frontier, config, rng):
        super().__init__(frontier, config, rng)
        self.pools: dict[int, list] = defaultdict(list)

    def push(self, tier, entry):
        self.pools[tier].append(entry)

    def select(self, tier, n):
        pool = self.pools[tier]
        chosen = []
        for _ in range(min(n, len(pool))):
            index = int(self.rng.integers(len(pool)))
            pool[index], pool[-1] = pool[-1], pool[index]
            chosen.append(Choice(pool.pop()))
        return chosen

    def count(self, tier):
        return len(self.pools[tier])


class BestFirst(Strategy):
    """Highest link prior first (anchor and URL words, then the linking page's relevance)."""

    name = "bestfirst"
    ranks_by_link_prior = True

    def __init__(self, frontier, config, rng):
        super().__init__(frontier, config, rng)
        self.heaps: dict[int, list] = defaultdict(list)

    def push(self, tier, entry):
        store = self.frontier.store
        heapq.heappush(self.heaps[tier], (-float(store.prior[entry]), int(store.order[entry]), entry))

    def select(self, tier, n):
        heap = self.heaps[tier]
        chosen = []
        for _ in range(min(n, len(heap))):
            negative_prior, _, entry = heapq.heappop(heap)
            chosen.append(Choice(entry, score=-negative_prior))
        return chosen

    def count(self, tier):
        return len(self.heaps[tier])
