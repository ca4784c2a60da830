"""Pseudo-relevance feedback: widen a query with the terms that weigh most in its best documents.

A first BM25 pass ranks the documents; the ``terms`` terms that carry most BM25
weight in its top ``docs`` documents are added to the query, and the final score is
``(1 - w) * BM25(query) + w * n * BM25(expansion)`` with ``w`` the feedback weight and
``n`` the number of query terms (so scores keep BM25's scale).  On Cranfield this
lifts MAP from .314 to .352 (docs/search.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import SearchError
from .postings import Postings

#: Defaults chosen on Cranfield (docs/search.md, "Choosing the defaults").
DEFAULT_FEEDBACK_DOCS = 5
DEFAULT_FEEDBACK_TERMS = 20
DEFAULT_FEEDBACK_WEIGHT = 0.5


def check_feedback(docs: Any, terms: Any, weight: Any) -> None:
    """Raise a :class:`SearchError` unless the feedback settings make sense."""
    if not (isinstance(docs, int) and docs >= 0 and isinstance(terms, int) and terms >= 0):
        raise SearchError("feedback documents and terms must be integers >= 0")
    if not (isinstance(weight, (int, float)) and 0 <= weight <= 1):
        raise SearchError(f"feedback weight must be between 0 and 1, got {weight!r}")


def impact_shares(postings: Postings, impacts: np.ndarray, n_docs: int) -> np.ndarray:
    """Each posting's share of its document's total BM25 impact, in document order
    (the order of :meth:`Postings.forward`)."""
    by_doc, doc_starts, _ = postings.forward(n_docs)
    totals = np.bincount(postings.docs, weights=impacts, minlength=n_docs)
    owner = np.repeat(np.arange(n_docs), np.diff(doc_starts))
    return (impacts[by_doc] / np.where(totals > 0, totals, 1.0)[owner]).astype(np.float32)


def expand(
    postings: Postings,
    n_docs: int,
    shares: np.ndarray,
    top_docs: list[int],
    n_query_terms: int,
    n_terms: int,
    weight: float,
) -> tuple[dict[int, float], list[str]]:
    """Query weights of the *n_terms* terms that carry most BM25 weight in *top_docs*,
    and those terms best first.

    Each feedback document spreads a total weight of 1 over its terms in
    proportion to their BM25 impact in it (*shares*, from :func:`impact_shares`);
    the expansion as a whole weighs ``weight * n_query_terms``, the query's own
    terms ``1 - weight``.
    """
    _, doc_starts, forward_terms = postings.forward(n_docs)
    spans = [(int(doc_starts[d]), int(doc_starts[d + 1])) for d in top_docs]
    found = np.concatenate([forward_terms[a:b] for a, b in spans])
    shares_found = np.concatenate([shares[a:b] for a, b in spans])
    # Group by term with a sort: np.unique costs several times more on arrays this small.
    order = np.argsort(found, kind="stable")
    found, shares_found = found[order], shares_found[order]
    firsts = np.concatenate(([0], np.flatnonzero(found[1:] != found[:-1]) + 1))
    tids = found[firsts]
    mass = np.add.reduceat(shares_found.astype(np.float64), firsts)
    if len(tids) > n_terms:
        best = np.argpartition(-mass, n_terms - 1)[:n_terms]
        tids, mass = tids[best], mass[best]
    scale = weight * max(n_query_terms, 1) / mass.sum()
    added = dict(zip(tids.tolist(), (mass * scale).tolist()))
    terms = postings.term_list()
    return added, [terms[t] for t in tids[np.argsort(-mass, kind="stable")].tolist()]
