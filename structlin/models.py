"""Models that compose a feature set, the joint feature map, a decoder and a learner.

:class:`Tagger` labels every token of a sentence (part-of-speech tags, chunks, entities);
:class:`Classifier` gives one label to a document, a question, a name or a tuple.  It is an
NLTK ``TaggerI`` (``tag``, ``tag_sents``, ``evaluate``/``accuracy``); both follow scikit-learn's estimator
protocol without depending on it: the constructor stores its parameters as given (a learner's options are
parameters of the model too), ``fit`` checks them and builds the learner and the feature set,
``get_params`` / ``set_params`` / ``clone`` round-trip them, and the classifier has ``classes_``,
``decision_function``, ``score`` and, for a probabilistic learner only, ``predict_proba``.  Both are one
model core (``_Model``): what differs is the task, i.e. how inputs become features and labels.
"""

from __future__ import annotations

import concurrent.futures
import functools
import gc
import hashlib
import inspect
import itertools
import json
import math
import numbers
import os
import reprlib
import types
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse
from nltk.classify.api import ClassifierI
from nltk.probability import DictionaryProbDist
from nltk.tag.api import TaggerI
from tqdm import tqdm

from . import __version__
from .decoders import Decoder, Multiclass, decode_batches, length_batches, make_decoder
from .doctemplates import DocumentFeatureExtractor, pinned_word_pattern
from .documents import Document
from .errors import (CapabilityError, CorpusFormatError, ModelFormatError, NotFittedError, OptionValueError,
                     StructlinError, UnknownNameError, UnseenLabelWarning)
from .evaluation import ClassificationReport, TaggingReport, evaluate_classification, evaluate_tagging
from .explain import (Explanation, InformativeFeature, TopFeatures, explain_document, explain_tokens,
                      informative_features, top_document_features, top_token_features)
from .featurecache import (CacheWriter, FeatureCache, ShardedCorpus, corpus_columns, large_blocks_mapped,
                           release_freed_memory, settings_digest)
from .hashing import FeatureHasher, check_training_bits
from .joint import JointFeatureMap, Scores, SparseWeights, ordered_labels
from .learners import LEARNERS, Learner, make_learner
from .learners.choice import AUTO, LearnerChoice, learner_choice
from .learners.protocol import is_default, model_options
from .learners.run_weights import loads_pairs
from .learners.training import UNITS, hold_out_instances, latest_within_noise, quiet
from .matrix import FeatureMatrix
from .modelfile import VERSION, ArraySpec, StreamedArray, check_arrays, deflated, inflated, load_model, save_model
from .readers import Sentence, has_lone_surrogate
from .tagdict import TagDictionary
from .templates import FeatureSet, TokenFeatureExtractor


def _not_text(value, expected: str):
    """``value``, unless it is a bare string where ``expected`` (a sequence of tokens, sentences or documents)
    is wanted: iterating it would give one character at a time, so it raises ``TypeError`` (as None does, naming
    what was expected rather than 'NoneType' is not iterable)."""
    if value is None:
        raise TypeError(f"expected {expected}, got None")
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:27] + "..."
        raise TypeError(f"expected {expected}, got the string {shown!r}")
    return value


def _tagged(sentences, what: str, fields: tuple[str, ...] = ("word",), first: int = 0) -> tuple[list[list], list[list[str]]]:
    """Tokens and tags of tagged sentences given as :class:`Sentence` objects or ``[(word, tag), ...]`` (errors
    number them from ``first``, the number of sentences of ``what`` before them).

    A feature set reading more input columns than the word (``fields``, e.g. ``("word", "pos")`` for
    chunking) takes every token as the tuple of those columns: from a :class:`Sentence`'s named
    columns, or given as ``[(word, pos, tag), ...]``.
    """
    width, tokens, tags = len(fields), [], []
    expected = "a word string" if width == 1 else f"{', '.join(fields)} strings"
    pairs = f"({', '.join(fields)}, tag) {'pairs' if width == 1 else 'tuples'}"
    for k, sentence in enumerate(_listed(sentences, what), first):
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
        words = w if width == 1 else [f for token in w for f in token]
        if has_lone_surrogate("".join(words) + "".join(t)):  # one test a sentence; the token is looked for only then
            i = next(i for i, (token, tag) in enumerate(zip(w, t))
                     if has_lone_surrogate("".join((token,) if width == 1 else token) + tag))
            raise CorpusFormatError(what, None, f"sentence {k + 1}, token {i + 1}: ({w[i]!r}, {t[i]!r}) holds a "
                                                "lone surrogate (an undecodable byte escaped): expected text")
        tokens.append(w)
        tags.append(t)
    if what == "training data" and width > 1:
        _refuse_the_answer(fields, tokens, tags)
    return tokens, tags


def _refuse_the_answer(fields: tuple[str, ...], tokens: list[list[tuple]], tags: list[list[str]]) -> None:
    """A feature set may not read the tags the model learns: a column (beside the word) that equals the tags at
    every training token is the tag column read again, and a model trained on it scores 100% and learns nothing."""
    for k, name in enumerate(fields):
        if name == "word" or not any(tokens):
            continue
        pairs = ((token[k], tag) for sentence, sentence_tags in zip(tokens, tags)
                 for token, tag in zip(sentence, sentence_tags))
        if all(value == tag for value, tag in pairs):
            raise CorpusFormatError("training data", None, f"the feature set reads column {name!r}, which holds the "
                                    "tags the model learns (equal to them at every token): a feature may not read the "
                                    f"answer; read another column than {name!r}")


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    """The items of ``items`` in lists of ``size`` (the last one shorter), read as they are needed (an item that is
    itself a one-shot iterator read into a list: :func:`_held`)."""
    iterator = iter(items)
    while chunk := list(map(_held, itertools.islice(iterator, size))):
        yield chunk


def _held(item):
    """``item``, or the list of what it gives when it is a one-shot iterator (a sentence given as a generator of
    tokens), since an item is read more than once: iterating it again would give nothing, a sentence lost."""
    return list(item) if isinstance(item, Iterator) else item


def _numbered(chunks: Iterable[list]) -> Iterator[tuple[int, list]]:
    """``(start, chunk)``: every chunk with the number of items before it."""
    start = 0
    for chunk in chunks:
        yield start, chunk
        start += len(chunk)


def _reiterable(items) -> bool:
    """Whether iterating ``items`` again reads them again (a list, a reader), not what an iterator has left (nor a
    list of iterators, which a first reading spends)."""
    if isinstance(items, (list, tuple)):
        return not any(isinstance(item, Iterator) for item in items)
    return getattr(items, "reiterable", iter(items) is not items)


def _ordered(value, expected: str):
    """``value``, unless it is a set or a mapping where ``expected`` (documents, labels: one per instance, in order)
    is wanted: a set's order is arbitrary, so its documents would meet labels at random, and a dict gives its keys
    (a dict's views keep its order: ``d.keys()`` and ``d.values()`` pair up)."""
    if isinstance(value, (set, frozenset, Mapping)):
        raise TypeError(f"expected {expected}, got a {type(value).__name__}, whose order is not the instances' order: "
                        "give a list")
    return value


def _listed(sentences, what: str) -> list:
    """The tagged sentences of ``what`` (training data ...) as a list, a sentence given as an iterator read into one
    (:func:`_held`); a bare string raises ``TypeError``."""
    return list(map(_held, _not_text(sentences, f"{what} as a sequence of tagged sentences")))


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
    widths = {len(token) for sentence in sentences if isinstance(sentence, Iterable) for token in sentence
              if isinstance(token, (tuple, list))}
    return tuple(f"column{k}" for k in range(1, min(widths) - 1)) if widths else ()


def _is_tag_column(sentences: list[Sentence], index: int) -> bool:
    return all(sentence.tags is not None and [row[index] for row in sentence.columns] == list(sentence.tags)
               for sentence in sentences)


def _words(tokens: list[list]) -> list[list[str]]:
    """The word of every token (the first field of a tuple token)."""
    return [[t if isinstance(t, str) else t[0] for t in sentence] for sentence in tokens]


def some_labels(labels: list, most: int = 5) -> str:
    """The first ``most`` of ``labels`` (repr), and how many more: how a warning names unseen labels."""
    return ", ".join(map(repr, labels[:most])) + (f" and {len(labels) - most} more" if len(labels) > most else "")


def _dev_label_ids(joint: JointFeatureMap, labels: list[str], what: str, caller_depth: int, *,
                   data: str = "dev data") -> np.ndarray:
    """Label ids of dev ``labels`` (or other ``data``'s); a label never seen in training becomes −1, an error at
    every evaluation, with an :class:`UnseenLabelWarning` naming such labels (attributed to the user's code,
    ``caller_depth`` frames above this function)."""
    ids = joint.encode_labels(labels, unknown=-1)
    unseen = ids < 0
    if unseen.any():
        names = sorted({label for label, missing in zip(labels, unseen) if missing})
        warnings.warn(f"{data}: {int(unseen.sum())} of {len(ids)} {what} have labels never seen in training "
                      f"({some_labels(names)}); they count as errors", UnseenLabelWarning,
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


#: Every option a learner declares (in the order of :data:`~structlin.learners.LEARNERS`): keyword parameters of
#: the models besides their own.
_LEARNER_OPTIONS = tuple(dict.fromkeys(option.name for cls in LEARNERS.values() for option in cls.options))


def _takes_learner_options(init):
    """A model constructor ``init(self, ..., **options)`` given the signature that names every learner option as a
    keyword parameter (default None: the learner's default), which ``inspect`` and scikit-learn's
    ``get_params``, ``clone`` and estimator checks read: one list, generated from the learners' declarations."""
    signature = inspect.signature(init)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    options = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in _LEARNER_OPTIONS]
    init.__signature__ = signature.replace(parameters=own + options)
    return init


class _Resolved:
    """A model parameter given as a name or an object (the learner, a tagger's decoder).

    Setting it stores the value as given, where ``get_params``, ``clone`` and scikit-learn's checks find it
    unchanged; reading it gives the object: the one the last fit (or load) used, else the one the
    parameters give now (built by the model's method ``make``)."""

    def __init__(self, make: str):
        self.make = make

    def __set_name__(self, owner, name: str):
        self.name = name

    def __get__(self, model, owner=None):
        if model is None:
            return self
        used = getattr(model, f"_{self.name}")
        return used if used is not None else getattr(model, self.make)()

    def __set__(self, model, value) -> None:
        vars(model)[self.name] = value


class _IfLearner:
    """A method only a model whose learner has ``capability`` (a field of its ``capabilities``) has:
    scikit-learn's ``available_if``.  On another model reading it raises :class:`CapabilityError`, an
    ``AttributeError``, so that ``hasattr(model, "predict_proba")`` is False for a perceptron."""

    def __init__(self, capability: str, method):
        self.capability, self.method = capability, method

    def __get__(self, model, owner=None):
        if model is None:
            return self.method
        model._check_capable(self.capability)
        return types.MethodType(self.method, model)


def _if_learner(capability: str):
    """Decorate a method with :class:`_IfLearner`."""
    return functools.partial(_IfLearner, capability)


#: What a learner lacking a capability cannot do, for the :class:`CapabilityError` that says so.
_LACKING = {"probabilistic": "gives no probabilities; train with one of {}",
            "online": "is not online; partial_fit needs an online learner ({})"}


def _feature_hasher(bits, seed) -> FeatureHasher:
    """The feature hash of the parameters ``bits`` and ``hash_seed`` (checked: :class:`OptionValueError`)."""
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in (bits, seed)):
        raise OptionValueError(f"bits and hash_seed must be integers, got {bits!r} and {seed!r}")
    try:
        return FeatureHasher(check_training_bits(int(bits)), int(seed))
    except ValueError as err:
        raise OptionValueError(str(err)) from None


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


def _storable_label(label) -> bool:
    """Whether a model file keeps ``label`` as it is: a non-empty string, an integer, true/false or a finite number."""
    return (isinstance(label, str) and label != "") or isinstance(label, (bool, int)) or (
        isinstance(label, float) and math.isfinite(label))


def _distinct(labels: list) -> bool:
    return 0 < len(labels) == len(set(labels))


#: What every model file's metadata holds besides the header (see :meth:`_Model._metadata_specs`).
_METADATA = {
    "labels": (lambda v: isinstance(v, list) and all(map(_storable_label, v)) and _distinct(v),
               "a list of distinct labels: non-empty strings, integers, finite numbers or true/false"),
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
_OPTIONAL_METADATA = ("chosen", "candidates", "tag_dictionary", "inputs")

#: The weight rows' hashed buckets, and the weights of a learner that keeps a weight vector by model-file format
#: version: version 1 keeps the emission block (rows × labels) dense, versions 2 and 3 only its non-zero weights, row
#: by row: how many each row has, their labels (increasing in each row) and their values (:func:`_file_weights`).
_COLUMNS = ArraySpec("iu", ("rows",), below="buckets", increasing=True)
_TRANSITION = ArraySpec("f", ("tail",))
_WEIGHT_ARRAYS = {
    1: {"emission": ArraySpec("f", ("rows", "labels")), "transition": _TRANSITION},
    2: {"emission_counts": ArraySpec("iu", ("rows",), below="labels+1"),
        "emission_labels": ArraySpec("iu", ("entries",), below="labels"),
        "emission_values": ArraySpec("f", ("entries",)), "transition": _TRANSITION},
}
_WEIGHT_ARRAYS[3] = _WEIGHT_ARRAYS[2]


def _small(ids: np.ndarray, bound: int) -> np.ndarray:
    """Ids in ``[0, bound)`` in the smallest unsigned type that holds them (bytes a model file need not hold)."""
    return ids.astype(np.min_scalar_type(bound - 1))


def _nonzero_emissions(joint: JointFeatureMap, w: np.ndarray | SparseWeights):
    """The non-zero emission weights of ``w`` as ``(labels, values)`` blocks, rows increasing and each row's labels
    increasing, a block of stored pairs or of rows at a time (an array of each non-zero weight's index would take
    several times the weights' memory)."""
    L = joint.n_labels
    if isinstance(w, SparseWeights):
        for first in range(0, len(w.keys), _SAVED_BLOCK):
            keys, values = w.keys[first : first + _SAVED_BLOCK], w.values[first : first + _SAVED_BLOCK]
            yield keys[values != 0] % L, values[values != 0]
        return
    emission, size = joint.emission_weights(w), max(1, _SAVED_BLOCK // L)
    for first in range(0, joint.n_rows, size):
        rows, labels = np.nonzero(emission[first : first + size])
        yield labels, emission[first + rows, labels]


def _emission_counts(joint: JointFeatureMap, w: np.ndarray | SparseWeights) -> np.ndarray:
    """How many non-zero emission weights each row of ``w`` has."""
    if isinstance(w, SparseWeights):
        return np.bincount(w.keys[w.values != 0] // joint.n_labels, minlength=joint.n_rows)
    emission, size = joint.emission_weights(w), max(1, _SAVED_BLOCK // joint.n_labels)
    return np.concatenate([np.zeros(0, np.int64), *(np.count_nonzero(emission[first : first + size], axis=1)
                                                    for first in range(0, joint.n_rows, size))])


#: The emission weights a model's file is made from at a time (:func:`_nonzero_emissions`).
_SAVED_BLOCK = 1 << 22


def _file_weights(arrays: dict, n_labels: int, pairs: bool) -> np.ndarray | SparseWeights:
    """The weights of a model file's arrays (``columns`` rows), as :class:`~structlin.joint.SparseWeights` with
    ``pairs``, else the flat vector: version 1's dense emission block, or version 2's non-zero weights row by row
    (``emission_counts`` per row, their increasing ``emission_labels`` and ``emission_values``: about a fifth of a
    perceptron tagger's block, exact) placed a block of rows at a time, and the ``transition`` block; ``ValueError``
    unless the counts add up to the weights and the labels increase in every row."""
    tail = arrays["transition"].astype(np.float64)
    emission_size = len(arrays["columns"]) * n_labels
    if "emission" in arrays:
        w = np.concatenate([arrays["emission"].ravel(), tail], dtype=np.float64)
        return SparseWeights.from_dense(w, emission_size) if pairs else w
    counts, labels, values = arrays["emission_counts"], arrays["emission_labels"], arrays["emission_values"]
    ends = np.cumsum(counts, dtype=np.int64)
    if (ends[-1] if len(ends) else 0) != len(values):
        raise ValueError(f"the emission counts add up to {ends[-1] if len(ends) else 0} weights, not {len(values)}")
    if pairs:
        keys = np.empty(len(values), np.int64)
    else:
        w = np.zeros(emission_size + len(tail))
        w[emission_size:] = tail
    starts = np.unique(np.searchsorted(ends, np.arange(0, len(values), _SAVED_BLOCK), side="right"))
    for first, stop in zip(starts, [*starts[1:], len(counts)]):  # rows whose weights begin in a block, together
        begin, end = ends[first - 1] if first else 0, ends[stop - 1]
        rows = np.repeat(np.arange(first, stop), counts[first:stop]) * n_labels
        block = labels[begin:end].astype(np.int64)
        if (block[1:] <= block[:-1])[rows[1:] == rows[:-1]].any():
            raise ValueError("the emission labels do not increase within every row")
        if pairs:
            keys[begin:end] = rows + block
        else:
            w[rows + block] = values[begin:end]
    return SparseWeights(keys, values, tail, emission_size + len(tail)) if pairs else w


def _indexed(X: FeatureMatrix, labels: list, classes: list, decoder: Decoder):
    """``(joint, X, y)``: the joint map of ``classes`` (the label order) and of the buckets of ``X`` (training
    instances' hashed features), ``X`` indexed by it (renumbered in place: ``X`` is spent) and the ids of ``labels``."""
    joint = JointFeatureMap.from_training(classes, X, transitions=decoder.uses_transitions)
    return joint, joint.index(X, overwrite=True), joint.encode_labels(labels)


def _bias_row(extractor, joint: JointFeatureMap) -> int | None:
    """The weight row of ``extractor``'s bias feature in ``joint`` (None without one)."""
    bucket = extractor.bias_bucket()
    rows = np.flatnonzero(joint.columns == bucket) if bucket is not None else []
    return int(rows[0]) if len(rows) else None


class _Model:
    """What every model shares: a feature set and its extractor, the joint feature map, a decoder, a
    learner and what it trained; fit, partial_fit and prediction through the decoder; scikit-learn's
    parameter protocol; persistence as arrays + JSON (no pickle; rows of all-zero weights are dropped).

    The constructor only stores its parameters (scikit-learn's rule: ``get_params`` returns them as given,
    and nothing is checked before fit).  Every fit starts a run from them (:meth:`_begin`): it checks them
    and builds the learner, the decoder, the feature hash and the feature set, which ``learner``,
    ``decoder``, ``hasher`` and ``feature_set`` then read until the next fit.

    A subclass is the task: how its inputs become feature matrices (``_extractor``, one position per
    document or per token) and labels, and what the task adds to a model file.  ``_item`` names what
    carries a label (``token``, ``document``), ``_instance`` an input (``sentence``, ``document``)."""

    kind = ""
    _item = ""
    _instance = ""
    #: Learner options a model sets on a learner given by name that declares them, unless given.
    learner_defaults: dict = {}

    # What the last fit (or load) used and trained: None before.
    _learner: Learner | None = None
    _hasher: FeatureHasher | None = None
    _feature_set: FeatureSet | None = None
    _joint: JointFeatureMap | None = None

    learner = _Resolved("_make_learner")

    def __init__(self, features, learner, *, bits, hash_seed, held_out, stream, **options):
        """Store the parameters as given: every learner option (None when not given) among them."""
        unknown = sorted(set(options) - set(_LEARNER_OPTIONS))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        self.features, self.learner, self.bits, self.hash_seed, self.held_out = (features, learner, bits,
                                                                                  hash_seed, held_out)
        self.stream = stream
        for name in _LEARNER_OPTIONS:
            setattr(self, name, options.get(name))

    # --- parameters (scikit-learn's protocol) --------------------------------------------------------

    @classmethod
    def _parameter_names(cls) -> list[str]:
        return list(inspect.signature(cls).parameters)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters as given; ``deep`` adds the options of a learner given as an
        instance, as ``learner__name`` (scikit-learn's ``get_params``)."""
        params = {name: vars(self)[name] for name in self._parameter_names()}
        if deep:
            for name, value in list(params.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    params.update((f"{name}__{key}", v) for key, v in value.get_params().items())
        return params

    def set_params(self, **params):
        """Set parameters (``learner__name`` for an option of a learner given as an instance), unchecked until
        the next fit, which uses them; what was trained stays until then.  Returns the model."""
        valid = self.get_params(deep=False)
        nested: dict[str, dict] = {}
        for key, value in params.items():
            name, _, option = key.partition("__")
            if name not in valid:
                raise OptionValueError(f"{type(self).__name__} has no parameter {name!r} (its parameters: "
                                       f"{', '.join(valid)})")
            if not option:
                setattr(self, name, value)
                valid[name] = value
            elif not hasattr(valid[name], "set_params"):
                raise OptionValueError(f"{key}: {name} is {valid[name]!r}, which has no parameters of its own; "
                                       f"set {option} on the {self.kind} itself")
            else:
                nested.setdefault(name, {})[option] = value
        for name, options in nested.items():
            valid[name].set_params(**options)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in inspect.signature(type(self)).parameters.items()}
        changed = [f"{k}={v!r}" for k, v in self.get_params(deep=False).items() if not is_default(v, defaults[k])]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_is_fitted__(self) -> bool:
        return self._joint is not None

    # --- what the parameters make ----------------------------------------------------------------------

    def _make_learner(self) -> Learner:
        """The learner the parameters give (:meth:`_candidate_learners`' first)."""
        return self._candidate_learners()[0]

    def _candidate_learners(self) -> list[Learner]:
        """The learners a fit chooses among: with ``learner="auto"`` (or a :class:`~.learners.choice.LearnerChoice`)
        its candidates that learn this model's task (and stream, with ``stream``), in order; else the one learner
        the parameters give (:meth:`_made`)."""
        learner = vars(self)["learner"]
        given = {name: vars(self)[name] for name in _LEARNER_OPTIONS if vars(self)[name] is not None}
        if isinstance(learner, str) and learner == AUTO:
            learner = learner_choice(self.learner_defaults, given)
        if not isinstance(learner, LearnerChoice):
            return [self._made(learner, given)]
        candidates = [self._made(c, given) for c in learner.candidates if self._learns(type(c))
                      and (c.capabilities.streams or not self.stream)]
        if not candidates:
            names = ", ".join(c.name for c in learner.candidates)
            where = " from disk (stream)" if self.stream else ""
            raise OptionValueError(f"learner {AUTO!r}: none of its candidates ({names}) learns a {self.kind}{where}")
        return candidates

    def _made(self, learner, given: dict) -> Learner:
        """The learner ``learner`` names, with the options ``given`` (the others: the learner's default, or the
        model's :attr:`learner_defaults`), or a copy of an instance given with the options given in place of its
        own (the instance itself stays untrained).  An option the learner does not declare raises
        :class:`OptionValueError` naming the learner and its options, but ``progress``: a display switch, which a
        learner without a progress bar (naive Bayes) has no use for."""
        if isinstance(learner, Learner):
            cls, base = type(learner), learner.get_params()
        elif isinstance(learner, str) and learner in LEARNERS:
            cls, base = LEARNERS[learner], self.learner_defaults
        elif isinstance(learner, str):
            raise UnknownNameError("learner", learner, [*LEARNERS, AUTO])
        else:
            raise OptionValueError(f"learner must be a learner name, {AUTO!r} or a Learner, got {learner!r}")
        declared = [option.name for option in cls.options]
        foreign = [name for name in given if name not in declared and name != "progress"]
        if foreign:
            raise OptionValueError(f"learner {cls.name!r} has no option {', '.join(foreign)} (its options: "
                                   f"{', '.join(declared)})")
        return cls(**model_options(cls, base, given))

    def _learner_class(self) -> type[Learner] | None:
        """The class of the learner: the trained one's, else the one the parameter names (None: no learner)."""
        if self._learner is not None:
            return type(self._learner)
        learner = vars(self)["learner"]
        return type(learner) if isinstance(learner, Learner) else LEARNERS.get(learner) if isinstance(
            learner, str) else None

    def _begin(self, training=None) -> None:
        """Start a run from the parameters, checked here (not in the constructor): the learner, the feature hash
        and the feature set (with ``features=None``, the one ``training`` calls for: :meth:`_default_features`),
        and a tagger's decoder; what was trained before is dropped."""
        held_out = self.held_out
        if held_out is not None and not (isinstance(held_out, (int, float)) and 0 < held_out < 1):
            raise OptionValueError(f"held_out must be a fraction between 0 and 1, got {held_out!r}")
        if not isinstance(self.stream, bool):
            raise OptionValueError(f"stream must be True or False, got {self.stream!r}")
        self._learner, self._hasher = self._make_learner(), _feature_hasher(self.bits, self.hash_seed)
        features = self.features
        if features is not None and not isinstance(features, (str, os.PathLike, FeatureSet)):
            raise OptionValueError(f"features must be a feature set's name, a TOML file's path or a FeatureSet (None: "
                                   f"the default for the data), got {reprlib.repr(features)}")
        self._use_features(self._default_features(training) if features is None else
                           features if isinstance(features, FeatureSet) else FeatureSet.load(features))
        self._joint = None

    def _use_features(self, feature_set: FeatureSet) -> None:
        self._feature_set = feature_set
        self._extractor = self._make_extractor()

    @property
    def hasher(self) -> FeatureHasher | None:
        """The feature hash of the last fit (None before)."""
        return self._hasher

    @property
    def feature_set(self) -> FeatureSet | None:
        """The feature set of the last fit (None before)."""
        return self._feature_set

    @property
    def joint(self) -> JointFeatureMap | None:
        """The joint feature map of the trained model (None before fit)."""
        return self._joint

    def _check_fitted(self) -> None:
        if self._joint is None:
            raise NotFittedError(f"this {self.kind} is not trained yet: call fit() or {type(self).__name__}.load()")

    def _check_capable(self, capability: str) -> None:
        """Refuse a learner without ``capability`` (``probabilistic``, ``online``): :class:`CapabilityError`."""
        cls = self._learner_class()
        if cls is None or not getattr(cls.capabilities, capability):
            takers = [name for name, c in LEARNERS.items() if getattr(c.capabilities, capability)]
            name = cls.name if cls is not None else vars(self)["learner"]
            raise CapabilityError(f"learner {name!r} " + _LACKING[capability].format(", ".join(takers)))

    #: Instances whose features are extracted at a time: the extractor's temporaries (several arrays per
    #: template and position) stay bounded, and only the finished matrix grows with the corpus (EWT train:
    #: 204 MB above the corpus while extracting at once, 102 MB by parts; docs/benchmarks.md).
    extraction_batch = 2048

    def _features(self, instances: list, what: str, first: int = 0) -> FeatureMatrix:
        """The feature matrix of ``instances`` (of ``what``: training data, input ...; the first is number
        ``first``), checked by :meth:`_finite`; extracted :attr:`extraction_batch` instances at a time."""
        return self._by_parts(instances, lambda part, start: self._finite(self._extractor.extract(part), what,
                                                                          first + start))

    #: Parts extracted at once, each in a thread of its own (1: one after the other).  A document's features are
    #: numpy's work on its code points and their hashes, which lets go of the interpreter, so a classifier extracts
    #: two parts at once (20 Newsgroups train: 2.1-2.7 s → 1.4 s on two cores); a tagger's parts share the codes of
    #: the words seen so far, and are extracted in turn.
    extraction_threads = 1

    def _by_parts(self, instances: list, extract: Callable[[list, int], FeatureMatrix]) -> FeatureMatrix:
        """``extract(part, start)`` of every :attr:`extraction_batch` instances from ``start`` on, as one matrix (the
        parts in order, whatever thread extracted them; the first part's error is the one raised)."""
        size = self.extraction_batch
        starts = range(0, len(instances), size) or [0]

        def part(start: int) -> FeatureMatrix:
            return extract(instances[start : start + size], start)

        if self.extraction_threads == 1 or len(starts) == 1:
            return FeatureMatrix.concatenate([part(start) for start in starts])
        with concurrent.futures.ThreadPoolExecutor(self.extraction_threads) as pool:
            return FeatureMatrix.concatenate(list(pool.map(part, starts)))

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
        return _bias_row(self._extractor, self.joint)

    def _indexed(self, X: FeatureMatrix, labels: list, classes: list) -> tuple[FeatureMatrix, np.ndarray]:
        """Set :attr:`joint`, the map of ``classes`` (the label order) and of the buckets of ``X`` (the training
        instances' hashed features); return ``X`` indexed by it (its bucket array renumbered in place: ``X`` is
        spent) and the ids of ``labels`` (one per position)."""
        self._joint, X, y = _indexed(X, labels, classes, self.decoder)
        return X, y

    def _train(self, X: FeatureMatrix, labels: list, classes: list, dev=None) -> None:
        """Fit the learner on the training instances (see :meth:`_indexed`); ``dev = (X_dev, labels)``."""
        X, y = self._indexed(X, labels, classes)
        self._fit_indexed(X, y, dev)

    def _fit_indexed(self, X, y: np.ndarray | None, dev) -> None:
        """Fit the learner on the indexed instances ``X`` with gold ids ``y`` (a
        :class:`~structlin.featurecache.ShardedCorpus` and None when streaming); ``dev = (X_dev, labels)`` is
        indexed here, and without it the epochs are chosen on a held-out share (:meth:`_held_out_run`)."""
        dev_data = self._indexed_dev(dev)
        if dev_data is None and self._chooses_epochs(X):
            self._refit(X, y, self._held_out_run(X, y))
        else:
            self._fit_learner(X, y, dev_data)

    def _indexed_dev(self, dev, caller_depth: int = 5) -> tuple | None:
        """``dev = (X_dev, labels)`` indexed by the joint map, or None; dev without instances is refused (a warning
        of unseen labels is the user's code's, ``caller_depth`` frames above)."""
        if dev is None:
            return None
        if dev[0].n_instances == 0:  # no accuracy to choose an epoch by (it was taken as 0)
            raise CorpusFormatError("dev data", None, f"no {self._instance}s (give dev data with some, or none)")
        return self.joint.index(dev[0]), _dev_label_ids(self.joint, dev[1], f"{self._item}s", caller_depth)

    def _chooses_epochs(self, X) -> bool:
        """Whether a fit without dev chooses the learner's epochs on a held-out share (not of one instance)."""
        return bool(self.held_out) and "epochs" in self.learner.get_params() and X.n_instances > 1

    def _fit_learner(self, X, y: np.ndarray | None, dev_data) -> None:
        """The learner's own fit on the indexed instances, with the indexed ``dev_data`` or None."""
        self.learner.fit(self.joint, self.decoder, X, y, dev_data, bias_row=self._bias_row())
        self.weights_, self.history_ = self.learner.weights_, self.learner.history_

    def _held_out_run(self, X, y: np.ndarray | None) -> int:
        """Without dev, a run on all but a seeded ``held_out`` share of the training instances, scored on that share
        after every epoch (:meth:`_refit` then trains on all of them); returns the number of held-out positions."""
        learner = self.learner
        seed = learner.get_params().get("seed") or 0
        rest, rest_y, held = hold_out_instances(X, y, self.held_out, seed)
        learner.fit(self.joint, self.decoder, rest, rest_y, held, bias_row=self._bias_row())
        return held[0].n_positions

    def _refit(self, X, y: np.ndarray | None, held_positions: int) -> None:
        """After :meth:`_held_out_run`, train on all the instances for the number of epochs (iterations) it chose
        (scikit-learn's refit, :meth:`Learner.refit`): the latest epoch within the held-out score's noise of the best
        (:func:`~structlin.learners.training.latest_within_noise`).  Settings the learner chose on the held-out
        part (declared with an ``untuned`` value) are kept for the final fit.  ``chosen_`` gains ``epochs`` and
        ``candidates_`` every epoch's held-out accuracy."""
        learner = self.learner
        # the latest epoch the held-out share cannot tell from the best (the run scores its last epoch at least)
        best = latest_within_noise(learner.history_, held_positions) or 1
        candidates = [*learner.candidates_, *({"epochs": r["step"], "dev_accuracy": r["dev_accuracy"]}
                                              for r in learner.history_ if r["dev_accuracy"] is not None)]
        # the settings the learner chose on the held-out part too (declared with an untuned value, left at None)
        chosen = {option.name: learner.chosen_[option.name] for option in learner.options
                  if option.untuned is not None and option.name in learner.chosen_
                  and getattr(learner, option.name) is None}
        learner.refit(self.joint, self.decoder, X, y, epochs=best, chosen=chosen, bias_row=self._bias_row())
        learner.chosen_ = {**chosen, **learner.chosen_, "epochs": best}
        learner.candidates_ = candidates
        self.weights_, self.history_ = learner.weights_, learner.history_

    # --- training from a feature cache on disk (``stream=True``) ---------------------------------------

    def _fit_streamed(self, train, dev) -> None:
        """``stream=True``: the training instances' features are written to a
        :class:`~structlin.featurecache.FeatureCache` (found again when the same instances were cached with the
        same feature set and hash, by this run or an earlier one), and the learner trains on it, reading what each
        epoch needs a segment at a time (a :class:`~structlin.featurecache.ShardedCorpus`), so that memory holds
        neither the instances nor their feature matrix.  ``train`` is any iterable of labelled instances (as
        :meth:`_streamed_part` reads them); the first :attr:`extraction_batch` choose a default feature set."""
        learner = self._make_learner()  # refused before anything is read
        if not learner.capabilities.streams:
            takers = [name for name, cls in LEARNERS.items() if cls.capabilities.streams and self._learns(cls)]
            raise CapabilityError(f"learner {learner.name!r} does not train from a corpus on disk (stream); "
                                  f"those that do: {', '.join(takers)}")
        learner.check_streams()
        chunks = _chunks(train, self.extraction_batch)
        first = next(chunks, [])
        self._begin(self._stream_sample(first))
        corpus = self._sharded(self._feature_cache(train, itertools.chain([first], chunks)))
        del first, chunks  # the instances read to begin with: training holds none of them
        self.hasher.forget()  # extraction memoised every string of the corpus; training reads the cache
        release_freed_memory()
        self._fit_indexed(corpus, None, self._dev_data(dev))

    def _feature_cache(self, train, chunks) -> FeatureCache:
        """The feature cache of the training instances ``chunks`` (lists of :attr:`extraction_batch` instances of
        ``train``): named by a digest of the settings and the instances, found without extracting when ``train``
        can be read again (a list, a reader: a first pass computes the digest), else built."""
        settings = settings_digest(kind=self.kind, features=self.feature_set.to_dict(), hash=self.hasher.config())
        hidden = quiet(self.learner.get_params().get("progress"))
        units = f" {self._instance}s"
        if _reiterable(train):
            digest = hashlib.sha256(settings.encode())
            with tqdm(desc="reading", unit=units, disable=hidden, leave=False) as bar:
                for start, chunk in _numbered(_chunks(train, self.extraction_batch)):
                    digest.update(self._streamed_part(chunk, start)[2])
                    bar.update(len(chunk))
            found = FeatureCache.find(digest.hexdigest()[:32])
            if found is not None:
                return found
        digest = hashlib.sha256(settings.encode())
        with large_blocks_mapped(), CacheWriter() as writer, \
                tqdm(desc="features", unit=units, disable=hidden, leave=False) as bar:
            for start, chunk in _numbered(chunks):
                instances, labels, content = self._streamed_part(chunk, start)
                digest.update(content)
                features, words = self._cached_features(instances, start)
                writer.add(features, labels, words)
                bar.update(len(chunk))
            return writer.finish(digest.hexdigest()[:32])

    def _learns(self, cls: type[Learner]) -> bool:
        """Whether learners of class ``cls`` can learn this model's task."""
        return True

    def _stream_sample(self, chunk: list) -> list:
        """What :meth:`_begin` reads to choose a default feature set, of the first labelled instances of a stream."""
        return chunk

    def _train_online(self, instances: list, labels: list, classes) -> None:
        """One epoch of an online learner over a batch, going on from the current model (see the
        subclasses' ``partial_fit``, which exists for an online learner only); a first call starts a run
        (:meth:`_begin` has been called)."""
        first = self.joint is None
        given = None if classes is None else _label_values(classes, "classes", "entry")
        if first:
            if given is None:
                raise OptionValueError("the first partial_fit call needs classes: every label the batches may hold")
            known = _label_set(given, "classes")
        else:
            known = self.joint.labels
            if given is not None and set(given) != set(known):
                raise OptionValueError(f"classes {ordered_labels(given)} differ from the model's classes_ {known}")
        allowed = set(known)
        unknown = next((k for k, y in enumerate(labels) if y not in allowed), None)
        if unknown is not None:
            raise CorpusFormatError("training data", None, f"{self._item} {unknown + 1} has label {labels[unknown]!r}, "
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
        self._joint, self.weights_, self.history_ = joint, self.learner.weights_, self.learner.history_

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
        self._check_capable("probabilistic")
        self._check_fitted()
        return self.decoder.exact

    # --- persistence ----------------------------------------------------------------------------

    def save(self, path) -> None:
        """Write the model to ``path`` (a zip of ``.npy`` arrays and ``metadata.json``).  Labels are kept with
        their types: strings, integers, finite numbers and true/false; other labels (tuples ...) are refused."""
        self._check_fitted()
        joint = self.joint
        unstorable = next((label for label in joint.labels if not _storable_label(label)), None)
        if unstorable is not None:
            raise StructlinError(f"{path}: the label {unstorable!r} ({type(unstorable).__name__}) cannot be saved: a "
                                 "model file keeps labels that are non-empty strings, integers, finite numbers or "
                                 "true/false")
        try:
            arrays = {**self._model_arrays(), **self._extra_arrays()}
        except ValueError as err:
            raise StructlinError(f"{path}: {err}") from None
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

    def _model_arrays(self) -> dict[str, np.ndarray]:
        """What the model predicts with besides the task's arrays (:meth:`_extra_arrays`), as a model file keeps it:
        the buckets of the weight rows, then a learner's own arrays if it scores inputs itself, else the non-zero
        emission weights of the rows that have any (:func:`_file_weights`) and the transition block.  A learner
        whose model a file cannot hold (a user kernel) raises ``ValueError``."""
        joint, buckets = self.joint, 1 << self.hasher.bits
        if self.learner.capabilities.scores_itself:
            return {"columns": _small(joint.columns, buckets), **self.learner.model_arrays()}
        w, L = self.weights_, joint.n_labels
        counts = _emission_counts(joint, w)
        kept, total = np.flatnonzero(counts), int(counts.sum())
        label_type = np.min_scalar_type(L - 1)
        return {"columns": _small(joint.columns[kept], buckets), "emission_counts": _small(counts[kept], L + 1),
                "emission_labels": StreamedArray(label_type, total, lambda: (labels.astype(label_type) for labels, _
                                                                             in _nonzero_emissions(joint, w))),
                "emission_values": StreamedArray(np.dtype(np.float64), total, lambda: (
                    values for _, values in _nonzero_emissions(joint, w))),
                "transition": joint.tail(w).copy()}

    def _set_trained(self, labels: list, transitions: bool, arrays: dict) -> None:
        """Set the trained model from :meth:`_model_arrays`' arrays (of a model file of any version, or of a
        pickle): the joint map of ``labels`` over the weight rows' buckets, and the weights or the learner's own
        arrays.  Arrays that do not fit each other raise ``ValueError``."""
        joint = JointFeatureMap(labels, arrays["columns"], transitions=transitions)
        if self.learner.capabilities.scores_itself:
            self.learner.restore(arrays, joint)
            self.weights_ = self.learner.weights_
        else:
            stored = len(arrays["emission_values"]) if "emission_values" in arrays else arrays["emission"].size
            self.weights_ = _file_weights(arrays, len(labels), loads_pairs(self.learner.capabilities, len(labels),
                                                                           stored, joint.size))
        self._joint = joint

    def __getstate__(self) -> dict:
        """What pickling (and ``copy.deepcopy``) keeps of a trained model: what its file keeps, the weights as
        :meth:`_model_arrays` gives them, with the parameters as given and the learner's options and fitted
        attributes (``name_``).  Caches stay out (the feature extractor's tables, the hash's memo, the joint map's
        bucket lookup), and so does the state of the learner's run (the weights being trained, averaging sums, the
        generator): an unpickled model predicts as the original and goes on with ``partial_fit`` as a loaded one
        does, from its weights.  The arrays are deflated as a file's members are (:func:`~structlin.modelfile.deflated`),
        so that a pickle is about as large as the model file.  An untrained model, or one whose learner a file cannot
        hold (a user kernel), is kept as it is."""
        state = dict(vars(self))
        if self._joint is None or "weights_" not in state:
            return state
        try:
            arrays = self._model_arrays()
        except ValueError:
            return state
        learner = self.learner
        fitted = {name: value for name, value in vars(learner).items()
                  if name.endswith("_") and not name.startswith("_") and name != "weights_"}
        del state["_joint"], state["weights_"]
        state["_learner"] = type(learner)(**learner.get_params())
        state["_trained"] = (self._joint.labels, self._joint.transitions,
                             {name: deflated(array) for name, array in arrays.items()}, fitted)
        return state

    def __setstate__(self, state: dict) -> None:
        """The model of :meth:`__getstate__`'s ``state``."""
        state = dict(state)
        trained = state.pop("_trained", None)
        vars(self).update(state)
        if trained is not None:
            labels, transitions, arrays, fitted = trained
            self._set_trained(labels, transitions, {name: inflated(data) for name, data in arrays.items()})
            vars(self.learner).update(fitted)

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
        features = meta["features"] if meta["version"] >= 3 else pinned_word_pattern(meta["features"])
        model = cls._construct(FeatureSet.from_dict(features, "feature set"), make_learner(learner["name"], **params),
                               meta)
        model._begin()
        decoder = model.decoder
        if meta["decoder"] != decoder.name:
            raise ModelFormatError(f"{path}: decoder {meta['decoder']!r}; a {cls.kind} decodes with {decoder.name!r}")
        if meta["transitions"] != decoder.uses_transitions:
            raise ModelFormatError(f"{path}: transitions is {meta['transitions']}, but the {decoder.name} decoder "
                                   f"{'uses' if decoder.uses_transitions else 'has no'} label transitions")
        L = len(meta["labels"])
        check_arrays(path, arrays, model._array_specs(meta["version"]), {
            "labels": (L, "the metadata"), "tail": (L * L + 2 * L if meta["transitions"] else 0, "the labels"),
            "buckets": (1 << model.hasher.bits, "the hash bits")})
        try:
            model._set_trained(meta["labels"], meta["transitions"], arrays)  # checks how the arrays fit each other
        except ValueError as err:
            raise ModelFormatError(f"{path}: {err} (file was modified)") from None
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

    def _array_specs(self, version: int = VERSION) -> dict[str, ArraySpec]:
        """What the arrays of a model file of format ``version`` must be: the buckets of the weight rows, then the
        emission and transition weights (:data:`_WEIGHT_ARRAYS`) or, for a learner that scores inputs itself, its
        ``array_specs``, then the task's :attr:`_extra_array_specs`."""
        learned = self.learner.array_specs if self.learner.capabilities.scores_itself else _WEIGHT_ARRAYS[version]
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
    transitions) or ``multiclass`` (each token on its own).  Every learner option is a keyword parameter too
    (``epochs``, ``seed``, ``batch_size``, ``patience``, ``C`` ...; None: the learner's default, e.g. 10
    perceptron epochs or at most 100 max-ent L-BFGS iterations, see :class:`~structlin.learners.maxent.MaxEnt`):
    fit refuses one the learner does not declare, naming its options (``progress``, a display switch, excepted),
    and with a learner instance the options given replace its own in the copy fit trains.  ``bits`` and
    ``hash_seed`` set the feature hash.  ``held_out``: when :meth:`fit` gets no dev, choose the number of
    epochs on this share of the training sentences — a run of them in the order given, the last for seed 0
    (:func:`~structlin.matrix.ordered_held_out`) — and then train on all of them for that many (None: keep the
    last epoch).  The constructor only stores these parameters; ``get_params`` returns them as given,
    while ``learner`` and ``decoder`` read what they name (after fit, the trained learner).

    ``batch_size`` is 4 for a learner given by name (:attr:`learner_defaults`): four sentences decoded with the
    same weights before their updates are applied (in order, each counted at its own visit for averaging): the
    same dev accuracy as the one-at-a-time perceptron in less time (measured in docs/benchmarks.md);
    ``batch_size=1`` is the textbook online algorithm.

    Trained with ``learner="maxent"`` (a linear-chain CRF, or per-token softmax with ``multiclass``), it also
    gives probabilities: :meth:`tag_marginals` / :meth:`predict_marginals` per token, :meth:`sequence_probability`
    per tag sequence.
    """

    kind = "tagger"
    _item = "token"
    _instance = "sentence"
    learner_defaults = {"batch_size": 4}
    #: The tag column the model was trained on, which its file records (None: not known).
    column: str | None = None
    #: The tag dictionary decoding is restricted with (None: none; set by fit and load).
    tagdict_: TagDictionary | None = None

    _decoder: Decoder | None = None
    decoder = _Resolved("_make_decoder")

    @_takes_learner_options
    def __init__(self, features=None, learner="averaged-perceptron", decoder="viterbi", *, bits: int = 22,
                 hash_seed: int = 0, held_out: float | None = None, tag_dictionary: int | None = None,
                 stream: bool = False, **options):
        super().__init__(features, learner, bits=bits, hash_seed=hash_seed, held_out=held_out, stream=stream,
                         **options)
        self.decoder = decoder
        self.tag_dictionary = tag_dictionary

    def __sklearn_tags__(self):
        """scikit-learn's tags (read by scikit-learn only, so imported from it here): no classifier in its sense
        (a label per token, not per sample), and no ``y``: the tags are in the sentences ``X``."""
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    input_tags=InputTags(two_d_array=False))

    def _made(self, learner, given: dict) -> Learner:
        learner = super()._made(learner, given)
        if not self._learns(type(learner)):
            taggers = [name for name, cls in LEARNERS.items() if self._learns(cls)]
            raise OptionValueError(f"learner {learner.name!r} labels single instances (documents), not the tokens "
                                   f"of sentences; a tagger takes one of {', '.join(taggers)}")
        return learner

    def _learns(self, cls: type[Learner]) -> bool:
        """Learners of label chains (``capabilities.sequences``)."""
        return cls.capabilities.sequences

    def _make_decoder(self) -> Decoder:
        """The decoder the parameter names, or the one it is."""
        decoder = vars(self)["decoder"]
        if isinstance(decoder, Decoder):
            return decoder
        if isinstance(decoder, str):
            return make_decoder(decoder)
        raise OptionValueError(f"decoder must be a decoder name or a Decoder, got {decoder!r}")

    def _begin(self, training=None) -> None:
        count = self.tag_dictionary
        if count is not None and (type(count) is not int or count < 1):
            raise OptionValueError(f"tag_dictionary must be a positive number of occurrences or None, got {count!r}")
        self._decoder = self._make_decoder()
        super()._begin(training)
        self.known_words_: set[str] = set()
        self.tagdict_: TagDictionary | None = None

    def _features(self, instances: list, what: str, first: int = 0, *, training: bool = False) -> FeatureMatrix:
        """The feature matrix of token lists ``instances``, carrying every token's word code (``words``), which
        a tag dictionary looks up: for ``training`` data always (a feature cache keeps them for any later run),
        else when the model decodes with a tag dictionary (hashing every token costs a seventh of tagging)."""
        return self._with_word_codes(super()._features(instances, what, first), instances, training=training)

    def _with_word_codes(self, X, instances: list, *, training: bool = False):
        """``X`` (a feature matrix of token lists ``instances``) with every token's word code when a tag dictionary
        needs them (see :meth:`_features`)."""
        if not (training or self.tag_dictionary is not None or self.tagdict_ is not None):
            return X
        return replace(X, words=self.hasher.strings([w for sentence in _words(instances) for w in sentence]))

    def _indexed(self, X: FeatureMatrix, labels: list, classes: list) -> tuple[FeatureMatrix, np.ndarray]:
        """:meth:`_Model._indexed`, and with ``tag_dictionary = k`` the dictionary of the training words seen at
        least ``k`` times, which restricts every decoding, in training and prediction, to the tags seen with
        the word (other words take any tag)."""
        X, y = super()._indexed(X, labels, classes)
        if self.tag_dictionary is not None:
            self.tagdict_ = TagDictionary.from_codes(X.words, y, len(classes), min_count=self.tag_dictionary)
            self._joint.candidates = self.tagdict_
        return X, y

    @property
    def classes_(self) -> list[str]:
        """The tags, sorted: the order of score and marginal columns."""
        self._check_fitted()
        return list(self.joint.labels)

    def _fields(self) -> tuple[str, ...]:
        """The input columns a token holds (:attr:`FeatureSet.fields`) of a trained tagger."""
        self._check_fitted()
        return self.feature_set.fields

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
        """Train on tagged sentences; with ``dev``, keep the epoch with the best dev accuracy.  With ``stream``,
        ``train`` is read once, a part at a time, into a feature cache on disk that training reads back
        (:meth:`_fit_streamed`): any iterable of sentences, never held in memory."""
        if self.stream:
            with _collector_paused():
                self._fit_streamed(_not_text(train, "training data as a sequence of tagged sentences"), dev)
            return self
        with _collector_paused():
            train = _listed(train, "training data")
            self._begin(train)
            words, X, flat_tags = self._training_set(train)
            self._train(X, flat_tags, sorted(set(flat_tags)), self._dev_data(dev))
            self.known_words_ = {w for sentence in _words(words) for w in sentence}
        return self

    def _dev_data(self, dev) -> tuple[FeatureMatrix, list[str]] | None:
        """The features of tagged dev sentences and their tags (flat), or None without dev."""
        if dev is None:
            return None
        words, tags = _tagged(dev, "dev data", self.feature_set.fields)
        return self._features(words, "dev data"), [t for sentence in tags for t in sentence]

    def _sharded(self, cache: FeatureCache) -> ShardedCorpus:
        """The tagger trained from ``cache`` (:meth:`_fit_streamed`): its map, tag dictionary and known words,
        and the corpus the learner reads."""
        if not cache.labels:
            raise StructlinError("training data holds no tokens")
        self._use_features(self.feature_set)  # a new extractor: the old one's tables hold every word type read
        self._joint = JointFeatureMap(sorted(cache.labels), cache.columns, transitions=self.decoder.uses_transitions)
        corpus = ShardedCorpus(cache, self._joint)
        if self.tag_dictionary is not None:
            self.tagdict_ = TagDictionary.from_parts(((X.words, y) for X, y in corpus.parts()), len(cache.labels),
                                                     min_count=self.tag_dictionary)
            self._joint.candidates = self.tagdict_
        self.known_words_ = set(cache.vocabulary)
        return corpus

    def _cached_features(self, tokens: list[list], start: int) -> tuple[FeatureMatrix, Iterator[str]]:
        """What the feature cache keeps of training sentences' ``tokens`` (the first is sentence ``start``): their
        features, and their words."""
        return (self._features(tokens, "training data", start, training=True),
                (w for sentence in _words(tokens) for w in sentence))

    def _streamed_part(self, sentences: list, start: int) -> tuple[list[list], list[str], bytes]:
        """The tokens of tagged ``sentences`` (the first is number ``start`` of the training data), their tags
        (flat), and the bytes the cache's digest reads of them."""
        tokens, tags = _tagged(sentences, "training data", self.feature_set.fields, first=start)
        return tokens, [t for sentence in tags for t in sentence], json.dumps([tokens, tags]).encode()

    @_if_learner("online")
    def partial_fit(self, sentences, classes=None) -> Tagger:
        """One epoch of an online learner over a batch of tagged sentences, going on from the current
        model: the tagger's form of :meth:`Classifier.partial_fit` (``classes``: every tag the batches
        may hold, needed by the first call)."""
        with _collector_paused():
            sentences = _listed(sentences, "training data")
            if self.joint is None:
                self._begin(sentences)
            words, tags = _tagged(sentences, "training data", self.feature_set.fields)
            self._train_online(words, [t for sentence in tags for t in sentence], classes)
            self.known_words_ |= {w for s in _words(words) for w in s}
        return self

    def training_data(self, train) -> tuple[FeatureMatrix, np.ndarray]:
        """What a learner trains on for tagged sentences ``train``: the indexed feature matrix and the gold
        label id of every token.  Sets :attr:`joint`, the map of their tags and features."""
        with _collector_paused():
            train = _listed(train, "training data")
            self._begin(train)
            _, X, flat_tags = self._training_set(train)
            return self._indexed(X, flat_tags, sorted(set(flat_tags)))

    def _training_set(self, train) -> tuple[list[list], FeatureMatrix, list[str]]:
        """The tokens of tagged sentences ``train``, their features and their tags (flat)."""
        words, tags = _tagged(train, "training data", self.feature_set.fields)
        return words, self._training_features(words), [t for sentence in tags for t in sentence]

    def _training_features(self, words: list[list], *, first: bool = True) -> FeatureMatrix:
        if not any(words):
            raise StructlinError("training data holds no tokens")
        return self._features(words, "training data", training=True)

    # --- prediction -----------------------------------------------------------------------------

    def predict(self, sentences) -> list[list[str]]:
        """The tag sequence of every sentence (a list of token strings, or a :class:`Sentence`)."""
        with _collector_paused():
            return self._predict(_tokens(sentences, self._fields()))

    #: Emission scores held at a time while tagging: the input is tagged in parts of at most this many positions ×
    #: labels (2**21 float64 scores: 16 MB; the whole EWT test set at once with 17 tags, 290 sentences with 289).
    prediction_scores = 2**21

    def _predict(self, words: list[list[str]]) -> list[list[str]]:
        self._check_fitted()
        if self.learner.capabilities.scores_itself:
            labels = self._decode(self.joint.index(self._features(words, "input")))
        else:
            labels = np.concatenate([self._decode_scores(self._input_scores(part, start))
                                     for start, part in self._prediction_parts(words)] or [np.zeros(0, np.int64)])
        names = np.array(self.joint.labels, dtype=object)[labels]
        bounds = np.cumsum([0] + [len(w) for w in words])
        return [list(names[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]

    def _prediction_parts(self, words: list[list[str]]) -> Iterator[tuple[int, list[list[str]]]]:
        """``(start, part)``: the token lists ``words`` in consecutive parts of at most :attr:`prediction_scores`
        scores (a longer sentence is a part alone); ``start`` is the number of the part's first sentence."""
        budget, start, held = max(self.prediction_scores // self.joint.n_labels, 1), 0, 0
        for k, tokens in enumerate(words):
            if held + len(tokens) > budget and k > start:
                yield start, words[start:k]
                start, held = k, 0
            held += len(tokens)
        if start < len(words):
            yield start, words[start:]

    def _input_scores(self, words: list[list[str]], first: int) -> Scores:
        """The scores of input token lists ``words`` (the first is input sentence number ``first``), from a
        :class:`~structlin.matrix.FactoredMatrix` of their features: each word type's features at an offset are
        multiplied by the weights once, however often the type occurs."""
        X = self._extractor.factored(words, compact=True)
        if not X.finite():
            self._finite(X.matrix(), "input", first)  # raises, naming the instance
        return self.joint.scores(self.weights_, self.joint.index(self._with_word_codes(X, words)))

    def _decode_scores(self, scores: Scores) -> np.ndarray:
        """The label id of every position, decoding the instances of ``scores`` in batches of similar length."""
        return decode_batches(self.decoder, lambda batch: batch, scores)

    def tag(self, tokens: Sequence[str]) -> list[tuple[str, str]]:
        """NLTK ``TaggerI.tag``: ``[(word, tag), ...]`` for one sentence."""
        return self.tag_sents([tokens])[0]

    def tag_sents(self, sentences: Iterable[Sequence[str]]) -> list[list[tuple[str, str]]]:
        """NLTK ``TaggerI.tag_sents``: tag many sentences in one batch (``(word, pos, tag)`` triples when
        the feature set reads a POS column too, as NLTK's chunkers give)."""
        with _collector_paused():
            tokens = _tokens(sentences, self._fields())
            if len(self._fields()) == 1:  # token strings
                return [list(zip(words, tags)) for words, tags in zip(tokens, self._predict(tokens))]
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
        return [[dict(zip(self.joint.labels, row)) for row in sentence.tolist()] for sentence in marginals]

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
            raise StructlinError(f"unknown tag {unknown!r}; the model's tags are {self.joint.labels}")
        y = self.joint.encode_labels(tags)
        scores = self.joint.scores(self.weights_, self.joint.index(self._features([words], "input")))
        return float(scores.score(y)[0] - inference.marginals(scores, summed_edges=True).log_partition[0])

    def sequence_probability(self, tokens, tags) -> float:
        """``p(y|x) = exp(w·φ(x, y) − log Z(x))``: see :meth:`sequence_log_probability`."""
        return float(np.exp(self.sequence_log_probability(tokens, tags)))

    # --- evaluation -----------------------------------------------------------------------------

    def report(self, gold, *, top_confusions: int = 10,
               progress: Callable[[int], object] | None = None) -> TaggingReport:
        """Token, sentence and known/unknown-word accuracy, per-tag P/R/F1 and confusions on ``gold``;
        ``progress(n)`` is called as each ``n`` sentences are tagged (a progress bar's ``update``)."""
        return self._report(*_tagged(gold, "gold data", self._fields()), top_confusions, progress)

    def _report(self, tokens: list[list], tags: list[list[str]], top_confusions: int = 10,
                progress: Callable[[int], object] | None = None) -> TaggingReport:
        """:meth:`report` of gold sentences already read into their ``tokens`` and ``tags``."""
        predicted = [tags for part in _in_parts(self._predict, tokens, progress) for tags in part]
        return evaluate_tagging(tags, predicted, words=_words(tokens), known_words=self.known_words_,
                                top_confusions=top_confusions)

    def accuracy(self, gold) -> float:
        """Token accuracy on tagged sentences (NLTK ``TaggerI.accuracy``); tags never seen in training count as
        errors, with an :class:`UnseenLabelWarning` naming them, and no token at all is an error."""
        return self._accuracy(gold, caller_depth=3)

    def _accuracy(self, gold, caller_depth: int) -> float:
        """:meth:`accuracy`, its warning attributed to the code ``caller_depth`` frames above."""
        self._check_fitted()
        tokens, tags = _tagged(gold, "gold data", self._fields())
        flat = [tag for sentence in tags for tag in sentence]
        if not flat:
            raise CorpusFormatError("gold data", None, "no tokens: accuracy is undefined")
        _dev_label_ids(self.joint, flat, "tokens", caller_depth, data="gold data")  # unseen tags: a warning
        return self._report(tokens, tags).accuracy

    evaluate = accuracy

    def score(self, X, y=None) -> float:
        """Token accuracy on tagged sentences ``X``, as :meth:`fit` takes them (scikit-learn's ``score``, so that
        ``GridSearchCV`` and ``cross_val_score`` score a tagger); the tags are in ``X``, so ``y`` stays None."""
        if y is not None:
            raise OptionValueError("a tagger scores tagged sentences: their tags are in X, and y must be None")
        return self._accuracy(X, caller_depth=3)

    # --- persistence (see _Model) --------------------------------------------------------------

    def _extra_metadata(self) -> dict:
        return {"column": self.column, "known_words": sorted(self.known_words_), "tag_dictionary": self.tag_dictionary}

    def _extra_arrays(self) -> dict:
        return {} if self.tagdict_ is None else self.tagdict_.to_arrays()

    def _array_specs(self, version: int = VERSION) -> dict[str, ArraySpec]:
        """The arrays of :meth:`_Model._array_specs`, and the tag dictionary's when the model has one."""
        specs = super()._array_specs(version)
        return specs if self.tag_dictionary is None else {**specs, **TagDictionary.array_specs}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self.column = meta["column"]
        self.known_words_ = set(meta["known_words"])
        if self.tag_dictionary is not None:
            self.tagdict_ = TagDictionary.from_arrays(arrays, len(meta["labels"]))
            self._joint.candidates = self.tagdict_

    def _set_trained(self, labels: list, transitions: bool, arrays: dict) -> None:
        """:meth:`_Model._set_trained`, the joint map restricted by the tag dictionary the model has (an
        unpickled one; a loaded one gets it in :meth:`_restore`)."""
        super()._set_trained(labels, transitions, arrays)
        self._joint.candidates = vars(self).get("tagdict_")

    @classmethod
    def _metadata_specs(cls) -> dict[str, tuple[Callable[[object], bool], str]]:
        return {**super()._metadata_specs(), "known_words": (_strings, "a list of word strings"),
                "labels": (lambda v: _strings(v) and all(v) and _distinct(v), "a list of distinct label strings"),
                # any column a file names (CoNLL-U's upos/xpos, NLTK's universal, a column file's own ner, ...)
                "column": (lambda v: v is None or (isinstance(v, str) and v.split() == [v]),
                           "null or the name of a tag column (a word without whitespace)"),
                "tag_dictionary": (lambda v: v is None or (type(v) is int and v >= 1), "null or a positive count")}

    @classmethod
    def _construct(cls, feature_set, learner, meta: dict) -> Tagger:
        return cls(feature_set, learner, meta["decoder"], bits=meta["hash"]["bits"], hash_seed=meta["hash"]["seed"],
                   tag_dictionary=meta.get("tag_dictionary"))

    # --- explanations (structlin.explain) ---------------------------------------------------------

    def explain(self, x, *, index: int | None = None, top: int = 10) -> Explanation | list[Explanation]:
        """Why the tagger tags one sentence ``x`` (token strings, ``(word, pos)`` tuples for a chunker, or a
        :class:`Sentence`) as it does: for every token, or for the token ``index`` only, the features that pushed
        its tag and the runner-up, contribution = value × weight, and the transitions beside the chosen path
        (:func:`~structlin.explain.explain_tokens`; ``format()`` shows the ``top`` features)."""
        self._check_fitted()
        return explain_tokens(self, self._extractor, _tokens([x], self._fields())[0], index, top=top)

    def top_features(self, k: int = 10, sample=()) -> TopFeatures:
        """The ``k`` heaviest weight rows of every tag, with the features of the known words and of the sentences
        of ``sample`` that hash to them (:func:`~structlin.explain.top_token_features`)."""
        self._check_fitted()
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise OptionValueError(f"k must be a positive integer, got {k!r}")
        return top_token_features(self, k, _tokens(sample, self._fields()))


def _in_parts(predict: Callable[[list], object], items: list, progress: Callable[[int], object] | None,
              size: int = 2048) -> list:
    """``predict`` of ``items`` in parts of ``size`` (each item's prediction is its own: the parts change nothing
    but when ``progress(len(part))`` is called); one part without ``progress``.  Returns the parts' results."""
    if progress is None:
        return [predict(items)]
    results = []
    for start in range(0, max(len(items), 1), size):
        results.append(predict(items[start : start + size]))
        progress(len(items[start : start + size]))
    return results


def _document_kind(document) -> str | None:
    """``text``, ``fields`` (a tuple or list of strings), ``numeric`` (a mapping of column numbers to values: an
    SVMlight line, a row of a numeric matrix), ``featureset`` (another mapping: an NLTK featureset; an empty one
    fits either), or None."""
    if isinstance(document, str):
        return "text"
    if isinstance(document, Mapping):
        if not document:
            return "empty"
        numbered = all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in document)
        return "numeric" if numbered else "featureset"
    if isinstance(document, (tuple, list)) and all(isinstance(field, str) for field in document):
        return "fields"
    return None


def _documents(X, what: str, expected: str) -> tuple[list, int | None]:
    """The documents of ``X`` (``what``: training data, input ...) and, for a matrix of numbers, its number of
    columns (None for other documents).

    ``X`` is a sequence of documents (a list, tuple, 1-D array, pandas Series or any other iterable but a str,
    bytes or a dict), or a matrix of numbers: a 2-D array, a sequence of rows of numbers or a scipy sparse
    matrix, whose rows become feature dicts ``{column: value}`` of their non-zero entries (the documents the
    ``numeric`` feature set reads).  A 2-D array of strings is rows of fields.  ``expected`` says what ``X``
    should be, in the ``TypeError`` of a bare string (:func:`_not_text`) or of a value that is no sequence."""
    if scipy.sparse.issparse(X):
        return _matrix_rows(X, what), X.shape[-1]
    _not_text(X, expected)
    if isinstance(X, (bytes, Mapping)) or not (hasattr(X, "__array__") or isinstance(X, Iterable)):
        raise TypeError(f"expected {expected}, got {type(X).__name__}")
    _ordered(X, expected)
    if not hasattr(X, "__array__"):
        documents = list(X)
        rows = documents and all(isinstance(d, (list, tuple)) and d and all(isinstance(v, numbers.Real) for v in d)
                                 for d in documents)
        if not rows:
            return documents, None
    array = np.asarray(X if hasattr(X, "__array__") else documents)
    if array.dtype.kind == "c":
        raise CorpusFormatError(what, None, "Complex data not supported: feature values are real numbers")
    if array.ndim == 2 and not (array.dtype.kind in "OU" and all(isinstance(v, str) for v in array.flat)):
        return _matrix_rows(array.astype(np.float64), what), array.shape[1]
    if array.ndim == 1 and array.dtype.kind in "biuf":
        raise CorpusFormatError(what, None, "expected documents or a 2-D array of numbers, got a 1-D array of numbers. "
                                            "Reshape your data: array.reshape(-1, 1) if it holds one feature, "
                                            "array.reshape(1, -1) if it is one document")
    if array.ndim not in (1, 2):
        raise CorpusFormatError(what, None, f"expected a sequence of documents or a 2-D array of numbers, got an "
                                            f"array of shape {array.shape}")
    return array.tolist(), None  # texts, feature dicts, tuples of fields (a 2-D array of strings: rows of fields)


def _matrix_rows(matrix, what: str) -> list[dict]:
    """One feature dict ``{column: value}`` per row of a 2-D array of numbers or a scipy sparse matrix: its
    non-zero entries (NaN and infinities included, which the feature check then names)."""
    if matrix.ndim != 2:
        raise CorpusFormatError(what, None, f"expected a matrix of one row per document, got shape {matrix.shape}")
    if matrix.shape[1] == 0:
        raise CorpusFormatError(what, None, f"0 feature(s) (shape={matrix.shape}) while a minimum of 1 is required: "
                                            "rows without columns")
    rows = scipy.sparse.csr_array(matrix, dtype=np.float64)
    bounds, columns, values = rows.indptr.tolist(), rows.indices.tolist(), rows.data.tolist()
    return [{c: v for c, v in zip(columns[a:b], values[a:b]) if v != 0} for a, b in zip(bounds[:-1], bounds[1:])]


def _label_values(y, what: str, item: str = "document", first: int = 0) -> list:
    """The labels of ``y`` (one per ``item``) as they are, numpy's scalars made Python's (``np.int64(1)`` is
    ``1``): labels of any hashable type.  None, an empty string, a NaN or infinity, an unhashable label or a
    ``y`` of more than one dimension raise (naming the item, numbered from ``first + 1``)."""
    if y is None:
        raise CorpusFormatError(what, None, "no labels: a classifier requires y to be passed, but the target y is None")
    expected = f"{what} labels as a sequence, one per {item}"
    if not (hasattr(y, "__array__") or isinstance(y, Iterable)):
        raise TypeError(f"expected {expected}, got {type(y).__name__}")
    _not_text(y, expected)
    _ordered(y, expected)
    if hasattr(y, "__array__"):
        array = np.asarray(y)
        if array.ndim != 1:
            raise CorpusFormatError(what, None, f"expected labels as a sequence, one per {item}, got an array of shape "
                                                f"{array.shape}")
        labels = array.tolist()
    else:
        labels = [label.item() if isinstance(label, np.generic) else label for label in y]
    for k, label in enumerate(labels, first):
        if label is None or (isinstance(label, str) and not label):
            raise CorpusFormatError(what, None, f"{item} {k + 1} has an empty label")
        if isinstance(label, float) and not math.isfinite(label):
            raise CorpusFormatError(what, None, f"{item} {k + 1} has the label {label}, which is not finite")
        if not _hashable(label):
            raise CorpusFormatError(what, None, f"{item} {k + 1} has the label {reprlib.repr(label)} "
                                                f"({type(label).__name__}), which is not hashable")
    return labels


def _add_distinct_pairs(pairs: dict, featuresets) -> dict:
    """``pairs`` with the ``(name, value)`` pairs of ``featuresets`` it lacks added, in the order first seen (values
    that cannot be dict keys compared by their ``repr``)."""
    for featureset in featuresets:
        for pair in featureset.items():
            pairs.setdefault(pair if _hashable(pair[1]) else repr(pair), pair)
    return pairs


#: How an error names each kind of document (:func:`_document_kind`): one, and many.
_KIND_NAMES = {"text": ("a text", "texts"), "fields": ("a tuple of fields", "tuples of fields"),
               "numeric": ("a numeric feature dict", "numeric feature dicts"),
               "featureset": ("a feature dict of named features", "feature dicts of named features"),
               "empty": ("an empty feature dict", "empty feature dicts")}


def _kind_name(kind: str | None, fields: int | None = None, *, many: bool = False) -> str:
    """How an error names a kind of document (:func:`_document_kind`), one or ``many``; tuples with their number of
    ``fields`` when it is given."""
    if kind == "fields" and fields is not None:
        return f"{'tuples' if many else 'a tuple'} of {fields} field{'s' * (fields != 1)}"
    one, several = _KIND_NAMES.get(kind, ("no text, tuple of fields or feature dict", "other documents"))
    return several if many else one


class TextOrder:
    """Whether training documents come in the order of their texts (a file put through ``sort``), read a part at a
    time: per label, how many consecutive documents are in order (code points or case folded, up or down).
    Such an order says nothing of where the documents came from, so that what is held out to choose settings
    on is then drawn at random instead of as runs (:func:`~structlin.matrix.ordered_held_out`)."""

    #: The share of consecutive pairs in order (of at least :data:`PAIRS`) that makes the order sorted.
    SHARE, PAIRS = 0.9, 20

    def __init__(self):
        self.last: dict = {}
        self.counts = np.zeros(4, dtype=np.int64)  # in order: up, down, folded up, folded down
        self.pairs = 0

    def add(self, documents: list, labels: list) -> None:
        for document, label in zip(documents, labels):
            if isinstance(document, (list, tuple)) and all(isinstance(part, str) for part in document):
                document = "\t".join(document)
            if not isinstance(document, str):
                continue  # feature dicts, numbers: no text order
            key = (document, document.casefold())
            before = self.last.get(label)
            if before is not None:
                self.pairs += 1
                self.counts += (before[0] <= key[0], before[0] >= key[0], before[1] <= key[1], before[1] >= key[1])
            self.last[label] = key

    @property
    def sorted(self) -> bool:
        return self.pairs >= self.PAIRS and int(self.counts.max()) >= self.SHARE * self.pairs


#: A feature value below 0 for a learner of counts: the instance, the template, the value and the learner.
_NEGATIVE_COUNT = ("{} has the value {:g} of template {!r}, and {} counts how often each feature occurs: feature "
                   "values must be 0 or more (a learner of any values: averaged-perceptron)")


def _form_of(documents: list, columns: int | None = None) -> dict | None:
    """What a classifier records of its training documents, and checks later ones against (:func:`_refuse_misfit`):
    their ``kind`` (:func:`_document_kind`), a tuple's number of ``fields`` (its templates read fields by position)
    and a numeric matrix's number of ``columns``.  The form of the first document that is no empty feature dict (of
    feature dicts of named features when all are); None for no documents, or for a first one of no kind known here
    (a user's template may read it: nothing to check)."""
    if columns is not None:
        return {"kind": "numeric", "columns": columns}
    for document in documents:
        kind = _document_kind(document)
        if kind == "fields":
            return {"kind": kind, "fields": len(document)}
        if kind != "empty":
            return None if kind is None else {"kind": kind}
    return {"kind": "featureset"} if documents else None


#: The number a form (:func:`_form_of`) holds for each kind: a tuple's fields (always), a matrix's columns (if any).
_FORM_SIZES = {"text": None, "fields": "fields", "numeric": "columns", "featureset": None}


def _is_form(value) -> bool:
    """Whether a model file's ``inputs`` is a form :func:`_form_of` gives."""
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(kind, str) or kind not in _FORM_SIZES:
        return False
    size = _FORM_SIZES[kind]
    return set(value) <= {"kind", size} and (size in value or kind != "fields") and (
        size not in value or (type(value[size]) is int and value[size] >= 0))


def _refuse_misfit(documents: list, form: dict | None, what: str, first: int = 0, *, training: bool = False) -> None:
    """Refuse the first of ``documents`` (number ``first + 1``) that does not fit ``form`` (:func:`_form_of`): of
    another kind (an empty feature dict fits either kind of dict), or a tuple of another number of fields, whose
    features would silently mean something else.  The :class:`CorpusFormatError` names it and the form expected:
    that of the first documents of ``training`` data, else the one the model was trained on.  No form: no check."""
    if form is None or (form["kind"] == "text" and set(map(type, documents)) <= {str}):  # texts: at C speed
        return
    kind, fields = form["kind"], form.get("fields")
    fitting = (kind, "empty") if kind in ("numeric", "featureset") else (kind,)
    k = next((k for k, d in enumerate(documents)
              if _document_kind(d) not in fitting or (fields is not None and len(d) != fields)), None)
    if k is None:
        return
    other, number = _document_kind(documents[k]), first + k + 1
    got = _kind_name(other, len(documents[k]) if other == kind else None)
    expected = _kind_name(kind, fields if other == kind or not training else None, many=True)
    if training:
        mix = "" if other == kind else f"documents mix {', '.join(sorted({other or 'other', kind}))}: "
        raise CorpusFormatError(what, None, f"{mix}document {number} is {got}, but the first documents are {expected}")
    raise CorpusFormatError.of_instance(what, "document", number, f"is {got}, but the model was trained on {expected}")


class _LabelledStream:
    """The ``(document, label)`` pairs of a stream (:meth:`Classifier.fit` with ``stream``): the documents of ``X``
    with the labels of ``y``, or, without ``y``, the labelled :class:`~structlin.documents.Document` objects ``X``
    yields; read again at every iteration when ``X`` and ``y`` are (:attr:`reiterable`)."""

    def __init__(self, X, y):
        self.X = _not_text(X, "training data as a sequence of documents (a list of texts, not one text)")
        self.y = None if y is None else _not_text(y, "training data labels as a sequence, one per document")
        self.reiterable = _reiterable(self.X) and (self.y is None or _reiterable(self.y))

    def __iter__(self) -> Iterator[tuple]:
        labels = None if self.y is None else iter(self.y)
        number = 0
        for number, document in enumerate(self.X, 1):
            if labels is None:
                if not isinstance(document, Document) or document.label is None:
                    raise CorpusFormatError("training data", None, f"document {number} is {type(document).__name__}: "
                                            "without y, a stream yields labelled Documents")
                yield document.text, document.label
                continue
            label = next(labels, _END)
            if label is _END:
                raise CorpusFormatError("training data", None, f"{number} documents or more but {number - 1} labels")
            yield document, label
        if labels is not None and next(labels, _END) is not _END:
            raise CorpusFormatError("training data", None, f"{number} documents but more labels")


_END = object()  # the end of an iterator, for next()


def _hashable(value) -> bool:
    """Whether ``value`` can be a dict key (a label): of a hashable type, and a tuple of such values."""
    return isinstance(value, Hashable) and (not isinstance(value, tuple) or all(map(_hashable, value)))


def _label_set(labels: list, what: str) -> list:
    """``classes_``: the distinct labels, in :func:`~structlin.joint.ordered_labels`' order; fewer than two raise."""
    classes = ordered_labels(labels)
    n = len(classes)
    unwritable = next((c for c in classes if isinstance(c, str) and has_lone_surrogate(c)), None)
    if unwritable is not None:  # what os.fsdecode makes of an undecodable byte: no text file or model can hold it
        raise CorpusFormatError(what, None, f"label {unwritable!r} holds a lone surrogate (an undecodable byte "
                                            "escaped): expected text")
    if n < 2:
        raise CorpusFormatError(what, None, f"{n} distinct label{'s' * (n != 1)} ({n} class{'es' * (n != 1)}); a "
                                            "classifier needs two or more")
    return classes


def _label_array(labels: list) -> np.ndarray:
    """Labels as a numpy array: of their own dtype when they are all ``int``, ``float``, ``bool`` or ``str`` (one
    type), else of objects, so that a mixture keeps every label's type (``1`` and ``"1"`` stay apart)."""
    if len({type(label) for label in labels}) == 1 and type(labels[0]) in (int, float, bool, str):
        try:
            array = np.array(labels)
        except OverflowError:  # integers beyond 64 bits
            array = None
        # numpy's own dtype only when it keeps every label as it is: not for integers of 2**63 and more (made
        # floats) or strings that end in NUL characters (dropped by numpy's strings)
        if array is not None and array.dtype != object and array.tolist() == list(labels):
            return array
    array = np.empty(len(labels), dtype=object)
    array[:] = labels
    return array


@dataclass
class _Trial:
    """One candidate of ``learner="auto"`` (:meth:`Classifier._choose_learner`): its learner, extractor, map, indexed
    training matrix and ids, and once scored its score and the held-out positions of its epochs' run."""

    learner: Learner
    extractor: DocumentFeatureExtractor
    joint: JointFeatureMap
    X: FeatureMatrix
    y: np.ndarray
    score: float | None = None
    held_positions: int | None = None


class Classifier(_Model, ClassifierI):
    """A multiclass classifier: ``ŷ = argmax_y w·φ(x, y)`` with one weight block per label, the
    :class:`~structlin.decoders.Multiclass` decoder and any learner (the same as the tagger's).

    Documents are texts, tuples of fields or feature dicts, as the feature set expects (a text feature set, or
    one that reads fields or dicts: see ``features/``); a 2-D array of numbers or a scipy sparse matrix gives
    one feature dict ``{column: value}`` per row.  Labels are of any hashable type and are kept as they are:
    ``classes_`` is a numpy array of them (in :func:`~structlin.joint.ordered_labels`' order: numbers, then
    strings, each sorted) and ``predict`` returns labels of the same types; a model file keeps strings,
    integers, numbers and true/false.

    Parameters are those of :class:`Tagger` but the decoder (every learner option among them, ``batch_size``
    8 and ``relative_margin`` 4 for a learner given by name that takes them: :attr:`learner_defaults`).  A
    scikit-learn classifier (``fit``,
    ``partial_fit``, ``predict``, ``decision_function``, ``score``, ``classes_``, ``get_params`` /
    ``set_params``; ``predict_proba`` and ``predict_log_proba`` only with the probabilistic learners ``maxent``,
    ``naive-bayes`` and ``bernoulli-nb``) and an NLTK ``ClassifierI`` (``classify``, ``classify_many``,
    ``labels``, ``prob_classify``).  An empty document has no features, so every label scores 0 unless the
    feature set has a ``bias`` template; ties go to the first label of ``classes_``.  ``features=None``
    chooses the feature set by the kind of the training documents; ``held_out``, as for :class:`Tagger`,
    chooses the epochs on a share of the training documents when :meth:`fit` gets no dev: of each label's documents,
    one run in the order given (documents sorted by their texts, :class:`TextOrder`, are read in a seeded random
    order first).

    ``batch_size=8`` scores eight documents with the same weights before applying their updates (as the
    tagger's four sentences): chosen by the defaults procedure on dev (docs/benchmarks.md, "Defaults"), where
    it scored as well as one at a time in two thirds of the time; ``batch_size=1`` is the textbook online
    algorithm.  ``relative_margin=4`` (the perceptrons' margin τ = 4ρ, where a tagger keeps the learners' own 2):
    chosen by the same procedure on the document corpora's dev data, with dev sets split by file or by date
    (docs/benchmarks.md, "The document classifier's margin").  ``learner="auto"`` trains the averaged perceptron and
    naive Bayes and keeps the one scoring better on dev, or without dev on the ``held_out`` share
    (:mod:`structlin.learners.choice`, :meth:`_choose_learner`).
    """

    kind = "classifier"
    _item = "document"
    #: The (name, value) pairs of the NLTK featuresets of the last fit in this process (none after a load).
    _featureset_pairs: list = []
    #: The form of the training documents (:func:`_form_of`), which later ones must have: None before fit, for a model
    #: of a file written before it was kept, or for documents of no kind known here (nothing to check).
    _input_form: dict | None = None
    _instance = "document"
    learner_defaults = {"batch_size": 8, "relative_margin": 4.0}
    extraction_threads = 2
    decoder: Decoder = Multiclass()
    _estimator_type = "classifier"

    @_takes_learner_options
    def __init__(self, features=None, learner="averaged-perceptron", *, bits: int = 22, hash_seed: int = 0,
                 held_out: float | None = None, stream: bool = False, **options):
        super().__init__(features, learner, bits=bits, hash_seed=hash_seed, held_out=held_out, stream=stream,
                         **options)

    def __sklearn_tags__(self):
        """scikit-learn's tags (read by scikit-learn only, so imported from it here): a classifier of one label
        per document that takes 2-D arrays of numbers and sparse matrices as well as documents."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        # string: no, in scikit-learn's sense of strings among the numbers of a 2-D array (texts come as a sequence)
        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags(sparse=True, dict=True))

    def _make_extractor(self, learner: Learner | None = None) -> DocumentFeatureExtractor:
        """The extractor of the values ``learner`` (the model's) learns from: counts, presence, a constant feature."""
        capabilities = (learner or self.learner).capabilities
        return DocumentFeatureExtractor(self.feature_set, self.hasher, constant=capabilities.needs_bias,
                                        presence=capabilities.presence, counts=capabilities.counts)

    #: The feature set of ``features=None`` for each kind of document: texts, tuples of fields, feature dicts.
    default_features = {"text": "text-ngrams", "fields": "fields", "featureset": "nltk", "numeric": "numeric"}
    default_features_rule = (f"{default_features['text']} for texts, {default_features['fields']} for tuples of "
                             f"fields, {default_features['featureset']} for NLTK featuresets (every name=value a "
                             f"feature), {default_features['numeric']} for SVMlight and numeric arrays")

    def _default_features(self, documents) -> FeatureSet:
        """The feature set of :attr:`default_features` for the kind of the training documents (:func:`_form_of`;
        that they are all alike, :func:`_refuse_misfit` checks)."""
        if not documents:
            raise CorpusFormatError("training data", None, "no documents")
        form = _form_of(documents)
        if form is None:
            raise CorpusFormatError("training data", None, "documents must be texts, tuples of fields or feature "
                                                           f"dicts, got {type(documents[0]).__name__}")
        return FeatureSet.load(self.default_features[form["kind"]])

    @property
    def classes_(self) -> np.ndarray:
        """The labels, in the order of the score columns (:func:`_label_array`)."""
        self._check_fitted()
        return _label_array(self.joint.labels)

    @property
    def random_state(self) -> int | None:
        return self.learner.get_params().get("seed")

    # --- training -------------------------------------------------------------------------------

    def _inputs(self, X, what: str, expected: str, *, start: bool = False) -> list:
        """The documents of ``X`` (:func:`_documents`), all of one form (:func:`_refuse_misfit`): when a run
        ``start``s, that of the first of them (:func:`_form_of`), then recorded as :attr:`_input_form`; later, the
        recorded one.  A matrix's rows need no check (numeric feature dicts), only its number of columns."""
        documents, columns = _documents(X, what, expected)
        form = _form_of(documents, columns) if start else self._input_form
        if columns is None:
            _refuse_misfit(documents, form, what, training=start)
        elif form is not None and form["kind"] != "numeric":
            raise CorpusFormatError(what, None, f"X is a matrix of numbers (numeric feature dicts), but the model was "
                                                f"trained on {_kind_name(form['kind'], form.get('fields'), many=True)}")
        elif form is not None and form.get("columns", columns) != columns:
            raise CorpusFormatError(what, None, f"X has {columns} features, but {type(self).__name__} is expecting "
                                                f"{form['columns']} features as input")
        if start:
            self._input_form = form
        return documents

    def trained_on(self, kind: str) -> bool:
        """Whether the model was trained on documents of ``kind``: ``text``, ``fields`` (tuples of fields),
        ``featureset`` (feature dicts of named features) or ``numeric`` (numeric feature dicts, a matrix's rows); False
        for a model of a file written before the kind was kept."""
        return self._input_form is not None and self._input_form["kind"] == kind

    @property
    def n_features_in_(self) -> int:
        """The number of columns of the numeric matrix the model was trained on (scikit-learn's attribute; none after
        training on documents)."""
        columns = (self._input_form or {}).get("columns")
        if columns is None:
            raise AttributeError(f"this {self.kind} was not trained on a matrix of numbers: it has no n_features_in_")
        return columns

    def _labelled(self, X, y, what: str, *, start: bool = False) -> tuple[list, list]:
        """The documents of ``X`` and their labels ``y`` (:func:`_label_values`), as many of each."""
        documents = self._inputs(X, what, f"{what} as a sequence of documents (a list of texts, not one text)",
                                 start=start)
        labels = _label_values(y, what)
        if len(documents) != len(labels):
            raise CorpusFormatError(what, None, f"{len(documents)} documents but {len(labels)} labels")
        return documents, labels

    def fit(self, X, y=None, dev=None) -> Classifier:
        """Train on documents ``X`` and their labels ``y``; ``dev = (documents, labels)`` keeps the best dev
        epoch.  Starts a run from the parameters, as every fit does.

        With ``stream``, ``X`` and ``y`` are read once, a part at a time, into a feature cache on disk that
        training reads back (:meth:`_fit_streamed`): any iterables (a generator, a reader), never held in memory;
        without ``y``, ``X`` yields labelled :class:`~structlin.documents.Document` objects (a stream of a corpus:
        :func:`structlin.sources.stream_documents`).  Its labels are then strings, numbers or true/false (a
        cache records them).  A matrix (2-D array, scipy sparse matrix) gives its rows, as without ``stream``."""
        if self.stream:
            self._input_form = None  # recorded as the stream is read (_stream_sample), a matrix's here
            if scipy.sparse.issparse(X) or getattr(X, "ndim", None) == 2:  # in memory already: its rows, as in fit
                X = self._inputs(X, "training data", "", start=True)
            with _collector_paused():
                self._fit_streamed(_LabelledStream(X, y), dev)
            return self
        with _collector_paused():
            documents, labels = self._labelled(X, y, "training data", start=True)
            classes = _label_set(labels, "training data")
            self._begin(documents)
            order = TextOrder()
            order.add(documents, labels)
            if order.sorted:  # an order that says nothing: read in a seeded random one (held-out runs are then random)
                shuffled = np.random.default_rng(self.random_state or 0).permutation(len(labels))
                documents, labels = [documents[k] for k in shuffled], [labels[k] for k in shuffled]
            # the names of NLTK featuresets, kept to name the weights (most_informative_features)
            pairs = _add_distinct_pairs({}, documents) if self.trained_on("featureset") else {}
            self._featureset_pairs = list(pairs.values())
            candidates = self._candidate_learners()
            if len(candidates) > 1:
                self._choose_learner(candidates, documents, labels, classes, dev)
            else:
                self._train(self._training_features(documents, first=True), labels, classes, self._dev_data(dev))
        return self

    def _choose_learner(self, candidates: list[Learner], documents: list, labels: list, classes: list, dev) -> None:
        """``learner="auto"`` (:mod:`structlin.learners.choice`): each of the (untrained) ``candidates`` trained on the
        same training part and scored on the same data — ``dev``, else the ``held_out`` share (the runs of
        :meth:`_held_out_run`) — from one extraction of the documents' counts, made into each candidate's values; the
        best score (ties: the first candidate) keeps its model, finished as it finishes alone (:meth:`_refit`, or its
        own fit on all the documents without dev).  Without dev, a candidate that scores its held-out share without a
        run of epochs (naive Bayes: :meth:`~.learners.Learner.held_out_score`) is made and scored in a second thread,
        beside the others' runs (numpy and scipy let go of the interpreter in their loops: the choice costs little more
        than the perceptron's run on two cores).  ``chosen_["learner"]`` names the one kept, and ``candidates_``
        begins with each candidate's score."""
        if dev is None and not self.held_out:
            raise OptionValueError(f"learner {AUTO!r} chooses on dev data or on a held-out share: give dev or held_out")
        negatives: list = []
        counts = self._counts(documents, negatives)
        if negatives:  # no learner of counts: they would count |value| times a feature of a negative value
            document, template, value = min(negatives)
            left = [c.name for c in candidates if c.capabilities.counts]
            candidates = [c for c in candidates if not c.capabilities.counts]
            warnings.warn(f"learner {AUTO!r}: {', '.join(left)} left out: " + _NEGATIVE_COUNT.format(
                f"training {self._instance} {document}", value, template, "it"), stacklevel=3)
        if self.feature_set.values.endswith("tfidf"):  # one idf, every candidate's
            self._extractor.fit_idf(counts)
        idf = self._extractor.idf_buckets, self._extractor.idf, self._extractor.idf_unseen
        if dev is not None:  # counted once; each candidate makes its values of them
            dev_documents, dev_labels = self._dev_documents(dev)
            dev_counts = self._counts(dev_documents)
        beside = [dev is None and "epochs" not in learner.get_params() for learner in candidates]
        in_turn = [k for k, side in enumerate(beside) if not side]
        trials: list = [None] * len(candidates)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as side:
            for k in (k for k, side in enumerate(beside) if side):  # a copy of the buckets: indexing renumbers them
                copy = replace(counts, indices=counts.indices.copy())
                trials[k] = side.submit(self._scored_beside, candidates[k], copy, idf, labels, classes)
            for k in in_turn:  # the last one made renumbers the counts' buckets in place
                own = counts if k == in_turn[-1] else replace(counts, indices=counts.indices.copy())
                trial = trials[k] = self._trial(candidates[k], own, idf, labels, classes)
                self._use(trial)
                if dev is not None:
                    dev_values = self._finite(trial.extractor.transform(dev_counts), "dev data"), dev_labels
                    self._fit_learner(trial.X, trial.y, self._indexed_dev(dev_values, caller_depth=4))
                else:  # a learner of epochs (the others are beside): they are chosen on the held-out share
                    trial.held_positions = self._held_out_run(trial.X, trial.y)
                trial.score = trial.learner.best_dev_accuracy()
            del counts
            trials = [trial.result() if isinstance(trial, concurrent.futures.Future) else trial for trial in trials]
        scores = [float(trial.score) for trial in trials]
        best = trials[scores.index(max(scores))]  # the first of equals
        del trials
        self._use(best)
        if dev is not None:
            self.weights_, self.history_ = self.learner.weights_, self.learner.history_
        elif best.held_positions is not None:
            self._refit(best.X, best.y, best.held_positions)
        else:
            self._fit_learner(best.X, best.y, None)
        self.learner.chosen_ = {"learner": self.learner.name, **self.learner.chosen_}
        chosen_among = [{"learner": c.name, "dev_accuracy": score} for c, score in zip(candidates, scores)]
        self.learner.candidates_ = [*chosen_among, *self.learner.candidates_]

    def _trial(self, learner: Learner, counts: FeatureMatrix, idf: tuple, labels: list, classes: list) -> _Trial:
        """A candidate of :meth:`_choose_learner` made from the training documents' ``counts`` (spent) and the idf: its
        extractor, values, map and ids; the model is not touched (a second thread may make one)."""
        extractor = self._make_extractor(learner)
        extractor.set_idf(*idf)
        values = self._finite(extractor.transform(counts), "training data")
        joint, X, y = _indexed(values, labels, classes, self.decoder)
        return _Trial(learner, extractor, joint, X, y)

    def _scored_beside(self, learner: Learner, counts: FeatureMatrix, idf: tuple, labels: list, classes: list):
        """:meth:`_trial`, scored on its held-out share by the learner's ``held_out_score`` (which need make no
        weights): what the second thread of :meth:`_choose_learner` does, touching nothing of the model's."""
        trial = self._trial(learner, counts, idf, labels, classes)
        rest, rest_y, held = hold_out_instances(trial.X, trial.y, self.held_out, learner.get_params().get("seed") or 0)
        trial.score = learner.held_out_score(trial.joint, self.decoder, rest, rest_y, held,
                                             bias_row=_bias_row(trial.extractor, trial.joint))
        return trial

    def _use(self, trial: _Trial) -> None:
        """Make ``trial``'s learner, extractor and map the model's (what a fit and the bias feature's row read)."""
        self._learner, self._extractor, self._joint = trial.learner, trial.extractor, trial.joint

    def _dev_data(self, dev) -> tuple[FeatureMatrix, list] | None:
        """The features of dev documents and their labels (``dev = (documents, labels)``), or None without dev."""
        if dev is None:
            return None
        dev_documents, dev_labels = self._dev_documents(dev)
        return self._features(dev_documents, "dev data"), dev_labels

    def _dev_documents(self, dev) -> tuple[list, list]:
        """The documents and labels of ``dev = (documents, labels)``, checked."""
        if not (isinstance(dev, (tuple, list)) and len(dev) == 2):
            raise TypeError(f"dev must be a (documents, labels) pair, got {reprlib.repr(dev)}")
        return self._labelled(*dev, "dev data")

    def _counts(self, documents: list, negatives: list | None = None) -> FeatureMatrix:
        """The feature counts of ``documents``, which each candidate of :meth:`_choose_learner` makes its values of;
        ``negatives`` gets the first value below 0 (:meth:`_counted`)."""
        return self._by_parts(documents, lambda part, start: self._counted(part, start, negatives))

    def _counted(self, documents: list, first: int, negatives: list | None = None) -> FeatureMatrix:
        """The feature counts of training ``documents`` (the first is document ``first``).  A value below 0 is
        appended to ``negatives`` as ``(document number, template, value)``, or without that list refused for a
        learner of counts (naive Bayes), for which a feature occurs a number of times, 0 or more."""
        found: list = []
        counts = self._extractor.counts(documents, found)
        if found:
            document, template, value = found[0]
            if negatives is not None:
                negatives.append((first + document + 1, template, value))
            elif self.learner.capabilities.counts:
                raise CorpusFormatError("training data", None, _NEGATIVE_COUNT.format(
                    f"{self._instance} {first + document + 1}", value, template, self.learner.name))
        return counts

    def _stream_sample(self, chunk: list) -> list:
        """The documents of the first ``(document, label)`` pairs of a stream, whose form (:func:`_form_of`) every
        document must have (:meth:`_streamed_part`), recorded unless fit recorded a matrix's (with its columns)."""
        documents = [document for document, _ in chunk]
        self._input_form = self._input_form or _form_of(documents)
        self._stream_pairs: dict = {}  # the NLTK featuresets' distinct (name, value) pairs, as they are read
        return documents

    def _streamed_part(self, pairs: list, start: int) -> tuple[list, list, bytes]:
        """The documents and labels of ``(document, label)`` pairs (the first is document ``start`` of the training
        data), checked, and the bytes the cache's digest reads of them."""
        documents = [document for document, _ in pairs]
        _refuse_misfit(documents, self._input_form, "training data", start, training=True)
        labels = _label_values([label for _, label in pairs], "training data", first=start)
        for k, label in enumerate(labels, start + 1):
            if type(label) not in (str, int, float, bool):
                raise CorpusFormatError("training data", None, f"document {k} has the label {label!r}: streamed "
                                        "labels are strings, numbers or true/false (the feature cache records them)")
        if self.trained_on("featureset"):
            _add_distinct_pairs(self._stream_pairs, documents)
        if start == 0:  # a pass over the stream begins (the digest's, then the cache's)
            self._text_order = TextOrder()
        self._text_order.add(documents, labels)
        return documents, labels, repr([documents, labels]).encode()

    def _cached_features(self, documents: list, start: int) -> tuple[FeatureMatrix, tuple]:
        """What the feature cache keeps of training ``documents`` (the first is document ``start``): their feature
        counts, which :meth:`_sharded` makes values as they are read (tf-idf needs every document's)."""
        return self._finite(self._counted(documents, start), "training data", start), ()

    def _sharded(self, cache: FeatureCache) -> ShardedCorpus:
        """The classifier trained from ``cache`` (:meth:`_fit_streamed`): tf-idf's idf from the cache's document
        frequencies, its map, and the corpus the learner reads, made values by the extractor as it is read."""
        extractor = self._extractor
        if self.feature_set.values.endswith("tfidf"):
            extractor.fit_idf_frequencies(cache.columns, cache.column_counts(), cache.n_instances)
        self._joint = JointFeatureMap(_label_set(cache.labels, "training data"), corpus_columns(cache, extractor),
                                      transitions=self.decoder.uses_transitions)
        self._featureset_pairs = list(self._stream_pairs.values())
        return ShardedCorpus(cache, self._joint, transform=extractor, in_order=not self._text_order.sorted)

    def training_data(self, X, y) -> tuple[FeatureMatrix, np.ndarray]:
        """What a learner trains on: the indexed feature matrix of documents ``X`` and the ids of their labels
        ``y``.  Sets :attr:`joint` (the map of their labels and features) and tf-idf's idf."""
        with _collector_paused():
            documents, labels = self._labelled(X, y, "training data", start=True)
            classes = _label_set(labels, "training data")
            self._begin(documents)
            return self._indexed(self._training_features(documents, first=True), labels, classes)

    @_if_learner("online")
    def partial_fit(self, X, y, classes=None) -> Classifier:
        """One epoch of the online learner over a batch of documents ``X`` and labels ``y``, going on from the
        current model (scikit-learn's ``partial_fit``).

        The first call on an untrained classifier starts a run from the parameters and needs ``classes``,
        every label the batches may hold; ``classes_`` is them in the order :meth:`fit` gives labels (ties go to
        the first label, so the same order makes one call per epoch over all the data give exactly
        :meth:`fit`'s model).  Later calls may leave ``classes`` out or repeat the same set; a label outside
        ``classes_`` raises.

        Buckets first seen in a batch get rows of zero weights in the joint map.  tf-idf's idf is
        estimated on the first batch and then kept, so that a feature value means the same in every
        batch; a bucket that batch lacks has ``idf_unseen``.  After :meth:`fit`, fit's run goes on
        (from its last epoch, with its idf).  After :meth:`load` a new run starts from the loaded
        weights and idf: the file keeps only the weights to predict with, so the averaged perceptron
        averages afresh from them and the shuffling restarts at the seed.
        """
        with _collector_paused():
            first = self.joint is None
            documents, labels = self._labelled(X, y, "training data", start=first)
            if first:
                self._begin(documents)
            self._train_online(documents, labels, classes)
        return self

    def _training_features(self, documents, *, first: bool) -> FeatureMatrix:
        """Feature values of training documents; for the ``first`` batch of a run tf-idf's idf is first
        estimated on them."""
        return self._training_values(self._by_parts(documents, self._counted), first=first)

    def _training_values(self, counts: FeatureMatrix, *, first: bool) -> FeatureMatrix:
        """The feature values of training documents' ``counts`` (:meth:`_training_features`)."""
        if first and self.feature_set.values.endswith("tfidf"):
            self._extractor.fit_idf(counts)
        return self._finite(self._extractor.transform(counts), "training data")

    # --- prediction -----------------------------------------------------------------------------

    #: Documents featurised and scored at a time.  Their arrays then stay small enough for the memory
    #: allocator to reuse instead of mapping fresh pages for every call (faster than all at once on a
    #: large test set: docs/benchmarks.md).
    prediction_batch = 1000

    def label_scores(self, X) -> np.ndarray:
        """``w·φ(x, y)`` for every document of ``X`` (rows) and label (columns, in ``classes_`` order), with two
        classes too (:meth:`decision_function` then gives their difference)."""
        self._check_fitted()
        documents = self._inputs(X, "input", "a sequence of documents (classify() takes one document)")
        return self._document_scores(documents)

    def _document_scores(self, documents: list) -> np.ndarray:
        """:meth:`label_scores` of documents :meth:`_inputs` has read (and checked once)."""
        size = self.prediction_batch
        with _collector_paused():
            return np.vstack([self._scores(self.joint.index(self._features(documents[a : a + size], "input", a)))
                              .emissions for a in range(0, len(documents), size) or [0]])

    def decision_function(self, X) -> np.ndarray:
        """``w·φ(x, y)`` for every document of ``X`` (rows) and label (columns, in ``classes_`` order); with two
        classes, as scikit-learn's, one column: the score of ``classes_[1]`` minus that of ``classes_[0]``
        (positive: ``classes_[1]``)."""
        scores = self.label_scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X) -> np.ndarray:
        """The label of every document of ``X``: a numpy array of ``classes_``' dtype."""
        return self._best_labels(self.label_scores(X))

    def _best_labels(self, scores: np.ndarray) -> np.ndarray:
        """The label of every row of :meth:`label_scores`."""
        return self.classes_[self.decoder.argmax(Scores(scores, np.ones(len(scores), np.int64)))]

    def score(self, X, y) -> float:
        """The accuracy of :meth:`predict` on documents ``X`` with labels ``y`` (scikit-learn's ``score``)."""
        documents, labels = self._labelled(X, y, "gold data")
        if not labels:
            raise CorpusFormatError("gold data", None, "no documents: accuracy is undefined")
        self._check_fitted()
        _dev_label_ids(self.joint, labels, "documents", 2, data="gold data")  # unseen labels: a warning
        predicted = self._best_labels(self._document_scores(documents)).tolist()
        return sum(p == g for p, g in zip(predicted, labels)) / len(labels)

    @_if_learner("probabilistic")
    def predict_log_proba(self, X) -> np.ndarray:
        """``log p(y|x) = w·φ(x, y) − log Z(x)`` for every document of ``X`` (rows) and label (columns, in
        ``classes_`` order), for a probabilistic learner only (``maxent``; for naive Bayes the scores are
        ``log P(y, x)`` and this is Bayes' rule): other learners' scores are no probabilities, and their
        models have no such method."""
        return self._log_probabilities(self.label_scores(X))

    def _log_probabilities(self, scores: np.ndarray) -> np.ndarray:
        """:meth:`predict_log_proba` of the rows of :meth:`label_scores`."""
        inference = self._distribution()
        return scores - inference.marginals(Scores(scores, np.ones(len(scores), np.int64))).log_partition[:, None]

    @_if_learner("probabilistic")
    def predict_proba(self, X) -> np.ndarray:
        """``p(y|x) = exp(w·φ(x, y)) / Z(x)``: the softmax of the scores, as :meth:`predict_log_proba`."""
        return np.exp(self.predict_log_proba(X))

    def prob_classify(self, document) -> DictionaryProbDist:
        """NLTK ``ClassifierI.prob_classify``: the label distribution of one document."""
        return self.prob_classify_many([document])[0]

    def prob_classify_many(self, documents) -> list[DictionaryProbDist]:
        """NLTK ``ClassifierI.prob_classify_many``."""
        return [DictionaryProbDist(dict(zip(self.joint.labels, row.tolist())))
                for row in self.predict_proba(documents)]

    def classify(self, document):
        """NLTK ``ClassifierI.classify``: the label of one document."""
        return self.classify_many([document])[0]

    def classify_many(self, documents) -> list:
        """NLTK ``ClassifierI.classify_many``: the labels, as a list."""
        return self.predict(documents).tolist()

    def labels(self) -> list:
        """NLTK ``ClassifierI.labels``."""
        self._check_fitted()
        return list(self.joint.labels)

    def report(self, X, y, *, progress: Callable[[int], object] | None = None) -> ClassificationReport:
        """Accuracy, macro/micro F1, per-class scores and the confusion matrix on documents ``X`` with labels
        ``y`` (and the log-loss, for a probabilistic learner); ``progress(n)`` is called as each ``n`` documents
        are classified (a progress bar's ``update``)."""
        documents, labels = self._labelled(X, y, "gold data")
        self._check_fitted()
        if not self.learner.capabilities.probabilistic:
            predicted = np.concatenate(_in_parts(lambda part: self._best_labels(self._document_scores(part)),
                                                 documents, progress))
            return evaluate_classification(labels, predicted.tolist())
        probabilities = np.exp(np.concatenate(_in_parts(lambda part: self._log_probabilities(
            self._document_scores(part)), documents, progress)))
        predicted = [self.joint.labels[k] for k in probabilities.argmax(axis=1)]
        gold = self.joint.encode_labels(labels, unknown=-1)
        gold_probability = np.where(gold >= 0, probabilities[np.arange(len(gold)), np.maximum(gold, 0)], 0.0)
        return evaluate_classification(labels, predicted, gold_probability)

    # --- persistence (see _Model) --------------------------------------------------------------

    def _extra_arrays(self) -> dict:
        return {"idf_buckets": self._extractor.idf_buckets, "idf": self._extractor.idf,
                "idf_unseen": np.array([self._extractor.idf_unseen])}

    _extra_array_specs = {"idf_buckets": ArraySpec("iu", ("idf",), below="buckets", increasing=True),
                          "idf": ArraySpec("f", ("idf",)), "idf_unseen": ArraySpec("f", (1,))}

    def _restore(self, meta: dict, arrays: dict) -> None:
        self._extractor.set_idf(arrays["idf_buckets"], arrays["idf"], arrays["idf_unseen"][0])
        self._input_form = dict(meta["inputs"]) if "inputs" in meta else None  # none in older files: no check

    def _extra_metadata(self) -> dict:
        return {} if self._input_form is None else {"inputs": self._input_form}

    @classmethod
    def _metadata_specs(cls) -> dict[str, tuple[Callable[[object], bool], str]]:
        return {**super()._metadata_specs(), "inputs": (_is_form, "a table of the training documents' kind (text, "
                                                        "fields, numeric or featureset) and their number of fields "
                                                        "(tuples) or columns (a matrix)")}

    @classmethod
    def _construct(cls, feature_set, learner, meta: dict) -> Classifier:
        return cls(feature_set, learner, bits=meta["hash"]["bits"], hash_seed=meta["hash"]["seed"])

    # --- explanations (structlin.explain) ---------------------------------------------------------

    def explain(self, x, *, top: int = 10) -> Explanation:
        """Why document ``x`` gets its label: the features that pushed it and the runner-up, contribution = value ×
        weight, with the values of the feature vector (tf-idf, normalised, the constant feature)
        (:func:`~structlin.explain.explain_document`; ``format()`` shows the ``top`` features)."""
        self._check_fitted()
        return explain_document(self, self._extractor, self._inputs([x], "input", "one document")[0], top=top)

    def top_features(self, k: int = 10, sample=()) -> TopFeatures:
        """The ``k`` heaviest weight rows of every label, with the features of the documents of ``sample`` that
        hash to them (:func:`~structlin.explain.top_document_features`)."""
        self._check_fitted()
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise OptionValueError(f"k must be a positive integer, got {k!r}")
        documents = self._inputs(sample, "sample", "a sequence of documents") if len(sample) else []
        return top_document_features(self, self._extractor, k, documents)

    def most_informative_features(self, n: int = 10, sample=None) -> list[InformativeFeature]:
        """The ``n`` features that separate two labels most (NLTK's ``most_informative_features`` for a linear
        model: :func:`~structlin.explain.informative_features`), named from the documents of ``sample``, by
        default the NLTK featuresets the model was trained on in this process (a loaded model keeps no names:
        give a sample)."""
        self._check_fitted()
        if sample is not None:
            return informative_features(self, self._extractor, self._inputs(sample, "sample",
                                                                            "a sequence of documents"), n)
        if not self._featureset_pairs:
            raise OptionValueError("this classifier keeps no feature names (it was loaded, or trained on texts, "
                                   "fields or numbers): give a sample of documents to name its features")
        return informative_features(self, self._extractor, [{name: value} for name, value in self._featureset_pairs],
                                    n)

    def show_most_informative_features(self, n: int = 10, sample=None) -> None:
        """Print :meth:`most_informative_features` as NLTK's classifiers do: each feature, the label it favours
        most and the one it favours least, with its effect (sign × weight) on each."""
        print("Most Informative Features")
        for f in self.most_informative_features(n, sample):
            print(f"{f.name:>40}  {str(f.favoured):>10} : {str(f.disfavoured):<10} = {f.for_favoured:+8.3f} : "
                  f"{f.for_disfavoured:+8.3f}")

    @classmethod
    def train(cls, labeled_featuresets, **params) -> Classifier:
        """NLTK's ``train``: a classifier of ``params`` trained on ``[(featureset, label), ...]``."""
        pairs = list(_not_text(labeled_featuresets, "labeled_featuresets as a sequence of (featureset, label) pairs"))
        odd = next((k for k, pair in enumerate(pairs, 1) if not (isinstance(pair, (tuple, list)) and len(pair) == 2)),
                   None)
        if odd is not None:
            raise CorpusFormatError("training data", None, f"item {odd}: expected a (featureset, label) pair, got "
                                                           f"{reprlib.repr(pairs[odd - 1])}")
        return cls(**params).fit([x for x, _ in pairs], [y for _, y in pairs])
