"""Slow and unreliable hosts: how long the server waits, and which URLs always answer 503.

The big web (``../shared/bigweb/README.md``) has hosts like the real web's: some answer
every request after a delay, some fail on a fixed share of their URLs. Both are
deterministic, a function of the host and the URL's canonical path, so a crawl meets
the same web on every run and a simulator can know each URL's delay:

* a slow host waits a per-URL delay before every answer (robots.txt, 404s and
  redirects too): log-normal around the host's median (sigma 0.5), clipped to
  0.2-10 s, from a hash of the URL;
* an unreliable host answers ``503 Service Unavailable`` (``Retry-After: 3600``) on a
  share of its URLs, on every try, chosen by another hash; its robots.txt, its root,
  its mount point and its start page always answer.

The hashes are the spec's (BLAKE2b of ``"SALT|host|canonical path"``), so the project's
server and the spec's reference server pick the same URLs and the same delays.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import quote, unquote

#: Characters a canonical path keeps unquoted (the spec's link graph quotes the same way).
_PATH_SAFE = "/:@!$&'()*+,;=~-._"
_LATENCY_SALT = "latency"
_UNAVAILABLE_SALT = "503"
DELAY_SIGMA = 0.5
MIN_DELAY, MAX_DELAY = 0.2, 10.0
RETRY_AFTER = "3600"
_STANDARD_NORMAL = statistics.NormalDist()


def canonical_path(path: str) -> str:
    """A URL path %-quoted one way, however the link spelled it (``/a%7Eb`` and ``/a~b`` agree)."""
    return quote(unquote(path or "/"), safe=_PATH_SAFE)


def url_hash(salt: str, host: str, path: str) -> float:
    """A number in [0, 1) fixed by ``salt``, the host and the URL's canonical path."""
    digest = hashlib.blake2b(f"{salt}|{host}|{canonical_path(path)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def _frozen(mapping: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class HostConditions:
    """Which hosts are slow (median seconds per answer) and which fail (share of URLs answering 503)."""

    slow: Mapping[str, float] = field(default_factory=dict)
    unreliable: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        for host, median in self.slow.items():
            if not median > 0:
                raise ValueError(f"slow host {host}: median delay must be > 0, got {median}")
        for host, share in self.unreliable.items():
            if not 0 < share < 1:
                raise ValueError(f"unreliable host {host}: share of 503 URLs must be in (0, 1), got {share}")
        object.__setattr__(self, "slow", _frozen(self.slow))
        object.__setattr__(self, "unreliable", _frozen(self.unreliable))

    def __bool__(self) -> bool:
        return bool(self.slow or self.unreliable)

    def delay(self, host: str, path: str) -> float:
        """Seconds the server waits before answering ``path`` on ``host`` (0 on most hosts)."""
        median = self.slow.get(host)
        if not median:
            return 0.0
        unit = min(max(url_hash(_LATENCY_SALT, host, path), 1e-9), 1 - 1e-9)
        seconds = median * math.exp(DELAY_SIGMA * _STANDARD_NORMAL.inv_cdf(unit))
        return round(min(MAX_DELAY, max(MIN_DELAY, seconds)), 3)

    def unavailable(self, host: str, path: str, always_up: tuple[str, ...] = ()) -> bool:
        """True if ``path`` on ``host`` answers 503 on every try; paths in ``always_up`` never do."""
        share = self.unreliable.get(host)
        if not share or path == "/robots.txt" or path in always_up:
            return False
        return url_hash(_UNAVAILABLE_SALT, host, path) < share
