"""Decoders: ``argmax_y w·φ(x, y)`` over one output structure, for a batch of instances at once.

Every decoder works on :class:`~structlin.joint.Scores` and never knows which learner asks.

* :class:`Multiclass` — every position independently: ``ŷ_i = argmax_y E[i, y]``.
* :class:`Viterbi` — first-order chain: ``argmax_y Σ_i E[i, y_i] + Σ_i A[y_{i-1}, y_i] + s[y_0] + e[y_{n-1}]``
  by dynamic programming, and its forward–backward marginals (scaled probability space).
* :class:`Greedy` — left to right over the same chain scores: ``ŷ_i = argmax_y E[i, y] + A[ŷ_{i-1}, y]``.

``E`` are the emission scores and ``A`` the transition scores; ``T`` is always a number of time steps.

Scores that carry ``allowed`` labels (a tag dictionary's candidates, :mod:`structlin.tagdict`) restrict every
decoder to the outputs whose labels are all allowed: Viterbi's argmax then runs a sparse recursion over the
allowed labels only (:class:`_Lattice`) where its cost model predicts it faster (:meth:`Viterbi.sparse_pays`);
everything else sets the emissions of the other labels to −inf (:meth:`Scores.masked`), exact but no faster.
Without ``allowed``, every decoder runs as it always did.

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
from .joint import Chains, Scores
from .matrix import FeatureMatrix, ranges


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

    def per_position(self, gold, predicted):
        """``c(y_p, ŷ_p)`` of every position (of one, for two label ids)."""
        return self.matrix[gold, predicted] if self.matrix is not None else self.scale * (gold != predicted)

    def per_instance(self, gold: np.ndarray, predicted: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``Δ(y, ŷ)`` of every instance of a batch of ``lengths``."""
        owner = np.repeat(np.arange(len(lengths)), lengths)
        return np.bincount(owner, self.per_position(gold, predicted), minlength=len(lengths))


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
        return scores.masked().emissions.argmax(axis=1)

    def marginals(self, scores: Scores, *, summed_edges: bool = False) -> Marginals:
        E = scores.masked().emissions
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
        E = scores.masked().emissions
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


class _Lattice:
    """The allowed labels of a batch as a sparse lattice, for Viterbi's restricted recursion.

    A *node* is an allowed label at a position.  Positions are numbered time-major (step ``t`` of every
    instance at least ``t + 1`` long, instances in order) and the nodes follow that order, each position's
    labels increasing: the nodes of position ``q`` are ``indptr[q] : indptr[q + 1]``, the positions of
    step ``t`` are ``step_positions[t] : step_positions[t + 1]``.  The *edges* into a node come from every
    node of the previous position of its instance (``previous[q]``; −1 at step 0), the nodes
    ``source_start[n] : source_start[n] + source_size[n]``: ``Σ_p K_{p−1} K_p`` edges in a batch (``K_p``
    allowed labels at ``p``) where the dense recursion has ``L²`` per instance and step.

    A position whose labels are all allowed, after one whose labels are too (two unknown words in a row),
    is a block: its ``L × L`` edges are the dense recursion's, computed as it does, without gathers.  The
    recursion at step ``t`` thus visits the nodes ``targets[step_targets[t] : step_targets[t + 1]]`` edge
    by edge and the positions ``blocks[step_blocks[t] : step_blocks[t + 1]]`` at once.
    """

    def __init__(self, scores: Scores):
        self.lengths = lengths = np.asarray(scores.lengths, dtype=np.int64)
        n_positions, L = scores.emissions.shape
        chain = Chains(lengths)
        self.first = np.cumsum(lengths) - lengths  # each instance's first position
        step = np.arange(n_positions) - np.repeat(self.first, lengths)
        order = np.argsort(step, kind="stable")  # the positions, time-major
        self.rank = np.empty_like(order)  # the time-major number of every position
        self.rank[order] = np.arange(n_positions)
        self.step_positions = np.concatenate([[0], np.cumsum(np.bincount(step))])
        position, self.label = np.nonzero(scores.allowed[order])
        sizes = np.bincount(position, minlength=n_positions)
        self.indptr = np.concatenate([[0], np.cumsum(sizes)])
        # start and end are folded into the first and last emissions, in _Padded's order.
        E = scores.emissions.copy()
        E[chain.first] += scores.start
        E[chain.last] += scores.end
        self.emissions = E[order[position], self.label]
        self.previous = np.full(n_positions, -1)
        self.previous[self.rank[chain.followers]] = self.rank[chain.followers - 1]
        has_previous = self.previous >= 0
        start, size = np.zeros(n_positions, dtype=np.int64), np.zeros(n_positions, dtype=np.int64)
        start[has_previous] = self.indptr[self.previous[has_previous]]
        size[has_previous] = sizes[self.previous[has_previous]]
        self.source_start, self.source_size = start[position], size[position]
        block = has_previous & (sizes == L) & (size == L)
        self.targets = np.flatnonzero(has_previous[position] & ~block[position])
        self.step_targets = np.searchsorted(self.targets, self.indptr[self.step_positions])
        self.blocks = np.flatnonzero(block)
        self.step_blocks = np.searchsorted(self.blocks, self.step_positions)
        self.n_labels, self.next_previous = L, np.ascontiguousarray(scores.transitions.T)
        self.row = self.label * L  # each node's row of next_previous, flat

    def edges(self, best: np.ndarray, targets: np.ndarray):
        """The edges into the nodes ``targets``, as ``(sources, values, starts)``: the edges into
        ``targets[i]`` are ``starts[i]`` up to ``starts[i + 1]``, from the nodes ``sources`` (labels
        increasing), scoring ``best[source] + A[label of source, label of target]``."""
        sizes = self.source_size[targets]
        ends = np.cumsum(sizes)
        starts = ends - sizes
        sources = np.arange(ends[-1]) + np.repeat(self.source_start[targets] - starts, sizes)
        # A's [next, previous] layout, flat: the edges into one node read one row.
        values = best[sources]
        values += self.next_previous.ravel()[np.repeat(self.row[targets], sizes) + self.label[sources]]
        return sources, values, starts

    def nodes(self, positions: np.ndarray):
        """The nodes of ``positions`` (original numbering), as ``(nodes, starts)``: position ``i``'s are
        ``starts[i]`` up to ``starts[i + 1]``."""
        q = self.rank[positions]
        sizes = self.indptr[q + 1] - self.indptr[q]
        return ranges(self.indptr[q], self.indptr[q + 1]), np.cumsum(sizes) - sizes


def _first_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The index in ``values`` of the first maximum of every segment ``values[starts[i] : starts[i + 1]]``
    (the last one to the end; none empty): ties go to the earliest element, as ``argmax``'s do."""
    top = np.maximum.reduceat(values, starts)
    segment = np.zeros(len(values), dtype=np.intp)
    segment[starts[1:]] = 1
    segment = np.cumsum(segment)
    hits = np.flatnonzero(values == top[segment])
    return hits[np.concatenate([[True], np.diff(segment[hits]) > 0])]


class Viterbi(Decoder):
    """Decoding of a first-order chain, exact over each position's ``top`` best labels; its forward–backward
    marginals (always over every label).

    ``top``: the argmax considers at each position only its ``top`` labels of highest emission score (with the
    cost added, in loss-augmented decoding; among the allowed ones), which is exact when a position has no
    more labels than that, and else a beam that makes decoding with hundreds of tags ``O(top²)`` per position
    rather than ``O(L²)``: Brown's 251 tags, 8,000 sentences, 10 epochs of the averaged perceptron train in 76.5
    s instead of 126.1 s at the same dev accuracy (95.66 against 95.62), and EWT's 49 XPOS tags score 94.64 /
    94.74 against 94.72 / 94.74 (seeds 0 / 1; docs/benchmarks.md).  ``None``: every label, always exact.
    Model files keep the decoder's name: a loaded one decodes with the default.

    ``restricted`` says how scores with ``allowed`` labels are decoded: ``"sparse"``, by the recursion over
    the allowed labels only (:meth:`restricted_argmax`); ``"masked"``, by the dense recursion over masked
    scores (:meth:`Scores.masked`); ``"auto"``, by the one :meth:`sparse_pays` predicts to be faster.  All
    three give the same labels.
    """

    name = "viterbi"
    #: The default ``top``: chosen on dev among 16, 32 and every label (every corpus of the defaults' panel but
    #: EWT XPOS has at most 32 labels, and is decoded exactly).
    TOP = 32

    #: Costs in edges of the dense recursion (about 0.5 ns each), measured by ``scripts/bench_tagdict.py``: an
    #: edge of the sparse recursion gathered by index, one step of it (its numpy calls, forward and back),
    #: and one of the dense recursion's ``B·L`` reductions over the previous labels besides its ``L`` edges.
    GATHERED_EDGE_COST, STEP_COST, ROW_COST = 10, 40_000, 100

    def __init__(self, restricted: str = "auto", top: int | None = TOP):
        if restricted not in ("auto", "sparse", "masked"):
            raise ValueError(f"restricted must be 'auto', 'sparse' or 'masked', got {restricted!r}")
        if top is not None and not (isinstance(top, int) and not isinstance(top, bool) and top >= 1):
            raise ValueError(f"top must be a positive integer or None, got {top!r}")
        self.restricted, self.top = restricted, top

    def argmax(self, scores: Scores) -> np.ndarray:
        if self.top is not None and scores.n_labels > self.top:
            scores = replace(scores, allowed=self._best_labels(scores))
        if scores.allowed is None:
            return self.dense_argmax(scores)
        if self.restricted == "sparse" or (self.restricted == "auto" and self.sparse_pays(scores)):
            return self.restricted_argmax(_Lattice(scores))
        return self.dense_argmax(scores.masked())

    def _best_labels(self, scores: Scores) -> np.ndarray:
        """Each position's :attr:`top` allowed labels of highest emission score (more on a tie), as a mask."""
        E = scores.emissions if scores.allowed is None else np.where(scores.allowed, scores.emissions, -np.inf)
        L = scores.n_labels
        kth = np.partition(E, L - self.top, axis=1)[:, L - self.top, None] if len(E) else np.zeros((0, 1))
        best = E >= kth
        return best if scores.allowed is None else best & scores.allowed

    @classmethod
    def sparse_pays(cls, scores: Scores) -> bool:
        """Whether the sparse recursion is predicted to be faster than the dense one for ``scores``: the
        dense one costs ``B·L·(L + ROW_COST)`` per step, the sparse one :attr:`STEP_COST` per step,
        ``L·(L + ROW_COST)`` per block (computed as the dense one is) and :attr:`GATHERED_EDGE_COST` per other
        edge."""
        lengths, L = np.asarray(scores.lengths), scores.n_labels
        K, followers = scores.allowed.sum(axis=1), Chains(lengths).followers
        edges = K[followers - 1] * K[followers]
        blocks = int(np.count_nonzero(edges == L * L))
        steps = int(lengths.max(initial=1)) - 1
        gathered = int(edges.sum()) - blocks * L * L
        sparse = cls.STEP_COST * steps + blocks * L * (L + cls.ROW_COST) + cls.GATHERED_EDGE_COST * gathered
        return sparse < steps * len(lengths) * L * (L + cls.ROW_COST)

    @staticmethod
    def restricted_argmax(lattice: _Lattice) -> np.ndarray:
        """The best output among those whose labels are all allowed, in ``O(Σ_p K_{p−1} K_p)`` work.

        The recursion of :meth:`dense_argmax` over nodes instead of all labels: with ``S(n)`` the nodes of
        the previous position of node ``n``'s instance and ``ℓ(n)`` its label,

            best[n] = E[n]  at step 0,   best[n] = max_{j ∈ S(n)} (best[j] + A[ℓ(j), ℓ(n)]) + E[n]

        the edges gathered per node, or for a block position at once as in the dense recursion.  Back
        pointers are not kept: backtracking recomputes the edges into the one chosen node of each instance
        (``K`` values, not ``K²``) and takes their first maximum, the lowest label, as the dense recursion
        does; the values are the same sums, so they tie alike.
        """
        lengths, L = lattice.lengths, lattice.n_labels
        out = np.zeros(int(lengths.sum()), dtype=np.int64)
        if not len(out):
            return out
        best = lattice.emissions.copy()
        labels = np.arange(L)
        for t in range(1, len(lattice.step_positions) - 1):
            targets = lattice.targets[lattice.step_targets[t] : lattice.step_targets[t + 1]]
            if len(targets):
                _, values, starts = lattice.edges(best, targets)
                best[targets] += np.maximum.reduceat(values, starts)
            blocks = lattice.blocks[lattice.step_blocks[t] : lattice.step_blocks[t + 1]]
            if len(blocks):
                previous = best[lattice.indptr[lattice.previous[blocks]][:, None] + labels]
                best[lattice.indptr[blocks][:, None] + labels] += np.maximum.reduce(
                    previous[:, None, :] + lattice.next_previous, axis=2)
        # Backtracking visits the instances longest first, so those that reach step t are a prefix; each
        # one's node starts as its best last node and follows the back pointers from its last step on.
        order = np.argsort(-lengths, kind="stable")
        order = order[lengths[order] > 0]
        running = np.cumsum(np.bincount(lengths[order] - 1)[::-1])[::-1]  # running[t]: instances reaching t
        nodes, starts = lattice.nodes(lattice.first[order] + lengths[order] - 1)
        node = nodes[_first_max(best[nodes], starts)]
        for t in range(len(running) - 1, -1, -1):
            alive = node[: running[t]]
            out[lattice.first[order[: running[t]]] + t] = lattice.label[alive]
            if t:
                sources, values, starts = lattice.edges(best, alive)
                alive[:] = sources[_first_max(values, starts)]
        return out

    def dense_argmax(self, scores: Scores) -> np.ndarray:
        """Viterbi's recursion over every label, ``O(T·B·L²)`` (``allowed`` is ignored)."""
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
        flat, cells = candidates.reshape(B * L, L), np.arange(B * L)
        for t in range(1, T):
            np.add(previous[t - 1], next_previous, out=candidates)
            candidates.argmax(axis=2, out=back[t])
            # the maximum read at the argmax: one value per cell, where a second reduction over L costs 3×
            np.add(flat[cells, back[t].ravel()].reshape(B, L), E[t], out=best[t])
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

        Labels that are not ``allowed`` get ``μ = −inf`` (over masked scores: exact, but no faster).
        """
        scores = scores.masked()
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

        With ``allowed`` labels, the distribution is over the outputs whose labels are all allowed (over
        masked scores: exact, but no faster); the others get probability 0.
        """
        scores = scores.masked()
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
        pad = _Padded(scores.masked())
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


#: The bytes of a batch's arrays of positions × labels (float64), at most: below glibc's largest threshold for mapping
#: a block of its own (32 MiB), so that freed temporaries are reused instead of mapped afresh and faulted in at every
#: batch (max-ent's marginals of 12,000 documents × 1,658 labels: 1.5 s a pass against 0.14 s).
BATCH_BYTES = 1 << 24


def batch_positions(n_labels: int, most: int) -> int:
    """The positions a batch holds: ``most``, fewer with many labels (:data:`BATCH_BYTES`)."""
    return max(1, min(most, BATCH_BYTES // (8 * max(n_labels, 1))))


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


def decode_batches(decoder: Decoder, scores: Callable[[FeatureMatrix | Scores], Scores], matrix: FeatureMatrix | Scores,
                   *, max_positions: int = 4096) -> np.ndarray:
    """Decode every instance of an indexed corpus (or of the scores of every instance); labels per position.
    ``scores(batch)`` gives the :class:`Scores` of a batch of instances (of scores: the batch itself).  Instances
    are decoded in batches of similar length (:func:`length_batches`), so padding costs little."""
    out = np.zeros(matrix.n_positions, dtype=np.int64)
    for chosen in length_batches(matrix.lengths, max_positions):
        out[matrix.positions(chosen)] = decoder.argmax(scores(matrix.take(chosen)))
    return out


def decode_corpus(decoder: Decoder, joint, w: np.ndarray, matrix: FeatureMatrix, *, max_positions: int = 4096) -> np.ndarray:
    """:func:`decode_batches` with the weights ``w`` of the joint feature map ``joint`` (batches of at most
    ``max_positions``, fewer with many labels: :func:`batch_positions`)."""
    return decode_batches(decoder, lambda batch: joint.scores(w, batch), matrix,
                          max_positions=batch_positions(joint.n_labels, max_positions))
