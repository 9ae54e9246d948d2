"""Naive Bayes as a linear model: multinomial, complement and Bernoulli NB fitted in closed form into the
joint weights, so that prediction is ``argmax_y w·φ(x, y)`` through the same decoder as every other learner.

NB's log joint probability is linear in the feature vector ``x`` (counts ``x_f`` of feature ``f``)::

    multinomial:  log P(y, x) = log P(y) + Σ_f x_f log P(f|y)                       (+ a term without y)
    Bernoulli:    log P(y, x) = log P(y) + Σ_f log(1 − P(f|y)) + Σ_{f: x_f = 1} [log P(f|y) − log(1 − P(f|y))]

with smoothed estimates (``α = 1``: Laplace; other ``α > 0``: Lidstone)::

    multinomial:  P(f|y) = (N_fy + α) / (N_y + α·V)     N_fy = Σ_{x of class y} x_f,  N_y = Σ_f N_fy
    Bernoulli:    P(f|y) = (D_fy + α) / (D_y + 2α)      D_fy = documents of class y with f,  D_y = documents of y

Complement NB (Rennie, Shih, Teevan & Karger 2003) estimates each label's parameters from the documents of
every *other* label, which are many and balanced where a small label's own are few, and scores a label
by how unlike its complement a document is::

    complement:   score(y, x) = − Σ_f x_f log P̃(f|y)     P̃(f|y) = (N_f − N_fy + α) / (N − N_y + α·V)

(``N_f``, ``N``: the sums over all labels) — the rule of the paper's algorithm (its Table 4, without the prior:
the complement's estimates are balanced, and a prior would bring back the skew they remove) without weight
normalisation, as scikit-learn's ``ComplementNB`` (whose probabilities are likewise the softmax of the scores,
not Bayes' rule).

The estimates are over the ``V`` features seen in training (a feature seen only at prediction time has no row and is
ignored, as NB ignores out-of-vocabulary words), and the prior ``P(y) = D_y / D``, unsmoothed.  So the
weight of feature ``f`` and label ``y`` is ``log P(f|y)`` (Bernoulli: ``log P(f|y) − log(1 − P(f|y))``),
and the per-label constant ``log P(y)`` (Bernoulli: ``+ Σ_f log(1 − P(f|y))``; the complement: none) is the
weight of the *bias feature*, the one feature every document has (a ``bias`` template in the feature set, e.g.
``features/text-nb.toml``): the joint map of a classifier has no other place for a label constant.  The
model passes the bias feature's row (``bias_row``) to :meth:`NaiveBayes.fit`, which sets that row to
``constant / b`` for the bias feature's value ``b``, so that ``b · weight`` is the constant.  The softmax
of the scores (the Multiclass decoder's marginals, ``Classifier.predict_proba``) is then Bayes' rule,
``P(y|x) = P(y, x) / Σ_y' P(y', x)``.

Feature hashing is signed: the value of bucket ``f`` is ``s_f · c_f`` with the hash sign ``s_f = ±1`` and
the count ``c_f``.  NB counts ``|value|`` and stores every weight row with its bucket's sign,
``w_fy = s_f · log P(f|y)``, so that ``value · w_fy = c_f · log P(f|y)``.  This is exact unless features of
opposite signs share a bucket (a hash collision): the row then takes the sign of the bucket's summed
training values, and ``history_`` counts such rows (``mixed_sign_rows``).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse

from .. import memory
from ..decoders import Decoder, decode_corpus
from ..errors import OptionValueError
from ..joint import JointFeatureMap, SparseWeights, pairs_smaller
from ..matrix import FeatureMatrix, add_column_product, ordered_folds, ranges
from .protocol import SEED_MAX, Capabilities, HistoryField, Learner, Option
from .training import TrainingRun, require_finite


#: The smoothings ``alpha=None`` chooses from, on dev (docs/benchmarks.md, "Defaults").
ALPHAS = (1.0, 0.3, 0.1, 0.03, 0.01)
#: The estimates ``variant=None`` chooses from, on dev, with alpha.
VARIANTS = ("multinomial", "complement")
#: The shares of the vocabulary ``vocabulary=None`` chooses from, on dev, with alpha (and variant): the features
#: most informative of the label kept (docs/benchmarks.md, "Defaults").
SHARES = (1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)
#: The training values ``weighting=None`` chooses from, on dev, with alpha: the counts, or Rennie et al.'s
#: transformed counts (:func:`_tf_idf`).
WEIGHTINGS = ("counts", "tf-idf")
#: The feature rows whose weights are made at a time (:meth:`_CountTable.weights`).
_ROWS_AT_A_TIME = 4096
#: The folds of the cross-validation that chooses the settings when there is no dev (docs/benchmarks.md, "Naive
#: Bayes's settings by cross-validation": a held-out tenth chose worse on the panel's text corpora on average).
FOLDS = 5


VOCABULARY = Option("vocabulary", float, None, "the share of the training features kept, those whose presence tells "
                    "most about the label (mutual information; default: chosen on dev with alpha among "
                    f"{', '.join(map(str, SHARES))}; with --no-tune, 1: all)", minimum=0, exclusive_minimum=True,
                    maximum=1, nullable=True, untuned=1.0)


class NaiveBayes(Learner):
    """Multinomial or complement naive Bayes (the feature values are counts of the features' events: a document
    model gives it the feature set's counts, ``capabilities.counts``), fitted in closed form.

    ``alpha`` is the additive smoothing of the estimates (1: Laplace), ``variant`` the estimate
    (``multinomial`` or ``complement``, see the module docstring), ``vocabulary`` the share of the training
    features kept: those whose presence in a document tells most about its label, by the mutual information
    of the two (McCallum & Nigam 1998's feature selection; the others get no weight), ``weighting`` what the
    estimates sum: the training counts, or Rennie et al.'s transformed counts (:func:`_tf_idf`; a document to
    classify is scored on its counts either way, as in the paper).  By default (None) all four are chosen, among
    :data:`SHARES` × :data:`WEIGHTINGS` × :data:`VARIANTS` × :data:`ALPHAS`, by accuracy on dev —
    without dev, by :data:`FOLDS`-fold cross-validation on folds of runs of each label's training instances in
    the order given (:func:`~structlin.matrix.ordered_folds`), each fold scored by the counts of the others —
    and the model is then estimated from all the training data;
    ``chosen_`` and ``candidates_`` say what was chosen and each candidate's score.  Each candidate costs one
    pass over the count table of the vocabulary and a product with the held-out documents, not a training
    run.  It classifies single instances
    (the Multiclass decoder; a chain of NB emissions would be an HMM, not implemented here) and needs a
    bias feature (see the module docstring) whose value is the same in every training instance, i.e.
    feature values without normalisation.

    After :meth:`fit`: ``weights_``, ``best_epoch_`` (1) and ``history_``, one record (step 1):
    ``train_mistakes`` and ``train_token_errors`` (misclassified training positions), ``mixed_sign_rows``
    and the common fields.
    """

    name = "naive-bayes"
    summary = "multinomial or complement naive Bayes in closed form, as joint weights (classifiers)"
    # The softmax of the scores is Bayes' rule; fit takes the row of the bias feature, which holds the
    # per-label constant.
    capabilities = Capabilities(probabilistic=True, needs_bias=True, counts=True, sequences=False)
    options = (Option("alpha", float, None, "additive smoothing of P(f|y): 1 = Laplace, other α > 0 = Lidstone "
                      f"(default: chosen on dev among {', '.join(map(str, ALPHAS))}; with --no-tune, 1)", minimum=0,
                      exclusive_minimum=True, nullable=True, untuned=1.0),
               Option("variant", str, None, "the estimate: multinomial, or complement (from the other labels' "
                      "documents; default: chosen on dev with alpha; with --no-tune, multinomial)", choices=VARIANTS,
                      nullable=True, untuned="multinomial"),
               VOCABULARY,
               Option("weighting", str, None, "the training values the estimates sum: counts, or tf-idf (Rennie et al. "
                      "2003: log(1 + count)·idf, each document of unit length; default: chosen on dev with alpha; "
                      "with --no-tune, counts)", choices=WEIGHTINGS, nullable=True, untuned="counts"),
               Option("seed", int, 0, "where the cross-validation folds that choose the settings without dev are "
                      "cut (each label's documents in order: seed 1 cuts half a fold after seed 0)",
                      minimum=0, maximum=SEED_MAX))
    history_fields = (HistoryField("train_mistakes", "mistakes", "{:>6}"),)

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> NaiveBayes:
        """Set ``weights_`` to the NB log-probabilities of the indexed corpus ``X`` with gold label ids ``y``
        (one per position); ``bias_row`` is the weight row of the bias feature."""
        run = TrainingRun(self, joint, decoder, dev)
        table = self._table(joint, decoder, X, y, bias_row)
        settings = self._fitting(table, self._settings())
        setting = settings[0]
        if len(settings) > 1 and (dev is not None or X.n_instances > 1):
            scores = table.accuracies(settings, *dev) if dev is not None else self._cross_validated(
                joint, X, y, bias_row, settings)
            self.candidates_ = [{**s, "dev_accuracy": float(a)} for s, a in zip(settings, scores)]
            setting = settings[int(np.argmax(scores))]  # ties: the first (the larger vocabulary, multinomial, alpha)
            self.chosen_ = {name: value for name, value in setting.items() if getattr(self, name) is None}
        w, mixed_sign_rows = table.weights(**setting)
        errors = int(np.count_nonzero(decode_corpus(decoder, joint, w, X) != y))
        with run:
            run.record(lambda: w, train_mistakes=errors, train_token_errors=errors, mixed_sign_rows=mixed_sign_rows)
        self.weights_ = run.finish()
        self.history_, self.best_epoch_ = run.history, run.best_step
        return self

    def held_out_score(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
                       held: tuple[FeatureMatrix, np.ndarray], *, bias_row: int | None = None) -> float:
        """The best held-out accuracy among the settings, as :meth:`fit` with ``held`` as dev would keep it, from the
        count table alone: no weights are made (the learner stays untrained)."""
        table = self._table(joint, decoder, X, y, bias_row)
        return float(table.accuracies(self._fitting(table, self._settings()), *held).max())

    def _table(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
               bias_row: int | None) -> _CountTable:
        """The count table of the training instances, once the decoder and the bias feature are known to serve."""
        if decoder.uses_transitions:
            raise OptionValueError(f"{self.name} classifies single instances: it needs the multiclass decoder, "
                                   f"not {decoder.name!r} (naive Bayes over label chains, an HMM, is not implemented)")
        if bias_row is None:
            raise OptionValueError(f"{self.name} keeps log P(y) in the weight of a bias feature: use a feature set "
                                   "with a bias template (bundled: text-nb, text-presence)")
        require_finite(X, "training")
        return _CountTable(self, joint, X, y, bias_row)

    def _cross_validated(self, joint: JointFeatureMap, X: FeatureMatrix, y: np.ndarray, bias_row: int,
                         settings: list[dict]) -> np.ndarray:
        """Each setting's accuracy over :data:`FOLDS` folds of the instances (as many as there are instances, if
        fewer; :func:`~structlin.matrix.ordered_folds`), each scored by the count table of the others."""
        fold = ordered_folds(y, min(FOLDS, X.n_instances), self.seed)
        correct = np.zeros(len(settings))
        for k in np.unique(fold):
            held, rest = np.flatnonzero(fold == k), np.flatnonzero(fold != k)
            table = _CountTable(self, joint, X.take(rest), y[X.positions(rest)], bias_row)
            correct += table.accuracies(settings, X.take(held), y[X.positions(held)]) * len(held)
        return correct / X.n_instances

    def _fitting(self, table: _CountTable, settings: list[dict]) -> list[dict]:
        """The ``settings`` whose weights fit in the memory available (:func:`~structlin.memory.fits`; with thousands
        of labels a weight for every kept feature and label can take gigabytes), those left out named in a warning;
        none is refused, naming the size of the smallest."""
        kept = [setting for setting in settings if memory.fits(table.weight_bytes(setting))]
        shape = f"{len(table.rows):,} features × {len(table.documents):,} labels"
        if not kept:
            memory.require(min(map(table.weight_bytes, settings)), f"{self.name}'s model ({shape})",
                           "keep fewer features (--vocabulary, the share most informative of the label), fewer "
                           f"hash buckets (--bits), or use {memory.PAIRS_LEARNER}")
        if len(kept) < len(settings):
            left = sorted({setting.get("vocabulary", 1.0) for setting in settings} -
                          {setting.get("vocabulary", 1.0) for setting in kept}, reverse=True)
            warnings.warn(f"{self.name}: vocabulary shares {', '.join(map(str, left))} not tried: their weights "
                          f"({shape}) need more than the {memory.readable_size(memory.available())} of memory "
                          "available", stacklevel=2)
        return kept

    def _settings(self) -> list[dict]:
        """The candidate settings, every combination of :meth:`_choices` (ties on dev go to the first: the
        larger vocabulary, multinomial, the larger alpha)."""
        choices = self._choices()
        return [dict(zip(choices, values)) for values in itertools.product(*choices.values())]

    def _choices(self) -> dict[str, tuple]:
        """Each setting's candidates: the given value, else the values it is chosen among."""
        return {"vocabulary": _given(self.vocabulary, SHARES), "weighting": _given(self.weighting, WEIGHTINGS),
                "variant": _given(self.variant, VARIANTS), "alpha": _given(self.alpha, ALPHAS)}

    def _events(self, values: np.ndarray) -> np.ndarray:
        """How many events of its feature each training entry counts: the count ``|value|``."""
        return np.abs(values)

    def _log_likelihoods(self, table: _CountTable, weighting: str, sizes: list[int], alpha: float, variant: str):
        """For each ``k`` of ``sizes``, the weights of the ``k`` most informative features of ``table`` — ``log P(f|y)``,
        or for the complement ``−log P̃(f|y)`` — as ``W[f, y] = row[f] + column[y] + cells`` (``row`` None for 0;
        ``cells``: the table's non-zero cells' own terms, of which the first ``table.cells_before(k)`` are the kept
        features'), with the per-label constant: ``log P(y)``, none for the complement (−∞ for a label without training
        documents either way).  A count of 0 gives the same term to every feature of a label (multinomial) or to every
        label of a feature (complement), so only the non-zero cells have terms of their own::

            multinomial   W = log(c + α) − log(N_y + αk) = [log α − log(N_y + αk)] + log(1 + c/α)
            complement    W = log(O_y + αk) − log(r_f − c + α) = −log(r_f + α) + log(O_y + αk) + log((r_f + α)/(r_f − c + α))

        with ``N_y`` the counts of label ``y`` over the kept features, ``r_f`` feature f's over every label and ``O_y``
        the other labels' over the kept features."""
        counts, L = table.values[weighting], len(table.documents)
        if variant == "complement":
            row_sums = table.row_sums(weighting)
            before = row_sums[table.cell_rank]
            row, cells = -np.log(row_sums + alpha), np.log(before + alpha) - np.log(before - counts + alpha)
            constant = np.where(table.documents > 0, 0.0, -np.inf)
            kept_sums = np.concatenate([[0.0], np.cumsum(row_sums)])
        else:
            row, cells, constant = None, np.log1p(counts / alpha), table.log_prior
        for k in sizes:
            summed = table.label_sums(counts, k)  # N_y
            if not k:  # no features: no weights to normalise
                column = np.zeros(L)
            elif variant == "complement":
                column = np.log(kept_sums[k] - summed + alpha * k)
            else:
                column = np.log(alpha) - np.log(summed + alpha * k)
            yield row, column, cells, constant


class BernoulliNaiveBayes(NaiveBayes):
    """Bernoulli naive Bayes: every training feature is an event that a document has or lacks.  Its
    feature values must be binary (every value ±1): a model gives it the presence of the feature set's
    features (``capabilities.presence``), as scikit-learn's ``BernoulliNB`` binarises its input."""

    name = "bernoulli-nb"
    summary = "Bernoulli naive Bayes (binary features) in closed form, as joint weights (classifiers)"
    capabilities = replace(NaiveBayes.capabilities, presence=True, counts=False)
    options = tuple(option for option in NaiveBayes.options if option.name not in ("variant", "weighting"))

    def _choices(self) -> dict[str, tuple]:
        """The candidate vocabularies and smoothings (there is one estimate)."""
        return {"vocabulary": _given(self.vocabulary, SHARES), "alpha": _given(self.alpha, ALPHAS)}

    def _events(self, values: np.ndarray) -> np.ndarray:
        """Presence: 1 for every entry, whose values must all be ±1."""
        if not np.all(np.abs(values) == 1):
            raise OptionValueError(f"{self.name} needs binary feature values (values = \"binary\", normalize = "
                                   f"\"none\"), got {values[np.abs(values) != 1][0]:g}")
        return np.ones(len(values))

    def _log_likelihoods(self, table: _CountTable, weighting: str, sizes: list[int], alpha: float):
        """As :meth:`NaiveBayes._log_likelihoods`: ``W[f, y] = log P(f|y) − log(1 − P(f|y))`` and the constant
        ``log P(y) + Σ_f log(1 − P(f|y))`` over the ``k`` kept features; a feature absent from every document of ``y``
        has ``P(f|y) = p₀(y) = α/(D_y + 2α)``, so only the non-zero cells differ from the label's terms."""
        documents, label = table.documents, table.cell_label
        p0 = alpha / (documents + 2 * alpha)
        column, absent = np.log(p0) - np.log1p(-p0), np.log1p(-p0)
        p = (table.values[weighting] + alpha) / (documents[label] + 2 * alpha)
        cells = np.log(p) - np.log1p(-p) - column[label]
        absent_cells = np.log1p(-p) - absent[label]
        for k in sizes:
            yield None, column, cells, table.log_prior + k * absent + table.label_sums(absent_cells, k)


class _CountTable:
    """The count table of some training instances (``X``, gold ids ``y``) for the settings of ``learner``: the features
    these instances have (the vocabulary), ranked by :func:`_information`, and the non-zero cells ``(feature, label)``
    of their counts, in rank order (a feature meets few labels: the table is kept sparse); each setting's weights
    (:meth:`weights`), or only its accuracy on held-out instances (:meth:`accuracies`), come from it."""

    def __init__(self, learner: NaiveBayes, joint: JointFeatureMap, X: FeatureMatrix, y: np.ndarray, bias_row: int):
        self.learner, self.joint, self.bias_row = learner, joint, bias_row
        position = X.entry_positions()
        self.bias_value = _bias_value(X, position, bias_row)
        value = X.values.astype(np.float64)
        events = learner._events(value)
        counted = (X.indices != bias_row) & (events > 0)  # the bias is no event; a value of 0 counts none
        row, position, value, events = X.indices[counted], position[counted], value[counted], events[counted]
        label = y.astype(np.int32)[position]  # 32-bit ids: the entries' arrays are the table's largest
        L = joint.n_labels
        seen = np.bincount(row, minlength=bias_row + 1) > 0
        self.rows = np.flatnonzero(seen)  # the vocabulary, increasing
        local = (np.cumsum(seen, dtype=np.int32) - 1)[row]
        del row
        V = len(self.rows)
        sign = np.where(np.bincount(local, value, minlength=V) < 0, -1.0, 1.0)
        self.mixed_sign_rows = int(np.count_nonzero(np.bincount(local[np.sign(value) != sign[local]], minlength=V)))
        del value
        self.documents = np.bincount(y, minlength=L).astype(np.float64)

        def cells(entry_values: np.ndarray) -> scipy.sparse.csr_array:
            """The entries' values summed by (feature, label): a counting sort (COO to CSR), each row's labels
            increasing; every table of the same entries has the same cells."""
            return scipy.sparse.csr_array((entry_values, (local, label)), shape=(V, L))

        present = cells(np.ones(len(local)))
        tables = {"counts": cells(events)}
        if "tf-idf" in learner._choices().get("weighting", ()):
            frequency = np.bincount(local, minlength=V).astype(np.float64)  # documents with the feature
            tables["tf-idf"] = cells(_tf_idf(events, local, position, frequency, X.n_positions))
        information = _information(present, self.documents)
        self.ranked = np.argsort(-information, kind="stable")
        self.rank = np.empty(V, np.int64)  # of each feature of the vocabulary
        self.rank[self.ranked] = np.arange(V)
        ranked = present[self.ranked]  # the cells in rank order: each feature's row, its labels increasing
        self._cells_before = ranked.indptr.astype(np.int64)
        self.cell_rank = np.repeat(np.arange(V), np.diff(self._cells_before))
        self.cell_label = ranked.indices.astype(np.int64)
        self.values = {weighting: table[self.ranked].data for weighting, table in tables.items()}
        self.sign = sign[self.ranked]
        with np.errstate(divide="ignore"):  # a label without training instances: log P(y) = −∞
            self.log_prior = np.log(self.documents / self.documents.sum())

    def cells_before(self, k: int) -> int:
        """How many non-zero cells the ``k`` most informative features have (they come first)."""
        return int(self._cells_before[k])

    def row_sums(self, weighting: str) -> np.ndarray:
        """Each feature's values summed over the labels, in rank order."""
        return np.bincount(self.cell_rank, self.values[weighting], minlength=len(self.rows))

    def label_sums(self, cell_values: np.ndarray, k: int) -> np.ndarray:
        """``cell_values`` (one per cell) summed by label over the ``k`` most informative features."""
        stop = self.cells_before(k)
        return np.bincount(self.cell_label[:stop], cell_values[:stop], minlength=len(self.documents))

    def _size(self, vocabulary: float) -> int:
        """How many of the most informative features a vocabulary share keeps (at least one, of any)."""
        return max(1, round(vocabulary * len(self.rows))) if len(self.rows) else 0

    def _paths(self, settings: list[dict]):
        """``(index, k, row, column, cells, constant)`` for every setting (:meth:`NaiveBayes._log_likelihoods`), the
        settings that differ in their vocabulary only computed together."""
        groups: dict[tuple, list[int]] = {}
        for j, setting in enumerate(settings):
            rest = {name: value for name, value in setting.items() if name != "vocabulary"}
            groups.setdefault(tuple(sorted(rest.items())), []).append(j)
        for key, members in groups.items():
            setting = dict(key)
            weighting = setting.pop("weighting", "counts")
            sizes = [self._size(settings[j].get("vocabulary", 1.0)) for j in members]
            for j, k, path in zip(members, sizes, self.learner._log_likelihoods(self, weighting, sizes, **setting)):
                yield j, k, *path

    def _cell_matrix(self, cells: np.ndarray, k: int) -> scipy.sparse.csr_array:
        """The cells' terms of the ``k`` most informative features as a ``k × L`` matrix."""
        stop = self.cells_before(k)
        return scipy.sparse.csr_array((cells[:stop], self.cell_label[:stop], self._cells_before[: k + 1]),
                                      shape=(k, len(self.documents)))

    def _stored_as_pairs(self, k: int) -> bool:
        """Whether the weights of the ``k`` most informative features (and the bias feature's) take less memory as
        (feature, label) pairs than as the joint map's flat vector."""
        return pairs_smaller((k + 1) * len(self.documents), self.joint.size)

    def weight_bytes(self, setting: dict) -> int:
        """The memory a setting's weights need: 16 bytes for each weight :meth:`weights` stores (a pair's key and value;
        a flat vector's value, and as much again when the model's file is loaded, its values read beside it)."""
        k = self._size(setting.get("vocabulary", 1.0))
        return 16 * ((k + 1) * len(self.documents) if self._stored_as_pairs(k) else self.joint.size)

    def weights(self, **setting) -> tuple[np.ndarray | SparseWeights, int]:
        """The joint weights of a setting (:meth:`NaiveBayes._settings`) and the number of rows with training values
        of both signs: the flat vector, or the kept features' and the bias feature's rows as
        :class:`~structlin.joint.SparseWeights` when they are the smaller (a small vocabulary share)."""
        _, k, row, column, cells, constant = next(self._paths([setting]))
        L, terms = len(self.documents), self._cell_matrix(cells, k)
        weight_rows = np.append(self.rows[self.ranked[:k]], self.bias_row)  # rank order, then the bias feature's
        as_pairs = self._stored_as_pairs(k)
        if as_pairs:
            order = np.argsort(weight_rows)
            keys = (weight_rows[order, None] * L + np.arange(L)).ravel()
            block = np.empty(k + 1, np.int64)
            block[order] = np.arange(k + 1)  # each weight row's place among the stored rows
            values = np.empty((k + 1, L))
        else:
            w = np.zeros(self.joint.size)
            block, values = weight_rows, self.joint.emission_weights(w)
        for first in range(0, k, _ROWS_AT_A_TIME):  # a block of rows at a time: no other array of every row's labels
            stop = min(first + _ROWS_AT_A_TIME, k)
            kept = terms[first:stop].toarray() + column
            if row is not None:
                kept += row[first:stop, None]
            kept *= self.sign[first:stop, None]
            values[block[first:stop]] = kept
        values[block[k]] = constant / self.bias_value
        if as_pairs:
            tail = np.zeros(self.joint.size - self.joint.transition_offset)
            return SparseWeights(keys, values.ravel(), tail, self.joint.size), self.mixed_sign_rows
        return w, self.mixed_sign_rows

    def accuracies(self, settings: list[dict], X: FeatureMatrix, y: np.ndarray) -> np.ndarray:
        """The accuracy of each setting's weights on instances ``X`` with gold ids ``y``, without making the weights:
        with ``v`` an instance's signed values on the features it has of the vocabulary (columns in rank order, the
        kept ones a prefix), its scores are ``v·cells`` (the cells' terms of those features, zero elsewhere), plus
        ``(Σ v)·column + constant`` (the bias feature's value times its weight); ``v·row``, the same for every label,
        changes no argmax.  Only the features these instances have are made dense, once for each group of settings,
        whose products over a growing prefix of them are added up as one product's."""
        row, position = X.indices.astype(np.int64), X.entry_positions()
        local = np.minimum(np.searchsorted(self.rows, row), max(len(self.rows) - 1, 0))
        known = (self.rows[local] == row) & (row != self.bias_row) if len(self.rows) else np.zeros(len(row), bool)
        entry_rank = self.rank[local[known]]
        used, column_of = np.unique(entry_rank, return_inverse=True)  # the ranks these instances have, increasing
        values = scipy.sparse.csc_array((X.values[known].astype(np.float64) * self.sign[entry_rank],
                                         (position[known], column_of.ravel())), shape=(X.n_positions, len(used)))
        starts, stops = self._cells_before[used], self._cells_before[used + 1]
        cell = ranges(starts, stops)
        cell_row, cell_label = np.repeat(np.arange(len(used)), stops - starts), self.cell_label[cell]
        totals, out = {}, np.zeros(len(settings))  # totals by k: the sums of the instances' values on the kept features

        def score(group: list) -> None:
            """The accuracies of a group of settings (one cell term each), their scores grown from the fewest kept
            features to the most (the kept columns a prefix: each setting adds the columns it keeps beyond the last)."""
            top = int(np.searchsorted(used, max(path[1] for path in group)))  # the columns any setting keeps
            below = cell_row < top
            dense = np.zeros((top, len(self.documents)))
            dense[cell_row[below], cell_label[below]] = group[0][4][cell[below]]
            scores, done = np.zeros((X.n_positions, len(self.documents))), 0
            setting_scores = np.empty_like(scores)
            for j, k, _, column, _, constant in sorted(group, key=lambda path: path[1]):
                stop = int(np.searchsorted(used, k))
                add_column_product(values, done, stop, dense[done:stop], scores)  # the same sums as one product
                done = stop
                if k not in totals:
                    totals[k] = np.asarray(values[:, :stop].sum(axis=1)).ravel()
                np.multiply(totals[k][:, None], column, out=setting_scores)
                setting_scores += scores
                setting_scores += constant  # (scores + totals·column) + constant, without temporaries
                out[j] = np.count_nonzero(setting_scores.argmax(axis=1) == y) / max(len(y), 1)

        group: list = []
        for path in self._paths(settings):  # a group's settings come together, sharing their cell terms
            if group and path[4] is not group[0][4]:
                score(group)
                group = []
            group.append(path)
        if group:
            score(group)
        return out


def _tf_idf(events: np.ndarray, feature: np.ndarray, document: np.ndarray, document_frequency: np.ndarray,
            n_documents: int) -> np.ndarray:
    """Rennie, Shih, Teevan & Karger (2003)'s transformed training counts: each entry's count ``c`` of feature
    ``f`` in a document made ``log(1 + c)·log(D / df_f)``, then each document's made unit length (L2), so that
    repeated words, words in every document and long documents weigh less in the estimates::

        d_f = log(1 + c_f) · log(D / df_f),     d ← d / ‖d‖₂

    (a document whose every feature is in every document keeps zeros)."""
    weighted = np.log1p(events) * np.log(n_documents / document_frequency[feature])
    norms = np.sqrt(np.bincount(document, weighted**2, minlength=n_documents))
    return weighted / np.where(norms > 0, norms, 1.0)[document]


def _given(value, candidates: tuple) -> tuple:
    """The candidates of a setting: its given value, or all of ``candidates`` when it is None (chosen on dev)."""
    return candidates if value is None else (value,)


def _information(present: np.ndarray, documents: np.ndarray) -> np.ndarray:
    """The mutual information between each feature's presence in a document and the document's label, from
    ``present[f, y]`` (documents of label y with feature f; an array or a sparse matrix) and ``documents[y]``
    (documents of label y)::

        I(f; Y) = Σ_y Σ_{e ∈ {0, 1}} P(e, y) log(P(e, y) / (P(e) P(y)))     (0 log 0 = 0)

    over the non-zero ``present[f, y]`` only (a feature meets few labels): where it is 0, the absent term is
    ``P(y) log(D / (D − D_f))`` (``D_f``: the documents with f), which sums to ``log(D / (D − D_f))`` over every
    label, so those labels add that times the share of documents of the labels f meets outside them."""
    table = scipy.sparse.coo_array(present)  # a feature's labels: its non-zero cells
    D, V = documents.sum(), table.shape[0]
    feature, label, p = table.row, table.col, table.data.astype(np.float64)
    total = np.bincount(feature, p, minlength=V)
    t, d = total[feature], documents[label]
    with np.errstate(divide="ignore", invalid="ignore"):
        met = p / D * np.log(p * D / (t * d))
        missed = np.where(d > p, (d - p) / D * np.log((d - p) * D / ((D - t) * d)), 0.0)
        base = np.where(total < D, np.log(D / (D - total)), 0.0)
    seen_share = np.bincount(feature, d / D, minlength=V)
    return np.bincount(feature, met + missed, minlength=V) + base * (1.0 - seen_share)


def _bias_value(X: FeatureMatrix, position: np.ndarray, bias_row: int) -> float:
    """The value ``b`` of the bias feature, which every training position must have once, the same in all;
    ``position`` is the position of every entry of ``X``."""
    at = X.indices == bias_row
    if not np.array_equal(np.bincount(position[at], minlength=X.n_positions), np.ones(X.n_positions)):
        raise OptionValueError("the bias feature is missing from some training instances (a hash collision "
                               "cancelled it: try another hash seed or more bits)")
    values = X.values[at]
    if not np.all(values == values[0]):
        raise OptionValueError(f"the bias feature's value varies between training instances ({values.min():g} to "
                               f"{values.max():g}); naive Bayes needs feature values without normalisation")
    return float(values[0])
