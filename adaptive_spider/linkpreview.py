"""A link's URL parsed once, with the query terms its preview shows.

Enqueuing a request reads its URL four ways: its domain, the words of its
preview (anchor text and URL words, for ``anchor_similarity`` and the link
value), its path depth and whether it has a query string (for the features and
the link value). :class:`LinkPreview` parses it once for all of them, and
counts the query terms of the preview once for both readers.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
from scrapy.utils.httpobj import urlparse_cached

from adaptive_spider.relevance import QueryTerms, url_words_of


class LinkPreview:
    """What a queued link's URL and anchor text tell before it is fetched."""

    __slots__ = ("domain", "path_depth", "has_query", "present")

    def __init__(self, domain: str, path_depth: int, has_query: bool, present: np.ndarray):
        self.domain = domain
        self.path_depth = path_depth
        self.has_query = has_query
        #: Which query terms occur in the anchor text and URL words (booleans).
        self.present = present

    @classmethod
    def of(cls, request, terms: QueryTerms, anchor: str) -> LinkPreview:
        url = request.url
        # Scrapy's cached parse: a middleware may have parsed this request already.
        parts = urlparse_cached(request)
        # urlparse moves ";params" out of the path, which the features count as urlsplit does.
        path = parts.path if ";" not in url else urlsplit(url).path
        hostname = parts.hostname or ""
        present = terms.present(f"{anchor.lower()} {url_words_of(hostname, path, parts.query)}")
        depth = sum(1 for segment in path.split("/") if segment)
        return cls(hostname.lower(), depth, bool(parts.query), present)

    @property
    def term_ids(self) -> tuple[int, ...]:
        """Indexes of the query terms in the preview."""
        return tuple(np.flatnonzero(self.present).tolist())
