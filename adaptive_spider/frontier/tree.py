"""TRES' partition of the frontier: a regression tree over link features.

The tree is fitted on experience (the features a released link had, and the
relevance of the page it led to), so its leaves group links whose rewards were
alike. The frontier keeps one pool of links per leaf and offers candidates from
every leaf, which keeps selection cheap on a large frontier and keeps every
region of the feature space in view.
"""

from __future__ import annotations

import numpy as np

from adaptive_spider.features import FEATURE_NAMES


class LeafPartition:
    """Regression tree (features -> reward) whose leaves partition the frontier.

    Parameters
    ----------
    max_leaves : int
        Upper bound of leaves.
    min_samples_leaf : int
        Fewest experience samples per leaf.
    random_state : int
        Seed for the tree's tie-breaking between equally good splits.
    """

    def __init__(self, max_leaves=16, min_samples_leaf=8, random_state=0):
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.tree_ = None  # a fitted sklearn DecisionTreeRegressor
        self._leaf_of_node = np.zeros(1, dtype=np.int64)
        self.n_fit_samples_ = 0

    @property
    def n_leaves(self) -> int:
        return 1 if self.tree_ is None else int(self.tree_.get_n_leaves())

    def fit(self, X, y) -> LeafPartition:
        # Imported on first fit: scikit-learn takes seconds to import, and a short
        # crawl (or a bfs one) may never fit a tree.
        from sklearn.tree import DecisionTreeRegressor

        tree = DecisionTreeRegressor(
            max_leaf_nodes=self.max_leaves,
            min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state,
        )
        tree.fit(np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.float64))
        is_leaf = tree.tree_.children_left == -1
        self._leaf_of_node = np.cumsum(is_leaf) - 1
        self.tree_ = tree
        self.n_fit_samples_ = len(y)
        return self

    def apply(self, X) -> np.ndarray:
        """Leaf index (0 .. n_leaves-1) of each row."""
        if self.tree_ is None or len(X) == 0:
            return np.zeros(len(X), dtype=np.int64)
        return self._leaf_of_node[self.tree_.apply(np.asarray(X, dtype=np.float32))]

    def leaf_values(self) -> np.ndarray:
        """Mean experience reward of each leaf."""
        if self.tree_ is None:
            return np.zeros(1)
        is_leaf = self.tree_.tree_.children_left == -1
        return self.tree_.tree_.value[is_leaf, 0, 0]

    def rules(self) -> list[str]:
        """The path of conditions to each leaf, for logs and documentation."""
        if self.tree_ is None:
            return ["(all links)"]
        t = self.tree_.tree_
        out: list[str] = []

        def walk(node, conditions):
            if t.children_left[node] == -1:
                out.append(" and ".join(conditions) or "(all links)")
                return
            name = FEATURE_NAMES[t.feature[node]]
            walk(t.children_left[node], [*conditions, f"{name} <= {t.threshold[node]:.3f}"])
            walk(t.children_right[node], [*conditions, f"{name} > {t.threshold[node]:.3f}"])

        walk(0, [])
        return out
