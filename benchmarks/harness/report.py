"""The harness's outputs: results (per topic, strategy and repeat), the table, the JSON file, the plots."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness.crawl import STOCK
from benchmarks.harness.metrics import SHARES, SMALL_WEB, Cutoffs, Run, mean_metrics, recall_curve


def focus_columns(cutoffs: Cutoffs) -> tuple[tuple[str, str, int], ...]:
    """The table's focus columns: (metric key, heading, width)."""
    return tuple((name, name, 6) for name in cutoffs.names)


#: Columns of the table after the focus metrics: (metric key, heading, width).
SPEED_COLUMNS = (
    ("pages_per_s", "pages/s", 7),
    ("speed_vs_stock", "×stock", 6),
    ("cpu_speed_vs_stock", "cpu×st", 6),
    ("finish_reason", "finish", 9),
)
#: The small web's columns.
COLUMNS = focus_columns(SMALL_WEB) + SPEED_COLUMNS
#: Further columns when stock Scrapy replayed a strategy's fetches (``--replay``).
REPLAY_COLUMNS = (("speed_vs_replay", "×same", 6), ("cpu_speed_vs_replay", "cpu×sm", 6))
PLOT_COLOURS = {
    "tres": "#d62728",
    "linkgroups": "#9467bd",
    "bestfirst": "#2ca02c",
    "bfs": "#1f77b4",
    "random": "#8c564b",
    "dfs": "#e377c2",
    STOCK: "#7f7f7f",
}


#: Printed instead of the plots when matplotlib is not installed.
PLOTS_SKIPPED = "plots skipped: pip install '.[bench]' (matplotlib) to get them"


def load_pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or None without matplotlib.

    Imported here, not at the top of the module, so that the harness runs (and prints its
    tables) without the bench extra.
    """
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@dataclass
class TopicResult:
    """Every run of one topic: ``runs[strategy]`` lists one Run per repeat."""

    topic: str
    relevant: set[str]
    query: str = ""
    runs: dict[str, list[Run]] = field(default_factory=dict)
    #: stock Scrapy fetching the same URLs as a strategy's runs (``--replay``)
    replays: dict[str, list[Run]] = field(default_factory=dict)

    def add(self, run: Run) -> None:
        self.runs.setdefault(run.strategy, []).append(run)

    def add_replay(self, strategy: str, run: Run) -> None:
        self.replays.setdefault(strategy, []).append(run)


class Results:
    """What a harness run measured so far, and everything derived from it."""

    def __init__(self, budget: int, strategies: list[str], meta: dict, cutoffs: Cutoffs = SMALL_WEB):
        self.budget = budget
        self.strategies = strategies
        self.meta = meta
        self.cutoffs = cutoffs
        self.topics: dict[str, TopicResult] = {}
        self.interrupted_run: dict | None = None  # the crawl Ctrl-C stopped, not in the table

    def topic(self, topic_id: str, relevant: set[str], query: str = "") -> TopicResult:
        if topic_id not in self.topics:
            self.topics[topic_id] = TopicResult(topic_id, relevant, query)
        return self.topics[topic_id]

    # -- metrics ---------------------------------------------------------------------------
    def metrics(self, topic_id: str, strategy: str) -> dict | None:
        """A strategy's metrics on a topic: focus metrics as the mean over repeats (in free
        order reruns differ; in lockstep they are the same), speed as the median over repeats,
        and speed relative to stock Scrapy on the same topic."""
        result = self.topics[topic_id]
        runs = result.runs.get(strategy)
        if not runs:
            return None
        metrics = runs[0].metrics(result.relevant, self.budget, self.cutoffs)
        if len(runs) > 1:
            metrics.update(
                mean_over_repeats(
                    [r.metrics(result.relevant, self.budget, self.cutoffs) for r in runs], self.budget, self.cutoffs
                )
            )
        metrics["pages_per_s"] = _median(
            [r.metrics(result.relevant, self.budget, self.cutoffs)["pages_per_s"] for r in runs]
        )
        metrics["pages_per_cpu_s"] = _median(
            [r.metrics(result.relevant, self.budget, self.cutoffs)["pages_per_cpu_s"] for r in runs]
        )
        replays = result.replays.get(strategy)
        if replays:
            replay_metrics = [r.metrics(result.relevant, len(r.fetched), self.cutoffs) for r in replays]
            metrics["speed_vs_replay"] = _ratio(
                metrics["pages_per_s"], _median([m["pages_per_s"] for m in replay_metrics])
            )
            metrics["cpu_speed_vs_replay"] = _ratio(
                metrics["pages_per_cpu_s"], _median([m["pages_per_cpu_s"] for m in replay_metrics])
            )
        stock = result.runs.get(STOCK)
        if stock:
            stock_metrics = [r.metrics(result.relevant, self.budget, self.cutoffs) for r in stock]
            metrics["speed_vs_stock"] = _ratio(
                metrics["pages_per_s"], _median([m["pages_per_s"] for m in stock_metrics])
            )
            metrics["cpu_speed_vs_stock"] = _ratio(
                metrics["pages_per_cpu_s"], _median([m["pages_per_cpu_s"] for m in stock_metrics])
            )
        return metrics

    def complete_topics(self, strategy: str) -> list[str]:
        return [t for t, result in self.topics.items() if result.runs.get(strategy)]

    def mean(self, strategy: str) -> dict | None:
        """Mean over the topics measured with ``strategy`` (all of them unless interrupted)."""
        per_topic = [self.metrics(t, strategy) for t in self.complete_topics(strategy)]
        if not per_topic:
            return None
        mean = mean_metrics(per_topic, self.budget, self.cutoffs)
        mean["topics"] = len(per_topic)
        return mean

    def variation(self, topic_id: str, strategy: str) -> dict | None:
        """How the repeats of one (topic, strategy) differ: identical fetch orders? range of each metric."""
        result = self.topics[topic_id]
        runs = result.runs.get(strategy, [])
        if len(runs) < 2:
            return None
        all_metrics = [r.metrics(result.relevant, self.budget, self.cutoffs) for r in runs]
        spread = {}
        never = self.cutoffs.never_reached(self.budget)
        recall = tuple(f"R@{n}" for n in self.cutoffs.recall_at)
        for name in (*recall, "N50", "N90", "pages_per_s", "pages_per_cpu_s"):
            values = [m[name] if m[name] is not None else (never if name in SHARES else None) for m in all_metrics]
            values = [v for v in values if v is not None]
            spread[name] = [min(values), max(values)] if values else None
        fingerprints = {r.fingerprint(self.budget) for r in runs}
        first = runs[0].fetched[: self.budget]
        diverged = [_first_difference(first, r.fetched[: self.budget]) for r in runs[1:]]
        diverged = [d for d in diverged if d is not None]
        return {
            "repeats": len(runs),
            "identical_fetch_order": len(fingerprints) == 1,
            "first_difference_at": min(diverged) if diverged else None,
            **spread,
        }

    # -- outputs ---------------------------------------------------------------------------
    def to_json(self) -> dict:
        topics = {}
        for topic_id, result in self.topics.items():
            topics[topic_id] = {
                "query": result.query,
                "relevant": len(result.relevant),
                "metrics": {s: self.metrics(topic_id, s) for s in self.strategies if result.runs.get(s)},
                "runs": {
                    strategy: [
                        {
                            **run.metrics(result.relevant, self.budget, self.cutoffs),
                            "seconds": round(run.seconds, 3),
                            "cpu_seconds": round(run.cpu_seconds, 3),
                            "fetch_order_sha1": run.fingerprint(self.budget),
                            "found_at": run.found_at(result.relevant, self.budget),
                            "query_learned": run.learned,
                            "failed_requests": run.failed,
                            "links": run.links,
                            **({"model_pages": run.model_pages} if run.model_pages else {}),
                        }
                        for run in runs
                    ]
                    for strategy, runs in result.runs.items()
                },
            }
            if result.replays:
                topics[topic_id]["replays"] = {
                    strategy: [
                        {
                            "pages": len(r.fetched),
                            "seconds": round(r.seconds, 3),
                            "cpu_seconds": round(r.cpu_seconds, 3),
                            "finish_reason": r.finish_reason,
                        }
                        for r in runs
                    ]
                    for strategy, runs in result.replays.items()
                }
            variation = {s: self.variation(topic_id, s) for s in result.runs}
            variation = {s: v for s, v in variation.items() if v is not None}
            if variation:
                topics[topic_id]["variation"] = variation
        results = {
            "harness": self.meta,
            "budget": self.budget,
            "cutoffs": {
                "harvest_at": list(self.cutoffs.harvest_at),
                "recall_at": list(self.cutoffs.recall_at),
                "n_not_reached_counts_as": self.cutoffs.never_reached(self.budget),
            },
            "strategies": self.strategies,
            "topics": topics,
            "mean": {s: self.mean(s) for s in self.strategies if self.mean(s) is not None},
        }
        if self.interrupted_run is not None:
            results["interrupted_run"] = self.interrupted_run
        return results

    def write_json(self, path: Path) -> None:
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        partial.replace(path)

    def table(self, markdown: bool = False) -> str:
        """Per topic and on the mean, one row per strategy."""
        blocks = []
        for topic_id, result in self.topics.items():
            rows = [(s, self.metrics(topic_id, s)) for s in self.strategies if result.runs.get(s)]
            blocks.append((f"{topic_id} ({len(result.relevant)} relevant)", rows))
        if len(self.topics) > 1 or markdown:
            rows = [(s, self.mean(s)) for s in self.strategies if self.mean(s) is not None]
            never = self.cutoffs.never_reached(self.budget)
            title = f"mean over {len(self.topics)} topics (N50/N90 not reached count as {never})"
            blocks.append((title, rows))
        columns = focus_columns(self.cutoffs) + SPEED_COLUMNS
        if any(result.replays for result in self.topics.values()):
            columns = columns[:-1] + REPLAY_COLUMNS + columns[-1:]
        render = _markdown_block if markdown else _text_block
        return "\n\n".join(render(title, rows, self.budget, columns) for title, rows in blocks)

    def variation_table(self) -> str:
        lines = []
        last_recall = f"R@{self.cutoffs.recall_at[-1]}"
        for topic_id, result in self.topics.items():
            for strategy in self.strategies:
                v = self.variation(topic_id, strategy) if result.runs.get(strategy) else None
                if v is None:
                    continue
                same = "identical" if v["identical_fetch_order"] else f"differs from fetch {v['first_difference_at']}"
                lines.append(
                    f"{topic_id:<20} {strategy:<10} {v['repeats']} runs, fetch order {same}; "
                    f"N50 {_range(v['N50'])}, N90 {_range(v['N90'])}, {last_recall} {_range(v[last_recall])}, "
                    f"pages/s {_range(v['pages_per_s'])}, pages/cpu-s {_range(v['pages_per_cpu_s'])}"
                )
        return "\n".join(lines)

    def plot(self, folder: Path) -> list[Path] | None:
        """One PNG per topic of recall against pages fetched, one line per strategy; and all topics in one.

        None when matplotlib is missing: it is in the bench extra only, and the tables and the
        JSON file (the measurements) must not be lost to an ImportError at the very end of a run.
        """
        plt = load_pyplot()
        if plt is None:
            return None
        written = []
        topics = [t for t, r in self.topics.items() if r.runs]
        for topic_id in topics:
            figure, axes = plt.subplots(figsize=(6.4, 4.2))
            self._plot_topic(axes, topic_id, legend=True)
            figure.tight_layout()
            path = folder / f"recall-{topic_id}.png"
            figure.savefig(path, dpi=100)
            plt.close(figure)
            written.append(path)
        if len(topics) > 1:
            columns = 2
            rows = math.ceil(len(topics) / columns)
            figure, grid = plt.subplots(rows, columns, figsize=(11, 3.6 * rows), squeeze=False)
            for axes, topic_id in zip(grid.flat, topics):
                self._plot_topic(axes, topic_id, legend=False)
            for axes in list(grid.flat)[len(topics) :]:
                axes.set_visible(False)
            handles, labels = grid.flat[0].get_legend_handles_labels()
            figure.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
            figure.tight_layout(rect=(0, 0.05, 1, 1))
            path = folder / "recall-all.png"
            figure.savefig(path, dpi=90)
            plt.close(figure)
            written.append(path)
        return written

    def _plot_topic(self, axes, topic_id: str, legend: bool) -> None:
        result = self.topics[topic_id]
        n = len(result.relevant)
        ideal_x = [0, n, self.budget]
        axes.plot(ideal_x, [0, 1, 1], ":", color="#bbbbbb", linewidth=1, label="ideal")
        for strategy in self.strategies:
            runs = result.runs.get(strategy)
            if not runs:
                continue
            run = runs[0]
            xs, ys = recall_curve(run.found_at(result.relevant, self.budget), n, min(len(run.fetched), self.budget))
            width = 2.2 if strategy == "tres" else 1.4
            n90 = run.metrics(result.relevant, self.budget, self.cutoffs)["N90"]
            label = f"{strategy} (N90 {n90 if n90 is not None else f'>{self.budget}'})" if legend else strategy
            axes.plot(xs, ys, color=PLOT_COLOURS.get(strategy), linewidth=width, label=label)
        axes.axhline(0.9, color="#dddddd", linewidth=0.8, zorder=0)
        axes.set_xlim(0, self.budget)
        axes.set_ylim(-0.02, 1.02)
        axes.set_xlabel("pages fetched")
        axes.set_ylabel("recall")
        axes.set_title(f"{topic_id} ({n} relevant)", fontsize=10)
        axes.grid(alpha=0.3)
        if legend:
            axes.legend(loc="lower right", fontsize=8)


def _text_block(title: str, rows: list, budget: int, columns=COLUMNS) -> str:
    head = f"{'strategy':<11}" + "".join(f" {heading:>{width}}" for _, heading, width in columns)
    lines = [title, head]
    for strategy, metrics in rows:
        lines.append(
            f"{strategy:<11}" + "".join(f" {_cell(metrics, key, budget):>{width}}" for key, _, width in columns)
        )
    return "\n".join(lines)


def _markdown_block(title: str, rows: list, budget: int, columns=COLUMNS) -> str:
    lines = [f"**{title}**", "", "| strategy | " + " | ".join(h for _, h, _ in columns) + " |"]
    lines.append("|---|" + "---:|" * (len(columns) - 1) + "---|")
    for strategy, metrics in rows:
        lines.append(f"| {strategy} | " + " | ".join(_cell(metrics, key, budget) for key, _, _ in columns) + " |")
    return "\n".join(lines)


def _cell(metrics: dict, key: str, budget: int) -> str:
    value = metrics.get(key)
    if value is None:
        if key in SHARES and "topics" not in metrics:
            return f">{budget}"
        return "–"
    if "_vs_" in key:
        return f"{value:.2f}"
    if isinstance(value, float) and key.startswith(("H@", "R@")):
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.1f}" if key not in SHARES else f"{value:.0f}"
    return str(value)


def _median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 1) if values else None


def _ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def _range(pair) -> str:
    if pair is None:
        return "–"
    low, high = pair
    return f"{low}" if low == high else f"{low}–{high}"


def _first_difference(a: list[str], b: list[str]) -> int | None:
    for index, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def mean_over_repeats(per_run: list[dict], budget: int, cutoffs: Cutoffs) -> dict:
    """Each focus metric's mean over a topic's repeats; an N50/N90 never reached counts as
    ``cutoffs.never_reached(budget)`` when another repeat reached it (None when none did)."""
    mean: dict = {}
    for name in cutoffs.names:
        values = [m.get(name) for m in per_run]
        if all(v is None for v in values):
            mean[name] = None
        elif name in SHARES:
            mean[name] = round(statistics.mean(cutoffs.never_reached(budget) if v is None else v for v in values), 1)
        else:
            mean[name] = round(statistics.mean(v for v in values if v is not None), 3)
    return mean
