"""TRES: tree-based reward estimation for sampling, with a double-DQN scorer.

A regression tree (:class:`~adaptive_spider.frontier.learn.tree.LeafPartition`) splits
the frontier into leaves of links with alike rewards. Every round each leaf
offers candidates (its best links by bestfirst's key, or uniform samples as in
the TRES paper), a Q-network scores all candidates in one batched pass with their
current features, and the best go to the ready queue; the rest return to their
leaves. What is learned (the link classifier's lift, the network's residual) is
added to bestfirst's key (:func:`~adaptive_spider.frontier.strategies.base.focus_key`):
the learner corrects the best learning-free order, so where it has learned nothing
it ranks as bestfirst does. An optional random warm-up (``ADAPTIVE_WARMUP_PAGES``, none by
default) precedes the network, and decaying epsilon-greedy exploration, less what the
frontier's new-domain share already explores, follows it. Rewards train the network (double DQN
with replay and a target network) and, as experience grows, the tree is refitted
and the frontier re-partitioned. A reward is 1 for a relevant page (a hit: relevance at least
``ADAPTIVE_RELEVANT_THRESHOLD``) and 0 for any other (``ADAPTIVE_TRES_REWARD``), as in the TRES
paper: what the crawl is judged by is how soon it has the relevant pages.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from typing import Any

import numpy as np

from adaptive_spider.frontier.features import N_FEATURES
from adaptive_spider.frontier.leafpools import (
    ENTRY_MASK,
    VECTOR_MIN,
    BestLeafPool,
    LeafPool,
    UniformLeafPool,
    by_leaf,
    empty_entries,
    pool_keys,
)
from adaptive_spider.frontier.learn.linkclassifier import LinkClassifier
from adaptive_spider.frontier.learn.prequential import PrequentialSelector
from adaptive_spider.frontier.learn.qnet import DoubleDQN
from adaptive_spider.frontier.learn.tree import LeafPartition
from adaptive_spider.frontier.strategies.base import (
    Choice,
    LearningStrategy,
    QueuedEntries,
    blind_rank,
    focus_key,
)


class FocusedRanked:
    """The frontier's entries as TRES ranks them before its learned corrections: bestfirst's
    key (:func:`~adaptive_spider.frontier.strategies.base.focus_key`: the link prior, lowered
    while its sibling group misses, times its site section's lift; during the cold start a
    blind link by :func:`~adaptive_spider.frontier.strategies.base.blind_rank`), plus the link
    classifier's learned lift times ``weight``. Arrival order breaks ties."""

    def __init__(self, frontier: QueuedEntries, links: LinkClassifier, weight: float, config: Any) -> None:
        self.frontier = frontier
        self.links = links
        self.weight = weight
        self.patience = float(getattr(config, "sibling_patience", 0))
        self.lifts = float(getattr(config, "section_lift", 1.0)) > 1.0
        #: ``ADAPTIVE_HOLD_BELOW`` during the cold start (see Strategy.rank_blind_links), else None.
        self.blind_below: float | None = None

    def rank(self, entries: np.ndarray, lift: np.ndarray | float = 0.0) -> np.ndarray:
        """bestfirst's key of each entry (float64) plus a learned ``lift``. During the cold start
        a link whose prior and lift are both low is blind and ranks by its depth
        (:func:`~adaptive_spider.frontier.strategies.base.blind_rank`): the lift is a sign of
        relevance too (links like those that led to relevant pages)."""
        frontier = self.frontier
        priors = frontier.priors(entries).astype(np.float64)
        misses = frontier.sibling_misses_of(entries) if self.patience else 0.0
        lifts = frontier.section_lifts(entries) if self.lifts else 1.0
        keys = focus_key(priors, misses, lifts, self.patience) + lift
        below = self.blind_below
        if below is not None:
            signs = priors + lift
            keys = np.where(signs < below, blind_rank(signs, frontier.depths(entries), below), keys)
        return np.asarray(keys, dtype=np.float64)

    def learned_lift(self, entries: np.ndarray, tokens: np.ndarray | None = None) -> np.ndarray | float:
        """The link classifier's lift times its weight (0 while it is off or has learned nothing)."""
        if not self.weight or not self.links.n_updates:
            return 0.0
        if tokens is None:
            tokens = self.frontier.link_tokens(entries)
        return self.weight * self.links.lift(tokens)

    def priors(self, entries: np.ndarray) -> np.ndarray:
        """What a leaf's pool orders its entries by: :meth:`rank` with the classifier's lift."""
        return self.rank(entries, self.learned_lift(entries)).astype(np.float32)

    def arrival_orders(self, entries: np.ndarray) -> np.ndarray:
        return self.frontier.arrival_orders(entries)


#: TRES' rankings of a link, simplest first: each adds a learned correction to the one before.
SCORERS = ("prior", "link_classifier", "qnet")
#: Fewest pages between two rankings of the whole frontier for sections whose lift rose...
_RAISED_EVERY = 16
#: ... and one page more per this many queued entries (the cost per page stays flat).
_RAISED_PER_ENTRIES = 1000
#: Pages before a learned ranking can be trusted over the link prior.
_CHECK_MIN_PAGES = 32


class Tres(LearningStrategy):
    """Tree-partitioned frontier with a double-DQN scorer.

    With ``ADAPTIVE_LINK_CLASSIFIER`` above 0, an online link classifier
    (:class:`~adaptive_spider.frontier.learn.linkclassifier.LinkClassifier`) learns from
    each reward which URL, host and anchor tokens lead to relevant pages; its lift,
    times that weight, is added to the link prior wherever TRES ranks links: in the
    leaves' order (refreshed every ``ADAPTIVE_LINK_CLASSIFIER_REFRESH`` pages) and in
    the baseline the Q-network corrects.
    """

    name = "tres"
    reads_section_lifts = True

    def __init__(self, frontier: QueuedEntries, config: Any, rng: np.random.Generator):
        super().__init__(frontier, config, rng)
        self.link_weight = float(getattr(config, "link_classifier", 0.0))
        self.reads_link_tokens = self.link_weight > 0
        self.links = LinkClassifier(learning_rate=getattr(config, "link_classifier_learning_rate", 0.3))
        # A page at least this relevant is a hit, and the learner's reward is 1 (0 below it):
        # rewarded with the score itself, it learned that a large site's middling pages (Asio's
        # reference on an HTTP topic, 1,000 of 5,000 fetches) beat the crawl's mean, and stalled.
        self.hit_at = (
            float(getattr(config, "relevant_threshold", 0.5))
            if getattr(config, "tres_reward", "hit") == "hit"
            else None
        )
        self.ranked = FocusedRanked(frontier, self.links, self.link_weight if self.reads_link_tokens else 0.0, config)
        self.n_rekeyed_at = 0
        self.partition = LeafPartition(config.tree_max_leaves, config.tree_min_samples_leaf)
        self.agent = DoubleDQN(
            n_features=N_FEATURES,
            hidden=config.qnet_hidden,
            learning_rate=config.qnet_learning_rate,
            gamma=config.qnet_gamma,
            batch_size=config.qnet_batch_size,
            replay_size=config.qnet_replay_size,
            target_update=config.qnet_target_update,
            random_state=config.seed,
        )
        # Which ranking to trust: each learned correction must first predict rewards better.
        check_pages = int(getattr(config, "scorer_check_pages", 0))
        self.scorers = SCORERS if self.reads_link_tokens else (SCORERS[0], SCORERS[2])
        self.referee = (
            PrequentialSelector(self.scorers, window=check_pages, min_pages=_CHECK_MIN_PAGES) if check_pages else None
        )
        self.pool_class = BestLeafPool if config.tree_leaf_sampling == "best" else UniformLeafPool
        # Entries not yet in a leaf's pool, by tier: new, put back by the frontier, or re-partitioned.
        self.pending: dict[int, array] = defaultdict(empty_entries)
        self.pools: dict[int, list[LeafPool]] = {}
        self.n_refits = 0
        self.sections_rose = False
        self.sections_ranked_at: int | None = None  # the first rise ranks at once

    # -- pools --------------------------------------------------------------------
    def push(self, tier: int, entry: int) -> None:
        self.pending[tier].append(entry)

    def count(self, tier: int) -> int:
        return len(self.pending[tier]) + sum(len(pool) for pool in self.pools.get(tier, ()))

    def _flush(self, tier: int) -> list[LeafPool]:
        pools = self.pools.get(tier)
        if pools is None:
            pools = self.pools[tier] = [self.pool_class(self.ranked) for _ in range(self.partition.n_leaves)]
        pending = self.pending.pop(tier, None)
        if pending:
            entries = np.frombuffer(pending, dtype=np.int64)
            leaves = self.partition.apply(self.frontier.features(entries))
            if len(entries) < VECTOR_MIN:  # a round's new links: numpy's per-call cost would dominate
                for entry, leaf in zip(entries.tolist(), leaves.tolist()):
                    pools[leaf].put(entry)
            else:  # a re-partitioned frontier: whole leaves at once
                for leaf, group in by_leaf(entries, leaves):
                    pools[leaf].put_many(group)
        return pools

    def _repartition(self) -> None:
        """Re-assign every queued entry to the leaves of a newly fitted tree."""
        for tier in list(self.pools) + list(self.pending):
            parts = [pool.entry_array() for pool in self.pools.pop(tier, ())]
            pending = self.pending.pop(tier, None)
            if pending:
                parts.append(np.frombuffer(pending, dtype=np.int64))
            if parts and sum(map(len, parts)):
                self.pending[tier] = array("q", np.concatenate(parts).tobytes())

    def reorder(self) -> None:
        # The leaves' pools key entries by their link prior, and the tree splits on anchor_similarity.
        self._repartition()

    def rank_blind_links(self, below: float | None) -> None:
        if below != self.ranked.blind_below:
            self.ranked.blind_below = below
            self._repartition()

    def _rank_raised_sections(self) -> None:
        """Rank the queued entries anew once sections' lifts rose. A pool cannot raise one key in
        place and ranking them all costs a pass over the frontier: at most every
        ``_RAISED_EVERY`` pages, or one page per ``_RAISED_PER_ENTRIES`` queued entries."""
        if self.ranked.lifts and self.frontier.take_raised_sections():
            self.sections_rose = True
        if not self.sections_rose:
            return
        queued = sum(self.count(tier) for tier in set(self.pools) | set(self.pending))
        since = self.sections_ranked_at
        if since is None or self.n_observed - since >= max(_RAISED_EVERY, queued // _RAISED_PER_ENTRIES):
            self.sections_rose = False
            self.sections_ranked_at = self.n_observed
            self._rekey()

    def _rekey(self) -> None:
        """Rank every leaf's entries anew (the tree is unchanged: they stay in their leaves)."""
        self.n_rekeyed_at = self.n_observed
        for pools in self.pools.values():
            for pool in pools:
                pool.rekey()

    # -- selection ------------------------------------------------------------------
    @property
    def warming_up(self) -> bool:
        return self.n_observed < self.config.warmup_pages

    def _offer(self, pools: list[LeafPool], k: int) -> tuple[list[int], list[int]]:
        """Each leaf's ``k`` best entries, and the leaf of each.

        Keys fall while an entry waits (its siblings miss), and a pool cannot lower a key in
        place: the entries offered are ranked anew (all leaves in one pass), and those that fell
        go back at their new keys until every leaf's best ``k`` are current (bestfirst's lazy
        lowering)."""
        while True:
            candidates, leaves = [], []
            for leaf, pool in enumerate(pools):
                taken = pool.take(k, self.rng)
                candidates.extend(taken)
                leaves.extend([leaf] * len(taken))
            if not candidates or self.pool_class is not BestLeafPool:
                return candidates, leaves
            held = [key for pool in pools for key in pool.taken_keys()]
            current = pool_keys(self.ranked, np.array(candidates, dtype=np.int64))
            fallen: dict[int, dict[int, int]] = {}
            for leaf, old, new in zip(leaves, held, current):
                if new > old:
                    fallen.setdefault(leaf, {})[new & ENTRY_MASK] = new
            if not fallen:
                return candidates, leaves
            for leaf, keys in fallen.items():
                pools[leaf].lower(keys)

    def select(self, tier: int, n: int) -> list[Choice]:
        self._rank_raised_sections()
        pools = self._flush(tier)
        candidates, leaves = self._offer(pools, min(n, self.config.tree_picks_per_leaf or n))
        if not candidates:
            return []
        ids = np.array(candidates, dtype=np.int64)
        priors = self.frontier.priors(ids)
        tokens = self.frontier.link_tokens(ids) if self.reads_link_tokens else None
        features = None
        if self.warming_up:
            scores = self.rng.random(len(candidates))
        else:
            features = self.frontier.features(ids)
            scores = self._scores(features, ids, tokens)
        picked = self._pick(scores, n)
        picked_set = set(picked)
        unpicked: list[list[int]] = [[] for _ in pools]
        for index, entry in enumerate(candidates):
            if index not in picked_set:
                unpicked[leaves[index]].append(entry)
        for pool, entries in zip(pools, unpicked):
            pool.put_back(entries)
        # The features go with the choice: the frontier releases it with them (not computed again).
        return [
            Choice(
                candidates[i],
                score=float(scores[i]),
                leaf=leaves[i],
                prior=float(priors[i]),
                features=None if features is None else features[i],
                tokens=None if tokens is None else tokens[i],
            )
            for i in picked
        ]

    @property
    def scorer(self) -> str:
        """The ranking trusted now (see ``ADAPTIVE_SCORER_CHECK_PAGES``)."""
        return self.scorers[-1] if self.referee is None else self.referee.trusted_name

    def _scores(self, features: np.ndarray, ids: np.ndarray, tokens: np.ndarray | None) -> np.ndarray:
        """The candidates' ranking: bestfirst's key, plus the corrections the referee trusts
        (the network was trained on the link prior plus the classifier's lift: what it learned is
        what that baseline missed, added here to the better one)."""
        scorer = self.scorer
        ranked = self.ranked
        if scorer == "prior":
            return ranked.rank(ids)
        lift = ranked.learned_lift(ids, tokens)
        scores = ranked.rank(ids, lift)
        if scorer == "qnet":
            base = self.frontier.priors(ids).astype(np.float64) + lift
            scores = scores + (self.agent.predict(features, base) - base)
        return scores

    def _pick(self, scores: np.ndarray, n: int) -> list[int]:
        """Best ``n`` candidate indexes, each replaced by a random one with probability epsilon."""
        ranked = np.argsort(-scores, kind="stable").tolist()
        picked: list[int] = []
        taken: set[int] = set()
        epsilon = 0.0 if self.warming_up else self.epsilon
        rng = self.rng
        best = 0  # position in ranked of the best candidate not taken yet
        for _ in range(min(n, len(ranked))):
            if epsilon and rng.random() < epsilon:
                free = [index for index in range(len(ranked)) if index not in taken]
                index = free[int(rng.integers(len(free)))]
            else:
                while ranked[best] in taken:
                    best += 1
                index = ranked[best]
            taken.add(index)
            picked.append(index)
        return picked

    # -- learning -------------------------------------------------------------------
    def observe(
        self,
        x: np.ndarray,
        reward: float,
        page_key: int,
        leaf: int = -1,
        prior: float = 0.0,
        link: np.ndarray | None = None,
    ) -> None:
        if self.hit_at is not None:
            reward = 1.0 if reward >= self.hit_at else 0.0
        base = prior
        row = None
        if link is not None and self.reads_link_tokens:
            row = link.reshape(1, -1)
            base = prior + self.link_weight * float(self.links.lift(row)[0])  # what the network corrects
        if self.referee is not None:
            # Predicted by each scorer before any of them learns from this page (prequential).
            learned = float(self.agent.predict(x.reshape(1, -1), base)[0])
            predictions = {"prior": prior, "link_classifier": base, "qnet": learned}
            self.referee.record([predictions[name] for name in self.scorers], reward)
        if row is not None:
            self.links.update(row[0], reward)
        self.agent.remember(x, base, reward, page_key)
        self.n_observed += 1
        self.agent.train_steps(self.config.qnet_updates_per_page, self.frontier.next_actions)
        if self._refit_due():
            self._refit()
        elif self.reads_link_tokens and self.n_observed - self.n_rekeyed_at >= self.config.link_classifier_refresh:
            self._rekey()  # the leaves' order with the classifier's latest lift

    def _refit_due(self) -> bool:
        size = len(self.agent.memory)
        if size < self.config.tree_min_experience:
            return False
        fitted = self.partition.n_fit_samples_
        return fitted == 0 or size >= fitted * (1.0 + self.config.tree_refit_growth)

    def _refit(self) -> None:
        X, y = self.agent.memory.latest()
        self.partition.fit(X, y)
        self.n_refits += 1
        self.n_rekeyed_at = self.n_observed
        self._repartition()

    def stats(self) -> dict:
        return {
            "leaves": self.partition.n_leaves,
            "tree_refits": self.n_refits,
            "model_updates": self.agent.n_steps,
            "epsilon": round(self.epsilon, 4),
            "scorer": self.scorer,
            **({"link_base_rate": round(self.links.base_rate, 4)} if self.reads_link_tokens else {}),
        }

    def state_dict(self) -> dict:
        return {
            "partition": self.partition,
            "agent": self.agent.state_dict(),
            "n_observed": self.n_observed,
            "n_refits": self.n_refits,
            "links": self.links.state_dict(),
            "n_rekeyed_at": self.n_rekeyed_at,
            **({"referee": self.referee.state_dict()} if self.referee is not None else {}),
        }

    def load_state_dict(self, state: dict) -> None:
        self.partition = state["partition"]
        self.agent.load_state_dict(state["agent"])
        self.n_observed = state["n_observed"]
        self.n_refits = state["n_refits"]
        if "links" in state:  # saved before the link classifier: it starts afresh
            self.links.load_state_dict(state["links"])
            self.n_rekeyed_at = state["n_rekeyed_at"]
        if self.referee is not None and "referee" in state:
            self.referee.load_state_dict(state["referee"])
        self.pools = {}
