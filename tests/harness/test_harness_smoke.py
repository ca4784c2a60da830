"""Smoke runs of ``python -m benchmarks.harness`` on the generated demo site served from a folder.

Real crawls through the offline web's server (a child process on 127.0.0.1), a
few hundred pages in all: the command prints its table, writes the JSON file
and the plots, reruns agree, and Ctrl-C still writes what was measured. The
full benchmark is a documented command (docs/benchmarks.md), never run here.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.harness.demo import write_demo

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.benchmark


def harness_command(site, topics, out, *extra):
    return [
        sys.executable,
        "-m",
        "benchmarks.harness",
        "--folder",
        str(site),
        "--topics",
        str(topics),
        "--out",
        str(out),
        "--no-warmup",
        *extra,
    ]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One harness run: a 164-page demo site, three strategies twice each, 120 pages per crawl."""
    folder = tmp_path_factory.mktemp("demo")
    site, topics, demo = write_demo(folder, hubs_per_topic=2, articles_per_hub=12)
    out = folder / "out"
    command = harness_command(
        site,
        topics,
        out,
        "--strategies",
        "tres,bfs,stock",
        "--budget",
        "120",
        "--repeat",
        "2",
        "--traces",
        "--order",
        "lockstep",
        "--keywords",
    )
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed, out, demo


def test_table_has_a_row_per_strategy_and_the_mean(smoke_run):
    completed, _, demo = smoke_run
    lines = completed.stdout.splitlines()
    assert lines[0] == f"demo-astronomy ({len(demo.relevant)} relevant)"
    assert lines[1].split() == [
        "strategy",
        "H@200",
        "H@500",
        "R@500",
        "R@1000",
        "N50",
        "N90",
        "pages/s",
        "×stock",
        "cpu×st",
        "finish",
    ]
    rows = {line.split()[0]: line.split() for line in lines[2:5]}
    assert set(rows) == {"tres", "bfs", "stock"}
    assert all(row[-1] == "budget" for row in rows.values())
    assert rows["stock"][-3:-1] == ["1.00", "1.00"]  # stock against itself
    assert "reruns:" in completed.stdout
    assert "[6/6] demo-astronomy stock #2: 120 pages" in completed.stderr  # progress


def test_json_holds_sane_metrics_and_identical_reruns(smoke_run):
    _, out, demo = smoke_run
    results = json.loads((out / "results.json").read_text())
    topic = results["topics"]["demo-astronomy"]
    assert topic["relevant"] == len(demo.relevant) == 24
    assert results["harness"]["interrupted"] is False and results["harness"]["order"] == "lockstep"
    for strategy in ("tres", "bfs", "stock"):
        metrics = topic["metrics"][strategy]
        assert metrics["pages"] == 120 and metrics["finish_reason"] == "budget"
        assert metrics["pages_per_s"] > 0 and metrics["H@500"] is None and metrics["R@1000"] is None
        found = topic["runs"][strategy][0]["found_at"]
        assert found == sorted(found) and all(1 <= n <= 120 for n in found)
        if metrics["N90"] is not None:
            assert metrics["N50"] <= metrics["N90"] == found[21]  # 90 % of 24 -> the 22nd relevant page
        # lockstep: the rerun fetched exactly the same pages in the same order
        assert topic["variation"][strategy]["identical_fetch_order"] is True
        trace = (out / "traces" / f"demo-astronomy-{strategy}-1.txt").read_text().split()
        assert len(trace) == 120 and trace[0] == "http://site.test/index.html"  # the seed, after its redirect
    assert topic["metrics"]["stock"]["speed_vs_stock"] == 1.0
    # What the query learned is kept per run; stock Scrapy has no query to learn.
    assert isinstance(topic["runs"]["tres"][0]["query_learned"], str)
    assert topic["runs"]["stock"][0]["query_learned"] == ""
    # What gave no page: the demo site serves every link and its robots.txt, fetched once.
    assert topic["runs"]["tres"][0]["failed_requests"] == {
        "download_errors": 0,
        "robots_txt_errors": 0,
        "hosts_tried": 1,
        "unreachable_dropped": 0,
    }
    # What became of the links: the add-on drops a page's links to pages it sent before the scheduler.
    links = {strategy: topic["runs"][strategy][0]["links"] for strategy in ("tres", "stock")}
    assert links["tres"]["settled_repeats"] > 0 and links["tres"]["enqueued"] > 0
    assert links["stock"]["settled_repeats"] == links["stock"]["same_page_repeats"] == 0
    assert links["stock"]["dupefilter_filtered"] > links["tres"]["dupefilter_filtered"]
    assert results["mean"]["tres"]["topics"] == 1
    # The AdaptiveScheduler's bfs is Scrapy's own breadth-first order, page for page.
    traces = {s: (out / "traces" / f"demo-astronomy-{s}-1.txt").read_text() for s in ("bfs", "stock")}
    assert traces["bfs"] == traces["stock"]


def test_plot_and_markdown_are_written(smoke_run):
    import matplotlib.image

    _, out, _ = smoke_run
    image = matplotlib.image.imread(out / "recall-demo-astronomy.png")
    assert image.shape[0] > 300 and image.shape[1] > 500
    assert image[..., :3].std() > 0.05  # lines, not a blank canvas
    markdown = (out / "results.md").read_text()
    assert "| tres |" in markdown and "python -m benchmarks.harness" in markdown


def test_ctrl_c_stops_cleanly_and_keeps_what_was_measured(tmp_path):
    site, topics, _ = write_demo(tmp_path)  # the full demo site: 752 pages
    out = tmp_path / "out"
    command = harness_command(site, topics, out, "--strategies", "bfs,tres", "--budget", "600")
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    began = time.monotonic()
    for line in process.stderr:
        if "[2/2] demo-astronomy tres: starting" in line:
            process.send_signal(signal.SIGINT)
            break
        assert time.monotonic() - began < 60, "the second crawl never started"
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr
    results = json.loads((out / "results.json").read_text())
    assert results["harness"]["interrupted"] is True
    assert set(results["topics"]["demo-astronomy"]["runs"]) == {"bfs"}  # the interrupted crawl is not in the table
    assert results["interrupted_run"]["strategy"] == "tres"
    assert results["topics"]["demo-astronomy"]["metrics"]["bfs"]["pages"] == 600
    assert stdout.splitlines()[2].split()[0] == "bfs"  # the table of what was measured
    assert (out / "recall-demo-astronomy.png").is_file()


def test_by_default_the_harness_runs_what_users_run():
    from benchmarks.harness.cli import build_parser

    args = build_parser().parse_args([])
    assert args.order == "free" and args.keywords is False  # Scrapy's own order, the query alone


def test_failed_requests_are_read_from_the_crawl_stats():
    from benchmarks.harness.crawl import failed_requests

    stats = {
        "downloader/exception_count": 9,
        "downloader/exception_type_count/scrapy.exceptions.IgnoreRequest": 2,  # never sent
        "robotstxt/exception_count/<class 'scrapy.exceptions.DownloadConnectionRefusedError'>": 3,
        "robotstxt/exception_count/<class 'scrapy.core.downloader.handlers.http11.TunnelError'>": 1,
        "robotstxt/request_count": 6,
        "adaptive/filtered/unreachable": 5,
    }
    assert failed_requests(stats) == {
        "download_errors": 7,
        "robots_txt_errors": 4,
        "hosts_tried": 6,
        "unreachable_dropped": 5,
    }
    assert failed_requests({}) == {
        "download_errors": 0,
        "robots_txt_errors": 0,
        "hosts_tried": 0,
        "unreachable_dropped": 0,
    }


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        # Scrapy ignores unknown names: the run would measure the default under the setting's name.
        ("ADAPTIVE_NEW_DOMAIN_SHAR=0.3", "did you mean ADAPTIVE_NEW_DOMAIN_SHARE?"),
        ("ADAPTIVE_NEW_DOMAIN_SHARE=2", "ADAPTIVE_NEW_DOMAIN_SHARE: must be <= 1.0"),
        # Valid alone, refused together: found before the first crawl, not as a crawl's traceback.
        ("ADAPTIVE_EPSILON_START=0", "ADAPTIVE_EPSILON_END: must not exceed ADAPTIVE_EPSILON_START"),
    ],
)
def test_a_set_the_crawls_would_not_take_ends_the_run_before_it_starts(tmp_path, capsys, setting, message):
    from benchmarks.harness.cli import EXIT_BAD_INPUT, main

    site, topics, _ = write_demo(tmp_path, hubs_per_topic=1, articles_per_hub=2)
    out = tmp_path / "out"
    argv = ["--folder", str(site), "--topics", str(topics), "--out", str(out), "--strategies", "bestfirst,stock"]
    assert main([*argv, "--set", setting]) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert f"--set: {setting.split('=')[0]}" in error or "--set: ADAPTIVE_EPSILON_END" in error
    assert message in error
    assert not out.exists()  # refused before anything was written


def test_a_crawl_that_never_started_is_recorded_without_its_stats():
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from benchmarks.harness.crawl import FetchRecorder
    from benchmarks.harness.metrics import Run

    run = Run("topic", "bestfirst")
    recorder = FetchRecorder(Crawler(Spider), run, 10)
    recorder.start_clock()
    recorder.finish()  # the crawl's settings were refused: no stats to read, and no second error
    assert run.seconds >= 0 and run.finish_reason == ""


def test_a_per_topic_set_is_checked_with_each_topics_own_value(tmp_path):
    """``{topic}`` in a ``--set`` value is each crawl's topic id: a training file per topic is
    checked for every topic of the run, and one that is missing names its topic."""
    from benchmarks.harness.cli import BadInput, check_settings

    (tmp_path / "alpha.txt").write_text("+ http://x.test/1\n- http://x.test/2\n")
    extra = {"ADAPTIVE_CLASSIFIER_TRAINING": str(tmp_path / "{topic}.txt")}
    check_settings(extra, ["bestfirst", "stock"], ["alpha"])
    with pytest.raises(BadInput, match=r"--set \(topic beta\): ADAPTIVE_CLASSIFIER_TRAINING"):
        check_settings(extra, ["bestfirst"], ["alpha", "beta"])
