"""The result page: a small web app over one or more search indexes.

``SearchApp`` turns requests into responses (no sockets, so it is easy to
test); :func:`make_server` serves it with the standard library's threading
HTTP server, bound to 127.0.0.1 unless told otherwise.  Every string shown is
escaped on the server (``html.escape``) or inserted as ``textContent`` in the
browser, and a Content-Security-Policy forbids inline scripts as a second line
of defence.

Each hit reads like a search result rather than a database row: its title
(linked when the document has an http(s) URL), the URL, a snippet of its text
around the densest run of query words, and the query words highlighted with
``<mark>``; ``top`` hits a page, ``page`` (1-based) pages through the rest.

Routes: ``/`` the page (``?index=&q=&top=&page=&k=&b=&weights=&formula=&feedback=``),
``/api/search`` the same as JSON, ``/api/suggest?index=&q=`` suggestions,
``/static/search.js`` and ``/static/search.css``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, overload
from urllib.parse import parse_qs, urlencode, urlsplit

from .analysis import Analyzer
from .errors import SearchError
from .index import SearchIndex
from .ranking import Hit, SearchResults
from .synonyms import SynonymDictionary

MAX_TOP = 100
#: Deeper pages than this are refused: nobody reads them, and each costs a bigger top-k selection.
MAX_PAGE = 1000
TITLE_CHARS = 120
URL_CHARS = 100
#: Length of a snippet; it opens a little before its first query word so that the word has context.
SNIPPET_CHARS = 240
SNIPPET_LEAD = 60
#: The same word split as the analyzer (adaptive_spider.text.words), with positions kept for highlighting.
_WORD = re.compile(r"[^\W_]+")
_WEB_URL = re.compile(r"https?://", re.IGNORECASE)
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
        page = int(_number(params, "page", 1, 1, MAX_PAGE))
        feedback = _number(params, "feedback", None, 0, 100)
        with self._lock:
            results = index.search(
                params.get("q", ""),
                top=top,
                offset=(page - 1) * top,
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
                body = self.results_html(index, results, params)
        except SearchError as problem:
            status, error = 400, str(problem)
            name = params.get("index", "")
        html = self.layout(params, name, error, body)
        return status, "text/html; charset=utf-8", html.encode()

    def results_html(self, index: SearchIndex, results: SearchResults, params: Params) -> str:
        """The corrections made, the count, one result per hit and the links to the other pages."""
        notes = "".join(
            f'<p class="correction">Searched for <b>{escape(new)}</b> instead of <s>{escape(old)}</s>.</p>'
            for old, new in results.corrections.items()
        )
        top = int(_number(params, "top", self.top, 1, MAX_TOP))
        page = int(_number(params, "page", 1, 1, MAX_PAGE))
        first = (page - 1) * top + 1
        shown = f", showing {first}–{first + len(results.hits) - 1}" if results.hits else ""
        if not results.hits and results.total:
            shown = f"; page {page} is past the last one"
        hits = "".join(self.hit_html(index, hit, set(results.terms)) for hit in results.hits)
        listing = f'<ol id="results" start="{first}">{hits}</ol>' if hits else ""
        return f'{notes}<p id="total">{results.total} matching documents{shown}</p>{listing}' + self.pages_html(
            params, page, top, results.total
        )

    def hit_html(self, index: SearchIndex, hit: Hit, terms: set[str]) -> str:
        """One result: linked title, URL, snippet and the score (plus any numeric fields, which formulas use).

        Only an http(s) URL becomes a link, so a crawled ``javascript:`` address stays text.
        """
        fields = hit.fields
        url = next((_text(v) for v in (hit.id, fields.get("url")) if v and _WEB_URL.match(_text(v))), "")
        title_field = "title" if "title" in index.fields or "title" in fields else None
        title = _text(fields.get(title_field, "")).strip() if title_field else ""
        title_html = _highlight(_shorten(title or url or hit.id, TITLE_CHARS), terms, index.analyzer)
        if url:
            heading = f'<a class="title" href="{escape(url, quote=True)}">{title_html}</a>'
        else:
            heading = f'<span class="title">{title_html}</span>'
        texts = [_text(fields[name]) for name in index.fields if name != title_field and fields.get(name)]
        snippet = _snippet(texts, terms, index.analyzer)
        numeric = [name for name in sorted(index.numeric_fields) if name in fields]
        numbers = "".join(f" · {escape(name)} {escape(_number_text(fields[name]))}" for name in numeric)
        return (
            f'<li class="hit">{heading}<div class="url">{escape(_shorten(url or hit.id, URL_CHARS))}</div>'
            + (f'<p class="snippet">{snippet}</p>' if snippet else "")
            + f'<div class="meta">score {hit.score:.3f}{numbers}</div></li>'
        )

    def pages_html(self, params: Params, page: int, top: int, total: int) -> str:
        """Previous and next links that keep every other parameter of the search."""
        last = min(MAX_PAGE, max(1, -(-total // top)))
        if last == 1 and page == 1:
            return ""

        def link(number: int, rel: str, label: str) -> str:
            query = urlencode({**params, "page": str(number)})
            return f'<a rel="{rel}" class="{rel}" href="/?{escape(query, quote=True)}">{label}</a>'

        previous = link(min(page - 1, last), "prev", "← Previous") if page > 1 else ""
        following = link(page + 1, "next", "Next →") if page < last else ""
        return f'<nav class="pages">{previous}<span>Page {page} of {last}</span>{following}</nav>'

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


def _text(value: Any) -> str:
    """A stored value as text: fields hold any JSON value (lists of headings, numbers), the page shows text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _number_text(value: Any) -> str:
    """A stored number for reading: 0.736 rather than 0.7360184 (the JSON API keeps every digit)."""
    return f"{value:.3g}" if isinstance(value, float) else _text(value)


def _shorten(text: str, limit: int) -> str:
    """*text* cut to *limit* characters: a crawled title or URL can be any length and must not break the layout."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _matches(text: str, terms: set[str], analyzer: Analyzer) -> list[re.Match[str]]:
    """The words of *text* whose index term is a query term: the words the ranking matched."""
    return [m for m in _WORD.finditer(text) if analyzer.term(m.group().lower()) in terms]


def _highlight(text: str, terms: set[str], analyzer: Analyzer, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` escaped, with each query word in ``<mark>``."""
    end = len(text) if end is None else end
    parts, at = [], start
    for match in _matches(text[start:end], terms, analyzer):
        word_start, word_end = start + match.start(), start + match.end()
        parts.append(escape(text[at:word_start]))
        parts.append(f"<mark>{escape(text[word_start:word_end])}</mark>")
        at = word_end
    parts.append(escape(text[at:end]))
    return "".join(parts)


def _snippet(texts: list[str], terms: set[str], analyzer: Analyzer) -> str:
    """The window of SNIPPET_CHARS with the most query words, over all *texts*, highlighted.

    Without any query word in the texts (a match through feedback terms or a formula), the
    opening of the first text: still a fair idea of what the page is.
    """
    best: tuple[int, str, int] | None = None  # (query words in the window, text, window start)
    for raw in texts:
        text = " ".join(raw.split())  # crawled text: newlines and runs of spaces from the layout
        positions = [m.start() for m in _matches(text, terms, analyzer)]
        right = 0
        for left, position in enumerate(positions):
            right = max(right, left)
            while right + 1 < len(positions) and positions[right + 1] < position + SNIPPET_CHARS - SNIPPET_LEAD:
                right += 1
            if best is None or right - left + 1 > best[0]:
                best = (right - left + 1, text, max(0, position - SNIPPET_LEAD))
        if best is None and text and not positions:
            best = (0, text, 0)
    if best is None:
        return ""
    _, text, start = best
    if start:  # open at a word boundary
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + SNIPPET_LEAD else start
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):  # close at a word boundary, after the last query word counted above
        space = text.rfind(" ", start + SNIPPET_CHARS - SNIPPET_LEAD, end)
        end = space if space > 0 else end
    return ("…" if start else "") + _highlight(text, terms, analyzer, start, end) + ("…" if end < len(text) else "")


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
