"""Sufficiency benchmark: does the crawl fetch the answer and stop by itself, soon?

For each question-shaped query, started at a site's index on the offline web
(``benchmarks/webbench``) with a page budget, it runs the ``focused`` spider in
this process (its own self-stop: ``sufficient``, ``plateau``,
``no_promising_links``) and, side by side, Crawl4AI 0.9.5's AdaptiveCrawler
(statistical strategy, default settings, HTTP only) in a subprocess of its own
virtualenv, both through the same local proxy. Per query and crawler it prints
pages fetched, seconds, whether an answer page was fetched (and when), the stop
reason and the HTTP requests the proxy served; then the targets' summary.

    python -m benchmarks.sufficiency_peer                       # the five Python-docs queries
    python -m benchmarks.sufficiency_peer --queries dev         # five other queries and sites
    python -m benchmarks.sufficiency_peer --peer-python /work/venvs/crawl4ai/bin/python --peer-max-pages 200

Start URLs are the sites' index pages; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
PYTHON_DOCS = "http://docs.python.test/3/index.html"
QUERY_SETS = {
    # The targets: five question-shaped queries on the Python 3.11 docs, started at its index.
    "python": [
        {
            "id": "asyncio",
            "query": "asyncio event loop tasks coroutines",
            "start_url": PYTHON_DOCS,
            "answer": r"/library/asyncio[^/]*\.html$",
        },
        {"id": "json", "query": "json encoding decoding", "start_url": PYTHON_DOCS, "answer": r"/library/json\.html$"},
        {
            "id": "sqlite",
            "query": "sqlite database cursor queries",
            "start_url": PYTHON_DOCS,
            "answer": r"/library/sqlite3\.html$",
        },
        {
            "id": "regex",
            "query": "regular expression syntax",
            "start_url": PYTHON_DOCS,
            "answer": r"/(library/re|howto/regex)\.html$",
        },
        {
            "id": "subprocess",
            "query": "subprocess child process pipes",
            "start_url": PYTHON_DOCS,
            "answer": r"/library/subprocess\.html$",
        },
    ],
    # Other sites and queries: a check that the method was not fitted to the five.
    "dev": [
        {
            "id": "pg-index",
            "query": "create index btree",
            "start_url": "http://www.postgresql.test/docs/15/index.html",
            "answer": r"/(sql-createindex|indexes-types|btree)[^/]*\.html$",
        },
        {
            "id": "django-validation",
            "query": "model field validation",
            "start_url": "http://docs.djangoproject.test/en/3.2/index.html",
            "answer": r"/ref/(validators|models/instances|forms/validation)\.html$",
        },
        {
            "id": "sklearn-forest",
            "query": "random forest classifier",
            "start_url": "http://scikit-learn.test/stable/index.html",
            "answer": r"(RandomForestClassifier\.html|/modules/ensemble\.html)$",
        },
        {"id": "csv", "query": "csv file reading writing", "start_url": PYTHON_DOCS, "answer": r"/library/csv\.html$"},
        {
            "id": "git-rebase",
            "query": "rebase branch onto upstream",
            "start_url": "http://git-scm.test/docs/index.html",
            "answer": r"/git-rebase\.html$",
        },
    ],
}


#: Settings for self-stopping crawls (docs/sufficiency.md): few requests in flight and a
#: small scraper backlog, so that the frontier and the stop decide on fresh knowledge and
#: few pages are fetched after the decision (Scrapy finishes what is in progress).
SELF_STOP_SETTINGS = {
    "CONCURRENT_REQUESTS": 4,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 200_000,
}
CONFIGS = {"default": {}, "self-stop": SELF_STOP_SETTINGS}


@dataclass
class Run:
    """One crawl of one query."""

    crawler: str
    query_id: str
    pages: int = 0
    seconds: float = 0.0
    stop_reason: str = ""
    answer_at: int | None = None  # 1-based fetch position of the first answer page
    requests: int = 0  # HTTP requests the proxy served during the crawl
    sufficiency: float | None = None
    fetched: list[str] = field(default_factory=list)

    @property
    def answered(self) -> bool:
        return self.answer_at is not None


class OfflineWeb:
    """The offline web's proxy in its own process, counting the requests it serves."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": str(PROJECT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.webbench.server", "--port", "0", "--verbose"],
            cwd=PROJECT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if "http_proxy=" not in line:
            self.process.terminate()
            raise SystemExit(f"the offline web did not start: {line.strip()} {self.process.stderr.read()[:500]}")
        self.url = line.split("http_proxy=", 1)[1].split()[0]
        self.requests = 0
        threading.Thread(target=self._count, daemon=True).start()
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def _count(self) -> None:
        for line in self.process.stderr:
            if '"GET ' in line or '"HEAD ' in line:
                self.requests += 1

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def first_answer(fetched: list[str], pattern: str) -> int | None:
    answer = re.compile(pattern)
    return next((i for i, url in enumerate(fetched, 1) if answer.search(url)), None)


# -- adaptive_spider --------------------------------------------------------------------------
def crawl_settings(budget: int, extra: dict):
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("settings_profiles.default", priority="project")
    settings.update(
        {"LOG_LEVEL": "WARNING", "CLOSESPIDER_PAGECOUNT": budget, "HTTPPROXY_ENABLED": True, **extra},
        priority="cmdline",
    )
    return settings


async def run_ours(spec: dict, budget: int, extra: dict, web: OfflineWeb, label: str = "adaptive_spider") -> Run:
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner

    from spiders.focused import FocusedSpider

    run = Run(label, spec["id"])
    crawler = CrawlerRunner(crawl_settings(budget, extra)).create_crawler(FocusedSpider)

    def fetched(response, request, spider):
        if not response.url.endswith("/robots.txt"):
            run.fetched.append(response.url)

    crawler.signals.connect(fetched, signals.response_received)
    before = web.requests
    started = time.perf_counter()
    await crawler.crawl_async(query=spec["query"], start_urls=spec["start_url"])
    run.seconds = round(time.perf_counter() - started, 3)
    time.sleep(0.05)  # let the proxy's log catch up
    run.requests = web.requests - before
    run.pages = len(run.fetched)
    run.stop_reason = crawler.stats.get_value("finish_reason", "")
    run.sufficiency = crawler.stats.get_value("adaptive/sufficiency/sufficiency")
    run.answer_at = first_answer(run.fetched, spec["answer"])
    return run


# -- Crawl4AI ------------------------------------------------------------------------------------
def run_peer(spec: dict, python: str, web: OfflineWeb, max_pages: int | None) -> Run:
    label = "crawl4ai" + (f" max_pages={max_pages}" if max_pages else "")
    run = Run(label, spec["id"])
    command = [
        python,
        str(PROJECT / "benchmarks" / "crawl4ai_runner.py"),
        "--proxy",
        web.url,
        "--start-url",
        spec["start_url"],
        "--query",
        spec["query"],
    ]
    if max_pages:
        command += ["--max-pages", str(max_pages)]
    before = web.requests
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd="/tmp")
    time.sleep(0.05)
    run.requests = web.requests - before
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        run.stop_reason = f"error: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"
        return run
    result = json.loads(lines[-1])
    run.fetched = result["crawled"]
    run.pages = result["pages"]
    run.seconds = result["seconds"]
    run.stop_reason = result["stop_reason"]
    run.sufficiency = result["confidence"]
    run.answer_at = first_answer(run.fetched, spec["answer"])
    return run


# -- report ----------------------------------------------------------------------------------------
def table(runs: list[Run]) -> str:
    lines = [
        f"{'query':<18} {'crawler':<26} {'pages':>5} {'seconds':>7} {'answer@':>7} {'requests':>8} {'IS/conf':>7}  stop"
    ]
    for run in runs:
        lines.append(
            f"{run.query_id:<18} {run.crawler:<26} {run.pages:>5} {run.seconds:>7.2f} "
            f"{run.answer_at or '-'!s:>7} {run.requests:>8} "
            f"{'' if run.sufficiency is None else f'{run.sufficiency:.2f}':>7}  {run.stop_reason}"
        )
    return "\n".join(lines)


def summary(runs: list[Run], budget_reasons=("closespider_pagecount", "max_pages")) -> str:
    lines = []
    for crawler in dict.fromkeys(run.crawler for run in runs):
        mine = [run for run in runs if run.crawler == crawler]
        answered = sum(run.answered for run in mine)
        by_itself = sum(
            run.stop_reason not in budget_reasons and not run.stop_reason.startswith("error") for run in mine
        )
        lines.append(
            f"{crawler:<26} answer fetched {answered}/{len(mine)}, closed by itself {by_itself}/{len(mine)}, "
            f"median pages {statistics.median(r.pages for r in mine):g}, "
            f"median seconds {statistics.median(r.seconds for r in mine):.2f}, "
            f"median requests {statistics.median(r.requests for r in mine):g}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--queries", default="python", help="python, dev, or a JSON file of {id, query, start_url, answer}"
    )
    parser.add_argument("--budget", type=int, default=200, help="page budget (CLOSESPIDER_PAGECOUNT)")
    parser.add_argument("--runs", type=int, default=1, help="our crawls per query and configuration")
    parser.add_argument("--peer-runs", type=int, default=1, help="peer crawls per query (it is deterministic)")
    parser.add_argument(
        "--configs",
        default="default,self-stop",
        help="our settings to run: default (the default profile), self-stop (SELF_STOP_SETTINGS)",
    )
    parser.add_argument("--set", action="append", default=[], help="extra Scrapy setting NAME=VALUE for our crawls")
    parser.add_argument(
        "--peer-python",
        default="/work/venvs/crawl4ai/bin/python",
        help="python of a virtualenv with crawl4ai==0.9.5 ('' to skip the peer)",
    )
    parser.add_argument(
        "--peer-max-pages",
        type=int,
        action="append",
        default=[],
        help="also run the peer with this max_pages (repeatable)",
    )
    parser.add_argument("--out", help="write every run as JSON here")
    args = parser.parse_args(argv)

    specs = QUERY_SETS.get(args.queries) or json.loads(Path(args.queries).read_text())
    extra = dict(item.split("=", 1) for item in args.set)
    web = OfflineWeb()
    os.environ["http_proxy"] = os.environ["https_proxy"] = web.url
    runs: list[Run] = []
    try:
        from scrapy.utils.defer import deferred_from_coro
        from scrapy.utils.reactor import install_reactor

        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
        from twisted.internet import task

        async def ours(_reactor):
            for config in [c for c in args.configs.split(",") if c]:
                settings = {**CONFIGS[config], **extra}
                for spec in specs:
                    for _ in range(args.runs):
                        runs.append(await run_ours(spec, args.budget, settings, web, f"adaptive_spider {config}"))
                        print(table(runs[-1:]).splitlines()[1], flush=True)

        task.react(lambda reactor: deferred_from_coro(ours(reactor)))
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise
    finally:
        if args.peer_python and Path(args.peer_python).exists():
            for max_pages in [None, *args.peer_max_pages]:
                for spec in specs:
                    for _ in range(args.peer_runs):
                        runs.append(run_peer(spec, args.peer_python, web, max_pages))
                        print(table(runs[-1:]).splitlines()[1], flush=True)
        elif args.peer_python:
            print(f"peer skipped: {args.peer_python} not found (pip install crawl4ai==0.9.5 in its own venv)")
        web.close()
    print()
    print(table(runs))
    print()
    print(summary(runs))
    if args.out:
        Path(args.out).write_text(json.dumps([asdict(run) for run in runs], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
