"""Classifier: the joint map with the Multiclass decoder, NLTK and scikit-learn interfaces, save/load."""

from __future__ import annotations

import inspect

import nltk
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st
from nltk.classify.api import ClassifierI

from structlin import Classifier
from structlin.catalog import load_documents
from structlin.errors import CorpusFormatError, ModelFormatError, NotFittedError, OptionValueError, StructlinError
from structlin.learners import make_learner
from structlin.learners.training import latest_within_noise

DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg"]


def test_fits_and_predicts_through_nltk_and_sklearn_verbs():
    clf = Classifier("text-unigram", epochs=5, progress=False).fit(DOCS, LABELS)
    assert isinstance(clf, ClassifierI)
    assert isinstance(clf.classes_, np.ndarray) and clf.classes_.tolist() == ["neg", "pos"]
    assert clf.labels() == ["neg", "pos"]
    assert isinstance(clf.predict(DOCS), np.ndarray) and clf.predict(DOCS).tolist() == LABELS
    assert clf.classify(DOCS[0]) == "pos" and clf.classify_many(DOCS[2:4]) == ["neg", "neg"]
    scores = clf.decision_function(DOCS)
    assert scores.shape == (6,)  # two classes: the score of classes_[1] minus that of classes_[0]
    assert [clf.classes_[int(s > 0)] for s in scores] == LABELS
    assert nltk.classify.accuracy(clf, list(zip(DOCS, LABELS))) == 1.0
    assert clf.random_state == 0


def test_one_weight_block_per_label_multiclass():
    docs = ["a a", "b b", "c c", "a", "b", "c"]
    labels = ["x", "y", "z", "x", "y", "z"]
    clf = Classifier("text-unigram", epochs=3, progress=False).fit([d.replace("a", "aa").replace("b", "bb").replace("c", "cc") for d in docs], labels)
    assert clf.joint.n_labels == 3 and not clf.joint.transitions
    assert clf.predict(["aa", "bb", "cc"]).tolist() == ["x", "y", "z"]
    scores = clf.decision_function(["aa", "bb", "cc"])
    assert scores.shape == (3, 3) and scores.argmax(axis=1).tolist() == [0, 1, 2]  # a column per class


def test_empty_document_and_unknown_words_get_a_label():
    clf = Classifier("text-unigram", epochs=2, progress=False).fit(DOCS, LABELS)
    assert clf.predict(["", "zzz qqq"])[0] in clf.classes_


def test_bad_training_input():
    with pytest.raises(StructlinError, match="6 documents but 5 labels"):
        Classifier("text-unigram").fit(DOCS, LABELS[:5])
    with pytest.raises(StructlinError, match="document 2 has an empty label"):
        Classifier("text-unigram").fit(DOCS[:2], ["pos", ""])
    with pytest.raises(StructlinError, match="1 distinct label"):
        Classifier("text-unigram").fit(DOCS[:2], ["pos", "pos"])
    with pytest.raises(StructlinError, match="not trained yet"):
        Classifier("text-unigram").predict(["x"])


def test_save_load_round_trip(tmp_path):
    clf = Classifier("text-ngrams", epochs=3, progress=False).fit(DOCS, LABELS)
    clf.save(tmp_path / "m.model")
    loaded = Classifier.load(tmp_path / "m.model")
    test = ["good fun film", "bad plot", "new words only"]
    np.testing.assert_array_equal(loaded.decision_function(test), clf.decision_function(test))
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    with pytest.raises(ModelFormatError, match="expected a 'tagger' model"):
        __import__("structlin").Tagger.load(tmp_path / "m.model")


def test_dev_early_stopping_keeps_best_epoch():
    clf = Classifier("text-unigram", epochs=4, progress=False).fit(DOCS, LABELS, dev=(DOCS[:2], LABELS[:2]))
    assert [h["dev_accuracy"] for h in clf.history_] and clf.learner.best_epoch_ >= 1


@pytest.fixture(scope="module")
def names(nltk_data_dir):
    from nltk.corpus import names as corpus
    docs = [(n, "male") for n in corpus.words("male.txt")] + [(n, "female") for n in corpus.words("female.txt")]
    order = np.random.default_rng(0).permutation(len(docs))
    return [docs[k] for k in order]


def test_names_accuracy_floor(names):
    train, test = names[:6000], names[6000:]
    clf = Classifier("names", epochs=10, progress=False).fit([n for n, _ in train], [g for _, g in train])
    accuracy = nltk.classify.accuracy(clf, test)
    assert accuracy >= 0.78, accuracy


def test_ppattach_tuples(nltk_data_dir):
    from nltk.corpus import ppattach
    train = [((a.verb, a.noun1, a.prep, a.noun2), a.attachment) for a in ppattach.attachments("training")]
    test = [((a.verb, a.noun1, a.prep, a.noun2), a.attachment) for a in ppattach.attachments("test")]
    learner = make_learner("averaged-perceptron", epochs=5, margin=0.25, progress=False)
    clf = Classifier("ppattach", learner).fit([d for d, _ in train], [y for _, y in train])
    assert nltk.classify.accuracy(clf, test) >= 0.835  # 84.1% measured (the CLI's dev early stopping: 84.4%)


@pytest.mark.parametrize("granularity, floor", [("coarse", 0.895), ("fine", 0.81)])
def test_question_classification_floors(nltk_data_dir, granularity, floor):
    train, test = (load_documents("qc", split, granularity=granularity) for split in ("train", "test"))
    learner = make_learner("averaged-perceptron", epochs=7, margin=1, progress=False)
    clf = Classifier("text-words", learner).fit([d.text for d in train], [d.label for d in train])
    assert clf.report([d.text for d in test], [d.label for d in test]).accuracy >= floor  # 90.8% / 82.0% measured


def test_20_newsgroups_floor(news_archive):
    train, test = (load_documents("20news-bydate", split) for split in ("train", "test"))
    learner = make_learner("averaged-perceptron", epochs=10, margin=4, progress=False)
    clf = Classifier("text-ngrams", learner).fit([d.text for d in train], [d.label for d in train])
    report = clf.report([d.text for d in test], [d.label for d in test])
    assert report.accuracy >= 0.86 and report.macro_f1 >= 0.85  # 86.6% / 86.0% measured


def test_probabilities_from_maxent_and_none_from_the_perceptron():
    clf = Classifier("text-unigram", "maxent", epochs=50, progress=False).fit(DOCS, LABELS)
    margin = clf.decision_function(["good plot", "awful fun"])  # two classes: the score of pos minus that of neg
    expected = np.column_stack([1 / (1 + np.exp(margin)), 1 / (1 + np.exp(-margin))])  # the softmax of two scores
    np.testing.assert_allclose(clf.predict_proba(["good plot", "awful fun"]), expected, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_log_proba(["good plot", "awful fun"]), np.log(expected), rtol=1e-12)
    dist = clf.prob_classify("good great")
    assert sorted(dist.samples()) == clf.classes_.tolist() and dist.max() == clf.classify("good great") == "pos"
    assert sum(dist.prob(y) for y in dist.samples()) == pytest.approx(1.0)
    assert [d.max() for d in clf.prob_classify_many(DOCS)] == LABELS
    gold = ["pos", "neg", "other"]  # "other" was never seen: probability 0, clipped at 1e-15
    p = clf.predict_proba(["good plot", "awful fun", "fun"])
    report = clf.report(["good plot", "awful fun", "fun"], gold)
    assert report.log_loss == pytest.approx(-(np.log(p[0, 1]) + np.log(p[1, 0]) + np.log(1e-15)) / 3, rel=1e-12)
    assert "log_loss" in report.to_dict() and "Log-loss" in report.format()
    perceptron = Classifier("text-unigram", epochs=2, progress=False).fit(DOCS, LABELS)
    with pytest.raises(StructlinError, match="no probabilities"):
        perceptron.prob_classify("good")
    assert not hasattr(perceptron, "predict_proba") and not hasattr(perceptron, "predict_log_proba")
    assert perceptron.report(DOCS, LABELS).log_loss is None and "log_loss" not in perceptron.report(DOCS, LABELS).to_dict()


def test_batched_prediction_gives_the_scores_of_one_batch():
    """decision_function featurises and scores ``prediction_batch`` documents at a time; the batches join
    into exactly the matrix of one pass (tf-idf and L2 are per document), for any batch size."""
    clf = Classifier("text-ngrams", epochs=3, progress=False).fit(DOCS, LABELS)
    test = DOCS + ["", "great plot", "Subject: bad\n\nfun", "unseen words only"]
    whole = clf.decision_function(test)
    for size in (1, 3, 4):
        clf.prediction_batch = size
        np.testing.assert_array_equal(clf.decision_function(test), whole)
        assert clf.predict(test).tolist() == [clf.classes_[int(s > 0)] for s in whole]
    assert clf.decision_function([]).shape == (0,) and clf.predict([]).tolist() == []


def test_default_features_follow_the_kind_of_document(tmp_path):
    """features=None: text-ngrams for texts, fields for tuples of fields, nltk for NLTK featuresets (string
    names), numeric for numbered feature dicts (SVMlight, rows of a matrix); a mix of kinds is refused in one
    line; the choice is saved with the model."""
    texts = Classifier(epochs=2).fit(DOCS, LABELS)
    assert texts.feature_set.name == "text-ngrams"
    fields = [tuple(d.split()[:2]) for d in DOCS]
    assert Classifier(epochs=2).fit(fields, LABELS).feature_set.name == "fields"
    dicts = [{w: 1 for w in d.split()} for d in DOCS]
    assert Classifier(epochs=2).fit(dicts, LABELS).feature_set.name == "nltk"
    numbered = [{k: 1.0 for k in range(len(d.split()))} for d in DOCS]
    assert Classifier(epochs=2).fit(numbered, LABELS).feature_set.name == "numeric"
    assert Classifier(epochs=2).fit([{}, *dicts[1:]], LABELS).feature_set.name == "nltk"  # {} fits either kind
    with pytest.raises(StructlinError, match="training data: documents mix fields, text"):
        Classifier().fit([*DOCS[:3], *fields[3:]], LABELS)
    with pytest.raises(StructlinError, match="must be texts, tuples of fields or feature dicts, got int"):
        Classifier().fit([1, 2], ["a", "b"])
    texts.save(tmp_path / "m.model")
    assert Classifier.load(tmp_path / "m.model").feature_set == texts.feature_set


def test_held_out_chooses_the_epochs_then_trains_on_everything(nltk_data_dir):
    """held_out=0.1 without dev: the epochs are chosen on a tenth of the training documents — of each label's, in
    corpus order, one run of a tenth, the third from the end for seed 2 — training on the rest (the latest epoch
    within a standard error of the best held-out score), then the model is trained on all of them for that many:
    the same weights as doing both by hand (features without idf, which the whole training set estimates)."""
    documents = load_documents("qc", "train")[:1500]
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    auto = Classifier("text-presence", make_learner("averaged-perceptron", epochs=6, seed=2), held_out=0.1)
    auto.fit(texts, labels)
    held = []
    for label in sorted(set(labels)):
        mine = [k for k, other in enumerate(labels) if other == label]
        share = int(0.1 * len(mine) + 0.5)  # 0.5 rounds up
        end = len(mine) - 2 % (len(mine) // share) * share if share else 0
        held += mine[end - share : end]
    rest = sorted(set(range(len(texts))) - set(held))
    assert 140 <= len(held) <= 160 and len(set(labels[k] for k in held)) == 6
    probe = Classifier("text-presence", make_learner("averaged-perceptron", epochs=6, seed=2))
    probe.fit([texts[k] for k in rest], [labels[k] for k in rest], ([texts[k] for k in held], [labels[k] for k in held]))
    scores = [record["dev_accuracy"] for record in probe.history_]
    noise = np.sqrt(max(scores) * (1 - max(scores)) / len(held))  # the latest epoch within a standard error of the best
    chosen = max(step for step, score in enumerate(scores, 1) if score >= max(scores) - noise)
    assert auto.learner.chosen_["epochs"] == chosen
    assert [c["epochs"] for c in auto.learner.candidates_] == list(range(1, 7))
    by_hand = Classifier("text-presence", make_learner("averaged-perceptron", epochs=chosen, seed=2))
    by_hand.fit(texts, labels)
    np.testing.assert_array_equal(auto.weights_, by_hand.weights_)
    assert auto.learner.epochs == 6  # the option itself is left as given
    with pytest.raises(StructlinError, match="held_out must be a fraction between 0 and 1, got 1.5"):
        Classifier(held_out=1.5).fit(texts, labels)  # checked by fit: the constructor only stores parameters


# --- the estimator protocol without scikit-learn (tests/test_sklearn.py runs scikit-learn's own tools) ---------


def test_the_held_out_run_keeps_the_latest_epoch_within_its_noise():
    """Scores 0.80, 0.90, 0.88, 0.85: on 100 held-out positions the best's standard error is √(0.9·0.1/100) = 0.03,
    so epochs 2 and 3 (≥ 0.87) cannot be told apart and the later is kept; on 10,000 positions (0.003) only 2."""
    history = [{"step": step, "dev_accuracy": score} for step, score in enumerate([0.80, 0.90, 0.88, 0.85], 1)]
    assert latest_within_noise(history, 100) == 3
    assert latest_within_noise(history, 10_000) == 2
    assert latest_within_noise(history, 4) == 4  # 0.15: the full run
    skipped = [{"step": 1, "dev_accuracy": None}, {"step": 2, "dev_accuracy": 0.5}, {"step": 3, "dev_accuracy": None}]
    assert latest_within_noise(skipped, 10) == 2  # only scored epochs are candidates
    assert latest_within_noise([{"step": 1, "dev_accuracy": None}], 10) is None


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=12), st.integers(0, 10_000))
def test_the_epoch_kept_is_within_noise_and_none_later_is(scores, n_positions):
    history = [{"step": step, "dev_accuracy": score} for step, score in enumerate(scores, 1)]
    kept = latest_within_noise(history, n_positions)
    scored = {step: score for step, score in enumerate(scores, 1) if score is not None}
    if not scored:
        assert kept is None
        return
    best = max(scored.values())
    noise = (best * (1 - best) / max(n_positions, 1)) ** 0.5
    assert scored[kept] >= best - noise and kept >= max(step for step, score in scored.items() if score == best)
    assert all(score < best - noise for step, score in scored.items() if step > kept)


def test_learner_options_are_parameters_of_the_classifier():
    """Every learner option is a keyword parameter (None: the learner's default; batch_size 8 for a learner given by
    name); with a learner instance the options given replace its own, in a copy that fit trains."""
    maxent = Classifier("text-unigram", learner="maxent", l2=0.01, epochs=5).fit(DOCS, LABELS)
    assert (maxent.learner.name, maxent.learner.l2, maxent.learner.epochs) == ("maxent", 0.01, 5)
    assert Classifier("text-presence", learner="naive-bayes", alpha=0.1).fit(DOCS, LABELS).learner.alpha == 0.1
    assert Classifier("text-unigram").fit(DOCS, LABELS).learner.batch_size == 8
    given = make_learner("averaged-perceptron", batch_size=2, progress=False)
    clf = Classifier("text-unigram", given, epochs=3, seed=7).fit(DOCS, LABELS)
    assert (clf.learner.epochs, clf.learner.seed, clf.learner.batch_size) == (3, 7, 2)
    assert clf.learner is not given and given.epochs == 10 and not hasattr(given, "weights_")  # left as given
    with pytest.raises(OptionValueError, match=r"learner 'naive-bayes' has no option C \(its options: alpha, "
                                               r"variant, vocabulary, weighting, seed\)"):
        Classifier("text-presence", learner="naive-bayes", C=1.0).fit(DOCS, LABELS)
    with pytest.raises(OptionValueError, match="learner 'averaged-perceptron' has no option l2"):
        Classifier("text-unigram", given, l2=0.5).fit(DOCS, LABELS)
    with pytest.raises(TypeError, match="unexpected keyword argument 'epochz'"):
        Classifier(epochz=3)


def test_the_constructor_stores_parameters_that_fit_checks():
    """scikit-learn's rule: __init__ stores its arguments unchanged; fit checks them."""
    clf = Classifier("no-such-features", "no-such-learner", epochs=-1, held_out=7, bits="x")
    assert clf.get_params(deep=False)["epochs"] == -1 and clf.get_params(deep=False)["bits"] == "x"
    with pytest.raises(StructlinError, match="held_out must be a fraction"):
        clf.fit(DOCS, LABELS)
    with pytest.raises(StructlinError, match="unknown learner 'no-such-learner'"):
        clf.set_params(held_out=None).fit(DOCS, LABELS)
    with pytest.raises(OptionValueError, match="epochs must be at least 1, got -1"):
        clf.set_params(learner="perceptron").fit(DOCS, LABELS)
    with pytest.raises(OptionValueError, match="bits and hash_seed must be integers"):
        clf.set_params(epochs=None).fit(DOCS, LABELS)


def test_get_params_set_params_and_repr():
    clf = Classifier("text-unigram", "maxent", l2=0.5)
    params = clf.get_params(deep=False)
    assert list(params) == list(inspect.signature(Classifier).parameters)
    assert params["features"] == "text-unigram" and params["learner"] == "maxent" and params["l2"] == 0.5
    assert params["epochs"] is None and params["alpha"] is None  # every learner's options, None: not given
    assert clf.set_params(learner="svm", l2=None, C=0.1) is clf
    assert repr(clf) == "Classifier(features='text-unigram', learner='svm', C=0.1)"
    instance = Classifier(learner=make_learner("maxent", l2=0.3))
    assert instance.get_params()["learner__l2"] == 0.3 and "learner__l2" not in instance.get_params(deep=False)
    instance.set_params(learner__l2=0.2)
    assert instance.get_params(deep=False)["learner"].l2 == 0.2
    with pytest.raises(OptionValueError, match="Classifier has no parameter 'epocs'"):
        clf.set_params(epocs=3)
    with pytest.raises(OptionValueError, match="learner__l2: learner is 'svm', which has no parameters of its own"):
        clf.set_params(learner__l2=0.2)
    # the parameters stay as given while fit builds what they name: learner and feature_set are the built ones
    clf.set_params(learner="perceptron", C=None, epochs=2).fit(DOCS, LABELS)
    assert clf.get_params()["learner"] == "perceptron" and clf.learner.name == "perceptron"
    assert clf.get_params()["features"] == "text-unigram" and clf.feature_set.name == "text-unigram"


def test_labels_of_any_type_are_kept():
    """Labels keep their types: classes_ is a numpy array of them, predict returns them, a model file keeps
    strings, integers, numbers and true/false; 1 and "1" are two labels, ordered numbers first."""
    ints = Classifier("text-unigram", epochs=5).fit(DOCS, [1 if y == "pos" else 0 for y in LABELS])
    assert ints.classes_.dtype.kind == "i" and ints.classes_.tolist() == [0, 1]
    predicted = ints.predict(DOCS)
    assert predicted.dtype.kind == "i" and np.mean(predicted == np.array([1, 1, 0, 0, 1, 0])) == 1.0
    assert ints.score(DOCS, [1, 1, 0, 0, 1, 0]) == 1.0 and ints.classify(DOCS[0]) == 1
    documents, mixed_labels = ["aa", "bb", "cc", "aa aa", "bb bb", "cc cc"], [1, "1", 2, 1, "1", 2]
    mixed = Classifier("text-unigram", epochs=5).fit(documents, mixed_labels)
    assert mixed.classes_.dtype == object and mixed.classes_.tolist() == [1, 2, "1"]
    assert mixed.predict(documents).tolist() == mixed_labels
    assert mixed.report(documents, mixed_labels).labels == [1, 2, "1"] and "Per class" in mixed.report(
        documents, mixed_labels).format()
    flags = Classifier("text-unigram", epochs=5).fit(DOCS, np.array([y == "pos" for y in LABELS]))
    assert flags.classes_.dtype == bool and flags.predict(DOCS[:1]).tolist() == [True]


def test_typed_labels_survive_save_and_load(tmp_path):
    for labels in ([0, 1, 0, 1, 0, 1], [0.5, 1.5, 0.5, 1.5, 0.5, 1.5], [1, "1", 1, "1", True, "x"]):
        clf = Classifier("text-unigram", epochs=2).fit(DOCS, labels)
        clf.save(tmp_path / "m.model")
        loaded = Classifier.load(tmp_path / "m.model")
        assert loaded.classes_.dtype == clf.classes_.dtype and loaded.classes_.tolist() == clf.classes_.tolist()
        assert [type(y) for y in loaded.classes_.tolist()] == [type(y) for y in clf.classes_.tolist()]
        np.testing.assert_array_equal(loaded.predict(DOCS), clf.predict(DOCS))
    pairs = Classifier("text-unigram", epochs=2).fit(DOCS, [("a", 1), ("b", 2)] * 3)
    assert pairs.predict(DOCS[:2]).tolist() == [("a", 1), ("b", 2)]
    with pytest.raises(StructlinError, match=r"the label \('a', 1\) \(tuple\) cannot be saved: a model file keeps "
                                             "labels that are non-empty strings, integers, finite numbers or"):
        pairs.save(tmp_path / "pairs.model")


@pytest.mark.parametrize("labels, message", [
    ([1, 2, 3, 1, 2, float("nan")], "document 6 has the label nan, which is not finite"),
    ([[1], 2, 3, 1, 2, 3], r"document 1 has the label \[1\] \(list\), which is not hashable"),
    (["pos", None, "neg", "neg", "pos", "neg"], "document 2 has an empty label"),
    (np.array([[1], [2], [1], [2], [1], [2]]), r"expected labels as a sequence, one per document, got an array of "
                                              r"shape \(6, 1\)"),
    (None, "requires y to be passed, but the target y is None"),
    (LABELS[:5], "training data: 6 documents but 5 labels"),
])
def test_labels_that_are_no_labels(labels, message):
    with pytest.raises(CorpusFormatError, match=message) as caught:
        Classifier("text-unigram").fit(DOCS, labels)
    assert isinstance(caught.value, ValueError)


class _Series:
    """What a pandas Series offers here: __array__ and iteration (pandas is not a dependency)."""

    def __init__(self, values):
        self.values = list(values)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values, dtype=object)

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


def test_documents_from_any_sequence():
    """Lists, tuples, numpy arrays and array-likes (a pandas Series) of texts give the same model."""
    expected = Classifier("text-unigram", epochs=3).fit(DOCS, LABELS).decision_function(DOCS)
    for X, y in ((tuple(DOCS), tuple(LABELS)), (np.array(DOCS), np.array(LABELS)), (_Series(DOCS), _Series(LABELS))):
        clf = Classifier("text-unigram", epochs=3).fit(X, y)
        np.testing.assert_array_equal(clf.decision_function(X), expected)
        assert clf.predict(X).tolist() == LABELS and not hasattr(clf, "n_features_in_")
    for bad in ({"a": 1}, 5):
        with pytest.raises(TypeError, match="expected training data as a sequence of documents"):
            Classifier("text-unigram").fit(bad, LABELS)


def test_numeric_matrices_are_feature_dicts():
    """A 2-D array of numbers, rows of numbers or a scipy sparse matrix: one {column: value} feature dict of the
    non-zero entries per row, for the numeric feature set (chosen for them by features=None)."""
    rows = np.random.default_rng(0).normal(size=(12, 4)) * (np.arange(12) % 3 != 0)[:, None]
    labels = ["a", "b", "c"] * 4
    dicts = [{j: v for j, v in enumerate(row) if v != 0} for row in rows.tolist()]
    expected = Classifier("numeric", epochs=3).fit(dicts, labels).decision_function(dicts)
    for X in (rows, rows.tolist(), scipy.sparse.csr_matrix(rows), scipy.sparse.coo_array(rows), rows.astype(object)):
        clf = Classifier(epochs=3).fit(X, labels)
        assert clf.feature_set.name == "numeric" and clf.n_features_in_ == 4
        np.testing.assert_array_equal(clf.decision_function(X), expected)
    with pytest.raises(CorpusFormatError, match="input: X has 3 features, but Classifier is expecting 4 features"):
        clf.predict(rows[:, :3])
    with pytest.raises(CorpusFormatError, match="got a 1-D array of numbers. Reshape your data"):
        clf.predict(rows[0])
    with pytest.raises(CorpusFormatError, match="Complex data not supported"):
        clf.predict(rows + 1j)
    assert clf.fit(dicts, labels) and not hasattr(clf, "n_features_in_")  # a fit on dicts has no columns


def test_not_fitted_and_capabilities():
    """Before fit: NotFittedError (a StructlinError, a ValueError and an AttributeError, as scikit-learn's), so
    hasattr(model, "classes_") is False; predict_proba exists only with a probabilistic learner, partial_fit only
    with an online one."""
    clf = Classifier("text-unigram")
    for method in (clf.predict, clf.decision_function):
        with pytest.raises(NotFittedError, match="this classifier is not trained yet") as caught:
            method(DOCS)
        assert isinstance(caught.value, (StructlinError, ValueError, AttributeError))
    assert not hasattr(clf, "classes_") and not hasattr(clf, "predict_proba") and hasattr(clf, "partial_fit")
    maxent = Classifier("text-unigram", "maxent")
    assert hasattr(maxent, "predict_proba") and hasattr(maxent, "predict_log_proba")
    assert not hasattr(maxent, "partial_fit")
    with pytest.raises(NotFittedError):
        maxent.predict_proba(DOCS)
    with pytest.raises(TypeError, match="learner 'maxent' is not online"):
        maxent.partial_fit(DOCS, LABELS, classes=["neg", "pos"])


def test_nltk_featuresets_train_like_nltk_and_show_their_informative_features(nltk_data_dir, tmp_path, capsys):
    """NLTK's gender example: Classifier.train takes [(featureset, label)], every value is a category (numbers
    too), accuracy as NLTK's naive Bayes on the same split, and the informative features are named."""
    import random

    from nltk.corpus import names

    labeled = [(n, "male") for n in names.words("male.txt")] + [(n, "female") for n in names.words("female.txt")]
    random.Random(0).shuffle(labeled)
    featuresets = [({"last_letter": n[-1], "length": len(n)}, g) for n, g in labeled]
    train, test = featuresets[500:], featuresets[:500]
    clf = Classifier.train(train, epochs=5)
    assert clf.feature_set.name == "nltk"
    assert nltk.classify.accuracy(clf, test) >= nltk.classify.accuracy(nltk.NaiveBayesClassifier.train(train), test) - 0.02
    top = clf.most_informative_features(40)
    assert top[0].name.endswith("last_letter=a") and top[0].favoured == "female"
    assert any(f.name.endswith("length=5") for f in top) or any(f.name.endswith("length=6") for f in top)
    clf.show_most_informative_features(3)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Most Informative Features" and len(out) == 4 and "last_letter=a" in out[1]
    clf.save(tmp_path / "g.model")
    loaded = Classifier.load(tmp_path / "g.model")
    with pytest.raises(StructlinError, match="give a sample of documents"):
        loaded.most_informative_features(3)
    assert [f.name for f in loaded.most_informative_features(3, [x for x, _ in train])] == [f.name for f in top[:3]]


def test_a_report_in_parts_reports_progress_and_the_same_numbers(nltk_data_dir):
    """report(progress=...) predicts in parts and calls progress(n) per part: the same report, every document
    counted once."""
    documents = load_documents("qc", "train")
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    for clf in (Classifier(epochs=2, progress=False), Classifier(learner="naive-bayes")):  # with probabilities too
        clf.fit(texts[:1000], labels[:1000])
        seen = []
        assert clf.report(texts, labels, progress=seen.append).to_dict() == clf.report(texts, labels).to_dict()
        assert sum(seen) == len(texts) and len(seen) == -(-len(texts) // 2048)


def test_features_extracted_by_parts_train_the_same_model():
    """Counts (and so the idf fitted on them) and values extracted ``extraction_batch`` documents at a time:
    the same model as at once."""
    by_parts, at_once = Classifier("text-words"), Classifier("text-words")
    by_parts.extraction_batch = 4
    by_parts.fit(DOCS * 3, LABELS * 3)
    at_once.fit(DOCS * 3, LABELS * 3)
    np.testing.assert_array_equal(by_parts.weights_, at_once.weights_)
    np.testing.assert_array_equal(by_parts.label_scores(DOCS), at_once.label_scores(DOCS))


def test_text_order_tells_a_sorted_file_from_one_in_its_own_order():
    """Per label, consecutive documents in the order of their texts (up or down, by code point or case folded)
    in at least 90% of at least 20 pairs: sorted."""
    from structlin.models import TextOrder

    def order(documents, labels):
        check = TextOrder()
        check.add(documents, labels)
        return check.sorted

    words = [f"{chr(97 + k % 26)}{k:03d} text" for k in range(60)]
    labels = ["a", "b", "c"] * 20
    assert order(sorted(words), labels) and order(sorted(words, reverse=True), labels)
    assert order(sorted([w.upper() if k % 2 else w for k, w in enumerate(words)], key=str.casefold), labels)
    assert not order([words[k] for k in np.random.default_rng(0).permutation(60)], labels)
    assert not order(sorted(words)[:20], labels[:20])  # 17 pairs: too few to tell
    assert order([w.split() for w in sorted(words)], labels)  # token lists: their words joined
    assert not order([{w: 1} for w in sorted(words)], labels)  # feature dicts: no text order


def test_a_sorted_file_is_read_in_a_seeded_random_order(nltk_data_dir):
    """Documents sorted by their texts say nothing by their order: fit reads them in the seeded permutation of
    the learner's seed, so the held-out share is a random one: the model fit on them in that order."""
    documents = load_documents("qc", "train")[:800]
    pairs = sorted(((d.text, d.label) for d in documents), key=lambda p: p[0])
    learner = make_learner("averaged-perceptron", epochs=4, seed=3)
    auto = Classifier("text-presence", learner, held_out=0.1).fit([t for t, _ in pairs], [y for _, y in pairs])
    shuffled = [pairs[k] for k in np.random.default_rng(3).permutation(len(pairs))]
    by_hand = Classifier("text-presence", learner, held_out=0.1).fit([t for t, _ in shuffled], [y for _, y in shuffled])
    np.testing.assert_array_equal(auto.weights_, by_hand.weights_)
    in_file_order = Classifier("text-presence", learner, held_out=0.1).fit([d.text for d in documents],
                                                                            [d.label for d in documents])
    assert in_file_order.learner.candidates_ != auto.learner.candidates_


@pytest.mark.parametrize("features", [None, "text-nb", "fields", "nltk"])
def test_parts_extracted_in_threads_give_the_matrix_of_parts_in_turn(features):
    """A classifier extracts two parts at once (``extraction_threads``): the same training matrix, values and idf as
    one part after the other, whatever the kind of document (texts, tuples of fields, NLTK featuresets)."""
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(300)]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 30))) for _ in range(500)]
    documents = {None: texts, "text-nb": texts, "fields": [tuple((t.split() + ["x"] * 3)[:3]) for t in texts],
                 "nltk": [{w: True for w in t.split()} for t in texts]}[features]
    labels = [f"c{len(t) % 5}" for t in texts]
    matrices = []
    for threads in (1, 2):
        model = Classifier(features, progress=False)
        model.extraction_threads, model.extraction_batch = threads, 37
        X, y = model.training_data(documents, labels)
        matrices.append((X, y, model.joint.columns, model._extractor.idf))
    (X1, y1, c1, idf1), (X2, y2, c2, idf2) = matrices
    for a, b in ((X1.indptr, X2.indptr), (X1.indices, X2.indices), (X1.values, X2.values), (y1, y2), (c1, c2),
                 (idf1, idf2)):
        np.testing.assert_array_equal(a, b)
