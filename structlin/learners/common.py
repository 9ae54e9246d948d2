"""Helpers every learner shares: the progress bar's switch, dev accuracy, input checks, and the
bookkeeping of a training run (history, dev selection, patience, callback)."""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

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


class StopTraining(Exception):
    """Raised by :meth:`TrainingRun.record` to end a run early; carries the current weights and why."""

    def __init__(self, w: np.ndarray, reason: str):
        super().__init__(reason)
        self.w, self.reason = w, reason


class TrainingRun:
    """The bookkeeping of one training run shared by the batch and stochastic solvers: history records,
    dev evaluation and selection, patience, the callback and the progress bar.  ``learner`` gives
    ``progress``, ``eval_every``, ``patience`` and ``callback``."""

    def __init__(self, learner, joint: JointFeatureMap, decoder: Decoder, dev):
        self.learner, self.joint, self.decoder, self.dev = learner, joint, decoder, dev
        self.history: list[dict] = []
        self.best_step: int | None = None
        self.best_score, self.best_weights, self.waited = -1.0, None, 0
        self.clock = time.perf_counter()  # the first step's seconds include the set-up
        self._bar = None

    def bar(self, total: int, unit: str) -> tqdm:
        self._bar = tqdm(total=total, disable=quiet(self.learner.progress), unit=unit, leave=False)
        return self._bar

    def evaluate(self, record: dict, w: np.ndarray) -> None:
        record["dev_accuracy"] = dev_accuracy(self.decoder, self.joint, w, self.dev)
        if record["dev_accuracy"] > self.best_score:
            self.best_score, self.best_weights, self.waited = record["dev_accuracy"], w.copy(), 0
            self.best_step = record[self.step_name]
        else:
            self.waited += 1

    def record(self, w: np.ndarray, step_name: str, value: float, gradient: np.ndarray, **extra) -> None:
        """Append the history record of the step that reached ``w``; evaluate on dev when due; stop
        (raise :class:`StopTraining`) when the callback or the patience says so."""
        learner, self.step_name = self.learner, step_name
        record = {step_name: len(self.history) + 1, "objective": value, "gradient_norm": float(np.linalg.norm(gradient)),
                  **extra, "dev_accuracy": None, "seconds": 0.0}
        if self.dev is not None and record[step_name] % learner.eval_every == 0:
            self.evaluate(record, w)
        now = time.perf_counter()
        record["seconds"], self.clock = now - self.clock, now
        self.history.append(record)
        if step_name == "iteration":
            self._bar.update()
        self._bar.set_postfix(objective=f"{value:.6g}", dev=record["dev_accuracy"])
        if learner.callback is not None and learner.callback(record, learner):
            raise StopTraining(w, "stopped by the callback")
        if learner.patience is not None and self.waited >= learner.patience:
            raise StopTraining(w, f"no dev improvement in {learner.patience} evaluations")

    def finish(self, w: np.ndarray) -> np.ndarray:
        """The weights to keep: the best on dev (the last ones are always compared), or ``w``."""
        if self.dev is not None and self.history and self.history[-1]["dev_accuracy"] is None:
            self.evaluate(self.history[-1], w)
        if self.best_weights is None:  # no dev set, or no step at all
            self.best_weights, self.best_step = w, len(self.history)
        return self.best_weights
