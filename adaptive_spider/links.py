"""Fast extraction of a page's links with their anchor text.

Scrapy's LinkExtractor wraps every anchor in a selector and canonicalises every
URL; on large documentation pages that costs tens of milliseconds. The scheduler
canonicalises URLs anyway (the dupefilter fingerprints them), so here a single
pass over the parsed tree is enough. The extensions skipped are Scrapy's own
``IGNORED_EXTENSIONS`` plus source and data files (``SOURCE_EXTENSIONS``): a
focused crawl of pages gains nothing from fetching ``.txt`` or ``.ipynb`` files.
"""

from __future__ import annotations

import posixpath
from urllib.parse import urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS

SOURCE_EXTENSIONS = (
    "txt", "rst", "md", "ipynb", "py", "pyc", "c", "h", "cpp", "java", "sh", "json", "xml", "csv",
    "tsv", "yaml", "yml", "ini", "cfg", "toml", "diff", "patch", "map", "woff", "woff2", "ttf", "eot",
)
_IGNORED = frozenset(f".{ext}" for ext in (*IGNORED_EXTENSIONS, *SOURCE_EXTENSIONS))
_SCHEMES = ("http", "https")


def extract_links(response) -> list[tuple[str, str]]:
    """(absolute URL without fragment, anchor text) of each distinct followable link."""
    links: dict[str, str] = {}
    own_url = response.url.split("#", 1)[0]
    for element in response.selector.root.iter("a", "area"):
        href = element.get("href")
        if not href:
            continue
        href = href.strip()
        if not href or href.startswith("#"):
            continue
        url = response.urljoin(href).split("#", 1)[0]
        if url == own_url or url in links or not _followable(url):
            continue
        links[url] = " ".join(" ".join(element.itertext()).split())
    return list(links.items())


def _followable(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or not parts.netloc:
        return False
    return posixpath.splitext(parts.path)[1].lower() not in _IGNORED
