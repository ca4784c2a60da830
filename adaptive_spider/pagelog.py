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

    def __init__(self, max_children: int = 16):
        self.max_children = max_children
        self.relevance = np.zeros(1024, dtype=np.float32)
        self.domain = np.zeros(1024, dtype=np.int32)
        self.sibling_sum = np.zeros(1024, dtype=np.float32)
        self.sibling_n = np.zeros(1024, dtype=np.float32)
        self.children: dict[int, list] = {}
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

    def add_child(self, page_id: int, static: np.ndarray, domain_id: int) -> None:
        """Keep the first ``max_children`` outlinks of a page as its next actions."""
        if not 0 <= page_id < self.size or self.max_children == 0:
            return
        kept = self.children.setdefault(page_id, [])
        if len(kept) < self.max_children:
            kept.append((static, domain_id))

    def children_of(self, page_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Static features (k x 6) and domain ids (k) of a page's kept outlinks."""
        kept = self.children.get(int(page_id))
        if not kept:
            return np.zeros((0, N_STATIC), dtype=np.float32), np.zeros(0, dtype=np.int32)
        return np.vstack([static for static, _ in kept]), np.array([d for _, d in kept], dtype=np.int32)

    def _grow(self) -> None:
        for name in ("relevance", "domain", "sibling_sum", "sibling_n"):
            column = getattr(self, name)
            setattr(self, name, np.concatenate([column, np.zeros_like(column)]))

    def state_dict(self) -> dict:
        n = self.size
        return {
            "relevance": self.relevance[:n].copy(),
            "domain": self.domain[:n].copy(),
            "sibling_sum": self.sibling_sum[:n].copy(),
            "sibling_n": self.sibling_n[:n].copy(),
            "children": self.children,
        }

    def load_state_dict(self, state: dict) -> None:
        n = len(state["relevance"])
        capacity = max(1024, 2 * n)
        for name in ("relevance", "domain", "sibling_sum", "sibling_n"):
            column = np.zeros(capacity, dtype=getattr(self, name).dtype)
            column[:n] = state[name]
            setattr(self, name, column)
        self.children = state["children"]
        self.size = n
