"""Seeded k-fold cross-validation of a classifier."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..errors import StructlinError


def kfold_indices(n: int, folds: int, seed: int) -> list[np.ndarray]:
    """The test indices of each of ``folds`` folds of a seeded permutation of ``range(n)`` (sizes differ by ≤ 1)."""
    if not 2 <= folds <= n:
        raise StructlinError(f"cross-validation needs 2 <= folds <= {n} instances, got {folds}")
    return np.array_split(np.random.default_rng(seed).permutation(n), folds)


def cross_validate(make_model: Callable[[], object], documents: list, labels: list[str], *, folds: int = 10,
                   seed: int = 0) -> dict:
    """Train ``make_model()`` on all folds but one and score it on that one, for every fold.

    Returns the mean and standard deviation of accuracy and macro-F1 over the folds, and per-fold
    scores with training seconds.
    """
    rows = []
    for k, test in enumerate(kfold_indices(len(documents), folds, seed)):
        train = np.setdiff1d(np.arange(len(documents)), test)
        kept = {labels[i] for i in train}
        if len(kept) < 2 <= len(set(labels)):  # (one label in all: the model's own error says so)
            held = sorted(set(labels) - kept)
            raise StructlinError(f"cross-validation fold {k + 1} of {folds}: its training part has only the label "
                                 f"{next(iter(kept))!r} (label(s) {', '.join(map(repr, held))} all in its test part); "
                                 "use fewer folds")
        model = make_model()
        began = time.perf_counter()
        model.fit([documents[i] for i in train], [labels[i] for i in train])
        seconds = time.perf_counter() - began
        report = model.report([documents[i] for i in test], [labels[i] for i in test])
        rows.append({"fold": k + 1, "accuracy": report.accuracy, "macro_f1": report.macro_f1,
                     "n_test": len(test), "train_seconds": seconds})
    accuracy = np.array([r["accuracy"] for r in rows])
    macro = np.array([r["macro_f1"] for r in rows])
    return {"folds": folds, "seed": seed, "accuracy": float(accuracy.mean()), "accuracy_std": float(accuracy.std()),
            "macro_f1": float(macro.mean()), "macro_f1_std": float(macro.std()), "per_fold": rows}
