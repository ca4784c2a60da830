"""A shop whose product pages link to pages that do not exist: crawled to its end?

The 200 product pages of Scrapy's own benchmark suite ("Books to Scrape",
``../shared/data/scrapy-bench-pages/bookfiles.tar.gz``) are served on 127.0.0.1 as
``/catalogue/N.html`` behind ten listing pages (``/``, ``/page-2.html``, ...). Every product
page links to its category and to the shop's home as the real shop does: those category
pages do not exist here (404). A template crawl with ``docs/examples/books.yaml``
(``scrapy crawl template``, the default profile) should fetch every product page and
extract 200 products: 404s say a page is missing, not that the host is failing.

    python -m benchmarks.shop_dead_links                        # this checkout
    python -m benchmarks.shop_dead_links --project /path/to/other/checkout   # e.g. an older commit

Prints pages crawled, products extracted, 404s, and the crawl report's dropped-by-rule counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks import localsite

PROJECT = Path(__file__).resolve().parent.parent
ARCHIVE = PROJECT.parent / "shared" / "data" / "scrapy-bench-pages" / "bookfiles.tar.gz"
PER_LISTING = 20


def load_books(archive: Path) -> dict[int, bytes]:
    books = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if member.isfile() and re.fullmatch(r"\d+\.html", name):
                handle = tar.extractfile(member)
                assert handle is not None
                books[int(name.split(".")[0])] = handle.read()
    return books


def listing(page: int, books: dict[int, bytes]) -> bytes:
    numbers = sorted(books)[(page - 1) * PER_LISTING : page * PER_LISTING]
    items = "".join(f'<li><a href="/catalogue/{n}.html">Book {n}</a></li>' for n in numbers)
    pages = -(-len(books) // PER_LISTING)
    pager = f'<a href="/page-{page + 1}.html">next</a>' if page < pages else ""
    return f"<html><head><title>Books - page {page}</title></head><body><ul>{items}</ul>{pager}</body></html>".encode()


def shop(books: dict[int, bytes]) -> localsite.Answer:
    """The shop's pages: listings, product pages, and 404 for everything else."""
    listings = -(-len(books) // PER_LISTING)

    def answer(host: str, path: str) -> tuple[int, bytes]:
        if path in ("/", "/index.html"):
            return 200, listing(1, books)
        if (match := re.fullmatch(r"/page-(\d+)\.html", path)) and 1 <= int(match[1]) <= listings:
            return 200, listing(int(match[1]), books)
        if (match := re.fullmatch(r"/catalogue/(\d+)\.html", path)) and int(match[1]) in books:
            return 200, books[int(match[1])]
        return 404, b"<html><body>Not found</body></html>"

    return answer


def crawl(project: Path, url: str, out: Path) -> dict:
    report = out.with_suffix(".report.json")
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "template",
        "-a",
        f"template={PROJECT / 'docs/examples/books.yaml'}",
        "-a",
        f"start_urls={url}",
        "-O",
        str(out),
        "-s",
        "LOG_LEVEL=INFO",
        "-s",
        f"ADAPTIVE_REPORT_FILE={report}",
    ]
    env = {**os.environ, "PYTHONPATH": str(project)}
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    items = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    products = {item["url"] for item in items if item.get("title")}
    stats = json.loads(report.read_text())["stats"] if report.exists() else {}
    return {
        "project": str(project),
        "pages_crawled": stats.get("response_received_count"),
        "product_pages_fetched": len(products),
        "products_extracted": len(products),
        "status_404": stats.get("downloader/response_status_count/404", 0),
        "dropped_unreliable": stats.get("adaptive/filtered/unreliable", 0),
        "finish_reason": stats.get("finish_reason"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", help="checkout(s) to run (default: this one)")
    parser.add_argument("--archive", default=str(ARCHIVE))
    args = parser.parse_args(argv)
    books = load_books(Path(args.archive))
    server, url = localsite.serve(shop(books))
    results = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for index, project in enumerate(args.project or [str(PROJECT)]):
                result = crawl(Path(project), url, Path(tmp) / f"items-{index}.jsonl")
                results.append(result)
                print(
                    f"{result['project']}: {result['pages_crawled']} pages crawled, "
                    f"{result['products_extracted']} of {len(books)} products extracted, "
                    f"{result['status_404']} answered 404, {result['dropped_unreliable']} requests dropped as "
                    f"'unreliable', finish reason {result['finish_reason']}"
                )
    finally:
        server.shutdown()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
