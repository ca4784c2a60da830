"""Settings that name a component: a built-in name, or the dotted path of a class of one's own.

Scrapy plugs components in by path (``SCHEDULER``, ``SCHEDULER_PRIORITY_QUEUE``,
``DUPEFILTER_CLASS``); ``ADAPTIVE_STRATEGY`` and ``ADAPTIVE_RELEVANCE`` do the same. The
value is kept as given (a built-in name, or the dotted path: what reports, JOBDIR
snapshots and subprocesses see), so the class is loaded when the setting is read, to fail
at start with one line naming the setting, and again where the component is built.

:func:`component` is the parser of such a setting; :func:`load_class` loads a path without
Scrapy (the frontier uses it); :func:`build` makes an instance the way Scrapy makes its
components: ``from_crawler(crawler, *args)`` when there is a crawler and the class has it,
else ``from_settings(settings, *args)``, else the class itself.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any

from adaptive_spider.extras import MissingExtra
from adaptive_spider.settings.parsers import ConfigError, Parser

#: What a check says of a loaded class: None when it fits, else why not ("is not a ...").
Check = Callable[[type], "str | None"]


def load_class(path: str) -> Any:
    """The object at ``module.name`` (``importlib``, as Scrapy's ``load_object``, without Scrapy)."""
    module_name, _, name = path.rpartition(".")
    if not module_name or not name:
        raise ValueError(f"{path!r} is not a dotted path (module.Class)")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {module_name!r} has no {name!r}") from None


def class_path(cls: type) -> str:
    """The dotted path of a class (``module.Qualname``)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def build(cls: Any, crawler: Any, settings: Mapping[str, Any] | Any, *args: Any) -> Any:
    """An instance of ``cls``, made as Scrapy makes its components: ``from_crawler`` (with a
    crawler), ``from_settings`` (with a crawler's settings, or ``settings`` without one), or
    ``cls(*args)``."""
    if crawler is not None and hasattr(cls, "from_crawler"):
        instance = cls.from_crawler(crawler, *args)
        how = "from_crawler"
    elif hasattr(cls, "from_settings"):
        instance = cls.from_settings(crawler.settings if crawler is not None else settings, *args)
        how = "from_settings"
    else:
        instance = cls(*args)
        how = "__init__"
    if instance is None:
        raise TypeError(f"{class_path(cls)}.{how} returned None")
    return instance


def component(builtins: tuple[str, ...], kind: str, check: Check) -> Parser:
    """A setting that is one of ``builtins`` (case-insensitive) or the dotted path of a ``kind``
    class that passes ``check``; a class object is taken too (kept as its path)."""

    def read(raw: Any, name: str) -> str:
        if isinstance(raw, type):
            value = class_path(raw)
            if "<locals>" in value:
                raise ConfigError(f"{name}: {value} is defined inside a function; define it at module level")
        else:
            value = str(raw).strip()
        if value.lower() in builtins:
            return value.lower()
        if "." not in value:
            close = difflib.get_close_matches(value.lower(), builtins, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{name}: unknown value {value!r}{hint}; choose one of {', '.join(builtins)}, "
                f"or the dotted path of a {kind} class"
            )
        obj = _load(value, name, kind)
        problem = check(obj) if isinstance(obj, type) else "is not a class"
        if problem:
            raise ConfigError(f"{name}: {value} {problem}")
        return value

    return Parser(read, f"one of {', '.join(builtins)}, or the dotted path of a {kind} class")


def _load(path: str, name: str, kind: str) -> Any:
    """The object at ``path``, or a ConfigError naming the setting and the closest name there is."""
    module_name, _, attribute = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name != exc.name and not module_name.startswith(exc.name + "."):
            raise ConfigError(f"{name}: importing {module_name} failed: {exc}") from None
        raise ConfigError(
            f"{name}: no module {module_name!r} for {path!r}{_closest_module(module_name)}; "
            f"give a built-in name or the dotted path of a {kind} class"
        ) from None
    except MissingExtra as exc:  # the class needs an extra that is not installed
        raise ConfigError(f"{name}: {exc}") from None
    except Exception as exc:  # the module exists but its import fails: say so, not "unknown"
        raise ConfigError(f"{name}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, attribute):
        names = [n for n in dir(module) if not n.startswith("_")]
        close = difflib.get_close_matches(attribute, names, n=1)
        hint = f"; did you mean {module_name}.{close[0]}?" if close else ""
        raise ConfigError(f"{name}: module {module_name!r} has no {attribute!r}{hint}")
    return getattr(module, attribute)


def _closest_module(module_name: str) -> str:
    """``; did you mean a.b.c?`` for a module whose package exists but not the module itself."""
    package, _, last = module_name.rpartition(".")
    if not package:
        return ""
    try:
        parent = importlib.import_module(package)
    except Exception:
        return ""
    names = [info.name for info in pkgutil.iter_modules(getattr(parent, "__path__", []))]
    close = difflib.get_close_matches(last, names, n=1)
    return f" (did you mean {package}.{close[0]}?)" if close else ""


def read_setting(settings: Mapping[str, Any] | Any, name: str) -> Any:
    """One ``ADAPTIVE_*`` setting of ``settings`` (Scrapy settings or a dict), parsed by its row
    of the table, its default when not given: for a component that reads a setting of its own."""
    from adaptive_spider.settings.config import _raw
    from adaptive_spider.settings.table import BY_NAME

    setting = BY_NAME[name]
    return setting.parse(_raw(settings, setting), name)
