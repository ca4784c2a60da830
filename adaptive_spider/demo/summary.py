"""What a demo crawl found: a short summary of its feed and crawl report.

python -m adaptive_spider.demo.summary pages.jsonl report.json --site-url http://127.0.0.1:8000/
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from adaptive_spider.demo.site import DemoSite


def summarize(pages: list[dict], report: dict, site_url: str | None = None, top: int = 8) -> str:
    lines = [f"demo: fetched {len(pages)} pages; finish reason: {report.get('finish_reason', '?')}"]
    if site_url:
        relevant = {site_url.rstrip("/") + path for path in DemoSite(seed=0).relevant}
        found_at = [index for index, page in enumerate(pages, 1) if page["url"] in relevant]
        if found_at:
            lines.append(
                f"demo: {len(found_at)} of the site's {len(relevant)} relevant pages found, the first at page "
                f"{found_at[0]} (a breadth-first crawl fetches its first one at page {_bfs_fetches_to(site_url, 1)})"
            )
    best = sorted(pages, key=lambda page: -page.get("relevance", 0.0))[:top]
    lines.append("demo: most relevant pages:")
    lines += [f"  {page['relevance']:.2f}  {page.get('title') or '(no title)'}  {page['url']}" for page in best]
    return "\n".join(lines)


def _bfs_fetches_to(site_url: str, wanted: int) -> int:
    """Fetches a breadth-first crawl of the demo site needs to reach ``wanted`` relevant pages."""
    site = DemoSite(seed=0)
    order, seen, queue = [], {"/"}, ["/"]
    while queue:
        path = queue.pop(0)
        order.append(path)
        for href in _links(site.pages.get(path, "")):
            if href not in seen:
                seen.add(href)
                queue.append(href)
    found = 0
    for index, path in enumerate(order, 1):
        found += path in site.relevant
        if found >= wanted:
            return index
    return len(order)


def _links(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('href="')[1:]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", help="the crawl's JSON lines feed")
    parser.add_argument("report", help="the crawl report (ADAPTIVE_REPORT_FILE)")
    parser.add_argument("--site-url", help="the demo site's URL (to count its relevant pages)")
    args = parser.parse_args(argv)
    pages = [json.loads(line) for line in Path(args.pages).read_text().splitlines() if line.strip()]
    pages = [page for page in pages if "relevance" in page]
    report = json.loads(Path(args.report).read_text()) if Path(args.report).exists() else {}
    print(summarize(pages, report, args.site_url))


if __name__ == "__main__":
    main()
