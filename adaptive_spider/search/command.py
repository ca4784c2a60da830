"""Base class of the search commands (``scrapy index``, ``scrapy search``, ``scrapy searchserver``).

It lives outside ``adaptive_spider.commands`` because Scrapy lists every command class
found in a commands module, base classes included.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, ClassVar

from scrapy.commands import ScrapyCommand

from adaptive_spider.search.errors import SearchError


class SearchCommand(ScrapyCommand):
    """Base of the search commands: no crawler, no log, one-line errors."""

    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}
    name = "search"

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        try:
            self.execute(args, opts)
        except SearchError as error:
            self.fail(str(error))
        except KeyboardInterrupt:
            self.exitcode = 130

    def fail(self, message: str) -> None:
        print(f"scrapy {self.name}: error: {message}", file=sys.stderr)
        self.exitcode = 1

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        raise NotImplementedError
