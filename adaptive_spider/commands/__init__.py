"""Scrapy commands for the search index (registered in pyproject.toml under the
``scrapy.commands`` entry-point group, so they work in any Scrapy project):

- ``scrapy index``: add documents from a feed file (JSONL, JSON, CSV) to an index;
- ``scrapy search``: query an index, or write a TREC run for a file of queries;
- ``scrapy searchserver``: serve the result page on 127.0.0.1.
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
