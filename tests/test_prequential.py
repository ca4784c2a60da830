"""TRES trusts a learned ranking only once it predicts the crawl's rewards better."""

import numpy as np

from adaptive_spider.frontier.learn.prequential import PrequentialSelector
from tests.test_frontier import add, drain, make_frontier, synthetic_problem

NAMES = ("prior", "link_classifier", "qnet")


def feed(selector, n, rng, predict):
    for _ in range(n):
        reward = float(rng.random())
        selector.record(predict(reward), reward)


def test_the_scorer_that_predicts_rewards_is_trusted_and_the_simplest_until_there_is_evidence():
    rng = np.random.default_rng(0)
    selector = PrequentialSelector(NAMES, window=64, min_pages=32)
    feed(selector, 31, rng, lambda r: [rng.random(), rng.random(), r])
    assert selector.trusted_name == "prior"  # too few pages to trust a learner
    feed(selector, 9, rng, lambda r: [rng.random(), rng.random(), r])
    assert selector.trusted_name == "qnet"
    # The learner goes wrong: the prior now predicts, and takes over again within the window.
    feed(selector, 64, rng, lambda r: [r, rng.random(), rng.random()])
    assert selector.trusted_name == "prior"
    assert selector.correlations[0] > 0.9


def test_a_learner_no_better_than_the_trusted_scorer_does_not_take_over():
    rng = np.random.default_rng(1)
    selector = PrequentialSelector(NAMES, window=64, min_pages=32, margin=0.02)
    # All three predict equally well (the same noisy signal): the prior stays.
    feed(selector, 200, rng, lambda r: [r + 0.3 * rng.random()] * 3)
    assert selector.trusted_name == "prior"
    # Rewards all alike tell the scorers nothing: no change.
    selector = PrequentialSelector(NAMES, window=64, min_pages=32)
    for _ in range(100):
        selector.record([0.0, 0.0, rng.random()], 0.0)
    assert selector.trusted_name == "prior"


def test_the_comparison_is_saved_and_restored():
    rng = np.random.default_rng(2)
    selector = PrequentialSelector(NAMES, window=64)
    feed(selector, 80, rng, lambda r: [rng.random(), rng.random(), r])
    restored = PrequentialSelector(NAMES, window=64)
    restored.load_state_dict(selector.state_dict())
    assert restored.trusted_name == "qnet" and restored.n_seen == 80
    other_window = PrequentialSelector(NAMES, window=32)
    other_window.load_state_dict(selector.state_dict())  # another window: starts afresh
    assert other_window.n_seen == 0 and other_window.trusted_name == "prior"


def test_tres_ranks_by_the_prior_while_the_network_predicts_nothing_better():
    """Rewards that follow the link prior and features that say nothing: TRES keeps the
    prior's order (best link first), though its network scores every link."""
    frontier = make_frontier(strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, link_classifier=0.0)
    rng = np.random.default_rng(3)
    for _ in range(200):
        prior = float(rng.random())
        frontier.strategy.observe(rng.random(11).astype(np.float32), prior, -1, prior=prior)
    assert frontier.strategy.scorer == "prior"
    for i in range(20):
        add(frontier, f"http://a.test/{i}", anchor=i / 20, parent_score=i / 20)
    released = [request.url for request, _ in drain(frontier, 4)]
    assert released == [f"http://a.test/{i}" for i in reversed(range(20))]
    assert frontier.stats()["scorer"] == "prior"


def test_tres_follows_its_network_once_the_network_predicts_better():
    frontier = make_frontier(
        strategy="tres", warmup_pages=0, epsilon_start=0.0, epsilon_end=0.0, tree_min_experience=16
    )
    X, y = synthetic_problem(400)
    for x, reward in zip(X, y):
        frontier.observe(x, reward, -1)  # prior 0 for every page: it predicts nothing
    assert frontier.strategy.scorer == "qnet"
    # Without the check, the network ranks from the first page (the TRES paper's rule).
    unchecked = make_frontier(strategy="tres", scorer_check_pages=0)
    assert unchecked.strategy.scorer == "qnet" and unchecked.strategy.referee is None
