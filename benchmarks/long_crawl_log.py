"""What a crawl did, one line per event, for ``benchmarks.long_crawl``.

Enabled in the crawl it observes with::

    -s EXTENSIONS='{"benchmarks.long_crawl_log.EventLog": 0}'
    -s DOWNLOADER_MIDDLEWARES='{"benchmarks.long_crawl_log.TakeLog": 1}'
    -s LONG_CRAWL_LOG=/path/events.tsv
    -s LONG_CRAWL_STOP_AT=N              # optional: close the crawl after N page responses


Every line is written and handed to the operating system at once, so a SIGKILL loses at
most the line being written (the reader skips a torn last line). Lines (tab-separated):

``S url``
    a request the engine offered the scheduler (``request_scheduled``);
``D url``
    the scheduler refused it (``request_dropped``, sent right after its ``S`` line):
    a request is *accepted* (queued) when its ``S`` line is not followed by a ``D`` line;
``T seq retry_times url``
    a request of the scheduler (it carries ``meta["adaptive_seq"]``) entering the
    downloader middlewares (order 1: before robots.txt, retries, redirects), i.e. taken
    from the queue and handed to the downloader (robots.txt files are not counted);
``R status seq url``
    a response received (``response_received``) for a request of the scheduler;
``M json``
    every ``LONG_CRAWL_LOG_INTERVAL`` seconds (default 5): time, resident memory, the
    scheduler's queue length, the dupefilter's and the page log's sizes, responses so far.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from scrapy import signals
from scrapy.utils.defer import deferred_from_coro

from adaptive_spider.frontier.journal import SEQ_KEY

_WRITERS: dict[str, Any] = {}


def writer(path: str):
    """One unbuffered append handle per file and process (extension and middleware share it)."""
    if path not in _WRITERS:
        _WRITERS[path] = open(path, "a", buffering=1, encoding="utf-8")
    return _WRITERS[path]


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of a process (VmRSS), 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _clean(url: str) -> str:
    return url.replace("\t", "%09").replace("\n", "%0A")


class TakeLog:
    """Downloader middleware (order 1): logs each scheduler request handed to the downloader."""

    def __init__(self, path: str):
        self.out = writer(path) if path else None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("LONG_CRAWL_LOG", ""))

    def process_request(self, request, spider=None):
        seq = request.meta.get(SEQ_KEY)
        if self.out is not None and seq is not None:
            self.out.write(f"T\t{seq}\t{request.meta.get('retry_times', 0)}\t{_clean(request.url)}\n")
        return None


class EventLog:
    """Extension: scheduled, dropped and received requests, and a periodic memory sample."""

    def __init__(self, crawler, path: str, interval: float, stop_at: int = 0):
        self.crawler = crawler
        self.stop_at = stop_at
        self.stopping = False
        self.out = writer(path)
        self.interval = interval
        self.started = time.time()
        self.responses = 0
        self.task = None
        crawler.signals.connect(self.scheduled, signals.request_scheduled)
        crawler.signals.connect(self.dropped, signals.request_dropped)
        crawler.signals.connect(self.received, signals.response_received)
        crawler.signals.connect(self.opened, signals.spider_opened)
        crawler.signals.connect(self.closed, signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        path = crawler.settings.get("LONG_CRAWL_LOG", "")
        if not path:
            from scrapy.exceptions import NotConfigured

            raise NotConfigured("LONG_CRAWL_LOG is not set")
        settings = crawler.settings
        return cls(
            crawler, path, settings.getfloat("LONG_CRAWL_LOG_INTERVAL", 5.0), settings.getint("LONG_CRAWL_STOP_AT", 0)
        )

    def scheduled(self, request, spider=None):
        self.out.write(f"S\t{_clean(request.url)}\n")

    def dropped(self, request, spider=None):
        self.out.write(f"D\t{_clean(request.url)}\n")

    def received(self, response, request, spider=None):
        seq = request.meta.get(SEQ_KEY)
        if seq is not None:
            self.responses += 1
            self.out.write(f"R\t{response.status}\t{seq}\t{_clean(request.url)}\n")
            if self.stop_at and self.responses >= self.stop_at and not self.stopping:
                # Unlike CLOSESPIDER_PAGECOUNT, robots.txt answers do not count: pages of the crawl only.
                self.stopping = True
                deferred_from_coro(self.crawler.engine.close_spider_async(reason="long_crawl_target"))

    def opened(self, spider):
        from twisted.internet import task

        self.sample()
        self.task = task.LoopingCall(self.sample)
        self.task.start(self.interval, now=False)

    def closed(self, spider, reason):
        if self.task is not None and self.task.running:
            self.task.stop()
        self.sample(closing=reason)

    def sample(self, closing: str | None = None) -> None:
        engine = self.crawler.engine
        scheduler = getattr(getattr(engine, "_slot", None), "scheduler", None)
        record: dict[str, Any] = {
            "t": round(time.time(), 2),
            "rss": rss_bytes(),
            "responses": self.responses,
            "pid": os.getpid(),
        }
        if scheduler is not None:
            try:
                record["queued"] = len(scheduler)
                record["seen"] = len(getattr(scheduler.df, "fingerprints", ()))
                state = getattr(scheduler, "state", None)
                if state is not None:
                    record["pages"] = len(state.pages)
                frontier = getattr(scheduler, "frontier", None)
                if frontier is not None:
                    record["frontier"] = len(frontier)
            except Exception as exc:  # a sample is never worth a crash
                record["error"] = repr(exc)
        if closing is not None:
            record["closed"] = closing
        self.out.write("M\t" + json.dumps(record) + "\n")


def read_events(path) -> list[list[str]]:
    """The lines of an event log, split; a torn last line (the kill) is skipped."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    complete = lines[:-1]  # the part after the last newline is torn (or empty)
    return [line.split("\t") for line in complete if line]
