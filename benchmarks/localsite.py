"""A small local web for benchmarks and tests: pages made by a function, served on 127.0.0.1.

``answer(host, path)`` gives ``(status, body)`` for every request. The server takes plain
requests (``GET /path``; host is then ``""``) and proxy requests (``GET http://host/path``),
so one server can stand for several hosts behind ``http_proxy``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
