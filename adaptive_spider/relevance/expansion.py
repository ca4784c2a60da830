"""Pseudo-relevance feedback: the words of the best pages fetched so far, as a query hint.

A long natural-language query has generic words, and the words that name what its
relevant pages are about are often missing from it ("Python asyncio and concurrent
execution ..." never says "async" or "await"). Keywords fix that, but a user gives a
query. :class:`QueryExpansion` learns such words from the crawl itself, as RM3 (and
Crawl4AI's query expansion) does: from the ``feedback_pages`` most relevant pages
fetched so far it takes the words that are frequent there, in the title, URL and
headings above all, and rare in the crawl's background (document frequencies over
every fetched page). The ``n_terms`` best become *expansion terms*, weighted by that
score and matched as the query terms are (light stems, prefixes from four letters), except a
shorter form of a query word, which matches only the words it is the stem of (below).

By default (``variants``) an expansion term must also be a *variant* of a query word: the
two share their first five letters and most of the shorter one's ("asynchronous" and
"asyncio", "executor" and "execution"), and the term is no shorter form of the query word
("creat" of "create" matches every word the query word does, and more) unless the pages
use it as a word of its own ("async" beside "asyncio": Flask's "Using async and await"; it then
matches that word, not every word it starts: "multi" of "multi-threaded" is no "multimap"), or a
*blend* of two neighbouring query words, as technical writing names a thing in one word
("regex" for "regular expressions", "condvar" for "condition variable"). Any frequent
word (``feedback``, RM3's rule) also brings the best pages' neighbouring topics: on the
held-out topics it drew the crawl off topic, while the variants of the query's own words
keep to it and find the pages that spell them otherwise.

The expansion is a separate matcher, not more query terms: the query terms' ids are
shared by the page scorer's statistics, the link previews, the sufficiency estimator and
the link values, which keep their meaning. The frontier mixes it into a link's
similarity (anchor and URL words, and the link's context), RM3's interpolation
``(1 - weight) * query share + weight * expansion share``; page relevance (the
learner's reward) stays the query's own.

Everything is a function of the pages seen, in the order they were seen (ties broken by
the word), so a crawl is as deterministic with it as without. Memory is bounded: the
background keeps at most ``max_vocabulary`` words (when full, the words seen on a
single page are forgotten), a feedback page at most ``PAGE_TERMS`` of its words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from adaptive_spider.relevance.scoring import PREFIX_MIN_LENGTH, QueryTerms, link_preview_text, url_words_of
from adaptive_spider.text import ENGLISH_STOP_WORDS, light_stem

if TYPE_CHECKING:
    from adaptive_spider.relevance.pagetext import PageFields

#: Share of the feedback pages a term must occur on.
MIN_SUPPORT = 0.3
#: Pages between two choices of the terms when the feedback pages stay the same.
RESELECT_EVERY = 16
#: Words a feedback page keeps (its best by weight): bounded memory per feedback page.
PAGE_TERMS = 128
#: Characters of a page's body read (the start of the body says what the page is about;
#: the rest would cost time on long pages and say little more).
BODY_CHARS = 10_000
#: How much each field's word distribution counts in a feedback page's words.
FIELD_WEIGHTS = {"title": 3.0, "url": 2.0, "headings": 1.5, "body": 0.25}
#: Letters a variant shares with the query word it spells otherwise, at least, and the
#: share of the shorter word's letters they must be ("multiple" is no variant of "multicolumn").
VARIANT_PREFIX = 5
VARIANT_SHARE = 0.7
#: Words of the crawl's web addresses and pages' chrome, never expansion terms.
_NOISE = ENGLISH_STOP_WORDS | frozenset(
    {"http", "https", "www", "html", "htm", "php", "asp", "aspx", "index", "com", "org", "net", "test", "en"}
)
_WORD = re.compile(r"[a-z][a-z0-9]+")


def _stem_of(word: str, memo: dict[str, str]) -> str:
    """The light stem of a word ("" for a stop word), remembered."""
    stem = memo.get(word)
    if stem is None:
        stem = "" if word in _NOISE else light_stem(word)
        if len(memo) < 200_000:
            memo[word] = stem
    return stem


def _stems(text: str, memo: dict[str, str]) -> list[str]:
    """Light stems of the content words of a lowercase text (a word starts with a letter)."""
    return [stem for stem in (_stem_of(word, memo) for word in _WORD.findall(text)) if stem]


def _distinct_stems(text: str, memo: dict[str, str]) -> set[str]:
    """The distinct stems of :func:`_stems` (each word stemmed once however often it occurs)."""
    words = set(_WORD.findall(text))
    new = words.difference(memo)
    if new:
        stems = {word: _stem_of(word, memo) for word in new}  # remembered unless the memo is full
        return {stems[word] if word in stems else memo[word] for word in words}
    return {memo[word] for word in words}


def is_variant(stem: str, query_term: str, is_word: bool = False) -> bool:
    """Whether ``stem`` spells the query word ``query_term`` otherwise: a long common start,
    and not a shorter form of it (which would match more than the query word does) unless
    the pages use it as a word of its own (``is_word``: "async" beside "asyncio"; "creat" is
    only the stem of "creating")."""
    if query_term.startswith(stem) and (not is_word or stem == query_term):
        return False
    shorter = min(len(stem), len(query_term))
    common = next((i for i, (a, b) in enumerate(zip(stem, query_term)) if a != b), shorter)  # letters in common
    return common >= VARIANT_PREFIX and common >= VARIANT_SHARE * shorter


#: Letters a blend takes from each of the two query words it joins, at least: two of the
#: second ("regEX"), three of the first, since two letters and a neighbour's start spell
#: common words ("MOve DELete": "model").
BLEND_PART = 2
BLEND_FIRST_PART = 3


def is_blend(stem: str, sequence: list[str]) -> bool:
    """Whether ``stem`` joins the starts of two neighbouring query words, as technical
    writing names a thing in one word: "regex" (REGular EXpression), "condvar" (CONDition
    VARiable), "filesystem" (file system). The pages must still use it often and the rest of
    the crawl rarely, as for any expansion term; the rule only says which words may be one."""
    if len(stem) < BLEND_FIRST_PART + BLEND_PART:
        return False
    for first, second in pairwise(sequence):
        for cut in range(BLEND_FIRST_PART, min(len(first), len(stem) - BLEND_PART) + 1):
            if stem[:cut] != first[:cut]:
                break
            if second.startswith(stem[cut:]):
                return True
    return False


class QueryExpansion:
    """Expansion terms learned from the crawl's best pages (pseudo-relevance feedback).

    Parameters
    ----------
    query : QueryTerms
        The query's terms: a word they already match is no expansion term.
    n_terms : int
        Expansion terms kept (0: the expansion is off).
    feedback_pages : int
        The most relevant pages fetched so far that the terms are learned from.
    min_relevance : float
        Relevance a page needs to be a feedback page.
    min_pages : int
        Feedback pages needed before there are expansion terms; a term must also occur
        on at least this many of them, and on ``MIN_SUPPORT`` of them.
    min_background : int
        Pages fetched before there are expansion terms (before, the background cannot
        tell a site's chrome from its topics).
    max_df : float
        Largest share of the fetched pages a term may occur on (site chrome is not a topic).
    max_vocabulary : int
        Most words whose document frequency the background keeps.
    variants_only : bool
        Keep only the terms that are variants of a query word (:func:`is_variant`).
    """

    def __init__(
        self,
        query: QueryTerms,
        n_terms: int = 10,
        feedback_pages: int = 30,
        min_relevance: float = 0.5,
        min_pages: int = 2,
        min_background: int = 32,
        max_df: float = 0.5,
        max_vocabulary: int = 100_000,
        variants_only: bool = False,
    ) -> None:
        self.query = query
        self.n_terms = n_terms
        self.feedback_pages = feedback_pages
        self.min_relevance = min_relevance
        self.min_pages = min_pages
        self.min_background = min_background
        self.max_df = max_df
        self.max_vocabulary = max_vocabulary
        self.variants_only = variants_only
        self.n_pages = 0
        self.doc_freq: dict[str, int] = {}
        #: ``(relevance, -arrival, {stem: weight})`` of the feedback pages, best first.
        self.feedback: list[tuple[float, int, dict[str, float]]] = []
        #: Words of the feedback pages' host names: never expansion terms (a term in a host
        #: name would lift every link to that site).
        self.host_words: set[str] = set()
        self.matcher = QueryTerms()
        self._weight_list: list[float] = []
        self.n_updates = 0
        self._feedback_changed = False
        self._memo: dict[str, str] = {}
        self._is_query_word: dict[str, bool] = {}

    @property
    def enabled(self) -> bool:
        return self.n_terms > 0

    @property
    def terms(self) -> list[str]:
        return self.matcher.terms

    def __len__(self) -> int:
        return len(self.matcher)

    # -- learning -----------------------------------------------------------------------
    def observe(self, page: PageFields, relevance: float) -> bool:
        """Count a fetched page in the background and, if it is among the best so far,
        in the feedback; returns whether the expansion terms changed."""
        if not self.enabled:
            return False
        memo = self._memo
        parts = urlsplit(page.url.lower())
        texts = {
            "title": page.title.lower(),
            "url": url_words_of("", parts.path, ""),  # the host's words: see host_words
            "headings": page.headings.lower(),
            "body": page.body[:BODY_CHARS].lower(),
        }
        self.n_pages += 1
        doc_freq = self.doc_freq
        for stem in _distinct_stems(" ".join(texts.values()), memo):
            doc_freq[stem] = doc_freq.get(stem, 0) + 1
        doc_freq.pop("", None)
        if len(doc_freq) > self.max_vocabulary:
            self._forget_rare()
        feedback = self.feedback
        if relevance >= self.min_relevance and (len(feedback) < self.feedback_pages or relevance > feedback[-1][0]):
            fields = {name: _stems(text, memo) for name, text in texts.items()}
            feedback.append((relevance, -self.n_pages, self._page_terms(fields)))
            feedback.sort(key=lambda item: (-item[0], -item[1]))
            del feedback[self.feedback_pages :]
            self.host_words.update(_stems((parts.hostname or "").replace(".", " "), memo))
            self._feedback_changed = True
        # Chosen again when the feedback changes, and as the background grows.
        if self.n_pages < self.min_background or not (self._feedback_changed or self.n_pages % RESELECT_EVERY == 0):
            return False
        self._feedback_changed = False
        return self._select()

    def _forget_rare(self) -> None:
        """Forget the words seen on one page only (the background is full)."""
        self.doc_freq = {stem: df for stem, df in self.doc_freq.items() if df > 1}
        if len(self.doc_freq) > self.max_vocabulary:  # still full: keep the most frequent
            kept = sorted(self.doc_freq.items(), key=lambda item: (-item[1], item[0]))[: self.max_vocabulary // 2]
            self.doc_freq = dict(kept)

    @staticmethod
    def _page_terms(fields: dict[str, list[str]]) -> dict[str, float]:
        """A page's word distribution, each field's words a distribution weighted by the field."""
        weights: dict[str, float] = {}
        total = sum(FIELD_WEIGHTS[name] for name, stems in fields.items() if stems)
        for name, stems in fields.items():
            if not stems:
                continue
            share = FIELD_WEIGHTS[name] / total / len(stems)
            for stem, count in Counter(stems).items():
                weights[stem] = weights.get(stem, 0.0) + share * count
        if len(weights) > PAGE_TERMS:
            weights = dict(sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:PAGE_TERMS])
        return weights

    def _excluded(self, stem: str) -> bool:
        """Whether a stem is a query word, or would match a word of a feedback page's host
        name (it would lift every link to that site)."""
        if stem in self.host_words or (
            len(stem) >= PREFIX_MIN_LENGTH and any(w.startswith(stem) for w in self.host_words)
        ):
            return True
        known = self._is_query_word.get(stem)
        if known is None:
            if len(self._is_query_word) >= 100_000:
                self._is_query_word.clear()
            known = self._is_query_word[stem] = bool(self.query.terms_of(stem))
        return known

    def _is_variant(self, stem: str) -> bool:
        """Whether a stem spells a query word otherwise (:func:`is_variant`; a word of its
        own when a page had it as a word, its stem is itself) or blends two neighbouring
        ones (:func:`is_blend`)."""
        is_word = self._memo.get(stem) == stem
        if any(is_variant(stem, term, is_word) for term in self.query.terms):
            return True
        return is_blend(stem, self.query.sequence)

    def _select(self) -> bool:
        """Choose the expansion terms from the feedback pages; whether they changed."""
        feedback = self.feedback
        if len(feedback) < self.min_pages:
            return False
        min_support = max(self.min_pages, math.ceil(MIN_SUPPORT * len(feedback)))
        mass: dict[str, float] = {}
        support: Counter[str] = Counter()
        total_relevance = sum(relevance for relevance, _, _ in feedback)
        for relevance, _, weights in feedback:
            for stem, weight in weights.items():
                mass[stem] = mass.get(stem, 0.0) + relevance * weight / total_relevance
                support[stem] += 1
        n = self.n_pages
        scored = []
        for stem, value in mass.items():
            df = self.doc_freq.get(stem, 1)
            if support[stem] < min_support or df > self.max_df * n or self._excluded(stem):
                continue
            if self.variants_only and not self._is_variant(stem):
                continue
            scored.append((value * math.log((n + 1) / (df + 0.5)), stem))
        scored.sort(key=lambda item: (-item[0], item[1]))
        # Weights: square roots of the scores, which RM3's products of probabilities
        # concentrate on one or two words; a link's words are few, and each should count.
        chosen = [(math.sqrt(score), stem) for score, stem in scored[: self.n_terms]]
        total = sum(weight for weight, _ in chosen)
        terms = [stem for _, stem in chosen]
        if terms == self.matcher.terms:
            return False
        self._set_terms(terms, [weight / total for weight, _ in chosen] if total else [])
        self.n_updates += 1
        return True

    def _set_terms(self, terms: list[str], weights: list[float]) -> None:
        # A shorter form of a query word is a term because the pages use it as a word of its
        # own ("async" beside "asyncio"): it matches that word, not every word it starts
        # ("multi" of "multi-threaded" is no "multimap" or "multibyte").
        shorter = [stem for stem in terms if any(t.startswith(stem) and t != stem for t in self.query.terms)]
        self.matcher = QueryTerms.of_stems(terms, weights, exact_stems=shorter)
        self._weight_list = [float(weight) for weight in weights]

    # -- matching -----------------------------------------------------------------------
    def share(self, text: str) -> float:
        """Share of the expansion's weight whose terms occur in an already lowercased text."""
        matcher = self.matcher
        if not matcher.terms or not text:
            return 0.0
        ids = matcher.present_ids(text)
        if not ids:
            return 0.0
        weights = self._weight_list
        return sum(weights[i] for i in ids)

    def share_of_link(self, anchor: str, url: str) -> float:
        """:meth:`share` of a link's preview, its anchor text and URL words (every queued link
        comes here: the raw URL is matched, as LinkPreview does, unless a term matches one of
        the words url_words leaves out)."""
        if self.matcher.matches_url_noise or not url.isascii():
            return self.share(link_preview_text(anchor, url))
        return self.share(f"{anchor.lower()} {url.lower().replace('_', ' ')}")

    # -- persistence --------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "n_pages": self.n_pages,
            "doc_freq": self.doc_freq,
            "feedback": [[relevance, order, weights] for relevance, order, weights in self.feedback],
            "host_words": sorted(self.host_words),
            "terms": list(self.matcher.terms),
            "weights": self.matcher.weights.tolist(),
            "n_updates": self.n_updates,
            "feedback_changed": self._feedback_changed,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.n_pages = int(state["n_pages"])
        self.doc_freq = dict(state["doc_freq"])
        self.feedback = [(float(r), int(o), dict(w)) for r, o, w in state["feedback"]]
        self.host_words = set(state["host_words"])
        self._set_terms(list(state["terms"]), list(state["weights"]))
        self.n_updates = int(state["n_updates"])
        self._feedback_changed = bool(state["feedback_changed"])


def mix(query_share: float, expansion_share: float, weight: float, how: str = "interpolate") -> float:
    """The query's and the expansion's share of a text, combined: "interpolate" is RM3's
    ``(1 - weight) * query + weight * expansion``; "add" keeps the query's share whole and adds
    the expansion's to what is left, ``query + weight * expansion * (1 - query)``."""
    if how == "add":
        return query_share + weight * expansion_share * (1.0 - query_share)
    return (1.0 - weight) * query_share + weight * expansion_share
