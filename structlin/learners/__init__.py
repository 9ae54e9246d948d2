"""Learners: each owns a weight vector (or, the kernel perceptron, its dual coefficients) and talks
only to a decoder and the joint feature map."""

from __future__ import annotations

import inspect

from ..errors import UnknownNameError
from .kernel_perceptron import KernelPerceptron
from .maxent import MaxEnt
from .perceptron import AveragedPerceptron, Perceptron
from .svm import SVM

LEARNERS = {cls.name: cls for cls in (Perceptron, AveragedPerceptron, MaxEnt, SVM, KernelPerceptron)}


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


__all__ = ["LEARNERS", "SVM", "AveragedPerceptron", "KernelPerceptron", "MaxEnt", "Perceptron", "make_learner"]
