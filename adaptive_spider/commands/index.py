"""``scrapy index``: build or extend a search index from a feed file."""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Iterator
from typing import Any

from adaptive_spider.search import Analyzer, SearchIndex
from adaptive_spider.search.analysis import DEFAULT_MIN_LENGTH, DEFAULT_STEMMER, DEFAULT_STOP_WORDS
from adaptive_spider.search.command import SearchCommand
from adaptive_spider.search.documents import guess_id_field, search_document
from adaptive_spider.search.errors import SearchError
from adaptive_spider.search.fields import text_fields_of
from adaptive_spider.search.index import DEFAULT_B, DEFAULT_K
from adaptive_spider.search.sources import read_documents
from adaptive_spider.search.storage import index_file


def guess_text_fields(record: dict, id_field: str) -> list[str]:
    """Text fields of *record* other than the id and ones holding numbers."""
    fields = text_fields_of(record, id_field)
    if not fields:
        raise SearchError("the first record has no text fields; pass --fields")
    return fields


class Command(SearchCommand):
    name = "index"

    usage = "--input FILE --index DIR [options]"
    summary = "Add documents from a JSONL/JSON/CSV file to a search index"
    description = (
        "Add the records of FILE (a Scrapy feed or any JSON lines, JSON array or CSV "
        "file) to the search index in DIR, creating it if needed. Records with an id "
        "already in the index replace the old ones. Analyzer options only apply when "
        "the index is created (or with --new). A template crawl's ranking variables "
        "become numeric fields (for --formula) and its documents are identified by sha1."
    )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--input", "-i", required=True, metavar="FILE", help="file to index")
        self.add_index_option(parser)
        parser.add_argument(
            "--format", choices=["jsonl", "json", "csv", "tsv"], help="input format (default: from the file name)"
        )
        parser.add_argument(
            "--id-field", metavar="F", help="id field (default: id, else sha1 for template documents, else url)"
        )
        parser.add_argument(
            "--fields", metavar="A,B", help="text fields to index (default: the first record's text fields)"
        )
        parser.add_argument("--weights", metavar="A=W,...", help="field weights, e.g. title=3")
        parser.add_argument(
            "--stop-words",
            default=DEFAULT_STOP_WORDS,
            metavar="LIST",
            help="english, short, none, a,b,c or a file (default: %(default)s)",
        )
        parser.add_argument(
            "--min-length",
            type=int,
            default=DEFAULT_MIN_LENGTH,
            metavar="N",
            help="skip words of length <= N (default: %(default)s)",
        )
        parser.add_argument(
            "--stemmer",
            default=DEFAULT_STEMMER,
            metavar="NAME",
            help="Snowball stemmer (porter, english, german, ...) or 'none' (default: %(default)s)",
        )
        self.add_bm25_options(parser, DEFAULT_K, DEFAULT_B)
        parser.add_argument("--q", type=int, default=3, help="q-gram length for fuzzy search")
        parser.add_argument("--new", action="store_true", help="replace an existing index")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        started = time.perf_counter()
        # The pipeline's rule too (search.documents): a template's ranking variables become numeric fields.
        records: Iterator[dict[str, Any]] = (
            search_document(record, opts.id_field) for record in read_documents(opts.input, opts.format)
        )
        first = next(records, None)
        if first is None:
            raise SearchError(f"{opts.input} holds no records")
        records = itertools.chain([first], records)
        created = opts.new or not index_file(opts.index).exists()
        if not created:
            index = SearchIndex.open(opts.index)
            self._check_same_config(index, opts)
        else:
            id_field = opts.id_field or guess_id_field(first)
            fields = (
                [f.strip() for f in opts.fields.split(",") if f.strip()]
                if opts.fields
                else guess_text_fields(first, id_field)
            )
            analyzer = Analyzer(
                stop_words=opts.stop_words,
                min_length=opts.min_length,
                stemmer=None if opts.stemmer in ("none", "") else opts.stemmer,
            )
            index = SearchIndex.create(
                opts.index,
                overwrite=opts.new,
                fields=fields,
                id_field=id_field,
                field_weights=opts.weights,
                analyzer=analyzer,
                k=opts.k,
                b=opts.b,
                q=opts.q,
            )
        try:
            added = index.add(records)
            missing = index.missing_fields()
            if missing:
                raise SearchError(
                    f"unknown field {missing[0]!r}: no record has it (first record's fields: {', '.join(first)})"
                )
        except SearchError:
            if created:
                index.discard()
            raise
        index.optimize()
        index.close()
        print(
            f"indexed {added} documents into {opts.index} ({len(index)} in the index, "
            f"{index.vocabulary_size} terms) in {time.perf_counter() - started:.2f} s"
        )

    @staticmethod
    def _check_same_config(index: SearchIndex, opts: argparse.Namespace) -> None:
        if opts.id_field and opts.id_field != index.id_field:
            raise SearchError(
                f"the index at {opts.index} uses id field {index.id_field!r}, "
                f"not {opts.id_field!r} (use --new to rebuild)"
            )
        if opts.fields:
            fields = tuple(f.strip() for f in opts.fields.split(",") if f.strip())
            if fields != index.fields:
                raise SearchError(
                    f"the index at {opts.index} indexes {','.join(index.fields)}, "
                    f"not {','.join(fields)} (use --new to rebuild)"
                )
