"""The interface every frontier strategy implements.

A strategy orders the entries of each priority tier of the frontier. The
:class:`~adaptive_spider.frontier.frontier.Frontier` owns the entries (their
requests and features), the tiers and the domain filters; a strategy only keeps
entry ids in its own structures, chooses which to release, and may learn from
the rewards of the pages its choices led to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from adaptive_spider.settings.table import PRIOR_WEIGHTS


@dataclass
class Choice:
    """An entry chosen for release, with what explains the choice."""

    entry: int
    score: float = 0.0
    leaf: int = -1
    features: Any = None
    prior: float = 0.0
    #: The hashed tokens of the entry's link (a strategy that learns from them): they come back with its reward.
    tokens: Any = None


def link_prior(
    anchor_similarity: float,
    parent_score: float,
    context_similarity: float = 0.0,
    weights: dict[str, float] | None = None,
) -> float:
    """A learning-free estimate of a link's value: the best-first baseline's order,
    and the baseline the Q-network learns corrections to.

    A weighted mean (``ADAPTIVE_PRIOR_WEIGHTS``) of the similarity of the anchor
    and URL words to the query, of the headings and list label around the link
    (its context), and of the linking page's relevance. The anchor says most
    about the target; context and parent speak for links whose own words say little.
    """
    w = weights or PRIOR_WEIGHTS
    total = w["anchor"] + w["context"] + w["parent"]
    return (w["anchor"] * anchor_similarity + w["context"] * context_similarity + w["parent"] * parent_score) / total


def blind_rank(prior: np.ndarray, depth: np.ndarray, below: float) -> np.ndarray:
    """What a prior-ranked order ranks a link by during the cold start: a link with a sign of
    relevance (prior at least ``below``) by its prior; a blind one below all of those, nearest
    the seeds first (its crawl ``depth``), and among links as deep by its prior (a page's
    translations, whose prior is cut, still come after the page's own language). The blind
    links' priors are the noise of a few pages' statistics then, while their depth is no noise:
    a start page's table of contents with no word of the query comes before the links of a
    page three links away, on another site, that shares one common word with it."""
    return np.where(prior < below, prior / below - 1.0 - depth, prior)


def focus_key(prior: Any, misses: Any, lift: Any, patience: float) -> Any:
    """bestfirst's rank of a link (a float, or arrays of them): its prior, lowered while its
    sibling group misses (``patience / (patience + misses)``, none with patience 0), times its
    site section's lift. TRES ranks its leaves by the same key: its learning corrects the
    best learning-free order, not a weaker one."""
    if patience:
        prior = prior * (patience / (patience + misses))
    return prior * lift


class QueuedEntries(Protocol):
    """What a strategy may read of the frontier's queued entries (the
    :class:`~adaptive_spider.frontier.frontier.Frontier` implements it); a strategy
    never changes them."""

    def priors(self, entries: np.ndarray) -> np.ndarray:
        """The link priors (float32) of entries."""

    def arrival_orders(self, entries: np.ndarray) -> np.ndarray:
        """The order in which entries were first queued (int64)."""

    def prior_of(self, entry: int) -> float: ...

    def depths(self, entries: np.ndarray) -> np.ndarray:
        """The crawl depth of entries' links (at most the features' depth scale)."""

    def sibling_misses(self, entry: int) -> float:
        """Fetched links of the entry's sibling group, while none led to a relevant page (0 after a hit)."""

    def sibling_misses_of(self, entries: np.ndarray) -> np.ndarray:
        """:meth:`sibling_misses` of many entries (float64)."""

    def arrival_order_of(self, entry: int) -> int: ...

    def section_lift(self, entry: int) -> float:
        """What the fetched pages of the entry's site section were worth against the crawl's mean (1: no sign)."""

    def section_lifts(self, entries: np.ndarray) -> np.ndarray:
        """:meth:`section_lift` of many entries (float64)."""

    def take_raised_sections(self) -> list[str]:
        """Site sections whose lift rose notably since last asked."""

    def is_queued(self, entry: int) -> bool:
        """Whether an entry is queued (not released, dropped or replaced)."""

    def url_of(self, entry: int) -> str: ...

    def tier_of(self, entry: int) -> int:
        """The tier (request priority) an entry is queued in."""

    def explored_share(self) -> float:
        """The share of the releases so far that went to sites nothing had been released to."""

    def expected_gain(self, entry: int) -> float:
        """The current expected information gain of an entry (sufficiency link values)."""

    def parent_of(self, entry: int) -> int:
        """The page log id of the page an entry's link was found on (-1: none)."""

    def domain_of(self, entry: int) -> int: ...

    def page_domain(self, page_id: int) -> int:
        """The domain id of a logged page."""

    def features(self, entries: np.ndarray) -> np.ndarray:
        """Current feature vectors (n x 11) of entries."""

    def link_tokens(self, entries: np.ndarray) -> np.ndarray:
        """Hashed URL and anchor tokens of entries (n x width; kept for a strategy with
        ``reads_link_tokens`` only)."""

    def next_actions(self, page_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Feature vectors, link priors and validity mask of the kept outlinks of pages."""


class Strategy:
    """Base class: a pool of entry ids per priority tier and a selection rule.

    Subclasses implement :meth:`push`, :meth:`select` and :meth:`count`;
    learning strategies also :meth:`observe` rewards.
    """

    name = "base"
    learns = False
    #: Whether the frontier probes a never-fetched domain with one request first.
    probes_new_domains = True
    #: Whether the frontier gives domains never fetched from a share of the releases
    #: (``ADAPTIVE_NEW_DOMAIN_SHARE``): a focused order's scores cannot judge a site unseen.
    explores_new_domains = True
    #: Whether the order depends on each entry's link prior: then a better link to a
    #: queued URL, found later, takes the place of the first one (see Frontier.take_better_link).
    ranks_by_link_prior = False
    #: Whether the frontier keeps each link's hashed tokens for it (QueuedEntries.link_tokens).
    reads_link_tokens = False
    #: Whether the frontier keeps each entry's site section for it (QueuedEntries.section_lifts).
    reads_section_lifts = False

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        self.frontier = frontier
        self.config = config
        self.rng = rng

    def push(self, tier: int, entry: int) -> None:
        raise NotImplementedError

    def select(self, tier: int, n: int) -> list[Choice]:
        """Remove and return up to ``n`` entries of a tier (at least one if it has any)."""
        raise NotImplementedError

    def count(self, tier: int) -> int:
        raise NotImplementedError

    def reorder(self) -> None:
        """The link priors of queued entries have changed (the frontier valued them anew):
        an order that depends on them is rebuilt. Orders that do not, keep theirs."""

    def rank_blind_links(self, below: float | None) -> None:
        """During the cold start (``below``: ``ADAPTIVE_HOLD_BELOW``; None after it), links whose
        prior is below ``below`` show no sign of relevance: an order by link prior may rank them
        by :func:`blind_rank` rather than by priors that are the first pages' noise."""

    def observe(self, x: np.ndarray, reward: float, page_key: int, leaf: int = -1, prior: float = 0.0) -> None:
        """A released entry (features ``x``, link prior ``prior``, chosen from ``leaf``)
        led to a page of relevance ``reward``, logged as ``page_key`` (-1: no page).

        A strategy that gave its choices ``tokens`` also receives them back, as ``link=``."""

    def stats(self) -> dict:
        return {}

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class LearningStrategy(Strategy):
    """A strategy that learns from rewards and explores with a decaying epsilon:
    ``epsilon_end + (epsilon_start - epsilon_end) * 0.5 ** (observed / half_life)``, less the
    share of releases the frontier already gave to sites never fetched from
    (``ADAPTIVE_NEW_DOMAIN_SHARE``): that share is exploration too, and random picks on top
    of it cost pages (TRES' mean N90 on the small web's dev topics, three runs each: 84.9 with
    them, 76.0 without)."""

    learns = True
    ranks_by_link_prior = True

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        self.n_observed = 0

    @property
    def epsilon(self) -> float:
        c = self.config
        scheduled = c.epsilon_end + (c.epsilon_start - c.epsilon_end) * 0.5 ** (self.n_observed / c.epsilon_half_life)
        return max(0.0, scheduled - self.frontier.explored_share())
