"""Focus benchmark: how soon each strategy fetches a topic's pages on the offline web.

Runs the ``focused`` spider once per (topic, strategy), in this process, one
after another, through the offline web's proxy (started here in its own process
so that it never competes with the crawler for the GIL), plus stock Scrapy:
the same spider with Scrapy's own scheduler in breadth-first order and none of
adaptive_spider's components. Prints, per topic and on the mean: H@200, R@500,
R@1000, N50, N90 and pages/s; writes the same as JSON with ``--out``.

    python -m benchmarks.focus --budget 1000 --strategies tres,bestfirst,bfs,stock
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
SHARED = PROJECT.parent / "shared" / "webbench"
STOCK = "stock"


@dataclass
class Run:
    """One crawl: the fetch order and how long it took."""

    topic: str
    strategy: str
    fetched: list[str] = field(default_factory=list)
    seconds: float = 0.0
    finish_reason: str = ""

    def metrics(self, relevant: set[str], budget: int) -> dict:
        fetched = self.fetched[:budget]
        hits = [url in relevant for url in fetched]
        found_at = [i for i, hit in enumerate(hits, 1) if hit]

        def fetches_for(share):
            need = max(1, int(share * len(relevant) + 0.999))
            return found_at[need - 1] if len(found_at) >= need else None

        def harvest(n):
            return sum(hits[:n]) / n if len(hits) >= n else sum(hits) / max(len(hits), 1)

        def recall(n):
            return sum(hits[:n]) / len(relevant)

        return {
            "H@200": round(harvest(200), 3),
            "H@500": round(harvest(500), 3),
            "R@500": round(recall(500), 3),
            "R@1000": round(recall(1000), 3),
            "N50": fetches_for(0.5),
            "N90": fetches_for(0.9),
            "pages": len(self.fetched),
            "pages_per_s": round(len(self.fetched) / self.seconds, 1) if self.seconds else None,
            "finish_reason": self.finish_reason,
        }


def start_offline_web(webbench_path: Path) -> tuple[subprocess.Popen, str]:
    """Start the offline web's proxy in its own process; return it and its URL."""
    env = {**os.environ, "PYTHONPATH": str(webbench_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.webbench.server", "--port", "0"],
        cwd=webbench_path, env=env, stdout=subprocess.PIPE, text=True,
    )
    line = process.stdout.readline()
    if "http_proxy=" not in line:
        process.terminate()
        raise SystemExit(f"the offline web did not start: {line.strip()}")
    return process, line.split("http_proxy=", 1)[1].split()[0]


def crawl_settings(strategy: str, budget: int, seed: int, extra: dict):
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("settings_profiles.default", priority="project")
    common = {
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_PAGECOUNT": budget,
        "ROBOTSTXT_OBEY": True,
        "RETRY_ENABLED": False,
        "HTTPPROXY_ENABLED": True,
        "ADAPTIVE_SELF_STOP": False,  # the metrics need whole crawls to the budget
    }
    if strategy == STOCK:
        common.update(
            {
                "ADDONS": {},
                "SCHEDULER": "scrapy.core.scheduler.Scheduler",
                "DEPTH_PRIORITY": 1,
                "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
                "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            }
        )
    else:
        common.update({"ADAPTIVE_STRATEGY": strategy, "ADAPTIVE_SEED": seed})
    settings.update({**common, **extra}, priority="cmdline")
    return settings


async def run_one(topic: dict, strategy: str, budget: int, seed: int, extra: dict) -> Run:
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner

    from spiders.focused import FocusedSpider

    run = Run(topic["id"], strategy)
    crawler = CrawlerRunner(crawl_settings(strategy, budget, seed, extra)).create_crawler(FocusedSpider)

    def fetched(response, request, spider):
        if not response.url.endswith("/robots.txt"):
            run.fetched.append(response.url)

    crawler.signals.connect(fetched, signals.response_received)
    started = time.perf_counter()
    await crawler.crawl_async(
        query=topic["query"], keywords=",".join(topic.get("keywords", [])), start_urls=",".join(topic["seeds"])
    )
    run.seconds = time.perf_counter() - started
    run.finish_reason = crawler.stats.get_value("finish_reason", "")
    return run


def summarize(results: dict, strategies: list[str]) -> str:
    columns = ["H@200", "R@500", "R@1000", "N50", "N90", "pages_per_s"]
    lines = [f"{'topic':<20} {'strategy':<11} " + " ".join(f"{c:>8}" for c in columns)]
    for topic, by_strategy in results.items():
        for strategy in strategies:
            m = by_strategy[strategy]
            lines.append(f"{topic:<20} {strategy:<11} " + " ".join(f"{str(m[c]):>8}" for c in columns))
    lines.append("mean (N never reached counts as the budget + 1)")
    for strategy in strategies:
        values = []
        for c in columns:
            raw = [by[strategy][c] for by in results.values()]
            if c in ("N50", "N90"):
                raw = [v if v is not None else by[strategy]["budget"] + 1 for v, by in zip(raw, results.values())]
            values.append(round(statistics.mean(raw), 3))
        lines.append(f"{'mean':<20} {strategy:<11} " + " ".join(f"{str(v):>8}" for v in values))
    return "\n".join(lines)


async def main_async(args) -> dict:
    topics = json.loads(Path(args.topics).read_text())["topics"]
    labels = json.loads(Path(args.labels).read_text())
    if args.topic:
        topics = [t for t in topics if t["id"] in args.topic.split(",")]
    strategies = args.strategies.split(",")
    extra = dict(item.split("=", 1) for item in args.set)
    results: dict = {}
    for topic in topics:
        relevant = set(labels[topic["id"]])
        for strategy in strategies:
            run = await run_one(topic, strategy, args.budget, args.seed, extra)
            metrics = run.metrics(relevant, args.budget)
            metrics["budget"] = args.budget
            results.setdefault(topic["id"], {})[strategy] = metrics
            print(f"{topic['id']:<20} {strategy:<11} {json.dumps(metrics)}", flush=True)
            if args.trace_dir:
                Path(args.trace_dir).mkdir(parents=True, exist_ok=True)
                Path(args.trace_dir, f"{topic['id']}-{strategy}.json").write_text(json.dumps(asdict(run)))
    print(summarize(results, strategies))
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", default=str(SHARED / "topics-dev.json"))
    parser.add_argument("--labels", default=str(SHARED / "labels-dev.json"))
    parser.add_argument("--topic", help="comma-separated topic ids (default: all)")
    parser.add_argument("--strategies", default="tres,linkgroups,bestfirst,bfs,random,stock")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], help="extra Scrapy setting NAME=VALUE")
    parser.add_argument("--webbench", default=str(PROJECT), help="directory holding benchmarks/webbench")
    parser.add_argument("--proxy", help="use a running offline web proxy instead of starting one")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--trace-dir", help="write each crawl's fetch order here")
    args = parser.parse_args(argv)

    server = None
    proxy = args.proxy
    if proxy is None:
        server, proxy = start_offline_web(Path(args.webbench))
    os.environ["http_proxy"] = os.environ["https_proxy"] = proxy
    try:
        from scrapy.utils.defer import deferred_from_coro
        from scrapy.utils.reactor import install_reactor

        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
        from twisted.internet import task

        results = {}

        async def body(_reactor):
            results.update(await main_async(args))

        task.react(lambda reactor: deferred_from_coro(body(reactor)))
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise
    finally:
        if server is not None:
            server.terminate()
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
