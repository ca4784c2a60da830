"""Browser actions: what a headless browser does on a page before it is extracted.

Each action becomes one or more scrapy-playwright ``PageMethod`` calls on the
Playwright page, run in order after the page has loaded. Selectors are
Playwright selectors: CSS by default, ``xpath=//...`` or ``text=...`` also work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adaptive_spider.extras import MissingExtra, missing_extra_message

ACTION_KINDS = ("wait", "scroll", "click", "wait_for")

# Scroll to the bottom of the page; lazy loaders listen for this.
_SCROLL_TO_BOTTOM = "window.scrollTo(0, document.body.scrollHeight)"


def _page_method(method: str, *args: Any, **kwargs: Any) -> Any:
    # Imported here: scrapy-playwright is an optional dependency, needed only
    # by templates that have actions.
    try:
        from scrapy_playwright.page import PageMethod
    except ImportError:
        raise MissingExtra(missing_extra_message("javascript", "a template with browser actions")) from None

    return PageMethod(method, *args, **kwargs)


@dataclass(frozen=True)
class Action:
    """One step of a template's browser actions chain.

    * ``wait``: pause ``milliseconds``.
    * ``scroll``: scroll to the bottom ``times`` times, pausing ``milliseconds`` after each.
    * ``click``: click the first element matching ``selector``.
    * ``wait_for``: wait until an element matching ``selector`` is attached.

    ``click`` and ``wait_for`` give up after ``milliseconds`` (Playwright's
    timeout); the page's request then fails, and the crawl goes on.
    """

    kind: str
    selector: str | None = None
    times: int = 1
    milliseconds: int | None = None

    def page_methods(self) -> list[Any]:
        """This action as scrapy-playwright ``PageMethod`` objects (fresh ones on every call)."""
        if self.kind == "wait":
            return [_page_method("wait_for_timeout", self.milliseconds)]
        if self.kind == "scroll":
            methods = []
            for _ in range(self.times):
                methods.append(_page_method("evaluate", _SCROLL_TO_BOTTOM))
                methods.append(_page_method("wait_for_timeout", self.milliseconds))
            return methods
        timeout = {} if self.milliseconds is None else {"timeout": self.milliseconds}
        if self.kind == "click":
            return [_page_method("click", self.selector, **timeout)]
        if self.kind == "wait_for":
            return [_page_method("wait_for_selector", self.selector, state="attached", **timeout)]
        raise ValueError(f"unknown action kind {self.kind!r}")
