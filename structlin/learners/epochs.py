"""The order of an epoch: a seeded permutation of the instances, cut into mini-batches of similar length.

Every learner that visits instances one mini-batch at a time (the perceptron family, SGD max-ent,
Pegasos, the kernel perceptron, the analysis instruments) takes its epochs from here, so that the same
seed gives the same order everywhere.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..featurecache import SEGMENT_ENTRIES, SEGMENT_POSITIONS, ShardedCorpus, release_freed_memory
from ..matrix import FeatureMatrix


def epoch_order(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """The order in which one epoch visits the instances: a permutation drawn from ``rng``.

    With ``batch_size > 1`` the permutation is regrouped into batches of similar length, so that the
    decoder pads little (less training time at the same dev accuracy, docs/benchmarks.md): windows of 32
    batches are sorted by length and cut into batches, and the batches are shuffled.
    """
    order = rng.permutation(len(lengths))
    if batch_size == 1:
        return order
    window = 32 * batch_size
    chunks = [chunk[np.argsort(lengths[chunk], kind="stable")] for chunk in np.split(order, range(window, len(order), window))]
    batches = [b for chunk in chunks for b in np.split(chunk, range(batch_size, len(chunk), batch_size))]
    return np.concatenate([batches[k] for k in rng.permutation(len(batches))])


#: The positions and feature entries of an in-memory corpus's segment: the batches of an epoch are taken out of it a
#: segment at a time (one gather for dozens of batches, each then a view), a copy of a few megabytes at most.
IN_MEMORY_SEGMENT_POSITIONS = 1 << 13
IN_MEMORY_SEGMENT_ENTRIES = 1 << 19


def minibatches(X: FeatureMatrix | ShardedCorpus, y: np.ndarray | None, batch_size: int,
                rng: np.random.Generator | None) -> Iterator[tuple[FeatureMatrix, np.ndarray]]:
    """One epoch's mini-batches of ``X`` with their gold label ids, in :func:`epoch_order` (seeded by
    ``rng``), or in corpus order when ``rng`` is None (no shuffling).  The batches are taken out of ``X`` a segment
    of whole batches at a time, never as a permuted copy of the whole corpus, so that an epoch needs no more memory
    than a segment: in memory, about :data:`IN_MEMORY_SEGMENT_POSITIONS` positions or
    :data:`IN_MEMORY_SEGMENT_ENTRIES` feature entries.

    A :class:`~structlin.featurecache.ShardedCorpus` (which holds its gold ids: ``y`` is None) gives the same
    batches in the same order, read from its shards a segment at a time (about
    :data:`~structlin.featurecache.SEGMENT_POSITIONS` positions, or :data:`~structlin.featurecache.SEGMENT_ENTRIES`
    feature entries if fewer): memory holds a segment, never the corpus."""
    sharded = isinstance(X, ShardedCorpus)
    if X.n_instances == 0:
        return
    if rng is None and not sharded:
        yield from _in_order(X, y, batch_size)
        return
    order = np.arange(X.n_instances) if rng is None else epoch_order(X.lengths, batch_size, rng)
    limits = (SEGMENT_POSITIONS, SEGMENT_ENTRIES) if sharded else (IN_MEMORY_SEGMENT_POSITIONS,
                                                                    IN_MEMORY_SEGMENT_ENTRIES)
    entries = X.entries if sharded else X.instance_entries()
    for segment in np.split(order, _segment_cuts(order, X.lengths, entries, batch_size, *limits)):
        if sharded:
            yield from _in_order(*X.take(segment), batch_size, last_copied=True)
        else:
            yield from _in_order(X.take(segment), y[X.positions(segment)], batch_size)
    if sharded:
        release_freed_memory()  # once an epoch: the segments' freed pages, not faulted in again for every segment


def _segment_cuts(order: np.ndarray, lengths: np.ndarray, entries: np.ndarray, batch_size: int, positions: int,
                  most_entries: int) -> np.ndarray:
    """Where ``order`` is cut into segments: at the end of a batch where the running count of positions passes a
    multiple of ``positions``, or that of feature entries one of ``most_entries``."""
    ends = np.arange(batch_size, len(order) + batch_size, batch_size).clip(max=len(order))  # batch ends
    filled_positions = np.cumsum(lengths[order])[ends - 1] // positions
    filled_entries = np.cumsum(entries[order])[ends - 1] // most_entries
    return ends[np.flatnonzero(np.diff(filled_positions) | np.diff(filled_entries))]


def _in_order(X: FeatureMatrix, y: np.ndarray, batch_size: int, last_copied: bool = False):
    """The mini-batches of ``X`` in corpus order, each a view of ``X`` and ``y``.  ``last_copied``: the last one a
    copy, so that a segment of a :class:`~structlin.featurecache.ShardedCorpus` is freed before the next one is
    read, though the learner still holds the batch it was given last (EWT + Brown + the treebank: 39 MiB less)."""
    for start in range(0, X.n_instances, batch_size):
        stop = min(start + batch_size, X.n_instances)
        if last_copied and stop == X.n_instances:
            chosen = np.arange(start, stop)
            yield X.take(chosen), y[X.positions(chosen)]
        else:
            yield X.slice(start, stop), y[X.offsets[start] : X.offsets[stop]]
