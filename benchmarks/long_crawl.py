"""A long crawl at scale: a focused crawl of the big offline web with JOBDIR, killed with
SIGKILL twice and resumed, checked for lost and repeated fetches, with its memory.

The crawl is the project's own command (``scrapy crawl focused``, default profile, self-stop
off; the last run stops once the whole crawl has received ``--pages`` page responses,
robots.txt files not counted) through the big web's reference server
(``../shared/bigweb/sites.py --web big``, an HTTP proxy). Each run writes an event log
(:mod:`benchmarks.long_crawl_log`: requests offered to and refused by the scheduler, requests
handed to the downloader, responses, and a memory sample every few seconds). A run is killed
with SIGKILL once the whole crawl has received ``--kill-at`` responses; the next run resumes
from the same JOBDIR. After each kill, the JOBDIR is read the way a resume reads it (queued and
in-flight requests). At the end:

* **lost**: URLs the scheduler accepted (offered and not refused) that were never handed to the
  downloader and are not in the final JOBDIR queue: must be 0;
* **refetched**: requests handed to the downloader more than once (same URL, same retry
  attempt): each must have been in flight at a kill in between (retries and redirects are
  their own requests: a retry has ``retry_times`` + 1, a redirect target its own URL);
* **memory**: resident memory of the crawl process over time with the queue length, and the
  memory of the whole crawl state (frontier, dupefilter, page log, domain profiles,
  sufficiency) per queued URL: the final JOBDIR loaded into a fresh scheduler, measured with
  tracemalloc and as resident memory growth; also the crawl's own RSS growth per queued URL.

    python -m benchmarks.long_crawl                                   # 50,000 pages, kills at 15k and 35k
    python -m benchmarks.long_crawl --pages 2000 --kill-at 500,1200   # a quick look
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from benchmarks.long_crawl_log import read_events, rss_bytes

PROJECT = Path(__file__).resolve().parent.parent
RESULTS = PROJECT / "benchmarks" / "results" / "long_crawl.json"
TOPICS = PROJECT.parent / "shared" / "bigweb" / "topics-dev.json"
DEFAULT_QUERY = "How do I run code in multiple threads and synchronize them with mutexes, locks, condition variables and semaphores?"


def topic_query(topic: str) -> str:
    try:
        topics = json.loads(TOPICS.read_text())["topics"]
        return next(t["query"] for t in topics if t["id"] == topic)
    except (OSError, StopIteration, KeyError, ValueError):
        return DEFAULT_QUERY


def crawl_command(
    query: str, url: str, jobdir: Path, events: Path, pagecount: int, extra: list[str], interval: float
) -> list[str]:
    command = [
        sys.executable, "-m", "scrapy", "crawl", "focused", "-a", f"query={query}", "-a", f"start_urls={url}",
        "-s", f"JOBDIR={jobdir}", "-s", "ADAPTIVE_SELF_STOP=False", "-s", "LOG_LEVEL=INFO",
        "-s", "CLOSESPIDER_PAGECOUNT=0", "-s", f"LONG_CRAWL_STOP_AT={pagecount}",
        "-s", 'EXTENSIONS={"benchmarks.long_crawl_log.EventLog": 0}',
        "-s", 'DOWNLOADER_MIDDLEWARES={"benchmarks.long_crawl_log.TakeLog": 1}',
        "-s", f"LONG_CRAWL_LOG={events}", "-s", f"LONG_CRAWL_LOG_INTERVAL={interval}",
    ]  # fmt: skip
    for setting in extra:
        command += ["-s", setting]
    return command


class ResponseCounter:
    """Counts ``R`` lines of an event log as it grows (complete lines only)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.count, self.tail = path, 0, 0, b""

    def update(self) -> int:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return self.count
        self.offset += len(chunk)
        data = self.tail + chunk
        lines = data.split(b"\n")
        self.tail = lines.pop()
        self.count += sum(1 for line in lines if line.startswith(b"R\t"))
        return self.count


def queue_on_disk(jobdir: Path) -> tuple[set[str], set[str]]:
    """URLs queued and in flight according to JOBDIR (what a resumed crawl starts from)."""
    from adaptive_spider.crawl.jobdir import queue_on_disk as read_queue

    return read_queue(jobdir)


def run_crawl(
    command,
    env,
    log: Path,
    events: Path,
    kill_at: int | None,
    before: int,
    timeout: float,
    poll: float,
    deadline: float | None = None,
) -> dict:
    """One run: until it ends by itself, or SIGKILL once the crawl has ``kill_at`` responses;
    a run without ``kill_at`` still going at ``deadline`` gets SIGINT (Scrapy's clean shutdown)."""
    counter = ResponseCounter(events)
    started = time.time()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=PROJECT, stdout=out, stderr=subprocess.STDOUT, env=env)
        killed = False
        interrupted = False
        peak_rss = 0
        while process.poll() is None:
            peak_rss = max(peak_rss, rss_bytes(process.pid))
            if kill_at is not None and before + counter.update() >= kill_at:
                os.kill(process.pid, signal.SIGKILL)
                killed = True
                break
            if kill_at is None and deadline is not None and not interrupted and time.time() > deadline:
                os.kill(process.pid, signal.SIGINT)
                interrupted = True
                print("deadline: SIGINT (clean shutdown)", flush=True)
            if time.time() - started > timeout:
                os.kill(process.pid, signal.SIGKILL)
                killed = True
                print(f"run timed out after {timeout:.0f} s: killed", file=sys.stderr)
                break
            time.sleep(poll)
        returncode = process.wait(60)
    return {
        "killed": killed,
        "stopped_at_deadline": interrupted,
        "returncode": returncode,
        "seconds": round(time.time() - started, 1),
        "responses_at_kill_watch": before + counter.update(),
        "peak_rss_polled": peak_rss,
    }


def parse_run_log(log: Path) -> dict:
    """The resume line and the final stats of a run's log."""
    text = log.read_text(errors="replace")
    found: dict = {}
    marker = "AdaptiveScheduler: resumed "
    if marker in text:
        words = text.split(marker, 1)[1].split()
        found["resumed_queued"], found["resumed_in_flight"] = int(words[0]), int(words[3])
    if "Dumping Scrapy stats:" in text:
        dump = text.split("Dumping Scrapy stats:", 1)[1]
        stats = {}
        for line in dump.splitlines()[1:]:
            line = line.strip().strip("{},")
            if ":" not in line or not line.startswith("'"):
                if stats and not line.startswith("'"):
                    break
                continue
            key, _, value = line.partition(":")
            value = value.strip().rstrip(",")
            try:
                stats[key.strip("' ")] = json.loads(value)
            except ValueError:
                stats[key.strip("' ")] = value.strip("'")
        found["stats"] = {k: v for k, v in stats.items() if k.startswith(("adaptive/frontier", "adaptive/resume", "adaptive/filtered",
                                                                         "scheduler/", "downloader/response_count", "response_received_count",
                                                                         "retry/count", "robotstxt/", "finish_reason", "memusage/max",
                                                                         "adaptive/journal"))}  # fmt: skip
    found["tracebacks"] = text.count("Traceback (most recent call last)")
    return found


def analyse(runs: list[dict], kills: list[dict], final_queue: set[str]) -> dict:
    """Lost and refetched requests from the event logs and the JOBDIR after each kill."""
    accepted: set[str] = set()
    undetermined: list[str] = []
    offered = refused = 0
    takes: list[list[tuple[str, int]]] = []  # per run: (url, retry attempt)
    responses = Counter()
    statuses: Counter = Counter()
    for run in runs:
        lines = read_events(run["events"])
        run_takes = []
        pending = None
        for fields in lines:
            kind = fields[0]
            if kind == "S":
                if pending is not None:
                    accepted.add(pending)
                pending = fields[1]
                offered += 1
            elif kind == "D":
                if pending == fields[1]:
                    pending = None
                refused += 1
            elif kind == "T":
                run_takes.append((fields[3], int(fields[2])))
            elif kind == "R":
                responses[run["index"]] += 1
                statuses[fields[1]] += 1
        if pending is not None:
            if run["killed"]:  # killed between the offer and the scheduler's answer
                undetermined.append(pending)
            else:
                accepted.add(pending)
        takes.append(run_takes)
    taken_urls = {url for run_takes in takes for url, _ in run_takes}
    lost = accepted - taken_urls - final_queue
    # Refetched: the same (url, attempt) handed to the downloader in more than one place.
    where: dict[tuple[str, int], list[int]] = defaultdict(list)
    for index, run_takes in enumerate(takes):
        for key in run_takes:
            where[key].append(index)
    repeated = {key: runs_ for key, runs_ in where.items() if len(runs_) > 1}
    within_run = {key: runs_ for key, runs_ in repeated.items() if len(set(runs_)) < len(runs_)}
    unexplained = []
    explained = 0
    for (url, attempt), runs_ in repeated.items():
        for a, b in itertools.pairwise(runs_):
            if a == b:
                continue
            if any(url in kills[k]["in_flight"] for k in range(a, b) if k < len(kills)):
                explained += 1
            else:
                unexplained.append({"url": url, "attempt": attempt, "runs": runs_})
    return {
        "offered_to_scheduler": offered,
        "refused_by_scheduler": refused,
        "accepted_urls": len(accepted),
        "offered_at_a_kill_undetermined": len(undetermined),
        "handed_to_downloader": sum(len(t) for t in takes),
        "handed_to_downloader_urls": len(taken_urls),
        "responses": sum(responses.values()),
        "responses_per_run": [responses[i] for i in range(len(runs))],
        "response_status": dict(statuses.most_common()),
        "final_queue_urls": len(final_queue),
        "lost": len(lost),
        "lost_sample": sorted(lost)[:20],
        "refetched": sum(len(r) - 1 for r in repeated.values()),
        "refetched_in_flight_at_a_kill": explained,
        "refetched_unexplained": unexplained[:20],
        "refetched_unexplained_count": len(unexplained),
        "refetched_within_one_run": len(within_run),
        "refetched_within_one_run_sample": [
            {"url": u, "attempt": a, "runs": r} for (u, a), r in list(within_run.items())[:10]
        ],
        "in_flight_at_kills": [len(k["in_flight"]) for k in kills],
    }


def memory_series(runs: list[dict], t0: float) -> list[dict]:
    series = []
    for run in runs:
        for fields in read_events(run["events"]):
            if fields[0] == "M":
                try:
                    sample = json.loads(fields[1])
                except ValueError:
                    continue
                series.append(
                    {
                        "run": run["index"],
                        "t": round(sample["t"] - t0, 1),
                        **{k: v for k, v in sample.items() if k not in ("t", "pid")},
                    }
                )
    return series


def pace(series: list[dict], step: int = 10_000) -> dict:
    """Whether the crawl ever stalled, from the memory samples (every ``--interval`` seconds):
    the longest stretch of a run without a new response, and the pages/s of each ``step``
    responses of the whole crawl (runs one after another; a resume's start-up counts)."""
    longest = 0.0
    marks: list[tuple[int, float]] = []  # (responses of the whole crawl, seconds of crawling)
    done, clock = 0, 0.0
    for index in sorted({s["run"] for s in series}):
        run = sorted((s for s in series if s["run"] == index), key=lambda s: s["t"])
        if not run:
            continue
        still_since = run[0]["t"]
        for before, after in itertools.pairwise(run):
            if after["responses"] > before["responses"]:
                still_since = after["t"]
            longest = max(longest, after["t"] - still_since)
        for sample in run:
            marks.append((done + sample["responses"], clock + sample["t"] - run[0]["t"]))
        done += run[-1]["responses"]
        clock += run[-1]["t"] - run[0]["t"]
    stretches = []
    start = (0, 0.0)
    for responses, seconds in marks:
        if responses >= start[0] + step:
            stretches.append(round((responses - start[0]) / max(seconds - start[1], 1e-9), 1))
            start = (responses, seconds)
    if marks and marks[-1][0] > start[0]:
        stretches.append(round((marks[-1][0] - start[0]) / max(marks[-1][1] - start[1], 1e-9), 1))
    return {
        "longest_seconds_without_a_response": round(longest, 1),
        "pages_per_s_by_stretch": stretches,
        "stretch_responses": step,
    }


def flatness(series: list[dict]) -> dict:
    """Resident memory of the last run once its queue stops growing (reaches 98% of its maximum)."""
    if not series:
        return {}
    last = [s for s in series if s["run"] == series[-1]["run"] and "queued" in s and "closed" not in s]
    if len(last) < 3:
        return {"note": "too few samples in the last run"}
    peak = max(s["queued"] for s in last)
    start = next(i for i, s in enumerate(last) if s["queued"] >= 0.98 * peak)
    window = last[start:]
    rss = [s["rss"] for s in window]
    result = {
        "queue_peak": peak,
        "queue_final": last[-1]["queued"],
        "queue_plateau_from_t": window[0]["t"],
        "plateau_samples": len(window),
        "plateau_seconds": round(window[-1]["t"] - window[0]["t"], 1),
        "plateau_rss_first_mb": round(rss[0] / 2**20, 1),
        "plateau_rss_last_mb": round(rss[-1] / 2**20, 1),
        "plateau_rss_min_mb": round(min(rss) / 2**20, 1),
        "plateau_rss_max_mb": round(max(rss) / 2**20, 1),
    }
    if len(window) >= 3 and window[-1]["t"] > window[0]["t"]:
        # Least-squares slope of RSS against responses (MB per 1,000 pages) over the plateau.
        xs = [s["responses"] for s in window]
        mean_x, mean_y = sum(xs) / len(xs), sum(rss) / len(rss)
        var = sum((x - mean_x) ** 2 for x in xs)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, rss)) / var if var else 0.0
        result["plateau_pages"] = xs[-1] - xs[0]
        result["plateau_rss_slope_mb_per_1000_pages"] = round(slope * 1000 / 2**20, 2)
        # What the crawl must remember grows meanwhile: every URL it has seen (dupefilter, page log).
        result["plateau_seen_growth"] = window[-1].get("seen", 0) - window[0].get("seen", 0)
    # The same for the whole last run, for comparison.
    xs = [s["responses"] for s in last]
    ys = [s["rss"] for s in last]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    if var:
        result["last_run_rss_slope_mb_per_1000_pages"] = round(
            sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / var * 1000 / 2**20, 2
        )
    return result


def beyond_state(flat: dict, state: dict) -> dict:
    """Adds to the plateau's RSS growth the growth of the state the crawl must keep (its seen
    URLs times the whole state's bytes per seen URL, measured on the final JOBDIR), and what
    is left beyond it per 1,000 pages: what flat resident memory means once the queue is full."""
    per_seen = state.get("rss_bytes_per_seen_url")
    pages = flat.get("plateau_pages")
    if not per_seen or not pages or "plateau_seen_growth" not in flat:
        return flat
    state_growth = flat["plateau_seen_growth"] * per_seen / 2**20
    rss_growth = flat["plateau_rss_last_mb"] - flat["plateau_rss_first_mb"]
    return {
        **flat,
        "plateau_state_growth_mb": round(state_growth, 1),
        "plateau_rss_growth_mb": round(rss_growth, 1),
        "plateau_beyond_state_mb_per_1000_pages": round((rss_growth - state_growth) / pages * 1000, 2),
    }


STATE_PROBE = r"""
import gc, json, sys, tracemalloc
sys.path.insert(0, sys.argv[3])
from benchmarks.long_crawl_log import rss_bytes
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from scrapy.utils.project import get_project_settings
from scrapy.utils.test import get_crawler
from spiders.focused import FocusedSpider
from adaptive_spider.crawl.scheduler import AdaptiveScheduler
settings = get_project_settings().copy_to_dict()
settings.update({"JOBDIR": sys.argv[1], "LOG_LEVEL": "ERROR", "ADAPTIVE_QUERY": sys.argv[2], "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS": 0})
crawler = get_crawler(FocusedSpider, settings)
spider = FocusedSpider.from_crawler(crawler, query=sys.argv[2], start_urls="http://hub.test/")
crawler.spider = spider
gc.collect()
rss0 = rss_bytes()
if sys.argv[4] == "trace":
    tracemalloc.start()
scheduler = AdaptiveScheduler.from_crawler(crawler)
scheduler.open(spider)
scheduler.jobdir.journal.wait()
gc.collect()
traced = tracemalloc.get_traced_memory()[0] if sys.argv[4] == "trace" else None
rss1 = rss_bytes()
print(json.dumps({"queued": len(scheduler), "seen": len(scheduler.df.fingerprints), "pages": len(scheduler.state.pages),
                  "domains": len(scheduler.state.domains),
                  "rss_growth": rss1 - rss0, "traced": traced}))
"""


def probe_state(jobdir: Path, query: str, env: dict, mode: str) -> dict:
    """Load a copy of ``jobdir`` (or an empty one) into a fresh scheduler in a new process."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "job"
        if jobdir.exists():
            shutil.copytree(jobdir, copy)
        else:
            copy.mkdir()
        done = subprocess.run([sys.executable, "-c", STATE_PROBE, str(copy), query, str(PROJECT), mode], cwd=PROJECT,
                              capture_output=True, text=True, env=env, timeout=1800)  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_state(jobdir: Path, query: str, env: dict) -> dict:
    """The whole crawl state of a JOBDIR (frontier, dupefilter, page log, domain profiles,
    sufficiency) loaded into a fresh scheduler: its memory, less that of a scheduler opened on
    an empty JOBDIR (models, buffers), per queued URL."""
    result: dict = {}
    for mode, key in (("rss", "rss_growth"), ("trace", "traced")):
        full = probe_state(jobdir, query, env, mode)
        empty = probe_state(Path("/nonexistent-empty-jobdir"), query, env, mode)
        if "error" in full or "error" in empty:
            result[f"{mode}_error"] = full.get("error") or empty.get("error")
            continue
        result.update({k: v for k, v in full.items() if k not in ("rss_growth", "traced")})
        result[f"{mode}_bytes"] = full[key]
        result[f"{mode}_bytes_empty_jobdir"] = empty[key]
        if full["queued"]:
            result[f"{mode}_bytes_per_queued_url"] = round((full[key] - empty[key]) / full["queued"])
        if full["seen"]:
            result[f"{mode}_bytes_per_seen_url"] = round((full[key] - empty[key]) / full["seen"])
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--pages", type=int, default=50000, help="responses of the whole crawl (the last run stops at it)"
    )
    parser.add_argument(
        "--kill-at", default="15000,35000", help="SIGKILL when the whole crawl has this many responses (comma list)"
    )
    parser.add_argument("--jobdir", default="", help="JOBDIR (default: a new one in --workdir); emptied first")
    parser.add_argument("--workdir", default="", help="event logs and run logs (default: a temporary directory, kept)")
    parser.add_argument("--proxy", default="http://127.0.0.1:8932", help='HTTP proxy of the big web ("": none)')
    parser.add_argument("--url", default="http://hub.test/", help="seed")
    parser.add_argument("--topic", default="threads-sync", help="a dev topic of the big web (its query)")
    parser.add_argument("--query", default="", help="the query (overrides --topic)")
    parser.add_argument("--set", action="append", default=[], help="one more Scrapy setting NAME=VALUE (repeatable)")
    parser.add_argument(
        "--stop-after", type=float, default=0, help="seconds: then the last run is stopped cleanly (SIGINT); 0: never"
    )
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds per run before it is killed anyway")
    parser.add_argument("--poll", type=float, default=0.05, help="seconds between checks of the response count")
    parser.add_argument(
        "--no-state-probe", action="store_true", help="skip loading the final JOBDIR to measure the state"
    )
    parser.add_argument("--out", default=str(RESULTS), help='JSON results ("": none)')
    parser.add_argument(
        "--probe-only", default="", help="only measure the state of this JOBDIR (update --out's state_memory)"
    )
    args = parser.parse_args(argv)

    query = args.query or topic_query(args.topic)
    if args.probe_only:
        state = measure_state(Path(args.probe_only), query, dict(os.environ, PYTHONPATH=str(PROJECT)))
        if args.out and Path(args.out).exists():
            result = json.loads(Path(args.out).read_text())
            result["state_memory"] = state
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(state, indent=1))
        return state
    kill_at = [int(k) for k in args.kill_at.split(",") if k.strip()]
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="long_crawl_"))
    workdir.mkdir(parents=True, exist_ok=True)
    jobdir = Path(args.jobdir) if args.jobdir else workdir / "job"
    shutil.rmtree(jobdir, ignore_errors=True)
    for old in workdir.glob("events-*.tsv"):
        old.unlink()
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    if args.proxy:
        env.update(http_proxy=args.proxy, https_proxy=args.proxy)
    env["PYTHONPATH"] = str(PROJECT) + os.pathsep + env.get("PYTHONPATH", "")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True
    ).stdout.strip()

    t0 = time.time()
    runs: list[dict] = []
    kills: list[dict] = []
    total = 0
    for index in range(len(kill_at) + 1):
        events = workdir / f"events-{index}.tsv"
        target = kill_at[index] if index < len(kill_at) else None
        pagecount = max(1, args.pages - total) if target is None else 0
        command = crawl_command(query, args.url, jobdir, events, pagecount, args.set, args.interval)
        print(
            f"run {index}: {'kill at ' + str(target) if target else 'to the end'} ({total} responses so far)",
            flush=True,
        )
        deadline = t0 + args.stop_after if args.stop_after else None
        outcome = run_crawl(
            command, env, workdir / f"run-{index}.log", events, target, total, args.timeout, args.poll, deadline
        )
        run = {
            "index": index,
            "events": str(events),
            "log": str(workdir / f"run-{index}.log"),
            **outcome,
            **parse_run_log(workdir / f"run-{index}.log"),
        }
        run["responses"] = sum(1 for f in read_events(events) if f[0] == "R")
        total += run["responses"]
        runs.append(run)
        print(
            f"run {index}: {run['responses']} responses in {run['seconds']} s, killed={run['killed']}, rc={run['returncode']}",
            flush=True,
        )
        if outcome["killed"] and target is not None:
            queued, in_flight = queue_on_disk(jobdir)
            kills.append({"after_run": index, "responses": total, "queued": queued, "in_flight": in_flight})
            print(f"  JOBDIR after the kill: {len(queued)} queued, {len(in_flight)} in flight", flush=True)
    final_queued, final_in_flight = queue_on_disk(jobdir)
    report = analyse(runs, kills, final_queued | final_in_flight)
    series = memory_series(runs, t0)
    state = {} if args.no_state_probe else measure_state(jobdir, query, env)
    last_samples = [s for s in series if s["run"] == runs[-1]["index"] and "queued" in s]
    first = next((s for s in series if s["run"] == runs[-1]["index"]), None)
    crawl_rss = {}
    if last_samples and first:
        end = last_samples[-1]
        crawl_rss = {
            "rss_at_open_mb": round(first["rss"] / 2**20, 1),
            "rss_at_close_mb": round(end["rss"] / 2**20, 1),
            "rss_max_mb": round(max(s["rss"] for s in series) / 2**20, 1),
            "queued_at_close": end["queued"],
            "seen_at_close": end.get("seen"),
        }
        fresh = next((s for s in series if s["run"] == 0), None)  # a crawl process with an empty state
        if fresh and end["queued"]:
            crawl_rss["rss_growth_per_queued_url"] = round((end["rss"] - fresh["rss"]) / end["queued"])
    result = {
        "benchmark": "long_crawl",
        "commit": commit,
        "command": " ".join(
            crawl_command(query, args.url, Path("JOBDIR"), Path("EVENTS"), 0, args.set, args.interval)[2:]
        ),
        "argv": argv if argv is not None else sys.argv[1:],
        "query": query,
        "seed": args.url,
        "proxy": args.proxy,
        "pages_target": args.pages,
        "kill_at": kill_at,
        "seconds": round(time.time() - t0, 1),
        "kills": [
            {
                "after_run": k["after_run"],
                "responses": k["responses"],
                "queued": len(k["queued"]),
                "in_flight": len(k["in_flight"]),
            }
            for k in kills
        ],
        "runs": [{k: v for k, v in run.items() if k not in ("events", "log")} for run in runs],
        "final_jobdir": {"queued": len(final_queued), "in_flight": len(final_in_flight)},
        **report,
        "crawl_rss": crawl_rss,
        "rss_after_queue_stops_growing": beyond_state(flatness(series), state),
        "pace": pace(series),
        "state_memory": state,
        "workdir": str(workdir),
        "memory_series": series,
    }
    print_table(result)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        print(f"results: {args.out}")
    return result


def print_table(r: dict) -> None:
    rows = [
        ("responses (whole crawl)", r["responses"]),
        ("responses per run", ", ".join(map(str, r["responses_per_run"]))),
        ("kills (SIGKILL)", len(r["kills"])),
        ("in flight at each kill (JOBDIR)", ", ".join(map(str, r["in_flight_at_kills"]))),
        ("queued at each kill (JOBDIR)", ", ".join(str(k["queued"]) for k in r["kills"])),
        ("URLs accepted by the scheduler", r["accepted_urls"]),
        (
            "handed to the downloader (requests / URLs)",
            f"{r['handed_to_downloader']} / {r['handed_to_downloader_urls']}",
        ),
        ("still queued at the end", r["final_queue_urls"]),
        ("lost (accepted, never fetched, not queued)", r["lost"]),
        ("refetched (same URL and attempt)", r["refetched"]),
        ("  of them in flight at a kill", r["refetched_in_flight_at_a_kill"]),
        ("  fetched twice in one run", r["refetched_within_one_run"]),
        ("  unexplained", r["refetched_unexplained_count"]),
        ("longest stretch without a response (s)", r["pace"]["longest_seconds_without_a_response"]),
        (
            f"pages/s per {r['pace']['stretch_responses']:,} responses",
            ", ".join(map(str, r["pace"]["pages_per_s_by_stretch"])),
        ),
    ]
    rss = r.get("crawl_rss", {})
    if rss:
        rows += [
            (
                "RSS last run: open -> close (MB)",
                f"{rss['rss_at_open_mb']} -> {rss['rss_at_close_mb']} (max {rss['rss_max_mb']})",
            ),
            ("RSS growth per queued URL (crawl)", rss.get("rss_growth_per_queued_url")),
        ]
    flat = r.get("rss_after_queue_stops_growing", {})
    if "queue_peak" in flat:
        rows += [
            ("last run: queue peak / final", f"{flat['queue_peak']} / {flat['queue_final']}"),
            ("RSS once the queue stops growing (MB)", f"{flat['plateau_rss_first_mb']} -> {flat['plateau_rss_last_mb']} "
             f"(min {flat['plateau_rss_min_mb']}, max {flat['plateau_rss_max_mb']}, {flat['plateau_seconds']} s, "
             f"{flat.get('plateau_pages', 0)} pages, slope {flat.get('plateau_rss_slope_mb_per_1000_pages')} MB/1000 pages)"),
        ]  # fmt: skip
        if "plateau_beyond_state_mb_per_1000_pages" in flat:
            rows.append((
                "  of it the state's growth (seen URLs) / beyond it",
                f"{flat['plateau_state_growth_mb']} of {flat['plateau_rss_growth_mb']} MB / "
                f"{flat['plateau_beyond_state_mb_per_1000_pages']} MB per 1000 pages",
            ))  # fmt: skip
    state = r.get("state_memory", {})
    if "trace_bytes_per_queued_url" in state or "rss_bytes_per_queued_url" in state:
        rows += [
            (
                "state loaded from JOBDIR: queued / seen / pages / domains",
                f"{state.get('queued')} / {state.get('seen')} / {state.get('pages')} / {state.get('domains')}",
            ),
            (
                "state bytes per queued URL (tracemalloc / RSS)",
                f"{state.get('trace_bytes_per_queued_url')} / {state.get('rss_bytes_per_queued_url')}",
            ),
            (
                "state bytes per seen URL (tracemalloc / RSS)",
                f"{state.get('trace_bytes_per_seen_url')} / {state.get('rss_bytes_per_seen_url')}",
            ),
        ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
