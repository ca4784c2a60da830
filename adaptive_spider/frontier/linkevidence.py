"""What a link tells before its page is fetched: the evidence a queued request is ranked by.

A request's context (``depth``, the page it was found on, its ``link_text``, the
page's other anchors for its URL and its ``link_context``) and its URL give the
static part of its feature vector, its domain, its parent page and its
learning-free link prior; a link that leads to a copy of what the crawl has (a page in
another language than the crawl's, ``link_language``; any link of a page the crawl
fetched under another URL) has its prior lowered (``ADAPTIVE_COPY_WEIGHT``). :func:`link_evidence`
computes them, reading the crawl state and changing nothing in it (a domain seen
for the first time gets its id, nothing more), so a link the dupefilter then
drops leaves no trace. Recording the link among its page's outlinks is a
separate step, :func:`record_outlink`, which the scheduler takes for the links
it keeps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from adaptive_spider.frontier.features import static_vector
from adaptive_spider.frontier.strategies.base import link_prior
from adaptive_spider.relevance.linkpreview import LinkPreview
from adaptive_spider.relevance.links import names_a_file
from adaptive_spider.relevance.scoring import link_preview_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy import Request

    from adaptive_spider.crawl.state import CrawlState
    from adaptive_spider.frontier.pagelog import PageLog

#: request.meta key of the page a request was found on (a PageLog id).
PARENT_KEY = "adaptive_parent"


def anchor_text(request: Request) -> str:
    """The anchor text of a request's link ("" when the spider gave none)."""
    anchor = request.meta.get("link_text") or ""
    return anchor if isinstance(anchor, str) else ""


def other_anchors(meta: Mapping[str, Any]) -> list[str]:
    """The anchor texts of the page's other links to the request's URL, if the spider said
    (``link_other_anchors``: a table of contents names a page under each of its sections)."""
    others = meta.get("link_other_anchors")
    if not others or not isinstance(others, (list, tuple)):
        return []
    return [text for text in others if isinstance(text, str) and text]


def best_anchor(
    state: CrawlState, anchor: str, term_ids: tuple[int, ...], others: list[str], url: str
) -> tuple[str, tuple[int, ...]]:
    """Of a link's anchor text (whose preview shows the query terms ``term_ids``) and the
    page's other anchors for its URL, the one whose preview (with the URL's words) is most
    similar to the query as the crawl values it now, with its preview's term ids; the first
    anchor when none says more."""
    if not others:
        return anchor, term_ids
    best = state.link_similarity(term_ids, anchor, url)
    for other in others:
        other_ids = state.terms.present_ids(link_preview_text(other, url))
        similarity = state.link_similarity(other_ids, other, url)
        if similarity > best:
            anchor, term_ids, best = other, other_ids, similarity
    return anchor, term_ids


def link_context(request: Request) -> str:
    """The context (headings, list label) a link was found under, if the spider said."""
    context = request.meta.get("link_context")
    return context if isinstance(context, str) else ""


def link_surroundings(meta: Mapping[str, Any]) -> str:
    """What is valued as a link's context: the headings and list label it was found under,
    and what the page says beside it (``link_description``: its table row's next cell...)."""
    context = meta.get("link_context") or ""
    description = meta.get("link_description") or ""
    context = context if isinstance(context, str) else ""
    if description and isinstance(description, str):
        return f"{context} {description}" if context else description
    return context


def link_language(meta: Mapping[str, Any]) -> str:
    """The language a link's page is declared in, as far as the link says (``link_language``:
    its hreflang, else its page's language), "" when unknown."""
    language = meta.get("link_language") or ""
    return language if isinstance(language, str) else ""


def parent_page(request: Request) -> int:
    """The page log id of the page a request's link was found on (-1: none)."""
    parent = request.meta.get(PARENT_KEY, -1)
    return parent if isinstance(parent, int) else -1


class LinkEvidence:
    """A link's preview, static features, domain id, parent page id and link prior."""

    __slots__ = ("anchor", "domain_id", "parent", "preview", "prior", "static")

    def __init__(
        self, anchor: str, preview: LinkPreview, static: np.ndarray, domain_id: int, parent: int, prior: float
    ):
        self.anchor = anchor
        self.preview = preview
        self.static = static
        self.domain_id = domain_id
        self.parent = parent
        self.prior = prior

    def as_tuple(self) -> tuple[np.ndarray, int, int, float]:
        """``(static, domain id, parent, prior)``: the arguments of Frontier.add after the request."""
        return self.static, self.domain_id, self.parent, self.prior


class ValuedLink:
    """A link's value as the crawl knows it now, without its features: its best anchor text,
    preview, parent page id, anchor similarity, parent score and link prior."""

    __slots__ = ("anchor", "preview", "parent", "similarity", "parent_score", "prior")

    def __init__(
        self, anchor: str, preview: LinkPreview, parent: int, similarity: float, parent_score: float, prior: float
    ):
        self.anchor = anchor
        self.preview = preview
        self.parent = parent
        self.similarity = similarity
        self.parent_score = parent_score
        self.prior = prior


def valued_link(request: Request, state: CrawlState) -> ValuedLink:
    """A request's link valued as the crawl knows it now: enough to tell whether it is a better
    link to a queued URL than the one it was queued by."""
    meta = request.meta
    anchor = anchor_text(request)
    preview = state.link_previews.of(request, anchor)
    others = other_anchors(meta)
    if others:  # the preview's URL words stay; its terms become the best anchor's
        anchor, preview.term_ids = best_anchor(state, anchor, preview.term_ids, others, request.url)
    parent = parent_page(request)
    context, language = link_surroundings(meta), link_language(meta)
    similarity, parent_score, prior = link_value(
        state, preview.term_ids, anchor, request.url, context, parent, preview.is_file, language
    )
    return ValuedLink(anchor, preview, parent, similarity, parent_score, prior)


def link_evidence(
    request: Request, state: CrawlState, round_discovered: int, valued: ValuedLink | None = None
) -> LinkEvidence:
    """The evidence of a request's link, as the crawl knows it now (found in frontier
    round ``round_discovered``; ``valued``: the link's value, when the caller has it)."""
    if valued is None:
        valued = valued_link(request, state)
    preview = valued.preview
    static = static_vector(
        depth=int(request.meta.get("depth", 0) or 0),
        parent_score=valued.parent_score,
        anchor_similarity=valued.similarity,
        path_segments=preview.path_depth,
        has_query=preview.has_query,
        round_discovered=round_discovered,
    )
    domain_id = state.domains.id_of(preview.domain)
    return LinkEvidence(valued.anchor, preview, static, domain_id, valued.parent, valued.prior)


def link_value(
    state: CrawlState,
    term_ids: tuple[int, ...],
    anchor: str,
    url: str,
    context: str,
    parent: int,
    is_file: bool,
    language: str = "",
) -> tuple[float, float, float]:
    """``(anchor similarity, parent score, link prior)`` of a link whose preview shows the
    query terms ``term_ids``, as the crawl (its statistics, its query expansion) values it now;
    ``is_file``: the URL names a file that is not a page (``links.names_a_file``);
    ``language``: the language the link's page is declared in, as far as the link says."""
    parent_score = state.parent_score(parent)
    similarity = state.link_similarity(term_ids, anchor, url)
    context_similarity = state.context_similarity(context) if context else 0.0
    prior = link_prior(similarity, parent_score, context_similarity, state.config.prior_weights)
    if is_file:
        # Any spider may follow a "Show source" link whose URL repeats the query's words, but
        # its file's relevance is 0 (not a page): last in the prior's order.
        prior = 0.0
    elif state.leads_to_copy(language, parent):
        prior *= state.config.copy_weight
    return similarity, parent_score, prior


def revalued_link(state: CrawlState, url: str, meta: Mapping[str, Any], parent: int) -> tuple[float, float]:
    """``(anchor similarity, link prior)`` of a queued link (its URL, its request's meta and
    the page it was found on), valued anew: the query expansion has changed since it was queued."""
    anchor = meta.get("link_text") or ""
    anchor = anchor if isinstance(anchor, str) else ""
    term_ids = state.terms.present_ids(link_preview_text(anchor, url))
    anchor, term_ids = best_anchor(state, anchor, term_ids, other_anchors(meta), url)
    is_file = names_a_file(urlsplit(url).path)
    context = link_surroundings(meta)
    similarity, _, prior = link_value(state, term_ids, anchor, url, context, parent, is_file, link_language(meta))
    return similarity, prior


def record_outlink(pages: PageLog, request: Request, evidence: LinkEvidence) -> None:
    """Keep a link among its page's outlinks: the page log's sample of them is the next
    state of the page's transition in the Q-network's targets."""
    if evidence.parent >= 0:
        group = pages.group_of(evidence.parent, link_context(request))
        pages.add_child(evidence.parent, evidence.static, evidence.domain_id, evidence.prior, group)
