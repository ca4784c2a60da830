"""A link's URL parsed once, with the query terms its preview shows.

Enqueuing a request reads its URL four ways: its domain, the words of its
preview (anchor text and URL words, for ``anchor_similarity`` and the link
value), its path depth and whether it has a query string (for the features and
the link value). :class:`LinkPreview` parses it once for all of them, and
counts the query terms of the preview once for both readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from adaptive_spider.relevance.links import names_a_file
from adaptive_spider.relevance.scoring import QueryTerms, anchor_words, url_words_of

if TYPE_CHECKING:
    from scrapy import Request


class LinkPreview:
    """What a queued link's URL and anchor text tell before it is fetched."""

    __slots__ = ("domain", "path_depth", "has_query", "term_ids", "is_file")

    def __init__(
        self, domain: str, path_depth: int, has_query: bool, term_ids: tuple[int, ...], is_file: bool = False
    ) -> None:
        self.domain = domain
        self.path_depth = path_depth
        self.has_query = has_query
        #: Whether the URL names a file that is not a page (``links.names_a_file``).
        self.is_file = is_file
        #: Indexes of the query terms in the anchor text and URL words, ascending.
        self.term_ids = term_ids

    @classmethod
    def of(cls, request: Request, terms: QueryTerms, anchor: str) -> LinkPreview:
        # A plain urlsplit, not Scrapy's urlparse_cached: filling its weakly keyed
        # cache costs more than the parse, and nothing reads this request's parse
        # again (the frontier packs the request; a new one leaves it).
        url = request.url
        parts = urlsplit(url)
        hostname = parts.hostname or ""
        if terms.matches_url_noise or not url.isascii():
            words = url_words_of(hostname, parts.path, parts.query)
        else:
            # The terms' pattern finds the same words in the raw URL parts as in url_words
            # (its words start and end where [a-z0-9] runs do, "_" aside), without the split.
            words = f"{hostname} {parts.path} {parts.query}".lower().replace("_", " ")
        term_ids = terms.present_ids(f"{anchor_words(anchor)} {words}")
        depth = sum(1 for segment in parts.path.split("/") if segment)
        # lower: an IPv6 zone keeps its case
        return cls(hostname.lower(), depth, bool(parts.query), term_ids, names_a_file(parts.path))

    def copy(self) -> LinkPreview:
        return LinkPreview(self.domain, self.path_depth, self.has_query, self.term_ids, self.is_file)


#: Previews a crawl remembers (by URL and anchor text); all are forgotten when this many are kept.
PREVIEWS_MAX = 1 << 15


class LinkPreviews:
    """The previews of one crawl's links (one set of query terms), the recent ones remembered.

    Half of a documentation crawl's valued links repeat a link valued before, URL and anchor
    text alike. A preview depends on nothing else, so a repeat gets a copy of the first
    (a copy: its reader may change its terms to another anchor's).
    """

    def __init__(self, terms: QueryTerms) -> None:
        self.terms = terms
        self._previews: dict[tuple[str, str], LinkPreview] = {}

    def __len__(self) -> int:
        return len(self._previews)

    def of(self, request: Request, anchor: str) -> LinkPreview:
        key = (request.url, anchor)
        preview = self._previews.get(key)
        if preview is None:
            if len(self._previews) >= PREVIEWS_MAX:
                self._previews.clear()
            preview = self._previews[key] = LinkPreview.of(request, self.terms, anchor)
        return preview.copy()
