"""How one raw setting value becomes a typed, checked value.

A setting arrives as whatever a project wrote: a Python value in ``settings.py``,
a string from ``-s NAME=VALUE``, JSON from a settings profile. Each parser here
accepts all of those forms and raises :class:`ConfigError` whose message starts
with the setting's name, so a typo fails at start with one clear line instead of
half-way through a crawl. :mod:`adaptive_spider.settings.table` pairs every
setting with one of them; ``accepts`` is what docs/settings.md says about it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A setting or argument has a value the crawl cannot use; the message names it."""


@dataclass(frozen=True)
class Parser:
    """A named check: ``parser(raw, name)`` returns the value or raises ConfigError naming ``name``."""

    read: Callable[[Any, str], Any]
    #: What the setting accepts, for the docs; a callable when the options live in a module
    #: that imports the settings (so they can only be read late).
    accepts: str | Callable[[], str]

    def __call__(self, raw: Any, name: str) -> Any:
        return self.read(raw, name)

    def describe(self) -> str:
        return self.accepts() if callable(self.accepts) else self.accepts


# -- the shapes shared by many settings ------------------------------------------------------
def parse_list(raw: Any, name: str) -> list[str]:
    """A list setting given as a list or a comma-separated string."""
    if raw is None or raw == "":
        return []
    items: list[Any] | tuple[Any, ...]
    if isinstance(raw, str):
        items = raw.split(",")
    elif isinstance(raw, (list, tuple)):
        items = raw
    else:
        raise ConfigError(f"{name}: expected a list or a comma-separated string, got {raw!r}")
    return [str(item).strip() for item in items if str(item).strip()]


def parse_mapping(raw: Any, name: str, *, low: float | None = 0.0) -> dict[str, float]:
    """A mapping of name -> non-negative number, given as a dict, JSON, or ``a=1,b=2``."""
    if raw is None or raw == "" or raw == {}:
        return {}
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{name}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        else:
            pairs = {}
            for part in filter(None, (p.strip() for p in text.split(","))):
                key, sep, value = part.partition("=")
                if not sep or not key.strip():
                    raise ConfigError(f"{name}: expected name=number pairs, got {part!r}")
                pairs[key.strip()] = value.strip()
            raw = pairs
    if not hasattr(raw, "items"):
        raise ConfigError(f"{name}: expected a mapping, got {raw!r}")
    result = {}
    for key, value in raw.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: value of {key!r} is not a number: {value!r}") from None
        if math.isnan(number) or (low is not None and number < low):
            raise ConfigError(f"{name}: value of {key!r} must be >= {low}, got {value!r}")
        result[str(key).strip().lower()] = number
    return result


def parse_bool(raw: Any, name: str) -> bool:
    """The one boolean reading: a bool, a number, or true/false, yes/no, on/off, 1/0 (any case)."""
    if isinstance(raw, str):
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{name}: expected true or false, got {raw!r}")
    return bool(raw)


def _number(kind: type, low: float | None, high: float | None, low_open: bool) -> Callable[[Any, str], Any]:
    def read(raw: Any, name: str) -> Any:
        try:
            if isinstance(raw, bool):  # True is an int to Python, never a count to a user
                raise TypeError
            value = kind(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: expected {kind.__name__}, got {raw!r}") from None
        if kind is float and math.isnan(value):
            raise ConfigError(f"{name}: expected a number, got {raw!r}")
        if low is not None and (value <= low if low_open else value < low):
            bound = f"> {low}" if low_open else f">= {low}"
            raise ConfigError(f"{name}: must be {bound}, got {raw!r}")
        if high is not None and value > high:
            raise ConfigError(f"{name}: must be <= {high}, got {raw!r}")
        return value

    return read


def _range(kind: str, low: float | None, high: float | None, low_open: bool) -> str:
    bounds = [f"> {low}" if low_open else f">= {low}"] if low is not None else []
    bounds += [f"<= {high}"] if high is not None else []
    return f"{kind} {', '.join(bounds)}".strip()


def integer(low: int | None = None, high: int | None = None) -> Parser:
    """A whole number within [low, high]."""
    return Parser(_number(int, low, high, False), _range("int", low, high, False))


def real(low: float | None = None, high: float | None = None, *, low_open: bool = False) -> Parser:
    """A number within [low, high] (``low_open``: strictly above low)."""
    return Parser(_number(float, low, high, low_open), _range("float", low, high, low_open))


def choice(options: tuple[str, ...] | Callable[[], tuple[str, ...]]) -> Parser:
    """One of ``options`` (case-insensitive); a callable defers an import to the first read."""

    def allowed() -> tuple[str, ...]:
        return options() if callable(options) else options

    def read(raw: Any, name: str) -> str:
        value = str(raw).strip().lower()
        if value not in allowed():
            raise ConfigError(f"{name}: unknown value {value!r}; choose one of {', '.join(allowed())}")
        return value

    return Parser(read, lambda: "one of " + ", ".join(allowed()))


def choice_or_bool(options: tuple[str, ...], when_true: str, when_false: str) -> Parser:
    """One of ``options``, or a boolean read as ``when_true`` / ``when_false`` (a setting that
    was a switch and grew modes: the projects that set it to True keep what they had)."""
    pick = choice(options)

    def read(raw: Any, name: str) -> str:
        if isinstance(raw, str) and raw.strip().lower() in options:
            return pick(raw, name)
        try:
            return when_true if parse_bool(raw, name) else when_false
        except ConfigError:
            raise ConfigError(
                f"{name}: unknown value {raw!r}; choose one of {', '.join(options)} (or true for {when_true!r})"
            ) from None

    return Parser(read, f"one of {', '.join(options)}; true means {when_true}, false {when_false}")


BOOLEAN = Parser(parse_bool, "bool (true/false, yes/no, on/off, 1/0)")
TEXT = Parser(lambda raw, name: str(raw or "").strip(), "text")
TERMS = Parser(lambda raw, name: tuple(parse_list(raw, name)), "list or comma-separated text")
WEIGHTS = Parser(parse_mapping, "mapping name -> number >= 0 (dict, JSON or a=1,b=2)")


def checked_by_reader(accepts: str) -> Parser:
    """A value passed on as given: its own component checks it when it starts (the search index
    pipeline, the robots.txt location middleware). Those work without the add-on, so their errors
    (a pipeline turned off with a message) stay theirs."""
    return Parser(lambda raw, name: raw, accepts)


# -- settings with a shape of their own -------------------------------------------------------
_LANGUAGE_TAG = re.compile(r"[a-z]{2,8}(?:[-_][a-z0-9]{1,8})*")


def _language(raw: Any, name: str) -> str:
    value = str(raw if raw is not None else "").strip().lower()
    if value in ("auto", "any"):
        return value
    if not _LANGUAGE_TAG.fullmatch(value):
        raise ConfigError(f"{name}: expected auto, any or a language tag such as en or pt-BR, got {raw!r}")
    return value.replace("_", "-").split("-", 1)[0]


LANGUAGE = Parser(_language, 'auto, any, or a language tag ("en", "pt-BR": its primary subtag counts)')


def _hidden_layers(raw: Any, name: str) -> tuple[int, ...]:
    layers = parse_list(raw, name)
    try:
        sizes = tuple(int(size) for size in layers)
    except ValueError:
        raise ConfigError(f"{name}: expected layer sizes such as 30,15, got {layers!r}") from None
    if not sizes or any(size < 1 or size > 4096 for size in sizes):
        raise ConfigError(f"{name}: layer sizes must be between 1 and 4096, got {sizes!r}")
    return sizes


HIDDEN_LAYERS = Parser(_hidden_layers, "layer sizes 1 to 4096 (list or 30,15)")


def parts_weights(parts: tuple[str, ...], defaults: dict[str, float], word: str, all_zero: str) -> Parser:
    """Weights of named parts (each a ``word``), merged over ``defaults``; ``all_zero`` says one must stay > 0."""

    def read(raw: Any, name: str) -> dict[str, float]:
        weights = parse_mapping(raw, name)
        unknown = sorted(set(weights) - set(parts))
        if unknown:
            raise ConfigError(f"{name}: unknown {word}(s) {', '.join(unknown)}; {word}s are {', '.join(parts)}")
        merged = {**defaults, **weights}
        if not any(merged.values()):
            raise ConfigError(f"{name}: {all_zero}")
        return merged

    return Parser(read, f"mapping of {', '.join(parts)} -> number >= 0; missing ones keep their default")


def _sufficiency_weights(raw: Any, name: str) -> dict[str, float]:
    from adaptive_spider.sufficiency.estimator import (
        COMPONENTS,  # the estimator imports the settings
    )

    weights = parse_mapping(raw, name)
    unknown = sorted(set(weights) - set(COMPONENTS))
    if unknown:
        raise ConfigError(f"{name}: unknown part(s) {', '.join(unknown)}; parts are {', '.join(COMPONENTS)}")
    return weights


SUFFICIENCY_WEIGHTS = Parser(
    _sufficiency_weights, "mapping of coverage, consistency, redundancy, domain_coverage -> number >= 0"
)


def criteria(options: tuple[str, ...]) -> Parser:
    """A list of names, each one of ``options``."""

    def read(raw: Any, name: str) -> tuple[str, ...]:
        chosen = tuple(item.lower() for item in parse_list(raw, name))
        for item in chosen:
            if item not in options:
                raise ConfigError(f"{name}: unknown criterion {item!r}; choose from {', '.join(options)}")
        return chosen

    return Parser(read, f"list of {', '.join(options)}")


def _distributed_key(raw: Any, name: str) -> str:
    key = str(raw or "").strip()
    try:
        key % {"spider": "spider"}
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"{name}: only %(spider)s may be substituted, got {key!r}") from None
    if not key:
        raise ConfigError(f"{name}: must not be empty")
    return key


DISTRIBUTED_KEY = Parser(_distributed_key, "text; %(spider)s is the spider's name")

_PARAM_NAME = re.compile(r"^[A-Za-z0-9_.*\[\]-]+$")


def _param_names(raw: Any, name: str) -> tuple[str, ...]:
    names = parse_list(raw, name)
    for param in names:
        if not _PARAM_NAME.match(param):
            raise ConfigError(f"{name}: not a URL parameter name: {param!r}")
    return tuple(param.lower() for param in names)


PARAM_NAMES = Parser(_param_names, "list of URL parameter names (* matches any characters)")


def _pattern_limits(raw: Any, name: str) -> dict[str, int]:
    if raw is None or raw == "" or raw == {}:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{name}: expected a JSON object of regex -> count ({exc.msg} at column {exc.colno})"
            ) from None
    if not hasattr(raw, "items"):
        raise ConfigError(f"{name}: expected a mapping of regex -> count, got {raw!r}")
    limits = {}
    for pattern, limit in raw.items():
        try:
            re.compile(str(pattern))
        except re.error as exc:
            raise ConfigError(f"{name}: invalid regex {pattern!r} ({exc})") from None
        if isinstance(limit, bool) or not isinstance(limit, (int, str)) or not str(limit).strip().isdigit():
            raise ConfigError(f"{name}: limit of {pattern!r} must be a whole number >= 0, got {limit!r}")
        limits[str(pattern)] = int(limit)
    return limits


PATTERN_LIMITS = Parser(_pattern_limits, "mapping regex -> whole number >= 0 (dict or JSON)")


def _file_path(raw: Any, name: str) -> str:
    path = str(raw or "").strip()
    if path:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConfigError(f"{name}: directory {parent!r} does not exist")
        if os.path.isdir(path):
            raise ConfigError(f"{name}: {path!r} is a directory; give a file name")
    return path


FILE_PATH = Parser(_file_path, "a file path in an existing directory, or empty")
SUFFICIENCY_REPORT = Parser(
    lambda raw, name: "" if raw in (None, False) else str(raw).strip(), "empty, auto, or a file path"
)


def _existing_path(raw: Any, name: str) -> str:
    path = str(raw or "").strip()
    if path and not os.path.exists(path):
        raise ConfigError(f"{name}: {path!r} does not exist")
    return path


EXISTING_PATH = Parser(_existing_path, "an existing file or folder, or empty")
