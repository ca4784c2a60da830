"""Fuzzy word search over an index's vocabulary: a q-gram index plus prefix edit distance.

Each word ``y`` is split into the q-grams of ``"$" * (q - 1) + y`` (padding
on the left only, so a word of length n has exactly n q-grams and every prefix
of ``y`` shares its q-grams with ``y``).  If the prefix edit distance
PED(x, y) = min over prefixes y' of y of ED(x, y') is at most delta, then
``|Q(x) ∩ Q(y)| >= |Q(x)| - q * delta`` (each edit destroys at most q of x's
q-grams).  Candidates that fail this count filter are never compared;
survivors are checked with a bit-parallel edit distance.

On top of it, :func:`correct_query` rewrites the unknown words of a query and
:func:`complete_text` completes the last word of a partly typed one.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np

from .analysis import words
from .errors import SearchError
from .synonyms import SynonymDictionary


class PrefixDistance:
    """PED(x, ·) and ED(x, ·) for one fixed *x*, against many words.

    Uses the bit-vector edit-distance recurrence (one machine word per column
    of the dynamic programme, here a Python int) along y; the last row of
    each column is ED(x, y[:j]), and PED is its minimum over j.  The bit
    masks of x are computed once, which is what makes checking dozens of
    candidates per typed word cheap.
    """

    def __init__(self, x: str):
        self.x = x
        self.full = (1 << len(x)) - 1
        self.top = 1 << (len(x) - 1) if x else 0
        masks: dict[str, int] = {}
        for i, char in enumerate(x):
            masks[char] = masks.get(char, 0) | (1 << i)
        self.masks = masks

    def __call__(self, y: str, delta: int | None = None) -> tuple[int, int]:
        """``(PED(x, y), ED(x, y))``; with *delta*, columns past ``len(x) + delta``
        are skipped, so ED is only exact when ``len(y) <= len(x) + delta``."""
        m = len(self.x)
        if m == 0:
            return 0, len(y)
        full, top, masks = self.full, self.top, self.masks
        pv, mv, score = full, 0, m
        best = m
        end = len(y) if delta is None else min(len(y), m + delta)
        for char in y[:end]:
            eq = masks.get(char, 0)
            xv = eq | mv
            xh = (((eq & pv) + pv) ^ pv) | eq
            ph = (mv | ~(xh | pv)) & full
            mh = pv & xh
            if ph & top:
                score += 1
            elif mh & top:
                score -= 1
            ph = ((ph << 1) | 1) & full
            mh = (mh << 1) & full
            pv = (mh | ~(xv | ph)) & full
            mv = ph & xv
            if score < best:
                best = score
        if end < len(y):
            score = max(score, len(y) - m)
        return best, score


def prefix_edit_distance(x: str, y: str, delta: int | None = None) -> tuple[int, int]:
    """Return ``(PED(x, y), ED(x, y))``, see :class:`PrefixDistance`."""
    return PrefixDistance(x)(y, delta)


def default_delta(word: str) -> int:
    """Edits allowed for a word of this length: 0 up to 3 letters, 1 up to 7, then 2."""
    n = len(word)
    return 0 if n <= 3 else 1 if n <= 7 else 2


@dataclass(frozen=True)
class Match:
    """A vocabulary word found for a typed word."""

    word: str
    ped: int
    ed: int
    count: int


class QGramIndex:
    """A q-gram index over words with their frequencies.

    Parameters
    ----------
    q : int
        Length of the q-grams (3 by default).
    """

    def __init__(self, q: int = 3):
        if not isinstance(q, int) or q < 1:
            raise SearchError(f"q must be an integer >= 1, got {q!r}")
        self.q = q

    def qgrams(self, word: str) -> list[str]:
        """The q-grams of *word*, padded on the left with ``q - 1`` dollars."""
        padded = "$" * (self.q - 1) + word
        return [padded[i : i + self.q] for i in range(len(word))]

    def fit(self, word_counts: dict[str, int]) -> QGramIndex:
        """Index the words of *word_counts* (word -> frequency)."""
        self.words_ = sorted(word_counts)
        self.counts_ = np.array([word_counts[w] for w in self.words_], dtype=np.int64)
        self.lengths_ = np.array([len(w) for w in self.words_], dtype=np.int32)
        lists: dict[str, list[int]] = {}
        mults: dict[str, list[int]] = {}
        for word_id, word in enumerate(self.words_):
            for gram, mult in Counter(self.qgrams(word)).items():
                lists.setdefault(gram, []).append(word_id)
                mults.setdefault(gram, []).append(mult)
        self.lists_ = {g: np.array(ids, dtype=np.int32) for g, ids in lists.items()}
        self.mults_ = {g: np.array(m, dtype=np.int32) for g, m in mults.items()}
        return self

    def candidates(self, x: str, delta: int) -> np.ndarray:
        """Ids of the words that pass the count filter for PED(x, y) <= delta."""
        bound = len(x) - self.q * delta
        if bound <= 0:
            # The filter cannot exclude anything; fall back to a length filter.
            return np.flatnonzero(self.lengths_ >= len(x) - delta)
        ids, contributions = [], []
        for gram, mult in Counter(self.qgrams(x)).items():
            found = self.lists_.get(gram)
            if found is not None:
                ids.append(found)
                contributions.append(np.minimum(self.mults_[gram], mult))
        if not ids:
            return np.empty(0, dtype=np.int64)
        counts = np.bincount(np.concatenate(ids), weights=np.concatenate(contributions))
        return np.flatnonzero(counts >= bound)

    def _prefix_range(self, prefix: str) -> range:
        lo = bisect.bisect_left(self.words_, prefix)
        hi = bisect.bisect_left(self.words_, prefix + "\U0010ffff")
        return range(lo, hi)

    def find(self, x: str, delta: int, whole_words: bool = False) -> list[Match]:
        """All words y with PED(x, y) <= delta, best first (PED, then frequency).

        With *whole_words*, only words within *delta* of x's length are
        checked (a cheap necessary condition for ED(x, y) <= delta).
        """
        if delta == 0:
            ids: range | np.ndarray = self._prefix_range(x)
            matches = [Match(self.words_[i], 0, len(self.words_[i]) - len(x), int(self.counts_[i])) for i in ids]
        else:
            ids = self.candidates(x, delta)
            if whole_words:
                ids = ids[np.abs(self.lengths_[ids] - len(x)) <= delta]
            distance = PrefixDistance(x)
            words, counts = self.words_, self.counts_
            matches = []
            for word_id in cast(np.ndarray, ids).tolist():  # the candidates, not a prefix range
                ped, ed = distance(words[word_id], delta)
                if ped <= delta:
                    matches.append(Match(words[word_id], ped, ed, int(counts[word_id])))
        matches.sort(key=lambda m: (m.ped, -m.count, m.word))
        return matches

    def complete(self, prefix: str, top: int = 10, delta: int | None = None) -> list[Match]:
        """Completions of a partly typed word, best first by PED then frequency."""
        if delta is None:
            delta = default_delta(prefix)
        return self.find(prefix, delta)[:top]

    def correct(self, word: str, delta: int | None = None) -> Match | None:
        """The closest word by edit distance (ties: more frequent), or None.

        Candidates come from the PED search; a correction must be within
        *delta* edits of the whole word, so a bare prefix is not "corrected"
        into a longer word.  Distances are tried from 1 up, so the common
        one-typo case never pays for the weaker filter of larger distances.
        """
        if delta is None:
            delta = default_delta(word)
        for distance in range(1, delta + 1):
            close = [m for m in self.find(word, distance, whole_words=True) if m.ed <= distance]
            if close:
                return min(close, key=lambda m: (m.ed, -m.count, m.word))
        return None


def correct_query(
    query: str, term: Callable[[str], str], known: Callable[[str], bool], matcher: Callable[[], QGramIndex] | None
) -> tuple[list[str], dict[str, str]]:
    """Index terms of *query* (repeats kept) and the corrections made for unknown words.

    *term* turns a word into its index term ("" for a word not indexed); a word
    whose term is *known* is never rewritten; an unknown word is replaced by the
    closest vocabulary word of *matcher*'s index (see :meth:`QGramIndex.correct`),
    built on first need.  No *matcher*: no corrections.
    """
    terms, corrections = [], {}
    for word in words(query):
        query_term = term(word)
        if not query_term:
            continue
        if matcher is not None and not known(query_term):
            match = matcher().correct(word)
            if match is not None:
                corrections[word] = match.word
                query_term = term(match.word)
        terms.append(query_term)
    return terms, corrections


def complete_text(
    matcher: Callable[[], QGramIndex], text: str, top: int = 8, synonyms: SynonymDictionary | None = None
) -> list[str]:
    """Completions of the last, partly typed word of *text*, best first.

    Completions are vocabulary words within a small prefix edit distance,
    ranked by that distance and then by document frequency; a synonym
    dictionary adds its alternatives for the whole text and the words found.
    *matcher* gives the q-gram index of the vocabulary, built on first need.
    """
    typed = text.rstrip() if text.endswith(" ") else text
    all_words = words(typed)
    if not all_words:
        return []
    last = all_words[-1]
    head = typed[: typed.lower().rfind(last)]
    suggestions: list[str] = []
    for match in matcher().complete(last, top=top):
        suggestions.append(head + match.word)
    if synonyms is not None:
        for phrase in [typed, last] + [s[len(head) :] for s in suggestions[:3]]:
            for alternative in synonyms.lookup(phrase):
                prefix = "" if phrase == typed else head
                suggestions.append(prefix + alternative)
    unique = list(dict.fromkeys(s.strip() for s in suggestions if s.strip()))
    return unique[:top]
