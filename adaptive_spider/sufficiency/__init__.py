"""Information sufficiency: when what the crawl fetched answers the query (the self-stop).

- :mod:`~adaptive_spider.sufficiency.metrics`: the formulas (Coverage, Consistency, Saturation, ...);
- :mod:`~adaptive_spider.sufficiency.simhash`: SimHash fingerprints and the near-duplicate index;
- :mod:`~adaptive_spider.sufficiency.pages`: a page as the estimator takes it in (the crawl's analysis, a page item);
- :mod:`~adaptive_spider.sufficiency.estimator`: the incremental estimator of a knowledge base;
- :mod:`~adaptive_spider.sufficiency.linkvalues`: the expected gain of queued links;
- :mod:`~adaptive_spider.sufficiency.knowledge`: both, built from a crawl's configuration;
- :mod:`~adaptive_spider.sufficiency.stopping`: the self-stop's rule (its criteria and the wait for the best pages);
- :mod:`~adaptive_spider.sufficiency.offline`: the metrics of a saved knowledge base.

The public names are importable from here too (``adaptive_spider.sufficiency`` was one
module before 0.2, and projects imported the estimator from it).
"""

from adaptive_spider.sufficiency.estimator import STRATEGIES, SufficiencyEstimator
from adaptive_spider.sufficiency.knowledge import KnowledgeState, estimator_from_config
from adaptive_spider.sufficiency.metrics import COMBINATIONS, COMPONENTS, SufficiencyMetrics
from adaptive_spider.sufficiency.offline import evaluate_knowledge_base, read_knowledge_base
from adaptive_spider.sufficiency.pages import KnowledgePage, is_page_item

__all__ = [
    "COMBINATIONS",
    "COMPONENTS",
    "STRATEGIES",
    "KnowledgePage",
    "KnowledgeState",
    "SufficiencyEstimator",
    "SufficiencyMetrics",
    "estimator_from_config",
    "evaluate_knowledge_base",
    "is_page_item",
    "read_knowledge_base",
]
