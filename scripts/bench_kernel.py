"""Kernel perceptron benchmark: structlin's kernel perceptron against the linear averaged perceptron,
random Fourier features and scikit-learn's ``SVC`` with the same kernels.

Datasets (``--datasets``, default all three):

* ``digits``   -- scikit-learn's bundled handwritten digits (8×8 grey levels 0-16, 1,797 images, 10
                  labels), a seeded 75/25 split (``--seed``); documents are ``{pixel: value}`` dicts
                  read through the ``numeric`` feature set (values as given, no scaling);
* ``ppattach`` -- PP attachment (V/N), the official train (20,801) and test (3,097) files, feature set
                  ``ppattach``; the devset is not used (no system sees dev data);
* ``names``    -- NLTK names → gender, a seeded 75/25 split of the 7,944 names, feature set ``names``.

Systems (``--systems``: comma-separated configuration names, or ``all``; by default all but the slow
ones on ppattach, see below), each trained and scored in its own forked child process:

* ``linear``     -- ``AveragedPerceptron(epochs, margin)``, the settings of docs/benchmarks.md (digits:
                    10 epochs, margin 0; ppattach: 10, 0.25; names: 8, 1);
* ``kp-poly2`` .. ``kp-poly5``, ``kp-rbf`` -- ``KernelPerceptron(kernel, degree, gamma="scale",
                    coef0=1)``; one training run gives three rows, the ``last``, ``averaged`` and
                    ``voted`` hypotheses (training timed once, prediction timed per hypothesis);
* ``kp-budget-oldest``, ``kp-budget-random`` -- the same with ``budget=--budget`` support examples
                    (removal of the oldest / a random one), kernel ``--budget-kernel`` (default
                    poly2); only on ppattach, the dataset with >= 20,000 training examples; compared
                    with the unbounded ``kp-<budget kernel>`` run;
* ``rff-500`` .. ``rff-4000`` -- ``AveragedPerceptron`` (the ``linear`` settings) on the feature set
                    with ``random_fourier = {dimensions: D, gamma, seed: --seed}``: accuracy against D,
                    beside the exact RBF kernel perceptron and SVC;
* ``svc-poly2`` .. ``svc-poly5``, ``svc-rbf`` -- ``sklearn.svm.SVC(kernel, degree, gamma, coef0=1,
                    cache_size=--svc-cache-mb)`` on structlin's own feature rows of the dataset (the
                    hashed buckets seen in training, as the kernel perceptron gets them), so that both
                    compute the same kernel; skipped, with the reason, without scikit-learn.

``gamma``: structlin resolves ``gamma="scale"`` on its training rows (``structlin.kernels.Kernel``);
the parent computes that value once per dataset from the same rows and gives it explicitly to
``SVC`` and to the random Fourier features, and the report checks that every kernel perceptron
resolved the same value.  (It is not scikit-learn's own ``"scale"`` on the raw data: structlin's
feature values carry the hash signs, which change the mean; on digits, seed 0, structlin's is
0.000262 where ``SVC(gamma="scale")`` on the raw pixels would use 0.000432.)

Measured per system: *acc %* on test; *train s* / *CPU s*, wall-clock / CPU seconds of ``fit`` from
documents (feature extraction included); *supports*, the support examples of the model (the kernel
perceptron's ``n_support_``, ``SVC.n_support_`` summed); *removed*, support examples the budget
removed; *predict rows/s*, test documents / seconds of ``predict`` (features included; the fastest
of up to 5 calls, repeated until they took 1 s, as a small test set is timed noisily); *peak MiB*,
the child's peak RSS after training and *+MiB* its increase during training.  After each table:
the accuracy gap kernel perceptron - SVC per kernel (each hypothesis), training-time, support and
prediction-speed ratios, the best kernel perceptron against the linear one, random Fourier features
against the RBF kernel machines, and the budget experiment (accuracy loss, supports <= budget).

Defaults chosen for time (CPU seconds measured on this 2-core machine; wall-clock is up to twice
that when other jobs run).  The kernel perceptron runs 3 epochs on ppattach (35-40 s per polynomial
kernel, 70 s for rbf; the first epoch, which creates most support examples, takes ~60% of it) and
the ``linear`` epochs elsewhere.  On ppattach these are left out unless named or ``--systems all``:
``svc-poly3`` .. ``svc-poly5`` and ``svc-rbf`` (135-155 s each with ``cache_size=2000``;
``svc-poly2``, the budget kernel, runs: 150 s, and 550 s wall-clock with scikit-learn's default
200 MB), ``kp-budget-random`` (115 s: with a budget every mistake still costs a kernel column over
all training examples, and there are twice as many) and ``rff-*`` (115 s for 10 epochs on 2,000 dense
features).  The default run takes about 11 CPU minutes, ``--systems all`` about 14 more.
``--epochs N`` sets every perceptron's epochs on every dataset.

Commands (from the repository root)::

    pip install -e ".[bench]"          # scikit-learn
    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    # a quick smoke run (seconds)
    python scripts/bench_kernel.py --datasets digits
    # the default benchmark (about ten minutes), results also as JSON
    python scripts/bench_kernel.py --json out.json
    # every system, SVC with every kernel on ppattach too (about 25 minutes)
    python scripts/bench_kernel.py --systems all --json out-all.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse
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

import structlin
from structlin import Classifier
from structlin.catalog import load_documents
from structlin.doctemplates import DocumentFeatureExtractor
from structlin.hashing import FeatureHasher
from structlin.kernels import Kernel
from structlin.learners import AveragedPerceptron, KernelPerceptron
from structlin.templates import FeatureSet

try:
    import sklearn
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC
except ImportError as err:
    sklearn = None
    SKLEARN_MISSING = f"cannot import scikit-learn ({err}); pip install -e '.[bench]'"

HYPOTHESES = ("last", "averaged", "voted")  # of one kernel perceptron run, in report order
KERNELS = {f"poly{d}": {"kernel": "poly", "degree": d} for d in range(2, 6)} | {"rbf": {"kernel": "rbf"}}
COEF0 = 1.0
TEST_FRACTION = 0.25
PREDICT_MIN_S, PREDICT_MAX_CALLS = 1.0, 5  # prediction is repeated up to 5 times until 1 s; the fastest call counts


class Skipped(Exception):
    """A system or dataset that cannot run here (scikit-learn missing); the message says why."""


# --- datasets ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSpec:
    features: str  # structlin feature set
    epochs: int  # linear and random-Fourier averaged perceptron
    margin: float  # of the averaged perceptron (docs/benchmarks.md)
    kernel_epochs: int  # kernel perceptron
    load: Callable[[int], tuple[list, list[str], list, list[str], str]]  # seed -> train, test, split description
    budget_experiment: bool = False  # the dataset has >= 20,000 training examples
    slow: frozenset[str] = frozenset()  # systems left out unless named (or --systems all)


def seeded_split(documents: list, labels: list[str], seed: int) -> tuple[list, list[str], list, list[str]]:
    """A seeded random split: 75% training, 25% test."""
    order = np.random.default_rng(seed).permutation(len(documents))
    cut = round((1 - TEST_FRACTION) * len(documents))
    train, test = order[:cut], order[cut:]
    return ([documents[k] for k in train], [labels[k] for k in train],
            [documents[k] for k in test], [labels[k] for k in test])


def load_digits_split(seed: int):
    if sklearn is None:
        raise Skipped(SKLEARN_MISSING)
    images, digits = load_digits(return_X_y=True)
    documents = [{int(j): float(v) for j, v in enumerate(image) if v} for image in images]
    return (*seeded_split(documents, [str(d) for d in digits], seed),
            f"scikit-learn load_digits, seeded 75/25 split (seed {seed})")


def load_names_split(seed: int):
    documents = load_documents("names", "all")
    return (*seeded_split([d.text for d in documents], [d.label for d in documents], seed),
            f"NLTK names, seeded 75/25 split (seed {seed})")


def load_ppattach(seed: int):
    train, test = load_documents("ppattach", "train"), load_documents("ppattach", "test")
    return ([d.text for d in train], [d.label for d in train], [d.text for d in test], [d.label for d in test],
            "official training / test files (devset unused)")


RFF_DIMENSIONS = (500, 1000, 2000, 4000)  # the rff-D systems: accuracy against D
SLOW_PPATTACH = frozenset({"svc-poly3", "svc-poly4", "svc-poly5", "svc-rbf", "kp-budget-random",
                           *(f"rff-{d}" for d in RFF_DIMENSIONS)})
DATASETS = {
    "digits": DatasetSpec("numeric", 10, 0.0, 10, load_digits_split),
    "ppattach": DatasetSpec("ppattach", 10, 0.25, 3, load_ppattach, budget_experiment=True, slow=SLOW_PPATTACH),
    "names": DatasetSpec("names", 8, 1.0, 8, load_names_split),
}


class TrainingRows:
    """A feature set's rows as scipy CSR over the hashed buckets seen in training, in float64: what
    the kernel perceptron computes its kernel on (buckets absent from training dropped)."""

    def __init__(self, features: str):
        self.hasher = FeatureHasher()
        self.extractor = DocumentFeatureExtractor(FeatureSet.load(features), self.hasher)

    def rows(self, documents, *, fit: bool = False) -> scipy.sparse.csr_matrix:
        """The documents' rows; with ``fit`` (training documents) their buckets become the columns."""
        hashed = self.extractor.extract(documents).csr(1 << self.hasher.bits)
        if fit:
            self.columns = np.unique(hashed.indices)
        return hashed[:, self.columns].astype(np.float64)


@dataclass
class Data:
    """One dataset, read once in the parent before any system runs."""

    name: str
    spec: DatasetSpec
    split: str
    train_docs: list
    train_labels: list[str]
    test_docs: list
    test_labels: list[str]
    gamma: float = field(init=False)  # structlin's gamma="scale" on the training rows

    def __post_init__(self):
        rows = TrainingRows(self.spec.features).rows(self.train_docs, fit=True)
        self.gamma = Kernel("rbf", gamma="scale").resolved(rows).gamma


def load_data(name: str, seed: int) -> Data:
    spec = DATASETS[name]
    *splits, description = spec.load(seed)
    return Data(name, spec, description, *splits)


# --- systems: make(data, args) -> a model with fit(documents, labels) and predict(documents) -----------


class KernelSVC:
    """scikit-learn's ``SVC`` on structlin's feature rows of the dataset (:class:`TrainingRows`)."""

    def __init__(self, features: str, **params):
        if sklearn is None:
            raise Skipped(SKLEARN_MISSING)
        self.rows, self.svc = TrainingRows(features), SVC(**params)

    def __repr__(self) -> str:
        return f"{' '.join(repr(self.svc).split())} on {self.rows.extractor.feature_set.name!r} rows (training buckets)"

    def fit(self, documents, labels) -> KernelSVC:
        self.svc.fit(self.rows.rows(documents, fit=True), labels)
        return self

    def predict(self, documents) -> list[str]:
        return self.svc.predict(self.rows.rows(documents))


def epochs(data: Data, args, kernel: bool = False) -> int:
    return args.epochs or (data.spec.kernel_epochs if kernel else data.spec.epochs)


def linear(data: Data, args, features: FeatureSet | None = None) -> Classifier:
    learner = AveragedPerceptron(epochs=epochs(data, args), margin=data.spec.margin, seed=args.seed, progress=False)
    return Classifier(features or FeatureSet.load(data.spec.features), learner)


def random_fourier(dimensions: int) -> Callable[[Data, argparse.Namespace], Classifier]:
    def make(data: Data, args) -> Classifier:
        table = {"dimensions": dimensions, "gamma": data.gamma, "seed": args.seed}
        return linear(data, args, FeatureSet.from_dict({**FeatureSet.load(data.spec.features).to_dict(),
                                                        "random_fourier": table}))
    return make


def kernel_perceptron(kernel: str, **options) -> Callable[[Data, argparse.Namespace], Classifier]:
    def make(data: Data, args) -> Classifier:
        learner = KernelPerceptron(epochs=epochs(data, args, kernel=True), **KERNELS[kernel], gamma="scale",
                                   coef0=COEF0, seed=args.seed, progress=False, **options)
        return Classifier(data.spec.features, learner)
    return make


def budget_perceptron(removal: str) -> Callable[[Data, argparse.Namespace], Classifier]:
    def make(data: Data, args) -> Classifier:
        return kernel_perceptron(args.budget_kernel, budget=args.budget, removal=removal)(data, args)
    return make


def svc(kernel: str) -> Callable[[Data, argparse.Namespace], KernelSVC]:
    def make(data: Data, args) -> KernelSVC:
        return KernelSVC(data.spec.features, **KERNELS[kernel], gamma=data.gamma, coef0=COEF0,
                         cache_size=args.svc_cache_mb)
    return make


@dataclass(frozen=True)
class System:
    group: str  # "linear", "kernel perceptron", "budget", "random Fourier", "SVC"
    make: Callable[[Data, argparse.Namespace], object]


SYSTEMS = {
    "linear": System("linear", linear),
    **{f"kp-{k}": System("kernel perceptron", kernel_perceptron(k)) for k in KERNELS},
    **{f"kp-budget-{r}": System("budget", budget_perceptron(r)) for r in ("oldest", "random")},
    **{f"rff-{d}": System("random Fourier", random_fourier(d)) for d in RFF_DIMENSIONS},
    **{f"svc-{k}": System("SVC", svc(k)) for k in KERNELS},
}


def systems_of(data: Data, chosen: list[str] | None) -> list[str]:
    """The systems to run on a dataset: those named (``None``: all but the dataset's slow ones); the
    budget experiment only where the dataset has one."""
    names = chosen or [s for s in SYSTEMS if s not in data.spec.slow]
    return [s for s in names if SYSTEMS[s].group != "budget" or data.spec.budget_experiment]


def describe(model) -> str:
    if isinstance(model, Classifier):
        rff = model.feature_set.random_fourier
        return (f"Classifier({model.feature_set.name!r}{f' + random Fourier {rff.to_dict()}' if rff else ''}; "
                f"{model.learner.name} {model.learner.params()})")
    return repr(model)


# --- measuring one system in a child process --------------------------------------------------------

_DATA: dict[str, Data] = {}  # set by the parent before forking; children read it (never pickled)


def model_facts(model) -> dict:
    """Support examples and the resolved gamma of a kernel machine; seconds in epochs (and the
    kernel perceptron's mistakes per epoch) of a structlin classifier."""
    if isinstance(model, KernelSVC):
        return {"n_support": int(model.svc.n_support_.sum()), "gamma": model.svc.gamma}
    learner = model.learner
    if not isinstance(learner, KernelPerceptron):
        return {"learn_s": sum(r["seconds"] for r in learner.history_)}
    return {"n_support": learner.n_support_, "removed": learner.removed_, "gamma": learner.kernel.gamma,
            "learn_s": sum(r["seconds"] for r in learner.history_),
            "train_mistakes": [r["train_mistakes"] for r in learner.history_]}


def predict(model, data: Data, hypothesis: str | None) -> dict:
    """Accuracy and speed of one prediction over the test set (with ``hypothesis`` for the kernel perceptron)."""
    if hypothesis is not None:
        model.learner.hypothesis = hypothesis
    calls: list[dict] = []
    while sum(c["predict_s"] for c in calls) < PREDICT_MIN_S and len(calls) < PREDICT_MAX_CALLS:
        calls.append({"hypothesis": hypothesis})
        with stopwatch(calls[-1], "predict_s"):
            predicted = [str(label) for label in model.predict(data.test_docs)]
    out = min(calls, key=lambda c: c["predict_s"])
    out.update(predict_calls=len(calls), rows_per_s=len(predicted) / out["predict_s"],
               accuracy=float(np.mean(np.array(predicted) == np.array(data.test_labels))))
    return out


def run_system(dataset: str, name: str, args) -> dict:
    """Train one system once and score every hypothesis it has; runs in a freshly forked child."""
    data, system = _DATA[dataset], SYSTEMS[name]
    run = {"dataset": dataset, "config": name, "group": system.group}
    try:
        model = system.make(data, args)
    except Skipped as reason:
        return {**run, "skipped": str(reason)}
    run["rss_before_mib"] = current_rss_mib()
    with stopwatch(run, "train_s"):
        model.fit(data.train_docs, data.train_labels)
    run["peak_rss_mib"] = peak_rss_mib()
    run.update(rss_increase_mib=run["peak_rss_mib"] - run["rss_before_mib"], model=describe(model),
               **model_facts(model))
    dual = isinstance(getattr(model, "learner", None), KernelPerceptron)
    run["predictions"] = [predict(model, data, h) for h in (HYPOTHESES if dual else (None,))]
    return run


def rows_of(run: dict) -> list[dict]:
    """One report row per hypothesis of a run (``kp-poly2 last``, ...), the run's fields shared."""
    if "skipped" in run:
        return [{**run, "system": run["config"]}]
    shared = {k: v for k, v in run.items() if k != "predictions"}
    return [{**shared, **p, "system": " ".join(filter(None, (run["config"], p["hypothesis"])))}
            for p in run["predictions"]]


# --- report -----------------------------------------------------------------------------------------

COLUMNS = (  # header, row field, format
    ("acc %", lambda r: percent(r["accuracy"]), ".2f"),
    ("train s", lambda r: r["train_s"], ".1f"),
    ("CPU s", lambda r: r["train_s_cpu"], ".1f"),
    ("supports", lambda r: r.get("n_support"), ",d"),
    ("removed", lambda r: r.get("removed") or None, ",d"),
    ("predict rows/s", lambda r: r["rows_per_s"], ",.0f"),
    ("peak MiB", lambda r: r["peak_rss_mib"], ".0f"),
    ("+MiB", lambda r: r["rss_increase_mib"], ".0f"),
)


def points(a: dict, b: dict) -> float:
    return 100 * (a["accuracy"] - b["accuracy"])


def comparisons(rows: list[dict], args) -> tuple[list[str], dict]:
    """The comparison lines of one dataset, and their values for the JSON."""
    by = {r["system"]: r for r in rows if "skipped" not in r}
    lines, out = [], {}
    for kernel in KERNELS:
        svm, kp = by.get(f"svc-{kernel}"), {h: by.get(f"kp-{kernel} {h}") for h in HYPOTHESES}
        if svm is None or kp["averaged"] is None:
            continue
        gaps = {h: points(kp[h], svm) for h in HYPOTHESES}
        ratio = {"train_time": kp["averaged"]["train_s"] / svm["train_s"],
                 "supports": kp["averaged"]["n_support"] / svm["n_support"],
                 "predict_rows_per_s": kp["averaged"]["rows_per_s"] / svm["rows_per_s"]}
        out[f"kp_vs_svc_{kernel}"] = {"accuracy_points": gaps, **ratio}
        lines.append(f"{kernel}: kernel perceptron - SVC accuracy "
                     + ", ".join(f"{h} {g:+.2f}" for h, g in gaps.items())
                     + f" points; training time {ratio['train_time']:.2f}x; supports {ratio['supports']:.2f}x; "
                     f"prediction rows/s (averaged) {ratio['predict_rows_per_s']:.2f}x")
    kernel_rows = [r for r in by.values() if r["group"] == "kernel perceptron"]
    if "linear" in by and kernel_rows:
        best, lin = max(kernel_rows, key=lambda r: r["accuracy"]), by["linear"]
        out["best_kp_vs_linear"] = {"best": best["system"], "accuracy_points": points(best, lin),
                                    "train_time": best["train_s"] / lin["train_s"]}
        lines.append(f"best kernel perceptron ({best['system']}, {percent(best['accuracy']):.2f} %) - linear "
                     f"averaged perceptron: {points(best, lin):+.2f} points; training time "
                     f"{best['train_s'] / lin['train_s']:.2f}x")
    for rff in (f"rff-{d}" for d in RFF_DIMENSIONS if f"rff-{d}" in by):
        for peer in ("kp-rbf averaged", "svc-rbf"):
            if peer in by:
                out[f"{rff}_vs_{peer.replace(' ', '_')}"] = {"accuracy_points": points(by[rff], by[peer]),
                                                            "train_time": by[rff]["train_s"] / by[peer]["train_s"]}
                lines.append(f"{rff} - {peer}: {points(by[rff], by[peer]):+.2f} points; training time "
                             f"{by[rff]['train_s'] / by[peer]['train_s']:.2f}x")
    unbounded = f"kp-{args.budget_kernel}"
    for removal in ("oldest", "random"):
        bounded = {h: by.get(f"kp-budget-{removal} {h}") for h in HYPOTHESES}
        if bounded["averaged"] is None or f"{unbounded} averaged" not in by:
            continue
        full = {h: by[f"{unbounded} {h}"] for h in HYPOTHESES}
        b, f = bounded["averaged"], full["averaged"]
        loss = {h: -points(bounded[h], full[h]) for h in HYPOTHESES}
        ok = b["n_support"] <= args.budget
        out[f"budget_{removal}"] = {"budget": args.budget, "n_support": b["n_support"], "within_budget": ok,
                                    "unbounded_n_support": f["n_support"], "removed": b["removed"],
                                    "accuracy_loss_points": loss, "train_s": b["train_s"],
                                    "unbounded_train_s": f["train_s"]}
        lines.append(f"budget {args.budget} ({removal} removed), {args.budget_kernel}: accuracy "
                     + ", ".join(f"{h} {percent(bounded[h]['accuracy']):.2f} (unbounded {percent(full[h]['accuracy']):.2f}"
                                 f", loss {loss[h]:+.2f})" for h in HYPOTHESES)
                     + f"; supports {b['n_support']:,} <= {args.budget:,}: {'yes' if ok else 'NO'} (unbounded "
                     f"{f['n_support']:,}; {b['removed']:,} removed); training {b['train_s']:.1f} s vs "
                     f"{f['train_s']:.1f} s unbounded")
    return lines, out


def gamma_note(data: Data, rows: list[dict]) -> str:
    """The dataset's gamma, and whether every kernel perceptron resolved "scale" to it."""
    resolved = {r["gamma"] for r in rows if r["group"] in ("kernel perceptron", "budget") and "skipped" not in r}
    differ = sorted(g for g in resolved if not np.isclose(g, data.gamma, rtol=1e-9, atol=0))
    agree = (f"NOT what kernel perceptrons resolved: {', '.join(f'{g:.6g}' for g in differ)}" if differ
             else "as every kernel perceptron resolved it" if resolved else "")
    return f"gamma {data.gamma:.6g} (structlin's 'scale' on the training rows{'; ' + agree if agree else ''})"


def report_dataset(data: Data, rows: list[dict], lines: list[str], args, not_run: list[str]) -> None:
    spec = data.spec
    print(f"== {data.name}: {len(data.train_docs):,} training / {len(data.test_docs):,} test examples, "
          f"{len(set(data.train_labels))} labels; {data.split}; feature set {spec.features!r}; "
          f"epochs: linear/rff {epochs(data, args)}, kernel perceptron {epochs(data, args, kernel=True)}")
    print(f"   {gamma_note(data, rows)}")
    print()
    print(table([r for r in rows if "skipped" not in r], COLUMNS))
    for r in rows:
        if "skipped" in r:
            print(f"{r['system']}: skipped: {r['skipped']}")
    if not_run:
        print(f"not run by default here (slow, see the docstring; --systems all): {', '.join(not_run)}")
    print()
    if lines:
        print("Comparisons:")
        print("\n".join(f"  {line}" for line in lines))
        print()


def report(meta: dict, datasets: list[Data], rows: list[dict], comparison_lines: dict, args) -> None:
    print(f"Kernel perceptron benchmark; python {meta['python']}, structlin {meta['structlin']}, "
          f"scikit-learn {meta['scikit-learn'] or '-'}, numpy {meta['numpy']}")
    print(f"command: {meta['command']}")
    print(f"structlin source: {meta['source']}; {meta['started']}, load average {meta['load_average_start']:.2f} "
          f"at start, {meta['cpus']} CPUs")
    for name, reason in meta["skipped_datasets"].items():
        print(f"dataset {name}: skipped: {reason}")
    print()
    for data in datasets:
        mine = [r for r in rows if r["dataset"] == data.name]
        not_run = [] if args.systems else [s for s in SYSTEMS if s in data.spec.slow]
        report_dataset(data, mine, comparison_lines[data.name], args, not_run)
    ran = [r for r in rows if "skipped" not in r]
    print("Systems:")
    print("\n".join(dict.fromkeys(f"  {r['dataset']} {r['config']}: {r['model']}" for r in ran)))
    print("Notes:")
    print("\n".join(f"  {line}" for line in (
        ("One training run per kernel perceptron configuration: its last/averaged/voted rows share train s, "
         "supports and memory; predict rows/s is timed per hypothesis."),
        "train s includes feature extraction from the documents (for rff the random Fourier map); "
        + "; ".join(f"{r['dataset']} {r['config']} {r['learn_s']:.1f} s in epochs" for r in ran
                    if "learn_s" in r and r["hypothesis"] in (None, "last")) + ".",
        (f"predict rows/s: all test documents -> labels in one call, features included; the fastest of up to "
         f"{PREDICT_MAX_CALLS} calls, repeated until they took {PREDICT_MIN_S:g} s."),
        "peak MiB: the child's ru_maxrss after training; +MiB: peak - RSS before training.",
        "Wall-clock timings on a shared machine; load average after each run: "
        + ", ".join(f"{r['dataset']} {r['config']} {r['load_average_after']:.2f}" for r in ran
                    if r["hypothesis"] in (None, "last")),
    )))


# --- main -------------------------------------------------------------------------------------------


def names_list(text: str, known, what: str, parser) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in known]
    if unknown or not names:
        parser.error(f"{what}: unknown name(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(known)}")
    return names


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma-separated subset of {','.join(DATASETS)} (default: all)")
    parser.add_argument("--systems", default="",
                        help=f"comma-separated subset of {','.join(SYSTEMS)}, or 'all' (default: all but "
                             "svc-poly3..5, svc-rbf, kp-budget-random and rff-* on ppattach, which take minutes each)")
    parser.add_argument("--epochs", type=int,
                        help="epochs of every perceptron on every dataset (default: per dataset, see the docstring)")
    parser.add_argument("--seed", type=int, default=0,
                        help="split of digits and names, shuffling, random removal, random Fourier features (default: 0)")
    parser.add_argument("--budget", type=int, default=2000, help="support budget of kp-budget-* (default: 2000)")
    parser.add_argument("--budget-kernel", choices=KERNELS, default="poly2",
                        help="kernel of the budget experiment (default: poly2)")
    parser.add_argument("--svc-cache-mb", type=float, default=2000.0,
                        help="SVC cache_size in MB (default: 2000, the whole ppattach kernel matrix)")
    parser.add_argument("--json", metavar="PATH", help="also write every row, the comparisons and the settings as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    args = parser.parse_args(argv)
    args.datasets = names_list(args.datasets, DATASETS, "--datasets", parser)
    args.systems = None if args.systems in ("", "all") else names_list(args.systems, SYSTEMS, "--systems", parser)
    if (args.epochs is not None and args.epochs < 1) or args.budget < 1:
        parser.error("--epochs and --budget must be positive")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    meta = {"command": " ".join([os.path.basename(sys.executable), *sys.argv]), "datasets": args.datasets,
            "systems": args.systems or "default", "epochs": args.epochs, "seed": args.seed, "budget": args.budget,
            "budget_kernel": args.budget_kernel, "rff_dimensions": RFF_DIMENSIONS,
            "svc_cache_mb": args.svc_cache_mb, "python": platform.python_version(),
            "structlin": structlin.__version__, "scikit-learn": sklearn and sklearn.__version__,
            "numpy": np.__version__, "cpus": os.cpu_count(), "load_average_start": os.getloadavg()[0],
            "started": time.strftime("%Y-%m-%d %H:%M:%S"), "source": source_state(), "skipped_datasets": {}}
    for name in args.datasets:
        log(f"loading {name} ...")
        try:
            _DATA[name] = load_data(name, args.seed)
        except Skipped as reason:
            meta["skipped_datasets"][name] = str(reason)
    rows, lines, values = [], {}, {}
    for data in _DATA.values():
        for system in systems_of(data, args.systems):
            log(f"{data.name} {system}: training and predicting ...")
            run = run_in_child(run_system, data.name, system, args)
            rows += rows_of(run)
            log(f"{data.name} {system}: skipped: {run['skipped']}" if "skipped" in run else
                f"{data.name} {system}: {run['train_s']:.1f} s training, accuracy "
                + ", ".join(f"{100 * p['accuracy']:.2f} %" for p in run["predictions"]))
        lines[data.name], values[data.name] = comparisons([r for r in rows if r["dataset"] == data.name], args)
    meta["datasets_info"] = {d.name: {"split": d.split, "features": d.spec.features, "n_train": len(d.train_docs),
                                      "n_test": len(d.test_docs), "gamma": d.gamma,
                                      "epochs": epochs(d, args), "kernel_epochs": epochs(d, args, kernel=True)}
                             for d in _DATA.values()}
    report(meta, list(_DATA.values()), rows, lines, args)
    if args.json:
        write_json(args.json, {"settings": meta, "rows": rows, "comparisons": values})


if __name__ == "__main__":
    main()
