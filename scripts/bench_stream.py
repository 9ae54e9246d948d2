"""``structlin train tagger|classifier --stream`` against corpus size (issue 19): peak memory and time on a corpus
and on a larger one, streamed and in memory, each scored on the same test set.

``--task tagger`` (the default): UD English EWT's training split alone and EWT + Brown + the NLTK treebank sample
(≈ 1.5 M tokens), each written as a ``word<TAB>tag`` file in NLTK's 12 universal tags (EWT's UPOS mapped to them,
as ``bench_scaling.py`` does), scored on EWT test.  ``--task classifier``: 20 Newsgroups' training posts, once and
``--copies`` times over (the same vocabulary: only the corpus grows, which is what ``--stream`` keeps out of
memory), written as ``label<TAB>text`` files (a post's tabs and line breaks made spaces), scored on its test
posts written alike.  The files go into ``--workdir``.  Each command is run as a user runs it, in its own process
(``python -m structlin``), with its own feature cache (``STRUCTLIN_CACHE`` under ``--workdir``): first with an
empty cache (the features are extracted and written), then again (the cache is found).  Printed per run: the
command's wall-clock seconds, its peak resident memory, the size of one float64 weight vector of the model's
layout and the peak less the vectors a run holds (weights, averaging sums and the epoch's average; in memory
also the best epoch's average, which a streamed run keeps on disk), EWT test accuracy; then the ratios the issue sets bars on (peak memory of the large corpus over EWT alone, streamed;
accuracy streamed minus in memory).

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/bench_stream.py --epochs 2            # a quick run
    python scripts/bench_stream.py --json stream.json    # the benchmark (defaults: 10 epochs)
    python scripts/bench_stream.py --task classifier --json stream-text.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import source_state, table, write_json
from bench_scaling import universal

from structlin.catalog import load_documents, load_split
from structlin.featurecache import FeatureCache


def write_tsv(path: Path, sentences) -> int:
    """Write ``sentences`` as word<TAB>tag lines, a blank line after each; the number of tokens."""
    tokens = 0
    with open(path, "w", encoding="utf-8") as file:
        for sentence in sentences:
            file.writelines(f"{word}\t{tag}\n" for word, tag in zip(sentence.words, sentence.tags))
            file.write("\n")
            tokens += len(sentence.words)
    return tokens


def corpora(workdir: Path) -> dict[str, int]:
    """Write the corpora's files (kept when present); their token counts."""
    ewt = {split: universal(load_split("ud-english-ewt", split)) for split in ("train", "dev", "test")}
    others = [s for name in ("brown", "treebank") for split in ("train", "dev", "test")
              for s in load_split(name, split, column="universal")]
    files = {"ewt-train": ewt["train"], "ewt-dev": ewt["dev"], "ewt-test": ewt["test"],
             "ewt-brown-treebank": ewt["train"] + others}
    return {name: write_tsv(workdir / f"{name}.tsv", sentences) for name, sentences in files.items()}


def document_corpora(workdir: Path, copies: int) -> dict[str, int]:
    """Write 20 Newsgroups' training posts once and ``copies`` times, and its test posts, as label<TAB>text files
    (kept when present); their document counts."""
    splits = {split: [(d.label, " ".join(d.text.split())) for d in load_documents("20news-bydate", split)]
              for split in ("train", "test")}
    files = {"news-train": splits["train"], f"news-train-x{copies}": splits["train"] * copies,
             "news-test": splits["test"]}
    for name, rows in files.items():
        path = workdir / f"{name}.tsv"
        if not path.exists():
            path.write_text("".join(f"{label}\t{text}\n" for label, text in rows), encoding="utf-8")
    return {name: len(rows) for name, rows in files.items()}


def layout_mib(cache: Path, tokens: int) -> float:
    """MiB of one float64 weight vector of the training layout of the corpus of ``tokens`` tokens or documents
    (every bucket its features use, by every label, and the transitions), read from its feature cache."""
    for cached in (FeatureCache(folder) for folder in (cache / "features").iterdir() if not folder.name.startswith(".")):
        if cached.n_positions == tokens:
            labels = len(cached.labels)
            return (len(cached.columns) * labels + labels * labels + 2 * labels) * 8 / 2**20
    raise LookupError(f"no feature cache of {tokens} tokens in {cache}")


def model_rows(path: Path) -> int:
    """The weight rows of a saved model: the feature buckets with a non-zero weight, about the rows the run
    touched (which is what a perceptron-family run keeps, learners.run_weights.TouchedRows)."""
    with np.load(path, allow_pickle=False) as arrays:
        return len(arrays["columns"])


def run(command: list[str], env: dict) -> tuple[float, float]:
    """Run ``command``; its wall-clock seconds and peak resident memory in MiB (``wait4``'s ``ru_maxrss``)."""
    began = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return time.perf_counter() - began, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=("tagger", "classifier"), default="tagger")
    parser.add_argument("--epochs", type=int, default=10, help="averaged perceptron epochs (default: 10)")
    parser.add_argument("--copies", type=int, default=8, help="classifier: the larger corpus is the training posts "
                        "this many times over (default: 8)")
    parser.add_argument("--workdir", help="where the corpora and caches go (default: a temporary folder, removed)")
    parser.add_argument("--json", help="also write the settings and rows to this JSON file")
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bench-stream-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.task == "tagger":
        small, large, dev, test, unit = "ewt-train", "ewt-brown-treebank", "ewt-dev", "ewt-test", "tokens"
    else:
        small, large, dev, test, unit = "news-train", f"news-train-x{args.copies}", None, "news-test", "documents"
    try:
        sizes = corpora(workdir) if args.task == "tagger" else document_corpora(workdir, args.copies)
        env = {**os.environ, "STRUCTLIN_CACHE": str(workdir / "cache")}
        shutil.rmtree(workdir / "cache", ignore_errors=True)
        structlin = [sys.executable, "-m", "structlin"]
        rows = []
        for corpus, stream, cache in [(small, True, "empty"), (small, True, "found"), (small, False, "-"),
                                      (large, True, "empty"), (large, True, "found"), (large, False, "-")]:
            model = workdir / f"{corpus}{'-stream' if stream else ''}.model"
            command = [*structlin, "train", args.task, "--train", str(workdir / f"{corpus}.tsv"),
                       *(["--dev", str(workdir / f"{dev}.tsv")] if dev else []), "--epochs", str(args.epochs),
                       "--output", str(model), "--quiet", *(["--stream"] if stream else [])]
            seconds, peak = run(command, env)
            report = subprocess.run([*structlin, "evaluate", str(model), "--test", str(workdir / f"{test}.tsv"),
                                     "--json"], env=env, check=True, capture_output=True, text=True).stdout
            name = f"{corpus}, {'streamed, cache ' + cache if stream else 'in memory'}"
            weights = layout_mib(workdir / "cache", sizes[corpus]) if stream else rows[-1]["weights_mib"]
            rows.append({"system": name, "corpus": corpus, unit: sizes[corpus], "stream": stream, "cache": cache,
                         "seconds": seconds, "peak_mib": peak, "weights_mib": weights, "model_rows": model_rows(model),
                         "test": 100 * json.loads(report)["accuracy"]})
            print(f"{name}: {seconds:.1f} s, {peak:.0f} MiB, weights {weights:.0f} MiB, test {rows[-1]['test']:.2f}",
                  flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(rows, [(unit, lambda r: r[unit], ",d"), ("s", lambda r: r["seconds"], ".1f"),
                       ("peak MiB", lambda r: r["peak_mib"], ".0f"), ("weights MiB", lambda r: r["weights_mib"], ".0f"),
                       ("model rows", lambda r: r["model_rows"], ",d"),
                       ("test %", lambda r: r["test"], ".2f")]))
    by = {(r["corpus"], r["stream"], r["cache"]): r for r in rows}
    for cache in ("empty", "found"):
        ratio = by[large, True, cache]["peak_mib"] / by[small, True, cache]["peak_mib"]
        print(f"peak memory, streamed, cache {cache}: {large} / {small} = {ratio:.2f}x (bar: 1.2x)")
    ratio = by[large, False, "-"]["peak_mib"] / by[small, False, "-"]["peak_mib"]
    print(f"peak memory, in memory: {large} / {small} = {ratio:.2f}x")
    gap = by[large, True, "found"]["test"] - by[large, False, "-"]["test"]
    print(f"test accuracy, streamed minus in memory (same data): {gap:+.2f} points (bar: within 0.1)")
    if args.json:
        write_json(args.json, {"source": source_state(), "machine": platform.platform(), "task": args.task,
                               "epochs": args.epochs, "rows": rows})


if __name__ == "__main__":
    main()
