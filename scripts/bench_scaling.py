"""Cost against corpus size: training on 1×, 2×, 4× and 8× the tokens of UD English EWT's training split,
serially and on a local Dask cluster, with the time and peak memory of each run (issue 19).

The corpus of scale ``k`` is the first ``k × 204,577`` tokens (whole sentences) of EWT train, then all of Brown,
then all of the NLTK treebank sample, then EWT train again as often as needed, every tag in NLTK's 12 universal
tags (EWT's UPOS mapped to them: PROPN → NOUN, AUX → VERB, CCONJ and SCONJ → CONJ, PART → PRT, PUNCT and SYM
→ ``.``, INTJ → X), so that the sources agree.  Each run trains the averaged perceptron with the default
features for ``--epochs`` epochs without dev data (``Tagger(client=...)`` for a cluster, as ``structlin train
tagger --workers N`` does), in its own forked child, and is scored on EWT test (mapped alike).

Printed per run: tokens, training seconds, seconds per epoch after the first (the first includes the
workers' loading of their shards), the weights' size in bytes (what parameter mixing sends each way every
epoch), peak memory (the client's plus its workers'), test accuracy.  ``--plot FILE`` draws time and memory
against tokens (needs matplotlib).  The analysis of these figures is docs/scaling.md.

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/bench_scaling.py --scales 1,2 --epochs 2                      # a quick run
    python scripts/bench_scaling.py --json /tmp/scaling.json --plot docs/scaling.png   # the benchmark
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform

from _bench import run_in_child, source_state, table, write_json
from bench_distributed import train_and_score

from structlin.catalog import load_split
from structlin.readers import Sentence

#: UD UPOS → NLTK's universal tags (Petrov et al. 2012), the tag set Brown and the treebank sample map to.
UPOS_TO_UNIVERSAL = {"PROPN": "NOUN", "AUX": "VERB", "CCONJ": "CONJ", "SCONJ": "CONJ", "PART": "PRT",
                     "PUNCT": ".", "SYM": ".", "INTJ": "X"}


def universal(sentences: list[Sentence]) -> list[Sentence]:
    return [Sentence(s.words, [UPOS_TO_UNIVERSAL.get(t, t) for t in s.tags]) for s in sentences]


def scaled(sources: list[list[Sentence]], tokens: int) -> list[Sentence]:
    """Whole sentences of the sources in turn (the first one again after the last) up to ``tokens`` tokens."""
    out, total = [], 0
    for sentence in itertools.chain(*sources, itertools.cycle(sources[0])):
        if total >= tokens:
            return out
        out.append(sentence)
        total += len(sentence.words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1,2,4,8", help="multiples of EWT train's tokens (default: 1,2,4,8)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the cluster runs (default: 2)")
    parser.add_argument("--epochs", type=int, default=10, help="averaged perceptron epochs (default: 10)")
    parser.add_argument("--bits", type=int, default=22, help="feature hash size 2**bits (default: 22)")
    parser.add_argument("--json", help="also write the settings and rows to this JSON file")
    parser.add_argument("--plot", help="draw time and peak memory against tokens into this image file")
    args = parser.parse_args()
    args.learners, args.crf_iterations = "averaged-perceptron", 0  # what train_and_score reads of the settings
    ewt = universal(load_split("ud-english-ewt", "train"))
    test = universal(load_split("ud-english-ewt", "test"))
    others = [load_split(name, split, column="universal") for name in ("brown", "treebank")
              for split in ("train", "dev", "test")]
    sources = [ewt, [s for split in others[:3] for s in split], [s for split in others[3:] for s in split]]
    unit = sum(len(s.words) for s in ewt)
    print(f"EWT train {unit:,} tokens; Brown and the treebank sample after it; {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; {source_state()}", flush=True)
    rows = []
    for scale in map(int, args.scales.split(",")):
        train = scaled(sources, scale * unit)
        for workers in (0, args.workers):
            row = run_in_child(train_and_score, "averaged-perceptron", workers, args, train, test)
            row.update(scale=scale, tokens=sum(len(s.words) for s in train), system=f"{scale}x {row['system']}")
            rows.append(row)
            print(f"{row['system']}: {row['tokens']:,} tokens, {row['train_seconds']:.1f} s, "
                  f"{row['peak_mib']:.0f} MiB, {100 * row['test_accuracy']:.2f}%", flush=True)
    print()
    print(table(rows, [("tokens", lambda r: r["tokens"], ","),
                       ("train s", lambda r: r["train_seconds"], ".1f"),
                       ("s/epoch", lambda r: r["epoch_seconds"], ".2f"),
                       ("weights MB", lambda r: r["weight_bytes"] / 1e6, ".1f"),
                       ("client MiB", lambda r: r["client_peak_mib"], ".0f"),
                       ("workers MiB", lambda r: r["workers_peak_mib"] or None, ".0f"),
                       ("peak MiB", lambda r: r["peak_mib"], ".0f"),
                       ("test %", lambda r: 100 * r["test_accuracy"], ".2f")]))
    if args.json:
        write_json(args.json, {"settings": vars(args), "source": source_state(), "rows": rows})
    if args.plot:
        plot(rows, args.plot, args.workers, args.epochs)


def plot(rows: list[dict], path: str, workers: int, epochs: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for count, label in ((0, "serial"), (workers, f"{workers} workers")):
        runs = [r for r in rows if r["workers"] == count]
        tokens = [r["tokens"] / 1e6 for r in runs]
        time_axis.plot(tokens, [r["train_seconds"] for r in runs], marker="o", label=label)
        memory_axis.plot(tokens, [r["peak_mib"] for r in runs], marker="o", label=label)
    for axis, what in ((time_axis, "training seconds"), (memory_axis, "peak memory, MiB (client + workers)")):
        axis.set_xlabel("training tokens (millions)")
        axis.set_ylabel(what)
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(f"structlin averaged perceptron, {epochs} epochs: cost against corpus size")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
