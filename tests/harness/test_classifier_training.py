"""The page classifier's training sets (``benchmarks.classifier``): a topic with few relevant
pages still gets one, with half of its pages kept unseen, and one too small is named."""

from __future__ import annotations

import random

import pytest

from benchmarks.classifier import draw_training

IRRELEVANT = {f"http://site.test/other/{n}.html" for n in range(50)}


def relevant_pages(count: int) -> set[str]:
    return {f"http://site.test/topic/{n}.html" for n in range(count)}


def test_a_topic_with_many_relevant_pages_gives_the_number_asked_for():
    relevant = relevant_pages(30)
    positives, negatives = draw_training("t", relevant, IRRELEVANT, 10, 12, random.Random(0))
    assert len(positives) == 10 and set(positives) <= relevant
    assert len(negatives) == 12 and set(negatives) <= IRRELEVANT
    assert draw_training("t", relevant, IRRELEVANT, 10, 12, random.Random(0)) == (positives, negatives)  # seeded


def test_a_topic_with_few_relevant_pages_trains_on_half_and_keeps_the_rest_unseen(capsys):
    positives, _ = draw_training("scrapy-items", relevant_pages(7), IRRELEVANT, 10, 10, random.Random(0))
    assert len(positives) == 3
    assert "scrapy-items: 7 relevant pages; training on 3, the other half unseen" in capsys.readouterr().out


def test_a_topic_with_one_relevant_page_is_named_as_too_small():
    with pytest.raises(SystemExit, match="tiny: 1 relevant page"):
        draw_training("tiny", relevant_pages(1), IRRELEVANT, 10, 10, random.Random(0))
