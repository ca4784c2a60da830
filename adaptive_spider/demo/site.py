"""A generated web site for the demo and the tests: a relevant region behind
irrelevant hub pages.

The site has a home page, topic sections with hub pages and article pages. One
topic (``astronomy`` by default) is the *relevant region*: its articles talk
about the query, but the only ways in are hub pages whose text is generic, some
with an informative anchor ("Space and telescopes") and some without ("More
sections"). A breadth-first crawl reaches the region only after most of the
site; a focused crawl should get there early. Deterministic for a given seed.

    python -m adaptive_spider.demo.site --port 8000     # serve on 127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import html
import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOPICS = {
    "astronomy": (
        "telescope planet galaxy orbit star nebula comet asteroid observatory astronomy lens moon solar eclipse"
    ),
    "cooking": "recipe oven flour butter sauce garlic roast simmer spice dough kitchen pan onion bake",
    "finance": "stock bond market interest dividend portfolio inflation bank loan credit equity fund tax",
    "gardening": "soil compost seed prune tomato flower garden water shrub mulch harvest bloom leaf root",
    "cycling": "bike wheel saddle gear chain pedal brake tyre route climb helmet frame race ride",
    "music": "guitar chord melody rhythm piano song tempo scale drum album concert harmony note band",
}
FILLER = "the and of to a in is it that for on with as this by from at be or are an was which about more also"
QUERY = "astronomy telescopes planets and galaxies"


@dataclass
class DemoSite:
    """Pages (path -> HTML) of the generated site and the paths of its relevant region."""

    seed: int = 0
    relevant_topic: str = "astronomy"
    hubs_per_topic: int = 4
    articles_per_hub: int = 30
    pages: dict[str, str] = field(default_factory=dict)
    relevant: set[str] = field(default_factory=set)
    #: Extra responses (path -> (status, content type, body)), for tests of odd pages.
    extra: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self._build()

    # -- text -------------------------------------------------------------------------------
    def _sentence(self, topic: str | None, n: int = 12) -> str:
        filler = FILLER.split()
        topical = TOPICS[topic].split() if topic else []
        words = [
            self.rng.choice(topical) if topical and self.rng.random() < 0.35 else self.rng.choice(filler)
            for _ in range(n)
        ]
        return " ".join(words).capitalize() + "."

    def _page(self, title: str, paragraphs: list[str], links: list[tuple[str, str]]) -> str:
        body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
        items = "".join(f'<li><a href="{href}">{html.escape(text)}</a></li>' for href, text in links)
        return (
            f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head>"
            f"<body><h1>{html.escape(title)}</h1>{body}<ul>{items}</ul></body></html>"
        )

    # -- structure ----------------------------------------------------------------------------
    def _build(self) -> None:
        topics = list(TOPICS)
        other = [t for t in topics if t != self.relevant_topic]
        home_links = [(f"/{t}/", f"{t.capitalize()} section") for t in other]
        # The relevant region hangs below a generic "more" hub, not the home page.
        home_links.append(("/more/", "More sections"))
        self.pages["/"] = self._page("Welcome", [self._sentence(None) for _ in range(3)], home_links)
        self.pages["/more/"] = self._page(
            "More sections",
            [self._sentence(None) for _ in range(3)],
            [
                (f"/{self.relevant_topic}/", "Space and telescopes"),
                *[(f"/{t}/hub-0.html", f"Browse {t}") for t in other],
            ],
        )
        for topic in topics:
            self._build_topic(topic, other)

    def _build_topic(self, topic: str, other: list[str]) -> None:
        relevant = topic == self.relevant_topic
        hubs = [f"/{topic}/hub-{i}.html" for i in range(self.hubs_per_topic)]
        # Section index: generic text, anchors that name the section half of the time.
        links = [(hub, f"{topic.capitalize()} part {i}" if i % 2 == 0 else f"Part {i}") for i, hub in enumerate(hubs)]
        self.pages[f"/{topic}/"] = self._page(f"Section {topic}", [self._sentence(None)], links)
        for h, hub in enumerate(hubs):
            articles = [f"/{topic}/{h}/article-{a}.html" for a in range(self.articles_per_hub)]
            cross = [(f"/{t}/hub-{h % self.hubs_per_topic}.html", f"See also {t}") for t in self.rng.sample(other, 2)]
            hub_links = [(a, f"Article {i}") for i, a in enumerate(articles)] + cross
            self.pages[hub] = self._page(f"Index {h}", [self._sentence(None) for _ in range(2)], hub_links)
            for a, path in enumerate(articles):
                neighbours = [(articles[(a + k) % len(articles)], f"Read more {k}") for k in (1, 2, 5)]
                paragraphs = [self._sentence(topic, 20) for _ in range(6)]
                title = f"{topic.capitalize()} notes {h}-{a}" if relevant else f"Notes {h}-{a}"
                self.pages[path] = self._page(title, paragraphs, [*neighbours, (f"/{topic}/", "Back")])
                if relevant:
                    self.relevant.add(path)


class _Handler(BaseHTTPRequestHandler):
    site: DemoSite
    #: Seconds each response waits (a slow web, where parallel workers pay off).
    latency: float = 0.0
    #: When a list, the path of every request is appended to it (who fetched what, in order).
    request_log: list[str] | None = None

    def do_GET(self) -> None:  # the name http.server calls
        path = self.path.split("?", 1)[0]
        if self.request_log is not None:
            self.request_log.append(path)
        if self.latency:
            time.sleep(self.latency)
        page = self.site.pages.get(path)
        if path in self.site.extra:
            self._reply(*self.site.extra[path])
        elif path == "/robots.txt":
            self._reply(200, "text/plain", b"User-agent: *\nDisallow:\n")
        elif page is None:
            self._reply(404, "text/html", b"<html><body>Not found</body></html>")
        else:
            self._reply(200, "text/html; charset=utf-8", page.encode("utf-8"))

    def _reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Crawlers open many connections at once; the default backlog of 5 drops some
    # (a dropped SYN costs the client a second).
    request_queue_size = 128


def serve(
    site: DemoSite,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    latency: float = 0.0,
    request_log: list[str] | None = None,
) -> tuple[ThreadingHTTPServer, str]:
    """Serve the site in a background thread; returns ``(server, base_url)``.

    ``latency`` delays every response by that many seconds; ``request_log``, a
    list, receives the path of every request in arrival order. Stop it with
    ``server.shutdown()``.
    """
    handler = type("DemoHandler", (_Handler,), {"site": site, "latency": latency, "request_log": request_log})
    return start_server(handler, host, port)


def start_server(
    handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", port: int = 0
) -> tuple[ThreadingHTTPServer, str]:
    """Serve an ``http.server`` request handler class in a background thread;
    returns ``(server, base_url)``."""
    server = _Server((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each response waits")
    args = parser.parse_args(argv)
    site = DemoSite(seed=args.seed)
    server, url = serve(site, args.host, args.port, latency=args.latency)
    print(f"Demo site: {url} ({len(site.pages)} pages, {len(site.relevant)} relevant); query: {QUERY!r}", flush=True)
    wait_for_interrupt(server)


def wait_for_interrupt(server: ThreadingHTTPServer) -> None:
    """Keep a background server running until Ctrl-C."""
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
