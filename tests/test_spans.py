"""Tests of structlin.spans: chunks by hand, conlleval's numbers and layout by hand, and cross-checks
with seqeval on random and malformed tag sequences (and on CoNLL-2000 when the corpus is present)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from structlin.significance import f1
from structlin.spans import (
    SCHEMES,
    evaluate_spans,
    extract_spans,
    is_bio_style,
    span_counts,
)

BIO = ["O", "B-A", "I-A", "B-B", "I-B"]
IOBES = ["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "E-B", "S-B"]

# Seqeval's default (conlleval-like) mode and its strict IOB2 mode must read these as structlin does.
MALFORMED = [
    ["I-A"],  # a chunk starting with I- (IOB1), at the sentence start
    ["O", "I-A", "I-A"],  # ... after O, running to the sentence end
    ["B-A", "I-B"],  # type change inside a chunk
    ["B-A", "I-A", "I-B", "I-B"],
    ["I-A", "I-B", "B-B"],
    ["I-B", "O", "I-B"],
    ["B-B", "B-B", "I-B"],
    ["I-A", "B-A", "I-A", "I-A", "B-B", "I-A"],
    ["O", "O", "I-A", "O", "B-A"],
    ["B-A", "O", "I-A", "I-A", "O", "I-B", "I-A"],
]


def _random_corpus(rng: random.Random, tagset: list[str], n_sentences: int) -> tuple[list, list]:
    """Gold and predicted sentences drawn uniformly from ``tagset`` (mostly malformed), with empty ones."""
    lengths = [rng.randrange(0, 10) for _ in range(n_sentences)]
    draw = [[[rng.choice(tagset) for _ in range(n)] for n in lengths] for _ in range(2)]
    return draw[0], draw[1]


# --- chunks by hand --------------------------------------------------------------------------------


@pytest.mark.parametrize("tags, conlleval, strict", [
    (["B-NP", "I-NP", "O", "B-VP"], [("NP", 0, 2), ("VP", 3, 4)], [("NP", 0, 2), ("VP", 3, 4)]),
    (["I-NP", "I-NP", "O", "I-VP"], [("NP", 0, 2), ("VP", 3, 4)], []),  # chunks starting with I-
    (["B-NP", "I-VP", "I-VP"], [("NP", 0, 1), ("VP", 1, 3)], [("NP", 0, 1)]),  # type change in a chunk
    (["B-NP", "I-NP", "B-NP"], [("NP", 0, 2), ("NP", 2, 3)], [("NP", 0, 2), ("NP", 2, 3)]),
    (["O", "B-PP", "I-PP"], [("PP", 1, 3)], [("PP", 1, 3)]),  # a chunk at the sentence end
    (["B-LONG-TYPE", "I-LONG-TYPE"], [("LONG-TYPE", 0, 2)], [("LONG-TYPE", 0, 2)]),  # split at the first hyphen
    (["B", "I", "O", "I"], [("", 0, 2), ("", 3, 4)], [("", 0, 2)]),  # untyped chunks
    (["O", "O"], [], []),
    ([], [], []),
])
def test_chunks_by_hand(tags, conlleval, strict):
    assert extract_spans(tags) == conlleval
    assert extract_spans(tags, scheme="strict-iob2") == strict


@pytest.mark.parametrize("tags, expected", [
    (["B-PER", "E-PER", "S-LOC", "B-ORG", "I-ORG", "E-ORG", "O"], [("PER", 0, 2), ("LOC", 2, 3), ("ORG", 3, 6)]),
    (["B-PER", "L-PER", "U-LOC", "B-ORG", "I-ORG", "L-ORG", "O"], [("PER", 0, 2), ("LOC", 2, 3), ("ORG", 3, 6)]),
    (["S-A", "S-A", "B-A", "S-A"], [("A", 0, 1), ("A", 1, 2), ("A", 2, 3), ("A", 3, 4)]),
    (["B-A", "E-A", "B-A", "E-A"], [("A", 0, 2), ("A", 2, 4)]),  # the original script would merge these
    (["I-NP", "E-NP", "I-NP", "I-NP", "E-NP", "E-NP"], [("NP", 0, 2), ("NP", 2, 5), ("NP", 5, 6)]),  # IOE2
    (["I-NP", "E-NP", "I-NP", "O", "I-VP"], [("NP", 0, 2), ("NP", 2, 3), ("VP", 4, 5)]),  # IOE1
])
def test_end_and_single_token_tags(tags, expected):
    assert extract_spans(tags) == expected


def test_strict_iob2_refuses_other_prefixes_and_unknown_schemes():
    with pytest.raises(ValueError, match="strict IOB2 allows only B-, I- and O tags, got 'E-A'"):
        extract_spans(["B-A", "E-A"], scheme="strict-iob2")
    with pytest.raises(ValueError, match="unknown span scheme 'iobes'; choose one of conlleval, strict-iob2"):
        extract_spans(["O"], scheme="iobes")
    with pytest.raises(ValueError, match="unknown span scheme"):
        span_counts([], [], scheme="iobes")
    assert SCHEMES == ("conlleval", "strict-iob2")


def test_is_bio_style():
    assert is_bio_style(["O", "B-NP", "I-NP"])
    assert is_bio_style(["S-LOC", "E-PER", "U-MISC", "L-ORG", "O"])
    assert is_bio_style(["O"])
    assert not is_bio_style([])
    assert not is_bio_style(["NOUN", "VERB"])
    assert not is_bio_style(["B-NP", "NN"])
    assert not is_bio_style(["B-", "O"])
    assert not is_bio_style(["-LRB-", "O"])


# --- conlleval's numbers by hand -------------------------------------------------------------------

GOLD = [["B-NP", "I-NP", "O", "B-VP", "I-VP", "B-NP"], ["B-PP", "B-NP", "I-NP"], [], ["O", "O"]]
PRED = [["B-NP", "I-NP", "O", "B-VP", "B-VP", "B-NP"], ["B-PP", "I-NP", "I-NP"], [], ["O", "I-VP"]]
# Gold: NP 0-2, VP 3-5, NP 5-6 | PP 0-1, NP 1-3.  Predicted: NP 0-2, VP 3-4, VP 4-5, NP 5-6 | PP 0-1,
# NP 1-3 (I-NP after B-PP starts a chunk) | VP 1-2.  Correct: both NP of sentence 0, PP and NP of 1.


def test_conlleval_numbers_by_hand():
    report = evaluate_spans(GOLD, PRED)
    assert (report.overall.correct, report.overall.predicted, report.overall.gold) == (4, 7, 5)
    assert report.overall.precision == pytest.approx(4 / 7)
    assert report.overall.recall == pytest.approx(4 / 5)
    assert report.overall.f1 == pytest.approx(2 / 3)  # 2PR/(P+R) = (32/35) / (48/35)
    assert report.n_tokens == 11 and report.accuracy == pytest.approx(8 / 11)
    assert {t: s.to_dict() for t, s in report.per_type.items()} == {
        "NP": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "gold": 3, "predicted": 3, "correct": 3},
        "PP": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "gold": 1, "predicted": 1, "correct": 1},
        "VP": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "gold": 1, "predicted": 3, "correct": 0},
    }
    assert span_counts(GOLD, PRED).tolist() == [[2, 4, 3], [2, 2, 2], [0, 0, 0], [0, 1, 0]]


def test_format_is_conllevals_output():
    # What the conlleval Perl script prints for GOLD and PRED.
    assert evaluate_spans(GOLD, PRED).format() == (
        "processed 11 tokens with 5 phrases; found: 7 phrases; correct: 4.\n"
        "accuracy:  72.73%; precision:  57.14%; recall:  80.00%; FB1:  66.67\n"
        "               NP: precision: 100.00%; recall: 100.00%; FB1: 100.00  3\n"
        "               PP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
        "               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  3\n")


def test_format_rounds_as_conlleval():
    # F1 = 26/64 = 40.625% exactly, but conlleval's 2PR/(P+R) on percentages gives 40.62500000000001,
    # printed 40.63: so must ours be.
    gold = [["B-A"] * 30, ["O"] * 21]
    pred = [["B-A"] * 13 + ["O"] * 17, ["B-A"] * 21]
    report = evaluate_spans(gold, pred)
    assert (report.overall.correct, report.overall.predicted, report.overall.gold) == (13, 34, 30)
    assert report.overall.f1 == pytest.approx(26 / 64)
    assert "FB1:  40.63" in report.format()


def test_no_chunks_scores_zero():
    report = evaluate_spans([["O", "O"], []], [["O", "O"], []])
    assert (report.overall.precision, report.overall.recall, report.overall.f1) == (0.0, 0.0, 0.0)
    assert report.per_type == {} and report.accuracy == 1.0
    assert f1(span_counts([["O"]], [["O"]]).sum(axis=0)) == 0.0
    nothing = evaluate_spans([], [])
    assert nothing.accuracy is None
    assert nothing.format() == "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
    assert span_counts([], []).shape == (0, 3)


def test_shape_mismatch_names_sentence_and_lengths():
    with pytest.raises(ValueError, match="gold has 2 sentences but predicted has 1"):
        span_counts([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 1: gold has 2 tokens but predicted has 1"):
        evaluate_spans([["O"], ["O", "B-A"]], [["O"], ["O"]])


def test_span_counts_give_the_f1_of_any_resample_of_sentences():
    rng = random.Random(5)
    gold, pred = _random_corpus(rng, BIO, 40)
    counts = span_counts(gold, pred)
    assert counts.shape == (40, 3) and counts.dtype == np.int64
    assert f1(counts.sum(axis=0)) == pytest.approx(evaluate_spans(gold, pred).overall.f1)
    indices = np.random.default_rng(0).integers(0, 40, size=(25, 40))
    resampled = f1(counts[indices].sum(axis=1))
    assert resampled.shape == (25,)
    for row, score in zip(indices, resampled):
        chosen = [int(i) for i in row]
        assert score == pytest.approx(evaluate_spans([gold[i] for i in chosen], [pred[i] for i in chosen]).overall.f1)


# --- cross-checks with seqeval ---------------------------------------------------------------------


def _seqeval_default_spans(tags):
    from seqeval.metrics.sequence_labeling import get_entities

    return [(type_, start, end + 1) for type_, start, end in get_entities(list(tags))]  # end inclusive there


def _seqeval_strict_spans(tags):
    from seqeval.scheme import IOB2, Tokens

    return [(e.tag, e.start, e.end) for e in Tokens(list(tags), IOB2).entities]


@pytest.mark.parametrize("tags", MALFORMED)
def test_malformed_chunks_match_seqeval(tags):
    pytest.importorskip("seqeval")
    assert extract_spans(tags) == _seqeval_default_spans(tags)
    assert extract_spans(tags, scheme="strict-iob2") == _seqeval_strict_spans(tags)


def test_random_chunks_match_seqeval():
    pytest.importorskip("seqeval")
    rng = random.Random(11)
    for _ in range(2000):
        tags = [rng.choice(BIO) for _ in range(rng.randrange(0, 12))]
        assert extract_spans(tags) == _seqeval_default_spans(tags), tags
        assert extract_spans(tags, scheme="strict-iob2") == _seqeval_strict_spans(tags), tags
        iobes = [rng.choice(IOBES) for _ in range(rng.randrange(0, 12))]
        assert extract_spans(iobes) == _seqeval_default_spans(iobes), iobes


def _assert_scores_match_seqeval(gold, pred, scheme):
    metrics = pytest.importorskip("seqeval.metrics")
    from seqeval.scheme import IOB2

    options = {"mode": "strict", "scheme": IOB2} if scheme == "strict-iob2" else {}
    report = evaluate_spans(gold, pred, scheme=scheme)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns about zero divisions and scores them 0, as conlleval
        overall = [metrics.precision_score(gold, pred, **options), metrics.recall_score(gold, pred, **options),
                   metrics.f1_score(gold, pred, **options)]
        by_type = metrics.classification_report(gold, pred, output_dict=True, **options)
    ours = report.overall
    assert [ours.precision, ours.recall, ours.f1] == pytest.approx(overall, abs=1e-10)
    if report.n_tokens:
        assert report.accuracy == pytest.approx(metrics.accuracy_score(gold, pred))
    expected = {type_: [s["precision"], s["recall"], s["f1-score"], s["support"]]
                for type_, s in by_type.items() if not type_.endswith(" avg")}
    assert {type_: [s.precision, s.recall, s.f1, s.gold] for type_, s in report.per_type.items()} == {
        type_: pytest.approx(scores, abs=1e-10) for type_, scores in expected.items()}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_random_corpora_scores_match_seqeval(scheme):
    # conlleval <-> seqeval's default mode; strict-iob2 <-> mode="strict", scheme=IOB2.
    rng = random.Random(2024)
    for _ in range(150):
        gold, pred = _random_corpus(rng, BIO, rng.randrange(1, 8))
        _assert_scores_match_seqeval(gold, pred, scheme)
    _assert_scores_match_seqeval(MALFORMED, [sentence[::-1] for sentence in MALFORMED], scheme)


@pytest.mark.corpus
@pytest.mark.parametrize("scheme", SCHEMES)
def test_conll2000_perturbed_predictions_match_seqeval(nltk_data_dir, scheme):
    from structlin.catalog import load_split

    gold = [sentence.tags for sentence in load_split("conll2000", "test", column="chunk", download=False)]
    tagset = sorted({tag for sentence in gold for tag in sentence})
    rng = random.Random(0)
    pred = [[tag if rng.random() < 0.9 else rng.choice(tagset) for tag in sentence] for sentence in gold]
    _assert_scores_match_seqeval(gold, pred, scheme)
