"""Models that compose a feature set, the joint feature map, a decoder and a learner.

:class:`Tagger` labels every token of a sentence (part-of-speech tags, chunks, entities);
:class:`Classifier` gives one label to a document, a question, a name or a tuple.  It is an
NLTK ``TaggerI`` (``tag``, ``tag_sents``, ``evaluate``/``accuracy``) and follows scikit-learn's verbs
(``fit``, ``partial_fit``, ``predict``, ``classes_``) without depending on scikit-learn.  Both are one
model core (``_Model``): what differs is the task, i.e. how inputs become features and labels.
"""

from __future__ import annotations

import functools
import gc
import reprlib
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
from nltk.classify.api import ClassifierI
from nltk.probability import DictionaryProbDist
from nltk.tag.api import TaggerI

from . import __version__
from .catalog import Catalog
from .decoders import Decoder, Multiclass, decode_batches, length_batches, make_decoder
from .doctemplates import DocumentFeatureExtractor
from .errors import CorpusFormatError, ModelFormatError, StructlinError, UnknownNameError, UnseenLabelWarning
from .evaluation import ClassificationReport, TaggingReport, evaluate_classification, evaluate_tagging
from .hashing import FeatureHasher
from .joint import JointFeatureMap, Scores
from .learners import LEARNERS, Learner, make_learner
from .learners.training import UNITS, hold_out_instances
from .matrix import FeatureMatrix
from .modelfile import ArraySpec, check_arrays, load_model, save_model
from .readers import CONLLU_COLUMNS, Sentence
from .templates import FeatureSet, TokenFeatureExtractor


def _not_text(value, expected: str):
    """``value``, unless it is a bare string where ``expected`` (a sequence of tokens, sentences or documents)
    is wanted: iterating it would give one character at a time, so it raises ``TypeError``."""
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:27] + "..."
        raise TypeError(f"expected {expected}, got the string {shown!r}")
    return value


def _tagged(sentences, what: str, fields: tuple[str, ...] = ("word",)) -> tuple[list[list], list[list[str]]]:
    """Tokens and tags of tagged sentences given as :class:`Sentence` objects or ``[(word, tag), ...]``.

    A feature set reading more input columns than the word (``fields``, e.g. ``("word", "pos")`` for
    chunking) takes every token as the tuple of those columns: from a :class:`Sentence`'s named
    columns, or given as ``[(word, pos, tag), ...]``.
    """
    width, tokens, tags = len(fields), [], []
    expected = "a word string" if width == 1 else f"{', '.join(fields)} strings"
    pairs = f"({', '.join(fields)}, tag) {'pairs' if width == 1 else 'tuples'}"
    for k, sentence in enumerate(_listed(sentences, what)):
        if isinstance(sentence, Sentence):
            if sentence.tags is None:
                raise CorpusFormatError(sentence.path or what, sentence.line, f"sentence {k + 1} has no tags")
            w, t = (list(sentence.words) if width == 1 else sentence.fields(fields)), list(sentence.tags)
        else:
            rows = (list(_not_text(sentence, f"sentence {k + 1} of the {what} as a sequence of {pairs}"))
                    if isinstance(sentence, Iterable) else None)
            if rows is None or not all(isinstance(p, (tuple, list)) and len(p) == width + 1 for p in rows):
                raise CorpusFormatError(what, None, f"sentence {k + 1}: expected {pairs}")
            w, t = [p[0] if width == 1 else tuple(p[:-1]) for p in rows], [p[-1] for p in rows]
        if len(w) != len(t):
            raise CorpusFormatError(what, None, f"sentence {k + 1}: {len(w)} words but {len(t)} tags")
        for i, (token, tag) in enumerate(zip(w, t)):
            strings = (token,) if width == 1 else token
            if not all(isinstance(f, str) for f in strings) or not isinstance(tag, str) or not tag:
                raise CorpusFormatError(what, None, f"sentence {k + 1}, token {i + 1}: expected {expected} and a "
                                                    f"non-empty tag string, got ({token!r}, {tag!r})")
        tokens.append(w)
        tags.append(t)
    return tokens, tags


def _listed(sentences, what: str) -> list:
    """The tagged sentences of ``what`` (training data ...) as a list; a bare string raises ``TypeError``."""
    return list(_not_text(sentences, f"{what} as a sequence of tagged sentences"))


def _input_columns(sentences: list) -> tuple[str, ...]:
    """The input columns of tagged sentences besides the word: the named columns of :class:`Sentence`
    objects (all alike) but the one their tags come from (equal to the tags at every token), or
    ``column1, ...`` for the middle fields of ``(word, ..., tag)`` tuples."""
    first = next(iter(sentences), None)
    if isinstance(first, Sentence):
        if not all(isinstance(s, Sentence) and s.column_names == first.column_names for s in sentences):
            return ()
        return tuple(name for k, name in enumerate(first.column_names or ())
                     if name != "word" and not _is_tag_column(sentences, k))
    widths = {len(token) for sentence in sentences for token in sentence if isinstance(token, (tuple, list))}
    return tuple(f"column{k}" for k in range(1, min(widths) - 1)) if widths else ()


def _is_tag_column(sentences: list[Sentence], index: int) -> bool:
    return all(sentence.tags is not None and [row[index] for row in sentence.columns] == list(sentence.tags)
               for sentence in sentences)


def _words(tokens: list[list]) -> list[list[str]]:
    """The word of every token (the first field of a tuple token)."""
    return [[t if isinstance(t, str) else t[0] for t in sentence] for sentence in tokens]


def _dev_label_ids(joint: JointFeatureMap, labels: list[str], what: str, caller_depth: int) -> np.ndarray:
    """Label ids of dev ``labels``; a label never seen in training becomes −1, an error at every dev
    evaluation, with an :class:`UnseenLabelWarning` naming such labels (attributed to the user's code,
    ``caller_depth`` frames above this function)."""
    ids = joint.encode_labels(labels, unknown=-1)
    unseen = ids < 0
    if unseen.any():
        names = sorted({label for label, missing in zip(labels, unseen) if missing})
        shown = ", ".join(map(repr, names[:5])) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        warnings.warn(f"dev data: {int(unseen.sum())} of {len(ids)} {what} have labels never seen in training "
                      f"({shown}); they count as errors", UnseenLabelWarning,
                      stacklevel=caller_depth + 1)
    return ids


@contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector while a corpus is turned into many small objects.

    Otherwise the allocations trigger full collections that traverse every object alive (a loaded
    training corpus holds millions), which can cost as much as the tagging itself (docs/benchmarks.md).
    The collector's previous state is restored afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _tokens(sentences, fields: tuple[str, ...] = ("word",)) -> list[list]:
    """Token lists of untagged input: :class:`Sentence` objects or sequences of tokens (checked by
    the feature extractor): strings, or tuples of the feature set's ``fields`` when it reads more
    columns than the word."""
    token = "token strings" if len(fields) == 1 else f"({', '.join(fields)}) tuples"
    out = []
    for k, s in enumerate(_not_text(sentences, f"a sequence of sentences, each a sequence of {token}")):
        if isinstance(s, Sentence):
            out.append(list(s.words) if len(fields) == 1 else s.fields(fields))
        else:
            expected = f"sentence {k + 1} as a sequence of {token} (split a text into tokens first)"
            out.append(list(_not_text(s, expected)))
    return out


def _learner(learner, settings: dict) -> Learner:
    """A learner named by ``learner`` with the model's ``settings`` that it declares (None: its default),
    or ``learner`` itself when it is an instance."""
    if not isinstance(learner, str):
        return learner
    if learner not in LEARNERS:
        raise UnknownNameError("learner", learner, LEARNERS)
    declared = {option.name for option in LEARNERS[learner].options}
    return make_learner(learner, **{key: value for key, value in settings.items() if key in declared})


def _upgraded_history(history: list[dict]) -> list[dict]:
    """History records of a model file, with the common fields ``step`` and ``unit`` that files written
    before them lack (their step is under ``epoch`` or ``iteration``)."""
    out = []
    for record in history:
        if "step" not in record:
            unit = next((u for u in UNITS if u in record), "epoch")
            record = {"step": record.get(unit), "unit": unit, **record}
        out.append(record)
    return out


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _records(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _scored(value) -> bool:
    """Records with a number ``dev_accuracy`` (the candidates a learner scored on dev)."""
    return _records(value) and all(type(v.get("dev_accuracy")) in (int, float) for v in value)


#: What every model file's metadata holds besides the header (see :meth:`_Model._metadata_specs`).
_METADATA = {
    "labels": (lambda v: _strings(v) and all(v) and 0 < len(v) == len(set(v)), "a list of distinct label strings"),
    "transitions": (lambda v: isinstance(v, bool), "true or false"),
    "features": (lambda v: isinstance(v, dict), "a feature set table"),
    "hash": (lambda v: isinstance(v, dict), "a feature hash table"),
    "decoder": (lambda v: isinstance(v, str), "a decoder name"),
    "learner": (lambda v: isinstance(v, dict) and isinstance(v.get("name"), str), "a learner table with its name"),
    "history": (_records, "a list of records"),
    "chosen": (lambda v: isinstance(v, dict), "a table"),
    "candidates": (_scored, "a list of records with a dev_accuracy"),
}
#: Metadata that files written before it was kept lack.
_OPTIONAL_METADATA = ("chosen", "candidates")

#: The weight rows' hashed buckets, and the weights of a learner that keeps a weight vector.
_COLUMNS = ArraySpec("iu", ("rows",), below="buckets", increasing=True)
_WEIGHT_ARRAYS = {"emission": ArraySpec("f", ("rows", "labels")), "transition": ArraySpec("f", ("tail",))}


@functools.cache
def _tag_columns() -> tuple[str, ...]:
    """The tag columns a tagger file may record (:attr:`Tagger.column`): CoNLL-U's, ``universal`` (NLTK's
    tags mapped) and those of the catalog's column corpora."""
    catalog = {c for e in Catalog.load().entries.values() if e.nltk and e.nltk.columns for c in e.nltk.columns}
    return tuple(sorted({*CONLLU_COLUMNS, "universal", *catalog} - {"word"}))


class _Model:
    """What every model shares: a feature set and its extractor, the joint feature map, a decoder, a
    learner and what it trained; fit, partial_fit and prediction through the decoder; persistence as
    arrays + JSON (no pickle; rows of all-zero weights are dropped).

    A subclass is the task: how its inputs become feature matrices (``_extractor``, one position per
    document or per token) and labels, and what the task adds to a model file.  ``_item`` names what
    carries a label (``token``, ``document``), ``_instance`` an input (``sentence``, ``document``)."""

    kind = ""
    _item = ""
    _instance = ""

    def __init__(self, features, learner, decoder, *, bits: int, hash_seed: int, held_out: float | None = None,
                 **settings):
        if held_out is not None and not 0 < held_out < 1:
            raise StructlinError(f"held_out must be a fraction between 0 and 1, got {held_out}")
        self.features, self.held_out = features, held_out
        self.decoder: Decoder = make_decoder(decoder) if isinstance(decoder, str) else decoder
        self.learner = _learner(learner, settings)
        self.hasher = FeatureHasher(bits, hash_seed)
        self.feature_set: FeatureSet | None = None
        if features is not None:
            self._use_features(features if isinstance(features, FeatureSet) else FeatureSet.load(features))
        self.joint: JointFeatureMap | None = None

    def _use_features(self, feature_set: FeatureSet) -> None:
        self.feature_set = feature_set
        self._extractor = self._make_extractor()

    def _choose_features(self, training) -> None:
        """With ``features=None``, use the feature set the training data calls for (:meth:`_default_features`):
        chosen by every fit, and by the first partial_fit."""
        if self.features is None:
            self._use_features(self._default_features(training))

    def _check_fitted(self) -> None:
        if self.joint is None:
            raise StructlinError(f"this {self.kind} is not trained yet: call fit() or {type(self).__name__}.load()")

    @property
    def classes_(self) -> list[str]:
        self._check_fitted()
        return list(self.joint.labels)

    def _features(self, instances: list, what: str, first: int = 0) -> FeatureMatrix:
        """The feature matrix of ``instances`` (of ``what``: training data, input ...; the first is number
        ``first``), checked by :meth:`_finite`."""
        return self._finite(self._extractor.extract(instances), what, first)

    def _finite(self, X: FeatureMatrix, what: str, first: int = 0) -> FeatureMatrix:
        """``X``, unless a feature value is NaN or infinite (it would make every score it touches NaN):
        then :class:`CorpusFormatError` names the instance."""
        bad = np.flatnonzero(~np.isfinite(X.values))
        if len(bad):
            position = np.searchsorted(X.indptr, bad[0], side="right") - 1
            instance = first + int(np.searchsorted(X.offsets, position, side="right"))
            raise CorpusFormatError(what, None, f"{self._instance} {instance} has a NaN or infinite feature value "
                                                "(or one too large for a 32-bit float)")
        return X

    # --- training -------------------------------------------------------------------------------

    def _bias_row(self) -> int | None:
        """The weight row of the feature set's bias feature, which every position has (None without one),
        for a learner that keeps a per-label constant there (naive Bayes's log P(y))."""
        bucket = self._extractor.bias_bucket()
        rows = np.flatnonzero(self.joint.columns == bucket) if bucket is not None else []
        return int(rows[0]) if len(rows) else None

    def _indexed(self, X: FeatureMatrix, labels: list[str], classes: list[str]) -> tuple[FeatureMatrix, np.ndarray]:
        """Set :attr:`joint`, the map of ``classes`` (the label order) and of the buckets of ``X`` (the training
        instances' hashed features); return ``X`` indexed by it and the ids of ``labels`` (one per position)."""
        self.joint = JointFeatureMap.from_training(classes, X, transitions=self.decoder.uses_transitions)
        return self.joint.index(X), self.joint.encode_labels(labels)

    def _train(self, X: FeatureMatrix, labels: list[str], classes: list[str], dev=None) -> None:
        """Fit the learner on the training instances (see :meth:`_indexed`); ``dev = (X_dev, labels)``."""
        X, y = self._indexed(X, labels, classes)
        dev_data = None
        if dev is not None:
            dev_data = (self.joint.index(dev[0]), _dev_label_ids(self.joint, dev[1], f"{self._item}s", 3))
        elif self.held_out and "epochs" in self.learner.get_params():
            self._fit_held_out_epochs(X, y)
            return
        self.learner.fit(self.joint, self.decoder, X, y, dev_data, bias_row=self._bias_row())
        self.weights_, self.history_ = self.learner.weights_, self.learner.history_

    def _fit_held_out_epochs(self, X: FeatureMatrix, y: np.ndarray) -> None:
        """Without dev: choose the number of epochs (iterations) on a seeded ``held_out`` share of the training
        instances, training on the rest, then train on all of them for that many (scikit-learn's refit).
        Settings the learner chose on the held-out part (declared with an ``untuned`` value) are kept for the
        final fit.  ``chosen_`` gains ``epochs`` and ``candidates_`` every epoch's held-out accuracy."""
        learner, epochs = self.learner, self.learner.epochs
        seed = learner.get_params().get("seed") or 0
        rest, rest_y, held = hold_out_instances(X, y, self.held_out, seed)
        learner.fit(self.joint, self.decoder, rest, rest_y, held, bias_row=self._bias_row())
        best = max(learner.best_epoch_ or 1, 1)  # an iterative learner keeps at least one epoch
        candidates = [*learner.candidates_, *({"epochs": r["step"], "dev_accuracy": r["dev_accuracy"]}
                                              for r in learner.history_ if r["dev_accuracy"] is not None)]
        # the settings the learner chose on the held-out part too (declared with an untuned value, left at None)
        chosen = {option.name: learner.chosen_[option.name] for option in learner.options
                  if option.untuned is not None and option.name in learner.chosen_
                  and getattr(learner, option.name) is None}
        try:
            learner.set_params(epochs=best, **chosen)
            learner.fit(self.joint, self.decoder, X, y, None, bias_row=self._bias_row())
        finally:
            learner.set_params(epochs=epochs, **{name: None for name in chosen})
        learner.chosen_ = {**chosen, **learner.chosen_, "epochs": best}
        learner.candidates_ = candidates
        self.weights_, self.history_ = learner.weights_, learner.history_

    def _train_online(self, instances: list, labels: list[str], classes) -> None:
        """One epoch of an online learner over a batch, going on from the current model (see the
        subclasses' ``partial_fit``)."""
        if not self.learner.capabilities.online:
            online = [name for name, cls in LEARNERS.items() if cls.capabilities.online]
            raise TypeError(f"learner {self.learner.name!r} is not online; partial_fit needs an online learner "
                            f"({', '.join(online)})")
        first = self.joint is None
        if first:
            if classes is None:
                raise StructlinError("the first partial_fit call needs classes: every label the batches may hold")
            known = _label_set([str(c) for c in classes], "classes")
        else:
            known = self.joint.labels
            if classes is not None and {str(c) for c in classes} != set(known):
                raise StructlinError(f"classes {sorted({str(c) for c in classes})} differ from the model's "
                                     f"classes_ {known}")
        allowed = set(known)
        unknown = next((k for k, y in enumerate(labels) if y not in allowed), None)
        if unknown is not None:
            raise StructlinError(f"training data: {self._item} {unknown + 1} has label {labels[unknown]!r}, "
                                 f"which is not in classes_ {known}")
        X = self._training_features(instances, first=first)
        if first:
            joint = JointFeatureMap.from_training(known, X, transitions=self.decoder.uses_transitions)
            self.learner.start(joint)
        else:
            joint = self.joint.extended(X)
            if not self.learner.started:  # a loaded model
                self.learner.start(self.joint, self.weights_, self.history_)
        self.learner.partial_fit(joint, self.decoder, joint.index(X), joint.encode_labels(labels))
        self.joint, self.weights_, self.history_ = joint, self.learner.weights_, self.learner.history_

    # --- prediction -----------------------------------------------------------------------------

    def _scores(self, X: FeatureMatrix) -> Scores:
        """The scores of the indexed instances ``X``: from the weights, or from a learner that scores
        inputs itself (a kernel or voted perceptron)."""
        if self.learner.capabilities.scores_itself:
            return self.learner.scores(self.joint, X)
        return self.joint.scores(self.weights_, X)

    def _decode(self, X: FeatureMatrix) -> np.ndarray:
        """The label id of every position of the indexed instances ``X``."""
        return decode_batches(self.decoder, self._scores, X)

    def _distribution(self) -> Decoder:
        """The decoder whose marginals give ``p(y|x) = exp(w·φ(x, y) − log Z(x))`` (the exact one: the chain's
        forward–backward also for a greedy tagger, as in training); refuses learners whose scores are no
        probabilities."""
        if not self.learner.capabilities.probabilistic:
            probabilistic = [name for name, cls in LEARNERS.items() if cls.capabilities.probabilistic]
            raise StructlinError(f"learner {self.learner.name!r} gives no probabilities; train with one of "
                                 f"{', '.join(probabilistic)}")
        self._check_fitted()
        return self.decoder.exact

    # --- persistence ----------------------------------------------------------------------------

    def save(self, path) -> None:
        """Write the model to ``path`` (a zip of ``.npy`` arrays and ``metadata.json``)."""
        self._check_fitted()
        joint, w = self.joint, self.weights_
        if self.learner.capabilities.scores_itself:  # the learner's own arrays instead of weights
            try:
                arrays = {"columns": joint.columns, **self.learner.model_arrays(), **self._extra_arrays()}
            except ValueError as err:
                raise StructlinError(f"{path}: {err}") from None
        else:
            emission = joint.emission_weights(w)
            kept = np.flatnonzero(np.any(emission != 0, axis=1))
            arrays = {"columns": joint.columns[kept], "emission": emission[kept],
                      "transition": w[joint.transition_offset :], **self._extra_arrays()}
        metadata = {
            "kind": self.kind,
            "structlin_version": __version__,
            "labels": joint.labels,
            "transitions": joint.transitions,
            "features": self.feature_set.to_dict(),
            "hash": self.hasher.config(),
            "decoder": self.decoder.name,
            "learner": {"name": self.learner.name, **self.learner.params()},
            "history": self.history_,
            "chosen": self.learner.chosen_,
            "candidates": self.learner.candidates_,
            **self._extra_metadata(),
        }
        save_model(path, metadata, arrays)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`.  A damaged or tampered file raises :class:`ModelFormatError`
        naming it: one :func:`~structlin.modelfile.load_model` cannot read, metadata of the wrong types
        (:meth:`_metadata_specs`) or with settings no model takes, arrays that do not fit the model
        (:meth:`_array_specs`)."""
        meta, arrays = load_model(path, cls.kind)
        try:
            return cls._from_file(path, meta, arrays)
        except ModelFormatError:
            raise
        except StructlinError as err:  # a setting no model takes: a learner option, a decoder, a feature set
            raise ModelFormatError(f"{path}: {err}") from None
        except (KeyError, TypeError, ValueError) as err:
            raise ModelFormatError(f"{path}: metadata is incomplete or invalid ({err!r})") from None

    @classmethod
    def _from_file(cls, path, meta: dict, arrays: dict):
        """The model of a file's ``meta`` and ``arrays`` as :func:`~structlin.modelfile.load_model` reads them."""
        for key, (valid, expected) in cls._metadata_specs().items():
            if key not in meta and key not in _OPTIONAL_METADATA:
                raise ModelFormatError(f"{path}: metadata is incomplete or invalid: {key!r} is missing")
            if key in meta and not valid(meta[key]):
                raise ModelFormatError(f"{path}: metadata {key!r} must be {expected}, got {reprlib.repr(meta[key])}")
        try:
            FeatureHasher.from_config(meta["hash"])
        except ValueError as err:
            raise ModelFormatError(f"{path}: {err}") from None
        learner = meta["learner"]
        if learner["name"] not in LEARNERS:
            raise ModelFormatError(f"{path}: unknown learner {learner['name']!r}")
        params = {k: v for k, v in learner.items() if k != "name"}
        model = cls._construct(FeatureSet.from_dict(meta["features"], "feature set"),
                               make_learner(learner["name"], **params), meta)
        decoder = model.decoder
        if meta["decoder"] != decoder.name:
            raise ModelFormatError(f"{path}: decoder {meta['decoder']!r}; a {cls.kind} decodes with {decoder.name!r}")
        if meta["transitions"] != decoder.uses_transitions:
            raise ModelFormatError(f"{path}: transitions is {meta['transitions']}, but the {decoder.name} decoder "
                                   f"{'uses' if decoder.uses_transitions else 'has no'} label transitions")
        L = len(meta["labels"])
        check_arrays(path, arrays, model._array_specs(), {
            "labels": (L, "the metadata"), "tail": (L * L + 2 * L if meta["transitions"] else 0, "the labels"),
            "buckets": (1 << model.hasher.bits, "the hash bits")})
        joint = JointFeatureMap(meta["labels"], arrays["columns"], transitions=meta["transitions"])
        if model.learner.capabilities.scores_itself:
            try:
                model.learner.restore(arrays, joint)  # checks how the arrays fit each other and the joint map
            except ValueError as err:
                raise ModelFormatError(f"{path}: {err} (file was modified)") from None
            model.weights_ = model.learner.weights_
        else:
            model.weights_ = np.concatenate([arrays["emission"].ravel(), arrays["transition"]], dtype=np.float64)
        model.joint = joint
        model.history_ = _upgraded_history(meta["history"])
        model.learner.chosen_ = dict(meta.get("chosen", {}))
        model.learner.candidates_ = list(meta.get("candidates", []))
        model._restore(meta, arrays)
        return model

    @classmethod
    def _metadata_specs(cls) -> dict[str, tuple[Callable[[object], bool], str]]:
        """What a model file's metadata holds besides the header: ``{key: (test, what it must be)}``."""
        return _METADATA

    #: The arrays the task adds to a model file (:meth:`_extra_arrays`), as :meth:`_array_specs` checks them.
    _extra_array_specs: dict[str, ArraySpec] = {}

    def _array_specs(self) -> dict[str, ArraySpec]:
        """What a model file's arrays must be: the buckets of the weight rows, then the emission and
        transition weights or, for a learner that scores inputs itself, its ``array_specs``, then the
        task's :attr:`_extra_array_specs`."""
        learned = self.learner.array_specs if self.learner.capabilities.scores_itself else _WEIGHT_ARRAYS
        return {"columns": _COLUMNS, **learned, **self._extra_array_specs}

    def _extra_metadata(self) -> dict:
        return {}

    def _extra_arrays(self) -> dict:
        return {}

    def _restore(self, meta: dict, arrays: dict) -> None:
        """Set what the subclass saved in :meth:`_extra_metadata` / :meth:`_extra_arrays`."""


class Tagger(_Model, TaggerI):
    """A sequence labeller: ``ŷ = argmax_y w·φ(x, y)`` over hashed token features.

    ``features``: a feature-set name (``features/NAME.toml``), a TOML path or a :class:`FeatureSet`;
    ``learner``: a learner name or instance; ``decoder``: ``viterbi``, ``greedy`` (both use label
    transitions) or ``multiclass`` (each token on its own).  ``epochs``, ``seed``, ``batch_size``
    and ``patience`` go to a learner given by name (``epochs=None``: the learner's default, 10 perceptron
    epochs, at most 100 max-ent L-BFGS iterations or 10 SGD epochs: see
    :class:`~structlin.learners.maxent.MaxEnt`).  ``bits`` and ``hash_seed`` set the feature hash.
    ``held_out``: when :meth:`fit` gets no dev, choose the number of epochs on this seeded share of the
    training sentences and then train on all of them for that many (None: keep the last epoch).

    ``batch_size=4`` decodes four sentences with the same weights before applying their updates (in
    order, each counted at its own visit for averaging): the same dev accuracy as the one-at-a-time
    perceptron in less time (measured in docs/benchmarks.md); ``batch_size=1`` is the textbook online
    algorithm.

    Trained with ``learner="maxent"`` (a linear-chain CRF, or per-token softmax with ``multiclass``), it also
    gives probabilities: :meth:`tag_marginals` / :meth:`predict_marginals` per token, :meth:`sequence_probability`
    per tag sequence.
    """

    kind = "tagger"
    _item = "token"
    _instance = "sentence"

    def __init__(self, features=None, learner="averaged-perceptron", decoder="viterbi", *,
                 epochs: int | None = None, seed: int = 0, batch_size: int = 4, patience: int | None = None, bits: int = 22,
                 hash_seed: int = 0, held_out: float | None = None, progress: bool | None = None):
        super().__init__(features, learner, decoder, bits=bits, hash_seed=hash_seed, held_out=held_out, epochs=epochs,
                         seed=seed, batch_size=batch_size, patience=patience, progress=progress)
        if not self.learner.capabilities.sequences:
            taggers = [name for name, cls in LEARNERS.items() if cls.capabilities.sequences]
            raise StructlinError(f"learner {self.learner.name!r} labels single instances (documents), not the tokens "
                                 f"of sentences; a tagger takes one of {', '.join(taggers)}")
        self.column: str | None = None
        self.known_words_: set[str] = set()

    def _make_extractor(self) -> TokenFeatureExtractor:
        return TokenFeatureExtractor(self.feature_set, self.hasher)

    #: The feature set of ``features=None``, before the data's other input columns are added.
    default_features = "pos-rich"
    default_features_rule = f"{default_features}, plus windows of the data's other input columns (a POS column)"

    def _default_features(self, sentences) -> FeatureSet:
        """:attr:`default_features` plus the templates of every input column the training sentences carry
        besides the word and the tags (:meth:`FeatureSet.with_input_columns`): a column file's POS column
        for a chunker or a named-entity tagger."""
        return FeatureSet.load(self.default_features).with_input_columns(_input_columns(sentences))

    # --- training -------------------------------------------------------------------------------

    def fit(self, train, dev=None) -> Tagger:
        """Train on tagged sentences; with ``dev``, keep the epoch with the best dev accuracy."""
        with _collector_paused():
            train = _listed(train, "training data")
            self._choose_features(train)
            words, X, flat_tags = self._training_set(train)
            dev_data = None
            if dev is not None:
                dev_words, dev_tags = _tagged(dev, "dev data", self.feature_set.fields)
                dev_data = (self._features(dev_words, "dev data"), [t for s in dev_tags for t in s])
            self._train(X, flat_tags, sorted(set(flat_tags)), dev_data)
            self.known_words_ = {w for sentence in _words(words) for w in sentence}
        return self

    def partial_fit(self, sentences, classes=None) -> Tagger:
        """One epoch of an online learner over a batch of tagged sentences, going on from the current
        model: the tagger's form of :meth:`Classifier.partial_fit` (``classes``: every tag the batches
        may hold, needed by the first call)."""
        with _collector_paused():
            sentences = _listed(sentences, "training data")
            if self.joint is None:
                self._choose_features(sentences)
            words, tags = _tagged(sentences, "training data", self.feature_set.fields)
            self._train_online(words, [t for sentence in tags for t in sentence], classes)
            self.known_words_ |= {w for s in _words(words) for w in s}
        return self

    def training_data(self, train) -> tuple[FeatureMatrix, np.ndarray]:
        """What a learner trains on for tagged sentences ``train``: the indexed feature matrix and the gold
        label id of every token.  Sets :attr:`joint`, the map of their tags and features."""
        with _collector_paused():
            train = _listed(train, "training data")
            self._choose_features(train)
            _, X, flat_tags = self._training_set(train)
            return self._indexed(X, flat_tags, sorted(set(flat_tags)))

    def _training_set(self, train) -> tuple[list[list], FeatureMatrix, list[str]]:
        """The tokens of tagged sentences ``train``, their features and their tags (flat)."""
        words, tags = _tagged(train, "training data", self.feature_set.fields)
        return words, self._training_features(words), [t for sentence in tags for t in sentence]

    def _training_features(self, words: list[list], *, first: bool = True) -> FeatureMatrix:
        if not any(words):
            raise StructlinError("training data holds no tokens")
        return self._features(words, "training data")

    # --- prediction -----------------------------------------------------------------------------

    def predict(self, sentences) -> list[list[str]]:
        """The tag sequence of every sentence (a list of token strings, or a :class:`Sentence`)."""
        with _collector_paused():
            return self._predict(_tokens(sentences, self.feature_set.fields))

    def _predict(self, words: list[list[str]]) -> list[list[str]]:
        self._check_fitted()
        labels = self._decode(self.joint.index(self._features(words, "input")))
        names = np.array(self.joint.labels, dtype=object)[labels]
        bounds = np.cumsum([0] + [len(w) for w in words])
        return [list(names[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]

    def tag(self, tokens: Sequence[str]) -> list[tuple[str, str]]:
        """NLTK ``TaggerI.tag``: ``[(word, tag), ...]`` for one sentence."""
        return self.tag_sents([tokens])[0]

    def tag_sents(self, sentences: Iterable[Sequence[str]]) -> list[list[tuple[str, str]]]:
        """NLTK ``TaggerI.tag_sents``: tag many sentences in one batch (``(word, pos, tag)`` triples when
        the feature set reads a POS column too, as NLTK's chunkers give)."""
        with _collector_paused():
            tokens = _tokens(sentences, self.feature_set.fields)
            return [[(*w, t) if isinstance(w, tuple) else (w, t) for w, t in zip(words, tags)]
                    for words, tags in zip(tokens, self._predict(tokens))]

    # --- probabilities (maxent) ------------------------------------------------------------------

    def predict_marginals(self, sentences) -> list[np.ndarray]:
        """``P(y_i = tag | x)`` for every token of every sentence: one ``(tokens, labels)`` array per sentence,
        columns in ``classes_`` order, rows summing to 1.  Sentences are batched by length as in decoding."""
        inference = self._distribution()
        with _collector_paused():
            words = _tokens(sentences, self.feature_set.fields)
            X = self.joint.index(self._features(words, "input"))
        nodes = np.zeros((X.n_positions, self.joint.n_labels))
        for chosen in length_batches(X.lengths):
            # Summed edges: the per-edge marginals are not needed, and summed they cost only L × L.
            marginals = inference.marginals(self.joint.scores(self.weights_, X.take(chosen)), summed_edges=True)
            nodes[X.positions(chosen)] = marginals.nodes
        return [nodes[a:b] for a, b in zip(X.offsets[:-1], X.offsets[1:])]

    def tag_marginals(self, sentences) -> list[list[dict[str, float]]]:
        """:meth:`predict_marginals` as one ``{tag: P(y_i = tag | x)}`` dict per token."""
        marginals = self.predict_marginals(sentences)
        labels = self.classes_
        return [[dict(zip(labels, row)) for row in sentence.tolist()] for sentence in marginals]

    def sequence_log_probability(self, tokens, tags) -> float:
        """``log p(y|x) = w·φ(x, y) − log Z(x)`` of the whole tag sequence ``tags`` for one sentence, where
        ``w·φ(x, y)`` sums the emission scores of the tags, the transitions between consecutive tags and the
        start (first tag) and end (last tag) scores.  An empty sentence has the empty sequence, log p = 0."""
        inference = self._distribution()
        words, tags = _tokens([tokens], self.feature_set.fields)[0], list(tags)
        if len(words) != len(tags):
            raise StructlinError(f"{len(words)} tokens but {len(tags)} tags")
        unknown = next((t for t in tags if t not in self.joint.label_index), None)
        if unknown is not None:
            raise StructlinError(f"unknown tag {unknown!r}; the model's tags are {self.classes_}")
        y = self.joint.encode_labels(tags)
        scores = self.joint.scores(self.weights_, self.joint.index(self._features([words], "input")))
        return float(scores.score(y)[0] - inference.marginals(scores, summed_edges=True).log_partition[0])

    def sequence_probability(self, tokens, tags) -> float:
        """``p(y|x) = exp(w·φ(x, y) − log Z(x))``: see :meth:`sequence_log_probability`."""
        return float(np.exp(self.sequence_log_probability(tokens, tags)))

    # --- evaluation -----------------------------------------------------------------------------

    def report(self, gold, *, top_confusions: int = 10) -> TaggingReport:
        """Token, sentence and known/unknown-word accuracy, per-tag P/R/F1 and confusions on ``gold``."""
        tokens, tags = _tagged(gold, "gold data", self.feature_set.fields)
        return evaluate_tagging(tags, self._predict(tokens), words=_words(tokens), known_words=self.known_words_,
                                top_confusions=top_confusions)

    def accuracy(self, gold) -> float:
        """Token accuracy on tagged sentences (NLTK ``TaggerI.accuracy``)."""
        report = self.report(gold)
        return report.accuracy if report.accuracy is not None else 0.0

    evaluate = accuracy

    # --- persistence (see _Model) --------------------------------------------------------------

    def _extra_metadata(self) -> dict:
        return {"column": self.column, "known_words": sorted(self.known_words_)}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self.column = meta["column"]
        self.known_words_ = set(meta["known_words"])

    @classmethod
    def _metadata_specs(cls) -> dict[str, tuple[Callable[[object], bool], str]]:
        columns = _tag_columns()
        return {**super()._metadata_specs(), "known_words": (_strings, "a list of word strings"),
                "column": (lambda v: v is None or v in columns, f"null or a tag column: {', '.join(columns)}")}

    @classmethod
    def _construct(cls, feature_set, learner, meta: dict) -> Tagger:
        return cls(feature_set, learner, meta["decoder"], bits=meta["hash"]["bits"], hash_seed=meta["hash"]["seed"])


def _document_kind(document) -> str | None:
    """``text``, ``fields`` (a tuple or list of strings), ``featureset`` (a mapping), or None."""
    if isinstance(document, str):
        return "text"
    if isinstance(document, Mapping):
        return "featureset"
    if isinstance(document, (tuple, list)) and all(isinstance(field, str) for field in document):
        return "fields"
    return None


def _labelled(documents, labels, what: str) -> tuple[list, list[str]]:
    """Documents and their label strings; mismatched lengths or empty labels raise."""
    documents = list(_not_text(documents, f"{what} as a sequence of documents (a list of texts, not one text)"))
    labels = _not_text(labels, f"{what} labels as a sequence, one per document")
    labels = [str(y) if y is not None else "" for y in labels]
    if len(documents) != len(labels):
        raise StructlinError(f"{what}: {len(documents)} documents but {len(labels)} labels")
    empty = next((k for k, y in enumerate(labels) if not y), None)
    if empty is not None:
        raise StructlinError(f"{what}: document {empty + 1} has an empty label")
    return documents, labels


def _label_set(labels, what: str) -> list[str]:
    """``classes_``: the distinct labels, sorted; fewer than two raise."""
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise StructlinError(f"{what} has {len(classes)} distinct label(s); a classifier needs two or more")
    return classes


class Classifier(_Model, ClassifierI):
    """A multiclass classifier: ``ŷ = argmax_y w·φ(x, y)`` with one weight block per label, the
    :class:`~structlin.decoders.Multiclass` decoder and any learner (the same as the tagger's).

    Documents are texts, tuples of fields or feature dicts, as the feature set expects (a text
    feature set, or one that reads fields or dicts: see ``features/``).  An NLTK ``ClassifierI`` (``classify``,
    ``classify_many``, ``labels``) with scikit-learn's verbs (``fit``, ``partial_fit``, ``predict``,
    ``decision_function``, ``predict_proba``, ``classes_``, ``random_state``; ``prob_classify`` with
    the probabilistic learners ``maxent``, ``naive-bayes`` and ``bernoulli-nb``).  An empty document has no
    features, so every label scores 0 unless the feature set has a ``bias`` template; ties go to the first
    label of ``classes_``.  ``features=None`` chooses the feature set by the kind of the training documents;
    ``held_out``, as for :class:`Tagger`, chooses the epochs on a seeded share of the training documents
    when :meth:`fit` gets no dev.

    ``batch_size=8`` scores eight documents with the same weights before applying their updates (as the
    tagger's four sentences): chosen by the defaults procedure on dev (docs/benchmarks.md, "Defaults"), where
    it scored as well as one at a time in two thirds of the time; ``batch_size=1`` is the textbook online
    algorithm.
    """

    kind = "classifier"
    _item = "document"
    _instance = "document"

    def __init__(self, features=None, learner="averaged-perceptron", *, epochs: int | None = None,
                 seed: int = 0, batch_size: int = 8, patience: int | None = None, bits: int = 22,
                 hash_seed: int = 0, held_out: float | None = None, progress: bool | None = None):
        super().__init__(features, learner, Multiclass(), bits=bits, hash_seed=hash_seed, held_out=held_out,
                         epochs=epochs, seed=seed, batch_size=batch_size, patience=patience, progress=progress)

    def _make_extractor(self) -> DocumentFeatureExtractor:
        capabilities = self.learner.capabilities
        return DocumentFeatureExtractor(self.feature_set, self.hasher, constant=capabilities.needs_bias,
                                        presence=capabilities.presence)

    #: The feature set of ``features=None`` for each kind of document: texts, tuples of fields, feature dicts.
    default_features = {"text": "text-ngrams", "fields": "fields", "featureset": "numeric"}
    default_features_rule = (f"{default_features['text']} for texts, {default_features['fields']} for tuples of "
                             f"fields, {default_features['featureset']} for feature dicts and SVMlight")

    def _default_features(self, documents) -> FeatureSet:
        """The feature set of :attr:`default_features` for the kind of the training documents (all alike)."""
        kinds = {_document_kind(d) for d in documents}
        if len(kinds) != 1:
            raise StructlinError(f"training documents mix {', '.join(sorted(map(str, kinds)))}: give features for "
                                 "one kind (texts, tuples of fields or feature dicts)")
        kind = kinds.pop()
        if kind is None:
            raise StructlinError("training documents must be texts, tuples of fields or feature dicts, got "
                                 f"{type(next(iter(documents))).__name__}")
        return FeatureSet.load(self.default_features[kind])

    @property
    def random_state(self) -> int | None:
        return self.learner.get_params().get("seed")

    def fit(self, documents, labels, dev=None) -> Classifier:
        """Train on documents and labels; ``dev = (documents, labels)`` keeps the best dev epoch."""
        with _collector_paused():
            documents, labels = _labelled(documents, labels, "training data")
            self._choose_features(documents)
            X, labels, classes = self._training_set(documents, labels)
            dev_data = None
            if dev is not None:
                dev_documents, dev_labels = _labelled(*dev, "dev data")
                dev_data = (self._features(dev_documents, "dev data"), dev_labels)
            self._train(X, labels, classes, dev_data)
        return self

    def training_data(self, documents, labels) -> tuple[FeatureMatrix, np.ndarray]:
        """What a learner trains on: the indexed feature matrix of the documents and their gold label ids.
        Sets :attr:`joint` (the map of their labels and features) and tf-idf's idf."""
        with _collector_paused():
            documents, labels = _labelled(documents, labels, "training data")
            self._choose_features(documents)
            return self._indexed(*self._training_set(documents, labels))

    def _training_set(self, documents, labels) -> tuple[FeatureMatrix, list[str], list[str]]:
        """The features of training documents (tf-idf's idf estimated on them), their labels and ``classes_``
        (``documents`` and ``labels`` as :func:`_labelled` returns them)."""
        classes = _label_set(labels, "training data")
        return self._training_features(documents, first=True), labels, classes

    def partial_fit(self, documents, labels, classes=None) -> Classifier:
        """One epoch of the online learner over a batch, going on from the current model (scikit-learn's
        ``partial_fit``).

        The first call on an untrained classifier needs ``classes``, every label the batches may hold;
        ``classes_`` is them sorted, as :meth:`fit` orders labels (ties go to the first label, so the
        same order makes one call per epoch over all the data give exactly :meth:`fit`'s model).  Later
        calls may leave ``classes`` out or repeat the same set; a label outside ``classes_`` raises.

        Buckets first seen in a batch get rows of zero weights in the joint map.  tf-idf's idf is
        estimated on the first batch and then kept, so that a feature value means the same in every
        batch; a bucket that batch lacks has ``idf_unseen``.  After :meth:`fit`, fit's run goes on
        (from its last epoch, with its idf).  After :meth:`load` a new run starts from the loaded
        weights and idf: the file keeps only the weights to predict with, so the averaged perceptron
        averages afresh from them and the shuffling restarts at the seed.
        """
        with _collector_paused():
            documents, labels = _labelled(documents, labels, "training data")
            if self.joint is None:
                self._choose_features(documents)
            self._train_online(documents, labels, classes)
        return self

    def _training_features(self, documents, *, first: bool) -> FeatureMatrix:
        """Feature values of training documents; for the ``first`` batch of a run tf-idf's idf is first
        estimated on them."""
        counts = self._extractor.counts(documents)
        if first and self.feature_set.values.endswith("tfidf"):
            self._extractor.fit_idf(counts)
        return self._finite(self._extractor.transform(counts), "training data")

    #: Documents featurised and scored at a time.  Their arrays then stay small enough for the memory
    #: allocator to reuse instead of mapping fresh pages for every call (faster than all at once on a
    #: large test set: docs/benchmarks.md).
    prediction_batch = 1000

    def decision_function(self, documents) -> np.ndarray:
        """``w·φ(x, y)`` for every document (rows) and label (columns, in ``classes_`` order)."""
        self._check_fitted()
        documents = list(_not_text(documents, "a sequence of documents (classify() takes one document)"))
        size = self.prediction_batch
        with _collector_paused():
            return np.vstack([self._scores(self.joint.index(self._features(documents[a : a + size], "input", a)))
                              .emissions for a in range(0, len(documents), size) or [0]])


    def predict(self, documents) -> list[str]:
        scores = self.decision_function(documents)
        return [self.joint.labels[k] for k in self.decoder.argmax(Scores(scores, np.ones(len(scores), np.int64)))]

    def predict_proba(self, documents) -> np.ndarray:
        """``p(y|x) = exp(w·φ(x, y)) / Z(x)`` for every document (rows) and label (columns, in
        ``classes_`` order): the softmax of :meth:`decision_function`, for a probabilistic learner
        (``maxent``; for naive Bayes the scores are ``log P(y, x)`` and this is Bayes' rule); other
        learners' scores are no probabilities and raise."""
        inference = self._distribution()
        scores = self.decision_function(documents)
        return inference.marginals(Scores(scores, np.ones(len(scores), np.int64))).nodes

    def prob_classify(self, document) -> DictionaryProbDist:
        """NLTK ``ClassifierI.prob_classify``: the label distribution of one document."""
        return self.prob_classify_many([document])[0]

    def prob_classify_many(self, documents) -> list[DictionaryProbDist]:
        """NLTK ``ClassifierI.prob_classify_many``."""
        return [DictionaryProbDist(dict(zip(self.classes_, row.tolist()))) for row in self.predict_proba(documents)]

    def classify(self, document) -> str:
        """NLTK ``ClassifierI.classify``: the label of one document."""
        return self.predict([document])[0]

    def classify_many(self, documents) -> list[str]:
        """NLTK ``ClassifierI.classify_many``."""
        return self.predict(documents)

    def labels(self) -> list[str]:
        """NLTK ``ClassifierI.labels``."""
        return self.classes_

    def report(self, documents, labels) -> ClassificationReport:
        """Accuracy, macro/micro F1, per-class scores and the confusion matrix on labelled documents (and
        the log-loss, for a probabilistic learner)."""
        documents, labels = _labelled(documents, labels, "gold data")
        if not self.learner.capabilities.probabilistic:
            return evaluate_classification(labels, self.predict(documents))
        probabilities = self.predict_proba(documents)
        predicted = [self.joint.labels[k] for k in probabilities.argmax(axis=1)]
        gold = self.joint.encode_labels(labels, unknown=-1)
        gold_probability = np.where(gold >= 0, probabilities[np.arange(len(gold)), np.maximum(gold, 0)], 0.0)
        return evaluate_classification(labels, predicted, gold_probability)

    def _extra_arrays(self) -> dict:
        return {"idf_buckets": self._extractor.idf_buckets, "idf": self._extractor.idf,
                "idf_unseen": np.array([self._extractor.idf_unseen])}

    _extra_array_specs = {"idf_buckets": ArraySpec("iu", ("idf",), below="buckets", increasing=True),
                          "idf": ArraySpec("f", ("idf",)), "idf_unseen": ArraySpec("f", (1,))}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self._extractor.set_idf(arrays["idf_buckets"], arrays["idf"], arrays["idf_unseen"][0])

    @classmethod
    def _construct(cls, feature_set, learner, meta: dict) -> Classifier:
        return cls(feature_set, learner, bits=meta["hash"]["bits"], hash_seed=meta["hash"]["seed"])
