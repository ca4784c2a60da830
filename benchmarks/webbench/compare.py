"""Does the project's server answer like the spec's reference server? A check on a sample of URLs.

Starts both servers on 127.0.0.1, each in its own process: the reference
(``python3 ../shared/bigweb/sites.py --web big --port P``) and the project's
(``python -m benchmarks.webbench.server --web big``), asks both for the same few
hundred URLs through their proxies and compares each answer:

* status;
* body (SHA-256) of every 200, ``Location`` of every redirect, ``Retry-After`` of every 503
  (the text of error answers is a message, not content, and is not compared);
* delay class: "none" (answer within 0.5 s, plus 0.5 s per MB of body: the time a server
  may need to read and rewrite a large page) or "delayed"; two answers agree when both
  are "none" or when they arrived within 0.3 s (plus that allowance) of each other; a delay
  that differs is measured again, one request at a time, before it counts as a difference.

The sample (``--sample``, fixed by ``--seed``) holds every host's hub link, root, mount
point and robots.txt, random pages of every site (more of the slow and unreliable hosts),
links found on those pages (other sites, dead links, directories), and URLs made to hit
each rule: missing files, paths outside a site, directories with and without
``index.html``, ``page.html/``, query strings, cppreference's extension-less links,
pages robots.txt disallows, an unknown host. Exit status 0 when all agree::

    python -m benchmarks.webbench.compare --web big
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from benchmarks.webbench.linkgraph import page_links
from benchmarks.webbench.throughput import server_process
from benchmarks.webbench.web import HTML_SUFFIXES, MissingPackagesError, OfflineWeb, Site
from benchmarks.webbench.webs import WEBS, missing_packages, open_web, spec_folder

DELAYED = 0.5  # seconds: an answer slower than this (beyond its work) was delayed on purpose
SAME_DELAY = 0.3  # seconds: two delayed answers this close wait the same delay
# Bytes per second a server surely produces a page at (read, rewrite): the reference rewrites
# 5 MB/s on this machine (cmake's 2.8 MB genindex.html in 0.53 s), so a body of S bytes may
# take S / WORK_RATE seconds before any deliberate delay.
WORK_RATE = 2_000_000
REFERENCE_PORTS = range(8900, 9000)  # the reference server accepts these only
WORKERS = 16
UNRELIABLE_PAGES = 25  # random pages of each unreliable host in every sample


@dataclass(frozen=True)
class Answer:
    """What one server answered to one URL, reduced to what is compared."""

    status: int
    content: str  # body SHA-256 (200), Location (3xx), Retry-After (503), else ""
    seconds: float  # until the status line and headers arrived
    size: int

    @property
    def work(self) -> float:
        """Seconds a server may need to produce this body, waiting aside."""
        return self.size / WORK_RATE

    @property
    def delay_class(self) -> str:
        return "delayed" if self.seconds >= DELAYED + self.work else "none"


def fetch(proxy_port: int, url: str) -> Answer:
    """GET ``url`` through the proxy on 127.0.0.1:``proxy_port`` (the absolute URL in the request line)."""
    connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=60)
    try:
        began = time.perf_counter()
        connection.request("GET", url)
        response = connection.getresponse()
        seconds = time.perf_counter() - began
        body = response.read()
    finally:
        connection.close()
    if response.status == 200:
        content = hashlib.sha256(body).hexdigest()
    elif 300 <= response.status < 400:
        content = response.getheader("Location", "")
    elif response.status == 503:
        content = response.getheader("Retry-After", "")
    else:
        content = ""
    return Answer(response.status, content, seconds, len(body))


def differences(reference: Answer, ours: Answer) -> list[str]:
    """What differs between two answers to one URL (empty: they agree)."""
    found = []
    if reference.status != ours.status:
        found.append(f"status {reference.status} vs {ours.status}")
    elif reference.content != ours.content:
        found.append(
            f"{'body' if reference.status == 200 else 'header'} {reference.content[:60]} vs {ours.content[:60]}"
        )
    if not same_delay(reference, ours):
        found.append(f"delay {reference.seconds:.2f} s vs {ours.seconds:.2f} s")
    return found


def same_delay(reference: Answer, ours: Answer) -> bool:
    """Both answered at once, or both waited about the same delay (within ``SAME_DELAY``,
    plus the time a large body may take to produce).

    Near the class boundary a delay of 0.48 s may arrive in 0.47 s from one server and in
    0.51 s from the other: answers that close agree whatever their classes.
    """
    gap = abs(reference.seconds - ours.seconds)
    if reference.delay_class == ours.delay_class == "none":
        return True
    return gap <= SAME_DELAY + max(reference.work, ours.work)


# -- the sample ---------------------------------------------------------------------------
def html_files(site: Site, rng: random.Random, count: int) -> list[str]:
    """Up to ``count`` random HTML pages of a site, as URLs."""
    pages = []
    for folder, _, names in os.walk(site.root):
        pages += [os.path.join(folder, name) for name in names if name.endswith(HTML_SUFFIXES)]
    pages.sort()
    chosen = rng.sample(pages, min(count, len(pages)))
    return [site.base_url + quote(os.path.relpath(path, site.root)) for path in chosen]


def directories(site: Site, rng: random.Random) -> list[str]:
    """A subdirectory with ``index.html`` and one without (as URLs with and without the final slash)."""
    with_index, without = [], []
    for folder, subfolders, names in os.walk(site.root):
        if folder != site.root:
            (with_index if "index.html" in names else without).append(folder)
        if len(with_index) > 20 and len(without) > 20:
            break
        subfolders.sort()
    urls = []
    for group in (with_index, without):
        if group:
            relative = quote(os.path.relpath(rng.choice(group), site.root))
            urls += [site.base_url + relative + "/", site.base_url + relative]
    return urls


def made_urls(web: OfflineWeb, rng: random.Random) -> list[tuple[str, str]]:
    """URLs made to hit each rule of the server, with their category."""
    urls: list[tuple[str, str]] = [
        ("hub", "http://hub.test/"),
        ("hub", "http://hub.test/index.html"),
        ("hub", "http://hub.test/robots.txt"),
        ("hub", "http://hub.test/other.html"),
        ("unknown host", "http://nowhere.test/"),
        ("unknown host", "http://www.example.org/index.html"),
    ]
    for site in web.sites:
        origin = f"http://{site.host}"
        urls += [
            ("robots.txt", origin + "/robots.txt"),
            ("root", origin + "/"),
            ("start page", site.start_url),
            ("missing", site.base_url + f"no-such-page-{rng.randrange(10**6)}.html"),
        ]
        if site.mount != "/":
            urls.append(("root", origin + site.mount.rstrip("/")))
        if rng.random() < 0.25:
            urls.append(("query string", site.start_url + "?page=2"))
        if site.mount != "/" and rng.random() < 0.25:
            urls.append(("outside the mount", origin + "/elsewhere/index.html"))
        if site.host in DIRECTORY_HOSTS:
            urls += [("directory", url) for url in directories(site, rng)]
        for path in site.disallow:
            urls += [("disallowed", url) for url in html_files_under(site, path, rng, 2)]
        if site.host in web.conditions.unreliable:  # a 503 on about 30% of them
            urls += [("unreliable host", url) for url in html_files(site, rng, UNRELIABLE_PAGES)]
    return urls


# Hosts whose folders are walked for directories (a walk of every site's folder is slow).
DIRECTORY_HOSTS = {
    "docutils.sourceforge.test",
    "en.cppreference.test",
    "doc.qt.test",
    "docs.scipy.test",
    "www.erlang.test",
    "www.boost.test",
    "httpd.apache.test",
    "docs.oracle.test",
    "git-scm.test",
}


def html_files_under(site: Site, path: str, rng: random.Random, count: int) -> list[str]:
    folder = os.path.join(site.root, path[len(site.mount) :])
    pages = sorted(os.path.join(d, n) for d, _, names in os.walk(folder) for n in names if n.endswith(HTML_SUFFIXES))
    return [site.base_url + quote(os.path.relpath(p, site.root)) for p in rng.sample(pages, min(count, len(pages)))]


def sample_urls(web: OfflineWeb, size: int, seed: int, special_hosts: set[str]) -> list[tuple[str, str]]:
    """About ``size`` URLs with their category: made ones, random pages, links found on them."""
    rng = random.Random(seed)
    sample = made_urls(web, rng)
    # the rest: random pages (a share of every site, six shares of each special host), then links
    pages_wanted = max(len(web.sites), (size - len(sample)) * 3 // 5)
    shares = len(web.sites) + 5 * sum(1 for s in web.sites if s.host in special_hosts)
    pages: list[tuple[str, str]] = []
    for site in web.sites:
        count = round(pages_wanted / shares * (6 if site.host in special_hosts else 1))
        pages += [("page", url) for url in html_files(site, rng, max(1, count))]
    sample += pages
    links: list[str] = []
    for _, url in pages:
        response = web.get(url)
        if response.is_html:
            links += [link for link in page_links(url, response.body) if link.startswith("http://")]
    known = {url for _, url in sample}
    links = sorted(set(links) - known)
    sample += [("link", url) for url in rng.sample(links, min(len(links), max(0, size - len(sample))))]
    for category, url in list(sample):
        if category == "page" and url.endswith(".html") and rng.random() < 0.1:
            sample.append(("page.html/", url + "/"))
        if category == "page" and "cppreference" in url and url.endswith(".html") and rng.random() < 0.5:
            sample.append(("extension-less", url[: -len(".html")]))
    return sample


# -- running both servers ---------------------------------------------------------------------
def free_reference_port() -> int:
    for port in REFERENCE_PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 8900-8999 for the reference server")


class ReferenceServer:
    """``sites.py --web WEB --port P`` in its own process, until the ``with`` block ends."""

    def __init__(self, script: Path, web: str):
        self.command = [sys.executable, str(script), "--web", web, "--port", str(free_reference_port())]
        self.port = int(self.command[-1])
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ReferenceServer:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        while line.startswith("warning"):
            print(f"reference: {line.strip()}", file=sys.stderr)
            line = self.process.stdout.readline() if self.process.stdout else ""
        if "serving" not in line:
            self.process.kill()
            raise RuntimeError(f"reference server did not start: {line.strip() or 'no output'}")
        return self

    def __exit__(self, *exc_info) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)


def compare(urls: list[tuple[str, str]], reference_port: int, our_port: int) -> list[tuple[str, str, Answer, Answer]]:
    """Every URL asked of both servers (in parallel, ``WORKERS`` at a time each)."""

    def both(item):
        category, url = item
        return category, url, fetch(reference_port, url), fetch(our_port, url)

    with ThreadPoolExecutor(WORKERS) as pool:
        rows = list(pool.map(both, urls))
    # Timing under load is noisy (two cores, many threads): a delay that differs is measured
    # again, one request at a time, before it counts as a difference.
    again = [i for i, (_, _, reference, ours) in enumerate(rows) if not same_delay(reference, ours)]
    for index in again:
        rows[index] = both(rows[index][:2])
    if again:
        print(f"delays measured again one at a time: {len(again)} URL(s)")
    return rows


def report(rows, web: OfflineWeb) -> int:
    """Prints the agreement per category and each disagreement; returns the number of disagreements."""
    by_category: Counter = Counter()
    agreeing: Counter = Counter()
    statuses: Counter = Counter()
    delayed = Counter()
    largest_gap = 0.0
    problems = []
    for category, url, reference, ours in rows:
        by_category[category] += 1
        statuses[reference.status] += 1
        delayed[reference.delay_class] += 1
        found = differences(reference, ours)
        if reference.delay_class == ours.delay_class == "delayed":
            largest_gap = max(largest_gap, abs(reference.seconds - ours.seconds))
        predicted = web.delay(url)
        if ours.seconds + 0.05 < predicted:
            found.append(f"answered in {ours.seconds:.2f} s, before its delay {predicted:.2f} s")
        if found:
            problems.append(f"  {category:<16} {url}: {'; '.join(found)}")
        else:
            agreeing[category] += 1
    total, agreed = len(rows), sum(agreeing.values())
    print(f"{'category':<18} {'URLs':>5} {'agree':>6}")
    for category, count in sorted(by_category.items(), key=lambda item: -item[1]):
        print(f"{category:<18} {count:>5} {agreeing[category]:>6}")
    print(
        f"statuses (reference): {dict(sorted(statuses.items()))}; delay classes: {dict(delayed)}; "
        f"largest gap between two delayed answers: {largest_gap:.3f} s"
    )
    if problems:
        print(f"disagreements ({len(problems)}):")
        print("\n".join(problems[:40]))
    print(
        f"agreement: {agreed}/{total} URLs ({100 * agreed / total:.1f}%) on status, body/Location/Retry-After "
        "and delay class"
    )
    return total - agreed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--web", choices=WEBS, default="big", help="which web to compare (default: big)")
    parser.add_argument("--reference", help="the reference server (default: sites.py in the spec's folder)")
    parser.add_argument("--sample", type=int, default=500, help="about this many URLs (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sample (default 0)")
    args = parser.parse_args(argv)
    folder = spec_folder("big")
    script = Path(args.reference) if args.reference else (folder / "sites.py" if folder else None)
    if script is None or not script.is_file():
        print("error: reference server not found: give --reference PATH/sites.py", file=sys.stderr)
        return 2
    missing = missing_packages(args.web)
    if missing:
        print(f"error: packages not installed: {' '.join(missing)} (see docs/webbench.md)", file=sys.stderr)
        return 2
    try:
        web = open_web(args.web)
    except (MissingPackagesError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    special = set(web.conditions.slow) | set(web.conditions.unreliable)
    began = time.perf_counter()
    urls = sample_urls(web, args.sample, args.seed, special)
    print(f"sample: {len(urls)} URLs of the {args.web} web (seed {args.seed}, {time.perf_counter() - began:.1f} s)")
    with ReferenceServer(script, args.web) as reference, server_process(["--web", args.web]) as proxy:
        our_port = urlsplit(proxy).port or 0
        print(f"reference: {' '.join(reference.command)}")
        print(f"project:   python -m benchmarks.webbench.server --web {args.web} (port {our_port})")
        began = time.perf_counter()
        rows = compare(urls, reference.port, our_port)
        print(f"asked both servers in {time.perf_counter() - began:.1f} s")
    return 1 if report(rows, web) else 0


if __name__ == "__main__":
    sys.exit(main())
