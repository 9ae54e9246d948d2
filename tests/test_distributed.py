"""Training on a Dask cluster (structlin.distributed): shards, the max-ent objective summed over shards (exact),
iterative parameter mixing of the perceptron family (close to serial, reproducible, surviving a lost worker), the
command line's --workers and --scheduler (against a scheduler and workers started with Dask's own commands), and
the refusals.  One local cluster of two worker processes serves the module; skipped without Dask."""

from __future__ import annotations

import http.server
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import structlin.distributed
import structlin.featurecache
from structlin import Classifier, Tagger
from structlin.distributed import DASK_NEEDED, ShardedRun, read_shard, shard_instances, write_shard
from structlin.errors import OptionValueError
from structlin.learners import AveragedPerceptron, MaxEnt, Perceptron, make_learner
from structlin.joint import SparseWeights
from structlin.decoders import Viterbi
from structlin.distributed import Shard
from structlin.joint import JointFeatureMap
from structlin.learners.maxent import _shard_objective
from structlin.learners.svm import SVM, BlockWeights, StructuredHinge, _shard_pegasos_epoch, bcfw_pass
from structlin.learners.run_weights import PAIRS_ABOVE_LABELS
from structlin.matrix import FeatureMatrix
from structlin.readers import read_conllu
from cli_run import run

dask_distributed = pytest.importorskip("dask.distributed", reason="Dask is not installed: pip install 'structlin[dask]'")


@pytest.fixture(scope="module")
def client():
    with dask_distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            dask_distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def ewt(ewt_dir):
    """The first 3,000 training and 1,000 dev sentences of UD English EWT."""
    return (list(itertools.islice(read_conllu(ewt_dir / "en_ewt-ud-train.conllu"), 3000)),
            list(itertools.islice(read_conllu(ewt_dir / "en_ewt-ud-dev.conllu"), 1000)))


def corpus(lengths, seed=0) -> FeatureMatrix:
    """A random feature matrix with instances of ``lengths`` positions, three features a position."""
    rng = np.random.default_rng(seed)
    positions = int(np.sum(lengths))
    return FeatureMatrix(np.arange(0, 3 * positions + 1, 3), rng.integers(0, 50, 3 * positions),
                         rng.normal(size=3 * positions), lengths, words=rng.integers(0, 2**63, positions, dtype=np.uint64))


# --- shards (no cluster) ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lengths, n_shards", [([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], 3), ([100, 1, 1, 1], 3),
                                               ([2, 2], 2), ([1, 0, 0, 7], 4), ([5, 4], 1)])
def test_shards_cover_the_instances_once_in_balanced_nonempty_parts(lengths, n_shards):
    X = corpus(lengths)
    shards = shard_instances(X, n_shards, seed=7)
    assert len(shards) == n_shards and all(len(s) for s in shards)
    assert sorted(np.concatenate(shards).tolist()) == list(range(len(lengths)))
    assert all((np.diff(s) > 0).all() for s in shards)  # corpus order within a shard
    if lengths == [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]:
        positions = [int(X.lengths[s].sum()) for s in shards]
        assert max(positions) - min(positions) <= max(lengths)
    again = shard_instances(X, n_shards, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(shards, again))


def test_shards_are_seeded_and_refuse_more_shards_than_instances():
    X = corpus([2] * 40)
    assert any(not np.array_equal(a, b) for a, b in zip(shard_instances(X, 2, 0), shard_instances(X, 2, 1)))
    with pytest.raises(ValueError, match="n_shards"):
        shard_instances(corpus([1, 2]), 3, 0)


def test_a_shard_file_holds_arrays_without_pickle(tmp_path):
    X, y = corpus([2, 3, 1]), np.array([0, 1, 2, 1, 0, 2])
    write_shard(tmp_path / "s.npz", X, y)
    with np.load(tmp_path / "s.npz", allow_pickle=False) as arrays:
        assert set(arrays.files) == {"indptr", "indices", "values", "lengths", "labels", "words"}
    Z, z = read_shard(tmp_path / "s.npz")
    for name in ("indptr", "indices", "values", "lengths", "words"):
        np.testing.assert_array_equal(getattr(Z, name), getattr(X, name))
    np.testing.assert_array_equal(z, y)


# --- max-ent: the objective summed over shards ----------------------------------------------------------


@pytest.mark.parametrize("tag_dictionary", [None, 1])
def test_the_sharded_maxent_objective_equals_the_serial_one(client, ewt, tag_dictionary):
    tagger = Tagger("pos-basic", "maxent", bits=16, tag_dictionary=tag_dictionary)
    X, y = tagger.training_data(ewt[0][:400])
    learner, joint, decoder = MaxEnt(relative_l2=0.01), tagger.joint, tagger.decoder
    w = np.random.default_rng(0).normal(scale=0.1, size=joint.size)
    serial = learner.objective(joint, decoder, X, y)(w)
    with ShardedRun(client, joint, decoder, X, y, seed=0, prepare=_shard_objective) as shards:
        assert len(shards.sizes) == 2 and sum(shards.sizes) == X.n_instances
        sharded = learner.objective(joint, decoder, X, y, shards=shards)(w)
        directory = shards.directory
        # the shards, and the map's columns beside them (not sent through the scheduler)
        assert sorted(p.name for p in directory.iterdir()) == ["columns.npy", "shard-0.npz", "shard-1.npz"]
    assert not directory.exists()  # the run's files are removed with it
    assert sharded[0] == pytest.approx(serial[0], rel=1e-12)
    np.testing.assert_allclose(sharded[1], serial[1], rtol=1e-9, atol=1e-9)


def test_a_crf_trained_on_the_cluster_is_the_serial_one(client, ewt):
    train, dev = ewt[0][:300], ewt[1][:100]
    models = [Tagger("pos-basic", "maxent", bits=16, epochs=15, relative_l2=0.01, progress=False, client=c).fit(train, dev)
              for c in (None, client)]
    np.testing.assert_allclose(models[1].weights_, models[0].weights_, rtol=1e-6, atol=1e-8)
    assert [r["objective"] for r in models[1].history_] == pytest.approx([r["objective"] for r in models[0].history_])


def test_a_corpus_on_disk_is_read_by_the_workers_from_its_cache(client, ewt, tmp_path, monkeypatch):
    """``stream`` with a client: the workers read groups of the feature cache's shards (no shard file is written);
    the CRF is the serial one up to rounding, and mixing repeats itself."""
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    monkeypatch.setattr(structlin.featurecache, "SHARD_POSITIONS", 700)  # several shards for each worker
    train, dev = ewt[0][:300], ewt[1][:100]
    crfs = [Tagger("pos-basic", "maxent", bits=16, epochs=10, relative_l2=0.01, progress=False, stream=True,
                   client=c).fit(train, dev) for c in (None, client)]
    np.testing.assert_allclose(crfs[1].weights_, crfs[0].weights_, rtol=1e-6, atol=1e-8)
    mixed = [Tagger(bits=16, epochs=3, progress=False, stream=True, client=client).fit(train, dev) for _ in range(2)]
    np.testing.assert_array_equal(mixed[0].weights_, mixed[1].weights_)
    assert mixed[0].accuracy(dev) > 0.85
    assert [p.name for p in tmp_path.iterdir()] == ["features"]  # the cache, and no shard folder beside it


def test_a_streamed_classifier_is_read_by_the_workers_as_values(client, nltk_data_dir, tmp_path, monkeypatch):
    """``stream`` with a client for documents: the cache holds counts, and each worker makes them the tf-idf values
    the client would (the extractor travels with the shard's task): logistic regression is the serial one up to
    rounding."""
    from structlin.catalog import load_documents

    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    monkeypatch.setattr(structlin.featurecache, "SHARD_POSITIONS", 300)  # several shards for each worker
    documents = load_documents("qc", "train")[:1200]
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    models = [Classifier(learner="maxent", epochs=10, relative_l2=0.01, progress=False, stream=True, client=c)
              .fit(texts, labels) for c in (None, client)]
    np.testing.assert_allclose(models[1].weights_, models[0].weights_, rtol=1e-6, atol=1e-8)


# --- the perceptron family: iterative parameter mixing ---------------------------------------------------


def test_parameter_mixing_tags_about_as_well_as_serial_and_repeats_itself(client, ewt):
    train, dev = ewt
    serial = Tagger(bits=18, epochs=5, progress=False).fit(train)
    mixed = [Tagger(learner="averaged-perceptron", bits=18, epochs=5, progress=False, client=client).fit(train)
             for _ in range(2)]
    np.testing.assert_array_equal(mixed[0].weights_, mixed[1].weights_)  # same seed, same workers: same model
    # mixing converges in more epochs than a serial run (docs/architecture.md): 0.7 points below at 5 epochs
    assert mixed[0].accuracy(dev) >= serial.accuracy(dev) - 0.015
    assert mixed[0].history_[-1]["train_mistakes"] > 0
    # the margin relative to the features' scale, divided by the number of shards whose updates mixing averages
    assert mixed[0].learner.chosen_["margin"] == pytest.approx(serial.learner.chosen_["margin"] / 2)


@pytest.mark.parametrize("learner, epochs", [("perceptron", 5), ("passive-aggressive", 5), ("mira", 5),
                                            ("maxent", 20), ("svm", 10)])
def test_every_learner_that_distributes_classifies_questions(client, nltk_data_dir, learner, epochs):
    from structlin.catalog import load_documents

    train, test = load_documents("qc", "train"), load_documents("qc", "test")
    models = [Classifier(learner=learner, epochs=epochs, progress=False, client=c).fit([d.text for d in train],
                                                                                      [d.label for d in train])
              for c in (None, client)]
    scores = [model.score([d.text for d in test], [d.label for d in test]) for model in models]
    assert abs(scores[1] - scores[0]) <= 0.025, scores  # 2.5 points: 12 of the 500 test questions
    if learner == "maxent":  # logistic regression: the same objective, the same model up to rounding
        np.testing.assert_allclose(models[1].weights_, models[0].weights_, rtol=1e-6, atol=1e-8)


def test_the_mixture_and_its_average_over_every_visit_of_every_shard(client):
    """Mixing recomputed here, one visit at a time: each epoch every shard goes through its instances from the
    mixed weights, the mixture weighs the shards by their instances, and the averaged hypothesis is the mean of
    the weights after every visit of every shard; a serial partial_fit then goes on from the mixed state."""
    documents = ["a b", "c d e", "a c", "b d", "e a", "c c b", "d"] * 3
    labels = ["x", "y", "x", "y", "z", "x", "z"] * 3
    options = dict(epochs=3, margin=0.5, shuffle=False, batch_size=1, seed=3)
    model = Classifier("text-words", AveragedPerceptron(**options), progress=False, client=client)
    model.fit(documents, labels)

    X, y = Classifier("text-words").training_data(documents, labels)
    joint, decoder = model.joint, model.decoder
    w, visited = np.zeros(joint.size), []
    shards = shard_instances(X, 2, options["seed"])
    for _ in range(options["epochs"]):
        ends = []
        for shard in shards:
            learner = Perceptron(margin=0.5)
            learner.start(joint, weights=w)
            learner.margin_ = 0.5
            for i in shard:
                learner._epoch(decoder, X.take([i]), y[X.positions([i])], _NoBar())
                visited.append(np.asarray(learner._state.current()))
            ends.append(np.asarray(learner._state.current()))
        w = sum(len(shard) / X.n_instances * end for shard, end in zip(shards, ends))
    np.testing.assert_allclose(np.asarray(model.learner._state.current()), w, atol=1e-12)
    np.testing.assert_allclose(model.weights_, np.mean(visited, axis=0), atol=1e-9)
    model.partial_fit(documents, labels)  # goes on from the mixed state, here
    assert model.learner._visits == 4 * len(documents) and len(model.history_) == 4


class _NoBar:
    def update(self, n):
        pass


def test_a_worker_lost_mid_run_costs_nothing(client, ewt):
    train = ewt[0][:600]
    # 8 epochs: the run goes on while the lost worker's nanny restarts it (a broadcast to it used to hang)
    undisturbed = Tagger("pos-basic", bits=16, epochs=8, progress=False, client=client).fit(train)
    victim = next(iter(client.run(os.getpid).values()))  # one worker's process

    def kill_a_worker(record, learner):
        if record["step"] == 1:
            os.kill(victim, signal.SIGKILL)

    try:
        survived = Tagger("pos-basic", bits=16, epochs=8, progress=False, client=client,
                          callback=kill_a_worker).fit(train)
        np.testing.assert_array_equal(survived.weights_, undisturbed.weights_)
    finally:
        client.wait_for_workers(2, timeout=60)  # its nanny restarts it


# --- Pegasos: iterative parameter mixing ------------------------------------------------------------------


def test_pegasos_mixes_the_shards_epochs_and_sums_the_objective(client, ewt):
    """The SVM's Pegasos on the cluster: the history's P(w) is the serial objective of the weights it records
    (summed over the shards), the run repeats itself, and it tags about as well as a serial run."""
    train, dev = ewt[0][:1500], ewt[1][:500]
    options = {"learner": "svm", "solver": "pegasos", "bits": 18, "epochs": 4,
               "progress": False}
    serial = Tagger(**options).fit(train, dev)
    mixed = [Tagger(**options, client=client).fit(train, dev) for _ in range(2)]
    np.testing.assert_array_equal(mixed[0].weights_, mixed[1].weights_)
    X, y = Tagger(**options).training_data(train)
    objective = StructuredHinge(mixed[0].joint, mixed[0].decoder, X, y, C=mixed[0].learner.chosen_["C"])
    kept = mixed[0].history_[mixed[0].learner.best_epoch_ - 1]
    assert objective(mixed[0].weights_)[0] == pytest.approx(kept["objective"], rel=1e-9)
    assert [r["objective"] for r in mixed[0].history_] != [r["objective"] for r in serial.history_]
    assert mixed[0].accuracy(dev) >= serial.accuracy(dev) - 0.01, (mixed[0].accuracy(dev), serial.accuracy(dev))


def test_a_shards_pegasos_epoch_goes_on_from_the_mixed_weights_and_step_count():
    """A shard holding the whole corpus in one mini-batch: its epoch from the weights after step 1 is the serial
    run's step 2 (η = 1/(λ·2), λ of the whole corpus), whatever the order of the batch's instances."""
    X = corpus([3, 2, 4, 1, 3] * 4)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(50), transitions=True)
    y = np.random.default_rng(1).integers(0, 3, X.n_positions)
    options = {"solver": "pegasos", "C": 0.5, "averaging": False, "batch_size": X.n_instances, "seed": 4,
               "progress": False}
    one, two = (SVM(epochs=epochs, **options).fit(joint, Viterbi(), joint.index(X), y) for epochs in (1, 2))
    shard = Shard(0, joint, Viterbi(), joint.index(X), y)
    w, average, steps = _shard_pegasos_epoch(shard, one.weights_, 1, 1, one.params(), 0.5, X.n_instances)
    assert steps == 1 and np.array_equal(average, w)
    np.testing.assert_allclose(w, two.weights_, rtol=1e-12, atol=1e-15)
    assert not np.allclose(w, one.weights_)


# --- BCFW: the shards' passes averaged ----------------------------------------------------------------------


def test_bcfw_on_the_cluster_adds_the_shards_passes_over_their_own_blocks(client):
    """Two passes recomputed here: each shard runs BCFW over its blocks on its subproblem (σ' = 2 shards) from the
    pass's w, its order seeded by the seed, the pass and the shard, and the pass adds the shards' changes of w and
    ℓ; the blocks a shard leaves are where the next pass starts from."""
    X = corpus([3, 2, 4, 1, 3, 2, 5, 1] * 3)
    joint = JointFeatureMap(["a", "b", "c"], np.arange(50), transitions=True)
    X, y = joint.index(X), np.random.default_rng(1).integers(0, 3, X.n_positions)
    options = {"C": 0.5, "seed": 4, "progress": False}
    mixed = SVM(epochs=2, client=client, **options).fit(joint, Viterbi(), X, y)

    n, w, total_loss, dual = X.n_instances, np.zeros(joint.size), 0.0, []
    parts = shard_instances(X, 2, options["seed"])
    objectives = [StructuredHinge(joint, Viterbi(), X.take(part), y[X.positions(part)], C=0.5, instances=n)
                  for part in parts]
    blocks = [BlockWeights(joint, objective.X) for objective in objectives]
    losses = [np.zeros(objective.n) for objective in objectives]
    for number in range(2):
        changes = []
        for k, objective in enumerate(objectives):
            view, before = w.copy(), float(losses[k].sum())
            after, _ = bcfw_pass(objective, blocks[k], view, losses[k], before,
                                 np.random.default_rng([options["seed"], number, k]).permutation(objective.n), sigma=2)
            changes.append(((view - w) / 2, after - before))
        for delta, change in changes:
            w, total_loss = w + delta, total_loss + change
        dual.append(total_loss - 0.5 * objectives[0].lam * float(w @ w))
    np.testing.assert_allclose(mixed.weights_, w, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose([r["dual_objective"] for r in mixed.history_], dual, rtol=1e-10)
    assert dual[1] > dual[0] > 0
    summed = np.zeros(joint.size)  # w = Σ_i w_i over every shard's blocks
    for b in blocks:
        for keys, values in zip(b.keys, b.values):
            summed[keys] += values
    np.testing.assert_allclose(summed, w, atol=1e-12)
    assert not np.allclose(w, 0)


def test_bcfw_on_the_cluster_never_lowers_the_dual_and_tags_about_as_well_as_serial(client, ewt):
    train, dev = ewt[0][:1500], ewt[1][:500]
    options = {"learner": "svm", "bits": 18, "epochs": 5, "progress": False}
    serial = Tagger(**options).fit(train, dev)
    mixed = [Tagger(**options, client=client).fit(train, dev) for _ in range(2)]
    np.testing.assert_array_equal(mixed[0].weights_, mixed[1].weights_)
    history = mixed[0].history_
    duals = [r["dual_objective"] for r in history]
    assert all(b >= a - 1e-12 * abs(a) for a, b in zip(duals, duals[1:])), duals
    X, y = Tagger(**options).training_data(train)
    objective = StructuredHinge(mixed[0].joint, mixed[0].decoder, X, y, C=mixed[0].learner.chosen_["C"])
    kept = history[mixed[0].learner.best_epoch_ - 1]
    assert objective(mixed[0].weights_)[0] == pytest.approx(kept["primal_objective"], rel=1e-9)
    assert all(r["duality_gap"] > 0 for r in history)
    assert mixed[0].accuracy(dev) >= serial.accuracy(dev) - 0.01, (mixed[0].accuracy(dev), serial.accuracy(dev))


def test_bcfw_survives_a_lost_worker_from_its_blocks_on_disk(client, ewt):
    train = ewt[0][:400]
    options = {"learner": "svm", "bits": 16, "epochs": 5, "progress": False, "client": client}
    undisturbed = Tagger("pos-basic", **options).fit(train)
    victim = next(iter(client.run(os.getpid).values()))

    def kill_a_worker(record, learner):
        if record["step"] == 2:
            os.kill(victim, signal.SIGKILL)

    try:
        survived = Tagger("pos-basic", callback=kill_a_worker, **options).fit(train)
        np.testing.assert_array_equal(survived.weights_, undisturbed.weights_)
        assert len(survived.history_) == 5
    finally:
        client.wait_for_workers(2, timeout=60)


# --- options and refusals ------------------------------------------------------------------------------


def test_the_client_is_a_run_option_of_the_learners_that_distribute(client):
    tagger = Tagger(learner="averaged-perceptron", client=client)
    assert tagger.get_params()["client"] is client and tagger.learner.client is client
    assert "client" not in tagger.learner.params()  # never written to a model file
    with pytest.raises(OptionValueError, match="client must be a dask.distributed.Client"):
        AveragedPerceptron(client="tcp://127.0.0.1:8786")


@pytest.mark.parametrize("learner, options, message", [
    ("voted-perceptron", {}, "has no option client"),
    ("averaged-perceptron", {"delta": 1.0}, "Δ trick"),
    ("maxent", {"solver": "sgd"}, "lbfgs solver only"),
])
def test_what_does_not_distribute_is_refused(client, learner, options, message):
    with pytest.raises(OptionValueError, match=message):
        make_learner(learner, client=client, **options)
    with pytest.raises(OptionValueError, match=message):
        Classifier(learner=learner, client=client, **options).fit(["a", "b"], ["x", "y"])


# --- the command line -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(ewt, tmp_path_factory):
    """Small train and dev files of EWT sentences (word<TAB>tag lines)."""
    root = tmp_path_factory.mktemp("distributed")
    for name, sentences in (("train.txt", ewt[0][:300]), ("dev.txt", ewt[1][:100])):
        (root / name).write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(s.words, s.tags)) + "\n"
                                         for s in sentences), "utf-8")
    return root


def test_train_with_local_workers(files, capsys):
    code, out, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--dev", files / "dev.txt",
                         "--features", "pos-basic", "--epochs", "3", "--workers", "2", "--output", files / "w.model")
    assert code == 0, err
    assert out.startswith("training on 2 Dask workers (tcp://127.0.0.1:") and "epoch   3" in out
    code, out, _ = run(capsys, "evaluate", files / "w.model", "--test", files / "dev.txt", "--json")
    assert code == 0 and json.loads(out)["accuracy"] > 0.8


def test_local_workers_keep_the_allocators_adaptive_defaults(monkeypatch):
    """Dask's workers start with MALLOC_TRIM_THRESHOLD_ set (pages faulted in again at every evaluation); the local
    cluster of --workers starts them without it."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with structlin.distributed.dask_client(workers=2) as client:
        seen = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert list(seen.values()) == [None, None]
    with dask_distributed.LocalCluster(n_workers=1, processes=True, dashboard_address=":0") as cluster, \
            dask_distributed.Client(cluster) as plain:
        assert list(plain.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == ["65536"]


def test_train_with_local_workers_from_a_feature_cache(files, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTLIN_CACHE", str(tmp_path))
    code, out, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--dev", files / "dev.txt",
                         "--features", "pos-basic", "--epochs", "3", "--workers", "2", "--stream",
                         "--output", files / "s.model")
    assert code == 0, err
    assert out.startswith("training on 2 Dask workers") and "trained on 300 sentences" in out


def test_train_on_a_scheduler_and_workers_started_by_dask(files, capsys, tmp_path):
    dask = [sys.executable, "-m", "dask"]
    address_file = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [subprocess.Popen([*dask, "scheduler", "--scheduler-file", address_file, "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard"], **quiet)]
    try:
        address = _scheduler_address(address_file)
        processes += [subprocess.Popen([*dask, "worker", "--scheduler-file", address_file, "--nworkers", "1",
                                        "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"], **quiet)
                      for _ in range(2)]
        with dask_distributed.Client(address, timeout=30) as watcher:
            watcher.wait_for_workers(2, timeout=60)
        code, out, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--dev", files / "dev.txt",
                             "--features", "pos-basic", "--epochs", "2", "--learner", "maxent", "--scheduler", address,
                             "--output", tmp_path / "s.model")
        assert code == 0, err
        assert out.startswith(f"training on 2 Dask workers ({address})") and (tmp_path / "s.model").is_file()
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _scheduler_address(path: Path) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.is_file() and path.stat().st_size:
            return json.loads(path.read_text())["address"]
        time.sleep(0.1)
    raise AssertionError("the Dask scheduler wrote no scheduler file in 60 s")


@pytest.mark.parametrize("argv, status, message", [
    (["--learner", "winnow", "--workers", "2"], 2, "learner 'winnow' does not train on a Dask cluster (--workers, "
                                                   "--scheduler); those that do: perceptron, averaged-perceptron, "
                                                   "passive-aggressive, mira, maxent, svm"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], 2, "not allowed with argument"),
    (["--scheduler", "nonsense"], 1, "cannot connect to a Dask scheduler at nonsense: missing port number"),
    (["--workers", "0"], 2, "expected an integer of at least 1"),
])
def test_cluster_options_refused_in_one_line(files, capsys, argv, status, message):
    code, out, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--output", files / "x.model", *argv)
    assert code == status and message in err and len(err.strip().splitlines()) == 1, err


def test_an_address_that_is_no_schedulers_is_refused_in_one_line(files, capsys, monkeypatch):
    """A web server (a dashboard's, on the port beside the scheduler's) never answers as a scheduler."""
    monkeypatch.setattr(structlin.distributed, "CONNECT_TIMEOUT", 1)
    server = http.server.HTTPServer(("127.0.0.1", 0), _QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        code, _, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--output", files / "x.model",
                           "--scheduler", f"tcp://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
    assert code == 1 and err.strip().endswith("no answer in 1 s") and len(err.strip().splitlines()) == 1, err


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_without_dask_the_cluster_options_say_how_to_install_it(files, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import dask.distributed raises ImportError
    code, _, err = run(capsys, "train", "tagger", "--train", files / "train.txt", "--output", files / "x.model",
                       "--workers", "2")
    assert code == 2 and err.strip() == f"structlin: error: {DASK_NEEDED}"


def test_mixing_the_touched_pairs_trains_the_full_vectors_model(client, monkeypatch):
    """Parameter mixing of runs that keep only their touched pairs (as with many labels; forced here): the
    shards' sparse weights are mixed on the union of their pairs, to the model of full vectors."""
    from structlin.learners import run_weights

    documents = ["a b", "c d e", "a c", "b d", "e a", "c c b", "d"] * 3
    labels = ["x", "y", "x", "y", "z", "x", "z"] * 3
    options = dict(epochs=3, margin=0.5, seed=3)
    dense = Classifier("text-words", AveragedPerceptron(**options), progress=False, client=client)
    dense.fit(documents, labels)
    monkeypatch.setattr(run_weights, "PAIRS_ABOVE_LABELS", 0)
    client.run(_keep_pairs_above, 0)  # on the workers too
    try:
        sparse = Classifier("text-words", AveragedPerceptron(**options), progress=False, client=client)
        sparse.fit(documents, labels)
    finally:
        client.run(_keep_pairs_above, PAIRS_ABOVE_LABELS)
    assert isinstance(sparse.weights_, SparseWeights)
    np.testing.assert_allclose(np.asarray(sparse.weights_), dense.weights_, atol=1e-12)


def _keep_pairs_above(labels: int) -> None:
    """On a worker: keep only the touched pairs above ``labels`` labels."""
    from structlin.learners import run_weights

    run_weights.PAIRS_ABOVE_LABELS = labels
