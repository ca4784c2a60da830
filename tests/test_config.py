"""A wrong setting fails at start with a message that names it."""

import pytest

from adaptive_spider.settings.config import AdaptiveConfig, ConfigError


def test_defaults_are_valid():
    config = AdaptiveConfig.from_settings({})
    assert config.strategy == "bestfirst"
    assert config.qnet_hidden == (30, 15)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"ADAPTIVE_STRATEGY": "bestest"}, "ADAPTIVE_STRATEGY"),
        ({"ADAPTIVE_PAGES_PER_ROUND": 0}, "ADAPTIVE_PAGES_PER_ROUND"),
        ({"ADAPTIVE_PAGES_PER_ROUND": "many"}, "ADAPTIVE_PAGES_PER_ROUND"),
        ({"ADAPTIVE_EPSILON_START": 1.5}, "ADAPTIVE_EPSILON_START"),
        ({"ADAPTIVE_EPSILON_START": 0.1, "ADAPTIVE_EPSILON_END": 0.2}, "ADAPTIVE_EPSILON_END"),
        ({"ADAPTIVE_QNET_GAMMA": -0.1}, "ADAPTIVE_QNET_GAMMA"),
        ({"ADAPTIVE_QNET_HIDDEN": "30,x"}, "ADAPTIVE_QNET_HIDDEN"),
        ({"ADAPTIVE_DOMAIN_MAX_PAGES": -1}, "ADAPTIVE_DOMAIN_MAX_PAGES"),
        ({"ADAPTIVE_DOMAIN_WEIGHTS": "example.com"}, "ADAPTIVE_DOMAIN_WEIGHTS"),
        ({"ADAPTIVE_DOMAIN_WEIGHTS": "example.com=heavy"}, "ADAPTIVE_DOMAIN_WEIGHTS"),
        ({"ADAPTIVE_DOMAIN_WEIGHTS": "{bad json"}, "ADAPTIVE_DOMAIN_WEIGHTS"),
        ({"ADAPTIVE_DOMAIN_WEIGHTS": {"example.com": -2}}, "ADAPTIVE_DOMAIN_WEIGHTS"),
        ({"ADAPTIVE_RELEVANCE_FIELD_WEIGHTS": {"footer": 2}}, "ADAPTIVE_RELEVANCE_FIELD_WEIGHTS"),
        ({"ADAPTIVE_UNRELIABLE_THRESHOLD": 2}, "ADAPTIVE_UNRELIABLE_THRESHOLD"),
        ({"ADAPTIVE_TREE_LEAF_SAMPLING": "sometimes"}, "ADAPTIVE_TREE_LEAF_SAMPLING"),
        ({"ADAPTIVE_LOG_DECISIONS": "maybe"}, "ADAPTIVE_LOG_DECISIONS"),
    ],
)
def test_bad_value_names_the_setting(settings, named):
    with pytest.raises(ConfigError) as info:
        AdaptiveConfig.from_settings(settings)
    message = str(info.value)
    assert message.startswith(named + ":")
    assert "\n" not in message


def test_mappings_accept_pairs_json_and_dicts():
    for raw in ("a.com=2,b.org=0.5", '{"a.com": 2, "b.org": 0.5}', {"A.com": 2, "b.org": "0.5"}):
        assert AdaptiveConfig.from_settings({"ADAPTIVE_DOMAIN_WEIGHTS": raw}).domain_weights == {
            "a.com": 2.0,
            "b.org": 0.5,
        }


def test_keywords_accept_comma_separated_string():
    config = AdaptiveConfig.from_settings({"ADAPTIVE_KEYWORDS": "asyncio, event loop,,thread"})
    assert config.keywords == ("asyncio", "event loop", "thread")
