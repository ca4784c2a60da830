"""Validation of template data: turns parsed YAML/JSON into fields, options and actions.

Every problem raises :class:`TemplateError` naming the file, the line and the
field (``fields[1].xpath``, ``options.max_pages``, ``actions[2]``), so a user
can fix a template from one line of output.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn, overload
from urllib.parse import urlparse

from parsel import Selector

from adaptive_spider.extract.actions import ACTION_KINDS, Action
from adaptive_spider.extract.errors import TemplateError
from adaptive_spider.extract.fields import FIELD_TYPES, CleanupRule, Field
from adaptive_spider.extract.loader import line_of

TEMPLATE_KEYS = ("name", "description", "fields", "options", "actions")
FIELD_KEYS = ("name", "xpath", "type", "attribute", "clean", "ranking", "multiple", "required")
CLEAN_KEYS = ("pattern", "replace")
OPTION_KEYS = (
    "documents",
    "pagination",
    "exclude",
    "max_pages",
    "max_documents",
    "max_depth",
    "wall_time",
    "robots_txt",
)
# Keys every document has; fields may not reuse them.
# The keys every document has besides its fields; ``sha1`` identifies it in the search index.
RESERVED_FIELD_NAMES = ("url", "template", "ranking", "sha1")
DEFAULT_SCROLL_PAUSE_MS = 250

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")
_DURATION_UNITS = {None: 1, "s": 1, "m": 60, "h": 3600}


@dataclass(frozen=True)
class Options:
    """How a template crawls: documents per element, link scope, limits, robots.txt."""

    documents: str | None = None
    pagination: str | None = None
    exclude: tuple[re.Pattern[str], ...] = ()
    max_pages: int | None = None
    max_documents: int | None = None
    max_depth: int | None = None
    wall_time: float | None = None
    # site ("host[:port]", or "*" for every site) -> robots.txt URL or path
    robots_txt: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TemplateParts:
    """The validated content of a template file."""

    name: str
    fields: tuple[Field, ...]
    options: Options
    actions: tuple[Action, ...]


class _Checker:
    """Validates one template's data, raising errors located in *path*."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = path

    def fail(self, container: object, key: Any, where: str, problem: str) -> NoReturn:
        raise TemplateError(self.path, line_of(container, key), where, problem)

    # -- generic checks ------------------------------------------------------

    def mapping(self, container: object, key: Any, where: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(container, key, where, f"must be a mapping, got {_describe(value)}")
        return value

    def known_keys(self, mapping: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
        for key in mapping:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else f" (expected one of: {', '.join(allowed)})"
                self.fail(mapping, key, f"{where}{key}", f"unknown key{suggestion}")

    @overload
    def text(self, mapping: dict[str, Any], key: str, where: str, required: Literal[True]) -> str: ...
    @overload
    def text(self, mapping: dict[str, Any], key: str, where: str, required: bool = False) -> str | None: ...
    def text(self, mapping: dict[str, Any], key: str, where: str, required: bool = False) -> str | None:
        if key not in mapping or mapping[key] is None:
            if required:
                self.fail(mapping, key, where, "missing")
            return None
        value = mapping[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(mapping, key, where, f"must be non-empty text, got {_describe(value)}")
        return value.strip()

    def flag(self, mapping: dict[str, Any], key: str, where: str) -> bool:
        value = mapping.get(key, False)
        if not isinstance(value, bool):
            self.fail(mapping, key, where, f"must be true or false, got {_describe(value)}")
        return value

    def positive_int(self, mapping: dict[str, Any], key: str, where: str) -> int | None:
        value = mapping.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.fail(mapping, key, where, f"must be a positive integer, got {_describe(value)}")
        return value

    @overload
    def xpath(self, mapping: dict[str, Any], key: str, where: str, required: Literal[True]) -> str: ...
    @overload
    def xpath(self, mapping: dict[str, Any], key: str, where: str, required: bool = False) -> str | None: ...
    def xpath(self, mapping: dict[str, Any], key: str, where: str, required: bool = False) -> str | None:
        expression = self.text(mapping, key, where, required)
        if expression is None:
            return None
        try:
            # parsel's namespaces (re:, set:) are valid in templates too.
            Selector(text="<html></html>").xpath(expression)
        except ValueError as exc:
            self.fail(mapping, key, where, f"invalid XPath {expression!r} ({_reason(exc)})")
        return expression

    def regex(self, container: object, key: Any, where: str, pattern: Any) -> re.Pattern[str]:
        if not isinstance(pattern, str) or not pattern:
            self.fail(container, key, where, f"must be a regular expression, got {_describe(pattern)}")
        try:
            return re.compile(pattern)
        except re.error as exc:
            self.fail(container, key, where, f"invalid regular expression {pattern!r} ({exc})")

    @staticmethod
    def items(mapping: dict[str, Any], key: str) -> list[tuple[Any, Any, Any]]:
        """``(container, position, item)`` for each item of *mapping[key]*, where
        ``container[position]`` locates the item's line; a single value counts as a list of one."""
        value = mapping.get(key)
        if value is None:
            return []
        if isinstance(value, list):
            return [(value, index, item) for index, item in enumerate(value)]
        return [(mapping, key, value)]

    # -- template sections ---------------------------------------------------

    def template(self, data: Any, default_name: str) -> TemplateParts:
        if not isinstance(data, dict):
            self.fail(
                data, 0, "template", f"must be a mapping of name, fields, options, actions; got {_describe(data)}"
            )
        self.known_keys(data, TEMPLATE_KEYS, "")
        name = self.text(data, "name", "name") or default_name
        fields = self.fields(data)
        options = self.options(data)
        actions = self.actions(data)
        return TemplateParts(name=name, fields=fields, options=options, actions=actions)

    def fields(self, data: dict[str, Any]) -> tuple[Field, ...]:
        if "fields" not in data:
            self.fail(data, "fields", "fields", "missing (a template needs at least one field)")
        specs = data["fields"]
        if not isinstance(specs, list) or not specs:
            self.fail(data, "fields", "fields", f"must be a non-empty list of fields, got {_describe(specs)}")
        fields: list[Field] = []
        seen: set[str] = set()
        for index, spec in enumerate(specs):
            field = self.field(specs, index, spec)
            if field.name in seen:
                self.fail(specs, index, f"fields[{index}].name", f"duplicate field name {field.name!r}")
            seen.add(field.name)
            fields.append(field)
        return tuple(fields)

    def field(self, specs: list[Any], index: int, spec: Any) -> Field:
        position = f"fields[{index}]"
        spec = self.mapping(specs, index, position, spec)
        name = spec.get("name")
        where = f"field {name!r} ({position})" if isinstance(name, str) and name else position
        self.known_keys(spec, FIELD_KEYS, f"{where}.")
        name = self.text(spec, "name", f"{position}.name", required=True)
        if not _IDENTIFIER.match(name) or name in RESERVED_FIELD_NAMES:
            self.fail(
                spec,
                "name",
                f"{position}.name",
                f"{name!r} must be an identifier other than {', '.join(RESERVED_FIELD_NAMES)}",
            )
        field_type = spec.get("type", "text")
        if field_type not in FIELD_TYPES:
            self.fail(
                spec,
                "type",
                f"{where}.type",
                f"unknown type {field_type!r} (expected one of: {', '.join(FIELD_TYPES)})",
            )
        ranking = self.text(spec, "ranking", f"{where}.ranking")
        # A ranking variable becomes a field of the search index's document: not one of the reserved keys.
        if ranking is not None and (not _IDENTIFIER.match(ranking) or ranking in RESERVED_FIELD_NAMES):
            self.fail(
                spec,
                "ranking",
                f"{where}.ranking",
                f"{ranking!r} must be an identifier (letters, digits, _) other than {', '.join(RESERVED_FIELD_NAMES)}",
            )
        return Field(
            name=name,
            xpath=self.xpath(spec, "xpath", f"{where}.xpath", required=True),
            type=field_type,
            attributes=self.attributes(spec, f"{where}.attribute"),
            cleanup=self.cleanup(spec, f"{where}.clean"),
            ranking=ranking,
            multiple=self.flag(spec, "multiple", f"{where}.multiple"),
            required=self.flag(spec, "required", f"{where}.required"),
        )

    def attributes(self, spec: dict[str, Any], where: str) -> tuple[str, ...]:
        names: list[str] = []
        for container, position, name in self.items(spec, "attribute"):
            if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
                self.fail(
                    container, position, where, f"must be an attribute name or a list of them, got {_describe(name)}"
                )
            names.append(name.strip())
        return tuple(names)

    def cleanup(self, spec: dict[str, Any], where: str) -> tuple[CleanupRule, ...]:
        rules: list[CleanupRule] = []
        for index, (container, position, rule) in enumerate(self.items(spec, "clean")):
            rule_where = f"{where}[{index}]"
            if isinstance(rule, dict):
                self.known_keys(rule, CLEAN_KEYS, f"{rule_where}.")
                if "pattern" not in rule:
                    self.fail(rule, "pattern", f"{rule_where}.pattern", "missing")
                replacement = rule.get("replace", "")
                if not isinstance(replacement, str):
                    self.fail(rule, "replace", f"{rule_where}.replace", f"must be text, got {_describe(replacement)}")
                pattern = self.regex(rule, "pattern", f"{rule_where}.pattern", rule["pattern"])
                rules.append(CleanupRule(pattern, replacement))
            else:
                rules.append(CleanupRule(self.regex(container, position, rule_where, rule)))
        return tuple(rules)

    def options(self, data: dict[str, Any]) -> Options:
        if data.get("options") is None:
            return Options()
        spec = self.mapping(data, "options", "options", data["options"])
        self.known_keys(spec, OPTION_KEYS, "options.")
        exclude = tuple(
            self.regex(container, position, f"options.exclude[{index}]", pattern)
            for index, (container, position, pattern) in enumerate(self.items(spec, "exclude"))
        )
        return Options(
            documents=self.xpath(spec, "documents", "options.documents"),
            pagination=self.xpath(spec, "pagination", "options.pagination"),
            exclude=exclude,
            max_pages=self.positive_int(spec, "max_pages", "options.max_pages"),
            max_documents=self.positive_int(spec, "max_documents", "options.max_documents"),
            max_depth=self.positive_int(spec, "max_depth", "options.max_depth"),
            wall_time=self.duration(spec, "wall_time", "options.wall_time"),
            robots_txt=self.robots_txt(spec, "robots_txt", "options.robots_txt"),
        )

    def duration(self, spec: dict[str, Any], key: str, where: str) -> float | None:
        value = spec.get(key)
        if value is None:
            return None
        seconds: float | None = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = float(value)
        elif isinstance(value, str) and (match := _DURATION.match(value)):
            seconds = float(match[1]) * _DURATION_UNITS[match[2]]
        if seconds is None or seconds <= 0:
            self.fail(
                spec,
                key,
                where,
                f"must be a positive duration in seconds (or '90s', '5m', '1h'), got {_describe(value)}",
            )
        return seconds

    def robots_txt(self, spec: dict[str, Any], key: str, where: str) -> tuple[tuple[str, str], ...]:
        value = spec.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            try:
                return (robots_txt_entry(value),)
            except ValueError as exc:
                self.fail(spec, key, where, str(exc))
        if isinstance(value, dict):
            entries: list[tuple[str, str]] = []
            for site, location in value.items():
                try:
                    entries.append(robots_txt_site_entry(site, location))
                except ValueError as exc:
                    self.fail(value, site, f"{where}.{site}", str(exc))
            return tuple(entries)
        self.fail(spec, key, where, f"must be a URL, a path, or a mapping of site to URL; got {_describe(value)}")

    def actions(self, data: dict[str, Any]) -> tuple[Action, ...]:
        return tuple(
            self.action(container, position, f"actions[{index}]", spec)
            for index, (container, position, spec) in enumerate(self.items(data, "actions"))
        )

    def action(self, container: object, key: Any, where: str, spec: Any) -> Action:
        if not isinstance(spec, dict) or len(spec) != 1:
            self.fail(
                container, key, where, f"must be one of {{{': ..., '.join(ACTION_KINDS)}: ...}}, got {_describe(spec)}"
            )
        kind, argument = next(iter(spec.items()))
        if kind not in ACTION_KINDS:
            self.fail(spec, kind, where, f"unknown action {kind!r} (expected one of: {', '.join(ACTION_KINDS)})")
        where = f"{where}.{kind}"
        if kind == "wait":
            return Action("wait", milliseconds=self.action_count(spec, kind, where, argument, "milliseconds"))
        if kind == "scroll":
            if isinstance(argument, dict):
                self.known_keys(argument, ("times", "pause"), f"{where}.")
                times = self.action_count(argument, "times", f"{where}.times", argument.get("times", 1), "times")
                pause = self.action_count(
                    argument, "pause", f"{where}.pause", argument.get("pause", DEFAULT_SCROLL_PAUSE_MS), "milliseconds"
                )
                return Action("scroll", times=times, milliseconds=pause)
            times = self.action_count(spec, kind, where, argument, "times")
            return Action("scroll", times=times, milliseconds=DEFAULT_SCROLL_PAUSE_MS)
        # click and wait_for: a selector, or {selector, timeout}
        timeout = None
        if isinstance(argument, dict):
            self.known_keys(argument, ("selector", "timeout"), f"{where}.")
            if "timeout" in argument:
                timeout = self.action_count(
                    argument, "timeout", f"{where}.timeout", argument["timeout"], "milliseconds"
                )
            selector = self.text(argument, "selector", f"{where}.selector", required=True)
        else:
            selector = self.text(spec, kind, where, required=True)
        return Action(kind, selector=selector, milliseconds=timeout)

    def action_count(self, container: object, key: Any, where: str, value: Any, unit: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (unit == "times" and value < 1):
            self.fail(
                container,
                key,
                where,
                f"must be a {'positive' if unit == 'times' else 'non-negative'} whole number of {unit}, "
                f"got {_describe(value)}",
            )
        return value


def robots_txt_entry(location: str) -> tuple[str, str]:
    """A template's single robots.txt location: a path (every site) or a URL (its own site)."""
    location = location.strip()
    if location.startswith("/"):
        return ("*", location)
    parsed = urlparse(location)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"must be an http(s) URL or a path starting with '/', got {location!r}")
    return (parsed.netloc, location)


def robots_txt_site_entry(site: object, location: object) -> tuple[str, str]:
    """One ``site: location`` pair of a robots.txt mapping."""
    if not isinstance(site, str) or not site.strip() or "/" in site:
        raise ValueError(f"site must be 'host[:port]' or '*', got {site!r}")
    if not isinstance(location, str):
        raise ValueError(f"must be an http(s) URL or a path starting with '/', got {location!r}")
    _, location = robots_txt_entry(location)
    return (site.strip(), location)


def parse_template(data: Any, path: str | Path | None, default_name: str) -> TemplateParts:
    """Validate parsed template *data* read from *path*."""
    return _Checker(path).template(data, default_name)


def _describe(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _reason(exc: Exception) -> str:
    # parsel says "XPath error: Invalid expression in //div["; keep the first clause.
    return str(exc).split(" in ", 1)[0]
