"""Decoders: ``argmax_y w·φ(x, y)`` over one output structure, for a batch of instances at once.

Every decoder works on :class:`~structlin.joint.Scores` and never knows which learner asks.

* :class:`Multiclass` — every position independently: ``ŷ_i = argmax_y E[i, y]``.
* :class:`Viterbi` — first-order chain: ``argmax_y Σ_i E[i, y_i] + Σ_i T[y_{i-1}, y_i] + s[y_0] + e[y_{n-1}]``
  by dynamic programming, and its forward–backward marginals (scaled probability space).
* :class:`Greedy` — left to right over the same chain scores: ``ŷ_i = argmax_y E[i, y] + T[ŷ_{i-1}, y]``.

``loss_augmented_argmax`` adds a cost to every wrong label at every position (Hamming loss) and runs
the *unchanged* decoder.  Ties break towards the lower label index.  Batches are decoded together,
padded to the longest instance, so the Python loop runs over positions, never over instances,
features or labels.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .errors import UnknownNameError
from .joint import Scores


@dataclass
class Marginals:
    """``log_partition[b] = log Z(x_b)``; ``nodes[p, y] = P(y_p = y)``; ``edges[k, a, b]`` is
    ``P(y_{p-1} = a, y_p = b)`` for every non-first position ``p`` in instance order, or with
    ``summed_edges`` their sum ``edges[a, b]`` over the batch (``None`` for independent positions)."""

    log_partition: np.ndarray
    nodes: np.ndarray
    edges: np.ndarray | None = None


class Decoder(ABC):
    """Interface shared by all decoders."""

    name = ""
    uses_transitions = True

    @abstractmethod
    def argmax(self, scores: Scores) -> np.ndarray:
        """The best label of every position of every instance (concatenated)."""

    def loss_augmented_argmax(self, scores: Scores, gold: np.ndarray, cost: float = 1.0) -> np.ndarray:
        """``argmax_y w·φ(x, y) + cost · Hamming(y, gold)``: ``cost`` added to every wrong label."""
        augmented = scores.emissions + cost
        augmented[np.arange(len(gold)), gold] -= cost
        return self.argmax(Scores(augmented, scores.lengths, scores.transitions, scores.start, scores.end))

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
        # delta[t, b, y]: best score of a prefix ending in label y at t; back[t, b, y]: its label at t − 1.
        next_previous = np.ascontiguousarray(scores.transitions.T)  # [next, previous]: reduce the last axis
        delta = np.empty_like(E)
        back = np.empty(E.shape, dtype=np.intp)
        candidates = np.empty((B, L, L))
        delta[0] = E[0]
        previous = delta[:, :, None, :]  # previous[t - 1][b, 0, y'] broadcasts over next labels
        for t in range(1, T):
            np.add(previous[t - 1], next_previous, out=candidates)
            candidates.argmax(axis=2, out=back[t])
            np.add(np.maximum.reduce(candidates, axis=2), E[t], out=delta[t])
        # Past an instance's end the back pointers become the identity, so backtracking from T − 1
        # carries each instance's final label unchanged down to its last position.
        past_end = np.arange(T)[:, None] >= pad.lengths[None, :]
        back[past_end] = np.arange(L)
        current = np.zeros(B, dtype=np.intp)
        current[pad.running] = delta[pad.last, pad.running].argmax(axis=1)
        path = np.empty((T, B), dtype=np.intp)
        rows = np.arange(B)
        for t in range(T - 1, 0, -1):
            path[t] = current
            current = back[t, rows, current]
        path[0] = current
        return pad.unpad(path)

    def max_marginals(self, scores: Scores) -> np.ndarray:
        """Max-product forward–backward: ``μ_t = a_t + b_t`` with

            a_0 = E_0,   a_t[k] = max_j (a_{t−1}[j] + T[j, k]) + E_t[k]
            b_{n−1} = 0,   b_t[k] = max_j (T[k, j] + E_{t+1}[j] + b_{t+1}[j])
        """
        pad = _Padded(scores)
        E, T = pad.E, scores.transitions
        forward, backward = E.copy(), np.zeros_like(E)
        for t in range(1, len(E)):
            forward[t] += (forward[t - 1][:, :, None] + T).max(axis=1)
        has_next = np.arange(len(E))[:, None] < (pad.lengths - 1)[None, :]
        for t in range(len(E) - 2, -1, -1):
            step = (T + (E[t + 1] + backward[t + 1])[:, None, :]).max(axis=2)
            backward[t] = np.where(has_next[t][:, None], step, 0.0)
        return pad.unpad(forward + backward)

    def marginals(self, scores: Scores, *, summed_edges: bool = False) -> Marginals:
        """Forward–backward in scaled probability space, each recursion step a matrix product.

        With ``ψ_t = exp(E_t − m_t)`` (``m_t`` the row maximum) and ``K = exp(T − max T)``::

            α̃_0 = ψ_0,   α̃_t = (α̂_{t−1} K) ⊙ ψ_t,   c_t = Σ α̃_t,   α̂_t = α̃_t / c_t
            β̂_{n−1} = 1,  β̂_t ∝ K (ψ_{t+1} ⊙ β̂_{t+1})  (normalised to sum 1)
            log Z = Σ_t (log c_t + m_t) + (n − 1) max T
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


def decode_corpus(decoder: Decoder, joint, w: np.ndarray, matrix, *, max_positions: int = 4096) -> np.ndarray:
    """Decode every instance of an indexed corpus with weights ``w``; labels per position.

    Instances are decoded in batches of similar length (:func:`length_batches`), so padding costs little.
    """
    out = np.zeros(matrix.n_positions, dtype=np.int64)
    for chosen in length_batches(matrix.lengths, max_positions):
        out[matrix.positions(chosen)] = decoder.argmax(joint.scores(w, matrix.take(chosen)))
    return out
