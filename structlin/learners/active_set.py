"""An active set of weights for batch max-ent: L-BFGS over the (feature, label) pairs that matter, not every pair.

Max-ent's weight vector holds every hashed feature row × every label (6.1 M weights on UD English EWT), and
L-BFGS keeps ``2·memory`` vectors of its length.  Most of those weights stay near zero: CRFsuite keeps only the
attribute–label pairs seen in training.  Seen pairs alone lose accuracy, because the likelihood also pushes down
pairs never seen whose feature fires where the model wrongly expects that label.  So the active set is

    A = {(r, y_p) : feature row r fires at position p with gold label y_p}  ∪  the tail (transitions, start, end)

at first, and once, after the first half of the iteration budget, it grows by the unseen pairs with the largest
gradient ``|∂f/∂w_rl|`` at that point (``grow`` times as many as the seen ones): the pairs the model's
marginals make matter; L-BFGS goes on over the grown set with its curvature pairs (0 at the new weights in
them).  Every weight outside ``A`` is held at 0, so the optimiser minimises

    f_A(θ) = f(w(θ)),   w(θ)_A = θ, 0 elsewhere,   ∇f_A(θ) = ∇f(w(θ))_A

and its vectors have ``|A|`` entries.  With few labels the objective is evaluated on the full vector (a dense
product is the fastest); with many (:func:`compact`) the run never makes a vector of every weight: the scores are a
product with the pairs and the gradient is made at the pairs (:class:`PairRows`: the rows holding pairs of many labels
as dense rows, the others pair by pair), the growth makes the gradient a block of feature rows at a time and keeps a
running top list over those blocks, and the snapshots and the model are the pairs
(:class:`~structlin.joint.SparseWeights`), so that memory grows with the pairs, not with ``rows × labels``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import scipy.sparse

from ..joint import JointFeatureMap, SparseWeights
from ..matrix import ranges
from .run_weights import PAIRS_ABOVE_LABELS

#: Positions whose seen pairs are listed at a time (bounds the temporaries of :func:`seen_pairs`).
_POSITIONS_AT_A_TIME = 1 << 16


def seen_pairs(joint: JointFeatureMap, parts) -> np.ndarray:
    """The sorted flat indices of the emission weights ``(row, gold label)`` of every stored entry of the
    indexed corpora ``parts`` (``(X, y)`` pairs), with the tail's indices after them: by a flag per weight (EWT:
    0.04 s), or in a compact run (:func:`compact`) by sorting each block's pairs (1.5 s on EWT, but memory that grows
    with the entries, where the flags of 3,291 labels took 1.4 GB)."""
    keys = _entry_keys(joint.n_labels, parts)
    if compact(joint):
        seen = np.unique(np.concatenate([np.zeros(0, np.int64), *(np.unique(block) for block in keys)]))
    else:
        flags = np.zeros(joint.transition_offset, dtype=bool)
        for block in keys:
            flags[block] = True
        seen = np.flatnonzero(flags)
    return np.concatenate([seen, np.arange(joint.transition_offset, joint.size)])


def _entry_keys(n_labels: int, parts) -> Iterator[np.ndarray]:
    """The flat index ``row · L + gold label`` of every stored entry of ``parts``, a block of positions at a time."""
    for X, y in parts:
        for first in range(0, X.n_positions, _POSITIONS_AT_A_TIME):
            last = min(first + _POSITIONS_AT_A_TIME, X.n_positions)
            begin, end = X.indptr[first], X.indptr[last]
            positions = np.repeat(np.arange(first, last), np.diff(X.indptr[first : last + 1]))
            yield X.indices[begin:end].astype(np.int64) * n_labels + y[positions]


def compact(joint: JointFeatureMap) -> bool:
    """Whether a run over ``joint``'s active pairs keeps to them (the module docstring): with more labels than the
    perceptron family's pairs store is used for (:data:`~.run_weights.PAIRS_ABOVE_LABELS`), where ``rows × labels``
    dwarfs the pairs."""
    return joint.n_labels > PAIRS_ABOVE_LABELS


class ActivePairs:
    """The free weights of a run (:func:`seen_pairs` at first), grown once by :meth:`grow`; ``compact``: see
    :func:`compact`."""

    def __init__(self, free: np.ndarray, joint: JointFeatureMap, growth: float):
        self.free, self.growth, self.grown = free, growth, False
        self.size, self.emission_size = joint.size, joint.transition_offset
        self.compact = compact(joint)

    @property
    def n_emission(self) -> int:
        """How many free weights are emission weights (the tail's follow them in ``free``)."""
        return len(self.free) - (self.size - self.emission_size)

    def expand(self, theta: np.ndarray) -> np.ndarray:
        """``w(θ)``: the full weight vector with ``θ`` at the free entries, 0 elsewhere."""
        return self.expander()(theta)

    def expander(self) -> Callable[[np.ndarray], np.ndarray]:
        """:meth:`expand` for the set as it is now, still right after it grows."""
        free, size = self.free, self.size

        def expand(theta: np.ndarray) -> np.ndarray:
            w = np.zeros(size)
            w[free] = theta
            return w

        return expand

    def weights(self) -> Callable[[np.ndarray], np.ndarray | SparseWeights]:
        """``θ`` → the weights a run keeps of it, for the set as it is now (a snapshot's): the full vector, or with
        ``compact`` the pairs (views of ``θ``, which L-BFGS never changes in place)."""
        if not self.compact:
            return self.expander()
        free, size, k = self.free, self.size, self.n_emission
        return lambda theta: SparseWeights(free[:k], theta[:k], theta[k:], size)

    def free_weights(self, w: np.ndarray | SparseWeights) -> np.ndarray:
        """``θ`` of the weights :meth:`weights` made."""
        return np.concatenate([w.values, w.tail]) if isinstance(w, SparseWeights) else w[self.free]

    def sparse(self, theta: np.ndarray) -> SparseWeights:
        """``w(θ)`` as :class:`~structlin.joint.SparseWeights` (views of ``θ``; the tail's weights are all free)."""
        k = self.n_emission
        return SparseWeights(self.free[:k], theta[:k], theta[k:], self.size)

    def grow(self, gradient: Iterable[tuple[int, np.ndarray]]) -> Callable[[np.ndarray], np.ndarray]:
        """Add the ``growth × (seen emission pairs)`` emission weights outside the set with the largest
        ``|gradient|`` (ties by index; weights with a zero gradient never).  ``gradient`` is the emission block's,
        exact outside the set, in consecutive pieces ``(first flat index, values)`` (each overwritten), of which a
        running list of the largest is kept.  Returns ``embed``: a vector over the set as it was (``θ``, L-BFGS's
        pairs) laid out over the grown set, 0 at the added weights."""
        emission = self.free[: self.n_emission]
        k = int(round(self.growth * len(emission)))
        self.grown = True
        scores, added = np.zeros(0), np.zeros(0, np.int64)
        for first, piece in gradient if k else ():
            score = np.abs(piece, out=piece)
            inside = emission[np.searchsorted(emission, first) : np.searchsorted(emission, first + len(score))]
            score[inside - first] = 0
            candidates = np.flatnonzero(score)
            scores, added = _largest(np.concatenate([scores, score[candidates]]),
                                     np.concatenate([added, candidates + first]), k)
        if len(added) == 0:
            return lambda v: v
        old, self.free = self.free, np.union1d(self.free, added)
        before, size = np.searchsorted(self.free, old), len(self.free)

        def embed(v: np.ndarray) -> np.ndarray:
            out = np.zeros(size)
            out[before] = v
            return out

        return embed


def _largest(scores: np.ndarray, index: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest ``scores`` with their ``index`` (ties: the smaller index), in no particular order."""
    if len(scores) <= k or k == 0:
        return scores[:k], index[:k]
    kept = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]  # the k largest and their ties
    scores, index = scores[kept], index[kept]
    if len(scores) > k:
        order = np.lexsort((index, -scores))[:k]
        scores, index = scores[order], index[order]
    return scores, index


class PairRows:
    """The scores ``X·W`` and the data term's gradient ``Xᵀ·R`` at the pairs of a compact run (the increasing flat
    ``keys``, ``row·L + label``) over a corpus ``X`` (CSR, positions × feature rows).  The rows holding pairs of
    :attr:`DENSE_SHARE` of the labels or more (a text's common words, which meet most labels and most entries) are
    dense rows, each way one sparse–dense product; the others are their pairs alone: a sparse product for the scores,
    and each pair's gradient summed over the entries of its row, ``Σ_p X[p, r]·R[p, y]`` (a product over every label
    of those rows would cost ``L`` an entry).  A dense row costs about a tenth of a pair's work a label, so the share
    is small: 1/32 (3,291 labels, 40,000 documents: 16.8 s an evaluation with the pairs' product and the gradient of
    every row, 6.3 s with 1/32; 1/16 and 1/64 slower, docs/benchmarks.md)."""

    #: The entries of the rows' columns the gradient reads at a time.
    ENTRIES_AT_A_TIME = 1 << 22
    #: The share of the labels a row's pairs reach for it to be a dense row (the class docstring).
    DENSE_SHARE = 1 / 32

    def __init__(self, X: scipy.sparse.csr_matrix, keys: np.ndarray, n_labels: int):
        self.keys, self.n_labels = keys, n_labels
        rows, labels = np.divmod(keys, n_labels)
        full = np.bincount(rows, minlength=X.shape[1]) >= self.DENSE_SHARE * n_labels
        self.in_full = full[rows]
        full_rows = np.flatnonzero(full)
        slot = np.zeros(X.shape[1], np.int64)
        slot[full_rows] = np.arange(len(full_rows))
        self.full_places = slot[rows[self.in_full]] * n_labels + labels[self.in_full]
        self.X_full = X[:, full_rows]
        rest_rows, self.rest_column = np.unique(rows[~self.in_full], return_inverse=True)
        self.rest_labels = labels[~self.in_full]
        self.rest_starts = np.concatenate([[0], np.cumsum(np.bincount(self.rest_column, minlength=len(rest_rows)))])
        self.X_rest = X[:, rest_rows]
        self.by_column = self.X_rest.tocsc()

    def scores(self, values: np.ndarray) -> np.ndarray:
        """``X·W`` (positions × labels) for the pairs' ``values``."""
        L = self.n_labels
        full = np.zeros(self.X_full.shape[1] * L)
        full[self.full_places] = values[self.in_full]
        out = np.asarray(self.X_full @ full.reshape(-1, L))
        rest = self.X_rest @ scipy.sparse.csr_matrix((values[~self.in_full], self.rest_labels, self.rest_starts),
                                                     shape=(self.X_rest.shape[1], L))
        out[np.repeat(np.arange(rest.shape[0]), np.diff(rest.indptr)), rest.indices] += rest.data
        return out

    def gradient(self, residual: np.ndarray) -> np.ndarray:
        """``Xᵀ·R`` at every pair, for the residual ``R`` (positions × labels)."""
        out = np.empty(len(self.keys))
        out[self.in_full] = np.asarray(self.X_full.T @ residual).ravel()[self.full_places]
        X, columns, labels = self.by_column, self.rest_column, self.rest_labels
        lengths = np.diff(X.indptr)[columns]
        ends = np.cumsum(lengths)
        cuts = np.unique(np.searchsorted(ends, np.arange(self.ENTRIES_AT_A_TIME, ends[-1] if len(ends) else 0,
                                                         self.ENTRIES_AT_A_TIME)))
        rest = np.empty(len(columns))
        for a, b in zip([0, *cuts], [*cuts, len(columns)]):
            entries = ranges(X.indptr[columns[a:b]], X.indptr[columns[a:b] + 1])
            owner = np.repeat(np.arange(b - a), lengths[a:b])
            rest[a:b] = np.bincount(owner, X.data[entries] * residual[X.indices[entries], labels[a:b][owner]],
                                    minlength=b - a)
        out[~self.in_full] = rest
        return out
