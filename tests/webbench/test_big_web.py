"""The project's big web answers like the spec's reference server, a few URLs of each behaviour.

The reference (``../shared/bigweb/sites.py``) is imported, not started: its routing,
rewriting, ``latency()`` and ``unavailable()`` give the answer expected for each URL,
without sockets or waiting. ``python -m benchmarks.webbench.compare --web big`` makes the
same check through both servers on a larger sample. Needs the big web's Debian packages
(``../shared/bigweb/install-big.sh``) and skips without them or without the spec's folder.
"""

import hashlib
import importlib.util
from urllib.parse import urlsplit

import pytest

from benchmarks.harness.cli import labels_from_file
from benchmarks.harness.topics import Labeler, load_topics
from benchmarks.webbench.bigweb import big_web, missing_packages
from benchmarks.webbench.webs import spec_folder

SPEC = spec_folder("big")
MISSING = missing_packages()
pytestmark = [
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"big web's Debian packages not installed ({' '.join(MISSING[:5])}{' ...' if len(MISSING) > 5 else ''}): "
        "see ../shared/bigweb/install-big.sh",
    ),
    pytest.mark.skipif(SPEC is None or not (SPEC / "sites.py").is_file(), reason="../shared/bigweb/sites.py not found"),
]

# A few URLs of each behaviour (the unreliable hosts' 503s and slow hosts' delays are picked by hash).
URLS = {
    "hub": ["http://hub.test/", "http://hub.test/index.html", "http://hub.test/robots.txt", "http://hub.test/x.html"],
    "robots.txt": [
        "http://doc.rust-lang.test/robots.txt",
        "http://www.kernel.test/robots.txt",
        "http://docs.oracle.test/robots.txt",
        "http://lxml.test/robots.txt",
    ],
    "roots": [
        "http://doc.qt.test/",
        "http://doc.qt.test/qt-5",
        "http://httpd.apache.test/docs/2.4/",
        "http://www.debian.test/",
        "http://developer-old.gnome.test/",
    ],
    "pages": [
        "http://www.psycopg.test/docs/usage.html",
        "http://docs.celeryq.test/en/stable/index.html",
        "http://www.boost.test/doc/libs/1_81_0/doc/html/xpressive.html",
        "http://docs.sqlalchemy.test/en/14/orm/session_transaction.html",
        "http://docs.peewee-orm.test/en/latest/peewee/database.html",
        "http://debian-handbook.test/browse/en-US/stable/index.html",
        "http://docs.python.test/3/library/re.html",
    ],
    "slow hosts": [
        "http://en.cppreference.test/w/cpp/regex.html",
        "http://en.cppreference.test/w/cpp/regex",
        "http://docs.oracle.test/en/java/javase/17/docs/api/index.html",
        "http://www.erlang.test/docs/25/doc/index.html",
        "http://www.erlang.test/docs/25/no-such.html",
    ],
    "unreliable hosts": [
        "http://doc.qt.test/qt-5/qtcore/qregularexpression.html",
        "http://doc.qt.test/qt-5/qtdoc/index.html",
        "http://docs.scipy.test/doc/scipy-1.10.1/",
        *[f"http://docs.scipy.test/doc/scipy-1.10.1/missing-{i}.html" for i in range(8)],
    ],
    "redirects and 404s": [
        "http://docutils.sourceforge.test/docs/user/",
        "http://docutils.sourceforge.test/docs/user",
        "http://www.sqlite.test/lang.html/",
        "http://www.gnuplot.test/elsewhere/",
        "http://pandas.pydata.test/pandas-docs/version/1.5.3/whatsnew/index.html",
        "http://nowhere.test/",
    ],
}


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("bigweb_reference_sites", SPEC / "sites.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.use("big")
    return module


@pytest.fixture(scope="module")
def web():
    return big_web()


def reference_answer(sites, url):
    """(status, body SHA-256 / Location / Retry-After, delay) as the reference server answers ``url``."""
    parts = urlsplit(url)
    host, path = parts.hostname or "", parts.path or "/"
    delay = sites.latency(host, path)
    if sites.unavailable(host, path):
        return 503, "3600", delay
    location = sites.locate(host, path)
    if location[0] == "redirect":
        return 301, location[1], delay
    if location[0] == "missing":
        return 404, "", delay
    return 200, hashlib.sha256(sites.body_of(location)).hexdigest(), delay


def our_answer(web, url):
    response = web.get(url)
    content = {
        200: hashlib.sha256(response.body).hexdigest(),
        301: response.location,
        503: response.headers.get("Retry-After"),
    }.get(response.status, "")
    return response.status, content, web.delay(url)


@pytest.mark.parametrize("behaviour", list(URLS))
def test_answers_like_the_reference(reference, web, behaviour):
    for url in URLS[behaviour]:
        assert our_answer(web, url) == reference_answer(reference, url), url


def test_sample_holds_every_behaviour(reference, web):
    answers = [our_answer(web, url) for urls in URLS.values() for url in urls]
    assert {status for status, _, _ in answers} == {200, 301, 404, 503}
    assert any(delay > 0 for _, _, delay in answers)


def test_hosts_and_behaviours_are_the_specs(reference, web):
    assert [(s.host, s.mount, s.root, s.start, s.title) for s in web.sites] == [
        (s.host, s.prefix, s.root, s.index, s.title) for s in reference.SITES
    ]
    assert dict(web.conditions.slow) == reference.SLOW_HOSTS
    assert dict(web.conditions.unreliable) == reference.FLAKY_HOSTS
    for site in web.sites:
        assert web.get(f"http://{site.host}/robots.txt").body.decode() == reference.robots_txt(site.host)


def test_dev_labels_are_served_pages_matching_their_rules(web):
    topics = load_topics(SPEC / "topics-dev.json", ["db-transactions", "logging"])
    labels = labels_from_file(Labeler(web), topics, None, str(SPEC / "topics-dev.json"))
    assert {topic: len(urls) for topic, urls in labels.items()} == {"db-transactions": 45, "logging": 73}
