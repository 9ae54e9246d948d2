"""A corpus as one sparse matrix: rows are positions (tokens, or one row per document), columns are
hashed feature buckets, and ``lengths`` groups consecutive rows into instances.

Feature extraction happens once per corpus; every epoch of every learner reuses this matrix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import scipy.sparse

from .errors import OptionValueError

try:  # scipy's kernels of ``csr @ dense`` and ``csc @ dense``, called without building a matrix object around a
    # small batch or a block of columns, adding into an array given
    from scipy.sparse._sparsetools import csc_matvecs as _csc_matvecs, csr_matvecs as _csr_matvecs
except ImportError:  # a scipy that moved them: the public products, the same kernels behind more checks
    _csc_matvecs = _csr_matvecs = None


def ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[k], stops[k])`` for all k, without a Python loop."""
    starts = np.asarray(starts, dtype=np.int64)
    sizes = np.asarray(stops, dtype=np.int64) - starts
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    nonempty = sizes > 0
    starts, sizes = starts[nonempty], sizes[nonempty]
    # Each element is the previous one plus 1, except at the start of a range where it jumps.
    steps = np.ones(total, dtype=np.int64)
    heads = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    steps[heads] = starts - np.concatenate([[0], starts[:-1] + sizes[:-1] - 1])
    return np.cumsum(steps)


def add_column_product(matrix, first: int, stop: int, block: np.ndarray, out: np.ndarray) -> None:
    """``out += matrix[:, first:stop] @ block`` for a scipy CSC ``matrix`` and a dense ``(stop − first, k)`` block,
    the columns read in place and added in their order: products of consecutive column ranges added up this way are
    the product of their union, to the bit."""
    if _csc_matvecs is None:
        out += matrix[:, first:stop] @ block
        return
    p0, p1 = matrix.indptr[first], matrix.indptr[stop]
    _csc_matvecs(matrix.shape[0], stop - first, block.shape[1], matrix.indptr[first : stop + 1] - p0,
                 matrix.indices[p0:p1], matrix.data[p0:p1], np.ascontiguousarray(block).ravel(), out.ravel())


def instance_positions(offsets: np.ndarray, instances) -> np.ndarray:
    """Indices of the positions of ``instances``, in that order, where instance ``i`` holds positions
    ``offsets[i]`` to ``offsets[i + 1] − 1``."""
    instances = np.asarray(instances, dtype=np.int64)
    return ranges(offsets[instances], offsets[instances + 1])


def ordered_ranks(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rank, size, before)`` of every instance: its place among the instances of its label in the order
    given (0 the first), how many instances that label has, and how many instances the labels sorted before
    it have."""
    _, inverse, counts = np.unique(np.asarray(labels), return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(inverse), dtype=np.int64)
    rank[order] = np.arange(len(inverse)) - np.repeat(firsts, counts)
    return rank, counts[inverse], firsts[inverse]


def ordered_held_out(n: int, fraction: float, labels: np.ndarray | None = None, seed: int = 0,
                     in_order: bool = True) -> np.ndarray:
    """Which of ``n`` instances a ``fraction`` holds out (a boolean mask): of each label's instances (of all of
    them when ``labels`` is None), one contiguous run in the order given, ``fraction`` of them rounded, never
    the label's only instance — the last run for seed 0, the run before it for seed 1, and so on round.

    A run, not a random sample, because instances that come together in a file often belong together (the
    sentences of one document, the posts of one thread, the examples of one source): a random sample leaves
    each held-out instance's neighbours in the training part, and its score then rewards learning them by heart.
    The last run of a corpus in time order is also its newest, as a test set often is.  (scikit-learn's
    model selection cuts ``StratifiedKFold`` folds the same way unless told to shuffle.)  ``in_order=False``
    (an order that says nothing, such as a file sorted by its texts): a seeded random share instead."""
    if not in_order:
        held = np.zeros(n, dtype=bool)
        held[np.random.default_rng(seed).permutation(n)[: held_out_size(n, fraction)]] = True
        return held
    if labels is not None:
        rank, size, _ = ordered_ranks(labels)
        held = np.minimum(np.floor(fraction * size + 0.5), size - 1).astype(np.int64)
    if labels is None or not held.any():  # one run of them all (a share that leaves none to train on refused)
        rank, size, held = np.arange(n), np.full(n, n), np.full(n, held_out_size(n, fraction))
    runs = np.maximum(size // np.maximum(held, 1), 1)
    end = size - (seed % runs) * held  # the run held out ends here (exclusive), counted in ranks
    return (rank >= end - held) & (rank < end)


def ordered_folds(labels: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    """The fold (0 … ``folds`` − 1) of every instance: each label's instances, in the order given, cut into
    ``folds`` contiguous runs of nearly equal size (see :func:`ordered_held_out` for why runs), the labels'
    runs numbered round from different folds so that labels of few instances spread over the folds.  Seed
    ``s`` moves the cuts along each label's order by ``s·size / (2·folds)`` instances (round, the last run
    joining the first): seeds 0 and 1 cut half a fold apart."""
    rank, size, before = ordered_ranks(labels)
    return ((rank + seed * size // (2 * folds)) % size * folds // size + before) % folds


def held_out_size(n: int, fraction: float) -> int:
    """How many of ``n`` instances a ``fraction`` holds out: at least one, and never all of them (a
    :class:`~structlin.errors.OptionValueError` when that cannot be, or the rest would be empty)."""
    held = max(1, round(fraction * n))
    if held >= n:
        raise OptionValueError(f"holding out {fraction:g} of {n:,} training instance{'s' * (n != 1)} to choose on "
                               "leaves none to train on: give dev data, a smaller held_out, or more data")
    return held


@dataclass
class FeatureMatrix:
    """CSR rows ``indptr``/``indices``/``values`` (one row per position) plus instance ``lengths``, and
    optionally ``words``: the 64-bit code of every position's word (``FeatureHasher.strings``), which a tag
    dictionary looks up to restrict the labels a decoder may give it
    (:class:`~structlin.tagdict.TagDictionary`); every sub-corpus keeps it."""

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    lengths: np.ndarray
    words: np.ndarray | None = None

    def __post_init__(self):
        self.indptr = np.asarray(self.indptr, dtype=np.int64)
        self.indices = np.asarray(self.indices, dtype=np.int32)
        self.values = np.asarray(self.values, dtype=np.float32)
        self.lengths = np.asarray(self.lengths, dtype=np.int64)
        if len(self.indptr) != self.lengths.sum() + 1:
            raise ValueError("indptr must have one entry per position plus one")
        if self.words is not None:
            self.words = np.asarray(self.words, dtype=np.uint64)
            if self.words.shape != (self.n_positions,):
                raise ValueError(f"words must give one word code per position ({self.n_positions}), "
                                 f"got shape {self.words.shape}")

    @classmethod
    def concatenate(cls, parts: list[FeatureMatrix]) -> FeatureMatrix:
        """The instances of ``parts`` one after the other, as one matrix (word codes kept when every part has
        them)."""
        if len(parts) == 1:
            return parts[0]
        shifts = np.cumsum([0] + [part.indptr[-1] for part in parts[:-1]])
        indptr = np.concatenate([[0]] + [part.indptr[1:] + shift for part, shift in zip(parts, shifts)])
        words = None if any(part.words is None for part in parts) else np.concatenate([part.words for part in parts])
        return cls(indptr, np.concatenate([part.indices for part in parts]),
                   np.concatenate([part.values for part in parts]), np.concatenate([part.lengths for part in parts]),
                   words)

    @classmethod
    def placed(cls, pieces: Iterable[tuple[FeatureMatrix, np.ndarray]], lengths: np.ndarray, entries: np.ndarray,
               words: bool) -> FeatureMatrix:
        """One matrix of instances of the given ``lengths`` (positions) and ``entries`` (stored values), filled from
        ``pieces``: pairs ``(part, places)``, instance ``i`` of ``part`` going to instance ``places[i]`` (the
        places of all pieces a permutation of ``0 … n − 1``).  ``concatenate(parts).take(order)`` for the order
        that sorts the places, but each part is written into the result as it comes, so that memory holds the
        result and one part, never every part besides it; with word codes when ``words`` (every part has them).
        A part whose instances are not of the sizes given for its places raises ``ValueError``."""
        lengths, entries = np.asarray(lengths, dtype=np.int64), np.asarray(entries, dtype=np.int64)
        first_position, first_entry = (np.concatenate([[0], np.cumsum(sizes)]) for sizes in (lengths, entries))
        counts = np.empty(first_position[-1], dtype=np.int64)
        indices, values = np.empty(first_entry[-1], dtype=np.int32), np.empty(first_entry[-1], dtype=np.float32)
        codes = np.empty(first_position[-1], dtype=np.uint64) if words else None
        for part, at in pieces:
            if not (np.array_equal(part.lengths, lengths[at]) and np.array_equal(part.instance_entries(), entries[at])):
                raise ValueError("a part's instances are not of the sizes given for their places")
            positions = ranges(first_position[at], first_position[at + 1])
            counts[positions] = np.diff(part.indptr)
            stored = ranges(first_entry[at], first_entry[at + 1])
            indices[stored], values[stored] = part.indices, part.values
            if codes is not None:
                codes[positions] = part.words
        return cls(np.concatenate([[0], np.cumsum(counts)]), indices, values, lengths, codes)

    @property
    def n_instances(self) -> int:
        return len(self.lengths)

    @property
    def n_positions(self) -> int:
        return len(self.indptr) - 1

    @cached_property
    def offsets(self) -> np.ndarray:
        """First position of every instance, plus the total number of positions at the end."""
        return np.concatenate([[0], np.cumsum(self.lengths)])

    def positions(self, instances: np.ndarray) -> np.ndarray:
        """Indices of the positions of ``instances``, in that order."""
        return instance_positions(self.offsets, instances)

    def instance_entries(self) -> np.ndarray:
        """The number of stored entries (feature values) of every instance."""
        return np.diff(np.asarray(self.indptr)[self.offsets])

    def take(self, instances) -> FeatureMatrix:
        """The sub-corpus of ``instances`` in the given order (vectorised, O(nnz))."""
        instances = np.asarray(instances, dtype=np.int64)
        rows = self.positions(instances)
        entries = ranges(self.indptr[rows], self.indptr[rows + 1])
        counts = self.indptr[rows + 1] - self.indptr[rows]
        indptr = np.concatenate([[0], np.cumsum(counts)])
        return FeatureMatrix(indptr, self.indices[entries], self.values[entries], self.lengths[instances],
                             None if self.words is None else self.words[rows])

    def slice(self, start: int, stop: int) -> FeatureMatrix:
        """Instances ``start:stop`` as a view-like copy of only the index arrays' bounds."""
        offsets = self.offsets
        p0, p1 = offsets[start], offsets[stop]
        indptr = self.indptr[p0 : p1 + 1]
        e0, e1 = indptr[0], indptr[-1]
        return FeatureMatrix(indptr - e0, self.indices[e0:e1], self.values[e0:e1], self.lengths[start:stop],
                             None if self.words is None else self.words[p0:p1])

    def mean_squared_norm(self) -> float:
        """``ρ = Σ_p ‖x_p‖² / positions``: the scale of the features, to which a learner's margin or penalty
        is made relative (scaling the features by ``s`` scales ρ by ``s²``)."""
        values = self.values.astype(np.float64)
        return float(values @ values) / max(self.n_positions, 1)

    def entry_positions(self) -> np.ndarray:
        """The position (row) of every stored entry."""
        return np.repeat(np.arange(self.n_positions), np.diff(self.indptr))

    def dot_rows(self, entry_rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``X @ weights`` with every entry's column renumbered to ``entry_rows`` (one per entry), for a
        ``(rows, k)`` array holding only the rows a small batch uses: one bincount, cheaper for a few
        instances than building a scipy matrix, whose set-up costs more than the product itself."""
        k = weights.shape[1]
        slots = (self.entry_positions() * k)[:, None] + np.arange(k)
        products = self.values[:, None] * weights[entry_rows]
        return np.bincount(slots.ravel(), products.ravel(), minlength=self.n_positions * k).reshape(-1, k)

    def transpose_dot_rows(self, entry_rows: np.ndarray, n_rows: int, values: np.ndarray) -> np.ndarray:
        """``Xᵀ @ values`` for a ``(positions, k)`` array, on the renumbered columns of :meth:`dot_rows`:
        an ``(n_rows, k)`` array."""
        k = values.shape[1]
        slots = (np.asarray(entry_rows) * k)[:, None] + np.arange(k)
        products = self.values[:, None] * values[self.entry_positions()]
        return np.bincount(slots.ravel(), products.ravel(), minlength=n_rows * k).reshape(-1, k)

    def csr(self, n_columns: int) -> scipy.sparse.csr_matrix:
        """The rows as a scipy CSR matrix of ``n_columns`` columns (sharing this matrix's arrays)."""
        return scipy.sparse.csr_matrix((self.values, self.indices, self.indptr), shape=(self.n_positions, n_columns))

    def dot(self, weights: np.ndarray) -> np.ndarray:
        """``X @ weights`` for a dense ``(n_columns, k)`` matrix: one row of k scores per position.  scipy's
        kernel is called directly: a learner scores thousands of small batches an epoch, and building a scipy
        matrix for each (its checks, its index conversions) cost more than the product (docs/benchmarks.md)."""
        if _csr_matvecs is None or weights.ndim != 2:
            return self.csr(len(weights)) @ weights
        out = np.zeros((self.n_positions, weights.shape[1]), dtype=np.result_type(self.values, weights))
        _csr_matvecs(self.n_positions, len(weights), weights.shape[1], self.indptr, self.indices, self.values,
                     np.ascontiguousarray(weights).ravel(), out.ravel())
        return out

    def map_columns(self, mapping: np.ndarray) -> FeatureMatrix:
        """Renumber columns through ``mapping`` (column → new column, −1 = drop the entry)."""
        new = mapping[self.indices]
        keep = new >= 0
        if keep.all():
            return replace(self, indices=new)
        kept_before = np.concatenate([[0], np.cumsum(keep)])  # kept_before[e]: entries kept among the first e
        return replace(self, indptr=kept_before[self.indptr], indices=new[keep], values=self.values[keep])


def _interleave(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_positions: int):
    """CSR rows from per-source blocks ``(counts, indices, values)``, each holding ``counts[p]`` entries for
    position ``p`` in position order: position ``p`` holds block 0's entries, then block 1's, ..."""
    counts = np.zeros((len(blocks), n_positions), dtype=np.int64)
    for k, (block_counts, _, _) in enumerate(blocks):
        counts[k] = block_counts
    indptr = np.zeros(n_positions + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int32)
    values = np.empty(indptr[-1], dtype=np.float32)
    before = indptr[:-1].copy()
    for k, (_, block_indices, block_values) in enumerate(blocks):
        target = ranges(before, before + counts[k])
        indices[target] = block_indices
        values[target] = block_values
        before += counts[k]
    return indptr, indices, values


@dataclass
class FactoredMatrix:
    """A feature matrix kept as a sum of sources whose rows many positions share:

        X = Σ_k S_k T_k,        (S_k)[p, r] = 1 if selects[k][p] = r

    ``tables[k]`` (``T_k``, a :class:`FeatureMatrix` whose rows are not positions) holds the distinct rows of
    source ``k`` — the features of each word type at one offset, say — and ``selects[k]`` picks every position's
    row (``None``: ``T_k`` has one row per position).  A product ``X W = Σ_k (T_k W)[selects[k]]`` then
    multiplies each distinct row once, however many positions share it.  :meth:`matrix` writes ``X`` out, every
    position's entries in source order; ``lengths`` and ``words`` are those of :class:`FeatureMatrix`."""

    tables: list[FeatureMatrix]
    selects: list[np.ndarray | None]
    lengths: np.ndarray
    words: np.ndarray | None = None

    @property
    def n_positions(self) -> int:
        return int(np.sum(self.lengths))

    def finite(self) -> bool:
        """Whether every stored value is finite."""
        return all(np.isfinite(table.values).all() for table in self.tables)

    def product(self, multiply, width: int) -> np.ndarray:
        """``X W`` (``width`` columns) from ``multiply(T) = T W`` of every table: ``Σ_k (T_k W)[selects[k]]``,
        summed in source order."""
        total = np.zeros((self.n_positions, width))
        for table, select in zip(self.tables, self.selects):
            part = multiply(table)
            total += part if select is None else part[select]
        return total

    def dot(self, weights: np.ndarray) -> np.ndarray:
        """``X @ weights`` for a dense ``(n_columns, k)`` matrix, as :meth:`FeatureMatrix.dot`."""
        return self.product(lambda table: table.dot(weights), weights.shape[1])

    def matrix(self) -> FeatureMatrix:
        """``X`` as a :class:`FeatureMatrix`: each position's entries of source 0, then source 1, ..."""
        blocks = []
        for table, select in zip(self.tables, self.selects):
            counts = np.diff(table.indptr)
            if select is None:
                blocks.append((counts, table.indices, table.values))
            else:
                entries = ranges(table.indptr[select], table.indptr[select + 1])
                blocks.append((counts[select], table.indices[entries], table.values[entries]))
        indptr, indices, values = _interleave(blocks, self.n_positions)
        return FeatureMatrix(indptr, indices, values, self.lengths, self.words)
