"""``python -m benchmarks.page_scores``: a harness run's fetched pages scored again against the labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.page_scores import auc, average_precision, main

REPO = Path(__file__).resolve().parents[2]


def test_auc_counts_pairs_ranked_right_and_ties_as_half():
    relevant = np.array([True, True, False, False])
    assert auc(np.array([0.9, 0.8, 0.2, 0.1]), relevant) == 1.0
    assert auc(np.array([0.1, 0.2, 0.8, 0.9]), relevant) == 0.0
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), relevant) == 0.5
    # 0.9 beats both others, 0.3 beats 0.1 and ties 0.3: (2 + 1.5) / 4 pairs
    assert auc(np.array([0.9, 0.3, 0.3, 0.1]), relevant) == pytest.approx(3.5 / 4)
    assert auc(np.array([0.9, 0.3]), np.array([True, True])) is None


def test_average_precision_is_the_mean_precision_at_each_relevant_page():
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    assert average_precision(scores, np.array([True, False, True, False])) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision(scores, np.array([False, False, False, False])) is None


@pytest.mark.benchmark
def test_the_crawls_pages_are_scored_again_and_ranked_against_the_labels(traced_run, tmp_path, capsys):
    out, demo = traced_run
    rows_file = tmp_path / "rows.json"
    assert main([str(out), "--json", str(rows_file)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("| crawl | pages | relevant | AUC |") and "demo-astronomy-bestfirst-1" in printed
    (row,) = json.loads(rows_file.read_text())["rows"]
    trace = (out / "traces" / "demo-astronomy-bestfirst-1.txt").read_text().split()
    found = json.loads((out / "results.json").read_text())["topics"]["demo-astronomy"]["runs"]["bestfirst"][0]
    assert row["pages"] == len(trace) == 120
    assert row["relevant"] == len(found["found_at"]) > 0  # the harness's count of relevant fetched pages
    # The query's own words rank the astronomy articles above the rest of the demo site.
    assert row["auc"] > 0.8 and row["relevant_over_mean"] > 1.0
    assert 0.0 <= row["hit_recall"] <= 1.0 and 0.0 < row["ap"] <= 1.0


@pytest.mark.benchmark
def test_another_page_score_setting_changes_the_figures(traced_run, tmp_path):
    out, _ = traced_run
    figures = []
    for extra in ([], ["--set", "ADAPTIVE_RELEVANCE_HALF=0.9"]):
        rows_file = tmp_path / f"rows{len(extra)}.json"
        assert main([str(out), "--json", str(rows_file), *extra]) == 0
        figures.append(json.loads(rows_file.read_text())["rows"][0])
    # A higher half scores every page lower: fewer hits at the threshold, the same ranking.
    assert figures[1]["auc"] == pytest.approx(figures[0]["auc"])
    assert figures[1]["hit_recall"] < figures[0]["hit_recall"]


class AnyButTheLabelledTopic:
    """A relevance model that calls every page relevant but the astronomy topic's: the labels' opposite."""

    def score(self, page, response=None) -> float:
        return 0.0 if "/astronomy" in page.url else 1.0


@pytest.mark.benchmark
def test_a_relevance_model_scores_the_pages_as_in_a_crawl(traced_run, tmp_path):
    out, _ = traced_run
    rows = {}
    for name, extra in (("bm25", []), ("model", ["--set", f"ADAPTIVE_RELEVANCE={__name__}.AnyButTheLabelledTopic"]),
                        ("mixed", ["--set", f"ADAPTIVE_RELEVANCE={__name__}.AnyButTheLabelledTopic",
                                   "--set", "ADAPTIVE_RELEVANCE_QUERY_WEIGHT=1"])):  # fmt: skip
        rows_file = tmp_path / f"{name}.json"
        assert main([str(out), "--json", str(rows_file), *extra]) == 0
        rows[name] = json.loads(rows_file.read_text())["rows"][0]
    assert rows["bm25"]["auc"] > 0.8 and rows["model"]["auc"] < 0.2  # the model's ranking, not the query's
    assert rows["mixed"]["auc"] == pytest.approx(rows["bm25"]["auc"])  # weight 1: the query's score alone


@pytest.mark.benchmark
def test_a_misspelled_setting_or_a_folder_without_traces_is_a_clear_error(traced_run, tmp_path, capsys):
    out, _ = traced_run
    assert main([str(out), "--set", "ADAPTIVE_RELEVANCE_HALFF=0.2"]) == 2
    assert (
        "ADAPTIVE_RELEVANCE_HALFF is not an adaptive_spider setting; did you mean ADAPTIVE_RELEVANCE_HALF?"
        in capsys.readouterr().err
    )
    assert main([str(tmp_path)]) == 2
    assert "not a harness output folder" in capsys.readouterr().err


def test_a_runs_relative_topics_file_is_found_from_another_folder(tmp_path, monkeypatch):
    from benchmarks.page_scores import REPO, _topics_file

    monkeypatch.chdir(tmp_path)  # the harness ran from the repository's root; this runs elsewhere
    assert _topics_file({"topics_file": "benchmarks/topics/heldout.json"}) == str(
        REPO / "benchmarks/topics/heldout.json"
    )
    assert _topics_file({"topics_file": "nowhere/topics.json"}) == "nowhere/topics.json"  # left for the clear error
