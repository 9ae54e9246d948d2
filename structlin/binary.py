"""The binary special case: a two-label multiclass model is ``sign(v·x + b)``.

With labels ``(a, b)`` (in the joint map's order) and weight blocks ``w_a``, ``w_b``, the multiclass
score difference is

    w·φ(x, b) − w·φ(x, a) = (w_b − w_a)·x = v·x

so the argmax is ``b`` exactly when ``v·x > 0`` (a tie goes to the first label, ``a``, as every decoder
breaks ties towards the lower label index).  Calling ``b`` the positive class (+1), a constant feature
``x_0 = 1`` (a bias template) carries the bias: ``b = v_0``.  The multiclass perceptron's update on a
mistake with gold ``y ∈ {−1, +1}``, ``w_gold += x`` and ``w_predicted −= x``, changes ``v`` by ``2y·x``:
the classic perceptron ``v ← v + y·x`` scaled by 2.  From ``v = 0`` the two runs stay proportional, so
they make the same decisions and the same mistakes on any sequence of examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .joint import JointFeatureMap
from .matrix import FeatureMatrix


@dataclass(frozen=True)
class BinaryView:
    """``sign(v·x + b)`` over the rows of a two-label joint map (indexed feature matrices), labels
    ``negative`` (−1) and ``positive`` (+1)."""

    v: np.ndarray
    b: float
    negative: str
    positive: str
    positive_first: bool  # whether the positive label comes first in the map, and so wins ties

    @classmethod
    def from_multiclass(cls, joint: JointFeatureMap, w: np.ndarray, *, positive: str | None = None,
                        bias_row: int | None = None) -> BinaryView:
        """The view of weights ``w`` of a two-label map without transitions: ``v = w_positive − w_negative``
        (``positive`` defaults to the second label); the weight of ``bias_row``, a feature whose value is 1
        at every position, becomes ``b`` (and leaves ``v``)."""
        if joint.n_labels != 2 or joint.transitions:
            raise ValueError(f"a binary view needs two labels and no transitions, got {joint.n_labels} labels"
                             f"{' with transitions' if joint.transitions else ''}")
        k = joint.label_index[positive] if positive is not None else 1
        W = joint.emission_matrix(w)
        v = W[:, k] - W[:, 1 - k]
        b = 0.0
        if bias_row is not None:
            b, v[bias_row] = float(v[bias_row]), 0.0
        return cls(v, b, joint.labels[1 - k], joint.labels[k], k == 0)

    def decision_function(self, X: FeatureMatrix) -> np.ndarray:
        """``v·x + b`` for every position of ``X``."""
        return X.dot(self.v[:, None])[:, 0] + self.b

    def predict(self, X: FeatureMatrix) -> np.ndarray:
        """``sign(v·x + b)`` (±1) for every position of ``X``; 0 goes to the label first in the map."""
        decision = self.decision_function(X)
        return np.where(decision >= 0 if self.positive_first else decision > 0, 1, -1)
