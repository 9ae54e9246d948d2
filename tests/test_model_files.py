"""Compact, versioned model files and pickles (issue 18).

A model file of format version 2 or 3 keeps only the non-zero emission weights, exactly (float64), in deflated members
(version 3 marks the default token pattern of Unicode's words, each CJK ideograph and hiragana alone);
a file of version 1 (dense weights, members stored), as :func:`test_model_hostile.version_1` writes it, loads and
predicts as before, and other versions are refused with a message that says what to do.  A pickled model holds
what its file holds, uncompressed, and none of the caches prediction fills.
"""

from __future__ import annotations

import copy
import json
import pickle
import re
import zipfile

import numpy as np
import pytest

from structlin import Classifier, Tagger, __version__
from structlin.catalog import load_split
from structlin.doctemplates import RUN_PATTERN
from structlin.errors import ModelFormatError
from structlin.modelfile import VERSION
from structlin.templates import FeatureSet

from test_model_hostile import DOCS, LABELS, TEXTS, TOY, WORDS, _models, _predictions, rewritten, version_1


@pytest.fixture(scope="module")
def models() -> dict:
    """:func:`test_model_hostile._models` and a voted-perceptron tagger (a learner that scores inputs itself and
    keeps the state of its run besides)."""
    out = _models()
    out["tagger-voted"] = (Tagger("pos-basic", "voted-perceptron", epochs=3, bits=12, progress=False).fit(TOY), WORDS)
    return out


@pytest.fixture(scope="module")
def ewt_tagger(ewt_dir) -> tuple[Tagger, list]:
    """A real small model, the default tagger trained on EWT's first 1,000 training sentences (5 epochs), and
    200 dev sentences to tag."""
    train, dev = load_split("ud-english-ewt", "train")[:1000], load_split("ud-english-ewt", "dev")[:200]
    return Tagger(epochs=5, progress=False).fit(train), [s.words for s in dev]


def test_a_file_keeps_the_non_zero_weights_exactly_and_deflated(ewt_tagger, tmp_path):
    tagger, sentences = ewt_tagger
    path = tmp_path / "ewt.model"
    tagger.save(path)
    size, weights = path.stat().st_size, np.count_nonzero(tagger.weights_)
    assert size <= 5 * weights  # 4.2 bytes per non-zero weight measured (647 KB), the metadata included
    assert size <= len(version_1(path.read_bytes())) / 8  # 10.5 times smaller than version 1 measured
    with zipfile.ZipFile(path) as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
        assert json.loads(archive.read("metadata.json"))["version"] == VERSION == 3
    loaded = Tagger.load(path)
    emission, kept = tagger.joint.emission_matrix(tagger.weights_), np.isin(tagger.joint.columns, loaded.joint.columns)
    np.testing.assert_array_equal(loaded.joint.emission_matrix(loaded.weights_), emission[kept])
    assert not emission[~kept].any()  # only rows of zeros are left out
    np.testing.assert_array_equal(loaded.joint.transition_weights(loaded.weights_)[0],
                                  tagger.joint.transition_weights(tagger.weights_)[0])
    assert loaded.predict(sentences) == tagger.predict(sentences)


def test_version_1_files_load_and_predict_as_before(models, tmp_path):
    for name, (model, inputs) in models.items():
        path = tmp_path / f"{name}.model"
        model.save(path)
        path.write_bytes(version_1(path.read_bytes()))
        with zipfile.ZipFile(path) as archive:
            assert json.loads(archive.read("metadata.json"))["version"] == 1
            assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
        loaded = type(model).load(path)
        assert _predictions(loaded, inputs) == _predictions(model, inputs), name
        loaded.save(path)  # saved again: the current version, the same model
        assert _predictions(type(model).load(path), inputs) == _predictions(model, inputs), name


def test_files_before_version_3_read_ideographs_in_runs(tmp_path):
    """A model file of format 2 or before was written when the default token pattern read a run of ideographs as
    one token: a template without a pattern gets that one, so that the model reads inputs as it was trained to."""
    texts = ["我喜欢这部电影", "很好看", "这部电影很差", "不好看", "我喜欢", "很差"] * 2
    labels = ["pos", "pos", "neg", "neg", "pos", "neg"] * 2
    runs = FeatureSet.from_dict({"name": "runs", "template": [{"name": "words", "n": [1, 2]}],
                                 "token_pattern": RUN_PATTERN})
    model = Classifier(runs, epochs=3, bits=14, progress=False).fit(texts, labels)
    path = tmp_path / "m.model"
    model.save(path)
    inputs = ["我喜欢这部电影", "好看", "很差不好看"]

    def as_version(version):
        def written(meta):
            meta["version"] = version
            del meta["features"]["token_pattern"]  # as the code of that version wrote it
        return rewritten(path.read_bytes(), written)

    old = tmp_path / "old.model"
    old.write_bytes(as_version(2))
    assert Classifier.load(old).decision_function(inputs).tolist() == model.decision_function(inputs).tolist()
    old.write_bytes(as_version(3))  # the same weights read with the ideographs as tokens: they score otherwise
    assert Classifier.load(old).decision_function(inputs).tolist() != model.decision_function(inputs).tolist()


@pytest.mark.parametrize("version, message", [
    (4, f"model format version 4, newer than this structlin {__version__} reads (1 to 3): upgrade structlin to "
        "load it"),
    (0, "model format version 0; this structlin reads versions 1 to 3"),
    ("2", "model format version '2'; this structlin reads versions 1 to 3"),
    (True, "model format version True; this structlin reads versions 1 to 3"),
    (None, "model format version None; this structlin reads versions 1 to 3"),
])
def test_other_format_versions_are_refused_clearly(models, tmp_path, version, message):
    path = tmp_path / "m.model"
    models["classifier-perceptron"][0].save(path)
    path.write_bytes(rewritten(path.read_bytes(), lambda meta: meta.update(version=version)))
    with pytest.raises(ModelFormatError, match=re.escape(f"{path}: {message}")):
        Classifier.load(path)


def test_pickled_models_predict_identically(models):
    for name, (model, inputs) in models.items():
        for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert _predictions(twin, inputs) == _predictions(model, inputs), name
            assert twin.get_params() == model.get_params() and twin.history_ == model.history_
            learner, original = twin.learner, model.learner
            assert learner.chosen_ == original.chosen_ and learner.best_epoch_ == original.best_epoch_


def _assert_pickle_holds_what_the_file_holds(model, path) -> None:
    """A pickle of ``model`` (which has predicted, filling its caches) is about the size of its file: both are
    deflated.  The pickle also names every option of the model, unset ones too (a few kilobytes: the caches
    left out are megabytes)."""
    model.save(path)
    assert len(pickle.dumps(model)) <= 1.1 * path.stat().st_size + 4096


def test_a_pickle_holds_what_the_file_holds(ewt_tagger, tmp_path):
    tagger, sentences = ewt_tagger
    tagger.predict(sentences)  # fills the hash's memo, the word types' tables, the joint map's bucket lookup
    _assert_pickle_holds_what_the_file_holds(tagger, tmp_path / "ewt.model")


def test_a_pickled_classifier_leaves_out_its_dense_idf_table(tmp_path):
    classifier = Classifier("text-ngrams", epochs=3, progress=False).fit(DOCS, LABELS)  # tf-idf over 2**22 buckets
    classifier.predict(TEXTS)
    assert classifier._extractor._idf_table.nbytes == 8 << 22
    _assert_pickle_holds_what_the_file_holds(classifier, tmp_path / "c.model")


def test_an_unpickled_model_goes_on_training_as_a_loaded_one(tmp_path):
    tagger = Tagger("pos-basic", epochs=3, bits=12, progress=False).fit(TOY)
    tagger.save(tmp_path / "t.model")
    loaded, unpickled = Tagger.load(tmp_path / "t.model"), pickle.loads(pickle.dumps(tagger))
    for model in (loaded, unpickled):
        model.partial_fit(TOY[:2])
    np.testing.assert_array_equal(unpickled.weights_, loaded.weights_)
    assert unpickled.predict(WORDS) == loaded.predict(WORDS)


def _dot(A, B) -> np.ndarray:
    """A user kernel (module-level, so that pickle finds it by name)."""
    return (A @ B.T).toarray()


def test_untrained_models_and_user_kernels_pickle_as_they_are():
    untrained = Tagger("pos-basic", epochs=3, bits=12)
    assert pickle.loads(pickle.dumps(untrained)).get_params() == untrained.get_params()
    classifier = Classifier("text-unigram", "kernel-perceptron", kernel=_dot, epochs=2, progress=False).fit(DOCS, LABELS)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(classifier)).decision_function(TEXTS),
                                  classifier.decision_function(TEXTS))


@pytest.mark.parametrize("n_rows, n_labels", [(0, 3), (5, 3), (300, 7)])
def test_a_model_file_holds_the_non_zero_weights_made_a_block_of_rows_at_a_time(n_rows, n_labels, monkeypatch):
    """The non-zero emission weights a file keeps, of a dense vector in blocks of two rows and of pairs in blocks of
    as many: every one, in the order of their flat index, with each row's count (a map of no rows too)."""
    from structlin import models
    from structlin.joint import JointFeatureMap, SparseWeights

    monkeypatch.setattr(models, "_SAVED_BLOCK", 2 * n_labels)
    rng = np.random.default_rng(n_rows)
    joint = JointFeatureMap([f"l{k}" for k in range(n_labels)], np.arange(n_rows) * 3, transitions=False)
    w = rng.normal(size=joint.size) * (rng.random(joint.size) < 0.3)
    keys = np.flatnonzero(w[: joint.transition_offset])
    for weights in (w, SparseWeights.from_dense(w, joint.transition_offset)):
        blocks = list(models._nonzero_emissions(joint, weights))
        labels, values = (np.concatenate([np.zeros(0, int), *(block[k] for block in blocks)]) for k in (0, 1))
        rows = np.repeat(np.arange(n_rows), models._emission_counts(joint, weights))
        np.testing.assert_array_equal(rows * n_labels + labels, keys)
        np.testing.assert_array_equal(values, w[keys])


@pytest.mark.parametrize("dtype", [np.float64, np.uint16, np.uint8])
def test_a_streamed_array_is_written_as_the_whole_array_would_be(dtype, tmp_path):
    """A StreamedArray's blocks make the same member and the same deflated bytes as the array they add up to (empty
    blocks, none at all); blocks that do not add up to its length are refused."""
    from structlin.modelfile import StreamedArray, deflated, inflated, save_model

    rng = np.random.default_rng(0)
    for blocks in ([rng.integers(0, 200, size=n).astype(dtype) for n in (5, 0, 3, 1000)], []):
        whole = np.concatenate([np.zeros(0, dtype), *blocks])
        streamed = StreamedArray(np.dtype(dtype), len(whole), lambda: iter(blocks))
        save_model(tmp_path / "whole", {}, {"a": whole})
        save_model(tmp_path / "streamed", {}, {"a": streamed})
        with zipfile.ZipFile(tmp_path / "whole") as a, zipfile.ZipFile(tmp_path / "streamed") as b:
            assert a.read("a.npy") == b.read("a.npy") and a.read("metadata.json") == b.read("metadata.json")
        assert inflated(deflated(streamed)).tobytes() == whole.tobytes() and inflated(deflated(streamed)).dtype == dtype
    with pytest.raises(ValueError, match="a streamed array of 4 items gave 3"):
        save_model(tmp_path / "short", {}, {"a": StreamedArray(np.dtype(dtype), 4, lambda: iter([np.ones(3, dtype)]))})
    assert not (tmp_path / "short").exists()
