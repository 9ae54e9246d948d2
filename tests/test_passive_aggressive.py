"""Passive-aggressive PA / PA-I / PA-II and 1-best MIRA: step sizes against the formulas on hand-computed
updates, against a dense brute-force step on random chains, and the EWT floor."""

from __future__ import annotations

import numpy as np
import pytest

from structlin import Tagger
from structlin.decoders import Multiclass, Viterbi
from structlin.joint import JointFeatureMap
from structlin.learners import MIRA, PassiveAggressive, make_learner
from structlin.matrix import FeatureMatrix

from brute import dense_rows, phi
from test_perceptron import random_problem


def hand_problem():
    """x0 = 2·f0 labelled a; x1 = f0 + 3·f1 labelled c; three labels."""
    joint = JointFeatureMap(["a", "b", "c"], [10, 20], transitions=False)
    return joint, FeatureMatrix([0, 1, 3], [0, 0, 1], [2.0, 1.0, 3.0], [1, 1]), np.array([0, 2])


@pytest.mark.parametrize(("variant", "C", "first_tau"), [("pa", 1.0, 1 / 8), ("pa-i", 0.1, 0.1),
                                                         ("pa-ii", 1.0, 1 / (8 + 0.5))])
def test_two_updates_by_hand(variant, C, first_tau):
    # x0 at w = 0: every label scores 0; the cost-augmented argmax is the first wrong label, b, with
    # Δφ = +2 (f0, a), −2 (f0, b): ‖Δφ‖² = 8, w·Δφ = 0, ℓ = 1.
    joint, X, y = hand_problem()
    learner = PassiveAggressive(1, variant=variant, C=C, averaging=False, shuffle=False, batch_size=1)
    learner.fit(joint, Multiclass(), X.take([0]), y[:1])
    W = joint.emission_matrix(learner.weights_)
    np.testing.assert_allclose(W, [[2 * first_tau, -2 * first_tau, 0], [0, 0, 0]])
    # x1 then scores a: 2τ₁, b: −2τ₁, c: 0, so with costs the argmax is a: Δφ = +1 (f0,c) +3 (f1,c) −1 (f0,a)
    # −3 (f1,a), ‖Δφ‖² = 20, w·Δφ = −2τ₁, ℓ = 1 + 2τ₁.
    learner = PassiveAggressive(1, variant=variant, C=C, averaging=False, shuffle=False, batch_size=1)
    learner.fit(joint, Multiclass(), X, y)
    loss = 1 + 2 * first_tau
    tau = {"pa": loss / 20, "pa-i": min(C, loss / 20), "pa-ii": loss / (20 + 1 / (2 * C))}[variant]
    W = joint.emission_matrix(learner.weights_)
    np.testing.assert_allclose(W, [[2 * first_tau - tau, -2 * first_tau, tau], [-3 * tau, 0, 3 * tau]])


def dense_step(joint, X, y, predicted, w, variant, C, cost):
    """One PA step written out with dense vectors: τ from ℓ = ρ − w·Δφ and ‖Δφ‖² of the literal Δφ."""
    F = dense_rows(X, joint.n_rows)
    delta = phi(joint, F, y) - phi(joint, F, predicted)
    loss = max(0.0, cost * np.sum(y != predicted) - w @ delta)
    norm = delta @ delta
    tau = {"pa": loss / norm, "pa-i": min(C, loss / norm), "pa-ii": loss / (norm + 1 / (2 * C))}[variant]
    return w + tau * delta


@pytest.mark.parametrize("variant", ["pa", "pa-i", "pa-ii"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chain_steps_match_dense_brute_force(variant, seed):
    """On random chains (repeated rows and labels, so Δφ has entries to merge) every step of one
    unshuffled epoch equals the dense step against the same cost-augmented Viterbi output."""
    X, y = random_problem(seed)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(7))
    decoder = Viterbi()
    w = np.zeros(joint.size)
    for k in range(X.n_instances):
        one = X.take([k])
        gold = y[X.positions([k])]
        if not len(gold):
            continue
        predicted = decoder.loss_augmented_argmax(joint.scores(w, one), gold, 0.5)
        if (predicted != gold).any():
            w = dense_step(joint, one, gold, predicted, w, variant, 0.3, 0.5)
    bound = {} if variant == "pa" else {"C": 0.3}  # the pa step has no bound C
    learner = PassiveAggressive(1, variant=variant, cost=0.5, averaging=False, shuffle=False, batch_size=1, **bound)
    learner.fit(joint, decoder, X, y)
    np.testing.assert_allclose(learner.weights_, w, atol=1e-12)


def test_mira_updates_against_the_prediction_with_the_cost_as_margin():
    # x0: the plain argmax at w = 0 is a, the gold label: no update; x1 (gold c): argmax a,
    # Δφ = +1 (f0,c) +3 (f1,c) −1 (f0,a) −3 (f1,a), ρ = 2, ℓ = 2, τ = min(C, 2/20).
    joint, X, y = hand_problem()
    learner = MIRA(1, C=1.0, cost=2.0, averaging=False, shuffle=False).fit(joint, Multiclass(), X, y)
    np.testing.assert_allclose(joint.emission_matrix(learner.weights_), [[-0.1, 0, 0.1], [-0.3, 0, 0.3]])
    assert learner.params() == {"epochs": 1, "C": 1.0, "cost": 2.0, "averaging": False, "seed": 0, "shuffle": False,
                                "batch_size": 1, "patience": None, "eval_every": 1, "delta": None}
    assert make_learner("mira", **learner.params()).params() == learner.params()


def test_bad_settings_raise():
    for settings, message in (({"variant": "pa-iii"}, "variant must be one of"), ({"C": 0}, "C must be positive"),
                              ({"cost": -1}, "cost must be positive"), ({"selection": "best"}, "selection must be")):
        with pytest.raises(ValueError, match=message):
            PassiveAggressive(**settings)


def test_ewt_pa_i_floor(ewt_dir):
    """EWT UPOS with PA-I and Viterbi, 4 epochs on the full training data (10 epochs give 95.0 on dev)."""
    from structlin.readers import read_conllu

    train = list(read_conllu(ewt_dir / "en_ewt-ud-train.conllu"))
    dev = list(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu"))
    tagger = Tagger("pos-rich", "passive-aggressive", epochs=4).fit(train)
    assert tagger.accuracy(dev) >= 0.945
