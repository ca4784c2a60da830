"""Real crawls of the worked examples (docs/examples) over local fixture pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest_twisted
import yaml

from adaptive_spider.extract import Template
from adaptive_spider.relevance.pagetext import content_sha1

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

PRODUCTS = [
    # title, price, ranking price, image file, badge, page
    ("Aurora Desk Lamp", "49.99", 49.99, "aurora.jpg", "New", "index.html"),
    ("Boreal Wool Blanket", "129.00", 129.0, "boreal.jpg", None, "index.html"),
    ("Cirrus Standing Desk", "1299.00", 1299.0, "cirrus.jpg", "Sale", "index.html"),
    ("Delta Pour-Over Kettle", "64.50", 64.5, "delta.jpg", None, "index.html"),
    ("Ember Cast-Iron Pan", "89.00", 89.0, "ember.jpg", None, "page-2.html"),
    ("Fjord Rain Jacket", "219.95", 219.95, "fjord.jpg", "Sale", "page-2.html"),
    ("Glacier Water Bottle", "24.00", 24.0, "glacier.jpg", None, "page-2.html"),
    ("Harbor Canvas Tote", "39.00", 39.0, "harbor.jpg", None, "page-2.html"),
    ("Indigo Linen Shirt", "74.00", 74.0, "indigo.jpg", None, "page-3.html"),
    ("Juniper Scented Candle", "18.50", 18.5, "juniper.jpg", "New", "page-3.html"),
    ("Kestrel Trail Shoes", "149.00", 149.0, "kestrel.jpg", None, "page-3.html"),
    # The last one is not lazy: its image is in src, not data-src.
    ("Lumen Reading Light", "32.00", 32.0, "lumen.jpg", None, "page-3.html"),
]

UNIVERSITIES = [
    # rank, ranking rank, name, country, score, slug, page
    ("1", 1.0, "Northfield Institute of Technology", "United States", "98.7", "northfield", "index.html"),
    ("2", 2.0, "University of Ashbury", "United Kingdom", "97.9", "ashbury", "index.html"),
    ("=3", 3.0, "Kessler Technical University", "Germany", "95.2", "kessler", "index.html"),
    ("=3", 3.0, "Marlowe College", "United Kingdom", "95.2", "marlowe", "index.html"),
    ("5", 5.0, "Pacific Coast University", "United States", "93.8", "pacific-coast", "index.html"),
    ("6", 6.0, "Université de Valmont", "France", "91.4", "valmont", "index.html"),
    ("7", 7.0, "Tokai Institute of Science", "Japan", "90.0", "tokai", "index.html"),
    ("8", 8.0, "Lindqvist University", "Sweden", "88.6", "lindqvist", "index.html"),
    ("9", 9.0, "Eastbridge University", "Canada", "87.1", "eastbridge", "page-2.html"),
    ("10", 10.0, "Rosario National University", "Argentina", "85.5", "rosario", "page-2.html"),
    ("11", 11.0, "Helvetia Polytechnic", "Switzerland", "84.9", "helvetia", "page-2.html"),
    ("=12", 12.0, "University of Kowhai", "New Zealand", "83.0", "kowhai", "page-2.html"),
    ("=12", 12.0, "Marrakesh Institute of Engineering", "Morocco", "83.0", "marrakesh", "page-2.html"),
    ("14", 14.0, "Dunmore University", "Ireland", "81.7", "dunmore", "page-2.html"),
    ("15", 15.0, "Sagewood University", "Australia", "80.2", "sagewood", "page-2.html"),
]

QUESTIONS = [
    # id, title, votes, ranking votes, answers, tags, page
    (
        101,
        "How do I merge two dictionaries in a single expression?",
        "1.2k",
        1200.0,
        14,
        ["python", "dictionary"],
        "index.html",
    ),
    (
        102,
        "Why is processing a sorted array faster than an unsorted one?",
        "856",
        856.0,
        9,
        ["performance", "branch-prediction"],
        "index.html",
    ),
    (103, "What does the yield keyword do?", "3,456", 3456.0, 31, ["python", "generator"], "index.html"),
    (104, "How to read a file line by line into a list?", "15", 15.0, 2, ["python", "file"], "index.html"),
    (105, "XPath: select an element by the text of a child", "0", 0.0, 0, ["xpath"], "index.html"),
    (106, "Scrapy spider returns nothing", "-2", -2.0, 1, ["scrapy"], "page-2.html"),
    (
        107,
        "How do I undo the most recent local commits in Git?",
        "42",
        42.0,
        5,
        ["git", "version-control"],
        "page-2.html",
    ),
    (108, "Regular expression to match a price with a currency sign", "7", 7.0, 3, ["regex"], "page-2.html"),
    (
        109,
        "What is the difference between a process and a thread?",
        "2.5k",
        2500.0,
        22,
        ["multithreading", "process"],
        "page-2.html",
    ),
    (110, "Lazy loading images: data-src or loading=lazy?", "11", 11.0, 4, ["html", "performance"], "page-2.html"),
]


def with_sha1(documents, template):
    """*documents* with the ``sha1`` the template adds: the content hash of the field values, in its order."""
    names = [field.name for field in Template.from_file(template).fields]
    for document in documents:
        document["sha1"] = content_sha1(json.dumps([document[name] for name in names], ensure_ascii=False))
    return documents


def by_key(documents, key):
    return sorted(documents, key=lambda document: document[key])


def pages_fetched(result, base, prefix):
    """Paths under *prefix* the crawl fetched (robots.txt aside)."""
    return sorted(url[len(base) :] for url in result.fetched if url.startswith(base + prefix))


@pytest_twisted.ensureDeferred
async def test_products_with_pagination_and_lazy_images(fixture_site, crawl_template):
    result = await crawl_template(EXAMPLES / "products.yaml", [fixture_site + "shop/index.html"])

    expected = [
        {
            "url": fixture_site + "shop/" + page,
            "template": "products",
            "title": title,
            "price": price,
            "image": fixture_site + "shop/img/" + image,
            "link": fixture_site + "shop/product/" + title.lower().replace(" ", "-") + ".html",
            "badge": badge,
            "ranking": {"price": rank_price},
        }
        for title, price, rank_price, image, badge, page in PRODUCTS
    ]
    assert len(result.documents) == 12
    assert by_key(result.documents, "title") == by_key(with_sha1(expected, EXAMPLES / "products.yaml"), "title")
    # Only the pager's links were followed: no product page, cart, about or "sort by" URL.
    assert pages_fetched(result, fixture_site, "shop/") == ["shop/index.html", "shop/page-2.html", "shop/page-3.html"]


@pytest_twisted.ensureDeferred
async def test_ranked_table_of_universities(fixture_site, crawl_template):
    result = await crawl_template(EXAMPLES / "universities.yaml", [fixture_site + "universities/index.html"])

    expected = [
        {
            "url": fixture_site + "universities/" + page,
            "template": "universities",
            "rank": rank,
            "name": name,
            "link": fixture_site + f"universities/u/{slug}.html",
            "country": country,
            "score": score,
            "ranking": {"rank": rank_number, "score": float(score)},
        }
        for rank, rank_number, name, country, score, slug, page in UNIVERSITIES
    ]
    assert len(result.documents) == 15  # header and footer rows are not documents
    assert by_key(result.documents, "name") == by_key(with_sha1(expected, EXAMPLES / "universities.yaml"), "name")
    assert pages_fetched(result, fixture_site, "universities/") == [
        "universities/index.html",
        "universities/page-2.html",
    ]


@pytest_twisted.ensureDeferred
async def test_question_list_with_votes(fixture_site, crawl_template):
    result = await crawl_template(EXAMPLES / "questions.json", [fixture_site + "questions/index.html"])

    assert len(result.documents) == 10
    documents = by_key(result.documents, "link")
    for document, (qid, title, votes, vote_number, answers, tags, page) in zip(documents, QUESTIONS):
        assert document["url"] == fixture_site + "questions/" + page
        assert document["link"] == fixture_site + f"questions/q/{qid}.html"
        assert document["title"] == title
        assert document["votes"] == votes
        assert document["answers"] == str(answers)
        assert document["tags"] == tags
        assert document["ranking"] == {"votes": vote_number, "answers": float(answers)}
        assert document["excerpt"] and "  " not in document["excerpt"]
    # Tag pages and ?tab= variants are excluded even though the pager links to them.
    assert pages_fetched(result, fixture_site, "questions/") == ["questions/index.html", "questions/page-2.html"]


@pytest_twisted.ensureDeferred
async def test_max_pages_stops_the_crawl(fixture_site, crawl_template, tmp_path):
    data = yaml.safe_load((EXAMPLES / "products.yaml").read_text())
    data["options"]["max_pages"] = 2
    template = tmp_path / "products-2-pages.yaml"
    template.write_text(yaml.safe_dump(data))

    result = await crawl_template(template, [fixture_site + "shop/index.html"], CONCURRENT_REQUESTS=1)

    assert result.stats["finish_reason"] == "closespider_pagecount"
    assert len(result.documents) < 12


def _robots_template(tmp_path, robots_txt=None) -> Path:
    data = {"fields": [{"name": "heading", "xpath": "//h1"}]}
    if robots_txt:
        data["options"] = {"robots_txt": robots_txt}
    path = tmp_path / "robots.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest_twisted.ensureDeferred
async def test_robots_txt_location_override(fixture_site, crawl_template, tmp_path):
    start = [fixture_site + "robots/index.html"]

    plain = await crawl_template(_robots_template(tmp_path), start)
    assert {d["heading"] for d in plain.documents} == {"The index page", "The public page", "The private page"}

    relocated = await crawl_template(_robots_template(tmp_path, "/robots/custom-robots.txt"), start)
    assert {d["heading"] for d in relocated.documents} == {"The index page", "The public page"}
    assert relocated.stats["robotstxt/forbidden"] == 1
    assert fixture_site + "robots/custom-robots.txt" in relocated.fetched
    assert fixture_site + "robots.txt" not in relocated.fetched


def _scrapy(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "template", "-s", "ADDONS={}", "-s", "LOG_LEVEL=WARNING", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_line_crawl_and_template_error(fixture_site, tmp_path):
    project = Path(__file__).resolve().parents[2]
    output = tmp_path / "questions.jsonl"
    done = _scrapy(
        "-a", f"template={EXAMPLES / 'questions.json'}",
        "-a", f"start_urls={fixture_site}questions/index.html",
        "-O", str(output),
        cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(output.read_text().splitlines()) == 10

    broken = tmp_path / "broken.yaml"
    broken.write_text("fields:\n  - name: title\n    xpath: //h1\n  - name: votes\n    type: text\n")
    failed = _scrapy("-a", f"template={broken}", "-a", f"start_urls={fixture_site}", cwd=project)
    assert failed.returncode != 0
    last_line = failed.stderr.strip().splitlines()[-1]
    assert last_line.endswith(f"{broken}, line 4: field 'votes' (fields[1]).xpath: missing")
