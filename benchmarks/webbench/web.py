"""The offline web: Debian's HTML documentation packages served as virtual hosts.

``OfflineWeb`` answers a URL the way the benchmark's HTTP server does (see
``/work/shared/webbench/README.md``, mirrored in ``docs/webbench.md``), as a pure
function of the URL: no sockets, so a crawl simulator can walk the same web the
real server serves. ``benchmarks.webbench.server`` puts it behind an HTTP proxy.

Each site is a directory on disk mounted at a path of a ``.test`` host. Pages are
served as shipped, except that ``href`` values pointing at a mirrored site's public
address or at Debian's on-disk copy of it are rewritten to the local virtual host,
so that links between sites work.
"""

from __future__ import annotations

import mimetypes
import os
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, unquote, urlsplit

from benchmarks.webbench.conditions import RETRY_AFTER, HostConditions

HUB_HOST = "hub.test"
HUB_TITLE = "Local documentation hub"
HTML_SUFFIXES = (".html", ".htm")
# Files above this size are read from disk on every request instead of being kept in memory.
MAX_CACHED_FILE_SIZE = 16 * 1024 * 1024
# Answers of files kept in memory, least recently used dropped first: the small web (275 MB)
# fits whole; of the big web (6 GB) the pages a crawl returns to stay.
MAX_CACHED_BYTES = 768 * 1024 * 1024


@dataclass(frozen=True)
class WebResponse:
    """What the offline web answers to one GET: status, headers and body.

    Responses of files are cached and shared between calls: treat them as read-only.
    """

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def location(self) -> str | None:
        """The redirect target of a 301, else None."""
        return self.headers.get("Location")

    @property
    def is_html(self) -> bool:
        return self.status == 200 and self.headers.get("Content-Type", "").startswith("text/html")


@dataclass(frozen=True)
class Site:
    """One virtual host: the directory ``root`` served under ``http://host/mount``.

    ``public_urls`` are the site's public addresses without scheme (``"docs.python.org/3/"``)
    and ``disk_aliases`` further directories holding the same files (Debian's
    ``/usr/share/doc/python3-doc/html``): hrefs to them, or to ``root``, are rewritten to
    this site (see ``LinkRewriter``). ``disallow`` lists the robots.txt ``Disallow`` paths.
    With ``html_suffix_redirect``, a missing ``path`` whose ``path.html`` exists answers 301
    to it (cppreference's extension-less links).
    """

    host: str
    mount: str
    root: str
    start: str
    title: str
    package: str | None = None
    public_urls: tuple[str, ...] = ()
    disk_aliases: tuple[str, ...] = ()
    disallow: tuple[str, ...] = ()
    html_suffix_redirect: bool = False

    def __post_init__(self):
        if not (self.mount.startswith("/") and self.mount.endswith("/")):
            raise ValueError(f"site {self.host}: mount {self.mount!r} must start and end with '/'")
        if self.host != self.host.lower():
            raise ValueError(f"site {self.host}: host names are lower case")

    @property
    def base_url(self) -> str:
        return f"http://{self.host}{self.mount}"

    @property
    def start_url(self) -> str:
        return self.base_url + self.start

    def is_installed(self) -> bool:
        return os.path.isfile(os.path.join(self.root, self.start))


def _debian(host, mount, root, title, package, public_urls, start="index.html", **extra) -> Site:
    return Site(host, mount, "/usr/share/doc/" + root, start, title, package, tuple(public_urls), **extra)


# The spec's ten sites, in the hub's order.
DEBIAN_SITES: tuple[Site, ...] = (
    _debian(
        "docs.python.test",
        "/3/",
        "python3.11/html",
        "Python 3.11 documentation",
        "python3.11-doc",
        ["docs.python.org/3/"],
        disk_aliases=("/usr/share/doc/python3-doc/html",),
        disallow=("/3/whatsnew/",),
    ),
    _debian(
        "www.postgresql.test",
        "/docs/15/",
        "postgresql-doc-15/html",
        "PostgreSQL 15 documentation",
        "postgresql-doc-15",
        ["www.postgresql.org/docs/current/", "www.postgresql.org/docs/15/"],
    ),
    _debian(
        "docs.djangoproject.test",
        "/en/3.2/",
        "python-django-doc/html",
        "Django 3.2 documentation",
        "python-django-doc",
        ["docs.djangoproject.com/en/3.2/"],
    ),
    _debian("git-scm.test", "/docs/", "git-doc", "Git reference manual", "git-doc", ["git-scm.com/docs/"]),
    _debian(
        "www.sphinx-doc.test",
        "/en/master/",
        "sphinx-doc/html",
        "Sphinx documentation",
        "sphinx-doc",
        ["www.sphinx-doc.org/en/master/"],
    ),
    _debian(
        "docs.scrapy.test",
        "/en/latest/",
        "python-scrapy-doc/html",
        "Scrapy 2.8 documentation",
        "python-scrapy-doc",
        ["docs.scrapy.org/en/latest/"],
    ),
    _debian(
        "scikit-learn.test",
        "/stable/",
        "python-sklearn-doc/html",
        "scikit-learn 1.2 documentation",
        "python-sklearn-doc",
        ["scikit-learn.org/stable/"],
    ),
    _debian(
        "flask.palletsprojects.test",
        "/en/2.2.x/",
        "python-flask-doc/html",
        "Flask 2.2 documentation",
        "python-flask-doc",
        ["flask.palletsprojects.com/en/2.2.x/"],
    ),
    _debian(
        "requests.readthedocs.test",
        "/en/latest/",
        "python-requests-doc/html",
        "Requests: HTTP for Humans",
        "python-requests-doc",
        ["requests.readthedocs.io/en/latest/"],
    ),
    _debian(
        "docutils.sourceforge.test",
        "/",
        "docutils-doc",
        "Docutils documentation",
        "docutils-doc",
        ["docutils.sourceforge.io/"],
        start="docs/index.html",
    ),
)


class MissingPackagesError(RuntimeError):
    """Some sites' Debian documentation packages are not installed."""

    def __init__(self, packages: Sequence[str]):
        self.packages = tuple(packages)
        super().__init__(
            f"offline web: Debian documentation packages not installed: {', '.join(self.packages)}; "
            f"install them with: {install_command(self.packages)} "
            "(with a PostgreSQL server installed, pin postgresql-doc-15 to its version; see docs/webbench.md), "
            "or serve a folder of HTML files with OfflineWeb.from_folder"
        )


def install_command(packages: Iterable[str]) -> str:
    """The apt-get line that installs ``packages``."""
    return "sudo apt-get install --no-install-recommends " + " ".join(packages)


class LinkRewriter:
    """Rewrites href values that point at a site's public address or on-disk copy to its local URL.

    An href under a site's public address or folder keeps the rest of its path
    (``https://docs.python.org/3/library/re.html`` -> ``http://docs.python.test/3/library/re.html``,
    ``/usr/share/doc/python3-doc/html/glossary.html`` -> ``http://docs.python.test/3/glossary.html``);
    one to the root of a public host goes to the local host's root, which redirects to the start
    page (``https://www.sphinx-doc.org/`` -> ``http://www.sphinx-doc.test/``). Other pages of a
    public host (``https://docs.python.org/2/``) are other documents and stay as they are.
    """

    _END_OF_VALUE = r"""(?=[#?"'\s>])"""

    def __init__(self, sites: Iterable[Site]):
        self._bases: dict[str, str] = {}
        self._roots: dict[str, str] = {}
        for site in sites:
            for prefix in self._base_prefixes(site):
                self._bases.setdefault(prefix.lower(), site.base_url)
            for root in self._host_roots(site):
                self._roots.setdefault(root.lower(), f"http://{site.host}/")
        self._roots = {root: url for root, url in self._roots.items() if root not in self._bases}
        alternatives = [
            rf"(?P<base>{self._alternation(self._bases)})(?:/|{self._END_OF_VALUE})",
            rf"(?P<root>{self._alternation(self._roots)})/?{self._END_OF_VALUE}",
        ]
        self._pattern = re.compile(
            rf"""(?P<attribute>href\s*=\s*["']?)(?:{"|".join(alternatives)})""".encode(), re.IGNORECASE
        )

    @staticmethod
    def _alternation(prefixes: Iterable[str]) -> str:
        """A regex alternative of ``prefixes``, longest first; one that never matches when empty."""
        return "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True)) or "(?!)"

    @staticmethod
    def _base_prefixes(site: Site) -> Iterable[str]:
        """Every href start (without trailing slash) that stands for the site's mount point."""
        for public in site.public_urls:
            yield "http://" + public.rstrip("/")
            yield "https://" + public.rstrip("/")
        for directory in (site.root, *site.disk_aliases):
            yield "file://" + directory.rstrip("/")
            yield directory.rstrip("/")

    @staticmethod
    def _host_roots(site: Site) -> Iterable[str]:
        for public in site.public_urls:
            host = public.split("/", 1)[0]
            yield "http://" + host
            yield "https://" + host

    def rewrite(self, html: bytes) -> bytes:
        return self._pattern.sub(self._replace, html)

    def _replace(self, match: re.Match) -> bytes:
        if match.group("base") is not None:
            target = self._bases[match.group("base").decode("ascii", "replace").lower()]
        else:
            target = self._roots[match.group("root").decode("ascii", "replace").lower()]
        return match.group("attribute") + target.encode("ascii")


class Rewriter(Protocol):
    def rewrite(self, html: bytes) -> bytes: ...


class PrefixRewriter:
    """Rewrites quoted href values by an explicit table of prefixes, as the big web's spec does.

    ``aliases`` maps an href prefix to the local URL it stands for; the longest matching
    prefix wins and the rest of the value is kept (``https://docs.scipy.org/doc/scipy/x.html``
    -> ``http://docs.scipy.test/doc/scipy-1.10.1/x.html``). ``roots`` maps a public site's
    bare address (``https://cmake.org``, with or without the final slash, nothing after it)
    to a local host's root. Values starting with one of ``keep`` stay as they are (parts of
    a mirrored host that are not in the package). Matching is case-sensitive and only
    quoted values count, unlike :class:`LinkRewriter`'s.
    """

    _HREF = re.compile(rb"""(?P<attribute>\bhref\s*=\s*)(?P<quote>["'])(?P<value>.*?)(?P=quote)""", re.I | re.S)

    def __init__(
        self, aliases: Iterable[tuple[str, str]], roots: Mapping[str, str] | None = None, keep: Sequence[str] = ()
    ):
        # sorted() is stable: of two aliases of one length, the first given wins, as in the table
        pairs = sorted(aliases, key=lambda pair: -len(pair[0]))
        self._local: dict[str, str] = {}
        for alias, local in pairs:
            self._local.setdefault(alias, local)
        alternation = "|".join(re.escape(alias) for alias, _ in pairs) or "(?!)"
        self._alias = re.compile(f"(?:{alternation})")
        self._roots = {address.rstrip("/"): f"http://{host}/" for address, host in (roots or {}).items()}
        self._keep = tuple(keep)

    def rewrite(self, html: bytes) -> bytes:
        return self._HREF.sub(self._replace, html)

    def local_url(self, value: str) -> str | None:
        """The local URL an href value stands for, or None if it stays as it is."""
        root = self._roots.get(value.rstrip("/"))
        if root is not None:
            return root
        if self._keep and value.startswith(self._keep):
            return None
        match = self._alias.match(value)
        return self._local[match.group()] + value[match.end() :] if match else None

    def _replace(self, match: re.Match) -> bytes:
        local = self.local_url(match.group("value").decode("latin-1"))
        if local is None:
            return match.group(0)
        quote_mark = match.group("quote")
        return match.group("attribute") + quote_mark + local.encode("latin-1") + quote_mark


def _hub_text(text: str) -> str:
    """``text`` for the hub's markup: ``<`` and ``>`` escaped, ``&`` only where it could start a
    character reference (``"Java SE 17 & JDK 17"`` stays as it reads, as in the spec's hub)."""
    return re.sub(r"&(?=[A-Za-z0-9#])", "&amp;", text).replace("<", "&lt;").replace(">", "&gt;")


def hub_page(sites: Sequence[Site]) -> bytes:
    """The hub's start page: a title, an <h1> of the same and one list item per site.

    Byte for byte the spec's reference server's hub (``../shared/bigweb/sites.py``).
    """
    items = "\n".join(
        f'<li><a href="{escape(site.start_url)}">{_hub_text(site.title)}</a> ({_hub_text(site.host)})</li>'
        for site in sites
    )
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{HUB_TITLE}</title></head>\n'
        f"<body><h1>{HUB_TITLE}</h1>\n<ul>\n{items}\n</ul>\n</body></html>\n"
    ).encode()


def robots_txt(site: Site) -> bytes:
    rules = "".join(f"Disallow: {path}\n" for path in site.disallow) or "Disallow:\n"
    return f"User-agent: *\n{rules}".encode("ascii")


def make_response(status: int, body: bytes, content_type: str, **headers: str) -> WebResponse:
    return WebResponse(status, {"Content-Type": content_type, "Content-Length": str(len(body)), **headers}, body)


def not_found(url: str) -> WebResponse:
    return make_response(404, f"404 Not Found: {url}\n".encode("utf-8", "replace"), "text/plain; charset=utf-8")


def not_served(url: str) -> WebResponse:
    return make_response(
        501,
        f"501 Not Implemented: https is not served by the offline web: {url}\n".encode("utf-8", "replace"),
        "text/plain; charset=utf-8",
    )


def unavailable(url: str) -> WebResponse:
    return make_response(503, b"503 Service Unavailable\n", "text/plain; charset=utf-8", **{"Retry-After": RETRY_AFTER})


def redirect(location: str) -> WebResponse:
    body = f'<a href="{escape(location)}">Moved Permanently</a>\n'.encode()
    return make_response(301, body, "text/html; charset=utf-8", Location=location)


def content_type(path: str) -> str:
    if path.endswith(HTML_SUFFIXES):
        return "text/html"
    kind, encoding = mimetypes.guess_type(path, strict=False)
    if encoding == "gzip":
        return "application/gzip"
    if encoding is not None:
        return "application/octet-stream"
    return kind or "application/octet-stream"


@dataclass(frozen=True)
class PathRules:
    """Corners of URL paths that the two webs' specs settle differently (defaults: the small web's).

    - ``redirect_bare_directories``: a directory without ``index.html`` answers 301 to it
      anyway (the small web), or 404 (the big web; then a site's ``html_suffix_redirect``
      may apply);
    - ``serve_files_with_slash``: ``page.html/`` answers 404 (the small web) or
      ``page.html``'s page, its path normalised like a file name (the big web);
    - ``hub_index_html``: the hub answers ``/index.html`` as ``/`` (the big web) or 404.
    """

    redirect_bare_directories: bool = True
    serve_files_with_slash: bool = False
    hub_index_html: bool = False


#: The big web's path rules (``../shared/bigweb/sites.py``).
BIG_WEB_PATHS = PathRules(redirect_bare_directories=False, serve_files_with_slash=True, hub_index_html=True)


class OfflineWeb:
    """The offline web of the benchmark: a hub plus one virtual host per site.

    ``get(url)`` is what the server answers to a GET of ``url``, after waiting
    ``delay(url)`` seconds. The defaults are the small web's rules
    (``../shared/webbench/README.md``); ``benchmarks.webbench.bigweb`` configures the
    big web with the others:

    - ``rewriter``: how hrefs are pointed at local sites (default: a ``LinkRewriter``
      of the sites' public addresses and folders);
    - ``conditions``: slow and unreliable hosts (default: none);
    - ``paths``: the :class:`PathRules` of corner cases (default: the small web's).
    """

    def __init__(
        self,
        sites: Sequence[Site] = DEBIAN_SITES,
        *,
        hub: bool = True,
        rewriter: Rewriter | None = None,
        conditions: HostConditions | None = None,
        paths: PathRules = PathRules(),
    ):
        sites = tuple(sites)
        if not sites:
            raise ValueError("offline web: no sites given")
        missing = [site for site in sites if not site.is_installed()]
        if missing:
            packages = [site.package for site in missing if site.package]
            if len(packages) == len(missing):
                raise MissingPackagesError(packages)
            raise FileNotFoundError(
                "offline web: start page missing: " + ", ".join(os.path.join(site.root, site.start) for site in missing)
            )
        hosts = [site.host for site in sites] + ([HUB_HOST] if hub else [])
        duplicates = sorted({host for host in hosts if hosts.count(host) > 1})
        if duplicates:
            raise ValueError(f"offline web: host served twice: {', '.join(duplicates)}")
        self.sites = sites
        self._by_host = {site.host: site for site in sites}
        self._hub = Site(HUB_HOST, "/", "", "", HUB_TITLE) if hub else None
        self._hub_page = make_response(200, hub_page(sites), "text/html; charset=utf-8") if hub else None
        self._rewriter = rewriter if rewriter is not None else LinkRewriter(sites)
        self.conditions = conditions or HostConditions()
        unknown = sorted((set(self.conditions.slow) | set(self.conditions.unreliable)) - set(self._by_host))
        if unknown:
            raise ValueError(f"offline web: slow or unreliable hosts that are not served: {', '.join(unknown)}")
        self.paths = paths
        self._files = _ResponseCache(MAX_CACHED_BYTES)

    @classmethod
    def from_folder(
        cls,
        path: str | os.PathLike,
        host: str = "site.test",
        *,
        title: str | None = None,
        public_urls: Sequence[str] = (),
        disallow: Sequence[str] = (),
        hub: bool = True,
    ) -> OfflineWeb:
        """Serve any folder of HTML files as one site at ``http://host/`` (plus the hub)."""
        given = Path(path).expanduser().absolute()
        folder = given.resolve()
        if not folder.is_dir():
            raise NotADirectoryError(f"offline web: not a folder: {path}")
        host = host.lower()
        if not re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", host):
            raise ValueError(f"offline web: not a host name: {host!r}")
        site = Site(
            host=host,
            mount="/",
            root=str(folder),
            start=_start_page(folder),
            title=title or folder.name,
            public_urls=tuple(_without_scheme(url) for url in public_urls),
            disk_aliases=(str(given),) if given != folder else (),
            disallow=tuple(disallow),
        )
        return cls([site], hub=hub)

    @staticmethod
    def available_sites(sites: Sequence[Site] = DEBIAN_SITES) -> list[Site]:
        """The sites of ``sites`` whose files are installed on this machine."""
        return [site for site in sites if site.is_installed()]

    @staticmethod
    def missing_packages(sites: Sequence[Site] = DEBIAN_SITES) -> list[str]:
        """The Debian packages of ``sites`` that are not installed on this machine."""
        return [site.package for site in sites if not site.is_installed() and site.package]

    def broken_symlinks(self) -> list[str]:
        """Symbolic links under the sites' folders whose target is missing.

        Debian's documentation packages link their JavaScript and CSS to other packages
        (libjs-jquery, libjs-sphinxdoc, ...); a missing one breaks only those files.
        """
        broken = []
        for site in self.sites:
            for folder, _, names in os.walk(site.root):
                broken += [
                    path
                    for path in (os.path.join(folder, name) for name in names)
                    if os.path.islink(path) and not os.path.exists(path)
                ]
        return broken

    @property
    def hub_url(self) -> str | None:
        return f"http://{HUB_HOST}/" if self._hub else None

    @property
    def start_urls(self) -> list[str]:
        return [site.start_url for site in self.sites]

    def site_of(self, url: str) -> Site | None:
        """The site serving ``url`` (the hub included), or None."""
        host = (urlsplit(url).hostname or "").lower()
        if self._hub and host == HUB_HOST:
            return self._hub
        return self._by_host.get(host)

    def delay(self, url: str) -> float:
        """Seconds the server waits before answering ``url`` (0 except on slow hosts)."""
        if not self.conditions.slow:
            return 0.0
        parts = urlsplit(url)
        return self.conditions.delay((parts.hostname or "").lower(), parts.path or "/")

    def get(self, url: str) -> WebResponse:
        """What the offline web's server answers to ``GET url`` (without waiting its delay)."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "https":
            return not_served(url)
        if scheme != "http":
            raise ValueError(f"offline web: not an http(s) URL: {url!r}")
        site = self.site_of(url)
        if site is None:
            return not_found(url)
        if self.conditions.unreliable and self._unavailable(site, parts.path or "/"):
            return unavailable(url)
        origin = f"http://{parts.netloc}"
        path = unquote(parts.path) or "/"
        if path == "/robots.txt":
            return make_response(200, robots_txt(site), "text/plain; charset=utf-8")
        if site is self._hub:
            return (
                self._hub_page
                if path == "/" or (path == "/index.html" and self.paths.hub_index_html)
                else not_found(url)
            )
        if path in ("/", site.mount, site.mount.rstrip("/")):
            return redirect(origin + site.mount + site.start)
        if not path.startswith(site.mount):
            return not_found(url)
        return self._serve_file(site, path[len(site.mount) :], origin, url)

    def _unavailable(self, site: Site, path: str) -> bool:
        """Whether an unreliable host answers 503 to ``path`` (as requested, not yet unquoted)."""
        always_up = ("/", site.mount, site.mount.rstrip("/"), site.mount + site.start)
        return self.conditions.unavailable(site.host, path, always_up)

    def _serve_file(self, site: Site, relative: str, origin: str, url: str) -> WebResponse:
        asks_directory = relative.endswith("/") and not self.paths.serve_files_with_slash
        relative = _safe_relative(relative)
        if relative is None:
            return not_found(url)
        filename = os.path.join(site.root, relative)
        cached = None if asks_directory else self._files.get(filename)
        if cached is not None:
            return cached
        try:
            if os.path.isdir(filename) and (
                self.paths.redirect_bare_directories or os.path.isfile(os.path.join(filename, "index.html"))
            ):
                return redirect(origin + quote(site.mount + (relative + "/" if relative else "") + "index.html"))
            if asks_directory:  # "page.html/" names no directory
                return not_found(url)
            with open(filename, "rb") as file:
                body = file.read()
        except (OSError, ValueError):  # missing, not a directory, NUL byte in the name
            if site.html_suffix_redirect and relative and os.path.isfile(filename + ".html"):
                return redirect(origin + quote(site.mount + relative) + ".html")
            return not_found(url)
        kind = content_type(filename)
        if kind == "text/html":
            body = self._rewriter.rewrite(body)
        response = make_response(200, body, kind)
        if len(body) <= MAX_CACHED_FILE_SIZE:
            self._files.put(filename, response)
        return response


class _ResponseCache:
    """Answers of files by file name, at most ``max_bytes`` of bodies, least recently used dropped first.

    The server answers from several threads: every access holds the lock.
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._responses: OrderedDict[str, WebResponse] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, filename: str) -> WebResponse | None:
        with self._lock:
            response = self._responses.get(filename)
            if response is not None:
                self._responses.move_to_end(filename)
            return response

    def put(self, filename: str, response: WebResponse) -> None:
        with self._lock:
            old = self._responses.pop(filename, None)
            if old is not None:
                self._bytes -= len(old.body)
            self._responses[filename] = response
            self._bytes += len(response.body)
            while self._bytes > self.max_bytes and len(self._responses) > 1:
                _, dropped = self._responses.popitem(last=False)
                self._bytes -= len(dropped.body)


def _safe_relative(relative: str) -> str | None:
    """``relative`` without dot segments or trailing slash (it cannot climb out of the
    site's folder), or None if it holds a character no file name of a site has."""
    if "\\" in relative or "\0" in relative:
        return None
    normal = posixpath.normpath("/" + relative).lstrip("/")
    if normal == ".":
        return ""
    return normal


def _without_scheme(url: str) -> str:
    """``"https://example.org/docs/"`` -> ``"example.org/docs/"``."""
    return re.sub(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "", url)


def _start_page(folder: Path) -> str:
    if (folder / "index.html").is_file():
        return "index.html"
    pages = sorted(
        (len(page.relative_to(folder).parts), page.relative_to(folder).as_posix())
        for suffix in HTML_SUFFIXES
        for page in folder.rglob("*" + suffix)
        if page.is_file()
    )
    if not pages:
        raise FileNotFoundError(f"offline web: no HTML files in folder: {folder}")
    return pages[0][1]
