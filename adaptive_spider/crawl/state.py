"""The one shared object of a focused crawl.

:class:`CrawlState` is built once per crawler (``CrawlState.of(crawler)``) and
shared by the scheduler, the middlewares and the pipelines: the validated
configuration, the relevance scorer and its term statistics (and the page relevance
model that ``ADAPTIVE_RELEVANCE`` names, if any), the domain profiles, the log of
fetched pages and (when the AdaptiveScheduler runs) the frontier that learns from
rewards. Data flows one way: middlewares record what happened to a request, the
state turns it into rewards, the frontier learns.
The scheduler attaches its frontier when it opens (:meth:`CrawlState.attach_frontier`);
a reward for a request a frontier released, with no frontier attached, is logged as
lost rather than dropped unseen. Whoever needs every analysed page, whatever the spider
makes of it, listens with :meth:`CrawlState.on_page` (the sufficiency pipeline: the
knowledge base is the pages the crawl fetched, not the items a project chose to yield).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from scrapy.utils.httpobj import urlparse_cached

from adaptive_spider.frontier.domains import DomainProfiles
from adaptive_spider.frontier.linkevidence import (  # noqa: F401 (PARENT_KEY: also here)
    PARENT_KEY,
    link_context,
    parent_page,
    revalued_link,
)
from adaptive_spider.frontier.pagelog import PageLog
from adaptive_spider.relevance.base import PageRelevance, checked_score
from adaptive_spider.relevance.expansion import QueryExpansion, mix
from adaptive_spider.relevance.linkpreview import LinkPreviews
from adaptive_spider.relevance.links import PageLinks, page_language
from adaptive_spider.relevance.pagetext import PageFields, content_sha1, page_fields
from adaptive_spider.relevance.scoring import QueryTerms, RelevanceScorer, link_preview_text
from adaptive_spider.settings.components import build, load_class
from adaptive_spider.settings.config import AdaptiveConfig
from adaptive_spider.settings.table import RELEVANCE_MODELS
from adaptive_spider.sufficiency.knowledge import KnowledgeState

if TYPE_CHECKING:
    import numpy as np
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response, TextResponse
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

    from adaptive_spider.frontier.frontier import Frontier

logger = logging.getLogger(__name__)

#: request.meta key of the scheduler's explanation of a released request.
DECISION_KEY = "adaptive"
STATS_PREFIX = "adaptive"
#: Fewest characters of text that make a page a copy when another URL gave the same text.
MIN_COPY_CHARS = 200
#: Link contexts whose query terms are remembered (a page's links share a few, and
#: navigation repeats them on every page): the most recently used.
CONTEXT_MEMO_SIZE = 4096


@dataclass
class PageAnalysis:
    """What the crawl knows about one fetched HTML page."""

    fields: PageFields
    headings: list[str]
    relevance: float
    sha1: str
    page_id: int = -1
    #: Query-term counts per field (fields x terms) made while scoring: the sufficiency
    #: estimator counts the same terms in the same fields, so it reuses them.
    counts: np.ndarray | None = None


#: Called once per analysed page (see :meth:`CrawlState.on_page`).
PageListener = Callable[[PageAnalysis], None]


def _link_origin(request: Request | None) -> tuple[int, str]:
    """The page a request's link was found on, and the link's context there."""
    if request is None:
        return -1, ""
    return parent_page(request), link_context(request)


def build_relevance(config: AdaptiveConfig, crawler: Crawler | None) -> PageRelevance | None:
    """The model of ``ADAPTIVE_RELEVANCE`` when it names a class, built as Scrapy builds a
    component (``from_crawler``, ``from_settings``, or the class itself); None for bm25."""
    if config.relevance in RELEVANCE_MODELS:
        return None
    cls = load_class(config.relevance)
    return cast("PageRelevance", build(cls, crawler, config.as_settings()))


def domain_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def request_domain(request: Request) -> str:
    """The domain of a request (its parsed URL is cached on the request, as Scrapy does)."""
    return (urlparse_cached(request).hostname or "").lower()


class CrawlState:
    """Configuration, relevance, domain profiles and page log of one crawl."""

    def __init__(
        self, config: AdaptiveConfig, stats: StatsCollector | None = None, relevance: PageRelevance | None = None
    ) -> None:
        self.config = config
        self.stats = stats
        self.terms = QueryTerms(config.query, config.keywords, config.keyword_weight)
        # The query's BM25 scorer: the page relevance by default, and always the link
        # similarities and the term statistics the self-stop reads.
        self.scorer = RelevanceScorer(
            self.terms,
            config.relevance_field_weights,
            config.relevance_k1,
            config.relevance_b,
            config.relevance_link_discount,
            config.relevance_half,
        )
        #: The page relevance model of ``ADAPTIVE_RELEVANCE`` when it names a class (None: BM25).
        self.relevance = relevance if relevance is not None else build_relevance(config, None)
        for name, value in (
            ("ADAPTIVE_RELEVANCE_QUERY_WEIGHT", config.relevance_query_weight),
            ("ADAPTIVE_RELEVANCE_MODEL_ABOVE", config.relevance_model_above),
        ):
            if self.relevance is None and value > 0:
                logger.warning(
                    "%s (%s) has no effect: ADAPTIVE_RELEVANCE is %r, the query's page score alone, with no "
                    "model's score to mix in (docs/plugins.md)", name, value, config.relevance,
                )  # fmt: skip
        self.domains = DomainProfiles(config.domain_weights, min_attempts=config.unreliable_min_attempts)
        self.pages = PageLog(
            config.qnet_next_actions, hit_at=config.relevant_threshold, section_lift=config.section_lift
        )
        # The frontier that learns from rewards (attached by the scheduler when it opens).
        self.frontier: Frontier | None = None
        #: Set by a scheduler that judges repeats by URL: whether a GET request without a body
        #: for this URL would be refused as a duplicate, with no queued entry left to update.
        self.is_settled_url: Callable[[str], bool] | None = None
        self._warned_no_frontier = False
        self.n_relevant = 0
        self.n_fetched = 0
        #: Relevance summed over the fetched pages of each declared language (``<html lang>``).
        self.language_relevance: dict[str, float] = {}
        #: The language the crawl wants (``ADAPTIVE_LANGUAGE``; with "auto", the one whose pages
        #: weigh most so far), "" while none is known or for "any".
        self.language = "" if config.language in ("auto", "any") else config.language
        #: Content digests of the pages fetched (long enough to tell pages apart), and the page
        #: log ids of the pages that were copies: their text was fetched under another URL, or
        #: they are in another language than the crawl's.
        self._contents: set[bytes] = set()
        self.copy_pages: set[int] = set()
        self._analyses: WeakKeyDictionary[Response, PageAnalysis] = WeakKeyDictionary()
        self._links: WeakKeyDictionary[Response, PageLinks] = WeakKeyDictionary()
        # A page's fields, read once for a relevance model that scores in worker processes
        # (before the spider sees the page) and for the analysis; and the scores it gave.
        self._fields: WeakKeyDictionary[Response, tuple[PageFields, list[str]]] = WeakKeyDictionary()
        self._model_scores: WeakKeyDictionary[Response, float] = WeakKeyDictionary()
        # Query term counts of pages that score_ahead counted (ADAPTIVE_RELEVANCE_MODEL_ABOVE).
        self._counted: WeakKeyDictionary[Response, tuple[np.ndarray, np.ndarray]] = WeakKeyDictionary()
        self._page_listeners: list[PageListener] = []
        # A link context's query terms (scored with the current statistics on each read).
        self._context_terms = functools.lru_cache(maxsize=CONTEXT_MEMO_SIZE)(self._terms_of_context)
        #: The previews of the crawl's links (URL words and anchor text: their query terms).
        self.link_previews = LinkPreviews(self.terms)
        # -- query expansion: words of the best pages so far, mixed into a link's similarity --
        self.expansion = QueryExpansion(
            self.terms,
            n_terms=config.expansion_terms if config.expansion != "off" else 0,
            feedback_pages=config.expansion_pages,
            min_relevance=config.relevant_threshold,
            variants_only=config.expansion == "variants",
        )
        self._context_expansion = functools.lru_cache(maxsize=CONTEXT_MEMO_SIZE)(self._expansion_of_context)
        # Times the queued links were valued anew for a changed expansion, and the pages fetched then.
        self.n_revalued = 0
        self._revalued_at = 0
        # -- sufficiency: the knowledge base's statistics and the queued links' expected gain --
        self.knowledge = KnowledgeState.from_config(config, self.terms, self.domains)

    @classmethod
    def of(cls, crawler: Crawler) -> CrawlState:
        """The crawl's state, built from the crawler's settings on first use (the one
        way to reach it: it is kept on the crawler)."""
        state = getattr(crawler, "_adaptive_state", None)
        if state is None:
            config = AdaptiveConfig.from_settings(crawler.settings)
            state = cls(config, getattr(crawler, "stats", None), build_relevance(config, crawler))
            cast(Any, crawler)._adaptive_state = state  # an attribute of ours, not Crawler's
        return state

    def attach_frontier(self, frontier: Frontier) -> None:
        """Rewards train this frontier's strategy from now on."""
        self.frontier = frontier

    def on_page(self, listener: PageListener) -> None:
        """Call ``listener`` with every page analysed from now on, once per page.

        Listeners hear of a page when it is first analysed (by the RelevanceMiddleware,
        before the spider's callback, or by a spider that analyses it itself), so they
        see every HTML page of the crawl whether or not the spider yields an item for it.
        """
        self._page_listeners.append(listener)

    def inc_stat(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{STATS_PREFIX}/{key}", count)

    # -- pages -------------------------------------------------------------------------
    def analyze(self, response: Response) -> PageAnalysis:
        """Fields, relevance and content hash of an HTML response, computed once.

        The first call logs the page (term statistics, domain relevance, page
        log), rewards the request that fetched it and tells the page listeners
        (:meth:`on_page`); later calls for the same response return the cached
        analysis, so a page is told once however many components analyse it.
        """
        analysis = self._analyses.get(response)
        if analysis is None:
            fields, headings = self._fields.pop(response) if response in self._fields else page_fields(response)
            relevance, counts = self.page_relevance(fields, response)
            sha1 = content_sha1(fields.body)
            language = page_language(cast("TextResponse", response))
            self._record_language(language, relevance)
            copy = self._is_copy(sha1, fields.body, language)
            if not copy and self.expansion.observe(fields, relevance):
                self._expansion_changed()
            analysis = PageAnalysis(fields, headings, relevance, sha1, counts=counts)
            # A copy is a miss to the frontier (nothing new for the query), its relevance stays
            # the page's own for the spider, the index and the self-stop.
            analysis.page_id = self._record_page(response.request, response.url, 0.0 if copy else relevance)
            if copy:
                self.copy_pages.add(analysis.page_id)
            self._analyses[response] = analysis
            self._tell_listeners(analysis)
        return analysis

    def page_relevance(self, fields: PageFields, response: Response | None = None) -> tuple[float, np.ndarray]:
        """A page's relevance and its query terms' counts per field; the page joins the term statistics.

        The relevance is the query's page score (BM25), or ``ADAPTIVE_RELEVANCE``'s model's
        score mixed with it by ``ADAPTIVE_RELEVANCE_QUERY_WEIGHT`` (on the pages whose query score
        reaches ``ADAPTIVE_RELEVANCE_MODEL_ABOVE``; the others keep it alone). :meth:`analyze` calls this
        for each fetched page; ``benchmarks/page_scores.py`` for pages of a crawl's trace.
        """
        counted = self._counted.pop(response, None) if response is not None else None
        query_score, counts = self.scorer.score_and_count(fields, counted=counted)
        weight = self.config.relevance_query_weight
        if self.relevance is None or weight >= 1.0:
            return query_score, counts
        if query_score < self.config.relevance_model_above:
            # Far from the query by its words: the model is not asked (ADAPTIVE_RELEVANCE_MODEL_ABOVE).
            if response is not None:
                self._model_scores.pop(response, None)
            self.inc_stat("relevance/model_skipped")
            return query_score, counts
        if self.scores_later:
            # Scored in worker processes as the page arrived (score_ahead), or not at all when
            # they were busy: then the query's score alone, the crawl must not wait.
            model_score = self._model_scores.pop(response, None) if response is not None else None
            if model_score is None:
                self.inc_stat("relevance/model_busy")
                return query_score, counts
            self.inc_stat("relevance/model_scored")
        else:
            model_score = checked_score(self.relevance.score(fields, response), self.relevance)
        return weight * query_score + (1.0 - weight) * model_score, counts

    @property
    def scores_later(self) -> bool:
        """Whether the relevance model scores pages in worker processes (:meth:`score_ahead`)."""
        return (
            self.relevance is not None
            and self.config.relevance_query_weight < 1.0
            and bool(getattr(self.relevance, "scores_later", False))
        )

    def score_ahead(self, response: Response) -> Deferred[Any] | None:
        """Start the relevance model's score of an HTML page in its worker processes, for
        :meth:`analyze` to find when the spider gets the page (``ModelScoreMiddleware``).

        None when the model scores in the crawl's thread, or its workers are all busy.
        """
        if not self.scores_later or response in self._analyses:
            return None
        fields = self._fields.get(response)
        if fields is None:
            fields = self._fields[response] = page_fields(response)
        if self.config.relevance_model_above > 0:
            # Counted once: page_relevance scores the page from these counts with the statistics then.
            counted = self._counted[response] = self.scorer.field_counts(fields[0])
            if self.scorer.score_counts(*counted, fields[0].link_density) < self.config.relevance_model_above:
                return None  # judged by the query's score alone
        pending = cast("Any", self.relevance).score_later(fields[0])
        if pending is None:
            return None

        def keep(score: float) -> None:
            self._model_scores[response] = checked_score(score, self.relevance)

        def lost(failure: Failure) -> None:
            # The page is then judged by the query's score alone; the crawl goes on.
            logger.warning("%s: no model score for %s: %s", type(self.relevance).__name__, response.url,
                           failure.getErrorMessage())  # fmt: skip

        return pending.addCallbacks(keep, lost)

    def _tell_listeners(self, analysis: PageAnalysis) -> None:
        """Each listener in turn; one that fails is logged and the others still hear,
        as Scrapy's signals do: a listener's error must not cost the spider its page."""
        for listener in self._page_listeners:
            try:
                listener(analysis)
            except Exception:
                logger.exception("A page listener failed on %s", analysis.fields.url)

    def _record_language(self, language: str, relevance: float) -> None:
        """Count a page's relevance for the language it declares; with ``ADAPTIVE_LANGUAGE``
        "auto" the crawl wants the language whose pages weigh most: the pages that answer a
        query are in its language, the translations of a manual score on its code words."""
        if not language or self.config.language != "auto":
            return
        weights = self.language_relevance
        weights[language] = weights.get(language, 0.0) + relevance
        if language != self.language and weights[language] > weights.get(self.language, -1.0):
            self.language = language
            if self.stats is not None:
                self.stats.set_value(f"{STATS_PREFIX}/language", language)

    def other_language(self, language: str) -> bool:
        """Whether a page declared in ``language`` is in another language than the crawl's."""
        return bool(language) and bool(self.language) and language != self.language

    def _is_copy(self, sha1: str, body: str, language: str) -> bool:
        """Whether a page copies what the crawl has: its text was fetched under another URL (a
        mirror, a manual's untranslated pages under each language's path), or it is in
        another language than the crawl's (a translation). Short texts (an empty page, a
        redirect stub) tell no page from another and are no copies."""
        if self.config.copy_weight >= 1.0:
            return False
        if self.other_language(language):
            self.inc_stat("copies/other_language")
            return True
        if len(body) < MIN_COPY_CHARS:
            return False
        digest = bytes.fromhex(sha1)
        if digest in self._contents:
            self.inc_stat("copies/same_text")
            return True
        self._contents.add(digest)
        return False

    def leads_to_copy(self, language: str, parent: int) -> bool:
        """Whether a link leads to a copy of what the crawl has: its page is declared in
        another language (``language``: the link's hreflang, else its page's), or it was
        found on a page that was a copy (page log id ``parent``), whose links lead to more of it."""
        return parent in self.copy_pages or self.other_language(language)

    def page_id_of(self, response: Response) -> int:
        analysis = self._analyses.get(response)
        return analysis.page_id if analysis is not None else -1

    def _record_page(self, request: Request | None, url: str, relevance: float) -> int:
        domain = domain_of(url)
        domain_id = self.domains.id_of(domain)
        self.domains.record_relevance(domain, relevance)
        group = self.pages.group_of(*_link_origin(request))
        page_id = self.pages.add(domain_id, relevance, group)
        self.pages.sections.record(url, relevance)
        self.n_fetched += 1
        self.inc_stat("pages")
        if relevance >= self.config.relevant_threshold:
            self.n_relevant += 1
            self.inc_stat("relevant_pages")
        self._learn(request, relevance, page_id)
        return page_id

    def reward_nothing(self, request: Request | None) -> None:
        """A fetch that gave no page (an error status, an exception, a non-HTML body)."""
        self._learn(request, 0.0, -1)

    def _learn(self, request: Request | None, reward: float, page_id: int) -> None:
        decision = request.meta.get(DECISION_KEY) if request is not None else None
        if not isinstance(decision, dict) or "features" not in decision:
            return  # not released by a frontier (another scheduler, a request built by hand)
        if decision.get("rewarded"):
            return
        if self.frontier is None:
            if not self._warned_no_frontier:
                self._warned_no_frontier = True
                logger.warning(
                    "A request released by a frontier came back, but no frontier is attached to the crawl "
                    "state (CrawlState.attach_frontier): its reward is not learned from"
                )
            return
        decision["rewarded"] = True
        self.frontier.observe(
            decision["features"],
            reward,
            page_id,
            decision.get("leaf", -1),
            decision.get("prior", 0.0),
            link=decision.get("link"),
        )

    # -- links -------------------------------------------------------------------------
    def links_of(self, response: TextResponse) -> PageLinks:
        """The links of an HTML response with their anchor text and context, parsed once
        however many components ask (the spider that follows them, the RelevanceMiddleware
        that gives any spider's requests their evidence)."""
        links = self._links.get(response)
        if links is None:
            links = self._links[response] = PageLinks.of(response)
        return links

    def link_similarity(self, term_ids: tuple[int, ...], anchor: str, url: str) -> float:
        """Similarity of a link's preview (anchor and URL words) to the query: the scorer's
        share of the query terms ``term_ids``, mixed with the expansion's share of the preview."""
        similarity = self.scorer.score_term_ids(term_ids)
        if not len(self.expansion):
            return similarity
        expansion = self.expansion.share_of_link(anchor, url)
        return mix(similarity, expansion, self.config.expansion_weight, self.config.expansion_mix)

    def context_similarity(self, context: str) -> float:
        """The link similarity of a link's context text (no URL), the query terms of the
        text remembered: a page's links share a few contexts."""
        similarity = self.scorer.score_term_ids(self._context_terms(context))
        if not len(self.expansion):
            return similarity
        return mix(
            similarity, self._context_expansion(context), self.config.expansion_weight, self.config.expansion_mix
        )

    def _terms_of_context(self, context: str) -> tuple[int, ...]:
        return self.terms.present_ids(link_preview_text(context, ""))

    def _expansion_of_context(self, context: str) -> float:
        return self.expansion.share(link_preview_text(context, ""))

    def _expansion_changed(self) -> None:
        """New expansion terms: contexts are matched anew and, the first few times (each at
        least twice as many pages after the last), the queued links are valued anew."""
        self._context_expansion.cache_clear()
        self.inc_stat("expansion/updates")
        if self.stats is not None:
            self.stats.set_value(f"{STATS_PREFIX}/expansion/terms", " ".join(self.expansion.terms))
        logger.debug("Query expansion after %d pages: %s", self.n_fetched, " ".join(self.expansion.terms))
        frontier = self.frontier
        if frontier is None or self.n_revalued >= self.config.expansion_revalue:
            return
        if self.n_revalued and self.n_fetched < 2 * self._revalued_at:
            return
        self.n_revalued += 1
        self._revalued_at = max(self.n_fetched, 1)
        n = frontier.revalue(lambda url, meta, parent: revalued_link(self, url, meta, parent))
        self.inc_stat("expansion/revalued_links", n)

    def parent_score(self, page_id: int) -> float:
        return self.pages.parent_score(page_id)

    # -- persistence ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "scorer": self.scorer.state_dict(),
            "domains": self.domains.state_dict(),
            "pages": self.pages.state_dict(),
            "n_relevant": self.n_relevant,
            "n_fetched": self.n_fetched,
            "language_relevance": dict(self.language_relevance),
            "language": self.language,
            # Not the content digests: 20 bytes a page in every snapshot; after a resume, a
            # copy of a page fetched before it is fetched as a page (the duplicates pipeline
            # keeps its own digests in JOBDIR and still counts it).
            "copy_pages": sorted(self.copy_pages),
            "knowledge": self.knowledge.state_dict(),
            **({"relevance": saved()} if (saved := getattr(self.relevance, "state_dict", None)) else {}),
            "expansion": self.expansion.state_dict(),
            "expansion_revalued": [self.n_revalued, self._revalued_at],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scorer.load_state_dict(state["scorer"])
        self.domains.load_state_dict(state["domains"])
        self.pages.load_state_dict(state["pages"])
        self.n_relevant = state["n_relevant"]
        self.n_fetched = state["n_fetched"]
        if "language_relevance" in state:  # a snapshot from before languages were counted has none
            self.language_relevance = dict(state["language_relevance"])
            if self.config.language == "auto":
                self.language = state.get("language", "")
            self.copy_pages = set(state.get("copy_pages", ()))
        if "knowledge" in state:
            self.knowledge.load_state_dict(state["knowledge"])
        load = getattr(self.relevance, "load_state_dict", None)
        if "relevance" in state and load is not None:
            load(state["relevance"])
        if "expansion" in state:  # snapshots from before the expansion have none
            self.expansion.load_state_dict(state["expansion"])
            self.n_revalued, self._revalued_at = state["expansion_revalued"]
            self._context_expansion.cache_clear()
