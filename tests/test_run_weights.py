"""Tests of structlin.learners.run_weights: the growing store of touched pairs against full vectors."""

from __future__ import annotations

import numpy as np
import pytest

from structlin.joint import JointFeatureMap, SparseWeights
from structlin.learners import run_weights
from structlin.learners.run_weights import DenseWeights, GrowingWeights
from structlin.matrix import FeatureMatrix


def random_batch(rng, n_rows: int) -> FeatureMatrix:
    lengths = rng.integers(1, 4, size=int(rng.integers(1, 4)))
    counts = rng.integers(0, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return FeatureMatrix(indptr, rng.integers(0, n_rows, size=int(indptr[-1])), rng.normal(size=int(indptr[-1])),
                         lengths)


@pytest.mark.parametrize("averaged", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_growing_weights_follow_the_full_vectors(seed, averaged, monkeypatch):
    """Random updates (repeated indices, tail entries, pairs met again and for the first time) applied to both
    stores: the same weights, averages, scores and reads at every step, with the pending store merged often."""
    monkeypatch.setattr(run_weights, "_PENDING", 3)
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 5))
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(7) * 2, transitions=bool(seed % 2))
    dense, growing = DenseWeights(joint, averaged), GrowingWeights(joint, averaged)
    visits, touched = 0, np.zeros(0, np.int64)
    for _ in range(15):
        indices = rng.integers(0, joint.size, size=int(rng.integers(0, 9)))
        touched = np.concatenate([touched, indices])
        values, at = rng.normal(size=len(indices)), visits + rng.integers(0, 3, size=len(indices))
        dense.add(indices, values, at)
        growing.add(indices, values, at)
        visits += 3
        batch = random_batch(rng, joint.n_rows)
        np.testing.assert_allclose(growing.scores(joint, batch).emissions, dense.scores(joint, batch).emissions,
                                   atol=1e-12)
        probe = rng.integers(0, joint.size, size=6)
        np.testing.assert_array_equal(growing[probe], dense[probe])
    np.testing.assert_array_equal(growing.current().dense(), dense.current())
    if averaged:
        np.testing.assert_allclose(growing.average(visits).dense(), dense.average(visits), atol=1e-12)
    assert growing.n_pairs == len(np.unique(touched[touched < joint.transition_offset]))
    assert len(growing) == len(dense) == joint.size


def test_the_final_average_takes_the_sums_memory_and_a_run_can_go_on():
    """final_average gives average's values in the sums' own array; a later update first makes the sums
    again (to rounding), so the run's next average is the one of a run never interrupted."""
    joint = JointFeatureMap(["a", "b"], [0, 5, 9])
    rng = np.random.default_rng(3)
    kept, interrupted = DenseWeights(joint, averaged=True), DenseWeights(joint, averaged=True)
    for state in (kept, interrupted):
        state.add(np.array([1, 4, 1, 7]), np.array([1.0, -2.0, 0.5, 3.0]), np.array([0, 0, 1, 1]))
    sums = interrupted.u
    final, expected = interrupted.final_average(2), kept.average(2)
    assert final is sums
    np.testing.assert_array_equal(final, expected)
    indices, values = rng.integers(0, joint.size, 5), rng.normal(size=5)
    for state in (kept, interrupted):
        state.add(indices, values, np.full(5, 2))
    np.testing.assert_allclose(interrupted.average(3), kept.average(3), rtol=1e-12)
    np.testing.assert_array_equal(final, expected)  # the kept model is not changed by the run going on


def test_only_touched_pairs_are_stored():
    """Three updates touching pairs 1, 4 and 1 again (and a tail entry) store two pairs."""
    joint = JointFeatureMap(["a", "b"], [0, 5, 9])
    growing = GrowingWeights(joint, averaged=True)
    growing.add(np.array([1, 4, 1, joint.transition_offset]), np.array([1.0, -2.0, 0.5, 3.0]), np.array([0, 0, 1, 1]))
    assert growing.n_pairs == 2
    current = growing.current()
    assert current.keys.tolist() == [1, 4] and current.values.tolist() == [1.5, -2.0]
    assert current.tail[0] == 3.0
    # u = Σ visit · value: pair 1 gets 0·1 + 1·0.5; the average over 2 visits is w − u/2.
    assert growing.average(2).values.tolist() == [1.5 - 0.25, -2.0]


def test_initial_weights_and_carry_keep_every_pair_at_its_bucket():
    old = JointFeatureMap(["a", "b"], [3, 7, 10])
    w = np.zeros(old.size)
    w[[1, 4]] = [2.0, -1.0]
    growing = GrowingWeights(old, averaged=False, initial=w)
    new = old.extended(FeatureMatrix([0, 2], [1, 12], np.ones(2), [1]))
    growing.carry(new, old)
    np.testing.assert_array_equal(growing.current().dense(), new.carry(w, old))
    assert isinstance(growing.current(), SparseWeights) and len(growing) == new.size
