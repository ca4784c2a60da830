"""Throwaway (2026-11-30, eighth session): each fetched HTML page of a traced harness run's bestfirst
crawls, scored again in fetch order as benchmarks.page_scores scores them, written to
/tmp/s8/pp-TOPIC.json as [fetch, url, score, relevant, title]. Usage (from the checkout):
python benchmarks/results/2026-11-30h/perpage.py RUN_WITH_TRACES x"""
import sys, json, collections, numpy as np
from pathlib import Path
sys.path.insert(0,'.')
import benchmarks.page_scores as ps
run=Path(sys.argv[1]); topic=sys.argv[2]
# monkeypatch score_trace to keep urls
orig=ps.score_trace
def st(urls, t, settings, web, relevant):
    r=orig(urls,t,settings,web,relevant)
    r.urls=[u for u in urls]  # note: html-only filter differs; recompute below
    return r
import numpy as np
from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.relevance.pagetext import html_page_fields
from adaptive_spider.settings.config import AdaptiveConfig
def st2(urls, t, settings, web, relevant):
    config = AdaptiveConfig.from_settings({**settings, "ADAPTIVE_QUERY": t.query, "ADAPTIVE_KEYWORDS": list(t.keywords)})
    state = CrawlState(config)
    wanted = {ps.canonical_url(u) for u in relevant}
    out=[]
    for i,url in enumerate(urls):
        resp=web.get(url)
        for _ in range(5):
            if resp.location is None: break
            resp=web.get(resp.location)
        if not resp.is_html: continue
        f=html_page_fields(resp.body.decode("utf-8","replace"), url)
        out.append((i,url,state.page_relevance(f)[0], ps.canonical_url(url) in wanted, f.title))
    json.dump(out, open(f"/tmp/s8/pp-{t.id}.json","w"))
    return ps.TraceScores(t.id,"",np.array([o[2] for o in out]),np.array([o[3] for o in out]),0.5)
ps.score_trace=st2
ps.scored_traces(run, None, sys.argv[3:], strategy="bestfirst")
