"""The ``focused`` spider: crawl toward a query and keep what was found.

    scrapy crawl focused -a query="asyncio event loop" -a start_urls=https://example.org/ -O pages.jsonl

Arguments: ``query`` (required; or the ADAPTIVE_QUERY setting), ``start_urls``
(comma-separated), ``start_urls_key`` (a Redis list to pop more start URLs from while
the crawl runs, as scrapy-redis' RedisSpider; or ADAPTIVE_REDIS_START_URLS_KEY; then
``start_urls`` may be left out), ``keywords`` (comma-separated, weigh more than query words),
``allowed_domains`` (comma-separated) and ``template`` (an extraction template,
see docs/extraction.md). The spider yields a
:class:`~adaptive_spider.items.PageItem` for every HTML page and follows every
link of the page (with a template: yields the template's documents too and
follows only its links); the order of the crawl is the scheduler's decision, not
the spider's. A link's evidence (anchor text, context, the page it was found on)
is the RelevanceMiddleware's, as for any spider: it reads the same parse of the
page's links (``CrawlState.links_of``) that the spider follows them from. Links to
URLs the scheduler has already settled, which the middleware would drop, are skipped
before their requests are built (``unsettled_links``).
"""

from __future__ import annotations

from datetime import datetime, timezone

import scrapy

from adaptive_spider.crawl.spidermiddlewares import unsettled_links
from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.extract import Template
from adaptive_spider.items import PageItem
from adaptive_spider.relevance.pagetext import is_html
from adaptive_spider.settings.config import ConfigError, parse_list
from adaptive_spider.sufficiency.pages import RELEVANCE_DIGITS

URL_SCHEMES = ("http://", "https://", "file://", "data:")


class FocusedSpider(scrapy.Spider):
    """Fetches a query's pages first and yields one item per HTML page."""

    name = "focused"

    def __init__(
        self,
        query=None,
        start_urls=None,
        keywords=None,
        allowed_domains=None,
        template=None,
        start_urls_key=None,
        *args,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.query = (query or "").strip()
        self.keywords = parse_list(keywords, "keywords")
        self.start_urls_key = (start_urls_key or "").strip()
        # Without a start URL list in Redis, start_urls are required (checked again in from_crawler,
        # which knows the ADAPTIVE_REDIS_START_URLS_KEY setting).
        self.start_urls = check_start_urls(start_urls, required=False)
        domains = parse_list(allowed_domains, "allowed_domains")
        if domains:
            self.allowed_domains = domains
        self.template = Template.from_file(template) if template else None

    @classmethod
    def check_arguments(
        cls, settings, query=None, start_urls=None, template=None, start_urls_key=None, **kwargs
    ) -> None:
        """Raise ConfigError (or TemplateError) naming the first bad argument."""
        if not (query or "").strip() and not str(settings.get("ADAPTIVE_QUERY") or "").strip():
            raise ConfigError('query: missing or empty; run with -a query="what to crawl for"')
        check_start_urls(start_urls, required=not redis_start_key(settings, start_urls_key))
        if template:
            Template.from_file(template)

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.query = spider.query or str(settings.get("ADAPTIVE_QUERY") or "").strip()
        if not spider.query:
            raise ConfigError('query: missing or empty; run with -a query="what to crawl for"')
        spider.start_urls_key = redis_start_key(settings, spider.start_urls_key)
        if not spider.start_urls and not spider.start_urls_key:
            check_start_urls(None)
        if not settings.frozen:
            settings.set("ADAPTIVE_QUERY", spider.query, "spider")
            if spider.keywords:
                settings.set("ADAPTIVE_KEYWORDS", spider.keywords, "spider")
            if spider.template is not None:
                spider.template.update_settings(settings)
        return spider

    async def start(self):
        meta = self.template.request_meta() if self.template else {}
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, dont_filter=True, meta=dict(meta))
        if self.start_urls_key:
            async for url in self.redis_start_urls():
                yield scrapy.Request(url, callback=self.parse, dont_filter=True, meta=dict(meta))

    def redis_start_urls(self):
        """The URLs pushed to the Redis list ``start_urls_key`` (needs the distributed extra)."""
        from scrapy_redis.connection import get_redis_from_settings

        from adaptive_spider.distributed.starturls import redis_start_urls, start_urls_key

        settings = self.crawler.settings
        key = start_urls_key(self.start_urls_key, self.crawler)
        self.logger.info("Taking start URLs from the Redis list %s", key)
        return redis_start_urls(
            get_redis_from_settings(settings),
            key,
            self.crawler,
            poll_interval=settings.getfloat("ADAPTIVE_DISTRIBUTED_POLL_INTERVAL", 0.2),
            wait=settings.getfloat("ADAPTIVE_REDIS_START_URLS_WAIT", 5.0),
        )

    def parse(self, response):
        if not is_html(response):
            return
        yield self.page_item(response)
        if self.template is not None:
            yield from self.template.extract(response)
            meta = self.template.request_meta()
            for link in self.template.links(response):
                yield response.follow(link, callback=self.parse, meta={**meta, "link_text": link.text})
            return
        state = CrawlState.of(self.crawler)
        for link in unsettled_links(state, state.links_of(response)):
            yield scrapy.Request(link.url, callback=self.parse)

    def page_item(self, response) -> PageItem:
        analysis = CrawlState.of(self.crawler).analyze(response)
        referer = response.request.headers.get("Referer") if response.request is not None else None
        return PageItem(
            url=response.url,
            title=analysis.fields.title,
            headings=analysis.headings,
            text=analysis.fields.body,
            depth=response.meta.get("depth", 0),
            status=response.status,
            relevance=round(analysis.relevance, RELEVANCE_DIGITS),
            sha1=analysis.sha1,
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            referer=referer.decode("latin-1") if referer else None,
        )


def redis_start_key(settings, argument=None) -> str:
    """The start URL list's name from ``-a start_urls_key`` or ADAPTIVE_REDIS_START_URLS_KEY ("" for none)."""
    return (argument or "").strip() or str(settings.get("ADAPTIVE_REDIS_START_URLS_KEY") or "").strip()


def check_start_urls(raw, required=True) -> list[str]:
    urls = parse_list(raw, "start_urls")
    if not urls and required:
        raise ConfigError("start_urls: missing; run with -a start_urls=URL[,URL...] (or -a start_urls_key=REDIS_LIST)")
    for url in urls:
        if not url.startswith(URL_SCHEMES) or url.rstrip("/") in ("http:/", "https:/"):
            raise ConfigError(f"start_urls: not an absolute http(s) URL: {url!r}")
    return urls
