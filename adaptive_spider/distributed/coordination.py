"""Who works on a distributed crawl, whether it is done, and why it stopped.

Each worker registers under an id, says whether it is busy or idle, and sends a
heartbeat (stamped with the Redis server's clock, so machines need no common
time). The crawl is done when the shared queue is empty and every live worker
is idle, read in one atomic step; a worker silent for longer than the timeout
no longer counts. The stop record is written once (``SET NX``): the first
worker to stop the crawl says why, the others read it and follow.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from adaptive_spider.settings.config import ConfigError

if TYPE_CHECKING:
    from redis import Redis

    from adaptive_spider.distributed.queue import CrawlKeys

_HEARTBEAT = """
local now = redis.call('TIME')
redis.call('HSET', KEYS[1], ARGV[1], now[1] + now[2] / 1e6)
"""

# KEYS: queue, workers, heartbeats; ARGV: timeout in seconds.
_DONE = """
if redis.call('ZCARD', KEYS[1]) > 0 then
  return 0
end
local now = redis.call('TIME')
local clock = now[1] + now[2] / 1e6
local statuses = redis.call('HGETALL', KEYS[2])
for i = 1, #statuses, 2 do
  if statuses[i + 1] ~= 'idle' then
    local beat = tonumber(redis.call('HGET', KEYS[3], statuses[i]) or '0')
    if clock - beat <= tonumber(ARGV[1]) then
      return 0
    end
  end
end
return 1
"""

# KEYS: heartbeats; ARGV: timeout. Workers whose last heartbeat is recent enough.
_LIVE = """
local now = redis.call('TIME')
local clock = now[1] + now[2] / 1e6
local beats = redis.call('HGETALL', KEYS[1])
local live = 0
for i = 1, #beats, 2 do
  if clock - tonumber(beats[i + 1]) <= tonumber(ARGV[1]) then
    live = live + 1
  end
end
return live
"""


class WorkerRegistry:
    """Membership, busy/idle state, heartbeats, the page counter and the stop record.

    Parameters
    ----------
    server : redis.Redis
        The connection.
    keys : CrawlKeys
        The crawl's keys.
    worker : str
        This worker's id.
    timeout : float
        Seconds without a heartbeat after which a worker counts as gone.
    """

    def __init__(self, server: Redis, keys: CrawlKeys, worker: str, timeout: float) -> None:
        self.server = server
        self.keys = keys
        self.worker = worker
        self.timeout = timeout
        self._heartbeat = server.register_script(_HEARTBEAT)
        self._done = server.register_script(_DONE)
        self._live = server.register_script(_LIVE)

    # -- membership ------------------------------------------------------------------
    def join(self, query: str) -> None:
        """Register as busy. Every worker of a crawl must crawl for the same query."""
        self.server.set(self.keys.query, query, nx=True)
        # The connection returns bytes (no decode_responses).
        shared = (cast("bytes | None", self.server.get(self.keys.query)) or b"").decode("utf-8")
        if shared != query:
            raise ConfigError(
                f"ADAPTIVE_QUERY: this crawl ({self.keys.prefix}) is for {shared!r}, not {query!r}; "
                "use another ADAPTIVE_DISTRIBUTED_KEY for another query"
            )
        self.server.hset(self.keys.workers, self.worker, "busy")
        self.heartbeat()

    def heartbeat(self) -> None:
        self._heartbeat(keys=[self.keys.heartbeats], args=[self.worker])

    def mark_idle(self) -> None:
        self.server.hset(self.keys.workers, self.worker, "idle")

    def leave(self) -> int:
        """Deregister; returns how many live workers remain."""
        pipe = self.server.pipeline(transaction=True)
        pipe.hdel(self.keys.workers, self.worker)
        pipe.hdel(self.keys.heartbeats, self.worker)
        pipe.execute()
        return self.live_workers()

    def live_workers(self) -> int:
        return int(self._live(keys=[self.keys.heartbeats], args=[self.timeout]))

    # -- progress and stop --------------------------------------------------------------
    def crawl_done(self) -> bool:
        """Nothing queued and no live worker busy (one atomic read)."""
        return bool(self._done(keys=[self.keys.queue, self.keys.workers, self.keys.heartbeats], args=[self.timeout]))

    def count_page(self) -> int:
        """Count one fetched page; returns the crawl-wide count."""
        return int(self.server.incr(self.keys.pages))

    def record_stop(self, reason: str) -> bool:
        """Record why the crawl stopped, unless a worker already did; True if this one did."""
        record = json.dumps({"reason": reason, "worker": self.worker})
        return bool(self.server.set(self.keys.stop, record, nx=True))

    def stop_record(self) -> dict[str, Any] | None:
        """``{"reason": ..., "worker": ...}`` once the crawl has stopped, else None."""
        raw = self.server.get(self.keys.stop)
        return json.loads(raw) if raw else None
