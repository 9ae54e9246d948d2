"""Tests of structlin.learners.run_weights: the stores of touched rows and of touched pairs against full vectors."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from structlin import joint as joint_module
from structlin.joint import JointFeatureMap, SparseWeights, smaller_form
from structlin.learners import run_weights
from structlin.learners.run_weights import DenseWeights, GrowingWeights, TouchedRows
from structlin.matrix import FeatureMatrix


def random_batch(rng, n_rows: int) -> FeatureMatrix:
    lengths = rng.integers(1, 4, size=int(rng.integers(1, 4)))
    counts = rng.integers(0, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return FeatureMatrix(indptr, rng.integers(0, n_rows, size=int(indptr[-1])), rng.normal(size=int(indptr[-1])),
                         lengths)


@pytest.mark.parametrize("store", [GrowingWeights, TouchedRows])
@pytest.mark.parametrize("averaged", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_touched_stores_follow_the_full_vectors(store, seed, averaged, monkeypatch):
    """Random updates (repeated indices, tail entries, rows and pairs met again and for the first time) applied to
    a store and to full vectors: the same weights, averages (made and unmade), visit sums, scores and reads at
    every step, with the pending store merged often.  The touched rows' scores are the full vectors' to the bit
    (the same products summed in the same order).  The touched pairs keep their rows of half the labels as full
    rows, or (a third of the seeds) none."""
    monkeypatch.setattr(run_weights, "_PENDING", 3)
    monkeypatch.setattr(run_weights, "FULL_ROW_SHARE", 2.0 if seed % 3 == 0 else 0.5)
    monkeypatch.setattr(run_weights, "_ROWS_AT_A_TIME", 2)  # an average made into pairs a few rows at a time
    monkeypatch.setattr(joint_module, "_BLOCK", 3)  # and a few entries at a time
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 5))
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(7) * 2, transitions=bool(seed % 2))
    dense, kept = DenseWeights(joint, averaged), store(joint, averaged)
    exact = np.testing.assert_array_equal if store is TouchedRows else partial(np.testing.assert_allclose, atol=1e-12)
    visits, touched = 0, np.zeros(0, np.int64)
    for _ in range(15):
        indices = rng.integers(0, joint.size, size=int(rng.integers(0, 9)))
        touched = np.concatenate([touched, indices])
        values, at = rng.normal(size=len(indices)), visits + rng.integers(0, 3, size=len(indices))
        dense.add(indices, values, at)
        kept.add(indices, values, at)
        kept = kept.settled()  # touched rows go on as full vectors once most rows are touched
        visits += 3
        batch = random_batch(rng, joint.n_rows)
        exact(kept.scores(joint, batch).emissions, dense.scores(joint, batch).emissions)
        probe = rng.integers(0, joint.size, size=6)
        np.testing.assert_array_equal(kept[probe], dense[probe])
        if averaged and not isinstance(kept, GrowingWeights):
            unmade, expected = kept.unmade_average(visits), dense.unmade_average(visits)
            exact(joint.scores(unmade, batch).emissions, joint.scores(expected, batch).emissions)
            np.testing.assert_array_equal(unmade.take(probe), expected.take(probe))
            smallest, full = unmade.smallest(joint.transition_offset), expected.dense()
            exact(np.asarray(smallest), full)
            if isinstance(kept, TouchedRows):  # its pairs, made from its rows, never more than the full vector
                assert isinstance(smallest, SparseWeights) and 2 * len(smallest.keys) <= joint.transition_offset
            else:  # the form smaller_form gives
                assert type(smallest) is type(smaller_form(full, joint.transition_offset))
            if isinstance(smallest, SparseWeights):
                assert (np.diff(smallest.keys) > 0).all() and smallest.size == joint.size
                exact(smallest.keys, np.flatnonzero(full[: joint.transition_offset]))
    np.testing.assert_array_equal(np.asarray(kept.current()), dense.current())
    if averaged:
        exact(np.asarray(kept.average(visits)), dense.average(visits))
        exact(np.asarray(kept.visit_sums(visits)), dense.visit_sums(visits))
    emission = np.unique(touched[touched < joint.transition_offset])
    if store is GrowingWeights:
        full = kept.full_rows
        assert set(full) <= set(emission // L) and (seed % 3 != 0 or not len(full))
        assert kept.n_pairs == np.count_nonzero(~np.isin(emission // L, full)) + len(full) * L
    elif len(np.unique(emission // L)) * 2 <= joint.n_rows:
        assert isinstance(kept, TouchedRows) and kept.n_rows_touched == len(np.unique(emission // L))
    else:
        assert isinstance(kept, DenseWeights)
    assert len(kept) == len(dense) == joint.size


def test_touched_rows_settle_into_full_vectors_once_most_rows_are_touched():
    """Half of the rows touched: still compact; one more: the full vectors, with the same weights and sums."""
    joint = JointFeatureMap(["a", "b"], [0, 5, 9, 12])
    rows = TouchedRows(joint, averaged=True)
    rows.add(np.array([0, 3]), np.array([1.0, -2.0]), np.array([0, 1]))  # rows 0 and 1 of 4
    assert rows.settled() is rows
    rows.add(np.array([5]), np.array([0.5]), np.array([2]))  # row 2
    full = rows.settled()
    assert isinstance(full, DenseWeights)
    np.testing.assert_array_equal(full.w[:8], [1.0, 0, 0, -2.0, 0, 0.5, 0, 0])
    np.testing.assert_array_equal(full.u[:8], [0.0, 0, 0, -2.0, 0, 1.0, 0, 0])


def test_touched_rows_are_assigned_and_carried_as_full_vectors_are():
    """``assign`` (parameter mixing's weights and visit sums) and ``carry`` (a map extended by partial_fit) leave a
    store of touched rows equal to full vectors treated alike, keeping only the rows that are not 0."""
    old = JointFeatureMap(["a", "b"], [3, 7, 10])
    rng = np.random.default_rng(5)
    rows, dense = TouchedRows(old, averaged=True), DenseWeights(old, averaged=True)
    for state in (rows, dense):
        state.add(np.array([1, 4, 1, old.transition_offset]), np.array([1.0, -2.0, 0.5, 3.0]), np.array([0, 0, 1, 1]))
    w, sums = np.zeros(old.size), np.zeros(old.size)
    w[[0, 5]], sums[[0, 1]] = rng.normal(size=2), rng.normal(size=2)
    for state in (rows, dense):
        state.assign(w, sums, 4)
    assert rows.row_of.tolist() == [0, 2]  # rows 0 (w and the sums) and 2 (w): row 1 is 0 in both
    np.testing.assert_array_equal(rows.average(4), dense.average(4))
    new = old.extended(FeatureMatrix([0, 2], [1, 12], np.ones(2), [1]))
    for state in (rows, dense):
        state.carry(new, old)
    np.testing.assert_array_equal(rows.current(), dense.current())
    np.testing.assert_array_equal(rows.average(4), dense.average(4))
    initial = TouchedRows(new, averaged=False, initial=dense.current())
    assert initial.n_rows_touched == 2 and len(initial) == new.size
    np.testing.assert_array_equal(initial.current(), dense.current())


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


def test_rows_of_many_labels_become_full_rows_at_a_merge(monkeypatch):
    """With three labels and rows of half of them full, a row that holds two of them is a full row once the pending
    pairs are merged: it is read, updated and averaged as pairs are, and its entries that are 0 in the weights and
    the sums are not stored."""
    monkeypatch.setattr(run_weights, "FULL_ROW_SHARE", 0.5)
    joint = JointFeatureMap(["a", "b", "c"], [0, 5, 9])
    growing = GrowingWeights(joint, averaged=True)
    growing.add(np.array([0, 2, 4]), np.array([1.0, -2.0, 0.5]), np.array([0, 1, 1]))  # row 0: 2 labels, row 1: 1
    assert not len(growing.full_rows) and growing.n_pairs == 3  # still pending
    growing._merge()
    assert growing.full_rows.tolist() == [0] and growing.keys.tolist() == [4] and growing.n_pairs == 1 + 3
    np.testing.assert_array_equal(growing.full_w, [[1.0, 0.0, -2.0]])
    growing.add(np.array([1, 0]), np.array([3.0, 1.0]), np.array([2, 2]))
    np.testing.assert_array_equal(growing[np.array([0, 1, 2, 3, 4, 5])], [2.0, 3.0, -2.0, 0.0, 0.5, 0.0])
    average = growing.average(4)  # w − u/4 with u = Σ visit · value
    assert average.keys.tolist() == [0, 1, 2, 4]
    np.testing.assert_array_equal(average.values, [2.0 - 2 / 4, 3.0 - 6 / 4, -2.0 + 2 / 4, 0.5 - 0.5 / 4])


def test_initial_weights_and_carry_keep_every_pair_at_its_bucket():
    old = JointFeatureMap(["a", "b"], [3, 7, 10])
    w = np.zeros(old.size)
    w[[1, 4]] = [2.0, -1.0]
    growing = GrowingWeights(old, averaged=False, initial=w)
    new = old.extended(FeatureMatrix([0, 2], [1, 12], np.ones(2), [1]))
    growing.carry(new, old)
    np.testing.assert_array_equal(growing.current().dense(), new.carry(w, old))
    assert isinstance(growing.current(), SparseWeights) and len(growing) == new.size


def test_a_sorted_merge_lays_out_every_array_of_a_store_alike():
    """The keys of both arrays merged in order, and another array of each laid out as its keys are."""
    merged = run_weights._SortedMerge(np.array([1, 5, 9]), np.array([0, 6, 7, 10]))
    assert merged(np.array([1, 5, 9]), np.array([0, 6, 7, 10])).tolist() == [0, 1, 5, 6, 7, 9, 10]
    assert merged(np.array([0.1, 0.5, 0.9]), np.array([0.0, 0.6, 0.7, 1.0])).tolist() == [0.0, 0.1, 0.5, 0.6, 0.7,
                                                                                          0.9, 1.0]
    into_nothing = run_weights._SortedMerge(np.zeros(0, np.int64), np.array([3]))
    assert into_nothing(np.zeros(0), np.array([2.0])).tolist() == [2.0]
