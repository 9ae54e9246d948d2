"""Tests of structlin.templates: built-in templates, feature-set files and errors, user templates, and the
extractor's hashed features checked against an independent per-token computation."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from collections import Counter

import numpy as np
import pytest

from structlin.errors import OptionValueError, StructlinError, UnknownNameError
from structlin.hashing import FeatureHasher
from structlin.templates import (
    AFTER,
    BEFORE,
    FeatureSet,
    TokenFeatureExtractor,
    available_feature_sets,
    register_template,
    template,
    template_names,
    word_shape,
)


def run(name, word, **params):
    return template(name).function(word, **params)


# --- built-in token templates -----------------------------------------------------------------------


def test_bias_word_lower():
    assert run("bias", "Dog") == ""
    assert run("word", "Dog") == "Dog"
    assert run("lower", "DöG") == "dög"


def test_prefix_and_suffix():
    assert run("prefix", "Running") == ["R", "Ru", "Run", "Runn"]
    assert run("suffix", "Running") == ["g", "ng", "ing", "ning"]
    assert run("prefix", "ab", lengths=[1, 2, 3]) == ["a", "ab"]  # lengths past the word are skipped
    assert run("suffix", "ab", lengths=[1, 3]) == ["b"]
    assert run("suffix", "walked", lengths=[2, 5]) == ["ed", "alked"]
    assert run("prefix", "x", lengths=[2]) == []


@pytest.mark.parametrize("word, shape, short", [
    ("Al-Zaman", "Xx-Xxxxx", "Xx-Xx"),
    ("1984", "dddd", "d"),
    ("U.S.", "X.X.", "X.X."),
    ("$3,000.50", "$d,ddd.dd", "$d,d.d"),
    ("iPhone", "xXxxxx", "xXx"),
    ("Café", "Xxxx", "Xx"),       # non-ASCII letters keep their case class
    ("ÉTÉ", "XXX", "X"),
    ("...", "...", "."),
    ("a", "x", "x"),
])
def test_shapes(word, shape, short):
    assert run("shape", word) == shape == word_shape(word)
    assert run("short_shape", word) == short


@pytest.mark.parametrize("word, title, upper, digit, hyphen", [
    ("Hello", "1", None, None, None),
    ("HELLO", None, "1", None, None),
    ("hello", None, None, None, None),
    ("x-ray", None, None, None, "1"),
    ("A4", "1", "1", "1", None),  # str.istitle: the one cased character is an upper-case initial
    ("Covid-19", "1", None, "1", "1"),
])
def test_flags(word, title, upper, digit, hyphen):
    assert run("is_title", word) == title
    assert run("is_upper", word) == upper
    assert run("has_digit", word) == digit
    assert run("has_hyphen", word) == hyphen


def test_ngram_values_with_boundary_markers():
    fn = template("ngram").function
    assert template("ngram").context
    words = ["The", "Dog", "barks"]
    assert fn(words) == ["<S>|the", "the|dog", "dog|barks"]  # default: lowercased words, span (-1, 0)
    assert fn(words, span=[0, 1]) == ["the|dog", "dog|barks", "barks|</S>"]
    assert fn(words, span=[-2, 0, 2]) == ["<S>|the|barks", "<S>|dog|</S>", "the|barks|</S>"]
    assert fn(words, of="shape", span=[-1, 0]) == ["<S>|Xxx", "Xxx|Xxx", "Xxx|xxxxx"]
    assert fn(["Hi"], span=[-1, 0, 1]) == ["<S>|hi|</S>"]
    assert fn([]) == []


# --- feature sets ------------------------------------------------------------------------------------


def test_bundled_feature_sets_listed():
    assert {"pos-basic", "pos-rich"} <= set(available_feature_sets())


@pytest.mark.parametrize("name", available_feature_sets())
def test_every_bundled_set_loads_and_round_trips(name):
    fs = FeatureSet.load(name)
    assert fs.name == name
    assert fs.templates
    assert FeatureSet.from_dict(fs.to_dict()) == fs
    keys = [s.key for s in fs.templates]
    assert len(set(keys)) == len(keys)
    if any(template(s.name).kind == "document" for s in fs.templates):  # a classifier's feature set
        from structlin.doctemplates import DocumentFeatureExtractor

        documents = {"ppattach": ("join", "board", "as", "director"), "fields": ("join", "board", "as", "director"),
                     "numeric": {1: 0.5, 7: 3.0}, "nltk": {"last_letter": "a", "length": 5},
                     "numeric-rff": {1: 0.5, 7: 3.0}}
        document = documents.get(name, "The cat sat.")
        matrix = DocumentFeatureExtractor(fs, FeatureHasher(18)).extract([document])
        assert matrix.n_positions == 1 and matrix.indptr[-1] > 0
        with pytest.raises(StructlinError, match="for classifiers, not taggers"):
            TokenFeatureExtractor(fs, FeatureHasher(18))
        return
    sentence = [("The", "DT"), ("cat", "NN"), ("sat", "VBD"), (".", ".")] if fs.fields == ("word", "pos") else \
        ["The", "cat", "sat", "."]
    matrix = TokenFeatureExtractor(fs, FeatureHasher(18)).extract([sentence])
    assert matrix.n_positions == 4 and np.all(np.diff(matrix.indptr) > 0)


def test_pos_basic_contents():
    fs = FeatureSet.load("pos-basic")
    by_name = {s.name: s for s in fs.templates}
    assert by_name["lower"].offsets == (-1, 0, 1)
    assert by_name["suffix"].params == (("lengths", (1, 2, 3)),)
    assert by_name["suffix"].key == "suffix(lengths=[1, 2, 3])"
    assert by_name["bias"].key == "bias"


def entries(*templates_):
    return {"name": "t", "template": list(templates_)}


def test_unknown_template_lists_accepted_names():
    with pytest.raises(UnknownNameError) as info:
        FeatureSet.from_dict(entries({"name": "no-such-template"}))
    message = str(info.value)
    assert "no-such-template" in message
    for name in ("bias", "suffix", "short_shape", "ngram"):
        assert name in message


def test_unknown_parameter():
    with pytest.raises(StructlinError, match=r"unknown parameter\(s\) length; accepted: lengths"):
        FeatureSet.from_dict(entries({"name": "suffix", "length": [1, 2]}))
    with pytest.raises(StructlinError, match=r"unknown parameter\(s\) lengths; accepted: none \(besides the entry's "
                                             r"name, offsets, column\)$"):
        FeatureSet.from_dict(entries({"name": "word", "lengths": [1]}))


@pytest.mark.parametrize("offsets", [[3], [-3], [0, 1, 2, 5], [1.0], ["1"], [True], [], [0, 0], 0, "0"])
def test_offsets_out_of_range(offsets):
    with pytest.raises(OptionValueError, match=r"feature set 't': template 'word' \(#1\): offsets must be a non-empty "
                                               r"list of distinct integers in -2..2, got "):
        FeatureSet.from_dict(entries({"name": "word", "offsets": offsets}))


@pytest.mark.parametrize("name", ["ngram", "words"])
def test_context_and_document_templates_take_no_offsets(name):
    with pytest.raises(OptionValueError, match=f"template '{name}' .* takes no offsets"):
        FeatureSet.from_dict(entries({"name": name, "offsets": [-1, 0]}))


@pytest.mark.parametrize("params, message", [
    ({"of": "lower", "span": [-3, 0]}, r"span must be a non-empty list of distinct integers in -2..2, got \[-3, 0\]"),
    ({"of": "lower", "span": []}, r"span must be .*, got \[\]"),
    ({"of": "ngram", "span": [0, 1]}, r"of must be the name of a token template, got 'ngram' \('ngram' is a context "
                                      r"template\)"),
    ({"of": "nothing"}, r"of must be the name of a token template, got 'nothing' \(token templates: bias, .*word\)"),
])
def test_invalid_ngrams(params, message):
    with pytest.raises(OptionValueError, match=r"template 'ngram' \(#1\): " + message):
        FeatureSet.from_dict(entries({"name": "ngram", **params}))


def test_ngram_of_multi_valued_template_rejected():
    fs = FeatureSet.from_dict(entries({"name": "ngram", "of": "is_title"}))
    extractor = TokenFeatureExtractor(fs, FeatureHasher(10))
    assert extractor.extract([["Hello"]]).n_positions == 1
    with pytest.raises(StructlinError, match="gave 0 values for 'hello' \\(expected one\\)"):
        extractor.extract([["hello"]])


def test_missing_name_no_entries_duplicates():
    with pytest.raises(StructlinError, match=r"#2 has no name"):
        FeatureSet.from_dict(entries({"name": "bias"}, {"offsets": [0]}))
    with pytest.raises(StructlinError, match="at least one"):
        FeatureSet.from_dict({"name": "empty"})
    with pytest.raises(StructlinError, match="at least one"):
        FeatureSet.from_dict({"name": "empty", "template": []})
    with pytest.raises(StructlinError, match="same parameters appears twice"):
        FeatureSet.from_dict(entries({"name": "suffix", "lengths": [1]}, {"name": "suffix", "lengths": [1]}))
    # The same template with other parameters is a different entry.
    fs = FeatureSet.from_dict(entries({"name": "suffix", "lengths": [1]}, {"name": "suffix", "lengths": [2]}))
    assert len(fs.templates) == 2


def test_load_errors(tmp_path):
    with pytest.raises(StructlinError, match="cannot read feature set"):
        FeatureSet.load(tmp_path / "missing.toml")
    with pytest.raises(UnknownNameError, match="unknown feature set 'no-such-set'; accepted: .*pos-basic"):
        FeatureSet.load("no-such-set")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n[[template]\n")
    with pytest.raises(StructlinError, match="bad.toml: invalid TOML"):
        FeatureSet.load(bad)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[[template]]\nname = "bias"\n[[template]]\nname = "nope"\n')
    with pytest.raises(UnknownNameError, match="'nope'"):
        FeatureSet.load(unknown)


# --- user templates ----------------------------------------------------------------------------------


def test_register_template_decorator_and_call(registry):
    @register_template("test_first_char")
    def first_char(word):
        return word[0]

    register_template("test_vowels", lambda word, which="aeiou": [c for c in word if c in which])
    assert template("test_first_char").function is first_char
    assert {"test_first_char", "test_vowels"} <= set(template_names())
    fs = FeatureSet.from_dict(entries({"name": "test_vowels", "which": "ei", "offsets": [0, 1]}))
    assert fs.templates[0].key == "test_vowels(which=ei)"


def test_user_template_module_from_toml(tmp_path, monkeypatch, registry):
    module = "structlin_test_user_templates"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent("""
        from structlin import register_template

        @register_template("test_length")
        def length(word, scale=10.0):
            return {"len": len(word) / scale}

        @register_template("test_initial")
        def initial(word):
            return word[:1].upper()
    """))
    path = tmp_path / "mine.toml"
    path.write_text(textwrap.dedent(f"""
        name = "mine"
        imports = ["{module}"]
        [[template]]
        name = "test_length"
        scale = 4.0
        offsets = [0, 1]
        [[template]]
        name = "test_initial"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    fs = FeatureSet.load(path)
    monkeypatch.delitem(sys.modules, module)
    assert fs.name == "mine" and fs.imports == (module,)
    assert [s.key for s in fs.templates] == ["test_length(scale=4.0)", "test_initial"]

    hasher = FeatureHasher(20, 3)
    matrix = TokenFeatureExtractor(fs, hasher).extract([["abc", "de"]])
    assert matrix.lengths.tolist() == [2]
    assert row_multiset(matrix, 0) == expected_multiset(hasher, [
        ("test_length(scale=4.0)@0", "len", 3 / 4), ("test_length(scale=4.0)@1", "len", 2 / 4),
        ("test_initial@0", "A", 1.0)])
    # Beyond the sentence every template gives the boundary marker with weight 1.
    assert row_multiset(matrix, 1) == expected_multiset(hasher, [
        ("test_length(scale=4.0)@0", "len", 2 / 4), ("test_length(scale=4.0)@1", AFTER, 1.0),
        ("test_initial@0", "D", 1.0)])


def test_context_template_returning_wrong_count(registry):
    register_template("test_bad_context", lambda words: ["x"], context=True)
    fs = FeatureSet.from_dict(entries({"name": "test_bad_context"}))
    extractor = TokenFeatureExtractor(fs, FeatureHasher(10))
    assert extractor.extract([["one"]]).n_positions == 1
    with pytest.raises(StructlinError, match="returned 1 values for a sentence of 2 tokens"):
        extractor.extract([["one", "two"]])


# --- extraction vs an independent computation ----------------------------------------------------------


def row_multiset(matrix, row):
    a, b = matrix.indptr[row], matrix.indptr[row + 1]
    return Counter(zip(matrix.indices[a:b].tolist(), np.round(matrix.values[a:b].astype(float), 6).tolist()))


def expected_multiset(hasher, features):
    out = Counter()
    for name, value, weight in features:
        bucket, sign = hasher(name, value)
        out[(bucket, round(float(np.float32(sign * weight)), 6))] += 1
    return out


MASK64 = (1 << 64) - 1


def H(text: str, seed: int) -> int:
    """The keyed 64-bit BLAKE2b code of a string (hashing module docstring)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little")


def M(z: int) -> int:
    """The splitmix64 finaliser, on Python ints."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def ngram_feature(key: str, values: list[str], hasher: FeatureHasher) -> tuple[int, float]:
    """(bucket, sign) of an n-gram: H(key) mixed with H(value) at each offset in turn."""
    z = H(key, hasher.seed)
    for value in values:
        z = M(z ^ ((H(value, hasher.seed) + 0x9E3779B97F4A7C15) & MASK64))
    return z % (1 << hasher.bits), (-1.0 if z >> 63 else 1.0)


def reference_row(fs: FeatureSet, hasher: FeatureHasher, words: list[str], i: int) -> Counter:
    """Multiset of (bucket, value) of position i by the definitions in the templates module docstring,
    one feature at a time."""
    features = []  # (name, value string, weight) hashed as hasher(name, value)
    out = Counter()
    for spec in fs.templates:
        tpl = template(spec.name)
        params = fs.arguments(spec)  # the parameters, and the set's clusters for the cluster template
        if spec.name == "ngram":
            of, span = template(params.get("of", "lower")).function, params.get("span", (-1, 0))
            values = [of(words[i + o]) if 0 <= i + o < len(words) else (BEFORE if i + o < 0 else AFTER) for o in span]
            bucket, sign = ngram_feature(spec.key, values, hasher)
            out[(bucket, sign)] += 1
            continue
        if tpl.context:
            results, names = [tpl.function(words, **params)[i]], [spec.key]
        else:
            results, names = [], []
            for o in spec.offsets:
                j = i + o
                names.append(f"{spec.key}@{o}")
                results.append(tpl.function(words[j], **params) if 0 <= j < len(words) else
                               (BEFORE if j < 0 else AFTER))
        for name, result in zip(names, results):
            if result is None:
                continue
            if isinstance(result, str):
                features.append((name, result, 1.0))
            elif isinstance(result, dict):
                features.extend((name, k, float(v)) for k, v in result.items())
            else:
                features.extend((name, v, 1.0) for v in result)
    return out + expected_multiset(hasher, features)


def test_tiny_feature_set_by_hand():
    fs = FeatureSet.from_dict(entries({"name": "word", "offsets": [-1, 0, 1]}, {"name": "bias"}))
    hasher = FeatureHasher(16, 11)
    matrix = TokenFeatureExtractor(fs, hasher).extract([["the", "cat", "sat"], ["Hi"]])
    assert matrix.lengths.tolist() == [3, 1]
    expected = [
        [("word@-1", "<S>"), ("word@0", "the"), ("word@1", "cat"), ("bias@0", "")],
        [("word@-1", "the"), ("word@0", "cat"), ("word@1", "sat"), ("bias@0", "")],
        [("word@-1", "cat"), ("word@0", "sat"), ("word@1", "</S>"), ("bias@0", "")],
        [("word@-1", "<S>"), ("word@0", "Hi"), ("word@1", "</S>"), ("bias@0", "")],
    ]
    for row, features in enumerate(expected):
        assert row_multiset(matrix, row) == expected_multiset(hasher, [(n, v, 1.0) for n, v in features])


SENTENCES = [
    ["The", "U.S.", "economy", "grew", "3.5", "%", "in", "Al-Zaman", "."],
    ["Running", "dogs", "bark"],
    ["x"],
    ["the", "The", "THE", "café", "naïve", "co-operate", "1984"],
    ["a", "b"],
]


def test_ngram_value_codes_are_exact():
    """n-gram value codes stay uint64 (a float64 round trip would change buckets and signs)."""
    fs = FeatureSet.from_dict(entries({"name": "ngram", "of": "lower", "span": [-1, 0]}))
    hasher = FeatureHasher(22, 5)
    extractor = TokenFeatureExtractor(fs, hasher)
    extractor.extract([["a", "b", "The"]])
    codes = extractor._columns[0][1]._value_codes["lower"]  # the word column's
    assert codes.dtype == np.uint64
    assert codes.tolist() == [H(w, 5) for w in (BEFORE, AFTER, "a", "b", "the")]


def test_ngram_features_are_consistent():
    # Whatever the codes, an n-gram's feature depends only on the words it spans (not on the batch).
    fs = FeatureSet.from_dict(entries({"name": "ngram", "span": [-1, 0]}))
    extractor = TokenFeatureExtractor(fs, FeatureHasher(22, 5))
    m = extractor.extract([["a", "b"], ["x", "a", "b"], ["A", "B"]])
    assert m.indptr.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    i = m.indices.tolist()
    assert i[1] == i[4] == i[6]  # a|b (lowercased)
    assert i[0] == i[5]  # <S>|a
    assert len({i[0], i[1], i[2], i[3]}) == 4


@pytest.mark.parametrize("name", ["pos-basic", "pos-rich"])
def test_bundled_sets_match_reference(name):
    fs = FeatureSet.load(name)
    hasher = FeatureHasher(22, 5)
    matrix = TokenFeatureExtractor(fs, hasher).extract(SENTENCES)
    assert matrix.lengths.tolist() == [len(s) for s in SENTENCES]
    row = 0
    for words in SENTENCES:
        for i in range(len(words)):
            assert row_multiset(matrix, row) == reference_row(fs, hasher, words, i), (words, i)
            row += 1


def rows_of(matrix, instance):
    a, b = matrix.offsets[instance], matrix.offsets[instance + 1]
    lo, hi = matrix.indptr[a], matrix.indptr[b]
    return matrix.indptr[a : b + 1] - lo, matrix.indices[lo:hi], matrix.values[lo:hi]


def assert_same_rows(first, second):
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)


def test_extraction_deterministic_and_batch_independent():
    fs = FeatureSet.load("pos-rich")
    hasher = FeatureHasher(20, 0)
    target = SENTENCES[0]
    alone = TokenFeatureExtractor(fs, hasher).extract([target])
    shared = TokenFeatureExtractor(fs, hasher)
    shared.extract([SENTENCES[3], SENTENCES[1]])  # other word types numbered first
    together = shared.extract([SENTENCES[1], target, SENTENCES[2]])
    again = shared.extract([target])
    other_hasher_same_settings = TokenFeatureExtractor(fs, FeatureHasher(20, 0)).extract([SENTENCES[4], target])
    assert_same_rows(rows_of(alone, 0), rows_of(together, 1))
    assert_same_rows(rows_of(alone, 0), rows_of(again, 0))
    assert_same_rows(rows_of(alone, 0), rows_of(other_hasher_same_settings, 1))
    differently_seeded = TokenFeatureExtractor(fs, FeatureHasher(20, 1)).extract([target])
    assert not np.array_equal(alone.indices, differently_seeded.indices)


def test_empty_sentences_give_zero_rows():
    extractor = TokenFeatureExtractor(FeatureSet.load("pos-rich"), FeatureHasher(12))
    nothing = extractor.extract([])
    assert nothing.n_instances == 0 and nothing.n_positions == 0 and len(nothing.indices) == 0
    empty = extractor.extract([[]])
    assert empty.lengths.tolist() == [0] and empty.n_positions == 0 and len(empty.indices) == 0
    mixed = extractor.extract([[], ["a", "b"], [], ["c"]])
    assert mixed.lengths.tolist() == [0, 2, 0, 1]
    assert_same_rows(rows_of(mixed, 1), rows_of(extractor.extract([["a", "b"]]), 0))
    assert_same_rows(rows_of(mixed, 3), rows_of(extractor.extract([["c"]]), 0))


def test_user_context_templates_match_reference(registry):
    register_template("test_index", lambda words: [str(i) for i in range(len(words))], context=True)
    register_template("test_mixed", lambda words, scale=1.0: [
        None if i == 0 else [w.lower(), words[i - 1]] if i % 2 else {"len": len(w) * scale}
        for i, w in enumerate(words)], context=True)
    fs = FeatureSet.from_dict(entries({"name": "test_index"}, {"name": "test_mixed", "scale": 0.5},
                                      {"name": "suffix", "lengths": [2], "offsets": [-2, 2]}))
    hasher = FeatureHasher(22, 9)
    sentences = [["One", "two", "Three", "four"], ["x"], []]
    matrix = TokenFeatureExtractor(fs, hasher).extract(sentences)
    row = 0
    for words in sentences:
        for i in range(len(words)):
            assert row_multiset(matrix, row) == reference_row(fs, hasher, words, i)
            row += 1
    assert row == matrix.n_positions == 5
    # Spot check by hand: position 1 of sentence 1 has test_mixed values "two" and "One".
    assert expected_multiset(hasher, [("test_mixed(scale=0.5)", "two", 1.0), ("test_mixed(scale=0.5)", "One", 1.0)]) \
        <= row_multiset(matrix, 1)


@pytest.mark.parametrize("name", ["pos-basic", "pos-rich", "user-context", "two-columns"])
def test_compact_factored_features_are_the_extracted_matrix(name, registry):
    """The factored features that tagging multiplies (each type table cut to the types the sentences use) write out
    the very matrix :meth:`extract` gives, and their product is its product: after other words were seen, with
    context templates, and with a second input column."""
    register_template("test_position", lambda words: [str(i % 3) for i in range(len(words))], context=True)
    fs = {"pos-basic": FeatureSet.load("pos-basic"), "pos-rich": FeatureSet.load("pos-rich"),
          "user-context": FeatureSet.from_dict(entries({"name": "test_position"}, {"name": "ngram", "span": [0, 1]},
                                                       {"name": "suffix", "lengths": [2], "offsets": [-2, 2]})),
          "two-columns": FeatureSet.load("pos-rich").with_input_columns(["pos"])}[name]
    sentences = SENTENCES if fs.fields == ("word",) else [[(w, w[:1].upper()) for w in s] for s in SENTENCES]
    extractor = TokenFeatureExtractor(fs, FeatureHasher(18, 3))
    extractor.extract(sentences[3:] + [[("zzz", "Z")] if fs.fields != ("word",) else ["zzz"]])  # types seen before
    expected = TokenFeatureExtractor(fs, FeatureHasher(18, 3)).extract(sentences[:3] + [[]])
    factored = extractor.factored(sentences[:3] + [[]], compact=True)
    whole = extractor.factored(sentences[:3] + [[]])
    assert sum(t.n_positions for t in factored.tables) < sum(t.n_positions for t in whole.tables)  # types cut
    written = factored.matrix()
    for field in ("indptr", "indices", "values", "lengths"):
        np.testing.assert_array_equal(getattr(written, field), getattr(expected, field))
    w = np.random.default_rng(0).normal(size=(2**18, 3))
    np.testing.assert_allclose(factored.dot(w), expected.dot(w), rtol=1e-12, atol=1e-12)
