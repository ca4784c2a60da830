"""The Scriburg Stack Overflow set: MP@5, MP@R and MAP next to the thesis and rank-bm25.

2,415 posts, Title + Summary indexed, 6 queries (the second one misspelt).
Our index is a textbook BM25 over the whole post (one document per post,
true document lengths) that corrects only words it does not know; it does
not reproduce the thesis code's quirks (see the data README).  A second
reading collapses identical copies of a post in the ranking, since the
judgements count copies as one post.

    python benchmarks/search_scriburg.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RankBM25Reference
from datasets import scriburg

from adaptive_spider.search import Analyzer, SearchIndex
from adaptive_spider.search.evaluation import average_precision, precision_at, r_precision

THESIS = [
    ("thesis: defaults b=.75, k=1.75", ".73", ".72", ".87"),
    ("thesis: b=.1, k=.81", ".80", ".84", ".89"),
    ("thesis: stop words how,to,by,with,in,not,does", ".66", ".624", ".76"),
    ("thesis: small-word threshold 0", ".80", ".77", ".84"),
    ("thesis: boosting formula votes/10", ".53", ".62", ".63"),
]


def collapse_copies(ranked, text_of):
    """Keep the first of several posts with identical Title + Summary."""
    seen, kept = set(), []
    for doc_id in ranked:
        key = text_of[doc_id]
        if key not in seen:
            seen.add(key)
            kept.append(doc_id)
    return kept


def scores(run, qrels):
    per_query = {}
    for qid, grades in qrels.items():
        relevant = set(grades)
        ranked = run[qid]
        per_query[qid] = (
            precision_at(ranked, relevant, 5),
            r_precision(ranked, relevant),
            average_precision(ranked, relevant),
        )
    means = [sum(values[i] for values in per_query.values()) / len(per_query) for i in range(3)]
    return means, per_query


def main():
    posts, queries, qrels = scriburg()
    text_of = {p["id"]: (p.get("title", ""), p.get("summary", "")) for p in posts}

    def ours(analyzer=None, **search):
        index = SearchIndex(fields=["title", "summary"], analyzer=analyzer or Analyzer())
        index.add(posts)
        return lambda text: index.search(text, top=1000, with_fields=False, **search)

    reference = RankBM25Reference(posts, lambda p: p.get("title", "") + " " + p.get("summary", ""))
    default = ours()
    systems = [
        ("ours, default configuration", default),
        ("ours, plain BM25 (feedback off)", ours(feedback=0)),
        ("ours, b=.75, k=1.75 (thesis defaults), feedback off", ours(k=1.75, b=0.75, feedback=0)),
        ("ours, b=.1, k=.81 (thesis tuned), feedback off", ours(k=0.81, b=0.1, feedback=0)),
        (
            "ours, stop words how,to,by,with,in,not,does only, feedback off",
            ours(Analyzer(stop_words="how,to,by,with,in,not,does"), feedback=0),
        ),
        (
            "ours, no stop words, small-word threshold 0, feedback off",
            ours(Analyzer(stop_words="none", min_length=0), feedback=0),
        ),
        ("ours, default + formula votes/10", ours(formula="votes / 10")),
        ("ours, default + formula log(votes + 1)", ours(formula="log(votes + 1)")),
    ]
    print("| system | MP@5 | MP@R | MAP | MP@5 | MP@R | MAP |")
    print("|---|---|---|---|---|---|---|")
    print("| | *as ranked* | | | *copies collapsed* | | |")
    for name, mp5, mpr, map_ in THESIS:
        print(f"| {name} | {mp5} | {mpr} | {map_} | | | |")
    rows = [("rank-bm25 Okapi, plain tokens (k1 1.5, b .75)", lambda text: reference.search(text, top=1000))]
    rows += [(name, lambda text, run=run: [h.id for h in run(text).hits]) for name, run in systems]
    for name, search in rows:
        run = {qid: search(text) for qid, text in queries}
        (a, b, c), _ = scores(run, qrels)
        collapsed = {qid: collapse_copies(ranked, text_of) for qid, ranked in run.items()}
        (d, e, f), _ = scores(collapsed, qrels)
        print(f"| {name} | {a:.2f} | {b:.2f} | {c:.2f} | {d:.2f} | {e:.2f} | {f:.2f} |", flush=True)

    print("\nPer query, default configuration (as ranked):\n")
    print("| query | corrections | P@5 | R-prec | AP |\n|---|---|---|---|---|")
    run = {qid: [h.id for h in default(text).hits] for qid, text in queries}
    _, per_query = scores(run, qrels)
    for qid, text in queries:
        fixes = ", ".join(f"{a}→{b}" for a, b in default(text).corrections.items()) or "–"
        p5, rp, ap = per_query[qid]
        print(f"| {text} | {fixes} | {p5:.2f} | {rp:.2f} | {ap:.2f} |")


if __name__ == "__main__":
    main()
