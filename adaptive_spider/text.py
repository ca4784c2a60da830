"""Words of a text: how text splits into words, which words are stop words, how words stem.

Shared by the crawl's relevance scores (:mod:`adaptive_spider.relevance.scoring`) and the
search index's analyzer (:mod:`adaptive_spider.search.analysis`).  It lives at the top of
the package, not in either of them, because neither should import the other: search
reads what a crawl wrote, and importing ``adaptive_spider.search`` loads the index, its
SQLite storage and the fuzzy matcher, none of which a crawl needs.

Both lowercase first, keep words longer than one letter that are not stop words
(:func:`is_content_word`), and start from the same English function words.  Where they
still differ, they must:

- **Words.** Search splits at anything that is not a letter or digit of any script
  (:func:`words`); relevance splits into ASCII letter and digit runs
  (:func:`ascii_words`).  Relevance counts query terms in page text and URLs with one
  regular expression whose term tails are ``[a-z0-9]*`` and whose link-preview fast
  path relies on URL words being exactly such runs; a Unicode split there would move
  the scores of pages and links with non-ASCII letters, and with them the fetch order.
- **Stop words.** Search's list (:data:`ENGLISH_STOP_WORDS`) was measured on Cranfield
  (docs/search.md); the crawl's (:data:`QUERY_STOP_WORDS`) also drops the words that
  phrase a crawl query ("using", "vs") and keeps reflexive pronouns and modals.  Merging
  them would change either the search figures or the crawl's fetch order.
- **Stemming.** Relevance uses :func:`light_stem`: it matches a stem as the *prefix*
  of words in the raw page text, with one regular expression and no per-word
  stemming (thousands of links and large pages per second), so a stem must be a
  prefix of the words it stands for.  Porter/Snowball stems often are not
  ("query" -> "queri", "policy" -> "polici"); search stems every indexed word with
  Snowball instead, which ranks better (docs/search.md).
"""

from __future__ import annotations

import re

# Letters and digits of any script; everything else (punctuation, symbols,
# underscores, whitespace) separates words.
_WORD = re.compile(r"[^\W_]+")
# ASCII letters and digits only (relevance; see the module docstring).
_ASCII_WORD = re.compile(r"[a-z0-9]+")

#: Words this long or shorter are skipped (one letter: "a", "s" of "it's", "x").
MIN_LENGTH = 1

#: English function words (articles, pronouns, auxiliaries, prepositions, conjunctions,
#: question words) that both stop lists drop.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "also",
        "via",
        "etc",
    ]
)

#: Search's English stop list, written for this project and chosen by the Cranfield
#: measurements in docs/search.md: it beats no list and a 33-word one.
ENGLISH_STOP_WORDS = FUNCTION_WORDS | frozenset(
    [
        "herself",
        "himself",
        "myself",
        "ours",
        "ourselves",
        "theirs",
        "themselves",
        "yours",
        "yourself",
        "yourselves",
        "may",
        "might",
        "must",
        "shall",
        "upon",
        "whether",
        "within",
        "without",
        "yet",
    ]
)

#: The crawl's stop list for query and keyword words: function words and the words
#: that phrase a query rather than name its topic.
QUERY_STOP_WORDS = FUNCTION_WORDS | frozenset(["using", "use", "used", "versus", "vs"])


def words(text: str) -> list[str]:
    """Lowercase *text* and split it into words of letters and digits (any script)."""
    return _WORD.findall(text.lower())


def ascii_words(text: str) -> list[str]:
    """Lowercase *text* and split it into runs of ASCII letters and digits."""
    return _ASCII_WORD.findall(text.lower())


def is_content_word(word: str, stop_words: frozenset[str], min_length: int = MIN_LENGTH) -> bool:
    """Whether a lowercase *word* carries meaning: longer than *min_length* and not a stop word."""
    return len(word) > min_length and word not in stop_words


def light_stem(word: str) -> str:
    """Strip common English inflections; enough to match plurals and -ing/-ed forms."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", ""), ("ing", ""), ("ed", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith(("ss", "us", "is")):
            stem = word[: len(word) - len(suffix)] + keep
            if suffix == "es" and not stem.endswith(("ss", "x", "ch", "sh", "z")):
                stem = word[:-1]
            return stem
    return word
