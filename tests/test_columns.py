"""Token features from input columns other than the word (a POS column for chunking and NER): feature
sets naming a ``column``, tuple tokens, Sentence columns, and the BIO corpora of the catalog."""

from __future__ import annotations

import numpy as np
import pytest

from structlin import Tagger
from structlin.catalog import load_split
from structlin.errors import CorpusFormatError, StructlinError
from structlin.hashing import FeatureHasher
from structlin.readers import Sentence
from structlin.templates import FeatureSet, TokenFeatureExtractor

WORDS = {"name": "word", "offsets": [-1, 0, 1]}
POS = {"name": "word", "column": "pos", "offsets": [-2, -1, 0, 1, 2]}
POS_BIGRAM = {"name": "ngram", "column": "pos", "of": "word", "span": [-1, 0]}


def feature_set(*entries) -> FeatureSet:
    return FeatureSet.from_dict({"name": "t", "template": list(entries)})


def rows(matrix) -> list[set[int]]:
    return [set(matrix.indices[a:b].tolist()) for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])]


def test_a_column_template_adds_a_field_and_its_own_key():
    fs = feature_set(WORDS, POS, POS_BIGRAM)
    assert fs.fields == ("word", "pos")
    assert [s.key for s in fs.templates] == ["word", "pos:word", "pos:ngram(of=word,span=[-1, 0])"]
    assert FeatureSet.from_dict(fs.to_dict()) == fs
    assert feature_set(WORDS).fields == ("word",)


def test_word_features_are_those_of_the_word_only_set_and_pos_features_follow_the_window():
    hasher = FeatureHasher(20, 0)
    sentence = [("the", "DT"), ("old", "JJ"), ("man", "NN"), ("the", "NN"), ("boat", "NN")]
    both = TokenFeatureExtractor(feature_set(WORDS, POS, POS_BIGRAM), hasher)
    words_only = TokenFeatureExtractor(feature_set(WORDS), hasher)
    full = rows(both.extract([sentence]))
    plain = rows(words_only.extract([[w for w, _ in sentence]]))
    assert all(p <= f and len(f) > len(p) for p, f in zip(plain, full))
    changed = list(sentence)
    changed[1] = ("old", "NN")  # one POS tag: positions within ±2 of it change, the rest do not
    after = rows(both.extract([changed]))
    assert [f != a for f, a in zip(full, after)] == [True, True, True, True, False]
    # The same strings in the word column and in the POS column are different features.
    as_word = rows(TokenFeatureExtractor(feature_set({"name": "word"}), hasher).extract([["NN"]]))[0]
    as_pos = rows(TokenFeatureExtractor(feature_set({"name": "word", "column": "pos"}), hasher).extract([[("x", "NN")]]))[0]
    assert len(as_word) == len(as_pos) == 1 and as_word != as_pos


def test_tokens_must_be_tuples_of_the_fields():
    extractor = TokenFeatureExtractor(feature_set(WORDS, POS), FeatureHasher(20, 0))
    with pytest.raises(StructlinError, match=r"sentence 1, token 2: expected a \(word, pos\) tuple, got 'man'"):
        extractor.extract([[("the", "DT"), "man"]])
    with pytest.raises(StructlinError, match="column of 'bias'"):
        feature_set({"name": "bias", "column": ""})


def test_sentence_fields_by_column_name():
    sentence = Sentence(["the", "man"], ["B-NP", "I-NP"], path="c.txt", line=7,
                        columns=[["the", "DT", "B-NP"], ["man", "NN", "I-NP"]], column_names=("word", "pos", "chunk"))
    assert sentence.fields(("word", "pos")) == [("the", "DT"), ("man", "NN")]
    with pytest.raises(CorpusFormatError, match=r"c.txt:7: the feature set reads column\(s\) lemma, but this sentence "
                                                r"has word, pos, chunk"):
        sentence.fields(("word", "lemma"))
    with pytest.raises(CorpusFormatError, match="but this sentence has the words only"):
        Sentence(["a"], ["X"]).fields(("word", "pos"))


def test_a_chunker_from_tuples_tags_tuples_and_round_trips(tmp_path):
    train = [[("the", "DT", "B-NP"), ("old", "JJ", "I-NP"), ("man", "NN", "I-NP"), ("sleeps", "VBZ", "B-VP")],
             [("a", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("barks", "VBZ", "B-VP"), (".", ".", "O")]]
    tagger = Tagger(feature_set(WORDS, POS, POS_BIGRAM), epochs=5).fit(train)
    tokens = [[("the", "DT"), ("dog", "NN"), ("sleeps", "VBZ")]]
    assert tagger.predict(tokens) == [["B-NP", "I-NP", "B-VP"]]
    assert tagger.tag_sents(tokens) == [[("the", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("sleeps", "VBZ", "B-VP")]]
    assert tagger.known_words_ == {"the", "old", "man", "sleeps", "a", "dog", "barks", "."}
    assert tagger.report(train).accuracy == 1.0
    tagger.save(tmp_path / "c.model")
    loaded = Tagger.load(tmp_path / "c.model")
    np.testing.assert_array_equal(loaded.weights_, tagger.weights_)
    assert loaded.feature_set.fields == ("word", "pos") and loaded.predict(tokens) == tagger.predict(tokens)
    with pytest.raises(CorpusFormatError, match=r"sentence 1: expected \(word, pos, tag\) tuples"):
        Tagger(feature_set(WORDS, POS)).fit([[("the", "B-NP")]])


@pytest.mark.parametrize(("corpus", "sentences", "tokens", "tags"), [
    ("conll2000", 2012, 47377, {"B-NP", "I-NP", "B-VP", "B-PP", "B-ADJP", "B-SBAR", "B-PRT", "O"}),
    ("conll2002-esp", 1517, 51533, {"B-PER", "I-PER", "B-LOC", "B-ORG", "I-ORG", "B-MISC", "O"}),
    ("conll2002-ned", 5195, 68875, {"B-PER", "I-PER", "B-LOC", "B-ORG", "I-ORG", "B-MISC", "O"}),
])
def test_bio_corpora_keep_every_chunk_type_and_the_pos_column(nltk_data_dir, corpus, sentences, tokens, tags):
    column = "chunk" if corpus == "conll2000" else None
    test = load_split(corpus, "test", column=column)
    assert len(test) == sentences and sum(len(s.words) for s in test) == tokens
    assert tags <= {t for s in test for t in s.tags}
    first = test[0].fields(("word", "pos"))
    assert first[0][0] == test[0].words[0] and first[0][1] != test[0].tags[0]
