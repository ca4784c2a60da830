"""A small version of ``benchmarks/long_crawl.py`` (docs/robustness.md, "A long crawl at
scale"): the same driver, on a local demo site instead of the big web: a focused crawl
with JOBDIR, SIGKILLed twice and resumed, loses no queued URL, fetches again only what
was in flight at a kill, and reports its memory."""

from __future__ import annotations

import json

import pytest

from adaptive_spider.demo.site import DemoSite
from adaptive_spider.demo.traps import TrapSite, serve
from benchmarks import long_crawl

pytestmark = pytest.mark.slow


def test_long_crawl_killed_twice_loses_nothing_and_refetches_only_in_flight(tmp_path):
    site = TrapSite(
        DemoSite(seed=3, hubs_per_topic=3, articles_per_hub=20), traps=False, page_delay=0.01, crawl_delay=0
    )
    server, url = serve(site)
    out = tmp_path / "long_crawl.json"
    try:
        result = long_crawl.main([
            "--url", url, "--proxy", "", "--query", "widgets gadgets", "--pages", "250", "--kill-at", "70,160",
            "--workdir", str(tmp_path / "work"), "--interval", "0.5", "--timeout", "60", "--poll", "0.005",
            "--out", str(out), "--set", "CONCURRENT_REQUESTS=4", "--set", "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0.2",
        ])  # fmt: skip
    finally:
        server.shutdown()
    assert json.loads(out.read_text())["lost"] == 0
    assert [run["killed"] for run in result["runs"]] == [True, True, False]
    assert result["runs"][-1]["returncode"] == 0
    assert [run.get("resumed_in_flight") is not None for run in result["runs"]] == [False, True, True]
    assert result["accepted_urls"] > result["responses"] >= 250  # the whole target: robots.txt files do not count
    assert result["runs"][-1]["stats"]["finish_reason"] == "long_crawl_target"
    assert result["lost"] == 0, result["lost_sample"]
    # Fetched twice only what was in flight at a kill; never twice within one run.
    assert result["refetched_unexplained_count"] == 0, result["refetched_unexplained"]
    assert result["refetched_within_one_run"] == 0, result["refetched_within_one_run_sample"]
    assert result["refetched"] == result["refetched_in_flight_at_a_kill"] <= sum(result["in_flight_at_kills"])
    # The server agrees: every page it served more than once was in flight at a kill.
    served = site.fetched_paths()
    repeats = len(served) - len(set(served))
    assert repeats <= sum(result["in_flight_at_kills"])
    # Memory: sampled in every run, and the state loaded from the final JOBDIR measured.
    assert {sample["run"] for sample in result["memory_series"]} == {0, 1, 2}
    assert all(sample["rss"] > 0 for sample in result["memory_series"])
    state = result["state_memory"]
    assert state["queued"] == result["final_queue_urls"]
    if state["queued"]:
        assert state["trace_bytes"] > state["trace_bytes_empty_jobdir"] > 0


def test_pace_finds_the_longest_stretch_without_a_response_and_the_pages_per_s_of_each_stretch():
    def run(index, points):
        return [{"run": index, "t": t, "responses": n, "rss": 1} for t, n in points]

    # Run 0: 10 pages/s, then 20 s without a response, then on; run 1 (a resume) counts on from there.
    series = run(0, [(0, 0), (5, 50), (10, 100), (15, 100), (25, 100), (30, 100), (35, 150)]) + run(
        1, [(40, 0), (45, 50), (50, 100)]
    )
    found = long_crawl.pace(series, step=100)
    assert found["longest_seconds_without_a_response"] == 20.0
    # 100 responses in 10 s; 100 in 30 s (50, the still 20 s, the resume's first 50); the last 50 in 5 s.
    assert found["pages_per_s_by_stretch"] == [10.0, 3.3, 10.0]
    assert found["stretch_responses"] == 100
