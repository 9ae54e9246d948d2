"""Tag dictionary benchmark: Viterbi over every label against Viterbi restricted to candidate labels.

Random scores (normal emissions, transitions, start and end) for ``L`` labels (``--labels``, default 17,
50, 200 and 470: the Penn tag set's size to the Brown corpus's full one), batches of ``--batch``
sentences (default 4; a list such as ``4,200`` times each size: prediction decodes up to 4,096 positions
at once) of ``--length ± 5`` tokens, and candidate masks as a tag dictionary gives them: a share
``--known`` of the positions (default 0.85, known words) allow 1 to ``--max-candidates`` random labels,
the others (unknown or rare words) every label.

Timed per batch (``time.perf_counter`` over ``--batches`` distinct batches, repeated for at least
``--seconds``), all on the same batches:

* ``dense``       -- ``Viterbi().argmax`` without a mask, ``O(T·B·L²)``;
* ``sparse``      -- ``Viterbi("sparse")`` with the masks: the recursion over candidates only;
* ``auto``        -- ``Viterbi()`` with the masks: sparse or dense over masked scores, as its cost model
                     predicts (``sparse %``: the share of batches it decodes sparsely);
* ``all sparse`` / ``all auto`` -- the same with masks that allow every label: the cost of carrying a
                     mask that restricts nothing, as a ratio to ``dense``.

``edges %`` is the sparse recursion's ``Σ_t K_{t−1}·K_t`` against the dense ``B·L²`` per step.  Every
restricted result is checked to be the dense recursion's over masked scores.  The machine's load average
is printed before and after: timings on a shared machine vary with it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from structlin.decoders import Viterbi  # noqa: E402
from structlin.joint import Chains, Scores  # noqa: E402


def batches(rng, L: int, args, size: int) -> list[Scores]:
    """``args.batches`` batches of ``size`` sentences with candidate masks."""
    out = []
    for _ in range(args.batches):
        lengths = rng.integers(max(1, args.length - 5), args.length + 6, size=size)
        n = int(lengths.sum())
        allowed = np.zeros((n, L), dtype=bool)
        sizes = rng.integers(1, min(args.max_candidates, L) + 1, size=n)
        for row, k in zip(allowed, sizes):
            row[rng.choice(L, size=k, replace=False)] = True
        allowed[rng.random(n) >= args.known] = True
        out.append(Scores(rng.normal(size=(n, L)), lengths, rng.normal(size=(L, L)), rng.normal(size=L),
                          rng.normal(size=L), allowed))
    return out


def per_batch_ms(decode, scores: list[Scores], seconds: float) -> float:
    """Mean milliseconds of ``decode`` per batch, over the batches repeated for at least ``seconds``."""
    decode(scores[0])  # warm up
    runs, start = 0, time.perf_counter()
    while True:
        for s in scores:
            decode(s)
        runs += len(scores)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return 1e3 * elapsed / runs


def edge_share(scores: Scores) -> float:
    K, followers = scores.allowed.sum(axis=1), Chains(scores.lengths).followers
    T, B, L = int(scores.lengths.max()), len(scores.lengths), scores.n_labels
    return float(K[followers - 1] @ K[followers]) / ((T - 1) * B * L * L)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default="17,50,200,470", help="comma-separated numbers of labels")
    parser.add_argument("--batch", default="4", help="sentences per batch (comma-separated: several sizes)")
    parser.add_argument("--length", type=int, default=20, help="mean sentence length (uniform ± 5)")
    parser.add_argument("--known", type=float, default=0.85, help="share of positions with few candidates")
    parser.add_argument("--max-candidates", type=int, default=3, help="most candidates of a known word")
    parser.add_argument("--batches", type=int, default=10, help="distinct batches per cell")
    parser.add_argument("--seconds", type=float, default=1.0, help="least time per timing")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"load average before: {os.getloadavg()[0]:.2f}  ({os.cpu_count()} CPUs)")
    header = ("L", "B", "edges %", "dense ms", "sparse ms", "speed-up", "auto ms", "speed-up", "sparse %",
              "all sparse", "all auto")
    print(" ".join(f"{h:>10}" for h in header))
    dense, sparse, auto = Viterbi(), Viterbi("sparse"), Viterbi()
    for size in (int(b) for b in args.batch.split(",")):
        for L in (int(n) for n in args.labels.split(",")):
            restricted = batches(rng, L, args, size)
            plain = [replace(s, allowed=None) for s in restricted]
            everything = [replace(s, allowed=np.ones_like(s.allowed)) for s in restricted]
            for s in restricted:
                assert np.array_equal(sparse.argmax(s), dense.argmax(s.masked())), "sparse and masked decodings differ"
            dense_ms = per_batch_ms(dense.argmax, plain, args.seconds)
            sparse_ms = per_batch_ms(sparse.argmax, restricted, args.seconds)
            auto_ms = per_batch_ms(auto.argmax, restricted, args.seconds)
            all_sparse = per_batch_ms(sparse.argmax, everything, args.seconds) / dense_ms
            all_auto = per_batch_ms(auto.argmax, everything, args.seconds) / dense_ms
            chosen = np.mean([Viterbi.sparse_pays(s) for s in restricted])
            row = (L, size, 100 * np.mean([edge_share(s) for s in restricted]), dense_ms, sparse_ms,
                   dense_ms / sparse_ms, auto_ms, dense_ms / auto_ms, 100 * chosen, all_sparse, all_auto)
            print(f"{row[0]:>10} {row[1]:>10} {row[2]:>10.2f} " + " ".join(f"{v:>10.2f}" for v in row[3:8])
                  + f" {row[8]:>10.0f} {row[9]:>9.2f}x {row[10]:>9.2f}x", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
