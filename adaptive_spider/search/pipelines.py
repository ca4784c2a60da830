"""Item pipeline that indexes crawl items into a search index while the crawl runs.

Enable it in a project's settings::

    ITEM_PIPELINES = {"adaptive_spider.search.pipelines.SearchIndexPipeline": 800}
    ADAPTIVE_SEARCH_INDEX = "crawl-index"        # directory; the index is created if missing
    ADAPTIVE_SEARCH_ID_FIELD = "url"              # default "": url, or sha1 for template documents
    ADAPTIVE_SEARCH_FIELDS = ["title", "text"]   # default: the first item's text fields

It accepts any item type ItemAdapter knows (dicts, scrapy.Item, dataclasses,
attrs).  Items go through :func:`.documents.search_document`, as ``scrapy index``
records do, so a template's ranking variables become numeric fields.  An item
without the id field gets a hash of its fields as its id; an item that cannot
be indexed is counted under ``adaptive/search/items_skipped`` and never stops
the crawl.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from adaptive_spider.settings import defaults

from .analysis import Analyzer
from .documents import default_id_field, search_document
from .errors import SearchError
from .fields import as_text, text_fields_of
from .index import DEFAULT_B, DEFAULT_K, SearchIndex

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


def _field_list(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    return [str(name) for name in value]


class SearchIndexPipeline:
    """Add every scraped item to the search index in ``ADAPTIVE_SEARCH_INDEX``."""

    def __init__(
        self,
        directory: str,
        id_field: str = "",
        fields: list[str] | None = None,
        field_weights: str | Mapping | None = None,
        analyzer: Analyzer | None = None,
        k: float = DEFAULT_K,
        b: float = DEFAULT_B,
        commit_every: int = 500,
        stats: StatsCollector | None = None,
    ) -> None:
        self.directory = directory
        self.id_field = id_field
        self.fields = fields or []
        self.field_weights = field_weights
        self.analyzer = analyzer
        self.k = k
        self.b = b
        self.commit_every = commit_every
        self.stats = stats
        self.index: SearchIndex | None = None
        self._since_commit = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SearchIndexPipeline:
        settings = crawler.settings
        directory = settings.get("ADAPTIVE_SEARCH_INDEX")
        if not directory:
            raise NotConfigured("ADAPTIVE_SEARCH_INDEX (the index directory) is not set")

        # Without the add-on the table's defaults are not registered: read them from there, not again here.
        def setting(name: str) -> Any:
            value = settings.get(name)
            return getattr(defaults, name) if value is None else value

        try:
            analyzer = Analyzer(
                stop_words=setting("ADAPTIVE_SEARCH_STOP_WORDS"),
                min_length=int(setting("ADAPTIVE_SEARCH_MIN_LENGTH")),
                stemmer=setting("ADAPTIVE_SEARCH_STEMMER") or None,
            )
        except SearchError as error:
            raise NotConfigured(f"search index pipeline: {error}") from None
        return cls(
            directory,
            id_field=setting("ADAPTIVE_SEARCH_ID_FIELD"),
            fields=_field_list(settings.get("ADAPTIVE_SEARCH_FIELDS")),
            field_weights=settings.get("ADAPTIVE_SEARCH_FIELD_WEIGHTS"),
            analyzer=analyzer,
            k=float(setting("ADAPTIVE_SEARCH_K")),
            b=float(setting("ADAPTIVE_SEARCH_B")),
            commit_every=int(setting("ADAPTIVE_SEARCH_COMMIT_EVERY")),
            stats=crawler.stats,
        )

    def open_spider(self, spider: Spider | None = None) -> None:
        try:
            self.index = SearchIndex.open(self.directory)
        except SearchError:
            self.index = None  # created with the first item's fields, see _ensure_index

    def _ensure_index(self, document: dict[str, Any]) -> SearchIndex:
        """The index, created on the first item from its fields when there is none yet.

        Without ``ADAPTIVE_SEARCH_ID_FIELD`` the first item chooses the id field
        (:func:`.documents.default_id_field`): ``url`` for pages, ``sha1`` for a
        template's documents, which share their page's url.
        """
        if self.index is None:
            id_field = self.id_field or default_id_field(document)
            fields = self.fields or text_fields_of(document, id_field)
            if not fields:
                raise SearchError("item has no text fields to index")
            self.index = SearchIndex.create(
                self.directory,
                fields=fields,
                id_field=id_field,
                field_weights=self.field_weights,
                analyzer=self.analyzer,
                k=self.k,
                b=self.b,
            )
            logger.info("search index created at %s for fields %s", self.directory, fields)
        return self.index

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        document = search_document(
            dict(ItemAdapter(item).items()), self.index.id_field if self.index else self.id_field
        )
        try:
            index = self._ensure_index(document)
            if document.get(index.id_field) in (None, ""):
                document[index.id_field] = self._content_id(document)
            if not any(as_text(document.get(name)).strip() for name in index.fields):
                raise SearchError(f"item has none of the indexed fields {', '.join(index.fields)}")
            index.add_document(document)
        except SearchError as error:
            logger.warning("search index: item skipped: %s", error)
            self._inc("items_skipped")
            return item
        self._inc("items_indexed")
        self._since_commit += 1
        if self._since_commit >= self.commit_every:
            index.commit()
            self._since_commit = 0
        return item

    @staticmethod
    def _content_id(document: dict) -> str:
        text = json.dumps(document, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha1(text.encode()).hexdigest()

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"adaptive/search/{key}")

    def close_spider(self, spider: Spider | None = None) -> None:
        if self.index is None:
            return
        self.index.optimize()
        if self.stats is not None:
            self.stats.set_value("adaptive/search/documents", len(self.index))
        self.index.close()
        self.index = None
