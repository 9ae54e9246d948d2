"""The ``structlin`` command's argument parser: its commands, their options and help texts.

Option values are checked here where they can be on their own (a hash size, a seed, an encoding, column
names), with the library's own check where it has one, so that a bad one is refused with status 2 before
any work.  Options that contradict each other are refused by the commands, before any work too
(:func:`~structlin.cli.commands.check_arguments`), and options that do not fit the data by the readers.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable

from .. import __version__
from ..catalog import CorpusName
from ..decoders import DECODERS
from ..documents import strip_usenet
from ..errors import OptionValueError, UnknownNameError
from ..hashing import check_training_bits
from ..learners import LEARNERS
from ..learners.choice import AUTO, CANDIDATES
from ..learners.protocol import SEED_MAX
from ..readers import CONLLU_COLUMNS, FILE_FORMATS, check_encoding, read_columns
from ..sources import DOCUMENT_FORMATS
from ..tasks import CLASSIFICATION, TAGGING, Task
from ..templates import available_feature_sets


#: The tag columns of a CoNLL-U file.


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``structlin: error: ...``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_data_options(parser, *, split: str | None, document_formats: bool = False):
    parser.add_argument("--column", help="tag column: upos or xpos for CoNLL-U (default: the model's, else upos); "
                                         "for NLTK corpora universal, or a column name such as chunk")
    formats = tuple(dict.fromkeys(FILE_FORMATS + (DOCUMENT_FORMATS if document_formats else ())))
    parser.add_argument("--format", choices=formats, help="file format (default: conllu for *.conllu, csv for *.csv, "
                                                          "else word<TAB>tag; slash: word/TAG tokens, a sentence per "
                                                          "line; tsv, csv: a token per row under a header row such as "
                                                          "'Sentence #,Word,POS,Tag', --column naming the tags; for "
                                                          "classifiers: folders for a directory or archive, tsv, "
                                                          "csv, jsonl, fasttext, svmlight)")
    parser.add_argument("--columns", type=_column_names, help="column names of a column file, e.g. word,pos,chunk "
                        "(with --format columns; the tags: --column, default the last one)")
    if not document_formats:  # the document options give it (_add_document_options)
        _add_encoding(parser, "the files")
    if split:
        parser.add_argument("--split", help=f"split of a named corpus (default: {split})")
        parser.set_defaults(default_split=split)


def _column(text: str) -> int | str:
    """A TSV/CSV column: digits are an index counted from 0, anything else a header name, but a negative number (as
    Python counts from the end), which was read as a header name and blamed a header the file may not have."""
    if re.fullmatch(r"-[0-9]+", text):
        raise argparse.ArgumentTypeError(f"{text}: columns are counted from 0 (the first), not from the end")
    return int(text) if text.isascii() and text.isdigit() else text


def _delimiter(text: str) -> str:
    """``--delimiter``: one character other than a quote or line break; ``tab`` or ``\\t`` for a tab."""
    delimiter = "\t" if text in ("tab", "\\t") else text
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise argparse.ArgumentTypeError(f"{text!r}: a delimiter is one character other than a quote or line break "
                                         "(tab or \\t for a tab)")
    return delimiter


def _column_names(text: str) -> tuple[str, ...]:
    """``--columns``: names separated by commas, checked as :func:`~structlin.readers.read_columns` checks them
    (before it opens anything)."""
    names = tuple(text.split(","))
    _library_check(lambda: read_columns(os.devnull, columns=names))
    return names


def _strip_parts(text: str) -> tuple[str, ...]:
    """``--strip``: parts of Usenet posts separated by commas, checked as :func:`~structlin.documents.strip_usenet`
    checks them."""
    parts = tuple(text.split(","))
    _library_check(lambda: strip_usenet("", parts))
    return parts


def _encoding(text: str) -> str:
    """``--encoding``: a text encoding Python knows."""
    _library_check(lambda: check_encoding(text))
    return text


def _registered(registry: dict, kind: str) -> Callable[[str], str]:
    """An option naming one of ``registry``'s entries (a learner, a decoder): another name is a usage error."""
    def check(text: str) -> str:
        if text not in registry:
            raise argparse.ArgumentTypeError(str(UnknownNameError(kind, text, registry)))
        return text
    return check


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _at_least(minimum: int, maximum: int | None = None):
    """The type of an integer option of at least ``minimum`` (and at most ``maximum``)."""

    def integer(text: str) -> int:
        value = _integer(text)
        if value < minimum or maximum is not None and value > maximum:
            within = f"of at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"expected an integer {within}, got {value}")
        return value

    return integer


#: ``--seed``: the seeds learners take (:data:`~structlin.learners.protocol.SEED_MAX`).
_seed = _at_least(0, SEED_MAX)


def _fraction(text: str) -> float:
    """A fraction strictly between 0 and 1 (``--dev-fraction``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1 (both excluded), got {value}")
    return value


def _bits(text: str) -> int:
    """``--bits``: a hash size the feature hasher takes."""
    bits = _integer(text)
    _library_check(lambda: check_training_bits(bits))
    return bits


def _library_check(check) -> None:
    """Run the library's own check of an option value; its refusal is the parser's (status 2, naming the option)."""
    try:
        check()
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_document_options(parser, *, formats: bool = True):
    if formats:
        parser.add_argument("--format", choices=DOCUMENT_FORMATS, help="input format (default: folders for a "
                            "directory or archive, tsv for *.tsv/*.tab (fields between tabs, no quoting), csv for "
                            "*.csv (RFC 4180 quoting), jsonl for *.jsonl/*.ndjson/*.json (an object per line, or an array of "
                            "objects), svmlight for *.svm, else fastText lines)")
    parser.add_argument("--strip", type=_strip_parts, help="drop parts of Usenet posts (folder trees and archives): "
                        "any of headers,footers,quotes")
    parser.add_argument("--granularity", choices=("coarse", "fine"),
                        help="labels of the qc corpus: COARSE (6) or COARSE:fine (50) (default: coarse)")
    _add_encoding(parser, "the files (tagged sentences or documents)")
    parser.add_argument("--header", action=argparse.BooleanOptionalAction,
                        help="TSV/CSV: the first row names the columns (--no-header: it is data; default: a header "
                        "when its fields are all names, one a label name such as label/class/sentiment and one a "
                        "text name such as text/sentence/review)")
    parser.add_argument("--label-column", type=_column, metavar="COLUMN", help="TSV/CSV: the label column, a "
                        "header name or an index counted from 0 (default: the column named label, class, ... in the "
                        "header; without one, 0 unless the rows' contents say otherwise); JSON Lines: the label's key "
                        "(default: the first key named so)")
    parser.add_argument("--text-column", type=_column, metavar="COLUMN", help="TSV/CSV: the text column, a header "
                        "name or an index counted from 0 (default: the column named text, sentence, ... in the "
                        "header; without one, 1 unless another column holds clearly more words); JSON Lines: the "
                        "text's key (default: the first key named so)")
    parser.add_argument("--delimiter", type=_delimiter, metavar="CHAR", help="CSV: the field delimiter, one character "
                        "(tab or \\t for a tab; default: the first of , ; tab | that splits the first rows alike)")


def _add_encoding(parser, what: str) -> None:
    parser.add_argument("--encoding", type=_encoding, help=f"text encoding of {what}, e.g. latin-1 or cp1252 "
                        "(default: utf-8; a named corpus's own)")


def _add_test_data(parser) -> None:
    """The test data of ``evaluate`` and ``compare``: ``--corpus NAME`` or ``--test FILE``, and how to read it."""
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--corpus", type=CorpusName, help="named corpus")
    target.add_argument("--test", help="tagged file (for a classifier: labelled documents)")
    _add_data_options(parser, split="test", document_formats=True)
    _add_document_options(parser, formats=False)


def _add_model_io(parser, input_help: str) -> None:
    """A model to apply, and where its input comes from and its output goes."""
    parser.add_argument("model")
    parser.add_argument("--input", "-i", type=_standard_stream, help=input_help + "; - is standard input")
    parser.add_argument("--output", "-o", type=_standard_stream,
                        help="output file (gzipped when its name ends in .gz; default, or -: stdout)")
    parser.set_defaults(inputs=("model", "--input"))


def _standard_stream(path: str) -> str | None:
    """A file option's value: ``-`` (the convention for standard input or output) is None, the default."""
    return None if path == "-" else path


def _file_path(path: str) -> str:
    """A file option's value where standard output cannot stand in (a model is a zip archive): ``-`` is refused,
    not written as a file of that name."""
    if path == "-":
        raise argparse.ArgumentTypeError("a file path, not - (this output is a file, not standard output)")
    return path


def _add_source(parser, corpus_help: str, train_help: str) -> None:
    """The training data: ``--corpus NAME`` or ``--train PATH``, exactly one."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=CorpusName, help=corpus_help)
    source.add_argument("--train", help=train_help)


DEV_HELP = ("dev file, or a split name of --corpus, for early stopping; none trains without one and keeps the "
            "last epoch (default: the corpus's dev split unless --split trains on it; without one, the epochs are "
            "chosen on 10%% of the training data held out — of each label's documents, or of the sentences, the "
            "last tenth in file order for --seed 0; a random tenth of documents sorted by their texts: the latest "
            "epoch within a standard error of the best — and the model is then trained on all of it)")
TRAIN_SPLIT_HELP = ("training split(s) of --corpus, joined by + (default: train, or the corpus's only split); "
                    "train+dev trains a final model on all labelled data with the settings dev chose")


def _add_training_split(parser) -> None:
    parser.add_argument("--split", help=TRAIN_SPLIT_HELP)


#: Options every command that trains adds itself, with its own help and default (the seed also draws
#: folds and ``--dev-fraction``); the rest of each learner's declared options are generated by
#: :func:`_add_learner_options`.
COMMAND_OPTIONS = ("seed",)


def learner_cli_options(own: tuple[str, ...] = COMMAND_OPTIONS) -> dict[str, list]:
    """Every command-line option the learners declare but the command does not add itself (``own``), by
    name, with the learners that declare it (an option several learners share, such as ``C``, is one flag)."""
    options: dict[str, list] = {}
    for name, cls in LEARNERS.items():
        for option in cls.options:
            if option.cli and option.name not in own:
                options.setdefault(option.name, []).append((name, option))
    return options


def _add_learner_options(parser, task: Task) -> None:
    """One flag per declared learner option; its help names the learners that take it and their defaults
    (the task's own default where it sets one, as a tagger does the batch size)."""
    for name, declared in learner_cli_options().items():
        option = declared[0][1]
        helps = {}
        for learner, each in declared:  # learners with the same help and default share one line
            value = task.learner_defaults.get(name, each.default)
            default = "" if value is None else f" (default: {value})"
            helps.setdefault(f"{each.help}{default}", []).append(learner)
        text = "; ".join(f"{', '.join(learners)}: {text}" for text, learners in helps.items())
        choices = list(dict.fromkeys(c for _, each in declared for c in each.choices)) or None
        kind = str if option.parse is not None or option.type is object else option.type
        if kind is bool:
            kind = _boolean
        elif kind in (int, float):
            kind = _checked_number(kind, [each for _, each in declared])
        parser.add_argument(option.command_line_flag, dest=name, type=kind, choices=choices, metavar=option.metavar,
                            help=text.replace("%", "%%"))


def _checked_number(kind: type, declared: list) -> Callable[[str], int | float]:
    """The type of a learner option's number flag: the number, refused by the parser on its own (exit 2) when
    no learner declaring the option accepts it (``--epochs 0``, ``--margin nan``)."""
    def number(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        refusal = None
        for option in declared:
            try:
                return option.check(value)
            except OptionValueError as err:
                refusal = refusal or str(err).removeprefix(f"{option.name} ")
        raise argparse.ArgumentTypeError(refusal)

    number.__name__ = kind.__name__  # argparse names the type in its own messages
    return number


def _boolean(text: str) -> bool:
    if text.lower() in ("true", "yes", "1"):
        return True
    if text.lower() in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _add_hypothesis_option(parser, what: str) -> None:
    hypotheses = list(dict.fromkeys(h for cls in LEARNERS.values() for h in cls.capabilities.hypotheses))
    takers = [name for name, cls in LEARNERS.items() if cls.capabilities.hypotheses]
    parser.add_argument("--hypothesis", choices=hypotheses, help=f"{', '.join(takers)}: {what}")


def _add_probabilities_option(parser, what: str) -> None:
    """``--probabilities``/``--no-probabilities`` of ``tag`` and ``classify``: ``what`` the output gives."""
    takers = ", ".join(name for name, cls in LEARNERS.items() if cls.capabilities.probabilistic)
    parser.add_argument("--probabilities", action=argparse.BooleanOptionalAction, help=f"json and tsv output: "
                        f"{what} (default: when the model's learner gives probabilities, as {takers} do; with "
                        "--probabilities, a model whose learner does not is an error)")


def _add_model_options(parser, task: Task, *, choice: bool = True) -> None:
    """The model a training command builds: its feature set, learner (and decoder), their options, the
    seed and the hash size; defaults from the task's model and the learners' declarations.  With ``choice`` the
    learner may be ``auto`` (the candidates trained, the best kept: :mod:`~structlin.learners.choice`)."""
    parser.add_argument("--features", help=f"feature set name or TOML file (default: {task.model.default_features_rule}; "
                        f"bundled: {', '.join(available_feature_sets())})")
    if choice:
        names = [*LEARNERS, AUTO]
        auto = (f"; {AUTO}: {' or '.join(CANDIDATES)}, whichever scores best on dev (without dev, on the "
                "held-out share that chooses the epochs)")
        default = task.default_learner or task.default("learner")
    else:
        names, auto, default = list(LEARNERS), "", task.default("learner")
    parser.add_argument("--learner", default=default, type=_registered(dict.fromkeys(names), "learner"),
                        help=f"one of: {', '.join(names)}{auto} (default: {default})")
    if task.decoders:
        parser.add_argument("--decoder", type=_registered(DECODERS, "decoder"),
                            help=f"one of: {', '.join(DECODERS)} (default: {task.default('decoder')})")
        parser.add_argument("--tag-dictionary", type=_at_least(1), metavar="K",
                            help="restrict every word seen K times or more in training to the tags seen with it, in "
                                 "training and tagging: faster with many tags, at some cost in accuracy (default: off; "
                                 "docs/benchmarks.md)")
    _add_learner_options(parser, task)
    parser.add_argument("--seed", type=_seed, default=0, help="seed of the learner's random choices, of folds "
                        "and of --dev-fraction (default: 0)")
    parser.add_argument("--bits", type=_bits, default=task.default("bits"),
                        help=f"feature hash size 2**bits (default: {task.default('bits')})")


def _add_train_command(train, task: Task, source_help: tuple[str, str], data_options, example: str, *,
                       tune: bool = False) -> None:
    """``train tagger|classifier`` (``tune`` false) or ``tune tagger|classifier``: the training data
    (``source_help``: the help of --corpus and --train; ``data_options`` adds how to read it), dev, the
    model, where it goes and, to tune, the grid of candidates."""
    if tune:
        parser = train.add_parser(task.kind, help=f"choose a {task.kind}'s settings on dev", description=(
            f"Train a {task.kind} per candidate of --grid, score each on dev (span F1 for BIO tags, accuracy "
            "otherwise; without a dev split, the 10% of the training data train holds out), print the ranking, and "
            f"with --output train and save the best. Example: structlin tune {task.kind} --corpus "
            f"{example.split()[0]} --grid relative_margin=1,2,4"))
    else:
        parser = train.add_parser(task.kind, help=f"train a {task.kind}", description=f"Train a {task.kind} and "
                                  f"save it. Example: structlin train {task.kind} --corpus {example}")
    _add_source(parser, *source_help)
    _add_training_split(parser)
    dev = parser.add_mutually_exclusive_group()
    dev.add_argument("--dev", help=DEV_HELP)
    dev.add_argument("--dev-fraction", type=_fraction, help=f"hold out this fraction of the training {task.unit}s "
                     "(seeded) as dev")
    data_options(parser)
    _add_model_options(parser, task, choice=not tune and not task.decoders)  # a tagger has one candidate
    if tune:
        parser.add_argument("--grid", nargs="+", required=True, metavar="NAME=V1,V2", help="learner options and "
                            "their candidate values, e.g. relative_margin=1,2,4 epochs=5,10 (every combination)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
    if not tune:
        parser.add_argument("--no-tune", action="store_true", help="choose nothing on held-out data: without dev "
                            "keep the last epoch, and a setting otherwise chosen on dev takes its fixed value "
                            "(naive Bayes: alpha 1)")
        _add_cluster_options(parser)
        if task.streams:
            takers = ", ".join(name for name, cls in LEARNERS.items()
                               if cls.capabilities.streams and (cls.capabilities.sequences or not task.decoders))
            parser.add_argument("--stream", action="store_true", help="read the training data once into a feature "
                                "cache on disk (under STRUCTLIN_CACHE; found again by later runs on the same data and "
                                "settings) and train from it, reading what each epoch needs a segment at a time, so "
                                f"that memory holds neither the corpus nor its features ({takers}; svm with the pegasos "
                                "solver; not with --dev-fraction; "
                                "with --workers or --scheduler the workers read the cache's shards)")
    parser.add_argument("--output", "-o", required=not tune, type=_file_path, help="where to write the model" + (
        " (tune: the best candidate's, trained again)" if tune else ""))
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    learner_files = tuple(declared[0][1].command_line_flag for declared in learner_cli_options().values()
                          if declared[0][1].type is object)  # options read from a file (a cost matrix)
    parser.set_defaults(inputs=("--train", "--dev", "--features", *learner_files))


def _add_cluster_options(parser) -> None:
    """``--workers N`` or ``--scheduler ADDRESS``: train on a Dask cluster (the learners that declare it)."""
    takers = ", ".join(name for name, cls in LEARNERS.items() if cls.capabilities.distributed)
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--workers", type=_at_least(1), metavar="N", help="train data-parallel on a local Dask "
                         f"cluster of N worker processes, started for the run ({takers}; max-ent with the lbfgs "
                         "solver; needs structlin[dask])")
    cluster.add_argument("--scheduler", metavar="ADDRESS", help="train data-parallel on the Dask cluster whose "
                         "scheduler is at ADDRESS, e.g. tcp://127.0.0.1:8786 (started with dask scheduler and dask "
                         "worker; workers read the shards from files under STRUCTLIN_CACHE, which workers on other "
                         "machines must share at the same path)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="structlin", description="Linear structured learning for NLP: train, evaluate and "
                     "apply taggers.", epilog="Corpora: a catalog name (e.g. ud-english-ewt, treebank, conll2000, "
                     "brown) or a file path. Set STRUCTLIN_DATA to a directory holding corpora; missing ones "
                     "are downloaded into a cache.")
    parser.add_argument("--version", action="version", version=f"structlin {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    learners = "\n".join(f"  {name:<20} {cls.summary}" for name, cls in LEARNERS.items())
    train = commands.add_parser("train", help="train a model", formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"learners (--learner):\n{learners}").add_subparsers(
        dest="model", required=True, parser_class=_Parser)
    tune = commands.add_parser("tune", help="choose a model's settings on dev data").add_subparsers(
        dest="model", required=True, parser_class=_Parser)
    for group, tuning in ((train, False), (tune, True)):
        _add_train_command(group, TAGGING, ("named corpus (its train split; dev defaults to its dev split)",
                                            "training file"),
                           lambda parser: _add_data_options(parser, split=None), "ud-english-ewt --output ewt.model",
                           tune=tuning)
        _add_train_command(group, CLASSIFICATION, ("named document corpus (its train split; dev defaults to its "
                                                   "dev split)", "training file, folder tree or archive"),
                           _add_document_options, "20news-bydate --output news.model", tune=tuning)

    evaluate = commands.add_parser("evaluate", help="score a model on a tagged corpus",
                                   description="Evaluate a tagger: token, sentence, known/unknown-word accuracy, "
                                               "per-tag P/R/F1, confusions.")
    evaluate.add_argument("model")
    _add_test_data(evaluate)
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    _add_hypothesis_option(evaluate, "the hypothesis of a kernel perceptron model to evaluate (default: the model's)")

    compare = commands.add_parser("compare", help="test whether two models' accuracies differ significantly",
                                  description="Score two taggers or two classifiers on the same test data and test "
                                              "the difference: McNemar's test on tokens (documents), the paired "
                                              "bootstrap and approximate randomization over sentences (documents). "
                                              "P-values are two-sided.")
    compare.add_argument("model_a", metavar="MODEL_A", help="model file of system a (the baseline)")
    compare.add_argument("model_b", metavar="MODEL_B", help="model file of system b; the difference is b − a")
    _add_test_data(compare)
    compare.add_argument("--seed", type=_seed, default=0, help="seed of the resampling tests (default: 0)")
    compare.add_argument("--samples", type=_at_least(1), default=10_000, help="samples of the bootstrap and "
                         "shuffles of approximate randomization (default: 10000)")
    compare.add_argument("--json", action="store_true", help="print one JSON object")

    tag = commands.add_parser("tag", help="tag text with a model",
                              description="Tag tokenized text (one sentence per line, output word/TAG) or a "
                                          "CoNLL-U file (output CoNLL-U with only the tag column replaced). A line "
                                          "from a pipe or a terminal is tagged as soon as it arrives.")
    _add_model_io(tag, "input file (default: stdin)")
    tag.add_argument("--format", choices=("text", "json", "tsv", "conllu"), help="output format: text (word/TAG, "
                     "a line per sentence), json (a JSON object per line: a sentence's tokens, tags and, with "
                     "probabilities, each tag's), tsv (token<TAB>tag[<TAB>probability] lines, a blank line after each "
                     "sentence) or conllu (for CoNLL-U input, only the tag column replaced; for text, ID, FORM and "
                     "the tag, other fields _) (default: conllu for CoNLL-U input, else text)")
    tag.add_argument("--input-format", choices=("text", "conllu"), help="text (a sentence per line) or conllu "
                     "(default: text with --tokenize, else conllu for *.conllu[.gz] files, else --format if it is text "
                     "or conllu, else text)")
    tag.add_argument("--tokenize", action="store_true", help="split each line into tokens by the Penn Treebank's "
                     "rules (NLTK's TreebankWordTokenizer: no download; 'the mat.' becomes 'the mat .') rather than "
                     "at whitespace; a line is still one sentence")
    tag.add_argument("--column", choices=CONLLU_COLUMNS, help="CoNLL-U column to fill (default: the model's, else "
                     "upos)")
    tag.add_argument("--encoding", type=_encoding, help="text encoding of the input (default: utf-8; the output is "
                     "utf-8)")
    _add_probabilities_option(tag, "each chosen tag's probability")

    classify = commands.add_parser("classify", help="classify documents with a model",
                                   description="Classify one document per input line (prints one label per line), "
                                               "or every file of a folder (prints path<TAB>label); for a model "
                                               "trained on tuples of fields (ppattach), a line is its tab-separated "
                                               "fields; for one trained on SVMlight files, a line is 'index:value "
                                               "...' after an optional label, which is not read. A line from a pipe "
                                               "or a terminal is classified as soon as it arrives.")
    _add_model_io(classify, "text file (one document per line) or folder (default: stdin)")
    classify.add_argument("--format", choices=("text", "json", "tsv"), default="text", help="output format: text "
                          "(a label per line; path<TAB>label for a folder), json (a JSON object per line: the label "
                          "and, with probabilities, every label's) or tsv (label[<TAB>probability]<TAB>document: "
                          "the line, or the file's path) (default: text)")
    classify.add_argument("--encoding", type=_encoding, default="utf-8", help="text encoding of the input (default: utf-8)")
    _add_probabilities_option(classify, "the probability of every label (tsv: of the chosen one)")
    _add_hypothesis_option(classify, "the hypothesis of a kernel perceptron model to classify with (default: the model's)")

    explain = commands.add_parser("explain", help="why a model predicts what it does", description=(
        "Explain one prediction: the features that pushed the label (a tagger's: of every token, or of --token or "
        "--index) and the runner-up, each with its value, weights and contribution (value × weight), the margin "
        "between the two labels and, for a tagger, the transitions beside the chosen tags. Without --text, list the "
        "heaviest features of every label. Example: structlin explain ewt.model --text 'The old man the boats .' "
        "--token man"))
    explain.add_argument("model")
    explain.add_argument("--text", help="the document, or the sentence (tokens between spaces; word/POS for a model "
                         "that reads a POS column, as a chunker does)")
    token = explain.add_mutually_exclusive_group()
    token.add_argument("--token", help="tagger: explain the first token that is this word only")
    token.add_argument("--index", type=_at_least(0), help="tagger: explain the token at this index only (from 0)")
    explain.add_argument("--tokenize", action="store_true", help="tagger: split --text by the Penn Treebank's rules, "
                         "as tag --tokenize does")
    explain.add_argument("--top", type=_at_least(1), default=10, help="features shown per prediction; without --text, "
                         "the heaviest features shown per label (default: 10)")
    explain.add_argument("--sample", help="without --text: a file of sentences (tagger) or documents (classifier), "
                         "one per line, whose features name the heaviest ones (a tagger names them from its known "
                         "words too)")
    explain.add_argument("--encoding", type=_encoding, help="--sample's encoding (default: UTF-8)")
    explain.add_argument("--json", action="store_true", help="print one JSON object")

    validate = commands.add_parser("cross-validate", help="k-fold cross-validation of a classifier",
                                   description="Seeded k-fold cross-validation of a classifier on a corpus with no "
                                               "official split (e.g. movie_reviews, names).")
    _add_source(validate, "named document corpus (all its documents)", "labelled file, folder tree or archive")
    validate.add_argument("--folds", type=_at_least(2), default=10, help="number of folds (default: 10)")
    _add_document_options(validate)
    _add_model_options(validate, CLASSIFICATION)
    validate.add_argument("--json", action="store_true", help="print one JSON object")

    corpus = commands.add_parser("corpus", help="corpus tools").add_subparsers(dest="action", required=True,
                                                                              parser_class=_Parser)
    stats = corpus.add_parser("stats", help="size, labels, ambiguity and OOV rate of a corpus",
                              description="Sentences (documents), tokens, word types, the tag (label) distribution, "
                                          "tag ambiguity, and the out-of-vocabulary rate against another split.")
    stats.add_argument("corpus", help="named corpus or file path")
    _add_data_options(stats, split="train", document_formats=True)
    _add_document_options(stats, formats=False)
    stats.add_argument("--against", help="a split name of the corpus, or a file, whose vocabulary the OOV rate is "
                       "measured against (default: train, for another split of a named corpus)")
    stats.add_argument("--json", action="store_true", help="print one JSON object")

    experiment = commands.add_parser("experiment", help="run a grid of systems and write a report",
                                     description="Train every system of an experiment file (corpus × feature set × "
                                                 "learner × decoder × hyper-parameters; optionally a template ablation "
                                                 "or a learning curve), choose each one's epoch on dev, score it on "
                                                 "test once, and write results.json, results.csv, report.md and plots. "
                                                 "The file's schema: README.md, or structlin.experiments.config.")
    experiment.add_argument("config", metavar="CONFIG.toml", help="the experiment file")
    experiment.add_argument("--output", "-o", help="report folder (default: experiments/<name>/)")
    experiment.add_argument("--quiet", "-q", action="store_true", help="no line per system")

    clusters = commands.add_parser("clusters", help="word clusters from unlabeled text, for the cluster template",
                                   description="Build a binary hierarchy of word clusters from unlabeled text and "
                                   "write each word's bit-string path (the paths file of Liang's brown-cluster, which "
                                   "a feature set reads with clusters = \"FILE\" and the cluster template). Words are "
                                   "placed by their left and right neighbours (positive PMI, a truncated SVD, then "
                                   "seeded bisecting 2-means). Example: structlin clusters brown 20news-bydate "
                                   "--output en.clusters")
    clusters.add_argument("sources", nargs="+", metavar="SOURCE", help="a catalog corpus, NAME or NAME:SPLITS (the "
                          "words of those splits, joined by +, else of --split; a document corpus's texts, split by "
                          "the Penn Treebank's rules), or a text file (one sentence or paragraph per line, tokens "
                          "between spaces)")
    clusters.add_argument("--output", "-o", required=True, type=_file_path,
                          help="the clusters file to write (gzipped when its name "
                          "ends in .gz)")
    clusters.add_argument("--split", default="train", help="split(s) of a catalog corpus given without :SPLITS, joined "
                          "by + (default: train, or its only split); never the split you will test on")
    clusters.add_argument("--tokenize", action="store_true", help="split text files' lines by the Penn Treebank's "
                          "rules rather than at whitespace")
    clusters.add_argument("--encoding", type=_encoding, help="the text files' encoding (default: UTF-8; a catalog "
                          "corpus's is the catalog's)")
    clusters.add_argument("--min-count", type=_at_least(1), default=2, help="cluster the words seen at least this "
                          "often (default: 2)")
    clusters.add_argument("--contexts", type=_at_least(1), default=1000, help="the most frequent words that serve as "
                          "left and right contexts (default: 1000)")
    clusters.add_argument("--dimensions", type=_at_least(1), default=50, help="dimensions of the SVD (default: 50)")
    clusters.add_argument("--depth", type=_at_least(1), default=16, help="bits of the longest path (default: 16)")
    clusters.add_argument("--keep-case", action="store_true", help="cluster words as written (default: lowercased, "
                          "and looked up lowercased)")
    clusters.add_argument("--seed", type=_seed, default=0, help="seed of the SVD and the 2-means (default: 0)")
    clusters.set_defaults(format=None, inputs=())

    analysis = commands.add_parser("analyze", help="the perceptron's mistake bound and the online-to-batch bound "
                                   "on a corpus", description="Theory instruments on a training corpus (see "
                                   "structlin.analysis): the radius R = max ‖φ(x,y) − φ(x,y')‖, the margin γ̂ certified "
                                   "by a structured SVM with a large C (BCFW), the perceptron's mistake bound R²/γ̂² "
                                   "beside the mistakes a perceptron makes until it converges or --epochs run out, and "
                                   "the online-to-batch bound of its first epoch (Cesa-Bianchi et al. 2004).")
    _add_source(analysis, "named corpus", "training file (documents: give --format)")
    _add_data_options(analysis, split="train", document_formats=True)
    _add_document_options(analysis, formats=False)
    analysis.add_argument("--features", help="feature set name or TOML file (default: pos-rich for sentences; "
                          "numeric for SVMlight documents, else text-ngrams)")
    analysis.add_argument("--decoder", choices=("viterbi", "multiclass"), help="sentences: viterbi (default) or "
                          "multiclass (every token on its own); documents take multiclass")
    analysis.add_argument("--C", type=float, default=1000.0, help="the SVM's C, λ = 1/(C·n): large approximates "
                          "the hard-margin SVM (default: 1000)")
    analysis.add_argument("--passes", type=int, default=100, help="at most this many BCFW passes of the SVM; it "
                          "stops earlier at a duality gap of 1%% of its objective (default: 100)")
    analysis.add_argument("--epochs", type=int, default=10, help="at most this many perceptron epochs (default: 10)")
    analysis.add_argument("--delta", type=float, default=0.05, help="δ: the online-to-batch bound holds with "
                          "probability at least 1 − δ (default: 0.05)")
    analysis.add_argument("--delta-trick", type=float, metavar="Δ", help="first give every training position a "
                          "feature of its own with value Δ, which makes any data separable")
    analysis.add_argument("--seed", type=_seed, default=0, help="seed of the perceptron's and the SVM's orders "
                          "(default: 0)")
    analysis.add_argument("--bits", type=_bits, default=22, help="feature hash size 2**bits (default: 22)")
    analysis.add_argument("--json", action="store_true", help="print one JSON object")
    return parser
