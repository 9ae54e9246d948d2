"""Cross-check of structlin's Crammer–Singer SVM against LIBLINEAR on 20 Newsgroups (issue 5).

On the same hashed features of a 20news-bydate train subset, structlin's ``SVM(solver="bcfw", C=C)``
and LIBLINEAR's ``-s 4`` (Crammer–Singer, ``-c C -B -1``: no bias, ``-e --liblinear-eps``) are
trained, and both weight vectors are scored by the SAME :class:`structlin.learners.svm.StructuredHinge`
instance, i.e. by structlin's primal

    P(w) = (λ/2)‖w‖² + (1/n) Σ_t max_y [Δ(y_t, y) + w·φ(x_t, y) − w·φ(x_t, y_t)],   λ = 1/(C·n),

with the 0/1 loss.  LIBLINEAR's primal ``(1/2)‖w‖² + C Σ_t H_t(w)`` is ``n·C·P(w)``: the same
minimiser.  The check passes when ``|P(structlin) − P(liblinear)| ≤ 1% · P(liblinear)``; the exit
code is 1 on failure.

What is done:

* the documents: a random sample (seed 0, kept in corpus order, as ``bench_textcat.py --limit``
  draws it; the corpus is sorted by group, so a prefix would miss groups) of ``--docs`` documents
  of 20news-bydate train, all of it with ``--docs 0``;
* the features: built once, exactly as ``Classifier("text-ngrams", ...).fit`` builds them
  (tf-idf fitted on the sample, the joint map of the buckets seen, classes sorted), as one indexed
  :class:`~structlin.matrix.FeatureMatrix` ``X`` (a row per document, a column per weight row) and
  label ids ``y``; LIBLINEAR gets ``X`` as a scipy CSR matrix (float32 values widened to float64,
  exactly) and ``y`` as label ids;
* structlin: BCFW until the exact duality gap is at most ``--tol`` (absolute, on P's scale; P(0) = 1),
  or ``--max-passes`` passes, or ``--max-seconds`` (checked after each pass): the gap reached is
  printed either way, and the dual objective D, a lower bound on min P (so P(liblinear) ≥ D);
* LIBLINEAR's weights: the model's ``w`` array is ``nr_feature × nr_class`` row-major (for ``-s 4``
  every class has a column, also with two classes); column ``j`` belongs to the label id
  ``model.get_labels()[j]`` (LIBLINEAR orders classes by first appearance).  The mapping is checked
  against ``get_decfun_coef`` on sampled entries and by LIBLINEAR's own ``predict`` on the training
  documents agreeing with the argmax of the mapped weights.

Times are wall-clock seconds of training only (LIBLINEAR's problem conversion is timed apart).

Commands (from the repository root)::

    pip install -e ".[bench]"          # liblinear-official among them (it compiles LIBLINEAR)
    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/crosscheck_liblinear.py                      # 2000 documents, C = 1 (about 10 minutes:
                                                                # BCFW needs ~140 passes for a gap < 1e-3)
    python scripts/crosscheck_liblinear.py --C 0.1 --max-seconds 120 --json out.json   # about 2 minutes
    python scripts/crosscheck_liblinear.py --docs 0 --tol 1e-3  # all 11,314 documents
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import random
import sys
import time

import numpy as np
import scipy.sparse
from _bench import source_state, stopwatch, write_json

from structlin import Classifier
from structlin.catalog import load_documents
from structlin.joint import JointFeatureMap
from structlin.learners.svm import SVM

CORPUS = "20news-bydate"
BOUND = 0.01  # |P(structlin) − P(liblinear)| / P(liblinear), at most


def load_sample(docs: int) -> tuple[list[str], list[str]]:
    """``docs`` documents of train drawn with seed 0, in corpus order (all of them for 0)."""
    documents = load_documents(CORPUS, "train")
    if 0 < docs < len(documents):
        documents = [documents[k] for k in sorted(random.Random(0).sample(range(len(documents)), docs))]
    return [d.text for d in documents], [d.label for d in documents]


def build_features(texts: list[str], labels: list[str]):
    """``(classifier, joint, X, y)`` exactly as :meth:`Classifier.fit` builds them (its code, inlined)."""
    clf = Classifier("text-ngrams")
    X = clf._training_features(texts, fit_idf=True)
    joint = JointFeatureMap.from_training(sorted(set(labels)), X, transitions=False)
    return clf, joint, joint.index(X), joint.encode_labels(labels)


def to_csr(X, n_columns: int) -> scipy.sparse.csr_matrix:
    """The indexed feature matrix (one position per document) as a float64 CSR matrix."""
    assert (X.lengths == 1).all(), "documents have one position each"
    matrix = scipy.sparse.csr_matrix((X.values.astype(np.float64), X.indices, X.indptr), shape=(X.n_positions, n_columns))
    matrix.sum_duplicates()  # no-op unless a row repeats a column; sorts the indices either way
    return matrix


def train_structlin(joint, decoder, X, y, args) -> tuple[SVM, dict]:
    start = time.perf_counter()

    def out_of_time(record, learner):
        return record["duality_gap"] > args.tol and time.perf_counter() - start > args.max_seconds

    learner = SVM(args.max_passes, solver="bcfw", C=args.C, tol=args.tol, seed=0, callback=out_of_time,
                  progress=False)
    row: dict = {}
    with stopwatch(row, "train_seconds"):
        learner.fit(joint, decoder, X, y)
    last = learner.history_[-1]
    row.update(passes=len(learner.history_), stopped=learner.stopped_, duality_gap=last["duality_gap"],
               dual_objective=last["dual_objective"], reached_tol=last["duality_gap"] <= args.tol,
               history=[{k: r[k] for k in ("epoch", "primal_objective", "duality_gap", "seconds")}
                        for r in learner.history_])
    return learner, row


def train_liblinear(matrix, y, joint, args) -> tuple[np.ndarray, dict]:
    """LIBLINEAR ``-s 4`` on the CSR matrix; its weights as a flat structlin weight vector."""
    from liblinear.liblinearutil import parameter, predict, problem, train

    row: dict = {"options": f"-s 4 -c {args.C:g} -B -1 -e {args.liblinear_eps:g} -q"}
    with stopwatch(row, "convert_seconds"):
        prob = problem(y.astype(np.float64), matrix)
    with stopwatch(row, "train_seconds"):
        model = train(prob, parameter(row["options"]))
    n_features, n_classes = model.get_nr_feature(), model.get_nr_class()
    order = np.array(model.get_labels(), dtype=np.int64)  # column j of LIBLINEAR's w is label id order[j]
    if n_features != joint.n_rows or n_classes != joint.n_labels or sorted(order) != list(range(joint.n_labels)):
        raise RuntimeError(f"LIBLINEAR model is {n_features} features × {n_classes} classes {order.tolist()}, "
                           f"expected {joint.n_rows} × {joint.n_labels}")
    W_ll = np.ctypeslib.as_array(model.w, shape=(n_features * n_classes,)).reshape(n_features, n_classes).copy()
    # the layout, checked against LIBLINEAR's own accessor (1-based features) on sampled entries
    rng = np.random.default_rng(0)
    for f, j in zip(rng.integers(n_features, size=200), rng.integers(n_classes, size=200)):
        if model.get_decfun_coef(int(f) + 1, int(j)) != W_ll[f, j]:
            raise RuntimeError("LIBLINEAR's w is not laid out nr_feature × nr_class")
    w = np.zeros(joint.size)
    joint.emission_weights(w)[:, order] = W_ll
    # the class order, checked by LIBLINEAR's own predictions on the training documents
    predicted, _, _ = predict(y.astype(np.float64), matrix, model, "-q")
    mapped = np.asarray(matrix @ joint.emission_weights(w)).argmax(axis=1)
    row["prediction_mismatches"] = int(np.count_nonzero(np.asarray(predicted, dtype=np.int64) != mapped))
    return w, row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000, help="documents of train, a seed-0 sample (0: all)")
    parser.add_argument("--C", type=float, default=1.0, help="LIBLINEAR's C; structlin's λ = 1/(C·n)")
    parser.add_argument("--tol", type=float, default=1e-4,
                        help="structlin's BCFW stops at this exact duality gap (absolute, on P's scale)")
    parser.add_argument("--max-passes", type=int, default=300, help="BCFW passes at most")
    parser.add_argument("--max-seconds", type=float, default=600.0,
                        help="stop BCFW after the first pass past this many seconds (the gap is reported)")
    parser.add_argument("--liblinear-eps", type=float, default=1e-4, help="LIBLINEAR's -e")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    texts, labels = load_sample(args.docs)
    features: dict = {}
    with stopwatch(features, "seconds"):
        clf, joint, X, y = build_features(texts, labels)
    matrix = to_csr(X, joint.n_rows)
    print(f"{CORPUS} train: {len(texts)} documents ({'seed-0 sample' if 0 < args.docs < 11314 else 'all'}), "
          f"{joint.n_labels} labels, {joint.n_rows} weight rows, {matrix.nnz} nonzeros "
          f"(features {features['seconds']:.1f} s)")

    learner, ours = train_structlin(joint, clf.decoder, X, y, args)
    w_ll, theirs = train_liblinear(matrix, y, joint, args)

    objective = learner.objective(joint, clf.decoder, X, y)  # one instance scores both
    p_ours, _, errors_ours = objective(learner.weights_)
    p_theirs, _, errors_theirs = objective(w_ll)
    relative = (p_ours - p_theirs) / p_theirs
    passed = abs(relative) <= BOUND
    ours.update(P=p_ours, train_errors=errors_ours)
    theirs.update(P=p_theirs, train_errors=errors_theirs, liblinear_objective=len(y) * args.C * p_theirs)

    print(f"structlin SVM(solver='bcfw', C={args.C:g}, tol={args.tol:g}): {ours['passes']} passes, "
          f"{ours['stopped']}, {ours['train_seconds']:.1f} s")
    print(f"LIBLINEAR {theirs['options']}: {theirs['train_seconds']:.1f} s "
          f"(+ {theirs['convert_seconds']:.1f} s to build its problem); "
          f"its predictions vs argmax of the mapped weights: {theirs['prediction_mismatches']} mismatches")
    print(f"P(structlin)         = {p_ours:.8f}   (train errors {errors_ours})")
    print(f"P(liblinear)         = {p_theirs:.8f}   (train errors {errors_theirs}; "
          f"its own objective n·C·P = {theirs['liblinear_objective']:.6g})")
    print(f"D(structlin)         = {ours['dual_objective']:.8f}   (a lower bound on min P)")
    print(f"duality gap          = {ours['duality_gap']:.3g}   "
          f"({'reached' if ours['reached_tol'] else 'NOT reached:'} tol {args.tol:g})")
    print(f"relative difference  = {relative:+.3e}   (P(structlin) − P(liblinear)) / P(liblinear)")
    print(f"{'PASS' if passed else 'FAIL'}: |relative difference| {'<=' if passed else '>'} {BOUND:.0%}")

    if args.json:
        settings = {**vars(args), "documents": len(texts), "labels": joint.n_labels, "rows": joint.n_rows,
                    "nonzeros": int(matrix.nnz), "feature_seconds": features["seconds"],
                    "liblinear_version": importlib.metadata.version("liblinear-official"), "cpus": os.cpu_count(),
                    "load_average": os.getloadavg()[0], "source": source_state()}
        write_json(args.json, {"settings": settings, "structlin": ours, "liblinear": theirs,
                               "relative_difference": relative, "bound": BOUND, "passed": passed})
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
