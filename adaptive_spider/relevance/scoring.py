"""Scoring pages and links against the query, statistically (no model, no download).

:class:`QueryTerms` turns the query and its keywords into weighted terms and
counts them in text with one compiled regular expression (C speed, even on
large pages). :class:`RelevanceScorer` scores a page with a BM25F-style formula
over its fields and normalises the result to [0, 1]; the score is the reward of
the request that fetched the page. It also scores a link's preview (anchor text
and URL words) for the frontier's ``anchor_similarity`` feature.

Term statistics (document frequencies) come from the pages of the crawl itself,
updated incrementally, so the scorer needs no corpus beforehand.

Words, stop words and stems come from :mod:`adaptive_spider.text` and the BM25 formulas
from :mod:`adaptive_spider.bm25`, shared with the search index.  The crawl keeps its own
choices among them, for reasons given there: ASCII words (the term counter's pattern
and the link-preview fast path rely on them), its query stop list, a light stemmer
whose stems are prefixes of the words they match (Snowball stems are not), an idf that
stays up for terms on most pages, and the [0, 1) form of the tf saturation.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.bm25 import crawl_idf, length_norm, tf_saturation
from adaptive_spider.settings import defaults
from adaptive_spider.text import QUERY_STOP_WORDS, ascii_words, is_content_word, light_stem

if TYPE_CHECKING:  # pagetext imports this module: PageFields is only named in annotations here
    from collections.abc import Iterable, Mapping

    from adaptive_spider.relevance.pagetext import PageFields

#: The crawl's stop list for query words (kept under its old name for importers).
STOP_WORDS = QUERY_STOP_WORDS
#: Terms this long or longer match as prefixes ("cluster" matches "clustering").
PREFIX_MIN_LENGTH = 4
MAX_TERMS = 64
_URL_NOISE = frozenset(
    {"http", "https", "www", "html", "htm", "php", "asp", "aspx", "index", "com", "org", "net", "test"}
)


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens of a text, without stop words and one-letter words."""
    return [word for word in ascii_words(text) if is_content_word(word, QUERY_STOP_WORDS)]


#: Where a compound name's next part starts: "QMutex", "ReentrantLock", "getLogger", "HTTPServer".
_NEXT_PART = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def anchor_words(anchor: str) -> str:
    """An anchor text lowercased, then the parts of the compound names in it, if any
    ("QMutex": "qmutex q mutex"). API listings name their entries in camel case
    ("QRegularExpression", "ReentrantLock") and a query says the same in words; the
    whole name stays, for a query that names it ("PostgreSQL")."""
    lower = anchor.lower()
    if lower == anchor or anchor.isupper():
        return lower
    parts = _NEXT_PART.sub(" ", anchor)
    return lower if len(parts) == len(anchor) else f"{lower} {parts.lower()}"


def link_preview_text(anchor: str, url: str) -> str:
    """What a link shows before it is fetched: its anchor text (with the parts of its
    compound names, see :func:`anchor_words`) and its URL's words, lowercase."""
    return f"{anchor_words(anchor)} {url_words(url)}"


def url_words(url: str) -> str:
    """The words of a URL (host and path), as a lowercase string."""
    parts = urlsplit(url.lower())
    return url_words_of(parts.hostname or "", parts.path, parts.query)


def url_words_of(hostname: str, path: str, query: str) -> str:
    """:func:`url_words` of a URL already split (for a caller that parsed it anyway)."""
    words = ascii_words(f"{hostname} {path} {query}")
    return " ".join([w for w in words if w not in _URL_NOISE])


class QueryTerms:
    """Weighted terms of a query and its keywords, with a fast counter for them.

    Query words weigh 1 and keyword words ``keyword_weight``; a word in both
    weighs the sum. Each term is a light stem; stems of at least
    ``PREFIX_MIN_LENGTH`` letters match any word they start
    ("coroutine" matches "coroutines"), shorter ones match whole words.
    """

    def __init__(self, query: str = "", keywords: Iterable[str] = (), keyword_weight: float = 2.0) -> None:
        weights: dict[str, float] = {}
        #: The query's stems in the query's order (the terms are ranked by weight).
        self.sequence: list[str] = [light_stem(word) for word in tokenize(query)]
        for stem in self.sequence:
            weights[stem] = weights.get(stem, 0.0) + 1.0
        for keyword in keywords:
            for word in tokenize(keyword):
                stem = light_stem(word)
                weights[stem] = weights.get(stem, 0.0) + keyword_weight
        ranked = sorted(weights.items(), key=lambda item: -item[1])[:MAX_TERMS]
        self.terms: list[str] = [term for term, _ in ranked]
        self.weights = np.array([weight for _, weight in ranked], dtype=np.float64)
        #: Terms that match only the words whose light stem they are, not as a prefix (see :meth:`of_stems`).
        self.exact_stems: frozenset[str] = frozenset()
        self._pattern = self._compile(self.terms)
        self._word_terms: dict[str, tuple[int, ...]] = {}
        #: Whether a term matches a word that :func:`url_words` leaves out ("html", "www"...).
        self.matches_url_noise = self._pattern is not None and any(self._pattern.search(w) for w in _URL_NOISE)

    @classmethod
    def of_stems(cls, stems: list[str], weights: list[float], exact_stems: Iterable[str] = ()) -> QueryTerms:
        """Terms that are stems already (not stemmed again), with their weights, in this order.

        A term in ``exact_stems`` matches only the words it is the light stem of ("creat": "created",
        "creating"), however long: not every word it starts ("create", "creation")."""
        terms = cls()
        terms.terms = list(stems)
        terms.sequence = list(stems)
        terms.weights = np.array(weights, dtype=np.float64)
        terms.exact_stems = frozenset(exact_stems) & set(stems)
        terms._pattern = cls._compile(terms.terms)
        terms.matches_url_noise = terms._pattern is not None and any(terms._pattern.search(w) for w in _URL_NOISE)
        return terms

    def __len__(self) -> int:
        return len(self.terms)

    @staticmethod
    def _compile(terms: list[str]) -> re.Pattern[str] | None:
        """One pattern for every word that any term may match (longest terms first; a
        term of ``exact_stems`` has its candidates checked in :meth:`terms_of`)."""
        if not terms:
            return None
        alternatives = []
        for term in sorted(terms, key=len, reverse=True):
            tail = r"[a-z0-9]*" if len(term) >= PREFIX_MIN_LENGTH else r"(?:s|es)?\b"
            alternatives.append(re.escape(term) + tail)
        return re.compile(r"\b(?:" + "|".join(alternatives) + ")")

    def terms_of(self, word: str) -> tuple[int, ...]:
        """Indexes of every term a word matches: "asyncio" counts for "async" and "asyncio"."""
        found = self._word_terms.get(word)
        if found is None:
            exact_stems = self.exact_stems
            found = tuple(
                index
                for index, term in enumerate(self.terms)
                if (
                    (light_stem(word) == term if term in exact_stems else word.startswith(term))
                    if len(term) >= PREFIX_MIN_LENGTH
                    else word in (term, term + "s", term + "es")
                )
            )
            if len(self._word_terms) < 100_000:
                self._word_terms[word] = found
        return found

    def count(self, text: str) -> np.ndarray:
        """Occurrences of each term in an already lowercased text."""
        counts = np.zeros(len(self.terms), dtype=np.float64)
        if self._pattern is None or not text:
            return counts
        for word in self._pattern.findall(text):
            for index in self.terms_of(word):
                counts[index] += 1.0
        return counts

    def present_ids(self, text: str) -> tuple[int, ...]:
        """Indexes of the terms that occur in an already lowercased text, ascending."""
        # Not count() > 0, nor numpy: every queued link's preview comes here, most without a term.
        if self._pattern is None or not text:
            return ()
        found: set[int] = set()
        for word in self._pattern.findall(text):
            found.update(self.terms_of(word))
        return tuple(sorted(found)) if found else ()


class RelevanceScorer:
    """Relevance of pages and links to a query, normalised to [0, 1].

    A page is scored field by field (title, headings, body, URL words). In each
    field every term gets a BM25 saturation
    ``s_tf = tf' / (k1 + tf')`` with ``tf' = tf / (1 - b + b * len_f / avglen_f)``,
    and the field's *coverage* is the idf- and weight-averaged saturation
    ``cov_f = sum_t w_t idf_t s_ft / sum_t w_t idf_t`` (0 when no term occurs,
    near 1 when all occur often). The page score mixes the coverages with the
    field weights, ``m = sum_f W_f cov_f / sum_f W_f``, discounts link-heavy
    navigation pages by ``(1 - link_density) ** link_discount`` and maps the
    result onto [0, 1] with ``(1 + h) m / (m + h)`` (``h``: ``half``), so that a
    page whose mixed coverage is ``h`` scores about 0.5: short fields such as a
    title can only cover a few query terms, which keeps ``m`` itself small.

    Mixing per-field coverages, rather than adding field term counts as BM25F
    does, keeps a long page that mentions every query word somewhere (release
    notes, an index of terms) from scoring like a page whose title and headings
    are about the query: in BM25F the body alone saturates every term.

    ``idf_t = log(1 + (N + 1) / (df_t + 0.5))`` over the ``N`` pages observed so
    far: terms that occur everywhere in the crawl (a site's name, say) count less.
    """

    FIELDS = ("title", "headings", "body", "url")

    def __init__(
        self,
        terms: QueryTerms,
        field_weights: Mapping[str, float] | None = None,
        k1: float = defaults.ADAPTIVE_RELEVANCE_K1,
        b: float = defaults.ADAPTIVE_RELEVANCE_B,
        link_discount: float = defaults.ADAPTIVE_RELEVANCE_LINK_DISCOUNT,
        half: float = defaults.ADAPTIVE_RELEVANCE_HALF,
    ) -> None:
        self.terms = terms
        field_weights = field_weights or defaults.ADAPTIVE_RELEVANCE_FIELD_WEIGHTS
        self.field_weights = np.array([float(field_weights.get(f, 0.0)) for f in self.FIELDS])
        self.k1 = k1
        self.b = b
        self.link_discount = link_discount
        self.half = half
        self.n_pages = 0
        self.doc_freq = np.zeros(len(terms), dtype=np.float64)
        self.length_sums = np.zeros(len(self.FIELDS), dtype=np.float64)
        # Term weights and their sum, kept until the statistics change: every queued link reads them.
        self._weights: tuple[np.ndarray, float] | None = None
        self._weight_list: tuple[np.ndarray, list[float]] | None = None

    # -- statistics ------------------------------------------------------------
    def idf(self) -> np.ndarray:
        return crawl_idf(self.n_pages, self.doc_freq)

    def _term_weights(self) -> np.ndarray:
        return self.terms.weights * self.idf()

    def _cached_weights(self) -> tuple[np.ndarray, float]:
        if self._weights is None:
            weights = self._term_weights()
            self._weights = (weights, weights.sum())
        return self._weights

    def observe(self, counts: np.ndarray, lengths: np.ndarray) -> None:
        """Add one page's term counts (fields x terms) and field lengths to the statistics."""
        self.n_pages += 1
        self.doc_freq += counts.sum(axis=0) > 0
        self.length_sums += lengths
        self._weights = None

    def state_dict(self) -> dict:
        return {"n_pages": self.n_pages, "doc_freq": self.doc_freq.tolist(), "length_sums": self.length_sums.tolist()}

    def load_state_dict(self, state: dict) -> None:
        self.n_pages = int(state["n_pages"])
        self.doc_freq = np.array(state["doc_freq"], dtype=np.float64)
        self.length_sums = np.array(state["length_sums"], dtype=np.float64)
        self._weights = None

    # -- scoring ---------------------------------------------------------------
    def field_counts(self, page: PageFields) -> tuple[np.ndarray, np.ndarray]:
        """Term counts per field (fields x terms) and field lengths in words."""
        texts = (page.title.lower(), page.headings.lower(), page.body.lower(), url_words(page.url))
        counts = np.vstack([self.terms.count(text) for text in texts])
        lengths = np.array([len(text.split()) for text in texts], dtype=np.float64)
        return counts, lengths

    def score_counts(self, counts: np.ndarray, lengths: np.ndarray, link_density: float = 0.0) -> float:
        if len(self.terms) == 0:
            return 0.0
        if self.n_pages:
            average = np.maximum(self.length_sums / self.n_pages, 1.0)
        else:
            average = np.maximum(lengths, 1.0)
        norm = length_norm(lengths, average, self.b)
        saturation = tf_saturation(counts, norm[:, None], self.k1)
        weights = self._term_weights()
        coverage = (saturation * weights).sum(axis=1) / weights.sum()
        mixed = float((self.field_weights * coverage).sum() / self.field_weights.sum())
        mixed *= (1.0 - min(max(link_density, 0.0), 1.0)) ** self.link_discount
        return (1.0 + self.half) * mixed / (mixed + self.half) if mixed > 0 else 0.0

    def score_page(self, page: PageFields, *, learn: bool = True) -> float:
        """Relevance of a page in [0, 1]; with ``learn``, the page joins the statistics."""
        return self.score_and_count(page, learn=learn)[0]

    def score_and_count(
        self, page: PageFields, *, learn: bool = True, counted: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[float, np.ndarray]:
        """:meth:`score_page`, and the page's term counts per field (fields x terms), which
        other readers of the same query terms can reuse instead of counting again; ``counted``:
        the page's :meth:`field_counts`, when they are known already."""
        counts, lengths = counted if counted is not None else self.field_counts(page)
        score = self.score_counts(counts, lengths, page.link_density)
        if learn:
            self.observe(counts, lengths)
        return score, counts

    def score_link(self, anchor: str, url: str) -> float:
        """Similarity of a link's preview (anchor text and URL words) to the query, in [0, 1]."""
        if len(self.terms) == 0:
            return 0.0
        return self.score_term_ids(self.terms.present_ids(link_preview_text(anchor, url)))

    def score_term_ids(self, term_ids: tuple[int, ...]) -> float:
        """:meth:`score_link` of a preview whose query terms are known (their indexes, ascending):
        the weights of those terms over the weights of all, as numpy would sum them."""
        if not term_ids or len(self.terms) == 0:
            return 0.0
        weights, total = self._cached_weights()
        if len(term_ids) > _EXACT_PYTHON_SUM:
            return float(weights[list(term_ids)].sum() / total)
        # Fewer than 8 values numpy sums in order, as here, without its per-call cost (a
        # link's preview has a term or two); from 8 on it sums in eight interleaved parts.
        values = self._weight_values()
        share = 0.0
        for index in term_ids:
            share += values[index]
        return share / float(total)

    def _weight_values(self) -> list[float]:
        """The cached term weights as floats (refreshed with them)."""
        weights, _ = self._cached_weights()
        if self._weight_list is None or self._weight_list[0] is not weights:
            self._weight_list = (weights, weights.tolist())
        return self._weight_list[1]


_EXACT_PYTHON_SUM = 7  # numpy sums up to 7 values in order


def harmonic_norm(value: float, scale: float) -> float:
    """Map a non-negative count onto [0, 1) with ``value / (value + scale)``."""
    return value / (value + scale) if value > 0 else 0.0


def log_norm(value: float, top: float) -> float:
    """Map a non-negative count onto [0, 1] logarithmically, reaching 1 at ``top``."""
    return min(1.0, math.log1p(max(value, 0.0)) / math.log1p(top))
