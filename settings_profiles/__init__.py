"""Scrapy settings profiles of the adaptive_spider project.

Each module is a complete Scrapy settings module, named in ``scrapy.cfg``;
choose one with ``SCRAPY_PROJECT=<name>`` (``default`` when unset).
"""
