"""Where a traced crawl's fetches went, host by host (benchmarks/host_pace.py)."""

import gzip
import json

from benchmarks.host_pace import EXIT_BAD_INPUT, main, pace_rows


def test_each_stretch_counts_a_hosts_fetches_its_relevant_pages_and_the_found_so_far():
    urls = [
        "http://slow.test/a",
        "http://fast.test/1",
        "http://fast.test/2",
        "http://slow.test/b",
        "http://fast.test/3",
    ]
    rows = pace_rows(urls, {"http://slow.test/b", "http://fast.test/1"}, ["slow.test"], every=2)
    assert [row["fetches"] for row in rows] == [2, 4, 5]
    assert [row["found"] for row in rows] == [1, 2, 2]
    assert [row["hosts"]["slow.test"] for row in rows] == [(1, 0), (1, 1), (0, 0)]
    assert rows[0]["busiest"] == [("slow.test", 1), ("fast.test", 1)]
    assert rows[1]["busiest"] == [("fast.test", 1), ("slow.test", 1)]


def make_run(tmp_path):
    """A harness output folder: its topics file, the labels file beside it, and two traces (one gzipped)."""
    topics = tmp_path / "topics-x.json"
    topics.write_text("{}")
    (tmp_path / "labels-x.json").write_text(
        json.dumps({"_doc": "x", "alpha": ["http://slow.test/a"], "beta": ["http://fast.test/b"]})
    )
    run = tmp_path / "run"
    (run / "traces").mkdir(parents=True)
    (run / "results.json").write_text(json.dumps({"harness": {"topics_file": str(topics)}}))
    (run / "traces" / "alpha-bestfirst-1.txt").write_text(
        "http://fast.test/1\nhttp://slow.test/a\nhttp://fast.test/2\n"
    )
    (run / "traces" / "beta-bestfirst-1.txt.gz").write_bytes(gzip.compress(b"http://fast.test/b\n"))
    return run


def test_the_command_reads_the_runs_labels_and_gzipped_traces(tmp_path, capsys):
    run = make_run(tmp_path)
    assert main([str(run), "--every", "2", "--hosts", "slow.test"]) == 0
    out = capsys.readouterr().out
    assert "alpha-bestfirst-1: 3 fetches" in out and "beta-bestfirst-1: 1 fetches" in out
    alpha = out.split("beta-bestfirst-1")[0]
    rows = [line for line in alpha.splitlines() if line.startswith("| 2 |") or line.startswith("| 3 |")]
    assert rows == ["| 2 | 1 | 1 (1) | fast.test 1, slow.test 1 |", "| 3 | 1 | 0 (0) | fast.test 1 |"]
    assert main([str(run), "--topic", "beta", "--hosts", "fast.test"]) == 0
    assert "| 1 | 1 | 1 (1) | fast.test 1 |" in capsys.readouterr().out


def test_bad_input_names_what_is_wrong(tmp_path, capsys):
    run = make_run(tmp_path)
    assert main([str(run), "--topic", "gamma"]) == EXIT_BAD_INPUT
    assert "no trace of topic 'gamma'" in capsys.readouterr().err
    assert main([str(run), "--every", "0"]) == EXIT_BAD_INPUT
    assert "--every 0" in capsys.readouterr().err
    empty = tmp_path / "empty"
    (empty / "traces").mkdir(parents=True)
    assert main([str(empty)]) == EXIT_BAD_INPUT
    assert "run the harness with --traces" in capsys.readouterr().err
