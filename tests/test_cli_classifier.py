"""The classifier's command line: train classifier, evaluate, classify, and one-line errors."""

from __future__ import annotations

import json
import tarfile

import pytest

from structlin import Classifier
from cli_run import run

TRAIN = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great film", "boring bad plot"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg"]


@pytest.fixture()
def fasttext_files(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(TRAIN, LABELS)), encoding="utf-8")
    return train


def test_train_evaluate_classify_round_trip(tmp_path, capsys, fasttext_files):
    model = tmp_path / "m.model"
    code, out, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--features", "text-unigram",
                       "--epochs", "5", "--output", model, "--quiet")
    assert code == 0 and model.is_file()
    code, out, _ = run(capsys, "evaluate", model, "--test", fasttext_files, "--json")
    report = json.loads(out)
    assert code == 0 and report["accuracy"] == 1.0 and report["n_instances"] == 6
    assert set(report) >= {"accuracy", "macro_f1", "per_class", "n_instances"}
    docs = tmp_path / "docs.txt"
    docs.write_text("good great fun\nbad awful boring\n", encoding="utf-8")
    code, out, _ = run(capsys, "classify", model, "--input", docs)
    assert code == 0 and out.splitlines() == ["pos", "neg"]
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("awful bad plot", encoding="utf-8")
    code, out, _ = run(capsys, "classify", model, "--input", folder)
    assert out.splitlines() == [f"{folder / 'a.txt'}\tneg"]


@pytest.mark.parametrize("options, kept", [(("--learner", "averaged-perceptron", "--epochs", "3"), "kept epoch 3; "),
                                           (("--learner", "naive-bayes"), "")])
def test_the_last_line_names_a_kept_epoch_only_for_a_learner_of_epochs(tmp_path, capsys, fasttext_files, options,
                                                                         kept):
    model = tmp_path / "m.model"
    code, out, _ = run(capsys, "train", "classifier", "--train", fasttext_files, *options, "--dev", "none", "--output",
                       model)
    last = out.splitlines()[-1]
    assert code == 0 and last.startswith("trained on 6 documents in ") and last.endswith(f"s; {kept}model written to "
                                                                                         f"{model}"), last


def test_train_from_folder_archive_with_dev_fraction(tmp_path, capsys):
    root = tmp_path / "tree"
    for k, (text, label) in enumerate(zip(TRAIN * 3, LABELS * 3)):
        (root / label).mkdir(parents=True, exist_ok=True)
        (root / label / f"{k}.txt").write_text(text, encoding="utf-8")
    archive = tmp_path / "tree.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=".")
    code, out, _ = run(capsys, "train", "classifier", "--train", archive, "--dev-fraction", "0.2", "--features",
                       "text-unigram", "--epochs", "3", "--output", tmp_path / "m.model")
    assert code == 0 and "trained on 14 documents" in out and "dev accuracy" in out


@pytest.mark.parametrize("name, content, expected", [
    ("bad.tsv", "pos\tgood film\n\tno label here\n", "bad.tsv:2"),
    ("bad.svm", "1 1:0.5 2:1\n2 x:1\n", "bad.svm:2"),
    ("bad.txt", b"__label__pos caf\xe9\n", "bad.txt:1"),
])
def test_bad_input_exits_with_one_line(tmp_path, capsys, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    code, out, err = run(capsys, "train", "classifier", "--train", path, "--output", tmp_path / "m.model")
    assert code == 1 and expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# GLUE SST-2's layout: a sentence<TAB>label header, labels 0/1, texts that may start with a quote.
SST2 = "sentence\tlabel\n" + "".join(f"{x} \t{1 if y == 'pos' else 0}\n" for x, y in zip(TRAIN, LABELS)) + \
    '"youre dead to me"... bad\t0\n'


def error_line(err: str) -> str:
    """The last line of ``err``, checked to be structlin's one-line error (what was read may come before it)."""
    lines = err.strip().splitlines()
    assert lines[-1].startswith("structlin: error: ") and all(line.startswith("read ") for line in lines[:-1]), err
    return lines[-1]


def test_every_file_format_says_what_was_read(tmp_path, capsys):
    """fastText, SVMlight and folder trees say how many documents and labels they gave, as TSV and CSV do; labels
    all different, one per document, are pointed out (a column of ids read as the labels)."""
    fasttext, svm, tree = tmp_path / "d.TXT", tmp_path / "d.svm", tmp_path / "tree"
    fasttext.write_text("".join(f"__label__{y} {x}\n" for x, y in zip(TRAIN, LABELS)), encoding="utf-8")
    svm.write_text("".join(f"{y} {k + 1}:1\n" for k, y in enumerate(LABELS)), encoding="utf-8")
    for k, (x, y) in enumerate(zip(TRAIN, LABELS)):
        (tree / y).mkdir(parents=True, exist_ok=True)
        (tree / y / f"{k}.txt").write_text(x, encoding="utf-8")
    for path in (fasttext, svm, tree):
        code, _, err = run(capsys, "train", "classifier", "--train", path, "--epochs", "2", "--output",
                           tmp_path / "m.model")
        assert code == 0 and err.splitlines() == [f"read 6 documents (2 labels) from {path}"]
    ids = tmp_path / "SST-2-TEST.TSV"  # GLUE's test file: an index and the sentence, no label; the suffix in capitals
    ids.write_text("index\tsentence\n" + "".join(f"{k}\t{x}\n" for k, x in enumerate(TRAIN * 2)), encoding="utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", ids, "--epochs", "2", "--output", tmp_path / "i.model")
    assert code == 0 and err.splitlines() == [  # no label name: the first row is data
        f"read 13 documents (13 labels) from {ids} (no header row; labels from column 0, texts from column 1); "
        "every document has a label of its own: is that the label column?"]


def test_tsv_and_csv_files_say_what_was_read(tmp_path, capsys):
    train, model = tmp_path / "train.tsv", tmp_path / "m.model"
    train.write_text(SST2, encoding="utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", train, "--features", "text-unigram", "--epochs", "3",
                       "--output", model)
    assert code == 0 and err.splitlines() == [f"read 7 documents (2 labels) from {train} (header row: sentence, "
                                              "label; labels from 'label', texts from 'sentence')"]
    code, out, err = run(capsys, "evaluate", model, "--test", train, "--json")
    assert code == 0 and json.loads(out)["n_instances"] == 7 and err.startswith("read 7 documents (2 labels)")
    code, _, err = run(capsys, "train", "classifier", "--train", train, "--output", model, "--quiet")
    assert code == 0 and err == ""
    # No header, columns by index or by name, CSV by --format.
    plain = tmp_path / "plain.tab"
    plain.write_text("".join(f"{x}\t {int(y == 'pos')} \n" for x, y in zip(TRAIN, LABELS)), encoding="utf-8")
    code, out, err = run(capsys, "evaluate", model, "--test", plain, "--label-column", "1", "--text-column", "0",
                         "--json")
    assert code == 0 and json.loads(out)["n_instances"] == 6
    assert err.strip() == (f"read 6 documents (2 labels) from {plain} (no header row; labels from column 1, texts "
                           "from column 0)")
    data = tmp_path / "data.txt"
    data.write_text("id,review,stars\n" + "".join(f'{k},"{x}, really",{y}\n' for k, (x, y) in
                                                   enumerate(zip(TRAIN * 3, LABELS * 3))), encoding="utf-8")
    code, out, err = run(capsys, "cross-validate", "--train", data, "--format", "csv", "--label-column", "stars",
                         "--folds", "2", "--features", "text-unigram", "--epochs", "2", "--json")
    assert code == 0 and "header row: id, review, stars; labels from 'stars', texts from 'review'" in err
    code, out, err = run(capsys, "evaluate", model, "--test", train, "--no-header", "--label-column", "1",
                         "--text-column", "0", "--json")
    assert code == 0 and json.loads(out)["n_instances"] == 8 and "no header row" in err


def test_a_semicolon_csv_is_read_and_says_so_and_delimiter_options_are_checked(tmp_path, capsys):
    """A spreadsheet's CSV export where the decimal mark is a comma separates its fields by semicolons: read as such,
    and said; ``--delimiter`` names a file's (a TSV file's is the tab: refused), one character, or one line says why."""
    data, model = tmp_path / "export.csv", tmp_path / "m.model"
    data.write_text("Bewertung;Text\n" + "".join(f'{y};"{x}; wirklich, ja"\n' for x, y in zip(TRAIN * 2, LABELS * 2)),
                    encoding="utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", data, "--label-column", "Bewertung", "--text-column",
                       "Text", "--features", "text-unigram", "--epochs", "2", "--output", model)
    assert code == 0 and err.splitlines() == [f"read 12 documents (2 labels) from {data} (semicolon-separated; header "
                                              "row: Bewertung, Text; labels from 'Bewertung', texts from 'Text')"]
    code, _, err = run(capsys, "train", "classifier", "--train", data, "--delimiter", ",", "--output", model)
    assert code == 1 and "no text column 1 (the first row has 1 comma-separated field" in err and "among" not in err
    tsv = tmp_path / "t.tsv"
    tsv.write_text(SST2, encoding="utf-8")
    for options, expected in ((["--train", tsv, "--delimiter", ";"], "the delimiter to CSV only: a TSV file's is the "
                                                                     "tab); "),
                              (["--train", data, "--delimiter", ";;"], "argument --delimiter: ';;': a delimiter is one "
                                                                      "character other than a quote or line break")):
        code, _, err = run(capsys, "train", "classifier", *options, "--output", model)
        assert code != 0 and expected in err and len(err.strip().splitlines()) == 1, err
    code, _, err = run(capsys, "train", "classifier", "--train", data, "--delimiter", "tab", "--output", model)
    assert code == 1 and "1 tab-separated field" in err


@pytest.mark.parametrize("content, options, expected", [
    (SST2, ["--label-column", "polarity"], "train.tsv:1: no label column named 'polarity' in the header row (the "
     "header row names columns 0 'sentence', 1 'label', counted from 0)"),
    (SST2, ["--text-column", "2"], "train.tsv:1: no text column 2 (the header row names columns 0 'sentence', "
     "1 'label', counted from 0)"),
    (SST2 + "one\ttoo\tmany\n", [], "train.tsv:9: found 3 tab-separated fields, expected 2 as on line 1"),
    (SST2 + "no label\t \n", [], "train.tsv:9: empty label (expected a label in column 1, counted from 0)"),
])
def test_bad_tsv_input_or_columns_exit_with_one_line(tmp_path, capsys, content, options, expected):
    train = tmp_path / "train.tsv"
    train.write_text(content, encoding="utf-8")
    code, _, err = run(capsys, "train", "classifier", "--train", train, *options, "--output", tmp_path / "m.model")
    assert code == 1 and expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_column_options_are_refused_for_other_formats(tmp_path, capsys, fasttext_files):
    code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--header", "--output",
                       tmp_path / "m.model")
    assert code == 1 and err.strip() == (f"structlin: error: the header and column options (header) apply to TSV and "
                                         f"CSV files (the columns to JSON Lines too); {fasttext_files} is read as "
                                         "fasttext")


def test_corrupted_archive_member_exits_with_one_line(tmp_path, capsys):
    root = tmp_path / "tree"
    for label in ("a", "b"):
        (root / label).mkdir(parents=True)
        (root / label / "doc.txt").write_text("some words " * 2000, encoding="utf-8")
    archive = tmp_path / "tree.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=".")
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF  # damage the compressed stream in the middle
    archive.write_bytes(bytes(data))
    code, _, err = run(capsys, "train", "classifier", "--train", archive, "--output", tmp_path / "m.model")
    assert code == 1 and "tree.tar.gz" in err and len(err.strip().splitlines()) == 1


def test_question_granularity_option(tmp_path, capsys, nltk_data_dir):
    model = tmp_path / "qc.model"
    code, _, _ = run(capsys, "train", "classifier", "--corpus", "qc", "--granularity", "fine", "--epochs", "1",
                     "--output", model, "--quiet")
    assert code == 0
    code, out, _ = run(capsys, "evaluate", model, "--corpus", "qc", "--granularity", "fine", "--json")
    report = json.loads(out)
    assert code == 0 and report["n_instances"] == 500 and "NUM:count" in report["per_class"]
    code, _, err = run(capsys, "train", "classifier", "--corpus", "names", "--granularity", "fine", "--output", model)
    assert code != 0 and "granularity" in err and len(err.strip().splitlines()) == 1


def test_learner_options_reach_the_learner_or_are_refused(tmp_path, capsys, fasttext_files):
    model = tmp_path / "m.model"
    code, _, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "maxent", "--l2", "0.25",
                     "--epochs", "5", "--output", model, "--quiet")
    assert code == 0 and Classifier.load(model).learner.l2 == 0.25
    code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--l2", "1", "--output", model)
    assert code == 2 and err.strip() == ("structlin: error: --l2 does not apply to learner 'auto' (averaged-perceptron "
                                         "or naive-bayes, chosen on held-out data): give --learner maxent")


def test_maxent_solver_options_reach_the_learner(tmp_path, capsys, fasttext_files):
    model = tmp_path / "m.model"
    code, out, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "maxent", "--solver",
                       "sgd", "--learning-rate", "0.5", "--momentum", "0.25", "--epochs", "3", "--dev", "none", "--output", model)
    learner = Classifier.load(model).learner
    assert code == 0 and (learner.solver, learner.learning_rate, learner.momentum, learner.epochs) == ("sgd", 0.5,
                                                                                                        0.25, 3)
    assert [line.split()[:2] for line in out.splitlines()[:3]] == [["epoch", "1"], ["epoch", "2"], ["epoch", "3"]]
    code, _, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "maxent", "--l1", "0.01",
                     "--output", model, "--quiet")
    learner = Classifier.load(model).learner
    assert code == 0 and (learner.solver, learner.l1, learner.max_epochs) == ("lbfgs", 0.01, 100)
    for option, value in (("--solver", "sgd"), ("--l1", "0.1"), ("--learning-rate", "1"), ("--momentum", "0.5")):
        code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, option, value, "--output", model)
        assert code == 2
        assert err.startswith(f"structlin: error: {option} does not apply to learner 'auto' (averaged-perceptron or "
                              "naive-bayes, chosen on held-out data): give --learner ") and "maxent" in err
    code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "maxent", "--solver",
                       "sgd", "--l1", "0.1", "--output", model)
    assert code == 2 and err.strip() == "structlin: error: l1 needs the lbfgs solver (OWL-QN), not 'sgd'"


def test_svm_options_reach_the_learner_or_give_one_line(tmp_path, capsys, fasttext_files):
    model = tmp_path / "m.model"
    code, out, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "svm", "--solver", "bcfw",
                       "--C", "2", "--epochs", "3", "--dev", "none", "--output", model)
    learner = Classifier.load(model).learner
    assert code == 0 and (learner.solver, learner.C, learner.epochs) == ("bcfw", 2.0, 3)
    assert [line.split()[:2] for line in out.splitlines()[:3]] == [["epoch", "1"], ["epoch", "2"], ["epoch", "3"]]
    assert all("duality gap" in line for line in out.splitlines()[:3])
    code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "svm", "--C", "0",
                       "--output", model)  # refused by the parser, no learner taking it
    assert code == 2 and len(err.strip().splitlines()) == 1 and "argument --C: must be positive and finite, got 0.0" in err
    for argv, message in ((("--learner", "svm", "--solver", "lbfgs"), "solver must be one of pegasos, bcfw, got 'lbfgs'"),
                          (("--C", "1"), "--C does not apply to learner 'auto' (averaged-perceptron or naive-bayes, "
                                         "chosen on held-out data): give --learner passive-aggressive or mira or svm")):
        code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, *argv, "--output", model)
        assert code == 2 and error_line(err).endswith(message)


def test_cost_matrix_file_reaches_the_svm_or_gives_one_line(tmp_path, capsys, fasttext_files):
    model, costs = tmp_path / "m.model", tmp_path / "costs.tsv"
    costs.write_text("# rows: true label, columns: predicted\ntrue\\pred\tpos\tneg\nneg\t3\t0\npos\t0\t1\n")
    code, _, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "svm", "--cost-matrix",
                     costs, "--output", model, "-q")
    assert code == 0 and Classifier.load(model).learner.cost_matrix.tolist() == [[0, 3], [1, 0]]  # classes_ neg, pos
    for name, content, message in (
            ("small.tsv", "\tpos\npos\t0\n", "small.tsv: its labels differ from the training labels: missing neg"),
            ("extra.csv", ",pos,neg,neu\npos,0,1,1\nneg,1,0,1\nneu,1,1,0\n", "training labels: unknown neu"),
            ("text.tsv", "\tpos\tneg\npos\t0\tx\n", "text.tsv:2: expected numeric costs"),
            ("short.tsv", "\tpos\tneg\npos\t0\n", "short.tsv:2: expected a label and 2 costs, got 2 fields"),
            ("twice.tsv", "\tpos\tneg\npos\t0\t1\npos\t0\t1\n", "twice.tsv:3: true label 'pos' appears twice"),
            ("diagonal.tsv", "\tpos\tneg\npos\t1\t1\nneg\t1\t0\n",
             "diagonal.tsv:2: the cost of predicting 'pos' for 'pos' is 1 (expected 0 (a label's cost against itself))"),
            ("negative.tsv", "\tpos\tneg\npos\t0\t1\nneg\t-1\t0\n",
             "negative.tsv:3: the cost of predicting 'pos' for 'neg' is -1 (expected a cost from 0 to 1e+12)"),
            ("huge.tsv", "\tpos\tneg\npos\t0\t1e308\nneg\t1\t0\n",
             "huge.tsv:2: the cost of predicting 'neg' for 'pos' is 1e+308 (expected a cost from 0 to 1e+12)"),
            ("nan.tsv", "\tpos\tneg\npos\t0\tnan\nneg\t1\t0\n",
             "nan.tsv:2: the cost of predicting 'neg' for 'pos' is nan (expected a cost from 0 to 1e+12)"),
            ("lacks.tsv", "\tpos\nneg\t1\npos\t0\n", "lacks.tsv lacks 2 (true, predicted) pair(s), e.g. ('neg', 'neg')"),
            ("empty.tsv", "# nothing\n", "empty.tsv: no cost matrix in the file")):
        (tmp_path / name).write_text(content)
        code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", "svm",
                           "--cost-matrix", tmp_path / name, "--output", model)
        assert code == 1 and message in error_line(err), err
    code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--cost-matrix", costs, "--output", model)
    assert code == 2 and "--cost-matrix does not apply to learner 'auto'" in err


def test_tol_reaches_the_batch_solvers_and_is_refused_by_the_others(tmp_path, capsys, fasttext_files):
    model = tmp_path / "m.model"
    for learner, solver in (("svm", "bcfw"), ("maxent", "lbfgs")):
        code, _, _ = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", learner, "--solver",
                         solver, "--tol", "0.25", "--output", model, "-q")
        assert code == 0 and Classifier.load(model).learner.tol == 0.25
    for learner, solver in (("svm", "pegasos"), ("maxent", "sgd")):
        code, _, err = run(capsys, "train", "classifier", "--train", fasttext_files, "--learner", learner, "--solver",
                           solver, "--tol", "0.25", "--output", model)
        solvers = "lbfgs" if solver == "sgd" else "bcfw"
        assert code == 2 and f"tol applies to the {solvers} solver, not '{solver}'" in err


def test_kernel_perceptron_on_svmlight_input_from_the_command_line(tmp_path, capsys):
    # XOR in two numeric features: no linear model separates it, the degree-2 kernel does.
    points = [(a, b) for a in (-2, -1, 1, 2) for b in (-2, -1, 1, 2)]
    lines = "".join(f"{1 if a * b > 0 else 2} 1:{a} 2:{b}\n" for a, b in points)
    (tmp_path / "xor.svm").write_text(lines)
    model = tmp_path / "xor.model"
    code, out, _ = run(capsys, "train", "classifier", "--train", tmp_path / "xor.svm", "--learner", "kernel-perceptron",
                       "--kernel", "poly", "--degree", "2", "--gamma", "1", "--epochs", "20", "--dev", "none",
                       "--output", model)
    assert code == 0 and "support examples" in out.splitlines()[0]
    loaded = Classifier.load(model)
    assert loaded.feature_set.name == "numeric" and loaded.learner.kernel_.params() == {
        "kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0}
    for hypothesis in ("last", "averaged", "voted"):
        code, out, _ = run(capsys, "evaluate", model, "--test", tmp_path / "xor.svm", "--hypothesis", hypothesis, "--json")
        assert code == 0 and json.loads(out)["accuracy"] == 1.0
    code, _, err = run(capsys, "train", "classifier", "--train", tmp_path / "xor.svm", "--learner", "kernel-perceptron",
                       "--budget", "0", "--output", model)
    assert code == 2 and "error: argument --budget: must be at least 1, got 0" in err
    code, _, err = run(capsys, "train", "classifier", "--train", tmp_path / "xor.svm", "--kernel", "rbf", "--output", model)
    assert code == 2 and "--kernel does not apply to learner 'auto'" in err
    run(capsys, "train", "classifier", "--train", tmp_path / "xor.svm", "--output", model, "-q")
    code, _, err = run(capsys, "evaluate", model, "--test", tmp_path / "xor.svm", "--hypothesis", "voted")
    assert code == 1 and "--hypothesis voted applies to models of voted-perceptron, kernel-perceptron" in err


def test_split_trains_on_several_splits_and_refuses_its_dev(tmp_path, capsys, nltk_data_dir):
    from structlin.catalog import load_documents

    expected = len(load_documents("ppattach", "train")) + len(load_documents("ppattach", "dev"))
    model = tmp_path / "pp.model"
    code, out, _ = run(capsys, "train", "classifier", "--corpus", "ppattach", "--features", "ppattach", "--split",
                       "train+dev", "--epochs", "1", "--output", model)
    assert code == 0 and f"trained on {expected:,} documents" in out
    assert Classifier.load(model).history_[-1]["dev_accuracy"] is None  # the dev split is trained on: no dev
    code, _, err = run(capsys, "train", "classifier", "--corpus", "ppattach", "--split", "train+dev", "--dev", "dev",
                       "--output", model)
    assert code == 1 and "--dev dev is also a training split" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "train", "classifier", "--corpus", "ppattach", "--split", "train+tset", "--output", model)
    assert code == 1 and "'tset'" in err and "accepted: dev, test, train" in err
    code, _, err = run(capsys, "train", "classifier", "--train", model, "--split", "train", "--output", model)
    assert code == 1 and "--split chooses splits of --corpus" in err
