"""The ``focused`` spider: crawl toward a query and keep what was found.

    scrapy crawl focused -a query="asyncio event loop" -a start_urls=https://example.org/ -O pages.jsonl

Arguments: ``query`` (required), ``start_urls`` (comma-separated), ``keywords``
(comma-separated, weigh more than query words) and ``allowed_domains``
(comma-separated). The spider yields a :class:`~adaptive_spider.items.PageItem`
for every HTML page and follows every link with its anchor text in
``request.meta["link_text"]``; the order of the crawl is the scheduler's
decision, not the spider's.
"""

from __future__ import annotations

from datetime import datetime, timezone

import scrapy

from adaptive_spider.config import ConfigError, parse_list
from adaptive_spider.items import PageItem
from adaptive_spider.links import extract_links
from adaptive_spider.pagetext import is_html
from adaptive_spider.state import CrawlState


class FocusedSpider(scrapy.Spider):
    """Fetches a query's pages first and yields one item per HTML page."""

    name = "focused"

    def __init__(self, query=None, start_urls=None, keywords=None, allowed_domains=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.query = (query or "").strip()
        self.keywords = parse_list(keywords, "keywords")
        self.start_urls = parse_list(start_urls, "start_urls")
        domains = parse_list(allowed_domains, "allowed_domains")
        if domains:
            self.allowed_domains = domains
        for url in self.start_urls:
            if not url.startswith(("http://", "https://", "file://", "data:")):
                raise ConfigError(f"start_urls: not an absolute http(s) URL: {url!r}")

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        if not spider.query:
            spider.query = str(settings.get("ADAPTIVE_QUERY") or "").strip()
        if not spider.query:
            raise ConfigError('query: missing; run with -a query="what to crawl for"')
        if not spider.start_urls:
            raise ConfigError("start_urls: missing; run with -a start_urls=URL[,URL...]")
        if not settings.frozen:
            settings.set("ADAPTIVE_QUERY", spider.query, "spider")
            if spider.keywords:
                settings.set("ADAPTIVE_KEYWORDS", spider.keywords, "spider")
        return spider

    async def start(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response):
        if not is_html(response):
            return
        analysis = CrawlState.of(self.crawler).analyze(response)
        referer = response.request.headers.get("Referer") if response.request is not None else None
        yield PageItem(
            url=response.url,
            title=analysis.fields.title,
            headings=analysis.headings,
            text=analysis.fields.body,
            depth=response.meta.get("depth", 0),
            status=response.status,
            relevance=round(analysis.relevance, 6),
            sha1=analysis.sha1,
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            referer=referer.decode("latin-1") if referer else None,
        )
        for url, text in extract_links(response):
            yield scrapy.Request(url, callback=self.parse, meta={"link_text": text})
