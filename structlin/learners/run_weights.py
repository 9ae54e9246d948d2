"""The weights of a perceptron-family run, with the sums that average them: dense, only the rows the run has
touched, or only the (feature, label) pairs it has touched.

A run reads its weights at flat indices of the joint map's layout (``w[indices]``), scores batches with them and
adds updates; with averaging it also keeps ``u``, the updates weighted by the visit they were made at, so that
the average over ``T`` visits is ``w − u/T`` (:mod:`.perceptron`).  :class:`DenseWeights` keeps both as full
vectors.  A perceptron changes the weights of a position's features with its gold and its predicted labels
only when it gets the position wrong, so most rows of a tagging corpus (features seen only at positions it
gets right: rare words, rare contexts) are never touched.  :class:`TouchedRows` keeps every label's weight of
the rows an update has touched (a dense block, scored as fast as the full vectors; EWT + Brown + the treebank,
12 labels: 0.47 M of 1.31 M rows), and goes on as :class:`DenseWeights` once most rows are touched (a text
classifier's misclassified document touches all its words).  :class:`GrowingWeights` keeps an emission
weight only once an update has touched that very pair, a few of the ``L`` labels of each row, so memory grows
with what is learned (EWT UPOS: 0.8 M of 5.7 M pairs) and not with ``rows × labels``; the few rows that meet many
labels (a text's common words meet most of them) it keeps as full rows, read by position and scored as
:class:`TouchedRows` scores its rows.  All three give the same model, to the bit: a weight never touched is 0
in each.  Which one a learner keeps: :func:`weight_store`.

New pairs first go to a small *pending* store beside the main one (both sorted by key), and are merged into
the main store when the pending one has grown to a sixteenth of it, so that a batch that meets new pairs costs
O(pending), not O(pairs).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..joint import (AveragedWeights, JointFeatureMap, Scores, SparseWeights, find_keys, nonzero_pairs,
                     pairs_smaller, row_starts)
from ..matrix import ranges

#: The pending store is merged into the main one when it holds more pairs than this, or than a sixteenth of it.
_PENDING = 4096

#: The rows of a touched-rows average made into pairs at a time (:meth:`_UnmadeRowAverage.smallest`).
_ROWS_AT_A_TIME = 1 << 16

#: A learner that can (``capabilities.sparse``) keeps only the pairs it touched when the labels are more than this.
#: Scoring a feature costs ``L`` multiply-adds densely and about ten times as much per stored pair sparsely, so
#: with few labels the full vectors are faster (EWT UPOS, 17 labels: 12 s against 28 s; 20 Newsgroups, 20
#: labels: 9 s against 46 s) and not much larger; with hundreds, the touched pairs are a small share of
#: ``rows × labels`` and the time is the same (Brown, 8,000 sentences, 251 labels: 0.8 M of 83 M pairs, 108 s
#: either way, 2.0 GB → 0.13 GB; docs/benchmarks.md).  The model is the same either way.
PAIRS_ABOVE_LABELS = 100

#: A row of :class:`GrowingWeights` holding pairs of at least this share of the labels is kept as a full row: it
#: then takes at most twice its pairs' memory (``L`` weights and sums against a key, a weight and a sum a pair).
#: Brown's sentences labelled by their 500 files: 2 epochs in 30.5 s with pairs only, 12.0 s (+8 MiB) with a third,
#: 10.7 s (+122 MiB) with an eighth (docs/benchmarks.md).
FULL_ROW_SHARE = 1 / 3


def stores_pairs(capabilities, n_labels: int) -> bool:
    """Whether a learner of ``capabilities`` keeps only the (feature, label) pairs it touched, for ``n_labels``
    labels: its weights are then :class:`~structlin.joint.SparseWeights` (a loaded model's too)."""
    return capabilities.sparse and n_labels > PAIRS_ABOVE_LABELS


def loads_pairs(capabilities, n_labels: int, n_pairs: int, size: int) -> bool:
    """Whether a model file's ``n_pairs`` stored weights (of a flat vector of ``size``) are read as pairs: those of a
    learner that keeps pairs (:func:`stores_pairs`), and any model's of many labels when they are the smaller form
    (max-ent's compact run, naive Bayes of a small vocabulary: :func:`~structlin.joint.pairs_smaller`)."""
    return stores_pairs(capabilities, n_labels) or (n_labels > PAIRS_ABOVE_LABELS and pairs_smaller(n_pairs, size))


def weight_store(capabilities, n_labels: int) -> type:
    """The store of a run's weights for a learner of ``capabilities`` and ``n_labels`` labels: the touched pairs
    (:func:`stores_pairs`), else the touched rows when the learner's untouched weights stay 0
    (``capabilities.sparse``), else the full vectors."""
    if not capabilities.sparse:
        return DenseWeights
    return GrowingWeights if stores_pairs(capabilities, n_labels) else TouchedRows


class DenseWeights:
    """Every weight of the joint map's layout, and the averaging sums ``u`` when ``averaged``."""

    def __init__(self, joint: JointFeatureMap, averaged: bool, initial: np.ndarray | SparseWeights | None = None):
        self.w = np.zeros(joint.size) if initial is None else _dense(initial)
        self.averaged = averaged
        self._u = np.zeros(joint.size) if averaged else None
        self._given: tuple[np.ndarray, int] | None = None  # (the average that took u's memory, its visits)

    @classmethod
    def holding(cls, w: np.ndarray, u: np.ndarray | None) -> DenseWeights:
        """The store of the full vectors ``w`` and averaging sums ``u`` (None: no averaging), as they are."""
        store = cls.__new__(cls)
        store.w, store.averaged, store.u = w, u is not None, u
        return store

    @property
    def u(self) -> np.ndarray | None:
        """The averaging sums; after :meth:`final_average` gave their memory away, ``visits · (w − average)``
        again (equal to them up to rounding), for a run that goes on.  Read before ``w`` changes."""
        if self._given is not None:
            average, visits = self._given
            self._u, self._given = visits * (self.w - average), None
        return self._u

    @u.setter
    def u(self, sums: np.ndarray | None) -> None:
        self._u, self._given = sums, None

    def __len__(self) -> int:
        return len(self.w)

    def __getitem__(self, indices: np.ndarray) -> np.ndarray:
        return self.w[indices]

    def scores(self, joint: JointFeatureMap, batch) -> Scores:
        return joint.scores(self.w, batch)

    def add(self, indices: np.ndarray, values: np.ndarray, visits: np.ndarray) -> None:
        """``w[indices] += values`` and ``u[indices] += values · visits`` (repeated indices summed)."""
        u = self.u
        np.add.at(self.w, indices, values)
        if u is not None:
            np.add.at(u, indices, values * visits)

    def current(self) -> np.ndarray:
        return self.w.copy()

    def average(self, visits: int) -> np.ndarray:
        """``w − u/visits`` (one new array)."""
        return self.unmade_average(visits).dense()

    def unmade_average(self, visits: int) -> AveragedWeights:
        """``w − u/visits``, not made (:class:`~structlin.joint.AveragedWeights`): read from ``w`` and ``u`` as
        they are when it is scored or made."""
        return AveragedWeights(self.w, self.u, visits)

    def final_average(self, visits: int) -> np.ndarray:
        """:meth:`average` written over the sums' memory, for a run's last snapshot: the run then holds two full
        vectors, not three (the sums are made again if it goes on)."""
        out = self.u
        np.divide(out, visits, out=out)
        np.subtract(self.w, out, out=out)
        self._u, self._given = None, (out, visits)
        return out

    def visit_sums(self, visits: int) -> np.ndarray:
        """``Σ_t w_t`` over the ``visits`` so far: ``visits · w − u``."""
        return visits * self.w - self.u

    def scale(self, factor: float) -> None:
        """Multiply every weight (and sum) by ``factor``."""
        for v in (self.w, self.u):
            if v is not None:
                v *= factor

    def assign(self, w: np.ndarray, sums: np.ndarray | None, visits: int) -> None:
        """Make ``w`` the weights and, when averaging, ``sums`` the :meth:`visit_sums` of ``visits`` visits."""
        self.w = _dense(w)
        if self.averaged:
            self.u = visits * self.w - _dense(sums)

    def settled(self) -> DenseWeights:
        """The store to go on with (:meth:`TouchedRows.settled`): this one."""
        return self

    def carry(self, joint: JointFeatureMap, source: JointFeatureMap) -> None:
        """Lay the weights and sums out for ``joint``, a map that extends ``source``."""
        u = self.u
        self.w = joint.carry(self.w, source)
        self.u = None if u is None else joint.carry(u, source)


class TouchedRows:
    """Every label's weight (and sum) of the emission rows an update has touched, found through a slot per row;
    the tail block in full.

    The run's vectors are kept *compact*: the tail block (``T`` entries), then a row of zeros (slot 0, where
    every untouched row points), then one ``L``-wide row per touched row in the order they were first touched.
    A batch is scored by renumbering its entries' rows to their slots and multiplying by the compact rows: the
    same products, in the same order, as with the full vectors.  ``initial`` weights (a trained model to go on
    from) touch the rows where they are not 0.

    Each compact vector is allocated at once for every row and filled from its start: the system gives a large
    array of zeros page by page as it is written, so that resident memory follows the rows touched and a new
    row never moves the others (where every row gets touched, as with 20 Newsgroups' words, this costs what the
    full vectors cost).
    """

    def __init__(self, joint: JointFeatureMap, averaged: bool, initial: np.ndarray | SparseWeights | None = None):
        self.averaged = averaged
        self._layout(joint)
        self._fill(None if initial is None else _dense(initial), None)

    def _layout(self, joint: JointFeatureMap) -> None:
        self.size, self.emission_size, self.n_labels = joint.size, joint.transition_offset, joint.n_labels
        self.tail_size = joint.size - joint.transition_offset

    def _fill(self, w: np.ndarray | None, u: np.ndarray | None) -> None:
        """Store the full vectors ``w`` and ``u`` (None: zero): the rows where either is not 0 are touched."""
        L, n_rows = self.n_labels, self.emission_size // self.n_labels
        self.slot_of = np.zeros(n_rows, dtype=np.int32)  # the slot of every row, 0 while untouched
        self._rows = np.zeros(n_rows, dtype=np.int32)  # the row of every slot from 1 on, room for every row
        self.n_rows_touched = 0
        self._w = self._capacity()
        self._u = self._capacity() if self.averaged else None
        if w is None:
            return
        touched = (w[: self.emission_size] != 0).reshape(-1, L).any(axis=1)
        if u is not None:
            touched |= (u[: self.emission_size] != 0).reshape(-1, L).any(axis=1)
        self._touch(np.flatnonzero(touched))
        for full, compact in ((w, self._w), (u, self._u)):
            if full is not None and compact is not None:
                self._used(compact)[:] = self.compact(full)

    def _capacity(self, used: np.ndarray | None = None) -> np.ndarray:
        """A compact vector with room for every row (zeros, resident only where written), holding ``used``."""
        out = np.zeros(self.tail_size + (self.emission_size // self.n_labels + 1) * self.n_labels)
        if used is not None:
            out[: len(used)] = used
        return out

    @property
    def row_of(self) -> np.ndarray:
        """The row of every slot from 1 on, in the order the rows were first touched."""
        return self._rows[: self.n_rows_touched]

    def __len__(self) -> int:
        return self.size

    def _touch(self, rows: np.ndarray) -> None:
        """Give the next slots to those of ``rows`` that have none yet (in increasing order)."""
        new = np.unique(rows[self.slot_of[rows] == 0])
        if len(new):
            first = self.n_rows_touched + 1
            self.slot_of[new] = np.arange(first, first + len(new), dtype=np.int32)
            self._rows[first - 1 : first - 1 + len(new)] = new
            self.n_rows_touched += len(new)

    def _indices(self, indices: np.ndarray, touch: bool = False) -> np.ndarray:
        """Compact indices of the flat ``indices`` (an untouched row's are its slot-0 zeros, unless ``touch``
        gives it a slot)."""
        indices = np.asarray(indices, dtype=np.int64)
        out = np.empty_like(indices)
        tail = indices >= self.emission_size
        out[tail] = indices[tail] - self.emission_size
        rows, labels = np.divmod(indices[~tail], self.n_labels)
        if touch:
            self._touch(rows)
        out[~tail] = self.tail_size + self.slot_of[rows].astype(np.int64) * self.n_labels + labels
        return out

    def _used(self, v: np.ndarray) -> np.ndarray:
        return v[: self.tail_size + (len(self.row_of) + 1) * self.n_labels]

    def compact(self, full: np.ndarray) -> np.ndarray:
        """The compact vector of the full flat vector ``full`` (its touched rows and tail)."""
        L = self.n_labels
        return np.concatenate([full[self.emission_size :], np.zeros(L),
                               full[: self.emission_size].reshape(-1, L)[self.row_of].ravel()])

    def expand(self, compact: np.ndarray) -> np.ndarray:
        """The full flat vector of a compact one (untouched rows 0)."""
        out, L = np.zeros(self.size), self.n_labels
        start = self.tail_size + L  # the first touched row's
        rows = compact[start : start + len(self.row_of) * L].reshape(-1, L)
        out[: self.emission_size].reshape(-1, L)[self.row_of] = rows
        out[self.emission_size :] = compact[: self.tail_size]
        return out

    def __getitem__(self, indices: np.ndarray) -> np.ndarray:
        return self._w[self._indices(indices)]

    def scores(self, joint: JointFeatureMap, batch) -> Scores:
        rows = self._used(self._w)[self.tail_size :].reshape(-1, self.n_labels)
        emissions = replace(batch, indices=self.slot_of[batch.indices]).dot(rows)
        return Scores(emissions, batch.lengths, *joint.tail_weights(self._w[: self.tail_size]), joint.allowed(batch))

    def add(self, indices: np.ndarray, values: np.ndarray, visits: np.ndarray) -> None:
        """``w[indices] += values`` and ``u[indices] += values · visits`` (repeated indices summed), touching the
        rows met for the first time."""
        at = self._indices(indices, touch=True)
        np.add.at(self._w, at, values)
        if self._u is not None:
            np.add.at(self._u, at, values * visits)

    def current(self) -> np.ndarray:
        return self.expand(self._w)

    def average(self, visits: int) -> np.ndarray:
        """``w − u/visits`` (a new full vector)."""
        return self.expand(AveragedWeights(self._used(self._w), self._used(self._u), visits).dense())

    def final_average(self, visits: int) -> _UnmadeRowAverage:
        """The run's last average, left unmade (:meth:`unmade_average`): it is read from the compact rows, so
        there is nothing to save by reusing the sums' memory, and a run that keeps it as pairs never makes the
        full vector."""
        return self.unmade_average(visits)

    def unmade_average(self, visits: int) -> AveragedWeights:
        """``w − u/visits``, not made (:class:`_UnmadeRowAverage`)."""
        return _UnmadeRowAverage(self, visits)

    def visit_sums(self, visits: int) -> np.ndarray:
        """``Σ_t w_t`` over the ``visits`` so far: ``visits · w − u``."""
        return self.expand(visits * self._used(self._w) - self._used(self._u))

    def scale(self, factor: float) -> None:
        """Multiply every weight (and sum) by ``factor``: the touched rows' and the tail's."""
        for v in (self._w, self._u):
            if v is not None:
                self._used(v)[:] *= factor

    def assign(self, w: np.ndarray | SparseWeights, sums: np.ndarray | SparseWeights | None, visits: int) -> None:
        """Make ``w`` the weights and, when averaging, ``sums`` the :meth:`visit_sums` of ``visits`` visits."""
        w = _dense(w)
        self._fill(w, visits * w - _dense(sums) if self.averaged else None)

    def settled(self) -> TouchedRows | DenseWeights:
        """The store to go on with: this one, or once more than half of the rows are touched, the full vectors
        (:class:`DenseWeights`, the same weights and sums), which are no larger by much then and cost no
        renumbering (20 Newsgroups, whose words a misclassified post touches all at once: 21.7 s against 17.7 s
        for 10 epochs).  The compact vectors are given up one by one as the full ones are made."""
        if 2 * len(self.row_of) <= len(self.slot_of):
            return self
        w, self._w = self.expand(self._used(self._w)), None
        u, self._u = None if self._u is None else self.expand(self._used(self._u)), None
        return DenseWeights.holding(w, u)

    def carry(self, joint: JointFeatureMap, source: JointFeatureMap) -> None:
        """Lay the weights and sums out for ``joint``, a map that extends ``source`` (its rows keep their
        slots)."""
        moved = np.searchsorted(joint.columns, source.columns)
        slot_of = np.zeros(joint.n_rows, dtype=np.int32)
        slot_of[moved] = self.slot_of
        w, u = self._used(self._w), None if self._u is None else self._used(self._u)
        rows = np.zeros(joint.n_rows, dtype=np.int32)
        rows[: self.n_rows_touched] = moved[self.row_of]
        self.slot_of, self._rows = slot_of, rows
        self._layout(joint)
        self._w, self._u = self._capacity(w), None if u is None else self._capacity(u)


class _UnmadeRowAverage(AveragedWeights):
    """The average ``w − u/visits`` of a :class:`TouchedRows` run, not made: read from its compact vectors, at the
    flat indices of the full layout, by the arithmetic of :class:`~structlin.joint.AveragedWeights`."""

    def __init__(self, store: TouchedRows, visits: int):
        super().__init__(store._used(store._w), store._used(store._u), visits)
        self.store = store

    def take(self, indices) -> np.ndarray:
        return super().take(self.store._indices(indices))

    def take_rows(self, rows: np.ndarray, n_labels: int) -> np.ndarray:
        """The rows' average from their slots (an untouched row's slot 0 holds zeros)."""
        slots = AveragedWeights(self.w[self.store.tail_size :], self.u[self.store.tail_size :], self.visits)
        return slots.take_rows(self.store.slot_of[rows], n_labels)

    def dense(self) -> np.ndarray:
        return self.store.expand(super().dense())

    def smallest(self, emission_size: int) -> SparseWeights:
        """The average's non-zero emission entries and its tail, made from the touched rows alone, a block of rows
        at a time: memory holds the pairs, never the full vector (what a run on a corpus on disk keeps).  They are
        never larger than the full vector: at most half of the rows are touched (:meth:`TouchedRows.settled`)."""
        store, L = self.store, self.store.n_labels
        start = store.tail_size + L  # the first touched row's
        def blocks():
            for first in range(0, store.n_rows_touched, _ROWS_AT_A_TIME):
                rows = store.row_of[first : first + _ROWS_AT_A_TIME].astype(np.int64)
                span = slice(start + first * L, start + (first + len(rows)) * L)
                yield (rows[:, None] * L + np.arange(L)).ravel(), AveragedWeights(self.w[span], self.u[span],
                                                                                   self.visits).dense()

        keys, values = nonzero_pairs(blocks())
        order = np.argsort(keys)  # the rows are in the order they were first touched
        tail = AveragedWeights(self.w[: store.tail_size], self.u[: store.tail_size], self.visits).dense()
        return SparseWeights(keys[order], values[order], tail, emission_size + store.tail_size)


class GrowingWeights:
    """The emission weights (and sums) of the pairs touched so far, by flat key; the rows that hold many of the
    labels as full rows; the tail block in full.

    A row whose stored pairs reach a share of the labels (:data:`FULL_ROW_SHARE`) is moved into a block of full
    ``L``-wide rows when the pending store is next merged: the frequent features, which meet most labels (a text
    classifier's common words), and which most entries of a batch and most updates read.  A full row is read and
    updated by position and scored by one sparse-dense product, where a pair costs a search and about ten
    operations a score.  ``initial`` weights (a trained model to go on from) are stored from the start, as their
    non-zero pairs.
    """

    def __init__(self, joint: JointFeatureMap, averaged: bool, initial: np.ndarray | SparseWeights | None = None):
        self.size, self.emission_size, self.n_labels = joint.size, joint.transition_offset, joint.n_labels
        self.averaged = averaged
        initial = np.zeros(joint.size) if initial is None else initial
        initial = _sparse(initial, joint.transition_offset)
        self.keys, self.w, self.tail = initial.keys.copy(), initial.values.copy(), initial.tail.copy()
        self.u = np.zeros(len(self.keys)) if averaged else None
        self.tail_u = np.zeros(len(self.tail)) if averaged else None
        self._clear_pending()
        self._no_full_rows()
        self._make_full_rows()

    def _clear_pending(self) -> None:
        self.pending_keys, self.pending_w = np.zeros(0, np.int64), np.zeros(0)
        self.pending_u = np.zeros(0) if self.averaged else None

    def _no_full_rows(self) -> None:
        L = self.n_labels
        self.full_slot = np.full(self.emission_size // L, -1, dtype=np.int32)  # each row's full row, −1: its pairs
        self.full_rows = np.zeros(0, np.int64)  # the row of each full row
        self._full_w = np.zeros((0, L))  # the full rows' weights and sums, with room to grow into
        self._full_u = np.zeros((0, L)) if self.averaged else None

    @property
    def full_w(self) -> np.ndarray:
        return self._full_w[: len(self.full_rows)]

    @property
    def full_u(self) -> np.ndarray | None:
        return None if self._full_u is None else self._full_u[: len(self.full_rows)]

    def __len__(self) -> int:
        return self.size

    @property
    def n_pairs(self) -> int:
        """The emission weights stored: the pairs, and ``L`` for every full row."""
        return len(self.keys) + len(self.pending_keys) + len(self.full_rows) * self.n_labels

    def __getitem__(self, indices: np.ndarray) -> np.ndarray:
        """The current weights at flat ``indices`` (0 for a pair not stored)."""
        indices = np.asarray(indices, dtype=np.int64)
        out = np.zeros(len(indices))
        tail = indices >= self.emission_size
        out[tail] = self.tail[indices[tail] - self.emission_size]
        emission = np.flatnonzero(~tail)
        at = self._full_places(indices[emission])
        out[emission[at >= 0]] = self.full_w.ravel()[at[at >= 0]]
        emission = emission[at < 0]
        for keys, w in ((self.keys, self.w), (self.pending_keys, self.pending_w)):
            slot, found = find_keys(keys, indices[emission])
            out[emission[found]] = w[slot[found]]
        return out

    def _full_places(self, keys: np.ndarray) -> np.ndarray:
        """The place of each of the emission ``keys`` in the full rows' flat block, or −1 when its row is stored
        as pairs."""
        rows, labels = np.divmod(keys, self.n_labels)
        slots = self.full_slot[rows].astype(np.int64)
        return np.where(slots >= 0, slots * self.n_labels + labels, -1)

    def scores(self, joint: JointFeatureMap, batch) -> Scores:
        emissions = joint.sparse_emissions(self.keys, self.w, batch, self._starts)
        if len(self.pending_keys):
            emissions += joint.sparse_emissions(self.pending_keys, self.pending_w, batch)
        if len(self.full_rows):
            emissions += batch.map_columns(self.full_slot).dot(self.full_w)
        return Scores(emissions, batch.lengths, *joint.tail_weights(self.tail), joint.allowed(batch))

    def add(self, indices: np.ndarray, values: np.ndarray, visits: np.ndarray) -> None:
        """``w[indices] += values`` and ``u[indices] += values · visits`` (repeated indices summed), storing the
        pairs met for the first time."""
        indices = np.asarray(indices, dtype=np.int64)
        weighted = values * visits if self.averaged else None
        tail = indices >= self.emission_size
        if tail.any():
            at = indices[tail] - self.emission_size
            np.add.at(self.tail, at, values[tail])
            if self.averaged:
                np.add.at(self.tail_u, at, weighted[tail])
        emission = np.flatnonzero(~tail)
        at = self._full_places(indices[emission])
        full = emission[at >= 0]
        if len(full):
            _add(self.full_w.ravel(), None if self._full_u is None else self.full_u.ravel(), at[at >= 0],
                 values[full], None if weighted is None else weighted[full])
        emission = emission[at < 0]
        keys = indices[emission]
        slot, found = find_keys(self.keys, keys)
        _add(self.w, self.u, slot[found], values[emission[found]], None if weighted is None else weighted[emission[found]])
        rest = emission[~found]
        if not len(rest):
            return
        slot, found = find_keys(self.pending_keys, indices[rest])
        if not found.all():
            self._insert_pending(np.unique(indices[rest][~found]))
            slot = np.searchsorted(self.pending_keys, indices[rest])
        _add(self.pending_w, self.pending_u, slot, values[rest], None if weighted is None else weighted[rest])
        if len(self.pending_keys) > max(_PENDING, len(self.keys) // 16):
            self._merge()

    def _insert_pending(self, new: np.ndarray) -> None:
        """Store the pairs ``new`` (not stored yet, increasing) in the pending store, at weight 0 (a sorted
        insertion: one pass over the pending store)."""
        at = np.searchsorted(self.pending_keys, new)
        self.pending_keys = np.insert(self.pending_keys, at, new)
        self.pending_w = np.insert(self.pending_w, at, 0.0)
        self.pending_u = None if self.pending_u is None else np.insert(self.pending_u, at, 0.0)

    def _merge(self) -> None:
        """Move the pending pairs into the main store (one O(pairs) pass), then the rows that now hold enough
        labels into the full rows."""
        if not len(self.pending_keys):
            return
        merged = _SortedMerge(self.keys, self.pending_keys)
        self.keys, self.w = merged(self.keys, self.pending_keys), merged(self.w, self.pending_w)
        if self.averaged:
            self.u = merged(self.u, self.pending_u)
        self._clear_pending()
        self._make_full_rows()

    def _make_full_rows(self) -> None:
        """Move the rows of the main store that hold at least :data:`FULL_ROW_SHARE` of the labels into the full
        rows (the pending store empty), and find the main store's row starts again."""
        L = self.n_labels
        starts = row_starts(self.keys, len(self.full_slot), L)
        counts = np.diff(starts)
        new = np.flatnonzero(counts >= max(1, int(np.ceil(FULL_ROW_SHARE * L))))
        moved = np.zeros(len(starts), np.int64)  # the pairs leaving each row, shifting the later rows' starts
        moved[new + 1] = counts[new]
        self._starts = starts - np.cumsum(moved)  # where each row's pairs begin once they have left
        if not len(new):
            return
        first, size = len(self.full_rows), len(self.full_rows) + len(new)
        if size > len(self._full_w):  # room for a quarter more, so that a row is copied a few times at most
            self._full_w = _grown(self._full_w, size + size // 4)
            self._full_u = None if self._full_u is None else _grown(self._full_u, size + size // 4)
        self.full_slot[new] = np.arange(first, size, dtype=np.int32)
        self.full_rows = np.concatenate([self.full_rows, new])
        moving = ranges(starts[new], starts[new + 1])
        rows, labels = np.divmod(self.keys[moving], L)
        at = self.full_slot[rows].astype(np.int64) * L + labels
        self.full_w.ravel()[at] = self.w[moving]
        if self.averaged:
            self.full_u.ravel()[at] = self.u[moving]
            self.u = np.delete(self.u, moving)
        self.keys, self.w = np.delete(self.keys, moving), np.delete(self.w, moving)

    def _sort_full_rows(self) -> None:
        """Put the full rows in the order of their rows (they are made in the order they fill)."""
        order = np.argsort(self.full_rows)
        if (order == np.arange(len(order))).all():
            return
        n = len(order)
        self._full_w[:n] = self._full_w[order]
        if self._full_u is not None:
            self._full_u[:n] = self._full_u[order]
        self.full_rows = self.full_rows[order]
        self.full_slot[self.full_rows] = np.arange(n, dtype=np.int32)

    def _stored(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every stored emission weight as increasing keys with their weights and sums: the pairs, and the full
        rows' entries that are not 0 in either (new arrays)."""
        self._merge()
        if not len(self.full_rows):
            return self.keys.copy(), self.w.copy(), None if self.u is None else self.u.copy()
        self._sort_full_rows()
        nonzero = self.full_w != 0
        if self.averaged:
            nonzero |= self.full_u != 0
        flat = np.flatnonzero(nonzero)
        full_keys = self.full_rows[flat // self.n_labels]
        full_keys *= self.n_labels
        full_keys += flat % self.n_labels  # increasing
        merged = _SortedMerge(self.keys, full_keys)
        keys, w = merged(self.keys, full_keys), merged(self.w, self.full_w.ravel()[flat])
        return keys, w, None if self.u is None else merged(self.u, self.full_u.ravel()[flat])

    def current(self) -> SparseWeights:
        """The weights as of now."""
        keys, w, _ = self._stored()
        return SparseWeights(keys, w, self.tail.copy(), self.size)

    def average(self, visits: int) -> SparseWeights:
        """``w − u/visits``."""
        keys, w, u = self._stored()
        np.divide(u, visits, out=u)
        return SparseWeights(keys, np.subtract(w, u, out=w), self.tail - self.tail_u / visits, self.size)

    #: The stored pairs' average is new arrays of the stored pairs only: nothing to save by reusing the sums.
    final_average = average

    def visit_sums(self, visits: int) -> SparseWeights:
        """``Σ_t w_t`` over the ``visits`` so far: ``visits · w − u``."""
        keys, w, u = self._stored()
        np.multiply(w, visits, out=w)
        return SparseWeights(keys, np.subtract(w, u, out=w), visits * self.tail - self.tail_u, self.size)

    def scale(self, factor: float) -> None:
        """Multiply every weight (and sum) by ``factor``: the pairs', the pending ones', the full rows' and the
        tail's."""
        for v in (self.w, self.pending_w, self.full_w, self.tail, self.u, self.pending_u, self.full_u, self.tail_u):
            if v is not None:
                v *= factor

    def assign(self, w: SparseWeights, sums: SparseWeights | None, visits: int) -> None:
        """Make ``w`` the weights and, when averaging, ``sums`` the :meth:`visit_sums` of ``visits`` visits (the
        pairs of both stored)."""
        self._clear_pending()
        self._no_full_rows()
        w, sums = _sparse(w, self.emission_size), None if sums is None else _sparse(sums, self.emission_size)
        if not self.averaged:
            self.keys, self.w, self.tail = w.keys.copy(), w.values.copy(), w.tail.copy()
        else:
            w = weighted_sum([(1.0, w), (0.0, sums)])  # on the pairs of both
            u = weighted_sum([(visits, w), (-1.0, sums)])
            self.keys, self.w, self.tail, self.u, self.tail_u = w.keys, w.values, w.tail, u.values, u.tail
        self._make_full_rows()

    def settled(self) -> GrowingWeights:
        """The store to go on with (:meth:`TouchedRows.settled`): this one."""
        return self

    def carry(self, joint: JointFeatureMap, source: JointFeatureMap) -> None:
        """Renumber the stored pairs for ``joint``, a map that extends ``source`` (rows keep their order; the full
        rows are made again)."""
        keys, w, u = self._stored()
        moved = joint.carry(SparseWeights(keys, w, self.tail, self.size), source)
        self.keys, self.w, self.u, self.size, self.emission_size = moved.keys, w, u, joint.size, joint.transition_offset
        self._no_full_rows()
        self._make_full_rows()


class _SortedMerge:
    """The merge of two increasing arrays of distinct keys, ``keys`` and ``more``, applied to arrays laid out as
    they are: one sorted insertion, whose places are found once for every array of the store (and, unlike
    ``np.insert``, with no sort and no copy of them)."""

    def __init__(self, keys: np.ndarray, more: np.ndarray):
        self.places = np.searchsorted(keys, more) + np.arange(len(more))  # of ``more`` in the merged arrays
        self.kept = np.ones(len(keys) + len(more), dtype=bool)  # the places of ``keys``
        self.kept[self.places] = False

    def __call__(self, values: np.ndarray, more_values: np.ndarray) -> np.ndarray:
        """``values`` (laid out as ``keys``) and ``more_values`` (as ``more``) merged."""
        out = np.empty(len(self.kept), dtype=values.dtype)
        out[self.places] = more_values
        out[self.kept] = values
        return out


def weighted_sum(terms: list[tuple[float, np.ndarray | SparseWeights]]) -> np.ndarray | SparseWeights:
    """``Σ c · v`` over the ``(c, v)`` of ``terms``, flat vectors all dense or all :class:`SparseWeights` (the sum
    then stores the pairs any of them stores)."""
    if not isinstance(terms[0][1], SparseWeights):
        return sum(c * v for c, v in terms)
    keys, slot = np.unique(np.concatenate([v.keys for _, v in terms]), return_inverse=True)
    values = np.bincount(slot, np.concatenate([c * v.values for c, v in terms]), minlength=len(keys))
    return SparseWeights(keys, values, sum(c * v.tail for c, v in terms), terms[0][1].size)


def _add(w: np.ndarray, u: np.ndarray | None, slots: np.ndarray, values: np.ndarray, weighted) -> None:
    np.add.at(w, slots, values)
    if u is not None:
        np.add.at(u, slots, weighted)


def _grown(rows: np.ndarray, capacity: int) -> np.ndarray:
    """``rows`` (a 2-d array) with room for ``capacity`` rows, the new ones 0."""
    out = np.zeros((capacity, rows.shape[1]))
    out[: len(rows)] = rows
    return out


def _sparse(w: np.ndarray | SparseWeights, emission_size: int) -> SparseWeights:
    return w if isinstance(w, SparseWeights) else SparseWeights.from_dense(np.asarray(w, dtype=np.float64), emission_size)


def _dense(w: np.ndarray | SparseWeights) -> np.ndarray:
    return w.dense() if isinstance(w, SparseWeights) else np.array(w, dtype=np.float64)
