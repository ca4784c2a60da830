"""Real crawls that stop by themselves: a local site with a known answer set, a
site with nothing relevant, the pipeline's item filter, the JSON report, the
offline command, JOBDIR resumption and bad settings."""

from __future__ import annotations

import html
import json
import logging
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerRunner

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.demo.site import DemoSite, serve
from adaptive_spider.items import PageItem
from adaptive_spider.sufficiency.offline import evaluate_knowledge_base, read_knowledge_base
from spiders.focused import FocusedSpider
from tests.conftest import CrawlResult, crawl_test, project_settings, run_crawl

PROJECT = Path(__file__).resolve().parent.parent
QUERY = "repot orchid bark roots"
FILLER = (
    "the a of and to in is for with on by this that from at as it be or are was which an about more "
    "also some other many when where how each season weekly light water"
).split()
OTHER_TOPICS = {
    "tomato": "tomato stake prune sideshoot ripen vine greenhouse",
    "lawn": "lawn mow grass seed edge moss scarify",
    "rose": "rose prune hip aphid deadhead climber",
    "pond": "pond liner pump algae lily frog filter",
    "hedge": "hedge trim privet yew shape clippers",
    "compost": "compost heap turn worms brown green",
    "carrot": "carrot sow thin fly drill harvest",
    "cactus": "cactus spine succulent dry sun gravel",
}
ANSWER_PAGES = {
    "/guides/orchid-repotting.html": ("Repotting orchids in fresh bark", "repot orchid bark roots pot trim"),
    "/guides/orchid-roots.html": ("Orchid roots: healthy, rotten, aerial", "orchid roots rot aerial repot bark"),
    "/guides/orchid-bark.html": ("Choosing bark for orchids", "bark orchid roots drainage repot chips"),
}


class AnswerSite:
    """A garden site: 3 pages answer the query, ~120 do not (some share a word with it)."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.pages: dict[str, str] = {}
        self.extra: dict = {}
        self.relevant = set(ANSWER_PAGES)
        self._build()

    def _text(self, topical: str, n: int) -> str:
        """Topical words, filler, and words of the page's own (so no two pages look alike)."""
        words = topical.split()
        out = []
        for _ in range(n):
            draw = self.rng.random()
            if words and draw < 0.3:
                out.append(self.rng.choice(words))
            elif draw < 0.6:
                out.append(self.rng.choice(FILLER))
            else:
                out.append(f"w{self.rng.randrange(100000)}")
        return " ".join(out)

    def _page(self, title: str, paragraphs: list[str], links: list[tuple[str, str]]) -> str:
        body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
        items = "".join(f'<li><a href="{href}">{html.escape(text)}</a></li>' for href, text in links)
        return (
            f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
            f"{body}<ul>{items}</ul></body></html>"
        )

    def _build(self) -> None:
        sections = ["guides", "news", "shop", "events", "forum"]
        self.pages["/"] = self._page(
            "Green fingers", [self._text("", 40)], [(f"/{s}/", s.capitalize()) for s in sections]
        )
        guides = []
        for topic, words in OTHER_TOPICS.items():
            for n in range(3):
                path = f"/guides/{topic}-{n}.html"
                guides.append((path, f"{topic.capitalize()} guide {n}"))
                # Some guides mention one query word in passing (tree bark, root vegetables).
                aside = " roots" if topic == "carrot" else " bark" if topic == "hedge" else ""
                self.pages[path] = self._page(
                    f"{topic.capitalize()} guide {n}",
                    [self._text(words + aside, 120) for _ in range(3)],
                    [("/guides/", "Guides")],
                )
        for path, (title, words) in ANSWER_PAGES.items():
            guides.append((path, title))
            self.pages[path] = self._page(title, [self._text(words, 150) for _ in range(3)], [("/guides/", "Guides")])
        self.rng.shuffle(guides)
        self.pages["/guides/"] = self._page("Guides", [self._text("", 30)], guides)
        for section in sections[1:]:
            children = [(f"/{section}/{n}.html", f"{section.capitalize()} {n}") for n in range(20)]
            self.pages[f"/{section}/"] = self._page(section.capitalize(), [self._text("", 30)], children)
            for path, _ in children:
                self.pages[path] = self._page(path, [self._text("", 100)], [(f"/{section}/", "Back"), ("/", "Home")])


@pytest.fixture(scope="module")
def answer_site():
    site = AnswerSite()
    server, url = serve_fast(site)
    yield site, url.rstrip("/")
    server.shutdown()


def self_stopping(**overrides):
    return project_settings(ADAPTIVE_SELF_STOP=True, **overrides)


def serve_fast(site):
    """Serve a site with a listen backlog for Scrapy's 16 concurrent connections (the
    default 5 drops some; the kernel retries them a second later, out of order)."""
    server, url = serve(site)
    server.socket.listen(128)
    return server, url


async def traced_crawl(settings, **spider_kwargs):
    """A focused crawl that also records (url, relevance, IS, best gain) after each page,
    shown when an assertion fails."""
    crawler = CrawlerRunner(settings).create_crawler(FocusedSpider)
    result = CrawlResult(crawler)
    trace = []

    def scraped(item, response, spider):
        knowledge = CrawlState.of(crawler).knowledge
        gain, best = knowledge.links.best_pending_link(list(crawler.engine._slot.inprogress))
        trace.append(
            f"{item['url']} r={item['relevance']:.2f} IS={knowledge.estimator.metrics().sufficiency:.3f} "
            f"best={gain:.3f} {best}"
        )

    crawler.signals.connect(scraped, signals.item_scraped)
    await crawler.crawl_async(**spider_kwargs)
    return result, "\n".join(trace)


@crawl_test
async def test_crawl_closes_sufficient_after_the_answer_pages(answer_site):
    site, url = answer_site
    budget = len(site.pages)
    # The pace of pages near the best waited for too (ADAPTIVE_STOP_HARVEST_WINDOW), over a window
    # sized to the site's 120 pages.
    window = 30
    result, trace = await traced_crawl(
        self_stopping(CLOSESPIDER_PAGECOUNT=budget, ADAPTIVE_STOP_HARVEST_WINDOW=window),
        query=QUERY,
        start_urls=url + "/",
    )
    stats = result.stats
    assert stats["finish_reason"] == "sufficient", trace
    fetched = {u.removeprefix(url) for u in result.fetched}
    assert site.relevant <= fetched, trace
    assert len(result.fetched) < budget * 2 / 3, trace
    assert stats["adaptive/sufficiency/sufficiency"] >= 0.75
    assert stats["adaptive/sufficiency/stop_reason"] == "sufficient"
    # Not before the best pages settled: none joined them near the best for as many pages
    # as it took to find them (ADAPTIVE_STOP_SETTLE 1), nor for ADAPTIVE_STOP_MIN_PAGES (10).
    changed, stop_page = stats["adaptive/sufficiency/best_changed_at"], stats["adaptive/sufficiency/stop_page"]
    assert changed >= 3 and stop_page >= changed + max(10, changed), trace
    # Nor before a whole window of pages without the answer pages' pace (the three came in the first).
    assert stop_page >= window, trace
    # Without the waits, `sufficient` comes before the best pages settle.
    eager, eager_trace = await traced_crawl(
        self_stopping(CLOSESPIDER_PAGECOUNT=budget, ADAPTIVE_STOP_SETTLE=0, ADAPTIVE_STOP_HARVEST_WINDOW=0),
        query=QUERY,
        start_urls=url + "/",
    )
    eager_stats = eager.stats
    assert eager_stats["finish_reason"] == "sufficient", eager_trace
    eager_changed = eager_stats["adaptive/sufficiency/best_changed_at"]
    assert eager_stats["adaptive/sufficiency/stop_page"] < eager_changed + max(10, eager_changed), eager_trace
    # With the self-stop off, the same crawl runs to the end of the site.
    full = await run_crawl(
        FocusedSpider, project_settings(CLOSESPIDER_PAGECOUNT=budget), query=QUERY, start_urls=url + "/"
    )
    assert full.stats["finish_reason"] in ("finished", "closespider_pagecount")
    assert len(full.fetched) >= len(site.pages) - 1


@crawl_test
async def test_crawl_without_relevant_content_closes_early(answer_site):
    site, url = answer_site
    settings = self_stopping(CLOSESPIDER_PAGECOUNT=len(site.pages))
    result, trace = await traced_crawl(settings, query="quantum chromodynamics lattice", start_urls=url + "/")
    assert result.stats["finish_reason"] in ("no_promising_links", "plateau"), trace
    assert len(result.fetched) <= 40 < len(site.pages), trace


@crawl_test
async def test_report_next_to_the_feed_and_offline_recomputation(answer_site, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="adaptive_spider.crawl.pipelines")
    site, url = answer_site
    feed = tmp_path / "kb.jsonl"
    settings = self_stopping(
        CLOSESPIDER_PAGECOUNT=len(site.pages),
        FEEDS={str(feed): {"format": "jsonlines"}},
        ADAPTIVE_SUFFICIENCY_REPORT="auto",
        ADAPTIVE_SUFFICIENCY_LOG_INTERVAL=0.05,
        ADAPTIVE_STOP_HARVEST_WINDOW=30,  # the pace's window sized to the site's 120 pages
    )
    result, trace = await traced_crawl(settings, query=QUERY, start_urls=url + "/")
    progress = [r.getMessage() for r in caplog.records if r.name == "adaptive_spider.crawl.pipelines"]
    periodic = [line for line in progress if re.match(r"Sufficiency: \d+ pages \(\d+ relevant, harvest rate", line)]
    assert periodic and all("coverage" in line and "best frontier gain" in line for line in periodic)
    report = json.loads((tmp_path / "kb.sufficiency.json").read_text())
    stats = result.stats
    assert report["finish_reason"] == stats["finish_reason"] == report["stop_reason"], trace
    assert report["summary"]["sufficiency"] == stats["adaptive/sufficiency/sufficiency"]
    assert report["stop_settings"]["harvest_window"] == 30 and report["stop_settings"]["harvest_drop"] == 0.1
    assert {row["term"] for row in report["terms"]} == {"repot", "orchid", "bark", "root"}
    assert len(report["sufficiency_by_page"]) == stats["adaptive/sufficiency/pages"]
    # The saved knowledge base gives the same metrics offline.
    estimator, _ = evaluate_knowledge_base(read_knowledge_base(feed), QUERY)
    extra = ("best_gain", "stop_reason", "best_changed_at", "stop_page")
    summary = {k: v for k, v in report["summary"].items() if k not in extra}
    assert estimator.metrics().as_dict() == summary
    assert estimator.best_changed_at == report["summary"]["best_changed_at"] > 0
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "sufficiency",
            str(feed),
            "--query",
            QUERY,
            "--json",
            "-s",
            "ADAPTIVE_STOP_HARVEST_WINDOW=30",
        ],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    offline = json.loads(done.stdout)
    assert offline["metrics"] == report["metrics"]
    assert offline["sufficiency_by_page"] == report["sufficiency_by_page"]
    assert offline["would_stop"]["reason"] in ("sufficient", "plateau")
    # Offline, as in the crawl, not before the best pages settled.
    changed = report["summary"]["best_changed_at"]
    assert offline["would_stop"]["page"] >= changed + max(10, changed)


class MixedItemsSpider(scrapy.Spider):
    """Yields a page item, a dict page, a template document and a foreign item per page."""

    name = "mixed"

    def __init__(self, start_url=None, **kwargs):
        super().__init__(**kwargs)
        self.start_url = start_url

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        yield PageItem(url=response.url, title="orchid", text="repot orchid bark roots", relevance=0.8)
        yield {"url": response.url + "#dict", "title": "orchid bark", "text": "orchid roots", "relevance": 0.7}
        yield {"template": "products", "url": response.url, "relevance": 0.9, "name": "orchid pot"}
        yield {"name": "a product", "price": 3}
        for href in response.css("a::attr(href)").getall()[:3]:
            yield response.follow(href)


@crawl_test
async def test_pipeline_counts_page_items_only(answer_site):
    site, url = answer_site
    settings = project_settings(ADAPTIVE_QUERY=QUERY, CLOSESPIDER_PAGECOUNT=5)
    result = await run_crawl(MixedItemsSpider, settings, start_url=url + "/")
    pages = sum(1 for item in result.items if "relevance" in item and "template" not in item)
    assert len(result.items) == 4 * len(result.fetched)  # nothing dropped
    assert result.stats["adaptive/sufficiency/pages"] == pages == 2 * len(result.fetched)


@crawl_test
async def test_jobdir_resume_keeps_the_sufficiency_state(tmp_path):
    site = DemoSite(seed=2, hubs_per_topic=2, articles_per_hub=6)
    server, url = serve_fast(site)
    try:
        settings = dict(JOBDIR=str(tmp_path / "job"), CLOSESPIDER_PAGECOUNT=12)
        first = await run_crawl(
            FocusedSpider, project_settings(**settings), query="astronomy telescope", start_urls=url
        )
        second = await run_crawl(
            FocusedSpider, project_settings(**settings), query="astronomy telescope", start_urls=url
        )
    finally:
        server.shutdown()
    pages_first = first.stats["adaptive/sufficiency/pages"]
    assert pages_first >= 10
    assert second.stats["adaptive/sufficiency/pages"] == pages_first + len(second.items)


def run_scrapy(*args):
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args], cwd=PROJECT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("ADAPTIVE_STOP_THRESHOLD=1.5", "ADAPTIVE_STOP_THRESHOLD: must be <= 1.0"),
        ("ADAPTIVE_STOP_THRESHOLD=-0.1", "ADAPTIVE_STOP_THRESHOLD: must be >= 0.0"),
        ("ADAPTIVE_STOP_PLATEAU_WINDOW=-5", "ADAPTIVE_STOP_PLATEAU_WINDOW: must be >= 1"),
        ("ADAPTIVE_SUFFICIENCY_WINDOW=-1", "ADAPTIVE_SUFFICIENCY_WINDOW: must be >= 1"),
        ("ADAPTIVE_SUFFICIENCY_STRATEGY=oracle", "ADAPTIVE_SUFFICIENCY_STRATEGY: unknown value 'oracle'"),
        ("ADAPTIVE_STOP_CRITERIA=sufficient,bored", "ADAPTIVE_STOP_CRITERIA: unknown criterion 'bored'"),
        ("ADAPTIVE_STOP_SETTLE=-1", "ADAPTIVE_STOP_SETTLE: must be >= 0.0"),
        ("ADAPTIVE_STOP_SETTLE=later", "ADAPTIVE_STOP_SETTLE"),
        ("ADAPTIVE_STOP_BEST_PAGES=0", "ADAPTIVE_STOP_BEST_PAGES: must be >= 1"),
    ],
)
def test_bad_settings_fail_at_start_naming_the_setting(setting, message):
    done = run_scrapy("crawl", "focused", "-a", "query=x", "-a", "start_urls=http://127.0.0.1:9/", "-s", setting)
    assert done.returncode == 2
    assert message in done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr
