"""The big web: the small web's ten sites plus 43 more Debian documentation packages.

``../shared/bigweb/README.md`` specifies it (104k HTML pages on 53 hosts, three slow hosts,
two unreliable ones, robots.txt rules on five) and ships a reference server,
``sites.py``; this module is that web's configuration of the project's own server,
as data: the host table, the href aliases that make links between sites work, the
robots.txt rules and the slow and unreliable hosts. ``big_web()`` builds it::

    python -m benchmarks.webbench.server --web big
    python -m benchmarks.webbench.compare --web big     # agrees with sites.py?

Its rules differ from the small web's where the spec's server has them otherwise: hrefs
are rewritten by an explicit prefix table (``PrefixRewriter``), and in ``BIG_WEB_PATHS``
a directory without ``index.html`` is a 404 (or, on cppreference, a redirect to
``NAME.html``), ``page.html/`` is ``page.html`` and the hub also answers ``/index.html``.
"""

from __future__ import annotations

from benchmarks.webbench.conditions import HostConditions
from benchmarks.webbench.web import BIG_WEB_PATHS, DEBIAN_SITES, OfflineWeb, PrefixRewriter, Site

#: Four packages are unpacked here (``dpkg-deb -x``) instead of installed: installing them upgrades others.
UNPACKED = "/opt/localweb"
DOC = "/usr/share/doc"


def _disk(folder: str) -> tuple[str, str]:
    """Debian's on-disk copy of a doc set as links spell it: a path and a ``file://`` URL."""
    return (folder + "/", "file://" + folder + "/")


# An alias is an href prefix (rewritten to the site's base URL) or a pair (prefix, path under
# the base URL) for a public path that lives elsewhere locally.
Alias = str | tuple[str, str]

#: The aliases of the small web's sites in the big web (the reference's small web plus its extras).
# The site tables keep a site to a few lines, its fields grouped: ruff would put one field a line.
# fmt: off
SMALL_SITE_ALIASES: dict[str, tuple[Alias, ...]] = {
    "docs.python.test": (
        "https://docs.python.org/3/", "http://docs.python.org/3/",
        *_disk(f"{DOC}/python3-doc/html"), *_disk(f"{DOC}/python3.11/html"),
        ("http://docs.python.org/library/", "library/"), ("https://docs.python.org/library/", "library/"),
        ("https://docs.python.org/dev/library/", "library/"), ("https://docs.python.org/dev/reference/", "reference/"),
        "https://docs.python.org/3.11/",
    ),
    "www.postgresql.test": (
        "https://www.postgresql.org/docs/current/", "https://www.postgresql.org/docs/15/",
        "http://www.postgresql.org/docs/current/", "http://www.postgresql.org/docs/15/",
    ),
    "docs.djangoproject.test": ("https://docs.djangoproject.com/en/3.2/", "https://docs.djangoproject.com/en/stable/"),
    "git-scm.test": (),
    "www.sphinx-doc.test": (
        "https://www.sphinx-doc.org/en/master/", f"{DOC}/sphinx-doc/html/", "https://www.sphinx-doc.org/en/stable/",
    ),
    "docs.scrapy.test": ("https://docs.scrapy.org/en/latest/",),
    "scikit-learn.test": ("https://scikit-learn.org/stable/", "http://scikit-learn.org/stable/"),
    "flask.palletsprojects.test": ("https://flask.palletsprojects.com/en/2.2.x/",),
    "requests.readthedocs.test": ("https://requests.readthedocs.io/en/latest/", f"{DOC}/python-requests-doc/html/"),
    "docutils.sourceforge.test": ("https://docutils.sourceforge.io/", "http://docutils.sourceforge.io/"),
}

#: The 43 further sites, in the hub's order: (host, mount, folder, package, title, start, aliases).
EXTRA_SITES: tuple[tuple[str, str, str, str, str, str, tuple[Alias, ...]], ...] = (
    ("docs.scipy.test", "/doc/scipy-1.10.1/", f"{DOC}/python-scipy-doc/html", "python-scipy-doc",
     "SciPy 1.10 documentation", "index.html",
     ("https://docs.scipy.org/doc/scipy/", "https://docs.scipy.org/doc/scipy-1.10.1/",
      "http://docs.scipy.org/doc/scipy/", *_disk(f"{DOC}/python-scipy-doc/html"))),
    ("pandas.pydata.test", "/pandas-docs/version/1.5.3/", f"{DOC}/python-pandas-doc/html", "python-pandas-doc",
     "pandas 1.5 documentation", "index.html",
     ("https://pandas.pydata.org/pandas-docs/stable/", "http://pandas.pydata.org/pandas-docs/stable/",
      "https://pandas.pydata.org/pandas-docs/version/1.5.3/", "https://pandas.pydata.org/docs/",
      *_disk(f"{DOC}/python-pandas-doc/html"))),
    ("en.cppreference.test", "/w/", "/usr/share/cppreference/doc/html/en", "cppreference-doc-en-html",
     "C and C++ reference (cppreference.com)", "Main_Page.html",
     ("http://en.cppreference.com/w/", "https://en.cppreference.com/w/")),
    ("doc.rust-lang.test", "/stable/", f"{DOC}/rust-doc/html", "rust-doc", "Rust 1.63 documentation", "index.html",
     ("https://doc.rust-lang.org/stable/", "https://doc.rust-lang.org/1.63.0/", *_disk(f"{DOC}/rust-doc/html"))),
    ("docs.oracle.test", "/en/java/javase/17/docs/", f"{UNPACKED}/openjdk-17-doc{DOC}/openjdk-17-jre-headless",
     "openjdk-17-doc", "Java SE 17 & JDK 17 API specification", "api/index.html",
     ("https://docs.oracle.com/en/java/javase/17/docs/", *_disk(f"{DOC}/openjdk-17-jre-headless"))),
    ("www.kernel.test", "/doc/html/v6.1/", f"{DOC}/linux-doc-6.1/html", "linux-doc-6.1",
     "The Linux Kernel 6.1 documentation", "index.html",
     ("https://www.kernel.org/doc/html/v6.1/", "https://www.kernel.org/doc/html/latest/",
      *_disk(f"{DOC}/linux-doc-6.1/html"))),
    ("debian-handbook.test", "/browse/en-US/stable/", f"{DOC}/debian-handbook/html/en-US", "debian-handbook",
     "The Debian Administrator's Handbook", "index.html",
     ("https://debian-handbook.info/browse/en-US/stable/", "https://debian-handbook.info/browse/stable/")),
    ("www.debian.test", "/doc/manuals/debian-reference/", "/usr/share/debian-reference", "debian-reference-en",
     "Debian Reference", "index.en.html", ("https://www.debian.org/doc/manuals/debian-reference/",)),
    ("docs.sqlalchemy.test", "/en/14/", f"{DOC}/python-sqlalchemy-doc/html", "python-sqlalchemy-doc",
     "SQLAlchemy 1.4 documentation", "index.html",
     ("https://docs.sqlalchemy.org/en/14/", *_disk(f"{DOC}/python-sqlalchemy-doc/html"))),
    ("www.sqlite.test", "/", f"{DOC}/sqlite3", "sqlite3-doc", "SQLite documentation", "index.html",
     ("https://www.sqlite.org/", "https://sqlite.org/", "http://www.sqlite.org/", "http://sqlite.org/")),
    ("httpd.apache.test", "/docs/2.4/", f"{DOC}/apache2-doc/manual", "apache2-doc",
     "Apache HTTP Server 2.4 documentation", "en/index.html",
     (("https://httpd.apache.org/docs/2.4/", "en/"), ("http://httpd.apache.org/docs/2.4/", "en/"),
      ("https://httpd.apache.org/docs/current/", "en/"), ("http://httpd.apache.org/docs/current/", "en/"))),
    ("docs.octave.test", "/v7.3.0/", f"{DOC}/octave/octave.html", "octave-doc", "GNU Octave 7.3 documentation",
     "index.html", ("https://docs.octave.org/v7.3.0/", "https://docs.octave.org/latest/")),
    ("maxima.sourceforge.test", "/docs/manual/", f"{DOC}/maxima-doc/html", "maxima-doc", "Maxima 5.46 manual",
     "maxima_toc.html", ("https://maxima.sourceforge.io/docs/manual/",)),
    ("www.gnuplot.test", "/docs_5.4/", f"{DOC}/gnuplot/htmldocs", "gnuplot-doc", "gnuplot 5.4 documentation",
     "index.html", ()),
    ("lxml.test", "/", f"{DOC}/python-lxml/html", "python-lxml-doc", "lxml - XML and HTML with Python", "index.html",
     ("https://lxml.de/", "http://lxml.de/", *_disk(f"{DOC}/python-lxml/html"))),
    ("werkzeug.palletsprojects.test", "/en/2.2.x/", f"{DOC}/python-werkzeug-doc/html", "python-werkzeug-doc",
     "Werkzeug 2.2 documentation", "index.html",
     ("https://werkzeug.palletsprojects.com/en/2.2.x/", *_disk(f"{DOC}/python-werkzeug-doc/html"))),
    ("click.palletsprojects.test", "/en/8.1.x/", f"{DOC}/python-click-doc/html", "python-click-doc",
     "Click 8.1 documentation", "index.html",
     ("https://click.palletsprojects.com/en/8.1.x/", *_disk(f"{DOC}/python-click-doc/html"))),
    ("jinja.palletsprojects.test", "/en/3.1.x/", f"{DOC}/python-jinja2-doc/html", "python-jinja2-doc",
     "Jinja 3.1 documentation", "index.html",
     ("https://jinja.palletsprojects.com/en/3.1.x/", *_disk(f"{DOC}/python-jinja2-doc/html"))),
    ("pygments.test", "/", f"{DOC}/python-pygments-doc/html", "python-pygments-doc", "Pygments documentation",
     "index.html", ("https://pygments.org/",)),
    ("nodejs.test", "/docs/latest-v18.x/api/", f"{DOC}/nodejs/api", "nodejs-doc", "Node.js v18 documentation",
     "index.html",
     ("https://nodejs.org/docs/latest-v18.x/api/", "https://nodejs.org/api/",
      "https://nodejs.org/dist/latest-v18.x/docs/api/")),
    ("www.boost.test", "/doc/libs/1_81_0/", f"{DOC}/libboost1.81-doc", "libboost1.81-doc",
     "Boost 1.81 documentation (BoostBook part)", "doc/html/index.html",
     ("https://www.boost.org/doc/libs/1_81_0/", "http://www.boost.org/doc/libs/1_81_0/",
      "https://www.boost.org/doc/libs/release/", "http://www.boost.org/doc/libs/release/")),
    ("www.erlang.test", "/docs/25/", f"{DOC}/erlang-doc", "erlang-doc", "Erlang/OTP 25 documentation",
     "doc/index.html", ("https://www.erlang.org/docs/25/",)),
    ("cryptography.test", "/en/38.0.4/", f"{DOC}/python-cryptography-doc/html", "python-cryptography-doc",
     "cryptography 38 documentation", "index.html",
     ("https://cryptography.io/en/latest/", "https://cryptography.io/en/38.0.4/")),
    ("www.tornadoweb.test", "/en/stable/", f"{DOC}/python-tornado-doc/html", "python-tornado-doc",
     "Tornado 6.2 documentation", "index.html", ("https://www.tornadoweb.org/en/stable/",)),
    ("docs.aiohttp.test", "/en/stable/", f"{DOC}/python-aiohttp-doc/html", "python-aiohttp-doc",
     "aiohttp 3.8 documentation", "index.html",
     ("https://docs.aiohttp.org/en/stable/", "http://docs.aiohttp.org/en/stable/")),
    ("docs.sympy.test", "/latest/", f"{DOC}/python-sympy-doc/html", "python-sympy-doc", "SymPy 1.11 documentation",
     "index.html", ("https://docs.sympy.org/latest/", "https://docs.sympy.org/dev/")),
    ("www.statsmodels.test", "/stable/", f"{DOC}/python-statsmodels-doc/html", "python-statsmodels-doc",
     "statsmodels 0.13 documentation", "index.html",
     ("https://www.statsmodels.org/stable/", "https://www.statsmodels.org/devel/")),
    ("cmake.test", "/cmake/help/v3.25/", f"{DOC}/cmake-data/html", "cmake-doc", "CMake 3.25 documentation",
     "index.html", ("https://cmake.org/cmake/help/v3.25/", "https://cmake.org/cmake/help/latest/")),
    ("setuptools.pypa.test", "/en/latest/", f"{DOC}/python-setuptools-doc/html", "python-setuptools-doc",
     "setuptools documentation", "index.html", ("https://setuptools.pypa.io/en/latest/",)),
    ("docs.pytest.test", "/en/7.2.x/", f"{DOC}/python-pytest-doc/html", "python-pytest-doc",
     "pytest 7.2 documentation", "index.html",
     ("https://docs.pytest.org/en/stable/", "https://docs.pytest.org/en/latest/",
      "https://docs.pytest.org/en/7.2.x/")),
    ("docs.celeryq.test", "/en/stable/", f"{DOC}/python-celery-doc/html", "python-celery-doc",
     "Celery 5.2 documentation", "index.html",
     ("https://docs.celeryq.dev/en/stable/", "http://docs.celeryproject.org/en/master/",
      "http://docs.celeryproject.org/en/latest/", "https://docs.celeryproject.org/en/latest/")),
    ("www.psycopg.test", "/docs/", f"{DOC}/python-psycopg2-doc/html", "python-psycopg2-doc",
     "Psycopg 2.9 documentation", "index.html", ("https://www.psycopg.org/docs/", "http://initd.org/psycopg/docs/")),
    ("www.structlog.test", "/en/stable/", f"{DOC}/python-structlog-doc/html", "python-structlog-doc",
     "structlog documentation", "index.html", ("https://www.structlog.org/en/stable/",)),
    ("docs.peewee-orm.test", "/en/latest/", f"{DOC}/python-peewee-doc/html", "python-peewee-doc",
     "peewee 3.14 documentation", "index.html",
     ("http://docs.peewee-orm.com/en/latest/", "https://docs.peewee-orm.com/en/latest/")),
    ("babel.pocoo.test", "/en/latest/", f"{DOC}/python-babel-doc/html", "python-babel-doc",
     "Babel 2.10 documentation", "index.html", ("https://babel.pocoo.org/en/latest/",)),
    ("doc.qt.test", "/qt-5/", "/usr/share/qt5/doc", "qt5-doc-html", "Qt 5.15 documentation", "qtdoc/index.html", ()),
    ("unicode-org.github.test", "/icu-docs/apidoc/released/icu4c/", f"{DOC}/icu-doc/html", "icu-doc",
     "ICU4C 72 API reference", "index.html", ("https://unicode-org.github.io/icu-docs/apidoc/released/icu4c/",)),
    ("eigen.tuxfamily.test", "/dox/", f"{DOC}/libeigen3-dev/html", "libeigen3-doc", "Eigen 3.4 documentation",
     "index.html", ("http://eigen.tuxfamily.org/dox/", "https://eigen.tuxfamily.org/dox/")),
    ("gcc.gnu.test", "/onlinedocs/gcc-12.2.0/libstdc++/", f"{DOC}/gcc-12-base/libstdc++", "libstdc++-12-doc",
     "The GNU C++ Library (libstdc++ 12) manual and API", "index.html",
     ("https://gcc.gnu.org/onlinedocs/gcc-12.2.0/libstdc++/", "https://gcc.gnu.org/onlinedocs/libstdc++/",
      "http://gcc.gnu.org/onlinedocs/libstdc++/")),
    ("downloads.haskell.test", "/ghc/9.0.2/docs/html/", f"{UNPACKED}/ghc-doc{DOC}/ghc-doc/html", "ghc-doc",
     "GHC 9.0.2 user's guide and libraries", "index.html",
     ("https://downloads.haskell.org/ghc/9.0.2/docs/html/", "https://downloads.haskell.org/~ghc/9.0.2/docs/html/")),
    ("docs.dask.test", "/en/stable/", f"{UNPACKED}/python-dask-doc{DOC}/python-dask-doc/html", "python-dask-doc",
     "Dask 2022.12 documentation", "index.html",
     ("https://docs.dask.org/en/stable/", "https://docs.dask.org/en/latest/")),
    ("developer-old.gnome.test", "/", f"{UNPACKED}/libglib2.0-doc/usr/share/gtk-doc/html", "libglib2.0-doc",
     "GLib, GObject and GIO 2.74 reference manuals", "glib/index.html", ()),
    ("think-async.test", "/Asio/asio-1.22.1/doc/", f"{DOC}/libasio-dev", "libasio-doc",
     "Asio 1.22 C++ library documentation", "index.html", ()),
)

#: Links to exactly a public site's front page (``https://cmake.org/``) go to the local host's root.
ROOT_ALIASES: dict[str, str] = {
    "https://docs.python.org": "docs.python.test",
    "https://www.sphinx-doc.org": "www.sphinx-doc.test",
    "https://docs.djangoproject.com": "docs.djangoproject.test",
    "https://flask.palletsprojects.com": "flask.palletsprojects.test",
    "https://docutils.sourceforge.io": "docutils.sourceforge.test",
    "http://sphinx-doc.org": "www.sphinx-doc.test",  # "Created using Sphinx" footers
    "https://sphinx-doc.org": "www.sphinx-doc.test",
    "https://docs.scipy.org": "docs.scipy.test",
    "https://httpd.apache.org": "httpd.apache.test",
    "https://docs.sympy.org": "docs.sympy.test",
    "https://babel.pocoo.org": "babel.pocoo.test",
    "http://eigen.tuxfamily.org": "eigen.tuxfamily.test",
    "https://docs.dask.org": "docs.dask.test",
    "https://lxml.de": "lxml.test",
    "https://cmake.org": "cmake.test",
}

#: Never rewritten: parts of a mirrored host that the package does not hold (SQLite's sources, forum).
KEEP_AS_IS: tuple[str, ...] = tuple(
    f"{scheme}://{host}/{part}/"
    for scheme in ("http", "https")
    for host in ("www.sqlite.org", "sqlite.org")
    for part in ("src", "docsrc", "forum", "cgi")
)

#: robots.txt ``Disallow`` paths (every other host allows everything).
DISALLOW: dict[str, tuple[str, ...]] = {
    "docs.python.test": ("/3/whatsnew/",),
    "doc.rust-lang.test": ("/stable/src/",),
    "docs.oracle.test": ("/en/java/javase/17/docs/api/index-files/",),
    "pandas.pydata.test": ("/pandas-docs/version/1.5.3/whatsnew/",),
    "www.kernel.test": ("/doc/html/v6.1/translations/",),
}
# fmt: on

#: Slow hosts: median seconds before each answer.
SLOW_HOSTS: dict[str, float] = {"docs.oracle.test": 2.0, "en.cppreference.test": 1.5, "www.erlang.test": 3.0}
#: Unreliable hosts: share of their URLs that always answer 503.
UNRELIABLE_HOSTS: dict[str, float] = {"doc.qt.test": 0.30, "docs.scipy.test": 0.30}
#: Sites whose extension-less links (``/w/cpp/regex``) redirect to ``.html``.
HTML_SUFFIX_REDIRECT = frozenset({"en.cppreference.test"})


def _site(host: str, mount: str, root: str, package: str, title: str, start: str) -> Site:
    return Site(
        host,
        mount,
        root,
        start,
        title,
        package,
        disallow=DISALLOW.get(host, ()),
        html_suffix_redirect=host in HTML_SUFFIX_REDIRECT,
    )


def big_sites() -> tuple[Site, ...]:
    """The 53 sites in the hub's order: the small web's ten, then the 43 others."""
    small = tuple(_site(s.host, s.mount, s.root, s.package or "", s.title, s.start) for s in DEBIAN_SITES)
    extra = tuple(
        _site(host, mount, root, package, title, start) for host, mount, root, package, title, start, _ in EXTRA_SITES
    )
    return small + extra


def site_aliases() -> dict[str, tuple[Alias, ...]]:
    """Every site's href aliases, by host."""
    return {**SMALL_SITE_ALIASES, **{row[0]: row[6] for row in EXTRA_SITES}}


def big_rewriter(sites: tuple[Site, ...]) -> PrefixRewriter:
    """The big web's href rewriting: each alias to its site's base URL (plus the alias's sub-path)."""
    aliases = site_aliases()
    pairs = []
    for site in sites:
        for alias in aliases[site.host]:
            prefix, below = (alias, "") if isinstance(alias, str) else alias
            pairs.append((prefix, site.base_url + below))
    return PrefixRewriter(pairs, ROOT_ALIASES, KEEP_AS_IS)


def big_conditions() -> HostConditions:
    return HostConditions(slow=SLOW_HOSTS, unreliable=UNRELIABLE_HOSTS)


def big_web() -> OfflineWeb:
    """The big web, served by ``OfflineWeb`` (raises ``MissingPackagesError`` without its packages)."""
    sites = big_sites()
    return OfflineWeb(
        sites,
        rewriter=big_rewriter(sites),
        conditions=big_conditions(),
        paths=BIG_WEB_PATHS,
    )


def missing_packages() -> list[str]:
    """The big web's packages that are not installed (or unpacked) on this machine."""
    return OfflineWeb.missing_packages(big_sites())
