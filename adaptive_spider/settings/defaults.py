"""Every ``ADAPTIVE_*`` setting with its default value, as module-level names.

This module plays the part Scrapy's own ``scrapy.settings.default_settings``
plays for Scrapy's settings: ``Settings.setmodule`` and code that reads
``defaults.ADAPTIVE_SEED`` see every default here. The values are made from
:mod:`adaptive_spider.settings.table`, where each setting is declared once; the
add-on (:class:`adaptive_spider.addon.AdaptiveAddon`) registers them with
``addon`` priority, so a project's ``settings.py``, ``-s`` on the command line
and spider arguments all override them. Only ``ADAPTIVE_*`` names are upper-case
here, since ``setmodule`` takes every upper-case name for a setting.
"""

from __future__ import annotations

import copy as _copy
from typing import Any as _Any

from adaptive_spider.settings import table as _table

globals().update({_setting.name: _copy.deepcopy(_setting.default) for _setting in _table.SETTINGS})


def __getattr__(name: str) -> _Any:
    """Only reached for a name that is not a setting (the names above are real attributes);
    declared so type checkers accept ``defaults.ADAPTIVE_*``."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
