"""Pools of queued entries, one per leaf of TRES' tree: which of a leaf's links it offers.

Every round each leaf of :class:`~adaptive_spider.frontier.learn.tree.LeafPartition` offers
candidates to TRES' scorers (:mod:`adaptive_spider.frontier.strategies.tres`). A
:class:`BestLeafPool` offers its best links by bestfirst's key; a :class:`UniformLeafPool`
offers uniform samples, as in the TRES paper (``ADAPTIVE_TREE_LEAF_SAMPLING``). Both keep
plain integer entry ids, so that a pool of a million links stays small and a refitted tree
can re-assign the whole frontier at once.
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections.abc import Iterable, Iterator
from typing import Protocol

import numpy as np


class RankedEntries(Protocol):
    """What a leaf pool reads of its entries: the value they are ranked by, and their arrival."""

    def priors(self, entries: np.ndarray) -> np.ndarray: ...

    def arrival_orders(self, entries: np.ndarray) -> np.ndarray: ...


class BestLeafPool:
    """Entries of one leaf, best link prior first (ties: first queued first).

    Each entry is one integer that sorts like ``(-prior, order, entry)`` (see
    :func:`pool_keys`): a tenth of the memory of a tuple, and faster to compare.
    The best keys wait in a sorted ``head``, the rest in a heap of keys no better
    than any in the head: a round reads its candidates from the head and only the
    picked ones leave it, so the heap is touched once per released entry, not twice
    per candidate (the cost that grew with the frontier). Entries put in the pool
    wait in a list until the next ``take``, which adds them all at once (a refitted
    tree re-assigns the whole frontier). ``entries_of`` reads the entries' priors and
    arrival orders (the frontier, or its store).
    """

    def __init__(self, entries_of: RankedEntries, entries: Iterable[int] = ()) -> None:
        self.entries_of = entries_of
        self.head: list[int] = []
        self.heap: list[int] = []
        self.incoming = array("q", entries)
        self._n_taken = 0  # the head's first keys offered by the last take

    def __len__(self) -> int:
        return len(self.head) + len(self.heap) + len(self.incoming)

    def put(self, entry: int) -> None:
        self.incoming.append(entry)

    def put_many(self, entries: np.ndarray) -> None:
        self.incoming.frombytes(entries.astype(np.int64, copy=False).tobytes())

    def take(self, k: int, rng: np.random.Generator) -> list[int]:
        """The ``k`` best entries (they stay in the pool until :meth:`put_back` says which were picked)."""
        self._settle()
        head, heap = self.head, self.heap
        while len(head) < k and heap:
            head.append(heapq.heappop(heap))  # no better than the head's keys: the head stays sorted
        self._n_taken = min(k, len(head))
        return [key & ENTRY_MASK for key in head[: self._n_taken]]

    def taken_keys(self) -> list[int]:
        """The keys of the last take's entries, in their order."""
        return self.head[: self._n_taken]

    def lower(self, keys: dict[int, int]) -> None:
        """Entries of the last take whose keys fell (entry -> new key) go back in at their new
        keys; the take is undone."""
        taken, self._n_taken = self._n_taken, 0
        head = self.head
        self.head = [key for key in head[:taken] if key & ENTRY_MASK not in keys] + head[taken:]
        for key in keys.values():
            self._insert(key)

    def put_back(self, entries: Iterable[int]) -> None:
        """Keep the entries of the last take that were not picked; the others leave the pool.

        Their keys were current at the take."""
        kept = set(entries)
        taken, self._n_taken = self._n_taken, 0
        head = self.head
        self.head = [key for key in head[:taken] if key & ENTRY_MASK in kept] + head[taken:]

    def rekey(self) -> None:
        """Rank every entry anew at the next take (their keys changed)."""
        self.incoming = array("q", self.entry_array().tobytes())
        self.head, self.heap = [], []
        self._n_taken = 0

    def entries(self) -> list[int]:
        return [key & ENTRY_MASK for key in self.head + self.heap] + self.incoming.tolist()

    def entry_array(self) -> np.ndarray:
        """:meth:`entries` as an array (no list of a million ints when the frontier is re-partitioned)."""
        keys = self.head + self.heap
        held = np.fromiter((key & ENTRY_MASK for key in keys), dtype=np.int64, count=len(keys))
        return np.concatenate([held, np.frombuffer(self.incoming, dtype=np.int64)])

    def _settle(self) -> None:
        if not self.incoming:
            return
        keys = pool_keys(self.entries_of, np.frombuffer(self.incoming, dtype=np.int64))
        self.incoming = array("q")
        head, heap = self.head, self.heap
        if len(keys) > len(heap) // 4:  # many at once (a re-partitioned frontier): one heapify
            heap.extend(head)
            heap.extend(keys)
            heapq.heapify(heap)
            self.head = []
            return
        for key in keys:
            self._insert(key)

    def _insert(self, key: int) -> None:
        head = self.head
        if head and key < head[-1]:
            bisect.insort(head, key)
            if len(head) > _HEAD_MAX:  # the worst of the head goes back to the heap: still none better than the head
                heapq.heappush(self.heap, head.pop())
        else:
            heapq.heappush(self.heap, key)


_ENTRY_BITS = 32
_ORDER_BITS = 40
ENTRY_MASK = (1 << _ENTRY_BITS) - 1


def pool_keys(entries_of: RankedEntries, entries: np.ndarray) -> list[int]:
    """One integer per entry that sorts like ``(-prior, order, entry)``.

    The prior's float32 bits, mapped to an unsigned integer that sorts like the
    float and inverted (best first), above the arrival order and the entry id.
    """
    shift = _ENTRY_BITS + _ORDER_BITS
    orders = entries_of.arrival_orders(entries).tolist()
    if len(entries) < VECTOR_MIN:  # a round's put-backs: numpy's per-call cost would dominate
        bits = entries_of.priors(entries).view(np.uint32).tolist()
        return [
            ((b if b & 0x80000000 else 0x7FFFFFFF - b) << shift) | (o << _ENTRY_BITS) | e
            for b, o, e in zip(bits, orders, entries.tolist())
        ]
    bits = entries_of.priors(entries).view(np.uint32).astype(np.int64)
    descending = np.where(bits & 0x80000000, bits, 0x7FFFFFFF - bits).tolist()
    return [(d << shift) | (o << _ENTRY_BITS) | e for d, o, e in zip(descending, orders, entries.tolist())]


VECTOR_MIN = 256
_HEAD_MAX = 64


class UniformLeafPool:
    """Entries of one leaf, sampled uniformly at random (the TRES paper's rule)."""

    def __init__(self, entries_of: RankedEntries | None, entries: Iterable[int] = ()) -> None:
        self.items = array("q", entries)

    def __len__(self) -> int:
        return len(self.items)

    def put(self, entry: int) -> None:
        self.items.append(entry)

    def put_many(self, entries: np.ndarray) -> None:
        self.items.frombytes(entries.astype(np.int64, copy=False).tobytes())

    def put_back(self, entries: Iterable[int]) -> None:
        self.items.extend(entries)

    def rekey(self) -> None:
        """Uniform sampling reads no keys."""

    def taken_keys(self) -> list[int]:
        return []

    def lower(self, keys: dict[int, int]) -> None:
        """Uniform sampling reads no keys."""

    def take(self, k: int, rng: np.random.Generator) -> list[int]:
        taken = []
        items = self.items
        for _ in range(min(k, len(items))):
            index = int(rng.integers(len(items)))
            items[index], items[-1] = items[-1], items[index]
            taken.append(items.pop())
        return taken

    def entries(self) -> list[int]:
        return self.items.tolist()

    def entry_array(self) -> np.ndarray:
        return np.frombuffer(self.items, dtype=np.int64).copy()


#: Either kind of leaf pool (``ADAPTIVE_TREE_LEAF_SAMPLING``): the same methods.
LeafPool = BestLeafPool | UniformLeafPool


def empty_entries() -> array:
    """An empty array of entry ids (int64), as entries wait before they join a pool."""
    return array("q")


def by_leaf(entries: np.ndarray, leaves: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(leaf, entries of that leaf)`` for each leaf present, the entries in their order."""
    order = np.argsort(leaves, kind="stable")
    ordered = leaves[order]
    starts = np.flatnonzero(np.diff(ordered)) + 1
    for group, start in zip(np.split(entries[order], starts), [0, *starts.tolist()]):
        yield int(ordered[start]), group
