"""The same drop-in without the add-on: every component spelled out, for
projects that manage their component dicts by hand."""

from plainproject.settings_plain import *  # noqa: F403

SCHEDULER = "adaptive_spider.scheduler.AdaptiveScheduler"
DOWNLOADER_MIDDLEWARES = {"adaptive_spider.downloadermiddlewares.DomainProfileMiddleware": 950}
SPIDER_MIDDLEWARES = {"adaptive_spider.spidermiddlewares.RelevanceMiddleware": 800}
ITEM_PIPELINES = {}
ADAPTIVE_QUERY = "astronomy telescopes planets and galaxies"
ADAPTIVE_STRATEGY = "tres"
