"""adaptive_spider: focused, self-stopping Scrapy crawls and search over what was crawled.

Where each concept lives (docs/architecture.md draws the flow of a page through them):

- ``addon``: the one add-on that makes any Scrapy project focused and self-stopping;
- ``settings``: every ``ADAPTIVE_*`` setting, validated once per crawl;
- ``crawl``: the Scrapy adapters (scheduler, middlewares, pipelines, report, crawl state);
- ``frontier``: queued URLs, link features, domain profiles, the JOBDIR journal,
  ``strategies`` (TRES, link groups, baselines) and ``learn`` (regression tree, Q-network);
- ``relevance``: page text, links with their context, query terms and page scores;
- ``sufficiency``: when the fetched pages answer the query (the self-stop);
- ``search``, ``extract``, ``distributed``, ``commands``, ``demo``.
"""

from adaptive_spider import _compat

__version__ = "0.1.0"

_compat.install()
