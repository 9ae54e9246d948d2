"""The command line as a Unix tool (issue 18): ``tag`` and ``classify`` answer each line of a pipe before they
read the next, ``--tokenize`` splits raw text without a download, the output formats (text, json, tsv,
conllu) carry probabilities where the model has them, and progress bars show on a terminal only.  Pipes and
terminals need real processes; the rest runs in-process through ``structlin.cli.main``."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import select
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from structlin import Classifier, Tagger
from structlin.cli import main
from structlin.experiments import plots
from structlin.readers import read_conllu
from structlin.tokenize import tokenize
from cli_run import run

ROOT = Path(__file__).resolve().parents[1]
WORDS = {"DET": ["the", "a"], "NOUN": ["cat", "dog", "mat", "man"], "VERB": ["sat", "sees", "likes"],
         "ADP": ["on", "near"], "PUNCT": ["."]}
TOPICS = {"pets": "dog cat fur bark purr", "boats": "sail mast hull keel port"}


def _sentence(rng: random.Random) -> list[tuple[str, str]]:
    tags = ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
    return [(rng.choice(WORDS[tag]), tag) for tag in tags]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    """A folder with word<TAB>tag and labelled-document files, and a perceptron and a maxent model of each kind
    trained on them by the command line."""
    root = tmp_path_factory.mktemp("unix")
    rng = random.Random(0)
    (root / "train.tsv").write_text("".join("".join(f"{w}\t{t}\n" for w, t in _sentence(rng)) + "\n"
                                            for _ in range(60)), "utf-8")
    (root / "docs.txt").write_text("".join(f"__label__{label} {' '.join(rng.choices(words.split(), k=5))}\n"
                                           for _ in range(12) for label, words in TOPICS.items()), "utf-8")
    for kind, data, learner, name in (("tagger", "train.tsv", "averaged-perceptron", "m.model"),
                                      ("tagger", "train.tsv", "maxent", "me.model"),
                                      ("classifier", "docs.txt", "averaged-perceptron", "c.model"),
                                      ("classifier", "docs.txt", "maxent", "ce.model")):
        assert main(["train", kind, "--train", str(root / data), "--learner", learner, "--epochs", "3", "--bits",
                     "12", "--dev", "none", "--output", str(root / name), "-q"]) == 0
    return root


@pytest.fixture()
def work(models, tmp_path, monkeypatch):
    """The current folder: copies of the models and the training files."""
    for path in models.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def given_stdin(monkeypatch, text: str) -> None:
    """Standard input holding ``text`` (UTF-8), for a command run in-process."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def cli(*argv, **kwargs) -> subprocess.Popen:
    """``python -m structlin argv`` in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "structlin", *map(str, argv)], env=env, **kwargs)


def tagged(model: str, lines: list[list[str]]) -> list[list[str]]:
    return Tagger.load(model).predict(lines)


# --- streaming -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command, model, first, second", [
    ("tag", "m.model", "the cat sat on a mat .", "a dog sees the man ."),
    ("classify", "c.model", "dog cat fur", "sail mast hull"),
])
def test_each_line_of_a_pipe_is_answered_before_the_next_one_arrives(models, command, model, first, second):
    process = cli(command, models / model, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(f"{first}\n".encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "no answer to the first line within 60 s while the input stays open"
        answer = process.stdout.readline().decode()
        assert process.poll() is None  # still waiting for the second line
        process.stdin.write(f"{second}\n".encode())
        process.stdin.close()
        rest, err = process.stdout.read().decode(), process.stderr.read()
        assert process.wait(timeout=60) == 0 and err == b""
    finally:
        if process.poll() is None:
            process.kill()
    if command == "tag":
        expected = [" ".join(f"{w}/{t}" for w, t in zip(line.split(), tags)) + "\n"
                    for line, tags in zip((first, second), tagged(models / model, [first.split(), second.split()]))]
    else:
        expected = [f"{label}\n" for label in Classifier.load(models / model).classify_many([first, second])]
    assert [answer, rest] == expected


def test_a_file_is_tagged_in_batches_as_in_one_call(work, capsys):
    rng = random.Random(1)
    lines = [" ".join(w for w, _ in _sentence(rng)) for _ in range(4000)]  # several reads of 64 KiB
    text = "".join(f"{line}\n" for line in lines)
    (work / "big.txt").write_text(text, "utf-8")
    with gzip.open(work / "big.txt.gz", "wt", encoding="utf-8") as file:
        file.write(text)
    expected = "".join(" ".join(f"{w}/{t}" for w, t in zip(line.split(), tags)) + "\n"
                       for line, tags in zip(lines, tagged("m.model", [line.split() for line in lines])))
    for name in ("big.txt", "big.txt.gz"):
        assert run(capsys, "tag", "m.model", "--input", name) == (0, expected, "")
    (work / "last.txt").write_text(f"{lines[0]}\r\n{lines[1]}", "utf-8")  # the last line without its line end
    assert run(capsys, "tag", "m.model", "--input", "last.txt")[1] == "".join(expected.splitlines(True)[:2])
    # Errors past the first batch: a byte that is not UTF-8 on its line, a damaged gzip stream as such.
    (work / "bad.txt").write_bytes(text.encode() + b"caf\xe9\n")
    code, out, err = run(capsys, "tag", "m.model", "--input", "bad.txt", "--output", "o.txt")
    assert (code, out) == (1, "") and err.startswith("structlin: error: bad.txt:4001: invalid UTF-8")
    data = bytearray((work / "big.txt.gz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (work / "bad.txt.gz").write_bytes(bytes(data))
    code, out, err = run(capsys, "tag", "m.model", "--input", "bad.txt.gz", "--output", "o.txt")
    assert (code, out) == (1, "") and err.startswith("structlin: error: bad.txt.gz") and "damaged" in err
    assert len(err.splitlines()) == 1 and not (work / "o.txt").exists()


# --- --tokenize ----------------------------------------------------------------------------------------------


def test_tokenize_splits_a_final_period_without_any_download(work, capsys, monkeypatch):
    import nltk.data

    def no_data(*args, **kwargs):
        raise AssertionError("the tokenizer looked for NLTK data")

    monkeypatch.setattr(nltk.data, "find", no_data)
    monkeypatch.setattr(nltk.data, "load", no_data)
    assert tokenize("The cat sat on the mat.") == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert tokenize('Mr. Smith can\'t say "no".') == ["Mr.", "Smith", "ca", "n't", "say", '"', "no", '"', "."]
    assert tokenize("  ") == []
    for flags, words in (([], ["the", "cat", "sat", "on", "the", "mat."]),
                         (["--tokenize"], ["the", "cat", "sat", "on", "the", "mat", "."])):
        given_stdin(monkeypatch, "the cat sat on the mat.\n")
        code, out, err = run(capsys, "tag", "m.model", "--format", "json", *flags)
        assert (code, err) == (0, "") and json.loads(out)["tokens"] == words


def test_tokenize_refuses_conllu_input(work, capsys):
    code, out, err = run(capsys, "tag", "m.model", "--tokenize", "--input-format", "conllu")
    assert (code, out) == (2, "") and err.startswith("structlin: error: --tokenize splits lines of text")
    (work / "s.conllu").write_text("1\tThe\t_\tDET\t_\t_\t_\t_\t_\t_\n\n", "utf-8")  # CoNLL-U by its name
    code, out, err = run(capsys, "tag", "m.model", "--tokenize", "--input", "s.conllu")
    assert (code, out) == (2, "") and "s.conllu is CoNLL-U, which has its tokens (--input-format text" in err
    assert run(capsys, "tag", "m.model", "--tokenize", "--input", "s.conllu", "--input-format", "text")[0] == 0


# --- output formats ------------------------------------------------------------------------------------------

LINES = ["the cat sat on a mat .", "", "a dog sees the man ."]


def test_tag_formats_of_a_model_without_probabilities(work, capsys, monkeypatch):
    words = [line.split() for line in LINES]
    tags = tagged("m.model", words)

    def tag(*flags):
        given_stdin(monkeypatch, "".join(f"{line}\n" for line in LINES))
        return run(capsys, "tag", "m.model", *flags)

    assert tag() == tag("--format", "text") == (0, "".join(
        " ".join(f"{w}/{t}" for w, t in zip(ws, ts)) + "\n" for ws, ts in zip(words, tags)), "")
    code, out, err = tag("--format", "json")
    assert (code, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == [{"tokens": w, "tags": t} for w, t in zip(words, tags)]
    code, out, err = tag("--format", "tsv")
    assert (code, err) == (0, "")
    assert out == "".join("".join(f"{w}\t{t}\n" for w, t in zip(ws, ts)) + "\n" for ws, ts in zip(words, tags))
    for column in ("upos", "xpos"):  # the empty line is no sentence; sent_id is the line's number
        assert tag("--format", "conllu", "--input-format", "text", "--column", column, "--output", "o.conllu")[0] == 0
        sentences = list(read_conllu("o.conllu", column=column))
        assert [(s.sent_id, s.words, s.tags) for s in sentences] == [("1", words[0], tags[0]), ("3", words[2], tags[2])]
        other = "xpos" if column == "upos" else "upos"
        assert all(tag == "_" for s in read_conllu("o.conllu", column=other, require_tags=False) for tag in s.tags)
    code, out, err = tag("--format", "json", "--probabilities")
    assert (code, out) == (2, "") and err.splitlines() == [
        "structlin: error: --probabilities: m.model was trained by 'averaged-perceptron', whose scores are no "
        "probabilities (learners that give them: maxent, naive-bayes, bernoulli-nb)"]



def test_a_conllu_file_is_read_as_conllu_whatever_the_output_format(work, capsys):
    """``--format text`` once read a ``*.conllu`` file as text too (its comment and columns tagged as words, status
    0): a file is read as its name says, and only ``--input-format`` says otherwise."""
    words = [line.split() for line in LINES if line]
    (work / "s.conllu").write_text("".join(f"# sent_id = {k}\n" + "".join(
        f"{i}\t{w}\t_\tX\t_\t_\t_\t_\t_\t_\n" for i, w in enumerate(ws, 1)) + "\n" for k, ws in enumerate(words)))
    code, out, err = run(capsys, "tag", "m.model", "--input", "s.conllu", "--format", "text")
    assert (code, err) == (0, "")
    assert out.splitlines() == [" ".join(f"{w}/{t}" for w, t in zip(ws, ts)) for ws, ts in
                                zip(words, tagged("m.model", words))]
    code, out, err = run(capsys, "tag", "m.model", "--input", "s.conllu", "--format", "text", "--input-format", "text")
    assert code == 0 and out.split()[0].startswith("#/")  # asked for: the lines as text

def test_tag_probabilities_are_the_chosen_tags_marginals(work, capsys, monkeypatch):
    words = [line.split() for line in LINES]
    tagger = Tagger.load("me.model")
    tags = tagger.predict(words)
    marginals = [[token[tag] for token, tag in zip(sentence, chosen)]
                 for sentence, chosen in zip(tagger.tag_marginals(words), tags)]

    def tag(*flags):
        given_stdin(monkeypatch, "".join(f"{line}\n" for line in LINES))
        return run(capsys, "tag", "me.model", *flags)

    code, out, err = tag("--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, "") and [(r["tokens"], r["tags"]) for r in records] == list(zip(words, tags))
    for record, expected in zip(records, marginals):
        np.testing.assert_allclose(record["probabilities"], expected, rtol=1e-12)
        assert all(0 < p <= 1 for p in record["probabilities"])
    assert tag("--format", "json", "--probabilities")[1] == out
    code, out, _ = tag("--format", "tsv")
    rows = [line.split("\t") for line in out.split("\n\n")[0].splitlines()]
    assert code == 0 and [(w, t) for w, t, _ in rows] == list(zip(words[0], tags[0]))
    np.testing.assert_allclose([float(p) for _, _, p in rows], marginals[0], rtol=1e-12)
    code, out, _ = tag("--format", "json", "--no-probabilities")
    assert code == 0 and "probabilities" not in json.loads(out.splitlines()[0])
    code, out, err = tag("--probabilities")
    assert (code, out, err) == (2, "", "structlin: error: --probabilities applies to --format json and tsv, not text\n")


def test_conllu_input_gives_every_format(work, capsys, monkeypatch):
    rng = random.Random(2)
    sentences = [_sentence(rng) for _ in range(3)]
    conllu = "".join("".join(f"{k}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n" for k, (w, _) in enumerate(s, 1)) + "\n"
                     for s in sentences)
    (work / "in.conllu").write_text(conllu, "utf-8")
    words = [[w for w, _ in s] for s in sentences]
    expected = [{"tokens": w, "tags": t} for w, t in zip(words, tagged("m.model", words))]
    code, out, _ = run(capsys, "tag", "m.model", "--input", "in.conllu", "--format", "json")  # CoNLL-U by its name
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == expected
    given_stdin(monkeypatch, conllu)
    code, out, _ = run(capsys, "tag", "m.model", "--input-format", "conllu", "--format", "json")
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == expected
    given_stdin(monkeypatch, conllu)  # --format conllu reads CoNLL-U, as it always did
    code, out, _ = run(capsys, "tag", "m.model", "--format", "conllu")
    assert code == 0 and [line.split("\t")[3] for line in out.splitlines() if line] == [
        tag for record in expected for tag in record["tags"]]


def test_classify_formats(work, capsys, monkeypatch):
    documents = ["dog cat fur", "sail mast", ""]
    stdin = "".join(f"{d}\n" for d in documents)

    def classify(model, *flags):
        given_stdin(monkeypatch, stdin)
        return run(capsys, "classify", model, *flags)

    labels = Classifier.load("c.model").classify_many(documents)
    assert classify("c.model") == classify("c.model", "--format", "text") == (0, "".join(f"{y}\n" for y in labels), "")
    assert classify("c.model", "--format", "json")[1] == "".join(json.dumps({"label": y}) + "\n" for y in labels)
    assert classify("c.model", "--format", "tsv")[1] == "".join(f"{y}\t{d}\n" for y, d in zip(labels, documents))
    code, out, err = classify("c.model", "--format", "json", "--probabilities")
    assert (code, out) == (2, "") and "c.model was trained by 'averaged-perceptron'" in err

    classifier = Classifier.load("ce.model")
    table = classifier.predict_proba(documents)
    labels = classifier.classify_many(documents)
    code, out, err = classify("ce.model", "--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, "") and [r["label"] for r in records] == labels
    for record, row in zip(records, table):
        assert list(record["probabilities"]) == classifier.classes_.tolist()
        np.testing.assert_allclose(list(record["probabilities"].values()), row, rtol=1e-12)
    code, out, _ = classify("ce.model", "--format", "tsv")
    rows = [line.split("\t") for line in out.splitlines()]
    assert code == 0 and [(y, d) for y, _, d in rows] == list(zip(labels, documents))
    np.testing.assert_allclose([float(p) for _, p, _ in rows], table.max(axis=1), rtol=1e-12)
    folder = work / "posts"
    folder.mkdir()
    (folder / "a.txt").write_text("hull keel port", "utf-8")
    code, out, _ = run(capsys, "classify", "ce.model", "--input", folder, "--format", "json", "--no-probabilities")
    assert code == 0 and json.loads(out) == {"path": str(folder / "a.txt"), "label": "boats"}


# --- progress bars: on a terminal only -------------------------------------------------------------------------


EXPERIMENT = """name = "x"
task = "tagger"
train = "{data}"
dev = "{data}"
test = "{data}"
bits = 12
samples = 10
[grid]
features = ["pos-basic"]
learner = ["perceptron"]
epochs = 1
"""


def test_no_progress_output_when_stderr_is_not_a_terminal(work, capsys, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    (work / "text.txt").write_text("the cat sat .\na dog .\n", "utf-8")
    (work / "posts").mkdir()
    (work / "posts" / "a.txt").write_text("dog cat", "utf-8")
    (work / "x.toml").write_text(EXPERIMENT.format(data=work / "train.tsv"), "utf-8")
    for argv in (["tag", "m.model", "--input", "text.txt", "--output", "o.txt"],
                 ["classify", "c.model", "--input", "docs.txt", "--output", "o.txt"],
                 ["classify", "c.model", "--input", "posts", "--output", "o.txt"],
                 ["evaluate", "m.model", "--test", "train.tsv"],
                 ["compare", "m.model", "me.model", "--test", "train.tsv", "--samples", "10"],
                 ["cross-validate", "--train", "docs.txt", "--folds", "3", "--epochs", "1", "--bits", "12"],
                 ["experiment", "x.toml", "--output", "report"]):
        code, out, err = run(capsys, *argv)
        assert code == 0 and all(line.startswith("read ") for line in err.splitlines()), argv  # what was read only
    assert out.splitlines()[0].startswith("[1/1] perceptron")  # experiment's line per system, as before


@pytest.mark.parametrize("argv, shown", [
    (["tag", "m.model", "--input", "train.tsv", "--output", "o.txt"], "train.tsv: "),
    (["evaluate", "m.model", "--test", "train.tsv"], "scoring m.model"),
    (["tag", "m.model", "--output", "o.txt"], None),  # standard input: no bar
])
def test_a_terminal_shows_the_progress_bar(work, argv, shown):
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    terminal, stderr = pty.openpty()
    fcntl.ioctl(stderr, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm draws nothing 0 wide
    process = cli(*argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr)
    os.close(stderr)
    chunks = []

    def read_terminal():  # as the process writes, so that it never waits for a full terminal buffer
        while True:
            try:
                chunk = os.read(terminal, 1 << 16)
            except OSError:  # the terminal is gone with its last writer
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    process.communicate(b"the cat sat .\n", timeout=120)
    reader.join(timeout=60)
    os.close(terminal)
    written = b"".join(chunks)
    assert process.returncode == 0, written
    if shown is None:
        assert written == b""
    else:
        assert shown.encode() in written and b"Traceback" not in written


def test_the_repository_itself_finds_its_feature_sets_and_catalog():
    """``python -m structlin`` at the top of the repository imports the package from its folder, not the installed
    one: without an editable install's finder, the feature sets and the catalog (top-level folders an install places
    inside the package) are found there too, and a named feature set loads."""
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, '__name__', '') != "
            "'_EditableFinder']; import structlin, structlin.features, structlin.corpora; "
            "from structlin.catalog import Catalog; Catalog.load(); "
            "print(structlin.__file__, structlin.features.__file__, structlin.FeatureSet.load('pos-rich').name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(ROOT / "structlin" / "__init__.py"), str(ROOT / "features" / "__init__.py"),
                                  "pos-rich"]
