"""The scripts of examples/ run as a user runs them (a fresh interpreter each, from another folder) and print what
they promise.  Each needs its corpus at hand (``$STRUCTLIN_DATA``, ``$NLTK_DATA`` or the cache: nothing is
downloaded here) and is skipped without it; each takes well under a minute on two cores."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from structlin.catalog import Catalog, resolve
from structlin.errors import CorpusNotFoundError

pytestmark = pytest.mark.corpus

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ",
        "SYM", "VERB", "X"}


def need(corpus: str, *splits: str) -> None:
    """Skip unless every split of ``corpus`` is found locally."""
    entry = Catalog.load()[corpus]
    for split in splits:
        try:
            resolve(entry, split, download=False)
        except CorpusNotFoundError as err:
            pytest.skip(f"the example needs {corpus}: {err}")


def run(script: str, *args, cwd: Path) -> str:
    """The standard output of ``examples/script`` run with ``args``, which must succeed within the time limit."""
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


def number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, f"{pattern!r} not in the output:\n{text}"
    return float(found[1])


def test_tag_your_text_trains_saves_and_loads(tmp_path):
    need("ud-english-ewt", "train", "dev", "test")
    text = "The dog barks. I can't wait!"
    trained = run("tag_your_text.py", "--model", "ewt.model", text, cwd=tmp_path)
    assert number(r"test accuracy: ([\d.]+)%", trained) > 93
    tagged = trained.splitlines()[-2:]   # a sentence per line, tokenized as the treebank is: word/TAG
    pairs = [[token.rsplit("/", 1) for token in line.split()] for line in tagged]
    assert [[word for word, _ in sentence] for sentence in pairs] == [["The", "dog", "barks", "."],
                                                                     ["I", "ca", "n't", "wait", "!"]]
    assert {tag for sentence in pairs for _, tag in sentence} <= UPOS
    assert pairs[0][0] == ["The", "DET"] and pairs[1][-1] == ["!", "PUNCT"]
    # the second run loads the saved model: no training, the same tags
    assert run("tag_your_text.py", "--model", "ewt.model", text, cwd=tmp_path).splitlines() == tagged


def test_classify_csv_with_gridsearch(tmp_path):
    pytest.importorskip("sklearn", reason="the example uses scikit-learn's GridSearchCV")
    need("movie_reviews", "all")
    out = run("classify_csv_with_gridsearch.py", cwd=tmp_path)
    assert "2000 documents, labels ['neg', 'pos']" in out
    assert len(re.findall(r"cross-validated accuracy", out)) == 4   # every candidate of the grid
    assert re.search(r"best: \{'epochs': \d+, 'relative_margin': \d+\}", out)
    assert number(r"held-out accuracy: ([\d.]+)%", out) > 80
    assert list(tmp_path.iterdir()) == []   # the CSV was a temporary file


def test_chunker_explained(tmp_path):
    need("conll2000", "train", "dev", "test")
    out = run("chunker_explained.py", cwd=tmp_path)
    assert number(r"test span F1: ([\d.]+)", out) > 92
    assert number(r"NP: F1 ([\d.]+)", out) > 92
    assert "[NP Rockwell International Corp.]" in out   # the first test sentence, chunked
    # why 's begins a noun phrase: its explanation names its POS features, and adds up to the margin it states
    explained = out[out.index("token 3 \"'s/POS\": B-NP (1st), runner-up I-NP (2nd)") :]
    assert "pos:word@0=POS" in explained and "pos:ngram(of=word,span=[-1, 0])=NNP|POS" in explained
    assert "transition from I-NP (token 2)" in explained
    assert number(r"margin \+([\d.]+)", explained) == number(r"\+([\d.]+)  score", explained) > 0
