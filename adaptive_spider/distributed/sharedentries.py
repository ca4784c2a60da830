"""The requests of a shared crawl as the shared queue holds them: a score and a payload.

A worker scores its new requests with its own model (:func:`shared_priority`) and
queues each in Redis as a pickled payload (:func:`entry_payload`): the request as a
dict, its static features, domain name, parent page and link prior, and the worker
that found it (page ids are local to that worker).
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING

import numpy as np

from adaptive_spider.frontier.features import FEATURE_NAMES, assemble
from adaptive_spider.frontier.linkevidence import link_context

if TYPE_CHECKING:
    from adaptive_spider.crawl.state import CrawlState
    from adaptive_spider.frontier.strategies.base import Strategy

#: An explicit Request.priority is a tier above any learned value.
TIER_SCALE = 1000.0
_VALUE_BOUND = TIER_SCALE / 2 - 1
_DEPTH = FEATURE_NAMES.index("depth")


def shared_priority(
    strategy: Strategy, X: np.ndarray, priors: np.ndarray, tiers: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Score of new requests in the shared queue: their tier, then the strategy's value.

    A strategy with a model (``tres``) gives its predicted Q-value while it trusts
    its network (``Tres.scorer``); ``bfs`` and ``dfs`` order by depth, ``random`` at
    random, and the others by the learning-free link prior.
    """
    agent = getattr(strategy, "agent", None)
    if agent is not None and hasattr(agent, "predict") and getattr(strategy, "scorer", "qnet") == "qnet":
        value = agent.predict(X, priors)
    elif strategy.name == "bfs":
        value = -X[:, _DEPTH]
    elif strategy.name == "dfs":
        value = X[:, _DEPTH]
    elif strategy.name == "random":
        value = rng.random(len(X))
    else:
        value = priors
    return tiers * TIER_SCALE + np.clip(np.asarray(value, dtype=np.float64), -_VALUE_BOUND, _VALUE_BOUND)


def entry_scores(strategy: Strategy, state: CrawlState, entries: list[tuple], rng: np.random.Generator) -> np.ndarray:
    """:func:`shared_priority` of ``(request, static, domain id, parent, prior)`` entries,
    with their current features."""
    static = np.array([entry[1] for entry in entries], dtype=np.float32)
    domain_ids = np.array([entry[2] for entry in entries], dtype=np.int64)
    pages = state.pages
    groups = np.array([pages.group_of(entry[3], link_context(entry[0])) for entry in entries], dtype=np.int64)
    X = assemble(static, state.domains.features(domain_ids), pages.sibling_scores(groups))
    tiers = np.array([entry[0].priority for entry in entries], dtype=np.float64)
    priors = np.array([entry[4] for entry in entries], dtype=np.float64)
    return shared_priority(strategy, X, priors, tiers, rng)


def entry_payload(request_data: dict, entry: tuple, domain: str, worker: str) -> bytes:
    """The payload of an entry (``request_data``: its request as a dict) in the shared queue."""
    _, static, _, parent, prior = entry
    payload = {
        "request": request_data,
        "static": [float(v) for v in static],
        "domain": domain,
        "parent": int(parent),
        "prior": float(prior),
        "worker": worker,
    }
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
