"""The item the ``focused`` spider yields for every HTML page it fetches."""

import scrapy


class PageItem(scrapy.Item):
    """A fetched page: where it is, what it says, and how relevant it was."""

    url = scrapy.Field()
    title = scrapy.Field()
    headings = scrapy.Field()
    text = scrapy.Field()
    depth = scrapy.Field()
    status = scrapy.Field()
    relevance = scrapy.Field()
    sha1 = scrapy.Field()
    fetched_at = scrapy.Field()
    referer = scrapy.Field()
