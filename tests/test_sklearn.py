"""The models under scikit-learn's own tools: clone, GridSearchCV, cross_val_score, Pipeline, check_is_fitted, its
metrics and its estimator checks.  structlin never imports scikit-learn at run time; without it this module is
skipped (tests/test_classifier.py tests the same protocol without it)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", minversion="1.6")  # the estimator tags and check_estimator's callback

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError as ScikitNotFittedError  # noqa: E402
from sklearn.metrics import accuracy_score, roc_auc_score  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from structlin import Classifier, Tagger  # noqa: E402
from structlin.catalog import load_documents  # noqa: E402
from structlin.errors import NotFittedError  # noqa: E402
from structlin.learners import make_learner  # noqa: E402

DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
BINARY = [1, 1, 0, 0, 1, 0]
TOY = [[("the", "DET"), ("dog", "NOUN"), ("barks", "VERB")], [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
       [("the", "DET"), ("cat", "NOUN"), ("barks", "VERB")], [("dogs", "NOUN"), ("sleep", "VERB")]] * 2

#: scikit-learn's estimator checks that ``Classifier(features="numeric")`` fails on purpose, each with the reason.
#: Checks scikit-learn skips itself (pandas objects without pandas, the array API without SCIPY_ARRAY_API) are
#: not listed; every other check passes.
EXPECTED_FAILED_CHECKS = {
    "check_estimators_unfitted": "structlin raises its own NotFittedError (a ValueError and an AttributeError, as "
                                 "scikit-learn's is): scikit-learn's class would need scikit-learn at run time",
    "check_classifiers_regression_target": "labels are of any hashable type, floats included (ratings 0.5 and 1.5 are "
                                           "two classes), so a continuous target is not refused",
    "check_supervised_y_2d": "a column-vector y is refused with a ValueError (one label per document), not "
                             "flattened with scikit-learn's DataConversionWarning",
}


@pytest.fixture(scope="module")
def questions(nltk_data_dir) -> tuple[list[str], list[str]]:
    """300 questions of the TREC question classification corpus and their coarse labels."""
    documents = load_documents("qc", "train")[:300]
    return [d.text for d in documents], [d.label for d in documents]


def test_estimator_checks():
    """check_estimator on the numeric classifier: exactly the checks of EXPECTED_FAILED_CHECKS fail."""
    outcomes = {}

    def record(**outcome):
        if outcome["status"] == "failed":
            outcomes[outcome["check_name"]] = repr(outcome["exception"])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checks' own warnings (skipped checks, fuzzed parameters)
        check_estimator(Classifier(features="numeric"), on_fail=None, on_skip=None, callback=record)
    unexpected = {name: error for name, error in outcomes.items() if name not in EXPECTED_FAILED_CHECKS}
    assert not unexpected, unexpected
    assert set(outcomes) == set(EXPECTED_FAILED_CHECKS), "checks that pass now: " + ", ".join(
        sorted(set(EXPECTED_FAILED_CHECKS) - set(outcomes)))


def test_clone_keeps_every_parameter():
    """clone gives an untrained model of the same parameters: a learner's options given to the model, a learner
    instance (copied, with its options), a tagger's decoder; the clone of a trained model is untrained."""
    for model in (Classifier("text-unigram", "maxent", l2=0.01, epochs=5, bits=16),
                  Classifier(learner=make_learner("naive-bayes", alpha=0.5), held_out=0.2),
                  Tagger("pos-basic", "svm", "greedy", C=0.5, epochs=2, bits=14)):
        copy = clone(model)
        assert type(copy) is type(model) and repr(copy) == repr(model)
        given = {k: v for k, v in model.get_params().items() if k != "learner"}
        assert {k: v for k, v in copy.get_params().items() if k != "learner"} == given
    trained = clone(Tagger("pos-basic", "svm", "greedy", C=0.5, epochs=2, bits=14)).fit(TOY)
    assert trained.learner.C == 0.5 and trained.decoder.name == "greedy"
    check_is_fitted(trained)
    with pytest.raises(ScikitNotFittedError):
        check_is_fitted(clone(trained))


def test_grid_search_and_cross_validation(questions):
    texts, labels = questions
    search = GridSearchCV(Classifier(), {"epochs": [1, 3]}, cv=3).fit(texts, labels)
    assert search.best_params_["epochs"] in (1, 3) and 0.5 < search.best_score_ <= 1
    assert search.best_estimator_.get_params()["epochs"] == search.best_params_["epochs"]
    assert search.predict(texts[:5]).tolist() == search.best_estimator_.predict(texts[:5]).tolist()
    scores = cross_val_score(Classifier("text-words", epochs=3), texts, labels, cv=3)
    assert scores.shape == (3,) and 0.5 < scores.mean() <= 1
    tagger_scores = cross_val_score(Tagger("pos-basic", epochs=2, bits=14), TOY, cv=2)  # token accuracy
    assert tagger_scores.shape == (2,) and tagger_scores.min() > 0.5


def test_pipeline_and_integer_labels(questions):
    texts, labels = questions
    numbers = sorted(set(labels))
    y = np.array([numbers.index(label) for label in labels])
    pipeline = Pipeline([("clf", Classifier("text-words", epochs=3))]).fit(texts, y)
    classifier = pipeline.named_steps["clf"]
    assert classifier.classes_.dtype.kind == "i" and classifier.classes_.tolist() == list(range(len(numbers)))
    predicted = pipeline.predict(texts)
    assert predicted.dtype.kind == "i" and accuracy_score(y, predicted) == np.mean(predicted == y) > 0.8
    assert pipeline.score(texts, y) == classifier.score(texts, y.tolist()) == np.mean(predicted == y)


def test_binary_decision_function_is_one_column():
    clf = Classifier("text-unigram", epochs=5).fit(DOCS, BINARY)
    decision = clf.decision_function(DOCS)
    assert decision.shape == (6,) and roc_auc_score(BINARY, decision) == 1.0
    assert clf.predict(DOCS).tolist() == clf.classes_[(decision > 0).astype(int)].tolist() == BINARY
    maxent = Classifier("text-unigram", "maxent", epochs=30).fit(DOCS, BINARY)
    assert maxent.predict_proba(DOCS).shape == (6, 2) and roc_auc_score(BINARY, maxent.predict_proba(DOCS)[:, 1]) == 1


def test_errors_are_what_scikit_learn_expects():
    with pytest.raises(ValueError, match="training data: 6 documents but 5 labels"):
        Classifier().fit(DOCS, BINARY[:5])
    unfitted = Classifier()
    with pytest.raises(NotFittedError) as caught:
        unfitted.predict(DOCS)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AttributeError)
    with pytest.raises(ScikitNotFittedError):
        check_is_fitted(unfitted)
    check_is_fitted(unfitted.fit(DOCS, BINARY))
