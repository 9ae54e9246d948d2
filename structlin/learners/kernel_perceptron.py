"""The kernel perceptron: the multiclass perceptron kept in dual form, as counts α.

Every perceptron update adds ``φ(x_t, y_t) − φ(x_t, ŷ)``, so the weights are
``w = Σ_t Σ_y α_{t,y} [φ(x_t, y_t) − φ(x_t, y)]`` with ``α_{t,y}`` the number of times label ``y``
was wrongly predicted for example ``t``.  With the joint kernel ``K((x,y),(x',y')) = k(x,x')·[y = y']``
the score of label ``y`` for an input ``x`` is ``Σ_s k(x_s, x) c_{s,y}``: one kernel row against the
support examples ``s`` (those with a mistake) times the ``(supports, labels)`` matrix of signed
coefficients ``c_{s,y} = [y = y_s] Σ_y' α_{s,y'} − α_{s,y}``.

Training keeps the scores ``F = K c`` of every training example up to date: a mistake on example
``t`` adds the kernel column ``k(X, x_t)`` to one label's scores and subtracts it from another's,
so a visit costs one row lookup and a mistake one sparse product over the training rows.  The
columns of support examples are cached (up to ``cache_mb``) for their next mistakes and removals.

One run gives three hypotheses, chosen by ``hypothesis`` at prediction time:

* ``last``: the coefficients after the last visit;
* ``averaged``: the mean of the hypotheses after every visit, ``c̄ = Σ_k s_k c_k / Σ_k s_k``: every
  update weighted by the visits it survived (exact, as in the primal averaged perceptron);
* ``voted`` (Freund & Schapire 1999): every intermediate hypothesis ``k`` votes for its label with
  its survival count ``s_k`` (the visits it was current for).

Both are computed from the log of mistakes (support, gold label, predicted label, visit).

With a ``budget`` the support set never exceeds that many examples: before a new support example
is added, the oldest (``removal="oldest"``, the Forgetron's idea) or a random one is removed
together with its coefficients.  The averaged and voted hypotheses then cover the visits after the
last removal only, whose hypotheses are exactly those of the run (earlier ones held supports that are
gone: restricted to the kept supports they were mostly empty and voted the first label).  Memory and
prediction time stay bounded; training still scores every training example after each mistake.  The
accuracy cost can be large (``scripts/bench_kernel.py`` measures it).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse

from ..decoders import Decoder, Multiclass
from ..errors import OptionValueError
from ..joint import JointFeatureMap, Scores
from ..kernels import KERNELS, Kernel, squared_norms
from ..matrix import FeatureMatrix
from ..modelfile import ArraySpec
from .epochs import epoch_order
from .protocol import CALLBACK, EPOCHS, PATIENCE, PROGRESS, SEED, SHUFFLE, Capabilities, HistoryField, Learner, Option
from .training import TrainingRun, accuracy, require_finite

HYPOTHESES = ("averaged", "last", "voted")
REMOVALS = ("oldest", "random")
_BLOCK = 1 << 22  # kernel values computed per block of prediction rows


class KernelPerceptron(Learner):
    """Multiclass kernel perceptron with α counts, seeded shuffling, early stopping on dev, an
    optional support budget, and the last, averaged and voted hypotheses of one run.

    After :meth:`fit`: ``kernel_`` (the :class:`~structlin.kernels.Kernel`, ``gamma`` resolved on the
    training data), ``support_`` (training indices of the support examples, in order of creation),
    ``n_support_``, ``alpha_`` (``(n_support_, labels)`` integer counts of wrong predictions),
    ``coef_`` (the signed coefficients of ``hypothesis``), ``history_`` (per epoch: ``train_mistakes``,
    ``n_support`` and the common fields), ``best_epoch_``, ``removed_`` (support examples removed by the
    budget) and ``weights_ = None``: the model is dual.
    """

    name = "kernel-perceptron"
    summary = "the perceptron in dual form (α counts), linear/poly/rbf kernels (classifiers)"
    capabilities = Capabilities(scores_itself=True, hypotheses=HYPOTHESES, sequences=False)
    options = (EPOCHS,
               Option("kernel", str, "poly", "the kernel (or, in Python, a callable f(A, B) on sparse row blocks)",
                      choices=tuple(KERNELS), special=("callable",)),
               Option("degree", int, 3, "the poly kernel's degree d", minimum=1),
               Option("gamma", float, "scale", "γ of the poly and rbf kernels, a number or 'scale' = "
                      "1/(features·Var(X)) on the training data", minimum=0, exclusive_minimum=True,
                      special=("scale",), parse=lambda text: text if text == "scale" else float(text)),
               Option("coef0", float, 1.0, "c₀ of the poly kernel (γx·x' + c₀)^d"),
               Option("hypothesis", str, "averaged", "the hypothesis to predict with, and to select the dev epoch by",
                      choices=HYPOTHESES),
               Option("budget", int, None, "at most this many support examples (default: no limit)", minimum=1,
                      nullable=True),
               Option("removal", str, "oldest", "which support example a full budget drops", choices=REMOVALS),
               SEED, SHUFFLE, PATIENCE,
               Option("cache_mb", float, 512.0, "memory for cached kernel columns, in MiB", minimum=0, cli=False),
               CALLBACK, PROGRESS)
    history_fields = (HistoryField("train_mistakes", "mistakes", "{:>6}"),
                      HistoryField("n_support", "support examples", "{:>6}"))

    def __init__(self, *args, **params):
        super().__init__(*args, **params)
        self.weights_ = None

    def _check_options(self) -> None:
        if self.budget is None and self.removal != self.option("removal").default:
            raise OptionValueError("removal chooses which support example a full budget drops: give a budget too")

    def _kernel(self) -> Kernel:
        """The kernel the options describe (``gamma`` may still be ``"scale"``)."""
        return Kernel(self.kernel, degree=self.degree, gamma=self.gamma, coef0=self.coef0)

    def params(self) -> dict:
        """The hyper-parameters, as stored in a model file (``gamma`` as resolved in training)."""
        return {**super().params(), **getattr(self, "kernel_", self._kernel()).params()}

    # --- training -------------------------------------------------------------------------------

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> KernelPerceptron:
        """Train on the indexed corpus ``X`` (one position per instance) with gold label ids ``y``;
        with ``dev = (X_dev, y_dev)`` the epoch whose ``hypothesis`` scores best on dev is kept and
        training stops after ``patience`` epochs without improvement."""
        if not isinstance(decoder, Multiclass) or (X.lengths != 1).any():
            raise OptionValueError("the kernel perceptron classifies single instances: it needs the multiclass decoder "
                             "and one position per instance")
        require_finite(X, "training")
        self.n_columns_ = joint.n_rows
        rows = X.csr(joint.n_rows).astype(np.float64)
        self.kernel_ = self._kernel().resolved(rows)
        run = _DualRun(self, rows, np.asarray(y), joint.n_labels)

        def score(model: _DualModel) -> float:
            X_dev, y_dev = dev
            return accuracy(decoder.argmax(Scores(self._scores(model, X_dev), X_dev.lengths)), y_dev)

        with TrainingRun(self, joint, decoder, dev, score=score) as training:
            bar = training.bar(self.epochs * X.n_instances, "inst")
            for _ in range(self.epochs):
                mistakes = run.epoch(bar)
                self._model = model = run.model()  # the callback and the dev evaluation see this epoch's model
                training.record(lambda model=model: model, train_mistakes=mistakes, n_support=len(model.support))
        self._model = training.finish()
        self.history_, self.best_epoch_, self.stopped_ = training.history, training.best_step, training.stopped
        self.removed_ = run.removed
        return self

    # --- the trained model ----------------------------------------------------------------------

    @property
    def support_(self) -> np.ndarray:
        return self._model.support

    @property
    def n_support_(self) -> int:
        return len(self._model.support)

    def support_size(self) -> int:
        return self.n_support_

    @property
    def alpha_(self) -> np.ndarray:
        return self._model.alpha

    @property
    def mistakes_(self) -> np.ndarray:
        """The run's mistakes on the support examples kept, in order: rows ``(training example, gold
        label id, predicted label id)``; hypothesis ``k`` of the voted perceptron follows mistake ``k``."""
        m = self._model
        return np.column_stack([m.support[m.mistake_support], m.mistake_gold, m.mistake_predicted])

    @property
    def survival_(self) -> np.ndarray:
        """Visits each hypothesis was current for: entry 0 before the first mistake, entry ``k`` after
        mistake ``k``; they sum to the number of visits (with a budget: of those after the last removal)."""
        return self._model.survival

    @property
    def coef_(self) -> np.ndarray:
        """The ``(n_support_, labels)`` coefficients of ``hypothesis`` (``last`` for ``voted``, which
        has one per intermediate hypothesis)."""
        return self._model.averaged if self.hypothesis == "averaged" else self._model.last

    def decision_function(self, X: FeatureMatrix) -> np.ndarray:
        """``(instances, labels)`` scores of ``hypothesis``: ``K(X, S) c`` for the last and averaged
        hypotheses, the summed survival counts of the votes for ``voted``."""
        return self._scores(self._model, X)

    def scores(self, joint: JointFeatureMap, X: FeatureMatrix) -> Scores:
        """:meth:`decision_function` as the decoder's :class:`~structlin.joint.Scores`."""
        return Scores(self.decision_function(X), X.lengths)

    def _scores(self, model: _DualModel, X: FeatureMatrix) -> np.ndarray:
        rows = X.csr(self.n_columns_).astype(np.float64)
        support = model.support_rows
        out = np.zeros((rows.shape[0], model.last.shape[1]))
        if not len(model.support):
            return out
        per_row = len(model.support) + (2 * len(model.survival) * model.last.shape[1] if self.hypothesis == "voted" else 0)
        step = max(1, _BLOCK // per_row)
        for start in range(0, rows.shape[0], step):
            K = self.kernel_(rows[start : start + step], support)
            if self.hypothesis == "voted":
                out[start : start + step] = model.votes(K)
            else:
                out[start : start + step] = K @ (model.averaged if self.hypothesis == "averaged" else model.last)
        return out

    def model_arrays(self) -> dict:
        """The arrays a model file keeps (support rows, counts, coefficients, the mistake log)."""
        if callable(self.kernel_.kernel):
            raise ValueError(f"a model with the user kernel {self.kernel_.name!r} cannot be saved: a file keeps "
                             "kernel names and parameters, never code")
        m = self._model
        S = m.support_rows
        return {"support": m.support, "support_indptr": S.indptr.astype(np.int64), "support_indices": S.indices,
                "support_values": S.data, "alpha": m.alpha, "coef_last": m.last, "coef_averaged": m.averaged,
                "mistake_support": m.mistake_support, "mistake_gold": m.mistake_gold,
                "mistake_predicted": m.mistake_predicted, "survival": m.survival,
                "n_columns": np.array([self.n_columns_])}

    #: The dtypes and shapes of :meth:`model_arrays`' arrays (a model file's are checked against them before
    #: :meth:`restore`): ``support`` examples, ``entries`` of their sparse rows, ``mistakes`` in the log.
    array_specs = {
        "support": ArraySpec("iu", ("support",)), "support_indptr": ArraySpec("iu", ("support+1",)),
        "support_indices": ArraySpec("iu", ("entries",), below="rows"), "support_values": ArraySpec("f", ("entries",)),
        "alpha": ArraySpec("iu", ("support", "labels")), "coef_last": ArraySpec("f", ("support", "labels")),
        "coef_averaged": ArraySpec("f", ("support", "labels")),
        "mistake_support": ArraySpec("iu", ("mistakes",), below="support"),
        "mistake_gold": ArraySpec("iu", ("mistakes",), below="labels"),
        "mistake_predicted": ArraySpec("iu", ("mistakes",), below="labels"),
        "survival": ArraySpec("iuf", ("mistakes+1",)), "n_columns": ArraySpec("iu", (1,)),
    }

    def restore(self, arrays: dict, joint: JointFeatureMap) -> None:
        """Set the trained model from :meth:`model_arrays`' arrays (as :attr:`array_specs` describes them);
        arrays that do not fit each other or ``joint`` raise ``ValueError``."""
        self.n_columns_ = int(arrays["n_columns"][0])
        n = len(arrays["support"])
        rows = scipy.sparse.csr_matrix((arrays["support_values"], arrays["support_indices"], arrays["support_indptr"]),
                                       shape=(n, self.n_columns_))
        rows.check_format(full_check=True)  # the row pointers increase from 0 to the entries
        model = _DualModel(arrays["support"], rows, arrays["alpha"], arrays["coef_last"], arrays["coef_averaged"],
                           arrays["mistake_support"], arrays["mistake_gold"], arrays["mistake_predicted"],
                           arrays["survival"])
        if not (model.alpha.shape == model.last.shape == model.averaged.shape == (n, joint.n_labels)
                and len(model.survival) == len(model.mistake_support) + 1 and self.n_columns_ == joint.n_rows):
            raise ValueError(f"the support arrays do not fit each other or the {joint.n_labels} labels")
        self._model = model
        self.kernel_ = self._kernel()  # a model file keeps the resolved gamma
        self.weights_ = None


class _DualModel:
    """What prediction needs: the support rows, the last and averaged coefficients, the α counts,
    and the mistake log with the survival counts of the voted perceptron."""

    def __init__(self, support, support_rows, alpha, last, averaged, mistake_support, mistake_gold,
                 mistake_predicted, survival):
        self.support, self.support_rows, self.alpha = np.asarray(support), support_rows, np.asarray(alpha)
        self.last, self.averaged = np.asarray(last, dtype=np.float64), np.asarray(averaged, dtype=np.float64)
        self.mistake_support, self.mistake_gold = np.asarray(mistake_support), np.asarray(mistake_gold)
        self.mistake_predicted, self.survival = np.asarray(mistake_predicted), np.asarray(survival)

    def votes(self, K: np.ndarray) -> np.ndarray:
        """Summed survival counts of the labels every intermediate hypothesis predicts, for the
        kernel rows ``K`` (``(rows, supports)``): hypothesis ``k`` has the scores of the first ``k``
        mistakes, a cumulative sum; hypothesis 0 (no mistake yet) scores every label 0."""
        m, M, L = K.shape[0], len(self.mistake_support), self.last.shape[1]
        steps = np.zeros((m, M + 1, L))
        column = K[:, self.mistake_support]
        k = np.arange(1, M + 1)
        steps[:, k, self.mistake_gold] = column
        steps[:, k, self.mistake_predicted] = -column
        winners = np.cumsum(steps, axis=1).argmax(axis=2)
        slots = (np.arange(m)[:, None] * L + winners).ravel()
        weights = np.broadcast_to(self.survival, winners.shape).ravel()
        return np.bincount(slots, weights, minlength=m * L).reshape(m, L)


class _DualRun:
    """The state of a training run: coefficients per support id (a new id each time an example
    becomes a support example), the α counts, the scores ``F`` of every training
    example, the kernel column cache and the mistake log."""

    def __init__(self, learner: KernelPerceptron, rows: scipy.sparse.csr_matrix, y: np.ndarray, n_labels: int):
        self.learner, self.rows, self.y, self.L = learner, rows, y, n_labels
        n = rows.shape[0]
        self.F = np.zeros((n, n_labels))
        self.coef = np.zeros((0, n_labels))
        self.counts = np.zeros((0, n_labels), dtype=np.int64)
        self.example_of: list[int] = []  # support id → training example
        self.alive: OrderedDict[int, int] = OrderedDict()  # training example → support id, oldest first
        self.log: list[tuple[int, int, int, int]] = []  # (support id, gold, predicted, visit)
        self.cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.cache_limit = int(learner.cache_mb * 2**20 // max(1, 8 * n))
        self.squared_norms = squared_norms(rows)  # ‖x_t‖² of every training example, for the rbf kernel
        self.visits = self.removed = self.last_removal = 0
        self.rng = np.random.default_rng(learner.seed)

    def epoch(self, bar) -> int:
        """One pass over the training examples; the number of mistakes."""
        n = self.rows.shape[0]
        order = epoch_order(np.ones(n, dtype=np.int64), 1, self.rng) if self.learner.shuffle else np.arange(n)
        F, y, mistakes = self.F, self.y, 0
        for position, t in enumerate(order.tolist()):
            self.visits += 1
            predicted = int(F[t].argmax())
            if predicted != y[t]:
                self._update(t, int(y[t]), predicted)
                mistakes += 1
            if position % 256 == 255:
                bar.update(256)
        bar.update(n % 256)
        return mistakes

    def _update(self, t: int, gold: int, predicted: int) -> None:
        """The perceptron update on example ``t``: ``α_{t,ŷ} += 1``."""
        sid = self.alive.get(t)
        if sid is None:
            budget = self.learner.budget
            if budget is not None and len(self.alive) >= budget:
                self._remove()
            sid = self._new_support(t)
        column = self._column(sid)
        self.F[:, gold] += column
        self.F[:, predicted] -= column
        self.coef[sid, gold] += 1
        self.coef[sid, predicted] -= 1
        self.counts[sid, predicted] += 1
        self.log.append((sid, gold, predicted, self.visits))

    def _new_support(self, t: int) -> int:
        sid = len(self.example_of)
        self.example_of.append(t)
        self.alive[t] = sid
        if sid == len(self.coef):
            grow = max(16, len(self.coef))
            self.coef = np.vstack([self.coef, np.zeros((grow, self.L))])
            self.counts = np.vstack([self.counts, np.zeros((grow, self.L), dtype=np.int64)])
        return sid

    def _remove(self) -> None:
        """Remove one support example (the oldest or a random one) and its share of the scores."""
        if self.learner.removal == "oldest":
            t = next(iter(self.alive))
        else:
            t = list(self.alive)[int(self.rng.integers(len(self.alive)))]
        sid = self.alive[t]
        self.F -= np.outer(self._column(sid), self.coef[sid])
        del self.alive[t]
        self.cache.pop(sid, None)
        self.coef[sid] = 0
        self.counts[sid] = 0
        self.removed += 1
        self.last_removal = self.visits

    def _column(self, sid: int) -> np.ndarray:
        """``k(X, x_t)`` for support id ``sid``: its kernel values against every training example."""
        column = self.cache.get(sid)
        if column is not None:
            self.cache.move_to_end(sid)
            return column
        t = self.example_of[sid]
        kernel = self.learner.kernel_
        if callable(kernel.kernel):
            column = kernel(self.rows, self.rows[t]).ravel()
        else:  # a sparse matrix times a dense vector: cheaper than the sparse × sparse product
            products = self.rows @ self.rows[t].toarray().ravel()
            column = kernel.of_products(products, self.squared_norms, self.squared_norms[t])
        if self.cache_limit:
            if len(self.cache) >= self.cache_limit:
                self.cache.popitem(last=False)
            self.cache[sid] = column
        return column

    def model(self) -> _DualModel:
        """The trained model as of now: the live support examples in order of creation, their
        coefficients, and the mistakes on them with the survival counts of the hypotheses."""
        ids = np.array(sorted(self.alive.values()), dtype=np.int64)
        position = np.full(len(self.example_of), -1, dtype=np.int64)
        position[ids] = np.arange(len(ids))
        log = np.array(self.log, dtype=np.int64).reshape(-1, 4)
        log = log[position[log[:, 0]] >= 0]
        where, gold, predicted, visits = position[log[:, 0]], log[:, 1], log[:, 2], log[:, 3]
        # Hypothesis k (after the k-th kept mistake) is current from its visit up to the next one; only
        # the visits after the last removal count (all of them without a budget).
        first = min(self.last_removal + 1, self.visits)  # the final hypothesis always counts
        bounds = np.concatenate([[1], visits, [self.visits + 1]])
        survival = np.maximum(0, bounds[1:] - np.maximum(bounds[:-1], first))
        # Update m is part of every hypothesis from the m-th on: it weighs the visits they survived.
        weight = np.cumsum(survival[::-1])[::-1][1:] / max(survival.sum(), 1)
        averaged = np.zeros((len(ids), self.L))
        np.add.at(averaged, (where, gold), weight)
        np.add.at(averaged, (where, predicted), -weight)
        support = np.array(self.example_of, dtype=np.int64)[ids]
        return _DualModel(support, self.rows[support], self.counts[ids].copy(), self.coef[ids].copy(), averaged,
                          where, gold, predicted, survival)
