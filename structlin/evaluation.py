"""Evaluation of taggers (sequence labelling): accuracy, per-tag scores and confusions.

:func:`evaluate_tagging` compares gold and predicted tag sequences sentence by sentence and returns a
:class:`TaggingReport` with

* token accuracy (correct tokens / tokens) and sentence accuracy (sentences with every tag right /
  sentences); an empty sentence has no wrong tag, so it counts as a correct sentence;
* accuracy on known and unknown words, when the word forms and the training vocabulary are given
  (a token is *unknown* when its exact form is not in the vocabulary);
* per-tag precision, recall and F1, with ``tp`` = tokens tagged ``t`` in gold and prediction,
  ``fp`` = tokens predicted ``t`` but gold another tag, ``fn`` = tokens gold ``t`` but predicted
  another tag::

      P = tp / (tp + fp)      R = tp / (tp + fn)      F1 = 2PR / (P + R)

  with 0 for an empty denominator (P of a tag never predicted, R of a tag never in gold, F1 when
  P + R = 0);
* the most frequent confusions (gold tag, predicted tag, count) with gold != predicted;
* chunk (span) precision, recall and F1, overall and per chunk type, when every gold tag is ``O`` or
  ``[BIESLU]-TYPE`` (chunking, named entities): see :mod:`structlin.spans` (conlleval's rules).

Tags are mapped to integer ids and counted with :func:`numpy.bincount` over a tag x tag confusion
matrix, so a corpus of some 10^5 tokens is evaluated in milliseconds.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field

import numpy as np

from .joint import ordered_labels
from .spans import SpanReport, evaluate_spans, is_bio_style

__all__ = ["ClassificationReport", "TaggingReport", "evaluate_classification", "evaluate_tagging"]


@dataclass
class TaggingReport:
    """The result of :func:`evaluate_tagging`.

    Fractions are in [0, 1]; ``None`` marks a score that is undefined (no tokens, no sentences, no
    known or no unknown tokens, or no word forms / vocabulary given).  ``spans`` holds the chunk
    scores of BIO-style gold tags, and is ``None`` for other tag sets.
    """

    accuracy: float | None
    sentence_accuracy: float | None
    known_accuracy: float | None
    unknown_accuracy: float | None
    n_tokens: int
    n_sentences: int
    n_unknown: int | None
    per_tag: dict[str, dict[str, float | int]] = field(default_factory=dict)
    confusions: list[tuple[str, str, int]] = field(default_factory=list)
    spans: SpanReport | None = None

    def to_dict(self) -> dict:
        """A JSON-serialisable dict of every field; confusions become ``{"gold", "predicted", "count"}``.

        With chunk scores it also has ``span_precision``, ``span_recall``, ``span_f1`` and ``per_type``
        (``{type: {"precision", "recall", "f1", "gold", "predicted", "correct"}}``).
        """
        data = {
            "accuracy": self.accuracy,
            "sentence_accuracy": self.sentence_accuracy,
            "known_accuracy": self.known_accuracy,
            "unknown_accuracy": self.unknown_accuracy,
            "n_tokens": self.n_tokens,
            "n_sentences": self.n_sentences,
            "n_unknown": self.n_unknown,
            "per_tag": {tag: dict(scores) for tag, scores in self.per_tag.items()},
            "confusions": [
                {"gold": gold, "predicted": predicted, "count": count}
                for gold, predicted, count in self.confusions
            ],
        }
        if self.spans is not None:
            overall = self.spans.overall
            data.update(span_precision=overall.precision, span_recall=overall.recall, span_f1=overall.f1,
                        per_type={type_: scores.to_dict() for type_, scores in self.spans.per_type.items()})
        return data

    def format(self) -> str:
        """A plain-text report: summary, chunk scores as conlleval prints them, per-tag table (P/R/F1 in %)
        and top confusions."""
        n_known = None if self.n_unknown is None else self.n_tokens - self.n_unknown
        summary = [
            ("Tokens", str(self.n_tokens)),
            ("Sentences", str(self.n_sentences)),
            ("Token accuracy", _percent(self.accuracy)),
            ("Sentence accuracy", _percent(self.sentence_accuracy)),
        ]
        if self.n_unknown is not None:
            summary += [
                ("Known-word accuracy", f"{_percent(self.known_accuracy)} (n = {n_known})"),
                ("Unknown-word accuracy", f"{_percent(self.unknown_accuracy)} (n = {self.n_unknown})"),
            ]
        width = max(len(label) for label, _ in summary) + 1
        lines = [f"{label + ':':<{width}} {value}" for label, value in summary]
        if self.n_tokens == 0:
            lines.append("No tokens: accuracy is undefined.")
            return "\n".join(lines) + "\n"

        if self.spans is not None:
            lines += ["", f"Chunks ({self.spans.scheme}):"]
            lines += ["  " + line for line in self.spans.format().splitlines()]
        lines += ["", "Per tag (precision, recall and F1 in %):"]
        rows = [
            (tag, f"{100 * s['precision']:.2f}", f"{100 * s['recall']:.2f}", f"{100 * s['f1']:.2f}",
             str(s["support"]))
            for tag, s in self.per_tag.items()
        ]
        lines += _table(("tag", "precision", "recall", "F1", "support"), rows)

        lines += ["", "Top confusions (gold -> predicted):"]
        if self.confusions:
            lines += _table(("gold", "predicted", "count"),
                            [(g, p, str(c)) for g, p, c in self.confusions], n_text=2)
        else:
            lines.append("  (none)")
        return "\n".join(lines) + "\n"


def evaluate_tagging(
    gold: Sequence[Sequence[str]],
    predicted: Sequence[Sequence[str]],
    *,
    words: Sequence[Sequence[str]] | None = None,
    known_words: Container[str] | None = None,
    top_confusions: int | None = 10,
) -> TaggingReport:
    """Compare predicted tags with gold tags, sentence by sentence.

    ``words`` (token strings, same shape as ``gold``) and ``known_words`` (the word forms seen in
    training) enable known/unknown-word accuracy; without both those scores are ``None``.
    ``top_confusions`` caps the confusion list (``None`` keeps all).  When every gold tag is ``O`` or
    ``[BIESLU]-TYPE`` the report also scores chunks (:func:`structlin.spans.evaluate_spans`).

    Empty sentences are allowed: they count as sentences, and as correct ones.

    Raises ``ValueError`` when the numbers of sentences differ or a sentence's lengths differ
    (naming the sentence index and both lengths).
    """
    gold = [list(sentence) for sentence in gold]
    predicted = [list(sentence) for sentence in predicted]
    _check_shapes(gold, predicted, "gold", "predicted")
    if words is not None:
        words = [list(sentence) for sentence in words]
        _check_shapes(gold, words, "gold", "words")
    if top_confusions is not None and top_confusions < 0:
        raise ValueError(f"top_confusions must be >= 0 or None, got {top_confusions}")

    gold_flat = [tag for sentence in gold for tag in sentence]
    pred_flat = [tag for sentence in predicted for tag in sentence]
    n_tokens, n_sentences = len(gold_flat), len(gold)

    # Tag ids in sorted tag order, so id order is tag order (per_tag and confusion ties use it); a classifier's
    # labels of other types than strings are in the order of its classes_.
    tags = ordered_labels(gold_flat + pred_flat)
    tag_id = {tag: i for i, tag in enumerate(tags)}
    g = np.fromiter((tag_id[t] for t in gold_flat), dtype=np.int64, count=n_tokens)
    p = np.fromiter((tag_id[t] for t in pred_flat), dtype=np.int64, count=n_tokens)
    correct = g == p

    # Sentence accuracy: count the errors of each sentence (sentence index repeated per token).
    lengths = np.array([len(sentence) for sentence in gold], dtype=np.int64)
    sentence_of_token = np.repeat(np.arange(n_sentences), lengths)
    errors = np.bincount(sentence_of_token[~correct], minlength=n_sentences)
    sentence_accuracy = _ratio(int(np.sum(errors == 0)), n_sentences)

    known_accuracy = unknown_accuracy = n_unknown = None
    if words is not None and known_words is not None:
        unknown = np.fromiter((w not in known_words for sentence in words for w in sentence),
                              dtype=bool, count=n_tokens)
        n_unknown = int(unknown.sum())
        known_accuracy = _ratio(int(correct[~unknown].sum()), n_tokens - n_unknown)
        unknown_accuracy = _ratio(int(correct[unknown].sum()), n_unknown)

    # confusion[i, j] = number of tokens with gold tag i predicted as tag j.
    k = len(tags)
    confusion = np.bincount(g * k + p, minlength=k * k).reshape(k, k)
    tp = np.diag(confusion)
    support = confusion.sum(axis=1)  # tp + fn
    n_predicted = confusion.sum(axis=0)  # tp + fp
    per_tag = {}
    for i, tag in enumerate(tags):
        precision = _ratio(int(tp[i]), int(n_predicted[i])) or 0.0
        recall = _ratio(int(tp[i]), int(support[i])) or 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        per_tag[tag] = {"precision": precision, "recall": recall, "f1": f1, "support": int(support[i])}

    off_diagonal = confusion.copy()
    np.fill_diagonal(off_diagonal, 0)
    gold_ids, pred_ids = np.nonzero(off_diagonal)  # row-major: already in (gold, predicted) order
    order = np.argsort(-off_diagonal[gold_ids, pred_ids], kind="stable")[:top_confusions]
    confusions = [(tags[gold_ids[i]], tags[pred_ids[i]], int(off_diagonal[gold_ids[i], pred_ids[i]]))
                  for i in order]

    return TaggingReport(
        accuracy=_ratio(int(correct.sum()), n_tokens),
        sentence_accuracy=sentence_accuracy,
        known_accuracy=known_accuracy,
        unknown_accuracy=unknown_accuracy,
        n_tokens=n_tokens,
        n_sentences=n_sentences,
        n_unknown=n_unknown,
        per_tag=per_tag,
        confusions=confusions,
        spans=evaluate_spans(gold, predicted) if _strings(tags) and is_bio_style(gold_flat) else None,
    )


def _check_shapes(first: list[list], second: list[list], first_name: str, second_name: str) -> None:
    if len(first) != len(second):
        raise ValueError(
            f"{first_name} has {len(first)} sentences but {second_name} has {len(second)}")
    for index, (a, b) in enumerate(zip(first, second)):
        if len(a) != len(b):
            raise ValueError(
                f"sentence {index}: {first_name} has {len(a)} tokens but {second_name} has {len(b)}")


def _strings(tags: list) -> bool:
    """Whether every tag is a string (chunk tags are; a classifier's labels need not be)."""
    return all(isinstance(tag, str) for tag in tags)


def _ratio(numerator: int, denominator: int) -> float | None:
    """``numerator / denominator``, or ``None`` when the denominator is 0."""
    return numerator / denominator if denominator else None


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], n_text: int = 1) -> list[str]:
    """Aligned text table: the first ``n_text`` (text) columns left-aligned, the numbers right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row):
        cells = [cell.ljust(w) if i < n_text else cell.rjust(w)
                 for i, (cell, w) in enumerate(zip(row, widths))]
        return "  " + "  ".join(cells).rstrip()

    return [line(header), *(line(row) for row in rows)]


@dataclass
class ClassificationReport:
    """The result of :func:`evaluate_classification` (fractions in [0, 1]).

    ``macro_f1`` is the unweighted mean of the per-class F1 over every class in gold or prediction;
    ``micro_f1`` pools all decisions, which for one label per instance equals the accuracy.
    ``confusion[i][j]`` counts instances of gold class ``labels[i]`` predicted as ``labels[j]``.
    ``log_loss`` (probabilistic models only, else None) is ``−(1/n) Σ log p(y_gold|x)``, with
    probabilities clipped at ``1e-15`` (as scikit-learn's ``log_loss``; a gold label the model never
    saw has probability 0).
    """

    accuracy: float | None
    macro_f1: float | None
    micro_f1: float | None
    n_instances: int
    per_class: dict[object, dict[str, float | int]]
    labels: list
    confusion: list[list[int]]
    log_loss: float | None = None

    def to_dict(self) -> dict:
        out = {"accuracy": self.accuracy, "macro_f1": self.macro_f1, "micro_f1": self.micro_f1,
               "n_instances": self.n_instances, "per_class": self.per_class, "labels": self.labels,
               "confusion": self.confusion}
        if self.log_loss is not None:
            out["log_loss"] = self.log_loss
        return out

    def format(self) -> str:
        """Summary, per-class table (P/R/F1 in %) and the confusion matrix (rows gold, columns predicted)."""
        lines = [f"Instances: {self.n_instances}", f"Accuracy:  {_percent(self.accuracy)}",
                 f"Macro-F1:  {_percent(self.macro_f1)}", f"Micro-F1:  {_percent(self.micro_f1)}"]
        if self.log_loss is not None:
            lines.append(f"Log-loss:  {self.log_loss:.4f}")
        if not self.n_instances:
            return "\n".join(lines + ["No instances: scores are undefined."]) + "\n"
        lines += ["", "Per class (precision, recall and F1 in %):"]
        lines += _table(("class", "precision", "recall", "F1", "support"),
                        [(str(c), f"{100 * s['precision']:.2f}", f"{100 * s['recall']:.2f}", f"{100 * s['f1']:.2f}",
                          str(s["support"])) for c, s in self.per_class.items()])
        lines += ["", "Confusion matrix (rows: gold, columns: predicted, in the order of the rows):"]
        lines += _table(("gold", *map(str, range(1, len(self.labels) + 1))),
                        [(f"{k + 1} {label}", *map(str, row)) for k, (label, row) in enumerate(zip(self.labels, self.confusion))])
        return "\n".join(lines) + "\n"


def evaluate_classification(gold: Sequence, predicted: Sequence,
                            gold_probabilities: Sequence[float] | None = None) -> ClassificationReport:
    """Accuracy, macro/micro F1, per-class P/R/F1 (as in :func:`evaluate_tagging`) and the confusion
    matrix; with ``gold_probabilities`` (the model's ``p(y_gold|x)`` of each instance) also the log-loss.
    Labels are strings or any other hashable values, as a classifier's are."""
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} instances but predicted has {len(predicted)}")
    report = evaluate_tagging([[g] for g in gold], [[p] for p in predicted], top_confusions=None)
    labels = list(report.per_tag)
    index = {label: k for k, label in enumerate(labels)}
    confusion = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(confusion, ([index[g] for g in gold], [index[p] for p in predicted]), 1)
    f1s = [s["f1"] for s in report.per_tag.values()]
    log_loss = (float(-np.mean(np.log(np.clip(np.asarray(gold_probabilities, dtype=np.float64), 1e-15, 1.0))))
                if gold_probabilities is not None and len(gold) else None)
    return ClassificationReport(report.accuracy, float(np.mean(f1s)) if f1s else None, report.accuracy,
                                len(gold), report.per_tag, labels, confusion.tolist(), log_loss)
