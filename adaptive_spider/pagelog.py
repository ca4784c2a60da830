"""The log of fetched pages that the frontier learns from.

Each fetched page gets an integer id. The log keeps, per page, its relevance
(the ``parent_score`` of the links found on it), the relevance of the pages
fetched from its links (their mean is the ``sibling_score`` of the links still
queued), and a sample of its outlinks' static features: the *next actions* of
the transition that fetching the page was, for the Q-network's targets.
"""

from __future__ import annotations

import numpy as np

from adaptive_spider.features import N_STATIC


class PageLog:
    """Per-page relevance, sibling statistics and a sample of outlinks."""

    COLUMNS = ("relevance", "domain", "sibling_sum", "sibling_n", "child_static", "child_domain", "child_prior", "child_n")

    def __init__(self, max_children: int = 16, capacity: int = 1024):
        self.max_children = max_children
        self.relevance = np.zeros(capacity, dtype=np.float32)
        self.domain = np.zeros(capacity, dtype=np.int32)
        self.sibling_sum = np.zeros(capacity, dtype=np.float32)
        self.sibling_n = np.zeros(capacity, dtype=np.float32)
        # The first outlinks of each page, kept as the next actions of its transition.
        self.child_static = np.zeros((capacity, max_children, N_STATIC), dtype=np.float32)
        self.child_domain = np.zeros((capacity, max_children), dtype=np.int32)
        self.child_prior = np.zeros((capacity, max_children), dtype=np.float32)
        self.child_n = np.zeros(capacity, dtype=np.int32)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, domain_id: int, relevance: float, parent_id: int = -1) -> int:
        """Log a fetched page; it also counts as a fetched sibling under its parent."""
        if self.size == len(self.relevance):
            self._grow()
        page_id = self.size
        self.relevance[page_id] = relevance
        self.domain[page_id] = domain_id
        self.size += 1
        if 0 <= parent_id < self.size:
            self.sibling_sum[parent_id] += relevance
            self.sibling_n[parent_id] += 1
        return page_id

    def parent_score(self, page_id: int) -> float:
        return float(self.relevance[page_id]) if 0 <= page_id < self.size else 0.0

    def sibling_scores(self, parent_ids: np.ndarray) -> np.ndarray:
        """Mean relevance of fetched siblings, smoothed toward the parent's own score."""
        valid = (parent_ids >= 0) & (parent_ids < self.size)
        ids = np.where(valid, parent_ids, 0)
        scores = (self.sibling_sum[ids] + self.relevance[ids]) / (self.sibling_n[ids] + 1.0)
        return np.where(valid, scores, 0.0).astype(np.float32)

    def add_child(self, page_id: int, static: np.ndarray, domain_id: int, prior: float = 0.0) -> None:
        """Keep the first ``max_children`` outlinks of a page as its next actions."""
        if not 0 <= page_id < self.size:
            return
        slot = self.child_n[page_id]
        if slot < self.max_children:
            self.child_static[page_id, slot] = static
            self.child_domain[page_id, slot] = domain_id
            self.child_prior[page_id, slot] = prior
            self.child_n[page_id] = slot + 1

    def children_of(self, page_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Static features (b x k x 6), domain ids, link priors and a validity mask
        (b x k each) of the kept outlinks of a batch of pages (ids outside the log
        have none)."""
        page_ids = np.asarray(page_ids, dtype=np.int64)
        valid = (page_ids >= 0) & (page_ids < self.size)
        rows = np.where(valid, page_ids, 0)
        counts = np.where(valid, self.child_n[rows], 0)
        mask = np.arange(self.max_children)[None, :] < counts[:, None]
        return self.child_static[rows], self.child_domain[rows], self.child_prior[rows], mask

    def _grow(self) -> None:
        for name in self.COLUMNS:
            column = getattr(self, name)
            setattr(self, name, np.concatenate([column, np.zeros_like(column)]))

    def state_dict(self) -> dict:
        return {name: getattr(self, name)[: self.size].copy() for name in self.COLUMNS}

    def load_state_dict(self, state: dict) -> None:
        n = len(state["relevance"])
        self.size = 0
        for name in self.COLUMNS:
            saved = state[name]
            column = np.zeros((max(1024, 2 * n), *saved.shape[1:]), dtype=saved.dtype)
            column[:n] = saved
            setattr(self, name, column)
        self.max_children = self.child_static.shape[1]
        self.size = n
