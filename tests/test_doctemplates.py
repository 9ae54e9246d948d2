"""Document features: reference strings, vectorised n-gram hashing, weighting and normalisation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from structlin.doctemplates import DocumentFeatureExtractor
from structlin.errors import StructlinError
from structlin.hashing import FeatureHasher
from structlin.templates import FeatureSet, template


def feature_set(*templates, values="count", normalize="none"):
    return FeatureSet.from_dict({"name": "t", "values": values, "normalize": normalize, "template": list(templates)})


def expected_counts(hasher, key_of, features):
    """Signed bucket counts of (key, value) features by the hasher's documented definition."""
    out = {}
    for key, value in features:
        bucket, sign = hasher(key, value)
        out[bucket] = out.get(bucket, 0.0) + sign
    return {b: v for b, v in out.items() if v != 0}


def row(matrix, i):
    a, b = matrix.indptr[i], matrix.indptr[i + 1]
    return dict(zip(matrix.indices[a:b].tolist(), matrix.values[a:b].tolist()))


def chain_code(hasher, key, parts):
    """The code of an n-gram: H(key) mixed with each part's code in turn."""
    z = np.array([hasher.string(key)], dtype=np.uint64)
    for code in parts:
        z = hasher.mix(z, np.array([code], dtype=np.uint64))
    return z


def test_reference_templates():
    assert template("words").function("The cat, the CAT!", n=(1, 2)) == ["the", "cat", "the", "cat", "the cat", "cat the", "the cat"]
    assert template("words").function("a bb ccc", stopwords=("ccc",)) == ["bb"]
    assert template("chars").function("Ab c", n=(3,)) == [" ab", "ab ", " c "]
    assert template("chars").function("Ab", n=(2,), within_words=False) == ["ab"]
    assert template("fields").function(("join", "board", "as")) == ["0=join", "1=board", "2=as"]
    assert template("field_pairs").function(("a", "b", "c")) == ["0,1=a|b", "0,2=a|c", "1,2=b|c"]
    assert template("field_triples").function(("a", "b", "c", "d"))[0] == "0,1,2=a|b|c"
    assert template("featureset").function({"last": "a", 3: 0.5, "flag": True}) == {"last=a": 1.0, "3": 0.5, "flag=True": 1.0}


def test_word_ngrams_are_hashed_as_chains_of_token_codes():
    hasher = FeatureHasher(20, 3)
    fs = feature_set({"name": "words", "n": [1, 2]})
    counts = DocumentFeatureExtractor(fs, hasher).counts(["the cat the cat", "", "dog"])
    assert counts.lengths.tolist() == [1, 1, 1]
    key = fs.templates[0].key
    H = hasher.string
    expected = {}
    for gram in (["the"], ["cat"], ["the"], ["cat"], ["the", "cat"], ["cat", "the"], ["the", "cat"]):
        bucket, sign = hasher.buckets(chain_code(hasher, f"{key}@{len(gram)}", [H(t) for t in gram]))
        expected[int(bucket[0])] = expected.get(int(bucket[0]), 0.0) + float(sign[0])
    assert row(counts, 0) == {b: v for b, v in expected.items() if v}
    assert row(counts, 1) == {}
    assert len(row(counts, 2)) == 1


def test_char_ngrams_never_cross_words_and_match_reference_count():
    fs = feature_set({"name": "chars", "n": [2, 3]})
    counts = DocumentFeatureExtractor(fs, FeatureHasher(24)).counts(["ab cd", "ab"])
    reference = template("chars").function("ab cd", n=(2, 3))
    assert sum(abs(v) for v in row(counts, 0).values()) <= len(reference)
    assert len(reference) == 10  # per padded word " ab " / " cd ": three 2-grams and two 3-grams
    # "ab" alone holds the n-grams of the first word only
    assert set(row(counts, 1)) < set(row(counts, 0))


def test_python_templates_and_token_templates_on_whole_text():
    hasher = FeatureHasher(22, 1)
    fs = feature_set({"name": "fields"}, {"name": "field_pairs"})
    counts = DocumentFeatureExtractor(fs, hasher).counts([("join", "board")])
    expected = expected_counts(hasher, None, [("fields", "0=join"), ("fields", "1=board"), ("field_pairs", "0,1=join|board")])
    assert row(counts, 0) == expected
    names = feature_set({"name": "suffix", "lengths": [1, 2]})
    counts = DocumentFeatureExtractor(names, hasher).counts(["Anna"])
    key = names.templates[0].key
    assert row(counts, 0) == expected_counts(hasher, None, [(key, "a"), (key, "na")])


@pytest.mark.parametrize("values", ["binary", "count", "log", "tfidf"])
def test_values_and_l2(values):
    fs = feature_set({"name": "words"}, values=values, normalize="l2")
    extractor = DocumentFeatureExtractor(fs, FeatureHasher(22))
    docs = ["aa aa bb", "bb cc", "cc cc cc"]
    counts = extractor.counts(docs)
    extractor.fit_idf(counts)
    X = extractor.transform(counts)
    for i in range(3):
        assert sum(v * v for v in row(X, i).values()) == pytest.approx(1.0, abs=1e-6)
    raw = {b: v for b, v in row(counts, 0).items()}
    # "aa" occurs twice in doc 0 and in no other document; "bb" once, and in 2 of 3 documents
    idf = {1: math.log(4 / 2) + 1, 2: math.log(4 / 3) + 1}
    weight = {"binary": lambda c, df: 1.0, "count": lambda c, df: c, "log": lambda c, df: math.log1p(c),
              "tfidf": lambda c, df: c * idf[df]}[values]
    expected = [weight(2, 1), weight(1, 2)]
    norm = math.sqrt(sum(e * e for e in expected))
    got = sorted(abs(v) for v in row(X, 0).values())
    assert got == pytest.approx(sorted(e / norm for e in expected), rel=1e-5)
    assert sorted(abs(v) for v in raw.values()) == [1.0, 2.0]


def test_unseen_bucket_gets_the_largest_idf():
    fs = feature_set({"name": "words"}, values="tfidf")
    extractor = DocumentFeatureExtractor(fs, FeatureHasher(22))
    extractor.fit_idf(extractor.counts(["aa bb", "bb"]))
    X = extractor.extract(["zz"])
    # df = 0 among the n = 2 training documents (not the one document being transformed)
    assert [abs(v) for v in row(X, 0).values()] == pytest.approx([math.log(3) + 1])


def test_wrong_document_types_and_context_templates_are_rejected():
    with pytest.raises(StructlinError, match="expected a text document"):
        DocumentFeatureExtractor(feature_set({"name": "words"}), FeatureHasher(10)).counts([("a", "b")])
    with pytest.raises(StructlinError, match="expected a tuple of fields"):
        DocumentFeatureExtractor(feature_set({"name": "fields"}), FeatureHasher(10)).counts(["text"])
    with pytest.raises(StructlinError, match="context templates"):
        DocumentFeatureExtractor(feature_set({"name": "ngram"}), FeatureHasher(10))
    with pytest.raises(StructlinError, match="accepted: binary, count, log, tfidf"):
        feature_set({"name": "words"}, values="bm25")
