"""Document features: reference strings, vectorised n-gram hashing, weighting and normalisation."""

from __future__ import annotations

import math
import re
import unicodedata
from functools import partial

import numpy as np
import pytest

from structlin.doctemplates import (_MARK, _WORD, RUN_PATTERN, WORD_PATTERN, DocumentFeatureExtractor,
                                     _character_kinds, _pattern_matches, _word_runs)
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
    assert template("field_conjunctions").function(("Ran", "3.5", "in", "runs"), sizes=(1, 4), lowercase=True,
                                                   digits=True, stem=True) == ["0=ran", "1=0.0", "2=in", "3=run",
                                                                               "0,1,2,3=ran|0.0|in|run"]
    assert template("field_pairs").function(("A", "b"), lowercase=True) == ["0,1=a|b"]
    assert template("featureset").function({"last": "a", 3: 0.5, "flag": True}) == {"last=a": 1.0, "3": 0.5, "flag=True": 1.0}


def token_code(hasher, token):
    """S(token) by its documented definition, in Python integers: Horner's rule mod 2**64 from H("")."""
    z = hasher.string("")
    for ch in token:
        z = (z * 0xD6E8FEB86659FD93 + ord(ch)) % 2**64
    return int(hasher.mix(np.array([z], dtype=np.uint64), np.array([len(token)], dtype=np.uint64))[0])


def test_sequence_codes_follow_the_polynomial_definition():
    hasher = FeatureHasher(20, 7)
    tokens = ["", "a", "ab", "ba", "été", "𝔘nicode", "a" * 40, "b"]
    points = np.frombuffer("".join(tokens).encode("utf-32-le"), dtype=np.uint32)
    lengths = np.array([len(t) for t in tokens])
    codes = hasher.sequences(points, np.cumsum(lengths) - lengths, lengths)
    assert codes.tolist() == [token_code(hasher, t) for t in tokens]
    assert len(set(codes.tolist())) == len(tokens)
    assert FeatureHasher(20, 8).sequences(points, np.cumsum(lengths) - lengths, lengths)[1] != codes[1]  # keyed


def test_word_characters_are_those_of_regular_expressions_and_unicodes_marks():
    """The kinds of character the vectorised tokens read: Python's ``\\w``, and the marks, connector punctuation and
    zero-width (non-)joiners Unicode's word characters (UTS #18) add to it, by the Unicode database."""
    checked = list(range(0x10000)) + list(range(0x10000, 0x110000, 97)) + list(range(0xE0100, 0xE01F0))
    text = "".join(chr(c) for c in checked)
    word = np.array([re.fullmatch(r"\w", chr(c)) is not None for c in checked])
    mark = np.array([unicodedata.category(chr(c)) in ("Mn", "Mc", "Me", "Pc") and not w or c in (0x200C, 0x200D)
                     for c, w in zip(checked, word)])
    kinds = _character_kinds(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32))
    assert ((kinds == _WORD) == word).all() and ((kinds == _MARK) == mark).all() and mark.sum() > 1500


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("pattern", [WORD_PATTERN, RUN_PATTERN])
def test_word_runs_find_what_the_default_pattern_finds(seed, pattern):
    """The vectorised tokens are the regular expression's, ideographs and hiragana (at the ranges' edges, beside
    letters, katakana and Hangul, and an unassigned code point inside a range, which is no word character) and
    Unicode's other word characters (combining and enclosing marks, the zero-width (non-)joiners, connector
    punctuation) included."""
    rng = np.random.default_rng(seed)
    alphabet = list("ab_9 \t\n.,'-éÉß  ½İ𝔘😀"
                    "我好。，べカ\u3040\u309f\u30a0한𠀀\u4dbf\u4dc0\u4e00\u9fff\uf900\ufaff\ufb00\U000323af\U000323b0\U0002b73f"
                    "हि्ुঁ\u0301\u20dd\u200c\u200d‿\U000e0100\U0001d167")  # marks, joiners, connector punctuation
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 60))) for _ in range(50)] + ["", "x", "xy", "我"]
    texts = [t.lower() for t in texts]
    fast, regex = _word_runs(texts, unicode_words=pattern == WORD_PATTERN), _pattern_matches(texts, pattern)
    decoded = [[p[s : s + n].tobytes().decode("utf-32-le") for s, n in zip(r[1], r[2])] for p, r in ((fast[0], fast), (regex[0], regex))]
    assert decoded[0] == decoded[1]
    assert fast[3].tolist() == regex[3].tolist()


def test_ideographs_and_hiragana_are_tokens_and_their_bigrams_character_bigrams():
    """Chinese and Japanese are written without spaces: the default pattern makes each ideograph and hiragana a token
    (word 2-grams are then character bigrams), keeps the runs of other scripts (katakana, Hangul, Latin), and drops
    single letters as scikit-learn's pattern does."""
    words = template("words").function
    assert words("我喜欢这部电影，很好看! Great film a我b 食べました コンピュータ 한국어") == [
        "我", "喜", "欢", "这", "部", "电", "影", "很", "好", "看", "great", "film", "我", "食", "べ", "ま", "し", "た",
        "コンピュータ", "한국어"]
    assert words("我喜欢这部电影，很好看", pattern=RUN_PATTERN) == ["我喜欢这部电影", "很好看"]
    hasher = FeatureHasher(22, 5)
    fs = feature_set({"name": "words", "n": [1, 2]})
    counts = DocumentFeatureExtractor(fs, hasher).counts(["很好看 ok"])
    assert row(counts, 0) == unigram_and_bigram_counts(hasher, fs, ["很", "好", "看", "ok"])


@pytest.mark.parametrize("slice", [{"truncate": 3}, {"suffix": 2}])
def test_a_token_of_one_character_has_no_stem_or_ending(slice):
    """A stem or an ending of a character alone would be the character again, a copy of its unigram that a learner
    counting evidence (naive Bayes) counts twice: the slices skip tokens of one character."""
    assert template("words").function("很好 ok 看", **slice) == ["ok"]
    assert template("words").function("a bcd", pattern=r"\S+", **slice) == [{"truncate": "bcd", "suffix": "cd"}[k]
                                                                         for k in slice]
    hasher = FeatureHasher(22, 5)
    fs = feature_set({"name": "words", "n": [1, 2], **slice})
    counts = DocumentFeatureExtractor(fs, hasher).counts(["很好 ok 看"])
    assert row(counts, 0) == unigram_and_bigram_counts(hasher, fs, ["ok"])


def test_words_keep_their_marks_and_joiners():
    """Unicode's word characters (UTS #18) hold combining marks and the zero-width (non-)joiners, which Python's ``\\w``
    leaves out: a Hindi, Bengali or Tamil word keeps its vowel signs, a Persian one its non-joiner, a decomposed
    accent its letter, where scikit-learn's pattern breaks them apart or drops them."""
    words = template("words").function
    assert words("यह फिल्म बहुत अच्छी है") == ["यह", "फिल्म", "बहुत", "अच्छी", "है"]
    assert words("यह फिल्म", pattern=RUN_PATTERN) == ["यह"]
    assert words("হিন্দি ভাষা ভালো") == ["হিন্দি", "ভাষা", "ভালো"] and words("হিন্দি ভাষা", pattern=RUN_PATTERN) == []
    assert words("தமிழ் மொழி") == ["தமிழ்", "மொழி"]
    assert words("می\u200cخواهم cafe\u0301 snake_case‿x") == ["می\u200cخواهم", "café", "snake_case‿x"]


def test_words_are_read_in_their_canonical_composed_form():
    """The default pattern reads text in NFC: a letter and its combining accent (or Korean letters) are the letter (the
    syllable) written whole, the same token and the same features; a pattern of one's own reads the text as given."""
    words = template("words").function
    assert words("Vie\u0302\u0323t Nam \u1112\u1161\u11ab\u1100\u116e\u11a8") == ["việt", "nam", "한국"]
    assert words("cafe\u0301", pattern=RUN_PATTERN) == ["cafe"]
    assert words("cafe\u0301", pattern=r"\S+") == ["cafe\u0301"]
    extract = DocumentFeatureExtractor(feature_set({"name": "words", "n": [1, 2]}), FeatureHasher(22, 5)).counts
    counts = extract(["Việt Nam café", "Vie\u0302\u0323t Nam cafe\u0301"])
    assert row(counts, 0) == row(counts, 1) and len(row(counts, 0)) == 5


def test_a_feature_sets_token_pattern_is_every_word_templates_unless_one_gives_its_own():
    """``token_pattern`` is the pattern of the templates that give none, whose features keep their names (so a model
    file of format 2 reads its ideographs in runs with the features it learned); a template's own ``pattern`` wins."""
    templates = [{"name": "words", "n": [1, 2]}, {"name": "header_words"}, {"name": "words", "pattern": r"\w+"}]
    data = {"name": "t", "values": "count", "normalize": "none", "template": templates}
    plain, pinned = FeatureSet.from_dict(data), FeatureSet.from_dict({**data, "token_pattern": r"\S+"})
    assert [s.key for s in pinned.templates] == [s.key for s in plain.templates]
    assert [pinned.arguments(s).get("pattern") for s in pinned.templates] == [r"\S+", r"\S+", r"\w+"]
    assert [plain.arguments(s).get("pattern") for s in plain.templates] == [None, None, r"\w+"]
    assert FeatureSet.from_dict(pinned.to_dict()) == pinned and "token_pattern" not in plain.to_dict()
    hasher = FeatureHasher(22, 5)
    one = FeatureSet.from_dict({**data, "template": templates[:1], "token_pattern": r"\S+"})
    counts = DocumentFeatureExtractor(one, hasher).counts(["It's 很好看, ok"])
    assert row(counts, 0) == unigram_and_bigram_counts(hasher, one, ["it's", "很好看,", "ok"])


def test_word_ngrams_are_hashed_as_chains_of_token_codes():
    hasher = FeatureHasher(20, 3)
    fs = feature_set({"name": "words", "n": [1, 2]})
    counts = DocumentFeatureExtractor(fs, hasher).counts(["the cat the cat", "", "dog"])
    assert counts.lengths.tolist() == [1, 1, 1]
    key = fs.templates[0].key
    H = partial(token_code, hasher)
    expected = {}
    for gram in (["the"], ["cat"], ["the"], ["cat"], ["the", "cat"], ["cat", "the"], ["the", "cat"]):
        bucket, sign = hasher.buckets(chain_code(hasher, f"{key}@{len(gram)}", [H(t) for t in gram]))
        expected[int(bucket[0])] = expected.get(int(bucket[0]), 0.0) + float(sign[0])
    assert row(counts, 0) == {b: v for b, v in expected.items() if v}
    assert row(counts, 1) == {}
    assert len(row(counts, 2)) == 1


def test_stop_words_are_removed_before_n_grams_and_custom_patterns_tokenize():
    hasher = FeatureHasher(22, 0)
    stop = DocumentFeatureExtractor(feature_set({"name": "words", "n": [1, 2], "stopwords": ["ccc", "the"]}), hasher)
    a, b = stop.counts(["bb CCC dd the", "bb dd"]), stop.counts(["bb dd"])
    assert row(a, 0) == row(a, 1) == row(b, 0)
    fs = feature_set({"name": "words", "pattern": r"\S+", "lowercase": False})
    counts = DocumentFeatureExtractor(fs, hasher).counts(["Don't stop, a"])
    key = fs.templates[0].key
    expected = {}
    for token in template("words").function("Don't stop, a", pattern=r"\S+", lowercase=False):
        bucket, sign = hasher.buckets(chain_code(hasher, f"{key}@1", [token_code(hasher, token)]))
        expected[int(bucket[0])] = expected.get(int(bucket[0]), 0.0) + float(sign[0])
    assert row(counts, 0) == expected and len(expected) == 3


def unigram_and_bigram_counts(hasher: FeatureHasher, fs, tokens: list[str]) -> dict:
    """The signed bucket counts of the word 1- and 2-grams of ``tokens`` under ``fs``'s one template, by hand."""
    key, expected = fs.templates[0].key, {}
    for gram in [[t] for t in tokens] + [tokens[i : i + 2] for i in range(len(tokens) - 1)]:
        bucket, sign = hasher.buckets(chain_code(hasher, f"{key}@{len(gram)}", [token_code(hasher, t) for t in gram]))
        expected[int(bucket[0])] = expected.get(int(bucket[0]), 0.0) + float(sign[0])
    return {b: v for b, v in expected.items() if v}


@pytest.mark.parametrize("pattern", [WORD_PATTERN, r"\S+"])
def test_truncated_words_are_hashed_from_their_first_characters(pattern):
    hasher = FeatureHasher(22, 5)
    fs = feature_set({"name": "words", "n": [1, 2], "truncate": 4, "stopwords": ["drives"], "pattern": pattern})
    text = "Drive drivers DRIVES driven to it"
    tokens = template("words").function(text, n=(1,), truncate=4, stopwords=("drives",), pattern=pattern)
    assert tokens == ["driv", "driv", "driv", "to", "it"]  # stop words match whole tokens, then the cut
    assert row(DocumentFeatureExtractor(fs, hasher).counts([text]), 0) == unigram_and_bigram_counts(hasher, fs, tokens)
    for bad in (0, -2, 2.5, "5", True):
        with pytest.raises(StructlinError, match="truncate must be a positive number of characters"):
            DocumentFeatureExtractor(feature_set({"name": "words", "truncate": bad}), hasher).counts(["a text"])


@pytest.mark.parametrize("pattern", [WORD_PATTERN, r"\S+"])
def test_word_suffixes_are_hashed_from_their_last_characters(pattern):
    """``suffix = k`` keeps each token's last k characters (a word shorter than k stays whole)."""
    hasher = FeatureHasher(22, 5)
    fs = feature_set({"name": "words", "n": [1, 2], "suffix": 3, "pattern": pattern})
    text = "Maria Anna jo walking"
    tokens = template("words").function(text, n=(1,), suffix=3, pattern=pattern)
    assert tokens == ["ria", "nna", "jo", "ing"]
    assert row(DocumentFeatureExtractor(fs, hasher).counts([text]), 0) == unigram_and_bigram_counts(hasher, fs, tokens)
    for bad in (0, -1, 1.5):
        with pytest.raises(StructlinError, match="suffix must be a positive number of characters"):
            DocumentFeatureExtractor(feature_set({"name": "words", "suffix": bad}), hasher).counts(["a text"])


POST = "From: ann@cs.cmu.edu\nSubject: Re: Fast IDE\n  drives wanted\nLines: 3\n\nSubject: not a header\nbody text"


@pytest.mark.parametrize("text, headers, expected", [
    (POST, ("subject",), ["fast", "ide", "drives", "wanted"]),  # "re" dropped; the folded line belongs to it
    (POST, ("SUBJECT", "from"), ["ann", "cs", "cmu", "edu", "fast", "ide", "drives", "wanted"]),
    ("  stray!path\nSubject: gpu\n\nbody", ("subject",), ["gpu"]),  # a stray first line is skipped
    ("Dear all: my question\nis about drives\n\nSubject: x", ("subject",), []),  # prose: no header block
    ("no headers at all", ("subject",), []),
    ("", ("subject",), []),
])
def test_header_words_read_the_named_header_lines_only(text, headers, expected):
    hasher = FeatureHasher(22, 1)
    params = {"headers": list(headers), "stopwords": ["re"]}
    assert template("header_words").function(text, headers=headers, stopwords=("re",)) == expected
    fs = feature_set({"name": "header_words", **params})
    key = fs.templates[0].key
    want = {}
    for word in expected:
        bucket, sign = hasher.buckets(chain_code(hasher, f"{key}@1", [token_code(hasher, word)]))
        want[int(bucket[0])] = want.get(int(bucket[0]), 0.0) + float(sign[0])
    assert row(DocumentFeatureExtractor(fs, hasher).counts([text]), 0) == want
    # apart from the body's words: the same words under "words" hash elsewhere
    words = DocumentFeatureExtractor(feature_set({"name": "words"}), hasher).counts([" ".join(expected)])
    assert len(row(words, 0)) == len(want) and not set(row(words, 0)) & set(want)


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
    with pytest.raises(StructlinError, match=r"reads texts .*, but a document is a tuple of fields: choose the features"):
        DocumentFeatureExtractor(feature_set({"name": "words"}), FeatureHasher(10)).counts([("a", "b")])
    with pytest.raises(StructlinError, match=r"reads tuples of fields .*, but a document is a text: .*fields for"):
        DocumentFeatureExtractor(feature_set({"name": "fields"}), FeatureHasher(10)).counts(["text"])
    with pytest.raises(StructlinError, match=r"reads feature dicts .*, but a document is a text"):
        DocumentFeatureExtractor(feature_set({"name": "featureset"}), FeatureHasher(10)).counts(["text"])
    with pytest.raises(StructlinError, match="context templates"):
        DocumentFeatureExtractor(feature_set({"name": "ngram"}), FeatureHasher(10))
    with pytest.raises(StructlinError, match="accepted: binary, count, log, tfidf"):
        feature_set({"name": "words"}, values="bm25")
