"""Choose the default analyzer, field weights, k, b and feedback on half of Cranfield.

Tunes on the odd-numbered queries only (113 of 225) in three stages, then
prints the chosen settings on the tuning half, on the held-out even half and
on all queries, so the defaults are not fitted to the figures we report:

1. analyzer: stop list x small-word threshold x stemmer (at two k, title weights);
2. title weight x k x b, plain BM25;
3. pseudo-relevance feedback: documents x terms x weight, then k x b again.

    python benchmarks/tune_cranfield.py
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import cranfield

from adaptive_spider.search import Analyzer, SearchIndex
from adaptive_spider.search.evaluation import evaluate


def build(documents, stop_words="english", min_length=1, stemmer="english", title=3.0):
    analyzer = Analyzer(stop_words=stop_words, min_length=min_length, stemmer=stemmer)
    index = SearchIndex(fields=["title", "text"], field_weights={"title": title}, analyzer=analyzer)
    index.add(documents)
    return index.prepare()


def measure(index, queries, qrels, k, b, feedback=0, terms=20, weight=0.5):
    index.feedback_terms, index.feedback_weight = terms, weight
    run = {
        qid: [h.id for h in index.search(text, top=1000, k=k, b=b, feedback=feedback, with_fields=False).hits]
        for qid, text in queries
    }
    return evaluate(run, qrels)


def halves(queries, qrels):
    parts = []
    for parity in (1, 0):
        chosen = [(qid, text) for qid, text in queries if int(qid) % 2 == parity]
        parts.append((chosen, {qid: qrels[qid] for qid, _ in chosen}))
    return parts


def row(figures):
    return f"{figures['MAP']:.4f} | {figures['nDCG@10']:.4f}"


def main():
    documents, queries, qrels = cranfield()
    (tune_q, tune_r), (held_q, held_r) = halves(queries, qrels)

    print("## Stage 1: analyzer (tuning half, plain BM25, b = 0.75)\n")
    print("| stop words | min length | stemmer | best MAP | nDCG@10 | at title, k |")
    print("|---|---|---|---|---|---|")
    stage1 = []
    for stops, min_length, stemmer in itertools.product(
        ["english", "short", "none"], [0, 1, 2], ["english", "porter", None]
    ):
        results = []
        for title in (1.0, 3.0):
            index = build(documents, stops, min_length, stemmer, title)
            for k in (1.2, 2.0):
                figures = measure(index, tune_q, tune_r, k, 0.75)
                results.append((figures["MAP"], figures, title, k))
        best = max(results, key=lambda r: r[0])
        stage1.append((best[0], stops, min_length, stemmer))
        print(f"| {stops} | {min_length} | {stemmer} | {row(best[1])} | {best[2]}, {best[3]} |", flush=True)
    _, stops, min_length, stemmer = max(stage1)
    print(f"\nchosen analyzer: stop words {stops}, min length {min_length}, stemmer {stemmer}\n")

    print("## Stage 2: title weight x k x b (tuning half, plain BM25), best 8\n")
    stage2 = []
    for title in (1.0, 2.0, 3.0, 4.0, 6.0):
        index = build(documents, stops, min_length, stemmer, title)
        for k, b in itertools.product((0.9, 1.2, 1.5, 2.0, 2.5, 3.0), (0.3, 0.5, 0.6, 0.75, 0.9)):
            figures = measure(index, tune_q, tune_r, k, b)
            stage2.append((figures["MAP"], figures["nDCG@10"], title, k, b))
    stage2.sort(reverse=True)
    print("| title weight | k | b | MAP | nDCG@10 |\n|---|---|---|---|---|")
    for tune_map, tune_ndcg, title, k, b in stage2[:8]:
        print(f"| {title} | {k} | {b} | {tune_map:.4f} | {tune_ndcg:.4f} |")
    _, _, title, k, b = stage2[0]

    print("\n## Stage 3: feedback (tuning half), best 8\n")
    index = build(documents, stops, min_length, stemmer, title)
    stage3 = []
    for docs, terms, weight in itertools.product((3, 5, 10), (10, 20, 30), (0.3, 0.5, 0.7)):
        figures = measure(index, tune_q, tune_r, k, b, docs, terms, weight)
        stage3.append((figures["MAP"], figures["nDCG@10"], docs, terms, weight))
    stage3.sort(reverse=True)
    print("| docs | terms | weight | MAP | nDCG@10 |\n|---|---|---|---|---|")
    for tune_map, tune_ndcg, docs, terms, weight in stage3[:8]:
        print(f"| {docs} | {terms} | {weight} | {tune_map:.4f} | {tune_ndcg:.4f} |")
    _, _, docs, terms, weight = stage3[0]
    stage3b = []
    for k2, b2 in itertools.product((1.2, 1.5, 2.0, 2.5), (0.6, 0.75, 0.9)):
        figures = measure(index, tune_q, tune_r, k2, b2, docs, terms, weight)
        stage3b.append((figures["MAP"], k2, b2))
    _, k_fb, b_fb = max(stage3b)
    print(f"\nwith feedback, best k = {k_fb}, b = {b_fb}")

    print("\n## Chosen settings on the tuning half, the held-out half and all 225 queries\n")
    print("| configuration | tuning MAP | nDCG@10 | held-out MAP | nDCG@10 | all MAP | nDCG@10 |")
    print("|---|---|---|---|---|---|---|")
    plain_index = build(documents, "none", 0, None, 1.0)
    configs = [
        ("plain tokens, title once more (T + W), k=1.2 b=0.75", plain_index, 1.2, 0.75, 0, 20, 0.5),
        (f"analyzer chosen, title={title}, k={k} b={b}, no feedback", index, k, b, 0, 20, 0.5),
        (f"... + feedback docs={docs} terms={terms} weight={weight}", index, k, b, docs, terms, weight),
        (f"... + feedback, k={k_fb} b={b_fb}", index, k_fb, b_fb, docs, terms, weight),
    ]
    for name, config_index, k1, b1, d1, t1, w1 in configs:
        cells = [
            row(measure(config_index, qs, rs, k1, b1, d1, t1, w1))
            for qs, rs in ((tune_q, tune_r), (held_q, held_r), (queries, qrels))
        ]
        print(f"| {name} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
