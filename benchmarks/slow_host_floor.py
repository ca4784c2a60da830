"""How soon any crawl could reach N90 on the big web, given its slow hosts' answers.

The big web's targets (N90 at most 1500 fetches) and its baselines count fetches, not seconds:
the spec's oracle needs about 185 fetches for N90. A real crawl waits for the slow hosts
(cppreference, Oracle's Java, Erlang: 1.5 to 3 s an answer) with at most
``CONCURRENT_REQUESTS_PER_DOMAIN`` requests in flight each, and fetches the other hosts'
pages meanwhile, each fetch counted. This computes, per topic, a floor under that count:

- ``need``: 90% of the topic's relevant pages; ``fast``: those on hosts that answer at once.
- ``seconds``: the least time in which the slow hosts can answer the rest, each taking its
  relevant pages quickest first, every place of its download slot always busy, its robots.txt
  first; the pages that lead to them, the pages of other hosts and the downloader's overall
  ``CONCURRENT_REQUESTS`` cost nothing here, so a real crawl needs longer.
- ``floor``: ``seconds`` times a pages/s the crawl keeps meanwhile, and at least ``need``. A
  crawl that fetched nothing else while it waited would meet the fetch count and not the
  speed target (0.9 times stock Scrapy's pages/s in the same run).

With ``--run DIR`` (a harness run of the same web), each topic's floor is also given at that
crawl's own pages/s, beside its N90::

    python -m benchmarks.slow_host_floor                     # the dev topics, 27.5 pages/s
    python -m benchmarks.slow_host_floor --labels benchmarks/topics/labels-bigweb-heldout.json
    python -m benchmarks.slow_host_floor --run /tmp/runs/big-dev
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.harness.cli import spec_folder
from benchmarks.webbench.bigweb import big_conditions

#: Stock Scrapy's pages/s on the big web as the spec measured it (30.6), times the speed target (0.9).
DEFAULT_RATE = 0.9 * 30.6
#: Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN, which the default profile keeps.
SLOT_CONCURRENCY = 8


@dataclass(frozen=True)
class Floor:
    relevant: int
    need: int
    fast: int
    slow_by_host: dict[str, int]
    seconds: float

    def fetches(self, rate: float) -> int:
        """The fewest fetches by which the crawl, keeping ``rate`` pages/s, has ``need`` relevant pages."""
        return max(self.need, math.ceil(self.seconds * rate))


def answered_by(delays: list[float], start: float, slots: int, seconds: float) -> int:
    """How many of a host's pages (answer times ``delays``, quickest first) its ``slots``
    places can have answered ``seconds`` after the start, the first place free at ``start``
    (its robots.txt): no place idle, a work-conserving bound."""
    budget = slots * (seconds - start)
    done, spent = 0, 0.0
    for delay in delays:
        if spent + delay > budget:
            break
        spent += delay
        done += 1
    return done


def floor_of(
    urls: Iterable[str], delay: Callable[[str, str], float], share: float = 0.9, slots: int = SLOT_CONCURRENCY
) -> Floor:
    """The :class:`Floor` of a topic whose relevant pages are ``urls`` on a web whose
    answer to ``path`` on ``host`` takes ``delay(host, path)`` seconds."""
    by_host: dict[str, list[float]] = defaultdict(list)
    fast = 0
    urls = list(urls)
    for url in urls:
        parts = urlsplit(url)
        host = parts.hostname or ""
        seconds = delay(host, parts.path or "/")
        if seconds > 0:
            by_host[host].append(seconds)
        else:
            fast += 1
    need = math.ceil(share * len(urls))
    slow = {host: sorted(delays) for host, delays in by_host.items()}
    starts = {host: delay(host, "/robots.txt") for host in slow}

    def enough(seconds: float) -> bool:
        return fast + sum(answered_by(slow[h], starts[h], slots, seconds) for h in slow) >= need

    if fast >= need:
        return Floor(len(urls), need, fast, {h: len(d) for h, d in slow.items()}, 0.0)
    low, high = 0.0, max(starts.values(), default=0.0) + sum(sum(d) for d in slow.values()) / slots + 1.0
    for _ in range(60):  # bisection to well under a millisecond
        middle = (low + high) / 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return Floor(len(urls), need, fast, {h: len(d) for h, d in slow.items()}, high)


def run_figures(run: Path) -> dict[str, tuple[float, int | None]]:
    """``topic -> (pages/s, N90)`` of the first strategy of a harness run's results.json."""
    results = json.loads((run / "results.json").read_text())
    figures = {}
    for topic, entry in results["topics"].items():
        metrics = next(iter(entry["metrics"].values()))
        figures[topic] = (float(metrics["pages_per_s"]), metrics.get("N90"))
    return figures


def report(labels: Mapping[str, list[str]], rate: float, run: Mapping[str, tuple[float, int | None]]) -> str:
    conditions = big_conditions()
    lines = [
        f"| topic | relevant | need (90%) | on fast hosts | on slow hosts | seconds | floor at {rate:.1f} pages/s"
        + (" | the run's pages/s | floor at it | the run's N90 |" if run else " |"),
        "|---|---:|---:|---:|---|---:|---:" + ("|---:|---:|---:|" if run else "|"),
    ]
    for topic, urls in labels.items():
        if topic.startswith("_"):
            continue
        floor = floor_of(urls, conditions.delay)
        slow = ", ".join(f"{host.split('.')[-2]} {n}" for host, n in sorted(floor.slow_by_host.items())) or "–"
        row = f"| {topic} | {floor.relevant} | {floor.need} | {floor.fast} | {slow} | {floor.seconds:.1f} | {floor.fetches(rate)}"
        if run:
            pages_per_s, n90 = run.get(topic, (float("nan"), None))
            at_run = floor.fetches(pages_per_s) if pages_per_s == pages_per_s else "–"
            row += f" | {pages_per_s:.1f} | {at_run} | {n90 if n90 is not None else '>budget'} |"
        else:
            row += " |"
        lines.append(row)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.slow_host_floor", description=__doc__.split("\n")[0])
    parser.add_argument("--labels", help="labels JSON of the big web (default: the dev topics' labels-dev.json)")
    parser.add_argument(
        "--rate", type=float, default=DEFAULT_RATE, help="pages/s the crawl keeps (default %(default).1f)"
    )
    parser.add_argument("--run", type=Path, help="a harness run (--web big): its pages/s and N90 per topic as well")
    args = parser.parse_args(argv)
    shared = spec_folder("big")
    if args.labels is None and shared is None:
        parser.error("the big web's spec folder (../shared/bigweb) was not found: give --labels")
    path = Path(args.labels) if args.labels else shared / "labels-dev.json"
    labels = json.loads(path.read_text())
    print(f"labels: {path}")
    print(report(labels, args.rate, run_figures(args.run) if args.run else {}))


if __name__ == "__main__":
    main()
