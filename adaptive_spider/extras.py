"""The optional extras of the ``adaptive-spider`` distribution, and the error that names one.

``pip install adaptive-spider`` installs what the package imports in normal use; a part
that needs more (a browser, Redis) says which extra to install when it is missing::

    pip install 'adaptive-spider[javascript]'   # scrapy-playwright: the javascript profile, browser actions
    pip install 'adaptive-spider[distributed]'  # scrapy-redis and redis: the distributed profile
    pip install 'adaptive-spider[classifier]'   # scikit-learn: the page classifier (ADAPTIVE_RELEVANCE)
"""

from __future__ import annotations

from importlib.util import find_spec

#: Extra name -> (the modules it provides, the packages to name in an error).
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "javascript": (("scrapy_playwright",), "scrapy-playwright"),
    "distributed": (("scrapy_redis", "redis"), "scrapy-redis and redis"),
    "classifier": (("sklearn",), "scikit-learn"),
}


class MissingExtra(ImportError):
    """An optional part of adaptive_spider is used without the extra it needs."""


def missing_extra_message(extra: str, feature: str) -> str:
    return f"{feature} needs {EXTRAS[extra][1]}: pip install 'adaptive-spider[{extra}]'"


def require_extra(extra: str, feature: str) -> None:
    """Raise :class:`MissingExtra` naming *extra* when one of its modules is not installed."""
    if not all(find_spec(module) is not None for module in EXTRAS[extra][0]):
        raise MissingExtra(missing_extra_message(extra, feature))
