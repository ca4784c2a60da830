"""Several workers, one focused crawl: a learned frontier shared through Redis.

Every worker (a ``scrapy crawl`` process, on one machine or several) runs the
:class:`~adaptive_spider.distributed.scheduler.DistributedScheduler` against the
same Redis server and key prefix. Together they share:

* the queued requests, in one Redis sorted set ordered by the learned priority
  each worker's model gave them when they were found
  (:class:`~adaptive_spider.distributed.queue.SharedQueue`); a worker takes a
  small batch at a time and its own strategy orders the batch, with current
  features, before release;
* the duplicate filter (scrapy-redis' ``RFPDupeFilter``), so no URL is queued
  twice, and start URLs, so each is fetched by one worker only;
* the domain profiles, the relevance scorer's term statistics and the
  parameters of the model, synchronised every ``ADAPTIVE_DISTRIBUTED_SYNC_INTERVAL``
  seconds (:mod:`adaptive_spider.distributed.sync`);
* the crawl's stop: the first worker to stop the crawl records why, once, and
  the others follow (:class:`~adaptive_spider.distributed.coordination.WorkerRegistry`).

Enable it with the ``distributed`` settings profile
(``SCRAPY_PROJECT=distributed scrapy crawl focused ...``) or, in any project,
``SCHEDULER = "adaptive_spider.distributed.scheduler.DistributedScheduler"`` next
to the add-on. It needs the ``distributed`` extra (scrapy-redis and redis).
"""
