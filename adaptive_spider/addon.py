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

from adaptive_spider.config import AdaptiveConfig, default_values
from adaptive_spider.downloadermiddlewares import DomainProfileMiddleware
from adaptive_spider.pipelines import SufficiencyPipeline
from adaptive_spider.spidermiddlewares import RelevanceMiddleware

from adaptive_spider.canonical import CanonicalUrlMiddleware  # robustness components
from adaptive_spider.crawldelay import RobotsCrawlDelay
from adaptive_spider.duplicates import DuplicateContentPipeline
from adaptive_spider.report import CrawlReport
from adaptive_spider.traps import TrapGuardMiddleware

SCHEDULER = "adaptive_spider.scheduler.AdaptiveScheduler"


class AdaptiveAddon:
    """Scrapy add-on that configures a focused, self-stopping crawl."""

    def update_settings(self, settings) -> None:
        for name, value in default_values().items():
            settings.set(name, value, "addon")
        settings.set("SCHEDULER", SCHEDULER, "addon")
        # An HTTP port that runs code and a telnet console have no place in an
        # unattended crawler; a project can still turn them on explicitly.
        settings.set("REMOTE_CONTROL_ENABLED", False, "addon")
        settings.set("TELNETCONSOLE_ENABLED", False, "addon")
        settings.setdefault_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", DomainProfileMiddleware, 950)
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", RelevanceMiddleware, 800)
        self._update_robustness_settings(settings)
        # Sufficiency: knowledge-base statistics, progress and the self-stop (after other pipelines).
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", SufficiencyPipeline, 900)
        AdaptiveConfig.from_settings(settings)

    @staticmethod
    def _update_robustness_settings(settings) -> None:
        # Robustness: canonical URLs and trap guards on the spider's links (below the
        # relevance middleware, which reads anchors by the page's own URLs), duplicate
        # content, robots.txt Crawl-delay, the crawl report.
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", CanonicalUrlMiddleware, 760)
        settings.setdefault_in_component_priority_dict("SPIDER_MIDDLEWARES", TrapGuardMiddleware, 750)
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", DuplicateContentPipeline, 100)
        settings.setdefault_in_component_priority_dict("EXTENSIONS", RobotsCrawlDelay, 0)
        settings.setdefault_in_component_priority_dict("EXTENSIONS", CrawlReport, 0)
