"""The procedure that chooses structlin's defaults: candidate settings scored on the dev data of a panel of
corpora, never on test data.

    python scripts/choose_defaults.py --learner averaged-perceptron --grid margin=0,1,2,4
    python scripts/choose_defaults.py --learner maxent --grid l2=0.1,1 --panel qc,ewt-upos --markdown table.md

For every corpus of the panel and every candidate (the learner's defaults with the ``--grid`` values in
their place; ``--features`` and ``--decoder`` stay the models' defaults unless given), the model is
trained on the corpus's train split and scored on its dev split — or, for a corpus without one, on a
seeded 10% of train held out (``sources.hold_out``, seed 0), training on the rest — with dev for early
stopping, as ``structlin train`` does.  Test splits are never read.  The score is span F1 for BIO-style
tags and accuracy otherwise.

The rule that picks a default among the candidates: the smallest **mean regret** over the panel (a
candidate's regret on a corpus: the best candidate's dev score there minus its own, in points), ties
broken by the worst-case regret.  The worst case alone would follow the noise of the smallest dev sets
(movie_reviews' 200 documents: half a point per document).  A rule of the data (a value scaled by the
data) is a candidate like any other.

With ``--choose-inside`` the model is trained without the dev data, as ``structlin train`` trains on a corpus without
a dev split: whatever it chooses on held-out data (epochs, naive Bayes's settings), it chooses on its own part of
the training data, and the panel's dev data scores the choice (a nested evaluation of the way settings are chosen,
e.g. ``python scripts/choose_defaults.py --learner naive-bayes --choose-inside --panel qc,qc-fine,names``).

Each result is appended to a JSON-lines cache (``--cache``, default ``defaults-panel.jsonl``) under its
corpus, learner, options, features and decoder, so that a rerun computes only the missing cells.
Data: ``STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from structlin.catalog import Catalog
from structlin.learners import LEARNERS
from structlin.sources import ReadOptions, hold_out
from structlin.tasks import HELD_OUT, TASKS
from structlin.tuning import grid, score_candidates

DEV_FRACTION, DEV_SEED = 0.1, 0


@dataclass(frozen=True)
class Corpus:
    """One corpus of the panel: a catalog name, the task, and how to read it."""

    catalog: str
    task: str
    read: ReadOptions = field(default_factory=ReadOptions)


PANEL = {
    "20news": Corpus("20news-bydate", "classifier"),
    "qc": Corpus("qc", "classifier", ReadOptions(granularity="coarse")),
    "qc-fine": Corpus("qc", "classifier", ReadOptions(granularity="fine")),
    "movie_reviews": Corpus("movie_reviews", "classifier"),
    "names": Corpus("names", "classifier"),
    "ppattach": Corpus("ppattach", "classifier"),
    "conll2000": Corpus("conll2000", "tagger", ReadOptions(column="chunk")),
    "conll2002-esp": Corpus("conll2002-esp", "tagger"),
    "conll2002-ned": Corpus("conll2002-ned", "tagger"),
    "ewt-upos": Corpus("ud-english-ewt", "tagger", ReadOptions(column="upos")),
    "ewt-xpos": Corpus("ud-english-ewt", "tagger", ReadOptions(column="xpos")),
    "treebank": Corpus("treebank", "tagger"),
}


def splits(corpus: Corpus) -> tuple[list, list, str]:
    """The training and dev units of ``corpus``, and where dev came from."""
    task, entry = TASKS[corpus.task], Catalog.load()[corpus.catalog]
    train_split = "train" if "train" in entry.splits else None
    train = task.read(corpus.catalog, train_split, corpus.read)
    if "dev" in entry.splits:
        return train, task.read(corpus.catalog, "dev", corpus.read), "the dev split"
    rest, dev = hold_out(train, DEV_FRACTION, DEV_SEED)
    return rest, dev, f"{100 * DEV_FRACTION:g}% of {train_split or 'the corpus'} (seed {DEV_SEED})"


def score_on_dev(corpus: Corpus, learner: str, options: dict, features: str | None, decoder: str | None,
                 data: tuple[list, list, str], *, inside: bool = False) -> dict:
    """Train one candidate on ``data``'s train part and score it on its dev part (``inside``: trained without it,
    choosing on its own held-out data)."""
    task = TASKS[corpus.task]
    train, dev, _ = data
    result, = score_candidates(task, learner, [options], train, dev, settings={"seed": 0, "progress": False},
                               new_model=lambda model_learner: task.new_model(
                                   features, model_learner, decoder=decoder, bits=task.default("bits"),
                                   held_out=HELD_OUT if inside else None), fit_dev=not inside)
    return {key: result[key] for key in ("score", "metric", "seconds", "best_epoch")}


def key(corpus: str, learner: str, options: dict, features: str | None, decoder: str | None,
        inside: bool = False) -> str:
    return json.dumps([corpus, learner, sorted(options.items()), features, decoder, *(["inside"] if inside else [])])


def choose(table: dict[str, dict[str, float]]) -> list[tuple[str, float, float]]:
    """Candidates ranked by the rule: (candidate, worst regret, mean regret) in points, best (least mean) first."""
    corpora = sorted({corpus for scores in table.values() for corpus in scores})
    best = {c: max(scores[c] for scores in table.values() if c in scores) for c in corpora}
    ranked = []
    for candidate, scores in table.items():
        regrets = [100 * (best[c] - scores[c]) for c in corpora if c in scores]
        if len(regrets) == len(corpora):
            ranked.append((candidate, max(regrets), sum(regrets) / len(regrets)))
    return sorted(ranked, key=lambda r: (round(r[2], 6), round(r[1], 6)))


def markdown(table: dict[str, dict[str, float]], learner: str) -> str:
    corpora = [c for c in PANEL if any(c in scores for scores in table.values())]
    ranked = {candidate: (worst, mean) for candidate, worst, mean in choose(table)}
    lines = [f"| {learner} | " + " | ".join(corpora) + " | worst regret | mean regret |",
             "|---|" + "---|" * (len(corpora) + 2)]
    for candidate, scores in table.items():
        cells = [f"{100 * scores[c]:.2f}" if c in scores else "" for c in corpora]
        worst, mean = ranked.get(candidate, (None, None))
        tail = [f"{worst:.2f}", f"{mean:.2f}"] if worst is not None else ["", ""]
        lines.append(f"| {candidate} | " + " | ".join(cells + tail) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learner", required=True, choices=list(LEARNERS))
    parser.add_argument("--grid", nargs="*", default=[], help="name=v1,v2,... (learner options)")
    parser.add_argument("--panel", default=",".join(PANEL), help="comma-separated panel corpora (default: all)")
    parser.add_argument("--features", help="feature set (default: each model's default)")
    parser.add_argument("--decoder", help="tagger decoder (default: the Tagger's)")
    parser.add_argument("--choose-inside", action="store_true",
                        help="train without the dev data (choices on the model's own held-out data), score on it")
    parser.add_argument("--cache", default="defaults-panel.jsonl")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    names = args.panel.split(",")
    unknown = [name for name in names if name not in PANEL]
    if unknown:
        parser.error(f"unknown panel corpora {unknown}; known: {', '.join(PANEL)}")
    cache_path = Path(args.cache)
    cache = {}
    if cache_path.exists():
        for line in cache_path.read_text("utf-8").splitlines():
            record = json.loads(line)
            cache[record["key"]] = record
    table: dict[str, dict[str, float]] = {}
    for name in names:
        corpus, data = PANEL[name], None
        for options in grid(args.learner, args.grid) if args.grid else [{}]:
            decoder = args.decoder if corpus.task == "tagger" else None
            cell = key(name, args.learner, options, args.features, decoder, args.choose_inside)
            if cell not in cache:
                data = data or splits(corpus)
                result = score_on_dev(corpus, args.learner, options, args.features, decoder, data,
                                      inside=args.choose_inside)
                cache[cell] = {"key": cell, "corpus": name, "learner": args.learner, "options": options,
                               "features": args.features, "decoder": decoder, "dev": data[2], **result}
                with cache_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(cache[cell]) + "\n")
            record = cache[cell]
            label = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
            table.setdefault(label, {})[name] = record["score"]
            print(f"{name:<14} {label:<30} dev {record['metric']} {100 * record['score']:.2f}  "
                  f"(epoch {record['best_epoch']}, {record['seconds']}s; dev: {record['dev']})", flush=True)
    text = markdown(table, args.learner)
    print(text)
    ranked = choose(table)
    if ranked:
        print(f"rule (least mean regret, then worst case): {ranked[0][0]}")
    if args.markdown:
        Path(args.markdown).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
