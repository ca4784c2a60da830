"""TrapGuardMiddleware: links into infinite URL spaces never reach the scheduler.

Crawler traps are parts of a site with no end: a calendar whose "next month"
link always works, relative links that make paths ever deeper
(``/a/b/b/b/...``), listings whose query parameters combine without end. Each
trap would take as much of the page budget as the crawl gives it. This spider
middleware drops links by rules that cost one look at the URL:

- ``unsupported_scheme``: ``javascript:``, ``mailto:``, ``tel:`` ... links;
- ``path_depth``: more path segments than ``ADAPTIVE_TRAP_MAX_PATH_DEPTH``;
- ``repeated_segment``: a path segment, or a run of them, repeated back to back
  more often than ``ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS`` (``/a/b/a/b/a/b``,
  ``/more/more/more``; a name that merely recurs, as in
  ``/scrapy/scrapy/tree/master/scrapy``, is not a trap);
- ``calendar``: a *calendar-like family* (a date of at least year and month at
  the end of the path, as in ``/events/2024/05/``, or in the query, as in
  ``?date=2024-05-01``; the family is the path before the date plus the query's
  parameter names) already has ``ADAPTIVE_TRAP_CALENDAR_MAX_PAGES`` distinct URLs.
  A lone number that looks like a year (``/issues/2024``) is not a date;
- ``query_variants``: one path already has ``ADAPTIVE_TRAP_QUERY_MAX_VARIANTS``
  distinct URLs with the same query parameter names and other values;
- ``url_pattern``: the first regex of ``ADAPTIVE_URL_PATTERN_LIMITS`` that
  matches the URL already has its number of distinct URLs (0: none at all).

Start requests are never dropped. Enable it below the CanonicalUrlMiddleware
(the add-on uses 750 and 760) so it counts canonical URLs. Every dropped link
is counted under ``adaptive/traps/<rule>``.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from scrapy import Request

from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

FETCHABLE_SCHEMES = ("http", "https", "file", "data", "s3", "ftp")

_YEAR = r"(?:19|20)\d\d"
_MONTH = r"(?:0?[1-9]|1[0-2])"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
#: A year on its own (``/2024/``): a date only when a month follows it.
_YEAR_TOKEN = re.compile(rf"^{_YEAR}$")
#: A date of at least year and month in one token: 2024-05, 2024-05-07, 2024_05_07, 20240507.
_DATE_TOKEN = re.compile(
    rf"^{_YEAR}(?:[-_.]{_MONTH}(?:[-_.]{_DAY})?"  # separated: 2024-05, 2024_05_07
    r"|(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))$"  # packed: 20240507
)
_MONTH_NAMES = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
    "|january|february|march|april|june|july|august|september|october|november|december"
)
_MONTH_OR_DAY = re.compile(rf"^(?:{_DAY}|{_MONTH_NAMES})$")
_PAGE_SUFFIX = re.compile(r"\.(?:html?|php|aspx?|jsp)$")
_CALENDAR_PARAM_NAMES = frozenset({"date", "day", "month", "year", "week", "cal", "calendar"})
#: Cheap pre-check: a calendar-like URL has a year or a calendar parameter name somewhere.
_MAYBE_CALENDAR = re.compile(r"(?:19|20)\d\d|(?:date|day|month|year|week|cal)\w*=", re.IGNORECASE)


#: URLs whose verdict the guard remembers (the most recently used).
VERDICT_MEMO_SIZE = 65536


class UrlParts(NamedTuple):
    scheme: str
    netloc: str
    path: str
    query: str


def split_url(url: str) -> UrlParts:
    """Scheme, host, path and query of an absolute URL, without ``urlsplit``'s
    general-purpose checks (the guard reads every link; links are already absolute)."""
    scheme, _, rest = url.partition("://")
    if not rest:
        parts = urlsplit(url)
        return UrlParts(parts.scheme, parts.netloc, parts.path, parts.query)
    rest = rest.partition("#")[0]
    rest, _, query = rest.partition("?")
    netloc, slash, path = rest.partition("/")
    return UrlParts(scheme.lower(), netloc, slash + path, query)


def path_segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def calendar_family(url: str, parts: UrlParts | None = None) -> str | None:
    """The family of a calendar-like URL (None when the URL is not calendar-like)."""
    parts = parts or split_url(url)
    if not _MAYBE_CALENDAR.search(url, len(parts.scheme) + 3 + len(parts.netloc)):
        return None
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    names = query_names(parts.query)
    prefix = _date_path_prefix(path_segments(parts.path))
    if prefix is not None:
        return f"{parts.netloc}/{'/'.join(prefix)}/<date>?{names}"
    for name, value in pairs:
        if _DATE_TOKEN.match(value) or (name.lower() in _CALENDAR_PARAM_NAMES and value.isdigit()):
            return f"{parts.netloc}{parts.path}?{names}"
    return None


def _date_path_prefix(segments: list[str]) -> list[str] | None:
    """The segments before a date that ends the path (``.../2024/05/07/``), or None."""
    if segments:
        segments = [*segments[:-1], _PAGE_SUFFIX.sub("", segments[-1].lower())]
        if segments[-1] in ("index", "default", ""):
            segments = segments[:-1]
    for start, segment in enumerate(segments):
        rest = [part.lower() for part in segments[start + 1 :]]
        if _DATE_TOKEN.match(segment):
            return segments[:start] if not rest else None
        if _YEAR_TOKEN.match(segment):
            # a year, then a month (and a day): nothing else may follow
            if 1 <= len(rest) <= 2 and all(_MONTH_OR_DAY.match(part) for part in rest):
                return segments[:start]
            return None
    return None


def query_family(url: str, parts: UrlParts | None = None) -> str | None:
    """Path plus sorted query parameter names (None for a URL without a query)."""
    parts = parts or split_url(url)
    if not parts.query:
        return None
    return f"{parts.netloc}{parts.path}?{query_names(parts.query)}"


def query_names(query: str) -> str:
    """The query's parameter names, sorted and joined with ``&`` (values dropped)."""
    return "&".join(sorted({pair.partition("=")[0] for pair in query.split("&") if pair}))


class TrapGuard:
    """Decides, URL by URL, whether a link leads into a trap (see the module docstring).

    Parameters
    ----------
    max_path_depth, max_segment_repeats, calendar_max_pages, query_max_variants : int
        Limits of the rules; 0 turns a rule off.
    pattern_limits : dict of str to int
        URL regex -> most distinct URLs matching it.
    """

    def __init__(
        self,
        max_path_depth: int = 0,
        max_segment_repeats: int = 0,
        calendar_max_pages: int = 0,
        query_max_variants: int = 0,
        pattern_limits: dict[str, int] | None = None,
    ) -> None:
        self.max_path_depth = max_path_depth
        self.max_segment_repeats = max_segment_repeats
        # The path rules need more segments than the smaller of their limits.
        self._path_rules_from = min([limit for limit in (max_path_depth, max_segment_repeats) if limit] or [10**9])
        # a run of whole segments, then as many more copies of it back to back
        self._repeats = (
            re.compile(rf"((?:/[^/]+)+?)\1{{{max_segment_repeats},}}(?:/|$)") if max_segment_repeats else None
        )
        self.calendar_max_pages = calendar_max_pages
        self.query_max_variants = query_max_variants
        self.patterns = [(re.compile(pattern), pattern, limit) for pattern, limit in (pattern_limits or {}).items()]
        # family -> the distinct URLs admitted (at most the family's limit, so bounded)
        self.families: dict[str, set[str]] = {}
        self.capped: set[str] = set()
        # A URL's verdict never changes (a family admits a URL for good and refuses it for
        # good once full), and pages repeat most of their links: remember the recent ones.
        self._verdict = functools.lru_cache(maxsize=VERDICT_MEMO_SIZE)(self._judge)

    @classmethod
    def from_config(cls, config: AdaptiveConfig) -> TrapGuard:
        return cls(
            config.trap_max_path_depth,
            config.trap_max_segment_repeats,
            config.trap_calendar_max_pages,
            config.trap_query_max_variants,
            config.url_pattern_limits,
        )

    def reason_to_drop(self, url: str) -> str | None:
        """The rule that drops ``url`` (None: follow it). Admitted URLs are counted."""
        return self._verdict(url)

    def _judge(self, url: str) -> str | None:
        if not url.startswith(("http://", "https://")):
            scheme = url.partition(":")[0].lower()
            return None if scheme in FETCHABLE_SCHEMES else "unsupported_scheme"
        parts = split_url(url)
        path = parts.path
        if path.count("/") > self._path_rules_from:
            reason = self._path_reason(path)
            if reason:
                return reason
        for regex, pattern, limit in self.patterns:
            if regex.search(url):
                return None if self._admit(f"pattern {pattern}", url, limit) else "url_pattern"
        if self.calendar_max_pages:
            family = calendar_family(url, parts)
            if family is not None:
                return None if self._admit(f"calendar {family}", url, self.calendar_max_pages) else "calendar"
        if self.query_max_variants:
            family = query_family(url, parts)
            if family is not None and not self._admit(f"query {family}", url, self.query_max_variants):
                return "query_variants"
        return None

    def _path_reason(self, path: str) -> str | None:
        segments = path_segments(path)
        if self.max_path_depth and len(segments) > self.max_path_depth:
            return "path_depth"
        if (
            self._repeats is not None
            and len(segments) > self.max_segment_repeats
            and len(set(segments)) < len(segments)
            and self._repeats.search(path)
        ):
            return "repeated_segment"
        return None

    def _admit(self, family: str, url: str, limit: int) -> bool:
        members = self.families.setdefault(family, set())
        if url in members:
            return True
        if len(members) >= limit:
            if family not in self.capped:
                self.capped.add(family)
                logger.info("Trap guard: URL family %s reached its limit of %d distinct URLs", family, limit)
            return False
        members.add(url)
        return True


class TrapGuardMiddleware:
    """Spider middleware that drops the spider's links that lead into crawler traps."""

    def __init__(self, guard: TrapGuard, stats: StatsCollector | None = None) -> None:
        self.guard = guard
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapGuardMiddleware:
        return cls(TrapGuard.from_config(AdaptiveConfig.from_settings(crawler.settings)), crawler.stats)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        for output in result:
            if self._keep(output):
                yield output

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for output in result:
            if self._keep(output):
                yield output

    def _keep(self, output: Any) -> bool:
        if not isinstance(output, Request):
            return True
        reason = self.guard.reason_to_drop(output.url)
        if reason is None:
            return True
        logger.debug("Trap guard dropped %s (%s)", output.url, reason)
        if self.stats is not None:
            self.stats.inc_value(f"adaptive/traps/{reason}")
        return False
