"""BM25 ranking: term frequencies into per-posting score contributions, the best documents, the hits.

score(d, q) = sum over query terms t of tf'(t, d) * idf(t), with
tf' = tf * (k + 1) / (k * alpha + tf) and alpha = 1 - b + b * DL / AVDL.

idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (the Robertson–Spärck Jones
weight shifted by one, as Lucene does) so that it is never negative: a union
of postings then never lowers a document for matching one more query word.

The formulas are :mod:`adaptive_spider.bm25`'s, shared with the crawl's page
scores (which use other idf and saturation forms, for reasons given there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from adaptive_spider.bm25 import idf, length_norm, saturated_tf

from .errors import SearchError


class BM25:
    """BM25 with saturation *k* and length normalisation *b*.

    :meth:`fit` takes the index's postings (CSR layout: postings of term ``t``
    are ``starts[t]:starts[t+1]``) and stores ``impacts_``, the score each
    posting adds when its term is queried.  Scoring a query is then a sum of
    precomputed numbers, which is what keeps queries under a millisecond.
    """

    def __init__(self, k: float = 1.2, b: float = 0.75):
        self.k = k
        self.b = b

    def _check_params(self) -> None:
        if not (isinstance(self.k, (int, float)) and self.k >= 0):
            raise SearchError(f"BM25 k must be a number >= 0, got {self.k!r}")
        if not (isinstance(self.b, (int, float)) and 0 <= self.b <= 1):
            raise SearchError(f"BM25 b must be a number between 0 and 1, got {self.b!r}")

    def fit(
        self, starts: np.ndarray, post_docs: np.ndarray, post_tf: np.ndarray, doc_lengths: np.ndarray, n_docs: int
    ) -> BM25:
        """Compute ``idf_`` per term and ``impacts_`` per posting.

        *doc_lengths* holds the length of every document slot (deleted ones
        included, they simply have no postings); *n_docs* counts live ones.
        """
        self._check_params()
        df = np.diff(starts).astype(np.float64)
        self.idf_ = idf(n_docs, df)
        live_total = float(doc_lengths.sum()) if n_docs else 0.0
        self.avgdl_ = live_total / n_docs if n_docs else 1.0
        dl = doc_lengths[post_docs].astype(np.float64)
        alpha = length_norm(dl, self.avgdl_ or 1.0, self.b)
        saturated = saturated_tf(post_tf.astype(np.float64), alpha, self.k)
        term_of_posting = np.repeat(np.arange(len(df)), np.diff(starts))
        self.impacts_ = (saturated * self.idf_[term_of_posting]).astype(np.float32)
        return self

    def score_one(self, tf: float, df: int, dl: float, n_docs: int, avgdl: float) -> float:
        """The BM25 contribution of one term to one document (for checks and docs)."""
        return float(saturated_tf(tf, length_norm(dl, avgdl, self.b), self.k) * idf(n_docs, df))


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


def best_documents(scores: np.ndarray, matched: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The *count* best of the *matched* documents, best first, and their scores.

    Ties go to the lower document number, so rankings are reproducible.  Only
    the best *count* are sorted: a partition finds them first.
    """
    candidate_scores = scores[matched]
    if len(matched) > count:
        best = np.argpartition(-candidate_scores, count - 1)[:count]
        matched, candidate_scores = matched[best], candidate_scores[best]
    order = np.lexsort((matched, -candidate_scores))
    return matched[order], candidate_scores[order]
