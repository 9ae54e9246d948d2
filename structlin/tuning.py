"""Choosing settings on dev data: one model per candidate, each scored on dev, ranked best first.

``structlin tune`` (one training set) and ``scripts/choose_defaults.py`` (a panel of corpora, the
procedure behind the defaults) use it.  The score is span F1 for BIO-style tags and accuracy otherwise.
"""

from __future__ import annotations

import itertools
import time

from .errors import OptionValueError, UnknownNameError
from .learners import LEARNERS, make_learner
from .learners.protocol import model_options
from .significance import METRIC_SCORES, unit_statistics
from .spans import is_bio_style
from .tasks import Task


def grid(learner: str, items: list[str]) -> list[dict]:
    """Every combination of the ``name=v1,v2,...`` items, each value read as the learner's option reads
    its command-line text (a bad name or value raises :class:`OptionValueError` naming it).  The options
    are those with a command-line flag (not the callback or the progress bar)."""
    if learner not in LEARNERS:
        raise UnknownNameError("learner", learner, LEARNERS)
    declared = {option.name: option for option in LEARNERS[learner].options if option.cli}
    axes, named = [], {}
    for item in items:
        name, equals, values = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        if not equals or not values:
            raise OptionValueError(f"--grid {item!r}: expected name=value1,value2,...")
        if name in named:
            raise OptionValueError(f"--grid {item!r}: {name} is given twice (also {named[name]!r}); give its values "
                                   "once, separated by commas")
        named[name] = item
        if name not in declared:
            raise OptionValueError(f"--grid {item!r}: learner {learner!r} has no option {name!r} (its options: "
                                   f"{', '.join(declared)})")
        axis = [(name, _read(declared[name], text.strip(), item)) for text in values.split(",")]
        keys, texts = [repr(value) for _, value in axis], [text.strip() for text in values.split(",")]
        twice = next((k for k, key in enumerate(keys) if key in keys[:k]), None)
        if twice is not None:
            first = texts[keys.index(keys[twice])]
            raise OptionValueError(f"--grid {item!r}: {first!r} and {texts[twice]!r} are the same value (each "
                                   "candidate is listed once)")
        axes.append(axis)
    return [dict(combination) for combination in itertools.product(*axes)]


def _read(option, text: str, item: str):
    """``text`` as ``option``'s value, checked."""
    try:
        if option.parse is not None:
            value = option.parse(text)
        elif option.type is bool:
            value = {"true": True, "false": False}[text.lower()]
        elif text in option.special or text == "none":
            value = None if text == "none" else text
        else:
            value = option.type(text)
        return option.check(value)
    except (KeyError, ValueError, TypeError) as err:
        if isinstance(err, OptionValueError):
            raise OptionValueError(f"--grid {item!r}: {err}") from None
        raise OptionValueError(f"--grid {item!r}: cannot read {text!r} as {option.name}") from None


def metric_of(task: Task, units: list) -> str:
    """span_f1 for BIO-style tags, accuracy otherwise."""
    bio = task.decoders and is_bio_style(itertools.chain.from_iterable(task.labels(units)))
    return "span_f1" if bio else "accuracy"


def dev_score(task: Task, model, dev: list) -> float:
    """The model's score on ``dev`` (:func:`metric_of`)."""
    metric = metric_of(task, dev)
    statistics = unit_statistics(metric, task.labels(dev), task.predict(model, dev))
    return float(METRIC_SCORES[metric](statistics.sum(axis=0)))


def score_candidates(task: Task, learner: str, candidates: list[dict], train: list, dev: list, *,
                     settings: dict, new_model, log=lambda line: None, fit_dev: bool = True) -> list[dict]:
    """Train a model per candidate on ``train`` (dev for early stopping; without, ``fit_dev=False``, the model
    chooses on its own held-out data) and score it on ``dev``.

    ``settings`` are learner options every candidate shares (the seed, a progress switch, options given beside the
    grid), with the task's learner defaults (:func:`~structlin.learners.protocol.model_options`); ``new_model(learner)``
    builds the untrained model.  Returns ``{"options", "score", "metric", "best_epoch", "seconds"}`` per
    candidate, best first (ties: the earlier candidate)."""
    results = []
    for options in candidates:
        model = new_model(make_learner(learner, **model_options(LEARNERS[learner], task.learner_defaults,
                                                                {**settings, **options})))
        began = time.perf_counter()
        task.fit(model, train, dev if fit_dev else None)
        result = {"options": options, "score": dev_score(task, model, dev), "metric": metric_of(task, dev),
                  "best_epoch": model.learner.best_epoch_, "seconds": round(time.perf_counter() - began, 1)}
        results.append(result)
        log(result)
    return sorted(results, key=lambda r: -r["score"])
