"""Crawler traps: canonical URLs and trap guards (units), and a real ``scrapy crawl``
of the trap site (adaptive_spider.demo.traps) that must finish, keep every trap
within 5% of the page budget, fetch nothing robots.txt forbids and count
duplicate content."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

import pytest

from adaptive_spider.crawl.canonical import UrlCanonicalizer
from adaptive_spider.crawl.traps import TrapGuard, calendar_family
from adaptive_spider.demo.site import QUERY
from adaptive_spider.demo.traps import TRAP_PREFIXES, TrapSite, serve, trap_of
from adaptive_spider.settings.config import AdaptiveConfig
from spiders.focused import FocusedSpider
from tests.conftest import TRAP_BUDGET as BUDGET
from tests.conftest import crawl_test, project_settings, run_crawl

TRAP_SHARE = 0.05

DEFAULTS = AdaptiveConfig.from_settings({})


# -- canonical URLs -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://a.test/page.html#section", "http://a.test/page.html"),
        ("http://a.test/p?utm_source=x&utm_campaign=y&id=3", "http://a.test/p?id=3"),
        ("http://a.test/p?id=3&SID=ab12&b=2&id=4", "http://a.test/p?id=3&b=2&id=4"),
        ("http://a.test/cart;jsessionid=AB12?x=%20y", "http://a.test/cart?x=%20y"),
        ("http://a.test/p;v=2;JSESSIONID=1", "http://a.test/p;v=2"),
        ("http://a.test/?PHPSESSID=1&fbclid=2&gclid=3", "http://a.test/"),
        ("http://a.test/search?q=session+id&page=2", "http://a.test/search?q=session+id&page=2"),
        ("mailto:someone@a.test", "mailto:someone@a.test"),
    ],
)
def test_canonical_urls(url, canonical):
    canonicalizer = UrlCanonicalizer(DEFAULTS.session_params, DEFAULTS.tracking_params)
    assert canonicalizer(url) == canonical
    # A canonical URL is its own: the relevance middleware drops a link to a URL the scheduler
    # has judged before this middleware sees it, which must not make it another URL.
    assert canonicalizer(canonical) == canonical


def test_parameter_lists_are_configurable():
    canonicalizer = UrlCanonicalizer(session_params=("token",), tracking_params=("from_*",))
    assert canonicalizer("http://a.test/p?token=1&from_mail=2&utm_source=3") == "http://a.test/p?utm_source=3"


# -- trap guard rules ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "family"),
    [
        ("http://h/calendar/2024/05/", "h/calendar/<date>?"),
        ("http://h/calendar/2024/05/07/", "h/calendar/<date>?"),
        ("http://h/events/2024-05-07.html", "h/events/<date>?"),
        ("http://h/archive/2024/may/", "h/archive/<date>?"),
        ("http://h/events?date=2024-05-01", "h/events?date"),
        ("http://h/cal?month=5&year=2024", "h/cal?month&year"),
        ("http://h/news/2024/05/07/a-story.html", None),  # a dated article, not a calendar
        ("http://h/issues/2024", None),  # a number that looks like a year
        ("http://h/item?id=2024", None),
        ("http://h/list?start=20", None),
        ("http://h/docs/3.12/library/", None),
    ],
)
def test_calendar_families(url, family):
    assert calendar_family(url) == family


def test_guard_rules_and_family_limits():
    guard = TrapGuard(
        max_path_depth=6,
        max_segment_repeats=2,
        calendar_max_pages=2,
        query_max_variants=3,
        pattern_limits={r"/tag/": 1, r"/print/": 0},
    )
    assert guard.reason_to_drop("javascript:void(0)") == "unsupported_scheme"
    assert guard.reason_to_drop("tel:+15550100") == "unsupported_scheme"
    assert guard.reason_to_drop("http://h/a/b/c/d/e/f/g") == "path_depth"
    assert guard.reason_to_drop("http://h/a/b/a/b/a/b") == "repeated_segment"
    assert guard.reason_to_drop("http://h/x/more/more/more/") == "repeated_segment"
    assert guard.reason_to_drop("http://h/x/more/more/") is None
    assert guard.reason_to_drop("http://h/scrapy/scrapy/tree/scrapy") is None  # recurs, but not back to back
    assert guard.reason_to_drop("http://h/print/x") == "url_pattern"
    assert [guard.reason_to_drop(f"http://h/tag/{t}") for t in "ab"] == [None, "url_pattern"]
    months = [guard.reason_to_drop(f"http://h/cal/2024/{m:02d}/") for m in (1, 2, 3, 1)]
    assert months == [None, None, "calendar", None]  # the URLs already admitted stay admitted
    pages = [guard.reason_to_drop(f"http://h/list?page={n}") for n in range(5)]
    assert pages == [None, None, None, "query_variants", "query_variants"]
    assert guard.reason_to_drop("http://h/list?page=1&sort=asc") is None  # another family


def test_guard_verdicts_stand_when_the_memo_forgets_them(monkeypatch):
    import adaptive_spider.crawl.traps as traps

    monkeypatch.setattr(traps, "VERDICT_MEMO_SIZE", 2)  # remembers the last two URLs only
    guard = TrapGuard(query_max_variants=2)
    urls = [f"http://h/list?page={n}" for n in range(4)]
    first = [guard.reason_to_drop(url) for url in urls]
    again = [guard.reason_to_drop(url) for url in reversed(urls)][::-1]
    assert first == again == [None, None, "query_variants", "query_variants"]
    assert guard._verdict.cache_info().currsize == 2


# -- the trap site, crawled ----------------------------------------------------------------------
def test_trap_crawl_finishes_without_a_crash(trap_crawl):
    site, url, log, items, report = trap_crawl
    assert report["finish_reason"] == "finished"  # the frontier ran dry: no trap kept it going
    assert not [name for name in report["stats"] if name.startswith("spider_exceptions")]
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    # Only the downloads that had to fail (hanging, huge, 5xx after a retry) are errors.
    failing = ("hang.html", "huge.html", "/error>", "/unavailable>")
    assert errors and all(any(page in line for page in failing) for line in errors), errors
    assert report["stats"]["downloader/response_status_count/200"] < BUDGET


def test_no_trap_takes_more_than_five_percent_of_the_budget(trap_crawl):
    site, url, log, items, report = trap_crawl
    fetched = site.fetched_paths()
    per_trap = Counter(trap_of(path) for path in fetched)
    per_trap.pop(None)
    assert set(per_trap) >= {
        "calendar",
        "query_calendar",
        "deeper_path",
        "repeating_path",
        "session_ids",
        "redirect_chain",
    }
    over = {trap: count for trap, count in per_trap.items() if count > TRAP_SHARE * BUDGET}
    assert not over, over
    assert site.honest_paths <= set(fetched)  # and the traps starved nothing


def test_robots_txt_disallowed_pages_are_never_fetched(trap_crawl):
    site, url, log, items, report = trap_crawl
    targets = [target for _, target in site.log]
    assert not [t for t in targets if t.startswith("/private/") or "print=1" in t]
    assert report["links"]["excluded_by_robots"] == 3  # /private/secret-1, -2 and ?print=1
    assert report["stats"]["adaptive/robotstxt/crawl_delay_sites"] == 1


def test_session_ids_and_tracking_parameters_name_one_page(trap_crawl):
    site, url, log, items, report = trap_crawl
    targets = [target for _, target in site.log]
    assert not [t for t in targets if any(mark in t.lower() for mark in ("sid=", "jsessionid", "utm_", "#"))]
    shop = Counter(t for t in targets if t.startswith("/shop/"))
    assert shop and all(count == 1 for count in shop.values()), shop
    assert targets.count("/astronomy/") == 1 and targets.count("/cooking/") == 1


def test_redirect_loops_and_chains_end(trap_crawl):
    site, url, log, items, report = trap_crawl
    paths = site.fetched_paths()
    assert sorted(p for p in paths if p.startswith("/loop/")) == ["/loop/a", "/loop/b"]
    chain = [p for p in paths if p.startswith("/chain/")]
    assert len(chain) == len(set(chain)) == 6  # the first request and REDIRECT_MAX_TIMES = 5 hops


def test_duplicate_content_is_detected_by_sha1_and_counted(trap_crawl):
    site, url, log, items, report = trap_crawl
    by_digest = Counter(item["sha1"] for item in items)
    duplicates = sum(count - 1 for count in by_digest.values())
    assert duplicates >= 2
    assert report["stats"]["adaptive/duplicates"] == report["documents"]["duplicates"] == duplicates
    copies = {item["url"] for item in items if by_digest[item["sha1"]] > 1}
    assert {url + "astronomy/", url + "astronomy/index.html", url + "cooking/index.html"} <= copies


def test_broken_slow_hanging_and_huge_responses_never_stop_the_crawl(trap_crawl):
    site, url, log, items, report = trap_crawl
    by_url = {item["url"]: item for item in items}
    assert by_url[url + "latin1.html"]["title"] == "Café des étoiles"
    assert by_url[url + "shift-jis.html"]["status"] == 200
    assert by_url[url + "mislabelled.html"]["status"] == 200
    assert url + "malformed.html" in by_url and url + "slow.html" in by_url
    assert url + "hang.html" not in by_url and url + "huge.html" not in by_url
    stats = report["stats"]
    assert stats["downloader/exception_type_count/scrapy.exceptions.DownloadTimeoutError"] >= 1
    assert stats["downloader/exception_type_count/scrapy.exceptions.DownloadCancelledError"] == 1
    assert not [u for u in by_url if urlsplit(u).scheme not in ("http", "https")]


@crawl_test
async def test_without_the_guards_the_traps_eat_the_budget():
    """The control: the same site with canonical URLs and trap guards off."""
    budget = 200
    site = TrapSite(hang_seconds=3, crawl_delay=0)
    server, url = serve(site)
    settings = project_settings(
        CLOSESPIDER_PAGECOUNT=budget,
        DOWNLOAD_TIMEOUT=1,
        ADAPTIVE_CANONICALIZE=False,
        ADAPTIVE_TRAP_MAX_PATH_DEPTH=0,
        ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS=0,
        ADAPTIVE_TRAP_CALENDAR_MAX_PAGES=0,
        ADAPTIVE_TRAP_QUERY_MAX_VARIANTS=0,
        ADAPTIVE_STRATEGY="bfs",
    )
    try:
        await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    finally:
        server.shutdown()
    per_trap = Counter(trap_of(path) for path in site.fetched_paths())
    assert max(count for trap, count in per_trap.items() if trap) > TRAP_SHARE * budget, per_trap


def test_every_trap_of_the_site_is_named():
    site = TrapSite()
    linked = {href for href in _hrefs(site.home) if href.startswith("/") and not href.startswith("/?")}
    untrapped = {h for h in linked if trap_of(urlsplit(h).path) is None and urlsplit(h).path not in site.honest_paths}
    assert not untrapped
    assert len({name for _, name in TRAP_PREFIXES}) >= 15


def _hrefs(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('href="')[1:]]
