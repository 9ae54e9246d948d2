"""Maximum entropy (log-linear) learning on any decoder with marginals: batch L-BFGS / OWL-QN, or SGD.

The model is ``p(y|x) = exp(w·φ(x, y)) / Z(x)`` over the decoder's outputs: softmax over labels with
the :class:`~structlin.decoders.Multiclass` decoder (multinomial logistic regression), the whole
label chain with the Viterbi and Greedy decoders (a linear-chain CRF; both train on Viterbi's
forward–backward, Greedy only decodes differently).  Training minimises

    f(w) = −Σ_t log p(y_t|x_t) + (l2/2)‖w‖² + l1·‖w‖₁,     log p(y|x) = w·φ(x, y) − log Z(x)

    ∇f(w) = −Σ_t [ φ(x_t, y_t) − E_{p(y|x_t)} φ(x_t, y) ] + l2·w      (the smooth part)

a sum (not a mean) over the training instances, so ``l2`` is the Gaussian prior's ``1/σ²`` and its
weight against the data shrinks as the corpus grows; ``l1`` (a Laplace prior; with ``l2`` too, the
elastic net) makes weights exactly zero.  The expected counts come from the decoder's
marginals: node marginals ``P(y_p = a)`` give the emission block as ``Xᵀ (nodes − onehot(gold))`` (one
sparse product over the corpus), edge marginals summed over each batch the transitions and
first/last-position marginals the start/end weights; the gold counts of the transition block are
counted once.  Marginals are computed in batches of instances of similar length, so memory beyond
the corpus's ``positions × labels`` arrays stays bounded.

The batch optimiser is :func:`~.owlqn.minimize_owlqn`: OWL-QN, which with ``l1 = 0`` is plain L-BFGS
(its workspace is ``2·memory`` pairs plus about seven vectors of the weights' length; with the default
``memory = 6``, 19 times the weight vector).  The online one is SGD on :class:`~.sgd.SGDWeights`.

On a Dask cluster (the ``client`` option, batch solver) the data term is summed over the shards of
:mod:`structlin.distributed` at every evaluation (:class:`ShardedObjective`): each worker keeps the
objective of its shard, and the optimiser runs here on the sum, the same objective up to rounding.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import nullcontext

import numpy as np
import scipy.sparse

from ..decoders import BATCH_BYTES, Decoder, batch_positions, length_batches
from ..distributed import Shard, ShardedRun
from ..errors import OptionValueError, StructlinError
from ..featurecache import ShardedCorpus
from ..joint import Chains, JointFeatureMap, Scores, SparseWeights
from ..matrix import FeatureMatrix
from .active_set import ActivePairs, PairRows, compact, seen_pairs
from .epochs import minibatches
from .owlqn import CurvaturePairs, minimize_owlqn, pseudo_gradient
from .protocol import (BATCH_SIZE, CALLBACK, CLIENT, EVAL_EVERY, PATIENCE, PROGRESS, SEED, Capabilities, HistoryField,
                       Learner, Option)
from .sgd import SGDWeights
from .training import TrainingRun, require_finite
from .vectors import dot, norm

#: The priors relative_l2=None chooses from on dev (scripts/choose_defaults.py's grid, docs/benchmarks.md
#: "Defaults"), from the strongest; without dev (or with --no-tune) the panel's single choice.
RELATIVE_L2S = (0.1, 0.01, 0.001)
RELATIVE_L2_DEFAULT = 0.001
#: L-BFGS's active set (:mod:`.active_set`): unseen pairs added, as a multiple of the seen ones.
UNSEEN_PAIRS = 0.5
#: The positions whose marginals are computed at a time, at most (fewer with many labels: decoders.batch_positions).
_BATCH_POSITIONS = 16384
#: The emission gradient's entries made at a time in a compact run, and a growth's pieces (:mod:`.active_set`): a
#: batch's bytes (decoders.BATCH_BYTES).
_ENTRIES_AT_A_TIME = BATCH_BYTES // 8


class Objective(ABC):
    """What the optimiser calls: ``(f, gradient)`` at ``w`` (of :meth:`_evaluate`, which a subclass defines),
    with ``l2`` the L2 prior's weight in it; a non-finite value raises :class:`StructlinError`.

    The most recent evaluation is kept, because the optimiser reports each new iterate right after
    evaluating it: :meth:`at` returns it without recomputing.  ``evaluations`` counts the calls.
    """

    def __init__(self, l2: float):
        self.l2, self.evaluations = l2, 0
        self._last: tuple[np.ndarray, float, np.ndarray] | None = None

    @abstractmethod
    def _evaluate(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f, gradient)`` at ``w``, without the checks of :meth:`__call__`."""

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        # Overflow shows as a non-finite value, reported as one error rather than numpy warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            value, gradient = self._evaluate(w)
        self.evaluations += 1
        if not (np.isfinite(value) and np.isfinite(gradient).all()):
            raise StructlinError(f"the max-ent objective became {value} (evaluation {self.evaluations}): the scores "
                                 f"overflowed; scale the feature values down or raise l2 (now {self.l2})")
        self._last = (w, value, gradient)
        return value, gradient

    def _prior(self, w: np.ndarray) -> float:
        """The prior's term ``(l2/2)‖w‖²``."""
        return 0.5 * self.l2 * dot(w, w)

    def outside_gradient(self, theta: np.ndarray, pairs: ActivePairs) -> Iterator[tuple[int, np.ndarray]]:
        """``∇f(w(θ))``'s emission block, flat, exact at the weights outside ``pairs`` (where ``w = 0``, so
        only the data term counts; inside, it may lack the prior), as consecutive pieces ``(first index, values)``."""
        with np.errstate(over="ignore", invalid="ignore"):
            gradient = self._evaluate(pairs.expand(theta))[1][: pairs.emission_size]
        return _pieces(gradient)

    def at(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f, gradient)`` at ``w``: the last evaluation's when it was of this very array (the
        optimiser never modifies an array it has had evaluated)."""
        if self._last is not None and self._last[0] is w:
            return self._last[1], self._last[2]
        return self(w)


class RestrictedObjective(Objective):
    """``f_A(θ) = f(w(θ))`` and ``∇f(w(θ))_A`` (:mod:`.active_set`): ``objective`` as a function of the free
    weights of ``pairs``, the others held at 0.  ``objective.restricted(θ, pairs)`` (of :class:`MaxEntObjective`
    and :class:`ShardedObjective`) evaluates it without a vector of every weight outliving the evaluation."""

    def __init__(self, objective: Objective, pairs: ActivePairs):
        super().__init__(objective.l2)
        self.objective, self.pairs = objective, pairs

    def _evaluate(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        return self.objective.restricted(theta, self.pairs)


def _pieces(gradient: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """A flat vector as consecutive views ``(first index, values)`` of :data:`_ENTRIES_AT_A_TIME` entries."""
    step = _ENTRIES_AT_A_TIME
    return ((first, gradient[first : first + step]) for first in range(0, len(gradient), step))


class ChainLikelihood:
    """``−Σ log p(y|x)`` over a batch of instances and its gradient, on ``joint``'s layout with the inference of
    ``decoder``: what the corpus objective sums and what an SGD step takes."""

    def __init__(self, joint: JointFeatureMap, decoder: Decoder):
        self.joint = joint
        # Greedy defines no distribution; it decodes the chain whose distribution Viterbi's marginals give.
        self.inference = decoder.exact

    def data_term(self, E: np.ndarray, y: np.ndarray, matrix: FeatureMatrix, batches, tail_weights: np.ndarray):
        """``−Σ log p(y|x)`` over the instances of ``matrix`` with emission scores ``E`` (positions × labels),
        marginals computed per batch of ``batches = [(positions, lengths), ...]`` (over the outputs the joint
        map allows: :meth:`~structlin.joint.JointFeatureMap.allowed`), and its gradient:
        ``nodes − onehot(y)`` with respect to ``E`` (written over ``E``) and, with transitions, expected
        minus gold counts of the tail (transition, start, end) whose weights are ``tail_weights``."""
        L = self.joint.n_labels
        trans, start, end = self.joint.tail_weights(tail_weights)
        rows = np.arange(len(y))
        gold_score = E[rows, y].sum()
        log_z, expected_transitions = 0.0, np.zeros((L, L))
        nodes = E  # each batch's marginals replace its scores, read before
        for positions, batch_lengths in batches:
            marginals = self.inference.marginals(Scores(E[positions], batch_lengths, trans, start, end,
                                                        self.joint.allowed(matrix, positions)), summed_edges=True)
            log_z += marginals.log_partition.sum()
            nodes[positions] = marginals.nodes
            if marginals.edges is not None:
                expected_transitions += marginals.edges
        tail = None
        if self.joint.transitions:
            lengths = matrix.lengths
            chain, gold_tail = Chains(lengths), self.joint.tail_counts(lengths, y)
            gold_score += tail_weights @ gold_tail
            tail = np.concatenate([expected_transitions.ravel(), nodes[chain.first].sum(axis=0),
                                   nodes[chain.last].sum(axis=0)]) - gold_tail
        nodes[rows, y] -= 1.0  # nodes − onehot(gold): expected minus gold emission counts, per position
        return float(log_z - gold_score), nodes, tail

    def minibatch(self, batch: FeatureMatrix, y: np.ndarray, weights: Callable[[np.ndarray], np.ndarray]):
        """``−Σ log p(y|x)`` over the instances of ``batch`` (gold ids ``y``) and its gradient as
        ``(value, rows, gradient)``, on the weight vector seen as rows of ``labels`` weights: the
        distinct rows the batch touches (its features' emission rows, then the tail's ``labels + 2``
        rows) and the ``(len(rows), labels)`` gradient there.  ``weights(rows)`` gives those rows of
        ``w``, so that a caller keeping ``w`` in another form (:class:`~.sgd.SGDWeights`) needs no copy."""
        joint, L = self.joint, self.joint.n_labels
        rows, local = np.unique(batch.indices, return_inverse=True)
        local = local.ravel()
        touched = np.concatenate([rows, joint.tail_rows])
        current = weights(touched)
        everything = [(np.arange(batch.n_positions), batch.lengths)]
        tail_weights = current[len(rows) :].ravel()
        scores = joint.row_scores(batch, local, current[: len(rows)], tail_weights)
        loss, residual, tail = self.data_term(scores.emissions, y, batch, everything, tail_weights)
        gradient = batch.transpose_dot_rows(local, len(rows), residual)
        if tail is None:
            return loss, rows, gradient
        return loss, touched, np.vstack([gradient, tail.reshape(-1, L)])


class MaxEntObjective(Objective):
    """``f(w)`` and ``∇f(w)`` of the module docstring for one indexed corpus ``X`` with gold label ids
    ``y`` (an :class:`Objective`); everything that does not depend on ``w`` is prepared once."""

    def __init__(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *, l2: float):
        super().__init__(l2)
        self.joint, self.likelihood = joint, ChainLikelihood(joint, decoder)
        self.X = scipy.sparse.csr_matrix((X.values.astype(np.float64), X.indices, X.indptr),
                                         shape=(X.n_positions, joint.n_rows))
        # compact (active_set.compact): the corpus's columns cut into blocks of feature rows, for the gradient a block
        # at a time (each block's product runs over the positions in order, as the whole product's does: reading the
        # positions' residuals in order is twice as fast as by feature row, 193 labels)
        self._row_blocks, self._pair_rows = None, None
        if compact(joint):
            rows = max(1, _ENTRIES_AT_A_TIME // joint.n_labels)
            self._row_blocks = [(first, self.X[:, first : first + rows]) for first in range(0, joint.n_rows, rows)]
        self.y, self.matrix = np.asarray(y, dtype=np.int64), X
        batch = batch_positions(joint.n_labels, _BATCH_POSITIONS)
        self.batches = [(X.positions(chosen), X.lengths[chosen]) for chosen in length_batches(X.lengths, batch)]

    def _evaluate(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        joint = self.joint
        tail_weights = w[joint.transition_offset :]
        loss, emission, tail = self._data_term(self.X @ joint.emission_weights(w), tail_weights)
        gradient = np.multiply(w, self.l2)
        joint.emission_weights(gradient)[:] += emission
        if tail is not None:
            gradient[joint.transition_offset :] += tail
        return loss + self._prior(w), gradient

    def restricted(self, theta: np.ndarray, pairs: ActivePairs) -> tuple[float, np.ndarray]:
        loss, gradient = self.free_data_term(pairs.sparse(theta))
        gradient += self.l2 * theta
        return loss + self._prior(theta), gradient

    def free_data_term(self, w: SparseWeights) -> tuple[float, np.ndarray]:
        """``−Σ log p(y|x)`` at ``w`` and its gradient at ``w``'s stored emission entries, then its tail."""
        loss, residual, tail = self._sparse_residual(w)
        if self._row_blocks is not None:
            gathered = self._pair_rows_of(w.keys).gradient(residual)
        else:
            gathered = np.empty(len(w.keys))
            for first, piece in self._emission_gradient(residual):
                begin, end = np.searchsorted(w.keys, [first, first + len(piece)])
                gathered[begin:end] = piece[w.keys[begin:end] - first]
        return loss, gathered if tail is None else np.concatenate([gathered, tail])

    def outside_gradient(self, theta: np.ndarray, pairs: ActivePairs) -> Iterator[tuple[int, np.ndarray]]:
        with np.errstate(over="ignore", invalid="ignore"):
            residual = self._sparse_residual(pairs.sparse(theta))[1]
        return self._emission_gradient(residual)

    def _sparse_residual(self, w: SparseWeights):
        """``(−Σ log p(y|x), its gradient with respect to the emission scores, the tail's gradient or None)`` at
        ``w``, the scores a product with its pairs (:func:`~.active_set.compact`: :class:`~.active_set.PairRows`) or
        with its dense emission block, freed once they are made."""
        if self._row_blocks is not None:
            scores = self._pair_rows_of(w.keys).scores(w.values)
        else:
            scores = self.X @ self.joint.emission_matrix(w)
        return self.likelihood.data_term(scores, self.y, self.matrix, self.batches, w.tail)

    def _pair_rows_of(self, keys: np.ndarray) -> PairRows:
        """The :class:`~.active_set.PairRows` of the pairs ``keys``, made again only when they change (a growth)."""
        made = self._pair_rows
        if made is None or not (len(made.keys) == len(keys) and np.array_equal(made.keys, keys)):
            self._pair_rows = made = None  # the old layout's copies of the corpus go first
            self._pair_rows = made = PairRows(self.X, keys, self.joint.n_labels)
        return made

    def _emission_gradient(self, residual: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """The data term's emission gradient ``Xᵀ·residual``, flat, in pieces ``(first index, values)``: whole, or
        (compact) a block of :data:`_ENTRIES_AT_A_TIME` entries' feature rows at a time."""
        if self._row_blocks is None:
            yield 0, (self.X.T @ residual).reshape(-1)
            return
        for first, block in self._row_blocks:
            yield first * self.joint.n_labels, (block.T @ residual).reshape(-1)

    def _data_term(self, E: np.ndarray, tail_weights: np.ndarray):
        """``(−Σ log p(y|x), its gradient's emission block (rows × labels), its tail gradient or None)`` from the
        emission scores ``E``, which it overwrites."""
        loss, residual, tail = self.likelihood.data_term(E, self.y, self.matrix, self.batches, tail_weights)
        return loss, self.X.T @ residual, tail


class ShardedObjective(Objective):
    """The objective of :class:`MaxEntObjective` over a corpus cut into the shards of ``shards`` (a
    :class:`~structlin.distributed.ShardedRun` whose workers keep the ``MaxEntObjective`` of their shard
    without the prior, ``l2 = 0``; or the :class:`StreamedShards` of a corpus on disk, read one shard at a time),
    summed here with the prior added once:

        f(w) = Σ_s f_s(w) + (l2/2)‖w‖²,     ∇f(w) = Σ_s ∇f_s(w) + l2·w

    exact: the serial sums over the instances, grouped by shard (the same up to floating-point rounding).
    An evaluation sends ``w`` to every worker and brings one gradient back from each."""

    def __init__(self, shards: ShardedRun, l2: float):
        super().__init__(l2)
        self.shards = shards

    def _evaluate(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        return self._summed(_data_term, w, w)

    def restricted(self, theta: np.ndarray, pairs: ActivePairs) -> tuple[float, np.ndarray]:
        return self._summed(_free_data_term, pairs.sparse(theta), theta)

    def _summed(self, term: Callable, w, free: np.ndarray) -> tuple[float, np.ndarray]:
        """``Σ_s term_s(w)`` over the shards, in shard order (the same sums every run), plus the prior on the
        weights ``free`` that the terms' gradients are of."""
        value, gradient = 0.0, np.multiply(free, self.l2)
        for value_s, gradient_s in self.shards.map(term, w):
            value += value_s
            gradient += gradient_s
        return value + self._prior(free), gradient


class StreamedShards:
    """The shards of a :class:`~structlin.featurecache.ShardedCorpus` in the form of
    :meth:`~structlin.distributed.ShardedRun.map`, read from disk one at a time: at every round each shard's
    objective is made again (memory holds one shard, never the corpus)."""

    def __init__(self, corpus: ShardedCorpus, decoder: Decoder):
        self.corpus, self.decoder = corpus, decoder

    def map(self, function: Callable, *args) -> list:
        joint = self.corpus.joint
        return [function(_shard_objective(Shard(k, joint, self.decoder, X, y)), *args)
                for k, (X, y) in enumerate(self.corpus.parts())]


def _shard_objective(shard: Shard) -> MaxEntObjective:
    """On a worker: the objective over ``shard`` without the prior, which the worker keeps for the run."""
    return MaxEntObjective(shard.joint, shard.decoder, shard.X, shard.y, l2=0.0)


def _free_data_term(objective: MaxEntObjective, w: SparseWeights) -> tuple[float, np.ndarray]:
    """On a worker: :meth:`MaxEntObjective.free_data_term` over a shard (the client checks the sum)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return objective.free_data_term(w)


def _grown(objective: Objective, pairs: ActivePairs, theta: np.ndarray, curvature: CurvaturePairs) -> np.ndarray:
    """Grow the active set ``pairs`` at ``θ`` and return ``θ`` over the grown set, with L-BFGS's pairs ``curvature``
    laid out over it too (in place), so that L-BFGS goes on with them, not from none."""
    embed = pairs.grow(objective.outside_gradient(theta, pairs))
    curvature.embed(embed)
    return embed(theta)


def _data_term(objective: MaxEntObjective, w: np.ndarray) -> tuple[float, np.ndarray]:
    """On a worker: ``−Σ log p(y|x)`` over a shard and its gradient at ``w`` (its objective has no prior; the
    client checks that the sum is finite)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return objective._evaluate(w)


class MaxEnt(Learner):
    """Multinomial logistic regression / linear-chain CRF, trained in batch (L-BFGS) or online (SGD).

    ``solver="lbfgs"`` (batch; OWL-QN when ``l1 > 0``): ``epochs`` (default 100) is the maximum number
    of iterations (each evaluates the objective and gradient over the whole corpus once or, in a line
    search, a few times).  The run also stops when the objective's relative decrease
    ``(f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)`` is at most ``tol``, when the largest (pseudo-)gradient
    component is at most ``gtol``, and, with a dev set and ``patience``, after ``patience`` dev
    evaluations without improvement.  ``memory`` is the number of L-BFGS correction pairs (6, as in
    CRFsuite).  The solver is deterministic and uses the whole corpus at every step, so ``seed`` and
    ``batch_size`` do not concern it.

    ``solver="sgd"`` (online): ``epochs`` (default 10) passes over the corpus in a seeded order of
    mini-batches of ``batch_size`` instances of similar length, each step ``w ← w − η_k (ḡ_B + λ w)``
    with ``ḡ_B`` the batch's mean loss gradient, ``λ = l2/N`` (the prior shared out over the ``N``
    instances, so that SGD minimises the same ``f(w)/N``) and ``η_k = learning_rate / (1 +
    learning_rate·λ·k)`` (Bottou 2012).  Steps cost O(features of the batch) (:class:`~.sgd.SGDWeights`:
    lazy shrinkage, the exact average); ``averaging`` returns the average of the iterates from the
    second epoch on (Polyak–Ruppert), ``momentum > 0`` adds heavy-ball momentum (then each step costs
    O(weights)).  The objective is evaluated on the whole corpus after every epoch, for the history.

    ``client`` (a ``dask.distributed.Client``, batch solver only) makes :meth:`fit` evaluate the objective on
    that Dask cluster, summed over shards of the corpus (:class:`ShardedObjective`).

    ``l2`` is ``1/σ²`` on the *summed* log-likelihood, ``l1`` the L1 penalty's weight (batch solver
    only).  With a dev set the weights are evaluated every ``eval_every`` iterations or epochs and at
    the last one, and the best are kept; ``best_epoch_`` is that iteration or epoch.  Without dev the
    last weights are kept.

    After :meth:`fit`: ``weights_``, ``history_`` (per iteration or epoch: ``iteration`` (L-BFGS) or
    ``epoch`` (SGD), ``objective``, ``gradient_norm`` (Euclidean; of the pseudo-gradient with ``l1``),
    ``evaluations`` (L-BFGS objective evaluations of that iteration), ``dev_accuracy`` (None when not
    evaluated), ``seconds`` (the step and its dev evaluation)), ``best_epoch_`` and ``stopped_`` (why
    the run ended).  ``callback(record, learner)`` is called after every iteration or epoch; a true
    return stops the run.
    """

    name = "maxent"
    summary = "max-ent: logistic regression / linear-chain CRF by L-BFGS, OWL-QN (L1) or SGD"
    capabilities = Capabilities(probabilistic=True, distributed=True, streams=True)  # p(y|x): the marginals
    dense_vectors = 3  # the weights made from the active set's, their gradient, the best kept (3.2 measured)
    solvers = ("lbfgs", "sgd")
    options = (Option("epochs", int, None, "the most L-BFGS iterations (default 100), or SGD epochs (default 10)",
                      minimum=1, nullable=True),
               Option("solver", str, "lbfgs", "batch L-BFGS (OWL-QN with l1) or online SGD", choices=solvers),
               Option("l2", float, None, "the L2 prior's 1/σ² on the summed log-likelihood (default: relative_l2 × "
                      "the mean ‖x‖² of a training position)", minimum=0, nullable=True),
               Option("relative_l2", float, None, "l2 as a multiple of the mean squared norm ‖x‖² of a training "
                      "position's features, when l2 is not given: the same prior for any scale of the features "
                      f"(default: chosen on dev among {', '.join(map(str, RELATIVE_L2S))}, with L-BFGS each run "
                      "starting where the one before ended; without dev, "
                      f"{RELATIVE_L2_DEFAULT})", minimum=0, nullable=True, untuned=RELATIVE_L2_DEFAULT),
               Option("l1", float, 0.0, "the L1 penalty, exact zeros by OWL-QN (lbfgs only)", minimum=0),
               Option("tol", float, 1e-6, "L-BFGS: stop at this relative decrease of the objective", minimum=0),
               Option("gtol", float, 1e-5, "L-BFGS: stop when no (pseudo-)gradient component exceeds this",
                      minimum=0, cli=False),
               Option("memory", int, 6, "L-BFGS: the number of correction pairs", minimum=1, cli=False),
               Option("unseen_pairs", float, UNSEEN_PAIRS, "L-BFGS: train the (feature, label) weights seen in "
                      "training, then, from halfway through the first run, also the unseen ones of largest gradient, "
                      "this many times as many as the seen ones; 'all': every weight", minimum=0, special=("all",),
                      parse=lambda text: text if text == "all" else float(text)),
               Option("learning_rate", float, 0.1, "SGD: the initial learning rate η₀", minimum=0,
                      exclusive_minimum=True),
               Option("averaging", bool, True, "SGD: return the average of the iterates from the second epoch on",
                      cli=False),
               Option("momentum", float, 0.0, "SGD: heavy-ball momentum", minimum=0, maximum=1,
                      exclusive_maximum=True),
               EVAL_EVERY, SEED, BATCH_SIZE, PATIENCE, CALLBACK, PROGRESS, CLIENT)
    history_fields = (HistoryField("objective", "objective", "{:.6g}"),
                      HistoryField("gradient_norm", "gradient norm", "{:.3g}"))

    def _check_options(self) -> None:
        if self.l2 is not None and self.relative_l2 is not None:
            raise OptionValueError("give l2 or relative_l2, not both (an l2 is used as it is)")
        if self.l1 and self.solver != "lbfgs":
            raise OptionValueError(f"l1 needs the lbfgs solver (OWL-QN), not {self.solver!r}")
        if self.tol != self.option("tol").default and self.solver != "lbfgs":
            raise OptionValueError(f"tol applies to the lbfgs solver, not {self.solver!r}")
        if self.unseen_pairs != UNSEEN_PAIRS and self.solver != "lbfgs":
            raise OptionValueError(f"unseen_pairs applies to the lbfgs solver, not {self.solver!r}")
        for name in ("learning_rate", "momentum"):
            if getattr(self, name) != self.option(name).default and self.solver != "sgd":
                raise OptionValueError(f"{name} applies to the sgd solver, not {self.solver!r}")

    def check_distributes(self) -> None:
        if self.solver != "lbfgs":
            raise OptionValueError(f"max-ent trains on a Dask cluster (client) with the lbfgs solver only, not "
                                   f"{self.solver!r}")

    @property
    def max_epochs(self) -> int:
        """``epochs``, or the solver's default when it is None."""
        return self.epochs if self.epochs is not None else (100 if self.solver == "lbfgs" else 10)

    def objective(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
                  relative_l2: float | None = None, shards: ShardedRun | None = None) -> Objective:
        """The objective this learner minimises on a corpus: with ``l2``, else ``relative_l2 · ρ`` for the
        corpus's ``ρ = mean ‖x_p‖²`` (scaling the features by ``s`` scales the weights by ``1/s``, so
        the prior that means the same scales by ``s²``; ``relative_l2``: the option's, else its untuned
        value), then recorded in ``chosen_``.  With ``shards`` (the corpus's, on a Dask cluster), the
        :class:`ShardedObjective` of the same."""
        l2 = self.l2
        if l2 is None:
            relative = relative_l2 if relative_l2 is not None else self.relative_l2
            relative = relative if relative is not None else self.option("relative_l2").untuned
            l2 = relative * X.mean_squared_norm()
            self.chosen_ = {"l2": l2}
        if shards is None and isinstance(X, ShardedCorpus):
            shards = StreamedShards(X, decoder)
        return MaxEntObjective(joint, decoder, X, y, l2=l2) if shards is None else ShardedObjective(shards, l2)

    def _dense_vectors(self, joint: JointFeatureMap) -> int:
        """None in a compact run over the active set (:func:`~.active_set.compact`; on a cluster, the growth makes
        the full gradient once: the vectors counted)."""
        compact_run = self.solver == "lbfgs" and self.unseen_pairs != "all" and self.client is None and compact(joint)
        return 0 if compact_run else self.dense_vectors

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> MaxEnt:
        """Train from ``w = 0`` on the indexed corpus ``X`` with gold label ids ``y`` (one per position);
        ``dev = (X_dev, y_dev)`` selects the iteration kept (gold ids of −1 count as errors).

        A NaN or infinite feature value raises :class:`StructlinError` before training, naming the instance.
        """
        require_finite(X, "training")
        if dev is not None:
            require_finite(dev[0], "dev")
        self.require_memory(joint)
        pairs = self._active_pairs(joint, X, y)
        with self._shards(joint, decoder, X, y) as shards:
            if self.l2 is not None or self.relative_l2 is not None or dev is None:
                self._fit_once(joint, decoder, X, y, dev, None, shards, pairs=pairs)
                return self
            # relative_l2 chosen on dev: one run per candidate (each keeping its best dev iteration), the best kept;
            # with L-BFGS each run starts where the one of the stronger prior ended (a regularisation path)
            self._keep_best_run("relative_l2", self._path(joint, decoder, X, y, dev, shards, pairs, RELATIVE_L2S))
        return self

    def refit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *, epochs: int,
              chosen: dict, bias_row: int | None = None) -> MaxEnt:
        """:meth:`Learner.refit`; a prior chosen along the regularisation path is refit along it, as it was chosen:
        the runs of the stronger priors in full, then the chosen one for ``epochs`` iterations, each run from the
        last iterate of the one before (``epochs`` counts the chosen run's iterations, not a run from 0)."""
        relative = chosen.get("relative_l2")
        if relative is None or self.solver != "lbfgs" or set(chosen) != {"relative_l2"}:
            return super().refit(joint, decoder, X, y, epochs=epochs, chosen=chosen, bias_row=bias_row)
        require_finite(X, "training")
        self.require_memory(joint)
        pairs, priors = self._active_pairs(joint, X, y), RELATIVE_L2S[: RELATIVE_L2S.index(relative) + 1]
        with self._shards(joint, decoder, X, y) as shards:
            for _ in self._path(joint, decoder, X, y, None, shards, pairs, priors, last_epochs=epochs):
                pass
        self.chosen_ = {"relative_l2": relative, **self.chosen_}
        return self

    def _path(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, dev,
              shards: ShardedRun | None, pairs: ActivePairs | None, priors, last_epochs: int | None = None):
        """The regularisation path over ``priors`` (``relative_l2`` values, strongest first): one run each, from the
        last iterate of the run before (the first from 0), yielding each prior once its run is the learner's model;
        the last run for ``last_epochs`` iterations when given, instead of ``epochs``."""
        start, budget = None, self.epochs
        for k, relative in enumerate(priors):
            try:
                if last_epochs is not None and k == len(priors) - 1:
                    self.set_params(epochs=last_epochs)
                start = self._fit_once(joint, decoder, X, y, dev, relative, shards, start, pairs)
            finally:
                self.set_params(epochs=budget)
            yield relative

    def _active_pairs(self, joint: JointFeatureMap, X: FeatureMatrix, y: np.ndarray) -> ActivePairs | None:
        """The weights L-BFGS starts with (:mod:`.active_set`), or None when it trains every weight."""
        if self.solver != "lbfgs" or self.unseen_pairs == "all":
            return None
        parts = X.parts() if isinstance(X, ShardedCorpus) else [(X, y)]
        return ActivePairs(seen_pairs(joint, parts), joint, self.unseen_pairs)

    def _shards(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray):
        """A context holding the corpus's shards on the Dask cluster of ``client``, each worker keeping the
        objective of its own without the prior (the same for every prior tried); None without a client."""
        if self.client is None:
            return nullcontext()
        return ShardedRun(self.client, joint, decoder, X, y, seed=self.seed, prepare=_shard_objective)

    def _fit_once(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, dev,
                  relative_l2: float | None, shards: ShardedRun | None,
                  start: np.ndarray | None = None, pairs: ActivePairs | None = None) -> np.ndarray | None:
        """One run from ``start`` (default 0; L-BFGS only) with the prior of :meth:`objective` (on ``shards``,
        when given), over the active set ``pairs`` (None: every weight); returns L-BFGS's last iterate, also when
        the patience or the callback stopped the run (None for SGD).  With ``pairs``, ``start`` and the iterate are
        its free weights."""
        objective = self.objective(joint, decoder, X, y, relative_l2, shards)
        unit = "iteration" if self.solver == "lbfgs" else "epoch"
        if start is None:  # zeros made when needed, so that no array outlives its use (the active set grows)
            initial = functools.partial(np.zeros, joint.size)
        else:
            initial = (lambda: start) if pairs is None else functools.partial(pairs.weights(), start)
        last = None
        with TrainingRun(self, joint, decoder, dev, unit=unit, spill=isinstance(X, ShardedCorpus)) as run:
            if self.solver == "lbfgs":
                last = self._lbfgs(objective, start, run, pairs, joint.size)
            else:
                self._sgd(objective, ChainLikelihood(joint, decoder), X, y, run)
        if self.solver == "lbfgs" and last is None and run.history:  # stopped by the patience or the callback
            w = run.latest()
            last = w if pairs is None else pairs.free_weights(w)
        self.weights_ = run.finish(initial=initial)
        self.stopped_ = run.stopped or self.stopped_
        self.history_, self.best_epoch_ = run.history, run.best_step
        return last

    def _lbfgs(self, objective: Objective, start: np.ndarray | None, run: TrainingRun,
               pairs: ActivePairs | None, size: int) -> np.ndarray:
        """L-BFGS (OWL-QN with ``l1``) from ``start`` (None: 0 in the ``size`` weights) for at most ``epochs``
        iterations, each recorded; returns the last iterate.  Over an active set ``pairs`` (``start`` and the
        result: the free weights ``θ``), while the set is not grown the first half of the iterations trains it,
        then it grows at the last iterate's gradient and the rest trains the grown set."""
        run.bar(self.max_epochs, "it")
        if pairs is None:
            return self._minimize(objective, np.zeros(size) if start is None else start, run, self.max_epochs)[0]
        theta = np.zeros(len(pairs.free)) if start is None else start
        budget, restricted = self.max_epochs, RestrictedObjective(objective, pairs)
        curvature = None
        if not pairs.grown:
            before = len(run.history)
            theta, curvature = self._minimize(restricted, theta, run, (budget + 1) // 2, pairs.weights())
            budget -= len(run.history) - before
            theta = _grown(objective, pairs, theta, curvature)
        return self._minimize(restricted, theta, run, budget, pairs.weights(), curvature)[0]

    def _minimize(self, objective: Objective, start: np.ndarray, run: TrainingRun, iterations: int,
                  snapshot: Callable[[np.ndarray], np.ndarray] = lambda w: w,
                  curvature: CurvaturePairs | None = None) -> tuple[np.ndarray, CurvaturePairs]:
        """At most ``iterations`` of L-BFGS from ``start`` (going on with the pairs ``curvature`` when given), each
        recorded with the weights ``snapshot(x)`` of the iterate ``x``; returns the last iterate and the pairs."""
        evaluations = objective.evaluations

        def after_iteration(x: np.ndarray) -> None:
            nonlocal evaluations
            value, gradient = objective.at(x)
            if self.l1:
                value, gradient = value + self.l1 * np.abs(x).sum(), pseudo_gradient(x, gradient, self.l1)
            run.record(lambda: snapshot(x), objective=value, gradient_norm=norm(gradient),
                       evaluations=objective.evaluations - evaluations)
            evaluations = objective.evaluations

        result = minimize_owlqn(objective, start, l1=self.l1, maxiter=iterations, ftol=self.tol,
                                gtol=self.gtol, memory=self.memory, callback=after_iteration, curvature=curvature)
        self.stopped_ = result.message
        if not run.history:  # stopped where it started (an L1 penalty that keeps every weight 0): that is the model
            after_iteration(result.x)
        return result.x, result.curvature

    def _sgd(self, objective: Objective, likelihood: ChainLikelihood, X: FeatureMatrix, y: np.ndarray,
             run: TrainingRun) -> None:
        joint = likelihood.joint
        weights = SGDWeights(joint.size, joint.n_labels, momentum=self.momentum, averaged=self.averaging)
        rng = np.random.default_rng(self.seed)
        decay = objective.l2 / max(X.n_instances, 1)  # λ per instance
        if self.learning_rate * decay >= 1:  # the first step, the largest, would shrink w by a factor ≤ 0
            raise OptionValueError(
                f"learning_rate {self.learning_rate:g} with l2 {objective.l2:g} over {X.n_instances:,} training "
                f"instances would scale the weights by 1 − η₀·l2/N = {1 - self.learning_rate * decay:.3g} at the "
                f"first SGD step: give a learning rate below N/l2 = {1 / decay:.3g}, or a smaller l2")
        self.stopped_ = f"{self.max_epochs} epochs"
        bar = run.bar(self.max_epochs * X.n_instances, "inst")
        for _ in range(self.max_epochs):
            weights.start_epoch()
            for batch, gold in minibatches(X, y, self.batch_size, rng):
                _, rows, gradient = likelihood.minibatch(batch, gold, weights.at)
                rate = self.learning_rate / (1.0 + self.learning_rate * decay * weights.steps)
                weights.step(1.0 - rate * decay, rows, gradient * (-rate / batch.n_instances))
                bar.update(batch.n_instances)
            w = weights.hypothesis()
            value, gradient = objective(w)
            run.record(lambda w=w: w, objective=value, gradient_norm=norm(gradient))
