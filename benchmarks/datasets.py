"""Readers for the evaluation collections in ../shared/data (see their READMEs)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    """``$ADAPTIVE_DATA/<name>`` or the first ``shared/data/<name>`` above the checkout."""
    if os.environ.get("ADAPTIVE_DATA"):
        return Path(os.environ["ADAPTIVE_DATA"]) / name
    for parent in [ROOT, *ROOT.parents]:
        candidate = parent / "shared" / "data" / name
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"data set {name!r} not found; set ADAPTIVE_DATA to the shared/data folder")


def _smart_records(path: Path):
    """SMART records: yields {marker: text} per '.I' record, CRLF stripped."""
    record, field = None, None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.rstrip("\r")
        if line.startswith(".I"):
            if record is not None:
                yield record
            record, field = {".I": line[2:].strip()}, None
        elif line in (".T", ".A", ".B", ".W"):
            field = line
            record[field] = ""
        elif record is not None and field is not None:
            record[field] += line + "\n"
    if record is not None:
        yield record


def cranfield():
    """(documents, queries, qrels) of Cranfield 1400.

    Documents are ``{"id", "title", "text"}`` with text = the abstract (which
    repeats the title).  Queries are numbered 1..225 by position in cran.qry,
    because cranqrel numbers them that way (the README's query-id quirk).
    Qrels keep grades 1..4; -1 becomes 0 (not relevant).
    """
    folder = data_dir("cranfield")
    documents = [
        {"id": r[".I"], "title": r.get(".T", "").strip(), "text": r.get(".W", "").strip()}
        for r in _smart_records(folder / "cran.all.1400")
    ]
    queries = [
        (str(position), " ".join(r.get(".W", "").split()))
        for position, r in enumerate(_smart_records(folder / "cran.qry"), 1)
    ]
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            qrels.setdefault(parts[0], {})[parts[1]] = max(int(parts[2]), 0)
    return documents, queries, qrels


def scriburg():
    """(posts, queries, qrels) of the Scriburg Stack Overflow set.

    Posts are ``{"id", "title", "summary", "votes"}`` gathered from the long
    CSV (duplicate rows collapse); votes are parsed from ``"12\\nvotes"``.
    """
    folder = data_dir("scriburg-stackoverflow")
    posts: dict[str, dict] = {}
    with open(folder / "stack_overflow_posts_dataset.csv", newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            post = posts.setdefault(row["document id"], {"id": row["document id"]})
            kind = row["inspetor name"].strip().lower()
            value = row["value"]
            if kind == "votes":
                post["votes"] = int(value.split()[0])
            else:
                post[kind] = value
    queries, qrels = [], {}
    for number, line in enumerate((folder / "benchmark.txt").read_text().splitlines(), 1):
        if "\t" in line:
            text, relevant = line.split("\t", 1)
            qid = str(number)
            queries.append((qid, text.strip()))
            qrels[qid] = {doc.strip(): 1 for doc in relevant.split(",") if doc.strip()}
    return list(posts.values()), queries, qrels
