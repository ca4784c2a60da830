"""What a crawl knows about its own sufficiency: the estimator of its knowledge base and
the expected gain of the links it has queued, built from the crawl's configuration.

``CrawlState.knowledge`` holds a :class:`KnowledgeState`; the sufficiency pipeline
updates its estimator with every page the crawl analysed, the scheduler keeps its link
values in step with the frontier. ``scrapy sufficiency`` builds the same estimator with
:func:`estimator_from_config`, so offline numbers equal the crawl's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.sufficiency.estimator import SufficiencyEstimator
from adaptive_spider.sufficiency.linkvalues import LinkValues

if TYPE_CHECKING:
    from adaptive_spider.frontier.domains import DomainProfiles
    from adaptive_spider.settings.config import AdaptiveConfig

logger = logging.getLogger(__name__)


def estimator_from_config(config: AdaptiveConfig, terms: QueryTerms | None = None) -> SufficiencyEstimator:
    """An estimator with the parameters of an :class:`~adaptive_spider.settings.config.AdaptiveConfig`
    (query terms from the config's query and keywords unless given)."""
    if terms is None:
        terms = QueryTerms(config.query, config.keywords, config.keyword_weight)
    return SufficiencyEstimator(
        terms,
        evidence_target=config.sufficiency_evidence,
        n_subsets=config.sufficiency_subsets,
        window=config.sufficiency_window,
        answer_relevance=config.sufficiency_answer_relevance,
        combine=config.sufficiency_combine,
        weights=config.sufficiency_weights,
        field_weights=config.relevance_field_weights,
        k1=config.relevance_k1,
        relevant_threshold=config.relevant_threshold,
        best_pages=config.stop_best_pages,
        harvest_window=config.stop_harvest_window,
        seed=config.seed,
    )


class KnowledgeState:
    """The estimator of a crawl's knowledge base and the expected gain of its queued links."""

    def __init__(self, estimator: SufficiencyEstimator, links: LinkValues) -> None:
        self.estimator = estimator
        self.links = links

    @classmethod
    def from_config(
        cls, config: AdaptiveConfig, terms: QueryTerms, domains: DomainProfiles | None = None
    ) -> KnowledgeState:
        """Built from an :class:`~adaptive_spider.settings.config.AdaptiveConfig` and the crawl's
        query terms and domain profiles."""
        estimator = estimator_from_config(config, terms)

        domain_stats: Callable[[int], tuple[float, float, int, float]] | None = None
        if domains is not None:

            def domain_stats(domain_id: int) -> tuple[float, float, int, float]:
                profile = domains.profiles[domain_id]
                crawl = estimator.relevance_mass / estimator.n_pages if estimator.n_pages else 0.0
                return profile.failure_rate, profile.relevance_sum, profile.pages, crawl

        links = LinkValues(
            terms,
            estimator.view,
            domain_stats,
            parent_weight=config.linkvalue_parent_weight,
            depth_decay=config.linkvalue_depth_decay,
            query_penalty=config.linkvalue_query_penalty,
            new_domain=config.linkvalue_new_domain,
        )
        return cls(estimator, links)

    def best_gain(self, in_flight: Iterable[Any] = ()) -> float:
        """Best expected gain among queued, ready and in-flight links."""
        return self.links.best_pending(in_flight)

    def state_dict(self) -> dict[str, Any]:
        # The link values are rebuilt from the restored frontier, not saved.
        return {"estimator": self.estimator.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        try:
            self.estimator.load_state_dict(state["estimator"])
        except (KeyError, ValueError) as exc:
            logger.warning("Sufficiency: the saved state is not reused (%s); starting afresh", exc)
