"""Learners: each owns a weight vector and talks only to a decoder and the joint feature map."""

from __future__ import annotations

from ..errors import UnknownNameError
from .maxent import MaxEnt
from .perceptron import AveragedPerceptron, Perceptron
from .svm import SVM

LEARNERS = {cls.name: cls for cls in (Perceptron, AveragedPerceptron, MaxEnt, SVM)}


def make_learner(name: str, **params):
    """A learner by name (``perceptron``, ``averaged-perceptron``, ``maxent``, ``svm``) with its hyper-parameters;
    a parameter given as None takes the learner's default."""
    try:
        cls = LEARNERS[name]
    except KeyError:
        raise UnknownNameError("learner", name, LEARNERS) from None
    return cls(**{key: value for key, value in params.items() if value is not None})


__all__ = ["LEARNERS", "SVM", "AveragedPerceptron", "MaxEnt", "Perceptron", "make_learner"]
