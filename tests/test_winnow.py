"""Tests of structlin.learners.winnow: one multiplicative update by hand, the lazy rescaling, far fewer
mistakes than the perceptron on sparse disjunctions among many features, training through the perceptron's
machinery (chains, dev, patience), save/load, the command line and bad settings."""

from __future__ import annotations

import numpy as np
import pytest
from roundtrip import assert_classifier_round_trip

from structlin import Classifier, Tagger
from structlin.cli import main
from structlin.decoders import Multiclass
from structlin.joint import JointFeatureMap
from structlin.learners import Perceptron, Winnow, make_learner
from structlin.learners import winnow as winnow_module
from structlin.matrix import FeatureMatrix


def test_one_update_by_hand():
    # One document with rows 0 (value 1) and 1 (value −1, a negative hash sign); labels a, b; gold b.
    joint = JointFeatureMap(["a", "b"], [3, 7], transitions=False)
    X = FeatureMatrix([0, 2], [0, 1], [1.0, -1.0], [1])
    eta = 0.5
    learner = Winnow(epochs=2, learning_rate=eta, shuffle=False).fit(joint, Multiclass(), X, np.array([1]))
    # w = 0 ties, label a wins: Δ = φ(x, b) − φ(x, a) is −1 at (0, a), +1 at (0, b), +1 at (1, a), −1 at (1, b).
    delta = np.array([-1.0, 1.0, 1.0, -1.0])
    plus, minus = np.exp(eta * delta), np.exp(-eta * delta)  # from w⁺ = w⁻ = 1/8 before normalising
    np.testing.assert_allclose(learner.weights_, (plus - minus) / (plus + minus).sum(), rtol=1e-15)
    assert [r["train_mistakes"] for r in learner.history_] == [1, 0]  # the second epoch predicts b
    assert np.abs(learner.weights_).sum() <= 1


def test_shifting_the_exponents_changes_no_weight(monkeypatch):
    rng = np.random.default_rng(3)
    joint = JointFeatureMap(["x", "y", "z"], np.arange(30), transitions=False)
    lengths = rng.integers(1, 8, size=60)
    X = FeatureMatrix(np.concatenate([[0], np.cumsum(lengths)]), np.concatenate([rng.choice(30, k, replace=False)
                                                                                  for k in lengths]),
                      rng.uniform(-1.5, 1.5, lengths.sum()), np.ones(60, np.int64))  # real values: no exact ties
    y = rng.integers(0, 3, size=60)
    plain = Winnow(epochs=5, learning_rate=2.0).fit(joint, Multiclass(), X, y)
    monkeypatch.setattr(winnow_module, "_SHIFT_ABOVE", 2.0)  # shift after almost every update
    rescaled = Winnow(epochs=5, learning_rate=2.0).fit(joint, Multiclass(), X, y)
    assert rescaled._shift > plain._shift == 0
    assert [r["train_mistakes"] for r in rescaled.history_] == [r["train_mistakes"] for r in plain.history_]
    np.testing.assert_allclose(rescaled.weights_, plain.weights_, rtol=1e-12)


def disjunction(p: int, k: int, n: int, rng: np.random.Generator):
    """``n`` binary vectors over ``p`` features plus a bias (column ``p``), each feature on with probability
    ``ln 2 / k``; the label is 1 iff one of the first ``k`` features is on (a k-of-p disjunction, about half
    the vectors)."""
    on = rng.random((n, p)) < np.log(2) / k
    rows = [np.append(np.flatnonzero(r), p) for r in on]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    X = FeatureMatrix(indptr, np.concatenate(rows), np.ones(indptr[-1]), np.ones(n, np.int64))
    return JointFeatureMap(["0", "1"], np.arange(p + 1), transitions=False), X, on[:, :k].any(axis=1).astype(np.int64)


def mistakes_until_separated(learner, joint, X, y) -> int:
    """Training mistakes summed over the epochs up to the first without one."""
    learner.callback = lambda record, _: record["train_mistakes"] == 0
    learner.fit(joint, Multiclass(), X, y)
    assert learner.history_[-1]["train_mistakes"] == 0
    return sum(record["train_mistakes"] for record in learner.history_)


def test_winnow_needs_far_fewer_mistakes_than_the_perceptron_on_sparse_disjunctions():
    # Winnow's bound grows as k log p (2 ln p / γ² with ‖u‖₁, ‖x‖∞), the perceptron's with ‖x‖₂², about p / k
    # active features: the ratio of their mistakes grows with p.
    ratios = []
    for p in (20, 160, 1280):
        joint, X, y = disjunction(p, 3, 1000, np.random.default_rng(0))
        perceptron = mistakes_until_separated(Perceptron(epochs=100), joint, X, y)
        winnow = mistakes_until_separated(Winnow(epochs=100, learning_rate=1.0), joint, X, y)
        ratios.append(perceptron / winnow)
    assert ratios[0] < ratios[1] < ratios[2] and ratios[2] > 5


DOCUMENTS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great film",
             "boring bad plot", "dull film", "fine fun"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg", "neg", "pos"]


def test_classifier_save_load_round_trip(tmp_path):
    clf = Classifier("text-presence", Winnow(epochs=20, learning_rate=0.5)).fit(DOCUMENTS, LABELS,
                                                                                 dev=(DOCUMENTS, LABELS))
    loaded = assert_classifier_round_trip(clf, DOCUMENTS, LABELS, tmp_path)
    assert loaded.learner.params() == {"epochs": 20, "seed": 0, "shuffle": True, "batch_size": 1, "patience": None, "eval_every": 1,
                                       "delta": None, "learning_rate": 0.5}


def test_tagger_with_a_chain_decoder_mini_batches_and_patience(tmp_path):
    sentences = [[("the", "D"), ("dog", "N"), ("runs", "V")], [("a", "D"), ("cat", "N"), ("sleeps", "V")],
                 [("the", "D"), ("cat", "N"), ("runs", "V")]]
    tagger = Tagger("pos-basic", Winnow(epochs=30, learning_rate=0.5, batch_size=2, patience=3), "viterbi")
    tagger.fit(sentences, dev=sentences)
    assert len(tagger.history_) < 30 and tagger.history_[tagger.learner.best_epoch_ - 1]["dev_accuracy"] == 1.0
    words = [[w for w, _ in s] for s in sentences] + [["a", "dog", "sleeps"]]
    tagger.save(tmp_path / "t.model")  # rows of untouched features, all zero, are not saved
    assert Tagger.load(tmp_path / "t.model").predict(words) == tagger.predict(words)
    assert tagger.predict(words)[:3] == [[t for _, t in s] for s in sentences]


def test_command_line_takes_the_learning_rate_and_refuses_a_margin(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(DOCUMENTS, LABELS)), encoding="utf-8")
    model = tmp_path / "w.model"
    argv = ["train", "classifier", "--train", str(train), "--features", "text-presence", "--learner", "winnow",
            "--output", str(model), "--quiet"]
    assert main([*argv, "--learning-rate", "0.4", "--epochs", "3"]) == 0
    assert Classifier.load(model).learner.learning_rate == 0.4
    capsys.readouterr()
    assert main([*argv, "--margin", "1"]) == 2
    assert "--margin does not apply to learner 'winnow'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # by the parser
        main([*argv, "--learning-rate", "-1"])
    assert refused.value.code == 2
    assert "argument --learning-rate: must be positive and finite, got -1.0" in capsys.readouterr().err


@pytest.mark.parametrize("rate", [0.0, -0.5, float("inf"), float("nan")])
def test_learning_rate_must_be_positive(rate):
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        make_learner("winnow", learning_rate=rate)


def test_state_lasts_one_run():
    with pytest.raises(TypeError, match="train it with fit"):
        Winnow().partial_fit(None, Multiclass(), None, None)
    with pytest.raises(TypeError, match="'winnow' is not online"):
        Classifier("text-presence", "winnow").fit(DOCUMENTS, LABELS).partial_fit(DOCUMENTS, LABELS)


@pytest.mark.parametrize("shift_above", [500.0, 2.0])
def test_touched_rows_and_touched_pairs_train_the_full_vectors_model(monkeypatch, shift_above):
    """θ and the weights kept for the rows (few labels) or the pairs (many labels: here forced) the run touched:
    the weights, mistakes and normaliser of a run of full vectors, also when the shift rescales the weights."""
    from structlin.joint import SparseWeights
    from structlin.learners import perceptron, run_weights

    rng = np.random.default_rng(5)
    joint = JointFeatureMap(["x", "y", "z", "w"], np.arange(100), transitions=False)
    lengths = rng.integers(1, 6, size=50)
    X = FeatureMatrix(np.concatenate([[0], np.cumsum(lengths)]),
                      np.concatenate([rng.choice(25, k, replace=False) for k in lengths]),  # rows 25-99 never seen
                      rng.uniform(-1.5, 1.5, lengths.sum()), np.ones(50, np.int64))
    y = rng.integers(0, 4, size=50)
    monkeypatch.setattr(winnow_module, "_SHIFT_ABOVE", shift_above)
    fit = lambda: Winnow(epochs=4, learning_rate=2.0).fit(joint, Multiclass(), X, y)  # noqa: E731
    rows = fit()
    monkeypatch.setattr(perceptron, "weight_store", lambda capabilities, n_labels: run_weights.DenseWeights)
    full = fit()
    monkeypatch.setattr(perceptron, "weight_store", run_weights.weight_store)
    monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    pairs = fit()
    assert isinstance(full._state, run_weights.DenseWeights) and isinstance(rows._state, run_weights.TouchedRows)
    assert isinstance(pairs.weights_, SparseWeights) and len(pairs.weights_.keys) < 25 * 4
    for run in (rows, pairs):
        assert [r["train_mistakes"] for r in run.history_] == [r["train_mistakes"] for r in full.history_]
        np.testing.assert_allclose(np.asarray(run.weights_), full.weights_, rtol=1e-12, atol=1e-300)
