"""The benchmark's offline web as the spec (../shared/webbench/README.md) defines it.

These tests need Debian's documentation packages (see docs/webbench.md) and skip without them.
"""

import json
import re
from pathlib import Path

import pytest
from protego import Protego

from benchmarks.webbench.linkgraph import crawl
from benchmarks.webbench.web import OfflineWeb

MISSING = OfflineWeb.missing_packages()
pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"Debian documentation packages not installed ({', '.join(MISSING)}): see docs/webbench.md",
)
# The spec's folder sits beside the checkout (../shared); from a worktree, further up.
LABELS = next(
    (
        folder / "shared" / "webbench" / "labels-dev.json"
        for folder in Path(__file__).resolve().parents[3:]
        if (folder / "shared" / "webbench" / "labels-dev.json").is_file()
    ),
    None,
)

SPEC_HUB = [
    ("http://docs.python.test/3/index.html", "Python 3.11 documentation", "docs.python.test"),
    ("http://www.postgresql.test/docs/15/index.html", "PostgreSQL 15 documentation", "www.postgresql.test"),
    ("http://docs.djangoproject.test/en/3.2/index.html", "Django 3.2 documentation", "docs.djangoproject.test"),
    ("http://git-scm.test/docs/index.html", "Git reference manual", "git-scm.test"),
    ("http://www.sphinx-doc.test/en/master/index.html", "Sphinx documentation", "www.sphinx-doc.test"),
    ("http://docs.scrapy.test/en/latest/index.html", "Scrapy 2.8 documentation", "docs.scrapy.test"),
    ("http://scikit-learn.test/stable/index.html", "scikit-learn 1.2 documentation", "scikit-learn.test"),
    ("http://flask.palletsprojects.test/en/2.2.x/index.html", "Flask 2.2 documentation", "flask.palletsprojects.test"),
    ("http://requests.readthedocs.test/en/latest/index.html", "Requests: HTTP for Humans", "requests.readthedocs.test"),
    ("http://docutils.sourceforge.test/docs/index.html", "Docutils documentation", "docutils.sourceforge.test"),
]


@pytest.fixture(scope="module")
def web():
    return OfflineWeb()


def test_hub_page_markup_and_order(web):
    body = web.get("http://hub.test/").body.decode()
    assert re.search(r"<title>Local documentation hub</title>", body)
    assert re.search(r"<h1>Local documentation hub</h1>", body)
    items = re.findall(r"<li>.*?</li>", body)
    assert items == [f'<li><a href="{url}">{title}</a> ({host})</li>' for url, title, host in SPEC_HUB]


@pytest.mark.parametrize("start_url", [url for url, _, _ in SPEC_HUB])
def test_start_pages_answer_and_roots_redirect_to_them(web, start_url):
    assert web.get(start_url).is_html
    host = start_url.split("/")[2]
    assert web.get(f"http://{host}/").location == start_url


def test_mount_point_redirects_to_the_start_page(web):
    for mount in ("http://www.postgresql.test/docs/15/", "http://www.postgresql.test/docs/15"):
        assert web.get(mount).location == "http://www.postgresql.test/docs/15/index.html"


@pytest.mark.parametrize(
    "page, rewritten, shipped",
    [
        # a public address, the rest of the path kept
        (
            "http://docs.scrapy.test/en/latest/topics/asyncio.html",
            'href="http://docs.python.test/3/library/asyncio.html',
            "https://docs.python.org/3/",
        ),
        (
            "http://docs.djangoproject.test/en/3.2/ref/databases.html",
            'href="http://www.postgresql.test/docs/15/',
            "https://www.postgresql.org/docs/current/",
        ),
        # Debian's copies on disk
        (
            "http://docs.djangoproject.test/en/3.2/ref/models/fields.html",
            'href="http://docs.python.test/3/library/',
            "/usr/share/doc/python3-doc/html/",
        ),
        (
            "http://docs.python.test/3/library/re.html",
            'rel="canonical" href="http://docs.python.test/3/library/re.html"',
            "file:///usr/share/doc/python3.11/",
        ),
        # the root of a public host: the "Created using Sphinx" footer
        (
            "http://docs.python.test/3/library/re.html",
            'href="http://www.sphinx-doc.test/"',
            "https://www.sphinx-doc.org/",
        ),
    ],
)
def test_links_between_sites_point_at_local_hosts(web, page, rewritten, shipped):
    body = web.get(page).body.decode()
    assert rewritten in body
    assert shipped not in body


def test_python_whatsnew_is_disallowed_and_the_rest_allowed(web):
    python = Protego.parse(web.get("http://docs.python.test/robots.txt").body.decode())
    assert not python.can_fetch("http://docs.python.test/3/whatsnew/3.11.html", "Scrapy")
    assert python.can_fetch("http://docs.python.test/3/library/asyncio.html", "Scrapy")
    for _, _, host in SPEC_HUB[1:]:
        robots = Protego.parse(web.get(f"http://{host}/robots.txt").body.decode())
        assert robots.can_fetch(f"http://{host}/any/page.html", "Scrapy")


def test_https_and_other_hosts_are_not_served(web):
    assert web.get("https://docs.python.test/3/index.html").status == 501
    assert web.get("http://docs.python.org/3/index.html").status == 404


@pytest.mark.slow
def test_every_labelled_page_is_reachable_from_the_hub(web):
    if LABELS is None:
        pytest.skip("no shared/webbench/labels-dev.json beside the checkout")
    graph = crawl(web, "http://hub.test/")
    assert len(graph.pages) > 3800  # the spec: about 4,000
    assert len(graph.cross_site_links()) > 1200  # the spec: about 1,400
    labels = json.loads(LABELS.read_text())
    unreached = [url for urls in labels.values() for url in urls if url not in graph.links]
    assert unreached == []
