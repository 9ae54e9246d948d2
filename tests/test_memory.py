"""The memory a run may still take (structlin.memory), and the learners that refuse, before training, arrays of every
feature and label that cannot fit."""

from __future__ import annotations

import re

import pytest

from structlin import Classifier, memory
from structlin.cli import main
from structlin.errors import OptionValueError
from structlin.learners import LEARNERS


def write(root, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


@pytest.fixture
def no_address_limit(monkeypatch):
    """The test process's own limit of address space left out (a fake root has no proc/self/status anyway)."""
    monkeypatch.setattr(memory, "resource", None)


def test_the_least_of_memavailable_and_every_control_group_above_the_process(tmp_path, no_address_limit):
    write(tmp_path, "proc/meminfo", "MemTotal:       24000000 kB\nMemAvailable:    8000000 kB\n")
    write(tmp_path, "proc/self/cgroup", "0::/outer/inner\n")
    write(tmp_path, "sys/fs/cgroup/outer/memory.max", "4000000000\n")  # the limit is set above the process's group
    write(tmp_path, "sys/fs/cgroup/outer/memory.current", "3000000000\n")
    write(tmp_path, "sys/fs/cgroup/outer/memory.stat", "anon 2400000000\ninactive_file 500000000\nactive_file 9\n")
    write(tmp_path, "sys/fs/cgroup/outer/inner/memory.max", "max\n")
    write(tmp_path, "sys/fs/cgroup/outer/inner/memory.current", "2900000000\n")
    # 4e9 − (3e9 − 0.5e9) below MemAvailable's 8,000,000 × 1024
    assert memory.available(tmp_path) == 1_500_000_000
    write(tmp_path, "sys/fs/cgroup/outer/memory.max", "max\n")
    assert memory.available(tmp_path) == 8_000_000 * 1024


def test_version_1_groups_and_their_unlimited_value(tmp_path, no_address_limit):
    write(tmp_path, "proc/meminfo", "MemAvailable:    1000 kB\n")
    write(tmp_path, "proc/self/cgroup", "5:devices:/x\n4:memory:/grp\n0::/\n")
    write(tmp_path, "sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "9223372036854771712\n")  # no limit
    write(tmp_path, "sys/fs/cgroup/memory/grp/memory.usage_in_bytes", "100\n")
    assert memory.available(tmp_path) == 1_024_000
    write(tmp_path, "sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "600000\n")
    write(tmp_path, "sys/fs/cgroup/memory/grp/memory.usage_in_bytes", "300000\n")
    write(tmp_path, "sys/fs/cgroup/memory/grp/memory.stat", "cache 5\ntotal_inactive_file 100000\n")
    assert memory.available(tmp_path) == 600_000 - (300_000 - 100_000)


def test_a_limit_of_address_space_counts_what_the_process_has_mapped(tmp_path, monkeypatch):
    write(tmp_path, "proc/self/status", "Name:\tpython\nVmSize:\t 2000000 kB\nVmRSS:\t 50 kB\n")
    monkeypatch.setattr(memory.resource, "getrlimit", lambda kind: (10_000_000_000, memory.resource.RLIM_INFINITY))
    assert memory.available(tmp_path) == 10_000_000_000 - 2_048_000_000


def test_nothing_known_refuses_nothing(tmp_path, no_address_limit):
    write(tmp_path, "proc/meminfo", "MemAvailable: garbled\n")
    write(tmp_path, "proc/self/cgroup", "0::/g\n")
    write(tmp_path, "sys/fs/cgroup/g/memory.max", "12 junk\n")
    assert memory.available(tmp_path) is None and memory.fits(10**18, tmp_path)
    memory.require(10**18, "anything", "no way out needed", tmp_path)


def test_a_refusal_names_both_sizes_and_the_ways_out(tmp_path, no_address_limit):
    write(tmp_path, "proc/meminfo", "MemAvailable:    3320000 kB\n")
    with pytest.raises(OptionValueError, match=re.escape("the model needs 11.1 GB, more than the 3.4 GB of memory "
                                                         "available: use fewer")):
        memory.require(11_136_059_472, "the model", "use fewer", tmp_path)
    assert memory.fits(3_000_000_000, tmp_path) and not memory.fits(3_500_000_000, tmp_path)
    assert [memory.readable_size(n) for n in (0, 999, 1500, 3_400_000, 2e12)] == [
        "0 bytes", "999 bytes", "1.5 kB", "3.4 MB", "2.0 TB"]


# --- the learners -------------------------------------------------------------------------------------------------

TEXTS = ["good film", "a good plot", "bad film", "bad acting", "great", "awful", "fine film", "dull plot"] * 3
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg", "pos", "neg"] * 3


@pytest.fixture
def tiny_memory(monkeypatch):
    """A machine with 1 kB of memory left."""
    monkeypatch.setattr(memory, "available", lambda root=None: 1000)


@pytest.mark.parametrize("name", sorted(name for name, cls in LEARNERS.items() if cls.dense_vectors))
def test_learners_of_dense_vectors_are_refused_before_training_when_they_cannot_fit(name, tiny_memory):
    with pytest.raises(OptionValueError, match=rf"^{name}'s training \(\d vectors of \d+ feature rows × 2 labels\) "
                                               r"needs [\d.]+ kB, more than the 1.0 kB of memory available: fewer hash "
                                               r"buckets \(--bits\)"):
        Classifier(learner=name).fit(TEXTS, LABELS)


def test_the_refused_learners_are_those_of_dense_vectors_and_a_learner_of_pairs_trains(tiny_memory):
    assert {name for name, cls in LEARNERS.items() if cls.dense_vectors} == {
        "maxent", "svm"}
    assert Classifier(learner="averaged-perceptron").fit(TEXTS, LABELS).predict(["good film"]).tolist() == ["pos"]


def test_the_command_line_refusal_is_one_line(tmp_path, capsys, tiny_memory):
    train = tmp_path / "train.tsv"
    train.write_text("".join(f"{label}\t{text}\n" for label, text in zip(LABELS, TEXTS)))
    assert main(["train", "classifier", "--train", str(train), "--learner", "maxent", "--output",
                 str(tmp_path / "m")]) == 1
    read, error = capsys.readouterr().err.strip().splitlines()
    assert read.startswith("read 24 documents (2 labels)")
    assert error.startswith("structlin: error: maxent's training (3 vectors of ")
    assert not (tmp_path / "m").exists()
