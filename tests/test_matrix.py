"""Tests of structlin.matrix: ``ranges`` and FeatureMatrix operations against naive computations."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from structlin.errors import OptionValueError
from structlin.matrix import (FactoredMatrix, FeatureMatrix, add_column_product, held_out_size, ordered_folds,
                              ordered_held_out, ranges)


def naive_ranges(starts, stops):
    return [k for a, b in zip(starts, stops) for k in range(a, b)]


def test_ranges_small_cases():
    assert ranges([2, 0, 7], [5, 0, 9]).tolist() == [2, 3, 4, 7, 8]
    assert ranges([], []).tolist() == []
    assert ranges([3, 3], [3, 3]).tolist() == []
    assert ranges([5, 1], [6, 3]).tolist() == [5, 1, 2]  # ranges need not be increasing
    assert ranges([4, 4], [6, 6]).tolist() == [4, 5, 4, 5]  # nor disjoint
    assert ranges([0], [1]).dtype == np.int64


@pytest.mark.parametrize("seed", range(20))
def test_ranges_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, 12))
    starts = rng.integers(0, 50, size=k)
    sizes = rng.integers(0, 5, size=k) * (rng.random(k) < 0.7)  # many empty ranges
    assert ranges(starts, starts + sizes).tolist() == naive_ranges(starts, starts + sizes)


def random_matrix(rng, n_instances=None, n_columns=15, max_length=4, max_nnz=4) -> FeatureMatrix:
    n = int(rng.integers(0, 7)) if n_instances is None else n_instances
    lengths = rng.integers(0, max_length + 1, size=n)
    counts = rng.integers(0, max_nnz + 1, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n_columns, size=int(indptr[-1]))
    values = rng.normal(size=int(indptr[-1])).round(3)
    return FeatureMatrix(indptr, indices, values, lengths)


def dense(matrix: FeatureMatrix, n_columns=15) -> np.ndarray:
    out = np.zeros((matrix.n_positions, n_columns))
    for p in range(matrix.n_positions):
        for e in range(matrix.indptr[p], matrix.indptr[p + 1]):
            out[p, matrix.indices[e]] += matrix.values[e]
    return out


def instance_rows(matrix: FeatureMatrix) -> list[list[list[tuple[int, float]]]]:
    """Per instance, per position, the list of (column, value) entries, by plain loops."""
    out, p = [], 0
    for length in matrix.lengths:
        rows = []
        for _ in range(length):
            a, b = matrix.indptr[p], matrix.indptr[p + 1]
            rows.append(list(zip(matrix.indices[a:b].tolist(), matrix.values[a:b].tolist())))
            p += 1
        out.append(rows)
    return out


def test_constructor_checks_and_dtypes():
    m = FeatureMatrix([0, 1, 3], [4, 0, 2], [1.0, 2.0, 3.0], [2])
    assert m.indptr.dtype == np.int64 and m.indices.dtype == np.int32
    assert m.values.dtype == np.float32 and m.lengths.dtype == np.int64
    assert m.n_instances == 1 and m.n_positions == 2
    assert m.offsets.tolist() == [0, 2]
    with pytest.raises(ValueError, match="one entry per position"):
        FeatureMatrix([0, 1], [0], [1.0], [2])


def test_positions_small():
    m = FeatureMatrix(np.zeros(7, dtype=int), [], [], [2, 0, 3, 1])
    assert m.offsets.tolist() == [0, 2, 2, 5, 6]
    assert m.positions([2, 0]).tolist() == [2, 3, 4, 0, 1]
    assert m.positions([1]).tolist() == []
    assert m.positions([3, 3]).tolist() == [5, 5]
    assert m.positions([]).tolist() == []


@pytest.mark.parametrize("seed", range(15))
def test_take_against_loop(seed):
    rng = np.random.default_rng(seed)
    m = random_matrix(rng)
    chosen = rng.integers(0, m.n_instances, size=int(rng.integers(0, 8))) if m.n_instances else np.zeros(0, int)
    sub = m.take(chosen)
    rows = instance_rows(m)
    assert sub.lengths.tolist() == m.lengths[chosen].tolist()
    assert instance_rows(sub) == [rows[k] for k in chosen]
    assert sub.positions(np.arange(sub.n_instances)).tolist() == list(range(sub.n_positions))
    assert m.positions(chosen).tolist() == [p for k in chosen for p in range(m.offsets[k], m.offsets[k + 1])]


@pytest.mark.parametrize("seed", range(15))
def test_slice_against_loop(seed):
    rng = np.random.default_rng(seed)
    m = random_matrix(rng)
    start = int(rng.integers(0, m.n_instances + 1))
    stop = int(rng.integers(start, m.n_instances + 1))
    part = m.slice(start, stop)
    assert part.indptr[0] == 0
    assert instance_rows(part) == instance_rows(m)[start:stop]
    assert instance_rows(m.take(np.arange(start, stop))) == instance_rows(part)


@pytest.mark.parametrize("seed", range(10))
def test_dot_against_dense(seed):
    rng = np.random.default_rng(seed)
    m = random_matrix(rng, n_instances=5)
    weights = rng.normal(size=(15, 3))
    expected = dense(m) @ weights
    np.testing.assert_allclose(m.dot(weights), expected, rtol=1e-6, atol=1e-9)
    assert m.dot(weights).shape == (m.n_positions, 3)


def test_dot_sums_repeated_columns():
    m = FeatureMatrix([0, 3], [1, 1, 0], [2.0, 0.5, -1.0], [1])
    w = np.array([[10.0, 1.0], [100.0, 2.0]])
    assert m.dot(w).tolist() == [[2.5 * 100 - 10, 2.5 * 2 - 1]]


@pytest.mark.parametrize("seed", range(15))
def test_map_columns_against_loop(seed):
    rng = np.random.default_rng(seed)
    m = random_matrix(rng)
    mapping = rng.integers(-1, 6, size=15)
    if seed == 0:
        mapping = np.arange(15)[::-1].copy()  # nothing dropped
    mapped = m.map_columns(mapping)
    expected = [[[(int(mapping[c]), v) for c, v in row if mapping[c] >= 0] for row in rows] for rows in instance_rows(m)]
    assert instance_rows(mapped) == expected
    assert mapped.lengths.tolist() == m.lengths.tolist()


def test_map_columns_drop_everything():
    m = FeatureMatrix([0, 2, 3], [0, 1, 1], [1.0, 2.0, 3.0], [2])
    mapped = m.map_columns(np.array([-1, -1]))
    assert mapped.indptr.tolist() == [0, 0, 0] and len(mapped.indices) == 0


def test_dot_rows_and_its_transpose_match_dense_products():
    rng = np.random.default_rng(3)
    X = FeatureMatrix([0, 2, 2, 5], [4, 9, 4, 1, 9], rng.normal(size=5), [2, 1])
    rows, local = np.unique(X.indices, return_inverse=True)  # columns 1, 4, 9 become rows 0, 1, 2
    dense = np.zeros((3, 10))
    for p in range(3):
        for e in range(X.indptr[p], X.indptr[p + 1]):
            dense[p, X.indices[e]] += X.values[e]
    W, R = rng.normal(size=(10, 4)), rng.normal(size=(3, 4))
    np.testing.assert_allclose(X.dot_rows(local, W[rows]), dense @ W, rtol=1e-6)
    np.testing.assert_allclose(X.transpose_dot_rows(local, len(rows), R), (dense.T @ R)[rows], rtol=1e-6)
    np.testing.assert_array_equal(X.entry_positions(), [0, 0, 2, 2, 2])


@pytest.mark.parametrize("batch_size", [1, 3, 8])
@pytest.mark.parametrize("shuffled", [False, True])
def test_minibatches_are_the_epoch_order_cut_into_batches(batch_size, shuffled):
    """Each batch is the next ``batch_size`` instances of the epoch's order (taken one batch at a time, never as a
    permuted copy of the corpus), with their gold label ids; together they are the whole epoch."""
    from structlin.learners.epochs import epoch_order, minibatches

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 6, size=40)
    n = int(lengths.sum())
    counts = rng.integers(0, 4, size=n)
    X = FeatureMatrix(np.concatenate([[0], np.cumsum(counts)]), rng.integers(0, 50, size=counts.sum()),
                      rng.normal(size=counts.sum()), lengths)
    y = rng.integers(0, 5, size=n)
    order = epoch_order(lengths, batch_size, np.random.default_rng(7)) if shuffled else np.arange(len(lengths))
    expected, labels = X.take(order), y[X.positions(order)]
    batches = list(minibatches(X, y, batch_size, np.random.default_rng(7) if shuffled else None))
    assert len(batches) == -(-len(lengths) // batch_size)
    start = 0
    for k, (batch, gold) in enumerate(batches):
        part = expected.slice(k * batch_size, min((k + 1) * batch_size, len(lengths)))
        for field in ("indptr", "indices", "values", "lengths"):
            np.testing.assert_array_equal(getattr(batch, field), getattr(part, field))
        np.testing.assert_array_equal(gold, labels[start : start + batch.n_positions])
        start += batch.n_positions
    assert start == n


@pytest.mark.parametrize("seed", range(10))
def test_concatenate_parts_gives_back_the_whole(seed):
    """Cut into consecutive parts (some empty) and concatenated, a matrix is itself, word codes included."""
    rng = np.random.default_rng(seed)
    whole = random_matrix(rng, n_instances=int(rng.integers(1, 9)))
    whole.words = rng.integers(0, 2**63, size=whole.n_positions, dtype=np.uint64)
    cuts = np.sort(rng.integers(0, whole.n_instances + 1, size=3))
    bounds = [0, *cuts.tolist(), whole.n_instances]
    joined = FeatureMatrix.concatenate([whole.slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])])
    for name in ("indptr", "indices", "values", "lengths", "words"):
        np.testing.assert_array_equal(getattr(joined, name), getattr(whole, name))
    assert FeatureMatrix.concatenate([whole.slice(0, 1), replace(whole.slice(1, whole.n_instances), words=None)]).words is None


@pytest.mark.parametrize("seed", range(10))
def test_placed_parts_are_the_concatenation_taken_in_order(seed):
    """Parts (some empty, instances of no position) placed at a random permutation of the places give what
    concatenating them and taking the instances in the order of their places gives, word codes included; the
    parts are read one at a time, and one of other sizes than those given is refused."""
    rng = np.random.default_rng(seed)
    parts = [random_matrix(rng) for _ in range(int(rng.integers(1, 4)))]
    for part in parts:
        part.words = rng.integers(0, 2**63, size=part.n_positions, dtype=np.uint64)
    sizes = [part.n_instances for part in parts]
    where = rng.permutation(sum(sizes))
    places = np.split(where, np.cumsum(sizes)[:-1])
    whole = FeatureMatrix.concatenate(parts)
    expected = whole.take(np.argsort(where))
    lengths, entries = expected.lengths, expected.instance_entries()
    for words in (True, False):
        placed = FeatureMatrix.placed(iter(zip(parts, places)), lengths, entries, words)
        for name in ("indptr", "indices", "values", "lengths", *(("words",) if words else ())):
            np.testing.assert_array_equal(getattr(placed, name), getattr(expected, name))
        assert (placed.words is None) != words
    assert FeatureMatrix.placed([(whole, where)], lengths, entries, False).n_instances == len(where)
    if len(where):
        with pytest.raises(ValueError, match="not of the sizes given"):
            FeatureMatrix.placed([(whole, where)], lengths, entries + 1, False)


# --- FactoredMatrix: X = Σ_k S_k T_k --------------------------------------------------------------------------


def test_factored_matrix_writes_each_position_out_in_source_order():
    """Two sources: a table of two shared rows selected per position, then a table with a row per position."""
    shared = FeatureMatrix([0, 2, 3], [4, 1, 7], [1.0, 2.0, 3.0], [2])
    own = FeatureMatrix([0, 1, 1, 3], [9, 5, 6], [0.5, -1.0, 4.0], [3])
    X = FactoredMatrix([shared, own], [np.array([1, 0, 1]), None], np.array([2, 1])).matrix()
    assert X.lengths.tolist() == [2, 1]
    assert instance_rows(X) == [[[(7, 3.0), (9, 0.5)], [(4, 1.0), (1, 2.0)]],
                                [[(7, 3.0), (5, -1.0), (6, 4.0)]]]
    w = np.arange(20.0).reshape(10, 2)
    factored = FactoredMatrix([shared, own], [np.array([1, 0, 1]), None], np.array([2, 1]))
    np.testing.assert_allclose(factored.dot(w), X.dot(w))


@pytest.mark.parametrize("seed", range(15))
def test_factored_matrix_against_dense_sum_of_selected_rows(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 5, size=int(rng.integers(0, 6)))
    n = int(lengths.sum())
    tables, selects, expected = [], [], np.zeros((n, 15))
    for _ in range(int(rng.integers(1, 4))):
        shared = rng.random() < 0.6
        rows = int(rng.integers(1, 6)) if shared else n
        counts = rng.integers(0, 4, size=rows)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        table = FeatureMatrix(indptr, rng.integers(0, 15, size=int(indptr[-1])),
                              rng.normal(size=int(indptr[-1])).round(3), [rows])
        select = rng.integers(0, rows, size=n) if shared else None
        tables.append(table)
        selects.append(select)
        expected += dense(table)[select] if shared else dense(table)
    factored = FactoredMatrix(tables, selects, lengths)
    X = factored.matrix()
    assert X.n_positions == n and X.lengths.tolist() == lengths.tolist()
    np.testing.assert_allclose(dense(X), expected, rtol=1e-6, atol=1e-9)
    w = rng.normal(size=(15, 3))
    np.testing.assert_allclose(factored.dot(w), expected @ w, rtol=1e-6, atol=1e-9)
    assert factored.finite()
    tables[0].values[:] = np.nan
    assert factored.finite() == (len(tables[0].values) == 0)


# --- held-out runs and folds in the order given ------------------------------------------------------------


def test_ordered_held_out_small_cases():
    """Of each label's instances, the run of a tenth (rounded) ending at the last for seed 0, the run before it
    for seed 1; a label of 5 holds out 1 (0.5 rounds up), a label of one instance none; without labels, one run
    of all the instances."""
    labels = np.array(list("aaaaaaaaaabbbbbcaaaaaaaaaa"))
    held = lambda seed: "".join("H" if h else "." for h in ordered_held_out(len(labels), 0.1, labels, seed))  # noqa: E731
    assert held(0) == "..............H.........HH"
    assert held(1) == ".............H........HH.."
    assert held(9) == "HH........H..............."  # label a has 20 instances: 10 runs of 2; label b 5 of 1
    assert held(10) == held(0)
    assert np.flatnonzero(ordered_held_out(20, 0.1)).tolist() == [18, 19]
    assert np.flatnonzero(ordered_held_out(20, 0.1, seed=1)).tolist() == [16, 17]
    assert np.flatnonzero(ordered_held_out(3, 0.1, np.array(["x", "y", "z"]))).tolist() == [2]  # none per label: one
    with pytest.raises(OptionValueError, match="holding out 0.1 of 1 training instance to choose on leaves none"):
        ordered_held_out(1, 0.1, np.array(["x"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=60), st.floats(0.05, 0.6), st.integers(0, 50))
def test_ordered_held_out_holds_one_run_of_each_label_and_leaves_each_label_some(labels, fraction, seed):
    labels = np.array(labels)
    mask = ordered_held_out(len(labels), fraction, labels, seed)
    shares = {label: min(int(np.floor(fraction * n + 0.5)), n - 1)
              for label, n in zip(*np.unique(labels, return_counts=True))}
    if not any(shares.values()):  # no label has enough for a share: one run of them all
        run = np.flatnonzero(mask)
        assert len(run) == held_out_size(len(labels), fraction) and (np.diff(run) == 1).all()
        return
    for label, share in shares.items():
        run = np.flatnonzero(mask[labels == label])
        assert len(run) == share  # each label's share, never all of its instances
        assert (np.diff(run) == 1).all()  # one run among the label's instances


def test_ordered_folds_small_cases():
    """Each label's instances cut into contiguous runs in order, numbered from a different fold per label; a
    seed of 1 moves the cuts half a fold; labels of one instance each spread round the folds."""
    labels = np.array(list("aaaaaaaaaabbbbbcaaaaaaaaaa"))
    assert ordered_folds(labels, 5).tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 0, 1, 2, 3, 4, 0,
                                                 2, 2, 3, 3, 3, 3, 4, 4, 4, 4]
    assert ordered_folds(labels, 5, seed=1).tolist() == [0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 1, 2, 3, 4, 0,
                                                         3, 3, 3, 3, 4, 4, 4, 4, 0, 0]
    assert ordered_folds(np.arange(7), 5).tolist() == [0, 1, 2, 3, 4, 0, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=80), st.integers(2, 6), st.integers(0, 20))
def test_ordered_folds_are_balanced_runs_of_each_label(labels, folds, seed):
    labels = np.array(labels)
    fold = ordered_folds(labels, folds, seed)
    assert ((fold >= 0) & (fold < folds)).all()
    for label in np.unique(labels):
        mine = fold[labels == label]
        counts = np.bincount(mine, minlength=folds)
        assert counts.max() - counts.min() <= 1  # each label spread evenly
        changes = np.count_nonzero(np.diff(mine))
        assert changes <= folds  # runs: a fold's instances of one label come together (one wrap at most)


def test_held_out_of_an_order_that_says_nothing_is_a_seeded_random_share():
    held = ordered_held_out(50, 0.1, np.arange(50) % 3, seed=4, in_order=False)
    assert np.flatnonzero(held).tolist() == sorted(np.random.default_rng(4).permutation(50)[:5].tolist())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 4))
def test_products_of_consecutive_column_ranges_add_up_to_the_whole_product(seed, n_columns, k):
    """``out += X[:, a:b] @ B[a:b]`` over consecutive ranges gives ``X @ B`` to the bit (the columns added in the
    same order), for a CSC matrix of any shape and the ranges cut anywhere (empty ones too)."""
    import scipy.sparse

    rng = np.random.default_rng(seed)
    X = scipy.sparse.random(int(rng.integers(1, 9)), n_columns, density=0.5, format="csc", random_state=rng)
    B = rng.normal(size=(n_columns, k))
    cuts = np.sort(np.concatenate([[0, n_columns], rng.integers(0, n_columns + 1, size=3)]))
    out = np.zeros((X.shape[0], k))
    for first, stop in zip(cuts[:-1], cuts[1:]):
        add_column_product(X, int(first), int(stop), B[first:stop], out)
    np.testing.assert_array_equal(out, X @ B)
