"""Max-ent's active set (structlin/learners/active_set.py): the seen pairs by hand, growth by hand, the restricted
objective against the full one, a fit that keeps every weight outside the set at 0 and reaches the full optimum
when the set grows to every pair that matters, its options, and the CRF on real data against every pair."""

from __future__ import annotations

import numpy as np
import scipy.sparse
import pytest

from structlin import Tagger
from structlin.catalog import load_split
from structlin.decoders import Multiclass, Viterbi
from structlin.errors import OptionValueError
from structlin.joint import JointFeatureMap, SparseWeights
from structlin.learners import MaxEnt, active_set, maxent
from structlin.learners.active_set import ActivePairs, _largest, seen_pairs
from structlin.learners.maxent import MaxEntObjective, Objective, RestrictedObjective, ShardedObjective
from structlin.matrix import FeatureMatrix
from cli_run import run


def problem(seed: int, transitions: bool, n_rows: int = 12, L: int = 4):
    """(joint, X, y): 20 instances of 1–4 positions, 1–3 features of random value each, random gold labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 5, size=20) if transitions else np.ones(20, dtype=np.int64)
    counts = rng.integers(1, 4, size=int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    X = FeatureMatrix(indptr, rng.integers(0, n_rows, size=indptr[-1]), rng.uniform(-1.5, 1.5, size=indptr[-1]),
                      lengths)
    joint = JointFeatureMap([f"t{k}" for k in range(L)], np.arange(n_rows), transitions=transitions)
    return joint, X, rng.integers(0, L, size=X.n_positions)


@pytest.fixture(params=[False, True], ids=["dense", "compact"])
def compact_runs(request, monkeypatch):
    """Runs over the active set as with few labels (the full vector) and as with many (compact: the pairs; here at
    any number of labels, the gradient in pieces of 5 entries)."""
    if request.param:
        monkeypatch.setattr(active_set, "PAIRS_ABOVE_LABELS", 0)
        monkeypatch.setattr(maxent, "_ENTRIES_AT_A_TIME", 5)
    return request.param


def flat(pieces) -> np.ndarray:
    """A gradient given in consecutive pieces ``(first index, values)``, whole."""
    pieces = list(pieces)
    assert [first for first, _ in pieces] == list(np.cumsum([0] + [len(v) for _, v in pieces[:-1]]))
    return np.concatenate([values for _, values in pieces])


def test_seen_pairs_by_hand(compact_runs):
    # positions: 0 has rows 0, 2 (gold 1); 1 has row 2 (gold 0); 2 has rows 1, 2 (gold 1); 3 labels, transitions
    joint = JointFeatureMap(["a", "b", "c"], np.arange(3), transitions=True)
    X = FeatureMatrix([0, 2, 3, 5], [0, 2, 2, 1, 2], [1.0, 0.5, 2.0, 1.0, -1.0], [3])
    y = np.array([1, 0, 1])
    expected = [0 * 3 + 1, 2 * 3 + 1, 2 * 3 + 0, 1 * 3 + 1]
    free = seen_pairs(joint, [(X, y)])
    np.testing.assert_array_equal(free, sorted(expected) + list(range(9, joint.size)))
    # the same from two parts, as a corpus on disk gives them
    np.testing.assert_array_equal(seen_pairs(joint, [(X.take([0]), y), (X, y)]), free)


def test_growth_by_hand_keeps_theta_and_takes_the_largest_gradients():
    joint = JointFeatureMap(["a", "b"], np.arange(4), transitions=False)  # 8 emission weights, no tail
    pairs = ActivePairs(np.array([1, 4]), joint, growth=1.5)  # 1.5 × 2 seen: 3 weights added
    gradient = np.array([0.5, 9.0, -2.0, 0.0, 7.0, 2.0, -0.1, 2.0])
    embed = pairs.grow([(0, gradient.copy())])
    # outside {1, 4}: |g| = 0.5, 2, 0, 2, 0.1, 2 → the three largest are indices 2, 5, 7 (2.0 each)
    np.testing.assert_array_equal(pairs.free, [1, 2, 4, 5, 7])
    np.testing.assert_array_equal(pairs.expand(embed(np.array([0.25, -0.75]))), [0, 0.25, 0, 0, -0.75, 0, 0, 0])
    assert pairs.grown
    # ties at the threshold are broken by index, and a zero gradient is never added
    # in pieces, the same: a running list of the largest
    ties = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 3.0, 0.0, 0.0])
    for growth, expected in ((2.0, [0, 1, 5]), (50.0, [0, 1, 3, 4, 5]), (0.0, [0])):
        for cuts in ([], [3], [1, 2, 5, 7]):
            pairs = ActivePairs(np.array([0]), joint, growth=growth)
            bounds = [0, *cuts, len(ties)]
            pairs.grow([(a, ties[a:b].copy()) for a, b in zip(bounds, bounds[1:])])
            np.testing.assert_array_equal(pairs.free, expected)


@pytest.mark.parametrize("seed", range(30))
def test_the_largest_are_the_first_in_order_of_score_then_index(seed):
    rng = np.random.default_rng(seed)
    scores = np.abs(rng.normal(size=int(rng.integers(1, 60)))) * 10.0 ** rng.integers(-300, 300)
    scores[rng.random(len(scores)) < 0.3] = scores[0]  # ties
    index = rng.permutation(1000)[: len(scores)]
    for k in range(0, len(scores) + 2):
        got_scores, got_index = _largest(scores, index, k)
        expected = np.lexsort((index, -scores))[:k]
        np.testing.assert_array_equal(np.sort(got_index), np.sort(index[expected]))
        np.testing.assert_array_equal(np.sort(got_scores), np.sort(scores[expected]))


@pytest.mark.parametrize("transitions", [False, True])
def test_the_restricted_objective_is_the_full_one_at_the_free_weights(transitions, compact_runs):
    joint, X, y = problem(3, transitions)
    decoder = Viterbi() if transitions else Multiclass()
    full = MaxEntObjective(joint, decoder, X, y, l2=0.3)
    pairs = ActivePairs(seen_pairs(joint, [(X, y)]), joint, growth=0.5)
    assert 0 < pairs.n_emission < joint.transition_offset
    theta = np.random.default_rng(4).normal(size=len(pairs.free))
    value, gradient = full(pairs.expand(theta))
    restricted = RestrictedObjective(full, pairs)(theta)
    for got in (restricted, full.restricted(theta, pairs)):
        assert got[0] == pytest.approx(value, rel=1e-12)
        np.testing.assert_allclose(got[1], gradient[pairs.free], rtol=1e-10, atol=1e-12)
    outside = np.setdiff1d(np.arange(joint.transition_offset), pairs.free)
    for got in (full.outside_gradient(theta, pairs), Objective.outside_gradient(full, theta, pairs)):
        np.testing.assert_allclose(flat(got)[outside], gradient[outside], rtol=1e-10, atol=1e-12)


class TwoParts:
    """Shards in the form of ``ShardedRun.map``: the corpus's instances cut in two, each with its objective."""

    def __init__(self, joint, decoder, X, y):
        cut = X.n_instances // 2
        self.objectives = [MaxEntObjective(joint, decoder, X.take(part), y[X.positions(part)], l2=0.0)
                           for part in (np.arange(cut), np.arange(cut, X.n_instances))]

    def map(self, function, *args):
        return [function(objective, *args) for objective in self.objectives]


@pytest.mark.parametrize("transitions", [False, True])
def test_the_sharded_objective_sums_the_restricted_terms_of_its_shards(transitions, compact_runs):
    joint, X, y = problem(6, transitions)
    decoder = Viterbi() if transitions else Multiclass()
    serial = MaxEntObjective(joint, decoder, X, y, l2=0.3)
    sharded = ShardedObjective(TwoParts(joint, decoder, X, y), l2=0.3)
    pairs = ActivePairs(seen_pairs(joint, [(X, y)]), joint, growth=0.5)
    theta = np.random.default_rng(7).normal(size=len(pairs.free))
    value, gradient = serial.restricted(theta, pairs)
    got = RestrictedObjective(sharded, pairs)(theta)
    assert got[0] == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(got[1], gradient, rtol=1e-10, atol=1e-12)
    outside = np.setdiff1d(np.arange(joint.transition_offset), pairs.free)
    np.testing.assert_allclose(flat(sharded.outside_gradient(theta, pairs))[outside],
                               flat(serial.outside_gradient(theta, pairs))[outside], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("transitions", [False, True])
def test_a_fit_keeps_the_weights_outside_the_set_at_zero_and_reaches_the_optimum_when_it_holds_all(transitions,
                                                                                                     compact_runs):
    """Compact, the model is the pairs (the same optimum as with the full vector)."""
    joint, X, y = problem(5, transitions)
    decoder = Viterbi() if transitions else Multiclass()
    seen = seen_pairs(joint, [(X, y)])
    n_seen = int((seen < joint.transition_offset).sum())
    active = MaxEnt(epochs=40, l2=0.5, unseen_pairs=0.5, progress=False).fit(joint, decoder, X, y)
    assert isinstance(active.weights_, SparseWeights) == compact_runs
    active.weights_ = dense(active.weights_)
    emission = active.weights_[: joint.transition_offset]
    assert n_seen < np.count_nonzero(emission) <= n_seen + round(0.5 * n_seen)
    assert [r["iteration"] for r in active.history_] == list(range(1, len(active.history_) + 1)) <= list(range(1, 41))
    # rows that never fire keep 0 in every label
    fired = np.zeros(joint.n_rows, dtype=bool)
    fired[X.indices] = True
    assert not joint.emission_weights(active.weights_)[~fired].any()
    # grown to every pair whose gradient is not 0, the active set's optimum is every pair's optimum
    settings = dict(epochs=400, l2=0.5, tol=0, gtol=1e-9, progress=False)
    everything = MaxEnt(unseen_pairs="all", **settings).fit(joint, decoder, X, y)
    grown = MaxEnt(unseen_pairs=1000.0, **settings).fit(joint, decoder, X, y)
    np.testing.assert_allclose(dense(grown.weights_), everything.weights_, atol=1e-6)


def dense(w: np.ndarray | SparseWeights) -> np.ndarray:
    return w.dense() if isinstance(w, SparseWeights) else w


def test_after_the_growth_lbfgs_goes_on_with_its_pairs(monkeypatch):
    """The run over the grown set starts from the curvature pairs the first half ended with, laid out over the grown
    set (zeros at the added weights), not from none."""
    joint, X, y = problem(6, True)
    calls, minimize = [], maxent.minimize_owlqn

    def recording(fun, x0, **options):
        curvature = options.get("curvature")
        calls.append((len(x0), None if curvature is None else [(s.copy(), y_.copy()) for s, y_, _ in curvature.pairs]))
        result = minimize(fun, x0, **options)
        calls[-1] += ([(s.copy(), y_.copy()) for s, y_, _ in result.curvature.pairs],)
        return result

    monkeypatch.setattr(maxent, "minimize_owlqn", recording)
    MaxEnt(epochs=20, l2=0.5, unseen_pairs=1.0, progress=False).fit(joint, Viterbi(), X, y)
    (seen, none, ended), (grown, carried, _) = calls
    assert none is None and grown > seen and len(carried) == len(ended) > 0
    for (s, y_), (old_s, old_y) in zip(carried, ended):
        assert len(s) == grown and np.count_nonzero(s) <= len(old_s)
        np.testing.assert_array_equal(np.sort(s[s != 0]), np.sort(old_s[old_s != 0]))
        assert float(s @ y_) == pytest.approx(float(old_s @ old_y), rel=1e-12)


def test_the_option_is_checked_and_taken_on_the_command_line(capsys, tmp_path):
    with pytest.raises(OptionValueError, match="unseen_pairs applies to the lbfgs solver"):
        MaxEnt(solver="sgd", unseen_pairs=1.0)
    with pytest.raises(OptionValueError, match="unseen_pairs must be non-negative"):
        MaxEnt(unseen_pairs=-1.0)
    with pytest.raises(OptionValueError, match="unseen_pairs"):
        MaxEnt(unseen_pairs="some")
    data = tmp_path / "train.tsv"
    data.write_text("the\tDET\ndog\tNOUN\nbarks\tVERB\n\na\tDET\ncat\tNOUN\nsleeps\tVERB\n\n", "utf-8")
    for value, expected in (("all", "all"), ("2", 2.0)):
        code, _, err = run(capsys, "train", "tagger", "--train", data, "--output", tmp_path / "m.model", "--learner",
                           "maxent", "--unseen-pairs", value, "--epochs", "5", "-q", "--dev", "none")
        assert code == 0, err
        assert Tagger.load(tmp_path / "m.model").learner.unseen_pairs == expected


@pytest.fixture(scope="module")
def ewt_part(ewt_dir):
    return load_split("ud-english-ewt", "train")[:3000], load_split("ud-english-ewt", "dev")[:1000]


def test_the_crf_over_the_active_set_scores_as_over_every_pair_with_a_fraction_of_the_weights(ewt_part, tmp_path):
    train, dev = ewt_part
    scores, sizes = {}, {}
    for unseen in ("all", 0.5):
        tagger = Tagger(learner=MaxEnt(epochs=30, unseen_pairs=unseen, relative_l2=0.01, progress=False))
        tagger.fit(train)
        predicted = tagger.predict([list(s.words) for s in dev])
        scores[unseen] = np.mean([p == g for ps, s in zip(predicted, dev) for p, g in zip(ps, s.tags)])
        tagger.save(tmp_path / f"{unseen}.model")
        sizes[unseen] = (np.count_nonzero(tagger.weights_), (tmp_path / f"{unseen}.model").stat().st_size)
    # 3,000 sentences, 30 iterations (15 before the set grows): 93.76 against 93.49, 2.45 M against 0.35 M weights
    assert scores["all"] > 0.9 and scores[0.5] >= scores["all"] - 0.005
    assert sizes[0.5][0] < 0.3 * sizes["all"][0] and sizes[0.5][1] < 0.5 * sizes["all"][1]


def test_a_classifier_of_many_labels_keeps_to_its_pairs_from_training_to_its_file(tmp_path, monkeypatch):
    """150 labels: the run is compact (no patching), its model the pairs, a small share of rows × labels; a memory
    too small for one flat vector refuses the SVM but not this run; the file loads as the same pairs."""
    from structlin import Classifier, memory

    rng = np.random.default_rng(0)
    labels = [f"c{k}" for k in range(150)]
    docs = [" ".join([f"w{i % 150}a", f"w{i % 150}b", *rng.choice(["the", "of", "and", "a", "to"], 3),
                      f"n{rng.integers(0, 2000)}"]) for i in range(1500)]
    gold = [labels[i % 150] for i in range(1500)]
    model = Classifier("text-words", MaxEnt(epochs=30, relative_l2=0.01, progress=False))
    flat_vector = 8 * Classifier("text-words", "svm").fit(docs[:300], gold[:300]).joint.size
    monkeypatch.setattr(memory, "available", lambda root=None: flat_vector // 2)
    with pytest.raises(OptionValueError, match="svm's training"):
        Classifier("text-words", "svm").fit(docs, gold)
    model.fit(docs, gold)
    assert isinstance(model.weights_, SparseWeights)
    assert len(model.weights_.keys) < 0.1 * model.joint.transition_offset
    assert np.mean(model.predict(docs) == np.array(gold)) > 0.99
    model.save(tmp_path / "m.model")
    loaded = Classifier.load(tmp_path / "m.model")
    assert isinstance(loaded.weights_, SparseWeights)
    np.testing.assert_allclose(loaded.label_scores(docs[:200]), model.label_scores(docs[:200]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("share", [0.0, 1 / 3, 2.0])  # every row full, some, none
@pytest.mark.parametrize("at_a_time", [3, 1 << 22])
def test_pair_rows_score_and_differentiate_as_the_dense_products(monkeypatch, share, at_a_time):
    """The scores X·W and the gradient Xᵀ·R at the pairs, the rows of many pairs dense and the others pair by pair
    (a hash collision's repeated entries summed), equal the products over every row and label."""
    from structlin.learners import active_set as module

    monkeypatch.setattr(module.PairRows, "DENSE_SHARE", share)
    monkeypatch.setattr(module.PairRows, "ENTRIES_AT_A_TIME", at_a_time)
    rng = np.random.default_rng(7)
    n_positions, n_rows, L = 40, 12, 6
    X = scipy.sparse.random(n_positions, n_rows, density=0.3, format="csr", random_state=8)
    X = scipy.sparse.csr_matrix((np.append(X.data, 0.5), np.append(X.indices, X.indices[-1]),
                                 np.append(X.indptr[:-1], X.indptr[-1] + 1)), shape=X.shape)  # a repeated entry
    W = np.where(rng.random((n_rows, L)) < np.linspace(0.05, 0.9, n_rows)[:, None], rng.normal(size=(n_rows, L)), 0)
    keys = np.flatnonzero(W)
    rows = module.PairRows(X, keys, L)
    assert 0 < rows.in_full.sum() < len(keys) if share == 1 / 3 else rows.in_full.all() == (share == 0)
    np.testing.assert_allclose(rows.scores(W.ravel()[keys]), X @ W, rtol=1e-12, atol=1e-12)
    R = rng.normal(size=(n_positions, L))
    np.testing.assert_allclose(rows.gradient(R), (X.T @ R).ravel()[keys], rtol=1e-12, atol=1e-12)
