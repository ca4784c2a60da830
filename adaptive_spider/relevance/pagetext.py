"""The text of a page, split into the fields relevance and sufficiency are computed over.

One model of a page's text (:class:`PageFields`) serves the crawl's relevance scorer, which
builds it from a response, and the sufficiency estimator, which takes the scorer's or builds
it from a page item; one content hash (:func:`content_sha1`) serves the items, the duplicate-content pipeline
and the estimator, so they agree on which pages have the same content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from lxml import etree

if TYPE_CHECKING:
    from scrapy.http import Response

_NON_TEXT = ("script", "style", "noscript", "template")
#: The text of an element, in C (a fraction of the cost of joining its itertext()).
_STRING = etree.XPath("string()", smart_strings=False)
#: The text nodes under an element, and those of its scripts, styles and the like, in
#: document order, in C: a walk over every element in Python costs more than parsing the page
#: (lxml.html makes a Python object, and calls its class lookup, for each element), and an
#: XPath predicate on each text node's parent (``_VISIBLE_TEXT``) costs as much again.
_ALL_TEXT = etree.XPath(".//text()", smart_strings=False)
_CHILD_TEXT = etree.XPath("text()", smart_strings=False)
_VISIBLE_TEXT = etree.XPath(
    ".//text()[not(" + " or ".join(f"parent::{tag}" for tag in _NON_TEXT) + ")]", smart_strings=False
)


@dataclass
class PageFields:
    """The text fields of a page that relevance and sufficiency are computed over."""

    url: str
    title: str = ""
    headings: str = ""
    body: str = ""
    #: Share of the body's text inside links (navigation pages are near 1).
    link_density: float = 0.0

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> PageFields:
        """From a page item: url, title, headings (a list or a string) and text (the body).

        A feed keeps no link density, so it is 0.
        """
        headings = item.get("headings") or ""
        if not isinstance(headings, str):
            headings = " ".join(str(h) for h in headings)
        return cls(
            url=str(item.get("url") or ""),
            title=str(item.get("title") or ""),
            headings=headings,
            body=str(item.get("text") or ""),
        )


def normalize_space(text: str) -> str:
    return " ".join(text.split())


def _element_text(element: etree._Element) -> str:
    return normalize_space(" ".join(element.itertext()))


def body_text(root: etree._Element) -> str:
    """Visible text of a parsed page (lxml root): the body without scripts, styles
    and comments, with a space between text nodes so words never run together."""
    body = root.find("body")
    if body is None:
        body = root
    texts = _ALL_TEXT(body)
    # Blank ones change nothing once the spaces are normalised.
    hidden = {text for element in body.iter(*_NON_TEXT) for text in _CHILD_TEXT(element) if not text.isspace()}
    if hidden:
        visible = [text for text in texts if text not in hidden]
        # Each script's text met once: else a visible text node reads as a script's, or two
        # scripts read alike, and only the parents can tell.
        texts = visible if len(texts) - len(visible) == len(hidden) else _VISIBLE_TEXT(body)
    return normalize_space(" ".join(texts))


def link_density(root: etree._Element, text_length: int) -> float:
    """Share of the body's text that is link text."""
    if not text_length:
        return 0.0
    body = root.find("body")
    anchors = (body if body is not None else root).iter("a")
    linked = sum(len(_STRING(a)) for a in anchors)
    return min(1.0, linked / text_length)


def is_html(response: Response) -> bool:
    """Whether a response is an HTML (or XHTML) page that Scrapy decoded as text."""
    if not hasattr(response, "selector"):
        return False
    # Headers.get is typed Optional, but with a default it returns bytes.
    header = cast(bytes, response.headers.get(b"Content-Type", b"text/html"))
    content_type = header.split(b";")[0].strip().lower()
    return content_type in (b"text/html", b"application/xhtml+xml", b"")


def page_fields(response: Any) -> tuple[PageFields, list[str]]:
    """Title, headings and body text of an HTML response (and the headings as a list)."""
    root = response.selector.root
    title_element = root.find("head/title")
    if title_element is None:
        title_element = root.find(".//title")
    title = _element_text(title_element) if title_element is not None else ""
    headings = [text for text in map(_element_text, root.iter("h1", "h2", "h3")) if text]
    body = body_text(root)
    fields = PageFields(response.url, title, " ".join(headings), body, link_density(root, len(body)))
    return fields, headings


def html_page_fields(html: str, url: str) -> PageFields:
    """:func:`page_fields` of a page's HTML given as text (a saved page, a training example)."""
    from types import SimpleNamespace

    from parsel import Selector

    # type="html" as Scrapy's HtmlResponse: parsel would read an XHTML page that opens with
    # "<?xml" as XML, whose namespaced elements no title or style lookup finds.
    selector = Selector(text=html or "<html></html>", type="html")
    return page_fields(SimpleNamespace(url=url, selector=selector))[0]


def content_sha1(text: str) -> str:
    """SHA-1 (hex) of a page's text with every run of whitespace made one space and the ends
    stripped (:func:`normalize_space`): equal for pages that differ only in markup or layout.

    The one content hash of the package: a page item's ``sha1``, a template document's
    ``sha1`` (over its field values, :func:`adaptive_spider.extract.template.document_text`),
    the duplicate-content pipeline's digest of an item without one and the sufficiency
    estimator's exact-duplicate test all come from here, so they agree.
    """
    return hashlib.sha1(normalize_space(text).encode("utf-8", "replace")).hexdigest()
