"""Base class of the search commands (``scrapy index``, ``scrapy search``, ``scrapy searchserver``).

It holds what the three share: their help texts as class attributes, the
``--index`` option, the BM25 options and one-line errors.  It lives outside
``adaptive_spider.commands`` because Scrapy lists every command class found in a
commands module, base classes included.
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
    #: The arguments after ``scrapy NAME`` in the usage line.
    usage: ClassVar[str] = ""
    #: One line for ``scrapy -h``.
    summary: ClassVar[str] = ""
    #: The paragraph of ``scrapy NAME -h`` (the summary if empty).
    description: ClassVar[str] = ""

    def syntax(self) -> str:
        return self.usage

    def short_desc(self) -> str:
        return self.summary

    def long_desc(self) -> str:
        return self.description or self.summary

    @staticmethod
    def add_index_option(parser: argparse.ArgumentParser, several: bool = False) -> None:
        """``--index DIR``, or with *several* a repeatable ``--index [NAME=]DIR``."""
        if several:
            parser.add_argument(
                "--index",
                action="append",
                required=True,
                metavar="[NAME=]DIR",
                help="index to serve (repeat for an index selector)",
            )
        else:
            parser.add_argument("--index", required=True, metavar="DIR", help="index directory")

    @staticmethod
    def add_bm25_options(parser: argparse.ArgumentParser, k: float | None = None, b: float | None = None) -> None:
        """``--k`` and ``--b``, defaulting to *k* and *b* (None: to the index's own)."""
        for name, default in (("k", k), ("b", b)):
            shown = "the index's" if default is None else "%(default)s"
            parser.add_argument(f"--{name}", type=float, default=default, help=f"BM25 {name} (default: {shown})")

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
