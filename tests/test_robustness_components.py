"""The duplicate-content pipeline and robots.txt Crawl-delay, each in a real crawl."""

from __future__ import annotations

import hashlib
from itertools import pairwise

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from adaptive_spider.crawl.duplicates import DuplicateContentPipeline, content_digest
from adaptive_spider.demo.site import QUERY, DemoSite
from adaptive_spider.demo.traps import TrapSite, serve
from adaptive_spider.relevance.pagetext import content_sha1
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl


def pipeline(**settings) -> DuplicateContentPipeline:
    crawler = get_crawler(settings_dict=settings)
    crawler.stats.open_spider()
    component = DuplicateContentPipeline.from_crawler(crawler)
    component.open_spider()
    return component


def test_content_digest_prefers_the_declared_sha1_and_normalises_text():
    assert content_digest({"sha1": "ab" * 20, "text": "x"}) == bytes.fromhex("ab" * 20)
    assert content_digest({"text": "a  b\n c"}) == content_digest({"body": "a b c"})
    assert content_digest({"title": "no content field"}) is None


def test_content_sha1_makes_whitespace_runs_one_space():
    assert content_sha1(" a  b\n\tc ") == content_sha1("a b c") == hashlib.sha1(b"a b c").hexdigest()
    assert content_sha1("a b c") != content_sha1("a bc")


@pytest.mark.parametrize("page_item_first", [True, False])
def test_a_page_items_sha1_and_the_digest_of_the_same_text_agree(page_item_first):
    """The crawl's ``sha1`` of a page and the pipeline's digest of an item that has only the
    page's text (spaced otherwise) are one hash: whichever comes second is dropped."""
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse

    from adaptive_spider.crawl.state import CrawlState

    state = CrawlState.of(get_crawler(Spider, {"ADAPTIVE_QUERY": "event loop"}))
    url = "http://docs.test/loop.html"
    body = b"<html><head><title>Loop</title></head><body><h1>Event loop</h1><p>Runs\n  tasks.</p></body></html>"
    analysis = state.analyze(HtmlResponse(url, body=body, request=Request(url)))
    page_item = {"url": url, "text": analysis.fields.body, "sha1": analysis.sha1}
    text_only = {"url": "http://mirror.test/loop", "content": analysis.fields.body.replace(" ", "\n  ")}
    first, second = (page_item, text_only) if page_item_first else (text_only, page_item)
    dropping = pipeline(ADAPTIVE_DROP_DUPLICATES=True)
    assert dropping.process_item(first) is first
    with pytest.raises(DropItem):
        dropping.process_item(second)


def test_duplicates_are_counted_and_dropped_when_asked(tmp_path):
    counting = pipeline()
    items = [{"url": "a", "text": "same words"}, {"url": "b", "text": "same  words"}, {"url": "c", "text": "other"}]
    assert [counting.process_item(item) for item in items] == items
    assert counting.stats.get_value("adaptive/duplicates") == 1
    assert counting.stats.get_value("adaptive/documents") == 3

    dropping = pipeline(ADAPTIVE_DROP_DUPLICATES=True)
    dropping.process_item(items[0])
    with pytest.raises(DropItem):
        dropping.process_item(items[1])
    assert dropping.process_item({"url": "x"}) == {"url": "x"}  # no content field: passes


def test_digests_survive_a_resume_in_jobdir(tmp_path):
    first = pipeline(JOBDIR=str(tmp_path))
    first.process_item({"url": "a", "text": "seen before"})
    # no close_spider(): the process was killed; a digest cut short is ignored
    (tmp_path / "content.sha1").open("ab").write(b"\x01\x02\x03")
    second = pipeline(JOBDIR=str(tmp_path))
    second.process_item({"url": "b", "text": "seen before"})
    assert second.stats.get_value("adaptive/duplicates") == 1
    assert (tmp_path / "content.sha1").stat().st_size == 20  # the torn digest is gone, no new one


@crawl_test
async def test_robots_crawl_delay_spaces_the_requests():
    delay = 0.25
    site = TrapSite(DemoSite(seed=5, hubs_per_topic=1, articles_per_hub=2), traps=False, crawl_delay=delay)
    server, url = serve(site)
    settings = project_settings(ROBOTSTXT_OBEY=True, CLOSESPIDER_PAGECOUNT=6, CONCURRENT_REQUESTS_PER_DOMAIN=8)
    try:
        result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    finally:
        server.shutdown()
    times = [when for when, target in site.log if target != "/robots.txt"]
    gaps = [later - earlier for earlier, later in pairwise(times)]
    assert len(gaps) >= 4
    assert min(gaps) >= 0.9 * delay, gaps  # one request per Crawl-delay, no jitter below it
    assert result.stats["adaptive/robotstxt/crawl_delay_sites"] == 1


@crawl_test
async def test_without_crawl_delay_the_same_crawl_is_not_spaced():
    site = TrapSite(DemoSite(seed=5, hubs_per_topic=1, articles_per_hub=2), traps=False, crawl_delay=0.25)
    server, url = serve(site)
    settings = project_settings(
        ROBOTSTXT_OBEY=True,
        CLOSESPIDER_PAGECOUNT=6,
        CONCURRENT_REQUESTS_PER_DOMAIN=8,
        ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX=0,
    )
    try:
        await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    finally:
        server.shutdown()
    times = [when for when, target in site.log if target != "/robots.txt"]
    assert min(later - earlier for earlier, later in pairwise(times)) < 0.1
