"""Paired significance tests: is system B's score on a test set really different from system A's?

Both systems label the same test *units* (sentences for a tagger, documents for a classifier).  Each
unit contributes a row of *sufficient statistics* per system, counts whose column sums determine the
metric: ``(correct, total)`` for accuracy, ``(correct, guessed, gold)`` for span F1.  A *metric* maps
summed statistics (an array ``(..., k)``) to scores (``(...)``), so that many resampled test sets are
scored at once: :func:`accuracy` and :func:`f1` are the two given here.

Every test returns a two-sided p-value, the probability under "A and B are equally good" of a
difference at least as large as the observed one:

* :func:`mcnemar` on per-item correctness (tokens or documents): exact binomial or chi-square;
* :func:`paired_bootstrap`: resample units with replacement (shifted bootstrap);
* :func:`approximate_randomization`: swap the two systems' statistics unit by unit.

The two resampling tests draw their samples in blocks of index or swap matrices (no Python loop over
samples or units) from ``numpy.random.default_rng(seed)``: the same seed gives the same p-value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, chi2

from .spans import span_counts

__all__ = ["McNemarResult", "accuracy", "accuracy_statistics", "approximate_randomization", "f1", "mcnemar",
           "paired_bootstrap"]

Metric = Callable[[np.ndarray], np.ndarray]

_BLOCK_DRAWS = 2**21  # random draws per block of samples: some 16 MB per (samples × units) array
_TIE = 1e-12  # differences of scores closer than this are equal: rounding must not break an exact tie


def _ratio(numerator, denominator) -> np.ndarray:
    """``numerator / denominator`` elementwise, 0 where the denominator is 0 (nothing to score)."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, float), np.asarray(denominator, float))
    return np.divide(numerator, denominator, out=np.zeros(numerator.shape), where=denominator != 0)


def accuracy(sums) -> np.ndarray:
    """Accuracy ``correct / total`` from summed ``(correct, total)`` statistics."""
    sums = np.asarray(sums)
    return _ratio(sums[..., 0], sums[..., 1])


def f1(sums) -> np.ndarray:
    """Span F1 ``2·correct / (guessed + gold)`` (= 2PR / (P + R)) from summed ``(correct, guessed, gold)``
    statistics."""
    sums = np.asarray(sums)
    return _ratio(2 * sums[..., 0], sums[..., 1] + sums[..., 2])


METRIC_SCORES = {"accuracy": accuracy, "span_f1": f1}  # metric name → its score of summed per-unit statistics


def unit_statistics(metric: str, gold: list[list[str]], predicted: list[list[str]]) -> np.ndarray:
    """Per-unit sufficient statistics of ``metric`` (a key of :data:`METRIC_SCORES`) for the labels of every unit
    (sentence or document): ``(correct, total)`` items, or ``(correct, predicted, gold)`` chunks."""
    if metric == "span_f1":
        return span_counts(gold, predicted).astype(float)
    correct = np.fromiter((g == p for gs, ps in zip(gold, predicted) for g, p in zip(gs, ps)), dtype=bool)
    return accuracy_statistics(correct, [len(g) for g in gold])


def accuracy_statistics(correct, lengths) -> np.ndarray:
    """``(correct, total)`` of every unit, an ``(n_units, 2)`` array: ``correct`` flags every item (token
    or document) in order, and unit ``i`` holds the next ``lengths[i]`` items."""
    lengths = np.asarray(lengths, dtype=np.int64)
    unit = np.repeat(np.arange(len(lengths)), lengths)
    return np.column_stack([np.bincount(unit, weights=np.asarray(correct, float), minlength=len(lengths)),
                            lengths]).astype(float)


@dataclass(frozen=True)
class McNemarResult:
    """The outcome of :func:`mcnemar`: ``only_a`` items are right in A only, ``only_b`` in B only;
    ``method`` is ``"exact"`` (binomial) or ``"chi2"``."""

    p_value: float
    only_a: int
    only_b: int
    method: str

    @property
    def discordant(self) -> int:
        """Items the two systems disagree on (one right, the other wrong)."""
        return self.only_a + self.only_b


def mcnemar(correct_a, correct_b, *, exact_below: int = 25) -> McNemarResult:
    """McNemar's test (McNemar 1947) on paired per-item correctness flags of systems A and B.

    Only the ``n = b + c`` discordant items count: ``b`` right in A only, ``c`` right in B only.  Under the
    null hypothesis each is equally likely to favour A or B, so ``b ~ Binomial(n, 1/2)``.  With fewer
    than ``exact_below`` discordant items the p-value is that binomial's exact two-sided one,
    ``min(1, 2·P(X ≤ min(b, c)))`` (``method="exact"``); otherwise the chi-square approximation with
    Edwards's continuity correction, ``χ² = max(|b − c| − 1, 0)² / (b + c)`` on 1 degree of freedom
    (``method="chi2"``).  No discordant item gives p = 1.
    """
    correct_a, correct_b = np.asarray(correct_a, bool), np.asarray(correct_b, bool)
    if correct_a.shape != correct_b.shape:
        raise ValueError(f"correctness flags of different shapes: {correct_a.shape} and {correct_b.shape}")
    b, c = int(np.count_nonzero(correct_a & ~correct_b)), int(np.count_nonzero(correct_b & ~correct_a))
    if b + c < exact_below:
        p_value = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
        return McNemarResult(float(p_value), b, c, "exact")
    statistic = max(abs(b - c) - 1, 0) ** 2 / (b + c)
    return McNemarResult(float(chi2.sf(statistic, df=1)), b, c, "chi2")


def paired_bootstrap(stats_a, stats_b, metric: Metric = accuracy, *, samples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired bootstrap over units (Koehn 2004; Berg-Kirkpatrick et al. 2012).

    With ``δ = metric(Σ a) − metric(Σ b)`` on the test set, ``samples`` test sets of as many units are
    drawn with replacement, the same units for A and B, and give ``δ*_1 … δ*_B``.  The bootstrap
    distribution is shifted to mean zero to stand for the null hypothesis (Efron & Tibshirani 1993,
    §16.4), and the p-value is the share of shifted samples at least as far from zero as δ::

        p = (1 + #{i : |δ*_i − δ| ≥ |δ|}) / (B + 1)

    Berg-Kirkpatrick et al.'s test is the one-sided version, ``#{i : δ*_i − δ > δ} / B``; Koehn's share of
    samples with ``δ*_i ≤ 0`` estimates about half of the two-sided value.  The +1 keeps p above 0 (Davison
    & Hinkley 1997, eq. 4.11).
    """
    a, b = _paired(stats_a, stats_b, samples)
    observed = float(metric(a.sum(axis=0)) - metric(b.sum(axis=0)))
    n, k = a.shape
    both = np.hstack([a, b])
    rng = np.random.default_rng(seed)
    extreme = 0
    for size in _block_sizes(samples, n):
        picks = rng.integers(0, n, size=(size, n))
        copies = np.bincount((picks + n * np.arange(size)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        sums = copies @ both
        shifted = metric(sums[:, :k]) - metric(sums[:, k:]) - observed
        extreme += np.count_nonzero(np.abs(shifted) >= abs(observed) - _TIE)
    return (extreme + 1) / (samples + 1)


def approximate_randomization(stats_a, stats_b, metric: Metric = accuracy, *, samples: int = 10_000,
                              seed: int = 0) -> float:
    """Two-sided p-value of the approximate randomization test over units (Noreen 1989; Yeh 2000).

    Under the null hypothesis the labels "A" and "B" of each unit's two outputs are exchangeable.  Each of
    the ``R = samples`` shuffles swaps A's and B's statistics of every unit with probability 1/2 and gives
    ``δ_i = metric(Σ a') − metric(Σ b')``; with δ the observed difference::

        p = (1 + #{i : |δ_i| ≥ |δ|}) / (R + 1)

    The +1 counts the observed assignment as one of the shuffles, which keeps the test valid (it rejects a
    true null hypothesis at level α with probability at most α) and p above 0.
    """
    a, b = _paired(stats_a, stats_b, samples)
    sum_a, sum_b = a.sum(axis=0), b.sum(axis=0)
    observed = float(metric(sum_a) - metric(sum_b))
    n = len(a)
    moved_by_swap = b - a
    rng = np.random.default_rng(seed)
    extreme = 0
    for size in _block_sizes(samples, n):
        moved = rng.integers(0, 2, size=(size, n), dtype=bool) @ moved_by_swap
        shuffled = metric(sum_a + moved) - metric(sum_b - moved)
        extreme += np.count_nonzero(np.abs(shuffled) >= abs(observed) - _TIE)
    return (extreme + 1) / (samples + 1)


def _paired(stats_a, stats_b, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Both systems' statistics as float ``(n_units, k)`` arrays of the same shape, checked."""
    a, b = np.asarray(stats_a, float), np.asarray(stats_b, float)
    if a.ndim != 2 or a.shape != b.shape or not len(a):
        raise ValueError(f"expected two (units, statistics) arrays of the same shape with at least one unit, "
                         f"got {a.shape} and {b.shape}")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    return a, b


def _block_sizes(samples: int, n_units: int) -> Iterator[int]:
    """How many of ``samples`` samples to draw at a time: about ``_BLOCK_DRAWS`` random numbers each."""
    size = max(1, _BLOCK_DRAWS // n_units)
    for start in range(0, samples, size):
        yield min(size, samples - start)
