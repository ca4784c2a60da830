"""Distributed profile: this process is one worker of a crawl shared through Redis.

Start the same command on as many machines as you like, all pointed at one Redis
server; they share the frontier, the duplicate filter, the domain profiles and
the model (see docs/deploy.md):

    SCRAPY_PROJECT=distributed scrapy crawl focused -a query="..." -a start_urls=URL \\
        -s REDIS_URL=redis://redis-host:6379/0

Needs the ``distributed`` extra: ``pip install 'adaptive-spider[distributed]'``.
The settings (the DistributedScheduler, ``REDIS_URL``, ``SCHEDULER_PERSIST``) are the
``DistributedAddon``'s.
"""

from settings_profiles.default import *  # noqa: F403

ADDONS = {"adaptive_spider.profiles.DistributedAddon": 0}
