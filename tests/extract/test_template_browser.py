"""JavaScript pages in real headless chromium: nothing without the javascript profile, everything with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium (/usr/bin/chromium) is not installed"),
]

COURSES = {
    ("Pottery for beginners", "Ines Moreau", "12", 12.0),
    ("Conversational Italian", "Paolo Ricci", "18", 18.0),
    ("Introduction to astronomy", "Dr. Hana Sato", "30", 30.0),
    ("Woodworking: a first stool", "Tom Becker", "8", 8.0),
    ("Watercolour landscapes", "Aoife Byrne", "15", 15.0),
}
PHOTOS = {
    ("Harbour at dawn", 120.0), ("Fog over the ridge", 87.0), ("Market colours", 45.0), ("Night tram", 230.0),
    ("Frozen lake", 64.0), ("Old lighthouse", 310.0), ("Desert road", 12.0), ("Autumn alley", 99.0),
    ("City from above", 540.0), ("Rainy window", 33.0), ("Tidal pools", 71.0), ("Last light", 1024.0),
}  # fmt: skip
FIELD_NOTES = {
    ("Counting swifts over the old mill", "Every evening in June the swifts come back.",
     "We counted 214 swifts on the warmest evening, twice as many as last year."),
    ("A week without a car", "Seven days, one bicycle and a lot of rain.",
     "By Thursday the errands took half the time, once the routes were planned."),
    ("Mending a dry-stone wall", "The wall had stood for two hundred years.",
     "Each stone went back where the frost had pushed it out, heaviest at the bottom."),
}  # fmt: skip


async def _crawl_both(crawl_template, template, url):
    """Crawl *url* without and with the javascript profile; check the page was fetched both times."""
    plain = await crawl_template(template, [url], profile="default")
    rendered = await crawl_template(template, [url], profile="javascript")
    for result in (plain, rendered):
        assert url in result.fetched
    assert "playwright/page_count" not in plain.stats
    assert rendered.stats["playwright/page_count"] >= 1
    return plain, rendered


@pytest_twisted.ensureDeferred
async def test_content_written_by_javascript(fixture_site, crawl_template):
    plain, rendered = await _crawl_both(
        crawl_template, EXAMPLES / "js-rendered.yaml", fixture_site + "js/rendered.html"
    )
    assert plain.documents == []
    found = {(d["title"], d["teacher"], d["seats"], d["ranking"]["seats"]) for d in rendered.documents}
    assert len(rendered.documents) == 5
    assert found == COURSES


@pytest_twisted.ensureDeferred
async def test_content_loaded_by_scrolling(fixture_site, crawl_template):
    plain, rendered = await _crawl_both(crawl_template, EXAMPLES / "js-lazy.yaml", fixture_site + "js/lazy.html")
    assert plain.documents == []
    assert len(rendered.documents) == 12  # three scrolls, three batches of four
    assert {(d["title"], d["ranking"]["likes"]) for d in rendered.documents} == PHOTOS


@pytest_twisted.ensureDeferred
async def test_content_shown_after_a_click(fixture_site, crawl_template):
    plain, rendered = await _crawl_both(
        crawl_template, EXAMPLES / "js-readmore.yaml", fixture_site + "js/readmore.html"
    )
    assert plain.documents == []
    assert len(rendered.documents) == 3
    assert {(d["title"], d["teaser"], d["full_text"]) for d in rendered.documents} == FIELD_NOTES


@pytest_twisted.ensureDeferred
async def test_a_page_whose_action_fails_does_not_stop_the_crawl(fixture_site, crawl_template, tmp_path):
    # rendered.html has no "Read more" button: its click times out and only that page is lost.
    template = tmp_path / "readmore-short-timeout.yaml"
    text = (EXAMPLES / "js-readmore.yaml").read_text()
    short_timeout = text.replace('click: "#read-more"', 'click: {selector: "#read-more", timeout: 1000}')
    assert short_timeout != text
    template.write_text(short_timeout)
    start = [fixture_site + "js/rendered.html", fixture_site + "js/readmore.html"]
    result = await crawl_template(template, start, profile="javascript")
    assert result.stats["finish_reason"] == "finished"
    assert {d["url"] for d in result.documents} == {fixture_site + "js/readmore.html"}
    assert len(result.documents) == 3
    assert result.stats.get("downloader/exception_count", 0) >= 1
