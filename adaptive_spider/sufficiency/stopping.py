"""The self-stop's rule: after each page, which criterion ends the crawl, if any.

:class:`StopRule` is asked once per page, after the page joined the estimator, and
answers with the first of ``ADAPTIVE_STOP_CRITERIA`` that holds:

- ``sufficient``: IS(K, Q) >= ``ADAPTIVE_STOP_THRESHOLD``;
- ``plateau``: IS gained less than ``ADAPTIVE_STOP_PLATEAU_EPSILON`` over the last
  ``ADAPTIVE_STOP_PLATEAU_WINDOW`` *promising* pages (fetched with an expected gain of at
  least ``ADAPTIVE_STOP_MIN_GAIN``; without link values every page is promising);
- ``no_promising_links``: the best expected gain of a pending link stayed below
  ``ADAPTIVE_STOP_MIN_GAIN`` for ``ADAPTIVE_STOP_PATIENCE`` pages in a row.

None fires before ``ADAPTIVE_STOP_MIN_PAGES`` pages, nor while the crawl still finds pages
near its best (the estimator's ``best_settled``, ``ADAPTIVE_STOP_SETTLE``, and
``harvest_settled``, ``ADAPTIVE_STOP_HARVEST_WINDOW``): a criterion that holds then is only
remembered in :attr:`StopRule.held`. The crawl's
:class:`~adaptive_spider.crawl.pipelines.SufficiencyPipeline` and ``scrapy sufficiency``
(offline, without a frontier) use the same rule, so a saved knowledge base says where its
crawl stopped.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adaptive_spider.settings.config import AdaptiveConfig
    from adaptive_spider.sufficiency.estimator import SufficiencyEstimator


class StopRule:
    """The stop criteria and the wait for the best pages, page by page."""

    def __init__(self, config: AdaptiveConfig, estimator: SufficiencyEstimator) -> None:
        self.config = config
        self.estimator = estimator
        #: The criterion that held last while the best pages had not settled (None: none yet).
        self.held: str | None = None
        self._low_gain_pages = 0
        # IS after each promising page, for the plateau criterion.
        self._promising: deque[float] = deque(maxlen=config.stop_plateau_window + 1)

    def after_page(self, *, promising: bool = True, low_gain: bool = False) -> str | None:
        """The criterion that stops the crawl after the page the estimator took last, or None.

        ``promising``: the page was fetched with an expected gain of at least
        ``ADAPTIVE_STOP_MIN_GAIN`` (always, for a crawl without link values); ``low_gain``:
        the best expected gain of a pending link is below it now.
        """
        config = self.config
        metrics = self.estimator.metrics()
        if promising:
            self._promising.append(metrics.sufficiency)
        # Counted on every page, so PATIENCE means consecutive pages.
        self._low_gain_pages = self._low_gain_pages + 1 if low_gain else 0
        if metrics.pages < config.stop_min_pages:
            return None
        reason = self._criterion(metrics.sufficiency)
        if reason is None or self.settled():
            return reason
        self.held = reason
        return None

    def _criterion(self, sufficiency: float) -> str | None:
        criteria = self.config.stop_criteria
        if "sufficient" in criteria and sufficiency >= self.config.stop_threshold:
            return "sufficient"
        if "plateau" in criteria and self.plateau():
            return "plateau"
        if "no_promising_links" in criteria and self._low_gain_pages >= self.config.stop_patience:
            return "no_promising_links"
        return None

    def plateau(self) -> bool:
        """IS grew by less than epsilon over the last WINDOW promising pages."""
        history = self._promising
        return len(history) == history.maxlen and history[-1] - history[0] < self.config.stop_plateau_epsilon

    def settled(self) -> bool:
        """Whether the crawl no longer finds pages near its best: none joined the best pages
        lately (``ADAPTIVE_STOP_SETTLE``), and they no longer come at their best pace
        (``ADAPTIVE_STOP_HARVEST_WINDOW``, ``ADAPTIVE_STOP_HARVEST_DROP``)."""
        config = self.config
        estimator = self.estimator
        return estimator.best_settled(config.stop_settle, config.stop_min_pages) and estimator.harvest_settled(
            config.stop_harvest_drop
        )

    def settled_page(self) -> int:
        """The page count from which the best pages, as they are now, count as settled."""
        return self.estimator.settled_page(self.config.stop_settle, self.config.stop_min_pages)
