"""Run Crawl4AI's AdaptiveCrawler on one query and print what it did as one JSON line.

The peer of ``benchmarks/sufficiency_peer.py``. It runs inside a separate
virtualenv that has ``crawl4ai==0.9.5`` (never the project's), HTTP only
(``AsyncHTTPCrawlerStrategy``, no browser), statistical strategy, default
settings unless ``--max-pages`` is given, every request through the offline
web's proxy on 127.0.0.1::

    /work/venvs/crawl4ai/bin/python benchmarks/crawl4ai_runner.py \\
        --proxy http://127.0.0.1:8431 --start-url http://docs.python.test/3/index.html \\
        --query "json encoding decoding"

Only standard-library imports besides crawl4ai, so the project need not be installed there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
import time


async def run(query: str, start_url: str, proxy: str, max_pages: int | None) -> dict:
    from crawl4ai import AdaptiveConfig, AdaptiveCrawler, AsyncWebCrawler, BrowserConfig
    from crawl4ai.async_configs import HTTPCrawlerConfig
    from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy
    from crawl4ai.egress_policy import set_egress_proxy

    set_egress_proxy(proxy)  # the library's own clients (link previews)
    strategy = AsyncHTTPCrawlerStrategy(browser_config=HTTPCrawlerConfig())
    fetched: list[str] = []

    async def through_proxy(url, request_kwargs):
        request_kwargs["proxy"] = proxy
        fetched.append(url)

    strategy.set_hook("before_request", through_proxy)
    config = AdaptiveConfig(strategy="statistical")
    if max_pages:
        config.max_pages = max_pages
    started = time.perf_counter()
    async with AsyncWebCrawler(crawler_strategy=strategy, config=BrowserConfig(verbose=False)) as crawler:
        adaptive = AdaptiveCrawler(crawler, config)
        with contextlib.redirect_stdout(io.StringIO()):
            state = await adaptive.digest(start_url=start_url, query=query)
    seconds = time.perf_counter() - started
    metrics = state.metrics
    crawled = [getattr(result, "url", "") for result in state.knowledge_base]
    return {
        "query": query,
        "pages": len(state.crawled_urls),
        "crawled": crawled,
        "page_fetches": fetched,
        "seconds": round(seconds, 3),
        "confidence": round(float(metrics.get("confidence", 0.0)), 4),
        "coverage": round(float(metrics.get("coverage", 0.0)), 4),
        "consistency": round(float(metrics.get("consistency", 0.0)), 4),
        "saturation": round(float(metrics.get("saturation", 0.0)), 4),
        "stop_reason": stop_reason(state, config),
        "max_pages": config.max_pages,
    }


def stop_reason(state, config) -> str:
    """Which of the AdaptiveCrawler's stop conditions ended the crawl (its own order)."""
    metrics = state.metrics
    if metrics.get("confidence", 0.0) >= config.confidence_threshold:
        return "confidence"
    if len(state.crawled_urls) >= config.max_pages:
        return "max_pages"
    if not state.pending_links:
        return "no_links"
    if metrics.get("saturation", 0.0) >= config.saturation_threshold:
        return "saturation"
    return "min_gain_or_depth"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--query", required=True)
    parser.add_argument("--start-url", required=True)
    parser.add_argument("--proxy", required=True, help="the offline web's proxy (http://127.0.0.1:PORT)")
    parser.add_argument("--max-pages", type=int, help="AdaptiveConfig.max_pages (default: Crawl4AI's own)")
    args = parser.parse_args(argv)
    if not args.proxy.startswith(("http://127.0.0.1:", "http://localhost:")):
        parser.error("--proxy must be a proxy on 127.0.0.1")
    os.environ["http_proxy"] = os.environ["https_proxy"] = args.proxy
    os.environ.setdefault("CRAWL4_AI_BASE_DIRECTORY", os.path.join(os.getcwd(), ".crawl4ai-peer"))
    result = asyncio.run(run(args.query, args.start_url, args.proxy, args.max_pages))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
