"""A focused, self-stopping crawl from Python, with Scrapy's CrawlerProcess (README: Install).

Needs only ``pip install adaptive-spider`` (no Scrapy project, no scrapy.cfg). Serve the
built-in demo site in another terminal, then crawl it:

    python -m adaptive_spider.demo.site --port 8000
    python docs/examples/crawl_from_python.py http://127.0.0.1:8000/ "astronomy telescopes planets and galaxies"
"""

import sys

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess


class PagesSpider(scrapy.Spider):
    """Any spider will do: this one yields each page's URL and title and follows every link.
    The add-on decides the order of the crawl and when it has enough."""

    name = "pages"

    def __init__(self, url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a", callback=self.parse)


def crawl(url: str, query: str) -> tuple[str, list[dict]]:
    """Crawl from *url* toward *query*; returns the finish reason and the items."""
    process = CrawlerProcess(
        {
            # The default profile: the focused crawl (AdaptiveAddon) with safe, polite limits.
            "ADDONS": {"adaptive_spider.profiles.DefaultProfileAddon": 0},
            "ADAPTIVE_QUERY": query,
            "CLOSESPIDER_PAGECOUNT": 400,  # a budget; the crawl usually stops by itself before it
            "LOG_LEVEL": "WARNING",
        }
    )
    crawler = process.create_crawler(PagesSpider)
    items: list[dict] = []
    crawler.signals.connect(lambda item, **_: items.append(item), signal=signals.item_scraped, weak=False)
    process.crawl(crawler, url=url)
    process.start()  # blocks until the crawl closes
    return crawler.stats.get_value("finish_reason"), items


if __name__ == "__main__":
    reason, items = crawl(sys.argv[1], sys.argv[2])
    print(f"finish reason: {reason}; {len(items)} pages")
    for item in items[-5:]:  # the last pages fetched: deep in the relevant region
        print(f"  {item['url']}  {item['title']}")
