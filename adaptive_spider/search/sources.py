"""Read documents to index from files: JSON lines, a JSON array (Scrapy's ``json``
feed) or CSV with a header row.  The format follows the file name
(``.jsonl``/``.jl``/``.ndjson``, ``.json``, ``.csv``/``.tsv``) unless given."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from .errors import SearchError

FORMATS = {".jsonl": "jsonl", ".jl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv"}


def guess_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise SearchError(f"cannot tell the format of {path} from its name ({known}); pass --format")
    return FORMATS[suffix]


def read_documents(path: str | Path, format: str | None = None) -> Iterator[dict]:
    """Yield one dict per record of *path*."""
    path = Path(path)
    if not path.is_file():
        raise SearchError(f"input file not found: {path}")
    format = format or guess_format(path)
    if format == "jsonl":
        yield from _json_lines(path)
    elif format == "json":
        yield from _json_array(path)
    elif format in ("csv", "tsv"):
        yield from _csv_rows(path, "\t" if format == "tsv" else ",")
    else:
        raise SearchError(f"unknown input format {format!r} (jsonl, json, csv, tsv)")


def _json_lines(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise SearchError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise SearchError(f"{path}:{number}: expected a JSON object")
            yield record


def _json_array(path: Path) -> Iterator[dict]:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise SearchError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(records, list):
        raise SearchError(f"{path}: expected a JSON array of objects")
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise SearchError(f"{path}: record {number} is not a JSON object")
        yield record


def _csv_rows(path: Path, delimiter: str) -> Iterator[dict]:
    csv.field_size_limit(min(sys.maxsize, 1 << 30))
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if not reader.fieldnames:
            raise SearchError(f"{path}: no header row")
        for row in reader:
            yield {key: value for key, value in row.items() if key is not None}
