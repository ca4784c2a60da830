"""Topics of a benchmark run and the relevant pages of each, computed from its label rule.

A topics file is JSON: ``{"topics": [{"id", "query", "keywords", "seeds", "label"}, ...]}``
(see ``../shared/webbench/topics-dev.json``). A page is relevant to a topic when it
is an HTML page answered with status 200, allowed by robots.txt and reachable from
the topic's seeds, its URL matches one of ``label.url``, its ``<title>`` one of
``label.title``, or both halves of a ``label.url_title`` pair ``[URL pattern, title
pattern]`` match, and neither a ``label.exclude_url`` matches its URL nor a
``label.exclude_title`` its title (the big web's topics use the last three). Reachability comes
from the link graph walk over ``OfflineWeb.get`` (the web a Scrapy crawl of the
server walks), so any topics file gets its labels without a labels file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import lxml.etree
import lxml.html

from benchmarks.webbench.linkgraph import LinkGraph, crawl
from benchmarks.webbench.web import OfflineWeb

LABEL_KEYS = ("url", "title", "url_title", "exclude_url", "exclude_title")


class TopicsError(ValueError):
    """A topics file that cannot be used; the message names the file, the topic and the field."""


@dataclass(frozen=True)
class LabelRule:
    """Which reachable HTML pages are relevant: URL or title patterns, or (URL, title) pairs
    that must both match, minus excluded URLs and titles."""

    url: tuple[re.Pattern, ...] = ()
    title: tuple[re.Pattern, ...] = ()
    url_title: tuple[tuple[re.Pattern, re.Pattern], ...] = ()
    exclude_url: tuple[re.Pattern, ...] = ()
    exclude_title: tuple[re.Pattern, ...] = ()

    @property
    def needs_title(self) -> bool:
        return bool(self.title or self.url_title or self.exclude_title)

    def matches(self, url: str, title: str | None = None) -> bool:
        if any(pattern.search(url) for pattern in self.exclude_url):
            return False
        if title is not None and any(pattern.search(title) for pattern in self.exclude_title):
            return False
        if any(pattern.search(url) for pattern in self.url):
            return True
        if title is None:
            return False
        return any(pattern.search(title) for pattern in self.title) or any(
            url_pattern.search(url) and title_pattern.search(title) for url_pattern, title_pattern in self.url_title
        )


@dataclass(frozen=True)
class Topic:
    """One topic: what the focused spider is told (query, keywords, seeds) and its label rule."""

    id: str
    query: str
    seeds: tuple[str, ...]
    label: LabelRule
    keywords: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, compare=False)

    def spider_arguments(self) -> dict[str, str]:
        """The ``focused`` spider's arguments (``-a`` values) for this topic."""
        arguments = {"query": self.query, "start_urls": ",".join(self.seeds)}
        if self.keywords:
            arguments["keywords"] = ",".join(self.keywords)
        return arguments


def load_topics(path: str | Path, only: list[str] | None = None) -> list[Topic]:
    """The topics of a topics file (all, or those whose id is in ``only``, in file order)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise TopicsError(f"topics file {path}: cannot read it: {error.strerror or error}") from None
    except ValueError as error:
        raise TopicsError(f"topics file {path}: not valid JSON: {error}") from None
    raw_topics = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(raw_topics, list) or not raw_topics:
        raise TopicsError(f'topics file {path}: expected an object with a non-empty "topics" list')
    topics = [_topic(path, index, raw) for index, raw in enumerate(raw_topics)]
    ids = [topic.id for topic in topics]
    duplicates = sorted({topic_id for topic_id in ids if ids.count(topic_id) > 1})
    if duplicates:
        raise TopicsError(f"topics file {path}: topic id used twice: {', '.join(duplicates)}")
    if only:
        unknown = [topic_id for topic_id in only if topic_id not in ids]
        if unknown:
            raise TopicsError(f"--topic: not in {path}: {', '.join(unknown)} (topics: {', '.join(ids)})")
        topics = [topic for topic in topics if topic.id in only]
    return topics


def _topic(path, index: int, raw) -> Topic:
    where = f"topics file {path}, topic {index + 1}"
    if not isinstance(raw, dict):
        raise TopicsError(f"{where}: expected an object, got {type(raw).__name__}")
    topic_id = raw.get("id")
    if not isinstance(topic_id, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", topic_id):
        raise TopicsError(f'{where}: "id" must be a name of letters, digits, ".", "_" or "-", got {topic_id!r}')
    where = f"topics file {path}, topic {topic_id}"
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise TopicsError(f'{where}: "query" missing or empty')
    keywords = raw.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) and k.strip() for k in keywords):
        raise TopicsError(f'{where}: "keywords" must be a list of non-empty strings')
    seeds = raw.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, str) for s in seeds):
        raise TopicsError(f'{where}: "seeds" must be a non-empty list of URLs')
    for seed in seeds:
        if not seed.startswith("http://"):
            raise TopicsError(f'{where}: "seeds": the offline web serves http:// URLs only, got {seed!r}')
    label = raw.get("label")
    if not isinstance(label, dict):
        raise TopicsError(f'{where}: "label" missing (an object with "url" and/or "title" patterns)')
    unknown = sorted(set(label) - set(LABEL_KEYS))
    if unknown:
        raise TopicsError(f'{where}: "label" has unknown keys {unknown} (known: {", ".join(LABEL_KEYS)})')
    patterns: dict = {key: _patterns(where, key, label.get(key, [])) for key in LABEL_KEYS if key != "url_title"}
    patterns["url_title"] = _pairs(where, label.get("url_title", []))
    if not patterns["url"] and not patterns["title"] and not patterns["url_title"]:
        raise TopicsError(f'{where}: "label" needs at least one "url", "title" or "url_title" pattern')
    known = {"id", "query", "keywords", "seeds", "label"}
    return Topic(
        id=topic_id,
        query=query.strip(),
        seeds=tuple(seeds),
        label=LabelRule(**patterns),
        keywords=tuple(k.strip() for k in keywords),
        extra={key: value for key, value in raw.items() if key not in known},
    )


def _patterns(where: str, key: str, raw) -> tuple[re.Pattern, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise TopicsError(f'{where}: "label.{key}" must be a list of regular expressions')
    compiled = []
    for pattern in raw:
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise TopicsError(f'{where}: "label.{key}": bad regular expression {pattern!r}: {error}') from None
    return tuple(compiled)


def _pairs(where: str, raw) -> tuple[tuple[re.Pattern, re.Pattern], ...]:
    if not isinstance(raw, list) or not all(isinstance(pair, list) and len(pair) == 2 for pair in raw):
        raise TopicsError(f'{where}: "label.url_title" must be a list of [URL pattern, title pattern] pairs')
    return tuple(
        (_patterns(where, "url_title", [url])[0], _patterns(where, "url_title", [title])[0]) for url, title in raw
    )


class Labeler:
    """Computes each topic's relevant pages on one offline web, walking each seed's link graph once."""

    def __init__(self, web: OfflineWeb):
        self.web = web
        self._graphs: dict[str, LinkGraph] = {}
        self._titles: dict[str, str | None] = {}

    def graph(self, seed: str) -> LinkGraph:
        """The link graph a breadth-first crawl from ``seed`` walks (robots.txt obeyed)."""
        if seed not in self._graphs:
            self._graphs[seed] = crawl(self.web, seed)
        return self._graphs[seed]

    def reachable_pages(self, seeds) -> list[str]:
        """HTML pages (status 200) reachable from any of ``seeds``, in breadth-first order."""
        pages: dict[str, None] = {}
        for seed in seeds:
            pages.update(dict.fromkeys(self.graph(seed).pages))
        return list(pages)

    def known_urls(self) -> list[str]:
        """Every URL the walks fetched (pages, redirects, errors), in the order first fetched."""
        urls: dict[str, None] = {}
        for graph in self._graphs.values():
            urls.update(dict.fromkeys(graph.status))
        return list(urls)

    def relevant(self, topic: Topic) -> list[str]:
        """The topic's relevant URLs, in breadth-first order from its seeds."""
        rule = topic.label
        needs_title = rule.needs_title
        return [
            url
            for url in self.reachable_pages(topic.seeds)
            if rule.matches(url, self.title(url) if needs_title else None)
        ]

    def title(self, url: str) -> str | None:
        """The whitespace-normalised ``<title>`` of an HTML page (None without one)."""
        if url not in self._titles:
            self._titles[url] = page_title(self.web.get(url).body)
        return self._titles[url]


def page_title(body: bytes) -> str | None:
    try:
        document = lxml.html.document_fromstring(body)
    except (lxml.etree.ParserError, ValueError):
        return None
    text = document.findtext(".//title")
    return " ".join(text.split()) if text is not None else None
