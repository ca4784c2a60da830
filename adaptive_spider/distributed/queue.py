"""The shared frontier: the queued requests of every worker, in Redis.

Requests wait in a sorted set (``<prefix>:queue``) scored by their learned
priority; their serialized form sits in a hash (``<prefix>:requests``) under
the same member id. A worker pops its batch with one Lua script, so two workers
never take the same request, and the pop marks the worker busy in the same
atomic step (the crawl-wide idle check relies on it: a request is always either
queued or held by a busy worker).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, SupportsFloat

if TYPE_CHECKING:
    from redis import Redis

#: Member ids count down from here, so that among equal scores the request
#: queued first is popped first (ZPOPMAX takes the greatest member of a tie).
_SEQUENCE_TOP = 10**15

# KEYS: sequence, requests, queue; ARGV: the top member number, then (payload, score) pairs.
_PUSH = """
local n = (#ARGV - 1) / 2
local last = redis.call('INCRBY', KEYS[1], n)
local top = tonumber(ARGV[1])
for i = 1, n do
  local member = string.format('%016d', top - (last - n + i))
  redis.call('HSET', KEYS[2], member, ARGV[2 * i])
  redis.call('ZADD', KEYS[3], ARGV[2 * i + 1], member)
end
"""

# KEYS: queue, requests, workers; ARGV: count, worker.
_POP = """
local popped = redis.call('ZPOPMAX', KEYS[1], ARGV[1])
local payloads = {}
for i = 1, #popped, 2 do
  local payload = redis.call('HGET', KEYS[2], popped[i])
  if payload then
    payloads[#payloads + 1] = payload
    redis.call('HDEL', KEYS[2], popped[i])
  end
end
if #payloads > 0 then
  redis.call('HSET', KEYS[3], ARGV[2], 'busy')
end
return payloads
"""


class CrawlKeys:
    """Names of the Redis keys of one distributed crawl, all under ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.queue = f"{prefix}:queue"  # sorted set: member id -> learned priority
        self.requests = f"{prefix}:requests"  # hash: member id -> serialized request
        self.sequence = f"{prefix}:sequence"  # counter of member ids
        self.dupefilter = f"{prefix}:dupefilter"  # set of request fingerprints (scrapy-redis)
        self.workers = f"{prefix}:workers"  # hash: worker -> busy | idle
        self.heartbeats = f"{prefix}:heartbeats"  # hash: worker -> Redis time of its last sign of life
        self.stop = f"{prefix}:stop"  # the crawl's stop record, written once
        self.pages = f"{prefix}:pages"  # counter of pages fetched by all workers
        self.query = f"{prefix}:query"  # the query every worker must share
        self.domain_totals = f"{prefix}:domain_totals"  # hash: relevance and page totals
        self.terms = f"{prefix}:terms"  # hash: the relevance scorer's term statistics
        self.model = f"{prefix}:model"  # hash: worker -> its model parameters

    def domain(self, name: str) -> str:
        return f"{self.prefix}:domain:{name}"

    def latencies(self, name: str) -> str:
        return f"{self.prefix}:latency:{name}"

    def pattern(self) -> str:
        """A SCAN pattern matching every key of the crawl."""
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in self.prefix)
        return f"{escaped}:*"


class SharedQueue:
    """Requests of all workers, highest learned priority first.

    Parameters
    ----------
    server : redis.Redis
        The connection (bytes responses).
    keys : CrawlKeys
        The crawl's keys.
    worker : str
        This worker's id, marked busy whenever it takes requests.
    """

    def __init__(self, server: Redis, keys: CrawlKeys, worker: str) -> None:
        self.server = server
        self.keys = keys
        self.worker = worker
        self._push = server.register_script(_PUSH)
        self._pop = server.register_script(_POP)

    def __len__(self) -> int:
        return int(self.server.zcard(self.keys.queue))

    def push(self, payloads: list[bytes], scores: Iterable[SupportsFloat]) -> None:
        """Queue serialized requests with their priorities (one atomic script:
        a popped member always has its request)."""
        if not payloads:
            return
        arguments: list[bytes | float] = [_SEQUENCE_TOP]
        for payload, score in zip(payloads, scores):
            arguments += [payload, float(score)]
        self._push(keys=[self.keys.sequence, self.keys.requests, self.keys.queue], args=arguments)

    def pop(self, count: int) -> list[bytes]:
        """Take up to ``count`` serialized requests, best first; marks this worker busy."""
        return list(self._pop(keys=[self.keys.queue, self.keys.requests, self.keys.workers], args=[count, self.worker]))
