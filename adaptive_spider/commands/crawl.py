"""``scrapy crawl`` that checks the spider, its arguments and the settings before it starts.

Scrapy builds the spider inside the running reactor, so an invalid argument
ends as a traceback in the log and a zero exit status. This command checks
everything it can while it reads the command line, before Scrapy sets up
logging or starts a reactor: that the spider exists; the spider's arguments
(a ``check_arguments`` classmethod, as the ``focused`` and ``template`` spiders
have); the ``ADAPTIVE_*`` settings; JOBDIR; LOG_LEVEL and the numeric Scrapy
settings a crawl's limits depend on. A bad value becomes Scrapy's usual
one-line usage error, naming the input, with exit status 2. Everything else,
running the crawl included, is Scrapy's ``crawl`` command (only ``process_options`` is ours).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.settings import BaseSettings
from scrapy.spiderloader import get_spider_loader

from adaptive_spider.settings.config import AdaptiveConfig, ConfigError

#: Scrapy settings checked at start: name -> (type, lowest value).
NUMERIC_SETTINGS = {
    "CONCURRENT_REQUESTS": (int, 1),
    "CONCURRENT_REQUESTS_PER_DOMAIN": (int, 1),
    "CONCURRENT_ITEMS": (int, 1),
    "DOWNLOAD_DELAY": (float, 0),
    "DOWNLOAD_TIMEOUT": (float, 0),
    "DOWNLOAD_MAXSIZE": (int, 0),
    "DOWNLOAD_WARNSIZE": (int, 0),
    "DEPTH_LIMIT": (int, 0),
    "URLLENGTH_LIMIT": (int, 0),
    "REDIRECT_MAX_TIMES": (int, 0),
    "RETRY_TIMES": (int, 0),
    "CLOSESPIDER_PAGECOUNT": (int, 0),
    "CLOSESPIDER_ITEMCOUNT": (int, 0),
    "CLOSESPIDER_TIMEOUT": (float, 0),
    "CLOSESPIDER_ERRORCOUNT": (int, 0),
}


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None  # set by Scrapy before it parses the options
        if len(args) == 1:
            try:
                check_crawl(self.settings, args[0], opts.spargs)
            except ValueError as exc:  # ConfigError, TemplateError: one line naming the input
                raise UsageError(str(exc), print_help=False) from None


def check_crawl(settings: BaseSettings, spider_name: str, spider_arguments: dict[str, Any]) -> None:
    """Raise ConfigError (or TemplateError) naming the first bad input of a crawl."""
    try:
        spidercls = get_spider_loader(settings).load(spider_name)
    except KeyError:
        raise ConfigError(f"spider: no spider named {spider_name!r}; see scrapy list") from None
    settings = settings.copy()
    spidercls.update_settings(settings)
    check = getattr(spidercls, "check_arguments", None)
    if check is not None:
        check(settings, **spider_arguments)
    AdaptiveConfig.from_settings(settings)
    check_scrapy_settings(settings)


def check_scrapy_settings(settings: BaseSettings) -> None:
    """The Scrapy settings that would otherwise fail inside the crawl with a traceback."""
    for name, (kind, low) in NUMERIC_SETTINGS.items():
        raw = settings.get(name)
        if raw is None or raw == "":
            continue
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = kind(raw)
        except (TypeError, ValueError):
            expected = "a whole number" if kind is int else "a number"
            raise ConfigError(f"{name}: expected {expected}, got {raw!r}") from None
        if value < low or value != value:
            raise ConfigError(f"{name}: must be >= {low}, got {raw!r}")
    level = settings.get("LOG_LEVEL")
    if isinstance(level, str) and not isinstance(logging.getLevelName(level.upper()), int):
        raise ConfigError(f"LOG_LEVEL: unknown level {level!r}; choose one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    _check_jobdir(settings.get("JOBDIR"))


def _check_jobdir(jobdir: str | None) -> None:
    if not jobdir:
        return
    path = Path(jobdir)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"JOBDIR: {jobdir!r} is a file, not a directory")
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None or not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"JOBDIR: cannot create or write {jobdir!r}")
