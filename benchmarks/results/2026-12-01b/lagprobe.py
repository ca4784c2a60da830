import json, statistics
from scrapy import signals

class LagProbe:
    def __init__(self, crawler):
        self.crawler = crawler
        self.rows = []
        crawler.signals.connect(self.received, signal=signals.response_received)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def received(self, response, request, spider):
        engine = self.crawler.engine
        slot = engine.scraper.slot
        self.rows.append((len(engine._slot.inprogress), len(slot.queue), slot.active_size, len(engine.downloader.active)))

    def closed(self, spider, reason):
        cols = list(zip(*self.rows))
        out = {name: (statistics.mean(c), statistics.median(c), max(c)) for name, c in zip(("inprogress", "scrape_queue", "active_bytes", "downloading"), cols)}
        with open("/tmp/s11/lag.jsonl", "a") as f:
            f.write(json.dumps({"n": len(self.rows), **out}) + "\n")
