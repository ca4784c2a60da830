"""What a crawl fetched, and the focus metrics of ../shared/webbench/README.md.

Over the sequence of fetches (every response counts, 404s included; robots.txt
and the 301s that Scrapy follows do not), a fetched URL matching a relevant one when
both agree once %-quoted one way (the spec's canonical path: a page links
``operator%3D.html``, the labels name ``operator=.html``, the server serves one file):

* H@N, harvest rate: relevant pages among the first N fetches, divided by N;
* R@N, recall: share of the topic's relevant pages fetched within the first N;
* N50 / N90: fetches needed to reach 50 % / 90 % recall (None: not within the budget).

A metric at N beyond the budget is not measured (None). A crawl that ended
before N (nothing left to fetch) is measured as if it had fetched nothing
relevant after its end. Which N are reported, and what an N50/N90 never reached
counts in means, is a web's :class:`Cutoffs`: the small web's H@200, H@500,
R@500, R@1000 (never reached = budget + 1), the big web's H@200, H@1000, R@1000,
R@5000 (never reached = 10,000, as ``../shared/bigweb/README.md`` has it).
"""

from __future__ import annotations

import hashlib
import math
import statistics
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from benchmarks.webbench.conditions import canonical_path

HARVEST_AT = (200, 500)
RECALL_AT = (500, 1000)
SHARES = {"N50": 0.5, "N90": 0.9}


def canonical_url(url: str) -> str:
    """``url`` with its path %-quoted as the spec's link graph quotes it (its labels' spelling)."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{canonical_path(parts.path)}{query}"


@dataclass(frozen=True)
class Cutoffs:
    """Where H@N and R@N are read, and what an N50/N90 never reached counts as in means
    (``None``: the budget + 1)."""

    harvest_at: tuple[int, ...] = HARVEST_AT
    recall_at: tuple[int, ...] = RECALL_AT
    not_reached: int | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The focus metrics, in table order."""
        return (*(f"H@{n}" for n in self.harvest_at), *(f"R@{n}" for n in self.recall_at), *SHARES)

    def never_reached(self, budget: int) -> int:
        return self.not_reached if self.not_reached is not None else budget + 1


SMALL_WEB = Cutoffs()
BIG_WEB = Cutoffs(harvest_at=(200, 1000), recall_at=(1000, 5000), not_reached=10_000)
CUTOFFS = {"small": SMALL_WEB, "big": BIG_WEB}
#: The metrics of a run on the small web, in table order.
METRICS = (*SMALL_WEB.names, "pages_per_s", "finish_reason")


@dataclass
class Run:
    """One crawl: the fetch order, how long it took (wall clock and this process's CPU) and why it ended."""

    topic: str
    strategy: str
    fetched: list[str] = field(default_factory=list)
    seconds: float = 0.0
    finish_reason: str = ""
    cpu_seconds: float = 0.0
    #: The words the query learned from the crawl's best pages, space-separated (the crawl's
    #: ``adaptive/expansion/terms`` stat at its end; "" for stock Scrapy or none learned).
    learned: str = ""
    #: What the crawl sent that gave no page, from its stats at its end (see :func:`failed_requests`).
    failed: dict = field(default_factory=dict)
    #: What became of the links the spider yielded, from its stats at its end (see :func:`link_counts`).
    links: dict = field(default_factory=dict)
    #: Pages a relevance model in worker processes scored, and pages it could not take (the
    #: workers were busy: the query's score alone), from the crawl's stats; empty without one.
    model_pages: dict = field(default_factory=dict)

    def found_at(self, relevant: set[str], budget: int) -> list[int]:
        """1-based fetch numbers (within the budget) at which a relevant page was fetched first."""
        relevant = {canonical_url(url) for url in relevant}
        seen: set[str] = set()
        found = []
        for number, fetched in enumerate(self.fetched[:budget], 1):
            url = canonical_url(fetched)
            if url in relevant and url not in seen:
                seen.add(url)
                found.append(number)
        return found

    def fingerprint(self, budget: int) -> str:
        """SHA-1 of the fetch order within the budget: equal for identical crawls."""
        return hashlib.sha1("\n".join(self.fetched[:budget]).encode("utf-8")).hexdigest()

    def metrics(self, relevant: set[str], budget: int, cutoffs: Cutoffs = SMALL_WEB) -> dict:
        found = self.found_at(relevant, budget)
        pages = min(len(self.fetched), budget)
        result: dict = {}
        for n in cutoffs.harvest_at:
            result[f"H@{n}"] = round(sum(1 for i in found if i <= n) / n, 3) if n <= budget else None
        for n in cutoffs.recall_at:
            result[f"R@{n}"] = round(sum(1 for i in found if i <= n) / len(relevant), 3) if n <= budget else None
        for name, share in SHARES.items():
            need = max(1, math.ceil(share * len(relevant) - 1e-9))
            result[name] = found[need - 1] if len(found) >= need else None
        result["pages"] = pages
        result["pages_per_s"] = round(pages / self.seconds, 1) if self.seconds else None
        result["pages_per_cpu_s"] = round(pages / self.cpu_seconds, 1) if self.cpu_seconds else None
        result["finish_reason"] = self.finish_reason
        return result


def recall_curve(found_at: list[int], n_relevant: int, pages: int) -> tuple[list[int], list[float]]:
    """Steps of recall against pages fetched: x = 0..pages, y = recall after x fetches."""
    xs, ys = [0], [0.0]
    for count, number in enumerate(found_at, 1):
        xs += [number, number]
        ys += [ys[-1], count / n_relevant]
    xs.append(max(pages, xs[-1]))
    ys.append(ys[-1])
    return xs, ys


def mean_metrics(per_topic: list[dict], budget: int, cutoffs: Cutoffs = SMALL_WEB) -> dict:
    """Mean of each metric over topics; an N50/N90 never reached counts as ``cutoffs.never_reached(budget)``."""
    mean: dict = {}
    for name in (*cutoffs.names, "pages_per_s", "finish_reason"):
        if name == "finish_reason":
            reasons = sorted({m.get(name) or "" for m in per_topic})
            mean[name] = reasons[0] if len(reasons) == 1 else "mixed"
            continue
        values = [m.get(name) for m in per_topic]
        if name in SHARES:
            values = [cutoffs.never_reached(budget) if v is None else v for v in values]
        values = [v for v in values if v is not None]
        mean[name] = round(statistics.mean(values), 3 if name[0] in "HR" else 1) if values else None
    for name in ("pages_per_cpu_s", "speed_vs_stock", "cpu_speed_vs_stock", "speed_vs_replay", "cpu_speed_vs_replay"):
        values = [m[name] for m in per_topic if m.get(name) is not None]
        if values:
            mean[name] = round(statistics.mean(values), 3 if "vs" in name else 1)
    return mean


def summarize(results: dict, strategies: list[str]) -> str:
    """A plain table of per-topic and mean metrics (``results[topic][strategy]`` = metrics)."""
    columns = ["H@200", "R@500", "R@1000", "N50", "N90", "pages_per_s"]
    lines = [f"{'topic':<20} {'strategy':<11} " + " ".join(f"{c:>8}" for c in columns)]
    for topic, by_strategy in results.items():
        for strategy in strategies:
            m = by_strategy[strategy]
            lines.append(f"{topic:<20} {strategy:<11} " + " ".join(f"{m[c]!s:>8}" for c in columns))
    lines.append("mean (N never reached counts as the budget + 1)")
    for strategy in strategies:
        budget = next(iter(results.values()))[strategy].get("budget", 1000)
        mean = mean_metrics([by[strategy] for by in results.values()], budget)
        lines.append(f"{'mean':<20} {strategy:<11} " + " ".join(f"{mean[c]!s:>8}" for c in columns))
    return "\n".join(lines)
