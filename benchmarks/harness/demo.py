"""A harness run without Debian's packages: the generated demo site as a folder, with its topics file.

    python -m benchmarks.harness.demo /tmp/demo
    python -m benchmarks.harness --folder /tmp/demo/site --topics /tmp/demo/topics.json --budget 300

The site is :class:`adaptive_spider.demo.site.DemoSite` (a relevant region,
astronomy, behind generic hub pages); every page is written as an HTML file
(``/section/`` as ``section/index.html``), so the offline web serves it as one
site of ``host``, and the topic's label rule names the region's articles.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from adaptive_spider.demo.site import QUERY, TOPICS, DemoSite

DEFAULT_HOST = "site.test"


def write_site(site: DemoSite, folder: Path) -> int:
    """Write every page of ``site`` under ``folder``; returns the number of files."""
    for path, html in site.pages.items():
        relative = path.lstrip("/")
        target = folder / (relative + "index.html" if relative.endswith("/") or not relative else relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    return len(site.pages)


def demo_topics(site: DemoSite, host: str = DEFAULT_HOST) -> dict:
    """The topics file of the demo site: one topic, the relevant region's articles."""
    topic = site.relevant_topic
    return {
        "topics": [
            {
                "id": f"demo-{topic}",
                "query": QUERY,
                "keywords": TOPICS[topic].split()[:6],
                "seeds": [f"http://{host}/"],
                "label": {"url": [rf"^http://{host.replace('.', chr(92) + '.')}/{topic}/\d+/article-\d+\.html$"]},
            }
        ]
    }


def write_demo(folder: Path, host: str = DEFAULT_HOST, **site_options) -> tuple[Path, Path, DemoSite]:
    """The demo site in ``folder/site`` and its topics in ``folder/topics.json``."""
    site = DemoSite(**site_options)
    site_folder = folder / "site"
    write_site(site, site_folder)
    topics = folder / "topics.json"
    topics.write_text(json.dumps(demo_topics(site, host), indent=1) + "\n", encoding="utf-8")
    return site_folder, topics, site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="where to write site/ and topics.json")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hubs", type=int, default=4, help="hub pages per section (default 4)")
    parser.add_argument("--articles", type=int, default=30, help="articles per hub page (default 30)")
    args = parser.parse_args(argv)
    site_folder, topics, site = write_demo(
        Path(args.folder), args.host, seed=args.seed, hubs_per_topic=args.hubs, articles_per_hub=args.articles
    )
    print(f"demo site: {len(site.pages)} pages ({len(site.relevant)} relevant) in {site_folder}; topics: {topics}")
    print(f"run: python -m benchmarks.harness --folder {site_folder} --host {args.host} --topics {topics} --budget 300")
    return 0


if __name__ == "__main__":
    sys.exit(main())
