"""The queued links of :class:`~adaptive_spider.sufficiency.linkvalues.LinkValues`, in columns.

A queued link as Python objects (a ``QueuedLink``, its floats and ints, a dict entry)
costs about 200 bytes, a fifth of a queued URL's budget; in columns, 48. The
columns are indexed by frontier entry id.
"""

from __future__ import annotations

from array import array

import numpy as np


def column_rows(values: array, rows: np.ndarray, dtype: type) -> np.ndarray:
    """``values[rows]`` of a growable column (a copy: no view may outlive the call, or the column could not grow)."""
    view: np.ndarray = np.frombuffer(values, dtype=dtype)
    try:
        return view[rows]
    finally:
        del view


class QueuedLink:
    """One queued link, as :class:`LinkColumns` gives it out."""

    __slots__ = ("domain_id", "parent_relevance", "structure", "terms", "token", "url")

    def __init__(
        self,
        token: int,
        url: str,
        terms: tuple[int, ...],
        parent_relevance: float,
        structure: float,
        domain_id: int | None,
    ):
        self.token = token
        self.url = url
        self.terms = terms
        self.parent_relevance = parent_relevance
        self.structure = structure
        self.domain_id = domain_id


class LinkColumns:
    """The queued links by frontier entry, in columns (``links.get(entry)`` gives a :class:`QueuedLink`)."""

    __slots__ = ("domain", "parent", "size", "structure", "terms", "token", "url")

    def __init__(self) -> None:
        self.token = array("q")  # 0: no link at that entry
        self.parent = array("d")
        self.structure = array("d")
        self.domain = array("q")  # -1: none
        self.url: list = []
        self.terms: list = []
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def get(self, entry: int) -> QueuedLink | None:
        if entry >= len(self.token) or not self.token[entry]:
            return None
        return self._link(entry)

    def put(
        self,
        entry: int,
        token: int,
        url: str,
        terms: tuple[int, ...],
        parent_relevance: float,
        structure: float,
        domain_id: int | None,
    ) -> None:
        """Set the link at ``entry`` from its values (no :class:`QueuedLink` made)."""
        if entry >= len(self.token):
            self._grow(entry + 1)
        if not self.token[entry]:
            self.size += 1
        self.token[entry] = token
        self.parent[entry] = parent_relevance
        self.structure[entry] = structure
        self.domain[entry] = -1 if domain_id is None else domain_id
        self.url[entry] = url
        self.terms[entry] = terms

    def _link(self, entry: int) -> QueuedLink:
        return QueuedLink(
            self.token[entry],
            self.url[entry],
            self.terms[entry],
            self.parent[entry],
            self.structure[entry],
            self.domain[entry],
        )

    def pop(self, entry: int, default: QueuedLink | None = None) -> QueuedLink | None:
        if entry >= len(self.token) or not self.token[entry]:
            return default
        link = self._link(entry)
        self.token[entry] = 0
        self.url[entry] = None
        self.terms[entry] = ()
        self.size -= 1
        return link

    def token_of(self, entry: int) -> int:
        """The token of the link at ``entry`` (0: none)."""
        return self.token[entry] if entry < len(self.token) else 0

    def _grow(self, size: int) -> None:
        extra = max(size - len(self.token), len(self.token), 1024)
        for column in (self.token, self.parent, self.structure, self.domain):
            column.frombytes(bytes(column.itemsize * extra))
        self.url.extend([None] * extra)
        self.terms.extend([()] * extra)
