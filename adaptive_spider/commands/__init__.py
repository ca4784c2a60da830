"""Scrapy commands of adaptive_spider.

- ``scrapy crawl``: Scrapy's crawl, checking spider arguments and settings first
  (through the project's ``COMMANDS_MODULE``);
- ``scrapy index``: add documents from a feed file (JSONL, JSON, CSV) to an index;
- ``scrapy search``: query an index, or write a TREC run for a file of queries;
- ``scrapy searchserver``: serve the result page on 127.0.0.1.

The search commands are also registered under the ``scrapy.commands``
entry-point group (pyproject.toml), so they work in any Scrapy project.
"""
