"""Settings profiles as Scrapy add-ons: one line in any project's ``ADDONS``.

The ``default``, ``polite``, ``fast``, ``javascript`` and ``distributed`` profiles
used to exist only as this project's settings modules (``scrapy.cfg``), so another
project (or a Scrapyd deployment of one) could only copy their values. Here each
profile is an add-on: the :class:`~adaptive_spider.addon.AdaptiveAddon` (the focused
crawl) plus the profile's crawl settings, so a project writes one line::

    ADDONS = {"adaptive_spider.profiles.PoliteAddon": 0}

Every value is set with the ``addon`` priority: the project's ``settings.py``, a
spider's ``custom_settings`` and ``-s`` still win. The modules of
``settings_profiles/`` are thin users of these add-ons.

A scrapy-redis project switches to the shared focused crawl with
``DistributedAddon`` alone: it replaces scrapy-redis' scheduler by the
:class:`~adaptive_spider.distributed.scheduler.DistributedScheduler` (nothing here
imports scrapy-redis or redis, an optional extra).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from adaptive_spider.addon import AdaptiveAddon
from adaptive_spider.extract.browser import PLAYWRIGHT_HANDLER
from adaptive_spider.extras import require_extra

logger = logging.getLogger(__name__)

DISTRIBUTED_SCHEDULER = "adaptive_spider.distributed.scheduler.DistributedScheduler"
SCRAPY_REDIS_SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
#: Settings, and ``REDIS_PARAMS`` keys, by which a project names its Redis server to scrapy-redis.
REDIS_SERVER_SETTINGS = ("REDIS_URL", "REDIS_HOST", "REDIS_PORT", "REDIS_DB")
REDIS_SERVER_PARAMS = ("url", "host", "port", "db", "unix_socket_path")

#: (component dict setting, class path, order), as in ``adaptive_spider.addon.COMPONENTS``.
Component = tuple[str, str, int]


class DefaultProfileAddon(AdaptiveAddon):
    """The ``default`` profile: a focused, self-stopping crawl with safe, moderate politeness.

    A subclass declares only what its profile changes, in ``SETTINGS`` and
    ``COMPONENTS``; the values of its bases apply under them.
    """

    SETTINGS: ClassVar[Mapping[str, Any]] = {
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DOWNLOAD_TIMEOUT": 30,
        "RETRY_TIMES": 1,
        # Limits that keep traps and huge or hanging responses in bounds (docs/robustness.md):
        # redirect chains end after 5 hops (loops end sooner: the dupefilter sees the repeated
        # URL); bodies above 16 MiB are cancelled; a link chain deeper than 50 hops or a URL
        # longer than 2048 characters is dropped.
        "REDIRECT_MAX_TIMES": 5,
        "DOWNLOAD_MAXSIZE": 16 * 1024 * 1024,
        "DOWNLOAD_WARNSIZE": 4 * 1024 * 1024,
        "DEPTH_LIMIT": 50,
        "URLLENGTH_LIMIT": 2048,
    }
    COMPONENTS: ClassVar[tuple[Component, ...]] = ()

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Scrapy calls this before any add-on's ``update_settings``: a project that also lists
        the AdaptiveAddon gets it once, here (run twice, it would repeat its warnings and, run
        after ``DistributedAddon``, put its own scheduler back)."""
        addons = settings.getdict("ADDONS")
        listed = [key for key, order in addons.items() if order is not None and load_object(key) is AdaptiveAddon]
        if listed:
            for key in listed:
                addons[key] = None  # Scrapy's way to disable a component
            settings.set("ADDONS", addons, settings.getpriority("ADDONS") or 0)

    @classmethod
    def profile_settings(cls) -> dict[str, Any]:
        """This profile's crawl settings, its bases' first (a subclass overrides them)."""
        merged: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            merged.update(vars(klass).get("SETTINGS", {}))
        return merged

    @classmethod
    def profile_components(cls) -> list[Component]:
        return [component for klass in reversed(cls.__mro__) for component in vars(klass).get("COMPONENTS", ())]

    @classmethod
    def update_profile_settings(cls, settings: BaseSettings) -> None:
        """Apply the profile's crawl settings alone, without the focused crawl's components
        (a plain Scrapy crawl with the profile's limits: baselines, extraction tests)."""
        for name, value in cls.profile_settings().items():
            current = settings.get(name)
            if isinstance(value, Mapping) and isinstance(current, BaseSettings):
                # A Scrapy dict setting (DOWNLOAD_HANDLERS): entry by entry, so the
                # project's own entries stay and win.
                for key, entry in value.items():
                    current.set(key, entry, "addon")
            else:
                settings.set(name, value, "addon")
        for setting, path, order in cls.profile_components():
            settings.setdefault_in_component_priority_dict(setting, load_object(path), order)

    def update_settings(self, settings: BaseSettings) -> None:
        super().update_settings(settings)
        self.update_profile_settings(settings)


class PoliteAddon(DefaultProfileAddon):
    """The ``polite`` profile: few parallel requests per site, AutoThrottle, a fixed delay."""

    SETTINGS: ClassVar[Mapping[str, Any]] = {
        "CONCURRENT_REQUESTS": 8,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 1.0,
        "RANDOMIZE_DOWNLOAD_DELAY": True,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": 1.0,
        "AUTOTHROTTLE_MAX_DELAY": 30.0,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "HTTPCACHE_ENABLED": False,
    }


class FastAddon(DefaultProfileAddon):
    """The ``fast`` profile: high concurrency for crawls of sites you own or mirror locally."""

    SETTINGS: ClassVar[Mapping[str, Any]] = {
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
    }


class JavascriptAddon(DefaultProfileAddon):
    """The ``javascript`` profile: every page rendered in headless chromium.

    Downloads go through scrapy-playwright on Debian's chromium (/usr/bin/chromium;
    never ``playwright install``), so content written by JavaScript is there to
    extract; a template's browser actions run before extraction.
    """

    SETTINGS: ClassVar[Mapping[str, Any]] = {
        "DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT_HANDLER, "https": PLAYWRIGHT_HANDLER},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {
            "executable_path": "/usr/bin/chromium",
            "headless": True,
            "args": [
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        },
        # A browser page costs far more than an HTTP request; keep a few at a time.
        "CONCURRENT_REQUESTS": 4,
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 4,
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 30_000,
        # scrapy-playwright needs the asyncio reactor (Scrapy's default since 2.13).
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    }
    # Pages whose requests do not ask for the browser themselves get it anyway.
    COMPONENTS: ClassVar[tuple[Component, ...]] = (
        ("DOWNLOADER_MIDDLEWARES", "adaptive_spider.extract.browser.BrowserRenderingMiddleware", 50),
    )

    def update_settings(self, settings: BaseSettings) -> None:
        # Without it Scrapy would only log that the http handler failed to load, and every request fail.
        require_extra("javascript", "the javascript profile (JavascriptAddon)")
        super().update_settings(settings)


class DistributedAddon(DefaultProfileAddon):
    """The ``distributed`` profile: this process is one worker of a crawl shared through Redis.

    Needs the ``distributed`` extra (``pip install 'adaptive-spider[distributed]'``).
    A project whose ``SCHEDULER`` is scrapy-redis' own gets ours in its place, at
    the same priority: its other scrapy-redis settings (``REDIS_URL``,
    ``SCHEDULER_PERSIST``, ...) keep their meaning.
    """

    SETTINGS: ClassVar[Mapping[str, Any]] = {
        "SCHEDULER": DISTRIBUTED_SCHEDULER,
        # Delete the crawl's keys when its last worker leaves a stopped crawl.
        "SCHEDULER_PERSIST": False,
    }

    @classmethod
    def update_profile_settings(cls, settings: BaseSettings) -> None:
        super().update_profile_settings(settings)
        # Every worker of a crawl names the same server. Not in SETTINGS: scrapy-redis takes
        # REDIS_URL over REDIS_HOST and REDIS_PORT, so a default URL would hide a server the
        # project names those ways.
        if not names_a_redis_server(settings):
            settings.set("REDIS_URL", DEFAULT_REDIS_URL, "addon")

    def update_settings(self, settings: BaseSettings) -> None:
        # Before the AdaptiveAddon's check, which would warn about scrapy-redis' scheduler. Not
        # in update_pre_crawler_settings: `scrapy crawl` sets up logging after that, and the
        # INFO line saying so would be lost.
        require_extra("distributed", "the distributed profile (DistributedAddon)")
        replace_scrapy_redis_scheduler(settings)
        super().update_settings(settings)


def names_a_redis_server(settings: BaseSettings) -> bool:
    """Whether the settings tell scrapy-redis which Redis server to use, in any of its ways."""
    params = settings.getdict("REDIS_PARAMS")
    return any(settings.get(name) for name in REDIS_SERVER_SETTINGS) or any(
        params.get(key) for key in REDIS_SERVER_PARAMS
    )


def replace_scrapy_redis_scheduler(settings: BaseSettings) -> None:
    """Put the DistributedScheduler where the project has scrapy-redis' scheduler, at the
    same priority (a project's value outranks the add-on's, so setting ours at the
    add-on's priority would not be enough). A subclass of it is the project's own: left alone."""
    configured = settings.get("SCHEDULER")
    name = configured if isinstance(configured, str) else f"{configured.__module__}.{configured.__qualname__}"
    if name != SCRAPY_REDIS_SCHEDULER:
        return
    settings.set("SCHEDULER", DISTRIBUTED_SCHEDULER, settings.getpriority("SCHEDULER") or 0)
    logger.info(
        "SCHEDULER: %s replaces scrapy-redis' %s (same Redis settings; the shared crawl is focused).",
        DISTRIBUTED_SCHEDULER,
        SCRAPY_REDIS_SCHEDULER,
    )


def apply_profile_settings(settings: BaseSettings) -> None:
    """Apply the crawl settings of every profile add-on in ``ADDONS`` now, without their
    focused crawl: for code that reads them before a crawler applies its add-ons, or that
    then runs without add-ons (a stock-Scrapy baseline with the same limits)."""
    for path in build_component_list(settings["ADDONS"]):
        addon = load_object(path)
        if isinstance(addon, type) and issubclass(addon, DefaultProfileAddon):
            addon.update_profile_settings(settings)
