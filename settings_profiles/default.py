"""Default profile: a focused, self-stopping crawl with safe, moderate politeness.

The crawl settings are the ``DefaultProfileAddon``'s (``adaptive_spider/profiles.py``),
so any project gets the same with one line in its own ``ADDONS``. Only the project's
identity is here: a value the add-on sets must not be repeated here, where it would
outrank the add-on's (and a change to the add-on would silently not apply).
"""

BOT_NAME = "adaptive_spider"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
COMMANDS_MODULE = "adaptive_spider.commands"
FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"

# Safety: Scrapy 2.19 opens an HTTP port that runs code (RemoteControl) and a
# telnet console by default. Neither belongs in an unattended crawler. (The
# add-on turns them off too; said here as well, so that no profile depends on it.)
REMOTE_CONTROL_ENABLED = False
TELNETCONSOLE_ENABLED = False

# The focused crawl (scheduler, middlewares, pipelines) and the profile's crawl settings.
ADDONS = {"adaptive_spider.profiles.DefaultProfileAddon": 0}
