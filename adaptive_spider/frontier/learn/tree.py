"""TRES' partition of the frontier: a regression tree over link features.

The tree is fitted on experience (the features a released link had, and the
relevance of the page it led to), so its leaves group links whose rewards were
alike. The frontier keeps one pool of links per leaf and offers candidates from
every leaf, which keeps selection cheap on a large frontier and keeps every
region of the feature space in view.

The tree is grown here, with numpy, rather than by scikit-learn: a tree of a few
dozen leaves over a few thousand samples grows in milliseconds, while importing
scikit-learn took over a second of every crawl that learns.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from adaptive_spider.frontier.features import FEATURE_NAMES


class RegressionTree:
    """A least-squares regression tree grown best first (the split that lowers the
    squared error most is made first) up to ``max_leaves`` leaves: CART with a leaf
    budget, as scikit-learn's ``max_leaf_nodes`` grows it.

    Nodes are arrays indexed by node id (``children_left`` is -1 at a leaf);
    a threshold is the midpoint between adjacent sample values and ``x <= threshold``
    goes left; of equally good splits the first feature's wins.
    """

    def __init__(self, max_leaves: int = 16, min_samples_leaf: int = 8) -> None:
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> RegressionTree:
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y, dtype=np.float64)
        nodes: list[list] = []  # per node: [feature, threshold, left, right, value]

        def new_node(rows: np.ndarray) -> int:
            nodes.append([-1, 0.0, -1, -1, float(y[rows].mean()) if len(rows) else 0.0])
            return len(nodes) - 1

        candidates: list = []

        def consider(node: int, rows: np.ndarray) -> None:
            split = best_split(X[rows], y[rows], self.min_samples_leaf)
            if split is not None:
                gain, feature, threshold, goes_left = split
                # The largest gain first; of equal gains, the older node.
                heapq.heappush(candidates, (-gain, node, feature, threshold, rows[goes_left], rows[~goes_left]))

        everything = np.arange(len(y))
        consider(new_node(everything), everything)
        leaves = 1
        while candidates and leaves < self.max_leaves:
            _, node, feature, threshold, left_rows, right_rows = heapq.heappop(candidates)
            left, right = new_node(left_rows), new_node(right_rows)
            nodes[node][:4] = [feature, threshold, left, right]
            leaves += 1
            consider(left, left_rows)
            consider(right, right_rows)
        self.feature = np.array([n[0] for n in nodes], dtype=np.int64)
        self.threshold = np.array([n[1] for n in nodes], dtype=np.float64)
        self.children_left = np.array([n[2] for n in nodes], dtype=np.int64)
        self.children_right = np.array([n[3] for n in nodes], dtype=np.int64)
        self.value = np.array([n[4] for n in nodes], dtype=np.float64)
        return self

    def apply(self, X: npt.ArrayLike) -> np.ndarray:
        """The leaf node id of each row."""
        X = np.asarray(X, dtype=np.float32)
        node = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        while len(rows):
            at = node[rows]
            inner = self.children_left[at] != -1
            rows, at = rows[inner], at[inner]
            left = X[rows, self.feature[at]] <= self.threshold[at]
            node[rows] = np.where(left, self.children_left[at], self.children_right[at])
        return node

    @property
    def n_leaves(self) -> int:
        return int((self.children_left == -1).sum())


def best_split(X: np.ndarray, y: np.ndarray, min_samples_leaf: int) -> tuple[float, int, float, np.ndarray] | None:
    """``(gain, feature, threshold, goes_left)`` of the split of these rows that lowers
    their squared error most, with at least ``min_samples_leaf`` rows on each side;
    None when no split lowers it."""
    n = len(y)
    if n < 2 * max(min_samples_leaf, 1):
        return None
    positions = np.arange(max(min_samples_leaf, 1), n - max(min_samples_leaf, 1) + 1)  # rows going left
    left_n = positions.astype(np.float64)
    right_n = n - left_n
    total_sse = float(((y - y.mean()) ** 2).sum())
    best: tuple[float, int, float, np.ndarray] | None = None
    for feature in range(X.shape[1]):
        order = np.argsort(X[:, feature], kind="stable")
        xs, ys = X[order, feature], y[order]
        sums, squares = np.cumsum(ys), np.cumsum(ys * ys)
        left_sum, left_sq = sums[positions - 1], squares[positions - 1]
        right_sum, right_sq = sums[-1] - left_sum, squares[-1] - left_sq
        sse = (left_sq - left_sum**2 / left_n) + (right_sq - right_sum**2 / right_n)
        sse[xs[positions - 1] >= xs[positions]] = np.inf  # no threshold between equal values
        index = int(np.argmin(sse))
        gain = total_sse - float(sse[index])
        if np.isfinite(sse[index]) and gain > 1e-12 and (best is None or gain > best[0]):
            at = positions[index]
            threshold = (float(xs[at - 1]) + float(xs[at])) / 2.0
            best = (gain, feature, threshold, X[:, feature] <= threshold)
    return best


class LeafPartition:
    """Regression tree (features -> reward) whose leaves partition the frontier.
    Fits are deterministic: of equally good splits the first feature's wins.

    Parameters
    ----------
    max_leaves : int
        Upper bound of leaves.
    min_samples_leaf : int
        Fewest experience samples per leaf.
    """

    def __init__(self, max_leaves: int = 16, min_samples_leaf: int = 8) -> None:
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.tree_: RegressionTree | None = None
        self._leaf_of_node = np.zeros(1, dtype=np.int64)
        self.n_fit_samples_ = 0

    @property
    def n_leaves(self) -> int:
        return 1 if self.tree_ is None else self.tree_.n_leaves

    def fit(self, X: np.ndarray, y: np.ndarray) -> LeafPartition:
        tree = RegressionTree(self.max_leaves, self.min_samples_leaf).fit(X, y)
        self._leaf_of_node = np.cumsum(tree.children_left == -1) - 1
        self.tree_ = tree
        self.n_fit_samples_ = len(y)
        return self

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf index (0 .. n_leaves-1) of each row."""
        if self.tree_ is None or len(X) == 0:
            return np.zeros(len(X), dtype=np.int64)
        return self._leaf_of_node[self.tree_.apply(np.asarray(X, dtype=np.float32))]

    def leaf_values(self) -> np.ndarray:
        """Mean experience reward of each leaf."""
        if self.tree_ is None:
            return np.zeros(1)
        return self.tree_.value[self.tree_.children_left == -1]

    def rules(self) -> list[str]:
        """The path of conditions to each leaf, for logs and documentation."""
        if self.tree_ is None:
            return ["(all links)"]
        t = self.tree_
        out: list[str] = []

        def walk(node: int, conditions: list[str]) -> None:
            if t.children_left[node] == -1:
                out.append(" and ".join(conditions) or "(all links)")
                return
            name = FEATURE_NAMES[t.feature[node]]
            walk(t.children_left[node], [*conditions, f"{name} <= {t.threshold[node]:.3f}"])
            walk(t.children_right[node], [*conditions, f"{name} > {t.threshold[node]:.3f}"])

        walk(0, [])
        return out
