"""Fast profile: high concurrency for crawls of sites you own or mirror locally (``FastAddon``)."""

from settings_profiles.default import *  # noqa: F403

ADDONS = {"adaptive_spider.profiles.FastAddon": 0}
