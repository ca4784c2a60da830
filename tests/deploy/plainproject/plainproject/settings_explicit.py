"""The same drop-in without the add-on: every component spelled out, for
projects that manage their component dicts by hand (the list in
adaptive_spider.addon.COMPONENTS)."""

from plainproject.settings_plain import *  # noqa: F403

SCHEDULER = "adaptive_spider.crawl.scheduler.AdaptiveScheduler"
DOWNLOADER_MIDDLEWARES = {
    "adaptive_spider.crawl.downloadermiddlewares.DomainProfileMiddleware": 950,
    "adaptive_spider.crawl.downloadermiddlewares.ModelScoreMiddleware": 10,
}
SPIDER_MIDDLEWARES = {
    "adaptive_spider.crawl.spidermiddlewares.RelevanceMiddleware": 800,
    "adaptive_spider.crawl.canonical.CanonicalUrlMiddleware": 760,
    "adaptive_spider.crawl.traps.TrapGuardMiddleware": 750,
}
ITEM_PIPELINES = {
    "adaptive_spider.crawl.duplicates.DuplicateContentPipeline": 100,
    "adaptive_spider.crawl.pipelines.SufficiencyPipeline": 900,
}
EXTENSIONS = {
    "adaptive_spider.crawl.crawldelay.RobotsCrawlDelay": 0,
    "adaptive_spider.crawl.report.CrawlReport": 0,
}
ADAPTIVE_QUERY = "astronomy telescopes planets and galaxies"
ADAPTIVE_STRATEGY = "tres"
# Budget only, as the reference crawl it is compared with (the self-stop has its own tests).
ADAPTIVE_SELF_STOP = False
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False
