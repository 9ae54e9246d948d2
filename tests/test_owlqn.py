"""Tests of structlin.learners.owlqn: the optimum of L1-regularised least squares and logistic regression
against scipy's L-BFGS-B on the split variables x = u − v (u, v ≥ 0), exact zeros and their pattern,
the all-zero solution for a large l1, plain L-BFGS for l1 = 0, the callback, the stopping rules, the
line search's failure, the pseudo-gradient, the two-loop recursion against the explicit BFGS update,
the stored pairs, and bad arguments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.optimize
from scipy.special import expit

from structlin.learners import owlqn, vectors
from structlin.learners.owlqn import (
    FTOL_REACHED,
    GTOL_REACHED,
    MAXITER_REACHED,
    NO_DECREASE,
    CurvaturePairs,
    OWLQNResult,
    minimize_owlqn,
    pseudo_gradient,
)

TIGHT = {"maxiter": 2000, "ftol": 1e-14, "gtol": 1e-10}  # options of the runs compared with the reference


def least_squares(seed: int, n_samples: int = 40, n_features: int = 20):
    """``f(x) = ½‖Ax − b‖²`` with ``b`` from a sparse ``x`` plus noise."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_samples, n_features))
    b = A @ (rng.normal(size=n_features) * (rng.random(n_features) < 0.4)) + 0.5 * rng.normal(size=n_samples)

    def fun(x):
        residual = A @ x - b
        return 0.5 * float(residual @ residual), A.T @ residual

    return fun, n_features


def logistic(seed: int, n_samples: int = 60, n_features: int = 12):
    """``f(x) = Σ log(1 + exp(−y·(Ax)))`` with labels ``y = ±1`` drawn from a sparse logistic model (noisy
    enough that no seed used here is separable, so the minimiser is finite even without l1)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_samples, n_features))
    truth = rng.normal(size=n_features) * (rng.random(n_features) < 0.4)
    y = np.where(rng.random(n_samples) < expit(A @ truth), 1.0, -1.0)

    def fun(x):
        margins = y * (A @ x)
        return float(np.logaddexp(0.0, -margins).sum()), -A.T @ (y * expit(-margins))

    return fun, n_features


PROBLEMS = {"least-squares": least_squares, "logistic": logistic}


def penalised(fun, x, l1) -> float:
    """``F(x) = f(x) + l1·‖x‖₁``."""
    return fun(x)[0] + l1 * np.abs(x).sum()


def largest_gradient_at_zero(fun, n) -> float:
    """``max|∇f(0)|``: the smallest l1 for which x = 0 is optimal."""
    return float(np.abs(fun(np.zeros(n))[1]).max())


def reference(fun, n, l1) -> np.ndarray:
    """The minimiser of F by L-BFGS-B on ``(u, v) ≥ 0`` with ``x = u − v``, to a tight tolerance."""

    def split(z):
        f, g = fun(z[:n] - z[n:])
        return f + l1 * z.sum(), np.concatenate([g + l1, l1 - g])

    result = scipy.optimize.minimize(split, np.zeros(2 * n), jac=True, method="L-BFGS-B",
                                     bounds=[(0.0, None)] * (2 * n),
                                     options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12, "maxcor": 30})
    return result.x[:n] - result.x[n:]


def lbfgsb(fun, n) -> np.ndarray:
    """The unregularised minimiser by scipy's L-BFGS-B, to a tight tolerance."""
    return scipy.optimize.minimize(fun, np.zeros(n), jac=True, method="L-BFGS-B",
                                   options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12}).x


@pytest.mark.parametrize("fraction", [0.05, 0.3])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("problem", PROBLEMS)
def test_optimum_matches_split_variable_reference(problem, seed, fraction):
    fun, n = PROBLEMS[problem](seed)
    l1 = fraction * largest_gradient_at_zero(fun, n)
    expected = reference(fun, n, l1)
    result = minimize_owlqn(fun, np.zeros(n), l1=l1, **TIGHT)
    assert isinstance(result, OWLQNResult) and result.success, result.message
    assert result.fun == pytest.approx(penalised(fun, result.x, l1), rel=1e-12)
    assert result.fun == pytest.approx(penalised(fun, expected, l1), rel=1e-8)
    np.testing.assert_allclose(result.x, expected, atol=1e-5)
    assert np.abs(pseudo_gradient(result.x, fun(result.x)[1], l1)).max() < 1e-5


@pytest.mark.parametrize("start", ["zero", "dense"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("problem", PROBLEMS)
def test_zeros_are_exact_and_match_the_reference(problem, seed, start):
    fun, n = PROBLEMS[problem](seed)
    l1 = 0.3 * largest_gradient_at_zero(fun, n)
    expected_zero = np.abs(reference(fun, n, l1)) < 1e-8
    x0 = np.zeros(n) if start == "zero" else np.random.default_rng(seed).normal(size=n)
    x = minimize_owlqn(fun, x0, l1=l1, **TIGHT).x
    assert expected_zero.sum() >= n // 3  # the test is about sparsity: many zeros
    assert expected_zero.sum() < n
    np.testing.assert_array_equal(x == 0.0, expected_zero)


@pytest.mark.parametrize("factor", [1.0, 2.0])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_large_l1_gives_exactly_zero(problem, factor):
    fun, n = PROBLEMS[problem](0)
    l1 = factor * largest_gradient_at_zero(fun, n)
    at_start = minimize_owlqn(fun, np.zeros(n), l1=l1)
    assert at_start.success and at_start.nit == 0 and at_start.nfev == 1 and at_start.message == GTOL_REACHED
    assert np.all(at_start.x == 0.0)
    from_dense = minimize_owlqn(fun, np.random.default_rng(1).normal(size=n), l1=l1, **TIGHT)
    assert from_dense.success, from_dense.message
    assert np.all(from_dense.x == 0.0)
    assert from_dense.fun == penalised(fun, np.zeros(n), 0.0)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("problem", PROBLEMS)
def test_without_l1_matches_lbfgsb(problem, seed):
    fun, n = PROBLEMS[problem](seed)
    expected = lbfgsb(fun, n)
    result = minimize_owlqn(fun, np.zeros(n), l1=0.0, **TIGHT)
    assert result.success, result.message
    assert result.fun == pytest.approx(fun(expected)[0], rel=1e-8)
    np.testing.assert_allclose(result.x, expected, atol=1e-5)
    assert np.count_nonzero(result.x) == n


@pytest.mark.parametrize("problem", PROBLEMS)
def test_optimum_is_below_zero_and_the_unregularised_optimum(problem):
    fun, n = PROBLEMS[problem](0)
    l1 = 0.3 * largest_gradient_at_zero(fun, n)
    result = minimize_owlqn(fun, np.zeros(n), l1=l1)
    assert result.fun < penalised(fun, np.zeros(n), l1)
    assert result.fun < penalised(fun, lbfgsb(fun, n), l1)


@pytest.mark.parametrize("l1", [0.0, 0.3])
@pytest.mark.parametrize("problem", PROBLEMS)
def test_callback_sees_every_iterate_and_the_objective_never_increases(problem, l1):
    fun, n = PROBLEMS[problem](1)
    l1 *= largest_gradient_at_zero(fun, n)
    iterates = []
    result = minimize_owlqn(fun, np.random.default_rng(0).normal(size=n), l1=l1, callback=iterates.append, **TIGHT)
    assert result.nit > 5 and len(iterates) == result.nit
    assert all(isinstance(x, np.ndarray) and x.shape == (n,) for x in iterates)
    np.testing.assert_array_equal(iterates[-1], result.x)  # the iterates are not modified after the call
    values = [penalised(fun, x, l1) for x in iterates]
    assert all(later <= earlier for earlier, later in itertools.pairwise(values))
    assert values[-1] == pytest.approx(result.fun, rel=1e-12)


def test_first_step_has_unit_length():
    scales = np.array([1.0, 2.0, 0.5, 1.5])
    b = np.array([60.0, -30.0, 20.0, 70.0])  # ‖∇f(0)‖ ≈ 99: a step of α = 1 along −∇f would be that long
    iterates = []
    minimize_owlqn(lambda x: (0.5 * float(scales @ x**2) - float(b @ x), scales * x - b), np.zeros(4), l1=0.0,
                   maxiter=1, callback=iterates.append)
    assert np.linalg.norm(iterates[0]) == pytest.approx(1.0)
    np.testing.assert_allclose(iterates[0], b / np.linalg.norm(b))


def test_pairs_without_curvature_are_skipped():
    c = np.array([0.5, -0.3, 0.9, 0.0])  # F = c·x + ‖x‖₁, linear (y = 0) in every orthant, is least at 0
    result = minimize_owlqn(lambda x: (float(c @ x), c), np.array([1.0, -2.0, 0.5, 3.0]), l1=1.0)
    assert result.success, result.message
    assert np.all(result.x == 0.0) and result.fun == 0.0


class Stop(Exception):
    pass


def test_exception_from_the_callback_propagates():
    fun, n = least_squares(0)
    calls = []

    def callback(x):
        calls.append(x)
        if len(calls) == 2:
            raise Stop

    with pytest.raises(Stop):
        minimize_owlqn(fun, np.zeros(n), l1=1.0, callback=callback)
    assert len(calls) == 2


@pytest.mark.parametrize("maxiter", [0, 1, 3])
def test_maxiter_is_respected(maxiter):
    fun, n = logistic(0)
    result = minimize_owlqn(fun, np.zeros(n), l1=0.5, maxiter=maxiter, ftol=0.0, gtol=0.0)
    assert result.nit == maxiter
    assert not result.success and result.message == MAXITER_REACHED
    assert result.fun == pytest.approx(penalised(fun, result.x, 0.5), rel=1e-12)


def test_stops_on_ftol_and_counts_evaluations():
    fun, n = least_squares(2)
    calls = []

    def counted(x):
        calls.append(x)
        return fun(x)

    result = minimize_owlqn(counted, np.zeros(n), l1=1.0, ftol=1e-3, gtol=0.0)
    assert result.success and result.message == FTOL_REACHED
    assert result.nfev == len(calls) and result.nfev >= result.nit + 1
    assert 0 < result.nit < 100


def test_line_search_failure_ends_the_run_without_error():
    fun, n = least_squares(0)

    def uphill(x):  # a wrong (negated) gradient: no step along the computed direction decreases F
        value, gradient = fun(x)
        return value, -gradient

    x0 = np.ones(n)
    result = minimize_owlqn(uphill, x0, l1=0.1)
    assert result.success and result.message == NO_DECREASE
    assert result.nit == 0 and result.nfev > 20
    np.testing.assert_array_equal(result.x, x0)


def test_pseudo_gradient_follows_its_definition():
    x = np.array([1.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    g = np.array([0.5, 0.5, 3.0, -3.0, 0.5, -0.5, 1.0])
    np.testing.assert_array_equal(pseudo_gradient(x, g, 1.0), [1.5, -0.5, 2.0, -2.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(pseudo_gradient(x, g, 0.0), g)


def test_two_loop_recursion_is_the_bfgs_inverse_hessian():
    rng = np.random.default_rng(0)
    n, memory = 6, 4
    M = rng.normal(size=(n, n))
    hessian = M @ M.T + np.eye(n)
    pairs = CurvaturePairs(memory)
    steps = [rng.normal(size=n) for _ in range(7)]
    for s in steps:
        pairs.add(s, hessian @ s)
    pairs.add(steps[0], -steps[0])  # negative curvature: not stored
    assert len(pairs.pairs) == memory
    expected = np.eye(n) * (steps[-1] @ hessian @ steps[-1]) / np.sum((hessian @ steps[-1]) ** 2)
    for s in steps[-memory:]:  # H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ, oldest pair first
        y = hessian @ s
        rho = 1.0 / (s @ y)
        V = np.eye(n) - rho * np.outer(y, s)
        expected = V.T @ expected @ V + rho * np.outer(s, s)
    column, columns = np.empty(n), []
    for unit in np.eye(n):
        pairs.inverse_hessian_times(unit, column)
        columns.append(column.copy())
    np.testing.assert_allclose(np.array(columns).T, expected, rtol=1e-10, atol=1e-12)
    pairs.inverse_hessian_times(hessian @ steps[-1], column)
    np.testing.assert_allclose(column, steps[-1], rtol=1e-10)  # the secant equation H·y = s


def test_pairs_are_steps_and_changes_of_the_smooth_gradient(monkeypatch):
    fun, n = least_squares(0)
    stored = []
    add = owlqn.CurvaturePairs.add

    def recording_add(self, s, y):
        stored.append((s.copy(), y.copy()))  # copies: the vectors are reused once dropped
        add(self, s, y)

    monkeypatch.setattr(owlqn.CurvaturePairs, "add", recording_add)
    x0 = np.random.default_rng(0).normal(size=n)
    iterates = [x0]
    l1 = 0.3 * largest_gradient_at_zero(fun, n)
    result = minimize_owlqn(fun, x0, l1=l1, memory=2, callback=lambda x: iterates.append(x.copy()))
    assert len(stored) == result.nit > 3
    assert np.count_nonzero(result.x == 0) > 0  # coordinates moved to zero, where ◇F and ∇f differ
    for (s, y), before, after in zip(stored, iterates, iterates[1:]):
        np.testing.assert_array_equal(s, after - before)
        np.testing.assert_allclose(y, fun(after)[1] - fun(before)[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("l1", [0.0, 0.5])
def test_a_run_goes_on_with_its_pairs_as_if_never_stopped(problem, l1):
    """Five iterations, then five more from the last iterate with the pairs the first run ended with: the iterates
    of ten iterations in one run, to the bit."""
    fun, n = PROBLEMS[problem](1)
    x0 = np.random.default_rng(2).normal(size=n)
    whole = minimize_owlqn(fun, x0, l1=l1, maxiter=10, ftol=0.0, gtol=0.0, memory=3)
    first = minimize_owlqn(fun, x0, l1=l1, maxiter=5, ftol=0.0, gtol=0.0, memory=3)
    assert len(first.curvature.pairs) == 3
    second = minimize_owlqn(fun, first.x, l1=l1, maxiter=5, ftol=0.0, gtol=0.0, curvature=first.curvature)
    np.testing.assert_array_equal(second.x, whole.x)
    restarted = minimize_owlqn(fun, first.x, l1=l1, maxiter=5, ftol=0.0, gtol=0.0, memory=3)
    assert not np.array_equal(restarted.x, whole.x)  # without the pairs: another path


def test_embedded_pairs_act_on_the_old_variables_as_before_and_as_the_scale_on_new_ones():
    """Pairs over 5 variables embedded among 8 (zeros at 3 new ones): ``H·(g_old, g_new) = (H_old·g_old, γ·g_new)``."""
    rng = np.random.default_rng(3)
    n, old_at = 5, np.array([0, 2, 3, 5, 7])
    M = rng.normal(size=(n, n))
    hessian = M @ M.T + np.eye(n)
    pairs = CurvaturePairs(3)
    for _ in range(4):
        s = rng.normal(size=n)
        pairs.add(s, hessian @ s)
    g = rng.normal(size=8)
    expected = np.empty(n)
    pairs.inverse_hessian_times(g[old_at], expected)

    def embed(v):
        out = np.zeros(8)
        out[old_at] = v
        return out

    pairs.spare.append(np.zeros(n))  # a spare vector of the old size is not handed out again
    pairs.embed(embed)
    assert len(pairs.pairs) == 3 and not pairs.spare
    out = np.empty(8)
    pairs.inverse_hessian_times(g, out)
    np.testing.assert_allclose(out[old_at], expected, rtol=1e-12, atol=1e-12)
    new = np.setdiff1d(np.arange(8), old_at)
    np.testing.assert_allclose(out[new], pairs.scale * g[new], rtol=1e-12)


@pytest.mark.parametrize("arguments", [{"l1": -1.0}, {"l1": float("nan")}, {"l1": 1.0, "maxiter": -1},
                                       {"l1": 1.0, "memory": 0}])
def test_bad_arguments_raise(arguments):
    fun, n = least_squares(0)
    with pytest.raises(ValueError):
        minimize_owlqn(fun, np.zeros(n), **arguments)


def test_non_finite_start_raises():
    with pytest.raises(ValueError, match="x0"):
        minimize_owlqn(lambda x: (float("inf"), np.zeros_like(x)), np.zeros(3), l1=1.0)


# --- the vectors' dots and norms without BLAS -----------------------------------------------------------------


def test_dot_and_norm_by_hand():
    assert vectors.dot(np.array([1.0, 2.0, 3.0]), np.array([4.0, -5.0, 6.0])) == 12.0
    assert vectors.norm(np.array([3.0, 4.0])) == 5.0
    assert vectors.dot(np.array([]), np.array([])) == 0.0 and vectors.norm(np.array([])) == 0.0


def test_dot_agrees_with_blas_on_long_vectors():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1_000_003), rng.standard_normal(1_000_003)
    assert vectors.dot(a, b) == pytest.approx(float(a @ b), rel=1e-12, abs=1e-9)
    assert vectors.norm(a) == pytest.approx(float(np.linalg.norm(a)), rel=1e-12)
