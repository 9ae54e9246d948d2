"""Tests of structlin.joint: weight layout, indexing of hashed buckets, label encoding, scores, and
``delta`` against a brute-force dense joint feature map."""

from __future__ import annotations

import numpy as np
import pytest

from structlin.joint import AveragedWeights, JointFeatureMap, SparseWeights, smaller_form
from structlin.matrix import FeatureMatrix

from brute import dense_rows, phi


def test_layout_with_transitions():
    joint = JointFeatureMap(["A", "B", "C"], [3, 7, 10])
    assert (joint.n_labels, joint.n_rows) == (3, 3)
    assert joint.transition_offset == 9
    assert joint.size == 9 + 9 + 3 + 3
    w = np.arange(joint.size, dtype=float)
    E = joint.emission_weights(w)
    T, S, F = joint.transition_weights(w)
    assert E.shape == (3, 3) and E[1, 2] == 1 * 3 + 2
    assert T.shape == (3, 3) and T[2, 0] == 9 + 2 * 3 + 0  # [previous, next]
    assert S.tolist() == [18, 19, 20] and F.tolist() == [21, 22, 23]
    # They are views: writing through them changes w.
    T[0, 1] = -5
    E[0, 0] = -7
    assert w[10] == -5 and w[0] == -7


def test_layout_without_transitions():
    joint = JointFeatureMap(["x", "y"], [0, 1, 5, 9], transitions=False)
    assert joint.size == 8 == joint.transition_offset
    assert joint.transition_weights(np.zeros(8)) == (None, None, None)
    assert joint.emission_weights(np.arange(8.0))[3].tolist() == [6, 7]


def test_invalid_construction():
    with pytest.raises(ValueError, match="distinct"):
        JointFeatureMap(["A", "A"], [1])
    with pytest.raises(ValueError, match="strictly increasing"):
        JointFeatureMap(["A"], [3, 3])
    with pytest.raises(ValueError, match="strictly increasing"):
        JointFeatureMap(["A"], [5, 2])


def test_from_training_columns_are_seen_buckets():
    m = FeatureMatrix([0, 2, 3, 5], [40, 7, 7, 1000, 3], np.ones(5), [2, 1])
    joint = JointFeatureMap.from_training(["A"], m)
    assert joint.columns.tolist() == [3, 7, 40, 1000]


def test_index_maps_buckets_and_drops_unseen():
    joint = JointFeatureMap(["A", "B"], [3, 7, 10])
    m = FeatureMatrix([0, 3, 3, 7], [7, 3, 5, 10, 11, 2**30, 0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [1, 2])
    indexed = joint.index(m)
    assert indexed.indptr.tolist() == [0, 2, 2, 3]
    assert indexed.indices.tolist() == [1, 0, 2]
    assert indexed.values.tolist() == [1.0, 2.0, 4.0]
    assert indexed.lengths.tolist() == [1, 2]
    # A second call reuses the lookup table and agrees.
    again = joint.index(m)
    assert again.indices.tolist() == [1, 0, 2]


def test_index_can_renumber_the_training_matrix_in_place():
    """With overwrite, the matrix the map was made from (no bucket dropped) is renumbered in its own array;
    a matrix that loses buckets is never touched."""
    m = FeatureMatrix([0, 2, 3, 5], [40, 7, 7, 1000, 3], np.ones(5), [2, 1])
    joint = JointFeatureMap.from_training(["A"], m)
    buckets = m.indices
    indexed = joint.index(m, overwrite=True)
    assert indexed.indices is buckets and buckets.tolist() == [2, 1, 1, 3, 0]
    other = FeatureMatrix([0, 2], [40, 5], np.ones(2), [1])
    assert joint.index(other, overwrite=True).indices.tolist() == [2] and other.indices.tolist() == [40, 5]


def test_index_with_no_columns_drops_all():
    joint = JointFeatureMap(["A"], [])
    indexed = joint.index(FeatureMatrix([0, 2], [0, 9], [1.0, 1.0], [1]))
    assert indexed.indptr.tolist() == [0, 0] and len(indexed.indices) == 0


def test_extended_adds_new_buckets_in_order():
    joint = JointFeatureMap(["A", "B"], [3, 7, 10], transitions=False)
    grown = joint.extended(FeatureMatrix([0, 2, 4], [7, 12, 1, 3], np.ones(4), [1, 1]))
    assert grown.columns.tolist() == [1, 3, 7, 10, 12]
    assert grown.labels == ["A", "B"] and not grown.transitions
    assert joint.columns.tolist() == [3, 7, 10]  # the map itself is unchanged
    assert joint.extended(FeatureMatrix([0, 2], [10, 3], np.ones(2), [1])) is joint  # nothing new
    assert JointFeatureMap(["A"], []).extended(FeatureMatrix([0, 1], [4], [1.0], [1])).columns.tolist() == [4]


def test_carry_keeps_every_weight_at_its_bucket():
    # Buckets 3, 7, 10 with 2 labels and transitions; the batch adds buckets 1, 5 and 12 around them.
    old = JointFeatureMap(["a", "b"], [3, 7, 10])
    w = np.arange(1.0, old.size + 1)  # emission rows [1, 2], [3, 4], [5, 6]; transitions 7..14
    new = old.extended(FeatureMatrix([0, 3], [12, 5, 1], np.ones(3), [1]))
    assert new.columns.tolist() == [1, 3, 5, 7, 10, 12]
    carried = new.carry(w, old)
    assert new.emission_weights(carried).tolist() == [[0, 0], [1, 2], [0, 0], [3, 4], [5, 6], [0, 0]]
    assert carried[new.transition_offset :].tolist() == list(range(7, 15))
    assert w.tolist() == list(range(1, 15))  # a new array: w is untouched
    # Every bucket scores the same under both maps; the new ones score 0.
    m = FeatureMatrix([0, 1, 2, 3, 4, 5, 6], [1, 3, 5, 7, 10, 12], np.ones(6), [6])
    np.testing.assert_array_equal(new.scores(carried, new.index(m)).emissions,
                                  [[0, 0], [1, 2], [0, 0], [3, 4], [5, 6], [0, 0]])
    np.testing.assert_array_equal(old.carry(w, old), w)  # onto the same map: the same weights


def test_carry_needs_a_map_it_contains():
    old = JointFeatureMap(["a", "b"], [3, 7], transitions=False)
    with pytest.raises(ValueError, match="buckets this map lacks"):
        JointFeatureMap(["a", "b"], [3, 8], transitions=False).carry(np.zeros(4), old)
    with pytest.raises(ValueError, match="same labels"):
        JointFeatureMap(["a", "c"], [3, 7], transitions=False).carry(np.zeros(4), old)
    with pytest.raises(ValueError, match="same labels"):
        JointFeatureMap(["a", "b"], [3, 7]).carry(np.zeros(4), old)


def test_encode_labels():
    joint = JointFeatureMap(["DET", "NOUN", "VERB"], [0])
    assert joint.encode_labels(["VERB", "DET", "DET"]).tolist() == [2, 0, 0]
    assert joint.encode_labels([]).tolist() == []
    with pytest.raises(KeyError):
        joint.encode_labels(["DET", "ADJ"])
    assert joint.encode_labels(["DET", "ADJ", "NOUN"], unknown=-1).tolist() == [0, -1, 1]


# --- brute force ----------------------------------------------------------------------------------------


def dense_phi(joint: JointFeatureMap, matrix: FeatureMatrix, instance: int, labels: np.ndarray) -> np.ndarray:
    """φ(x, y) of one instance, by its definition in the module docstring."""
    a, b = matrix.offsets[instance], matrix.offsets[instance + 1]
    return phi(joint, dense_rows(matrix, joint.n_rows)[a:b], labels[a:b])


def random_instance(rng, n_rows=6, max_length=5):
    B = int(rng.integers(1, 5))
    lengths = rng.integers(0, max_length + 1, size=B)
    counts = rng.integers(0, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = rng.integers(0, n_rows, size=int(indptr[-1]))
    values = rng.normal(size=int(indptr[-1])).round(2)
    return FeatureMatrix(indptr, indices, values, lengths)


@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("seed", range(25))
def test_delta_equals_phi_difference(seed, transitions):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 4))
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(6) * 10, transitions=transitions)
    matrix = random_instance(rng)
    gold = rng.integers(0, L, size=matrix.n_positions)
    predicted = gold.copy()
    flip = rng.random(matrix.n_positions) < 0.5
    predicted[flip] = rng.integers(0, L, size=int(flip.sum()))
    indices, values, owner = joint.feature_difference(matrix, gold, predicted)
    assert len(indices) == len(values) == len(owner)
    for b in range(matrix.n_instances):
        got = np.zeros(joint.size)
        np.add.at(got, indices[owner == b], values[owner == b])
        expected = dense_phi(joint, matrix, b, gold) - dense_phi(joint, matrix, b, predicted)
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_delta_small_by_hand():
    # One instance of 2 positions, labels {0, 1}; position 0 has row 0 (value 2), position 1 has row 1 (value 1).
    joint = JointFeatureMap(["a", "b"], [5, 9])
    m = FeatureMatrix([0, 1, 2], [0, 1], [2.0, 1.0], [2])
    indices, values, _ = joint.feature_difference(m, np.array([1, 1]), np.array([0, 1]))
    got = np.zeros(joint.size)
    np.add.at(got, indices, values)
    expected = np.zeros(joint.size)
    expected[0 * 2 + 1], expected[0 * 2 + 0] = 2.0, -2.0  # emission of row 0: gold b, predicted a
    expected[4 + 1 * 2 + 1], expected[4 + 0 * 2 + 1] = 1.0, -1.0  # transition b->b (gold) vs a->b
    expected[8 + 1], expected[8 + 0] = 1.0, -1.0  # start
    np.testing.assert_array_equal(got, expected)  # end label is b in both: cancels


def test_delta_no_mistakes_is_empty():
    joint = JointFeatureMap(["a", "b"], [0, 1])
    m = FeatureMatrix([0, 1, 2, 3], [0, 1, 0], np.ones(3), [2, 0, 1])
    gold = np.array([1, 0, 1])
    indices, values, owner = joint.feature_difference(m, gold, gold.copy())
    assert len(indices) == len(values) == len(owner) == 0


@pytest.mark.parametrize("seed", range(5))
def test_scores_against_dense(seed):
    rng = np.random.default_rng(seed)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(6))
    matrix = random_instance(rng)
    w = rng.normal(size=joint.size)
    scores = joint.scores(w, matrix)
    W = w[:18].reshape(6, 3)
    dense = np.zeros((matrix.n_positions, 6))
    for p in range(matrix.n_positions):
        for e in range(matrix.indptr[p], matrix.indptr[p + 1]):
            dense[p, matrix.indices[e]] += matrix.values[e]
    np.testing.assert_allclose(scores.emissions, dense @ W, atol=1e-5)
    np.testing.assert_array_equal(scores.transitions, w[18:27].reshape(3, 3))
    np.testing.assert_array_equal(scores.start, w[27:30])
    np.testing.assert_array_equal(scores.end, w[30:33])
    assert scores.lengths.tolist() == matrix.lengths.tolist() and scores.n_labels == 3
    # w·φ(x, y) equals the chain score of y computed from Scores.
    y = rng.integers(0, 3, size=matrix.n_positions)
    for b in range(matrix.n_instances):
        a, c = matrix.offsets[b], matrix.offsets[b + 1]
        yb = y[a:c]
        chain = scores.emissions[np.arange(a, c), yb].sum()
        if len(yb):
            chain += scores.transitions[yb[:-1], yb[1:]].sum() + scores.start[yb[0]] + scores.end[yb[-1]]
        assert w @ dense_phi(joint, matrix, b, y) == pytest.approx(chain, abs=1e-5)


# --- sparse weights ---------------------------------------------------------------------------------------


def sparse_of(rng, joint: JointFeatureMap, density: float) -> tuple[np.ndarray, SparseWeights]:
    """A random flat vector with about ``density`` of its emission entries non-zero, and its sparse form."""
    w = rng.normal(size=joint.size)
    w[: joint.transition_offset][rng.random(joint.transition_offset) > density] = 0.0
    return w, SparseWeights.from_dense(w, joint.transition_offset)


@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("seed", range(20))
def test_sparse_weights_score_as_the_dense_vector(seed, transitions):
    """Every reading of the map gives the same for a dense vector and its SparseWeights: scores (emissions by a
    sparse product, and to the bit by the training stores' gather of each row's keys), the tail, the emission
    block, take, dense."""
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 5))
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(6) * 3, transitions=transitions)
    w, sparse = sparse_of(rng, joint, density=float(rng.choice([0.0, 0.3, 1.0])))
    matrix = random_instance(rng)
    dense_scores, sparse_scores = joint.scores(w, matrix), joint.scores(sparse, matrix)
    np.testing.assert_allclose(sparse_scores.emissions, dense_scores.emissions, atol=1e-12)
    np.testing.assert_array_equal(joint.sparse_emissions(sparse.keys, sparse.values, matrix), sparse_scores.emissions)
    np.testing.assert_array_equal(joint.emission_rows(sparse).toarray(), joint.emission_weights(w))
    for name in ("transitions", "start", "end"):
        np.testing.assert_array_equal(getattr(sparse_scores, name), getattr(dense_scores, name))
    np.testing.assert_array_equal(joint.emission_matrix(sparse), joint.emission_weights(w))
    np.testing.assert_array_equal(sparse.dense(), w)
    indices = rng.integers(0, joint.size, size=10)
    np.testing.assert_array_equal(sparse.take(indices), w[indices])
    assert len(sparse.keys) == np.count_nonzero(w[: joint.transition_offset])


@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("seed", range(20))
def test_an_unmade_average_scores_as_the_made_one_to_the_bit(seed, transitions):
    """AveragedWeights(w, u, T) scores, reads and makes exactly what the vector w − u/T does: a run may score an
    epoch's average on dev without making it."""
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 5))
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(6) * 3, transitions=transitions)
    w, u, visits = rng.normal(size=joint.size), rng.normal(size=joint.size) * 50, int(rng.integers(1, 1000))
    unmade, made = AveragedWeights(w, u, visits), w - u / visits
    np.testing.assert_array_equal(unmade.dense(), made)
    matrix = random_instance(rng)
    lazy, full = joint.scores(unmade, matrix), joint.scores(made, matrix)
    for name in ("emissions", "transitions", "start", "end"):
        np.testing.assert_array_equal(getattr(lazy, name), getattr(full, name))
    indices = rng.integers(0, joint.size, size=10)
    np.testing.assert_array_equal(unmade.take(indices), made[indices])


def test_sparse_weights_by_hand():
    """Two labels, rows 0 and 1: the stored entries (row 0, b) = 2 and (row 1, a) = −1; a position with row 0
    (value 3) and row 1 (value 1) scores a: −1, b: 6."""
    joint = JointFeatureMap(["a", "b"], [4, 8], transitions=False)
    sparse = SparseWeights([1, 2], [2.0, -1.0], np.zeros(0), joint.size)
    scores = joint.scores(sparse, FeatureMatrix([0, 2], [0, 1], [3.0, 1.0], [1]))
    assert scores.emissions.tolist() == [[-1.0, 6.0]]
    slot, found = sparse.slots(np.array([0, 1, 2, 3]))
    assert found.tolist() == [False, True, True, False] and slot[found].tolist() == [0, 1]


def test_sparse_weights_refuse_keys_out_of_order_or_range():
    with pytest.raises(ValueError, match="increase strictly"):
        SparseWeights([2, 1], [1.0, 1.0], np.zeros(0), 4)
    with pytest.raises(ValueError, match="increase strictly"):
        SparseWeights([4], [1.0], np.zeros(2), 6)  # key 4 is in the tail
    with pytest.raises(ValueError, match="one length"):
        SparseWeights([1], [1.0, 2.0], np.zeros(0), 4)


def test_carry_moves_sparse_weights_with_their_buckets():
    """The same carry as for a dense vector, in the sparse form."""
    rng = np.random.default_rng(0)
    old = JointFeatureMap(["a", "b"], [3, 7, 10])
    w, sparse = sparse_of(rng, old, density=0.5)
    new = old.extended(FeatureMatrix([0, 3], [12, 5, 1], np.ones(3), [1]))
    carried = new.carry(sparse, old)
    assert isinstance(carried, SparseWeights)
    np.testing.assert_array_equal(carried.dense(), new.carry(w, old))


def test_the_smaller_form_of_a_vector_is_its_pairs_when_they_take_less_memory():
    """Pairs take 16 bytes each, the full vector 8 an entry: 2 non-zero emission weights of 6 (and a tail of 2) are
    kept as pairs, 4 of 6 as the vector itself; an average's smaller form holds its values either way."""
    sparse = np.array([0.0, 1.5, 0.0, 0.0, -2.0, 0.0, 7.0, 0.0])
    kept = smaller_form(sparse, 6)
    assert isinstance(kept, SparseWeights)
    assert kept.keys.tolist() == [1, 4] and kept.values.tolist() == [1.5, -2.0] and kept.tail.tolist() == [7.0, 0.0]
    dense = np.array([1.0, 1.5, 0.0, 3.0, -2.0, 0.0, 7.0, 0.0])
    assert smaller_form(dense, 6) is dense
    average = AveragedWeights(np.array([2.0, 0, 0, 0, 0, 0, 1, 1]), np.array([4.0, 0, 0, 0, 0, 0, 2, 0]), 4)
    np.testing.assert_array_equal(np.asarray(average.smallest(6)), [1.0, 0, 0, 0, 0, 0, 0.5, 1])
