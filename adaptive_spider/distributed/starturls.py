"""scrapy-redis conventions: the crawl's key prefix and start URLs pushed to Redis.

The default prefix of a crawl's keys is ``adaptive:<spider>``; in a Scrapyd job
(``SCRAPY_JOB`` in the environment, or the spider's ``_job`` argument) it is
``adaptive:<spider>:<job>``, so two jobs on one Redis never share keys. An
``ADAPTIVE_DISTRIBUTED_KEY`` set by the project, a spider or ``-s`` wins.

Start URLs can wait in a Redis list (``LPUSH <key> URL``), as for scrapy-redis'
``RedisSpider``: :func:`redis_start_urls` pops them while the crawl runs, and
ends once the crawl has been idle with the list empty for
``ADAPTIVE_REDIS_START_URLS_WAIT`` seconds, so that a crawl with nothing left closes.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import task

from adaptive_spider.settings.config import ConfigError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

KEY_SETTING = "ADAPTIVE_DISTRIBUTED_KEY"
DEFAULT_KEY = "adaptive:%(spider)s"
#: URLs popped from the list in one Redis call.
POP_BATCH = 64


def job_of(crawler: Crawler) -> str:
    """The crawl's Scrapyd job id, or "" outside Scrapyd."""
    job = os.environ.get("SCRAPY_JOB") or getattr(crawler.spider, "_job", None) or ""
    return str(job).strip()


def key_prefix(settings: BaseSettings, spider: str, job: str = "") -> str:
    """The prefix of the crawl's Redis keys: an explicit ``ADAPTIVE_DISTRIBUTED_KEY``, else
    the default, with ``:<job>`` appended when the crawl is a Scrapyd job."""
    raw = settings.get(KEY_SETTING)
    explicit = raw is not None and (settings.getpriority(KEY_SETTING) or 0) > SETTINGS_PRIORITIES["addon"]
    template = str(raw) if explicit else DEFAULT_KEY
    prefix = template % {"spider": spider}
    if not explicit and job:
        prefix = f"{prefix}:{job}"
    return prefix


def crawl_prefix(crawler: Crawler) -> str:
    return key_prefix(crawler.settings, crawler.spidercls.name, job_of(crawler))


def start_urls_key(template: str, crawler: Crawler) -> str:
    """The list's name: ``%(prefix)s`` is the crawl's key prefix, ``%(spider)s`` the spider's name."""
    try:
        return template % {"prefix": crawl_prefix(crawler), "spider": crawler.spidercls.name}
    except (KeyError, ValueError, TypeError):
        raise ConfigError(
            f"start_urls_key: only %(prefix)s and %(spider)s may be substituted, got {template!r}"
        ) from None


def crawl_idle(crawler: Crawler) -> bool:
    """Nothing downloading, being parsed or waiting in the scheduler (start() aside)."""
    engine = crawler.engine
    if engine is None or engine.scheduler is None:
        return False
    scraper_slot = engine.scraper.slot
    if scraper_slot is not None and not scraper_slot.is_idle():
        return False
    return not engine.downloader.active and not engine.scheduler.has_pending_requests()


async def redis_start_urls(
    server: Any, key: str, crawler: Crawler, *, poll_interval: float, wait: float
) -> AsyncIterator[str]:
    """Yield the URLs pushed to the list ``key`` (oldest first) while the crawl runs."""
    idle_since: float | None = None
    while True:
        raw = server.rpop(key, POP_BATCH)
        if raw:
            idle_since = None
            for value in raw:
                url = value.decode() if isinstance(value, bytes) else str(value)
                if url.strip():
                    yield url.strip()
            continue
        if crawl_idle(crawler):
            now = time.monotonic()
            idle_since = now if idle_since is None else idle_since
            if now - idle_since >= wait:
                return
        else:
            idle_since = None
        await _sleep(poll_interval)


async def _sleep(seconds: float) -> None:
    if is_asyncio_available():
        await asyncio.sleep(seconds)
    else:
        from twisted.internet import reactor

        await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))
