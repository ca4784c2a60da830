"""q-gram count filter, prefix edit distance, corrections and suggestions."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from adaptive_spider.search import QGramIndex, SearchIndex, SynonymDictionary, prefix_edit_distance


def reference_distances(x: str, y: str) -> tuple[int, int]:
    """Textbook dynamic programme: (min over prefixes of y of ED(x, prefix), ED(x, y))."""
    previous = list(range(len(x) + 1))
    last_row = [len(x)]
    for j, char_y in enumerate(y, 1):
        current = [j] + [0] * len(x)
        for i, char_x in enumerate(x, 1):
            current[i] = min(previous[i] + 1, current[i - 1] + 1, previous[i - 1] + (char_x != char_y))
        previous = current
        last_row.append(current[-1])
    return min(last_row), last_row[-1]


@pytest.mark.parametrize(
    ("x", "y", "ped"),
    [
        ("frei", "freiburg", 0),
        ("freib", "frei", 1),
        ("invironment", "environment", 1),
        ("uniwer", "university", 1),
        ("uniberty", "university", 3),
        ("", "abc", 0),
        ("abc", "", 3),
        ("bread", "breakfast", 1),
    ],
)
def test_prefix_edit_distance_examples(x, y, ped):
    assert prefix_edit_distance(x, y)[0] == ped


def test_prefix_edit_distance_matches_the_dynamic_programme():
    rng = random.Random(5)
    for _ in range(3000):
        x = "".join(rng.choice("abcd") for _ in range(rng.randint(1, 9)))
        y = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 12)))
        assert prefix_edit_distance(x, y) == reference_distances(x, y), (x, y)


def test_qgrams_are_padded_on_the_left_only():
    assert QGramIndex(3).qgrams("frei") == ["$$f", "$fr", "fre", "rei"]


def test_count_filter_never_loses_a_word_within_the_distance():
    rng = random.Random(7)
    vocabulary = {"".join(rng.choice("abcde") for _ in range(rng.randint(3, 9))): 1 for _ in range(400)}
    index = QGramIndex(3).fit(vocabulary)
    for _ in range(80):
        x = "".join(rng.choice("abcde") for _ in range(rng.randint(4, 8)))
        for delta in (1, 2):
            within = {y for y in vocabulary if reference_distances(x, y)[0] <= delta}
            candidates = {index.words_[i] for i in index.candidates(x, delta)}
            assert within <= candidates
            assert {m.word for m in index.find(x, delta)} == within
            bound = len(x) - 3 * delta
            if bound > 0:  # the filter really filters
                assert len(candidates) < len(vocabulary)


def test_completions_rank_by_distance_then_frequency():
    index = QGramIndex(3).fit({"freiburg": 10, "freight": 50, "friday": 80, "fresh": 5})
    assert [m.word for m in index.complete("frei", delta=0)] == ["freight", "freiburg"]
    ranked = index.complete("freib", delta=1)
    assert [m.word for m in ranked][:1] == ["freiburg"]
    assert all(a.ped <= b.ped for a, b in pairwise(ranked))


@pytest.fixture
def post_index(posts):
    index = SearchIndex(fields=["title", "body"], feedback_docs=0)
    index.add(posts)
    return index


def test_unknown_words_are_corrected(post_index):
    results = post_index.search("virtual invironment by virtualinv")
    assert results.corrections == {"invironment": "environment", "virtualinv": "virtualenv"}
    assert results.hits[0].id in {"p1", "p5"}


def test_known_words_are_never_rewritten(post_index):
    # "proxy" is indexed; "proxi" would be one edit away from it but "proxy" itself stays.
    results = post_index.search("proxy loop")
    assert results.corrections == {}
    assert post_index.search("pandas").corrections == {}


def test_corrections_can_be_turned_off(post_index):
    results = post_index.search("invironment", fuzzy=False)
    assert results.total == 0 and results.corrections == {}


def test_suggestions_complete_the_last_word(post_index):
    assert post_index.suggest("virtual envi")[0] == "virtual environment"
    assert "import pandas" in post_index.suggest("import pand")
    assert post_index.suggest("") == []


def test_synonyms_add_suggestions(post_index):
    synonyms = SynonymDictionary([["venv", "virtual environment"], ["USA", "United States"]])
    assert "virtual environment" in post_index.suggest("venv", synonyms=synonyms)
    assert "United States" in post_index.suggest("usa", synonyms=synonyms)


def test_synonym_file_is_read(tmp_path):
    path = tmp_path / "synonyms.txt"
    path.write_text("# groups\nUSA, United States, U.S.A.\n\nnyc, new york city\n")
    synonyms = SynonymDictionary.load(path)
    assert synonyms.lookup("usa") == ["United States", "U.S.A."]
    assert synonyms.lookup("New York City") == ["nyc"]
