"""A page relevance that knows the labels: the reward a crawl would learn from if the page
score were perfect. A diagnostic, never a setting for users.

Every focused strategy learns from the page score (``ADAPTIVE_RELEVANCE``, BM25 of the
query's words by default): sibling groups count its hits, site sections compare its means,
TRES trains on its hits. On the big web that score is far from the labels (a file-paths
crawl's pages: ROC AUC .77, and under a fifth of the pages it calls relevant are; Apache's
manual scores as an HTTP topic), so what the learner can learn is bounded by it. Plugged
in as the page relevance, this model scores a page 1 when the topic's labels hold its URL
and 0 otherwise, which separates two questions: does the learner beat the fixed prior
when its reward is right, and how much of the gap to the targets is the reward's.

The link priors still read the query's words (a relevance model replaces the page score,
not the link prior), so a crawl with it still has to find the pages::

    python -m benchmarks.harness --web big --strategies tres,bestfirst --out /tmp/label-reward \\
        --set ADAPTIVE_RELEVANCE=benchmarks.label_relevance.LabelRelevance \\
        --set BENCH_LABELS=/work/shared/bigweb/labels-dev.json --set 'BENCH_TOPIC={topic}'

``BENCH_LABELS`` is a labels file as the harness reads one (a JSON object: topic id to the
list of its relevant URLs); ``BENCH_TOPIC`` the topic (``{topic}`` is replaced by the
harness with each crawl's topic id).

A page the labels do not hold scores 0 by default. With ``BENCH_BELOW=score`` it keeps the
query's page score, capped just under ``ADAPTIVE_RELEVANT_THRESHOLD``: the hits are the
labels' and nothing else, but the pages below the line still tell the crawl which of them
are near the topic, as the default score does (with 0 for every page that is not a hit, a
crawl has nothing to go on until its first hit on a site).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.relevance.base import PageRelevance
from adaptive_spider.settings.parsers import ConfigError
from benchmarks.harness.metrics import canonical_url

LABELS = "BENCH_LABELS"
TOPIC = "BENCH_TOPIC"
BELOW = "BENCH_BELOW"
BELOW_CHOICES = ("zero", "score")


class LabelRelevance(PageRelevance):
    """1 for a page whose URL the topic's labels hold, 0 for any other."""

    def __init__(self, relevant: set[str], crawler: Any = None) -> None:
        self.relevant = {canonical_url(url) for url in relevant}
        #: With a crawler, a page the labels do not hold keeps the crawl's own page score, under the hit line.
        self.crawler = crawler

    @classmethod
    def from_settings(cls, settings: Any) -> LabelRelevance:
        path, topic = settings.get(LABELS), settings.get(TOPIC)
        if not path or not topic:
            raise ConfigError(f"LabelRelevance needs {LABELS} (a labels file) and {TOPIC} (a topic id in it)")
        try:
            labels = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{LABELS}: cannot read {path!r}: {exc}") from None
        if topic not in labels:
            raise ConfigError(f"{TOPIC}: {topic!r} is not a topic of {path} (it has {', '.join(sorted(labels))})")
        return cls(set(labels[topic]))

    @classmethod
    def from_crawler(cls, crawler: Any) -> LabelRelevance:
        model = cls.from_settings(crawler.settings)
        below = crawler.settings.get(BELOW) or "zero"
        if below not in BELOW_CHOICES:
            raise ConfigError(f"{BELOW}: {below!r} is not one of {', '.join(BELOW_CHOICES)}")
        if below == "score":
            model.crawler = crawler
        return model

    def score(self, page: Any, response: Any = None) -> float:
        url = response.url if response is not None else page.url
        if canonical_url(url) in self.relevant:
            return 1.0
        if self.crawler is None:
            return 0.0
        # Built by now: the crawl state asks this model for a page's score.
        state = CrawlState.of(self.crawler)
        return min(state.scorer.score_page(page, learn=False), 0.99 * state.config.relevant_threshold)
