"""Learners: each owns a weight vector (or, the kernel perceptron, its dual coefficients) and talks
only to a decoder and the joint feature map.

Every learner follows :mod:`.protocol` (capabilities, options and history fields declared as data) and
trains through :mod:`.training`'s run.  Adding one is a module with its class and a line in
:data:`LEARNERS`; the command line, the model files and the contract test pick it up from there.
"""

from __future__ import annotations

from ..errors import UnknownNameError
from .kernel_perceptron import KernelPerceptron
from .maxent import MaxEnt
from .naive_bayes import BernoulliNaiveBayes, NaiveBayes
from .perceptron import MIRA, AveragedPerceptron, PassiveAggressive, Perceptron, VotedPerceptron
from .protocol import Capabilities, HistoryField, Learner, Option
from .svm import SVM
from .winnow import Winnow

LEARNERS: dict[str, type[Learner]] = {cls.name: cls for cls in (
    Perceptron, AveragedPerceptron, VotedPerceptron, PassiveAggressive, MIRA, MaxEnt, SVM, KernelPerceptron,
    NaiveBayes, BernoulliNaiveBayes, Winnow)}


def make_learner(name: str, **params) -> Learner:
    """The learner registered as ``name`` (any key of :data:`LEARNERS`) with its options; an option given
    as None takes the learner's default, an option it does not declare raises
    :class:`~structlin.errors.OptionValueError`."""
    if not isinstance(name, str):
        raise TypeError(f"a learner is named by a string (one of {', '.join(LEARNERS)}), got {name!r}")
    try:
        cls = LEARNERS[name]
    except KeyError:
        raise UnknownNameError("learner", name, LEARNERS) from None
    return cls(**{key: value for key, value in params.items() if value is not None})


__all__ = ["LEARNERS", "MIRA", "SVM", "AveragedPerceptron", "BernoulliNaiveBayes", "Capabilities", "HistoryField",
           "KernelPerceptron", "Learner", "MaxEnt", "NaiveBayes", "Option", "PassiveAggressive", "Perceptron",
           "VotedPerceptron", "Winnow", "make_learner"]
