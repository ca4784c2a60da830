"""Helpers shared by the search benchmarks: timing and the rank-bm25 reference."""

from __future__ import annotations

import re
import time

import numpy as np

from adaptive_spider.search.analysis import Analyzer

_TOKEN = re.compile(r"\w+")


def plain_tokens(text: str) -> list[str]:
    """The references' tokenizer: lowercase regex word tokens."""
    return _TOKEN.findall(text.lower())


class RankBM25Reference:
    """rank-bm25's BM25Okapi over the same documents, ranked the usual way (full scoring + sort)."""

    def __init__(self, documents, text_of, analyzer: Analyzer | None = None, k1=1.5, b=0.75):
        from rank_bm25 import BM25Okapi  # only the benchmarks need it

        self.tokenize = analyzer.analyze if analyzer is not None else plain_tokens
        self.ids = [doc["id"] for doc in documents]
        self.model = BM25Okapi([self.tokenize(text_of(doc)) for doc in documents], k1=k1, b=b)

    def search(self, query: str, top: int = 1000) -> list[str]:
        scores = self.model.get_scores(self.tokenize(query))
        best = np.argsort(-scores, kind="stable")[:top]
        return [self.ids[i] for i in best if scores[i] > 0]


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def latency_ms(run_query, queries, rounds: int = 5) -> dict[str, float]:
    """Per-query latency in ms: the median of *rounds* runs per query, then p50/p95/mean.

    Taking each query's median over rounds filters out pauses caused by other
    processes on this shared 2-core machine; ``raw_p95`` is over every sample.
    """
    for query in queries:  # warm caches (stems, score tables) once
        run_query(query)
    samples = np.empty((rounds, len(queries)))
    for r in range(rounds):
        for i, query in enumerate(queries):
            started = time.perf_counter()
            run_query(query)
            samples[r, i] = time.perf_counter() - started
    per_query = np.median(samples, axis=0) * 1000
    return {
        "p50": float(np.percentile(per_query, 50)),
        "p95": float(np.percentile(per_query, 95)),
        "mean": float(per_query.mean()),
        "raw_p95": float(np.percentile(samples * 1000, 95)),
    }
