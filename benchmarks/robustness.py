"""Robustness benchmark: traps, kill-and-resume, and what the journal costs.

Three parts, each a real ``scrapy crawl focused`` subprocess against a site this
script serves on 127.0.0.1 (adaptive_spider.demo.traps):

- ``traps``: the trap site with a page budget, once with the default guards and
  once with canonical URLs and trap guards off; prints the fetches of each trap
  and their share of the budget.
- ``resume``: the demo site (about 750 pages) crawled with JOBDIR and killed
  with SIGKILL at ``--kills`` random points, then run to the end; prints pages
  lost, pages fetched twice, and the requests the journal held in flight at each
  kill.
- ``overhead``: the demo site crawled to the end without JOBDIR, with JOBDIR
  and the journal off, and with the journal on (default snapshots, and one
  snapshot a second); prints pages/s as a ratio to the run without JOBDIR
  (median of ``--rounds`` runs each, all in this process's session).
- ``links``: no crawl; every distinct link of the offline web's real pages
  (benchmarks/webbench, Debian's documentation packages) through the canonical
  URLs and the trap guards with their defaults: what honest sites lose to them.

    python -m benchmarks.robustness [--parts traps,resume,overhead,links] [--kills 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin

from adaptive_spider.crawl.jobdir import queue_on_disk
from adaptive_spider.demo.site import QUERY, DemoSite
from adaptive_spider.demo.traps import TrapSite, serve, trap_of

PROJECT = Path(__file__).resolve().parent.parent
GUARDS_OFF = {
    "ADAPTIVE_CANONICALIZE": "false",
    "ADAPTIVE_TRAP_MAX_PATH_DEPTH": "0",
    "ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS": "0",
    "ADAPTIVE_TRAP_CALENDAR_MAX_PAGES": "0",
    "ADAPTIVE_TRAP_QUERY_MAX_VARIANTS": "0",
}


def crawl_command(url: str, workdir: Path, settings: dict) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "focused",
        "-a",
        f"query={QUERY}",
        "-a",
        f"start_urls={url}",
        "-s",
        f"ADAPTIVE_REPORT_FILE={workdir / 'report.json'}",
        "-s",
        "LOG_LEVEL=WARNING",
    ]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return command


def run_crawl(url: str, workdir: Path, settings: dict) -> dict:
    done = subprocess.run(crawl_command(url, workdir, settings), cwd=PROJECT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return json.loads((workdir / "report.json").read_text())


# -- traps ---------------------------------------------------------------------------------------
def traps(budget: int) -> None:
    print(f"\n== traps: fetches per trap, page budget {budget} (share of the budget) ==")
    rows = {}
    for label, settings in (("guards on", {}), ("guards off", GUARDS_OFF)):
        site = TrapSite(hang_seconds=10)
        server, url = serve(site)
        with tempfile.TemporaryDirectory() as tmp:
            settings = {
                "CLOSESPIDER_PAGECOUNT": budget,
                "DOWNLOAD_TIMEOUT": 1.5,
                "DOWNLOAD_MAXSIZE": 1 << 20,
                **settings,
            }
            report = run_crawl(url, Path(tmp), settings)
        server.shutdown()
        counts = Counter(trap_of(path) for path in site.fetched_paths())
        honest = len(site.honest_paths & set(site.fetched_paths()))
        rows[label] = (counts, honest, len(site.honest_paths), report)
    names = sorted({name for counts, *_ in rows.values() for name in counts if name})
    print(f"{'trap':<20}" + "".join(f"{label:>22}" for label in rows))
    for name in names:
        cells = [f"{counts[name]:>6} ({counts[name] / budget:6.1%})" for counts, *_ in rows.values()]
        print(f"{name:<20}" + "".join(f"{cell:>22}" for cell in cells))
    for what, pick in (
        ("honest pages fetched", lambda r: f"{r[1]} of {r[2]}"),
        ("finish reason", lambda r: r[3]["finish_reason"]),
        ("duplicates counted", lambda r: str(r[3]["documents"]["duplicates"])),
    ):
        print(f"{what:<20}" + "".join(f"{pick(row):>22}" for row in rows.values()))


# -- resume --------------------------------------------------------------------------------------
def in_flight_on_disk(jobdir: Path) -> set[str]:
    return queue_on_disk(jobdir)[1]


def resume(kills: int, seed: int) -> None:
    site = TrapSite(DemoSite(seed=seed), traps=False, page_delay=0.005, crawl_delay=0)
    server, url = serve(site)
    total = len(site.honest_paths)
    points = sorted(random.Random(seed).sample(range(40, total - 40), kills))
    runs, in_flight = [], []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        # The whole site: the self-stop would end a run before its kill.
        settings = {
            "JOBDIR": workdir / "job",
            "CONCURRENT_REQUESTS": 16,
            "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS": 1,
            "ADAPTIVE_SELF_STOP": False,
        }
        for point in points:
            start = len(site.fetched_paths())
            process = subprocess.Popen(
                crawl_command(url, workdir, settings), cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            while len(site.fetched_paths()) < point and process.poll() is None:
                time.sleep(0.001)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            runs.append(site.fetched_paths()[start:])
            in_flight.append({u.replace(url.rstrip("/"), "") for u in in_flight_on_disk(workdir / "job")})
        start = len(site.fetched_paths())
        run_crawl(url, workdir, settings)
        runs.append(site.fetched_paths()[start:])
    server.shutdown()
    fetched = Counter(path for run in runs for path in run)
    lost = len(site.honest_paths - set(fetched))
    repeated = sum(count - 1 for count in fetched.values())
    outside = sum(len((set(a) & set(b)) - flying) for a, b, flying in zip(runs, runs[1:], in_flight))
    print(f"\n== resume: {total} pages, SIGKILL after {points} fetches, then a run to the end ==")
    print(f"pages lost                          {lost}")
    print(f"pages fetched twice                 {repeated}")
    print(f"  of them not in flight at a kill   {outside}")
    print(f"in flight at each kill (journal)    {[len(s) for s in in_flight]} (CONCURRENT_REQUESTS=16)")


# -- overhead ------------------------------------------------------------------------------------
def overhead(rounds: int) -> None:
    site = TrapSite(DemoSite(seed=0), traps=False, crawl_delay=0)
    server, url = serve(site)
    variants = {
        "no JOBDIR": {},
        "JOBDIR, journal off": {"ADAPTIVE_JOURNAL": "false"},
        "JOBDIR, journal": {},
        "JOBDIR, journal, 1 s snapshots": {"ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS": 1},
    }
    speeds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, settings in variants.items():
            with tempfile.TemporaryDirectory() as tmp:
                if name != "no JOBDIR":
                    settings = {**settings, "JOBDIR": Path(tmp) / "job"}
                report = run_crawl(url, Path(tmp), {"CONCURRENT_REQUESTS": 16, "ADAPTIVE_SELF_STOP": False, **settings})
            speeds[name].append(report["pages"]["visited"] / report["time"]["total_seconds"])
    server.shutdown()
    base = statistics.median(speeds["no JOBDIR"])
    print(f"\n== overhead: the demo site ({len(site.honest_paths)} pages) crawled to the end, median of {rounds} ==")
    for name, values in speeds.items():
        median = statistics.median(values)
        print(f"{name:<32} {median:7.1f} pages/s   {median / base:5.2f}x")


# -- links of honest sites -------------------------------------------------------------------
def honest_links() -> None:
    import lxml.html

    from adaptive_spider.crawl.canonical import UrlCanonicalizer
    from adaptive_spider.crawl.traps import TrapGuard
    from adaptive_spider.settings.config import AdaptiveConfig
    from benchmarks.webbench.web import MissingPackagesError, OfflineWeb

    try:
        web = OfflineWeb()
    except (MissingPackagesError, FileNotFoundError) as error:
        print(f"\n== links: skipped ({error}) ==")
        return
    config = AdaptiveConfig.from_settings({})
    guard, canonical = TrapGuard.from_config(config), UrlCanonicalizer(config.session_params, config.tracking_params)
    seen, dropped, examples, pages = set(), Counter(), {}, 0
    for site in web.sites:
        root = Path(site.root)
        for path in sorted(root.rglob("*.htm*")):
            base = site.base_url.rstrip("/") + "/" + path.relative_to(root).as_posix()
            pages += 1
            try:
                anchors = lxml.html.fromstring(path.read_bytes()).iter("a")
            except (ValueError, lxml.etree.ParserError):
                continue
            for anchor in anchors:
                href = (anchor.get("href") or "").strip()
                if not href or href.startswith("#"):
                    continue
                url = canonical(urljoin(base, href))
                if url not in seen:
                    seen.add(url)
                    reason = guard.reason_to_drop(url)
                    if reason:
                        dropped[reason] += 1
                        examples.setdefault(reason, url)
    print(f"\n== links: {len(seen)} distinct links of {pages} pages of the offline web, default guards ==")
    for reason in ("unsupported_scheme", "path_depth", "repeated_segment", "calendar", "query_variants", "url_pattern"):
        print(f"{reason:<20} {dropped[reason]:>6}   {examples.get(reason, '')}")
    links = sorted(seen)
    fresh = TrapGuard.from_config(config)
    started = time.perf_counter()
    for url in links:
        fresh.reason_to_drop(canonical(url))
    print(f"cost: {1e6 * (time.perf_counter() - started) / len(links):.1f} us per link (canonical URL + guards)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="traps,resume,overhead,links")
    parser.add_argument("--budget", type=int, default=500, help="page budget of the trap crawl")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    if "traps" in parts:
        traps(args.budget)
    if "resume" in parts:
        resume(args.kills, args.seed)
    if "overhead" in parts:
        overhead(args.rounds)
    if "links" in parts:
        honest_links()


if __name__ == "__main__":
    main()
