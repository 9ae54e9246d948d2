"""One training run, shared by every iterative learner: history records, dev evaluation and selection,
patience, the callback and the progress bar.

Every history record has the common fields

    step          1, 2, ...: the epoch, pass or iteration the record is about
    unit          "epoch" or "iteration" (the record also holds the step under this key: ``epoch`` or
                  ``iteration``, as files written before the common fields did)
    dev_accuracy  position accuracy on dev of the model as of this step, None when not evaluated
    seconds       the step's time, with its dev evaluation

plus the learner's own fields (its ``history_fields``: mistakes, objective, duality gap ...).

A learner runs its loop inside ``with TrainingRun(...) as run:`` and calls :meth:`TrainingRun.record` after
every step with a function that returns the model as of now (its *snapshot*: weights, or what the learner
predicts with).  With a dev set the snapshot is taken and scored every ``eval_every`` steps and at the end,
and the best one is kept; without one the last.  A true return of ``callback(record, learner)`` or
``patience`` evaluations without improvement end the run (the ``with`` block ends quietly and
``run.stopped`` says why).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..decoders import Decoder, decode_corpus
from ..errors import StructlinError
from ..featurecache import ShardedCorpus, cache_root
from ..joint import AveragedWeights, JointFeatureMap, SparseWeights, read_weights, smaller_form, write_weights
from ..matrix import FeatureMatrix, ordered_held_out

UNITS = ("epoch", "iteration")


def quiet(progress: bool | None) -> bool | None:
    """tqdm's ``disable``: None hides the bar when stderr is not a terminal."""
    return None if progress is None else not progress


def accuracy(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Position accuracy; gold ids of −1 (labels unseen in training) count as errors, no positions as 0."""
    return float((predicted == gold).mean()) if len(gold) else 0.0


def dev_accuracy(decoder: Decoder, joint: JointFeatureMap, w: np.ndarray, dev: tuple[FeatureMatrix, np.ndarray]) -> float:
    """Position accuracy of the weights ``w`` on ``dev = (X_dev, y_dev)`` (see :func:`accuracy`); a
    :class:`~structlin.featurecache.ShardedCorpus` (``y_dev`` None) is decoded shard by shard."""
    X, gold = dev
    if isinstance(X, ShardedCorpus):
        correct = sum(int((decode_corpus(decoder, joint, w, part) == part_gold).sum()) for part, part_gold in X.parts())
        return correct / X.n_positions if X.n_positions else 0.0
    return accuracy(decode_corpus(decoder, joint, w, X), gold)


def hold_out_instances(X: FeatureMatrix, y: np.ndarray, fraction: float, seed: int):
    """``(X_rest, y_rest, (X_held, y_held))``: a ``fraction`` of the instances held out — of each label's
    documents (of all instances, for sequences) one contiguous run in corpus order, the seed choosing which
    (:func:`~structlin.matrix.ordered_held_out`) — the rest in corpus order, for a learner that chooses a
    setting on held-out data when it has no dev.  A :class:`~structlin.featurecache.ShardedCorpus` gives two
    corpora over its cache, and None for their ids."""
    if isinstance(X, ShardedCorpus):
        rest, held = X.hold_out(fraction, seed)
        return rest, None, (held, None)
    mask = ordered_held_out(X.n_instances, fraction, y if (X.lengths == 1).all() else None, seed)
    rest, held = np.flatnonzero(~mask), np.flatnonzero(mask)
    return X.take(rest), y[X.positions(rest)], (X.take(held), y[X.positions(held)])


def latest_within_noise(history: list[dict], n_positions: int) -> int | None:
    """The step to train for, chosen from a held-out run's ``history``: the **latest** step whose held-out
    accuracy is within one standard error of the best, ``a_t ≥ a* − √(a*(1 − a*)/n)`` over ``n_positions``
    held-out positions (None when no step was scored).

    The full run is the default a held-out share may only shorten: its best score is the maximum of noisy
    estimates, and an earlier step wins it by chance (on the held-out tenth of 20 Newsgroups' training posts,
    1,131 posts and a standard error near 0.8 points, the averaged perceptron's epochs 4-10 score within two
    posts of each other; docs/benchmarks.md)."""
    scored = [(r["step"], r["dev_accuracy"]) for r in history if r["dev_accuracy"] is not None]
    if not scored:
        return None
    best = max(score for _, score in scored)
    noise = np.sqrt(best * (1 - best) / max(n_positions, 1))
    return max(step for step, score in scored if score >= best - noise)


def require_finite(X: FeatureMatrix, what: str) -> None:
    """Raise :class:`StructlinError` naming the first instance of ``X`` with a NaN or infinite
    feature value: such a value would turn every weight it touches into NaN.  (A
    :class:`~structlin.featurecache.ShardedCorpus` was checked as its cache was written.)"""
    if isinstance(X, ShardedCorpus):
        return
    bad = np.flatnonzero(~np.isfinite(X.values))
    if len(bad):
        row = int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
        instance = int(np.searchsorted(X.offsets, row, side="right")) - 1
        raise StructlinError(f"{what} instance {instance} (0-based) has a non-finite feature value "
                             f"({X.values[bad[0]]}); check the feature values of the input")


def _made(snapshot):
    """A snapshot to keep: an unmade average (:class:`~structlin.joint.AveragedWeights`) made, any other as it is."""
    return snapshot.dense() if isinstance(snapshot, AveragedWeights) else snapshot


def _smaller_snapshot(snapshot, emission_size: int):
    """A snapshot as a run on a corpus on disk keeps it: its non-zero emission pairs and tail
    (:class:`~structlin.joint.SparseWeights`) when they are smaller than the full vector, else the full vector
    (:func:`~structlin.joint.smaller_form`).  An unmade average of touched rows makes its pairs from its rows alone
    (:meth:`~structlin.joint.AveragedWeights.smallest`), so that the full vector is never made: a tagging model's
    non-zero weights are a few of its rows' (EWT + Brown + the treebank: 1.4 M pairs, 23 MB, against 120 MB)."""
    if isinstance(snapshot, SparseWeights):
        return snapshot
    if isinstance(snapshot, AveragedWeights):
        return snapshot.smallest(emission_size)
    return smaller_form(snapshot, emission_size)


class _KeptOnDisk:
    """The best snapshot of a run, kept in a temporary file under the feature caches' folder rather than in memory
    (a run on a corpus on disk: ``TrainingRun(spill=True)``), so that memory holds the run's own weights and the
    snapshot being scored, not a third copy.  A snapshot is a weight vector or
    :class:`~structlin.joint.SparseWeights`."""

    def __init__(self):
        self.folder: Path | None = None
        self.path: Path | None = None

    def keep(self, snapshot) -> None:
        if self.folder is None:
            root = cache_root()
            try:
                root.mkdir(parents=True, exist_ok=True)
                self.folder = Path(tempfile.mkdtemp(prefix=".best-", dir=root))
            except OSError as err:
                raise StructlinError(f"cannot keep the best weights in {root}: {err.strerror or err} (set "
                                     "STRUCTLIN_CACHE to a writable folder)") from None
        self.path = self.folder / "best"
        write_weights(self.path, snapshot)

    def read(self):
        """The snapshot kept, and the file removed."""
        snapshot = read_weights(self.path)
        self.remove()
        return snapshot

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = self.path = None


class StopTraining(Exception):
    """Raised by :meth:`TrainingRun.record` to end a run early; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class TrainingRun:
    """The bookkeeping of one run of ``learner`` (see the module docstring).

    ``score(snapshot)`` gives a snapshot's dev accuracy (by default, the weights' position accuracy on
    ``dev`` decoded with ``decoder``); ``history`` continues an earlier run's records.  The learner's
    ``eval_every``, ``patience``, ``callback`` and ``progress`` options apply when it declares them.
    """

    def __init__(self, learner, joint: JointFeatureMap, decoder: Decoder, dev, *, unit: str = "epoch",
                 score: Callable | None = None, history: list | None = None, spill: bool = False):
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        self.learner, self.dev, self.unit = learner, dev, unit
        self.score = score or (lambda w: dev_accuracy(decoder, joint, w, dev))
        options = learner.get_params()
        self.eval_every, self.patience = options.get("eval_every", 1), options.get("patience")
        self.callback, self.progress = options.get("callback"), options.get("progress")
        self.history: list[dict] = list(history or [])
        self.best_step: int | None = None
        self.best_score, self.best, self.waited = -1.0, None, 0
        self.stopped: str | None = None
        self.clock = time.perf_counter()  # the first step's seconds include the set-up
        self._snapshot: Callable | None = None
        self._bar = tqdm(total=0, disable=True)
        self._kept = _KeptOnDisk() if spill else None
        self._joint = joint

    def __enter__(self) -> TrainingRun:
        return self

    def __exit__(self, kind, error, trace) -> bool:
        self._bar.close()
        if isinstance(error, StopTraining):
            self.stopped = error.reason
            return True
        if error is not None and self._kept is not None:
            self._kept.remove()
        return False

    def bar(self, total: int, unit: str) -> tqdm:
        """The run's progress bar over ``total`` ``unit`` s (hidden as the learner's ``progress`` says)."""
        self._bar = tqdm(total=total, disable=quiet(self.progress), unit=unit, leave=False)
        return self._bar

    def _evaluate(self, record: dict, snapshot) -> None:
        record["dev_accuracy"] = self.score(snapshot)
        if record["dev_accuracy"] > self.best_score:
            self.best = None  # the one before first, so that memory never holds two
            if self._kept is not None:
                self._kept.keep(self._kept_form(snapshot))
            else:
                self.best = self._kept_form(snapshot)
            self.best_score, self.waited, self.best_step = record["dev_accuracy"], 0, record["step"]
        else:
            self.waited += 1

    def record(self, snapshot: Callable, **fields) -> dict:
        """Append the record of the step just made, with the learner's ``fields``; ``snapshot()`` returns
        the model as of now (called only when it is scored on dev or kept).  Raises :class:`StopTraining`
        when the callback or the patience ends the run."""
        step = len(self.history) + 1
        record = {"step": step, "unit": self.unit, self.unit: step, **fields, "dev_accuracy": None, "seconds": 0.0}
        self._snapshot = snapshot
        if self.dev is not None and step % self.eval_every == 0:
            self._evaluate(record, snapshot())
        now = time.perf_counter()
        record["seconds"], self.clock = now - self.clock, now
        self.history.append(record)
        shown = {field.label.split()[-1]: field.format.format(record[field.key])
                 for field in self.learner.history_fields if record.get(field.key) is not None}
        self._bar.set_postfix(**{self.unit: step, **shown, "dev": record["dev_accuracy"]})
        if self.unit == "iteration":
            self._bar.update()
        if self.callback is not None and self.callback(record, self.learner):
            raise StopTraining("stopped by the callback")
        if self.dev is not None and self.patience is not None and self.waited >= self.patience:
            raise StopTraining(f"no dev improvement in {self.patience} evaluations")
        return record

    def latest(self):
        """The snapshot of the last step recorded (None before the first)."""
        return None if self._snapshot is None else self._snapshot()

    def finish(self, initial: Callable | None = None):
        """The snapshot to keep: the best on dev (the last step is always evaluated), or the last one;
        ``best_step`` is its step.  With no step recorded, ``initial()`` (step 0)."""
        if self._snapshot is None:
            self.best_step = 0
            return None if initial is None else initial()
        if self.dev is not None and self.history[-1]["dev_accuracy"] is None:
            self._evaluate(self.history[-1], self._snapshot())
        if self._kept is not None and self._kept.path is not None:
            self.best = self._kept.read()
        if self.best is None:  # no dev set
            self.best, self.best_step = self._kept_form(self._snapshot()), len(self.history)
        return self.best

    def _kept_form(self, snapshot):
        """A snapshot as the run keeps it: made (:func:`_made`), or in a run on a corpus on disk in its smaller form
        (:func:`_smaller_snapshot`: its non-zero pairs, as a model file holds them, when they are smaller)."""
        if self._kept is None:
            return _made(snapshot)
        return _smaller_snapshot(snapshot, self._joint.transition_offset)
