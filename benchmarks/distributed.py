"""Benchmark: one crawl shared by N workers through Redis, against one worker.

Serves a generated demo site on 127.0.0.1 whose every response waits
``--latency`` seconds (a slow web server: what makes parallel workers pay off),
starts a throwaway redis-server, then crawls the whole site to its end:

1. with one worker of the ``distributed`` profile,
2. with ``--workers`` workers started together,
3. with ``--reference``, also with a plain ``scrapy crawl focused`` (the default profile).

Every run does the same, fixed work: the self-stop is off
(``ADAPTIVE_SELF_STOP=False``) and there is no page budget, so each crawl ends
when the shared frontier is empty and every worker idles (``finished``), after
fetching every page of the site. The benchmark checks it: the pages the site
served are all of its pages, none twice, and the pages each worker wrote
(``-O``) are disjoint and together the whole site. A run that does other work
is an error, not a row.

Each worker is a ``scrapy crawl focused`` subprocess with ``--concurrency``
parallel requests, as one machine would be. Wall times run from starting the
processes to the last one's exit; start-up is until the site's first request.
The site's request log also shows how soon the relevant region was reached
(fetches, in arrival order, until 50% and 90% of the relevant pages).

    python benchmarks/distributed.py                      # 2 workers, 0.5 s latency, 2456 pages
    python benchmarks/distributed.py --workers 3 --latency 0.1
    python benchmarks/distributed.py --repeat 2 --json benchmarks/results/distributed.json
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.distributed.localredis import LocalRedis

PROJECT = Path(__file__).resolve().parent.parent
#: Two workers against one, wall time (issue 15).
TARGET = 0.55


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


def worker_command(url: str, out: Path, concurrency: int, redis_url: str | None) -> list[str]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", "focused",
        "-a", f"query={QUERY}", "-a", f"start_urls={url}",
        "-s", "ADAPTIVE_SELF_STOP=False",  # the whole site, not as much as the self-stop judges enough
        "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO", "-s", f"LOG_FILE={out.with_suffix('.log')}",
        "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={concurrency}",
        "-O", str(out),
    ]  # fmt: skip
    if redis_url:
        command += ["-s", f"REDIS_URL={redis_url}"]
    return command


def run_workers(n: int, url: str, redis_url: str | None, concurrency: int, workdir: Path, label: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SCRAPY_")}
    env["SCRAPY_PROJECT"] = "distributed" if redis_url else "default"
    outs = [workdir / f"{label}-{i}.jsonl" for i in range(n)]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    processes = [
        subprocess.Popen(worker_command(url, out, concurrency, redis_url), cwd=PROJECT, env=env) for out in outs
    ]
    exits: list[float | None] = [None] * n
    while None in exits:
        for i, process in enumerate(processes):
            if exits[i] is None and process.poll() is not None:
                exits[i] = time.perf_counter()
        time.sleep(0.02)
    codes = [process.returncode for process in processes]
    if any(codes):
        raise SystemExit(f"{label}: a worker failed (exit codes {codes}); see {workdir}")
    finished = max(exits)  # type: ignore[type-var]
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "workers": n,
        "started": started,
        "finished": finished,
        "wall": finished - started,
        "exit_spread": finished - min(exits),  # type: ignore[type-var]
        # CPU seconds of the workers together (user and system): what they ask of the machine's cores.
        "cpu": cpu_after.ru_utime - cpu_before.ru_utime + cpu_after.ru_stime - cpu_before.ru_stime,
        "reasons": [finish_reason(out.with_suffix(".log")) for out in outs],
        "pages_by_worker": [sorted(urls_written(out)) for out in outs],
    }


def finish_reason(log_file: Path) -> str:
    for line in log_file.read_text(encoding="utf-8").splitlines():
        if "'finish_reason':" in line:
            return line.split(":", 1)[1].strip(" ',")
    return "?"


def urls_written(out: Path) -> set[str]:
    return {json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()}


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
    return {
        "fetches": len(pages),
        "distinct": len(counts),
        "duplicates": sum(n - 1 for n in counts.values()),
        "reach": reach,
    }


def check_same_work(result: dict, paths: list[str], site: DemoSite, base: str) -> list[str]:
    """What makes a run not the fixed work (the whole site, each page once); empty if none."""
    problems = []
    served = collections.Counter(path for path in paths if path != "/robots.txt")
    if set(served) != set(site.pages):
        missing, extra = set(site.pages) - set(served), set(served) - set(site.pages)
        problems.append(
            f"the site served {len(served)} distinct paths, not its {len(site.pages)} pages (missing {len(missing)}, other {len(extra)})"
        )
    twice = sorted(path for path, count in served.items() if count > 1)
    if twice:
        problems.append(f"{len(twice)} pages fetched more than once, e.g. {twice[:3]}")
    every = {base + path for path in site.pages}
    written = [set(urls) for urls in result["pages_by_worker"]]
    union = set().union(*written)
    if union != every:
        problems.append(f"the workers wrote {len(union)} of the site's {len(every)} pages")
    overlap = sum(len(a & b) for i, a in enumerate(written) for b in written[i + 1 :])
    if overlap:
        problems.append(f"{overlap} pages written by two workers")
    if set(result["reasons"]) != {"finished"}:
        problems.append(f"finish reasons {result['reasons']}, not finished")
    return problems


def git_commit() -> str:
    """The commit of the code measured; "+changes" if the code (not the docs) differs from it."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True)
    code = ["adaptive_spider", "spiders", "settings_profiles", "benchmarks/distributed.py"]
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *code], cwd=PROJECT, capture_output=True, text=True)
    return done.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each response waits (default 0.5)")
    parser.add_argument("--concurrency", type=int, default=8, help="parallel requests per worker (default 8)")
    parser.add_argument("--hubs", type=int, default=8, help="hub pages per topic of the site (default 8)")
    parser.add_argument("--articles", type=int, default=50, help="articles per hub (default 50)")
    parser.add_argument("--reference", action="store_true", help="also time a plain (not distributed) focused crawl")
    parser.add_argument("--repeat", type=int, default=1, help="times to run the whole comparison (default 1)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--workdir", help="keep the workers' logs and items here (default: a temporary directory)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    site = DemoSite(seed=0, hubs_per_topic=args.hubs, articles_per_hub=args.articles)
    log = TimedLog()
    server, url = serve(site, latency=args.latency, request_log=log)
    base = url.rstrip("/")
    print(f"site: {len(site.pages)} pages ({len(site.relevant)} relevant), latency {args.latency} s, "
          f"{args.concurrency} parallel requests per worker, self-stop off: every run crawls the whole site")  # fmt: skip
    runs = [("1 worker", 1, True), (f"{args.workers} workers", args.workers, True)]
    if args.reference:
        runs.append(("plain focused crawl", 1, False))
    rows = []
    load_before = os.getloadavg()
    commit = git_commit()
    with contextlib.ExitStack() as stack:
        tmp = args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="adaptive-bench-"))
        Path(tmp).mkdir(parents=True, exist_ok=True)
        redis_server = stack.enter_context(LocalRedis())
        for repeat in range(args.repeat):
            for label, n, shared in runs:
                log.clear()
                name = f"{label.replace(' ', '_')}-{repeat}"
                result = run_workers(n, url, redis_server.url if shared else None, args.concurrency, Path(tmp), name)
                problems = check_same_work(result, list(log), site, base)
                if problems:
                    raise SystemExit(f"{label}: not the whole site once: " + "; ".join(problems))
                result.update(fetch_figures(list(log), site.relevant), label=label, repeat=repeat)
                result["pages_per_worker"] = [len(urls) for urls in result.pop("pages_by_worker")]
                # Process start-up (imports, settings) until the first fetch, then the crawl to the last exit.
                result["startup"] = log.times[0] - result["started"]
                result["crawl"] = result["finished"] - log.times[0]
                result["last_fetch_to_exit"] = result["finished"] - log.times[-1]
                # Parallel use of the workers' request slots from the first to the last fetch's answer
                # (1.0: every slot of every worker always waiting for the server).
                busy = result["fetches"] * args.latency
                result["slot_use"] = busy / (n * args.concurrency * (log.times[-1] - log.times[0] + args.latency))
                if args.workdir:
                    times = [round(t - result["started"], 3) for t in log.times]
                    (Path(tmp) / f"{name}-fetches.json").write_text(json.dumps(list(zip(times, log, strict=True))))
                rows.append(result)
                if shared:  # a new crawl under the same keys next time
                    redis_server_flush(redis_server.url)
    server.shutdown()
    print_table(rows)
    summary = summarise(rows, args.workers)
    for line in summary["lines"]:
        print(line)
    if args.json:
        write_json(Path(args.json), args, site, rows, summary, load_before, commit)


def summarise(rows: list[dict], workers: int) -> dict:
    single = [row for row in rows if row["label"] == "1 worker"]
    multi = [row for row in rows if row["label"] == f"{workers} workers"]
    wall = [m["wall"] / s["wall"] for s, m in zip(single, multi, strict=True)]
    crawl = [m["crawl"] / s["crawl"] for s, m in zip(single, multi, strict=True)]
    lines = [
        f"\n{workers} workers / 1 worker wall time: {', '.join(f'{r:.3f}' for r in wall)} (target <= {TARGET})",
        f"{workers} workers / 1 worker crawl time (first fetch to last exit): {', '.join(f'{r:.3f}' for r in crawl)}",
        f"duplicate fetches with {workers} workers: {', '.join(str(m['duplicates']) for m in multi)}",
    ]
    return {"wall_ratio": wall, "crawl_ratio": crawl, "target": TARGET, "lines": lines}


def write_json(path: Path, args, site: DemoSite, rows: list[dict], summary: dict, load_before, commit: str) -> None:
    keep = ("label", "repeat", "workers", "wall", "startup", "crawl", "last_fetch_to_exit", "exit_spread", "slot_use", "cpu",
            "fetches", "distinct", "duplicates", "pages_per_worker", "reasons")  # fmt: skip
    document = {
        "benchmark": "distributed",
        "commit": commit,
        "command": shlex.join(["python", "benchmarks/distributed.py", *sys.argv[1:]]),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": load_before,
            "load_after": os.getloadavg(),
        },
        "site": {"pages": len(site.pages), "relevant": len(site.relevant), "latency_s": args.latency},
        "concurrency_per_worker": args.concurrency,
        "self_stop": False,
        "runs": [
            {
                **{key: round(row[key], 2) if isinstance(row[key], float) else row[key] for key in keep},
                "reach_50": row["reach"][0.5],
                "reach_90": row["reach"][0.9],
            }
            for row in rows
        ],
        "wall_ratio": [round(r, 3) for r in summary["wall_ratio"]],
        "crawl_ratio": [round(r, 3) for r in summary["crawl_ratio"]],
        "target": summary["target"],
    }
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"results: {path}")


def redis_server_flush(url: str) -> None:
    import redis  # the distributed extra

    redis.Redis.from_url(url).flushdb()


def print_table(rows: list[dict]) -> None:
    header = (f"{'run':<22}{'wall s':>8}{'start-up':>9}{'crawl s':>8}{'fetches':>9}{'dupes':>7}{'per worker':>12}{'slots':>7}{'cpu s':>7}"
              f"{'50% rel':>9}{'90% rel':>9}  finish")  # fmt: skip
    print("\n" + header)
    print("-" * len(header))
    for row in rows:
        reach = row["reach"]
        split = "/".join(str(n) for n in row["pages_per_worker"])
        print(
            f"{row['label']:<22}{row['wall']:>8.1f}{row['startup']:>9.1f}{row['crawl']:>8.1f}{row['fetches']:>9}{row['duplicates']:>7}"
            f"{split:>12}{row['slot_use']:>7.0%}{row['cpu']:>7.1f}{reach[0.5] or '-':>9}{reach[0.9] or '-':>9}  {','.join(sorted(set(row['reasons'])))}"
        )


if __name__ == "__main__":
    main()
