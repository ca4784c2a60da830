"""What each section of a site has given the crawl so far: the relevance of its fetched pages.

A *section* is a URL's host and directory (``docs.oracle.test/.../java/util/concurrent``).
Sites file a topic's pages together: the classes of a concurrency package, the pages of a
thread-support library, a module's error types. Once a section's fetched pages were
relevant, its other pages are likely to be, even those whose links share no word with the
query ("ConcurrentHashMap", "TimeUnit"). A fixed link prior cannot learn this; it is what
the links that led to relevant pages have in common, by the URL alone.

:meth:`SectionReturns.lift` is the factor by which a section's mean relevance, shrunk
toward the crawl's mean, stands above the crawl's mean, within ``[1, most]``: 1 for a
section not yet seen. It does not go below 1: a section's first fetched page is often its
index, a page of links that scores low, while the pages it lists are the topic's (Erlang's
``inets`` index, then ``httpc`` and ``httpd``); links that miss give way by their sibling
groups' misses instead.

A directory named after a fetched page is that page's: cppreference and BoostBook file a
class's members under it (``numeric/random/binomial_distribution.html``, then
``numeric/random/binomial_distribution/reset.html``, ``param.html``...), whose bare names
share no word with the query. Before the crawl enters such a directory, it starts from its
owner page's relevance (shrunk toward the crawl's mean as one page), and its own pages are
shrunk toward that rather than toward the crawl's mean. Only a relevant page owns its
directory (at least ``ADAPTIVE_RELEVANT_THRESHOLD``, as sibling groups count hits): a page
the score merely likes ("Multibyte conversions" for "multiple threads") would bring dozens
of bare-named members to a slow host, and a long crawl would keep one entry per page.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import urlsplit

import numpy as np

#: Pages of the crawl's mean relevance a section is assumed to hold before its own count:
#: one relevant page does not make a section, nor one miss.
PRIOR_PAGES = 3.0
#: The power of the ratio of means: a topic's pages score about twice the crawl's mean
#: (pages of other topics share its common words), a ratio too flat to reorder by as is.
SHARPNESS = 3.0
#: The relative rise of a section's lift that makes a frontier key its queued links anew
#: (smaller rises wait for the next revaluation).
RAISE_STEP = 1.25
#: Pages between two looks at every section: a section's lift rises when the crawl's mean
#: falls, with no page of its own.
SCAN_EVERY = 64


# Memoised: bestfirst asks for a URL's section twice as it queues the URL (its key, its section's list).
@functools.lru_cache(maxsize=4096)
def section_of(url: str) -> str:
    """A URL's host and directory (the path up to its last ``/``), lowercase host."""
    parts = urlsplit(url)
    path = parts.path
    return f"{(parts.hostname or '')}{path[: path.rfind('/') + 1] if path else '/'}"


def owned_section(url: str) -> str:
    """The section a page owns: its URL, without its extension, as a directory
    (``lib.test/random/binomial/`` for ``lib.test/random/binomial.html``); "" for a directory's URL."""
    parts = urlsplit(url)
    path = parts.path
    if not path or path.endswith("/"):
        return ""
    name_at = path.rfind("/") + 1
    dot = path.rfind(".")
    stem = path[:dot] if dot > name_at else path
    return f"{(parts.hostname or '')}{stem}/"


class SectionReturns:
    """The relevance sum and page count of each section, and the crawl's totals."""

    def __init__(self, most: float = 3.0, hit_at: float = 0.5) -> None:
        #: The highest lift (and 1 / most the lowest); 1 turns lifts off.
        self.most = max(1.0, float(most))
        #: The relevance from which a page owns the directory named after it (ADAPTIVE_RELEVANT_THRESHOLD).
        self.hit_at = hit_at
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        # The relevance of the fetched relevant pages (at least hit_at), by the section each owns.
        self.owners: dict[str, float] = {}
        self.total = 0.0
        self.n_pages = 0
        # Sections whose lift rose by RAISE_STEP since their links were last keyed.
        self._keyed: dict[str, float] = {}
        self._raised: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.most > 1.0

    def record(self, url: str, relevance: float) -> None:
        """A page of ``url`` was fetched and scored ``relevance``."""
        if not self.enabled:
            return
        section = section_of(url)
        self.sums[section] = self.sums.get(section, 0.0) + relevance
        self.counts[section] = self.counts.get(section, 0) + 1
        self.total += relevance
        self.n_pages += 1
        owned = owned_section(url) if relevance >= self.hit_at else ""
        if owned:
            self.owners[owned] = relevance
            self._raised.add(owned)
        if self.n_pages % SCAN_EVERY == 0:
            self._raised.update(self.counts)
        else:
            self._raised.add(section)

    def lift_of(self, section: str) -> float:
        """How many times the crawl's mean relevance the section's pages have, to the power
        ``SHARPNESS``, within ``[1, most]``. The section's mean is shrunk by ``PRIOR_PAGES``
        toward what its owner page gave (itself shrunk toward the crawl's mean as one page),
        or toward the crawl's mean when no fetched page owns it; a section with neither pages
        nor an owner has no lift."""
        count = self.counts.get(section)
        owner = self.owners.get(section)
        if (not count and owner is None) or self.total <= 0.0:
            return 1.0
        mean = self.total / self.n_pages
        expected = mean if owner is None else (owner + PRIOR_PAGES * mean) / (1 + PRIOR_PAGES)
        shrunk = (self.sums[section] + PRIOR_PAGES * expected) / (count + PRIOR_PAGES) if count else expected
        return min(self.most, max(1.0, (shrunk / mean) ** SHARPNESS))

    def lift(self, url: str) -> float:
        return self.lift_of(section_of(url)) if self.enabled else 1.0

    def take_raised(self) -> list[str]:
        """The sections whose lift rose by ``RAISE_STEP`` since last taken (their queued links
        rank higher now); each is noted as keyed at its present lift."""
        raised = []
        for section in self._raised:
            lift = self.lift_of(section)
            if lift >= self._keyed.get(section, 1.0) * RAISE_STEP:
                raised.append(section)
                self._keyed[section] = lift
            else:  # its links are lowered lazily: a later rise counts from here
                self._keyed[section] = min(lift, self._keyed.get(section, 1.0))
        self._raised.clear()
        return raised

    def state_dict(self) -> dict[str, Any]:
        return {
            "sums": dict(self.sums),
            "counts": dict(self.counts),
            "owners": dict(self.owners),
            "total": self.total,
            "n_pages": self.n_pages,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.sums = {str(k): float(v) for k, v in state.get("sums", {}).items()}
        self.counts = {str(k): int(v) for k, v in state.get("counts", {}).items()}
        self.owners = {str(k): float(v) for k, v in state.get("owners", {}).items()}
        self.total = float(state.get("total", 0.0))
        self.n_pages = int(state.get("n_pages", 0))
        self._keyed = {section: self.lift_of(section) for section in [*self.counts, *self.owners]}
        self._raised.clear()


class EntrySections:
    """The site section of each queued frontier entry, interned: the lifts of a whole frontier
    in one pass over its distinct sections (TRES ranks its leaves anew as sections rise), not
    one URL parse per entry."""

    def __init__(self) -> None:
        self.ids = np.zeros(1024, dtype=np.int32)
        self.names: list[str] = []
        self._index: dict[str, int] = {}

    def note(self, entry: int, url: str) -> None:
        """Entry ``entry`` (a new one, or a reused id) is queued for ``url``."""
        section = section_of(url)
        section_id = self._index.get(section)
        if section_id is None:
            section_id = self._index[section] = len(self.names)
            self.names.append(section)
        if entry >= len(self.ids):
            self.ids = np.concatenate([self.ids, np.zeros(max(entry + 1, len(self.ids)), dtype=np.int32)])
        self.ids[entry] = section_id

    def lifts(self, entries: np.ndarray, returns: SectionReturns) -> np.ndarray:
        """:meth:`SectionReturns.lift` of the noted entries (float64)."""
        if not len(entries):
            return np.ones(0)
        distinct, where = np.unique(self.ids[entries], return_inverse=True)
        names = self.names
        table = np.fromiter(
            (returns.lift_of(names[i]) for i in distinct.tolist()), dtype=np.float64, count=len(distinct)
        )
        return table[where]
