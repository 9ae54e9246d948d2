"""Explanations of single predictions: which features pushed a label, and by how much.

A linear model scores a label ``y`` of an instance (a document, or a token of a sentence) as

    score(y) = Σ_b x_b · W[b, y]   (+ for a token, the transitions from and to its neighbours' chosen tags)

over the hashed buckets ``b`` the instance has: the *contribution* of a bucket to a label is its value × its
weight, and the contributions add up to the model's score.  An explanation lists them for the predicted label and
the runner-up (the best other label), largest difference first, with the margin between the two.

Hashing keeps no feature names, so they are found again by re-extracting the one instance:
:func:`~structlin.templates.position_features` and :func:`~structlin.doctemplates.document_features` name every
feature and hash it as the extractor does.  The values are the extractor's own feature vector of the instance
(after tf-idf, L2 normalisation, the constant feature), so that value × weight gives the score.  A bucket may hold
several features of the instance (a hash collision, shown as "shared by"), whose signs may cancel.

A token's runner-up is the best other tag at that token with the rest of the chosen path kept: its score adds the
transition from the previous chosen tag and to the next one (or the start and end scores), shown on lines of
their own, so that the margin is what the path loses when only this tag changes.

Learners that score inputs themselves (the kernel perceptron, the voted perceptron) have no weight vector whose
product with the features is their score, and explanations of their models are refused
(:class:`~structlin.errors.CapabilityError`): the averaged perceptron is the voted perceptron's averaged hypothesis
as a linear model.  Random Fourier features are refused too: each of them mixes all the features.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, islice

import numpy as np

from .doctemplates import document_features
from .errors import CapabilityError, StructlinError
from .joint import SparseWeights
from .learners import LEARNERS
from .templates import NamedFeature, position_features, template


@dataclass(frozen=True)
class Part:
    """A feature of the instance in a bucket: its name, its template entry's key and its signed value before any
    value transform (sign × the template's value, summed over its occurrences)."""

    name: str
    template: str
    value: float


@dataclass(frozen=True)
class Contribution:
    """One bucket of the instance: the features hashed to it (``parts``; more than one is a hash collision), its
    value ``x_b`` in the feature vector and its weight ``W[b, y]`` for every label (zeros when no training instance
    had the bucket: ``trained`` is False).  Its contribution to label ``y`` is value × weights[y]."""

    bucket: int
    parts: tuple[Part, ...]
    value: float
    weights: np.ndarray
    trained: bool

    def contribution(self, label: int) -> float:
        """value × weights[label]: what this bucket adds to the score of label number ``label``."""
        return self.value * float(self.weights[label])


@dataclass(frozen=True)
class Term:
    """A score from no feature: a token's transition from or to a neighbour's chosen tag, or the start or end
    score of a sentence; ``scores`` holds it for every label."""

    name: str
    scores: np.ndarray


@dataclass
class Explanation:
    """Why one instance (``what``: a document, a token) got ``labels[predicted]`` rather than
    ``labels[runner_up]`` (None: the model has one label): the contribution of every bucket it has, largest
    difference between the two first, and the terms of no feature; :attr:`scores` adds them up for every label.
    :meth:`format` and :meth:`to_dict` show the ``top`` features and the sum of the others."""

    what: str
    labels: list
    predicted: int
    runner_up: int | None
    features: list[Contribution]
    terms: list[Term] = field(default_factory=list)
    top: int = 10

    @property
    def scores(self) -> np.ndarray:
        """Every label's score: the sum of the contributions and of the terms."""
        return _total(self.features, self.terms, len(self.labels))

    @property
    def margin(self) -> float | None:
        """The predicted label's score minus the runner-up's."""
        scores = self.scores
        return None if self.runner_up is None else float(scores[self.predicted] - scores[self.runner_up])

    def _pair(self, scores) -> tuple[float, float]:
        """``scores`` (one per label) of the predicted label and the runner-up (0 without one)."""
        return float(scores[self.predicted]), 0.0 if self.runner_up is None else float(scores[self.runner_up])

    def format(self) -> str:
        """A table: per feature its value, its weights and contributions for the predicted label (1st) and the
        runner-up (2nd), and their difference Δ; then the other features' sum, the terms and the scores."""
        first, second = self.labels[self.predicted], self.labels[self.runner_up] if self.runner_up is not None else None
        head = f"{self.what}: {first} (1st)" + ("" if second is None else
                                                f", runner-up {second} (2nd), margin {self.margin:+.3f}")
        row = "{:>8} {:>8} {:>8} {:>9} {:>9} {:>9}  {}".format

        def summed(scores, name: str) -> str:
            c1, c2 = self._pair(scores)
            return "  " + row("", "", "", f"{c1:+.3f}", f"{c2:+.3f}", f"{c1 - c2:+.3f}", name)

        lines = [head, "  contribution c = value × weight w (a value's sign is the hash's); Δ = c(1st) − c(2nd)",
                 "  " + row("value", "w(1st)", "w(2nd)", "c(1st)", "c(2nd)", "Δ", "feature")]
        shown, rest = self.features[: self.top], self.features[self.top :]
        for f in shown:
            (w1, w2), (c1, c2) = self._pair(f.weights), self._pair(f.value * f.weights)
            shared = [f"{p.name} ({p.value:+g})" for p in f.parts] if len(f.parts) > 1 else [f.parts[0].name]
            note = "" if f.trained else "  (unseen in training: no weight)"
            lines.append("  " + row(*(f"{x:+.3f}" for x in (f.value, w1, w2, c1, c2, c1 - c2)), shared[0] + note))
            if len(shared) > 1:
                lines.append(" " * 60 + "shared by: " + ", ".join(shared[1:]))
        if rest:
            unseen = sum(not f.trained for f in rest)
            lines.append(summed(_total(rest, [], len(self.labels)), f"{len(rest)} more features"
                                + (f" ({unseen} unseen in training)" if unseen else "")))
        lines += [summed(t.scores, t.name) for t in self.terms] + [summed(self.scores, "score")]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The explanation as JSON data: the labels' scores, the margin, the ``top`` features, the sum of the
        others and the terms."""

        def scored(scores) -> dict:
            c1, c2 = self._pair(scores)
            return {"contribution": c1, "runner_up_contribution": c2}

        rest = self.features[self.top :]
        return {
            "what": self.what, "predicted": self.labels[self.predicted],
            "runner_up": None if self.runner_up is None else self.labels[self.runner_up], "margin": self.margin,
            "scores": dict(zip(map(str, self.labels), self.scores.tolist())),
            "features": [{"name": f.parts[0].name, "template": f.parts[0].template, "bucket": f.bucket,
                          "value": f.value, "weight": self._pair(f.weights)[0],
                          "runner_up_weight": self._pair(f.weights)[1], **scored(f.value * f.weights),
                          "trained": f.trained, "shared_by": [vars(p) for p in f.parts[1:]]}
                         for f in self.features[: self.top]],
            "other_features": {"count": len(rest), **scored(_total(rest, [], len(self.labels)))},
            "terms": [{"name": t.name, **scored(t.scores)} for t in self.terms],
        }


def _total(features: list[Contribution], terms: list[Term], n_labels: int) -> np.ndarray:
    """Every label's score: Σ value × weights over the features, plus the terms."""
    return np.sum([f.value * f.weights for f in features] + [t.scores for t in terms] + [np.zeros(n_labels)], axis=0)


class _EmissionRows:
    """A trained model's emission weights ``W`` (a row per bucket of the joint map, a column per label), read a
    row at a time: the dense block, or a many-label model's stored pairs as a CSR matrix, never made dense (its
    rows × labels can be gigabytes)."""

    def __init__(self, joint, w):
        self.n_labels, self.sparse = joint.n_labels, isinstance(w, SparseWeights)
        self.W = joint.emission_rows(w) if self.sparse else joint.emission_weights(w)

    def __getitem__(self, row: int) -> np.ndarray:
        """The weights of ``row`` for every label."""
        if not self.sparse:
            return self.W[row]
        out, (a, b) = np.zeros(self.n_labels), self.W.indptr[row : row + 2]
        out[self.W.indices[a:b]] = self.W.data[a:b]
        return out

    def heaviest(self, k: int) -> np.ndarray:
        """The ``k`` rows of largest ``|W[r, y]|`` of every label ``y`` (an array of labels × k), heaviest first, the
        lower row first on a tie (rows of weight 0 too, when a label has fewer others)."""
        if not self.sparse:
            return np.argsort(-np.abs(self.W), axis=0, kind="stable")[:k].T
        n_rows = self.W.shape[0]
        by_label = self.W.tocsc()
        out = np.empty((self.n_labels, min(k, n_rows)), dtype=np.int64)
        for y in range(self.n_labels):
            a, b = by_label.indptr[y : y + 2]
            rows, values = by_label.indices[a:b], by_label.data[a:b]
            rows, values = rows[values != 0], values[values != 0]
            chosen = rows[np.lexsort((rows, -np.abs(values)))][: out.shape[1]].tolist()
            if len(chosen) < out.shape[1]:  # then the rows of weight 0, lowest first
                taken = set(rows.tolist())
                chosen += islice((r for r in range(n_rows) if r not in taken), out.shape[1] - len(chosen))
            out[y] = chosen
        return out


def _weights(model) -> _EmissionRows:
    """The emission weights of a trained model, read by row (:class:`_EmissionRows`), or
    :class:`CapabilityError` when its scores are no product of the features with weights."""
    learner = model.learner
    if learner.capabilities.scores_itself:
        linear = [name for name, cls in LEARNERS.items() if not cls.capabilities.scores_itself]
        raise CapabilityError(f"learner {learner.name!r} scores inputs itself (votes or kernels): it has no linear "
                              f"weights to explain; train with one that has ({', '.join(linear)})")
    if model.feature_set.random_fourier is not None:
        raise CapabilityError(f"feature set {model.feature_set.name!r} maps the features to random Fourier features, "
                              "each of which mixes all of them: there is no weight per feature to explain")
    return _EmissionRows(model.joint, model.weights_)


def _contributions(named: list[NamedFeature], model, W: np.ndarray, indices, values) -> list[Contribution]:
    """The buckets of one instance: its named features grouped by bucket, each bucket's value the sum of its
    entries (``indices``, ``values``) in the extractor's row, and its weight row (searched in the joint map's
    buckets)."""
    buckets, signs = model.hasher.buckets(np.array([f.code for f in named], dtype=np.uint64))
    parts: dict[int, dict[str, Part]] = {}
    for f, bucket, sign in zip(named, buckets.tolist(), signs.tolist()):
        held = parts.setdefault(bucket, {})
        value = held[f.name].value if f.name in held else 0.0
        held[f.name] = Part(f.name, f.template, value + sign * f.value)
    row: dict[int, float] = dict.fromkeys(parts, 0.0)
    for bucket, value in zip(np.asarray(indices).tolist(), np.asarray(values, dtype=np.float64).tolist()):
        if bucket not in parts:
            raise RuntimeError(f"bucket {bucket} of the instance has no feature name: the explanation's extraction "
                               "differs from the model's")
        row[bucket] += value
    columns, held = model.joint.columns, np.array(list(row), dtype=np.int64)
    at = np.minimum(np.searchsorted(columns, held), len(columns) - 1)
    trained = columns[at] == held
    return [Contribution(b, tuple(parts[b].values()), v, W[r] if seen else np.zeros(W.n_labels), bool(seen))
            for (b, v), r, seen in zip(row.items(), at, trained)]


def _explanation(what: str, model, features: list[Contribution], terms: list[Term], predicted: int,
                 top: int) -> Explanation:
    """The explanation of ``predicted``: the runner-up is the best other label, features are ordered by the
    difference of their contributions to the two (by their contribution, with one label)."""
    labels = list(model.joint.labels)
    scores = _total(features, terms, len(labels))
    others = [k for k in range(len(labels)) if k != predicted]
    runner_up = max(others, key=lambda k: scores[k]) if others else None
    features = sorted(features, key=lambda f: -abs(f.contribution(predicted) - (
        0.0 if runner_up is None else f.contribution(runner_up))))
    return Explanation(what, labels, predicted, runner_up, features, terms, top)


def explain_document(model, extractor, document, *, top: int = 10) -> Explanation:
    """Why the trained classifier ``model`` (whose document feature ``extractor`` it is) gives ``document`` its
    label (see the module's docstring)."""
    W = _weights(model)
    X = extractor.extract([document])
    features = _contributions(document_features(extractor, document), model, W, X.indices, X.values)
    predicted = model.joint.label_index[model.predict([document]).tolist()[0]]
    return _explanation("document", model, features, [], predicted, top)


def explain_tokens(model, extractor, tokens: list, index: int | None = None, *, top: int = 10):
    """Why the trained tagger ``model`` (whose token feature ``extractor`` it is) tags the token ``index`` of the
    sentence ``tokens`` as it does: one :class:`Explanation`, or with ``index`` None a list of them, one per token."""
    W = _weights(model)
    if index is not None and not -len(tokens) <= index < len(tokens):
        raise StructlinError(f"token index {index} is outside the sentence of {len(tokens)} tokens")
    X = extractor.extract([tokens])
    path = model.joint.encode_labels(model.predict([tokens])[0])
    explanations = []
    for i in range(len(tokens)) if index is None else [index % len(tokens)]:
        named = position_features(model.feature_set, model.hasher, tokens, i)
        entries = slice(X.indptr[i], X.indptr[i + 1])
        features = _contributions(named, model, W, X.indices[entries], X.values[entries])
        token = "/".join(tokens[i]) if isinstance(tokens[i], tuple) else tokens[i]
        explanations.append(_explanation(f"token {i} {token!r}", model, features, _path_terms(model, path, i),
                                         int(path[i]), top))
    return explanations if index is None else explanations[0]


def _path_terms(model, path: np.ndarray, i: int) -> list[Term]:
    """The scores of every tag at token ``i`` beside the chosen ``path``: the transition from the previous chosen
    tag (the start score at the first token) and to the next one (the end score at the last); none without
    transitions."""
    transitions, start, end = model.joint.transition_weights(model.weights_)
    if transitions is None:
        return []
    labels = model.joint.labels
    before = (Term(f"transition from {labels[path[i - 1]]} (token {i - 1})", transitions[path[i - 1]]) if i > 0
              else Term("start of the sentence", start))
    after = (Term(f"transition to {labels[path[i + 1]]} (token {i + 1})", transitions[:, path[i + 1]])
             if i + 1 < len(path) else Term("end of the sentence", end))
    return [before, after]


@dataclass
class TopFeatures:
    """The heaviest weight rows of every label, by magnitude: ``rows[k]`` lists ``(bucket, weight, names)`` for
    ``labels[k]``, heaviest first.  ``names`` maps each feature found to hash to the bucket (``source`` says where
    they were looked for) to its sign: its effect on the label is sign × weight, for or against it.  Hashing keeps
    no names, so a bucket may have none found, or hold a feature that was not looked for."""

    labels: list
    rows: list[list[tuple[int, float, dict[str, float]]]]
    source: str

    def format(self) -> str:
        """A block per label: each row's weight magnitude, bucket and the names found, with their effects."""
        lines = [f"feature names: {self.source}",
                 "weights by magnitude; each feature's effect = its sign × the weight"]
        for label, rows in zip(self.labels, self.rows):
            lines.append(f"{label}:")
            lines += [f"  |w| {abs(weight):9.4f}  bucket {bucket:<8} " + (", ".join(
                f"{name} {sign * weight:+.4f}" for name, sign in names.items()) or "(no name found)")
                for bucket, weight, names in rows]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """As JSON data: per label, each row's bucket, weight and the names found with their effects."""
        return {"names_from": self.source, "labels": {
            str(label): [{"bucket": b, "weight": w, "names": [{"name": name, "effect": sign * w}
                                                             for name, sign in names.items()]} for b, w, names in rows]
            for label, rows in zip(self.labels, self.rows)}}


def top_token_features(model, k: int = 10, sample=()) -> TopFeatures:
    """The ``k`` heaviest weight rows of every tag of the trained tagger ``model``, named by the token templates
    that read the word applied to its known words at every offset they take (the names of every such feature the
    training sentences had, and the boundary markers) and by every feature of the sentences of ``sample`` (n-grams
    and other columns)."""
    fs, hasher = model.feature_set, model.hasher
    reach = max(abs(o) for spec in fs.templates for o in spec.offsets)
    keys = {spec.key for spec in fs.templates if spec.column == "word" and template(spec.name).kind == "token"}
    words = [w if len(fs.fields) == 1 else (w,) * len(fs.fields) for w in sorted(model.known_words_)]
    # each known word at every position its templates read (a sentence of it alone, repeated), and a sentence of
    # one word, whose neighbours are all boundary markers
    places = [([w] * (2 * reach + 1), reach) for w in words] + [(words[:1], 0)] * bool(words)
    vocabulary = ([f for f in position_features(fs, hasher, tokens, i) if f.template in keys] for tokens, i in places)
    sentences = (position_features(fs, hasher, tokens, i) for tokens in sample for i in range(len(tokens)))
    source = "the word templates over the model's known words" + (" and the sample's features" if sample else
                                                                  " (n-grams and other columns: give a sample)")
    return _top(model, k, chain(vocabulary, sentences), source)


def top_document_features(model, extractor, k: int = 10, sample=()) -> TopFeatures:
    """The ``k`` heaviest weight rows of every label of the trained classifier ``model`` (whose document feature
    ``extractor`` it is), named by the features of the documents of ``sample``: a model keeps no vocabulary."""
    source = "the sample's features" if sample else "none (a classifier keeps no vocabulary: give a sample)"
    return _top(model, k, (document_features(extractor, d) for d in sample), source)


def _top(model, k: int, named_instances, source: str) -> TopFeatures:
    """The ``k`` heaviest weight rows of every label (by magnitude), with the names among ``named_instances`` (lists
    of :class:`~structlin.templates.NamedFeature`) that hash to their buckets, and their signs."""
    W, columns = _weights(model), model.joint.columns
    heaviest = W.heaviest(k)  # the rows of every label, heaviest first
    names: dict[int, dict[str, float]] = {b: {} for b in columns[heaviest].ravel().tolist()}
    for named in named_instances:
        buckets, signs = model.hasher.buckets(np.array([f.code for f in named], dtype=np.uint64))
        for f, bucket, sign in zip(named, buckets.tolist(), signs.tolist()):
            if bucket in names:
                names[bucket][f.name] = sign
    rows = [[(int(columns[r]), float(W[r][y]), names[int(columns[r])]) for r in heaviest[y]]
            for y in range(W.n_labels)]
    return TopFeatures(list(model.joint.labels), rows, source)


@dataclass(frozen=True)
class InformativeFeature:
    """A named feature and the two labels it separates most: its effect (sign × weight) on each."""

    name: str
    favoured: object
    disfavoured: object
    for_favoured: float
    for_disfavoured: float

    @property
    def spread(self) -> float:
        return self.for_favoured - self.for_disfavoured


def informative_features(model, extractor, documents, n: int = 10) -> list[InformativeFeature]:
    """The ``n`` features of ``documents`` (re-extracted and named) whose effects on two labels differ most,
    ``max_y s·W[b, y] − min_y s·W[b, y]`` for the bucket ``b`` and sign ``s`` of the feature: for a linear model,
    what NLTK's ``most_informative_features`` ranks by likelihood ratio.  Features never seen in training (no
    weight row) are left out."""
    W, columns, labels = _weights(model), model.joint.columns, list(model.joint.labels)
    effects: dict[str, np.ndarray] = {}
    for named in (document_features(extractor, d) for d in documents):
        buckets, signs = model.hasher.buckets(np.array([f.code for f in named], dtype=np.uint64))
        rows = np.searchsorted(columns, buckets)
        for f, row, bucket, sign in zip(named, rows.tolist(), buckets.tolist(), signs.tolist()):
            if f.name not in effects and row < len(columns) and columns[row] == bucket:
                effects[f.name] = sign * W[row]
    ranked = sorted(effects.items(), key=lambda item: (-(item[1].max() - item[1].min()), item[0]))[:n]
    return [InformativeFeature(name, labels[int(e.argmax())], labels[int(e.argmin())], float(e.max()), float(e.min()))
            for name, e in ranked]
