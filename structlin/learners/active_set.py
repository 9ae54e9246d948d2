"""An active set of weights for batch max-ent: L-BFGS over the (feature, label) pairs that matter, not every pair.

Max-ent's weight vector holds every hashed feature row × every label (6.1 M weights on UD English EWT), and
L-BFGS keeps ``2·memory`` vectors of its length.  Most of those weights stay near zero: CRFsuite keeps only the
attribute–label pairs seen in training.  Seen pairs alone lose accuracy, because the likelihood also pushes down
pairs never seen whose feature fires where the model wrongly expects that label.  So the active set is

    A = {(r, y_p) : feature row r fires at position p with gold label y_p}  ∪  the tail (transitions, start, end)

at first, and once, after the first half of the iteration budget, it grows by the unseen pairs with the largest
gradient ``|∂f/∂w_rl|`` at that point (``grow`` times as many as the seen ones): the pairs the model's
marginals make matter; L-BFGS goes on over the grown set with its curvature pairs (0 at the new weights in
them).  Every weight outside ``A`` is held at 0, so the optimiser minimises

    f_A(θ) = f(w(θ)),   w(θ)_A = θ, 0 elsewhere,   ∇f_A(θ) = ∇f(w(θ))_A

and its vectors have ``|A|`` entries.  The objective itself is still evaluated on the full vector.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..joint import JointFeatureMap, SparseWeights

#: Positions whose seen pairs are listed at a time (bounds the temporaries of :func:`seen_pairs`).
_POSITIONS_AT_A_TIME = 1 << 16


def seen_pairs(joint: JointFeatureMap, parts) -> np.ndarray:
    """The sorted flat indices of the emission weights ``(row, gold label)`` of every stored entry of the
    indexed corpora ``parts`` (``(X, y)`` pairs), with the tail's indices after them."""
    L, seen = joint.n_labels, np.zeros(joint.transition_offset, dtype=bool)
    for X, y in parts:
        for first in range(0, X.n_positions, _POSITIONS_AT_A_TIME):
            last = min(first + _POSITIONS_AT_A_TIME, X.n_positions)
            begin, end = X.indptr[first], X.indptr[last]
            positions = np.repeat(np.arange(first, last), np.diff(X.indptr[first : last + 1]))
            seen[X.indices[begin:end].astype(np.int64) * L + y[positions]] = True
    return np.concatenate([np.flatnonzero(seen), np.arange(joint.transition_offset, joint.size)])


class ActivePairs:
    """The free weights of a run (:func:`seen_pairs` at first), grown once by :meth:`grow`."""

    def __init__(self, free: np.ndarray, joint: JointFeatureMap, growth: float):
        self.free, self.growth, self.grown = free, growth, False
        self.size, self.emission_size = joint.size, joint.transition_offset

    @property
    def n_emission(self) -> int:
        """How many free weights are emission weights (the tail's follow them in ``free``)."""
        return len(self.free) - (self.size - self.emission_size)

    def expand(self, theta: np.ndarray) -> np.ndarray:
        """``w(θ)``: the full weight vector with ``θ`` at the free entries, 0 elsewhere."""
        return self.expander()(theta)

    def expander(self) -> Callable[[np.ndarray], np.ndarray]:
        """:meth:`expand` for the set as it is now, still right after it grows (for a snapshot of a run)."""
        free, size = self.free, self.size

        def expand(theta: np.ndarray) -> np.ndarray:
            w = np.zeros(size)
            w[free] = theta
            return w

        return expand

    def sparse(self, theta: np.ndarray) -> SparseWeights:
        """``w(θ)`` as :class:`~structlin.joint.SparseWeights` (views of ``θ``; the tail's weights are all free)."""
        k = self.n_emission
        return SparseWeights(self.free[:k], theta[:k], theta[k:], self.size)

    def grow(self, gradient: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """Add the ``growth × (seen emission pairs)`` emission weights outside the set with the largest
        ``|gradient|`` (ties by index; weights with a zero gradient never).  ``gradient`` is the emission block's,
        flat, exact outside the set; it is overwritten.  Returns ``embed``: a vector over the set as it was (``θ``,
        L-BFGS's pairs) laid out over the grown set, 0 at the added weights."""
        emission = self.free[: self.n_emission]
        score = np.abs(gradient[: self.emission_size], out=gradient[: self.emission_size])
        score[emission] = 0.0
        k = min(int(round(self.growth * len(emission))), int(np.count_nonzero(score)))
        self.grown = True
        if k == 0:
            return lambda v: v
        threshold = _kth_largest(score, k)
        above = np.flatnonzero(score > threshold)
        added = np.union1d(above, np.flatnonzero(score == threshold)[: k - len(above)])
        old, self.free = self.free, np.union1d(self.free, added)
        before, size = np.searchsorted(self.free, old), len(self.free)

        def embed(v: np.ndarray) -> np.ndarray:
            out = np.zeros(size)
            out[before] = v
            return out

        return embed


def _kth_largest(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of non-negative, finite float64 ``values`` (``1 ≤ k ≤ len(values)``), without a copy of
    them: a bisection over the bit patterns, which order as the values do (64 passes that count)."""
    bits = values.view(np.int64)
    low, high = 0, int(bits.max())  # the answer's pattern lies in [low, high]: at least k values ≥ it
    while low < high:
        middle = (low + high + 1) // 2
        if np.count_nonzero(bits >= middle) >= k:
            low = middle
        else:
            high = middle - 1
    return float(np.array(low, dtype=np.int64).view(np.float64))
