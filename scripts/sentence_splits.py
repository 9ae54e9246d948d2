"""Write three sentence-classification corpora split by file, as TSV files (label<TAB>text), for choosing defaults on
data unlike the panel's: sentences whose label the words barely tell.

* ``brown-*.tsv``: the Brown corpus's sentences labelled by their file's genre (15 labels);
* ``mrsent-*.tsv``: movie_reviews' sentences labelled by their review's polarity (2 labels), texts as the corpus
  writes them (many start with ``"``);
* ``masc-*.tsv``: MASC's sentences labelled by their file's genre (the 17 genres of five files or more: email, spam,
  blogs, jokes, transcripts ...).

Of each label's files in name order, every fifth goes to ``test`` (never read to choose anything); of the others,
every fourth to ``dev``, the rest to ``dtrain``; ``train`` is ``dtrain`` and ``dev`` together (to train once for
test).  A sentence's file-mates stay on its side, as a test set's would.  Then, e.g.::

    python scripts/sentence_splits.py --output splits
    structlin train classifier --train splits/brown-dtrain.tsv --output M
    structlin evaluate M --test splits/brown-dev.tsv
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nltk.corpus import brown, masc_tagged, movie_reviews

PARTS = ("dtrain", "dev", "train", "test")


def split_by_file(corpus, label_of, sentences_of, least_files: int = 1) -> dict[str, list[tuple[str, str]]]:
    """``{part: [(label, text), ...]}`` over ``PARTS``, files assigned as the module docstring says; a label of fewer
    than ``least_files`` files is left out."""
    by_label: dict[str, list[str]] = {}
    for fileid in sorted(corpus.fileids()):
        label = label_of(fileid)
        if label is not None:  # a file the corpus gives no label
            by_label.setdefault(label, []).append(fileid)
    parts: dict[str, list[tuple[str, str]]] = {part: [] for part in PARTS}
    for label, fileids in sorted(by_label.items()):
        if len(fileids) < least_files:
            continue
        kept = [fileid for k, fileid in enumerate(fileids) if k % 5 != 4]
        parts["test"] += [(label, text) for k, fileid in enumerate(fileids) if k % 5 == 4
                          for text in sentences_of(fileid)]
        for k, fileid in enumerate(kept):
            rows = [(label, text) for text in sentences_of(fileid)]
            parts["dev" if k % 4 == 3 else "dtrain"] += rows
            parts["train"] += rows
    return parts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="folder to write the TSV files to")
    args = parser.parse_args(argv)
    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    corpora = {
        "brown": split_by_file(brown, lambda f: brown.categories(f)[0],
                               lambda f: (" ".join(words) for words in brown.sents(f))),
        "mrsent": split_by_file(movie_reviews, lambda f: movie_reviews.categories(f)[0],
                                lambda f: (line.strip() for line in movie_reviews.raw(f).splitlines() if line.strip())),
        "masc": split_by_file(masc_tagged, lambda f: next(iter(masc_tagged.categories(f)), None),
                              lambda f: (" ".join(words) for words in masc_tagged.sents(f) if words), least_files=5),
    }
    for name, parts in corpora.items():
        for part, rows in parts.items():
            path = folder / f"{name}-{part}.tsv"
            path.write_text("".join(f"{label}\t{text}\n" for label, text in rows), "utf-8")
            print(f"{path}: {len(rows)} sentences")


if __name__ == "__main__":
    main()
