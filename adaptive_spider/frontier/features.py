"""The 11-feature vector of a queued URL.

Six features are fixed when a link is found (its *static* part: depth,
parent_score, anchor_similarity, path_depth, has_query, round_discovered); five
depend on what the crawl learns later (domain_relevance, domain_count,
domain_failure_rate, domain_weight from the domain profiles; sibling_score from
the pages found next to it) and are read fresh whenever a vector is built, so
domain features are current at selection time.

Every feature lies in [0, 1] (domain_weight excepted: it is the configured
weight, clipped to [0, 10]), which keeps the regression tree's thresholds and
the Q-network's inputs on one scale.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.relevance.scoring import log_norm

FEATURE_NAMES = (
    "depth",
    "domain_relevance",
    "domain_count",
    "domain_failure_rate",
    "parent_score",
    "anchor_similarity",
    "sibling_score",
    "path_depth",
    "has_query",
    "domain_weight",
    "round_discovered",
)
N_FEATURES = len(FEATURE_NAMES)
STATIC_NAMES = ("depth", "parent_score", "anchor_similarity", "path_depth", "has_query", "round_discovered")
N_STATIC = len(STATIC_NAMES)

DEPTH_SCALE = 20.0
_PATH_SCALE = 10.0
_ROUND_SCALE = 10000.0
# Columns of the full vector filled from the static part, in STATIC_NAMES order.
_STATIC_COLUMNS = [FEATURE_NAMES.index(name) for name in STATIC_NAMES]
_DOMAIN_COLUMNS = [
    FEATURE_NAMES.index(name) for name in ("domain_relevance", "domain_count", "domain_failure_rate", "domain_weight")
]
_SIBLING_COLUMN = FEATURE_NAMES.index("sibling_score")


def path_depth(url: str) -> int:
    """Number of non-empty path segments of a URL."""
    return sum(1 for segment in urlsplit(url).path.split("/") if segment)


def static_features(
    url: str, *, depth: int, parent_score: float, anchor_similarity: float, round_discovered: int
) -> np.ndarray:
    """The static part of a link's features, normalised to [0, 1]."""
    return static_vector(
        depth=depth,
        parent_score=parent_score,
        anchor_similarity=anchor_similarity,
        path_segments=path_depth(url),
        has_query=bool(urlsplit(url).query),
        round_discovered=round_discovered,
    )


def static_vector(
    *,
    depth: int,
    parent_score: float,
    anchor_similarity: float,
    path_segments: int,
    has_query: bool,
    round_discovered: int,
) -> np.ndarray:
    """:func:`static_features` of a link whose URL is already parsed."""
    return np.array(
        [
            min(depth, DEPTH_SCALE) / DEPTH_SCALE,
            parent_score,
            anchor_similarity,
            min(path_segments, _PATH_SCALE) / _PATH_SCALE,
            1.0 if has_query else 0.0,
            log_norm(round_discovered, _ROUND_SCALE),
        ],
        dtype=np.float32,
    )


def assemble(static: np.ndarray, domain_columns: np.ndarray, sibling: np.ndarray) -> np.ndarray:
    """Full feature matrix (n x 11) from its three sources, each with n rows."""
    out = np.empty((len(static), N_FEATURES), dtype=np.float32)
    out[:, _STATIC_COLUMNS] = static
    out[:, _DOMAIN_COLUMNS] = domain_columns
    out[:, _SIBLING_COLUMN] = sibling
    out[:, FEATURE_NAMES.index("domain_weight")] = np.clip(domain_columns[:, 3], 0.0, 10.0)
    return out


def describe(vector: np.ndarray) -> dict[str, float]:
    """A feature vector as a name -> value mapping (for logs and request.meta)."""
    return {name: round(float(value), 4) for name, value in zip(FEATURE_NAMES, vector)}
