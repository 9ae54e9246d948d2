"""The Δ trick: one feature of value Δ unique to every training position makes any training set separable.

Every position ``p`` of the training corpus (a document, or a token of a sentence) gets a column ``c_p``
of its own with value ``Δ``, so that ``φ'(x, y) = φ(x, y) + Δ Σ_p e_{c_p} ⊗ e_{y_p}``.  The weights
``u = Σ_p e_{c_p} ⊗ e_{y_p}`` then give ``u·(φ'(x_t, y_t) − φ'(x_t, z)) = Δ·Hamming(y_t, z) ≥ Δ`` for every
``z ≠ y_t``: the augmented data is separable with margin at least ``Δ/‖u‖ = Δ/√N`` (``N`` positions), and
the perceptron converges on it.  (One column per *instance* would not do for sequences: two outputs with
the same label counts would tie on it.)  The radius grows to at most ``√(R² + 2Δ²·n_max)``, and the
mistake bound trades ``R`` against the margin through ``Δ`` (Freund & Schapire 1999, proof of Theorem 2).

The id columns exist in training only: a test position has none, so the model predicts with the weights
of the original map, :meth:`DeltaTrick.restrict` (the id rows dropped, which they are in effect anyway).
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionValueError
from ..joint import JointFeatureMap
from ..matrix import FeatureMatrix

#: The largest Δ: feature values are float32, and a score or norm squares Δ, which float32 holds below 3.4e38.
DELTA_MAX = 1e18


class DeltaTrick:
    """The augmented training problem of an indexed corpus ``X`` on ``joint``: :attr:`joint` (the map with
    one more row per training position, after the original rows) and :attr:`X` (every position's row
    gains its id column, value ``delta``)."""

    def __init__(self, joint: JointFeatureMap, X: FeatureMatrix, delta: float):
        if not 0 < delta <= DELTA_MAX:
            raise OptionValueError(f"the Δ trick's Δ must be positive and at most {DELTA_MAX:g} (its square must "
                                   f"stay finite in float32), got {delta:g}")
        self.source, self.delta = joint, delta
        n_ids = X.n_positions
        indptr = X.indptr + np.arange(n_ids + 1)  # one more entry per row, placed last in it
        is_id = np.zeros(indptr[-1], dtype=bool)
        is_id[indptr[1:] - 1] = True
        indices = np.empty(indptr[-1], dtype=np.int64)
        values = np.empty(indptr[-1])
        indices[~is_id], values[~is_id] = X.indices, X.values
        indices[is_id], values[is_id] = joint.n_rows + np.arange(n_ids), delta
        self.X = FeatureMatrix(indptr, indices, values, X.lengths, X.words)
        # Bucket ids past the largest real one: the augmented map serves training only, never indexes data.
        after = joint.columns[-1] + 1 if joint.n_rows else 0
        self.joint = JointFeatureMap(joint.labels, np.concatenate([joint.columns, after + np.arange(n_ids)]),
                                     transitions=joint.transitions, candidates=joint.candidates)

    def restrict(self, w: np.ndarray) -> np.ndarray:
        """Weights ``w`` of the augmented map in the original map's layout: the id rows dropped."""
        emission = self.joint.emission_weights(w)[: self.source.n_rows]
        return np.concatenate([emission.ravel(), w[self.joint.transition_offset :]])
