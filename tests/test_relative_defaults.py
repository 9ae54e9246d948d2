"""Defaults relative to the features' scale: scaling every feature value by ``s`` leaves a model with a
relative margin (perceptrons), a relative prior (max-ent) or a relative C (SVM) predicting the same, its
weights scaled by ``s`` (perceptron: the updates are ``s·Δφ``) or ``1/s`` (max-ent, SVM: the same
optimum in the scaled variables).  ``s = 4`` scales floating-point values exactly."""

from __future__ import annotations

import numpy as np
import pytest

from structlin.decoders import Multiclass
from structlin.learners import SVM, AveragedPerceptron, MaxEnt, Perceptron
from structlin.matrix import FeatureMatrix
from test_maxent import random_problem

S = 4.0


def scaled(X: FeatureMatrix, s: float = S) -> FeatureMatrix:
    return FeatureMatrix(X.indptr, X.indices, X.values * s, X.lengths)


def test_mean_squared_norm_by_hand():
    X = FeatureMatrix(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([3.0, 4.0, 2.0]), np.array([2]))
    assert X.mean_squared_norm() == (9 + 16 + 4) / 2
    assert scaled(X).mean_squared_norm() == S**2 * X.mean_squared_norm()


@pytest.mark.parametrize("cls", [Perceptron, AveragedPerceptron])
def test_a_relative_margin_makes_the_perceptron_scale_free(cls):
    """(Single instances: a chain's transition features keep their value 1 whatever the scale of the rest.)"""
    decoder = Multiclass()
    joint, X, y = random_problem(3, [1] * 20, 3, 9, transitions=False)
    one = cls(epochs=4, seed=1).fit(joint, decoder, X, y)
    four = cls(epochs=4, seed=1).fit(joint, decoder, scaled(X), y)
    assert one.chosen_["margin"] > 0 and four.chosen_["margin"] == S**2 * one.chosen_["margin"]
    np.testing.assert_allclose(four.weights_, S * one.weights_, rtol=1e-9, atol=1e-12)
    absolute = cls(epochs=4, seed=1, margin=one.chosen_["margin"]).fit(joint, decoder, scaled(X), y)
    assert not np.allclose(absolute.weights_, four.weights_)  # a fixed τ is not: it means less on larger values


def test_a_relative_prior_makes_max_ent_scale_free():
    joint, X, y = random_problem(5, [1] * 40, 3, 8, transitions=False)
    one = MaxEnt(epochs=300, tol=0, gtol=1e-10, unseen_pairs="all").fit(joint, Multiclass(), X, y)
    four = MaxEnt(epochs=300, tol=0, gtol=1e-10, unseen_pairs="all").fit(joint, Multiclass(), scaled(X), y)
    assert four.chosen_["l2"] == pytest.approx(S**2 * one.chosen_["l2"])
    np.testing.assert_allclose(four.weights_, one.weights_ / S, rtol=1e-5, atol=1e-8)


def test_a_relative_C_makes_the_svm_scale_free():
    joint, X, y = random_problem(7, [1] * 40, 3, 8, transitions=False)
    one = SVM(solver="bcfw", epochs=200, tol=1e-9, seed=0).fit(joint, Multiclass(), X, y)
    four = SVM(solver="bcfw", epochs=200, tol=1e-9, seed=0).fit(joint, Multiclass(), scaled(X), y)
    assert four.chosen_["C"] == pytest.approx(one.chosen_["C"] / S**2)
    np.testing.assert_allclose(four.weights_, one.weights_ / S, rtol=1e-6, atol=1e-9)
