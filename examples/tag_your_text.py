"""Tag your own text with a part-of-speech tagger trained on UD English EWT.

    python examples/tag_your_text.py "Time flies like an arrow. I can't wait!"
    python examples/tag_your_text.py --model ewt.model "..."   # trains and saves the first time, then loads

Training takes under a minute (5 epochs of the averaged perceptron; the corpus is downloaded on first use, or
read from $STRUCTLIN_DATA).  `structlin train tagger --corpus ud-english-ewt` does the same from the shell.
"""

import argparse
import re
from pathlib import Path

from nltk.tokenize import TreebankWordTokenizer

from structlin import Tagger
from structlin.catalog import load_split

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("text", nargs="?", default="The old man the boats. I can't believe it's not butter!")
parser.add_argument("--model", type=Path, help="a model file: loaded if it exists, else trained and saved there")
args = parser.parse_args()

if args.model and args.model.exists():
    tagger = Tagger.load(args.model)
else:
    # Sentences of the corpus: each holds its words and gold tags (here the UPOS column).
    train, dev = load_split("ud-english-ewt", "train"), load_split("ud-english-ewt", "dev")
    tagger = Tagger(features="pos-rich", epochs=5)
    tagger.fit(train, dev)   # keeps the epoch with the best dev accuracy
    report = tagger.report(load_split("ud-english-ewt", "test"))
    print(f"test accuracy: {100 * report.accuracy:.2f}% "
          f"(unknown words: {100 * report.unknown_accuracy:.2f}%)")
    if args.model:
        tagger.save(args.model)
        print(f"saved {args.model}")

# The tagger reads tokenized sentences. Split the text after . ! or ? and cut each sentence into tokens the
# way the treebank does ("can't" -> "ca", "n't").
tokenizer = TreebankWordTokenizer()
for sentence in re.split(r"(?<=[.!?])\s+", args.text.strip()):
    tagged = tagger.tag(tokenizer.tokenize(sentence))
    print(" ".join(f"{word}/{tag}" for word, tag in tagged))
