"""The kernel perceptron in dual form: equal to the primal perceptron for the linear kernel and to
the primal perceptron on the explicit expansion for the degree-2 kernel, the averaged and voted
hypotheses against a textbook loop, non-linear problems, budgets, save/load and bad settings."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from roundtrip import assert_classifier_round_trip
from structlin import Classifier, Tagger
from structlin.decoders import Multiclass
from structlin.errors import StructlinError
from structlin.joint import JointFeatureMap
from structlin.kernels import Kernel
from structlin.learners import AveragedPerceptron, KernelPerceptron, Perceptron
from structlin.matrix import FeatureMatrix
from structlin.templates import FeatureSet


def dense_corpus(rows: np.ndarray, n_labels: int):
    """A joint map over the columns of dense ``rows`` (identity indexing) and the rows as instances."""
    csr = scipy.sparse.csr_matrix(rows)
    X = FeatureMatrix(csr.indptr, csr.indices, csr.data, np.ones(len(rows), dtype=np.int64))
    return JointFeatureMap([f"y{k}" for k in range(n_labels)], np.arange(rows.shape[1]), transitions=False), X


def integer_problem(seed=0, n=80, d=12, L=4):
    """Small integer-valued data, so that primal and dual scores are exact and ties agree."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(-2, 3, size=(n, d)) * (rng.random((n, d)) < 0.4)
    return rows.astype(float), rng.integers(0, L, size=n), L


def textbook_perceptron(rows, y, L, epochs, seed):
    """The multiclass perceptron written out: the same visiting order as structlin's learners (a fresh
    permutation per epoch from ``default_rng(seed)``), ties to the first label.  Returns the mistakes
    ``(example, gold, predicted)`` and the weights after every visit."""
    rng = np.random.default_rng(seed)
    W = np.zeros((rows.shape[1], L))
    mistakes, after_visit = [], []
    for _ in range(epochs):
        for t in rng.permutation(len(y)):
            predicted = int((rows[t] @ W).argmax())
            if predicted != y[t]:
                W[:, y[t]] += rows[t]
                W[:, predicted] -= rows[t]
                mistakes.append((t, y[t], predicted))
            after_visit.append(W.copy())
    return mistakes, after_visit


def primal_weights(learner: KernelPerceptron, rows: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``W = Σ_s x_s c_s``: the primal weights of dual coefficients under the linear kernel."""
    return rows[learner.support_].T @ coef


def test_linear_kernel_makes_the_primal_perceptrons_mistakes_and_weights_every_epoch():
    rows, y, L = integer_problem()
    joint, X = dense_corpus(rows, L)
    primal_after, dual_after = [], []
    primal = AveragedPerceptron(6, seed=3, margin=0, callback=lambda r, p: primal_after.append((r["train_mistakes"], np.asarray(p._state.current()),
                                                                                     p._hypothesis())))
    primal.fit(joint, Multiclass(), X, y)
    dual = KernelPerceptron(6, kernel="linear", seed=3,
                            callback=lambda r, k: dual_after.append((r["train_mistakes"],
                                                                     primal_weights(k, rows, k._model.last),
                                                                     primal_weights(k, rows, k._model.averaged))))
    dual.fit(joint, Multiclass(), X, y)
    assert len(primal_after) == len(dual_after) == 6
    for (m_p, w_p, avg_p), (m_d, w_d, avg_d) in zip(primal_after, dual_after):
        assert m_p == m_d
        np.testing.assert_array_equal(w_d, joint.emission_matrix(w_p))
        np.testing.assert_allclose(avg_d, joint.emission_matrix(avg_p), rtol=0, atol=1e-12)
    mistakes, _ = textbook_perceptron(rows, y, L, 6, seed=3)
    assert [tuple(m) for m in dual.mistakes_.tolist()] == [tuple(map(int, m)) for m in mistakes]


def test_linear_kernel_predicts_like_the_primal_perceptron():
    rows, y, L = integer_problem(seed=1)
    joint, X = dense_corpus(rows, L)
    test_rows, _, _ = integer_problem(seed=2, n=50)
    _, X_test = dense_corpus(test_rows, L)
    primal = Perceptron(4, seed=0, margin=0).fit(joint, Multiclass(), X, y)
    dual = KernelPerceptron(4, kernel="linear", hypothesis="last", seed=0).fit(joint, Multiclass(), X, y)
    np.testing.assert_array_equal(dual.decision_function(X_test), joint.scores(primal.weights_, X_test).emissions)


def degree2_expansion(rows: np.ndarray) -> np.ndarray:
    """The explicit feature map of ``(x·x' + 1)²``: ``[1, √2 x_i, x_i², √2 x_i x_j (i < j)]``."""
    i, j = np.triu_indices(rows.shape[1], k=1)
    return np.hstack([np.ones((len(rows), 1)), np.sqrt(2) * rows, rows**2, np.sqrt(2) * rows[:, i] * rows[:, j]])


def test_polynomial_kernel_predicts_like_the_primal_perceptron_on_the_explicit_expansion():
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(120, 4))
    y = ((rows[:, 0] * rows[:, 1] > 0).astype(int) + (rows[:, 2] ** 2 > 1)).astype(int)  # 3 labels, non-linear
    test = rng.normal(size=(200, 4))
    joint, X = dense_corpus(rows, 3)
    _, X_test = dense_corpus(test, 3)
    dual = KernelPerceptron(5, kernel="poly", degree=2, gamma=1.0, coef0=1.0, hypothesis="last", seed=0)
    dual.fit(joint, Multiclass(), X, y)
    joint2, X2 = dense_corpus(degree2_expansion(rows), 3)
    _, X2_test = dense_corpus(degree2_expansion(test), 3)
    primal = Perceptron(5, seed=0, margin=0).fit(joint2, Multiclass(), X2, y)
    assert [h["train_mistakes"] for h in dual.history_] == [h["train_mistakes"] for h in primal.history_]
    assert dual.history_[-1]["train_mistakes"] < dual.history_[0]["train_mistakes"]
    np.testing.assert_array_equal(dual.decision_function(X_test).argmax(axis=1),
                                  joint2.scores(primal.weights_, X2_test).emissions.argmax(axis=1))


def test_averaged_and_voted_hypotheses_against_every_visits_weights():
    """The averaged hypothesis is the mean of the weights after every visit; the voted one lets the
    weights after every visit vote once (survival counts are the visits a hypothesis was current)."""
    rows, y, L = integer_problem(seed=4, n=60)
    joint, X = dense_corpus(rows, L)
    test_rows, _, _ = integer_problem(seed=6, n=40)
    _, X_test = dense_corpus(test_rows, L)
    learner = KernelPerceptron(3, kernel="linear", seed=2).fit(joint, Multiclass(), X, y)
    _, after_visit = textbook_perceptron(rows, y, L, 3, seed=2)
    assert learner.survival_.sum() == len(after_visit) == 3 * len(y)
    learner.hypothesis = "averaged"
    np.testing.assert_allclose(learner.decision_function(X_test), test_rows @ np.mean(after_visit, axis=0), atol=1e-9)
    votes = np.zeros((len(test_rows), L))
    for W in after_visit:
        votes[np.arange(len(test_rows)), (test_rows @ W).argmax(axis=1)] += 1
    learner.hypothesis = "voted"
    np.testing.assert_array_equal(learner.decision_function(X_test), votes)


def test_alpha_counts_and_coefficients():
    rows, y, L = integer_problem(seed=7, n=50)
    joint, X = dense_corpus(rows, L)
    learner = KernelPerceptron(4, kernel="linear", hypothesis="last", seed=0).fit(joint, Multiclass(), X, y)
    mistakes = learner.mistakes_
    assert learner.alpha_.sum() == len(mistakes) == sum(h["train_mistakes"] for h in learner.history_)
    assert learner.n_support_ == len(np.unique(mistakes[:, 0])) == len(learner.support_)
    gold = y[learner.support_]
    assert (learner.alpha_[np.arange(learner.n_support_), gold] == 0).all()  # the gold label is never a mistake
    expected = -learner.alpha_.astype(float)
    expected[np.arange(learner.n_support_), gold] = learner.alpha_.sum(axis=1)
    np.testing.assert_array_equal(learner.coef_, expected)


def rings_and_xor(seed: int, n: int):
    """Two non-linear 2-D problems as feature dicts: concentric rings and XOR quadrants."""
    rng = np.random.default_rng(seed)
    radius = np.where(rng.random(n) < 0.5, rng.uniform(0, 1, n), rng.uniform(1.6, 2.6, n))
    angle = rng.uniform(0, 2 * np.pi, n)
    rings = [({0: r * np.cos(a), 1: r * np.sin(a)}, "inner" if r < 1.3 else "outer") for r, a in zip(radius, angle)]
    points = rng.uniform(-1, 1, (n, 2))
    points += 0.1 * np.sign(points)  # a gap between the quadrants
    xor = [({0: a, 1: b}, "same" if a * b > 0 else "opposite") for a, b in points]
    return {"rings": rings, "xor": xor}


@pytest.mark.parametrize("problem", ["rings", "xor"])
def test_polynomial_and_rbf_kernels_solve_what_the_linear_perceptron_cannot(problem):
    train, test = rings_and_xor(0, 600)[problem], rings_and_xor(1, 400)[problem]
    fs = FeatureSet.load("numeric")

    def accuracy(learner):
        clf = Classifier(fs, learner).fit([d for d, _ in train], [y for _, y in train])
        return np.mean(np.array(clf.predict([d for d, _ in test])) == [y for _, y in test])

    assert accuracy(AveragedPerceptron(10, margin=0)) < 0.7
    assert accuracy(KernelPerceptron(10, kernel="poly", degree=2, gamma=1.0)) >= 0.95
    assert accuracy(KernelPerceptron(10, kernel="rbf", gamma=1.0)) >= 0.95


def test_budget_bounds_the_support_set_and_removes_oldest_or_random():
    train = rings_and_xor(2, 500)["rings"]
    fs = FeatureSet.load("numeric")
    documents, labels = [d for d, _ in train], [y for _, y in train]
    for k in range(0, len(labels), 10):  # label noise: every tenth label flipped, so many examples become supports
        labels[k] = "inner" if labels[k] == "outer" else "outer"
    free = Classifier(fs, KernelPerceptron(5, kernel="rbf", gamma=1.0)).fit(documents, labels)
    assert free.learner.removed_ == 0 and free.learner.n_support_ > 40
    supports = {}
    for removal in ("oldest", "random"):
        clf = Classifier(fs, KernelPerceptron(5, kernel="rbf", gamma=1.0, budget=20, removal=removal))
        clf.fit(documents, labels)
        assert clf.learner.n_support_ <= 20 and clf.learner.removed_ > 0
        assert clf.learner.alpha_.shape == (clf.learner.n_support_, 2)
        supports[removal] = set(clf.learner.support_.tolist())
    assert supports["oldest"] != supports["random"]
    roomy = Classifier(fs, KernelPerceptron(5, kernel="rbf", gamma=1.0, budget=len(train))).fit(documents, labels)
    np.testing.assert_array_equal(roomy.learner.coef_, free.learner.coef_)


def test_same_seed_same_model_and_the_cache_changes_nothing():
    rows, y, L = integer_problem(seed=8)
    joint, X = dense_corpus(rows, L)
    models = [KernelPerceptron(3, kernel="poly", degree=3, seed=1, cache_mb=cache).fit(joint, Multiclass(), X, y)
              for cache in (512, 512, 0)]
    for other in models[1:]:
        np.testing.assert_array_equal(other.coef_, models[0].coef_)
        np.testing.assert_array_equal(other.support_, models[0].support_)
    other_seed = KernelPerceptron(3, kernel="poly", degree=3, seed=2).fit(joint, Multiclass(), X, y)
    assert other_seed.mistakes_.tolist() != models[0].mistakes_.tolist()


def test_gamma_scale_resolves_on_the_training_rows():
    rows, y, L = integer_problem(seed=9)
    joint, X = dense_corpus(rows, L)
    learner = KernelPerceptron(1, kernel="rbf").fit(joint, Multiclass(), X, y)
    assert learner.kernel_.gamma == pytest.approx(1 / (rows.shape[1] * rows.var()))
    assert learner.params()["gamma"] == learner.kernel_.gamma


def test_dev_selects_an_epoch_and_patience_stops():
    data = rings_and_xor(3, 400)["xor"]
    fs = FeatureSet.load("numeric")
    documents, labels = [d for d, _ in data], [y for _, y in data]
    clf = Classifier(fs, KernelPerceptron(30, kernel="poly", degree=2, gamma=1.0, patience=2))
    clf.fit(documents[:300], labels[:300], dev=(documents[300:], labels[300:]))
    history = clf.history_
    assert len(history) < 30 and all(h["dev_accuracy"] is not None for h in history)
    best = max(h["dev_accuracy"] for h in history)
    assert history[clf.learner.best_epoch_ - 1]["dev_accuracy"] == best
    assert len(history) - clf.learner.best_epoch_ == 2


@pytest.mark.parametrize("hypothesis", ["last", "averaged", "voted"])
def test_save_and_load_keep_every_hypothesis(tmp_path, hypothesis):
    documents = ["good fun film", "great fun", "bad plot", "awful bad film", "good plot", "bad fun"]
    labels = ["pos", "pos", "neg", "neg", "pos", "neg"]
    clf = Classifier("text-unigram", KernelPerceptron(8, kernel="poly", degree=2, hypothesis=hypothesis))
    clf.fit(documents, labels, dev=(documents, labels))
    loaded = assert_classifier_round_trip(clf, documents, labels, tmp_path)
    np.testing.assert_array_equal(loaded.learner.alpha_, clf.learner.alpha_)
    np.testing.assert_array_equal(loaded.learner.mistakes_, clf.learner.mistakes_)
    assert loaded.learner.weights_ is None


def test_a_user_kernel_trains_but_is_not_saved(tmp_path):
    def cosine(A, B):
        products = (A @ B.T).toarray()
        norms_a = np.sqrt(A.multiply(A).sum(axis=1)).A.ravel()
        norms_b = np.sqrt(B.multiply(B).sum(axis=1)).A.ravel()
        return products / np.maximum(np.outer(norms_a, norms_b), 1e-12)

    documents, labels = ["good fun", "bad plot", "good film", "bad film"], ["pos", "neg", "pos", "neg"]
    clf = Classifier("text-unigram", KernelPerceptron(5, kernel=cosine)).fit(documents, labels)
    assert clf.predict(documents).tolist() == labels
    with pytest.raises(StructlinError, match="user kernel 'cosine' cannot be saved"):
        clf.save(tmp_path / "m.model")
    wrong = Classifier("text-unigram", KernelPerceptron(5, kernel=lambda A, B: np.zeros((1, 1))))
    with pytest.raises(ValueError, match="must return the"):
        wrong.fit(documents, labels)


@pytest.mark.parametrize(("settings", "message"), [
    ({"kernel": "sigmoid"}, "kernel must be one of linear, poly, rbf, got 'sigmoid'"),
    ({"degree": 0}, "degree must be at least 1"),
    ({"gamma": -1.0}, "gamma must be positive"),
    ({"budget": 0}, "budget must be at least 1"),
    ({"hypothesis": "best"}, "hypothesis must be one of"),
    ({"removal": "newest"}, "removal must be one of"),
    ({"epochs": 0}, "epochs must be at least 1"),
])
def test_bad_settings_raise(settings, message):
    with pytest.raises(ValueError, match=message):
        KernelPerceptron(**settings)


def test_a_tagger_is_refused():
    with pytest.raises(StructlinError, match="'kernel-perceptron' labels single instances"):
        Tagger("pos-basic", KernelPerceptron(2)).fit([[("the", "DET"), ("dog", "NOUN")]])  # checked by fit


def test_kernel_blocks():
    A = scipy.sparse.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    B = scipy.sparse.csr_matrix(np.array([[1.0, 1.0, 1.0]]))
    np.testing.assert_allclose(Kernel("linear")(A, B), [[3.0], [3.0]])
    np.testing.assert_allclose(Kernel("poly", degree=2, gamma=0.5, coef0=1.0)(A, B), [[2.5**2], [2.5**2]])
    np.testing.assert_allclose(Kernel("rbf", gamma=0.1)(A, B), np.exp(-0.1 * np.array([[2.0], [6.0]])))


def test_under_a_budget_averaged_and_voted_cover_the_stretch_after_the_last_removal():
    """Hypotheses from before the last removal held supports that are gone: the averaged and voted
    hypotheses cover the visits after it, so they predict like the last one instead of collapsing to
    the first label (as hypotheses restricted to the kept supports would)."""
    train = rings_and_xor(4, 600)["xor"]
    documents, labels = [d for d, _ in train], [y for _, y in train]
    for k in range(0, len(labels), 7):  # label noise: many supports, so the budget removes some
        labels[k] = "same" if labels[k] == "opposite" else "opposite"
    clf = Classifier(FeatureSet.load("numeric"), KernelPerceptron(6, kernel="poly", degree=2, gamma=1.0, budget=30,
                                                                  removal="random"))
    clf.fit(documents, labels)
    learner = clf.learner
    assert learner.removed_ > 0 and 1 <= learner.survival_.sum() < 6 * len(labels)
    test = [d for d, _ in rings_and_xor(5, 300)["xor"]]
    predictions = {}
    for hypothesis in ("last", "averaged", "voted"):
        learner.hypothesis = hypothesis
        predictions[hypothesis] = clf.predict(test)
    assert len(set(predictions["voted"])) == 2
    agree = [np.mean(np.array(predictions[h]) == predictions["last"]) for h in ("averaged", "voted")]
    assert min(agree) > 0.9


def test_kernel_columns_equal_the_gram_block():
    rows, y, L = integer_problem(seed=16)
    joint, X = dense_corpus(rows, L)
    for settings in ({"kernel": "rbf", "gamma": 0.3}, {"kernel": "poly", "degree": 3, "gamma": 0.5}):
        learner = KernelPerceptron(2, **settings).fit(joint, Multiclass(), X, y)
        support = rows[learner.support_]
        gram = learner.kernel_(scipy.sparse.csr_matrix(rows), scipy.sparse.csr_matrix(support))
        np.testing.assert_allclose(learner.decision_function(X), gram @ learner.coef_, rtol=1e-10)
