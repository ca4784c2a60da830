"""The interface of a page relevance model of one's own (``ADAPTIVE_RELEVANCE``).

By default (``"bm25"``) a page's relevance is the query's BM25-style score
(:class:`~adaptive_spider.relevance.scoring.RelevanceScorer`). ``ADAPTIVE_RELEVANCE`` may
instead name a class, by dotted path, as Scrapy's ``SCHEDULER`` does: a trained page
classifier (:class:`~adaptive_spider.relevance.classifier.PageClassifier`), an embedding
model, a rule of one's own. It needs one method, :meth:`PageRelevance.score`; subclassing
:class:`PageRelevance` is optional (any class with ``score`` will do).

What the score is used for: it is the page's *relevance*, everywhere the crawl uses one —
the reward the frontier's strategy learns from, the parent score of the links found on the
page, the domain's relevance, the ``relevant_pages`` count (``ADAPTIVE_RELEVANT_THRESHOLD``),
the page item's ``relevance`` and the self-stop's knowledge base. What it does not replace:
a link is still judged, before it is fetched, by how its anchor, URL and context match the
query's words (the link prior), and the self-stop still counts the query's terms; so a
crawl with a model of its own still needs ``ADAPTIVE_QUERY``.

How the class is built, once per crawl: ``from_crawler(crawler)`` if it has one (read your
settings from ``crawler.settings``), else ``from_settings(settings)``, else ``cls()``. Do not
call ``CrawlState.of(crawler)`` there: the crawl state is what is building the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from adaptive_spider.settings.table import RELEVANCE_MODELS

if TYPE_CHECKING:
    from scrapy.http import Response

    from adaptive_spider.relevance.pagetext import PageFields

#: The built-in relevance models (values of ``ADAPTIVE_RELEVANCE`` that are not a class path).
BUILTIN = RELEVANCE_MODELS


class PageRelevance:
    """Base class of a page relevance model: :meth:`score` is all a model must have.

    Optional, as in Scrapy: a ``from_crawler(crawler)`` or ``from_settings(settings)``
    classmethod to build it; ``state_dict()`` / ``load_state_dict(state)`` for a model that
    changes during the crawl and should be saved with JOBDIR.
    """

    def score(self, page: PageFields, response: Response | None = None) -> float:
        """Relevance of a fetched HTML page, in [0, 1] (values outside are clipped).

        ``page`` holds the text the crawl reads (``url``, ``title``, ``headings``, ``body``,
        ``link_density``); ``response`` is the Scrapy response it came from (for a model
        that reads the markup), or None when a page is scored outside a crawl.
        """
        raise NotImplementedError


def check_relevance_class(cls: type) -> str | None:
    """Why ``cls`` cannot be an ``ADAPTIVE_RELEVANCE`` model (None: it can)."""
    if not callable(getattr(cls, "score", None)):
        return "has no score(page, response) method (see adaptive_spider.relevance.base.PageRelevance)"
    if getattr(cls, "score", None) is PageRelevance.score:
        return "does not implement score(page, response)"
    return None


def checked_score(value: Any, model: object) -> float:
    """A model's score as a float in [0, 1]: a number outside is clipped, anything else is an error."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{type(model).__qualname__}.score returned {value!r}, not a number") from None
    if number != number:
        raise ValueError(f"{type(model).__qualname__}.score returned NaN")
    return min(1.0, max(0.0, number))
