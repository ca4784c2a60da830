"""The labels the harness computes from the dev topics' rules are the spec's labels-dev.json.

Needs Debian's documentation packages (docs/webbench.md) and ../shared/webbench; skips without them.
"""

import json

import pytest

from benchmarks.harness.cli import shared_webbench
from benchmarks.harness.topics import Labeler, load_topics
from benchmarks.webbench.web import OfflineWeb

SHARED = shared_webbench()
MISSING = OfflineWeb.missing_packages()
pytestmark = [
    pytest.mark.skipif(bool(MISSING), reason=f"Debian documentation packages not installed: {', '.join(MISSING)}"),
    pytest.mark.skipif(SHARED is None, reason="../shared/webbench not found"),
]


def test_labels_from_rules_equal_labels_dev():
    expected = json.loads((SHARED / "labels-dev.json").read_text())
    labeler = Labeler(OfflineWeb())
    topics = load_topics(SHARED / "topics-dev.json")
    assert [t.id for t in topics] == list(expected)
    for topic in topics:
        relevant = labeler.relevant(topic)
        assert len(relevant) == len(set(relevant))
        assert set(relevant) == set(expected[topic.id]), topic.id
