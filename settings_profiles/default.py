"""Default profile: a focused, self-stopping crawl with safe, moderate politeness."""

BOT_NAME = "adaptive_spider"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
COMMANDS_MODULE = "adaptive_spider.commands"

# Safety: Scrapy 2.19 opens an HTTP port that runs code (RemoteControl) and a
# telnet console by default. Neither belongs in an unattended crawler.
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

ROBOTSTXT_OBEY = True

# The focused crawl: scheduler, middlewares and pipelines, configured in one place.
ADDONS = {"adaptive_spider.addon.AdaptiveAddon": 0}

CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_TIMEOUT = 30
RETRY_TIMES = 1
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
