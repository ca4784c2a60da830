"""The harness's outputs on a tiny results set: tables, files, and plots only with matplotlib (the bench extra)."""

import json
import sys

import pytest

from benchmarks.harness.cli import write_outputs
from benchmarks.harness.metrics import Run
from benchmarks.harness.report import PLOTS_SKIPPED, Results


def tiny_results() -> Results:
    results = Results(
        budget=10, strategies=["tres", "bfs"], meta={"command": "python -m benchmarks.harness --budget 10"}
    )
    for topic_id in ("alpha", "beta"):
        topic = results.topic(topic_id, relevant={"r1", "r2"}, query=topic_id)
        topic.add(
            Run(topic_id, "tres", fetched=["r1", "x", "r2"], seconds=1.0, cpu_seconds=0.5, finish_reason="budget")
        )
        topic.add(Run(topic_id, "bfs", fetched=["x", "y", "r1"], seconds=1.0, cpu_seconds=0.5, finish_reason="budget"))
    return results


def test_without_matplotlib_the_tables_and_files_are_written_and_the_plots_skipped_in_one_line(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    results = tiny_results()
    assert results.plot(tmp_path) is None
    write_outputs(results, tmp_path)
    out, err = capsys.readouterr()
    assert out.startswith("alpha (2 relevant)") and "\ntres " in out and "\nbfs " in out
    assert err.strip().splitlines()[-1] == PLOTS_SKIPPED
    assert "Traceback" not in err
    assert json.loads((tmp_path / "results.json").read_text())["topics"]
    assert (tmp_path / "results.md").exists()
    assert not list(tmp_path.glob("*.png"))


def test_with_matplotlib_the_plots_are_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    write_outputs(tiny_results(), tmp_path)
    _, err = capsys.readouterr()
    assert PLOTS_SKIPPED not in err and "3 plot(s)" in err
    assert sorted(path.name for path in tmp_path.glob("*.png")) == [
        "recall-all.png",
        "recall-alpha.png",
        "recall-beta.png",
    ]


def test_free_order_repeats_are_averaged_and_a_miss_counts_as_never_reached():
    results = Results(budget=4, strategies=["tres"], meta={})
    topic = results.topic("alpha", relevant={"r1"}, query="alpha")
    topic.add(Run("alpha", "tres", fetched=["r1", "x"], seconds=1.0, cpu_seconds=0.5, finish_reason="budget"))
    topic.add(Run("alpha", "tres", fetched=["x", "x2", "r1"], seconds=1.0, cpu_seconds=0.5, finish_reason="budget"))
    topic.add(
        Run("alpha", "tres", fetched=["x", "x2", "x3", "x4"], seconds=1.0, cpu_seconds=0.5, finish_reason="budget")
    )
    metrics = results.metrics("alpha", "tres")
    assert metrics["N90"] == round((1 + 3 + 5) / 3, 1)  # the third run never found it: budget + 1
