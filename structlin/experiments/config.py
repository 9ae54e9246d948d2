"""Experiment configurations: a TOML file naming the data, a grid of systems and a mode, checked whole
(one-line errors naming the file and the key) before anything trains.

The schema; any other key is an error, and relative paths are relative to the config file's folder::

    name = "pos-ablation"        # required; the report folder is experiments/<name>/ unless --output
    description = "..."          # optional; the report's first paragraph
    task = "tagger"              # required: "tagger" (a tag per token) or "classifier" (a label per document)

    # The data: a catalog corpus (its train, dev and test splits) ...
    corpus = "ud-english-ewt"
    # ... or files: train and test, and dev (optional with dev_fraction)
    train = "data/train.conllu"
    dev = "data/dev.conllu"
    test = "data/test.conllu"
    format = "conllu"            # files only: conllu, word-tag, slash, columns (tagger); folders, tar, tsv, csv,
                                 # fasttext, svmlight (classifier); default: guessed from the file name
    column = "upos"              # tagger: the tag column (CoNLL-U upos/xpos; conll2000: "chunk")
    columns = ["word", "pos", "chunk"]   # format "columns": the files' column names
    dev_fraction = 0.1           # no dev data: hold out this share of train (seeded) for epoch selection
    strip = ["headers"]          # classifier: Usenet parts to drop (headers, footers, quotes)
    granularity = "fine"         # classifier on qc: coarse or fine labels
    encoding = "latin-1"         # files only: their text encoding (default utf-8)
    header = true                # classifier TSV/CSV files: the first row names the columns (default: detected)
    label_column = "label"       # classifier TSV/CSV files: the label column, a header name or an index from 0
    text_column = 0              # ... and the text column (default: named by the header, else label 0, text 1)

    metric = "accuracy"          # what ranks the systems: "accuracy" (of tokens or documents) or "span_f1"
                                 # (chunks of BIO-style tags); default: span_f1 when the gold tags are BIO
    seed = 0                     # shuffling, dev hold-out, learning-curve subsets, significance tests
    bits = 22                    # feature hash size 2**bits
    samples = 10000              # paired bootstrap samples and approximate randomization shuffles
    keep_models = false          # true: keep every model file in <report>/models/

    [grid]                       # the systems: every combination of the values listed
    features = ["pos-basic", "pos-rich"]        # feature set names or TOML files
    learner = ["averaged-perceptron", "maxent"]
    decoder = ["viterbi"]        # tagger only; default ["viterbi"]
    epochs = [10]                # any other key: a learner option (see structlin.learners), for every learner listed
    [grid.maxent]                # a table named after a listed learner: options for that learner only
    l2 = [0.5, 1.0]

    [ablation]                   # optional: the full feature set, then each [[template]] entry dropped in turn
    features = "pos-rich"        # (instead of grid.features)

    [learning_curve]             # optional: train on seeded, nested subsets of the training data
    fractions = [0.1, 0.2, 0.5, 1.0]

A grid value may be a single value or a list.  A learner option in ``[grid]`` must be one that every
listed learner takes; options of one learner go in its own table.  ``seed`` is the experiment's, so
it is no grid option.  ``[ablation]`` and ``[learning_curve]`` exclude each other.
"""

from __future__ import annotations

import itertools
import re
import typing
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..catalog import Catalog
from ..decoders import DECODERS
from ..errors import StructlinError
from ..hashing import check_training_bits
from ..learners import LEARNERS, make_learner
from ..readers import FILE_FORMATS
from ..sources import DOCUMENT_FORMATS, ReadOptions
from ..templates import FeatureSet, TemplateSpec, feature_set_files, parse_toml, toml_text

TASKS = ("tagger", "classifier")
METRICS = {"accuracy": "accuracy", "span_f1": "span F1"}  # name → as reports write it
_EXPERIMENT_OPTIONS = {"seed", "progress"}  # set by the experiment for every system
_TOP_KEYS = {"name", "description", "task", "corpus", "train", "dev", "test", "format", "column", "columns",
             "dev_fraction", "strip", "granularity", "encoding", "header", "label_column", "text_column", "metric",
             "seed", "bits", "samples", "keep_models", "grid", "ablation", "learning_curve"}
_CLASSIFIER_KEYS = ("strip", "granularity", "header", "label_column", "text_column")


@dataclass(frozen=True)
class System:
    """One model of an experiment: a feature set, a learner with its options, a decoder (taggers), the
    template the ablation dropped (or ``None``) and the share of the training data it learns from."""

    features: FeatureSet
    learner: str
    decoder: str | None
    options: dict
    ablated: TemplateSpec | None = None
    fraction: float = 1.0
    name: str = ""

    def learner_options(self) -> dict:
        """The options to build the learner with (see :func:`learner_options`)."""
        return learner_options(self.learner, self.options)

    def settings(self) -> dict:
        """The system's settings as JSON: names, options, the dropped template's label and the fraction."""
        return {"features": self.features.name, "learner": self.learner, "decoder": self.decoder,
                "options": dict(self.options), "ablated": template_label(self.ablated) if self.ablated else None,
                "train_fraction": self.fraction}


@dataclass(frozen=True)
class ExperimentConfig:
    """A checked experiment: where the data is, how it is scored, and every system to train.

    ``files`` maps train/dev/test to paths (no ``corpus``); ``metric`` is ``None`` until the data
    decides it; ``mode`` is ``"grid"``, ``"ablation"`` or ``"learning-curve"``; ``raw`` is the file as read.
    """

    path: Path
    raw: dict
    name: str
    description: str
    task: str
    corpus: str | None
    files: dict[str, str]
    read_options: ReadOptions
    dev_fraction: float | None
    metric: str | None
    seed: int
    bits: int
    samples: int
    keep_models: bool
    mode: str
    systems: tuple[System, ...] = field(repr=False)
    #: The feature sets' TOML files and the files they read (word clusters): inputs an output must not replace.
    feature_files: tuple[Path, ...] = ()


def template_label(spec: TemplateSpec) -> str:
    """A feature template entry as a reader sees it: its key, and the offsets it applies at."""
    if spec.offsets == (0,):
        return spec.key
    return f"{spec.key} @ {' '.join(f'{o:+d}' if o else '0' for o in spec.offsets)}"


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and check an experiment file (:class:`StructlinError` naming the file and key otherwise)."""
    path = Path(path)
    return _Checker(path, parse_toml(toml_text(path, "the experiment"), str(path))).config()


class _Checker:
    """Checks one parsed experiment file; every error names the file and the key."""

    def __init__(self, path: Path, raw: dict):
        self.path, self.raw = path, raw
        self.feature_files: list[Path] = []

    def fail(self, key: str, message: str) -> typing.NoReturn:
        raise StructlinError(f"{self.path}: {key}: {message}")

    def keys(self, table: dict, allowed, where: str) -> None:
        unknown = sorted(set(table) - set(allowed))
        if unknown:
            self.fail(f"{where}{unknown[0]}", f"unknown key (accepted: {', '.join(sorted(allowed))})")

    def value(self, table: dict, key: str, kinds: type | tuple[type, ...], default=None, *, where: str = ""):
        """``table[key]`` checked to be of ``kinds`` (an int passes as a float, a bool never as a number)."""
        if key not in table:
            return default
        value = _typed(table[key], kinds)
        if value is None:
            self.fail(where + key, f"expected {_kind_names(kinds)}, got {table[key]!r}")
        return value

    def required(self, key: str, kinds) -> object:
        if key not in self.raw:
            self.fail(key, "missing")
        return self.value(self.raw, key, kinds)

    def choice(self, key: str, value, accepted) -> None:
        if value is not None and value not in accepted:
            self.fail(key, f"{value!r} is not one of {', '.join(accepted)}")

    # --- the whole file -----------------------------------------------------------------------------

    def config(self) -> ExperimentConfig:
        raw = self.raw
        self.keys(raw, _TOP_KEYS, "")
        name = self.required("name", str)
        if not re.fullmatch(r"[\w.-]+", name) or set(name) == {"."}:  # '..' is the folder above, '.' this one
            self.fail("name", f"{name!r} must be a folder name (letters, digits, '.', '_', '-'; not '.' or '..')")
        task = self.required("task", str)
        self.choice("task", task, TASKS)
        metric = self.value(raw, "metric", str)
        self.choice("metric", metric, METRICS)
        if metric == "span_f1" and task != "tagger":
            self.fail("metric", "span_f1 scores chunks of tag sequences: it needs task = \"tagger\"")
        for key, least in (("seed", 0), ("samples", 1)):
            if self.value(raw, key, int, least) < least:
                self.fail(key, f"must be at least {least}")
        try:
            check_training_bits(self.value(raw, "bits", int, 22))
        except ValueError as err:  # bits in 1..TRAINING_BITS_MAX
            self.fail("bits", str(err))
        corpus, files, read_options, dev_fraction = self.data(task)
        mode = "ablation" if "ablation" in raw else "learning-curve" if "learning_curve" in raw else "grid"
        if "ablation" in raw and "learning_curve" in raw:
            self.fail("learning_curve", "an experiment is an ablation or a learning curve, not both")
        return ExperimentConfig(
            self.path, raw, name, self.value(raw, "description", str, ""), task, corpus, files, read_options,
            dev_fraction, metric, raw.get("seed", 0), raw.get("bits", 22), raw.get("samples", 10_000),
            self.value(raw, "keep_models", bool, False), mode, name_systems(self.systems(task)),
            tuple(dict.fromkeys(self.feature_files)))

    def data(self, task: str) -> tuple[str | None, dict[str, str], ReadOptions, float | None]:
        """The corpus or the files, how to read them, and the dev fraction."""
        raw = self.raw
        corpus = self.value(raw, "corpus", str)
        given = [key for key in ("train", "dev", "test") if key in raw]
        if corpus is not None and given:
            self.fail(given[0], "give either corpus or train/dev/test files, not both")
        dev_fraction = self.value(raw, "dev_fraction", float)
        if dev_fraction is not None and not 0 < dev_fraction < 1:
            self.fail("dev_fraction", f"must be between 0 and 1, got {dev_fraction}")
        if corpus is not None:
            has_dev = self.corpus_splits(corpus, task)
            if "format" in raw:
                self.fail("format", "applies to train/dev/test files; a catalog corpus has its own format")
        else:
            for key in ("train", "test"):
                if key not in raw:
                    self.fail(key, "missing (give corpus = NAME, or train and test files)")
            has_dev = "dev" in raw
        files = {key: self.file(key) for key in given}
        if not has_dev and dev_fraction is None:
            self.fail("dev", "missing: give a dev file (or a corpus with a dev split) or dev_fraction, "
                             "for the dev data selects the epoch")
        if has_dev and dev_fraction is not None:
            self.fail("dev_fraction", "the dev data is given: drop dev_fraction")
        formats = FILE_FORMATS if task == "tagger" else DOCUMENT_FORMATS
        fmt = self.value(raw, "format", str)
        self.choice("format", fmt, formats)
        columns = self.value(raw, "columns", list)
        if columns is not None and (fmt != "columns" or not all(isinstance(c, str) for c in columns)):
            self.fail("columns", "a list of column names, for format = \"columns\"")
        for key in _CLASSIFIER_KEYS if task == "tagger" else ("column", "columns"):
            if key in raw:
                self.fail(key, f"does not apply to task {task!r}")
        strip = self.value(raw, "strip", list, [])
        if not all(isinstance(part, str) for part in strip):
            self.fail("strip", "a list of Usenet parts: headers, footers, quotes")
        table = {"header": self.value(raw, "header", bool), "label_column": self.value(raw, "label_column", (int, str)),
                 "text_column": self.value(raw, "text_column", (int, str))}
        for key, value in table.items():
            if value is not None and (corpus is not None or fmt not in (None, "tsv", "csv")):
                self.fail(key, "applies to TSV and CSV files (format tsv or csv)")
            if key != "header" and isinstance(value, int) and value < 0:
                self.fail(key, f"an index counted from 0 or a header name, got {value}")
        options = ReadOptions(fmt, self.value(raw, "column", str), tuple(columns) if columns else None,
                              tuple(strip), self.value(raw, "granularity", str), self.value(raw, "encoding", str),
                              **table)
        return corpus, files, options, dev_fraction

    def corpus_splits(self, corpus: str, task: str) -> bool:
        """Check that the catalog corpus holds the task's data and train and test splits; whether it has dev."""
        try:
            entry = Catalog.load()[corpus]
        except StructlinError as err:
            self.fail("corpus", str(err))
        wanted = "tagged" if task == "tagger" else "documents"
        if entry.kind != wanted:
            self.fail("corpus", f"{corpus!r} holds {entry.kind} data; task {task!r} needs {wanted} data")
        missing = [split for split in ("train", "test") if split not in entry.splits]
        if missing:
            self.fail("corpus", f"{corpus!r} has no {missing[0]} split (splits: {', '.join(entry.splits)}); "
                                "give train/dev/test files")
        return "dev" in entry.splits

    def file(self, key: str) -> str:
        value = self.value(self.raw, key, str)
        resolved = self.path.parent / value
        if not resolved.exists():
            self.fail(key, f"{resolved} does not exist")
        return str(resolved)

    # --- the systems --------------------------------------------------------------------------------

    def systems(self, task: str) -> list[System]:
        """Every combination of the grid (and of the ablation's feature sets or the curve's fractions)."""
        grid = self.value(self.raw, "grid", dict)
        if grid is None:
            self.fail("grid", "missing: a [grid] table with at least learner and features")
        learners = self.names(grid, "learner", LEARNERS)
        tables = {key: value for key, value in grid.items() if isinstance(value, dict)}
        for key in tables:
            if key not in learners:
                self.fail(f"grid.{key}", f"a table of options of learner {key!r}, which grid.learner does not list")
        if task == "tagger":
            decoders = self.names(grid, "decoder", DECODERS, ["viterbi"])
        elif "decoder" in grid:
            self.fail("grid.decoder", "a classifier has one decoder (multiclass): drop grid.decoder")
        else:
            decoders = [None]
        feature_sets = self.feature_sets(grid)
        fractions = self.fractions()
        common = {key: value for key, value in grid.items()
                  if key not in ("features", "learner", "decoder") and key not in tables}
        systems = []
        for learner in learners:
            options = {**self.options(common, learner, learners, "grid."),
                       **self.options(tables.get(learner, {}), learner, learners, f"grid.{learner}.", common)}
            for values in itertools.product(*options.values()):
                chosen = dict(zip(options, values))
                self.check_learner(learner, chosen)
                for (features, ablated), decoder, fraction in itertools.product(feature_sets, decoders, fractions):
                    systems.append(System(features, learner, decoder, chosen, ablated, fraction))
        return systems

    def names(self, grid: dict, key: str, accepted, default=None) -> list[str]:
        if key not in grid and default is not None:
            return default
        names = self.values(grid, key, "grid.")
        for name in names:
            if not isinstance(name, str) or name not in accepted:
                self.fail(f"grid.{key}", f"unknown {key} {name!r}; accepted: {', '.join(accepted)}")
        return names

    def values(self, table: dict, key: str, where: str) -> list:
        """A grid entry as a non-empty list (a single value is a list of one)."""
        if key not in table:
            self.fail(where + key, "missing")
        values = table[key] if isinstance(table[key], list) else [table[key]]
        if not values:
            self.fail(where + key, "an empty list: give at least one value")
        twice = next((v for k, v in enumerate(values) if any(_same_value(v, w) for w in values[:k])), None)
        if twice is not None:
            self.fail(where + key, f"{twice!r} is listed twice: each system is trained once")
        return values

    def feature_sets(self, grid: dict) -> list[tuple[FeatureSet, TemplateSpec | None]]:
        """The grid's feature sets, or the ablation's full set and one set per dropped template."""
        if "ablation" not in self.raw:
            return [(self.feature_set(name, "grid.features"), None) for name in self.values(grid, "features", "grid.")]
        if "features" in grid:
            self.fail("grid.features", "an ablation takes its feature sets from [ablation]: drop grid.features")
        ablation = self.value(self.raw, "ablation", dict)
        self.keys(ablation, {"features"}, "ablation.")
        full = self.feature_set(self.value(ablation, "features", str, where="ablation."), "ablation.features")
        if len(full.templates) < 2:
            self.fail("ablation.features", f"{full.name!r} has {len(full.templates)} template(s): nothing to drop")
        return [(full, None)] + [(replace(full, templates=full.templates[:k] + full.templates[k + 1:]), spec)
                                 for k, spec in enumerate(full.templates)]

    def feature_set(self, name, key: str) -> FeatureSet:
        if not isinstance(name, str):
            self.fail(key, f"expected a feature set name or TOML file, got {name!r}")
        path = self.path.parent / name
        try:
            features = FeatureSet.load(path if name.endswith(".toml") else name)
        except StructlinError as err:
            self.fail(key, str(err))
        if name.endswith(".toml"):
            self.feature_files += [path, *feature_set_files(path)]
        return features

    def fractions(self) -> list[float]:
        if "learning_curve" not in self.raw:
            return [1.0]
        curve = self.value(self.raw, "learning_curve", dict)
        self.keys(curve, {"fractions"}, "learning_curve.")
        fractions = [_typed(f, float) for f in self.values(curve, "fractions", "learning_curve.")]
        if not all(f is not None and 0 < f <= 1 for f in fractions) or len(set(fractions)) < len(fractions):
            self.fail("learning_curve.fractions", "distinct numbers in (0, 1], e.g. [0.1, 0.5, 1.0]")
        return sorted(fractions)

    def options(self, table: dict, learner: str, listed: list[str], where: str,
                common: dict | None = None) -> dict[str, list]:
        """The learner option lists of a grid table, checked against ``learner``'s parameters (an error
        points to the tables of the ``listed`` learners that take the option)."""
        declared = {option.name: option for option in LEARNERS[learner].options}
        accepted = sorted(name for name, option in declared.items()
                          if name not in _EXPERIMENT_OPTIONS and (option.type is not object or option.parse))
        options = {}
        for key, given in table.items():
            if key in (common or {}):
                self.fail(where + key, "also given in [grid] for every learner: give it once")
            if key not in accepted:
                takers = [name for name in listed if any(o.name == key for o in LEARNERS[name].options)]
                hint = f"; put it in {', '.join(f'[grid.{name}]' for name in takers)}" if takers else ""
                self.fail(where + key, f"learner {learner!r} has no option {key!r}{hint} "
                                       f"(options of {learner}: {', '.join(accepted)})")
            option = declared[key]
            if option.type is object:  # a structured value read from a file (a cost matrix): give its path
                options[key] = [self.readable(option, where + key, path) for path in self.values(table, key, where)]
                continue
            # a number option also takes its special words (gamma = "scale")
            kinds = (option.type, *([str] if any(v != "callable" for v in option.special) else []))
            values = [_typed(v, kinds) for v in self.values(table, key, where)]
            if any(v is None for v in values):
                self.fail(where + key, f"expected {_kind_names(kinds)} values, got {given!r}")
            options[key] = values
        return options

    def readable(self, option, key: str, path) -> str:
        """``path`` (relative to the config file's folder) resolved, once ``option.parse`` has read it."""
        if not isinstance(path, str):
            self.fail(key, f"expected the path of a file, got {path!r}")
        resolved = self.path.parent / path
        if not resolved.is_file():
            self.fail(key, f"{resolved} does not exist")
        try:
            option.parse(str(resolved))
        except (StructlinError, ValueError) as err:
            self.fail(key, str(err))
        return str(resolved)

    def check_learner(self, learner: str, options: dict) -> None:
        """Build the learner once, so that an out-of-range value fails before anything trains."""
        try:
            make_learner(learner, **learner_options(learner, options))
        except (ValueError, StructlinError) as err:
            shown = ", ".join(f"{k} = {v!r}" for k, v in options.items())
            self.fail(f"grid.{learner}", f"{err} (with {shown})")


def learner_options(learner: str, options: dict) -> dict:
    """``options`` of a grid for ``learner``, a file-valued option (a cost matrix, given by its path) read."""
    declared = {option.name: option for option in LEARNERS[learner].options}
    return {key: declared[key].parse(value) if declared[key].type is object else value
            for key, value in options.items()}


def _same_value(a, b) -> bool:
    """Whether two values of a grid list are one setting: equal, and of one type but for 1 and 1.0 (not True and 1)."""
    return a == b and {type(a), type(b)} in ({type(a)}, {int, float})


def _typed(value, kinds):
    """``value`` if it is of ``kinds`` (a type, a tuple or a union), an int as a float where floats are
    wanted; ``None`` otherwise.  TOML has no null, so ``None`` never is a value."""
    kinds = typing.get_args(kinds) or (kinds if isinstance(kinds, tuple) else (kinds,))
    if isinstance(value, bool):
        return value if bool in kinds else None
    if isinstance(value, int) and float in kinds and int not in kinds:
        return float(value)
    return value if isinstance(value, tuple(k for k in kinds if isinstance(k, type))) else None


def _kind_names(kinds) -> str:
    kinds = typing.get_args(kinds) or (kinds if isinstance(kinds, tuple) else (kinds,))
    names = {bool: "true/false", dict: "a table", list: "a list", str: "a string"}
    return " or ".join(names.get(k, getattr(k, "__name__", str(k))) for k in kinds if k is not type(None))


def name_systems(systems: list[System]) -> tuple[System, ...]:
    """Name every system by the settings that tell it from the others (a single system: its learner)."""
    def parts(system: System) -> dict[str, str]:
        shown = {"features": system.features.name,
                 "ablated": "all templates" if system.ablated is None else f"− {template_label(system.ablated)}",
                 "learner": system.learner, "decoder": system.decoder or ""}
        shown.update({key: f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                      for key, value in system.options.items()})
        shown["fraction"] = f"train {100 * system.fraction:g}%"
        return shown

    described = [parts(system) for system in systems]
    keys = dict.fromkeys(key for shown in described for key in shown)
    varying = [key for key in keys if len({shown.get(key) for shown in described}) > 1]
    names = [", ".join(shown[key] for key in varying if key in shown) or system.learner
             for system, shown in zip(systems, described)]
    return tuple(replace(system, name=name) for system, name in zip(systems, names))
