"""The two tasks a model learns, as data: tagging sentences and classifying documents.

A :class:`Task` says what a unit (sentence, document) and an item (token, document) are, which model
learns it, how its units are read, labelled, fitted on, predicted and scored, and what the task
sets on a learner by default.  The CLI's ``train``, ``evaluate`` and ``compare`` and the experiment
runner take a task and follow one path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .errors import CorpusFormatError
from .learners.choice import AUTO
from .matrix import ordered_held_out
from .models import Classifier, Tagger, TextOrder
from .sources import CorpusStream, read_documents, read_sentences, stream_documents, stream_sentences


@dataclass(frozen=True)
class Task:
    """One task: its model class and what each step does with a list of units.

    ``labels(units)`` gives every unit's labels (one per item); ``fit(model, train, dev)`` trains
    (``dev`` may be None); ``predict(model, units)`` gives the labels the model predicts, shaped as
    ``labels``; ``report(model, units, progress)`` the model's evaluation report (``progress(n)`` called as
    each ``n`` units are predicted); ``sample(units)`` a few units that still make a trainable set (to check a
    configuration before real training).
    ``learner_defaults`` are the model's own defaults for learner settings (a tagger's batch size);
    ``decoders`` says whether the task takes a decoder (and a tag dictionary: it labels sequences); ``column``
    whether a model records the tag column it was trained on; ``streams`` whether its model trains from a corpus
    on disk (``stream=True``), reading the units with ``stream`` (re-iterable, never held) instead of ``read``;
    ``default_learner`` is the command line's default learner where it may choose one (``train``,
    ``cross-validate``; None: the model's)."""

    kind: str
    unit: str
    item: str
    model: type
    read: Callable
    labels: Callable[[list], list[list[str]]]
    fit: Callable[[object, list, list | None], None]
    predict: Callable[[object, list], list[list[str]]]
    report: Callable[..., object]
    sample: Callable[[list], list]
    learner_defaults: dict = field(default_factory=dict)
    decoders: bool = False
    column: bool = False
    stream: Callable | None = None
    default_learner: str | None = None

    @property
    def streams(self) -> bool:
        return self.stream is not None

    def items(self, units: list) -> int:
        """How many items (tokens, documents) ``units`` hold."""
        return sum(len(labels) for labels in self.labels(units))

    def hold_out(self, units: list, fraction: float, seed: int) -> tuple[list, list]:
        """``(rest, held)``: the ``fraction`` of ``units`` a model holds out when it has no dev — of each label's
        documents (of all the sentences, for a tagger) one run in the order given, the seed choosing which, or a
        random share of documents sorted by their texts (:func:`~structlin.matrix.ordered_held_out`,
        :class:`~structlin.models.TextOrder`) — and the rest, both in order."""
        labels, order = None, TextOrder()
        if not self.decoders:
            labels = np.array([labels[0] for labels in self.labels(units)])
            order.add([unit.text for unit in units], labels.tolist())
        held = ordered_held_out(len(units), fraction, labels, seed, in_order=not order.sorted)
        return [u for u, h in zip(units, held) if not h], [u for u, h in zip(units, held) if h]

    def default(self, parameter: str):
        """The default of the model constructor's ``parameter`` (the model class stays the one place it is set)."""
        return inspect.signature(self.model).parameters[parameter].default

    def new_model(self, features, learner, *, decoder: str | None = None, bits: int, held_out: float | None = None,
                  tag_dictionary: int | None = None, stream: bool = False):
        """An untrained model of this task (``features`` None: chosen from the training data by the model;
        ``decoder``, ``tag_dictionary`` and ``stream`` only for a task that takes them, None: the model's default;
        ``held_out``: the model's)."""
        if stream and not self.streams:
            raise ValueError(f"a {self.kind} trains from its {self.unit}s in memory; it does not stream")
        if self.decoders:
            return self.model(features, learner, decoder or self.default("decoder"), bits=bits, held_out=held_out,
                              tag_dictionary=tag_dictionary, **({"stream": True} if stream else {}))
        if decoder not in (None, "multiclass") or tag_dictionary is not None:
            raise ValueError(f"a {self.kind} labels each {self.unit} on its own; it takes no decoder ({decoder!r}) "
                             "and no tag dictionary")
        return self.model(features, learner, bits=bits, held_out=held_out, **({"stream": True} if stream else {}))


def _fit_documents(model: Classifier, train: list | CorpusStream, dev: list | None) -> None:
    """Fit on labelled documents: a list, or a stream of them (read as the model's ``stream`` reads it)."""
    dev = None if dev is None else ([d.text for d in dev], [d.label for d in dev])
    if isinstance(train, CorpusStream):
        model.fit(train, None, dev)
    else:
        model.fit([d.text for d in train], [d.label for d in train], dev)


def _first_of_each_label(documents: list) -> list:
    """The first document of every label (a classifier needs two labels or more)."""
    first = {}
    for document in documents:
        first.setdefault(document.label, document)
    return list(first.values())


def _gold_tags(sentences: list) -> list[list[str]]:
    """The tags of every sentence, the gold standard of an evaluation; a sentence without tags (read as plain
    text) is refused where it was read."""
    for k, sentence in enumerate(sentences):
        if sentence.tags is None:
            raise CorpusFormatError(sentence.path or "the input", sentence.line, f"sentence {k + 1} has no tags (an "
                                    "evaluation needs the gold tags: a tagged file, not --format text)")
    return [list(s.tags) for s in sentences]


TAGGING = Task(
    kind="tagger", unit="sentence", item="token", model=Tagger, read=read_sentences,
    labels=_gold_tags,
    fit=lambda model, train, dev: model.fit(train, dev),
    predict=lambda model, sentences: model.predict(sentences),
    report=lambda model, sentences, progress=None: model.report(sentences, progress=progress),
    sample=lambda sentences: sentences[:4],
    learner_defaults=Tagger.learner_defaults, decoders=True, column=True, stream=stream_sentences)

CLASSIFICATION = Task(
    kind="classifier", unit="document", item="document", model=Classifier, read=read_documents,
    labels=lambda documents: [[d.label] for d in documents],
    fit=_fit_documents,
    predict=lambda model, documents: [[label] for label in model.classify_many([d.text for d in documents])],
    report=lambda model, documents, progress=None: model.report([d.text for d in documents],
                                                                [d.label for d in documents], progress=progress),
    sample=_first_of_each_label,
    learner_defaults=Classifier.learner_defaults, stream=stream_documents, default_learner=AUTO)

#: The share of the training data held out to choose the epochs (and what a learner chooses on dev) when
#: there is no dev: ``structlin train``, ``cross-validate`` and ``tune`` use it as a model's ``held_out``.
HELD_OUT = 0.1

#: The tasks by model kind (``Tagger.kind``, ``Classifier.kind``: what a model file records).
TASKS = {task.kind: task for task in (TAGGING, CLASSIFICATION)}
