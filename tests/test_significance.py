"""Paired significance tests (structlin.significance) against hand-computed values and exact enumeration,
and the ``structlin compare`` command."""

from __future__ import annotations

import json
import math
from importlib.resources import files
from itertools import combinations_with_replacement

import numpy as np
import pytest
from test_cli import SMALL_CONLLU, assert_one_line_error, cut_conllu, run

from structlin import Tagger
from structlin.cli import main
from structlin.readers import read_conllu
from structlin.spans import evaluate_spans, span_counts
from structlin.significance import (
    accuracy,
    accuracy_statistics,
    approximate_randomization,
    f1,
    mcnemar,
    paired_bootstrap,
)


def train(*argv) -> int:
    """Run ``structlin train`` quietly; its exit status."""
    return main(["train", *map(str, argv), "-q"])


def flags(right_a_only: int, right_b_only: int, both: int = 5, neither: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Per-item correctness of systems A and B with the given counts of each combination."""
    a = [True] * right_a_only + [False] * right_b_only + [True] * both + [False] * neither
    b = [False] * right_a_only + [True] * right_b_only + [True] * both + [False] * neither
    return np.array(a), np.array(b)


def synthetic(seed: int, n_units: int, accuracy_a: float, accuracy_b: float):
    """Per-sentence (correct, total) statistics of two taggers with independent token errors, and their flags."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, 30, n_units)
    correct_a, correct_b = (rng.random(lengths.sum()) < p for p in (accuracy_a, accuracy_b))
    return accuracy_statistics(correct_a, lengths), accuracy_statistics(correct_b, lengths), correct_a, correct_b


# --- metrics and statistics ------------------------------------------------------------------------------------


def test_metrics_of_summed_statistics():
    assert accuracy([3, 4]) == 0.75
    assert f1([2, 3, 5]) == 0.5  # P = 2/3, R = 2/5: 2PR / (P + R) = 0.5
    assert accuracy([0, 0]) == 0 and f1([0, 0, 0]) == 0
    np.testing.assert_allclose(accuracy([[1, 2], [3, 3], [0, 0]]), [0.5, 1.0, 0.0])  # a stack of resampled sums


def test_accuracy_statistics_count_items_per_unit():
    stats = accuracy_statistics([True, False, True, True, False], [2, 0, 3])
    np.testing.assert_array_equal(stats, [[1, 2], [0, 0], [2, 3]])


# --- McNemar ----------------------------------------------------------------------------------------------------


def test_mcnemar_exact_binomial_by_hand():
    result = mcnemar(*flags(10, 2))
    # 2·P(X ≤ 2) for X ~ Binomial(12, 1/2) = 2·(1 + 12 + 66) / 4096
    assert result.p_value == pytest.approx(158 / 4096, rel=1e-12) and result.p_value == pytest.approx(0.0385742, 1e-6)
    assert (result.only_a, result.only_b, result.discordant, result.method) == (10, 2, 12, "exact")
    assert mcnemar(*flags(2, 10)).p_value == result.p_value


def test_mcnemar_chi_square_by_hand():
    result = mcnemar(*flags(40, 20))
    statistic = (abs(40 - 20) - 1) ** 2 / 60
    # The chi-square survival function on 1 degree of freedom is erfc(sqrt(x / 2)).
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(statistic / 2)), rel=1e-10)
    assert result.p_value == pytest.approx(0.014171, rel=1e-4) and result.method == "chi2"


def test_mcnemar_switches_to_chi_square_at_25_discordant_items():
    assert mcnemar(*flags(12, 12)).method == "exact"
    assert mcnemar(*flags(13, 12)).method == "chi2"
    assert mcnemar(*flags(13, 12)).p_value == 1.0  # |b − c| − 1 = 0
    assert mcnemar(*flags(3, 1), exact_below=0).method == "chi2"
    assert mcnemar(*flags(0, 0)).p_value == 1.0


def test_mcnemar_refuses_unpaired_flags():
    with pytest.raises(ValueError, match="different shapes"):
        mcnemar([True, False], [True])


# --- resampling tests -------------------------------------------------------------------------------------------

RESAMPLING = [paired_bootstrap, approximate_randomization]


@pytest.mark.parametrize("test", RESAMPLING)
def test_same_seed_same_p_value(test):
    a, b, _, _ = synthetic(0, 300, 0.90, 0.91)  # 300 units: the samples are drawn in two blocks
    assert test(a, b, seed=7) == test(a, b, seed=7)
    assert test(a, b, seed=7) != test(a, b, seed=8)


@pytest.mark.parametrize("test", RESAMPLING)
def test_identical_systems_give_p_one(test):
    a, _, _, _ = synthetic(1, 50, 0.9, 0.9)
    assert test(a, a.copy(), samples=1000) == 1.0


@pytest.mark.parametrize("test", RESAMPLING)
def test_clearly_different_systems_give_small_p(test):
    a, b, _, _ = synthetic(2, 200, 0.85, 0.92)
    assert test(a, b, samples=2000) < 0.01
    assert test(a, b, samples=2000) == 1 / 2001  # no sample is as extreme


def test_tests_agree_on_a_moderate_difference():
    a, b, correct_a, correct_b = synthetic(0, 200, 0.90, 0.91)
    p_values = [mcnemar(correct_a, correct_b).p_value, paired_bootstrap(a, b), approximate_randomization(a, b)]
    assert all(0.02 < p < 0.2 for p in p_values), p_values
    assert max(p_values) < 2 * min(p_values), p_values


def test_f1_statistics_are_resampled_as_sums():
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 6, 100)
    guessed_a, guessed_b = rng.integers(0, 6, 100), rng.integers(0, 6, 100)
    a = np.column_stack([np.minimum(gold, guessed_a), guessed_a, gold])
    b = np.column_stack([np.minimum(gold, guessed_b), guessed_b, gold])
    # A literal loop over the same draws (500 samples of 100 units come in one block of rng.integers calls):
    # every resampled test set is scored by F1 of its summed counts, never by averaging per-unit F1.
    observed = f1(a.sum(axis=0)) - f1(b.sum(axis=0))
    rng = np.random.default_rng(4)
    extreme = 0
    for picks in rng.integers(0, 100, size=(500, 100)):
        extreme += abs(f1(a[picks].sum(axis=0)) - f1(b[picks].sum(axis=0)) - observed) >= abs(observed) - 1e-12
    assert paired_bootstrap(a, b, f1, samples=500, seed=4) == (extreme + 1) / 501
    rng = np.random.default_rng(4)
    extreme = 0
    for swap in rng.integers(0, 2, size=(500, 100), dtype=bool):
        a_, b_ = np.where(swap[:, None], b, a), np.where(swap[:, None], a, b)
        extreme += abs(f1(a_.sum(axis=0)) - f1(b_.sum(axis=0))) >= abs(observed) - 1e-12
    assert approximate_randomization(a, b, f1, samples=500, seed=4) == (extreme + 1) / 501
    assert 1 < extreme < 499  # neither test is at an extreme, so their counts tell the loops apart
    assert paired_bootstrap(a, a, f1, samples=500) == approximate_randomization(a, a, f1, samples=500) == 1.0


def test_randomization_matches_exact_enumeration_of_all_swaps():
    a, b, _, _ = synthetic(0, 10, 0.85, 0.90)
    swaps = (np.arange(2**10)[:, None] >> np.arange(10)) & 1  # every subset of the 10 units
    moved = swaps @ (b - a)
    shuffled = accuracy(a.sum(axis=0) + moved) - accuracy(b.sum(axis=0) - moved)
    observed = accuracy(a.sum(axis=0)) - accuracy(b.sum(axis=0))
    exact = np.mean(np.abs(shuffled) >= abs(observed) - 1e-12)
    assert 0.05 < exact < 0.95
    samples = 20_000
    estimate = approximate_randomization(a, b, samples=samples, seed=5)
    assert abs(estimate - exact) < 4 * math.sqrt(exact * (1 - exact) / samples) + 1 / samples


def test_bootstrap_matches_exact_enumeration_of_all_resamples():
    a, b, _, _ = synthetic(0, 7, 0.85, 0.90)
    n = len(a)
    observed = accuracy(a.sum(axis=0)) - accuracy(b.sum(axis=0))
    exact = 0.0
    for picks in combinations_with_replacement(range(n), n):  # every multiset of n units, by its probability
        copies = np.bincount(picks, minlength=n)
        probability = math.factorial(n) / math.prod(math.factorial(k) for k in copies) / n**n
        shifted = accuracy(copies @ a) - accuracy(copies @ b) - observed
        exact += probability * (abs(shifted) >= abs(observed) - 1e-12)
    assert 0.05 < exact < 0.95
    samples = 20_000
    estimate = paired_bootstrap(a, b, samples=samples, seed=5)
    assert abs(estimate - exact) < 4 * math.sqrt(exact * (1 - exact) / samples) + 1 / samples


@pytest.mark.parametrize("test", RESAMPLING)
def test_bad_statistics_raise(test):
    with pytest.raises(ValueError, match="same shape"):
        test(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="at least one unit"):
        test(np.ones((0, 2)), np.ones((0, 2)))
    with pytest.raises(ValueError, match="samples must be at least 1"):
        test(np.ones((3, 2)), np.ones((3, 2)), samples=0)


# --- structlin compare ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def taggers(request, tmp_path_factory):
    """Two taggers trained on 300 EWT sentences, with pos-basic without and with its suffix template, and
    100 test sentences."""
    ewt_dir = request.getfixturevalue("ewt_dir")
    root = tmp_path_factory.mktemp("compare")
    training, test = root / "train.conllu", root / "test.conllu"
    cut_conllu(ewt_dir / "en_ewt-ud-train.conllu", training, 0, 300)
    cut_conllu(ewt_dir / "en_ewt-ud-dev.conllu", test, 0, 100)
    basic = (files("structlin.features") / "pos-basic.toml").read_text("utf-8")
    suffix = '[[template]]\nname = "suffix"\nlengths = [1, 2, 3]\n\n'
    assert suffix in basic
    no_suffix = root / "no-suffix.toml"
    no_suffix.write_text(basic.replace(suffix, ""), "utf-8")
    models = root / "a.model", root / "b.model"
    for features, model in zip((no_suffix, "pos-basic"), models):
        assert train("tagger", "--train", training, "--epochs", "2", "--bits", "16", "--features", features,
                     "--output", model) == 0
    return *models, test


@pytest.mark.corpus
def test_compare_taggers_json(taggers, capsys):
    a, b, test = taggers
    code, out, err = run(capsys, "compare", a, b, "--test", test, "--json", "--samples", "2000", "--seed", "3")
    assert code == 0 and err == "" and len(out.strip().splitlines()) == 1
    result = json.loads(out)
    sentences = list(read_conllu(test))
    assert result["a"] == {"model": str(a), "accuracy": pytest.approx(Tagger.load(a).accuracy(sentences))}
    assert result["b"] == {"model": str(b), "accuracy": pytest.approx(Tagger.load(b).accuracy(sentences))}
    assert result["difference"] == pytest.approx(result["b"]["accuracy"] - result["a"]["accuracy"])
    assert result["difference"] > 0  # suffixes help
    assert (result["unit"], result["units"]) == ("sentence", 100)
    tests = result["tests"]
    assert set(tests) == {"mcnemar", "bootstrap", "randomization"}
    assert tests["mcnemar"]["item"] == "token" and tests["mcnemar"]["items"] == sum(len(s.words) for s in sentences)
    assert tests["mcnemar"]["discordant"] == tests["mcnemar"]["only_a"] + tests["mcnemar"]["only_b"]
    assert tests["mcnemar"]["method"] == "chi2" and tests["mcnemar"]["p_value"] < 0.05
    for name in ("bootstrap", "randomization"):
        assert tests[name]["samples"] == 2000 and tests[name]["seed"] == 3  # p-values: checked exactly below
    # The library's functions on the same statistics give the same p-values.
    gold = np.array([t for s in sentences for t in s.tags])
    predicted = [np.array([t for tags in Tagger.load(m).predict(sentences) for t in tags]) for m in (a, b)]
    stats = [accuracy_statistics(p == gold, [len(s.words) for s in sentences]) for p in predicted]
    assert tests["bootstrap"]["p_value"] == paired_bootstrap(*stats, samples=2000, seed=3)
    assert tests["randomization"]["p_value"] == approximate_randomization(*stats, samples=2000, seed=3)
    assert tests["mcnemar"]["p_value"] == mcnemar(*(p == gold for p in predicted)).p_value
    assert run(capsys, "compare", a, b, "--test", test, "--json", "--samples", "2000", "--seed", "3")[1] == out


@pytest.mark.corpus
def test_compare_taggers_text(taggers, capsys):
    a, b, test = taggers
    code, out, err = run(capsys, "compare", a, b, "--test", test, "--samples", "500")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 6
    assert lines[0].startswith(f"a: {a}  accuracy ") and lines[1].startswith(f"b: {b}  accuracy ")
    assert lines[2].startswith("difference b − a: +") and "on 100 sentences (" in lines[2]
    assert lines[3].startswith("McNemar's test (chi2): p = ") and "discordant tokens" in lines[3]
    assert lines[4].startswith("paired bootstrap: p = ") and "500 samples of sentences, seed 0" in lines[4]
    assert lines[5].startswith("approximate randomization: p = ")


def test_compare_classifiers_counts_documents(tmp_path, capsys):
    data = tmp_path / "train.txt"
    data.write_text("__label__pos good fun\n__label__neg bad plot\n__label__pos great film\n__label__neg awful\n",
                    "utf-8")
    models = tmp_path / "a.model", tmp_path / "b.model"
    for features, model in zip(("text-unigram", "text-ngrams"), models):
        assert train("classifier", "--train", data, "--features", features, "--output", model) == 0
    code, out, _ = run(capsys, "compare", *models, "--test", data, "--json", "--samples", "100")
    result = json.loads(out)
    assert code == 0 and (result["unit"], result["units"]) == ("document", 4)
    assert (result["tests"]["mcnemar"]["item"], result["tests"]["mcnemar"]["items"]) == ("document", 4)


def test_compare_errors_are_one_line(tmp_path, capsys):
    tagged = tmp_path / "small.conllu"
    tagged.write_text(SMALL_CONLLU, "utf-8")
    tagger = tmp_path / "t.model"
    assert train("tagger", "--train", tagged, "--output", tagger, "--features", "pos-basic", "--bits", "12") == 0
    documents = tmp_path / "docs.txt"
    documents.write_text("__label__pos good\n__label__neg bad\n", "utf-8")
    classifier = tmp_path / "c.model"
    assert train("classifier", "--train", documents, "--output", classifier) == 0

    assert_one_line_error(*run(capsys, "compare", tagger, classifier, "--test", tagged),
                          f"cannot compare {tagger}, a tagger, with {classifier}, a classifier")
    assert_one_line_error(*run(capsys, "compare", tagger, tagger, "--corpus", "20news-bydate"),
                          "'20news-bydate' holds labelled documents")
    assert_one_line_error(*run(capsys, "compare", tagger, tmp_path / "none.model", "--test", tagged),
                          "none.model: model file not found")
    assert_one_line_error(*run(capsys, "compare", tagger, tagger, "--test", tmp_path / "none.conllu"), "none.conllu")
    code, out, err = run(capsys, "compare", tagger, tagger, "--test", tagged, "--samples", "0")
    assert code == 2 and out == "" and "argument --samples: expected an integer of at least 1, got 0" in err
    xpos = tmp_path / "x.model"
    assert train("tagger", "--train", tagged, "--column", "xpos", "--output", xpos, "--features", "pos-basic") == 0
    assert_one_line_error(*run(capsys, "compare", tagger, xpos, "--test", tagged), "tags upos", "tags xpos",
                          "--column")
    # the gold column chosen, the UPOS tagger predicts none of its tags: refused as evaluate refuses it
    assert_one_line_error(*run(capsys, "compare", tagger, xpos, "--test", tagged, "--column", "xpos"),
                          f"is one {tagger} predicts")
    assert run(capsys, "compare", xpos, xpos, "--test", tagged, "--column", "xpos")[0] == 0


def test_compare_chunkers_adds_span_f1_with_its_tests(tmp_path, capsys):
    sentences = [[("the", "B-NP"), ("old", "I-NP"), ("man", "I-NP"), ("sleeps", "B-VP")],
                 [("a", "B-NP"), ("dog", "I-NP"), ("barks", "B-VP"), (".", "O")],
                 [("dogs", "B-NP"), ("sleep", "B-VP"), ("in", "B-PP"), ("the", "B-NP"), ("house", "I-NP")]]
    data = tmp_path / "chunks.tsv"
    data.write_text("\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) for s in sentences) + "\n", "utf-8")
    models = tmp_path / "a.model", tmp_path / "b.model"
    for epochs, model in zip((1, 5), models):
        assert train("tagger", "--train", data, "--features", "pos-basic", "--epochs", epochs, "--output", model) == 0
    code, out, _ = run(capsys, "compare", *models, "--test", data, "--json", "--samples", "200")
    result = json.loads(out)
    gold = [[t for _, t in s] for s in sentences]
    predicted = [Tagger.load(m).predict([[w for w, _ in s] for s in sentences]) for m in models]
    expected = [evaluate_spans(gold, p).overall.f1 for p in predicted]
    spans = result["span_f1"]
    assert code == 0 and [spans["a"], spans["b"]] == pytest.approx(expected)
    assert spans["difference"] == pytest.approx(expected[1] - expected[0])
    # The p-values are the library's on the sentences' (correct, predicted, gold) chunk counts, seed 0.
    counts = [span_counts(gold, p) for p in predicted]
    assert [f1(c.sum(axis=0)) for c in counts] == pytest.approx(expected)
    assert spans["bootstrap"] == paired_bootstrap(*counts, f1, samples=200, seed=0)
    assert spans["randomization"] == approximate_randomization(*counts, f1, samples=200, seed=0)
    code, text, _ = run(capsys, "compare", *models, "--test", data, "--samples", "200")
    assert code == 0 and text.splitlines()[-1].startswith("span F1: a ")
