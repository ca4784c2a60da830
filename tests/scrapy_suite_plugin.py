"""pytest plugin for running Scrapy's own scheduler tests against AdaptiveScheduler.

Loaded with ``-p scrapy_suite_plugin`` inside an unpacked Scrapy sdist: every
``scrapy.core.scheduler.Scheduler`` the tests build becomes an
AdaptiveScheduler, with the ``bfs`` strategy as the default.
"""

import scrapy.core.scheduler
import scrapy.settings.default_settings

from adaptive_spider.crawl.scheduler import AdaptiveScheduler

scrapy.settings.default_settings.ADAPTIVE_STRATEGY = "bfs"
scrapy.core.scheduler.Scheduler = AdaptiveScheduler
