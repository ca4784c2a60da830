"""A small Q-network and the double-DQN learner that trains it from page rewards.

:class:`QNetwork` is a multilayer perceptron (11 -> 30 -> 15 -> 1 by default, as
in TRES and forager) written with numpy: ReLU hidden layers, a linear output,
Huber loss and Adam. It scores a batch of feature vectors in one pass.

:class:`DoubleDQN` keeps a replay memory of transitions
``(x, reward, next actions)`` — the features of a fetched link, the relevance of
the page it led to, and the features of the links found on that page — and
trains the online network toward ``r + gamma * Q_target(a*)`` where ``a*`` is
the next action the *online* network prefers (double DQN), with the target
network copied from the online one every ``target_update`` steps.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

#: The frontier's ``next_actions``: page keys -> (actions b x k x f, bases b x k, mask b x k).
NextActions = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


class QNetwork:
    """Multilayer perceptron regressor with ``fit``-style training steps.

    Parameters
    ----------
    n_features : int
        Size of an input vector.
    hidden : tuple of int
        Sizes of the hidden layers.
    learning_rate : float
        Adam step size.
    huber_delta : float
        Errors beyond this are penalised linearly (robust to outlier targets).
    zero_output : bool
        Initialise the output layer to zero, so the untrained network predicts 0.
    random_state : int
        Seed of the weight initialisation.
    """

    def __init__(
        self,
        n_features: int = 11,
        hidden: Iterable[int] = (30, 15),
        learning_rate: float = 0.003,
        huber_delta: float = 1.0,
        zero_output: bool = False,
        random_state: int | None = 0,
    ) -> None:
        self.n_features = n_features
        self.hidden = tuple(hidden)
        self.learning_rate = learning_rate
        self.huber_delta = huber_delta
        self.random_state = random_state
        rng = np.random.default_rng(random_state)
        sizes = (n_features, *self.hidden, 1)
        weights = [
            (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float64)
            for fan_in, fan_out in itertools.pairwise(sizes)
        ]
        if zero_output:  # start as the zero function: a residual model begins at its baseline
            weights[-1][:] = 0.0
        biases = [np.zeros(fan_out) for fan_out in sizes[1:]]
        self._set_parameters(np.concatenate([p.ravel() for p in (*weights, *biases)]))
        # Adam's moments, one value per parameter, in the order of the flat parameter vector.
        self._moments = np.zeros_like(self._flat)
        self._velocities = np.zeros_like(self._flat)
        self.n_updates = 0

    def _shapes(self) -> list[tuple[int, ...]]:
        sizes = (self.n_features, *self.hidden, 1)
        return [*itertools.pairwise(sizes), *((fan_out,) for fan_out in sizes[1:])]

    def _set_parameters(self, flat: np.ndarray) -> None:
        """Weights and biases as views of one flat vector: Adam updates them all in one pass
        (the same arithmetic per value as one pass per array, with a sixth of numpy's calls)."""
        self._flat = flat
        views, start = [], 0
        for shape in self._shapes():
            size = int(np.prod(shape))
            views.append(flat[start : start + size].reshape(shape))
            start += size
        self.weights = views[: len(views) // 2]
        self.biases = views[len(views) // 2 :]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["weights"], state["biases"]  # views of _flat: rebuilt on load
        return state

    def __setstate__(self, state: dict) -> None:
        if "_flat" not in state:  # saved before the parameters were one vector
            parameters = [*state.pop("weights"), *state.pop("biases")]
            state["_flat"] = np.concatenate([p.ravel() for p in parameters])
            state["_moments"] = np.concatenate([m.ravel() for m in state["_moments"]])
            state["_velocities"] = np.concatenate([v.ravel() for v in state["_velocities"]])
        flat = state.pop("_flat")
        self.__dict__.update(state)
        self._set_parameters(flat)

    def predict(self, X: npt.ArrayLike) -> np.ndarray:
        """Q-values of a batch of feature vectors (shape ``(n,)``)."""
        activation = np.asarray(X, dtype=np.float64)
        last = len(self.weights) - 1
        for index, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            activation = activation @ weight
            activation += bias  # in place: the same sums, one array fewer
            if index < last:
                np.maximum(activation, 0.0, out=activation)
        return activation[:, 0]

    def partial_fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> float:
        """One Adam step on a minibatch toward targets ``y``; returns the mean loss."""
        return huber_loss(self.fit_step(X, y), self.huber_delta)

    def fit_step(self, X: npt.ArrayLike, y: npt.ArrayLike) -> np.ndarray:
        """:meth:`partial_fit` without the loss: returns the errors (prediction - target)
        before the step, from which :func:`huber_loss` gives the loss when it is wanted."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        activations = [X]
        last = len(self.weights) - 1
        for index, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ weight
            z += bias
            if index < last:
                np.maximum(z, 0.0, out=z)
            activations.append(z)
        error = activations[-1][:, 0] - y
        delta = self.huber_delta
        grad = (np.clip(error, -delta, delta) / len(y))[:, None]
        weight_grads, bias_grads = [], []
        for index in range(last, -1, -1):
            weight_grads.append(activations[index].T @ grad)
            bias_grads.append(grad.sum(axis=0))
            if index:
                grad = (grad @ self.weights[index].T) * (activations[index] > 0)
        self._adam_step([*reversed(weight_grads), *reversed(bias_grads)])
        return error

    def _adam_step(self, grads: list[np.ndarray], beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        """One Adam update of every parameter; ``grads`` in the order of weights then biases."""
        self.n_updates += 1
        correction1 = 1.0 - beta1**self.n_updates
        correction2 = 1.0 - beta2**self.n_updates
        grad = np.concatenate([g.ravel() for g in grads])
        moment, velocity = self._moments, self._velocities
        moment *= beta1
        moment += (1.0 - beta1) * grad
        velocity *= beta2
        velocity += (1.0 - beta2) * grad * grad
        self._flat -= self.learning_rate * (moment / correction1) / (np.sqrt(velocity / correction2) + eps)

    def copy_weights_from(self, other: QNetwork) -> None:
        self._set_parameters(other._flat.copy())


def huber_loss(error: np.ndarray, delta: float) -> float:
    """Mean Huber loss of errors: squared up to ``delta``, linear beyond."""
    magnitude = np.abs(error)
    return float(np.where(magnitude <= delta, 0.5 * error**2, delta * (magnitude - 0.5 * delta)).mean())


class ReplayMemory:
    """Fixed-size ring buffer of transitions ``(x, base, reward, next_key)``.

    ``next_key`` names the page the action led to; the next actions themselves
    are looked up when a minibatch is drawn, so links found after the reward
    was recorded still count.
    """

    def __init__(self, capacity: int, n_features: int):
        self.capacity = capacity
        self.X = np.zeros((capacity, n_features), dtype=np.float32)
        self.bases = np.zeros(capacity, dtype=np.float32)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.next_keys = np.full(capacity, -1, dtype=np.int64)
        self.size = 0
        self.cursor = 0

    def __len__(self) -> int:
        return self.size

    def add(self, x: np.ndarray, base: float, reward: float, next_key: int) -> None:
        self.X[self.cursor] = x
        self.bases[self.cursor] = base
        self.rewards[self.cursor] = reward
        self.next_keys[self.cursor] = next_key
        self.cursor = (self.cursor + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, batch_size: int) -> np.ndarray:
        return rng.integers(0, self.size, size=min(batch_size, self.size))

    def latest(self) -> tuple[np.ndarray, np.ndarray]:
        """All stored (X, rewards), oldest first."""
        if self.size < self.capacity:
            return self.X[: self.size], self.rewards[: self.size]
        order = np.r_[self.cursor : self.capacity, 0 : self.cursor]
        return self.X[order], self.rewards[order]


class DoubleDQN:
    """Double DQN over link features: replay, a target network and minibatch updates.

    The network learns a residual over a baseline value given with every action
    (the frontier's learning-free link prior): ``Q(x) = base + net(x)``, with the
    network starting at zero. The informative prior then orders the frontier
    from the first page, and experience corrects it.

    ``next_actions(keys)`` is a callable the frontier provides: for a batch of page
    keys, the current feature vectors of (a sample of) the links found on each
    page, their baselines and which slots hold a link, as
    ``(actions (b x k x f), bases (b x k), mask (b x k))``; a page without links
    is a terminal state.
    """

    def __init__(
        self,
        n_features: int = 11,
        hidden: Iterable[int] = (30, 15),
        learning_rate: float = 0.003,
        gamma: float = 0.6,
        batch_size: int = 32,
        replay_size: int = 20000,
        target_update: int = 50,
        random_state: int | None = 0,
    ) -> None:
        self.gamma = gamma
        self.batch_size = batch_size
        self.target_update = target_update
        self.online = QNetwork(n_features, hidden, learning_rate, zero_output=True, random_state=random_state)
        self.target = QNetwork(n_features, hidden, learning_rate, zero_output=True, random_state=random_state)
        self.target.copy_weights_from(self.online)
        self.memory = ReplayMemory(replay_size, n_features)
        self.rng = np.random.default_rng(random_state)
        self.n_steps = 0
        self._last_error: np.ndarray | None = None

    def predict(self, X: npt.ArrayLike, base: np.ndarray | float) -> np.ndarray:
        """Q-values of actions with features ``X`` and baselines ``base``."""
        return self.online.predict(X) + base

    def remember(self, x: np.ndarray, base: float, reward: float, next_key: int) -> None:
        self.memory.add(x, base, reward, next_key)

    @property
    def last_loss(self) -> float:
        """The Huber loss of the last update's minibatch (before it), NaN before any."""
        if self._last_error is None:
            return float("nan")
        return huber_loss(self._last_error, self.online.huber_delta)

    def train_step(self, next_actions: NextActions) -> float | None:
        """One minibatch update; ``None`` while the memory is too small."""
        return self.train_steps(1, next_actions)

    def train_steps(self, n: int, next_actions: NextActions) -> float | None:
        """``n`` minibatch updates in a row (the last one's loss; ``None`` while the memory
        is too small). The next actions of all ``n`` minibatches are read in one call:
        nothing they depend on changes between the updates."""
        if n <= 0 or len(self.memory) < min(self.batch_size, 8):
            return None
        batches = [self.memory.sample(self.rng, self.batch_size) for _ in range(n)]
        next_states = None
        if self.gamma > 0:
            keys = np.concatenate([self.memory.next_keys[rows] for rows in batches])
            next_states = next_actions(keys)
        start = 0
        for rows in batches:
            targets = self.memory.rewards[rows].astype(np.float64)
            if next_states is not None:
                part = slice(start, start + len(rows))
                targets += self.gamma * self._bootstrap(tuple(array[part] for array in next_states))
                start += len(rows)
            targets -= self.memory.bases[rows]
            self._last_error = self.online.fit_step(self.memory.X[rows], targets)
            self.n_steps += 1
            if self.n_steps % self.target_update == 0:
                self.target.copy_weights_from(self.online)
        return self.last_loss

    def _bootstrap(self, next_state: tuple[np.ndarray, ...]) -> np.ndarray:
        """``Q_target(argmax_a Q_online(a))`` per next state; 0 for terminal states.

        ``next_state`` is ``(actions, mask)``: the actions' features (b x k x f)
        and which of the k slots hold an action (b x k).
        """
        actions, bases, mask = next_state
        b, k, f = actions.shape
        if not mask.any():
            return np.zeros(b)
        flat = actions.reshape(b * k, f)
        online = np.where(mask, self.online.predict(flat).reshape(b, k) + bases, -np.inf)
        target = self.target.predict(flat).reshape(b, k) + bases
        best = np.argmax(online, axis=1)
        return np.where(mask.any(axis=1), target[np.arange(b), best], 0.0)

    def state_dict(self) -> dict:
        return {
            "online": self.online,
            "target": self.target,
            "memory": self.memory,
            "rng": self.rng.bit_generator.state,
            "n_steps": self.n_steps,
        }

    def load_state_dict(self, state: dict) -> None:
        self.online = state["online"]
        self.target = state["target"]
        self.memory = state["memory"]
        self.rng.bit_generator.state = state["rng"]
        self.n_steps = state["n_steps"]
