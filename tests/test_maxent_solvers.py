"""Tests of MaxEnt's solvers beyond L2 L-BFGS: SGD (lazy shrinkage, averaging and momentum checked
against dense bookkeeping; the same optimum as the batch solver) and L1 through OWL-QN (exact zeros,
the objective bound against the unregularised optimum)."""

from __future__ import annotations

import numpy as np
import pytest

from structlin import Tagger
from structlin.decoders import Multiclass, Viterbi
from structlin.learners import MaxEnt
from structlin.learners.sgd import SGDWeights

from test_maxent import random_problem


class DenseSGD:
    """The textbook bookkeeping SGDWeights must reproduce: every weight shrunk at every step."""

    def __init__(self, size: int, momentum: float):
        self.w, self.velocity, self.momentum, self.iterates = np.zeros(size), np.zeros(size), momentum, []

    def step(self, shrink: float, flat: np.ndarray, delta: np.ndarray) -> None:
        self.velocity *= self.momentum
        np.add.at(self.velocity, flat, delta)
        self.w = shrink * self.w + self.velocity
        self.iterates.append(self.w.copy())


@pytest.mark.parametrize("momentum", [0.0, 0.5])
@pytest.mark.parametrize("shrink_range", [(0.9, 1.0), (0.01, 0.05)])  # the second forces rescalings
def test_sgd_weights_match_dense_bookkeeping(momentum, shrink_range):
    rng = np.random.default_rng(7)
    width, n_rows = 3, 20
    lazy, dense = SGDWeights(n_rows * width, width, momentum=momentum), DenseSGD(n_rows * width, momentum)
    for k in range(60):
        if k == 25:
            lazy.restart_average()
            dense.iterates.clear()
        rows = rng.choice(n_rows, size=4, replace=False)
        delta = rng.normal(size=(4, width))
        shrink = rng.uniform(*shrink_range)
        lazy.step(shrink, rows, delta)
        dense.step(shrink, (rows[:, None] * width + np.arange(width)).ravel(), delta.ravel())
        np.testing.assert_allclose(lazy.current(), dense.w, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(lazy.at(rows).ravel(), dense.w.reshape(n_rows, width)[rows].ravel(), rtol=1e-9,
                                   atol=1e-12)
    np.testing.assert_allclose(lazy.average(), np.mean(dense.iterates, axis=0), rtol=1e-7, atol=1e-10)
    assert lazy.steps == 60


def test_sgd_weights_refuse_bad_settings():
    with pytest.raises(ValueError, match="momentum"):
        SGDWeights(6, 3, momentum=1.0)
    with pytest.raises(ValueError, match="whole number of rows"):
        SGDWeights(7, 3)
    with pytest.raises(ValueError, match="shrinkage factor must be positive"):
        SGDWeights(6, 3).step(0.0, np.array([0]), np.ones((1, 3)))


@pytest.mark.parametrize("name, lengths, transitions, decoder", [
    ("documents", [1] * 30, False, Multiclass()),
    ("chain", [2, 3, 4, 1, 3, 2, 5, 3], True, Viterbi()),
])
def test_sgd_reaches_the_batch_optimum(name, lengths, transitions, decoder):
    joint, X, y = random_problem(11, lengths, 3, 8, transitions=transitions)
    batch = MaxEnt(epochs=500, l2=1.0, tol=0, gtol=1e-9, progress=False).fit(joint, decoder, X, y)
    sgd = MaxEnt(solver="sgd", epochs=300, l2=1.0, learning_rate=0.3, batch_size=2, progress=False)
    sgd.fit(joint, decoder, X, y)
    objective = batch.objective(joint, decoder, X, y)
    optimum, reached = objective(batch.weights_)[0], objective(sgd.weights_)[0]
    assert optimum <= reached <= optimum * (1 + 1e-3)
    np.testing.assert_allclose(sgd.weights_, batch.weights_, atol=0.05 * np.abs(batch.weights_).max())
    assert sgd.history_[-1]["objective"] == pytest.approx(reached)
    assert [r["epoch"] for r in sgd.history_] == list(range(1, 301)) and sgd.stopped_ == "300 epochs"


def test_sgd_without_averaging_and_with_momentum_comes_near_the_optimum():
    joint, X, y = random_problem(12, [1] * 30, 3, 8, transitions=False)
    batch = MaxEnt(epochs=500, l2=1.0, tol=0, gtol=1e-9, progress=False).fit(joint, Multiclass(), X, y)
    objective = batch.objective(joint, Multiclass(), X, y)
    optimum = objective(batch.weights_)[0]
    for params in ({"averaging": False, "learning_rate": 0.05}, {"momentum": 0.5, "learning_rate": 0.03}):
        learner = MaxEnt(solver="sgd", epochs=100, l2=1.0, progress=False, **params).fit(joint, Multiclass(), X, y)
        assert optimum <= objective(learner.weights_)[0] <= optimum * 1.02


def test_sgd_is_seeded_and_keeps_the_best_dev_epoch():
    joint, X, y = random_problem(13, [2, 3, 4, 1, 3, 2], 3, 10, transitions=True)

    def fit(seed):
        return MaxEnt(solver="sgd", epochs=6, seed=seed, batch_size=2, progress=False).fit(
            joint, Viterbi(), X, y, dev=(X, y))

    first, again, other = fit(0), fit(0), fit(1)
    np.testing.assert_array_equal(first.weights_, again.weights_)
    assert not np.array_equal(first.weights_, other.weights_)
    accuracies = [r["dev_accuracy"] for r in first.history_]
    assert first.best_epoch_ == 1 + int(np.argmax(accuracies))


def test_l1_leaves_exact_zeros_within_the_penalty_bound():
    # Random labels on few features: not separable, so the unregularised optimum w0 is finite.  The L1
    # optimum w1 minimises NLL + l1·‖w‖₁, so NLL(w1) ≤ NLL(w0) + l1·(‖w0‖₁ − ‖w1‖₁).
    joint, X, y = random_problem(14, [1] * 60, 3, 6, transitions=False)
    free = MaxEnt(epochs=1000, l2=0.0, tol=0, gtol=1e-9, progress=False).fit(joint, Multiclass(), X, y)
    nll = free.objective(joint, Multiclass(), X, y)
    gradient_at_zero = np.abs(nll(np.zeros(joint.size))[1]).max()
    l1 = 0.3 * gradient_at_zero
    sparse = MaxEnt(epochs=1000, l2=0.0, l1=l1, tol=0, gtol=1e-9, progress=False).fit(joint, Multiclass(), X, y)
    w0, w1 = free.weights_, sparse.weights_
    assert 0 < np.count_nonzero(w1 == 0.0) < w1.size and np.count_nonzero(w0 == 0.0) == 0
    assert nll(w1)[0] <= nll(w0)[0] + l1 * (np.abs(w0).sum() - np.abs(w1).sum()) + 1e-9
    assert sparse.history_[-1]["objective"] == pytest.approx(nll(w1)[0] + l1 * np.abs(w1).sum())
    everything = MaxEnt(epochs=50, l2=0.0, l1=1.01 * gradient_at_zero, progress=False).fit(joint, Multiclass(), X, y)
    assert np.count_nonzero(everything.weights_) == 0


def test_l1_needs_the_batch_solver():
    with pytest.raises(ValueError, match="l1 needs the lbfgs solver"):
        MaxEnt(solver="sgd", l1=0.1)
    with pytest.raises(ValueError, match="l1 must be non-negative"):
        MaxEnt(l1=-1.0)


def test_sgd_crf_tagger_trains_and_round_trips(tmp_path):
    train = [[("the", "D"), ("dog", "N"), ("barks", "V")], [("a", "D"), ("cat", "N"), ("sleeps", "V")],
             [("the", "D"), ("cat", "N"), ("barks", "V")]] * 4
    tagger = Tagger("pos-basic", MaxEnt(solver="sgd", epochs=15, batch_size=2, learning_rate=0.5, progress=False))
    tagger.fit(train)
    assert tagger.predict([["a", "dog", "sleeps"]]) == [["D", "N", "V"]]
    tagger.save(tmp_path / "sgd.model")
    loaded = Tagger.load(tmp_path / "sgd.model")
    assert loaded.learner.params() == tagger.learner.params() and loaded.learner.solver == "sgd"
    np.testing.assert_array_equal(loaded.weights_, tagger.weights_)


def test_dev_labels_never_seen_in_training_warn_and_count_as_errors():
    from structlin import Classifier
    from structlin.errors import UnseenLabelWarning

    train = [[("the", "D"), ("dog", "N")], [("a", "D"), ("cat", "N")]] * 3
    dev = [[("the", "D"), ("cat", "X")], [("a", "D"), ("dog", "Y")]]
    with pytest.warns(UnseenLabelWarning, match=r"dev data: 2 of 4 tokens have labels never seen in training "
                                                r"\('X', 'Y'\); they count as errors") as caught:
        tagger = Tagger("pos-basic", "maxent", epochs=20).fit(train, dev)
    assert caught[0].filename == __file__
    assert max(r["dev_accuracy"] for r in tagger.history_) == 0.5
    with pytest.warns(UnseenLabelWarning, match="1 of 2 documents") as caught:
        Classifier("text-unigram", "maxent", epochs=5).fit(["good film", "bad film"] * 3, ["pos", "neg"] * 3,
                                                           dev=(["good", "awful"], ["pos", "meh"]))
    assert caught[0].filename == __file__
