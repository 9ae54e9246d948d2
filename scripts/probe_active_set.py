"""Probe (issues 19 and 20): a linear-chain CRF over an active set of (feature, label) pairs against the CRF over
every pair, on UD English EWT UPOS, scored on dev only.

The CRF's L-BFGS keeps ``2·memory`` vectors of the weights' length; with every feature row by every tag that is
6.1 M weights on EWT, where CRFsuite keeps the 0.58 M pairs seen in training.  Seen pairs alone lose accuracy
(the weights of pairs never seen, pushed below zero by the likelihood, matter).  The probe:

1. trains on the seen pairs for ``--iterations`` L-BFGS iterations (the prior ``relative_l2 × ρ``);
2. adds the unseen pairs with the largest gradient there, ``--grow`` times as many as the seen ones, and trains
   on the union for ``--iterations`` more, from where step 1 ended;
3. trains the CRF over every pair for twice ``--iterations`` (the same number of iterations in all).

Every step's dev accuracy is printed with its number of free weights.  The weights outside the active set are
held at 0 by optimising over the active entries only (the objective is evaluated on the full vector).

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/probe_active_set.py --iterations 100 --grow 0.5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from structlin import Tagger
from structlin.catalog import load_split
from structlin.decoders import decode_corpus
from structlin.learners.maxent import MaxEntObjective
from structlin.learners.owlqn import minimize_owlqn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=100, help="L-BFGS iterations of each step (default: 100)")
    parser.add_argument("--grow", type=float, default=0.5, help="unseen pairs added, as a multiple of the seen ones")
    parser.add_argument("--relative-l2", type=float, default=0.01, help="the prior, relative to ρ (default: 0.01)")
    args = parser.parse_args()

    train, dev = load_split("ud-english-ewt", "train"), load_split("ud-english-ewt", "dev")
    model = Tagger(learner="maxent")
    X, y = model.training_data(train)
    joint, decoder = model.joint, model.decoder
    dev_X = joint.index(model._features([list(s.words) for s in dev], "dev data"))
    dev_y = joint.encode_labels([t for s in dev for t in s.tags], unknown=-1)
    objective = MaxEntObjective(joint, decoder, X, y, l2=args.relative_l2 * X.mean_squared_norm())
    L, tail = joint.n_labels, joint.transition_offset

    def accuracy(w: np.ndarray) -> float:
        return float((decode_corpus(decoder, joint, w, dev_X) == dev_y).mean())

    def train_on(keys: np.ndarray, start: np.ndarray) -> np.ndarray:
        """L-BFGS over the emission entries ``keys`` and the tail, every other weight held at 0."""
        free = np.concatenate([keys, np.arange(tail, joint.size)])

        def restricted(v: np.ndarray):
            w = np.zeros(joint.size)
            w[free] = v
            value, gradient = objective(w)
            return value, gradient[free]

        result = minimize_owlqn(restricted, start[free], l1=0.0, maxiter=args.iterations, ftol=1e-6, memory=6)
        w = np.zeros(joint.size)
        w[free] = result.x
        return w

    seen = np.unique(X.indices.astype(np.int64) * L + y[X.entry_positions()])
    began = time.perf_counter()
    w = train_on(seen, np.zeros(joint.size))
    print(f"seen pairs: {len(seen):,} free emission weights of {tail:,}, dev {100 * accuracy(w):.2f}% "
          f"({time.perf_counter() - began:.0f} s)", flush=True)
    gradient = objective(w)[1][:tail]
    unseen = np.setdiff1d(np.arange(tail), seen, assume_unique=True)
    added = unseen[np.argsort(-np.abs(gradient[unseen]), kind="stable")[: int(args.grow * len(seen))]]
    active = np.union1d(seen, added)
    began = time.perf_counter()
    w = train_on(active, w)
    print(f"active set: {len(active):,} ({len(active) / tail:.3f} of all), dev {100 * accuracy(w):.2f}% "
          f"({time.perf_counter() - began:.0f} s)", flush=True)
    began = time.perf_counter()
    full = minimize_owlqn(objective, np.zeros(joint.size), l1=0.0, maxiter=2 * args.iterations, ftol=1e-6, memory=6)
    print(f"every pair: {tail:,}, {2 * args.iterations} iterations, dev {100 * accuracy(full.x):.2f}% "
          f"({time.perf_counter() - began:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
