"""Tests of structlin.evaluation: exact hand-computed scores, edge cases, and a cross-check with NLTK."""

from __future__ import annotations

import json
import random

import pytest
from nltk.metrics import f_measure, precision, recall

from structlin.evaluation import TaggingReport, evaluate_tagging

# Two sentences, seven tokens, two errors (both in sentence 1), one unknown word ("soundly").
WORDS = [["The", "dog", "barks"], ["A", "cat", "sleeps", "soundly"]]
GOLD = [["DET", "NOUN", "VERB"], ["DET", "NOUN", "VERB", "ADV"]]
PRED = [["DET", "NOUN", "VERB"], ["DET", "VERB", "VERB", "ADJ"]]
KNOWN = {"The", "dog", "barks", "A", "cat", "sleeps"}


@pytest.fixture
def report() -> TaggingReport:
    return evaluate_tagging(GOLD, PRED, words=WORDS, known_words=KNOWN)


def test_summary_scores(report):
    assert report.n_tokens == 7
    assert report.n_sentences == 2
    assert report.accuracy == pytest.approx(5 / 7)
    assert report.sentence_accuracy == pytest.approx(1 / 2)


def test_known_unknown_split(report):
    # Known: 6 tokens, 5 right (cat NOUN->VERB is wrong); unknown: "soundly", wrong.
    assert report.n_unknown == 1
    assert report.known_accuracy == pytest.approx(5 / 6)
    assert report.unknown_accuracy == 0.0


def test_per_tag_scores(report):
    # gold counts DET 2, NOUN 2, VERB 2, ADV 1; predicted DET 2, NOUN 1, VERB 3, ADJ 1.
    expected = {
        "ADJ": (0.0, 0.0, 0.0, 0),  # never in gold: recall 0 by convention
        "ADV": (0.0, 0.0, 0.0, 1),  # never predicted: precision 0 by convention
        "DET": (1.0, 1.0, 1.0, 2),
        "NOUN": (1.0, 1 / 2, 2 / 3, 2),  # F1 = 2 * 1 * 0.5 / 1.5
        "VERB": (2 / 3, 1.0, 4 / 5, 2),  # F1 = 2 * (2/3) * 1 / (5/3)
    }
    assert list(report.per_tag) == sorted(expected)
    for tag, (p, r, f, support) in expected.items():
        scores = report.per_tag[tag]
        assert scores["precision"] == pytest.approx(p), tag
        assert scores["recall"] == pytest.approx(r), tag
        assert scores["f1"] == pytest.approx(f), tag
        assert scores["support"] == support, tag


def test_confusions(report):
    # Both confusions occur once: ties are in (gold, predicted) order.
    assert report.confusions == [("ADV", "ADJ", 1), ("NOUN", "VERB", 1)]


def test_confusions_most_frequent_first_and_capped():
    gold = [["A", "A", "B", "C", "C", "C", "B"]]
    pred = [["B", "B", "A", "A", "A", "B", "B"]]
    report = evaluate_tagging(gold, pred)
    assert report.confusions == [("A", "B", 2), ("C", "A", 2), ("B", "A", 1), ("C", "B", 1)]
    assert evaluate_tagging(gold, pred, top_confusions=2).confusions == [("A", "B", 2), ("C", "A", 2)]
    assert evaluate_tagging(gold, pred, top_confusions=0).confusions == []
    assert len(evaluate_tagging(gold, pred, top_confusions=None).confusions) == 4
    with pytest.raises(ValueError, match="top_confusions"):
        evaluate_tagging(gold, pred, top_confusions=-1)


def test_unknown_words_need_both_words_and_vocabulary():
    for kwargs in ({}, {"words": WORDS}, {"known_words": KNOWN}):
        report = evaluate_tagging(GOLD, PRED, **kwargs)
        assert report.known_accuracy is None
        assert report.unknown_accuracy is None
        assert report.n_unknown is None


def test_unknown_is_exact_form_match():
    # "the" is not "The": lower-cased forms are unknown.
    report = evaluate_tagging([["DET", "NOUN"]], [["DET", "VERB"]], words=[["the", "dog"]],
                              known_words={"The", "dog"})
    assert report.n_unknown == 1
    assert report.unknown_accuracy == 1.0
    assert report.known_accuracy == 0.0


def test_no_unknown_or_no_known_tokens_gives_none():
    all_known = evaluate_tagging(GOLD, PRED, words=WORDS, known_words=KNOWN | {"soundly"})
    assert all_known.n_unknown == 0
    assert all_known.unknown_accuracy is None
    assert all_known.known_accuracy == pytest.approx(5 / 7)
    all_unknown = evaluate_tagging(GOLD, PRED, words=WORDS, known_words=set())
    assert all_unknown.n_unknown == 7
    assert all_unknown.known_accuracy is None
    assert all_unknown.unknown_accuracy == pytest.approx(5 / 7)


def test_length_mismatch_names_sentence_and_lengths():
    with pytest.raises(ValueError, match=r"sentence 1: gold has 4 tokens but predicted has 3"):
        evaluate_tagging(GOLD, [PRED[0], PRED[1][:3]])
    with pytest.raises(ValueError, match=r"gold has 2 sentences but predicted has 1"):
        evaluate_tagging(GOLD, PRED[:1])
    with pytest.raises(ValueError, match=r"sentence 0: gold has 3 tokens but words has 2"):
        evaluate_tagging(GOLD, PRED, words=[WORDS[0][:2], WORDS[1]], known_words=KNOWN)


def test_empty_sentence_counts_as_correct_sentence():
    report = evaluate_tagging([[], ["A"], ["A"]], [[], ["A"], ["B"]])
    assert report.n_sentences == 3
    assert report.n_tokens == 2
    assert report.sentence_accuracy == pytest.approx(2 / 3)
    assert report.accuracy == pytest.approx(1 / 2)


def test_zero_tokens():
    report = evaluate_tagging([[], []], [[], []], words=[[], []], known_words=KNOWN)
    assert report.accuracy is None
    assert report.sentence_accuracy == 1.0
    assert report.known_accuracy is None and report.unknown_accuracy is None
    assert report.n_tokens == 0 and report.n_sentences == 2 and report.n_unknown == 0
    assert report.per_tag == {} and report.confusions == []
    text = report.format()
    assert "No tokens" in text
    json.dumps(report.to_dict())

    nothing = evaluate_tagging([], [])
    assert nothing.accuracy is None and nothing.sentence_accuracy is None
    assert "No tokens" in nothing.format()


def test_to_dict_is_json_serialisable(report):
    data = json.loads(json.dumps(report.to_dict()))
    assert set(data) == {"accuracy", "sentence_accuracy", "known_accuracy", "unknown_accuracy",
                         "n_tokens", "n_sentences", "n_unknown", "per_tag", "confusions"}
    assert data["n_tokens"] == 7 and data["n_unknown"] == 1
    assert data["per_tag"]["NOUN"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3),
                                       "support": 2}
    assert data["confusions"] == [{"gold": "ADV", "predicted": "ADJ", "count": 1},
                                  {"gold": "NOUN", "predicted": "VERB", "count": 1}]


def test_format(report):
    text = report.format()
    for tag in ("ADJ", "ADV", "DET", "NOUN", "VERB"):
        assert tag in text
    assert "71.43%" in text  # 5/7
    assert "50.00%" in text  # 1/2
    assert "83.33%" in text  # known 5/6
    assert "precision" in text and "support" in text
    # The per-tag table's columns are aligned: every row has the same width as its header.
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["tag"])
    table = lines[start:start + 6]
    assert len({len(line) for line in table}) == 1
    noun = next(line for line in table if line.split()[0] == "NOUN")
    assert noun.split() == ["NOUN", "100.00", "50.00", "66.67", "2"]


def test_per_tag_matches_nltk_and_brute_force_on_random_example():
    rng = random.Random(1234)
    tagset = ["ADJ", "ADV", "DET", "NOUN", "PRON", "VERB", "X"]
    gold, pred = [], []
    for _ in range(60):
        length = rng.randrange(0, 12)  # includes empty sentences
        g = [rng.choice(tagset[:-1]) for _ in range(length)]  # "X" only ever predicted
        p = [t if rng.random() < 0.7 else rng.choice(tagset) for t in g]
        gold.append(g)
        pred.append(p)
    report = evaluate_tagging(gold, pred, top_confusions=None)

    gold_flat = [t for s in gold for t in s]
    pred_flat = [t for s in pred for t in s]
    assert report.n_tokens == len(gold_flat)
    assert report.accuracy == pytest.approx(sum(a == b for a, b in zip(gold_flat, pred_flat)) / len(gold_flat))
    assert report.sentence_accuracy == pytest.approx(sum(g == p for g, p in zip(gold, pred)) / len(gold))
    assert list(report.per_tag) == sorted(set(gold_flat) | set(pred_flat))

    for tag, scores in report.per_tag.items():
        reference = {i for i, t in enumerate(gold_flat) if t == tag}
        test = {i for i, t in enumerate(pred_flat) if t == tag}
        # NLTK returns None where the convention here is 0.0.
        assert scores["precision"] == pytest.approx(precision(reference, test) or 0.0), tag
        assert scores["recall"] == pytest.approx(recall(reference, test) or 0.0), tag
        assert scores["f1"] == pytest.approx(f_measure(reference, test) or 0.0), tag
        assert scores["support"] == len(reference)

    pairs = {}
    for a, b in zip(gold_flat, pred_flat):
        if a != b:
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
    expected = sorted(((a, b, c) for (a, b), c in pairs.items()), key=lambda x: (-x[2], x[0], x[1]))
    assert report.confusions == expected


def test_classification_report_by_hand():
    from structlin.evaluation import evaluate_classification

    report = evaluate_classification(["a", "a", "b", "c"], ["a", "b", "b", "a"])
    assert report.accuracy == report.micro_f1 == 0.5
    # F1: a = 1/2 (P 1/2, R 1/2), b = 2/3 (P 1/2, R 1), c = 0
    assert report.macro_f1 == pytest.approx((0.5 + 2 / 3 + 0) / 3)
    assert report.labels == ["a", "b", "c"]
    assert report.confusion == [[1, 1, 0], [0, 1, 0], [1, 0, 0]]
    assert json.loads(json.dumps(report.to_dict()))["per_class"]["b"]["recall"] == 1.0
    assert "Macro-F1:  38.89%" in report.format()
    with pytest.raises(ValueError, match="2 instances but predicted has 1"):
        evaluate_classification(["a", "b"], ["a"])


def test_bio_tags_add_chunk_scores():
    gold = [["B-NP", "I-NP", "O", "B-VP"], ["I-PP", "B-NP"]]
    pred = [["B-NP", "I-NP", "O", "B-NP"], ["B-PP", "B-NP"]]
    report = evaluate_tagging(gold, pred)
    # Gold chunks NP, VP | PP (starting with I-), NP; predicted NP, NP | PP, NP: 3 of 4 correct.
    data = json.loads(json.dumps(report.to_dict()))
    assert data["span_precision"] == data["span_recall"] == data["span_f1"] == 0.75
    assert data["per_type"] == {
        "NP": {"precision": 2 / 3, "recall": 1.0, "f1": 0.8, "gold": 2, "predicted": 3, "correct": 2},
        "PP": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "gold": 1, "predicted": 1, "correct": 1},
        "VP": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "gold": 1, "predicted": 0, "correct": 0},
    }
    text = report.format()
    assert "Chunks (conlleval):\n  processed 6 tokens with 4 phrases; found: 4 phrases; correct: 3.\n" in text
    assert "  accuracy:  66.67%; precision:  75.00%; recall:  75.00%; FB1:  75.00\n" in text
    assert "                 NP: precision:  66.67%; recall: 100.00%; FB1:  80.00  3\n" in text


def test_non_bio_tags_have_no_chunk_scores(report):
    assert report.spans is None
    assert "span_f1" not in report.to_dict() and "Chunks" not in report.format()
    # One tag outside the BIO pattern in gold is enough: "B-NP" next to "NN" is not chunking.
    assert evaluate_tagging([["B-NP", "NN"]], [["B-NP", "NN"]]).spans is None
