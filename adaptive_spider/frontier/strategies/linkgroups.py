"""Tabular Q-learning over link groups.

A link's group is whether it stays on its parent's domain or crosses to another,
and the first segment of its path (``same:/library``, ``cross:/en``): links of
one group tend to lead to pages alike. Each group has a value learned from the
rewards of the pages its links led to, ``Q <- Q + alpha * (r + gamma * max Q' - Q)``
where ``max Q'`` is the best value among the groups of the links found on the
page. Selection is epsilon-greedy over the groups, with decaying epsilon; within
a group, links go best prior first.

Unlike the original formulation, the links of groups that are not chosen stay in
the frontier. Once ``max_groups`` groups exist, new groups merge into one
overflow group per side (``same:*``, ``cross:*``), so the table stays small.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.frontier.strategies.base import (
    Choice,
    LearningStrategy,
    QueuedEntries,
)


def group_key(url: str, same_domain: bool) -> str:
    path = urlsplit(url).path
    first = path.lstrip("/").split("/", 1)[0] if path.count("/") > 1 else ""
    return f"{'same' if same_domain else 'cross'}:/{first}"


class LinkGroups(LearningStrategy):
    """Epsilon-greedy choice among link groups, valued by tabular Q-learning."""

    name = "linkgroups"

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        self.group_ids: dict[str, int] = {}
        self.values: list[float] = []
        self.visits: list[int] = []
        self.heaps: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
        self.unfinished: list[tuple[int, float, int]] = []
        self.page_groups: dict[int, set] = defaultdict(set)

    def _group_of(self, entry: int) -> int:
        frontier = self.frontier
        parent = frontier.parent_of(entry)
        same = parent < 0 or frontier.page_domain(parent) == frontier.domain_of(entry)
        key = group_key(frontier.url_of(entry), same)
        if key not in self.group_ids:
            if len(self.group_ids) >= self.config.linkgroups_max_groups:
                key = key.split(":", 1)[0] + ":*"
            if key not in self.group_ids:
                self.group_ids[key] = len(self.values)
                self.values.append(0.0)
                self.visits.append(0)
        group = self.group_ids[key]
        if parent >= 0:
            self.page_groups[parent].add(group)
        return group

    def push(self, tier: int, entry: int) -> None:
        group = self._group_of(entry)
        frontier = self.frontier
        heapq.heappush(self.heaps[tier][group], (-frontier.prior_of(entry), frontier.arrival_order_of(entry), entry))

    def count(self, tier: int) -> int:
        return sum(len(heap) for heap in self.heaps[tier].values())

    def reorder(self) -> None:
        frontier = self.frontier
        for groups in self.heaps.values():
            for heap in groups.values():
                heap[:] = [(-frontier.prior_of(entry), order, entry) for _, order, entry in heap]
                heapq.heapify(heap)

    def select(self, tier: int, n: int) -> list[Choice]:
        groups = self.heaps[tier]
        chosen: list[Choice] = []
        while len(chosen) < n:
            live = [group for group, heap in groups.items() if heap]
            if not live:
                break
            if self.rng.random() < self.epsilon:
                group = live[int(self.rng.integers(len(live)))]
            else:
                # Unvisited groups first (optimism), then the best value.
                group = max(live, key=lambda g: (self.visits[g] == 0, self.values[g]))
            _, _, entry = heapq.heappop(groups[group])
            chosen.append(Choice(entry, score=self.values[group], leaf=group))
        return chosen

    def observe(self, x: np.ndarray, reward: float, page_key: int, leaf: int = -1, prior: float = 0.0) -> None:
        # The value of a page's links is known once they are queued, which happens
        # right after its reward: finish the previous transitions first.
        for transition in self.unfinished:
            self._update(*transition)
        self.unfinished = [(leaf, reward, page_key)] if 0 <= leaf < len(self.values) else []
        self.n_observed += 1

    def _update(self, group: int, reward: float, page_key: int) -> None:
        following = [self.values[g] for g in self.page_groups.pop(page_key, ())]
        target = reward + self.config.qnet_gamma * (max(following) if following else 0.0)
        self.values[group] += self.config.linkgroups_learning_rate * (target - self.values[group])
        self.visits[group] += 1

    def stats(self) -> dict:
        return {"groups": len(self.values), "epsilon": round(self.epsilon, 4)}

    def state_dict(self) -> dict:
        return {
            "group_ids": self.group_ids,
            "values": self.values,
            "visits": self.visits,
            "n_observed": self.n_observed,
        }

    def load_state_dict(self, state: dict) -> None:
        self.group_ids = state["group_ids"]
        self.values = state["values"]
        self.visits = state["visits"]
        self.n_observed = state["n_observed"]
