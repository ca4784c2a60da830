"""Storage of the queued requests and their static link features.

Entries live in growable numpy columns indexed by an integer entry id, so the
strategies can gather the features of thousands of queued URLs at once; freed
ids are reused. The request objects themselves sit in a parallel list.
"""

from __future__ import annotations

import numpy as np

from adaptive_spider.features import N_STATIC


class FrontierStore:
    """Queued requests with, per entry: static features, domain id, parent page id,
    sibling group, link prior and the order of arrival."""

    def __init__(self, capacity: int = 1024):
        self.static = np.zeros((capacity, N_STATIC), dtype=np.float32)
        self.domain = np.zeros(capacity, dtype=np.int32)
        self.parent = np.full(capacity, -1, dtype=np.int64)
        self.group = np.full(capacity, -1, dtype=np.int64)
        self.prior = np.zeros(capacity, dtype=np.float32)
        self.order = np.zeros(capacity, dtype=np.int64)
        self.requests: list = [None] * capacity
        self._free: list[int] = []
        self._top = 0
        self._arrivals = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, request, static: np.ndarray, domain_id: int, parent_id: int, prior: float, group_id: int = -1) -> int:
        entry = self._free.pop() if self._free else self._next_slot()
        self.static[entry] = static
        self.domain[entry] = domain_id
        self.parent[entry] = parent_id
        self.group[entry] = group_id
        self.prior[entry] = prior
        self.order[entry] = self._arrivals
        self.requests[entry] = request
        self._arrivals += 1
        self.size += 1
        return entry

    def take(self, entry: int):
        """Remove an entry and return its request."""
        request = self.requests[entry]
        self.requests[entry] = None
        self._free.append(entry)
        self.size -= 1
        return request

    def live_ids(self) -> np.ndarray:
        return np.array([i for i in range(self._top) if self.requests[i] is not None], dtype=np.int64)

    def _next_slot(self) -> int:
        if self._top == len(self.requests):
            self._grow()
        entry = self._top
        self._top += 1
        return entry

    def _grow(self) -> None:
        extra = len(self.requests)
        self.static = np.vstack([self.static, np.zeros_like(self.static[:extra])])
        self.domain = np.concatenate([self.domain, np.zeros(extra, dtype=self.domain.dtype)])
        self.parent = np.concatenate([self.parent, np.full(extra, -1, dtype=self.parent.dtype)])
        self.group = np.concatenate([self.group, np.full(extra, -1, dtype=self.group.dtype)])
        self.prior = np.concatenate([self.prior, np.zeros(extra, dtype=self.prior.dtype)])
        self.order = np.concatenate([self.order, np.zeros(extra, dtype=self.order.dtype)])
        self.requests.extend([None] * extra)
