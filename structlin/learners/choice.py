"""``auto``: the learner chosen on held-out data among a few candidates, as a person would try two and keep the better.

No learner wins everywhere: on documents whose label few of their words tell (sentences by genre or by polarity,
names by gender) naive Bayes scores above the averaged perceptron, on the others the perceptron wins by up to seven
points (docs/benchmarks.md, "A learner chosen on held-out data").  So ``auto`` trains each candidate on the same
training part, scores it on the same dev data — the corpus's dev split, or the held-out share that chooses the epochs
without one — and keeps the best (ties: the first candidate).  A candidate's score is
the best it reaches there, as its own choices (the epochs, naive Bayes's settings) are made on the same data.

:class:`LearnerChoice` is what ``learner="auto"`` (or ``--learner auto``) names: the candidates, each made with the
options given that it declares.  A given option only some candidates declare keeps those (``--margin 2`` names
the perceptron); the model drops the candidates that cannot learn its task (a tagger keeps the perceptron).
"""

from __future__ import annotations

from ..errors import OptionValueError
from . import LEARNERS, make_learner
from .protocol import Learner, model_options

#: The name of the choice, where a learner's name goes.
AUTO = "auto"
#: The candidates of ``auto``, in the order ties go by.
CANDIDATES = ("averaged-perceptron", "naive-bayes")
#: Options every learner may be given without naming it (a display switch, the seed of the run).
_COMMON = ("progress", "seed")


class LearnerChoice:
    """The candidate learners of ``auto`` (untrained), of which a model keeps the one scoring best on dev."""

    def __init__(self, candidates: list[Learner]):
        if not candidates:
            raise OptionValueError(f"learner {AUTO!r} has no candidate left")
        self.candidates = candidates

    def __repr__(self) -> str:
        return f"LearnerChoice({', '.join(learner.name for learner in self.candidates)})"


def learner_choice(defaults: dict, given: dict) -> LearnerChoice:
    """The :data:`CANDIDATES` that declare every option ``given`` (but :data:`_COMMON`), each made with the model's
    ``defaults`` and the options given (:func:`~.protocol.model_options`); none left is refused, naming the
    options."""
    named = [name for name in given if name not in _COMMON]
    takers = [name for name in CANDIDATES if set(named) <= {option.name for option in LEARNERS[name].options}]
    if not takers:
        raise OptionValueError(f"no candidate of learner {AUTO!r} ({', '.join(CANDIDATES)}) takes every option "
                               f"given ({', '.join(named)}): name the learner")
    return LearnerChoice([make_learner(name, **model_options(LEARNERS[name], defaults, given)) for name in takers])
