"""The project's settings with the focused crawl dropped in: the add-on, and the
query and its options as ADAPTIVE_* settings. Nothing else changes."""

from plainproject.settings_plain import *  # noqa: F403

ADDONS = {"adaptive_spider.addon.AdaptiveAddon": 0}
ADAPTIVE_QUERY = "astronomy telescopes planets and galaxies"
ADAPTIVE_STRATEGY = "tres"
# Budget only, as the reference crawl it is compared with (the self-stop has its own tests).
ADAPTIVE_SELF_STOP = False
