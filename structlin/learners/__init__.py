"""Learners: each owns a weight vector (or, the kernel perceptron, its dual coefficients) and talks
only to a decoder and the joint feature map."""

from __future__ import annotations

import inspect

from ..errors import UnknownNameError
from .kernel_perceptron import KernelPerceptron
from .maxent import MaxEnt
from .naive_bayes import BernoulliNaiveBayes, NaiveBayes
from .perceptron import MIRA, AveragedPerceptron, PassiveAggressive, Perceptron, VotedPerceptron
from .svm import SVM
from .winnow import Winnow

LEARNERS = {cls.name: cls for cls in (Perceptron, AveragedPerceptron, VotedPerceptron, PassiveAggressive, MIRA, MaxEnt, SVM,
                                         KernelPerceptron, NaiveBayes, BernoulliNaiveBayes, Winnow)}


def make_learner(name: str, **params):
    """A learner by name (``perceptron``, ``averaged-perceptron``, ``maxent``, ``svm``) with its hyper-parameters;
    a parameter given as None takes the learner's default."""
    try:
        cls = LEARNERS[name]
    except KeyError:
        raise UnknownNameError("learner", name, LEARNERS) from None
    params = {key: value for key, value in params.items() if value is not None}
    accepted = inspect.signature(cls).parameters
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"learner {name!r} has no option {', '.join(unknown)}")
    return cls(**params)


__all__ = ["LEARNERS", "MIRA", "SVM", "AveragedPerceptron", "BernoulliNaiveBayes", "KernelPerceptron", "MaxEnt",
           "NaiveBayes", "PassiveAggressive", "Perceptron", "VotedPerceptron", "Winnow", "make_learner"]
