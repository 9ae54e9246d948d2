"""Tests of structlin.decoders against brute-force enumeration of every label sequence."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from structlin.decoders import (
    DECODERS,
    Greedy,
    Multiclass,
    Viterbi,
    decode_corpus,
    make_decoder,
)
from structlin.errors import UnknownNameError
from structlin.joint import JointFeatureMap, Scores
from structlin.matrix import FeatureMatrix


def random_scores(rng, *, max_batch=4, max_length=4, max_labels=3, lengths=None) -> Scores:
    L = int(rng.integers(1, max_labels + 1))
    if lengths is None:
        lengths = rng.integers(0, max_length + 1, size=int(rng.integers(1, max_batch + 1)))
    lengths = np.asarray(lengths, dtype=np.int64)
    n = int(lengths.sum())
    return Scores(rng.normal(size=(n, L)), lengths, rng.normal(size=(L, L)), rng.normal(size=L), rng.normal(size=L))


def instances(scores: Scores):
    """(first position, emissions) of every instance."""
    start = 0
    for length in scores.lengths:
        yield start, scores.emissions[start : start + length]
        start += length


def chain_score(scores: Scores, E: np.ndarray, y) -> float:
    if len(y) == 0:
        return 0.0
    total = sum(E[i, y[i]] for i in range(len(y))) + scores.start[y[0]] + scores.end[y[-1]]
    return total + sum(scores.transitions[y[i - 1], y[i]] for i in range(1, len(y)))


def all_sequences(length, L):
    return [np.array(y, dtype=np.int64) for y in itertools.product(range(L), repeat=length)]


def brute_argmax(scores: Scores, extra=None) -> np.ndarray:
    """The best sequence of every instance; ``extra(first, y)`` adds to a sequence's score."""
    out = []
    for first, E in instances(scores):
        candidates = all_sequences(len(E), scores.n_labels)
        values = [chain_score(scores, E, y) + (extra(first, y) if extra else 0.0) for y in candidates]
        out.extend(candidates[int(np.argmax(values))])
    return np.array(out, dtype=np.int64)


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_viterbi_argmax_brute_force(seed):
    scores = random_scores(np.random.default_rng(seed))
    np.testing.assert_array_equal(Viterbi().argmax(scores), brute_argmax(scores))


@pytest.mark.parametrize("top", [1, 2, 3])
@pytest.mark.parametrize("seed", range(30))
def test_viterbi_top_is_the_best_sequence_over_each_positions_best_labels(seed, top):
    """With ``top`` labels a position, the argmax is the best sequence whose every label is among its position's
    ``top`` highest emissions (brute force over those sequences); with no more labels than ``top``, exact."""
    rng = np.random.default_rng(seed)
    scores = random_scores(rng, max_labels=5)
    L = scores.n_labels
    keep = np.argsort(-scores.emissions, axis=1, kind="stable")[:, :top]  # random normals: no ties
    beyond = np.full(scores.emissions.shape, -1e9)
    np.put_along_axis(beyond, keep, 0.0, axis=1)
    expected = brute_argmax(scores, extra=lambda first, y: sum(beyond[first + i, y[i]] for i in range(len(y))))
    np.testing.assert_array_equal(Viterbi(top=top).argmax(scores), expected)
    if L <= top:
        np.testing.assert_array_equal(Viterbi(top=top).argmax(scores), brute_argmax(scores))
    np.testing.assert_array_equal(Viterbi(top=None).argmax(scores), brute_argmax(scores))


def test_viterbi_top_keeps_within_the_allowed_labels_and_refuses_bad_values():
    """Among allowed labels (a tag dictionary's), the best ``top`` of those; a position with fewer keeps them all."""
    E = np.array([[5.0, 4.0, 3.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    allowed = np.array([[False, True, True, True], [True, True, False, False]])
    scores = Scores(E, np.array([1, 1]), np.zeros((4, 4)), np.zeros(4), np.zeros(4), allowed)
    assert Viterbi(top=1)._best_labels(scores).tolist() == [[False, True, False, False], [False, True, False, False]]
    assert Viterbi(top=3)._best_labels(scores).tolist() == allowed.tolist()
    assert Viterbi(top=1).argmax(scores).tolist() == [1, 1]
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="top must be"):
            Viterbi(top=bad)


@pytest.mark.parametrize("seed", SEEDS)
def test_viterbi_marginals_brute_force(seed):
    scores = random_scores(np.random.default_rng(seed))
    L = scores.n_labels
    marginals = Viterbi().marginals(scores)
    expected_log_z, expected_nodes, expected_edges = [], [], []
    for _, E in instances(scores):
        n = len(E)
        candidates = all_sequences(n, L)
        values = np.array([chain_score(scores, E, y) for y in candidates])
        log_z = logsumexp(values)  # for n = 0: the one empty sequence, score 0
        expected_log_z.append(log_z)
        p = np.exp(values - log_z)
        nodes = np.zeros((n, L))
        edges = np.zeros((max(n - 1, 0), L, L))
        for y, prob in zip(candidates, p):
            nodes[np.arange(n), y] += prob
            for i in range(1, n):
                edges[i - 1, y[i - 1], y[i]] += prob
        expected_nodes.append(nodes)
        expected_edges.append(edges)
    np.testing.assert_allclose(marginals.log_partition, expected_log_z, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(marginals.nodes, np.concatenate(expected_nodes), atol=1e-9)
    np.testing.assert_allclose(marginals.edges, np.concatenate(expected_edges).reshape(-1, L, L), atol=1e-9)
    if len(marginals.nodes):
        np.testing.assert_allclose(marginals.nodes.sum(axis=1), 1.0)


def log_space_marginals(scores: Scores):
    """Reference forward–backward in log space, one instance at a time: (log Z, nodes, edges) per instance."""
    trans = scores.transitions
    for _, E in instances(scores):
        n = len(E)
        if n == 0:
            yield 0.0, np.zeros((0, scores.n_labels)), np.zeros((0, scores.n_labels, scores.n_labels))
            continue
        E = E.copy()
        E[0] += scores.start
        E[-1] += scores.end
        alpha, beta = np.zeros_like(E), np.zeros_like(E)
        alpha[0] = E[0]
        for i in range(1, n):
            alpha[i] = logsumexp(alpha[i - 1][:, None] + trans, axis=0) + E[i]
        for i in range(n - 2, -1, -1):
            beta[i] = logsumexp(trans + (E[i + 1] + beta[i + 1])[None, :], axis=1)
        log_z = logsumexp(alpha[-1])
        edges = np.exp(alpha[:-1, :, None] + trans + (E[1:] + beta[1:])[:, None, :] - log_z)
        yield log_z, np.exp(alpha + beta - log_z), edges


def large_scores(rng, lengths, L=6) -> Scores:
    """Emissions ×50, transitions ×20: far beyond what ``exp`` of the unshifted scores survives."""
    scores = random_scores(rng, lengths=lengths, max_labels=L)
    return Scores(50 * scores.emissions, scores.lengths, 20 * scores.transitions, 10 * scores.start, 10 * scores.end)


@pytest.mark.parametrize("scale", ["normal", "large"])
@pytest.mark.parametrize("seed", range(10))
def test_viterbi_marginals_match_log_space(seed, scale):
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([[1, 0, 1, 200], rng.integers(0, 30, size=12)])
    rng.shuffle(lengths)
    scores = large_scores(rng, lengths) if scale == "large" else random_scores(rng, lengths=lengths, max_labels=6)
    log_z, nodes, edges = (list(part) for part in zip(*log_space_marginals(scores)))
    edges = np.concatenate(edges)
    per_edge = Viterbi().marginals(scores)
    summed = Viterbi().marginals(scores, summed_edges=True)
    for got in (per_edge, summed):
        np.testing.assert_allclose(got.log_partition, log_z, rtol=1e-9)
        np.testing.assert_allclose(got.nodes, np.concatenate(nodes), rtol=0, atol=1e-9)
    np.testing.assert_allclose(per_edge.edges, edges, rtol=0, atol=1e-9)
    np.testing.assert_allclose(summed.edges, edges.sum(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(summed.edges.sum(), (lengths[lengths > 0] - 1).sum())


@pytest.mark.parametrize("seed", SEEDS)
def test_viterbi_summed_edges_brute_force(seed):
    scores = random_scores(np.random.default_rng(seed), max_batch=5)
    L = scores.n_labels
    expected = np.zeros((L, L))
    for _, E in instances(scores):
        candidates = all_sequences(len(E), L)
        values = np.array([chain_score(scores, E, y) for y in candidates])
        for y, prob in zip(candidates, np.exp(values - logsumexp(values))):
            np.add.at(expected, (y[:-1], y[1:]), prob)
    summed = Viterbi().marginals(scores, summed_edges=True)
    np.testing.assert_allclose(summed.edges, expected, rtol=0, atol=1e-9)
    per_edge = Viterbi().marginals(scores)
    np.testing.assert_allclose(summed.log_partition, per_edge.log_partition, rtol=1e-12)
    np.testing.assert_allclose(summed.nodes, per_edge.nodes, rtol=0, atol=1e-12)


def test_viterbi_marginals_zero_length_instances():
    rng = np.random.default_rng(1)
    scores = random_scores(rng, lengths=[0, 2, 0])
    marginals = Viterbi().marginals(scores)
    assert marginals.log_partition[0] == 0 and marginals.log_partition[2] == 0
    assert marginals.nodes.shape == (2, scores.n_labels)
    assert marginals.edges.shape == (1, scores.n_labels, scores.n_labels)
    only_empty = Viterbi().marginals(random_scores(rng, lengths=[0, 0]))
    assert only_empty.log_partition.tolist() == [0.0, 0.0] and only_empty.nodes.shape[0] == 0
    for lengths in ([0, 0], [], [0, 1, 0]):
        scores = random_scores(rng, lengths=lengths)
        summed = Viterbi().marginals(scores, summed_edges=True)
        assert summed.log_partition.shape == (len(lengths),) and summed.nodes.shape == (sum(lengths), scores.n_labels)
        np.testing.assert_array_equal(summed.edges, np.zeros((scores.n_labels, scores.n_labels)))


def test_zero_length_instances_decode():
    rng = np.random.default_rng(2)
    for decoder in (Viterbi(), Greedy(), Multiclass()):
        assert decoder.argmax(random_scores(rng, lengths=[0, 0])).tolist() == []
        assert decoder.argmax(random_scores(rng, lengths=[])).tolist() == []
        scores = random_scores(rng, lengths=[0, 3, 0, 1])
        assert len(decoder.argmax(scores)) == 4


def greedy_loop(scores: Scores) -> np.ndarray:
    """Left to right, with start folded into the first and end into the last position."""
    out = []
    for _, E in instances(scores):
        previous = None
        for i in range(len(E)):
            s = E[i].copy()
            if i == 0:
                s += scores.start
            if i == len(E) - 1:
                s += scores.end
            if previous is not None:
                s += scores.transitions[previous]
            previous = int(np.argmax(s))
            out.append(previous)
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("seed", SEEDS)
def test_greedy_against_loop(seed):
    scores = random_scores(np.random.default_rng(seed), max_length=6, max_labels=4)
    np.testing.assert_array_equal(Greedy().argmax(scores), greedy_loop(scores))


def test_greedy_is_not_exact():
    # Greedy takes label 0 at position 0 (score 1 vs 0), then must pay the transition 0->0 = -10.
    scores = Scores(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([2]), np.array([[-10.0, -10.0], [0.0, 0.0]]),
                    np.zeros(2), np.zeros(2))
    assert Greedy().argmax(scores).tolist() == [0, 0]
    assert Viterbi().argmax(scores).tolist() == [1, 0]


@pytest.mark.parametrize("seed", range(20))
def test_multiclass_argmax_and_marginals(seed):
    rng = np.random.default_rng(seed)
    scores = random_scores(rng, max_length=3, max_labels=4)
    E = scores.emissions
    np.testing.assert_array_equal(Multiclass().argmax(scores), [int(np.argmax(row)) for row in E])
    marginals = Multiclass().marginals(scores)
    assert marginals.edges is None
    softmax = np.exp(E) / np.exp(E).sum(axis=1, keepdims=True) if len(E) else E
    np.testing.assert_allclose(marginals.nodes, softmax, atol=1e-12)
    # log Z of an instance: log of the sum over all label sequences of exp(Σ E[i, y_i]).
    expected = [logsumexp([sum(Ei[i, y[i]] for i in range(len(Ei))) for y in all_sequences(len(Ei), scores.n_labels)])
                for _, Ei in instances(scores)]
    np.testing.assert_allclose(marginals.log_partition, expected, atol=1e-9)


@pytest.mark.parametrize("cost", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("seed", range(20))
def test_loss_augmented_viterbi_brute_force(seed, cost):
    rng = np.random.default_rng(seed)
    scores = random_scores(rng)
    gold = rng.integers(0, scores.n_labels, size=len(scores.emissions))
    before = scores.emissions.copy()
    got = Viterbi().loss_augmented_argmax(scores, gold, cost)
    expected = brute_argmax(scores, extra=lambda first, y: cost * np.sum(y != gold[first : first + len(y)]))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(scores.emissions, before)  # the caller's scores are not modified


@pytest.mark.parametrize("seed", range(10))
def test_loss_augmented_multiclass(seed):
    rng = np.random.default_rng(seed)
    scores = random_scores(rng, max_labels=4)
    gold = rng.integers(0, scores.n_labels, size=len(scores.emissions))
    augmented = scores.emissions + 1.5 * (np.arange(scores.n_labels)[None, :] != gold[:, None])
    got = Multiclass().loss_augmented_argmax(scores, gold, 1.5)
    np.testing.assert_array_equal(got, augmented.argmax(axis=1) if len(augmented) else [])


def test_loss_augmented_by_hand():
    # Gold label 1 leads by 0.5: with cost 1 the best wrong label (0) wins, with cost 0.4 gold stays.
    scores = Scores(np.array([[0.0, 0.5, -3.0]]), np.array([1]), None)
    assert Multiclass().loss_augmented_argmax(scores, np.array([1]), 1.0).tolist() == [0]
    assert Multiclass().loss_augmented_argmax(scores, np.array([1]), 0.4).tolist() == [1]


@pytest.mark.parametrize("decoder", [Viterbi(), Greedy(), Multiclass()], ids=lambda d: d.name)
def test_ties_break_to_lowest_label(decoder):
    L = 4
    zero = Scores(np.zeros((6, L)), np.array([1, 3, 0, 2]), np.zeros((L, L)), np.zeros(L), np.zeros(L))
    assert decoder.argmax(zero).tolist() == [0] * 6
    # Labels 1 and 3 tie for best everywhere: label 1 wins.
    tied = Scores(np.tile([0.0, 2.0, -1.0, 2.0], (6, 1)), np.array([1, 3, 0, 2]), np.zeros((L, L)), np.zeros(L),
                  np.zeros(L))
    assert decoder.argmax(tied).tolist() == [1] * 6


@pytest.mark.parametrize("name", ["viterbi", "greedy", "multiclass"])
@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_each_alone(name, seed):
    decoder = make_decoder(name)
    scores = random_scores(np.random.default_rng(seed), max_batch=6, max_length=7, max_labels=5)
    alone = [decoder.argmax(Scores(E, np.array([len(E)]), scores.transitions, scores.start, scores.end))
             for _, E in instances(scores)]
    np.testing.assert_array_equal(decoder.argmax(scores), np.concatenate(alone))


@pytest.mark.parametrize("name", ["viterbi", "greedy", "multiclass"])
def test_decode_corpus_equals_per_instance(name):
    rng = np.random.default_rng(3)
    decoder = make_decoder(name)
    lengths = rng.integers(0, 7, size=23)
    counts = rng.integers(1, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    matrix = FeatureMatrix(indptr, rng.integers(0, 9, size=int(indptr[-1])), rng.normal(size=int(indptr[-1])), lengths)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(9), transitions=decoder.uses_transitions)
    w = rng.normal(size=joint.size)
    expected = np.concatenate([decoder.argmax(joint.scores(w, matrix.take([b]))) for b in range(matrix.n_instances)])
    for max_positions in (1, 6, 20, 4096):  # 1: every instance alone (even one longer than the budget)
        np.testing.assert_array_equal(decode_corpus(decoder, joint, w, matrix, max_positions=max_positions), expected)


def test_greedy_has_no_marginals():
    with pytest.raises(TypeError, match="greedy"):
        Greedy().marginals(random_scores(np.random.default_rng(0)))


def test_make_decoder():
    assert set(DECODERS) == {"viterbi", "greedy", "multiclass"}
    assert isinstance(make_decoder("viterbi"), Viterbi)
    assert make_decoder("multiclass").uses_transitions is False
    with pytest.raises(UnknownNameError, match="unknown decoder 'beam'; accepted: greedy, multiclass, viterbi"):
        make_decoder("beam")
