"""The voted perceptron in the primal: votes and averages against the weights after every visit of a
textbook loop, the three hypotheses of one run, dev selection, save/load and the decoder restriction."""

from __future__ import annotations

import numpy as np
import pytest

from roundtrip import assert_classifier_round_trip
from structlin import Classifier, Tagger
from structlin.decoders import Multiclass
from structlin.learners import AveragedPerceptron, Perceptron, VotedPerceptron
from test_kernel_perceptron import dense_corpus, integer_problem, textbook_perceptron


def test_votes_and_average_equal_brute_force_over_every_visit():
    rows, y, L = integer_problem(seed=11, n=70)
    joint, X = dense_corpus(rows, L)
    test_rows, _, _ = integer_problem(seed=12, n=60)
    _, X_test = dense_corpus(test_rows, L)
    learner = VotedPerceptron(4, seed=5, margin=0).fit(joint, Multiclass(), X, y)
    _, after_visit = textbook_perceptron(rows, y, L, 4, seed=5)
    votes = np.zeros((len(test_rows), L))
    for W in after_visit:  # every visit's hypothesis votes once: c_k votes for hypothesis k
        votes[np.arange(len(test_rows)), (test_rows @ W).argmax(axis=1)] += 1
    np.testing.assert_array_equal(learner.scores(joint, X_test).emissions, votes)
    learner.hypothesis = "averaged"
    np.testing.assert_allclose(learner.scores(joint, X_test).emissions, test_rows @ np.mean(after_visit, axis=0), atol=1e-9)
    learner.hypothesis = "last"
    np.testing.assert_array_equal(learner.scores(joint, X_test).emissions, test_rows @ after_visit[-1])


def test_weights_equal_the_perceptrons_of_the_same_run():
    rows, y, L = integer_problem(seed=13)
    joint, X = dense_corpus(rows, L)
    voted = VotedPerceptron(3, seed=1, hypothesis="last", margin=0).fit(joint, Multiclass(), X, y)
    np.testing.assert_array_equal(voted.weights_, Perceptron(3, seed=1, margin=0).fit(joint, Multiclass(), X, y).weights_)
    voted = VotedPerceptron(3, seed=1, hypothesis="averaged", margin=0).fit(joint, Multiclass(), X, y)
    np.testing.assert_allclose(voted.weights_, AveragedPerceptron(3, seed=1, margin=0).fit(joint, Multiclass(), X, y).weights_)


def test_dev_selection_scores_the_votes():
    rows, y, L = integer_problem(seed=14, n=120)
    joint, X = dense_corpus(rows[:90], L)
    _, X_dev = dense_corpus(rows[90:], L)
    learner = VotedPerceptron(6, seed=0, margin=0).fit(joint, Multiclass(), X, y[:90], dev=(X_dev, y[90:]))
    scores = [h["dev_accuracy"] for h in learner.history_]
    assert scores[learner.best_epoch_ - 1] == max(scores)
    assert learner.scores(joint, X_dev).emissions.argmax(axis=1).tolist() != []
    assert float((learner.scores(joint, X_dev).emissions.argmax(axis=1) == y[90:]).mean()) == max(scores)


def test_save_load_keeps_the_votes(tmp_path):
    documents = ["good fun film", "great fun", "bad plot", "awful bad film", "good plot", "bad fun"]
    labels = ["pos", "pos", "neg", "neg", "pos", "neg"]
    clf = Classifier("text-unigram", VotedPerceptron(6, margin=0)).fit(documents, labels, dev=(documents, labels))
    loaded = assert_classifier_round_trip(clf, documents, labels, tmp_path)
    for hypothesis in VotedPerceptron.hypotheses:
        clf.learner.hypothesis = loaded.learner.hypothesis = hypothesis
        np.testing.assert_array_equal(loaded.decision_function(documents), clf.decision_function(documents))


def test_a_tagger_takes_the_averaged_or_last_hypothesis_only():
    train = [[("the", "DET"), ("dog", "NOUN")], [("a", "DET"), ("cat", "NOUN")]]
    with pytest.raises(ValueError, match="the voted hypothesis needs the multiclass decoder"):
        Tagger("pos-basic", VotedPerceptron(2, hypothesis="voted", margin=0)).fit(train)
    tagger = Tagger("pos-basic", VotedPerceptron(3, hypothesis="averaged", margin=0)).fit(train)
    assert tagger.predict([["the", "cat"]]) == [["DET", "NOUN"]]
    default = Tagger("pos-basic", VotedPerceptron(3, margin=0)).fit(train)  # no hypothesis given: the average
    np.testing.assert_array_equal(default.weights_, tagger.weights_)
    with pytest.raises(ValueError, match="hypothesis must be one of voted, averaged, last"):
        VotedPerceptron(hypothesis="best", margin=0)


def test_the_delta_trick_keeps_votes_on_the_real_features():
    rows, y, L = integer_problem(seed=15, n=40)
    joint, X = dense_corpus(rows, L)
    plain = VotedPerceptron(5, seed=0, margin=0).fit(joint, Multiclass(), X, y)
    tricked = VotedPerceptron(5, seed=0, delta=2.0, margin=0).fit(joint, Multiclass(), X, y)
    assert tricked.history_[0]["train_mistakes"] == plain.history_[0]["train_mistakes"]  # ids start at zero
    assert len(tricked.weights_) == joint.size and (tricked._model.indices < joint.size).all()
    votes = tricked.scores(joint, X).emissions  # every visit's hypothesis votes once
    np.testing.assert_allclose(votes.sum(axis=1), len(tricked.history_) * len(y))


@pytest.mark.parametrize("hypothesis", ["averaged", "last"])
def test_the_delta_trick_with_dev_selects_on_the_real_features(hypothesis):
    """The dev set scores the kept (real-feature) weights on the real map: the recorded dev accuracies are
    those of the weights, and the run is the run without dev, cut at the kept epoch."""
    rows, y, L = integer_problem(seed=15, n=60)
    joint, X = dense_corpus(rows[:45], L)
    _, X_dev = dense_corpus(rows[45:], L)
    learner = VotedPerceptron(6, seed=0, delta=2.0, hypothesis=hypothesis, margin=0).fit(joint, Multiclass(), X, y[:45],
                                                                               dev=(X_dev, y[45:]))
    assert len(learner.weights_) == joint.size
    kept = learner.scores(joint, X_dev).emissions.argmax(axis=1)
    assert float((kept == y[45:]).mean()) == max(r["dev_accuracy"] for r in learner.history_)
    again = VotedPerceptron(learner.best_epoch_, seed=0, delta=2.0, hypothesis=hypothesis, margin=0).fit(joint, Multiclass(),
                                                                                               X, y[:45])
    np.testing.assert_array_equal(again.weights_, learner.weights_)


def test_command_line_voted_tagger_defaults_to_the_average_and_refuses_voting(tmp_path, capsys):
    """A voted-perceptron tagger predicts with the averaged hypothesis by default (voting cannot decode label
    chains); asking for voted gets one line."""
    from structlin import Tagger
    from structlin.cli import main

    train = tmp_path / "t.txt"
    train.write_text("the\tDET\ndog\tNOUN\n\n", encoding="utf-8")
    model = tmp_path / "v.model"
    assert main(["train", "tagger", "--train", str(train), "--learner", "voted-perceptron", "--output", str(model),
                 "--quiet"]) == 0
    tagger = Tagger.load(model)
    assert tagger.learner.hypothesis is None and tagger.tag(["the", "dog"]) == [("the", "DET"), ("dog", "NOUN")]
    np.testing.assert_array_equal(tagger.weights_, tagger.learner._model.weights("averaged"))
    code = main(["train", "tagger", "--train", str(train), "--learner", "voted-perceptron", "--hypothesis", "voted",
                 "--output", str(model), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and err.strip().splitlines() == [
        "structlin: error: the voted hypothesis needs the multiclass decoder, not 'viterbi': choose "
        "hypothesis='averaged' or 'last'"]


def test_with_many_labels_the_votes_keep_touched_pairs_and_equal_the_full_vectors_run(monkeypatch, tmp_path):
    """With the touched pairs kept (as for many labels: here forced for 3), the same votes, average and last
    weights as a run of full vectors, through a model file too; the file's vectors are written a block at a time."""
    from structlin.joint import SparseWeights
    from structlin.learners import perceptron, run_weights

    documents = [f"w{i % 7} w{i % 5} k{i % 3}" for i in range(60)]
    labels = [["a", "b", "c"][i % 3] for i in range(60)]
    full = Classifier("text-unigram", VotedPerceptron(3, margin=0)).fit(documents, labels, dev=(documents, labels))
    monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    monkeypatch.setattr(perceptron._Votes, "_BLOCK", 7)  # many blocks of a file's vectors
    pairs = Classifier("text-unigram", VotedPerceptron(3, margin=0)).fit(documents, labels, dev=(documents, labels))
    assert isinstance(pairs.weights_, SparseWeights) and not isinstance(full.weights_, SparseWeights)
    loaded = assert_classifier_round_trip(pairs, documents, labels, tmp_path)
    assert isinstance(loaded.weights_, SparseWeights)
    for hypothesis in VotedPerceptron.hypotheses:
        for model in (full, pairs, loaded):
            model.learner.hypothesis = hypothesis
        expected = full.decision_function(documents)
        np.testing.assert_allclose(pairs.decision_function(documents), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(loaded.decision_function(documents), expected, rtol=1e-12, atol=1e-12)


def test_a_tagger_keeps_no_updates_and_the_averaged_perceptrons_weights():
    """A chain cannot vote, so a tagger's run keeps none of its updates (a model file without them) and its
    weights are the averaged perceptron's of the same run."""
    train = [[("the", "DET"), ("dog", "NOUN"), ("runs", "VERB")], [("a", "DET"), ("cat", "NOUN"), ("sat", "VERB")]]
    voted = Tagger("pos-basic", VotedPerceptron(3, margin=0)).fit(train)
    assert voted.learner.model_arrays()["update_sizes"].size == 0
    averaged = Tagger("pos-basic", AveragedPerceptron(3, margin=0)).fit(train)
    np.testing.assert_allclose(voted.weights_, averaged.weights_, rtol=1e-12, atol=1e-12)
