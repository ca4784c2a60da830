"""Retrieval evaluation: TREC run files and the usual measures.

A *run* maps a query id to its ranked document ids; *qrels* map a query id
to ``{doc_id: grade}``.  Grades above 0 are relevant for the binary measures
(MAP, P@k, R-precision, recall@k); nDCG uses the grade as the gain with
log2(rank + 1) discounts, as trec_eval does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .errors import SearchError


def average_precision(ranked: Sequence[str], relevant: set[str]) -> float:
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, doc_id in enumerate(ranked, 1):
        if doc_id in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def precision_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return sum(doc_id in relevant for doc_id in ranked[:k]) / k if k else 0.0


def r_precision(ranked: Sequence[str], relevant: set[str]) -> float:
    return precision_at(ranked, relevant, len(relevant))


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return sum(doc_id in relevant for doc_id in ranked[:k]) / len(relevant)


def ndcg_at(ranked: Sequence[str], grades: Mapping[str, float], k: int) -> float:
    dcg = sum(
        grades.get(doc_id, 0) / math.log2(rank + 1)
        for rank, doc_id in enumerate(ranked[:k], 1)
        if grades.get(doc_id, 0) > 0
    )
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, 1))
    return dcg / idcg if idcg else 0.0


def evaluate(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, float]], ks: Iterable[int] = (5, 10)
) -> dict[str, float]:
    """Mean measures over the queries of *qrels* (a query missing from *run* scores 0)."""
    ks = tuple(ks)
    sums: dict[str, float] = {}

    def add(name: str, value: float) -> None:
        sums[name] = sums.get(name, 0.0) + value

    for qid, grades in qrels.items():
        ranked = list(run.get(qid, ()))
        relevant = {doc_id for doc_id, grade in grades.items() if grade > 0}
        add("MAP", average_precision(ranked, relevant))
        add("MP@R", r_precision(ranked, relevant))
        add("R@100", recall_at(ranked, relevant, 100))
        for k in ks:
            add(f"P@{k}", precision_at(ranked, relevant, k))
            add(f"nDCG@{k}", ndcg_at(ranked, grades, k))
    return {name: total / len(qrels) for name, total in sums.items()} if qrels else {}


def read_queries(path: str | Path) -> list[tuple[str, str]]:
    """``query id TAB query`` lines (blank lines and ``#`` comments skipped)."""
    path = Path(path)
    if not path.is_file():
        raise SearchError(f"queries file not found: {path}")
    queries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" not in line:
            raise SearchError(f"{path}:{number}: expected 'query id<TAB>query'")
        qid, text = line.split("\t", 1)
        queries.append((qid.strip(), text.strip()))
    return queries


def trec_lines(qid: str, ranked: Iterable[tuple[str, float]], tag: str) -> list[str]:
    """TREC run lines ``qid Q0 docid rank score tag`` for one query."""
    return [f"{qid} Q0 {doc_id} {rank} {score:.6f} {tag}" for rank, (doc_id, score) in enumerate(ranked, 1)]


def read_run(path: str | Path) -> dict[str, list[str]]:
    """A TREC run file as query id -> doc ids ordered by rank."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 6:
            rows.setdefault(parts[0], []).append((int(parts[3]), parts[2]))
    return {qid: [doc for _, doc in sorted(docs)] for qid, docs in rows.items()}
