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

# --- Robustness: limits that keep traps and huge or hanging responses in bounds ---
# (Trap guards, canonical URLs and the crawl report come with the add-on; see
# docs/robustness.md.) Redirect chains end after 5 hops (loops end sooner: the
# dupefilter sees the repeated URL); bodies above 16 MiB are cancelled; a link
# chain deeper than 50 hops or a URL longer than 2048 characters is dropped.
REDIRECT_MAX_TIMES = 5
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
DEPTH_LIMIT = 50
URLLENGTH_LIMIT = 2048
