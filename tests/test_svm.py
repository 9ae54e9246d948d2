"""Tests of structlin.learners.svm: the primal against brute-force enumeration and its subgradient against
central differences, a Pegasos step by hand and Pegasos against dense textbook bookkeeping, BCFW's
duality gap and both solvers against a QP solved by scipy, the margin against the averaged
perceptron's, the run's history, dev selection and stopping, the models with ``learner="svm"`` and
their files, and bad settings."""

from __future__ import annotations

import itertools
import json
import math
import time

import numpy as np
import pytest
import scipy.optimize
from brute import dense_rows, phi
from roundtrip import assert_classifier_round_trip, assert_tagger_round_trip
from test_maxent import DOCS, LABELS, TOY, random_problem, separable_documents

from structlin import Classifier, Tagger
from structlin.catalog import load_documents
from structlin.decoders import Greedy, Multiclass, Viterbi
from structlin.errors import OptionValueError
from structlin.joint import JointFeatureMap
from structlin.learners import LEARNERS, SVM, AveragedPerceptron, make_learner
from structlin.learners.epochs import epoch_order
from structlin.learners.sgd import SGDWeights
from structlin.learners.svm import FURTHER_CS, RELATIVE_C_DEFAULT, RELATIVE_CS, BlockWeights, LabelBlocks, make_blocks
from structlin.matrix import FeatureMatrix


def labelings(joint, F: np.ndarray):
    """Every label sequence of an instance with dense position features ``F``, with its φ."""
    for labels in itertools.product(range(joint.n_labels), repeat=len(F)):
        labels = np.array(labels, dtype=np.int64)
        yield labels, phi(joint, F, labels)


def task_loss(gold, labels, cost, cost_matrix) -> float:
    """Δ(gold, labels): Hamming times cost, or the cost matrix summed over positions."""
    return float(cost * (gold != labels).sum() if cost_matrix is None else cost_matrix[gold, labels].sum())


def brute_primal(joint, X, y, w, lam, cost=1.0, cost_matrix=None) -> float:
    """(λ/2)‖w‖² + mean over instances of max_y Δ(y_t, y) + w·(φ(x_t, y) − φ(x_t, y_t)), y enumerated."""
    F = dense_rows(X, joint.n_rows)
    total = 0.0
    for start, stop in zip(X.offsets[:-1], X.offsets[1:]):
        gold = y[start:stop]
        gold_phi = phi(joint, F[start:stop], gold)
        total += max(task_loss(gold, labels, cost, cost_matrix) + w @ (features - gold_phi)
                     for labels, features in labelings(joint, F[start:stop]))
    return 0.5 * lam * (w @ w) + total / X.n_instances


def reference_primal(joint, X, y, lam) -> float:
    """min_w P(w) as the QP min (λ/2)‖w‖² + (1/n) Σ ξ_t with ξ_t ≥ Δ(y_t, y) − w·ψ_t(y) for every y, by SLSQP."""
    F, n, d = dense_rows(X, joint.n_rows), X.n_instances, joint.size
    rows, bounds = [], []
    for t, (start, stop) in enumerate(zip(X.offsets[:-1], X.offsets[1:])):
        gold_phi = phi(joint, F[start:stop], y[start:stop])
        for labels, features in labelings(joint, F[start:stop]):
            rows.append(np.concatenate([gold_phi - features, np.eye(n)[t]]))
            bounds.append(task_loss(y[start:stop], labels, 1.0, None))
    A, b = np.array(rows), np.array(bounds)
    result = scipy.optimize.minimize(
        lambda z: 0.5 * lam * (z[:d] @ z[:d]) + z[d:].sum() / n, np.concatenate([np.zeros(d), np.full(n, b.max())]),
        jac=lambda z: np.concatenate([lam * z[:d], np.full(n, 1 / n)]), method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
        options={"maxiter": 1000, "ftol": 1e-12})
    assert result.success, result.message
    return result.fun


PROBLEMS = {  # name: (lengths, labels, rows, transitions, decoder)
    "documents": ([1] * 6, 4, 10, False, Multiclass()),
    "chain": ([1, 2, 3, 4], 3, 10, True, Viterbi()),
    "chain-empty-sentence": ([2, 0, 3, 1], 3, 6, True, Viterbi()),
    "greedy-trains-on-the-exact-chain": ([1, 2, 3, 4], 3, 10, True, Greedy()),
    "tokens-without-transitions": ([2, 3, 1], 3, 6, False, Multiclass()),
}
COST_MATRIX = [[0.0, 1.0, 2.0, 0.5], [3.0, 0.0, 1.0, 1.0], [0.2, 0.4, 0.0, 2.5], [1.0, 1.0, 1.0, 0.0]]


@pytest.mark.parametrize("name, costs", [(name, costs) for name, problem in PROBLEMS.items()
                                          for costs in ("hamming", "cost", "matrix")
                                          if costs != "matrix" or not problem[4].uses_transitions])
@pytest.mark.parametrize("seed", range(2))
def test_primal_equals_brute_force_and_its_subgradient_the_gradient(name, costs, seed):
    lengths, L, rows, transitions, decoder = PROBLEMS[name]
    costs = {"hamming": {}, "cost": {"cost": 0.7}, "matrix": {"cost_matrix": np.array(COST_MATRIX)[:L, :L]}}[costs]
    joint, X, y = random_problem(seed, lengths, L, rows, transitions=transitions)
    learner = SVM(C=0.8, **costs, solver="pegasos")
    objective = learner.objective(joint, decoder, X, y)
    assert objective.lam == 1 / (0.8 * len(lengths))
    w = np.random.default_rng(300 + seed).normal(size=joint.size)
    value, subgradient, _ = objective(w)
    assert value == pytest.approx(brute_primal(joint, X, y, w, objective.lam, learner.cost, learner.cost_matrix),
                                  rel=1e-12)
    # At a random w no two outputs tie, so P is differentiable there and the subgradient is its gradient.
    h = 1e-6
    numeric = np.array([(objective(w + h * e)[0] - objective(w - h * e)[0]) / (2 * h) for e in np.eye(joint.size)])
    np.testing.assert_allclose(subgradient, numeric, atol=1e-6)


def hand_problem():
    """Two documents, three labels, two feature rows: x0 = 2·f0 labelled a; x1 = f0 + 3·f1 labelled c."""
    joint = JointFeatureMap(["a", "b", "c"], [10, 20], transitions=False)
    return joint, FeatureMatrix([0, 1, 3], [0, 0, 1], [2.0, 1.0, 3.0], [1, 1]), np.array([0, 2])


@pytest.mark.parametrize("projection", [False, True])
def test_one_pegasos_step_by_hand(projection):
    # λ = 1/(C·n) = 1/2 and η_1 = 1/λ = 2.  At w = 0 every label scores 0, so the loss-augmented argmax
    # is the first wrong label: b for x0, a for x1, both with hinge 1.  With both in one batch,
    # w = (η_1/2)(ψ_0 + ψ_1): ψ_0 = φ(x0, a) − φ(x0, b) puts +2, −2 on (f0, a), (f0, b); ψ_1 = φ(x1, c) −
    # φ(x1, a) puts +1, −1 on (f0, c), (f0, a) and +3, −3 on (f1, c), (f1, a).
    joint, X, y = hand_problem()
    learner = SVM(epochs=1, C=1.0, batch_size=2, projection=projection, progress=False, solver="pegasos").fit(joint, Multiclass(), X, y)
    expected = np.array([2 - 1, -2, 1, -3, 0, 3], dtype=float)
    if projection:  # ‖w‖ = √24 is outside the ball of radius 1/√λ = √2
        expected *= math.sqrt(2 / 24)
    np.testing.assert_allclose(learner.weights_, expected, rtol=1e-12)
    objective = learner.objective(joint, Multiclass(), X, y)
    assert learner.history_[0]["primal_objective"] == pytest.approx(objective(expected)[0])


def test_a_wrong_output_of_zero_hinge_adds_no_subgradient():
    # One document (f0 = 1) of label b with w(f0) = (0, 1, −5): a, one below b, ties b in the loss-augmented
    # argmax and wins the tie (the lower index), with hinge 0: P and the step see the regulariser only.
    joint, X, y = JointFeatureMap(["a", "b", "c"], [0], transitions=False), FeatureMatrix([0, 1], [0], [1.0], [1]), [1]
    y, w = np.array(y), np.array([0.0, 1.0, -5.0])
    learner = SVM(C=2.0, projection=False, solver="pegasos")
    objective = learner.objective(joint, Multiclass(), X, y)
    assert objective.oracle(joint.scores(w, X), y).tolist() == [0]
    value, subgradient, errors = objective(w)
    assert value == 0.5 * objective.lam * (w @ w) and errors == 0
    np.testing.assert_array_equal(subgradient, objective.lam * w)
    weights = SGDWeights(joint.size, 3)
    weights.step(1.0, np.array([0]), w.reshape(1, 3))  # as if after step 1: the next is step 2, η_2 λ = 1/2
    learner._pegasos_step(objective, weights, X, y, 0.0)
    np.testing.assert_array_equal(weights.current(), 0.5 * w)


class DensePegasos:
    """The textbook Pegasos that the learner must reproduce: dense w, every weight shrunk at every step,
    the projection from the full norm, the average of the stored iterates from the second epoch."""

    def __init__(self, learner: SVM, joint, decoder, X, y):
        self.learner, self.joint, self.decoder, self.X, self.y = learner, joint, decoder, X, y
        self.lam = 1 / (learner.C * X.n_instances)

    def run(self) -> np.ndarray:
        learner, joint, X, lam = self.learner, self.joint, self.X, self.lam
        w, k, rng, iterates = np.zeros(joint.size), 0, np.random.default_rng(learner.seed), []
        for epoch in range(learner.epochs):
            if epoch == 1:
                iterates.clear()
            order = epoch_order(X.lengths, learner.batch_size, rng)
            for chunk in np.split(order, range(learner.batch_size, len(order), learner.batch_size)):
                k += 1
                step = np.zeros(joint.size)
                for t in chunk:
                    batch, gold = X.take([t]), self.y[X.positions([t])]
                    predicted = self.decoder.loss_augmented_argmax(joint.scores(w, batch), gold, learner.cost)
                    indices, values, _ = joint.feature_difference(batch, gold, predicted)
                    if learner.cost * (gold != predicted).sum() - values @ w[indices] > 0:
                        np.add.at(step, indices, values)
                w = (1 - 1 / k) * w + step / (lam * k * len(chunk))
                if learner.projection:
                    w *= min(1.0, 1 / math.sqrt(lam * (w @ w)))
                iterates.append(w)
        return np.mean(iterates, axis=0) if learner.averaging and learner.epochs > 1 else w


@pytest.mark.parametrize("params", [{}, {"projection": False}, {"averaging": False}, {"batch_size": 3, "C": 50.0}])
def test_pegasos_matches_dense_textbook_bookkeeping(params):
    joint, X, y = random_problem(21, [2, 3, 4, 1, 3, 2, 5, 3], 3, 8, transitions=True)
    learner = SVM(epochs=4, seed=5, progress=False, **{"C": 1.0, **params}, solver="pegasos")
    learner.fit(joint, Viterbi(), X, y)
    expected = DensePegasos(learner, joint, Viterbi(), X, y).run()
    np.testing.assert_allclose(learner.weights_, expected, rtol=1e-9, atol=1e-12)


def normalised_margin(joint, X, y, w) -> float:
    """min_t [w·φ(x_t, y_t) − max_{y≠y_t} w·φ(x_t, y)] / ‖w‖ over documents."""
    scores = joint.scores(w, X).emissions
    rows = np.arange(len(y))
    gold = scores[rows, y].copy()
    scores[rows, y] = -np.inf
    return float((gold - scores.max(axis=1)).min() / np.linalg.norm(w))


@pytest.mark.parametrize("solver, C", [("pegasos", 1.0), ("bcfw", 10.0)])
def test_margin_is_wider_than_the_averaged_perceptrons(solver, C):
    joint, X, y = separable_documents()
    perceptron = AveragedPerceptron(epochs=10, progress=False, margin=0).fit(joint, Multiclass(), X, y)
    svm = SVM(solver=solver, C=C, epochs=100, progress=False).fit(joint, Multiclass(), X, y)
    baseline = normalised_margin(joint, X, y, perceptron.weights_)
    assert baseline > 0  # both separate the training data
    assert normalised_margin(joint, X, y, svm.weights_) >= 1.5 * baseline  # 0.69 or 0.72 against 0.30 measured


@pytest.mark.parametrize("lengths, transitions, decoder, C, tol, pegasos_epochs", [
    ([1] * 20, False, Multiclass(), 1.0, 1e-4, 100),
    ([2, 3, 4, 1, 3, 2, 5, 3], True, Viterbi(), 0.1, 1e-3, 60),
], ids=["crammer-singer", "chain"])
def test_bcfw_closes_the_gap_at_the_qp_optimum_and_pegasos_comes_near(lengths, transitions, decoder, C, tol,
                                                                    pegasos_epochs):
    joint, X, y = random_problem(11, lengths, 3, 8, transitions=transitions)
    bcfw = SVM(solver="bcfw", C=C, epochs=300, tol=tol, progress=False).fit(joint, decoder, X, y)
    history = bcfw.history_
    assert bcfw.stopped_.startswith("duality gap") and history[-1]["duality_gap"] <= tol
    assert all(r["duality_gap"] >= -1e-9 for r in history)
    assert all(r["duality_gap"] == pytest.approx(r["primal_objective"] - r["dual_objective"]) for r in history)
    assert history[-1]["duality_gap"] <= 1e-3 * history[-1]["primal_objective"]
    objective = bcfw.objective(joint, decoder, X, y)
    primal, dual = objective(bcfw.weights_)[0], history[-1]["dual_objective"]
    assert primal == pytest.approx(history[-1]["primal_objective"], rel=1e-12)
    optimum = reference_primal(joint, X, y, objective.lam)
    assert dual - 1e-7 <= optimum <= primal + 1e-7  # weak duality brackets the optimum
    assert primal <= optimum * (1 + 1e-3)
    pegasos = SVM(C=C, epochs=pegasos_epochs, progress=False, solver="pegasos").fit(joint, decoder, X, y)
    assert optimum - 1e-7 <= objective(pegasos.weights_)[0] <= primal * 1.01
    assert all(r["dual_objective"] is None and r["duality_gap"] is None for r in pegasos.history_)


def test_bcfw_blocks_live_on_their_instances_rows_and_sum_to_w(monkeypatch):
    joint, X, y = random_problem(8, [2, 0, 3, 1, 4], 3, 12, transitions=True)
    tail = np.arange(joint.transition_offset, joint.size)
    supports = [np.concatenate([(np.unique(X.take([i]).indices)[:, None] * 3 + np.arange(3)).ravel(), tail])
                for i in range(X.n_instances)]
    made = []
    original = BlockWeights.__init__

    def keep(self, *args):
        original(self, *args)
        made.append(self)

    monkeypatch.setattr(BlockWeights, "__init__", keep)
    learner = SVM(solver="bcfw", epochs=3, tol=0, progress=False).fit(joint, Viterbi(), X, y)
    blocks, total = made[0], np.zeros(joint.size)
    for i, support in enumerate(supports):  # the entries the gold and predicted outputs touched, of i's rows and tail
        keys = blocks.keys[i]
        assert np.all(np.diff(keys) > 0) and np.isin(keys, support).all() and len(keys) == len(blocks.values[i])
        total[keys] += blocks.values[i]
    assert sum(len(keys) for keys in blocks.keys) < sum(len(support) for support in supports)
    np.testing.assert_allclose(total, learner.weights_, atol=1e-12)
    again = BlockWeights(joint, X)
    again.restore(blocks.state())
    assert all(np.array_equal(a, b) for a, b in zip(again.keys + again.values, blocks.keys + blocks.values))


@pytest.mark.parametrize("costs", [{}, {"cost": 0.7}, {"cost_matrix": np.array(COST_MATRIX)}])
@pytest.mark.parametrize("sigma", [1.0, 2.0])
def test_label_blocks_take_the_general_blocks_steps_and_sum_to_w(costs, sigma):
    """Documents (one position each, no transitions): the blocks x_i ⊗ β_i make the steps of the blocks over each
    instance's rows × labels, with repeated rows in an instance (hash collisions) summed, and Σ_i x_i ⊗ β_i = w.
    Compared over a first pass: later, instances sit exactly on their margin, a tie in the loss-augmented argmax
    that the two sums' rounding may break either way (both then valid BCFW steps)."""
    joint, X, y = random_problem(5, [1] * 12, 4, 6, transitions=False)
    X = FeatureMatrix(np.concatenate([X.indptr[:1], X.indptr[1:] + np.arange(1, 13)]),  # each document's first row again
                      np.insert(X.indices, X.indptr[:-1], X.indices[X.indptr[:-1]]),
                      np.insert(X.values, X.indptr[:-1], 0.5), X.lengths)
    objective = SVM(solver="bcfw", C=0.7, **costs, progress=False).objective(joint, Multiclass(), X, y)
    assert isinstance(make_blocks(joint, X), LabelBlocks)

    def run(blocks, order):
        w, losses, record = np.zeros(joint.size), np.zeros(12), []
        emission = joint.emission_weights(w)
        for i in order:
            gap, gamma, loss_s = blocks.step(objective, i, w, emission, losses[i], sigma)
            losses[i] += gamma * (loss_s - losses[i])
            record.append((gap, gamma, loss_s))
        return w, np.array(record)

    first_pass = np.random.default_rng(1).permutation(12)
    (w, steps), (w_general, steps_general) = (run(blocks, first_pass) for blocks in (LabelBlocks(joint, X),
                                                                                     BlockWeights(joint, X)))
    np.testing.assert_allclose(steps, steps_general, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(w, w_general, rtol=1e-12, atol=1e-15)
    assert np.count_nonzero(steps[:, 1]) > 6 and not np.allclose(w, 0)
    blocks = LabelBlocks(joint, X)
    w, _ = run(blocks, np.random.default_rng(2).permutation(np.tile(np.arange(12), 5)))
    summed = np.zeros_like(w)
    emission = joint.emission_weights(summed)
    for i in range(12):
        a, b = blocks.row_offsets[i], blocks.row_offsets[i + 1]
        emission[blocks.rows[a:b]] += np.outer(blocks.x[a:b], blocks.values.reshape(12, 4)[i])
    np.testing.assert_allclose(sigma * summed, w, atol=1e-12)


def test_label_blocks_only_for_documents_scored_on_their_own():
    chains, X, _ = random_problem(5, [2, 1, 3], 3, 6, transitions=True)
    tokens, X_tokens, _ = random_problem(5, [2, 1, 3], 3, 6, transitions=False)
    documents, X_documents, _ = random_problem(5, [1, 1, 1], 3, 6, transitions=True)
    assert [type(make_blocks(j, x)) for j, x in ((chains, X), (tokens, X_tokens), (documents, X_documents))] == [
        BlockWeights] * 3


def test_history_dev_selection_patience_and_callback():
    joint, X, y = random_problem(4, [3, 4, 2, 5, 1], 3, 30, transitions=True)
    for solver in SVM.solvers:
        began = time.perf_counter()
        tol = {"tol": 0} if solver == "bcfw" else {}
        learner = SVM(solver=solver, epochs=5, patience=None, progress=False, **tol).fit(joint, Viterbi(), X, y,
                                                                                         dev=(X, y))
        wall = time.perf_counter() - began
        history = learner.history_
        assert [r["epoch"] for r in history] == [1, 2, 3, 4, 5] and learner.stopped_ == (
            "5 epochs" if solver == "pegasos" else "5 passes")
        assert list(history[0]) == ["step", "unit", "epoch", "objective", "gradient_norm", "primal_objective", "dual_objective",
                                    "duality_gap", "block_gap_sum", "train_errors", "dev_accuracy", "seconds"]
        best = max(history, key=lambda r: r["dev_accuracy"])  # the first of equals
        assert learner.best_epoch_ == best["epoch"]
        assert (1 - best["dev_accuracy"]) * len(y) == pytest.approx(best["train_errors"])  # dev = training data here
        assert all(r["objective"] == r["primal_objective"] for r in history)
        # Each epoch's seconds (with its dev evaluation) are measured and are parts of the timed fit call.
        seconds = [r["seconds"] for r in history]
        assert all(isinstance(t, float) and t > 0 for t in seconds) and sum(seconds) <= wall
        assert json.loads(json.dumps(history)) == history
    again = SVM(solver="bcfw", epochs=5, tol=0, progress=False).fit(joint, Viterbi(), X, y, dev=(X, y))
    np.testing.assert_array_equal(again.weights_, learner.weights_)  # seeded
    unseen = (X, np.full(len(y), -1))  # accuracy 0 at every epoch
    learner = SVM(epochs=50, patience=2, progress=False, solver="pegasos").fit(joint, Viterbi(), X, y, unseen)
    assert len(learner.history_) == 3 and learner.best_epoch_ == 1
    assert learner.stopped_ == "no dev improvement in 2 evaluations"
    seen = []
    learner = SVM(solver="bcfw", epochs=50, tol=0, callback=lambda record, _: seen.append(record) or len(seen) == 2,
                  progress=False).fit(joint, Viterbi(), X, y)
    assert len(learner.history_) == 2 and seen == learner.history_ and learner.stopped_ == "stopped by the callback"


def test_a_cost_matrix_moves_the_boundary_away_from_the_costly_label():
    # With a high cost of predicting c for a document of label a, the weights favour a over c more.
    joint, X, y = hand_problem()
    matrix = [[0, 1, 10], [1, 0, 1], [1, 1, 0]]
    plain, costly = (SVM(solver="bcfw", epochs=100, cost_matrix=m, progress=False).fit(joint, Multiclass(), X, y)
                     for m in (None, matrix))
    assert costly.history_[-1]["duality_gap"] <= 1e-3
    margin = [joint.scores(learner.weights_, X).emissions[0] @ [1, 0, -1] for learner in (plain, costly)]
    assert margin[1] > margin[0]


def test_a_cost_matrix_by_label_name_is_the_matrix_in_label_order():
    joint, X, y = hand_problem()
    a, b, c = joint.labels
    by_name = {a: {a: 0, b: 1, c: 10}, b: {a: 1, b: 0, c: 1}, c: {a: 1, b: 1, c: 0}}
    named = SVM(solver="bcfw", epochs=20, cost_matrix=by_name, progress=False).fit(joint, Multiclass(), X, y)
    matrix = SVM(solver="bcfw", epochs=20, cost_matrix=[[0, 1, 10], [1, 0, 1], [1, 1, 0]], progress=False)
    matrix.fit(joint, Multiclass(), X, y)
    np.testing.assert_array_equal(named.cost_matrix, matrix.cost_matrix)
    np.testing.assert_array_equal(named.weights_, matrix.weights_)
    del by_name[c][a]
    with pytest.raises(OptionValueError, match=r"lacks 1 \(true, predicted\) pair\(s\), e.g. \('c', 'a'\)"):
        SVM(cost_matrix=by_name, solver="pegasos").fit(joint, Multiclass(), X, y)


def _widened(best: dict) -> list:
    """The values relative_C=None tries, by the rule written out: RELATIVE_CS, then FURTHER_CS in turn while the
    smallest value tried has strictly the best score ``best[value]``."""
    tried = list(RELATIVE_CS)
    for value in FURTHER_CS:
        strongest = min(tried)
        if not all(best[strongest] > best[other] for other in tried if other != strongest):
            break
        tried.append(value)
    return tried


@pytest.mark.parametrize("seed, instances, features, widened", [
    (21, 60, 10, 0),    # 3 beats 1: the two candidates only
    (37, 60, 10, 0),    # 1 ties 3: not strictly the best, no wider
    (29, 60, 10, 1),    # 1 strictly best: 0.3 tried, ties it, the walk stops and 1 is kept (the first of equals)
    (39, 60, 10, 1),    # 0.3 tried, worse
    (168, 20, 30, 2),   # 0.3 strictly best: 0.1 tried too
    (132, 20, 30, 2),   # 0.1 the best: the end of FURTHER_CS
])
def test_relative_C_is_chosen_on_dev_among_the_candidates(seed, instances, features, widened):
    """relative_C=None with dev: one run from zero per candidate, each keeping its best dev epoch, the best run (the
    first of equals) the model and every candidate's score recorded; the same as the run of the value chosen.  The
    candidates are RELATIVE_CS, then FURTHER_CS in turn while the smallest tried is strictly the best (the rule
    written out, from each value's own run).  Without dev, or with C given: one run with the untuned value (or C)."""
    joint, X, y = random_problem(seed, [1] * instances, 3, features, transitions=False)
    _, X_dev, y_dev = random_problem(seed + 1, [1] * 30, 3, features, transitions=False)
    dev = (X_dev, y_dev)
    values = RELATIVE_CS + FURTHER_CS
    fixed = {r: SVM(epochs=6, relative_C=r, progress=False).fit(joint, Multiclass(), X, y, dev) for r in values}
    best = {r: max(h["dev_accuracy"] for h in learner.history_) for r, learner in fixed.items()}
    tried = _widened(best)
    assert len(tried) == len(RELATIVE_CS) + widened  # the case this problem stands for
    auto = SVM(epochs=6, progress=False).fit(joint, Multiclass(), X, y, dev)
    assert auto.candidates_ == [{"relative_C": r, "dev_accuracy": best[r]} for r in tried]
    chosen = max(tried, key=lambda r: (best[r], -tried.index(r)))
    assert auto.chosen_ == {"relative_C": chosen, "C": fixed[chosen].chosen_["C"]}
    np.testing.assert_array_equal(auto.weights_, fixed[chosen].weights_)
    untimed = [[{k: v for k, v in record.items() if k != "seconds"} for record in learner.history_]
               for learner in (auto, fixed[chosen])]
    assert auto.best_epoch_ == fixed[chosen].best_epoch_ and untimed[0] == untimed[1]
    no_dev = SVM(epochs=6, progress=False).fit(joint, Multiclass(), X, y)
    assert no_dev.chosen_ == {"C": RELATIVE_C_DEFAULT / X.mean_squared_norm()} and no_dev.candidates_ == []
    given = SVM(epochs=6, C=0.5, progress=False).fit(joint, Multiclass(), X, y, dev)
    assert given.chosen_ == {} and given.candidates_ == []


# --- models with learner="svm" --------------------------------------------------------------------------


def test_without_dev_relative_C_and_the_passes_are_chosen_on_a_held_out_tenth(nltk_data_dir):
    """A classifier without dev (held_out=0.1): relative_C and the passes are chosen on a seeded tenth, then the model
    is the run on all the documents with both: the same weights as that run by hand."""
    documents = load_documents("qc", "train")[:1000]
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    auto = Classifier("text-presence", SVM(epochs=5, seed=2, progress=False), held_out=0.1).fit(texts, labels)
    chosen = auto.learner.chosen_
    assert set(chosen) == {"relative_C", "C", "epochs"} and chosen["relative_C"] in RELATIVE_CS + FURTHER_CS
    assert [c["relative_C"] for c in auto.learner.candidates_[:len(RELATIVE_CS)]] == list(RELATIVE_CS)
    by_hand = Classifier("text-presence", SVM(epochs=chosen["epochs"], relative_C=chosen["relative_C"], seed=2,
                                              progress=False)).fit(texts, labels)
    np.testing.assert_array_equal(auto.weights_, by_hand.weights_)
    assert by_hand.learner.chosen_["C"] == chosen["C"] and auto.learner.relative_C is None


def test_make_learner_and_params():
    assert LEARNERS["svm"] is SVM and SVM.capabilities.online is False and SVM.capabilities.probabilistic is False
    learner = make_learner("svm", epochs=None, seed=2, batch_size=4, patience=3, progress=False)
    assert learner.params() == {"epochs": None, "solver": "bcfw", "C": None, "relative_C": None, "cost": 1.0, "cost_matrix": None,
                                "projection": True, "averaging": True, "tol": 1e-3, "eval_every": 1, "seed": 2,
                                "batch_size": 4, "patience": 3}
    assert make_learner("svm", **learner.params()).params() == learner.params()
    matrix = SVM(solver="bcfw", cost_matrix=np.array(COST_MATRIX))
    assert matrix.max_epochs == 50 and json.loads(json.dumps(matrix.params()))["cost_matrix"] == COST_MATRIX
    assert make_learner("svm", **matrix.params()).params() == matrix.params()


def test_classifier_fits_predicts_and_round_trips(tmp_path):
    for learner in ("svm", SVM(solver="bcfw", cost_matrix=[[0, 2], [1, 0]], progress=False)):
        clf = Classifier("text-unigram", learner, epochs=20, progress=False).fit(DOCS, LABELS,
                                                                                dev=(DOCS[:3], LABELS[:3]))
        assert assert_classifier_round_trip(clf, DOCS, LABELS, tmp_path).learner.name == "svm"


@pytest.mark.parametrize("decoder", ["viterbi", "multiclass"])
@pytest.mark.parametrize("solver", SVM.solvers)
def test_tagger_fits_predicts_and_round_trips(tmp_path, decoder, solver):
    learner = SVM(solver=solver, epochs=20, batch_size=2, progress=False)
    tagger = Tagger("pos-basic", learner, decoder, bits=16).fit(TOY)
    assert_tagger_round_trip(tagger, TOY, tmp_path)
    assert Tagger("pos-basic", "svm", decoder, epochs=3, bits=16, progress=False).fit(TOY).learner.epochs == 3


# --- bad settings ----------------------------------------------------------------------------------------


def test_bad_settings_are_refused():
    for C in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"C must be positive and finite, got"):
            SVM(C=C, solver="pegasos")
    for bad in ({"epochs": 0}, {"batch_size": 0}, {"eval_every": 0}, {"cost": 0.0}, {"tol": -1.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SVM(**bad, solver="pegasos")
    with pytest.raises(OptionValueError, match="solver must be one of pegasos, bcfw, got 'sdca'"):
        SVM(solver="sdca")
    with pytest.raises(ValueError, match=r"square labels × labels array, got shape \(3, 2\)"):
        SVM(cost_matrix=np.ones((3, 2)))
    with pytest.raises(ValueError, match="zero diagonal"):
        SVM(cost_matrix=np.ones((3, 3)))
    with pytest.raises(ValueError, match="cost or cost_matrix, not both"):
        SVM(cost=2.0, cost_matrix=np.zeros((3, 3)))
    joint, X, y = hand_problem()
    with pytest.raises(ValueError, match=r"cost_matrix must be 3×3 \(labels × labels, in the order "
                                         r"\['a', 'b', 'c'\]\), got 2×2"):
        SVM(cost_matrix=[[0, 1], [1, 0]], solver="pegasos").fit(joint, Multiclass(), X, y)
    chain, X, y = random_problem(0, [2, 3], 3, 5, transitions=True)
    with pytest.raises(ValueError, match="a cost_matrix needs the multiclass decoder, not 'viterbi'"):
        SVM(cost_matrix=np.ones((3, 3)) - np.eye(3)).fit(chain, Viterbi(), X, y)
