"""Focus parity: does any Scrapy project with the add-on crawl as well as ``scrapy crawl focused``?

    python benchmarks/focus_parity.py                     # the four dev topics, 1000 pages, once each
    python benchmarks/focus_parity.py --topic django-models --repeat 3
    python benchmarks/focus_parity.py --web big --topic http-programming,logging --configs focused,plain

On each topic of the offline web (``../shared/webbench/topics-dev.json``), from its seeds
(``http://hub.test/``), or of the big web with ``--web big`` (its dev topics and their labels
file, a 5000-page budget), three crawls with the same settings: the default profile's crawl
settings, the query only (no keywords), Scrapy's free concurrent order, no self-stop, a
fetch budget, the same ``allowed_domains`` (the offline web's hosts):

* ``focused``: ``scrapy crawl focused -a query=...`` (the default profile's add-on);
* ``plain``: a plain ``scrapy.Spider`` yielding ``{"url": ...}`` and ``response.follow(link)``
  for every ``LinkExtractor()`` link, with ``ADDONS = {AdaptiveAddon: 0}`` and ``ADAPTIVE_QUERY``;
* ``crawlspider``: a ``CrawlSpider`` with ``Rule(LinkExtractor(), callback=..., follow=True)``,
  with the same two settings;
* ``plain-stock``: the plain spider without the add-on, on Scrapy's own scheduler
  (breadth-first, as the harness's ``stock``): what the project costs before the add-on.
  ``plain`` against it is the add-on's own cost on that project (``speed_vs_plain_stock``).

Prints per topic N90, R@1000 and pages/s of each, and the ratios of ``plain`` and
``crawlspider`` to ``focused`` measured in the same run (N90 ratio: lower is better, target
≤ 1.15; pages/s ratio: target ≥ 0.95); writes them to ``--out`` (JSON). The free order
follows download timing, so a rerun differs: ``--repeat`` crawls each configuration more
often (interleaved), and the table then shows the median of each metric.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python benchmarks/focus_parity.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scrapy
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import Settings
from scrapy.spiders import CrawlSpider, Rule

from adaptive_spider.settings.config import default_values
from adaptive_spider.settings.table import STRATEGIES
from benchmarks.harness.cli import (
    DEFAULT_BUDGET,
    BadInput,
    _log_to_file,
    _use_proxy,
    compute_labels,
    labels_from_file,
    run_metadata,
    run_reactor,
    start_server,
    warm_server,
)
from benchmarks.harness.crawl import INTERRUPTED_REASON, STOCK, CrawlOptions, crawl_settings, crawl_to_budget, stop
from benchmarks.harness.metrics import Run
from benchmarks.harness.progress import Progress
from benchmarks.harness.topics import Labeler, Topic, TopicsError, load_topics
from benchmarks.webbench.webs import SPEC_FOLDERS, WEBS, open_web, spec_folder
from spiders.focused import FocusedSpider

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = PROJECT / "benchmarks" / "results" / "focus_parity.json"
ADDON = {"adaptive_spider.addon.AdaptiveAddon": 0}
CONFIGS = ("focused", "plain", "crawlspider", "plain-stock")
#: The plain project without the add-on, and the configuration measured against it.
PLAIN_STOCK = "plain-stock"
PLAIN = "plain"
REFERENCE = "focused"
#: Targets of issue 15: N90 at most this times focused's, pages/s at least this times focused's.
N90_TARGET = 1.15
SPEED_TARGET = 0.95
#: What a user gets: the strategy of the default settings.
DEFAULT_STRATEGY = default_values()["ADAPTIVE_STRATEGY"]
METRICS = ("N50", "N90", "R@1000", "pages_per_s", "pages_per_cpu_s")


class PlainSpider(scrapy.Spider):
    """A project's spider as written without adaptive_spider: every link of every page."""

    name = "plain"

    def __init__(self, start_urls: str = "", allowed_domains: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = start_urls.split(",")
        self.allowed_domains = allowed_domains.split(",")

    def parse(self, response):
        yield {"url": response.url}
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link, callback=self.parse)


class PagesCrawlSpider(CrawlSpider):
    """A project's CrawlSpider as written without adaptive_spider: one rule, follow everything."""

    name = "crawlspider"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, start_urls: str = "", allowed_domains: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = start_urls.split(",")
        self.allowed_domains = allowed_domains.split(",")

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url}


SPIDERS = {"focused": FocusedSpider, "plain": PlainSpider, "crawlspider": PagesCrawlSpider, PLAIN_STOCK: PlainSpider}


def config_settings(config: str, topic: Topic, options: CrawlOptions, strategy: str = DEFAULT_STRATEGY) -> Settings:
    """The benchmark's settings of ``focused`` (the harness's, free order, with the strategy
    measured: the default unless ``--strategy`` names another); a project's spider gets the
    same with the add-on alone in ADDONS and the query as ADAPTIVE_QUERY."""
    if config == PLAIN_STOCK:
        return crawl_settings(STOCK, options)
    settings = crawl_settings(strategy, options)
    if config != "focused":
        settings.update({"ADDONS": ADDON, "ADAPTIVE_QUERY": topic.query}, priority="cmdline")
    return settings


def spider_arguments(config: str, topic: Topic, hosts: list[str]) -> dict[str, str]:
    arguments = {"start_urls": ",".join(topic.seeds), "allowed_domains": ",".join(hosts)}
    if config == "focused":
        arguments["query"] = topic.query  # the query only: no keywords, for every configuration
    return arguments


async def run_config(
    topic: Topic, config: str, options: CrawlOptions, hosts: list[str], strategy: str = DEFAULT_STRATEGY, **hooks
) -> Run:
    crawler = CrawlerRunner(config_settings(config, topic, options, strategy)).create_crawler(SPIDERS[config])
    return await crawl_to_budget(
        crawler, Run(topic.id, config), options.budget, spider_arguments(config, topic, hosts), **hooks
    )


class Session:
    """Every crawl of the benchmark, in turn; Ctrl-C stops the running one and keeps the rest."""

    def __init__(self, topics, labels, configs, options, repeat, hosts, progress, warmup=True,
                 strategy=DEFAULT_STRATEGY):  # fmt: skip
        self.topics, self.labels, self.configs, self.strategy = topics, labels, configs, strategy
        self.options, self.repeat, self.hosts, self.progress = options, repeat, hosts, progress
        self.warmup = warmup
        self.runs: dict[str, dict[str, list[Run]]] = {topic.id: {c: [] for c in configs} for topic in topics}
        self.crawler = None
        self.interrupted = False

    def interrupt(self) -> None:
        if not self.interrupted:
            self.interrupted = True
            self.progress.note("interrupted: stopping the running crawl")
            if self.crawler is not None:
                stop(self.crawler, INTERRUPTED_REASON)

    def _started(self, crawler) -> None:
        self.crawler = crawler

    async def run(self) -> None:
        if self.warmup:
            topic = self.topics[0]
            options = CrawlOptions(**{**vars(self.options), "budget": min(100, self.options.budget)})
            for config in self.configs:  # every spider's first calls, unmeasured
                self.progress.note(f"warm-up: {options.budget} pages of {topic.id} with {config}, not measured")
                await run_config(topic, config, options, self.hosts, self.strategy, on_crawler=self._started)
        for topic in self.topics:
            relevant = self.labels[topic.id]
            for repeat in range(self.repeat):  # interleaved: a slower moment of the machine hits every config
                for config in self.configs:
                    if self.interrupted:
                        return
                    self.progress.begin(topic.id, config, repeat, self.repeat, relevant)
                    run = await run_config(
                        topic, config, self.options, self.hosts, self.strategy,
                        on_fetch=self.progress.update, on_crawler=self._started,
                    )  # fmt: skip
                    self.crawler = None
                    if run.finish_reason == INTERRUPTED_REASON:
                        return
                    self.runs[topic.id][config].append(run)
                    self.progress.end(run, run.metrics(relevant, self.options.budget))


def _mean(values, digits: int):
    values = [v for v in values if v is not None]
    return round(statistics.mean(values), digits) if values else None


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(session: Session) -> dict:
    """Per topic and config: the median of each metric over the repeats (an N never reached
    counts as budget + 1), and the ratios against focused; the mean over topics of each."""
    budget = session.options.budget
    topics: dict = {}
    for topic in session.topics:
        relevant = session.labels[topic.id]
        per_config: dict = {}
        for config, runs in session.runs[topic.id].items():
            if not runs:
                continue
            measured = [run.metrics(relevant, budget) for run in runs]
            row: dict = {}
            for name in METRICS:
                values = [m[name] for m in measured]
                if name in ("N50", "N90"):
                    values = [budget + 1 if v is None else v for v in values]
                row[name] = _median(values)
            row["runs"] = [
                {
                    **{name: m[name] for name in (*METRICS, "pages", "finish_reason")},
                    "seconds": round(r.seconds, 2),
                    "cpu_seconds": round(r.cpu_seconds, 2),
                }
                for m, r in zip(measured, runs)
            ]
            per_config[config] = row
        _add_ratios(per_config)
        topics[topic.id] = {"query": topic.query, "relevant": len(relevant), "configs": per_config}
    mean: dict = {}
    for config in session.configs:
        rows = [t["configs"][config] for t in topics.values() if config in t["configs"]]
        if rows:
            mean[config] = {name: _mean([r[name] for r in rows], 3 if name.startswith("R@") else 1) for name in METRICS}
            for ratio in ("n90_vs_focused", "speed_vs_focused", "cpu_speed_vs_focused"):
                values = [r[ratio] for r in rows if r.get(ratio) is not None]
                if values:
                    mean[config][ratio] = round(statistics.mean(values), 3)
    _add_ratios(mean, keep=True)
    return {"topics": topics, "mean": mean}


def _add_ratios(per_config: dict, keep: bool = False) -> None:
    plain, plain_stock = per_config.get(PLAIN), per_config.get(PLAIN_STOCK)
    if plain is not None and plain_stock is not None:  # the add-on's own cost on the same project
        plain["speed_vs_plain_stock"] = _ratio(plain["pages_per_s"], plain_stock["pages_per_s"])
        plain["cpu_speed_vs_plain_stock"] = _ratio(plain["pages_per_cpu_s"], plain_stock["pages_per_cpu_s"])
    reference = per_config.get(REFERENCE)
    if reference is None:
        return
    for config, row in per_config.items():
        if config == REFERENCE:
            continue
        # For the mean: the ratio of the means (the per-topic ratios' mean is kept beside it).
        if keep:
            row["n90_mean_vs_focused"] = _ratio(row["N90"], reference["N90"])
            row["speed_mean_vs_focused"] = _ratio(row["pages_per_s"], reference["pages_per_s"])
            row["cpu_speed_mean_vs_focused"] = _ratio(row["pages_per_cpu_s"], reference["pages_per_cpu_s"])
        else:
            row["n90_vs_focused"] = _ratio(row["N90"], reference["N90"])
            row["speed_vs_focused"] = _ratio(row["pages_per_s"], reference["pages_per_s"])
            row["cpu_speed_vs_focused"] = _ratio(row["pages_per_cpu_s"], reference["pages_per_cpu_s"])


def _ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def table(summary: dict, markdown: bool = False) -> str:
    head = ["topic", "spider", "N90", "R@1000", "pages/s", "pages/cpu-s", "N90 ×focused", "pages/s ×focused",
            "pages/cpu-s ×focused"]  # fmt: skip
    rows = []
    for topic_id, topic in summary["topics"].items():
        for config, row in topic["configs"].items():
            rows.append([topic_id, config, row["N90"], row["R@1000"], row["pages_per_s"], row["pages_per_cpu_s"],
                         row.get("n90_vs_focused", ""), row.get("speed_vs_focused", ""),
                         row.get("cpu_speed_vs_focused", "")])  # fmt: skip
    for config, row in summary["mean"].items():
        rows.append(["mean", config, row["N90"], row["R@1000"], row["pages_per_s"], row["pages_per_cpu_s"],
                     row.get("n90_mean_vs_focused", ""), row.get("speed_mean_vs_focused", ""),
                     row.get("cpu_speed_mean_vs_focused", "")])  # fmt: skip
    cells = [[_cell(value) for value in row] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(lines)
    widths = [max(len(str(h)), *(len(row[i]) for row in cells)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parse_costs(web, pages: int = 300) -> dict[str, float]:
    """CPU milliseconds per page of each spider's own link handling and of the middleware's,
    on the first ``pages`` HTML pages a breadth-first walk from the hub reaches (no crawl):
    where the pages/s of a project's spider goes that the add-on cannot save."""
    from scrapy.http import HtmlResponse, Request
    from scrapy.utils.test import get_crawler

    from adaptive_spider.crawl.spidermiddlewares import RelevanceMiddleware
    from benchmarks.webbench.linkgraph import crawl as breadth_first

    urls = list(breadth_first(web, "http://hub.test/", max_fetches=pages * 2).pages)[:pages]
    bodies = [(url, web.get(url).body) for url in urls]
    extractor = LinkExtractor()

    def plain(response):  # PlainSpider.parse's links
        return [response.follow(link) for link in extractor.extract_links(response)]

    def focused(middleware):
        def parse(response):  # FocusedSpider.parse's links
            return [Request(link.url) for link in middleware.state.links_of(response).followable]

        return parse

    def cpu_ms(step) -> float:
        responses = [HtmlResponse(url, body=body, encoding="utf-8", request=Request(url)) for url, body in bodies]
        for response in responses:
            _ = response.selector  # parsed before the clock: every spider shares that parse
        started = time.process_time()
        for response in responses:
            step(response)
        return round(1000 * (time.process_time() - started) / len(responses), 2)

    def middleware() -> RelevanceMiddleware:
        return RelevanceMiddleware.from_crawler(get_crawler(settings_dict={"ADAPTIVE_QUERY": "python asyncio"}))

    def through(middleware, spider_links):
        def step(response):
            middleware.process_spider_input(response)
            list(middleware.process_spider_output(response, spider_links(response)))

        return step

    plain_mw, focused_mw = middleware(), middleware()
    return {
        "pages": len(bodies),
        "plain_spider_links_ms": cpu_ms(plain),
        "focused_spider_links_ms": cpu_ms(focused(middleware())),
        "plain_spider_and_middleware_ms": cpu_ms(through(plain_mw, plain)),
        "focused_spider_and_middleware_ms": cpu_ms(through(focused_mw, focused(focused_mw))),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python benchmarks/focus_parity.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--web", choices=WEBS, default="small",
        help="the small web (default) or the big one (53 sites, slow and failing hosts; labels from its file)",
    )  # fmt: skip
    parser.add_argument(
        "--topics",
        help="topics JSON file (default: the web's topics-dev.json in ../shared/webbench or ../shared/bigweb)",
    )
    parser.add_argument("--topic", help="comma-separated topic ids (default: all)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, from {', '.join(CONFIGS)}")
    parser.add_argument("--budget", type=int, help="pages fetched per crawl (default 1000; 5000 with --web big)")
    parser.add_argument("--repeat", type=int, default=1, help="crawls per topic and configuration (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="ADAPTIVE_SEED (default 0)")
    parser.add_argument(
        "--strategy", default=DEFAULT_STRATEGY,
        help=f"ADAPTIVE_STRATEGY of every configuration but plain-stock (default: the default, {DEFAULT_STRATEGY})",
    )  # fmt: skip
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"results JSON (default {DEFAULT_OUT.relative_to(PROJECT)})"
    )
    parser.add_argument("--no-warmup", action="store_true", help="skip the server's and each spider's warm-up")
    parser.add_argument(
        "--parse-cost", action="store_true",
        help="no crawls: CPU ms per page of each spider's link handling and of the middleware (300 pages)",
    )  # fmt: skip
    parser.add_argument(
        "--progress-interval", type=float, default=5.0, help="seconds between progress lines off a terminal"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    from benchmarks.webbench.web import MissingPackagesError

    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    labels_from = "file" if args.web == "big" else "rules"
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    try:
        if not configs or any(c not in CONFIGS for c in configs):
            raise BadInput(f"--configs: choose from {', '.join(CONFIGS)}")
        if args.strategy not in STRATEGIES and "." not in args.strategy:
            raise BadInput(
                f"--strategy: unknown {args.strategy}; choose from {', '.join(STRATEGIES)} or a dotted class path"
            )
        if args.topics is None:
            shared = spec_folder(args.web)
            args.topics = str(shared / "topics-dev.json") if shared else None
        if args.budget is None:
            args.budget = DEFAULT_BUDGET[args.web]
        if args.budget < 1 or args.repeat < 1:
            raise BadInput("--budget and --repeat must be >= 1")
        if not args.topics:
            folder = SPEC_FOLDERS[args.web]
            raise BadInput(f"--topics: no topics file given and ../shared/{folder}/topics-dev.json not found")
        topics = load_topics(args.topics, [t.strip() for t in args.topic.split(",")] if args.topic else None)
        try:
            web = open_web(args.web)
        except MissingPackagesError as error:
            raise BadInput(str(error)) from None
        if args.parse_cost:
            print(json.dumps(parse_costs(web), indent=1))
            return 0
        labeler = Labeler(web)
        if labels_from == "file":  # the big web's labels file: walking 104k pages' links takes minutes
            labels = labels_from_file(labeler, topics, None, args.topics)
        else:
            print(f"labels: walking the link graph from the seeds of {len(topics)} topic(s)", file=sys.stderr)
            labels = compute_labels(labeler, topics, None, args.topics)
    except (BadInput, TopicsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    hosts = sorted({site.host for site in web.sites} | {"hub.test"})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = PROJECT / "benchmarks" / "out" / "focus_parity.log"  # Scrapy's warnings; not a result
    log.parent.mkdir(parents=True, exist_ok=True)
    _log_to_file(log)
    options = CrawlOptions(budget=args.budget, seed=args.seed, order="free")
    progress = Progress(len(topics) * len(configs) * args.repeat, args.budget, interval=args.progress_interval)
    session = Session(
        topics,
        labels,
        configs,
        options,
        args.repeat,
        hosts,
        progress,
        warmup=not args.no_warmup,
        strategy=args.strategy,
    )
    # The commit as measured: read before the crawls, not after (edits during a long run).
    meta = run_metadata(
        argparse.Namespace(web=args.web, topics=args.topics, labels_from=labels_from, folder=None, budget=args.budget,
                           seed=args.seed, repeat=args.repeat, order="free", keywords=False, window=0, set=[],
                           replay=""),
        configs, argv,
    )  # fmt: skip
    meta["adaptive_strategy"] = args.strategy
    began = time.perf_counter()
    with start_server(argparse.Namespace(web=args.web, folder=None, host=None)) as proxy:
        if session.warmup:
            # The pages the labels walked (the big web's: its labels file's), not a slow host's.
            known = labeler.known_urls() or sorted(set().union(*labels.values()))
            warm_server(proxy, [url for url in known if web.site_of(url) is not None and not web.delay(url)])
        _use_proxy(proxy)
        run_reactor(session)
    summary = summarize(session)
    meta["command"] = "python benchmarks/focus_parity.py " + " ".join(shlex.quote(a) for a in argv)
    meta.update(seconds=round(time.perf_counter() - began, 1), interrupted=session.interrupted, allowed_domains=hosts)
    meta["targets"] = {"n90_vs_focused_at_most": N90_TARGET, "speed_vs_focused_at_least": SPEED_TARGET}
    out.write_text(json.dumps({"benchmark": meta, **summary}, indent=1) + "\n", encoding="utf-8")
    print(table(summary))
    overhead = summary["mean"].get(PLAIN, {})
    if "speed_vs_plain_stock" in overhead:
        print(
            f"\nthe add-on on the plain project: pages/s {overhead['speed_vs_plain_stock']}x, "
            f"pages/CPU-s {overhead['cpu_speed_vs_plain_stock']}x of the same project without it"
        )
    print(f"\nwritten: {out}", file=sys.stderr)
    return 130 if session.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
