"""Tests of the ``structlin`` command line, in-process through ``structlin.cli.main`` (plus one run of the
installed console script): train / evaluate / tag / corpus stats on small files cut from UD English EWT,
and one-line errors without tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from structlin import Tagger
from structlin.cli import main
from structlin.cli.commands import _choices
from structlin.readers import read_conllu, read_file
from structlin.sources import hold_out
from cli_run import run

SMALL_CONLLU = """# sent_id = s1
# text = The dog barks.
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = s2
1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_

"""


def cut_conllu(source: Path, target: Path, start: int, count: int) -> None:
    """Copy sentence blocks start .. start + count of a CoNLL-U file, byte for byte."""
    blocks = source.read_text("utf-8").split("\n\n")
    target.write_text("\n\n".join(blocks[start : start + count]) + "\n\n", "utf-8")


@pytest.fixture(scope="module")
def files(request, tmp_path_factory):
    """Train (800 sentences) and dev (200) files cut from EWT, and a model trained on them by the CLI."""
    ewt_dir = request.getfixturevalue("ewt_dir")
    root = tmp_path_factory.mktemp("cli")
    train, dev = root / "train.conllu", root / "dev.conllu"
    cut_conllu(ewt_dir / "en_ewt-ud-train.conllu", train, 0, 800)
    cut_conllu(ewt_dir / "en_ewt-ud-dev.conllu", dev, 0, 200)
    model = root / "ewt.model"
    code = main(["train", "tagger", "--train", str(train), "--dev", str(dev), "--epochs", "2", "--output", str(model),
                 "--features", "pos-basic"])
    assert code == 0 and model.is_file()
    return root, train, dev, model


def assert_one_line_error(code, out, err, *needles):
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("structlin: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert str(needle) in lines[0]


# --- train, evaluate, tag, stats -------------------------------------------------------------------------


def test_the_choices_say_why_epochs_other_than_the_best_were_kept():
    """Held-out epochs 2 (0.90) and 3 (0.88): keeping 3, the line says it is the latest within a standard error of the
    best (latest_within_noise); keeping 2, the best, it says nothing more."""
    candidates = [{"epochs": k, "dev_accuracy": score} for k, score in ((1, 0.8), (2, 0.9), (3, 0.88))]
    model = SimpleNamespace(learner=SimpleNamespace(chosen_={"margin": 2.0, "epochs": 3}, candidates_=candidates))
    assert _choices(model) == ("chosen from the data: margin 2, epochs 3 (epochs: the latest within one standard error "
                               "of the best held-out score) (candidates: epochs 1: dev 80.00%; epochs 2: dev 90.00%; "
                               "epochs 3: dev 88.00%)")
    model.learner.chosen_["epochs"] = 2
    assert _choices(model).startswith("chosen from the data: margin 2, epochs 2 (candidates: ")
    model.learner.chosen_["epochs"] = [3]  # a model file's metadata, edited: shown as it is, no reason given
    assert _choices(model).startswith("chosen from the data: margin 2, epochs [3] (candidates: ")


@pytest.mark.corpus
def test_train_prints_summary(files, capsys, tmp_path):
    _, train, dev, _ = files
    model = tmp_path / "m.model"
    code, out, err = run(capsys, "train", "tagger", "--train", train, "--dev", dev, "--epochs", "2", "--output",
                         model, "--features", "pos-basic", "--bits", "18")
    assert code == 0 and model.is_file() and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("epoch   1  mistakes") and "dev accuracy" in lines[0]
    assert lines[1].startswith("epoch   2")
    tagger = Tagger.load(model)
    assert lines[2] == f"chosen from the data: margin {tagger.learner.chosen_['margin']:.4g}"
    dev_tokens = sum(len(sentence.words) for sentence in read_file(dev))
    assert lines[3].startswith("trained on 800 sentences (") and f", dev 200 sentences ({dev_tokens:,} tokens);" in lines[3]
    assert lines[3].endswith(f"model written to {model}")
    tagger = Tagger.load(model)
    assert tagger.hasher.bits == 18 and len(tagger.history_) == 2
    code, out, _ = run(capsys, "train", "tagger", "--train", train, "--epochs", "1", "--output", model, "--features",
                       "pos-basic", "--bits", "12")
    assert code == 0 and out.splitlines()[-1].endswith(f"model written to {model} (replacing the file that was there)")
    quiet = tmp_path / "q.model"
    code, out, _ = run(capsys, "train", "tagger", "--train", train, "--epochs", "1", "--output", quiet, "--quiet",
                       "--features", "pos-basic", "--decoder", "greedy", "--learner", "perceptron")
    assert code == 0 and out == ""
    assert Tagger.load(quiet).decoder.name == "greedy"


@pytest.mark.corpus
def test_evaluate_json(files, capsys):
    _, _, dev, model = files
    code, out, err = run(capsys, "evaluate", model, "--test", dev, "--json")
    assert code == 0 and err == ""
    assert len(out.strip().splitlines()) == 1
    report = json.loads(out)
    sentences = list(read_conllu(dev))
    assert report["n_tokens"] == sum(len(s.words) for s in sentences)
    # Sentence, known-word and unknown-word accuracy and per-tag P/R/F1, counted here from the model's tags.
    tagger = Tagger.load(model)
    predicted = tagger.predict([list(s.words) for s in sentences])
    tokens = [(w, g, p) for s, tags in zip(sentences, predicted) for w, g, p in zip(s.words, s.tags, tags)]
    assert report["sentence_accuracy"] == pytest.approx(
        np.mean([list(s.tags) == list(tags) for s, tags in zip(sentences, predicted)]))
    known = [g == p for w, g, p in tokens if w in tagger.known_words_]
    unknown = [g == p for w, g, p in tokens if w not in tagger.known_words_]
    assert known and unknown and report["n_unknown"] == len(unknown)
    assert report["known_accuracy"] == pytest.approx(np.mean(known))
    assert report["unknown_accuracy"] == pytest.approx(np.mean(unknown))
    assert report["unknown_accuracy"] < report["known_accuracy"]
    tags = sorted({g for _, g, _ in tokens} | {p for _, _, p in tokens})
    assert sorted(report["per_tag"]) == tags
    for tag in tags:
        tp = sum(g == tag == p for _, g, p in tokens)
        support, guessed = sum(g == tag for _, g, _ in tokens), sum(p == tag for _, _, p in tokens)
        precision, recall = (tp / guessed if guessed else 0.0), (tp / support if support else 0.0)
        f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
        assert report["per_tag"][tag] == {"precision": pytest.approx(precision), "recall": pytest.approx(recall),
                                          "f1": pytest.approx(f1), "support": support}, tag
    # The same numbers as the library computes, and a sensible accuracy for 800 sentences.
    assert report["accuracy"] == pytest.approx(Tagger.load(model).accuracy(sentences))
    assert report["accuracy"] > 0.8
    code, text, _ = run(capsys, "evaluate", model, "--test", dev)
    assert code == 0 and "Token accuracy:" in text and "Per tag" in text


@pytest.mark.corpus
def test_tag_conllu_changes_only_upos(files, capsys, tmp_path):
    _, _, dev, model = files
    output = tmp_path / "out.conllu"
    code, out, err = run(capsys, "tag", model, "--input", dev, "--format", "conllu", "--output", output)
    assert code == 0 and out == "" and err == ""
    before = dev.read_text("utf-8").split("\n")
    after = output.read_text("utf-8").split("\n")
    assert len(after) == len(before)
    ranges = changed = 0
    for old, new in zip(before, after):
        if old.startswith("#") or not old:
            assert new == old
            continue
        old_fields, new_fields = old.split("\t"), new.split("\t")
        assert len(new_fields) == 10
        if not old_fields[0].isdigit():  # multiword ranges and empty nodes stay as they are
            ranges += 1
            assert new == old
            continue
        assert new_fields[:3] == old_fields[:3] and new_fields[4:] == old_fields[4:]
        changed += new_fields[3] != old_fields[3]
    assert ranges > 0  # the cut holds multiword tokens
    # The new column holds the model's predictions.
    tagger = Tagger.load(model)
    sentences = list(read_conllu(dev))
    assert [s.tags for s in read_conllu(output)] == tagger.predict(sentences)
    tokens = sum(len(s.words) for s in sentences)
    assert 0 < changed < 0.2 * tokens


@pytest.mark.corpus
def test_tag_text(files, capsys, tmp_path):
    model = files[3]
    text = tmp_path / "input.txt"
    lines = ["The dog barks .", "", "I  saw   her duck", "Unknownish zorblax"]
    text.write_text("\n".join(lines) + "\n", "utf-8")
    code, out, err = run(capsys, "tag", model, "--input", text)
    assert code == 0 and err == ""
    output = out.split("\n")
    assert output[-1] == "" and len(output) - 1 == len(lines)
    tagger = Tagger.load(model)
    for line, tagged in zip(lines, output):
        pairs = [item.rsplit("/", 1) for item in tagged.split()]
        assert [w for w, _ in pairs] == line.split()
        assert [t for _, t in pairs] == tagger.predict([line.split()])[0]


@pytest.mark.corpus
def test_corpus_stats(files, capsys):
    _, train, _, _ = files
    code, out, err = run(capsys, "corpus", "stats", train, "--json")
    assert code == 0 and err == ""
    stats = json.loads(out)
    word_lines = [line.split("\t") for line in train.read_text("utf-8").splitlines()
                  if line and not line.startswith("#") and line.split("\t")[0].isdigit()]
    assert stats["sentences"] == 800
    assert stats["tokens"] == len(word_lines)
    assert stats["tags"] == len({f[3] for f in word_lines})
    assert sum(stats["tag_counts"].values()) == len(word_lines)
    code, text, _ = run(capsys, "corpus", "stats", train)
    assert code == 0 and "sentences" in text and "800" in text


# --- errors -------------------------------------------------------------------------------------------------


def test_wrong_column_count_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.conllu"
    lines = SMALL_CONLLU.split("\n")
    lines[3] = "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_"  # 9 columns, at line 4
    bad.write_text("\n".join(lines), "utf-8")
    for argv in (["train", "tagger", "--train", bad, "--output", tmp_path / "m.model"],
                 ["corpus", "stats", bad]):
        code, out, err = run(capsys, *argv)
        assert_one_line_error(code, out, err, f"{bad}:4", "expected 10 tab-separated columns, found 9")
    assert not (tmp_path / "m.model").exists()


def test_good_small_file_trains(capsys, tmp_path):
    good = tmp_path / "good.conllu"
    good.write_text(SMALL_CONLLU, "utf-8")
    code, out, err = run(capsys, "train", "tagger", "--train", good, "--output", tmp_path / "m.model", "--epochs", "3",
                         "-q", "--features", "pos-basic", "--bits", "12")
    assert (code, out, err) == (0, "", "")
    assert Tagger.load(tmp_path / "m.model").classes_ == ["DET", "NOUN", "PUNCT", "VERB"]


LATIN_1_SENTENCES = [[("El", "DA"), ("niño", "NC"), ("comió", "VMI"), (".", "Fp")],
                     [("La", "DA"), ("niña", "NC"), ("cantó", "VMI"), (".", "Fp")]] * 10


def test_files_in_another_encoding_are_read_with_encoding(capsys, tmp_path):
    """--encoding reads tagged files (training, dev, test; word-tag, columns) and tag's input in another
    encoding; without it the first byte that is not UTF-8 is named with its line and the option; a catalog
    corpus's encoding is the catalog's."""
    train, text = tmp_path / "es.tsv", tmp_path / "es.txt"
    train.write_bytes("".join("".join(f"{w}\t{t}\n" for w, t in s) + "\n" for s in LATIN_1_SENTENCES).encode("latin-1"))
    text.write_bytes("El niño cantó .\n".encode("latin-1"))
    dev, model = tmp_path / "dev.tsv", tmp_path / "m.model"
    dev.write_bytes(train.read_bytes())
    code, out, err = run(capsys, "train", "tagger", "--train", train, "--dev", dev, "--output", model, "-q",
                         "--epochs", "2", "--bits", "12")
    assert_one_line_error(code, out, err, f"{train}:2", "invalid UTF-8: byte 0xf1", "--encoding latin-1")
    assert run(capsys, "train", "tagger", "--train", train, "--dev", dev, "--encoding", "latin-1", "--output", model,
               "-q", "--epochs", "2", "--bits", "12") == (0, "", "")
    assert "niño" in Tagger.load(model).known_words_
    code, out, _ = run(capsys, "evaluate", model, "--test", train, "--encoding", "latin-1", "--json")
    assert code == 0 and json.loads(out)["accuracy"] == 1.0
    code, out, _ = run(capsys, "tag", model, "--input", text, "--encoding", "latin-1", "--format", "tsv")
    assert code == 0 and out == "El\tDA\nniño\tNC\ncantó\tVMI\n.\tFp\n\n"
    code, out, err = run(capsys, "tag", model, "--input", text)
    assert_one_line_error(code, out, err, f"{text}:1", "invalid UTF-8: byte 0xf1")
    columns = tmp_path / "es.col"
    columns.write_bytes("".join("".join(f"{w} {t} O\n" for w, t in s) + "\n" for s in LATIN_1_SENTENCES)
                        .encode("latin-1"))
    assert run(capsys, "train", "tagger", "--train", columns, "--format", "columns", "--columns", "word,pos,ner",
               "--column", "pos", "--encoding", "latin-1", "--dev", "none", "--output", model, "-q", "--epochs", "2",
               "--bits", "12") == (0, "", "")
    code, err = run(capsys, "train", "tagger", "--corpus", "ud-english-ewt", "--encoding", "latin-1", "--output",
                    tmp_path / "x.model")[::2]
    assert code == 1 and "encoding cannot be used: ud-english-ewt is a catalog corpus" in err


def test_a_table_of_tokens_trains_and_evaluates_by_its_header(capsys, tmp_path):
    """A CSV of a token per row under 'Sentence #,Word,POS,Tag' (Latin-1): --column POS trains on the POS column, the
    model keeps it, and evaluating on the same table scores that column."""
    table, model = tmp_path / "ner.csv", tmp_path / "m.model"
    rows = "".join(f"Sentence: {k},{w},{t},O\n" if i == 0 else f",{w},{t},O\n"
                   for k, s in enumerate(LATIN_1_SENTENCES) for i, (w, t) in enumerate(s))
    table.write_bytes(("Sentence #,Word,POS,Tag\n" + rows).encode("latin-1"))
    assert run(capsys, "train", "tagger", "--train", table, "--column", "POS", "--encoding", "latin-1", "--dev", "none",
               "--output", model, "-q", "--epochs", "2", "--bits", "12") == (0, "", "")
    tagger = Tagger.load(model)
    assert tagger.column == "POS" and tagger.classes_ == ["DA", "Fp", "NC", "VMI"]
    code, out, _ = run(capsys, "evaluate", model, "--test", table, "--encoding", "latin-1", "--json")
    assert code == 0 and json.loads(out)["accuracy"] == 1.0 and json.loads(out)["n_tokens"] == 80


def test_a_column_files_own_tag_column_is_kept_in_the_model(capsys, tmp_path):
    """A model trained on a column file's column of any name (here ner, not the last) saves, loads, and evaluates and
    compares on such files by that column when their --columns name it (not by the last column)."""
    columns, model = tmp_path / "ner.col", tmp_path / "m.model"
    columns.write_text("".join("".join(f"{w} {t} X\n" for w, t in s) + "\n" for s in LATIN_1_SENTENCES), "utf-8")
    options = ["--format", "columns", "--columns", "word,ner,pos"]
    assert run(capsys, "train", "tagger", "--train", columns, *options, "--column", "ner", "--dev", "none", "--output",
               model, "-q", "--epochs", "2", "--bits", "12") == (0, "", "")
    assert Tagger.load(model).column == "ner"
    code, out, _ = run(capsys, "evaluate", model, "--test", columns, *options, "--json")
    assert code == 0 and json.loads(out)["accuracy"] == 1.0
    code, out, _ = run(capsys, "compare", model, model, "--test", columns, *options, "--json")
    assert code == 0 and json.loads(out)["a"]["accuracy"] == 1.0


def test_maxent_tagger_takes_l2_and_the_perceptron_refuses_it(capsys, tmp_path):
    good = tmp_path / "good.conllu"
    good.write_text(SMALL_CONLLU, "utf-8")
    code, _, _ = run(capsys, "train", "tagger", "--train", good, "--output", tmp_path / "m.model", "--learner", "maxent",
                     "--l2", "0.5", "--epochs", "5", "-q", "--features", "pos-basic", "--bits", "12")
    assert code == 0 and Tagger.load(tmp_path / "m.model").learner.l2 == 0.5
    code, _, err = run(capsys, "train", "tagger", "--train", good, "--output", tmp_path / "p.model", "--l2", "1")
    assert code == 2 and err.strip() == "structlin: error: --l2 does not apply to learner 'averaged-perceptron'"


def test_tagger_holds_out_a_seeded_dev_fraction(capsys, tmp_path):
    """--dev-fraction takes dev from the training file, as for a classifier: the model is the one trained on
    the rest with the seeded held-out part as dev."""
    train = tmp_path / "train.conllu"
    train.write_text("".join(SMALL_CONLLU.replace("dog", f"dog{k}") for k in range(6)), "utf-8")
    model = tmp_path / "m.model"
    code, _, _ = run(capsys, "train", "tagger", "--train", train, "--output", model, "--dev-fraction", "0.25",
                     "--seed", "3", "--epochs", "2", "-q", "--features", "pos-basic", "--bits", "12")
    assert code == 0
    rest, held_out = hold_out(list(read_file(train)), 0.25, 3)
    expected = Tagger("pos-basic", epochs=2, seed=3, bits=12).fit(rest, held_out)
    expected.save(tmp_path / "expected.model")
    trained, expected = Tagger.load(model), Tagger.load(tmp_path / "expected.model")
    assert [r["dev_accuracy"] for r in trained.history_] == [r["dev_accuracy"] for r in expected.history_]
    np.testing.assert_array_equal(trained.weights_, expected.weights_)
    code, _, err = run(capsys, "train", "tagger", "--train", train, "--output", model, "--dev-fraction", "1.5")
    assert code == 2 and "error: argument --dev-fraction: expected a number between 0 and 1 (both excluded), got 1.5" \
        in err


def test_model_cut_in_half(capsys, tmp_path):
    good = tmp_path / "good.conllu"
    good.write_text(SMALL_CONLLU, "utf-8")
    model = tmp_path / "m.model"
    assert main(["train", "tagger", "--train", str(good), "--output", str(model), "-q", "--features", "pos-basic",
                 "--bits", "12"]) == 0
    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 2])
    for argv in (["evaluate", model, "--test", good], ["tag", model, "--input", good]):
        code, out, err = run(capsys, *argv)
        assert_one_line_error(code, out, err, f"{model}: not a readable structlin model")


def test_unknown_feature_set_lists_names(capsys, tmp_path):
    """(An unknown learner or decoder is a usage error: test_cli_sweep.py.)"""
    good = tmp_path / "good.conllu"
    good.write_text(SMALL_CONLLU, "utf-8")
    code, out, err = run(capsys, "train", "tagger", "--train", good, "--output", tmp_path / "m", "--features", "nope")
    assert_one_line_error(code, out, err, "'nope'", "pos-basic", "pos-rich")


def test_missing_train_file(capsys, tmp_path):
    missing = tmp_path / "missing.conllu"
    code, out, err = run(capsys, "train", "tagger", "--train", missing, "--output", tmp_path / "m")
    assert_one_line_error(code, out, err, str(missing), "not found")


def test_unknown_corpus_lists_names(capsys, tmp_path):
    code, out, err = run(capsys, "train", "tagger", "--corpus", "no-such-corpus", "--output", tmp_path / "m")
    assert_one_line_error(code, out, err, "'no-such-corpus'", "ud-english-ewt", "treebank", "conll2000")
    code, out, err = run(capsys, "corpus", "stats", "no-such-corpus")
    assert_one_line_error(code, out, err, "'no-such-corpus'", "ud-english-ewt")


def test_missing_model_file(capsys, tmp_path):
    code, out, err = run(capsys, "tag", tmp_path / "none.model", "--input", tmp_path / "x.txt")
    assert_one_line_error(code, out, err, "none.model: model file not found")


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "tagger", "--train", "x.conllu"])  # no --output
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--output" in err
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


@pytest.mark.parametrize("argv", [[], ["train"], ["train", "tagger"], ["evaluate"], ["tag"], ["corpus"],
                                  ["corpus", "stats"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: structlin")


def test_version(capsys):
    from structlin import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"structlin {__version__}\n"


def test_console_script_exit_codes(tmp_path):
    script = shutil.which("structlin", path=os.path.dirname(sys.executable)) or shutil.which("structlin")
    if script is None:
        pytest.skip("the structlin console script is not installed")
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tThe\tthe\tDET\n\n", "utf-8")
    done = subprocess.run([script, "corpus", "stats", str(bad)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"structlin: error: {bad}:1: expected 10 tab-separated columns, found 4"]


def test_train_help_and_readme_list_every_learner_with_its_summary(capsys):
    from structlin.learners import LEARNERS

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--help"])
    out = capsys.readouterr().out
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert exit_info.value.code == 0
    for name, cls in LEARNERS.items():
        assert cls.summary and f"{name:<20} {cls.summary}" in out
        assert f"`{name}`" in readme
