"""The search index: documents in, ranked hits out.

A :class:`SearchIndex` ties together the parts of an index: the postings in
memory (:mod:`.postings`), BM25 ranking (:mod:`.ranking`), pseudo-relevance
feedback (:mod:`.feedback`), boosts by words and formulas (:mod:`.boosts`),
fuzzy correction and completion of query words (:mod:`.fuzzy`), the stored
fields shown with hits (:mod:`.fields`) and, when given a directory, the index
file (:mod:`.storage`).  New documents are pending until the next search merges
them into the postings, and are written to disk as a new segment on :meth:`commit`.

Why one module of some 400 lines: SearchIndex is the public face of the index (open,
add, commit, optimise, search); postings, storage, ranking, feedback, boosts, fields and
fuzzy correction are each in their own module and only composed here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import Analyzer
from .boosts import add_boosts, boost_formula, parse_word_weights
from .errors import SearchError
from .feedback import (
    DEFAULT_FEEDBACK_DOCS,
    DEFAULT_FEEDBACK_TERMS,
    DEFAULT_FEEDBACK_WEIGHT,
    check_feedback,
    expand,
    impact_shares,
)
from .fields import StoredFields, as_text, parse_field_weights
from .formula import BoostFormula
from .fuzzy import QGramIndex, complete_text, correct_query
from .postings import Postings
from .ranking import BM25, Hit, SearchResults, best_documents
from .storage import IndexStore, index_file
from .synonyms import SynonymDictionary

#: Defaults chosen on Cranfield (docs/search.md, "Choosing the defaults").
DEFAULT_K = 1.2
DEFAULT_B = 0.6


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
        Pseudo-relevance feedback (:mod:`.feedback`): the ``feedback_terms``
        terms that weigh most in the top ``feedback_docs`` documents of a first
        BM25 pass are added to the query with weight ``feedback_weight``.
        ``feedback_docs=0`` ranks by plain BM25.
    path : str or Path, optional
        Directory of the on-disk index; None keeps everything in memory.
        Use :meth:`create`, :meth:`open` or :meth:`open_or_create` rather
        than passing it directly.
    """

    def __init__(
        self,
        fields: str | Iterable[str] = ("title", "text"),
        id_field: str = "id",
        field_weights: str | Mapping | None = None,
        analyzer: Analyzer | None = None,
        k: float = DEFAULT_K,
        b: float = DEFAULT_B,
        q: int = 3,
        feedback_docs: int = DEFAULT_FEEDBACK_DOCS,
        feedback_terms: int = DEFAULT_FEEDBACK_TERMS,
        feedback_weight: float = DEFAULT_FEEDBACK_WEIGHT,
    ):
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
        check_feedback(feedback_docs, feedback_terms, feedback_weight)
        BM25(k, b)._check_params()
        QGramIndex(q)
        self.path: Path | None = None
        self._store: IndexStore | None = None
        self._reset()

    def _reset(self) -> None:
        self._doc_ids: list[str] = []
        self._id_to_idx: dict[str, int] = {}
        self._deleted = bytearray()
        self._pend_deleted: list[int] = []
        self._postings = Postings()
        self._stored = StoredFields()
        self._invalidate()

    def _invalidate(self) -> None:
        """Drop what is derived from the postings (they changed)."""
        self._impacts: dict[tuple[float, float], np.ndarray] = {}
        self._fuzzy: QGramIndex | None = None
        self._feedback_shares: dict[int, np.ndarray] = {}
        self._postings.invalidate()
        self._stored.forget_numbers()

    # -- persistence ---------------------------------------------------------

    def get_params(self) -> dict:
        """The configuration stored with the index."""
        return {
            "fields": list(self.fields),
            "id_field": self.id_field,
            "field_weights": self.field_weights,
            "analyzer": self.analyzer.get_params(),
            "k": self.k,
            "b": self.b,
            "q": self.q,
            "feedback_docs": self.feedback_docs,
            "feedback_terms": self.feedback_terms,
            "feedback_weight": self.feedback_weight,
        }

    @classmethod
    def create(cls, path: str | Path, overwrite: bool = False, **params: Any) -> SearchIndex:
        """A new, empty index stored in directory *path*."""
        if index_file(path).exists():
            if not overwrite:
                raise SearchError(f"an index already exists at {path}")
            index_file(path).unlink()
        index = cls(**params)
        store = IndexStore(path, create=True)
        index._attach(store, path)
        store.write_meta("config", index.get_params())
        store.write_meta("format", 1)
        store.commit()
        return index

    @classmethod
    def open(cls, path: str | Path, **overrides: Any) -> SearchIndex:
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
        index._load(store)
        return index

    @classmethod
    def open_or_create(cls, path: str | Path, **params: Any) -> SearchIndex:
        """Open the index at *path* if there is one, else create it with *params*."""
        if index_file(path).exists():
            return cls.open(path)
        return cls.create(path, **params)

    def _attach(self, store: IndexStore, path: str | Path) -> None:
        self._store = store
        self.path = Path(path)

    def _load(self, store: IndexStore) -> None:
        doc_ids, deleted = store.read_documents()
        self._doc_ids = doc_ids
        self._deleted = bytearray(deleted.astype(np.uint8).tobytes())
        self._id_to_idx = {doc_id: i for i, doc_id in enumerate(doc_ids) if not deleted[i]}
        self._stored.load(store)
        self._postings.load(store.read_segments(), ~self._deleted_mask())

    def commit(self) -> None:
        """Write what was added since the last commit as a new segment."""
        store = self._store
        if store is None:
            return
        self._build()
        self._write_rows(store)
        segment = self._postings.pending_segment()
        if segment is not None:
            store.write_segment(segment)
        store.commit()
        self._postings.clear_pending(len(self._doc_ids))

    def optimize(self) -> None:
        """Merge all segments into one, so that :meth:`open` reads a single row."""
        store = self._store
        if store is None:
            return
        self._build()
        self._write_rows(store)
        self._postings.clear_pending(len(self._doc_ids))
        store.write_segment(self._postings.segment(len(self._doc_ids)), replace_all=True)
        store.commit()

    def _write_rows(self, store: IndexStore) -> None:
        self._stored.write(store)
        store.mark_deleted(self._pend_deleted)
        self._pend_deleted = []

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
        self._index_text(idx, document, stored)
        self._stored.collect_numbers(idx, document, (*self.field_weights, self.id_field), stored)
        self._stored.pending[idx] = (doc_id, stored)
        return idx

    def _replace(self, doc_id: str) -> None:
        old = self._id_to_idx.get(doc_id)
        if old is None:
            return
        self._deleted[old] = 1
        # Whether its row is on disk or still pending, it is marked deleted on the next
        # commit: a pending row must still be written, since the index file's document
        # rows are numbered densely (a missing row would shift every later document).
        self._pend_deleted.append(old)

    def _index_text(self, idx: int, document: Mapping, stored: dict) -> None:
        """Analyze the indexed fields of *document* into postings; keep their text in *stored*."""
        field_terms = []
        seen_words: set[str] = set()
        for name, weight in self.field_weights.items():
            text = as_text(document.get(name))
            if not text:
                continue
            stored[name] = text
            self._stored.field_counts[name] += 1
            terms, kept = self.analyzer.analyze_words(text)
            if terms:
                seen_words |= kept
                field_terms.append((terms, weight))
        self._postings.add(idx, field_terms, seen_words)

    def missing_fields(self) -> list[str]:
        """Indexed fields that no document had (usually a misspelt field name)."""
        return [name for name in self.fields if not self._stored.field_counts.get(name)]

    # -- building the arrays ---------------------------------------------------

    def _build(self) -> None:
        """Merge the postings added since the last build into the CSR arrays."""
        if self._postings.build(~self._deleted_mask()):
            self._invalidate()

    def _deleted_mask(self) -> np.ndarray:
        return np.frombuffer(bytes(self._deleted), dtype=np.uint8).astype(bool)

    def __len__(self) -> int:
        """The number of live documents."""
        return len(self._doc_ids) - self._deleted.count(1)

    def _impacts_for(self, k: float, b: float) -> np.ndarray:
        impacts = self._impacts.get((k, b))
        if impacts is None:
            postings = self._postings
            lengths = np.where(self._deleted_mask(), 0.0, postings.lengths).astype(np.float32)
            impacts = BM25(k, b).fit(postings.starts, postings.docs, postings.tfs, lengths, len(self)).impacts_
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
            self._fuzzy = QGramIndex(self.q).fit(self._postings.words)
        return self._fuzzy

    def analyze_query(self, query: str, fuzzy: bool = True) -> tuple[list[str], dict[str, str]]:
        """Query terms (repeats kept) and the corrections made for unknown words.

        A word whose term is in the index is never rewritten; an unknown word
        is replaced by the closest vocabulary word (see :meth:`QGramIndex.correct`).
        """
        self._build()
        known = self._postings.span
        return correct_query(
            query, self.analyzer.term, lambda term: known(term) is not None, self._fuzzy_index if fuzzy else None
        )

    def search(
        self,
        query: str,
        top: int = 10,
        *,
        k: float | None = None,
        b: float | None = None,
        word_weights: str | Mapping | None = None,
        formula: str | BoostFormula | None = None,
        fuzzy: bool = True,
        feedback: int | None = None,
        offset: int = 0,
        with_fields: bool = True,
    ) -> SearchResults:
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
        check_feedback(feedback, self.feedback_terms, self.feedback_weight)
        boost = boost_formula(formula, self._stored.numeric_fields)
        terms, corrections = self.analyze_query(query, fuzzy)
        impacts = self._impacts_for(self.k if k is None else k, self.b if b is None else b)
        n_docs = len(self._doc_ids)
        scores = self._postings.scores(self._postings.query_weights(terms), impacts, n_docs)
        matched = np.flatnonzero(scores > 0)
        expansion: list[str] = []
        if feedback and self.feedback_terms and self.feedback_weight and len(matched):
            first = best_documents(scores, matched, feedback)[0].tolist()
            added, expansion = expand(
                self._postings,
                n_docs,
                self._impact_shares(impacts),
                first,
                len(terms),
                self.feedback_terms,
                self.feedback_weight,
            )
            scores = (1.0 - self.feedback_weight) * scores + self._postings.scores(added, impacts, n_docs)
            matched = np.flatnonzero(scores > 0)
        if len(matched) and (word_weights or boost):
            numbers = functools.partial(self._stored.numbers, n_docs=n_docs, store=self._store)
            word_postings = self._word_postings(parse_word_weights(word_weights))
            scores = add_boosts(scores, matched, word_postings, boost, numbers)
        hits = self._top(scores, matched, top, offset, with_fields)
        return SearchResults(query, hits, len(matched), terms, corrections, expansion)

    def _impact_shares(self, impacts: np.ndarray) -> np.ndarray:
        """:func:`.feedback.impact_shares` for *impacts*, kept for the next query."""
        key = id(impacts)
        shares = self._feedback_shares.get(key)
        if shares is None:
            shares = impact_shares(self._postings, impacts, len(self._doc_ids))
            self._feedback_shares = {key: shares}
        return shares

    def _word_postings(self, word_weights: dict[str, float]) -> Iterator[tuple[float, np.ndarray]]:
        """(weight, documents with the term) for each term of each weighted word."""
        for word, weight in word_weights.items():
            for query_term in self.analyzer.analyze(word):
                span = self._postings.span(query_term)
                if span is not None:
                    yield weight, self._postings.docs[span[0] : span[1]]

    def _top(self, scores: np.ndarray, matched: np.ndarray, top: int, offset: int, with_fields: bool) -> list[Hit]:
        wanted = top + offset
        if wanted == 0 or not len(matched):
            return []
        chosen, chosen_scores = best_documents(scores, matched, wanted)
        chosen, chosen_scores = chosen[offset:].tolist(), chosen_scores[offset:].tolist()
        stored = self.stored_fields(chosen) if with_fields else {}
        return [Hit(self._doc_ids[i], score, stored.get(i, {})) for i, score in zip(chosen, chosen_scores)]

    def stored_fields(self, doc_idxs: list[int]) -> dict[int, dict]:
        """Stored fields of documents by internal number."""
        return self._stored.get(doc_idxs, self._store)

    def suggest(self, text: str, top: int = 8, synonyms: SynonymDictionary | None = None) -> list[str]:
        """Completions of the last, partly typed word of *text*, best first
        (see :func:`.fuzzy.complete_text`)."""
        self._build()
        return complete_text(self._fuzzy_index, text, top, synonyms)

    @property
    def numeric_fields(self) -> frozenset[str]:
        return frozenset(self._stored.numeric_fields)

    @property
    def vocabulary_size(self) -> int:
        return len(self._postings.term_ids)

    def doc_ids(self) -> list[str]:
        return list(self._doc_ids)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"SearchIndex(fields={self.fields!r}, documents={len(self)}{where})"
