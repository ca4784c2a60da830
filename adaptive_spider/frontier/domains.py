"""Domain profiles: what the crawl has learned about each domain so far.

:class:`DomainProfileMiddleware <adaptive_spider.crawl.downloadermiddlewares.DomainProfileMiddleware>`
records latencies, status codes and transport failures; the relevance middleware records
page relevance. A domain's health comes from transport outcomes only: connection errors,
timeouts, DNS failures and 5xx/429 answers, each attempt counted (Scrapy's retries are
attempts too, so a host that fails transiently and then answers stays healthy). A 404 or
403 says a page is missing, not that the host is down: it is kept in the statuses (the
crawl report shows it) and is a reward of 0 for the learner, but it is no failure.
A host that could not even be connected to (its name does not resolve, it refuses the
connection, the proxy refuses the tunnel), on its robots.txt or a page, and never answered,
is *unreachable*: the links still queued for it are dropped, instead of each failing in turn.

The frontier reads the profiles as features of every queued URL (kept in numpy columns
so a batch of URLs reads them at once) and as filters before a request is released
(slow, unreliable and capped domains).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator
from statistics import median

import numpy as np

from adaptive_spider.relevance.scoring import log_norm


def is_host_failure_status(status: int) -> bool:
    """A status that says the host is failing or overloaded (5xx, 429); other 4xx are the page's."""
    return status >= 500 or status == 429


#: Latencies kept per domain for the median.
LATENCY_WINDOW = 64
#: Pages after which ``domain_count`` saturates at 1.
COUNT_SCALE = 1000.0


class DomainProfile:
    """Counters of one domain (plain Python, cheap to update and to pickle)."""

    __slots__ = (
        "name",
        "attempts",
        "failures",
        "dns_failures",
        "unreachable",
        "statuses",
        "latencies",
        "pages",
        "relevance_sum",
        "released",
    )

    def __init__(self, name: str):
        self.name = name
        self.attempts = 0
        self.failures = 0
        self.dns_failures = 0
        #: Connections to the host that failed before any answer (robots.txt's included).
        self.unreachable = 0
        self.statuses: Counter = Counter()
        self.latencies: deque = deque(maxlen=LATENCY_WINDOW)
        self.pages = 0
        self.relevance_sum = 0.0
        self.released = 0

    def __setstate__(self, state: tuple | dict) -> None:
        # A profile pickled before ``unreachable`` existed (a JOBDIR of an earlier release).
        self.unreachable = 0
        slots = state[1] if isinstance(state, tuple) else state
        for name, value in (slots or {}).items():
            setattr(self, name, value)

    @property
    def failure_rate(self) -> float:
        return self.failures / self.attempts if self.attempts else 0.0

    @property
    def median_latency_ms(self) -> float:
        return 1000.0 * median(self.latencies) if self.latencies else 0.0

    @property
    def mean_relevance(self) -> float:
        return self.relevance_sum / self.pages if self.pages else 0.0

    def as_dict(self) -> dict:
        return {
            "domain": self.name,
            "attempts": self.attempts,
            "failures": self.failures,
            "dns_failures": self.dns_failures,
            "unreachable": self.unreachable,
            "failure_rate": round(self.failure_rate, 4),
            "median_latency_ms": round(self.median_latency_ms, 1),
            "statuses": dict(self.statuses),
            "pages": self.pages,
            "mean_relevance": round(self.mean_relevance, 4),
            "released": self.released,
        }


class DomainProfiles:
    """All domain profiles of a crawl, with their features as numpy columns.

    Domains get small integer ids in order of first sight; ``features(ids)``
    returns the four per-domain features of the frontier for a batch of ids:
    domain_relevance (mean page relevance, smoothed toward the crawl's mean),
    domain_count, domain_failure_rate and domain_weight.
    """

    def __init__(self, weights: dict[str, float] | None = None, *, min_attempts: int = 5):
        self.weights = dict(weights or {})
        self.min_attempts = min_attempts
        self.ids: dict[str, int] = {}
        self.profiles: list[DomainProfile] = []
        self._columns = np.zeros((16, 4), dtype=np.float32)
        self._relevance_total = 0.0
        self._pages_total = 0

    def __len__(self) -> int:
        return len(self.profiles)

    def __iter__(self) -> Iterator[DomainProfile]:
        return iter(self.profiles)

    def id_of(self, domain: str) -> int:
        domain_id = self.ids.get(domain)
        if domain_id is None:
            domain_id = len(self.profiles)
            self.ids[domain] = domain_id
            self.profiles.append(DomainProfile(domain))
            if domain_id >= len(self._columns):
                self._columns = np.vstack([self._columns, np.zeros_like(self._columns)])
            self._columns[domain_id, 3] = self.weight_of(domain)
            self._refresh(domain_id)
        return domain_id

    def get(self, domain: str) -> DomainProfile:
        return self.profiles[self.id_of(domain)]

    def weight_of(self, domain: str) -> float:
        """The configured weight of a domain; a weight for ``example.com`` covers its subdomains."""
        name = domain
        while True:
            if name in self.weights:
                return self.weights[name]
            _, dot, rest = name.partition(".")
            if not dot:
                return 1.0
            name = rest

    # -- recording ---------------------------------------------------------------
    def record_response(self, domain: str, status: int, latency: float | None) -> None:
        domain_id = self.id_of(domain)
        profile = self.profiles[domain_id]
        profile.attempts += 1
        profile.statuses[int(status)] += 1
        if is_host_failure_status(status):
            profile.failures += 1
        if latency is not None:
            profile.latencies.append(float(latency))
        self._refresh(domain_id)

    def record_failure(self, domain: str, *, dns: bool = False, unreachable: bool = False) -> None:
        """A request that got no answer; ``unreachable``: not even a connection (``dns`` is one)."""
        domain_id = self.id_of(domain)
        profile = self.profiles[domain_id]
        profile.attempts += 1
        profile.failures += 1
        profile.dns_failures += int(dns)
        profile.unreachable += int(unreachable or dns)
        self._refresh(domain_id)

    def record_unreachable(self, domain: str) -> None:
        """A connection to the domain failed outside its pages (its robots.txt): no attempt of a page."""
        self.profiles[self.id_of(domain)].unreachable += 1

    def record_relevance(self, domain: str, relevance: float) -> None:
        domain_id = self.id_of(domain)
        profile = self.profiles[domain_id]
        profile.pages += 1
        profile.relevance_sum += relevance
        self._relevance_total += relevance
        self._pages_total += 1
        self._refresh(domain_id)

    def record_release(self, domain_id: int) -> None:
        self.profiles[domain_id].released += 1

    def _refresh(self, domain_id: int) -> None:
        profile = self.profiles[domain_id]
        prior = self._relevance_total / self._pages_total if self._pages_total else 0.0
        row = self._columns[domain_id]
        row[0] = (profile.relevance_sum + prior) / (profile.pages + 1)
        row[1] = log_norm(profile.pages, COUNT_SCALE)
        row[2] = profile.failure_rate

    # -- reading -------------------------------------------------------------------
    def features(self, domain_ids: np.ndarray) -> np.ndarray:
        """Columns (relevance, count, failure_rate, weight) for a batch of domain ids."""
        return self._columns[domain_ids]

    def is_unreliable(self, domain_id: int, threshold: float) -> bool:
        profile = self.profiles[domain_id]
        return profile.attempts >= self.min_attempts and profile.failure_rate > threshold

    def is_dead(self, domain_id: int, min_attempts: int) -> bool:
        """Whether the domain had ``min_attempts`` attempts and not one served a page (2xx or a redirect):
        a site that is gone, or one the crawl's links reach only at wrong addresses."""
        profile = self.profiles[domain_id]
        if not min_attempts or profile.attempts < min_attempts:
            return False
        return not self.has_served(domain_id)

    def is_unreachable(self, domain_id: int, min_failures: int) -> bool:
        """Whether ``min_failures`` connections to the domain failed and it never answered a
        request (0: never): the links still queued for it would fail the same way."""
        profile = self.profiles[domain_id]
        return bool(min_failures) and profile.unreachable >= min_failures and not profile.statuses

    def has_served(self, domain_id: int) -> bool:
        """Whether any answer of the domain served a page (2xx or a redirect)."""
        return any(200 <= status < 400 for status in self.profiles[domain_id].statuses)

    def is_slow(self, domain_id: int, slow_ms: float, min_answers: int = 3) -> bool:
        """Whether the domain's median latency is above ``slow_ms``, once it answered ``min_answers`` times."""
        profile = self.profiles[domain_id]
        return len(profile.latencies) >= min_answers and profile.median_latency_ms > slow_ms

    def is_untried(self, domain_id: int) -> bool:
        """A request to the domain is on its way, but none has come back yet."""
        profile = self.profiles[domain_id]
        return profile.attempts == 0 and profile.released > 0

    def is_capped(self, domain_id: int, max_pages: int) -> bool:
        return max_pages > 0 and self.profiles[domain_id].released >= max_pages

    # -- persistence ----------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"profiles": self.profiles, "relevance_total": self._relevance_total, "pages_total": self._pages_total}

    def load_state_dict(self, state: dict) -> None:
        self.ids = {}
        self.profiles = []
        self._columns = np.zeros((max(16, len(state["profiles"]) * 2), 4), dtype=np.float32)
        self._relevance_total = state["relevance_total"]
        self._pages_total = state["pages_total"]
        for profile in state["profiles"]:
            domain_id = self.id_of(profile.name)
            self.profiles[domain_id] = profile
            self._refresh(domain_id)


class DomainLoad:
    """The requests in flight per domain during one release round, against a limit per domain.

    A request released for a domain whose download slot is full waits in the
    downloader, holding one of its ``CONCURRENT_REQUESTS`` places; a slow host would
    take them all. The frontier passes over such a domain's entries instead (as
    Scrapy's ``DownloaderAwarePriorityQueue`` prefers the least busy slot), when the
    domain is slow enough for the wait to matter (``ADAPTIVE_DOMAIN_IN_FLIGHT_MS``): a
    fast domain's queued request starts in moments, and passing over the best link
    for a worse one would cost the focus more than the wait.
    """

    __slots__ = ("counts", "limit", "slow_limit", "slow_count")

    def __init__(self, counts: Counter[int], limit: int, slow_limit: int = -1) -> None:
        self.counts = counts
        self.limit = limit
        #: Most requests in flight of the slow domains taken together (-1: no such limit).
        self.slow_limit = slow_limit
        #: Requests in flight of the slow domains (the frontier counts them: it knows which are slow).
        self.slow_count = 0

    def is_busy(self, domain_id: int) -> bool:
        """Whether a slow domain may not have another request in flight: its own places, or
        the slow domains' together, are taken."""
        return self.counts[domain_id] >= self.limit or 0 <= self.slow_limit <= self.slow_count

    def free(self, domain_id: int) -> int:
        """Places the slow domain has before it is busy."""
        free = self.limit - self.counts[domain_id]
        if self.slow_limit >= 0:
            free = min(free, self.slow_limit - self.slow_count)
        return max(0, free)

    def add(self, domain_id: int, slow: bool = False) -> None:
        """A request of the domain was released in this round."""
        self.counts[domain_id] += 1
        if slow:
            self.slow_count += 1
