"""BM25 ranking against hand-computed scores, persistence, incremental adds, boosts."""

from __future__ import annotations

import pytest

from adaptive_spider.search import SearchError, SearchIndex
from tests.search.conftest import plain_analyzer

# Hand computation for the fruit corpus (N = 3, lengths 3, 2, 4, AVDL = 3),
# k = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)):
#   idf(apple)  = ln(1 + 2.5 / 1.5) = ln(2.66667) = 0.980829   (df 1)
#   idf(banana) = idf(cherry) = ln(1 + 1.5 / 2.5) = ln(1.6) = 0.470004   (df 2)
#   alpha(d1) = 1, alpha(d2) = 0.25 + 0.75 * 2/3 = 0.75, alpha(d3) = 0.25 + 0.75 * 4/3 = 1.25
#   "apple":  d1: tf 2 -> 2 * 2.2 / (1.2 + 2) = 1.375 -> 1.348640
#   "banana cherry":
#       d2: 2 * (2.2 / (0.9 + 1)) * 0.470004 = 2 * 1.157895 * 0.470004 = 1.088431
#       d3: cherry tf 3 -> 6.6 / (1.5 + 3) = 1.466667 -> 0.689339
#       d1: banana tf 1 -> 2.2 / (1.2 + 1) = 1 -> 0.470004
APPLE_D1 = 1.348640
BANANA_CHERRY = [("d2", 1.088431), ("d3", 0.689339), ("d1", 0.470004)]


def ranked(results):
    return [(hit.id, round(hit.score, 5)) for hit in results.hits]


def test_single_term_matches_hand_computed_bm25(fruit_index):
    results = fruit_index.search("apple")
    assert [hit.id for hit in results.hits] == ["d1"]
    assert results.hits[0].score == pytest.approx(APPLE_D1, abs=1e-4)


def test_query_is_a_union_of_postings_ranked_by_bm25(fruit_index):
    results = fruit_index.search("banana cherry")
    assert results.total == 3  # d1 has only "banana" and is still a result
    assert [hit.id for hit in results.hits] == [doc for doc, _ in BANANA_CHERRY]
    for hit, (_, expected) in zip(results.hits, BANANA_CHERRY):
        assert hit.score == pytest.approx(expected, abs=1e-4)


def test_b_zero_turns_off_length_normalisation(fruit_index):
    # d3: cherry tf 3, alpha 1 -> 6.6 / 4.2 = 1.571429; * 0.470004 = 0.738578
    results = fruit_index.search("cherry", b=0.0)
    assert dict(ranked(results))["d3"] == pytest.approx(0.738578, abs=1e-4)


def test_k_zero_scores_presence_only(fruit_index):
    results = fruit_index.search("cherry", k=0.0)
    assert {hit.id: hit.score for hit in results.hits} == pytest.approx({"d2": 0.470004, "d3": 0.470004}, abs=1e-4)


def test_field_weights_count_words_more_often():
    docs = [{"id": "a", "title": "rocket", "text": "engine"}, {"id": "b", "title": "engine", "text": "rocket"}]
    index = SearchIndex(fields=["title", "text"], field_weights="title=3", analyzer=plain_analyzer(), feedback_docs=0)
    index.add(docs)
    assert [hit.id for hit in index.search("rocket").hits] == ["a", "b"]
    assert [hit.id for hit in index.search("engine").hits] == ["b", "a"]


def test_word_weight_adds_exactly_its_value(fruit_index):
    plain = dict(ranked(fruit_index.search("banana cherry")))
    boosted = dict(ranked(fruit_index.search("banana cherry", word_weights="date=5")))
    assert boosted["d3"] == pytest.approx(plain["d3"] + 5, abs=1e-4)
    assert boosted["d1"] == pytest.approx(plain["d1"], abs=1e-4)
    assert fruit_index.search("banana cherry", word_weights={"date": 5}).hits[0].id == "d3"


def test_boosting_formula_uses_numeric_fields(posts):
    index = SearchIndex(fields=["title", "body"], feedback_docs=0)
    index.add(posts)
    assert index.numeric_fields == {"votes"}
    plain = [hit.id for hit in index.search("virtual environment").hits]
    assert plain[0] == "p5" or plain[0] == "p1"
    boosted = index.search("virtual environment", formula="log(votes + 1) * 10")
    assert boosted.hits[0].id == "p1"  # 12 votes beat 1 vote
    scores = {hit.id: hit.score for hit in boosted.hits}
    base = {hit.id: hit.score for hit in index.search("virtual environment").hits}
    assert scores["p5"] == pytest.approx(base["p5"] + 10 * 0.693147, abs=1e-3)


def test_bad_search_input_is_a_clear_error(fruit_index):
    with pytest.raises(SearchError, match="empty query"):
        fruit_index.search("   ")
    with pytest.raises(SearchError, match="unknown field 'votes'"):
        fruit_index.search("apple", formula="votes * 2")
    with pytest.raises(SearchError, match="formula"):
        fruit_index.search("apple", formula="__import__('os')")
    with pytest.raises(SearchError, match="b must be"):
        fruit_index.search("apple", b=2)
    with pytest.raises(SearchError, match="unknown field 'headline'"):
        SearchIndex(fields=["title"], field_weights="headline=2")


def test_missing_id_field_is_reported():
    index = SearchIndex(fields=["text"], id_field="url")
    with pytest.raises(SearchError, match="no 'url' id field"):
        index.add([{"text": "orphan"}])


def test_open_missing_index_is_a_clear_error(tmp_path):
    with pytest.raises(SearchError, match="no index at"):
        SearchIndex.open(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SearchError, match="no index at"):
        SearchIndex.open(tmp_path / "empty")


def test_persisted_index_ranks_like_the_in_memory_one(tmp_path, fruit_docs, fruit_index):
    stored = SearchIndex.create(tmp_path / "idx", fields=["text"], analyzer=plain_analyzer(), b=0.75, feedback_docs=0)
    stored.add(fruit_docs)
    stored.optimize()
    stored.close()
    reopened = SearchIndex.open(tmp_path / "idx")
    assert ranked(reopened.search("banana cherry")) == ranked(fruit_index.search("banana cherry"))
    assert reopened.search("apple").hits[0].fields == {"id": "d1", "text": "apple banana apple"}
    assert reopened.analyzer.get_params() == plain_analyzer().get_params()


def test_incremental_adds_across_commits_and_reopen(tmp_path, fruit_docs):
    path = tmp_path / "idx"
    index = SearchIndex.create(path, fields=["text"], analyzer=plain_analyzer(), b=0.75, feedback_docs=0)
    index.add(fruit_docs[:2])
    index.commit()
    assert [hit.id for hit in index.search("cherry").hits] == ["d2"]
    index.add(fruit_docs[2:])
    index.close()  # second segment
    again = SearchIndex.open(path)
    assert len(again) == 3
    merged = again.search("banana cherry")
    assert [hit.id for hit in merged.hits] == ["d2", "d3", "d1"]
    for hit, (_, expected) in zip(merged.hits, BANANA_CHERRY):
        assert hit.score == pytest.approx(expected, abs=1e-4)
    again.add([{"id": "d4", "text": "elderberry apple"}])
    again.close()
    final = SearchIndex.open(path)
    assert {hit.id for hit in final.search("apple elderberry").hits} == {"d1", "d4"}


def test_re_adding_an_id_replaces_the_document(tmp_path, fruit_docs):
    path = tmp_path / "idx"
    index = SearchIndex.create(path, fields=["text"], analyzer=plain_analyzer(), b=0.75, feedback_docs=0)
    index.add(fruit_docs)
    index.close()
    index = SearchIndex.open(path)
    index.add([{"id": "d1", "text": "fig"}])
    assert [hit.id for hit in index.search("apple fig").hits] == ["d1"]
    assert index.search("apple").total == 0
    index.close()
    reopened = SearchIndex.open(path)
    assert len(reopened) == 3
    assert reopened.search("apple").total == 0
    assert reopened.search("fig").hits[0].fields["text"] == "fig"


def test_an_id_added_twice_before_a_commit_is_one_document_after_reopening(tmp_path, fruit_docs):
    # Both copies are pending when the second replaces the first; the file must still
    # hold a row per document number, or the reopened index misaligns its arrays.
    path = tmp_path / "idx"
    index = SearchIndex.create(path, fields=["text"], analyzer=plain_analyzer(), feedback_docs=0)
    index.add([*fruit_docs, {"id": "d1", "text": "fig apple"}, {"id": "d5", "text": "grape"}])
    index.optimize()
    index.close()
    reopened = SearchIndex.open(path)
    assert len(reopened) == 4
    assert [hit.id for hit in reopened.search("apple").hits] == ["d1"]
    assert reopened.search("apple").hits[0].fields["text"] == "fig apple"
    assert [hit.id for hit in reopened.search("grape").hits] == ["d5"]
    assert reopened.search("banana").total == 1


def test_feedback_adds_terms_from_the_top_documents(posts):
    index = SearchIndex(fields=["title", "body"], feedback_docs=2, feedback_terms=5)
    index.add(posts)
    results = index.search("virtualenv")
    assert results.expansion  # expansion terms come from the first pass
    assert "virtualenv" in results.expansion
    plain = index.search("virtualenv", feedback=0)
    assert plain.expansion == []
    assert results.total >= plain.total
