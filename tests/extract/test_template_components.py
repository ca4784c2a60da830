"""The template spider's arguments and the two downloader middlewares' configuration."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from adaptive_spider.extract.browser import BrowserRenderingMiddleware
from adaptive_spider.extract.robotstxt import RobotsTxtLocationMiddleware
from spiders.template import TemplateSpider

PLAYWRIGHT = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


@pytest.fixture
def template_file(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("fields:\n  - name: title\n    xpath: //h1\noptions:\n  max_pages: 7\n")
    return path


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"start_urls": "http://a.test/"}, "argument 'template' is required"),
        ({"template": "T"}, "argument 'start_urls' is required"),
        ({"template": "T", "start_urls": "a.test/page"}, "'a.test/page' is not an http(s) URL"),
    ],
)
def test_spider_arguments_are_checked(template_file, arguments, message):
    if arguments.get("template") == "T":
        arguments["template"] = str(template_file)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TemplateSpider(**arguments)


def test_spider_applies_template_settings_and_defaults_domains(template_file):
    crawler = Crawler(TemplateSpider, {"DEPTH_LIMIT": 3})  # settings not applied yet, as in a real crawl
    spider = TemplateSpider.from_crawler(
        crawler, template=str(template_file), start_urls="http://a.test/x, http://b.test:8080/", query="kettles"
    )
    assert crawler.settings.getint("CLOSESPIDER_PAGECOUNT") == 7
    assert crawler.settings.getint("DEPTH_LIMIT") == 3  # the template sets no depth
    assert spider.start_urls == ["http://a.test/x", "http://b.test:8080/"]
    assert spider.allowed_domains == ["a.test", "b.test"]
    assert spider.query == "kettles"


def test_robots_location_middleware_needs_obey_and_locations():
    with pytest.raises(NotConfigured, match="ROBOTSTXT_OBEY is off"):
        RobotsTxtLocationMiddleware.from_crawler(get_crawler(settings_dict={"ROBOTSTXT_OBEY": False}))
    with pytest.raises(NotConfigured, match="ADAPTIVE_ROBOTSTXT_LOCATIONS is empty"):
        RobotsTxtLocationMiddleware.from_crawler(get_crawler(settings_dict={"ROBOTSTXT_OBEY": True}))
    bad = {"ROBOTSTXT_OBEY": True, "ADAPTIVE_ROBOTSTXT_LOCATIONS": {"a.test": "robots.txt"}}
    with pytest.raises(ValueError, match=r"ADAPTIVE_ROBOTSTXT_LOCATIONS\['a.test'\]: must be an http\(s\) URL"):
        RobotsTxtLocationMiddleware.from_crawler(get_crawler(settings_dict=bad))


def test_robots_location_middleware_rewrites_only_robots_requests():
    middleware = RobotsTxtLocationMiddleware({"a.test": "http://cdn.test/a-robots.txt", "*": "/seo/robots.txt"})
    robots = {"dont_obey_robotstxt": True}
    relocated = middleware.process_request(Request("http://a.test/robots.txt", meta=robots))
    assert relocated.url == "http://cdn.test/a-robots.txt"
    assert middleware.process_request(relocated) is None  # not rewritten twice
    assert (
        middleware.process_request(Request("http://b.test:81/robots.txt", meta=robots)).url
        == "http://b.test:81/seo/robots.txt"
    )
    assert (
        middleware.process_request(Request("http://a.test/robots.txt")) is None
    )  # a page, not Scrapy's robots request
    assert middleware.process_request(Request("http://a.test/page", meta=robots)) is None


def test_browser_middleware_needs_the_playwright_handlers():
    with pytest.raises(NotConfigured, match="use the javascript settings profile"):
        BrowserRenderingMiddleware.from_crawler(get_crawler())


def test_browser_middleware_marks_pages_but_not_robots_or_opted_out_requests():
    crawler = get_crawler(settings_dict={"DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT, "https": PLAYWRIGHT}})
    middleware = BrowserRenderingMiddleware.from_crawler(crawler)
    page, robots, opted_out = (
        Request("http://a.test/"),
        Request("http://a.test/robots.txt", meta={"dont_obey_robotstxt": True}),
        Request("http://a.test/feed.xml", meta={"playwright": False}),
    )
    for request in (page, robots, opted_out):
        middleware.process_request(request)
    assert page.meta["playwright"] is True
    assert "playwright" not in robots.meta
    assert opted_out.meta["playwright"] is False
