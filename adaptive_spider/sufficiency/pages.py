"""A page as the knowledge base takes it in: its text fields, the crawl's verdict on it
(relevance, content hash) and, when the crawl counted them already, its query-term counts.

Live, a page comes from the crawl's own analysis of every HTML response
(:meth:`KnowledgePage.from_analysis`, whatever items the spider yields); offline, from a
saved feed of page items (:meth:`KnowledgePage.from_item`), as does a page item whose page
the crawl did not analyse. The live page's relevance is rounded as the ``focused`` spider's
page items carry it, so a feed of them recomputes to the crawl's own numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from adaptive_spider.relevance.pagetext import PageFields
from adaptive_spider.relevance.scoring import QueryTerms, url_words

#: The fields a page's query terms are counted in, in the order of the counts' rows: the
#: relevance scorer's, whose counts the estimator reuses (a test checks they agree).
FIELDS = ("title", "headings", "body", "url")
#: Decimal places of a page's relevance in the knowledge base and in the ``focused``
#: spider's page items: the same value live and offline gives the same metrics.
RELEVANCE_DIGITS = 6


def knowledge_relevance(relevance: float) -> float:
    """A relevance as the knowledge base keeps it: in [0, 1] (NaN counts as 0), rounded to
    :data:`RELEVANCE_DIGITS` places as a page item carries it."""
    value = float(relevance or 0.0)
    if value != value:  # NaN
        return 0.0
    return round(min(1.0, max(0.0, value)), RELEVANCE_DIGITS)


@dataclass
class KnowledgePage:
    """One page for the estimator: its text, its relevance in [0, 1] and its content SHA-1."""

    fields: PageFields
    relevance: float = 0.0
    #: The page's content SHA-1 (hex) when the crawl computed it; "" when unknown.
    sha1: str = ""
    #: Query-term counts per field (fields x terms) when already known (the crawl's analysis).
    counts: np.ndarray | None = None

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> KnowledgePage:
        """From a page item: its text fields, relevance (clipped to [0, 1]; NaN counts as 0) and sha1."""
        relevance = float(item.get("relevance") or 0.0)
        return cls(PageFields.from_item(item), min(1.0, max(0.0, relevance)), str(item.get("sha1") or ""))

    @classmethod
    def from_analysis(
        cls, fields: PageFields, relevance: float, sha1: str, counts: np.ndarray | None = None
    ) -> KnowledgePage:
        """From the crawl's analysis of a fetched page (what the relevance scorer read and
        counted), with the relevance as the page's item would carry it."""
        return cls(fields, knowledge_relevance(relevance), sha1, counts)


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


def field_counts(terms: QueryTerms, title: str, headings: str, body: str, url: str) -> np.ndarray:
    """Occurrences of each query term per field (fields x terms), in :data:`FIELDS` order."""
    texts = (title.lower(), headings.lower(), body.lower(), url_words(url))
    return np.vstack([terms.count(text) for text in texts]) if len(terms) else np.zeros((len(FIELDS), 0))
