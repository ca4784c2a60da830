"""Sufficiency metrics on hand-computed cases, the incremental estimator, and
the offline recomputation of a saved knowledge base."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.settings.config import AdaptiveConfig
from adaptive_spider.sufficiency.estimator import BEST_SHARE, SufficiencyEstimator
from adaptive_spider.sufficiency.knowledge import estimator_from_config
from adaptive_spider.sufficiency.metrics import (
    combine,
    consistency,
    coverage,
    domain_coverage,
    inverse_document_frequency,
    redundancy,
    saturation,
    term_coverage,
    term_importance,
    term_saturation,
    trimmed_mean,
)
from adaptive_spider.sufficiency.offline import evaluate_knowledge_base, read_knowledge_base
from adaptive_spider.sufficiency.pages import KnowledgePage, is_page_item
from adaptive_spider.sufficiency.simhash import hamming, simhash, word_hashes
from adaptive_spider.sufficiency.stopping import StopRule

WORDS = "the river boat carried grain along quiet banks while herons watched from reeds near old mills".split()


def text(n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, n))


# -- pure functions, by hand -----------------------------------------------------------
def test_term_coverage_is_log_df_normalised_by_the_evidence_target():
    covered = term_coverage(np.array([0.0, 1.0, 3.0, 7.0]), evidence_target=3.0)
    assert covered == pytest.approx([0.0, math.log(2) / math.log(4), 1.0, 1.0])


def test_coverage_weighs_terms_by_importance():
    importance = term_importance(np.array([1.0, 1.0]), np.array([3.0, 1.0]))
    assert importance == pytest.approx([0.75, 0.25])
    assert coverage(importance, np.array([1.0, 0.0])) == pytest.approx(0.75)


def test_idf_matches_the_relevance_scorers_formula():
    assert inverse_document_frequency(3, np.array([0.0, 3.0])) == pytest.approx(
        [math.log(1 + 4 / 0.5), math.log(1 + 4 / 3.5)]
    )


def test_term_saturation_weighs_fields():
    counts = np.array([[1, 0], [0, 0], [0, 2], [0, 0]], dtype=float)  # title, headings, body, url
    weights = np.array([4.0, 2.0, 1.0, 2.0])
    assert term_saturation(counts, weights, k1=1.0) == pytest.approx([4 / 5, 2 / 3])


@pytest.mark.parametrize(
    ("answers", "expected"),
    [([0.5, 0.5, 0.5], 1.0), ([0.0, 1.0], 0.0), ([0.2, 0.4], 1 - 4 * 0.01), ([0.7], 0.0)],
)
def test_consistency_is_one_minus_four_times_the_variance(answers, expected):
    assert consistency(np.array(answers)) == pytest.approx(expected)


def test_trimmed_mean_drops_the_largest_value_only():
    assert trimmed_mean([9.0, 0.0, 0.0, 0.0]) == 0.0
    assert trimmed_mean([1.0, 2.0, 3.0]) == pytest.approx(1.5)
    assert trimmed_mean([]) == 0.0


def test_saturation_redundancy_domain_coverage():
    assert saturation(0.25, 1.0) == pytest.approx(0.75)
    assert saturation(0.0, 0.0) == 0.0  # nothing informative yet: not saturated
    assert redundancy(0.5, 2.0) == pytest.approx(0.25) and redundancy(0.0, 0.0) == 0.0
    assert domain_coverage(0.6, 0.8) == pytest.approx(0.75) and domain_coverage(0.9, 0.8) == 1.0


def test_combinations_of_is():
    parts = {"coverage": 0.9, "consistency": 0.6, "redundancy": 0.2, "domain_coverage": 0.5}
    assert combine(parts) == pytest.approx(0.6 * 0.5)  # min(0.9, 0.6, 0.8) x 0.5
    assert combine(parts, "mean") == pytest.approx((0.9 + 0.6 + 0.8) / 3 * 0.5)
    assert combine(parts, "geometric") == pytest.approx((0.9 * 0.6 * 0.8) ** (1 / 3) * 0.5)
    weights = {"consistency": 0.0, "domain_coverage": 0.0}
    assert combine(parts, "min", weights) == pytest.approx(0.8)
    assert combine(parts, "mean", {"coverage": 3.0}) == pytest.approx((2.7 + 0.6 + 0.8) / 5 * 0.5)
    with pytest.raises(ValueError, match="unknown combination"):
        combine(parts, "max")


def test_simhash_sees_near_duplicates_and_not_different_texts():
    base = " ".join(f"w{i}" for i in range(300))
    edited = base.replace("w7 ", "changed ")
    other = " ".join(f"v{i}" for i in range(300))
    assert hamming(simhash(base), simhash(edited)) <= 3
    assert hamming(simhash(base), simhash(other)) > 10
    assert simhash(base) == simhash(base.upper())  # case-insensitive, deterministic


def test_simhash_words_are_the_ascii_letter_and_digit_runs_of_the_lowercased_text():
    # Non-ASCII letters separate words; the Kelvin sign lowercases to an ASCII "k".
    text = "Straße Ünïcode_x9 \u212aELVIN İstanbul 日本語abc a-b\x00c 42"
    expected = re.findall("[a-z0-9]+", text.lower())
    assert "kelvin" in expected and "stra" in expected
    assert word_hashes(text).tolist() == word_hashes(" ".join(expected)).tolist()  # the same words, in order
    # The fingerprint reads those words and nothing else: the words alone give the same one.
    assert simhash(text) == simhash(" ".join(expected)) != simhash(" ".join(reversed(expected)))
    hashes = word_hashes("river boat river")
    assert hashes[0] == hashes[2] != hashes[1]  # a word hashes alike wherever it stands


def test_page_items_are_recognised():
    assert is_page_item({"url": "http://a.test/", "relevance": 0.4})
    assert not is_page_item({"url": "http://a.test/", "relevance": 0.4, "template": "products"})
    assert not is_page_item({"url": "http://a.test/"})
    assert not is_page_item({"url": "http://a.test/", "relevance": "high"})
    assert not is_page_item({"name": "something else"})


# -- the estimator -------------------------------------------------------------------------
def page(url, title="", body="", relevance=0.0, headings=()):
    return {"url": url, "title": title, "headings": list(headings), "text": body, "relevance": relevance}


def test_one_page_evidence_by_hand():
    terms = QueryTerms("alpha beta")
    weights = {"title": 4.0, "headings": 2.0, "body": 1.0, "url": 2.0}
    estimator = SufficiencyEstimator(terms, evidence_target=2.0, n_subsets=8, k1=1.2, field_weights=weights)
    estimator.update(page("http://x.test/p", title="alpha", body="beta beta " + text(20), relevance=0.5))
    e_alpha = 0.5 * 4 / (1.2 + 4)  # title weight 4
    e_beta = 0.5 * 2 / (1.2 + 2)  # body weight 1, twice
    assert estimator.soft_df == pytest.approx([e_alpha, e_beta])
    metrics = estimator.metrics()
    # Both terms occur on the one page: equal idf, equal importance.
    expected = 0.5 * (math.log1p(e_alpha) + math.log1p(e_beta)) / math.log(3)
    assert metrics.coverage == pytest.approx(expected)
    assert metrics.domain_coverage == pytest.approx(0.5 / 0.8)
    assert metrics.pages == 1 and metrics.relevant_pages == 1 and metrics.redundancy == 0.0


def test_unrelated_mentions_are_weak_evidence():
    terms = QueryTerms("alpha beta")
    estimator = SufficiencyEstimator(terms)
    for i in range(20):  # pages that mention the words but are not about the query
        estimator.update(page(f"http://x.test/{i}", body=f"alpha beta {text(200, i)}", relevance=0.02))
    weak = estimator.metrics()
    estimator.update(page("http://x.test/answer", title="alpha beta", body="alpha beta " * 10, relevance=0.95))
    strong = estimator.metrics()
    assert weak.coverage < 0.2 and weak.sufficiency < 0.01
    assert strong.coverage > 0.6 and strong.domain_coverage == 1.0


def test_corroborated_evidence_is_consistent_and_a_single_source_is_not():
    terms = QueryTerms("alpha beta")
    single = SufficiencyEstimator(terms, seed=1)
    corroborated = SufficiencyEstimator(terms, seed=1)
    filler = [page(f"http://x.test/f{i}", body=text(100, i), relevance=0.0) for i in range(10)]
    answers = [
        page(f"http://x.test/a{i}", title="alpha beta", body=f"alpha beta {text(80, 50 + i)}", relevance=0.9)
        for i in range(4)
    ]
    for item in filler + answers[:1]:
        single.update(item)
    for item in filler + answers:
        corroborated.update(item)
    assert single.metrics().consistency < 0.7
    assert corroborated.metrics().consistency > 0.9
    assert corroborated.metrics().sufficiency > single.metrics().sufficiency


def test_duplicates_add_no_evidence_and_count_as_redundancy():
    terms = QueryTerms("alpha")
    estimator = SufficiencyEstimator(terms)
    body = "alpha " + text(300, 3)
    estimator.update(page("http://x.test/a", body=body, relevance=0.6))
    df = estimator.soft_df.copy()
    estimator.update(page("http://x.test/a?ref=1", body=body, relevance=0.6))  # exact copy
    estimator.update(page("http://x.test/b", body=body.replace("river", "stream", 1), relevance=0.6))  # near copy
    assert estimator.soft_df == pytest.approx(df)
    assert estimator.metrics().redundancy == pytest.approx(1.2 / 1.8)


def test_saturation_is_not_fooled_by_one_large_first_page():
    terms = QueryTerms("alpha beta gamma")
    estimator = SufficiencyEstimator(terms, window=5)
    estimator.update(
        page("http://x.test/index", title="alpha beta gamma", body="alpha beta gamma " * 50, relevance=0.9)
    )
    for i in range(8):
        estimator.update(page(f"http://x.test/n{i}", body=text(50, i), relevance=0.0))
    assert estimator.metrics().saturation == 0.0  # one page never makes the peak
    steady = SufficiencyEstimator(terms, window=5)
    for i in range(8):  # informative pages, then nothing new
        steady.update(page(f"http://x.test/s{i}", title="alpha beta gamma", body=f"alpha {text(60, i)}", relevance=0.5))
    for i in range(6):
        steady.update(page(f"http://x.test/z{i}", body=text(50, 100 + i), relevance=0.0))
    assert steady.metrics().saturation == 1.0


def test_bootstrap_work_per_update_does_not_grow_with_the_knowledge_base():
    terms = QueryTerms("alpha beta")
    estimator = SufficiencyEstimator(terms, n_subsets=16)
    for i in range(200):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=0.3))
    # The subsets are summarised by a fixed-size table, not by page lists.
    assert estimator.subset_best.shape == (16, 2)
    assert len(estimator.history) == 200


def test_state_dict_round_trip_continues_identically():
    terms = QueryTerms("alpha beta")
    pages = [
        page(
            f"http://x.test/{i}", title="alpha" if i % 3 == 0 else "", body=f"beta {text(40, i)}", relevance=(i % 5) / 5
        )
        for i in range(30)
    ]
    straight = SufficiencyEstimator(terms, seed=7)
    for item in pages:
        straight.update(item)
    first = SufficiencyEstimator(terms, seed=7)
    for item in pages[:12]:
        first.update(item)
    state = json.loads(
        json.dumps(
            {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in first.state_dict().items() if k != "history"}
        )
    )
    state["history"] = first.state_dict()["history"]
    resumed = SufficiencyEstimator(terms, seed=7)
    resumed.load_state_dict(state)
    for item in pages[12:]:
        resumed.update(item)
    assert resumed.metrics() == straight.metrics()
    assert list(resumed.history) == list(straight.history)
    assert resumed.best_changed_at == straight.best_changed_at > 12
    with pytest.raises(ValueError, match="another query"):
        SufficiencyEstimator(QueryTerms("gamma")).load_state_dict(state)


def test_the_best_pages_change_when_a_page_near_the_best_joins_them():
    estimator = SufficiencyEstimator(QueryTerms("alpha"), best_pages=4)
    changes = []
    for i, relevance in enumerate([0.0, 0.4, 0.8, 0.1, 0.6, 0.2, 0.0, 0.3, 0.9, 0.5, 0.65]):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=relevance))
        changes.append(estimator.best_changed_at)
    # Page 1 (nothing relevant) leaves them as they were; 2, 3 and 5 join near the best
    # (0.7 of it or more); 4, 6 and 8 join far below it (the long tail of any site); 9 is a
    # new best; 10 joins below 0.7 of it, 11 above.
    assert BEST_SHARE == 0.7
    assert changes == [0, 2, 3, 3, 5, 5, 5, 5, 9, 9, 11]
    assert [round(r, 2) for r, _ in estimator.best_pages] == [0.9, 0.8, 0.65, 0.6]


def test_the_best_pages_settle_after_ratio_times_the_pages_it_took_and_a_minimum():
    estimator = SufficiencyEstimator(QueryTerms("alpha"))
    estimator.update(page("http://x.test/0", body="alpha " + text(30), relevance=0.0))
    assert estimator.best_changed_at == 0 and estimator.best_settled(1.0, 1)  # nothing found: nothing to wait for
    for i in range(1, 40):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=0.9 if i == 19 else 0.0))
    assert estimator.best_changed_at == 20 and estimator.n_pages == 40
    assert estimator.best_settled(1.0, 20) and estimator.best_settled(0.0, 100)  # ratio 0: no wait at all
    assert not estimator.best_settled(1.01, 0)  # 20 pages since, 20.2 needed
    assert not estimator.best_settled(0.5, 21)  # the minimum holds too


def stop_rule(**settings):
    config = AdaptiveConfig.from_settings({"ADAPTIVE_QUERY": "alpha", **settings})
    estimator = estimator_from_config(config)
    return StopRule(config, estimator), estimator


def test_the_stop_rule_holds_a_criterion_until_the_best_pages_settle():
    rule, estimator = stop_rule(
        ADAPTIVE_STOP_THRESHOLD=0.0,
        ADAPTIVE_STOP_MIN_PAGES=5,
        ADAPTIVE_STOP_CRITERIA="sufficient",
        ADAPTIVE_STOP_HARVEST_WINDOW=0,  # the best pages' wait alone (the pace's: below)
    )
    answers = []
    for i in range(10):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=0.9 if i == 2 else 0.0))
        answers.append(rule.after_page())
        if i == 5:
            assert rule.held == "sufficient" and rule.settled_page() == 8  # found at page 3: 3 + max(5, 3)
    # Not before ADAPTIVE_STOP_MIN_PAGES (5); IS >= 0 holds from then on, but the best page came
    # at page 3: held until 3 + max(5, 1 x 3) pages.
    assert answers == [None] * 7 + ["sufficient"] * 3
    eager, estimator = stop_rule(
        ADAPTIVE_STOP_THRESHOLD=0.0,
        ADAPTIVE_STOP_MIN_PAGES=5,
        ADAPTIVE_STOP_CRITERIA="sufficient",
        ADAPTIVE_STOP_SETTLE=0,
        ADAPTIVE_STOP_HARVEST_WINDOW=0,
    )
    for i in range(5):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=0.9 if i == 2 else 0.0))
        answer = eager.after_page()
    assert answer == "sufficient" and eager.held is None


def near_best_run(estimator, relevances, drop=0.2):
    """Feed pages of these relevances; harvest_settled(drop) after each."""
    settled = []
    for relevance in relevances:
        i = estimator.n_pages  # a page of its own (the same body twice is a repeat, never near the best)
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=relevance))
        settled.append(estimator.harvest_settled(drop))
    return settled


def test_the_pace_of_pages_near_the_best_holds_the_stop_until_it_drops():
    estimator = SufficiencyEstimator(QueryTerms("alpha"), harvest_window=4)
    # Pages 1-4 near the best (0.7 of 0.9 or more); 5-6 too; then only pages far below it.
    settled = near_best_run(estimator, [0.9, 0.8, 0.7, 0.65, 0.9, 0.7, 0.2, 0.3, 0.1, 0.0, 0.2])
    assert list(estimator.near_best) == [0, 0, 0, 0] and estimator.near_best_peak == 4
    # Not before the window is full, nor while a window holds more than 0.2 x 4 of them:
    # the last near page (6) leaves the window after page 10.
    assert settled == [False] * 9 + [True, True]
    # Near the best is near the best when it came: 0.65 after a best of 0.9 counts, 0.6 does not.
    estimator = SufficiencyEstimator(QueryTerms("alpha"), harvest_window=2)
    near_best_run(estimator, [0.9, 0.65, 0.6])
    assert list(estimator.near_best) == [1, 0]
    # A crawl that found nothing at the relevant threshold (0.5) has no pace to keep.
    estimator = SufficiencyEstimator(QueryTerms("alpha"), harvest_window=4)
    assert near_best_run(estimator, [0.3, 0.4, 0.45]) == [True] * 3
    assert near_best_run(estimator, [0.6]) == [False]  # now it has
    assert SufficiencyEstimator(QueryTerms("alpha"), harvest_window=0).harvest_settled(0.1)  # no window: no wait


def test_the_pace_survives_a_saved_state():
    terms = QueryTerms("alpha")
    estimator = SufficiencyEstimator(terms, harvest_window=4)
    near_best_run(estimator, [0.9, 0.8, 0.7, 0.1, 0.2])
    state = estimator.state_dict()
    resumed = SufficiencyEstimator(terms, harvest_window=4)
    resumed.load_state_dict(state)
    assert list(resumed.near_best) == [1, 1, 0, 0] and resumed.near_best_peak == 3
    # It goes on exactly as the crawl that was not interrupted: one near page left in the window
    # (more than 0.2 x 3), then none.
    assert near_best_run(resumed, [0.1, 0.1]) == near_best_run(estimator, [0.1, 0.1]) == [False, True]


def test_the_stop_rule_waits_for_the_pace_of_pages_near_the_best_to_drop():
    rule, estimator = stop_rule(
        ADAPTIVE_STOP_THRESHOLD=0.0,
        ADAPTIVE_STOP_MIN_PAGES=1,
        ADAPTIVE_STOP_CRITERIA="sufficient",
        ADAPTIVE_STOP_SETTLE=0,  # the pace's wait alone
        ADAPTIVE_STOP_HARVEST_WINDOW=3,
        ADAPTIVE_STOP_HARVEST_DROP=0.0,
    )
    answers = []
    for i, relevance in enumerate([0.9, 0.8, 0.1, 0.85, 0.1, 0.1, 0.1, 0.1]):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=relevance))
        answers.append(rule.after_page())
    # Held while any of the last 3 pages came near the best: page 4 (0.85) holds it to page 6.
    assert answers == [None] * 6 + ["sufficient"] * 2
    assert rule.held == "sufficient"


def test_the_plateau_counts_promising_pages_and_the_patience_consecutive_low_gains():
    rule, estimator = stop_rule(
        ADAPTIVE_STOP_CRITERIA="plateau",
        ADAPTIVE_STOP_PLATEAU_WINDOW=3,
        ADAPTIVE_STOP_MIN_PAGES=1,
        ADAPTIVE_STOP_SETTLE=0,
    )
    answers = []
    for i, promising in enumerate([True, False, True, False, False, True, True]):
        estimator.update(page(f"http://x.test/{i}", body=text(30, i), relevance=0.0))
        answers.append(rule.after_page(promising=promising))
    assert answers == [None] * 6 + ["plateau"]  # IS flat: the fourth promising page makes the window
    rule, estimator = stop_rule(
        ADAPTIVE_STOP_CRITERIA="no_promising_links", ADAPTIVE_STOP_PATIENCE=3, ADAPTIVE_STOP_MIN_PAGES=1,
        ADAPTIVE_STOP_SETTLE=0,
    )  # fmt: skip
    answers = []
    for i, low in enumerate([True, True, False, True, True, True]):
        estimator.update(page(f"http://x.test/{i}", body=text(30, i), relevance=0.0))
        answers.append(rule.after_page(low_gain=low))
    assert answers == [None] * 5 + ["no_promising_links"]


def test_a_saved_state_without_the_best_pages_change_loads_as_settled():
    terms = QueryTerms("alpha")
    estimator = SufficiencyEstimator(terms)
    for i in range(5):
        estimator.update(page(f"http://x.test/{i}", body=f"alpha {text(30, i)}", relevance=0.5 + i / 10))
    state = estimator.state_dict()
    assert state["best_changed_at"] == 5
    del state["best_changed_at"]  # saved by a release before it existed
    resumed = SufficiencyEstimator(terms)
    resumed.load_state_dict(state)
    assert resumed.best_changed_at == 0 and resumed.n_pages == 5


def test_offline_recomputation_skips_non_page_items(tmp_path):
    feed = tmp_path / "kb.jsonl"
    items = [
        page("http://x.test/1", title="alpha", body=f"alpha {text(30)}", relevance=0.7),
        {"template": "products", "url": "http://x.test/1", "relevance": 0.9, "title": "alpha alpha"},
        {"name": "not a page"},
        page("http://x.test/2", title="beta", body=f"beta {text(30, 2)}", relevance=0.6),
    ]
    feed.write_text("\n".join(json.dumps(item) for item in items) + "\n")
    estimator, trajectory = evaluate_knowledge_base(read_knowledge_base(feed), "alpha beta")
    live = SufficiencyEstimator(QueryTerms("alpha beta"))
    live.update(items[0])
    live.update(items[3])
    assert len(trajectory) == 2 and estimator.n_pages == 2
    assert estimator.metrics() == live.metrics()
    array_feed = tmp_path / "kb.json"
    array_feed.write_text(json.dumps(items))
    assert evaluate_knowledge_base(read_knowledge_base(array_feed), "alpha beta")[0].metrics() == live.metrics()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"url": "http://x.test/"}\nnot json\n')
    with pytest.raises(ValueError, match=r"broken\.jsonl:2"):
        list(read_knowledge_base(broken))


def test_knowledge_page_tolerates_odd_fields():
    page = KnowledgePage.from_item({"url": "http://x.test/", "headings": ["A", "B"], "relevance": float("nan")})
    assert page.fields.headings == "A B" and page.relevance == 0.0 and page.fields.body == ""
    assert KnowledgePage.from_item({"url": "u", "relevance": 7}).relevance == 1.0


def test_the_crawls_term_counts_are_the_estimators_own():
    """The sufficiency pipeline reuses the counts the relevance analysis made of a page
    (it takes every analysed page from the analysis): they must be exactly what the
    estimator would count itself."""
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from adaptive_spider.crawl.state import CrawlState
    from adaptive_spider.sufficiency.pages import field_counts

    crawler = get_crawler(Spider, {"ADAPTIVE_QUERY": "json encoding decoding", "ADAPTIVE_KEYWORDS": "serialize"})
    state = CrawlState.of(crawler)
    body = (
        b"<html><head><title>json - JSON encoder and decoder</title></head><body>"
        b"<h1>Encoding JSON</h1><h2>Decoding, basic usage</h2><p>Serialize obj to a JSON formatted str."
        b" Encoders and decoders; JSON decoding errors.</p><a href='/x'>more json</a></body></html>"
    )
    url = "http://docs.test/library/json.html"
    analysis = state.analyze(HtmlResponse(url, body=body, request=Request(url)))
    counts = analysis.counts
    expected = field_counts(state.terms, analysis.fields.title, " ".join(analysis.headings), analysis.fields.body, url)
    assert counts is not None and counts.sum() > 0
    assert (counts == expected).all()
