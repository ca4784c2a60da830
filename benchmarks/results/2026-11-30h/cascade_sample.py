"""Throwaway (2026-11-30, eighth session): a sample of one crawl's pages (every relevant page and
1,000 others, seeded) from perpage.py's output, embedded with all-MiniLM-L6-v2 (TOKENS, default
128); AUC and average precision against the labels of the crawl-time BM25 score, the embedding,
half and half, and the cascade (half and half where BM25 >= t, BM25 alone below), with the share
of the crawl's pages the cascade would embed. Usage:
python benchmarks/results/2026-11-30h/cascade_sample.py /tmp/s8/pp-TOPIC.json TOPICS_FILE TOPIC [TOKENS]"""
import sys, json, random, argparse, numpy as np
sys.path.insert(0,'.')
from benchmarks.page_scores import auc, average_precision
from benchmarks.harness.cli import load_web
from benchmarks.harness.topics import load_topics
from adaptive_spider.relevance.embedding import EmbeddingRelevance
from adaptive_spider.relevance.pagetext import html_page_fields
pp_file, topics_file, topic_id = sys.argv[1:4]
tokens = int(sys.argv[4]) if len(sys.argv) > 4 else 128
topic = {t.id: t for t in load_topics(topics_file)}[topic_id]
web = load_web(argparse.Namespace(folder=None, host='site.test', web='big'))
d = json.load(open(pp_file))
rng = random.Random(0)
rel = [x for x in d if x[3]]; non = [x for x in d if not x[3]]
sample = rel + rng.sample(non, min(1000, len(non)))
model = EmbeddingRelevance.from_settings({"ADAPTIVE_QUERY": topic.query, "ADAPTIVE_EMBEDDING_MAX_TOKENS": tokens, "ADAPTIVE_EMBEDDING_HALF": 0.3})
out = []
for i, url, q, r, title in sample:
    resp = web.get(url)
    for _ in range(5):
        if resp.location is None: break
        resp = web.get(resp.location)
    f = html_page_fields(resp.body.decode('utf-8', 'replace'), url)
    out.append((i, url, q, r, model.score(f)))
json.dump(out, open(pp_file.replace('pp-', f'emb{tokens}-'), 'w'))
allq = np.array([x[2] for x in d])
q = np.array([x[2] for x in out]); m = np.array([x[4] for x in out]); lab = np.array([x[3] for x in out])
def show(name, s, share=1.0):
    print(f"{topic_id:16s} {name:14s} AUC {auc(s, lab):.3f} AP {average_precision(s, lab):.3f} embedded {share:.2f}")
show('bm25', q, 0); show('emb', m); show('mix', 0.5*q+0.5*m)
for t in (0.05, 0.1, 0.2, 0.3, 0.4):
    s = np.where(q >= t, 0.5*q+0.5*m, q)
    show(f'cascade {t}', s, float((allq >= t).mean()))
