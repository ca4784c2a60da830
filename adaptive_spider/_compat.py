"""Module paths from before the package layout of 0.2, kept importable.

Projects name these in their settings (``SCHEDULER``, ``SPIDER_MIDDLEWARES``, ...) and
JOBDIR snapshots pickle classes under them, so each old path loads its new module; the
module object is the same, so classes compare equal whichever path loaded them.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MOVED_MODULES = {
    "adaptive_spider.default_settings": "adaptive_spider.settings.defaults",
    "adaptive_spider.config": "adaptive_spider.settings.config",
    "adaptive_spider.settings_table": "adaptive_spider.settings.docs",
    "adaptive_spider.scheduler": "adaptive_spider.crawl.scheduler",
    "adaptive_spider.spidermiddlewares": "adaptive_spider.crawl.spidermiddlewares",
    "adaptive_spider.downloadermiddlewares": "adaptive_spider.crawl.downloadermiddlewares",
    "adaptive_spider.pipelines": "adaptive_spider.crawl.pipelines",
    "adaptive_spider.canonical": "adaptive_spider.crawl.canonical",
    "adaptive_spider.traps": "adaptive_spider.crawl.traps",
    "adaptive_spider.report": "adaptive_spider.crawl.report",
    "adaptive_spider.state": "adaptive_spider.crawl.state",
    "adaptive_spider.crawldelay": "adaptive_spider.crawl.crawldelay",
    "adaptive_spider.duplicates": "adaptive_spider.crawl.duplicates",
    "adaptive_spider.features": "adaptive_spider.frontier.features",
    "adaptive_spider.domains": "adaptive_spider.frontier.domains",
    "adaptive_spider.pagelog": "adaptive_spider.frontier.pagelog",
    "adaptive_spider.frontier.base": "adaptive_spider.frontier.strategies.base",
    "adaptive_spider.frontier.baselines": "adaptive_spider.frontier.strategies.baselines",
    "adaptive_spider.frontier.tres": "adaptive_spider.frontier.strategies.tres",
    "adaptive_spider.frontier.linkgroups": "adaptive_spider.frontier.strategies.linkgroups",
    "adaptive_spider.frontier.qnet": "adaptive_spider.frontier.learn.qnet",
    "adaptive_spider.frontier.tree": "adaptive_spider.frontier.learn.tree",
    "adaptive_spider.pagetext": "adaptive_spider.relevance.pagetext",
    "adaptive_spider.links": "adaptive_spider.relevance.links",
    "adaptive_spider.linkpreview": "adaptive_spider.relevance.linkpreview",
    "adaptive_spider.linkvalue": "adaptive_spider.sufficiency.linkvalues",
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The new module already ran when it was imported."""


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Resolves an old module path to the module that now lives elsewhere."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(new))


def install() -> None:
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
