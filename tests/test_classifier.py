"""Classifier: the joint map with the Multiclass decoder, NLTK and scikit-learn interfaces, save/load."""

from __future__ import annotations

import nltk
import numpy as np
import pytest
from nltk.classify.api import ClassifierI

from structlin import Classifier
from structlin.catalog import load_documents
from structlin.errors import ModelFormatError, StructlinError
from structlin.learners import make_learner

DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg"]


def test_fits_and_predicts_through_nltk_and_sklearn_verbs():
    clf = Classifier("text-unigram", epochs=5, progress=False).fit(DOCS, LABELS)
    assert isinstance(clf, ClassifierI)
    assert clf.classes_ == ["neg", "pos"] and clf.labels() == ["neg", "pos"]
    assert clf.predict(DOCS) == LABELS
    assert clf.classify(DOCS[0]) == "pos" and clf.classify_many(DOCS[2:4]) == ["neg", "neg"]
    scores = clf.decision_function(DOCS)
    assert scores.shape == (6, 2)
    assert [clf.classes_[k] for k in scores.argmax(axis=1)] == LABELS
    assert nltk.classify.accuracy(clf, list(zip(DOCS, LABELS))) == 1.0
    assert clf.random_state == 0


def test_one_weight_block_per_label_multiclass():
    docs = ["a a", "b b", "c c", "a", "b", "c"]
    labels = ["x", "y", "z", "x", "y", "z"]
    clf = Classifier("text-unigram", epochs=3, progress=False).fit([d.replace("a", "aa").replace("b", "bb").replace("c", "cc") for d in docs], labels)
    assert clf.joint.n_labels == 3 and not clf.joint.transitions
    assert clf.predict(["aa", "bb", "cc"]) == ["x", "y", "z"]


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
    assert loaded.classes_ == clf.classes_
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
    scores = clf.decision_function(["good plot", "awful fun"])
    expected = np.exp(scores - scores.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(["good plot", "awful fun"]), expected, rtol=1e-12)
    dist = clf.prob_classify("good great")
    assert sorted(dist.samples()) == clf.classes_ and dist.max() == clf.classify("good great") == "pos"
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
        assert clf.predict(test) == [clf.classes_[k] for k in whole.argmax(axis=1)]
    assert clf.decision_function([]).shape == (0, 2) and clf.predict([]) == []


def test_default_features_follow_the_kind_of_document(tmp_path):
    """features=None: text-ngrams for texts, fields for tuples of fields, numeric for feature dicts; a mix of
    kinds is refused in one line; the choice is saved with the model."""
    texts = Classifier(epochs=2).fit(DOCS, LABELS)
    assert texts.feature_set.name == "text-ngrams"
    fields = [tuple(d.split()[:2]) for d in DOCS]
    assert Classifier(epochs=2).fit(fields, LABELS).feature_set.name == "fields"
    dicts = [{w: 1 for w in d.split()} for d in DOCS]
    assert Classifier(epochs=2).fit(dicts, LABELS).feature_set.name == "numeric"
    with pytest.raises(StructlinError, match="training documents mix fields, text"):
        Classifier().fit([*DOCS[:3], *fields[3:]], LABELS)
    with pytest.raises(StructlinError, match="must be texts, tuples of fields or feature dicts, got int"):
        Classifier().fit([1, 2], ["a", "b"])
    texts.save(tmp_path / "m.model")
    assert Classifier.load(tmp_path / "m.model").feature_set == texts.feature_set


def test_held_out_chooses_the_epochs_then_trains_on_everything(nltk_data_dir):
    """held_out=0.1 without dev: the epochs are chosen on a seeded tenth of the training documents (training on
    the rest), then the model is trained on all of them for that many: the same weights as doing both by hand
    (features without idf, which the whole training set estimates)."""
    documents = load_documents("qc", "train")[:1500]
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    auto = Classifier("text-presence", make_learner("averaged-perceptron", epochs=6, seed=2), held_out=0.1)
    auto.fit(texts, labels)
    order = np.random.default_rng(2).permutation(len(texts))
    cut = len(texts) - round(0.1 * len(texts))
    rest, held = np.sort(order[:cut]), np.sort(order[cut:])
    probe = Classifier("text-presence", make_learner("averaged-perceptron", epochs=6, seed=2))
    probe.fit([texts[k] for k in rest], [labels[k] for k in rest], ([texts[k] for k in held], [labels[k] for k in held]))
    assert auto.learner.chosen_["epochs"] == probe.learner.best_epoch_
    assert [c["epochs"] for c in auto.learner.candidates_] == list(range(1, 7))
    by_hand = Classifier("text-presence", make_learner("averaged-perceptron", epochs=probe.learner.best_epoch_, seed=2))
    by_hand.fit(texts, labels)
    np.testing.assert_array_equal(auto.weights_, by_hand.weights_)
    assert auto.learner.epochs == 6  # the option itself is left as given
    with pytest.raises(StructlinError, match="held_out must be a fraction between 0 and 1, got 1.5"):
        Classifier(held_out=1.5)
