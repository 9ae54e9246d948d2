"""Word clusters as features: the ``cluster`` template, a feature set's ``clusters``, model files that keep them,
and ``structlin clusters`` at the command line."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cli_run import run
from structlin import Classifier, FeatureSet, Tagger
from structlin.clusters import WordClusters
from structlin.errors import ModelFormatError, OptionValueError, StructlinError
from structlin.hashing import FeatureHasher
from structlin.readers import Sentence
from structlin.templates import TokenFeatureExtractor, position_features, template

CLUSTERS = WordClusters({"the": "00", "a": "01", "cat": "100", "dog": "1010", "sleeps": "11"}, lowercase=True)
POS = [("the", "DET"), ("cat", "NOUN"), ("sleeps", "VERB")], [("a", "DET"), ("dog", "NOUN"), ("sleeps", "VERB")]


def cluster_set(clusters=CLUSTERS, **entry) -> FeatureSet:
    return FeatureSet.from_dict({"name": "c", "clusters": clusters.to_dict(),
                                 "template": [{"name": "word"}, {"name": "cluster", **entry}]})


def test_the_template_gives_each_prefix_once_and_nothing_for_unknown_words():
    cluster = template("cluster").function
    assert cluster("Dog", CLUSTERS, prefixes=(1, 2, 4, 8)) == ["1", "10", "1010"]
    assert cluster("sleeps", CLUSTERS, prefixes=(4, 6)) == ["11"]  # a short path once, whole
    assert cluster("zebra", CLUSTERS, prefixes=(4,)) is None


def test_named_features_and_bulk_extraction_agree():
    """position_features names what the extractor hashes: cluster prefixes at each offset, markers beyond."""
    fs = cluster_set(offsets=[-1, 0, 1], prefixes=[1, 3])
    hasher = FeatureHasher(bits=18)
    X = TokenFeatureExtractor(fs, hasher).extract([["The", "dog", "sleeps"]])
    named = position_features(fs, hasher, ["The", "dog", "sleeps"], 1)
    names = {f.name for f in named}
    assert {"cluster(prefixes=[1, 3])@-1=0", "cluster(prefixes=[1, 3])@-1=00", "cluster(prefixes=[1, 3])@0=1",
            "cluster(prefixes=[1, 3])@0=101", "cluster(prefixes=[1, 3])@1=1", "cluster(prefixes=[1, 3])@1=11"} <= names
    buckets, signs = hasher.buckets(np.array([f.code for f in named], dtype=np.uint64))
    row = slice(X.indptr[1], X.indptr[2])
    assert sorted(zip(X.indices[row].tolist(), X.values[row].tolist())) == sorted(zip(buckets.tolist(),
                                                                                          signs.tolist()))


def test_a_feature_set_reads_its_clusters_file_beside_it(tmp_path):
    CLUSTERS.write(tmp_path / "en.clusters")
    (tmp_path / "set.toml").write_text('name = "s"\nclusters = "en.clusters"\n[[template]]\nname = "cluster"\n')
    fs = FeatureSet.load(tmp_path / "set.toml")
    assert fs.clusters == CLUSTERS
    assert FeatureSet.from_dict(fs.to_dict()) == fs  # a model file's copy holds the clusters themselves


@pytest.mark.parametrize("data, message", [
    ({"template": [{"name": "cluster"}]}, "reads the feature set's clusters"),
    ({"clusters": 3, "template": [{"name": "word"}]}, "clusters must name a word-cluster file"),
    ({"clusters": CLUSTERS.to_dict(), "template": [{"name": "ngram", "of": "cluster"}]}, "reads the feature set's"),
    ({"clusters": CLUSTERS.to_dict(), "template": [{"name": "cluster", "prefixes": []}]}, "prefixes must be"),
])
def test_bad_cluster_settings_are_refused(data, message):
    with pytest.raises(OptionValueError, match=message):
        FeatureSet.from_dict({"name": "bad", **data})


def test_a_missing_clusters_file_names_the_feature_set(tmp_path):
    (tmp_path / "set.toml").write_text('name = "s"\nclusters = "gone.clusters"\n[[template]]\nname = "cluster"\n')
    with pytest.raises(StructlinError, match=r"set.toml: clusters file .*gone.clusters not found"):
        FeatureSet.load(tmp_path / "set.toml")


def test_a_model_keeps_its_clusters(tmp_path):
    """The model file holds the clusters: it predicts the same once the clusters file is gone, and a word
    known only to the clusters gets its cluster's features."""
    CLUSTERS.write(tmp_path / "en.clusters")
    (tmp_path / "set.toml").write_text('name = "s"\nclusters = "en.clusters"\n[[template]]\nname = "cluster"\n'
                                       'prefixes = [1, 2]\n')
    train = [Sentence([w for w, _ in s], [t for _, t in s]) for s in POS] * 3
    tagger = Tagger(str(tmp_path / "set.toml"), epochs=3, seed=0, progress=False).fit(train)
    tagger.save(tmp_path / "m.model")
    (tmp_path / "en.clusters").unlink()
    loaded = Tagger.load(tmp_path / "m.model")
    assert loaded.feature_set.clusters == CLUSTERS
    sentences = [["A", "cat", "sleeps"], ["the", "dog"]]
    assert loaded.predict(sentences) == tagger.predict(sentences) == [["DET", "NOUN", "VERB"], ["DET", "NOUN"]]


def test_bundled_clusters_are_named_in_model_files_and_pickles_with_their_digest():
    """pos-rich reads the English clusters structlin ships; a model file (and a pickle) names them with the
    SHA-256 of their file instead of holding 97,000 words, and refuses other clusters under the same name."""
    fs = FeatureSet.load("pos-rich")
    assert fs.clusters.bundled == "en" and len(fs.clusters) > 50_000
    assert fs.clusters.path("Tuesday") is not None and fs.clusters.path("Tuesday") == fs.clusters.path("tuesday")
    stored = fs.to_dict()["clusters"]
    assert stored == {"bundled": "en", "sha256": fs.clusters.sha256}
    assert FeatureSet.from_dict(fs.to_dict()).clusters is fs.clusters
    assert len(pickle.dumps(fs)) < 10_000 and pickle.loads(pickle.dumps(fs)) == fs
    with pytest.raises(ModelFormatError, match="differ from the ones the model was trained with"):
        FeatureSet.from_dict({**fs.to_dict(), "clusters": {"bundled": "en", "sha256": "0" * 64}})
    with pytest.raises(OptionValueError, match="no bundled clusters 'fr'"):
        FeatureSet.from_dict({**fs.to_dict(), "clusters": {"bundled": "fr", "sha256": "0" * 64}})


def test_documents_get_a_bag_of_their_words_clusters(tmp_path):
    """word_clusters gives every known word's prefixes (the same words as the words template finds); a
    classifier keeps the clusters in its file and classifies alike after loading."""
    bag = template("word_clusters").function
    assert bag("The dog, the CAT and a zebra", CLUSTERS, prefixes=(1, 3)) == ["0", "00", "1", "101", "0", "00",
                                                                              "1", "100"]
    fs = {"name": "d", "values": "log-tfidf", "normalize": "l2", "clusters": CLUSTERS.to_dict(),
          "template": [{"name": "words"}, {"name": "word_clusters", "prefixes": [1, 2]}]}
    classifier = Classifier(FeatureSet.from_dict(fs), epochs=3, seed=0, progress=False)
    classifier.fit(["the cat sleeps", "a dog sleeps", "the the sleeps", "a a sleeps"], ["cat", "dog", "cat", "dog"])
    classifier.save(tmp_path / "c.model")
    loaded = Classifier.load(tmp_path / "c.model")
    assert loaded.feature_set.clusters == CLUSTERS
    texts = ["the dog", "a cat", "cat"]
    np.testing.assert_array_equal(loaded.decision_function(texts), classifier.decision_function(texts))


def test_clusters_command_builds_a_paths_file(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("the cat sleeps .\nthe dog sleeps .\na cat runs .\na dog runs .\n" * 5)
    code, out, err = run(capsys, "clusters", text, "--output", tmp_path / "c.txt", "--depth", "4")
    assert code == 0, err
    assert "4 sentences" not in out and "20 sentences, 80 tokens" in out
    clusters = WordClusters.read(tmp_path / "c.txt")
    assert clusters.lowercase and set(clusters.paths) == {"the", "a", "cat", "dog", "sleeps", "runs", "."}
    assert all(1 <= len(p) <= 4 for p in clusters.paths.values())
    again = tmp_path / "again.txt"
    run(capsys, "clusters", text, "--output", again, "--depth", "4")
    assert again.read_bytes() == (tmp_path / "c.txt").read_bytes()  # the same seed, the same file


def test_clusters_command_refuses_bad_input_in_one_line(tmp_path, capsys):
    text = tmp_path / "text.txt"
    text.write_text("one line only\n")
    code, _, err = run(capsys, "clusters", text, "--output", text)
    assert code == 2 and "is also the source" in err and text.read_text() == "one line only\n"
    code, _, err = run(capsys, "clusters", text, "--output", tmp_path / "c.txt", "--min-count", "2")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "min_count" in err
    code, _, err = run(capsys, "clusters", tmp_path / "missing.txt", "--output", tmp_path / "c.txt")
    assert code == 1 and "missing.txt" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c.txt").exists()
