"""Brute-force definitions shared by the tests: dense features and φ(x, y) written out literally."""

from __future__ import annotations

import numpy as np

from structlin.joint import JointFeatureMap
from structlin.matrix import FeatureMatrix


def dense_rows(X: FeatureMatrix, n_rows: int) -> np.ndarray:
    out = np.zeros((X.n_positions, n_rows))
    for p in range(X.n_positions):
        for e in range(X.indptr[p], X.indptr[p + 1]):
            out[p, X.indices[e]] += X.values[e]
    return out


def phi(joint: JointFeatureMap, F: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """φ(x, y) of one instance from its dense position features F (n × rows)."""
    L = joint.n_labels
    out = np.zeros(joint.size)
    for i, label in enumerate(labels):
        out[: joint.transition_offset].reshape(-1, L)[:, label] += F[i]
    if joint.transitions and len(labels):
        t0 = joint.transition_offset
        for i in range(1, len(labels)):
            out[t0 + labels[i - 1] * L + labels[i]] += 1
        out[t0 + L * L + labels[0]] += 1
        out[t0 + L * L + L + labels[-1]] += 1
    return out
