"""The joint feature map ``φ(x, y)``: label vocabulary, weight layout, scores and φ differences.

For a sequence ``x`` of ``n`` positions with labels ``y``,

    φ(x, y) = Σ_i  f(x, i) ⊗ e_{y_i}  +  Σ_{i>0} e_{(y_{i-1}, y_i)}  +  e_{start, y_0}  +  e_{end, y_{n-1}}

where ``f(x, i)`` is the hashed sparse feature vector of position ``i``.  The weight vector ``w`` is
one flat float64 array laid out as

    [ emission (n_rows × L, row-major) | transition (L × L, [prev, next]) | start (L) | end (L) ]

(the last three only when ``transitions=True``; a document classifier has one position per instance
and no transitions).  ``w`` belongs to the learner; this map never stores it.  A learner that touches few
(feature, label) pairs keeps the same vector as :class:`SparseWeights` (the emission entries it has, by their
flat index, and the tail block in full): every method of the map that reads weights takes either form.

Only hashed buckets that occur in the training data get a row (``columns`` lists them in order):
a bucket seen only at prediction time can carry no weight, so it is dropped when a corpus is
indexed.  Memory is thus proportional to the features actually seen, not to ``2**bits``.  Online
training that meets new buckets in a later batch grows the map (:meth:`JointFeatureMap.extended`) and
moves its weights into the new layout (:meth:`JointFeatureMap.carry`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse

from .matrix import FactoredMatrix, FeatureMatrix, instance_positions, ranges
from .outputs import atomic_output


def ordered_labels(labels: Iterable) -> list:
    """The distinct ``labels`` in the order a model keeps them (its ``classes_``, the rows of a report).

    Numbers (``bool``, ``int``, ``float``) come first in numeric order, then strings in code-point order (so
    labels of one of these types are simply sorted, as ``numpy.unique`` sorts them), then labels of other
    types grouped by type name, each group sorted when its values compare and in order of first appearance
    otherwise.  Distinct means unequal, as for the keys of a dict: ``1`` and ``"1"`` are two labels, while
    ``1``, ``1.0`` and ``True`` are one (the first seen).
    """
    groups: dict[tuple[int, str], list] = {}
    for label in dict.fromkeys(labels):
        group = ((0, "") if isinstance(label, numbers.Real) else (1, "") if isinstance(label, str)
                 else (2, type(label).__name__))
        groups.setdefault(group, []).append(label)
    ordered = []
    for group in sorted(groups):
        try:
            ordered += sorted(groups[group])
        except TypeError:  # values that do not compare (tuples of mixed types ...)
            ordered += groups[group]
    return ordered


class Chains:
    """Where the instances of a batch of ``lengths`` begin and end in the concatenated positions: the
    chain boundaries every transition-aware computation needs.

    ``first`` / ``last``: the first and last position of every non-empty instance (``nonempty`` lists
    those instances); ``followers``: every position that has a predecessor in its instance, in order.
    """

    def __init__(self, lengths):
        lengths = np.asarray(lengths, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        self.nonempty = np.flatnonzero(lengths > 0)
        self.first = offsets[:-1][self.nonempty]
        self.last = offsets[1:][self.nonempty] - 1
        follows = np.ones(int(offsets[-1]), dtype=bool)
        follows[self.first] = False
        self.followers = np.flatnonzero(follows)


@dataclass
class Scores:
    """Scores of every label at every position of a batch of instances, plus transition scores.

    ``emissions[p, y]`` is ``w · (f(x, p) ⊗ e_y)``; ``transitions[a, b]`` scores label ``a`` followed
    by ``b``; ``start``/``end`` score the first/last label.  These three are ``None`` without
    transitions.

    ``allowed`` (positions × labels, bool), when given, restricts the outputs to label sequences whose
    every label is allowed at its position (a tag dictionary's candidates, :mod:`structlin.tagdict`):
    every decoder then decodes over those outputs only.  Each position needs at least one allowed label.
    """

    emissions: np.ndarray
    lengths: np.ndarray
    transitions: np.ndarray | None = None
    start: np.ndarray | None = None
    end: np.ndarray | None = None
    allowed: np.ndarray | None = None

    def __post_init__(self):
        if self.allowed is not None:
            if self.allowed.shape != self.emissions.shape or self.allowed.dtype != bool:
                raise ValueError(f"allowed must be a bool array of the emissions' shape {self.emissions.shape}, "
                                 f"got {self.allowed.dtype} {self.allowed.shape}")
            if not self.allowed.any(axis=1).all():
                raise ValueError("every position needs at least one allowed label")

    @property
    def n_labels(self) -> int:
        return self.emissions.shape[1]

    @property
    def n_positions(self) -> int:
        return len(self.emissions)

    def positions(self, instances) -> np.ndarray:
        """Indices of the positions of ``instances``, in that order."""
        return instance_positions(np.concatenate([[0], np.cumsum(self.lengths)]), instances)

    def take(self, instances) -> Scores:
        """The scores of ``instances``, in that order (as :meth:`FeatureMatrix.take` takes their features)."""
        rows = self.positions(instances)
        return replace(self, emissions=self.emissions[rows], lengths=np.asarray(self.lengths)[instances],
                       allowed=None if self.allowed is None else self.allowed[rows])

    def masked(self) -> Scores:
        """These scores with the emissions of labels that are not allowed at −inf, and no ``allowed``: the
        same outputs score best (while an allowed output has a finite score), so a decoder that does not
        exploit the restriction decodes these instead.  Without ``allowed``, the scores themselves."""
        if self.allowed is None:
            return self
        return replace(self, emissions=np.where(self.allowed, self.emissions, -np.inf), allowed=None)

    def score(self, labels: np.ndarray) -> np.ndarray:
        """``w·φ(x, y)`` of every instance for the labels ``y`` of all positions (concatenated): the
        emission scores of the labels, plus the transitions between consecutive labels and the start and
        end scores of the first and last label."""
        labels = np.asarray(labels, dtype=np.int64)
        n_instances = len(self.lengths)
        instance = np.repeat(np.arange(n_instances), self.lengths)
        total = np.zeros(n_instances)
        total += np.bincount(instance, self.emissions[np.arange(len(labels)), labels], minlength=n_instances)
        if self.transitions is not None:
            chain = Chains(self.lengths)
            p = chain.followers
            total += np.bincount(instance[p], self.transitions[labels[p - 1], labels[p]], minlength=n_instances)
            total[chain.nonempty] += self.start[labels[chain.first]] + self.end[labels[chain.last]]
        return total


#: The entries of an average made at a time when it is made into its smaller form (:meth:`AveragedWeights.smallest`).
_BLOCK = 1 << 20


@dataclass
class AveragedWeights:
    """The average ``w − u/visits`` of a dense flat weight vector ``w`` and its averaging sums ``u`` (the averaged
    perceptron's hypothesis), not made: :meth:`JointFeatureMap.scores` makes only the rows a matrix uses, by the
    same arithmetic as :meth:`dense` (the same scores, to the bit).  A run scores an epoch's average on dev so and
    makes only the one it keeps: memory holds the weights, the sums and the best average, not also the one being
    scored.  It reads ``w`` and ``u`` when it is scored or made: make it before they change."""

    w: np.ndarray
    u: np.ndarray
    visits: int

    def take(self, indices) -> np.ndarray:
        """The average at flat ``indices``."""
        out = np.divide(self.u[indices], self.visits)
        np.subtract(self.w[indices], out, out=out)
        return out

    def take_rows(self, rows: np.ndarray, n_labels: int) -> np.ndarray:
        """The average's emission rows ``rows`` as a ``(len(rows), n_labels)`` array: :meth:`take` of their flat
        indices, gathered a row at a time (the emission block comes first in the flat layout)."""
        emissions = slice(0, (len(self.w) // n_labels) * n_labels)
        out = np.divide(self.u[emissions].reshape(-1, n_labels)[rows], self.visits)
        np.subtract(self.w[emissions].reshape(-1, n_labels)[rows], out, out=out)
        return out

    def dense(self) -> np.ndarray:
        """The whole flat vector (a new array)."""
        out = np.divide(self.u, self.visits)
        np.subtract(self.w, out, out=out)
        return out

    def smallest(self, emission_size: int) -> np.ndarray | SparseWeights:
        """The average made in the smaller of its two forms (:func:`smaller_form`), a block of entries at a time:
        memory holds the form made, never both."""
        blocks = [(a, min(a + _BLOCK, emission_size)) for a in range(0, emission_size, _BLOCK)]
        if not pairs_smaller(sum(np.count_nonzero(self._entries(a, b)) for a, b in blocks), len(self.w)):
            return self.dense()
        keys, values = nonzero_pairs((np.arange(a, b), self._entries(a, b)) for a, b in blocks)
        return SparseWeights(keys, values, self._entries(emission_size, len(self.w)), len(self.w))

    def _entries(self, a: int, b: int) -> np.ndarray:
        """The average at flat entries ``a`` to ``b − 1``, by :meth:`dense`'s arithmetic."""
        return AveragedWeights(self.w[a:b], self.u[a:b], self.visits).dense()


@dataclass
class SparseWeights:
    """A flat weight vector of ``size`` entries (the layout of the module docstring) that stores only some emission
    entries: ``keys`` (increasing flat indices ``row · L + label``) with their ``values``, every other emission
    weight being 0, and the ``tail`` block (transitions, start, end) in full.  Memory grows with the (feature,
    label) pairs a learner gave a weight, not with ``rows × labels``."""

    keys: np.ndarray
    values: np.ndarray
    tail: np.ndarray
    size: int

    def __post_init__(self):
        self.keys = np.asarray(self.keys, dtype=np.int64)
        self.values = np.asarray(self.values, dtype=np.float64)
        self.tail = np.asarray(self.tail, dtype=np.float64)
        if self.keys.shape != self.values.shape or self.keys.ndim != 1:
            raise ValueError(f"keys and values must be two vectors of one length, got {self.keys.shape} and "
                             f"{self.values.shape}")
        emission = self.size - len(self.tail)
        if len(self.keys) and not (self.keys[0] >= 0 and self.keys[-1] < emission and (np.diff(self.keys) > 0).all()):
            raise ValueError(f"keys must increase strictly within the {emission} emission entries")

    @property
    def emission_size(self) -> int:
        return self.size - len(self.tail)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes + self.tail.nbytes

    def take(self, indices: np.ndarray) -> np.ndarray:
        """The weights at flat ``indices`` (emission or tail; 0 where no entry is stored)."""
        indices = np.asarray(indices, dtype=np.int64)
        out = np.zeros(len(indices))
        tail = indices >= self.emission_size
        out[tail] = self.tail[indices[tail] - self.emission_size]
        slot, found = self.slots(indices[~tail])
        out[np.flatnonzero(~tail)[found]] = self.values[slot[found]]
        return out

    def slots(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each of the emission ``keys`` is stored, and whether it is (:func:`find_keys`)."""
        return find_keys(self.keys, keys)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The whole flat vector, for numpy (``np.asarray(w)``)."""
        return self.dense() if dtype is None else self.dense().astype(dtype)

    def dense(self) -> np.ndarray:
        """The whole flat vector."""
        out = np.zeros(self.size)
        out[self.keys] = self.values
        out[self.emission_size :] = self.tail
        return out

    def dense_blocks(self, block: int) -> Iterator[np.ndarray]:
        """:meth:`dense` a block of at most ``block`` entries at a time (the tail last), never made whole."""
        for first in range(0, self.emission_size, block):
            out = np.zeros(min(block, self.emission_size - first))
            begin, end = np.searchsorted(self.keys, [first, first + len(out)])
            out[self.keys[begin:end] - first] = self.values[begin:end]
            yield out
        yield self.tail

    @classmethod
    def from_dense(cls, w: np.ndarray, emission_size: int) -> SparseWeights:
        """The non-zero emission entries of the flat vector ``w`` and its tail."""
        keys = np.flatnonzero(w[:emission_size])
        return cls(keys, w[keys], w[emission_size:].copy(), len(w))


class JointFeatureMap:
    """Maps hashed position features and labels to indices of one flat weight vector.

    ``candidates`` (a :class:`~structlin.tagdict.TagDictionary`, optional) restricts the outputs ``Y(x)`` to
    the labels allowed at each position: the scores of a matrix that carries its words' codes (``words``)
    come with the ``allowed`` mask every decoder honours, in training and in prediction alike."""

    def __init__(self, labels, columns: np.ndarray, *, transitions: bool = True, candidates=None):
        self.labels = list(labels)
        if len(set(self.labels)) != len(self.labels):
            raise ValueError("labels must be distinct")
        self.label_index = {label: k for k, label in enumerate(self.labels)}
        self.columns = np.asarray(columns, dtype=np.int64)
        if len(self.columns) > 1 and not (np.diff(self.columns) > 0).all():
            raise ValueError("columns must be strictly increasing bucket ids")
        self.transitions = transitions
        self.candidates = candidates
        self._lookup: np.ndarray | None = None

    @classmethod
    def from_training(cls, labels, matrix: FeatureMatrix, *, transitions: bool = True,
                      candidates=None) -> JointFeatureMap:
        """A map with one row per bucket that occurs in ``matrix`` (the training corpus)."""
        return cls(labels, _buckets(matrix), transitions=transitions, candidates=candidates)

    def extended(self, matrix: FeatureMatrix) -> JointFeatureMap:
        """This map plus a row for every bucket of ``matrix`` it lacks (``columns`` stay sorted, so
        old rows may move: see :meth:`carry`); the map itself when ``matrix`` brings no new bucket."""
        columns = np.union1d(self.columns, _buckets(matrix))
        if len(columns) == self.n_rows:
            return self
        return JointFeatureMap(self.labels, columns, transitions=self.transitions, candidates=self.candidates)

    def carry(self, w: np.ndarray | SparseWeights, source: JointFeatureMap) -> np.ndarray | SparseWeights:
        """``w``, laid out for ``source`` (a map whose buckets this one holds, e.g. the map it extends),
        as a new weight vector of this map's layout (of the same form, dense or :class:`SparseWeights`):
        every row moves to its bucket's row here, rows of buckets ``source`` lacks are zero, and the
        transition block is copied as it is."""
        if source.labels != self.labels or source.transitions != self.transitions:
            raise ValueError("weights are carried only between maps of the same labels and transitions")
        if not np.isin(source.columns, self.columns, assume_unique=True).all():
            raise ValueError("the source map has buckets this map lacks")
        if isinstance(w, SparseWeights):  # rows keep their order, so the moved keys still increase
            rows, labels = np.divmod(w.keys, self.n_labels)
            keys = np.searchsorted(self.columns, source.columns[rows]) * self.n_labels + labels
            return SparseWeights(keys, w.values.copy(), w.tail.copy(), self.size)
        out = np.zeros(self.size)
        self.emission_weights(out)[np.searchsorted(self.columns, source.columns)] = source.emission_weights(w)
        out[self.transition_offset :] = w[source.transition_offset :]
        return out

    # --- layout ---------------------------------------------------------------------------------

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_rows(self) -> int:
        return len(self.columns)

    @property
    def transition_offset(self) -> int:
        return self.n_rows * self.n_labels

    @property
    def size(self) -> int:
        """Length of the flat weight vector."""
        L = self.n_labels
        return self.transition_offset + (L * L + 2 * L if self.transitions else 0)

    def emission_weights(self, w: np.ndarray) -> np.ndarray:
        """The ``(n_rows, L)`` view of ``w``'s emission block."""
        return w[: self.transition_offset].reshape(self.n_rows, self.n_labels)

    def emission_matrix(self, w: np.ndarray | SparseWeights) -> np.ndarray:
        """The ``(n_rows, L)`` emission block of ``w`` to read: :meth:`emission_weights` of a dense vector, the
        block filled in from the entries of :class:`SparseWeights`."""
        if isinstance(w, SparseWeights):
            block = np.zeros((self.n_rows, self.n_labels))
            block.reshape(-1)[w.keys] = w.values
            return block
        return self.emission_weights(w)

    def tail(self, w: np.ndarray | SparseWeights) -> np.ndarray:
        """The tail block (transitions, start, end) of ``w``, dense or :class:`SparseWeights`."""
        return w.tail if isinstance(w, SparseWeights) else w[self.transition_offset :]

    def transition_weights(self, w: np.ndarray | SparseWeights):
        """Views ``(transitions (L×L), start (L), end (L))`` of ``w``, or ``(None, None, None)``."""
        return self.tail_weights(self.tail(w))

    @property
    def tail_rows(self) -> np.ndarray:
        """The tail block (transitions, start, end) seen as rows of ``L`` weights, as row numbers after the
        emission rows: ``w.reshape(-1, L)[tail_rows]`` is the tail (empty without transitions)."""
        return np.arange(self.n_rows, self.size // self.n_labels)

    def tail_weights(self, tail: np.ndarray):
        """Views ``(transitions, start, end)`` of the tail block ``w[transition_offset:]`` alone, or
        ``(None, None, None)``."""
        if not self.transitions:
            return None, None, None
        L = self.n_labels
        return tail[: L * L].reshape(L, L), tail[L * L : L * L + L], tail[L * L + L : L * L + 2 * L]

    # --- inputs ---------------------------------------------------------------------------------

    def index(self, matrix: FeatureMatrix | FactoredMatrix, *,
              overwrite: bool = False) -> FeatureMatrix | FactoredMatrix:
        """Renumber hashed buckets to weight rows; buckets without a row are dropped (in every table of a
        :class:`~structlin.matrix.FactoredMatrix`).  ``overwrite``: the matrix is the caller's to spend, and when
        no bucket is dropped (the training matrix the map was made from) its bucket array is renumbered in place,
        so that the corpus is not held twice."""
        if isinstance(matrix, FactoredMatrix):
            return replace(matrix, tables=[self.index(table) for table in matrix.tables])
        lookup = self._lookup
        if lookup is None:
            # One slot past the largest column stays −1, so clipping maps every larger bucket there.
            size = int(self.columns[-1]) + 2 if len(self.columns) else 1
            lookup = np.full(size, -1, dtype=np.int32)
            lookup[self.columns] = np.arange(len(self.columns), dtype=np.int32)
            if not overwrite:  # kept for the inputs to come; not while training on the matrix the map was made from
                self._lookup = lookup
        clipped = np.minimum(matrix.indices, len(lookup) - 1)
        indexed = replace(matrix, indices=clipped).map_columns(lookup)
        if overwrite and len(indexed.indices) == len(matrix.indices) and matrix.indices.dtype == indexed.indices.dtype:
            matrix.indices[:] = indexed.indices
            return replace(indexed, indices=matrix.indices)
        return indexed

    def encode_labels(self, labels, *, unknown: int | None = None) -> np.ndarray:
        """Label ids of a flat sequence of labels; an unseen label raises, or maps to ``unknown``."""
        index = self.label_index
        if unknown is None:
            return np.fromiter((index[y] for y in labels), dtype=np.int64)
        return np.fromiter((index.get(y, unknown) for y in labels), dtype=np.int64)

    # --- scores and feature differences ---------------------------------------------------------

    def scores(self, w: np.ndarray | SparseWeights | AveragedWeights, matrix: FeatureMatrix | FactoredMatrix) -> Scores:
        """Emission scores of every label at every position (``X @ W``) and the transition views."""
        if isinstance(w, AveragedWeights):
            return self._average_scores(w, matrix)
        trans, start, end = self.transition_weights(w)
        sparse = isinstance(w, SparseWeights)
        weights = self.emission_rows(w) if sparse else self.emission_weights(w)

        def multiply(table: FeatureMatrix) -> np.ndarray:
            """``table @ W`` (for SparseWeights a sparse product: the stored pairs of each entry's row)."""
            return (table.csr(self.n_rows) @ weights).toarray() if sparse else table.dot(weights)

        emissions = matrix.product(multiply, self.n_labels) if isinstance(matrix, FactoredMatrix) else multiply(matrix)
        return Scores(emissions, matrix.lengths, trans, start, end, self.allowed(matrix))

    def _average_scores(self, w: AveragedWeights, matrix: FeatureMatrix) -> Scores:
        """:meth:`scores` of an unmade average: the emission rows ``matrix`` uses are made, and the product runs on
        ``matrix`` renumbered onto them (each position's entries in the same order: the same sums)."""
        used = np.zeros(self.n_rows, dtype=bool)
        used[matrix.indices] = True
        rows = np.flatnonzero(used)  # increasing; each entry's place among them by a count, not a sort
        local = (np.cumsum(used, dtype=np.int32) - 1)[matrix.indices]
        emissions = replace(matrix, indices=local).dot(w.take_rows(rows, self.n_labels))
        trans, start, end = self.tail_weights(w.take(np.arange(self.transition_offset, self.size)))
        return Scores(emissions, matrix.lengths, trans, start, end, self.allowed(matrix))

    def emission_rows(self, w: SparseWeights) -> scipy.sparse.csr_matrix:
        """The ``(n_rows, L)`` emission block of ``w`` as a scipy CSR matrix of its stored pairs (``key = row·L +
        label``)."""
        return scipy.sparse.csr_matrix((w.values, w.keys % self.n_labels, self.row_starts(w.keys)),
                                       shape=(self.n_rows, self.n_labels))

    def row_starts(self, keys: np.ndarray) -> np.ndarray:
        """:func:`row_starts` of this map's rows and labels."""
        return row_starts(keys, self.n_rows, self.n_labels)

    def sparse_emissions(self, keys: np.ndarray, values: np.ndarray, matrix: FeatureMatrix,
                         starts: np.ndarray | None = None) -> np.ndarray:
        """``X @ W`` for emission weights stored as increasing flat ``keys`` with their ``values`` (as
        :class:`SparseWeights` keeps them): every entry of ``matrix`` (row ``r``, value ``x``) meets the keys
        of its row, ``[r·L, (r + 1)·L)``, and adds ``x · w`` to its position's label.  The rows' keys are found
        by binary search, or read from their :meth:`row_starts` ``starts``."""
        L = self.n_labels
        rows = matrix.indices.astype(np.int64)
        first = rows * L
        if starts is None:
            lo, hi = np.searchsorted(keys, first), np.searchsorted(keys, first + L)
        else:
            lo, hi = starts[rows], starts[rows + 1]
        stored = ranges(lo, hi)
        meets = hi - lo
        slots = np.repeat(matrix.entry_positions() * L - first, meets) + keys[stored]
        products = np.repeat(matrix.values.astype(np.float64), meets) * values[stored]
        emissions = np.bincount(slots, products, minlength=matrix.n_positions * L)
        return emissions.astype(np.float64, copy=False).reshape(-1, L)  # (bincount counts when nothing meets)

    def row_scores(self, batch: FeatureMatrix, entry_rows: np.ndarray, rows: np.ndarray, tail: np.ndarray) -> Scores:
        """:meth:`scores` from a subset of the weights: ``rows`` holds the emission rows ``batch``'s entries
        use (``entry_rows`` numbers each entry's row in ``rows``), ``tail`` the tail block.  A learner that
        keeps ``w`` in another form, or updates a few rows at a time, reads only these."""
        return Scores(batch.dot_rows(entry_rows, rows), batch.lengths, *self.tail_weights(tail), self.allowed(batch))

    def allowed(self, matrix: FeatureMatrix, positions: np.ndarray | None = None) -> np.ndarray | None:
        """The labels allowed at each position of ``matrix`` (or at its ``positions``) by :attr:`candidates`:
        ``Scores.allowed``, or None when either has no dictionary."""
        if self.candidates is None or matrix.words is None:
            return None
        codes = matrix.words if positions is None else matrix.words[positions]
        return self.candidates.mask(self.candidates.rows_of_codes(codes))

    def tail_counts(self, lengths: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """The tail block of ``Σ φ(x, y)`` over instances of ``lengths`` with labels ``labels``: how often
        each transition ``[previous, next]``, first label and last label occurs (empty without
        transitions)."""
        if not self.transitions:
            return np.zeros(0)
        L, chain = self.n_labels, Chains(lengths)
        p = chain.followers
        return np.concatenate([np.bincount(labels[p - 1] * L + labels[p], minlength=L * L).astype(np.float64),
                               np.bincount(labels[chain.first], minlength=L), np.bincount(labels[chain.last], minlength=L)])

    def feature_difference(self, matrix: FeatureMatrix, gold: np.ndarray, predicted: np.ndarray):
        """``φ(x, y) − φ(x, ŷ)`` for every instance of a batch, as sparse entries of ``w``.

        Returns ``(indices, values, instance)``: flat weight indices (repeats allowed; apply with
        ``np.add.at``), their values, and the batch instance each entry belongs to.  Only positions
        and label pairs where ``y`` and ``ŷ`` differ contribute; everything else cancels.
        """
        L = self.n_labels
        instance_of = np.repeat(np.arange(matrix.n_instances), matrix.lengths)
        wrong = np.flatnonzero(gold != predicted)
        entries = ranges(matrix.indptr[wrong], matrix.indptr[wrong + 1])
        position = np.repeat(wrong, matrix.indptr[wrong + 1] - matrix.indptr[wrong])
        rows = matrix.indices[entries].astype(np.int64) * L
        values = matrix.values[entries].astype(np.float64)
        parts = [(rows + gold[position], values, position), (rows + predicted[position], -values, position)]
        if self.transitions and len(wrong):
            parts += self._transition_difference(matrix, gold, predicted)
        indices = np.concatenate([p[0] for p in parts])
        vals = np.concatenate([p[1] for p in parts])
        owner = instance_of[np.concatenate([p[2] for p in parts])]
        return indices, vals, owner

    def _transition_difference(self, matrix: FeatureMatrix, gold, predicted):
        L, t0 = self.n_labels, self.transition_offset
        chain = Chains(matrix.lengths)
        p = chain.followers
        changed = p[(gold[p - 1] != predicted[p - 1]) | (gold[p] != predicted[p])]
        ones = np.ones(len(changed))
        s0, e0 = t0 + L * L, t0 + L * L + L
        f = chain.first[gold[chain.first] != predicted[chain.first]]
        e = chain.last[gold[chain.last] != predicted[chain.last]]
        return [
            (t0 + gold[changed - 1] * L + gold[changed], ones, changed),
            (t0 + predicted[changed - 1] * L + predicted[changed], -ones, changed),
            (s0 + gold[f], np.ones(len(f)), f),
            (s0 + predicted[f], -np.ones(len(f)), f),
            (e0 + gold[e], np.ones(len(e)), e),
            (e0 + predicted[e], -np.ones(len(e)), e),
        ]


def nonzero_pairs(blocks: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The flat keys and the values of the non-zero entries of ``blocks``, pairs ``(keys, values)`` of one length
    (the key of every value), in the blocks' order."""
    keys, values = [np.zeros(0, np.int64)], [np.zeros(0)]
    for block_keys, block in blocks:
        nonzero = np.flatnonzero(block)
        keys.append(block_keys[nonzero])
        values.append(block[nonzero])
    return np.concatenate(keys), np.concatenate(values)


def pairs_smaller(n_pairs: int, size: int) -> bool:
    """Whether ``n_pairs`` stored pairs (16 bytes each) take less memory than a flat vector of ``size`` entries (8
    bytes each)."""
    return 2 * n_pairs < size


def smaller_form(w: np.ndarray, emission_size: int) -> np.ndarray | SparseWeights:
    """The flat vector ``w`` as its non-zero emission pairs and tail (:class:`SparseWeights`) when they take less
    memory than the vector itself (:func:`pairs_smaller`), else ``w``."""
    if pairs_smaller(np.count_nonzero(w[:emission_size]), len(w)):
        return SparseWeights.from_dense(w, emission_size)
    return w


def write_weights(path, w: np.ndarray | SparseWeights) -> None:
    """Write a weight vector to ``path`` without pickle, a short-lived file of a run (a round's weights, a streamed
    run's best snapshot: not synced to disk, :func:`~structlin.outputs.atomic_output`): a dense one as one ``.npy``
    array, a :class:`SparseWeights` as ``.npz`` arrays; what :func:`read_weights` reads back."""
    with atomic_output(path, "wb", durable=False) as file:
        if isinstance(w, SparseWeights):
            np.savez(file, keys=w.keys, values=w.values, tail=w.tail, size=np.array(w.size))
        else:
            np.save(file, np.asarray(w, dtype=np.float64), allow_pickle=False)


def read_weights(path, *, mapped: bool = False) -> np.ndarray | SparseWeights:
    """The weight vector :func:`write_weights` wrote to ``path``; ``mapped``: a dense one memory-mapped,
    read-only (no copy: for a reader that only reads it)."""
    loaded = np.load(path, mmap_mode="r" if mapped else None, allow_pickle=False)
    if isinstance(loaded, np.ndarray):
        return loaded
    with loaded as arrays:
        return SparseWeights(arrays["keys"], arrays["values"], arrays["tail"], int(arrays["size"]))


def row_starts(keys: np.ndarray, n_rows: int, n_labels: int) -> np.ndarray:
    """Where each row's emission keys (``row · n_labels + label``) begin in the increasing ``keys``, and their end
    (``n_rows + 1`` entries): row ``r`` holds ``keys[starts[r] : starts[r + 1]]``."""
    return np.searchsorted(keys, np.arange(n_rows + 1, dtype=np.int64) * n_labels)


def find_keys(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``wanted`` is in the increasing ``keys``, and whether it is there (the slot of a missing
    one is meaningless)."""
    slot = np.searchsorted(keys, wanted)
    found = slot < len(keys)
    found[found] = keys[slot[found]] == wanted[found]
    return slot, found


def _buckets(matrix: FeatureMatrix) -> np.ndarray:
    """The hashed buckets that occur in ``matrix``, in increasing order."""
    return np.flatnonzero(np.bincount(matrix.indices))
