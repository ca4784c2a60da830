"""The harness, printing what the gateway-words patch learned (diagnostic; run from the repository root
with `gateway-words.patch` applied): `python benchmarks/results/2026-11-29c/print_gateway_words.py
--web big --topic file-paths --strategies bestfirst --set ADAPTIVE_GATEWAY_WEIGHT=1.0 --out DIR`.

At fetches 500, 1,000, 2,000, 3,000 and the budget it prints the crawl's gateway rate and the 40 words
whose shrunk gateway rate rises most above it (gateways/links). It reads the frontier and changes nothing.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import benchmarks.harness.crawl as harness_crawl  # noqa: E402
from adaptive_spider.frontier import gateways as gateway_module  # noqa: E402  (exists with the patch only)
from benchmarks.harness.cli import main  # noqa: E402

_response_received = harness_crawl.FetchRecorder.response_received


def print_words(recorder) -> None:
    gateways = recorder.crawler.engine._slot.scheduler.frontier.pages.gateways
    if not gateways.n_gateways:
        print("no gateways yet", flush=True)
        return
    rate = gateways.n_gateways / gateways.n_pages
    rows = []
    for word, links in gateways.links.items():
        if links >= gateway_module.MIN_LINKS and len(gateways.sites.get(word, ())) >= getattr(gateway_module, "MIN_SITES", 0):
            found = gateways.gateways.get(word, 0)
            shrunk = (found + gateway_module.PRIOR_LINKS * rate) / (links + gateway_module.PRIOR_LINKS)
            rows.append((shrunk - rate, word, found, links))
    rows.sort(reverse=True)
    words = " ".join(f"{word}={rise:.2f}({found}/{links})" for rise, word, found, links in rows[:40])
    print(f"[{recorder.run.topic} @{len(recorder.run.fetched)}] rate {rate:.3f} gateways "
          f"{gateways.n_gateways}/{gateways.n_pages}: {words}", flush=True)


def response_received(self, response, request, spider):
    _response_received(self, response, request, spider)
    if len(self.run.fetched) in (500, 1000, 2000, 3000, self.budget):
        print_words(self)


harness_crawl.FetchRecorder.response_received = response_received
main(sys.argv[1:])
