"""The project's held-out topic files load, and the big web's labels hold under their rules.

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

TOPICS = Path(__file__).resolve().parents[2] / "benchmarks" / "topics"


BIG_WEB_SETS = [
    ("topics-bigweb-heldout.json", "labels-bigweb-heldout.json"),
    ("topics-bigweb-heldout-second.json", "labels-bigweb-heldout-second.json"),
]


@pytest.mark.parametrize(
    "name", ["heldout.json", "heldout-second.json", *(topics for topics, _ in BIG_WEB_SETS)]
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
