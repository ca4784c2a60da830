"""One declaration per setting: the defaults, the config and the docs all come from the table,
and a misspelled ``ADAPTIVE_*`` name is reported instead of silently ignored."""

from __future__ import annotations

import dataclasses
import inspect
import logging
import re
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from adaptive_spider.addon import AdaptiveAddon
from adaptive_spider.settings import defaults
from adaptive_spider.settings.config import (
    AdaptiveConfig,
    ConfigError,
    default_values,
    unknown_settings,
)
from adaptive_spider.settings.parsers import parse_bool
from adaptive_spider.settings.table import BY_NAME, RENAMED, SETTINGS

PROJECT = Path(__file__).resolve().parent.parent
CONFIG_LOGGER = "adaptive_spider.settings.config"


def test_the_defaults_module_holds_exactly_the_table():
    assert sorted(name for name in dir(defaults) if name.isupper()) == sorted(BY_NAME)
    assert {name: getattr(defaults, name) for name in BY_NAME} == default_values()


def test_the_config_has_one_attribute_per_setting():
    assert [field.name for field in dataclasses.fields(AdaptiveConfig)] == [s.attribute for s in SETTINGS]
    assert AdaptiveConfig() == AdaptiveConfig.from_settings({}) == AdaptiveConfig.from_settings(Settings())


def test_every_setting_named_in_the_code_is_in_the_table():
    """A component that reads an ``ADAPTIVE_*`` setting must declare it here, not warn about it."""
    used = set()
    for folder in ("adaptive_spider", "spiders", "settings_profiles"):
        for path in (PROJECT / folder).rglob("*.py"):
            used.update(re.findall(r"\bADAPTIVE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    assert sorted(used - set(BY_NAME) - set(RENAMED)) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        ("1", True),
        ("0", False),
        ("", False),
        ("true", True),
        ("False", False),
        (" YES ", True),
        ("no", False),
        ("on", True),
        ("Off", False),
    ],
)
def test_one_boolean_reading(raw, expected):
    assert parse_bool(raw, "ADAPTIVE_REPORT") is expected
    assert AdaptiveConfig.from_settings({"ADAPTIVE_REPORT": raw}).report is expected


def test_a_boolean_typo_names_the_setting():
    with pytest.raises(ConfigError, match=r"^ADAPTIVE_REPORT: expected true or false, got 'ja'$"):
        AdaptiveConfig.from_settings({"ADAPTIVE_REPORT": "ja"})


def test_search_defaults_match_the_search_package():
    """The search pipeline still keeps its own fallbacks; they must stay the table's defaults."""
    from adaptive_spider.search.analysis import (
        DEFAULT_MIN_LENGTH,
        DEFAULT_STEMMER,
        DEFAULT_STOP_WORDS,
    )
    from adaptive_spider.search.index import DEFAULT_B, DEFAULT_K

    assert (
        defaults.ADAPTIVE_SEARCH_STOP_WORDS,
        defaults.ADAPTIVE_SEARCH_MIN_LENGTH,
        defaults.ADAPTIVE_SEARCH_STEMMER,
    ) == (DEFAULT_STOP_WORDS, DEFAULT_MIN_LENGTH, DEFAULT_STEMMER)
    assert (defaults.ADAPTIVE_SEARCH_K, defaults.ADAPTIVE_SEARCH_B) == (DEFAULT_K, DEFAULT_B)


def test_sufficiency_estimator_defaults_match_the_table():
    """The estimator's keyword defaults (for use without a crawl) must equal the settings' defaults."""
    from adaptive_spider.sufficiency.estimator import SufficiencyEstimator

    parameters = inspect.signature(SufficiencyEstimator.__init__).parameters
    config = AdaptiveConfig()
    pairs = {
        "evidence_target": config.sufficiency_evidence,
        "n_subsets": config.sufficiency_subsets,
        "window": config.sufficiency_window,
        "answer_relevance": config.sufficiency_answer_relevance,
        "combine": config.sufficiency_combine,
        "k1": config.relevance_k1,
        "relevant_threshold": config.relevant_threshold,
    }
    assert {name: parameters[name].default for name in pairs} == pairs


# -- misspelled names ---------------------------------------------------------------------
def test_a_misspelled_name_names_the_closest_setting(caplog):
    settings = Settings({"ADAPTIVE_STRATGY": "bfs", "ADAPTIVE_SEED": 3})
    with caplog.at_level(logging.WARNING, logger=CONFIG_LOGGER):
        AdaptiveAddon().update_settings(settings)
    warnings = [r.getMessage() for r in caplog.records if r.name == CONFIG_LOGGER]
    assert len(warnings) == 1
    assert "ADAPTIVE_STRATGY" in warnings[0] and "did you mean ADAPTIVE_STRATEGY?" in warnings[0]


def test_correct_names_give_no_warning(caplog):
    settings = Settings(
        {
            "ADAPTIVE_STRATEGY": "bfs",
            "ADAPTIVE_SEARCH_INDEX": "index",
            "ADAPTIVE_ROBOTSTXT_LOCATIONS": {"*": "/robots-alt.txt"},
        }
    )
    with caplog.at_level(logging.WARNING, logger=CONFIG_LOGGER):
        AdaptiveAddon().update_settings(settings)
    assert [r.getMessage() for r in caplog.records if r.name == CONFIG_LOGGER] == []


def test_a_crawl_warns_once_about_a_typo(caplog):
    """From a project's settings (or ``-s``): once per crawl, however many components read the config."""
    with caplog.at_level(logging.WARNING, logger=CONFIG_LOGGER):
        crawler = get_crawler(
            settings_dict={
                "ADDONS": {"adaptive_spider.addon.AdaptiveAddon": 0},
                "ADAPTIVE_SELF_STPO": False,
            }
        )
        crawler._apply_settings()
        for _ in range(3):
            AdaptiveConfig.from_settings(crawler.settings)
    warnings = [r.getMessage() for r in caplog.records if r.name == CONFIG_LOGGER]
    assert len(warnings) == 1 and "did you mean ADAPTIVE_SELF_STOP?" in warnings[0]


def test_a_renamed_setting_is_told_its_new_name():
    assert unknown_settings(["ADAPTIVE_CLASSIFIER_QUERY_WEIGHT"]) == [
        ("ADAPTIVE_CLASSIFIER_QUERY_WEIGHT", "ADAPTIVE_RELEVANCE_QUERY_WEIGHT")
    ]
    assert all(new in BY_NAME and old not in BY_NAME for old, new in RENAMED.items())


def test_a_name_like_no_setting_still_warns():
    assert unknown_settings(["ADAPTIVE_XYZZY", "ADAPTIVE_SEED", "DOWNLOAD_DELAY"]) == [("ADAPTIVE_XYZZY", None)]
