"""Balanced Winnow (Littlestone 1988; the normalised, two-vector form of Kivinen & Warmuth's EG±) on any
decoder: multiplicative updates of positive weights.

The weights are ``w = w⁺ − w⁻`` with ``w⁺, w⁻ > 0``, both uniform at the start (``w = 0``).  On a mistake,
with ``Δ = φ(x, y) − φ(x, ŷ)`` (``ŷ = argmax_y w·φ(x, y)``) and learning rate ``η``, every entry ``j`` of
``Δ`` multiplies its weights and all weights are normalised to a total mass of 1::

    w⁺_j ← w⁺_j e^{η Δ_j} / Z,    w⁻_j ← w⁻_j e^{−η Δ_j} / Z,    Z = Σ_j (w⁺_j e^{η Δ_j} + w⁻_j e^{−η Δ_j})

(an entry outside ``Δ`` has ``Δ_j = 0``).  For two labels and binary ``x`` this is Winnow's promotion and
demotion of the active features, ``w_j ← w_j e^{η y x_j} / Z``, in each label's half of ``w⁺ − w⁻``; the
negative half lets a weight change sign, for features that speak against a label.  A document's feature
values carry the hash sign (±1 for binary values): the two halves make a negative value act like a
positive one with ``w⁺`` and ``w⁻`` swapped.

A step costs O(entries of Δ): the normaliser ``Z`` scales every weight alike, and ``argmax_y w·φ(x, y)``
does not depend on a positive scale, so training keeps the logarithms of the unnormalised products,
``θ = log v⁺ = −log v⁻`` (``w± = v± / Σ(v⁺ + v⁻)``; an update adds ``ηΔ_j`` to ``θ_j``, exactly, with no
overflow or underflow, and ``v⁺ v⁻ = 1`` stays true from the start), and scores with ``e^{θ − c} − e^{−θ − c}``,
where the global shift ``c`` grows, rarely, when the exponents near overflow: every weight is then multiplied by
``e^{c_old − c}``.  An entry never updated has ``θ = 0`` and weight 0, so ``θ`` and the weights are kept as the
perceptron keeps its weights (:func:`~.run_weights.weight_store`: the rows or the pairs the run touched).
``weights_`` are normalised once per epoch, ``Σ(v⁺ + v⁻)`` counting ``2e^{−c}`` for each entry never updated.  The
mistake bound is ``O(log(p) / γ²)`` for ``p`` features and margin ``γ`` measured with ‖u‖₁ and ‖x‖∞,
against the perceptron's ``O(1/γ²)`` with ‖u‖₂ and ‖x‖₂: far fewer mistakes for a few relevant features
among many.

Epochs, seeded shuffling, mini-batches, dev selection, patience and the callback are the perceptron's
(:class:`~.perceptron.Perceptron`, whose update step this class replaces).
"""

from __future__ import annotations

import numpy as np

from ..joint import JointFeatureMap, SparseWeights
from ..matrix import FeatureMatrix
from .perceptron import DELTA_TRICK, Perceptron
from .protocol import EPOCHS, RUN_OPTIONS, Capabilities, Option

_SHIFT_ABOVE = 500.0  # the shift c moves up to the largest exponent when θ − c exceeds this (e^500 ≈ 1e217)


class Winnow(Perceptron):
    """Balanced Winnow with learning rate ``learning_rate`` = η > 0 (Littlestone's promotion factor 2 is
    η = ln 2).  The default η = 0.1 was chosen by 10-fold cross-validation on a sentiment corpus with
    unigram presence (docs/benchmarks.md).

    After :meth:`fit`: ``weights_`` (``w⁺ − w⁻`` with ``Σ(w⁺ + w⁻) = 1``), ``history_`` and ``best_epoch_``
    as for the perceptron.  The run's state ``(w⁺, w⁻)`` is not in a model file, so training does not
    go on after a run (not online).
    """

    name = "winnow"
    summary = "balanced Winnow: multiplicative updates of positive weights w⁺ − w⁻"
    # ``sparse``: an entry never updated keeps the weight 0 (θ = 0)
    capabilities = Capabilities(sparse=True)
    options = (EPOCHS, *RUN_OPTIONS, DELTA_TRICK,
               Option("learning_rate", float, 0.1, "η of the multiplicative update w± ← w± e^(±ηΔ)/Z", minimum=0,
                      exclusive_minimum=True))

    def start(self, joint: JointFeatureMap, weights: np.ndarray | None = None, history: list | None = None) -> None:
        """Begin a run with ``θ = 0`` (so ``w = 0``), kept in a store of the weights' kind, and the shift ``c = 0``."""
        super().start(joint, weights, history)
        self._theta, self._shift = type(self._state)(joint, False), 0.0

    def _step(self, w, batch: FeatureMatrix, gold: np.ndarray, predicted: np.ndarray, indices: np.ndarray,
              values: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Add ``ηΔ`` to ``θ`` on the entries of ``Δ`` (repeated indices summed) and return what the perceptron's
        ``w += ...`` must add to make ``w = e^{θ − c} − e^{−θ − c}`` there."""
        keys, first, inverse = np.unique(indices, return_index=True, return_inverse=True)
        self._theta.add(keys, self.learning_rate * np.bincount(inverse, values), np.zeros(len(keys)))
        self._theta = self._theta.settled()
        theta = self._theta[keys]
        largest = np.abs(theta).max()
        if largest - self._shift > _SHIFT_ABOVE:
            w.scale(np.exp(self._shift - largest))
            self._shift = largest
        change = np.zeros(len(indices))
        change[first] = self._scoring_weights(theta) - w[keys]
        return change

    def _scoring_weights(self, theta: np.ndarray) -> np.ndarray:
        """``e^{θ − c} − e^{−θ − c}``: proportional to ``w``."""
        return np.exp(theta - self._shift) - np.exp(-theta - self._shift)

    def _hypothesis(self) -> np.ndarray | SparseWeights:
        """The normalised weights ``(v⁺ − v⁻) / Σ(v⁺ + v⁻)``, in the form of the run's weights."""
        theta = self._theta.current()
        stored = theta.values if isinstance(theta, SparseWeights) else theta
        tail = theta.tail if isinstance(theta, SparseWeights) else stored[:0]
        unstored = theta.size - len(stored) - len(tail)  # entries of θ = 0: v⁺ = v⁻ = 1
        top = max(np.abs(stored).max(initial=0.0), np.abs(tail).max(initial=0.0))
        total = unstored * 2 * np.exp(-top)
        normalised = []
        for v in (stored, tail):
            plus, minus = np.exp(v - top), np.exp(-v - top)
            total += plus.sum() + minus.sum()
            normalised.append(np.subtract(plus, minus, out=plus))
        for v in normalised:
            v /= total
        if isinstance(theta, SparseWeights):
            return SparseWeights(theta.keys, normalised[0], normalised[1], theta.size)
        return normalised[0]
