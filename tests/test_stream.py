"""Training from a feature cache on disk (``stream=True``, ``structlin train tagger|classifier --stream``): the
cache, the sharded corpus, and that a streamed run trains the model an in-memory run trains."""

from __future__ import annotations

import gc
import json
import re
from functools import partial

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from structlin import Classifier, Tagger
from structlin import featurecache
from structlin.catalog import load_documents, load_split
from structlin.errors import CapabilityError, CorpusFormatError, OptionValueError, StructlinError
from structlin.featurecache import CacheWriter, FeatureCache, ShardedCorpus, cache_root
from structlin.joint import JointFeatureMap, SparseWeights
from structlin.learners.epochs import minibatches
from structlin.learners.training import dev_accuracy, hold_out_instances
from structlin.matrix import FeatureMatrix
from structlin.decoders import Viterbi
from structlin.distributed import group_shards
from structlin.readers import Sentence
from structlin.sources import ReadOptions, read_documents, stream_documents
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


def random_matrix(rng: np.random.Generator, n: int, documents: bool = False) -> tuple[FeatureMatrix, np.ndarray]:
    """``n`` instances of 0–5 positions (one each for ``documents``), 1–4 features each among 30 buckets, labels
    among 3."""
    lengths = np.ones(n, dtype=np.int64) if documents else rng.integers(0, 6, n)
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
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), part=st.integers(1, 9), documents=st.booleans())
def test_the_cache_gives_back_the_matrix_in_any_order(seed, n, part, documents, tmp_path_factory):
    """Written in parts and cut into shards, the corpus reads back as the matrix: any instances in any order
    (``take``), shard by shard (``parts``), and a held-out split holds the instances a matrix's would (of each
    label's documents, or of the sequences, a run)."""
    rng = np.random.default_rng(seed)
    X, y = random_matrix(rng, n, documents)
    saved = featurecache.SHARD_POSITIONS, featurecache.SHARD_ENTRIES
    featurecache.SHARD_POSITIONS, featurecache.SHARD_ENTRIES = int(rng.integers(1, 20)), int(rng.integers(1, 60))
    try:
        cache = written(X, y, tmp_path_factory.mktemp("cache"), part)
    finally:
        featurecache.SHARD_POSITIONS, featurecache.SHARD_ENTRIES = saved
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    corpus = ShardedCorpus(cache, joint)
    indexed = joint.index(X)
    assert corpus.n_instances == X.n_instances and corpus.n_positions == X.n_positions
    assert np.array_equal(corpus.lengths, X.lengths)
    assert np.array_equal(corpus.entries, np.diff(X.indptr[X.offsets]))
    assert corpus.mean_squared_norm() == pytest.approx(X.mean_squared_norm())
    order = rng.integers(0, n, int(rng.integers(1, 2 * n)))  # repeats allowed
    got, gold = corpus.take(order)
    want = indexed.take(order)
    for field in ("indptr", "indices", "values", "lengths", "words"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert np.array_equal(np.array(sorted(cache.labels))[gold], y[X.positions(order)].astype(str))
    parts = list(corpus.parts())
    assert np.array_equal(np.concatenate([p.indices for p, _ in parts]), indexed.indices)
    if n == 1:  # one instance cannot be both held out and trained on
        for hold in (corpus.hold_out, partial(hold_out_instances, indexed, y)):
            with pytest.raises(OptionValueError, match="holding out 0.3 of 1 training instance .* leaves none"):
                hold(0.3, seed % 1000)
        return
    rest, held = corpus.hold_out(0.3, seed % 1000)
    rest_X, rest_y, (held_X, held_y) = hold_out_instances(indexed, y, 0.3, seed % 1000)
    for streamed, matrix, gold in ((rest, rest_X, rest_y), (held, held_X, held_y)):
        got, got_gold = streamed.take(np.arange(streamed.n_instances))
        assert np.array_equal(got.indices, matrix.indices) and np.array_equal(got.lengths, matrix.lengths)
        assert np.array_equal(np.array(sorted(cache.labels))[got_gold], gold.astype(str))


def test_reading_shards_again_leaves_no_reference_cycles(tmp_path):
    """An epoch maps every shard once a segment with the cyclic collector paused, so reading one must leave no
    garbage that only that collector frees (``np.load``'s header parser left some at every call)."""
    X, y = random_matrix(np.random.default_rng(0), 40)
    cache = written(X, y, tmp_path, 7)
    for k in range(cache.n_shards):  # the headers are read once
        cache.shard(k)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(10):
            for k in range(cache.n_shards):
                cache.shard(k)
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert after - before <= 5


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), batch_size=st.integers(1, 5))
def test_an_epoch_visits_the_batches_a_matrix_gives(seed, n, batch_size, tmp_path_factory, monkeypatch_session):
    """``minibatches`` of a streamed corpus: the batches of the matrix, in the same order, for the same seed,
    whatever the segments; a segment read holds about its bound of positions or entries (and whole batches)."""
    rng = np.random.default_rng(seed)
    X, y = random_matrix(rng, n)
    cache = written(X, y, tmp_path_factory.mktemp("cache"), 3)
    joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=True)
    corpus = ShardedCorpus(cache, joint)
    take, segments = corpus.take, []
    corpus.take = lambda instances: segments.append(instances) or take(instances)
    most = batch_size * 5  # a batch: at most batch_size instances of at most 5 positions of at most 4 entries
    indexed, ids = joint.index(X), joint.encode_labels(y.astype(str))
    for shuffle in (True, False):
        streamed = list(minibatches(corpus, None, batch_size, np.random.default_rng(seed) if shuffle else None))
        in_memory = list(minibatches(indexed, ids, batch_size, np.random.default_rng(seed) if shuffle else None))
        assert len(streamed) == len(in_memory)
        for (a, gold_a), (b, gold_b) in zip(streamed, in_memory):
            assert np.array_equal(a.indices, b.indices) and np.array_equal(a.lengths, b.lengths)
            assert np.array_equal(gold_a, gold_b)
    for segment in segments:
        assert corpus.lengths[segment].sum() < 11 + most and corpus.entries[segment].sum() < 23 + 4 * most


@pytest.fixture(scope="module")
def monkeypatch_session():
    """Segments of 11 positions or 23 entries for the module's property tests (many segments per epoch)."""
    patch = pytest.MonkeyPatch()
    patch.setattr("structlin.learners.epochs.SEGMENT_POSITIONS", 11)
    patch.setattr("structlin.learners.epochs.SEGMENT_ENTRIES", 23)
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
        if options["learner"] in ("averaged-perceptron", "mira"):  # a streamed run keeps its non-zero pairs
            assert isinstance(models[1].weights_, SparseWeights) and (models[1].weights_.values != 0).all()
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


def _overwrite_array(path, change):
    """Rewrite the ``.npy`` file ``path`` with ``change(array)``, as a damaged disk or a hand edit would."""
    array = np.load(path)
    np.save(path, change(array.copy()))


def _edit_manifest(folder, change):
    """Rewrite the cache's manifest with ``change(manifest)``."""
    path = folder / "manifest.json"
    path.write_text(json.dumps(change(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


@pytest.mark.parametrize("damage", [
    lambda folder: (folder / "vocabulary.json").write_text("{", encoding="utf-8"),
    lambda folder: (folder / "vocabulary.json").write_text("[1, 2]", encoding="utf-8"),
    lambda folder: _overwrite_array(folder / "00000-labels.npy", lambda a: np.full_like(a, 99)),
    lambda folder: _overwrite_array(folder / "00000-indices.npy", lambda a: np.full_like(a, 2**31 - 1)),
    lambda folder: _overwrite_array(folder / "00000-values.npy", lambda a: np.full_like(a, np.nan)),
    lambda folder: _edit_manifest(folder, lambda manifest: {**manifest, "labels": manifest["labels"][:2]}),
], ids=["vocabulary-not-json", "vocabulary-not-words", "label-ids", "buckets", "values-nan", "labels-cut"])
def test_a_cache_damaged_inside_its_arrays_is_named(cache, tmp_path, capsys, damage):
    """Arrays that read but do not fit each other or the manifest (label ids past its labels, buckets the corpus
    never used, values that are not numbers, a vocabulary that is not one) stop training with one line naming the
    folder; no model is written."""
    write_tsv(tmp_path / "train.tsv", SENTENCES)
    train = ("train", "tagger", "--train", tmp_path / "train.tsv", "--stream", "--epochs", "1", "--output",
             tmp_path / "m.model")
    assert run(capsys, *train)[0] == 0
    (tmp_path / "m.model").unlink()
    (folder,) = cache.iterdir()
    damage(folder)
    code, out, err = run(capsys, *train)
    assert code == 1 and f"the feature cache {folder} is damaged" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m.model").exists()


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


@pytest.mark.parametrize("task, extra, message", [
    ("tagger", ["--dev-fraction", "0.1"], "--stream reads the training data as it goes and cannot hold a share of it"),
    ("tagger", ["--learner", "winnow"], "does not train from a corpus on disk"),
    ("tagger", ["--learner", "svm"], "the pegasos solver does"),
    ("classifier", ["--dev-fraction", "0.2"], "--stream reads the training data as it goes"),
    ("classifier", ["--learner", "naive-bayes"], "does not train from a corpus on disk"),
    ("classifier", ["--learner", "svm"], "the pegasos solver does"),
])
def test_train_stream_refuses_what_it_cannot_do(tmp_path, capsys, task, extra, message):
    """Refused in one line, before the training file is read (no line about what it gave)."""
    if task == "tagger":
        write_tsv(tmp_path / "train.tsv", SENTENCES)
    else:
        (tmp_path / "train.tsv").write_text("pos\tgood\nneg\tbad\n", encoding="utf-8")
    code, out, err = run(capsys, "train", task, "--train", tmp_path / "train.tsv", "--stream", *extra,
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


# --- classifiers: documents streamed, their counts cached, tf-idf made as they are read --------------------------


@pytest.fixture(scope="module")
def questions(nltk_data_dir):
    """qc's first 1,500 training questions and 300 of its test questions, as (texts, labels) each."""
    train, test = load_documents("qc", "train")[:1500], load_documents("qc", "test")[:300]
    return ([d.text for d in train], [d.label for d in train]), ([d.text for d in test], [d.label for d in test])


@pytest.mark.parametrize("options", [
    {"learner": "averaged-perceptron", "epochs": 3},
    {"learner": "passive-aggressive", "epochs": 3},
    {"learner": "maxent", "solver": "sgd", "epochs": 3},
    {"learner": "svm", "solver": "pegasos", "epochs": 3},
    {"learner": "averaged-perceptron", "epochs": 3, "features": "text-presence"},
    {"learner": "averaged-perceptron", "epochs": 3, "features": "numeric-rff"},
])
def test_a_streamed_classifier_is_the_in_memory_one(questions, small_shards, options):
    """Same seed, same documents: the same weights to the bit, with dev and with the held-out epoch choice; the
    idf, the values and the model's columns (a bias bucket, random Fourier dimensions) come out the same."""
    (texts, labels), dev = questions
    if options.get("features") == "numeric-rff":  # numeric documents: a feature dict per question
        texts = [{k: float(len(w)) for k, w in enumerate(text.split()[:6])} for text in texts]
        dev = ([{k: float(len(w)) for k, w in enumerate(text.split()[:6])} for text in dev[0]], dev[1])
    for held_out, given_dev in ((None, dev), (0.1, None)):
        models = [Classifier(stream=stream, seed=3, progress=False, held_out=held_out, **options)
                  .fit(texts, labels, given_dev) for stream in (False, True)]
        assert np.array_equal(weights(models[0]), weights(models[1]))
        assert np.array_equal(models[0].joint.columns, models[1].joint.columns)
        assert [r["dev_accuracy"] for r in models[0].history_] == [r["dev_accuracy"] for r in models[1].history_]
        assert np.array_equal(models[0].predict(dev[0]), models[1].predict(dev[0]))
    if "features" not in options:
        assert models[1].score(*dev) > 0.6  # 3 epochs on 1,500 questions: 63% (SGD max-ent) to 79%


def test_a_streamed_lbfgs_classifier_sums_the_same_objective(questions, small_shards):
    (texts, labels), dev = questions
    models = [Classifier(stream=stream, learner="maxent", epochs=5, progress=False).fit(texts, labels, dev)
              for stream in (False, True)]
    np.testing.assert_allclose(weights(models[0]), weights(models[1]), rtol=1e-7, atol=1e-9)


def test_a_stream_of_documents_generators_and_a_file_train_alike(questions, tmp_path, cache, monkeypatch):
    """``fit(X, y)`` with lists, with generators (read once: no first pass), and ``fit(stream)`` of labelled
    Documents read from a TSV file: one model; the lists' and the file's runs find the cache of the first."""
    (texts, labels), dev = questions
    texts, labels = texts[:400], labels[:400]
    (tmp_path / "train.tsv").write_text("".join(f"{y}\t{x}\n" for x, y in zip(texts, labels)), encoding="utf-8")
    lists = Classifier(stream=True, epochs=2, progress=False).fit(texts, labels)
    once = Classifier(stream=True, epochs=2, progress=False).fit(iter(texts), (y for y in labels))
    assert len(list(cache.iterdir())) == 1
    with monkeypatch.context() as patch:
        patch.setattr(CacheWriter, "add", lambda *args: pytest.fail("features extracted again"))
        found = Classifier(stream=True, epochs=2, progress=False).fit(stream_documents(str(tmp_path / "train.tsv"),
                                                                                      None))
    for model in (once, found):
        assert np.array_equal(weights(lists), weights(model))


def test_a_matrix_streams_its_rows_as_fit_reads_them():
    """A 2-D array or a scipy sparse matrix: its rows' feature dicts, as without stream (and n_features_in_)."""
    X = np.random.default_rng(0).random((40, 5)).round(2)
    y = ["a" if row[0] > 0.5 else "b" for row in X]
    for matrix in (X, scipy.sparse.csr_matrix(X)):
        models = [Classifier(stream=stream, epochs=3, progress=False).fit(matrix, y) for stream in (False, True)]
        assert np.array_equal(weights(models[0]), weights(models[1]))
        assert models[1].n_features_in_ == 5 and list(models[1].predict(matrix)) == list(models[0].predict(matrix))


@pytest.mark.parametrize("X, y, message", [
    (["a b", "c d", "e f"], ["x", "y"], "3 documents or more but 2 labels"),
    (["a b", "c d"], ["x", "y", "z"], "2 documents but more labels"),
    (["a b", "c d", ("e", "f")], ["x", "y", "x"],
     "document 3 is a tuple of fields, but the first documents are texts"),
    (["a b", "c d"], ["x", ("y",)], "document 2 has the label ('y',): streamed labels are strings, numbers"),
    (["a b", "c d"], ["x", ""], "document 2 has an empty label"),
    (["a b", "c d"], None, "document 1 is str: without y, a stream yields labelled Documents"),
    ("a b c", ["x"], "expected training data as a sequence of documents"),
    ([{0: 1.0}, {0: 2.0}, {0: float("nan")}], ["x", "y", "x"], "document 3 has a NaN or infinite feature value"),
])
def test_a_bad_stream_is_named_in_one_line(X, y, message, cache, monkeypatch):
    monkeypatch.setattr(Classifier, "extraction_batch", 2)  # the first part chooses the feature set, not the third
    with pytest.raises((CorpusFormatError, TypeError), match=re.escape(message)):
        Classifier(stream=True, epochs=1).fit(X, y)
    assert not cache.exists() or not any(cache.iterdir())  # no cache left behind


def test_a_bad_label_is_numbered_across_parts(monkeypatch):
    monkeypatch.setattr(Classifier, "extraction_batch", 3)
    with pytest.raises(CorpusFormatError, match="document 8 has an empty label"):
        Classifier(stream=True).fit(["a", "b"] * 5, ["x", "y"] * 3 + ["x", ""] + ["x", "y"])


@pytest.mark.parametrize("learner", ["voted-perceptron", "naive-bayes", "winnow", "kernel-perceptron"])
def test_a_classifier_learner_that_does_not_stream_is_refused(learner):
    with pytest.raises(CapabilityError, match="does not train from a corpus on disk"):
        Classifier(learner=learner, stream=True).fit(["a b", "c d"], ["x", "y"])


def test_train_classifier_stream_from_a_file(tmp_path, capsys):
    """A TSV file with a header row, CRLF line ends and a text that starts with a quote: read into the cache
    (reported once), trained from it with the epochs chosen on a held-out tenth: the model trained in memory."""
    rows = [("good fun film", "pos"), ("dull and slow", "neg"), ('"youre dead to me"... great', "pos"),
            ("a waste of time", "neg")] * 10
    (tmp_path / "train.tsv").write_text("text\tlabel\r\n" + "".join(f"{x}\t{y}\r\n" for x, y in rows),
                                        encoding="utf-8")
    for extra, model in (([], "s.model"), (["--stream"], "t.model")):
        code, out, err = run(capsys, "train", "classifier", "--train", tmp_path / "train.tsv", *extra,
                             "--epochs", 3, "--output", tmp_path / model)
        assert code == 0, err
        assert "trained on 40 documents in" in out
        assert err.count("read 40 documents (2 labels) from") == 1
    in_memory, streamed = (Classifier.load(tmp_path / name) for name in ("s.model", "t.model"))
    assert np.array_equal(weights(in_memory), weights(streamed))
    code, out, err = run(capsys, "evaluate", tmp_path / "t.model", "--test", tmp_path / "train.tsv")
    assert code == 0 and re.search(r"Accuracy: +100.00%", out)


def test_train_classifier_stream_names_the_bad_line(tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("pos\tgood\n\tbad\n", encoding="utf-8")
    code, out, err = run(capsys, "train", "classifier", "--train", tmp_path / "train.tsv", "--stream",
                         "--output", tmp_path / "m.model")
    assert code == 1 and "train.tsv:2: empty label" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.model").exists()


def test_streamed_nltk_featuresets_name_their_informative_features():
    """NLTK featuresets streamed: the kind is kept, the (name, value) pairs are gathered as they are read, so the
    informative features are named as after an in-memory fit."""
    names = ["anna", "bob", "carla", "dave", "emma", "frank", "gina", "hank"] * 6
    featuresets = [{"last_letter": n[-1], "length": len(n)} for n in names]
    genders = ["f" if n.endswith("a") else "m" for n in names]
    models = [Classifier(stream=stream, epochs=3, progress=False).fit(featuresets, genders) for stream in (False, True)]
    assert models[0].most_informative_features(3) == models[1].most_informative_features(3)
    assert "last_letter" in str(models[1].most_informative_features(1)[0])


def test_stream_documents_reads_a_file_again_and_reports_it_once(tmp_path):
    (tmp_path / "a.tsv").write_text("label\ttext\r\npos\t\"quoted\" start\r\nneg\tplain\r\n", encoding="utf-8")
    said = []
    stream = stream_documents(str(tmp_path / "a.tsv"), None, ReadOptions(report=said.append))
    first, again = list(stream), list(stream)
    assert first == again == read_documents(str(tmp_path / "a.tsv"), None)
    assert [d.text for d in first] == ['"quoted" start', "plain"] and stream.units == stream.items == 2
    assert len(said) == 1 and said[0].startswith("read 2 documents (2 labels)")
    (tmp_path / "empty.tsv").write_text("", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="empty.tsv.*no documents"):
        list(stream_documents(str(tmp_path / "empty.tsv"), None))


def test_stream_documents_checks_options_when_called():
    with pytest.raises(OptionValueError, match="granularity"):
        stream_documents("qc.tsv", None, ReadOptions(granularity="fine"))
    with pytest.raises(StructlinError, match="strip"):
        stream_documents("qc", "train", ReadOptions(strip=("headers",)))


def test_a_folder_tree_corpus_streams_as_it_loads(news_archive):
    """20 Newsgroups read as it goes (a whole folder-tree split): the documents load_documents gives."""
    streamed = stream_documents("20news-bydate", "test")
    loaded = load_documents("20news-bydate", "test")
    assert list(streamed) == loaded and streamed.units == len(loaded) == 7532
