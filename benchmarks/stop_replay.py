"""Where a stop rule that waits for the crawl's best pages to settle would have stopped.

The self-stop's criteria (docs/sufficiency.md) stop a crawl from the big web's hub within some 60
pages, most often before any of its topic's pages (the README, "The self-stop on the big web"):
term coverage and consistency are full by then on a web where the query's words are everywhere.
A candidate rule: stop once the ``k`` best page scores of the crawl have not changed for
``window`` pages. This replays it on crawls that ran with the self-stop off (a harness run made
with ``--traces``): each crawl's pages are scored again in fetch order, as ``page_scores`` does,
and the rule's stop is reported with the topic's relevant pages found by then::

    python -m benchmarks.harness --web big --strategies bestfirst --traces --out /tmp/run
    python -m benchmarks.stop_replay /tmp/run --strategy bestfirst --rule 5:50 --rule 10:200

Counts are of the HTML pages scored (a trace's redirects and other answers are skipped). Nothing
is fetched: the offline web is read from disk.
"""

from __future__ import annotations

import argparse
import heapq
import sys
from pathlib import Path

import numpy as np

from adaptive_spider.settings import defaults
from benchmarks.harness.cli import BadInput
from benchmarks.harness.topics import TopicsError
from benchmarks.page_scores import EXIT_BAD_INPUT, TraceScores, scored_traces

#: Pages before which no rule stops, as for the self-stop's criteria.
MIN_PAGES: int = defaults.ADAPTIVE_STOP_MIN_PAGES


def settled_at(scores: np.ndarray, k: int, window: int, min_pages: int = MIN_PAGES) -> int | None:
    """The page count at which the ``k`` best scores have not changed for ``window`` pages (None: never)."""
    best: list[float] = []  # a min-heap of the k best scores so far
    last_change = 0
    for count, score in enumerate(scores.tolist(), 1):
        if len(best) < k:
            heapq.heappush(best, score)
            last_change = count
        elif score > best[0]:
            heapq.heapreplace(best, score)
            last_change = count
        if count >= min_pages and count - last_change >= window:
            return count
    return None


def _rule(text: str) -> tuple[int, int]:
    k, colon, window = text.partition(":")
    try:
        parsed = int(k), int(window)
    except ValueError:
        parsed = (0, 0)
    if not colon or min(parsed) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give K:WINDOW, two positive integers (e.g. 10:200)")
    return parsed


def rows(scored: list[TraceScores], rules: list[tuple[int, int]]) -> list[str]:
    lines = [
        "| crawl (relevant pages in its trace) | " + " | ".join(f"k={k}, window={w}" for k, w in rules) + " |",
        "|---|" + "---:|" * len(rules),
    ]
    for one in scored:
        cells = []
        for k, window in rules:
            stop = settled_at(one.scores, k, window)
            if stop is None:
                cells.append(f"not within {len(one.scores)}")
            else:
                cells.append(f"{stop} ({int(one.relevant[:stop].sum())} relevant)")
        lines.append(f"| {one.trace} ({int(one.relevant.sum())}) | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stop_replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a harness output folder written with --traces, its crawls run with the self-stop off")
    parser.add_argument(
        "--rule", action="append", type=_rule, metavar="K:WINDOW",
        help="stop once the K best page scores have not changed for WINDOW pages (repeatable; default 5:50, 10:200)",
    )  # fmt: skip
    parser.add_argument("--strategy", default="*", help="replay this strategy's crawls only (default: every crawl)")
    parser.add_argument("--labels", help="labels JSON file (default: the one the run used, beside its topics file)")
    args = parser.parse_args(argv)
    try:
        scored = scored_traces(Path(args.run), args.labels, [], args.strategy)
    except (BadInput, TopicsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print("\n".join(rows(scored, args.rule or [(5, 50), (10, 200)])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
