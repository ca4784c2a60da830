"""Cranfield 1400: MAP, P@10, nDCG@10, R@100 of our index next to rank-bm25, same process.

All 225 queries, run depth 1000, title + abstract, grades 1-4 relevant and -1
not (see ../shared/data/cranfield/README.md).  nDCG@10 uses the grade as gain;
nDCG10c uses 5 - grade (Cleverdon's scale read the other way round).

    python benchmarks/search_cranfield.py [--run-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RankBM25Reference, latency_ms
from datasets import cranfield

from adaptive_spider.search import Analyzer, SearchIndex
from adaptive_spider.search.evaluation import evaluate, trec_lines


def flipped(qrels):
    return {qid: {doc: (5 - g if g > 0 else 0) for doc, g in grades.items()} for qid, grades in qrels.items()}


def title_and_abstract(doc):
    return doc["title"] + " " + doc["text"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run-dir", help="also write each system's TREC run file here")
    options = parser.parse_args()
    documents, queries, qrels = cranfield()
    texts = [text for _, text in queries]

    def ours(name, fields=("title", "text"), weights=None, **search):
        index = SearchIndex(fields=list(fields), field_weights=weights)
        index.add(documents)
        index.prepare()
        run = lambda q: [h.id for h in index.search(q, top=1000, with_fields=False, **search).hits]  # noqa: E731
        return name, run, lambda q: index.search(q, top=10, **search)

    def reference(name, analyzer=None):
        model = RankBM25Reference(documents, title_and_abstract, analyzer)
        return name, model.search, lambda q: model.search(q, top=10)

    stop_stem = Analyzer(stop_words="english", min_length=1, stemmer="porter")
    systems = [
        reference("rank-bm25 Okapi, plain tokens (k1 1.5, b .75)"),
        reference("rank-bm25 Okapi + our stop list + Porter", stop_stem),
        ours("ours, plain BM25 (feedback off), no field weight", feedback=0),
        ours("ours, default configuration, no field weight"),
        ours("ours, plain BM25 (feedback off), title=6", weights={"title": 6}, feedback=0),
        ours("ours, default configuration, title=6 (chosen)", weights={"title": 6}),
    ]
    print("| system | MAP | P@10 | nDCG@10 | nDCG10c | R@100 | query p50 / p95 ms (top 10) |")
    print("|---|---|---|---|---|---|---|")
    for name, run_query, top10 in systems:
        run = {qid: run_query(text) for qid, text in queries}
        figures = evaluate(run, qrels)
        flipped_ndcg = evaluate(run, flipped(qrels))["nDCG@10"]
        speed = latency_ms(top10, texts, rounds=3)
        print(
            f"| {name} | {figures['MAP']:.3f} | {figures['P@10']:.3f} | "
            f"{figures['nDCG@10']:.3f} | {flipped_ndcg:.3f} | {figures['R@100']:.3f} | "
            f"{speed['p50']:.3f} / {speed['p95']:.3f} |",
            flush=True,
        )
        if options.run_dir:
            Path(options.run_dir).mkdir(parents=True, exist_ok=True)
            tag = "".join(c if c.isalnum() else "_" for c in name)[:40]
            lines = [
                line
                for qid, ids in run.items()
                for line in trec_lines(qid, ((d, 1000 - r) for r, d in enumerate(ids)), tag)
            ]
            (Path(options.run_dir) / f"{tag}.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
