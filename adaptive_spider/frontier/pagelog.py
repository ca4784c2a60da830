"""The log of fetched pages that the frontier learns from.

Each fetched page gets an integer id. The log keeps, per page, its relevance
(the ``parent_score`` of the links found on it) and a sample of its outlinks'
static features: the *next actions* of the transition that fetching the page
was, for the Q-network's targets.

It also keeps the relevance of the pages fetched from each *sibling group*: the
links of one parent page under one context (the same headings and list label,
see :mod:`adaptive_spider.relevance.links`). Their mean is the ``sibling_score`` of the
group's links still queued. Grouping by context rather than by page alone keeps
a hub's unrelated sections apart: on an index page, the links beside relevant
ones ("The model layer") score high, the links of other sections do not. It counts
a group's *hits* too, its pages at or above ``hit_at`` (``ADAPTIVE_RELEVANT_THRESHOLD``):
a group with fetched links and no hit is a list that has missed so far.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from adaptive_spider.frontier.features import N_STATIC
from adaptive_spider.frontier.sections import SectionReturns


class PageLog:
    """Per-page relevance, sibling statistics and a sample of outlinks."""

    COLUMNS = (
        "relevance",
        "domain",
        "child_static",
        "child_domain",
        "child_group",
        "child_prior",
        "child_n",
        "links_n",
        "links_hits",
    )
    GROUP_COLUMNS = ("group_page", "group_sum", "group_n", "group_hits")
    #: How much a fetched link of the same page, in another group, counts as a miss of a group.
    OTHER_GROUPS_SHARE = 0.25

    def __init__(self, max_children: int = 16, capacity: int = 1024, hit_at: float = 0.5, section_lift: float = 1.0):
        self.max_children = max_children
        self.hit_at = hit_at
        #: What each site section's fetched pages were worth (``ADAPTIVE_SECTION_LIFT``).
        self.sections = SectionReturns(section_lift, hit_at)
        self.relevance = np.zeros(capacity, dtype=np.float32)
        self.domain = np.zeros(capacity, dtype=np.int32)
        # The first outlinks of each page, kept as the next actions of its transition.
        self.child_static = np.zeros((capacity, max_children, N_STATIC), dtype=np.float32)
        self.child_domain = np.zeros((capacity, max_children), dtype=np.int32)
        self.child_group = np.full((capacity, max_children), -1, dtype=np.int64)
        self.child_prior = np.zeros((capacity, max_children), dtype=np.float32)
        self.child_n = np.zeros(capacity, dtype=np.int32)
        # Per page, the links found on it that were fetched, and those that were hits.
        self.links_n = np.zeros(capacity, dtype=np.float32)
        self.links_hits = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        # Sibling groups: (parent page, context) -> id, and per group its page and the
        # relevance sum and count of its fetched links.
        self.group_ids: dict[tuple[int, str], int] = {}
        self.group_page = np.zeros(capacity, dtype=np.int64)
        self.group_sum = np.zeros(capacity, dtype=np.float32)
        self.group_n = np.zeros(capacity, dtype=np.float32)
        self.group_hits = np.zeros(capacity, dtype=np.float32)

    def __len__(self) -> int:
        return self.size

    def add(self, domain_id: int, relevance: float, group_id: int = -1) -> int:
        """Log a fetched page; it also counts as a fetched sibling in its group."""
        if self.size == len(self.relevance):
            self._grow(self.COLUMNS)
        page_id = self.size
        self.relevance[page_id] = relevance
        self.domain[page_id] = domain_id
        self.size += 1
        if 0 <= group_id < len(self.group_ids):
            self.group_sum[group_id] += relevance
            self.group_n[group_id] += 1
            self.group_hits[group_id] += relevance >= self.hit_at
            parent = self.group_page[group_id]
            self.links_n[parent] += 1
            self.links_hits[parent] += relevance >= self.hit_at
        return page_id

    def group_of(self, parent_id: int, context: str = "") -> int:
        """The sibling group of the links of page ``parent_id`` under ``context``
        (-1 for links found on no logged page)."""
        if not 0 <= parent_id < self.size:
            return -1
        key = (parent_id, context)
        group = self.group_ids.get(key)
        if group is None:
            group = len(self.group_ids)
            if group == len(self.group_page):
                self._grow(self.GROUP_COLUMNS)
            self.group_ids[key] = group
            self.group_page[group] = parent_id
        return group

    def parent_score(self, page_id: int) -> float:
        return float(self.relevance[page_id]) if 0 <= page_id < self.size else 0.0

    def sibling_scores(self, group_ids: np.ndarray) -> np.ndarray:
        """Mean relevance of the fetched links of each group, smoothed toward the
        relevance of the group's page (0 for links of no group)."""
        group_ids = np.asarray(group_ids, dtype=np.int64)
        valid = (group_ids >= 0) & (group_ids < len(self.group_ids))
        ids = np.where(valid, group_ids, 0)
        pages = self.group_page[ids]
        scores = (self.group_sum[ids] + self.relevance[pages]) / (self.group_n[ids] + 1.0)
        return np.where(valid, scores, 0.0).astype(np.float32)

    def misses(self, group_id: int) -> float:
        """The fetched links of a group while none of them was a hit (0 once one was), and
        ``OTHER_GROUPS_SHARE`` of the page's other fetched links while none of the page's was:
        a table of contents whose every section shares a word with the query ("Threads" in a
        computer algebra manual) gives way as a whole, more slowly than one of its lists."""
        if not 0 <= group_id < len(self.group_ids) or self.group_hits[group_id]:
            return 0.0
        own = float(self.group_n[group_id])
        page = self.group_page[group_id]
        if self.links_hits[page]:
            return own
        return own + self.OTHER_GROUPS_SHARE * (float(self.links_n[page]) - own)

    def misses_of(self, group_ids: np.ndarray) -> np.ndarray:
        """:meth:`misses` of many groups at once (a leaf of TRES' frontier ranked anew)."""
        group_ids = np.asarray(group_ids, dtype=np.int64)
        valid = (group_ids >= 0) & (group_ids < len(self.group_ids))
        ids = np.where(valid, group_ids, 0)
        own = self.group_n[ids].astype(np.float64)
        pages = self.group_page[ids]
        others = np.where(self.links_hits[pages] > 0, 0.0, self.OTHER_GROUPS_SHARE * (self.links_n[pages] - own))
        return np.where(valid & (self.group_hits[ids] == 0), own + others, 0.0)

    def add_child(
        self, page_id: int, static: np.ndarray, domain_id: int, prior: float = 0.0, group_id: int = -1
    ) -> None:
        """Keep the first ``max_children`` outlinks of a page as its next actions."""
        if not 0 <= page_id < self.size:
            return
        slot = self.child_n[page_id]
        if slot < self.max_children:
            self.child_static[page_id, slot] = static
            self.child_domain[page_id, slot] = domain_id
            self.child_group[page_id, slot] = group_id
            self.child_prior[page_id, slot] = prior
            self.child_n[page_id] = slot + 1

    def children_of(self, page_ids: np.ndarray) -> tuple[np.ndarray, ...]:
        """Static features (b x k x 6), domain ids, sibling groups, link priors and a
        validity mask (b x k each) of the kept outlinks of a batch of pages (ids
        outside the log have none)."""
        page_ids = np.asarray(page_ids, dtype=np.int64)
        valid = (page_ids >= 0) & (page_ids < self.size)
        rows = np.where(valid, page_ids, 0)
        counts = np.where(valid, self.child_n[rows], 0)
        mask = np.arange(self.max_children)[None, :] < counts[:, None]
        return self.child_static[rows], self.child_domain[rows], self.child_group[rows], self.child_prior[rows], mask

    @staticmethod
    def _older_default(state: dict, name: str, count: int) -> np.ndarray:
        if name == "group_hits":
            return state["group_n"]
        return np.zeros(count, dtype=np.float32)  # links_n, links_hits: nothing counted yet

    def _grow(self, columns: Iterable[str]) -> None:
        for name in columns:
            column = getattr(self, name)
            setattr(self, name, np.concatenate([column, np.zeros_like(column)]))

    def state_dict(self) -> dict:
        state = {name: getattr(self, name)[: self.size].copy() for name in self.COLUMNS}
        groups = len(self.group_ids)
        state.update({name: getattr(self, name)[:groups].copy() for name in self.GROUP_COLUMNS})
        state["group_ids"] = dict(self.group_ids)
        state["sections"] = self.sections.state_dict()
        return state

    def load_state_dict(self, state: dict) -> None:
        n, groups = len(state["relevance"]), len(state["group_ids"])
        for names, count in ((self.COLUMNS, n), (self.GROUP_COLUMNS, groups)):
            for name in names:
                # A snapshot of an older version has no hit counts: its groups count as hit
                # (ranked by their prior alone, as that version did); new groups count their own.
                saved = state[name] if name in state else self._older_default(state, name, count)
                column = np.zeros((max(1024, 2 * count), *saved.shape[1:]), dtype=saved.dtype)
                column[:count] = saved
                setattr(self, name, column)
        self.group_ids = dict(state["group_ids"])
        self.sections.load_state_dict(state.get("sections", {}))  # none in an older snapshot
        self.max_children = self.child_static.shape[1]
        self.size = n
