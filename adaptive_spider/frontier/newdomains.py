"""The new-domain share: a part of each release round for the sites the crawl has not entered.

A focused order's scores cannot judge a site none of whose pages was seen: a documentation
site's start page is a table of contents whose entries ("java.base", "All Classes") share no
word with any query. So ``ADAPTIVE_NEW_DOMAIN_SHARE`` of all releases goes to *young* domains,
fewer than ``ADAPTIVE_NEW_DOMAIN_PAGES`` of whose requests were released, one link per domain
and round, whatever the strategy's scores; a site leaves the share once it has had its pages,
or when its answers served no page. The :class:`~adaptive_spider.frontier.frontier.Frontier`
asks :meth:`NewDomainShare.links` for a round's share before its strategy chooses the rest.
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import TYPE_CHECKING, Any

from adaptive_spider.frontier.features import DEPTH_SCALE, STATIC_NAMES

if TYPE_CHECKING:
    from adaptive_spider.frontier.frontier import Frontier

_DEPTH = STATIC_NAMES.index("depth")
# A link's depth as the store keeps it (depth / DEPTH_SCALE), for links found on a start page.
_START_LINK_DEPTH = 1.0 / DEPTH_SCALE + 1e-6


class NewDomainShare:
    """The young domains' queued links and the share of each round that goes to them.

    Per young domain a heap of the keys (depth, -prior, arrival order, entry) of its queued
    links; and a heap of the domains by their best link's depth, then the number of their
    links known, then that link's prior (``young_keys``: each domain's current key; others
    met in the heap are stale). Nearest the seeds first: a start page's links to other sites
    are the user's own pointers, and a link's prior says little about a site none (or few) of
    whose pages were seen.
    """

    def __init__(self, frontier: Frontier, config: Any) -> None:
        self.frontier = frontier
        self.share = float(getattr(config, "new_domain_share", 0.0)) if frontier.strategy.explores_new_domains else 0.0
        self.pages = max(1, int(getattr(config, "new_domain_pages", 1)))
        # A site's pages after its first wait until the crawl has released this many requests:
        # a focused crawl's first pages are the ones the query's words point to.
        self.after = int(getattr(config, "new_domain_pages_after", 0))
        # The first pages of the sites a start page links to may come ahead of the share
        # (ADAPTIVE_START_SITES_SHARE), which then waits until the releases catch up with it:
        # a hub's fifty sites are opened in its first hundred releases, not its first five
        # hundred, and a slow one among them starts answering that much sooner.
        self.start_share = float(getattr(config, "start_sites_share", 0.0)) if self.share else 0.0
        self.n_start_opened = 0
        #: Releases the share made (the frontier counts them as it accepts them).
        self.n_explored = 0
        self.young_links: dict[int, list[tuple[float, float, int, int]]] = {}
        self.young_heap: list[tuple] = []
        self.young_keys: dict[int, tuple] = {}
        self.young_sizes: Counter = Counter()

    def is_young(self, domain_id: int) -> bool:
        """Whether fewer of a domain's requests were released than ADAPTIVE_NEW_DOMAIN_PAGES."""
        return self.frontier.domains.profiles[domain_id].released < self.pages

    def note_link(self, domain_id: int, entry: int, prior: float) -> None:
        """A link just queued: one of its young domain's, when the share is on."""
        if not self.share or not self.is_young(domain_id):
            return
        store = self.frontier.store
        key = (float(store.static[entry, _DEPTH]), -prior, int(store.order[entry]), entry)
        links = self.young_links.setdefault(domain_id, [])
        heapq.heappush(links, key)
        self.young_sizes[domain_id] += 1
        self._push_domain(domain_id, links[0])

    def rebuild(self, entries: list[int]) -> None:
        """Key the young domains' links anew (their priors changed)."""
        if not self.share:
            return
        self.young_links, self.young_heap, self.young_keys = {}, [], {}
        self.young_sizes.clear()
        store = self.frontier.store
        for entry in entries:
            self.note_link(int(store.domain[entry]), entry, float(store.prior[entry]))

    def _domain_key(self, domain_id: int, best: tuple[float, float, int, int]) -> tuple:
        """Where a young domain stands in the share: its best link's depth, then how many of its
        links the crawl knows (in powers of two), then its best link's prior and arrival order.
        A site whose pages link to many of its own is a large one, and a large site holds more
        of any topic's pages than a page one link points to."""
        depth, neg_prior, order, entry = best
        return (depth, -self.young_sizes[domain_id].bit_length(), neg_prior, order, entry, domain_id)

    def _push_domain(self, domain_id: int, best: tuple[float, float, int, int]) -> None:
        """Queue a young domain in the share under its current key, unless it is queued so already."""
        key = self._domain_key(domain_id, best)
        if self.young_keys.get(domain_id) != key:
            self.young_keys[domain_id] = key
            heapq.heappush(self.young_heap, key)

    def _top(self, domain_id: int) -> tuple[float, float, int, int] | None:
        """A young domain's best queued link (stale keys dropped on the way), None when it has none."""
        links = self.young_links.get(domain_id)
        while links and not self._is_current(links[0]):
            heapq.heappop(links)
        return links[0] if links else None

    def _is_current(self, key: tuple[float, float, int, int]) -> bool:
        """Whether the entry of a key is still queued as the same link (ids are reused)."""
        _, _, order, entry = key
        store = self.frontier.store
        return bool(store.live[entry]) and int(store.order[entry]) == order

    def links(self, n: int) -> list[tuple[int, int]]:
        """``(tier, entry)`` of the best links of young domains (fewer than
        ``ADAPTIVE_NEW_DOMAIN_PAGES`` released), one per domain, as many as
        ``ADAPTIVE_NEW_DOMAIN_SHARE`` of all releases allows this round (the top tier only:
        an explicit priority still comes first). A domain's pages after its first wait until
        the one before has answered and the crawl has released ``ADAPTIVE_NEW_DOMAIN_PAGES_AFTER``
        requests; a slow or busy domain waits for a later round; a domain whose answers served no
        page leaves the share. The first pages of the sites a start page links to may also take
        ``ADAPTIVE_START_SITES_SHARE`` of the releases, ahead of the share, which counts them."""
        frontier = self.frontier
        heap = self.young_heap
        if not self.share or not heap:
            return []
        quota = min(n, int(self.share * (frontier.n_released + n)) + 1 - self.n_explored)
        start_quota = 0
        if self.start_share:
            start_quota = min(n, int(self.start_share * (frontier.n_released + n)) + 1 - self.n_start_opened)
        top = frontier.top_tier()
        found: list[tuple[int, int]] = []
        n_opening = 0  # of found: first pages of the start pages' sites
        later: list[tuple[float, float, int, int, int]] = []
        while heap and len(found) < n and (len(found) < quota or n_opening < start_quota):
            item = heapq.heappop(heap)
            domain_id = item[-1]
            if domain_id not in self.young_links or self.young_keys.get(domain_id) != item:
                continue  # stale: the domain left the share, or is queued under a newer key
            del self.young_keys[domain_id]
            if not self.is_young(domain_id) or frontier.drop_reason(domain_id):
                del self.young_links[domain_id]
                continue
            best = self._top(domain_id)
            if best is None:
                del self.young_links[domain_id]
                continue
            if self._domain_key(domain_id, best) != item:  # its best link now is another one
                self._push_domain(domain_id, best)
                continue
            released = frontier.domains.profiles[domain_id].released
            untried = frontier.domains.is_untried(domain_id)
            if released and not untried and not frontier.domains.has_served(domain_id):
                del self.young_links[domain_id]  # answered, and not with a page: nothing to enter
                continue
            opening = not released and item[0] <= _START_LINK_DEPTH
            if len(found) >= quota and not (opening and n_opening < start_quota):
                later.append(item)
                if item[0] > _START_LINK_DEPTH:
                    break  # deeper from here on (the heap's first key): only the share's quota left
                continue
            if (
                any(frontier.store.domain[entry] == domain_id for _, entry in found)
                or (released and (untried or frontier.n_released < self.after))
                or frontier.domains.is_slow(domain_id, frontier.config.slow_domain_ms)
                or frontier.is_busy(domain_id)
            ):
                later.append(item)
                continue
            heapq.heappop(self.young_links[domain_id])
            entry = best[3]
            tier = frontier.store.requests.priority(entry)
            if tier == top:
                found.append((tier, entry))
                if opening:
                    n_opening += 1
                    self.n_start_opened += 1
            following = self._top(domain_id)
            if following is not None:
                self._push_domain(domain_id, following)
        for item in later:
            self.young_keys[item[-1]] = item
            heapq.heappush(heap, item)
        return found
