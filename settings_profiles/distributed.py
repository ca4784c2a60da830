"""Distributed profile: this process is one worker of a crawl shared through Redis.

Start the same command on as many machines as you like, all pointed at one Redis
server; they share the frontier, the duplicate filter, the domain profiles and
the model (see docs/deploy.md):

    SCRAPY_PROJECT=distributed scrapy crawl focused -a query="..." -a start_urls=URL \\
        -s REDIS_URL=redis://redis-host:6379/0

Needs the ``distributed`` extra: ``pip install 'adaptive-spider[distributed]'``.
"""

from settings_profiles.default import *  # noqa: F403

SCHEDULER = "adaptive_spider.distributed.scheduler.DistributedScheduler"
# scrapy-redis' connection settings; every worker of a crawl names the same server.
REDIS_URL = "redis://127.0.0.1:6379/0"
# Delete the crawl's keys when its last worker leaves a stopped crawl.
SCHEDULER_PERSIST = False
