"""Focus parity: any spider's links get the evidence the ``focused`` spider's get.

A small site on 127.0.0.1 whose pages put links under headings and in nested lists,
link to themselves (``#section``), to the same page under several fragments, to a
source file and to a URL that Scrapy percent-encodes. It is crawled to its end by
``focused``, by a plain ``scrapy.Spider`` (``LinkExtractor`` + ``response.follow``)
and by a ``CrawlSpider`` (one ``Rule``), the last two with nothing but the add-on
and ``ADAPTIVE_QUERY``. Every request that reaches the scheduler is recorded with
its evidence (``link_text``, ``link_context``, the page it was found on).
"""

from __future__ import annotations

import re

import pytest
import scrapy
from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerRunner
from scrapy.http import HtmlResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import Settings
from scrapy.spiders import CrawlSpider, Rule
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.scheduler import AdaptiveScheduler
from adaptive_spider.crawl.spidermiddlewares import REPEATS_STAT, RelevanceMiddleware, unsettled_links
from adaptive_spider.crawl.state import PARENT_KEY, CrawlState
from adaptive_spider.demo.site import DemoSite, serve
from adaptive_spider.relevance.links import PageLinks
from spiders.focused import FocusedSpider
from tests.conftest import TEST_SETTINGS, crawl_test, project_settings, run_crawl

QUERY = "astronomy telescopes planets and galaxies"
ADDON = {"adaptive_spider.addon.AdaptiveAddon": 0}


def _page(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"


PAGES = {
    "/": _page(
        "Star guides",
        """<p><a href="#top">Top</a> <a href="/">Home</a> <a href="./">Here</a></p>
        <h2>Observing guides</h2>
        <ul>
          <li><a href="/telescopes.html">Telescopes</a>
            <ul>
              <li><a href="/telescopes.html#mirrors">Mirrors</a></li>
              <li><a href="/lenses.html">Lenses</a></li>
            </ul>
          </li>
          <li><a href="/planets.html"><code>planets</code> overview</a></li>
        </ul>
        <h3>Reference</h3>
        <p><a href="/_sources/telescopes.rst.txt">Show source</a>
           <a href="/caf%C3%A9 page.html">Café of the stars</a>
           <a href="/galaxies.html?x=1#frag">Galaxies</a></p>
        <h2>Elsewhere</h2>
        <p><a href="/cooking.html">Cooking</a></p>""",
    ),
    "/telescopes.html": _page(
        "Telescopes",
        """<h2>Mirrors</h2><p id="mirrors">Reflecting telescopes gather light with mirrors.
        <a href="#mirrors">this section</a> <a href="/lenses.html">Lenses</a>
        <a href="/lenses.html#chromatic">chromatic aberration</a></p>
        <h2>See also</h2><ul><li><a href="/planets.html">Planets</a></li><li><a href="/">Guides</a></li></ul>""",
    ),
    "/lenses.html": _page(
        "Lenses", '<h2>Refractors</h2><p>Refracting telescopes. <a href="/telescopes.html">Back</a></p>'
    ),
    "/planets.html": _page(
        "Planets",
        """<h2>Solar system</h2><ol><li><a href="/planets/mars.html">Mars</a></li>
        <li><a href="/galaxies.html?x=1">Beyond: galaxies</a></li></ol>""",
    ),
    "/planets/mars.html": _page("Mars", '<p>The red planet. <a href="../planets.html">Planets</a></p>'),
    "/galaxies.html": _page("Galaxies", '<h2>Spirals</h2><p><a href="/">Guides</a></p>'),
    "/caf%C3%A9%20page.html": _page("Café", '<p>Stars over coffee. <a href="/cooking.html">Cooking</a></p>'),
    "/cooking.html": _page("Cooking", "<p>Bread and soup.</p>"),
}
SOURCE = ("/_sources/telescopes.rst.txt", (200, "text/plain", b"Telescopes\n=========="))


@pytest.fixture(scope="module")
def link_site():
    site = DemoSite(seed=0, hubs_per_topic=1, articles_per_hub=1)
    site.pages = dict(PAGES)
    site.extra = dict([SOURCE])
    server, url = serve(site)
    yield url
    server.shutdown()


class PlainSpider(scrapy.Spider):
    """A project's spider as written without adaptive_spider."""

    name = "plain"

    def __init__(self, url: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]
        self.allowed_domains = ["127.0.0.1"]

    def parse(self, response):
        yield {"url": response.url}
        if isinstance(response, HtmlResponse):
            for link in LinkExtractor().extract_links(response):
                yield response.follow(link, callback=self.parse)


class RuleSpider(CrawlSpider):
    """A project's CrawlSpider as written without adaptive_spider."""

    name = "rules"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, url: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]
        self.allowed_domains = ["127.0.0.1"]

    def parse_page(self, response):
        yield {"url": response.url}


def plain_project_settings() -> Settings:
    """A plain project's settings with the focused crawl dropped in: the add-on and the query."""
    return Settings({**TEST_SETTINGS, "ADDONS": ADDON, "ADAPTIVE_QUERY": QUERY})


class Evidence:
    """Every request the scheduler is offered in one crawl, by (page it was found on, URL).

    A page may be fetched twice (a start request is not filtered, a link back to it is
    not a duplicate then): its evidence is kept as a set.
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.page_urls: dict[int, str] = {}  # page log id -> URL
        self.links: dict[tuple[str, str], set[tuple[str, str, str]]] = {}
        self.per_response: dict[tuple[int, str], int] = {}  # (page log id, URL) -> requests
        crawler.signals.connect(self._opened, signals.spider_opened)
        crawler.signals.connect(self._scheduled, signals.request_scheduled)

    def _opened(self, spider):
        CrawlState.of(self.crawler).on_page(self._page)

    def _page(self, analysis):
        self.page_urls[analysis.page_id] = analysis.fields.url

    def _scheduled(self, request, spider):
        parent = request.meta.get(PARENT_KEY)
        if parent is None:
            return  # a start request
        page = self.page_urls[parent]
        referer = request.headers.get("Referer", b"").decode()
        assert referer == page, (request.url, referer, page)  # the parent is the page the link is on
        evidence = (request.meta.get("link_text"), request.meta.get("link_context", ""), page)
        self.links.setdefault((page, request.url), set()).add(evidence)
        key = (parent, request.url)
        self.per_response[key] = self.per_response.get(key, 0) + 1

    def words(self) -> dict[tuple[str, str], tuple]:
        """The evidence with anchor texts as word lists (Scrapy's CrawlSpider keeps an
        anchor's whitespace and runs ``<code>planets</code> overview`` together)."""
        return {
            key: {(tuple(_words(text)), context, page) for text, context, page in evidence}
            for key, evidence in self.links.items()
        }


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


async def crawl_evidence(spidercls, settings: Settings, **kwargs) -> Evidence:
    crawler = CrawlerRunner(settings).create_crawler(spidercls)
    evidence = Evidence(crawler)
    await crawler.crawl_async(**kwargs)
    return evidence


@crawl_test
async def test_any_spider_links_carry_the_focused_spiders_evidence(link_site, monkeypatch):
    # Every link reaches the scheduler here, where its evidence is read: a page's links to
    # URLs fetched already, dropped before it in a crawl, would depend on the fetch order.
    monkeypatch.setattr(AdaptiveScheduler, "_is_settled", lambda self, url: False)
    focused = await crawl_evidence(FocusedSpider, project_settings(), query=QUERY, start_urls=link_site)
    plain = await crawl_evidence(PlainSpider, plain_project_settings(), url=link_site)
    rules = await crawl_evidence(RuleSpider, plain_project_settings(), url=link_site)
    base = link_site.rstrip("/")
    reference = focused.links
    # The focused spider's evidence, as the page says it.
    assert reference[(f"{base}/", f"{base}/lenses.html")] == {("Lenses", "Observing guides Telescopes", f"{base}/")}
    assert reference[(f"{base}/", f"{base}/caf%C3%A9%20page.html")] == {
        ("Café of the stars", "Observing guides Reference", f"{base}/")
    }
    assert {context for _, context, _ in reference[(f"{base}/telescopes.html", f"{base}/planets.html")]} == {"See also"}
    assert len(set(reference)) >= 12
    for name, crawl in (("plain", plain), ("crawlspider", rules)):
        # Every link the focused spider followed, the other spider yielded with the same evidence:
        # anchor text, context and page (the page's score is the page log's, by that page id).
        evidence = crawl.words()
        for key, expected in focused.words().items():
            assert evidence.get(key) == expected, (name, key)
        # and once per page: its own page (#top, ./) and a second fragment of a URL went no further.
        assert set(crawl.per_response.values()) == {1}, name
        assert crawl.crawler.stats.get_value(f"adaptive/{REPEATS_STAT}") >= 5, name
        # A source file the focused spider skips still gets its anchor and context.
        assert crawl.links[(f"{base}/", f"{base}/_sources/telescopes.rst.txt")] == {
            ("Show source", "Observing guides Reference", f"{base}/")
        }


@crawl_test
async def test_a_page_links_are_parsed_once_per_response(link_site, monkeypatch):
    parsed: list[str] = []
    original = PageLinks.of.__func__

    def counting(cls, response):
        parsed.append(response.url)
        return original(cls, response)

    monkeypatch.setattr(PageLinks, "of", classmethod(counting))
    for spidercls, settings, kwargs in (
        (FocusedSpider, project_settings(), {"query": QUERY, "start_urls": link_site}),
        (PlainSpider, plain_project_settings(), {"url": link_site}),
    ):
        parsed.clear()
        evidence = await crawl_evidence(spidercls, settings, **kwargs)
        assert sorted(parsed) == sorted(evidence.page_urls.values())  # one parse per HTML page


def _response(url: str, body: str) -> HtmlResponse:
    return HtmlResponse(url, body=body.encode(), encoding="utf-8", request=Request(url))


def _links_by_file(response: HtmlResponse) -> dict:
    """A page's followable links by their file name ("locks.html")."""
    return {link.url.rsplit("/", 1)[1]: link for link in PageLinks.of(response).followable}


def _middleware(**settings) -> RelevanceMiddleware:
    crawler = get_crawler(settings_dict={"ADAPTIVE_QUERY": QUERY, **settings})
    return RelevanceMiddleware.from_crawler(crawler)


def test_repeats_of_a_page_are_dropped_only_where_the_dupefilter_would_drop_them():
    middleware = _middleware()
    page = "http://a.test/docs/index.html"
    response = _response(page, _page("Docs", '<h2>Guide</h2><a href="intro.html">Intro</a> <a href="#x">x</a>'))
    middleware.process_spider_input(response)
    outputs = [
        Request(page + "#x"),  # the page itself
        Request("http://a.test/docs/intro.html#a"),
        Request("http://a.test/docs/intro.html#b"),  # a repeat
        Request("http://a.test/docs/intro.html", dont_filter=True),  # the spider wants it again
        Request("http://a.test/docs/intro.html", method="POST", body=b"q=1"),  # another request
        Request("http://a.test/docs/intro.html", meta={"link_text": "mine"}, callback=print),
        {"url": page},
    ]
    kept = list(middleware.process_spider_output(response, outputs))
    assert kept == [outputs[1], outputs[3], outputs[4], outputs[6]]
    intro = outputs[1].meta
    assert (intro["link_text"], intro["link_context"], intro[PARENT_KEY]) == ("Intro", "Guide", 0)
    assert outputs[3].meta["link_text"] == "Intro"

    # A dupefilter that does not filter, or another fingerprinter: every request goes on.
    for settings in ({"DUPEFILTER_CLASS": "scrapy.dupefilters.BaseDupeFilter"},
                     {"REQUEST_FINGERPRINTER_CLASS": "tests.test_link_evidence_parity.Fingerprinter"}):  # fmt: skip
        middleware = _middleware(**settings)
        assert not middleware.drop_repeats
        assert len(list(middleware.process_spider_output(response, [Request(page), Request(page + "#y")]))) == 2


def test_links_to_urls_the_scheduler_has_sent_are_dropped_before_it():
    crawler = get_crawler(Spider, {"ADAPTIVE_QUERY": QUERY, "ADAPTIVE_STRATEGY": "bestfirst"})
    crawler.spider = spider = Spider.from_crawler(crawler, name="spider")
    scheduler = AdaptiveScheduler.from_crawler(crawler)
    scheduler.open(spider)
    middleware = RelevanceMiddleware.from_crawler(crawler)
    sent, queued = "http://a.test/docs/sent.html", "http://a.test/docs/queued.html"
    assert scheduler.enqueue_request(Request(sent))
    assert scheduler.next_request().url == sent
    assert scheduler.enqueue_request(Request(queued))
    page = "http://a.test/docs/index.html"
    response = _response(page, _page("Docs", '<a href="sent.html">Sent</a> <a href="queued.html">Queued</a>'))
    middleware.process_spider_input(response)
    outputs = [
        Request(sent + "#part"),  # the scheduler would refuse it, and holds nothing to update
        Request(queued),  # still queued: it may be the better link to it
        Request(sent, dont_filter=True),
        Request(sent, method="POST", body=b"q=1"),
        Request("http://b.test/sent.html"),  # never seen
    ]
    kept = list(middleware.process_spider_output(response, outputs))
    assert kept == outputs[1:]
    stats = crawler.stats
    assert stats.get_value("adaptive/links/settled_repeats") == 1
    assert stats.get_value("adaptive/links/repeats_cross_site") is None
    other = _response("http://c.test/", _page("C", '<a href="http://a.test/docs/sent.html">Sent</a>'))
    middleware.process_spider_input(other)
    assert list(middleware.process_spider_output(other, [Request(sent)])) == []
    assert stats.get_value("adaptive/links/settled_repeats") == 2
    assert stats.get_value("adaptive/links/repeats_cross_site") == 1
    scheduler.close("finished")
    assert len(list(middleware.process_spider_output(other, [Request(sent)]))) == 1, "no scheduler: all go on"


def test_the_focused_spider_builds_no_request_for_a_link_to_a_settled_url():
    crawler = get_crawler(FocusedSpider, {"ADAPTIVE_QUERY": QUERY, "ADAPTIVE_STRATEGY": "bestfirst"})
    crawler.spider = spider = FocusedSpider.from_crawler(crawler, start_urls="http://a.test/")
    state = CrawlState.of(crawler)
    page = "http://a.test/docs/index.html"
    response = _response(
        page,
        _page(
            "Docs",
            '<a href="sent.html">Sent</a> <a href="queued.html">Queued</a> <a href="new.html">New</a> '
            '<a href="http://b.test/sent.html">B</a>',
        ),
    )
    followable = [link.url for link in state.links_of(response).followable]
    assert [link.url for link in unsettled_links(state, state.links_of(response))] == followable, "no scheduler"
    scheduler = AdaptiveScheduler.from_crawler(crawler)
    scheduler.open(spider)
    for url in ("http://a.test/docs/sent.html", "http://b.test/sent.html"):
        assert scheduler.enqueue_request(Request(url))
        assert scheduler.next_request().url == url
    assert scheduler.enqueue_request(Request("http://a.test/docs/queued.html"))
    kept = [link.url for link in unsettled_links(state, state.links_of(response))]
    assert kept == ["http://a.test/docs/queued.html", "http://a.test/docs/new.html"]
    stats = crawler.stats
    assert stats.get_value("adaptive/links/settled_repeats") == 2
    assert stats.get_value("adaptive/links/repeats_cross_site") == 1
    # The spider itself: the page's item, then requests for the two unsettled links only.
    requests = [output.url for output in spider.parse(response) if isinstance(output, Request)]
    assert requests == kept
    assert stats.get_value("adaptive/links/settled_repeats") == 4, "counted as the middleware counts them"
    scheduler.close("finished")


@crawl_test
async def test_dropping_links_to_sent_urls_loses_no_page_and_the_report_still_counts_them(demo_site, monkeypatch):
    _, url = demo_site
    settings = project_settings(ADAPTIVE_SELF_STOP=False)
    dropping = await run_crawl(FocusedSpider, settings, query="telescope eyepiece", start_urls=url)
    monkeypatch.setattr(AdaptiveScheduler, "_is_settled", lambda self, url: False)
    reaching = await run_crawl(FocusedSpider, settings, query="telescope eyepiece", start_urls=url)
    assert dropping.stats["adaptive/links/settled_repeats"] > 100
    assert "adaptive/links/settled_repeats" not in reaching.stats
    assert sorted(dropping.fetched) == sorted(reaching.fetched), "the same pages, every one once"
    links = [crawl.stats for crawl in (dropping, reaching)]
    for name in ("collected", "already_seen", "cross_site"):
        assert links[0][f"adaptive/report/links/{name}"] == links[1][f"adaptive/report/links/{name}"], name
    assert links[0]["dupefilter/filtered"] < links[1]["dupefilter/filtered"]


class Fingerprinter:
    """A request fingerprinter of a project's own."""

    def fingerprint(self, request) -> bytes:
        return request.url.encode()


def test_a_spiders_own_link_text_is_kept_and_the_context_added():
    middleware = _middleware()
    page = "http://a.test/"
    body = '<h2>Planets</h2><ul><li><a href="/mars.html">Mars</a></li></ul><a href="/caf%C3%A9 x.html">Café</a>'
    response = _response(page, _page("Home", body))
    middleware.process_spider_input(response)
    ours = Request("http://a.test/mars.html", meta={"link_text": "the red planet"})
    safe = response.follow("/caf%C3%A9 x.html")  # percent-encoded by Request
    elsewhere = Request("http://b.test/")  # not a link of the page
    list(middleware.process_spider_output(response, [ours, safe, elsewhere]))
    assert (ours.meta["link_text"], ours.meta["link_context"]) == ("the red planet", "Planets")
    assert safe.url == "http://a.test/caf%C3%A9%20x.html" and safe.meta["link_text"] == "Café"
    assert elsewhere.meta["link_text"] == "" and "link_context" not in elsewhere.meta


def test_a_link_is_described_by_what_its_page_says_beside_it():
    """An API listing names entries the query's words never match ("locks"); the summary
    beside each name does, and it reaches every spider's request as ``link_description``."""
    body = (
        '<div class="menu"><a href="/locks.html">locks</a> <a href="/io.html">io</a></div>'
        "<table><tr><td><p><a href='/locks.html'><code>locks</code></a></p></td>"
        "<td><p>Mutual exclusion locks and condition variables for threads.</p></td></tr>"
        "<tr><td><div><div><a href='/atomic.html'>atomic</a></div><div>(C++11)</div></div></td>"
        "<td>Atomic operations on shared memory cells</td></tr></table>"
        "<dl><dt><a href='/queue.html'>queue</a></dt><dd>A synchronized queue between producer threads</dd></dl>"
        "<ul><li><a href='/mmap.html'>mmap</a> - memory-mapped file support</li>"
        "<li><a href='/a.html'>a</a></li><li><a href='/b.html'>b</a></li></ul>"
    )
    response = _response("http://a.test/", _page("Library", body))
    links = _links_by_file(response)
    # The menu names locks first; the table describes it, and the description is kept.
    assert links["locks.html"].text == "locks"
    assert links["locks.html"].description == "Mutual exclusion locks and condition variables for threads."
    assert links["atomic.html"].description == "Atomic operations on shared memory cells"  # past the "(C++11)" tag
    assert links["queue.html"].description == "A synchronized queue between producer threads"
    assert links["mmap.html"].description == "- memory-mapped file support"
    assert links["a.html"].description == ""  # the next item of a list is not a description
    assert links["io.html"].description == ""
    middleware = _middleware()
    middleware.process_spider_input(response)
    request = response.follow("/locks.html")
    list(middleware.process_spider_output(response, [request]))
    assert request.meta["link_description"] == links["locks.html"].description


def test_a_wrapped_link_is_described_by_the_text_after_its_wrapper():
    """DocBook and gtk-doc list a reference's entries as a title span and a purpose span
    (PostgreSQL's "SQL Commands": END — commit the current transaction); the purpose
    describes the link, and the next entry's link does not."""
    body = (
        "<dl>"
        '<dt><span class="refentrytitle"><a href="/sql-end.html">END</a></span>'
        '<span class="refpurpose"> — commit the current transaction</span></dt>'
        '<dt><span class="refentrytitle"><a href="/sql-explain.html">EXPLAIN</a></span>'
        '<span class="refpurpose"> — show the execution plan of a statement</span></dt>'
        "</dl>"
        "<p><span><code><a href='/worker.html'>worker</a></code></span> MPM with threads for connections</p>"
        "<p><span><a href='/one.html'>one</a></span><span><a href='/two.html'>two</a></span></p>"
    )
    links = _links_by_file(_response("http://a.test/", _page("SQL", body)))
    assert links["sql-end.html"].description == "— commit the current transaction"
    assert links["sql-explain.html"].description == "— show the execution plan of a statement"
    assert links["worker.html"].description == "MPM with threads for connections"
    assert links["one.html"].description == ""  # the next entry of a menu is no description
    assert links["two.html"].description == ""


def test_a_tables_description_beats_the_words_after_an_earlier_mention_in_prose():
    """rustdoc's crate page mentions modules in its prose first ("the io, fs, and net
    modules"), then lists each in a grid with its summary: the summary describes the link."""
    body = (
        "<p>Types are defined in the <a href='/io.html'><code>io</code></a>, "
        "<a href='/fs.html'><code>fs</code></a>, and <a href='/net.html'>net</a> modules.</p>"
        "<div class='item-row'><div class='item-left'><a href='/fs.html'>fs</a></div>"
        "<div class='item-right'><p>Filesystem manipulation operations.</p></div></div>"
        "<div class='item-row'><div class='item-left'><a href='/io.html'>io</a></div>"
        "<div class='item-right'><p>Traits and helpers for core I/O functionality.</p></div></div>"
        "<p>See <a href='/net.html'>net</a> for sockets and more.</p>"
    )
    links = _links_by_file(_response("http://a.test/", _page("std", body)))
    assert links["fs.html"].description == "Filesystem manipulation operations."
    assert links["io.html"].description == "Traits and helpers for core I/O functionality."
    assert links["net.html"].description == "modules."  # a later sentence does not replace the first


def test_headings_title_the_links_of_lists_and_tables_not_those_of_running_text():
    """A reference page's heading ("Telescopes") says what the page is about; a link in
    its prose goes wherever the sentence does, so only listed links take the heading."""
    body = (
        "<h2>Telescopes</h2>"
        "<p>Mount it as the <a href='/settings.html'>settings</a> say, "
        "<em><a href='/time.html'>in local time</a></em>.</p>"
        "<ul><li><a href='/refractors.html'>Refractors</a></li>"
        "<li><p><a href='/reflectors.html'>Reflectors</a> with mirrors</p></li></ul>"
        "<table><tr><td><p><a href='/mounts.html'>Mounts</a></p></td></tr></table>"
        "<a href='/eyepieces.html'>Eyepieces</a>"
    )
    links = _links_by_file(_response("http://a.test/", _page("Guide", body)))
    assert links["settings.html"].context == links["time.html"].context == ""
    assert links["settings.html"].description == "say,"  # what the sentence says beside it stays
    for listed in ("refractors.html", "reflectors.html", "mounts.html", "eyepieces.html"):
        assert links[listed].context == "Telescopes", listed


def test_the_description_counts_in_the_link_prior():
    from adaptive_spider.frontier.linkevidence import link_evidence

    state = _middleware().state
    plain = Request("http://a.test/locks.html", meta={"link_text": "locks"})
    described = Request(
        "http://a.test/locks.html",
        meta={"link_text": "locks", "link_description": "telescopes for observing planets and galaxies"},
    )
    assert link_evidence(described, state, 0).prior > link_evidence(plain, state, 0).prior


def test_a_link_to_a_file_that_is_not_a_page_goes_after_the_pages():
    """A plain spider follows a Sphinx page's "Show source" link, whose URL repeats the
    query's words; its file scores 0 (not a page), so the default order takes it after
    any page with a sign of relevance."""
    settings = {**TEST_SETTINGS, "ADAPTIVE_QUERY": "telescopes for observing planets", "ADAPTIVE_STRATEGY": "bestfirst"}
    crawler = get_crawler(scrapy.Spider, settings)
    crawler.spider = spider = scrapy.Spider.from_crawler(crawler, name="plain")
    scheduler = AdaptiveScheduler.from_crawler(crawler)
    scheduler.open(spider)
    files = ["http://a.test/_sources/telescopes-planets.rst.txt", "http://a.test/downloads/telescopes-planets.zip"]
    for url in files:
        scheduler.enqueue_request(Request(url, meta={"link_text": "Show source"}))
    scheduler.enqueue_request(Request("http://a.test/notes.html", meta={"link_text": "Observing notes"}))
    scheduler.enqueue_request(Request("http://a.test/telescopes.html", meta={"link_text": "Telescopes"}))
    released = []
    while scheduler.has_pending_requests():
        released.append(scheduler.next_request().url)
    assert set(released[:2]) == {"http://a.test/telescopes.html", "http://a.test/notes.html"}
    assert set(released[2:]) == set(files)


def test_a_url_linked_under_several_anchors_is_valued_by_the_one_that_says_most():
    """A table of contents links a reference page under its title ("Reference") and under
    each of its sections; the link is valued by the section that names the query, as if
    that were its only anchor, and so is it when the query's expansion revalues it."""
    from adaptive_spider.frontier.linkevidence import link_evidence, revalued_link
    from adaptive_spider.relevance.links import MAX_OTHER_ANCHORS

    sections = "".join(f"<li><a href='/ref.html#s{i}'>Section {i}</a></li>" for i in range(12))
    body = (
        "<ul><li><a href='/ref.html'>Reference</a><ul>"
        "<li><a href='/ref.html#sizes'>Header sizes.hpp</a></li>"
        "<li><a href='/ref.html#planets'>Telescopes and planets</a></li>"
        f"<li><a href='/ref.html#again'>Telescopes and planets</a></li>{sections}</ul></li>"
        "<li><a href='/about.html'>Reference</a></li></ul>"
    )
    response = _response("http://a.test/", _page("Manual", body))
    links = _links_by_file(response)
    assert links["ref.html"].text == "Reference"  # the link's text is its first anchor, as Scrapy's
    others = links["ref.html"].other_anchors
    assert others[:2] == ("Header sizes.hpp", "Telescopes and planets")  # distinct, in page order
    assert len(others) == MAX_OTHER_ANCHORS
    assert links["about.html"].other_anchors == ()

    middleware = _middleware()
    middleware.process_spider_input(response)
    followed = response.follow("/ref.html")
    list(middleware.process_spider_output(response, [followed]))
    assert followed.meta["link_other_anchors"] == list(others)

    state = middleware.state
    url = "http://a.test/ref.html"
    title_only = Request(url, meta={"link_text": "Reference"})
    with_sections = Request(url, meta={"link_text": "Reference", "link_other_anchors": list(others)})
    named = Request(url, meta={"link_text": "Telescopes and planets"})
    prior = link_evidence(with_sections, state, 0).prior
    assert prior == link_evidence(named, state, 0).prior > link_evidence(title_only, state, 0).prior
    assert revalued_link(state, url, with_sections.meta, -1) == revalued_link(state, url, named.meta, -1)
    assert revalued_link(state, url, with_sections.meta, -1)[1] > revalued_link(state, url, title_only.meta, -1)[1]


def test_a_heading_left_open_titles_the_links_under_it_with_its_first_words_only():
    """``<h2>Keyword Index</h1>``: the heading is never closed and holds the rest of its page,
    an index of thousands of links whose text says every word of any query. As the context
    of each of them it lifted them all (SQLite's keyword index, 3,000 links, took some 750
    fetches of most big-web crawls); a heading is a title, and its first words title them."""
    entries = "".join(f"<li><a href='/e{i}.html'>entry {i}</a></li>" for i in range(20))
    body = (
        f"<h2 align=center>Keyword Index</h1><ul>{entries}"
        "<li>telescopes for observing planets and galaxies</li>"
        "<li><a href='/last.html'>last entry</a></li></ul>"
    )
    links = _links_by_file(_response("http://a.test/", _page("Index", body)))
    last = links["last.html"].context
    assert last.startswith("Keyword Index entry 0")
    assert "telescopes" not in last and len(last.split()) <= 16
    assert _middleware().state.context_similarity(last) == 0.0
