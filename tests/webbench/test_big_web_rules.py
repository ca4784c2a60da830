"""The big web's rules on a generated folder: prefix rewriting, slow and unreliable hosts, paths.

No Debian package needed; tests/webbench/test_big_web.py checks the real big web against the spec.
"""

import http.client
import time

import pytest

from benchmarks.webbench.conditions import HostConditions, canonical_path
from benchmarks.webbench.server import serve
from benchmarks.webbench.web import BIG_WEB_PATHS, OfflineWeb, PrefixRewriter, Site


def test_prefix_rewriter_longest_alias_roots_and_kept_prefixes():
    rewriter = PrefixRewriter(
        [
            ("https://a.org/docs/", "http://a.test/d/"),
            ("https://a.org/docs/v2/", "http://a.test/v2/"),
            ("/usr/share/doc/a/", "http://a.test/d/"),
        ],
        roots={"https://a.org": "a.test"},
        keep=("https://a.org/docs/src/",),
    )
    html = (
        b"<a href=\"https://a.org/docs/x.html\">1</a> <a href='https://a.org/docs/v2/y.html#s'>2</a> "
        b'<a href="https://a.org/">3</a> <a href="https://a.org/docs/src/z.c">4</a> '
        b'<a href=https://a.org/docs/unquoted.html>5</a> <a href="/usr/share/doc/a/p.html">6</a> '
        b'<a href="HTTPS://A.ORG/docs/case.html">7</a> <a href="https://a.org/other">8</a>'
    )
    assert rewriter.rewrite(html) == (
        b"<a href=\"http://a.test/d/x.html\">1</a> <a href='http://a.test/v2/y.html#s'>2</a> "
        b'<a href="http://a.test/">3</a> <a href="https://a.org/docs/src/z.c">4</a> '
        b'<a href=https://a.org/docs/unquoted.html>5</a> <a href="http://a.test/d/p.html">6</a> '
        b'<a href="HTTPS://A.ORG/docs/case.html">7</a> <a href="https://a.org/other">8</a>'
    )


def test_delays_are_fixed_per_url_log_normal_around_the_median_and_clipped():
    conditions = HostConditions(slow={"slow.test": 2.0})
    delays = [conditions.delay("slow.test", f"/page{i}.html") for i in range(2000)]
    assert delays == [conditions.delay("slow.test", f"/page{i}.html") for i in range(2000)]
    assert all(0.2 <= d <= 10.0 for d in delays)
    assert 1.8 < sorted(delays)[1000] < 2.2
    assert conditions.delay("slow.test", "/a~b.html") == conditions.delay("slow.test", "/a%7Eb.html")
    assert conditions.delay("other.test", "/page1.html") == 0.0
    assert canonical_path("/a b/%7E") == "/a%20b/~"


def test_unreliable_hosts_fail_on_a_fixed_share_of_urls_but_never_on_robots_txt():
    conditions = HostConditions(unreliable={"flaky.test": 0.3})
    down = [conditions.unavailable("flaky.test", f"/p{i}.html") for i in range(2000)]
    assert 0.26 < sum(down) / len(down) < 0.34
    assert not conditions.unavailable("flaky.test", "/robots.txt")
    first_down = next(f"/p{i}.html" for i, d in enumerate(down) if d)
    assert not conditions.unavailable("flaky.test", first_down, always_up=(first_down,))
    with pytest.raises(ValueError, match="share"):
        HostConditions(unreliable={"flaky.test": 1.5})


@pytest.fixture
def flaky_slow_web(sample_folder):
    """The sample folder served as an unreliable host, a slow one and a plain one, with the big web's path rules."""
    (sample_folder / "bare").mkdir()
    (sample_folder / "bare" / "x.html").write_text("<title>x</title>")
    (sample_folder / "bare.html").write_text("<title>bare</title>")
    sites = [
        Site("flaky.test", "/docs/", str(sample_folder), "index.html", "Flaky"),
        Site("slow.test", "/", str(sample_folder), "index.html", "Slow", html_suffix_redirect=True),
        Site("plain.test", "/", str(sample_folder), "index.html", "Plain"),
    ]
    conditions = HostConditions(slow={"slow.test": 0.3}, unreliable={"flaky.test": 0.5})
    return OfflineWeb(sites, rewriter=PrefixRewriter([]), conditions=conditions, paths=BIG_WEB_PATHS)


def test_unreliable_host_answers_503_with_retry_after_except_its_start_and_robots(flaky_slow_web):
    web = flaky_slow_web
    for url in (
        "http://flaky.test/robots.txt",
        "http://flaky.test/",
        "http://flaky.test/docs/",
        "http://flaky.test/docs",
        "http://flaky.test/docs/index.html",
    ):
        assert web.get(url).status in (200, 301), url
    answers = [web.get(f"http://flaky.test/docs/missing{i}.html") for i in range(40)]
    failed = [a for a in answers if a.status == 503]
    assert failed and len(failed) < 40 and {a.status for a in answers} == {503, 404}
    assert failed[0].headers["Retry-After"] == "3600"


def test_big_web_path_rules(flaky_slow_web):
    web = flaky_slow_web
    assert web.get("http://plain.test/sub").location == "http://plain.test/sub/index.html"
    assert web.get("http://plain.test/bare/").status == 404  # a directory without index.html
    assert web.get("http://plain.test/a").status == 404
    assert web.get("http://plain.test/a.html/").body == web.get("http://plain.test/a.html").body
    # a site with html_suffix_redirect: extension-less names (directories too) go to NAME.html
    assert web.get("http://slow.test/a").location == "http://slow.test/a.html"
    assert web.get("http://slow.test/bare/").location == "http://slow.test/bare.html"
    assert web.get("http://slow.test/sub").location == "http://slow.test/sub/index.html"
    assert web.get("http://hub.test/index.html").body == web.get("http://hub.test/").body


def test_server_waits_a_slow_hosts_delay_before_answering(flaky_slow_web):
    server, port = serve(flaky_slow_web)
    try:
        url = "http://slow.test/a.html"
        delay = flaky_slow_web.delay(url)
        assert delay >= 0.2
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        began = time.perf_counter()
        connection.request("GET", url)
        response = connection.getresponse()
        response.read()
        elapsed = time.perf_counter() - began
        connection.close()
    finally:
        server.close()
    assert response.status == 200
    assert delay <= elapsed < delay + 2.0
