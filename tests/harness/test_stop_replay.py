"""``python -m benchmarks.stop_replay``: where a rule that waits for the best pages to settle would stop."""

from __future__ import annotations

import numpy as np
import pytest

from adaptive_spider.relevance.scoring import QueryTerms
from adaptive_spider.settings.config import AdaptiveConfig
from adaptive_spider.sufficiency.estimator import SufficiencyEstimator
from adaptive_spider.sufficiency.knowledge import estimator_from_config
from adaptive_spider.sufficiency.stopping import StopRule
from benchmarks.stop_replay import _pace, main, paced_until, settled_at, waited_until


def test_the_rule_stops_when_the_k_best_scores_have_not_changed_for_the_window():
    # The two best: 0.9 (page 3), then 0.8 (page 12) in place of 0.6; nothing after page 12 enters.
    scores = np.array([0.5, 0.6, 0.9] + [0.1] * 8 + [0.8] + [0.5] * 30)
    assert settled_at(scores, k=2, window=10, min_pages=1) == 22
    assert settled_at(scores, k=1, window=10, min_pages=1) == 13
    # A later, better page starts the window again.
    assert settled_at(np.append(scores[:15], [0.95] + [0.1] * 10), k=2, window=10, min_pages=1) == 26
    # Never settled within the pages there are, nor before min_pages.
    assert settled_at(scores, k=2, window=40, min_pages=1) is None
    assert settled_at(scores, k=1, window=10, min_pages=30) == 30


def test_the_wait_ends_where_the_crawls_estimator_says_its_best_pages_settled():
    rng = np.random.default_rng(3)
    scores = np.round(np.concatenate([rng.uniform(0, 0.6, 30), rng.uniform(0.3, 0.9, 40), rng.uniform(0, 0.5, 200)]), 3)
    estimator = SufficiencyEstimator(QueryTerms("alpha"))
    settled = None
    for i, score in enumerate(scores.tolist()):
        estimator.update({"url": f"http://x.test/{i}", "text": f"alpha page {i} words {i * 7919}", "relevance": score})
        if settled is None and estimator.n_pages >= 10 and estimator.best_settled(1.0, 10):
            settled = estimator.n_pages
    assert settled is not None and 70 < settled < len(scores)
    assert waited_until(scores, k=10, ratio=1.0, min_pages=10) == settled
    assert waited_until(scores, k=10, ratio=5.0, min_pages=10) is None


def crawl_settles_at(scores, **settings):
    """The first page after which the crawl's StopRule counts its waits as over."""
    config = AdaptiveConfig.from_settings({"ADAPTIVE_QUERY": "alpha", **settings})
    estimator = estimator_from_config(config)
    rule = StopRule(config, estimator)
    for i, score in enumerate(scores.tolist()):
        estimator.update({"url": f"http://x.test/{i}", "text": f"alpha page {i} words {i * 7919}", "relevance": score})
        if estimator.n_pages >= config.stop_min_pages and rule.settled():
            return estimator.n_pages
    return None


def test_the_pace_ends_where_the_crawls_stop_rule_says_both_waits_are_over():
    rng = np.random.default_rng(5)
    # A burst of good pages, a lull, a second burst near the best but not among the ten best
    # (a topic's second site, 0.65-0.78 against 0.8-0.9), then the long tail.
    scores = np.round(
        np.concatenate(
            [
                rng.uniform(0, 0.4, 20),
                rng.uniform(0.8, 0.9, 30),
                rng.uniform(0, 0.4, 40),
                rng.uniform(0.65, 0.78, 25),
                rng.uniform(0, 0.45, 400),
            ]
        ),
        3,
    )
    with_pace = crawl_settles_at(scores, ADAPTIVE_STOP_HARVEST_WINDOW=50, ADAPTIVE_STOP_HARVEST_DROP=0.1)
    without = crawl_settles_at(scores, ADAPTIVE_STOP_HARVEST_WINDOW=0)
    assert without is not None and with_pace is not None and without < with_pace
    assert without <= 100 and 115 + 40 <= with_pace < len(scores)  # most of a window after the second burst
    assert paced_until(scores, window=50, drop=0.1) == with_pace
    assert paced_until(scores, window=0, drop=0.1) == without == waited_until(scores, k=10, ratio=1.0)
    # Scores that never reach the relevant threshold (0.5) leave the best pages' wait alone.
    low = scores * 0.5
    assert paced_until(low, window=50, drop=0.1) == waited_until(low, k=10, ratio=1.0) == crawl_settles_at(low)


@pytest.mark.benchmark
def test_a_traced_run_is_replayed_with_each_rule(traced_run, capsys):
    out, _ = traced_run
    assert main([str(out), "--strategy", "bestfirst", "--rule", "3:10", "--rule", "5:500"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "| crawl (relevant pages in its trace) | k=3, window=10 | k=5, window=500 |"
    (row,) = [line for line in printed if line.startswith("| demo-astronomy-bestfirst-1 (")]
    first, second = row.split(" | ")[1:3]
    stop, found = first.split(" (")
    assert 10 <= int(stop) <= 120 and found.endswith(" relevant)")
    assert second.rstrip(" |") == "not within 120"
    assert main([str(out), "--strategy", "bestfirst", "--wait", "10:1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "| crawl (relevant pages in its trace) | wait k=10, ratio=1 |"
    assert main([str(out), "--strategy", "bestfirst", "--wait", "10:1", "--pace", "0:0", "--pace", "100:0.1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith("| wait and pace window=0, drop=0 | wait and pace window=100, drop=0.1 |")
    (row,) = [line for line in printed if line.startswith("| demo-astronomy-bestfirst-1 (")]
    waited, no_pace = row.split(" | ")[1:3]
    assert waited == no_pace  # no window: the best pages' wait alone
    assert main([str(out), "--strategy", "tres"]) == 2
    assert "no traces of tres" in capsys.readouterr().err


def test_a_bad_rule_or_a_run_without_traces_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--rule", "10"])
    assert "give K:WINDOW" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--wait", "10:0"])
    assert "give K:RATIO" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--pace", "100:2"])
    assert "give WINDOW:DROP" in capsys.readouterr().err
    for bad in ("100:0.1:-5", "100:0.1:x", "100:0.1:25:3"):
        with pytest.raises(SystemExit):
            main([str(tmp_path), "--pace", bad])
        assert "give WINDOW:DROP[:HOST_WINDOW]" in capsys.readouterr().err
    assert _pace("100:0.1:25") == (100, 0.1, 25) and _pace("100:0.1") == (100, 0.1, 0)
    assert main([str(tmp_path)]) == 2
    assert "not a harness output folder" in capsys.readouterr().err


def test_each_hosts_pace_keeps_the_replay_going_while_a_slow_host_still_gives_pages_near_the_best():
    rng = np.random.default_rng(7)
    # A fast host's burst of good pages, then a slow host that gives one page in forty, each
    # near the best at first (0.72, below the ten best) and then not (0.2), among fast pages of 0-0.3.
    scores = list(rng.uniform(0, 0.4, 20)) + list(rng.uniform(0.8, 0.9, 30))
    hosts = ["a.test"] * 50
    for i in range(1200):
        slow = i % 40 == 39
        scores.append((0.72 if i < 800 else 0.2) if slow else float(rng.uniform(0, 0.3)))
        hosts.append("slow.test" if slow else "b.test")
    scores = np.round(np.array(scores), 3)
    per_page = paced_until(scores, window=100, drop=0.1)
    per_host = paced_until(scores, window=100, drop=0.1, hosts=hosts, host_window=10)
    assert per_page is not None and per_page < 300  # the slow host's pages are 1 in 40: a tenth of the burst's pace
    # Until nine of the slow host's last ten pages are no longer near the best (page 50 + 800 + 9 x 40).
    assert per_host is not None and 50 + 800 + 8 * 40 < per_host <= 50 + 800 + 9 * 40
    assert paced_until(scores, window=100, drop=0.1, hosts=hosts, host_window=0) == per_page
    with pytest.raises(ValueError, match="host of every scored page"):
        paced_until(scores, window=100, drop=0.1, hosts=hosts[:10], host_window=10)
