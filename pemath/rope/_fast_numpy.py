r"""A NumPy-only fast path for :func:`pemath.rope.apply`, with the portable kernel's precision.

The portable kernel (:func:`pemath.rope._core.rotate`) computes, per rotated pair,

.. math:: y_a = x_a c - x_b s, \qquad y_b = x_b c + x_a s

in float64 and rounds once to x's dtype, but it materialises several full-size float64
temporaries (about 12-14x the time of ``x.copy()`` on float32 data). This module does
the same float64 arithmetic on cache-sized blocks, so the only passes over memory are
reading ``x`` and writing the result, and it spreads the blocks over a few threads
(NumPy releases the GIL inside its loops).

Two kernels:

* **complex** (float32 ``x`` with a contiguous feature axis): a pair ``(x_a, x_b)`` is
  the complex number ``x_a + i x_b`` and the rotation is one complex multiplication by
  the complex128 table ``a e^{i m\theta}``. For ``"interleaved"`` the pairs are already
  adjacent, so ``x`` is *viewed* as complex64 and one ``np.multiply`` with a
  complex64 -> complex128 -> complex64 cast does the whole block. For ``"half"`` the two
  halves are first gathered into a complex64 scratch block (exact: float32 into
  float32) and scattered back after the product. The product is evaluated in float64
  and rounded once to float32. NumPy's complex multiply may fuse a multiply and an add
  (an FMA, on CPUs that have one), so the float64 intermediate can differ from the
  portable kernel's by about one float64 ulp; the float32 results then differ only
  where that intermediate lies within about 2^-52 (relative) of a float32 rounding
  boundary, a chance of about 2^-28 per element (``tests/test_rope_fast.py`` checks
  exactly this, element by element).
* **real** (float16, float64, or a strided feature axis): per-feature tables
  ``C = [c, c]`` and ``S = [-s, s]`` and ``y = x C + swap(x) S`` in float64 scratch,
  bit-identical to the portable kernel: ``x_b (-s) = -(x_b s)`` exactly and
  ``p + (-q) = p - q`` exactly in IEEE 754 (separate products: no FMA). float64 stays on
  this kernel (rather than a complex128 view) so that float64 results are bit-identical too.

The blocks are fixed by the array's shape and ``_BLOCK`` alone, never by the number of
threads, and every element is computed by the same sequence of operations whichever
thread runs its block: results are bit-identical for any ``PEMATH_NUM_THREADS``.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from ._core import angle_table

__all__ = ["supports", "rotate_into", "num_threads"]

# Elements of x per block of the real kernel (measured best on the 2-core VM: its two
# float64 scratch blocks and the table slices stay in L2). The complex kernels use blocks
# _HALF (half: one complex64 scratch block) and _WIDE (interleaved: no scratch) times larger.
_BLOCK = 1 << 14
_HALF = 16
_WIDE = 64
# Below this many elements of x, threads cost more than they save.
_THREAD_MIN = 1 << 18
_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def supports(x: Any) -> bool:
    """Whether ``x`` takes the fast path: a plain NumPy float16/32/64 array, not 0-size."""
    return type(x) is np.ndarray and x.dtype in _DTYPES and x.size > 0


def num_threads() -> int:
    """Threads the fast path uses: ``PEMATH_NUM_THREADS`` if set, else the CPUs available (at most 8)."""
    raw = os.environ.get("PEMATH_NUM_THREADS")
    if raw is None or raw.strip() == "":
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cpus = os.cpu_count() or 1
        return max(1, min(cpus, 8))
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"the environment variable PEMATH_NUM_THREADS must be a positive integer, got {raw!r}")
    return n


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="pemath-rope")
            _pool_size = n
        return _pool


def _blocks(lead: tuple[int, ...], row: int, block: int) -> tuple[list[tuple], int]:
    """Index tuples cutting an array of leading shape ``lead`` into blocks of about ``block``
    elements (rows of ``row`` elements are never split), and the size of the largest block."""
    inner = row
    k = len(lead)
    while k > 0 and inner * lead[k - 1] <= block:
        k -= 1
        inner *= lead[k]
    if k == 0:
        return [()], inner
    axis = k - 1
    step = min(max(1, block // inner), lead[axis])
    return [
        idx + (slice(start, min(start + step, lead[axis])),)
        for idx in np.ndindex(*lead[:axis])
        for start in range(0, lead[axis], step)
    ], step * inner


def _order(blocks: list[tuple], table_strides: tuple[int, ...]) -> list[tuple]:
    """Blocks sharing a table slice run back to back, so the slice is read from memory once."""
    shared = [st == 0 for st in table_strides]
    return sorted(blocks, key=lambda idx: tuple(
        (i.start if isinstance(i, slice) else i) for i, b in zip(idx, shared) if not b))


def _run_blocks(blocks: list, work: Callable[[list], None], size: int) -> None:
    """Run ``work`` over ``blocks``: inline, or as contiguous runs of blocks on the thread pool.

    IEEE results without warnings, as in the portable kernel: ``inf * 0`` is NaN, a
    rotated pair beyond the output dtype's range is inf (NumPy's error state is per
    thread, so it is set inside each run).
    """

    def quiet(chunk: list) -> None:
        with np.errstate(invalid="ignore", over="ignore"):
            work(chunk)

    n = num_threads()
    if n == 1 or size < _THREAD_MIN or len(blocks) < 2:
        quiet(blocks)
        return
    n = min(n, len(blocks))
    cuts = [len(blocks) * i // n for i in range(n + 1)]
    futures = [_executor(n).submit(quiet, blocks[cuts[i]:cuts[i + 1]]) for i in range(n)]
    for f in futures:
        f.result()


def rotate_into(x: np.ndarray, pos: np.ndarray, freq: np.ndarray, factor: float, layout: str, r: int,
                out: np.ndarray | None) -> np.ndarray:
    """Write the rotation of ``x`` into ``out`` (same shape and dtype; may be ``x`` itself; None: a new array).

    The kernel contract of :func:`pemath.rope.apply` (shared with the CuPy and portable
    kernels): ``pos`` float64 positions broadcasting against ``x.shape[:-1]``, ``freq``
    the ``r/2`` float64 frequencies (negated for the inverse rotation), ``factor`` the
    attention factor that multiplies cos and sin.
    """
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    theta = angle_table(pos, freq, np, "cpu", np.float64)
    dim = int(x.shape[-1])
    if np.may_share_memory(x, out) and not (
        x.__array_interface__["data"][0] == out.__array_interface__["data"][0] and x.strides == out.strides
    ):
        # Partial overlap: blocks of out would clobber unread blocks of x.
        x = x.copy()
    if r < dim and out is not x:
        out[..., r:] = x[..., r:]
    xr, outr = x[..., :r], out[..., :r]
    if x.dtype == np.float32 and xr.strides[-1] == 4 and outr.strides[-1] == 4:
        _complex(xr, _cis(theta, factor), layout, r, outr)
    else:
        table = _cis(theta, factor)
        _real(xr, table.real, table.imag, layout, r, outr)
    return out


#: The last few cos/sin tables, keyed by their positions, frequencies and factor (bit for bit): the layers of
#: one forward pass rotate with the same positions, and recomputing cos and sin dominates small batches.
_TABLES: list[tuple[bytes, np.ndarray, np.ndarray, np.ndarray]] = []
_TABLES_KEEP = 4
_TABLES_MAX_BYTES = 1 << 26  # a table larger than this (two float64 arrays) is not kept
_tables_lock = threading.Lock()


def clear_tables() -> None:
    """Forget the cached cos/sin tables (the benchmarks time a cold call with it)."""
    with _tables_lock:
        _TABLES.clear()


def cos_sin(pos: np.ndarray, freq: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """``factor * cos(pos * freq)`` and ``factor * sin(pos * freq)`` as two C-contiguous float64 arrays of shape
    ``(pos.size, freq.size)``: the phases, cos, sin and scaling of :func:`_cis` (the same operations, so the
    same bits), computed row block by row block on the thread pool.

    The last few tables are kept: a call with the same positions (compared bit for bit, so -0.0 is not 0.0),
    frequencies and factor gets the same arrays back, read-only."""
    flat = np.ascontiguousarray(pos, dtype=np.float64).reshape(-1)
    f = np.ascontiguousarray(freq, dtype=np.float64)
    key = f.tobytes() + np.float64(factor).tobytes() + flat.size.to_bytes(8, "little")
    with _tables_lock:
        for i, (k, p, c, s) in enumerate(_TABLES):
            if k == key and np.array_equal(p.view(np.int64), flat.view(np.int64)):
                _TABLES.insert(0, _TABLES.pop(i))
                return c, s
    c, s = _compute_cos_sin(flat, f, factor)
    if 16 * c.size <= _TABLES_MAX_BYTES:
        c.flags.writeable = False
        s.flags.writeable = False
        with _tables_lock:
            _TABLES.insert(0, (key, flat.copy(), c, s))
            del _TABLES[_TABLES_KEEP:]
    return c, s


def _compute_cos_sin(flat: np.ndarray, f: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    c = np.empty((flat.size, f.size), dtype=np.float64)
    s = np.empty((flat.size, f.size), dtype=np.float64)
    _by_rows(flat.size, lambda a, b: _cos_sin_into(flat[a:b, None] * f, c[a:b], s[a:b], factor), 16 * c.size)
    return c, s


def _cis(theta: np.ndarray, factor: float) -> np.ndarray:
    """The complex128 table ``factor * (cos theta + i sin theta)``: each part computed and scaled as the portable kernel does."""
    table = np.empty(theta.shape, dtype=np.complex128)
    t, z = theta.reshape(-1), table.reshape(-1)
    _by_rows(z.size, lambda a, b: _cos_sin_into(t[a:b], z[a:b].real, z[a:b].imag, factor), 8 * z.size)
    return table


def _cos_sin_into(theta: np.ndarray, c: np.ndarray, s: np.ndarray, factor: float) -> None:
    """``factor * cos(theta)`` into ``c`` and ``factor * sin(theta)`` into ``s``, as the portable kernel computes
    them: cos and sin in float64, then each scaled separately (signed zeros kept as ``cos * factor``). The one
    home of the table's arithmetic for the NumPy and compiled kernels and the oracle."""
    np.cos(theta, out=c)
    np.sin(theta, out=s)
    if factor != 1.0:
        np.multiply(c, factor, out=c)
        np.multiply(s, factor, out=s)


def _by_rows(n: int, fill: Callable[[int, int], None], size: int) -> None:
    """``fill(start, stop)`` over the rows ``[0, n)``, one run of rows per thread (inline when small, as
    :func:`_run_blocks` decides from ``size``)."""
    step = max(1, -(-n // max(1, num_threads())))

    def work(chunk: list[int]) -> None:
        for start in chunk:
            fill(start, min(start + step, n))

    _run_blocks(list(range(0, n, step)), work, size)


def _complex(xr: np.ndarray, table: np.ndarray, layout: str, r: int, outr: np.ndarray) -> None:
    lead = tuple(xr.shape[:-1])
    h = r // 2
    table = np.broadcast_to(table, lead + (h,))
    if layout == "interleaved":
        xc, oc = xr.view(np.complex64), outr.view(np.complex64)
        blocks, _ = _blocks(lead, r, _BLOCK * _WIDE)
        blocks = _order(blocks, table.strides[:-1])

        def work(chunk: list[tuple]) -> None:
            for idx in chunk:
                np.multiply(xc[idx], table[idx], out=oc[idx], casting="same_kind")

    else:
        blocks, most = _blocks(lead, r, _BLOCK * _HALF)
        blocks = _order(blocks, table.strides[:-1])

        def work(chunk: list[tuple]) -> None:
            flat = np.empty(most // 2, dtype=np.complex64)
            for idx in chunk:
                xb, ob = xr[idx], outr[idx]
                z = flat[: xb.size // 2].reshape(xb.shape[:-1] + (h,))
                np.copyto(z.real, xb[..., :h])
                np.copyto(z.imag, xb[..., h:])
                np.multiply(z, table[idx], out=z, casting="same_kind")
                np.copyto(ob[..., :h], z.real)
                np.copyto(ob[..., h:], z.imag)

    _run_blocks(blocks, work, xr.size)


def _tables(cos: np.ndarray, sin: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature float64 tables ``C`` and signed ``S`` from per-pair (..., r/2) tables."""
    shape = cos.shape[:-1] + (2 * cos.shape[-1],)
    if layout == "half":
        return np.concatenate([cos, cos], axis=-1), np.concatenate([-sin, sin], axis=-1)
    return np.stack([cos, cos], axis=-1).reshape(shape), np.stack([-sin, sin], axis=-1).reshape(shape)


def _real(xr: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str, r: int, outr: np.ndarray) -> None:
    lead = tuple(xr.shape[:-1])
    h = r // 2
    ctab, stab = _tables(cos, sin, layout)
    ctab = np.broadcast_to(ctab, lead + (r,))
    stab = np.broadcast_to(stab, lead + (r,))
    blocks, most = _blocks(lead, r, _BLOCK)
    blocks = _order(blocks, ctab.strides[:-1])

    def work(chunk: list[tuple]) -> None:
        scratch_t = np.empty(most, dtype=np.float64)
        scratch_u = np.empty(most, dtype=np.float64)
        for idx in chunk:
            xb, cb, sb, ob = xr[idx], ctab[idx], stab[idx], outr[idx]
            n = xb.size
            t = scratch_t[:n].reshape(xb.shape)
            u = scratch_u[:n].reshape(xb.shape)
            np.copyto(t, xb)  # exact widening to float64
            if layout == "half":  # u = swap(x): the pair partner of every feature
                np.copyto(u[..., :h], xb[..., h:])
                np.copyto(u[..., h:], xb[..., :h])
            else:
                np.copyto(u[..., 0::2], xb[..., 1::2])
                np.copyto(u[..., 1::2], xb[..., 0::2])
            np.multiply(t, cb, out=t)
            np.multiply(u, sb, out=u)
            np.add(t, u, out=t)
            np.copyto(ob, t, casting="unsafe")

    _run_blocks(blocks, work, xr.size)
