"""A throwaway diagnostic (2026-11-29i, not part of the package): every PROBE_EVERY responses,
the lift of one site section (SEC, Java's java.util.concurrent package), the query expansion's
terms, the best-keyed queued links of docs.oracle.test, and each watched link's prior, sibling
misses and key; and the relevance of every docs.oracle.test page. It reads engine and frontier
internals. (Its "lift" column reads the vectorised section lifts, which bestfirst does not keep:
1.00 there; the section's own lift is on the "==" line.) Run from the project's root, e.g.:

    PYTHONPATH=benchmarks/results/2026-11-29i PROBE_OUT=/tmp/probe.txt PROBE_EVERY=250 \
    PROBE_URLS='java/util/concurrent/(Future|ExecutorService|CompletableFuture)\.html' \
    python -m benchmarks.harness --web big --topic threads-sync --strategies bestfirst \
        --budget 3000 --traces --set 'EXTENSIONS={"probe_sections.Probe": 900}' --out /tmp/probe-ts
"""
import os, re
import numpy as np
from scrapy import signals
from adaptive_spider.frontier.strategies.base import focus_key
SEC = "docs.oracle.test/en/java/javase/17/docs/api/java.base/java/util/concurrent/"
class Probe:
    def __init__(self, crawler):
        self.crawler = crawler; self.n = 0
        self.every = int(os.environ.get("PROBE_EVERY", "250"))
        self.watch = re.compile(os.environ["PROBE_URLS"])
        self.out = open(os.environ.get("PROBE_OUT", "/tmp/probe.txt"), "a")
        crawler.signals.connect(self.response, signals.response_received)
        crawler.signals.connect(self.item, signals.item_scraped)
    @classmethod
    def from_crawler(cls, crawler): return cls(crawler)
    def item(self, item, response, spider):
        if "oracle" in response.url:
            d = dict(item) if hasattr(item, 'keys') else {}
            print(f"ITEM {self.n} {response.url.split('/api/')[-1]} rel={d.get('relevance', d.get('score'))}", file=self.out)
    def response(self, response, request, spider):
        self.n += 1
        if "oracle" in response.url:
            print(f"RESP {self.n} {response.url.split('/api/')[-1]}", file=self.out)
        if self.n % self.every: return
        sched = self.crawler.engine._slot.scheduler
        fr = sched.frontier; st = fr.strategy
        live = fr.store.live_ids()
        pri = fr.priors(live).astype(float)
        mis = fr.sibling_misses_of(live)
        lif = fr.section_lifts(live)
        keys = focus_key(pri, mis, lif, st.patience)
        secs = fr.pages.sections
        print("   expansion:", sched.state.expansion.terms[:20], file=self.out)
        print(f"== {self.n} live={len(live)} sec lift={secs.lift_of(SEC):.2f} count={secs.counts.get(SEC)} sum={secs.sums.get(SEC,0):.2f} crawlmean={secs.total/max(1,secs.n_pages):.3f} key100={np.sort(keys)[-100]:.3f} key500={np.sort(keys)[-500] if len(keys)>500 else 0:.3f}", file=self.out)
        order = np.argsort(-keys)
        orc = [(fr.url_of(int(live[i])).split('/api/')[-1], round(float(keys[i]),3), round(float(pri[i]),3), int(mis[i]), round(float(lif[i]),2)) for i in order[:3000] if 'oracle' in fr.url_of(int(live[i]))][:8]
        print("   top oracle:", orc, file=self.out)
        pos = {int(e): i for i, e in enumerate(live)}
        for url, entry in list(fr.queued_urls.items()):
            if self.watch.search(url):
                i = pos.get(int(entry))
                if i is None: continue
                k = keys[i]
                print(f"   {url.split('/api/')[-1]} prior={pri[i]:.3f} misses={mis[i]:.1f} lift={lif[i]:.2f} key={k:.3f} rank={int((keys > k).sum())}", file=self.out)
        self.out.flush()
