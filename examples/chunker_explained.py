"""Train a chunker on CoNLL-2000, score its chunks on the test set and see why it chunks as it does.

    python examples/chunker_explained.py

A chunker is a tagger whose tags mark phrases: B-NP begins a noun phrase, I-NP continues it, O is outside any.
Its tokens are (word, part-of-speech) pairs: the `chunk` feature set reads both columns.  The shell equivalent is
`structlin train tagger --corpus conll2000 --column chunk --features chunk`.  Under a minute.
"""

from structlin import Tagger
from structlin.catalog import load_split
from structlin.spans import extract_spans

# column="chunk": the chunk tags are what the tagger learns; the words and POS tags stay in each sentence.
train, dev, test = (load_split("conll2000", split, column="chunk") for split in ("train", "dev", "test"))
chunker = Tagger(features="chunk", epochs=5)
chunker.fit(train, dev)

# The report of BIO tags scores whole chunks: a chunk counts only when its type and both ends are right.
spans = chunker.report(test).spans
print(f"test span F1: {100 * spans.overall.f1:.2f} (precision {100 * spans.overall.precision:.2f}, "
      f"recall {100 * spans.overall.recall:.2f})")
for kind in ("NP", "VP", "PP"):
    print(f"  {kind}: F1 {100 * spans.per_type[kind].f1:.2f}")

# Chunk one test sentence and print it with its phrases in brackets.
sentence = test[0]
pos = sentence.column_names.index("pos")
tokens = [(column[0], column[pos]) for column in sentence.columns]
tags = chunker.predict([tokens])[0]
words = list(sentence.words)
for kind, start, end in reversed(extract_spans(tags)):
    words[start:end] = [f"[{kind} " + " ".join(words[start:end]) + "]"]
print("\n" + " ".join(words) + "\n")

# Why does the possessive 's begin a noun phrase of its own ([NP Rockwell International Corp.] [NP 's Tulsa unit])?
# explain() lists the features that pushed its tag and the runner-up, each contribution = value × weight, and the
# transitions beside the chosen tags: its POS tag (POS, and NNP|POS) pushes B-NP, while the transition from I-NP
# would rather go on with the phrase before it.
print(chunker.explain(tokens, index=sentence.words.index("'s"), top=8).format())
