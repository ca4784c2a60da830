"""Frontier internals: features, leaves, the Q-network, domain filters, tiers."""

import contextlib
import signal
from collections import Counter

import numpy as np
import pytest
from scrapy import Request

from adaptive_spider.frontier import features
from adaptive_spider.frontier.domains import DomainLoad, DomainProfiles
from adaptive_spider.frontier.frontier import Frontier
from adaptive_spider.frontier.learn.qnet import DoubleDQN, QNetwork
from adaptive_spider.frontier.learn.tree import LeafPartition
from adaptive_spider.frontier.pagelog import PageLog
from adaptive_spider.frontier.sections import SectionReturns, owned_section, section_of
from adaptive_spider.settings.config import AdaptiveConfig

#: TRES with its random picks off: its order is then bestfirst's key until it has learned.
NO_RANDOM_PICKS = {"warmup_pages": 0, "epsilon_start": 0.0, "epsilon_end": 0.0}


def make_frontier(**settings):
    # Each test here checks one rule of the order; the share for new domains is tested on its own.
    settings.setdefault("new_domain_share", 0.0)
    config = AdaptiveConfig.from_settings({f"ADAPTIVE_{k.upper()}": v for k, v in settings.items()})
    return Frontier(
        config, DomainProfiles(config.domain_weights, min_attempts=config.unreliable_min_attempts), PageLog()
    )


def add(frontier, url, *, anchor=0.0, parent_score=0.0, parent=-1, priority=0, depth=1, context=""):
    static = features.static_features(
        url, depth=depth, parent_score=parent_score, anchor_similarity=anchor, round_discovered=0
    )
    domain_id = frontier.domains.id_of(url.split("/")[2])
    request = Request(url, priority=priority, meta={"link_context": context})
    return frontier.add(request, static, domain_id, parent, 0.7 * anchor + 0.3 * parent_score)


def lifting_frontier(section_lift, strategy="bestfirst"):
    """``strategy`` (TRES without random picks) with the section lift bounded by
    ``section_lift`` (1: off), lib.test and other.test answered once (no probe), no new-domain share."""
    settings = {"ADAPTIVE_NEW_DOMAIN_SHARE": 0.0, "ADAPTIVE_SECTION_LIFT": section_lift, "ADAPTIVE_STRATEGY": strategy}
    settings.update({f"ADAPTIVE_{k.upper()}": v for k, v in NO_RANDOM_PICKS.items()})
    frontier = Frontier(
        AdaptiveConfig.from_settings(settings),
        DomainProfiles(),
        PageLog(section_lift=section_lift),
    )
    for host in ("lib.test", "other.test"):
        frontier.domains.record_response(host, 200, 0.01)
    return frontier


def drain(frontier, n=4):
    out = []
    while True:
        batch = frontier.next_batch(n)
        if not batch:
            return out
        out.extend(batch)


# -- features -------------------------------------------------------------------------
def test_static_features_are_normalised():
    x = features.static_features(
        "http://a.test/x/y/z.html?q=1", depth=3, parent_score=0.5, anchor_similarity=0.25, round_discovered=9
    )
    names = dict(zip(features.STATIC_NAMES, x))
    assert names["depth"] == pytest.approx(3 / 20)
    assert names["path_depth"] == pytest.approx(3 / 10)
    assert names["has_query"] == 1.0
    assert 0 < names["round_discovered"] < 1


def test_domain_features_are_current_at_selection_time():
    frontier = make_frontier(strategy="bfs")
    entry = add(frontier, "http://slowpoke.test/a")
    before = features.describe(frontier.features(np.array([entry]))[0])
    for _ in range(4):
        frontier.domains.record_relevance("slowpoke.test", 1.0)
    frontier.domains.record_failure("slowpoke.test")
    after = features.describe(frontier.features(np.array([entry]))[0])
    assert after["domain_relevance"] > before["domain_relevance"]
    assert after["domain_count"] > before["domain_count"] == 0
    assert after["domain_failure_rate"] == 1.0


def test_sibling_score_follows_fetched_siblings_of_the_same_context():
    frontier = make_frontier(strategy="bfs")
    parent = frontier.pages.add(domain_id=0, relevance=0.2)
    model_layer = add(frontier, "http://a.test/aggregation", parent=parent, parent_score=0.2, context="The model layer")
    forms = add(frontier, "http://a.test/forms", parent=parent, parent_score=0.2, context="Forms")

    def sibling_scores():
        rows = frontier.features(np.array([model_layer, forms]))
        return list(rows[:, features.FEATURE_NAMES.index("sibling_score")])

    assert sibling_scores() == pytest.approx([0.2, 0.2])  # nothing fetched yet: the parent's relevance
    fetched_group = frontier.pages.group_of(parent, "The model layer")
    frontier.pages.add(domain_id=0, relevance=1.0, group_id=fetched_group)
    frontier.pages.add(domain_id=0, relevance=1.0, group_id=fetched_group)
    beside, elsewhere = sibling_scores()
    assert beside == pytest.approx((2.0 + 0.2) / 3) and elsewhere == pytest.approx(0.2)


@pytest.mark.parametrize("strategy", ["bestfirst", "tres"])
def test_a_list_whose_fetched_links_missed_gives_way(strategy):
    """A long list under a heading that shares a word with the query ("Variables" for
    "condition variables") ranks above a weaker link elsewhere until its first entries miss;
    a list whose links were relevant keeps its rank. TRES ranks by the same key."""

    def crawl(patience):
        frontier = make_frontier(strategy=strategy, sibling_patience=patience, **NO_RANDOM_PICKS)
        for host in ("tool.test", "lib.test"):
            frontier.domains.record_response(host, 200, 0.01)  # both answered: no probe waits
        listing = frontier.pages.add(domain_id=0, relevance=0.3)
        variables = [
            add(frontier, f"http://tool.test/variable/V{i}", parent=listing, parent_score=0.3, context="Variables")
            for i in range(40)
        ]
        elsewhere = add(frontier, "http://lib.test/thread/condvar", anchor=0.1)
        group = frontier.pages.group_of(listing, "Variables")
        order = []
        while batch := frontier.next_batch(1):
            url = batch[0][0].url
            order.append(url)
            if url.startswith("http://tool.test/"):
                frontier.pages.add(domain_id=0, relevance=0.05, group_id=group)  # a miss
        assert len(order) == len(variables) + 1 and elsewhere is not None
        return order.index("http://lib.test/thread/condvar")

    assert crawl(patience=0) == 40  # the prior alone: the whole list first (0.09 > 0.07)
    assert crawl(patience=4) == 2  # two misses: 0.09 * 4 / 6 = 0.06 < 0.07

    frontier = make_frontier(strategy=strategy, sibling_patience=4, **NO_RANDOM_PICKS)
    frontier.domains.record_response("lib.test", 200, 0.01)
    listing = frontier.pages.add(domain_id=0, relevance=0.3)
    for i in range(3):
        add(frontier, f"http://lib.test/sync/S{i}", parent=listing, parent_score=0.3, context="Synchronization")
    add(frontier, "http://lib.test/other", anchor=0.1)
    group = frontier.pages.group_of(listing, "Synchronization")
    frontier.pages.add(domain_id=0, relevance=0.05, group_id=group)
    frontier.pages.add(domain_id=0, relevance=0.9, group_id=group)  # a hit: misses no longer count
    assert frontier.pages.misses(group) == 0
    urls = [request.url for request, _ in drain(frontier, n=1)]
    assert urls[-1] == "http://lib.test/other"


@pytest.mark.parametrize("strategy", ["bestfirst", "tres"])
def test_a_section_whose_pages_were_relevant_comes_forward_and_one_that_missed_gives_way(strategy):
    """A package whose fetched classes were relevant brings its other classes (no word of the
    query in their names) before better-named links elsewhere; a directory whose pages missed
    keeps its links' priors. The entries were queued before the sections' pages were scored:
    a rise re-ranks them (TRES: its first at once, later ones every 16 pages at most)."""

    def order(section_lift):
        frontier = lifting_frontier(section_lift, strategy)
        for i in range(3):
            add(frontier, f"http://lib.test/concurrent/Map{i}", anchor=0.3)
            add(frontier, f"http://other.test/misc/Page{i}", anchor=0.4)
            add(frontier, f"http://lib.test/driver/Bus{i}", anchor=0.5)
        sections = frontier.pages.sections
        for i in range(6):
            sections.record(f"http://other.test/a/{i}", 0.2)
        for name in ("Semaphore", "Lock", "Latch"):
            sections.record(f"http://lib.test/concurrent/{name}", 0.6)
        for name in ("index", "usb", "pci"):
            sections.record(f"http://lib.test/driver/{name}", 0.05)
        return [request.url.split("/")[3] for request, _ in drain(frontier, n=1)]

    assert order(section_lift=3.0) == ["concurrent"] * 3 + ["driver"] * 3 + ["misc"] * 3
    assert order(section_lift=1.0) == ["driver"] * 3 + ["misc"] * 3 + ["concurrent"] * 3  # off: the prior alone


@contextlib.contextmanager
def deadline(seconds):
    """Raise TimeoutError in the block after ``seconds`` (a loop that never ends fails the test)."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_raised_sections_old_ids_reused_by_a_retry_in_another_tier_never_stall_the_frontier():
    """A released entry's id goes to the next link queued, and a redirect or a retry comes back
    at another priority (another tier). A rise of the section the id was first queued in must
    leave the retry in its own tier: it is released, and then the frontier is empty (it used to
    loop for ever, its tier counting one entry its heap did not have)."""
    frontier = lifting_frontier(3.0)
    first = add(frontier, "http://lib.test/concurrent/Lock.html", anchor=0.3)
    assert [request.url for request, _ in frontier.next_batch(1)] == ["http://lib.test/concurrent/Lock.html"]
    retry = add(frontier, "http://other.test/page.html", anchor=0.3, priority=-1)
    assert retry == first  # the released id, reused
    sections = frontier.pages.sections
    for i in range(3):
        sections.record(f"http://other.test/a/{i}", 0.1)
    for name in ("Semaphore", "Latch"):
        sections.record(f"http://lib.test/concurrent/{name}", 0.9)
    with deadline(10):
        released = drain(frontier, n=1)
    assert [request.url for request, _ in released] == ["http://other.test/page.html"]
    assert frontier.next_batch(4) == []


def test_a_sections_lift_is_bounded_shrunk_toward_the_crawls_mean_never_below_one_and_survives_a_snapshot():
    sections = SectionReturns(most=3.0)
    assert section_of("http://Lib.test/api/java/util/concurrent/Lock.html?x=1") == "lib.test/api/java/util/concurrent/"
    assert sections.lift("http://lib.test/a/b") == 1.0  # nothing fetched yet
    sections.record("http://lib.test/good/1", 0.9)
    sections.record("http://lib.test/bad/1", 0.1)
    one_page = sections.lift("http://lib.test/good/2")
    assert 1.0 < one_page < 3.0  # one relevant page is a sign, not yet a section
    for i in range(20):
        sections.record(f"http://lib.test/good/{i}", 0.9)
        sections.record(f"http://lib.test/bad/{i}", 0.05)
    assert sections.lift("http://lib.test/good/x") == 3.0 and sections.lift("http://lib.test/bad/x") == 1.0
    assert sections.lift("http://lib.test/unseen/x") == 1.0
    resumed = SectionReturns(most=3.0)
    resumed.load_state_dict(sections.state_dict())
    assert resumed.lift("http://lib.test/good/x") == 3.0
    assert SectionReturns(most=1.0).lift("http://lib.test/good/x") == 1.0


def test_many_entries_sibling_misses_and_section_lifts_read_at_once_are_those_read_one_by_one():
    """TRES ranks whole leaves at once: the vectorised reads must agree with bestfirst's."""
    frontier = lifting_frontier(3.0, "tres")
    pages = frontier.pages
    listing = pages.add(domain_id=0, relevance=0.3)
    entries = [
        add(frontier, f"http://lib.test/{section}/{i}", parent=listing, context=section)
        for section in ("concurrent", "driver", "misc")
        for i in range(4)
    ]
    entries.append(add(frontier, "http://other.test/no/parent"))
    for i in range(3):
        pages.add(domain_id=0, relevance=0.05, group_id=pages.group_of(listing, "driver"))
        pages.sections.record(f"http://lib.test/concurrent/c{i}", 0.8)
        pages.sections.record(f"http://lib.test/driver/d{i}", 0.05)
    pages.add(domain_id=0, relevance=0.9, group_id=pages.group_of(listing, "misc"))
    ids = np.array(entries, dtype=np.int64)
    misses = frontier.sibling_misses_of(ids)
    assert misses.tolist() == [frontier.sibling_misses(e) for e in entries]
    assert misses.max() == 3.0 and misses[-1] == 0.0  # the driver list's misses; a link of no page has none
    assert frontier.section_lifts(ids).tolist() == [frontier.section_lift(e) for e in entries]
    assert frontier.section_lifts(ids)[0] > 1.0 == frontier.section_lifts(ids)[4]


def test_a_directory_named_after_a_fetched_page_starts_from_that_pages_relevance():
    """cppreference and BoostBook file a class's members in a directory named after the class's
    page: before any member is fetched, the directory ranks by what the class's page gave, if
    it was relevant. A directory named after no relevant page has no lift, and its own pages
    outweigh its owner's."""
    sections = SectionReturns(most=3.0)
    assert owned_section("http://lib.test/cpp/random/binomial.html?x=1") == "lib.test/cpp/random/binomial/"
    assert owned_section("http://lib.test/cpp/random/") == ""
    for i in range(10):
        sections.record(f"http://other.test/misc/{i}", 0.1)
    sections.record("http://lib.test/cpp/random/binomial.html", 0.8)
    sections.record("http://lib.test/cpp/algorithm.html", 0.1)
    sections.record("http://lib.test/cpp/multibyte.html", 0.45)  # above the mean, under the threshold
    member_lift = sections.lift("http://lib.test/cpp/random/binomial/reset.html")
    assert member_lift > 1.5
    assert sections.lift("http://lib.test/cpp/algorithm/copy.html") == 1.0  # its owner missed
    assert sections.lift("http://lib.test/cpp/multibyte/mbtowc.html") == 1.0  # its owner was not relevant
    assert sections.lift("http://lib.test/cpp/random/normal/reset.html") == 1.0  # no owner fetched
    resumed = SectionReturns(most=3.0)
    resumed.load_state_dict(sections.state_dict())
    assert resumed.lift("http://lib.test/cpp/random/binomial/param.html") == member_lift
    for i in range(12):
        sections.record(f"http://lib.test/cpp/random/binomial/m{i}.html", 0.05)
    assert sections.lift("http://lib.test/cpp/random/binomial/reset.html") == 1.0  # its own pages missed


def test_bestfirst_brings_forward_the_queued_members_of_a_class_whose_page_was_relevant():
    """The members' links were queued (bare names: "reset", "param") before their class's page
    was fetched; its relevance re-ranks them ahead of better-worded links elsewhere."""

    def order(section_lift):
        frontier = lifting_frontier(section_lift)
        for i in range(3):
            add(frontier, f"http://lib.test/random/binomial/member{i}.html", anchor=0.3)
            add(frontier, f"http://other.test/misc/page{i}.html", anchor=0.4)
        sections = frontier.pages.sections
        for i in range(6):
            sections.record(f"http://other.test/a/{i}", 0.2)
        sections.record("http://lib.test/random/binomial.html", 0.9)
        return [request.url.split("/")[3] for request, _ in drain(frontier, n=1)]

    assert order(section_lift=3.0) == ["random"] * 3 + ["misc"] * 3
    assert order(section_lift=1.0) == ["misc"] * 3 + ["random"] * 3


@pytest.mark.parametrize("strategy", ["bestfirst", "tres"])
def test_blind_links_come_nearest_the_seeds_first_during_the_cold_start_only(strategy):
    """Below ADAPTIVE_HOLD_BELOW a prior shows no sign of relevance: during the cold start such
    links come nearest the seeds first, and as deep by their prior; after it, by their prior."""

    def order(blind_below):
        frontier = make_frontier(strategy=strategy, **NO_RANDOM_PICKS)
        frontier.domains.record_response("a.test", 200, 0.01)
        add(frontier, "http://a.test/contents", depth=1)  # no sign at all, next to the seed
        add(frontier, "http://a.test/far", parent_score=0.16, depth=3)  # prior 0.048: a weak parent only
        add(frontier, "http://a.test/near", parent_score=0.1, depth=1)  # prior 0.03
        add(frontier, "http://a.test/sign", anchor=0.5, depth=4)  # prior 0.35
        out = []
        while batch := frontier.next_batch(1, blind_below=blind_below):
            out.append(batch[0][0].url.rsplit("/", 1)[1])
        return out

    assert order(0.05) == ["sign", "near", "contents", "far"]
    assert order(None) == ["sign", "far", "near", "contents"]

    frontier = make_frontier(strategy=strategy, **NO_RANDOM_PICKS)
    frontier.domains.record_response("a.test", 200, 0.01)
    add(frontier, "http://a.test/contents", depth=1)
    add(frontier, "http://a.test/far", parent_score=0.16, depth=3)
    add(frontier, "http://a.test/other", depth=1)
    first = frontier.next_batch(1, blind_below=0.05)[0][0].url
    rest = [request.url for request, _ in frontier.next_batch(2)]  # the cold start is over: reordered
    assert (first, rest) == ("http://a.test/contents", ["http://a.test/far", "http://a.test/other"])


def test_domain_weight_setting_covers_subdomains():
    frontier = make_frontier(strategy="bfs", domain_weights="example.com=3")
    entry = add(frontier, "http://docs.example.com/a")
    other = add(frontier, "http://other.test/a")
    weights = frontier.features(np.array([entry, other]))[:, features.FEATURE_NAMES.index("domain_weight")]
    assert list(weights) == [3.0, 1.0]


# -- tiers and baselines ------------------------------------------------------------------
def test_explicit_priority_is_a_tier_above_the_learned_order():
    frontier = make_frontier(strategy="bestfirst")
    add(frontier, "http://a.test/great", anchor=1.0)
    add(frontier, "http://a.test/urgent", anchor=0.0, priority=5)
    add(frontier, "http://a.test/good", anchor=0.5)
    order = [request.url.rsplit("/", 1)[1] for request, _ in drain(frontier, 1)]
    assert order == ["urgent", "great", "good"]


def test_bfs_is_fifo_and_dfs_is_lifo():
    for strategy, expected in (("bfs", list("abcd")), ("dfs", list("dcba"))):
        frontier = make_frontier(strategy=strategy)
        for name in "abcd":
            add(frontier, f"http://a.test/{name}")
        assert [r.url[-1] for r, _ in drain(frontier, 1)] == expected


def test_random_order_is_deterministic_given_the_seed():
    orders = []
    for seed in (7, 7, 8):
        frontier = make_frontier(strategy="random", seed=seed)
        for i in range(30):
            add(frontier, f"http://a.test/{i}")
        orders.append([r.url for r, _ in drain(frontier, 3)])
    assert orders[0] == orders[1] != orders[2]
    assert sorted(orders[0]) == sorted(orders[2])


# -- domain filters -------------------------------------------------------------------------
def test_domain_cap_drops_the_rest_of_a_domain():
    frontier = make_frontier(strategy="bfs", domain_max_pages=2)
    for i in range(5):
        add(frontier, f"http://capped.test/{i}")
    add(frontier, "http://free.test/0")
    released = [r.url for r, _ in drain(frontier, 10)]
    assert released == ["http://capped.test/0", "http://capped.test/1", "http://free.test/0"]
    assert frontier.filtered["domain_cap"] == 3
    assert len(frontier) == 0


class RecordingListener:
    """A FrontierListener that writes down what it hears."""

    def __init__(self):
        self.events = []

    def on_queued(self, entry, request, parent_relevance, domain_id, preview):
        self.events.append(("queued", entry, request.url))

    def on_released(self, entry, request):
        self.events.append(("released", entry, request.url))

    def on_dropped(self, entry):
        self.events.append(("dropped", entry))


def test_the_listener_hears_every_entry_join_and_leave():
    frontier = make_frontier(strategy="bestfirst", domain_max_pages=1)
    frontier.listener = listener = RecordingListener()
    frontier.domains.record_response("capped.test", 200, 0.1)  # no probe first
    first = add(frontier, "http://capped.test/0", anchor=0.9)
    second = add(frontier, "http://capped.test/1", anchor=0.1)
    better = frontier.take_better_link(second, lambda request: None, np.zeros(6, dtype=np.float32), 0, -1, 0.5)
    assert listener.events == [
        ("queued", first, "http://capped.test/0"),
        ("queued", second, "http://capped.test/1"),
        ("dropped", second),
        ("queued", better, "http://capped.test/1"),
    ]
    del listener.events[:]
    assert [r.url for r, _ in drain(frontier, 10)] == ["http://capped.test/0"]
    # The filters run as the round is chosen, the releases at its end.
    assert listener.events == [("dropped", better), ("released", first, "http://capped.test/0")]
    assert frontier.filtered["domain_cap"] == 1 and len(frontier) == 0


def test_unreliable_domain_is_skipped_after_min_attempts():
    frontier = make_frontier(strategy="bfs", unreliable_min_attempts=3, unreliable_threshold=0.5)
    for i in range(3):
        add(frontier, f"http://flaky.test/{i}")
    add(frontier, "http://fine.test/0")
    frontier.domains.record_failure("flaky.test", dns=True)
    frontier.domains.record_failure("flaky.test")
    assert len(drain(frontier, 10)) == 4  # two failures are not enough attempts yet
    for i in range(3):
        add(frontier, f"http://flaky.test/again-{i}")
    frontier.domains.record_failure("flaky.test")
    assert drain(frontier, 10) == []
    assert frontier.filtered["unreliable"] == 3


def test_slow_domain_is_released_after_the_others():
    frontier = make_frontier(strategy="bfs", slow_domain_ms=500)
    for _ in range(3):
        frontier.domains.record_response("slow.test", 200, 2.0)
        frontier.domains.record_response("quick.test", 200, 0.05)
    add(frontier, "http://slow.test/a")
    add(frontier, "http://quick.test/a")
    add(frontier, "http://quick.test/b")
    assert [r.url for r, _ in drain(frontier, 1)] == [
        "http://quick.test/a",
        "http://quick.test/b",
        "http://slow.test/a",
    ]


def test_a_host_that_takes_seconds_an_answer_keeps_its_place_by_default():
    """Erlang's documentation answers in 3 s and holds relevant pages of most of the big web's
    topics: a host that slow still gets its best links in the strategy's order (the downloader's
    places it may hold are ADAPTIVE_DOMAIN_IN_FLIGHT's business); only one slower than
    ADAPTIVE_SLOW_DOMAIN_MS waits for everything else, which a crawl with a budget never ends."""
    frontier = make_frontier(strategy="bestfirst")
    for _ in range(5):
        frontier.domains.record_response("slow.test", 200, 3.5)
        frontier.domains.record_response("quick.test", 200, 0.05)
    add(frontier, "http://quick.test/a", anchor=0.9)
    add(frontier, "http://slow.test/a", anchor=0.5)
    add(frontier, "http://quick.test/b", anchor=0.1)
    assert [r.url for r, _ in drain(frontier, 1)] == [
        "http://quick.test/a",
        "http://slow.test/a",
        "http://quick.test/b",
    ]
    for _ in range(10):
        frontier.domains.record_response("slow.test", 200, 12.0)  # past the default: last
    add(frontier, "http://slow.test/b", anchor=0.9)
    add(frontier, "http://quick.test/c", anchor=0.1)
    assert [r.url for r, _ in drain(frontier, 1)] == ["http://quick.test/c", "http://slow.test/b"]


def test_a_busy_domain_is_passed_over_for_other_domains_and_keeps_its_place():
    frontier = make_frontier(strategy="bestfirst", domain_in_flight_ms=0)
    for host in ("busy.test", "idle.test"):
        frontier.domains.record_response(host, 200, 0.1)  # no probes
    for i in range(6):
        add(frontier, f"http://busy.test/{i}", anchor=0.9 - i / 100)
    add(frontier, "http://idle.test/0", anchor=0.2)
    add(frontier, "http://idle.test/1", anchor=0.1)
    busy, idle = frontier.domains.id_of("busy.test"), frontier.domains.id_of("idle.test")
    # busy.test has 2 of its 3 places in flight: one more of it, then the other domain's.
    batch = frontier.next_batch(4, in_flight=DomainLoad(Counter({busy: 2}), 3))
    assert [r.url for r, _ in batch] == ["http://busy.test/0", "http://idle.test/0", "http://idle.test/1"]
    assert frontier.filtered["parked_busy"] == 5
    # Once its requests are done, its entries come back in their order.
    batch = frontier.next_batch(2, in_flight=DomainLoad(Counter({idle: 3}), 3))
    assert [r.url for r, _ in batch] == ["http://busy.test/1", "http://busy.test/2"]


def test_a_round_of_only_busy_domains_releases_nothing_and_looks_only_so_far():
    frontier = make_frontier(strategy="bestfirst", domain_in_flight_ms=0)
    frontier.domains.record_response("busy.test", 200, 0.1)
    for i in range(200):
        add(frontier, f"http://busy.test/{i}", anchor=0.9)
    busy = frontier.domains.id_of("busy.test")
    selected = []
    frontier.strategy.select = counting(frontier.strategy.select, selected)
    assert frontier.next_batch(4, in_flight=DomainLoad(Counter({busy: 8}), 8)) == []
    assert sum(selected) <= 4 * 4 + 4
    assert len(frontier) == 200 and len(drain(frontier, 50)) == 200  # nothing lost


def test_parked_entries_are_walked_once_and_come_back_as_places_free_up():
    frontier = make_frontier(strategy="bestfirst", domain_in_flight_ms=0)
    for host in ("busy.test", "idle.test"):
        frontier.domains.record_response(host, 200, 0.1)
    for i in range(100):
        add(frontier, f"http://busy.test/{i}", anchor=0.9 - i / 1000)
    for i in range(3):
        add(frontier, f"http://idle.test/{i}", anchor=0.1)
    busy = frontier.domains.id_of("busy.test")
    selected = []
    frontier.strategy.select = counting(frontier.strategy.select, selected)
    released = []
    for _ in range(20):  # busy.test stays busy: each round goes deeper, past what the last ones parked
        released += [r.url for r, _ in frontier.next_batch(2, in_flight=DomainLoad(Counter({busy: 4}), 4))]
    assert released == [f"http://idle.test/{i}" for i in range(3)]
    assert sum(selected) <= 100 + 3 + 2  # each parked entry was chosen once
    # Two places free up: the two best parked entries come back, in their order.
    batch = frontier.next_batch(4, in_flight=DomainLoad(Counter({busy: 2}), 4))
    assert [r.url for r, _ in batch] == ["http://busy.test/0", "http://busy.test/1"]
    assert len(drain(frontier, 50)) == 98  # without a load to go by, every parked entry comes back


def test_only_a_slowish_domain_is_passed_over_when_busy():
    frontier = make_frontier(strategy="bestfirst", domain_in_flight_ms=500)  # the default is 1000
    for host, seconds in (("fast.test", 0.05), ("slowish.test", 0.8), ("other.test", 0.05)):
        for _ in range(3):
            frontier.domains.record_response(host, 200, seconds)
    add(frontier, "http://fast.test/a", anchor=0.9)
    add(frontier, "http://slowish.test/a", anchor=0.8)
    add(frontier, "http://other.test/a", anchor=0.1)
    ids = [frontier.domains.id_of(h) for h in ("fast.test", "slowish.test")]
    batch = frontier.next_batch(2, in_flight=DomainLoad(Counter({i: 8 for i in ids}), 8))
    # A fast domain's requests hardly wait in its slot: the best link goes first all the same.
    assert [r.url for r, _ in batch] == ["http://fast.test/a", "http://other.test/a"]


def test_a_slow_domain_released_last_still_waits_for_a_place():
    frontier = make_frontier(strategy="bfs", slow_domain_ms=500)
    for _ in range(3):
        frontier.domains.record_response("slow.test", 200, 2.0)
    add(frontier, "http://slow.test/a")
    add(frontier, "http://slow.test/b")
    slow = frontier.domains.id_of("slow.test")
    assert frontier.next_batch(4, in_flight=DomainLoad(Counter({slow: 1}), 1)) == []
    assert [r.url for r, _ in frontier.next_batch(4, in_flight=DomainLoad(Counter(), 1))] == ["http://slow.test/a"]
    assert [r.url for r, _ in frontier.next_batch(4)] == ["http://slow.test/b"]


def test_entries_wait_for_their_domains_probe_and_a_lost_probe_is_given_up_once():
    frontier = make_frontier(strategy="bestfirst")
    for i in range(40):
        add(frontier, f"http://new{i % 2}.test/{i}", anchor=1.0 - i / 100)
    probes = [r.url for r, _ in frontier.next_batch(2)]
    assert probes == ["http://new0.test/0", "http://new1.test/1"]
    # The probes never answer (filtered before download): once nothing else is left, their
    # domains' entries are released, and no later round sends them to wait again.
    selected = []
    frontier.strategy.select = counting(frontier.strategy.select, selected)
    released = drain(frontier, 4)
    assert len(released) == 38 and not frontier.waiting
    assert sum(selected) <= 38 + 38  # each entry walked into waiting once, then released
    assert frontier.unprobed == {0, 1}


def test_new_domains_get_their_share_of_releases_best_link_first():
    def release_order(share):
        frontier = make_frontier(strategy="bestfirst", new_domain_share=share, new_domain_pages=1)
        for i in range(100):
            add(frontier, f"http://site.test/{i}", anchor=0.9 - i / 1000)
        for k in range(5):  # links the strategy's scores put last: one page of each unseen site
            add(frontier, f"http://new{k}.test/worse", anchor=0.01 * k)
            add(frontier, f"http://new{k}.test/best", anchor=0.02 + 0.01 * k)
        order = []
        while batch := frontier.next_batch(4):
            for request, _ in batch:  # every request answers before the next round
                frontier.domains.record_response(request.url.split("/")[2], 200, 0.05)
                order.append(request.url)
        return order

    order = release_order(0.1)
    assert len(order) == len(set(order)) == 110
    first_of_new = [url for url in order if url.startswith("http://new")][:5]
    assert first_of_new == [f"http://new{k}.test/best" for k in (4, 3, 2, 1, 0)]  # best link of the best site first
    # About one release in ten goes to a site nothing was fetched from.
    assert order.index("http://new0.test/best") < 60
    assert all(url.startswith("http://site.test/") for url in order[:60] if "/best" not in url)
    assert release_order(0.0).index("http://new0.test/best") >= 100  # after every link of the known site


def add_known_site(frontier, pages_released, links):
    """site.test: out of the new-domain share (``pages_released`` pages fetched), with ``links``
    worded links the strategy ranks first."""
    known = frontier.domains.id_of("site.test")
    for _ in range(pages_released):
        frontier.domains.record_release(known)
        frontier.domains.record_response("site.test", 200, 0.05)
    for i in range(links):
        add(frontier, f"http://site.test/{i}", anchor=0.9 - i / 1000)


def test_young_domains_get_their_first_pages_shallowest_and_best_first():
    """A site whose start page is a table of contents (entries with no query word) is entered:
    up to ADAPTIVE_NEW_DOMAIN_PAGES of its pages come from the new-domain share."""

    def release_order(pages):
        frontier = make_frontier(
            strategy="bestfirst", new_domain_share=0.1, new_domain_pages=pages, new_domain_pages_after=0
        )
        add_known_site(frontier, pages, 200)
        add(frontier, "http://docs.test/index.html", anchor=0.0, depth=1)
        for k in range(6):  # the table of contents: nothing to tell its entries apart but their place
            add(frontier, f"http://docs.test/toc{k}.html", anchor=0.0, depth=2)
        add(frontier, "http://docs.test/deep/better.html", anchor=0.01, depth=3)
        order, answered_before = [], []
        while batch := frontier.next_batch(4):
            hosts = [request.url.split("/")[2] for request, _ in batch]
            if len(order) < 200:  # while the strategy has better links: one page of a young site per round
                assert hosts.count("docs.test") <= 1
            for request, _ in batch:
                host = request.url.split("/")[2]
                if host == "docs.test":
                    answered_before.append(frontier.domains.profiles[frontier.domains.id_of(host)].attempts)
                frontier.domains.record_response(host, 200, 0.05)
                order.append(request.url)
        return order, answered_before

    order, answered_before = release_order(4)
    assert len(order) == len(set(order)) == 208
    docs = [url for url in order if "docs.test" in url]
    # The start page, then the table of contents in page order (depth first, then prior, then arrival).
    assert docs[:4] == ["http://docs.test/index.html"] + [f"http://docs.test/toc{k}.html" for k in range(3)]
    assert all(order.index(url) < 60 for url in docs[:4])  # with the share, among the first pages
    assert answered_before[:4] == [0, 1, 2, 3]  # each one after the one before had answered
    assert all(order.index(url) > 200 for url in docs[4:])  # the rest: the strategy's order
    # With one page per site (the default), only the start page comes early.
    order, _ = release_order(1)
    assert [url for url in order[:200] if "docs.test" in url] == ["http://docs.test/index.html"]


def test_young_domains_wait_for_the_crawls_first_pages_and_a_site_that_serves_none_is_left():
    frontier = make_frontier(strategy="bestfirst", new_domain_share=0.1, new_domain_pages=4, new_domain_pages_after=100)
    add_known_site(frontier, 4, 300)
    for host in ("docs.test", "gone.test"):
        add(frontier, f"http://{host}/index.html", anchor=0.0, depth=1)
        for k in range(3):
            add(frontier, f"http://{host}/toc{k}.html", anchor=0.0, depth=2)
    order = []
    while batch := frontier.next_batch(4):
        for request, _ in batch:
            host = request.url.split("/")[2]
            frontier.domains.record_response(host, 404 if host == "gone.test" else 200, 0.05)
            order.append(request.url)
    assert order.index("http://docs.test/index.html") < 20 and order.index("http://gone.test/index.html") < 20
    docs_toc = [order.index(f"http://docs.test/toc{k}.html") for k in range(3)]
    assert all(100 <= place < 200 for place in docs_toc)  # after the crawl's first 100, from the share
    # A site whose first page answered 404 is not entered: its links wait for the strategy (last).
    assert all(order.index(f"http://gone.test/toc{k}.html") >= 300 for k in range(3))


def test_among_young_sites_as_near_the_start_the_one_linking_to_more_of_its_own_pages_goes_first():
    """The share is too small to enter every site a crawl meets (about 400 on the big web):
    a site whose start page links to dozens of its own pages (an API reference) is entered
    before a page that one link points to, whatever their links' priors."""

    def share_order(pages_of_big_site):
        frontier = make_frontier(
            strategy="bestfirst", new_domain_share=0.1, new_domain_pages=3, new_domain_pages_after=0
        )
        add_known_site(frontier, 3, 200)
        add(frontier, "http://one.test/book.html", anchor=0.02, depth=2)  # a citation, a better word
        for k in range(pages_of_big_site):  # the contents of an API reference, words of no query
            add(frontier, f"http://api.test/{k}.html", anchor=0.0, depth=2)
        order = []
        while batch := frontier.next_batch(4):
            for request, _ in batch:
                frontier.domains.record_response(request.url.split("/")[2], 200, 0.05)
                if "site.test" not in request.url:
                    order.append(request.url)
        return order[:4]

    assert share_order(40) == [f"http://api.test/{k}.html" for k in range(3)] + ["http://one.test/book.html"]
    # A site as small as the other: the better link first.
    assert share_order(1) == ["http://one.test/book.html", "http://api.test/0.html"]


def test_the_sites_a_start_page_links_to_are_opened_first_and_the_share_then_waits_its_turn():
    """A hub's sites get their first page among the crawl's first releases (half of them at
    most), not one in ten; the share then waits until the releases catch up, so over the crawl
    it takes no more than before."""

    def release_order(start_share):
        frontier = make_frontier(
            strategy="bestfirst",
            new_domain_share=0.1,
            start_sites_share=start_share,
            new_domain_pages=2,
            new_domain_pages_after=0,
        )
        add_known_site(frontier, 2, 600)
        for k in range(20):  # the hub's sites, named by words of no query
            add(frontier, f"http://hub{k}.test/index.html", anchor=0.0, depth=1)
            add(frontier, f"http://hub{k}.test/toc.html", anchor=0.0, depth=2)
        add(frontier, "http://cited.test/page.html", anchor=0.0, depth=2)  # linked from a page below the start
        order = []
        while batch := frontier.next_batch(4):
            for request, _ in batch:
                frontier.domains.record_response(request.url.split("/")[2], 200, 0.05)
                order.append(request.url)
        return order

    order = release_order(0.5)
    starts = [order.index(f"http://hub{k}.test/index.html") for k in range(20)]
    assert max(starts) < 45  # every one within the first 45 releases, about every other one
    assert sum(1 for url in order[:40] if "site.test" in url) >= 18  # the strategy's best links go on meanwhile
    # The share's further pages wait until the releases caught up with what it took ahead:
    # its 21 further pages in all (20 contents pages, one cited site) come one in ten, as before.
    share_pages = [i for i, url in enumerate(order) if "/toc.html" in url or "cited.test" in url]
    assert min(share_pages) >= 180 and share_pages[-1] < 450
    assert sum(1 for i in share_pages if i < 300) <= 12
    before = release_order(0.0)
    assert max(before.index(f"http://hub{k}.test/index.html") for k in range(20)) >= 150  # one in ten
    # Links two steps from the start are never opened ahead.
    assert order.index("http://cited.test/page.html") >= 180


@pytest.mark.parametrize("strategy", ["tres", "bestfirst", "gain"])
@pytest.mark.parametrize("pages", [1, 3])
def test_links_released_for_new_domains_are_released_once_and_their_ids_reused_safely(strategy, pages):
    frontier = make_frontier(strategy=strategy, new_domain_share=0.5, new_domain_pages=pages)
    rng = np.random.default_rng(3)
    urls = []
    for wave in range(3):  # ids of released entries are reused by the next wave
        batch_urls = [f"http://d{int(rng.integers(40))}.test/{wave}/{i}" for i in range(150)]
        for url in batch_urls:
            add(frontier, url, anchor=float(rng.random()))
        urls += batch_urls
        released = [r.url for r, _ in drain(frontier, 8)]
        assert sorted(released) == sorted(batch_urls)
    assert len(frontier) == 0 and frontier.filtered["new_domain"] > 0


def counting(select, selected):
    def wrapped(tier, n):
        choices = select(tier, n)
        selected.append(len(choices))
        return choices

    return wrapped


# -- learning -------------------------------------------------------------------------------
def synthetic_problem(n=600, seed=0):
    """Reward is high when anchor_similarity and parent_score are both high."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, features.N_FEATURES)).astype(np.float32)
    a, p = X[:, features.FEATURE_NAMES.index("anchor_similarity")], X[:, features.FEATURE_NAMES.index("parent_score")]
    y = ((a > 0.6) & (p > 0.5)).astype(np.float64)
    return X, y


def test_qnetwork_learns_a_small_synthetic_problem():
    X, y = synthetic_problem()
    net = QNetwork(random_state=0)
    rng = np.random.default_rng(1)
    untrained = np.mean((net.predict(X) - y) ** 2)
    for _ in range(2500):
        rows = rng.integers(0, len(X), 32)
        net.partial_fit(X[rows], y[rows])
    trained = np.mean((net.predict(X) - y) ** 2)
    assert trained < 0.25 * untrained
    assert net.predict(X[y == 1]).mean() > net.predict(X[y == 0]).mean() + 0.5


def test_double_dqn_propagates_value_to_links_that_lead_to_rewards():
    """A hub link (no reward itself) leads to rewarding links: its value rises with gamma."""
    hub, leaf, dead = (np.zeros(features.N_FEATURES, dtype=np.float32) for _ in range(3))
    hub[0], leaf[5], dead[7] = 1.0, 1.0, 1.0
    agent = DoubleDQN(gamma=0.8, batch_size=16, target_update=10, random_state=0)
    # Page 0 (behind the hub link) has two rewarding outlinks; pages 1 and 2 have none.
    outlinks = np.zeros((3, 2, features.N_FEATURES), dtype=np.float32)
    outlinks[0] = leaf
    present = np.array([[True, True], [False, False], [False, False]])

    def next_actions(keys):
        keys = np.asarray(keys, dtype=np.int64)
        return outlinks[keys], np.zeros(present[keys].shape), present[keys]

    for _ in range(20):
        agent.remember(hub, 0.0, 0.0, 0)
        agent.remember(leaf, 0.0, 1.0, 1)
        agent.remember(dead, 0.0, 0.0, 2)
    for _ in range(1500):
        agent.train_step(next_actions)
    q_hub, q_leaf, q_dead = agent.predict(np.vstack([hub, leaf, dead]), np.zeros(3))
    assert q_leaf == pytest.approx(1.0, abs=0.15)
    assert q_hub == pytest.approx(0.8, abs=0.2)
    assert q_dead == pytest.approx(0.0, abs=0.15)


def test_updates_in_a_row_are_the_same_as_one_at_a_time():
    """train_steps(n) reads the next actions of its n minibatches in one call: the
    networks it leaves must be exactly those of n single updates."""
    rng = np.random.default_rng(5)
    outlinks = rng.random((20, 4, features.N_FEATURES)).astype(np.float32)
    bases, present = rng.random((20, 4)), rng.random((20, 4)) < 0.6
    calls = []

    def next_actions(keys):
        calls.append(len(keys))
        keys = np.asarray(keys, dtype=np.int64)
        return outlinks[keys], bases[keys], present[keys]

    one, row = (DoubleDQN(batch_size=8, target_update=3, random_state=1) for _ in range(2))
    for _ in range(40):
        x = rng.random(features.N_FEATURES).astype(np.float32)
        reward, key = float(rng.random()), int(rng.integers(20))
        for agent in (one, row):
            agent.remember(x, 0.1, reward, key)
        one.train_step(next_actions)
        one.train_step(next_actions)
        row.train_steps(2, next_actions)
    assert np.array_equal(one.online._flat, row.online._flat)
    assert np.array_equal(one.target._flat, row.target._flat)
    assert one.last_loss == row.last_loss and not np.isnan(row.last_loss)
    # one_at_a_time reads 8 next states per update; in a row, both minibatches' 16 at once
    assert calls.count(8) == 2 * calls.count(16) > 0 and set(calls) == {8, 16}


def test_tree_partition_groups_alike_rewards():
    X, y = synthetic_problem()
    partition = LeafPartition(max_leaves=8, min_samples_leaf=10).fit(X, y)
    leaves = partition.apply(X)
    assert 2 <= partition.n_leaves <= 8
    assert set(leaves) == set(range(partition.n_leaves))
    purity = [max(y[leaves == leaf].mean(), 1 - y[leaves == leaf].mean()) for leaf in range(partition.n_leaves)]
    assert np.mean(purity) > 0.9
    assert any("anchor_similarity" in rule for rule in partition.rules())


@pytest.mark.parametrize("sampling", ["best", "uniform"])
def test_tres_offers_a_candidate_from_every_leaf(sampling):
    frontier = make_frontier(
        strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, tree_leaf_sampling=sampling
    )
    tres = frontier.strategy
    X, y = synthetic_problem(200)
    for x, reward in zip(X, y):
        tres.agent.remember(x, 0.0, reward, -1)
    tres.partition = LeafPartition(max_leaves=4, min_samples_leaf=10).fit(X, y)
    for i in range(40):
        add(frontier, f"http://a.test/{i}", anchor=(i % 10) / 10, parent_score=(i % 7) / 7)
    pools = tres._flush(0)
    sizes = [len(pool) for pool in pools]
    assert sum(sizes) == 40 and sum(1 for s in sizes if s) >= 2
    choices = tres.select(0, 2)
    assert len(choices) == 2
    assert tres.count(0) == 38  # the candidates not chosen went back to their leaves
    assert {c.leaf for c in choices} <= set(range(len(pools)))


def test_tres_learns_to_release_rewarding_links_first():
    """After experience, the released order follows the learned reward, not arrival."""
    frontier = make_frontier(
        strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, tree_min_experience=16
    )
    X, y = synthetic_problem(400)
    for x, reward in zip(X, y):
        frontier.observe(x, reward, -1)
    good, bad = [], []
    for i in range(30):
        bad.append(add(frontier, f"http://a.test/bad-{i}", anchor=0.1, parent_score=0.1))
    for i in range(10):
        good.append(add(frontier, f"http://a.test/good-{i}", anchor=0.9, parent_score=0.9))
    first = [request.url for request, _ in drain(frontier, 4)][:10]
    assert sum("good" in url for url in first) >= 8


def test_identical_events_give_identical_choices():
    def run():
        frontier = make_frontier(strategy="tres", warmup_pages=4, seed=3)
        released = []
        for i in range(60):
            add(frontier, f"http://a.test/{i}", anchor=(i * 7 % 10) / 10, parent_score=(i * 3 % 5) / 5)
        for _ in range(10):
            for request, choice in frontier.next_batch(3):
                released.append(request.url)
                frontier.observe(choice.features, float(choice.features[5]), -1)
        return released

    assert run() == run()


def test_regression_tree_finds_the_planted_splits_within_its_budget():
    from adaptive_spider.frontier.learn.tree import RegressionTree

    rng = np.random.default_rng(1)
    X = rng.random((600, 11)).astype(np.float32)
    y = 0.8 * (X[:, 4] > 0.6) + 0.15 * (X[:, 9] > 0.5) + rng.normal(0, 0.02, 600)
    tree = RegressionTree(max_leaves=4, min_samples_leaf=20).fit(X, y)
    assert tree.n_leaves == 4
    assert tree.feature[0] == 4 and abs(tree.threshold[0] - 0.6) < 0.02  # the largest effect first
    assert 9 in set(tree.feature[tree.children_left != -1])
    leaves = tree.apply(X)
    assert set(np.unique(leaves)) == set(np.flatnonzero(tree.children_left == -1))
    assert np.bincount(leaves)[np.unique(leaves)].min() >= 20  # min_samples_leaf
    fitted = tree.value[leaves]
    assert ((y - fitted) ** 2).mean() < 0.01
    constant = RegressionTree(max_leaves=8, min_samples_leaf=5).fit(X, np.full(600, 0.3))
    assert constant.n_leaves == 1 and (constant.apply(X) == 0).all()


def test_regression_tree_partitions_like_scikit_learns():
    """The reference: scikit-learn's best-first tree with the same leaf budget."""
    sklearn_tree = pytest.importorskip("sklearn.tree")
    from adaptive_spider.frontier.learn.tree import RegressionTree

    rng = np.random.default_rng(2)
    for n in (100, 1000):
        X = rng.random((n, 11)).astype(np.float32)
        X[:, 2] = np.round(X[:, 2], 1)  # ties, as counts and flags give
        y = 0.5 * (X[:, 2] > 0.3) + 0.3 * X[:, 7] + rng.normal(0, 0.05, n)
        ours = RegressionTree(max_leaves=16, min_samples_leaf=8).fit(X, y)
        theirs = sklearn_tree.DecisionTreeRegressor(max_leaf_nodes=16, min_samples_leaf=8, random_state=0).fit(X, y)
        assert ours.n_leaves == theirs.get_n_leaves()
        assert np.allclose(ours.value[ours.apply(X)], theirs.predict(X))


def test_a_saved_qnetwork_trains_on_exactly_as_the_one_that_was_saved():
    import pickle

    rng = np.random.default_rng(1)
    X, y = rng.random((64, features.N_FEATURES)), rng.random(64)
    net = QNetwork(random_state=0)
    for _ in range(20):
        net.partial_fit(X, y)
    restored = pickle.loads(pickle.dumps(net))  # as JOBDIR saves the frontier's model
    for _ in range(20):
        assert restored.partial_fit(X, y) == net.partial_fit(X, y)
    assert np.array_equal(restored.predict(X), net.predict(X))
    assert restored.predict(X).std() > 0  # it learned something: the test can tell two nets apart


class GainListener(RecordingListener):
    """A listener whose expected gains the test sets by URL (as the sufficiency link values keep them)."""

    def __init__(self, frontier, gains):
        super().__init__()
        self.frontier = frontier
        self.gains = gains

    def gain(self, entry):
        return self.gains[self.frontier.url_of(entry)]


def test_gain_strategy_takes_the_highest_current_gain_and_revalues_lazily():
    frontier = make_frontier(strategy="gain")
    gains = {"http://a.test/low": 0.1, "http://a.test/high": 0.9, "http://a.test/mid": 0.5}
    frontier.listener = GainListener(frontier, gains)
    frontier.domains.record_response("a.test", 200, 0.01)
    for url in gains:
        add(frontier, url, anchor=0.5)  # same prior: only the gain tells them apart
    # "high" has lost its value since it was queued (its terms are covered now): it goes back in line.
    gains["http://a.test/high"] = 0.2
    assert [r.url for r, _ in drain(frontier, 1)] == ["http://a.test/mid", "http://a.test/high", "http://a.test/low"]
    assert frontier.strategy.stats()["revalued"] >= 4


def test_a_groups_misses_survive_a_snapshot_and_an_older_snapshot_loads_without_them():
    pages = PageLog(hit_at=0.5)
    listing = pages.add(domain_id=0, relevance=0.3)
    missed, hit = pages.group_of(listing, "Variables"), pages.group_of(listing, "Threads")
    for relevance in (0.1, 0.2):
        pages.add(domain_id=0, relevance=relevance, group_id=missed)
    pages.add(domain_id=0, relevance=0.8, group_id=hit)
    state = pages.state_dict()
    resumed = PageLog(hit_at=0.5)
    resumed.load_state_dict(state)
    assert (resumed.misses(missed), resumed.misses(hit)) == (2, 0)
    del state["group_hits"]  # written before groups counted their hits
    older = PageLog(hit_at=0.5)
    older.load_state_dict(state)
    assert older.misses(missed) == older.misses(hit) == 0  # ranked by their prior alone, as before


def test_a_table_of_contents_whose_links_all_missed_gives_way_as_a_whole_more_slowly():
    pages = PageLog(hit_at=0.5)
    contents = pages.add(domain_id=0, relevance=0.3)
    chapters = [pages.group_of(contents, f"Chapter {i}") for i in range(9)]
    for group in chapters[:8]:
        pages.add(domain_id=0, relevance=0.1, group_id=group)  # one link of each chapter, each a miss
    assert pages.misses(chapters[8]) == pytest.approx(0.25 * 8)  # an untried chapter: a quarter each
    assert pages.misses(chapters[0]) == pytest.approx(1 + 0.25 * 7)
    pages.add(domain_id=0, relevance=0.9, group_id=chapters[1])  # a hit: the page's other chapters
    assert pages.misses(chapters[8]) == 0 and pages.misses(chapters[0]) == 1  # only their own misses


def test_unreachable_domain_is_dropped_at_release():
    frontier = make_frontier(strategy="bfs", unreachable_failures=2)
    for i in range(3):
        add(frontier, f"http://down.test/{i}")
    add(frontier, "http://fine.test/0")
    frontier.domains.record_unreachable("down.test")  # its robots.txt could not be fetched
    first = frontier.next_batch(1)  # one failure to connect is not enough
    assert [r.url for r, _ in first] == ["http://down.test/0"]
    frontier.domains.record_failure("down.test", unreachable=True)
    assert [r.url for r, _ in drain(frontier, 10)] == ["http://fine.test/0"]
    assert frontier.filtered["unreachable"] == 2
