"""CanonicalUrlMiddleware: one URL per page, before the scheduler sees it.

Many URLs can name the same page: ``#section`` fragments, session ids
(``;jsessionid=...``, ``?sid=...``) and tracking parameters (``?utm_source=...``).
A site that puts a fresh session id in every link is an infinite URL space to
a crawler, and every duplicate fetch costs budget. This spider middleware
rewrites every request the spider yields (and every start request) to its
canonical URL with w3lib, so Scrapy's dupefilter recognises the page:

- the fragment is dropped;
- query parameters named in ``ADAPTIVE_SESSION_PARAMS`` or
  ``ADAPTIVE_TRACKING_PARAMS`` are dropped (``*`` is a wildcard, names are
  case-insensitive; the other parameters keep their order and encoding);
- path parameters with a session name (``/cart;jsessionid=ABC``) are dropped.

Turn it off with ``ADAPTIVE_CANONICALIZE = False``. Stats:
``adaptive/canonical/rewritten`` and ``adaptive/canonical/params_removed``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import AsyncIterator, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import ParseResult, SplitResult, parse_qsl, urlsplit, urlunsplit

from scrapy import Request
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import NotConfigured
from scrapy.utils.request import RequestFingerprinter
from w3lib.url import url_query_cleaner

from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector


# A host name as DNS allows it (labels of letters, digits, hyphens; underscores occur in the wild),
# after Scrapy made it ASCII (IDNA); or an IP literal.
_HOST_NAME = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?")


def host_of(url: str) -> str:
    """The host of an absolute URL, by string operations (every scheduled request pays it)."""
    _, sep, rest = url.partition("://")
    if not sep:
        return (urlsplit(url).hostname or "").lower()
    netloc = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    if netloc.startswith("["):  # an IPv6 literal
        return netloc[1:].partition("]")[0].lower()
    return netloc.partition(":")[0].lower()


def has_valid_host(url: str) -> bool:
    """Whether an http(s) URL names a host that could exist.

    Documentation pages are full of placeholders such as ``http://<servername`` or
    ``http://%3Cusername%3E@<servername``: Scrapy would try each (and retry it) and
    never reach anything. Other schemes are left to Scrapy's download handlers.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return parts_have_valid_host(urlsplit(url))
    # Only the scheme and the authority count, and a crawl's links name few hosts: each
    # authority is judged once (the scheduler asks for every link it is given).
    end = len(rest)
    for delimiter in "/?#":  # where urlsplit ends the authority
        at = rest.find(delimiter, 0, end)
        if at != -1:
            end = at
    return _authority_has_valid_host(url[: len(scheme) + 3 + end])


@lru_cache(maxsize=4096)
def _authority_has_valid_host(scheme_and_authority: str) -> bool:
    return parts_have_valid_host(urlsplit(scheme_and_authority))


def parts_have_valid_host(parts: SplitResult | ParseResult) -> bool:
    """:func:`has_valid_host` of a parsed URL."""
    if parts.scheme not in ("http", "https"):
        return True
    try:
        host = parts.hostname
        parts.port  # noqa: B018 (raises ValueError for a port out of range or not a number)
    except ValueError:
        return False
    if not host:
        return False
    if ":" in host:  # an IPv6 literal ([...] in the URL)
        return all(c in "0123456789abcdef:." for c in host)
    return _HOST_NAME.fullmatch(host) is not None


def _names_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex matching any of the (lower-case, ``*``-wildcard) names."""
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns))


class UrlCanonicalizer:
    """Maps a URL to its canonical form (see the module docstring).

    Parameters
    ----------
    session_params, tracking_params : iterable of str
        Lower-case parameter names; ``*`` matches any characters.
    """

    def __init__(self, session_params: Iterable[str] = (), tracking_params: Iterable[str] = ()) -> None:
        self.session = _names_regex(tuple(session_params))
        self.removable = _names_regex((*session_params, *tracking_params))
        # The literal start of every name: a query without any of them needs no parsing.
        self._hints = tuple({pattern.split("*", 1)[0] for pattern in (*session_params, *tracking_params)})

    def __call__(self, url: str) -> str:
        return self.canonicalize(url)[0]

    def canonicalize(self, url: str) -> tuple[str, int]:
        """The canonical URL and how many parameters were removed."""
        if "#" not in url and ";" not in url and not self._may_have_params(url):
            return url, 0  # most links: nothing to remove, no parsing
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return url, 0
        path, path_removed = self._clean_path(parts.path)
        removed_names = self._removable_query_names(parts.query)
        if not (parts.fragment or removed_names or path_removed or url.endswith("#")):
            return url, 0
        if path_removed:
            url = urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
        if removed_names:
            # w3lib keeps the other parameters as they are (order, encoding, repeats).
            url = url_query_cleaner(url, removed_names, remove=True, unique=False, keep_fragments=False)
        else:
            url = url.split("#", 1)[0]
        return url, path_removed + len(removed_names)

    def _may_have_params(self, url: str) -> bool:
        query = url.partition("?")[2].lower()
        return bool(query) and (not all(self._hints) or any(hint in query for hint in self._hints))

    def _removable_query_names(self, query: str) -> list[str]:
        if not query or self.removable is None:
            return []
        names = {name for name, _ in parse_qsl(query, keep_blank_values=True)}
        return sorted(name for name in names if self.removable.match(name.lower()))

    def _clean_path(self, path: str) -> tuple[str, int]:
        """Drop ``;name=value`` path parameters whose name is a session parameter."""
        if ";" not in path or self.session is None:
            return path, 0
        removed = 0
        segments: list[str] = []
        for segment in path.split("/"):
            head, *params = segment.split(";")
            kept: list[str] = []
            for param in params:
                if self.session.match(param.split("=", 1)[0].lower()):
                    removed += 1
                else:
                    kept.append(param)
            segments.append(";".join([head, *kept]))
        return "/".join(segments), removed


class CanonicalUrlMiddleware:
    """Spider middleware that rewrites outgoing requests to their canonical URL."""

    def __init__(self, canonicalizer: UrlCanonicalizer, stats: StatsCollector | None = None) -> None:
        self.canonicalizer = canonicalizer
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CanonicalUrlMiddleware:
        config = AdaptiveConfig.from_settings(crawler.settings)
        if not config.canonicalize:
            raise NotConfigured("ADAPTIVE_CANONICALIZE is off")
        return cls(UrlCanonicalizer(config.session_params, config.tracking_params), crawler.stats)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for output in start:
            yield self._rewrite(output)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        for output in result:
            yield self._rewrite(output)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for output in result:
            yield self._rewrite(output)

    def _rewrite(self, output: Any) -> Any:
        if not isinstance(output, Request):
            return output
        url, removed = self.canonicalizer.canonicalize(output.url)
        if url == output.url:
            return output
        if self.stats is not None:
            self.stats.inc_value("adaptive/canonical/rewritten")
            if removed:
                self.stats.inc_value("adaptive/canonical/params_removed", removed)
        return output.replace(url=url)


def judges_by_url(dupefilter_cls: Any, fingerprinter_cls: Any) -> bool:
    """Whether a dupefilter of this class, with a request fingerprinter of that class, judges
    a GET request without a body by its canonical URL alone (a fragment is no part of it): Scrapy's
    RFPDupeFilter with Scrapy's request fingerprinter, or scrapy-redis' RFPDupeFilter (which
    fingerprints the method, the canonical URL and the body itself). A subclass may judge
    otherwise, and a fingerprinter of one's own may read more than the URL."""
    if getattr(dupefilter_cls, "__module__", "") == "scrapy_redis.dupefilter":
        return getattr(dupefilter_cls, "__name__", "") == "RFPDupeFilter"
    return dupefilter_cls is RFPDupeFilter and fingerprinter_cls is RequestFingerprinter
