"""Chunks (spans) read off tag sequences, and their precision, recall and F1 as CoNLL's ``conlleval``.

A tag is ``PREFIX-TYPE``, split at the first hyphen (types may contain hyphens), or a bare prefix.
``O`` (with or without a type) is outside every chunk, and so is a tag without a type whose prefix
is not one of ``BIESLU``; a bare ``B``, ``I``, ... makes a chunk of type ``""``, as in conlleval.
Chunks are ``(type, start, end)`` with ``end`` exclusive, and never cross sentences.  Two schemes
read them:

``"conlleval"`` (the default)
    The ``endOfChunk``/``startOfChunk`` rules of the ``conlleval`` Perl script: a chunk ends
    between two tokens when their types differ, before ``B-`` and after ``E-``; a token that does
    not continue a chunk starts one, so ``I-X`` after ``O`` or after another type starts a chunk
    (IOB1) and ``B-NP I-VP`` is two chunks.  This reads IOB1, IOB2, IOE1 and IOE2 exactly as the
    script.  IOBES, which the original script does not know, is read as its widely used IOBES
    variant and ``seqeval``'s default mode read it: ``S-`` is a chunk of one token (a chunk also
    ends before and after ``S-``), and ``E-`` ends a chunk even before ``B-`` of its type (the
    original script merges ``E-X B-X``).  BILOU's ``U-`` and ``L-`` are read as ``S-`` and ``E-``
    (seqeval's default mode does not know them).  Any other prefix continues a chunk like ``I-``;
    the script's bracket tags ``[``, ``]`` and ``.`` are not supported.
``"strict-iob2"``
    ``seqeval``'s ``mode="strict", scheme=IOB2``: a chunk is ``B-X`` followed by ``I-X`` tokens;
    an ``I-`` tag that does not continue a chunk of its type is dropped.  Prefixes other than
    ``B``, ``I`` and ``O`` raise ``ValueError``.

A predicted chunk is correct when a gold chunk has the same type, start and end.  With ``correct``,
``predicted`` and ``gold`` chunk counts, ``P = correct / predicted``, ``R = correct / gold`` and
``F1 = 2PR / (P + R)``, each 0 when its denominator is 0 (as conlleval).  :func:`span_counts` gives
these counts per sentence, from which :func:`structlin.significance.f1` recomputes F1 for any resample
of the sentences (bootstrap or permutation tests).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SCHEMES", "SpanReport", "SpanScores", "evaluate_spans", "extract_spans", "is_bio_style", "span_counts"]

Span = tuple[str, int, int]

_CHUNK_TAG = re.compile(r"[BIESLU]-.+")
_PREFIXES = frozenset("BIESLU")
_CLOSING = frozenset("ESLU")  # a chunk ends after these prefixes ...
_OPENING = frozenset("BSU")  # ... and before these


def is_bio_style(tags: Iterable[str]) -> bool:
    """Whether ``tags`` (at least one) are all ``O`` or ``[BIESLU]-TYPE``: chunk or entity tags."""
    tags = set(tags)
    return bool(tags) and all(tag == "O" or _CHUNK_TAG.fullmatch(tag) for tag in tags)


def _conlleval_spans(tags: Sequence[str]) -> list[Span]:
    """Chunks by conlleval's rules (module docstring): a chunk closes at a boundary or an outside tag."""
    spans = []
    start, previous_prefix, previous_type = None, "O", ""
    for position, tag in enumerate(tags):
        prefix, _, type_ = tag.partition("-")
        inside = prefix != "O" and (type_ != "" or prefix in _PREFIXES)
        if start is not None and (not inside or type_ != previous_type or previous_prefix in _CLOSING
                                  or prefix in _OPENING):
            spans.append((previous_type, start, position))
            start = None
        if start is None and inside:
            start = position
        previous_prefix, previous_type = prefix, type_
    if start is not None:
        spans.append((previous_type, start, len(tags)))
    return spans


def _strict_iob2_spans(tags: Sequence[str]) -> list[Span]:
    """Chunks as seqeval's strict IOB2: ``B-X`` then ``I-X`` tokens; other ``I-`` tags are dropped."""
    spans = []
    start, chunk_type = None, ""
    for position, tag in enumerate(tags):
        prefix, _, type_ = tag.partition("-")
        if prefix not in ("B", "I", "O"):
            raise ValueError(f"strict IOB2 allows only B-, I- and O tags, got {tag!r}")
        if start is not None and not (prefix == "I" and type_ == chunk_type):
            spans.append((chunk_type, start, position))
            start = None
        if prefix == "B":
            start, chunk_type = position, type_
    if start is not None:
        spans.append((chunk_type, start, len(tags)))
    return spans


_EXTRACTORS = {"conlleval": _conlleval_spans, "strict-iob2": _strict_iob2_spans}
SCHEMES = tuple(_EXTRACTORS)


def _extractor(scheme: str) -> Callable[[Sequence[str]], list[Span]]:
    if scheme not in _EXTRACTORS:
        raise ValueError(f"unknown span scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    return _EXTRACTORS[scheme]


def extract_spans(tags: Sequence[str], *, scheme: str = "conlleval") -> list[Span]:
    """The chunks ``(type, start, end)`` (``end`` exclusive) of one tag sequence, left to right."""
    return _extractor(scheme)(tags)


def _span_sets(gold_sentences: Sequence[Sequence[str]], predicted_sentences: Sequence[Sequence[str]],
               scheme: str) -> Iterator[tuple[set[Span], set[Span]]]:
    """The gold and predicted chunks of each sentence; ``ValueError`` when the shapes differ."""
    extract = _extractor(scheme)
    if len(gold_sentences) != len(predicted_sentences):
        raise ValueError(f"gold has {len(gold_sentences)} sentences but predicted has {len(predicted_sentences)}")
    for index, (gold, predicted) in enumerate(zip(gold_sentences, predicted_sentences)):
        if len(gold) != len(predicted):
            raise ValueError(f"sentence {index}: gold has {len(gold)} tokens but predicted has {len(predicted)}")
        yield set(extract(gold)), set(extract(predicted))


def span_counts(gold_sentences: Sequence[Sequence[str]], predicted_sentences: Sequence[Sequence[str]], *,
                scheme: str = "conlleval") -> np.ndarray:
    """Per-sentence chunk counts: an ``(n_sentences, 3)`` int array of ``(correct, predicted, gold)``.

    These are sufficient statistics of the chunk scores: summed over any multiset of sentences
    they give that sample's P, R and F1 (see :func:`structlin.significance.f1`).
    """
    counts = [(len(gold & predicted), len(predicted), len(gold))
              for gold, predicted in _span_sets(gold_sentences, predicted_sentences, scheme)]
    return np.array(counts, dtype=np.int64).reshape(len(counts), 3)


def _ratio(numerator, denominator, scale: float = 1.0):
    """``scale * numerator / denominator`` (multiplied first, as conlleval), 0 where the denominator is 0.

    Elementwise; scalars give a float.
    """
    numerator = scale * np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast_shapes(numerator.shape, denominator.shape))
    ratio = np.divide(numerator, denominator, out=out, where=denominator > 0)
    return ratio if ratio.ndim else float(ratio)


def _prf(correct, predicted, gold, scale: float = 1.0):
    """conlleval's precision, recall and ``F1 = 2PR / (P + R)`` (0 where P + R = 0), each times ``scale``.

    Computing percentages in conlleval's order of operations makes them round as it prints them.
    """
    precision, recall = _ratio(correct, predicted, scale), _ratio(correct, gold, scale)
    return precision, recall, _ratio(2 * np.asarray(precision) * recall, np.add(precision, recall))


@dataclass(frozen=True)
class SpanScores:
    """Chunk counts of one type (or of all types) and the conlleval scores they give, as fractions."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return _prf(self.correct, self.predicted, self.gold)[0]

    @property
    def recall(self) -> float:
        return _prf(self.correct, self.predicted, self.gold)[1]

    @property
    def f1(self) -> float:
        return _prf(self.correct, self.predicted, self.gold)[2]

    def to_dict(self) -> dict[str, float | int]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "gold": self.gold, "predicted": self.predicted, "correct": self.correct}


@dataclass(frozen=True)
class SpanReport:
    """The result of :func:`evaluate_spans`; ``per_type`` is in sorted type order."""

    overall: SpanScores
    per_type: dict[str, SpanScores]
    n_tokens: int
    n_correct_tags: int
    scheme: str

    @property
    def accuracy(self) -> float | None:
        """Token accuracy (predicted tag equal to the gold tag), ``None`` without tokens."""
        return self.n_correct_tags / self.n_tokens if self.n_tokens else None

    def format(self) -> str:
        """The report in conlleval's words, layout and rounding (per type, the last number is the
        predicted count)."""
        def scores(s: SpanScores) -> str:
            return "precision: {:6.2f}%; recall: {:6.2f}%; FB1: {:6.2f}".format(
                *_prf(s.correct, s.predicted, s.gold, scale=100.0))

        overall = self.overall
        lines = [(f"processed {self.n_tokens} tokens with {overall.gold} phrases; "
                  f"found: {overall.predicted} phrases; correct: {overall.correct}.")]
        if self.n_tokens:
            lines.append(f"accuracy: {_ratio(self.n_correct_tags, self.n_tokens, 100.0):6.2f}%; {scores(overall)}")
        lines += [f"{type_:>17}: {scores(s)}  {s.predicted}" for type_, s in self.per_type.items()]
        return "\n".join(lines) + "\n"


def evaluate_spans(gold_sentences: Sequence[Sequence[str]], predicted_sentences: Sequence[Sequence[str]], *,
                   scheme: str = "conlleval") -> SpanReport:
    """Overall and per-type chunk counts and scores, and token accuracy, as conlleval reports them.

    Raises ``ValueError`` when the numbers of sentences or a sentence's lengths differ, or for an
    unknown ``scheme``.
    """
    correct, predicted, gold = Counter(), Counter(), Counter()
    for gold_spans, predicted_spans in _span_sets(gold_sentences, predicted_sentences, scheme):
        gold.update(type_ for type_, _, _ in gold_spans)
        predicted.update(type_ for type_, _, _ in predicted_spans)
        correct.update(type_ for type_, _, _ in gold_spans & predicted_spans)
    per_type = {type_: SpanScores(correct[type_], predicted[type_], gold[type_])
                for type_ in sorted(gold.keys() | predicted.keys())}
    n_correct_tags = sum(g == p for gold_tags, predicted_tags in zip(gold_sentences, predicted_sentences)
                         for g, p in zip(gold_tags, predicted_tags))
    return SpanReport(overall=SpanScores(correct.total(), predicted.total(), gold.total()), per_type=per_type,
                      n_tokens=sum(map(len, gold_sentences)), n_correct_tags=n_correct_tags, scheme=scheme)
