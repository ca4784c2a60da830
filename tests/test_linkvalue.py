"""Link value: the expected-gain formula on hand-computed cases and the lazy max-heap."""

from __future__ import annotations

import numpy as np
import pytest
from scrapy import Request

from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.sufficiency.estimator import SufficiencyEstimator
from adaptive_spider.sufficiency.linkvalues import (
    GAIN_KEY,
    LinkValues,
    domain_authority,
    expected_gain,
    link_novelty,
    link_relevance,
    preview_terms,
    structure_authority,
)


def test_preview_terms_come_from_anchor_and_url_words():
    terms = QueryTerms("json encoding decoding")
    assert preview_terms(terms, "JSON encoder and decoder", "http://d.test/library/json.html") == (0, 1, 2)
    assert preview_terms(terms, "Next", "http://d.test/library/codecs.html") == ()
    assert preview_terms(terms, "", "http://d.test/encodings/") == (1,)


def test_formula_by_hand():
    assert link_relevance(0.4, 0.5, 0.3) == pytest.approx(0.4 + 0.6 * 0.15)
    importance = np.array([0.5, 0.3, 0.2])
    covered = np.array([1.0, 0.5, 0.0])
    assert link_novelty((0, 1), importance, covered, 0.6) == pytest.approx(1 - (0.5 + 0.15) / 0.8)
    assert link_novelty((), importance, covered, 0.6) == pytest.approx(0.4)
    # Thin evidence (low consistency): a page on covered terms still adds corroboration.
    assert link_novelty((0,), importance, covered, 0.6, consistency=0.5) == pytest.approx(0.5)
    assert structure_authority("http://d.test/a/b/c.html", 0.1, 0.5) == pytest.approx(1 / 1.2)
    assert structure_authority("http://d.test/a?page=2", 0.1, 0.5) == pytest.approx(0.5)
    # A domain as relevant as the crawl: full authority; half its pages failed: half.
    assert domain_authority(0.0, 1.5, 5, 0.3) == pytest.approx(1.0)
    assert domain_authority(0.5, 1.5, 5, 0.3) == pytest.approx(0.5)
    # An irrelevant domain after 20 pages: (0 + 5 * 0.3) / 25 = 0.06 -> (0.11 / 0.35).
    assert domain_authority(0.0, 0.0, 20, 0.3) == pytest.approx(0.11 / 0.35)
    assert domain_authority(0.0, 0.0, 0, 0.3, new_domain=0.5) == pytest.approx(0.5)
    assert expected_gain(0.5, 0.5, 0.8) == pytest.approx(0.2)


def make_values(query="alpha beta", **kwargs):
    estimator = SufficiencyEstimator(QueryTerms(query))
    values = LinkValues(estimator.terms, estimator.view, **kwargs)
    return estimator, values


def answer_page(title, n=0, relevance=0.9):
    return {
        "url": f"http://d.test/{title.replace(' ', '-')}-{n}.html",
        "title": title,
        "text": f"{title} " * 20 + " ".join(f"word{n}x{i}" for i in range(30)),
        "relevance": relevance,
    }


def test_best_follows_novelty_as_the_knowledge_base_grows():
    estimator, values = make_values(depth_decay=0.0)
    estimator.update({"url": "http://d.test/", "text": "alpha beta gamma delta", "relevance": 0.01})
    values.add(1, "About alpha", "http://d.test/one.html", 0.0)
    values.add(2, "About beta", "http://d.test/two.html", 0.0)
    values.add(3, "Contact", "http://d.test/contact.html", 0.0)
    assert values.best() == pytest.approx(max(values.gain(1), values.gain(2)))
    assert values.gain(3) == 0.0  # no query word, found on an irrelevant page
    for n in range(3):  # alpha is now well covered: its link promises little
        estimator.update(answer_page("alpha", n))
    assert values.gain(1) < 0.05 < values.gain(2)
    gain, url = values.best_link()
    assert url == "http://d.test/two.html" and gain == pytest.approx(values.gain(2))


def test_released_dropped_and_reused_entries_leave_the_heap():
    estimator, values = make_values()
    values.add(1, "alpha beta", "http://d.test/a.html", 0.0)
    values.add(2, "beta", "http://d.test/b.html", 0.0)
    request = Request("http://d.test/a.html")
    released = values.release(1, request)
    assert released > values.gain(2) and values.best() == pytest.approx(values.gain(2))
    # A released request waiting in the ready queue still counts as pending ...
    assert values.best_pending() == pytest.approx(released)
    values.on_handed_to_engine(request)
    # ... and so does one being downloaded, valued as the knowledge base is now.
    assert values.best_pending([request]) == pytest.approx(released)
    for n in range(3):
        estimator.update(answer_page("alpha beta", n))
    assert values.best_pending([request]) < released / 2
    assert values.best_pending([]) == pytest.approx(values.gain(2))  # it came back
    # A request released before these link values existed counts through its meta.
    other = Request("http://d.test/old.html", meta={GAIN_KEY: 0.7})
    assert values.best_pending([other]) == pytest.approx(0.7)
    values.on_dropped(2)  # dropped by a domain filter
    assert values.best() == 0.0 and len(values) == 0
    # the entry id is reused by another link
    values.add(2, "nothing", "http://d.test/c.html", 0.0)
    assert values.best() == 0.0


def test_many_links_stay_cheap():
    estimator, values = make_values()
    for entry in range(5000):
        values.add(entry, "alpha" if entry % 2 else "other", f"http://d.test/{entry}.html", 0.2)
    for entry in range(0, 5000, 2):
        values.release(entry)
    assert len(values._heap) < 4000  # compacted as dead items pile up
    assert values.best() == pytest.approx(values.gain(1))


def test_parent_relevance_and_authority_enter_the_gain():
    estimator, values = make_values()
    estimator.update({"url": "http://d.test/", "text": "alpha beta", "relevance": 0.05})
    on_relevant_page = values.estimate("Next page", "http://d.test/next.html", parent_relevance=0.9)
    on_irrelevant_page = values.estimate("Next page", "http://d.test/next.html", parent_relevance=0.0)
    listing = values.estimate("alpha", "http://d.test/search?q=alpha", parent_relevance=0.0)
    page = values.estimate("alpha", "http://d.test/alpha.html", parent_relevance=0.0)
    assert on_relevant_page > on_irrelevant_page == 0.0
    assert listing == pytest.approx(page * 0.5)


def test_links_valued_in_one_batch_match_the_formula_link_by_link():
    estimator = SufficiencyEstimator(QueryTerms("alpha beta gamma"))
    estimator.update({"url": "http://d.test/", "text": "alpha beta gamma " + "filler " * 40, "relevance": 0.2})
    estimator.update(answer_page("alpha", 1))
    domains = {0: (0.0, 0.0, 0, 0.3), 1: (0.25, 2.0, 4, 0.3), 2: (0.0, 0.1, 9, 0.3)}
    values = LinkValues(estimator.terms, estimator.view, domains.__getitem__)
    anchors = ["alpha", "beta gamma", "Next", "alpha beta gamma", "", "Contact us"]
    for entry in range(60):
        url = f"http://d{entry % 3}.test/{'a/' * (entry % 4)}page{entry}.html" + ("?p=2" if entry % 7 == 0 else "")
        values.add(
            entry,
            anchors[entry % len(anchors)],
            url,
            parent_relevance=(entry % 5) / 5,
            domain_id=entry % 3 if entry % 11 else None,
        )
    queued = set(range(60))
    for later in range(100, 110):  # the best, as valued in a batch, is the best by the formula
        expected = max(queued, key=values.gain)
        gain, url = values.best_link()
        assert gain == pytest.approx(values.gain(expected)) and gain > 0
        assert url == values.links.get(expected).url
        values.release(expected)
        queued.discard(expected)
        values.add(later, "gamma", f"http://d1.test/more{later}.html", 0.5, 1)  # queued between two asks
        queued.add(later)
