"""Training from a feature cache on disk (``stream=True``, ``structlin train tagger --stream``): the cache, the
sharded corpus, and that a streamed run trains the model an in-memory run trains."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin import Tagger
from structlin import featurecache
from structlin.catalog import load_split
from structlin.errors import CapabilityError, CorpusFormatError, OptionValueError
from structlin.featurecache import CacheWriter, FeatureCache, ShardedCorpus, cache_root
from structlin.joint import JointFeatureMap
from structlin.learners.epochs import minibatches
from structlin.learners.training import dev_accuracy, hold_out_instances
from structlin.matrix import FeatureMatrix
from structlin.decoders import Viterbi
from structlin.distributed import group_shards
from structlin.readers import Sentence
from structlin.tagdict import TagDictionary

from cli_run import run

SENTENCES = [Sentence(["the", "dog", "barks"], ["DET", "NOUN", "VERB"]),
             Sentence(["a", "cat", "sleeps", "."], ["DET", "NOUN", "VERB", "PUNCT"]),
             Sentence(["dogs", "bark"], ["NOUN", "VERB"]),
             Sentence(["the", "cats", "sleep", "."], ["DET", "NOUN", "VERB", "PUNCT"])] * 5


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test writes its feature caches to a folder of its own."""
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "features"


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of a few positions, so that a small corpus spans many of them, and segments of a few more."""
    monkeypatch.setattr(featurecache, "SHARD_POSITIONS", 7)
    monkeypatch.setattr("structlin.learners.epochs.SEGMENT_POSITIONS", 11)


def random_matrix(rng: np.random.Generator, n: int) -> tuple[FeatureMatrix, np.ndarray]:
    """``n`` instances of 0–5 positions, 1–4 features each among 30 buckets, labels among 3."""
    lengths = rng.integers(0, 6, n)
    per_row = rng.integers(1, 5, int(lengths.sum()))
    indptr = np.concatenate([[0], np.cumsum(per_row)])
    X = FeatureMatrix(indptr, rng.integers(0, 30, indptr[-1]), rng.normal(size=indptr[-1]), lengths,
                      rng.integers(0, 2**63, int(lengths.sum()), dtype=np.uint64))
    return X, rng.integers(0, 3, int(lengths.sum()))


def written(X: FeatureMatrix, y: np.ndarray, root, part: int) -> FeatureCache:
    """``X`` written to a cache ``part`` instances at a time (labels as the strings "0", "1", "2")."""
    with CacheWriter(root) as writer:
        for start in range(0, X.n_instances, part):
            chunk = X.slice(start, min(start + part, X.n_instances))
            writer.add(chunk, [str(label) for label in y[X.offsets[start] : X.offsets[start] + chunk.n_positions]])
        return writer.finish("test")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), part=st.integers(1, 9))
def test_the_cache_gives_back_the_matrix_in_any_order(seed, n, part, tmp_path_factory):
    """Written in parts and cut into shards, the corpus reads back as the matrix: any instances in any order
    (``take``), shard by shard (``parts``), and a held-out split holds the instances a matrix's would."""
    rng = np.random.default_rng(seed)
    X, y = random_matrix(rng, n)
    featurecache.SHARD_POSITIONS, saved = int(rng.integers(1, 20)), featurecache.SHARD_POSITIONS
    try:
        cache = written(X, y, tmp_path_factory.mktemp("cache"), part)
    finally:
        featurecache.SHARD_POSITIONS = saved
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    corpus = ShardedCorpus(cache, joint)
    indexed = joint.index(X)
    assert corpus.n_instances == X.n_instances and corpus.n_positions == X.n_positions
    assert np.array_equal(corpus.lengths, X.lengths)
    assert corpus.mean_squared_norm() == pytest.approx(X.mean_squared_norm())
    order = rng.integers(0, n, int(rng.integers(1, 2 * n)))  # repeats allowed
    got, gold = corpus.take(order)
    want = indexed.take(order)
    for field in ("indptr", "indices", "values", "lengths", "words"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert np.array_equal(np.array(sorted(cache.labels))[gold], y[X.positions(order)].astype(str))
    parts = list(corpus.parts())
    assert np.array_equal(np.concatenate([p.indices for p, _ in parts]), indexed.indices)
    rest, held = corpus.hold_out(0.3, seed % 1000)
    rest_X, _, (held_X, _) = hold_out_instances(indexed, y, 0.3, seed % 1000)
    for streamed, matrix in ((rest, rest_X), (held, held_X)):
        assert np.array_equal(streamed.take(np.arange(streamed.n_instances))[0].indices, matrix.indices)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), batch_size=st.integers(1, 5))
def test_an_epoch_visits_the_batches_a_matrix_gives(seed, n, batch_size, tmp_path_factory, monkeypatch_session):
    """``minibatches`` of a streamed corpus: the batches of the matrix, in the same order, for the same seed,
    whatever the segments."""
    rng = np.random.default_rng(seed)
    X, y = random_matrix(rng, n)
    cache = written(X, y, tmp_path_factory.mktemp("cache"), 3)
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    corpus = ShardedCorpus(cache, joint)
    indexed, ids = joint.index(X), joint.encode_labels(y.astype(str))
    for shuffle in (True, False):
        streamed = list(minibatches(corpus, None, batch_size, np.random.default_rng(seed) if shuffle else None))
        in_memory = list(minibatches(indexed, ids, batch_size, np.random.default_rng(seed) if shuffle else None))
        assert len(streamed) == len(in_memory)
        for (a, gold_a), (b, gold_b) in zip(streamed, in_memory):
            assert np.array_equal(a.indices, b.indices) and np.array_equal(a.lengths, b.lengths)
            assert np.array_equal(gold_a, gold_b)


@pytest.fixture(scope="module")
def monkeypatch_session():
    """Segments of 11 positions for the module's property tests (many segments per epoch)."""
    patch = pytest.MonkeyPatch()
    patch.setattr("structlin.learners.epochs.SEGMENT_POSITIONS", 11)
    yield patch
    patch.undo()


def test_a_cluster_gets_the_shards_whole_in_groups_of_about_as_many_positions(tmp_path, monkeypatch):
    monkeypatch.setattr(featurecache, "SHARD_POSITIONS", 9)
    X, y = random_matrix(np.random.default_rng(5), 80)
    cache = written(X, y, tmp_path, 2)
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    rest, _ = ShardedCorpus(cache, joint).hold_out(0.2, 0)
    positions = rest.shard_positions
    for n in (1, 2, 3, 5):
        groups = group_shards(rest, n)
        assert len(groups) == n
        assert sorted(k for group in groups for k in group) == [k for k in range(cache.n_shards) if rest.shard_sizes[k]]
        loads = [positions[group].sum() for group in groups]
        assert max(loads) - min(loads) <= positions.max()
        subsets = [rest.subset(group) for group in groups]
        assert sum(subset.n_instances for subset in subsets) == rest.n_instances
    assert len(group_shards(rest, 1000)) == np.count_nonzero(rest.shard_sizes)


def test_dev_accuracy_of_a_streamed_corpus_is_that_of_its_matrix(tmp_path):
    X, y = random_matrix(np.random.default_rng(3), 25)
    cache = written(X, y, tmp_path, 4)
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    w = np.random.default_rng(4).normal(size=joint.size)
    streamed = dev_accuracy(Viterbi(), joint, w, (ShardedCorpus(cache, joint), None))
    assert streamed == dev_accuracy(Viterbi(), joint, w, (joint.index(X), joint.encode_labels(y.astype(str))))


def test_tag_dictionary_from_parts_is_that_of_the_whole():
    rng = np.random.default_rng(0)
    codes, labels = rng.integers(0, 20, 500).astype(np.uint64), rng.integers(0, 4, 500)
    whole = TagDictionary.from_codes(codes, labels, 4, min_count=3)
    parts = TagDictionary.from_parts([(codes[:100], labels[:100]), (codes[100:], labels[100:])], 4, min_count=3)
    for name in ("codes", "indptr", "labels"):
        assert np.array_equal(getattr(whole, name), getattr(parts, name))


# --- the model: a streamed run trains what an in-memory run trains -----------------------------------


@pytest.fixture(scope="module")
def ewt(ewt_dir):
    return load_split("ud-english-ewt", "train")[:1500], load_split("ud-english-ewt", "dev")[:300]


def weights(model) -> np.ndarray:
    w = model.weights_
    return w.dense() if hasattr(w, "dense") else w


@pytest.mark.parametrize("options", [
    {"learner": "averaged-perceptron", "epochs": 2},
    {"learner": "mira", "epochs": 2},
    {"learner": "maxent", "solver": "sgd", "epochs": 2},
    {"learner": "svm", "solver": "pegasos", "epochs": 2},
    {"learner": "averaged-perceptron", "epochs": 2, "tag_dictionary": 1},
])
def test_streamed_training_gives_the_in_memory_model(ewt, small_shards, options):
    """Same seed, same data: the same weights to the bit, with dev and with the held-out epoch choice."""
    train, dev = ewt
    for held_out, given_dev in ((None, dev), (0.1, None)):
        models = [Tagger(stream=stream, seed=3, progress=False, held_out=held_out, **options).fit(train, given_dev)
                  for stream in (False, True)]
        assert np.array_equal(weights(models[0]), weights(models[1]))
        assert models[0].history_ == [dict(r, seconds=m) for r, m in
                                      zip(models[1].history_, [r["seconds"] for r in models[0].history_])]
        assert models[0].known_words_ == models[1].known_words_
    assert models[1].accuracy(dev) > 0.85


def test_streamed_lbfgs_sums_the_same_objective(ewt, small_shards):
    """L-BFGS sums the objective over the shards: the same iterates up to rounding."""
    train, dev = ewt
    models = [Tagger(stream=stream, learner="maxent", epochs=4, relative_l2=0.01, progress=False).fit(train, dev)
              for stream in (False, True)]
    np.testing.assert_allclose(weights(models[0]), weights(models[1]), rtol=1e-7, atol=1e-9)
    for a, b in zip(models[0].history_, models[1].history_):
        assert a["objective"] == pytest.approx(b["objective"], rel=1e-10)


def test_the_cache_is_found_again_and_made_anew_when_settings_change(cache, monkeypatch):
    Tagger(stream=True, epochs=1).fit(SENTENCES)
    assert len(list(cache.iterdir())) == 1

    def refuse(*args):
        raise AssertionError("features extracted again")

    with monkeypatch.context() as patch:  # the same sentences, a list or a generator: the cache is found
        patch.setattr(CacheWriter, "add", refuse)
        Tagger(stream=True, epochs=1).fit(SENTENCES)
    Tagger(stream=True, epochs=1).fit(iter(SENTENCES))  # a generator cannot be read twice: built, same name
    assert len(list(cache.iterdir())) == 1
    Tagger(stream=True, epochs=1, bits=18).fit(SENTENCES)
    Tagger(stream=True, epochs=1, features="pos-basic").fit(SENTENCES)
    Tagger(stream=True, epochs=1).fit(SENTENCES[:-1])
    assert len(list(cache.iterdir())) == 4
    assert cache_root() == cache


def test_a_damaged_cache_is_made_again_or_named(cache, tmp_path, capsys):
    """A cache missing a file, or whose manifest does not read, is made again; one whose arrays are cut short
    stops training with one line naming it."""
    Tagger(stream=True, epochs=1).fit(SENTENCES)
    (folder,) = cache.iterdir()
    (folder / "00000-values.npy").unlink()
    assert FeatureCache.find(folder.name) is None
    Tagger(stream=True, epochs=1).fit(SENTENCES)
    assert [p.name for p in cache.iterdir()] == [folder.name] and FeatureCache.find(folder.name) is not None
    (folder / "manifest.json").write_text("{not json", encoding="utf-8")
    Tagger(stream=True, epochs=1).fit(SENTENCES)
    assert FeatureCache.find(folder.name) is not None
    indices = folder / "00000-indices.npy"
    indices.write_bytes(indices.read_bytes()[:-40])
    write_tsv(tmp_path / "train.tsv", SENTENCES)
    code, out, err = run(capsys, "train", "tagger", "--train", tmp_path / "train.tsv", "--stream",
                         "--output", tmp_path / "m.model")
    assert code == 1 and f"the feature cache {folder} is damaged" in err and len(err.strip().splitlines()) == 1


def test_a_failed_extraction_leaves_no_cache_behind(cache):
    broken = [*SENTENCES, [("word", "")]]  # a token without a tag
    with pytest.raises(CorpusFormatError, match="sentence 21, token 1"):
        Tagger(stream=True, epochs=1).fit(broken)  # found by the first pass, which computes the digest
    assert not cache.exists()
    with pytest.raises(CorpusFormatError, match="sentence 21, token 1"):
        Tagger(stream=True, epochs=1).fit(iter(broken))  # found while the cache was being written
    assert cache.is_dir() and not any(cache.iterdir())


def test_errors_number_sentences_across_parts(monkeypatch):
    """Read 3 sentences at a time, the 8th is still called the 8th."""
    monkeypatch.setattr(Tagger, "extraction_batch", 3)
    with pytest.raises(CorpusFormatError, match=r"sentence 8: expected \(word, tag\) pairs"):
        Tagger(stream=True).fit([*SENTENCES[:7], [("a",), ("b", "X")]])


@pytest.mark.parametrize("learner", ["voted-perceptron", "winnow"])
def test_a_learner_that_does_not_stream_is_refused(learner):
    with pytest.raises(CapabilityError, match="does not train from a corpus on disk"):
        Tagger(learner=learner, stream=True).fit(SENTENCES)


@pytest.mark.parametrize("options, message", [
    ({"learner": "svm"}, "the bcfw solver keeps dual variables for every training instance in memory"),
    ({"learner": "perceptron", "delta": 0.5}, "the Δ trick"),
])
def test_a_setting_that_does_not_stream_is_refused(options, message):
    with pytest.raises(OptionValueError, match=message):
        Tagger(stream=True, **options).fit(SENTENCES)


def test_stream_must_be_a_bool():
    with pytest.raises(OptionValueError, match="stream must be True or False"):
        Tagger(stream="yes").fit(SENTENCES)


# --- the command line ------------------------------------------------------------------------------------------


def write_tsv(path, sentences) -> None:
    path.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(s.words, s.tags)) + "\n" for s in sentences),
                    encoding="utf-8")


def test_train_tagger_stream_from_a_file(tmp_path, capsys):
    write_tsv(tmp_path / "train.tsv", SENTENCES)
    code, out, err = run(capsys, "train", "tagger", "--train", tmp_path / "train.tsv", "--stream", "--epochs", 2,
                         "--output", tmp_path / "m.model")
    assert code == 0, err
    assert "trained on 20 sentences (65 tokens)" in out
    code, out, err = run(capsys, "evaluate", tmp_path / "m.model", "--test", tmp_path / "train.tsv")
    assert code == 0 and "Token accuracy" in out


@pytest.mark.parametrize("extra, message", [
    (["--dev-fraction", "0.1"], "--stream reads the training data as it goes and cannot hold a share of it out"),
    (["--learner", "winnow"], "does not train from a corpus on disk"),
    (["--learner", "svm"], "the pegasos solver does"),
])
def test_train_tagger_stream_refuses_what_it_cannot_do(tmp_path, capsys, extra, message):
    write_tsv(tmp_path / "train.tsv", SENTENCES)
    code, out, err = run(capsys, "train", "tagger", "--train", tmp_path / "train.tsv", "--stream", *extra,
                         "--output", tmp_path / "m.model")
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1


def test_train_tagger_stream_names_the_bad_line(tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("the\tDET\ndog\n\n", encoding="utf-8")
    code, out, err = run(capsys, "train", "tagger", "--train", tmp_path / "train.tsv", "--stream",
                         "--output", tmp_path / "m.model")
    assert code == 1 and "train.tsv:2:" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "empty.tsv").write_text("", encoding="utf-8")
    code, out, err = run(capsys, "train", "tagger", "--train", tmp_path / "empty.tsv", "--stream",
                         "--output", tmp_path / "m.model")
    assert code == 1 and "empty.tsv" in err and "no sentences" in err


def test_train_classifier_takes_no_stream(tmp_path, capsys):
    code, out, err = run(capsys, "train", "classifier", "--corpus", "qc", "--stream", "--output", tmp_path / "m")
    assert code == 2 and "--stream" in err
