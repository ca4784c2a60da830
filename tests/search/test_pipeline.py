"""The indexing pipeline inside a real crawl of a local site (scrapy runspider in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from http.server import BaseHTTPRequestHandler

import pytest

from adaptive_spider.demo.site import start_server
from adaptive_spider.search import SearchIndex

PAGES = {
    "/": "<html><head><title>Observatory</title></head><body><p>Welcome.</p>"
    '<a href="/telescopes">t</a> <a href="/planets">p</a> <a href="/broken">b</a>'
    '<a href="/half">h</a></body></html>',
    "/telescopes": "<html><head><title>Refracting telescopes</title></head>"
    "<body><p>Lenses bend light; the objective gathers it.</p></body></html>",
    "/planets": "<html><head><title>Planets of the solar system</title></head>"
    "<body><p>Jupiter and Saturn are gas giants.</p></body></html>",
    "/half": "<html><head><title>Truncated page about comets",  # broken HTML
}


class Site(BaseHTTPRequestHandler):
    def do_GET(self):
        body = PAGES.get(self.path)
        status = 200 if body is not None else 500
        payload = (body or "server error").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    server, url = start_server(Site)
    yield url.rstrip("/")
    server.shutdown()
    server.server_close()


SPIDER = textwrap.dedent("""
    from dataclasses import dataclass, field

    import scrapy


    @dataclass
    class Page:
        url: str
        title: str
        text: str
        links: int = 0


    class SiteSpider(scrapy.Spider):
        name = "site"

        async def start(self):
            yield scrapy.Request(self.start_url)

        def parse(self, response):
            title = response.css("title::text").get(default="")
            text = " ".join(response.css("p::text").getall())
            links = response.css("a::attr(href)").getall()
            if response.url.endswith("/planets"):
                yield {"url": response.url, "title": title, "text": text, "links": len(links)}
            else:
                yield Page(response.url, title, text, len(links))
            yield {"note": 42}  # an item with no text fields is skipped, not fatal
            for href in links:
                yield response.follow(href)
""")


def test_pipeline_indexes_a_real_crawl(tmp_path, site):
    (tmp_path / "site_spider.py").write_text(SPIDER)
    index_dir = tmp_path / "crawl-index"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "runspider",
            "site_spider.py",
            "-a",
            f"start_url={site}/",
            "-s",
            'ITEM_PIPELINES={"adaptive_spider.search.pipelines.SearchIndexPipeline": 800}',
            "-s",
            f"ADAPTIVE_SEARCH_INDEX={index_dir}",
            "-s",
            "ADAPTIVE_SEARCH_FIELDS=title,text",
            "-s",
            "ADAPTIVE_SEARCH_COMMIT_EVERY=2",
            "-s",
            "TELNETCONSOLE_ENABLED=False",
            "-s",
            "REMOTE_CONTROL_ENABLED=False",
            "-s",
            "ROBOTSTXT_OBEY=False",
            "-s",
            "LOG_LEVEL=INFO",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "'adaptive/search/items_indexed': 4" in result.stderr
    assert "'adaptive/search/items_skipped'" in result.stderr
    index = SearchIndex.open(index_dir)
    assert len(index) == 4  # home, two pages and the truncated page; the 500 page yields nothing
    hits = index.search("telescope lens").hits
    assert hits[0].id == f"{site}/telescopes"
    assert hits[0].fields["title"] == "Refracting telescopes"
    assert index.search("gas giants").hits[0].id == f"{site}/planets"
    assert "links" in index.numeric_fields
    assert index.search("comets").hits[0].id == f"{site}/half"
