"""Python API calls found by a hostile sweep (2026-11-28), each once a silently wrong model, a raw exception or a
broken scikit-learn convention: now exact, or a clear error naming what was expected."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pytest

from structlin import Classifier, Tagger
from structlin.errors import CorpusFormatError, ModelFormatError, OptionValueError, StructlinError, UnseenLabelWarning
from structlin.learners import make_learner

from test_model_hostile import rewritten

TEXTS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
SENTENCES = [[("the", "DET"), ("dog", "NOUN"), ("runs", "VERB")], [("a", "DET"), ("cat", "NOUN")]] * 3
#: PP-attachment tuples (verb, noun1, preposition, noun2), whose field templates read the fields by position.
PP = [("join", "board", "as", "director"), ("is", "chairman", "of", "group"), ("named", "director", "of", "firm"),
      ("bought", "shares", "in", "june")] * 3
PP_LABELS = ["V", "N", "N", "V"] * 3


@pytest.mark.parametrize("labels", [
    [2**63 + 1, 2**63 + 1, 0, 0, 2**63 + 1, 0],  # numpy made them floats: 9.223372036854776e+18
    ["a", "a", "a\x00", "a\x00", "a", "a\x00"],  # numpy's strings dropped the trailing NUL: two classes 'a'
])
def test_labels_numpy_would_change_are_kept_exact(labels):
    model = Classifier("text-unigram", epochs=5).fit(TEXTS, labels)
    assert sorted(model.classes_.tolist(), key=repr) == sorted(set(labels), key=repr)
    assert model.predict(TEXTS).tolist() == labels and model.score(TEXTS, labels) == 1.0


def test_numpy_numbers_are_accepted_as_options():
    """A grid from np.arange failed every fit of GridSearchCV: numpy's integers were refused."""
    from sklearn.model_selection import GridSearchCV

    model = Classifier("text-unigram", epochs=np.int64(2), seed=np.uint32(0)).fit(TEXTS * 4, [t[0] for t in TEXTS] * 4)
    assert model.learner.epochs == 2 and type(model.learner.epochs) is int
    search = GridSearchCV(Classifier("text-unigram"), {"epochs": np.arange(1, 3)}, cv=2)
    search.fit(TEXTS * 4, ["p", "p", "n", "n", "p", "n"] * 4)
    assert search.best_params_["epochs"] in (1, 2)
    assert make_learner("svm", C=np.float32(0.5)).C == 0.5
    for bad in (np.float64(2.5), np.bool_(True)):
        with pytest.raises(OptionValueError, match="epochs must be an integer"):
            make_learner("perceptron", epochs=bad)


@pytest.mark.parametrize("learner", ["averaged-perceptron", "maxent", "passive-aggressive"])
def test_a_stream_of_no_sentences_is_refused(learner, tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    with pytest.raises(StructlinError, match="training data holds no tokens"):
        Tagger("pos-basic", learner, stream=True).fit([])


@pytest.mark.parametrize("dev", [(TEXTS,), TEXTS])
def test_dev_of_another_shape_says_what_it_must_be(dev):
    with pytest.raises(TypeError, match=r"dev must be a \(documents, labels\) pair"):
        Classifier("text-unigram").fit(TEXTS, ["p", "p", "n", "n", "p", "n"], dev=dev)


@pytest.mark.parametrize("stream", [False, True])
def test_an_empty_dev_set_is_refused(stream, tmp_path, monkeypatch):
    """Dev data with no instance has no accuracy: every epoch scored 0.0 on it and the first was kept."""
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    with pytest.raises(CorpusFormatError, match=r"dev data: no sentences \(give dev data with some, or none\)"):
        Tagger("pos-basic", epochs=2, stream=stream).fit(SENTENCES, [])
    with pytest.raises(CorpusFormatError, match=r"dev data: no documents"):
        Classifier("text-unigram", epochs=2, stream=stream).fit(TEXTS, ["p", "p", "n", "n", "p", "n"], dev=([], []))

def test_held_out_that_leaves_nothing_to_train_on_is_refused():
    """A share held out never takes all of a label's documents (0.99 of three: two); when no label has enough for
    a share, one run of all of them is held out, refused if it would leave none."""
    clf = Classifier("text-unigram", held_out=0.99, epochs=3).fit(TEXTS, ["p", "p", "n", "n", "p", "n"])
    assert [c["epochs"] for c in clf.learner.candidates_] == [1, 2, 3]
    with pytest.raises(OptionValueError, match="holding out 0.99 of 3 training instances to choose on leaves none"):
        Classifier("text-unigram", held_out=0.99, epochs=3).fit(TEXTS[:3], ["p", "n", "o"])
    # one sentence cannot be shared between the two: it is trained on, without a choice on held-out data
    tagger = Tagger("pos-basic", epochs=2).fit(SENTENCES[:1])
    assert tagger.predict([["the", "dog", "runs"]]) == [["DET", "NOUN", "VERB"]]


def test_lone_surrogates_are_refused_where_they_are_given():
    """What os.fsdecode makes of an undecodable byte: accepted by fit, then a UnicodeEncodeError at save."""
    bad = "\udcff"
    with pytest.raises(CorpusFormatError, match="label '\\\\udcff' holds a lone surrogate"):
        Classifier("text-unigram").fit(TEXTS, ["p", bad, "n", "n", "p", bad])
    with pytest.raises(CorpusFormatError, match="sentence 2, token 1: .* holds a lone surrogate"):
        Tagger("pos-basic", epochs=1).fit([SENTENCES[0], [("a" + bad, "DET"), ("cat", "NOUN")]])
    model = Classifier("text-char", epochs=1).fit([bad * 3] + TEXTS[1:], ["p", "p", "n", "n", "p", "n"])
    assert len(model.predict([bad * 3])) == 1  # a text's characters are its code points, a surrogate among them


def test_scores_warn_of_labels_never_seen_and_refuse_no_tokens():
    classifier = Classifier("text-unigram", epochs=2).fit(TEXTS, ["p", "p", "n", "n", "p", "n"])
    with pytest.warns(UnseenLabelWarning, match="gold data: 6 of 6 documents have labels never seen"):
        assert classifier.score(TEXTS, [1, 1, 0, 0, 1, 0]) == 0.0
    tagger = Tagger("pos-basic", epochs=2).fit(SENTENCES)
    with pytest.warns(UnseenLabelWarning, match="gold data: 1 of 2 tokens have labels never seen .*'ZZZ'"):
        assert tagger.score([[("the", "DET"), ("dog", "ZZZ")]]) == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tagger.accuracy(SENTENCES) == 1.0
    with pytest.raises(CorpusFormatError, match="no tokens: accuracy is undefined"):
        tagger.score([])


@pytest.mark.parametrize("k", [-1, 0, 2.5, "3", True])
def test_top_features_takes_a_positive_count(k):
    tagger = Tagger("pos-basic", epochs=1).fit(SENTENCES)
    classifier = Classifier("text-unigram", epochs=1).fit(TEXTS, ["p", "p", "n", "n", "p", "n"])
    for model in (tagger, classifier):
        with pytest.raises(OptionValueError, match="k must be a positive integer"):
            model.top_features(k)


def test_arguments_of_the_wrong_type_say_what_was_expected(tmp_path):
    model = Classifier("text-unigram", epochs=1).fit(TEXTS, ["p", "p", "n", "n", "p", "n"])
    with pytest.raises(OptionValueError, match="features must be a feature set's name, a TOML file's path or a"):
        Classifier(features=3).fit(TEXTS, ["p", "p", "n", "n", "p", "n"])
    with open(tmp_path / "f.bin", "wb") as file:
        for call in (lambda: model.save(None), lambda: Classifier.load(None), lambda: model.save(file)):
            with pytest.raises(TypeError, match="a model file's path must be a str or os.PathLike"):
                call()
    with pytest.raises(TypeError, match="a learner is named by a string"):
        make_learner([])


def test_nltk_train_takes_pairs():
    with pytest.raises(CorpusFormatError, match=r"item 1: expected a \(featureset, label\) pair, got \{'w': 'a'\}"):
        Classifier.train([{"w": "a"}] * 3)
    with pytest.raises(TypeError, match="expected labeled_featuresets as a sequence of .* got the string 'ab'"):
        Classifier.train("ab")
    model = Classifier.train([({"w": "a"}, "x"), ({"w": "b"}, "y")] * 3, epochs=3)
    assert model.classify({"w": "a"}) == "x"


def test_tuples_of_another_number_of_fields_are_refused():
    """A model trained on 4-field tuples predicted on 3-field ones: its positional conjunctions meant something else."""
    model = Classifier(epochs=2, progress=False).fit(PP, PP_LABELS)
    short = [PP[0], PP[1], ("join", "board", "as")]
    with pytest.raises(CorpusFormatError, match=re.escape("input: document 3 is a tuple of 3 fields, but the model "
                                                          "was trained on tuples of 4 fields")):
        model.predict(short)
    for call in (model.decision_function, pickle.loads(pickle.dumps(model)).predict,
                 lambda X: model.score(X, ["V"] * len(X))):
        with pytest.raises(CorpusFormatError, match="document 3 is a tuple of 3 fields, but the model was trained on "
                                                    "tuples of 4 fields"):
            call(short)
    with pytest.raises(CorpusFormatError, match="input: document 1 is a tuple of 5 fields, but the model"):
        model.explain((*PP[0], "x"))
    with pytest.raises(CorpusFormatError, match="gold data: document 1 is a text, but the model was trained on tuples "
                                                "of 4 fields"):
        model.report(["join board as director"], ["V"])
    with pytest.raises(CorpusFormatError, match="dev data: document 2 is a tuple of 5 fields, but the model was "
                                                "trained on tuples of 4 fields"):
        Classifier(epochs=2).fit(PP, PP_LABELS, dev=([PP[0], (*PP[0], "x")], ["V", "V"]))
    assert model.predict(PP).tolist() == PP_LABELS


def test_training_tuples_of_mixed_numbers_of_fields_are_refused(monkeypatch, tmp_path):
    """Mixed arities in the training data were accepted silently; now the first that differs is named, in every way
    of training."""
    mixed = [*PP[:3], ("join", "board", "as"), *PP[4:]]
    message = "training data: document 4 is a tuple of 3 fields, but the first documents are tuples of 4 fields"
    with pytest.raises(CorpusFormatError, match=re.escape(message)):
        Classifier(epochs=2).fit(mixed, PP_LABELS)
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    monkeypatch.setattr(Classifier, "extraction_batch", 2)  # the first part records the form, the second differs
    with pytest.raises(CorpusFormatError, match=re.escape(message)):
        Classifier(epochs=2, stream=True).fit(mixed, PP_LABELS)
    online = Classifier(epochs=2).partial_fit(PP[:2], PP_LABELS[:2], classes=["N", "V"])
    with pytest.raises(CorpusFormatError, match="training data: document 2 is a tuple of 3 fields, but the model was "
                                                "trained on tuples of 4 fields"):
        online.partial_fit(mixed[2:4], PP_LABELS[2:4])


def test_feature_dicts_of_another_kind_are_refused():
    """A model of NLTK featuresets scored a numeric matrix on its bias only, and a numeric model named features."""
    featuresets = [{"last_letter": w[-1], "first": w[0]} for w in ("anna", "bob", "emma", "tom", "ella", "jim")]
    names = Classifier(epochs=2).fit(featuresets, ["f", "m", "f", "m", "f", "m"])
    with pytest.raises(CorpusFormatError, match=re.escape("input: X is a matrix of numbers (numeric feature dicts), "
                                                          "but the model was trained on feature dicts of named "
                                                          "features")):
        names.predict(np.ones((2, 3)))
    with pytest.raises(CorpusFormatError, match="input: document 2 is a numeric feature dict, but the model was "
                                                "trained on feature dicts of named features"):
        names.predict([featuresets[0], {0: 1.0}])
    assert len(names.predict([{}, {"last_letter": "a"}])) == 2  # an empty dict fits either kind of dict
    numbers = Classifier(epochs=2).fit(np.eye(6), ["f", "m", "f", "m", "f", "m"])
    with pytest.raises(CorpusFormatError, match="input: document 1 is a feature dict of named features, but the model "
                                                "was trained on numeric feature dicts"):
        numbers.predict(featuresets)
    with pytest.raises(CorpusFormatError, match="training data: documents mix featureset, numeric: document 2 is a "
                                                "numeric feature dict, but the first documents are feature dicts"):
        Classifier(epochs=2).fit([featuresets[0], {0: 1.0}], ["f", "m"])


def test_a_loaded_matrix_model_keeps_its_number_of_columns(tmp_path):
    """n_features_in_ was not saved: a loaded model took a matrix of any width."""
    X = np.random.default_rng(0).random((12, 4))
    model = Classifier(epochs=3, progress=False).fit(X, ["a", "b", "c"] * 4)
    model.save(tmp_path / "m.model")
    loaded = Classifier.load(tmp_path / "m.model")
    for twin in (loaded, pickle.loads(pickle.dumps(loaded))):
        assert twin.n_features_in_ == 4
        with pytest.raises(CorpusFormatError, match="input: X has 3 features, but Classifier is expecting 4 features"):
            twin.predict(X[:, :3])
        np.testing.assert_array_equal(twin.decision_function(X), model.decision_function(X))
    assert not hasattr(Classifier(epochs=1).fit(PP, PP_LABELS), "n_features_in_")


@pytest.mark.parametrize("inputs", [None, "fields", [4], {}, {"kind": "fields"}, {"kind": "fields", "fields": "4"},
                                    {"kind": "fields", "fields": 4.0}, {"kind": "fields", "fields": True},
                                    {"kind": "tuple", "fields": 4}, {"kind": ["fields"]},
                                    {"kind": "fields", "fields": 4, "columns": 4}, {"kind": "text", "fields": 4}])
def test_a_tampered_record_of_the_inputs_is_refused(tmp_path, inputs):
    path = tmp_path / "m.model"
    Classifier(epochs=1).fit(PP, PP_LABELS).save(path)
    path.write_bytes(rewritten(path.read_bytes(), lambda meta: meta.update(inputs=inputs)))
    with pytest.raises(ModelFormatError, match=re.escape(f"{path}: metadata 'inputs' must be a table of the training "
                                                         "documents' kind")):
        Classifier.load(path)


def test_a_file_written_before_the_inputs_were_recorded_loads_unchecked(tmp_path):
    path = tmp_path / "m.model"
    model = Classifier(epochs=2).fit(PP, PP_LABELS)
    model.save(path)
    path.write_bytes(rewritten(path.read_bytes(), lambda meta: {k: v for k, v in meta.items() if k != "inputs"}))
    loaded = Classifier.load(path)
    assert loaded.predict(PP).tolist() == model.predict(PP).tolist()
    assert len(loaded.predict([("join", "board", "as")])) == 1  # as before: nothing recorded to check against


def _sentences_as_iterators():
    """The SENTENCES, each a one-shot iterator of its tokens (as a generator expression gives them)."""
    return [iter(sentence) for sentence in SENTENCES]


@pytest.mark.parametrize("stream", [False, True])
def test_sentences_given_as_iterators_are_all_read(stream, tmp_path, monkeypatch):
    """A sentence given as a generator was spent by the first look at the data (the input columns): it trained as
    no sentence, silently ('holds no tokens', or a label missing from classes_)."""
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))

    def odd_one():
        yield "x", "Q"
        yield "y", "Q"

    tagger = Tagger(epochs=2, stream=stream).fit([*SENTENCES, odd_one()])
    assert list(tagger.classes_) == ["DET", "NOUN", "Q", "VERB"]
    assert Tagger(epochs=2, stream=stream).fit(_sentences_as_iterators()).known_words_ == {
        "the", "dog", "runs", "a", "cat"}
    with_dev = Tagger(epochs=2).fit(SENTENCES, dev=_sentences_as_iterators())
    assert with_dev.history_[-1]["dev_accuracy"] == with_dev.score(SENTENCES)
    online = Tagger(learner="perceptron", epochs=2)
    online.partial_fit(_sentences_as_iterators(), classes=["DET", "NOUN", "VERB"])
    assert online.known_words_ == {"the", "dog", "runs", "a", "cat"}


@pytest.mark.parametrize("X, y, kind", [
    (set(TEXTS), ["pos"] * 6, "set"),
    (TEXTS, {"a": 1, "b": 2}, "dict"),
    (TEXTS, frozenset(["pos", "neg"]), "frozenset"),
])
def test_documents_or_labels_in_an_unordered_container_are_refused(X, y, kind):
    """A set's order is arbitrary: its documents met the labels at random; a dict of labels trained on its keys."""
    with pytest.raises(TypeError, match=f"got a {kind}, whose order is not the instances' order: give a list"):
        Classifier(epochs=2).fit(X, y)


def test_a_dicts_views_keep_their_order():
    documents = dict(zip(TEXTS, ["pos", "pos", "neg", "neg", "pos", "neg"]))
    model = Classifier("text-unigram", epochs=5).fit(documents.keys(), documents.values())
    assert model.predict(list(documents)).tolist() == list(documents.values())


def test_an_infinite_value_is_refused_by_bernoulli_naive_bayes_too():
    """Its presence of a feature made inf a 1, where every other learner refuses it."""
    X = np.random.default_rng(0).random((12, 4))
    X[3, 2] = np.inf
    with pytest.raises(CorpusFormatError, match="document 4 has a NaN or infinite feature value"):
        Classifier(learner="bernoulli-nb").fit(X, [0, 1] * 6)


@pytest.mark.parametrize("call", [
    lambda tagger: tagger.fit(None), lambda tagger: tagger.predict(None), lambda tagger: tagger.score(None),
    lambda tagger: tagger.tag_sents([None]),
])
def test_tagger_arguments_of_no_sentence_say_what_was_expected(call):
    """They raised Python's own 'NoneType' object is not iterable."""
    tagger = Tagger(epochs=2).fit(SENTENCES)
    with pytest.raises(TypeError, match=r"^expected .*, got None$"):
        call(tagger)


def test_a_token_that_is_a_list_is_named():
    """An unhashable token raised Python's own unhashable type: 'list'."""
    tagger = Tagger(epochs=2).fit(SENTENCES)
    with pytest.raises(StructlinError, match=r"sentence 1, token 2: expected a token string, got \['dog'\]"):
        tagger.tag(["the", ["dog"]])


def test_a_sentence_of_no_tokens_among_training_sentences_is_located():
    with pytest.raises(CorpusFormatError, match="training data: sentence 7: expected \\(word, tag\\) pairs"):
        Tagger(epochs=2).fit([*SENTENCES, None])


def test_reader_arguments_of_another_type_say_what_was_expected(tmp_path):
    """A bytes path read as a stream of ints, a comma-separated string of columns split into characters, a
    column name None: Python's own errors, or a wrong message."""
    from structlin.readers import read_columns, read_file

    path = tmp_path / "c.txt"
    path.write_text("The DT B-NP\ncat NN I-NP\n\n", "utf-8")
    assert [s.tags for s in read_columns(path, columns="word,pos,chunk", tag="chunk")] == [["B-NP", "I-NP"]]
    assert [s.words for s in read_file(bytes(path), format="columns", columns=("word", "pos", "chunk"),
                                       column="chunk")] == [["The", "cat"]]
    for columns in (["word", None, "chunk"], 3):
        with pytest.raises(OptionValueError, match="columns: expected column names"):
            read_columns(path, columns=columns, tag="chunk")
    with pytest.raises(TypeError, match=r"expected a path or an open file, got 3 \(int\)"):
        list(read_file(3, format="word-tag"))


def test_a_feature_set_reading_the_tags_is_refused():
    """A template of column 'tag' (the column the tags come from): the model scored 100% on its own test file and
    learnt nothing ('tag:word@0=DET' decided every token)."""
    from structlin.templates import FeatureSet

    leak = FeatureSet.from_dict({"name": "leak", "template": [{"name": "word"}, {"name": "word", "column": "column1"}]})
    triples = [[(word, tag, tag) for word, tag in sentence] for sentence in SENTENCES]
    with pytest.raises(CorpusFormatError, match="reads column 'column1', which holds the tags the model learns"):
        Tagger(features=leak, epochs=1).fit(triples)
    pos = [[(word, "X" if word == "the" else tag, tag) for word, tag in sentence] for sentence in SENTENCES]
    assert Tagger(features=leak, epochs=1).fit(pos).score(pos) > 0  # a column that differs somewhere is input
