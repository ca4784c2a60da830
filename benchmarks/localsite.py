"""A small local web for benchmarks and tests: pages made by a function, served on 127.0.0.1.

``answer(host, path)`` gives ``(status, body)`` for every request. The server takes plain
requests (``GET /path``; host is then ``""``) and proxy requests (``GET http://host/path``),
so one server can stand for several hosts behind ``http_proxy``.
"""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from adaptive_spider.demo.site import start_server

Answer = Callable[[str, str], tuple[int, bytes]]


def serve(answer: Answer) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a thread; returns it (``shutdown()`` stops it) and its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            status, body = answer(url.hostname or "", url.path or "/")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    # start_server's backlog takes a crawl's bursts of connections: with the default of 5, a
    # dropped connection costs its request a second, a whole test crawl's length.
    return start_server(Handler)
