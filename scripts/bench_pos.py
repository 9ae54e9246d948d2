"""Part-of-speech tagging benchmark: structlin against NLTK's perceptron tagger and CRFsuite.

All systems train on the same sentences (UD English EWT v2.16 train) and are evaluated on the same
test set (EWT test), in one run of this script:

* ``structlin``      -- ``Tagger(features="pos-rich", learner="averaged-perceptron", decoder="viterbi")``,
                        trained without dev data for ``--epochs`` epochs;
* ``nltk``           -- ``nltk.tag.perceptron.PerceptronTagger(load=False).train(..., nr_iter=epochs)``
                        (NLTK's own features, greedy left-to-right decoding, tag dictionary);
* ``crfsuite-ap``    -- CRFsuite's averaged perceptron (``algorithm="ap"``) for ``--epochs`` epochs;
* ``crfsuite-lbfgs`` -- a CRF trained with L-BFGS (``c1=0``, ``c2=--c2``, ``--crf-iterations``, 6 pairs);
* ``structlin-svm``  -- ``Tagger(learner=SVM(solver="bcfw", C=--svm-C, epochs=--svm-epochs))``, a structured
                        SVM (Hamming cost) by block-coordinate Frank–Wolfe, without dev data;
* ``structlin-crf``  -- ``Tagger(learner=MaxEnt(epochs=--crf-iterations, l2=2·c2))``, the same CRF objective
                        (CRFsuite's penalty is ``c2·‖w‖²``, structlin's ``(l2/2)·‖w‖²``) and L-BFGS memory (6),
                        on structlin's features (every hashed feature row × every tag);

both CRFsuite systems get the features of pos-rich as strings, built by :class:`FeatureStrings` from
structlin's own template registry (structlin hashes the same strings; CRFsuite keeps them apart).

Every system trains and tags in its own forked child process, so that its peak resident set size
(``ru_maxrss``) is its own; the child reports its RSS before training too.  Its tagging of the test set is
timed ``--tag-repeats`` times, each a first call after training, and the median reported.  Timings are wall-clock
seconds (training CPU seconds beside them); they are noisy on a shared machine.

Commands (from the repository root)::

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    # a quick smoke run (a few seconds per system)
    python scripts/bench_pos.py --limit 1000 --epochs 2 --crf-iterations 10
    # the full benchmark (about ten minutes), UPOS tags, results also as JSON
    nohup python scripts/bench_pos.py --column upos \\
        --json /tmp/bench_pos_upos.json > /tmp/bench_pos_upos.txt 2>&1 &
    # PTB tags, or a subset of the systems
    python scripts/bench_pos.py --column xpos --systems structlin,crfsuite-ap
    # a user's own tagged files instead of a catalog corpus
    python scripts/bench_pos.py --train train.tsv --test test.tsv --epochs 10 --systems structlin,nltk,crfsuite-ap
"""

from __future__ import annotations

import argparse
import inspect
import os
import pickle
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial

import nltk
import numpy as np
import pycrfsuite
from _bench import (
    current_rss_mib,
    peak_rss_mib,
    percent,
    run_in_child,
    source_state,
    stopwatch,
    table,
    write_json,
)
from nltk.tag.perceptron import PerceptronTagger

import structlin
from structlin import Tagger
from structlin.catalog import load_split
from structlin.sources import ReadOptions, read_sentences
from structlin.joint import SparseWeights
from structlin.learners import SVM, MaxEnt
from structlin.templates import AFTER, BEFORE, FeatureSet, feature_values, template

CORPUS = "ud-english-ewt"  # the default of --corpus
FEATURES = "pos-rich"
DEFAULT_BATCH_SIZE = Tagger.learner_defaults["batch_size"]
HASH_BITS = inspect.signature(Tagger).parameters["bits"].default


# --- data -------------------------------------------------------------------------------------------


@dataclass
class Data:
    """Training sentences as ``[(word, tag), ...]``, test tokens and gold tags, training vocabulary,
    and the feature set (read once, so that every system gets the same even if the file changes)."""

    train: list[list[tuple[str, str]]]
    test_words: list[list[str]]
    test_tags: list[list[str]]
    vocabulary: set[str]
    features: FeatureSet

    @property
    def n_train_tokens(self) -> int:
        return sum(len(s) for s in self.train)

    @property
    def n_test_tokens(self) -> int:
        return sum(len(s) for s in self.test_words)

    @property
    def n_unknown(self) -> int:
        return sum(w not in self.vocabulary for s in self.test_words for w in s)


def load_data(corpus: str, column: str | None, limit: int | None, files: tuple[str, str] | None = None) -> Data:
    """The catalog corpus's train and test splits, or the tagged ``files`` (train, test) read as
    ``structlin train tagger --train`` reads them (the format guessed from the name)."""
    if files:
        train, test = (read_sentences(path, None, ReadOptions(column=column)) for path in files)
        train = train[:limit]
    else:
        train = load_split(corpus, "train", column=column)[:limit]
        test = load_split(corpus, "test", column=column)
    pairs = [list(zip(s.words, s.tags)) for s in train]
    return Data(pairs, [list(s.words) for s in test], [list(s.tags) for s in test],
                {word for s in train for word in s.words}, FeatureSet.load(FEATURES))


def score(gold: list[list[str]], predicted: list[list[str]], words: list[list[str]], vocabulary: set[str]) -> dict:
    """Token accuracy, and accuracy on unknown words (forms absent from the training data)."""
    correct = unknown = unknown_correct = total = 0
    for g_sent, p_sent, w_sent in zip(gold, predicted, words, strict=True):
        for g, p, w in zip(g_sent, p_sent, w_sent, strict=True):
            total += 1
            correct += g == p
            if w not in vocabulary:
                unknown += 1
                unknown_correct += g == p
    return {"accuracy": correct / total, "unknown_accuracy": unknown_correct / unknown if unknown else None,
            "n_test_tokens": total, "n_unknown": unknown}


# --- pos-rich as feature strings for CRFsuite -------------------------------------------------------


class FeatureStrings:
    """The features of a structlin feature set as CRFsuite attribute dicts, one per token.

    Mirrors :class:`structlin.templates.TokenFeatureExtractor` without hashing: a token template at
    offset ``o`` gives ``"{key}@{o}={value}"`` (the boundary marker ``<S>``/``</S>`` as the value
    beyond the sentence), a context template gives ``"{key}={value}"``; the attribute's value is the
    template's real value (1.0 for strings).  Template values are computed once per token per
    sentence and shared by every offset.
    """

    def __init__(self, feature_set: FeatureSet):
        self.token = [(spec.key, spec.offsets, template(spec.name).function, feature_set.arguments(spec))
                      for spec in feature_set.templates if not template(spec.name).context]
        self.context = [(spec.key, template(spec.name).function, feature_set.arguments(spec))
                        for spec in feature_set.templates if template(spec.name).context]

    def __call__(self, words: list[str]) -> list[dict[str, float]]:
        n = len(words)
        rows: list[dict[str, float]] = [{} for _ in range(n)]
        for key, offsets, fn, params in self.token:
            values = [feature_values(fn(word, **params)) for word in words]
            for o in offsets:
                prefix = f"{key}@{o}="
                for i, row in enumerate(rows):
                    j = i + o
                    pairs = values[j] if 0 <= j < n else [(BEFORE if j < 0 else AFTER, 1.0)]
                    for value, weight in pairs:
                        name = prefix + value
                        row[name] = row.get(name, 0.0) + weight
        for key, fn, params in self.context:
            for row, result in zip(rows, fn(words, **params), strict=True):
                for value, weight in feature_values(result):
                    name = f"{key}={value}"
                    row[name] = row.get(name, 0.0) + weight
        return rows


# --- systems: train(data, args) -> (model, extra row fields); tag(model, sentences) -> tags --------


def fit_structlin(data: Data, learner, **params) -> tuple[Tagger, dict]:
    """Train a Viterbi tagger on pos-rich with ``learner``: the model and the row fields every structlin
    system reports (``train_only_s``: the epochs or iterations, after feature extraction)."""
    tagger = Tagger(features=data.features, learner=learner, decoder="viterbi", **params)
    row = {}
    with stopwatch(row, "train_s"):
        tagger.fit(data.train)
    row["step_seconds"] = [record["seconds"] for record in tagger.history_]  # each epoch or iteration
    row["train_only_s"] = sum(row["step_seconds"])
    return tagger, row


def train_structlin(data: Data, args) -> tuple[Tagger, dict]:
    tagger, row = fit_structlin(data, "averaged-perceptron", epochs=args.epochs, batch_size=args.batch_size,
                                progress=False if args.quiet else None)
    note = (f"non-zero weights ({tagger.joint.n_rows} hashed feature rows x {len(tagger.classes_)} labels "
            f"+ transitions, 2**{tagger.hasher.bits} buckets)")
    return tagger, {**row, "model_size": nonzero_weights(tagger.weights_), "model_size_note": note}


def nonzero_weights(w) -> int:
    """The non-zero weights of a flat weight vector, dense or SparseWeights (without making it dense)."""
    if isinstance(w, SparseWeights):
        return int(np.count_nonzero(w.values) + np.count_nonzero(w.tail))
    return int(np.count_nonzero(w))


def all_weights(tagger: Tagger) -> dict:
    """The model size of a learner whose weights are all non-zero (max-ent, SVM), and its passes."""
    note = f"weights ({tagger.joint.n_rows} hashed feature rows x {len(tagger.classes_)} labels + transitions)"
    return {"iterations": len(tagger.history_), "model_size": int(tagger.weights_.size), "model_size_note": note}


def train_structlin_crf(data: Data, args) -> tuple[Tagger, dict]:
    learner = MaxEnt(epochs=args.crf_iterations, l2=2 * args.c2, progress=False if args.quiet else None)
    tagger, row = fit_structlin(data, learner)
    return tagger, {**row, **all_weights(tagger), "evaluations": sum(r["evaluations"] for r in tagger.history_),
                    "objective": tagger.history_[-1]["objective"]}


def train_structlin_svm(data: Data, args) -> tuple[Tagger, dict]:
    learner = SVM(solver="bcfw", C=args.svm_C, epochs=args.svm_epochs, progress=False if args.quiet else None)
    tagger, row = fit_structlin(data, learner)
    last = tagger.history_[-1]
    return tagger, {**row, **all_weights(tagger), "primal_objective": last["primal_objective"],
                    "duality_gap": last["duality_gap"]}


def tag_structlin(tagger: Tagger, sentences: list[list[str]]) -> list[list[str]]:
    return [[tag for _, tag in sentence] for sentence in tagger.tag_sents(sentences)]


def train_nltk(data: Data, args) -> tuple[PerceptronTagger, dict]:
    tagger = PerceptronTagger(load=False)
    random.seed(0)  # train() shuffles with the global random generator
    row = {}
    with stopwatch(row, "train_s"):
        tagger.train(data.train, nr_iter=args.epochs)
    return tagger, {**row, "model_size": sum(len(w) for w in tagger.model.weights.values()),
                    "model_size_note": f"(feature, tag) weights, plus {len(tagger.tagdict)} tag-dictionary words"}


def tag_nltk(tagger: PerceptronTagger, sentences: list[list[str]]) -> list[list[str]]:
    return [[tag for _, tag in tagger.tag(words)] for words in sentences]


def crfsuite_params(name: str, args) -> dict:
    if name == "crfsuite-ap":
        return {"algorithm": "ap", "max_iterations": args.epochs}
    return {"algorithm": "lbfgs", "c1": 0.0, "c2": args.c2, "max_iterations": args.crf_iterations, "num_memories": 6}


@dataclass
class CrfsuiteModel:
    tagger: pycrfsuite.Tagger
    attributes: FeatureStrings
    directory: str

    def close(self) -> None:
        self.tagger.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def train_crfsuite(data: Data, args, name: str) -> tuple[CrfsuiteModel, dict]:
    """Attribute dicts of every sentence, append, train: ``train_s`` times it all, ``train_only_s`` train()."""
    params, row = crfsuite_params(name, args), {}
    directory = tempfile.mkdtemp(prefix="bench_pos_")
    path = os.path.join(directory, "model.crfsuite")
    with stopwatch(row, "train_s"):
        attributes = FeatureStrings(data.features)
        trainer = pycrfsuite.Trainer(algorithm=params.pop("algorithm"), params=params, verbose=False)
        for sentence in data.train:
            trainer.append(attributes([w for w, _ in sentence]), [t for _, t in sentence])
        with stopwatch(row, "train_only_s"):
            trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    log = trainer.logparser
    note = "CRFsuite features (attribute-label pairs seen in training, plus label transitions)"
    return CrfsuiteModel(tagger, attributes, directory), {
        **row, "iterations": len(log.iterations), "step_seconds": [step["time"] for step in log.iterations],
        "model_size": log.featgen_num_features, "model_size_note": note}


def tag_crfsuite(model: CrfsuiteModel, sentences: list[list[str]]) -> list[list[str]]:
    return [model.tagger.tag(model.attributes(words)) if words else [] for words in sentences]


SYSTEMS = {
    "structlin": (train_structlin, tag_structlin),
    "nltk": (train_nltk, tag_nltk),
    "crfsuite-ap": (partial(train_crfsuite, name="crfsuite-ap"), tag_crfsuite),
    "crfsuite-lbfgs": (partial(train_crfsuite, name="crfsuite-lbfgs"), tag_crfsuite),
    "structlin-crf": (train_structlin_crf, tag_structlin),
    "structlin-svm": (train_structlin_svm, tag_structlin),
}


# --- measuring one system in a child process --------------------------------------------------------

_DATA: Data | None = None  # set by the parent before forking; children read it (never pickled)


def as_after_training(model, data: Data):
    """The trained model as it is right after training, for one more timing: a structlin tagger is copied through
    pickle (which drops its extractor's tables of word types, a cache) and tags the training sentences, untimed, so
    that its tables again hold the training types and none of the test's; NLTK's and CRFsuite's taggers keep no
    such state."""
    if not isinstance(model, Tagger):
        return model
    copy = pickle.loads(pickle.dumps(model))
    copy.tag_sents([[word for word, _ in sentence] for sentence in data.train])
    return copy


def run_system(name: str, args) -> dict:
    """Train and evaluate one system; runs in a freshly forked child (whose peak RSS starts at its RSS)."""
    data, (train, tag) = _DATA, SYSTEMS[name]
    rss_before = current_rss_mib()
    model, row = train(data, args)
    row.update(system=name, rss_before_mib=rss_before, peak_rss_mib=peak_rss_mib())
    row["rss_increase_mib"] = row["peak_rss_mib"] - rss_before
    row["tag_s_each"] = []
    for k in range(args.tag_repeats):
        tagger, timing = (model if k == 0 else as_after_training(model, data)), {}
        with stopwatch(timing, "tag_s"):
            predicted = tag(tagger, data.test_words)
        row["tag_s_each"].append(timing["tag_s"])
    row["tag_s"] = statistics.median(row["tag_s_each"])
    row["tokens_per_s"] = data.n_test_tokens / row["tag_s"]
    row.update(score(data.test_tags, predicted, data.test_words, data.vocabulary))
    if isinstance(model, CrfsuiteModel):
        model.close()
    return row


# --- report -----------------------------------------------------------------------------------------


COLUMNS = (  # header, row field, format
    ("acc %", lambda r: percent(r["accuracy"]), ".2f"),
    ("unk acc %", lambda r: percent(r["unknown_accuracy"]), ".2f"),
    ("train s", lambda r: r["train_s"], ".1f"),
    ("(CPU s)", lambda r: r["train_s_cpu"], ".1f"),
    ("learn s", lambda r: r.get("train_only_s"), ".1f"),
    ("tag tok/s", lambda r: r["tokens_per_s"], ",.0f"),
    ("RSS before MiB", lambda r: r["rss_before_mib"], ".0f"),
    ("peak MiB", lambda r: r["peak_rss_mib"], ".0f"),
    ("+MiB", lambda r: r["rss_increase_mib"], ".0f"),
)


def ratios(rows: list[dict]) -> list[str]:
    """structlin / peer for training time, tagging throughput and peak-memory increase."""
    by = {r["system"]: r for r in rows}
    out = []

    def add(label, field, peer_field, peer, better, system="structlin"):
        if system in by and peer in by and by[peer][peer_field]:
            text = f"{label} vs {peer}" if system == "structlin" else f"{system} {label} vs {peer}"
            out.append(f"  {text:<58} {by[system][field] / by[peer][peer_field]:7.2f}x   ({better})")

    faster, smaller = "< 1: structlin faster", "< 1: structlin smaller"
    for peer in ("crfsuite-ap", "crfsuite-lbfgs"):
        add("training time (total) vs train() alone", "train_s", "train_only_s", peer, faster)
        add("training time (total)", "train_s", "train_s", peer, faster)
        add("learning time (epochs vs train())", "train_only_s", "train_only_s", peer, faster)
    add("training time", "train_s", "train_s", "nltk", faster)
    for peer in ("nltk", "crfsuite-ap"):
        add("tagging tokens/s", "tokens_per_s", "tokens_per_s", peer, "> 1: structlin faster")
    for peer in ("nltk", "crfsuite-ap", "crfsuite-lbfgs"):
        add("training RSS increase", "rss_increase_mib", "rss_increase_mib", peer, smaller)
    add("training time (total)", "train_s", "train_s", "crfsuite-lbfgs", faster, system="structlin-crf")
    add("learning time (iterations vs train())", "train_only_s", "train_only_s", "crfsuite-lbfgs", faster,
        system="structlin-crf")
    add("tagging tokens/s", "tokens_per_s", "tokens_per_s", "crfsuite-lbfgs", "> 1: structlin faster",
        system="structlin-crf")
    add("training RSS increase", "rss_increase_mib", "rss_increase_mib", "crfsuite-lbfgs", smaller,
        system="structlin-crf")
    add("training time (total)", "train_s", "train_s", "crfsuite-ap", faster, system="structlin-svm")
    return out


def notes(args, meta: dict, rows: list[dict]) -> list[str]:
    sizes = [f"  {r['system']}: {r['model_size']:,} {r['model_size_note']}"
             + (f"; {r['iterations']} iterations" if "iterations" in r else "") for r in rows]
    return ["Model sizes:", *sizes, "Notes:", *(f"  {line}" for line in (
        (f"structlin and both CRFsuite systems use the features of {FEATURES}; structlin hashes them (signed, "
         f"2**{HASH_BITS} buckets, so collisions are possible), CRFsuite keeps the feature strings."),
        ("NLTK uses its own feature set, greedy left-to-right decoding and a tag dictionary of frequent "
         "unambiguous words."),
        (f"structlin and crfsuite-ap: averaged structured perceptron with Viterbi, {args.epochs} epochs (structlin "
         f"batch size {args.batch_size}); nltk: {args.epochs} iterations; crfsuite-lbfgs: c1=0, c2={args.c2}, at most "
         f"{args.crf_iterations} iterations, 6 L-BFGS pairs; structlin-crf: l2={2 * args.c2} (the same penalty), the "
         f"same iteration budget and memory; structlin-svm: BCFW, C={args.svm_C}, {args.svm_epochs} passes."),
        ("train s (wall clock; CPU seconds beside it): structlin Tagger.fit (feature extraction included), nltk "
         "train(), CRFsuite attribute dicts + append + train(); learn s: structlin's epochs after feature "
         "extraction (history_ seconds), CRFsuite train() alone (it also builds its features from the attributes "
         "and writes the model file)."),
        ("tag tok/s: test tokens / seconds from token lists to tags, feature extraction included (structlin "
         "tag_sents on all sentences at once; NLTK and CRFsuite one sentence at a time); the median of "
         f"{args.tag_repeats} timings, each a first call after training (structlin: a copy of the trained tagger that has "
         "tagged the training sentences, untimed, so that it knows their word types and none of the test's): "
         + "; ".join(f"{r['system']} " + ", ".join(f"{t:.3f}" for t in r["tag_s_each"]) + " s" for r in rows) + "."),
        ("Memory: each system trains in its own forked child; peak = ru_maxrss of the child at the end of "
         "training, +MiB = peak - RSS before training (the corpus and imports are in RSS before)."),
        (f"Unknown words: test tokens whose form is not in the training data ({meta['n_unknown']} of "
         f"{meta['n_test_tokens']} tokens); the same set for every system."),
        (f"Wall-clock timings on a shared {meta['cpus']}-core machine (load average "
         f"{meta['load_average_start']:.2f} at start): expect noise of several percent."),
    ))]


# --- main -------------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated subset of {','.join(SYSTEMS)} (default: all)")
    parser.add_argument("--corpus", default=CORPUS, help=f"a tagged catalog corpus (default: {CORPUS}; e.g. brown, "
                        "its hundreds of tags)")
    parser.add_argument("--train", metavar="FILE", help="train on this tagged file instead of a catalog corpus "
                        "(word<TAB>tag, CoNLL-U, …, as `structlin train tagger --train` reads it); needs --test")
    parser.add_argument("--test", metavar="FILE", help="evaluate on this tagged file (with --train)")
    parser.add_argument("--column", help="tag column (default: the corpus's, upos for EWT; xpos)")
    parser.add_argument("--epochs", type=int, default=5, help="perceptron epochs, every system (default: 5)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                        help=f"structlin mini-batch size (default: Tagger's, {DEFAULT_BATCH_SIZE})")
    parser.add_argument("--crf-iterations", type=int, default=100, help="L-BFGS iterations (default: 100)")
    parser.add_argument("--svm-C", type=float, default=0.1, help="structlin-svm C (default: 0.1, chosen on EWT dev)")
    parser.add_argument("--svm-epochs", type=int, default=10, help="structlin-svm BCFW passes (default: 10)")
    parser.add_argument("--c2", type=float, default=1.0,
                        help="CRFsuite's L2 coefficient c2; structlin-crf gets l2 = 2·c2 (default: 1)")
    parser.add_argument("--limit", type=int, help="train on the first N training sentences only")
    parser.add_argument("--json", metavar="PATH", help="also write every row (and the settings) as JSON")
    parser.add_argument("--plot", metavar="PATH", help="draw every system's learning time against its epochs or "
                        "iterations into this image file (needs matplotlib)")
    parser.add_argument("--tag-repeats", type=int, default=3, help="time the tagging of the test set this many times, "
                        "each a first call after training, and report the median (default: 3)")
    parser.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if (args.train is None) != (args.test is None):
        parser.error("--train and --test go together")
    if args.train:
        args.corpus = f"{args.train} → {args.test}"
    unknown = [s for s in args.systems if s not in SYSTEMS]
    if unknown or not args.systems:
        parser.error(f"--systems: unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}")
    if (args.epochs < 1 or args.batch_size < 1 or args.crf_iterations < 1 or args.tag_repeats < 1
            or (args.limit is not None and args.limit < 1)):
        parser.error("--epochs, --batch-size, --crf-iterations, --tag-repeats and --limit must be positive")
    return args


def main(argv=None) -> None:
    global _DATA
    args = parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    meta = {"command": " ".join([os.path.basename(sys.executable), *sys.argv]), "corpus": args.corpus,
            "column": args.column, "features": FEATURES, "epochs": args.epochs, "batch_size": args.batch_size,
            "crf_iterations": args.crf_iterations, "c2": args.c2, "limit": args.limit, "python": platform.python_version(),
            "structlin": structlin.__version__, "nltk": nltk.__version__, "numpy": np.__version__,
            "crfsuite": pycrfsuite.CRFSUITE_VERSION, "cpus": os.cpu_count(), "load_average_start": os.getloadavg()[0],
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "source": source_state()}
    log(f"loading {args.corpus} ({args.column or 'its tag column'}) ...")
    _DATA = load_data(args.corpus, args.column, args.limit, args.train and (args.train, args.test))
    meta.update(feature_set=[spec.key + ("" if spec.offsets == (0,) else f"@{list(spec.offsets)}")
                             for spec in _DATA.features.templates],
                n_train_sentences=len(_DATA.train), n_train_tokens=_DATA.n_train_tokens,
                n_test_sentences=len(_DATA.test_words), n_test_tokens=_DATA.n_test_tokens,
                n_unknown=_DATA.n_unknown)
    rows = []
    for name in args.systems:
        log(f"{name}: training and tagging ...")
        rows.append(run_in_child(run_system, name, args))
        log(f"{name}: done in {rows[-1]['train_s']:.1f} s training, accuracy {100 * rows[-1]['accuracy']:.2f} %")
    report(args, meta, rows)
    if args.json:
        write_json(args.json, {"settings": meta, "rows": rows})
    if args.plot:
        plot_steps(rows, args.plot, meta)


def plot_steps(rows: list[dict], path: str, meta: dict) -> None:
    """Cumulative learning seconds (after feature extraction) against epochs or iterations, one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.5))
    for row in rows:
        if row.get("step_seconds"):
            steps = np.arange(1, len(row["step_seconds"]) + 1)
            axis.plot(steps, np.cumsum(row["step_seconds"]), marker=".", label=f"{row['system']} "
                      f"({100 * row['accuracy']:.2f}%)")
    axis.set_xlabel("epochs (perceptrons) or iterations (L-BFGS)")
    axis.set_ylabel("cumulative learning seconds")
    axis.set_title(f"{meta['corpus']} {meta['column'] or ''}: learning time, {meta['n_train_tokens']:,} tokens")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def report(args, meta: dict, rows: list[dict]) -> None:
    print(f"POS tagging on {args.corpus} {args.column or ''}: {meta['n_train_sentences']} training sentences "
          f"({meta['n_train_tokens']} tokens), {meta['n_test_sentences']} test sentences ({meta['n_test_tokens']} "
          f"tokens); {args.epochs} epochs; python {meta['python']}, structlin {meta['structlin']}, "
          f"nltk {meta['nltk']}, CRFsuite {meta['crfsuite']}")
    print(f"command: {meta['command']}")
    print(f"structlin source: {meta['source']}")
    print(f"{FEATURES}: {'; '.join(meta['feature_set'])}")
    print()
    print(table(rows, COLUMNS))
    print()
    lines = ratios(rows)
    if lines:
        print("Ratios structlin / peer:")
        print("\n".join(lines))
        print()
    print("\n".join(notes(args, meta, rows)))


if __name__ == "__main__":
    main()
