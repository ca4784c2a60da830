"""Polite profile: few parallel requests per site, AutoThrottle, a fixed delay (``PoliteAddon``)."""

from settings_profiles.default import *  # noqa: F403

ADDONS = {"adaptive_spider.profiles.PoliteAddon": 0}
