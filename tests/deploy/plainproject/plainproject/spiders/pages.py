"""A CrawlSpider with rules, as found in many projects: follow every link, keep
each page's URL and title."""

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class PagesSpider(CrawlSpider):
    name = "pages"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, url=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [url]

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
