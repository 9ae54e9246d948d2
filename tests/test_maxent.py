"""Tests of structlin.learners.maxent: the objective and gradient against brute force and finite
differences, an optimum solved by hand, convergence, dev selection and stopping, the models and the
command line with ``learner="maxent"`` and their files, an accuracy floor on NLTK names, and bad input."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import scipy.optimize
from scipy.special import logsumexp

from structlin import Classifier, Tagger
from structlin.catalog import load_documents
from structlin.decoders import Greedy, Multiclass, Viterbi, decode_corpus
from structlin.errors import OptionValueError, StructlinError
from structlin.joint import JointFeatureMap
from structlin.learners import LEARNERS, MaxEnt, make_learner
from structlin.learners.maxent import RELATIVE_L2_DEFAULT, RELATIVE_L2S, UNSEEN_PAIRS
from structlin.learners.owlqn import GTOL_REACHED, MAXITER_REACHED
from structlin.matrix import FeatureMatrix

from brute import dense_rows, phi
from roundtrip import assert_classifier_round_trip, assert_tagger_round_trip


def random_problem(seed: int, lengths, n_labels: int, n_rows: int, *, transitions: bool):
    """(joint, X, y): 1–3 random features of random value per position, random gold labels."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = rng.integers(1, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    X = FeatureMatrix(indptr, rng.integers(0, n_rows, size=int(indptr[-1])), rng.normal(size=int(indptr[-1])), lengths)
    joint = JointFeatureMap([f"y{k}" for k in range(n_labels)], np.arange(n_rows), transitions=transitions)
    return joint, X, rng.integers(0, n_labels, size=int(lengths.sum()))


def brute_objective(joint, X, y, w, l2) -> float:
    """−Σ log p(y|x) + (l2/2)‖w‖², with Z(x) summed over every label sequence of every instance."""
    F = dense_rows(X, joint.n_rows)
    total = 0.5 * l2 * (w @ w)
    for start, stop in zip(X.offsets[:-1], X.offsets[1:]):
        scores = [w @ phi(joint, F[start:stop], np.array(labels, dtype=np.int64))
                  for labels in itertools.product(range(joint.n_labels), repeat=int(stop - start))]
        total += logsumexp(scores) - w @ phi(joint, F[start:stop], y[start:stop])
    return total


PROBLEMS = {  # name: (lengths, labels, rows, transitions, decoder)
    "documents": ([1] * 6, 4, 10, False, Multiclass()),
    "chain": ([1, 2, 3, 4], 3, 10, True, Viterbi()),
    "chain-empty-sentence": ([2, 0, 3, 1], 3, 6, True, Viterbi()),
    "tokens-without-transitions": ([2, 3, 1], 3, 6, False, Multiclass()),
}


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("seed", range(3))
def test_gradient_matches_central_differences(name, seed):
    lengths, L, rows, transitions, decoder = PROBLEMS[name]
    joint, X, y = random_problem(seed, lengths, L, rows, transitions=transitions)
    objective = MaxEnt(l2=0.7).objective(joint, decoder, X, y)
    w = np.random.default_rng(100 + seed).normal(scale=0.5, size=joint.size)
    _, gradient = objective(w)
    h = 1e-6
    numeric = np.array([(objective(w + h * e)[0] - objective(w - h * e)[0]) / (2 * h) for e in np.eye(joint.size)])
    assert np.linalg.norm(numeric - gradient) / np.linalg.norm(gradient) < 1e-5


@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("seed", range(3))
def test_objective_equals_brute_force_enumeration(name, seed):
    lengths, L, rows, transitions, decoder = PROBLEMS[name]
    joint, X, y = random_problem(seed, lengths, L, rows, transitions=transitions)
    w = np.random.default_rng(200 + seed).normal(size=joint.size)
    value, _ = MaxEnt(l2=0.3).objective(joint, decoder, X, y)(w)
    assert value == pytest.approx(brute_objective(joint, X, y, w, 0.3), rel=1e-10)


def test_greedy_trains_on_the_chain_distribution():
    joint, X, y = random_problem(0, [1, 2, 3, 4], 3, 10, transitions=True)
    w = np.random.default_rng(1).normal(size=joint.size)
    greedy, viterbi = (MaxEnt().objective(joint, d, X, y)(w) for d in (Greedy(), Viterbi()))
    assert greedy[0] == viterbi[0]
    np.testing.assert_array_equal(greedy[1], viterbi[1])


def test_optimum_solved_by_hand():
    # One instance with one feature of value 1 and gold label 1 of 2: by symmetry w = (−a, a), and the
    # gradient in w_0, p_0 − l2·a with p_0 = 1/(1 + e^{2a}), vanishes.
    joint = JointFeatureMap(["a", "b"], [7], transitions=False)
    X = FeatureMatrix([0, 1], [0], [1.0], [1])
    learner = MaxEnt(l2=1.0, tol=0, gtol=1e-10, unseen_pairs="all", progress=False).fit(joint, Multiclass(), X,
                                                                                           np.array([1]))
    a = scipy.optimize.brentq(lambda a: 1 / (1 + np.exp(2 * a)) - a, 0, 1)
    np.testing.assert_allclose(learner.weights_, [-a, a], atol=1e-8)
    assert learner.history_[-1]["gradient_norm"] < 1e-8


def separable_documents():
    """12 documents of 3 labels: each has its label's own feature (row = label) and two shared noisy ones."""
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(3), 4)
    indices = np.column_stack([y, rng.integers(3, 8, size=12), rng.integers(3, 8, size=12)]).ravel()
    X = FeatureMatrix(np.arange(0, 37, 3), indices, rng.uniform(0.5, 1.5, size=36), np.ones(12, dtype=np.int64))
    return JointFeatureMap(["x", "y", "z"], np.arange(8), transitions=False), X, y


def test_fit_converges_on_separable_documents(monkeypatch):
    joint, X, y = separable_documents()
    made = []  # the objective that fit builds, to count its evaluations
    build = MaxEnt.objective
    monkeypatch.setattr(MaxEnt, "objective", lambda self, *args: made.append(build(self, *args)) or made[-1])
    began = time.perf_counter()
    learner = MaxEnt(epochs=500, l2=0.1, tol=0, gtol=1e-7, unseen_pairs="all", progress=False).fit(joint, Multiclass(),
                                                                                                  X, y)
    wall = time.perf_counter() - began
    monkeypatch.undo()
    assert learner.stopped_ == GTOL_REACHED
    objective = learner.objective(joint, Multiclass(), X, y)
    value, gradient = objective(learner.weights_)
    assert np.abs(gradient).max() <= 1e-7 and learner.history_[-1]["objective"] == pytest.approx(value)
    assert value < objective(np.zeros(joint.size))[0]
    scores = joint.scores(learner.weights_, X).emissions
    np.testing.assert_array_equal(decode_corpus(Multiclass(), joint, learner.weights_, X), scores.argmax(axis=1))
    np.testing.assert_array_equal(scores.argmax(axis=1), y)
    assert learner.best_epoch_ == len(learner.history_) and [r["iteration"] for r in learner.history_] == \
        list(range(1, len(learner.history_) + 1))
    assert all(r["dev_accuracy"] is None for r in learner.history_)
    # Each iteration's evaluations are counted: together every evaluation of fit's objective.
    evaluations = [r["evaluations"] for r in learner.history_]
    assert len(made) == 1 and all(type(e) is int and e >= 1 for e in evaluations)
    assert sum(evaluations) == made[0].evaluations
    # Each iteration's seconds are measured and are parts of the fit call that the test timed.
    seconds = [r["seconds"] for r in learner.history_]
    assert all(isinstance(t, float) and t > 0 for t in seconds) and sum(seconds) <= wall
    objectives = [r["objective"] for r in learner.history_]
    assert objectives == sorted(objectives, reverse=True)  # L-BFGS-B's line search only accepts decreases


def test_chain_fit_learns_training_data():
    joint, X, y = random_problem(3, [3, 4, 2, 5], 3, 30, transitions=True)
    learner = MaxEnt(epochs=200, l2=0.01, progress=False).fit(joint, Viterbi(), X, y)
    assert (decode_corpus(Viterbi(), joint, learner.weights_, X) == y).all()


def test_epochs_bound_the_iterations_and_dev_keeps_the_best():
    joint, X, y = random_problem(4, [3, 4, 2, 5, 1], 3, 30, transitions=True)
    learner = MaxEnt(epochs=4, l2=0.01, tol=0, gtol=0, progress=False).fit(joint, Viterbi(), X, y, dev=(X, y))
    assert len(learner.history_) == 4 and learner.stopped_ == MAXITER_REACHED
    best = max(learner.history_, key=lambda r: r["dev_accuracy"])  # the first of equals
    assert learner.best_epoch_ == best["iteration"]
    accuracy = (decode_corpus(Viterbi(), joint, learner.weights_, X) == y).mean()
    assert accuracy == best["dev_accuracy"]


def test_eval_every_and_the_last_iteration():
    joint, X, y = random_problem(4, [3, 4, 2, 5, 1], 3, 30, transitions=True)
    learner = MaxEnt(epochs=5, l2=0.01, tol=0, gtol=0, eval_every=2, progress=False).fit(joint, Viterbi(), X, y,
                                                                                        dev=(X, y))
    assert [r["dev_accuracy"] is not None for r in learner.history_] == [False, True, False, True, True]


def test_patience_and_callback_stop_the_run():
    joint, X, y = random_problem(4, [3, 4, 2, 5, 1], 3, 30, transitions=True)
    unseen = (X, np.full(len(y), -1))  # labels never seen in training: accuracy 0 at every iteration
    learner = MaxEnt(epochs=50, l2=0.01, tol=0, gtol=0, patience=2, progress=False).fit(joint, Viterbi(), X, y, unseen)
    assert len(learner.history_) == 3 and learner.best_epoch_ == 1
    assert learner.stopped_ == "no dev improvement in 2 evaluations"
    np.testing.assert_array_equal(learner.weights_, MaxEnt(epochs=1, l2=0.01, progress=False)
                                  .fit(joint, Viterbi(), X, y).weights_)
    # a run the patience stopped still hands its last iterate on (the regularisation path's next start), over
    # every weight or over the active set
    for unseen_pairs in ("all", 0.5):
        stopped = MaxEnt(epochs=50, tol=0, gtol=0, patience=2, unseen_pairs=unseen_pairs, progress=False)
        pairs = stopped._active_pairs(joint, X, y)
        last = stopped._fit_once(joint, Viterbi(), X, y, unseen, RELATIVE_L2S[0], None, pairs=pairs)
        w = last if pairs is None else pairs.expand(last)
        objective = stopped.objective(joint, Viterbi(), X, y, RELATIVE_L2S[0])
        assert len(stopped.history_) == 3 and objective(w)[0] == pytest.approx(stopped.history_[-1]["objective"])
    seen = []
    learner = MaxEnt(epochs=50, l2=0.01, tol=0, gtol=0, callback=lambda record, _: seen.append(record) or len(seen) == 2,
                     progress=False).fit(joint, Viterbi(), X, y)
    assert len(learner.history_) == 2 and seen == learner.history_ and learner.stopped_ == "stopped by the callback"


# --- models with learner="maxent" ----------------------------------------------------------------------

DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg"]

TOY = [
    [("the", "DET"), ("dog", "NOUN"), ("barks", "VERB")],
    [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
    [("the", "DET"), ("cat", "NOUN"), ("barks", "VERB"), ("loudly", "ADV")],
    [("dogs", "NOUN"), ("sleep", "VERB")],
]


def test_make_learner_and_params():
    assert LEARNERS["maxent"] is MaxEnt and MaxEnt.capabilities.online is False
    learner = make_learner("maxent", epochs=30, seed=2, batch_size=4, patience=3, progress=False)
    assert learner.params() == {"epochs": 30, "solver": "lbfgs", "l2": None, "relative_l2": None, "l1": 0.0, "tol": 1e-6, "gtol": 1e-5, "memory": 6,
                                "unseen_pairs": UNSEEN_PAIRS,
                                "learning_rate": 0.1, "averaging": True, "momentum": 0.0, "eval_every": 1,
                                "seed": 2, "batch_size": 4, "patience": 3}
    assert make_learner("maxent", **learner.params()).params() == learner.params()
    for bad in ({"epochs": 0}, {"l2": -1.0}, {"eval_every": 0}, {"tol": float("nan")}, {"learning_rate": 0.0},
                {"momentum": 1.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            MaxEnt(**bad)
    with pytest.raises(OptionValueError, match="solver must be one of lbfgs, sgd, got 'newton'"):
        MaxEnt(solver="newton")


def test_classifier_fits_predicts_and_round_trips(tmp_path):
    clf = Classifier("text-unigram", "maxent", epochs=50, progress=False).fit(DOCS, LABELS, dev=(DOCS[:3], LABELS[:3]))
    assert clf.history_ is clf.learner.history_
    assert assert_classifier_round_trip(clf, DOCS, LABELS, tmp_path).learner.name == "maxent"


@pytest.mark.parametrize("decoder", ["viterbi", "greedy", "multiclass"])
def test_tagger_fits_predicts_and_round_trips(tmp_path, decoder):
    tagger = Tagger("pos-basic", "maxent", decoder, epochs=100, bits=16, progress=False).fit(TOY)
    assert_tagger_round_trip(tagger, TOY, tmp_path)


@pytest.mark.corpus
def test_names_accuracy_floor(nltk_data_dir):
    documents = load_documents("names", "all")
    order = np.random.default_rng(0).permutation(len(documents))
    train, test = [documents[k] for k in order[:6000]], [documents[k] for k in order[6000:]]
    clf = Classifier("names", make_learner("maxent", l2=1.0, progress=False)).fit([d.text for d in train],
                                                                                  [d.label for d in train])
    report = clf.report([d.text for d in test], [d.label for d in test])
    assert report.accuracy >= 0.83, report.accuracy  # 84.6% measured (29 iterations, 1 s)


# --- bad input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_feature_values_name_the_instance(bad):
    joint, X, y = random_problem(0, [1, 2, 3, 4], 3, 10, transitions=True)
    X.values[X.indptr[X.offsets[2] + 1]] = bad  # the second position of instance 2
    with pytest.raises(StructlinError, match="training instance 2 .*non-finite"):
        MaxEnt(progress=False).fit(joint, Viterbi(), X, y)
    _, clean, _ = random_problem(0, [1, 2, 3, 4], 3, 10, transitions=True)
    with pytest.raises(StructlinError, match="dev instance 2 "):
        MaxEnt(progress=False).fit(joint, Viterbi(), clean, y, dev=(X, y))


def test_overflowing_objective_raises():
    # Scores of 1e300 · 1e30 overflow double precision: log Z is inf − inf = NaN.
    joint, X, y = random_problem(0, [1] * 6, 4, 10, transitions=False)
    X.values[:] = 1e30
    objective = MaxEnt(progress=False).objective(joint, Multiclass(), X, y)
    with pytest.raises(StructlinError, match="objective became nan .*raise l2"):
        objective(np.full(joint.size, 1e300))


@pytest.mark.parametrize("chosen", RELATIVE_L2S)
def test_a_prior_chosen_along_the_path_is_refit_along_it(chosen):
    """The refit on all the data after a choice on held-out data runs the path as it was chosen: the stronger
    priors' runs in full, each from the last iterate of the one before, then the chosen prior's for ``epochs``
    iterations from there (not a run of that many iterations from 0)."""
    joint, X, y = random_problem(23, [1] * 60, 3, 10, transitions=False)
    refit = MaxEnt(epochs=15, unseen_pairs="all", progress=False).refit(joint, Multiclass(), X, y, epochs=4,
                                                                         chosen={"relative_l2": chosen})
    path, start = MaxEnt(epochs=15, unseen_pairs="all", progress=False), None
    for r in RELATIVE_L2S[: RELATIVE_L2S.index(chosen)]:
        start = path._fit_once(joint, Multiclass(), X, y, None, r, None, start)
    path.set_params(epochs=4)._fit_once(joint, Multiclass(), X, y, None, chosen, None, start)
    np.testing.assert_array_equal(refit.weights_, path.weights_)
    assert len(refit.history_) == 4 and refit.epochs == 15  # the budget given back
    assert refit.chosen_ == {"relative_l2": chosen, "l2": path.chosen_["l2"]}
    cold = MaxEnt(epochs=4, relative_l2=chosen, unseen_pairs="all", progress=False).fit(joint, Multiclass(), X, y)
    assert (chosen == RELATIVE_L2S[0]) == np.array_equal(refit.weights_, cold.weights_)
    other = MaxEnt(epochs=15, l2=0.5, progress=False).refit(joint, Multiclass(), X, y, epochs=4, chosen={})
    np.testing.assert_array_equal(other.weights_, MaxEnt(epochs=4, l2=0.5, progress=False).fit(joint, Multiclass(), X,
                                                                                                  y).weights_)
    assert other.epochs == 15


def test_command_line_trains_maxent(tmp_path, capsys):
    from structlin.cli import main
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(DOCS, LABELS)), encoding="utf-8")
    model = tmp_path / "m.model"
    argv = ["train", "classifier", "--train", str(train), "--features", "text-unigram", "--learner", "maxent",
            "--epochs", "20", "--output", str(model)]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("iteration   1  objective ") and "gradient norm" in out[0]
    assert Classifier.load(model).predict(DOCS).tolist() == LABELS
    assert main(argv + ["--margin", "1"]) == 2
    assert capsys.readouterr().err.strip() == "structlin: error: --margin does not apply to learner 'maxent'"


def test_relative_l2_is_chosen_on_dev_among_the_candidates():
    """relative_l2=None with dev: one run per candidate, strongest prior first, each from the last iterate of the
    one before (a regularisation path; the first from 0, as training with that prior) and keeping its best dev
    iteration; the best run (the stronger prior on a tie) is the model. Without dev: the untuned value."""
    joint, X, y = random_problem(21, [1] * 60, 3, 10, transitions=False)
    joint_dev, X_dev, y_dev = random_problem(22, [1] * 30, 3, 10, transitions=False)
    dev = (X_dev, y_dev)
    auto = MaxEnt(epochs=15, unseen_pairs="all", progress=False).fit(joint, Multiclass(), X, y, dev)
    fixed, start = {}, None
    for r in RELATIVE_L2S:
        fixed[r] = MaxEnt(epochs=15, unseen_pairs="all", progress=False)
        start = fixed[r]._fit_once(joint, Multiclass(), X, y, dev, r, None, start)
    first = MaxEnt(epochs=15, relative_l2=RELATIVE_L2S[0], unseen_pairs="all", progress=False).fit(joint, Multiclass(),
                                                                                                   X, y, dev)
    np.testing.assert_array_equal(fixed[RELATIVE_L2S[0]].weights_, first.weights_)
    best = {r: max(h["dev_accuracy"] for h in learner.history_ if h["dev_accuracy"] is not None)
            for r, learner in fixed.items()}
    assert auto.candidates_ == [{"relative_l2": r, "dev_accuracy": best[r]} for r in RELATIVE_L2S]
    chosen = max(RELATIVE_L2S, key=lambda r: (best[r], -RELATIVE_L2S.index(r)))
    assert auto.chosen_["relative_l2"] == chosen and auto.chosen_["l2"] == fixed[chosen].chosen_["l2"]
    np.testing.assert_array_equal(auto.weights_, fixed[chosen].weights_)
    assert auto.best_epoch_ == fixed[chosen].best_epoch_
    no_dev = MaxEnt(epochs=15, progress=False).fit(joint, Multiclass(), X, y)
    assert no_dev.chosen_ == {"l2": RELATIVE_L2_DEFAULT * X.mean_squared_norm()} and no_dev.candidates_ == []


def test_a_run_that_stops_where_it_starts_records_its_one_model():
    """An L1 penalty so large that every weight stays 0: L-BFGS stops at its start, and that start (w = 0, every
    label scored alike) is the run's one recorded iteration, scored on dev, not a run without a score."""
    joint, X, y = random_problem(5, [1] * 40, 3, 12, transitions=False)
    _, X_dev, y_dev = random_problem(6, [1] * 20, 3, 12, transitions=False)
    learner = MaxEnt(l1=1e12, progress=False).fit(joint, Multiclass(), X, y, (X_dev, y_dev))
    assert len(learner.history_) == 1 and learner.best_epoch_ == 1
    assert not learner.weights_.any()
    zero = decode_corpus(Multiclass(), joint, np.zeros(joint.size), X_dev)  # every label scored alike
    assert learner.history_[0]["dev_accuracy"] == pytest.approx(np.mean(zero == y_dev))
