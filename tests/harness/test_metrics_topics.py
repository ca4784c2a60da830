"""The harness's measuring rules: focus metrics of a fetch order, topics files, labels from label rules."""

import json

import pytest

from benchmarks.harness.metrics import Run, mean_metrics, recall_curve
from benchmarks.harness.topics import Labeler, TopicsError, load_topics
from benchmarks.webbench.web import OfflineWeb


def run_of(fetched):
    return Run("t", "s", fetched=fetched, seconds=2.0, cpu_seconds=1.0, finish_reason="budget")


def test_metrics_of_a_fetch_order():
    relevant = {f"r{i}" for i in range(10)}
    # relevant pages at fetches 3, 4, 10, 200..206 (the first 10 fetches: 7 others)
    fetched = ["x0", "x1", "r0", "r1"] + [f"y{i}" for i in range(5)] + ["r2"]
    fetched += [f"z{i}" for i in range(189)] + [f"r{i}" for i in range(3, 10)] + [f"w{i}" for i in range(794)]
    assert len(fetched) == 1000
    m = run_of(fetched).metrics(relevant, budget=1000)
    assert m["N50"] == 201  # 5 of 10 relevant: r0 r1 r2 r3 r4 -> fetch 201
    assert m["N90"] == 205  # 9 of 10
    assert m["H@200"] == round(4 / 200, 3)  # r0, r1, r2 and r3 (fetch 200)
    assert m["R@500"] == 1.0 and m["R@1000"] == 1.0
    assert m["pages"] == 1000 and m["pages_per_s"] == 500.0 and m["pages_per_cpu_s"] == 1000.0


def test_metrics_beyond_the_budget_are_not_measured_and_unreached_shares_are_none():
    m = run_of(["r0", "x", "x2"]).metrics({"r0", "r1", "r2"}, budget=300)
    assert m["H@200"] == round(1 / 200, 3)  # the crawl ended: nothing relevant after its end
    assert m["H@500"] is None and m["R@500"] is None and m["R@1000"] is None
    assert m["N50"] is None and m["N90"] is None


def test_fetches_beyond_the_budget_do_not_count():
    m = run_of(["x", "r0", "r1"]).metrics({"r0", "r1"}, budget=2)
    assert m["N50"] == 2 and m["N90"] is None and m["pages"] == 2


def test_a_page_fetched_under_another_quoting_of_its_url_counts_once():
    """cppreference links ``operator%3D.html``; the labels (the spec's canonical paths) name
    ``operator=.html``: the same page, which the server serves once."""
    page = "http://en.cppreference.test/w/cpp/thread/promise/operator=.html"
    fetched = ["http://x.test/", page.replace("=", "%3D"), page, "http://en.cppreference.test/w/a%7Eb.html"]
    m = run_of(fetched).metrics({page, "http://en.cppreference.test/w/a~b.html"}, budget=4)
    assert run_of(fetched).found_at({page}, budget=4) == [2]
    assert m["N50"] == 2 and m["N90"] == 4 and m["R@500"] is None


def test_mean_counts_never_reached_as_budget_plus_one():
    mean = mean_metrics([{"N50": 10, "N90": None, "R@1000": 0.5}, {"N50": 30, "N90": 100, "R@1000": 1.0}], budget=1000)
    assert mean["N50"] == 20 and mean["N90"] == (1001 + 100) / 2 and mean["R@1000"] == 0.75


def test_recall_curve_steps():
    xs, ys = recall_curve([2, 5], n_relevant=2, pages=10)
    assert list(zip(xs, ys)) == [(0, 0.0), (2, 0.0), (2, 0.5), (5, 0.5), (5, 1.0), (10, 1.0)]


def write_topics(tmp_path, topics):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps({"topics": topics}))
    return path


TOPIC = {"id": "sample", "query": "page b", "seeds": ["http://site.test/"], "label": {"url": ["/sub/"]}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"query": " "}, 'topic sample: "query" missing or empty'),
        ({"seeds": []}, 'topic sample: "seeds" must be a non-empty list'),
        ({"seeds": ["https://site.test/"]}, "http:// URLs only"),
        ({"label": {"url": ["(unclosed"]}}, 'topic sample: "label.url": bad regular expression'),
        ({"label": {"exclude_url": ["x"]}}, 'needs at least one "url", "title" or "url_title" pattern'),
        ({"label": {"urls": ["x"]}}, "unknown keys ['urls']"),
        ({"id": "two words"}, '"id" must be a name'),
    ],
)
def test_bad_topics_fail_with_one_line_naming_topic_and_field(tmp_path, change, message):
    path = write_topics(tmp_path, [{**TOPIC, **change}])
    with pytest.raises(TopicsError) as error:
        load_topics(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_unknown_topic_id_is_named(tmp_path):
    path = write_topics(tmp_path, [TOPIC])
    with pytest.raises(TopicsError, match=r"--topic: not in .*: nope"):
        load_topics(path, ["nope"])


def write_folder(root):
    pages = {
        "index.html": '<title>Home</title><a href="a.html">a</a> <a href="sub/">sub</a> <a href="private/s.html">p</a>'
        ' <a href="gone.html">gone</a> <a href="data.txt">data</a>',
        "a.html": "<title>Page A</title>",
        "sub/index.html": '<title>Sub</title><a href="b.html">b</a>',
        "sub/b.html": "<title>Page B</title>",
        "sub/orphan.html": "<title>Page orphan</title>",
        "private/s.html": "<title>Page secret</title>",
        "data.txt": "Page text",
    }
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_labels_from_url_title_and_exclude_rules(tmp_path):
    """Relevant: reachable HTML pages, status 200, allowed by robots.txt, matching the rule."""
    web = OfflineWeb.from_folder(write_folder(tmp_path / "site"), "site.test", disallow=["/private/"])
    topics = [
        {**TOPIC, "id": "by-url", "label": {"url": [r"^http://site\.test/(sub|private)/"]}},
        {**TOPIC, "id": "by-title", "label": {"title": ["^Page "], "exclude_url": [r"/a\.html$"]}},
    ]
    labeler = Labeler(web)
    by_url, by_title = (set(labeler.relevant(t)) for t in load_topics(write_topics(tmp_path, topics)))
    # private/s.html matches but robots.txt disallows it; sub/ redirects to sub/index.html;
    # sub/orphan.html is not reachable from the seed
    assert by_url == {"http://site.test/sub/index.html", "http://site.test/sub/b.html"}
    assert by_title == {"http://site.test/sub/b.html"}  # "Page A" excluded by URL


def test_url_title_pairs_and_excluded_titles(tmp_path):
    """The big web's label keys: a (URL, title) pair must match both halves; an excluded title wins."""
    label = {
        "url": [r"/re\.html$"],
        "url_title": [[r"/user/a\d+\.html$", r"^std::regex"]],
        "exclude_title": ["^Redirection$"],
    }
    (topic,) = load_topics(write_topics(tmp_path, [{**TOPIC, "label": label}]))
    rule = topic.label
    assert rule.needs_title
    assert rule.matches("http://x.test/re.html", "Regular expressions")
    assert not rule.matches("http://x.test/re.html", "Redirection")
    assert rule.matches("http://x.test/user/a01.html", "std::regex_traits")
    assert not rule.matches("http://x.test/user/a01.html", "std::vector")
    assert not rule.matches("http://x.test/other/a01.html", "std::regex_traits")
    with pytest.raises(TopicsError, match="url_title"):
        load_topics(write_topics(tmp_path, [{**TOPIC, "label": {"url_title": [["only a URL"]]}}]))


def test_big_web_cutoffs_read_recall_at_5000_and_count_unreached_as_10000():
    from benchmarks.harness.metrics import BIG_WEB

    relevant = {"r0", "r1"}
    m = run_of(["r0"] + ["x"] * 2000 + ["r1"]).metrics(relevant, budget=5000, cutoffs=BIG_WEB)
    assert (m["H@200"], m["R@1000"], m["R@5000"], m["N50"], m["N90"]) == (0.005, 0.5, 1.0, 1, 2002)
    assert "R@500" not in m
    mean = mean_metrics([{"N50": 10, "N90": None, "R@5000": 0.5}], budget=5000, cutoffs=BIG_WEB)
    assert mean["N90"] == 10_000 and mean["R@5000"] == 0.5


def test_a_set_value_may_name_the_topic():
    from benchmarks.harness.crawl import CrawlOptions, crawl_settings

    options = CrawlOptions(extra={"ADAPTIVE_CLASSIFIER_TRAINING": "training/{topic}.jsonl", "ADAPTIVE_SEED": "3"})
    settings = crawl_settings("tres", options.for_topic("django-models"))
    assert settings["ADAPTIVE_CLASSIFIER_TRAINING"] == "training/django-models.jsonl"
    assert settings["ADAPTIVE_SEED"] == "3"
    assert options.extra["ADAPTIVE_CLASSIFIER_TRAINING"] == "training/{topic}.jsonl"  # unchanged


def test_the_stock_crawl_takes_the_other_settings_but_not_the_page_relevance_model():
    from benchmarks.harness.crawl import STOCK, CrawlOptions, crawl_settings

    model = "adaptive_spider.relevance.embedding.EmbeddingRelevance"
    options = CrawlOptions(extra={"ADAPTIVE_RELEVANCE": model, "CONCURRENT_REQUESTS": "4"})
    stock, focused = crawl_settings(STOCK, options), crawl_settings("bestfirst", options)
    assert stock.get("ADAPTIVE_RELEVANCE") in (None, "bm25") and stock.getint("CONCURRENT_REQUESTS") == 4
    assert focused["ADAPTIVE_RELEVANCE"] == model and focused.getint("CONCURRENT_REQUESTS") == 4
    assert options.extra["ADAPTIVE_RELEVANCE"] == model  # the focused crawls after it still get it
