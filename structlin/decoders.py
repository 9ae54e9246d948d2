"""Decoders: ``argmax_y w·φ(x, y)`` over one output structure, for a batch of instances at once.

Every decoder works on :class:`~structlin.joint.Scores` and never knows which learner asks.

* :class:`Multiclass` — every position independently: ``ŷ_i = argmax_y E[i, y]``.
* :class:`Viterbi` — first-order chain: ``argmax_y Σ_i E[i, y_i] + Σ_i A[y_{i-1}, y_i] + s[y_0] + e[y_{n-1}]``
  by dynamic programming, and its forward–backward marginals (scaled probability space).
* :class:`Greedy` — left to right over the same chain scores: ``ŷ_i = argmax_y E[i, y] + A[ŷ_{i-1}, y]``.

``E`` are the emission scores and ``A`` the transition scores; ``T`` is always a number of time steps.

``loss_augmented_argmax`` adds the task loss of every wrong label at every position (a :class:`Cost`:
Hamming by default) and runs the *unchanged* decoder.  A chain decoder that is not exact (Greedy) names
the exact one of the same structure, :attr:`Decoder.exact`, for learners that need a true argmax or a
distribution.  Ties break towards the lower label index.  Batches are decoded together,
padded to the longest instance, so the Python loop runs over positions, never over instances,
features or labels.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import logsumexp

from .errors import UnknownNameError
from .joint import Scores
from .matrix import FeatureMatrix


@dataclass
class Marginals:
    """``log_partition[b] = log Z(x_b)``; ``nodes[p, y] = P(y_p = y)``; ``edges[k, a, b]`` is
    ``P(y_{p-1} = a, y_p = b)`` for every non-first position ``p`` in instance order, or with
    ``summed_edges`` their sum ``edges[a, b]`` over the batch (``None`` for independent positions)."""

    log_partition: np.ndarray
    nodes: np.ndarray
    edges: np.ndarray | None = None


class Cost:
    """A task loss that decomposes over positions, ``Δ(y, ŷ) = Σ_p c(y_p, ŷ_p)``: the Hamming loss
    ``scale · [y_p ≠ ŷ_p]`` (the default), or ``matrix[y_p, ŷ_p]`` for a labels × labels ``matrix`` with
    a zero diagonal.  Every learner that needs a cost (the margin perceptron, passive-aggressive, MIRA,
    the SVM) takes it from here."""

    def __init__(self, scale: float = 1.0, matrix: np.ndarray | None = None):
        self.scale, self.matrix = scale, matrix

    def augment(self, emissions: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """``emissions`` plus the cost of every label at every position (a new array)."""
        if self.matrix is not None:
            return emissions + self.matrix[gold]
        augmented = emissions + self.scale
        augmented[np.arange(len(gold)), gold] -= self.scale
        return augmented

    def per_instance(self, gold: np.ndarray, predicted: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``Δ(y, ŷ)`` of every instance of a batch of ``lengths``."""
        if self.matrix is not None:
            per_position = self.matrix[gold, predicted]
        else:
            per_position = self.scale * (gold != predicted)
        owner = np.repeat(np.arange(len(lengths)), lengths)
        return np.bincount(owner, per_position, minlength=len(lengths))


class Decoder(ABC):
    """Interface shared by all decoders."""

    name = ""
    uses_transitions = True

    @property
    def exact(self) -> Decoder:
        """The decoder that finds the true argmax (and defines ``p(y|x)``) over this decoder's outputs."""
        return self

    @abstractmethod
    def argmax(self, scores: Scores) -> np.ndarray:
        """The best label of every position of every instance (concatenated)."""

    def loss_augmented_argmax(self, scores: Scores, gold: np.ndarray, cost: float | Cost = 1.0) -> np.ndarray:
        """``argmax_y w·φ(x, y) + Δ(gold, y)``: the cost (a :class:`Cost`, or the scale of the Hamming
        loss) added to every label at every position, then the unchanged decoder."""
        cost = cost if isinstance(cost, Cost) else Cost(cost)
        return self.argmax(replace(scores, emissions=cost.augment(scores.emissions, gold)))

    def marginals(self, scores: Scores, *, summed_edges: bool = False) -> Marginals:
        """``log Z`` and the label marginals under ``p(y|x) ∝ exp(w·φ(x, y))``; ``summed_edges`` returns
        the edge marginals summed over the batch (the expected transition counts) instead of per edge."""
        raise TypeError(f"the {self.name} decoder defines no distribution over outputs; use viterbi")

    def max_marginals(self, scores: Scores) -> np.ndarray:
        """``μ[p, k] = max_{y: y_p = k} w·φ(x, y)``: the best score of an output of the instance of
        position ``p`` that gives ``p`` the label ``k`` (exact; ``max_k μ[p, k]`` is the best score)."""
        raise TypeError(f"the {self.name} decoder computes no exact max-marginals; use viterbi")


class Multiclass(Decoder):
    """Each position on its own (a document, or a token tagged without transitions)."""

    name = "multiclass"
    uses_transitions = False

    def argmax(self, scores: Scores) -> np.ndarray:
        return scores.emissions.argmax(axis=1)

    def marginals(self, scores: Scores, *, summed_edges: bool = False) -> Marginals:
        E = scores.emissions
        row_log_z = logsumexp(E, axis=1)
        per_instance = np.zeros(len(scores.lengths))
        starts = np.concatenate([[0], np.cumsum(scores.lengths)[:-1]])
        nonempty = scores.lengths > 0
        if nonempty.any():
            per_instance[nonempty] = np.add.reduceat(row_log_z, starts[nonempty])
        return Marginals(per_instance, np.exp(E - row_log_z[:, None]))

    def max_marginals(self, scores: Scores) -> np.ndarray:
        """Positions are independent: ``μ[p, k] = E[p, k] + Σ_{q ≠ p} max E[q]`` over the positions ``q``
        of ``p``'s instance."""
        E = scores.emissions
        best = E.max(axis=1, initial=-np.inf)
        instance = np.repeat(np.arange(len(scores.lengths)), scores.lengths)
        total = np.bincount(instance, best, minlength=len(scores.lengths))
        return E + (total[instance] - best)[:, None]


class _Padded:
    """A batch's emissions padded to a time-major ``(T, B, L)`` array.

    ``start`` is folded into the first and ``end`` into the last position of each instance, so the
    chain recursions need no special cases; positions past an instance's end hold zeros, and what
    the recursions compute there is never read.
    """

    def __init__(self, scores: Scores):
        self.lengths = lengths = np.asarray(scores.lengths)
        n_positions, L = scores.emissions.shape
        B, T = len(lengths), int(lengths.max(initial=0))
        instance = np.repeat(np.arange(B), lengths)
        first = np.cumsum(lengths) - lengths
        self.slot = (np.arange(n_positions) - first[instance], instance)
        self.E = np.zeros((T, B, L))
        self.E[self.slot] = scores.emissions
        self.running = np.flatnonzero(lengths > 0)
        self.last = lengths[self.running] - 1
        if T:
            self.E[0, self.running] += scores.start
            self.E[self.last, self.running] += scores.end

    def unpad(self, padded: np.ndarray) -> np.ndarray:
        """Per-position values back in the caller's instance order."""
        return padded[self.slot]


class Viterbi(Decoder):
    """Exact decoding of a first-order chain; its forward–backward marginals."""

    name = "viterbi"

    def argmax(self, scores: Scores) -> np.ndarray:
        pad = _Padded(scores)
        E = pad.E
        T, B, L = E.shape
        if T == 0:
            return np.zeros(0, dtype=np.int64)
        # best[t, b, y]: best score of a prefix ending in label y at t; back[t, b, y]: its label at t − 1.
        next_previous = np.ascontiguousarray(scores.transitions.T)  # [next, previous]: reduce the last axis
        best = np.empty_like(E)
        back = np.empty(E.shape, dtype=np.intp)
        candidates = np.empty((B, L, L))
        best[0] = E[0]
        previous = best[:, :, None, :]  # previous[t - 1][b, 0, y'] broadcasts over next labels
        for t in range(1, T):
            np.add(previous[t - 1], next_previous, out=candidates)
            candidates.argmax(axis=2, out=back[t])
            np.add(np.maximum.reduce(candidates, axis=2), E[t], out=best[t])
        # Past an instance's end the back pointers become the identity, so backtracking from T − 1
        # carries each instance's final label unchanged down to its last position.
        past_end = np.arange(T)[:, None] >= pad.lengths[None, :]
        back[past_end] = np.arange(L)
        current = np.zeros(B, dtype=np.intp)
        current[pad.running] = best[pad.last, pad.running].argmax(axis=1)
        path = np.empty((T, B), dtype=np.intp)
        rows = np.arange(B)
        for t in range(T - 1, 0, -1):
            path[t] = current
            current = back[t, rows, current]
        path[0] = current
        return pad.unpad(path)

    def max_marginals(self, scores: Scores) -> np.ndarray:
        """Max-product forward–backward: ``μ_t = a_t + b_t`` with ``A`` the transition scores and

            a_0 = E_0,   a_t[k] = max_j (a_{t−1}[j] + A[j, k]) + E_t[k]
            b_{n−1} = 0,   b_t[k] = max_j (A[k, j] + E_{t+1}[j] + b_{t+1}[j])
        """
        pad = _Padded(scores)
        E, A = pad.E, scores.transitions
        forward, backward = E.copy(), np.zeros_like(E)
        for t in range(1, len(E)):
            forward[t] += (forward[t - 1][:, :, None] + A).max(axis=1)
        has_next = np.arange(len(E))[:, None] < (pad.lengths - 1)[None, :]
        for t in range(len(E) - 2, -1, -1):
            step = (A + (E[t + 1] + backward[t + 1])[:, None, :]).max(axis=2)
            backward[t] = np.where(has_next[t][:, None], step, 0.0)
        return pad.unpad(forward + backward)

    def marginals(self, scores: Scores, *, summed_edges: bool = False) -> Marginals:
        """Forward–backward in scaled probability space, each recursion step a matrix product.

        With ``ψ_t = exp(E_t − m_t)`` (``m_t`` the row maximum) and ``K = exp(A − max A)``::

            α̃_0 = ψ_0,   α̃_t = (α̂_{t−1} K) ⊙ ψ_t,   c_t = Σ α̃_t,   α̂_t = α̃_t / c_t
            β̂_{n−1} = 1,  β̂_t ∝ K (ψ_{t+1} ⊙ β̂_{t+1})  (normalised to sum 1)
            log Z = Σ_t (log c_t + m_t) + (n − 1) max A
            P(y_t) = α̂_t ⊙ β̂_t / z_t,   z_t = Σ α̂_t ⊙ β̂_t
            P(y_{t−1} = a, y_t = b) = α̂_{t−1}[a] K[a, b] ψ_t[b] β̂_t[b] / (c_t z_t)

        Every row is normalised at every step, so long chains neither underflow nor overflow; only a
        transition more than ~700 below the largest one underflows to probability 0.  With
        ``summed_edges`` the edge marginals come back summed over every edge of the batch (``L × L``,
        the expected transition counts: ``K ⊙ Σ_t α̂_{t−1}ᵀ (ψ_t ⊙ β̂_t / (c_t z_t))``, one product),
        without materialising them per edge.
        """
        pad = _Padded(scores)
        T, B, L = pad.E.shape
        top = pad.E.max(axis=2)
        psi = np.exp(pad.E - top[:, :, None])
        top_transition = scores.transitions.max()
        K = np.exp(scores.transitions - top_transition)
        alpha, scale = psi.copy(), np.empty((T, B))
        for t in range(T):
            if t:
                alpha[t] *= alpha[t - 1] @ K
            scale[t] = alpha[t].sum(axis=1)
            alpha[t] /= scale[t][:, None]
        # Instances that end at t (or earlier) keep β̂_t = 1, so nothing past an end flows back.
        beta = np.ones((T, B, L))
        has_next = np.arange(T)[:, None] < (pad.lengths - 1)[None, :]
        for t in range(T - 2, -1, -1):
            step = (psi[t + 1] * beta[t + 1]) @ K.T
            step /= step.sum(axis=1, keepdims=True)
            np.copyto(beta[t], step, where=has_next[t][:, None])
        nodes = alpha * beta
        z = nodes.sum(axis=2)
        nodes /= z[:, :, None]
        inside = np.arange(T)[:, None] < pad.lengths[None, :]
        log_z = np.where(inside, np.log(scale) + top, 0.0).sum(axis=0)
        log_z += np.maximum(pad.lengths - 1, 0) * top_transition
        # incoming[t − 1, b] = ψ_t ⊙ β̂_t / (c_t z_t); the edges into t: α̂_{t−1} ⊗ incoming ⊙ K.
        incoming = psi[1:] * beta[1:] / (scale[1:] * z[1:])[:, :, None]
        if summed_edges:
            incoming[~inside[1:]] = 0.0
            # einsum, not @: this product over all T·B edges is large enough for OpenBLAS to start its
            # threads, whose hand-off cost several times the product itself on a busy machine.
            edges = K * np.einsum("tba,tbc->ac", alpha[:-1], incoming)
        else:
            is_edge = pad.slot[0] > 0
            before, instance = pad.slot[0][is_edge] - 1, pad.slot[1][is_edge]
            edges = alpha[before, instance][:, :, None] * K * incoming[before, instance][:, None, :]
        return Marginals(log_z, pad.unpad(nodes), edges)


class Greedy(Decoder):
    """Left-to-right decoding over the chain scores: fast, not exact."""

    name = "greedy"

    @property
    def exact(self) -> Decoder:
        return Viterbi()

    def argmax(self, scores: Scores) -> np.ndarray:
        pad = _Padded(scores)
        E = pad.E
        if E.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        path = np.empty(E.shape[:2], dtype=np.intp)
        path[0] = E[0].argmax(axis=1)
        for t in range(1, E.shape[0]):
            path[t] = (E[t] + scores.transitions[path[t - 1]]).argmax(axis=1)
        return pad.unpad(path)


DECODERS = {cls.name: cls for cls in (Viterbi, Greedy, Multiclass)}


def make_decoder(name: str) -> Decoder:
    """A decoder by name: ``viterbi``, ``greedy`` or ``multiclass``."""
    try:
        return DECODERS[name]()
    except KeyError:
        raise UnknownNameError("decoder", name, DECODERS) from None


def length_batches(lengths: np.ndarray, max_positions: int = 4096) -> list[np.ndarray]:
    """Instance indices sorted by length and cut into batches of at most ``max_positions`` padded
    positions (batch size × longest instance; an instance longer than that is a batch alone), so that
    a batch decoded together pads little."""
    order = np.argsort(lengths, kind="stable")
    padded = np.maximum(np.asarray(lengths)[order], 1)
    batches, start = [], 0
    while start < len(order):
        # Sorted lengths: a batch [start, stop) pads to padded[stop - 1] positions per instance.
        fits = (np.arange(start + 1, len(order) + 1) - start) * padded[start:] <= max_positions
        stop = start + max(1, int(np.count_nonzero(fits)))
        batches.append(order[start:stop])
        start = stop
    return batches


def decode_batches(decoder: Decoder, scores: Callable[[FeatureMatrix], Scores], matrix: FeatureMatrix, *,
                   max_positions: int = 4096) -> np.ndarray:
    """Decode every instance of an indexed corpus; labels per position.  ``scores(batch)`` gives the
    :class:`Scores` of a batch of instances.  Instances are decoded in batches of similar length
    (:func:`length_batches`), so padding costs little."""
    out = np.zeros(matrix.n_positions, dtype=np.int64)
    for chosen in length_batches(matrix.lengths, max_positions):
        out[matrix.positions(chosen)] = decoder.argmax(scores(matrix.take(chosen)))
    return out


def decode_corpus(decoder: Decoder, joint, w: np.ndarray, matrix: FeatureMatrix, *, max_positions: int = 4096) -> np.ndarray:
    """:func:`decode_batches` with the weights ``w`` of the joint feature map ``joint``."""
    return decode_batches(decoder, lambda batch: joint.scores(w, batch), matrix, max_positions=max_positions)
