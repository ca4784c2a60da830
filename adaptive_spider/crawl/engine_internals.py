"""The things this project reads from (or mends in) Scrapy's internals without a public API, in one place.

- **Requests in progress**: from the moment the scheduler hands a request to the engine
  until its response (or failure) went through the spider and every request it produced
  reached the scheduler. The JOBDIR journal marks a request done when it leaves this set,
  the cold-start hold and the sufficiency stop count what is still in flight. Scrapy keeps
  it as ``engine._slot.inprogress`` (it waits on it before closing a spider) and offers no
  signal for "scraped and done".
- **Download slots**: ``engine.downloader.slots`` and ``get_slot_key``, which Scrapy's own
  AutoThrottle extension uses to change a site's delay; ``RobotsCrawlDelay`` does the same
  for robots.txt's ``Crawl-delay``.

- **The refused tunnel's exception**: Scrapy's HTTP/1.1 handler raises ``TunnelError`` when
  a proxy refuses the tunnel to a host; it lives in that handler's module
  (:func:`tunnel_errors`). The domain profiles count it as a failure to connect.
- **Refused tunnels**: when an HTTP proxy refuses a ``CONNECT`` (an ``https://`` URL) and
  keeps the connection open, as HTTP/1.1 allows, Scrapy 2.19's tunnelling endpoint fails
  the request and leaves the socket open: one leaked file descriptor per refused request,
  until a long crawl can open no more ("Too many open files"). :func:`close_refused_tunnels`
  makes the endpoint close it; the add-on installs it.

If a Scrapy release renames them, each function logs one error naming what changed and
falls back (the downloader's active set, download only; no Crawl-delay), so nothing
silently grows without bound. ``tests/test_engine_internals.py`` fails loudly on such a
release, in a real crawl.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

_warned: set[str] = set()


def _warn_once(what: str) -> None:
    if what not in _warned:
        _warned.add(what)
        logger.error(
            "This Scrapy release has no %s; adaptive_spider falls back (see adaptive_spider.crawl.engine_internals). "
            "Please report it with your Scrapy version.",
            what,
        )


def _engine(crawler: Crawler | None) -> Any | None:
    try:
        return getattr(crawler, "engine", None)
    except RuntimeError:  # Scrapy 2.19: Crawler.engine is not set before the crawl starts
        return None


def requests_in_progress(crawler: Crawler | None) -> set[Request] | None:
    """The requests the engine is working on (download and scraping); None without an engine."""
    engine = _engine(crawler)
    if engine is None:
        return None
    slot = getattr(engine, "_slot", None)
    if slot is None:
        return None  # no spider open yet, or closed: nothing is in progress
    in_progress = getattr(slot, "inprogress", None)
    if isinstance(in_progress, set):
        return in_progress
    _warn_once("engine._slot.inprogress set")
    active = getattr(getattr(engine, "downloader", None), "active", None)
    return active if isinstance(active, set) else None


def download_slot(crawler: Crawler, request: Request) -> tuple[str, Any | None]:
    """The download slot key of a request and the downloader's slot for it (None until it exists)."""
    engine = _engine(crawler)
    downloader = engine.downloader if engine is not None else None
    get_key = getattr(downloader, "get_slot_key", None)
    slots = getattr(downloader, "slots", None)
    if get_key is None or not isinstance(slots, dict):
        _warn_once("downloader.get_slot_key / downloader.slots")
        return "", None
    key = get_key(request)
    return key, slots.get(key)


def tunnel_errors() -> tuple[type[Exception], ...]:
    """Scrapy's exception for a tunnel its proxy refused, as a tuple for ``isinstance`` (empty,
    after one logged error, when this Scrapy has none where it was)."""
    try:
        from scrapy.core.downloader.handlers.http11 import TunnelError
    except ImportError:
        _warn_once("scrapy.core.downloader.handlers.http11.TunnelError (a refused proxy tunnel)")
        return ()
    return (TunnelError,)


def close_refused_tunnels() -> bool:
    """Make Scrapy close the connection of a ``CONNECT`` its proxy refused (see the module
    docstring); idempotent. False, after one logged error, when this Scrapy has no such endpoint."""
    try:
        from scrapy.core.downloader.handlers.http11 import _TunnelingTCP4ClientEndpoint as endpoint
    except ImportError:
        _warn_once("_TunnelingTCP4ClientEndpoint (HTTPS through a proxy)")
        return False
    original = getattr(endpoint, "processProxyResponse", None)
    matcher = getattr(endpoint, "_responseMatcher", None)
    if original is None or matcher is None:
        _warn_once("_TunnelingTCP4ClientEndpoint.processProxyResponse")
        return False
    if getattr(original, "closes_refused_tunnels", False):
        return True

    def processProxyResponse(self: Any, data: bytes) -> None:
        original(self, data)
        answer = bytes(getattr(self, "_connectBuffer", b""))
        if b"\r\n\r\n" not in answer:
            return  # the proxy's answer is not complete yet
        status = matcher.match(answer)
        if status is None or int(status.group("status")) != 200:
            transport = getattr(getattr(self, "_protocol", None), "transport", None)
            if transport is not None:
                transport.loseConnection()

    processProxyResponse.closes_refused_tunnels = True  # type: ignore[attr-defined]
    endpoint.processProxyResponse = processProxyResponse  # type: ignore[method-assign]
    return True
