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

import logging

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.misc import load_object

from adaptive_spider.crawl.engine_internals import close_refused_tunnels
from adaptive_spider.settings.config import AdaptiveConfig, default_values, warn_unknown_settings

SCHEDULER = "adaptive_spider.crawl.scheduler.AdaptiveScheduler"

logger = logging.getLogger(__name__)

#: Every component of a focused crawl: (component dict setting, class path, order).
COMPONENTS = (
    # Sees each raw download outcome, before Scrapy's retry (550) and redirect (600).
    ("DOWNLOADER_MIDDLEWARES", "adaptive_spider.crawl.downloadermiddlewares.DomainProfileMiddleware", 950),
    # Starts a worker-process model's page score; last to see a response, it scores what the spider gets.
    ("DOWNLOADER_MIDDLEWARES", "adaptive_spider.crawl.downloadermiddlewares.ModelScoreMiddleware", 10),
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
        close_refused_tunnels()  # a proxy that refuses https:// must not cost a socket each time
        for name, value in default_values().items():
            settings.set(name, value, "addon")
        settings.set("SCHEDULER", SCHEDULER, "addon")
        warn_if_scheduler_overridden(settings)
        # An HTTP port that runs code and a telnet console have no place in an
        # unattended crawler; a project can still turn them on explicitly.
        settings.set("REMOTE_CONTROL_ENABLED", False, "addon")
        settings.set("TELNETCONSOLE_ENABLED", False, "addon")
        for setting, path, order in COMPONENTS:
            settings.setdefault_in_component_priority_dict(setting, load_object(path), order)
        AdaptiveConfig.from_settings(settings)


def warn_if_scheduler_overridden(settings: BaseSettings) -> None:
    """A project's own ``SCHEDULER`` (every scrapy-redis project sets one) wins over the
    add-on's: the crawl then runs but is not focused. Say so at start, with the fix."""
    if settings.getpriority("SCHEDULER") in (None, SETTINGS_PRIORITIES["addon"]):
        return
    configured = settings["SCHEDULER"]
    scheduler = load_object(configured) if isinstance(configured, str) else configured
    # Not issubclass: Scrapy's BaseScheduler metaclass calls any class with a scheduler's methods a subclass.
    if isinstance(scheduler, type) and load_object(SCHEDULER) in scheduler.__mro__:
        return  # ours, or built on ours (the distributed scheduler)
    name = configured if isinstance(configured, str) else f"{scheduler.__module__}.{scheduler.__qualname__}"
    fix = (
        "For scrapy-redis, list adaptive_spider.profiles.DistributedAddon in ADDONS instead: it puts "
        "adaptive_spider.distributed.scheduler.DistributedScheduler (a focused scheduler on the same Redis) "
        "in its place."
        if name.startswith("scrapy_redis.")
        else "Remove SCHEDULER from the project's settings (or -s) to let the add-on install its own."
    )
    logger.warning(
        "SCHEDULER is %s, set by the project: the add-on's %s is not used, so this crawl is not focused. %s",
        name,
        SCHEDULER,
        fix,
    )
