"""Checks shared by the learners' tests: a trained model fits its data, and save/load gives the same model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from structlin import Classifier, Tagger

DOCS_EXTRA = ["good fun film", "bad plot", "new words only", ""]
UNSEEN_SENTENCE = ["the", "unseen", "dog"]


def assert_classifier_round_trip(clf: Classifier, documents: list[str], labels: list[str], tmp_path) -> Classifier:
    """``clf`` (trained with a dev set) predicts its training labels; the loaded copy scores new text
    identically and keeps the learner's parameters and history; the learner is not online."""
    assert clf.predict(documents).tolist() == labels
    assert clf.history_[0]["dev_accuracy"] is not None
    clf.save(tmp_path / "m.model")
    loaded = Classifier.load(tmp_path / "m.model")
    test = documents + DOCS_EXTRA
    np.testing.assert_array_equal(loaded.decision_function(test), clf.decision_function(test))
    assert loaded.learner.name == clf.learner.name and loaded.learner.params() == clf.learner.params()
    assert json.loads(json.dumps(loaded.history_)) == clf.history_
    with pytest.raises(TypeError, match=f"'{clf.learner.name}' is not online"):
        clf.partial_fit(documents, labels)
    return loaded


def assert_tagger_round_trip(tagger: Tagger, sentences, tmp_path) -> Tagger:
    """``tagger`` tags its training ``sentences`` right; the loaded copy has the same weights, tags
    unseen words the same and keeps the learner's parameters."""
    words = [[w for w, _ in s] for s in sentences]
    assert tagger.predict(words) == [[t for _, t in s] for s in sentences]
    tagger.save(tmp_path / "t.model")
    loaded = Tagger.load(tmp_path / "t.model")
    np.testing.assert_array_equal(loaded.weights_, tagger.weights_)
    assert loaded.predict(words + [UNSEEN_SENTENCE]) == tagger.predict(words + [UNSEEN_SENTENCE])
    assert loaded.learner.params() == tagger.learner.params()
    return loaded
