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
from dataclasses import replace

import numpy as np

from ..decoders import Decoder, decode_corpus
from ..errors import OptionValueError
from ..joint import JointFeatureMap
from ..matrix import FeatureMatrix
from .protocol import SEED_MAX, Capabilities, HistoryField, Learner, Option
from .training import TrainingRun, dev_accuracy, hold_out_instances, require_finite


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
#: The share of the training instances held out to choose alpha on when there is no dev.
HELD_OUT = 0.1


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
    without dev, on a seeded 10% of the training instances held out, the counts of the rest scoring each
    candidate — and the model is then estimated from all the training data; ``chosen_`` and ``candidates_``
    say what was chosen and each candidate's score.  Each candidate costs one pass over the count table of
    the vocabulary, not a training run.  It classifies single instances
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
               Option("seed", int, 0, "seed of the instances held out to choose alpha on without dev", minimum=0,
                      maximum=SEED_MAX))
    history_fields = (HistoryField("train_mistakes", "mistakes", "{:>6}"),)

    def fit(self, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray,
            dev: tuple[FeatureMatrix, np.ndarray] | None = None, *, bias_row: int | None = None) -> NaiveBayes:
        """Set ``weights_`` to the NB log-probabilities of the indexed corpus ``X`` with gold label ids ``y``
        (one per position); ``bias_row`` is the weight row of the bias feature."""
        run = TrainingRun(self, joint, decoder, dev)
        if decoder.uses_transitions:
            raise OptionValueError(f"{self.name} classifies single instances: it needs the multiclass decoder, "
                                   f"not {decoder.name!r} (naive Bayes over label chains, an HMM, is not implemented)")
        if bias_row is None:
            raise OptionValueError(f"{self.name} keeps log P(y) in the weight of a bias feature: use a feature set "
                                   "with a bias template (bundled: text-nb, text-presence)")
        require_finite(X, "training")
        estimate = self._estimator(joint, X, y, bias_row)
        settings = self._settings()
        if len(settings) > 1:
            choice_data = dev
            if dev is None:
                rest, rest_y, choice_data = hold_out_instances(X, y, HELD_OUT, self.seed)
                scoring = self._estimator(joint, rest, rest_y, bias_row)
            else:
                scoring = estimate
            self.candidates_ = [{**s, "dev_accuracy": dev_accuracy(decoder, joint, scoring(**s)[0], choice_data)}
                                for s in settings]
            best = max(self.candidates_, key=lambda c: c["dev_accuracy"])  # ties: the first (multinomial, larger alpha)
            setting = {name: best[name] for name in settings[0]}
            self.chosen_ = {name: value for name, value in setting.items() if getattr(self, name) is None}
        else:
            setting = settings[0]
        w, mixed_sign_rows = estimate(**setting)
        errors = int(np.count_nonzero(decode_corpus(decoder, joint, w, X) != y))
        with run:
            run.record(lambda: w, train_mistakes=errors, train_token_errors=errors, mixed_sign_rows=mixed_sign_rows)
        self.weights_ = run.finish()
        self.history_, self.best_epoch_ = run.history, run.best_step
        return self

    def _settings(self) -> list[dict]:
        """The candidate settings, every combination of :meth:`_choices` (ties on dev go to the first: the
        larger vocabulary, multinomial, the larger alpha)."""
        choices = self._choices()
        return [dict(zip(choices, values)) for values in itertools.product(*choices.values())]

    def _choices(self) -> dict[str, tuple]:
        """Each setting's candidates: the given value, else the values it is chosen among."""
        return {"vocabulary": _given(self.vocabulary, SHARES), "weighting": _given(self.weighting, WEIGHTINGS),
                "variant": _given(self.variant, VARIANTS), "alpha": _given(self.alpha, ALPHAS)}

    def _estimator(self, joint: JointFeatureMap, X: FeatureMatrix, y: np.ndarray, bias_row: int):
        """The counts of ``X`` once, and a function of the settings (:meth:`_settings`) giving the weights
        estimated from them and the number of rows with training values of both signs.

        The counts are kept for the rows these instances have (the vocabulary: every row of the joint map
        with a training event, unless some instances are held out), ranked by :func:`_information`."""
        row, position = X.indices.astype(np.int64), X.entry_positions()
        bias_value = _bias_value(X, position, bias_row)
        feature = row != bias_row
        row, label, value = row[feature], y[position[feature]], X.values[feature].astype(np.float64)
        events = self._events(value)
        position = position[feature]
        row, label, value, events, position = (a[events > 0] for a in (row, label, value, events, position))
        L = joint.n_labels
        rows, local = np.unique(row, return_inverse=True)
        V = len(rows)
        sign = np.where(np.bincount(local, value, minlength=V) < 0, -1.0, 1.0)
        mixed_sign_rows = len(np.unique(local[np.sign(value) != sign[local]]))
        documents = np.bincount(y, minlength=L).astype(np.float64)
        present = np.bincount(local * L + label, minlength=V * L).reshape(V, L).astype(np.float64)
        counts = {"counts": np.bincount(local * L + label, events, minlength=V * L).reshape(V, L)}
        if "tf-idf" in self._choices().get("weighting", ()):
            weighted = _tf_idf(events, local, position, present.sum(axis=1), X.n_positions)
            counts["tf-idf"] = np.bincount(local * L + label, weighted, minlength=V * L).reshape(V, L)
        ranked = np.argsort(-_information(present, documents), kind="stable")
        with np.errstate(divide="ignore"):  # a label without training instances: log P(y) = −∞
            log_prior = np.log(documents / documents.sum())

        def weights(vocabulary: float = 1.0, weighting: str = "counts", **setting) -> tuple[np.ndarray, int]:
            kept = np.sort(ranked[: max(1, round(vocabulary * V))])
            log_likelihood, constant = self._log_likelihoods(counts[weighting][kept], documents, log_prior, **setting)
            w = np.zeros(joint.size)
            emission = joint.emission_weights(w)
            emission[rows[kept]] = sign[kept, None] * log_likelihood
            emission[bias_row] = constant / bias_value
            return w, mixed_sign_rows

        return weights

    def _events(self, values: np.ndarray) -> np.ndarray:
        """How many events of its feature each training entry counts: the count ``|value|``."""
        return np.abs(values)

    def _log_likelihoods(self, counts: np.ndarray, documents: np.ndarray, log_prior: np.ndarray, alpha: float,
                         variant: str):
        """The weights of every feature of the vocabulary (``V × L``) from its event ``counts`` —
        ``log P(f|y)``, or for the complement ``−log P̃(f|y)`` — and the per-label constant: ``log P(y)``, none
        for the complement (−∞ for a label without training documents either way)."""
        vocabulary = len(counts)
        if variant == "complement":
            others = counts.sum(axis=1, keepdims=True) - counts
            return (np.log(others.sum(axis=0) + alpha * vocabulary) - np.log(others + alpha),
                    np.where(documents > 0, 0.0, -np.inf))
        return np.log(counts + alpha) - np.log(counts.sum(axis=0) + alpha * vocabulary), log_prior


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

    def _log_likelihoods(self, counts: np.ndarray, documents: np.ndarray, log_prior: np.ndarray, alpha: float):
        """``log P(f|y) − log(1 − P(f|y))`` per feature of the vocabulary and the constant ``log P(y) +
        Σ_f log(1 − P(f|y))`` per label."""
        p = (counts + alpha) / (documents + 2 * alpha)
        log_absent = np.log1p(-p)
        return np.log(p) - log_absent, log_prior + log_absent.sum(axis=0)


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
    ``present[f, y]`` (documents of label y with feature f) and ``documents[y]`` (documents of label y)::

        I(f; Y) = Σ_y Σ_{e ∈ {0, 1}} P(e, y) log(P(e, y) / (P(e) P(y)))     (0 log 0 = 0)"""
    D = documents.sum()
    total = present.sum(axis=1, keepdims=True)
    out = np.zeros(len(present))
    with np.errstate(divide="ignore", invalid="ignore"):
        for joint_count, marginal in ((present, total), (documents - present, D - total)):
            term = joint_count / D * np.log(joint_count * D / (marginal * documents))
            out += np.where(joint_count > 0, term, 0.0).sum(axis=1)
    return out


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
