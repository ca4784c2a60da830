"""The floor under a big-web crawl's N90 that its slow hosts set (benchmarks/slow_host_floor.py)."""

import json

import pytest

from benchmarks.slow_host_floor import answered_by, floor_of, main


def delays(table):
    """A web whose answer to ``path`` on ``host`` takes ``table[host]`` seconds (robots.txt as fast)."""
    return lambda host, path: table.get(host, 0.0)


def test_a_slow_hosts_pages_take_their_answers_time_shared_by_its_places():
    urls = [f"http://fast.test/{i}" for i in range(4)] + [f"http://slow.test/{i}" for i in range(16)]
    floor = floor_of(urls, delays({"slow.test": 1.0}), slots=8)
    # 18 pages needed: the 4 fast ones and 14 slow ones; 14 answers of 1 s on 8 places, after
    # robots.txt's 1 s: 1 + 14/8 s at the least.
    assert (floor.need, floor.fast, floor.slow_by_host) == (18, 4, {"slow.test": 16})
    assert floor.seconds == pytest.approx(2.75, abs=1e-3)
    assert floor.fetches(20.0) == 55  # 2.75 s of fetches at 20 pages/s
    assert floor.fetches(1.0) == 18  # never fewer than the pages needed


def test_a_topic_on_fast_hosts_has_no_wait_and_the_quickest_pages_count_first():
    assert floor_of([f"http://fast.test/{i}" for i in range(10)], delays({})).seconds == 0.0
    assert answered_by([0.5, 1.0, 4.0], start=0.0, slots=1, seconds=1.5) == 2
    assert answered_by([0.5, 1.0, 4.0], start=1.0, slots=1, seconds=1.5) == 1


def test_the_command_reads_labels_and_a_runs_figures(tmp_path, capsys):
    labels = tmp_path / "labels.json"
    labels.write_text(
        json.dumps({"_doc": "x", "topic": ["http://fast.test/a", "http://en.cppreference.test/w/a.html"]})
    )
    run = tmp_path / "run"
    run.mkdir()
    metrics = {"bestfirst": {"pages_per_s": 40.0, "N90": 900}}
    (run / "results.json").write_text(json.dumps({"topics": {"topic": {"metrics": metrics}}}))
    main(["--labels", str(labels), "--run", str(run)])
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| topic |")][-1]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:5] == ["2", "2", "1", "cppreference 1"] and cells[-1] == "900" and cells[-3] == "40.0"
    assert float(cells[5]) > 0  # cppreference answers after its robots.txt and the page's own time
