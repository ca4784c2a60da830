"""ADAPTIVE_RELEVANCE and ADAPTIVE_STRATEGY name classes of one's own (docs/plugins.md): real
crawls of the demo site that use them, the errors of a wrong path, and the page classifier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scrapy
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.frontier.strategies.baselines import BreadthFirst
from adaptive_spider.relevance.base import PageRelevance
from adaptive_spider.relevance.classifier import PageClassifier, read_examples
from adaptive_spider.relevance.pagetext import html_page_fields
from adaptive_spider.settings.config import AdaptiveConfig, ConfigError
from spiders.focused import FocusedSpider
from tests.conftest import TEST_SETTINGS, crawl_test, project_settings, run_crawl

PROJECT = Path(__file__).resolve().parent.parent
CLASSIFIER = "adaptive_spider.relevance.classifier.PageClassifier"


class MusicRelevance(PageRelevance):
    """A page is relevant when its URL is in the music section, whatever the query says."""

    scored: dict[str, float] = {}

    def score(self, page, response=None):
        MusicRelevance.scored[page.url] = 1.0 if "/music/" in page.url else 0.0
        return MusicRelevance.scored[page.url]


class RecordingStrategy(BreadthFirst):
    """Breadth-first, built with from_crawler, and keeping the URLs it released."""

    instances: list[RecordingStrategy] = []

    @classmethod
    def from_crawler(cls, crawler, frontier, config, rng):
        strategy = cls(frontier, config, rng)
        strategy.crawler = crawler
        strategy.released = []
        cls.instances.append(strategy)
        return strategy

    def select(self, tier, n):
        chosen = super().select(tier, n)
        self.released += [self.frontier.url_of(choice.entry) for choice in chosen]
        return chosen


class NotAStrategy:
    def push(self, tier, entry): ...


def music_articles(site: DemoSite, url: str) -> set[str]:
    return {url.rstrip("/") + path for path in site.pages if path.startswith("/music/") and "article" in path}


# -- a relevance class of one's own, in a real crawl -----------------------------------------------
@crawl_test
async def test_a_relevance_class_decides_what_is_relevant_and_what_is_fetched_first(demo_site):
    site, url = demo_site
    music = music_articles(site, url)
    # Best-first on the parent page's relevance alone: the order is the relevance model's. One
    # request at a time: ties (all links before the first relevant page) keep the order of arrival.
    common = {
        "ADAPTIVE_STRATEGY": "bestfirst",
        "ADAPTIVE_PRIOR_WEIGHTS": {"anchor": 0, "context": 0, "parent": 1},
        "CLOSESPIDER_PAGECOUNT": 250,
        "CONCURRENT_REQUESTS": 1,
    }
    MusicRelevance.scored.clear()
    plugged = await run_crawl(
        FocusedSpider,
        project_settings(ADAPTIVE_RELEVANCE="tests.test_plugins.MusicRelevance", **common),
        query=QUERY,
        start_urls=url,
    )
    default = await run_crawl(FocusedSpider, project_settings(**common), query=QUERY, start_urls=url)

    # Every page was scored by the class, and its score is the page's relevance.
    items = [item for item in plugged.items if "relevance" in item]
    assert items and set(MusicRelevance.scored) >= {item["url"] for item in items}
    for item in items:
        assert item["relevance"] == (1.0 if "/music/" in item["url"] else 0.0), item["url"]
    assert plugged.stats["adaptive/relevant_pages"] == sum(MusicRelevance.scored.values())
    # The query is about astronomy, yet the crawl chases music (BM25 leaves it for last among the sections).
    found = {name: len(music & set(run.fetched)) for name, run in (("plugged", plugged), ("bm25", default))}
    assert found["plugged"] >= 100 and found["bm25"] < 20, found


def test_a_relevance_model_without_a_crawler_is_built_from_settings():
    config = AdaptiveConfig.from_settings({"ADAPTIVE_RELEVANCE": MusicRelevance})
    assert config.relevance == "tests.test_plugins.MusicRelevance"  # a class is kept as its path
    state = CrawlState(config)
    assert isinstance(state.relevance, MusicRelevance)
    assert CrawlState(AdaptiveConfig()).relevance is None  # bm25: the scorer itself


# -- a strategy class of one's own, in a real crawl -----------------------------------------------
@crawl_test
async def test_a_strategy_class_orders_the_crawl(demo_site):
    site, url = demo_site
    RecordingStrategy.instances.clear()
    settings = project_settings(ADAPTIVE_STRATEGY="tests.test_plugins.RecordingStrategy", CLOSESPIDER_PAGECOUNT=40)
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    assert len(RecordingStrategy.instances) == 1
    strategy = RecordingStrategy.instances[0]
    assert strategy.crawler is result.crawler  # built with from_crawler
    # Every page after the start page was released by it.
    assert len(result.fetched) >= 40
    assert set(result.fetched) - {url} <= set(strategy.released)


# -- wrong paths -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "ADAPTIVE_STRATEGY",
            "bestfist",
            "ADAPTIVE_STRATEGY: unknown value 'bestfist' (did you mean 'bestfirst'?); "
            "choose one of tres, linkgroups, bestfirst, gain, bfs, dfs, random, or the dotted path of a Strategy class",
        ),
        (
            "ADAPTIVE_STRATEGY",
            "tests.test_plugins.RecordingStrategi",
            "ADAPTIVE_STRATEGY: module 'tests.test_plugins' "
            "has no 'RecordingStrategi'; did you mean tests.test_plugins.RecordingStrategy?",
        ),
        (
            "ADAPTIVE_STRATEGY",
            "adaptive_spider.frontier.strategies.baseline.BestFirst",
            "ADAPTIVE_STRATEGY: no module "
            "'adaptive_spider.frontier.strategies.baseline' for 'adaptive_spider.frontier.strategies.baseline.BestFirst' "
            "(did you mean adaptive_spider.frontier.strategies.baselines?)",
        ),
        (
            "ADAPTIVE_STRATEGY",
            "tests.test_plugins.NotAStrategy",
            "ADAPTIVE_STRATEGY: tests.test_plugins.NotAStrategy is not a Strategy subclass",
        ),
        (
            "ADAPTIVE_STRATEGY",
            "tests.test_plugins.CLASSIFIER",
            "ADAPTIVE_STRATEGY: tests.test_plugins.CLASSIFIER is not a class",
        ),
        ("ADAPTIVE_RELEVANCE", "bm52", "ADAPTIVE_RELEVANCE: unknown value 'bm52' (did you mean 'bm25'?)"),
        ("ADAPTIVE_RELEVANCE", "nowhere.Model", "ADAPTIVE_RELEVANCE: no module 'nowhere' for 'nowhere.Model'"),
        (
            "ADAPTIVE_RELEVANCE",
            "tests.test_plugins.RecordingStrategy",
            "ADAPTIVE_RELEVANCE: tests.test_plugins.RecordingStrategy has no score(page, response) method",
        ),
        ("ADAPTIVE_RELEVANCE", "adaptive_spider.relevance.base.PageRelevance", "does not implement score"),
        (
            "ADAPTIVE_CLASSIFIER_TRAINING",
            "/nonexistent/labels.txt",
            "ADAPTIVE_CLASSIFIER_TRAINING: '/nonexistent/labels.txt' does not exist",
        ),
    ],
)
def test_a_wrong_value_names_the_setting_and_the_closest_valid_one(setting, value, message):
    with pytest.raises(ConfigError) as error:
        AdaptiveConfig.from_settings({setting: value})
    assert message in str(error.value)
    assert str(error.value).startswith(setting)


def test_a_class_defined_in_a_function_is_refused():
    class Local(PageRelevance):
        def score(self, page, response=None):
            return 0.0

    with pytest.raises(ConfigError, match=r"ADAPTIVE_RELEVANCE: .*Local is defined inside a function"):
        AdaptiveConfig.from_settings({"ADAPTIVE_RELEVANCE": Local})


def test_built_in_names_and_paths_still_work():
    assert AdaptiveConfig.from_settings({"ADAPTIVE_STRATEGY": " BestFirst "}).strategy == "bestfirst"
    path = "adaptive_spider.frontier.strategies.baselines.BestFirst"
    assert AdaptiveConfig.from_settings({"ADAPTIVE_STRATEGY": path}).strategy == path
    assert AdaptiveConfig().relevance == "bm25"


def test_a_score_outside_the_unit_interval_is_clipped_and_a_non_number_refused():
    from adaptive_spider.relevance.base import checked_score

    assert checked_score(1.7, object()) == 1.0 and checked_score(-2, object()) == 0.0
    with pytest.raises(TypeError, match="not a number"):
        checked_score("high", object())
    with pytest.raises(ValueError, match="NaN"):
        checked_score(float("nan"), object())


# -- the page classifier -----------------------------------------------------------------------------
def demo_examples(site: DemoSite, url: str, per_class: int = 5) -> list[dict]:
    """JSON examples from the demo site: astronomy articles relevant, other articles not."""
    articles = sorted(p for p in site.pages if "article" in p)
    positive = [p for p in articles if p.startswith("/astronomy/")][:per_class]
    negative = [p for p in articles if not p.startswith("/astronomy/")][::97][:per_class]
    return [
        {"url": url.rstrip("/") + p, "label": label, "html": site.pages[p]}
        for label, paths in ((1, positive), (0, negative))
        for p in paths
    ]


def test_the_classifier_trains_and_scores_unseen_pages(demo_site):
    site, url = demo_site
    examples = demo_examples(site, url)
    classifier = PageClassifier().fit(
        [html_page_fields(e["html"], e["url"]) for e in examples], [e["label"] for e in examples]
    )
    seen = {e["url"] for e in examples}
    unseen = [
        (path, html_page_fields(html, url.rstrip("/") + path))
        for path, html in site.pages.items()
        if "article" in path and url.rstrip("/") + path not in seen
    ]
    scores = classifier.predict_proba([page for _, page in unseen])
    relevant = [s for (path, _), s in zip(unseen, scores) if path in site.relevant]
    other = [s for (path, _), s in zip(unseen, scores) if path not in site.relevant]
    assert min(relevant) > max(other)  # ten examples separate the demo's topics
    assert sum(relevant) / len(relevant) > 0.7 and sum(other) / len(other) < 0.3
    assert 0.0 <= classifier.score(unseen[0][1]) <= 1.0


def test_the_classifier_reads_every_training_format_and_fetches_pages_given_by_url(demo_site, tmp_path):
    site, url = demo_site
    examples = demo_examples(site, url, per_class=3)
    lines = ["# labelled by hand", *(("+ " if e["label"] else "- ") + e["url"] for e in examples[:4])]
    lines += [json.dumps(e) for e in examples[4:]]
    lines.append(json.dumps({"label": "negative", "title": "Market", "text": "stock bond market dividend"}))
    training = tmp_path / "labelled.txt"
    training.write_text("\n".join(lines) + "\n")
    read = read_examples(training)
    assert [e.label for e in read] == [e["label"] for e in examples] + [0]
    assert [e.page is None for e in read] == [True] * 4 + [False] * 3

    # Trained from settings: the four pages given by URL alone are fetched from the demo server.
    classifier = PageClassifier.from_settings({"ADAPTIVE_CLASSIFIER_TRAINING": str(training)})
    astronomy = html_page_fields(site.pages["/astronomy/1/article-7.html"], url + "astronomy/1/article-7.html")
    cooking = html_page_fields(site.pages["/cooking/2/article-3.html"], url + "cooking/2/article-3.html")
    assert classifier.score(astronomy) > 0.5 > classifier.score(cooking)

    # ACHE's layout: a folder of positive/ and negative/ HTML files.
    for e in examples:
        folder = tmp_path / "ache" / ("positive" if e["label"] else "negative")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (e["url"].rsplit("/", 2)[-2] + "-" + e["url"].rsplit("/", 1)[-1])).write_text(e["html"])
    ache = read_examples(tmp_path / "ache")
    assert sorted(e.label for e in ache) == sorted(e["label"] for e in examples)
    assert all(e.page is not None and e.url == "" for e in ache)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # (nothing is fetched: the file is checked first)
        (
            "+ http://127.0.0.1:9/a\n+ http://127.0.0.1:9/b\n",
            "needs relevant and irrelevant examples, got 2 relevant and 0",
        ),
        ("maybe http://127.0.0.1:9/a\n", "labelled.txt line 1: label 'maybe' is neither positive"),
        ("http://127.0.0.1:9/a\n", "labelled.txt line 1: expected '+ URL', '- URL' or a JSON object"),
        ('{"url": "http://127.0.0.1:9/a"}\n', "labelled.txt line 1: a JSON example needs a label"),
    ],
)
def test_bad_training_files_name_the_setting_and_the_line(tmp_path, content, message):
    training = tmp_path / "labelled.txt"
    training.write_text(content)
    with pytest.raises(ConfigError, match="ADAPTIVE_CLASSIFIER_TRAINING: ") as error:
        PageClassifier.from_settings({"ADAPTIVE_CLASSIFIER_TRAINING": str(training)})
    assert message in str(error.value)


def test_the_classifier_without_training_examples_says_what_it_needs():
    with pytest.raises(ConfigError, match="ADAPTIVE_CLASSIFIER_TRAINING: PageClassifier needs labelled examples"):
        PageClassifier.from_settings({})


def _analysed(state: CrawlState, site: DemoSite, url: str, paths: tuple[str, ...]) -> list[float]:
    """The relevance the crawl gives each page, analysed in turn as if fetched."""
    relevances = []
    for path in paths:
        page_url = url.rstrip("/") + path
        response = HtmlResponse(page_url, body=site.pages[path].encode(), encoding="utf-8", request=Request(page_url))
        relevances.append(state.analyze(response).relevance)
    return relevances


@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_the_query_weight_mixes_the_querys_page_score_into_the_models(demo_site, tmp_path, weight):
    site, url = demo_site
    training = tmp_path / "labelled.jsonl"
    training.write_text("\n".join(json.dumps(e) for e in demo_examples(site, url)) + "\n")
    paths = ("/astronomy/1/article-7.html", "/cooking/2/article-3.html", "/astronomy/2/article-1.html")
    settings = {**TEST_SETTINGS, "ADAPTIVE_QUERY": QUERY}
    query_only = CrawlState.of(get_crawler(scrapy.Spider, settings))
    mixed = CrawlState.of(get_crawler(scrapy.Spider, {
        **settings, "ADAPTIVE_RELEVANCE": CLASSIFIER, "ADAPTIVE_CLASSIFIER_TRAINING": str(training),
        "ADAPTIVE_RELEVANCE_QUERY_WEIGHT": weight,
    }))  # fmt: skip
    classifier = mixed.relevance
    assert isinstance(classifier, PageClassifier)
    query_scores = _analysed(query_only, site, url, paths)
    probabilities = classifier.predict_proba([html_page_fields(site.pages[p], url.rstrip("/") + p) for p in paths])
    expected = [weight * q + (1 - weight) * p for q, p in zip(query_scores, probabilities, strict=True)]
    assert _analysed(mixed, site, url, paths) == pytest.approx(expected)
    assert len(set(query_scores)) > 1 and any(abs(q - p) > 0.05 for q, p in zip(query_scores, probabilities))


def test_pages_the_querys_words_call_far_from_it_are_not_given_to_the_model(demo_site):
    site, url = demo_site
    paths = tuple(p for p in site.pages if p.endswith(".html") and "article" in p)[:60]
    settings = {**TEST_SETTINGS, "ADAPTIVE_QUERY": QUERY}
    query_scores = _analysed(CrawlState.of(get_crawler(scrapy.Spider, settings)), site, url, paths)
    above = float(np.median(query_scores))
    MusicRelevance.scored = {}
    state = CrawlState.of(get_crawler(scrapy.Spider, {
        **settings, "ADAPTIVE_RELEVANCE": "tests.test_plugins.MusicRelevance",
        "ADAPTIVE_RELEVANCE_QUERY_WEIGHT": 0.5, "ADAPTIVE_RELEVANCE_MODEL_ABOVE": above,
    }))  # fmt: skip
    relevances = _analysed(state, site, url, paths)
    asked = MusicRelevance.scored
    far = [i for i, q in enumerate(query_scores) if q < above]
    assert far and len(far) < len(paths)
    for i, (path, query_score) in enumerate(zip(paths, query_scores, strict=True)):
        page_url = url.rstrip("/") + path
        if i in far:  # the query's score alone, the model never asked
            assert page_url not in asked and relevances[i] == pytest.approx(query_score)
        else:
            assert relevances[i] == pytest.approx(0.5 * query_score + 0.5 * asked[page_url])
    assert state.stats is not None and state.stats.get_value("adaptive/relevance/model_skipped") == len(far)


def test_a_query_weight_without_a_model_is_said_to_have_no_effect(caplog):
    CrawlState.of(get_crawler(scrapy.Spider, {**TEST_SETTINGS, "ADAPTIVE_RELEVANCE_QUERY_WEIGHT": 0.5}))
    assert "ADAPTIVE_RELEVANCE_QUERY_WEIGHT (0.5) has no effect: ADAPTIVE_RELEVANCE is 'bm25'" in caplog.text


def test_without_scikit_learn_the_crawl_stops_at_start_naming_the_extra():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "from adaptive_spider.settings.config import AdaptiveConfig\n"
        f"AdaptiveConfig.from_settings({{'ADAPTIVE_RELEVANCE': {CLASSIFIER!r}}})\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert (
        run.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "ADAPTIVE_RELEVANCE: adaptive_spider.relevance.classifier needs scikit-learn: "
            "pip install 'adaptive-spider[classifier]'"
        )
    ), run.stderr


@crawl_test
async def test_a_crawl_with_the_classifier_scores_pages_by_it(tmp_path):
    site = DemoSite(seed=3)
    server, url = serve(site)
    try:
        training = tmp_path / "labelled.jsonl"
        training.write_text("\n".join(json.dumps(e) for e in demo_examples(site, url)) + "\n")
        settings = project_settings(
            ADAPTIVE_RELEVANCE=CLASSIFIER, ADAPTIVE_CLASSIFIER_TRAINING=str(training), CLOSESPIDER_PAGECOUNT=150
        )
        result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    finally:
        server.shutdown()
    assert isinstance(CrawlState.of(result.crawler).relevance, PageClassifier)
    relevant = {url.rstrip("/") + path for path in site.relevant}
    scores = {item["url"]: item["relevance"] for item in result.items if "relevance" in item}
    inside = [s for u, s in scores.items() if u in relevant]
    outside = [s for u, s in scores.items() if u not in relevant and "article" in u]  # other topics' articles
    assert len(inside) >= 20 and outside, scores
    assert min(inside) > 0.5 > max(outside)
