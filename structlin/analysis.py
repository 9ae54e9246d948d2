"""Theory instruments: the perceptron's mistake bound and the online-to-batch bound, measured on data.

For an indexed training corpus ``{(x_t, y_t)}`` and the joint feature map φ (:mod:`structlin.joint`), write
``ψ_t(z) = φ(x_t, y_t) − φ(x_t, z)``.

* The radius ``R = max_t max_{y, z} ‖φ(x_t, y) − φ(x_t, z)‖`` (:func:`radius`).
* The margin of weights ``w ≠ 0``, ``γ(w) = min_t min_{z ≠ y_t} w·ψ_t(z) / ‖w‖`` (:func:`certify`).  When it
  is positive, ``w/‖w‖`` separates the data with that margin, so ``γ(w) ≤ γ*``, the optimal margin: any
  weights *certify* a lower bound.  The certified margin ``γ̂`` (:func:`certified_margin`) is that of the
  structured SVM with a large ``C``, an approximation of the hard-margin SVM, whose solution attains ``γ*``.
* Novikoff (1962), Collins (2002, Theorem 1): on data separable with margin ``γ`` the perceptron (from
  ``w = 0``, exact argmax, ``w += ψ_t(ŷ)`` on every mistake) makes at most ``R²/γ²`` mistakes, in any
  order and over any number of passes.  Since ``γ̂ ≤ γ*``, ``R²/γ̂²`` bounds them too
  (:func:`perceptron_mistakes` counts them, example by example).
* Cesa-Bianchi, Conconi & Gentile (2004): the mistakes of the first online pass bound the risk of the
  hypotheses it went through (:func:`online_to_batch_bound`).

:func:`analyze` measures all of them on one corpus, optionally after the Δ trick
(:class:`~structlin.learners.delta_trick.DeltaTrick`); :func:`planted_separable` draws data with a known
separating margin to check them against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from .decoders import Decoder, Multiclass, Viterbi, length_batches
from .joint import JointFeatureMap
from .learners.delta_trick import DeltaTrick
from .learners.epochs import minibatches
from .learners.svm import SVM
from .matrix import FeatureMatrix

__all__ = ["Analysis", "Certificate", "MistakeCurve", "Planted", "Radius", "analyze", "certified_margin", "certify",
           "margins", "online_to_batch_bound", "perceptron_mistakes", "planted_separable", "radius"]


@dataclass(frozen=True)
class Radius:
    """``R`` and whether it is exact (else an upper bound: see :func:`radius`)."""

    value: float
    exact: bool


def radius(joint: JointFeatureMap, X: FeatureMatrix) -> Radius:
    """``R = max_t max_{y, z} ‖φ(x_t, y) − φ(x_t, z)‖`` over the instances of the indexed corpus ``X``.

    For an instance of ``n`` positions with feature rows ``f_i``, ``G_ij = f_i·f_j`` and
    ``d_i = e_{y_i} − e_{z_i}``, the emission and transition blocks being disjoint,

        ‖φ(x, y) − φ(x, z)‖² = Σ_ij G_ij (d_i·d_j) + ‖τ(y) − τ(z)‖²

    with ``τ`` the transition, start and end counts.  As ``|d_i·d_j| ≤ 2`` and counts are non-negative
    (``‖τ(y) − τ(z)‖² ≤ ‖τ(y)‖² + ‖τ(z)‖² ≤ 2((n − 1)² + 2)``),

        R² ≤ max_t  2 Σ_ij |G_ij|  +  [transitions] (2(n − 1)² + 4)

    and the constant outputs ``y = a…a``, ``z = b…b`` (``a ≠ b``) attain both terms when every
    ``G_ij ≥ 0``.  So the value is exact when the instance attaining the maximum has no negative
    ``G_ij`` (always for a document: ``R = √2·max_t ‖x_t‖`` without transitions; for non-negative feature
    values), and an upper bound otherwise.  ``R = 0`` with fewer than two labels.
    """
    if joint.n_labels < 2 or X.n_positions == 0:
        return Radius(0.0, True)
    instance = np.repeat(np.arange(X.n_instances), X.lengths)
    # Columns made distinct per instance, so that A Aᵀ holds only the Gram blocks G of the instances.
    _, columns = np.unique(instance[X.entry_positions()].astype(np.int64) * max(joint.n_rows, 1) + X.indices,
                           return_inverse=True)
    A = scipy.sparse.csr_matrix((X.values.astype(np.float64), columns.ravel(), X.indptr),
                                shape=(X.n_positions, columns.max() + 1))
    gram = (A @ A.T).tocoo()
    owner = instance[gram.row]
    squared = 2 * np.bincount(owner, np.abs(gram.data), minlength=X.n_instances)
    if joint.transitions:
        n = X.lengths
        squared += np.where(n > 0, 2.0 * (n - 1) ** 2 + 4, 0.0)
    negative = np.bincount(owner, gram.data < 0, minlength=X.n_instances) > 0
    top = np.flatnonzero(squared == squared.max())
    return Radius(math.sqrt(squared.max()), not negative[top].any())


def margins(joint: JointFeatureMap, w: np.ndarray, X: FeatureMatrix, y: np.ndarray) -> np.ndarray:
    """``w·φ(x_t, y_t) − max_{z ≠ y_t} w·φ(x_t, z)`` for every instance (not divided by ``‖w‖``; +inf for
    an instance without positions).  Every ``z ≠ y_t`` differs from ``y_t`` at some position ``p``, so the
    max is ``max_{p, k ≠ y_p} μ[p, k]`` over the exact max-marginals of the map's structure
    (:meth:`~structlin.decoders.Decoder.max_marginals`; for a document, the second-best label's score)."""
    inference = Viterbi(top=None) if joint.transitions else Multiclass()
    out = np.full(X.n_instances, np.inf)
    for chosen in length_batches(X.lengths):
        batch, gold = X.take(chosen), y[X.positions(chosen)]
        scores = joint.scores(w, batch)
        rivals = inference.max_marginals(scores)
        rivals[np.arange(len(gold)), gold] = -np.inf
        best_rival = np.full(len(chosen), -np.inf)
        np.maximum.at(best_rival, np.repeat(np.arange(len(chosen)), batch.lengths), rivals.max(axis=1))
        out[chosen] = scores.score(gold) - best_rival
    return out


@dataclass
class Certificate:
    """The margin that weights certify on a training set: ``margin = γ(w)`` (≤ 0: not certified
    separable), ``violations`` (instances with margin ≤ 0) and the unit-norm ``weights``; for
    :func:`certified_margin` also the SVM run (``passes``, final ``duality_gap`` and ``objective``)."""

    margin: float
    violations: int
    weights: np.ndarray
    passes: int | None = None
    duality_gap: float | None = None
    objective: float | None = None

    @property
    def separable(self) -> bool:
        return self.margin > 0


def certify(joint: JointFeatureMap, w: np.ndarray, X: FeatureMatrix, y: np.ndarray) -> Certificate:
    """``γ(w) = min_t [w·φ(x_t, y_t) − max_{z ≠ y_t} w·φ(x_t, z)] / ‖w‖`` (:func:`margins`); −inf for
    ``w = 0``, which certifies nothing."""
    norm = float(np.linalg.norm(w))
    if norm == 0:
        return Certificate(-math.inf, X.n_instances, w.copy())
    per_instance = margins(joint, w, X, y) / norm
    return Certificate(float(per_instance.min(initial=math.inf)), int(np.count_nonzero(per_instance <= 0)), w / norm)


def certified_margin(joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *,
                     C: float = 1000.0, passes: int = 100, rtol: float = 0.01, seed: int = 0) -> Certificate:
    """``γ̂``: the margin certified by the structured SVM (:class:`~structlin.learners.SVM`, BCFW, Hamming
    margin rescaling) with a large ``C`` (``λ = 1/(C·n)``), an approximation of the hard-margin SVM.

    BCFW runs at most ``passes`` passes and stops once the exact duality gap is at most ``rtol``·P(w)
    (an absolute tolerance would be meaningless: ``P`` itself shrinks as ``1/C``).  With margin
    rescaling, weights with no slack satisfy ``w·ψ_t(z) ≥ Hamming(y_t, z) ≥ 1``, so ``γ̂ ≥ 1/‖w‖``.  The
    Hamming-scaled margins only choose ``w``: what is certified is the plain margin :func:`certify` computes,
    the one the perceptron's bound needs (for a chain it can be below that of other weights)."""
    if passes < 1:
        raise ValueError(f"passes must be at least 1, got {passes}")
    svm = SVM(passes, solver="bcfw", C=C, tol=0.0, seed=seed, progress=False,
              callback=lambda record, _: record["duality_gap"] <= rtol * record["objective"])
    svm.fit(joint, decoder, X, y)
    last = svm.history_[-1]
    certificate = certify(joint, svm.weights_, X, y)
    certificate.passes, certificate.duality_gap, certificate.objective = (len(svm.history_), last["duality_gap"],
                                                                          last["objective"])
    return certificate


@dataclass(frozen=True)
class MistakeCurve:
    """The online mistakes of a perceptron run over ``n`` instances: ``visits`` holds the visit of every
    mistake (0-based, counted over all epochs, so ``visit // n`` is its epoch); ``epochs`` were run."""

    n: int
    visits: np.ndarray
    epochs: int

    @property
    def total(self) -> int:
        return len(self.visits)

    @property
    def per_epoch(self) -> list[int]:
        return np.bincount(self.visits // max(self.n, 1), minlength=self.epochs).tolist()

    @property
    def converged(self) -> bool:
        """Whether the last epoch made no mistake (so the perceptron separates the training data)."""
        return self.per_epoch[-1] == 0

    def cumulative(self, seen) -> np.ndarray:
        """Mistakes made within the first ``seen`` visits (a number or an array of them)."""
        return np.searchsorted(self.visits, seen, side="left")


def perceptron_mistakes(joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *,
                        epochs: int = 10, seed: int = 0) -> MistakeCurve:
    """The textbook structured perceptron (Collins 2002), counting its mistakes example by example: from
    ``w = 0``, one instance at a time, ``ŷ = decoder.argmax`` and ``w += φ(x, y) − φ(x, ŷ)`` when ``ŷ ≠ y``;
    at most ``epochs`` epochs, stopping after one without mistakes.  Its visiting order is that of
    :class:`~structlin.learners.Perceptron` with the same ``seed`` and ``batch_size=1``, so the mistakes per
    epoch are its ``history_``'s ``train_mistakes``.  The mistake bound assumes an exact argmax (Viterbi,
    Multiclass): with Greedy an update need not be on a violation."""
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    rng = np.random.default_rng(seed)
    w = np.zeros(joint.size)
    visits, epoch = [], 0
    for epoch in range(1, epochs + 1):
        before = len(visits)
        for t, (batch, gold) in enumerate(minibatches(X, y, 1, rng)):
            predicted = decoder.argmax(joint.scores(w, batch))
            if (predicted != gold).any():
                indices, values, _ = joint.feature_difference(batch, gold, predicted)
                np.add.at(w, indices, values)
                visits.append((epoch - 1) * X.n_instances + t)
        if len(visits) == before:
            break
    return MistakeCurve(X.n_instances, np.array(visits, dtype=np.int64), epoch)


def online_to_batch_bound(mistakes: int, n: int, delta: float) -> float:
    """``M/n + √(2 ln(1/δ)/n)``: with probability at least ``1 − δ`` over ``n`` i.i.d. examples, the mean
    risk (0-1 loss) of the hypotheses ``H_0, …, H_{n−1}`` an online learner goes through in one pass in
    which it makes ``M`` mistakes (Cesa-Bianchi, Conconi & Gentile 2004, Proposition 1, for a loss in
    [0, 1]: Azuma–Hoeffding on the martingale ``Σ_t risk(H_{t−1}) − loss_t``).

    That mean is the risk of a hypothesis drawn at random from them.  The 0-1 loss is not convex, so the
    averaged hypothesis has no such guarantee for it (their Corollary 2 needs a convex loss); the
    majority vote errs only where at least half of them do, so its risk is at most twice the bound.
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if n < 1 or not 0 <= mistakes <= n:
        raise ValueError(f"need 0 <= mistakes <= n and n >= 1, got {mistakes} mistakes in {n}")
    return mistakes / n + math.sqrt(2 * math.log(1 / delta) / n)


@dataclass
class Analysis:
    """What :func:`analyze` measured; :meth:`format` and :meth:`to_dict` report it."""

    n_instances: int
    n_positions: int
    n_labels: int
    n_features: int
    delta_trick: float | None
    radius: Radius
    certificate: Certificate
    C: float
    curve: MistakeCurve
    confidence_delta: float
    online_to_batch: float

    @property
    def bound(self) -> float | None:
        """``R²/γ̂²``, or None without a certified margin."""
        return self.radius.value**2 / self.certificate.margin**2 if self.certificate.separable else None

    def to_dict(self) -> dict:
        """A JSON-serialisable dict of every measure; the mistake curve as the visit of every mistake."""
        c, curve = self.certificate, self.curve
        return {
            "instances": self.n_instances, "positions": self.n_positions, "labels": self.n_labels,
            "features": self.n_features, "delta_trick": self.delta_trick,
            "radius": self.radius.value, "radius_exact": self.radius.exact,
            "certified_margin": c.margin if c.separable else None, "separable": c.separable,
            "violations": c.violations, "svm": {"C": self.C, "passes": c.passes, "duality_gap": c.duality_gap,
                                                "objective": c.objective},
            "mistake_bound": self.bound, "mistakes": curve.total, "epochs": curve.epochs,
            "converged": curve.converged, "mistakes_per_epoch": curve.per_epoch,
            "mistake_visits": curve.visits.tolist(),
            "online_to_batch": {"delta": self.confidence_delta, "first_epoch_mistakes": curve.per_epoch[0],
                                "n": self.n_instances, "mean_risk_bound": self.online_to_batch,
                                "majority_vote_bound": 2 * self.online_to_batch},
        }

    def format(self) -> str:
        c, curve, R = self.certificate, self.curve, self.radius
        trick = f"; Δ trick, Δ = {self.delta_trick:g}: one id feature per position" if self.delta_trick else ""
        svm = (f"structured SVM (BCFW, C = {self.C:g}): {c.passes} passes, duality gap {c.duality_gap:.3g} "
               f"= {c.duality_gap / c.objective if c.objective else 0:.2%} of P(w)")
        size = (f"{self.n_instances:,} instances ({self.n_positions:,} positions), {self.n_labels} labels, "
                f"{self.n_features:,} features{trick}")
        lines = [size, f"radius R = {R.value:.6g} ({'exact' if R.exact else 'upper bound'})"]
        if c.separable:
            lines += [f"certified margin γ̂ = {c.margin:.6g} ({svm})",
                      f"mistake bound R²/γ̂² = {self.bound:,.1f} (Novikoff 1962; Collins 2002)"]
        else:
            lines.append(f"not certified separable: the {svm} leaves {c.violations:,} of {self.n_instances:,} "
                         f"instances with margin ≤ 0 (smallest {c.margin:.3g}); no mistake bound")
        state = "converged" if curve.converged else "not converged"
        lines.append(f"perceptron mistakes: {curve.total:,} in {curve.epochs} epochs ({state}); per epoch: "
                     f"{' '.join(map(str, curve.per_epoch))}")
        lines.append(f"online-to-batch (Cesa-Bianchi et al. 2004), δ = {self.confidence_delta:g}: "
                     f"{curve.per_epoch[0]:,} mistakes in the first epoch of {self.n_instances:,}; with probability "
                     f"≥ {1 - self.confidence_delta:.0%}, mean risk of its hypotheses ≤ {self.online_to_batch:.4f}, "
                     f"majority vote ≤ {2 * self.online_to_batch:.4f}")
        return "\n".join(lines)


def analyze(joint: JointFeatureMap, decoder: Decoder, X: FeatureMatrix, y: np.ndarray, *, C: float = 1000.0,
            passes: int = 100, epochs: int = 10, seed: int = 0, delta: float = 0.05,
            delta_trick: float | None = None) -> Analysis:
    """Every instrument on one indexed training corpus: ``R``, ``γ̂`` and ``R²/γ̂²`` beside the perceptron's
    mistakes (``epochs`` at most, order seeded by ``seed``), and the online-to-batch bound of its first
    epoch at confidence ``1 − delta``.  With ``delta_trick = Δ`` all of it is measured on the corpus
    augmented by :class:`~structlin.learners.delta_trick.DeltaTrick`."""
    if not 0 < delta < 1:  # checked before the long runs, not after them
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if delta_trick is not None:
        augmented = DeltaTrick(joint, X, delta_trick)
        joint, X = augmented.joint, augmented.X
    curve = perceptron_mistakes(joint, decoder, X, y, epochs=epochs, seed=seed)
    return Analysis(X.n_instances, X.n_positions, joint.n_labels, joint.n_rows, delta_trick, radius(joint, X),
                    certified_margin(joint, decoder, X, y, C=C, passes=passes, seed=seed), C, curve, delta,
                    online_to_batch_bound(curve.per_epoch[0], X.n_instances, delta))


@dataclass
class Planted:
    """Data separable by the unit weights ``w`` (of ``joint``'s layout) with margin at least ``margin``."""

    joint: JointFeatureMap
    X: FeatureMatrix
    y: np.ndarray
    w: np.ndarray
    margin: float


def planted_separable(n: int, dim: int, n_labels: int, margin: float, *, length: int = 1, seed: int = 0,
                      max_draws: int = 10**6) -> Planted:
    """``n`` instances separated by a random unit ``w*`` with margin at least ``margin``, so ``γ* ≥ margin``.

    Position features are dense, uniform on the unit sphere of ``R^dim``; an instance is a document
    (``length=1``) or a chain of ``length`` positions with transitions; its labels are
    ``argmax_y w*·φ(x, y)``, and instances whose :func:`margins` under ``w*`` is below ``margin`` are
    dropped (at most ``max_draws`` are drawn).
    """
    rng = np.random.default_rng(seed)
    joint = JointFeatureMap([str(k) for k in range(n_labels)], np.arange(dim), transitions=length > 1)
    decoder = Viterbi(top=None) if length > 1 else Multiclass()
    w = rng.standard_normal(joint.size)
    w /= np.linalg.norm(w)
    rows, labels, kept, drawn = [], [], 0, 0
    while kept < n:
        if drawn >= max_draws:
            raise ValueError(f"only {kept} of {max_draws:,} draws have margin >= {margin}; ask for a smaller margin")
        x = rng.standard_normal((4 * n * length, dim))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        X = _dense(x, length)
        y = decoder.argmax(joint.scores(w, X))
        keep = np.flatnonzero(margins(joint, w, X, y) >= margin)[: n - kept]
        rows.append(x[X.positions(keep)])
        labels.append(y[X.positions(keep)])
        kept, drawn = kept + len(keep), drawn + X.n_instances
    return Planted(joint, _dense(np.concatenate(rows), length), np.concatenate(labels), w, margin)


def _dense(x: np.ndarray, length: int) -> FeatureMatrix:
    """Dense position rows ``x`` as a feature matrix of instances of ``length`` positions."""
    positions, dim = x.shape
    return FeatureMatrix(np.arange(positions + 1) * dim, np.tile(np.arange(dim), positions), x.ravel(),
                         np.full(positions // length, length))
