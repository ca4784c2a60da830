"""The ``template`` spider: crawl with a template file instead of writing a spider.

    scrapy crawl template -a template=products.yaml -a start_urls=https://shop.example/ -O products.jsonl

It yields the template's documents from every page and follows the template's
links (inside its pagination scope, minus excluded URLs), with the anchor text
in ``meta["link_text"]`` so a focused scheduler can rank them. The template's
limits become CLOSESPIDER_*/DEPTH_LIMIT settings; ``-s`` options still win.
"""

from __future__ import annotations

from urllib.parse import urlparse

import scrapy

from adaptive_spider.extract import Template


def split_arg(value: str | None) -> list[str]:
    """A comma-separated spider argument as a list of non-empty items."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


class TemplateSpider(scrapy.Spider):
    """Yields the documents a template describes, following the template's links.

    Arguments: ``template`` (a YAML or JSON file, required), ``start_urls``
    (comma-separated, required), optional ``query`` (kept on the spider for
    focused components) and ``allowed_domains`` (comma-separated; by default
    the start URLs' hosts).
    """

    name = "template"

    def __init__(self, template=None, start_urls=None, query=None, allowed_domains=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.template, self.start_urls = self._checked(template, start_urls)
        self.query = query
        self.allowed_domains = split_arg(allowed_domains) or sorted({urlparse(url).hostname for url in self.start_urls})

    @classmethod
    def check_arguments(cls, settings, template=None, start_urls=None, **kwargs) -> None:
        """Raise ValueError (or TemplateError) naming the first bad argument
        (the ``crawl`` command calls it before the crawl starts)."""
        cls._checked(template, start_urls)

    @staticmethod
    def _checked(template, start_urls) -> tuple[Template, list[str]]:
        if not template:
            raise ValueError("template spider: argument 'template' is required (-a template=FILE)")
        loaded = Template.from_file(template)
        urls = split_arg(start_urls)
        if not urls:
            raise ValueError("template spider: argument 'start_urls' is required (-a start_urls=URL[,URL])")
        for url in urls:
            if urlparse(url).scheme not in ("http", "https"):
                raise ValueError(f"template spider: argument 'start_urls': {url!r} is not an http(s) URL")
        return loaded, urls

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.template.update_settings(crawler.settings)
        return spider

    async def start(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, meta=self.template.request_meta())

    def parse(self, response):
        yield from self.template.extract(response)
        for link in self.template.links(response):
            yield response.follow(
                link,
                callback=self.parse,
                meta={**self.template.request_meta(), "link_text": link.text},
            )
