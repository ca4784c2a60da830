"""Extraction on responses: clean-up rules, several documents per page, links, exclusions, pagination scope."""

from __future__ import annotations

import json

import pytest
from scrapy.http import HtmlResponse, Response, TextResponse

from adaptive_spider.extract import Template, to_number
from adaptive_spider.relevance.pagetext import content_sha1

PAGE_URL = "http://shop.test/catalog/page-1.html"


def response(body: str, url: str = PAGE_URL) -> HtmlResponse:
    return HtmlResponse(url, body=body.encode(), encoding="utf-8")


def sha1_of(*values) -> str:
    """A template document's sha1: the package's content hash of its field values as a JSON list."""
    return content_sha1(json.dumps(list(values), ensure_ascii=False))


def template(fields, **options) -> Template:
    return Template.from_data({"name": "t", "fields": fields, "options": options or None})


CATALOG = """
<html><head><title>Catalog</title><script>var title = "not content";</script></head>
<body>
  <div class="item">
    <h2>  Blue
        kettle </h2>
    <span class="price">€ 1,249.50 incl. VAT</span>
    <img src="/img/blank.gif" data-src="../img/kettle.jpg">
    <a href="kettle.html">details</a>
    <span class="tag">kitchen</span><span class="tag">steel</span>
  </div>
  <div class="item">
    <h2>Red pan</h2>
    <span class="price">€ 30</span>
    <img src="pan.jpg">
    <a href="/catalog/pan.html">details</a>
  </div>
  <div class="item"><!-- an empty slot: no document --></div>
  <div class="item"><span class="price">€ 5</span></div>
  <nav class="pager">
    <a href="page-1.html">1</a> <a href="page-2.html">2</a> <a rel="next" href="page-2.html">Next</a>
    <a href="page-1.html?sort=price">Sort by price</a>
  </nav>
  <footer><a href="/about.html">About</a> <a href="/login">Sign in</a></footer>
</body></html>
"""

ITEM_FIELDS = [
    {"name": "title", "xpath": ".//h2", "required": True},
    {"name": "price", "xpath": ".//span[@class='price']", "clean": ["€", " incl\\. VAT$", ","], "ranking": "price"},
    {"name": "image", "xpath": ".//img", "type": "image", "attribute": ["data-src", "src"]},
    {"name": "link", "xpath": ".//a", "type": "link"},
    {"name": "tags", "xpath": ".//span[@class='tag']", "multiple": True},
]


def test_one_document_per_matched_element():
    documents = template(ITEM_FIELDS, documents="//div[@class='item']").extract(response(CATALOG))
    # The empty slot has no fields; the fourth has no title, which is required.
    assert documents == [
        {
            "url": PAGE_URL,
            "template": "t",
            "title": "Blue kettle",
            "price": "1249.50",
            "image": "http://shop.test/img/kettle.jpg",
            "link": "http://shop.test/catalog/kettle.html",
            "tags": ["kitchen", "steel"],
            "ranking": {"price": 1249.5},
            "sha1": sha1_of(
                "Blue kettle",
                "1249.50",
                "http://shop.test/img/kettle.jpg",
                "http://shop.test/catalog/kettle.html",
                ["kitchen", "steel"],
            ),
        },
        {
            "url": PAGE_URL,
            "template": "t",
            "title": "Red pan",
            "price": "30",
            "image": "http://shop.test/catalog/pan.jpg",
            "link": "http://shop.test/catalog/pan.html",
            "tags": [],
            "ranking": {"price": 30.0},
            "sha1": sha1_of(
                "Red pan", "30", "http://shop.test/catalog/pan.jpg", "http://shop.test/catalog/pan.html", []
            ),
        },
    ]


def test_one_document_per_page_without_a_documents_xpath():
    fields = [
        {"name": "heading", "xpath": "//h2"},  # the first match
        {"name": "prices", "xpath": "//span[@class='price']", "multiple": True, "clean": [" incl\\. VAT", "[^0-9.,]"]},
        {"name": "page_title", "xpath": "//title/text()"},
    ]
    assert template(fields).extract(response(CATALOG)) == [
        {
            "url": PAGE_URL,
            "template": "t",
            "heading": "Blue kettle",
            "prices": ["1,249.50", "30", "5"],
            "page_title": "Catalog",
            "sha1": sha1_of("Blue kettle", ["1,249.50", "30", "5"], "Catalog"),
        }
    ]


def test_the_same_document_from_two_urls_has_one_sha1():
    """Only the extracted values are hashed: a mirror's copy of a document is its duplicate."""
    first = template(ITEM_FIELDS, documents="//div[@class='item']").extract(response(CATALOG))
    mirrored = template(ITEM_FIELDS, documents="//div[@class='item']").extract(
        response(CATALOG, "http://shop.test/catalog/page-1.html?mirror=1")
    )
    assert [d["sha1"] for d in first] == [d["sha1"] for d in mirrored]
    assert first[0]["url"] != mirrored[0]["url"]
    assert len({d["sha1"] for d in first}) == 2
    # Fields are kept apart: moving a word from one field to the next changes the hash.
    assert sha1_of("a b", None) != sha1_of("a", "b")


def test_page_without_any_field_gives_no_document():
    assert template([{"name": "x", "xpath": "//table"}]).extract(response(CATALOG)) == []


@pytest.mark.parametrize(
    ("raw", "rules", "expected"),
    [
        ("$1,299.00", ["\\$", ","], "1299.00"),
        ("  Price:\n\t $ 12 ", ["^Price:", "\\$"], "12"),  # whitespace normalised after the rules
        ("Posted 2024-05-01", [{"pattern": "Posted (\\d+)-(\\d+)-(\\d+)", "replace": "\\3/\\2/\\1"}], "01/05/2024"),
        ("N/A", ["^N/A$"], None),  # cleaned down to nothing: the field is absent
        ("Ab ab AB", ["(?i)ab "], "AB"),  # rules run in order, each on the last one's output
    ],
)
def test_cleanup_rules(raw, rules, expected):
    page = response(f"<html><body><p>{raw}</p></body></html>")
    field = {"name": "v", "xpath": "//p", "clean": rules}
    documents = template([field, {"name": "keep", "xpath": "//body"}]).extract(page)
    assert documents[0]["v"] == expected


def test_script_and_style_text_is_not_content():
    page = response("<html><body><div>Hello <script>var x = 1;</script><style>p{}</style>world</div></body></html>")
    assert template([{"name": "v", "xpath": "//div"}]).extract(page)[0]["v"] == "Hello world"


def test_attribute_text_and_urls_made_absolute_against_base():
    page = response(
        '<html><head><base href="http://cdn.test/assets/"></head><body>'
        '<time datetime="2024-05-01">May 1</time><a href="x.html" title="  The  X ">X</a></body></html>'
    )
    fields = [
        {"name": "date", "xpath": "//time", "attribute": "datetime"},
        {"name": "title", "xpath": "//a/@title"},
        {"name": "link", "xpath": "//a/@href", "type": "link"},
    ]
    document = template(fields).extract(page)[0]
    assert (document["date"], document["title"], document["link"]) == (
        "2024-05-01",
        "The X",
        "http://cdn.test/assets/x.html",
    )


@pytest.mark.parametrize(
    ("text", "number"),
    [("=3", 3.0), ("1,234 points", 1234.0), ("1.2k votes", 1200.0), ("-2", -2.0), ("\u22124", -4.0),
     ("2M views", 2e6), ("3 km", 3.0), ("98.7", 98.7), ("no number", None), ("", None)],
)  # fmt: skip
def test_ranking_numbers(text, number):
    assert to_number(text) == number


def test_ranking_variable_without_a_number_is_none():
    page = response("<html><body><b>unranked</b></body></html>")
    document = template([{"name": "rank", "xpath": "//b", "ranking": "rank"}]).extract(page)[0]
    assert document["ranking"] == {"rank": None}


def _urls(links):
    return [link.url for link in links]


def test_pagination_scope_limits_links_and_keeps_anchor_text():
    links = template(ITEM_FIELDS, pagination="//nav[@class='pager']").links(response(CATALOG))
    assert _urls(links) == [
        "http://shop.test/catalog/page-1.html",
        "http://shop.test/catalog/page-2.html",
        "http://shop.test/catalog/page-1.html?sort=price",
    ]
    assert [link.text for link in links] == ["1", "2", "Sort by price"]


def test_pagination_xpath_may_select_the_links_themselves():
    links = template(ITEM_FIELDS, pagination="//a[@rel='next']").links(response(CATALOG))
    assert [(link.url, link.text) for link in links] == [("http://shop.test/catalog/page-2.html", "Next")]


def test_no_pagination_follows_every_link_and_last_page_follows_none():
    assert len(template(ITEM_FIELDS).links(response(CATALOG))) == 7
    last_page = response("<html><body><a href='x.html'>x</a></body></html>")
    assert template(ITEM_FIELDS, pagination="//nav[@class='pager']").links(last_page) == []


def test_excluded_urls_are_not_followed():
    scoped = template(ITEM_FIELDS, exclude=["[?&]sort=", "^http://shop\\.test/login"])
    assert scoped.is_excluded("http://shop.test/catalog/page-1.html?sort=price")
    assert scoped.is_excluded("http://shop.test/login")
    assert not scoped.is_excluded("http://shop.test/catalog/page-2.html")
    followed = _urls(scoped.links(response(CATALOG)))
    assert "http://shop.test/catalog/page-1.html?sort=price" not in followed
    assert "http://shop.test/login" not in followed
    assert "http://shop.test/about.html" in followed


def test_non_text_responses_give_nothing():
    image = Response("http://shop.test/img/kettle.jpg", body=b"\x89PNG")
    scoped = template(ITEM_FIELDS, documents="//div")
    assert scoped.extract(image) == []
    assert scoped.links(image) == []
    plain_text = TextResponse("http://shop.test/robots.txt", body=b"User-agent: *", encoding="utf-8")
    assert scoped.extract(plain_text) == []
