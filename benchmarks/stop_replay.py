"""Where a stop rule that waits for the crawl's best pages to settle would have stopped.

Without a wait, the self-stop's criteria (docs/sufficiency.md) stopped a crawl from the big web's
hub within some 60 pages, most often before any of its topic's pages: term coverage and
consistency are full by then on a web where the query's words are everywhere. Three rules are
replayed on crawls that ran with the self-stop off (a harness run made with ``--traces``): each
crawl's pages are scored again in fetch order, as ``page_scores`` does, and the rule's stop is
reported with the topic's relevant pages found by then.

- ``--rule K:WINDOW``: stop once the ``K`` best page scores have not changed for ``WINDOW`` pages
  (the first candidate);
- ``--wait K:RATIO``: the crawl's own wait (``ADAPTIVE_STOP_BEST_PAGES``, ``ADAPTIVE_STOP_SETTLE``):
  stop once no page has joined the ``K`` best with ``BEST_SHARE`` of the best score or more for
  ``RATIO`` x the pages it took to find them, nor for ``ADAPTIVE_STOP_MIN_PAGES``. The crawl
  waits this way and then stops on a criterion that holds, which on the big web is at once.
- ``--pace WINDOW:DROP``: the crawl's waits with ``ADAPTIVE_STOP_HARVEST_WINDOW=WINDOW`` and
  ``ADAPTIVE_STOP_HARVEST_DROP=DROP``: the wait above (``--wait 10:1``), and until the last ``WINDOW``
  pages held at most ``DROP`` x the most pages near the best (``BEST_SHARE`` of the best score when
  they came) that any ``WINDOW`` pages in a row held; no such wait while no score reached the
  relevant threshold. ``WINDOW:DROP:HOST_WINDOW`` also waits, as a rule not built into the
  crawl, while any host fetched within the last ``WINDOW`` pages still gives pages near the best
  at more than ``DROP`` x its own best pace over its last ``HOST_WINDOW`` pages: a slow host the
  frontier holds back delivers a topic's pages at its own pace, which the pace per page fetched
  reads as the topic running out.

::

    python -m benchmarks.harness --web big --strategies bestfirst --traces --out /tmp/run
    python -m benchmarks.stop_replay /tmp/run --strategy bestfirst --rule 10:200 --wait 10:1
    python -m benchmarks.stop_replay /tmp/run --strategy bestfirst --wait 10:1 --pace 0:0 --pace 100:0.1

Counts are of the HTML pages scored (a trace's redirects and other answers are skipped). Nothing
is fetched: the offline web is read from disk.
"""

from __future__ import annotations

import argparse
import heapq
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from adaptive_spider.settings import defaults
from adaptive_spider.sufficiency.estimator import BEST_SHARE
from benchmarks.harness.cli import BadInput
from benchmarks.harness.topics import TopicsError
from benchmarks.page_scores import EXIT_BAD_INPUT, TraceScores, scored_traces

#: Pages before which no rule stops, as for the self-stop's criteria.
MIN_PAGES: int = defaults.ADAPTIVE_STOP_MIN_PAGES
#: Scores from which a page counts as relevant (the pace's wait starts with the first).
RELEVANT_THRESHOLD: float = defaults.ADAPTIVE_RELEVANT_THRESHOLD


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


def waited_until(
    scores: np.ndarray, k: int, ratio: float, share: float = BEST_SHARE, min_pages: int = MIN_PAGES
) -> int | None:
    """The page count at which the crawl's wait ends: no score has joined the ``k`` best with
    ``share`` of the best score or more for ``ratio`` x the pages it took, nor for ``min_pages``
    (None: not within the scores). Scores of 0 never join, as in the estimator."""
    best: list[float] = []  # a min-heap of the k best scores so far
    top = 0.0
    changed = 0
    for count, score in enumerate(scores.tolist(), 1):
        if score > 0 and (len(best) < k or score > best[0]):
            if len(best) < k:
                heapq.heappush(best, score)
            else:
                heapq.heapreplace(best, score)
            if score >= share * top:
                changed = count
            top = max(top, score)
        if count >= min_pages and count - changed >= max(min_pages, ratio * changed):
            return count
    return None


def paced_until(
    scores: np.ndarray,
    window: int,
    drop: float,
    k: int = defaults.ADAPTIVE_STOP_BEST_PAGES,
    ratio: float = defaults.ADAPTIVE_STOP_SETTLE,
    share: float = BEST_SHARE,
    min_pages: int = MIN_PAGES,
    relevant_threshold: float = RELEVANT_THRESHOLD,
    hosts: Sequence[str] = (),
    host_window: int = 0,
) -> int | None:
    """The first page count at which both of the crawl's waits are over (None: not within the
    scores): the best pages' (:func:`waited_until`) and the pace's, as the estimator's
    ``harvest_settled`` (``window`` 0: the first alone). With ``host_window`` and each page's
    host, also each host's pace over its own last ``host_window`` pages, for the hosts fetched
    within the last ``window`` pages (a replay of a rule the crawl does not have)."""
    if host_window and len(hosts) != len(scores):
        raise ValueError("host_window needs the host of every scored page")
    best: list[float] = []  # a min-heap of the k best scores so far
    top = 0.0
    changed = 0
    near: deque[int] = deque(maxlen=window or 1)
    peak = 0
    per_host: dict[str, _HostPace] = {}
    for count, score in enumerate(scores.tolist(), 1):
        is_near = score > 0 and score >= share * top
        if score > 0 and (len(best) < k or score > best[0]):
            if len(best) < k:
                heapq.heappush(best, score)
            else:
                heapq.heapreplace(best, score)
            if score >= share * top:
                changed = count
        top = max(top, score)
        near.append(int(is_near))
        if window and count >= window:
            peak = max(peak, sum(near))
        if host_window:
            per_host.setdefault(hosts[count - 1], _HostPace(host_window)).add(int(is_near), count)
        best_over = count >= min_pages and count - changed >= max(min_pages, ratio * changed)
        pace_over = not window or top < relevant_threshold or (count >= window and sum(near) <= drop * peak)
        if best_over and pace_over and top >= relevant_threshold and per_host:
            pace_over = not any(host.keeps_pace(count, window, drop) for host in per_host.values())
        if best_over and pace_over:
            return count
    return None


class _HostPace:
    """One host's pages near the best over its own last ``window`` pages, and their best count."""

    def __init__(self, window: int) -> None:
        self.near: deque[int] = deque(maxlen=window)
        self.peak = 0
        self.last_page = 0

    def add(self, is_near: int, count: int) -> None:
        self.near.append(is_near)
        self.last_page = count
        # Counted before the window is full too: a slow host's first pages near the best count.
        self.peak = max(self.peak, sum(self.near))

    def keeps_pace(self, count: int, recent: int, drop: float) -> bool:
        """Fetched within the last ``recent`` pages, and its last pages still above ``drop`` x its peak."""
        return count - self.last_page < recent and self.peak > 0 and sum(self.near) > drop * self.peak


def _pair(text: str, second: type, form: str) -> tuple[int, float]:
    """``K:X`` as a positive integer and a positive ``second``; an argparse error naming ``form`` else."""
    k, colon, rest = text.partition(":")
    try:
        parsed = int(k), second(rest)
    except ValueError:
        parsed = (0, 0)
    if not colon or parsed[0] < 1 or not parsed[1] > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give {form}")
    return parsed


def _rule(text: str) -> tuple[int, int]:
    k, window = _pair(text, int, "K:WINDOW, two positive integers (e.g. 10:200)")
    return k, int(window)


def _wait(text: str) -> tuple[int, float]:
    return _pair(text, float, "K:RATIO, a positive integer and a positive number (e.g. 10:1)")


def _pace(text: str) -> tuple[int, float, int]:
    parts = text.split(":")
    try:
        parsed = int(parts[0]), float(parts[1]), int(parts[2]) if len(parts) == 3 else 0
    except (ValueError, IndexError):
        parsed = (-1, -1.0, -1)
    if len(parts) > 3 or parsed[0] < 0 or not 0 <= parsed[1] <= 1 or parsed[2] < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give WINDOW:DROP[:HOST_WINDOW], an integer >= 0, a share and an integer >= 0 (e.g. 100:0.1)"
        )
    return parsed


def rows(
    scored: list[TraceScores],
    rules: list[tuple[int, int]],
    waits: list[tuple[int, float]] | None = None,
    paces: list[tuple[int, float, int]] | None = None,
) -> list[str]:
    waits = waits or []
    paces = paces or []
    heads = [f"k={k}, window={w}" for k, w in rules] + [f"wait k={k}, ratio={r:g}" for k, r in waits]
    heads += [f"wait and pace window={w}, drop={d:g}" + (f", each host's {h}" if h else "") for w, d, h in paces]
    lines = ["| crawl (relevant pages in its trace) | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for one in scored:
        stops = [settled_at(one.scores, k, window) for k, window in rules]
        stops += [waited_until(one.scores, k, ratio) for k, ratio in waits]
        stops += [
            paced_until(one.scores, window, drop, hosts=one.hosts, host_window=each) for window, drop, each in paces
        ]
        cells = [
            f"not within {len(one.scores)}" if stop is None else f"{stop} ({int(one.relevant[:stop].sum())} relevant)"
            for stop in stops
        ]
        lines.append(f"| {one.trace} ({int(one.relevant.sum())}) | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stop_replay", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "run", help="a harness output folder written with --traces, its crawls run with the self-stop off"
    )
    parser.add_argument(
        "--rule", action="append", type=_rule, metavar="K:WINDOW",
        help="stop once the K best page scores have not changed for WINDOW pages (repeatable; default 5:50, 10:200)",
    )  # fmt: skip
    parser.add_argument(
        "--wait", action="append", type=_wait, metavar="K:RATIO",
        help="the crawl's own wait: no page joined the K best near the best for RATIO x the pages it took (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--pace", action="append", type=_pace, metavar="WINDOW:DROP[:HOST_WINDOW]",
        help="the crawl's waits as they are: --wait 10:1 and the pace of pages near the best (repeatable; 0:0"
        " none); HOST_WINDOW: also each host's own pace over its last HOST_WINDOW pages (not in the crawl)",
    )  # fmt: skip
    parser.add_argument("--strategy", default="*", help="replay this strategy's crawls only (default: every crawl)")
    parser.add_argument("--labels", help="labels JSON file (default: the one the run used, beside its topics file)")
    args = parser.parse_args(argv)
    try:
        scored = scored_traces(Path(args.run), args.labels, [], args.strategy)
    except (BadInput, TopicsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    rules = args.rule or ([] if args.wait or args.pace else [(5, 50), (10, 200)])
    print("\n".join(rows(scored, rules, args.wait, args.pace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
