"""Link value: the expected information gain of fetching a queued link.

    ExpectedGain(l) = Relevance(l, Q) x Novelty(l, K) x Authority(l)

- ``Relevance(l, Q) = sim + (1 - sim) * lambda * r(parent)``: ``sim`` is the
  importance ``v(t)`` (see :mod:`adaptive_spider.sufficiency.estimator`) of the query terms
  in the link's *preview* (anchor text and URL words), summed; a link on a
  relevant page is worth something even when its words say nothing (topical
  locality, ``lambda``: ``parent_weight``);
- ``Novelty(l, K) = 1 - Consistency(K, Q) x sum_{t in P} v(t) cov(t) / sum_{t in P} v(t)``
  over the preview's query terms ``P``: the preview's similarity to K measured in
  the query's terms (how well K covers what the link promises, and how firmly);
  a preview without query terms promises the query in general and uses
  ``Coverage(K, Q)`` in place of the sum. A page on a covered topic still adds
  corroboration while the evidence is thin (low consistency). It costs
  O(preview terms), never a loop over pages;
- ``Authority(l) = structure x domain``: ``structure = 1 / (1 + delta * max(0,
  path_depth - 1))``, halved (``query_penalty``) for a URL with a query string
  (listings, searches, session variants); ``domain = (1 - failure_rate) x
  min(1, (d + 0.05) / (c + 0.05))`` with ``d`` the domain's mean page relevance
  smoothed toward the crawl's mean ``c`` over 5 pseudo-pages, times
  ``new_domain`` for a domain no page has come from yet (leaving the site for
  one the crawl knows nothing about is a gamble).

:class:`LinkValues` keeps every queued link's gain in a max-heap. Novelty only
falls as the knowledge base grows, so the heap re-evaluates lazily: the top entry
is recomputed when the knowledge base changed since its value was computed, and
pushed back if it lost its place. :meth:`LinkValues.best` is therefore cheap at
any time; it feeds the ``no_promising_links`` stop.

:class:`LinkValues` is the frontier's listener
(:class:`~adaptive_spider.frontier.frontier.FrontierListener`): the frontier tells
it of every link queued, released or dropped, and the scheduler of every released
request it hands to the engine.

Why one module of some 400 lines: the scalar and the batch valuation of a link must use the
same formulas and the same cached domain terms; their column storage is apart (linkcolumns).
"""

from __future__ import annotations

import heapq
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.frontier.features import path_depth
from adaptive_spider.relevance.scoring import QueryTerms, url_words
from adaptive_spider.sufficiency.linkcolumns import LinkColumns, QueuedLink, column_rows

if TYPE_CHECKING:
    from scrapy import Request

    from adaptive_spider.relevance.linkpreview import LinkPreview

#: request.meta key with a request's expected gain when it left the frontier.
GAIN_KEY = "adaptive_gain"
_RELEASED_KEPT = 4096
_ENTRY_BITS = 32
_ENTRY_MASK = (1 << _ENTRY_BITS) - 1
_DOMAIN_PSEUDO_PAGES = 5.0
_DOMAIN_SMOOTHING = 0.05
_COMPACT_MIN = 1024

#: A float, or an array of them: the formulas value one link or a batch of links alike.
FloatOrArray = TypeVar("FloatOrArray", float, np.ndarray)
#: ``domain_id -> (failure_rate, relevance_sum, pages, crawl_relevance)``.
DomainStats = Callable[[int], tuple[float, float, int, float]]


# -- pure functions ------------------------------------------------------------------------
def preview_terms(terms: QueryTerms, anchor: str, url: str) -> tuple[int, ...]:
    """Indexes of the query terms in a link's anchor text and URL words."""
    if not len(terms):
        return ()
    return terms.present_ids(f"{(anchor or '').lower()} {url_words(url)}")


def link_relevance(similarity: FloatOrArray, parent_relevance: FloatOrArray, parent_weight: float) -> FloatOrArray:
    return similarity + (1.0 - similarity) * parent_weight * parent_relevance


def link_novelty(
    term_ids: Sequence[int],
    importance: np.ndarray,
    covered: np.ndarray,
    overall_coverage: float,
    consistency: float = 1.0,
) -> float:
    """``1 - Consistency x`` (importance-weighted coverage of the preview's terms)."""
    view = KnowledgeView(np.asarray(importance), np.asarray(covered), overall_coverage, consistency, 0)
    return novelty_of(view.similarity_and_known(term_ids)[1], consistency)


def novelty_of(known: FloatOrArray, consistency: float) -> FloatOrArray:
    """Novelty from the known share of a preview's terms (floats or arrays)."""
    return 1.0 - consistency * known


def structure_authority(url: str, depth_decay: float, query_penalty: float) -> float:
    return structure_value(path_depth(url), bool(urlsplit(url).query), depth_decay, query_penalty)


def structure_value(path_segments: int, has_query: bool, depth_decay: float, query_penalty: float) -> float:
    """:func:`structure_authority` of a URL already parsed."""
    value = 1.0 / (1.0 + depth_decay * max(0, path_segments - 1))
    return value * query_penalty if has_query else value


def domain_authority(
    failure_rate: float, relevance_sum: float, pages: int, crawl_relevance: float, new_domain: float = 0.5
) -> float:
    mean = (relevance_sum + _DOMAIN_PSEUDO_PAGES * crawl_relevance) / (pages + _DOMAIN_PSEUDO_PAGES)
    value = (1.0 - failure_rate) * min(1.0, (mean + _DOMAIN_SMOOTHING) / (crawl_relevance + _DOMAIN_SMOOTHING))
    return value if pages > 0 else value * new_domain


def expected_gain(relevance: FloatOrArray, novelty: FloatOrArray, authority: FloatOrArray) -> FloatOrArray:
    return relevance * novelty * authority


# -- the queue of link values --------------------------------------------------------------
@dataclass(frozen=True)
class KnowledgeView:
    """What link values read from the knowledge base (see SufficiencyEstimator.view)."""

    importance: np.ndarray
    covered: np.ndarray
    coverage: float
    consistency: float
    version: int
    #: ``importance`` and ``covered`` as lists: a link has a handful of terms, and
    #: indexing a list costs a fraction of numpy's per-call overhead.
    importance_values: list[float] = field(init=False, repr=False, compare=False)
    covered_values: list[float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "importance_values", np.asarray(self.importance, dtype=np.float64).tolist())
        object.__setattr__(self, "covered_values", np.asarray(self.covered, dtype=np.float64).tolist())

    def similarity_and_known(self, terms: Sequence[int]) -> tuple[float, float]:
        """The summed importance of a preview's terms, and their importance-weighted
        coverage (``coverage`` for a preview without terms): see :func:`link_novelty`."""
        if not terms:
            return 0.0, self.coverage
        importance, covered = self.importance_values, self.covered_values
        weights = [importance[t] for t in terms]
        total = sum(weights)
        if total <= 0:
            return total, self.coverage
        return total, sum(w * covered[t] for w, t in zip(weights, terms)) / total


class LinkValues:
    """Expected gain of every queued link, and the best of them at any time.

    Parameters
    ----------
    terms : QueryTerms
        The query's terms (the crawl's ``CrawlState.terms``).
    view : callable
        Returns the knowledge base's :class:`KnowledgeView` (term importance,
        term coverage, Coverage, Consistency and a version that changes
        whenever they move).
    domain_stats : callable, optional
        ``domain_id -> (failure_rate, relevance_sum, pages, crawl_relevance)``.
    parent_weight, depth_decay, query_penalty, new_domain : float
        ``lambda``, ``delta``, the query-string and the new-domain factors of the formulas above.
    max_refresh : int
        Most re-evaluations per :meth:`best` call; beyond it the answer is the
        top's last value, an upper bound (a stop is delayed, never hastened).
    """

    def __init__(
        self,
        terms: QueryTerms,
        view: Callable[[], KnowledgeView],
        domain_stats: DomainStats | None = None,
        *,
        parent_weight: float = 0.3,
        depth_decay: float = 0.1,
        query_penalty: float = 0.5,
        new_domain: float = 0.5,
        max_refresh: int = 64,
    ) -> None:
        self.terms = terms
        self.view = view
        self.domain_stats = domain_stats
        self.parent_weight = parent_weight
        self.depth_decay = depth_decay
        self.query_penalty = query_penalty
        self.new_domain = new_domain
        self.max_refresh = max_refresh
        self.links = LinkColumns()
        self.ready: dict[Request, bool] = {}  # released requests not yet handed to the engine
        # Released requests (ready or in flight) -> their link, re-valued when asked. The
        # recent ones only: a crawl that never asks (no sufficiency stop) would keep every
        # request it ever released; an older one is valued by its gain at release.
        self.pending: OrderedDict[Request, QueuedLink] = OrderedDict()
        # URL -> gain when it left the frontier (recent ones). Ordered dicts: dropping the
        # oldest of a plain dict walks over its deleted slots, on every release.
        self._released: OrderedDict[str, float] = OrderedDict()
        # (-gain, token << 32 | entry, knowledge version): tokens are unique, so items sort
        # by gain and then token; one int for both saves a queued URL about 30 bytes.
        self._heap: list[tuple[float, int, int]] = []
        # Keys (token << 32 | entry) of the links queued since the best link was last asked for.
        self._unvalued = array("q")
        #: Links ever added (0: no scheduler keeps link values).
        self.added = 0

    def __len__(self) -> int:
        return len(self.links)

    # -- the frontier's events (FrontierListener) ----------------------------------------
    def on_queued(
        self, entry: int, request: Request, parent_relevance: float, domain_id: int, preview: LinkPreview | None
    ) -> None:
        """A request joined the frontier as ``entry``."""
        anchor = request.meta.get("link_text") or ""
        self.add(entry, anchor if isinstance(anchor, str) else "", request.url, parent_relevance, domain_id, preview)

    def on_released(self, entry: int, request: Request) -> None:
        """The entry left the frontier for the scheduler's ready queue: its gain now
        goes to ``request.meta[GAIN_KEY]``."""
        request.meta[GAIN_KEY] = round(self.release(entry, request), 6)

    def on_dropped(self, entry: int) -> None:
        """The entry left the frontier without release (a domain filter dropped it, or a
        better link to its URL took its place)."""
        self.links.pop(entry, None)

    def on_handed_to_engine(self, request: Request) -> None:
        """A released request left the scheduler's ready queue for the engine (it counts
        as pending while the engine works on it, see :meth:`best_pending_link`)."""
        self.ready.pop(request, None)

    # -- values ------------------------------------------------------------------------
    def estimate(self, anchor: str, url: str, parent_relevance: float = 0.0, domain_id: int | None = None) -> float:
        """Expected gain of any link, queued or not."""
        link = QueuedLink(
            0,
            url,
            preview_terms(self.terms, anchor, url),
            parent_relevance,
            structure_authority(url, self.depth_decay, self.query_penalty),
            domain_id,
        )
        return self._gain(link, self.view())

    def _gain(self, link: QueuedLink, view: KnowledgeView) -> float:
        similarity, known = view.similarity_and_known(link.terms)
        relevance = link_relevance(min(1.0, similarity), link.parent_relevance, self.parent_weight)
        authority = link.structure
        if self.domain_stats is not None and link.domain_id is not None and link.domain_id >= 0:
            authority *= domain_authority(*self.domain_stats(link.domain_id), self.new_domain)
        return expected_gain(relevance, novelty_of(known, view.consistency), authority)

    def gain(self, entry: int) -> float | None:
        """Current expected gain of a queued frontier entry (None: not queued)."""
        link = self.links.get(entry)
        if link is None:
            return None
        return self._gain(link, self.view())

    # -- the queue -----------------------------------------------------------------------
    def add(
        self,
        entry: int,
        anchor: str,
        url: str,
        parent_relevance: float,
        domain_id: int | None = None,
        preview: LinkPreview | None = None,
    ) -> None:
        """A link joined the frontier as ``entry``. ``preview``: the link's
        :class:`~adaptive_spider.relevance.linkpreview.LinkPreview`, if the caller has it (saves parsing the URL).

        Its gain is computed when the best link is next asked for, with the other
        links queued since, in one vectorised pass: a crawl that never asks (no
        sufficiency stop) pays nothing, one that asks after every page pays a batch
        per page, not a formula per link.
        """
        self.added += 1
        if preview is None:
            terms = preview_terms(self.terms, anchor, url)
            structure = structure_authority(url, self.depth_decay, self.query_penalty)
        else:
            terms = preview.term_ids
            structure = structure_value(preview.path_depth, preview.has_query, self.depth_decay, self.query_penalty)
        self.links.put(entry, self.added, url, terms, float(parent_relevance), structure, domain_id)
        unvalued = self._unvalued
        unvalued.append(self.added << _ENTRY_BITS | entry)
        if len(unvalued) >= _COMPACT_MIN and len(unvalued) >= 2 * len(self.links):
            token_of = self.links.token_of
            self._unvalued = array("q", [key for key in unvalued if token_of(key & _ENTRY_MASK) == key >> _ENTRY_BITS])

    def release(self, entry: int, request: Request | None = None) -> float:
        """The entry left the frontier for the ready queue; returns its current gain."""
        link = self.links.pop(entry, None)
        value = self._gain(link, self.view()) if link is not None else 0.0
        if request is not None:
            self.ready[request] = True
            if link is not None:
                self.pending[request] = link
                if len(self.pending) > _RELEASED_KEPT:
                    self.pending.popitem(last=False)
            self._released[request.url] = value
            if len(self._released) > _RELEASED_KEPT:  # fetches that never gave a page
                self._released.popitem(last=False)
        if len(self._heap) >= _COMPACT_MIN:
            self._compact()
        return value

    def released_gain(self, url: str) -> float | None:
        """The gain a fetched URL had when it left the frontier (None: unknown), forgotten once asked."""
        return self._released.pop(url, None)

    def best(self) -> float:
        """The highest current gain among queued links (0.0 when none is queued)."""
        return self.best_link()[0]

    def best_link(self) -> tuple[float, str | None]:
        """The highest current gain among queued links and that link's URL."""
        view = self.view()
        self._value_new_links(view)
        heap = self._heap
        version = view.version
        for _ in range(self.max_refresh + 1):
            if not heap:
                return 0.0, None
            negative, key, seen = heap[0]
            token, entry = key >> _ENTRY_BITS, key & _ENTRY_MASK
            link = self.links.get(entry)
            if link is None or link.token != token:  # released, dropped, or its id reused
                heapq.heappop(heap)
                continue
            if seen == version:
                return -negative, link.url
            heapq.heapreplace(heap, (-self._gain(link, view), key, version))
        if not heap:
            return 0.0, None
        link = self.links.get(heap[0][1] & _ENTRY_MASK)
        return -heap[0][0], link.url if link is not None else None

    def best_pending(self, in_flight: Iterable[Request] | None = None) -> float:
        """Best current gain among queued, ready and in-flight requests (``in_flight``:
        the requests being downloaded, e.g. the downloader's ``active`` set)."""
        return self.best_pending_link(in_flight)[0]

    def best_pending_link(self, in_flight: Iterable[Request] | None = None) -> tuple[float, str | None]:
        """:meth:`best_pending` and the URL of that link."""
        candidates = [self.best_link()]
        released = [*self.ready, *(in_flight or ())]
        if released:
            view = self.view()
            for request in released:
                link = self.pending.get(request)
                if link is not None:
                    candidates.append((self._gain(link, view), request.url))
                else:  # released before these link values existed (a resumed JOBDIR)
                    candidates.append((float(request.meta.get(GAIN_KEY, 0.0) or 0.0), request.url))
        if in_flight is not None:  # everything else released has come back
            pending = self.pending
            self.pending = OrderedDict((request, pending[request]) for request in released if request in pending)
        return max(candidates, key=lambda pair: pair[0])

    def _value_new_links(self, view: KnowledgeView) -> None:
        """Put the links queued since the last ask in the heap, valued in one pass
        (the formulas of :meth:`_gain` over columns)."""
        if not self._unvalued:
            return
        keys = np.array(self._unvalued, dtype=np.int64)
        self._unvalued = array("q")
        links = self.links
        entries = keys & _ENTRY_MASK
        live = column_rows(links.token, entries, np.int64) == keys >> _ENTRY_BITS
        keys, entries = keys[live], entries[live]
        if not len(keys):
            return
        pairs = [view.similarity_and_known(terms) for terms in map(links.terms.__getitem__, entries.tolist())]
        similarity, known = np.array(pairs, dtype=np.float64).reshape(-1, 2).T
        parents = column_rows(links.parent, entries, np.float64)
        relevance = link_relevance(np.minimum(1.0, similarity), parents, self.parent_weight)
        domain_factors = self._domain_factors(column_rows(links.domain, entries, np.int64))
        authority = column_rows(links.structure, entries, np.float64) * domain_factors
        gains = expected_gain(relevance, novelty_of(known, view.consistency), authority)
        items = list(zip((-gains).tolist(), keys.tolist(), [view.version] * len(keys)))
        heap = self._heap
        if len(items) > len(heap) // 4:
            heap.extend(items)
            heapq.heapify(heap)
        else:
            for item in items:
                heapq.heappush(heap, item)
        self._compact()

    def _domain_factors(self, domains: np.ndarray) -> np.ndarray:
        """The domain part of each link's authority (1.0 without domain statistics or a domain)."""
        factors = np.ones(len(domains))
        if self.domain_stats is None:
            return factors
        unique, inverse = np.unique(domains, return_inverse=True)
        per_domain = [
            domain_authority(*self.domain_stats(domain), self.new_domain) if domain >= 0 else 1.0
            for domain in unique.tolist()
        ]
        return np.asarray(per_domain, dtype=np.float64)[inverse]

    def _compact(self) -> None:
        """Drop dead heap items once they outnumber the live ones."""
        if len(self._heap) < _COMPACT_MIN or len(self._heap) < 2 * len(self.links):
            return
        token_of = self.links.token_of
        self._heap = [item for item in self._heap if token_of(item[1] & _ENTRY_MASK) == item[1] >> _ENTRY_BITS]
        heapq.heapify(self._heap)
