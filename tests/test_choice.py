"""Tests of ``learner="auto"`` (structlin.learners.choice): each candidate scored on the same held-out share (or dev),
the best kept, and the model kept is exactly the one its learner trains alone; the options given choose the candidates;
the command line's ``--learner auto``; what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from structlin import Classifier, Tagger
from structlin.cli import main
from structlin.errors import OptionValueError
from structlin.learners.choice import CANDIDATES, LearnerChoice, learner_choice
from structlin.learners import LEARNERS, make_learner
from structlin.tasks import HELD_OUT


def _documents(corpus: str, split: str | None = None, first: int | None = None) -> tuple[list, list]:
    from structlin.catalog import load_documents

    documents = load_documents(corpus, split)[:first]
    return [d.text for d in documents], [d.label for d in documents]


def _scores(model) -> dict:
    return {c["learner"]: c["dev_accuracy"] for c in model.learner.candidates_ if "learner" in c}


@pytest.mark.parametrize(("corpus", "split", "first"), [("names", None, None), ("qc", "train", 2000)])
def test_the_best_held_out_candidate_is_kept_as_it_trains_alone(corpus, split, first, nltk_data_dir):
    """names (naive Bayes wins its held-out share) and qc (the perceptron wins): the candidate of the best held-out
    score is kept, and its model is the one ``learner=<its name>`` trains with the same held-out share (the
    perceptron: epochs chosen there, then a refit; naive Bayes: its own cross-validation on all the documents)."""
    texts, labels = _documents(corpus, split, first)
    auto = Classifier(learner="auto", held_out=HELD_OUT, progress=False).fit(texts, labels)
    scores = _scores(auto)
    assert list(scores) == list(CANDIDATES)
    winner = max(scores, key=scores.get)
    assert auto.learner.name == winner == auto.learner.chosen_["learner"]
    alone = Classifier(learner=winner, held_out=HELD_OUT, progress=False).fit(texts, labels)
    if winner == "averaged-perceptron":  # the held-out run is the one the perceptron makes alone
        assert scores[winner] == max(c["dev_accuracy"] for c in alone.learner.candidates_)
    np.testing.assert_array_equal(auto.weights_, alone.weights_)
    assert auto.predict(texts[:50]).tolist() == alone.predict(texts[:50]).tolist()
    assert {k: v for k, v in auto.learner.chosen_.items() if k != "learner"} == alone.learner.chosen_
    assert auto.learner.candidates_[len(CANDIDATES):] == alone.learner.candidates_
    expected = {"names": "naive-bayes", "qc": "averaged-perceptron"}[corpus]
    assert winner == expected


def test_naive_bayes_held_out_score_is_its_best_setting_on_that_share():
    """Naive Bayes's score without making weights: the best dev accuracy of its fit with the held-out documents as
    dev (which makes the weights of every setting's choice)."""
    texts = ["good great fun", "bad awful plot", "great acting", "awful boring", "fun film", "boring plot"] * 4
    labels = ["pos", "neg", "pos", "neg", "pos", "neg"] * 4
    dev = (["good film", "bad boring plot", "great fun", "awful film"], ["pos", "neg", "pos", "neg"])
    auto = Classifier(learner="auto", progress=False).fit(texts, labels, dev)
    nb = Classifier(learner="naive-bayes").fit(texts, labels, dev)
    assert _scores(auto)["naive-bayes"] == nb.learner.best_dev_accuracy()
    ap = Classifier(learner="averaged-perceptron", progress=False).fit(texts, labels, dev)
    assert _scores(auto)["averaged-perceptron"] == ap.learner.best_dev_accuracy()
    kept = ap if ap.learner.best_dev_accuracy() >= nb.learner.best_dev_accuracy() else nb  # ties: the first
    np.testing.assert_array_equal(auto.weights_, kept.weights_)


def test_a_model_of_the_choice_round_trips(tmp_path):
    texts = ["good great fun", "bad awful plot", "great acting", "awful boring", "fun film", "boring plot"] * 5
    labels = ["pos", "neg", "pos", "neg", "pos", "neg"] * 5
    auto = Classifier(learner="auto", held_out=0.2, progress=False).fit(texts, labels)
    auto.save(tmp_path / "m")
    loaded = Classifier.load(tmp_path / "m")
    assert loaded.learner.name == auto.learner.name
    assert loaded.learner.chosen_ == auto.learner.chosen_ and loaded.learner.candidates_ == auto.learner.candidates_
    np.testing.assert_array_equal(loaded.label_scores(texts), auto.label_scores(texts))


@pytest.mark.parametrize(("options", "kept"), [({"margin": 2.0}, ["averaged-perceptron"]),
                                                ({"epochs": 3}, ["averaged-perceptron"]),
                                                ({"alpha": 0.5}, ["naive-bayes"]),
                                                ({"seed": 3}, list(CANDIDATES)), ({}, list(CANDIDATES))])
def test_options_given_keep_the_candidates_that_take_them(options, kept):
    choice = learner_choice({"relative_margin": 4.0}, options)
    assert [c.name for c in choice.candidates] == kept
    for learner in choice.candidates:
        declared = {o.name for o in learner.options}
        assert all(getattr(learner, name) == value for name, value in options.items() if name in declared)


def test_a_single_candidate_left_trains_alone():
    """``margin`` names the perceptron: no choice is made, the model is the perceptron's with that margin."""
    texts, labels = ["a b", "c d", "a c", "b d"] * 3, ["x", "y", "x", "y"] * 3
    auto = Classifier(learner="auto", margin=2.0, held_out=0.25, progress=False).fit(texts, labels)
    alone = Classifier(learner="averaged-perceptron", margin=2.0, held_out=0.25, progress=False).fit(texts, labels)
    assert "learner" not in auto.learner.chosen_
    np.testing.assert_array_equal(auto.weights_, alone.weights_)


def test_what_the_choice_refuses():
    texts, labels = ["a b", "c d"] * 3, ["x", "y"] * 3
    with pytest.raises(OptionValueError, match="takes every option given.*l2"):
        Classifier(learner="auto", l2=1.0).fit(texts, labels)
    with pytest.raises(OptionValueError, match="dev data or on a held-out share"):
        Classifier(learner="auto").fit(texts, labels)
    with pytest.raises(OptionValueError, match="none of its candidates .* learns a tagger"):
        Tagger(learner="auto", alpha=1.0).fit([[("a", "X"), ("b", "Y")]])
    with pytest.raises(OptionValueError, match="no candidate left"):
        LearnerChoice([])


def test_a_tagger_and_a_stream_keep_the_perceptron(tmp_path):
    """naive Bayes labels single documents in memory: a tagger's ``auto``, and a stream's, is the perceptron."""
    tagger = Tagger(learner="auto", progress=False).fit([[("a", "X"), ("b", "Y")], [("b", "Y"), ("a", "X")]])
    assert tagger.learner.name == "averaged-perceptron"
    texts, labels = ["a b", "c d", "a c", "b d"] * 3, ["x", "y", "x", "y"] * 3
    streamed = Classifier(learner="auto", stream=True, progress=False).fit(texts, labels)
    assert streamed.learner.name == "averaged-perceptron"


def test_the_command_line_chooses_and_says_so(tmp_path, capsys, nltk_data_dir):
    """``auto``, the command line's default, on names: the log names the candidates' held-out scores, the model keeps
    naive Bayes, and ``evaluate`` shows the choice; ``--no-tune`` chooses nothing (the first candidate); ``tune``
    takes a learner's name only."""
    model = tmp_path / "m"
    assert main(["train", "classifier", "--corpus", "names", "--output", str(model)]) == 0
    out = capsys.readouterr().out
    assert "learner naive-bayes" in out and "learner averaged-perceptron: dev " in out
    assert main(["evaluate", str(model), "--corpus", "names", "--split", "all", "--json"]) == 0
    assert '"learner": "naive-bayes"' in capsys.readouterr().out
    assert main(["train", "classifier", "--corpus", "names", "--learner", "auto", "--no-tune", "--output",
                 str(model)]) == 0
    assert Classifier.load(model).learner.name == "averaged-perceptron"
    with pytest.raises(SystemExit):
        main(["tune", "classifier", "--corpus", "names", "--learner", "auto", "--grid", "epochs=1,2"])
    assert "unknown learner 'auto'" in capsys.readouterr().err
    assert main(["train", "classifier", "--corpus", "names", "--learner", "auto", "--l2", "1", "--output",
                 str(model)]) == 2
    assert "--l2 does not apply to learner 'auto'" in capsys.readouterr().err
    assert main(["train", "classifier", "--corpus", "names", "--learner", "auto", "--alpha", "1", "--workers", "2",
                 "--output", str(model)]) == 2
    assert "candidates for the options given (naive-bayes) do not train on a Dask cluster" in capsys.readouterr().err


def test_make_learner_knows_the_registered_learners_only():
    """``auto`` is a model's choice, not a learner: the registry and make_learner keep the eleven learners."""
    assert "auto" not in LEARNERS and len(LEARNERS) == 11
    with pytest.raises(KeyError):
        make_learner("auto")


def test_a_learner_held_out_score_is_its_best_dev_accuracy():
    """The protocol's held_out_score: the best dev accuracy of a fit with the held-out instances as dev (the SVM here),
    and naive Bayes's own, which makes no weights, equals its fit's."""
    from structlin.decoders import Multiclass

    texts = ["good great fun", "bad awful plot", "great acting", "awful boring", "fun film", "boring plot"] * 4
    labels = ["pos", "neg", "pos", "neg", "pos", "neg"] * 4
    for name, features in (("svm", None), ("naive-bayes", "text-nb")):
        model = Classifier(features, learner=name)
        X, y = model.training_data(texts, labels)
        rest, held = np.arange(0, 18), np.arange(18, 24)
        parts = (X.take(rest), y[rest]), (X.take(held), y[held])
        scorer, fitted = make_learner(name), make_learner(name)
        score = scorer.held_out_score(model.joint, Multiclass(), *parts[0], parts[1], bias_row=model._bias_row())
        fitted.fit(model.joint, Multiclass(), *parts[0], parts[1], bias_row=model._bias_row())
        assert score == fitted.best_dev_accuracy() > 0.5
