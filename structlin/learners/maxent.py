"""Maximum entropy (log-linear) learning on any decoder with marginals, batch L-BFGS with L2.

The model is ``p(y|x) = exp(w·φ(x, y)) / Z(x)`` over the decoder's outputs: softmax over labels with
the :class:`~structlin.decoders.Multiclass` decoder (multinomial logistic regression), the whole
label chain with the Viterbi and Greedy decoders (a linear-chain CRF; both train on Viterbi's
forward–backward, Greedy only decodes differently).  Training minimises

    f(w) = −Σ_t log p(y_t|x_t) + (l2/2)‖w‖²,     log p(y|x) = w·φ(x, y) − log Z(x)

    ∇f(w) = −Σ_t [ φ(x_t, y_t) − E_{p(y|x_t)} φ(x_t, y) ] + l2·w

a sum (not a mean) over the training instances, so ``l2`` is the Gaussian prior's ``1/σ²`` and its
weight against the data shrinks as the corpus grows.  The expected counts come from the decoder's
marginals: node marginals ``P(y_p = a)`` give the emission block as ``Xᵀ (nodes − onehot(gold))`` (one
sparse product over the corpus), edge marginals summed over each batch the transitions and
first/last-position marginals the start/end weights; the gold counts of the transition block are
counted once.  Marginals are computed in batches of instances of similar length, so memory beyond
the corpus's ``positions × labels`` arrays stays bounded.

The optimiser is scipy's L-BFGS-B without bounds.  Its workspace holds ``2·memory + 5`` vectors of
the weights' length (with the default ``memory = 10``, 25 times the weight vector).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import scipy.optimize
import scipy.sparse
from tqdm import tqdm

from ..decoders import Decoder, Viterbi, length_batches
from ..errors import StructlinError
from ..joint import JointFeatureMap, Scores
from ..matrix import FeatureMatrix
from .common import dev_accuracy, quiet, require_finite


class MaxEntObjective:
    """``f(w)`` and ``∇f(w)`` of the module docstring for one indexed corpus ``X`` with gold label ids
    ``y``; everything that does not depend on ``w`` is prepared once.  Calling it returns
    ``(f, gradient)``; a non-finite value raises :class:`StructlinError`.

    The most recent evaluation is kept, because L-BFGS-B reports each new iterate right after
    evaluating it: :meth:`at` returns it without recomputing.
    """

    def __init__(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *, l2: float):
        self.joint, self.l2 = joint, l2
        # Greedy defines no distribution; it decodes the chain whose distribution Viterbi's marginals give.
        self.inference = Viterbi() if decoder.uses_transitions else decoder
        self.X = scipy.sparse.csr_matrix((X.values.astype(np.float64), X.indices, X.indptr),
                                         shape=(X.n_positions, joint.n_rows))
        self.y = np.asarray(y, dtype=np.int64)
        self.batches = [(X.positions(chosen), X.lengths[chosen]) for chosen in length_batches(X.lengths)]
        nonempty = X.lengths > 0
        self.first, self.last = X.offsets[:-1][nonempty], X.offsets[1:][nonempty] - 1
        self.gold_tail = self._gold_tail(X) if joint.transitions else None
        self.evaluations = 0
        self._last: tuple[np.ndarray, float, np.ndarray] | None = None

    def _gold_tail(self, X: FeatureMatrix) -> np.ndarray:
        """Gold counts of the transition, start and end blocks (the tail of the weight vector)."""
        L, y = self.joint.n_labels, self.y
        follows = np.ones(X.n_positions, dtype=bool)
        follows[self.first] = False
        p = np.flatnonzero(follows)
        return np.concatenate([np.bincount(y[p - 1] * L + y[p], minlength=L * L),
                               np.bincount(y[self.first], minlength=L), np.bincount(y[self.last], minlength=L)])

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        # Overflow shows as a non-finite value, reported as one error rather than numpy warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            value, gradient = self._evaluate(w)
        self.evaluations += 1
        if not (np.isfinite(value) and np.isfinite(gradient).all()):
            raise StructlinError(f"the max-ent objective became {value} (evaluation {self.evaluations}): the scores "
                                 f"overflowed; scale the feature values down or raise l2 (now {self.l2})")
        self._last = (w.copy(), value, gradient)
        return value, gradient

    def _evaluate(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        joint, L = self.joint, self.joint.n_labels
        E = self.X @ joint.emission_weights(w)
        trans, start, end = joint.transition_weights(w)
        nodes = np.empty_like(E)
        log_z = 0.0
        expected_transitions = np.zeros((L, L))
        for positions, lengths in self.batches:
            marginals = self.inference.marginals(Scores(E[positions], lengths, trans, start, end), summed_edges=True)
            log_z += marginals.log_partition.sum()
            nodes[positions] = marginals.nodes
            if marginals.edges is not None:
                expected_transitions += marginals.edges
        rows = np.arange(len(self.y))
        gold_score = E[rows, self.y].sum()
        gradient = np.empty(joint.size)
        if joint.transitions:
            gold_score += w[joint.transition_offset :] @ self.gold_tail
            expected = np.concatenate([expected_transitions.ravel(), nodes[self.first].sum(axis=0),
                                       nodes[self.last].sum(axis=0)])
            gradient[joint.transition_offset :] = expected - self.gold_tail
        nodes[rows, self.y] -= 1.0  # nodes − onehot(gold): expected minus gold emission counts, per position
        joint.emission_weights(gradient)[:] = self.X.T @ nodes
        gradient += self.l2 * w
        return float(log_z - gold_score + 0.5 * self.l2 * (w @ w)), gradient

    def at(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f, gradient)`` at ``w``: the last evaluation's when it was at ``w``."""
        if self._last is not None and np.array_equal(self._last[0], w):
            return self._last[1], self._last[2]
        return self(w)


class _Stopped(Exception):
    """Raised by the iteration callback to end L-BFGS early; carries the current weights."""

    def __init__(self, w: np.ndarray, reason: str):
        super().__init__(reason)
        self.w, self.reason = w, reason


class MaxEnt:
    """Multinomial logistic regression / linear-chain CRF trained by L-BFGS with an L2 prior.

    ``epochs`` is the maximum number of L-BFGS iterations (each evaluates the objective and gradient
    over the whole corpus once or, in a line search, a few times).  The run also stops when the
    objective's relative decrease ``(f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)`` is at most ``tol``,
    when the largest gradient component is at most ``gtol`` (scipy's ``ftol`` and ``gtol``), and, with
    a dev set and ``patience``, after ``patience`` dev evaluations without improvement.  ``l2`` is
    ``1/σ²`` on the *summed* log-likelihood; ``memory`` is the number of L-BFGS correction pairs.

    With a dev set the weights are evaluated every ``eval_every`` iterations and at the last one (a
    dev decoding costs less than one objective evaluation on the training set, so the default is
    every iteration) and the best are kept; ``best_epoch_`` is that iteration.  Without dev the last
    iterate is kept.  ``seed`` and ``batch_size`` are accepted for the models' common interface and
    stored, but the batch solver is deterministic and uses the whole corpus at every step.

    After :meth:`fit`: ``weights_``, ``history_`` (per iteration: ``iteration``, ``objective``,
    ``gradient_norm`` (Euclidean), ``evaluations`` (objective evaluations of that iteration),
    ``dev_accuracy`` (None when not evaluated), ``seconds`` (the iteration and its dev evaluation)),
    ``best_epoch_`` and ``stopped_`` (why the run ended).  ``callback(record, learner)`` is called after
    every iteration; a true return stops the run.
    """

    name = "maxent"
    online = False
    probabilistic = True  # p(y|x) from the decoder's marginals

    def __init__(self, epochs: int = 100, *, l2: float = 1.0, tol: float = 1e-6, gtol: float = 1e-5, memory: int = 10,
                 eval_every: int = 1, seed: int = 0, batch_size: int = 1, patience: int | None = None,
                 callback: Callable | None = None, progress: bool | None = None):
        for label, value, least in (("epochs", epochs, 1), ("memory", memory, 1), ("eval_every", eval_every, 1),
                                    ("batch_size", batch_size, 1)):
            if value < least:
                raise ValueError(f"{label} must be at least {least}, got {value}")
        for label, value in (("l2", l2), ("tol", tol), ("gtol", gtol)):
            if not value >= 0:
                raise ValueError(f"{label} must be non-negative, got {value}")
        self.epochs, self.l2, self.tol, self.gtol, self.memory = epochs, l2, tol, gtol, memory
        self.eval_every, self.seed, self.batch_size, self.patience = eval_every, seed, batch_size, patience
        self.callback, self.progress = callback, progress

    def params(self) -> dict:
        """The hyper-parameters, as stored in a model file."""
        return {"epochs": self.epochs, "l2": self.l2, "tol": self.tol, "gtol": self.gtol, "memory": self.memory,
                "eval_every": self.eval_every, "seed": self.seed, "batch_size": self.batch_size,
                "patience": self.patience}

    def objective(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray) -> MaxEntObjective:
        """The objective this learner minimises on a corpus (with its ``l2``)."""
        return MaxEntObjective(joint, decoder, X, y, l2=self.l2)

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None) -> MaxEnt:
        """Train from ``w = 0`` on the indexed corpus ``X`` with gold label ids ``y`` (one per position);
        ``dev = (X_dev, y_dev)`` selects the iteration kept (gold ids of −1 count as errors).

        A NaN or infinite feature value raises :class:`StructlinError` before training, naming the instance.
        """
        require_finite(X, "training")
        if dev is not None:
            require_finite(dev[0], "dev")
        clock, evaluations = time.perf_counter(), 0  # the first iteration's seconds include the set-up
        objective = self.objective(joint, decoder, X, y)
        self.history_, self.best_epoch_ = [], None
        best_score, best_weights, waited = -1.0, None, 0

        def evaluate(record: dict, w: np.ndarray) -> None:
            nonlocal best_score, best_weights, waited
            record["dev_accuracy"] = dev_accuracy(decoder, joint, w, dev)
            if record["dev_accuracy"] > best_score:
                best_score, best_weights, self.best_epoch_, waited = record["dev_accuracy"], w.copy(), record["iteration"], 0
            else:
                waited += 1

        def after_iteration(w: np.ndarray) -> None:
            nonlocal clock, evaluations
            value, gradient = objective.at(w)
            record = {"iteration": len(self.history_) + 1, "objective": value,
                      "gradient_norm": float(np.linalg.norm(gradient)), "evaluations": objective.evaluations - evaluations,
                      "dev_accuracy": None, "seconds": 0.0}
            evaluations = objective.evaluations
            if dev is not None and record["iteration"] % self.eval_every == 0:
                evaluate(record, w)
            now = time.perf_counter()
            record["seconds"], clock = now - clock, now
            self.history_.append(record)
            bar.update()
            bar.set_postfix(objective=f"{value:.6g}", dev=record["dev_accuracy"])
            if self.callback is not None and self.callback(record, self):
                raise _Stopped(w, "stopped by the callback")
            if self.patience is not None and waited >= self.patience:
                raise _Stopped(w, f"no dev improvement in {self.patience} evaluations")

        with tqdm(total=self.epochs, disable=quiet(self.progress), unit="it", leave=False) as bar:
            try:
                result = scipy.optimize.minimize(objective, np.zeros(joint.size), jac=True, method="L-BFGS-B",
                                                 callback=after_iteration,
                                                 options={"maxiter": self.epochs, "ftol": self.tol, "gtol": self.gtol,
                                                          "maxcor": self.memory})
                w, self.stopped_ = result.x, result.message
            except _Stopped as stop:
                w, self.stopped_ = stop.w, stop.reason
        if dev is not None and self.history_ and self.history_[-1]["dev_accuracy"] is None:
            evaluate(self.history_[-1], w)  # the last iterate is always compared
        if best_weights is None:  # no dev set, or no iteration at all
            best_weights, self.best_epoch_ = w, len(self.history_)
        self.weights_ = best_weights
        return self
