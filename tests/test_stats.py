"""Corpus statistics: sizes, tag ambiguity, label distributions and out-of-vocabulary rates."""

from __future__ import annotations

import json

import pytest

from structlin.cli import main
from structlin.documents import Document
from structlin.readers import Sentence
from structlin.stats import corpus_stats, document_stats, format_stats

TRAIN = [Sentence(["the", "dog", "runs"], ["DET", "NOUN", "VERB"]), Sentence(["the", "runs"], ["DET", "NOUN"])]
TEST = [Sentence(["a", "dog", "runs", "runs"], ["DET", "NOUN", "VERB", "VERB"]), Sentence([], [])]


def test_tagged_corpus_counts_ambiguity_and_oov_by_hand():
    stats = corpus_stats(TRAIN)
    assert (stats["sentences"], stats["tokens"], stats["word_types"], stats["tags"]) == (2, 5, 3, 3)
    assert stats["ambiguity"] == pytest.approx(4 / 3)  # the:{DET} dog:{NOUN} runs:{VERB, NOUN}
    assert stats["ambiguous_token_fraction"] == pytest.approx(2 / 5)
    assert "oov_tokens" not in stats
    against = corpus_stats(TEST, TRAIN)
    assert against["oov_tokens"] == pytest.approx(1 / 4) and against["oov_types"] == pytest.approx(1 / 3)
    assert against["empty_sentences"] == 1 and against["max_sentence_length"] == 4


def test_document_counts_labels_and_oov_by_hand():
    train = [Document("Good film, good!", "pos"), Document(("join", "board", "as", "director"), "V"),
             Document({3: 1.0, 7: 2.0}, "pos")]
    test = [Document("A good plot", "neg"), Document("", "pos")]
    stats = document_stats(train)
    assert (stats["documents"], stats["tokens"], stats["word_types"]) == (3, 9, 8)
    assert stats["label_counts"] == {"pos": 2, "V": 1} and stats["labels"] == 2
    against = document_stats(test, train)
    assert against["oov_tokens"] == pytest.approx(2 / 3) and against["oov_types"] == pytest.approx(2 / 3)
    text = format_stats("toy", against)
    assert "OOV tokens" in text and "label distribution:" in text and "50.00%" in text


def test_cli_stats_of_named_corpora_measure_oov_against_train(nltk_data_dir, capsys):
    assert main(["corpus", "stats", "conll2000", "--split", "test", "--column", "chunk", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["sentences"] == 2012 and 0.05 < stats["oov_tokens"] < 0.2 and stats["tags"] == 19
    assert main(["corpus", "stats", "conll2000", "--split", "train", "--json"]) == 0
    assert "oov_tokens" not in json.loads(capsys.readouterr().out)  # train against itself is not measured
    assert main(["corpus", "stats", "qc", "--split", "test", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["documents"] == 500 and stats["labels"] == 6 and 0 < stats["oov_tokens"] < 0.2
    assert main(["corpus", "stats", "names"]) == 0
    out = capsys.readouterr().out
    assert "documents                  7,944" in out and "female" in out and "OOV" not in out
