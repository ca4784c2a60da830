"""The project's held-out topic files load, the big web's labels hold under their rules, and
the short-query files ask the same topics as the sentences they shorten.

The labels of ``topics-bigweb-heldout.json`` and ``topics-bigweb-heldout-second.json`` were
materialised from their rules over the big web's link graph (minutes, and 3.5 GB of packages);
this checks what needs neither: every
listed page matches its topic's rule, none twice, and each topic has its labels. A rule
narrowed without regenerating the labels fails here; a widened one fails the harness'
``--labels-from rules`` check, which compares the rules' pages with this file (minutes).
"""

import json
from pathlib import Path

import pytest

from benchmarks.harness.topics import load_topics
from benchmarks.webbench.webs import spec_folder

TOPICS = Path(__file__).resolve().parents[2] / "benchmarks" / "topics"


BIG_WEB_SETS = [
    ("topics-bigweb-heldout.json", "labels-bigweb-heldout.json"),
    ("topics-bigweb-heldout-second.json", "labels-bigweb-heldout-second.json"),
    ("topics-bigweb-short-heldout.json", "labels-bigweb-short-heldout.json"),
]

#: Each short-query file (2026-12-01) and the files of the sentences it shortens: the project's
#: own (in benchmarks/topics), or the spec's dev topics ("small:" or "big:", in ../shared).
SHORT_QUERIES = {
    "short-heldout.json": ["heldout.json", "heldout-second.json"],
    "short-dev.json": ["small:topics-dev.json"],
    "topics-bigweb-short-heldout.json": ["topics-bigweb-heldout.json", "topics-bigweb-heldout-second.json"],
    "topics-bigweb-short-dev.json": ["big:topics-dev.json"],
}


def _sentence_file(name: str) -> Path:
    web, colon, file_name = name.partition(":")
    if not colon:
        return TOPICS / name
    folder = spec_folder(web)
    if folder is None:
        pytest.skip(f"the {web} web's spec folder (../shared) is not beside the checkout")
    return folder / file_name


@pytest.mark.parametrize(
    "name", ["heldout.json", "heldout-second.json", *(topics for topics, _ in BIG_WEB_SETS), *SHORT_QUERIES]
)
def test_held_out_topics_load_with_a_query_and_the_hub_as_seed(name):
    topics = load_topics(TOPICS / name)
    assert len(topics) >= 3
    assert len({topic.id for topic in topics}) == len(topics)
    for topic in topics:
        assert topic.query and topic.seeds == ("http://hub.test/",)


@pytest.mark.parametrize(("topics_name", "labels_name"), BIG_WEB_SETS)
def test_big_web_held_out_labels_match_their_rules(topics_name, labels_name):
    topics = load_topics(TOPICS / topics_name)
    labels = json.loads((TOPICS / labels_name).read_text())
    assert {topic.id for topic in topics} == {key for key in labels if not key.startswith("_")}
    for topic in topics:
        urls = labels[topic.id]
        assert urls and len(urls) == len(set(urls)), topic.id
        assert not topic.label.needs_title, topic.id  # labels checked without fetching a page
        unmatched = [url for url in urls if not topic.label.matches(url, None)]
        assert not unmatched, (topic.id, unmatched[:3])
        hosts = {url.split("/")[2] for url in urls}
        assert len(hosts) >= 6, (topic.id, hosts)  # across hosts, as the big web's topics are (6 to 16)


@pytest.mark.parametrize(("short_name", "sentence_names"), SHORT_QUERIES.items())
def test_a_short_query_file_asks_the_same_topics_in_fewer_words(short_name, sentence_names):
    """The same ids, seeds and label rules as the sentences, no keywords, a query of at most
    four words: a figure of the short queries compares the query's length and nothing else."""
    short = {topic.id: topic for topic in load_topics(TOPICS / short_name)}
    sentences = {topic.id: topic for name in sentence_names for topic in load_topics(_sentence_file(name))}
    assert short.keys() == sentences.keys()
    for topic_id, topic in short.items():
        sentence = sentences[topic_id]
        assert (topic.seeds, topic.label) == (sentence.seeds, sentence.label), topic_id
        assert topic.keywords == ()
        assert len(topic.query.split()) <= 4 < len(sentence.query.split()), (topic.query, sentence.query)
