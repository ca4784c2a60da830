"""Text analysis for the search index: split text into index terms.

An :class:`Analyzer` lowercases text, splits it at every character that is
not a letter or digit, drops stop words and small words, and optionally stems
what remains.  Indexing and querying must use the same analyzer, so the index
stores the analyzer's parameters (:meth:`Analyzer.get_params`) with the data.

The word split, the English stop list and the small-word rule come from
:mod:`adaptive_spider.text`, shared with the crawl's relevance scores.  The crawl
does not use this analyzer, for reasons given there: it splits ASCII words only,
drops query-phrasing words, and stems lightly so that a stem stays a prefix of
the words it matches; search stems with Snowball, which ranks better.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adaptive_spider.text import ENGLISH_STOP_WORDS, MIN_LENGTH, is_content_word, words

from .errors import SearchError

#: A short list of the most frequent English words, for comparison.
SHORT_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

#: Defaults chosen on Cranfield (docs/search.md, "Choosing the defaults"):
#: Porter and Snowball English tie there (MAP .3454 vs .3452 on the tuning half).
DEFAULT_STOP_WORDS = "english"
DEFAULT_MIN_LENGTH = MIN_LENGTH
DEFAULT_STEMMER = "porter"

NAMED_STOP_LISTS = {"english": ENGLISH_STOP_WORDS, "short": SHORT_STOP_WORDS, "none": frozenset()}


def load_stop_words(spec: str | None) -> frozenset[str]:
    """Return the stop words named by *spec*.

    *spec* is ``"english"``, ``"short"``, ``"none"`` (or empty), a
    comma-separated list of words (``"how,to,by"``), or the path of a file
    with one word per line (``#`` starts a comment).
    """
    if not spec:
        return frozenset()
    if spec in NAMED_STOP_LISTS:
        return NAMED_STOP_LISTS[spec]
    path = Path(spec)
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        entries = (line.split("#", 1)[0].strip().lower() for line in lines)
        return frozenset(word for word in entries if word)
    if "/" in spec or spec.endswith(".txt"):
        raise SearchError(f"stop-word file not found: {spec}")
    return frozenset(word.strip().lower() for word in spec.split(",") if word.strip())


class _TermCache(dict):
    """word -> index term ("" for a word that is not indexed), computed on first use.

    Looking words up through ``map(cache.__getitem__, words)`` keeps the
    per-word loop in C; only unseen words reach Python code.
    """

    def __init__(self, analyzer: Analyzer, limit: int):
        super().__init__()
        self.analyzer = analyzer
        self.limit = limit

    def __missing__(self, word: str) -> str:
        if len(self) >= self.limit:
            self.clear()  # bounded memory; vocabularies rarely get here
        term = self.analyzer.stem(word) if self.analyzer.keeps(word) else ""
        self[word] = term
        return term


class Analyzer:
    """Turn text into index terms.

    Parameters
    ----------
    stop_words : str or None
        Stop-word specification, see :func:`load_stop_words`.
    min_length : int
        Small-word threshold: words of length <= ``min_length`` are skipped.
        0 keeps every word.
    stemmer : str or None
        Snowball stemmer (``"porter"``, ``"english"``, ``"german"``, ...) or
        None for no stemming.
    stem_cache_size : int
        How many distinct words keep their term in memory; stemming is the
        slowest step of analysis and vocabularies repeat a lot.
    """

    def __init__(
        self,
        stop_words: str | None = DEFAULT_STOP_WORDS,
        min_length: int = DEFAULT_MIN_LENGTH,
        stemmer: str | None = DEFAULT_STEMMER,
        stem_cache_size: int = 1 << 18,
    ):
        if min_length < 0:
            raise SearchError(f"min_length must be >= 0, got {min_length}")
        self.stop_words = stop_words
        self.min_length = min_length
        self.stemmer = stemmer
        self.stem_cache_size = stem_cache_size
        self._stops = load_stop_words(stop_words)
        self._stem = self._make_stem_function()
        self._cache = _TermCache(self, stem_cache_size)

    def _make_stem_function(self) -> Callable[[str], str]:
        if not self.stemmer:
            return lambda word: word
        try:
            import snowballstemmer
        except ImportError:
            raise SearchError("stemming needs the snowballstemmer package (pip install snowballstemmer)") from None
        try:
            stemmer = snowballstemmer.stemmer(self.stemmer)
        except KeyError:
            raise SearchError(f"unknown stemmer language: {self.stemmer}") from None
        return stemmer.stemWord

    def get_params(self) -> dict:
        """The parameters that define this analyzer (stored with an index)."""
        return {"stop_words": self.stop_words, "min_length": self.min_length, "stemmer": self.stemmer}

    def keeps(self, word: str) -> bool:
        """Whether *word* (lowercase) is indexed at all."""
        return is_content_word(word, self._stops, self.min_length)

    def stem(self, word: str) -> str:
        """The stem of a lowercase *word* (uncached; use :meth:`term`)."""
        return self._stem(word)

    def term(self, word: str) -> str:
        """The index term of a lowercase *word*, "" if the word is not indexed (cached)."""
        return self._cache[word]

    def analyze(self, text: str) -> list[str]:
        """Index terms of *text*, in order, repeats included."""
        return list(filter(None, map(self._cache.__getitem__, words(text))))

    def analyze_words(self, text: str) -> tuple[list[str], set[str]]:
        """Index terms of *text* (repeats included) and the distinct words that made them."""
        all_words = words(text)
        lookup = self._cache.__getitem__
        terms = list(filter(None, map(lookup, all_words)))
        kept = set(filter(lookup, set(all_words)))
        return terms, kept

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"Analyzer({params})"
