"""Time lost to slow and unreliable hosts on the big offline web, with and without the domain filters.

The big web (``../shared/bigweb``: 53 hosts, ~104k pages) has three slow hosts (median
latency 1.5-3 s: ``en.cppreference.test``, ``docs.oracle.test``, ``www.erlang.test``) and
two unreliable ones (30% of their URLs answer 503: ``doc.qt.test``, ``docs.scipy.test``).
The main command crawls a dev topic from the hub with a page budget, once with the
default domain filters, once without the limit of requests in flight per slow domain
(``ADAPTIVE_DOMAIN_IN_FLIGHT=-1``) and once with every filter off (``ADAPTIVE_SLOW_DOMAIN_MS``
and ``ADAPTIVE_UNRELIABLE_THRESHOLD`` out of reach, no in-flight limit). A small extension logs every response
(host, status, Scrapy's ``download_latency``). Reported per run: wall time, pages, the
seconds of download latency spent on the slow hosts and on 503 answers, how many 503s,
and the topic's relevant pages fetched.

Needs the big web's server running as a proxy (``python3 ../shared/bigweb/sites.py --web big
--port 8932``):

    python -m benchmarks.domain_filters --topic threads-sync --pages 3000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scrapy import signals

PROJECT = Path(__file__).resolve().parent.parent
BIGWEB = PROJECT.parent / "shared" / "bigweb"
SLOW_HOSTS = ("en.cppreference.test", "docs.oracle.test", "www.erlang.test")
UNRELIABLE_HOSTS = ("doc.qt.test", "docs.scipy.test")
NO_IN_FLIGHT_LIMIT = ["-s", "ADAPTIVE_DOMAIN_IN_FLIGHT=-1"]
FILTERS_OFF = [
    "-s",
    "ADAPTIVE_SLOW_DOMAIN_MS=1000000000",
    "-s",
    "ADAPTIVE_UNRELIABLE_THRESHOLD=1.0",
    *NO_IN_FLIGHT_LIMIT,
]
VARIANTS = (
    ("filters on (defaults)", []),
    ("no in-flight limit", NO_IN_FLIGHT_LIMIT),
    ("filters off", FILTERS_OFF),
)


class ResponseLog:
    """Appends one JSON line per response: url, status, download latency."""

    def __init__(self, path: str) -> None:
        self.handle = open(path, "a", buffering=1)  # open for the crawl's life

    @classmethod
    def from_crawler(cls, crawler: Any) -> ResponseLog:
        extension = cls(crawler.settings["RESPONSE_LOG"])
        crawler.signals.connect(extension.response_received, signal=signals.response_received)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def response_received(self, response: Any, request: Any, spider: Any) -> None:
        latency = request.meta.get("download_latency")
        self.handle.write(json.dumps({"url": response.url, "status": response.status, "latency": latency}) + "\n")

    def spider_closed(self, spider: Any) -> None:
        self.handle.close()


def run(topic: dict, relevant: set[str], pages: int, proxy: str, extra: list[str], log: Path) -> dict:
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "focused",
        "-a",
        f"query={topic['query']}",
        "-a",
        f"start_urls={topic['seeds'][0]}",
        "-s",
        f"CLOSESPIDER_PAGECOUNT={pages}",
        "-s",
        "ADAPTIVE_SELF_STOP=False",
        "-s",
        "LOG_LEVEL=WARNING",
        "-s",
        f"RESPONSE_LOG={log}",
        "-s",
        'EXTENSIONS={"benchmarks.domain_filters.ResponseLog": 0}',
        *extra,
    ]
    env = {**os.environ, "http_proxy": proxy, "https_proxy": proxy, "PYTHONPATH": str(PROJECT)}
    began = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=3600, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    def host(url: str) -> str:
        return url.split("/")[2]

    slow = [r for r in rows if host(r["url"]) in SLOW_HOSTS]
    failed = [r for r in rows if r["status"] == 503]
    fetched = {r["url"] for r in rows if r["status"] == 200}
    return {
        "wall_seconds": round(wall, 1),
        "responses": len(rows),
        "slow_host_responses": len(slow),
        "slow_host_latency_seconds": round(sum(r["latency"] or 0.0 for r in slow), 1),
        "answers_503": len(failed),
        "latency_503_seconds": round(sum(r["latency"] or 0.0 for r in failed), 1),
        "unreliable_host_responses": sum(host(r["url"]) in UNRELIABLE_HOSTS for r in rows),
        "relevant_fetched": len(fetched & relevant),
        "relevant_total": len(relevant),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topic", default="threads-sync")
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--proxy", default="http://127.0.0.1:8932")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    topics = {t["id"]: t for t in json.loads((BIGWEB / "topics-dev.json").read_text())["topics"]}
    relevant = set(json.loads((BIGWEB / "labels-dev.json").read_text())[args.topic])
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in VARIANTS:
            result = run(
                topics[args.topic], relevant, args.pages, args.proxy, extra, Path(tmp) / f"{len(results)}.jsonl"
            )
            results[name] = result
            print(
                f"{name:>22}: {result['wall_seconds']} s for {result['responses']} responses; slow hosts "
                f"{result['slow_host_responses']} responses, {result['slow_host_latency_seconds']} s of latency; "
                f"{result['answers_503']} answers 503 ({result['latency_503_seconds']} s); relevant "
                f"{result['relevant_fetched']}/{result['relevant_total']}"
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"topic": args.topic, "pages": args.pages, "runs": results}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
