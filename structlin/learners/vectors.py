"""Dot products and norms of long vectors by numpy's own loops, not BLAS.

A multithreaded BLAS (numpy's OpenBLAS by default) wakes its threads for every level-1 call and keeps them spinning
for a while after it.  Between numpy's own operations that costs more than the call's work, and the spinning
threads take cores from everything else: on a 2-core machine L-BFGS's two-loop took 85 ms an iteration on 1.7 M
weights with BLAS's dots and updates, 5 ms with numpy's, and the workers of a Dask cluster on the same machine
slowed down by a tenth while the client called BLAS once an iteration (``np.linalg.norm``).  The learners' hot
loops take their dots and norms from here; updates ``v ± c·u`` are numpy's operators.
"""

from __future__ import annotations

import math

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a·b`` of two vectors."""
    return float(np.einsum("i,i->", a, b))


def norm(v: np.ndarray) -> float:
    """``‖v‖₂``."""
    return math.sqrt(dot(v, v))
