"""``structlin experiment``: config checking, grids, ablations and learning curves on tiny in-test data, the
report folder, determinism, and the command end to end."""

from __future__ import annotations

import csv
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest

from structlin.cli import main
from structlin.errors import StructlinError
from structlin.experiments import load_config, plots, run_experiment, write_report
from structlin.experiments.runner import compare, subset
from structlin.significance import (
    accuracy,
    accuracy_statistics,
    approximate_randomization,
    mcnemar,
    paired_bootstrap,
)

ROOT = Path(__file__).resolve().parents[1]
WORDS = {"DET": ["the", "a", "this"], "ADJ": ["old", "big", "red"], "NOUN": ["dog", "cat", "man", "boat", "idea"],
         "VERB": ["sees", "likes", "eats"], "PUNCT": ["."]}


def _sentence(rng: random.Random, bio: bool) -> list[tuple[str, str]]:
    """A toy sentence: DET (ADJ) NOUN VERB DET NOUN ., tagged by POS or by BIO noun-phrase chunks."""
    tags = ["DET", *(["ADJ"] if rng.random() < 0.5 else []), "NOUN", "VERB", "DET", "NOUN", "PUNCT"]
    words = [rng.choice(WORDS[tag]) for tag in tags]
    if bio:
        tags = ["B-NP" if tag == "DET" else "I-NP" if tag in ("ADJ", "NOUN") else "O" for tag in tags]
    return list(zip(words, tags))


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """word<TAB>tag train/dev/test files (POS tags, and BIO chunks) and a labelled TSV of tiny documents."""
    root = tmp_path_factory.mktemp("experiment-data")
    rng = random.Random(0)
    for prefix, bio in (("", False), ("bio-", True)):
        for split, n in (("train", 40), ("dev", 10), ("test", 12)):
            sentences = [_sentence(rng, bio) for _ in range(n)]
            (root / f"{prefix}{split}.tsv").write_text(
                "".join("".join(f"{w}\t{t}\n" for w, t in s) + "\n" for s in sentences), "utf-8")
    topics = {"pets": "dog cat fur bark purr", "boats": "sail mast hull keel port"}
    lines = [f"{label}\t{' '.join(rng.choices(words.split(), k=6))}\n" for label, words in topics.items()
             for _ in range(15)]
    rng.shuffle(lines)
    (root / "docs.tsv").write_text("".join(lines), "utf-8")
    (root / "small.toml").write_text('name = "small"\n' + "".join(
        f'[[template]]\nname = "{name}"\n' for name in ("word", "suffix", "shape")), "utf-8")
    return root


TAGGER = """name = "tiny"
task = "tagger"
train = "{root}/train.tsv"
dev = "{root}/dev.tsv"
test = "{root}/test.tsv"
format = "word-tag"
bits = 14
samples = 100
"""


@pytest.fixture
def no_plots(monkeypatch):
    """Skip drawing (the slowest part of a tiny experiment) where a test does not look at plots."""
    monkeypatch.setattr(plots, "available", lambda: False)


#: The start of a classifier experiment on ``docs.tsv`` (train and test), a fifth held out as dev, text-unigram.
DOCS = """task = "classifier"
train = "{root}/docs.tsv"
test = "{root}/docs.tsv"
dev_fraction = 0.2
samples = 10
[grid]
features = "text-unigram"
"""


def write_config(tmp_path: Path, text: str, data: Path | None = None) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(text.format(root=data), "utf-8")
    return path


def run(config: Path, out: Path):
    result = run_experiment(load_config(config), command="structlin experiment test")
    write_report(result, out)
    return result


def sentence_lengths(path: Path) -> list[int]:
    """Tokens per sentence of a word<TAB>tag file (sentences end with a blank line)."""
    return [len(block.splitlines()) for block in path.read_text("utf-8").split("\n\n") if block.strip()]


def expected_comparison(reference, other, gold: list[str], samples: int, seed: int) -> dict:
    """``vars(Comparison)`` of ``other`` against ``reference`` by accuracy, straight from structlin.significance
    on the outcomes' per-sentence statistics and per-token correctness (McNemar's counts by hand)."""
    right = [[p == g for p, g in zip(o.predicted, gold)] for o in (reference, other)]
    test = mcnemar(*right)
    only = (sum(a and not b for a, b in zip(*right)), sum(b and not a for a, b in zip(*right)))
    assert (test.only_a, test.only_b) == only
    return {"difference": other.test_score - reference.test_score,
            "bootstrap": paired_bootstrap(reference.statistics, other.statistics, accuracy, samples=samples, seed=seed),
            "randomization": approximate_randomization(reference.statistics, other.statistics, accuracy,
                                                       samples=samples, seed=seed),
            "mcnemar": {"p_value": test.p_value, "method": test.method, "only_reference": only[0],
                        "only_system": only[1]}}


# --- config checking -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, key, message", [
    ("name = [", None, "invalid TOML"),
    ('name = "x"\ntask = "tagger"\ncolour = 1', "colour", "unknown key"),
    ('name = "x"\ntask = "parser"', "task", "'parser' is not one of tagger, classifier"),
    ('name = "a/b"\ntask = "tagger"', "name", "folder name"),
    ('name = "x"\ntask = "tagger"\nseed = "zero"', "seed", "expected int"),
    ('name = "x"\ntask = "classifier"\nmetric = "span_f1"', "metric", "needs task"),
    ('name = "x"\ntask = "tagger"\ncorpus = "20news-bydate"', "corpus", "holds documents data"),
    ('name = "x"\ntask = "tagger"\ncorpus = "no-such-corpus"', "corpus", "unknown corpus"),
    ('name = "x"\ntask = "tagger"\ntrain = "{root}/train.tsv"\ntest = "{root}/test.tsv"', "dev", "dev_fraction"),
    ('name = "x"\ntask = "tagger"\ntrain = "{root}/nothing.tsv"\ntest = "{root}/test.tsv"', "train", "does not exist"),
    (TAGGER + '[grid]\nfeatures = ["pos-basic"]\nlearner = ["percepton"]', "grid.learner", "unknown learner"),
    (TAGGER + '[grid]\nfeatures = ["no-such-set"]\nlearner = "perceptron"', "grid.features", "unknown feature set"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\ndecoder = "beam"', "grid.decoder",
     "unknown decoder"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = ["averaged-perceptron", "maxent"]\nl2 = [1]', "grid.l2",
     "put it in [grid.maxent]"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\nepochs = ["ten"]', "grid.epochs",
     "expected int"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\nmargin = [-1]', "grid.perceptron",
     "margin must be non-negative"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\nepochs = []', "grid.epochs", "empty list"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\nmargin = [1, 1.0]', "grid.margin",
     "1.0 is listed twice: each system is trained once"),
    (TAGGER + '[grid]\nfeatures = ["pos-basic", "pos-basic"]\nlearner = "perceptron"', "grid.features",
     "'pos-basic' is listed twice"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\nseed = [1]', "grid.seed", "has no option"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\n[grid.maxent]\nl2 = 1', "grid.maxent",
     "does not list"),
    (TAGGER + '[grid]\nlearner = "perceptron"\n[ablation]\nfeatures = "pos-basic"\n[learning_curve]\nfractions = [1]',
     "learning_curve", "not both"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\n[ablation]\nfeatures = "pos-basic"',
     "grid.features", "drop grid.features"),
    (TAGGER + '[grid]\nfeatures = "pos-basic"\nlearner = "perceptron"\n[learning_curve]\nfractions = [0, 1]',
     "learning_curve.fractions", "(0, 1]"),
    (TAGGER.replace("tagger", "classifier").replace('format = "word-tag"\n', "")
     + '[grid]\nfeatures = "text-unigram"\nlearner = "perceptron"\ndecoder = "viterbi"', "grid.decoder",
     "one decoder"),
])
def test_config_errors_name_the_file_and_key(tmp_path, data, text, key, message):
    path = write_config(tmp_path, text, data)
    with pytest.raises(StructlinError) as caught:
        load_config(path)
    error = str(caught.value)
    assert error.startswith(f"{path}: " + (f"{key}: " if key else "")), error
    assert message in error and "\n" not in error


@pytest.mark.parametrize("path", sorted((ROOT / "scripts" / "experiments").glob("*.toml")), ids=lambda p: p.name)
def test_example_configs_are_valid(path):
    config = load_config(path)
    assert config.systems and config.name == path.stem


def test_grid_names_systems_by_what_varies(tmp_path, data):
    config = load_config(write_config(tmp_path, TAGGER + """[grid]
features = ["pos-basic"]
learner = ["averaged-perceptron", "maxent"]
decoder = ["viterbi", "greedy"]
epochs = 2
[grid.maxent]
l2 = [0.5, 1]
""", data))
    assert [s.name for s in config.systems] == [
        "averaged-perceptron, viterbi", "averaged-perceptron, greedy", "maxent, viterbi, l2=0.5",
        "maxent, greedy, l2=0.5", "maxent, viterbi, l2=1", "maxent, greedy, l2=1"]
    assert config.systems[2].options == {"epochs": 2, "l2": 0.5}


def test_systems_that_cannot_train_fail_before_any_training(tmp_path, data):
    config = load_config(write_config(tmp_path, TAGGER + """[grid]
features = "pos-basic"
learner = ["averaged-perceptron", "naive-bayes"]
[grid.averaged-perceptron]
epochs = 2
""", data))
    trained = []
    with pytest.raises(StructlinError, match=r"grid: system 'naive-bayes': .*labels single instances") as caught:
        run_experiment(config, command="test", log=trained.append)
    assert str(caught.value).startswith(f"{config.path}: ") and not trained


# --- running and reporting -----------------------------------------------------------------------------------


GRID = TAGGER + """[grid]
features = ["pos-basic"]
learner = ["averaged-perceptron", "maxent"]
decoder = ["viterbi", "greedy"]
epochs = 1
"""  # one epoch: after three, every system tags this tiny test set perfectly and no test has anything to tell apart


def test_grid_writes_every_report_file_with_a_consistent_ranking(tmp_path, data):
    out = tmp_path / "report"
    began = time.perf_counter()
    result = run(write_config(tmp_path, GRID, data), out)
    wall = time.perf_counter() - began
    plotted = ["dev_curves.png", "confusion.png"] if plots.available() else []
    assert [p.name for p in sorted(out.iterdir())] == sorted(["results.json", "results.csv", "report.md", *plotted])

    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert len(rows) == 4 and [int(r["rank"]) for r in rows] == [1, 2, 3, 4]
    scores = [(float(r["test_score"]), float(r["dev_score"])) for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert rows[0]["p_bootstrap"] == rows[0]["p_randomization"] == rows[0]["p_mcnemar"] == ""

    # Every outcome's statistics are its test sentences' (correct, tokens), and its score their accuracy.
    gold, lengths = result.gold, sentence_lengths(data / "test.tsv")
    assert len(gold) == sum(lengths)
    for o in result.outcomes:
        right = [p == g for p, g in zip(o.predicted, gold)]
        assert len(o.predicted) == len(gold)
        np.testing.assert_array_equal(o.statistics, accuracy_statistics(right, lengths))
        assert o.test_score == pytest.approx(sum(right) / len(gold))

    # The p-values are those of structlin.significance on the same statistics, against the best system.
    best, config = result.outcomes[0], result.config
    assert result.comparisons[0] is None and (config.samples, config.seed) == (100, 0)
    expected = [expected_comparison(best, o, gold, config.samples, config.seed) for o in result.outcomes[1:]]
    assert [vars(c) for c in result.comparisons[1:]] == expected
    assert min(c["bootstrap"] for c in expected) < 1  # the systems differ: the tests have something to tell apart
    for row, comparison in zip(rows[1:], expected):
        assert (float(row["p_bootstrap"]), float(row["p_randomization"]), float(row["p_mcnemar"])) == (
            comparison["bootstrap"], comparison["randomization"], comparison["mcnemar"]["p_value"])
        # p = (1 + extreme samples) / (samples + 1) for the two resampling tests
        for p in (comparison["bootstrap"], comparison["randomization"]):
            assert (p * 101) == pytest.approx(round(p * 101)) and 1 <= round(p * 101) <= 101
    # A system against itself: no difference, and p = 1 in every test.
    same = compare(best, best, gold, result.metric, config.samples, config.seed)
    assert vars(same) == {"difference": 0.0, "bootstrap": 1.0, "randomization": 1.0,
                          "mcnemar": {"p_value": 1.0, "method": "exact", "only_reference": 0, "only_system": 0}}

    results = json.loads((out / "results.json").read_text("utf-8"))
    assert results["metric"] == "accuracy" and results["data"]["train"]["units"] == 40
    for system, row, o, comparison in zip(results["systems"], rows, result.outcomes, [None, *expected]):
        assert system["name"] == row["system"] and system["test_score"] == pytest.approx(system["test"]["accuracy"])
        assert 1 <= system["best_epoch"] <= len(system["history"]) <= 3
        assert system["model_bytes"] > 0 and system["weights_kept"] > 0
        assert system["versus_best"] == comparison
        assert system["train_seconds"] == o.train_seconds and isinstance(o.train_seconds, float)
        assert o.train_seconds > 0 and float(row["train_seconds"]) == round(o.train_seconds, 2)
    # Training times are parts of the run: together no longer than the run, which the test's clock bounds.
    assert sum(o.train_seconds for o in result.outcomes) <= result.seconds == results["seconds"] <= wall

    report = (out / "report.md").read_text("utf-8")
    ranked = [line.split(" | ")[1] for line in report.splitlines() if line.startswith(("| 1 |", "| 2 |", "| 3 |",
                                                                                        "| 4 |"))]
    assert ranked == [o.system.name for o in result.outcomes] == [r["system"] for r in rows]
    assert "](dev_curves.png)" in report and "## Significance against the best system" in report


def test_same_seed_same_results(tmp_path, data, no_plots):
    config = write_config(tmp_path, GRID, data)
    first, second = (run(config, tmp_path / name) for name in ("a", "b"))

    def measured(result):
        return [(o.system.name, o.test_score, o.dev_score, o.best_epoch, o.weights_kept,
                 [{k: v for k, v in r.items() if k != "seconds"} for r in o.history]) for o in result.outcomes]

    assert measured(first) == measured(second)
    assert [vars(c) for c in first.comparisons[1:]] == [vars(c) for c in second.comparisons[1:]]


def test_ablation_trains_the_full_set_and_one_system_per_template(tmp_path, data):
    out = tmp_path / "report"
    result = run(write_config(tmp_path, TAGGER + f"""[grid]
learner = "averaged-perceptron"
epochs = 2
[ablation]
features = "{data}/small.toml"
""", data), out)
    dropped = sorted(o.system.settings()["ablated"] or "" for o in result.outcomes)
    assert dropped == ["", "shape", "suffix", "word"]
    assert all(len(o.system.features.templates) == (3 if o.system.ablated is None else 2) for o in result.outcomes)
    report = (out / "report.md").read_text("utf-8")
    assert "## Ablation" in report and "| `suffix` |" in report
    assert (out / "ablation.png").is_file() == plots.available()
    table = json.loads((out / "results.json").read_text("utf-8"))["ablation"]
    assert sorted(row["template"] for row in table) == ["shape", "suffix", "word"]
    # Each ablated system is compared with the full feature set by structlin.significance on their statistics.
    full = next(o for o in result.outcomes if o.system.ablated is None)
    config = result.config
    for row in table:
        ablated = next(o for o in result.outcomes if o.system.settings()["ablated"] == row["template"])
        assert row["versus_full"] == expected_comparison(full, ablated, result.gold, config.samples, config.seed)
        assert row["test_loss"] == full.test_score - ablated.test_score
        assert row["dev_loss"] == full.dev_score - ablated.dev_score


def test_learning_curve_trains_on_nested_subsets(tmp_path, data):
    out = tmp_path / "report"
    result = run(write_config(tmp_path, TAGGER + """[grid]
features = "pos-basic"
learner = "averaged-perceptron"
epochs = 2
[learning_curve]
fractions = [1.0, 0.25, 0.5]
""", data), out)
    assert sorted(o.train_units for o in result.outcomes) == [10, 20, 40]
    items = list(range(40))
    assert set(subset(items, 0.25, 3)) < set(subset(items, 0.5, 3)) < set(items)
    assert subset(items, 0.5, 3) == sorted(subset(items, 0.5, 3)) != subset(items, 0.5, 4)
    report = (out / "report.md").read_text("utf-8")
    assert "## Learning curve" in report and "| 25% | 10 |" in report
    assert (out / "learning_curve.png").is_file() == plots.available()


def test_bio_tags_are_scored_by_span_f1(tmp_path, data, no_plots):
    text = GRID.replace("train.tsv", "bio-train.tsv").replace("dev.tsv", "bio-dev.tsv").replace("test.tsv",
                                                                                               "bio-test.tsv")
    result = run(write_config(tmp_path, text, data), tmp_path / "report")
    assert result.metric == "span_f1"
    assert all(c.mcnemar is None for c in result.comparisons[1:])
    best = result.outcomes[0]
    assert best.test_score == pytest.approx(best.test_report["span_f1"])


def test_classifier_grid_with_held_out_dev_and_support_examples(tmp_path, data, no_plots):
    out = tmp_path / "report"
    result = run(write_config(tmp_path, f"""name = "docs"
task = "classifier"
train = "{data}/docs.tsv"
test = "{data}/docs.tsv"
dev_fraction = 0.2
samples = 100
[grid]
features = "text-unigram"
learner = ["averaged-perceptron", "kernel-perceptron"]
epochs = 2
""", data), out)
    assert result.sizes["train"][0] == 24 and result.sizes["dev"][0] == 6 and result.unit == "document"
    kernel = next(o for o in result.outcomes if o.system.learner == "kernel-perceptron")
    assert kernel.n_support > 0 and kernel.weights_kept is None
    assert "support examples" in (out / "report.md").read_text("utf-8")


def test_a_grid_takes_a_cost_matrix_file_relative_to_the_config(tmp_path, data, no_plots):
    """A file-valued option (the SVM's cost matrix) is given by its path, read by the option's own parser:
    the systems are named by the file and the trained learner holds its costs; a missing or malformed file
    fails on loading with the key."""
    (tmp_path / "cheap.tsv").write_text("\tpets\tboats\npets\t0\t0.5\nboats\t0.5\t0\n", "utf-8")
    (tmp_path / "dear.tsv").write_text("\tpets\tboats\npets\t0\t3\nboats\t3\t0\n", "utf-8")
    text = 'name = "costs"\n' + DOCS + 'learner = "svm"\nepochs = 2\ncost_matrix = COSTS\n'
    config = load_config(write_config(tmp_path, text.replace("COSTS", '["cheap.tsv", "dear.tsv"]'), data))
    assert [s.name for s in config.systems] == [f"cost_matrix={tmp_path / name}" for name in ("cheap.tsv", "dear.tsv")]
    assert config.systems[1].learner_options() == {"epochs": 2, "cost_matrix": {"pets": {"pets": 0.0, "boats": 3.0},
                                                                                  "boats": {"pets": 3.0, "boats": 0.0}}}
    result = run_experiment(config, command="structlin experiment test")
    assert len(result.outcomes) == 2
    (tmp_path / "bad.tsv").write_text("\tpets\tboats\npets\t0\tx\n", "utf-8")
    for value, message in (('["missing.tsv"]', "missing.tsv does not exist"), ('["bad.tsv"]', "expected numeric costs"),
                           ("[3]", "expected the path of a file, got 3")):
        with pytest.raises(StructlinError, match="grid.cost_matrix: .*" + message):
            load_config(write_config(tmp_path, text.replace("COSTS", value), data))


def test_without_matplotlib_the_report_says_how_to_get_plots(tmp_path, data, no_plots):
    out = tmp_path / "report"
    run(write_config(tmp_path, GRID, data), out)
    assert not list(out.glob("*.png"))
    assert "pip install 'structlin[plot]'" in (out / "report.md").read_text("utf-8")


def test_command_end_to_end(tmp_path, data, capsys):
    config = write_config(tmp_path, GRID, data)
    out = tmp_path / "out"
    assert main(["experiment", str(config), "--output", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 5 and printed[0].startswith("[1/4] ") and str(out / "report.md") in printed[-1]
    assert f"structlin experiment {config} --output {out}" in (out / "report.md").read_text("utf-8")

    assert main(["experiment", str(config), "--output", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == ""

    config.write_text(GRID.format(root=data).replace('task = "tagger"', 'task = "tagging"'), "utf-8")
    assert main(["experiment", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"structlin: error: {config}: task: ") and err.count("\n") == 1


def test_a_fraction_of_the_learning_curve_too_small_to_train_is_named(tmp_path, data, no_plots):
    """The smallest fraction of a curve held one label: "training data: 1 distinct label" named neither the
    configuration nor the fraction."""
    config = write_config(tmp_path, 'name = "docs"\n' + DOCS + 'learner = "averaged-perceptron"\nepochs = 2\n'
                          '[learning_curve]\nfractions = [0.01, 1.0]\n', data)
    with pytest.raises(StructlinError, match=r"experiment\.toml: learning_curve\.fractions: 0\.01 of the training data "
                                             r"\(1 document\): training data: 1 distinct label"):
        run(config, tmp_path / "report")
