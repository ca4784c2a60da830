"""Fast profile: high concurrency for crawls of sites you own or mirror locally."""

from settings_profiles.default import *  # noqa: F403

CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 16
DOWNLOAD_DELAY = 0
AUTOTHROTTLE_ENABLED = False
LOG_LEVEL = "INFO"
