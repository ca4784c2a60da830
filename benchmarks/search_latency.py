"""Query latency on Cranfield (with fuzzy correction) and indexing time for 100k documents.

1. Cranfield, on-disk index opened fresh, default configuration: per-query
   latency of ``search(q, top=10)`` (fields read from SQLite), p50 / p95 over
   the 225 queries, next to rank-bm25 in the same process.  Then the same
   queries with one word misspelt each, so every query pays for a correction.
2. 100,000 documents synthesised from Cranfield and the Scriburg posts
   (titles plus 3-8 random sentences each): time to index and commit to disk,
   time to open, and query latency on that index; rank-bm25 builds its model
   on the same documents for comparison.

    python benchmarks/search_latency.py [--docs 100000] [--no-reference]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RankBM25Reference, latency_ms, timed
from datasets import cranfield, scriburg

from adaptive_spider.search import SearchIndex


def misspell(query: str, rng: random.Random) -> tuple[str, str]:
    """Replace one inner letter of one word of 5+ letters (one edit)."""
    words = query.split()
    long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long_words:
        return query, ""
    i = rng.choice(long_words)
    word = words[i]
    j = rng.randrange(1, len(word) - 1)
    wrong = rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != word[j]])
    words[i] = word[:j] + wrong + word[j + 1 :]
    return " ".join(words), words[i]


def synthesise(count: int, seed: int = 13) -> list[dict]:
    """*count* documents made of real titles and sentences from both collections."""
    cran_docs, _, _ = cranfield()
    posts, _, _ = scriburg()
    titles = [d["title"] for d in cran_docs] + [p.get("title", "") for p in posts]
    sentences = [s.strip() for d in cran_docs for s in re.split(r" \.\s", d["text"]) if len(s) > 20]
    sentences += [p.get("summary", "") for p in posts if p.get("summary")]
    rng = random.Random(seed)
    return [
        {"id": f"s{n}", "title": rng.choice(titles), "text": " . ".join(rng.choices(sentences, k=rng.randint(3, 8)))}
        for n in range(count)
    ]


def cranfield_latency(reference: bool) -> None:
    documents, queries, _ = cranfield()
    texts = [text for _, text in queries]
    rng = random.Random(3)
    misspelt = [misspell(text, rng)[0] for text in texts]
    with tempfile.TemporaryDirectory() as tmp:
        index = SearchIndex.create(Path(tmp) / "cran", fields=["title", "text"], field_weights={"title": 6})
        index.add(documents)
        index.close()
        index, open_seconds = timed(SearchIndex.open, Path(tmp) / "cran")
        corrected = sum(bool(index.search(q).corrections) for q in misspelt)
        print(
            f"Cranfield: opened in {open_seconds * 1000:.1f} ms; {corrected} of "
            f"{len(misspelt)} misspelt queries were corrected\n"
        )
        rows = [
            ("ours, default configuration", lambda q: index.search(q, top=10), texts),
            ("ours, default, one letter of one word replaced", lambda q: index.search(q, top=10), misspelt),
            ("ours, plain BM25 (feedback off)", lambda q: index.search(q, top=10, feedback=0), texts),
        ]
        if reference:
            model = RankBM25Reference(documents, lambda d: d["title"] + " " + d["text"])
            rows.append(("rank-bm25 Okapi (get_scores + sort)", lambda q: model.search(q, top=10), texts))
        print("| system | p50 ms | p95 ms | mean ms | p95 of all samples |")
        print("|---|---|---|---|---|")
        baseline = None
        for name, run, which in rows:
            figures = latency_ms(run, which, rounds=5)
            print(
                f"| {name} | {figures['p50']:.3f} | {figures['p95']:.3f} | "
                f"{figures['mean']:.3f} | {figures['raw_p95']:.3f} |",
                flush=True,
            )
            baseline = baseline or figures
        if reference:
            print(f"\nrank-bm25 mean / ours mean: {figures['mean'] / baseline['mean']:.0f}x")


def bulk_indexing(count: int, reference: bool) -> None:
    documents, synth_seconds = timed(synthesise, count)
    words = sum(len(d["title"].split()) + len(d["text"].split()) for d in documents)
    print(f"\n{count} synthetic documents ({words / count:.0f} words each on average), made in {synth_seconds:.1f} s\n")
    _, queries, _ = cranfield()
    texts = [text for _, text in queries]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bulk"
        started = time.perf_counter()
        index = SearchIndex.create(path, fields=["title", "text"])
        index.add(documents)
        added = time.perf_counter() - started
        index.optimize()
        index.close()
        total = time.perf_counter() - started
        size = (path / "index.sqlite").stat().st_size / 2**20
        index, open_seconds = timed(SearchIndex.open, path)
        _, prepare_seconds = timed(index.prepare)
        print("| step | seconds |\n|---|---|")
        print(f"| analyse and add {count} documents | {added:.1f} |")
        print(f"| ... plus build arrays and write to SQLite ({size:.0f} MiB) | {total:.1f} |")
        print(f"| open the index | {open_seconds:.2f} |")
        print(f"| first query's score tables and fuzzy index | {prepare_seconds:.2f} |")
        figures = latency_ms(lambda q: index.search(q, top=10), texts, rounds=3)
        plain = latency_ms(lambda q: index.search(q, top=10, feedback=0), texts, rounds=3)
        if reference:
            model, ref_seconds = timed(RankBM25Reference, documents, lambda d: d["title"] + " " + d["text"])
            print(f"| rank-bm25: tokenise and build BM25Okapi (in memory only) | {ref_seconds:.1f} |")
        print(
            f"\nqueries on {count} documents (Cranfield queries), default configuration: "
            f"p50 {figures['p50']:.2f} ms, p95 {figures['p95']:.2f} ms; "
            f"feedback off: p50 {plain['p50']:.2f} ms, p95 {plain['p95']:.2f} ms"
        )
        if reference:
            ref = latency_ms(lambda q: model.search(q, top=10), texts[:40], rounds=1)
            print(
                f"rank-bm25 on the same documents: p50 {ref['p50']:.1f} ms, p95 {ref['p95']:.1f} ms (first 40 queries)"
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--no-reference", action="store_true", help="skip rank-bm25")
    options = parser.parse_args()
    cranfield_latency(not options.no_reference)
    if options.docs:
        bulk_indexing(options.docs, not options.no_reference)


if __name__ == "__main__":
    main()
