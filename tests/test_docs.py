"""The documentation that is generated from the code is up to date."""

from pathlib import Path

from adaptive_spider.settings.docs import markdown, rows

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_settings_table_is_current():
    assert (DOCS / "settings.md").read_text() == markdown(), (
        "run: python -m adaptive_spider.settings.docs > docs/settings.md"
    )


def test_every_setting_says_what_it_does():
    assert [name for _, name, _, description in rows() if not description] == []
