"""Crash and resume: a focused crawl with JOBDIR, killed with SIGKILL mid-way and
started again, loses no queued URL and fetches again only what was in flight.

*In flight* (docs/robustness.md): requests the scheduler had handed to the
engine and the engine had not finished with — their response not yet through
the spider, or the requests the spider yielded for it not yet through the
scheduler. The journal on disk says which ones they were at the kill.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from scrapy import Request

from adaptive_spider.crawl.jobdir import queue_on_disk
from adaptive_spider.demo.site import QUERY, DemoSite
from adaptive_spider.demo.traps import TrapSite, serve
from tests.test_scheduler import make_scheduler as scheduler_on

PROJECT = Path(__file__).resolve().parent.parent
CONCURRENCY = 4


def crawl_command(url: str, jobdir: Path, report: Path) -> list[str]:
    return [
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
        f"JOBDIR={jobdir}",
        "-s",
        f"CONCURRENT_REQUESTS={CONCURRENCY}",
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        "ADAPTIVE_SELF_STOP=False",
        "-s",
        "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0.2",
        "-s",
        f"ADAPTIVE_REPORT_FILE={report}",
    ]


def kill_after(command: list[str], site: TrapSite, fetches: int, log: Path) -> None:
    """Start a crawl and SIGKILL it once the site has served ``fetches`` pages."""
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=PROJECT, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while len(site.fetched_paths()) < fetches and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert process.poll() is None, "the crawl ended before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)


def test_sigkill_and_resume_lose_nothing_and_repeat_only_in_flight(tmp_path):
    site = TrapSite(DemoSite(seed=3, hubs_per_topic=2, articles_per_hub=8), traps=False, page_delay=0.01, crawl_delay=0)
    server, url = serve(site)
    jobdir = tmp_path / "job"
    try:
        in_flight_at_kills = []
        runs = []
        for kill_at in (30, 70):  # two kills, then a run to the end
            before = len(site.fetched_paths())
            kill_after(
                crawl_command(url, jobdir, tmp_path / "report.json"), site, kill_at, tmp_path / f"kill{kill_at}.log"
            )
            runs.append(site.fetched_paths()[before:])
            queued, in_flight = queue_on_disk(jobdir)
            assert queued, "nothing was left to resume"
            in_flight_at_kills.append({u.replace(url.rstrip("/"), "") for u in in_flight})
        before = len(site.fetched_paths())
        done = subprocess.run(
            crawl_command(url, jobdir, tmp_path / "report.json"),
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        runs.append(site.fetched_paths()[before:])
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "resumed" in done.stderr

    fetched = Counter(path for run in runs for path in run)
    lost = set(site.honest_paths) - set(fetched)
    assert not lost, f"{len(lost)} pages never fetched: {sorted(lost)[:5]}"
    for number, (before, after) in enumerate(pairwise(runs)):
        repeated = set(before) & set(after)
        # Fetched again only what was in flight at the kill: what the downloader held
        # (at most CONCURRENT_REQUESTS) and the responses waiting for the spider.
        assert repeated <= in_flight_at_kills[number], repeated - in_flight_at_kills[number]
        assert len(in_flight_at_kills[number]) <= 3 * CONCURRENCY
    assert all(count == 1 for path, count in Counter(runs[-1]).items()), "a page fetched twice in one run"
    extra = sum(fetched.values()) - len(fetched)
    assert extra <= sum(len(s) for s in in_flight_at_kills)


def make_scheduler(jobdir, **settings):
    """A tres scheduler on JOBDIR with Scrapy's RFPDupeFilter (its requests.seen file)."""
    return scheduler_on(jobdir, **{"ADAPTIVE_STRATEGY": "tres", "ADAPTIVE_QUERY": "widgets", **settings})


def test_abandoned_scheduler_comes_back_with_queue_model_and_domains(tmp_path):
    """A scheduler dropped without close() (as a killed process would) is restored
    from its last snapshot plus the journal: queue, in-flight requests, model, domains."""
    scheduler = make_scheduler(tmp_path, ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0)
    state = scheduler.state
    for i in range(60):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}", meta={"link_text": "widgets" if i % 2 else "other"}))
    taken = []
    for _ in range(40):
        request = scheduler.next_request()
        taken.append(request.url)
        state.domains.record_response("foo.test", 200, 0.1)
        state._record_page(request, request.url, 0.9 if "widgets" in request.meta["link_text"] else 0.0)
    scheduler.jobdir.write_snapshot()  # what the periodic snapshot does
    weights = [w.copy() for w in scheduler.frontier.strategy.agent.online.weights]
    for i in range(60, 70):  # journaled after the snapshot only
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    later = [scheduler.next_request().url for _ in range(5)]
    queued_urls = {r.url for r in scheduler.frontier.store.requests if r is not None} | {
        r.url for r, _ in scheduler.ready
    }
    # Without an engine nothing is ever "done": all 45 taken requests count as in flight.
    del scheduler

    resumed = make_scheduler(tmp_path)
    restored = [resumed.next_request().url for _ in range(len(resumed))]
    assert set(restored) == queued_urls | set(taken) | set(later)
    assert len(restored) == len(set(restored)) == 70
    assert all((a == b).all() for a, b in zip(resumed.frontier.strategy.agent.online.weights, weights))
    assert resumed.state.domains.get("foo.test").attempts == 40 and len(resumed.state.pages) == 40
    assert not resumed.enqueue_request(Request("http://foo.test/65"))  # the dupefilter knows it
    assert resumed.stats.get_value("adaptive/resume/journal_events") > 0


def test_journal_replay_survives_a_torn_record(tmp_path):
    scheduler = make_scheduler(tmp_path)
    for i in range(5):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    scheduler.jobdir.journal.close()
    journal = next(tmp_path.glob("adaptive_journal.*"))
    journal.write_bytes(journal.read_bytes()[:-7])  # the kill cut the last record short
    resumed = make_scheduler(tmp_path)
    assert len(resumed) == 4


@pytest.mark.parametrize("strategy", ["bfs", "tres"])
def test_clean_close_then_reopen_keeps_the_journal_format(tmp_path, strategy):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_STRATEGY=strategy)
    for i in range(6):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    scheduler.next_request()
    scheduler.close("shutdown")
    # A clean close leaves the state snapshot and the queue compacted into the base, no generation.
    assert sorted(path.name for path in tmp_path.glob("adaptive_*")) == [
        "adaptive_frontier.pickle",
        "adaptive_journal.base",
    ]
    reopened = make_scheduler(tmp_path, ADAPTIVE_STRATEGY=strategy)
    assert len(reopened) == 5


# -- snapshots that never freeze the crawl: the journal is the queue, compacted in the background --
def queued_urls_after_a_kill(jobdir) -> set[str]:
    """What a crawl resumed from ``jobdir`` queues (queued and in flight)."""
    queued, in_flight = queue_on_disk(jobdir)
    return queued | in_flight


def test_a_periodic_snapshot_writes_the_state_not_the_queue_and_compacts_in_the_background(tmp_path):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0)
    for i in range(200):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    taken = [scheduler.next_request().url for _ in range(20)]
    scheduler.jobdir.write_snapshot()
    journal = scheduler.jobdir.journal
    with (tmp_path / "adaptive_frontier.pickle").open("rb") as handle:
        snapshot = pickle.load(handle)
    assert snapshot["frontier"]["entries"] == [] and snapshot["version"] == 3  # no request serialised again
    # The crawl goes on while the base is written: more requests, more releases.
    for i in range(200, 260):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    taken += [scheduler.next_request().url for _ in range(10)]
    journal.wait()
    assert journal.compactions == 1
    assert sorted(path.name for path in tmp_path.glob("adaptive_journal.*")) == [
        "adaptive_journal.1",
        "adaptive_journal.base",
    ]
    # Killed now (no close): every request is queued or in flight, none lost.
    assert queued_urls_after_a_kill(tmp_path) == {f"http://foo.test/{i}" for i in range(260)}
    assert queue_on_disk(tmp_path)[1] == set(taken)  # the in-flight ones, and only those, come back as such


def test_a_kill_during_compaction_loses_nothing(tmp_path):
    """Until the new base replaces the old one, the generations it covers stay on disk."""
    scheduler = make_scheduler(tmp_path, ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0)
    for i in range(50):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    scheduler.jobdir.write_snapshot()
    scheduler.jobdir.journal.wait()
    for i in range(50, 80):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}"))
    expected = {f"http://foo.test/{i}" for i in range(80)}
    journal = scheduler.jobdir.journal
    journal.close()
    # The kill came while the next base was being written: a partial file, nothing replaced.
    (tmp_path / "adaptive_journal.partial").write_bytes(b"\x00\x00\x01\x00torn")
    assert queued_urls_after_a_kill(tmp_path) == expected
    resumed = make_scheduler(tmp_path)
    assert len(resumed) == 80


def test_rolls_while_a_compaction_runs_are_folded_into_the_next_one(tmp_path):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0)
    journal = scheduler.jobdir.journal
    for round_ in range(5):
        for i in range(40):
            scheduler.enqueue_request(Request(f"http://foo.test/{round_}/{i}"))
        scheduler.next_request()
        scheduler.jobdir.write_snapshot()
    journal.wait()
    scheduler.jobdir.write_snapshot()
    journal.wait()
    assert sorted(path.name for path in tmp_path.glob("adaptive_journal.*")) == ["adaptive_journal.base"]
    assert len(queued_urls_after_a_kill(tmp_path)) == 200
