"""The scrapy index / search commands, run as a user runs them (subprocesses in a tmp dir)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from adaptive_spider.search.evaluation import read_run


def scrapy(cwd, *args):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def indexed(tmp_path, posts_jsonl):
    result = scrapy(
        tmp_path,
        "index",
        "--input",
        str(posts_jsonl),
        "--index",
        "idx",
        "--fields",
        "title,body",
        "--weights",
        "title=2",
    )
    assert result.returncode == 0, result.stderr
    assert "indexed 6 documents" in result.stdout
    return tmp_path


def test_index_then_search_as_json(indexed):
    result = scrapy(indexed, "search", "--index", "idx", "--json", "--top", "3", "pip install proxy")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["hits"][0]["id"] == "p3"
    assert payload["hits"][0]["fields"]["votes"] == 40
    assert len(payload["hits"]) <= 3


def test_search_text_output_and_correction(indexed):
    result = scrapy(indexed, "search", "--index", "idx", "virtual invironment")
    assert result.returncode == 0, result.stderr
    assert "instead of 'invironment'" in result.stdout
    first = next(line for line in result.stdout.splitlines() if line.strip().startswith("1."))
    assert " p1 " in first or " p5 " in first


def test_formula_and_word_weights_change_the_order(indexed):
    plain = json.loads(scrapy(indexed, "search", "--index", "idx", "--json", "--no-fuzzy", "notebook pandas").stdout)
    boosted = json.loads(
        scrapy(
            indexed,
            "search",
            "--index",
            "idx",
            "--json",
            "--word-weights",
            "jupyter=20",
            "--formula",
            "votes * 0",
            "notebook pandas",
        ).stdout
    )
    plain_ids = [hit["id"] for hit in plain["hits"]]
    assert set(plain_ids) >= {"p2", "p6"}
    assert boosted["hits"][0]["score"] > plain["hits"][0]["score"] + 19


def test_batch_mode_writes_a_trec_run(indexed):
    queries = indexed / "queries.tsv"
    queries.write_text("q1\tvirtual environment\nq2\tfor loop\n")
    result = scrapy(indexed, "search", "--index", "idx", "--queries", str(queries), "--run", "run.txt", "--tag", "mine")
    assert result.returncode == 0, result.stderr
    lines = (indexed / "run.txt").read_text().splitlines()
    qid, q0, doc, rank, score, tag = lines[0].split()
    assert (qid, q0, rank, tag) == ("q1", "Q0", "1", "mine")
    float(score)
    run = read_run(indexed / "run.txt")
    assert run["q2"][0] == "p4"
    assert set(run) == {"q1", "q2"}


def test_incremental_index_from_csv(indexed):
    extra = indexed / "more.csv"
    with extra.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["id", "title", "body", "votes"])
        writer.writeheader()
        writer.writerow({"id": "p7", "title": "Docker compose volumes", "body": "mount a volume", "votes": "5"})
    result = scrapy(indexed, "index", "--input", str(extra), "--index", "idx")
    assert result.returncode == 0, result.stderr
    assert "(7 in the index" in result.stdout
    hits = json.loads(scrapy(indexed, "search", "--index", "idx", "--json", "docker").stdout)
    assert hits["hits"][0]["id"] == "p7"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "--index", "idx", "   "], "empty query"),
        (["search", "--index", "missing", "python"], "no index at missing"),
        (["search", "--index", "idx", "--formula", "log(votes", "python"], "formula: unexpected end"),
        (["search", "--index", "idx", "--formula", "__import__('os')", "x"], "formula: unexpected"),
        (["search", "--index", "idx", "--formula", "stars + 1", "python"], "unknown field 'stars'"),
        (["search", "--index", "idx", "--fields", "titel", "python"], "unknown field 'titel'"),
        (["index", "--input", "nothere.jsonl", "--index", "new"], "input file not found"),
    ],
)
def test_bad_input_gives_one_clear_line(indexed, args, message):
    result = scrapy(indexed, *args)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith(f"scrapy {args[0]}: error: ")
    assert message in result.stderr


def test_unknown_field_at_index_time_leaves_no_index(tmp_path, posts_jsonl):
    result = scrapy(tmp_path, "index", "--input", str(posts_jsonl), "--index", "bad", "--fields", "title,bdy")
    assert result.returncode == 1
    assert "unknown field 'bdy'" in result.stderr
    assert not (tmp_path / "bad" / "index.sqlite").exists()
