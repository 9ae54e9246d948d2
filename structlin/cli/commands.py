"""The ``structlin`` commands: what each one does with the parsed command line (``args``).

Errors caused by input raise ``StructlinError`` (``UsageError`` for options that contradict each other);
``structlin.cli.main`` prints them.  Every file a command writes goes through
:func:`~structlin.outputs.atomic_output`, and an ``--output`` that is one of the command's inputs is
refused before any work (:func:`check_arguments`).
"""

from __future__ import annotations

import functools
import json
import operator
import os
import shlex
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from itertools import chain, count, islice
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..analysis import analyze
from ..catalog import Catalog, is_corpus_name
from ..clusters import build_clusters
from ..distributed import dask_client
from ..documents import Document, folder_files, svmlight_line
from ..errors import (CorpusFormatError, ModelFormatError, OptionValueError, StructlinError, UnknownNameError,
                      UnseenLabelWarning, UsageError)
from ..experiments import cross_validate, load_config, output_files, run_experiment, write_report
from ..learners import LEARNERS, make_learner
from ..learners.choice import AUTO, CANDIDATES, LearnerChoice, learner_choice
from ..learners.protocol import model_options
from ..learners.training import quiet
from .parser import learner_cli_options
from ..modelfile import model_kind
from ..models import Classifier, Tagger, some_labels
from ..outputs import check_output, same_file, text_output
from ..readers import (
    CONLLU_COLUMNS,
    Sentence,
    decode,
    guess_format,
    is_token_table,
    line_batches,
    open_text,
    read_file,
    source_name,
    write_conllu,
)
from ..significance import (
    METRIC_SCORES,
    approximate_randomization,
    mcnemar,
    paired_bootstrap,
    unit_statistics,
)
from ..sources import DOCUMENT_FORMATS, CorpusStream, ReadOptions, guess_document_format, hold_out
from ..spans import is_bio_style
from ..tasks import CLASSIFICATION, HELD_OUT, TAGGING, TASKS, Task
from ..tuning import grid, score_candidates
from ..stats import corpus_stats, document_stats, format_stats
from ..templates import feature_set_files
from ..tokenize import tokenize


def check_arguments(args) -> None:
    """Refuse, before any work, options that contradict each other: ``--split`` with ``--train`` or ``--test``, a
    ``--dev`` file that is the ``--train`` file, and an ``--output`` that is one of the files the command reads
    (``args.inputs``, set by the parser) or that cannot be written."""
    if getattr(args, "stream", False) and args.dev_fraction is not None:
        raise UsageError("--stream reads the training data as it goes and cannot hold a share of it out as dev: give "
                         "--dev, or neither (the epochs are then chosen on 10% of the training data held out)")
    if args.command in ("train", "tune") and args.train:
        if args.split:
            raise StructlinError("--split chooses splits of --corpus; with --train give the file itself")
        if args.dev and same_file(args.dev, args.train):
            raise _dev_in_training(args.dev, f"the training file (--train {args.train})")
    if getattr(args, "default_split", None):
        if args.split and getattr(args, "test", None):
            raise UsageError("--split chooses a split of --corpus; with --test give the file itself")
        args.split = args.split or args.default_split
    output = getattr(args, "output", None)
    if output == "":
        raise UsageError("--output is empty: give the path of the file to write")
    if not output or not hasattr(args, "inputs"):
        return
    inputs = [(flag, getattr(args, flag.lstrip("-").replace("-", "_"), None)) for flag in args.inputs]
    if getattr(args, "features", None):
        inputs += [("the word clusters of --features", path) for path in feature_set_files(args.features)]
    for flag, value in inputs:
        if value and same_file(value, output):
            given = "the model" if flag == "model" else flag
            raise UsageError(f"--output {output} is also {given} {value}: writing it would destroy it; "
                             "choose another --output")
    check_output(output)


def _units(task: Task, source: str, split: str | None, args, column: str | None = None, *, stream: bool = False,
           models: list = (), labels: Iterable = ()):
    """The sentences or documents (``task``) of a named corpus split or of a file, folder or archive, read with
    the command's data options (the library refuses those that do not apply to the data); ``column``: the tag
    column of a CoNLL-U file, NLTK corpus, TSV/CSV table or column file whose ``--columns`` name it when
    ``--column`` is not given (a model's).  What a TSV or CSV
    file gave is said on stderr unless ``--quiet``.  ``stream``: the task's stream of them, read when iterated.
    ``models``: the models the data is for, ``labels`` the labels of the training data it is dev data for: a table's
    first row holding one of their labels is data, not a header, and without a header row the column of them is the
    label column."""
    named = (_format(source, args) in ("conllu", "nltk", "tsv", "csv")
             or column in (getattr(args, "columns", None) or ()))
    if column and not named:  # formats that name their columns, or a column file whose --columns name it
        column = None
    report = None if getattr(args, "quiet", False) else (lambda line: print(line, file=sys.stderr))
    options = ReadOptions(args.format, getattr(args, "column", None) or column, getattr(args, "columns", None),
                          getattr(args, "strip", None) or (), getattr(args, "granularity", None),
                          getattr(args, "encoding", None), header=getattr(args, "header", None),
                          delimiter=getattr(args, "delimiter", None),
                          label_column=getattr(args, "label_column", None),
                          text_column=getattr(args, "text_column", None),
                          labels=frozenset(str(label) for label in chain(
                              labels, *(model.joint.labels for model in models))),
                          report=report)
    return (task.stream if stream else task.read)(source, split, options)


def _format(source: str, args) -> str:
    """The format tagged sentences are read from ``source`` in: a catalog corpus's (unless ``--format``),
    else ``--format``, else the one ``--columns`` or the file name suggests."""
    catalog = Catalog.load()
    if is_corpus_name(catalog, source) and not args.format:
        return catalog[source].format
    return args.format or ("columns" if getattr(args, "columns", None) else guess_format(source))


def _given_options(args) -> dict:
    """The learner options the command line gives (every option a learner declares has a flag:
    :func:`~.parser.learner_cli_options`), read; an option of other learners only is refused by name."""
    declared = {option.name: option for cls in _named_classes(args.learner) for option in cls.options}
    given = {}
    for name, takers in learner_cli_options().items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if name not in declared:
            named = (f" ({' or '.join(CANDIDATES)}, chosen on held-out data): give --learner "
                     f"{' or '.join(learner for learner, _ in takers)}") if args.learner == AUTO else ""
            raise UsageError(f"{takers[0][1].command_line_flag} does not apply to learner {args.learner!r}{named}")
        parse = declared[name].parse
        try:
            given[name] = parse(value) if parse is not None else value
        except StructlinError:
            raise
        except ValueError:
            option = declared[name]
            expected = " or ".join([{int: "an integer", float: "a number"}.get(option.type, f"a {option.type.__name__}"),
                                    *map(repr, option.special)])
            raise UsageError(f"{option.command_line_flag}: cannot read {value!r} (expected {expected})") from None
    return given


def _named_classes(name: str) -> list:
    """The learner classes ``--learner`` names: one, or the candidates of ``auto``."""
    return [LEARNERS[c] for c in CANDIDATES] if name == AUTO else [LEARNERS[name]]


def _learner(args, task: Task, progress: bool | None, candidate: dict | None = None):
    """The learner ``--learner`` names, with the command's seed, the task's learner defaults (for the learners
    that declare them, unless an option given replaces them: :func:`~structlin.learners.protocol.model_options`),
    the options the command line gives and a tune ``candidate``'s; options that exclude each other are refused.
    ``auto`` gives a :class:`~structlin.learners.choice.LearnerChoice` of the candidates that take the options given;
    where nothing may be chosen on held-out data (``--no-tune``, ``--dev none``) or on a cluster (``--workers``,
    ``--scheduler``: the candidates that train there), its first."""
    defaults = {"seed": args.seed, "progress": progress, **task.learner_defaults}
    given = {**_given_options(args), **(candidate or {})}
    try:
        if args.learner != AUTO:
            return make_learner(args.learner, **model_options(LEARNERS[args.learner], defaults, given))
        choice = learner_choice(defaults, given)
        if getattr(args, "workers", None) is not None or getattr(args, "scheduler", None) is not None:
            takers = [c for c in choice.candidates if c.capabilities.distributed]
            if not takers:
                names = ", ".join(c.name for c in choice.candidates)
                raise UsageError(f"learner {AUTO!r}: its candidates for the options given ({names}) do not train on a "
                                 "Dask cluster (--workers, --scheduler)")
            choice = LearnerChoice(takers)
        fixed = getattr(args, "no_tune", False) or getattr(args, "dev", None) == "none"
        return choice.candidates[0] if fixed or len(choice.candidates) == 1 else choice
    except OptionValueError as error:  # options that exclude each other: refused as the parser refuses a flag
        where = f"--grid candidate {_options_text(candidate)}: " if candidate else ""
        raise UsageError(f"{where}{error}") from None


def _new_model(args, task: Task, learner, held_out: float | None = None):
    """The untrained model the command line describes, learning with ``learner``."""
    return task.new_model(args.features, learner, decoder=getattr(args, "decoder", None), bits=args.bits,
                          held_out=held_out, tag_dictionary=getattr(args, "tag_dictionary", None),
                          stream=getattr(args, "stream", False))


def _cross_validate(args) -> None:
    documents = _units(CLASSIFICATION, args.corpus or args.train, None, args)
    begun = count()
    with _progress(None, total=args.folds, desc="cross-validating", unit="fold") as bar:

        def fold_model():
            """A fold's model, asked for as the fold begins (so the one before it is done); it chooses its epochs
            on a held-out share of its training part, as train does without dev."""
            bar.update(1 if next(begun) else 0)
            return _new_model(args, CLASSIFICATION, _learner(args, CLASSIFICATION, False), HELD_OUT)

        result = cross_validate(fold_model, [d.text for d in documents], [d.label for d in documents],
                                folds=args.folds, seed=args.seed)
        bar.update()
    if args.json:
        print(json.dumps(result))
        return
    for row in result["per_fold"]:
        print(f"fold {row['fold']:>2}  accuracy {100 * row['accuracy']:.2f}%  macro-F1 {100 * row['macro_f1']:.2f}%  "
              f"({row['n_test']} test documents, {row['train_seconds']:.1f}s training)")
    print(f"{args.folds}-fold accuracy {100 * result['accuracy']:.2f}% ± {100 * result['accuracy_std']:.2f}, "
          f"macro-F1 {100 * result['macro_f1']:.2f}% ± {100 * result['macro_f1_std']:.2f} (seed {args.seed})")


def _training_data(args, task: Task, *, default_dev: bool = True) -> tuple[list, list | None]:
    """What ``train`` fits on: ``--corpus``'s ``--split`` (split names joined by ``+``, read in that order)
    or the ``--train`` file, and the dev data: ``--dev`` (a split of the corpus or a path; ``none`` for no
    dev), else, with ``default_dev``, the corpus's ``dev`` split when it is not among the training splits.
    Training on the dev split is refused (on the dev file: :func:`check_arguments`)."""

    def read(source: str, split: str | None, training=None) -> list:
        """The units of ``source`` (dev data: read knowing the labels of the ``training`` units, when a list)."""
        known = chain.from_iterable(task.labels(training)) if isinstance(training, list) else ()
        return _units(task, source, split, args, labels=known)

    def read_training(source: str, split: str | None):
        """The training units: a list, or with ``--stream`` a stream read as training needs it."""
        return _units(task, source, split, args, stream=True) if getattr(args, "stream", False) else read(source, split)

    dev_name = None if args.dev in (None, "none") else args.dev
    if not args.corpus:
        train = read_training(args.train, None)
        return train, (read(dev_name, None, train) if dev_name else None)
    entry = Catalog.load()[args.corpus]
    names = args.split.split("+") if args.split else ["train" if "train" in entry.splits else None]
    for name in names:
        if name is not None and name not in entry.splits:
            raise UnknownNameError(f"split of corpus {entry.name!r}", name, entry.splits)
    if dev_name is None and args.dev is None and default_dev and "dev" in entry.splits and "dev" not in names:
        dev_name = "dev"
    if dev_name is not None and dev_name in names:
        raise _dev_in_training(dev_name, f"a training split (--split {args.split})")
    train = functools.reduce(operator.add, [read_training(args.corpus, name) for name in names])
    if dev_name is None:
        return train, None
    return train, read(args.corpus, dev_name) if dev_name in entry.splits else read(dev_name, None, train)


def _dev_in_training(dev: str, training: str) -> StructlinError:
    return StructlinError(f"--dev {dev} is also {training}: early stopping on training data would choose "
                          "nothing; give another dev, or --dev none")


def _train_and_dev(args, task: Task) -> tuple[list, list | None]:
    """:func:`_training_data`, with ``--dev-fraction`` of it held out (seeded) as dev when given."""
    train, dev = _training_data(args, task, default_dev=args.dev_fraction is None)
    if args.dev_fraction is None:
        return train, dev
    rest, held = hold_out(train, args.dev_fraction, args.seed)
    labels = lambda units: {label for labels in task.labels(units) for label in labels}  # noqa: E731
    if len(labels(rest)) < min(2, len(labels(train))):  # what the training part lacks, the data had
        kept = f"{len(rest):,} {task.unit}{'' if len(rest) == 1 else 's'}"
        raise UsageError(f"--dev-fraction {args.dev_fraction:g} of {len(train):,} {task.unit}s leaves {kept} to train "
                         "on, with fewer than two labels: hold out a smaller share, or give --dev")
    return rest, held


def _save(model, task: Task, args) -> str:
    """Record the tag column a tagger was trained on (CoNLL-U: upos unless ``--column``) and save the model; what
    was done, for the last line (a file that was there is said to be replaced)."""
    if task.column:
        model.column = args.column or ("upos" if _format(args.corpus or args.train, args) == "conllu" else None)
    replaced = os.path.isfile(args.output)
    model.save(args.output)
    return f"model written to {args.output}" + (" (replacing the file that was there)" if replaced else "")


def _train(args) -> None:
    """``train tagger`` and ``train classifier``: fit on the training data (dev for early stopping), save."""
    task = TASKS[args.model]
    learner = _learner(args, task, progress=False if args.quiet else None)  # refuse a bad option before reading
    on_dev = [flag for flag, value in (("--patience", args.patience), ("--eval-every", args.eval_every)) if value]
    if args.dev == "none" and on_dev:
        raise UsageError(f"{on_dev[0]} sets the evaluations on dev, and --dev none trains without any: give one")
    if args.no_tune:  # the fixed values of the settings the learner would choose on dev
        learner.set_params(**{option.name: option.untuned for option in learner.options
                              if option.untuned is not None and getattr(learner, option.name) is None})
    with _cluster(args, learner):
        train, dev = _train_and_dev(args, task)
        held_out = HELD_OUT if dev is None and args.dev != "none" and not args.no_tune else None
        model = _new_model(args, task, learner, held_out)
        began = time.perf_counter()
        task.fit(model, train, dev)
        seconds = time.perf_counter() - began
    written = _save(model, task, args)
    if not args.quiet:
        _print_history(model)
        if _choices(model):
            print(_choices(model))
        with_dev = f", dev {_size(task, dev)}" if dev is not None else ""
        kept = f"kept epoch {model.learner.best_epoch_}; " if "epochs" in model.learner.get_params() else ""
        print(f"trained on {_size(task, train)} in {seconds:.1f}s{with_dev}; {kept}{written}")


def _size(task: Task, units) -> str:
    """How many units (and items) ``units`` holds, a list or a :class:`~structlin.sources.CorpusStream` read once:
    ``3,000 sentences (90,519 tokens)``, ``11,314 documents``."""
    n_units, n_items = (units.units, units.items) if isinstance(units, CorpusStream) else (len(units), task.items(units))
    return f"{n_units:,} {task.unit}s" + (f" ({n_items:,} {task.item}s)" if task.item != task.unit else "")


@contextmanager
def _cluster(args, learner):
    """The Dask cluster of ``--workers`` or ``--scheduler`` for the block, with ``learner`` set to train on it
    (refused for a learner that cannot); nothing without those options."""
    if args.workers is None and args.scheduler is None:
        yield
        return
    if not learner.capabilities.distributed:
        takers = ", ".join(name for name, cls in LEARNERS.items() if cls.capabilities.distributed)
        raise UsageError(f"learner {learner.name!r} does not train on a Dask cluster (--workers, --scheduler); "
                         f"those that do: {takers}")
    learner.check_distributes()
    with dask_client(args.workers, args.scheduler) as client:
        learner.set_params(client=client)
        if not args.quiet:
            print(f"training on {len(client.nthreads())} Dask workers ({client.scheduler.address})", flush=True)
        yield


def _tune(args) -> None:
    """``tune tagger|classifier``: score every candidate of ``--grid`` on dev (without one, the share of the
    training data ``train`` holds out: :meth:`Task.hold_out`), print the ranking, and with ``--output`` train the
    best on the training data (dev for early stopping, as ``train`` does) and save it."""
    task = TASKS[args.model]
    try:
        candidates = grid(args.learner, args.grid)
    except (OptionValueError, UnknownNameError) as error:  # an option's value, as the parser refuses it: status 2
        raise UsageError(str(error)) from None
    if "seed" in candidates[0]:
        raise UsageError("--grid: seed is not a setting to choose on dev (the best of several seeds is luck, not a "
                         "setting); give --seed")
    both = [name for name in candidates[0] if getattr(args, name, None) is not None]
    if both:
        flag = learner_cli_options()[both[0]][0][1].command_line_flag
        raise UsageError(f"{flag} is given both as an option and in --grid: give its values in --grid only")
    _learner(args, task, progress=False)  # the fixed flags and the seed every candidate shares
    for candidate in candidates:  # options that exclude each other, in the grid or across it and the flags
        _learner(args, task, progress=False, candidate=candidate)
    train, dev = _train_and_dev(args, task)
    if dev is None:  # the candidates need a dev set: the share of the training data train holds out
        train, dev = task.hold_out(train, HELD_OUT, args.seed)

    def log(result: dict) -> None:
        if not args.quiet and not args.json:
            print(f"{_options_text(result['options'])}: dev {result['metric']} {100 * result['score']:.2f}  "
                  f"(epoch {result['best_epoch']}, {result['seconds']:.1f}s)", flush=True)

    ranked = score_candidates(task, args.learner, candidates, train, dev,
                              settings={**_given_options(args), "seed": args.seed, "progress": False},
                              new_model=lambda learner: _new_model(args, task, learner), log=log)
    best = ranked[0]
    if args.output:
        model = _new_model(args, task, _learner(args, task, False if args.quiet else None, best["options"]))
        task.fit(model, train, dev)
        model.learner.candidates_ = [{**r["options"], "dev_accuracy": r["score"]} for r in ranked]
        model.learner.chosen_ = {**model.learner.chosen_, **best["options"]}
        written = _save(model, task, args)
    if args.json:
        print(json.dumps({"metric": best["metric"], "ranking": ranked, "best": best["options"],
                          "model": args.output}))
    elif not args.quiet:
        print(f"best: {_options_text(best['options'])} (dev {best['metric']} {100 * best['score']:.2f})"
              + (f"; {written}" if args.output else ""))


def _options_text(options: dict, number: str = "g") -> str:
    """``name value, ...``, floats in the format ``number``."""
    return ", ".join(f"{name} {value:{number}}" if isinstance(value, float) else f"{name} {value}"
                     for name, value in options.items())


def _print_history(model) -> None:
    """One line per history record: the step, the learner's own fields (its ``history_fields``), the dev
    accuracy and the time."""
    for record in model.history_:
        fields = "".join(f"  {field.label} {field.format.format(record[field.key])}"
                         for field in model.learner.history_fields if record.get(field.key) is not None)
        dev_text = "" if record["dev_accuracy"] is None else f"  dev accuracy {100 * record['dev_accuracy']:.2f}%"
        print(f"{record['unit']} {record['step']:>3}{fields}{dev_text}  {record['seconds']:.1f}s")


def _task_of(path) -> Task:
    """The task of the model file at ``path`` by the kind it records; a kind structlin has no task for (a damaged
    or foreign file) is refused in one line."""
    kind = model_kind(path)
    if kind not in TASKS:
        raise ModelFormatError(f"{path}: the model file records the kind {kind!r}; expected one of "
                               f"{', '.join(TASKS)}")
    return TASKS[kind]


def _evaluate(args) -> None:
    task = _task_of(args.model)
    model = _load(task.model, args)
    source, split = _test_data(args)
    units = _units(task, source, split, args, column=model.column if task.column else None, models=[model])
    _check_known_labels(task, {"the model": model}, units, source)
    with _progress(None, total=len(units), desc=f"scoring {args.model}", unit=task.unit) as bar, \
            _located(list(map(_place, units))):
        report = task.report(model, units, bar.update)
    learner = model.learner
    if args.json:
        chosen = {"chosen": learner.chosen_, "candidates": learner.candidates_} if learner.chosen_ else {}
        print(json.dumps({**report.to_dict(), **chosen}))
    else:
        print(report.format() + (f"\n{_choices(model)}" if learner.chosen_ else ""))


#: Up to this many candidates are listed on the line of the choice; more, one a line below it.
_INLINE_CANDIDATES = 6


def _choices(model) -> str:
    """What the learner chose from the training data, and each candidate's dev score ("" when nothing)."""
    learner = model.learner
    if not learner.chosen_:
        return ""
    scored = [_options_text({k: v for k, v in c.items() if k != "dev_accuracy"}) + f": dev {100 * c['dev_accuracy']:.2f}%"
              for c in learner.candidates_]
    chosen = f"chosen from the data: {_options_text(learner.chosen_, '.4g')}"
    epochs = [c for c in learner.candidates_ if c.keys() == {"epochs", "dev_accuracy"}]
    kept = [c["dev_accuracy"] for c in epochs if c["epochs"] == learner.chosen_.get("epochs")]
    if kept and kept[0] < max(c["dev_accuracy"] for c in epochs):
        chosen += " (epochs: the latest within one standard error of the best held-out score)"
    if len(scored) > _INLINE_CANDIDATES:  # a grid: one candidate a line
        return chosen + "; the candidates:\n" + "\n".join("  " + line for line in scored)
    return chosen + (f" (candidates: {'; '.join(scored)})" if scored else "")


def _check_known_labels(task: Task, models: dict, units: list, source: str) -> None:
    """Refuse test data none of whose labels (tags) a model (of ``{name: model}``) predicts: its accuracy would be 0
    (a file of other labels, one without a label column, documents read as tagged sentences, the wrong ``--column``
    ...); warn of gold labels some model never saw in training, which count as its errors."""
    items = list(chain.from_iterable(task.labels(units)))
    gold = sorted(set(items), key=str)
    what = "tags" if task is TAGGING else "labels"
    for name, model in models.items():
        known = set(model.classes_)
        unseen = [label for label in gold if label not in known]
        if gold and len(unseen) == len(gold):
            shown = ", ".join(map(repr, gold[:3])) + (", ..." if len(gold) > 3 else "")
            looks = ("sentences tagged as the model's training data (check --format and --column)" if task is TAGGING
                     else "documents labelled as the model's training data (check --format, --header and "
                     "--label-column)")
            raise StructlinError(f"{source}: none of its {len(gold)} {what} ({shown}) is one {name} predicts: it "
                                 f"does not look like {looks}")
        if unseen:
            count = sum(1 for label in items if label not in known)
            warnings.warn(f"{source}: {count} of {len(items)} {task.item}s have {what} {name} never saw in training "
                          f"({some_labels(unseen)}); they count as its errors", UnseenLabelWarning)


def _test_data(args) -> tuple[str, str | None]:
    """The test corpus name and split, or the test file (no split)."""
    return (args.corpus, args.split) if args.corpus else (args.test, None)


def _compare(args) -> None:
    paths = (args.model_a, args.model_b)
    task, other = (_task_of(path) for path in paths)
    if task is not other:
        raise StructlinError(f"cannot compare {paths[0]}, a {task.kind}, with {paths[1]}, a {other.kind}")
    gold, predictions = _outputs(task, paths, args)
    unit, item = task.unit, task.item
    if not gold:
        raise StructlinError(f"{_test_data(args)[0]}: no {unit}s to compare on")
    items = list(chain.from_iterable(gold))
    mcnemar_test = mcnemar(*(np.asarray(list(chain.from_iterable(p))) == np.asarray(items) for p in predictions))
    resampling = {"samples": args.samples, "seed": args.seed}
    scores = _paired_tests("accuracy", gold, predictions, resampling)
    result = {
        "a": {"model": paths[0], "accuracy": scores["a"]},
        "b": {"model": paths[1], "accuracy": scores["b"]},
        "difference": scores["difference"],
        "unit": unit,
        "units": len(gold),
        "tests": {
            "mcnemar": {"p_value": mcnemar_test.p_value, "method": mcnemar_test.method,
                        "discordant": mcnemar_test.discordant, "only_a": mcnemar_test.only_a,
                        "only_b": mcnemar_test.only_b, "item": item, "items": len(items)},
            "bootstrap": {"p_value": scores["bootstrap"], **resampling},
            "randomization": {"p_value": scores["randomization"], **resampling},
        },
    }
    if task is TAGGING and is_bio_style(items):
        result["span_f1"] = _paired_tests("span_f1", gold, predictions, resampling)
    print(json.dumps(result) if args.json else _format_comparison(result))


def _paired_tests(metric: str, gold: list[list[str]], predictions: list[list[list[str]]], resampling: dict) -> dict:
    """Both systems' ``metric`` on the test units, the difference b − a, and the paired bootstrap and
    approximate randomization p-values over units."""
    statistics = [unit_statistics(metric, gold, predicted) for predicted in predictions]
    score = METRIC_SCORES[metric]
    a, b = (float(score(s.sum(axis=0))) for s in statistics)
    return {"a": a, "b": b, "difference": b - a,
            "bootstrap": paired_bootstrap(*statistics, score, **resampling),
            "randomization": approximate_randomization(*statistics, score, **resampling)}


def _outputs(task: Task, paths, args) -> tuple[list[list[str]], list[list[list[str]]]]:
    """Gold labels and both models' labels of every test unit."""
    models = [task.model.load(path) for path in paths]
    if task.column and not args.column and models[0].column != models[1].column:
        columns = [f"tags {model.column}" if model.column else "names no tag column" for model in models]
        raise StructlinError(f"{paths[0]} {columns[0]}, {paths[1]} {columns[1]}: choose the gold column with --column")
    source, split = _test_data(args)
    units = _units(task, source, split, args, column=models[0].column if task.column else None, models=models)
    _check_known_labels(task, dict(zip(paths, models)), units, source)
    with _progress(None, total=len(models) * len(units), desc="predicting", unit=task.unit) as bar:
        return task.labels(units), [_predicted(task, model, units, bar) for model in models]


def _predicted(task: Task, model, units: list, bar: tqdm) -> list[list[str]]:
    """``task.predict(model, units)``, a batch at a time, advancing ``bar``."""
    labels = []
    for batch in _batches(units, BATCH):
        with _located(list(map(_place, batch))):
            labels += task.predict(model, batch)
        bar.update(len(batch))
    return labels


def _place(unit) -> tuple[str | None, int | None]:
    """The file (or ``ARCHIVE:MEMBER``) and line a document or sentence was read from, as far as known."""
    return (unit.source if isinstance(unit, Document) else unit.path), unit.line


@contextmanager
def _located(places: list[tuple[str | None, int | None]]):
    """An error a model raises about the n-th of the instances it was given (:attr:`CorpusFormatError.instance`),
    said of ``places[n - 1]``, the file and line that instance was read from, when known."""
    try:
        yield
    except CorpusFormatError as error:
        number = error.instance[1] if error.instance else 0
        if not 0 < number <= len(places) or places[number - 1][0] is None:
            raise
        raise error.located(*places[number - 1]) from None


def _format_comparison(result: dict) -> str:
    """The text report of ``compare``: both scores, their difference and the p-value of every test."""
    tests, unit, units = result["tests"], result["unit"], result["units"]
    mcnemar_test, bootstrap, randomization = tests["mcnemar"], tests["bootstrap"], tests["randomization"]
    item = mcnemar_test["item"]
    items = f" ({mcnemar_test['items']:,} {item}s)" if item != unit else ""
    return "\n".join([
        f"a: {result['a']['model']}  accuracy {100 * result['a']['accuracy']:.2f}%",
        f"b: {result['b']['model']}  accuracy {100 * result['b']['accuracy']:.2f}%",
        f"difference b − a: {100 * result['difference']:+.2f} points on {units:,} {unit}s{items}",
        (f"McNemar's test ({mcnemar_test['method']}): p = {mcnemar_test['p_value']:.4g} "
         f"({mcnemar_test['discordant']:,} discordant {item}s: {mcnemar_test['only_a']:,} right in a only, "
         f"{mcnemar_test['only_b']:,} in b only)"),
        (f"paired bootstrap: p = {bootstrap['p_value']:.4g} ({bootstrap['samples']:,} samples of {unit}s, "
         f"seed {bootstrap['seed']})"),
        (f"approximate randomization: p = {randomization['p_value']:.4g} ({randomization['samples']:,} shuffles "
         f"of {unit}s, seed {randomization['seed']})"),
        *([] if "span_f1" not in result else [
            (f"span F1: a {100 * result['span_f1']['a']:.2f}, b {100 * result['span_f1']['b']:.2f}, difference "
             f"{100 * result['span_f1']['difference']:+.2f} points; paired bootstrap p = "
             f"{result['span_f1']['bootstrap']:.4g}, approximate randomization p = "
             f"{result['span_f1']['randomization']:.4g} (over {unit}s)")]),
    ])


def _tag(args) -> None:
    """Tag ``--input`` (standard input, decoded as strictly as a file) into ``--output`` (standard output), a batch
    at a time: every line from a pipe or a terminal is answered before the next one is waited for."""
    tagger = Tagger.load(args.model)
    spaced = [tag for tag in tagger.classes_ if not tag or any(c.isspace() for c in tag)]
    if spaced:
        raise StructlinError(f"{args.model}: the model predicts the tag {spaced[0]!r}, which tagged output cannot "
                             "hold (a tag is non-empty, without whitespace); train it again on clean tags")
    input_format = _tag_input_format(args)
    fmt = args.format or input_format
    if args.column and "conllu" not in (fmt, input_format):
        raise UsageError(f"--column chooses the CoNLL-U column the tags are read from or written to; here neither the "
                         f"input ({input_format}) nor the output ({fmt}) is CoNLL-U")
    column = _conllu_column(tagger, args) if "conllu" in (fmt, input_format) else None
    probabilities = _with_probabilities(tagger, args, fmt)
    write = partial(_conllu_sentence, column) if fmt == "conllu" else TAGGED_FORMATS[fmt]
    by_output = input_format == "conllu" and not args.input_format and not (args.input and
                                                                              guess_format(args.input) == "conllu")
    hint = "read as CoNLL-U because of --format conllu: --input-format text reads lines of text" if by_output else ""
    with _output(args.output) as out, _progress(_file_progress(args), desc=args.input, unit="sentence") as bar, \
            _hinted(hint):
        for sentences in _sentences_to_tag(args.input or sys.stdin.buffer, input_format, args.tokenize, column,
                                           args.encoding):
            tags = tagger.predict(sentences)
            if input_format == fmt == "conllu":  # the input's lines, with only the tag column replaced
                write_conllu(sentences, tags, out, column=column)
            else:
                chosen = _tag_probabilities(tagger, sentences, tags) if probabilities else [None] * len(tags)
                out.write("".join(map(write, sentences, tags, chosen)))
            out.flush()
            bar.update(len(sentences))


@contextmanager
def _hinted(hint: str):
    """A :class:`CorpusFormatError` raised in the block, with ``hint`` (if any) added to its message."""
    try:
        yield
    except CorpusFormatError as err:
        if not hint:
            raise
        raise CorpusFormatError(err.path, err.line, f"{err.message} ({hint})") from None


def _sentences_to_tag(source, input_format: str, tokenized: bool, column: str | None,
                      encoding: str | None) -> Iterator[list[Sentence]]:
    """Batches of the sentences of ``source`` (a path or standard input, in ``encoding``, default UTF-8): of
    CoNLL-U, :data:`BATCH` sentences at a time; of text, the lines one read gives
    (:func:`~structlin.readers.line_batches`), split at whitespace or (``tokenized``) by
    :func:`~structlin.tokenize.tokenize`."""
    encoding = encoding or "UTF-8"
    if input_format == "conllu":
        yield from _batches(read_file(source, format="conllu", column=column, require_tags=False,
                                      encoding=encoding), BATCH)
        return
    words, name = tokenize if tokenized else str.split, source_name(source)
    for lines in line_batches(source, encoding):
        yield [Sentence(words(text), path=name, line=number) for number, text in lines]


#: Units handled at a time when they are not read as lines (CoNLL-U sentences, the files of a folder), and test
#: units predicted between two steps of a progress bar.
BATCH = 500


def _tag_input_format(args) -> str:
    """``tag``'s input format: ``--input-format``; else text to ``--tokenize``; else conllu for a ``*.conllu[.gz]``
    file (a file is read as its name says: ``--format text`` read its columns as words); else ``--format`` text or
    conllu, which also meant the input before json and tsv output (scripts rely on it); else text."""
    if args.tokenize and args.input_format == "conllu":
        raise UsageError("--tokenize splits lines of text; CoNLL-U input (--input-format conllu) has its tokens")
    if args.tokenize and not args.input_format and args.input and guess_format(args.input) == "conllu":
        raise UsageError(f"--tokenize splits lines of text; {args.input} is CoNLL-U, which has its tokens "
                         "(--input-format text reads its lines as text)")
    if args.input_format or args.tokenize:
        return args.input_format or "text"
    if args.input and guess_format(args.input) == "conllu":
        return "conllu"
    return args.format if args.format in ("text", "conllu") else "text"


def _conllu_column(tagger: Tagger, args) -> str:
    """The CoNLL-U column tags are written to: ``--column``, else the model's, else upos.  Another CoNLL-U column
    than the model's is warned of: its tags are the model's kind (UPOS tags in the XPOS column)."""
    column = args.column or tagger.column or "upos"
    if column not in CONLLU_COLUMNS:
        raise StructlinError(f"{args.model} tags the column {column!r}, which CoNLL-U has not: choose the CoNLL-U "
                             f"column with --column ({', '.join(CONLLU_COLUMNS)})")
    if tagger.column in CONLLU_COLUMNS and column != tagger.column:
        warnings.warn(f"{args.model} was trained on the {tagger.column} column; its tags are written to the {column} "
                      "column", stacklevel=2)
    return column


def _with_probabilities(model, args, fmt: str) -> bool:
    """Whether the output gives probabilities: json and tsv do when the model's learner gives them, unless
    ``--no-probabilities``; ``--probabilities`` for another format, or for a model whose learner gives none,
    is a usage error."""
    probabilistic = model.learner.capabilities.probabilistic
    if args.probabilities and fmt not in ("json", "tsv"):
        raise UsageError(f"--probabilities applies to --format json and tsv, not {fmt}")
    if args.probabilities and not probabilistic:
        takers = ", ".join(name for name, cls in LEARNERS.items() if cls.capabilities.probabilistic)
        raise UsageError(f"--probabilities: {args.model} was trained by {model.learner.name!r}, whose scores are no "
                         f"probabilities (learners that give them: {takers})")
    return probabilistic and fmt in ("json", "tsv") and args.probabilities is not False


def _tag_probabilities(tagger: Tagger, sentences: list, tags: list[list[str]]) -> list[list[float]]:
    """The probability of every chosen tag, ``P(y_i = tag | x)``: its marginal."""
    column = {tag: k for k, tag in enumerate(tagger.classes_)}
    return [[float(row[column[tag]]) for row, tag in zip(marginals, sentence_tags)]
            for marginals, sentence_tags in zip(tagger.predict_marginals(sentences), tags)]


def _text_sentence(sentence: Sentence, tags: list[str], probabilities: list[float] | None) -> str:
    return " ".join(f"{w}/{t}" for w, t in zip(sentence.words, tags)) + "\n"


def _json_sentence(sentence: Sentence, tags: list[str], probabilities: list[float] | None) -> str:
    record = {"tokens": sentence.words, "tags": tags}
    return _json_line(record if probabilities is None else {**record, "probabilities": probabilities})


def _tsv_sentence(sentence: Sentence, tags: list[str], probabilities: list[float] | None) -> str:
    columns = (sentence.words, tags) if probabilities is None else (sentence.words, tags, probabilities)
    return "".join("\t".join(map(str, row)) + "\n" for row in zip(*columns)) + "\n"


def _conllu_sentence(column: str, sentence: Sentence, tags: list[str], probabilities: list[float] | None) -> str:
    """A CoNLL-U sentence of a line of text: its line number as ``sent_id``, and each token's ID, FORM and tag in
    ``column``, the other fields ``_``.  An empty line is no sentence (CoNLL-U has none without tokens)."""
    if not tags:
        return ""
    lines = [f"# sent_id = {sentence.line}"]
    for k, (word, tag) in enumerate(zip(sentence.words, tags), 1):
        fields = [str(k), word] + ["_"] * 8
        fields[CONLLU_COLUMNS[column]] = tag
        lines.append("\t".join(fields))
    return "\n".join(lines) + "\n\n"


#: tag's output formats but CoNLL-U: a sentence, its tags and their probabilities (or None) as text.
TAGGED_FORMATS = {"text": _text_sentence, "json": _json_sentence, "tsv": _tsv_sentence}


def _json_line(record: dict) -> str:
    """``record`` as a line of JSON Lines (UTF-8 text as it is, not escaped)."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def _load(kind, args):
    """The model file's tagger or classifier (``kind``); ``--hypothesis`` picks one of the hypotheses its
    learner can predict with."""
    model = kind.load(args.model)
    if args.hypothesis is not None:
        hypotheses = model.learner.capabilities.hypotheses
        if args.hypothesis not in hypotheses:
            takers = [name for name, cls in LEARNERS.items() if args.hypothesis in cls.capabilities.hypotheses]
            raise StructlinError(f"--hypothesis {args.hypothesis} applies to models of {', '.join(takers)}; "
                                 f"{args.model} was trained by {model.learner.name!r}"
                                 + (f" (its hypotheses: {', '.join(hypotheses)})" if hypotheses else ""))
        model.learner.set_params(hypothesis=args.hypothesis)
    return model


def _classify(args) -> None:
    """Classify the lines of ``--input`` (standard input), or the files of an ``--input`` folder, a batch at a
    time: every line from a pipe or a terminal is answered before the next one is waited for."""
    classifier = _load(Classifier, args)
    broken = [label for label in map(str, classifier.classes_) if not _fits_a_field(label)]
    if broken and args.format != "json":
        raise UsageError(f"{args.model}: the model predicts the label {broken[0]!r}, which a line of --format "
                         f"{args.format} cannot hold (a tab or a line break): give --format json")
    probabilities = _with_probabilities(classifier, args, args.format)
    folder = args.input is not None and Path(args.input).is_dir()
    write = CLASSIFIED_FORMATS[args.format]
    with _output(args.output) as out, _progress(_file_progress(args), desc=args.input, unit="document") as bar:
        for names, documents, places in _documents_to_classify(args.input, args.encoding, folder,
                                                               _line_kind(classifier, args.model, folder)):
            if folder and args.format != "json":
                _refuse_unwritable_names(names, args.format)
            with _located(places):
                if probabilities:
                    table = classifier.predict_proba(documents)
                    labels = classifier.classes_[table.argmax(axis=1)].tolist()
                    chosen = [dict(zip(classifier.classes_.tolist(), row)) for row in table.tolist()]
                else:
                    labels, chosen = classifier.predict(documents).tolist(), [None] * len(documents)
            out.write("".join(write(*row, folder) for row in zip(names, labels, chosen)))
            out.flush()
            bar.update(len(documents))


def _fits_a_field(text: str) -> bool:
    """Whether ``text`` can be a field of a line of tab-separated output: no tab, no line break."""
    return "\t" not in text and text.splitlines() == [text]


def _refuse_unwritable_names(paths: list[str], fmt: str) -> None:
    """Refuse a file name that a line of output cannot hold (:func:`_fits_a_field`)."""
    broken = next((path for path in paths if not _fits_a_field(path)), None)
    if broken is not None:
        raise CorpusFormatError(broken, None, f"a file name with a tab or a line break, which a line of --format {fmt} "
                                "cannot hold: give --format json")


def _line_kind(classifier: Classifier, path: str, folder: bool) -> str:
    """What ``classify`` reads a line as, for the documents ``classifier`` was trained on: a text, a tuple of
    tab-separated fields, or SVMlight features; a folder's files are texts."""
    kind = next((kind for kind in ("fields", "numeric") if classifier.trained_on(kind)), "text")
    if folder and kind != "text":
        raise UsageError(f"{path} was trained on {'tuples of fields' if kind == 'fields' else 'numeric feature dicts'}"
                         f": classify reads those one a line from a file or standard input, not the files of a folder")
    return kind


def _documents_to_classify(source: str | None, encoding: str, folder: bool,
                           kind: str) -> Iterator[tuple[list[str], list, list[tuple[str, int | None]]]]:
    """Batches of documents' names, documents and the places they were read from: the paths and texts of the files
    of a ``folder``, or the lines of a file or of standard input (a line is its own name), each (``kind``) a text, a
    tuple of its tab-separated fields, or the features of an SVMlight line (``index:value ...``, after an optional
    label, which classifying does not read; a blank line has none); a byte that is not ``encoding`` is an error
    located by file and line."""
    if folder:
        files = list(folder_files(source))
        if not files:
            raise CorpusFormatError(source, None, "no files to classify (an empty folder)")
        for batch in _batches(files, BATCH):
            yield batch, [decode(Path(path).read_bytes(), encoding, path) for path in batch], [(p, None) for p in batch]
        return
    name = source_name(source or sys.stdin.buffer)
    for lines in line_batches(source or sys.stdin.buffer, encoding):
        texts = [text for _, text in lines]
        if kind == "fields":
            documents = [tuple(text.split("\t")) for text in texts]
        elif kind == "numeric":
            documents = [(svmlight_line(text, name, number, labelled=False) or (None, {}))[1] for number, text in lines]
        else:
            documents = texts
        yield texts, documents, [(name, number) for number, _ in lines]


def _text_label(name: str, label, probabilities: dict | None, folder: bool) -> str:
    return f"{name}\t{label}\n" if folder else f"{label}\n"


def _json_label(name: str, label, probabilities: dict | None, folder: bool) -> str:
    record = {"path": name, "label": label} if folder else {"label": label}
    return _json_line(record if probabilities is None else {**record, "probabilities": probabilities})


def _tsv_label(name: str, label, probabilities: dict | None, folder: bool) -> str:
    chosen = [] if probabilities is None else [probabilities[label]]
    return "\t".join(map(str, [label, *chosen, name])) + "\n"


#: classify's output formats: a document's name (its path, or its line), label and label probabilities (or None),
#: and whether the documents are the files of a folder.
CLASSIFIED_FORMATS = {"text": _text_label, "json": _json_label, "tsv": _tsv_label}


def _lines(path: str, encoding: str | None) -> list[str]:
    """The lines of the text file ``path`` (in ``encoding``, default UTF-8), read as every corpus file is."""
    with open_text(path, encoding or "UTF-8") as lines:
        return [text for _, text in lines]


def _explain(args) -> None:
    """``explain``: why the model predicts what it does for ``--text`` (a tagger: for every token, or for ``--token``
    or ``--index``), or without it the heaviest features of every label, named from ``--sample``."""
    task = _task_of(args.model)
    model, tagger = task.model.load(args.model), task is TAGGING
    if not tagger and (args.token is not None or args.index is not None or args.tokenize):
        raise UsageError(f"--token, --index and --tokenize choose a tagger's tokens; {args.model} is a classifier")
    if args.text is None:
        if args.token is not None or args.index is not None:
            raise UsageError("--token and --index choose a token of --text")
        lines = [] if args.sample is None else _lines(args.sample, args.encoding)
        sample = [_explained_tokens(model, line, args.tokenize) for line in lines if line.strip()] if tagger else lines
        top = model.top_features(args.top, sample)
        print(json.dumps(top.to_dict(), ensure_ascii=False) if args.json else top.format())
        return
    if args.sample is not None:
        raise UsageError("--sample names the heaviest features, without --text")
    if not tagger:
        explained = model.explain(args.text, top=args.top)
        print(json.dumps(explained.to_dict(), ensure_ascii=False) if args.json else explained.format())
        return
    tokens = _explained_tokens(model, args.text, args.tokenize)
    index = args.index
    if args.token is not None:
        words = [t[0] if isinstance(t, tuple) else t for t in tokens]
        if args.token not in words:
            raise StructlinError(f"--token {args.token!r} is not a token of --text ({' '.join(words)})")
        index = words.index(args.token)
    explained = model.explain(tokens, index=index, top=args.top)
    explained = [explained] if index is not None else explained
    if args.json:
        print(json.dumps({"tokens": [list(t) if isinstance(t, tuple) else t for t in tokens],
                          "explanations": [e.to_dict() for e in explained]}, ensure_ascii=False))
    else:
        print("\n\n".join(e.format() for e in explained))


def _explained_tokens(tagger: Tagger, text: str, tokenized: bool) -> list:
    """The tokens of a line for ``tagger``: split at whitespace or (``tokenized``) by the Penn Treebank's rules; a
    tagger that reads more columns than the word (a chunker's POS) takes each token as ``word/POS``."""
    words = tokenize(text) if tokenized else text.split()
    if not words:
        raise UsageError("--text has no tokens to explain")
    width = len(tagger.feature_set.fields)
    if width == 1:
        return words
    tokens = [tuple(w.rsplit("/", width - 1)) for w in words]
    bad = next((w for w, t in zip(words, tokens) if len(t) != width), None)
    if bad is not None:
        raise StructlinError(f"the model reads the columns {', '.join(tagger.feature_set.fields)}: write each token as "
                             f"{'/'.join(tagger.feature_set.fields)}, got {bad!r}")
    return tokens


def _file_progress(args) -> bool | None:
    """tag's and classify's progress: over an ``--input`` file or folder whose output does not go to the terminal
    (where it shows itself), when stderr is one (:func:`_progress`)."""
    return None if args.input and (args.output or not sys.stdout.isatty()) else False


def _progress(progress: bool | None, *, unit: str, **bar) -> tqdm:
    """A progress bar on stderr counting ``unit`` s (more of tqdm's options: ``bar``), gone when done; ``progress``
    as a learner's: shown when true, hidden when false, and by default only when stderr is a terminal."""
    return tqdm(disable=quiet(progress), leave=False, unit=f" {unit}s", **bar)


def _batches(items: Iterable, size: int) -> Iterator[list]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    iterator = iter(items)
    return iter(lambda: list(islice(iterator, size)), [])


def _output(path: str | None):
    """``path`` written atomically as UTF-8 text, gzipped for a name ending in ``.gz``
    (:func:`~structlin.outputs.text_output`), or standard output."""
    return text_output(path) if path else nullcontext(sys.stdout)


def _data_kind(source: str, args):
    """The catalog entry of ``source`` (None for a path, or with ``--format``) and whether it holds documents
    (a path does with a document ``--format``, or a JSON file's name; a TSV or CSV file unless ``--column`` is given
    or its header names a word column, :func:`~structlin.readers.is_token_table`)."""
    catalog = Catalog.load()
    entry = catalog[source] if is_corpus_name(catalog, source) and not args.format else None
    if entry:
        return entry, entry.kind == "documents"
    if args.format in ("tsv", "csv") and (args.column or is_token_table(source, "\t" if args.format == "tsv" else ",",
                                                                         args.encoding or "UTF-8")):
        return None, False
    if args.format is None and guess_document_format(source) == "jsonl":  # no tagged format is JSON
        return None, True
    return None, args.format in DOCUMENT_FORMATS


def _stats(args) -> None:
    entry, documents = _data_kind(args.corpus, args)
    task = CLASSIFICATION if documents else TAGGING
    split = args.split if entry and args.split in entry.splits else None  # a file, or a one-split corpus
    against = args.against or ("train" if entry and split != "train" and "train" in entry.splits else None)
    reference = None
    if against is not None:
        reference = (_units(task, args.corpus, against, args) if entry and against in entry.splits
                     else _units(task, against, None, args))
    data = _units(task, args.corpus, split, args)
    stats = (document_stats if documents else corpus_stats)(data, reference)
    print(json.dumps(stats) if args.json else format_stats(args.corpus, stats))


def _clusters(args) -> None:
    """Build word clusters from the unlabeled text of ``args.sources`` and write them as a ``paths`` file."""
    started, streams = time.perf_counter(), []
    overwritten = next((source for source in args.sources if same_file(source, args.output)), None)
    if overwritten:
        raise UsageError(f"--output {args.output} is also the source {overwritten}: choose another --output")
    for source in args.sources:
        tokens = _unlabeled_sentences(source, args)
        print(f"{source}: {len(tokens):,} sentences, {sum(map(len, tokens)):,} tokens")
        streams.append(tokens)
    clusters = build_clusters(chain.from_iterable(streams), min_count=args.min_count, contexts=args.contexts,
                              dimensions=args.dimensions, depth=args.depth, lowercase=not args.keep_case,
                              seed=args.seed, progress=sys.stderr.isatty())
    clusters.write(args.output)
    print(f"{len(clusters):,} words seen at least {args.min_count} times, in clusters of up to {args.depth} bits "
          f"({time.perf_counter() - started:.1f} s): {args.output}")


def _unlabeled_sentences(source: str, args) -> list[list[str]]:
    """The token lists of one source of unlabeled text: the words of a catalog corpus's splits (``NAME:SPLITS``,
    else ``--split``; ``+`` joins several; a document corpus's texts a line at a time, split by the Penn
    Treebank's rules), or a text file's lines (at whitespace, or by those rules with ``--tokenize``)."""
    catalog = Catalog.load()
    name, _, splits = source.partition(":")
    if os.path.exists(source) or not is_corpus_name(catalog, name):
        words = tokenize if args.tokenize else str.split
        return [words(text) for text in _lines(source, args.encoding) if text.strip()]
    entry = catalog[name]
    splits = splits or (args.split if args.split in entry.splits or len(entry.splits) != 1 else next(iter(entry.splits)))
    sentences = []
    for split in splits.split("+"):
        if entry.kind != "documents":
            sentences += [s.words for s in _units(TAGGING, name, split, args)]
            continue
        documents = _units(CLASSIFICATION, name, split, args)
        if not all(isinstance(d.text, str) for d in documents):
            raise StructlinError(f"{name}: its documents are fields or feature values, not text")
        sentences += [tokenize(line) for d in documents for line in d.text.splitlines() if line.strip()]
    return sentences


def _analyze(args) -> None:
    source = args.corpus or args.train
    entry, documents = _data_kind(source, args)
    split = args.split if entry and args.split in entry.splits else None
    if documents:
        if args.decoder == "viterbi":
            raise StructlinError("documents take the multiclass decoder, not viterbi")
        data = _units(CLASSIFICATION, source, split, args)
        model = Classifier(args.features, bits=args.bits)
        X, y = model.training_data([d.text for d in data], [d.label for d in data])
    else:
        model = Tagger(args.features, decoder=args.decoder or "viterbi", bits=args.bits)
        X, y = model.training_data(_units(TAGGING, source, split, args))
    features = model.feature_set.name
    try:
        result = analyze(model.joint, model.decoder, X, y, C=args.C, passes=args.passes, epochs=args.epochs,
                         seed=args.seed, delta=args.delta, delta_trick=args.delta_trick)
    except ValueError as err:  # an option out of range: one line, as for every other bad input
        raise StructlinError(str(err)) from None
    described = {"corpus": source, "split": split, "features": features, "decoder": model.decoder.name}
    if args.json:
        print(json.dumps({**described, **result.to_dict()}))
    else:
        print(f"{source}{f' ({split})' if split else ''}, features {features}, decoder {model.decoder.name}")
        print(result.format())


def _experiment(args) -> None:
    config = load_config(args.config)
    folder = Path(args.output or Path("experiments") / config.name)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--output {folder} is a file: the report is a folder (of results.json, results.csv, "
                         "report.md and plots); choose another --output")
    inputs = [("the configuration", config.path),
              *((f"the {split} data", path) for split, path in config.files.items()),
              *(("a file of its feature sets", path) for path in config.feature_files)]
    for given, path in inputs:
        replaced = next((output for output in output_files(config, folder) if same_file(output, path)), None)
        if replaced is not None:
            raise UsageError(f"--output {folder}: the run writes {replaced}, which is also {given}: writing it would "
                             "destroy it; choose another --output")
    if not args.quiet and (folder / "results.json").exists():
        print(f"{folder} holds the results of an earlier run: this run's replace them when it ends", file=sys.stderr)
    command = shlex.join(["structlin", "experiment", args.config, *(["--output", args.output] if args.output else []),
                          *(["--quiet"] if args.quiet else [])])
    with _progress(False if args.quiet else None, total=len(config.systems), desc=config.name, unit="system") as bar:

        def log(line: str) -> None:
            """After each system: its line (above the bar), and the bar's step."""
            if not args.quiet:
                bar.write(line)
            bar.update()

        result = run_experiment(config, command=command, log=log,
                                models=folder / "models" if config.keep_models else None)
    written = write_report(result, folder)
    if not args.quiet:
        print(f"report: {written[2]} ({len(written)} files in {folder})")
