"""Tests of structlin.tagdict and of decoding restricted to allowed labels, against brute-force enumeration
of every allowed label sequence."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from structlin.decoders import Cost, Greedy, Multiclass, Viterbi
from structlin.joint import Scores
from structlin.modelfile import check_arrays
from structlin.tagdict import TagDictionary

# --- brute force --------------------------------------------------------------------------------------


def allowed_sequences(scores: Scores, first: int, length: int):
    """Every label sequence of the instance at ``first`` whose labels are all allowed, with its score."""
    allowed = scores.allowed[first : first + length]
    for y in itertools.product(*(np.flatnonzero(row) for row in allowed)):
        value = sum(scores.emissions[first + i, label] for i, label in enumerate(y))
        if length:
            value += scores.start[y[0]] + scores.end[y[-1]]
            value += sum(scores.transitions[a, b] for a, b in zip(y, y[1:]))
        yield y, value


def instance_starts(lengths):
    return np.cumsum(lengths) - lengths


def brute_argmax(scores: Scores, extra=lambda first, y: 0.0) -> np.ndarray:
    """The best allowed sequence of every instance (``extra`` adds to a sequence's score).  Of tied
    sequences, the one with the lowest last label, then the lowest label before it, and so on: Viterbi
    breaks ties towards the lower label index at the end and at every back pointer."""
    out = []
    for first, length in zip(instance_starts(scores.lengths), scores.lengths):
        scored = [(value + extra(first, y), y) for y, value in allowed_sequences(scores, first, length)]
        top = max(value for value, _ in scored)
        out += min((y for value, y in scored if value == top), key=lambda y: y[::-1])
    return np.array(out, dtype=np.int64)


def chain_scores(rng, lengths, L, *, integer=False) -> tuple:
    """Emissions, lengths, transitions, start and end; with ``integer``, small whole numbers, whose sums
    are exact and tie often."""
    def draw(*shape):
        return rng.integers(-2, 3, size=shape).astype(float) if integer else rng.normal(size=shape)

    return draw(int(np.sum(lengths)), L), np.asarray(lengths, dtype=np.int64), draw(L, L), draw(L), draw(L)


def random_allowed(rng, n, L, *, full=0.3) -> np.ndarray:
    """A share ``full`` of the rows allow every label, the others a random non-empty subset."""
    allowed = rng.random((n, L)) < 0.4
    allowed[np.arange(n), rng.integers(0, L, size=n)] = True
    allowed[rng.random(n) < full] = True
    return allowed


RESTRICTED = [Viterbi("sparse"), Viterbi("masked"), Viterbi("auto")]


@st.composite
def restricted_scores(draw):
    L = draw(st.integers(1, 4))
    lengths = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    emissions, lengths, *chain = chain_scores(rng, lengths, L, integer=draw(st.booleans()))
    full = draw(st.sampled_from([0, 0.3, 1]))
    return Scores(emissions, lengths, *chain, random_allowed(rng, len(emissions), L, full=full))


# --- restricted Viterbi -------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=300, deadline=None)
@given(restricted_scores())
def test_restricted_viterbi_is_the_best_allowed_sequence(scores):
    expected = brute_argmax(scores)
    for decoder in RESTRICTED:
        np.testing.assert_array_equal(decoder.argmax(scores), expected, err_msg=decoder.restricted)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(restricted_scores(), st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))
def test_restricted_loss_augmented_argmax(scores, scale):
    # scales exact in binary: with whole-number scores, tied sequences tie exactly in every summation order
    rng = np.random.default_rng(len(scores.emissions))
    gold = np.array([rng.choice(np.flatnonzero(row)) for row in scores.allowed], dtype=np.int64)
    expected = brute_argmax(scores, lambda first, y: scale * np.count_nonzero(gold[first : first + len(y)] != y))
    for decoder in RESTRICTED:
        np.testing.assert_array_equal(decoder.loss_augmented_argmax(scores, gold, scale), expected)
        np.testing.assert_array_equal(decoder.loss_augmented_argmax(scores, gold, Cost(scale)), expected)


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_all_allowed_equals_dense_exactly(seed, integer):
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([[0, 1, 30], rng.integers(0, 12, size=8)])
    rng.shuffle(lengths)
    emissions, lengths, *chain = chain_scores(rng, lengths, 7, integer=integer)
    dense = Viterbi().argmax(Scores(emissions, lengths, *chain))
    everything = Scores(emissions, lengths, *chain, np.ones(emissions.shape, dtype=bool))
    for decoder in RESTRICTED:
        np.testing.assert_array_equal(decoder.argmax(everything), dense)


def test_mixed_lengths_with_empty_and_single_instances():
    rng = np.random.default_rng(3)
    for lengths in ([0, 1, 3, 0, 2], [0, 0], [], [1], [1, 1, 1], [4, 0]):
        emissions, lengths, *chain = chain_scores(rng, lengths, 3)
        scores = Scores(emissions, lengths, *chain, random_allowed(rng, len(emissions), 3))
        for decoder in RESTRICTED:
            np.testing.assert_array_equal(decoder.argmax(scores), brute_argmax(scores))


def test_restricted_viterbi_over_many_labels_keeps_the_candidates():
    """Many labels, few candidates, some unknown words: the sparse recursion with blocks and gathered edges
    finds the same path as the dense recursion over masked scores, and only candidates."""
    rng = np.random.default_rng(7)
    L, lengths = 60, rng.integers(0, 25, size=9)
    emissions, lengths, *chain = chain_scores(rng, lengths, L)
    allowed = np.zeros(emissions.shape, dtype=bool)
    for row in allowed:
        row[rng.choice(L, size=rng.integers(1, 4), replace=False)] = True
    allowed[rng.random(len(allowed)) < 0.3] = True
    scores = Scores(emissions, lengths, *chain, allowed)
    predicted = Viterbi("sparse").argmax(scores)
    assert allowed[np.arange(len(predicted)), predicted].all()
    np.testing.assert_array_equal(predicted, Viterbi("masked").argmax(scores))
    np.testing.assert_array_equal(predicted, Viterbi().argmax(scores))


def test_sparse_pays_only_when_the_restriction_saves_work():
    rng = np.random.default_rng(0)
    emissions, lengths, *chain = chain_scores(rng, [20, 20, 20, 20], 200)
    everything = Scores(emissions, lengths, *chain, np.ones(emissions.shape, dtype=bool))
    one_each = np.zeros(emissions.shape, dtype=bool)
    one_each[np.arange(len(emissions)), rng.integers(0, 200, size=len(emissions))] = True
    assert Viterbi.sparse_pays(Scores(emissions, lengths, *chain, one_each))
    small = Scores(emissions[:, :3], lengths, chain[0][:3, :3], chain[1][:3], chain[2][:3], one_each[:, :3] | True)
    assert not Viterbi.sparse_pays(small)
    with pytest.raises(ValueError, match="restricted"):
        Viterbi("fast")
    dense = Viterbi().argmax(Scores(emissions, lengths, *chain))
    np.testing.assert_array_equal(Viterbi("sparse").argmax(everything), dense)


# --- the other decoders and computations honour allowed ------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_greedy_and_multiclass_keep_to_allowed_labels(seed):
    rng = np.random.default_rng(seed)
    emissions, lengths, *chain = chain_scores(rng, rng.integers(0, 5, size=4), 4)
    allowed = random_allowed(rng, len(emissions), 4, full=0)
    scores = Scores(emissions, lengths, *chain, allowed)
    masked = np.where(allowed, emissions, -np.inf)
    np.testing.assert_array_equal(Multiclass().argmax(scores), masked.argmax(axis=1))
    greedy = Greedy().argmax(scores)
    assert allowed[np.arange(len(greedy)), greedy].all()
    np.testing.assert_array_equal(greedy, Greedy().argmax(Scores(masked, lengths, *chain)))


@pytest.mark.parametrize("seed", range(15))
def test_max_marginals_and_marginals_over_allowed_sequences(seed):
    rng = np.random.default_rng(seed)
    L = 3
    emissions, lengths, *chain = chain_scores(rng, rng.integers(0, 4, size=3), L)
    scores = Scores(emissions, lengths, *chain, random_allowed(rng, len(emissions), L, full=0.2))
    mu = np.full(emissions.shape, -np.inf)
    nodes, log_z = np.zeros(emissions.shape), []
    for first, length in zip(instance_starts(lengths), lengths):
        sequences = list(allowed_sequences(scores, first, length))
        values = np.array([value for _, value in sequences])
        log_z.append(logsumexp(values))
        for (y, value), p in zip(sequences, np.exp(values - log_z[-1])):
            positions = first + np.arange(length)
            mu[positions, y] = np.maximum(mu[positions, y], value)
            nodes[positions, y] += p
    np.testing.assert_allclose(Viterbi().max_marginals(scores), mu, rtol=1e-12)
    marginals = Viterbi().marginals(scores)
    np.testing.assert_allclose(marginals.log_partition, log_z, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(marginals.nodes, nodes, rtol=0, atol=1e-9)
    assert (marginals.nodes[~scores.allowed] == 0).all()
    independent = Scores(emissions, lengths, allowed=scores.allowed)
    assert (Multiclass().marginals(independent).nodes[~scores.allowed] == 0).all()
    assert np.isneginf(Multiclass().max_marginals(independent)[~scores.allowed]).all()


def test_scores_refuse_unusable_allowed():
    emissions, lengths = np.zeros((3, 2)), np.array([3])
    with pytest.raises(ValueError, match="at least one allowed"):
        Scores(emissions, lengths, allowed=np.array([[True, False], [False, False], [True, True]]))
    with pytest.raises(ValueError, match="bool array"):
        Scores(emissions, lengths, allowed=np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="bool array"):
        Scores(emissions, lengths, allowed=np.ones((3, 2)))
    plain = Scores(emissions, lengths)
    assert plain.masked() is plain


# --- the tag dictionary --------------------------------------------------------------------------------

SENTENCES = [
    [("the", 0), ("dog", 1), ("runs", 2)],
    [("the", 0), ("run", 1), ("ends", 2)],
    [("dogs", 1), ("run", 2), ("the", 3)],
]
WORDS = [word for sentence in SENTENCES for word, _ in sentence]
LABELS = [label for sentence in SENTENCES for _, label in sentence]


def candidate_lists(dictionary: TagDictionary, words):
    indptr, ids = dictionary.candidates(dictionary.rows(words))
    return [ids[a:b].tolist() for a, b in zip(indptr[:-1], indptr[1:])]


def test_dictionary_candidates_are_the_labels_seen_with_each_word():
    dictionary = TagDictionary.build(WORDS, LABELS, 5)
    assert dictionary.n_words == 6
    words = ["the", "run", "dog", "cat", "runs", "The"]
    assert candidate_lists(dictionary, words) == [[0, 3], [1, 2], [1], [0, 1, 2, 3, 4], [2], [0, 1, 2, 3, 4]]
    mask = dictionary.mask(dictionary.rows(words))
    assert mask.shape == (6, 5) and mask.dtype == bool
    assert [np.flatnonzero(row).tolist() for row in mask] == candidate_lists(dictionary, words)
    assert dictionary.rows(["cat", "the"])[0] == -1 and dictionary.rows(["the"])[0] >= 0
    indptr, ids = dictionary.candidates(dictionary.rows([]))
    assert indptr.tolist() == [0] and ids.tolist() == [] and dictionary.mask(dictionary.rows([])).shape == (0, 5)


def test_dictionary_min_count_leaves_rare_words_open():
    dictionary = TagDictionary.build(WORDS, LABELS, 5, min_count=2)
    every = [0, 1, 2, 3, 4]
    assert candidate_lists(dictionary, ["the", "run", "dog", "runs"]) == [[0, 3], [1, 2], every, every]
    assert TagDictionary.build(WORDS, LABELS, 5, min_count=4).n_words == 0
    empty = TagDictionary.build([], [], 2)
    assert empty.n_words == 0 and candidate_lists(empty, ["x"]) == [[0, 1]]


def test_dictionary_refuses_bad_training_input():
    with pytest.raises(ValueError, match="one integer label id per word"):
        TagDictionary.build(WORDS, LABELS[:-1], 5)
    with pytest.raises(ValueError, match="label ids must be in"):
        TagDictionary.build(WORDS, LABELS, 3)
    with pytest.raises(ValueError, match="min_count"):
        TagDictionary.build(WORDS, LABELS, 5, min_count=0)
    with pytest.raises(ValueError, match="n_labels"):
        TagDictionary.build(WORDS, LABELS, 0)


def test_decoding_with_a_dictionary_keeps_every_word_to_its_candidates():
    rng = np.random.default_rng(5)
    dictionary = TagDictionary.build(WORDS, LABELS, 5)
    words = ["the", "dog", "cat", "run", "the", "ends", "dogs"]
    emissions, lengths, *chain = chain_scores(rng, [4, 0, 3], 5)
    scores = Scores(emissions, lengths, *chain, dictionary.mask(dictionary.rows(words)))
    for decoder in [*RESTRICTED, Greedy(), Multiclass()]:
        predicted = decoder.argmax(scores)
        assert all(label in candidates for label, candidates in zip(predicted, candidate_lists(dictionary, words)))
    np.testing.assert_array_equal(Viterbi("sparse").argmax(scores), brute_argmax(scores))


def test_dictionary_arrays_round_trip():
    dictionary = TagDictionary.build(WORDS * 2, LABELS * 2, 5)
    arrays = dictionary.to_arrays()
    assert set(arrays) == set(TagDictionary.array_specs)
    check_arrays("model.zip", arrays, TagDictionary.array_specs, {"labels": (5, "the metadata")})
    words = ["the", "run", "dogs", "cat"]
    copied = {name: np.array(array) for name, array in arrays.items()}
    again = TagDictionary.from_arrays({**copied, "columns": np.arange(3)}, 5)  # other model arrays are ignored
    assert candidate_lists(again, words) == candidate_lists(dictionary, words)
    np.testing.assert_array_equal(again.mask(again.rows(words)), dictionary.mask(dictionary.rows(words)))


def edited(arrays, **changes):
    return {**arrays, **{f"tagdict_{name}": np.asarray(value) for name, value in changes.items()}}


def test_from_arrays_refuses_arrays_that_make_no_dictionary():
    dictionary = TagDictionary.build(WORDS, LABELS, 5)
    arrays = dictionary.to_arrays()
    codes, indptr, labels = arrays["tagdict_codes"], arrays["tagdict_indptr"], arrays["tagdict_labels"]
    the = indptr[dictionary.rows(["the"])[0]]  # where the labels of "the", [0, 3], begin
    swapped = labels.copy()
    swapped[the : the + 2] = [3, 0]
    bad = {
        "lacks the arrays": {k: v for k, v in arrays.items() if k != "tagdict_labels"},
        "codes must be one-dimensional uint64": edited(arrays, codes=codes.astype(np.int64)),
        "must be one-dimensional uint64,": edited(arrays, codes=codes[None]),
        "codes do not increase strictly": edited(arrays, codes=codes[::-1].copy()),
        "increase strictly": edited(arrays, codes=np.repeat(codes[:1], len(codes))),
        "indptr must be one-dimensional integers": edited(arrays, indptr=indptr.astype(float)),
        "labels must be one-dimensional integers": edited(arrays, labels=labels[None]),
        "bounds from 0": edited(arrays, indptr=indptr[:-1]),
        "from 0 to": edited(arrays, indptr=indptr + 1),
        "every word has a label": edited(arrays, indptr=np.concatenate([[0, 0], indptr[2:]])),
        "must be in \\[0, 5\\)": edited(arrays, labels=np.where(labels == 3, 7, labels)),
        "must be in \\[0, 5\\)\\Z": edited(arrays, labels=labels - 1),
        "increase strictly within every word": edited(arrays, labels=swapped),
    }
    for message, broken in bad.items():
        with pytest.raises(ValueError, match=message):
            TagDictionary.from_arrays(broken, 5)
    with pytest.raises(ValueError, match="n_labels"):
        TagDictionary.from_arrays(arrays, 0)
    with pytest.raises(ValueError, match="must be in"):
        TagDictionary.from_arrays(arrays, 3)


# --- a tagger restricted by its dictionary ---------------------------------------------------------------


def _ewt_part(ewt_dir, split: str, count: int):
    from structlin.readers import read_conllu

    return list(itertools.islice(read_conllu(ewt_dir / f"en_ewt-ud-{split}.conllu"), count))


@pytest.mark.parametrize("learner", ["averaged-perceptron", "maxent"])
def test_a_tagger_gives_a_known_word_only_tags_it_was_seen_with(ewt_dir, learner):
    """tag_dictionary=k: a word seen k times or more in training gets one of the tags it was seen with, at
    prediction (and in training, where every gold tag stays allowed: the CRF's likelihood stays finite);
    rarer and unknown words may take any tag."""
    from collections import Counter, defaultdict

    from structlin import Tagger

    train, test = _ewt_part(ewt_dir, "train", 400), _ewt_part(ewt_dir, "dev", 200)
    counts, seen = Counter(), defaultdict(set)
    for sentence in train:
        for word, tag in zip(sentence.words, sentence.tags):
            counts[word] += 1
            seen[word].add(tag)
    tagger = Tagger(learner=learner, tag_dictionary=2, epochs=3, progress=False).fit(train)
    restricted = free = 0
    for sentence, tags in zip(test, tagger.predict(test)):
        for word, tag in zip(sentence.words, tags):
            if counts[word] >= 2:
                assert tag in seen[word], (word, tag, seen[word])
                restricted += 1
            else:
                free += 1
    assert restricted > 1000 and free > 100
    if learner == "maxent":  # disallowed tags have probability 0; the allowed ones sum to 1
        sentence = ["the", "the", "zzqx"]
        marginals = tagger.predict_marginals([sentence])[0]
        np.testing.assert_allclose(marginals.sum(axis=1), 1.0)
        allowed = [tagger.classes_.index(t) for t in seen["the"]]
        assert marginals[0, np.setdiff1d(np.arange(len(tagger.classes_)), allowed)].max() == 0.0
        assert (marginals[2] > 0).sum() == len(tagger.classes_)


def test_without_a_dictionary_a_tagger_is_unrestricted(ewt_dir):
    from structlin import Tagger

    train = _ewt_part(ewt_dir, "train", 100)
    tagger = Tagger(epochs=2, progress=False).fit(train)
    assert tagger.tagdict_ is None and tagger.joint.candidates is None


@pytest.mark.parametrize("value", [0, -1, 2.5, "3", True])
def test_tag_dictionary_must_be_a_positive_count(value):
    from structlin import Tagger
    from structlin.errors import OptionValueError

    with pytest.raises(OptionValueError, match="tag_dictionary must be a positive number of occurrences"):
        Tagger(tag_dictionary=value).fit([[("a", "X"), ("b", "Y")]])


def test_a_saved_tagger_keeps_its_dictionary(ewt_dir, tmp_path):
    """The dictionary travels in the model file: the loaded tagger predicts exactly as the trained one, and a
    file whose dictionary arrays were removed or tampered with is refused."""
    import zipfile

    from structlin import Tagger
    from structlin.errors import ModelFormatError

    train, test = _ewt_part(ewt_dir, "train", 300), _ewt_part(ewt_dir, "dev", 100)
    tagger = Tagger(tag_dictionary=2, epochs=2, progress=False).fit(train)
    tagger.save(tmp_path / "m.model")
    loaded = Tagger.load(tmp_path / "m.model")
    assert loaded.tag_dictionary == 2 and loaded.predict(test) == tagger.predict(test)
    np.testing.assert_array_equal(loaded.tagdict_.codes, tagger.tagdict_.codes)
    import pickle

    unpickled = pickle.loads(pickle.dumps(tagger))  # the restriction travels in a pickle too
    assert unpickled.joint.candidates is not None and unpickled.predict(test) == tagger.predict(test)
    with zipfile.ZipFile(tmp_path / "m.model") as source, zipfile.ZipFile(tmp_path / "cut.model", "w") as cut:
        for item in source.infolist():
            if item.filename != "tagdict_labels.npy":
                cut.writestr(item, source.read(item))
    with pytest.raises(ModelFormatError, match="cut.model"):
        Tagger.load(tmp_path / "cut.model")


def test_the_command_line_trains_a_tagger_with_a_dictionary(ewt_dir, tmp_path, capsys):
    from cli_run import run

    from structlin import Tagger

    train = tmp_path / "train.conllu"
    blocks = (ewt_dir / "en_ewt-ud-train.conllu").read_text("utf-8").split("\n\n")[:200]
    train.write_text("\n\n".join(blocks) + "\n\n", "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", train, "--tag-dictionary", "3", "--epochs", "2",
                       "--dev", "none", "--output", tmp_path / "m.model")
    assert code == 0, err
    assert Tagger.load(tmp_path / "m.model").tag_dictionary == 3
    code, _, err = run(capsys, "train", "tagger", "--train", train, "--tag-dictionary", "0", "--output",
                       tmp_path / "x.model")
    assert code == 2 and "--tag-dictionary" in err
    code, _, err = run(capsys, "train", "classifier", "--train", train, "--tag-dictionary", "3", "--output",
                       tmp_path / "x.model")
    assert code == 2 and "unrecognized arguments: --tag-dictionary" in err
