"""RelevanceMiddleware: every page's relevance, and the evidence of every link.

Before a response reaches the spider, the middleware scores the page against
the query (:meth:`CrawlState.analyze <adaptive_spider.crawl.state.CrawlState.analyze>`);
that score is the reward of the request that fetched it. On the way out, it
gives every request the spider yields the evidence the frontier ranks it by,
whatever the spider: the page it was found on (``request.meta["adaptive_parent"]``,
whose relevance is the link's parent score) and, from the page's own link to the
request's URL, its anchor text (``request.meta["link_text"]``, the key Scrapy's
CrawlSpider uses), its context, the headings and list label it sits under
(``request.meta["link_context"]``), and what the page says beside it, such as the next
cell of its table row (``request.meta["link_description"]``), and the anchor texts of
the page's other links to the same URL (``request.meta["link_other_anchors"]``), and the
language its page is in as far as the link says (``request.meta["link_language"]``: the
link's ``hreflang``, else its page's ``<html lang>``). A value the spider set itself is kept. The
page's links are parsed once per response (:meth:`CrawlState.links_of
<adaptive_spider.crawl.state.CrawlState.links_of>`), the parse the ``focused``
spider follows links from: a plain ``scrapy.Spider`` with a ``LinkExtractor`` or a
``CrawlSpider`` gets the ranking ``scrapy crawl focused`` gets.

A spider that follows every ``<a>`` of a page also yields the page itself
(``#section`` links) and the same URL once per fragment, and every page of a site
links again to its navigation's pages, fetched long ago. The dupefilter would
drop those repeats; the middleware drops them first (GET requests without a body
that may be filtered, when the dupefilter and the request fingerprinter are
Scrapy's, which fingerprint a URL without its fragment), so they cost no further
middleware, engine signal, scheduler or link evidence: a page's repeats of its own
requests, and its links to URLs the scheduler has judged and no longer holds
(``CrawlState.is_settled_url``; a link to a URL still queued goes on, since it may be
the better link to it). Stats: ``adaptive/links/same_page_repeats``,
``adaptive/links/settled_repeats`` and, of both, the links to another host than the
page's, ``adaptive/links/repeats_cross_site`` (the crawl report counts them all). The
``focused`` spider skips the links to settled URLs before it builds their requests
(:func:`unsettled_links`, the same counts), which spares it a ``scrapy.Request`` and the
middlewares above this one for most links of a link-heavy page.

Enable it below Scrapy's DepthMiddleware (the add-on uses 800) so the depth of
outgoing requests is set before it runs, and after HttpErrorMiddleware so that
only successful responses are scored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from scrapy import Request
from scrapy.utils.misc import load_object

from adaptive_spider.crawl.canonical import host_of, judges_by_url
from adaptive_spider.crawl.state import PARENT_KEY, CrawlState
from adaptive_spider.relevance.pagetext import is_html

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response, TextResponse

    from adaptive_spider.relevance.links import PageLink, PageLinks

#: What PageOutputs.complete returns for a request it drops.
DROPPED = object()
REPEATS_STAT = "links/same_page_repeats"
SETTLED_STAT = "links/settled_repeats"
CROSS_SITE_STAT = "links/repeats_cross_site"


class RelevanceMiddleware:
    """Spider middleware that scores pages (rewards) and gives outgoing links their evidence."""

    def __init__(self, state: CrawlState, drop_repeats: bool = True) -> None:
        self.state = state
        #: Drop a page's requests for itself and for a URL it already yielded (see the module).
        self.drop_repeats = drop_repeats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RelevanceMiddleware:
        return cls(CrawlState.of(crawler), drop_repeats=fragment_blind_filter(crawler))

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        if is_html(response):
            self.state.analyze(response)
        else:
            self.state.reward_nothing(response.request)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        outputs = PageOutputs(self.state, response, self.drop_repeats)
        try:
            for output in result:
                output = outputs.complete(output)
                if output is not DROPPED:
                    yield output
        finally:
            outputs.close()

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        outputs = PageOutputs(self.state, response, self.drop_repeats)
        try:
            async for output in result:
                output = outputs.complete(output)
                if output is not DROPPED:
                    yield output
        finally:
            outputs.close()


class PageOutputs:
    """Completes the requests that the callback of one response yields (see the module)."""

    __slots__ = ("state", "page_id", "links", "yielded", "is_settled", "dropped", "settled", "cross_site", "_host")

    def __init__(self, state: CrawlState, response: Response, drop_repeats: bool) -> None:
        self.state = state
        self.page_id = state.page_id_of(response)
        html = is_html(response)
        #: The page's links (None: not an HTML page), parsed once per response.
        self.links = state.links_of(cast("TextResponse", response)) if html else None  # HTML: it has a selector
        #: URLs (without fragment) yielded from the page so far, the page's own first.
        self.yielded = {self.links.url} if self.links is not None and drop_repeats else None
        self.is_settled = state.is_settled_url if drop_repeats else None
        self.dropped = self.settled = self.cross_site = 0
        self._host: str | None = None  # the page's, read for the first repeat dropped

    def complete(self, output: Any) -> Any:
        """``output`` with its link evidence, or DROPPED for a repeat (see the module)."""
        if not isinstance(output, Request):
            return output
        meta = output.meta
        if self.page_id >= 0:
            meta.setdefault(PARENT_KEY, self.page_id)
        links = self.links
        if links is None:
            return output
        url = output.url
        if "#" in url:
            url = url.split("#", 1)[0]
        yielded = self.yielded
        if yielded is not None and not output.dont_filter and output.method == "GET" and not output.body:
            if url in yielded:
                self.dropped += 1
                return self._drop(url)
            yielded.add(url)
            if self.is_settled is not None and self.is_settled(url):
                self.settled += 1
                return self._drop(url)
        link = links.find(url)
        if "link_text" not in meta:
            meta["link_text"] = link.text if link is not None else ""
        if link is not None and link.context and "link_context" not in meta:
            meta["link_context"] = link.context
        if link is not None and link.description and "link_description" not in meta:
            meta["link_description"] = link.description
        if link is not None and link.other_anchors and "link_other_anchors" not in meta:
            meta["link_other_anchors"] = list(link.other_anchors)
        if "link_language" not in meta:
            language = (link.language if link is not None else "") or links.language
            if language:
                meta["link_language"] = language
        return output

    def _drop(self, url: str) -> object:
        if self._host is None:
            self._host = host_of(cast("PageLinks", self.links).url)
        if host_of(url) != self._host:
            self.cross_site += 1
        return DROPPED

    def close(self) -> None:
        counts = ((REPEATS_STAT, self.dropped), (SETTLED_STAT, self.settled), (CROSS_SITE_STAT, self.cross_site))
        for stat, count in counts:
            if count:
                self.state.inc_stat(stat, count)


def unsettled_links(state: CrawlState, links: PageLinks) -> Iterator[PageLink]:
    """The page's followable links less those to URLs the scheduler has settled
    (``CrawlState.is_settled_url``), counted as :class:`PageOutputs` counts the requests it
    drops for them, for a spider that builds its requests from the page's links (the
    ``focused`` spider): on link-heavy pages most links lead to settled URLs, and a link
    dropped here costs no ``scrapy.Request`` and no spider middleware. A URL settled now
    stays settled, so the RelevanceMiddleware would have dropped each one (plain GET requests)."""
    is_settled = state.is_settled_url
    if is_settled is None:  # no scheduler that judges repeats by URL: every link goes on
        yield from links.followable
        return
    host = host_of(links.url)
    settled = cross_site = 0
    try:
        for link in links.followable:  # their URLs have no fragment (PageLinks.of)
            if is_settled(link.url):
                settled += 1
                cross_site += host_of(link.url) != host
            else:
                yield link
    finally:
        if settled:
            state.inc_stat(SETTLED_STAT, settled)
        if cross_site:
            state.inc_stat(CROSS_SITE_STAT, cross_site)


def fragment_blind_filter(crawler: Crawler) -> bool:
    """Whether the crawl's dupefilter takes two GET requests whose URLs differ only in
    their fragment for the same request (:func:`~adaptive_spider.crawl.canonical.judges_by_url`)."""
    settings = crawler.settings
    return judges_by_url(
        load_object(settings["DUPEFILTER_CLASS"]), load_object(settings["REQUEST_FINGERPRINTER_CLASS"])
    )
