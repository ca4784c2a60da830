"""Templates into search: a template crawl's ranking variables reach the index, and its
documents are de-duplicated by content (issue 15, item 7).

Real parts throughout: the `template` spider crawls the questions fixture site, the feed
goes through `scrapy index`, queries through `scrapy search` (subprocesses, as a user
runs them); the pipeline path runs the SearchIndexPipeline inside a crawl.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest_twisted

from adaptive_spider.search import SearchIndex
from adaptive_spider.search.documents import search_document

PROJECT = Path(__file__).resolve().parents[2]
QUESTIONS = PROJECT / "docs" / "examples" / "questions.json"

# Titles by votes, highest first, with their ranking numbers ("3,456", "2.5k", "1.2k", ...).
BY_VOTES = [
    ("What does the yield keyword do?", 3456.0),
    ("What is the difference between a process and a thread?", 2500.0),
    ("How do I merge two dictionaries in a single expression?", 1200.0),
    ("Why is processing a sorted array faster than an unsorted one?", 856.0),
    ("How do I undo the most recent local commits in Git?", 42.0),
    ("How to read a file line by line into a list?", 15.0),
    ("Lazy loading images: data-src or loading=lazy?", 11.0),
    ("Regular expression to match a price with a currency sign", 7.0),
]
# log(0 + 1) = 0 and log(-2 + 1) is not a number (counts as 0): these two tie last.
NO_BOOST = {"XPath: select an element by the text of a child", "Scrapy spider returns nothing"}
# Every document has the word (template name, page url): with --b 0 and no feedback their
# BM25 scores are equal, so the formula alone orders them.
EVERY_DOCUMENT = "questions"


def scrapy(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def crawl_to_feed(site: str, feed: Path, *start_urls: str) -> None:
    done = scrapy(
        PROJECT,
        "crawl", "template", "-s", "ADDONS={}", "-s", "LOG_LEVEL=WARNING",
        "-a", f"template={QUESTIONS}",
        "-a", "start_urls=" + ",".join(site + url for url in start_urls),
        "-O", str(feed),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


def titles_by_score(hits: list[dict]) -> list[str]:
    return [hit["fields"]["title"] for hit in hits]


def test_template_crawl_then_index_then_search_with_a_formula(fixture_site, tmp_path):
    feed = tmp_path / "questions.jsonl"
    crawl_to_feed(fixture_site, feed, "questions/index.html")
    assert len(feed.read_text().splitlines()) == 10

    indexed = scrapy(tmp_path, "index", "--input", str(feed), "--index", "idx")
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 10 documents into idx (10 in the index" in indexed.stdout

    searched = scrapy(
        tmp_path, "search", "--index", "idx", "--json", "--b", "0", "--feedback", "0",
        "--formula", "log(votes + 1)", EVERY_DOCUMENT,
    )  # fmt: skip
    assert searched.returncode == 0, searched.stderr
    assert "unknown field" not in searched.stderr
    hits = json.loads(searched.stdout)["hits"]
    assert titles_by_score(hits)[:8] == [title for title, _ in BY_VOTES]
    assert set(titles_by_score(hits)[8:]) == NO_BOOST
    # The ranking numbers are stored as numbers ("1.2k" -> 1200.0), not as the page's text.
    assert [hit["fields"]["votes"] for hit in hits[:8]] == [votes for _, votes in BY_VOTES]
    assert all(isinstance(hit["fields"]["answers"], float) for hit in hits)
    assert "ranking" not in hits[0]["fields"]

    # Without the formula the same query ties every document: the order above is the votes'.
    plain = json.loads(
        scrapy(tmp_path, "search", "--index", "idx", "--json", "--b", "0", "--feedback", "0", EVERY_DOCUMENT).stdout
    )
    assert len({round(hit["score"], 9) for hit in plain["hits"]}) == 1

    # The text output shows the numbers too.
    text = scrapy(
        tmp_path, "search", "--index", "idx", "--fields", "title,votes", "--formula", "log(votes + 1)", "python"
    )
    assert text.returncode == 0, text.stderr
    assert "3456.0" in text.stdout


def test_the_same_documents_at_two_urls_are_indexed_once(fixture_site, tmp_path):
    # The server ignores the query string: index.html?copy=1 is a second URL with the same five
    # questions (page-2 is reached from both, and fetched once).
    feed = tmp_path / "questions.jsonl"
    crawl_to_feed(fixture_site, feed, "questions/index.html", "questions/index.html?copy=1")
    records = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(records) == 15
    assert len({record["url"] for record in records}) == 3
    assert len({record["sha1"] for record in records}) == 10

    indexed = scrapy(tmp_path, "index", "--input", str(feed), "--index", "idx")
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 15 documents into idx (10 in the index" in indexed.stdout
    index = SearchIndex.open(tmp_path / "idx")
    assert index.id_field == "sha1"
    assert len(index) == 10
    assert set(index.doc_ids()) == {record["sha1"] for record in records}
    assert index.search("yield keyword", feedback=0).total == 1


@pytest_twisted.ensureDeferred
async def test_the_duplicate_content_pipeline_counts_template_duplicates(fixture_site, crawl_template):
    start = [fixture_site + "questions/index.html", fixture_site + "questions/index.html?copy=1"]
    result = await crawl_template(
        QUESTIONS,
        start,
        ITEM_PIPELINES={"adaptive_spider.crawl.duplicates.DuplicateContentPipeline": 300},
        ADAPTIVE_DROP_DUPLICATES=True,
    )
    assert result.stats["adaptive/documents"] == 15
    assert result.stats["adaptive/duplicates"] == 5
    assert result.stats["adaptive/duplicates_dropped"] == 5
    assert len(result.documents) == 10


@pytest_twisted.ensureDeferred
async def test_the_search_index_pipeline_takes_ranking_variables(fixture_site, crawl_template, tmp_path):
    index_dir = tmp_path / "crawl-index"
    start = [fixture_site + "questions/index.html", fixture_site + "questions/index.html?copy=1"]
    result = await crawl_template(
        QUESTIONS,
        start,
        ITEM_PIPELINES={"adaptive_spider.search.pipelines.SearchIndexPipeline": 800},
        ADAPTIVE_SEARCH_INDEX=str(index_dir),
        ADAPTIVE_SEARCH_COMMIT_EVERY=4,
    )
    assert result.stats["adaptive/search/items_indexed"] == 15
    assert result.stats["adaptive/search/documents"] == 10  # the mirrored five replaced, not added

    index = SearchIndex.open(index_dir)
    assert index.id_field == "sha1"
    assert {"votes", "answers"} <= index.numeric_fields
    assert not {"votes", "answers", "ranking", "sha1"} & set(index.fields)
    hits = index.search(EVERY_DOCUMENT, b=0, feedback=0, formula="log(votes + 1)", top=10).hits
    assert [hit.fields["title"] for hit in hits[:8]] == [title for title, _ in BY_VOTES]
    assert [hit.fields["votes"] for hit in hits[:8]] == [votes for _, votes in BY_VOTES]


def test_one_rule_for_both_paths():
    """search_document is what the pipeline and `scrapy index` both apply: ranking wins a name
    clash, the mapping is dropped, identity fields are never replaced."""
    record = {
        "url": "http://q.test/",
        "template": "questions",
        "title": "Yield",
        "votes": "1.2k",
        "ranking": {"votes": 1200.0, "score": None, "url": 1.0, "sha1": 2.0},
        "sha1": "ab" * 20,
    }
    assert search_document(record) == {
        "url": "http://q.test/",
        "template": "questions",
        "title": "Yield",
        "votes": 1200.0,
        "score": None,
        "sha1": "ab" * 20,
    }
    assert search_document({"id": 1, "ranking": {"id": 5.0}}, "id") == {"id": 1}
    assert search_document({"title": "CSV", "ranking": "high"}) == {"title": "CSV", "ranking": "high"}
    assert record["ranking"]["votes"] == 1200.0  # the record itself is left alone
