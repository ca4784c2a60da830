"""Settings profiles as add-ons: each profile module of ``scrapy.cfg`` is a thin user of
its add-on in ``adaptive_spider.profiles``, with exactly the effective settings the
modules had when they spelled everything out; any project gets the same with one
line in ``ADDONS``, its own values still win, and a scrapy-redis project switches to
the shared focused crawl with ``DistributedAddon`` alone."""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler, CrawlerRunner
from scrapy.settings import BaseSettings, Settings
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from adaptive_spider.addon import COMPONENTS, SCHEDULER, AdaptiveAddon
from adaptive_spider.profiles import (
    DISTRIBUTED_SCHEDULER,
    DefaultProfileAddon,
    DistributedAddon,
    JavascriptAddon,
    PoliteAddon,
)
from benchmarks.harness.crawl import STOCK, CrawlOptions, crawl_settings
from tests.test_safe_defaults import PROFILES

PLAYWRIGHT = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
#: Every setting the profile modules set, with its effective value in a crawler, recorded from
#: the modules as they were before the add-ons (when each spelled out its values; ADDONS aside).
DEFAULT = {
    "BOT_NAME": "adaptive_spider",
    "COMMANDS_MODULE": "adaptive_spider.commands",
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DEPTH_LIMIT": 50,
    "DOWNLOAD_MAXSIZE": 16777216,
    "DOWNLOAD_TIMEOUT": 30,
    "DOWNLOAD_WARNSIZE": 4194304,
    "FEED_EXPORT_ENCODING": "utf-8",
    "LOG_LEVEL": "INFO",
    "NEWSPIDER_MODULE": "spiders",
    "REDIRECT_MAX_TIMES": 5,
    "REMOTE_CONTROL_ENABLED": False,
    "RETRY_TIMES": 1,
    "ROBOTSTXT_OBEY": True,
    "SPIDER_MODULES": ["spiders"],
    "TELNETCONSOLE_ENABLED": False,
    "URLLENGTH_LIMIT": 2048,
}
TODAY = {
    "default": DEFAULT,
    "polite": {
        **DEFAULT,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_MAX_DELAY": 30.0,
        "AUTOTHROTTLE_START_DELAY": 1.0,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
        "CONCURRENT_REQUESTS": 8,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 1.0,
        "HTTPCACHE_ENABLED": False,
        "RANDOMIZE_DOWNLOAD_DELAY": True,
    },
    "fast": {
        **DEFAULT,
        "AUTOTHROTTLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
    },
    "javascript": {
        **DEFAULT,
        "CONCURRENT_REQUESTS": 4,
        "DOWNLOADER_MIDDLEWARES": {
            "adaptive_spider.crawl.downloadermiddlewares.DomainProfileMiddleware": 950,
            "adaptive_spider.crawl.downloadermiddlewares.ModelScoreMiddleware": 10,
            "adaptive_spider.extract.browser.BrowserRenderingMiddleware": 50,
        },
        "DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT, "https": PLAYWRIGHT},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 30000,
        "PLAYWRIGHT_LAUNCH_OPTIONS": {
            "args": [
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
            "executable_path": "/usr/bin/chromium",
            "headless": True,
        },
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 4,
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    },
    "distributed": {
        **DEFAULT,
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "SCHEDULER": "adaptive_spider.distributed.scheduler.DistributedScheduler",
        "SCHEDULER_PERSIST": False,
    },
}
ADDON_OF = {
    "default": "adaptive_spider.profiles.DefaultProfileAddon",
    "polite": "adaptive_spider.profiles.PoliteAddon",
    "fast": "adaptive_spider.profiles.FastAddon",
    "javascript": "adaptive_spider.profiles.JavascriptAddon",
    "distributed": "adaptive_spider.profiles.DistributedAddon",
}
#: What a profile module keeps: the project's identity and, explicitly, the two safety switches.
PROJECT_IDENTITY = {
    "BOT_NAME",
    "SPIDER_MODULES",
    "NEWSPIDER_MODULE",
    "COMMANDS_MODULE",
    "FEED_EXPORT_ENCODING",
    "LOG_LEVEL",
}
SAFETY = {"REMOTE_CONTROL_ENABLED", "TELNETCONSOLE_ENABLED"}


def plain(value):
    """A setting's value with classes as import paths and Scrapy's dict settings as dicts."""
    if isinstance(value, (BaseSettings, dict)):
        return {plain(key): plain(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(entry) for entry in value]
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return value


def module_settings(profile: str) -> dict:
    module = importlib.import_module(f"settings_profiles.{profile}")
    return {name: getattr(module, name) for name in dir(module) if name.isupper()}


def effective(crawler: Crawler, names) -> dict:
    return {name: plain(crawler.settings[name]) for name in names}


def addon_messages(caplog, logger: str = "adaptive_spider.addon") -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == logger]


def test_every_profile_has_its_addon():
    assert set(PROFILES) == set(TODAY) == set(ADDON_OF)


# -- the profile modules: thin, and exactly what they were ---------------------------------------
@pytest.mark.parametrize("profile", sorted(TODAY))
def test_a_profile_module_keeps_its_effective_settings(profile):
    settings = module_settings(profile)
    assert settings["ADDONS"] == {ADDON_OF[profile]: 0}
    crawler = get_crawler(Spider, settings)
    assert effective(crawler, TODAY[profile]) == TODAY[profile]


@pytest.mark.parametrize("profile", sorted(TODAY))
def test_a_profile_module_is_only_the_projects_identity_and_its_addon(profile):
    # A value set here at project priority would outrank the add-on's: a change to the add-on would not apply.
    assert set(module_settings(profile)) == PROJECT_IDENTITY | SAFETY | {"ADDONS"}
    addon = load_object(ADDON_OF[profile])
    assert not set(addon.profile_settings()) & set(module_settings(profile))


def test_the_benchmark_stock_crawl_keeps_the_default_profiles_limits_without_an_addon():
    crawler = Crawler(Spider, crawl_settings(STOCK, CrawlOptions(order="free")))
    crawler._apply_settings()
    assert crawler.addons.addons == []
    assert crawler.settings["SCHEDULER"] == "scrapy.core.scheduler.Scheduler"
    limits = {name: value for name, value in DefaultProfileAddon.profile_settings().items()}
    assert effective(crawler, limits) == limits


# -- the add-ons in any project ------------------------------------------------------------------
@pytest.mark.parametrize("profile", sorted(TODAY))
def test_an_addon_alone_gives_a_project_its_profile(profile, caplog):
    with caplog.at_level(logging.WARNING):
        crawler = get_crawler(Spider, {"ADDONS": {ADDON_OF[profile]: 0}})
    expected = {name: value for name, value in TODAY[profile].items() if name not in PROJECT_IDENTITY}
    assert effective(crawler, expected) == expected
    assert crawler.settings["SCHEDULER"] == TODAY[profile].get("SCHEDULER", SCHEDULER)
    for setting, path, order in COMPONENTS:  # the focused crawl, as with the AdaptiveAddon
        assert plain(crawler.settings.getdict(setting))[path] == order
    assert crawler.settings.getpriority("CONCURRENT_REQUESTS") == crawler.settings.getpriority("DOWNLOAD_TIMEOUT") == 15
    assert addon_messages(caplog) == []  # not even DistributedAddon's scheduler is "overridden"


def test_the_projects_own_values_win():
    settings = Settings({"ADDONS": {"adaptive_spider.profiles.JavascriptAddon": 0}})
    settings.setdict(
        {
            "CONCURRENT_REQUESTS": 2,
            "ROBOTSTXT_OBEY": False,
            "DOWNLOAD_HANDLERS": {"https": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler", "ftp": None},
            "DOWNLOADER_MIDDLEWARES": {"adaptive_spider.extract.browser.BrowserRenderingMiddleware": None},
        },
        priority="project",
    )
    settings.set("DOWNLOAD_TIMEOUT", 5, priority="cmdline")  # -s
    crawler = Crawler(Spider, settings)
    crawler._apply_settings()
    assert effective(crawler, ["CONCURRENT_REQUESTS", "ROBOTSTXT_OBEY", "DOWNLOAD_TIMEOUT"]) == {
        "CONCURRENT_REQUESTS": 2,
        "ROBOTSTXT_OBEY": False,
        "DOWNLOAD_TIMEOUT": 5,
    }
    # Dict settings entry by entry: the project's entries stay, the profile fills the others.
    assert plain(crawler.settings["DOWNLOAD_HANDLERS"]) == {
        "https": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
        "ftp": None,
        "http": PLAYWRIGHT,
    }
    middlewares = plain(crawler.settings["DOWNLOADER_MIDDLEWARES"])
    assert middlewares["adaptive_spider.extract.browser.BrowserRenderingMiddleware"] is None  # turned off stays off
    assert crawler.settings["PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"] == 4


def test_a_spiders_custom_settings_win():
    class Gentle(Spider):
        name = "gentle"
        custom_settings = {"DOWNLOAD_DELAY": 3.0, "AUTOTHROTTLE_ENABLED": False}

    crawler = get_crawler(Gentle, {"ADDONS": {"adaptive_spider.profiles.PoliteAddon": 0}})
    assert crawler.settings.getfloat("DOWNLOAD_DELAY") == 3.0
    assert crawler.settings.getbool("AUTOTHROTTLE_ENABLED") is False
    assert crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 1


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_project_that_lists_the_adaptive_addon_too_gets_it_once(order, caplog):
    addons = {"adaptive_spider.addon.AdaptiveAddon": order[0], "adaptive_spider.profiles.DistributedAddon": order[1]}
    with caplog.at_level(logging.WARNING):
        crawler = get_crawler(Spider, {"ADDONS": addons, "ADAPTIVE_QEURY": "widgets"})
    assert [type(addon) for addon in crawler.addons.addons] == [DistributedAddon]
    assert crawler.settings["SCHEDULER"] == DISTRIBUTED_SCHEDULER  # AdaptiveAddon did not put its own back
    misspelled = [message for message in caplog.messages if "ADAPTIVE_QEURY" in message]
    assert len(misspelled) == 1, misspelled


def test_the_addon_settings_apply_twice_alike():
    once, twice = Settings(), Settings()
    JavascriptAddon().update_settings(once)
    for _ in range(2):
        JavascriptAddon().update_settings(twice)
    names = set(JavascriptAddon.profile_settings()) | {setting for setting, _, _ in COMPONENTS} | {"SCHEDULER"}
    assert {name: plain(once[name]) for name in names} == {name: plain(twice[name]) for name in names}


# -- a scrapy-redis project ------------------------------------------------------------------------
SCRAPY_REDIS_PROJECT = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "SCHEDULER_PERSIST": True,
    "REDIS_HOST": "redis.internal",
    "REDIS_PORT": 6380,
}


@pytest.mark.parametrize("as_class", [False, True])
def test_a_scrapy_redis_project_switches_with_the_distributed_addon(as_class, caplog):
    settings = {**SCRAPY_REDIS_PROJECT, "ADDONS": {"adaptive_spider.profiles.DistributedAddon": 0}}
    if as_class:
        settings["SCHEDULER"] = pytest.importorskip("scrapy_redis.scheduler").Scheduler
    with caplog.at_level(logging.INFO):
        crawler = get_crawler(Spider, settings)
    assert crawler.settings["SCHEDULER"] == DISTRIBUTED_SCHEDULER
    assert crawler.settings.getpriority("SCHEDULER") == 20  # the project's priority, so no later default undoes it
    assert addon_messages(caplog) == []  # no "not focused" warning
    switched = addon_messages(caplog, "adaptive_spider.profiles")
    assert (
        len(switched) == 1
        and "scrapy_redis.scheduler.Scheduler" in switched[0]
        and "DistributedScheduler" in switched[0]
    )
    # The project's scrapy-redis settings keep their meaning: its server is not hidden by a default REDIS_URL.
    assert crawler.settings["REDIS_URL"] is None
    assert (crawler.settings["REDIS_HOST"], crawler.settings.getint("REDIS_PORT")) == ("redis.internal", 6380)
    assert crawler.settings.getbool("SCHEDULER_PERSIST") is True


def test_the_switch_needs_no_crawler_runner():
    settings = Settings({"ADDONS": {"adaptive_spider.profiles.DistributedAddon": 0}})
    settings.setdict(SCRAPY_REDIS_PROJECT, priority="project")
    crawler = Crawler(Spider, settings)  # no runner: no pre-crawler hook
    crawler._apply_settings()
    assert crawler.settings["SCHEDULER"] == DISTRIBUTED_SCHEDULER


@pytest.mark.parametrize(
    "scheduler",
    ["scrapy.core.scheduler.Scheduler", "tests.test_profiles.OwnScheduler", "tests.test_profiles.OwnRedisScheduler"],
)
def test_another_scheduler_is_left_alone_and_named(scheduler, caplog):
    with caplog.at_level(logging.WARNING):
        crawler = get_crawler(
            Spider, {"ADDONS": {"adaptive_spider.profiles.DistributedAddon": 0}, "SCHEDULER": scheduler}
        )
    assert crawler.settings["SCHEDULER"] == scheduler
    warnings = addon_messages(caplog)
    assert len(warnings) == 1 and scheduler in warnings[0]


def test_the_profiles_need_no_redis_to_import():
    code = (
        "import sys, adaptive_spider.profiles, settings_profiles.distributed\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] in ('redis', 'scrapy_redis', 'scrapy_playwright'))\n"
        "assert not loaded, loaded"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


class OwnScheduler:
    """A project's own scheduler, not scrapy-redis'."""


class OwnRedisScheduler(pytest.importorskip("scrapy_redis.scheduler").Scheduler):
    """A project's own scheduler built on scrapy-redis': the project's, so not replaced."""


def test_a_scrapyd_job_chooses_a_profile_by_its_addon():
    # Scrapyd passes a job's setting= fields as -s options: ADDONS as JSON replaces the profile's.
    settings = Settings()
    settings.setmodule("settings_profiles.default", priority="project")
    settings.set("ADDONS", '{"adaptive_spider.profiles.PoliteAddon": 0}', priority="cmdline")
    through_runner = CrawlerRunner(settings).create_crawler(Spider)  # as `scrapy crawl` does
    direct = Crawler(Spider, settings)
    for built in (through_runner, direct):
        built._apply_settings()
        assert [type(addon) for addon in built.addons.addons] == [PoliteAddon]
        assert effective(built, TODAY["polite"]) == TODAY["polite"]


def test_the_addon_is_the_adaptive_addon_plus_the_profile():
    assert issubclass(PoliteAddon, AdaptiveAddon) and issubclass(DistributedAddon, DefaultProfileAddon)
    assert PoliteAddon.profile_settings()["DEPTH_LIMIT"] == 50  # the default profile's, underneath
    assert PoliteAddon.profile_settings()["CONCURRENT_REQUESTS"] == 8
