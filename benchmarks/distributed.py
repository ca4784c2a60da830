"""Benchmark: one crawl shared by N workers through Redis, against one worker.

Serves a generated demo site on 127.0.0.1 whose every response waits
``--latency`` seconds (a slow web, where parallel workers pay off), starts a
throwaway redis-server, then crawls the whole site to its end (the crawl stops
itself when the shared frontier is empty and every worker is idle):

1. with one worker of the ``distributed`` profile,
2. with ``--workers`` workers started together,
3. with ``--reference``, also with a plain ``scrapy crawl focused`` (the default profile).

Each worker is a ``scrapy crawl focused`` subprocess with ``--concurrency``
parallel requests, as one machine would be. Wall times run from starting the
processes to the last one's exit. The site's request log shows every fetch:
duplicates (the same path fetched twice, robots.txt excepted) and how soon the
relevant region was reached (fetches, in arrival order, until 50% and 90% of
the relevant pages).

    python benchmarks/distributed.py                      # 2 workers, 0.5 s latency, 2456 pages
    python benchmarks/distributed.py --workers 3 --latency 0.1
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.distributed.localredis import LocalRedis

PROJECT = Path(__file__).resolve().parent.parent


class TimedLog(list):
    """The site's request log, with the time each request arrived."""

    def __init__(self):
        super().__init__()
        self.times: list[float] = []

    def append(self, path) -> None:
        self.times.append(time.perf_counter())
        super().append(path)

    def clear(self) -> None:
        super().clear()
        self.times.clear()


def worker_command(url: str, log_file: Path, concurrency: int, redis_url: str | None) -> list[str]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", "focused",
        "-a", f"query={QUERY}", "-a", f"start_urls={url}",
        "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FILE={log_file}",
        "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}",
    ]  # fmt: skip
    if redis_url:
        command += ["-s", f"REDIS_URL={redis_url}"]
    return command


def run_workers(n: int, url: str, redis_url: str | None, concurrency: int, workdir: Path, label: str) -> dict:
    env = {**os.environ, "SCRAPY_PROJECT": "distributed" if redis_url else "default"}
    started = time.perf_counter()
    processes = [
        subprocess.Popen(worker_command(url, workdir / f"{label}-{i}.log", concurrency, redis_url), cwd=PROJECT, env=env)
        for i in range(n)
    ]
    codes = [process.wait() for process in processes]
    finished = time.perf_counter()
    if any(codes):
        raise SystemExit(f"{label}: a worker failed (exit codes {codes}); see {workdir}")
    reasons = [finish_reason(workdir / f"{label}-{i}.log") for i in range(n)]
    return {"started": started, "finished": finished, "wall": finished - started, "reasons": reasons}


def finish_reason(log_file: Path) -> str:
    for line in log_file.read_text(encoding="utf-8").splitlines():
        if "'finish_reason':" in line:
            return line.split(":", 1)[1].strip(" ',")
    return "?"


def fetch_figures(paths: list[str], relevant: set[str]) -> dict:
    pages = [path for path in paths if path != "/robots.txt"]
    counts = collections.Counter(pages)
    reach = {}
    for share in (0.5, 0.9):
        need, found = int(share * len(relevant) + 0.999), 0
        reach[share] = None
        for index, path in enumerate(pages, 1):
            found += path in relevant
            if found >= need:
                reach[share] = index
                break
    return {"fetches": len(pages), "distinct": len(counts), "duplicates": sum(n - 1 for n in counts.values()), "reach": reach}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each response waits (default 0.5)")
    parser.add_argument("--concurrency", type=int, default=8, help="parallel requests per worker (default 8)")
    parser.add_argument("--hubs", type=int, default=8, help="hub pages per topic of the site (default 8)")
    parser.add_argument("--articles", type=int, default=50, help="articles per hub (default 50)")
    parser.add_argument("--reference", action="store_true", help="also time a plain (not distributed) focused crawl")
    args = parser.parse_args(argv)

    site = DemoSite(seed=0, hubs_per_topic=args.hubs, articles_per_hub=args.articles)
    log = TimedLog()
    server, url = serve(site, latency=args.latency, request_log=log)
    print(f"site: {len(site.pages)} pages ({len(site.relevant)} relevant), latency {args.latency} s, "
          f"{args.concurrency} parallel requests per worker")  # fmt: skip
    runs = [("1 worker", 1, True), (f"{args.workers} workers", args.workers, True)]
    if args.reference:
        runs.append(("plain focused crawl", 1, False))
    rows = []
    with tempfile.TemporaryDirectory(prefix="adaptive-bench-") as tmp, LocalRedis() as redis_server:
        for label, n, shared in runs:
            log.clear()
            result = run_workers(n, url, redis_server.url if shared else None, args.concurrency, Path(tmp), label.replace(" ", "_"))
            result.update(fetch_figures(list(log), site.relevant), label=label)
            # Process start-up (imports, settings) until the first fetch, then the crawl to the last exit.
            result["startup"] = log.times[0] - result["started"] if log.times else float("nan")
            result["crawl"] = result["finished"] - log.times[0] if log.times else float("nan")
            rows.append(result)
            if shared:  # a new crawl under the same keys next time
                redis_server_flush(redis_server.url)
    server.shutdown()
    print_table(rows)
    single, multi = rows[0], rows[1]
    print(f"\n{args.workers} workers / 1 worker wall time: {multi['wall'] / single['wall']:.2f} (target <= 0.6)")
    print(f"{args.workers} workers / 1 worker crawl time (first fetch to last exit): {multi['crawl'] / single['crawl']:.2f}")
    print(f"duplicate fetches with {args.workers} workers: {rows[1]['duplicates']}")


def redis_server_flush(url: str) -> None:
    import redis  # noqa: PLC0415 (the distributed extra)

    redis.Redis.from_url(url).flushdb()


def print_table(rows: list[dict]) -> None:
    header = f"{'run':<22}{'wall s':>8}{'start-up':>9}{'crawl s':>8}{'fetches':>9}{'dupes':>7}{'50% rel':>9}{'90% rel':>9}  finish"
    print("\n" + header)
    print("-" * len(header))
    for row in rows:
        reach = row["reach"]
        print(
            f"{row['label']:<22}{row['wall']:>8.1f}{row['startup']:>9.1f}{row['crawl']:>8.1f}{row['fetches']:>9}{row['duplicates']:>7}"
            f"{reach[0.5] or '-':>9}{reach[0.9] or '-':>9}  {','.join(sorted(set(row['reasons'])))}"
        )


if __name__ == "__main__":
    main()
