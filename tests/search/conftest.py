"""Shared fixtures for the search tests: small corpora written by hand."""

from __future__ import annotations

import json

import pytest

from adaptive_spider.search import Analyzer, SearchIndex


def plain_analyzer() -> Analyzer:
    """No stop words, no small-word threshold, no stemming: tokens as written."""
    return Analyzer(stop_words="none", min_length=0, stemmer=None)


@pytest.fixture
def fruit_docs():
    return [
        {"id": "d1", "text": "apple banana apple"},
        {"id": "d2", "text": "banana cherry"},
        {"id": "d3", "text": "cherry cherry cherry date"},
    ]


@pytest.fixture
def fruit_index(fruit_docs):
    index = SearchIndex(fields=["text"], analyzer=plain_analyzer(), k=1.2, b=0.75, feedback_docs=0)
    index.add(fruit_docs)
    return index


POSTS = [
    {
        "id": "p1",
        "title": "Set up a virtual environment with virtualenv",
        "body": "Create an isolated Python environment using virtualenv or venv.",
        "votes": 12,
    },
    {
        "id": "p2",
        "title": "Import pandas library fails",
        "body": "ImportError when importing the pandas library in Jupyter.",
        "votes": 3,
    },
    {
        "id": "p3",
        "title": "pip install does not work behind a proxy",
        "body": "pip install times out; configure the proxy for pip.",
        "votes": 40,
    },
    {
        "id": "p4",
        "title": "For loop in Python over a dictionary",
        "body": "Iterate over keys and values of a dict with a for loop.",
        "votes": 0,
    },
    {
        "id": "p5",
        "title": "Virtual environment not activated in VS Code",
        "body": "VS Code does not pick the virtual environment interpreter.",
        "votes": 1,
    },
    {
        "id": "p6",
        "title": "SQL database access from a Jupyter notebook",
        "body": "Query an SQL database with pandas inside a notebook.",
        "votes": 7,
    },
]


@pytest.fixture
def posts():
    return [dict(post) for post in POSTS]


@pytest.fixture
def posts_jsonl(tmp_path, posts):
    path = tmp_path / "posts.jsonl"
    path.write_text("".join(json.dumps(post) + "\n" for post in posts), encoding="utf-8")
    return path
