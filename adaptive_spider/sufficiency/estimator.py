"""The sufficiency estimator: does what the crawl fetched answer the query?

:class:`SufficiencyEstimator` keeps the statistics of a crawl's knowledge base K
incrementally, one :meth:`~SufficiencyEstimator.update` per page, and
:meth:`~SufficiencyEstimator.metrics` reads the metrics at any time (the formulas are
in :mod:`adaptive_spider.sufficiency.metrics`). The query is the crawl's own
:class:`~adaptive_spider.relevance.scoring.QueryTerms`, so relevance and sufficiency
agree on what the query is. Repeated pages (same content hash, or a SimHash within a
few bits) add no evidence. Plain numpy: no Scrapy, no model, no download.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from adaptive_spider.relevance.pagetext import content_sha1
from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.settings import defaults
from adaptive_spider.sufficiency.linkvalues import KnowledgeView
from adaptive_spider.sufficiency.metrics import (
    COMBINATIONS,
    COMPONENTS,
    SufficiencyMetrics,
    combine,
    consistency,
    coverage,
    domain_coverage,
    information_gain,
    inverse_document_frequency,
    redundancy,
    saturation,
    term_coverage,
    term_importance,
    term_saturation,
    trimmed_mean,
)
from adaptive_spider.sufficiency.pages import FIELDS, KnowledgePage, field_counts
from adaptive_spider.sufficiency.simhash import NearDuplicateIndex

#: The estimators ``ADAPTIVE_SUFFICIENCY_STRATEGY`` chooses from.
STRATEGIES = ("statistical",)
#: A page that joins the best pages changes them (for the self-stop's wait) when its
#: relevance is at least this share of the best page's. Chosen on the dev topics by
#: replaying crawls (docs/sufficiency.md, "Waiting for the best pages"): 0.5 kept
#: single-site crawls going on pages that share a word with the query, 0.8 stopped
#: crawls from a hub before most of their topic's pages.
BEST_SHARE = 0.7


class SufficiencyEstimator:
    """Incremental statistics of a knowledge base and its sufficiency for a query.

    Parameters
    ----------
    terms : QueryTerms
        The query's weighted terms (the crawl's ``CrawlState.terms``).
    evidence_target : float
        ``D``: evidence (pages' worth) at which a term counts as covered.
    n_subsets : int
        Bootstrap subsets of the consistency estimate.
    window : int
        Pages over which saturation smooths the new information per page.
    answer_relevance : float
        ``rho``: relevance of a page that is about the whole query (DomainCoverage 1).
    combine, weights :
        How IS combines its parts (see :func:`~adaptive_spider.sufficiency.metrics.combine`).
    field_weights : mapping
        Weights of title, headings, body and URL words in ``s(t,p)``.
    k1 : float
        Saturation constant of ``s(t,p)``.
    relevant_threshold : float
        Pages at or above this relevance count as relevant (harvest rate).
    best_pages : int
        How many of the best pages (by relevance) it keeps. It also tracks when a page last
        joined them with at least ``BEST_SHARE`` of the best page's relevance
        (:attr:`best_changed_at`, what the self-stop waits on); pages that join far below
        the best (a word of the query in passing) are the long tail of any site and say
        nothing of the answer.
    seed : int
        Seed of the bootstrap weights: the same pages in the same order give the same metrics.
    """

    def __init__(
        self,
        terms: QueryTerms,
        *,
        evidence_target: float = defaults.ADAPTIVE_SUFFICIENCY_EVIDENCE,
        n_subsets: int = defaults.ADAPTIVE_SUFFICIENCY_SUBSETS,
        window: int = defaults.ADAPTIVE_SUFFICIENCY_WINDOW,
        answer_relevance: float = defaults.ADAPTIVE_SUFFICIENCY_ANSWER_RELEVANCE,
        combine: str = defaults.ADAPTIVE_SUFFICIENCY_COMBINE,
        weights: Mapping[str, float] | None = None,
        field_weights: Mapping[str, float] | None = None,
        k1: float = defaults.ADAPTIVE_RELEVANCE_K1,
        relevant_threshold: float = defaults.ADAPTIVE_RELEVANT_THRESHOLD,
        best_pages: int = defaults.ADAPTIVE_STOP_BEST_PAGES,
        harvest_window: int = defaults.ADAPTIVE_STOP_HARVEST_WINDOW,
        seed: int = defaults.ADAPTIVE_SEED,
    ) -> None:
        if combine not in COMBINATIONS:
            raise ValueError(f"combine: unknown combination {combine!r}; choose one of {', '.join(COMBINATIONS)}")
        if (
            evidence_target <= 0
            or n_subsets < 2
            or window < 1
            or best_pages < 1
            or harvest_window < 0
            or not 0 < answer_relevance <= 1
        ):
            raise ValueError(
                "evidence_target > 0, n_subsets >= 2, window >= 1, best_pages >= 1, harvest_window >= 0"
                " and 0 < answer_relevance <= 1 are required"
            )
        self.terms = terms
        self.evidence_target = float(evidence_target)
        self.n_subsets = int(n_subsets)
        self.window = int(window)
        self.answer_relevance = float(answer_relevance)
        self.combine = combine
        self.weights = {**dict.fromkeys(COMPONENTS, 1.0), **dict(weights or {})}
        field_weights = {**defaults.ADAPTIVE_RELEVANCE_FIELD_WEIGHTS, **dict(field_weights or {})}
        self.field_weights = np.array([float(field_weights[f]) for f in FIELDS])
        self.k1 = float(k1)
        self.relevant_threshold = float(relevant_threshold)
        self.keep_best = int(best_pages)
        self.harvest_window = int(harvest_window)
        self.seed = int(seed)
        self._reset()

    def _reset(self) -> None:
        n_terms = len(self.terms)
        self.rng = np.random.default_rng(self.seed)
        self.n_pages = 0
        self.n_relevant = 0
        self.doc_freq = np.zeros(n_terms)
        self.soft_df = np.zeros(n_terms)
        self.best_evidence = np.zeros(n_terms)
        self.subset_best = np.zeros((self.n_subsets, n_terms))
        self.relevance_mass = 0.0
        self.duplicate_mass = 0.0
        self.best_relevance = 0.0
        self.deltas: deque = deque(maxlen=self.window)
        self.peak_rate = 0.0
        self.history = array("d")  # IS after each page
        self.best_pages: list[tuple[float, str]] = []
        #: Pages the crawl had when ``best_pages`` last changed (0: not yet).
        self.best_changed_at = 0
        #: Whether each of the last ``harvest_window`` pages came near the best (1) or not (0).
        self.near_best: deque[int] = deque(maxlen=self.harvest_window or None)
        #: The most pages near the best that any ``harvest_window`` pages in a row held.
        self.near_best_peak = 0
        self._near_best_count = 0  # the ones in ``near_best``
        self._sha1s: set[str] = set()
        self._near_duplicates = NearDuplicateIndex()
        #: Changes whenever the per-term coverage moves (readers cache on it).
        self.version = 0
        self._cache: tuple[int, SufficiencyMetrics] | None = None
        self._importance_cache: tuple[tuple[int, int], np.ndarray, np.ndarray, float] | None = None
        # The last view, by (version, n_pages): every queued and released link reads it.
        self._view_cache: tuple[tuple[int, int], KnowledgeView] | None = None

    def __len__(self) -> int:
        return self.n_pages

    # -- updating ------------------------------------------------------------------
    def update(self, page: KnowledgePage | Mapping[str, Any]) -> float:
        """Add one page; returns the new query information it brought (``dInfo``)."""
        if not isinstance(page, KnowledgePage):
            page = KnowledgePage.from_item(page)
        counts = page.counts
        if counts is None or counts.shape != (len(FIELDS), len(self.terms)):
            fields = page.fields
            counts = field_counts(self.terms, fields.title, fields.headings, fields.body, fields.url)
        strength = term_saturation(counts, self.field_weights, self.k1)
        relevance = page.relevance
        duplicate = self._is_duplicate(page)
        evidence = np.zeros_like(strength) if duplicate else relevance * strength
        self._count_near_best(not duplicate and relevance > 0 and relevance >= BEST_SHARE * self.best_relevance)
        importance, _, _ = self._importance()

        delta = information_gain(importance, self.soft_df, evidence, self.evidence_target) if evidence.any() else 0.0
        self.n_pages += 1
        self.doc_freq += counts.sum(axis=0) > 0
        self.relevance_mass += relevance
        if duplicate:
            self.duplicate_mass += relevance
        if relevance >= self.relevant_threshold:
            self.n_relevant += 1
        if evidence.any():
            self.soft_df += evidence
            np.maximum(self.best_evidence, evidence, out=self.best_evidence)
            self.version += 1
        # Online bootstrap: a Poisson(1) weight per page and subset, drawn once; for a
        # maximum only whether it is above 0 matters. Drawn for every page (duplicates
        # too), so the subsets do not depend on what the pages say.
        included = self.rng.poisson(1.0, self.n_subsets) > 0
        if evidence.any():
            self.subset_best[included] = np.maximum(self.subset_best[included], evidence)
        if not duplicate and relevance > self.best_relevance:
            self.best_relevance = relevance
        self._remember_best(relevance, page.fields.url, duplicate)
        self._record_rate(delta)
        self._cache = None
        self.history.append(self.metrics().sufficiency)
        return delta

    def _is_duplicate(self, page: KnowledgePage) -> bool:
        """Whether the page repeats an earlier one; remembers it either way."""
        body = page.fields.body
        digest = page.sha1 or content_sha1(body)
        if digest in self._sha1s:
            return True
        self._sha1s.add(digest)
        return bool(body) and self._near_duplicates.add(body)

    def _remember_best(self, relevance: float, url: str, duplicate: bool) -> None:
        if duplicate or relevance <= 0:
            return
        best = self.best_pages
        if len(best) < self.keep_best or relevance > best[-1][0]:
            if not best or relevance >= BEST_SHARE * best[0][0]:
                self.best_changed_at = self.n_pages
            best.append((relevance, url))
            best.sort(key=lambda pair: -pair[0])
            del best[self.keep_best :]

    def _count_near_best(self, near: bool) -> None:
        if not self.harvest_window:
            return
        if len(self.near_best) == self.harvest_window:
            self._near_best_count -= self.near_best[0]  # leaves the window
        self.near_best.append(int(near))
        self._near_best_count += int(near)
        if len(self.near_best) == self.harvest_window:
            self.near_best_peak = max(self.near_best_peak, self._near_best_count)

    def harvest_settled(self, drop: float) -> bool:
        """Whether the last ``harvest_window`` pages held at most ``drop`` x the most pages near
        the best that any such window held: the crawl no longer finds pages as good as its
        best at anything like the pace it once did. From a page listing many sites the best
        ten settle early, on pages that share the query's commoner words, while the topic's
        own pages have yet to come in numbers; on one site this ends soon after the answer.
        True without a window, and while no page has reached ``relevant_threshold`` (a crawl
        that found nothing relevant has no pace to keep); else never before the first window
        is full."""
        if not self.harvest_window or self.best_relevance < self.relevant_threshold:
            return True
        if len(self.near_best) < self.harvest_window:
            return False
        return self._near_best_count <= drop * self.near_best_peak

    def best_settled(self, ratio: float, min_pages: int = 0) -> bool:
        """Whether no page has joined the best pages (near the best's relevance) for
        ``ratio`` x the pages it took to find them, and for at least ``min_pages``: a crawl
        that still finds pages as good as its best has not seen the whole of its answer
        yet, however well the query's words are covered. A ``ratio`` of 0 waits for nothing."""
        return ratio <= 0 or self.n_pages >= self.settled_page(ratio, min_pages)

    def settled_page(self, ratio: float, min_pages: int = 0) -> int:
        """The page count from which the best pages, as they are now, count as settled."""
        changed = self.best_changed_at
        return changed + max(min_pages, math.ceil(ratio * changed))

    def _record_rate(self, delta: float) -> None:
        self.deltas.append(delta)
        if len(self.deltas) == self.window:
            self.peak_rate = max(self.peak_rate, trimmed_mean(self.deltas))

    # -- reading -------------------------------------------------------------------
    def _importance(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Term importance, term coverage and Coverage, cached until the next change."""
        key = (self.version, self.n_pages)
        cached = self._importance_cache
        if cached is None or cached[0] != key:
            importance = term_importance(self.terms.weights, inverse_document_frequency(self.n_pages, self.doc_freq))
            covered = term_coverage(self.soft_df, self.evidence_target)
            cached = (key, importance, covered, coverage(importance, covered))
            self._importance_cache = cached
        return cached[1], cached[2], cached[3]

    def view(self) -> KnowledgeView:
        """What link values read: term importance ``v(t)``, coverage per term,
        Coverage, Consistency and a version that changes when they move."""
        key = (self.version, self.n_pages)
        if self._view_cache is None or self._view_cache[0] != key:
            importance, covered, cov = self._importance()
            self._view_cache = (key, KnowledgeView(importance, covered, cov, self.metrics().consistency, self.version))
        return self._view_cache[1]

    def metrics(self) -> SufficiencyMetrics:
        if self._cache is not None and self._cache[0] == self.n_pages:
            return self._cache[1]
        importance, _, cov = self._importance()
        answers = self.subset_best @ importance if len(self.terms) else np.zeros(self.n_subsets)
        parts = {
            "coverage": cov,
            "consistency": consistency(answers) if self.n_pages and answers.any() else 0.0,
            "redundancy": redundancy(self.duplicate_mass, self.relevance_mass),
            "domain_coverage": domain_coverage(self.best_relevance, self.answer_relevance),
        }
        result = SufficiencyMetrics(
            pages=self.n_pages,
            relevant_pages=self.n_relevant,
            harvest_rate=self.n_relevant / self.n_pages if self.n_pages else 0.0,
            saturation=saturation(trimmed_mean(self.deltas), self.peak_rate),
            sufficiency=combine(parts, self.combine, self.weights) if self.n_pages else 0.0,
            **parts,
        )
        self._cache = (self.n_pages, result)
        return result

    def term_report(self) -> list[dict[str, Any]]:
        """Per query term: weight, importance, pages mentioning it, evidence, best evidence, coverage."""
        importance, covered, _ = self._importance()
        return [
            {
                "term": term,
                "weight": round(float(self.terms.weights[i]), 4),
                "importance": round(float(importance[i]), 4),
                "pages": int(self.doc_freq[i]),
                "evidence": round(float(self.soft_df[i]), 4),
                "best_evidence": round(float(self.best_evidence[i]), 4),
                "coverage": round(float(covered[i]), 4),
            }
            for i, term in enumerate(self.terms.terms)
        ]

    def report(self) -> dict[str, Any]:
        """Metrics, per-term evidence and the best pages, as plain JSON-able data."""
        return {
            "query_terms": self.terms.terms,
            "metrics": self.metrics().as_dict(),
            "terms": self.term_report(),
            "best_pages": [{"url": url, "relevance": round(r, 4)} for r, url in self.best_pages],
            "parameters": {
                "evidence_target": self.evidence_target,
                "n_subsets": self.n_subsets,
                "window": self.window,
                "answer_relevance": self.answer_relevance,
                "combine": self.combine,
                "weights": self.weights,
                "best_pages": self.keep_best,
                "harvest_window": self.harvest_window,
                "seed": self.seed,
            },
        }

    # -- persistence ----------------------------------------------------------------
    _ARRAYS = ("doc_freq", "soft_df", "best_evidence", "subset_best")
    _SCALARS = (
        "n_pages",
        "n_relevant",
        "relevance_mass",
        "duplicate_mass",
        "best_relevance",
        "peak_rate",
        "version",
        "best_changed_at",
        "near_best_peak",
    )

    def state_dict(self) -> dict[str, Any]:
        state = {name: getattr(self, name).copy() for name in self._ARRAYS}
        state.update({name: getattr(self, name) for name in self._SCALARS})
        state.update(
            terms=list(self.terms.terms),
            deltas=list(self.deltas),
            history=self.history.tobytes(),
            best_pages=list(self.best_pages),
            near_best=list(self.near_best),
            sha1s=sorted(self._sha1s),
            bands=self._near_duplicates.state_dict(),
            rng=self.rng.bit_generator.state,
        )
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if list(state["terms"]) != list(self.terms.terms):
            raise ValueError("the saved sufficiency state belongs to another query")
        self._reset()
        for name in self._ARRAYS:
            setattr(self, name, np.array(state[name], dtype=np.float64))
        for name in self._SCALARS:
            # A state saved before a scalar existed keeps the fresh value (best_changed_at: 0).
            setattr(self, name, type(getattr(self, name))(state.get(name, getattr(self, name))))
        self.deltas.extend(state["deltas"])
        self.history.frombytes(state["history"])
        self.best_pages = [tuple(pair) for pair in state["best_pages"]]
        self.near_best.extend(state.get("near_best", ()))
        self._near_best_count = sum(self.near_best)
        self._sha1s = set(state["sha1s"])
        self._near_duplicates.load_state_dict(state["bands"])
        self.rng.bit_generator.state = state["rng"]
