"""Scrapy settings profiles of the adaptive_spider project.

Each module is a complete Scrapy settings module, named in ``scrapy.cfg``;
choose one with ``SCRAPY_PROJECT=<name>`` (``default`` when unset). Each is a
thin user of a profile add-on of ``adaptive_spider.profiles``: the project's
identity here, the crawl settings in the add-on, which any other project (or a
Scrapyd deployment) lists in its own ``ADDONS``.
"""
