"""Helpers every learner shares: the progress bar's switch, dev accuracy, and input checks."""

from __future__ import annotations

import numpy as np

from ..decoders import Decoder, decode_corpus
from ..errors import StructlinError
from ..joint import JointFeatureMap
from ..matrix import FeatureMatrix


def quiet(progress: bool | None) -> bool | None:
    """tqdm's ``disable``: None hides the bar when stderr is not a terminal."""
    return None if progress is None else not progress


def dev_accuracy(decoder: Decoder, joint: JointFeatureMap, w: np.ndarray, dev: tuple[FeatureMatrix, np.ndarray]) -> float:
    """Position accuracy of ``w`` on ``dev = (X_dev, y_dev)``; gold ids of −1 (labels unseen in
    training) count as errors, an empty dev set as 0."""
    X, gold = dev
    return float((decode_corpus(decoder, joint, w, X) == gold).mean()) if len(gold) else 0.0


def require_finite(X: FeatureMatrix, what: str) -> None:
    """Raise :class:`StructlinError` naming the first instance of ``X`` with a NaN or infinite
    feature value: such a value would turn every weight it touches into NaN."""
    bad = np.flatnonzero(~np.isfinite(X.values))
    if len(bad):
        row = int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
        instance = int(np.searchsorted(X.offsets, row, side="right")) - 1
        raise StructlinError(f"{what} instance {instance} (0-based) has a non-finite feature value "
                             f"({X.values[bad[0]]}); check the feature values of the input")
