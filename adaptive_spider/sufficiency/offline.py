"""Sufficiency of a saved knowledge base: the metrics a crawl would have had, recomputed
from its feed (``scrapy sufficiency``), page by page in feed order.

The feed's page items carry what the estimator reads (text fields, relevance, content
hash), so the same pages in the same order give the numbers of the crawl that wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.sufficiency.estimator import SufficiencyEstimator
from adaptive_spider.sufficiency.metrics import SufficiencyMetrics
from adaptive_spider.sufficiency.pages import is_page_item


def read_knowledge_base(path: str | Path) -> Iterator[Any]:
    """The items of a saved knowledge base: a JSON lines feed (``-O kb.jsonl``) or a JSON array."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        first = handle.read(1)
        while first and first.isspace():
            first = handle.read(1)
        handle.seek(0)
        if first == "[":
            yield from json.load(handle)
            return
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON line ({exc.msg})") from None


def evaluate_knowledge_base(
    items: Iterable[Any], query: str, keywords: Iterable[str] = (), keyword_weight: float = 2.0, **params: Any
) -> tuple[SufficiencyEstimator, list[SufficiencyMetrics]]:
    """Recompute the metrics of a saved knowledge base, page by page, in feed order.

    Items that are not pages (template documents, other items) are skipped.
    Returns the estimator (its :meth:`~SufficiencyEstimator.report`) and the
    metrics after each page. ``params`` are the estimator's.
    """
    estimator = SufficiencyEstimator(QueryTerms(query, list(keywords), keyword_weight), **params)
    trajectory = []
    for item in items:
        if isinstance(item, Mapping) and is_page_item(item):
            estimator.update(item)
            trajectory.append(estimator.metrics())
    return estimator, trajectory
