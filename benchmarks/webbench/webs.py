"""The offline webs by name, for the commands' ``--web`` option.

``small`` is the first web (``../shared/webbench``: ten sites, ~4,000 pages), ``big`` the
second (``../shared/bigweb``: 53 sites, ~104,000 pages, slow and unreliable hosts).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.webbench.web import OfflineWeb

WEBS = ("small", "big")
#: Each web's spec folder under ``shared/`` (README, topics, labels; the big web's reference server).
SPEC_FOLDERS = {"small": "webbench", "big": "bigweb"}
PROJECT = Path(__file__).resolve().parents[2]


def spec_folder(name: str = "small") -> Path | None:
    """The web's spec folder (``shared/<folder>`` beside the checkout, or further up from a worktree)."""
    for folder in PROJECT.parents:
        candidate = folder / "shared" / SPEC_FOLDERS[name]
        if (candidate / "topics-dev.json").is_file():
            return candidate
    return None


def open_web(name: str = "small") -> OfflineWeb:
    """The offline web called ``name`` (raises ``MissingPackagesError`` without its packages)."""
    if name == "small":
        return OfflineWeb()
    if name == "big":
        from benchmarks.webbench.bigweb import big_web

        return big_web()
    raise ValueError(f"unknown web {name!r}: one of {', '.join(WEBS)}")


def missing_packages(name: str = "small") -> list[str]:
    """The Debian packages of the web called ``name`` that this machine lacks."""
    if name == "big":
        from benchmarks.webbench.bigweb import missing_packages as big_missing

        return big_missing()
    return OfflineWeb.missing_packages()
