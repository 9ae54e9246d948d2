"""Kernels on sparse input rows, for the kernel perceptron.

A kernel ``k(x, x')`` is evaluated between two sets of rows at once: ``kernel(A, B)`` takes scipy
CSR matrices of ``m`` and ``n`` rows over the same columns and returns the dense ``(m, n)`` Gram
block, from one sparse product ``A Bᵀ``:

* ``linear``: ``k(x, x') = x·x'``;
* ``poly``: ``k(x, x') = (γ x·x' + c₀)^d``;
* ``rbf``: ``k(x, x') = exp(−γ ‖x − x'‖²)``, with ``‖x − x'‖² = ‖x‖² + ‖x'‖² − 2 x·x'``.

``gamma = "scale"`` resolves on the training rows to ``1 / (n_columns · Var(X))`` (the variance of
every entry of the dense matrix, zeros included): scikit-learn's ``SVC`` default, here taken over the
hashed feature values, whose hash signs change the mean (on digits 0.000262 against SVC's 0.000432
on the raw pixels).  A user kernel is any callable ``f(A, B)`` with the same contract.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse

from .errors import OptionValueError

KERNELS = ("linear", "poly", "rbf")


class Kernel:
    """A named kernel with its parameters (``degree``, ``gamma``, ``coef0``), or a user callable."""

    def __init__(self, kernel: str | Callable = "linear", *, degree: int = 3, gamma: float | str = "scale",
                 coef0: float = 1.0):
        if not callable(kernel) and kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}; choose one of {', '.join(KERNELS)} or give a callable")
        if not (isinstance(degree, (int, np.integer)) and degree >= 1):
            raise ValueError(f"degree must be a positive integer, got {degree!r}")
        if gamma != "scale" and not (isinstance(gamma, (int, float)) and 0 < gamma < np.inf):
            raise ValueError(f"gamma must be positive and finite, or 'scale', got {gamma!r}")
        if not np.isfinite(coef0):
            raise ValueError(f"coef0 must be finite, got {coef0}")
        self.kernel, self.degree, self.gamma, self.coef0 = kernel, int(degree), gamma, float(coef0)

    @property
    def name(self) -> str:
        return self.kernel if isinstance(self.kernel, str) else getattr(self.kernel, "__name__", "callable")

    def resolved(self, X: scipy.sparse.csr_matrix) -> Kernel:
        """This kernel with ``gamma = "scale"`` replaced by its value on the training rows ``X``."""
        if self.gamma != "scale":
            return self
        n = X.shape[0] * X.shape[1]
        mean = X.sum() / n
        variance = X.multiply(X).sum() / n - mean**2
        gamma = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
        return Kernel(self.kernel, degree=self.degree, gamma=float(gamma), coef0=self.coef0)

    def __call__(self, A: scipy.sparse.csr_matrix, B: scipy.sparse.csr_matrix) -> np.ndarray:
        """The ``(A.shape[0], B.shape[0])`` block of kernel values."""
        if callable(self.kernel):
            block = np.asarray(self.kernel(A, B), dtype=np.float64)
            if block.shape != (A.shape[0], B.shape[0]):
                raise ValueError(f"kernel {self.name} returned shape {block.shape} for {A.shape[0]} × {B.shape[0]} "
                                 "rows; a kernel callable f(A, B) must return the (len(A), len(B)) Gram block")
            return self._finite(block)
        products = (A @ B.T).toarray() if scipy.sparse.issparse(A) else np.asarray(A @ B.T)
        norms = (squared_norms(A)[:, None], squared_norms(B)[None, :]) if self.kernel == "rbf" else (None, None)
        return self.of_products(products, *norms)

    def of_products(self, products: np.ndarray, norms_a=None, norms_b=None) -> np.ndarray:
        """The kernel values from the dot products ``x·x'`` (and, for ``rbf``, the squared norms of
        both sides, broadcast against ``products``)."""
        if self.kernel == "linear":
            return products
        if self.gamma == "scale":
            raise ValueError("gamma='scale' is resolved on training data first (Kernel.resolved)")
        if self.kernel == "poly":  # the one built-in kernel that can overflow (rbf's values lie in (0, 1])
            with np.errstate(over="ignore", invalid="ignore"):  # refused by _finite, with the parameters to change
                return self._finite((self.gamma * products + self.coef0) ** self.degree)
        return np.exp(-self.gamma * np.maximum(norms_a + norms_b - 2 * products, 0.0))

    def _finite(self, values: np.ndarray) -> np.ndarray:
        """``values``, unless one is infinite or NaN (a high degree or gamma on these features overflows)."""
        if not np.isfinite(values).all():
            raise OptionValueError(f"the {self.name} kernel ({', '.join(f'{k} {v}' for k, v in self.params().items())})"
                                   " gives values beyond floating point on these features: lower the degree or gamma")
        return values

    def params(self) -> dict:
        """The parameters as stored in a model file (a callable is stored by name only)."""
        return {"kernel": self.name, "degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}


def squared_norms(A) -> np.ndarray:
    """``‖a‖²`` of every row of a sparse or dense matrix."""
    if scipy.sparse.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", A, A)
