"""Tests of structlin.analysis (radius, certified margin, mistake bound, online-to-batch), the decoders'
max-marginals, the binary special case (structlin.binary), the Δ trick and ``structlin analyze``."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from brute import dense_rows, phi
from scipy.optimize import minimize

from structlin.analysis import (
    analyze,
    certified_margin,
    certify,
    margins,
    online_to_batch_bound,
    perceptron_mistakes,
    planted_separable,
    radius,
)
from structlin.binary import BinaryView
from structlin.cli import main
from structlin.decoders import Multiclass, Viterbi
from structlin.joint import JointFeatureMap
from structlin.learners import Perceptron
from structlin.learners.delta_trick import DeltaTrick
from structlin.learners.epochs import epoch_order
from structlin.matrix import FeatureMatrix
from cli_run import run


def random_corpus(rng, lengths, n_rows, *, signed: bool) -> FeatureMatrix:
    """Instances of the given lengths, each position with 1-3 distinct rows of random values."""
    indptr, indices, values = [0], [], []
    for _ in range(sum(lengths)):
        rows = rng.choice(n_rows, size=rng.integers(1, 4), replace=False)
        indices += rows.tolist()
        values += (rng.uniform(-1, 1, len(rows)) if signed else rng.uniform(0.1, 1, len(rows))).tolist()
        indptr.append(len(indices))
    return FeatureMatrix(indptr, indices, values, lengths)


def outputs(joint: JointFeatureMap, n: int):
    return [np.array(y) for y in itertools.product(range(joint.n_labels), repeat=n)]


def instances(joint: JointFeatureMap, X: FeatureMatrix):
    """(dense position rows, φ of every output) of every instance."""
    F = dense_rows(X, joint.n_rows)
    for a, b in itertools.pairwise(X.offsets):
        yield F[a:b], {tuple(y): phi(joint, F[a:b], y) for y in outputs(joint, b - a)}


# --- the radius ------------------------------------------------------------------------------------


@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_radius_against_brute_force_on_small_chains(transitions, signed, seed):
    rng = np.random.default_rng(seed)
    joint = JointFeatureMap(["a", "b", "c"][: 2 + seed % 2], np.arange(4), transitions=transitions)
    X = random_corpus(rng, [1, 2, 3, 3], 4, signed=signed)
    brute = max(np.linalg.norm(phis[y] - phis[z]) for _, phis in instances(joint, X) for y in phis for z in phis)
    R = radius(joint, X)
    assert R.value >= brute - 1e-9
    if not signed:  # non-negative values: every G_ij ≥ 0, so the value is exact
        assert R.exact
    if R.exact:
        assert R.value == pytest.approx(brute, rel=1e-9)


def test_radius_of_documents_is_root_two_times_the_largest_norm():
    joint = JointFeatureMap(["a", "b", "c"], np.arange(3), transitions=False)
    X = FeatureMatrix([0, 2, 3], [0, 1, 2], [3.0, -4.0, 1.0], [1, 1])
    R = radius(joint, X)
    assert R.value == pytest.approx(5 * math.sqrt(2)) and R.exact
    assert radius(JointFeatureMap(["a"], np.arange(3), transitions=False), X).value == 0


# --- max-marginals, scores and margins --------------------------------------------------------------------


@pytest.mark.parametrize("decoder, transitions", [(Viterbi(), True), (Multiclass(), False)])
def test_max_marginals_scores_and_margins_against_brute_force(decoder, transitions):
    rng = np.random.default_rng(7)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(5), transitions=transitions)
    X = random_corpus(rng, [3, 0, 1, 2, 4], 5, signed=True)
    w = rng.standard_normal(joint.size)
    y = rng.integers(0, 3, X.n_positions)
    scores = joint.scores(w, X)
    mu, per_instance, got = decoder.max_marginals(scores), scores.score(y), margins(joint, w, X, y)
    for t, (_, phis) in enumerate(instances(joint, X)):
        a, b = X.offsets[t], X.offsets[t + 1]
        value = {z: float(w @ f) for z, f in phis.items()}
        gold = tuple(y[a:b])
        assert per_instance[t] == pytest.approx(value[gold])
        for p, k in itertools.product(range(b - a), range(3)):
            assert mu[a + p, k] == pytest.approx(max(v for z, v in value.items() if z[p] == k))
        rivals = [v for z, v in value.items() if z != gold]
        assert got[t] == (pytest.approx(value[gold] - max(rivals)) if rivals else math.inf)


def test_certify_is_the_smallest_normalised_margin():
    joint = JointFeatureMap(["a", "b"], np.arange(2), transitions=False)
    X = FeatureMatrix([0, 1, 2], [0, 1], [1.0, 1.0], [1, 1])
    w = np.array([3.0, 0.0, 0.0, 1.0])  # doc 0 (row 0) scores (3, 0), doc 1 (row 1) scores (0, 1)
    certificate = certify(joint, w, X, np.array([0, 1]))
    assert certificate.margin == pytest.approx(1 / math.sqrt(10)) and certificate.separable
    assert certificate.violations == 0 and np.linalg.norm(certificate.weights) == pytest.approx(1)
    assert certify(joint, w, X, np.array([1, 1])).violations == 1
    assert not certify(joint, np.zeros(4), X, np.array([0, 1])).separable


# --- planted separable data: the mistake bound ---------------------------------------------------------


PLANTED = [(seed, dim, n_labels, 1) for seed, (dim, n_labels) in enumerate([(3, 2), (5, 3), (10, 4), (20, 5), (8, 2)])]
PLANTED += [(5, 4, 3, 3), (6, 6, 2, 2)]  # chains


@pytest.mark.parametrize("seed, dim, n_labels, length", PLANTED)
def test_planted_perceptron_mistakes_never_exceed_the_bound(seed, dim, n_labels, length):
    planted = planted_separable(120, dim, n_labels, 0.08, length=length, seed=seed)
    joint, X, y = planted.joint, planted.X, planted.y
    decoder = Viterbi() if length > 1 else Multiclass()
    assert certify(joint, planted.w, X, y).margin >= planted.margin
    certificate = certified_margin(joint, decoder, X, y, passes=20, seed=seed)
    curve = perceptron_mistakes(joint, decoder, X, y, epochs=500, seed=seed)
    assert certificate.separable and curve.converged
    assert curve.total <= radius(joint, X).value ** 2 / certificate.margin**2


def hard_margin(joint: JointFeatureMap, X: FeatureMatrix, y: np.ndarray) -> float:
    """γ*, the optimal margin, by the hard-margin SVM: 1/‖w‖ for w = argmin ‖w‖² s.t. w·ψ_t(z) ≥ 1."""
    psi = np.array([phis[tuple(y[a:b])] - f for (_, phis), (a, b) in zip(instances(joint, X), itertools.pairwise(X.offsets))
                    for z, f in phis.items() if z != tuple(y[a:b])])
    solution = minimize(lambda w: w @ w / 2, np.zeros(joint.size), jac=lambda w: w, method="SLSQP",
                        constraints={"type": "ineq", "fun": lambda w: psi @ w - 1, "jac": lambda w: psi},
                        options={"maxiter": 500, "ftol": 1e-12})
    assert solution.success and (psi @ solution.x >= 1 - 1e-6).all()
    return 1 / np.linalg.norm(solution.x)


@pytest.mark.parametrize("seed, length", [(0, 1), (1, 1), (2, 2)])
def test_certified_margins_are_at_most_the_optimal_margin(seed, length):
    planted = planted_separable(25, 3, 3, 0.1, length=length, seed=seed)
    joint, X, y = planted.joint, planted.X, planted.y
    optimal = hard_margin(joint, X, y)
    planted_margin = certify(joint, planted.w, X, y).margin
    certificate = certified_margin(joint, Viterbi() if length > 1 else Multiclass(), X, y, passes=50)
    assert planted.margin <= planted_margin <= optimal + 1e-6
    assert 0.8 * optimal <= certificate.margin <= optimal + 1e-6  # near the hard-margin SVM's, never above
    assert certificate.passes <= 50 and certificate.duality_gap >= 0


# --- the online mistake curve and online-to-batch ------------------------------------------------------


@pytest.mark.parametrize("length", [1, 3])
def test_mistake_curve_matches_the_perceptron_history(length):
    planted = planted_separable(60, 4, 3, 0.02, length=length, seed=3)
    decoder = Viterbi() if length > 1 else Multiclass()
    curve = perceptron_mistakes(planted.joint, decoder, planted.X, planted.y, epochs=4, seed=9)
    learner = Perceptron(epochs=curve.epochs, seed=9, batch_size=1, progress=False, margin=0)
    learner.fit(planted.joint, decoder, planted.X, planted.y)
    assert curve.per_epoch == [record["train_mistakes"] for record in learner.history_]
    assert curve.cumulative(curve.epochs * 60) == curve.total and curve.cumulative(0) == 0
    assert np.all(np.diff(curve.cumulative(np.arange(curve.epochs * 60 + 1))) >= 0)


def test_online_to_batch_bound_by_hand():
    # M/n + √(2 ln(1/δ)/n) = 10/100 + √(2 · ln 20 / 100) = 0.1 + √0.0599146... = 0.3447747...
    assert online_to_batch_bound(10, 100, 0.05) == pytest.approx(0.34477468, abs=1e-8)
    assert online_to_batch_bound(0, 1, 0.5) == pytest.approx(math.sqrt(2 * math.log(2)))
    for bad in [(1, 100, 0.0), (1, 100, 1.0), (101, 100, 0.1), (0, 0, 0.1)]:
        with pytest.raises(ValueError):
            online_to_batch_bound(*bad)


# --- the binary special case -------------------------------------------------------------------------


def test_two_label_perceptron_is_the_classic_binary_perceptron():
    rng = np.random.default_rng(0)
    n, dim = 40, 5
    x = np.hstack([rng.standard_normal((n, dim)), np.ones((n, 1))])  # the last column: a bias feature
    X = FeatureMatrix(np.arange(n + 1) * (dim + 1), np.tile(np.arange(dim + 1), n), x.ravel(), np.ones(n, np.int64))
    labels = np.where(x[:, :dim] @ rng.standard_normal(dim) + 0.3 > 0, 1, 0)  # label id 1 = "+1"
    joint = JointFeatureMap(["-1", "+1"], np.arange(dim + 1), transitions=False)
    learner = Perceptron(epochs=3, seed=4, batch_size=1, progress=False, margin=0).fit(joint, Multiclass(), X, labels)
    view = BinaryView.from_multiclass(joint, learner.weights_, bias_row=dim)
    # The classic perceptron, in the same order: a mistake when y (v·x + b) ≤ 0 (a tie goes to "-1").
    v, b, pm = np.zeros(dim), 0.0, 2 * labels - 1
    rng_order = np.random.default_rng(4)
    for _ in range(3):
        for t in epoch_order(X.lengths, 1, rng_order):
            decision = v @ x[t, :dim] + b
            if (1 if decision > 0 else -1) != pm[t]:
                v, b = v + pm[t] * x[t, :dim], b + pm[t]
    np.testing.assert_allclose(view.v[:dim], 2 * v, atol=1e-9)
    assert view.b == pytest.approx(2 * b) and view.v[dim] == 0
    assert (view.negative, view.positive) == ("-1", "+1")
    multiclass = Multiclass().argmax(joint.scores(learner.weights_, X))
    np.testing.assert_array_equal(view.predict(X), 2 * multiclass - 1)


def test_binary_view_breaks_ties_like_the_multiclass_argmax():
    joint = JointFeatureMap(["no", "yes"], np.arange(2), transitions=False)
    X = FeatureMatrix([0, 1, 2], [0, 1], [1.0, 1.0], [1, 1])
    w = np.zeros(joint.size)  # every score ties: the argmax is "no", the first label
    assert BinaryView.from_multiclass(joint, w).predict(X).tolist() == [-1, -1]
    assert BinaryView.from_multiclass(joint, w, positive="no").predict(X).tolist() == [1, 1]
    with pytest.raises(ValueError, match="two labels"):
        BinaryView.from_multiclass(JointFeatureMap(["a", "b"], np.arange(2)), np.zeros(12))


# --- the Δ trick --------------------------------------------------------------------------------------------


def conflicting_corpus():
    """Two identical documents with different labels (not separable), and two more."""
    joint = JointFeatureMap(["a", "b"], np.array([4, 9]), transitions=False)
    X = FeatureMatrix([0, 1, 2, 3, 5], [0, 0, 1, 0, 1], [1.0, 1.0, 1.0, 0.5, 0.5], [1, 1, 1, 1])
    return joint, X, np.array([0, 1, 1, 0])


def test_delta_trick_makes_non_separable_data_separable():
    joint, X, y = conflicting_corpus()
    assert not perceptron_mistakes(joint, Multiclass(), X, y, epochs=30).converged
    trick = DeltaTrick(joint, X, 1.0)
    assert trick.joint.n_rows == joint.n_rows + X.n_positions and trick.X.n_positions == X.n_positions
    assert (trick.X.indices[trick.X.indptr[1:] - 1] == joint.n_rows + np.arange(4)).all()
    assert perceptron_mistakes(trick.joint, Multiclass(), trick.X, y, epochs=30).converged
    result = analyze(joint, Multiclass(), X, y, passes=30, epochs=50, delta_trick=1.0)
    assert result.certificate.separable and result.curve.converged and result.curve.total <= result.bound
    for bad in (0.0, 1e300, float("inf")):  # Δ² must stay finite in float32
        with pytest.raises(ValueError, match="Δ must be positive and at most 1e\\+18"):
            DeltaTrick(joint, X, bad)


@pytest.mark.parametrize("transitions", [False, True])
def test_delta_trick_id_features_are_absent_at_prediction(transitions):
    rng = np.random.default_rng(1)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(4), transitions=transitions)
    X = random_corpus(rng, [2, 3, 1], 4, signed=False)
    trick = DeltaTrick(joint, X, 2.0)
    w = rng.standard_normal(trick.joint.size)
    restricted = trick.restrict(w)
    assert len(restricted) == joint.size
    # On inputs without id columns the augmented weights and the restricted ones score alike.
    mine, theirs = trick.joint.scores(w, X), joint.scores(restricted, X)
    np.testing.assert_allclose(mine.emissions, theirs.emissions)
    if transitions:
        np.testing.assert_array_equal(mine.transitions, theirs.transitions)


# --- the command line -------------------------------------------------------------------------------------


@pytest.fixture()
def documents(tmp_path):
    path = tmp_path / "train.txt"
    texts = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring plot"]
    labels = ["pos", "pos", "neg", "neg", "pos", "neg"]
    path.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(texts, labels)), encoding="utf-8")
    return path


def test_analyze_documents_text_and_json(capsys, documents):
    code, out, _ = run(capsys, "analyze", "--train", documents, "--format", "fasttext", "--features", "text-unigram",
                       "--passes", "20", "--epochs", "20")
    assert code == 0
    assert "radius R = " in out and "certified margin γ̂ = " in out and "mistake bound R²/γ̂² = " in out
    assert "(converged)" in out and "online-to-batch" in out
    code, out, _ = run(capsys, "analyze", "--train", documents, "--format", "fasttext", "--features", "text-unigram",
                       "--passes", "20", "--epochs", "20", "--json", "--delta", "0.1")
    result = json.loads(out)
    assert code == 0 and result["instances"] == 6 and result["separable"] and result["converged"]
    assert result["mistakes"] <= result["mistake_bound"] and result["decoder"] == "multiclass"
    assert result["online_to_batch"]["mean_risk_bound"] == pytest.approx(
        online_to_batch_bound(result["mistakes_per_epoch"][0], 6, 0.1))
    assert len(result["mistake_visits"]) == result["mistakes"]


def test_analyze_tagged_file_with_the_delta_trick(capsys, tmp_path):
    path = tmp_path / "train.tsv"
    # "saw" is a verb and a noun in the same context: no weights separate the two sentences.
    path.write_text("I\tPRON\nsaw\tVERB\n\nI\tPRON\nsaw\tNOUN\n\n", encoding="utf-8")
    code, out, _ = run(capsys, "analyze", "--train", path, "--features", "pos-basic", "--passes", "10")
    assert code == 0 and "not certified separable" in out and "(not converged)" in out and "decoder viterbi" in out
    code, out, _ = run(capsys, "analyze", "--train", path, "--features", "pos-basic", "--passes", "30", "--epochs",
                       "50", "--delta-trick", "1", "--json")
    result = json.loads(out)
    assert code == 0 and result["delta_trick"] == 1 and result["separable"] and result["converged"]
    assert result["mistakes"] <= result["mistake_bound"]


@pytest.mark.parametrize("options, needle", [
    (["--decoder", "viterbi"], "multiclass decoder"),
    (["--delta", "1.5"], "delta must be in (0, 1)"),
    (["--epochs", "0"], "epochs must be at least 1"),
    (["--passes", "0"], "passes must be at least 1"),
    (["--delta-trick", "-1"], "Δ must be positive"),
    (["--delta-trick", "1e300"], "Δ must be positive and at most 1e+18"),
    (["--C", "1e300"], "C must be positive and at most 1e+12 in size, got 1e+300"),
])
def test_analyze_errors_are_one_line(capsys, documents, options, needle):
    code, out, err = run(capsys, "analyze", "--train", documents, "--format", "fasttext", *options)
    *read, error = err.splitlines()  # what was read, if it was, then the error
    assert code == 1 and out == "" and needle in error and "Traceback" not in err
    assert all(line.startswith("read 6 documents") for line in read)


def test_analyze_needs_data(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze"])
    assert exit_info.value.code == 2 and "--corpus" in capsys.readouterr().err
