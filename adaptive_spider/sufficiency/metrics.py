"""The sufficiency metrics as formulas: pure functions of a knowledge base's statistics.

A knowledge base K is the pages a crawl fetched; the query Q is the weighted terms of
:class:`~adaptive_spider.relevance.scoring.QueryTerms`. Per page p and query term t
(see docs/sufficiency.md for the full account):

- ``s(t,p) = tf / (k1 + tf)``, ``tf`` the field-weighted count of t in p's
  title, headings, body and URL words: how much p says about t;
- ``e(t,p) = r(p) * s(t,p)``, ``r(p)`` the page's relevance to the whole query
  (the crawl's score): *evidence*, so a word mentioned in passing on an
  unrelated page counts little;
- ``df(t,K) = sum_p e(t,p)``: a soft document frequency; ``n(t,K)`` the plain one;
- ``idf(t) = log(1 + (N + 1) / (n(t,K) + 0.5))`` and the term importance
  ``v(t) = w(t) idf(t) / sum_u w(u) idf(u)`` (query weights ``w``, sum 1).

The metrics, each in [0, 1]:

- **Coverage** ``= sum_t v(t) min(1, log(1 + df(t,K)) / log(1 + D))``: the
  query-weighted ``log(df + 1) idf`` of the framework, normalised so a term is
  covered once it has ``D`` (``evidence_target``) pages' worth of evidence;
- **Consistency** ``= 1 - 4 Var_b(a_b)``: ``a_b = sum_t v(t) max_{p in K_b} e(t,p)``
  is the query's best evidence in the random subset ``K_b``; the subsets are an
  online bootstrap (each page joins each subset with a weight drawn once from
  Poisson(1), Oza & Russell), so an update costs O(subsets x terms) whatever the
  size of K. 4 is 1 / the largest variance of a [0, 1] value;
- **Saturation** ``= 1 - rate_now / rate_peak``: ``rate`` is the new
  information per page, ``dInfo(p) = sum_t v(t) [log(1 + df_t + e(t,p)) - log(1 + df_t)] / log(1 + D)``,
  averaged over the last ``window`` pages without the window's largest value
  (one large page — an index — neither makes the peak nor hides a stall);
- **Redundancy** ``=`` the share of relevance mass on pages that repeat an
  earlier page (same content SHA-1 or a 64-bit SimHash within 3 bits); repeated
  pages add no evidence;
- **DomainCoverage** ``= min(1, r_max / rho)``: whether the crawl has reached a
  page about the whole query rather than about its words one by one
  (``rho``: ``answer_relevance``);
- **IS(K,Q)** ``= min(Coverage, Consistency, 1 - Redundancy) x DomainCoverage``
  by default; ``combine`` (min, mean, geometric) and ``weights`` change it.

Everything here is plain numpy: the estimator (:mod:`adaptive_spider.sufficiency.estimator`)
keeps the statistics, these functions read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

COMBINATIONS = ("min", "mean", "geometric")
#: Parts of IS; ``redundancy`` enters as 1 - Redundancy.
COMPONENTS = ("coverage", "consistency", "redundancy", "domain_coverage")


def term_saturation(counts: np.ndarray, field_weights: np.ndarray, k1: float = 1.2) -> np.ndarray:
    """How much a page says about each term: ``tf / (k1 + tf)`` of the field-weighted count."""
    tf = (np.asarray(field_weights, dtype=np.float64)[:, None] * counts).sum(axis=0)
    return tf / (k1 + tf)


def inverse_document_frequency(n_pages: int, doc_freq: np.ndarray) -> np.ndarray:
    """``log(1 + (N + 1) / (n_t + 0.5))``, as the crawl's relevance scorer computes it."""
    return np.log1p((n_pages + 1.0) / (np.asarray(doc_freq, dtype=np.float64) + 0.5))


def term_importance(weights: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """Query weight times idf, normalised to sum 1 (all zeros for an empty query)."""
    raw = np.asarray(weights, dtype=np.float64) * idf
    total = raw.sum()
    return raw / total if total > 0 else raw


def term_coverage(soft_df: np.ndarray, evidence_target: float) -> np.ndarray:
    """``min(1, log(1 + df) / log(1 + D))`` per term."""
    return np.minimum(1.0, np.log1p(np.asarray(soft_df, dtype=np.float64)) / math.log1p(evidence_target))


def information_gain(
    importance: np.ndarray, soft_df: np.ndarray, evidence: np.ndarray, evidence_target: float
) -> float:
    """``dInfo``: the importance-weighted growth of ``log(1 + df)`` that a page's evidence
    brings, in units of ``log(1 + D)`` (the growth that covers a term)."""
    gain = np.log1p(soft_df + evidence) - np.log1p(soft_df)
    return float(np.dot(importance, gain) / math.log1p(evidence_target))


def coverage(importance: np.ndarray, covered: np.ndarray) -> float:
    return float(np.dot(importance, covered))


def consistency(answers: np.ndarray) -> float:
    """``1 - 4 Var(answers)`` of values in [0, 1], clipped to [0, 1]; 0 with fewer than 2 answers."""
    answers = np.asarray(answers, dtype=np.float64)
    if answers.size < 2:
        return 0.0
    return float(np.clip(1.0 - 4.0 * answers.var(), 0.0, 1.0))


def trimmed_mean(values: Iterable[float]) -> float:
    """Mean without the single largest value (so one outlier cannot carry it)."""
    values = sorted(values)
    if len(values) >= 2:
        values = values[:-1]
    return sum(values) / len(values) if values else 0.0


def saturation(rate_now: float, rate_peak: float) -> float:
    """``1 - rate_now / rate_peak``; 0 while nothing informative has been seen."""
    if rate_peak <= 0.0:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - rate_now / rate_peak)))


def redundancy(duplicate_mass: float, total_mass: float) -> float:
    return float(duplicate_mass / total_mass) if total_mass > 0 else 0.0


def domain_coverage(best_relevance: float, answer_relevance: float) -> float:
    return float(min(1.0, best_relevance / answer_relevance)) if answer_relevance > 0 else 1.0


def combine(parts: Mapping[str, float], how: str = "min", weights: Mapping[str, float] | None = None) -> float:
    """IS from its parts: ``how`` of coverage, consistency and 1 - redundancy (those
    with a weight above 0), times domain_coverage (unless its weight is 0).

    ``min`` ignores the size of the weights; ``mean`` is the weighted mean;
    ``geometric`` the weighted geometric mean.
    """
    weights = {**dict.fromkeys(COMPONENTS, 1.0), **(weights or {})}
    values = {
        "coverage": parts["coverage"],
        "consistency": parts["consistency"],
        "redundancy": 1.0 - parts["redundancy"],
    }
    chosen = {name: value for name, value in values.items() if weights[name] > 0}
    if not chosen:
        core = 1.0
    elif how == "min":
        core = min(chosen.values())
    elif how == "mean":
        core = sum(weights[n] * v for n, v in chosen.items()) / sum(weights[n] for n in chosen)
    elif how == "geometric":
        if min(chosen.values()) <= 0.0:
            core = 0.0
        else:
            total = sum(weights[n] for n in chosen)
            core = math.exp(sum(weights[n] * math.log(v) for n, v in chosen.items()) / total)
    else:
        raise ValueError(f"unknown combination {how!r}; choose one of {', '.join(COMBINATIONS)}")
    if weights["domain_coverage"] > 0:
        core *= parts["domain_coverage"]
    return float(core)


@dataclass
class SufficiencyMetrics:
    """The metrics of a knowledge base at one moment."""

    pages: int = 0
    relevant_pages: int = 0
    harvest_rate: float = 0.0
    coverage: float = 0.0
    consistency: float = 0.0
    saturation: float = 0.0
    redundancy: float = 0.0
    domain_coverage: float = 0.0
    sufficiency: float = 0.0

    def as_dict(self, digits: int = 4) -> dict[str, Any]:
        return {k: round(v, digits) if isinstance(v, float) else v for k, v in asdict(self).items()}
