"""``structlin tune`` and :mod:`structlin.tuning`: every candidate of the grid scored on dev exactly as a model
trained with it scores there, the best one saved, and bad grids refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from structlin import Classifier
from structlin.cli import main
from structlin.errors import OptionValueError
from structlin.tuning import grid

POS = ["good fun film", "great fun", "good acting good film", "great plot and fun", "fun fun fun", "lovely film"]
NEG = ["bad plot", "awful boring plot", "bad bad acting", "boring film", "awful", "dull and bad"]
TRAIN = [(x, "pos") for x in POS] + [(x, "neg") for x in NEG]
DEV = [("good fun", "pos"), ("bad boring", "neg"), ("great acting", "pos"), ("awful plot", "neg")]


def write(path, rows):
    path.write_text("".join(f"__label__{y} {x}\n" for x, y in rows), encoding="utf-8")
    return path


def test_each_candidate_scores_as_its_model_and_the_best_is_saved(tmp_path, capsys):
    train, dev, model = write(tmp_path / "train.txt", TRAIN * 3), write(tmp_path / "dev.txt", DEV), tmp_path / "m.model"
    code = main(["tune", "classifier", "--train", str(train), "--dev", str(dev), "--features", "text-unigram",
                 "--epochs", "3", "--grid", "relative_margin=0,2", "learning_rate=1", "--learner", "winnow",
                 "--json"])
    assert code == 2 and "learner 'winnow' has no option 'relative_margin'" in capsys.readouterr().err
    assert main(["tune", "classifier", "--train", str(train), "--dev", str(dev), "--features", "text-unigram",
                 "--epochs", "3", "--grid", "relative_margin=0,2", "--output", str(model), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    texts, labels = [x for x, _ in TRAIN * 3], [y for _, y in TRAIN * 3]
    for entry in result["ranking"]:
        clf = Classifier("text-unigram", "averaged-perceptron", epochs=3, seed=0, **entry["options"])
        clf.fit(texts, labels, ([x for x, _ in DEV], [y for _, y in DEV]))
        assert entry["score"] == float(np.mean(np.array(clf.predict([x for x, _ in DEV])) == [y for _, y in DEV]))
    scores = [entry["score"] for entry in result["ranking"]]
    assert scores == sorted(scores, reverse=True) and result["best"] == result["ranking"][0]["options"]
    saved = Classifier.load(model)
    assert saved.learner.relative_margin == result["best"]["relative_margin"] and saved.learner.epochs == 3
    assert [c["relative_margin"] for c in saved.learner.candidates_] == [e["options"]["relative_margin"]
                                                                         for e in result["ranking"]]


@pytest.mark.parametrize("sort", [False, True])
def test_without_dev_the_candidates_are_scored_on_the_run_train_holds_out(tmp_path, capsys, sort):
    """No dev: tune scores on what ``train`` holds out — of each label's documents, the last tenth in file order
    (seed 0): here the last 3 of each label's 30 documents; of documents sorted by their texts, a seeded random
    tenth — and trains each candidate on the rest."""
    rng = np.random.default_rng(0)  # noisy documents: which ones are held out changes the scores
    words = np.array(list("abcdefghij"))
    rows = [(" ".join(rng.choice(words, 4, p=np.r_[[0.15] * 5, [0.05] * 5] if y == "pos" else np.r_[[0.05] * 5,
                                                                                            [0.15] * 5])), y)
            for y in ["pos", "neg"] * 30]
    if sort:
        rows.sort()
    train = write(tmp_path / "train.txt", rows)
    assert main(["tune", "classifier", "--train", str(train), "--features", "text-unigram", "--epochs", "2",
                 "--grid", "relative_margin=0,2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    positions = {label: [k for k, (_, y) in enumerate(rows) if y == label] for label in ("pos", "neg")}
    held = sorted(positions["pos"][-3:] + positions["neg"][-3:])
    if sort:
        held = sorted(np.random.default_rng(0).permutation(len(rows))[:6].tolist())
    rest = [k for k in range(len(rows)) if k not in held]
    for entry in result["ranking"]:
        clf = Classifier("text-unigram", "averaged-perceptron", epochs=2, seed=0, **entry["options"])
        clf.fit([rows[k][0] for k in rest], [rows[k][1] for k in rest],
                ([rows[k][0] for k in held], [rows[k][1] for k in held]))
        predicted = clf.predict([rows[k][0] for k in held])
        assert entry["score"] == float(np.mean(np.array(predicted) == [rows[k][1] for k in held]))
    assert 0 < result["ranking"][-1]["score"] < 1


def test_grid_reads_values_as_the_learner_declares_them():
    assert grid("averaged-perceptron", ["relative_margin=1,2", "epochs=3"]) == [
        {"relative_margin": 1.0, "epochs": 3}, {"relative_margin": 2.0, "epochs": 3}]
    assert grid("svm", ["solver=bcfw,pegasos"]) == [{"solver": "bcfw"}, {"solver": "pegasos"}]
    assert grid("kernel-perceptron", ["gamma=scale,0.5"]) == [{"gamma": "scale"}, {"gamma": 0.5}]
    for items, message in ((["epochs=0"], "epochs must be at least 1"), (["relative_margin"], "expected name=value"),
                           (["solver=sgd"], "solver must be one of"), (["nonesuch=1"], "has no option 'nonesuch'"),
                           (["epochs=1", "epochs=2"], r"'epochs=2': epochs is given twice \(also 'epochs=1'\)")):
        with pytest.raises(OptionValueError, match=message):
            grid("svm" if "solver" in items[0] else "averaged-perceptron", items)
