"""What workers learn, merged through Redis at intervals.

Three kinds of knowledge, three merge rules:

* **Domain profiles** and the relevance scorer's **term statistics** are counts
  and sums. Each worker adds what it counted since its last synchronisation to
  crawl-wide totals in Redis (``HINCRBY``/``HINCRBYFLOAT``), then takes the
  totals as its own: every worker sees every worker's fetches, none counted
  twice. A domain's recent latencies are a shared capped list.
* The **model** (the Q-networks of the ``tres`` strategy) is averaged: each
  worker publishes its parameters with its experience (pages observed) as the
  weight and loads the weighted mean of all workers' latest parameters
  (federated averaging), then goes on learning locally from its own pages.

Everything runs in the reactor thread between two Scrapy callbacks, so nothing
changes the local state while a synchronisation reads and replaces it.
"""

from __future__ import annotations

import pickle
from collections import Counter, defaultdict, deque
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

    from adaptive_spider.distributed.queue import CrawlKeys
    from adaptive_spider.frontier.domains import DomainProfile, DomainProfiles


class _Stateful(Protocol):
    """What term statistics sync needs of the relevance scorer."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


#: Domain profile counters summed over workers (integers and floats).
PROFILE_COUNTS = ("attempts", "failures", "dns_failures", "unreachable", "pages", "released")
PROFILE_SUMS = ("relevance_sum",)
_STATUS = "status:"


def _decode(mapping: dict[Any, Any]) -> dict[str, float]:
    return {key.decode() if isinstance(key, bytes) else key: float(value) for key, value in mapping.items()}


def _push_deltas(pipe: Pipeline, key: str, current: dict[str, Any], synced: dict[str, Any]) -> None:
    for field, value in current.items():
        delta = value - synced.get(field, 0)
        if not delta:
            continue
        if isinstance(value, (int, np.integer)):
            pipe.hincrby(key, field, int(delta))
        else:
            pipe.hincrbyfloat(key, field, float(delta))


class DomainProfileSync:
    """Keeps a worker's domain profiles equal to the crawl-wide sums.

    Latencies are not in the profiles' counters: the scheduler hands each
    measured latency to :meth:`record_latency`, and the profiles get the last
    latencies of every worker.
    """

    def __init__(self, server: Redis, keys: CrawlKeys) -> None:
        self.server = server
        self.keys = keys
        self.synced: dict[str, dict[str, Any]] = {}
        self.synced_totals = {"relevance_total": 0.0, "pages_total": 0}
        self.new_latencies: dict[str, list[float]] = defaultdict(list)

    def record_latency(self, domain: str, seconds: float) -> None:
        self.new_latencies[domain].append(float(seconds))

    def sync(self, domains: DomainProfiles) -> None:
        state = domains.state_dict()
        profiles = state["profiles"]
        writes = self.server.pipeline(transaction=False)
        for profile in profiles:
            self._push(writes, profile)
        totals = {name: state[name] for name in self.synced_totals}
        _push_deltas(writes, self.keys.domain_totals, totals, self.synced_totals)
        writes.execute()

        reads = self.server.pipeline(transaction=False)
        for profile in profiles:
            reads.hgetall(self.keys.domain(profile.name))
            reads.lrange(self.keys.latencies(profile.name), 0, -1)
        reads.hgetall(self.keys.domain_totals)
        replies = reads.execute()
        for index, profile in enumerate(profiles):
            self._apply(profile, _decode(replies[2 * index]), replies[2 * index + 1])
        shared_totals = _decode(replies[-1])
        self.synced_totals = {
            "relevance_total": shared_totals.get("relevance_total", 0.0),
            "pages_total": int(shared_totals.get("pages_total", 0)),
        }
        # Same profiles in the same order: domain ids stay what the frontier holds.
        domains.load_state_dict({"profiles": profiles, **self.synced_totals})

    def _push(self, pipe: Pipeline, profile: DomainProfile) -> None:
        _push_deltas(pipe, self.keys.domain(profile.name), _counters(profile), self.synced.get(profile.name, {}))
        latest = self.new_latencies.pop(profile.name, None)
        if latest:
            key = self.keys.latencies(profile.name)
            pipe.rpush(key, *latest)
            pipe.ltrim(key, -(profile.latencies.maxlen or 64), -1)

    def _apply(self, profile: DomainProfile, shared: dict[str, float], latencies: list[bytes]) -> None:
        for name in PROFILE_COUNTS:
            setattr(profile, name, int(shared.get(name, 0)))
        for name in PROFILE_SUMS:
            setattr(profile, name, shared.get(name, 0.0))
        profile.statuses = Counter(
            {int(field[len(_STATUS) :]): int(count) for field, count in shared.items() if field.startswith(_STATUS)}
        )
        if latencies:
            profile.latencies = deque((float(value) for value in latencies), maxlen=profile.latencies.maxlen)
        self.synced[profile.name] = _counters(profile)


def _counters(profile: DomainProfile) -> dict[str, Any]:
    counters = {name: getattr(profile, name) for name in (*PROFILE_COUNTS, *PROFILE_SUMS)}
    counters.update({f"{_STATUS}{status}": count for status, count in profile.statuses.items()})
    return counters


class TermStatisticsSync:
    """Keeps a worker's relevance term statistics (pages, document frequencies,
    field lengths) equal to the crawl-wide sums, so every worker scores a page
    the same way."""

    def __init__(self, server: Redis, keys: CrawlKeys) -> None:
        self.server = server
        self.keys = keys
        self.synced: dict[str, float] = {}

    def sync(self, scorer: _Stateful) -> None:
        state = scorer.state_dict()
        current = flatten_numbers(state)
        pipe = self.server.pipeline(transaction=False)
        _push_deltas(pipe, self.keys.terms, current, self.synced)
        pipe.hgetall(self.keys.terms)
        shared = _decode(pipe.execute()[-1])
        merged = unflatten_numbers(state, shared)
        scorer.load_state_dict(merged)
        self.synced = flatten_numbers(merged)


def flatten_numbers(state: dict[str, Any]) -> dict[str, Any]:
    """The numbers of a state dict as flat fields (``name`` or ``name:index``);
    anything that is not a number or a list of numbers is left out."""
    flat: dict[str, Any] = {}
    for name, value in state.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            flat[name] = value
        elif isinstance(value, (list, tuple, np.ndarray)) and all(
            isinstance(item, (int, float, np.integer, np.floating)) and not isinstance(item, bool) for item in value
        ):
            flat.update({f"{name}:{index}": item for index, item in enumerate(value)})
    return flat


def unflatten_numbers(state: dict[str, Any], shared: dict[str, float]) -> dict[str, Any]:
    """``state`` with its numbers replaced by the shared totals (same types, same lengths).

    A field Redis does not have was never incremented: its total is 0.
    """
    merged = dict(state)
    for name, value in flatten_numbers(state).items():
        base, _, index = name.partition(":")
        total = shared.get(name, 0.0)
        if index:
            if merged[base] is state[base]:
                merged[base] = list(state[base])
            merged[base][int(index)] = total
        else:
            merged[name] = int(total) if isinstance(value, (int, np.integer)) else total
    return merged


def q_networks(strategy: object) -> list[Any]:
    """The strategy's networks whose parameters workers average (none for strategies without a model)."""
    agent = getattr(strategy, "agent", None)
    networks = [getattr(agent, "online", None), getattr(agent, "target", None)]
    return [
        net
        for net in networks
        if isinstance(getattr(net, "weights", None), list) and isinstance(getattr(net, "biases", None), list)
    ]


class ModelSync:
    """Federated averaging of the workers' Q-networks, weighted by experience.

    Parameters
    ----------
    server : redis.Redis
    keys : CrawlKeys
    worker : str
        This worker's id (the field of its parameters in ``<prefix>:model``).
    """

    def __init__(self, server: Redis, keys: CrawlKeys, worker: str) -> None:
        self.server = server
        self.keys = keys
        self.worker = worker

    def sync(self, strategy: object) -> bool:
        """Publish this worker's parameters and load the average; False without a model."""
        networks = q_networks(strategy)
        if not networks:
            return False
        own: dict[str, Any] = {
            "weight": max(1, int(getattr(strategy, "n_observed", 0) or 0)),
            "parameters": [[*net.weights, *net.biases] for net in networks],
        }
        self.server.hset(self.keys.model, self.worker, pickle.dumps(own, protocol=pickle.HIGHEST_PROTOCOL))
        # The connection returns bytes (no decode_responses).
        published = [pickle.loads(cast(bytes, raw)) for raw in self.server.hvals(self.keys.model)]
        shapes = _shapes(own["parameters"])
        peers = [entry for entry in published if _shapes(entry["parameters"]) == shapes]
        total = float(sum(entry["weight"] for entry in peers))
        for index, net in enumerate(networks):
            for position, parameter in enumerate([*net.weights, *net.biases]):
                parameter[...] = sum(entry["weight"] * entry["parameters"][index][position] for entry in peers) / total
        return True


def _shapes(parameters: list[list[Any]]) -> list[list[tuple[int, ...]]]:
    return [[np.shape(array) for array in arrays] for arrays in parameters]
