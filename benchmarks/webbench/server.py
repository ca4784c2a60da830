"""The offline web's HTTP server: an HTTP proxy on 127.0.0.1 that answers from ``OfflineWeb``.

Scrapy reaches it through ``http_proxy=http://127.0.0.1:PORT`` (the absolute URL in
the request line names the virtual host); plain requests with a ``Host`` header
work too. ``CONNECT`` (https) is refused with 501, so nothing leaves the machine.
On the big web, slow hosts wait their delay in the request's own thread::

    python -m benchmarks.webbench.server [--port N] [--web small|big | --folder DIR --host NAME]
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from email.utils import formatdate
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from benchmarks.webbench.web import MissingPackagesError, OfflineWeb, WebResponse, make_response
from benchmarks.webbench.webs import WEBS, open_web

LOOPBACK = ("127.0.0.1", "localhost")


class OfflineWebHandler(BaseHTTPRequestHandler):
    """Answers GET and HEAD from the server's ``OfflineWeb``, one write per response, keep-alive."""

    protocol_version = "HTTP/1.1"
    server_version = "OfflineWeb/1"
    disable_nagle_algorithm = True  # one write per response: nothing to coalesce, no delayed-ACK stall

    def do_GET(self) -> None:
        self._answer(self._get(), with_body=True)

    def do_HEAD(self) -> None:
        self._answer(self._get(), with_body=False)

    def do_CONNECT(self) -> None:
        self.close_connection = True
        self._answer(self.server.web.get("https://" + self.path + "/"), with_body=True)

    def _get(self) -> WebResponse:
        target = self.path
        if target[:7].lower() == "http://" or target[:8].lower() == "https://":
            url = target  # proxy request: the absolute URL names the site
        elif target.startswith("/") and self.headers.get("Host"):
            url = f"http://{self.headers['Host']}{target}"
        else:
            return bad_request("need an absolute http URL or a Host header")
        try:
            delay = self.server.web.delay(url)
            if delay:
                time.sleep(delay)  # a slow host: this request's thread only
            return self.server.web.get(url)
        except ValueError as error:  # a URL urlsplit cannot parse
            return bad_request(str(error))

    def _answer(self, response: WebResponse, with_body: bool) -> None:
        lines = [f"{self.protocol_version} {response.status} {HTTPStatus(response.status).phrase}"]
        lines += [f"{name}: {value}" for name, value in response.headers.items()]
        lines += [f"Date: {formatdate(usegmt=True)}", f"Server: {self.server_version}"]
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + response.body if with_body else head)
        self.log_request(response.status, len(response.body))

    def log_message(self, format: str, *args) -> None:  # BaseHTTPRequestHandler's name
        if self.server.verbose:
            super().log_message(format, *args)


def bad_request(reason: str) -> WebResponse:
    return make_response(400, f"400 Bad Request: {reason}\n".encode("utf-8", "replace"), "text/plain; charset=utf-8")


class OfflineWebServer(ThreadingHTTPServer):
    """A threaded HTTP server for one ``OfflineWeb``; ``close()`` stops it and its connections."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, web: OfflineWeb, address: tuple[str, int], verbose: bool = False):
        self.web = web
        self.verbose = verbose
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(address, OfflineWebHandler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def process_request(self, request, client_address):
        with self._lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def start(self) -> OfflineWebServer:
        """Serve in a background daemon thread."""
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, name=f"offline-web:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, drop open keep-alive connections and release the port."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()

    def __exit__(self, *exc_info) -> None:
        self.close()


def serve(web: OfflineWeb, host: str = "127.0.0.1", port: int = 0, *, verbose: bool = False):
    """Start serving ``web`` on ``host:port`` in a background thread; returns ``(server, port)``.

    Stop it with ``server.close()`` (or use the server as a context manager).
    """
    if host not in LOOPBACK:
        raise ValueError(f"offline web: serves on 127.0.0.1 only, not on {host!r}")
    server = OfflineWebServer(web, ("127.0.0.1", port), verbose=verbose)
    server.start()
    return server, server.port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the offline web as an HTTP proxy on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8431, help="port on 127.0.0.1 (default 8431; 0 picks a free one)")
    parser.add_argument("--web", choices=WEBS, default="small", help="which web of Debian packages (default: small)")
    parser.add_argument("--folder", help="serve this folder of HTML files as one site instead of the Debian packages")
    parser.add_argument("--host", default="site.test", help="host name of --folder (default: site.test)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    if args.folder and args.web != "small":
        parser.error("--folder serves one folder: it does not go with --web")
    try:
        web = OfflineWeb.from_folder(args.folder, args.host) if args.folder else open_web(args.web)
        server = OfflineWebServer(web, ("127.0.0.1", args.port), verbose=args.verbose)
    except (MissingPackagesError, OSError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"offline web on {server.proxy_url}: use http_proxy={server.proxy_url} https_proxy={server.proxy_url}")
    for url in ([web.hub_url] if web.hub_url else []) + web.start_urls:
        print(f"  {url}")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
