"""The result page: a small web app over one or more search indexes.

``SearchApp`` turns requests into responses (no sockets, so it is easy to
test); :func:`make_server` serves it with the standard library's threading
HTTP server, bound to 127.0.0.1 unless told otherwise.  Every string shown is
escaped on the server (``html.escape``) or inserted as ``textContent`` in the
browser, and a Content-Security-Policy forbids inline scripts as a second line
of defence.

Routes: ``/`` the page (``?index=&q=&top=&k=&b=&weights=&formula=&feedback=``),
``/api/search`` the same as JSON, ``/api/suggest?index=&q=`` suggestions,
``/static/search.js`` and ``/static/search.css``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, overload
from urllib.parse import parse_qs, urlencode, urlsplit

from .errors import SearchError
from .index import SearchIndex
from .ranking import SearchResults
from .synonyms import SynonymDictionary

MAX_TOP = 100
CELL_CHARS = 300
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def index_names(specs: list[str]) -> dict[str, Path]:
    """``NAME=DIR`` or ``DIR`` (named after its folder) -> {name: directory}."""
    named: dict[str, Path] = {}
    for spec in specs:
        name, _, directory = spec.rpartition("=") if "=" in spec else ("", "", spec)
        path = Path(directory)
        name = name or path.resolve().name or "index"
        if name in named:
            raise SearchError(f"two indexes are named {name!r}; use NAME=DIR")
        named[name] = path
    return named


#: The query string of a request, one value per name (the last one given).
Params = dict[str, str]


@overload
def _number(params: Params, name: str, default: float, low: float | None = ..., high: float | None = ...) -> float: ...
@overload
def _number(
    params: Params, name: str, default: None = ..., low: float | None = ..., high: float | None = ...
) -> float | None: ...
def _number(
    params: Params, name: str, default: float | None = None, low: float | None = None, high: float | None = None
) -> float | None:
    text = params.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SearchError(f"{name} must be a number, got {text!r}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise SearchError(f"{name} must be between {low} and {high}, got {value:g}")
    return value


class SearchApp:
    """Answers requests for the result page over named indexes.

    Parameters
    ----------
    indexes : dict
        Index name -> :class:`SearchIndex` (or directory, opened here).
    synonyms : SynonymDictionary, optional
        Adds suggestions.
    """

    def __init__(self, indexes: dict, synonyms: SynonymDictionary | None = None, top: int = 10):
        if not indexes:
            raise SearchError("no index to serve")
        self.indexes = {
            name: index if isinstance(index, SearchIndex) else SearchIndex.open(index)
            for name, index in indexes.items()
        }
        for index in self.indexes.values():
            index.prepare()
        self.synonyms = synonyms
        self.top = top
        self._lock = threading.Lock()

    def respond(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a GET of *target* (path and query)."""
        url = urlsplit(target)
        params = {key: values[-1] for key, values in parse_qs(url.query).items()}
        if url.path == "/":
            return self.page(params)
        if url.path == "/api/search":
            return self.api(self.search_json, params)
        if url.path == "/api/suggest":
            return self.api(self.suggest_json, params)
        if url.path in ("/static/search.js", "/static/search.css"):
            return self.static(url.path.rsplit("/", 1)[1])
        return 404, "text/plain; charset=utf-8", b"not found\n"

    def static(self, name: str) -> tuple[int, str, bytes]:
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        body = resources.files("adaptive_spider.search").joinpath("static").joinpath(name).read_bytes()
        return 200, f"{kind}; charset=utf-8", body

    def api(self, handler: Callable[[Params], dict[str, Any]], params: Params) -> tuple[int, str, bytes]:
        try:
            status, payload = 200, handler(params)
        except SearchError as error:
            status, payload = 400, {"error": str(error)}
        return status, "application/json", json.dumps(payload, ensure_ascii=False).encode()

    def _index(self, params: Params) -> tuple[str, SearchIndex]:
        name = params.get("index") or next(iter(self.indexes))
        if name not in self.indexes:
            raise SearchError(f"unknown index {name!r} (served: {', '.join(self.indexes)})")
        return name, self.indexes[name]

    def _search(self, params: Params) -> tuple[str, SearchIndex, SearchResults]:
        name, index = self._index(params)
        top = int(_number(params, "top", self.top, 1, MAX_TOP))
        feedback = _number(params, "feedback", None, 0, 100)
        with self._lock:
            results = index.search(
                params.get("q", ""),
                top=top,
                k=_number(params, "k", None, 0, 100),
                b=_number(params, "b", None, 0, 1),
                word_weights=params.get("weights") or None,
                formula=params.get("formula") or None,
                feedback=None if feedback is None else int(feedback),
            )
        return name, index, results

    def search_json(self, params: Params) -> dict[str, Any]:
        name, _, results = self._search(params)
        return {
            "index": name,
            "query": results.query,
            "total": results.total,
            "corrections": results.corrections,
            "hits": [{"id": h.id, "score": h.score, "fields": h.fields} for h in results.hits],
        }

    def suggest_json(self, params: Params) -> dict[str, Any]:
        _, index = self._index(params)
        with self._lock:
            return {"suggestions": index.suggest(params.get("q", ""), synonyms=self.synonyms)}

    def page(self, params: Params) -> tuple[int, str, bytes]:
        status, error, body = 200, "", ""
        try:
            name, index = self._index(params)
            if "q" in params:
                name, index, results = self._search(params)
                body = self.results_html(index, results)
        except SearchError as problem:
            status, error = 400, str(problem)
            name = params.get("index", "")
        html = self.layout(params, name, error, body)
        return status, "text/html; charset=utf-8", html.encode()

    def columns(self, index: SearchIndex) -> list[str]:
        return [index.id_field, *index.fields, *sorted(index.numeric_fields)]

    def results_html(self, index: SearchIndex, results: SearchResults) -> str:
        notes = "".join(
            f'<p class="correction">Searched for <b>{escape(new)}</b> instead of <s>{escape(old)}</s>.</p>'
            for old, new in results.corrections.items()
        )
        columns = self.columns(index)
        head = "".join(f"<th>{escape(column)}</th>" for column in columns) + "<th>score</th>"
        rows = []
        for hit in results.hits:
            cells = "".join(f"<td>{escape(_cell(hit.fields.get(column, '')))}</td>" for column in columns)
            rows.append(f"<tr>{cells}<td>{hit.score:.3f}</td></tr>")
        return (
            f'{notes}<p id="total">{results.total} matching documents</p>'
            f'<table id="results"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def layout(self, params: Params, current: str, error: str, body: str) -> str:
        options = "".join(
            f'<option value="{escape(name)}"{" selected" if name == current else ""}>'
            f"{escape(name)} ({len(index)} documents)</option>"
            for name, index in self.indexes.items()
        )

        def value(key: str) -> str:
            return escape(params.get(key, ""), quote=True)

        error_html = f'<p id="error" role="alert">{escape(error)}</p>' if error else ""
        title = f"{escape(params['q'])} – search" if params.get("q") else "Search"
        return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/search.css"></head>
<body>
<form id="search" method="get" action="/" autocomplete="off">
  <select name="index" id="index" aria-label="index">{options}</select>
  <span class="box"><input type="search" name="q" id="q" value="{value("q")}"
    placeholder="Search what was crawled" aria-label="query" autofocus>
  <ul id="suggestions" role="listbox" hidden></ul></span>
  <button type="submit">Search</button>
  <details><summary>Ranking</summary>
    <label>k <input name="k" size="4" value="{value("k")}"></label>
    <label>b <input name="b" size="4" value="{value("b")}"></label>
    <label>word weights <input name="weights" placeholder="freiburg=5" value="{value("weights")}"></label>
    <label>formula <input name="formula" placeholder="log(votes + 1)" value="{value("formula")}"></label>
    <label>feedback docs <input name="feedback" size="3" placeholder="5" value="{value("feedback")}"></label>
  </details>
</form>
{error_html}{body}
<script src="/static/search.js"></script>
</body></html>"""


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def make_server(app: SearchApp, host: str = "127.0.0.1", port: int = 8080) -> ThreadingHTTPServer:
    """An HTTP server for *app* (call ``serve_forever`` on it)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "adaptive-spider-search"

        def do_GET(self) -> None:
            status, kind, body = app.respond(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for header, value in SECURITY_HEADERS.items():
                self.send_header(header, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def page_url(server: ThreadingHTTPServer, **params: Any) -> str:
    host, port = server.server_address[:2]
    assert isinstance(host, str)  # an AF_INET server's address: (host, port)
    query = f"?{urlencode(params)}" if params else ""
    return f"http://{host}:{port}/{query}"
