"""Page and link relevance: the rewards and the anchor_similarity feature."""

import numpy as np
import pytest
from scrapy import Request

from adaptive_spider.relevance.linkpreview import PREVIEWS_MAX, LinkPreview, LinkPreviews
from adaptive_spider.relevance.pagetext import PageFields
from adaptive_spider.relevance.scoring import QueryTerms, RelevanceScorer, anchor_words, light_stem, url_words


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("coroutines", "coroutine"),
        ("tasks", "task"),
        ("processes", "process"),
        ("queries", "query"),
        ("clustering", "cluster"),
        ("status", "status"),
        ("class", "class"),
        ("matches", "match"),
    ],
)
def test_light_stem(word, stem):
    assert light_stem(word) == stem


def test_query_terms_weigh_keywords_and_match_inflections():
    terms = QueryTerms("Event loops and threads", keywords=["asyncio", "event loop"], keyword_weight=2.0)
    weights = dict(zip(terms.terms, terms.weights))
    assert weights == {"event": 3.0, "loop": 3.0, "asyncio": 2.0, "thread": 1.0}
    counts = dict(zip(terms.terms, terms.count("the event loop runs loops; threading and asyncio.run")))
    assert counts == {"event": 1, "loop": 2, "asyncio": 1, "thread": 1}


def test_short_terms_match_whole_words_only():
    terms = QueryTerms("orm", keywords=[])
    assert terms.count("the orm and orms")[0] == 2
    assert terms.count("normal format")[0] == 0


def scorer(query="asyncio event loop", keywords=("coroutine",)):
    return RelevanceScorer(QueryTerms(query, keywords))


def test_page_score_is_normalised_and_ordered():
    s = scorer()
    on_topic = PageFields(
        "http://d.test/asyncio-eventloop.html",
        "asyncio event loop",
        "Event loop",
        "The asyncio event loop runs coroutines. " * 20,
    )
    partial = PageFields("http://d.test/threads.html", "threads", "", "An event happened in a loop once.")
    off_topic = PageFields("http://d.test/cooking.html", "Bread", "Dough", "Flour water salt yeast " * 30)
    scores = [s.score_page(page, learn=False) for page in (on_topic, partial, off_topic)]
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert scores[0] > scores[1] > scores[2] == 0.0
    assert scores[0] > 0.3


def test_terms_frequent_in_the_crawl_count_less():
    s = scorer("python asyncio")
    python_only = PageFields("http://d.test/x", "Python", "", "python")
    before = s.score_page(python_only, learn=False)
    for i in range(30):  # every crawled page says "python"
        s.score_page(PageFields(f"http://d.test/{i}", "Python docs", "", "python python"))
    assert s.score_page(python_only, learn=False) < before


def test_link_similarity_uses_anchor_and_url_words():
    s = scorer()
    assert s.score_link("Asyncio — Asynchronous I/O", "http://d.test/library/other.html") > 0
    assert s.score_link("Next", "http://d.test/library/asyncio-eventloop.html") > 0
    assert s.score_link("Next", "http://d.test/library/json.html") == 0.0
    assert s.score_link("asyncio event loop coroutine", "http://d.test/x") == pytest.approx(1.0)


def test_an_api_listings_compound_names_match_the_querys_words():
    """A class index names QMutex and QRegularExpression; the query says "mutexes" and
    "regular expressions". The whole name still matches a query that names it."""
    s = scorer("synchronize threads with mutexes and regular expressions", ())
    for name in ("QMutex", "ReentrantLock", "QRegularExpression", "QReadWriteLock", "getLogger", "HTTPServer"):
        words = anchor_words(name)
        assert words.startswith(name.lower())
    assert s.score_link("QMutex", "http://d.test/qtcore/qmutex.html") > 0
    assert s.score_link("QRegularExpression", "http://d.test/qtcore/qregularexpression.html") > s.score_link(
        "QMutex", "http://d.test/qtcore/qmutex.html"
    )
    assert s.score_link("QPainter", "http://d.test/qtgui/qpainter.html") == 0.0
    assert scorer("PostgreSQL indexes", ()).score_link("PostgreSQL", "http://d.test/x") > 0
    assert anchor_words("HTTP") == "http" and anchor_words("Next") == "next"
    # The frontier's preview of a queued link sees the same words.
    request = Request("http://d.test/qtcore/qmutex.html")
    preview = LinkPreview.of(request, s.terms, "QMutex")
    assert preview.term_ids == s.terms.present_ids("mutex")


def test_a_repeated_link_gets_its_preview_again_as_a_copy():
    terms = QueryTerms("mutex lock")
    previews = LinkPreviews(terms)
    request = Request("http://d.test/qtcore/qmutex.html?x=1")
    first = previews.of(request, "QMutex Class")
    fresh = LinkPreview.of(request, terms, "QMutex Class")
    assert first.__class__ is LinkPreview
    fields = ("domain", "path_depth", "has_query", "term_ids", "is_file")
    assert [getattr(first, f) for f in fields] == [getattr(fresh, f) for f in fields]
    first.term_ids = ()  # a reader takes another anchor's terms: the next repeat is not changed
    again = previews.of(Request(request.url), "QMutex Class")
    assert again is not first and again.term_ids == fresh.term_ids
    assert previews.of(request, "Next").term_ids == LinkPreview.of(request, terms, "Next").term_ids
    for i in range(PREVIEWS_MAX + 1):  # bounded: emptied when full
        previews.of(Request(f"http://d.test/{i}"), "")
    assert len(previews) <= PREVIEWS_MAX


def test_url_words_drop_noise():
    assert url_words("https://www.example.com/docs/Event-Loop_2.html?q=Tasks") == "example docs event loop 2 q tasks"


def test_no_query_scores_zero():
    s = RelevanceScorer(QueryTerms(""))
    assert s.score_page(PageFields("http://d.test/", "t", "h", "b")) == 0.0
    assert s.score_link("anything", "http://d.test/") == 0.0
    assert np.all(s.doc_freq == 0)


def test_link_similarity_from_term_ids_equals_numpys_weighted_share_to_the_bit():
    scorer = RelevanceScorer(
        QueryTerms("alpha beta gamma delta epsilon zeta eta theta iota kappa", keywords=["lambda mu"])
    )
    for n in range(5):  # term weights that move with the crawl's statistics
        counts = np.zeros((len(scorer.FIELDS), len(scorer.terms)))
        counts[:, : n + 2] = 1.0
        scorer.observe(counts, np.ones(len(scorer.FIELDS)))
    rng = np.random.default_rng(0)
    weights, total = scorer._cached_weights()
    for _ in range(300):
        present = rng.random(len(scorer.terms)) < rng.random()
        ids = tuple(int(i) for i in np.flatnonzero(present))
        expected = float(weights[present].sum() / total) if ids else 0.0
        assert scorer.score_term_ids(ids) == expected
    ids = scorer.terms.present_ids("the alpha and gamma of it, alphas")
    assert list(ids) == sorted(ids) and {scorer.terms.terms[i] for i in ids} == {"alpha", "gamma"}
    assert scorer.terms.present_ids("nothing here") == ()


def test_a_link_context_scores_as_the_scorer_scores_it_while_the_statistics_change():
    from adaptive_spider.crawl.state import CrawlState
    from adaptive_spider.settings.config import AdaptiveConfig

    state = CrawlState(AdaptiveConfig.from_settings({"ADAPTIVE_QUERY": "asyncio event loop"}))
    contexts = ["Event loop API", "Asyncio: tasks and the event loop", "Networking", "Event loop API"]
    for text in ("asyncio asyncio loop", "an event and a loop", "nothing related"):
        assert [state.context_similarity(c) for c in contexts] == [state.scorer.score_link(c, "") for c in contexts]
        state.scorer.score_page(PageFields("http://d.test/p", text, "", text))
    assert state.context_similarity("Networking") == 0.0 < state.context_similarity("Event loop API")
