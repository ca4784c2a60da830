"""FrontierStore keeps plain Requests packed and gives back equal ones; leaf pools keep their order."""

import numpy as np
import pytest
from scrapy import Request
from scrapy.http import FormRequest

from adaptive_spider.frontier.leafpools import BestLeafPool, UniformLeafPool
from adaptive_spider.frontier.store import FrontierStore


def callback(response):
    pass


def errback(failure):
    pass


def same_request(a: Request, b: Request) -> bool:
    attributes = [name for name in Request.attributes if name != "headers"]
    return (
        type(a) is type(b)
        and all(getattr(a, name) == getattr(b, name) for name in attributes)
        and a.headers.to_unicode_dict() == b.headers.to_unicode_dict()
    )


REQUESTS = [
    Request("http://a.test/"),
    Request(
        "http://a.test/space here?q=1",
        callback=callback,
        meta={"depth": 2, "link_text": "Event loop", "adaptive_parent": 7},
    ),
    Request("http://a.test/r", callback=callback, headers={"Referer": "http://a.test/"}, meta={"z": 1, "a": 2}),
    Request(
        "http://a.test/post",
        callback=callback,
        method="POST",
        body=b"x=1",
        cookies={"c": "v"},
        encoding="latin-1",
        priority=-2,
        dont_filter=True,
        errback=errback,
        flags=["f"],
        cb_kwargs={"k": 1},
        headers={"Referer": "http://a.test/", "Accept": ["a", "b"]},
    ),
    Request("http://a.test/two-referers", headers=[("Referer", "x"), ("Referer", "y")]),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=range(len(REQUESTS)))
def test_a_plain_request_comes_back_equal(request_):
    store = FrontierStore(capacity=1)
    entry = store.add(request_, np.zeros(6), 0, -1, 0.5)
    peeked = store.requests[entry]
    taken = store.take(entry)
    assert same_request(peeked, request_) and same_request(taken, request_)
    assert list(taken.meta) == list(request_.meta)  # meta keeps its key order
    assert len(store) == 0 and store.requests[entry] is None


def test_request_subclasses_are_kept_as_they_are():
    store = FrontierStore()
    form = FormRequest("http://a.test/f", formdata={"a": "1"})
    entry = store.add(form, np.zeros(6), 0, -1, 0.0)
    assert store.take(entry) is form


def test_ids_are_reused_and_live_ids_follow_adds_and_takes():
    store = FrontierStore(capacity=2)
    entries = [store.add(Request(f"http://a.test/{i}"), np.zeros(6), 0, -1, 0.0) for i in range(5)]
    store.take(entries[1])
    store.take(entries[3])
    assert store.live_ids().tolist() == [entries[0], entries[2], entries[4]]
    again = store.add(Request("http://a.test/again"), np.zeros(6), 0, -1, 0.0)
    assert again == entries[3] and store.order[again] == 5
    assert store.requests[again].url == "http://a.test/again"


def filled_store(priors):
    store = FrontierStore(capacity=4)
    for i, prior in enumerate(priors):
        store.add(Request(f"http://a.test/{i}"), np.zeros(6), 0, -1, prior)
    return store


def test_best_pool_releases_by_prior_then_arrival_across_put_backs():
    rng = np.random.default_rng(0)
    priors = rng.choice([0.0, 0.25, 0.5, 0.9], size=700).astype(np.float32)
    store = filled_store(priors)
    pool = BestLeafPool(store, range(250))
    for entry in range(250, 500):
        pool.put(entry)
    arrivals = iter(range(500, 700))  # links that arrive while the pool is being drained
    queued = set(range(500))
    released = []
    while len(pool):
        taken = pool.take(7, rng)
        assert taken == sorted(queued, key=lambda e: (-float(priors[e]), e))[:7]  # the best 7, best first
        released.append(taken[0])
        queued.discard(taken[0])
        pool.put_back(taken[1:])  # like a selection round: the rest stays
        for entry in [next(arrivals, None) for _ in range(2)]:
            if entry is not None:
                pool.put(entry)
                queued.add(entry)
    assert sorted(released) == list(range(700)) and not queued
    assert sorted(BestLeafPool(store, [3, 1, 2]).entries()) == [1, 2, 3]


def test_uniform_pool_takes_distinct_entries_until_empty():
    rng = np.random.default_rng(1)
    pool = UniformLeafPool(None, range(100))
    taken = []
    while len(pool):
        taken += pool.take(9, rng)
    assert sorted(taken) == list(range(100))
    assert taken[:10] != list(range(10))  # sampled, not in order
