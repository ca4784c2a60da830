"""The search index: documents in, ranked hits out.

A :class:`SearchIndex` holds an inverted index in memory (CSR arrays: the
postings of term ``t`` are ``starts[t]:starts[t+1]``), ranks with
:class:`~.ranking.BM25` over the union of the query terms' postings, and
persists itself to a SQLite file (:mod:`.storage`) when given a directory.
New documents are collected as pending postings, merged into the arrays on
the next search, and written to disk as a new segment on :meth:`commit`.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from .analysis import Analyzer, words
from .errors import SearchError
from .formula import BoostFormula
from .fuzzy import QGramIndex
from .ranking import BM25
from .storage import IndexStore, Segment, index_file
from .synonyms import SynonymDictionary

#: Defaults chosen on Cranfield (docs/search.md, "Choosing the defaults").
DEFAULT_K = 1.2
DEFAULT_B = 0.6
DEFAULT_FEEDBACK_DOCS = 5
DEFAULT_FEEDBACK_TERMS = 20
DEFAULT_FEEDBACK_WEIGHT = 0.5

# A leading number, as in "12", "-3.5", "1,234 views" or "12\nvotes".
_NUMBER = re.compile(r"\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s|$)")


@dataclass
class Hit:
    """One ranked document."""

    id: str
    score: float
    fields: dict


@dataclass
class SearchResults:
    """What :meth:`SearchIndex.search` returns."""

    query: str
    hits: list[Hit]
    total: int
    terms: list[str]
    corrections: dict[str, str] = field(default_factory=dict)
    expansion: list[str] = field(default_factory=list)


def parse_number(value) -> float | None:
    """A float for numbers and strings that start with one, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER.match(value)
        if match:
            return float(match.group(1).replace(",", ""))
    return None


def as_text(value) -> str:
    """The indexable text of a field value (lists are joined, None is empty)."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(as_text(part) for part in value)
    if isinstance(value, (int, float)):
        return str(value)
    return ""


def _pairs(spec: str | Mapping):
    """(name, value) pairs from a mapping or from ``"a=1,b=2"``."""
    if isinstance(spec, Mapping):
        return [(str(name).strip(), value) for name, value in spec.items()]
    pairs = []
    for part in spec.split(","):
        if part.strip():
            name, _, value = part.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def text_fields_of(record: Mapping, id_field: str) -> list[str]:
    """The fields of *record* worth indexing: text (or lists of text) that is not a number."""
    return [name for name, value in record.items()
            if name != id_field and isinstance(value, (str, list))
            and as_text(value).strip() and parse_number(value) is None]


def parse_field_weights(spec: str | Mapping | None, fields: Iterable[str]) -> dict[str, float]:
    """Weights per field from ``"title=2,body=1"`` or a mapping; 1 for unnamed fields."""
    fields = list(fields)
    weights = dict.fromkeys(fields, 1.0)
    if not spec:
        return weights
    for name, value in _pairs(spec):
        if name not in weights:
            raise SearchError(f"unknown field {name!r} in weights (indexed fields: {', '.join(fields)})")
        try:
            weight = float(value)
        except (TypeError, ValueError):
            raise SearchError(f"weight of field {name!r} must be a number, got {value!r}") from None
        if not weight > 0:
            raise SearchError(f"weight of field {name!r} must be > 0, got {weight}")
        weights[name] = weight
    return weights


def parse_word_weights(spec: str | Mapping | None) -> dict[str, float]:
    """Word weights from ``"freiburg=5,python=2"`` or a mapping."""
    if not spec:
        return {}
    weights = {}
    for word, value in _pairs(spec):
        try:
            weights[word] = float(value)
        except (TypeError, ValueError):
            raise SearchError(f"word weight of {word!r} must be a number, got {value!r}") from None
    return weights


def _csr(tids: np.ndarray, docs: np.ndarray, tfs: np.ndarray, n_terms: int):
    """Sort postings by (term, doc), sum duplicates (one per field) and return CSR arrays."""
    order = np.lexsort((docs, tids))
    tids, docs, tfs = tids[order], docs[order], tfs[order]
    if len(tids) > 1:
        same = (tids[1:] == tids[:-1]) & (docs[1:] == docs[:-1])
        if same.any():
            first = np.flatnonzero(np.concatenate(([True], ~same)))
            tfs = np.add.reduceat(tfs, first)
            tids, docs = tids[first], docs[first]
    starts = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(tids, minlength=n_terms), out=starts[1:])
    return starts, docs.astype(np.int32), tfs.astype(np.float32)


def _check_feedback(docs, terms, weight) -> None:
    if not (isinstance(docs, int) and docs >= 0 and isinstance(terms, int) and terms >= 0):
        raise SearchError("feedback documents and terms must be integers >= 0")
    if not (isinstance(weight, (int, float)) and 0 <= weight <= 1):
        raise SearchError(f"feedback weight must be between 0 and 1, got {weight!r}")


def _new_vocabulary(terms: Iterable[str] = ()) -> defaultdict:
    """term -> id; looking up a new term gives it the next id."""
    vocabulary: defaultdict = defaultdict()
    vocabulary.default_factory = vocabulary.__len__
    for term in terms:
        vocabulary[term]
    return vocabulary


class SearchIndex:
    """A BM25 index over documents with an id field and chosen text fields.

    Parameters
    ----------
    fields : sequence of str
        The text fields to index.
    id_field : str
        The field that identifies a document; adding an id again replaces it.
    field_weights : str or mapping, optional
        ``{"title": 2}`` or ``"title=2"``: a word in a field counts that many
        times in term frequency and document length (1 for unnamed fields).
    analyzer : Analyzer, optional
        Tokenizer settings (stop words, small-word threshold, stemming).
    k, b : float
        BM25 parameters stored as the index's defaults; :meth:`search` can
        override both per query.
    q : int
        q-gram length of the fuzzy index.
    feedback_docs, feedback_terms, feedback_weight : int, int, float
        Pseudo-relevance feedback: the ``feedback_terms`` terms that weigh
        most in the top ``feedback_docs`` documents of a first BM25 pass are
        added to the query, and the final score is
        ``(1 - w) * BM25(query) + w * n * BM25(expansion)`` with ``w`` the
        feedback weight and ``n`` the number of query terms (so scores keep
        BM25's scale).  ``feedback_docs=0`` ranks by plain BM25.
    path : str or Path, optional
        Directory of the on-disk index; None keeps everything in memory.
        Use :meth:`create`, :meth:`open` or :meth:`open_or_create` rather
        than passing it directly.
    """

    def __init__(self, fields=("title", "text"), id_field="id", field_weights=None,
                 analyzer: Analyzer | None = None, k: float = DEFAULT_K, b: float = DEFAULT_B,
                 q: int = 3, feedback_docs: int = DEFAULT_FEEDBACK_DOCS,
                 feedback_terms: int = DEFAULT_FEEDBACK_TERMS,
                 feedback_weight: float = DEFAULT_FEEDBACK_WEIGHT):
        if isinstance(fields, str):
            fields = [f.strip() for f in fields.split(",") if f.strip()]
        if not fields:
            raise SearchError("at least one field to index is needed")
        self.fields = tuple(fields)
        self.id_field = id_field
        self.field_weights = parse_field_weights(field_weights, self.fields)
        self.analyzer = analyzer or Analyzer()
        self.k = k
        self.b = b
        self.q = q
        self.feedback_docs = feedback_docs
        self.feedback_terms = feedback_terms
        self.feedback_weight = feedback_weight
        _check_feedback(feedback_docs, feedback_terms, feedback_weight)
        BM25(k, b)._check_params()
        QGramIndex(q)
        self.path: Path | None = None
        self._store: IndexStore | None = None
        self._reset()

    def _reset(self) -> None:
        self._doc_ids: list[str] = []
        self._id_to_idx: dict[str, int] = {}
        self._deleted = bytearray()
        self._lengths = np.empty(0, dtype=np.float32)
        self._term_ids = _new_vocabulary()
        self._starts = np.zeros(1, dtype=np.int64)
        self._post_docs = np.empty(0, dtype=np.int32)
        self._post_tf = np.empty(0, dtype=np.float32)
        self._words: Counter = Counter()
        self._numeric_fields: set[str] = set()
        self._field_counts: Counter = Counter()
        self._committed_docs = 0
        self._clear_pending()
        self._invalidate()

    def _clear_pending(self) -> None:
        self._clear_postings()
        self._pend_stored: dict[int, tuple[str, dict]] = {}
        self._pend_numbers: list[tuple[str, int, float]] = []
        self._pend_deleted: list[int] = []

    def _clear_postings(self) -> None:
        """Forget the postings added since the last commit (they are on disk now)."""
        self._pend_tids = array("i")
        self._pend_docs = array("i")
        self._pend_tfs = array("f")
        self._pend_lengths = array("f")
        self._pend_words: Counter = Counter()
        self._built_postings = 0
        self._dirty = False

    def _invalidate(self) -> None:
        self._impacts: dict[tuple[float, float], np.ndarray] = {}
        self._fuzzy: QGramIndex | None = None
        self._numeric_cache: dict[str, np.ndarray] = {}
        self._forward: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._terms: list[str] | None = None
        self._feedback_tables: dict[int, np.ndarray] = {}

    # -- persistence ---------------------------------------------------------

    def get_params(self) -> dict:
        """The configuration stored with the index."""
        return {"fields": list(self.fields), "id_field": self.id_field,
                "field_weights": self.field_weights, "analyzer": self.analyzer.get_params(),
                "k": self.k, "b": self.b, "q": self.q, "feedback_docs": self.feedback_docs,
                "feedback_terms": self.feedback_terms, "feedback_weight": self.feedback_weight}

    @classmethod
    def create(cls, path, overwrite: bool = False, **params) -> SearchIndex:
        """A new, empty index stored in directory *path*."""
        if index_file(path).exists():
            if not overwrite:
                raise SearchError(f"an index already exists at {path}")
            index_file(path).unlink()
        index = cls(**params)
        index._attach(IndexStore(path, create=True), path)
        index._store.write_meta("config", index.get_params())
        index._store.write_meta("format", 1)
        index._store.commit()
        return index

    @classmethod
    def open(cls, path, **overrides) -> SearchIndex:
        """Load the index stored in directory *path*; *overrides* may set k, b or q."""
        if not Path(path).is_dir() and not index_file(path).exists():
            raise SearchError(f"no index at {path} (directory does not exist)")
        store = IndexStore(path)
        config = store.read_meta("config")
        if config is None:
            raise SearchError(f"{index_file(path)} is not a search index (no configuration)")
        analyzer = Analyzer(**config.pop("analyzer"))
        config.update({key: value for key, value in overrides.items() if value is not None})
        index = cls(analyzer=analyzer, **config)
        index._attach(store, path)
        index._load()
        return index

    @classmethod
    def open_or_create(cls, path, **params) -> SearchIndex:
        """Open the index at *path* if there is one, else create it with *params*."""
        if index_file(path).exists():
            return cls.open(path)
        return cls.create(path, **params)

    def _attach(self, store: IndexStore, path) -> None:
        self._store = store
        self.path = Path(path)

    def _load(self) -> None:
        store = self._store
        doc_ids, deleted = store.read_documents()
        self._doc_ids = doc_ids
        self._deleted = bytearray(deleted.astype(np.uint8).tobytes())
        self._id_to_idx = {doc_id: i for i, doc_id in enumerate(doc_ids) if not deleted[i]}
        self._committed_docs = len(doc_ids)
        self._numeric_fields = set(store.read_meta("numeric_fields", []))
        self._field_counts = Counter(store.read_meta("field_counts", {}))
        segments = store.read_segments()
        if not segments:
            return
        self._lengths = np.concatenate([s.lengths for s in segments])
        for segment in segments:
            self._words.update(dict(zip(segment.words, segment.word_counts.tolist())))
        if len(segments) == 1:
            (segment,) = segments
            self._term_ids = _new_vocabulary(segment.terms)
            self._starts, self._post_docs, self._post_tf = segment.starts, segment.docs, segment.tfs
            return
        parts = []
        for segment in segments:
            local_to_global = np.array([self._term_ids[t] for t in segment.terms], dtype=np.int64)
            tids = np.repeat(local_to_global, np.diff(segment.starts))
            parts.append((tids, segment.docs, segment.tfs))
        self._merge(parts)

    def commit(self) -> None:
        """Write what was added since the last commit as a new segment."""
        if self._store is None:
            return
        self._build()
        self._write_rows()
        if self._pend_lengths:
            tids = np.frombuffer(self._pend_tids, dtype=np.int32).astype(np.int64)
            used, local = np.unique(tids, return_inverse=True)
            terms = list(self._term_ids)
            starts, docs, tfs = _csr(local, np.frombuffer(self._pend_docs, dtype=np.int32),
                                     np.frombuffer(self._pend_tfs, dtype=np.float32), len(used))
            words, counts = zip(*self._pend_words.items()) if self._pend_words else ((), ())
            self._store.write_segment(Segment(
                self._committed_docs, len(self._pend_lengths), [terms[t] for t in used],
                starts, docs, tfs, np.frombuffer(self._pend_lengths, dtype=np.float32),
                list(words), np.array(counts, dtype=np.int32)))
        self._store.commit()
        self._clear_postings()
        self._committed_docs = len(self._doc_ids)

    def optimize(self) -> None:
        """Merge all segments into one, so that :meth:`open` reads a single row."""
        if self._store is None:
            return
        self._build()
        self._write_rows()
        self._clear_postings()
        words, counts = zip(*self._words.items()) if self._words else ((), ())
        self._store.write_segment(Segment(
            0, len(self._doc_ids), list(self._term_ids), self._starts, self._post_docs,
            self._post_tf, self._lengths, list(words), np.array(counts, dtype=np.int32)),
            replace_all=True)
        self._store.commit()
        self._committed_docs = len(self._doc_ids)

    def _write_rows(self) -> None:
        store = self._store
        store.write_documents(
            (idx, doc_id, json.dumps(stored, ensure_ascii=False, default=str))
            for idx, (doc_id, stored) in sorted(self._pend_stored.items()))
        store.mark_deleted(self._pend_deleted)
        store.write_numbers(self._pend_numbers)
        store.write_meta("numeric_fields", sorted(self._numeric_fields))
        store.write_meta("field_counts", dict(self._field_counts))
        self._pend_stored, self._pend_numbers, self._pend_deleted = {}, [], []

    def discard(self) -> None:
        """Close without committing and delete the index file (after a failed build)."""
        if self._store is not None:
            self._store.close()
            self._store.path.unlink(missing_ok=True)
            self._store = None

    def close(self) -> None:
        """Commit pending documents and close the file."""
        if self._store is not None:
            self.commit()
            self._store.close()
            self._store = None

    # -- adding documents ----------------------------------------------------

    def add(self, documents: Iterable[Mapping]) -> int:
        """Add documents (mappings, e.g. dicts or ItemAdapter); return how many."""
        added = 0
        for document in documents:
            self.add_document(document)
            added += 1
        return added

    def add_document(self, document: Mapping) -> int:
        """Add one document and return its internal number."""
        doc_id = document.get(self.id_field)
        if doc_id is None or doc_id == "":
            present = ", ".join(sorted(map(str, document))) or "none"
            raise SearchError(f"document has no {self.id_field!r} id field (fields: {present})")
        doc_id = str(doc_id)
        idx = len(self._doc_ids)
        self._replace(doc_id)
        self._doc_ids.append(doc_id)
        self._id_to_idx[doc_id] = idx
        self._deleted.append(0)
        stored = {self.id_field: doc_id}
        self._pend_lengths.append(self._index_text(idx, document, stored))
        self._collect_numbers(idx, document, stored)
        self._pend_stored[idx] = (doc_id, stored)
        self._dirty = True
        return idx

    def _replace(self, doc_id: str) -> None:
        old = self._id_to_idx.get(doc_id)
        if old is None:
            return
        self._deleted[old] = 1
        if old < self._committed_docs:
            self._pend_deleted.append(old)
        else:
            self._pend_stored.pop(old, None)

    def _index_text(self, idx: int, document: Mapping, stored: dict) -> float:
        vocabulary = self._term_ids
        length = 0.0
        seen_words: set[str] = set()
        for name, weight in self.field_weights.items():
            text = as_text(document.get(name))
            if not text:
                continue
            stored[name] = text
            self._field_counts[name] += 1
            terms, kept = self.analyzer.analyze_words(text)
            if not terms:
                continue
            seen_words |= kept
            counts = Counter(terms)
            self._pend_tids.extend(map(vocabulary.__getitem__, counts))
            self._pend_docs.extend(repeat(idx, len(counts)))
            if weight == 1.0:
                self._pend_tfs.extend(counts.values())
            else:
                self._pend_tfs.extend(count * weight for count in counts.values())
            length += weight * len(terms)
        self._pend_words.update(seen_words)
        self._words.update(seen_words)
        return length

    def _collect_numbers(self, idx: int, document: Mapping, stored: dict) -> None:
        for name, value in document.items():
            if name in self.field_weights or name == self.id_field:
                continue
            number = parse_number(value)
            if number is not None and np.isfinite(number):
                self._numeric_fields.add(name)
                self._pend_numbers.append((name, idx, number))
                stored[name] = value if isinstance(value, (int, float)) else number

    def missing_fields(self) -> list[str]:
        """Indexed fields that no document had (usually a misspelt field name)."""
        return [name for name in self.fields if not self._field_counts.get(name)]

    # -- building the arrays ---------------------------------------------------

    def _build(self) -> None:
        """Merge the postings added since the last build into the CSR arrays."""
        if not self._dirty:
            return
        old_tids = np.repeat(np.arange(len(self._starts) - 1, dtype=np.int64),
                             np.diff(self._starts))
        first = self._built_postings
        new = (np.frombuffer(self._pend_tids, dtype=np.int32)[first:].astype(np.int64),
               np.frombuffer(self._pend_docs, dtype=np.int32)[first:],
               np.frombuffer(self._pend_tfs, dtype=np.float32)[first:])
        built_pending_docs = len(self._lengths) - self._committed_docs
        self._lengths = np.concatenate(
            [self._lengths, np.frombuffer(self._pend_lengths, dtype=np.float32)[built_pending_docs:]])
        self._merge([(old_tids, self._post_docs, self._post_tf), new])
        self._built_postings = len(self._pend_tids)
        self._dirty = False
        self._invalidate()

    def _merge(self, parts) -> None:
        tids = np.concatenate([p[0] for p in parts])
        docs = np.concatenate([p[1] for p in parts])
        tfs = np.concatenate([p[2] for p in parts])
        live = ~self._deleted_mask()
        keep = live[docs]
        if not keep.all():
            tids, docs, tfs = tids[keep], docs[keep], tfs[keep]
        self._starts, self._post_docs, self._post_tf = _csr(tids, docs, tfs, len(self._term_ids))

    def _deleted_mask(self) -> np.ndarray:
        return np.frombuffer(bytes(self._deleted), dtype=np.uint8).astype(bool)

    def __len__(self) -> int:
        """The number of live documents."""
        return len(self._doc_ids) - self._deleted.count(1)

    def _impacts_for(self, k: float, b: float) -> np.ndarray:
        impacts = self._impacts.get((k, b))
        if impacts is None:
            lengths = np.where(self._deleted_mask(), 0.0, self._lengths).astype(np.float32)
            impacts = BM25(k, b).fit(self._starts, self._post_docs, self._post_tf,
                                     lengths, len(self)).impacts_
            self._impacts[(k, b)] = impacts
        return impacts

    def prepare(self, k: float | None = None, b: float | None = None) -> SearchIndex:
        """Build arrays and score tables now rather than on the first query."""
        self._build()
        self._impacts_for(self.k if k is None else k, self.b if b is None else b)
        self._fuzzy_index()
        return self

    # -- searching -------------------------------------------------------------

    def _fuzzy_index(self) -> QGramIndex:
        if self._fuzzy is None:
            self._fuzzy = QGramIndex(self.q).fit(self._words)
        return self._fuzzy

    def _postings(self, term: str) -> tuple[int, int] | None:
        tid = self._term_ids.get(term)
        if tid is None or tid + 1 >= len(self._starts):
            return None
        start, end = int(self._starts[tid]), int(self._starts[tid + 1])
        return (start, end) if end > start else None

    def analyze_query(self, query: str, fuzzy: bool = True) -> tuple[list[str], dict[str, str]]:
        """Query terms (repeats kept) and the corrections made for unknown words.

        A word whose term is in the index is never rewritten; an unknown word
        is replaced by the closest vocabulary word (see :meth:`QGramIndex.correct`).
        """
        self._build()
        term = self.analyzer.term
        terms, corrections = [], {}
        for word in words(query):
            query_term = term(word)
            if not query_term:
                continue
            if self._postings(query_term) is None and fuzzy:
                match = self._fuzzy_index().correct(word)
                if match is not None:
                    corrections[word] = match.word
                    query_term = term(match.word)
            terms.append(query_term)
        return terms, corrections

    def search(self, query: str, top: int = 10, *, k: float | None = None, b: float | None = None,
               word_weights=None, formula: str | BoostFormula | None = None,
               fuzzy: bool = True, feedback: int | None = None, offset: int = 0,
               with_fields: bool = True) -> SearchResults:
        """Rank documents for *query*: BM25 over the union of the query terms' postings.

        ``word_weights`` (``{"freiburg": 5}`` or ``"freiburg=5"``) adds the
        weight to a matching document that contains the word; ``formula``
        (``"log(votes + 1)"``) adds its value for the document.  ``feedback``
        overrides the number of feedback documents (0: plain BM25).
        """
        if not isinstance(query, str) or not query.strip():
            raise SearchError("empty query")
        if top < 0 or offset < 0:
            raise SearchError("top and offset must be >= 0")
        feedback = self.feedback_docs if feedback is None else feedback
        _check_feedback(feedback, self.feedback_terms, self.feedback_weight)
        boost = self._formula(formula)
        terms, corrections = self.analyze_query(query, fuzzy)
        impacts = self._impacts_for(self.k if k is None else k, self.b if b is None else b)
        weights = self._term_weights(terms)
        scores = self._scores(weights, impacts)
        matched = np.flatnonzero(scores > 0)
        expansion: list[str] = []
        if feedback and self.feedback_terms and self.feedback_weight and len(matched):
            first = self._top_ids(scores, matched, feedback)
            added, expansion = self._expand(first, impacts, len(terms))
            scores = (1.0 - self.feedback_weight) * scores + self._scores(added, impacts)
            matched = np.flatnonzero(scores > 0)
        if len(matched) and (word_weights or boost):
            scores = self._boost(scores, matched, parse_word_weights(word_weights), boost)
        hits = self._top(scores, matched, top, offset, with_fields)
        return SearchResults(query, hits, len(matched), terms, corrections, expansion)

    def _term_weights(self, terms: list[str]) -> dict[int, float]:
        """term id -> how often the query has it (unknown terms dropped)."""
        weights: dict[int, float] = {}
        for query_term in terms:
            tid = self._term_ids.get(query_term)
            if tid is not None and tid + 1 < len(self._starts):
                weights[tid] = weights.get(tid, 0.0) + 1.0
        return weights

    def _scores(self, weights: dict[int, float], impacts: np.ndarray) -> np.ndarray:
        """Sum of weight * impact over the postings of the weighted terms, per document.

        One ``bincount`` over the gathered postings beats a scatter-add per
        term by about three times on Cranfield queries.
        """
        starts, post_docs = self._starts, self._post_docs
        spans = [(int(starts[tid]), int(starts[tid + 1]), weight) for tid, weight in weights.items()]
        spans = [span for span in spans if span[1] > span[0]]
        if not spans:
            return np.zeros(len(self._doc_ids))
        docs = np.concatenate([post_docs[start:end] for start, end, _ in spans])
        values = np.concatenate([impacts[start:end] for start, end, _ in spans])
        if any(weight != 1.0 for _, _, weight in spans):
            values = values * np.repeat(np.array([w for _, _, w in spans], dtype=np.float32),
                                        [end - start for start, end, _ in spans])
        return np.bincount(docs, weights=values, minlength=len(self._doc_ids))

    def _forward_index(self):
        """Postings re-ordered by document: per-document offsets and each posting's term."""
        if self._forward is None:
            by_doc = np.argsort(self._post_docs, kind="stable")
            doc_starts = np.zeros(len(self._doc_ids) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self._post_docs, minlength=len(self._doc_ids)),
                      out=doc_starts[1:])
            term_of = np.repeat(np.arange(len(self._starts) - 1, dtype=np.int32),
                                np.diff(self._starts))
            self._forward = (by_doc, doc_starts, term_of[by_doc])
        return self._forward

    def _feedback_table(self, impacts: np.ndarray) -> np.ndarray:
        """Each posting's share of its document's total BM25 impact, in document order."""
        key = id(impacts)
        table = self._feedback_tables.get(key)
        if table is None:
            by_doc, doc_starts, _ = self._forward_index()
            totals = np.bincount(self._post_docs, weights=impacts, minlength=len(self._doc_ids))
            owner = np.repeat(np.arange(len(self._doc_ids)), np.diff(doc_starts))
            table = (impacts[by_doc] / np.where(totals > 0, totals, 1.0)[owner]).astype(np.float32)
            self._feedback_tables = {key: table}
        return table

    def _expand(self, top_docs, impacts, n_terms):
        """Weights of the terms that carry most BM25 weight in *top_docs* (pseudo-relevance
        feedback), and those terms best first.

        Each feedback document spreads a total weight of 1 over its terms in
        proportion to their BM25 impact in it; the expansion as a whole weighs
        ``feedback_weight * n_terms``, the query's own terms ``1 - feedback_weight``.
        """
        _, doc_starts, forward_terms = self._forward_index()
        shares = self._feedback_table(impacts)
        spans = [(int(doc_starts[d]), int(doc_starts[d + 1])) for d in top_docs]
        found = np.concatenate([forward_terms[a:b] for a, b in spans])
        shares_found = np.concatenate([shares[a:b] for a, b in spans])
        # Group by term with a sort: np.unique costs several times more on arrays this small.
        order = np.argsort(found, kind="stable")
        found, shares_found = found[order], shares_found[order]
        firsts = np.concatenate(([0], np.flatnonzero(found[1:] != found[:-1]) + 1))
        tids = found[firsts]
        mass = np.add.reduceat(shares_found.astype(np.float64), firsts)
        if len(tids) > self.feedback_terms:
            best = np.argpartition(-mass, self.feedback_terms - 1)[:self.feedback_terms]
            tids, mass = tids[best], mass[best]
        scale = self.feedback_weight * max(n_terms, 1) / mass.sum()
        added = dict(zip(tids.tolist(), (mass * scale).tolist()))
        terms = self._term_list()
        return added, [terms[t] for t in tids[np.argsort(-mass, kind="stable")].tolist()]

    def _term_list(self) -> list[str]:
        if self._terms is None or len(self._terms) != len(self._term_ids):
            self._terms = list(self._term_ids)
        return self._terms

    def _top_ids(self, scores, matched, count) -> list[int]:
        candidate_scores = scores[matched]
        if len(matched) > count:
            best = np.argpartition(-candidate_scores, count - 1)[:count]
            matched, candidate_scores = matched[best], candidate_scores[best]
        return matched[np.lexsort((matched, -candidate_scores))].tolist()

    def _formula(self, formula) -> BoostFormula | None:
        if formula is None or (isinstance(formula, str) and not formula.strip()):
            return None
        boost = formula if isinstance(formula, BoostFormula) else BoostFormula(formula)
        boost.check_fields(self._numeric_fields)
        return boost

    def _boost(self, scores, matched, word_weights, boost) -> np.ndarray:
        scores = scores.astype(np.float64, copy=True)
        bonus = np.zeros(len(matched))
        for word, weight in word_weights.items():
            for query_term in self.analyzer.analyze(word):
                span = self._postings(query_term)
                if span is not None:
                    with_word = self._post_docs[span[0]:span[1]]
                    bonus += weight * np.isin(matched, with_word, assume_unique=True)
        if boost is not None:
            values = {name: self._numeric_values(name)[matched] for name in boost.fields}
            bonus += boost.evaluate(values, len(matched))
        scores[matched] += bonus
        return scores

    def _numeric_values(self, name: str) -> np.ndarray:
        values = self._numeric_cache.get(name)
        if values is None:
            values = np.full(len(self._doc_ids), np.nan)
            if self._store is not None:
                idx, stored = self._store.read_numbers(name)
                values[idx] = stored
            for field_name, idx, number in self._pend_numbers:
                if field_name == name:
                    values[idx] = number
            self._numeric_cache[name] = values
        return values

    def _top(self, scores, matched, top, offset, with_fields) -> list[Hit]:
        wanted = top + offset
        if wanted == 0 or not len(matched):
            return []
        candidate_scores = scores[matched]
        if len(matched) > wanted:
            best = np.argpartition(-candidate_scores, wanted - 1)[:wanted]
            matched, candidate_scores = matched[best], candidate_scores[best]
        order = np.lexsort((matched, -candidate_scores))[offset:wanted]
        chosen = matched[order].tolist()
        stored = self.stored_fields(chosen) if with_fields else {}
        return [Hit(self._doc_ids[i], float(candidate_scores[j]), stored.get(i, {}))
                for i, j in zip(chosen, order.tolist())]

    def stored_fields(self, doc_idxs: list[int]) -> dict[int, dict]:
        """Stored fields of documents by internal number."""
        found = {i: self._pend_stored[i][1] for i in doc_idxs if i in self._pend_stored}
        rest = [i for i in doc_idxs if i not in found]
        if rest and self._store is not None:
            found.update(self._store.read_stored(rest))
        return found

    def suggest(self, text: str, top: int = 8,
                synonyms: SynonymDictionary | None = None) -> list[str]:
        """Completions of the last, partly typed word of *text*, best first.

        Completions are vocabulary words within a small prefix edit distance,
        ranked by that distance and then by document frequency; a synonym
        dictionary adds its alternatives for the whole text and the words found.
        """
        self._build()
        typed = text.rstrip() if text.endswith(" ") else text
        all_words = words(typed)
        if not all_words:
            return []
        last = all_words[-1]
        head = typed[:typed.lower().rfind(last)]
        suggestions: list[str] = []
        for match in self._fuzzy_index().complete(last, top=top):
            suggestions.append(head + match.word)
        if synonyms is not None:
            for phrase in [typed, last] + [s[len(head):] for s in suggestions[:3]]:
                for alternative in synonyms.lookup(phrase):
                    prefix = "" if phrase == typed else head
                    suggestions.append(prefix + alternative)
        unique = list(dict.fromkeys(s.strip() for s in suggestions if s.strip()))
        return unique[:top]

    @property
    def numeric_fields(self) -> frozenset[str]:
        return frozenset(self._numeric_fields)

    @property
    def vocabulary_size(self) -> int:
        return len(self._term_ids)

    def doc_ids(self) -> list[str]:
        return list(self._doc_ids)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"SearchIndex(fields={self.fields!r}, documents={len(self)}{where})"
