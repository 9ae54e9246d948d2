"""Tests of the tagger's probabilities (``learner="maxent"``): token marginals and sequence probabilities
against brute-force enumeration of every tag sequence, the per-token softmax of a multiclass tagger,
batching, save/load and the errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from brute import dense_rows, phi
from scipy.special import logsumexp

from structlin import Tagger
from structlin.errors import StructlinError
from structlin.readers import Sentence

TOY = [
    [("the", "DET"), ("dog", "NOUN"), ("barks", "VERB")],
    [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
    [("the", "DET"), ("cat", "NOUN"), ("barks", "VERB"), ("loudly", "ADV")],
    [("dogs", "NOUN"), ("sleep", "VERB")],
    [("a", "DET"), ("dog", "NOUN"), ("sleeps", "VERB"), ("loudly", "ADV")],
]
WORDS = [[w for w, _ in s] for s in TOY]
TAGS = [[t for _, t in s] for s in TOY]
# Known and unknown words, 3 and 4 tokens: 4^3 + 4^4 sequences to enumerate.
SMALL = [["the", "cat", "sleeps"], ["a", "zorblax", "barks", "loudly"], ["dogs", "the", "dog", "a"]]


def maxent_tagger(decoder: str) -> Tagger:
    return Tagger("pos-basic", "maxent", decoder, epochs=30, bits=16, progress=False).fit(TOY)


@pytest.fixture(scope="module")
def crf() -> Tagger:
    return maxent_tagger("viterbi")


@pytest.fixture(scope="module")
def softmax_tagger() -> Tagger:
    return maxent_tagger("multiclass")


def enumerate_sequences(tagger: Tagger, tokens):
    """Every tag sequence of ``tokens`` and its ``sequence_probability``."""
    sequences = list(itertools.product(tagger.classes_, repeat=len(tokens)))
    return sequences, np.array([tagger.sequence_probability(tokens, list(y)) for y in sequences])


def test_marginals_are_distributions_that_agree_with_predict(crf):
    assert crf.predict(WORDS) == TAGS
    sentences = WORDS + [["Unknown", "words", "here", "!"], ["the"]]
    marginals = crf.tag_marginals(sentences)
    arrays = crf.predict_marginals(sentences)
    assert [len(m) for m in marginals] == [len(s) for s in sentences]
    for sentence, array in zip(marginals, arrays):
        assert array.shape == (len(sentence), 4)
        for token, row in zip(sentence, array):
            assert list(token) == crf.classes_ == ["ADV", "DET", "NOUN", "VERB"]
            assert list(token.values()) == row.tolist()
            assert all(0.0 <= p <= 1.0 for p in token.values())
            assert sum(token.values()) == pytest.approx(1.0, abs=1e-12)
    # A well-fit model: the most probable tag of every training token is the Viterbi tag, and a likely one.
    assert [[max(t, key=t.get) for t in s] for s in marginals[: len(TOY)]] == TAGS
    assert min(t[g] for s, gold in zip(marginals, TAGS) for t, g in zip(s, gold)) > 0.5
    # Sentence objects are accepted as by predict (batched alone, so equal up to rounding).
    np.testing.assert_allclose(crf.predict_marginals([Sentence(WORDS[0], None)])[0], arrays[0], rtol=1e-12)


@pytest.mark.parametrize("tokens", SMALL)
def test_brute_force_enumeration(crf, tokens):
    sequences, p = enumerate_sequences(crf, tokens)
    assert abs(p.sum() - 1.0) < 1e-9
    marginals = crf.predict_marginals([tokens])[0]
    for i, k in itertools.product(range(len(tokens)), range(len(crf.classes_))):
        there = np.array([y[i] == crf.classes_[k] for y in sequences])
        assert abs(p[there].sum() - marginals[i, k]) < 1e-9
    # The Viterbi sequence is the most probable one.
    best = sequences[int(np.argmax(p))]
    assert list(best) == crf.predict([tokens])[0]
    assert crf.sequence_probability(tokens, list(best)) == p.max()
    # Against the literal definition log p(y|x) = w·φ(x, y) − log Z(x), Z summed over all sequences.
    F = dense_rows(crf.joint.index(crf._extractor.extract([tokens])), crf.joint.n_rows)
    scores = np.array([crf.weights_ @ phi(crf.joint, F, crf.joint.encode_labels(y)) for y in sequences])
    np.testing.assert_allclose(np.log(p), scores - logsumexp(scores), rtol=0, atol=1e-9)
    assert crf.sequence_log_probability(tokens, list(best)) == pytest.approx(np.log(p.max()), abs=1e-12)


def test_multiclass_tagger_is_a_per_token_softmax(softmax_tagger):
    tagger = softmax_tagger
    assert not tagger.joint.transitions
    for tokens in SMALL:
        emissions = tagger.joint.scores(tagger.weights_, tagger.joint.index(tagger._extractor.extract([tokens])))
        softmax = np.exp(emissions.emissions - logsumexp(emissions.emissions, axis=1, keepdims=True))
        marginals = tagger.predict_marginals([tokens])[0]
        np.testing.assert_allclose(marginals, softmax, rtol=1e-12)
        sequences, p = enumerate_sequences(tagger, tokens)
        assert abs(p.sum() - 1.0) < 1e-9
        rows = np.arange(len(tokens))
        product = [np.prod(marginals[rows, tagger.joint.encode_labels(y)]) for y in sequences]
        np.testing.assert_allclose(p, product, rtol=1e-9)
    assert [[max(t, key=t.get) for t in s] for s in tagger.tag_marginals(WORDS)] == tagger.predict(WORDS) == TAGS


def test_greedy_tagger_has_the_chain_distribution(crf):
    greedy = maxent_tagger("greedy")
    assert greedy.joint.transitions
    for tokens in SMALL:
        np.testing.assert_allclose(greedy.predict_marginals([tokens])[0], crf.predict_marginals([tokens])[0],
                                   rtol=1e-6)
        _, p = enumerate_sequences(greedy, tokens)
        assert abs(p.sum() - 1.0) < 1e-9


def test_batches_of_mixed_lengths_equal_one_sentence_at_a_time(crf):
    rng = np.random.default_rng(0)
    vocabulary = sorted({w for s in WORDS for w in s}) + ["unseen", "Words"]
    sentences = [list(rng.choice(vocabulary, size=n)) for n in [3, 0, 7, 1, 4500, 2, 12, 0, 5, 300]]
    together = crf.predict_marginals(sentences)  # the 4,500-token sentence makes several length batches
    assert [len(m) for m in together] == [len(s) for s in sentences]
    for sentence, marginals in zip(sentences, together):
        np.testing.assert_allclose(marginals, crf.predict_marginals([sentence])[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(marginals.sum(axis=1), 1.0, rtol=1e-12)
    # A long chain neither underflows nor overflows.
    log_p = crf.sequence_log_probability(sentences[4], crf.predict([sentences[4]])[0])
    assert np.isfinite(log_p) and log_p < 0


def test_empty_input(crf, softmax_tagger):
    for tagger in (crf, softmax_tagger):
        assert tagger.sequence_probability([], []) == 1.0
        assert tagger.sequence_log_probability([], []) == 0.0
        assert tagger.tag_marginals([]) == []
        assert tagger.tag_marginals([[], ["the"], []])[0::2] == [[], []]
        assert tagger.predict_marginals([[]])[0].shape == (0, 4)


def test_save_load_gives_identical_probabilities(crf, tmp_path):
    crf.save(tmp_path / "crf.model")
    loaded = Tagger.load(tmp_path / "crf.model")
    sentences = WORDS + SMALL + [["never", "seen", "before"], []]
    for a, b in zip(loaded.predict_marginals(sentences), crf.predict_marginals(sentences)):
        np.testing.assert_array_equal(a, b)
    assert loaded.tag_marginals(sentences) == crf.tag_marginals(sentences)
    assert loaded.sequence_probability(SMALL[1], ["DET", "NOUN", "VERB", "ADV"]) == \
        crf.sequence_probability(SMALL[1], ["DET", "NOUN", "VERB", "ADV"])


def test_bad_tag_sequences(crf):
    with pytest.raises(StructlinError, match=r"unknown tag 'PRON'; the model's tags are \['ADV', 'DET', 'NOUN', 'VERB'\]"):
        crf.sequence_probability(["the", "dog"], ["DET", "PRON"])
    with pytest.raises(StructlinError, match="3 tokens but 2 tags"):
        crf.sequence_probability(["the", "dog", "barks"], ["DET", "NOUN"])
    with pytest.raises(StructlinError, match="0 tokens but 1 tags"):
        crf.sequence_log_probability([], ["DET"])
    with pytest.raises(StructlinError, match="token 2: expected a token string"):
        crf.sequence_probability(["the", 5], ["DET", "NOUN"])


PROBABILITY_CALLS = {
    "tag_marginals": lambda t: t.tag_marginals([["the", "dog"]]),
    "predict_marginals": lambda t: t.predict_marginals([["the", "dog"]]),
    "sequence_probability": lambda t: t.sequence_probability(["the", "dog"], ["DET", "NOUN"]),
    "sequence_log_probability": lambda t: t.sequence_log_probability(["the", "dog"], ["DET", "NOUN"]),
}


@pytest.fixture(scope="module")
def perceptron_tagger() -> Tagger:
    return Tagger("pos-basic", "averaged-perceptron", epochs=3, bits=16, progress=False).fit(TOY)


@pytest.mark.parametrize("call", PROBABILITY_CALLS)
def test_perceptron_tagger_is_refused(perceptron_tagger, call):
    with pytest.raises(StructlinError, match="learner 'averaged-perceptron' gives no probabilities; train with one "
                                             "of maxent, naive-bayes, bernoulli-nb"):
        PROBABILITY_CALLS[call](perceptron_tagger)


@pytest.mark.parametrize("call", PROBABILITY_CALLS)
def test_unfitted_tagger_is_refused(call):
    with pytest.raises(StructlinError, match="not trained yet"):
        PROBABILITY_CALLS[call](Tagger("pos-basic", "maxent", bits=12, progress=False))
