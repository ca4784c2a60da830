"""A throwaway diagnostic (2026-11-29h, not part of the package): where a watched link stands in
the frontier (its prior, sibling misses, section lift, key and rank among the queued links, and,
once released, whether the downloader still holds it). It reads engine and frontier internals.
Run from the project's root, e.g.:

    PYTHONPATH=benchmarks/results/2026-11-29h PROBE_OUT=/tmp/probe.txt PROBE_EVERY=100000 \
    PROBE_URLS='java\.util\.logging/package-summary|java\.logging/module-summary' \
    python -m benchmarks.harness --web big --topic logging --strategies bestfirst --no-warmup \
        --budget 1400 --set 'EXTENSIONS={"probe_ext.Probe": 900}' --out /tmp/probe-logging

(the package URL it follows after the module page answers is written in ``response``).
"""
import os, re, sys
import numpy as np
from scrapy import signals
from adaptive_spider.frontier.strategies.base import focus_key


class Probe:
    def __init__(self, crawler):
        self.crawler = crawler
        self.n = 0
        self.every = int(os.environ.get("PROBE_EVERY", "100"))
        self.watch = re.compile(os.environ["PROBE_URLS"])
        self.out = open(os.environ.get("PROBE_OUT", "/tmp/probe.txt"), "a")
        crawler.signals.connect(self.response, signals.response_received)
        for name in ("request_scheduled", "request_dropped", "request_reached_downloader", "request_left_downloader"):
            crawler.signals.connect(self._event(name), getattr(signals, name))

    def _event(self, name):
        def handler(request, spider=None, **kw):
            if self.watch.search(request.url):
                print(f"EVENT {name} at {self.n}: {request.url}", file=self.out)
                self.out.flush()
        return handler

    def wrap(self):
        sched = self.crawler.engine._slot.scheduler
        orig = sched.enqueue_request
        probe = self
        def enqueue(request):
            ok = orig(request)
            if probe.watch.search(request.url):
                print(f"ENQUEUE at {probe.n}: {request.url} -> {ok} queued={sched.frontier.queued_urls.get(request.url)}", file=probe.out)
                probe.out.flush()
            return ok
        sched.enqueue_request = enqueue
        spider = self.crawler.spider
        orig_parse = spider.parse
        def parse(response):
            outs = list(orig_parse(response) or [])
            if probe.watch.search(response.url):
                urls = [getattr(o, "url", None) for o in outs]
                print(f"PARSE at {probe.n}: {response.url} yields {len(outs)}: {[u for u in urls if u and 'logging' in u]}", file=probe.out)
                probe.out.flush()
            return outs
        spider.parse = parse

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def response(self, response, request, spider):
        self.n += 1
        if self.n == 1:
            self.wrap()
        sched = self.crawler.engine._slot.scheduler
        pkg = "http://docs.oracle.test/en/java/javase/17/docs/api/java.logging/java/util/logging/package-summary.html"
        if getattr(self, "armed", 0) and self.armed < 800:
            self.armed += 1
            fr = sched.frontier
            e = fr.queued_urls.get(pkg)
            if e is None and self.armed % 20 == 0:
                eng = self.crawler.engine
                inprog = [r for r in eng._slot.inprogress if r.url == pkg]
                dl = eng.downloader
                sl = dl.slots.get("docs.oracle.test")
                slot_info = None
                if sl is not None:
                    slot_info = dict(queue=len(sl.queue), active=len(sl.active), transferring=len(sl.transferring), delay=sl.delay, conc=sl.concurrency, inq=any(r.url == pkg for r, _ in sl.queue), inact=any(r.url == pkg for r in sl.active))
                ready = any(r.url == pkg for r, _ in sched.ready)
                print(f"  after {self.n}: inprogress={bool(inprog)} ready={ready} slot={slot_info} dl_active={len(dl.active)}", file=self.out)
            if e is not None and self.armed % 10 == 0:
                st = fr.strategy
                live = fr.store.live_ids()
                pri = fr.priors(live).astype(float)
                mis = fr.sibling_misses_of(live)
                lif = fr.section_lifts(live)
                keys = focus_key(pri, mis, lif, st.patience)
                k = st.key_of(e)
                parked = {x for heap in fr.parked.values() for (_, _, _, x) in heap}
                deferred = {c.entry for _, c in fr.slow_deferred}
                waiting = {c.entry for lst in fr.waiting.values() for _, c in lst}
                inflight = sum(1 for r in sched._requests_in_flight() if "oracle" in r.url)
                print(f"  check {self.n}: prior={fr.prior_of(e):.3f} misses={fr.sibling_misses(e)} lift={fr.section_lift(e):.2f} key={k:.3f} rank={(keys > k).sum()} of {len(live)} parked={e in parked} deferred={e in deferred} waiting={e in waiting} oracle_inflight={inflight} live={fr.store.live[e]}", file=self.out)
        if "module-summary" in response.url and "java.logging" in response.url:
            self.armed = 1
        if self.watch.search(response.url):
            print(f"EVENT response at {self.n}: {response.url} {response.status}", file=self.out)
        if self.n % self.every:
            return
        sched = self.crawler.engine._slot.scheduler
        fr = sched.frontier
        st = fr.strategy
        live = fr.store.live_ids()
        if not len(live):
            return
        pri = fr.priors(live).astype(float)
        mis = fr.sibling_misses_of(live) if getattr(st, "patience", 0) else np.zeros(len(live))
        lif = fr.section_lifts(live) if getattr(st, "lifts", False) else np.ones(len(live))
        keys = focus_key(pri, mis, lif, getattr(st, "patience", 0.0))
        inflight = {}
        try:
            for r in sched._requests_in_flight():
                h = r.url.split("/")[2]
                inflight[h] = inflight.get(h, 0) + 1
        except Exception as e:
            inflight = {"err": str(e)}
        parked = {e for heap in fr.parked.values() for (_, _, _, e) in heap}
        order = np.argsort(-keys)
        top = [fr.url_of(int(live[i])) for i in order[:5]]
        print(f"== {self.n} live={len(live)} key10={keys[order[min(9,len(order)-1)]]:.3f} key100={keys[order[min(99,len(order)-1)]]:.3f} inflight={inflight}", file=self.out)
        print("   top:", [(u, round(float(keys[order[i]]), 3)) for i, u in enumerate(top)], file=self.out)
        pos = {int(e): i for i, e in enumerate(live)}
        deferred = {c.entry for _, c in fr.slow_deferred}
        waiting = {c.entry for lst in fr.waiting.values() for _, c in lst}
        for url, entry in list(fr.queued_urls.items()):
            if self.watch.search(url):
                i = pos.get(int(entry))
                if i is None:
                    print(f"   {url} entry={entry} NOT LIVE", file=self.out)
                    continue
                k = keys[i]
                rank = int((keys > k).sum())
                print(f"   {url} prior={pri[i]:.3f} misses={mis[i]:.0f} lift={lif[i]:.2f} key={k:.3f} strat_key={st.key_of(entry):.3f} rank={rank} parked={entry in parked} deferred={entry in deferred} waiting={entry in waiting} tier={fr.tier_of(entry)}", file=self.out)
        self.out.flush()
