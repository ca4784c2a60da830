"""Module paths from before the 0.2 layout still load what they named."""

import importlib

import pytest
from scrapy.utils.misc import load_object

from adaptive_spider._compat import MOVED_MODULES


@pytest.mark.parametrize("old, new", sorted(MOVED_MODULES.items()))
def test_an_old_module_path_is_the_new_module(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


@pytest.mark.parametrize(
    "path",
    [
        "adaptive_spider.scheduler.AdaptiveScheduler",
        "adaptive_spider.spidermiddlewares.RelevanceMiddleware",
        "adaptive_spider.downloadermiddlewares.DomainProfileMiddleware",
        "adaptive_spider.pipelines.SufficiencyPipeline",
        "adaptive_spider.canonical.CanonicalUrlMiddleware",
        "adaptive_spider.traps.TrapGuardMiddleware",
        "adaptive_spider.duplicates.DuplicateContentPipeline",
        "adaptive_spider.report.CrawlReport",
        "adaptive_spider.crawldelay.RobotsCrawlDelay",
    ],
)
def test_component_paths_written_in_settings_before_the_move_still_load(path):
    old = load_object(path)
    module, name = path.rsplit(".", 1)
    new_module = MOVED_MODULES[module]
    assert old is load_object(f"{new_module}.{name}")
    assert old.__module__ == new_module
