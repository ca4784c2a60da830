"""The online link classifier (frontier/learn/linkclassifier.py) and TRES with it: it learns
from the crawl which URL, host and anchor tokens lead to relevant pages, and TRES releases
such links first; its state goes with TRES' through JOBDIR."""

from __future__ import annotations

import pickle
import zlib

import numpy as np
from scrapy import Request

from adaptive_spider.demo.site import QUERY
from adaptive_spider.frontier import features
from adaptive_spider.frontier.learn.linkclassifier import (
    N_BUCKETS,
    TOKEN_WIDTH,
    LinkClassifier,
    link_token_strings,
    link_tokens,
)
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl
from tests.test_frontier import make_frontier
from tests.test_resume import make_scheduler


def rows(*links: tuple[str, str]) -> np.ndarray:
    out = np.zeros((len(links), TOKEN_WIDTH), dtype=np.int32)
    for row, (url, anchor) in zip(out, links):
        tokens = link_tokens(url, anchor)
        row[: len(tokens)] = tokens
    return out


def test_tokens_name_host_sections_page_type_and_words():
    tokens = link_token_strings("http://Docs.Python.test/3/library/asyncio-task.html?x=1", "Coroutines and Tasks 3")
    assert tokens[:5] == ["h:docs.python.test", "d:docs.python.test/3", "d:docs.python.test/3/library", "x:html", "x:?"]
    assert {"u:asyncio", "u:task", "u:#", "a:coroutines", "a:tasks", "a:#"} <= set(tokens)
    assert link_token_strings("http://a.test/music/") == ["h:a.test", "d:a.test/music", "x:/", "u:music"]


def test_token_hashes_are_stable_distinct_and_at_most_the_width():
    # CRC-32, not Python's salted hash: the same buckets in every process, so the order is
    # deterministic given the fetch order.
    assert link_tokens("http://a.test/")[0] == zlib.crc32(b"h:a.test") % (N_BUCKETS - 1) + 1
    long_anchor = " ".join(f"word{i}" for i in range(50))
    tokens = link_tokens("http://a.test/x/y.html", long_anchor)
    assert len(tokens) == TOKEN_WIDTH == len(set(tokens)) and all(0 < t < N_BUCKETS for t in tokens)


def test_the_classifier_learns_that_links_with_a_token_lead_to_relevant_pages():
    """A synthetic stream: links under /asyncio/ lead to relevant pages, the others not; a new
    /asyncio/ link (never seen URL, other anchor) then scores above a new other link."""
    classifier = LinkClassifier()
    assert not classifier.lift(rows(("http://a.test/asyncio/new.html", ""))).any()  # no evidence: no lift
    for i in range(120):
        good = i % 4 == 0
        url = f"http://a.test/{'asyncio' if good else 'misc'}/page-{i}.html"
        classifier.update(rows((url, f"page {i}"))[0], 1.0 if good else 0.0)
    new = rows(("http://a.test/asyncio/unseen.html", "read on"), ("http://a.test/misc/unseen.html", "read on"))
    p_t, p_other = classifier.predict(new)
    assert p_t > 0.7 > 0.2 > p_other
    lift = classifier.lift(new)
    assert lift[0] > 0.3 and lift[1] == 0  # never below the prior
    assert abs(classifier.base_rate - 0.25) < 0.2


def test_the_classifier_is_deterministic_and_its_state_round_trips():
    def train() -> LinkClassifier:
        classifier = LinkClassifier()
        for i in range(50):
            classifier.update(rows((f"http://h{i % 3}.test/s{i % 5}/p{i}.html", "a b"))[0], (i % 7) / 7)
        return classifier

    first, second = train(), train()
    probe = rows(("http://h1.test/s2/q.html", "b"), ("http://h0.test/s4/", ""))
    assert np.array_equal(first.predict(probe), second.predict(probe))
    restored = LinkClassifier()
    restored.load_state_dict(pickle.loads(pickle.dumps(first.state_dict())))
    assert np.array_equal(restored.predict(probe), first.predict(probe))
    for classifier in (first, restored):  # and it trains on exactly as the saved one
        classifier.update(probe[0], 1.0)
    assert np.array_equal(restored.predict(probe), first.predict(probe))


def add(frontier, url, anchor_text="", *, anchor=0.3, parent_score=0.3):
    static = features.static_features(
        url, depth=1, parent_score=parent_score, anchor_similarity=anchor, round_discovered=0
    )
    domain_id = frontier.domains.id_of(url.split("/")[2])
    return frontier.add(
        Request(url, meta={"link_text": anchor_text}), static, domain_id, -1, 0.6 * anchor + 0.4 * parent_score
    )


def release_and_reward(frontier, relevant: str, rounds: int) -> list[str]:
    released = []
    for _ in range(rounds):
        for request, choice in frontier.next_batch(4):
            released.append(request.url)
            reward = 1.0 if relevant in request.url else 0.0
            frontier.observe(choice.features, reward, -1, choice.leaf, choice.prior, link=choice.tokens)
    return released


def test_tres_ranks_links_like_those_that_led_to_relevant_pages_first():
    """Same priors everywhere: only what the classifier learned from the first rewards
    (the /guide/ section is relevant) can put the /guide/ links first."""
    frontier = make_frontier(
        strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, link_classifier_refresh=4
    )
    for i in range(40):
        add(frontier, f"http://a.test/{'guide' if i % 4 == 0 else 'blog'}/old-{i}.html", "more")
    release_and_reward(frontier, "/guide/", rounds=5)
    for i in range(40):
        add(frontier, f"http://a.test/blog/new-{i}.html", "more")
    for i in range(8):
        add(frontier, f"http://a.test/guide/new-{i}.html", "more")
    first = [request.url for request, _ in frontier.next_batch(8)]
    assert sum("/guide/new-" in url for url in first) >= 6, first

    off = make_frontier(strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, link_classifier=0)
    assert not off.strategy.reads_link_tokens and off.store.tokens.shape[1] == 0


def test_tres_learns_where_the_relevant_pages_are_not_where_pages_score_middling():
    """Same priors everywhere. Every /reference/ page scores .3, under the relevant line; one
    /guide/ page in four is relevant (.9), the others score .05: the guide's mean (.26) is lower.
    TRES learns from hits by default and puts the guide's links first; learning from the score
    itself (ADAPTIVE_TRES_REWARD = relevance) follows the middling section instead."""

    def first_released(reward: str) -> list[str]:
        frontier = make_frontier(
            strategy="tres",
            warmup_pages=0,
            epsilon_start=0.0,
            epsilon_end=0.0,
            link_classifier_refresh=4,
            tres_reward=reward,
        )
        for i in range(48):
            add(frontier, f"http://a.test/{'guide' if i % 2 else 'reference'}/old-{i}.html", "more")
        for _ in range(10):
            for request, choice in frontier.next_batch(4):
                number = int(request.url.rsplit("-", 1)[1].split(".")[0])
                if "/reference/" in request.url:
                    relevance = 0.3
                else:
                    relevance = 0.9 if number % 8 == 1 else 0.05
                frontier.observe(choice.features, relevance, -1, choice.leaf, choice.prior, link=choice.tokens)
        for i in range(8):
            add(frontier, f"http://a.test/reference/new-{i}.html", "more")
            add(frontier, f"http://a.test/guide/new-{i}.html", "more")
        return [request.url for request, _ in frontier.next_batch(8)]

    by_hits = first_released("hit")
    assert sum("/guide/new-" in url for url in by_hits) >= 6, by_hits
    by_score = first_released("relevance")
    assert sum("/reference/new-" in url for url in by_score) >= 6, by_score


def test_tres_saves_and_restores_the_link_classifier_with_jobdir(tmp_path):
    scheduler = make_scheduler(tmp_path, ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS=0, ADAPTIVE_WARMUP_PAGES=0)
    state = scheduler.state
    for i in range(40):
        section = "widgets" if i % 2 else "other"
        scheduler.enqueue_request(Request(f"http://foo.test/{section}/{i}", meta={"link_text": section}))
    for _ in range(20):
        request = scheduler.next_request()
        assert request.meta["adaptive"]["link"]  # the link's tokens travel with the request
        state.domains.record_response("foo.test", 200, 0.1)
        state._record_page(request, request.url, 0.9 if "/widgets/" in request.url else 0.0)
    links = scheduler.frontier.strategy.links
    assert links.n_updates == 20
    scheduler.jobdir.write_snapshot()
    probe = rows(("http://foo.test/widgets/new", "widgets"), ("http://foo.test/other/new", "other"))
    expected = links.predict(probe)
    del scheduler

    resumed = make_scheduler(tmp_path)
    restored = resumed.frontier.strategy.links
    assert restored.n_updates == 20 and np.array_equal(restored.predict(probe), expected)
    assert expected[0] > expected[1]


@crawl_test
async def test_a_crawl_with_the_link_classifier_finds_the_section_the_prior_cannot_see(demo_site):
    """The query is about astronomy, but the relevance class marks the music section relevant:
    the link prior (the anchor and URL words alone here) keeps reading astronomy words; TRES
    with the link classifier learns from the first music pages that links under /music/ pay,
    and fetches far more of them. One request at a time: the fetch order does not depend on timing."""
    from tests.test_plugins import music_articles

    site, url = demo_site
    music = music_articles(site, url)
    found = {}
    for weight in (1.0, 0.0):
        settings = project_settings(
            ADAPTIVE_STRATEGY="tres",
            ADAPTIVE_LINK_CLASSIFIER=weight,
            ADAPTIVE_RELEVANCE="tests.test_plugins.MusicRelevance",
            ADAPTIVE_PRIOR_WEIGHTS={"anchor": 1, "context": 0, "parent": 0},
            CLOSESPIDER_PAGECOUNT=100,
            CONCURRENT_REQUESTS=1,
        )
        result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
        found[weight] = len(music & set(result.fetched))
    assert found[1.0] >= 50 and found[1.0] >= 3 * found[0.0], found  # seen: 84 against 0
