"""Storage of the queued requests and their static link features.

Entries live in growable numpy columns indexed by an integer entry id, so the
strategies can gather the features of thousands of queued URLs at once; freed
ids are reused. The requests themselves sit in a parallel sequence,
``requests``, indexed by entry id.

A queued plain :class:`~scrapy.Request` is kept packed: its URL, callback, meta,
headers and any other non-default argument, without the Request object. With
its Headers, its meta dict and the entry of Scrapy's request fingerprint cache
(weakly keyed by the object), a Request costs about a kilobyte more than what
rebuilds it, so a frontier of a million URLs needs about 1 GB less; rebuilding
the request when it is released costs about 10 µs. Request subclasses are kept
as they are.
"""

from __future__ import annotations

from array import array
from types import MethodType
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scrapy import Request

from adaptive_spider.frontier.features import N_STATIC

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.http.headers import Headers

    #: What Request(headers=...) receives from a packed request.
    _HeaderPairs = Iterable[tuple[bytes, Any]]

# Request arguments kept when they differ from the constructor's defaults.
_OPTIONAL_ARGUMENTS = (
    "method",
    "body",
    "cookies",
    "encoding",
    "priority",
    "dont_filter",
    "errback",
    "flags",
    "cb_kwargs",
)
_DEFAULTS = {"method": "GET", "body": b"", "encoding": "utf-8", "priority": 0, "dont_filter": False, "errback": None}
_REFERER = b"Referer"
_VERBATIM = "verbatim_url"


class PackedRequest:
    """What rebuilds a plain Request: URL, callback, meta, headers and other non-default arguments.

    Meta is kept as a tuple of values under a tuple of keys shared by every request
    with the same keys (``meta_keys``); headers that are only a Referer (what
    Scrapy's RefererMiddleware adds to every followed link) as that value alone.
    ``shared`` holds the shared key tuples, bound-method callbacks (each
    ``spider.parse`` is a new, equal bound method, which would cost every queued
    URL an object and the garbage collector a visit) and the last Referer.
    """

    __slots__ = ("url", "callback", "meta_keys", "meta_values", "headers", "others")

    def __init__(self, request: Request, shared: dict):
        self.url = request.url
        callback = request.callback
        self.callback = shared.setdefault(callback, callback) if type(callback) is MethodType else callback
        meta = request.meta
        keys = tuple(meta)
        self.meta_keys = shared.setdefault(keys, keys)
        self.meta_values = tuple(meta.values())
        headers = _pack_headers(request.headers)
        if type(headers) is bytes:
            # The links of a page come one after another, with the same Referer: one copy
            # for them all (a hundred bytes less per queued URL).
            last = shared.get(_REFERER)
            if headers == last:
                headers = last
            else:
                shared[_REFERER] = headers
        self.headers = headers
        self.others = None if _all_defaults(request) else _other_arguments(request)

    def unpack(self) -> Request:
        meta = dict(zip(self.meta_keys, self.meta_values))
        headers = self.headers
        if type(headers) is bytes:
            headers = ((_REFERER, headers),)
        # `type(...) is bytes` narrows only its own branch for mypy: past it, no bytes are left.
        pairs = cast("_HeaderPairs | None", headers)
        if _VERBATIM in meta:
            return Request(self.url, callback=self.callback, headers=pairs, meta=meta or None, **(self.others or {}))
        # The URL is the request's own, made safe when it was first built: Scrapy's
        # verbatim_url skips making it safe again (half the cost of the new Request).
        meta[_VERBATIM] = True
        request = Request(self.url, callback=self.callback, headers=pairs, meta=meta, **(self.others or {}))
        del request.meta[_VERBATIM]
        return request


def _all_defaults(request: Request) -> bool:
    """Whether :func:`_other_arguments` would find nothing (the usual followed link), tested faster."""
    return (
        request.method == "GET"
        and request.body == b""
        and request.encoding == "utf-8"
        and request.priority == 0
        and request.dont_filter is False
        and request.errback is None
        and not request.cookies
        and not request.flags
        and not request.cb_kwargs
    )


def _other_arguments(request: Request) -> dict | None:
    others = {}
    for name in _OPTIONAL_ARGUMENTS:
        value = getattr(request, name)
        if value != _DEFAULTS.get(name) and (value or name in _DEFAULTS):
            others[name] = value
    return others or None


def _pack_headers(headers: Headers) -> bytes | tuple[tuple[bytes, Any], ...] | None:
    if not headers:
        return None
    if len(headers) == 1:
        # The stored form: Headers keeps normalised keys and lists of bytes (read
        # directly, without normalising the key again per lookup).
        ((key, values),) = dict.items(headers)
        if key == _REFERER and len(values) == 1:
            return values[0]
    return tuple(headers.items())


class RequestSlots:
    """The queued requests by entry id: ``slots[entry]`` is the request (None for a free id).

    A plain :class:`~scrapy.Request` is kept as a :class:`PackedRequest` and
    rebuilt when read; Request subclasses are kept as they are.
    """

    __slots__ = ("_items", "_shared")

    def __init__(self, capacity: int):
        self._items: list = [None] * capacity
        self._shared: dict = {}

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, entry: int) -> Request:
        # Typed for its readers, which read live entries only (a free id's None is never read).
        item = self._items[entry]
        return item.unpack() if type(item) is PackedRequest else item

    def __setitem__(self, entry: int, request: Request | PackedRequest | None) -> None:
        if type(request) is Request:
            request = PackedRequest(request, self._shared)
        self._items[entry] = request

    def grow(self, extra: int) -> None:
        self._items.extend([None] * extra)

    def url(self, entry: int) -> str:
        """The URL of a queued request, without rebuilding it (a strategy ranks by it often)."""
        return self._items[entry].url

    def priority(self, entry: int) -> int:
        """The priority of a queued request, without rebuilding it."""
        item = self._items[entry]
        if type(item) is PackedRequest:
            return int(item.others.get("priority", 0)) if item.others else 0
        return int(item.priority)

    def url_and_meta(self, entry: int) -> tuple[str, dict[str, Any]]:
        """The URL and meta of a queued request, without rebuilding it."""
        item = self._items[entry]
        if type(item) is PackedRequest:
            return item.url, dict(zip(item.meta_keys, item.meta_values))
        return item.url, item.meta


class FrontierStore:
    """Queued requests with, per entry: static features, domain id, parent page id,
    sibling group, link prior, the order of arrival and, for a strategy that reads
    them, the link's hashed tokens (:mod:`~adaptive_spider.frontier.learn.linkclassifier`)."""

    def __init__(self, capacity: int = 1024, token_width: int = 0):
        self.static = np.zeros((capacity, N_STATIC), dtype=np.float32)
        self.domain = np.zeros(capacity, dtype=np.int32)
        self.parent = np.full(capacity, -1, dtype=np.int64)
        self.group = np.full(capacity, -1, dtype=np.int64)
        self.prior = np.zeros(capacity, dtype=np.float32)
        self.order = np.zeros(capacity, dtype=np.int64)
        self.live = np.zeros(capacity, dtype=bool)
        # (capacity x 0) unless the strategy reads tokens: a million-entry frontier is 64 MB less.
        self.tokens = np.zeros((capacity, token_width), dtype=np.int32)
        self.requests = RequestSlots(capacity)
        self._free = array("q")
        self._top = 0
        self._arrivals = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(
        self,
        request: Request,
        static: np.ndarray,
        domain_id: int,
        parent_id: int,
        prior: float,
        group_id: int = -1,
        order: int | None = None,
        tokens: list[int] | None = None,
    ) -> int:
        """Queue a request; ``order`` keeps the arrival order of an entry it replaces."""
        entry = self._free.pop() if self._free else self._next_slot()
        self.static[entry] = static
        self.domain[entry] = domain_id
        self.parent[entry] = parent_id
        self.group[entry] = group_id
        # + 0.0: a -0.0 prior sorts as 0.0 in the strategies' integer keys
        self.prior[entry] = prior + 0.0
        if order is None:
            order = self._arrivals
            self._arrivals += 1
        self.order[entry] = order
        if tokens is not None:
            row = self.tokens[entry]
            row[:] = 0
            row[: len(tokens)] = tokens
        self.live[entry] = True
        self.requests[entry] = request
        self.size += 1
        return entry

    def take(self, entry: int) -> Request:
        """Remove an entry and return its request."""
        request = self.requests[entry]
        self.requests[entry] = None
        self.live[entry] = False
        self._free.append(entry)
        self.size -= 1
        return request

    def take_keeping_id(self, entry: int) -> Request:
        """Remove an entry whose id a strategy still holds; return its request.

        The id is not reused until :meth:`free_id` (when the strategy gives it back),
        so a strategy never holds one id for two entries.
        """
        request = self.requests[entry]
        self.requests[entry] = None
        self.live[entry] = False
        self.size -= 1
        return request

    def free_id(self, entry: int) -> None:
        """Let the id of an entry removed by :meth:`take_keeping_id` be reused."""
        self._free.append(entry)

    def live_ids(self) -> np.ndarray:
        return np.flatnonzero(self.live[: self._top]).astype(np.int64)

    def priors(self, entries: np.ndarray) -> np.ndarray:
        """The link priors (float32) of entries."""
        return self.prior[entries]

    def arrival_orders(self, entries: np.ndarray) -> np.ndarray:
        """The order in which entries were first queued."""
        return self.order[entries]

    def _next_slot(self) -> int:
        if self._top == len(self.requests):
            self._grow()
        entry = self._top
        self._top += 1
        return entry

    def _grow(self) -> None:
        extra = len(self.requests)
        self.static = np.vstack([self.static, np.zeros_like(self.static[:extra])])
        self.domain = np.concatenate([self.domain, np.zeros(extra, dtype=self.domain.dtype)])
        self.parent = np.concatenate([self.parent, np.full(extra, -1, dtype=self.parent.dtype)])
        self.group = np.concatenate([self.group, np.full(extra, -1, dtype=self.group.dtype)])
        self.prior = np.concatenate([self.prior, np.zeros(extra, dtype=self.prior.dtype)])
        self.order = np.concatenate([self.order, np.zeros(extra, dtype=self.order.dtype)])
        self.live = np.concatenate([self.live, np.zeros(extra, dtype=bool)])
        self.tokens = np.vstack([self.tokens, np.zeros_like(self.tokens[:extra])])
        self.requests.grow(extra)
