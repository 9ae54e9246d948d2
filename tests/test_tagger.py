"""Tests of structlin.models.Tagger on real data (UD English EWT, skipped when absent) and of model files:
accuracy floors, save/load, NLTK interface, input errors and damaged model files."""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
import zipfile

import nltk
import numpy as np
import pytest

from structlin import FeatureSet, Tagger, register_template
from structlin.errors import CorpusFormatError, ModelFormatError, NotFittedError, OptionValueError, StructlinError
from structlin.learners.perceptron import RELATIVE_MARGIN_DEFAULT
from structlin.readers import Sentence, read_conllu

# --- small synthetic data (no corpus needed) ----------------------------------------------------------

TOY = [
    [("the", "DET"), ("dog", "NOUN"), ("barks", "VERB")],
    [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
    [("the", "DET"), ("cat", "NOUN"), ("barks", "VERB"), ("loudly", "ADV")],
    [("dogs", "NOUN"), ("sleep", "VERB")],
]


@pytest.fixture(scope="module")
def toy_tagger() -> Tagger:
    return Tagger("pos-basic", epochs=5, batch_size=1, bits=16, progress=False).fit(TOY)


def test_toy_tagger_learns_training_data(toy_tagger):
    assert toy_tagger.classes_ == ["ADV", "DET", "NOUN", "VERB"]
    assert toy_tagger.predict([[w for w, _ in s] for s in TOY]) == [[t for _, t in s] for s in TOY]
    assert toy_tagger.accuracy(TOY) == 1.0
    assert toy_tagger.known_words_ == {w for s in TOY for w, _ in s}


def test_fit_accepts_sentences_and_pairs():
    as_sentences = [Sentence([w for w, _ in s], [t for _, t in s]) for s in TOY]
    a = Tagger("pos-basic", epochs=2, bits=16, progress=False).fit(as_sentences)
    b = Tagger("pos-basic", epochs=2, bits=16, progress=False).fit(TOY)
    np.testing.assert_array_equal(a.weights_, b.weights_)


@pytest.mark.parametrize("train, message", [
    ([Sentence(["a", "b"], ["X"])], "2 words but 1 tags"),
    ([[("a", "X"), ("b", "")]], "token 2: expected a word string and a non-empty tag"),
    ([[("a", "X")], [("b", None)]], "sentence 2, token 1"),
    ([[("a", "X"), (3, "Y")]], "expected a word string"),
    ([[("a", "X"), ("b",)]], "expected \\(word, tag\\) pairs"),
    ([[("a", "X")], 5], "sentence 2: expected \\(word, tag\\) pairs"),
])
def test_fit_rejects_bad_training_data(train, message):
    with pytest.raises(CorpusFormatError, match=message):
        Tagger("pos-basic", epochs=1, bits=12, progress=False).fit(train)


def test_fit_rejects_untagged_sentence():
    with pytest.raises(CorpusFormatError, match="train.conllu:7: sentence 1 has no tags"):
        Tagger("pos-basic", epochs=1, bits=12).fit([Sentence(["a"], None, path="train.conllu", line=7)])


def test_fit_rejects_no_tokens():
    with pytest.raises(StructlinError, match="no tokens"):
        Tagger("pos-basic", epochs=1, bits=12).fit([[], []])
    with pytest.raises(StructlinError, match="no tokens"):
        Tagger("pos-basic", epochs=1, bits=12).fit([])


def test_fit_rejects_untagged_token_lists():
    with pytest.raises(CorpusFormatError, match="expected \\(word, tag\\) pairs"):
        Tagger("pos-basic", epochs=1, bits=12, progress=False).fit([["The", "dog"], ["Cats", "sleep"]])


def test_unfitted_tagger_raises():
    tagger = Tagger("pos-basic", bits=12)
    with pytest.raises(NotFittedError, match="not trained yet"):
        tagger.tag(["a"])
    with pytest.raises(NotFittedError, match="not trained yet"):
        tagger.save("never-written.model")
    assert not hasattr(tagger, "classes_") and not hasattr(tagger, "known_words_")


def test_learner_options_decoder_and_parameters():
    """Learner options are parameters of the tagger too (batch_size 4 for a learner given by name); the decoder
    parameter stays as given while ``decoder`` reads the decoder it names; set_params acts at the next fit."""
    tagger = Tagger("pos-basic", "svm", "greedy", C=0.5, epochs=2, bits=14, progress=False)
    assert tagger.get_params(deep=False)["decoder"] == "greedy" and tagger.decoder.name == "greedy"
    assert repr(tagger) == "Tagger(features='pos-basic', learner='svm', decoder='greedy', bits=14, epochs=2, " \
                           "progress=False, C=0.5)"
    tagger.fit(TOY)
    assert (tagger.learner.C, tagger.learner.epochs, tagger.learner.batch_size) == (0.5, 2, 4)
    assert tagger.score(TOY) == tagger.accuracy(TOY)
    tagger.set_params(decoder="multiclass")
    assert tagger.decoder.name == "greedy" and tagger.joint.transitions  # the trained model, until the next fit
    assert tagger.fit(TOY).decoder.name == "multiclass" and not tagger.joint.transitions
    with pytest.raises(OptionValueError, match=r"learner 'averaged-perceptron' has no option alpha \(its options: "):
        Tagger("pos-basic", alpha=1.0).fit(TOY)
    with pytest.raises(StructlinError, match="unknown decoder 'beam'"):
        Tagger("pos-basic", decoder="beam").fit(TOY)
    with pytest.raises(OptionValueError, match="labels single instances"):
        Tagger("pos-basic", "naive-bayes").fit(TOY)


def test_predict_rejects_non_string_tokens(toy_tagger):
    with pytest.raises(StructlinError, match="sentence 2"):
        toy_tagger.predict([["the"], ["the", 5]])


def test_tag_edge_cases(toy_tagger):
    assert toy_tagger.tag([]) == []
    sentence = ["the", "dog", "barks"]
    assert toy_tagger.tag_sents([[], sentence, []]) == [[], list(zip(sentence, ["DET", "NOUN", "VERB"])), []]
    # Unknown words get a tag from the label set.
    tagged = toy_tagger.tag(["Zorblax", "flimwizzled", "the", "qwxz"])
    assert [w for w, _ in tagged] == ["Zorblax", "flimwizzled", "the", "qwxz"]
    assert all(t in toy_tagger.classes_ for _, t in tagged)


# --- model files -----------------------------------------------------------------------------------------


@pytest.fixture
def toy_model(toy_tagger, tmp_path):
    path = tmp_path / "toy.model"
    toy_tagger.save(path)
    return path


def test_toy_save_load_round_trip(toy_tagger, toy_model):
    loaded = Tagger.load(toy_model)
    assert loaded.classes_ == toy_tagger.classes_
    assert loaded.decoder.name == toy_tagger.decoder.name
    assert loaded.feature_set == toy_tagger.feature_set
    assert loaded.hasher.config() == toy_tagger.hasher.config()
    assert loaded.known_words_ == toy_tagger.known_words_
    assert loaded.history_ == toy_tagger.history_
    sentences = [["the", "dog", "sleeps"], ["Unknown", "words", "here"], []]
    assert loaded.predict(sentences) == toy_tagger.predict(sentences)
    with zipfile.ZipFile(toy_model) as archive:
        assert sorted(archive.namelist()) == ["columns.npy", "emission_counts.npy", "emission_labels.npy",
                                              "emission_values.npy", "metadata.json", "transition.npy"]


def test_save_load_save_keeps_metadata(tmp_path):
    tagger = Tagger("pos-basic", epochs=3, seed=4, batch_size=2, patience=5, bits=14, progress=False).fit(TOY)
    tagger.save(tmp_path / "a.model")
    Tagger.load(tmp_path / "a.model").save(tmp_path / "b.model")
    meta = [json.loads(zipfile.ZipFile(tmp_path / n).read("metadata.json")) for n in ("a.model", "b.model")]
    assert meta[1]["learner"] == meta[0]["learner"] == {"name": "averaged-perceptron", "epochs": 3, "seed": 4,
                                                         "shuffle": True, "batch_size": 2, "patience": 5, "eval_every": 1,
                                                         "margin": None, "relative_margin": RELATIVE_MARGIN_DEFAULT, "delta": None}
    assert meta[1] == meta[0]


def test_saved_model_is_an_ordinary_file(toy_model):
    umask = os.umask(0)
    os.umask(umask)
    assert toy_model.stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in toy_model.parent.iterdir()] == ["toy.model"]  # no temporary file left


_LOAD_CUSTOM = """
import json, sys
from structlin import Tagger
from structlin.errors import StructlinError
path, module = sys.argv[1], sys.argv[2]
sentences = [["the", "dog", "sleeps"], ["Cats", "bark"]]
try:
    first = Tagger.load(path).predict(sentences)
except StructlinError as err:
    first = str(err)
__import__(module)
print(json.dumps([first, Tagger.load(path).predict(sentences)]))
"""


def test_model_with_user_templates_loads_in_a_fresh_process(tmp_path):
    module = "structlin_test_tagger_templates"
    (tmp_path / f"{module}.py").write_text(
        "from structlin import register_template\n"
        "register_template('test_caps', lambda word: 'cap' if word[:1].isupper() else 'low')\n")
    features = tmp_path / "custom.toml"
    features.write_text(f'imports = ["{module}"]\n[[template]]\nname = "bias"\n[[template]]\nname = "lower"\n'
                        '[[template]]\nname = "test_caps"\noffsets = [0, 1]\n')
    sys.path.insert(0, str(tmp_path))
    try:
        tagger = Tagger(str(features), epochs=3, bits=14, progress=False).fit(TOY)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)
    tagger.save(tmp_path / "custom.model")
    expected = tagger.predict([["the", "dog", "sleeps"], ["Cats", "bark"]])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _LOAD_CUSTOM, str(tmp_path / "custom.model"), module], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    before_import, after_import = json.loads(done.stdout)
    # Before the template's module is imported, loading either works or says which template is missing.
    assert before_import == expected or "'test_caps'" in before_import
    assert after_import == expected


def rewrite(path, *, metadata=None, members=None, drop=()):
    """Rewrite a model zip with changed metadata and/or members."""
    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(contents["metadata.json"])
    if metadata:
        metadata(meta)
    contents["metadata.json"] = json.dumps(meta).encode()
    contents.update(members or {})
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in contents.items():
            if name not in drop:
                archive.writestr(name, data)


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_model_cut_in_half(toy_model):
    data = toy_model.read_bytes()
    toy_model.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match="toy.model: not a readable structlin model"):
        Tagger.load(toy_model)


def test_model_random_bytes(tmp_path):
    path = tmp_path / "random.model"
    path.write_bytes(np.random.default_rng(0).bytes(5000))
    with pytest.raises(ModelFormatError, match="random.model: not a readable structlin model"):
        Tagger.load(path)


def test_model_missing(tmp_path):
    with pytest.raises(ModelFormatError, match="missing.model: model file not found"):
        Tagger.load(tmp_path / "missing.model")
    with pytest.raises(ModelFormatError, match="is a folder, not a model file"):
        Tagger.load(tmp_path)


def test_model_corrupted_byte(toy_model):
    data = bytearray(toy_model.read_bytes())
    with zipfile.ZipFile(toy_model) as archive:
        info = archive.getinfo("emission_values.npy")
    position = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2  # the data
    data[position] ^= 0xFF
    toy_model.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="not a readable structlin model"):
        Tagger.load(toy_model)


def test_model_other_format_version(toy_model):
    rewrite(toy_model, metadata=lambda m: m.update(version=4))
    with pytest.raises(ModelFormatError, match=r"model format version 4, newer than this structlin .* reads "
                                               r"\(1 to 3\): upgrade structlin to load it"):
        Tagger.load(toy_model)


def test_model_not_a_structlin_zip(toy_model):
    rewrite(toy_model, metadata=lambda m: m.update(format="something-else"))
    with pytest.raises(ModelFormatError, match="not a structlin model file"):
        Tagger.load(toy_model)


def test_model_other_kind(toy_model):
    rewrite(toy_model, metadata=lambda m: m.update(kind="classifier"))
    with pytest.raises(ModelFormatError, match="holds a 'classifier' model, expected a 'tagger' model"):
        Tagger.load(toy_model)


def test_model_array_shape_disagrees_with_metadata(toy_model):
    def grow(meta):
        meta["arrays"]["emission_values"]["shape"][0] += 1
    rewrite(toy_model, metadata=grow)
    with pytest.raises(ModelFormatError, match="array 'emission_values' has shape .* metadata says"):
        Tagger.load(toy_model)


def test_model_array_replaced(toy_model):
    rewrite(toy_model, members={"transition.npy": npy(np.zeros(3))})
    with pytest.raises(ModelFormatError, match="array 'transition' has shape \\[3\\]"):
        Tagger.load(toy_model)


def test_model_arrays_disagree_with_labels(toy_model):
    # Consistent array metadata, but one label fewer than the weight arrays were made for.
    rewrite(toy_model, metadata=lambda m: m.update(labels=m["labels"][:-1]))
    with pytest.raises(ModelFormatError, match=r"\(labels(\+1)?, from the metadata\)"):
        Tagger.load(toy_model)


def test_model_member_missing(toy_model):
    rewrite(toy_model, drop={"columns.npy"})
    with pytest.raises(ModelFormatError, match="not a readable structlin model"):
        Tagger.load(toy_model)


def test_model_incomplete_metadata(toy_model):
    rewrite(toy_model, metadata=lambda m: m.pop("labels"))
    with pytest.raises(ModelFormatError, match="metadata is incomplete or invalid"):
        Tagger.load(toy_model)


def test_model_invalid_metadata_json(toy_model):
    rewrite(toy_model, members={"metadata.json": b"{not json"})
    with pytest.raises(ModelFormatError, match="not a readable structlin model"):
        Tagger.load(toy_model)


def test_model_pickled_array_refused(toy_model):
    def objects(meta):
        meta["arrays"]["columns"]["dtype"] = "|O"
    rewrite(toy_model, metadata=objects, members={"columns.npy": npy(np.array([{"x": 1}], dtype=object))})
    with pytest.raises(ModelFormatError, match="not a readable structlin model"):
        Tagger.load(toy_model)


def test_model_malformed_array_metadata(toy_model):
    rewrite(toy_model, metadata=lambda m: m["arrays"].update(columns=[1, 2]))
    with pytest.raises(ModelFormatError):
        Tagger.load(toy_model)


# --- real data: UD English EWT ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ewt(request):
    ewt_dir = request.getfixturevalue("ewt_dir")
    train = list(itertools.islice(read_conllu(ewt_dir / "en_ewt-ud-train.conllu"), 2000))
    dev = list(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu"))
    return train, dev


@pytest.fixture(scope="module")
def ewt_tagger(ewt) -> Tagger:
    train, dev = ewt
    return Tagger(epochs=3, progress=False).fit(train, dev[:500])


@pytest.mark.corpus
def test_ewt_accuracy(ewt, ewt_tagger):
    _, dev = ewt
    report = ewt_tagger.report(dev)
    # 2,000 sentences and 3 epochs of the default (pos-rich, averaged perceptron, Viterbi) give about 0.90.
    assert report.accuracy >= 0.88
    assert report.n_tokens == sum(len(s.words) for s in dev)
    assert report.known_accuracy > report.unknown_accuracy
    assert report.known_accuracy >= 0.92 and report.unknown_accuracy >= 0.6
    assert ewt_tagger.classes_ == sorted({t for s in ewt[0] for t in s.tags})
    assert len(ewt_tagger.history_) == 3
    assert all(0.85 <= r["dev_accuracy"] <= 1 for r in ewt_tagger.history_)
    assert ewt_tagger.learner.best_epoch_ == 1 + int(np.argmax([r["dev_accuracy"] for r in ewt_tagger.history_]))


@pytest.mark.corpus
def test_ewt_save_load_identical(ewt, ewt_tagger, tmp_path):
    _, dev = ewt
    path = tmp_path / "ewt.model"
    ewt_tagger.save(path)
    loaded = Tagger.load(path)
    subset = dev[:400]
    assert loaded.predict(subset) == ewt_tagger.predict(subset)
    assert loaded.report(subset).to_dict() == ewt_tagger.report(subset).to_dict()


@pytest.mark.corpus
def test_ewt_nltk_interface(ewt, ewt_tagger):
    _, dev = ewt
    assert isinstance(ewt_tagger, nltk.tag.api.TaggerI)
    gold = [list(zip(s.words, s.tags)) for s in dev[:200]]
    accuracy = ewt_tagger.accuracy(gold)
    tagged = ewt_tagger.tag_sents([[w for w, _ in s] for s in gold])
    correct = sum(p == g for ps, gs in zip(tagged, gold) for p, g in zip(ps, gs))
    assert accuracy == pytest.approx(correct / sum(len(s) for s in gold))
    assert ewt_tagger.evaluate(gold) == accuracy
    assert ewt_tagger.tag(dev[0].words) == tagged[0]
    assert accuracy >= 0.85


@pytest.mark.corpus
def test_ewt_long_sentence_and_unknown_words(ewt, ewt_tagger):
    train, dev = ewt
    longest = max(len(s.words) for s in train)
    words = [w for s in dev for w in s.words][:300]
    assert len(words) == 300 > longest
    tagged = ewt_tagger.tag(words)
    assert [w for w, _ in tagged] == words
    # Tagged in a long sentence, most tokens still get the same tags as in their own sentences.
    own = [t for s in ewt_tagger.tag_sents([s.words for s in dev[:40]]) for _, t in s][:300]
    assert np.mean([a == b for (_, a), b in zip(tagged, own)]) > 0.95
    unknown = ewt_tagger.tag(["The", "glorptastic", "zyxxl", "blorfed", "quickly", "."])
    assert all(t in ewt_tagger.classes_ for _, t in unknown)
    assert unknown[0][1] == "DET" and unknown[-1][1] == "PUNCT"


@pytest.mark.corpus
@pytest.mark.parametrize("decoder", ["greedy", "multiclass"])
def test_ewt_other_decoders(ewt, decoder, tmp_path):
    train, dev = ewt
    tagger = Tagger(decoder=decoder, epochs=2, progress=False).fit(train[:1000])
    assert tagger.decoder.name == decoder
    assert tagger.joint.transitions is (decoder == "greedy")
    sample = dev[500:1000]
    accuracy = tagger.accuracy(sample)
    assert accuracy >= 0.84  # about 0.855 (greedy) and 0.86 (multiclass)
    tagger.save(tmp_path / "m.model")
    loaded = Tagger.load(tmp_path / "m.model")
    assert loaded.decoder.name == decoder
    assert loaded.predict(sample) == tagger.predict(sample)


def _chunked(words_pos_chunk: list[list[tuple[str, str, str]]]) -> list[Sentence]:
    """Sentences of a (word, pos, chunk) column file, tagged by the chunk column."""
    return [Sentence([w for w, _, _ in s], [c for _, _, c in s], columns=[list(t) for t in s],
                     column_names=("word", "pos", "chunk")) for s in words_pos_chunk]


CHUNKED = [[("The", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sat", "VBD", "O")],
           [("A", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("ran", "VBD", "O"), ("home", "NN", "B-NP")]]


def test_default_features_add_the_other_input_columns():
    """features=None: pos-rich plus windows of every input column besides the word and the tag column (here
    POS, not the chunk tags themselves): the same model as naming that feature set; without other columns
    (CoNLL-U, word/tag pairs) plain pos-rich."""
    sentences = _chunked(CHUNKED)
    auto = Tagger(epochs=2, bits=14).fit(sentences)
    assert auto.feature_set.name == "pos-rich+pos" and auto.feature_set.fields == ("word", "pos")
    named = Tagger(FeatureSet.load("pos-rich").with_input_columns(["pos"]), epochs=2, bits=14).fit(sentences)
    np.testing.assert_array_equal(auto.weights_, named.weights_)
    assert auto.predict(sentences) == named.predict(sentences)
    tuples = Tagger(epochs=2, bits=14).fit([[(w, p, c) for w, p, c in s] for s in CHUNKED])
    assert tuples.feature_set.fields == ("word", "column1")
    assert Tagger(epochs=1, bits=14).fit(TOY).feature_set == FeatureSet.load("pos-rich")
    refit = Tagger(epochs=1, bits=14)
    assert refit.fit(sentences).feature_set.fields == ("word", "pos")
    assert refit.fit(TOY).feature_set.fields == ("word",)  # every fit chooses again


def test_default_features_survive_save_and_load(tmp_path):
    tagger = Tagger(epochs=2, bits=14).fit(_chunked(CHUNKED))
    tagger.save(tmp_path / "chunk.model")
    loaded = Tagger.load(tmp_path / "chunk.model")
    assert loaded.feature_set == tagger.feature_set
    assert loaded.predict(_chunked(CHUNKED)) == tagger.predict(_chunked(CHUNKED))


def test_a_report_in_parts_reports_progress_and_the_same_numbers(ewt_dir):
    from structlin.readers import read_conllu

    sentences = list(read_conllu(ewt_dir / "en_ewt-ud-train.conllu"))[:2500]
    tagger = Tagger(epochs=1, progress=False).fit(sentences[:300])
    seen = []
    assert tagger.report(sentences, progress=seen.append).to_dict() == tagger.report(sentences).to_dict()
    assert seen == [2048, 452]


@pytest.mark.corpus
def test_features_extracted_by_parts_train_the_same_model(ewt):
    """Extraction by parts of ``extraction_batch`` sentences (bounded temporaries) gives the matrix, and so
    the model, of extraction at once: 300 EWT sentences in parts of 7 and in one part."""
    train, dev = ewt[0][:300], ewt[1][:100]
    by_parts, at_once = (Tagger(epochs=2, progress=False) for _ in range(2))
    by_parts.extraction_batch, at_once.extraction_batch = 7, 10**9
    by_parts.fit(train, dev)
    at_once.fit(train, dev)
    np.testing.assert_array_equal(by_parts.weights_, at_once.weights_)
    assert by_parts.predict(dev) == at_once.predict(dev)


@pytest.mark.corpus
@pytest.mark.parametrize("learner", ["averaged-perceptron", "passive-aggressive"])
def test_a_run_that_keeps_only_touched_pairs_trains_the_dense_runs_model(ewt, learner, monkeypatch, tmp_path):
    """With the touched pairs kept (as for many labels: here forced for EWT's 17), the same weights, dev history
    and predictions as with full vectors; the model's weights stay SparseWeights through a file and partial_fit."""
    from structlin.joint import SparseWeights
    from structlin.learners import run_weights

    train, dev = ewt[0][:300], ewt[1][:100]
    dense = Tagger(learner=learner, epochs=2, progress=False).fit(train, dev)
    monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    sparse = Tagger(learner=learner, epochs=2, progress=False).fit(train, dev)
    assert isinstance(sparse.weights_, SparseWeights) and not isinstance(dense.weights_, SparseWeights)
    np.testing.assert_allclose(np.asarray(sparse.weights_), dense.weights_, rtol=1e-9, atol=1e-12)
    assert [r["dev_accuracy"] for r in sparse.history_] == [r["dev_accuracy"] for r in dense.history_]
    assert sparse.predict(dev) == dense.predict(dev)
    assert len(sparse.weights_.keys) < sparse.joint.transition_offset / 4  # a share of rows × labels
    sparse.save(tmp_path / "sparse.model")
    loaded = Tagger.load(tmp_path / "sparse.model")
    assert isinstance(loaded.weights_, SparseWeights) and loaded.predict(dev) == sparse.predict(dev)
    loaded.partial_fit(dev)
    assert isinstance(loaded.weights_, SparseWeights) and len(loaded.history_) == 3


@pytest.mark.parametrize("learner", ["averaged-perceptron", "passive-aggressive"])
def test_a_run_that_keeps_only_touched_rows_trains_the_dense_runs_model(ewt, learner, monkeypatch):
    """With few labels a run keeps the rows it touched (TouchedRows): the very weights, dev history and
    predictions of a run of full vectors, in fewer rows than the map has."""
    from structlin.learners import perceptron, run_weights

    train, dev = ewt[0][:300], ewt[1][:100]
    states = []
    start = perceptron.Perceptron.start

    def keep_state(self, *args, **kwargs):
        start(self, *args, **kwargs)
        states.append(self._state)

    monkeypatch.setattr(perceptron.Perceptron, "start", keep_state)
    rows = Tagger(learner=learner, epochs=2, progress=False).fit(train, dev)
    monkeypatch.setattr(perceptron, "weight_store", lambda capabilities, n_labels: run_weights.DenseWeights)
    dense = Tagger(learner=learner, epochs=2, progress=False).fit(train, dev)
    assert [type(state) for state in states] == [run_weights.TouchedRows, run_weights.DenseWeights]
    np.testing.assert_array_equal(rows.weights_, dense.weights_)
    untimed = [[{k: v for k, v in r.items() if k != "seconds"} for r in m.history_] for m in (rows, dense)]
    assert untimed[0] == untimed[1] and rows.predict(dev) == dense.predict(dev)
    assert 0 < states[0].n_rows_touched < rows.joint.n_rows * 0.9


def _assert_the_matrix_tags(tagger: Tagger, sentences, predicted: list[list[str]]) -> None:
    """``predicted`` are the tags of decoding the written-out feature matrix of ``sentences`` in one piece (how
    tagging went before it multiplied each word type's features once, :meth:`Tagger._input_scores`), or, where
    a sum in another order broke an exact tie the other way, tags of the same score under that matrix."""
    words = [list(s.words) for s in sentences]
    X = tagger.joint.index(tagger._features(words, "input"))
    labels = tagger._decode(X)
    bounds = np.cumsum([0] + [len(w) for w in words])
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        expected = [tagger.joint.labels[y] for y in labels[a:b]]
        if predicted[k] != expected:
            scores = tagger.joint.scores(tagger.weights_, X.take([k]))
            best, ours = (scores.score(tagger.joint.encode_labels(tags))[0] for tags in (expected, predicted[k]))
            assert ours == pytest.approx(best, abs=1e-9), (k, expected, predicted[k])


@pytest.mark.corpus
@pytest.mark.parametrize("options", [{}, {"tag_dictionary": 1}, {"learner": "maxent", "epochs": 5}, {"sparse": True}])
def test_tagging_from_factored_features_gives_the_matrix_tags(ewt, options, monkeypatch):
    """Tagging multiplies each word type's features by the weights once and decodes the input in parts of
    ``prediction_scores``; it gives the best tags of the whole feature matrix: dense and SparseWeights weights, a
    tag dictionary, max-ent, parts of one or a few sentences."""
    from structlin.joint import SparseWeights
    from structlin.learners import run_weights

    options = dict(options)
    sparse = options.pop("sparse", False)
    if sparse:  # the touched pairs kept, as for many labels
        monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    train, dev = ewt[0][:400], ewt[1][:300]
    tagger = Tagger(**{"epochs": 2, "progress": False, **options}).fit(train)
    assert isinstance(tagger.weights_, SparseWeights) or not sparse
    _assert_the_matrix_tags(tagger, dev, tagger.predict(dev))
    tagger.prediction_scores = 40 * len(tagger.classes_)  # parts of one to a few sentences
    assert len(list(tagger._prediction_parts([s.words for s in dev]))) > 100
    _assert_the_matrix_tags(tagger, dev, tagger.predict(dev))
    assert tagger.predict([]) == [] and tagger.predict([[]]) == [[]]


def test_a_non_finite_token_feature_names_the_input_sentence(registry):
    register_template("test_scaled", lambda word: {"len": float("nan") if word == "bad" else len(word)})
    fs = FeatureSet.from_dict({"name": "nan", "template": [{"name": "test_scaled", "offsets": [0]}, {"name": "word"}]})
    tagger = Tagger(fs, epochs=1, progress=False).fit(TOY)
    tagger.prediction_scores = 4 * len(tagger.classes_)  # sentence 3 is in a later part than the first
    with pytest.raises(CorpusFormatError, match="input: sentence 3 has a NaN or infinite feature value"):
        tagger.predict([["the", "dog"], ["a", "cat"], ["the", "bad", "dog"]])
