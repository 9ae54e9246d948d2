"""Cross-validation: seeded folds that partition the data, and scores that match the folds' reports."""

from __future__ import annotations

import errno
import json
import os
import time

import numpy as np
import pytest

from structlin import Classifier
from structlin.cli import main
from structlin.errors import OutputError, StructlinError
from structlin.evaluation import evaluate_classification
from structlin.experiments import cross_validate, kfold_indices, load_config, run_experiment, write_report

DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great film",
        "boring bad plot", "good fun", "awful boring"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg", "pos", "neg"]


def test_folds_partition_the_data_and_follow_the_seed():
    folds = kfold_indices(23, 5, seed=7)
    assert sorted(np.concatenate(folds).tolist()) == list(range(23))
    assert sorted(len(f) for f in folds) == [4, 4, 5, 5, 5]
    assert all((a == b).all() for a, b in zip(folds, kfold_indices(23, 5, seed=7)))
    assert not all((a == b).all() for a, b in zip(folds, kfold_indices(23, 5, seed=8)))
    with pytest.raises(StructlinError, match="2 <= folds <= 3"):
        kfold_indices(3, 4, seed=0)


# Three labels and words shared across them: the classifier makes some errors, and macro-F1 differs from accuracy.
NOISY_DOCS = DOCS + ["film plot long", "long slow film", "slow plot good", "fun long bad"]
NOISY_LABELS = LABELS + ["meh"] * 4


def make_classifier():
    # one document at a time: on twelve documents, batches of eight would make the folds too easy to test
    return Classifier("text-unigram", epochs=3, batch_size=1, progress=False)


def macro_f1_by_hand(gold: list[str], predicted: list[str]) -> float:
    """The mean over every class in gold or prediction of F1 = 2·tp / (2·tp + fp + fn)."""
    scores = []
    for c in sorted(set(gold) | set(predicted)):
        tp = sum(g == c and p == c for g, p in zip(gold, predicted))
        fp = sum(g != c and p == c for g, p in zip(gold, predicted))
        fn = sum(g == c and p != c for g, p in zip(gold, predicted))
        scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


def test_macro_f1_by_hand():
    assert macro_f1_by_hand(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert macro_f1_by_hand(["a", "b"], ["a", "a"]) == pytest.approx((2 / 3 + 0) / 2)
    assert macro_f1_by_hand(["b"], ["a"]) == 0.0


class Constant:
    """A stand-in model that predicts "pos" for every document and records what it was trained and scored on."""

    def __init__(self, made: list):
        made.append(self)
        self.trained = self.tested = None

    def fit(self, documents, labels):
        self.trained = list(zip(documents, labels))
        return self

    def report(self, documents, labels):
        self.tested = list(zip(documents, labels))
        return evaluate_classification(labels, ["pos"] * len(labels))


def run_constant(folds: int, seed: int):
    made: list[Constant] = []
    result = cross_validate(lambda: Constant(made), DOCS, LABELS, folds=folds, seed=seed)
    return result, made


@pytest.mark.parametrize("folds, seed", [(4, 1), (3, 0), (8, 5)])
def test_cross_validate_trains_on_the_rest_and_scores_each_fold_by_hand(folds, seed):
    result, made = run_constant(folds, seed)
    assert (result["folds"], result["seed"]) == (folds, seed) and len(made) == folds
    pairs = list(zip(DOCS, LABELS))
    tested = [m.tested for m in made]
    # Each fold is scored on the documents of kfold_indices's fold, and trained on all others in corpus order.
    assert tested == [[pairs[i] for i in fold] for fold in kfold_indices(len(DOCS), folds, seed)]
    assert sorted(p for fold in tested for p in fold) == sorted(pairs)  # the test folds partition the data
    assert all(m.trained == [p for p in pairs if p not in m.tested] for m in made)
    assert [r["n_test"] for r in result["per_fold"]] == [len(t) for t in tested]
    # Always "pos" on a fold of n documents with k positive: accuracy k/n; F1(pos) = 2k/(k + n) and, when
    # a negative document is present, F1(neg) = 0 (the class is in gold), so macro-F1 is F1(pos)/2.
    expected = []
    for fold in tested:
        n, k = len(fold), sum(label == "pos" for _, label in fold)
        f1_pos = 2 * k / (k + n)
        expected.append((k / n, f1_pos if k == n else f1_pos / 2))
    np.testing.assert_allclose([(r["accuracy"], r["macro_f1"]) for r in result["per_fold"]], expected, rtol=1e-12)
    accuracy, macro = np.array(expected).T
    assert result["accuracy"] == pytest.approx(accuracy.mean()) and result["accuracy_std"] == pytest.approx(accuracy.std())
    assert result["macro_f1"] == pytest.approx(macro.mean()) and result["macro_f1_std"] == pytest.approx(macro.std())


def test_leave_one_out_by_hand():
    # One document per fold, 4 of 8 "pos": a "pos" fold scores accuracy = macro-F1 = 1 (its only class is
    # right), a "neg" fold 0 for both (F1 of neg and pos are 0): means 0.5, standard deviations 0.5.
    result, _ = run_constant(len(DOCS), 3)
    assert sorted((r["accuracy"], r["macro_f1"]) for r in result["per_fold"]) == [(0.0, 0.0)] * 4 + [(1.0, 1.0)] * 4
    assert [result[k] for k in ("accuracy", "accuracy_std", "macro_f1", "macro_f1_std")] == [0.5, 0.5, 0.5, 0.5]


def test_a_fold_whose_training_part_lacks_a_label_is_named():
    """Three documents, one of label b, in three folds: the fold holding b trains on a alone, which is said of the
    fold (not of the data, which has two labels)."""
    documents, labels = ["x y", "y z", "q r"], ["a", "a", "b"]
    fold = next(k for k, test in enumerate(kfold_indices(3, 3, 0), 1) if labels[test[0]] == "b")
    with pytest.raises(StructlinError, match=rf"cross-validation fold {fold} of 3: its training part has only the "
                                             r"label 'a' \(label\(s\) 'b' all in its test part\); use fewer folds"):
        cross_validate(make_classifier, documents, labels, folds=3, seed=0)


def test_cross_validate_follows_the_seed():
    def folds_of(seed):
        return [[document for document, _ in m.tested] for m in run_constant(4, seed)[1]]

    assert folds_of(1) == folds_of(1)
    assert {frozenset(f) for f in folds_of(1)} != {frozenset(f) for f in folds_of(2)}


def test_cross_validate_scores_match_folds_rerun_independently():
    began = time.perf_counter()
    result = cross_validate(make_classifier, NOISY_DOCS, NOISY_LABELS, folds=4, seed=1)
    wall = time.perf_counter() - began
    rows = result["per_fold"]
    folds = kfold_indices(len(NOISY_DOCS), 4, seed=1)
    assert [r["fold"] for r in rows] == [1, 2, 3, 4] and [r["n_test"] for r in rows] == [len(f) for f in folds]
    for row, test in zip(rows, folds):
        train = [i for i in range(len(NOISY_DOCS)) if i not in set(test.tolist())]
        model = make_classifier().fit([NOISY_DOCS[i] for i in train], [NOISY_LABELS[i] for i in train])
        predicted, gold = model.predict([NOISY_DOCS[i] for i in test]), [NOISY_LABELS[i] for i in test]
        assert row["accuracy"] == pytest.approx(np.mean([p == g for p, g in zip(predicted, gold)]))
        assert row["macro_f1"] == pytest.approx(macro_f1_by_hand(gold, predicted))
    accuracy, macro = np.array([r["accuracy"] for r in rows]), np.array([r["macro_f1"] for r in rows])
    assert result["accuracy"] == pytest.approx(accuracy.mean()) and result["accuracy_std"] == pytest.approx(accuracy.std())
    assert result["macro_f1"] == pytest.approx(macro.mean()) and result["macro_f1_std"] == pytest.approx(macro.std())
    # The data are hard enough that the check means something: some fold has errors, and macro-F1 is not accuracy.
    assert accuracy.min() < 1 and not np.allclose(accuracy, macro)
    seconds = [r["train_seconds"] for r in rows]
    assert all(isinstance(s, float) and s > 0 for s in seconds) and sum(seconds) <= wall
    # Seeded: the same seed gives the same scores.
    again = cross_validate(make_classifier, NOISY_DOCS, NOISY_LABELS, folds=4, seed=1)
    assert ([{k: v for k, v in r.items() if k != "train_seconds"} for r in again["per_fold"]]
            == [{k: v for k, v in r.items() if k != "train_seconds"} for r in rows])


def test_cross_validate_command(tmp_path, capsys):
    data = tmp_path / "data.tsv"
    data.write_text("".join(f"{y}\t{x}\n" for x, y in zip(NOISY_DOCS, NOISY_LABELS)), encoding="utf-8")
    assert main(["cross-validate", "--train", str(data), "--folds", "4", "--features", "text-unigram",
                 "--epochs", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # The command's numbers are the library's (seed 0 by default), fold by fold; like train without dev, each
    # fold's model chooses its epochs on a held-out tenth of its training part.
    expected = cross_validate(lambda: Classifier("text-unigram", epochs=3, progress=False, held_out=0.1), NOISY_DOCS,
                              NOISY_LABELS, folds=4, seed=0)
    for key in ("folds", "seed", "accuracy", "accuracy_std", "macro_f1", "macro_f1_std"):
        assert result[key] == pytest.approx(expected[key]), key
    assert ([{k: v for k, v in r.items() if k != "train_seconds"} for r in result["per_fold"]]
            == [{k: v for k, v in r.items() if k != "train_seconds"} for r in expected["per_fold"]])


# --- the report folder -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("data_name, config_name, replaced", [("results.csv", "experiment.toml", "the train data"),
                                                             ("docs.tsv", "report.md", "the configuration")])
def test_a_report_that_would_replace_an_input_is_refused(tmp_path, capsys, data_name, config_name, replaced):
    """A report folder holding the configuration or the data under a report file's name: they were replaced by the
    report (status 0); now refused before any work, as train refuses an output that is an input."""
    data, config = tmp_path / data_name, tmp_path / config_name
    data.write_text("".join(f"{y}\t{x}\n" for x, y in zip(NOISY_DOCS, NOISY_LABELS)), encoding="utf-8")
    text = (f'name = "docs"\ntask = "classifier"\ntrain = "{data}"\ntest = "{data}"\ndev_fraction = 0.25\n'
            'samples = 10\nformat = "tsv"\n[grid]\nfeatures = "text-unigram"\nlearner = "averaged-perceptron"\n')
    config.write_text(text, "utf-8")
    before = data.read_bytes()
    assert main(["experiment", str(config), "--output", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"which is also {replaced}: writing it would destroy it" in err and len(err.splitlines()) == 1
    assert data.read_bytes() == before and config.read_text("utf-8") == text


def test_a_report_that_would_replace_a_feature_sets_clusters_is_refused(tmp_path, capsys):
    """A feature set of the grid reading its word clusters from results.csv in the report folder: the report
    replaced them (status 0) and the next run failed; now refused as the data and the configuration are."""
    data = tmp_path / "docs.tsv"
    data.write_text("".join(f"{y}\t{x}\n" for x, y in zip(NOISY_DOCS, NOISY_LABELS)), encoding="utf-8")
    report = tmp_path / "report"
    report.mkdir()
    clusters = report / "results.csv"
    clusters.write_text("0\tgood\n1\tbad\n", "utf-8")
    (tmp_path / "f.toml").write_text('name = "f"\nclusters = "report/results.csv"\n[[template]]\nname = "words"\n',
                                     "utf-8")
    config = tmp_path / "e.toml"
    config.write_text(f'name = "docs"\ntask = "classifier"\ntrain = "{data}"\ntest = "{data}"\ndev_fraction = 0.25\n'
                      'samples = 10\nformat = "tsv"\n[grid]\nfeatures = "f.toml"\nlearner = "averaged-perceptron"\n',
                      "utf-8")
    assert main(["experiment", str(config), "--output", str(report), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "which is also a file of its feature sets: writing it would destroy it" in err and len(err.splitlines()) == 1
    assert clusters.read_text("utf-8") == "0\tgood\n1\tbad\n"


@pytest.mark.parametrize("name", ["..", "."])
def test_an_experiment_named_as_a_folder_above_is_refused(tmp_path, capsys, name):
    """name = ".." wrote the report into the working folder, over its report.md."""
    config = tmp_path / "e.toml"
    config.write_text(f'name = "{name}"\ntask = "classifier"\ncorpus = "qc"\n[grid]\nfeatures = "text-unigram"\n'
                      'learner = "averaged-perceptron"\n', "utf-8")
    assert main(["experiment", str(config), "--quiet"]) == 1
    assert f"name: {name!r} must be a folder name" in capsys.readouterr().err


def test_a_report_that_cannot_be_written_leaves_the_previous_one_and_no_temporary_file(tmp_path, monkeypatch):
    """Every report file (plots included) is written atomically, and the plots of an earlier run are removed only
    once the new report is written: a full disk in the middle keeps the previous report whole."""
    data = tmp_path / "docs.tsv"
    data.write_text("".join(f"{y}\t{x}\n" for x, y in zip(NOISY_DOCS, NOISY_LABELS)), encoding="utf-8")
    config = tmp_path / "experiment.toml"
    config.write_text(f'name = "docs"\ntask = "classifier"\ntrain = "{data}"\ntest = "{data}"\ndev_fraction = 0.25\n'
                      'samples = 10\n[grid]\nfeatures = "text-unigram"\nlearner = "averaged-perceptron"\nepochs = 2\n',
                      "utf-8")
    result = run_experiment(load_config(config), command="test")
    folder = tmp_path / "report"
    written = write_report(result, folder)
    assert {p.name for p in folder.iterdir()} == {p.name for p in written}
    (folder / "ablation.png").write_bytes(b"a plot of an earlier run")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("structlin.outputs.os.fsync", full)
    with pytest.raises(OutputError, match=r"(\.png|results\.json): cannot write: No space left on device"):
        write_report(result, folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # no temporary file either
    monkeypatch.undo()
    assert write_report(result, folder) == written and not (folder / "ablation.png").exists()
