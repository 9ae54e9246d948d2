"""Data-parallel training on a Dask cluster: the training instances cut into shards that the workers read from
files, and a function of one shard run on every shard, round after round.

A learner that declares ``capabilities.distributed`` and is given a ``client`` (a ``dask.distributed.Client``)
runs the rounds of its fit through a :class:`ShardedRun` (the perceptron family mixes the shards' epochs, max-ent
sums their gradients):

* **Shards.** :func:`shard_instances` cuts the instances into one shard per worker of the cluster: a permutation
  seeded by the learner's ``seed``, cut where the running count of positions passes ``k/n`` of the total, so that
  the shards hold about as many positions (the work of a round).
* **Files, not pickles.** Each shard is written as ``.npz`` arrays (:func:`write_shard`: the feature matrix's
  arrays and the gold label ids, read back with ``allow_pickle=False``) to a folder of the run under
  ``STRUCTLIN_CACHE`` (else the system's temporary folder), removed when the run ends, beside the joint map's
  columns (``columns.npy``: one per feature row, megabytes for a large corpus, which would otherwise travel
  through the scheduler in every shard's task).
* **From a feature cache.**  A corpus on disk (``--stream``: :class:`~structlin.featurecache.ShardedCorpus`) is
  not written again: its cache's shards are grouped, whole, into one group per worker of about as many positions
  (:func:`group_shards`), and each worker reads its group from the cache's files.
* **Loaded by the workers.** A worker reads its shard in a task with a key of the run's own that the client
  holds on to.  If the worker is lost, Dask runs that task again on another worker, from the file: that is how a
  run survives a lost worker (data scattered from the client would be lost with it).  The workers must therefore
  see the client's file system: a local cluster does, and so do workers on the client's machine; workers on
  other machines need ``STRUCTLIN_CACHE`` on a folder they all share, under the same path.
* **Rounds.** :meth:`ShardedRun.map` writes the current weights once to a file of the run's folder, runs one task
  per shard (retried :data:`RETRIES` times when it raises; a lost worker's tasks Dask reschedules by itself),
  each reading them and writing the weights of its result to a file of its own, and gathers the results in shard
  order, so that the same seed on the same number of workers gives the same model, whichever worker ran which
  shard.  Files, not Dask's messages: weights are tens of megabytes, which on one machine the file system moves
  at memory speed, and a task run again finds them where they were.

Dask is imported only here, and only when a cluster is used: structlin runs without it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .decoders import Decoder
from .errors import OptionValueError, StructlinError, UsageError
from .featurecache import FeatureCache, ShardedCorpus, corpus_columns
from .joint import JointFeatureMap, SparseWeights, read_weights, write_weights
from .matrix import FeatureMatrix
from .outputs import atomic_output

DASK_NEEDED = "--workers/--scheduler need Dask: pip install 'structlin[dask]'"
RETRIES = 3  # more runs of a task that raised (before its error ends the run)
CONNECT_TIMEOUT = 10  # seconds to reach a scheduler, and for a first worker to join it
# Dask starts its worker processes with MALLOC_TRIM_THRESHOLD_=65536, which gives freed memory back to the system
# at once and fixes glibc's threshold for mapping allocations anew: every evaluation's arrays then fault their pages
# in again (a CRF's evaluation of EWT took 0.53 s on such a worker, 0.39 s without it).  A local cluster lives for
# one training run, so its workers keep glibc's adaptive defaults.
LOCAL_WORKERS_ENVIRONMENT = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def dask_distributed():
    """The ``dask.distributed`` module, or :class:`UsageError` (one line) when Dask is not installed."""
    try:
        import dask.distributed
    except ImportError:
        raise UsageError(DASK_NEEDED) from None
    return dask.distributed


def check_client(value):
    """``value``, if it is a ``dask.distributed.Client`` (the learners' ``client`` option); else
    :class:`OptionValueError`."""
    try:
        from dask.distributed import Client
    except ImportError:
        Client = None
    if Client is None or not isinstance(value, Client):
        raise OptionValueError(f"client must be a dask.distributed.Client or None, got {value!r}")
    return value


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator:
    """A ``dask.distributed.Client``: of a local cluster of ``workers`` processes of one thread each (started here
    and closed at the end), or of the running cluster whose scheduler is at the address ``scheduler`` (started with
    ``dask scheduler`` and ``dask worker``); None when neither is given.  A scheduler that cannot be reached, or
    that no worker joins within :data:`CONNECT_TIMEOUT` seconds, is a :class:`StructlinError`."""
    if workers is None and scheduler is None:
        yield None
        return
    distributed = dask_distributed()
    if workers is not None:
        import dask

        # the scheduler's HTTP server (dashboard, health checks) on a free port: Dask's fixed 8787 may be another
        # cluster's, and Dask then says so on stderr
        with dask.config.set(LOCAL_WORKERS_ENVIRONMENT), \
                distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                         dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            yield client
        return
    try:  # anything that stops the connection (a refused port, an address that is no scheduler's) is the address's
        identity = asyncio.run(asyncio.wait_for(_identity(scheduler), CONNECT_TIMEOUT))
        if not isinstance(identity, dict) or identity.get("type") != "Scheduler":
            raise ValueError(f"what answers there is not a scheduler ({str(identity)[:60]})")
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as err:
        raise StructlinError(f"cannot connect to a Dask scheduler at {scheduler}: {_reason(err)}") from None
    with client:
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except TimeoutError:
            raise StructlinError(f"the Dask scheduler at {scheduler} has no worker (none joined in "
                                 f"{CONNECT_TIMEOUT} s): start some with dask worker {scheduler}") from None
        yield client


def _reason(error: Exception) -> str:
    """Why a connection to a scheduler failed, in words."""
    if isinstance(error, MemoryError):  # a message length read from another protocol's bytes
        return "what answers there is not a scheduler"
    return str(error) or f"no answer in {CONNECT_TIMEOUT} s"


async def _identity(address: str):
    """What the server at ``address`` says it is (a scheduler: ``{"type": "Scheduler", ...}``): asked before a
    ``Client`` is made, because a client of a server that is no scheduler (a dashboard's web server, on the port
    beside the scheduler's) waits for an answer that never comes."""
    from distributed.comm import connect
    from distributed.core import send_recv

    comm = await connect(address, timeout=CONNECT_TIMEOUT)
    try:
        return await send_recv(comm, op="identity")
    finally:
        comm.abort()


def shard_instances(X: FeatureMatrix, n_shards: int, seed: int) -> list[np.ndarray]:
    """The instances of ``X`` in ``n_shards`` shards (arrays of instance indices, each in corpus order, none
    empty): a permutation seeded by ``seed``, cut where its running count of positions first reaches ``k/n_shards``
    of the total, so that the shards hold about as many positions."""
    n = X.n_instances
    if not 1 <= n_shards <= n:
        raise ValueError(f"n_shards must be between 1 and the {n} instances, got {n_shards}")
    order = np.random.default_rng(seed).permutation(n)
    running = np.cumsum(X.lengths[order])
    lower = np.arange(1, n_shards)  # the first k shards hold at least k instances ...
    cuts = np.searchsorted(running, running[-1] * lower / n_shards) + 1
    cuts = np.clip(cuts, lower, n - n_shards + lower)  # ... and leave at least one to each later shard
    cuts = np.maximum.accumulate(cuts - lower) + lower  # strictly increasing: no shard is empty
    return [np.sort(part) for part in np.split(order, cuts)]


def group_shards(corpus: ShardedCorpus, n_groups: int) -> list[list[int]]:
    """The shards of a corpus on disk that hold some of its instances, in at most ``n_groups`` groups of about as
    many positions: each shard whole, the largest first, to the group with the fewest positions so far (ties to
    the first); a group's shards in order.  Fewer groups when there are fewer such shards."""
    positions = corpus.shard_positions
    held = [k for k in np.argsort(-positions, kind="stable") if corpus.shard_sizes[k] > 0]
    groups: list[list[int]] = [[] for _ in range(min(n_groups, len(held)))]
    loads = np.zeros(len(groups), dtype=np.int64)
    for k in held:
        lightest = int(np.argmin(loads))
        groups[lightest].append(int(k))
        loads[lightest] += positions[k]
    return [sorted(group) for group in groups]


def write_shard(path, X: FeatureMatrix, y: np.ndarray) -> None:
    """Write the instances ``X`` and their gold label ids ``y`` to ``path`` as ``.npz`` arrays (no pickle)."""
    arrays = {"indptr": X.indptr, "indices": X.indices, "values": X.values, "lengths": X.lengths,
              "labels": np.asarray(y, dtype=np.int64)}
    if X.words is not None:
        arrays["words"] = X.words
    with atomic_output(path, "wb") as file:
        np.savez(file, **arrays)


def read_shard(path) -> tuple[FeatureMatrix, np.ndarray]:
    """The instances and gold label ids :func:`write_shard` wrote to ``path``."""
    with np.load(path, allow_pickle=False) as arrays:
        words = arrays["words"] if "words" in arrays.files else None
        return (FeatureMatrix(arrays["indptr"], arrays["indices"], arrays["values"], arrays["lengths"], words),
                arrays["labels"])


@dataclass
class Shard:
    """One shard as its worker holds it: its number, the run's joint feature map and decoder, and its instances
    ``X`` with their gold label ids ``y``."""

    index: int
    joint: JointFeatureMap
    decoder: Decoder
    X: FeatureMatrix
    y: np.ndarray


def _is_weights(value) -> bool:
    return isinstance(value, (np.ndarray, SparseWeights))


@dataclass(frozen=True)
class _Stored:
    """Weights (an array or :class:`~structlin.joint.SparseWeights`) in a file of the run's folder, in the place of
    the value in a round's arguments or results (:meth:`ShardedRun.map`)."""

    path: str

    @classmethod
    def write(cls, path: Path, value) -> _Stored:
        write_weights(path, value)
        return cls(str(path))

    def read(self):
        """The weights, memory-mapped when dense: every reader of a round's weights only reads them."""
        return read_weights(self.path, mapped=True)


def _through_files(function: Callable, shard, prefix: str, *args):
    """On a worker: ``function(shard, *args)`` with the :class:`_Stored` arguments read, its result a tuple whose
    weights are written to files ``prefix-<index>`` and stand as :class:`_Stored`."""
    result = function(shard, *(a.read() if isinstance(a, _Stored) else a for a in args))
    return tuple(_Stored.write(Path(f"{prefix}-{i}"), v) if _is_weights(v) else v for i, v in enumerate(result))


def _load_cache_group(folder: str, selection: list, index: int, joint: JointFeatureMap, decoder: Decoder,
                      prepare: Callable | None, transform=None):
    """On a worker: the instances ``selection`` (per shard, as :class:`~structlin.featurecache.ShardedCorpus` keeps
    them) of the feature cache in ``folder``, made values by ``transform`` (the corpus's), in memory, or what
    ``prepare`` makes of them; ``joint`` comes without its columns, which follow from the cache's."""
    cache = FeatureCache(folder)
    joint = JointFeatureMap(joint.labels, corpus_columns(cache, transform), transitions=joint.transitions,
                            candidates=joint.candidates)
    corpus = ShardedCorpus(cache, joint, selection, transform)
    shard = Shard(index, joint, decoder, *corpus.take(np.arange(corpus.n_instances)))
    return shard if prepare is None else prepare(shard)


def _load(path: str, index: int, joint: JointFeatureMap, decoder: Decoder, prepare: Callable | None):
    """On a worker: the shard written to ``path``, or what ``prepare`` makes of it; ``joint`` comes without its
    columns, which are read from the file beside the shard (``columns.npy``)."""
    columns = np.load(Path(path).with_name("columns.npy"), allow_pickle=False)
    joint = JointFeatureMap(joint.labels, columns, transitions=joint.transitions, candidates=joint.candidates)
    shard = Shard(index, joint, decoder, *read_shard(path))
    return shard if prepare is None else prepare(shard)


class ShardedRun:
    """The shards of one training run of ``X`` (gold ids ``y``) on the cluster of ``client``: one per worker
    the cluster has when the run begins (fewer with fewer instances), cut by :func:`shard_instances` with
    ``seed`` and loaded by the workers (see the module docstring).  A worker keeps its :class:`Shard`, or what
    ``prepare(shard)`` makes of it (a learner's objective over the shard).  ``sizes`` holds the number of
    instances of each shard.  Leaving the ``with`` block (or :meth:`close`) releases the shards and removes
    their files.  ``X`` may be a corpus on disk (a :class:`~structlin.featurecache.ShardedCorpus`, ``y`` None):
    its cache's shards are then grouped by :func:`group_shards` (not by ``seed``), and each worker reads its group
    from the cache."""

    def __init__(self, client, joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *,
                 seed: int, prepare: Callable | None = None):
        workers = sorted(client.nthreads())
        if not workers:
            raise StructlinError(f"the Dask cluster of {client.scheduler.address} has no worker to train on")
        self.client, self.rounds, self.shards = client, 0, []
        base = Path(os.environ.get("STRUCTLIN_CACHE") or tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        self.directory = Path(tempfile.mkdtemp(prefix="structlin-shards-", dir=base))
        self.name = self.directory.name  # the prefix of the run's task keys
        if isinstance(X, ShardedCorpus):
            self._submit_cache_groups(X, joint, decoder, workers, prepare)
            return
        parts = shard_instances(X, min(len(workers), X.n_instances), seed)
        self.sizes = [len(part) for part in parts]
        try:
            # the map's columns (one per feature row: megabytes for a large corpus) go in a file beside the shards,
            # not through the scheduler in every load task; the map goes without them and its lookup cache
            with atomic_output(self.directory / "columns.npy", "wb") as file:
                np.save(file, joint.columns)
            joint = JointFeatureMap(joint.labels, joint.columns[:0], transitions=joint.transitions,
                                    candidates=joint.candidates)
            for index, (part, worker) in enumerate(zip(parts, workers)):
                path = self.directory / f"shard-{index}.npz"
                write_shard(path, X.take(part), y[X.positions(part)])
                # shard k goes to worker k first, to any other when that one is lost
                self.shards.append(client.submit(_load, str(path), index, joint, decoder, prepare,
                                                 key=f"{self.name}-shard-{index}", pure=True, workers=[worker],
                                                 allow_other_workers=True, retries=RETRIES))
        except BaseException:
            self.close()
            raise

    def _submit_cache_groups(self, corpus: ShardedCorpus, joint: JointFeatureMap, decoder: Decoder, workers: list,
                     prepare: Callable | None) -> None:
        """The shards of a corpus on disk: its cache's shards in groups of about as many positions
        (:func:`group_shards`), one per worker, each read by its worker from the cache (no shard file is written)."""
        joint = JointFeatureMap(joint.labels, joint.columns[:0], transitions=joint.transitions,
                                candidates=joint.candidates)
        groups = group_shards(corpus, len(workers))
        self.sizes = [int(corpus.shard_sizes[group].sum()) for group in groups]
        for index, (group, worker) in enumerate(zip(groups, workers)):
            selection = corpus.subset(group).selection
            self.shards.append(self.client.submit(_load_cache_group, str(corpus.cache.folder), selection, index, joint,
                                                  decoder, prepare, corpus.transform, key=f"{self.name}-shard-{index}",
                                                  pure=True, workers=[worker], allow_other_workers=True,
                                                  retries=RETRIES))

    def __enter__(self) -> ShardedRun:
        return self

    def __exit__(self, *exception) -> None:
        self.close()

    def map(self, function: Callable, *args) -> list:
        """``[function(shard, *args) for every shard]`` run on the workers (``shard``: what each keeps), in shard
        order.  Weights among ``args`` (an array or :class:`~structlin.joint.SparseWeights`) are written once to a
        file of the run's folder, which every worker reads, and weights in a result come back the same way
        (:class:`_Stored`): on one machine the file system moves them at memory speed, where sending them in
        Dask's messages costs more than a round's work.  The files stay until the round ends, so that a task run
        again (its worker lost) reads them again."""
        client, folder = self.client, self.directory
        self.rounds += 1
        prefix = f"round-{self.rounds}"
        sent = [_Stored.write(folder / f"{prefix}-argument-{k}", a) if _is_weights(a) else a
                for k, a in enumerate(args)]
        futures = [client.submit(_through_files, function, shard, str(folder / f"{prefix}-shard-{k}"), *sent,
                                 key=f"{self.name}-{function.__name__}-{self.rounds}-{k}", retries=RETRIES)
                   for k, shard in enumerate(self.shards)]
        try:
            return [tuple(v.read() if isinstance(v, _Stored) else v for v in result) for result in client.gather(futures)]
        finally:
            for future in futures:
                future.release()
            for path in folder.glob(f"{prefix}-*"):
                path.unlink(missing_ok=True)

    def close(self) -> None:
        """Release the shards on the workers and remove their files."""
        for shard in self.shards:
            shard.release()
        self.shards = []
        shutil.rmtree(self.directory, ignore_errors=True)
