"""Tests of structlin.clusters: building word clusters from text, and reading and writing wcluster paths files."""

from __future__ import annotations

import gzip
import itertools
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin.clusters import LOWERCASE_HEADER, WordClusters, build_clusters
from structlin.errors import CorpusFormatError, ModelFormatError, OptionValueError, OutputError

ANIMALS = ["cat", "dog", "cow", "pig", "hen"]
COLOURS = ["red", "blue", "green", "pink"]


def two_topics(seed: int = 0) -> list[list[str]]:
    """Sentences of animals only and sentences of colours only: the two groups never share a neighbour
    (but the sentence boundary)."""
    rng = random.Random(seed)
    return [[rng.choice(group) for _ in range(12)] for group in (ANIMALS, COLOURS) * 10]


def shared_bits(a: str, b: str) -> int:
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_paths(clusters: WordClusters, depth: int) -> None:
    for word, path in clusters.paths.items():
        assert path and set(path) <= {"0", "1"} and len(path) <= depth, (word, path)


# --- build_clusters -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_words_of_disjoint_contexts_part_at_the_first_bit(seed):
    clusters = build_clusters(two_topics(), seed=seed, depth=6)
    assert len({clusters.path(w)[0] for w in ANIMALS}) == 1
    assert {clusters.path(w)[0] for w in COLOURS} == {"1" if clusters.path("cat")[0] == "0" else "0"}
    check_paths(clusters, 6)


def test_exact_paths_of_tiny_corpora():
    # two words: the more frequent takes bit 0
    assert build_clusters([["a", "a", "b"]], min_count=1).paths == {"a": "0", "b": "1"}
    # words of identical contexts are halved in vocabulary order (by count, then word) until each is alone
    assert build_clusters([["z"], ["y"], ["x"], ["w"], ["w"]] * 2).paths == {"w": "00", "x": "01", "y": "10", "z": "11"}
    assert build_clusters([["z"], ["y"], ["x"]] * 2).paths == {"x": "00", "y": "01", "z": "1"}
    # ... or until depth bits, which several words may then share
    assert build_clusters([["z"], ["y"], ["x"], ["w"]] * 2, depth=1).paths == {"w": "0", "x": "0", "y": "1", "z": "1"}


def test_the_same_seed_gives_the_same_paths():
    sentences = two_topics(3)
    first = build_clusters(sentences, seed=7, depth=5)
    assert build_clusters(sentences, seed=7, depth=5).paths == first.paths
    other = build_clusters(sentences, seed=8, depth=5)
    check_paths(other, 5)
    assert set(other.paths) == set(first.paths)


def test_truncated_svd_is_seeded():
    """A matrix too big for the dense SVD goes through scipy's svds, seeded too."""
    rng = random.Random(0)
    words = [f"w{i}" for i in range(1500)]
    sentences = [rng.choices(words, [1 / (i + 1) for i in range(1500)], k=15) for _ in range(4000)]
    clusters = build_clusters(sentences, dimensions=10)
    assert len(clusters) * 2 * (1000 + 2) > 1 << 20  # the cells of the PPMI matrix
    assert build_clusters(sentences, dimensions=10) == clusters
    check_paths(clusters, 16)


def test_vocabulary_counts_and_lowercase():
    sentences = [["Monday", "was", "grey"], ["monday", "was", "cold"], ["MONDAY", "is", "cold"]]
    lowered = build_clusters(sentences)
    assert lowered.lowercase and set(lowered.paths) == {"monday", "was", "cold"}
    assert lowered.counts == {"monday": 3, "was": 2, "cold": 2}
    assert lowered.path("Monday") == lowered.path("MONDAY") == lowered.path("monday") is not None
    assert lowered.path("grey") is None and lowered.path("tuesday") is None
    cased = build_clusters(sentences, lowercase=False, min_count=1)
    assert not cased.lowercase and len(cased) == 7
    assert cased.path("Monday") != cased.path("monday") and cased.path("monDay") is None


@pytest.mark.parametrize("options, message", [
    ({"min_count": 0}, "min_count must be an integer of at least 1, got 0"),
    ({"depth": 0}, "depth must be an integer of at least 1"),
    ({"dimensions": 2.5}, "dimensions must be an integer"),
    ({"contexts": True}, "contexts must be an integer"),
    ({"seed": -1}, "seed must be an integer of at least 0"),
    ({"min_count": 5}, r"1 word\(s\) seen at least 5 times \(min_count, --min-count\) among the 3 distinct words"),
])
def test_bad_options(options, message):
    with pytest.raises(OptionValueError, match=message):
        build_clusters([["a", "b", "a", "c", "a", "b"]] * 2 + [["a"]], **options)


def test_bad_sentences():
    with pytest.raises(OptionValueError, match="sentence 2 is a string"):
        build_clusters([["a", "b"], "a b"])
    with pytest.raises(OptionValueError, match="token 3 of type int"):
        build_clusters([["a", "b", 3]] * 2)
    with pytest.raises(OptionValueError, match="word 'a\\\\tb'"):
        build_clusters([["a\tb", "c"]] * 2)


def test_progress_bar_on_stderr(capsys):
    build_clusters(two_topics(), depth=3, progress=True)
    assert "clusters" in capsys.readouterr().err
    build_clusters(two_topics(), depth=3)
    assert capsys.readouterr().err == ""


_TOKENS = ["a", "A", "b", "B", "the", "The", "ß", "SS", "ss", "İ", "é", "É", " ", "x y", "#", "0101", "."]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.sampled_from(_TOKENS), max_size=8), max_size=12), st.integers(1, 3),
       st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(0, 3), st.booleans())
def test_any_small_corpus(sentences, min_count, contexts, dimensions, depth, seed, lowercase):
    """Property: building succeeds (or refuses a corpus of fewer than two frequent words), is deterministic,
    and gives a 0/1 path of at most ``depth`` bits to exactly the words seen at least ``min_count`` times."""
    counts = Counter(token.lower() if lowercase else token for sentence in sentences for token in sentence)
    frequent = {word for word, count in counts.items() if count >= min_count}
    options = dict(min_count=min_count, contexts=contexts, dimensions=dimensions, depth=depth, seed=seed,
                   lowercase=lowercase)
    if len(frequent) < 2:
        with pytest.raises(OptionValueError, match="expected at least 2 to cluster"):
            build_clusters(sentences, **options)
        return
    clusters = build_clusters(sentences, **options)
    assert set(clusters.paths) == frequent and clusters.counts == {w: counts[w] for w in frequent}
    check_paths(clusters, depth)
    assert all(clusters.path(token) is not None for sentence in sentences for token in sentence
               if (token.lower() if lowercase else token) in frequent)
    assert build_clusters(sentences, **options).paths == clusters.paths


@pytest.fixture(scope="module")
def brown_sentences(nltk_data_dir):
    from nltk.corpus import brown

    try:
        return [list(sentence) for sentence in itertools.islice(brown.sents(), 20000)]
    except LookupError:
        pytest.skip("NLTK's brown corpus not found in NLTK_DATA")


@pytest.mark.corpus
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brown_clusters_group_words_of_one_kind(brown_sentences, seed):
    """Facts checked with seeds 0–3 on the first 20,000 sentences (the shared bits vary by seed: in/on 9–11,
    he/she 9–12, three/four 10–12, john/william 11–14, would/could 12–15; the/in, the/he and the/said 0)."""
    clusters = build_clusters(brown_sentences, seed=seed)
    assert len(clusters) > 15000 and clusters.lowercase
    for a, b in [("in", "on"), ("in", "at"), ("he", "she"), ("three", "four"), ("john", "william"),
                 ("would", "could")]:
        assert shared_bits(clusters.path(a), clusters.path(b)) >= 8, (a, b)
    for word in ["in", "he", "said", "monday"]:
        assert shared_bits(clusters.path(word), clusters.path("the")) < 6, word


# --- paths files ----------------------------------------------------------------------------------------


def write(tmp_path, content, name="paths.txt"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_write_then_read(tmp_path):
    clusters = WordClusters({"the": "00", "a": "01", "Monday": "1", "x y": "01"}, counts={"the": 9, "a": 5})
    clusters.write(tmp_path / "paths.txt")
    assert (tmp_path / "paths.txt").read_text("utf-8") == "00\tthe\t9\n01\ta\t5\n01\tx y\n1\tMonday\n"
    again = WordClusters.read(tmp_path / "paths.txt")
    assert again == clusters and again.counts == clusters.counts and not again.lowercase
    lowered = WordClusters({"monday": "10", "the": "0"}, lowercase=True)
    lowered.write(tmp_path / "lower.txt")
    assert (tmp_path / "lower.txt").read_text("utf-8") == f"{LOWERCASE_HEADER}\n0\tthe\n10\tmonday\n"
    again = WordClusters.read(tmp_path / "lower.txt")
    assert again == lowered and again.lowercase and again.path("Monday") == "10"
    assert again != clusters and again != WordClusters(lowered.paths)


def test_built_clusters_round_trip(tmp_path):
    clusters = build_clusters(two_topics())
    clusters.write(tmp_path / "paths.txt")
    again = WordClusters.read(tmp_path / "paths.txt")
    assert again == clusters and again.counts == clusters.counts and again.lowercase
    assert WordClusters.from_dict(json.loads(json.dumps(clusters.to_dict())), "model.zip") == clusters


def test_a_gz_name_is_written_gzipped_and_read_back(tmp_path):
    """``--output x.gz`` gives a gzip file (the same bytes for the same clusters) that reads back equal."""
    clusters = build_clusters(two_topics())
    clusters.write(tmp_path / "paths.gz")
    data = (tmp_path / "paths.gz").read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert WordClusters.read(tmp_path / "paths.gz") == clusters
    clusters.write(tmp_path / "again.gz")
    assert (tmp_path / "again.gz").read_bytes() == data


def test_read_wcluster_files(tmp_path):
    # as wcluster writes them: BITS<TAB>WORD<TAB>COUNT, sorted by path; words may start with '#'
    path = write(tmp_path, "0010\tthe\t6000\n0011\t#hashtag\t12\n01\tMonday\t40\n01\tTuesday\t35\n")
    clusters = WordClusters.read(path)
    assert clusters.paths == {"the": "0010", "#hashtag": "0011", "Monday": "01", "Tuesday": "01"}
    assert clusters.counts == {"the": 6000, "#hashtag": 12, "Monday": 40, "Tuesday": 35}
    assert not clusters.lowercase and clusters.path("monday") is None and len(clusters) == 4
    # without counts, CRLF line ends, no final newline, gzip
    plain = WordClusters.read(write(tmp_path, "0\tyes\r\n1\tno", "plain.txt"))
    assert plain.paths == {"yes": "0", "no": "1"} and plain.counts == {}
    gz = tmp_path / "paths.gz"
    gz.write_bytes(gzip.compress(b"0\tyes\t3\n1\tno\n"))
    assert WordClusters.read(gz) == plain and WordClusters.read(gz).counts == {"yes": 3}
    with open(path, "rb") as stream:
        assert WordClusters.read(stream) == clusters


@pytest.mark.parametrize("content, line, message", [
    ("0101\tthe\t5\n01x2\ta\t3\n", 2, "path '01x2' (expected a path of 0s and 1s"),
    ("\tthe\t5\n", 1, "path '' (expected a path of 0s and 1s"),
    ("0101\n", 1, "1 tab-separated field(s) (expected BITS<TAB>WORD<TAB>COUNT, COUNT optional)"),
    ("0101 the 5\n", 1, "1 tab-separated field(s)"),
    ("0\ta\t1\tb\n", 1, "4 tab-separated field(s)"),
    ("0101\t\t5\n", 1, "empty word (expected a word after the path)"),
    ("0\tthe\t-5\n", 1, "count '-5' (expected a non-negative integer"),
    ("0\tthe\t5 \n", 1, "count '5 '"),
    ("0\tthe\t\n", 1, "count ''"),
    ("0\tthe\t5\n1\ta\t2\n11\tthe\t1\n", 3, "word 'the' listed twice, on lines 1 and 3"),
    ("", 1, "empty file (expected lines BITS<TAB>WORD<TAB>COUNT"),
    (f"{LOWERCASE_HEADER}\n", 2, "no clusters after the header line"),
    ("0\ta\n\n1\tb\n", 2, "blank line"),
    ("0\ta\n1\tb\n\n", 3, "blank line"),
    ("0\ta\n  \n", 2, "blank line"),
    (f"0\ta\n{LOWERCASE_HEADER}\n", 2, "1 tab-separated field(s)"),
    (b"0\ta\n1\tb\xff\n", 2, "invalid UTF-8: byte 0xff at position 4 of the line (expected UTF-8 text; a clusters "
                          "file is UTF-8 text)"),  # not "--encoding latin-1", which reads the corpus only
    ("0\ta\n1\tb\0\n", 2, "NUL character"),
])
def test_bad_paths_files(tmp_path, content, line, message):
    path = write(tmp_path, content)
    with pytest.raises(CorpusFormatError) as caught:
        WordClusters.read(path)
    assert str(caught.value).startswith(f"{path}:{line}: ") and message in str(caught.value)


@pytest.mark.parametrize("paths, counts, message", [
    ({"a": "01x"}, None, "path '01x' of 'a' (expected a non-empty string of 0s and 1s)"),
    ({"a": ""}, None, "path '' of 'a'"),
    ({"a": 1}, None, "path 1 of 'a'"),
    ({"a\tb": "0"}, None, "word 'a\\tb' (expected a non-empty string without tab, line break or NUL)"),
    ({"a\r": "0"}, None, "word 'a\\r'"),
    ({"": "0"}, None, "word ''"),
    ({"a": "0"}, {"b": 1}, "a count for 'b', which has no path"),
    ({"a": "0"}, {"a": -1}, "count -1 of 'a' (expected a non-negative integer)"),
    ({"a": "0"}, {"a": 1.0}, "count 1.0 of 'a'"),
])
def test_clusters_are_checked(paths, counts, message):
    with pytest.raises(OptionValueError) as caught:
        WordClusters(paths, counts=counts)
    assert str(caught.value) == f"clusters: {message}" or message in str(caught.value)


def test_write_is_atomic(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        WordClusters({"a": "0"}).write(tmp_path / "missing" / "paths.txt")
    target = write(tmp_path, "old")
    WordClusters({"a": "0", "b": "1"}).write(target)
    assert target.read_text() == "0\ta\n1\tb\n" and [p.name for p in tmp_path.iterdir()] == ["paths.txt"]


# --- to_dict / from_dict --------------------------------------------------------------------------------


def test_dict_round_trip():
    clusters = WordClusters({"the": "00", "a": "01", "monday": "1"}, lowercase=True, counts={"the": 3})
    data = clusters.to_dict()
    assert data == {"lowercase": True, "words": ["the", "a", "monday"], "paths": ["00", "01", "1"]}
    again = WordClusters.from_dict(json.loads(json.dumps(data)), "model.zip")
    assert again == clusters and again.lowercase and again.counts == {}


@pytest.mark.parametrize("data, message", [
    ([], "clusters must be a mapping of lowercase, paths, words, got list"),
    ({"lowercase": False, "words": []}, "got ['lowercase', 'words']"),
    ({"lowercase": False, "words": [], "paths": [], "extra": 1}, "got ['extra', 'lowercase', 'paths', 'words']"),
    ({"lowercase": "yes", "words": [], "paths": []}, "lowercase must be true or false, got 'yes'"),
    ({"lowercase": False, "words": ["a"], "paths": []}, "two lists of the same length"),
    ({"lowercase": False, "words": "ab", "paths": "01"}, "two lists of the same length"),
    ({"lowercase": False, "words": ["a", 3], "paths": ["0", "1"]}, "word 3 (expected a non-empty string"),
    ({"lowercase": False, "words": ["a", "b"], "paths": ["0", "2"]}, "path '2' of 'b'"),
    ({"lowercase": False, "words": ["a", "b"], "paths": ["0", None]}, "path None of 'b'"),
    ({"lowercase": False, "words": ["a", "a"], "paths": ["0", "1"]}, "word 'a' listed twice"),
])
def test_bad_dicts(data, message):
    with pytest.raises(ModelFormatError) as caught:
        WordClusters.from_dict(data, "model.zip")
    assert str(caught.value).startswith("model.zip: ") and message in str(caught.value)
