"""Reading and validating the ``ADAPTIVE_*`` settings, once per crawl.

:class:`AdaptiveConfig` turns Scrapy settings into typed values and rejects a
wrong value with a :class:`ConfigError` that names the setting, so a typo in a
value fails at start instead of half-way through a crawl; :func:`warn_unknown_settings`
does the same service for a typo in a name, which Scrapy would silently ignore.
Which settings exist, their defaults and their checks are rows of
:mod:`adaptive_spider.settings.table`; this module only applies them.
"""

from __future__ import annotations

import copy
import difflib
import functools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from adaptive_spider.settings.parsers import (
    ConfigError,
    parse_bool,
    parse_list,
    parse_mapping,
)
from adaptive_spider.settings.table import (
    BY_NAME,
    LEAF_SAMPLING,
    PAGE_FIELDS,
    PREFIX,
    RENAMED,
    SETTINGS,
    STOP_CRITERIA,
    STRATEGIES,
    Setting,
)

__all__ = [
    "LEAF_SAMPLING",
    "PAGE_FIELDS",
    "STOP_CRITERIA",
    "STRATEGIES",
    "AdaptiveConfig",
    "ConfigError",
    "default_values",
    "parse_bool",
    "parse_list",
    "parse_mapping",
    "unknown_settings",
    "warn_unknown_settings",
]

logger = logging.getLogger(__name__)


def default_values() -> dict[str, Any]:
    """The ``ADAPTIVE_*`` defaults as a dict (fresh copies of mutable values)."""
    return {setting.name: copy.deepcopy(setting.default) for setting in SETTINGS}


def _raw(settings: Mapping[str, Any] | Any, setting: Setting) -> Any:
    """The value given for ``setting``, or its default when none (or None) is."""
    value = settings.get(setting.name) if settings is not None else None
    return copy.deepcopy(setting.default) if value is None else value


def _read(settings: Mapping[str, Any] | Any) -> dict[str, Any]:
    """Every setting parsed by its row's parser, then the checks that involve two settings."""
    values = {setting.attribute: setting.parse(_raw(settings, setting), setting.name) for setting in SETTINGS}
    if values["epsilon_end"] > values["epsilon_start"]:
        raise ConfigError(
            "ADAPTIVE_EPSILON_END: must not exceed ADAPTIVE_EPSILON_START "
            f"({values['epsilon_end']} > {values['epsilon_start']})"
        )
    return values


def _default_of(setting: Setting) -> Any:
    """A field's default: its row's default, parsed (so ``AdaptiveConfig()`` equals the defaults)."""
    return setting.parse(copy.deepcopy(setting.default), setting.name)


class AdaptiveConfig:
    """Validated values of every ``ADAPTIVE_*`` setting of one crawl.

    One frozen attribute per row of :mod:`adaptive_spider.settings.table`, named after the
    setting (``ADAPTIVE_QNET_GAMMA`` -> ``qnet_gamma``); the fields are added from the table
    below, so a setting is declared once. ``AdaptiveConfig()`` holds the defaults. Build it
    with :meth:`from_settings`.
    """

    if TYPE_CHECKING:  # the fields are made at import time, so type checkers see them as Any

        def __init__(self, **values: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any = None, **overrides: Any) -> AdaptiveConfig:
        """Read and validate ``ADAPTIVE_*`` from Scrapy settings (or a plain dict)."""
        values = _read(settings)
        values.update(overrides)
        return cls(**values)

    def as_settings(self) -> dict[str, Any]:
        """The config as ``ADAPTIVE_*`` settings (for reports and subprocesses)."""
        return {f"{PREFIX}{f.name.upper()}": getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


def _add_fields(cls: type) -> None:
    """Declare one dataclass field per setting, defaulting to the setting's parsed default."""
    cls.__annotations__ = {setting.attribute: Any for setting in SETTINGS}
    for setting in SETTINGS:
        setattr(cls, setting.attribute, field(default_factory=functools.partial(_default_of, setting)))


_add_fields(AdaptiveConfig)
dataclass(frozen=True)(AdaptiveConfig)  # turns the class itself into the dataclass


# -- names that are not settings ----------------------------------------------------------
def unknown_settings(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """Each ``ADAPTIVE_*`` name that no setting has, with the closest real name (or None)."""
    # Compared without the prefix every name shares, which would make any two names look alike.
    known = {name[len(PREFIX) :]: name for name in BY_NAME}

    def closest(name: str) -> str | None:
        if name in RENAMED:
            return RENAMED[name]
        return next((known[m] for m in difflib.get_close_matches(name[len(PREFIX) :], known, n=1)), None)

    return [
        (name, closest(name))
        for name in sorted(names)
        if isinstance(name, str) and name.startswith(PREFIX) and name not in BY_NAME
    ]


def warn_unknown_settings(settings: Iterable[str]) -> None:
    """Log a warning for each misspelled ``ADAPTIVE_*`` setting: Scrapy itself ignores unknown names,
    so without this a typo silently leaves the default in force."""
    for name, closest in unknown_settings(settings):
        hint = f"; did you mean {closest}?" if closest else "; see docs/settings.md for the settings"
        logger.warning("%s is not an adaptive_spider setting, so it has no effect%s", name, hint)
