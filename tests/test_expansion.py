"""Query expansion (pseudo-relevance feedback): words of the best pages fetched so far lift
the links that carry them, the queue is valued anew, JOBDIR keeps it, and it can be off."""

from __future__ import annotations

import html
import random

import pytest
from scrapy import Request

from adaptive_spider.crawl.report import CrawlReport
from adaptive_spider.demo.site import DemoSite, serve
from adaptive_spider.relevance.expansion import QueryExpansion, is_blend, is_variant, mix
from adaptive_spider.relevance.pagetext import PageFields
from adaptive_spider.relevance.scoring import QueryTerms
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl
from tests.test_scheduler import make_scheduler

QUERY = "telescope observations of distant galaxies"
#: The word every relevant page shares and the query lacks.
HIDDEN = "nebula"
FILLER = (
    "garden kitchen recipe bicycle repair harbour ferry timetable piano lesson weather forecast "
    "football league museum ticket railway station library opening hours coffee market"
).split()


def _page(title: str, body: str, links: list[tuple[str, str]] = ()) -> str:
    items = "".join(f'<li><a href="{href}">{html.escape(text)}</a></li>' for href, text in links)
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(body)}</p><ul>{items}</ul></body></html>"
    )


def hidden_word_site() -> DemoSite:
    """A home page with links to four pages about the query (which also say "nebula" a lot),
    fifty unrelated pages, and last, a relevant page whose link says only "nebula"."""
    rng = random.Random(7)
    site = DemoSite(seed=0, hubs_per_topic=1, articles_per_hub=1)
    site.pages.clear()
    links = []
    for i in range(4):
        path = f"/survey-{i}.html"
        body = f"Telescope observations of distant galaxies, survey {i}. " + f"The {HIDDEN} glows. " * 6
        site.pages[path] = _page(f"Telescope observations of distant galaxies {i}", body)
        links.append((path, f"Telescope galaxies {i}"))
    for i in range(50):
        path = f"/misc-{i}.html"
        site.pages[path] = _page(f"Page {i}", " ".join(rng.choice(FILLER) for _ in range(60)))
        links.append((path, f"Page {i}"))
    site.pages[f"/{HIDDEN}.html"] = _page(f"The {HIDDEN} catalogue", f"Telescope galaxies {HIDDEN} " * 5)
    links.append((f"/{HIDDEN}.html", HIDDEN.capitalize()))
    site.pages["/"] = _page("Home", "Welcome", links)
    return site


@pytest.fixture(scope="module")
def hidden_site():
    server, url = serve(hidden_word_site())
    yield url
    server.shutdown()


async def crawl_hidden(url: str, **settings):
    settings = project_settings(
        ADAPTIVE_STRATEGY="bestfirst", CONCURRENT_REQUESTS=1, ADAPTIVE_COLD_START_PAGES=0, **settings
    )
    return await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)


@crawl_test
async def test_expansion_learns_the_shared_word_and_fetches_its_link_earlier(hidden_site):
    with_expansion = await crawl_hidden(hidden_site, ADAPTIVE_EXPANSION=True)
    without = await crawl_hidden(hidden_site, ADAPTIVE_EXPANSION=False)
    target = hidden_site + f"{HIDDEN}.html"
    expansion = with_expansion.crawler._adaptive_state.expansion
    assert HIDDEN in expansion.terms
    # The crawl report says what the query learned.
    report = next(ext for ext in with_expansion.crawler.extensions.middlewares if isinstance(ext, CrawlReport))
    assert HIDDEN in report.build("focused", "finished")["query"]["learned"]
    assert with_expansion.stats["adaptive/expansion/revalued_links"] > 0
    # Without: a link as blind as the fifty unrelated ones, queued last, comes last.
    assert without.fetched.index(target) >= 50
    assert with_expansion.fetched.index(target) < 40, with_expansion.fetched.index(target)


@crawl_test
async def test_the_off_switch_scores_links_by_the_query_alone(hidden_site):
    result = await crawl_hidden(hidden_site, ADAPTIVE_EXPANSION=False)
    state = result.crawler._adaptive_state
    assert len(state.expansion) == 0 and state.expansion.n_pages == 0
    assert "adaptive/expansion/updates" not in result.stats
    ids = state.terms.present_ids("telescope nebula")
    assert state.link_similarity(ids, "telescope nebula", "http://x.test/") == state.scorer.score_term_ids(ids)


def feedback_pages(n: int = 40) -> list[tuple[PageFields, float]]:
    pages = []
    for i in range(n):
        if i % 4 == 0:
            pages.append((PageFields(f"http://s.test/galaxy/{i}.html", f"Galaxies {i}", "Nebula", "nebula " * 9), 0.9))
        else:
            pages.append((PageFields(f"http://s.test/misc/{i}.html", f"Misc {i}", "", "kitchen garden " * 5), 0.0))
    return pages


def test_terms_are_deterministic_and_bounded():
    runs = []
    for _ in range(2):
        expansion = QueryExpansion(QueryTerms(QUERY), n_terms=3, max_vocabulary=30, min_background=8)
        for page, relevance in feedback_pages():
            expansion.observe(page, relevance)
        runs.append((expansion.terms, expansion.matcher.weights.tolist()))
        assert len(expansion.doc_freq) <= 30
    assert runs[0] == runs[1] and HIDDEN in runs[0][0]
    # A query word, a host-name word and a word on most pages are never expansion terms.
    assert not {"galaxies", "galaxy", "s", "test", "misc", "kitchen"} & set(runs[0][0])


def test_a_new_expansion_revalues_the_queue_and_resume_restores_it(tmp_path):
    scheduler = make_scheduler(
        tmp_path,
        ADAPTIVE_QUERY=QUERY,
        ADAPTIVE_STRATEGY="bestfirst",
        ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0,
        ADAPTIVE_EXPANSION=True,
    )
    state = scheduler.state
    for i in range(20):
        scheduler.enqueue_request(Request(f"http://foo.test/{i}", meta={"link_text": "nebula" if i == 19 else "other"}))
    entry = scheduler.frontier.queued_urls["http://foo.test/19"]
    assert scheduler.frontier.prior_of(entry) == 0.0
    for page, relevance in feedback_pages():
        if state.expansion.observe(page, relevance):
            state._expansion_changed()
    assert HIDDEN in state.expansion.terms
    assert scheduler.frontier.prior_of(entry) > 0.0  # valued anew
    assert scheduler.next_request().url == "http://foo.test/19"  # and first in line
    terms, weights = state.expansion.terms, state.expansion.matcher.weights.tolist()
    scheduler.jobdir.write_snapshot()
    del scheduler

    resumed = make_scheduler(tmp_path, ADAPTIVE_QUERY=QUERY, ADAPTIVE_STRATEGY="bestfirst", ADAPTIVE_EXPANSION=True)
    expansion = resumed.state.expansion
    assert expansion.terms == terms and expansion.matcher.weights.tolist() == weights
    assert expansion.n_pages == 40 and resumed.state.n_revalued == state.n_revalued
    assert resumed.state.link_similarity((), "nebula", "http://foo.test/x") > 0.0


@pytest.mark.parametrize("strategy", ["tres", "bestfirst", "linkgroups", "gain", "bfs"])
def test_revaluing_the_queue_keeps_every_entry_once(strategy):
    scheduler = make_scheduler(
        ADAPTIVE_QUERY=QUERY, ADAPTIVE_STRATEGY=strategy, ADAPTIVE_COLD_START_PAGES=0, ADAPTIVE_EXPANSION=True
    )
    urls = [f"http://foo.test/{i}" for i in range(80)]
    for url in urls:
        scheduler.enqueue_request(Request(url, meta={"link_text": "other"}))
    released = [scheduler.next_request().url for _ in range(10)]
    frontier = scheduler.frontier
    n = frontier.revalue(lambda url, meta, parent: (0.5, int(url.rsplit("/", 1)[1]) / 100))
    ready = len(scheduler.ready)  # released by the frontier already
    assert n == len(frontier) == 70 - ready
    while scheduler.has_pending_requests():
        released.append(scheduler.next_request().url)
    assert sorted(released) == sorted(urls)
    if strategy == "bestfirst":  # the new priors decide: the highest numbers first
        after = [int(url.rsplit("/", 1)[1]) for url in released[10 + ready :]]
        assert after == sorted(after, reverse=True)


def test_a_variant_spells_a_query_word_otherwise():
    assert is_variant("asynchronous", "asyncio") and is_variant("executor", "execution")
    assert is_variant("synchronization", "synchronize")
    assert not is_variant("async", "asyncio")  # a shorter form matches all the query word does, and more
    assert is_variant("async", "asyncio", is_word=True)  # unless the pages say it as a word: "async def"
    assert not is_variant("creat", "create")
    assert not is_variant("asyncio", "asyncio", is_word=True)
    assert not is_variant("multiple", "multicolumn")  # "multi" is not most of either word
    assert not is_variant("nebula", "galaxy") and not is_variant("direction", "directory")


def test_a_blend_joins_the_starts_of_two_neighbouring_query_words():
    words = QueryTerms("How do I use regular expressions to match text?").sequence
    assert words == ["regular", "expression", "match", "text"]  # the query's order, stop words out
    assert is_blend("regex", words) and is_blend("regexp", words)  # REGular EXpression
    threads = QueryTerms("threads, mutexes and condition variables").sequence
    assert is_blend("condvar", threads) and is_blend("mutexcondition", threads)
    assert not is_blend("regular", words)  # a query word is no blend (nor an expansion term)
    assert not is_blend("exreg", words)  # the query's order
    assert not is_blend("retext", words)  # neighbours only: "regular" and "text" are not
    assert not is_blend("rex", words)  # two letters of each, at least
    files = QueryTerms("join paths, list directories, copy, move and delete files").sequence
    assert is_blend("filesystem", QueryTerms("file system paths").sequence)
    assert not is_blend("model", files)  # MOve DELete: three letters of the first word, at least
    assert not is_blend("nebula", words)


def test_a_blend_that_the_best_pages_use_joins_the_query():
    """Pages about regular expressions call them "regex" (and say "nebula" as often): by
    default the blend of the query's neighbouring words joins the query, the neighbour does not."""
    expansion = QueryExpansion(QueryTerms("regular expressions in python"), min_background=8, variants_only=True)
    for i in range(40):
        if i % 4 == 0:
            page = PageFields(f"http://s.test/re/{i}.html", f"Regex syntax {i}", "Regex", "regex nebula " * 9)
            expansion.observe(page, 0.9)
        else:
            expansion.observe(PageFields(f"http://s.test/m/{i}.html", f"Misc {i}", "", "kitchen garden " * 5), 0.0)
    assert expansion.terms == ["regex"]


def test_a_shorter_form_of_a_query_word_matches_its_own_word_only():
    """The best pages say "multi-threaded", so "multi" (a shorter form of the query's
    "multiple", said as a word of its own) joins the query. It names the pages' multi-threaded
    code, not every word it starts: a link to std::multimap or to multibyte characters gains
    nothing from it."""
    expansion = QueryExpansion(QueryTerms("run code in multiple threads"), min_background=8, variants_only=True)
    for i in range(40):
        if i % 4 == 0:
            body = "multi-threaded programs, multi-producer queues " * 5
            expansion.observe(PageFields(f"http://s.test/mt/{i}.html", f"Threads {i}", "Threads", body), 0.9)
        else:
            expansion.observe(PageFields(f"http://s.test/m/{i}.html", f"Misc {i}", "", "kitchen garden " * 5), 0.0)
    assert expansion.terms == ["multi"]
    assert expansion.share_of_link("Multi-threaded servers", "http://x.test/servers.html") > 0
    assert expansion.share_of_link("Guide", "http://x.test/multi_thread/guide.html") > 0
    for anchor, url in [
        ("std::multimap", "http://x.test/w/cpp/container/multimap.html"),
        ("mbtowc", "http://x.test/w/c/string/multibyte/mbtowc.html"),
        ("multiprocessing", "http://x.test/library/multiprocessing.html"),
    ]:
        assert expansion.share_of_link(anchor, url) == 0.0
    # A term that spells a query word otherwise, longer, still matches every word it starts.
    terms = QueryTerms.of_stems(["multi", "asynchronous", "creat"], [0.4, 0.3, 0.3], exact_stems=["multi", "creat"])
    assert terms.present_ids("multimap asynchronously multi") == (0, 1)
    assert terms.present_ids("multimap multibyte") == ()
    assert terms.present_ids("created creating") == (2,) and terms.present_ids("create creation") == ()


def variant_feedback(n: int = 40) -> list[tuple[PageFields, float]]:
    """Relevant pages that say "asynchronous" (a variant of the query's "asyncio") and "nebula"
    (no variant of any query word) on every page; unrelated pages that say neither."""
    pages = []
    for i in range(n):
        if i % 4 == 0:
            body = "asynchronous nebula " * 9
            pages.append((PageFields(f"http://s.test/aio/{i}.html", f"Asyncio loops {i}", "Nebula", body), 0.9))
        else:
            pages.append((PageFields(f"http://s.test/misc/{i}.html", f"Misc {i}", "", "kitchen garden " * 5), 0.0))
    return pages


def test_by_default_only_the_variants_of_the_query_words_join_it():
    """A word every relevant page shares but that spells no query word is the best pages'
    neighbouring topic, not the query's: by default the links it names keep their value,
    while a link that spells a query word otherwise ("Asynchronous sockets") is lifted."""
    scheduler = make_scheduler(ADAPTIVE_QUERY="asyncio event loops", ADAPTIVE_STRATEGY="bestfirst")
    state = scheduler.state
    assert state.expansion.variants_only  # the default
    anchors = {"http://foo.test/variant": "Asynchronous sockets", "http://foo.test/neighbour": "Nebula catalogue"}
    for url, anchor in anchors.items():
        scheduler.enqueue_request(Request(url, meta={"link_text": anchor}))
    priors = {url: scheduler.frontier.prior_of(scheduler.frontier.queued_urls[url]) for url in anchors}
    assert priors == {url: 0.0 for url in anchors}
    for page, relevance in variant_feedback():
        if state.expansion.observe(page, relevance):
            state._expansion_changed()
    assert state.expansion.terms == ["asynchronous"]
    frontier = scheduler.frontier
    assert frontier.prior_of(frontier.queued_urls["http://foo.test/variant"]) > 0.0
    assert frontier.prior_of(frontier.queued_urls["http://foo.test/neighbour"]) == 0.0
    # RM3's feedback takes both.
    feedback = QueryExpansion(QueryTerms("asyncio event loops"), min_background=8)
    for page, relevance in variant_feedback():
        feedback.observe(page, relevance)
    assert {"asynchronous", HIDDEN} <= set(feedback.terms)


def test_the_expansion_setting_names_its_modes():
    from adaptive_spider.settings.config import AdaptiveConfig
    from adaptive_spider.settings.parsers import ConfigError

    def mode(value):
        return AdaptiveConfig.from_settings({"ADAPTIVE_EXPANSION": value}).expansion

    assert [mode(v) for v in ("variants", "Feedback", "off", True, "false", "1")] == [
        "variants", "feedback", "off", "feedback", "off", "feedback",
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="ADAPTIVE_EXPANSION: unknown value 'varients'; choose one of variants"):
        mode("varients")


def test_the_two_mixes():
    assert mix(0.4, 0.2, 0.5) == pytest.approx(0.3)  # RM3: the query's share is halved
    assert mix(0.4, 0.2, 0.5, "add") == pytest.approx(0.46)  # added to what the query leaves
    assert mix(0.4, 0.0, 0.5, "add") == 0.4 and mix(0.0, 0.2, 0.5, "add") == mix(0.0, 0.2, 0.5)
