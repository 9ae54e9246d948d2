"""The ``structlin`` command: train, evaluate and apply taggers and classifiers; describe corpora.

Errors caused by input (files, names, options) print one line on stderr and exit with status 1
(usage errors: status 2); they never show a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shlex
import sys
import time
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

import numpy as np

from .analysis import analyze
from .catalog import Catalog, is_corpus_name
from .decoders import DECODERS
from .errors import StructlinError, UnknownNameError
from .experiments import cross_validate, load_config, run_experiment, write_report
from .kernels import KERNELS
from .learners import LEARNERS, SVM, MaxEnt, PassiveAggressive, make_learner
from .learners.kernel_perceptron import HYPOTHESES, REMOVALS
from .learners.svm import read_cost_matrix
from .modelfile import model_kind
from .models import Classifier, Tagger
from .readers import FILE_FORMATS, guess_format, read_file, read_text, write_conllu
from .significance import (
    METRIC_SCORES,
    approximate_randomization,
    mcnemar,
    paired_bootstrap,
    unit_statistics,
)
from .sources import (
    DOCUMENT_FORMATS,
    ReadOptions,
    guess_document_format,
    hold_out,
    read_documents,
    read_sentences,
)
from .spans import is_bio_style
from .stats import corpus_stats, document_stats, format_stats
from .templates import available_feature_sets


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``structlin: error: ...``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_data_options(parser, *, split: str | None, document_formats: bool = False):
    parser.add_argument("--column", help="tag column: upos or xpos for CoNLL-U (default: the model's, else upos); "
                                         "for NLTK corpora universal, or a column name such as chunk")
    formats = FILE_FORMATS + (DOCUMENT_FORMATS if document_formats else ())
    parser.add_argument("--format", choices=formats, help="file format (default: conllu for *.conllu, else "
                                                          "word<TAB>tag; for classifiers: folders for a directory "
                                                          "or archive, tsv, fasttext, svmlight)")
    parser.add_argument("--columns", help="column names of a column file, e.g. word,pos,chunk (with --format columns)")
    if split:
        parser.add_argument("--split", default=split, help=f"split of a named corpus (default: {split})")


def _add_document_options(parser, *, formats: bool = True):
    if formats:
        parser.add_argument("--format", choices=DOCUMENT_FORMATS, help="input format (default: folders for a "
                            "directory or archive, tsv for *.tsv/*.csv, svmlight for *.svm, else fastText lines)")
    parser.add_argument("--strip", help="drop parts of Usenet posts: any of headers,footers,quotes")
    parser.add_argument("--granularity", choices=("coarse", "fine"),
                        help="labels of the qc corpus: COARSE (6) or COARSE:fine (50) (default: coarse)")
    parser.add_argument("--encoding", help="text encoding of document files (default: the corpus's, else utf-8)")


def _add_test_data(parser) -> None:
    """The test data of ``evaluate`` and ``compare``: ``--corpus NAME`` or ``--test FILE``, and how to read it."""
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--corpus", help="named corpus")
    target.add_argument("--test", help="tagged file (for a classifier: labelled documents)")
    _add_data_options(parser, split="test", document_formats=True)
    _add_document_options(parser, formats=False)


def _add_model_io(parser, input_help: str) -> None:
    """A model to apply, and where its input comes from and its output goes."""
    parser.add_argument("model")
    parser.add_argument("--input", "-i", help=input_help)
    parser.add_argument("--output", "-o", help="output file (default: stdout)")


def _add_source(parser, corpus_help: str, train_help: str) -> None:
    """The training data: ``--corpus NAME`` or ``--train PATH``, exactly one."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", help=corpus_help)
    source.add_argument("--train", help=train_help)


DEV_HELP = ("dev file, or a split name of --corpus, for early stopping; none trains without one and keeps the "
            "last epoch (default: the corpus's dev split unless --split trains on it)")
TRAIN_SPLIT_HELP = ("training split(s) of --corpus, joined by + (default: train, or the corpus's only split); "
                    "train+dev trains a final model on all labelled data with the settings dev chose")


def _add_training_split(parser) -> None:
    parser.add_argument("--split", help=TRAIN_SPLIT_HELP)


EPOCHS_HELP = ("training epochs (default: the learner's: 10 perceptron epochs; maxent: at most 100 L-BFGS "
               "iterations, or 10 SGD epochs)")


def _add_learner_options(parser) -> None:
    parser.add_argument("--delta-trick", dest="delta", type=float, metavar="Δ", help="perceptron family: train "
                        "with an id feature of value Δ per training position, which makes any data separable "
                        "(not kept in the model)")
    parser.add_argument("--solver", choices=MaxEnt.solvers + SVM.solvers, help="maxent: batch L-BFGS (OWL-QN with "
                        "--l1) or online SGD (default: lbfgs); svm: pegasos (default) or bcfw")
    parser.add_argument("--l2", type=float, help="maxent: the L2 prior's 1/σ² on the summed log-likelihood (default: 1)")
    parser.add_argument("--l1", type=float, help="maxent: the L1 penalty, exact zeros by OWL-QN (default: 0)")
    parser.add_argument("--learning-rate", type=float, help="maxent SGD: the initial learning rate η₀ (default: 0.1); "
                        "winnow: η of the multiplicative update w± ← w± e^(±ηΔ)/Z (default: 0.1)")
    parser.add_argument("--alpha", type=float, help="naive-bayes, bernoulli-nb: additive smoothing of P(f|y), "
                        "1 = Laplace, other α > 0 = Lidstone (default: 1)")
    parser.add_argument("--momentum", type=float, help="maxent SGD: heavy-ball momentum in [0, 1) (default: 0)")
    parser.add_argument("--C", type=float, help="svm: LIBLINEAR's C, i.e. λ = 1/(C·n) for n training instances; "
                        "passive-aggressive, mira: the largest step (pa-i) or the slack weight (pa-ii) (default: 1)")
    parser.add_argument("--variant", choices=PassiveAggressive.variants, help="passive-aggressive: the step "
                        "τ = ℓ/‖Δφ‖² (pa), min(C, ℓ/‖Δφ‖²) (pa-i, default) or ℓ/(‖Δφ‖² + 1/(2C)) (pa-ii)")
    parser.add_argument("--selection", choices=PassiveAggressive.selections, help="passive-aggressive: update "
                        "against the cost-augmented argmax (max-loss, default) or the prediction")
    parser.add_argument("--cost", type=float, help="passive-aggressive, mira, svm: the cost of a wrong token "
                        "(a wrong document) in the margin (default: 1)")
    parser.add_argument("--tol", type=float, help="stopping tolerance. maxent L-BFGS: relative objective change "
                        "(default: 1e-6); svm bcfw: the duality gap P(w) − D(α), on the scale of P, a mean over "
                        "instances (default: 1e-3)")


def _add_kernel_options(parser) -> None:
    parser.add_argument("--kernel", choices=KERNELS, help="kernel-perceptron: the kernel (default: poly)")
    parser.add_argument("--degree", type=int, help="kernel-perceptron: the poly kernel's degree d (default: 3)")
    parser.add_argument("--gamma", type=_gamma, help="kernel-perceptron: γ of the poly and rbf kernels, a number or "
                        "'scale' = 1/(features·Var(X)) on the training data (default: scale)")
    parser.add_argument("--coef0", type=float, help="kernel-perceptron: c₀ of the poly kernel (γx·x' + c₀)^d "
                        "(default: 1)")
    parser.add_argument("--budget", type=int, help="kernel-perceptron: at most this many support examples "
                        "(default: no limit)")
    parser.add_argument("--removal", choices=REMOVALS, help="kernel-perceptron: which support example a full "
                        "budget drops (default: oldest)")
    _add_hypothesis_option(parser, "the hypothesis to predict with, and to select the dev epoch by (default: "
                           "averaged for kernel-perceptron, voted for voted-perceptron)")


def _add_hypothesis_option(parser, what: str) -> None:
    parser.add_argument("--hypothesis", choices=HYPOTHESES, help=f"kernel-perceptron, voted-perceptron: {what}")


def _gamma(text: str):
    return text if text == "scale" else float(text)


def _add_classifier_options(parser):
    parser.add_argument("--features", help=f"feature set name or TOML file (default: numeric for SVMlight input, "
                        f"else text-ngrams; bundled: {', '.join(available_feature_sets())})")
    parser.add_argument("--learner", default="averaged-perceptron", help=f"one of: {', '.join(LEARNERS)}")
    parser.add_argument("--epochs", type=int, help=EPOCHS_HELP)
    parser.add_argument("--margin", type=float, default=0.0, help="perceptron margin τ (default: 0, the plain perceptron)")
    _add_learner_options(parser)
    _add_kernel_options(parser)
    parser.add_argument("--cost-matrix", help="svm: a file of misclassification costs, a header line of predicted "
                        "labels, then 'true-label cost cost ...' per line (tab-separated, or comma for .csv); "
                        "every pair of training labels, zero diagonal")
    parser.add_argument("--seed", type=int, default=0, help="seed of shuffling, folds and --dev-fraction (default: 0)")
    parser.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="structlin", description="Linear structured learning for NLP: train, evaluate and "
                     "apply taggers.", epilog="Corpora: a catalog name (e.g. ud-english-ewt, treebank, conll2000, "
                     "brown) or a file path. Set STRUCTLIN_DATA to a directory holding corpora; missing ones "
                     "are downloaded into a cache.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    learners = "\n".join(f"  {name:<20} {cls.summary}" for name, cls in LEARNERS.items())
    train = commands.add_parser("train", help="train a model", formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"learners (--learner):\n{learners}").add_subparsers(
        dest="model", required=True, parser_class=_Parser)
    tagger = train.add_parser("tagger", help="train a sequence tagger", description="Train a tagger and save it. "
                              "Example: structlin train tagger --corpus ud-english-ewt --output ewt.model")
    _add_source(tagger, "named corpus (its train split; dev defaults to its dev split)", "training file")
    _add_training_split(tagger)
    tagger.add_argument("--dev", help=DEV_HELP)
    _add_data_options(tagger, split=None)
    tagger.add_argument("--features", default="pos-rich",
                        help=f"feature set name or TOML file (default: pos-rich; bundled: {', '.join(available_feature_sets())})")
    tagger.add_argument("--learner", default="averaged-perceptron", help=f"one of: {', '.join(LEARNERS)}")
    tagger.add_argument("--decoder", default="viterbi", help=f"one of: {', '.join(DECODERS)}")
    tagger.add_argument("--epochs", type=int, help=EPOCHS_HELP)
    tagger.add_argument("--batch-size", type=int, default=4, help="sentences decoded with the same weights "
                        "before their updates are applied (default: 4; 1 = the textbook online perceptron)")
    tagger.add_argument("--patience", type=int, help="stop after this many epochs without dev improvement")
    _add_learner_options(tagger)
    tagger.add_argument("--seed", type=int, default=0, help="seed of the shuffling (default: 0)")
    tagger.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")
    tagger.add_argument("--output", "-o", required=True, help="where to write the model")
    tagger.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

    classifier = train.add_parser("classifier", help="train a document classifier",
                                  description="Train a classifier and save it. Example: structlin train classifier "
                                              "--corpus 20news-bydate --output news.model")
    _add_source(classifier, "named document corpus (its train split; dev defaults to its dev split)",
                "training file, folder tree or archive")
    _add_training_split(classifier)
    dev = classifier.add_mutually_exclusive_group()
    dev.add_argument("--dev", help=DEV_HELP)
    dev.add_argument("--dev-fraction", type=float, help="hold out this fraction of the training data (seeded) as dev")
    _add_document_options(classifier)
    _add_classifier_options(classifier)
    classifier.add_argument("--output", "-o", required=True, help="where to write the model")
    classifier.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

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
    compare.add_argument("--seed", type=int, default=0, help="seed of the resampling tests (default: 0)")
    compare.add_argument("--samples", type=int, default=10_000, help="samples of the bootstrap and shuffles of "
                         "approximate randomization (default: 10000)")
    compare.add_argument("--json", action="store_true", help="print one JSON object")

    tag = commands.add_parser("tag", help="tag text with a model",
                              description="Tag tokenized text (one sentence per line, output word/TAG) or a "
                                          "CoNLL-U file (output CoNLL-U with only the tag column replaced).")
    _add_model_io(tag, "input file (default: stdin)")
    tag.add_argument("--format", choices=("conllu", "text"), help="input/output format (default: conllu for "
                                                                  "*.conllu, else text)")
    tag.add_argument("--column", help="CoNLL-U column to fill: upos or xpos (default: the model's)")

    classify = commands.add_parser("classify", help="classify documents with a model",
                                   description="Classify one document per input line (prints one label per line), "
                                               "or every file of a folder (prints path<TAB>label).")
    _add_model_io(classify, "text file (one document per line) or folder (default: stdin)")
    classify.add_argument("--encoding", default="utf-8", help="text encoding of the input (default: utf-8)")
    _add_hypothesis_option(classify, "the hypothesis of a kernel perceptron model to classify with (default: the model's)")

    validate = commands.add_parser("cross-validate", help="k-fold cross-validation of a classifier",
                                   description="Seeded k-fold cross-validation of a classifier on a corpus with no "
                                               "official split (e.g. movie_reviews, names).")
    _add_source(validate, "named document corpus (all its documents)", "labelled file, folder tree or archive")
    validate.add_argument("--folds", type=int, default=10, help="number of folds (default: 10)")
    _add_document_options(validate)
    _add_classifier_options(validate)
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
    analysis.add_argument("--seed", type=int, default=0, help="seed of the perceptron's and the SVM's orders "
                          "(default: 0)")
    analysis.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")
    analysis.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _read_options(args) -> ReadOptions:
    """The data options of the command (each command has some of them)."""
    columns, strip = getattr(args, "columns", None), getattr(args, "strip", None)
    return ReadOptions(args.format, getattr(args, "column", None), tuple(columns.split(",")) if columns else None,
                       tuple(strip.split(",")) if strip else (), getattr(args, "granularity", None),
                       getattr(args, "encoding", None))


def _sentences(corpus: str, split: str | None, args) -> list:
    """A named corpus split or a file, read with the command's data options."""
    return read_sentences(corpus, split, _read_options(args))


def _documents(source: str, split: str | None, args) -> list:
    """Labelled documents: a named corpus split, or a file / folder / archive in ``--format``."""
    return read_documents(source, split, _read_options(args))


def _learner(args, progress: bool | None, **params):
    """The learner ``--learner`` names, with the options the command line gives; an option of other
    learners only (``--margin``, ``--l2``, ``--solver``, ...) is refused by name."""
    params.update(epochs=args.epochs, seed=args.seed, progress=progress)
    for option in ("margin", "delta", "l2", "l1", "solver", "learning_rate", "alpha", "momentum", "C", "variant",
                   "selection", "cost", "tol", "cost_matrix", "kernel", "degree", "gamma", "coef0", "budget", "removal",
                   "hypothesis"):
        value = getattr(args, option, None)
        if option == "margin" and not value:
            continue  # the default, 0: no margin, which every learner has
        if value is not None:
            if args.learner in LEARNERS and option not in inspect.signature(LEARNERS[args.learner]).parameters:
                flag = "delta-trick" if option == "delta" else option.replace("_", "-")
                raise StructlinError(f"--{flag} does not apply to learner {args.learner!r}")
            params[option] = read_cost_matrix(value) if option == "cost_matrix" else value
    try:
        learner = make_learner(args.learner, **params)
    except ValueError as err:  # a hyper-parameter out of range: one line, as for every other bad input
        raise StructlinError(str(err)) from None
    if params.get("tol") is not None and getattr(learner, "solver", None) not in ("lbfgs", "bcfw"):
        raise StructlinError(f"--tol applies to the lbfgs and bcfw solvers, not {learner.solver!r}")
    return learner


def _document_features(args) -> str:
    """``--features``, by default numeric for SVMlight input and text-ngrams otherwise."""
    source = args.corpus or args.train
    svmlight = not (args.corpus and not args.format) and (args.format or guess_document_format(source)) == "svmlight"
    return args.features or ("numeric" if svmlight else "text-ngrams")


def _new_classifier(args, progress: bool | None = None) -> Classifier:
    return Classifier(_document_features(args), _learner(args, progress), bits=args.bits)


def _cross_validate(args) -> None:
    documents = _documents(args.corpus, None, args) if args.corpus else _documents(args.train, None, args)
    result = cross_validate(lambda: _new_classifier(args, progress=False), [d.text for d in documents],
                            [d.label for d in documents], folds=args.folds, seed=args.seed)
    if args.json:
        print(json.dumps(result))
        return
    for row in result["per_fold"]:
        print(f"fold {row['fold']:>2}  accuracy {100 * row['accuracy']:.2f}%  macro-F1 {100 * row['macro_f1']:.2f}%  "
              f"({row['n_test']} test documents, {row['train_seconds']:.1f}s training)")
    print(f"{args.folds}-fold accuracy {100 * result['accuracy']:.2f}% ± {100 * result['accuracy_std']:.2f}, "
          f"macro-F1 {100 * result['macro_f1']:.2f}% ± {100 * result['macro_f1_std']:.2f} (seed {args.seed})")


def _training_data(args, read, *, default_dev: bool = True) -> tuple[list, list | None]:
    """What ``train`` fits on: ``--corpus``'s ``--split`` (split names joined by ``+``, read in that order)
    or the ``--train`` file, and the dev data: ``--dev`` (a split of the corpus or a path; ``none`` for no
    dev), else, with ``default_dev``, the corpus's ``dev`` split when it is not among the training splits.
    ``read(source, split, args)`` reads one split or file.  Training on the dev split is refused."""
    dev_name = None if args.dev in (None, "none") else args.dev
    if not args.corpus:
        if args.split:
            raise StructlinError("--split chooses splits of --corpus; with --train give the file itself")
        return read(args.train, None, args), (read(dev_name, None, args) if dev_name else None)
    entry = Catalog.load()[args.corpus]
    names = args.split.split("+") if args.split else ["train" if "train" in entry.splits else None]
    for name in names:
        if name is not None and name not in entry.splits:
            raise UnknownNameError(f"split of corpus {entry.name!r}", name, entry.splits)
    if dev_name is None and args.dev is None and default_dev and "dev" in entry.splits and "dev" not in names:
        dev_name = "dev"
    if dev_name is not None and dev_name in names:
        raise StructlinError(f"--dev {dev_name} is also a training split (--split {args.split}): early stopping "
                             "on training data would choose nothing; give another dev, or --dev none")
    train = [item for name in names for item in read(args.corpus, name, args)]
    if dev_name is None:
        return train, None
    return train, read(args.corpus, dev_name, args) if dev_name in entry.splits else read(dev_name, None, args)


def _train_classifier(args) -> None:
    classifier = _new_classifier(args, progress=False if args.quiet else None)
    train, dev = _training_data(args, _documents, default_dev=args.dev_fraction is None)
    if args.dev_fraction is not None:
        if not 0 < args.dev_fraction < 1:
            raise StructlinError(f"--dev-fraction must be between 0 and 1, got {args.dev_fraction}")
        train, dev = hold_out(train, args.dev_fraction, args.seed)
    began = time.perf_counter()
    classifier.fit([d.text for d in train], [d.label for d in train],
                   None if dev is None else ([d.text for d in dev], [d.label for d in dev]))
    seconds = time.perf_counter() - began
    classifier.save(args.output)
    if not args.quiet:
        _print_history(classifier.history_)
        print(f"trained on {len(train):,} documents in {seconds:.1f}s; kept epoch {classifier.learner.best_epoch_}; "
              f"model written to {args.output}")


def _print_history(history) -> None:
    for record in history:
        dev_text = "" if record["dev_accuracy"] is None else f"  dev accuracy {100 * record['dev_accuracy']:.2f}%"
        if "objective" in record:  # maxent (L-BFGS iterations or SGD epochs) or svm (epochs or BCFW passes)
            kind = "iteration" if "iteration" in record else "epoch"
            step = (f"{kind} {record[kind]:>3}  objective {record['objective']:.6g}  "
                    f"gradient norm {record['gradient_norm']:.3g}")
            if record.get("duality_gap") is not None:
                step += f"  duality gap {record['duality_gap']:.3g}"
        else:
            step = f"epoch {record['epoch']:>3}  mistakes {record['train_mistakes']:>6}"
            if "n_support" in record:  # the kernel perceptron
                step += f"  support examples {record['n_support']:>6}"
        print(f"{step}{dev_text}  {record['seconds']:.1f}s")


def _train_tagger(args) -> None:
    learner = _learner(args, False if args.quiet else None, batch_size=args.batch_size, patience=args.patience)
    tagger = Tagger(args.features, learner, args.decoder, bits=args.bits)
    catalog = Catalog.load()
    train, dev = _training_data(args, _sentences)
    began = time.perf_counter()
    tagger.fit(train, dev)
    seconds = time.perf_counter() - began
    if args.corpus:
        conllu = catalog[args.corpus].format == "conllu"
    else:
        conllu = (args.format or guess_format(args.train)) == "conllu"
    tagger.column = args.column or ("upos" if conllu else None)
    tagger.save(args.output)
    if not args.quiet:
        _print_history(tagger.history_)
        tokens = sum(len(s.words) if hasattr(s, "words") else len(s) for s in train)
        print(f"trained on {len(train):,} sentences ({tokens:,} tokens) in {seconds:.1f}s; "
              f"kept epoch {tagger.learner.best_epoch_}; model written to {args.output}")


def _evaluate(args) -> None:
    if model_kind(args.model) == "classifier":
        classifier = _load_classifier(args)
        gold = _documents(*_test_data(args), args)
        report = classifier.report([d.text for d in gold], [d.label for d in gold])
        print(json.dumps(report.to_dict()) if args.json else report.format())
        return
    tagger = Tagger.load(args.model)
    args.column = args.column or tagger.column
    gold = _sentences(*_test_data(args), args)
    report = tagger.report(gold)
    print(json.dumps(report.to_dict()) if args.json else report.format())


def _test_data(args) -> tuple[str, str | None]:
    """The test corpus name and split, or the test file (no split)."""
    return (args.corpus, args.split) if args.corpus else (args.test, None)


def _compare(args) -> None:
    paths = (args.model_a, args.model_b)
    kind, other = (model_kind(path) for path in paths)
    if kind != other:
        raise StructlinError(f"cannot compare {paths[0]}, a {kind}, with {paths[1]}, a {other}")
    if args.samples < 1:
        raise StructlinError(f"--samples must be at least 1, got {args.samples}")
    gold, predictions = (_tagger_outputs if kind == "tagger" else _classifier_outputs)(paths, args)
    unit, item = ("sentence", "token") if kind == "tagger" else ("document", "document")
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
    if kind == "tagger" and is_bio_style(items):
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


def _tagger_outputs(paths, args) -> tuple[list[list[str]], list[list[list[str]]]]:
    """Gold tags and both taggers' tags of every test sentence."""
    taggers = [Tagger.load(path) for path in paths]
    if not args.column and taggers[0].column != taggers[1].column:
        raise StructlinError(f"{paths[0]} tags {taggers[0].column}, {paths[1]} tags {taggers[1].column}: "
                             f"choose the gold column with --column")
    args.column = args.column or taggers[0].column
    sentences = _sentences(*_test_data(args), args)
    return [s.tags for s in sentences], [tagger.predict(sentences) for tagger in taggers]


def _classifier_outputs(paths, args) -> tuple[list[list[str]], list[list[list[str]]]]:
    """Gold labels and both classifiers' labels of every test document (a unit of one label)."""
    classifiers = [Classifier.load(path) for path in paths]
    documents = _documents(*_test_data(args), args)
    texts = [d.text for d in documents]
    return [[d.label] for d in documents], [[[label] for label in c.predict(texts)] for c in classifiers]


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
    tagger = Tagger.load(args.model)
    fmt = args.format or ("conllu" if (args.input or "").removesuffix(".gz").endswith(".conllu") else "text")
    column = args.column or tagger.column or "upos"
    source = args.input or sys.stdin
    sentences = list(read_file(source, format="conllu", column=column, require_tags=False) if fmt == "conllu"
                     else read_text(source))
    tags = tagger.predict(sentences)
    with _output(args.output) as out:
        if fmt == "conllu":
            write_conllu(sentences, tags, out, column=column)
        else:
            for sentence, sentence_tags in zip(sentences, tags):
                out.write(" ".join(f"{w}/{t}" for w, t in zip(sentence.words, sentence_tags)) + "\n")


def _load_classifier(args) -> Classifier:
    """The model file's classifier; ``--hypothesis`` picks a kernel or voted perceptron's hypothesis."""
    classifier = Classifier.load(args.model)
    if args.hypothesis is not None:
        if not hasattr(classifier.learner, "hypothesis"):
            raise StructlinError(f"--hypothesis applies to kernel-perceptron and voted-perceptron models; "
                                 f"{args.model} was trained by {classifier.learner.name!r}")
        classifier.learner.hypothesis = args.hypothesis
    return classifier


def _classify(args) -> None:
    classifier = _load_classifier(args)
    if args.input and Path(args.input).is_dir():
        files = sorted(p for p in Path(args.input).rglob("*") if p.is_file())
        documents = [p.read_bytes().decode(args.encoding) for p in files]
        names = [str(p) for p in files]
    elif args.input:
        with open(args.input, encoding=args.encoding) as lines:
            documents, names = [line.rstrip("\n") for line in lines], None
    else:
        documents, names = [line.rstrip("\n") for line in sys.stdin], None
    labels = classifier.predict(documents)
    with _output(args.output) as out:
        for k, label in enumerate(labels):
            out.write(f"{names[k]}\t{label}\n" if names else f"{label}\n")


@contextmanager
def _output(path: str | None):
    """``path`` opened for writing UTF-8 text, or standard output (left open)."""
    if not path:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as out:
        yield out


def _data_kind(source: str, args):
    """The catalog entry of ``source`` (None for a path, or with ``--format``) and whether it holds documents
    (a path does with a document ``--format``)."""
    catalog = Catalog.load()
    entry = catalog[source] if is_corpus_name(catalog, source) and not args.format else None
    return entry, entry.kind == "documents" if entry else args.format in DOCUMENT_FORMATS


def _stats(args) -> None:
    entry, documents = _data_kind(args.corpus, args)
    read = _documents if documents else _sentences
    split = args.split if entry and args.split in entry.splits else None  # a file, or a one-split corpus
    against = args.against or ("train" if entry and split != "train" and "train" in entry.splits else None)
    reference = None
    if against is not None:
        reference = read(args.corpus, against, args) if entry and against in entry.splits else read(against, None, args)
    data = read(args.corpus, split, args)
    stats = (document_stats if documents else corpus_stats)(data, reference)
    print(json.dumps(stats) if args.json else format_stats(args.corpus, stats))


def _analyze(args) -> None:
    source = args.corpus or args.train
    entry, documents = _data_kind(source, args)
    split = args.split if entry and args.split in entry.splits else None
    if documents:
        if args.decoder == "viterbi":
            raise StructlinError("documents take the multiclass decoder, not viterbi")
        features = _document_features(args)
        data = _documents(source, split, args)
        model = Classifier(features, bits=args.bits)
        X, y = model.training_data([d.text for d in data], [d.label for d in data])
    else:
        features = args.features or "pos-rich"
        model = Tagger(features, decoder=args.decoder or "viterbi", bits=args.bits)
        X, y = model.training_data(_sentences(source, split, args))
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
    command = shlex.join(["structlin", "experiment", args.config, *(["--output", args.output] if args.output else []),
                          *(["--quiet"] if args.quiet else [])])
    result = run_experiment(config, command=command, log=(lambda line: None) if args.quiet else print,
                            models=folder / "models" if config.keep_models else None)
    written = write_report(result, folder)
    if not args.quiet:
        print(f"report: {written[2]} ({len(written)} files in {folder})")


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "train":
        action = _train_tagger if args.model == "tagger" else _train_classifier
    else:
        action = {"evaluate": _evaluate, "compare": _compare, "tag": _tag, "classify": _classify,
                  "cross-validate": _cross_validate, "corpus": _stats, "experiment": _experiment,
                  "analyze": _analyze}[args.command]
    try:
        action(args)
    except StructlinError as err:
        print(f"structlin: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"structlin: error: {err.filename or ''}: {err.strerror or err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("structlin: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
