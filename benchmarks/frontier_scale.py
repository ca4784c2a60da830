"""Frontier scale: time per request and RAM per queued URL as the AdaptiveScheduler's frontier grows to 1M.

Synthetic links with a realistic context (several thousand domains of skewed
popularity, paths of a few segments, some query strings, anchor texts of one to
six words some of which are query words, the depth and the page a link was found
on) are enqueued into a real AdaptiveScheduler (Scrapy's dupefilter included)
built from a crawler's settings, in batches as a crawl's pages would yield them.
First 1,000 released requests are rewarded, so that a learning strategy has left
its warm-up (a fitted tree, a trained network) before anything is timed. At each
checkpoint (100k, 300k, 1M queued) a window of requests is released with
the frontier at that size (the release cost at that size; the first request out,
which files the entries queued since the last release into the strategy's pools, is
timed apart, as µs per filed URL), then a second window
whose requests are each rewarded like a fetched page (the tree is fitted, the
Q-network trained, the tree refitted and the frontier re-partitioned as
experience grows: the learning cost per page, and the release cost while
learning); at the end the whole frontier is released (the amortised cost). Each strategy runs in
its own process, so its RSS growth is its own; Scrapy's own scheduler (memory
queues, breadth-first, ``ScrapyPriorityQueue``) is the baseline.

    python -m benchmarks.frontier_scale                       # tres, bfs, stock; 100k/300k/1M
    python -m benchmarks.frontier_scale --sizes 20000,50000 --strategies tres   # quick look
    python -m benchmarks.frontier_scale --breakdown           # bytes per URL by component (tracemalloc)

Times are CPU times of the process (the development machine is shared; wall
clock time there measures the other jobs). Reported per strategy and checkpoint: enqueue µs per URL (scheduler only; the
spider's Request creation excluded), release µs per request at that size
(``next_request``), learning µs per rewarded page, RSS bytes per queued URL
(Request objects included, as the frontier holds them), and the drain's
amortised µs per released request; then fits of release cost against log n.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

PROJECT = Path(__file__).resolve().parent.parent
QUERY = "asyncio event loop coroutines and tasks"
KEYWORDS = ["asyncio", "coroutine", "event loop", "task"]
TOPICAL = ["asyncio", "coroutines", "event", "loop", "tasks", "await", "futures", "concurrency"]
GENERIC = (
    "home about contact blog news docs guide reference api tutorial index download install release notes "
    "faq support community project team history license privacy terms search archive tags category page "
    "next previous up contents overview introduction advanced examples changelog"
).split()
SECTIONS = ["docs", "library", "guide", "blog", "api", "news", "reference", "howto", "forum", "wiki"]
STOCK = "stock"
TARGET_US = 100.0
TARGET_BYTES = 1024.0
PRIME_PAGES = 1000


class LinkSource:
    """Synthetic pages and their links, deterministic for a seed.

    Each page belongs to a domain (Zipf-like popularity over ``domains``) and
    yields ``links_per_page`` links: most to its own domain, some elsewhere.
    """

    def __init__(self, domains: int = 5000, links_per_page: int = 50, seed: int = 0):
        self.rng = random.Random(seed)
        self.domains = [f"www.site{i}.example" if i % 3 else f"docs.project{i}.example" for i in range(domains)]
        weights = [1.0 / (rank + 1) ** 0.8 for rank in range(domains)]
        total = sum(weights)
        self.cumulative = np.cumsum([w / total for w in weights])
        self.links_per_page = links_per_page
        self.serial = 0

    def domain(self) -> int:
        return min(int(np.searchsorted(self.cumulative, self.rng.random())), len(self.domains) - 1)

    def page(self) -> tuple[int, float, int]:
        """A fetched page: its domain index, its relevance and its depth."""
        domain = self.domain()
        relevance = self.rng.random() ** 3  # mostly irrelevant pages
        return domain, relevance, self.rng.randint(0, 8)

    def links(self, page_domain: int, depth: int, parent_id: int) -> list[tuple[str, dict, str]]:
        """(URL, meta, referring page URL) of the links of one page."""
        rng = self.rng
        referer = f"http://{self.domains[page_domain]}/{rng.choice(SECTIONS)}/page-{parent_id}.html"
        out = []
        for _ in range(self.links_per_page):
            self.serial += 1
            domain = page_domain if rng.random() < 0.8 else self.domain()
            segments = [rng.choice(SECTIONS)] + [
                f"{rng.choice(GENERIC)}-{rng.randrange(100)}" for _ in range(rng.randint(0, 2))
            ]
            words = [rng.choice(TOPICAL if rng.random() < 0.1 else GENERIC) for _ in range(rng.randint(1, 6))]
            url = f"http://{self.domains[domain]}/{'/'.join(segments)}/{'-'.join(words[:3])}-{self.serial}.html"
            if rng.random() < 0.1:
                url += f"?page={rng.randrange(20)}"
            meta = {"depth": depth + 1, "link_text": " ".join(words).capitalize(), "adaptive_parent": parent_id}
            out.append((url, meta, referer))
        return out


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def build_scheduler(strategy: str, seed: int, extra: dict | None = None):
    """A scheduler as a crawl builds it (from a crawler's settings and ``extra``), opened on a spider."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from adaptive_spider.crawl.scheduler import AdaptiveScheduler

    settings = {"LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False, "REMOTE_CONTROL_ENABLED": False}
    if strategy == STOCK:
        from scrapy.core.scheduler import Scheduler

        settings.update(
            {
                "DEPTH_PRIORITY": 1,
                "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
                "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
                # Scrapy's default, DownloaderAwarePriorityQueue, scans every domain's slot on each
                # pop (about 0.7 ms with 5000 domains and nothing downloading): not a fair baseline here.
                "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
            }
        )
        scheduler_cls = Scheduler
    else:
        settings.update(
            {
                "ADDONS": {"adaptive_spider.addon.AdaptiveAddon": 0},
                "ADAPTIVE_STRATEGY": strategy,
                "ADAPTIVE_SEED": seed,
                "ADAPTIVE_QUERY": QUERY,
                "ADAPTIVE_KEYWORDS": KEYWORDS,
                "ADAPTIVE_LOG_DECISIONS": False,
            }
        )
        scheduler_cls = AdaptiveScheduler
    settings.update(extra or {})
    crawler = get_crawler(Spider, settings)
    spider = Spider(name="scale")
    spider.crawler = crawler
    crawler.spider = spider
    scheduler = scheduler_cls.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler, spider


def make_requests(links, spider) -> list:
    """Requests as the focused spider yields them after Scrapy's spider middlewares: a callback,
    the link's meta (depth, anchor text, parent page) and a Referer header."""
    from scrapy import Request

    return [
        Request(url, callback=spider.parse, meta=meta, headers={"Referer": referer}) for url, meta, referer in links
    ]


class ScaleRun:
    """One strategy's run: grow the frontier through the checkpoints, release windows, drain it."""

    def __init__(self, strategy: str, sizes: list[int], window: int, domains: int, seed: int):
        self.strategy = strategy
        self.sizes = sizes
        self.window = window
        self.source = LinkSource(domains=domains, seed=seed)
        self.scheduler, self.spider = build_scheduler(strategy, seed)
        gc.collect()
        self.rss_start = rss_bytes()
        self.state = getattr(self.scheduler, "state", None)
        self.queued = 0
        self.rewarded = 0
        self.learn_seconds = 0.0

    def run(self) -> dict:
        self._prime()
        checkpoints = []
        enqueue_seconds, enqueued = 0.0, 0
        for size in self.sizes:
            segment_seconds, segment_count = self._grow_to(size)
            enqueue_seconds += segment_seconds
            enqueued += segment_count
            gc.collect()
            rss = rss_bytes() - self.rss_start
            queued = len(self.scheduler)
            # The first request out files every entry queued since the last release into the
            # strategy's pools (one batch; a crawl releases all along, so a page's links at a
            # time): timed apart, as the cost of those entries, not of releasing at this size.
            filed = self._unfiled()
            # (the requests of the last round still in the ready queue go first)
            settle_seconds, _, _ = self._release(len(getattr(self.scheduler, "ready", ())) + 1, reward=False)
            release_seconds, _, released = self._release(self.window, reward=False)
            self._grow_to(size)
            refits_before = self._refits()
            learning_release_seconds, learn_seconds, rewarded = self._release(self.window, reward=True)
            refits = self._refits() - refits_before
            # A refit re-partitions the frontier; the next selection re-files every entry.
            refit_seconds = (
                (learning_release_seconds - release_seconds * rewarded / max(released, 1)) / refits if refits else None
            )
            checkpoints.append(
                {
                    "queued": queued,
                    "enqueue_us": round(1e6 * segment_seconds / max(segment_count, 1), 2),
                    "release_us": round(1e6 * release_seconds / max(released, 1), 2),
                    "settle_us_per_filed_url": round(1e6 * settle_seconds / filed, 3) if filed else None,
                    "release_us_while_learning": round(1e6 * learning_release_seconds / max(rewarded, 1), 2),
                    "learn_us_per_page": round(1e6 * learn_seconds / max(rewarded, 1), 1),
                    "refits": refits,
                    "seconds_per_refit": round(refit_seconds, 3) if refit_seconds is not None else None,
                    "rss_bytes_per_url": round(rss / queued, 1),
                }
            )
            self._grow_to(size)  # back to the checkpoint size for the next segment
        queued = len(self.scheduler)
        drain_seconds, _, drained = self._release(None, reward=False)
        return {
            "strategy": self.strategy,
            "checkpoints": checkpoints,
            "drain": {
                "released": drained,
                "from_queued": queued,
                "us_per_request": round(1e6 * drain_seconds / max(drained, 1), 2),
            },
            "enqueue_us_overall": round(1e6 * enqueue_seconds / max(enqueued, 1), 2),
            "rewarded_pages": self.rewarded,
        }

    def _prime(self, pages: int = PRIME_PAGES) -> None:
        """Leave the learning strategy's warm-up (random scores, one leaf) before the first
        checkpoint: every checkpoint's release is then timed in the state a crawl spends its
        life in (a fitted tree, a trained network), and the sizes compare like with like."""
        if self.state is None:
            return
        self._grow_to(min(self.sizes[0], 20 * pages))
        self._release(pages, reward=True)

    def _unfiled(self) -> int:
        """Queued entries not yet filed in the strategy's pools (tres; the others file on arrival)."""
        strategy = getattr(getattr(self.scheduler, "frontier", None), "strategy", None)
        pending = getattr(strategy, "pending", None)
        return sum(len(entries) for entries in pending.values()) if isinstance(pending, dict) else 0

    def _refits(self) -> int:
        strategy = getattr(getattr(self.scheduler, "frontier", None), "strategy", None)
        return getattr(strategy, "n_refits", 0)

    def _grow_to(self, size: int) -> tuple[float, int]:
        seconds, count = 0.0, 0
        while len(self.scheduler) < size:
            page_domain, relevance, depth = self.source.page()
            parent_id = self._log_page(page_domain, relevance)
            links = self.source.links(page_domain, depth, parent_id)[: size - len(self.scheduler)]
            requests = make_requests(links, self.spider)
            began = time.process_time()
            for request in requests:
                self.scheduler.enqueue_request(request)
            seconds += time.process_time() - began
            count += len(requests)
        return seconds, count

    def _log_page(self, domain_index: int, relevance: float) -> int:
        """A fetched page in the crawl's log (its links' parent_score and sibling features)."""
        if self.state is None:
            return -1
        domain = self.source.domains[domain_index]
        self.state.domains.record_relevance(domain, relevance)
        return self.state.pages.add(self.state.domains.id_of(domain), relevance)

    def _release(self, limit: int | None, reward: bool) -> tuple[float, float, int]:
        release_seconds = learn_seconds = 0.0
        released = 0
        while limit is None or released < limit:
            began = time.process_time()
            request = self.scheduler.next_request()
            release_seconds += time.process_time() - began
            if request is None:
                break
            released += 1
            if self.state is not None:
                began = time.process_time()
                self._respond(request, reward)
                learn_seconds += time.process_time() - began
        return release_seconds, learn_seconds, released

    def _respond(self, request, reward: bool) -> None:
        """What a crawl does when a released request's page arrives: the domain profile records
        the response (as DomainProfileMiddleware does); with ``reward``, the page is logged and
        its relevance is the decision's reward (as the RelevanceMiddleware does)."""
        from adaptive_spider.crawl.state import domain_of

        domain = domain_of(request.url)
        self.state.domains.record_response(domain, 200, 0.01)
        decision = request.meta.get("adaptive")
        if not reward or not decision:
            return
        text = request.meta.get("link_text", "").lower()
        relevance = min(1.0, 0.25 * sum(word in text for word in TOPICAL) + 0.1 * random.random())
        self.state.domains.record_relevance(domain, relevance)
        page_id = self.state.pages.add(
            self.state.domains.id_of(domain), relevance, request.meta.get("adaptive_parent", -1)
        )
        self.scheduler.frontier.observe(decision["features"], relevance, page_id, decision.get("leaf", -1))
        self.rewarded += 1


def breakdown(strategy: str, n: int, domains: int, seed: int) -> dict:
    """Bytes per queued URL by component, with tracemalloc on ``n`` URLs."""
    source = LinkSource(domains=domains, seed=seed)
    scheduler, spider = build_scheduler(strategy, seed)
    state = getattr(scheduler, "state", None)
    links = []
    while len(links) < n:
        domain, relevance, depth = source.page()
        parent = -1
        if state is not None:
            state.domains.record_relevance(source.domains[domain], relevance)
            parent = state.pages.add(state.domains.id_of(source.domains[domain]), relevance)
        links.extend(source.links(domain, depth, parent))
    links = links[:n]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    requests = make_requests(links, spider)
    after_requests = tracemalloc.get_traced_memory()[0]
    for request in requests:
        scheduler.enqueue_request(request)
    del requests
    gc.collect()
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    total = sum(stat.size_diff for stat in snapshot.compare_to(before, "filename"))
    by_file: dict[str, int] = {}
    for stat in snapshot.compare_to(before, "filename"):
        name = stat.traceback[0].filename
        key = _component(name)
        by_file[key] = by_file.get(key, 0) + stat.size_diff
    return {
        "strategy": strategy,
        "urls": n,
        "total_bytes_per_url": round(total / n, 1),
        "request_objects_bytes_per_url": round(after_requests / n, 1),
        "by_component_bytes_per_url": {k: round(v / n, 1) for k, v in sorted(by_file.items(), key=lambda kv: -kv[1])},
    }


def component_split(strategy: str, n: int, domains: int, seed: int) -> dict:
    """CPU µs per URL of the parts of enqueuing and releasing, each timed alone on ``n`` links."""
    from scrapy.utils.request import fingerprint

    from adaptive_spider.frontier.features import static_vector
    from adaptive_spider.frontier.store import PackedRequest
    from adaptive_spider.relevance.linkpreview import LinkPreview

    source = LinkSource(domains=domains, seed=seed)
    scheduler, spider = build_scheduler(strategy, seed)
    state = scheduler.state
    links = []
    while len(links) < n:
        domain, relevance, depth = source.page()
        parent = state.pages.add(state.domains.id_of(source.domains[domain]), relevance)
        links.extend(source.links(domain, depth, parent))
    links = links[:n]
    requests = make_requests(links, spider)
    parts = {}

    def timed(name, function, items):
        began = time.process_time()
        for item in items:
            function(item)
        parts[name] = round(1e6 * (time.process_time() - began) / len(items), 2)

    timed("Scrapy fingerprint (dupefilter)", fingerprint, make_requests(links, spider))
    previews = []
    timed(
        "link preview (URL parsed, query terms)",
        lambda r: previews.append(LinkPreview.of(r, state.terms, r.meta["link_text"])),
        requests,
    )
    timed("anchor_similarity", lambda p: state.scorer.score_term_ids(p.term_ids), previews)
    timed(
        "static_features",
        lambda p: static_vector(
            depth=3,
            parent_score=0.5,
            anchor_similarity=0.5,
            path_segments=p.path_depth,
            has_query=p.has_query,
            round_discovered=3,
        ),
        previews,
    )
    packed = []
    timed("pack", lambda r: packed.append(PackedRequest(r, {})), requests)
    timed("unpack (new Request)", PackedRequest.unpack, packed)
    return parts


def _component(filename: str) -> str:
    for marker, name in (
        ("adaptive_spider/frontier/store", "frontier store"),
        ("adaptive_spider/frontier/tres", "tres leaf pools"),
        ("adaptive_spider/frontier/baselines", "bfs queue"),
        ("adaptive_spider/frontier", "frontier (other)"),
        ("adaptive_spider/features", "feature vectors"),
        ("adaptive_spider/", "adaptive_spider (other)"),
        ("scrapy/dupefilters", "dupefilter"),
        ("scrapy/utils/request", "dupefilter"),
        ("scrapy/http/request", "Request data (URL, meta, headers)"),
        ("scrapy/http/headers", "Request data (URL, meta, headers)"),
        ("scrapy/squeues", "stock queue"),
        ("queuelib", "stock queue"),
        ("scrapy/pqueues", "stock queue"),
        ("w3lib", "Request data (URL, meta, headers)"),
        ("benchmarks/frontier_scale", "benchmark"),
    ):
        if marker in filename:
            return name
    return "other"


def fit_log(points: list[tuple[int, float]]) -> dict:
    """Least-squares fits of cost against size: c = a + b ln n, and c = k n^alpha."""
    n = np.array([p[0] for p in points], dtype=float)
    c = np.array([p[1] for p in points], dtype=float)
    b, a = np.polyfit(np.log(n), c, 1)
    alpha, _ = np.polyfit(np.log(n), np.log(c), 1)
    return {
        "a_us": round(float(a), 2),
        "b_us_per_ln_n": round(float(b), 3),
        "alpha": round(float(alpha), 3),
        "growth_100k_to_1M": round(float(c[-1] / c[0]), 3),
        "log_growth_100k_to_1M": round(math.log(n[-1]) / math.log(n[0]), 3),
    }


def run_in_child(args, strategy: str) -> dict:
    command = [
        sys.executable,
        "-m",
        "benchmarks.frontier_scale",
        "--child",
        strategy,
        "--sizes",
        args.sizes,
        "--window",
        str(args.window),
        "--domains",
        str(args.domains),
        "--seed",
        str(args.seed),
    ]
    if args.breakdown:
        command.append("--breakdown")
    completed = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True)
    if completed.returncode != 0:
        raise SystemExit(f"{strategy}: the child run failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def print_report(results: list[dict]) -> None:
    stock = next((r for r in results if r["strategy"] == STOCK), None)
    print(
        f"{'strategy':<9} {'queued':>9} {'enqueue µs':>10} {'filing µs':>9} {'release µs':>10} {'(learning)':>10} "
        f"{'learn µs/page':>13} {'refits':>6} {'s/refit':>7} {'RSS B/URL':>9}"
    )
    for result in results:
        learns = result["strategy"] != STOCK
        for point in result["checkpoints"]:
            print(
                f"{result['strategy']:<9} {point['queued']:>9,} {point['enqueue_us']:>10} "
                f"{point.get('settle_us_per_filed_url') or '–':>9} {point['release_us']:>10} "
                f"{point['release_us_while_learning'] if learns else '–':>10} "
                f"{point['learn_us_per_page'] if learns else '–':>13} {point['refits']:>6} "
                f"{point['seconds_per_refit'] if point['seconds_per_refit'] is not None else '–':>7} "
                f"{point['rss_bytes_per_url']:>9}"
            )
    print()
    for result in results:
        drain = result["drain"]
        amortised = result["enqueue_us_overall"] + drain["us_per_request"]
        line = (
            f"{result['strategy']:<9} drain of {drain['from_queued']:,}: {drain['us_per_request']} µs per released request; "
            f"with its enqueue: {amortised:.1f} µs per request"
        )
        if stock is not None and result is not stock:
            stock_amortised = stock["enqueue_us_overall"] + stock["drain"]["us_per_request"]
            line += f" ({amortised / stock_amortised:.1f}× stock)"
        print(line)
        if len(result["checkpoints"]) >= 2:
            fit = fit_log([(p["queued"], p["release_us"]) for p in result["checkpoints"]])
            print(
                f"{'':<9} release cost vs size: {fit['a_us']} + {fit['b_us_per_ln_n']} ln n µs; "
                f"n^{fit['alpha']}; ×{fit['growth_100k_to_1M']} from first to last size "
                f"(log n grows ×{fit['log_growth_100k_to_1M']})"
            )
            result["fit"] = fit
        last = result["checkpoints"][-1]
        if result["strategy"] != STOCK:
            meets = (amortised <= TARGET_US, last["rss_bytes_per_url"] <= TARGET_BYTES)
            print(
                f"{'':<9} targets at {last['queued']:,}: ≤ {TARGET_US:.0f} µs per request amortised "
                f"{'met' if meets[0] else 'MISSED'}, ≤ {TARGET_BYTES:.0f} B per queued URL "
                f"{'met' if meets[1] else 'MISSED'}"
            )
        if "split" in result:
            parts = ", ".join(f"{k} {v}" for k, v in result["split"].items())
            print(f"{'':<9} parts, µs per URL: {parts}")
        if "breakdown" in result:
            b = result["breakdown"]
            parts = ", ".join(f"{k} {v}" for k, v in b["by_component_bytes_per_url"].items())
            print(f"{'':<9} tracemalloc, {b['urls']:,} URLs: {b['total_bytes_per_url']} B/URL: {parts}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,300000,1000000", help="checkpoints: queued URLs (comma-separated)")
    parser.add_argument("--strategies", default=f"tres,bfs,{STOCK}")
    parser.add_argument("--window", type=int, default=10000, help="requests released (and rewarded) at each checkpoint")
    parser.add_argument("--domains", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also bytes per URL by component (tracemalloc, 50k URLs) and µs per URL of the parts of enqueue and release",
    )
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.child:
        random.seed(args.seed)
        result = ScaleRun(args.child, sizes, args.window, args.domains, args.seed).run()
        if args.breakdown:
            result["breakdown"] = breakdown(args.child, min(50000, sizes[0]), args.domains, args.seed)
            if args.child != STOCK:
                result["split"] = component_split(args.child, min(20000, sizes[0]), args.domains, args.seed)
        print(json.dumps(result))
        return 0
    results = []
    for strategy in args.strategies.split(","):
        print(f"running {strategy} ...", file=sys.stderr, flush=True)
        began = time.perf_counter()
        results.append(run_in_child(args, strategy))
        print(f"  {strategy}: {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    print_report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
