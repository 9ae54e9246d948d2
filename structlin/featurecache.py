"""A training corpus's features on disk, for corpora larger than memory (``stream=True``, ``--stream``).

* :class:`FeatureCache` is a folder of shards: the feature matrix of consecutive instances of the corpus, cut
  once a shard holds :data:`SHARD_POSITIONS` positions or :data:`SHARD_ENTRIES` feature entries, one ``.npy``
  file per array (read memory-mapped, without pickle), the gold labels as ids into the cache's label list, plus
  ``columns.npy`` (every hashed bucket the corpus uses, sorted: the rows of the joint map) and ``manifest.json``
  (sizes, labels, the vocabulary).  :class:`CacheWriter` builds one in a temporary folder, renamed to its final
  name when complete, so that a cache is never read half-written and a failed run leaves nothing behind.
* The folder's name is a digest of what the features depend on: the settings (feature set, hashing) and the
  content of the corpus (its text and labels, hashed as they are read).  The same corpus with the same settings
  finds its cache again, in this run and in later ones; any change makes another.  Caches live under
  ``STRUCTLIN_CACHE`` (else ``$XDG_CACHE_HOME/structlin``, else ``~/.cache/structlin``), in ``features/``.  A
  cache with a file missing (or a manifest that does not read) is made again; one whose arrays turn out damaged
  while training stops the run with one line naming its folder.
* :class:`ShardedCorpus` is what a learner trains on: the cache's instances indexed by the run's joint map, read
  from the shards as they are needed.  A classifier's cache holds its documents' feature *counts*: what makes
  them values depends on the whole corpus (tf-idf's idf), so a ``transform`` (the document extractor's) turns
  each part into values as it is read.  An epoch visits the instances in the order it would visit a matrix of
  them (:mod:`structlin.learners.epochs`), reading :data:`SEGMENT_POSITIONS` positions (or
  :data:`SEGMENT_ENTRIES` feature entries) of that order at a time, so that memory holds a segment, never the
  corpus, and a streamed run trains the model an in-memory run trains.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import numpy as np

from .catalog import user_cache_dir
from .errors import StructlinError
from .joint import JointFeatureMap
from .matrix import FeatureMatrix, ordered_held_out, ranges
from .outputs import atomic_output

# The layout of a cache folder (2: the default token pattern of Unicode's words); a folder of another format is
# built again.
FORMAT = 2
# A shard ends at the first instance boundary past either bound, an epoch's segment at the first batch boundary.
# A token has tens of feature entries (non-zero values), a document hundreds: the positions bound a tagger's
# shards and segments, the entries a classifier's (a segment of 2**23 entries: 64 MB as read, plus the values made
# of them).
SHARD_POSITIONS = 1 << 15  # positions per shard
SHARD_ENTRIES = 1 << 21  # feature entries per shard
SEGMENT_POSITIONS = 1 << 17  # positions an epoch reads from the shards at a time
SEGMENT_ENTRIES = 1 << 23  # feature entries an epoch reads from the shards at a time
_ARRAYS = ("indptr", "indices", "values", "lengths", "labels")


def release_freed_memory() -> None:
    """Give the pages the C heap holds free back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    A segment's arrays are freed when the next one is read, but the allocator keeps the pages of freed blocks it
    cannot return from the middle of its heap, so that without this a streamed run's resident memory creeps up
    epoch after epoch (EWT + Brown + the treebank: by 70 MiB over 10 epochs), and so does extraction, shard after
    shard, as the extractor's tables of word types grow by reallocation (a trim after every shard written took
    the same corpus's streamed run with an empty cache from 502 to 489 MiB).  Dask's workers trim alike."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


#: glibc's ``mallopt`` parameter of the size from which a block is mapped on its own, and its dynamic maximum.
_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX = -3, 32 << 20


@contextmanager
def large_blocks_mapped(size: int = 1 << 20) -> Iterator[None]:
    """Within the block, the C heap maps every block of ``size`` bytes or more on its own (glibc's
    ``M_MMAP_THRESHOLD``), so that freeing one gives its pages back to the system at once; afterwards the threshold
    stays at 32 MiB, the most glibc's own adjustment reaches on 64-bit systems (nothing elsewhere than glibc).

    Extracting a corpus grows the extractor's tables of word types by reallocation, chunk after chunk; in the heap
    the blocks so freed left holes between the ones kept, which the training that follows faulted in again for
    its segments (EWT + Brown + the treebank, streamed with an empty cache: 467 → 448 MiB peak, the same time)."""
    if _LIBC is None:
        yield
        return
    _LIBC.mallopt(_M_MMAP_THRESHOLD, size)
    try:
        yield
    finally:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)


def _libc_with_malloc_trim():
    """The C library, when it is one with ``malloc_trim`` and ``mallopt`` (glibc), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


_LIBC = _libc_with_malloc_trim()


def cache_root() -> Path:
    """The folder that holds feature caches: ``features/`` of structlin's per-user cache
    (:func:`~structlin.catalog.user_cache_dir`)."""
    return user_cache_dir() / "features"


def settings_digest(**settings) -> str:
    """A digest of what features depend on besides the corpus (JSON-able values: a feature set's ``to_dict``,
    the hash size and seed, the model kind)."""
    text = json.dumps({"format": FORMAT, **settings}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class FeatureCache:
    """A complete cache folder (see the module docstring), opened for reading."""

    def __init__(self, folder):
        """Open the cache in ``folder``; ``ValueError`` when it is not a complete cache of this format (a file
        missing, a manifest that does not read)."""
        self.folder = Path(folder)
        try:
            manifest = json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT:
                raise ValueError(f"format {manifest.get('format')}, not {FORMAT}")
            self.labels: list[str] = list(manifest["labels"])
            self.shards: list[dict] = list(manifest["shards"])  # the instances and positions of each shard
            self.words: bool = bool(manifest["words"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise ValueError(f"{self.folder} is no complete feature cache: {err}") from None
        missing = [name for name in ("columns.npy", "vocabulary.json", *self._files()) if not (self.folder / name).is_file()]
        if missing:
            raise ValueError(f"{self.folder} is no complete feature cache: {missing[0]} is missing")
        self._layouts: dict[str, tuple] = {}  # file name -> (shape, order, dtype, offset of the data)
        self._checked: set[int] = set()  # the shards whose values and label ids were read through once

    def _files(self) -> list[str]:
        """The names of the shards' array files."""
        arrays = (*_ARRAYS, *(("words",) if self.words else ()))
        return [f"{k:05d}-{name}.npy" for k in range(len(self.shards)) for name in arrays]

    @classmethod
    def find(cls, name: str, root: Path | None = None) -> FeatureCache | None:
        """The complete cache called ``name``, or None when there is none (or one of another format, or damaged)."""
        try:
            return cls((root or cache_root()) / name)
        except ValueError:
            return None

    @property
    def n_shards(self) -> int:
        return len(self.shards)

    @property
    def n_instances(self) -> int:
        return sum(size["instances"] for size in self.shards)

    @property
    def n_positions(self) -> int:
        return sum(size["positions"] for size in self.shards)

    @cached_property
    def columns(self) -> np.ndarray:
        """Every hashed bucket the corpus's features use, sorted."""
        with self.reading("columns.npy"):
            return np.load(self.folder / "columns.npy", allow_pickle=False)

    @cached_property
    def vocabulary(self) -> list[str]:
        """The distinct words of a tagging corpus (a tagger's ``known_words_``), sorted; empty for documents."""
        with self.reading("vocabulary.json"):
            words = json.loads((self.folder / "vocabulary.json").read_text(encoding="utf-8"))
            if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
                raise ValueError("not a list of words")
            return words

    @contextmanager
    def reading(self, what: str) -> Iterator[None]:
        """An error while reading ``what`` of the cache (a file that does not read, arrays that do not fit each
        other or the manifest) stops the run with one line naming the folder: the cache is damaged."""
        try:
            yield
        except StructlinError:
            raise
        except (OSError, ValueError, IndexError) as err:
            raise StructlinError(f"the feature cache {self.folder} is damaged ({what}: {err}); delete that folder "
                                 "and train again") from None

    def column_counts(self) -> np.ndarray:
        """How many positions use each of :attr:`columns` (for documents: each bucket's document frequency), in
        one pass over the shards."""
        columns = self.columns
        counts = np.zeros(len(columns), dtype=np.int64)
        for k in range(self.n_shards):
            counts += np.bincount(np.searchsorted(columns, self.shard(k)[0].indices), minlength=len(columns))
        return counts

    def _mapped(self, name: str) -> np.memmap:
        """The array of the cache's file ``name``, memory-mapped read-only.  Its header is read once per cache:
        ``np.load`` parses it on every call with ``ast.literal_eval``, whose nested functions are reference
        cycles, and an epoch maps every shard once a segment while the cyclic collector is paused
        (``models._collector_paused``): EWT + Brown + the treebank kept about 15 MiB of them over 10 epochs."""
        layout = self._layouts.get(name)
        if layout is None:
            with open(self.folder / name, "rb") as file:
                version = np.lib.format.read_magic(file)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(file)
                layout = self._layouts[name] = (shape, "F" if fortran else "C", dtype, file.tell())
        shape, order, dtype, offset = layout
        return np.memmap(self.folder / name, dtype=dtype, mode="r", shape=shape, order=order, offset=offset)

    def shard(self, k: int) -> tuple[FeatureMatrix, np.ndarray]:
        """Shard ``k``: its feature matrix (hashed buckets, memory-mapped arrays) and the gold label ids of its
        positions, ids into :attr:`labels`."""
        with self.reading(f"shard {k}"):
            arrays = {name: self._mapped(f"{k:05d}-{name}.npy")
                      for name in (*_ARRAYS, *(("words",) if self.words else ()))}
            labels = arrays.pop("labels")
            X = FeatureMatrix(**arrays)
            if labels.shape != (X.n_positions,) or len(X.indices) != X.indptr[-1]:
                raise ValueError("its arrays do not fit each other")
            if k not in self._checked:  # once: an epoch maps a shard again for every segment it reads of it
                if len(labels) and not 0 <= labels.min() <= labels.max() < len(self.labels):
                    raise ValueError(f"a label id outside the manifest's {len(self.labels)} labels")
                if not np.isfinite(X.values).all():
                    raise ValueError("a feature value that is not a finite number")
                self._checked.add(k)
        return X, labels


class CacheWriter:
    """Builds a :class:`FeatureCache` from consecutive parts of a corpus: :meth:`add` each part's feature matrix
    and labels, then :meth:`finish` with the cache's name.  Use it as a context: leaving the block without
    :meth:`finish` (an error) removes the temporary folder."""

    def __init__(self, root: Path | None = None):
        self.root = root or cache_root()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=".partial-", dir=self.root))
        except OSError as err:
            raise StructlinError(f"cannot write the feature cache in {self.root}: {err.strerror or err} "
                                 "(set STRUCTLIN_CACHE to a writable folder)") from None
        self.label_ids: dict[str, int] = {}
        self.vocabulary: set[str] = set()
        self.columns = np.zeros(0, dtype=np.int64)
        self.shards: list[dict] = []
        self._pending: list[tuple[FeatureMatrix, np.ndarray]] = []
        self._pending_positions = self._pending_entries = 0
        self._words: bool | None = None

    def __enter__(self) -> CacheWriter:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def add(self, X: FeatureMatrix, labels: list, words=()) -> None:
        """The next instances: their feature matrix (hashed buckets), one label per position and, for a tagger,
        their words (for the vocabulary)."""
        if self._words is None:
            self._words = X.words is not None
        ids = np.fromiter((self.label_ids.setdefault(label, len(self.label_ids)) for label in labels),
                          dtype=np.int32, count=len(labels))
        self.vocabulary.update(words)
        self._pending.append((X, ids))
        self._pending_positions += X.n_positions
        self._pending_entries += len(X.indices)
        if self._pending_positions >= SHARD_POSITIONS or self._pending_entries >= SHARD_ENTRIES:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        X = FeatureMatrix.concatenate([X for X, _ in self._pending])
        labels = np.concatenate([ids for _, ids in self._pending])
        self._pending, self._pending_positions, self._pending_entries = [], 0, 0
        k = len(self.shards)
        arrays = {"indptr": X.indptr, "indices": X.indices, "values": X.values, "lengths": X.lengths,
                  "labels": labels, **({"words": X.words} if X.words is not None else {})}
        for name, array in arrays.items():
            with atomic_output(self.folder / f"{k:05d}-{name}.npy", "wb") as file:
                np.save(file, array, allow_pickle=False)
        self.columns = np.union1d(self.columns, X.indices)
        self.shards.append({"instances": X.n_instances, "positions": X.n_positions})
        del X, labels, arrays
        release_freed_memory()  # the shard's arrays, and what extracting it freed

    def finish(self, name: str) -> FeatureCache:
        """Write the last shard and the manifest, and move the cache to its name (where a cache of that name,
        written meanwhile by another run, is kept and this one dropped)."""
        self._flush()
        if not self.shards:
            raise StructlinError("the training data holds no instances")
        with atomic_output(self.folder / "columns.npy", "wb") as file:
            np.save(file, self.columns, allow_pickle=False)
        with atomic_output(self.folder / "vocabulary.json", "w") as file:
            json.dump(sorted(self.vocabulary), file, ensure_ascii=False)
        manifest = {"format": FORMAT, "labels": list(self.label_ids), "shards": self.shards,
                    "words": bool(self._words)}
        with atomic_output(self.folder / "manifest.json", "w") as file:
            json.dump(manifest, file, indent=1)
        target = self.root / name
        if target.exists() and FeatureCache.find(name, self.root) is None:  # a damaged one: replaced
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(self.folder, target)
        except OSError as err:  # a complete cache of the same name exists (written meanwhile): the same features
            if FeatureCache.find(name, self.root) is None:
                raise StructlinError(f"cannot write the feature cache {target}: {err.strerror or err}") from None
        else:
            self.folder = None
        return FeatureCache(target)


class ShardedCorpus:
    """The instances of a :class:`FeatureCache` as a learner trains on them, their buckets indexed by ``joint``
    (:meth:`JointFeatureMap.index`) and their labels as the map's label ids.  ``selection`` keeps, for each
    shard, the sorted indices of the instances this corpus holds (None: all of them; a held-out split is two
    corpora over one cache).  Instance ``i`` is the ``i``-th held, shard after shard.

    It answers what learners ask of a :class:`FeatureMatrix` as a whole (``n_instances``, ``n_positions``,
    ``lengths``, :meth:`mean_squared_norm`).  Its instances are read shard by shard (:meth:`parts`), or any of
    them in any order (:meth:`take`, memory-mapping the shards for the call only, so that what stays resident is
    what was taken): an epoch takes its instances in the order a matrix of them would be visited, a segment of
    about :data:`SEGMENT_POSITIONS` positions or :data:`SEGMENT_ENTRIES` entries at a time
    (``learners.epochs.minibatches``), so that a streamed run visits what an in-memory one visits, in the same
    order.

    ``transform``, when given, makes every part read into what the learner trains on (``transform.transform(X)``,
    before the buckets are indexed), and says which buckets those parts use (``transform.transformed_columns``):
    a :class:`~structlin.doctemplates.DocumentFeatureExtractor` turning counts into tf-idf values.
    ``in_order=False`` says the instances' order tells nothing (:class:`~structlin.models.TextOrder`): a share
    held out is then drawn at random.
    """

    def __init__(self, cache: FeatureCache, joint: JointFeatureMap, selection: list | None = None, transform=None,
                 in_order: bool = True):
        self.cache, self.joint, self.transform, self.in_order = cache, joint, transform, in_order
        self.selection = selection if selection is not None else [None] * cache.n_shards
        self._label_ids = joint.encode_labels(cache.labels, unknown=-1)
        self._rho: float | None = None

    @cached_property
    def lengths(self) -> np.ndarray:
        """The length of every instance (a number per instance, not per position)."""
        return np.concatenate([self._chosen(k, np.asarray(self.cache.shard(k)[0].lengths))
                               for k in range(self.cache.n_shards)])

    @cached_property
    def entries(self) -> np.ndarray:
        """The number of feature entries (stored values) of every instance, as the cache holds it."""
        return np.concatenate([self._chosen(k, self.cache.shard(k)[0].instance_entries())
                               for k in range(self.cache.n_shards)])

    @cached_property
    def _starts(self) -> np.ndarray:
        """The first instance of every shard, and the number of instances at the end."""
        sizes = [self.cache.shards[k]["instances"] if chosen is None else len(chosen)
                 for k, chosen in enumerate(self.selection)]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def n_instances(self) -> int:
        return int(self._starts[-1])

    @property
    def n_positions(self) -> int:
        return int(self.lengths.sum())

    @property
    def shard_sizes(self) -> np.ndarray:
        """The number of instances this corpus holds of every shard."""
        return np.diff(self._starts)

    @property
    def shard_positions(self) -> np.ndarray:
        """The number of positions this corpus holds of every shard."""
        shard = np.repeat(np.arange(self.cache.n_shards), self.shard_sizes)
        return np.bincount(shard, weights=self.lengths, minlength=self.cache.n_shards).astype(np.int64)

    def subset(self, shards) -> ShardedCorpus:
        """The instances this corpus holds of ``shards`` only (the others' none)."""
        chosen = set(int(k) for k in shards)
        nothing = np.zeros(0, dtype=np.int64)
        return ShardedCorpus(self.cache, self.joint, [self.selection[k] if k in chosen else nothing
                                                      for k in range(self.cache.n_shards)], self.transform)

    def _chosen(self, k: int, per_instance: np.ndarray) -> np.ndarray:
        """``per_instance`` (one value per instance of shard ``k``) at the instances this corpus holds."""
        chosen = self.selection[k]
        return per_instance if chosen is None else per_instance[chosen]

    def _read(self, k: int, local: np.ndarray | None) -> tuple[FeatureMatrix, np.ndarray]:
        """Instances ``local`` (indices among those this corpus holds of shard ``k``; None: all) of shard ``k``,
        indexed, in memory, with their gold label ids."""
        X, labels = self.cache.shard(k)
        chosen = self.selection[k]
        with self.cache.reading(f"shard {k}"):
            if chosen is not None:
                local = chosen if local is None else chosen[local]
            if local is not None:
                labels = labels[X.positions(local)]
                X = X.take(local)
            if self.transform is not None:
                X = self.transform.transform(X)
            return self.joint.index(X), self._label_ids[labels]

    def parts(self) -> Iterator[tuple[FeatureMatrix, np.ndarray]]:
        """Every shard's instances of this corpus, in order (indexed, with their gold ids)."""
        for k in range(self.cache.n_shards):
            if self._starts[k + 1] > self._starts[k]:
                yield self._read(k, None)

    def take(self, instances) -> tuple[FeatureMatrix, np.ndarray]:
        """The instances ``instances`` (in that order) as one indexed matrix, with their gold label ids: read
        from each shard that holds some, each part written at its instances' places in the request as it is read
        (:meth:`FeatureMatrix.placed`: memory holds the result and one part).  Transformed parts are all read
        first, their sizes being known only then."""
        instances = np.asarray(instances, dtype=np.int64)
        shard = np.searchsorted(self._starts, instances, side="right") - 1
        held = np.unique(shard)
        places = [np.flatnonzero(shard == k) for k in held]
        lengths = self.lengths[instances]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        y = np.empty(starts[-1], dtype=self._label_ids.dtype)

        def pieces():
            for k, at in zip(held, places):
                X, labels = self._read(int(k), instances[at] - self._starts[k])
                y[ranges(starts[at], starts[at + 1])] = labels
                yield X, at

        with self.cache.reading("its shards"):  # a part that does not fit the manifest's sizes
            if self.transform is None:  # a part's sizes are the cache's
                return FeatureMatrix.placed(pieces(), lengths, self.entries[instances], self.cache.words), y
            parts = list(pieces())
            entries = np.zeros(len(instances), dtype=np.int64)
            for X, at in parts:
                entries[at] = X.instance_entries()
            return FeatureMatrix.placed(parts, lengths, entries, self.cache.words), y

    def _instance_labels(self) -> np.ndarray | None:
        """The label id of every instance when each has one position (a document's), else None."""
        if not (self.lengths == 1).all():
            return None
        return np.concatenate([self._chosen(k, self._label_ids[self.cache.shard(k)[1]])
                               for k in range(self.cache.n_shards)])

    def mean_squared_norm(self) -> float:
        """``ρ = Σ_p ‖x_p‖² / positions`` (:meth:`FeatureMatrix.mean_squared_norm`), in one pass over the shards
        (the first call's)."""
        if self._rho is None:
            total = 0.0
            for X, _ in self.parts():
                values = X.values.astype(np.float64)
                total += float(values @ values)
            self._rho = total / max(self.n_positions, 1)
        return self._rho

    def hold_out(self, fraction: float, seed: int) -> tuple[ShardedCorpus, ShardedCorpus]:
        """``(rest, held)``: a ``fraction`` of the instances held out, the very instances
        :func:`structlin.learners.training.hold_out_instances` holds out of a matrix of them
        (:func:`~structlin.matrix.ordered_held_out`)."""
        held = ordered_held_out(self.n_instances, fraction, self._instance_labels(), seed, self.in_order)
        rest_selection, held_selection = [], []
        for k in range(self.cache.n_shards):
            local = self._chosen(k, np.arange(self.cache.shards[k]["instances"]))
            mask = held[self._starts[k] : self._starts[k + 1]]
            rest_selection.append(local[~mask])
            held_selection.append(local[mask])
        return (ShardedCorpus(self.cache, self.joint, rest_selection, self.transform),
                ShardedCorpus(self.cache, self.joint, held_selection, self.transform))


def corpus_columns(cache: FeatureCache, transform=None) -> np.ndarray:
    """The buckets of the parts a :class:`ShardedCorpus` of ``cache`` with ``transform`` gives (the rows of its
    joint map): the cache's, or those ``transform`` makes of them."""
    return cache.columns if transform is None else transform.transformed_columns(cache.columns)
