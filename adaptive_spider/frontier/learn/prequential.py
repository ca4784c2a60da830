"""Which of a strategy's scorers to trust: the one that has predicted the crawl's rewards best.

A learner is only worth following once it predicts better than what it corrects. TRES
can rank a link three ways, each a learned correction of the one before: the link prior
alone, plus the link classifier's lift, plus the Q-network's correction. On a topic
whose relevant pages are few and well named, the corrections have little to learn from
and mostly add noise to a good prior; on a topic whose pages the query's words miss,
they find what the prior cannot.

:class:`PrequentialSelector` decides between them the way online learners are compared
("prequential", predictive sequential evaluation): each fetched page is first predicted by
every scorer, *before* any of them learns from it, then its reward is recorded. Over the
last ``window`` pages, the scorer whose predictions correlate best with the rewards is
trusted. The simplest is trusted until ``min_pages`` pages (with rewards that differ) have
been seen, and another takes over only when it beats the trusted one by ``margin``: the
pages compared are the ones the trusted scorer ranked first, which narrows its spread of
predictions among them and so its correlation (without the margin, two scorers would take
turns).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)


class PrequentialSelector:
    """Trust, among ``names`` (simplest first), the scorer that predicted recent rewards best.

    Parameters
    ----------
    names : sequence of str
        The scorers, simplest first (early pages and ties go to the simpler).
    window : int
        Pages over which the scorers are compared (the latest ones).
    min_pages : int
        Pages needed before a learned scorer can be trusted.
    margin : float
        How much higher another scorer's correlation with the rewards must be than the trusted one's.
    refresh : int
        Pages between two decisions (a decision costs one correlation per scorer).
    """

    def __init__(
        self,
        names: Sequence[str],
        window: int = 256,
        min_pages: int = 32,
        margin: float = 0.02,
        refresh: int = 8,
    ) -> None:
        if not names:
            raise ValueError("PrequentialSelector needs at least one scorer")
        self.names = tuple(names)
        self.window = int(window)
        self.min_pages = int(min_pages)
        self.margin = float(margin)
        self.refresh = max(1, int(refresh))
        self.predictions = np.zeros((self.window, len(self.names)), dtype=np.float64)
        self.rewards = np.zeros(self.window, dtype=np.float64)
        self.n_seen = 0
        self.trusted = 0
        self.correlations = np.full(len(self.names), np.nan)

    @property
    def trusted_name(self) -> str:
        return self.names[self.trusted]

    def record(self, predictions: Sequence[float], reward: float) -> None:
        """One page: what each scorer predicted for it (before learning from it), and its reward."""
        row = self.n_seen % self.window
        self.predictions[row] = predictions
        self.rewards[row] = reward
        self.n_seen += 1
        if self.n_seen % self.refresh == 0:
            self._decide()

    def _decide(self) -> None:
        n = min(self.n_seen, self.window)
        if n < self.min_pages:
            return
        rewards = self.rewards[:n]
        if np.ptp(rewards) <= 0:
            return  # every reward alike: nothing tells the scorers apart
        self.correlations = np.array([_correlation(self.predictions[:n, i], rewards) for i in range(len(self.names))])
        # The pages are the ones the trusted scorer ranked first: another must beat it clearly.
        best = self.trusted
        challenger = int(np.argmax(self.correlations))  # the simplest of equals
        if self.correlations[challenger] > self.correlations[best] + self.margin:
            best = challenger
        if best != self.trusted:
            logger.info(
                "Ranking links by %s from page %d (correlation with relevance over the last %d pages: %s)",
                self.names[best],
                self.n_seen,
                n,
                ", ".join(f"{name} {value:.3f}" for name, value in zip(self.names, self.correlations)),
            )
        self.trusted = best

    def state_dict(self) -> dict:
        return {
            "predictions": self.predictions.copy(),
            "rewards": self.rewards.copy(),
            "n_seen": self.n_seen,
            "trusted": self.trusted,
        }

    def load_state_dict(self, state: dict) -> None:
        if state["predictions"].shape != self.predictions.shape:
            return  # another window or another set of scorers: start the comparison afresh
        self.predictions = state["predictions"].copy()
        self.rewards = state["rewards"].copy()
        self.n_seen = int(state["n_seen"])
        self.trusted = int(state["trusted"])


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation, 0 for a constant ``x`` (a scorer that tells nothing apart)."""
    x = x - x.mean()
    y = y - y.mean()
    denominator = float(np.sqrt((x @ x) * (y @ y)))
    if denominator <= 0 or not np.isfinite(denominator):
        return 0.0
    return float(x @ y) / denominator
