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
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS

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


def extract_links(response: TextResponse) -> list[PageLink]:
    """Each distinct followable link of a page: absolute URL without fragment,
    anchor text and context (the headings above it and its enclosing list label)."""
    links: dict[str, PageLink] = {}
    own_url = response.url.split("#", 1)[0]
    root = response.selector.root
    body = root.find("body")
    outline = [""] * len(_HEADINGS)
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
        url = response.urljoin(href).split("#", 1)[0]
        if url == own_url or url in links or not _followable(url):
            continue
        label = _list_label(element)
        context = " ".join(part for part in (*outline, label) if part)
        links[url] = PageLink(url, _text(element), context)
    return list(links.values())


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
