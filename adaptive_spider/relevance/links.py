"""Fast extraction of a page's links with their anchor text and context.

Scrapy's LinkExtractor wraps every anchor in a selector and canonicalises every
URL; on large documentation pages that costs tens of milliseconds. The scheduler
canonicalises URLs anyway (the dupefilter fingerprints them), so here a single
pass over the parsed tree is enough. The extensions skipped are Scrapy's own
``IGNORED_EXTENSIONS`` plus source and data files (``SOURCE_EXTENSIONS``): a
focused crawl of pages gains nothing from fetching ``.txt`` or ``.ipynb`` files.

A page often links one URL several times: a table of contents under the page's title
("Reference") and under each of its sections ("Header <boost/algorithm/string/regex.hpp>",
"Regular Expressions"). The first anchor is the link's text, as Scrapy's link extractor
gives it; the others are kept beside it (``other_anchors``), and the link is valued by
the one that says most of the query (``linkevidence.best_anchor``).

A link's *context* is what the page says around it beyond its anchor: the
headings it sits under (h2 to h6, the outline of the page above it, each heading's first
16 words) and, for a
link in a nested list, the label of the
list item it is nested in ("Concurrent Execution" for the ``threading`` entry of
a table of contents). Focused crawlers have long used such anchor context to
judge links whose own anchor says little ("Aggregation" under "The model layer").
The headings count for a link in a list, a table or a menu, which they title, not
for a link in running text: a paragraph of the QuerySet reference links to time
zones and settings under the heading "QuerySet API", which says what the page is
about (its relevance already does) and nothing of where those links go.
Its *description* is what the page says right beside it: the next cell of its table
row, the definition of its ``<dt>``, the text after it (see :func:`_description`).
Its *language* is the ``hreflang`` it declares: a translated site links each page to its
translations (Apache's manual: "Available Languages: de | en | fr"), and a page in
another language than the query's answers it no better than the one it translates.
The page's own language (``<html lang>``) is :attr:`PageLinks.language`.

:class:`PageLinks` is that pass over one page, made once per response (the crawl
state keeps it, ``CrawlState.links_of``): the focused spider follows its
followable links, and the RelevanceMiddleware gives any spider's requests the
evidence of the page's link to the same URL.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.response import get_base_url
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


#: Most anchor texts kept per URL beyond its first (a table of contents links one page
#: under each of its sections: "Reference", then "Header <boost/algorithm/string/regex.hpp>").
MAX_OTHER_ANCHORS = 8


class PageLink(NamedTuple):
    url: str
    text: str
    context: str
    #: What the page says beside the link (see :func:`_description`).
    description: str = ""
    #: The anchor texts of the page's later links to the same URL, distinct, at most
    #: ``MAX_OTHER_ANCHORS``: "Reference" says less of a page than its sections' names do.
    other_anchors: tuple[str, ...] = ()
    #: The language its ``hreflang`` declares (a primary subtag: "de"), "" when it declares none.
    language: str = ""


class PageLinks:
    """Every link of one page, parsed once: what the focused spider follows and the
    evidence (anchor text, context) of any link a spider yields from the page.

    ``followable`` are the page's distinct followable links in page order (see
    :func:`extract_links`). :meth:`find` answers for any URL the page links to,
    followable or not (a plain spider follows source files and its own ``#section``
    links too), the first anchor of a URL winning, as in ``followable``.
    """

    __slots__ = ("url", "followable", "language", "_by_url", "_by_safe_url", "_encoding")

    def __init__(
        self,
        url: str,
        links: dict[str, PageLink],
        followable: list[PageLink],
        encoding: str = "utf-8",
        language: str = "",
    ):
        #: The page's own URL, without its fragment.
        self.url = url
        self.followable = followable
        #: The language the page declares (``<html lang>``, a primary subtag), "" when none.
        self.language = language
        self._by_url = links
        self._by_safe_url: dict[str, PageLink] | None = None
        self._encoding = encoding

    @classmethod
    def of(cls, response: TextResponse) -> PageLinks:
        """The links of an HTML response (one pass over its parsed tree)."""
        links: dict[str, PageLink] = {}
        followable: list[str] = []
        own_url = response.url.split("#", 1)[0]
        root = response.selector.root
        body = root.find("body")
        outline = [""] * len(_HEADINGS)
        paragraphs: dict[Any, bool] = {}  # whether each paragraph met is prose
        told_by_tail: set[str] = set()  # URLs whose description is the text after a link, not a cell's
        join = _joiner(get_base_url(response))
        # Only the headings and links: lxml filters the tags in C, and makes no Python
        # object for the page's other elements.
        for element in (body if body is not None else root).iter(*_HEADINGS, *_LINKS):
            tag = element.tag
            level = _HEADINGS.get(tag)
            if level is not None:
                outline[level:] = [_heading_text(element)] + [""] * (len(outline) - level - 1)
                continue
            if tag not in _LINKS:
                continue
            href = (element.get("href") or "").strip()
            if not href or href.startswith("#"):
                continue
            try:
                url = join(href).split("#", 1)[0]
            except ValueError:  # a bogus URL (an unbalanced IPv6 bracket): no request can be made of it
                continue
            if url == own_url:
                continue
            if url in links:
                first = links[url]
                # A menu names it first, or the page's prose ("the io, fs, and net modules"):
                # the page's table describes it ("fs" | "Filesystem manipulation operations.").
                if not first.description or url in told_by_tail:
                    description, by_tail = _description(element)
                    if description and (not first.description or not by_tail):
                        first = links[url] = first._replace(description=description)
                        (told_by_tail.add if by_tail else told_by_tail.discard)(url)
                if len(first.other_anchors) < MAX_OTHER_ANCHORS:
                    text = _text(element)
                    if text and text != first.text and text not in first.other_anchors:
                        links[url] = first._replace(other_anchors=(*first.other_anchors, text))
                continue
            label = _list_label(element)
            in_prose = _in_running_text(element, paragraphs)
            context = label if in_prose else " ".join(part for part in (*outline, label) if part)
            description, by_tail = _description(element)
            if by_tail:
                told_by_tail.add(url)
            links[url] = PageLink(url, _text(element), context, description, (), language_tag(element.get("hreflang")))
            if _followable(url):
                followable.append(url)
        return cls(own_url, links, [links[url] for url in followable], response.encoding, _page_language(root))

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


def language_tag(tag: Any) -> str:
    """The primary subtag of a language tag, lowercase ("en-US", "en_GB": "en"; "zh-cn": "zh"),
    "" for none or for ``x-default`` (hreflang's "any language")."""
    if not tag or not isinstance(tag, str):
        return ""
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary.isalpha() and 2 <= len(primary) <= 8 and primary != "x" else ""


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _page_language(root: Any) -> str:
    """The language a parsed page declares on its root (``<html lang>``, XHTML's ``xml:lang``)."""
    get = getattr(root, "get", None)
    if get is None:
        return ""
    return language_tag(get("lang") or get(_XML_LANG) or get("xml:lang"))


def page_language(response: TextResponse) -> str:
    """The language an HTML response declares (``<html lang="en-US">``: "en"), "" when none."""
    return _page_language(response.selector.root)


# Elements are lxml's (no type information).
def _text(element: Any) -> str:
    return " ".join(" ".join(element.itertext()).split())


#: Words of a heading that title the links under it. A heading is a title; one left open
#: (SQLite's keyword index: ``<h2>Keyword Index</h1>``) holds the rest of its page, which
#: as every link's context would say every query word.
_HEADING_WORDS = 16


def _heading_text(heading: Any) -> str:
    return _first_words(heading.itertext(), _HEADING_WORDS)


#: Elements that hold a link as an entry of a list, a table or a menu (which headings title).
_ENTRY_HOLDERS = frozenset({"li", "td", "th", "dt", "nav", "ul", "ol", "table"})


#: Words of its own (outside its links) that make a paragraph prose, not a line of links.
_PROSE_WORDS = 3


def _in_running_text(link: Any, prose: dict[Any, bool]) -> bool:
    """Whether a link sits in a paragraph of prose, not in a list, a table or a menu (a
    paragraph inside a list item or a table cell is the entry's own text; a paragraph
    of links only is a list). ``prose`` caches the answer per paragraph for the page."""
    node = link.getparent()
    for _ in range(4):  # through <em>, <code>, <span> around the link
        if node is None or node.tag in _ENTRY_HOLDERS:
            return False
        if node.tag == "p":
            answer = prose.get(node)
            if answer is None:
                answer = prose[node] = _is_prose(node)
            return answer
        node = node.getparent()
    return False


def _is_prose(paragraph: Any) -> bool:
    """A paragraph of its own (not an entry's text) with words of its own beside its links."""
    holder = paragraph.getparent()
    if holder is not None and holder.tag in _ENTRY_HOLDERS:
        return False
    words = len(_text(paragraph).split())
    return words - sum(len(_text(anchor).split()) for anchor in paragraph.iter("a")) >= _PROSE_WORDS


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


#: Cells whose next sibling describes the link in them: tables, definition lists, and the
#: grids of ``<div>``s that javadoc and rustdoc draw their tables with.
_CELLS = frozenset({"td", "th", "dt", "div"})
_DESCRIPTION_WORDS = 24


def _description(link: Any) -> tuple[str, bool]:
    """What a page says beside a link, beyond its anchor, and whether that is only the text
    after it (not a cell's): the next cell of its table row
    ("QMutex" | "Access serialization between threads"), the definition of a ``<dt>`` or,
    for a link in the last cell of a row, the next row (Doxygen's member descriptions);
    else the text right after the link ("threading -- Thread-based parallelism"), or after
    the inline elements it is wrapped in (:func:`_text_after`). At most
    24 words: an API listing's one-line summaries are what says which entry to open when
    the names ("java.util.concurrent.locks", "Boost.Xpressive") share no word with the query.
    """
    node = link
    for _ in range(4):  # the link's cell, through a <p>, <code>, <span> or inner cell around it
        cell = node.getparent()
        if cell is None:
            break
        if cell.tag in _CELLS:
            if cell.tag == "div" and _has_several_links(cell):
                break  # a <div> of several links is a menu, not a grid cell
            beside = _next_element(cell)
            if beside is None and cell.tag in ("td", "th"):
                row = cell.getparent()
                beside = _next_element(row) if row is not None and row.tag == "tr" else None
            if beside is not None and (cell.tag != "dt" or beside.tag == "dd") and not _starts_with_link(beside):
                words = _first_words(beside.itertext())
                if words.count(" ") >= 2:  # "(C++11)" beside a name is a tag: the summary is further out
                    return words, False
        node = cell
    after = _text_after(link)
    return (after, True) if after else ("", False)


#: Inline elements a link may be wrapped in, whose following text still says what it is.
_INLINE = frozenset({"span", "code", "em", "strong", "b", "i", "tt", "kbd", "var", "samp", "small"})


def _text_after(link: Any) -> str:
    """The words right after a link: its tail or, when it has none, the text that follows
    the inline elements it is wrapped in, up to the next link. DocBook and gtk-doc list a
    reference's entries as ``<dt><span class="refentrytitle"><a>END</a></span><span
    class="refpurpose"> — commit the current transaction</span></dt>``: the anchor alone
    says nothing of the query, the purpose beside it does."""
    node = link
    for _ in range(3):  # the link, then up to two wrappers (<span><code><a>)
        if node.tail and not node.tail.isspace():
            return _first_words([node.tail])
        beside = _next_element(node)
        if beside is not None:
            if beside.tag in _LINKS or next(beside.iter("a"), None) is not None:
                return ""  # the next entry of a menu or a list
            return _first_words(chain(beside.itertext(), (beside.tail,)))  # lazily: the first words only
        node = node.getparent()
        if node is None or node.tag not in _INLINE:
            break
    return ""


def _starts_with_link(element: Any) -> bool:
    """Whether an element's first text is a link's: the next item of a menu or list, not a description."""
    for node in element.iter():
        if node.tag == "a":
            return True
        if node.text and not node.text.isspace():
            return False
    return False


def _next_element(element: Any) -> Any:
    """The next sibling that is an element (not a comment or processing instruction)."""
    beside = element.getnext()
    while beside is not None and not isinstance(beside.tag, str):
        beside = beside.getnext()
    return beside


def _has_several_links(element: Any) -> bool:
    return next(islice(element.iter("a"), 1, None), None) is not None


def _first_words(texts: Any, limit: int = _DESCRIPTION_WORDS) -> str:
    words: list[str] = []
    for text in texts:
        if text:
            words.extend(text.split())
            if len(words) >= limit:
                break
    return " ".join(words[:limit])


# Sibling pages share their menus and sidebars: most of a page's links were met before.
@functools.lru_cache(maxsize=1 << 15)
def _join_in(directory: str, href: str) -> str:
    return urljoin(directory, href)


def _joiner(base: str) -> Callable[[str], str]:
    """``urljoin(base, href)`` for the hrefs of one page, resolved once per directory of the
    base URL: a reference with a path (or a host) resolves against the base's scheme, host
    and directory alone, and the pages of one directory link the same relative URLs."""
    stem = base.split("#", 1)[0].split("?", 1)[0]
    if stem.count("/") < 3:  # "http://host": no path to take a directory of
        return functools.partial(urljoin, base)
    directory = stem[: stem.rfind("/") + 1]

    def join(href: str) -> str:
        # A query alone ("?page=2") resolves against the base's whole path.
        return _join_in(directory, href) if href[:1] not in ("", "?") else urljoin(base, href)

    return join


@functools.lru_cache(maxsize=1 << 15)
def _followable(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or not parts.netloc:
        return False
    return posixpath.splitext(parts.path)[1].lower() not in _IGNORED


def names_a_file(path: str) -> bool:
    """Whether a URL path's extension names a file that is not a web page (an archive, an
    image, a source file: ``scrapy.linkextractors.IGNORED_EXTENSIONS`` and source and data
    formats), which the focused spider does not follow and the page relevance scores 0."""
    return posixpath.splitext(path)[1].lower() in _IGNORED
