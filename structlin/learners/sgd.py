"""Weights for stochastic gradient descent with sparse steps: lazy L2 shrinkage, momentum, averaging.

A step of SGD on ``Σ_t loss_t + (λ/2)‖w‖²`` per instance is ``w ← (1 − ηλ)·w + δ`` with ``δ`` the
(sparse) negative loss gradient times the learning rate.  Shrinking every weight at every step would
cost O(weights); instead ``w = a·v`` and the shrinkage only rescales ``a``, so a step costs
O(non-zeros of δ) (Shalev-Shwartz et al. 2007; Bottou 2012, "Stochastic gradient descent tricks")::

    a ← (1 − ηλ)·a,    v ← v + δ/a

The Polyak–Ruppert average of the iterates, ``w̄ = (1/K) Σ_{k=1..K} w_k``, is kept exactly in the same
O(non-zeros) with ``S_k = Σ_{i≤k} a_i`` and one more vector ``u``: each step's change ``Δv_k = δ_k/a_k``
also does ``u ← u + S_{k−1}·Δv_k``, and then ``Σ_k a_k v_k = S_K·v_K − u``.  When ``a`` falls below
``1e-6`` (or rises above ``1e6``) it is folded into ``v`` and the sums so far into a dense total, an
O(weights) step that happens rarely.

With momentum ``μ > 0`` (Polyak's heavy ball, on the loss part of the step) the step keeps a velocity
``m ← μ·m + δ`` and applies ``w ← (1 − ηλ)·w + m``; ``m`` is dense, so each step then costs O(weights).
"""

from __future__ import annotations

import numpy as np

_RESCALE_BELOW, _RESCALE_ABOVE = 1e-6, 1e6


class SGDWeights:
    """``w = a·v`` with lazy shrinkage, optional momentum and the exact running average of the steps'
    iterates; starts at ``w = 0``, or at ``initial`` after ``steps`` steps (a run that goes on elsewhere).

    The flat weight vector of ``size`` is addressed by rows of ``width`` consecutive weights (a joint
    feature map's weights are ``width = labels`` per feature row, and its tail a whole number of such
    rows): a step touches whole rows, which numpy gathers and scatters far faster than scattered
    single weights.
    """

    def __init__(self, size: int, width: int = 1, *, momentum: float = 0.0, averaged: bool = True,
                 initial: np.ndarray | None = None, steps: int = 0):
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        if size % width:
            raise ValueError(f"size {size} is not a whole number of rows of width {width}")
        self.momentum, self.averaged = momentum, averaged
        shape = (size // width, width)
        self._v = np.zeros(shape) if initial is None else np.array(initial, dtype=np.float64).reshape(shape)
        self._a = 1.0
        self._velocity = np.zeros(shape) if momentum else None
        self._u = np.zeros(shape) if averaged else None
        self._running = 0.0  # S_k
        self._total = np.zeros(shape) if averaged else None  # Σ a_k v_k folded in at rescalings
        self.steps = steps  # every step, for the learning-rate schedule (``steps`` taken before ``initial``)
        self._averaged_steps = 0
        self.epochs = 0

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The current weights of ``rows``, a ``(len(rows), width)`` array."""
        return self._a * self._v[rows]

    def step(self, shrink: float, rows: np.ndarray, delta: np.ndarray) -> None:
        """``w ← shrink·w + δ`` (with momentum, ``m ← μ·m + δ`` and ``w ← shrink·w + m``); ``δ`` is given by
        its ``(len(rows), width)`` values on the distinct ``rows``, zero elsewhere."""
        if not shrink > 0:
            raise ValueError(f"the shrinkage factor must be positive, got {shrink}: lower the learning rate or l2")
        self._a *= shrink
        if self._velocity is not None:
            self._velocity *= self.momentum
            self._velocity[rows] += delta
            change = self._velocity / self._a
            self._v += change
            if self._u is not None:
                self._u += self._running * change
        else:
            change = delta / self._a
            self._v[rows] += change
            if self._u is not None:
                self._u[rows] += self._running * change
        self._running += self._a
        self.steps += 1
        self._averaged_steps += 1
        if not _RESCALE_BELOW <= self._a <= _RESCALE_ABOVE:
            self._rescale()

    def _rescale(self) -> None:
        """Fold ``a`` into ``v`` (and the average's sums so far into the dense total)."""
        if self._u is not None:
            self._total += self._running * self._v - self._u
            self._u[:] = 0.0
            self._running = 0.0
        self._v *= self._a
        self._a = 1.0

    def restart_average(self) -> None:
        """Average from the next step on only (the first iterates, far from the optimum, would weigh
        on the average for long)."""
        if self._u is not None:
            self._total[:] = 0.0
            self._u[:] = 0.0
            self._running = 0.0
            self._averaged_steps = 0

    def start_epoch(self) -> None:
        """Count an epoch; at the second the average restarts (see :meth:`hypothesis`)."""
        self.epochs += 1
        if self.epochs == 2:
            self.restart_average()

    def hypothesis(self) -> np.ndarray:
        """The weights to predict with: when averaged, the average of the iterates from the second
        epoch on (Polyak–Ruppert; the current weights during the first); else the current weights."""
        return self.average() if self.averaged and self.epochs > 1 else self.current()

    def squared_norm(self) -> float:
        """``‖w‖²``, without a copy of ``w``."""
        flat = self._v.ravel()
        return float(self._a**2 * (flat @ flat))

    def current(self) -> np.ndarray:
        """The flat weights now (a new array)."""
        return (self._a * self._v).ravel()

    def average(self) -> np.ndarray:
        """``(1/K) Σ_k w_k`` over the ``K`` steps since the start or :meth:`restart_average` (a new flat
        array; the current weights when there is none)."""
        if self._u is None or self._averaged_steps == 0:
            return self.current()
        out = self._total + self._running * self._v
        out -= self._u
        out /= self._averaged_steps
        return out.ravel()
