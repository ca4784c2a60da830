"""RelevanceMiddleware: every page's relevance, and the context of every link.

Before a response reaches the spider, the middleware scores the page against
the query (:meth:`CrawlState.analyze <adaptive_spider.crawl.state.CrawlState.analyze>`);
that score is the reward of the request that fetched it. On the way out, it
gives every request the spider yields the context the frontier needs: the page
it was found on (``request.meta["adaptive_parent"]``) and, when the spider did
not set it, the anchor text of the link (``request.meta["link_text"]``, the key
Scrapy's CrawlSpider uses). So any spider — not only ``focused`` — gets a
focused crawl.

Enable it below Scrapy's DepthMiddleware (the add-on uses 800) so the depth of
outgoing requests is set before it runs, and after HttpErrorMiddleware so that
only successful responses are scored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from scrapy import Request

from adaptive_spider.crawl.state import PARENT_KEY, CrawlState
from adaptive_spider.relevance.pagetext import is_html

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response, TextResponse


class RelevanceMiddleware:
    """Spider middleware that scores pages (rewards) and annotates outgoing links."""

    def __init__(self, state: CrawlState) -> None:
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RelevanceMiddleware:
        return cls(CrawlState.of(crawler))

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        if is_html(response):
            self.state.analyze(response)
        else:
            self.state.reward_nothing(response.request)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        annotate = self._annotator(response)
        for output in result:
            yield annotate(output)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        annotate = self._annotator(response)
        async for output in result:
            yield annotate(output)

    def _annotator(self, response: Response) -> Callable[[Any], Any]:
        page_id = self.state.page_id_of(response)
        anchors: dict[str, str] | None = None

        def annotate(output: Any) -> Any:
            nonlocal anchors
            if not isinstance(output, Request):
                return output
            if page_id >= 0:
                output.meta.setdefault(PARENT_KEY, page_id)
            if "link_text" not in output.meta and is_html(response):
                if anchors is None:
                    anchors = anchor_texts(cast("TextResponse", response))  # is_html: it has a selector
                output.meta["link_text"] = anchors.get(output.url, "")
            return output

        return annotate


def anchor_texts(response: TextResponse) -> dict[str, str]:
    """Absolute URL -> anchor text of the page's links (first anchor wins)."""
    texts: dict[str, str] = {}
    for element in response.selector.root.iter("a"):
        href = element.get("href")
        if not href:
            continue
        url = response.urljoin(href.strip()).split("#", 1)[0]
        if url not in texts:
            texts[url] = " ".join(" ".join(element.itertext()).split())
    return texts
