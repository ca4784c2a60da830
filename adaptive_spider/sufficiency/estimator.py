"""Information sufficiency: does what the crawl fetched answer the query?

A crawl's *knowledge base* K is the pages it fetched; the query Q is the
weighted terms of :class:`~adaptive_spider.relevance.scoring.QueryTerms` (the same
terms the crawl's relevance scorer uses, so relevance and sufficiency agree on
what the query is). :class:`SufficiencyEstimator` keeps the statistics of K
incrementally, one :meth:`~SufficiencyEstimator.update` per page, and
:meth:`~SufficiencyEstimator.metrics` reads the metrics at any time.
Everything here is plain numpy: no Scrapy, no model, no download.

Per page p and query term t (see docs/sufficiency.md for the full account):

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
  earlier page (same SHA-1 or a 64-bit SimHash within 3 bits); repeated pages
  add no evidence;
- **DomainCoverage** ``= min(1, r_max / rho)``: whether the crawl has reached a
  page about the whole query rather than about its words one by one
  (``rho``: ``answer_relevance``);
- **IS(K,Q)** ``= min(Coverage, Consistency, 1 - Redundancy) x DomainCoverage``
  by default; ``combine`` (min, mean, geometric) and ``weights`` change it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import string
import zlib
from array import array
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from adaptive_spider.settings import defaults as default_settings
from adaptive_spider.relevance.scoring import QueryTerms, url_words

FIELDS = ("title", "headings", "body", "url")
DEFAULT_FIELD_WEIGHTS = default_settings.ADAPTIVE_RELEVANCE_FIELD_WEIGHTS
COMBINATIONS = ("min", "mean", "geometric")
#: Parts of IS; ``redundancy`` enters as 1 - Redundancy.
COMPONENTS = ("coverage", "consistency", "redundancy", "domain_coverage")
STRATEGIES = ("statistical",)
SIMHASH_BITS = 64
#: Texts with more distinct word pairs than this hash a consistent quarter of them.
SIMHASH_FULL_PAIRS = 1024
#: SimHash reads this much of a page's text: pages alike that far are near-duplicates
#: for the estimator, and a long page costs no more than a medium one.
SIMHASH_MAX_CHARS = 16000
#: Two pages whose SimHashes differ in at most this many bits are near-duplicates.
SIMHASH_DISTANCE = 3
_BANDS = 4  # 4 bands of 16 bits: any pair within 3 bits shares a band exactly
_BAND_BITS = SIMHASH_BITS // _BANDS
#: bytes.translate table: ASCII letters and digits stay, every other byte becomes a space.
_WORD_BYTES = bytes(byte if chr(byte) in string.ascii_lowercase + string.digits else 0x20 for byte in range(256))
logger = logging.getLogger(__name__)


# -- pure metric functions --------------------------------------------------------------
def field_counts(terms: QueryTerms, title: str, headings: str, body: str, url: str) -> np.ndarray:
    """Occurrences of each query term per field (fields x terms), in :data:`FIELDS` order."""
    texts = (title.lower(), headings.lower(), body.lower(), url_words(url))
    return np.vstack([terms.count(text) for text in texts]) if len(terms) else np.zeros((len(FIELDS), 0))


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
    values = {"coverage": parts["coverage"], "consistency": parts["consistency"], "redundancy": 1.0 - parts["redundancy"]}
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


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: spreads every input bit over all 64 output bits."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def simhash_words(text: str) -> list[bytes]:
    """The words SimHash reads: runs of ASCII letters and digits of the lowercased text's
    first :data:`SIMHASH_MAX_CHARS` characters (any other character separates words).

    The same words as ``re.findall("[a-z0-9]+", text.lower())``, as bytes, in a
    few C passes instead of a regular expression (a third of its time).
    """
    ascii_text = text[:SIMHASH_MAX_CHARS].lower().encode("ascii", "replace")  # others become "?"
    return ascii_text.translate(_WORD_BYTES).split()


def simhash(text: str, codes: dict[bytes, int] | None = None) -> int:
    """64-bit SimHash of the set of word pairs of a text (deterministic across processes).

    Word pairs, not single words: pages of one site share most of their
    vocabulary (navigation, boilerplate) but not their sentences. ``codes``, a
    dict kept by the caller, caches each word's CRC-32 across pages (the caller
    bounds its size). Only the first :data:`SIMHASH_MAX_CHARS` characters count. On long
    texts only the pairs whose hash ends in two zero bits vote: the same pairs
    on every page (consistent sampling), so near-duplicates still agree.
    """
    words = simhash_words(text)
    if not words:
        return 0
    if codes is None:
        codes = {}
    missing = set(words).difference(codes)
    if missing:
        codes.update(zip(missing, map(zlib.crc32, missing)))
    values = np.fromiter(map(codes.__getitem__, words), dtype=np.uint64, count=len(words))
    pairs = (values[:-1] << np.uint64(32)) | values[1:] if len(values) > 1 else values
    hashes = _mix64(pairs)
    if len(hashes) > SIMHASH_FULL_PAIRS:
        hashes = hashes[(hashes & np.uint64(3)) == 0]
    hashes.sort()
    if len(hashes) > 1:  # each distinct pair votes once
        hashes = hashes[np.concatenate(([True], hashes[1:] != hashes[:-1]))]
    # One row of 64 bits per hash, bit i in column i (the bytes of a little-endian uint64).
    bits = np.unpackbits(hashes.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    majority = np.count_nonzero(bits, axis=0) * 2 > len(hashes)
    return int.from_bytes(np.packbits(majority, bitorder="little").tobytes(), "little")


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


# -- pages ------------------------------------------------------------------------------
@dataclass
class PageText:
    """The fields of a page the estimator reads (from a page item or a feed line)."""

    url: str
    title: str = ""
    headings: str = ""
    body: str = ""
    relevance: float = 0.0
    sha1: str = ""
    #: Query-term counts per field (fields x terms) when already known (the crawl's analysis).
    counts: np.ndarray | None = None

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> PageText:
        """From a page item: url, title, headings (a list or a string), text, relevance, sha1."""
        headings = item.get("headings") or ""
        if not isinstance(headings, str):
            headings = " ".join(str(h) for h in headings)
        relevance = float(item.get("relevance") or 0.0)
        return cls(
            url=str(item.get("url") or ""),
            title=str(item.get("title") or ""),
            headings=headings,
            body=str(item.get("text") or ""),
            relevance=min(1.0, max(0.0, relevance)),
            sha1=str(item.get("sha1") or ""),
        )


def is_page_item(item: Mapping[str, Any]) -> bool:
    """A page of the crawl (the focused spider's PageItem, or any item with url and
    relevance), not a template document or another kind of item."""
    try:
        if "template" in item or "url" not in item or "relevance" not in item:
            return False
        relevance = item["relevance"]
    except (TypeError, KeyError):
        return False
    return isinstance(relevance, (int, float)) and not isinstance(relevance, bool)


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

    def as_dict(self, digits: int = 4) -> dict:
        return {k: round(v, digits) if isinstance(v, float) else v for k, v in asdict(self).items()}


# -- the incremental estimator ------------------------------------------------------------
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
        How IS combines its parts (see :func:`combine`).
    field_weights : mapping
        Weights of title, headings, body and URL words in ``s(t,p)``.
    k1 : float
        Saturation constant of ``s(t,p)``.
    relevant_threshold : float
        Pages at or above this relevance count as relevant (harvest rate).
    seed : int
        Seed of the bootstrap weights: the same pages in the same order give the same metrics.
    """

    def __init__(
        self,
        terms: QueryTerms,
        *,
        evidence_target: float = 2.0,
        n_subsets: int = 32,
        window: int = 10,
        answer_relevance: float = 0.8,
        combine: str = "min",
        weights: Mapping[str, float] | None = None,
        field_weights: Mapping[str, float] | None = None,
        k1: float = 1.2,
        relevant_threshold: float = default_settings.ADAPTIVE_RELEVANT_THRESHOLD,
        seed: int = 0,
    ):
        if combine not in COMBINATIONS:
            raise ValueError(f"combine: unknown combination {combine!r}; choose one of {', '.join(COMBINATIONS)}")
        if evidence_target <= 0 or n_subsets < 2 or window < 1 or not 0 < answer_relevance <= 1:
            raise ValueError("evidence_target > 0, n_subsets >= 2, window >= 1 and 0 < answer_relevance <= 1 are required")
        self.terms = terms
        self.evidence_target = float(evidence_target)
        self.n_subsets = int(n_subsets)
        self.window = int(window)
        self.answer_relevance = float(answer_relevance)
        self.combine = combine
        self.weights = {**dict.fromkeys(COMPONENTS, 1.0), **dict(weights or {})}
        field_weights = {**DEFAULT_FIELD_WEIGHTS, **dict(field_weights or {})}
        self.field_weights = np.array([float(field_weights[f]) for f in FIELDS])
        self.k1 = float(k1)
        self.relevant_threshold = float(relevant_threshold)
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
        self._sha1s: set[str] = set()
        self._word_codes: dict[bytes, int] = {}
        self._bands: list[dict[int, list[int]]] = [{} for _ in range(_BANDS)]
        #: Changes whenever the per-term coverage moves (readers cache on it).
        self.version = 0
        self._cache: tuple[int, SufficiencyMetrics] | None = None
        self._importance_cache: tuple[int, np.ndarray, np.ndarray, float] | None = None
        # The last view, by (version, n_pages): every queued and released link reads it.
        self._view_cache: tuple[tuple[int, int], Any] | None = None

    def __len__(self) -> int:
        return self.n_pages

    # -- updating ------------------------------------------------------------------
    def update(self, page: PageText | Mapping[str, Any]) -> float:
        """Add one page; returns the new query information it brought (``dInfo``)."""
        if not isinstance(page, PageText):
            page = PageText.from_item(page)
        counts = page.counts
        if counts is None or counts.shape != (len(FIELDS), len(self.terms)):
            counts = field_counts(self.terms, page.title, page.headings, page.body, page.url)
        strength = term_saturation(counts, self.field_weights, self.k1)
        relevance = page.relevance
        duplicate = self._is_duplicate(page)
        evidence = np.zeros_like(strength) if duplicate else relevance * strength
        importance, _, _ = self._importance()

        delta = 0.0
        if evidence.any():
            gain = np.log1p(self.soft_df + evidence) - np.log1p(self.soft_df)
            delta = float(np.dot(importance, gain) / math.log1p(self.evidence_target))
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
        self._remember_best(relevance, page.url, duplicate)
        self._record_rate(delta)
        self._cache = None
        self.history.append(self.metrics().sufficiency)
        return delta

    def _is_duplicate(self, page: PageText) -> bool:
        """Whether the page repeats an earlier one; remembers it either way."""
        digest = page.sha1 or hashlib.sha1(page.body.encode("utf-8", "replace")).hexdigest()
        if digest in self._sha1s:
            return True
        self._sha1s.add(digest)
        if not page.body:
            return False
        if len(self._word_codes) > 200_000:
            self._word_codes.clear()
        fingerprint = simhash(page.body, self._word_codes)
        candidates = set()
        for band, table in enumerate(self._bands):
            key = (fingerprint >> (band * _BAND_BITS)) & ((1 << _BAND_BITS) - 1)
            candidates.update(table.get(key, ()))
            table.setdefault(key, []).append(fingerprint)
        return any(hamming(fingerprint, other) <= SIMHASH_DISTANCE for other in candidates)

    def _remember_best(self, relevance: float, url: str, duplicate: bool, keep: int = 10) -> None:
        if duplicate or relevance <= 0:
            return
        best = self.best_pages
        if len(best) < keep or relevance > best[-1][0]:
            best.append((relevance, url))
            best.sort(key=lambda pair: -pair[0])
            del best[keep:]

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

    def view(self):
        """What link values read: term importance ``v(t)``, coverage per term,
        Coverage, Consistency and a version that changes when they move."""
        key = (self.version, self.n_pages)
        if self._view_cache is None or self._view_cache[0] != key:
            from adaptive_spider.sufficiency.linkvalues import KnowledgeView

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

    def term_report(self) -> list[dict]:
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

    def report(self) -> dict:
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
                "seed": self.seed,
            },
        }

    # -- persistence ----------------------------------------------------------------
    _ARRAYS = ("doc_freq", "soft_df", "best_evidence", "subset_best")
    _SCALARS = ("n_pages", "n_relevant", "relevance_mass", "duplicate_mass", "best_relevance", "peak_rate", "version")

    def state_dict(self) -> dict:
        state = {name: getattr(self, name).copy() for name in self._ARRAYS}
        state.update({name: getattr(self, name) for name in self._SCALARS})
        state.update(
            terms=list(self.terms.terms),
            deltas=list(self.deltas),
            history=self.history.tobytes(),
            best_pages=list(self.best_pages),
            sha1s=sorted(self._sha1s),
            bands=[{k: list(v) for k, v in table.items()} for table in self._bands],
            rng=self.rng.bit_generator.state,
        )
        return state

    def load_state_dict(self, state: dict) -> None:
        if list(state["terms"]) != list(self.terms.terms):
            raise ValueError("the saved sufficiency state belongs to another query")
        self._reset()
        for name in self._ARRAYS:
            setattr(self, name, np.array(state[name], dtype=np.float64))
        for name in self._SCALARS:
            setattr(self, name, type(getattr(self, name))(state[name]))
        self.deltas.extend(state["deltas"])
        self.history.frombytes(state["history"])
        self.best_pages = [tuple(pair) for pair in state["best_pages"]]
        self._sha1s = set(state["sha1s"])
        self._bands = [{int(k): list(v) for k, v in table.items()} for table in state["bands"]]
        self.rng.bit_generator.state = state["rng"]


# -- offline analysis ------------------------------------------------------------------------
def read_knowledge_base(path: str | Path) -> Iterable[dict]:
    """The items of a saved knowledge base: a JSON lines feed (``-O kb.jsonl``) or a JSON array."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        first = handle.read(1)
        while first and first.isspace():
            first = handle.read(1)
        handle.seek(0)
        if first == "[":
            yield from json.load(handle)
            return
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON line ({exc.msg})") from None


def evaluate_knowledge_base(
    items: Iterable[Mapping[str, Any]], query: str, keywords: Iterable[str] = (), keyword_weight: float = 2.0, **params
) -> tuple[SufficiencyEstimator, list[SufficiencyMetrics]]:
    """Recompute the metrics of a saved knowledge base, page by page, in feed order.

    Items that are not pages (template documents, other items) are skipped.
    Returns the estimator (its :meth:`~SufficiencyEstimator.report`) and the
    metrics after each page.
    """
    estimator = SufficiencyEstimator(QueryTerms(query, list(keywords), keyword_weight), **params)
    trajectory = []
    for item in items:
        if isinstance(item, Mapping) and is_page_item(item):
            estimator.update(item)
            trajectory.append(estimator.metrics())
    return estimator, trajectory


# -- the crawl's side ----------------------------------------------------------------------------
def estimator_from_config(config, terms: QueryTerms | None = None) -> SufficiencyEstimator:
    """An estimator with the parameters of an :class:`~adaptive_spider.settings.config.AdaptiveConfig`
    (query terms from the config's query and keywords unless given)."""
    if terms is None:
        terms = QueryTerms(config.query, config.keywords, config.keyword_weight)
    return SufficiencyEstimator(
        terms,
        evidence_target=config.sufficiency_evidence,
        n_subsets=config.sufficiency_subsets,
        window=config.sufficiency_window,
        answer_relevance=config.sufficiency_answer_relevance,
        combine=config.sufficiency_combine,
        weights=config.sufficiency_weights,
        field_weights=config.relevance_field_weights,
        k1=config.relevance_k1,
        relevant_threshold=config.relevant_threshold,
        seed=config.seed,
    )


class KnowledgeState:
    """What a crawl knows about its own sufficiency: the estimator of its knowledge
    base and the expected gain of the links it has queued.

    ``CrawlState.knowledge`` holds one; the sufficiency pipeline updates the
    estimator with every page item, the scheduler keeps the link values in step
    with its frontier.
    """

    def __init__(self, estimator: SufficiencyEstimator, links):
        self.estimator = estimator
        self.links = links

    @classmethod
    def from_config(cls, config, terms: QueryTerms, domains=None) -> KnowledgeState:
        """Built from an :class:`~adaptive_spider.settings.config.AdaptiveConfig` and the crawl's
        query terms and domain profiles."""
        from adaptive_spider.sufficiency.linkvalues import LinkValues

        estimator = estimator_from_config(config, terms)

        domain_stats = None
        if domains is not None:

            def domain_stats(domain_id: int):
                profile = domains.profiles[domain_id]
                crawl = estimator.relevance_mass / estimator.n_pages if estimator.n_pages else 0.0
                return profile.failure_rate, profile.relevance_sum, profile.pages, crawl

        links = LinkValues(
            terms,
            estimator.view,
            domain_stats,
            parent_weight=config.linkvalue_parent_weight,
            depth_decay=config.linkvalue_depth_decay,
            query_penalty=config.linkvalue_query_penalty,
            new_domain=config.linkvalue_new_domain,
        )
        return cls(estimator, links)

    def best_gain(self, in_flight=()) -> float:
        """Best expected gain among queued, ready and in-flight links."""
        return self.links.best_pending(in_flight)

    def state_dict(self) -> dict:
        # The link values are rebuilt from the restored frontier, not saved.
        return {"estimator": self.estimator.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        try:
            self.estimator.load_state_dict(state["estimator"])
        except (KeyError, ValueError) as exc:
            logger.warning("Sufficiency: the saved state is not reused (%s); starting afresh", exc)
