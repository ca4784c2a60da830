"""Write Cranfield as ``cran.jsonl`` (id, title, text) and ``queries.tsv`` (qrels query ids)
into a folder, for indexing and searching with the scrapy commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import cranfield


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: python benchmarks/export_cranfield.py OUT_DIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    documents, queries, _ = cranfield()
    with open(out / "cran.jsonl", "w", encoding="utf-8") as handle:
        for document in documents:
            handle.write(json.dumps(document) + "\n")
    (out / "queries.tsv").write_text("".join(f"{qid}\t{text}\n" for qid, text in queries))
    print(f"wrote {len(documents)} documents and {len(queries)} queries to {out}")


if __name__ == "__main__":
    main()
