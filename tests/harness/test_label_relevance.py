"""The labels as the page relevance (``benchmarks.label_relevance``): the diagnostic that gives a
crawl a perfect reward scores exactly the labelled pages, says what is missing, and runs as
``ADAPTIVE_RELEVANCE`` in a real harness crawl."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.settings.parsers import ConfigError
from benchmarks.harness.demo import write_demo
from benchmarks.label_relevance import LabelRelevance

REPO = Path(__file__).resolve().parents[2]


def labels_file(tmp_path: Path, labels: dict) -> Path:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    return path


def test_a_page_scores_one_when_its_topic_labels_it_whatever_the_quoting(tmp_path):
    path = labels_file(tmp_path, {"t": ["http://a.test/x%20y.html"], "u": ["http://a.test/other.html"]})
    model = LabelRelevance.from_settings(Settings({"BENCH_LABELS": str(path), "BENCH_TOPIC": "t"}))
    page = SimpleNamespace(url="http://a.test/start.html")
    assert model.score(page, SimpleNamespace(url="http://a.test/x y.html")) == 1.0  # the page after redirects
    assert model.score(SimpleNamespace(url="http://a.test/x%20y.html")) == 1.0
    assert model.score(page, SimpleNamespace(url="http://a.test/other.html")) == 0.0  # another topic's page


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"BENCH_TOPIC": "t"}, "needs BENCH_LABELS"),
        ({"BENCH_LABELS": "{path}", "BENCH_TOPIC": "nope"}, "'nope' is not a topic of"),
        ({"BENCH_LABELS": "{path}.missing", "BENCH_TOPIC": "t"}, "BENCH_LABELS: cannot read"),
    ],
)
def test_missing_or_wrong_labels_stop_with_the_setting_named(tmp_path, settings, message):
    path = labels_file(tmp_path, {"t": []})
    values = {name: value.replace("{path}", str(path)) for name, value in settings.items()}
    with pytest.raises(ConfigError, match=message):
        LabelRelevance.from_settings(Settings(values))


def test_pages_below_the_line_score_zero_unless_asked_to_keep_the_query_score(tmp_path):
    path = labels_file(tmp_path, {"t": []})
    settings = {"BENCH_LABELS": str(path), "BENCH_TOPIC": "t"}
    assert LabelRelevance.from_crawler(SimpleNamespace(settings=Settings(settings))).crawler is None
    crawler = SimpleNamespace(settings=Settings({**settings, "BENCH_BELOW": "score"}))
    assert LabelRelevance.from_crawler(crawler).crawler is crawler
    with pytest.raises(ConfigError, match="BENCH_BELOW: 'scores' is not one of zero, score"):
        LabelRelevance.from_crawler(SimpleNamespace(settings=Settings({**settings, "BENCH_BELOW": "scores"})))


@pytest.mark.parametrize("below", ["zero", "score"])
def test_a_crawl_scores_its_pages_by_the_labels_and_below_them_by_the_query_if_asked(tmp_path, below):
    path = labels_file(tmp_path, {"t": ["http://a.test/stars.html"]})
    settings = {
        "ADAPTIVE_QUERY": "stars and galaxies",
        "ADAPTIVE_RELEVANCE": "benchmarks.label_relevance.LabelRelevance",
        "BENCH_LABELS": str(path),
        "BENCH_TOPIC": "t",
        "BENCH_BELOW": below,
    }
    state = CrawlState.of(get_crawler(Spider, settings))

    def relevance(url: str, text: str) -> float:
        body = f"<html><head><title>{text}</title></head><body><p>{text}</p></body></html>".encode()
        return state.analyze(HtmlResponse(url, body=body, request=Request(url))).relevance

    assert relevance("http://a.test/stars.html", "nothing of the query") == 1.0
    near = relevance("http://a.test/galaxies.html", "stars and galaxies, galaxies and stars")
    if below == "zero":
        assert near == 0.0
    else:  # the query's own score, under the hit line: the crawl still tells near pages from far ones
        assert 0.0 < near < state.config.relevant_threshold
        assert relevance("http://a.test/cooking.html", "a recipe for bread") < near


@pytest.mark.benchmark
@pytest.mark.parametrize("below", ["zero", "score"])
def test_the_harness_crawls_with_the_labels_as_the_page_relevance(tmp_path, below):
    site, topics, demo = write_demo(tmp_path, hubs_per_topic=2, articles_per_hub=12)
    topic_id = json.loads(Path(topics).read_text())["topics"][0]["id"]
    labels = labels_file(tmp_path, {topic_id: sorted(f"http://site.test/{path.lstrip('/')}" for path in demo.relevant)})
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "benchmarks.harness", "--folder", str(site), "--topics", str(topics),
        "--out", str(out), "--no-warmup", "--strategies", "bestfirst", "--budget", "80", "--order", "lockstep",
        "--set", "ADAPTIVE_RELEVANCE=benchmarks.label_relevance.LabelRelevance",
        "--set", f"BENCH_LABELS={labels}", "--set", "BENCH_TOPIC={topic}", "--set", f"BENCH_BELOW={below}",
    ]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    run = json.loads((out / "results.json").read_text())["topics"][topic_id]["runs"]["bestfirst"][0]
    assert run["pages"] == 80 and run["found_at"]
