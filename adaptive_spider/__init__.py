"""adaptive_spider: focused, self-stopping Scrapy crawls and search over what was crawled."""

__version__ = "0.1.0"
