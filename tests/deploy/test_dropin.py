"""Dropping the focused crawl into an existing Scrapy project by settings alone.

``plainproject/`` is an ordinary project (its own scrapy.cfg, a CrawlSpider with
rules and a Spider that yields Requests, no adaptive_spider code). Its
``settings.py`` adds the add-on and the query; ``settings_explicit.py`` spells
the components out instead. Run as ``scrapy crawl`` subprocesses from the
project's directory, both fetch (most of) the relevant region within the budget,
as ``scrapy crawl focused`` does.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from adaptive_spider.addon import AdaptiveAddon
from tests.deploy.conftest import BUDGET, PROJECT, finish, relevant_urls, start_crawl

PLAIN_PROJECT = Path(__file__).resolve().parent / "plainproject"
#: name -> (spider, settings profile of the plain project's scrapy.cfg): each kind
#: of spider, each way of writing the settings.
VARIANTS = {"crawlspider-addon": ("pages", "default"), "spider-explicit": ("links", "explicit")}
#: Share of the site's relevant region each crawl must fetch within the budget.
MOST = 0.85


@pytest.fixture(scope="module")
def dropin_crawls(small_site, tmp_path_factory, request) -> dict[str, tuple[list, str]]:
    """Every variant crawled at once (and the reference meanwhile): name -> (items, log)."""
    _, url = small_site
    directory = tmp_path_factory.mktemp("dropin")
    running = {
        name: start_crawl(
            spider,
            directory / f"{name}.jsonl",
            "-a",
            f"url={url}",
            "-s",
            f"CLOSESPIDER_PAGECOUNT={BUDGET}",
            cwd=PLAIN_PROJECT,
            SCRAPY_PROJECT=profile,
            PYTHONPATH=str(PROJECT),
        )
        for name, (spider, profile) in VARIANTS.items()
    }
    request.getfixturevalue("focused_reference")
    return {name: finish(process) for name, process in running.items()}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_an_existing_project_becomes_a_focused_crawl_by_settings(variant, dropin_crawls, small_site, focused_reference):
    site, url = small_site
    items, log = dropin_crawls[variant]
    assert "'adaptive/released'" in log  # the AdaptiveScheduler ordered the crawl
    assert "'finish_reason': 'closespider_pagecount'" in log
    relevant = relevant_urls(site, url)
    reached = {item["url"] for item in items} & relevant
    # The relevant region within 40% of the site, as the focused spider; a breadth-first
    # crawl of this site has none of it by then. Usually all of it (by about 80 fetches):
    # these crawls run free, in an order that download timing moves, and one of about
    # fifty runs missed the last six articles.
    assert len(reached) >= MOST * len(relevant)
    assert len(focused_reference) >= MOST * len(relevant)


def test_the_spelled_out_settings_are_what_the_addon_sets(monkeypatch):
    monkeypatch.syspath_prepend(str(PLAIN_PROJECT))
    explicit = importlib.import_module("plainproject.settings_explicit")
    settings = Settings()
    AdaptiveAddon().update_settings(settings)
    assert load_object(settings["SCHEDULER"]) is load_object(explicit.SCHEDULER)
    for name in ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES", "EXTENSIONS"):
        from_addon = {load_object(component): order for component, order in settings.getdict(name).items()}
        spelled_out = {load_object(component): order for component, order in getattr(explicit, name).items()}
        assert from_addon == spelled_out, name
