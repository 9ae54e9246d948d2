"""Choose 20 Newsgroups settings on a temporal dev split of the training data, never on test.

The bydate test set holds posts written after the training posts, so a random dev split (threads
shared with train) flatters every setting alike.  This script holds out the last ``--fraction``
(default 15%) of each group's training posts by article number -- later posts, like the test set --
trains on the rest and prints the dev accuracy after every epoch (every ``eval_every``-th L-BFGS
iteration for maxent), for each seed.  The feature sets and hyper-parameters in docs/benchmarks.md
for 20 Newsgroups were chosen with it, e.g.::

    export STRUCTLIN_DATA=../shared/corpora NLTK_DATA=../shared/nltk_data
    python scripts/news_dev.py --features text-ngrams --learner averaged-perceptron margin=4 epochs=12 --seeds 0,1,2
    python scripts/news_dev.py --features text-ngrams --learner svm solver=bcfw C=1 epochs=4
    python scripts/news_dev.py --features text-ngrams --learner maxent l2=1e-5 epochs=60 eval_every=10

With ``--choose-inside`` the model is trained as ``structlin train classifier --corpus 20news-bydate`` trains it,
without the dev posts (choosing its epochs and settings on its own held-out share), and the later posts score what
it chose: a nested measure of the way defaults are chosen (``python scripts/news_dev.py --choose-inside --learner
svm``).
"""

from __future__ import annotations

import argparse
import ast
import time
from collections import defaultdict

from structlin import Classifier
from structlin.catalog import load_documents
from structlin.tasks import HELD_OUT


def temporal_split(documents, fraction: float):
    """(train, dev): per label, the posts sorted by article number (the member name), the last
    ``fraction`` of them to dev."""
    by_label = defaultdict(list)
    for document in documents:
        by_label[document.label].append(document)
    train, dev = [], []
    for posts in by_label.values():
        posts.sort(key=lambda d: int(d.source.rsplit("/", 1)[-1]))
        cut = round(len(posts) * (1 - fraction))
        train += posts[:cut]
        dev += posts[cut:]
    return train, dev


def learner_params(pairs: list[str]) -> dict:
    """``key=value`` pairs, values as Python literals where they parse (``C=1``, ``solver=bcfw``)."""
    params = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", default="text-ngrams", help="feature set name or TOML file")
    parser.add_argument("--learner", default="averaged-perceptron")
    parser.add_argument("params", nargs="*", help="learner options as key=value, e.g. margin=4 epochs=12")
    parser.add_argument("--seeds", default="0", help="comma-separated learner seeds (default: 0)")
    parser.add_argument("--fraction", type=float, default=0.15, help="dev share of each group (default: 0.15)")
    parser.add_argument("--strip", default="", help="parts of the posts to remove (headers,footers,quotes)")
    parser.add_argument("--choose-inside", action="store_true",
                        help="train without the dev posts (choices on a held-out share of train), score on them")
    args = parser.parse_args(argv)
    strip = tuple(part for part in args.strip.split(",") if part)
    train, dev = temporal_split(load_documents("20news-bydate", "train", strip=strip), args.fraction)
    print(f"20news-bydate train: {len(train)} posts to train on, the {len(dev)} latest to dev")
    for seed in (int(s) for s in args.seeds.split(",")):
        began = time.perf_counter()
        # the learner by name, as `structlin train classifier` makes it (with the classifier's learner defaults)
        options = {"progress": False, **learner_params(args.params), "seed": seed}
        texts, labels = [d.text for d in train], [d.label for d in train]
        dev_texts, dev_labels = [d.text for d in dev], [d.label for d in dev]
        if args.choose_inside:
            classifier = Classifier(args.features, args.learner, held_out=HELD_OUT, **options).fit(texts, labels)
            print(f"seed {seed}: chose {classifier.learner.chosen_}; dev accuracy "
                  f"{100 * classifier.score(dev_texts, dev_labels):.2f}; {time.perf_counter() - began:.0f} s")
            continue
        classifier = Classifier(args.features, args.learner, **options).fit(texts, labels, dev=(dev_texts, dev_labels))
        scores = [(record.get("iteration", record.get("epoch")), 100 * record["dev_accuracy"])
                  for record in classifier.history_ if record.get("dev_accuracy") is not None]
        best = max(scores, key=lambda pair: pair[1])
        print(f"seed {seed}: dev accuracy by step " + " ".join(f"{step}:{acc:.2f}" for step, acc in scores)
              + f"; best {best[1]:.2f} at {best[0]}; {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
