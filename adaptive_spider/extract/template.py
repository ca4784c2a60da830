"""Templates: a file of fields, options and browser actions that turns pages into documents.

A template is what a user writes instead of a spider::

    template = Template.from_file("products.yaml")
    template.update_settings(crawler.settings)         # limits, robots.txt location
    documents = template.extract(response)             # list of dicts
    for link in template.links(response):              # links in the pagination scope
        yield response.follow(link, meta={**template.request_meta(), "link_text": link.text})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from parsel import Selector
from scrapy.http import TextResponse
from scrapy.link import Link
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import BaseSettings, get_settings_priority

from adaptive_spider.extract.actions import Action
from adaptive_spider.extract.fields import Field
from adaptive_spider.extract.loader import load_template_data
from adaptive_spider.extract.schema import Options, parse_template
from adaptive_spider.relevance.pagetext import content_sha1

ROBOTSTXT_LOCATION_MIDDLEWARE = "adaptive_spider.extract.robotstxt.RobotsTxtLocationMiddleware"
# Before Scrapy's RobotsTxtMiddleware (100), so the robots.txt request it sends is redirected.
ROBOTSTXT_LOCATION_MIDDLEWARE_ORDER = 90


class Template:
    """Fields, options and browser actions read from a YAML or JSON template file.

    Use :meth:`from_file`; a malformed file raises
    :class:`~adaptive_spider.extract.errors.TemplateError` naming the field and line.
    """

    def __init__(
        self,
        name: str,
        fields: tuple[Field, ...],
        options: Options | None = None,
        actions: tuple[Action, ...] = (),
        path: str | None = None,
    ) -> None:
        self.name = name
        self.fields = tuple(fields)
        self.options = options or Options()
        self.actions = tuple(actions)
        self.path = path
        self._link_extractor = LinkExtractor(
            restrict_xpaths=self.options.pagination or (),
            deny=self.options.exclude,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        """Load and validate a template; ``.json`` files are JSON, anything else YAML."""
        data = load_template_data(path)
        return cls.from_data(data, path=path)

    @classmethod
    def from_data(cls, data: Any, path: str | Path | None = None) -> Template:
        """Validate already parsed template data (errors name *path* when given)."""
        default_name = Path(path).stem if path is not None else "template"
        parts = parse_template(data, path, default_name)
        return cls(
            parts.name,
            parts.fields,
            parts.options,
            parts.actions,
            path=str(path) if path is not None else None,
        )

    def __repr__(self) -> str:
        return f"<Template {self.name!r}: {len(self.fields)} fields, {len(self.actions)} actions>"

    # -- extraction ----------------------------------------------------------

    def extract(self, response: object) -> list[dict[str, Any]]:
        """The documents on *response*: one per ``options.documents`` match, or one for the page.

        Each document has the page ``url``, the ``template`` name, one key per
        field, when fields have ranking variables ``ranking`` (a mapping of
        variable name to number, None when the value has no number) and
        ``sha1``, the SHA-1 of its field values (:func:`document_text`).
        Elements where every field is empty, or a required field is, give no
        document. Non-text responses give none.
        """
        if not isinstance(response, TextResponse):
            return []
        if self.options.documents:
            scopes: list[Selector] = response.xpath(self.options.documents)
        else:
            scopes = [response.selector]
        documents: list[dict[str, Any]] = []
        for scope in scopes:
            document = self._document(scope, response)
            if document is not None:
                documents.append(document)
        return documents

    def _document(self, scope: Selector, response: TextResponse) -> dict[str, Any] | None:
        values = {field.name: field.extract(scope, response) for field in self.fields}
        if all(_is_empty(value) for value in values.values()):
            return None
        if any(field.required and _is_empty(values[field.name]) for field in self.fields):
            return None
        document: dict[str, Any] = {"url": response.url, "template": self.name, **values}
        ranking = {field.ranking: field.number(values[field.name]) for field in self.fields if field.ranking}
        if ranking:
            document["ranking"] = ranking
        document["sha1"] = content_sha1(document_text(values))
        return document

    # -- crawling ------------------------------------------------------------

    def links(self, response: object) -> list[Link]:
        """Absolute links to follow from *response*: inside ``options.pagination``
        (the whole page when unset), minus excluded URLs; anchor text in ``Link.text``."""
        if not isinstance(response, TextResponse):
            return []
        return self._link_extractor.extract_links(response)

    def is_excluded(self, url: str) -> bool:
        """Whether *url* matches one of the template's excluded URL patterns."""
        return any(pattern.search(url) for pattern in self.options.exclude)

    def request_meta(self) -> dict[str, Any]:
        """``Request.meta`` entries for pages of this template: the browser actions
        as scrapy-playwright page methods, or nothing when there are no actions."""
        if not self.actions:
            return {}
        page_methods = [method for action in self.actions for method in action.page_methods()]
        return {"playwright": True, "playwright_page_methods": page_methods}

    def scrapy_settings(self) -> dict[str, Any]:
        """The template's limits and robots.txt location as Scrapy settings.

        ``DOWNLOADER_MIDDLEWARES`` here holds only the middleware to add; use
        :meth:`update_settings` to merge it into a crawler's settings.
        """
        options = self.options
        settings: dict[str, Any] = {}
        if options.max_pages is not None:
            settings["CLOSESPIDER_PAGECOUNT"] = options.max_pages
        if options.max_documents is not None:
            settings["CLOSESPIDER_ITEMCOUNT"] = options.max_documents
        if options.max_depth is not None:
            settings["DEPTH_LIMIT"] = options.max_depth
        if options.wall_time is not None:
            settings["CLOSESPIDER_TIMEOUT"] = options.wall_time
        if options.robots_txt:
            settings["ADAPTIVE_ROBOTSTXT_LOCATIONS"] = dict(options.robots_txt)
            settings["DOWNLOADER_MIDDLEWARES"] = {ROBOTSTXT_LOCATION_MIDDLEWARE: ROBOTSTXT_LOCATION_MIDDLEWARE_ORDER}
        return settings

    def update_settings(self, settings: BaseSettings, priority: str = "spider") -> None:
        """Apply :meth:`scrapy_settings` to unfrozen crawler *settings* (e.g. in a
        spider's ``from_crawler``). Middlewares are added to the existing ones;
        settings given at a higher priority (``-s`` on the command line) win."""
        for name, value in self.scrapy_settings().items():
            if name == "DOWNLOADER_MIDDLEWARES":
                middlewares = settings.getdict(name)
                middlewares.update(value)
                kept_priority = max(settings.getpriority(name) or 0, get_settings_priority(priority))
                settings.set(name, middlewares, priority=kept_priority)
            else:
                settings.set(name, value, priority=priority)


def document_text(values: dict[str, str | list[str] | None]) -> str:
    """The text a template document's ``sha1`` is taken over: its field values, in the
    template's order, as a JSON list.

    Only the extracted values count, not the page ``url`` nor the template name, so the
    same document read from two URLs (a mirror, a second listing) has one SHA-1, which
    the duplicate-content pipeline counts and the search index keeps once.  JSON keeps
    the fields apart (``["a b", null]`` is not ``["a", "b"]``); the hash is
    :func:`~adaptive_spider.relevance.pagetext.content_sha1`, the package's one content
    hash, rather than a second rule for documents.
    """
    return json.dumps(list(values.values()), ensure_ascii=False)


def _is_empty(value: object) -> bool:
    return value is None or value == []
