r"""A compiled CPU kernel for :func:`pemath.rope.apply`, used when numba is installed (``pip install 'pemath[fast]'``).

One pass over memory: each row of ``x`` is read once and its rotation written once. Per rotated
pair, in float64, exactly as the portable kernel (:func:`pemath.rope._core.rotate`) does it:

.. math:: y_a = x_a c - x_b s, \qquad y_b = x_b c + x_a s

with ``c``, ``s`` the entries of the table :func:`pemath.rope._fast_numpy.cos_sin` computes with
NumPy (the same cos/sin values as the portable kernel, the attention factor included), each
product rounded to float64, then the sum, then one rounding to x's dtype. numba compiles
without ``fastmath``, so LLVM neither contracts a product and a sum into an FMA nor reorders
anything: the results are bit-identical to the portable kernel (``tests/test_rope_numba.py``
checks it element by element, for float32 and float64, both layouts, partial rotary,
per-row positions and in place).

The kernel is serial and releases the GIL: runs of rows go to the NumPy fast path's thread pool
(``PEMATH_NUM_THREADS``), the same threads that have just computed the cos/sin table, so no second
thread pool wakes up. Rows are independent and cut by the shape alone, so any thread count gives
the same bits; calls below ``_fast_numpy._THREAD_MIN`` elements run inline. Set
``PEMATH_KERNEL=numpy`` to use the NumPy fast path instead.

The kernels are compiled on first use, one per (dtype, layout), and cached on disk by numba
(``cache=True``).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

from . import _fast_numpy

__all__ = ["available", "supports", "rotate_into"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@functools.lru_cache(maxsize=1)
def _numba() -> Any:
    try:
        import numba
    except ImportError:
        return None
    return numba


def available() -> bool:
    """numba is importable and ``PEMATH_KERNEL`` does not ask for the NumPy path."""
    choice = os.environ.get("PEMATH_KERNEL", "").strip().lower()
    if choice not in ("", "numba", "numpy"):
        raise ValueError(f"the environment variable PEMATH_KERNEL must be 'numba' or 'numpy' (or unset), got "
                         f"{os.environ['PEMATH_KERNEL']!r}")
    return choice != "numpy" and _numba() is not None


def supports(x: Any, out: Any) -> bool:
    """A C-contiguous float32/float64 NumPy ``x`` (and ``out``, when given) with whole rows."""
    return (available() and type(x) is np.ndarray and x.dtype in _DTYPES and x.size > 0 and x.flags.c_contiguous
            and (out is None or (type(out) is np.ndarray and out.flags.c_contiguous and out.dtype == x.dtype)))


#: Elements of x per run of rows handed to a thread.
_ROWS_BLOCK = 1 << 18


@functools.lru_cache(maxsize=None)
def _kernel(layout: str) -> Any:
    numba = _numba()
    half = layout == "half"

    # Rows a..b-1 of x (shape (rows, d)): y_a = x_a c - x_b s, y_b = x_b c + x_a s in float64 (each
    # product and the sum rounded separately), stored in out's dtype; features r..d-1 copied when
    # copy_rest. Row n reads table row t(n) = sum_k idx_k(n) stride_k, idx(n) the multi-index of n in
    # `shape` (x's leading shape), stride_k 0 along axes the positions broadcast over.
    def rotate(x, out, cos, sin, shape, stride, a, b, h, r, copy_rest):  # pragma: no cover - compiled by numba
        d = x.shape[1]
        nd = shape.shape[0]
        idx = np.zeros(nd, dtype=np.int64)
        rem = a
        t = 0
        for k in range(nd - 1, -1, -1):
            idx[k] = rem % shape[k]
            rem //= shape[k]
            t += idx[k] * stride[k]
        for n in range(a, b):
            for i in range(h):
                c = cos[t, i]
                s = sin[t, i]
                if half:
                    ja, jb = i, i + h
                else:
                    ja, jb = 2 * i, 2 * i + 1
                xa = np.float64(x[n, ja])
                xb = np.float64(x[n, jb])
                out[n, ja] = xa * c - xb * s
                out[n, jb] = xb * c + xa * s
            if copy_rest:
                for j in range(r, d):
                    out[n, j] = x[n, j]
            k = nd - 1
            while k >= 0:
                idx[k] += 1
                t += stride[k]
                if idx[k] < shape[k]:
                    break
                t -= stride[k] * shape[k]
                idx[k] = 0
                k -= 1

    return numba.njit(fastmath=False, nogil=True, cache=True)(rotate)


def rotate_into(x: np.ndarray, pos: np.ndarray, freq: np.ndarray, factor: float, layout: str, r: int,
                out: np.ndarray | None) -> np.ndarray:
    """The kernel contract of :func:`pemath.rope._fast_numpy.rotate_into`, compiled."""
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    elif np.may_share_memory(x, out) and not (
        x.__array_interface__["data"][0] == out.__array_interface__["data"][0] and x.strides == out.strides
    ):
        x = x.copy()  # partial overlap: rows of out would clobber unread rows of x
    dim = int(x.shape[-1])
    lead = tuple(x.shape[:-1]) or (1,)
    h = r // 2
    cos, sin = _fast_numpy.cos_sin(pos, freq, factor)  # (table rows, h), rows in C order over pos.shape
    tab = (1,) * (len(lead) - pos.ndim) + tuple(pos.shape)
    stride, step = [0] * len(lead), 1
    for k in range(len(lead) - 1, -1, -1):
        stride[k] = 0 if tab[k] == 1 else step
        step *= tab[k]
    x2, out2 = x.reshape(-1, dim), out.reshape(-1, dim)
    same = x.__array_interface__["data"][0] == out.__array_interface__["data"][0]
    copy_rest = (not same) and r < dim
    kernel = _kernel(layout)
    shape_a, stride_a = np.array(lead, dtype=np.int64), np.array(stride, dtype=np.int64)
    n_rows = x2.shape[0]
    if x.size < _fast_numpy._THREAD_MIN or _fast_numpy.num_threads() == 1:  # small: inline, one call
        kernel(x2, out2, cos, sin, shape_a, stride_a, 0, n_rows, h, r, copy_rest)
        return out
    rows = max(1, _ROWS_BLOCK // dim)
    blocks = [(a, min(a + rows, n_rows)) for a in range(0, n_rows, rows)]

    def work(chunk: list[tuple[int, int]]) -> None:
        for a, b in chunk:
            kernel(x2, out2, cos, sin, shape_a, stride_a, a, b, h, r, copy_rest)

    _fast_numpy._run_blocks(blocks, work, x.size)
    return out
