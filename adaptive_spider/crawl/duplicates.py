"""DuplicateContentPipeline: the same content under another URL is counted, and
dropped when asked.

Canonical URLs catch duplicates whose URLs differ in known ways; the rest (a
page served at ``/a`` and ``/a/index.html``, mirrors, printer versions) have
equal content. The pipeline takes each item's content SHA-1 — the ``sha1``
field when the item has one (the ``focused`` spider's page items, a template's
documents), otherwise
:func:`~adaptive_spider.relevance.pagetext.content_sha1` of its ``text``,
``body`` or ``content`` field, the hash the spider puts in ``sha1`` (so an item
with the text of an earlier page item is its duplicate) — and counts items
whose digest was seen before. With ``ADAPTIVE_DROP_DUPLICATES = True`` they are
dropped. Items without any of these fields pass untouched.

With JOBDIR, the digests seen are appended to ``JOBDIR/content.sha1`` as the
crawl goes (flushed, so they survive a killed process), and a resumed crawl
keeps recognising them. Stats: ``adaptive/documents``, ``adaptive/duplicates``
and ``adaptive/duplicates_dropped``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem
from scrapy.utils.job import job_dir

from adaptive_spider.relevance.pagetext import content_sha1
from adaptive_spider.settings.config import AdaptiveConfig

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

TEXT_FIELDS = ("text", "body", "content")
DIGESTS_FILE = "content.sha1"
_SHA1_HEX = re.compile(r"^[0-9a-f]{40}$")
_DIGEST_SIZE = 20


def content_digest(item: Any) -> bytes | None:
    """The 20-byte SHA-1 of an item's content (None: the item has no content field)."""
    adapter = ItemAdapter(item)
    declared = adapter.get("sha1")
    if isinstance(declared, str) and _SHA1_HEX.match(declared):
        return bytes.fromhex(declared)
    for name in TEXT_FIELDS:
        value = adapter.get(name)
        if isinstance(value, str):
            return bytes.fromhex(content_sha1(value))
    return None


class DuplicateContentPipeline:
    """Counts (and optionally drops) items whose content was seen before."""

    def __init__(self, drop: bool = False, jobdir: str | None = None, stats: StatsCollector | None = None) -> None:
        self.drop = drop
        self.jobdir = jobdir
        self.stats = stats
        self.first_url: dict[bytes, str] = {}
        self._file: BinaryIO | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DuplicateContentPipeline:
        config = AdaptiveConfig.from_settings(crawler.settings)
        return cls(config.drop_duplicates, job_dir(crawler.settings), crawler.stats)

    def open_spider(self, spider: Spider | None = None) -> None:
        if not self.jobdir:
            return
        path = Path(self.jobdir, DIGESTS_FILE)
        if path.exists():
            data = path.read_bytes()
            whole = len(data) - len(data) % _DIGEST_SIZE  # a digest cut short by a kill is ignored
            for start in range(0, whole, _DIGEST_SIZE):
                self.first_url.setdefault(data[start : start + _DIGEST_SIZE], "")
            if whole != len(data):
                path.write_bytes(data[:whole])
        self._file = path.open("ab")

    def close_spider(self, spider: Spider | None = None) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        digest = content_digest(item)
        if digest is None:
            return item
        self._inc("documents")
        url = ItemAdapter(item).get("url") or ""
        first = self.first_url.get(digest)
        if first is None:
            self.first_url[digest] = url
            if self._file is not None:
                self._file.write(digest)
                self._file.flush()
            return item
        self._inc("duplicates")
        logger.debug("Duplicate content: %s has the content of %s", url, first or "a page of an earlier run")
        if self.drop:
            self._inc("duplicates_dropped")
            raise DropItem(f"duplicate content (SHA-1 {digest.hex()})")
        return item

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"adaptive/{key}")
