"""The perceptron's mistake bound R²/γ̂² beside its observed mistakes (:mod:`structlin.analysis`).

1. Planted separable data (:func:`~structlin.analysis.planted_separable`): for several seeds, dimensions and
   label counts, documents (and two chain configurations) labelled by a random unit ``w*``, keeping only
   instances whose margin under ``w*`` is at least ``--margin``.  Each row prints ``R``, the margin of
   ``w*`` on the data, the certified margin ``γ̂`` of the structured SVM (C = ``--C``), the bound
   ``R²/γ̂²`` and the mistakes of the perceptron run to convergence.  The exit code is 1 if any row has
   more mistakes than its bound.
2. A real corpus (default: ``names`` with its bundled feature set), analysed as it is and with the Δ trick
   (:class:`~structlin.learners.delta_trick.DeltaTrick`): whether it is certified separable, the
   perceptron's mistakes per epoch, its online mistake curve (cumulative mistakes after so many examples)
   and the online-to-batch bound of its first epoch.

Command (from the repository root)::

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/mistake_bound.py                        # a few minutes on 2 cores
    python scripts/mistake_bound.py --corpus qc --features text-ngrams --delta-trick 0.5
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

import numpy as np

from structlin import Classifier
from structlin.analysis import (
    analyze,
    certified_margin,
    certify,
    perceptron_mistakes,
    planted_separable,
    radius,
)
from structlin.catalog import load_documents
from structlin.decoders import Multiclass, Viterbi

# (seed, dimension, labels, positions per instance): documents, then chains with transitions.
CONFIGURATIONS = [(seed, dim, labels, 1) for seed in range(3) for dim, labels in [(5, 2), (20, 3), (50, 5)]]
CONFIGURATIONS += [(seed, 10, 3, 3) for seed in range(2)]


def planted_rows(args) -> bool:
    """Print one row per configuration; whether every row keeps within its bound."""
    print(f"planted separable data: {args.n} instances per row, planted margin ≥ {args.margin}, SVM C = {args.C:g}")
    print(f"{'seed':>4} {'dim':>4} {'labels':>6} {'length':>6} {'R':>8} {'γ(w*)':>8} {'γ̂':>8} {'R²/γ̂²':>10} "
          f"{'mistakes':>8} {'epochs':>6}")
    within = True
    for seed, dim, n_labels, length in CONFIGURATIONS:
        planted = planted_separable(args.n, dim, n_labels, args.margin, length=length, seed=seed)
        joint, X, y = planted.joint, planted.X, planted.y
        decoder = Viterbi() if length > 1 else Multiclass()
        R = radius(joint, X).value
        certificate = certified_margin(joint, decoder, X, y, C=args.C, passes=args.passes, seed=seed)
        curve = perceptron_mistakes(joint, decoder, X, y, epochs=1000, seed=seed)
        bound = R**2 / certificate.margin**2 if certificate.separable else float("inf")
        within &= curve.total <= bound and curve.converged
        print(f"{seed:>4} {dim:>4} {n_labels:>6} {length:>6} {R:>8.4f} {certify(joint, planted.w, X, y).margin:>8.4f} "
              f"{certificate.margin:>8.4f} {bound:>10.1f} {curve.total:>8} {curve.epochs:>6}")
    print(f"every row: mistakes ≤ R²/γ̂²: {'yes' if within else 'NO'}")
    return within


def real_corpus(args) -> None:
    documents = load_documents(args.corpus, args.split)
    labels_of = defaultdict(set)
    for document in documents:
        labels_of[document.text].add(document.label)
    conflicting = sum(len(labels) > 1 for labels in labels_of.values())
    print(f"\n{args.corpus}{f' ({args.split})' if args.split else ''}, features {args.features}: {len(documents):,} "
          f"documents; {conflicting:,} distinct texts occur with more than one label"
          f"{', so no weights separate it' if conflicting else ''}")
    classifier = Classifier(args.features)
    X, y = classifier.training_data([d.text for d in documents], [d.label for d in documents])
    for trick in (None, args.delta_trick):
        began = time.perf_counter()
        result = analyze(classifier.joint, classifier.decoder, X, y, C=args.C, passes=args.passes, epochs=args.epochs,
                         delta_trick=trick)
        print(f"\n{'with the Δ trick' if trick else 'as it is'} ({time.perf_counter() - began:.0f}s):")
        print(result.format())
        seen = np.unique(np.linspace(0, result.curve.epochs * result.n_instances, 11).astype(int))
        print("online mistake curve (examples seen: cumulative mistakes): "
              + ", ".join(f"{s:,}: {m:,}" for s, m in zip(seen, result.curve.cumulative(seen))))
        if result.bound is not None:
            print(f"mistakes ≤ R²/γ̂²: {'yes' if result.curve.total <= result.bound else 'NO'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300, help="instances per planted configuration (default: 300)")
    parser.add_argument("--margin", type=float, default=0.05, help="the planted margin (default: 0.05)")
    parser.add_argument("--C", type=float, default=1000.0, help="the SVM's C (default: 1000)")
    parser.add_argument("--passes", type=int, default=30, help="at most this many BCFW passes (default: 30)")
    parser.add_argument("--corpus", default="names", help="the real corpus, a document corpus (default: names)")
    parser.add_argument("--split", help="its split (default: all of it)")
    parser.add_argument("--features", default="names", help="its feature set (default: names)")
    parser.add_argument("--epochs", type=int, default=30, help="perceptron epochs on it at most (default: 30)")
    parser.add_argument("--delta-trick", type=float, default=1.0, help="Δ of the Δ trick run (default: 1)")
    args = parser.parse_args()
    began = time.perf_counter()
    within = planted_rows(args)
    real_corpus(args)
    print(f"\ntotal {time.perf_counter() - began:.0f}s")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
