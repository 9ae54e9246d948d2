"""Running an experiment: read the data once, train every system on train (the epoch chosen on dev),
score it on test once, and test each system's difference from the best one."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np

from ..errors import CorpusFormatError, StructlinError
from ..learners import LEARNERS, make_learner
from ..learners.protocol import model_options
from ..significance import (
    METRIC_SCORES,
    approximate_randomization,
    mcnemar,
    paired_bootstrap,
    unit_statistics,
)
from ..sources import hold_out
from ..tasks import TASKS
from ..tuning import metric_of
from .config import METRICS, ExperimentConfig, System

@dataclass
class Data:
    """The three splits, and where each came from (a catalog split, a file, a share of train)."""

    train: list
    dev: list
    test: list
    sources: dict[str, str]


@dataclass
class Outcome:
    """One trained system: its scores, its training, its model, and its test output for significance tests."""

    system: System
    train_units: int
    train_items: int
    test_score: float
    dev_score: float
    best_epoch: int | None
    history: list[dict]
    train_seconds: float
    model_bytes: int
    model_file: str  # the file's name (kept in the report's models/ folder with keep_models)
    weights_kept: int | None
    n_support: int | None
    test_report: dict
    statistics: np.ndarray = field(repr=False)  # (test units, k): the metric's sufficient statistics
    predicted: list[str] = field(repr=False)  # every test item's label, in order


@dataclass
class Comparison:
    """A system against a reference (the best one, or an ablation's full feature set): the difference of
    their test scores and two-sided p-values."""

    difference: float
    bootstrap: float
    randomization: float
    mcnemar: dict | None  # accuracy only: p_value, method, only_reference, only_system (items right in one only)


@dataclass
class ExperimentResult:
    """What the report shows: the data, the metric, the outcomes ranked best first and their comparisons."""

    config: ExperimentConfig
    command: str
    sources: dict[str, str]
    metric: str
    unit: str
    item: str
    sizes: dict[str, tuple[int, int]]
    gold: list[str]  # every test item's gold label, in order
    outcomes: list[Outcome]
    comparisons: list[Comparison | None]  # None for the best itself
    seconds: float


def read_data(config: ExperimentConfig) -> Data:
    """The train, dev and test data of ``config`` (dev held out of train when ``dev_fraction`` is set)."""
    read = TASKS[config.task].read
    if config.corpus:
        splits = {split: (config.corpus, split) for split in ("train", "dev", "test")}
    else:
        splits = {split: (path, None) for split, path in config.files.items()}
    sources = {split: f"{source}, split {name}" if name else source for split, (source, name) in splits.items()}
    loaded = {split: read(source, name, config.read_options) for split, (source, name) in splits.items()
              if split != "dev" or config.dev_fraction is None}
    if config.dev_fraction is not None:
        loaded["train"], loaded["dev"] = hold_out(loaded["train"], config.dev_fraction, config.seed)
        share = f"{100 * config.dev_fraction:g}%"
        sources["dev"] = f"{share} of {sources['train']}, held out at random (seed {config.seed})"
        sources["train"] += ", less the dev part"
    return Data(loaded["train"], loaded["dev"], loaded["test"], sources)


def choose_metric(config: ExperimentConfig, units: list) -> str:
    """The configured metric, or span F1 for BIO-style tags and accuracy otherwise (:func:`metric_of` the
    training units)."""
    bio = metric_of(TASKS[config.task], units) == "span_f1"
    if config.metric == "span_f1" and not bio:
        raise StructlinError(f"{config.path}: metric: span_f1 needs BIO-style gold tags (O, B-TYPE, I-TYPE, ...)")
    return config.metric or ("span_f1" if bio else "accuracy")


def subset(items: list, fraction: float, seed: int) -> list:
    """The first ``fraction`` (at least one) of a seeded permutation of ``items``, in corpus order: the
    subsets of one seed are nested."""
    if fraction == 1:
        return items
    order = np.random.default_rng(seed).permutation(len(items))
    return [items[k] for k in sorted(order[: max(1, round(fraction * len(items)))])]


def _model(config: ExperimentConfig, system: System, *, epochs: int | None = None):
    """The untrained model of ``system``, with the experiment's seed, no progress bar and the task's learner
    defaults (for the learners that take them); ``epochs`` replaces the configured one."""
    task = TASKS[config.task]
    cls = LEARNERS[system.learner]
    declared = {option.name for option in cls.options}
    options = model_options(cls, {"seed": config.seed, "progress": False, **task.learner_defaults},
                            system.learner_options())
    if epochs is not None and "epochs" in declared:
        options["epochs"] = epochs
    return task.new_model(system.features, make_learner(system.learner, **options), decoder=system.decoder,
                          bits=config.bits)


def check_systems(config: ExperimentConfig, data: Data) -> None:
    """Fit every system for one epoch on a few training examples, so that a learner, decoder and feature
    set that do not go together fail before any real training (naming the system)."""
    task = TASKS[config.task]
    sample = task.sample(data.train)
    for system in config.systems:
        try:
            task.fit(_model(config, system, epochs=1), sample, sample)
        except (StructlinError, ValueError) as err:
            raise StructlinError(f"{config.path}: grid: system {system.name!r}: {err}") from None


def run_system(config: ExperimentConfig, system: System, data: Data, metric: str, model_file: Path) -> Outcome:
    """Train one system, keep its best dev epoch, save it to ``model_file`` and score it on dev and test."""
    task = TASKS[config.task]
    model = _model(config, system)
    train = subset(data.train, system.fraction, config.seed)
    began = time.perf_counter()
    try:
        task.fit(model, train, data.dev)
    except CorpusFormatError as err:
        if system.fraction == 1:
            raise
        raise StructlinError(f"{config.path}: learning_curve.fractions: {system.fraction:g} of the training data "
                             f"({len(train)} {task.unit}{'s' * (len(train) != 1)}): {err}") from None
    seconds = time.perf_counter() - began
    model.save(model_file)
    size = model_file.stat().st_size
    score = METRIC_SCORES[metric]
    dev_statistics = unit_statistics(metric, task.labels(data.dev), task.predict(model, data.dev))
    predicted = task.predict(model, data.test)
    statistics = unit_statistics(metric, task.labels(data.test), predicted)
    return Outcome(
        system, len(train), task.items(train), float(score(statistics.sum(axis=0))),
        float(score(dev_statistics.sum(axis=0))), model.learner.best_epoch_, model.history_, seconds, size,
        model_file.name,
        None if model.weights_ is None else int(np.count_nonzero(model.weights_)),
        model.learner.support_size(), task.report(model, data.test).to_dict(), statistics,
        list(chain.from_iterable(predicted)))


def compare(reference: Outcome, other: Outcome, gold: list[str], metric: str, samples: int, seed: int) -> Comparison:
    """Two-sided tests of ``other``'s test score against ``reference``'s over units (and McNemar over items)."""
    resampling = {"samples": samples, "seed": seed}
    bootstrap, randomization = (test(reference.statistics, other.statistics, METRIC_SCORES[metric], **resampling)
                                for test in (paired_bootstrap, approximate_randomization))
    mcnemar_test = None
    if metric == "accuracy":
        result = mcnemar(*([p == g for p, g in zip(o.predicted, gold)] for o in (reference, other)))
        mcnemar_test = {"p_value": result.p_value, "method": result.method, "only_reference": result.only_a,
                        "only_system": result.only_b}
    return Comparison(other.test_score - reference.test_score, bootstrap, randomization, mcnemar_test)


def model_name(k: int) -> str:
    """The file name of the ``k``-th system's model (from 1) in an experiment's ``models`` folder."""
    return f"system-{k:02d}.model"


def run_experiment(config: ExperimentConfig, *, command: str, log: Callable[[str], None] = lambda line: None,
                   models: Path | None = None) -> ExperimentResult:
    """Train and score every system of ``config`` and compare each with the best; ``log`` gets a line per
    system.  Model files go to ``models`` (default: a temporary folder, removed at the end)."""
    began = time.perf_counter()
    task = TASKS[config.task]
    data = read_data(config)
    for split in ("train", "dev", "test"):
        if not getattr(data, split):
            raise StructlinError(f"{data.sources[split]}: no {task.unit}s")
    metric = choose_metric(config, data.train)
    check_systems(config, data)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="structlin-models-") as scratch:
        folder = models or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for k, system in enumerate(config.systems, 1):
            outcome = run_system(config, system, data, metric, folder / model_name(k))
            outcomes.append(outcome)
            log(f"[{k}/{len(config.systems)}] {system.name}: test {METRICS[metric]} {100 * outcome.test_score:.2f}, "
                f"dev {100 * outcome.dev_score:.2f} (epoch {outcome.best_epoch}), {outcome.train_seconds:.1f}s")
    outcomes.sort(key=lambda o: (-o.test_score, -o.dev_score, o.system.name))
    gold = list(chain.from_iterable(task.labels(data.test)))
    comparisons = [None] + [compare(outcomes[0], other, gold, metric, config.samples, config.seed)
                            for other in outcomes[1:]]
    splits = {"train": data.train, "dev": data.dev, "test": data.test}
    sizes = {split: (len(items), task.items(items)) for split, items in splits.items()}
    return ExperimentResult(config, command, data.sources, metric, task.unit, task.item, sizes, gold, outcomes,
                            comparisons, time.perf_counter() - began)
