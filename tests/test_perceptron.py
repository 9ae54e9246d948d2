"""Tests of structlin.learners.perceptron: single updates by hand, the averaged perceptron against a naive
literal average, shuffling, convergence, early stopping, callbacks and partial_fit."""

from __future__ import annotations

import time

import numpy as np
import pytest

from structlin.decoders import Multiclass, Viterbi, decode_corpus
from structlin.errors import UnknownNameError
from structlin.joint import JointFeatureMap, Scores
from structlin.learners import LEARNERS, AveragedPerceptron, Perceptron, make_learner
from structlin.learners.epochs import epoch_order
from structlin.learners.perceptron import RELATIVE_MARGIN_DEFAULT
from structlin.matrix import FeatureMatrix

from brute import dense_rows, phi

# --- one update by hand --------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_one_multiclass_update_by_hand(cls):
    # One position with features row 0 (value 2.0) and row 1 (value -0.5); 3 labels; no transitions.
    joint = JointFeatureMap(["a", "b", "c"], [10, 20], transitions=False)
    X = FeatureMatrix([0, 2], [0, 1], [2.0, -0.5], [1])
    learner = cls(epochs=1, shuffle=False).fit(joint, Multiclass(), X, np.array([2]))
    # w = 0: every label scores 0, the tie goes to label 0; gold is 2, so w += φ(x, 2) − φ(x, 0).
    expected = np.zeros(6)
    expected[0 * 3 + 2], expected[0 * 3 + 0] = 2.0, -2.0
    expected[1 * 3 + 2], expected[1 * 3 + 0] = -0.5, 0.5
    np.testing.assert_array_equal(learner.weights_, expected)  # one visit: the average is the same
    assert learner.history_[0]["train_mistakes"] == 1 and learner.history_[0]["train_token_errors"] == 1
    assert learner.best_epoch_ == 1


def test_one_chain_update_by_hand():
    # Two tokens: token 0 has row 0, token 1 has row 1 (value 1); gold "b b"; w = 0 predicts "a a" (ties).
    joint = JointFeatureMap(["a", "b"], [3, 8])
    X = FeatureMatrix([0, 1, 2], [0, 1], [1.0, 1.0], [2])
    learner = Perceptron(epochs=1, shuffle=False, margin=0).fit(joint, Viterbi(), X, np.array([1, 1]))
    w = learner.weights_
    E = joint.emission_matrix(w)
    T, S, F = joint.transition_weights(w)
    np.testing.assert_array_equal(E, [[-1, 1], [-1, 1]])
    np.testing.assert_array_equal(T, [[-1, 0], [0, 1]])  # b->b gained, a->a lost
    np.testing.assert_array_equal(S, [-1, 1])
    np.testing.assert_array_equal(F, [-1, 1])
    assert learner.history_[0]["train_token_errors"] == 2


def test_two_epochs_chain_by_hand():
    # After the first update (above) "b b" scores 1+1+1+1+1 = 5 and wins: the second epoch changes nothing.
    joint = JointFeatureMap(["a", "b"], [3, 8])
    X = FeatureMatrix([0, 1, 2], [0, 1], [1.0, 1.0], [2])
    plain = Perceptron(epochs=2, shuffle=False, margin=0).fit(joint, Viterbi(), X, np.array([1, 1]))
    averaged = AveragedPerceptron(epochs=2, shuffle=False, margin=0).fit(joint, Viterbi(), X, np.array([1, 1]))
    assert [r["train_mistakes"] for r in plain.history_] == [1, 0]
    # Visits: w1 = δ, w2 = δ → the average is δ too.
    np.testing.assert_array_equal(averaged.weights_, plain.weights_)


def test_average_by_hand():
    # Two single-position instances, 2 labels, no transitions, both with feature row 0 only:
    # visit 1 (gold 1): predict 0 → w = [-1, 1]; visit 2 (gold 0): predict 1 → w = [0, 0].
    joint = JointFeatureMap(["a", "b"], [0], transitions=False)
    X = FeatureMatrix([0, 1, 2], [0, 0], [1.0, 1.0], [1, 1])
    y = np.array([1, 0])
    plain = Perceptron(epochs=1, shuffle=False, margin=0).fit(joint, Multiclass(), X, y)
    averaged = AveragedPerceptron(epochs=1, shuffle=False, margin=0).fit(joint, Multiclass(), X, y)
    np.testing.assert_array_equal(plain.weights_, [0, 0])
    np.testing.assert_allclose(averaged.weights_, [-0.5, 0.5])  # ([-1, 1] + [0, 0]) / 2


# --- the averaged perceptron against a literal average ----------------------------------------------


def naive_train(joint, decoder, X, y, *, epochs, seed, shuffle, batch_size, initial=None):
    """The perceptron as described: decode a batch with the same w, apply its updates in order, and
    add w to a running sum after every instance visit; w starts at ``initial`` or 0. Returns (w,
    average, history)."""
    L, n_rows = joint.n_labels, joint.n_rows
    F = dense_rows(X, n_rows)
    rng = np.random.default_rng(seed)
    w = np.zeros(joint.size) if initial is None else np.array(initial)
    total, visits = np.zeros(joint.size), 0
    history = []
    for _ in range(epochs):
        order = epoch_order(X.lengths, batch_size, rng) if shuffle else np.arange(X.n_instances)
        mistakes = token_errors = 0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            predictions = []
            for b in batch:
                a, c = X.offsets[b], X.offsets[b + 1]
                W = w[: joint.transition_offset].reshape(n_rows, L)
                trans, s, e = joint.transition_weights(w)
                scores = Scores(F[a:c] @ W, np.array([c - a]), trans, s, e)
                predictions.append(decoder.argmax(scores))
            for b, predicted in zip(batch, predictions):
                a, c = X.offsets[b], X.offsets[b + 1]
                gold = y[a:c]
                if np.any(predicted != gold):
                    w = w + phi(joint, F[a:c], gold) - phi(joint, F[a:c], predicted)
                    mistakes += 1
                    token_errors += int(np.sum(predicted != gold))
                total += w
                visits += 1
        history.append((mistakes, token_errors))
    return w, total / visits, history


def random_problem(seed, *, n=14, n_rows=7, L=3):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 5, size=n)
    lengths[rng.integers(0, n)] = 0  # at least one empty instance
    counts = rng.integers(1, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n_rows, size=int(indptr[-1]))
    values = rng.choice([1.0, 0.5, -1.0, 2.0], size=int(indptr[-1]))
    X = FeatureMatrix(indptr, indices, values, lengths)
    y = rng.integers(0, L, size=X.n_positions)
    return X, y


@pytest.mark.parametrize("decoder", [Viterbi(), Multiclass()], ids=lambda d: d.name)
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch_size", [1, 3])
def test_perceptrons_match_naive_implementation(decoder, shuffle, batch_size):
    X, y = random_problem(7)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7), transitions=decoder.uses_transitions)
    w, average, history = naive_train(joint, decoder, X, y, epochs=3, seed=11, shuffle=shuffle, batch_size=batch_size)
    assert any(m for m, _ in history)  # updates happened in every configuration
    plain = Perceptron(epochs=3, seed=11, shuffle=shuffle, batch_size=batch_size, margin=0).fit(joint, decoder, X, y)
    began = time.perf_counter()
    averaged = AveragedPerceptron(epochs=3, seed=11, shuffle=shuffle, batch_size=batch_size, margin=0).fit(joint, decoder, X, y)
    wall = time.perf_counter() - began
    np.testing.assert_allclose(plain.weights_, w, atol=1e-9)
    np.testing.assert_allclose(averaged.weights_, average, atol=1e-9)
    assert [(r["train_mistakes"], r["train_token_errors"]) for r in averaged.history_] == history
    assert [r["epoch"] for r in averaged.history_] == [1, 2, 3]
    assert all(r["dev_accuracy"] is None for r in averaged.history_)
    # Each epoch's seconds are measured (positive) and are parts of the fit call that the test timed.
    seconds = [r["seconds"] for r in averaged.history_]
    assert all(isinstance(t, float) and t > 0 for t in seconds) and sum(seconds) <= wall


def test_batch_size_changes_the_result():
    X, y = random_problem(7)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    one = AveragedPerceptron(epochs=2, shuffle=False, batch_size=1, margin=0).fit(joint, Viterbi(), X, y)
    three = AveragedPerceptron(epochs=2, shuffle=False, batch_size=3, margin=0).fit(joint, Viterbi(), X, y)
    assert not np.allclose(one.weights_, three.weights_)


# --- seeds, convergence -------------------------------------------------------------------------------


def test_same_seed_same_weights_different_seed_different_order():
    X, y = random_problem(3, n=20)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    first = AveragedPerceptron(epochs=2, seed=5, margin=0).fit(joint, Viterbi(), X, y)
    again = AveragedPerceptron(epochs=2, seed=5, margin=0).fit(joint, Viterbi(), X, y)
    other = AveragedPerceptron(epochs=2, seed=6, margin=0).fit(joint, Viterbi(), X, y)
    np.testing.assert_array_equal(first.weights_, again.weights_)
    assert not np.allclose(first.weights_, other.weights_)
    # The orders are the seeded permutations; replaying seed 6 in the naive trainer reproduces it.
    _, average, _ = naive_train(joint, Viterbi(), X, y, epochs=2, seed=6, shuffle=True, batch_size=1)
    np.testing.assert_allclose(other.weights_, average, atol=1e-9)


def separable_problem(seed, *, n=40, L=4, noise_rows=6):
    """Every token has an indicator feature of its gold label plus random noise features."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, size=n)
    y = rng.integers(0, L, size=int(lengths.sum()))
    rows, indptr = [], [0]
    for label in y:
        noise = rng.integers(L, L + noise_rows, size=int(rng.integers(0, 3)))
        rows.extend([label, *noise])
        indptr.append(len(rows))
    X = FeatureMatrix(indptr, rows, np.ones(len(rows)), lengths)
    return X, y, L + noise_rows


@pytest.mark.parametrize("decoder", [Viterbi(), Multiclass()], ids=lambda d: d.name)
@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_separable_data_reaches_zero_mistakes(decoder, cls):
    X, y, n_rows = separable_problem(1)
    joint = JointFeatureMap(list("abcd"), np.arange(n_rows), transitions=decoder.uses_transitions)
    learner = cls(epochs=15, seed=0).fit(joint, decoder, X, y)
    mistakes = [r["train_mistakes"] for r in learner.history_]
    assert mistakes[0] > 0 and mistakes[-1] == 0
    first_clean = mistakes.index(0)
    assert all(m == 0 for m in mistakes[first_clean:])  # no update, no change: stays at zero
    assert (decode_corpus(decoder, joint, learner.weights_, X) == y).all()


# --- dev, early stopping, callbacks --------------------------------------------------------------------


def noisy_split(seed):
    X, y = random_problem(seed, n=30)
    train, dev = np.arange(20), np.arange(20, 30)
    return X.take(train), y[X.positions(train)], X.take(dev), y[X.positions(dev)]


def find_early_peak():
    """A seeded noisy problem whose dev accuracy peaks before the last of 6 epochs."""
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    for seed in range(50):
        X, y, Xd, yd = noisy_split(seed)
        learner = AveragedPerceptron(epochs=6, seed=0, margin=0).fit(joint, Viterbi(), X, y, (Xd, yd))
        accuracies = [r["dev_accuracy"] for r in learner.history_]
        if int(np.argmax(accuracies)) + 1 < 6:
            return joint, (X, y, Xd, yd), learner
    raise AssertionError("no seed gives an early dev peak")  # pragma: no cover


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_early_stopping_keeps_best_epoch(cls):
    joint, (X, y, Xd, yd), _ = find_early_peak()
    learner = cls(epochs=6, seed=0).fit(joint, Viterbi(), X, y, (Xd, yd))
    accuracies = [r["dev_accuracy"] for r in learner.history_]
    assert len(accuracies) == 6
    # Every epoch's dev accuracy is that of a run stopped after that epoch, decoded here.
    for epoch, recorded in enumerate(accuracies, 1):
        stopped = cls(epochs=epoch, seed=0).fit(joint, Viterbi(), X, y)
        assert recorded == pytest.approx((decode_corpus(Viterbi(), joint, stopped.weights_, Xd) == yd).mean()), epoch
    assert len(set(accuracies)) > 1  # the epochs differ on dev, so the check above tells them apart
    assert learner.best_epoch_ == int(np.argmax(accuracies)) + 1  # the first best epoch
    # The kept weights are those after best_epoch_ epochs: a run that stops there gives the same.
    short = cls(epochs=learner.best_epoch_, seed=0).fit(joint, Viterbi(), X, y)
    np.testing.assert_allclose(learner.weights_, short.weights_, atol=1e-12)
    # Its dev accuracy is the recorded one, computed independently here.
    predicted = decode_corpus(Viterbi(), joint, learner.weights_, Xd)
    assert (predicted == yd).mean() == pytest.approx(accuracies[learner.best_epoch_ - 1])


def test_patience_stops_training():
    joint, (X, y, Xd, yd), full = find_early_peak()
    best = full.best_epoch_
    learner = AveragedPerceptron(epochs=6, seed=0, patience=1, margin=0).fit(joint, Viterbi(), X, y, (Xd, yd))
    # Training stops at the first epoch that is `patience` epochs past the best so far.
    accuracies = [r["dev_accuracy"] for r in learner.history_]
    running_best = 1
    for epoch in range(2, len(accuracies) + 1):
        if accuracies[epoch - 1] > accuracies[running_best - 1]:
            running_best = epoch
        if epoch < len(accuracies):
            assert epoch - running_best < 1
    assert len(learner.history_) == running_best + 1 <= 6
    assert accuracies == [r["dev_accuracy"] for r in full.history_][: len(accuracies)]
    assert learner.best_epoch_ == running_best <= best


def test_dev_unknown_labels_count_as_errors():
    joint = JointFeatureMap(["a", "b"], [0], transitions=False)
    X = FeatureMatrix([0, 1], [0], [1.0], [1])
    Xd = FeatureMatrix([0, 1, 2], [0, 0], [1.0, 1.0], [1, 1])
    # Trained to say "b"; dev gold: "b" and an unseen label (−1).
    learner = Perceptron(epochs=1, margin=0).fit(joint, Multiclass(), X, np.array([1]), (Xd, np.array([1, -1])))
    assert learner.history_[0]["dev_accuracy"] == 0.5


def test_callback_returning_true_stops():
    X, y = random_problem(2)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    seen = []

    def callback(record, learner):
        seen.append((dict(record), learner))
        return record["epoch"] == 2

    learner = AveragedPerceptron(epochs=5, callback=callback, margin=0).fit(joint, Viterbi(), X, y)
    assert [r["epoch"] for r, _ in seen] == [1, 2]
    assert all(who is learner for _, who in seen)
    assert set(seen[0][0]) == {"step", "unit", "epoch", "train_mistakes", "train_token_errors", "dev_accuracy", "seconds"}
    assert len(learner.history_) == 2 and learner.best_epoch_ == 2
    # Returning a false value never stops.
    quiet = AveragedPerceptron(epochs=3, callback=lambda record, learner: None, margin=0).fit(joint, Viterbi(), X, y)
    assert len(quiet.history_) == 3


def test_mistake_on_featureless_position_is_counted():
    joint = JointFeatureMap(["a", "b"], [0], transitions=False)
    X = FeatureMatrix([0, 0], [], [], [1])  # one position, no features: predicts "a", gold "b"
    learner = Perceptron(epochs=1, margin=0).fit(joint, Multiclass(), X, np.array([1]))
    assert learner.history_[0]["train_token_errors"] == 1
    assert learner.history_[0]["train_mistakes"] == 1


def test_invalid_hyper_parameters_and_names():
    with pytest.raises(ValueError, match="epochs"):
        Perceptron(epochs=0, margin=0)
    with pytest.raises(ValueError, match="batch_size"):
        AveragedPerceptron(batch_size=0, margin=0)
    assert {"perceptron", "averaged-perceptron", "voted-perceptron", "passive-aggressive", "mira", "maxent", "svm",
            "kernel-perceptron"} <= set(LEARNERS)
    learner = make_learner("averaged-perceptron", epochs=4, seed=3)
    assert isinstance(learner, AveragedPerceptron)
    assert learner.params() == {"epochs": 4, "seed": 3, "shuffle": True, "batch_size": 1, "patience": None, "eval_every": 1,
                               "margin": None, "relative_margin": RELATIVE_MARGIN_DEFAULT, "delta": None}
    with pytest.raises(UnknownNameError, match=f"accepted: {', '.join(sorted(LEARNERS))}"):
        make_learner("no-such-learner")


def test_epoch_order_is_a_permutation_of_similar_length_batches():
    lengths = np.random.default_rng(0).integers(0, 60, size=1000)
    order = epoch_order(lengths, 4, np.random.default_rng(1))
    assert sorted(order.tolist()) == list(range(1000))
    assert (order == epoch_order(lengths, 4, np.random.default_rng(1))).all()  # seeded
    spread = np.ptp(lengths[order[: 996]].reshape(-1, 4), axis=1)
    random_spread = np.ptp(lengths[np.random.default_rng(1).permutation(1000)[:996]].reshape(-1, 4), axis=1)
    assert spread.mean() < random_spread.mean() / 4  # batches hold sentences of similar length
    assert (epoch_order(lengths, 1, np.random.default_rng(1)) == np.random.default_rng(1).permutation(1000)).all()


@pytest.mark.parametrize("margin, expected", [(0.0, [-1.0, 1.0]), (1.0, [-1.0, 1.0]), (3.0, [-2.0, 2.0])])
def test_margin_updates_until_gold_wins_by_the_margin(margin, expected):
    """One feature (value 1), gold label 1, two epochs.  Epoch 1: tie → update to scores (−1, 1).
    Epoch 2: the gold label leads by 2; only a margin above 2 makes ŷ = argmax(score + τ·[y ≠ 1]) = 0."""
    X = FeatureMatrix([0, 1], [0], [1.0], [1])
    joint = JointFeatureMap(["a", "b"], np.arange(1), transitions=False)
    learner = Perceptron(epochs=2, shuffle=False, margin=margin, progress=False)
    learner.fit(joint, Multiclass(), X, np.array([1]))
    assert joint.emission_matrix(learner.weights_)[0].tolist() == expected


def test_negative_margin_is_rejected():
    with pytest.raises(ValueError, match="margin"):
        Perceptron(margin=-1)


# --- partial_fit: one epoch per call, going on from the run so far -------------------------------------


@pytest.mark.parametrize("decoder", [Viterbi(), Multiclass()], ids=lambda d: d.name)
@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
@pytest.mark.parametrize("shuffle, batch_size", [(False, 1), (True, 1), (True, 3)])
def test_partial_fit_calls_are_fit_epochs(decoder, cls, shuffle, batch_size):
    """k calls on the whole data give exactly fit's model after k epochs (the generator goes on
    across calls as across epochs), and a call after fit adds one epoch to fit's run (the same up to
    rounding for the averaged perceptron: fit's last average took the averaging sums' memory, and a run
    that goes on makes them again from it)."""
    X, y = random_problem(7)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7), transitions=decoder.uses_transitions)
    settings = {"seed": 11, "shuffle": shuffle, "batch_size": batch_size}
    online = cls(**settings)
    for epochs in (1, 2, 3):
        online.partial_fit(joint, decoder, X, y)
        batch = cls(epochs=epochs, **settings).fit(joint, decoder, X, y)
        np.testing.assert_array_equal(online.weights_, batch.weights_)
        assert ([(r["epoch"], r["train_mistakes"], r["train_token_errors"]) for r in online.history_]
                == [(r["epoch"], r["train_mistakes"], r["train_token_errors"]) for r in batch.history_])
        assert online.best_epoch_ == epochs
    assert any(r["train_mistakes"] for r in online.history_[1:])  # later calls did update
    resumed = cls(epochs=2, **settings).fit(joint, decoder, X, y).partial_fit(joint, decoder, X, y)
    np.testing.assert_allclose(resumed.weights_, batch.weights_, rtol=1e-12, atol=1e-12)
    assert ([(r["epoch"], r["train_mistakes"], r["train_token_errors"]) for r in resumed.history_]
            == [(r["epoch"], r["train_mistakes"], r["train_token_errors"]) for r in batch.history_])


def concatenated(a: FeatureMatrix, b: FeatureMatrix) -> FeatureMatrix:
    return FeatureMatrix(np.concatenate([a.indptr, a.indptr[-1] + b.indptr[1:]]), np.concatenate([a.indices, b.indices]),
                         np.concatenate([a.values, b.values]), np.concatenate([a.lengths, b.lengths]))


@pytest.mark.parametrize("decoder", [Viterbi(), Multiclass()], ids=lambda d: d.name)
@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_partial_fit_on_a_growing_map_is_one_pass_over_the_stream(decoder, cls):
    """Batch 2 brings buckets between batch 1's (rows move when the map grows): two unshuffled calls
    are exactly one unshuffled epoch over both batches with the map of both."""
    X1, y1 = random_problem(7, n_rows=4)
    X1 = FeatureMatrix(X1.indptr, X1.indices * 2, X1.values, X1.lengths)  # even buckets 0..6
    X2, y2 = random_problem(8, n_rows=7)  # buckets 0..6: the odd ones are new
    labels, transitions = ["a", "b", "c"], decoder.uses_transitions
    first = JointFeatureMap.from_training(labels, X1, transitions=transitions)
    grown = first.extended(X2)
    assert first.columns.tolist() == [0, 2, 4, 6] and grown.columns.tolist() == list(range(7))
    learner = cls(shuffle=False, margin=0)
    learner.partial_fit(first, decoder, first.index(X1), y1)
    learner.partial_fit(grown, decoder, grown.index(X2), y2)
    assert all(r["train_mistakes"] for r in learner.history_)
    X = concatenated(X1, X2)
    full = JointFeatureMap.from_training(labels, X, transitions=transitions)
    once = cls(epochs=1, shuffle=False, margin=0).fit(full, decoder, full.index(X), np.concatenate([y1, y2]))
    np.testing.assert_array_equal(learner.weights_, once.weights_)
    assert np.any(grown.emission_matrix(learner.weights_)[1::2])  # the new buckets learnt weights


def test_a_run_started_from_weights_goes_on_from_them():
    """As after loading a model: the perceptron continues exactly; the averaged perceptron averages
    the weights of the new visits, which start from the given ones."""
    X, y = random_problem(7)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    one = Perceptron(epochs=1, shuffle=False, margin=0).fit(joint, Viterbi(), X, y)
    resumed = Perceptron(shuffle=False, margin=0)
    resumed.start(joint, one.weights_, one.history_)
    resumed.partial_fit(joint, Viterbi(), X, y)
    two = Perceptron(epochs=2, shuffle=False, margin=0).fit(joint, Viterbi(), X, y)
    np.testing.assert_array_equal(resumed.weights_, two.weights_)
    assert [r["epoch"] for r in resumed.history_] == [1, 2] and len(one.history_) == 1
    averaged = AveragedPerceptron(shuffle=False, margin=0)
    averaged.start(joint, one.weights_)
    averaged.partial_fit(joint, Viterbi(), X, y)
    _, average, history = naive_train(joint, Viterbi(), X, y, epochs=1, seed=0, shuffle=False, batch_size=1,
                                      initial=one.weights_)
    assert history[0][0] > 0
    np.testing.assert_allclose(averaged.weights_, average, atol=1e-9)


def test_partial_fit_on_an_empty_batch_changes_nothing():
    joint = JointFeatureMap(["a", "b"], [0], transitions=False)
    empty = FeatureMatrix([0], [], [], [])
    learner = AveragedPerceptron(margin=0).partial_fit(joint, Multiclass(), empty, np.zeros(0, np.int64))
    np.testing.assert_array_equal(learner.weights_, [0, 0])  # no visit yet: w itself
    learner.partial_fit(joint, Multiclass(), FeatureMatrix([0, 1], [0], [1.0], [1]), np.array([1]))
    learner.partial_fit(joint, Multiclass(), empty, np.zeros(0, np.int64))
    np.testing.assert_array_equal(learner.weights_, [-1, 1])
    assert [r["train_mistakes"] for r in learner.history_] == [0, 1, 0]


def test_learners_are_online():
    assert Perceptron.capabilities.online and AveragedPerceptron.capabilities.online  # maxent is batch (tests/test_maxent.py)
    learner = Perceptron(margin=0)
    assert not learner.started
    learner.start(JointFeatureMap(["a", "b"], [0], transitions=False))
    assert learner.started and learner.history_ == []


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_the_delta_trick_makes_contradictory_data_separable_and_is_not_kept(cls):
    # Two identical inputs with different labels: no weights separate them, the perceptron never converges.
    joint = JointFeatureMap(["a", "b"], [10, 20], transitions=False)
    X = FeatureMatrix([0, 1, 2, 3], [0, 0, 1], [1.0, 1.0, 1.0], [1, 1, 1])
    y = np.array([0, 1, 1])
    plain = cls(epochs=8, shuffle=False).fit(joint, Multiclass(), X, y)
    assert all(r["train_mistakes"] > 0 for r in plain.history_)
    tricked = cls(epochs=8, shuffle=False, delta=1.0).fit(joint, Multiclass(), X, y)
    assert tricked.history_[-1]["train_mistakes"] == 0
    assert len(tricked.weights_) == joint.size  # the id rows are gone: the model has the real features only
    assert tricked.params()["delta"] == 1.0 and make_learner(cls.name, **tricked.params()).delta == 1.0
    with pytest.raises(TypeError, match="train with fit"):
        cls(delta=1.0).partial_fit(joint, Multiclass(), X, y)
    for bad in (0.0, 1e300):  # Δ² must stay finite in float32
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1e\+18\] and finite"):
            cls(delta=bad)


def test_each_perceptron_has_its_own_relative_margin_default():
    """The plain perceptron's default comes from its own panel sweep, the averaged and voted ones share theirs;
    with_defaults refuses an option the tuple lacks."""
    from structlin.learners import VotedPerceptron
    from structlin.learners.perceptron import PERCEPTRON_OPTIONS, PLAIN_RELATIVE_MARGIN_DEFAULT
    from structlin.learners.protocol import with_defaults

    assert Perceptron().relative_margin == PLAIN_RELATIVE_MARGIN_DEFAULT == 4.0
    assert AveragedPerceptron().relative_margin == VotedPerceptron().relative_margin == RELATIVE_MARGIN_DEFAULT == 2.0
    with pytest.raises(TypeError, match="no option nonesuch"):
        with_defaults(PERCEPTRON_OPTIONS, nonesuch=1)


def test_a_classifier_gives_the_perceptrons_its_own_margin_and_a_given_margin_replaces_it():
    """The document classifier's relative margin is 4 (its panel's choice), a tagger keeps the learners' 2; a margin
    given as it is drops the model's relative one instead of clashing with it (model_options), while a relative margin
    given with it is still refused."""
    from structlin import Classifier, Tagger
    from structlin.learners import LEARNERS, VotedPerceptron
    from structlin.learners.protocol import model_options

    for name in ("averaged-perceptron", "voted-perceptron", "perceptron"):
        assert Classifier(learner=name).learner.relative_margin == 4.0
    assert Tagger(learner="averaged-perceptron").learner.relative_margin == RELATIVE_MARGIN_DEFAULT == 2.0
    assert Classifier(learner=AveragedPerceptron()).learner.relative_margin == 2.0  # an instance keeps its own
    given = Classifier(learner="averaged-perceptron", margin=1.0).learner
    assert (given.margin, given.relative_margin, given.batch_size) == (1.0, RELATIVE_MARGIN_DEFAULT, 8)
    defaults = {"batch_size": 8, "relative_margin": 4.0, "relative_l2": 0.5}
    assert model_options(VotedPerceptron, defaults, {"margin": 1.0}) == {"batch_size": 8, "margin": 1.0}
    assert model_options(VotedPerceptron, defaults, {"relative_margin": 3.0}) == {"batch_size": 8,
                                                                                  "relative_margin": 3.0}
    assert model_options(LEARNERS["maxent"], defaults, {"l2": 1.0}) == {"batch_size": 8, "l2": 1.0}
    for relative in (3.0, RELATIVE_MARGIN_DEFAULT):  # both given, whatever the value (the default's was taken)
        with pytest.raises(ValueError, match="give margin or relative_margin, not both"):
            Classifier(learner="averaged-perceptron", margin=1.0, relative_margin=relative).fit(["a b", "c d"],
                                                                                                ["x", "y"])
