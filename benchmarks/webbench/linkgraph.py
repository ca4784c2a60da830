"""The link graph of the offline web, as a breadth-first crawl over ``OfflineWeb.get`` sees it.

Links are what Scrapy's default ``LinkExtractor`` extracts from a page (``<a>`` and
``<area>`` hrefs resolved against the page's base URL, non-page extensions skipped),
without fragments, since Scrapy's duplicate filter ignores them. robots.txt is obeyed
and 301s are followed, so the graph is the one a Scrapy crawl of the server walks.
Run it to check an installation against the spec::

    python -m benchmarks.webbench.linkgraph --labels ../shared/webbench/labels-dev.json
    python -m benchmarks.webbench.linkgraph --web big --labels ../shared/bigweb/labels-dev.json  # minutes

A 503 (an unreliable host of the big web) is a fetched URL without links; slow hosts'
delays are not waited (``OfflineWeb.delay`` tells them).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html
from protego import Protego
from scrapy.linkextractors import IGNORED_EXTENSIONS
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

from benchmarks.webbench.web import OfflineWeb
from benchmarks.webbench.webs import WEBS, open_web

LinkFollower = Callable[[str, bytes], Iterable[str]]

_SKIPPED_SUFFIXES = tuple("." + extension for extension in IGNORED_EXTENSIONS)
_UNSAFE_URL_CHARACTER = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")


def page_links(url: str, body: bytes) -> list[str]:
    """The distinct pages an HTML page links to, as Scrapy's default LinkExtractor finds them.

    The same targets as ``LinkExtractor().extract_links`` without fragments, about
    three times faster, which a crawl simulator walking thousands of pages needs.
    """
    try:
        document = lxml.html.document_fromstring(body, base_url=url)
    except (lxml.etree.ParserError, ValueError):
        return []
    base = document.find(".//base[@href]")
    base_url = urljoin(url, strip_html5_whitespace(base.get("href"))) if base is not None else url
    targets: dict[str, None] = {}
    for element in document.iter("a", "area"):
        href = element.get("href")
        if href is None:
            continue
        try:
            target = urljoin(base_url, strip_html5_whitespace(href))
            if _UNSAFE_URL_CHARACTER.search(target):
                target = safe_url_string(target, encoding="utf-8")
        except ValueError:
            continue  # a bogus link, skipped like Scrapy does
        target = target.partition("#")[0]
        if not target.startswith(("http://", "https://")):
            continue
        if urlsplit(target).path.lower().endswith(_SKIPPED_SUFFIXES):
            continue
        targets[target] = None
    return list(targets)


@dataclass
class LinkGraph:
    """What a breadth-first crawl reached: statuses of fetched URLs and links between HTML pages."""

    start: str
    status: dict[str, int] = field(default_factory=dict)  # every fetched URL, in fetch order
    links: dict[str, list[str]] = field(default_factory=dict)  # HTML page -> distinct targets
    redirects: dict[str, str] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)  # disallowed by robots.txt, never fetched

    @property
    def pages(self) -> list[str]:
        """HTML pages reached (status 200), in fetch order."""
        return list(self.links)

    def link_count(self) -> int:
        """Links: distinct targets per page, whatever they answer."""
        return sum(len(targets) for targets in self.links.values())

    def page_links(self) -> list[tuple[str, str]]:
        """Links between HTML pages, redirects followed, distinct per page."""
        return [
            (page, target)
            for page, targets in self.links.items()
            for target in dict.fromkeys(self.final(target) for target in targets)
            if target in self.links
        ]

    def cross_site_links(self) -> list[tuple[str, str]]:
        """Links between HTML pages of different hosts, redirects followed."""
        return [(page, target) for page, target in self.page_links() if _host(page) != _host(target)]

    def links_to_hosts(self, hosts: Iterable[str]) -> list[tuple[str, str]]:
        """Links from a page to another of ``hosts``, whatever the target answers."""
        hosts = set(hosts)
        return [
            (page, target)
            for page, targets in self.links.items()
            for target in targets
            if _host(target) in hosts and _host(target) != _host(page)
        ]

    def final(self, url: str) -> str:
        """Where ``url`` ends up after its redirects."""
        seen = set()
        while url in self.redirects and url not in seen:
            seen.add(url)
            url = self.redirects[url]
        return url


def crawl(
    web: OfflineWeb,
    start: str = "http://hub.test/",
    *,
    follow: LinkFollower = page_links,
    obey_robots: bool = True,
    max_fetches: int | None = None,
) -> LinkGraph:
    """Breadth-first crawl of ``web`` from ``start``: every URL fetched once, robots.txt obeyed."""
    graph = LinkGraph(start)
    robots: dict[str, Protego] = {}
    queue, seen = deque([start]), {start}

    def enqueue(url: str) -> None:
        if url not in seen:
            seen.add(url)
            queue.append(url)

    while queue and (max_fetches is None or len(graph.status) < max_fetches):
        url = queue.popleft()
        if not url.startswith("http://"):
            continue  # https is not served and other schemes are not fetched
        if obey_robots and not _robots(web, url, robots).can_fetch(url, "*"):
            graph.blocked.add(url)
            continue
        response = web.get(url)
        graph.status[url] = response.status
        if response.status in (301, 302) and response.location:
            graph.redirects[url] = response.location
            enqueue(response.location)
        elif response.is_html:
            targets = list(follow(url, response.body))
            graph.links[url] = targets
            for target in targets:
                enqueue(target)
    return graph


def _robots(web: OfflineWeb, url: str, cache: dict[str, Protego]) -> Protego:
    origin = "http://" + urlsplit(url).netloc
    if origin not in cache:
        response = web.get(origin + "/robots.txt")
        cache[origin] = Protego.parse(response.body.decode("utf-8", "replace") if response.status == 200 else "")
    return cache[origin]


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def check_labels(graph: LinkGraph, labels: dict[str, list[str]]) -> dict[str, list[str]]:
    """Relevant URLs of each topic that the crawl did not reach as an HTML page, with the reason."""
    problems: dict[str, list[str]] = {}
    for topic, urls in labels.items():
        for url in urls:
            if url in graph.links:
                continue
            if url in graph.blocked:
                reason = "disallowed by robots.txt"
            elif url in graph.status:
                reason = f"status {graph.status[url]}"
            else:
                reason = "not reachable from the start page"
            problems.setdefault(topic, []).append(f"{url}: {reason}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", default="http://hub.test/")
    parser.add_argument("--labels", help="a labels JSON file (topic -> relevant URLs) to check for reachability")
    parser.add_argument("--web", choices=WEBS, default="small", help="which web of Debian packages (default: small)")
    parser.add_argument("--folder", help="serve this folder of HTML files instead of the Debian packages")
    parser.add_argument("--host", default="site.test", help="host name of --folder (default: site.test)")
    args = parser.parse_args(argv)
    web = OfflineWeb.from_folder(args.folder, args.host) if args.folder else open_web(args.web)

    began = time.perf_counter()
    graph = crawl(web, args.start)
    elapsed = time.perf_counter() - began
    statuses: dict[int, int] = {}
    for status in graph.status.values():
        statuses[status] = statuses.get(status, 0) + 1
    per_site: dict[str, int] = {}
    for page in graph.pages:
        per_site[_host(page)] = per_site.get(_host(page), 0) + 1

    broken = web.broken_symlinks()
    print(f"sites: {len(web.sites)}, broken symbolic links under their folders: {len(broken)}")
    for path in broken[:20]:
        print(f"  {path}")
    print(f"breadth-first crawl from {args.start} ({elapsed:.1f} s)")
    print(
        f"  fetched URLs                                  {len(graph.status):>7,}"
        f"  by status: {dict(sorted(statuses.items()))}"
    )
    print(f"  not fetched: disallowed by robots.txt         {len(graph.blocked):>7,}")
    print(f"  HTML pages (status 200)                       {len(graph.pages):>7,}")
    hosts = [site.host for site in web.sites] + ([urlsplit(web.hub_url).hostname] if web.hub_url else [])
    print(f"  links (distinct targets per page)            {graph.link_count():>7,}")
    print(f"  links between HTML pages (redirects followed) {len(graph.page_links()):>7,}")
    print(f"  links to another local site (any answer)      {len(graph.links_to_hosts(hosts)):>7,}")
    print(f"  links between HTML pages of different sites   {len(graph.cross_site_links()):>7,}")
    for host, count in per_site.items():
        print(f"    {host:<30} {count:>6,} pages")
    if not args.labels:
        return 0
    with open(args.labels, encoding="utf-8") as file:
        labels = json.load(file)
    problems = check_labels(graph, labels)
    total = sum(len(urls) for urls in labels.values())
    print(f"labels: {total - sum(map(len, problems.values()))} of {total} relevant URLs reached with status 200")
    for topic, lines in problems.items():
        for line in lines:
            print(f"  {topic}: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
