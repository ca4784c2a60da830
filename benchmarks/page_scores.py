"""How well the crawl's page score ranks the pages a topic's labels call relevant.

Every focused crawl learns from one reward, the page score (``ADAPTIVE_RELEVANCE``, BM25 over
the page's fields by default): sibling groups count its hits, site sections compare their means
with the crawl's, the query expansion reads its best pages. A frontier cannot find pages the
score does not tell from the rest. This scores each crawl's fetched pages of a harness run
again, in their fetch order (the term statistics learned as the crawl learned them), with the
run's settings or others, and compares the scores with the labels::

    python -m benchmarks.harness --web big --strategies bestfirst --traces --out /tmp/run
    python -m benchmarks.page_scores /tmp/run
    python -m benchmarks.page_scores /tmp/run --set ADAPTIVE_RELEVANCE_B=0.4
    python -m benchmarks.page_scores /tmp/run --set ADAPTIVE_RELEVANCE=adaptive_spider.relevance.embedding.EmbeddingRelevance

A relevance model named by ``ADAPTIVE_RELEVANCE`` scores the pages as it would in a crawl (mixed
with the query's score by ``ADAPTIVE_RELEVANCE_QUERY_WEIGHT``), with no response to read.

A change to the page score is seconds to measure this way, against about 20 minutes for the
big web's six crawls; a crawl then says whether the order it gives is better (a better ranked
score may still lead elsewhere). Per crawl it prints:

- **AUC**: the chance that a relevant fetched page scores above a fetched page that is not
  (ties count half); 0.5 is a coin, 1 a perfect ranking.
- **AP**: the average precision of the fetched pages sorted by score.
- **hits R / P**: the share of relevant pages scoring at least ``ADAPTIVE_RELEVANT_THRESHOLD``
  (what sibling groups and the stats count as a hit), and the share of such pages that are relevant.
- **rel/mean**: the mean score of the relevant pages over the mean of all fetched pages (what a
  site section's lift compares).

Only the pages a crawl fetched are scored: the figures describe the pages the frontier chose
among, not the whole web. A page the web no longer answers with HTML is skipped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.settings.config import unknown_settings
from benchmarks.harness.cli import BadInput, compute_labels, labels_from_file, load_web
from benchmarks.harness.metrics import canonical_url
from benchmarks.harness.topics import Labeler, Topic, TopicsError, load_topics

EXIT_BAD_INPUT = 2
REPO = Path(__file__).resolve().parents[1]


def auc(scores: np.ndarray, relevant: np.ndarray) -> float | None:
    """The ROC AUC of ``scores`` for the ``relevant`` mask (ties count half; None when either class is empty)."""
    from sklearn.metrics import roc_auc_score

    relevant = np.asarray(relevant, dtype=bool)
    if relevant.all() or not relevant.any():
        return None
    return float(roc_auc_score(relevant, scores))


def average_precision(scores: np.ndarray, relevant: np.ndarray) -> float | None:
    """The average precision of the pages sorted by score (None without a relevant page)."""
    from sklearn.metrics import average_precision_score

    relevant = np.asarray(relevant, dtype=bool)
    if not relevant.any():
        return None
    return float(average_precision_score(relevant, scores))


@dataclass
class TraceScores:
    """One crawl's fetched pages scored again: their scores and whether each is relevant."""

    topic: str
    trace: str
    scores: np.ndarray
    relevant: np.ndarray
    hit_at: float
    #: Each scored page's host, in fetch order (for rules that look at each site apart).
    hosts: tuple[str, ...] = ()

    def row(self) -> dict[str, Any]:
        scores, relevant = self.scores, self.relevant
        hits = scores >= self.hit_at
        mean = float(scores.mean()) if len(scores) else 0.0
        return {
            "topic": self.topic,
            "trace": self.trace,
            "pages": len(scores),
            "relevant": int(relevant.sum()),
            "auc": auc(scores, relevant),
            "ap": average_precision(scores, relevant),
            "hit_recall": float(hits[relevant].mean()) if relevant.any() else None,
            "hit_precision": float(relevant[hits].mean()) if hits.any() else None,
            "relevant_over_mean": float(scores[relevant].mean() / mean) if relevant.any() and mean else None,
        }


def score_trace(urls: list[str], topic: Topic, settings: dict[str, Any], web: Any, relevant: set[str]) -> TraceScores:
    """Score a crawl's fetched pages in fetch order with the page relevance ``settings`` make."""
    from adaptive_spider.crawl.state import CrawlState
    from adaptive_spider.relevance.pagetext import html_page_fields
    from adaptive_spider.settings.config import AdaptiveConfig

    config = AdaptiveConfig.from_settings(
        {**settings, "ADAPTIVE_QUERY": topic.query, "ADAPTIVE_KEYWORDS": list(topic.keywords)}
    )
    state = CrawlState(config)  # the page score, or ADAPTIVE_RELEVANCE's model, as a crawl would score pages
    wanted = {canonical_url(url) for url in relevant}
    scores, labels, hosts = [], [], []
    for url in urls:
        response = web.get(url)
        for _ in range(5):  # the trace has the URL requested; the page is where it redirects
            if response.location is None:
                break
            response = web.get(response.location)
        if not response.is_html:
            continue
        fields = html_page_fields(response.body.decode("utf-8", "replace"), url)
        scores.append(state.page_relevance(fields)[0])
        labels.append(canonical_url(url) in wanted)
        hosts.append(urlsplit(url).hostname or "")
    return TraceScores(
        topic.id, "", np.array(scores), np.array(labels, dtype=bool), config.relevant_threshold, tuple(hosts)
    )


def _format(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| crawl | pages | relevant | AUC | AP | hits R | hits P | rel/mean |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cells = [row[key] for key in ("auc", "ap", "hit_recall", "hit_precision", "relevant_over_mean")]
        lines.append(
            f"| {row['trace']} | {row['pages']} | {row['relevant']} | " + " | ".join(map(_format, cells)) + " |"
        )
    means = []
    for key, name in (("auc", "AUC"), ("ap", "AP"), ("relevant_over_mean", "rel/mean")):
        values = [row[key] for row in rows if row[key] is not None]
        if values:
            means.append(f"{name} {sum(values) / len(values):.3f}")
    if means:
        lines.append(f"\nmean over {len(rows)} crawl(s): " + ", ".join(means))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.page_scores",
        description="Score a harness run's fetched pages again and compare the scores with the topics' labels.",
    )
    parser.add_argument("run", help="a harness output folder written with --traces (results.json, traces/)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="an ADAPTIVE_* setting for the page score, over the run's own (--set of the harness)",
    )  # fmt: skip
    parser.add_argument("--labels", help="labels JSON file (default: the one the run used, beside its topics file)")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    return parser


def _run_metadata(run: Path) -> dict[str, Any]:
    try:
        return json.loads((run / "results.json").read_text(encoding="utf-8"))["harness"]
    except (OSError, ValueError, KeyError) as error:
        raise BadInput(f"{run}: not a harness output folder ({error})") from None


def _topics_file(meta: dict[str, Any]) -> str:
    """The run's topics file: as the harness was given it, or, a relative path that is not there
    from here, from the repository's root (where the README's commands run)."""
    path = Path(meta["topics_file"])
    if not path.is_absolute() and not path.exists() and (REPO / path).exists():
        path = REPO / path
    return str(path)


def _settings(meta: dict[str, Any], pairs: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = dict(meta.get("settings") or {})
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.startswith("ADAPTIVE_"):
            raise BadInput(f"--set {pair!r}: give NAME=VALUE with an ADAPTIVE_* name")
        settings[name] = value
    for name, closest in unknown_settings(settings):
        hint = f"; did you mean {closest}?" if closest else ""
        raise BadInput(f"{name} is not an adaptive_spider setting{hint}")
    return settings


def scored_traces(run: Path, labels: str | None, pairs: list[str], strategy: str = "*") -> list[TraceScores]:
    """Each traced crawl of a harness run (of ``strategy``'s, else of all), its fetched pages
    scored again in fetch order."""
    meta = _run_metadata(run)
    traces = sorted((run / "traces").glob(f"*-{strategy}-*.txt"))
    if not traces:
        which = "" if strategy == "*" else f" of {strategy}"
        raise BadInput(f"{run}: no traces{which} in traces/ (run the harness with --traces)")
    web_args = argparse.Namespace(
        folder=meta.get("folder"), host=meta.get("host") or "site.test", web=meta.get("web", "small")
    )
    topics_file = _topics_file(meta)
    topics = {topic.id: topic for topic in load_topics(topics_file)}
    if not meta.get("keywords"):
        topics = {key: dataclasses.replace(topic, keywords=()) for key, topic in topics.items()}
    crawled = {}
    for path in traces:
        topic_id = next((t for t in sorted(topics, key=len, reverse=True) if path.stem.startswith(t + "-")), None)
        if topic_id is None:
            raise BadInput(f"{path.name}: no topic of {topics_file} it belongs to")
        crawled[path] = topics[topic_id]
    chosen = list({topic.id: topic for topic in crawled.values()}.values())
    labeler = Labeler(load_web(web_args))
    if labels or meta.get("labels_from") == "file":
        relevant = labels_from_file(labeler, chosen, labels, topics_file)
    else:
        relevant = compute_labels(labeler, chosen, None, topics_file)
    settings = _settings(meta, pairs)
    scored = []
    for path, topic in crawled.items():
        urls = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        one = score_trace(urls, topic, settings, labeler.web, relevant[topic.id])
        one.trace = path.stem
        scored.append(one)
    return scored


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run = Path(args.run)
    try:
        settings = _settings(_run_metadata(run), args.set)  # checked before any page is scored
        rows = [scored.row() for scored in scored_traces(run, args.labels, args.set)]
    except (BadInput, TopicsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(markdown(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"run": str(run), "settings": settings, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
