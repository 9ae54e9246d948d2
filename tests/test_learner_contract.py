"""The contract every learner in LEARNERS keeps, whatever it is: declared options that construct, check,
clone and reach the command line; fit / predict / save / load on a classification task, and on a tagging
task when it declares ``sequences``; partial_fit exactly when it declares ``online``; history records
with the common fields and its declared fields.  A new learner is tested by registering it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from structlin import Classifier, Tagger
from structlin.cli import main
from structlin.errors import OptionValueError, StructlinError
from structlin.learners import LEARNERS, make_learner
from structlin.learners.protocol import FLOAT_MAX, Option

COMMON_FIELDS = {"step", "unit", "dev_accuracy", "seconds"}

# Three topics, each with its own words; every document is separable by its words.
_TOPICS = {"sport": "goal match team score", "food": "bread cheese soup salt", "tech": "chip code disk byte"}
DOCUMENTS = [f"{words.split()[k % 4]} {words.split()[(k + 1) % 4]} the a" for k in range(8)
             for words in _TOPICS.values()]
LABELS = [label for _ in range(8) for label in _TOPICS]
SENTENCES = [[("the", "DET"), ("dog", "NOUN"), ("runs", "VERB")], [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
             [("the", "DET"), ("cat", "NOUN"), ("runs", "VERB")], [("a", "DET"), ("dog", "NOUN"), ("sleeps", "VERB")]]


def _features(cls) -> str:
    """A feature set the learner can train on: with a bias feature and unnormalised binary values for a
    learner that needs the bias (naive Bayes keeps log P(y) there), word n-grams otherwise."""
    return "text-presence" if cls.capabilities.needs_bias else "text-words"


@pytest.mark.parametrize("name", LEARNERS)
def test_options_are_declared_checked_and_cloned(name):
    cls = LEARNERS[name]
    learner = cls()
    params = learner.get_params()
    assert list(params) == [option.name for option in cls.options]
    assert all(params[option.name] == option.default for option in cls.options if option.type is not object)
    clone = cls(**params)
    assert clone.get_params() == params and clone.params() == learner.params()
    assert set(learner.params()) == {option.name for option in cls.options if option.stored}
    for option in cls.options:
        bad = []
        if option.choices:
            bad.append("no-such-choice")
        if option.minimum is not None:
            bad.append(option.minimum if option.exclusive_minimum else option.minimum - 1)
        if option.type in (int, float) and not option.special:
            bad.append(math.nan if option.type is float else 1.5)
        if option.type is float and (option.maximum is None or option.maximum > FLOAT_MAX):
            bad.append(1e308)  # finite, but inf once the learner scales it by the data
        for value in bad:
            with pytest.raises(OptionValueError, match=option.name):
                cls(**{option.name: value})
    with pytest.raises(OptionValueError, match="has no option"):
        cls(no_such_option=1)


def test_a_number_option_is_refused_past_the_size_learners_can_scale():
    """1e308 is finite, but a margin or cost of that size overflows once scaled by the data (the run went on with
    NaN weights and a warning naming no option)."""
    margin = Option("margin", float, 1.0, "", minimum=0)
    assert margin.check(FLOAT_MAX) == FLOAT_MAX and margin.check(-0.0) == 0
    with pytest.raises(OptionValueError, match=r"margin must be non-negative and at most 1e\+12 in size, got 1e\+308"):
        margin.check(1e308)
    with pytest.raises(OptionValueError, match="margin must be non-negative and finite, got inf"):
        margin.check(math.inf)


@pytest.mark.parametrize("name", LEARNERS)
def test_classification_fit_predict_save_load(name, tmp_path):
    cls = LEARNERS[name]
    classifier = Classifier(_features(cls), make_learner(name, progress=False) if any(
        o.name == "progress" for o in cls.options) else make_learner(name))
    classifier.fit(DOCUMENTS, LABELS)
    predicted = classifier.predict(DOCUMENTS)
    assert np.mean(np.array(predicted) == np.array(LABELS)) >= 0.9
    assert classifier.classes_.tolist() == sorted(_TOPICS)
    history = classifier.history_
    assert history and all(COMMON_FIELDS <= set(record) for record in history)
    assert all(record[record["unit"]] == record["step"] == k for k, record in enumerate(history, 1))
    assert all(field.key in history[-1] for field in cls.history_fields)
    classifier.save(tmp_path / "m.model")
    loaded = Classifier.load(tmp_path / "m.model")
    np.testing.assert_array_equal(loaded.predict(DOCUMENTS), predicted)
    np.testing.assert_array_equal(loaded.decision_function(DOCUMENTS), classifier.decision_function(DOCUMENTS))
    assert loaded.learner.params() == classifier.learner.params()
    for hypothesis in cls.capabilities.hypotheses:  # every declared hypothesis predicts from the same file
        loaded.learner.set_params(hypothesis=hypothesis)
        assert np.mean(np.array(loaded.predict(DOCUMENTS)) == np.array(LABELS)) >= 0.9
    # predict_proba exists exactly for a probabilistic learner (scikit-learn's hasattr test), before fit too
    assert hasattr(loaded, "predict_proba") == hasattr(Classifier(learner=name), "predict_proba") == \
        cls.capabilities.probabilistic
    if cls.capabilities.probabilistic:
        np.testing.assert_allclose(loaded.predict_proba(DOCUMENTS).sum(axis=1), 1.0)
    else:
        with pytest.raises(StructlinError, match="gives no probabilities"):
            loaded.predict_proba(DOCUMENTS)


@pytest.mark.parametrize("name", LEARNERS)
def test_partial_fit_exactly_when_online(name):
    cls = LEARNERS[name]
    classifier = Classifier(_features(cls), name)
    if not cls.capabilities.online:
        with pytest.raises(TypeError, match="not online"):
            classifier.partial_fit(DOCUMENTS, LABELS, classes=sorted(_TOPICS))
        return
    for epoch in (1, 2):
        classifier.partial_fit(DOCUMENTS, LABELS, classes=sorted(_TOPICS))
        assert len(classifier.history_) == epoch and classifier.history_[-1]["step"] == epoch
    assert np.mean(np.array(classifier.predict(DOCUMENTS)) == np.array(LABELS)) >= 0.9


@pytest.mark.parametrize("name", LEARNERS)
def test_tagging_fit_predict_save_load(name, tmp_path):
    cls = LEARNERS[name]
    if not cls.capabilities.sequences:
        with pytest.raises(StructlinError, match="labels single instances"):
            Tagger("pos-basic", name).fit(SENTENCES)  # checked by fit: the constructor only stores parameters
        return
    for hypothesis in cls.capabilities.hypotheses or (None,):
        learner = make_learner(name, hypothesis=hypothesis)
        tagger = Tagger("pos-basic", learner)
        try:
            tagger.fit(SENTENCES * 5)
        except ValueError as err:  # a hypothesis that cannot decode chains says so, naming the decoder
            assert "multiclass decoder" in str(err)
            continue
        gold = [[tag for _, tag in sentence] for sentence in SENTENCES]
        words = [[word for word, _ in sentence] for sentence in SENTENCES]
        predicted = tagger.predict(words)
        assert np.mean(np.concatenate(predicted) == np.concatenate(gold)) >= 0.9
        assert all(COMMON_FIELDS <= set(record) for record in tagger.history_)
        tagger.save(tmp_path / "t.model")
        assert Tagger.load(tmp_path / "t.model").predict(words) == predicted


def test_every_learner_and_option_is_on_the_command_line(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    listed = capsys.readouterr().out
    assert all(f"  {name} " in listed for name in LEARNERS)
    for command in ("tagger", "classifier"):
        with pytest.raises(SystemExit):
            main(["train", command, "--help"])
        shown = capsys.readouterr().out
        for cls in LEARNERS.values():
            for option in cls.options:
                if option.cli:
                    assert option.command_line_flag in shown, (command, cls.name, option.name)
