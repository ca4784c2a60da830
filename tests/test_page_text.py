"""A page's visible text and its links' URLs, as the relevance scorer and the spider read them."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from parsel import Selector
from scrapy.http import HtmlResponse

from adaptive_spider.relevance.links import PageLinks, _joiner
from adaptive_spider.relevance.pagetext import body_text, html_page_fields, page_fields


def _root(html: str):
    return Selector(text=html).root


def test_the_body_text_reads_in_document_order_without_scripts_styles_or_comments():
    html = (
        "<html><head><title>T</title><style>h1 {color: red}</style></head><body>"
        "<p>Use <a href='x'><code>asyncio</code> tasks</a> to run <b>coroutines</b> concurrently.</p>"
        "<script>var run = 'concurrently';</script>"
        "<!-- a comment that says tasks --> after the comment"
        "<noscript>enable scripts</noscript><template><p>templated</p></template>"
        "<ul><li>one</li><li>two</li></ul>"
        "</body></html>"
    )
    assert body_text(_root(html)) == (
        # The text after a link comes after the link's own words ("asyncio tasks", then "to run").
        "Use asyncio tasks to run coroutines concurrently. after the comment templated one two"
    )


def test_a_visible_text_equal_to_a_scripts_is_kept():
    html = "<html><body><p>ready</p><script>ready</script><p>done</p><style>ready</style></body></html>"
    assert body_text(_root(html)) == "ready done"


def test_an_xhtml_page_given_as_text_reads_as_scrapy_reads_it():
    # AsciiDoc's manual pages (git's) open with an XML declaration and the XHTML namespace.
    html = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>git-branch(1)</title><style>body { font-family: Georgia }</style></head>"
        "<body><h1>git-branch(1) Manual Page</h1><p>List, create, or delete branches</p></body></html>"
    )
    url = "http://git.test/git-branch.html"
    from_text = html_page_fields(html, url)
    from_response, _ = page_fields(HtmlResponse(url, body=html.encode(), headers={"Content-Type": "text/html"}))
    assert from_text == from_response
    assert from_text.title == "git-branch(1)"
    assert "font-family" not in from_text.body and "delete branches" in from_text.body


def test_a_page_without_a_body_element_gives_its_roots_text():
    root = _root("<html><body><p>text</p></body></html>")
    body = root.find("body")
    assert body_text(body) == "text"


BASES = [
    "http://docs.test/library/asyncio-task.html",
    "http://docs.test/library/",
    "http://docs.test/library/index.html?page=2",
    "http://docs.test/library/page.html#section",
    "http://docs.test/a;params/b.html;p2",
    "http://docs.test",
    "http://docs.test/",
    "https://docs.test:8443/deep/er/path/x.html",
]
HREFS = [
    "other.html",
    "../index.html",
    "./sub/page.html",
    "/root.html",
    "//other.test/x.html",
    "http://other.test/a/../b.html",
    "https://secure.test/",
    "?page=3",
    "page.html?x=1",
    ";params",
    "http:relative.html",
    "mailto:someone@docs.test",
    "a/../../../../too-far.html",
    ".",
    "..",
]


@pytest.mark.parametrize("base", BASES)
def test_a_pages_hrefs_resolve_as_urljoin_resolves_them(base):
    join = _joiner(base)
    for href in HREFS:
        assert join(href) == urljoin(base, href), (base, href)


def test_the_links_of_sibling_pages_resolve_against_their_own_page():
    pages = {
        "http://docs.test/library/a.html": "<html><body><a href='?v=2'>next</a><a href='b.html'>b</a></body></html>",
        "http://docs.test/library/b.html": "<html><body><a href='?v=2'>next</a><a href='b.html'>b</a></body></html>",
    }
    found = {}
    for url, html in pages.items():
        response = HtmlResponse(url=url, body=html.encode(), encoding="utf-8")
        found[url] = [link.url for link in PageLinks.of(response).followable]
    assert found["http://docs.test/library/a.html"] == [
        "http://docs.test/library/a.html?v=2",
        "http://docs.test/library/b.html",
    ]
    # b.html's link to itself is not a link; its query link is its own.
    assert found["http://docs.test/library/b.html"] == ["http://docs.test/library/b.html?v=2"]


def test_a_base_element_sets_what_the_links_resolve_against():
    html = "<html><head><base href='http://mirror.test/docs/'></head><body><a href='x.html'>x</a></body></html>"
    response = HtmlResponse(url="http://docs.test/library/a.html", body=html.encode(), encoding="utf-8")
    assert [link.url for link in PageLinks.of(response).followable] == ["http://mirror.test/docs/x.html"]
