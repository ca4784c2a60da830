"""A generated web site full of crawler traps, served on 127.0.0.1.

The demo site (:class:`~adaptive_spider.demo.site.DemoSite`) is the honest part;
its home page also links into every trap a crawler meets on the web:

- ``/loop/a``: a redirect loop (a -> b -> a);
- ``/chain/0``: an endless redirect chain (n -> n+1);
- ``/calendar/2024/05/``: a calendar of months and days, "previous" and "next" for ever;
- ``/events?date=2024-05-01``: a calendar in the query string;
- ``/deep/``: a relative link ``more/``, so ``/deep/more/more/...``;
- ``/tree/1/``: ever-deeper numbered paths ``/tree/1/2/3/...``;
- ``/shop/``: fresh session ids and tracking parameters in every link;
- ``/gone``, ``/forbidden``, ``/error``, ``/unavailable``: 404, 403, 500, 503;
- ``/slow.html`` answers after ``slow_seconds``; ``/hang.html`` after ``hang_seconds``
  (longer than any timeout); ``/huge.html`` has ``huge_bytes`` (above DOWNLOAD_MAXSIZE);
- ``/binary.html``: binary bytes served as text/html;
- ``/malformed.html``, ``/latin1.html``, ``/mislabelled.html``, ``/shift-jis.html``:
  broken markup, Latin-1, text mislabelled as UTF-8, undeclared Shift-JIS;
- ``/private/...`` and ``?print=1``: forbidden by robots.txt, which also asks for a Crawl-delay;
- ``/astronomy/index.html``, ``/cooking/index.html``: the content of a section page again.

Plus ``javascript:``, ``mailto:`` and ``tel:`` links and links with fragments and
tracking parameters to honest pages. Every request is logged (path and time)
in :attr:`TrapSite.log`; :func:`trap_of` names the trap a path belongs to.

    python -m adaptive_spider.demo.traps --port 8001
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import random
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from adaptive_spider.demo.site import QUERY, DemoSite, start_server, wait_for_interrupt

#: Path prefix -> trap name (the first match wins).
TRAP_PREFIXES = (
    ("/loop/", "redirect_loop"),
    ("/chain/", "redirect_chain"),
    ("/calendar/", "calendar"),
    ("/events", "query_calendar"),
    ("/deep/", "repeating_path"),
    ("/tree/", "deeper_path"),
    ("/shop/", "session_ids"),
    ("/private/", "robots_disallowed"),
    ("/gone", "http_errors"),
    ("/forbidden", "http_errors"),
    ("/error", "http_errors"),
    ("/unavailable", "http_errors"),
    ("/slow.html", "slow"),
    ("/hang.html", "hang"),
    ("/huge.html", "huge"),
    ("/binary.html", "binary"),
    ("/malformed.html", "bad_html"),
    ("/latin1.html", "bad_html"),
    ("/mislabelled.html", "bad_html"),
    ("/shift-jis.html", "bad_html"),
    ("/astronomy/index.html", "duplicate_content"),
    ("/cooking/index.html", "duplicate_content"),
)
SHOP_ITEMS = 5
CALENDAR_START = dt.date(2024, 5, 1)


# A response: status, headers, body, delay in seconds.
Reply = tuple[int, dict[str, str], bytes, float]


def trap_of(path: str) -> str | None:
    """The trap a request path belongs to (None: the honest site, or robots.txt)."""
    for prefix, name in TRAP_PREFIXES:
        if path.startswith(prefix):
            return name
    return None


def _page(title: str, body: str, links: Sequence[tuple[str, str]] = ()) -> str:
    items = "".join(f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in links)
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(body)}</p><ul>{items}</ul></body></html>"
    )


class TrapSite:
    """The demo site plus traps (``traps=False``: the demo site alone, logged and paced).

    Parameters
    ----------
    site : DemoSite
        The honest pages.
    traps : bool
        Link the traps from the home page and serve them.
    page_delay : float
        Seconds every response waits (to make a crawl last).
    slow_seconds, hang_seconds : float
        Delays of ``/slow.html`` and ``/hang.html``.
    huge_bytes : int
        Size of ``/huge.html``.
    crawl_delay : float
        The ``Crawl-delay`` robots.txt asks for (0: none).
    """

    def __init__(
        self,
        site: DemoSite | None = None,
        *,
        traps: bool = True,
        page_delay: float = 0.0,
        slow_seconds: float = 1.0,
        hang_seconds: float = 30.0,
        huge_bytes: int = 2 * 1024 * 1024,
        crawl_delay: float = 0.01,
        seed: int = 0,
    ) -> None:
        self.site = site or DemoSite(seed=seed, hubs_per_topic=2, articles_per_hub=10)
        self.traps = traps
        self.page_delay = page_delay
        self.slow_seconds = slow_seconds
        self.hang_seconds = hang_seconds
        self.huge_bytes = huge_bytes
        self.crawl_delay = crawl_delay
        self.rng = random.Random(seed)
        self.log: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self.home = self.site.pages["/"]
        if traps:
            self.home = self.home.replace("</body>", self._trap_links() + "</body>")

    # -- what is served -------------------------------------------------------------------------
    @property
    def honest_paths(self) -> set[str]:
        return set(self.site.pages)

    def robots_txt(self) -> bytes:
        lines = ["User-agent: *", "Disallow: /private/", "Disallow: /*?print=1"]
        if self.crawl_delay:
            lines.append(f"Crawl-delay: {self.crawl_delay}")
        return ("\n".join(lines) + "\n").encode()

    def _trap_links(self) -> str:
        links = [
            ("/loop/a", "Loop"),
            ("/chain/0", "Chain"),
            ("/calendar/2024/05/", "Calendar"),
            ("/events?date=2024-05-01", "Events"),
            ("/deep/", "Deep"),
            ("/tree/1/", "Tree"),
            ("/shop/;jsessionid=A1B2C3", "Shop"),
            ("/gone", "Gone"),
            ("/forbidden", "Forbidden"),
            ("/error", "Error"),
            ("/unavailable", "Unavailable"),
            ("/slow.html", "Slow"),
            ("/hang.html", "Hang"),
            ("/huge.html", "Huge"),
            ("/binary.html", "Binary"),
            ("/malformed.html", "Malformed"),
            ("/latin1.html", "Latin-1"),
            ("/mislabelled.html", "Mislabelled"),
            ("/shift-jis.html", "Shift-JIS"),
            ("/private/secret-1.html", "Secret 1"),
            ("/private/secret-2.html", "Secret 2"),
            ("/astronomy/?print=1", "Print"),
            ("/astronomy/index.html", "Astronomy index"),
            ("/cooking/index.html", "Cooking index"),
            ("/astronomy/?utm_source=mail&utm_medium=email#top", "Tracked"),
            ("/cooking/#recipes", "Fragment"),
            ("javascript:void(0)", "Script"),
            ("mailto:info@example.org", "Mail"),
            ("tel:+15550100", "Phone"),
        ]
        return "<ul>" + "".join(f'<li><a href="{html.escape(h)}">{html.escape(t)}</a></li>' for h, t in links) + "</ul>"

    def respond(self, target: str) -> Reply:
        """Status, headers, body and delay (seconds) for a request target."""
        parts = urlsplit(target)
        path = parts.path.split(";", 1)[0]
        query = parse_qs(parts.query)
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, self.robots_txt(), 0.0
        if path == "/":
            return self._html(self.home)
        if path in self.site.pages:
            return self._html(self.site.pages[path])
        if self.traps:
            answer = self._trap(path, query)
            if answer is not None:
                return answer
        return 404, {"Content-Type": "text/html"}, b"<html><body>Not found</body></html>", self.page_delay

    def _html(self, text: str, status: int = 200, delay: float | None = None, charset: str = "utf-8") -> Reply:
        body = text.encode(charset, "replace")
        headers = {"Content-Type": f"text/html; charset={charset}"}
        return status, headers, body, self.page_delay if delay is None else delay

    def _redirect(self, location: str) -> Reply:
        return 302, {"Location": location, "Content-Type": "text/html"}, b"", self.page_delay

    def _trap(self, path: str, query: dict[str, list[str]]) -> Reply | None:
        if path in ("/loop/a", "/loop/b"):
            return self._redirect("/loop/b" if path.endswith("a") else "/loop/a")
        if path.startswith("/chain/") and path[7:].isdigit():
            return self._redirect(f"/chain/{int(path[7:]) + 1}")
        if path.startswith("/calendar/"):
            return self._calendar(path)
        if path == "/events":
            return self._events(query.get("date", [CALENDAR_START.isoformat()])[0])
        if path.startswith("/deep/"):
            return self._html(_page(f"Deeper {path}", "More of the same.", [("more/", "More")]))
        if path.startswith("/tree/"):
            numbers = [part for part in path.split("/") if part.isdigit()]
            next_number = int(numbers[-1]) + 1 if numbers else 1
            return self._html(_page(f"Tree {path}", "Deeper still.", [(f"{path}{next_number}/", "Next level")]))
        if path.startswith("/shop/"):
            return self._shop(path)
        errors = {"/gone": 404, "/forbidden": 403, "/error": 500, "/unavailable": 503}
        if path in errors:
            return self._html(_page("Error", f"Status {errors[path]}"), status=errors[path])
        if path == "/slow.html":
            return self._html(_page("Slow astronomy page", "Telescopes, eventually."), delay=self.slow_seconds)
        if path == "/hang.html":
            return self._html(_page("Never seen", "The client gave up."), delay=self.hang_seconds)
        if path == "/huge.html":
            filler = "<p>" + "galaxy " * 1000 + "</p>"
            body = _page("Huge", "").replace("</body>", filler * (self.huge_bytes // len(filler) + 1) + "</body>")
            return self._html(body)
        if path == "/binary.html":
            return 200, {"Content-Type": "text/html"}, bytes(range(256)) * 64, self.page_delay
        if path == "/malformed.html":
            broken = (
                b"<html><head><title>Broken</title><body><div><p>unclosed "
                b"<a href='/music/'>music<table><tr><td>\x00</b></i>"
            )
            return 200, {"Content-Type": "text/html"}, broken, self.page_delay
        if path == "/latin1.html":
            latin1 = _page("Caf\xe9 des \xe9toiles", "Observatoire \xe0 Paris, t\xe9lescope.")
            return self._html(latin1, charset="iso-8859-1")
        if path == "/mislabelled.html":
            mislabelled = _page("Mislabelled", "na\xefve caf\xe9 \u2019quotes\u2019").encode("cp1252", "replace")
            mislabelled += b"\xff\xfe\x81"
            return 200, {"Content-Type": "text/html; charset=utf-8"}, mislabelled, self.page_delay
        if path == "/shift-jis.html":
            shift_jis = _page("天文学", "望遠鏡と銀河").encode("shift_jis")
            return 200, {"Content-Type": "text/html"}, shift_jis, self.page_delay
        if path.startswith("/private/"):
            return self._html(_page("Secret", "Robots.txt forbids this page."))
        if path.endswith("/index.html") and path[: -len("index.html")] in self.site.pages:
            return self._html(self.site.pages[path[: -len("index.html")]])  # the same page again
        return None

    def _calendar(self, path: str) -> Reply | None:
        parts = [int(p) for p in path.split("/")[2:] if p.isdigit()]
        if len(parts) == 2:
            year, month = parts
            prev_month = dt.date(year, month, 1) - dt.timedelta(days=1)
            next_month = dt.date(year, month, 28) + dt.timedelta(days=4)
            links = [
                (f"/calendar/{prev_month.year}/{prev_month.month:02d}/", "Previous month"),
                (f"/calendar/{next_month.year}/{next_month.month:02d}/", "Next month"),
            ]
            links += [(f"/calendar/{year}/{month:02d}/{day:02d}/", f"Day {day}") for day in (1, 2, 3)]
            return self._html(_page(f"Calendar {year}-{month:02d}", "Nothing happens this month.", links))
        if len(parts) == 3:
            day = dt.date(*parts)
            days = ((day - dt.timedelta(days=1), "Previous day"), (day + dt.timedelta(days=1), "Next day"))
            links = [(f"/calendar/{d.year}/{d.month:02d}/{d.day:02d}/", label) for d, label in days]
            return self._html(_page(f"Calendar {day.isoformat()}", "Nothing happens today.", links))
        return None

    def _events(self, date: str) -> Reply:
        try:
            day = dt.date.fromisoformat(date)
        except ValueError:
            day = CALENDAR_START
        links = [
            (f"/events?date={d.isoformat()}", label)
            for d, label in ((day - dt.timedelta(days=1), "Previous"), (day + dt.timedelta(days=1), "Next"))
        ]
        return self._html(_page(f"Events on {day.isoformat()}", "No events.", links))

    def _shop(self, path: str) -> Reply:
        with self._lock:
            sessions = [f"{self.rng.getrandbits(48):012x}" for _ in range(SHOP_ITEMS + 1)]
        links = [
            (
                f"/shop/item-{i}.html;jsessionid={sessions[i]}?sid={sessions[i]}"
                f"&utm_source=shop&utm_campaign=c{i}#reviews",
                f"Item {i}",
            )
            for i in range(SHOP_ITEMS)
        ]
        links.append((f"/shop/?PHPSESSID={sessions[-1]}", "Shop home"))
        return self._html(_page(f"Shop {path}", "Things to buy.", links))

    # -- log ------------------------------------------------------------------------------------
    def record(self, target: str) -> None:
        with self._lock:
            self.log.append((time.monotonic(), target))

    def fetched_paths(self) -> list[str]:
        """Paths requested so far (robots.txt excluded), in order."""
        with self._lock:
            return [urlsplit(target).path for _, target in self.log if urlsplit(target).path != "/robots.txt"]


class _Handler(BaseHTTPRequestHandler):
    trap_site: TrapSite

    def do_GET(self) -> None:  # the name http.server calls
        self.trap_site.record(self.path)
        status, headers, body, delay = self.trap_site.respond(self.path)
        if delay:
            time.sleep(delay)
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout or DOWNLOAD_MAXSIZE)

    def log_message(self, *args: Any) -> None:
        pass


def serve(site: TrapSite, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Serve the site in a background thread; returns ``(server, base_url)``.

    Stop it with ``server.shutdown()``.
    """
    return start_server(type("TrapHandler", (_Handler,), {"trap_site": site}), host, port)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the trap site on 127.0.0.1.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args(argv)
    site = TrapSite()
    server, url = serve(site, args.host, args.port)
    print(f"Trap site: {url}; query: {QUERY!r}", flush=True)
    wait_for_interrupt(server)


if __name__ == "__main__":
    main()
