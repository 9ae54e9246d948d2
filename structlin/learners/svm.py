"""Multiclass and structured hinge-loss SVMs on any decoder: Pegasos, or block-coordinate Frank–Wolfe.

The learner minimises the regularised structured hinge loss over the ``n`` training instances,

    P(w) = (λ/2)‖w‖² + (1/n) Σ_t H_t(w),     H_t(w) = max_y [Δ(y_t, y) + w·φ(x_t, y)] − w·φ(x_t, y_t)

(Crammer & Singer 2001 with the :class:`~structlin.decoders.Multiclass` decoder; the structured SVM /
M³N margin of Tsochantaridis et al. 2005 and Taskar et al. 2003 with a chain).  The task loss is
``Δ(y_t, y) = cost · (positions where y is wrong)`` (Hamming; 0/1 times ``cost`` for a document), or
``Σ_p M[y_t,p, y_p]`` with a cost matrix ``M`` (Multiclass decoder only).  The max is the
loss-augmented argmax ``ŷ_t`` (Viterbi's for every chain decoder, so that it is exact), and with
``ψ_t(y) = φ(x_t, y_t) − φ(x_t, y)`` a subgradient of ``P`` at ``w`` is ``λw − (1/n) Σ_{t: H_t>0} ψ_t(ŷ_t)``.

``C`` is LIBLINEAR's: ``λ = 1/(C·n)``, because its Crammer–Singer primal ``(1/2)‖w‖² + C Σ_t H_t(w)``
is ``n·C·P(w)`` (the same minimiser).

Pegasos (Shalev-Shwartz, Singer, Srebro & Cotter 2011), step ``k = 1, 2, ...`` on a mini-batch ``B``::

    η_k = 1/(λk),    w ← (1 − η_k λ)·w + (η_k/|B|) Σ_{t∈B, H_t(w)>0} ψ_t(ŷ_t),    then  w ← min(1, (1/√λ)/‖w‖)·w

the last (the projection onto the ball that holds the optimum) only with ``projection=True``.

Block-coordinate Frank–Wolfe on the dual (Lacoste-Julien, Jaggi, Schmidt & Pletscher 2013, Algorithm 3)
keeps for every instance (block) ``i`` a vector ``w_i`` and a loss ``ℓ_i``, with ``w = Σ_i w_i`` and
``ℓ = Σ_i ℓ_i``; a step on block ``i``::

    ŷ = the loss-augmented argmax at w,    w_s = ψ_i(ŷ)/(λn),    ℓ_s = Δ(y_i, ŷ)/n
    g_i = λ(w_i − w_s)·w − ℓ_i + ℓ_s                                  (the block's duality gap)
    γ = clip(g_i / (λ‖w_i − w_s‖²), 0, 1)                             (exact line search)
    w_i ← (1 − γ)·w_i + γ·w_s,    ℓ_i ← (1 − γ)·ℓ_i + γ·ℓ_s,    w and ℓ changed by as much

The dual objective is ``D(α) = −(λ/2)‖w‖² + ℓ`` and the duality gap

    P(w) − D(α) = λ‖w‖² − ℓ + (1/n) Σ_t H_t(w) = Σ_i g_i  (all g_i taken at the same w)  ≥ 0

is computed exactly after every pass (one loss-augmented decoding of the corpus); the sum of the
``g_i`` met during the pass, each at the ``w`` of its step, is its cheap surrogate.

On a Dask cluster (the ``client`` option) Pegasos's epochs are iteratively mixed, as the perceptron's
(McDonald, Hall & Mann 2010): each shard ``s`` of :mod:`structlin.distributed` runs one epoch of Pegasos steps
over its ``n_s`` instances from the mixed weights ``w`` and the step count ``k`` so far (``λ`` that of the whole
corpus), and ``w`` becomes the mixture ``Σ_s μ_s w_s``, ``μ_s = n_s / n``; ``k`` advances by every shard's
steps, as a serial epoch's.  The average returned is that of the rounds' mixed averages from the second on.
``P(w)`` is summed over the shards.

BCFW on a cluster adds the shards' passes over their own blocks (CoCoA+, Ma et al. 2015, with ``σ' = S`` for
``S`` shards).  Each pass every shard ``s`` runs BCFW steps over its blocks on its local subproblem: the
loss-augmented argmax and the block gap at its view ``u = w + σ'·Δw_s`` (``Δw_s`` the change of its blocks so
far in the pass), the line search with the curvature ``σ'·λ‖w_i − w_s‖²``.  The pass then adds every shard's
changes: ``w ← w + Σ_s Δw_s``, ``ℓ ← ℓ + Σ_s Δℓ_s``.  With ``σ' = S`` the dual after the sum is at least the sum
of the shards' subproblems, each no lower than at its start, so ``D`` never falls; ``w = Σ_i w_i`` holds
throughout, so the duality gap is exact as in a serial run (which is the case ``S = 1``).  A shard's blocks stay
on its worker, and are written after every pass to the run's folder, from which a task run again (its worker
lost) reads the state it started from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse

from ..decoders import Cost, Decoder, length_batches
from ..distributed import Shard, ShardedRun
from ..errors import CorpusFormatError, OptionValueError
from ..featurecache import ShardedCorpus
from ..joint import JointFeatureMap, Scores
from ..matrix import FeatureMatrix
from ..outputs import atomic_output
from .epochs import minibatches
from .protocol import (BATCH_SIZE, CALLBACK, CLIENT, COST, EVAL_EVERY, FLOAT_MAX, PATIENCE, PROGRESS, SEED,
                       Capabilities, HistoryField, Learner, Option, with_defaults)
from .run_weights import weighted_sum
from .sgd import SGDWeights
from .training import TrainingRun, require_finite
from .vectors import dot, norm

#: The values relative_C=None chooses from on dev, and its value without dev (or with --no-tune); the patience
#: (BCFW's passes stop after 3 dev evaluations without a better one); all by scripts/choose_defaults.py
#: (docs/benchmarks.md, "Defaults").
RELATIVE_CS = (1.0, 3.0)
#: Stronger regularisation tried on dev in turn, after RELATIVE_CS, while the strongest value tried is strictly the
#: best: the grid widens at its regularised edge only where dev says the data want it (text whose documents share
#: little: Brown's sentences by genre; docs/benchmarks.md, "The SVM's grid widens").  The weak edge needs no more:
#: early stopping on dev regularises a run that a weaker prior would leave too loose.
FURTHER_CS = (0.3, 0.1)
RELATIVE_C_DEFAULT = 3.0
SVM_PATIENCE = 3


def _length_batched(X: FeatureMatrix, y: np.ndarray) -> list[tuple[FeatureMatrix, np.ndarray]]:
    """``X`` and its gold ids ``y`` in batches of instances of similar length (:func:`length_batches`)."""
    return [(X.take(chosen), y[X.positions(chosen)]) for chosen in length_batches(X.lengths)]


class StructuredHinge:
    """``P(w)`` of the module docstring on one indexed corpus ``X`` with gold label ids ``y``, and what
    both solvers share: ``lam`` (λ), the loss-augmented oracle and the task loss Δ.  Calling it with
    ``w`` returns ``(P(w), a subgradient of P at w, train errors)``, the errors being the positions
    the model's ``decoder`` labels wrong (documents, for a classifier).  ``instances``: the ``n`` of λ and of
    ``P``'s mean (default: ``X``'s instances; a shard's objective takes the whole corpus's, so that the shards'
    terms add up to ``P``)."""

    def __init__(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *, C: float,
                 cost: float = 1.0, cost_matrix: np.ndarray | None = None, instances: int | None = None):
        self.joint, self.decoder, self.X = joint, decoder, X
        self.y = None if y is None else np.asarray(y, dtype=np.int64)
        self.C = C
        self.cost = Cost(cost, cost_matrix)
        # Greedy's loss-augmented decoding is no max: train on the exact chain argmax its scores define.
        self.inference = decoder.exact
        self.n = X.n_instances
        self.instances = max(self.n if instances is None else instances, 1)
        self.lam = 1.0 / (C * self.instances)
        # Taken once: every evaluation of P scores the whole corpus in these batches of similar length (a corpus
        # on disk is read again, shard by shard).
        self._batches = None if isinstance(X, ShardedCorpus) else _length_batched(X, self.y)

    def batches(self):
        """The corpus in batches of instances of similar length, with their gold ids."""
        if self._batches is not None:
            return self._batches
        return (batch for part, gold in self.X.parts() for batch in _length_batched(part, gold))

    def oracle(self, scores: Scores, gold: np.ndarray) -> np.ndarray:
        """``ŷ = argmax_y Δ(gold, y) + w·φ(x, y)`` for every instance of a batch."""
        return self.inference.loss_augmented_argmax(scores, gold, self.cost)

    def task_loss(self, gold: np.ndarray, predicted: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``Δ(y, ŷ)`` of every instance of a batch of ``lengths``."""
        return self.cost.per_instance(gold, predicted, lengths)

    def hinge(self, gold: np.ndarray, predicted: np.ndarray, lengths: np.ndarray, owner: np.ndarray,
              margins: np.ndarray) -> np.ndarray:
        """``H_t = Δ(y_t, ŷ_t) − w·ψ_t(ŷ_t)`` per instance of a batch, from the entries of ``ψ(ŷ)``
        (:meth:`JointFeatureMap.feature_difference`) as their ``owner`` instances and ``margins``, value times weight."""
        losses = self.task_loss(gold, predicted, lengths) - np.bincount(owner, margins, minlength=len(lengths))
        return np.maximum(losses, 0.0)  # ŷ maximises, so H_t ≥ 0 but for rounding

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray, int]:
        joint, n = self.joint, self.instances
        subgradient = np.multiply(w, self.lam)
        total, errors = 0.0, 0
        for batch, gold in self.batches():
            scores = joint.scores(w, batch)
            errors += int(np.count_nonzero(self.decoder.argmax(scores) != gold))
            predicted = self.oracle(scores, gold)
            if joint.transitions:
                indices, values, owner = joint.feature_difference(batch, gold, predicted)
                hinge = self.hinge(gold, predicted, batch.lengths, owner, values * w[indices])
                active = hinge[owner] > 0
                np.add.at(subgradient, indices[active], values[active] / -n)
            else:
                hinge = self._independent_positions(batch, gold, predicted, scores.emissions, subgradient)
            total += hinge.sum()
        return 0.5 * self.lam * float(w @ w) + float(total) / n, subgradient, errors

    def _independent_positions(self, batch: FeatureMatrix, gold: np.ndarray, predicted: np.ndarray,
                               emissions: np.ndarray, subgradient: np.ndarray) -> np.ndarray:
        """The hinge of every instance of a batch without transitions, from its positions' scores
        (``w·ψ = Σ_p E[p, y_p] − E[p, ŷ_p]``), with ``−(1/n) Σ ψ`` of the active instances added to ``subgradient``
        as ``Xᵀ C`` for ``C[p] = e_{y_p} − e_{ŷ_p}`` (one sparse product, ``Cᵀ X``, instead of ψ's entries one by one)."""
        positions = np.arange(len(gold))
        owner = np.repeat(np.arange(batch.n_instances), batch.lengths)
        margins = emissions[positions, gold] - emissions[positions, predicted]
        hinge = self.hinge(gold, predicted, batch.lengths, owner, margins)
        wrong = np.flatnonzero((hinge[owner] > 0) & (gold != predicted))
        L = self.joint.n_labels
        C = scipy.sparse.csr_matrix((np.repeat([1.0, -1.0], len(wrong)), (np.tile(wrong, 2),
                                                                        np.concatenate([gold[wrong], predicted[wrong]]))),
                                    shape=(len(gold), L))
        change = C.T.tocsr() @ batch.csr(self.joint.n_rows)  # labels × rows, (Xᵀ C)ᵀ: a row's columns distinct
        label = np.repeat(np.arange(L), np.diff(change.indptr))
        self.joint.emission_weights(subgradient)[change.indices, label] -= change.data / self.instances
        return hinge


class SVM(Learner):
    """Multiclass (Crammer–Singer) / structured hinge-loss SVM, trained by Pegasos or by BCFW.

    The objective, with ``λ = 1/(C·n)`` for ``n`` training instances, is ``P(w)`` of the module
    docstring; LIBLINEAR's ``-s 4`` with the same ``C`` (its primal is ``n·C·P(w)``) has the same
    minimiser.  ``cost`` is Δ's cost per wrong position (per wrong document for a classifier);
    ``cost_matrix``, an ``L × L`` array over the joint map's labels (a classifier's ``classes_``) with
    a zero diagonal, makes ``Δ(y, ŷ) = Σ_p cost_matrix[y_p, ŷ_p]`` instead (Multiclass decoder only);
    it may also be given by label name, ``{true: {predicted: cost}}`` over every pair of training
    labels (:func:`read_cost_matrix` reads one from a file), and is then checked against the labels
    when training starts.

    ``solver="pegasos"`` (``epochs`` defaults to 10): stochastic subgradient steps over
    seeded mini-batches of ``batch_size`` instances of similar length, each costing O(features of the
    batch) (:class:`~.sgd.SGDWeights`: lazy shrinkage, the exact average).  ``projection`` keeps ``w``
    in the ball of radius ``1/√λ``: ``‖w‖²`` is tracked through every step from the rows it touches,
    so the projection costs O(rows touched), folded into the step's shrinkage.  ``averaging`` returns
    the average of the iterates from the second epoch on.

    ``solver="bcfw"`` (the default; ``epochs``, default 50, bounds the passes): block-coordinate Frank–Wolfe in a
    seeded random order of the instances per pass; it stops early when the exact duality gap is at
    most ``tol`` (on the scale of ``P``, a mean over instances).  Every block ``w_i`` is stored on the
    emission rows of its instance's features (all labels) and the transition block, so its memory is
    (distinct features per instance summed over the corpus) × labels, plus the transition block per
    instance for a chain.  ``batch_size``, ``projection`` and ``averaging`` do not concern it.

    With a dev set the weights are evaluated every ``eval_every`` epochs and at the last one, the best
    are kept (``best_epoch_``), and ``patience`` epochs without improvement stop the run.
    ``callback(record, learner)`` is called after every epoch; a true return stops the run.

    After :meth:`fit`: ``weights_``, ``stopped_`` (why the run ended), ``best_epoch_`` and
    ``history_``, one record per epoch (pass) with ``epoch``, ``objective`` and ``primal_objective``
    (both ``P(w)`` of the weights the epoch returns: the average for averaged Pegasos), ``gradient_norm``
    (of the subgradient ``λw − (1/n) Σ ψ_t(ŷ_t)`` over the instances with ``H_t > 0``),
    ``dual_objective``, ``duality_gap`` (exact) and ``block_gap_sum`` (the pass's surrogate) for BCFW
    (None for Pegasos), ``train_errors`` (training positions the model's decoder labels wrong: tokens
    for a tagger, documents for a classifier), ``dev_accuracy`` and ``seconds``.
    """

    name = "svm"
    summary = "hinge loss: Crammer–Singer / structured SVM by Pegasos or BCFW, with the duality gap"
    capabilities = Capabilities(streams=True, distributed=True)  # with the pegasos solver
    dense_vectors = 3  # the weights, the copy of a snapshot, the best kept (BCFW choosing C: 6 measured)
    solvers = ("pegasos", "bcfw")
    options = (Option("epochs", int, None, "passes over the data (default: 10 for pegasos, at most 50 for bcfw)",
                      minimum=1, nullable=True),
               Option("solver", str, "bcfw", "stochastic subgradient steps (pegasos) or block-coordinate "
                      "Frank–Wolfe with the duality gap (bcfw)", choices=solvers),
               Option("C", float, None, "LIBLINEAR's C, i.e. λ = 1/(C·n) for n training instances (default: "
                      "relative_C / the mean ‖x‖² of a training position)", minimum=0, exclusive_minimum=True,
                      nullable=True),
               Option("relative_C", float, None, "C times the mean squared norm ‖x‖² of a training position's "
                      "features, when C is not given: the same regularisation for any scale of the features "
                      f"(default: chosen on dev among {', '.join(map(str, RELATIVE_CS))}, one run each, then "
                      f"{', '.join(map(str, FURTHER_CS))} in turn while the smallest tried is the best; without dev, "
                      f"{RELATIVE_C_DEFAULT})", minimum=0, exclusive_minimum=True, nullable=True,
                      untuned=RELATIVE_C_DEFAULT),
               COST,
               Option("cost_matrix", object, None, "a file of misclassification costs: a header line of predicted "
                      "labels, then 'true-label cost cost ...' per line (tab-separated, or comma for .csv); every "
                      "pair of training labels, zero diagonal", nullable=True,
                      parse=lambda path: read_cost_matrix(path), convert=lambda value: _cost_matrix(value), metavar="FILE"),
               Option("projection", bool, True, "pegasos: project w onto the ball of radius 1/√λ", cli=False),
               Option("averaging", bool, True, "pegasos: return the average of the iterates from the second epoch on",
                      cli=False),
               Option("tol", float, 1e-3, "bcfw: stop at this duality gap P(w) − D(α), on the scale of P, a mean over "
                      "instances", minimum=0),
               EVAL_EVERY, SEED, BATCH_SIZE, PATIENCE, CALLBACK, PROGRESS, CLIENT)
    options = with_defaults(options, patience=SVM_PATIENCE)
    history_fields = (HistoryField("objective", "objective", "{:.6g}"),
                      HistoryField("gradient_norm", "gradient norm", "{:.3g}"),
                      HistoryField("duality_gap", "duality gap", "{:.3g}"))

    def _check_options(self) -> None:
        if self.C is not None and self.relative_C is not None:
            raise OptionValueError("give C or relative_C, not both (a C is used as it is)")
        if self.tol != self.option("tol").default and self.solver != "bcfw":
            raise OptionValueError(f"tol applies to the bcfw solver, not {self.solver!r}")
        if self.cost_matrix is not None and self.cost != 1.0:
            raise OptionValueError("give cost or cost_matrix, not both")

    @property
    def max_epochs(self) -> int:
        """``epochs``, or the solver's default when it is None."""
        return self.epochs if self.epochs is not None else (10 if self.solver == "pegasos" else 50)

    def params(self) -> dict:
        """The hyper-parameters, as stored in a model file (a cost matrix as nested lists or by label)."""
        params = super().params()
        if isinstance(self.cost_matrix, np.ndarray):
            params["cost_matrix"] = self.cost_matrix.tolist()
        return params

    def objective(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
                  relative_C: float | None = None) -> StructuredHinge:
        """The primal this learner minimises on a corpus (with its ``C``, else ``relative_C / ρ`` for the corpus's
        ``ρ = mean ‖x_p‖²``, recorded in ``chosen_``; ``relative_C``: the option's, else its untuned value; its
        ``cost`` and ``cost_matrix``)."""
        if isinstance(self.cost_matrix, Mapping):
            self.cost_matrix = _costs_by_label(self.cost_matrix, joint.labels)
        if self.cost_matrix is not None:
            L = joint.n_labels
            if self.cost_matrix.shape != (L, L):
                shape = "×".join(map(str, self.cost_matrix.shape))
                raise OptionValueError(f"cost_matrix must be {L}×{L} (labels × labels, in the order {joint.labels}), "
                                       f"got {shape}")
            if decoder.uses_transitions:
                raise OptionValueError(f"a cost_matrix needs the multiclass decoder, not {decoder.name!r} "
                                       "(a chain's loss-augmented argmax takes the Hamming cost only)")
        C = self.C
        if C is None:  # scaling the features by s makes the same solution need C / s²
            relative = next(value for value in (relative_C, self.relative_C, RELATIVE_C_DEFAULT) if value is not None)
            C = relative / max(X.mean_squared_norm(), np.finfo(float).tiny)
            self.chosen_ = {"C": C}
        return StructuredHinge(joint, decoder, X, y, C=C, cost=self.cost, cost_matrix=self.cost_matrix)

    def check_streams(self) -> None:
        if self.solver != "pegasos":
            raise OptionValueError(f"the {self.solver} solver keeps dual variables for every training instance in "
                                   "memory: it does not train from a corpus on disk (stream); the pegasos solver does")

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> SVM:
        """Train from ``w = 0`` on the indexed corpus ``X`` with gold label ids ``y`` (one per position);
        ``dev = (X_dev, y_dev)`` selects the epoch kept (gold ids of −1 count as errors) and, when neither ``C``
        nor ``relative_C`` is given, ``relative_C`` among :data:`RELATIVE_CS` and, while the smallest value tried is
        strictly the best, :data:`FURTHER_CS` in turn (one run from zero each)."""
        if isinstance(X, ShardedCorpus):
            self.check_streams()
        require_finite(X, "training")
        if dev is not None:
            require_finite(dev[0], "dev")
        self.require_memory(joint)
        if self.C is not None or self.relative_C is not None or dev is None:
            self._fit_once(joint, decoder, X, y, dev)
        else:
            self._keep_best_run("relative_C", self._runs(joint, decoder, X, y, dev))
        return self

    def _runs(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, dev):
        """One run from zero for each ``relative_C`` of :data:`RELATIVE_CS`, then of :data:`FURTHER_CS` in turn while
        the smallest value tried has strictly the best dev accuracy; each yielded once its run is the model."""
        scores = {}
        for relative in (*RELATIVE_CS, *FURTHER_CS):
            if len(scores) >= len(RELATIVE_CS):
                strongest = min(scores)
                if any(score >= scores[strongest] for value, score in scores.items() if value != strongest):
                    return
            self._fit_once(joint, decoder, X, y, dev, relative)
            scores[relative] = self.best_dev_accuracy()
            yield relative

    def _fit_once(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, dev,
                  relative_C: float | None = None) -> None:
        """One run from ``w = 0`` with the objective of ``relative_C`` (:meth:`objective`)."""
        objective = self.objective(joint, decoder, X, y, relative_C)
        with TrainingRun(self, joint, decoder, dev, spill=isinstance(X, ShardedCorpus)) as run:
            if self.client is not None:
                (self._pegasos_mixed if self.solver == "pegasos" else self._bcfw_mixed)(objective, run)
            elif self.solver == "pegasos":
                self._pegasos(objective, run)
            else:
                self._bcfw(objective, run)
        self.weights_ = run.finish()
        self.stopped_ = run.stopped or self.stopped_
        self.history_, self.best_epoch_ = run.history, run.best_step

    def _record(self, run: TrainingRun, objective, w: np.ndarray, **bcfw) -> dict:
        """Append the epoch's history record (``P(w)`` over the corpus, as ``objective(w)`` gives it with a
        subgradient and the train errors; the BCFW quantities or None)."""
        value, subgradient, errors = objective(w)
        extra = {"dual_objective": None, "duality_gap": None, "block_gap_sum": None}
        if bcfw:
            dual = bcfw["dual_objective"]
            extra.update(bcfw, duality_gap=value - dual)
        w = w.copy()  # BCFW goes on changing its w in place
        return run.record(lambda: w, objective=value, gradient_norm=norm(subgradient),
                          primal_objective=value, **extra, train_errors=errors)

    def _pegasos(self, objective: StructuredHinge, run: TrainingRun) -> None:
        X, y, L = objective.X, objective.y, objective.joint.n_labels
        weights = SGDWeights(objective.joint.size, L, averaged=self.averaging)
        rng = np.random.default_rng(self.seed)
        squared_norm = 0.0  # ‖w‖², kept up to date for the projection
        self.stopped_ = f"{self.max_epochs} epochs"
        bar = run.bar(self.max_epochs * X.n_instances, "inst")
        for _ in range(self.max_epochs):
            weights.start_epoch()
            for batch, gold in minibatches(X, y, self.batch_size, rng):
                squared_norm = self._pegasos_step(objective, weights, batch, gold, squared_norm)
                bar.update(batch.n_instances)
            squared_norm = weights.squared_norm()  # recomputed every epoch, against the drift of the updates
            self._record(run, objective, weights.hypothesis())

    def _pegasos_mixed(self, objective: StructuredHinge, run: TrainingRun) -> None:
        """:meth:`_pegasos` on the Dask cluster of ``client``: the shards' epochs mixed (the module docstring)."""
        X, size = objective.X, objective.joint.size
        with ShardedRun(self.client, objective.joint, objective.decoder, X, objective.y, seed=self.seed) as shards:
            shares = np.array(shards.sizes) / X.n_instances  # μ_s
            settings = (self.params(), objective.C, X.n_instances)
            w, steps, averages = np.zeros(size), 0, np.zeros(size)
            self.stopped_ = f"{self.max_epochs} epochs"
            bar = run.bar(self.max_epochs * X.n_instances, "inst")
            for epoch in range(self.max_epochs):
                results = shards.map(_shard_pegasos_epoch, w, epoch, steps, *settings)
                w = weighted_sum([(share, w_s) for share, (w_s, _, _) in zip(shares, results)])
                steps += sum(taken for _, _, taken in results)
                if self.averaging and epoch:  # the rounds' mixed averages from the second on
                    averages += weighted_sum([(share, a_s) for share, (_, a_s, _) in zip(shares, results)])
                bar.update(X.n_instances)
                hypothesis = averages / epoch if self.averaging and epoch else w
                self._record(run, lambda v: _summed_hinge(shards, v, objective.lam, _shard_hinge, *settings),
                             hypothesis)

    def _pegasos_step(self, objective: StructuredHinge, weights: SGDWeights, batch: FeatureMatrix, gold: np.ndarray,
                      squared_norm: float) -> float:
        """One Pegasos step on ``batch`` (gold ids ``gold``), in O(features of the batch); the new ``‖w‖²``
        (changed by the rows the step touches only)."""
        joint, lam, L = objective.joint, objective.lam, objective.joint.n_labels
        rows, local = np.unique(batch.indices, return_inverse=True)
        touched = np.concatenate([rows, joint.tail_rows])
        current = weights.at(touched)
        scores = joint.row_scores(batch, local.ravel(), current[: len(rows)], current[len(rows) :].ravel())
        predicted = objective.oracle(scores, gold)
        indices, values, owner = joint.feature_difference(batch, gold, predicted)
        slot = np.searchsorted(touched, indices // L) * L + indices % L  # where in current.ravel()
        hinge = objective.hinge(gold, predicted, batch.lengths, owner, values * current.ravel()[slot])
        active = hinge[owner] > 0
        k = weights.steps + 1
        shrink = 1.0 - 1.0 / k if k > 1 else 1.0  # 1 − η_k λ; at k = 1, w = 0 whatever the factor
        step = np.bincount(slot[active], values[active], minlength=current.size) / (lam * k * batch.n_instances)
        step = step.reshape(current.shape)
        if self.projection:  # w ← scale·(shrink·w + step), one step of the lazy weights
            new = shrink * current + step
            squared_norm = shrink**2 * (squared_norm - float(np.vdot(current, current))) + float(np.vdot(new, new))
            scale = min(1.0, 1.0 / math.sqrt(lam * squared_norm)) if squared_norm > 0 else 1.0
            shrink, squared_norm = shrink * scale, squared_norm * scale**2
            step *= scale
        weights.step(shrink, touched, step)
        return squared_norm

    def _bcfw(self, objective: StructuredHinge, run: TrainingRun) -> None:
        n = objective.n
        blocks, w = make_blocks(objective.joint, objective.X), np.zeros(objective.joint.size)
        block_loss, total_loss = np.zeros(n), 0.0
        rng = np.random.default_rng(self.seed)
        self.stopped_ = f"{self.max_epochs} passes"
        bar = run.bar(self.max_epochs * n, "inst")
        for _ in range(self.max_epochs):
            total_loss, gap_sum = bcfw_pass(objective, blocks, w, block_loss, total_loss, rng.permutation(n), bar)
            if self._record_pass(run, objective, objective.lam, w, total_loss, gap_sum):
                return

    def _bcfw_mixed(self, objective: StructuredHinge, run: TrainingRun) -> None:
        """:meth:`_bcfw` on the Dask cluster of ``client``: each pass, every shard's blocks on its subproblem at the
        pass's ``w``, the shards' changes added (the module docstring)."""
        n, settings = objective.n, (self.params(), objective.C, objective.n)
        with ShardedRun(self.client, objective.joint, objective.decoder, objective.X, objective.y, seed=self.seed,
                        prepare=partial(_block_shard, *settings)) as shards:
            folder, n_shards = str(shards.directory), len(shards.sizes)
            w, total_loss = np.zeros(objective.joint.size), 0.0
            self.stopped_ = f"{self.max_epochs} passes"
            bar = run.bar(self.max_epochs * n, "inst")
            for number in range(self.max_epochs):
                gap_sum = 0.0
                for delta, change, gap in shards.map(_shard_bcfw_pass, w, number, folder, self.seed, n_shards):
                    w += delta
                    total_loss += change
                    gap_sum += gap
                for path in Path(folder).glob(f"bcfw-*-{number}.*"):  # read by this pass; the next reads number + 1
                    path.unlink()
                bar.update(n)
                summed = partial(_summed_hinge, shards, lam=objective.lam, terms=_block_shard_terms)
                if self._record_pass(run, summed, objective.lam, w, total_loss, gap_sum):
                    return

    def _record_pass(self, run: TrainingRun, objective: Callable, lam: float, w: np.ndarray, total_loss: float,
                     gap_sum: float) -> bool:
        """Record a BCFW pass (``objective(w)``: ``P(w)``, a subgradient, the train errors; ``total_loss``: ``ℓ``);
        True when its duality gap stops the run."""
        record = self._record(run, objective, w, dual_objective=float(total_loss - 0.5 * lam * dot(w, w)),
                              block_gap_sum=float(gap_sum))
        if record["duality_gap"] <= self.tol:
            self.stopped_ = f"duality gap {record['duality_gap']:.3g} <= tol {self.tol:g}"
            return True
        return False


def bcfw_pass(objective: StructuredHinge, blocks: BlockWeights | LabelBlocks, w: np.ndarray, block_loss: np.ndarray,
              total_loss: float, order: np.ndarray, bar=None, sigma: float = 1.0) -> tuple[float, float]:
    """One BCFW pass over the blocks of ``objective``'s instances in ``order`` (the module docstring's steps, with
    the ``n`` of its λ and its means), changing ``w``, ``blocks`` and ``block_loss`` in place; returns ``ℓ``
    (``total_loss`` changed by as much as the blocks' losses) and the sum of the block gaps ``g_i`` met.  With
    ``sigma = σ'`` (a shard's pass on a cluster) ``w`` is the shard's view ``w + σ'·Δw``: the line search takes
    the curvature ``σ'·λ‖w_i − w_s‖²`` and ``w`` moves ``σ'`` times as far as the block."""
    emission, gap_sum = objective.joint.emission_weights(w), 0.0
    for done, i in enumerate(order, 1):
        gap, gamma, loss_s = blocks.step(objective, i, w, emission, block_loss[i], sigma)
        change = gamma * (loss_s - block_loss[i])
        block_loss[i] += change
        total_loss += change
        gap_sum += gap
        if bar is not None and done % 64 == 0:
            bar.update(64)
    if bar is not None:
        bar.update(len(order) % 64)
    return total_loss, gap_sum


def _line_search(gap: float, curvature: float) -> float:
    """BCFW's exact step ``γ = clip(g_i / curvature, 0, 1)`` (0 on a flat direction)."""
    return min(max(gap / curvature, 0.0), 1.0) if curvature > 0 else 0.0


def _shard_objective(shard: Shard, learner: SVM, C: float, n: int) -> StructuredHinge:
    """``P``'s terms with ``learner``'s costs over a shard of a corpus of ``n`` instances (λ = 1/(C·n), the mean over
    ``n``)."""
    cost_matrix = learner.cost_matrix if isinstance(learner.cost_matrix, np.ndarray) else None
    return StructuredHinge(shard.joint, shard.decoder, shard.X, shard.y, C=C, cost=learner.cost,
                           cost_matrix=cost_matrix, instances=n)


def _shard_pegasos_epoch(shard: Shard, w: np.ndarray, epoch: int, steps: int, params: dict, C: float, n: int):
    """On a worker: one epoch of Pegasos steps over ``shard`` from the weights ``w`` after ``steps`` steps (in the
    order of ``default_rng([seed, epoch, shard])``); ``(w_s, the mean of its iterates, its number of steps)``."""
    learner = SVM(**params)
    objective = _shard_objective(shard, learner, C, n)
    weights = SGDWeights(len(w), shard.joint.n_labels, averaged=True, initial=w, steps=steps)
    squared_norm = weights.squared_norm()
    for batch, gold in minibatches(shard.X, shard.y, learner.batch_size, np.random.default_rng([learner.seed, epoch,
                                                                                                shard.index])):
        squared_norm = learner._pegasos_step(objective, weights, batch, gold, squared_norm)
    return weights.current(), weights.average(), weights.steps - steps


def _summed_hinge(shards: ShardedRun, w: np.ndarray, lam: float, terms: Callable,
                  *args) -> tuple[float, np.ndarray, int]:
    """``P(w)``, its subgradient and the train errors, summed over the shards' ``terms(shard, w, *args)`` (the
    prior, of ``lam``, added once)."""
    value, subgradient, errors = 0.0, None, 0
    for value_s, subgradient_s, errors_s in shards.map(terms, w, *args):
        value, errors = value + value_s, errors + errors_s
        subgradient = subgradient_s if subgradient is None else subgradient + subgradient_s
    return value + 0.5 * lam * dot(w, w), subgradient + lam * w, errors


def _shard_hinge(shard: Shard, w: np.ndarray, params: dict, C: float, n: int) -> tuple[float, np.ndarray, int]:
    """On a worker: the shard's data terms of ``P(w)`` and of its subgradient, and its train errors."""
    return _data_terms(_shard_objective(shard, SVM(**params), C, n), w)


def _data_terms(objective: StructuredHinge, w: np.ndarray) -> tuple[float, np.ndarray, int]:
    """``objective``'s terms of ``P(w)`` and of its subgradient without the prior, and its train errors."""
    value, subgradient, errors = objective(w)
    subgradient -= objective.lam * w
    return value - 0.5 * objective.lam * dot(w, w), subgradient, errors


@dataclass
class _BlockShard(Shard):
    """A shard as a worker keeps it for BCFW: its objective (λ and the means of the whole corpus), its blocks and
    their losses, and the pass they are the starting state of (None when they are not: before the first pass,
    during a pass, or on a worker that did not make them; the state is then read from the run's folder)."""

    objective: StructuredHinge | None = None
    blocks: BlockWeights | LabelBlocks | None = None
    losses: np.ndarray | None = None
    number: int | None = None


def _block_shard(params: dict, C: float, n: int, shard: Shard) -> _BlockShard:
    """On a worker (a :class:`~structlin.distributed.ShardedRun`'s ``prepare``): the shard with its objective and
    its blocks' layout."""
    given = {field.name: getattr(shard, field.name) for field in fields(shard)}
    return _BlockShard(**given, objective=_shard_objective(shard, SVM(**params), C, n),
                       blocks=make_blocks(shard.joint, shard.X))


def _block_shard_terms(shard: _BlockShard, w: np.ndarray) -> tuple[float, np.ndarray, int]:
    """On a worker: :func:`_data_terms` of the shard's objective."""
    return _data_terms(shard.objective, w)


def _dual_state_paths(folder: str, index: int, number: int) -> tuple[Path, Path]:
    """The files of shard ``index``'s blocks and block losses before pass ``number`` of a mixed BCFW run."""
    stem = Path(folder) / f"bcfw-{index}-{number}"
    return stem.with_suffix(".blocks.npz"), stem.with_suffix(".losses.npy")


def _shard_bcfw_pass(shard: _BlockShard, w: np.ndarray, number: int, folder: str, seed: int, n_shards: int):
    """On a worker: pass ``number`` of BCFW over the shard's blocks with ``σ' = n_shards`` (the module docstring),
    from the pass's ``w`` and the shard's dual state as the pass before left it (in this worker's memory, else read
    from ``folder``; zero before the first), in the order of ``default_rng([seed, number, index])``.  The new state
    is kept, and written to ``folder`` for a task run again on another worker.  Returns the shard's changes of
    ``w`` and of ``ℓ``, and the sum of the block gaps met."""
    objective, blocks = shard.objective, shard.blocks
    if shard.number != number:  # not the state this worker left: zero, or the last pass's files
        if number:
            blocks_path, losses_path = _dual_state_paths(folder, shard.index, number)
            with np.load(blocks_path) as state:
                blocks.restore(state)
            shard.losses = np.load(losses_path)
        else:
            blocks.clear()
            shard.losses = np.zeros(objective.n)
    shard.number, block_loss = None, shard.losses  # changed in place from here on
    before = float(block_loss.sum())
    view = np.array(w)
    after, gap_sum = bcfw_pass(objective, blocks, view, block_loss, before,
                               np.random.default_rng([seed, number, shard.index]).permutation(objective.n),
                               sigma=n_shards)
    blocks_path, losses_path = _dual_state_paths(folder, shard.index, number + 1)
    with atomic_output(blocks_path, "wb") as file:
        np.savez(file, **blocks.state())
    with atomic_output(losses_path, "wb") as file:
        np.save(file, block_loss)
    shard.number = number + 1
    view -= w
    view /= n_shards
    return view, after - before, gap_sum


def make_blocks(joint: JointFeatureMap, X: FeatureMatrix) -> BlockWeights | LabelBlocks:
    """The BCFW blocks of ``X``'s instances: :class:`LabelBlocks` when every instance is one position scored on its
    own (a document, no transitions or tag dictionary), else :class:`BlockWeights`."""
    if not joint.transitions and joint.candidates is None and bool(np.all(X.lengths == 1)):
        return LabelBlocks(joint, X)
    return BlockWeights(joint, X)


class BlockWeights:
    """The BCFW blocks ``w_i``, each kept on the entries its corners have touched: a corner ``w_s`` is
    ``(φ(x_i, y_i) − φ(x_i, ŷ))/(λn)``, non-zero at the (feature row, label) pairs of the gold and the predicted
    outputs and at their transitions only, so a block is a convex combination of few such and its memory grows with
    the outputs the oracle gave, not with the instance's rows × every label (193 Brown tags: 4 GB for 3,000
    sentences held the blocks on every label).  Block ``i`` is its increasing flat weight indices ``keys[i]`` with
    their ``values[i]``; an entry no corner touched is 0 in the block and in the step."""

    def __init__(self, joint: JointFeatureMap, X: FeatureMatrix):
        self.n_instances = X.n_instances
        self.clear()

    def clear(self) -> None:
        """Every block 0 (BCFW's start)."""
        self.keys = [np.zeros(0, np.int64)] * self.n_instances
        self.values = [np.zeros(0)] * self.n_instances

    def state(self) -> dict[str, np.ndarray]:
        """The blocks as arrays (a file's): each block's entry count, then every block's keys and values in turn."""
        return {"counts": np.array([len(k) for k in self.keys], np.int64),
                "keys": np.concatenate([np.zeros(0, np.int64), *self.keys]),
                "values": np.concatenate([np.zeros(0), *self.values])}

    def restore(self, state) -> None:
        """The blocks of :meth:`state`'s arrays."""
        ends = np.cumsum(state["counts"])[:-1]
        self.keys, self.values = np.split(state["keys"], ends), np.split(state["values"], ends)

    def step(self, objective: StructuredHinge, i: int, w: np.ndarray, emission: np.ndarray, loss_i: float,
             sigma: float) -> tuple[float, float, float]:
        """A BCFW step on block ``i`` (of loss ``loss_i``) at ``w`` (``emission``: its emission block), moving ``w``
        and the block by the line search's ``γ``; returns the block gap ``g_i``, ``γ`` and ``ℓ_s``.  The step runs on
        the union of the block's entries and the corner's: ``w_i − w_s`` is 0 elsewhere."""
        joint, X, y, lam, n = objective.joint, objective.X, objective.y, objective.lam, objective.instances
        offsets = X.offsets
        batch, gold = X.slice(i, i + 1), y[offsets[i] : offsets[i + 1]]
        scores = joint.row_scores(batch, batch.indices, emission, w[joint.transition_offset :])
        predicted = objective.oracle(scores, gold)
        indices, values, _ = joint.feature_difference(batch, gold, predicted)
        corner, at = np.unique(indices, return_inverse=True)
        support = np.union1d(self.keys[i], corner)
        w_i = np.zeros(len(support))
        w_i[np.searchsorted(support, self.keys[i])] = self.values[i]
        direction = w_i.copy()  # w_i − w_s
        direction[np.searchsorted(support, corner)] -= np.bincount(at.ravel(), values, len(corner)) / (lam * n)
        loss_s = objective.task_loss(gold, predicted, batch.lengths)[0] / n
        gap = lam * float(direction @ w[support]) - loss_i + loss_s
        gamma = _line_search(gap, lam * sigma * float(direction @ direction))
        if gamma:
            direction *= gamma
            w[support] -= sigma * direction  # σ' = 1: exactly the serial step
            w_i -= direction
            self.keys[i], self.values[i] = support, w_i
        return gap, gamma, loss_s


class LabelBlocks:
    """The BCFW blocks of instances of one position each, scored on their own (Crammer–Singer's documents): every
    corner ``w_s = x_i ⊗ (e_y − e_ŷ)/(λn)`` of block ``i`` is the document's features times a vector over the labels,
    so the block is ``w_i = x_i ⊗ β_i`` and only ``β_i`` is kept (the dual of Crammer & Singer 2001, in ``w``'s scale):
    ``L`` numbers an instance instead of its rows × ``L``.  A step then needs neither the block's support nor ``ψ``:
    ``(w_i − w_s)·w = (β_i − s)·u`` with ``u = Wᵀx_i`` (the scores) and ``‖w_i − w_s‖² = ‖x_i‖²‖β_i − s‖²``.  The same
    steps as :class:`BlockWeights`', to rounding; ``values`` holds the ``β_i`` one after another."""

    def __init__(self, joint: JointFeatureMap, X: FeatureMatrix):
        self.n_labels = joint.n_labels
        instance_of_entry = X.entry_positions()  # an instance is one position
        stride = max(joint.n_rows, 1)
        keys, entry_key = np.unique(instance_of_entry * stride + X.indices, return_inverse=True)
        self.rows = keys % stride  # each instance's distinct rows, and their summed values (hashes may collide)
        self.x = np.bincount(entry_key.ravel(), X.values.astype(np.float64), minlength=len(keys))
        counts = np.bincount(keys // stride, minlength=X.n_instances)
        self.row_offsets = np.concatenate([[0], np.cumsum(counts)])
        self.squared_norms = np.bincount(keys // stride, self.x * self.x, minlength=X.n_instances)
        self.values = np.zeros(X.n_instances * self.n_labels)

    def clear(self) -> None:
        """Every block 0 (BCFW's start)."""
        self.values = np.zeros_like(self.values)

    def state(self) -> dict[str, np.ndarray]:
        """The blocks as arrays (a file's): the ``β_i``."""
        return {"values": self.values}

    def restore(self, state) -> None:
        """The blocks of :meth:`state`'s arrays."""
        self.values = state["values"]

    def step(self, objective: StructuredHinge, i: int, w: np.ndarray, emission: np.ndarray, loss_i: float,
             sigma: float) -> tuple[float, float, float]:
        """:meth:`BlockWeights.step` on ``β_i``."""
        lam, n = objective.lam, objective.instances
        a, b = self.row_offsets[i], self.row_offsets[i + 1]
        rows, x = self.rows[a:b], self.x[a:b]
        weights = emission[rows]
        scores = x @ weights
        gold = int(objective.y[i])
        predicted = int(objective.cost.augment(scores[None, :], [gold])[0].argmax())
        loss_s = float(objective.cost.per_position(gold, predicted)) / n
        direction = self.values[i * self.n_labels : (i + 1) * self.n_labels].copy()  # β_i − s
        direction[gold] -= 1.0 / (lam * n)
        direction[predicted] += 1.0 / (lam * n)  # cancels the line above when ŷ = y
        gap = lam * float(direction @ scores) - loss_i + loss_s
        gamma = _line_search(gap, lam * sigma * float(self.squared_norms[i]) * float(direction @ direction))
        if gamma:
            direction *= gamma
            emission[rows] = weights - np.outer(x, sigma * direction)
            self.values[i * self.n_labels : (i + 1) * self.n_labels] -= direction
        return gap, gamma, loss_s


def _cost_matrix(value):
    """A cost matrix by label name (``{true: {predicted: cost}}``, checked against the labels in fit), or
    an array-like of numbers made a checked array."""
    if isinstance(value, Mapping):
        return value
    try:
        return _checked_costs(np.array(value, dtype=np.float64))
    except (TypeError, ValueError) as err:
        if isinstance(err, OptionValueError):
            raise
        raise OptionValueError(f"cost_matrix must be a labels × labels array of numbers or costs by label, "
                               f"got {value!r}") from None


def _checked_costs(costs: np.ndarray) -> np.ndarray:
    """``costs`` if it is a square, finite, non-negative matrix with a zero diagonal."""
    if costs.ndim != 2 or costs.shape[0] != costs.shape[1]:
        raise OptionValueError(f"cost_matrix must be a square labels × labels array, got shape {costs.shape}")
    if not (np.isfinite(costs).all() and (0 <= costs).all() and (costs <= FLOAT_MAX).all()
            and not costs.diagonal().any()):
        raise OptionValueError(f"cost_matrix must be non-negative and at most {FLOAT_MAX:g} with a zero diagonal")
    return costs


def _costs_by_label(costs: Mapping, labels: list[str]) -> np.ndarray:
    """The matrix of ``costs[gold][predicted]`` in the order of ``labels``; every pair must be given."""
    given = set(costs) | {p for row in costs.values() for p in row}
    unknown, missing = sorted(given - set(labels)), sorted(set(labels) - set(costs))
    if unknown or missing:
        raise OptionValueError(f"{getattr(costs, 'source', 'the cost matrix')}: its labels differ from the training "
                               "labels: "
                               f"{'unknown ' + ', '.join(unknown) if unknown else ''}"
                               f"{'; ' if unknown and missing else ''}{'missing ' + ', '.join(missing) if missing else ''}")
    absent = [(g, p) for g in labels for p in labels if p not in costs[g]]
    if absent:
        raise OptionValueError(f"{getattr(costs, 'source', 'the cost matrix')} lacks {len(absent)} (true, predicted) "
                               f"pair(s), e.g. {absent[0]}")
    return _checked_costs(np.array([[float(costs[g][p]) for p in labels] for g in labels]))


def read_cost_matrix(path) -> dict[str, dict[str, float]]:
    """Read a cost matrix file: a header line of predicted labels (its first cell is ignored), then one
    line per true label, ``label cost cost ...`` (tab-separated; comma-separated for ``*.csv``); ``#``
    lines are comments.  Returns ``{true: {predicted: cost}}``; malformed lines raise
    :class:`CorpusFormatError` with the file and line."""
    path = Path(path)
    delimiter = "," if path.suffix == ".csv" else "\t"
    header, costs = None, {}
    with open(path, encoding="utf-8") as lines:
        try:
            numbered = list(enumerate(lines, 1))
        except UnicodeDecodeError as err:
            raise CorpusFormatError(path, None, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
        for number, line in numbered:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cells = [cell.strip() for cell in line.rstrip("\r\n").split(delimiter)]
            if header is None:
                header = cells[1:]
                if len(set(header)) != len(header) or not all(header):
                    raise CorpusFormatError(path, number, "the header needs distinct, non-empty predicted labels")
                continue
            if len(cells) != len(header) + 1:
                raise CorpusFormatError(path, number, f"expected a label and {len(header)} costs, got {len(cells)} fields")
            if cells[0] in costs:
                raise CorpusFormatError(path, number, f"true label {cells[0]!r} appears twice")
            try:
                row = dict(zip(header, map(float, cells[1:])))
            except ValueError:
                raise CorpusFormatError(path, number, "expected numeric costs") from None
            bad = next((p for p, cost in row.items() if not 0 <= cost <= FLOAT_MAX or (p == cells[0] and cost != 0)),
                       None)
            if bad is not None:
                expected = "0 (a label's cost against itself)" if bad == cells[0] else f"a cost from 0 to {FLOAT_MAX:g}"
                raise CorpusFormatError(path, number, f"the cost of predicting {bad!r} for {cells[0]!r} is "
                                                      f"{row[bad]:g} (expected {expected})")
            costs[cells[0]] = row
    if header is None:
        raise CorpusFormatError(path, None, "no cost matrix in the file (expected a header line of labels)")
    return CostsFromFile(costs, source=str(path))


class CostsFromFile(dict):
    """A cost matrix by label name as read from a file (``{true: {predicted: cost}}``), which knows the file: an
    error about its labels, found when the training labels are known, names it."""

    def __init__(self, costs: dict, *, source: str):
        super().__init__(costs)
        self.source = source
