"""``python -m benchmarks.harness``: the focus benchmark on the offline web, in one command.

For each topic of a topics file, crawls with every strategy and with stock
Scrapy, one crawl after another in this process, through the offline web's
proxy (started in its own process). Prints progress and a table; writes
``results.json``, ``results.md`` and one PNG of recall against pages fetched
per topic (plus ``recall-all.png``) into ``--out``. Ctrl-C stops the running
crawl cleanly and still writes what was measured (a second Ctrl-C stops at once).

The default is what users run: the main command with the query alone (``--keywords`` adds
the topic's keywords), in Scrapy's free concurrent order (``--order lockstep``: the
deterministic diagnostic), default settings, the self-stop off and a page budget.

    python -m benchmarks.harness                                   # the four dev topics, 1000 pages
    python -m benchmarks.harness --topic django-models --strategies tres,stock --budget 300
    python -m benchmarks.harness --folder ~/saved-site --host mysite.test --topics my-topics.json
    python -m benchmarks.harness --web big --topic regex --strategies bestfirst --budget 5000

On the big web (``--web big``: 53 sites, ~104,000 pages) the topics default to
``../shared/bigweb/topics-dev.json``, the budget to 5000 pages, the metrics to
H@200, H@1000, R@1000, R@5000, N50 and N90 (never reached counts as 10,000), and
the relevant pages come from the labels file beside the topics file (walking the
whole web's link graph for the label rules takes minutes): each labelled page is
checked to be an HTML page the web serves that matches its topic's rule.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.harness.crawl import (
    INTERRUPTED_REASON,
    ORDERS,
    STOCK,
    STRATEGIES,
    CrawlOptions,
    crawl_settings,
    replay_crawl,
    run_crawl,
    stop,
)
from benchmarks.harness.metrics import CUTOFFS
from benchmarks.harness.progress import Progress
from benchmarks.harness.report import PLOTS_SKIPPED, Results
from benchmarks.harness.topics import Labeler, Topic, TopicsError, load_topics
from benchmarks.webbench.webs import WEBS, spec_folder

PROJECT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = PROJECT / "benchmarks" / "out" / "harness"
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


#: Pages per crawl when --budget is not given.
DEFAULT_BUDGET = {"small": 1000, "big": 5000}
LABEL_SOURCES = ("rules", "file")


def shared_webbench() -> Path | None:
    """The spec's folder (``shared/webbench`` beside the checkout, or further up from a worktree)."""
    return spec_folder("small")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.harness",
        description="Focus benchmark: every strategy and stock Scrapy on each topic of the offline web.",
    )
    parser.add_argument(
        "--web",
        choices=WEBS,
        default="small",
        help="the small web (10 sites, default) or the big one (53 sites, slow and failing hosts)",
    )
    parser.add_argument(
        "--topics",
        help="topics JSON file (default: ../shared/webbench/topics-dev.json, ../shared/bigweb/ with --web big)",
    )
    parser.add_argument("--topic", help="comma-separated topic ids (default: all)")
    parser.add_argument(
        "--strategies",
        default=",".join((*STRATEGIES, STOCK)),
        help=f"comma-separated, from {', '.join((*STRATEGIES, 'dfs', STOCK))} (default: all but dfs)",
    )
    parser.add_argument("--budget", type=int, help="pages fetched per crawl (default 1000; 5000 with --web big)")
    parser.add_argument("--seed", type=int, default=0, help="ADAPTIVE_SEED of every crawl (default 0)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="crawls per topic and strategy, to measure rerun variation"
    )
    parser.add_argument(
        "--order",
        choices=ORDERS,
        default="free",
        help="free (default): Scrapy as is, as users run it; lockstep: fetch order independent of timing, "
        "reruns identical (a diagnostic)",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=0,
        help="lockstep: requests between release and completion (default CONCURRENT_REQUESTS)",
    )
    parser.add_argument(
        "--replay",
        default="",
        metavar="STRATEGIES",
        help="after each crawl of these strategies (comma-separated), stock Scrapy fetches the same URLs: "
        "pages/s on the very same pages (×same), the extension's own cost",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a further Scrapy setting for every crawl ({topic} in VALUE: the topic's id)",
    )
    parser.add_argument("--folder", help="crawl this folder of HTML files as one site instead of the Debian packages")
    parser.add_argument("--host", default="site.test", help="host name of --folder (default site.test)")
    parser.add_argument(
        "--proxy", help="use this running offline web server (http://127.0.0.1:PORT) instead of starting one"
    )
    parser.add_argument(
        "--labels",
        help="check the labels computed from the topics' rules against this labels JSON file, or with "
        "--labels-from file take them from it (default: labels-X.json beside topics-X.json, when it exists; "
        "'none' skips the check)",
    )
    parser.add_argument(
        "--labels-from",
        choices=LABEL_SOURCES,
        help="rules: compute each topic's relevant pages from its label rule by walking the link graph "
        "(default on the small web); file: read them from the labels file, checking each page against "
        "the rule (default on the big web)",
    )
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default {DEFAULT_OUT.relative_to(PROJECT)})"
    )
    parser.add_argument("--traces", action="store_true", help="also write each crawl's fetch order (traces/*.txt)")
    parser.add_argument(
        "--keywords",
        action="store_true",
        help="also give the spider the topic's keywords (default: the query alone, as a user types it)",
    )
    parser.add_argument(
        "--no-warmup",
        action="store_true",
        help="skip the warm-up (the server reads every page once, one short unmeasured crawl) before measuring",
    )
    parser.add_argument(
        "--progress-interval", type=float, default=5.0, help="seconds between progress lines off a terminal"
    )
    return parser


class BadInput(Exception):
    """A command-line value the harness cannot use; the message names it."""


def check_arguments(args) -> tuple[list[str], dict, list[str]]:
    if args.folder and args.web != "small":
        raise BadInput("--folder crawls one folder: it does not go with --web")
    if args.topics is None:
        shared = spec_folder(args.web)
        args.topics = str(shared / "topics-dev.json") if shared else None
    if args.budget is None:
        args.budget = DEFAULT_BUDGET[args.web]
    if args.labels_from is None:
        args.labels_from = "file" if args.web == "big" else "rules"
    if args.labels_from == "file" and args.labels == "none":
        raise BadInput("--labels none: with --labels-from file the labels file is where the relevant pages come from")
    known = (*STRATEGIES, "dfs", STOCK)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in known]
    if not strategies or unknown:
        raise BadInput(f"--strategies: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(known)}")
    if len(set(strategies)) != len(strategies):
        raise BadInput("--strategies: a strategy is named twice")
    replay = [s.strip() for s in args.replay.split(",") if s.strip()]
    if any(s not in strategies or s == STOCK for s in replay):
        raise BadInput(f"--replay: {args.replay!r}: name strategies of --strategies (not stock)")
    if args.budget < 1:
        raise BadInput(f"--budget: must be >= 1, got {args.budget}")
    if args.repeat < 1:
        raise BadInput(f"--repeat: must be >= 1, got {args.repeat}")
    if args.window < 0:
        raise BadInput(f"--window: must be >= 0, got {args.window}")
    if not args.topics:
        raise BadInput(
            f"--topics: no topics file given and ../shared/{'bigweb' if args.web == 'big' else 'webbench'}"
            "/topics-dev.json not found"
        )
    extra = {}
    for item in args.set:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise BadInput(f"--set: expected NAME=VALUE, got {item!r}")
        extra[name.strip()] = value
    if args.proxy and not args.proxy.startswith(("http://127.0.0.1:", "http://localhost:")):
        raise BadInput(f"--proxy: the offline web runs on 127.0.0.1 only, got {args.proxy!r}")
    return strategies, extra, replay


def check_settings(extra: dict[str, str], strategies: list[str], topic_ids: list[str]) -> None:
    """Refuse a ``--set`` the crawls would not take: a misspelled ``ADAPTIVE_*`` name (Scrapy
    ignores unknown names, so the run would measure the default and say it measured the
    setting), or a value the add-on rejects at a crawl's start, for each topic (``{topic}``
    in a value is the topic's id: a training file per topic, say)."""
    from adaptive_spider.settings.config import AdaptiveConfig, unknown_settings
    from adaptive_spider.settings.parsers import ConfigError

    for name, closest in unknown_settings(extra):
        hint = f"; did you mean {closest}?" if closest else "; see docs/settings.md"
        raise BadInput(f"--set: {name} is not an adaptive_spider setting{hint}")
    per_topic = any("{topic}" in value for value in extra.values())
    for strategy in strategies:
        if strategy == STOCK:
            continue
        for topic_id in topic_ids if per_topic else topic_ids[:1]:
            try:
                AdaptiveConfig.from_settings(crawl_settings(strategy, CrawlOptions(extra=extra).for_topic(topic_id)))
            except ConfigError as error:
                where = f" (topic {topic_id})" if per_topic else ""
                raise BadInput(f"--set{where}: {error}") from None


def load_web(args):
    from benchmarks.webbench.web import MissingPackagesError, OfflineWeb
    from benchmarks.webbench.webs import open_web

    try:
        return OfflineWeb.from_folder(args.folder, args.host) if args.folder else open_web(args.web)
    except (MissingPackagesError, OSError, ValueError) as error:
        raise BadInput(f"--folder: {error}" if args.folder else str(error)) from None


def labels_from_file(
    labeler: Labeler, topics: list[Topic], labels_path: str | None, topics_path: str
) -> dict[str, set[str]]:
    """Each topic's relevant pages as a labels file lists them, each checked against the web and the rule.

    A listed page must be an HTML page the web answers with status 200 and match its
    topic's label rule; reachability from the seeds is the labels file's word (the
    link graph walk that would check it is what this source saves).
    """
    reference = _reference_labels(labels_path, topics_path)
    if reference is None:
        raise BadInput(f"--labels-from file: no labels file (give --labels; none beside {topics_path})")
    path, listed = reference
    labels = {}
    for topic in topics:
        urls = listed.get(topic.id)
        if not isinstance(urls, list) or not urls:
            raise BadInput(f"--labels-from file: {path} lists no relevant pages for topic {topic.id}")
        problems = []
        for url in urls:
            response = labeler.web.get(url)
            if not response.is_html:
                problems.append(f"{url}: status {response.status}")
            elif not topic.label.matches(url, labeler.title(url) if topic.label.needs_title else None):
                problems.append(f"{url}: does not match the topic's label rule")
        if problems:
            raise BadInput(
                f"labels of topic {topic.id} in {path}: {len(problems)} of {len(urls)} pages do not hold "
                f"(e.g. {problems[:2]}); is the offline web as specified?"
            )
        labels[topic.id] = set(urls)
    print(
        f"labels: read from {path} for {len(topics)} topic(s); every page served and matching its rule", file=sys.stderr
    )
    return labels


def compute_labels(
    labeler: Labeler, topics: list[Topic], labels_path: str | None, topics_path: str
) -> dict[str, set[str]]:
    """Each topic's relevant pages from its rule, checked against a labels file when there is one."""
    labels = {}
    for topic in topics:
        relevant = set(labeler.relevant(topic))
        if not relevant:
            raise BadInput(
                f"topic {topic.id}: its label rule matches no reachable HTML page from {', '.join(topic.seeds)}"
            )
        labels[topic.id] = relevant
    reference = _reference_labels(labels_path, topics_path)
    if reference is not None:
        path, expected = reference
        for topic in topics:
            if topic.id not in expected:
                continue
            want = set(expected[topic.id])
            if want != labels[topic.id]:
                missing, extra = sorted(want - labels[topic.id]), sorted(labels[topic.id] - want)
                raise BadInput(
                    f"labels of topic {topic.id} differ from {path}: {len(missing)} missing "
                    f"(e.g. {missing[:2]}), {len(extra)} extra (e.g. {extra[:2]}); is the offline web as specified?"
                )
        checked = [t.id for t in topics if t.id in expected]
        print(f"labels: computed from the label rules; equal to {path} for {len(checked)} topic(s)", file=sys.stderr)
    return labels


def _reference_labels(labels_path: str | None, topics_path: str):
    if labels_path == "none":
        return None
    if labels_path is None:
        name = Path(topics_path).name
        if not name.startswith("topics"):
            return None
        candidate = Path(topics_path).with_name("labels" + name[len("topics") :])
        if not candidate.is_file():
            return None
        labels_path = str(candidate)
    try:
        return labels_path, json.loads(Path(labels_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadInput(f"--labels: cannot read {labels_path}: {error}") from None


def run_metadata(args, strategies: list[str], argv: list[str]) -> dict:
    import scrapy

    return {
        "command": "python -m benchmarks.harness " + " ".join(shlex.quote(a) for a in argv),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "web": args.web,
        "topics_file": args.topics,
        "labels_from": args.labels_from,
        "folder": args.folder,
        "host": args.host if args.folder else None,
        "strategies": strategies,
        "budget": args.budget,
        "seed": args.seed,
        "repeat": args.repeat,
        "order": args.order,
        "keywords": args.keywords,
        "window": args.window or "CONCURRENT_REQUESTS",
        "settings": dict(item.split("=", 1) for item in args.set),
        "replay": args.replay,
        "python": platform.python_version(),
        "scrapy": scrapy.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }


#: What a run's "+changes" does not count: results and prose, which a session writes while it
#: measures, and which change no crawl.
_NOT_CODE = (":(exclude)benchmarks/results", ":(exclude)docs", ":(exclude)*.md")


def _git_commit() -> str | None:
    """The commit of the code measured; "+changes" if the code differs from it."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", ".", *_NOT_CODE],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if commit.returncode != 0:
        return None
    return commit.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


class Session:
    """The sequence of crawls of one harness run, and its clean interruption by Ctrl-C."""

    def __init__(
        self,
        topics,
        labels,
        strategies,
        options: CrawlOptions,
        repeat: int,
        results: Results,
        out: Path,
        progress,
        traces: bool,
    ):
        self.topics = topics
        self.labels = labels
        self.strategies = strategies
        self.options = options
        self.repeat = repeat
        self.results = results
        self.out = out
        self.progress = progress
        self.traces = traces
        self.interrupted = False
        self.crawler = None
        self.warmup = True
        self.replay: set[str] = set()
        self.error: str | None = None

    def interrupt(self) -> None:
        """First Ctrl-C: stop the running crawl (keeping what it fetched) and start no other."""
        if self.interrupted:
            return
        self.interrupted = True
        self.progress.note("interrupted: stopping the running crawl; Ctrl-C again to stop at once")
        if self.crawler is not None:
            stop(self.crawler, INTERRUPTED_REASON)

    async def run(self) -> None:
        if self.warmup and not self.interrupted:
            await self._warm_up()
        for topic in self.topics:
            relevant = self.labels[topic.id]
            self.results.topic(topic.id, relevant, topic.query)
            for strategy in self.strategies:
                for repeat in range(self.repeat):
                    if self.interrupted:
                        return
                    await self._crawl(topic, strategy, repeat, relevant)

    async def _crawl(self, topic: Topic, strategy: str, repeat: int, relevant: set[str]) -> None:
        self.progress.begin(topic.id, strategy, repeat, self.repeat, relevant)
        run = await run_crawl(topic, strategy, self.options, on_fetch=self.progress.update, on_crawler=self._started)
        self.crawler = None
        if run.finish_reason == INTERRUPTED_REASON:
            self.progress.note(f"{topic.id} {strategy}: interrupted after {len(run.fetched)} pages, not in the table")
            self.results.interrupted_run = {
                "topic": topic.id,
                "strategy": strategy,
                **run.metrics(relevant, self.options.budget, self.results.cutoffs),
            }
            return
        self.results.topics[topic.id].add(run)
        self.progress.end(run, run.metrics(relevant, self.options.budget, self.results.cutoffs))
        if strategy in self.replay and not self.interrupted:
            await self._replay(topic, strategy, repeat, run, relevant)
        self.results.write_json(self.out / "results.json")
        if self.traces:
            folder = self.out / "traces"
            folder.mkdir(exist_ok=True)
            (folder / f"{topic.id}-{strategy}-{repeat + 1}.txt").write_text(
                "\n".join(run.fetched) + "\n", encoding="utf-8"
            )

    async def _replay(self, topic: Topic, strategy: str, repeat: int, run, relevant: set[str]) -> None:
        urls = run.fetched[: self.options.budget]
        self.progress.begin(topic.id, f"{STOCK} replaying {strategy}", repeat, self.repeat, relevant)
        replay = await replay_crawl(topic, urls, self.options, on_fetch=self.progress.update, on_crawler=self._started)
        self.crawler = None
        if replay.finish_reason == INTERRUPTED_REASON:
            return
        self.results.topics[topic.id].add_replay(strategy, replay)
        self.progress.end(replay, replay.metrics(relevant, self.options.budget, self.results.cutoffs))
        self.results.write_json(self.out / "results.json")

    async def _warm_up(self) -> None:
        """One short unmeasured crawl: the first measured one should not pay for first calls."""
        topic, strategy = self.topics[0], self.strategies[0]
        options = CrawlOptions(**{**vars(self.options), "budget": min(100, self.options.budget)})
        self.progress.note(f"warm-up: {options.budget} pages of {topic.id} with {strategy}, not measured")
        await run_crawl(topic, strategy, options, on_crawler=self._started)
        self.crawler = None

    def _started(self, crawler) -> None:
        self.crawler = crawler


def run_reactor(session: Session) -> None:
    """Run the session's crawls on the asyncio reactor; Ctrl-C interrupts it cleanly."""
    from scrapy.utils.defer import deferred_from_coro
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor, task

    def on_sigint(signum, frame):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C stops at once
        reactor.callFromThread(session.interrupt)

    async def body(_reactor):
        signal.signal(signal.SIGINT, on_sigint)
        try:
            await session.run()
        except Exception:  # a harness bug must not lose what was measured: report it, write the rest
            session.error = traceback.format_exc()
            print(session.error, file=sys.stderr)

    try:
        task.react(lambda _reactor: deferred_from_coro(body(_reactor)))
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            raise


def warm_server(proxy: str, urls) -> None:
    """Ask the server for every URL once, so no crawl pays for its first reads of the files."""
    import http.client
    from urllib.parse import urlsplit

    address = urlsplit(proxy)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        for url in urls:
            connection.request("GET", url)
            connection.getresponse().read()
    finally:
        connection.close()


def start_server(args):
    """The offline web's server in its own process (so it never competes for this one's GIL)."""
    from benchmarks.webbench.throughput import server_process

    return server_process(["--folder", args.folder, "--host", args.host] if args.folder else ["--web", args.web])


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        strategies, extra, replay = check_arguments(args)
        topics = load_topics(args.topics, [t.strip() for t in args.topic.split(",")] if args.topic else None)
        check_settings(extra, strategies, [topic.id for topic in topics])
        if not args.keywords:
            topics = [dataclasses.replace(topic, keywords=()) for topic in topics]
        labeler = Labeler(load_web(args))
        if args.labels_from == "file":
            labels = labels_from_file(labeler, topics, args.labels, args.topics)
        else:
            print(f"labels: walking the link graph from the seeds of {len(topics)} topic(s)", file=sys.stderr)
            labels = compute_labels(labeler, topics, args.labels, args.topics)
    except (BadInput, TopicsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted before the first crawl", file=sys.stderr)
        return EXIT_INTERRUPTED
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _log_to_file(out / "crawl.log")
    options = CrawlOptions(budget=args.budget, seed=args.seed, order=args.order, window=args.window, extra=extra)
    results = Results(args.budget, strategies, run_metadata(args, strategies, argv), CUTOFFS[args.web])
    crawls = len(topics) * (len(strategies) + len(replay)) * args.repeat
    progress = Progress(crawls, args.budget, interval=args.progress_interval)
    session = Session(topics, labels, strategies, options, args.repeat, results, out, progress, args.traces)
    session.replay = set(replay)
    session.warmup = not args.no_warmup
    began = time.perf_counter()
    try:
        if args.proxy:
            _use_proxy(args.proxy)
            run_reactor(session)
        else:
            with start_server(args) as proxy:
                if session.warmup:
                    # the link graph's URLs, or with labels from a file the labelled pages
                    known = labeler.known_urls() or sorted(set().union(*labels.values()))
                    served = [
                        url for url in known if labeler.web.site_of(url) is not None and not labeler.web.delay(url)
                    ]
                    progress.note(f"warm-up: the server reads {len(served)} URLs once")
                    warm_server(proxy, served)
                _use_proxy(proxy)
                run_reactor(session)
    except KeyboardInterrupt:
        session.interrupted = True
    except RuntimeError as error:  # the server did not start
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    results.meta["seconds"] = round(time.perf_counter() - began, 1)
    results.meta["interrupted"] = session.interrupted
    if session.error:
        results.meta["error"] = session.error.strip().splitlines()[-1]
    write_outputs(results, out)
    if session.error:
        return 1
    return EXIT_INTERRUPTED if session.interrupted else 0


def write_outputs(results: Results, out: Path) -> None:
    """The table on stdout; results.json, results.md and the plots in ``out``."""
    if not any(result.runs for result in results.topics.values()):
        print("nothing was measured", file=sys.stderr)
        results.write_json(out / "results.json")
        return
    print(results.table())
    variation = results.variation_table()
    if variation:
        print("\nreruns:\n" + variation)
    results.write_json(out / "results.json")
    markdown = results.table(markdown=True)
    (out / "results.md").write_text(f"`{results.meta['command']}`\n\n{markdown}\n", encoding="utf-8")
    plots = results.plot(out)
    if plots is None:
        print(f"\nwritten: {out / 'results.json'}, {out / 'results.md'}", file=sys.stderr)
        print(PLOTS_SKIPPED, file=sys.stderr)
    else:
        print(
            f"\nwritten: {out / 'results.json'}, {out / 'results.md'}, {len(plots)} plot(s) in {out}", file=sys.stderr
        )


def _use_proxy(proxy: str) -> None:
    # Both variables: https links are refused by the offline web instead of reaching the network.
    os.environ["http_proxy"] = os.environ["https_proxy"] = proxy
    os.environ.pop("no_proxy", None)
    os.environ.pop("NO_PROXY", None)


def _not_https_refusal(record) -> bool:
    """The offline web refuses https by design (CONNECT answers 501): not worth a traceback each."""
    error = record.exc_info[1] if record.exc_info else None
    return "Could not open CONNECT tunnel" not in f"{record.getMessage()} {error}"


def _log_to_file(path: Path) -> None:
    """Scrapy's warnings and errors go to a file; the terminal keeps progress and the table."""
    import logging

    handler = logging.FileHandler(path, mode="w", encoding="utf-8")
    handler.addFilter(_not_https_refusal)
    handler.setFormatter(logging.Formatter("%(asctime)s [%(name)s] %(levelname)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
