"""Data-parallel training on a local Dask cluster against serial training: UD English EWT UPOS tagging.

Each learner trained serially and on a local cluster of ``--workers`` worker processes (one thread
each; ``Tagger(client=...)``, as ``structlin train tagger --workers N`` does), on the same training sentences
and without dev data (a fixed number of epochs or iterations):

* ``averaged-perceptron`` -- ``--epochs`` epochs; on the cluster by iterative parameter mixing (the shards'
                             epochs mixed by their share of the instances);
* ``crf``                 -- max-ent on the Viterbi decoder (a linear-chain CRF), ``--crf-iterations`` L-BFGS
                             iterations; on the cluster the objective's data term is summed over the shards;
* ``svm-pegasos``         -- the structured SVM by Pegasos, ``--epochs`` epochs; on the cluster by iterative
                             parameter mixing of the shards' epochs (only with ``--learners``: not by default);
* ``svm-bcfw``            -- the structured SVM by BCFW (its default solver), ``--epochs`` passes; on the cluster
                             each pass adds the shards' passes over their own dual blocks (CoCoA+; only with
                             ``--learners``).

Every run is in its own forked child process, so that its peak resident set size is its own.  A cluster run's
memory is the client's (the child's) plus its workers' (each worker's own peak, asked for when training ends),
which together hold the corpus about twice: the client's matrix and the workers' shards.  Printed: training
wall-clock seconds, peak memory, test accuracy, and the speed-up of the cluster run over the serial one.
Timings are noisy on a shared machine; the cluster's start (about a second) is not counted, its workers'
loading of their shards is (the first epoch or evaluation).

Commands (from the repository root)::

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    # a quick smoke run (seconds)
    python scripts/bench_distributed.py --limit 1000 --epochs 2 --crf-iterations 5
    # the benchmark (several minutes of both cores), results also as JSON
    python scripts/bench_distributed.py --json /tmp/bench_distributed.json
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from _bench import peak_rss_mib, percent, run_in_child, source_state, table, write_json

from structlin import Tagger
from structlin.catalog import load_split
from structlin.distributed import dask_client
from structlin.learners import SVM, AveragedPerceptron, MaxEnt

LEARNERS = ("averaged-perceptron", "crf", "svm-pegasos", "svm-bcfw")
DEFAULT_LEARNERS = ("averaged-perceptron", "crf")


def worker_peak_rss_mib() -> float:
    """A worker's peak resident set size (run on each worker by ``client.run``)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def learner(name: str, args):
    if name == "averaged-perceptron":
        return AveragedPerceptron(epochs=args.epochs, progress=False)
    if name == "svm-bcfw":
        return SVM(solver="bcfw", epochs=args.epochs, progress=False)
    if name == "svm-pegasos":
        return SVM(solver="pegasos", epochs=args.epochs, progress=False)
    return MaxEnt(epochs=args.crf_iterations, progress=False)


def train_and_score(name: str, workers: int, args, train, test) -> dict:
    """One run, in a child process: the model trained serially (``workers`` 0) or on a local cluster."""
    row = {"system": f"{name} {'serial' if not workers else f'{workers} workers'}", "learner": name,
           "workers": workers}
    with dask_client(workers or None) as client:
        model = Tagger(features="pos-rich", learner=learner(name, args), decoder="viterbi", bits=args.bits,
                       client=client)
        began = time.perf_counter()
        model.fit(train)
        row["train_seconds"] = time.perf_counter() - began
        row["workers_peak_mib"] = sum(client.run(worker_peak_rss_mib).values()) if client else 0.0
    steps = [record["seconds"] for record in model.history_]
    row["epoch_seconds"] = sum(steps[1:]) / (len(steps) - 1) if len(steps) > 1 else steps[0]  # after the set-up
    row["weight_bytes"] = 8 * model.joint.size  # one float64 vector of the run's layout
    row["client_peak_mib"] = peak_rss_mib()
    row["peak_mib"] = row["client_peak_mib"] + row["workers_peak_mib"]
    row["test_accuracy"] = model.accuracy(test)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the cluster runs (default: 2)")
    parser.add_argument("--epochs", type=int, default=10, help="averaged perceptron and Pegasos epochs (default: 10)")
    parser.add_argument("--crf-iterations", type=int, default=50, help="CRF L-BFGS iterations (default: 50)")
    parser.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")
    parser.add_argument("--limit", type=int, help="train on the first LIMIT sentences only (a smoke run)")
    parser.add_argument("--learners", default=",".join(DEFAULT_LEARNERS),
                        help=f"among {', '.join(LEARNERS)} (default: {', '.join(DEFAULT_LEARNERS)})")
    parser.add_argument("--json", help="also write the settings and rows to this JSON file")
    args = parser.parse_args()
    chosen = args.learners.split(",")
    unknown = set(chosen) - set(LEARNERS)
    if unknown:
        parser.error(f"unknown learners {', '.join(sorted(unknown))} (choose among {', '.join(LEARNERS)})")

    train, test = load_split("ud-english-ewt", "train"), load_split("ud-english-ewt", "test")
    train = train[: args.limit] if args.limit else train
    print(f"UD English EWT UPOS: {len(train):,} training sentences, {len(test):,} test sentences; "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}; {source_state()}", flush=True)
    rows = []
    for name in chosen:
        for workers in (0, args.workers):
            rows.append(run_in_child(train_and_score, name, workers, args, train, test))
            print(f"{rows[-1]['system']}: {rows[-1]['train_seconds']:.1f}s, "
                  f"{100 * rows[-1]['test_accuracy']:.2f}%", flush=True)
    print()
    print(table(rows, [("train s", lambda r: r["train_seconds"], ".1f"),
                       ("client MiB", lambda r: r["client_peak_mib"], ".0f"),
                       ("workers MiB", lambda r: r["workers_peak_mib"] or None, ".0f"),
                       ("peak MiB", lambda r: r["peak_mib"], ".0f"),
                       ("test %", lambda r: percent(r["test_accuracy"]), ".2f")]))
    ratios = {}
    for name in chosen:
        serial, cluster = (next(r for r in rows if r["learner"] == name and r["workers"] == w)
                           for w in (0, args.workers))
        ratios[name] = serial["train_seconds"] / cluster["train_seconds"]
        print(f"{name}: speed-up {ratios[name]:.2f}x on {args.workers} workers, accuracy "
              f"{100 * (cluster['test_accuracy'] - serial['test_accuracy']):+.2f} points")
    if args.json:
        write_json(args.json, {"settings": vars(args), "source": source_state(), "rows": rows, "speed_up": ratios})


if __name__ == "__main__":
    main()
