"""Stable, seeded, signed hashing of features into ``2**bits`` buckets.

A feature is a pair ``(name, value)`` — e.g. ``("suffix(lengths=[1, 2, 3])@-1", "ing")``, written
``name=value`` for people.  Both strings are hashed with 64-bit BLAKE2b keyed by the seed, ``H``, and
combined with the splitmix64 finaliser ``M``:

    z = M(H(name) ⊕ (H(value) + 0x9E3779B97F4A7C15))        bucket = z mod 2**bits,   sign = (−1)^(z >> 63)

The sign makes collisions cancel in expectation (Weinberger et al. 2009).  Splitting name and value
lets a template's values be hashed once per word type and combined with every offset's name in a
vectorised step.  Python's built-in string hash is salted per process and never used.  ``name``,
``bits`` and ``seed`` are stored with every model so that a loaded model hashes alike.

Word tokens of documents come by the million, so they are hashed from their code points ``c_0 … c_{n−1}``
all at once instead of one string at a time:

    S(c) = M((H("") · P^n + Σ_i c_i · P^(n−1−i)) ⊕ (n + 0x9E3779B97F4A7C15))       (mod 2**64, P odd)

a polynomial hash keyed by the seed through ``H("")``, with the length mixed in by the finaliser.
"""

from __future__ import annotations

import hashlib

import numpy as np

HASH_NAME = "blake2b-splitmix64"
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_BASE = np.uint64(0xD6E8FEB86659FD93)  # P: a large odd multiplier (an invertible step mod 2**64)


_BLOCK = 64  # the code points of a sequence hashed in one step of FeatureHasher.sequences
_BLOCK_POWERS = np.array([pow(int(_BASE), m, 2**64) for m in range(_BLOCK + 1)], dtype=np.uint64)  # P^m
_Q = _BLOCK_POWERS[_BLOCK]  # P^_BLOCK


def _block_sums(points: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``Σ_j c_j·P^(m−1−j)`` over each block ``points[s : s + m]`` (``m`` ≤ :data:`_BLOCK`): Horner's steps from 0.

    The blocks are sorted by size, longest first, so that step ``j`` touches a prefix of them: O(total size +
    longest size)."""
    longest = int(sizes.max()) if len(sizes) else 0
    order = np.argsort((longest - sizes).astype(np.uint16), kind="stable")  # a radix sort of small keys
    first, size = starts[order], sizes[order]
    longer_than = len(size) - np.cumsum(np.bincount(size))
    z = np.zeros(len(size), dtype=np.uint64)
    for j, k in enumerate(longer_than):
        z[:k] *= _BASE
        z[:k] += points[first[:k] + j]
    out = np.empty_like(z)
    out[order] = z
    return out


def _finalise(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a bijective 64-bit mix (arithmetic wraps modulo 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


#: The largest ``bits`` to train with: training makes tables of one entry per bucket (the idf, the buckets' rows),
#: 8 bytes each, which at 2**31 buckets took 16 GB and the process (a model file of up to 31 bits still loads).
TRAINING_BITS_MAX = 28


def check_training_bits(bits: int) -> int:
    """``bits``, if a run may train with it (:data:`TRAINING_BITS_MAX`); else ``ValueError``."""
    if not 1 <= bits <= TRAINING_BITS_MAX:
        raise ValueError(f"bits must be in 1..{TRAINING_BITS_MAX} to train (tables of 2**bits entries; 2**28 take "
                         f"2 GB), got {bits}")
    return bits


class FeatureHasher:
    """Hashes ``(name, value)`` features to ``(bucket, sign)``; memoises every string it hashes."""

    name = HASH_NAME

    def __init__(self, bits: int = 22, seed: int = 0):
        if not 1 <= bits <= 31:
            raise ValueError(f"bits must be in 1..31 (buckets are int32), got {bits}")
        if not 0 <= seed < 2**64:
            raise ValueError(f"hash seed must be in [0, 2**64), got {seed}")
        self.bits = bits
        self.seed = seed
        self._key = seed.to_bytes(8, "little")
        self._mask = np.uint64((1 << bits) - 1)
        self._memo: dict[str, int] = {}

    def forget(self) -> None:
        """Empty the memo of :meth:`string` and :meth:`strings`, which fills again as strings are hashed: after a
        corpus is extracted it holds every string the corpus gave (its words, affixes, n-grams)."""
        self._memo = {}

    def __getstate__(self) -> dict:
        """Pickled without the memo, a cache that fills again as strings are hashed."""
        return {**vars(self), "_memo": {}}

    def string(self, text: str) -> int:
        """``H(text)``: the keyed 64-bit BLAKE2b digest of one string, memoised."""
        code = self._memo.get(text)
        if code is None:
            code = self._memo[text] = self._digest(text)
        return code

    def _digest(self, text: str) -> int:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, key=self._key).digest()
        return int.from_bytes(digest, "little")

    def strings(self, texts) -> np.ndarray:
        """``H(text)`` of many strings, as a uint64 array."""
        memo = self._memo
        for text in {t for t in texts if t not in memo}:
            memo[text] = self._digest(text)
        return np.fromiter(map(memo.__getitem__, texts), dtype=np.uint64, count=len(texts))

    def sequences(self, points: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``S`` of every code point sequence ``points[s : s + n]`` for ``s, n`` in ``starts, lengths``: the
        Horner recurrence ``z ← z·P + c_j`` from ``z = H("")``, then mixed with ``n``.

        The recurrence regrouped in blocks, so that every step works on whole arrays: a sequence of ``n`` points
        is a first block of ``r`` ≤ :data:`_BLOCK` points and ``B − 1`` full ones, and with ``Q = P^_BLOCK``,
        ``z = H("")·P^r·Q^(B−1) + Σ_b s_b·Q^(B−1−b)``, ``s_b`` each block's own Horner sum
        (:func:`_block_sums`).  Ordinary words are one block; a token of millions of characters costs no more
        Python steps than a word.
        """
        starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        empty = self.string("")
        if lengths.max(initial=0) <= _BLOCK:  # one block each (B = 1, r = n): the words of a text
            return self.mix(empty * _BLOCK_POWERS[lengths] + _block_sums(points, starts, lengths), lengths)
        blocks = -(-lengths // _BLOCK)  # B
        first = lengths - _BLOCK * np.maximum(blocks - 1, 0)  # r
        owner = np.repeat(np.arange(len(lengths)), blocks)
        opening = np.cumsum(blocks) - blocks  # each sequence's first block, among all blocks
        seen = np.arange(len(owner)) - opening[owner]  # b: the block's number in its sequence
        block_starts = starts[owner] + np.where(seen > 0, first[owner] + _BLOCK * (seen - 1), 0)
        sums = _block_sums(points, block_starts, np.where(seen > 0, _BLOCK, first[owner]))
        q_powers = np.full(max(int(blocks.max(initial=0)), 1), _Q, dtype=np.uint64)
        q_powers[0] = 1
        q_powers = np.cumprod(q_powers, dtype=np.uint64)  # Q^k, wrapping
        terms = sums * q_powers[blocks[owner] - 1 - seen]
        z = np.full(len(lengths), empty, dtype=np.uint64)
        filled = np.flatnonzero(blocks)
        if len(filled):
            z[filled] = (z[filled] * _BLOCK_POWERS[first[filled]] * q_powers[blocks[filled] - 1]
                         + np.add.reduceat(terms, opening[filled]))
        return self.mix(z, lengths)

    @staticmethod
    def mix(codes, value_codes) -> np.ndarray:
        """``M(a ⊕ (b + φ))`` elementwise: the 64-bit code of a feature (or of a longer conjunction,
        mixing in one more value code at a time)."""
        with np.errstate(over="ignore"):
            return _finalise(np.asarray(codes, dtype=np.uint64) ^ (np.asarray(value_codes, dtype=np.uint64) + _GOLDEN))

    def buckets(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Buckets (int32) and signs (±1, float32) of mixed 64-bit feature codes."""
        buckets = (codes & self._mask).astype(np.int32)
        signs = np.where(codes >> np.uint64(63), np.float32(-1), np.float32(1)).astype(np.float32)
        return buckets, signs

    def combine(self, name_codes, value_codes) -> tuple[np.ndarray, np.ndarray]:
        """Buckets and signs of features from ``H(name)`` and ``H(value)`` codes."""
        return self.buckets(self.mix(name_codes, value_codes))

    def __call__(self, name: str, value: str = "") -> tuple[int, float]:
        """``(bucket, sign)`` of the feature ``name=value``."""
        buckets, signs = self.combine([self.string(name)], [self.string(value)])
        return int(buckets[0]), float(signs[0])

    def config(self) -> dict:
        """The settings that a model stores to hash alike after loading."""
        return {"name": self.name, "bits": self.bits, "seed": self.seed}

    @classmethod
    def from_config(cls, config: dict) -> FeatureHasher:
        """The hasher of :meth:`config`'s settings; another hash, or bits or a seed that are no integers in
        range, raise ``ValueError``."""
        if config.get("name") != HASH_NAME:
            raise ValueError(f"unsupported feature hash {config.get('name')!r}; expected {HASH_NAME!r}")
        bits, seed = config.get("bits"), config.get("seed")
        if type(bits) is not int or type(seed) is not int:  # not a bool, a float or a string that int() takes
            raise ValueError(f"feature hash bits and seed must be integers, got {bits!r} and {seed!r}")
        return cls(bits=bits, seed=seed)
