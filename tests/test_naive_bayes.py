"""Tests of structlin.learners.naive_bayes: the joint weights are NB's log-probabilities exactly (with signed
feature values), predictions and probabilities are Bayes' rule, the lecture's frog example, save/load, and
the settings and data naive Bayes refuses."""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter

import numpy as np
import pytest
from roundtrip import assert_classifier_round_trip

from structlin import Classifier, memory
from structlin.cli import main
from structlin.decoders import Multiclass, Viterbi
from structlin.errors import OptionValueError
from structlin.joint import JointFeatureMap, SparseWeights
from structlin.learners import BernoulliNaiveBayes, NaiveBayes, make_learner, naive_bayes
from structlin.learners.naive_bayes import ALPHAS, SHARES, VARIANTS, WEIGHTINGS, _information
from structlin.matrix import FeatureMatrix, ordered_folds
from structlin.templates import FeatureSet

# --- the weights by hand ---------------------------------------------------------------------------------

# Rows: 0 = bias (hash sign −1), 1 = "a" (sign +1), 2 = "b" (sign −1), 3 = "c" (sign +1); labels 0, 1.
# Document counts: d0 (label 0): a×2, b×1; d1 (label 0): b×3; d2 (label 1): a×1, c×2.
JOINT = JointFeatureMap(["neg", "pos"], [5, 9, 17, 40], transitions=False)
SIGNS = np.array([1.0, -1.0, 1.0])  # of a, b, c
COUNTS = np.array([[2, 1, 0], [0, 3, 0], [1, 0, 2]])
Y = np.array([0, 0, 1])


def signed_matrix(counts: np.ndarray, bias: float = -1.0) -> FeatureMatrix:
    """One row per document: the bias (row 0) and every feature with a non-zero count (rows 1..)."""
    rows = [[0, *(1 + np.flatnonzero(c))] for c in counts]
    values = [[bias, *(SIGNS[c > 0] * c[c > 0])] for c in counts]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    return FeatureMatrix(indptr, np.concatenate(rows), np.concatenate(values), np.ones(len(counts), np.int64))


def test_multinomial_weights_are_log_prior_and_signed_log_likelihoods():
    alpha = 0.5
    learner = NaiveBayes(alpha=alpha, variant="multinomial", vocabulary=1.0, weighting="counts").fit(
        JOINT, Multiclass(), signed_matrix(COUNTS), Y, bias_row=0)
    E = JOINT.emission_weights(learner.weights_)
    # N_fy: label 0 has a 2, b 4, c 0 (total 6); label 1 has a 1, b 0, c 2 (total 3); V = 3.
    likelihood = np.array([[(2 + alpha) / (6 + 3 * alpha), (1 + alpha) / (3 + 3 * alpha)],
                           [(4 + alpha) / (6 + 3 * alpha), (0 + alpha) / (3 + 3 * alpha)],
                           [(0 + alpha) / (6 + 3 * alpha), (2 + alpha) / (3 + 3 * alpha)]])
    np.testing.assert_allclose(E[1:], SIGNS[:, None] * np.log(likelihood), rtol=1e-14)
    np.testing.assert_allclose(E[0], -np.log([2 / 3, 1 / 3]), rtol=1e-14)  # log P(y) over the bias value −1
    # The signed value times the weight is the count times log P(f|y): the score is log P(y, x) (no multinomial
    # coefficient) for every document.
    scores = JOINT.scores(learner.weights_, signed_matrix(COUNTS)).emissions
    np.testing.assert_allclose(scores, np.log([2 / 3, 1 / 3]) + COUNTS @ np.log(likelihood), rtol=1e-13)
    record = learner.history_[0]
    assert record["train_mistakes"] == 0 and record["mixed_sign_rows"] == 0 and learner.best_epoch_ == 1


def test_tf_idf_weighting_sums_rennies_transformed_counts():
    """weighting="tf-idf": the estimates sum, instead of the counts, log(1 + c)·log(D/df) with each document
    made unit length (Rennie et al. 2003); the bias keeps log P(y), and a document's prediction still uses its
    counts."""
    alpha = 0.5
    learner = NaiveBayes(alpha=alpha, weighting="tf-idf", variant="multinomial", vocabulary=1.0)
    learner.fit(JOINT, Multiclass(), signed_matrix(COUNTS), Y, bias_row=0)
    idf = np.log(3 / np.array([2, 2, 1]))  # a and b in two of the three documents, c in one
    transformed = np.log1p(COUNTS) * idf
    transformed /= np.linalg.norm(transformed, axis=1, keepdims=True)
    summed = np.array([transformed[Y == label].sum(axis=0) for label in (0, 1)]).T  # N_fy, features × labels
    likelihood = (summed + alpha) / (summed.sum(axis=0) + 3 * alpha)
    E = JOINT.emission_weights(learner.weights_)
    np.testing.assert_allclose(E[1:], SIGNS[:, None] * np.log(likelihood), rtol=1e-13)
    np.testing.assert_allclose(E[0], -np.log([2 / 3, 1 / 3]), rtol=1e-14)
    counted = NaiveBayes(alpha=alpha, weighting="counts", variant="multinomial", vocabulary=1.0)
    counted.fit(JOINT, Multiclass(), signed_matrix(COUNTS), Y, bias_row=0)
    assert not np.allclose(JOINT.emission_weights(counted.weights_)[1:], E[1:])


def test_bernoulli_weights_hold_the_absent_features_in_the_bias():
    alpha = 1.0
    presence = (COUNTS > 0).astype(int)
    learner = BernoulliNaiveBayes(alpha=alpha).fit(JOINT, Multiclass(), signed_matrix(presence), Y, bias_row=0)
    E = JOINT.emission_weights(learner.weights_)
    # D_fy: label 0 (2 documents) has a 1, b 2, c 0; label 1 (1 document) has a 1, b 0, c 1.
    p = np.array([[(1 + alpha) / (2 + 2 * alpha), (1 + alpha) / (1 + 2 * alpha)],
                  [(2 + alpha) / (2 + 2 * alpha), (0 + alpha) / (1 + 2 * alpha)],
                  [(0 + alpha) / (2 + 2 * alpha), (1 + alpha) / (1 + 2 * alpha)]])
    np.testing.assert_allclose(E[1:], SIGNS[:, None] * (np.log(p) - np.log(1 - p)), rtol=1e-14)
    np.testing.assert_allclose(E[0], -(np.log([2 / 3, 1 / 3]) + np.log(1 - p).sum(axis=0)), rtol=1e-14)
    direct = np.log([2 / 3, 1 / 3]) + presence @ np.log(p) + (1 - presence) @ np.log(1 - p)
    np.testing.assert_allclose(JOINT.scores(learner.weights_, signed_matrix(presence)).emissions, direct, rtol=1e-13)


def test_a_bucket_with_opposite_signs_takes_the_sign_of_its_sum_and_is_counted():
    counts = signed_matrix(COUNTS)
    counts.values[2] = -counts.values[2]  # d0's "b" (value −1) now +1: the "b" bucket has both signs
    learner = NaiveBayes(vocabulary=1).fit(JOINT, Multiclass(), counts, Y, bias_row=0)
    assert learner.history_[0]["mixed_sign_rows"] == 1
    assert np.all(JOINT.emission_weights(learner.weights_)[2] > 0)  # sign −1 (sum −2) times log P < 0


# --- predictions and probabilities are Bayes' rule -----------------------------------------------------

TRAIN = ["good fun film", "great fun", "good acting good film", "bad plot", "awful boring plot", "bad bad acting",
         "boring film"]
LABELS = ["pos", "pos", "pos", "neg", "neg", "neg", "neg"]
TEST = ["good plot", "bad fun film", "awful", "unseen words only", "great great good"]


def words(text: str) -> list[str]:
    return re.findall(r"\b\w\w+\b", text.lower())


def direct_multinomial(alpha: float) -> np.ndarray:
    """log P(y) + Σ_w c_w log P(w|y) of every TEST document, from word counts (classes in sorted order)."""
    vocabulary = sorted({w for t in TRAIN for w in words(t)})
    classes = sorted(set(LABELS))
    counts = {y: Counter(w for t, label in zip(TRAIN, LABELS) if label == y for w in words(t)) for y in classes}
    out = np.zeros((len(TEST), len(classes)))
    for j, y in enumerate(classes):
        total = sum(counts[y].values())
        out[:, j] = np.log(LABELS.count(y) / len(LABELS))
        for i, text in enumerate(TEST):
            out[i, j] += sum(np.log((counts[y][w] + alpha) / (total + alpha * len(vocabulary)))
                             for w in words(text) if w in vocabulary)
    return out


def direct_bernoulli(alpha: float) -> np.ndarray:
    """log P(y) + Σ_{w ∈ V} log P(w present or absent | y) of every TEST document."""
    vocabulary = sorted({w for t in TRAIN for w in words(t)})
    classes = sorted(set(LABELS))
    out = np.zeros((len(TEST), len(classes)))
    for j, y in enumerate(classes):
        documents = [set(words(t)) for t, label in zip(TRAIN, LABELS) if label == y]
        out[:, j] = np.log(len(documents) / len(LABELS))
        for w in vocabulary:
            p = (sum(w in d for d in documents) + alpha) / (len(documents) + 2 * alpha)
            out[:, j] += [np.log(p) if w in set(words(t)) else np.log(1 - p) for t in TEST]
    return out


@pytest.mark.parametrize(("learner", "features", "direct"), [(NaiveBayes(alpha=0.7), "text-nb", direct_multinomial),
                                                             (BernoulliNaiveBayes(alpha=0.7), "text-presence",
                                                              direct_bernoulli)])
def test_scores_predictions_and_probabilities_are_bayes_rule(learner, features, direct):
    clf = Classifier(features, learner).fit(TRAIN, LABELS)
    expected = direct(0.7)
    np.testing.assert_allclose(clf.label_scores(TEST), expected, rtol=1e-6)  # float32 feature values
    assert clf.predict(TEST).tolist() == [clf.classes_[k] for k in expected.argmax(axis=1)]
    posterior = np.exp(expected - expected.max(axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(TEST), posterior / posterior.sum(axis=1, keepdims=True), rtol=1e-6)
    assert clf.history_[0]["mixed_sign_rows"] == 0


# --- the lecture's frogs ---------------------------------------------------------------------------------

# 14 frogs, 6 edible (+), reconstructed from the lecture's numbers: P(+) = 6/14, and for convexity = med,
# speed = med the unnormalised scores P(y) Π P(x_i|y) are 8/14 · 3/8 · 1/8 = 0.027 (inedible) and
# 6/14 · 2/6 · 1/6 = 0.024 (edible), so the frog is inedible.
EDIBLE = [("low", "low"), ("med", "low"), ("med", "high"), ("high", "low"), ("high", "med"), ("high", "high")]
INEDIBLE = [("low", "high"), ("low", "high"), ("low", "low"), ("med", "med"), ("med", "high"), ("med", "high"),
            ("high", "low"), ("high", "high")]
FROGS = FeatureSet.from_dict({"name": "frogs", "values": "count",
                              "template": [{"name": "bias"}, {"name": "featureset"}]})


def test_the_lecture_frogs():
    frogs = [{"convexity": c, "speed": s} for c, s in EDIBLE + INEDIBLE]
    lecture = NaiveBayes(alpha=1e-9, variant="multinomial", weighting="counts", vocabulary=1.0)  # α → 0: the MLE
    clf = Classifier(FROGS, lecture).fit(frogs, ["+"] * 6 + ["-"] * 8)
    assert clf.classes_.tolist() == ["+", "-"]
    # A frog without attributes has the bias feature alone: its score is the bias weight times its value, log P(y).
    np.testing.assert_allclose(np.exp(clf.label_scores([{}])[0]), [6 / 14, 8 / 14], rtol=1e-12)
    frog = {"convexity": "med", "speed": "med"}
    assert clf.predict([frog]).tolist() == ["-"]
    # Multinomial NB over the two attribute events estimates P(f|y) = count / (2 · N_y), half the lecture's
    # per-attribute P(x_i|y) = count / N_y: the joint score is the lecture's over 2² for both labels alike.
    joint_probability = np.exp(clf.label_scores([frog])[0]) * 2**2
    np.testing.assert_allclose(joint_probability, [6 / 14 * 2 / 6 * 1 / 6, 8 / 14 * 3 / 8 * 1 / 8], rtol=1e-6)
    assert np.round(joint_probability, 3).tolist() == [0.024, 0.027]
    np.testing.assert_allclose(clf.predict_proba([frog])[0], [8 / 17, 9 / 17], rtol=1e-6)  # the posterior is exact


# --- persistence, command line, refusals -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "features"), [("naive-bayes", "text-nb"), ("bernoulli-nb", "text-presence")])
def test_save_load_round_trip(tmp_path, name, features):
    clf = Classifier(features, make_learner(name, alpha=0.3)).fit(TRAIN, LABELS, dev=(TRAIN, LABELS))
    loaded = assert_classifier_round_trip(clf, TRAIN, LABELS, tmp_path)
    assert loaded.learner.alpha == 0.3 and loaded.learner.capabilities.probabilistic
    np.testing.assert_array_equal(loaded.predict_proba(TEST), clf.predict_proba(TEST))


def test_command_line_trains_with_alpha_and_refuses_options_of_others(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(TRAIN, LABELS)), encoding="utf-8")
    model = tmp_path / "nb.model"
    assert main(["train", "classifier", "--train", str(train), "--features", "text-nb", "--learner", "naive-bayes",
                 "--alpha", "0.5", "--output", str(model), "--quiet"]) == 0
    assert Classifier.load(model).learner.alpha == 0.5
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:  # by the parser
        main(["train", "classifier", "--train", str(train), "--output", str(model), "--learner", "naive-bayes",
              "--alpha", "0"])
    assert refused.value.code == 2
    assert "argument --alpha: must be positive and finite, got 0.0" in capsys.readouterr().err
    for argv, message in ((["--learner", "naive-bayes", "--margin", "1"], "--margin does not apply to learner 'naive-bayes'"),
                          (["--learner", "perceptron", "--alpha", "1"], "--alpha does not apply to learner 'perceptron'"),
                          (["--learner", "naive-bayes", "--epochs", "3"], "--epochs does not apply to learner 'naive-bayes'")):
        assert main(["train", "classifier", "--train", str(train), "--output", str(model), *argv]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("inf"), float("nan")])
def test_alpha_must_be_positive(alpha):
    for cls in (NaiveBayes, BernoulliNaiveBayes):
        with pytest.raises(ValueError, match="alpha must be positive"):
            cls(alpha=alpha)


def test_refuses_chains_a_missing_or_varying_bias_and_counts_for_bernoulli():
    X = signed_matrix(COUNTS)
    with pytest.raises(OptionValueError, match="needs the multiclass decoder, not 'viterbi'"):
        NaiveBayes().fit(JointFeatureMap(["neg", "pos"], [5, 9, 17, 40]), Viterbi(), X, Y, bias_row=0)
    with pytest.raises(OptionValueError, match="bias template"):
        NaiveBayes().fit(JOINT, Multiclass(), X, Y)
    with pytest.raises(OptionValueError, match="missing from some training instances"):
        NaiveBayes().fit(JOINT, Multiclass(), X, Y, bias_row=3)  # "c" is not in every document
    normalised = signed_matrix(COUNTS)
    normalised.values[0] = -0.5
    with pytest.raises(OptionValueError, match="varies between training instances"):
        NaiveBayes().fit(JOINT, Multiclass(), normalised, Y, bias_row=0)
    with pytest.raises(OptionValueError, match="bernoulli-nb needs binary feature values .* got 2"):
        BernoulliNaiveBayes().fit(JOINT, Multiclass(), X, Y, bias_row=0)
    with pytest.raises(TypeError, match="'naive-bayes' is not online"):
        Classifier("text-nb", "naive-bayes").fit(TRAIN, LABELS).partial_fit(TRAIN, LABELS)


@pytest.mark.parametrize("learner", ["naive-bayes", "bernoulli-nb"])
def test_any_feature_set_gets_the_constant_feature_it_needs(learner, tmp_path):
    """Without a bias template (or with a normalised one) the classifier appends its own constant feature: the
    model equals the one trained with the feature set's own unnormalised bias, and survives save/load; the
    default features (tf-idf, L2) train too, and Bernoulli NB on tf-idf values is Bernoulli NB on presence."""
    words = {"name": "words", "values": "binary", "template": [{"name": "words"}]}
    own = Classifier(FeatureSet.from_dict({**words, "template": [{"name": "bias"}, {"name": "words"}]}), learner)
    added = Classifier(FeatureSet.from_dict(words), learner)
    for clf in (own, added):
        clf.fit(TRAIN, LABELS)
    np.testing.assert_allclose(added.predict_proba(TEST), own.predict_proba(TEST), rtol=1e-12)
    assert added._extractor.bias_bucket() != own._extractor.bias_bucket()
    added.save(tmp_path / "m.model")
    np.testing.assert_array_equal(Classifier.load(tmp_path / "m.model").predict_proba(TEST), added.predict_proba(TEST))
    default = Classifier(learner=learner).fit(TRAIN, LABELS)  # tf-idf, L2: Bernoulli NB sees their presence
    assert default.predict(["good good fun", "bad boring"]).tolist() == ["pos", "neg"]
    if learner == "bernoulli-nb":
        presence = Classifier(FeatureSet.from_dict({**words, "values": "tfidf", "normalize": "l2"}), learner)
        np.testing.assert_allclose(presence.fit(TRAIN, LABELS).predict_proba(TEST), added.predict_proba(TEST),
                                   rtol=1e-12)


def test_movie_reviews_cross_validation(nltk_data_dir):
    """The acceptance number: 10-fold cross-validation on movie_reviews, unigram presence, ≥ 80%."""
    from structlin.catalog import load_documents
    from structlin.experiments import cross_validate

    documents = load_documents("movie_reviews")
    result = cross_validate(lambda: Classifier("text-presence", "naive-bayes"), [d.text for d in documents],
                            [d.label for d in documents], folds=10, seed=0)
    assert result["accuracy"] >= 0.80


def _accuracy(clf: Classifier, documents, labels) -> float:
    return float(np.mean(np.array(clf.predict(documents)) == np.array(labels)))


GRIDS = {"naive-bayes": [{"vocabulary": k, "weighting": g, "variant": v, "alpha": a} for k in SHARES
                         for g in WEIGHTINGS for v in VARIANTS for a in ALPHAS],
         "bernoulli-nb": [{"vocabulary": k, "alpha": a} for k in SHARES for a in ALPHAS]}


@pytest.mark.parametrize("learner", ["naive-bayes", "bernoulli-nb"])
def test_alpha_is_chosen_on_dev_among_the_candidates(learner):
    """alpha=None (and variant=None): each candidate scored on dev as the model with its settings would score;
    the best (the first on a tie: multinomial, the larger alpha) chosen, and the model is exactly the one
    trained with it."""
    dev = (["good film", "bad boring plot", "great acting", "awful film"], ["pos", "neg", "pos", "neg"])
    auto = Classifier("text-presence", learner).fit(TRAIN, LABELS, dev)
    grid = GRIDS[learner]
    fixed = [Classifier("text-presence", make_learner(learner, **setting)).fit(TRAIN, LABELS) for setting in grid]
    assert auto.learner.candidates_ == [{**s, "dev_accuracy": _accuracy(m, *dev)} for s, m in zip(grid, fixed)]
    scores = [c["dev_accuracy"] for c in auto.learner.candidates_]
    assert auto.learner.chosen_ == grid[scores.index(max(scores))]
    np.testing.assert_array_equal(auto.weights_, fixed[scores.index(max(scores))].weights_)


def test_complement_weights_by_hand():
    """Complement NB on three documents of two labels (α = 1, counts, bias feature b = 1): the weight of word f
    for label y is log((N − N_y + αV) / (N_f − N_fy + α)), and there is no prior (the bias weight is 0, where
    log P(y) would be log 1/3 and log 2/3)."""
    clf = Classifier("text-nb", make_learner("naive-bayes", alpha=1.0, variant="complement", weighting="counts"))
    clf.fit(["aa aa bb", "bb cc", "bb cc"], ["x", "z", "z"])
    # V = 3 (aa, bb, cc); label x's complement is "bb cc" twice (N = 4), label z's is "aa aa bb" (N = 3)
    expected = {"x": {"aa": np.log(7 / 1), "bb": np.log(7 / 3), "cc": np.log(7 / 3)},
                "z": {"aa": np.log(6 / 3), "bb": np.log(6 / 2), "cc": np.log(6 / 1)}}
    for label, words in expected.items():
        for word, weight in words.items():
            scores = clf.label_scores([word])[0] - clf.label_scores([""])[0]
            assert scores[clf.classes_.tolist().index(label)] == pytest.approx(weight)
    np.testing.assert_array_equal(clf.label_scores([""])[0], [0.0, 0.0])


def test_without_dev_the_settings_are_chosen_by_five_fold_cross_validation(tmp_path, nltk_data_dir):
    """No dev: each candidate's score is its accuracy over 5 folds of train (each label's documents cut into five
    runs in corpus order, :func:`~structlin.matrix.ordered_folds`), each fold's documents classified
    by a model estimated from the other four; the final model is estimated from all of train with the best
    candidate; the model file keeps the choice."""
    from structlin.catalog import load_documents

    documents = load_documents("qc", "train")[:1000]
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    auto = Classifier("text-presence", "naive-bayes").fit(texts, labels)  # no idf: the same features for any subset
    candidates = auto.learner.candidates_
    assert len(candidates) == len(SHARES) * len(WEIGHTINGS) * len(VARIANTS) * len(ALPHAS)
    fold = ordered_folds(np.array(labels), 5)
    folds = [np.flatnonzero(fold == k) for k in range(5)]
    for candidate in candidates[::13]:
        settings = {k: v for k, v in candidate.items() if k != "dev_accuracy"}
        correct = 0
        for held in folds:
            rest = np.setdiff1d(np.arange(len(texts)), held)
            clf = Classifier("text-presence", make_learner("naive-bayes", **settings))
            clf.fit([texts[k] for k in rest], [labels[k] for k in rest])
            correct += _accuracy(clf, [texts[k] for k in held], [labels[k] for k in held]) * len(held)
        assert candidate["dev_accuracy"] == pytest.approx(correct / len(texts), abs=1e-12)
    assert len({c["dev_accuracy"] for c in candidates}) > 1
    best = max(candidates, key=lambda c: c["dev_accuracy"])
    assert auto.learner.chosen_ == {k: v for k, v in best.items() if k != "dev_accuracy"}
    final = Classifier("text-presence", make_learner("naive-bayes", **auto.learner.chosen_))
    final.fit(texts, labels)
    np.testing.assert_array_equal(auto.weights_, final.weights_)
    auto.save(tmp_path / "nb.model")
    loaded = Classifier.load(tmp_path / "nb.model").learner
    assert (loaded.chosen_, loaded.candidates_, loaded.alpha, loaded.variant) == (auto.learner.chosen_,
                                                                                  auto.learner.candidates_, None, None)


def test_train_and_evaluate_show_the_choice(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(TRAIN * 3, LABELS * 3)), encoding="utf-8")
    model = tmp_path / "nb.model"
    assert main(["train", "classifier", "--train", str(train), "--learner", "naive-bayes", "--output", str(model)]) == 0
    assert "chosen from the data: vocabulary " in capsys.readouterr().out
    assert main(["evaluate", str(model), "--test", str(train), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["chosen"] == Classifier.load(model).learner.chosen_ and len(report["candidates"]) == len(GRIDS["naive-bayes"])
    assert main(["train", "classifier", "--train", str(train), "--learner", "naive-bayes", "--alpha", "1",
                 "--variant", "multinomial", "--vocabulary", "1", "--weighting", "counts", "--output", str(model)]) == 0
    assert "chosen from the data" not in capsys.readouterr().out
    assert main(["evaluate", str(model), "--test", str(train), "--json"]) == 0
    assert "chosen" not in json.loads(capsys.readouterr().out)


def test_no_tune_takes_the_fixed_alpha_and_the_last_epoch(tmp_path, capsys):
    """--no-tune: naive Bayes keeps alpha 1 instead of choosing it; a perceptron without dev keeps its last
    epoch instead of choosing the epochs on a held-out tenth."""
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(TRAIN * 3, LABELS * 3)), encoding="utf-8")
    model = tmp_path / "m.model"
    assert main(["train", "classifier", "--train", str(train), "--learner", "naive-bayes", "--no-tune", "--output",
                 str(model), "-q"]) == 0
    learner = Classifier.load(model).learner
    assert (learner.alpha, learner.chosen_, learner.candidates_) == (1.0, {}, [])
    assert main(["train", "classifier", "--train", str(train), "--epochs", "4", "--no-tune", "--output", str(model),
                 "-q"]) == 0
    loaded = Classifier.load(model)
    assert len(loaded.history_) == 4 and "epochs" not in loaded.learner.chosen_


def test_information_by_hand():
    """I(f; Y) of presence and label on four documents of two labels: a feature in both documents of x and in
    none of z tells the label exactly (I = log 2); a feature in every document tells nothing (I = 0); one in one
    document of x: I = (1/4) log 2 + (1/4) log(2/3) · 2 ... computed term by term."""
    present = np.array([[2.0, 0.0], [2.0, 2.0], [1.0, 0.0]])
    documents = np.array([2.0, 2.0])
    third = (0.25 * np.log(0.25 / (0.25 * 0.5))  # e = 1, y = x
             + 0.25 * np.log(0.25 / (0.75 * 0.5)) + 0.5 * np.log(0.5 / (0.75 * 0.5)))  # e = 0: y = x, y = z
    np.testing.assert_allclose(_information(present, documents), [np.log(2), 0.0, third], atol=1e-12)


@pytest.mark.parametrize("learner", ["naive-bayes", "bernoulli-nb"])
def test_a_vocabulary_keeps_the_most_informative_features(learner):
    """vocabulary = k keeps the round(k·V) features of highest I(f; Y) and gives the others no weight: here
    "good" and "bad" tell the label, "film" (in both labels' documents) does not."""
    train, labels = ["good film", "good film", "bad film", "bad film", "good", "bad"], ["p", "p", "n", "n", "p", "n"]
    full = Classifier("text-presence", make_learner(learner, vocabulary=1, alpha=1)).fit(train, labels)
    kept = Classifier("text-presence", make_learner(learner, vocabulary=2 / 3, alpha=1)).fit(train, labels)
    assert np.ptp(full.label_scores(["film"])[0] - full.label_scores([""])[0]) == 0  # uninformative by symmetry
    np.testing.assert_array_equal(kept.label_scores(["film"]), kept.label_scores([""]))  # dropped: no weight
    assert kept.predict(["good film", "bad film"]).tolist() == ["p", "n"]


@pytest.mark.parametrize("values, normalize", [("log-tfidf", "l2"), ("tfidf", "none"), ("binary", "l2")])
def test_multinomial_nb_models_the_counts_whatever_the_feature_sets_weighting(values, normalize):
    """capabilities.counts: the document model gives naive Bayes the counts of the feature set's templates, so
    the same templates under any value weighting train the same model as under plain counts."""
    def feature_set(values, normalize):
        return FeatureSet.from_dict({"name": "t", "values": values, "normalize": normalize,
                                     "template": [{"name": "words", "n": [1, 2]}]})

    learner = dict(alpha=0.5, variant="multinomial", vocabulary=1)
    weighted = Classifier(feature_set(values, normalize), make_learner("naive-bayes", **learner)).fit(TRAIN, LABELS)
    counted = Classifier(feature_set("count", "none"), make_learner("naive-bayes", **learner)).fit(TRAIN, LABELS)
    np.testing.assert_array_equal(weighted.weights_, counted.weights_)
    np.testing.assert_array_equal(weighted.label_scores(TEST), counted.label_scores(TEST))


def test_information_equals_the_dense_sum_over_every_cell():
    """The sparse form (labels a feature meets, the rest in closed form) against the definition summed over every
    (feature, label, presence) cell, on random tables with absent features, features of one label and features in
    every document."""
    rng = np.random.default_rng(7)
    documents = np.array([5.0, 9.0, 3.0, 7.0])
    present = np.floor(rng.random((40, 4)) * (documents + 1)) * (rng.random((40, 4)) < 0.4)
    present[0], present[1], present[2] = documents, 0, [5, 0, 0, 0]
    D, total = documents.sum(), present.sum(axis=1, keepdims=True)
    dense = np.zeros(len(present))
    for joint_count, marginal in ((present, total), (documents - present, D - total)):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = joint_count / D * np.log(joint_count * D / (marginal * documents))
        dense += np.where(joint_count > 0, term, 0.0).sum(axis=1)
    np.testing.assert_allclose(_information(present, documents), dense, rtol=1e-12, atol=1e-15)


# --- memory -------------------------------------------------------------------------------------------------------

# 4 labels, each with 60 words of its own, and 20 words every label shares: 260 features and the bias.
WORDS = {label: [f"{label}{k}" for k in range(60)] for label in "abcd"}
MANY_TEXTS = [" ".join(WORDS[label][(i * 7 + j) % 60] for j in range(5)) + f" s{i % 20}"
              for i in range(240) for label in ["abcd"[i % 4]]]
MANY_LABELS = ["abcd"[i % 4] for i in range(240)]


@pytest.mark.parametrize("learner", ["naive-bayes", "bernoulli-nb"])
def test_a_small_vocabularys_weights_are_pairs_equal_to_the_flat_vector(learner, monkeypatch, tmp_path):
    """Kept features fewer than half the rows: the model is their rows and the bias's as (feature, label) pairs, the
    same weights, scores and model file as the flat vector's."""
    pairs = Classifier("text-nb", make_learner(learner, vocabulary=0.1, alpha=0.5)).fit(MANY_TEXTS, MANY_LABELS)
    monkeypatch.setattr(naive_bayes._CountTable, "_stored_as_pairs", lambda table, k: False)
    flat = Classifier("text-nb", make_learner(learner, vocabulary=0.1, alpha=0.5)).fit(MANY_TEXTS, MANY_LABELS)
    assert isinstance(pairs.weights_, SparseWeights) and isinstance(flat.weights_, np.ndarray)
    assert len(pairs.weights_.keys) == (round(0.1 * 260) + 1) * 4
    np.testing.assert_array_equal(pairs.joint.emission_matrix(pairs.weights_),
                                  flat.joint.emission_matrix(flat.weights_))
    np.testing.assert_allclose(pairs.label_scores(MANY_TEXTS), flat.label_scores(MANY_TEXTS), rtol=1e-13)
    pairs.save(tmp_path / "pairs.model")
    flat.save(tmp_path / "flat.model")
    with zipfile.ZipFile(tmp_path / "pairs.model") as a, zipfile.ZipFile(tmp_path / "flat.model") as b:
        assert [(n, a.read(n)) for n in a.namelist() if n.endswith(".npy")] == [
            (n, b.read(n)) for n in b.namelist() if n.endswith(".npy")]


def test_settings_whose_weights_cannot_fit_are_not_tried_and_none_fitting_is_refused(monkeypatch):
    """The flat vector of every feature (261 rows × 4 labels, 16 bytes each with its file's values loaded: 16,704)
    does not fit in 6,000 bytes; a share of 0.3 (78 rows and the bias's as pairs, 16 bytes each: 5,056) does."""
    monkeypatch.setattr(memory, "available", lambda root=None: 6000)
    with pytest.warns(UserWarning, match=r"^naive-bayes: vocabulary shares 1.0 not tried: their weights \(260 features "
                                         r"× 4 labels\) need more than the 6.0 kB of memory available$"):
        model = Classifier("text-nb", "naive-bayes").fit(MANY_TEXTS, MANY_LABELS)
    assert {c["vocabulary"] for c in model.learner.candidates_} == set(SHARES) - {1.0}
    assert model.learner.chosen_["vocabulary"] < 1 and isinstance(model.weights_, SparseWeights)
    with pytest.raises(OptionValueError, match=r"^naive-bayes's model \(260 features × 4 labels\) needs 16.7 kB, more "
                                               r"than the 6.0 kB of memory available: keep fewer features "
                                               r"\(--vocabulary"):
        Classifier("text-nb", make_learner("naive-bayes", vocabulary=1.0)).fit(MANY_TEXTS, MANY_LABELS)


def test_a_negative_feature_value_is_refused_by_naive_bayes_and_leaves_it_out_of_auto():
    """Naive Bayes counts how often a feature occurs: a value below 0 (a matrix's, a feature dict's) is refused
    naming the document, template and value (it counted |value| silently); ``auto`` leaves it out with a
    warning and keeps the perceptron; Bernoulli NB models presence, which a negative value has too."""
    from structlin.errors import CorpusFormatError

    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 20)
    X = np.abs(rng.normal(size=(40, 3))) + (y == "b")[:, None]
    Classifier(learner="naive-bayes").fit(X, y)  # counts of any size 0 or more
    X[6, 1] = -0.5
    with pytest.raises(CorpusFormatError, match=r"^training data: document 7 has the value -0.5 of template "
                                                r"'featureset', and naive-bayes counts how often each feature occurs"):
        Classifier(learner="naive-bayes").fit(X, y)
    with pytest.warns(UserWarning, match=r"learner 'auto': naive-bayes left out: training document 7 has the value "
                                         r"-0.5 of template 'featureset', and it counts"):
        auto = Classifier(learner="auto", held_out=0.25).fit(X, y)
    assert auto.learner.name == "averaged-perceptron" and [c["learner"] for c in auto.learner.candidates_[:1]] == [
        "averaged-perceptron"]
    assert list(Classifier(learner="bernoulli-nb").fit(X, y).classes_) == ["a", "b"]  # trains: presence, not counts
