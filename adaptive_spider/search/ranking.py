"""BM25 ranking: turn term frequencies into per-posting score contributions.

score(d, q) = sum over query terms t of tf'(t, d) * idf(t), with
tf' = tf * (k + 1) / (k * alpha + tf) and alpha = 1 - b + b * DL / AVDL.

idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (the Robertson–Spärck Jones
weight shifted by one, as Lucene does) so that it is never negative: a union
of postings then never lowers a document for matching one more query word.
"""

from __future__ import annotations

import numpy as np

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

    def fit(self, starts: np.ndarray, post_docs: np.ndarray, post_tf: np.ndarray,
            doc_lengths: np.ndarray, n_docs: int) -> BM25:
        """Compute ``idf_`` per term and ``impacts_`` per posting.

        *doc_lengths* holds the length of every document slot (deleted ones
        included, they simply have no postings); *n_docs* counts live ones.
        """
        self._check_params()
        df = np.diff(starts).astype(np.float64)
        self.idf_ = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        live_total = float(doc_lengths.sum()) if n_docs else 0.0
        self.avgdl_ = live_total / n_docs if n_docs else 1.0
        dl = doc_lengths[post_docs].astype(np.float64)
        alpha = 1.0 - self.b + self.b * dl / (self.avgdl_ or 1.0)
        tf = post_tf.astype(np.float64)
        saturated = tf * (self.k + 1.0) / (self.k * alpha + tf)
        term_of_posting = np.repeat(np.arange(len(df)), np.diff(starts))
        self.impacts_ = (saturated * self.idf_[term_of_posting]).astype(np.float32)
        return self

    def score_one(self, tf: float, df: int, dl: float, n_docs: int, avgdl: float) -> float:
        """The BM25 contribution of one term to one document (for checks and docs)."""
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        alpha = 1.0 - self.b + self.b * dl / avgdl
        return float(tf * (self.k + 1.0) / (self.k * alpha + tf) * idf)
