"""``scrapy search``: query a search index, or write a TREC run for many queries."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from adaptive_spider.search import SearchIndex
from adaptive_spider.search.command import SearchCommand
from adaptive_spider.search.errors import SearchError
from adaptive_spider.search.evaluation import read_queries, trec_lines
from adaptive_spider.search.ranking import SearchResults


def shown_fields(index: SearchIndex, spec: str | None) -> list[str]:
    """The fields to print: *spec* (checked against the index) or the indexed ones."""
    if not spec:
        return list(index.fields)
    fields = [name.strip() for name in spec.split(",") if name.strip()]
    known = set(index.fields) | index.numeric_fields | {index.id_field}
    for name in fields:
        if name not in known:
            raise SearchError(f"unknown field {name!r} (fields: {', '.join(sorted(known))})")
    return fields


def one_line(text: Any, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Command(SearchCommand):
    name = "search"

    usage = '--index DIR [options] "query"  |  --index DIR --queries FILE.tsv --run OUT.txt'
    summary = "Search an index built with 'scrapy index'"
    description = (
        "Rank the documents of the index in DIR for a query with BM25 (union of the "
        "query words' postings; unknown words are corrected to the closest indexed "
        "word). With --queries and --run, search every 'id<TAB>query' line of a file "
        "and write a TREC run file (qid Q0 docid rank score tag)."
    )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        self.add_index_option(parser)
        parser.add_argument(
            "--top", type=int, default=None, metavar="N", help="number of results (default: 10; 1000 with --run)"
        )
        parser.add_argument("--json", action="store_true", help="print results as JSON")
        parser.add_argument("--fields", metavar="A,B", help="fields to show")
        self.add_bm25_options(parser)
        parser.add_argument(
            "--word-weights", metavar="W=N,...", help="add N to a result's score when it has word W, e.g. freiburg=5"
        )
        parser.add_argument("--formula", metavar="EXPR", help="boost by numeric fields, e.g. 'log(votes + 1)'")
        parser.add_argument("--no-fuzzy", action="store_true", help="do not correct unknown query words")
        parser.add_argument(
            "--feedback",
            type=int,
            metavar="N",
            help="pseudo-relevance feedback from the top N documents (default: the index's, 5; 0 turns it off)",
        )
        parser.add_argument("--queries", metavar="FILE.tsv", help="batch mode: query id TAB query")
        parser.add_argument("--run", metavar="OUT.txt", help="batch mode: TREC run file to write")
        parser.add_argument("--tag", default="adaptive_spider", help="run tag (default: %(default)s)")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if bool(opts.queries) != bool(opts.run):
            raise SearchError("batch mode needs both --queries FILE.tsv and --run OUT.txt")
        if opts.queries and args:
            raise SearchError("give either a query or --queries, not both")
        index = SearchIndex.open(opts.index)
        options: dict[str, Any] = {
            "k": opts.k,
            "b": opts.b,
            "word_weights": opts.word_weights,
            "formula": opts.formula,
            "fuzzy": not opts.no_fuzzy,
            "feedback": opts.feedback,
        }
        if opts.queries:
            self.batch(index, opts, options)
            return
        results = index.search(" ".join(args), top=10 if opts.top is None else opts.top, **options)
        if opts.json:
            print(
                json.dumps(
                    {
                        "query": results.query,
                        "total": results.total,
                        "corrections": results.corrections,
                        "hits": [{"id": h.id, "score": h.score, "fields": h.fields} for h in results.hits],
                    },
                    ensure_ascii=False,
                )
            )
        else:
            self.print_results(index, results, shown_fields(index, opts.fields))

    @staticmethod
    def print_results(index: SearchIndex, results: SearchResults, fields: list[str]) -> None:
        for word, correction in results.corrections.items():
            print(f"(searched for {correction!r} instead of {word!r})")
        print(f"{results.total} matching documents")
        for rank, hit in enumerate(results.hits, 1):
            shown = "  ".join(
                one_line(hit.fields.get(name, ""), 70)
                for name in fields
                if name != index.id_field and hit.fields.get(name) not in (None, "")
            )
            print(f"{rank:>3}. {hit.score:8.3f}  {hit.id}  {shown}")

    def batch(self, index: SearchIndex, opts: argparse.Namespace, options: dict[str, Any]) -> None:
        queries = read_queries(opts.queries)
        top = 1000 if opts.top is None else opts.top
        started = time.perf_counter()
        lines = []
        for qid, text in queries:
            if not text:
                continue
            results = index.search(text, top=top, with_fields=False, **options)
            lines.extend(trec_lines(qid, ((h.id, h.score) for h in results.hits), opts.tag))
        Path(opts.run).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
        print(
            f"wrote {len(lines)} lines for {len(queries)} queries to {opts.run} "
            f"in {time.perf_counter() - started:.2f} s"
        )
