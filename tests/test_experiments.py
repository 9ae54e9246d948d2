"""Cross-validation: seeded folds that partition the data, and scores that match the folds' reports."""

from __future__ import annotations

import json

import numpy as np
import pytest

from structlin import Classifier
from structlin.cli import main
from structlin.errors import StructlinError
from structlin.experiments import cross_validate, kfold_indices

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


def test_cross_validate_scores_each_fold():
    result = cross_validate(lambda: Classifier("text-unigram", epochs=3, progress=False), DOCS, LABELS, folds=4, seed=1)
    assert [r["fold"] for r in result["per_fold"]] == [1, 2, 3, 4]
    assert sum(r["n_test"] for r in result["per_fold"]) == len(DOCS)
    assert result["accuracy"] == pytest.approx(np.mean([r["accuracy"] for r in result["per_fold"]]))
    assert 0 <= result["macro_f1"] <= 1


def test_cross_validate_command(tmp_path, capsys):
    data = tmp_path / "data.tsv"
    data.write_text("".join(f"{y}\t{x}\n" for x, y in zip(DOCS, LABELS)), encoding="utf-8")
    assert main(["cross-validate", "--train", str(data), "--folds", "4", "--features", "text-unigram",
                 "--epochs", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["folds"] == 4 and len(result["per_fold"]) == 4
