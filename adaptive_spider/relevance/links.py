"""Fast extraction of a page's links with their anchor text and context.

Scrapy's LinkExtractor wraps every anchor in a selector and canonicalises every
URL; on large documentation pages that costs tens of milliseconds. The scheduler
canonicalises URLs anyway (the dupefilter fingerprints them), so here a single
pass over the parsed tree is enough. The extensions skipped are Scrapy's own
``IGNORED_EXTENSIONS`` plus source and data files (``SOURCE_EXTENSIONS``): a
focused crawl of pages gains nothing from fetching ``.txt`` or ``.ipynb`` files.

A link's *context* is what the page says around it beyond its anchor: the
headings it sits under (h2 to h6, the outline of the page above it) and, for a
link in a nested list, the label of the
list item it is nested in ("Concurrent Execution" for the ``threading`` entry of
a table of contents). Focused crawlers have long used such anchor context to
judge links whose own anchor says little ("Aggregation" under "The model layer").

:class:`PageLinks` is that pass over one page, made once per response (the crawl
state keeps it, ``CrawlState.links_of``): the focused spider follows its
followable links, and the RelevanceMiddleware gives any spider's requests the
evidence of the page's link to the same URL.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS
from w3lib.url import safe_url_string

if TYPE_CHECKING:
    from scrapy.http import TextResponse

SOURCE_EXTENSIONS = (
    "txt", "rst", "md", "ipynb", "py", "pyc", "c", "h", "cpp", "java", "sh", "json", "xml", "csv",
    "tsv", "yaml", "yml", "ini", "cfg", "toml", "diff", "patch", "map", "woff", "woff2", "ttf", "eot",
)  # fmt: skip
_IGNORED = frozenset(f".{ext}" for ext in (*IGNORED_EXTENSIONS, *SOURCE_EXTENSIONS))
_SCHEMES = ("http", "https")


_HEADINGS = {"h2": 0, "h3": 1, "h4": 2, "h5": 3, "h6": 4}
_LINKS = frozenset({"a", "area"})


class PageLink(NamedTuple):
    url: str
    text: str
    context: str


class PageLinks:
    """Every link of one page, parsed once: what the focused spider follows and the
    evidence (anchor text, context) of any link a spider yields from the page.

    ``followable`` are the page's distinct followable links in page order (see
    :func:`extract_links`). :meth:`find` answers for any URL the page links to,
    followable or not (a plain spider follows source files and its own ``#section``
    links too), the first anchor of a URL winning, as in ``followable``.
    """

    __slots__ = ("url", "followable", "_by_url", "_by_safe_url", "_encoding")

    def __init__(self, url: str, links: dict[str, PageLink], followable: list[PageLink], encoding: str = "utf-8"):
        #: The page's own URL, without its fragment.
        self.url = url
        self.followable = followable
        self._by_url = links
        self._by_safe_url: dict[str, PageLink] | None = None
        self._encoding = encoding

    @classmethod
    def of(cls, response: TextResponse) -> PageLinks:
        """The links of an HTML response (one pass over its parsed tree)."""
        links: dict[str, PageLink] = {}
        followable: list[PageLink] = []
        own_url = response.url.split("#", 1)[0]
        root = response.selector.root
        body = root.find("body")
        outline = [""] * len(_HEADINGS)
        urljoin = response.urljoin
        for element in (body if body is not None else root).iter():
            tag = element.tag
            level = _HEADINGS.get(tag) if isinstance(tag, str) else None
            if level is not None:
                outline[level:] = [_text(element)] + [""] * (len(outline) - level - 1)
                continue
            if tag not in _LINKS:
                continue
            href = (element.get("href") or "").strip()
            if not href or href.startswith("#"):
                continue
            try:
                url = urljoin(href).split("#", 1)[0]
            except ValueError:  # a bogus URL (an unbalanced IPv6 bracket): no request can be made of it
                continue
            if url == own_url or url in links:
                continue
            label = _list_label(element)
            context = " ".join(part for part in (*outline, label) if part)
            link = links[url] = PageLink(url, _text(element), context)
            if _followable(url):
                followable.append(link)
        return cls(own_url, links, followable, response.encoding)

    def find(self, url: str) -> PageLink | None:
        """The page's link to ``url`` (its fragment ignored), None when the page has none.

        ``url`` may be as the page wrote it made absolute, or as a Request holds it
        (Scrapy makes a request's URL safe: percent-encoded, IDNA host).
        """
        url = url.split("#", 1)[0]
        link = self._by_url.get(url)
        if link is None:
            if self._by_safe_url is None:  # the few URLs that Request rewrites: built on the first miss
                self._by_safe_url = {}
                for raw, page_link in self._by_url.items():
                    try:
                        safe = safe_url_string(raw, self._encoding)
                    except ValueError:
                        continue
                    if safe != raw:
                        self._by_safe_url.setdefault(safe, page_link)
            link = self._by_safe_url.get(url)
        return link

    def __len__(self) -> int:
        return len(self._by_url)


def extract_links(response: TextResponse) -> list[PageLink]:
    """Each distinct followable link of a page: absolute URL without fragment,
    anchor text and context (the headings above it and its enclosing list label)."""
    return PageLinks.of(response).followable


# Elements are lxml's (no type information).
def _text(element: Any) -> str:
    return " ".join(" ".join(element.itertext()).split())


def _list_label(link: Any) -> str:
    """Label of the list item that the link's own list item is nested in."""
    item = link.getparent()
    for _ in range(4):  # the link's own <li>, possibly through <p> or <span>
        if item is None or item.tag == "li":
            break
        item = item.getparent()
    if item is None or item.tag != "li":
        return ""
    outer = item.getparent()
    outer = outer.getparent() if outer is not None else None
    if outer is None or outer.tag != "li":
        return ""
    first = next(outer.iter("a"), None)
    return _text(first) if first is not None and first is not link else ""


def _followable(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or not parts.netloc:
        return False
    return posixpath.splitext(parts.path)[1].lower() not in _IGNORED
