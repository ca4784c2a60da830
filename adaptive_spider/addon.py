"""AdaptiveAddon: one line that makes any Scrapy project's crawl focused.

``ADDONS = {"adaptive_spider.addon.AdaptiveAddon": 0}`` installs the
AdaptiveScheduler, the DomainProfileMiddleware, the RelevanceMiddleware and the
focused crawl's pipelines, registers every ``ADAPTIVE_*`` default, turns off
Scrapy's RemoteControl extension and telnet console unless the project turns
them on explicitly, and validates the configuration before the crawl starts.
Everything is set with the ``addon`` priority, so the project's own settings and
``-s`` options still win.
"""

from __future__ import annotations

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from adaptive_spider.settings.config import AdaptiveConfig, default_values, warn_unknown_settings

SCHEDULER = "adaptive_spider.crawl.scheduler.AdaptiveScheduler"

#: Every component of a focused crawl: (component dict setting, class path, order).
COMPONENTS = (
    # Sees each raw download outcome, before Scrapy's retry (550) and redirect (600).
    ("DOWNLOADER_MIDDLEWARES", "adaptive_spider.crawl.downloadermiddlewares.DomainProfileMiddleware", 950),
    # Scores pages before the spider runs; annotates links after DepthMiddleware (900) set their depth.
    ("SPIDER_MIDDLEWARES", "adaptive_spider.crawl.spidermiddlewares.RelevanceMiddleware", 800),
    # Canonical URLs and trap guards on the spider's links, below the relevance middleware
    # (which reads anchors by the page's own URLs).
    ("SPIDER_MIDDLEWARES", "adaptive_spider.crawl.canonical.CanonicalUrlMiddleware", 760),
    ("SPIDER_MIDDLEWARES", "adaptive_spider.crawl.traps.TrapGuardMiddleware", 750),
    # Duplicate content first; the self-stop last, after any project pipeline.
    ("ITEM_PIPELINES", "adaptive_spider.crawl.duplicates.DuplicateContentPipeline", 100),
    ("ITEM_PIPELINES", "adaptive_spider.crawl.pipelines.SufficiencyPipeline", 900),
    ("EXTENSIONS", "adaptive_spider.crawl.crawldelay.RobotsCrawlDelay", 0),
    ("EXTENSIONS", "adaptive_spider.crawl.report.CrawlReport", 0),
)


class AdaptiveAddon:
    """Scrapy add-on that configures a focused, self-stopping crawl."""

    def update_settings(self, settings: BaseSettings) -> None:
        warn_unknown_settings(settings)  # once per crawl: Scrapy ignores a misspelled name silently
        for name, value in default_values().items():
            settings.set(name, value, "addon")
        settings.set("SCHEDULER", SCHEDULER, "addon")
        # An HTTP port that runs code and a telnet console have no place in an
        # unattended crawler; a project can still turn them on explicitly.
        settings.set("REMOTE_CONTROL_ENABLED", False, "addon")
        settings.set("TELNETCONSOLE_ENABLED", False, "addon")
        for setting, path, order in COMPONENTS:
            settings.setdefault_in_component_priority_dict(setting, load_object(path), order)
        AdaptiveConfig.from_settings(settings)
