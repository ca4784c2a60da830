"""BM25 term weights: inverse document frequency, length normalisation, tf saturation.

Shared by the crawl's page scores (:class:`adaptive_spider.relevance.scoring.RelevanceScorer`)
and the search index's ranking (:class:`adaptive_spider.search.ranking.BM25`).  It lives at
the top of the package for the reason :mod:`adaptive_spider.text` does: neither of the two
should import the other.

Every function works on numbers and numpy arrays alike, and keeps the operation order
both callers always had, so their results stay bit-identical (the crawl's fetch order
and the search figures depend on them).  The length normalisation is one formula for
both; idf and saturation come in two forms each, because the two uses need them:

- **idf.** Search ranks a fixed collection with :func:`idf` (Robertson-Spärck Jones,
  shifted by one as Lucene does).  A focused crawl scores pages against statistics of
  the crawl itself, where the query terms occur in most pages *because* the crawl
  works; their Robertson-Spärck Jones weight would fall towards zero exactly then.
  :func:`crawl_idf` stays above ln 2 for a term on every page.
- **saturation.** Search keeps BM25's scale, ``(k + 1)`` at most per term
  (:func:`saturated_tf`), which its boosts and feedback mixing add to.  Relevance
  averages saturations into a field's coverage in [0, 1] and needs the [0, 1) form
  (:func:`tf_saturation`); it equals ``saturated_tf / (k + 1)`` in exact arithmetic,
  not in floating point, so neither can be computed from the other.
"""

from __future__ import annotations

from typing import overload

import numpy as np

# Each formula takes numbers or numpy arrays (broadcast); the overloads say which comes out.


@overload
def idf(n_docs: float, df: float) -> float: ...
@overload
def idf(n_docs: float, df: np.ndarray) -> np.ndarray: ...
def idf(n_docs: float, df: float | np.ndarray) -> float | np.ndarray:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: never negative, so a union of postings
    never lowers a document for matching one more query word."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


@overload
def crawl_idf(n_docs: float, df: float) -> float: ...
@overload
def crawl_idf(n_docs: float, df: np.ndarray) -> np.ndarray: ...
def crawl_idf(n_docs: float, df: float | np.ndarray) -> float | np.ndarray:
    """``ln(1 + (N + 1) / (df + 0.5))``: terms on every page still weigh about ln 2."""
    return np.log1p((n_docs + 1.0) / (df + 0.5))


@overload
def length_norm(length: float, average_length: float, b: float) -> float: ...
@overload
def length_norm(length: np.ndarray, average_length: float | np.ndarray, b: float) -> np.ndarray: ...
def length_norm(length: float | np.ndarray, average_length: float | np.ndarray, b: float) -> float | np.ndarray:
    """``1 - b + b * length / average_length``: how much a field's length dilutes its counts."""
    return 1.0 - b + b * length / average_length


@overload
def saturated_tf(tf: float, norm: float, k: float) -> float: ...
@overload
def saturated_tf(tf: np.ndarray, norm: np.ndarray, k: float) -> np.ndarray: ...
def saturated_tf(tf: float | np.ndarray, norm: float | np.ndarray, k: float) -> float | np.ndarray:
    """BM25's term-frequency factor ``tf * (k + 1) / (k * norm + tf)``, in [0, k + 1)."""
    return tf * (k + 1.0) / (k * norm + tf)


@overload
def tf_saturation(tf: float, norm: float, k: float) -> float: ...
@overload
def tf_saturation(tf: np.ndarray, norm: np.ndarray, k: float) -> np.ndarray: ...
def tf_saturation(tf: float | np.ndarray, norm: float | np.ndarray, k: float) -> float | np.ndarray:
    """``tf' / (k + tf')`` with ``tf' = tf / norm``: the saturation of a term, in [0, 1)."""
    normalised = tf / norm
    return normalised / (k + normalised)
