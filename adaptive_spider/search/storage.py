"""On-disk storage of a search index: one SQLite file, ``<index dir>/index.sqlite``.

Tables (see docs/search.md, "File format"):

``meta(key, value)``
    JSON values: ``config`` (fields, id field, field weights, analyzer,
    k, b, q), ``numeric_fields`` and ``format`` (the format version).
``documents(doc_idx, doc_id, stored, deleted)``
    One row per added document; ``stored`` is the JSON of the fields shown
    with results.  Re-adding an id marks the old row deleted.
``segments(seg, first_doc, n_docs, terms, starts, docs, tfs, lengths, words, word_counts)``
    Postings of the documents ``first_doc .. first_doc + n_docs - 1`` in CSR
    form: ``terms`` is the newline-joined term list, the BLOBs are
    little-endian numpy arrays (int64 ``starts``, int32 ``docs``, float32
    ``tfs`` and ``lengths``, int32 ``word_counts`` for the newline-joined
    surface ``words`` used by fuzzy search).  Every commit appends a segment;
    ``optimize`` merges them into one so that opening reads a single row.
``numbers(field, doc_idx, value)``
    Numeric fields for boosting formulas.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import SearchError

FILE_NAME = "index.sqlite"
FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_idx INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, stored TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS documents_doc_id ON documents (doc_id);
CREATE TABLE IF NOT EXISTS segments (
    seg INTEGER PRIMARY KEY, first_doc INTEGER NOT NULL, n_docs INTEGER NOT NULL,
    terms TEXT NOT NULL, starts BLOB NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL,
    lengths BLOB NOT NULL, words TEXT NOT NULL, word_counts BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS numbers (
    field TEXT NOT NULL, doc_idx INTEGER NOT NULL, value REAL NOT NULL,
    PRIMARY KEY (field, doc_idx));
"""


def index_file(directory: str | Path) -> Path:
    return Path(directory) / FILE_NAME


def _join(strings: Iterable[str]) -> str:
    return "\n".join(strings)


def _split(text: str) -> list[str]:
    return text.split("\n") if text else []


class Segment:
    """Postings of a consecutive range of documents, terms sorted by first use."""

    def __init__(
        self,
        first_doc: int,
        n_docs: int,
        terms: list[str],
        starts: np.ndarray,
        docs: np.ndarray,
        tfs: np.ndarray,
        lengths: np.ndarray,
        words: list[str],
        word_counts: np.ndarray,
    ) -> None:
        self.first_doc = first_doc
        self.n_docs = n_docs
        self.terms = terms
        self.starts = starts
        self.docs = docs
        self.tfs = tfs
        self.lengths = lengths
        self.words = words
        self.word_counts = word_counts


class IndexStore:
    """Reads and writes one index file.  Used by :class:`SearchIndex` only."""

    def __init__(self, directory: str | Path, create: bool = False):
        self.path = index_file(directory)
        if not self.path.is_file():
            if not create:
                raise SearchError(f"no index at {directory} (missing {FILE_NAME}; build one with `scrapy index`)")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise SearchError(f"cannot open index {self.path}: {error}") from None

    def close(self) -> None:
        self.db.close()

    def read_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def write_meta(self, key: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def read_documents(self) -> tuple[list[str], np.ndarray]:
        rows = self.db.execute("SELECT doc_id, deleted FROM documents ORDER BY doc_idx").fetchall()
        doc_ids = [row[0] for row in rows]
        deleted = np.array([row[1] for row in rows], dtype=bool)
        return doc_ids, deleted

    def read_segments(self) -> list[Segment]:
        rows = self.db.execute(
            "SELECT first_doc, n_docs, terms, starts, docs, tfs, lengths, words, word_counts FROM segments ORDER BY seg"
        ).fetchall()
        return [
            Segment(
                first,
                n,
                _split(terms),
                np.frombuffer(starts, "<i8"),
                np.frombuffer(docs, "<i4"),
                np.frombuffer(tfs, "<f4"),
                np.frombuffer(lengths, "<f4"),
                _split(words),
                np.frombuffer(counts, "<i4"),
            )
            for first, n, terms, starts, docs, tfs, lengths, words, counts in rows
        ]

    def write_segment(self, segment: Segment, replace_all: bool = False) -> None:
        if replace_all:
            self.db.execute("DELETE FROM segments")
        self.db.execute(
            "INSERT INTO segments (first_doc, n_docs, terms, starts, docs, tfs, lengths,"
            " words, word_counts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                segment.first_doc,
                segment.n_docs,
                _join(segment.terms),
                segment.starts.astype("<i8").tobytes(),
                segment.docs.astype("<i4").tobytes(),
                segment.tfs.astype("<f4").tobytes(),
                segment.lengths.astype("<f4").tobytes(),
                _join(segment.words),
                segment.word_counts.astype("<i4").tobytes(),
            ),
        )

    def count_segments(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM segments").fetchone()[0]

    def write_documents(self, rows: Iterable[tuple[int, str, str]]) -> None:
        self.db.executemany("INSERT INTO documents (doc_idx, doc_id, stored) VALUES (?, ?, ?)", rows)

    def mark_deleted(self, doc_idxs: Iterable[int]) -> None:
        self.db.executemany("UPDATE documents SET deleted = 1 WHERE doc_idx = ?", [(int(i),) for i in doc_idxs])

    def write_numbers(self, rows: Iterable[tuple[str, int, float]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO numbers VALUES (?, ?, ?)", rows)

    def read_numbers(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        rows = self.db.execute("SELECT doc_idx, value FROM numbers WHERE field = ?", (field,)).fetchall()
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty(0)
        idx, values = zip(*rows)
        return np.array(idx, dtype=np.int64), np.array(values, dtype=np.float64)

    def read_stored(self, doc_idxs: list[int]) -> dict[int, dict]:
        marks = ",".join("?" * len(doc_idxs))
        rows = self.db.execute(
            f"SELECT doc_idx, stored FROM documents WHERE doc_idx IN ({marks})",
            doc_idxs,
        ).fetchall()
        if not rows:
            return {}
        # One JSON decode for all rows: the per-call overhead dominates small rows.
        decoded = json.loads("[" + ",".join(stored for _, stored in rows) + "]")
        return {idx: fields for (idx, _), fields in zip(rows, decoded)}

    def commit(self) -> None:
        self.db.commit()
