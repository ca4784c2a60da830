"""Reading and validating the ``ADAPTIVE_*`` settings, once per crawl.

:class:`AdaptiveConfig` turns Scrapy settings into typed values and rejects a
wrong value with a :class:`ConfigError` that names the setting, so a typo fails
at start instead of half-way through a crawl.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from typing import Any

from adaptive_spider.settings import defaults as default_settings

STRATEGIES = ("tres", "linkgroups", "bestfirst", "bfs", "dfs", "random")
LEAF_SAMPLING = ("best", "uniform")
PAGE_FIELDS = ("title", "headings", "body", "url")


class ConfigError(ValueError):
    """A setting or argument has a value the crawl cannot use; the message names it."""


def default_values() -> dict[str, Any]:
    """The ``ADAPTIVE_*`` defaults as a dict (fresh copies of mutable values)."""
    return {
        name: json.loads(json.dumps(getattr(default_settings, name)))
        for name in dir(default_settings)
        if name.startswith("ADAPTIVE_")
    }


def _get(settings: Any, name: str) -> Any:
    value = settings.get(name) if settings is not None else None
    if value is None:
        value = getattr(default_settings, name)
    return value


def _number(settings, name, kind, low=None, high=None, low_open=False):
    raw = _get(settings, name)
    try:
        if isinstance(raw, bool):
            raise TypeError
        value = kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected {kind.__name__}, got {raw!r}") from None
    if kind is float and value != value:  # NaN
        raise ConfigError(f"{name}: expected a number, got {raw!r}")
    if low is not None and (value <= low if low_open else value < low):
        bound = f"> {low}" if low_open else f">= {low}"
        raise ConfigError(f"{name}: must be {bound}, got {raw!r}")
    if high is not None and value > high:
        raise ConfigError(f"{name}: must be <= {high}, got {raw!r}")
    return value


def _choice(settings, name, choices):
    value = str(_get(settings, name)).strip().lower()
    if value not in choices:
        raise ConfigError(f"{name}: unknown value {value!r}; choose one of {', '.join(choices)}")
    return value


def parse_list(raw: Any, name: str) -> list[str]:
    """A list setting given as a list or a comma-separated string."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        items = raw.split(",")
    elif isinstance(raw, (list, tuple)):
        items = raw
    else:
        raise ConfigError(f"{name}: expected a list or a comma-separated string, got {raw!r}")
    return [str(item).strip() for item in items if str(item).strip()]


def parse_mapping(raw: Any, name: str, *, low: float | None = 0.0) -> dict[str, float]:
    """A mapping of name -> non-negative number, given as a dict, JSON, or ``a=1,b=2``."""
    if raw is None or raw == "" or raw == {}:
        return {}
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{name}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        else:
            pairs = {}
            for part in filter(None, (p.strip() for p in text.split(","))):
                key, sep, value = part.partition("=")
                if not sep or not key.strip():
                    raise ConfigError(f"{name}: expected name=number pairs, got {part!r}")
                pairs[key.strip()] = value.strip()
            raw = pairs
    if not hasattr(raw, "items"):
        raise ConfigError(f"{name}: expected a mapping, got {raw!r}")
    result = {}
    for key, value in raw.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name}: value of {key!r} is not a number: {value!r}") from None
        if number != number or (low is not None and number < low):
            raise ConfigError(f"{name}: value of {key!r} must be >= {low}, got {value!r}")
        result[str(key).strip().lower()] = number
    return result


@dataclass(frozen=True)
class AdaptiveConfig:
    """Validated values of every ``ADAPTIVE_*`` setting of one crawl.

    Build it with :meth:`from_settings`; the defaults live in
    :mod:`adaptive_spider.settings.defaults` only.
    """

    query: str
    keywords: tuple[str, ...]
    strategy: str
    seed: int
    pages_per_round: int
    tree_max_leaves: int
    tree_min_samples_leaf: int
    tree_min_experience: int
    tree_refit_growth: float
    tree_leaf_sampling: str
    qnet_hidden: tuple[int, ...]
    qnet_learning_rate: float
    qnet_gamma: float
    qnet_batch_size: int
    qnet_replay_size: int
    qnet_target_update: int
    qnet_updates_per_page: int
    qnet_next_actions: int
    warmup_pages: int
    epsilon_start: float
    epsilon_end: float
    epsilon_half_life: float
    linkgroups_max_groups: int
    linkgroups_learning_rate: float
    slow_domain_ms: float
    unreliable_threshold: float
    unreliable_min_attempts: int
    domain_max_pages: int
    domain_weights: dict[str, float]
    relevance_field_weights: dict[str, float]
    relevance_k1: float
    relevance_b: float
    relevance_link_discount: float
    relevance_half: float
    keyword_weight: float
    relevant_threshold: float
    log_decisions: bool
    prior_weights: dict[str, float]
    cold_start_pages: int
    hold_below: float
    hold_in_flight: int
    distributed_key: str
    distributed_batch: int
    distributed_sync_interval: float
    distributed_poll_interval: float
    distributed_max_pages: int
    distributed_worker_timeout: float

    # robustness: canonical URLs, trap guards, duplicates, resume, report
    canonicalize: bool
    session_params: tuple[str, ...]
    tracking_params: tuple[str, ...]
    trap_max_path_depth: int
    trap_max_segment_repeats: int
    trap_calendar_max_pages: int
    trap_query_max_variants: int
    url_pattern_limits: dict[str, int]
    drop_duplicates: bool
    journal: bool
    journal_snapshot_seconds: float
    robotstxt_crawl_delay_max: float
    report: bool
    report_file: str
    # -- sufficiency (adaptive_spider.sufficiency.estimator, .linkvalue, .pipelines) --
    sufficiency_strategy: str = "statistical"
    sufficiency_evidence: float = 2.0
    sufficiency_subsets: int = 32
    sufficiency_window: int = 10
    sufficiency_answer_relevance: float = 0.8
    sufficiency_combine: str = "min"
    sufficiency_weights: dict[str, float] | None = None
    sufficiency_log_interval: float = 0.0
    sufficiency_report: str = ""
    linkvalue_parent_weight: float = 0.3
    linkvalue_depth_decay: float = 0.1
    linkvalue_query_penalty: float = 0.5
    linkvalue_new_domain: float = 0.5
    self_stop: bool = True
    stop_criteria: tuple[str, ...] = ("sufficient", "plateau", "no_promising_links")
    stop_threshold: float = 0.75
    stop_plateau_window: int = 20
    stop_plateau_epsilon: float = 0.01
    stop_min_gain: float = 0.05
    stop_patience: int = 3
    stop_min_pages: int = 10

    @classmethod
    def from_settings(cls, settings: Any = None, **overrides: Any) -> AdaptiveConfig:
        """Read and validate ``ADAPTIVE_*`` from Scrapy settings (or a plain dict)."""
        if isinstance(settings, dict):
            settings = _DictSettings(settings)
        values = _read(settings)
        values.update(overrides)
        return cls(**values)

    def as_settings(self) -> dict[str, Any]:
        """The config as ``ADAPTIVE_*`` settings (for reports and subprocesses)."""
        return {f"ADAPTIVE_{f.name.upper()}": getattr(self, f.name) for f in fields(self)}


class _DictSettings(dict):
    def getbool(self, name, default=False):
        value = self.get(name, default)
        return value.lower() in ("1", "true", "yes") if isinstance(value, str) else bool(value)


def _hidden_layers(settings) -> tuple[int, ...]:
    layers = parse_list(_get(settings, "ADAPTIVE_QNET_HIDDEN"), "ADAPTIVE_QNET_HIDDEN")
    try:
        sizes = tuple(int(size) for size in layers)
    except ValueError:
        raise ConfigError(f"ADAPTIVE_QNET_HIDDEN: expected layer sizes such as 30,15, got {layers!r}") from None
    if not sizes or any(size < 1 or size > 4096 for size in sizes):
        raise ConfigError(f"ADAPTIVE_QNET_HIDDEN: layer sizes must be between 1 and 4096, got {sizes!r}")
    return sizes


def _field_weights(settings) -> dict[str, float]:
    name = "ADAPTIVE_RELEVANCE_FIELD_WEIGHTS"
    weights = parse_mapping(_get(settings, name), name)
    unknown = sorted(set(weights) - set(PAGE_FIELDS))
    if unknown:
        raise ConfigError(f"{name}: unknown field(s) {', '.join(unknown)}; fields are {', '.join(PAGE_FIELDS)}")
    merged = dict(default_settings.ADAPTIVE_RELEVANCE_FIELD_WEIGHTS)
    merged.update(weights)
    if not any(merged.values()):
        raise ConfigError(f"{name}: at least one field needs a weight above 0")
    return merged


def _read(settings) -> dict[str, Any]:
    n = _number
    epsilon_start = n(settings, "ADAPTIVE_EPSILON_START", float, 0.0, 1.0)
    epsilon_end = n(settings, "ADAPTIVE_EPSILON_END", float, 0.0, 1.0)
    if epsilon_end > epsilon_start:
        raise ConfigError(
            f"ADAPTIVE_EPSILON_END: must not exceed ADAPTIVE_EPSILON_START ({epsilon_end} > {epsilon_start})"
        )
    return {
        "query": str(_get(settings, "ADAPTIVE_QUERY") or "").strip(),
        "keywords": tuple(parse_list(_get(settings, "ADAPTIVE_KEYWORDS"), "ADAPTIVE_KEYWORDS")),
        "strategy": _choice(settings, "ADAPTIVE_STRATEGY", STRATEGIES),
        "seed": n(settings, "ADAPTIVE_SEED", int, 0),
        "pages_per_round": n(settings, "ADAPTIVE_PAGES_PER_ROUND", int, 1, 10000),
        "tree_max_leaves": n(settings, "ADAPTIVE_TREE_MAX_LEAVES", int, 2, 4096),
        "tree_min_samples_leaf": n(settings, "ADAPTIVE_TREE_MIN_SAMPLES_LEAF", int, 1),
        "tree_min_experience": n(settings, "ADAPTIVE_TREE_MIN_EXPERIENCE", int, 2),
        "tree_refit_growth": n(settings, "ADAPTIVE_TREE_REFIT_GROWTH", float, 0.0, low_open=True),
        "tree_leaf_sampling": _choice(settings, "ADAPTIVE_TREE_LEAF_SAMPLING", LEAF_SAMPLING),
        "qnet_hidden": _hidden_layers(settings),
        "qnet_learning_rate": n(settings, "ADAPTIVE_QNET_LEARNING_RATE", float, 0.0, 1.0, low_open=True),
        "qnet_gamma": n(settings, "ADAPTIVE_QNET_GAMMA", float, 0.0, 0.999),
        "qnet_batch_size": n(settings, "ADAPTIVE_QNET_BATCH_SIZE", int, 1, 100000),
        "qnet_replay_size": n(settings, "ADAPTIVE_QNET_REPLAY_SIZE", int, 1),
        "qnet_target_update": n(settings, "ADAPTIVE_QNET_TARGET_UPDATE", int, 1),
        "qnet_updates_per_page": n(settings, "ADAPTIVE_QNET_UPDATES_PER_PAGE", int, 0, 1000),
        "qnet_next_actions": n(settings, "ADAPTIVE_QNET_NEXT_ACTIONS", int, 0, 1000),
        "warmup_pages": n(settings, "ADAPTIVE_WARMUP_PAGES", int, 0),
        "epsilon_start": epsilon_start,
        "epsilon_end": epsilon_end,
        "epsilon_half_life": n(settings, "ADAPTIVE_EPSILON_HALF_LIFE", float, 0.0, low_open=True),
        "linkgroups_max_groups": n(settings, "ADAPTIVE_LINKGROUPS_MAX_GROUPS", int, 1),
        "linkgroups_learning_rate": n(settings, "ADAPTIVE_LINKGROUPS_LEARNING_RATE", float, 0.0, 1.0, low_open=True),
        "slow_domain_ms": n(settings, "ADAPTIVE_SLOW_DOMAIN_MS", float, 0.0, low_open=True),
        "unreliable_threshold": n(settings, "ADAPTIVE_UNRELIABLE_THRESHOLD", float, 0.0, 1.0),
        "unreliable_min_attempts": n(settings, "ADAPTIVE_UNRELIABLE_MIN_ATTEMPTS", int, 1),
        "domain_max_pages": n(settings, "ADAPTIVE_DOMAIN_MAX_PAGES", int, 0),
        "domain_weights": parse_mapping(_get(settings, "ADAPTIVE_DOMAIN_WEIGHTS"), "ADAPTIVE_DOMAIN_WEIGHTS"),
        "relevance_field_weights": _field_weights(settings),
        "relevance_k1": n(settings, "ADAPTIVE_RELEVANCE_K1", float, 0.0, low_open=True),
        "relevance_b": n(settings, "ADAPTIVE_RELEVANCE_B", float, 0.0, 1.0),
        "relevance_link_discount": n(settings, "ADAPTIVE_RELEVANCE_LINK_DISCOUNT", float, 0.0, 10.0),
        "relevance_half": n(settings, "ADAPTIVE_RELEVANCE_HALF", float, 0.0, 1.0, low_open=True),
        "keyword_weight": n(settings, "ADAPTIVE_KEYWORD_WEIGHT", float, 0.0),
        "relevant_threshold": n(settings, "ADAPTIVE_RELEVANT_THRESHOLD", float, 0.0, 1.0),
        "log_decisions": _bool(settings, "ADAPTIVE_LOG_DECISIONS"),
        "prior_weights": _prior_weights(settings),
        "cold_start_pages": n(settings, "ADAPTIVE_COLD_START_PAGES", int, 0),
        "hold_below": n(settings, "ADAPTIVE_HOLD_BELOW", float, 0.0, 1.0),
        "hold_in_flight": n(settings, "ADAPTIVE_HOLD_IN_FLIGHT", int, 1),
        **_distributed(settings),

        # robustness: canonical URLs, trap guards, duplicates, resume, report
        "canonicalize": _bool(settings, "ADAPTIVE_CANONICALIZE"),
        "session_params": _param_names(settings, "ADAPTIVE_SESSION_PARAMS"),
        "tracking_params": _param_names(settings, "ADAPTIVE_TRACKING_PARAMS"),
        "trap_max_path_depth": n(settings, "ADAPTIVE_TRAP_MAX_PATH_DEPTH", int, 0),
        "trap_max_segment_repeats": n(settings, "ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS", int, 0),
        "trap_calendar_max_pages": n(settings, "ADAPTIVE_TRAP_CALENDAR_MAX_PAGES", int, 0),
        "trap_query_max_variants": n(settings, "ADAPTIVE_TRAP_QUERY_MAX_VARIANTS", int, 0),
        "url_pattern_limits": _pattern_limits(settings, "ADAPTIVE_URL_PATTERN_LIMITS"),
        "drop_duplicates": _bool(settings, "ADAPTIVE_DROP_DUPLICATES"),
        "journal": _bool(settings, "ADAPTIVE_JOURNAL"),
        "journal_snapshot_seconds": n(settings, "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS", float, 0.0),
        "robotstxt_crawl_delay_max": n(settings, "ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX", float, 0.0, 3600.0),
        "report": _bool(settings, "ADAPTIVE_REPORT"),
        "report_file": _report_file(settings, "ADAPTIVE_REPORT_FILE"),
        **_read_sufficiency(settings),
    }


def _prior_weights(settings) -> dict[str, float]:
    name = "ADAPTIVE_PRIOR_WEIGHTS"
    weights = parse_mapping(_get(settings, name), name)
    unknown = sorted(set(weights) - {"anchor", "context", "parent"})
    if unknown:
        raise ConfigError(f"{name}: unknown part(s) {', '.join(unknown)}; parts are anchor, context, parent")
    merged = {**default_settings.ADAPTIVE_PRIOR_WEIGHTS, **weights}
    if not any(merged.values()):
        raise ConfigError(f"{name}: at least one weight must be above 0")
    return merged


def _bool(settings, name) -> bool:
    raw = _get(settings, name)
    if isinstance(raw, str):
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{name}: expected true or false, got {raw!r}")
    return bool(raw)


def _distributed(settings) -> dict[str, Any]:
    """The distributed crawl's settings (adaptive_spider.distributed)."""
    key = str(_get(settings, "ADAPTIVE_DISTRIBUTED_KEY") or "").strip()
    try:
        key % {"spider": "spider"}
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"ADAPTIVE_DISTRIBUTED_KEY: only %(spider)s may be substituted, got {key!r}") from None
    if not key:
        raise ConfigError("ADAPTIVE_DISTRIBUTED_KEY: must not be empty")
    n = _number
    return {
        "distributed_key": key,
        "distributed_batch": n(settings, "ADAPTIVE_DISTRIBUTED_BATCH", int, 1, 10000),
        "distributed_sync_interval": n(settings, "ADAPTIVE_DISTRIBUTED_SYNC_INTERVAL", float, 0.0, low_open=True),
        "distributed_poll_interval": n(settings, "ADAPTIVE_DISTRIBUTED_POLL_INTERVAL", float, 0.0, 60.0, low_open=True),
        "distributed_max_pages": n(settings, "ADAPTIVE_DISTRIBUTED_MAX_PAGES", int, 0),
        "distributed_worker_timeout": n(settings, "ADAPTIVE_DISTRIBUTED_WORKER_TIMEOUT", float, 0.0, low_open=True),
    }

# -- robustness settings -------------------------------------------------------------------
_PARAM_NAME = re.compile(r"^[A-Za-z0-9_.*\[\]-]+$")


def _param_names(settings, name) -> tuple[str, ...]:
    """URL parameter names (``*`` as a wildcard), lower-cased."""
    names = parse_list(_get(settings, name), name)
    for param in names:
        if not _PARAM_NAME.match(param):
            raise ConfigError(f"{name}: not a URL parameter name: {param!r}")
    return tuple(param.lower() for param in names)


def _pattern_limits(settings, name) -> dict[str, int]:
    """A mapping of URL regex -> most URLs, given as a dict or a JSON object."""
    raw = _get(settings, name)
    if raw is None or raw == "" or raw == {}:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{name}: expected a JSON object of regex -> count ({exc.msg} at column {exc.colno})") from None
    if not hasattr(raw, "items"):
        raise ConfigError(f"{name}: expected a mapping of regex -> count, got {raw!r}")
    limits = {}
    for pattern, limit in raw.items():
        try:
            re.compile(str(pattern))
        except re.error as exc:
            raise ConfigError(f"{name}: invalid regex {pattern!r} ({exc})") from None
        if isinstance(limit, bool) or not isinstance(limit, (int, str)) or not str(limit).strip().isdigit():
            raise ConfigError(f"{name}: limit of {pattern!r} must be a whole number >= 0, got {limit!r}")
        limits[str(pattern)] = int(limit)
    return limits


def _report_file(settings, name) -> str:
    path = str(_get(settings, name) or "").strip()
    if path:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ConfigError(f"{name}: directory {parent!r} does not exist")
        if os.path.isdir(path):
            raise ConfigError(f"{name}: {path!r} is a directory; give a file name")
    return path
# -- sufficiency ---------------------------------------------------------------------------
STOP_CRITERIA = ("sufficient", "plateau", "no_promising_links")


def _read_sufficiency(settings) -> dict[str, Any]:
    """The validated sufficiency, link value and stop settings."""
    from adaptive_spider.sufficiency.estimator import COMBINATIONS, COMPONENTS, STRATEGIES

    n = _number
    weights = parse_mapping(_get(settings, "ADAPTIVE_SUFFICIENCY_WEIGHTS"), "ADAPTIVE_SUFFICIENCY_WEIGHTS")
    unknown = sorted(set(weights) - set(COMPONENTS))
    if unknown:
        raise ConfigError(
            f"ADAPTIVE_SUFFICIENCY_WEIGHTS: unknown part(s) {', '.join(unknown)}; parts are {', '.join(COMPONENTS)}"
        )
    criteria = tuple(c.lower() for c in parse_list(_get(settings, "ADAPTIVE_STOP_CRITERIA"), "ADAPTIVE_STOP_CRITERIA"))
    for criterion in criteria:
        if criterion not in STOP_CRITERIA:
            raise ConfigError(
                f"ADAPTIVE_STOP_CRITERIA: unknown criterion {criterion!r}; choose from {', '.join(STOP_CRITERIA)}"
            )
    report = _get(settings, "ADAPTIVE_SUFFICIENCY_REPORT")
    return {
        "sufficiency_strategy": _choice(settings, "ADAPTIVE_SUFFICIENCY_STRATEGY", STRATEGIES),
        "sufficiency_evidence": n(settings, "ADAPTIVE_SUFFICIENCY_EVIDENCE", float, 0.0, 1000.0, low_open=True),
        "sufficiency_subsets": n(settings, "ADAPTIVE_SUFFICIENCY_SUBSETS", int, 2, 10000),
        "sufficiency_window": n(settings, "ADAPTIVE_SUFFICIENCY_WINDOW", int, 1, 100000),
        "sufficiency_answer_relevance": n(
            settings, "ADAPTIVE_SUFFICIENCY_ANSWER_RELEVANCE", float, 0.0, 1.0, low_open=True
        ),
        "sufficiency_combine": _choice(settings, "ADAPTIVE_SUFFICIENCY_COMBINE", COMBINATIONS),
        "sufficiency_weights": weights,
        "sufficiency_log_interval": n(settings, "ADAPTIVE_SUFFICIENCY_LOG_INTERVAL", float, 0.0),
        "sufficiency_report": "" if report in (None, False) else str(report).strip(),
        "linkvalue_parent_weight": n(settings, "ADAPTIVE_LINKVALUE_PARENT_WEIGHT", float, 0.0, 1.0),
        "linkvalue_depth_decay": n(settings, "ADAPTIVE_LINKVALUE_DEPTH_DECAY", float, 0.0),
        "linkvalue_query_penalty": n(settings, "ADAPTIVE_LINKVALUE_QUERY_PENALTY", float, 0.0, 1.0),
        "linkvalue_new_domain": n(settings, "ADAPTIVE_LINKVALUE_NEW_DOMAIN", float, 0.0, 1.0),
        "self_stop": _bool(settings, "ADAPTIVE_SELF_STOP"),
        "stop_criteria": criteria,
        "stop_threshold": n(settings, "ADAPTIVE_STOP_THRESHOLD", float, 0.0, 1.0),
        "stop_plateau_window": n(settings, "ADAPTIVE_STOP_PLATEAU_WINDOW", int, 1),
        "stop_plateau_epsilon": n(settings, "ADAPTIVE_STOP_PLATEAU_EPSILON", float, 0.0, 1.0),
        "stop_min_gain": n(settings, "ADAPTIVE_STOP_MIN_GAIN", float, 0.0, 1.0),
        "stop_patience": n(settings, "ADAPTIVE_STOP_PATIENCE", int, 1),
        "stop_min_pages": n(settings, "ADAPTIVE_STOP_MIN_PAGES", int, 0),
    }
