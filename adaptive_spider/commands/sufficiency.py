"""``scrapy sufficiency``: recompute the sufficiency of a saved knowledge base.

    scrapy crawl focused -a query="json encoding decoding" -a start_urls=URL -O kb.jsonl
    scrapy sufficiency kb.jsonl --query "json encoding decoding"
    scrapy sufficiency kb.jsonl --query "json encoding decoding" --every 10 -s ADAPTIVE_SUFFICIENCY_EVIDENCE=3

The page items are read in feed order (template documents and other items are
skipped) and fed to the same estimator the crawl uses, with the project's
``ADAPTIVE_*`` settings (``-s`` overrides them), so the metrics equal those of
the crawl that wrote the feed. It also says where the self-stop's rule
(:mod:`adaptive_spider.sufficiency.stopping`, the crawl's own) would have stopped
it: ``sufficient`` or ``plateau``, once the best pages settled (``no_promising_links``
needs the frontier, which a feed does not keep).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from adaptive_spider.settings.config import AdaptiveConfig, parse_list
from adaptive_spider.sufficiency.knowledge import estimator_from_config
from adaptive_spider.sufficiency.offline import read_knowledge_base
from adaptive_spider.sufficiency.pages import is_page_item
from adaptive_spider.sufficiency.stopping import StopRule

if TYPE_CHECKING:
    from adaptive_spider.sufficiency.estimator import SufficiencyEstimator
    from adaptive_spider.sufficiency.metrics import SufficiencyMetrics


class Command(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "FILE --query QUERY [options]"

    def short_desc(self) -> str:
        return "Recompute the sufficiency metrics of a saved knowledge base (a feed of page items)"

    def long_desc(self) -> str:
        return __doc__.strip()

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--query", "-q", help="the crawl's query (default: ADAPTIVE_QUERY)")
        parser.add_argument("--keywords", help="comma-separated keywords (default: ADAPTIVE_KEYWORDS)")
        parser.add_argument("--every", type=int, default=0, metavar="N", help="also print the metrics every N pages")
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one knowledge base file, e.g. kb.jsonl", print_help=False)
        if opts.every < 0:
            raise UsageError(f"--every: must be >= 0, got {opts.every}", print_help=False)
        overrides = {}
        if opts.query is not None:
            overrides["query"] = opts.query.strip()
        if opts.keywords is not None:
            overrides["keywords"] = tuple(parse_list(opts.keywords, "--keywords"))
        try:
            config = AdaptiveConfig.from_settings(self.settings, **overrides)
        except ValueError as exc:
            raise UsageError(str(exc), print_help=False) from None
        if not config.query:
            raise UsageError("--query: missing; give the query the crawl ran with", print_help=False)
        estimator = estimator_from_config(config)
        if not len(estimator.terms):
            raise UsageError(f"--query: no terms left in {config.query!r} after removing stop words", print_help=False)
        try:
            page, reason = self._evaluate(args[0], estimator, StopRule(config, estimator), opts.every, quiet=opts.json)
        except FileNotFoundError:
            raise UsageError(f"{args[0]}: no such file", print_help=False) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"{args[0]}: {exc}", print_help=False) from None
        if opts.json:
            report = estimator.report()
            report.update(
                query=config.query,
                would_stop={"page": page, "reason": reason},
                sufficiency_by_page=[round(v, 4) for v in estimator.history],
            )
            print(json.dumps(report, indent=1))
            return
        self._print(estimator, config, page, reason)

    @staticmethod
    def _evaluate(
        path: str, estimator: SufficiencyEstimator, rule: StopRule, every: int, quiet: bool
    ) -> tuple[int | None, str | None]:
        """Feeds the file's pages to the estimator; returns the page (1-based) at which the
        self-stop's rule would have stopped the crawl, and why ((None, None): it would not)."""
        stop: tuple[int | None, str | None] = (None, None)
        for item in read_knowledge_base(path):
            if not isinstance(item, dict) or not is_page_item(item):
                continue
            estimator.update(item)
            if stop[1] is None:
                reason = rule.after_page()  # a feed keeps no frontier: every page promising, no link gains
                stop = (estimator.n_pages, reason) if reason else stop
            if every and not quiet and estimator.n_pages % every == 0:
                print(_metrics_line(estimator.metrics()))
        return stop

    @staticmethod
    def _print(estimator: SufficiencyEstimator, config: AdaptiveConfig, page: int | None, reason: str | None) -> None:
        metrics = estimator.metrics()
        print(f"query: {config.query}   terms: {', '.join(estimator.terms.terms)}")
        print(_metrics_line(metrics))
        print(f"{'term':<16} {'weight':>6} {'import.':>7} {'pages':>5} {'evidence':>8} {'best':>5} {'coverage':>8}")
        for row in estimator.term_report():
            print(
                f"{row['term']:<16} {row['weight']:>6.2f} {row['importance']:>7.3f} {row['pages']:>5} "
                f"{row['evidence']:>8.3f} {row['best_evidence']:>5.2f} {row['coverage']:>8.3f}"
            )
        print("best pages:")
        for relevance, url in estimator.best_pages[:5]:
            print(f"  {relevance:.3f}  {url}")
        if reason:
            print(f"would stop: {reason} after page {page} (theta {config.stop_threshold})")
        else:
            print(
                f"would not stop by itself (sufficient at IS >= {config.stop_threshold}, plateau over "
                f"{config.stop_plateau_window} pages, once no page joined the {config.stop_best_pages} best for "
                f"{config.stop_settle:g} x the pages it took to find them, and pages near the best no longer come at "
                f"{config.stop_harvest_drop:g} x their best pace over {config.stop_harvest_window} pages); "
                "no_promising_links needs the frontier"
            )
        sys.stdout.flush()


def _metrics_line(m: SufficiencyMetrics) -> str:
    return (
        f"pages {m.pages}  relevant {m.relevant_pages}  harvest {m.harvest_rate:.2f}  coverage {m.coverage:.3f}  "
        f"consistency {m.consistency:.3f}  saturation {m.saturation:.3f}  redundancy {m.redundancy:.3f}  "
        f"domain_coverage {m.domain_coverage:.3f}  IS {m.sufficiency:.3f}"
    )
