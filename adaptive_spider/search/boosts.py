"""Boosts: what a query adds to the BM25 score of a matching document.

Two kinds, both given per query: word weights (``"freiburg=5"`` adds 5 to every
matching document that has the word) and a formula over the documents' numeric
fields (``"log(votes + 1)"``, see :mod:`.formula`).  Boosts only reorder the
documents BM25 matched; they never add documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .errors import SearchError
from .fields import parse_pairs
from .formula import BoostFormula


def parse_word_weights(spec: str | Mapping | None) -> dict[str, float]:
    """Word weights from ``"freiburg=5,python=2"`` or a mapping."""
    if not spec:
        return {}
    weights = {}
    for word, value in parse_pairs(spec):
        try:
            weights[word] = float(value)
        except (TypeError, ValueError):
            raise SearchError(f"word weight of {word!r} must be a number, got {value!r}") from None
    return weights


def boost_formula(formula: str | BoostFormula | None, numeric_fields: Iterable[str]) -> BoostFormula | None:
    """The parsed *formula* (None for none), checked to name only *numeric_fields*."""
    if formula is None or (isinstance(formula, str) and not formula.strip()):
        return None
    boost = formula if isinstance(formula, BoostFormula) else BoostFormula(formula)
    boost.check_fields(set(numeric_fields))
    return boost


def add_boosts(
    scores: np.ndarray,
    matched: np.ndarray,
    word_postings: Iterable[tuple[float, np.ndarray]],
    formula: BoostFormula | None,
    numbers: Callable[[str], np.ndarray],
) -> np.ndarray:
    """*scores* with the boosts added to the *matched* documents.

    *word_postings* gives, per weighted word's term, the weight and the documents
    that have it; *numbers* gives a numeric field's values per document.
    """
    scores = scores.astype(np.float64, copy=True)
    bonus = np.zeros(len(matched))
    for weight, with_word in word_postings:
        bonus += weight * np.isin(matched, with_word, assume_unique=True)
    if formula is not None:
        values = {name: numbers(name)[matched] for name in formula.fields}
        bonus += formula.evaluate(values, len(matched))
    scores[matched] += bonus
    return scores
