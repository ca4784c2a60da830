"""Focus benchmark: superseded by ``python -m benchmarks.harness``, kept for its names and its command.

The harness runs the same crawls (the ``focused`` spider per topic and strategy,
and stock Scrapy, in this process, through the offline web's proxy), computes
the labels from the topics' rules, reports H@200, H@500, R@500, R@1000, N50, N90
and pages/s with rerun-stable fetch orders, and writes a JSON file and plots.
``benchmarks.simulate`` imports ``SHARED``, ``Run`` and ``summarize`` from here.

    python -m benchmarks.focus --budget 1000 --strategies tres,bestfirst,bfs,stock   # = benchmarks.harness
"""

from __future__ import annotations

import sys

from benchmarks.harness.cli import PROJECT, main, shared_webbench
from benchmarks.harness.crawl import STOCK
from benchmarks.harness.metrics import Run, summarize

SHARED = shared_webbench() or PROJECT.parent / "shared" / "webbench"

__all__ = ["PROJECT", "SHARED", "STOCK", "Run", "main", "summarize"]

if __name__ == "__main__":
    sys.exit(main())
