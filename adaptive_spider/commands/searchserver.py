"""``scrapy searchserver``: serve the result page for one or more indexes."""

from __future__ import annotations

import argparse

from adaptive_spider.search.command import SearchCommand
from adaptive_spider.search.synonyms import SynonymDictionary
from adaptive_spider.search.webapp import SearchApp, index_names, make_server, page_url


class Command(SearchCommand):
    name = "searchserver"

    usage = "--index [NAME=]DIR [--index ...] [--host 127.0.0.1] [--port 8080]"
    summary = "Serve a search result page for indexes built with 'scrapy index'"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        self.add_index_option(parser, several=True)
        parser.add_argument(
            "--host", default="127.0.0.1", help="address to bind (default: %(default)s, this machine only)"
        )
        parser.add_argument("--port", type=int, default=8080, help="port (default: %(default)s; 0: any free port)")
        parser.add_argument("--synonyms", metavar="FILE", help="synonym groups, one per line")
        parser.add_argument("--top", type=int, default=10, help="results per page")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        synonyms = SynonymDictionary.load(opts.synonyms) if opts.synonyms else None
        app = SearchApp(index_names(opts.index), synonyms=synonyms, top=opts.top)
        try:
            server = make_server(app, opts.host, opts.port)
        except OSError as error:
            self.fail(f"cannot listen on {opts.host}:{opts.port}: {error.strerror}")
            return
        print(f"serving {', '.join(app.indexes)} on {page_url(server)}", flush=True)
        try:
            server.serve_forever()
        finally:
            server.server_close()
