"""The structured perceptron (Collins 2002) and its averaged form, on any decoder.

On each instance ``ŷ = argmax_y w·φ(x, y)``; on a mistake ``w += φ(x, y) − φ(x, ŷ)``.

The averaged perceptron returns the mean of the weights after every example visit,
``w̄ = (1/T) Σ_t w_t``.  It is kept exactly in O(changed features) per update with the
``w − u/c`` form (Daumé, CIML alg. 7): with ``c`` the number of visits before the current one,
every update ``δ`` also does ``u += c·δ``, and ``w̄ = w − u/T`` after ``T`` visits, because
``Σ_t w_t = Σ_s δ_s (T − s + 1) = T·w − Σ_s (s − 1) δ_s``.

With a margin ``τ > 0`` the update is made whenever the gold output does not beat every other
output by τ per wrong position: ``ŷ = argmax_y w·φ(x, y) + τ·Δ(y, y_gold)`` (the decoder's
loss-augmented argmax, Hamming Δ), the perceptron with margin.  Scaling the features by ``s``
scales ``w·Δφ`` by ``s²`` after the same updates, so the margin that means the same on any data
is relative to the features' squared norm: by default ``τ = relative_margin · ρ`` with ``ρ`` the
mean ``‖x_p‖²`` of a training position's features (``margin`` gives τ itself).

With ``batch_size > 1`` a mini-batch of instances is decoded with the same weights and their
updates are then applied in order (each still counted at its own visit for the average).

On a Dask cluster (the ``client`` option), :meth:`Perceptron.fit` trains by iterative parameter mixing
(McDonald, Hall & Mann 2010) over the shards of :mod:`structlin.distributed`: every epoch, each shard
``s`` runs one epoch of its ``n_s`` instances from the mixed weights ``w`` (in the order of
``default_rng([seed, epoch, s])``), and the weights become the mixture ``w = Σ_s μ_s w_s`` of the
shards' last weights, ``μ_s = n_s / n`` (each shard's share of the instances).  A shard's epoch starts
with no visit and ``u = 0``, so by the identity above its ``T_s`` visits sum to ``Σ_t w_t = T_s·w_s −
u_s`` whatever ``w`` it starts from; the averaged hypothesis is the sum of these over every shard and
epoch divided by the visits, the mean of the weights after every visit as in a serial run.  The run
keeps it as ``w − u/T`` with ``u = T·w − Σ_t w_t`` (the same state as a serial run's, which
:meth:`~Perceptron.partial_fit` can go on from).  A margin relative to the features' scale is that of the
whole training corpus divided by the number of shards ``N``: the mixture averages the shards' updates, so the
weights grow about ``N`` times more slowly than a serial run's, and ``τ/N`` keeps the margin's size relative to
them (a margin given as ``margin`` is used as it is).
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial

import numpy as np
import scipy.sparse
from tqdm import tqdm

from ..decoders import Cost, Decoder, Multiclass
from ..distributed import Shard, ShardedRun
from ..errors import OptionValueError
from ..featurecache import ShardedCorpus
from ..joint import JointFeatureMap, Scores, SparseWeights
from ..matrix import FeatureMatrix
from ..modelfile import ArraySpec, StreamedArray
from .delta_trick import DELTA_MAX, DeltaTrick
from .epochs import minibatches
from .protocol import CLIENT, COST, EPOCHS, RUN_OPTIONS, Capabilities, HistoryField, Learner, Option, with_defaults
from .run_weights import DenseWeights, GrowingWeights, stores_pairs, weight_store, weighted_sum
from .training import TrainingRun, accuracy, dev_accuracy

#: The defaults of relative_margin, chosen by scripts/choose_defaults.py (least mean regret on the panel's dev
#: data, docs/benchmarks.md "Defaults"): the averaged and voted perceptrons', and the plain perceptron's.  A document
#: classifier gives the perceptrons 4 (``Classifier.learner_defaults``: "The document classifier's margin").
RELATIVE_MARGIN_DEFAULT = 2.0
PLAIN_RELATIVE_MARGIN_DEFAULT = 4.0

MARGIN = Option("margin", float, None, "perceptron margin τ: update unless the gold output wins by τ per wrong "
                "position (0: the plain perceptron; default: relative_margin × the mean ‖x‖² of a training "
                "position)", minimum=0, nullable=True)
RELATIVE_MARGIN = Option("relative_margin", float, RELATIVE_MARGIN_DEFAULT, "the margin τ as a multiple of the mean "
                         "squared norm ‖x‖² of a training position's features, when margin is not given",
                         minimum=0)
DELTA_TRICK = Option("delta", float, None, "train with the Δ trick: an id feature of value Δ per training "
                     "position, which makes any data separable (not kept in the model)", nullable=True,
                     minimum=0, exclusive_minimum=True, maximum=DELTA_MAX, flag="--delta-trick", metavar="Δ")
PERCEPTRON_OPTIONS = (EPOCHS, *RUN_OPTIONS, MARGIN, RELATIVE_MARGIN, DELTA_TRICK)
MISTAKES = HistoryField("train_mistakes", "mistakes", "{:>6}")


class Perceptron(Learner):
    """Multiclass / structured perceptron with seeded shuffling and early stopping on dev.

    After :meth:`fit`: ``weights_`` (the flat weight vector of the chosen epoch), ``history_`` (one
    record per epoch with ``train_mistakes`` (instances with an error) and ``train_token_errors``
    besides the common fields of :mod:`.training`), ``best_epoch_``.

    The learner is online: it keeps the state of its run (the weights, the averaging sums, the visit
    count and the shuffling generator; for the averaged perceptron twice the memory of ``weights_``),
    so that :meth:`partial_fit` can continue it one epoch at a time.

    ``delta = Δ`` trains with the Δ trick (:mod:`.delta_trick`): every training position gets an id
    feature of value Δ, which makes any training set separable; the model keeps only the real features'
    weights.  It applies to :meth:`fit` (an id must stay tied to one example), not to :meth:`partial_fit`.

    ``client`` (a ``dask.distributed.Client``) makes :meth:`fit` train on that Dask cluster by iterative
    parameter mixing (the module docstring); :meth:`partial_fit` runs here.  The Δ trick does not
    distribute (its id features are tied to one run over all the examples).
    """

    name = "perceptron"
    summary = "the structured perceptron (Collins 2002): w += φ(x,y) − φ(x,ŷ) on every mistake"
    capabilities = Capabilities(online=True, distributed=True, sparse=True, streams=True)
    options = with_defaults((*PERCEPTRON_OPTIONS, CLIENT), relative_margin=PLAIN_RELATIVE_MARGIN_DEFAULT)
    history_fields = (MISTAKES,)
    averaged = False
    margin, relative_margin = None, 0.0  # what the subclasses without these options (PA, MIRA, Winnow) train with
    client = None  # the subclasses that do not distribute (voted perceptron, Winnow) declare no client

    def check_distributes(self) -> None:
        if self.delta:
            raise OptionValueError("the Δ trick (delta) ties an id feature to each example of one run: it does not "
                                   "train on a Dask cluster (client)")

    def __init__(self, *args, **params):
        super().__init__(*args, **params)
        self._joint: JointFeatureMap | None = None

    @property
    def started(self) -> bool:
        """Whether a run is under way (by :meth:`fit`, :meth:`start` or :meth:`partial_fit`)."""
        return self._joint is not None

    def start(self, joint: JointFeatureMap, weights: np.ndarray | SparseWeights | None = None,
              history: list | None = None) -> None:
        """Begin a run on ``joint``'s layout: the generator at ``seed``, no visit yet, and the weights
        zero, or ``weights`` with their ``history`` to go on from a trained model (a loaded one, whose
        file keeps only the weights to predict with: the averaging then starts afresh from them).  The
        weights are kept for the rows or the (feature, label) pairs the run touches, as
        :func:`~.run_weights.weight_store` says (the pairs with many labels), in full with the Δ trick."""
        self._joint = joint
        self._rng = np.random.default_rng(self.seed)
        store = DenseWeights if self.delta else weight_store(self.capabilities, joint.n_labels)
        self._state = store(joint, self.averaged, weights)
        self._visits = 0
        self.margin_: float | None = None  # τ, set by the run's first epoch (see _margin)
        self.history_, self.best_epoch_ = list(history or []), None

    def check_streams(self) -> None:
        if self.delta:
            raise OptionValueError("the Δ trick (delta) adds a feature for every training instance, kept in memory: it "
                                   "does not train from a corpus on disk (stream)")

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> Perceptron:
        """Train on the indexed corpus ``X`` with gold label ids ``y`` (one per position).

        With ``dev = (X_dev, y_dev)`` the weights of the epoch with the best dev accuracy are kept
        (gold ids of −1, labels unseen in training, count as errors), and training stops after
        ``patience`` epochs without improvement.  The run's state is that of the last epoch trained
        (not the kept one): :meth:`partial_fit` goes on from there.
        """
        if isinstance(X, ShardedCorpus):
            self.check_streams()
        self.require_memory(joint)
        self._trick = DeltaTrick(joint, X, self.delta) if self.delta else None
        self.start(self._trick.joint if self._trick else joint)
        self.margin_ = self._margin(X)
        X = self._trick.X if self._trick else X
        score = partial(self._dev_score, decoder, joint, dev=dev)
        with TrainingRun(self, joint, decoder, dev, score=score, spill=isinstance(X, ShardedCorpus)) as run, \
                self._epochs(decoder, X, y) as epoch:
            bar = run.bar(self.epochs * X.n_instances, "inst")
            for number in range(1, self.epochs + 1):
                last = number == self.epochs and dev is None  # its snapshot, taken once, is the model
                run.record(self._final_snapshot if last else self._snapshot, **epoch(bar))
        self._keep(run.finish())
        self.history_, self.best_epoch_, self.stopped_ = run.history, run.best_step, run.stopped
        return self

    def _check_options(self) -> None:
        if self.margin is not None and self.relative_margin != self.option("relative_margin").default:
            raise OptionValueError("give margin or relative_margin, not both (a margin is used as it is)")

    def _epochs(self, decoder: Decoder, X: FeatureMatrix, y: np.ndarray):
        """A context holding fit's epoch, a function of the progress bar that returns the epoch's history
        fields: :meth:`_epoch` here, or with a ``client`` the parameter mixing of the shards' epochs."""
        if self.client is None:
            return nullcontext(partial(self._epoch, decoder, X, y))
        return _ParameterMixing(self, decoder, X, y)

    def _margin(self, X: FeatureMatrix) -> float:
        """τ: ``margin``, else ``relative_margin · ρ`` with ``ρ = Σ_p ‖x_p‖² / positions`` over ``X`` (then
        recorded in ``chosen_``)."""
        if self.margin is not None:
            return self.margin
        if not self.relative_margin:
            return 0.0
        margin = self.relative_margin * X.mean_squared_norm()
        self.chosen_ = {"margin": margin}
        return margin

    def _snapshot(self):
        """The model as of now, as :meth:`_keep` takes it: the hypothesis' weights (without the Δ
        trick's id features).  The average of full vectors or touched rows is left unmade
        (:class:`~structlin.joint.AveragedWeights`): the run scores it on dev and makes it only to keep it."""
        if self.averaged and self._visits and self._trick is None and not isinstance(self._state, GrowingWeights):
            return self._state.unmade_average(self._visits)
        return self._real_weights(self._hypothesis())

    def _final_snapshot(self):
        """:meth:`_snapshot` as the run's last: the average written over the averaging sums' memory."""
        if not self.averaged or self._visits == 0:
            return self._snapshot()
        return self._real_weights(self._state.final_average(self._visits))

    def _real_weights(self, w: np.ndarray) -> np.ndarray:
        """``w`` in the layout of the real features: the Δ trick's id rows dropped."""
        return self._trick.restrict(w) if self._trick else w

    def _dev_score(self, decoder: Decoder, joint: JointFeatureMap, snapshot, dev) -> float:
        """Dev accuracy of a :meth:`_snapshot`, on the real features' map ``joint``."""
        return dev_accuracy(decoder, joint, snapshot, dev)

    def _keep(self, snapshot) -> None:
        """Make ``snapshot`` (of the epoch chosen) the trained model."""
        self.weights_ = snapshot

    def partial_fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray) -> Perceptron:
        """One epoch over ``X`` (scikit-learn's ``partial_fit``), going on from the run of earlier
        calls or of :meth:`fit`; the first call of a learner starts a run on ``joint``.

        ``joint`` may extend the run's map (:meth:`JointFeatureMap.extended`, for buckets first seen
        in this batch): the weights and averaging sums are carried into its layout.  The generator
        goes on too, so the same seed and the same calls give the same model.  ``weights_`` becomes
        the current hypothesis (the average so far for the averaged perceptron) and ``history_``
        gains one record.  ``epochs`` and ``patience`` concern :meth:`fit` only.
        """
        if not self.capabilities.online:
            raise TypeError(f"{self.name} keeps state that lasts one run: train it with fit")
        if self.delta:
            raise TypeError("the Δ trick (delta) ties an id feature to each example of one run: train with fit")
        if not self.started:
            self.start(joint)
        elif joint is not self._joint:
            self._state.carry(joint, self._joint)
            self._joint = joint
        self._trick = None
        if self.margin_ is None:  # the run's first epoch: τ from its first batch
            self.margin_ = self._margin(X)
        with TrainingRun(self, joint, decoder, None, history=self.history_) as run:
            run.record(self._snapshot, **self._epoch(decoder, X, y, run.bar(X.n_instances, "inst")))
        self.weights_ = run.finish()
        self.history_, self.best_epoch_ = run.history, run.best_step
        return self

    def _epoch(self, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, bar) -> dict:
        """One pass over ``X`` (shuffled unless ``shuffle`` is off) updating the run's state; the
        epoch's fields of its history record."""
        joint, state = self._joint, self._state
        mistakes = token_errors = done = shown = 0
        for k, (batch, gold) in enumerate(minibatches(X, y, self.batch_size, self._rng if self.shuffle else None), 1):
            scores = state.scores(joint, batch)
            predicted = self._select(decoder, scores, gold)
            wrong = predicted != gold
            if wrong.any():
                indices, values, owner = joint.feature_difference(batch, gold, predicted)
                values = self._step(state, batch, gold, predicted, indices, values, owner)
                state.add(indices, values, self._visits + owner)
                state = self._state = state.settled()
                token_errors += int(wrong.sum())
                mistakes += int(np.count_nonzero(np.add.reduceat(wrong, batch.offsets[:-1][batch.lengths > 0])))
            self._visits += batch.n_instances
            done += batch.n_instances
            if k % 64 == 0 or done == X.n_instances:
                bar.update(done - shown)
                shown = done
        return {"train_mistakes": mistakes, "train_token_errors": token_errors}

    def _select(self, decoder: Decoder, scores, gold: np.ndarray) -> np.ndarray:
        """The output ``ŷ`` the update is made against: the argmax, or with a margin τ the loss-augmented
        argmax."""
        return decoder.loss_augmented_argmax(scores, gold, self.margin_) if self.margin_ else decoder.argmax(scores)

    def _step(self, w, batch: FeatureMatrix, gold: np.ndarray, predicted: np.ndarray, indices: np.ndarray,
              values: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """The update's entries ``φ(x, y) − φ(x, ŷ)`` (``y`` = ``gold``, ``ŷ`` = ``predicted``, per position)
        scaled by the instance's step size: 1 here.  ``w``: the run's weights (read as ``w[indices]``)."""
        return values

    def _hypothesis(self) -> np.ndarray | SparseWeights:
        """The weights to predict with: ``w`` itself, or the average ``w − u/visits`` (a new vector; ``w``
        before any visit)."""
        if not self.averaged or self._visits == 0:
            return self._state.current()
        return self._state.average(self._visits)


class _ParameterMixing:
    """The epochs of ``learner.fit`` on its Dask cluster: iterative parameter mixing of the shards' epochs,
    which keeps the learner's state (its weights and sums, ``_visits``) as a serial run does (the module
    docstring).
    Leaving the ``with`` block releases the shards."""

    def __init__(self, learner: Perceptron, decoder: Decoder, X: FeatureMatrix, y: np.ndarray):
        self.learner, self.epoch = learner, 0
        self.shards = ShardedRun(learner.client, learner._joint, decoder, X, y, seed=learner.seed)
        self.shares = np.array(self.shards.sizes) / X.n_instances  # μ_s
        if learner.margin is None and learner.margin_:
            # Mixing averages the shards' updates, so the weights grow about N times more slowly than in a serial
            # run; a margin relative to the features' scale is divided by N to keep its size relative to them
            # (the dev accuracy of four tagging corpora on 2 and 4 workers, docs/benchmarks.md).
            learner.margin_ /= len(self.shards.sizes)
            learner.chosen_ = {**learner.chosen_, "margin": learner.margin_}

    def __enter__(self) -> _ParameterMixing:
        return self

    def __exit__(self, *exception) -> None:
        self.shards.close()

    def __call__(self, bar) -> dict:
        """One epoch: every shard's from the mixed weights, then their mixture ``w' = Σ_s μ_s w_s`` and, when
        averaging, the sums of the weights over every visit so far, ``Σ_t w_t = T·w − u``, plus the shards'."""
        learner, state = self.learner, self.learner._state
        results = self.shards.map(_shard_epoch, state.current(), self.epoch, type(learner), learner.params(),
                                  learner.margin_)
        self.epoch += 1
        w = weighted_sum([(share, w_s) for share, (w_s, _, _, _) in zip(self.shares, results)])
        sums = weighted_sum([(1.0, state.visit_sums(learner._visits))] + [(1.0, s) for _, s, _, _ in results]) \
            if learner.averaged else None
        learner._visits += sum(T_s for _, _, T_s, _ in results)
        state.assign(w, sums, learner._visits)
        bar.update(sum(self.shards.sizes))
        return {key: sum(fields[key] for _, _, _, fields in results) for key in results[0][3]}


def _shard_epoch(shard: Shard, w, epoch: int, cls: type[Perceptron], params: dict, margin: float):
    """On a worker: one epoch of a new ``cls(**params)`` learner over ``shard`` from the weights ``w`` with the
    margin τ = ``margin``; ``(w_T, Σ_t w_t, T, fields)`` after its ``T`` visits, with ``Σ_t w_t = T·w_T − u``
    (None when the learner does not average) and the epoch's history fields."""
    learner = cls(**params)
    learner.start(shard.joint, weights=w)
    learner.margin_, learner._rng = margin, np.random.default_rng([learner.seed, epoch, shard.index])
    fields = learner._epoch(shard.decoder, shard.X, shard.y, tqdm(disable=True))
    state, T = learner._state, learner._visits
    return state.current(), state.visit_sums(T) if learner.averaged else None, T, fields


class AveragedPerceptron(Perceptron):
    """The perceptron returning the exact average of the weights over every example visit."""

    name = "averaged-perceptron"
    summary = "the perceptron returning the exact average of its weights over every visit (default)"
    options = (*PERCEPTRON_OPTIONS, CLIENT)
    averaged = True


class PassiveAggressive(Perceptron):
    """Passive-aggressive learning (Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006) on any decoder.

    On each instance the update is the smallest change of ``w`` that gives the gold output a margin of
    its cost over ``ŷ``: with ``Δφ = φ(x, y) − φ(x, ŷ)``, the cost ``ρ = cost · Hamming(y, ŷ)`` (0/1 for a
    document) and the loss ``ℓ = max(0, ρ − w·Δφ)``, ``w ← w + τ Δφ`` with

        PA:     τ = ℓ / ‖Δφ‖²
        PA-I:   τ = min(C, ℓ / ‖Δφ‖²)
        PA-II:  τ = ℓ / (‖Δφ‖² + 1/(2C))

    ``selection="max-loss"`` (default) updates against the cost-augmented argmax ``ŷ = argmax_y
    w·φ(x, y) + ρ(y)`` (the paper's max-loss multiclass update with margin rescaling);
    ``"prediction"`` against the plain argmax (prediction-based).  With a mini-batch every instance's
    τ is taken at the same ``w``.  ``averaging`` returns the averaged weights (exact, as for the
    averaged perceptron).
    """

    name = "passive-aggressive"
    summary = "PA / PA-I / PA-II: the smallest step that gives the gold output a margin of its cost"
    variants = ("pa", "pa-i", "pa-ii")
    selections = ("max-loss", "prediction")
    options = (EPOCHS, *RUN_OPTIONS, DELTA_TRICK, CLIENT,
               Option("variant", str, "pa-i", "the step τ = ℓ/‖Δφ‖² (pa), min(C, ℓ/‖Δφ‖²) (pa-i) or "
                      "ℓ/(‖Δφ‖² + 1/(2C)) (pa-ii)", choices=variants),
               Option("C", float, 1.0, "the largest step (pa-i) or the slack weight (pa-ii)", minimum=0,
                      exclusive_minimum=True),
               COST,
               Option("selection", str, "max-loss", "update against the cost-augmented argmax (max-loss) or the "
                      "prediction", choices=selections),
               Option("averaging", bool, True, "return the averaged weights"))

    def _check_options(self) -> None:
        super()._check_options()
        if self.variant == "pa" and self.C != self.option("C").default:
            raise OptionValueError("C applies to the pa-i and pa-ii variants, not 'pa' (whose step has no bound)")

    @property
    def averaged(self) -> bool:
        return self.averaging

    def _select(self, decoder: Decoder, scores, gold: np.ndarray) -> np.ndarray:
        if self.selection == "prediction":
            return decoder.argmax(scores)
        return decoder.loss_augmented_argmax(scores, gold, Cost(self.cost))

    def _step(self, w, batch, gold, predicted, indices, values, owner):
        """``τ Δφ`` for every instance of the batch (the formulas of the class docstring)."""
        n = batch.n_instances
        margin = np.bincount(owner, w[indices] * values, minlength=n)  # w·Δφ
        # ‖Δφ‖²: entries of one instance at the same weight are summed before squaring.
        keys, slot = np.unique(owner * len(w) + indices, return_inverse=True)
        merged = np.bincount(slot, values, minlength=len(keys))
        squared_norm = np.bincount(keys // len(w), merged**2, minlength=n)
        cost = Cost(self.cost).per_instance(gold, predicted, batch.lengths)
        loss = np.maximum(0.0, cost - margin)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.variant == "pa-ii":
                tau = loss / (squared_norm + 1 / (2 * self.C))
            else:
                tau = np.where(squared_norm > 0, loss / squared_norm, 0.0)
                if self.variant == "pa-i":
                    tau = np.minimum(self.C, tau)
        return values * tau[owner]


class MIRA(PassiveAggressive):
    """1-best MIRA (Crammer & Singer 2003; McDonald, Crammer & Pereira 2005): the passive-aggressive
    PA-I step ``τ = min(C, (ρ(y, ŷ) − w·Δφ)/‖Δφ‖²)`` against the model's own prediction ``ŷ =
    argmax_y w·φ(x, y)``, with the Hamming cost ``ρ`` for sequences, averaged."""

    name = "mira"
    summary = "1-best MIRA: a PA-I step against the prediction, with the Hamming cost"
    options = tuple(option for option in PassiveAggressive.options if option.name not in ("variant", "selection"))
    variant, selection = "pa-i", "prediction"


class VotedPerceptron(Perceptron):
    """The voted perceptron (Freund & Schapire 1999) in the primal, with the averaged and last hypotheses
    of the same run.

    Every update ``δ_k`` (the ``k``-th batch with a mistake) makes a new hypothesis ``w_k = Σ_{j≤k} δ_j``,
    current for ``c_k`` visits (its survival count: from the visit that ends its batch to the one
    before the next update; ``w_0 = 0`` until the first).  The voted prediction is

        ŷ = argmax_y Σ_k c_k [y = argmax_y' w_k·φ(x, y')],

    computed from the stored updates (sparse entries, not full vectors): the scores of every ``w_k``
    are cumulative sums of the updates' scores, in blocks.  ``hypothesis`` picks ``voted``,
    ``averaged`` (``(1/T) Σ_k c_k w_k``, the exact average) or ``last`` at prediction time (and for
    the dev selection).  Voting needs the multiclass decoder (a chain would need one Viterbi decoding
    per hypothesis); for a tagger only ``averaged`` and ``last`` are accepted, and the default (None)
    is ``voted`` for single instances and ``averaged`` for label chains.
    """

    name = "voted-perceptron"
    summary = "Freund & Schapire: every intermediate hypothesis votes with its survival count"
    averaged = True
    hypotheses = ("voted", "averaged", "last")
    # ``sparse``: the weights and sums of the rows or pairs the run touched, as the perceptron keeps them
    capabilities = Capabilities(scores_itself=True, sparse=True, hypotheses=hypotheses)
    options = (*PERCEPTRON_OPTIONS, Option("hypothesis", str, None, "the hypothesis to predict with, and to "
                                           "select the dev epoch by (default: voted for single instances, averaged "
                                           "for label chains)", choices=hypotheses, nullable=True))

    def _active(self, chains: bool) -> str:
        """``hypothesis``, or its default: voted, unless the model decodes label chains (averaged)."""
        return self.hypothesis or ("averaged" if chains else "voted")

    def fit(self, joint, decoder, X, y, dev=None, *, bias_row=None) -> VotedPerceptron:
        if self.hypothesis == "voted" and not isinstance(decoder, Multiclass):
            raise OptionValueError(f"the voted hypothesis needs the multiclass decoder, not {decoder.name!r}: choose "
                             "hypothesis='averaged' or 'last'")
        self._updates: list[tuple[np.ndarray, np.ndarray, int]] = []
        self._voting = isinstance(decoder, Multiclass)  # label chains cannot vote: their updates are not kept
        self.n_labels_ = joint.n_labels
        return super().fit(joint, decoder, X, y, dev)

    def _step(self, w, batch, gold, predicted, indices, values, owner):
        if not self._voting:
            return values
        if self._trick:  # the Δ trick's id features: rows past the real ones, never seen at prediction
            real = indices < self._trick.source.n_rows * self.n_labels_
            self._updates.append((indices[real], values[real], self._visits + batch.n_instances))
        else:
            self._updates.append((indices, values, self._visits + batch.n_instances))
        return values

    def _snapshot(self) -> _Votes:
        indices, values, visits = zip(*self._updates) if self._updates else ((), (), ())
        survival = np.diff(np.concatenate([[1], visits, [self._visits + 1]]))
        return _Votes(self._real_weights(self._state.current()), self._real_weights(self._hypothesis()),
                      np.array([len(i) for i in indices], dtype=np.int64),
                      np.concatenate(indices or [np.zeros(0, np.int64)]), np.concatenate(values or [np.zeros(0)]),
                      survival, self.n_labels_)

    #: The votes' snapshot keeps the weights as of now beside the average: no vector to save.
    _final_snapshot = _snapshot

    def _dev_score(self, decoder, joint, snapshot: _Votes, dev) -> float:
        hypothesis = self._active(joint.transitions)
        if hypothesis != "voted":
            return dev_accuracy(decoder, joint, snapshot.weights(hypothesis), dev)
        X, gold = dev
        return accuracy(snapshot.votes(X).argmax(axis=1), gold)

    def _keep(self, snapshot: _Votes) -> None:
        self._model = snapshot
        self.weights_ = snapshot.weights("last" if self.hypothesis == "last" else "averaged")

    def scores(self, joint: JointFeatureMap, X: FeatureMatrix) -> Scores:
        """The scores of ``hypothesis`` for the indexed instances ``X``: ``w·φ(x, y)`` with transitions, or
        the summed survival counts of the votes for ``voted``."""
        hypothesis = self._active(joint.transitions)
        if hypothesis == "voted":
            if joint.transitions:
                raise OptionValueError("the voted hypothesis needs the multiclass decoder; this model decodes "
                                       "label chains: choose hypothesis 'averaged' or 'last'")
            return Scores(self._model.votes(X), X.lengths)
        return joint.scores(self._model.weights(hypothesis), X)

    def model_arrays(self) -> dict:
        m = self._model
        return {"last": _full_vector(m.last), "averaged": _full_vector(m.averaged), "update_sizes": m.sizes,
                "update_indices": m.indices, "update_values": m.values, "survival": m.survival}

    #: The dtypes and shapes of :meth:`model_arrays`' arrays (a model file's are checked against them before
    #: :meth:`restore`): the flat ``weights``, the ``updates`` and their sparse ``entries``.
    array_specs = {
        "last": ArraySpec("f", ("weights",)), "averaged": ArraySpec("f", ("weights",)),
        "update_sizes": ArraySpec("iu", ("updates",)), "update_indices": ArraySpec("iu", ("entries",), below="weights"),
        "update_values": ArraySpec("f", ("entries",)), "survival": ArraySpec("iuf", ("updates+1",)),
    }

    def restore(self, arrays: dict, joint: JointFeatureMap) -> None:
        """Set the trained model from :meth:`model_arrays`' arrays (as :attr:`array_specs` describes them);
        arrays that do not fit each other or ``joint`` raise ``ValueError``."""
        self.n_labels_ = joint.n_labels
        last, averaged, sizes, survival = (arrays[name] for name in ("last", "averaged", "update_sizes", "survival"))
        if not (len(last) == len(averaged) == joint.size and len(survival) == len(sizes) + 1
                and sizes.sum() == len(arrays["update_indices"]) == len(arrays["update_values"])):
            raise ValueError(f"the update arrays do not fit each other or the {joint.n_labels} labels")
        if stores_pairs(self.capabilities, joint.n_labels):  # the pairs, as the run kept them
            last, averaged = (SparseWeights.from_dense(w, joint.transition_offset) for w in (last, averaged))
        self._keep(_Votes(last, averaged, sizes, arrays["update_indices"], arrays["update_values"], survival,
                          self.n_labels_))


class _Votes:
    """A voted perceptron's run: the last and averaged weights, and every update as sparse entries of
    the flat weight vector (``sizes[k]`` entries each) with the survival counts of the hypotheses."""

    _BLOCK = 1 << 22  # scores held at once: rows × updates × labels

    def __init__(self, last, averaged, sizes, indices, values, survival, n_labels: int):
        self.last, self.averaged = _flat(last), _flat(averaged)
        self.sizes, self.indices = np.asarray(sizes, dtype=np.int64), np.asarray(indices, dtype=np.int64)
        self.values, self.survival = np.asarray(values, dtype=np.float64), np.asarray(survival, dtype=np.float64)
        self.n_labels = n_labels

    def weights(self, hypothesis: str) -> np.ndarray | SparseWeights:
        return self.last if hypothesis == "last" else self.averaged

    def votes(self, X: FeatureMatrix) -> np.ndarray:
        """Summed survival counts of the label each hypothesis predicts for every row of ``X``."""
        L, K = self.n_labels, len(self.sizes)
        update = np.repeat(np.arange(K), self.sizes)
        row, label = np.divmod(self.indices, L)
        # Column k·L + y of U holds update k's weights of label y: X U gives every update's scores.
        n_rows = self.last.size // L
        U = scipy.sparse.csr_matrix((self.values, (row, update * L + label)), shape=(n_rows, K * L))
        rows = X.csr(n_rows)
        out = np.zeros((X.n_positions, L))
        out[:, 0] += self.survival[0]  # w_0 = 0 scores every label 0: the first label wins
        if not K:
            return out
        step = max(1, self._BLOCK // (K * L))
        for start in range(0, X.n_positions, step):
            increments = (rows[start : start + step] @ U).toarray().reshape(-1, K, L)
            winners = np.cumsum(increments, axis=1).argmax(axis=2)  # the label of w_1 ... w_K
            m = len(winners)
            slots = (np.arange(m)[:, None] * L + winners).ravel()
            weights = np.broadcast_to(self.survival[1:], winners.shape).ravel()
            out[start : start + m] += np.bincount(slots, weights, minlength=m * L).reshape(m, L)
        return out


def _flat(w: np.ndarray | SparseWeights) -> np.ndarray | SparseWeights:
    """A flat weight vector as the votes keep it: its stored pairs as they are, else a float64 array."""
    return w if isinstance(w, SparseWeights) else np.asarray(w, dtype=np.float64)


def _full_vector(w: np.ndarray | SparseWeights) -> np.ndarray | StreamedArray:
    """A flat weight vector as a model file keeps it, whole: stored pairs are written a block at a time."""
    if not isinstance(w, SparseWeights):
        return w
    return StreamedArray(np.dtype(np.float64), w.size, lambda: w.dense_blocks(_Votes._BLOCK))
