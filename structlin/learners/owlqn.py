"""OWL-QN: limited-memory quasi-Newton minimisation of a smooth convex objective plus an L1 penalty.

Orthant-wise limited-memory quasi-Newton (Andrew & Gao 2007, "Scalable training of L1-regularized
log-linear models") minimises

    F(x) = f(x) + l1·‖x‖₁

for a smooth convex ``f`` and yields exact zeros.  ``F`` is not differentiable where a coordinate is
zero, so L-BFGS cannot be used on it directly, and scipy's L-BFGS-B can only solve it on the split
variables ``x = u − v, u, v ≥ 0``, which doubles the memory.  OWL-QN instead moves within one orthant
at a time, where ``F`` is smooth, and puts a coordinate at zero when a step would make it cross zero.
With ``g = ∇f(x)``:

Pseudo-gradient (the steepest descent direction is ``−◇F``):

    ◇F_i = g_i + l1·sign(x_i)                      if x_i ≠ 0
    ◇F_i = g_i + l1 if g_i + l1 < 0,  g_i − l1 if g_i − l1 > 0,  0 otherwise      if x_i = 0

Direction: the L-BFGS two-loop recursion applied to ``◇F``, ``p = −H·◇F``, where ``H`` is built from the
last ``memory`` pairs ``s = x_{k+1} − x_k``, ``y = ∇f(x_{k+1}) − ∇f(x_k)`` of the smooth part only (the
penalty has no curvature within an orthant), scaled by ``γ = s·y / y·y`` of the newest pair; a pair
with ``s·y ≤ 10⁻¹⁰·y·y`` is not stored.  Then ``p_i = 0`` wherever ``p_i·◇F_i ≥ 0``, so that ``p`` agrees in
sign with ``−◇F``.

Orthant and projection: ``ξ_i = sign(x_i)`` if ``x_i ≠ 0`` else ``sign(−◇F_i)``, and the line search tries

    x(α) = π(x + α·p; ξ),      π(z; ξ)_i = z_i if sign(z_i) = ξ_i, else 0.

Where ``x_i = 0`` the constrained ``p_i`` already has the sign ``ξ_i`` (or is 0), so ``π`` only zeroes the
coordinates with ``z_i·x_i < 0``, those that crossed zero; that is how it is computed.

Line search: backtracking ``α = α₀, α₀/2, α₀/4, …`` with ``α₀ = 1``, or ``α₀ = 1/‖p‖`` while no pair is
stored (at the first iteration ``p = −◇F``, so the first step has unit length), until

    F(x(α)) ≤ F(x) + 10⁻⁴ · ◇F·(x(α) − x)

and giving up after 30 halvings (the run then ends: no decrease is found at the optimum up to
round-off, or with an inaccurate gradient).

With ``l1 = 0`` the pseudo-gradient is the gradient, the sign constraint and the projection are
skipped, and this is plain L-BFGS with a backtracking Armijo line search.

Memory: the pairs, ``2·memory`` vectors of ``x``'s length (plus the two of a pair being formed; the
vectors of a dropped pair are reused), and about seven working vectors (the iterate, its gradient and
pseudo-gradient, the direction, the trial point of the line search and its gradient, and a temporary).
Once ``memory`` pairs are stored an iteration allocates one vector per evaluation of ``fun`` (the point
given to it, which is never modified afterwards) and one temporary.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dasum

from .vectors import dot, norm

SUFFICIENT_DECREASE = 1e-4  # the Armijo constant
HALVINGS = 30  # of the step, before the line search gives up
CURVATURE_FLOOR = 1e-10  # a pair is stored only when s·y > CURVATURE_FLOOR·y·y

GTOL_REACHED = "the largest pseudo-gradient component is <= gtol"
FTOL_REACHED = "the relative reduction of the objective is <= ftol"
MAXITER_REACHED = "the maximum number of iterations was reached"
NO_DECREASE = ("the line search found no decrease of the objective: the iterate is optimal up to round-off "
               "(or the gradient is inaccurate)")


@dataclass
class OWLQNResult:
    """The outcome of :func:`minimize_owlqn`: the last iterate ``x``, ``fun = F(x)`` (with the L1 term),
    the iterations ``nit``, the calls ``nfev`` of ``fun``, why the run stopped, whether that counts as
    convergence (every reason but reaching ``maxiter``), and the curvature pairs, for a run that goes on."""

    x: np.ndarray
    fun: float
    nit: int
    nfev: int
    message: str
    success: bool
    curvature: CurvaturePairs


def pseudo_gradient(x: np.ndarray, gradient: np.ndarray, l1: float, out: np.ndarray | None = None) -> np.ndarray:
    """``◇F`` at ``x`` (module docstring) given ``gradient = ∇f(x)``, written to ``out`` (a new array if None)."""
    # ◇F = g + t, with t_i = l1·sign(x_i) where x_i ≠ 0 and t_i = −clip(g_i, −l1, l1) where x_i = 0: there
    # g + t shrinks g towards 0 by l1, exactly 0 when |g_i| ≤ l1.
    out = np.clip(gradient, -l1, l1, out=out)
    np.negative(out, out=out)
    np.copysign(l1, x, out=out, where=x != 0)
    out += gradient
    return out


def _max_abs(v: np.ndarray) -> float:
    """``max |v_i|`` (0 for an empty ``v``), without a temporary."""
    return max(float(v.max(initial=0.0)), -float(v.min(initial=0.0)))


class CurvaturePairs:
    """The last ``memory`` pairs ``(s, y)`` and the L-BFGS direction they define."""

    def __init__(self, memory: int):
        self.memory = memory
        self.pairs: deque[tuple[np.ndarray, np.ndarray, float]] = deque()  # (s, y, 1/s·y), oldest first
        self.spare: list[np.ndarray] = []  # vectors of dropped or refused pairs, for new ones
        self.scale = 1.0  # γ of the newest pair

    def embed(self, embed: Callable[[np.ndarray], np.ndarray]) -> None:
        """Map every stored ``s`` and ``y`` through ``embed``, one vector at a time, for a run that goes on over more
        variables (a larger active set): with zeros at the new ones ``s·y`` and ``y·y`` stay, so the direction
        acts on the old variables as the pairs say and on the new ones as ``γ·I``."""
        moved = deque()
        while self.pairs:
            s, y, rho = self.pairs.popleft()
            moved.append((embed(s), embed(y), rho))
        self.pairs, self.spare = moved, []

    def vector(self, like: np.ndarray) -> np.ndarray:
        """An uninitialised vector for a new ``s`` or ``y``: a spare one, else a new one."""
        return self.spare.pop() if self.spare else np.empty_like(like)

    def add(self, s: np.ndarray, y: np.ndarray) -> None:
        """Store ``(s, y)``, dropping the oldest pair beyond ``memory``, unless its curvature ``s·y`` is not
        clearly positive."""
        sy, yy = dot(s, y), dot(y, y)
        if not sy > CURVATURE_FLOOR * yy:
            self.spare += [s, y]
            return
        if len(self.pairs) == self.memory:
            self.spare += self.pairs.popleft()[:2]
        self.pairs.append((s, y, 1.0 / sy))
        self.scale = sy / yy

    def inverse_hessian_times(self, v: np.ndarray, out: np.ndarray) -> None:
        """``out = H·v`` by the two-loop recursion (``v`` itself without pairs)."""
        np.copyto(out, v)
        alphas = []
        for s, y, rho in reversed(self.pairs):
            alphas.append(rho * dot(s, out))
            out -= alphas[-1] * y
        if self.pairs:
            out *= self.scale
        for (s, y, rho), alpha in zip(self.pairs, reversed(alphas)):
            out += (alpha - rho * dot(y, out)) * s

    def direction(self, pg: np.ndarray, constrain: bool, out: np.ndarray) -> None:
        """``out = p = −H·◇F``, with its components of the wrong sign zeroed when ``constrain``.  If that
        leaves no descent (``p·◇F ≥ 0``, from round-off in ``H``) the pairs are dropped and ``p = −◇F``."""
        self.inverse_hessian_times(pg, out)
        np.negative(out, out=out)
        if constrain:
            out[out * pg >= 0] = 0.0
        if dot(out, pg) >= 0:
            self.spare += [v for s, y, _ in self.pairs for v in (s, y)]
            self.pairs.clear()
            np.negative(pg, out=out)


def _line_search(evaluate: Callable[[np.ndarray], tuple[float, np.ndarray]], x: np.ndarray, value: float,
                 pg: np.ndarray, direction: np.ndarray, step_size: float, step: np.ndarray, *,
                 project: bool) -> tuple[np.ndarray, float, np.ndarray] | None:
    """Backtrack from ``step_size`` to the first ``x(α)`` meeting the Armijo condition of the module
    docstring, projecting when ``project``; returns ``(x(α), F(x(α)), ∇f(x(α)))`` with ``x(α) − x`` in
    ``step``, or None after :data:`HALVINGS` halvings."""
    for _ in range(HALVINGS + 1):
        trial = np.multiply(direction, step_size)
        trial += x
        if project:
            np.multiply(trial, x, out=step)
            trial[step < 0] = 0.0
        np.subtract(trial, x, out=step)
        trial_value, trial_gradient = evaluate(trial)
        if trial_value <= value + SUFFICIENT_DECREASE * dot(pg, step):  # False for NaN
            return trial, trial_value, trial_gradient
        step_size /= 2
    return None


def minimize_owlqn(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray, *, l1: float,
                   maxiter: int = 100, ftol: float = 1e-6, gtol: float = 1e-5, memory: int = 10,
                   callback: Callable[[np.ndarray], object] | None = None,
                   curvature: CurvaturePairs | None = None) -> OWLQNResult:
    """Minimise ``F(x) = f(x) + l1·‖x‖₁`` from ``x0`` by OWL-QN (module docstring).

    ``fun(x)`` returns ``(f(x), ∇f(x))`` of the smooth part only; it is never given an array that is
    modified later, and the gradients it returns are not modified.  ``memory`` is the number of
    ``(s, y)`` pairs kept.  The run stops after ``maxiter`` iterations, when the relative decrease
    ``(F_k − F_{k+1}) / max(|F_k|, |F_{k+1}|, 1)`` is at most ``ftol``, when the largest component of
    ``|◇F|`` is at most ``gtol`` (also checked at ``x0``), or when the line search finds no decrease.
    ``callback(x)`` is called after every iteration with the new iterate; an exception it raises
    propagates.  A non-finite ``F(x0)`` raises :class:`ValueError`.  ``curvature``: the pairs a run over the same
    variables ended with (:attr:`OWLQNResult.curvature`), to go on from ``x0`` with them instead of from none
    (they are updated in place; their ``memory`` is kept).
    """
    if not l1 >= 0:
        raise ValueError(f"l1 must be non-negative, got {l1}")
    for label, given, least in (("maxiter", maxiter, 0), ("memory", memory, 1)):
        if given < least:
            raise ValueError(f"{label} must be at least {least}, got {given}")
    nfev = 0

    def evaluate(point: np.ndarray) -> tuple[float, np.ndarray]:
        """``(F(point), ∇f(point))``."""
        nonlocal nfev
        nfev += 1
        smooth, gradient = fun(point)
        return float(smooth) + (l1 * dasum(point) if l1 else 0.0), np.asarray(gradient, dtype=np.float64)

    x = np.array(x0, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x0 must be one-dimensional, got shape {x.shape}")
    value, gradient = evaluate(x)
    if not np.isfinite(value):
        raise ValueError(f"the objective at x0 is {value}")
    pg, direction = pseudo_gradient(x, gradient, l1), np.empty_like(x)
    pairs = CurvaturePairs(memory) if curvature is None else curvature
    nit, message = 0, None
    if _max_abs(pg) <= gtol:
        message = GTOL_REACHED
    while message is None and nit < maxiter:
        pairs.direction(pg, constrain=l1 > 0, out=direction)
        step_size = 1.0 if pairs.pairs else 1.0 / norm(direction)
        step = pairs.vector(x)
        found = _line_search(evaluate, x, value, pg, direction, step_size, step, project=l1 > 0)
        if found is None:
            message = NO_DECREASE
            break
        x, new_value, new_gradient = found
        gradient_change = pairs.vector(x)
        pairs.add(step, np.subtract(new_gradient, gradient, out=gradient_change))
        decrease = (value - new_value) / max(abs(value), abs(new_value), 1.0)
        value, gradient = new_value, new_gradient
        pseudo_gradient(x, gradient, l1, out=pg)
        nit += 1
        if callback is not None:
            callback(x)
        if _max_abs(pg) <= gtol:
            message = GTOL_REACHED
        elif decrease <= ftol:
            message = FTOL_REACHED
    return OWLQNResult(x=x, fun=value, nit=nit, nfev=nfev, message=message or MAXITER_REACHED,
                       success=message is not None, curvature=pairs)
