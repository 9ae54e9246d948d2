"""Random Fourier features (Rahimi & Recht 2007): a dense map whose dot products approximate the RBF kernel.

A document's sparse vector ``x`` over the ``2**bits`` hashed buckets becomes ``D`` dense features

    z(x)_j = sqrt(2/D) · cos(ω_j·x + b_j),    ω_j ~ N(0, 2γ I),   b_j ~ U[0, 2π),   j = 0..D−1,

so that ``E[z(x)·z(x')] = exp(−γ ‖x − x'‖²)``, with an error of order ``1/sqrt(D)``: a linear
learner on ``z(x)`` approximates a kernel machine with the RBF kernel at the cost of a linear one.

There are far too many buckets (``2**22`` or more) to draw ω as a dense ``D × 2**bits`` matrix.
Instead every entry is a pure function of ``(seed, bucket, j)``, computed only for the buckets a
batch has, so that training and test documents share ω without storing it.  Entry ``k`` of the
splitmix64 stream keyed by ``s`` is

    S(s, k) = M(s + (k + 1)·φ)        (``M`` the splitmix64 finaliser, ``φ`` its golden-ratio step)

The high and low 32 bits of ``S(S(S(seed, 0), bucket), k)`` are two uniforms ``u, v``, which
Box–Muller turns into two independent normals, ``ω_{2k}`` and ``ω_{2k+1}`` of the bucket:
``sqrt(2γ) · sqrt(−2 ln(1 − u)) · (cos 2πv, sin 2πv)``.  The high 32 bits of ``S(S(seed, 1), j)``
give ``b_j / 2π``.  Everything is computed in float64; the features are stored as float32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse

from .hashing import _GOLDEN, _finalise
from .matrix import FeatureMatrix

# ω values drawn at once (2**22 float64 = 32 MiB): buckets are processed in chunks of this many / D.
CHUNK_VALUES = 1 << 22
_LOW_32 = np.uint64(0xFFFFFFFF)
_FREQUENCY_STREAM, _PHASE_STREAM = np.uint64(0), np.uint64(1)  # the two streams of a seed


def _stream(keys: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """Entry ``counters`` of the splitmix64 streams keyed by ``keys`` (uint64 arrays, broadcast)."""
    with np.errstate(over="ignore"):
        return _finalise(keys + (counters + np.uint64(1)) * _GOLDEN)


def _uniforms(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two uniforms in [0, 1) from every 64-bit code: its high and its low 32 bits."""
    return (codes >> np.uint64(32)) * 2.0**-32, (codes & _LOW_32) * 2.0**-32


@dataclass(frozen=True)
class RandomFourierFeatures:
    """The random Fourier feature map ``z`` of ``dimensions`` features for ``exp(−γ ‖x − x'‖²)``,
    drawn from ``seed`` (see the module docstring)."""

    dimensions: int
    gamma: float
    seed: int = 0

    def __post_init__(self):
        if not (_is_integer(self.dimensions) and self.dimensions >= 1):
            raise ValueError(f"dimensions must be a positive integer, got {self.dimensions!r}")
        if not (isinstance(self.gamma, (int, float, np.number)) and not isinstance(self.gamma, bool)
                and 0 < self.gamma < math.inf):
            raise ValueError(f"gamma must be a positive finite number, got {self.gamma!r}")
        if not (_is_integer(self.seed) and 0 <= self.seed < 2**64):
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        # plain Python numbers, so that to_dict() writes TOML and JSON
        object.__setattr__(self, "dimensions", int(self.dimensions))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "gamma", float(self.gamma))

    def _key(self, stream: np.uint64) -> np.uint64:
        """``S(seed, stream)``: the key of one of the seed's two streams."""
        return _stream(np.uint64(self.seed), stream)

    @cached_property
    def phases(self) -> np.ndarray:
        """``b_j ~ U[0, 2π)``, ``j = 0..D−1`` (float64)."""
        u, _ = _uniforms(_stream(self._key(_PHASE_STREAM), np.arange(self.dimensions, dtype=np.uint64)))
        return 2 * math.pi * u

    def frequencies(self, buckets: np.ndarray) -> np.ndarray:
        """The ω columns of ``buckets``, one row each: a ``(len(buckets), D)`` float64 array of
        ``N(0, 2γ)`` entries, every row a function of ``(seed, bucket)`` only."""
        pairs = (self.dimensions + 1) // 2
        keys = _stream(self._key(_FREQUENCY_STREAM), np.asarray(buckets, dtype=np.uint64))
        u, v = _uniforms(_stream(keys[:, None], np.arange(pairs, dtype=np.uint64)))
        radius = np.sqrt(-4 * self.gamma * np.log1p(-u))  # sqrt(2γ) · sqrt(−2 ln(1 − u))
        angle = 2 * math.pi * v
        omega = np.empty((len(keys), 2 * pairs))
        np.multiply(radius, np.cos(angle), out=omega[:, 0::2])
        np.multiply(radius, np.sin(angle), out=omega[:, 1::2])
        return omega[:, : self.dimensions]

    def transform(self, matrix: FeatureMatrix) -> FeatureMatrix:
        """``z(x)`` of every row ``x`` of ``matrix``: a matrix of the same lengths whose rows hold all
        columns ``0..D−1``.  ``ω·x`` is summed over chunks of the batch's distinct buckets, so that
        besides the ``rows × D`` output only ``CHUNK_VALUES`` ω values are held at a time."""
        n, d = matrix.n_positions, self.dimensions
        buckets, rank = np.unique(matrix.indices, return_inverse=True)
        order = np.argsort(rank, kind="stable")  # entries by bucket, in row order within a bucket
        entry_rows, rank = matrix.entry_positions()[order], rank[order]
        values = matrix.values[order].astype(np.float64)
        projection = np.zeros((n, d))
        chunk = max(1, CHUNK_VALUES // d)
        for first in range(0, len(buckets), chunk):
            last = min(first + chunk, len(buckets))
            lo, hi = np.searchsorted(rank, [first, last])
            rows, local_rows = np.unique(entry_rows[lo:hi], return_inverse=True)
            x = scipy.sparse.csr_matrix((values[lo:hi], (local_rows, rank[lo:hi] - first)),
                                        shape=(len(rows), last - first))
            projection[rows] += x @ self.frequencies(buckets[first:last])
        projection += self.phases
        np.cos(projection, out=projection)
        projection *= math.sqrt(2 / d)
        indptr = np.arange(n + 1, dtype=np.int64) * d
        return FeatureMatrix(indptr, np.tile(np.arange(d, dtype=np.int32), n), projection.ravel(), matrix.lengths)

    def to_dict(self) -> dict:
        return {"dimensions": self.dimensions, "gamma": self.gamma, "seed": self.seed}


def _is_integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
