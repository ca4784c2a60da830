"""Every ``ADAPTIVE_*`` setting with its default value.

This module is the one place where defaults live, as Scrapy's own
``scrapy.settings.default_settings`` is for Scrapy's settings. The add-on
(:class:`adaptive_spider.addon.AdaptiveAddon`) registers them with
``addon`` priority, so a project's ``settings.py``, ``-s`` on the command line
and spider arguments all override them. :mod:`adaptive_spider.settings.config` reads and
validates them once per crawl.
"""

# --- the query ---------------------------------------------------------------
#: Text of what the crawl is about. The ``focused`` spider sets it from ``-a query=``.
ADAPTIVE_QUERY = ""
#: Extra terms (a list, or a comma-separated string); each weighs more than a query word.
ADAPTIVE_KEYWORDS = []

# --- frontier strategy -------------------------------------------------------
#: One of: tres, linkgroups, bestfirst, bfs, dfs, random.
ADAPTIVE_STRATEGY = "tres"
#: Seed of every random choice (sampling, exploration, network initialisation).
ADAPTIVE_SEED = 0
#: Requests chosen per selection round and put into the ready queue.
ADAPTIVE_PAGES_PER_ROUND = 8
#: Cold start: during the first this many releases, a link with no sign of relevance
#: (link prior below ADAPTIVE_HOLD_BELOW) waits while ADAPTIVE_HOLD_IN_FLIGHT requests are
#: in flight, since their pages may reveal better links (0: no cold start).
ADAPTIVE_COLD_START_PAGES = 32
#: Link prior below which a link counts as having no sign of relevance (0: never hold).
ADAPTIVE_HOLD_BELOW = 0.05
#: Requests in flight from which blind links wait during the cold start.
ADAPTIVE_HOLD_IN_FLIGHT = 2

# --- TRES: regression tree over the features ------------------------------------
#: Upper bound of leaves of the tree that partitions the frontier.
ADAPTIVE_TREE_MAX_LEAVES = 16
#: Fewest experience samples in a leaf.
ADAPTIVE_TREE_MIN_SAMPLES_LEAF = 8
#: Experience needed before the first fit (before it, the frontier is one leaf).
ADAPTIVE_TREE_MIN_EXPERIENCE = 32
#: Refit when the experience has grown by this fraction since the last fit.
ADAPTIVE_TREE_REFIT_GROWTH = 0.25
#: How a leaf offers its candidate: "best" (highest link prior) or "uniform" (TRES' sampling).
ADAPTIVE_TREE_LEAF_SAMPLING = "best"

# --- TRES: Q-network (double DQN) -----------------------------------------------
#: Hidden layer sizes of the Q-network (TRES and forager: 11 -> 30 -> 15 -> 1).
ADAPTIVE_QNET_HIDDEN = [30, 15]
#: Adam step size of the Q-network.
ADAPTIVE_QNET_LEARNING_RATE = 0.003
#: Discount of the value of the links a page leads to.
ADAPTIVE_QNET_GAMMA = 0.1
#: Transitions per gradient step.
ADAPTIVE_QNET_BATCH_SIZE = 32
#: Transitions kept in the replay memory (the oldest are overwritten).
ADAPTIVE_QNET_REPLAY_SIZE = 20000
#: Gradient steps between copies of the online network into the target network.
ADAPTIVE_QNET_TARGET_UPDATE = 50
#: Gradient steps per fetched page.
ADAPTIVE_QNET_UPDATES_PER_PAGE = 2
#: Outlinks of a page kept as its next-state actions.
ADAPTIVE_QNET_NEXT_ACTIONS = 16
#: Pages released at random (among leaf candidates) before the network decides.
ADAPTIVE_WARMUP_PAGES = 8
#: Exploration: the share of picks made at random among the candidates, at the start ...
ADAPTIVE_EPSILON_START = 0.1
#: The exploration rate epsilon decays toward this ...
ADAPTIVE_EPSILON_END = 0.01
#: ... halving its distance to it every this many pages.
ADAPTIVE_EPSILON_HALF_LIFE = 50

# --- linkgroups: tabular Q-learning over link groups ------------------------------
#: Most link groups; later groups merge into one overflow group per side (same/cross domain).
ADAPTIVE_LINKGROUPS_MAX_GROUPS = 64
#: Step size alpha of the groups' tabular Q-learning.
ADAPTIVE_LINKGROUPS_LEARNING_RATE = 0.2

# --- domain profiles and filters ----------------------------------------------
#: Domains whose median latency exceeds this (ms) are released after the others.
ADAPTIVE_SLOW_DOMAIN_MS = 3000
#: Domains whose failure rate exceeds this are skipped ...
ADAPTIVE_UNRELIABLE_THRESHOLD = 0.5
#: ... once they had at least this many attempts.
ADAPTIVE_UNRELIABLE_MIN_ATTEMPTS = 5
#: Most pages fetched per domain (0: no cap).
ADAPTIVE_DOMAIN_MAX_PAGES = 0
#: A mapping of domain -> weight (a feature of every URL of that domain; default 1).
ADAPTIVE_DOMAIN_WEIGHTS = {}

#: Weights of the learning-free link prior (bestfirst's order; TRES' baseline):
#: anchor/URL similarity, context (headings, list label) similarity, parent page relevance.
ADAPTIVE_PRIOR_WEIGHTS = {"anchor": 0.6, "context": 0.3, "parent": 0.1}

# --- relevance ------------------------------------------------------------------
#: Weights of the page fields' query coverages in the page score.
ADAPTIVE_RELEVANCE_FIELD_WEIGHTS = {"title": 2.0, "headings": 1.0, "body": 1.0, "url": 1.0}
#: BM25 term-frequency saturation of the page score.
ADAPTIVE_RELEVANCE_K1 = 1.2
#: BM25 length normalisation of the page score (0: none, 1: full).
ADAPTIVE_RELEVANCE_B = 0.75
#: Link-heavy pages score (1 - link density) ** this (0: no discount).
ADAPTIVE_RELEVANCE_LINK_DISCOUNT = 0.5
#: Mixed field coverage that maps to a relevance of about 0.5.
ADAPTIVE_RELEVANCE_HALF = 0.1
#: Weight of a keyword term relative to a query word.
ADAPTIVE_KEYWORD_WEIGHT = 2.0
#: A page with at least this relevance counts as relevant (stats, harvest rate).
ADAPTIVE_RELEVANT_THRESHOLD = 0.5

# --- explanations -----------------------------------------------------------------
#: Log every released request with its leaf, Q-value and features at DEBUG.
ADAPTIVE_LOG_DECISIONS = True

# --- distributed crawl: several workers, one frontier in Redis ---------------------
# (adaptive_spider.distributed; Redis connection through scrapy-redis' REDIS_URL,
# REDIS_HOST, REDIS_PORT, REDIS_PARAMS; SCHEDULER_PERSIST keeps the crawl's keys.)
#: Prefix of the crawl's Redis keys, the same on every worker of one crawl.
ADAPTIVE_DISTRIBUTED_KEY = "adaptive:%(spider)s"
#: Requests a worker takes from the shared frontier at a time; its strategy orders them.
ADAPTIVE_DISTRIBUTED_BATCH = 8
#: Seconds between synchronisations of domain profiles, term statistics and the model.
ADAPTIVE_DISTRIBUTED_SYNC_INTERVAL = 1.0
#: Seconds between a waiting worker's looks for work and for the crawl's stop.
ADAPTIVE_DISTRIBUTED_POLL_INTERVAL = 0.2
#: Pages fetched by all workers together after which the crawl stops (0: no crawl-wide budget).
ADAPTIVE_DISTRIBUTED_MAX_PAGES = 0
#: A worker silent for this many seconds counts as gone: the others stop waiting for it.
ADAPTIVE_DISTRIBUTED_WORKER_TIMEOUT = 30

# --- robustness: URL canonicalisation, trap guards, duplicates, resume, report ------------
#: Rewrite every request the spider yields to its canonical URL (no fragment, no
#: session-id or tracking parameters) before it reaches the scheduler.
ADAPTIVE_CANONICALIZE = True
#: Query and path (``;name=value``) parameters that carry a session id; ``*`` matches any
#: characters. Case-insensitive.
ADAPTIVE_SESSION_PARAMS = [
    "jsessionid", "phpsessid", "aspsessionid*", "sid", "sessionid", "session_id", "sess",
    "cfid", "cftoken", "zenid", "oscsid",
]
#: Query parameters that only track where a visitor came from.
ADAPTIVE_TRACKING_PARAMS = [
    "utm_*", "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "igshid",
    "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "ref_src", "trk",
]
#: Drop links whose path has more segments than this (0: no limit).
ADAPTIVE_TRAP_MAX_PATH_DEPTH = 12
#: Drop links whose path repeats a segment (or a run of them) back to back more often than this
#: (0: no limit).
ADAPTIVE_TRAP_MAX_SEGMENT_REPEATS = 2
#: Most distinct URLs of one calendar-like family (dates at the end of the path or in
#: the query; 0: no limit).
ADAPTIVE_TRAP_CALENDAR_MAX_PAGES = 20
#: Most distinct URLs that differ only in their query values under one path (0: no limit).
ADAPTIVE_TRAP_QUERY_MAX_VARIANTS = 100
#: A mapping of URL regex -> most distinct URLs matching it (0: none at all).
ADAPTIVE_URL_PATTERN_LIMITS = {}
#: Drop items whose content SHA-1 was seen before (they are always counted).
ADAPTIVE_DROP_DUPLICATES = False
#: With JOBDIR: journal queue events as the crawl goes, so a killed crawl resumes.
ADAPTIVE_JOURNAL = True
#: With JOBDIR: seconds between snapshots that compact the journal (0: only at close).
ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS = 60
#: Honour robots.txt Crawl-delay up to this many seconds per site (0: ignore it).
ADAPTIVE_ROBOTSTXT_CRAWL_DELAY_MAX = 30
#: Log a crawl report when the spider closes.
ADAPTIVE_REPORT = True
#: Also write the report as JSON to this file ("": no file).
ADAPTIVE_REPORT_FILE = ""
# --- sufficiency: when the crawl knows enough (adaptive_spider.sufficiency.estimator, .linkvalue, .pipelines) ---
#: How the knowledge base is judged: "statistical" (query-term evidence; no model).
ADAPTIVE_SUFFICIENCY_STRATEGY = "statistical"
#: D: pages' worth of evidence at which a query term counts as covered.
ADAPTIVE_SUFFICIENCY_EVIDENCE = 2.0
#: Bootstrap subsets of the consistency estimate.
ADAPTIVE_SUFFICIENCY_SUBSETS = 32
#: Pages over which saturation smooths the new information per page.
ADAPTIVE_SUFFICIENCY_WINDOW = 10
#: rho: relevance of a page about the whole query (DomainCoverage reaches 1 there).
ADAPTIVE_SUFFICIENCY_ANSWER_RELEVANCE = 0.8
#: How IS combines coverage, consistency and 1 - redundancy: min, mean or geometric.
ADAPTIVE_SUFFICIENCY_COMBINE = "min"
#: Weights of the IS parts (coverage, consistency, redundancy, domain_coverage; 0 leaves one out).
ADAPTIVE_SUFFICIENCY_WEIGHTS = {}
#: Seconds between progress lines (0: LOGSTATS_INTERVAL).
ADAPTIVE_SUFFICIENCY_LOG_INTERVAL = 0
#: Write a JSON report at close: "" (no), "auto" (next to the feed file), or a path.
ADAPTIVE_SUFFICIENCY_REPORT = ""
#: lambda: weight of the linking page's relevance in a link's relevance.
ADAPTIVE_LINKVALUE_PARENT_WEIGHT = 0.3
#: delta: authority lost per URL path segment beyond the first.
ADAPTIVE_LINKVALUE_DEPTH_DECAY = 0.1
#: Authority factor of a URL with a query string.
ADAPTIVE_LINKVALUE_QUERY_PENALTY = 0.5
#: Authority factor of a link to a domain no page has come from yet.
ADAPTIVE_LINKVALUE_NEW_DOMAIN = 0.5
#: Stop the crawl when it knows enough (False: only Scrapy's CLOSESPIDER_* budgets stop it).
ADAPTIVE_SELF_STOP = True
#: The stop criteria in use: sufficient, plateau, no_promising_links.
ADAPTIVE_STOP_CRITERIA = ["sufficient", "plateau", "no_promising_links"]
#: theta: "sufficient" once IS >= theta.
ADAPTIVE_STOP_THRESHOLD = 0.75
#: "plateau" once IS gained less than EPSILON over the last WINDOW pages.
ADAPTIVE_STOP_PLATEAU_WINDOW = 20
#: Smallest IS gain over the plateau window that is not a plateau.
ADAPTIVE_STOP_PLATEAU_EPSILON = 0.01
#: "no_promising_links" once the best expected gain of a queued or in-flight link stays below
#: MIN_GAIN for PATIENCE pages in a row.
ADAPTIVE_STOP_MIN_GAIN = 0.05
#: Pages in a row the best expected gain must stay below ADAPTIVE_STOP_MIN_GAIN.
ADAPTIVE_STOP_PATIENCE = 3
#: No self-stop before this many pages.
ADAPTIVE_STOP_MIN_PAGES = 10
