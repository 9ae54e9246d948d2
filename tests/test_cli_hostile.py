"""The command line under hostile use (issue 17): every failure is one line on stderr with the right exit
status and no traceback, option values are refused at the door, no file is destroyed or left half-written,
and pipes behave as for Unix tools.  Commands run in-process through ``structlin.cli.main``, except for
SIGTERM, pipes and standard input, which need a real process."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import structlin.cli
from structlin import Tagger
from structlin.cli import main
from structlin.readers import Sentence
from cli_run import run

from conftest import DOCUMENTS
from test_cli import SMALL_CONLLU

ROOT = Path(__file__).resolve().parents[1]


def assert_one_line(code, err, status, *needles):
    """Exit ``status``, and one line on stderr, without a traceback, holding every needle."""
    assert code == status, err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("structlin"), err
    for needle in needles:
        assert needle in lines[0], err


def snapshot(folder: Path) -> dict:
    """Every file of ``folder`` with its bytes and permission mode: what must be intact after a failure."""
    return {p.name: (p.read_bytes(), p.stat().st_mode) for p in folder.iterdir() if p.is_file()}


def cli(*argv, **kwargs) -> subprocess.Popen:
    """``python -m structlin argv`` in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "structlin", *map(str, argv)], env=env, **kwargs)


# --- option values refused at the door: status 2, naming the option -----------------------------------------


@pytest.mark.parametrize("argv, needle", [
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--bits", "0"], "--bits"),
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--bits", "40"],
     "bits must be in 1..28 to train"),
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--bits", "many"], "--bits"),
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--seed", "-1"], "--seed"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--seed", "-1"], "--seed"),
    (["train", "classifier", "--train", "docs.txt", "--output", "-"], "argument --output/-o: a file path, not -"),
    (["compare", "m.model", "m.model", "--test", "r.conllu", "--seed", "-1"], "--seed"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--encoding", "klingon"], "'klingon'"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--encoding", "base64"], "--encoding"),
    (["classify", "c.model", "--input", "docs.txt", "--encoding", "klingon"], "--encoding"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--strip", "headers,bogus"], "'bogus'"),
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--format", "columns", "--columns",
      "word,pos,pos"], "duplicate column name(s) pos"),
    (["train", "tagger", "--train", "r.conllu", "--output", "x.model", "--format", "columns", "--columns",
      "pos,chunk"], "--columns"),
    (["tag", "m.model", "--input", "r.conllu", "--column", "bogus"], "--column"),
    # a learner's number refused by the parser, under its flag's name
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--epochs", "0"],
     "argument --epochs: must be at least 1, got 0"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--margin", "nan"], "argument --margin"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--batch-size", "0"], "--batch-size"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--dev-fraction", "1.5"],
     "argument --dev-fraction"),
    (["train", "classifier", "--train", "docs.txt", "--output", "x.model", "--seed", str(2**64)],
     "expected an integer from 0 to 4294967295"),
    (["evaluate", "c.model", "--test", "docs.txt", "--split", "bogus"], "with --test give the file itself"),
])
def test_bad_option_values_exit_2(work, capsys, argv, needle):
    before = snapshot(work)
    code, out, err = run(capsys, *argv)
    assert_one_line(code, err, 2, needle)
    assert out == "" and snapshot(work) == before


@pytest.mark.parametrize("argv, needle", [
    (["train", "tagger", "--train", "r.conllu", "--format", "columns"], "needs the names of the columns"),
    (["train", "tagger", "--train", "r.conllu", "--format", "conllu", "--columns", "word,pos"],
     "apply to the columns format; r.conllu is read as conllu"),
    (["train", "tagger", "--train", "r.conllu", "--column", "bogus"], "'bogus'; accepted: upos, xpos"),
    (["train", "tagger", "--train", "t.txt", "--format", "columns", "--columns", "word,pos,chunk", "--column", "lemma"],
     "'lemma'"),
    (["train", "tagger", "--train", "t.txt", "--format", "word-tag", "--column", "xpos"], "t.txt is read as word-tag"),
    (["train", "classifier", "--train", "docs.txt", "--granularity", "fine"], "granularity"),
    (["train", "classifier", "--train", "docs.txt", "--strip", "headers"], "strip"),
    (["evaluate", "m.model", "--test", "r.conllu", "--granularity", "fine"], "granularity"),
    (["evaluate", "c.model", "--test", "docs.txt", "--column", "upos"], "column"),
])
def test_options_that_do_not_apply_to_the_data_are_refused(work, capsys, argv, needle):
    """The library refuses them (an option that does not fit the data: status 1), rather than ignore them."""
    before = snapshot(work)
    code, out, err = run(capsys, *argv, *(["--output", "x.model"] if argv[0] == "train" else []))
    assert_one_line(code, err, 1, needle)
    assert out == "" and snapshot(work) == before


def test_a_learner_option_out_of_range_is_refused_before_the_data_is_read(work, capsys):
    code, _, err = run(capsys, "train", "tagger", "--train", "missing.conllu", "--output", "x.model", "--patience",
                       "-1")
    assert_one_line(code, err, 2, "argument --patience: must be at least 1, got -1")
    assert not (work / "x.model").exists()


@pytest.mark.parametrize("dev", ["r.conllu", "./r.conllu", "ABSOLUTE"])
def test_dev_file_that_is_the_training_file_is_refused(work, capsys, dev):
    dev = str(work / "r.conllu") if dev == "ABSOLUTE" else dev
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--dev", dev, "--output", "x.model")
    assert_one_line(code, err, 1, f"--dev {dev} is also the training file (--train r.conllu)")
    assert not (work / "x.model").exists()


# --- no file destroyed --------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, needle", [
    (["train", "tagger", "--train", "r.conllu", "--output", "r.conllu"], "--output r.conllu is also --train r.conllu"),
    (["train", "tagger", "--train", "r.conllu", "--dev", "t.txt", "--output", "./t.txt"], "is also --dev t.txt"),
    (["tune", "tagger", "--train", "r.conllu", "--grid", "epochs=1,2", "--output", "r.conllu"], "--train"),
    (["tag", "m.model", "--input", "t.txt", "--output", "m.model"], "--output m.model is also the model m.model"),
    (["tag", "m.model", "--input", "t.txt", "--output", "t.txt"], "is also --input t.txt"),
    (["classify", "c.model", "--input", "docs.txt", "--output", "docs.txt"], "is also --input docs.txt"),
])
def test_output_that_is_an_input_is_refused(work, capsys, argv, needle):
    before = snapshot(work)
    code, out, err = run(capsys, *argv)
    assert_one_line(code, err, 2, needle, "would destroy it")
    assert out == "" and snapshot(work) == before


def test_output_through_a_link_to_an_input_is_refused(work, capsys):
    (work / "link.model").symlink_to(work / "m.model")
    before = snapshot(work)
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "link.model")
    assert_one_line(code, err, 2, "--output link.model is also the model m.model")
    assert snapshot(work) == before


def test_read_only_output_is_refused_before_training(work, capsys):
    target = work / "old.model"
    target.write_bytes(b"keep me")
    target.chmod(0o444)
    before = snapshot(work)
    code, _, err = run(capsys, "train", "tagger", "--train", "missing.conllu", "--output", target.name)
    assert_one_line(code, err, 1, "old.model: is read-only; not replaced")
    assert snapshot(work) == before


@pytest.mark.parametrize("output, needle", [
    ("nowhere/o.txt", "nowhere/o.txt: folder nowhere does not exist"),
    (".", ".: is a folder"),
    ("t.txt/o.txt", "t.txt/o.txt: t.txt is not a folder"),
])
def test_output_that_cannot_be_written_names_the_path_given(work, capsys, output, needle):
    before = snapshot(work)
    code, out, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", output)
    assert_one_line(code, err, 1, needle)
    assert ".tmp" not in err and out == "" and snapshot(work) == before


def test_read_only_folder_names_the_path_given(work, capsys, monkeypatch):
    folder = work / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes anyway: the folder's refusal as the system would give it
        def refuse(*args, dir=None, prefix="", suffix="", **kwargs):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.path.join(dir, f"{prefix}x{suffix}"))

        monkeypatch.setattr("structlin.outputs.tempfile.mkstemp", refuse)
        needle = "locked/o.txt: cannot write: Permission denied"
    else:
        needle = "locked/o.txt: folder locked is not writable"
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "locked/o.txt")
    folder.chmod(0o755)
    assert_one_line(code, err, 1, needle)
    assert ".tmp" not in err and list(folder.iterdir()) == []


def test_full_disk_names_the_path_and_keeps_the_old_file(work, capsys, monkeypatch):
    (work / "o.txt").write_text("old output\n", "utf-8")
    before = snapshot(work)

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("structlin.outputs.os.fsync", full)
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "o.txt")
    assert_one_line(code, err, 1, "o.txt: cannot write: No space left on device")
    assert snapshot(work) == before  # no temporary file either
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--output", "m.model", "-q")
    assert_one_line(code, err, 1, "m.model: cannot write: No space left on device")
    assert snapshot(work) == before


def test_outputs_replace_a_file_keeping_its_mode(work, capsys):
    for name, argv in (("o.txt", ["tag", "m.model", "--input", "t.txt"]),
                       ("n.model", ["train", "tagger", "--train", "r.conllu", "-q", "--bits", "12"])):
        target = work / name
        target.write_text("old\n", "utf-8")
        target.chmod(0o640)
        code, _, err = run(capsys, *argv, "--output", name)
        assert (code, err) == (0, "")
        assert target.read_bytes() != b"old\n" and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []


def test_output_through_a_link_replaces_its_target(work, capsys):
    (work / "real.txt").write_text("old\n", "utf-8")
    (work / "link.txt").symlink_to("real.txt")
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "link.txt")
    assert (code, err) == (0, "") and (work / "link.txt").is_symlink()
    assert (work / "real.txt").read_text("utf-8").count("/") == 6


def test_an_output_named_gz_is_gzipped_and_reads_back(work, capsys):
    """``tag`` and ``classify`` write an ``--output`` whose name ends in .gz gzipped (the readers read .gz files so):
    the same text as the plain output, and a CoNLL-U output tags again from it."""
    import gzip

    assert run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "o.txt") == (0, "", "")
    assert run(capsys, "tag", "m.model", "--input", "t.txt", "--output", "o.txt.gz") == (0, "", "")
    assert gzip.decompress((work / "o.txt.gz").read_bytes()) == (work / "o.txt").read_bytes()
    assert run(capsys, "tag", "m.model", "--input", "t.txt", "--input-format", "text", "--format", "conllu", "--output",
               "o.conllu.gz")[0] == 0
    code, out, _ = run(capsys, "tag", "m.model", "--input", "o.conllu.gz")
    assert code == 0 and out == gzip.decompress((work / "o.conllu.gz").read_bytes()).decode("utf-8")


def test_output_into_a_named_pipe_is_written_in_place(work, capsys):
    """A pipe (or a device such as /dev/null) cannot be replaced by a rename: it is written as it is."""
    fifo = work / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = run(capsys, "tag", "m.model", "--input", "t.txt", "--output", fifo)
    reader.join(timeout=60)
    assert (code, err) == (0, "") and stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].count(b"\n") == 2


def test_failed_tag_leaves_no_output(work, capsys):
    bad = work / "bad.conllu"
    bad.write_text(SMALL_CONLLU.replace("2\tdog\tdog", "2\tdog"), "utf-8")
    (work / "old.conllu").write_text("old output\n", "utf-8")
    before = snapshot(work)
    for output in ("new.conllu", "old.conllu"):
        code, out, err = run(capsys, "tag", "m.model", "--input", bad, "--output", output)
        assert_one_line(code, err, 1, "bad.conllu:4")
        assert snapshot(work) == before


def test_tag_with_whitespace_gives_one_line_and_no_output(work, capsys):
    """A model whose tags hold a space (a reader once let one through) cannot write tagged output."""
    Tagger("pos-basic", bits=10, epochs=1).fit([Sentence(words=["The", "dog"], tags=["DT", "NN X"])]).save("sp.model")
    before = snapshot(work)
    for fmt, output in (("conllu", "o.conllu"), ("text", "o.txt")):
        code, out, err = run(capsys, "tag", "sp.model", "--input", "r.conllu", "--format", fmt, "--output", output)
        assert_one_line(code, err, 1, "sp.model: the model predicts the tag 'NN X'")
        assert out == "" and snapshot(work) == before


def test_sigterm_removes_the_temporary_file_and_keeps_the_old_output(work):
    (work / "o.txt").write_text("old output\n", "utf-8")
    before = snapshot(work)
    process = cli("tag", "m.model", "--output", "o.txt", stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work)
    process.stdin.write(b"The dog barks .\n")
    process.stdin.flush()
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".o.txt.") for p in work.iterdir()):  # it waits for the rest of its input
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err
    assert snapshot(work) == before


# --- pipes and standard input ---------------------------------------------------------------------------------


def test_output_into_a_closed_pipe_exits_0_silently(work):
    (work / "big.txt").write_text("The dog barks .\n" * 30_000, "utf-8")
    process = cli("tag", "m.model", "--input", "big.txt", stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work)
    first = process.stdout.readline()
    process.stdout.close()  # as `| head -1` does
    err = process.stderr.read()
    assert process.wait(timeout=120) == 0 and err == b""
    assert first.startswith(b"The/") and first.count(b"/") == 4


@pytest.mark.parametrize("command, model", [("tag", "m.model"), ("classify", "c.model")])
def test_standard_input_is_decoded_strictly(work, command, model):
    process = cli(command, model, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work)
    out, err = process.communicate(b"The dog barks .\n\xff bad\n", timeout=120)
    assert process.returncode == 1 and out == b"", err
    assert err.decode().splitlines() == [err.decode().strip()] and "<stdin>:2:" in err.decode()
    assert "invalid" in err.decode().lower()


def test_classify_names_the_undecodable_file(work, capsys):
    (work / "bad.txt").write_bytes(b"good fun\nbad caf\xe9\n")
    folder = work / "folder"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"caf\xe9")
    for source, needle in (("bad.txt", "bad.txt:2"), ("folder", f"{Path('folder', 'a.txt')}:1")):
        code, out, err = run(capsys, "classify", "c.model", "--input", source, "--output", "o.txt")
        assert_one_line(code, err, 1, needle)
        assert out == "" and not (work / "o.txt").exists()


# --- evaluate on data that is not what the model labels ------------------------------------------------------


def test_evaluate_a_tagger_on_documents_is_an_error(work, capsys):
    """A document TSV read as word<TAB>tag lines: refused by the reader (texts hold spaces) or, when every text
    is one word, because none of its "tags" is one the tagger knows; never a silent 0.00%."""
    (work / "docs.tsv").write_text("pos\tgood film\nneg\tbad plot here\n", "utf-8")
    (work / "words.tsv").write_text("pos\tgood\nneg\tbad\n", "utf-8")
    for name, needle in (("docs.tsv", "docs.tsv:1"), ("words.tsv", "words.tsv: none of its 2 tags ('bad', 'good')")):
        code, out, err = run(capsys, "evaluate", "m.model", "--test", name)
        assert_one_line(code, err, 1, needle)
        assert out == ""
    code, _, err = run(capsys, "compare", "m.model", "m.model", "--test", "words.tsv")
    assert_one_line(code, err, 1, "does not look like sentences tagged as the model's training data")


def test_evaluate_a_classifier_on_labels_it_never_saw_is_an_error(work, capsys):
    """Test documents none of whose labels the classifier predicts (other names for the classes, a file without a
    label column): one line, status 1, never a silent 0.00%."""
    (work / "other.txt").write_text(DOCUMENTS.replace("__label__pos", "__label__good").replace("__label__neg",
                                                                                              "__label__bad"), "utf-8")
    (work / "unlabelled.tsv").write_text("index\tsentence\n0\tgood great fun\n1\tbad awful plot\n", "utf-8")
    for name, needle in (("other.txt", "other.txt: none of its 2 labels ('bad', 'good') is one the model predicts"),
                         ("unlabelled.tsv", "unlabelled.tsv: none of its 3 labels ('0', '1', 'index')")):
        code, out, err = run(capsys, "evaluate", "c.model", "--test", name)
        read, error = err.splitlines()  # what was read, then why it cannot be scored
        assert read.startswith(f"read 3 documents (3 labels) from {name}" if name.endswith("tsv") else "read 6")
        assert_one_line(code, error, 1, needle, "does not look like documents labelled as the model's training data")
        assert out == ""
    code, _, err = run(capsys, "compare", "c.model", "c.model", "--test", "other.txt")
    assert_one_line(code, err.splitlines()[-1], 1, "none of its 2 labels ('bad', 'good') is one c.model predicts")


def test_gold_labels_a_model_never_saw_are_a_warning_and_one_model_knowing_none_is_an_error(work, capsys):
    """evaluate and compare said nothing of gold labels the model never saw (they count as its errors), and compare
    gave p-values against a model that knows none of the test labels (0.00%): a warning, and the error evaluate
    gives."""
    (work / "some.txt").write_text(DOCUMENTS.replace("__label__pos", "__label__good", 1), "utf-8")
    for command in (["evaluate", "c.model"], ["compare", "c.model", "c.model"]):
        code, out, err = run(capsys, *command, "--test", "some.txt")
        assert code == 0 and out
        assert [line for line in err.splitlines() if "warning" in line] == [
            "structlin: warning: some.txt: 1 of 6 documents have labels " + name + " never saw in training ('good'); "
            "they count as its errors" for name in (["the model"] if command[0] == "evaluate" else ["c.model"])]
    (work / "other.txt").write_text(DOCUMENTS.replace("__label__pos", "__label__good").replace("__label__neg",
                                                                                              "__label__bad"), "utf-8")
    assert main(["train", "classifier", "--train", "other.txt", "--output", "o.model", "--bits", "12", "-q"]) == 0
    code, _, err = run(capsys, "compare", "c.model", "o.model", "--test", "docs.txt")
    assert_one_line(code, err.splitlines()[-1], 1, "none of its 2 labels ('neg', 'pos') is one o.model predicts")


@pytest.mark.parametrize("kind", ['"x"', "null", "-1", "[]", "{}"])
def test_a_model_file_of_an_unknown_kind_is_one_line(work, capsys, kind):
    """A damaged (or foreign) metadata ``kind`` is named, not a KeyError."""
    import json
    import zipfile
    with zipfile.ZipFile(work / "c.model") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    metadata = json.loads(members["metadata.json"])
    metadata["kind"] = json.loads(kind)
    members["metadata.json"] = json.dumps(metadata).encode()
    with zipfile.ZipFile(work / "odd.model", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    for argv in (["evaluate", "odd.model", "--test", "docs.txt"], ["compare", "odd.model", "c.model", "--test",
                                                                    "docs.txt"], ["explain", "odd.model"]):
        code, _, err = run(capsys, *argv)
        assert_one_line(code, err, 1, "odd.model: the model file records the kind", "expected one of tagger, classifier")


# --- warnings: one line each, without structlin's source -------------------------------------------------------


def test_warnings_are_one_line_without_the_source_that_issued_them(work, capsys):
    (work / "dev.txt").write_text("__label__pos good fun\n__label__meh so so\n", "utf-8")
    for label, text in (("pos", "good great fun"), ("neg", "bad awful plot"), ("pos", "fun"), ("neg", "bad")):
        (work / "tree" / label).mkdir(parents=True, exist_ok=True)
        (work / "tree" / label / f"{len(text)}.txt").write_text(text, "utf-8")
    (work / "tree" / "neutral").mkdir()
    shown = warnings.showwarning
    for argv, needle in (
        (["--train", "docs.txt", "--dev", "dev.txt"],
         "structlin: warning: dev data: 1 of 2 documents have labels never seen in training ('meh'); they count as errors"),
        (["--train", "tree"], f"structlin: warning: {Path('tree', 'neutral')}: label folder 'neutral' holds no files, "
                              "so no document has that label"),
    ):
        code, out, err = run(capsys, "train", "classifier", *argv, "--output", "x.model", "-q", "--bits", "12")
        assert (code, out, err) == (0, "", needle + "\n")
    assert warnings.showwarning is shown  # restored after the command


def test_a_feature_set_with_a_parameter_of_the_wrong_type_is_one_line(work, capsys):
    (work / "f.toml").write_text('name = "f"\n[[template]]\nname = "suffix"\nlengths = "abc"\n', "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, "f.toml: template 'suffix' (#1): lengths must be a non-empty list of distinct "
                                  "integers in 1..100, got 'abc'")
    assert not (work / "x.model").exists()


# --- the boundary: exceptions that are not the library's -----------------------------------------------------


def _raising(error: BaseException):
    def command(args):
        raise error
    return command


@pytest.mark.parametrize("error, status, needle", [
    (LookupError("unknown encoding: klingon"), 1, "structlin: error: unknown encoding: klingon"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), 1, "structlin: error: 'utf-8' codec"),
    (MemoryError(), 1, "structlin: error: out of memory"),
    (ModuleNotFoundError("No module named 'nosuch'", name="nosuch"), 1, "cannot import module 'nosuch'"),
    (PermissionError(errno.EACCES, "Permission denied", "x.conllu"), 1, "structlin: error: x.conllu: Permission"),
    (RuntimeError("a bug\nin two lines"), 70, "structlin: internal error: RuntimeError: a bug in two lines (please "
     "report; rerun with STRUCTLIN_DEBUG=1 for the traceback)"),
    (KeyError("k"), 70, "internal error: KeyError"),
])
def test_every_exception_is_one_line(work, capsys, monkeypatch, error, status, needle):
    monkeypatch.delenv("STRUCTLIN_DEBUG", raising=False)
    monkeypatch.setitem(structlin.cli.COMMANDS, "corpus", _raising(error))
    code, out, err = run(capsys, "corpus", "stats", "r.conllu")
    assert_one_line(code, err, status, needle)


def test_debug_shows_the_traceback_of_a_bug(work, capsys, monkeypatch):
    monkeypatch.setitem(structlin.cli.COMMANDS, "corpus", _raising(RuntimeError("a bug")))
    monkeypatch.setenv("STRUCTLIN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        main(["corpus", "stats", "r.conllu"])


def test_feature_set_importing_a_missing_module(work, capsys):
    (work / "f.toml").write_text('name = "f"\nimports = ["no_such_module_17"]\n[[template]]\nname = "word"\n', "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, "no_such_module_17")
    assert not (work / "x.model").exists()


@pytest.mark.parametrize("source, needle", [
    ('raise RuntimeError("boom")\n', "(RuntimeError: boom)"),
    ("def broken(:\n", "(SyntaxError: "),
    ("import no_such_module_18\n", "(ModuleNotFoundError: No module named 'no_such_module_18')"),
])
def test_feature_set_importing_a_module_that_fails(work, capsys, monkeypatch, source, needle):
    """Whatever the import of a feature set's module raises, the set cannot be built: one line naming the TOML
    file, the module and what its import raised."""
    module = f"failing_module_{abs(hash(source))}"
    (work / f"{module}.py").write_text(source, "utf-8")
    monkeypatch.syspath_prepend(str(work))
    (work / "f.toml").write_text(f'name = "f"\nimports = ["{module}"]\n[[template]]\nname = "word"\n', "utf-8")
    code, _, err = run(capsys, "train", "tagger", "--train", "r.conllu", "--features", "f.toml", "--output", "x.model")
    assert_one_line(code, err, 1, f"f.toml: imports: module '{module}' cannot be imported", needle)
    assert not (work / "x.model").exists()


@pytest.mark.parametrize("text, needle", [
    ("[" * 100_000 + "]" * 100_000 + "\n", "deep.json:1: JSON nested too deeply to read (expected a JSON array of "
                                            "objects)"),
    ('{"label": "pos", "text": "good"}\n{"label": "pos", "text": "x", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
     "deep.json:2: JSON nested too deeply to read (expected one JSON object per line)"),
    ('{"label": "pos", "text": "good"}\n{"label": "pos", "label": "neg", "text": "bad"}\n',
     "deep.json:2: an object gives the key 'label' twice (expected each key once)"),
    ('{"label": "pos", "text": "good"}\n{"label": ' + "9" * 5000 + ', "text": "bad"}\n',
     "deep.json:2: a JSON value that cannot be read: Exceeds the limit (4300 digits) for integer string conversion"),
    ('[{"label": "pos", "text": "good"},\n {"label": "neg", "text": ' + "9" * 5000 + '}]\n',
     "deep.json:2: a JSON value that cannot be read: Exceeds the limit"),
    ('{"label": "pos", "text": "good"}\n{"label": "\\ud800", "text": "bad"}\n',
     "deep.json:2: label '\\ud800' under 'label' holds a lone surrogate"),
])
def test_json_documents_that_cannot_be_read_as_one_value_each(work, capsys, text, needle):
    """JSON nested deeper than Python's recursion, an object giving a key twice (``json`` would keep the last
    value, a label changed without a word), a number Python will not make, a label no model file can hold: one
    located line."""
    (work / "deep.json").write_text(text, "utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", "deep.json", "--output", "x.model")
    assert_one_line(code, err, 1, needle)


def test_a_closed_standard_input_or_output_is_one_line(work, capsys, monkeypatch):
    """A shell's ``<&-`` / ``>&-`` leave Python None for the stream: the command that needs it says so."""
    monkeypatch.setattr(sys, "stdin", None)
    code, _, err = run(capsys, "classify", "c.model")
    assert_one_line(code, err, 2, "standard input is closed: give the input as a file (--input)")
    assert sys.stdin is None
    monkeypatch.undo()
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "stdout", None)
    code, _, err = run(capsys, "classify", "c.model", "--input", "docs.txt")
    assert_one_line(code, err, 1, "standard output: closed, and the command writes to it: give --output")
    assert sys.stdout is None
    code, _, err = run(capsys, "classify", "c.model", "--input", "docs.txt", "--output", "labels.txt")
    assert code == 0 and err == "" and (work / "labels.txt").read_text("utf-8").count("\n") == 6


def test_a_closed_standard_error_drops_the_messages_and_keeps_the_status(work, capsys, monkeypatch):
    """``2>&-``: progress and errors go nowhere (they went to standard output, among the results, or ended the
    command on tqdm's write); the results and the exit status are as with it open."""
    monkeypatch.setattr(sys, "stderr", None)
    code, out, _ = run(capsys, "classify", "c.model", "--input", "docs.txt")
    assert code == 0 and out.count("\n") == 6 and "structlin" not in out
    code, out, _ = run(capsys, "train", "classifier", "--train", "docs.txt", "--epochs", "2", "--output", "e.model")
    assert code == 0 and (work / "e.model").is_file() and "trained on" in out
    code, out, _ = run(capsys, "classify", "missing.model", "--input", "docs.txt")
    assert code == 1 and out == ""
    assert sys.stderr is None


class _FullDevice(io.StringIO):
    """Standard output on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_write_error_on_standard_output_names_it(work, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _FullDevice())
    code = main(["classify", "c.model", "--input", "docs.txt"])
    assert_one_line(code, capsys.readouterr().err, 1, f"standard output: {os.strerror(errno.ENOSPC)}")


def test_evaluate_reads_a_first_row_holding_a_model_label_as_data(work, capsys):
    """A test file whose first row looks like a header by use (its label never recurs below) but holds a label of
    the model is data: no test document is lost."""
    (work / "t3.tsv").write_text("pos\tgreat fun\nneg\tbad plot\nneg\tawful\n", "utf-8")
    code, out, err = run(capsys, "evaluate", "c.model", "--test", "t3.tsv", "--json")
    assert code == 0 and json.loads(out)["n_instances"] == 3, err


def test_an_empty_output_is_refused_before_any_work(work, capsys):
    code, _, err = run(capsys, "train", "tagger", "--train", "missing.conllu", "--output", "")
    assert_one_line(code, err, 2, "--output is empty: give the path of the file to write")


def test_compare_names_the_columns_two_taggers_were_trained_on(work, capsys):
    """One model of CoNLL-U's UPOS, one of a word/tag file (no column): the message says so, not 'tags None'."""
    (work / "wt.tsv").write_text("The\tDET\ndog\tNOUN\nbarks\tVERB\n\nCats\tNOUN\nsleep\tVERB\n\n", "utf-8")
    assert run(capsys, "train", "tagger", "--train", "wt.tsv", "--epochs", "1", "--output", "w.model", "-q")[0] == 0
    code, _, err = run(capsys, "compare", "m.model", "w.model", "--test", "r.conllu")
    assert_one_line(code, err, 1, "m.model tags upos, w.model names no tag column: choose the gold column with "
                                  "--column")


def test_classify_a_folder_skips_its_hidden_entries_and_says_so(work, capsys):
    """As training does: Finder's ``.DS_Store`` and a ``.git`` folder are not documents to classify."""
    folder = work / "posts"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", "utf-8")
    (folder / ".DS_Store").write_bytes(b"\0\1\2")
    (folder / "a.txt").write_text("good fun\n", "utf-8")
    code, out, err = run(capsys, "classify", "c.model", "--input", "posts")
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["posts/a.txt"]
    assert err.strip() == ("structlin: warning: posts: 2 hidden entries skipped, not read as documents "
                           "(posts/.DS_Store, posts/.git)")


@pytest.mark.parametrize("entry, needle", [
    (lambda folder: (folder / "broken").symlink_to("/nonexistent"), "broken: a symbolic link to /nonexistent"),
    (lambda folder: os.mkfifo(folder / "fifo"), "fifo: neither a regular file nor a folder"),
    (None, "posts: no files to classify (an empty folder)"),
])
def test_classify_a_folder_refuses_what_training_refuses(work, capsys, entry, needle):
    """A folder's link or special file is an error, as in a training folder tree, not skipped; an empty folder
    has nothing to classify."""
    folder = work / "posts"
    (folder / "sub").mkdir(parents=True)
    if entry is not None:
        (folder / "sub" / "a.txt").write_text("good fun\n", "utf-8")
        entry(folder / "sub")
    code, out, err = run(capsys, "classify", "c.model", "--input", "posts")
    assert_one_line(code, err, 1, needle)
    assert out == ""


def test_tune_refuses_a_grid_of_seeds(work, capsys):
    code, _, err = run(capsys, "tune", "classifier", "--train", "docs.txt", "--grid", "seed=1,2")
    assert_one_line(code, err, 2, "--grid: seed is not a setting to choose on dev")


@pytest.mark.parametrize("options", [["--solver", "pegasos", "--C", "1e200"], ["--C", "1e300"],
                                     ["--relative-C", "1e300"]])
def test_an_svm_C_too_large_for_floating_point_is_refused(work, capsys, options):
    """C so large that the solvers' squares overflow (Pegasos shrank the weights to 0, BCFW's overflowed to a
    model of zeros): one line naming C, instead of a bug or a degenerate model.  At most 1e12, C·n·ρ stays below
    1e103 for any data (float32 values, a billion instances of 1e5 features), whose squares float64 holds."""
    code, _, err = run(capsys, "train", "classifier", "--train", "docs.txt", "--learner", "svm", *options,
                       "--output", "x.model", "--quiet")
    name = options[-2].lstrip("-")
    assert_one_line(code, err, 2, f"argument --{name}: must be positive and at most 1e+12 in size")
    assert not (work / "x.model").exists()
