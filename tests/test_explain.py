"""Explanations (structlin.explain): the contributions of an explanation add up to the model's own scores for every
label (emissions of a tagger's token, decision_function of a classifier), the feature names are the ones the
extractor hashes, collisions are reported, and learners without linear weights are refused."""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest

from structlin import Classifier, Tagger
from structlin.catalog import load_documents, load_split
from structlin.cli import main
from structlin.doctemplates import _code_points, document_features
from structlin.errors import CapabilityError, NotFittedError
from structlin.explain import _EmissionRows
from structlin.joint import JointFeatureMap, SparseWeights
from structlin.learners import run_weights
from structlin.readers import Sentence, read_conllu

SENTENCE = "The old man the boats .".split()
TAGGED = [[("the", "DET"), ("dog", "NOUN"), ("barks", "VERB")], [("a", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")],
          [("dogs", "NOUN"), ("bark", "VERB")], [("the", "DET"), ("old", "ADJ"), ("man", "NOUN"), ("sleeps", "VERB")]]
DOCS = ["good great fun", "great film good", "bad awful boring", "awful bad plot", "fun great", "boring bad"]
LABELS = ["pos", "pos", "neg", "neg", "pos", "neg"]


def emissions(tagger: Tagger, tokens: list) -> np.ndarray:
    """The model's own emission scores of every token and tag: ``joint.scores(weights, X).emissions``."""
    X = tagger.joint.index(tagger._extractor.extract([tokens]))
    return tagger.joint.scores(tagger.weights_, X).emissions


def assert_tagger_oracle(tagger: Tagger, tokens: list) -> None:
    """For every token and tag: the contributions add up to the emission score, and with the transition terms to the
    score of the chosen path with only that token's tag changed (relative to the path's own score)."""
    explained, scores = tagger.explain(tokens), emissions(tagger, tokens)
    X = tagger.joint.index(tagger._extractor.extract([tokens]))
    chain = tagger.joint.scores(tagger.weights_, X)
    path = tagger.joint.encode_labels(tagger.predict([tokens])[0])
    assert len(explained) == len(tokens)
    for i, e in enumerate(explained):
        features = np.sum([f.value * f.weights for f in e.features], axis=0)
        np.testing.assert_allclose(features, scores[i], rtol=0, atol=1e-6)
        assert e.predicted == path[i]
        changed = np.array([chain.score(np.where(np.arange(len(path)) == i, y, path))[0] for y in range(len(e.labels))])
        np.testing.assert_allclose(e.scores - e.scores[e.predicted], changed - changed[e.predicted], atol=1e-6)
        assert e.margin >= -1e-9  # Viterbi's path: no single change scores higher
        for f in e.features:  # a tagger's bucket value is the sum of its features' signed values
            assert f.value == pytest.approx(sum(p.value for p in f.parts), abs=1e-6)


# --- taggers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ewt(ewt_dir, tmp_path_factory):
    """A tagger with the default features trained on 800 EWT sentences, and its model file."""
    train = list(read_conllu(ewt_dir / "en_ewt-ud-train.conllu"))[:800]
    tagger = Tagger(epochs=2, progress=False).fit(train)
    path = tmp_path_factory.mktemp("explain") / "ewt.model"
    tagger.save(path)
    return tagger, path, list(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu"))[:20]


@pytest.mark.corpus
def test_tagger_contributions_add_up_to_the_scores(ewt):
    tagger, _, dev = ewt
    for tokens in [SENTENCE] + [list(s.words) for s in dev]:
        assert_tagger_oracle(tagger, tokens)


@pytest.mark.corpus
def test_tagger_names_the_word_and_its_neighbours(ewt):
    tagger, _, _ = ewt
    e = tagger.explain(SENTENCE, index=2)
    names = {p.name for f in e.features for p in f.parts}
    assert {"word@0=man", "lower@0=man", "lower@-1=old", "lower@1=the", "lower@-2=the", "lower@2=boats",
            "suffix(lengths=[1, 2, 3, 4, 5])@0=man", "suffix(lengths=[1, 2, 3])@-1=old", "shape@0=xxx", "bias@0=",
            "ngram(of=lower,span=[-1, 0])=old|man", "ngram(of=lower,span=[0, 1])=man|the"} <= names
    first = tagger.explain(SENTENCE, index=0)
    assert {"lower@-1=<S>", "lower@-2=<S>", "short_shape@-1=<S>"} <= {p.name for f in first.features for p in f.parts}
    assert first.terms[0].name == "start of the sentence"
    assert first.terms[1].name == f"transition to {tagger.tag(SENTENCE)[1][1]} (token 1)"
    assert tagger.explain(SENTENCE, index=-1).terms[-1].name == "end of the sentence"
    text = e.format()
    assert text.startswith(f"token 2 'man': {e.labels[e.predicted]} (1st), runner-up {e.labels[e.runner_up]} (2nd)")
    assert len([line for line in text.splitlines() if "@" in line or "ngram" in line]) >= 10  # the top 10 features
    data = e.to_dict()
    assert len(data["features"]) == 10 and data["other_features"]["count"] == len(e.features) - 10
    total = sum(f["contribution"] for f in data["features"]) + data["other_features"]["contribution"]
    assert total + sum(t["contribution"] for t in data["terms"]) == pytest.approx(data["scores"][data["predicted"]])


@pytest.mark.corpus
def test_cli_explains_why_man_gets_its_tag(ewt, capsys):
    tagger, path, _ = ewt
    tag = tagger.tag(SENTENCE)[2][1]
    code = main(["explain", str(path), "--text", " ".join(SENTENCE), "--token", "man", "--top", "100"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.startswith(f"token 2 'man': {tag} (1st), runner-up ")
    for name in ("word@0=man", "lower@-1=old", "lower@1=the", "ngram(of=lower,span=[-1, 0])=old|man",
                 "transition from", "transition to", "score"):
        assert name in out
    code = main(["explain", str(path), "--text", " ".join(SENTENCE), "--index", "2", "--json"])
    data = json.loads(capsys.readouterr()[0])
    assert code == 0 and data["tokens"] == SENTENCE and len(data["explanations"]) == 1
    assert data["explanations"][0]["predicted"] == tag
    code = main(["explain", str(path), "--text", " ".join(SENTENCE)])
    out = capsys.readouterr()[0]
    assert code == 0 and [line.split(":")[0] for line in out.splitlines() if line.startswith("token ")] == [
        f"token {i} {w!r}" for i, w in enumerate(SENTENCE)]


@pytest.mark.corpus
def test_top_features_per_tag_named_from_the_known_words(ewt, capsys, tmp_path):
    tagger, path, _ = ewt
    top = tagger.top_features(5)
    W = tagger.joint.emission_matrix(tagger.weights_)
    assert top.labels == tagger.classes_
    for y, rows in enumerate(top.rows):
        assert [abs(w) for _, w, _ in rows] == sorted(np.abs(W[:, y]), reverse=True)[:5]
        for bucket, _, names in rows:
            for name, sign in names.items():  # a token template's key@offset=value, hashed as the extractor does
                key, value = re.fullmatch(r"(.*@-?\d)=(.*)", name).groups()
                assert tagger.hasher(key, value) == (bucket, sign)
    assert sum(bool(names) for rows in top.rows for _, _, names in rows) > len(top.rows) * 3
    sample = tmp_path / "sample.txt"
    sample.write_text(" ".join(SENTENCE) + "\n", "utf-8")
    code = main(["explain", str(path), "--top", "3", "--sample", str(sample)])
    out = capsys.readouterr()[0]
    assert code == 0 and out.startswith("feature names: the word templates over the model's known words and the sample")
    assert all(f"\n{tag}:\n" in out for tag in tagger.classes_)


def test_hash_collisions_are_reported_and_still_add_up():
    tagger = Tagger("pos-basic", bits=4, epochs=2, progress=False).fit(TAGGED * 3)
    assert_tagger_oracle(tagger, ["the", "old", "dog", "sleeps"])
    explained = tagger.explain(["the", "old", "dog", "sleeps"])
    shared = [f for e in explained for f in e.features if len(f.parts) > 1]
    assert shared  # 16 buckets for dozens of features
    assert "shared by: " in "\n".join(e.format() for e in explained)
    unseen = tagger.explain(["zebras", "xylophone"], top=100)
    assert all(len({p.name for p in f.parts}) == len(f.parts) for e in unseen for f in e.features)


@pytest.mark.corpus
def test_chunker_reads_the_pos_column(nltk_data_dir):
    train = load_split("conll2000", "train", column="chunk")[:400]
    chunker = Tagger(epochs=1, progress=False).fit(train)
    assert chunker.feature_set.fields == ("word", "pos")
    sentence = load_split("conll2000", "test", column="chunk")[0]
    tokens = sentence.fields(chunker.feature_set.fields)
    assert_tagger_oracle(chunker, tokens)
    e = chunker.explain(sentence, index=3)  # 's, tagged POS
    names = {p.name for f in e.features for p in f.parts}
    assert {"pos:word@0=POS", "pos:word@-1=NNP", "pos:ngram(of=word,span=[-1, 0])=NNP|POS", "word@0='s"} <= names
    assert e.what == "token 3 \"'s/POS\""


def test_learners_without_linear_weights_are_refused(tmp_path, capsys):
    for learner in ("kernel-perceptron", "voted-perceptron"):
        model = Classifier("text-words", learner, epochs=2, progress=False).fit(DOCS, LABELS)
        with pytest.raises(CapabilityError, match="no linear weights to explain"):
            model.explain("good fun")
        with pytest.raises(CapabilityError, match="no linear weights"):
            model.top_features(3)
    tagger = Tagger("pos-basic", "voted-perceptron", epochs=2, progress=False).fit(TAGGED)
    with pytest.raises(CapabilityError, match="'voted-perceptron' scores inputs itself"):
        tagger.explain(["the", "dog"])
    tagger.save(tmp_path / "voted.model")
    assert main(["explain", str(tmp_path / "voted.model"), "--text", "the dog"]) == 1
    err = capsys.readouterr()[1]
    assert err.startswith("structlin: error: learner 'voted-perceptron' scores inputs itself") and err.count("\n") == 1
    with pytest.raises(NotFittedError):
        Tagger().explain(["the"])


# --- classifiers ----------------------------------------------------------------------------------


def assert_classifier_oracle(model: Classifier, documents: list) -> None:
    """For every document and label, the contributions add up to the model's score; decision_function agrees."""
    scores = model.label_scores(documents)
    explained = [model.explain(d) for d in documents]
    for e, s in zip(explained, scores):
        np.testing.assert_allclose(np.sum([f.value * f.weights for f in e.features], axis=0), s, rtol=0, atol=1e-6)
        np.testing.assert_allclose(e.scores, s, rtol=0, atol=1e-6)
    assert [e.labels[e.predicted] for e in explained] == model.predict(documents).tolist()
    decision = model.decision_function(documents)
    if len(model.classes_) == 2:
        assert decision.shape == (len(documents),)
        np.testing.assert_allclose([e.scores[1] - e.scores[0] for e in explained], decision, atol=1e-6)
    else:
        np.testing.assert_allclose([e.scores for e in explained], decision, atol=1e-6)


def assert_native_codes(model: Classifier, document) -> None:
    """Every word or character n-gram's name gives back the code the extractor hashed natively for it: its code mixes
    ``H(key@n)`` with each token's code-point hash (a word) or code point (a character) in turn."""
    hasher = model.hasher
    for f in document_features(model._extractor, document):
        key, n, gram = re.fullmatch(r"(.*)@(\d+)=(.*)", f.name).groups() if "@" in f.name else (None, None, None)
        if key is None:
            continue
        gram = ast.literal_eval(gram) if gram[:1] == "'" else gram
        if key.startswith("chars"):
            parts = [ord(c) for c in gram]
        else:
            parts = hasher.sequences(*_code_points(gram.split(" "))).tolist()
        code = hasher.string(f"{key}@{n}")
        for part in parts:
            code = int(hasher.mix(code, part))
        assert code == f.code, f.name


@pytest.fixture(scope="module")
def qc(nltk_data_dir):
    train = load_documents("qc", "train")[:1000]
    return [d.text for d in train], [d.label for d in train]


QUESTIONS = ["What is the capital of France ?", "How many people live in Tokyo ?", "Who wrote Hamlet ?", ""]


@pytest.mark.corpus
def test_tfidf_l2_classifier_adds_up(qc):
    model = Classifier("text-ngrams", epochs=2, progress=False).fit(*qc)
    assert (model.feature_set.values, model.feature_set.normalize) == ("log-tfidf", "l2")
    assert_classifier_oracle(model, QUESTIONS)
    for question in QUESTIONS[:2]:
        assert_native_codes(model, question)
    e = model.explain(QUESTIONS[0])
    names = {p.name for f in e.features for p in f.parts}
    assert {"words(n=[1, 2])@1=capital", "words(n=[1, 2])@2=capital of", "words(truncate=5)@1=capit",
            "words(suffix=3)@1=nce"} <= names
    assert np.linalg.norm([f.value for f in e.features]) == pytest.approx(1, abs=1e-5)  # L2 normalised


@pytest.mark.corpus
def test_the_extractors_constant_feature(qc):
    model = Classifier("text-ngrams", "naive-bayes").fit(*qc)
    assert_classifier_oracle(model, QUESTIONS)
    constant = [f for f in model.explain(QUESTIONS[0]).features if f.parts[0].name == "constant"]
    assert len(constant) == 1 and constant[0].value == 1
    assert [f.parts[0].name for f in model.explain("").features] == ["constant"]


@pytest.mark.corpus
def test_two_class_names_with_character_ngrams(nltk_data_dir):
    from nltk.corpus import names as corpus
    docs = [(n, g) for g in ("male", "female") for n in corpus.words(f"{g}.txt")[::4]]
    model = Classifier("names", epochs=3, progress=False).fit([d for d, _ in docs], [y for _, y in docs])
    assert_classifier_oracle(model, ["Anna", "John", "Ann-Marie", "X"])
    assert_native_codes(model, "Ann-Marie")
    e = model.explain("Anna")
    assert {"chars(n=[1, 2, 3, 4])@2='a '", "chars(n=[1, 2, 3, 4])@4=' ann'", "bias="} <= {
        p.name for f in e.features for p in f.parts}
    assert "'a '" in e.format()


def test_classifier_cli_explains_a_document_and_lists_the_heaviest(tmp_path, capsys):
    model = Classifier("text-words", epochs=3, progress=False).fit(DOCS, LABELS)
    path = tmp_path / "reviews.model"
    model.save(path)
    code = main(["explain", str(path), "--text", "good fun but bad plot", "--json"])
    data = json.loads(capsys.readouterr()[0])
    assert code == 0 and data["what"] == "document" and data["predicted"] == model.classify("good fun but bad plot")
    assert data["margin"] == pytest.approx(abs(model.decision_function(["good fun but bad plot"])[0]))
    assert main(["explain", str(path), "--text", "good fun", "--top", "1"]) == 0
    lines = capsys.readouterr()[0].splitlines()
    assert lines[0].startswith("document: pos (1st), runner-up neg (2nd)") and "more features" in lines[4]
    sample = tmp_path / "docs.txt"
    sample.write_text("\n".join(DOCS) + "\n", "utf-8")
    assert main(["explain", str(path), "--top", "2", "--sample", str(sample)]) == 0
    out = capsys.readouterr()[0]
    assert "\nneg:\n" in out and "\npos:\n" in out
    effects = {m[0]: float(m[1]) for m in re.findall(r"(words\(n=\[1, 2\]\)@1=\w+) ([-+][\d.]+)", out.split("pos:")[1])}
    assert effects and all((effect > 0) == (name[-4:] in ("good", "reat", "=fun")) for name, effect in effects.items())
    assert main(["explain", str(path), "--text", "good", "--token", "good"]) == 2
    assert "is a classifier" in capsys.readouterr()[1]


@pytest.mark.parametrize("seed", range(5))
def test_stored_pairs_are_read_by_row_as_the_dense_block(seed):
    """A many-label model's stored pairs (SparseWeights) are never made dense: each row, and every label's
    heaviest rows (ties and rows of weight 0 in row order), read as from the dense block."""
    rng = np.random.default_rng(seed)
    joint = JointFeatureMap([f"t{k}" for k in range(5)], np.arange(9) * 2, transitions=True)
    w = np.round(rng.normal(size=joint.size), 1)
    w[: joint.transition_offset][rng.random(joint.transition_offset) < 0.6] = 0.0
    dense, sparse = _EmissionRows(joint, w), _EmissionRows(joint, SparseWeights.from_dense(w, joint.transition_offset))
    assert sparse.sparse and not dense.sparse
    for row in range(joint.n_rows):
        np.testing.assert_array_equal(sparse[row], dense[row])
    for k in (1, 3, 9, 20):
        np.testing.assert_array_equal(sparse.heaviest(k), dense.heaviest(k))


def test_a_model_of_stored_pairs_explains_as_the_full_one(monkeypatch):
    """The same training with the touched pairs stored (as with many labels) explains every token alike and lists
    the same heaviest features."""
    train = [Sentence(["the", "cat", "sat"], ["D", "N", "V"]), Sentence(["a", "dog", "ran", "home"], ["D", "N", "V", "N"])]
    full = Tagger("pos-basic", epochs=3, bits=12, progress=False).fit(train)
    monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    stored = Tagger("pos-basic", epochs=3, bits=12, progress=False).fit(train)
    assert isinstance(stored.weights_, SparseWeights) and not isinstance(full.weights_, SparseWeights)
    tokens = ["the", "dog", "sat"]
    assert [e.format() for e in stored.explain(tokens)] == [e.format() for e in full.explain(tokens)]
    assert stored.top_features(4).format() == full.top_features(4).format()
