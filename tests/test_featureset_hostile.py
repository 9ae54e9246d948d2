"""Hostile feature-set definitions (issue 17): a TOML file or a dict whose template parameters are of another
type or out of range is refused when the feature set is built, by one error naming the file, the template,
the parameter and what it takes; never a traceback at extraction, never other features."""

from __future__ import annotations

import copy
import os
import re
import textwrap

import pytest

from structlin import templates
from structlin.doctemplates import DocumentFeatureExtractor
from structlin.errors import OptionValueError, StructlinError
from structlin.hashing import FeatureHasher
from structlin.templates import (FeatureSet, Param, TokenFeatureExtractor, available_feature_sets, feature_set_files,
                                 register_template)


def refused(tmp_path, text: str) -> str:
    """The error message of loading the TOML ``text``; it starts with the file's path and is one line."""
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n' + textwrap.dedent(text), "utf-8")
    with pytest.raises(OptionValueError) as caught:
        FeatureSet.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message[len(f"{path}: "):]


@pytest.mark.parametrize("entry, message", [
    ('name = "suffix"\nlengths = "abc"',
     "template 'suffix' (#1): lengths must be a non-empty list of distinct integers in 1..100, got 'abc'"),
    ('name = "prefix"\nlengths = [0]', "template 'prefix' (#1): lengths must be a non-empty list of distinct "
                                       "integers in 1..100, got [0]"),
    ('name = "prefix"\nlengths = [1, 1]', "got [1, 1]"),
    ('name = "prefix"\nlengths = []', "got []"),
    ('name = "words"\nn = [0]', "template 'words' (#1): n must be a non-empty list of distinct integers in 1..100"),
    ('name = "words"\nn = 2.5', "n must be a non-empty list of distinct integers in 1..100, got 2.5"),
    ('name = "words"\nn = [1, 2.0]', "got [1, 2.0]"),
    ('name = "words"\nn = [9223372036854775807]', "got [9223372036854775807]"),
    ('name = "chars"\nn = [-3]', "template 'chars' (#1): n must be"),
    ('name = "word"\noffsets = [[1, "x"]]',
     "template 'word' (#1): offsets must be a non-empty list of distinct integers in -2..2, got [[1, 'x']]"),
    ('name = "word"\noffsets = 1', "offsets must be a non-empty list of distinct integers in -2..2, got 1"),
    ('name = "words"\ntruncate = -1',
     "template 'words' (#1): truncate must be a positive number of characters, at most 100, got -1"),
    ('name = "words"\nsuffix = 1000', "suffix must be a positive number of characters, at most 100, got 1000"),
    ('name = "words"\ntruncate = true', "truncate must be a positive number of characters, at most 100, got True"),
    ('name = "words"\nlowercase = "yes"', "template 'words' (#1): lowercase must be true or false, got 'yes'"),
    ('name = "words"\nstopwords = [["a"]]', "stopwords must be a list of distinct strings, got [['a']]"),
    ('name = "words"\npattern = "(\\\\w+"', "pattern must be a regular expression of tokens of one character or "
                                            "more, without capturing groups, got '(\\\\w+' (not a regular "
                                            "expression: missing ), unterminated subpattern"),
    ('name = "words"\npattern = "(\\\\w)(\\\\w)"', "(it has 2 capturing group(s); write (?:...))"),
    ('name = "words"\npattern = "a{99999999999}"', "(not a regular expression: the repetition number is too large)"),
    ('name = "words"\npattern = "x*"', "(it matches the empty string, a token of no character)"),
    ('name = "words"\npattern = "\\\\b"', "(it matches the empty string, a token of no character)"),
    ('name = "header_words"\nheaders = []', "template 'header_words' (#1): headers must be a non-empty list of "
                                            "distinct strings, got []"),
    ('name = "header_words"\nheaders = "subject"', "headers must be a non-empty list of distinct strings"),
    ('name = "field_conjunctions"\nsizes = [0, 1]', "template 'field_conjunctions' (#1): sizes must be a non-empty "
                                                    "list of distinct integers in 1..100, got [0, 1]"),
    ('name = "fields"\nstem = 1', "template 'fields' (#1): stem must be true or false, got 1"),
    ('name = "ngram"\nof = "words"', "template 'ngram' (#1): of must be the name of a token template, got 'words' "
                                     "('words' is a document template)"),
    ('name = "ngram"\nof = 3', "of must be the name of a token template, got 3"),
    ('name = "ngram"\nspan = [-1, 3]', "span must be a non-empty list of distinct integers in -2..2, got [-1, 3]"),
    ('name = "ngram"\noffsets = [0, 1]', "template 'ngram' (#1): a context template takes no offsets"),
    ('name = "suffix"\ncolumn = 3', "column of 'suffix' (#1) must name an input column"),
])
def test_a_parameter_of_the_wrong_type_or_range_names_the_template_and_parameter(tmp_path, entry, message):
    assert message in refused(tmp_path, f"[[template]]\n{entry}\n")


@pytest.mark.parametrize("text, message", [
    ('values = "bogus"\n[[template]]\nname = "bias"', "values = 'bogus'; accepted: binary, count"),
    ('normalize = 2\n[[template]]\nname = "bias"', "normalize = '2'; accepted: none, l2"),
    ('template = [1]', "[[template]] #1 must be a table, got 1"),
    ('template = "bias"', "a feature set needs at least one [[template]] entry (found template = 'bias')"),
    ('template = 3', "a feature set needs at least one [[template]] entry (found template = 3)"),
    ('description = ["a"]\n[[template]]\nname = "bias"', "description must be a string, got ['a']"),
    ('[template]\nname = "bias"', "at least one [[template]] entry (found one [template] table: write [[template]]"),
    ('imports = "os"\n[[template]]\nname = "bias"', "imports must be a list of distinct module names, got 'os'"),
    ('token_pattern = "(\\\\w+"\n[[template]]\nname = "words"', "token_pattern must be a regular expression of "
     "tokens of one character or more, without capturing groups, got '(\\\\w+' (not a regular expression: missing ), "
     "unterminated subpattern"),
    ('token_pattern = 3\n[[template]]\nname = "words"', "token_pattern must be a regular expression of tokens of one "
     "character or more, without capturing groups, got 3"),
    ('token_pattern = "(a)"\n[[template]]\nname = "words"', "(it has 1 capturing group(s); write (?:...))"),
    ('[[template]]\nname = "bias"\n[[template]]\nname = "word"\noffsets = [0, 0]', "template 'word' (#2): offsets"),
    ('[[template]]\nname = "bias"\n[random_fourier]\ndimensions = "many"\ngamma = 1.0',
     "[random_fourier]: dimensions must be a positive integer"),
])
def test_feature_set_keys_of_the_wrong_type(tmp_path, text, message):
    assert message in refused(tmp_path, text)


@pytest.mark.parametrize("make, message", [
    (lambda path: path.write_text('name = "d"\nz = ' + "[" * 5000 + "]" * 5000 + '\n[[template]]\nname = "word"\n'),
     "invalid TOML: nested too deeply to read"),
    (lambda path: path.write_text('name = "b"\n[[template]]\nname = "word"\n', encoding="utf-8-sig"),
     "(the file begins with a byte order mark, which TOML does not allow: save it as UTF-8 without one)"),
    (lambda path: os.mkfifo(path), "cannot read feature set: not a regular file (a folder, a pipe or a device)"),
    (lambda path: path.symlink_to("/dev/zero"), "cannot read feature set: not a regular file"),
])
def test_a_feature_set_file_that_is_no_toml_text_is_one_line(tmp_path, make, message):
    """Nesting past Python's recursion raised RecursionError (an internal error); a pipe blocked and /dev/zero read
    until memory ran out; a byte order mark was 'Invalid statement (at line 1, column 1)' without a word why."""
    path = tmp_path / "f.toml"
    make(path)
    with pytest.raises(StructlinError) as caught:
        FeatureSet.load(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert feature_set_files(path) == []  # the output check reads it first, and must neither block nor fail


def test_a_name_that_is_no_string_is_refused():
    with pytest.raises(StructlinError, match=r"^feature set 5: name must be a string, got 5$"):
        FeatureSet.from_dict({"name": 5, "template": [{"name": "bias"}]})


def test_the_error_names_the_feature_set_built_from_a_dict():
    with pytest.raises(OptionValueError, match=r"^feature set 'mine': template 'suffix' \(#2\): lengths must be"):
        FeatureSet.from_dict({"name": "mine", "template": [{"name": "bias"}, {"name": "suffix", "lengths": [1, -1]}]})


#: Values of every type TOML and JSON give, to replace those of a feature set's template entries.
_VALUES = [None, True, False, 0, -1, 2.5, 10**20, float("nan"), float("inf"), "", "x", [], [1], ["x"], [[0]], {},
           {"a": 1}]
#: Integers outside the range of every integer of a template entry (offsets and spans -2..2, lengths 1..100).
_OUT_OF_RANGE = [-3, 101, 10**20]


def _entry_paths(value, path=()):
    """The paths of every value inside a feature set's template entries, the entries themselves included."""
    if len(path) >= 2:
        yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if path or key == "template":
            yield from _entry_paths(item, (*path, key))


@pytest.mark.parametrize("name", available_feature_sets())
def test_every_value_of_another_type_or_out_of_range_is_refused(name):
    """Every value inside every bundled set's template entries, replaced by each value of another Python type (an
    integer by a float or a boolean) or by an integer out of range: always an error, never a set that builds."""
    original = FeatureSet.load(name).to_dict()
    assert FeatureSet.from_dict(original, name) == FeatureSet.load(name)
    tried = 0
    for path in _entry_paths(original):
        old = original
        for key in path:
            old = old[key]
        for value in [v for v in _VALUES if type(v) is not type(old)] + (_OUT_OF_RANGE if type(old) is int else []):
            data = copy.deepcopy(original)
            parent = data
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
            with pytest.raises(OptionValueError, match=f"^{name}: (template|column of|\\[\\[template\\]\\]) "):
                FeatureSet.from_dict(data, name)
            tried += 1
    assert tried > 0


# --- parameters declared by their defaults, or by register_template -------------------------------------------


def test_a_user_template_takes_the_kind_of_its_defaults(registry):
    @register_template("test_user")
    def user(word, scale=1.0, which="ae", sizes=(1, 2), flag=False, count=3, anything=None):
        return word

    def build(**params):
        return FeatureSet.from_dict({"name": "u", "template": [{"name": "test_user", **params}]})

    for params in ({"scale": 2}, {"scale": 0.5}, {"which": ""}, {"sizes": [5]}, {"flag": True}, {"count": -7},
                   {"anything": [1, "x"]}, {"anything": {"a": 1}}):
        assert build(**params).templates[0].params == tuple((k, templates._freeze(v)) for k, v in params.items())
    for params, message in (({"scale": "2"}, "scale must be a finite number, got '2'"),
                            ({"scale": float("nan")}, "scale must be a finite number, got nan"),
                            ({"scale": True}, "scale must be a finite number, got True"),
                            ({"which": 1}, "which must be a string, got 1"),
                            ({"sizes": 1}, "sizes must be a non-empty list of distinct integers, got 1"),
                            ({"sizes": []}, "sizes must be a non-empty list of distinct integers, got []"),
                            ({"flag": 0}, "flag must be true or false, got 0"),
                            ({"count": 1.0}, "count must be an integer, got 1.0"),
                            ({"anything": None}, "anything must be a value, got None")):
        with pytest.raises(OptionValueError, match=r"^feature set 'u': template 'test_user' \(#1\): " + message.replace(
                "(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
            build(**params)


@pytest.mark.parametrize("body, message", [
    (lambda word: 1 / 0, "template 'test_broken' failed: ZeroDivisionError: division by zero"),
    (lambda word: 42, "template 'test_broken' failed: TypeError: 'int' object is not iterable"),
    (lambda word: {"a": "x"}, "template 'test_broken' failed: ValueError: could not convert string to float: 'x'"),
])
def test_what_a_user_template_raises_names_it(registry, body, message):
    """A user's template raising, or giving no kind of feature value, was an internal error naming no template."""
    from structlin import Classifier, Tagger

    register_template("test_broken", body)
    register_template("test_broken_document", body, document=True)
    token = FeatureSet.from_dict({"name": "u", "template": [{"name": "word"}, {"name": "test_broken"}]})
    with pytest.raises(StructlinError, match=re.escape(message)):
        Tagger(features=token, epochs=1).fit([[("the", "D"), ("cat", "N")]])
    document = FeatureSet.from_dict({"name": "u", "template": [{"name": "test_broken_document"}]})
    with pytest.raises(StructlinError, match=re.escape(message.replace("test_broken", "test_broken_document"))):
        Classifier(features=document, epochs=1).fit(["good", "bad"], ["pos", "neg"])


def test_a_user_template_declares_its_parameters(registry):
    register_template("test_declared", lambda word, k=2, of=None: word[:k],
                      params={"k": Param(int, low=1, high=9), "of": Param(str, many=True, empty=True)})
    FeatureSet.from_dict({"name": "d", "template": [{"name": "test_declared", "k": 9, "of": []}]})
    with pytest.raises(OptionValueError, match=r"k must be an integer in 1..9, got 10"):
        FeatureSet.from_dict({"name": "d", "template": [{"name": "test_declared", "k": 10}]})
    with pytest.raises(ValueError, match="template 'test_wrong': size are not parameters of its function"):
        register_template("test_wrong", lambda word, k=2: word, params={"size": Param(int)})


def test_a_parameter_without_a_default_is_required(registry):
    register_template("test_required", lambda word, table: table.get(word))
    with pytest.raises(OptionValueError, match=r"template 'test_required' \(#1\): missing parameter\(s\) table"):
        FeatureSet.from_dict({"name": "r", "template": [{"name": "test_required"}]})
    fs = FeatureSet.from_dict({"name": "r", "template": [{"name": "test_required", "table": {"dog": "animal"}}]})
    assert TokenFeatureExtractor(fs, FeatureHasher(10)).extract([["dog", "cat"]]).n_positions == 2


def test_the_edges_of_every_range_are_accepted_and_extract():
    tokens = FeatureSet.from_dict({"name": "edges", "template": [
        {"name": "suffix", "lengths": [1, 100], "offsets": [-2, 2]}, {"name": "ngram", "of": "bias", "span": [-2, 2]}]})
    assert TokenFeatureExtractor(tokens, FeatureHasher(10)).extract([["a", "b"]]).n_positions == 2
    documents = FeatureSet.from_dict({"name": "edges", "template": [
        {"name": "words", "n": [1, 100], "truncate": 100, "suffix": 1, "stopwords": [], "pattern": r"(?:\w)+"},
        {"name": "chars", "n": [100]}]})
    assert DocumentFeatureExtractor(documents, FeatureHasher(10)).counts(["a text of words"]).n_instances == 1


@pytest.mark.parametrize("key, value", [("values", "tfidf"), ("normalize", "l2"), ("token_pattern", "\\w+")])
def test_a_taggers_feature_set_refuses_what_only_documents_have(key, value):
    """values, normalize and token_pattern make a document's vector; a tagger trained with them ignored them."""
    from structlin import Tagger

    features = FeatureSet.from_dict({"name": "t", key: value, "template": [{"name": "word"}]})
    with pytest.raises(StructlinError, match=re.escape(f"sets {key} = {value!r}, which applies to documents")):
        Tagger(features=features, epochs=1).fit([[("the", "D"), ("cat", "N")]])


@pytest.mark.parametrize("entry", [{"offsets": [1]}, {"column": "label"}])
def test_a_documents_feature_set_refuses_offsets_and_columns(entry):
    """A token template reads a document as one word: offsets [1] gave 'word=great fun movie', a column the text."""
    from structlin import Classifier

    features = FeatureSet.from_dict({"name": "d", "template": [{"name": "word", **entry}]})
    with pytest.raises(StructlinError, match="template 'word' gives offsets or a column"):
        Classifier(features=features, epochs=1).fit(["good fun", "bad plot"], ["pos", "neg"])
