"""The text of an HTML page, split into the fields relevance is computed over."""

from __future__ import annotations

import hashlib

from lxml import etree

from adaptive_spider.relevance.scoring import PageFields

_NON_TEXT = ("script", "style", "noscript", "template")
#: The text of an element, in C (a fraction of the cost of joining its itertext()).
_STRING = etree.XPath("string()", smart_strings=False)


def normalize_space(text: str) -> str:
    return " ".join(text.split())


def _element_text(element) -> str:
    return normalize_space(" ".join(element.itertext()))


def body_text(root) -> str:
    """Visible text of a parsed page (lxml root): the body without scripts, styles
    and comments, with a space between elements so words never run together."""
    body = root.find("body")
    if body is None:
        body = root
    parts = []
    for element in body.iter():
        tag = element.tag
        if element.text and isinstance(tag, str) and tag not in _NON_TEXT:
            parts.append(element.text)
        if element.tail and element is not body:
            parts.append(element.tail)
    return normalize_space(" ".join(parts))


def link_density(root, text_length: int) -> float:
    """Share of the body's text that is link text."""
    if not text_length:
        return 0.0
    body = root.find("body")
    anchors = (body if body is not None else root).iter("a")
    linked = sum(len(_STRING(a)) for a in anchors)
    return min(1.0, linked / text_length)


def is_html(response) -> bool:
    """Whether a response is an HTML (or XHTML) page that Scrapy decoded as text."""
    if not hasattr(response, "selector"):
        return False
    content_type = response.headers.get(b"Content-Type", b"text/html").split(b";")[0].strip().lower()
    return content_type in (b"text/html", b"application/xhtml+xml", b"")


def page_fields(response) -> tuple[PageFields, list[str]]:
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


def content_sha1(text: str) -> str:
    """SHA-1 of a page's normalised text: equal for pages that only differ in markup."""
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()
