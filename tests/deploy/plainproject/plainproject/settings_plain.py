"""The project's settings before the focused crawl was added."""

BOT_NAME = "plainproject"
SPIDER_MODULES = ["plainproject.spiders"]
NEWSPIDER_MODULE = "plainproject.spiders"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False
FEED_EXPORT_ENCODING = "utf-8"
