"""Tests of structlin.hashing: stability across instances and processes, seeds, ranges, signs, config."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin.hashing import HASH_NAME, FeatureHasher, check_training_bits

FEATURES = [("bias", ""), ("word@0", "the"), ("word@-1", "<S>"), ("suffix(lengths=[1, 2, 3])@1", "3:ing"),
            ("lower@2", "Ünïcödé"), ("shape@0", "Xx-Xxxxx"), ("word@0", ""), ("", "x")]

MASK64 = (1 << 64) - 1


def reference_hash(name: str, value: str, bits: int, seed: int) -> tuple[int, float]:
    """An independent pure-Python implementation of the documented hash (module docstring):
    z = M(H(name) xor (H(value) + golden)), bucket = z mod 2**bits, sign = (-1)**(z >> 63)."""

    def H(text: str) -> int:
        key = seed.to_bytes(8, "little")
        return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=key).digest(), "little")

    def M(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    z = M(H(name) ^ ((H(value) + 0x9E3779B97F4A7C15) & MASK64))
    return z % (1 << bits), (-1.0 if z >> 63 else 1.0)


@pytest.mark.parametrize("bits, seed", [(22, 0), (8, 1), (31, 2**64 - 1), (1, 12345)])
def test_matches_independent_reference(bits, seed):
    hasher = FeatureHasher(bits, seed)
    for name, value in FEATURES:
        assert hasher(name, value) == reference_hash(name, value, bits, seed)


def test_same_feature_same_result_across_instances():
    first, second = FeatureHasher(20, 7), FeatureHasher(20, 7)
    # Hash in different orders so that the memo tables differ.
    a = [first(n, v) for n, v in FEATURES]
    b = [second(n, v) for n, v in reversed(FEATURES)][::-1]
    assert a == b
    assert a == [first(n, v) for n, v in FEATURES]  # memoised results are the same as fresh ones


def test_a_forgotten_memo_gives_the_same_codes():
    """After extraction a run empties the memo (``forget``); what is hashed again is hashed the same."""
    hasher = FeatureHasher(20, 7)
    a = [hasher(n, v) for n, v in FEATURES]
    codes = hasher.strings(["cat", "-ing", "cat"])
    hasher.forget()
    assert hasher._memo == {}
    assert [hasher(n, v) for n, v in FEATURES] == a and np.array_equal(hasher.strings(["cat", "-ing", "cat"]), codes)


def test_combine_equals_call():
    hasher = FeatureHasher(16, 3)
    names = [hasher.string(n) for n, _ in FEATURES]
    values = [hasher.string(v) for _, v in FEATURES]
    buckets, signs = hasher.combine(names, values)
    assert buckets.dtype == np.int32 and signs.dtype == np.float32
    assert list(zip(buckets.tolist(), signs.tolist())) == [hasher(n, v) for n, v in FEATURES]


def test_name_and_value_are_not_interchangeable():
    hasher = FeatureHasher(31, 0)
    assert hasher("a", "b") != hasher("b", "a")
    assert hasher("ab", "") != hasher("a", "b")


_CHILD = """
import json, sys
from structlin.hashing import FeatureHasher
features = json.loads(sys.argv[1])
hasher = FeatureHasher(22, 99)
print(json.dumps([list(hasher(n, v)) for n, v in features]))
"""


def test_same_result_across_processes_with_different_hash_seeds():
    expected = [list(FeatureHasher(22, 99)(n, v)) for n, v in FEATURES]
    # A hash seed other than this process's, so that built-in str hashes differ between the two.
    hash_seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(FEATURES)], env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout) == expected


def test_different_seeds_give_different_buckets():
    features = [(f"word@{o}", f"w{k}") for k in range(200) for o in (-1, 0, 1)]
    a, b = FeatureHasher(22, 0), FeatureHasher(22, 1)
    same = sum(a(n, v)[0] == b(n, v)[0] for n, v in features)
    # Independent hashes collide with probability 2**-22 per feature.
    assert same <= 2


@pytest.mark.parametrize("bits", [1, 3, 10, 31])
def test_buckets_within_range(bits):
    hasher = FeatureHasher(bits, 5)
    codes = np.array([hasher.string(f"v{k}") for k in range(5000)], dtype=np.uint64)
    buckets, signs = hasher.combine(np.full(len(codes), hasher.string("name"), dtype=np.uint64), codes)
    assert buckets.min() >= 0 and buckets.max() < 2**bits
    assert set(np.unique(signs).tolist()) <= {-1.0, 1.0}
    if bits <= 3:  # 5000 features fill every one of at most 8 buckets
        assert len(np.unique(buckets)) == 2**bits


def test_signs_roughly_balanced_and_buckets_spread():
    hasher = FeatureHasher(10, 0)
    pairs = [hasher(f"t@{k % 5}", f"value-{k}") for k in range(20000)]
    signs = np.array([s for _, s in pairs])
    positive = (signs > 0).mean()
    assert 0.47 < positive < 0.53  # 20,000 fair coins: standard deviation 0.0035
    counts = np.bincount([b for b, _ in pairs], minlength=1024)
    # About 19.5 per bucket; a uniform hash leaves no bucket empty or 3x over-full.
    assert counts.min() > 0 and counts.max() < 60


def test_config_round_trip():
    hasher = FeatureHasher(17, 2**40 + 3)
    config = hasher.config()
    assert config == {"name": HASH_NAME, "bits": 17, "seed": 2**40 + 3}
    again = FeatureHasher.from_config(json.loads(json.dumps(config)))
    assert (again.bits, again.seed) == (17, 2**40 + 3)
    assert [again(n, v) for n, v in FEATURES] == [hasher(n, v) for n, v in FEATURES]


def test_config_with_other_hash_name_rejected():
    with pytest.raises(ValueError, match="unsupported feature hash"):
        FeatureHasher.from_config({"name": "murmur3", "bits": 10, "seed": 0})
    with pytest.raises(ValueError, match="unsupported feature hash"):
        FeatureHasher.from_config({"bits": 10, "seed": 0})


@pytest.mark.parametrize("bits", [0, -1, 32, 64])
def test_invalid_bits(bits):
    with pytest.raises(ValueError, match="bits must be in 1..31"):
        FeatureHasher(bits, 0)


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_invalid_seed(seed):
    with pytest.raises(ValueError, match="hash seed"):
        FeatureHasher(10, seed)


# (bucket, sign) of every feature of FEATURES at the extreme settings, recorded once (and equal to
# reference_hash's).  Saved models hash with the stored bits and seed, so these values must never change.
EXTREME = {
    (1, 0): [(0, 1.0), (1, 1.0), (1, 1.0), (0, 1.0), (0, 1.0), (0, -1.0), (1, 1.0), (0, -1.0)],
    (31, 0): [(551531250, 1.0), (1930480227, 1.0), (1626963971, 1.0), (379111542, 1.0), (135627284, 1.0),
              (679991864, -1.0), (77275057, 1.0), (1778014572, -1.0)],
    (31, 2**64 - 1): [(109754882, 1.0), (838832582, 1.0), (707657616, -1.0), (883867202, 1.0), (1563941610, -1.0),
                      (1284131707, -1.0), (272183639, -1.0), (1123057376, 1.0)],
}


@pytest.mark.parametrize("bits, seed", list(EXTREME))
def test_extreme_valid_settings(bits, seed):
    hasher = FeatureHasher(bits, seed)
    assert (hasher.bits, hasher.seed) == (bits, seed)
    assert hasher.config() == {"name": HASH_NAME, "bits": bits, "seed": seed}
    hashed = [hasher(n, v) for n, v in FEATURES]
    assert hashed == EXTREME[bits, seed]
    assert hashed == [reference_hash(n, v, bits, seed) for n, v in FEATURES]
    assert all(type(b) is int and type(s) is float for b, s in hashed)


@pytest.mark.parametrize("seed", [0, 2**64 - 1])
def test_buckets_of_fewer_bits_are_the_low_bits_of_the_same_code(seed):
    # bucket = z mod 2**bits and sign = the top bit of the same z, whatever the bits.
    features = [(f"t@{k % 3}", f"w{k}") for k in range(2000)]
    wide = [FeatureHasher(31, seed)(n, v) for n, v in features]
    for bits in (1, 2, 7, 22, 30):
        hasher = FeatureHasher(bits, seed)
        assert [hasher(n, v) for n, v in features] == [(b % 2**bits, s) for b, s in wide], bits
    buckets = np.array([b for b, _ in wide])
    # All 31 bits are used (2000 uniform buckets all below 2**30 has probability 2**-2000) and none is negative.
    assert buckets.min() >= 0 and 2**30 <= buckets.max() < 2**31
    assert {b % 2 for b in buckets.tolist()} == {0, 1} and {s for _, s in wide} == {-1.0, 1.0}


def test_extreme_seeds_hash_independently():
    first, last = FeatureHasher(31, 0), FeatureHasher(31, 2**64 - 1)
    assert all(first(n, v)[0] != last(n, v)[0] for n, v in FEATURES)
    assert first.string("x") != last.string("x")


def horner_reference(hasher: FeatureHasher, points: list[int], start: int, length: int) -> int:
    """``S`` of ``points[start : start + length]`` as documented (``FeatureHasher.sequences``), one step per point:
    ``z ← z·P + c`` from ``H("")``, mixed with the length."""
    z = hasher.string("")
    for c in points[start : start + length]:
        z = (z * 0xD6E8FEB86659FD93 + c) & MASK64
    return int(hasher.mix(np.array([z], dtype=np.uint64), np.array([length]))[0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 0x10FFFF), max_size=400), st.data())
def test_sequences_equal_one_horner_step_per_code_point(points, data):
    # blocks of 64 points regrouped: sequences shorter than a block, of several blocks, empty, overlapping
    hasher = FeatureHasher(20, 3)
    pairs = data.draw(st.lists(st.integers(0, len(points)).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(0, len(points) - s))), max_size=12))
    starts, lengths = (np.array([p[k] for p in pairs], dtype=np.int64) for k in (0, 1))
    codes = hasher.sequences(np.array(points, dtype=np.uint64), starts, lengths)
    assert codes.tolist() == [horner_reference(hasher, points, s, n) for s, n in pairs]


def test_a_token_of_many_blocks_hashes_as_the_recurrence_says():
    points = np.random.default_rng(0).integers(0, 0x10FFFF, size=100_003)
    hasher = FeatureHasher(22)
    codes = hasher.sequences(points.astype(np.uint64), np.array([0, 1, 3]), np.array([100_003, 100_001, 64]))
    assert codes.tolist() == [horner_reference(hasher, points.tolist(), s, n) for s, n in
                              [(0, 100_003), (1, 100_001), (3, 64)]]


@pytest.mark.parametrize("bits", [29, 31])
def test_training_takes_at_most_28_bits(bits, tmp_path, capsys):
    """31 bits passed the check and the run was killed at 24 GB (tables of 2**31 buckets); a file of 31 bits
    still loads (FeatureHasher takes it)."""
    from structlin import Classifier
    from structlin.cli import main
    from structlin.errors import OptionValueError

    assert check_training_bits(28) == 28 and FeatureHasher(bits, 0).bits == bits
    with pytest.raises(OptionValueError, match=f"bits must be in 1..28 to train .*, got {bits}"):
        Classifier(bits=bits).fit(["good fun", "bad plot"], ["pos", "neg"])
    (tmp_path / "d.txt").write_text("__label__pos good\n__label__neg bad\n", "utf-8")
    with pytest.raises(SystemExit):
        main(["train", "classifier", "--train", str(tmp_path / "d.txt"), "--bits", str(bits), "--output",
              str(tmp_path / "m.model")])
    assert "bits must be in 1..28 to train" in capsys.readouterr().err
