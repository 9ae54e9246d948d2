"""Random Fourier features: determinism, the RBF kernel approximation, the ω and b distributions,
feature-set integration, save/load, and a non-linear problem a linear learner solves only with them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from structlin import Classifier, fourier
from structlin.doctemplates import DocumentFeatureExtractor
from structlin.errors import StructlinError
from structlin.fourier import RandomFourierFeatures
from structlin.hashing import FeatureHasher
from structlin.matrix import FeatureMatrix
from structlin.templates import FeatureSet, TokenFeatureExtractor

RFF = {"dimensions": 300, "gamma": 0.5, "seed": 0}


def sparse_rows(dense: np.ndarray, columns: np.ndarray) -> FeatureMatrix:
    """The rows of ``dense`` as a FeatureMatrix whose column ``k`` is bucket ``columns[k]``."""
    nonzero = dense != 0
    indptr = np.concatenate([[0], np.cumsum(nonzero.sum(axis=1))])
    return FeatureMatrix(indptr, np.broadcast_to(columns, dense.shape)[nonzero], dense[nonzero], np.ones(len(dense)))


def random_vectors(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` sparse vectors over 40 scattered buckets below 2**22: a shared base plus sparse noise,
    so that their RBF kernel values spread over (0, 1)."""
    rng = np.random.default_rng(seed)
    columns = np.sort(rng.choice(1 << 22, 40, replace=False))
    base = np.where(rng.random(40) < 0.3, rng.normal(0, 1, 40), 0.0)
    noise = np.where(rng.random((n, 40)) < 0.25, rng.normal(0, 0.8, (n, 40)), 0.0)
    return base + noise, columns


def dense_features(rff: RandomFourierFeatures, matrix: FeatureMatrix) -> np.ndarray:
    z = rff.transform(matrix)
    return z.values.reshape(matrix.n_positions, rff.dimensions).astype(np.float64)


def rbf(x: np.ndarray, gamma: float) -> np.ndarray:
    return np.exp(-gamma * ((x[:, None] - x[None]) ** 2).sum(axis=-1))


def rings_feature_set(random_fourier: dict | None) -> FeatureSet:
    data = {"name": "rings", "values": "count", "template": [{"name": "featureset"}]}
    if random_fourier is not None:
        data["random_fourier"] = random_fourier
    return FeatureSet.from_dict(data)


def rings(n: int, seed: int) -> tuple[list[dict], list[str]]:
    """Points on two noisy concentric circles (radius 1: inner, 3: outer), as ``{0: x, 1: y}``."""
    rng = np.random.default_rng(seed)
    outer = rng.random(n) < 0.5
    radius = np.where(outer, 3.0, 1.0) + rng.normal(0, 0.25, n)
    angle = rng.uniform(0, 2 * math.pi, n)
    points = [{0: float(r * math.cos(a)), 1: float(r * math.sin(a))} for r, a in zip(radius, angle)]
    return points, ["outer" if o else "inner" for o in outer]


# --- the transform ------------------------------------------------------------------------------


def test_dense_rows_of_d_columns():
    x, columns = random_vectors(5, 0)
    x[2] = 0.0  # an empty document still gets sqrt(2/D) · cos(b)
    rff = RandomFourierFeatures(64, 0.1, 7)
    z = rff.transform(sparse_rows(x, columns))
    assert z.lengths.tolist() == [1] * 5
    assert z.indptr.tolist() == [0, 64, 128, 192, 256, 320]
    assert z.indices.tolist() == list(range(64)) * 5
    assert z.values.dtype == np.float32 and np.all(np.abs(z.values) <= math.sqrt(2 / 64) + 1e-7)
    np.testing.assert_allclose(z.values[128:192], math.sqrt(2 / 64) * np.cos(rff.phases), rtol=1e-6)


def test_matches_the_formula_on_dense_frequencies():
    x, columns = random_vectors(4, 1)
    rff = RandomFourierFeatures(50, 0.3, 2)
    expected = math.sqrt(2 / 50) * np.cos(x @ rff.frequencies(columns) + rff.phases)
    np.testing.assert_allclose(dense_features(rff, sparse_rows(x, columns)), expected, atol=1e-6)


def test_same_seed_same_features_other_seed_other_features():
    matrix = sparse_rows(*random_vectors(6, 2))
    first = dense_features(RandomFourierFeatures(100, 0.2, 5), matrix)
    np.testing.assert_array_equal(first, dense_features(RandomFourierFeatures(100, 0.2, 5), matrix))
    other = dense_features(RandomFourierFeatures(100, 0.2, 6), matrix)
    assert np.mean(np.abs(first - other)) > 0.05


def test_a_bucket_frequencies_do_not_depend_on_the_other_buckets():
    rff = RandomFourierFeatures(33, 1.0, 3)
    buckets = np.array([5, 2**31 - 1, 0, 123456])
    together = rff.frequencies(buckets)
    for k, bucket in enumerate(buckets):
        np.testing.assert_array_equal(rff.frequencies([bucket])[0], together[k])


@pytest.mark.parametrize("chunk_values", [fourier.CHUNK_VALUES, 100])
def test_a_document_features_do_not_depend_on_the_batch(monkeypatch, chunk_values):
    """Alone or among other documents, in one chunk of buckets or in chunks of a single bucket."""
    monkeypatch.setattr(fourier, "CHUNK_VALUES", chunk_values)
    x, columns = random_vectors(12, 3)
    rff = RandomFourierFeatures(100, 0.2, 0)
    batch = dense_features(rff, sparse_rows(x, columns))
    for k in (0, 5, 11):
        alone = dense_features(rff, sparse_rows(x[k : k + 1], columns))[0]
        if chunk_values == fourier.CHUNK_VALUES:
            np.testing.assert_array_equal(alone, batch[k])
        else:  # ω·x is summed in another order
            np.testing.assert_allclose(alone, batch[k], atol=1e-6)


# --- the kernel approximation -------------------------------------------------------------------


def test_approximates_the_rbf_kernel():
    gamma = 0.1
    x, columns = random_vectors(8, 4)
    kernel = rbf(x, gamma)
    assert kernel.min() < 0.3  # the kernel values spread over (0, 1)
    errors = {}
    for d in (500, 20000):
        z = dense_features(RandomFourierFeatures(d, gamma, 0), sparse_rows(x, columns))
        errors[d] = np.abs(z @ z.T - kernel)
    assert errors[20000].max() < 0.03
    assert errors[20000].mean() < errors[500].mean() / 2


def test_frequencies_are_normal_with_variance_two_gamma():
    gamma = 0.25
    rff = RandomFourierFeatures(501, gamma, 11)  # odd: the last Box–Muller pair is cut in half
    omega = rff.frequencies(np.arange(2000) * 1_000_003)  # buckets up to 2**31
    assert omega.shape == (2000, 501)
    sample = omega.ravel()
    standard_error = math.sqrt(2 * gamma / len(sample))
    assert abs(sample.mean()) < 5 * standard_error
    assert abs(sample.var() / (2 * gamma) - 1) < 0.01
    assert scipy.stats.kstest(sample[::10], "norm", args=(0, math.sqrt(2 * gamma))).pvalue > 0.001
    assert abs(np.corrcoef(omega[:, 0], omega[:, 1])[0, 1]) < 0.1  # the two normals of one pair
    assert abs(np.corrcoef(omega[:-1].ravel(), omega[1:].ravel())[0, 1]) < 0.01  # neighbouring buckets


def test_phases_are_uniform_on_zero_two_pi():
    phases = RandomFourierFeatures(20000, 1.0, 0).phases
    assert phases.min() >= 0 and phases.max() < 2 * math.pi
    assert scipy.stats.kstest(phases, "uniform", args=(0, 2 * math.pi)).pvalue > 0.001
    assert not np.array_equal(phases, RandomFourierFeatures(20000, 1.0, 1).phases)


# --- feature sets and classifiers ---------------------------------------------------------------


def test_feature_set_round_trip():
    fs = rings_feature_set(RFF)
    assert fs.random_fourier == RandomFourierFeatures(300, 0.5, 0)
    assert fs.to_dict()["random_fourier"] == RFF
    assert FeatureSet.from_dict(fs.to_dict()) == fs
    assert "random_fourier" not in rings_feature_set(None).to_dict()
    bundled = FeatureSet.load("numeric-rff")
    assert bundled.random_fourier == RandomFourierFeatures(2000, 0.001, 0)
    assert FeatureSet.from_dict(bundled.to_dict()) == bundled


def test_extractor_applies_the_map_after_values_and_normalisation():
    documents = ["the cat sat on the mat", "a dog", "the dog sat", ""]
    plain = FeatureSet.from_dict({"name": "t", "values": "log-tfidf", "normalize": "l2", "template": [{"name": "words"}]})
    mapped = FeatureSet.from_dict({**plain.to_dict(), "random_fourier": RFF})
    hasher = FeatureHasher(18)
    extractors = [DocumentFeatureExtractor(fs, hasher) for fs in (plain, mapped)]
    for extractor in extractors:
        extractor.fit_idf(extractor.counts(documents))
    values, features = (e.transform(e.counts(documents)) for e in extractors)
    np.testing.assert_array_equal(features.values, mapped.random_fourier.transform(values).values)


def test_classifier_save_load_predicts_the_same(tmp_path):
    train, labels = rings(200, 0)
    test, _ = rings(100, 1)
    clf = Classifier(rings_feature_set(RFF), "averaged-perceptron", epochs=3, progress=False).fit(train, labels)
    clf.save(tmp_path / "rings.model")
    loaded = Classifier.load(tmp_path / "rings.model")
    assert loaded.feature_set == clf.feature_set
    np.testing.assert_array_equal(loaded.predict(test), clf.predict(test))
    np.testing.assert_array_equal(loaded.decision_function(test), clf.decision_function(test))


def test_concentric_rings_need_the_kernel():
    train, train_labels = rings(600, 0)
    test, test_labels = rings(400, 1)

    def accuracy(random_fourier):
        clf = Classifier(rings_feature_set(random_fourier), "averaged-perceptron", progress=False)
        predicted = clf.fit(train, train_labels).predict(test)
        return np.mean(np.array(predicted) == np.array(test_labels))

    assert accuracy(RFF) >= 0.95
    assert accuracy(None) < 0.70


# --- bad settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(("table", "message"), [
    ({"dimensions": 0, "gamma": 1.0}, "dimensions must be a positive integer, got 0"),
    ({"dimensions": 10.0, "gamma": 1.0}, "dimensions must be a positive integer, got 10.0"),
    ({"dimensions": True, "gamma": 1.0}, "dimensions must be a positive integer, got True"),
    ({"dimensions": 10, "gamma": 0}, "gamma must be a positive finite number, got 0"),
    ({"dimensions": 10, "gamma": -0.5}, "gamma must be a positive finite number"),
    ({"dimensions": 10, "gamma": math.inf}, "gamma must be a positive finite number, got inf"),
    ({"dimensions": 10, "gamma": math.nan}, "gamma must be a positive finite number, got nan"),
    ({"dimensions": 10, "gamma": "0.1"}, "gamma must be a positive finite number, got '0.1'"),
    ({"dimensions": 10, "gamma": 1.0, "seed": -1}, r"seed must be an integer in \[0, 2\*\*64\), got -1"),
    ({"dimensions": 10, "gamma": 1.0, "seed": 0.5}, "seed must be an integer"),
    ({"dimensions": 10, "gamma": 1.0, "D": 5}, "unknown key.s. D; accepted: dimensions, gamma, seed"),
    ({"dimensions": 10}, "missing gamma"),
    (1000, "random_fourier must be a table"),
])
def test_bad_settings_name_the_source(table, message):
    data = {"name": "t", "template": [{"name": "featureset"}], "random_fourier": table}
    with pytest.raises(StructlinError, match=f"^my.toml: .*{message}"):
        FeatureSet.from_dict(data, "my.toml")


def test_taggers_refuse_random_fourier_features():
    fs = FeatureSet.from_dict({"name": "t", "template": [{"name": "word"}], "random_fourier": RFF})
    with pytest.raises(StructlinError, match="random_fourier .* for classifiers, not taggers"):
        TokenFeatureExtractor(fs, FeatureHasher(18))
