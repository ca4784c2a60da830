"""A plain Spider that yields no items at all: it only follows every link (as a
link checker or a cache warmer does)."""

import scrapy
from scrapy.linkextractors import LinkExtractor


class FollowSpider(scrapy.Spider):
    name = "follow"

    def __init__(self, url=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [url]

    def parse(self, response):
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link, callback=self.parse)
