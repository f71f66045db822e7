r"""A certain pass, cheaply: the oracle's verdict on an honest kernel without building the float64 truth.

:func:`~pemath.testing.assert_rope_close` compares every element with pemath's float64
truth :math:`t_{64}` and the derived tolerance :math:`\tau = S\,K(p, i)` (:math:`S = |x_a| +
|x_b|` of the element's pair, :math:`K` from ``_tolerance.pair_scale``). Building both for
every element costs many passes over float64 copies of the data. Most calls pass: this
module decides those in float32, block by block in cache (NumPy, on the rope fast path's
threads) or on the arrays' own device (CuPy, torch, any array API namespace: nothing but
the positions and a scalar verdict crosses to the host). It answers ``True`` only when
the exact comparison is certain to pass; anything else (a mismatch, a near miss, a
tolerance that could be vacuous, an input it does not handle) answers ``False`` and the
exact path decides, warns and explains.

Why float32 decides it
----------------------
``x`` and ``actual`` are float32, float16 or bfloat16, which float32 holds exactly. Let
:math:`c, s` be the float64 table of :math:`a\cos\varphi, a\sin\varphi` and :math:`c_{32}, s_{32}`
their float32 roundings, :math:`u = 2^{-24}`. Then

.. math:: t_{32} = \mathrm{fl}(\mathrm{fl}(x_a c_{32}) - \mathrm{fl}(x_b s_{32}))

is within :math:`(3u + O(u^2))(|x_a||c| + |x_b||s|) \le 3.01\,u\,|a|\,S` of
:math:`x_a c - x_b s` (two rounded factors, two products, one difference; the same for
:math:`y_b`), provided no product underflows, and pemath's float64 truth is within
:math:`2.01\,u_{64}|a|S` of it. So :math:`|\text{actual} - t_{64}| \le |\text{actual} - t_{32}|
+ 3.1\,u\,|a|\,S`. The float32 residual :math:`D = \mathrm{fl}|\mathrm{fl}(\text{actual} -
t_{32})|` is at least :math:`|\text{actual} - t_{32}|(1 - u)`, the float32 threshold
:math:`\mathrm{fl}(\mathrm{fl}(S) K_{32})` at most :math:`S K_{32} (1 + u)^2`. With

.. math:: K_{32} \le (K - 3.1\,u\,|a|)(1 - 4u) \quad \text{(rounded toward zero)},

:math:`D \le \mathrm{fl}(\mathrm{fl}(S) K_{32})` implies :math:`|\text{actual} - t_{64}| \le S K
(1 - u)`, so the exact comparison passes whatever the float64 roundings of :math:`\tau`.
:math:`K \ge 2 \cdot 5u|a|` for every output dtype, so :math:`K_{32}` stays positive and an
honest float32 kernel (error a few :math:`u S`) passes the float32 test nearly everywhere.

Products underflow only for pairs with :math:`|a| S` below about :math:`2^{-100}`; a block
holding such a pair (zero pairs excepted: their products are exact zeros) is left to the
exact path. A non-finite ``x`` or ``actual`` never passes here (NaN propagates through the
maximum; an infinite :math:`S` is checked).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import _compat
from ...rope._fast_numpy import _blocks, _cis, _order, _run_blocks
from .._core.arrays import given_positions
from .vacuity import scale_may_be_vacuous
from .._core.tolerance import U32, dtype_name, frequency_constants, unit_roundoff
from .tolerance import pair_scale

__all__ = ["certain_rope_pass"]

#: Output and input dtypes float32 holds exactly.
_EXACT32 = ("float32", "float16", "bfloat16")
#: |t32 - x_a c + x_b s| <= MARGIN * u32 * |a| * S (module docstring).
MARGIN = 3.1
#: Pairs with 0 < |a| S < TINY may have underflowing float32 products: left to the exact path.
TINY = 2.0**-100
#: Elements per NumPy block (both members of a pair counted), measured on the 2-core VM.
_BLOCK = 1 << 18


def certain_rope_pass(actual: Any, x: Any, positions: Any, seq_len: Any, **config: Any) -> bool:
    """Whether ``assert_rope_close(actual, x, positions, seq_len=seq_len, **config)`` certainly passes.

    ``config``: ``spec`` or its keywords (``layout``, ``base``, ``rotary_dim``, ``scaling``).

    ``False`` means "not certain here": the caller runs the exact comparison. Never
    raises; any warning raised while deciding (the exact path would emit it) also makes it
    ``False``.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from ...rope.spec import resolve

            ok = _decide(actual, x, positions, resolve(config.pop("spec"), "assert_rope_close", **config), seq_len)
        except Exception:  # an input the exact path will validate and report
            return False
    return ok and not caught


def _decide(actual: Any, x: Any, positions: Any, spec: Any, seq_len: Any) -> bool:
    if not (_compat.is_array(actual) and _compat.is_array(x)) or _compat.is_mlx(actual) or _compat.is_mlx(x):
        return False
    t_name, x_name = dtype_name(actual.dtype), dtype_name(x.dtype)
    shape = tuple(x.shape)
    if t_name not in _EXACT32 or x_name not in _EXACT32 or tuple(actual.shape) != shape or not shape:
        return False
    if math.prod(shape) == 0 or spec.is_multi_axis or spec.out_layout is not None or spec.rotary_offset:
        return False
    xp = _compat.namespace(actual, x)
    d = shape[-1]
    r = spec.rotary_dim_for(d)
    h = r // 2
    freq, factor = spec.frequencies(r, seq_len)
    freq = np.asarray(freq, dtype=np.float64)
    cfreq = frequency_constants(r, spec.base, spec.scaling, seq_len, explicit=spec.inv_freq is not None)
    pos = given_positions(positions, shape[:-1])
    k = pair_scale(pos, freq, cfreq, factor, unit_roundoff(t_name))
    a = abs(float(factor))
    # Where S K could reach |a| rho the tolerance may be vacuous: the exact path warns about it.
    if a == 0.0 or scale_may_be_vacuous(k, a):
        return False
    k32 = _round_down32((k - MARGIN * U32 * a) * (1.0 - 4.0 * U32))
    if np.any(k32 <= 0):
        return False
    table = _cis(pos[..., None] * freq, float(factor))  # a cos and a sin, as rope.apply computes them
    c32, s32 = table.real.astype(np.float32), table.imag.astype(np.float32)
    host = _host_view(xp, actual, x)
    if host is not None:
        return _decide_numpy(*host, c32, s32, k32, spec.layout, r, h, TINY / a)
    return _decide_device(xp, actual, x, c32, s32, k32, spec.layout, r, TINY / a)


def _round_down32(v: np.ndarray) -> np.ndarray:
    """float32 values at most ``v`` (rounded toward zero for positive ``v``)."""
    f = v.astype(np.float32)
    return np.where(f.astype(np.float64) > v, np.nextafter(f, np.float32(0)), f)


def _host_view(xp: Any, actual: Any, x: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """NumPy views of host arrays (NumPy, JAX on the CPU, torch on the CPU); None for device arrays."""
    if _compat.is_numpy(xp):
        return np.asarray(actual), np.asarray(x)
    if _compat.is_torch(xp):
        if actual.device.type != "cpu" or x.device.type != "cpu":
            return None
        return tuple(  # torch bfloat16 has no NumPy view: widened (exactly) to float32
            (t.detach().float() if dtype_name(t.dtype) == "bfloat16" else t.detach()).numpy() for t in (actual, x))
    if _compat.is_jax(xp) and all(_compat.device_of(t).platform == "cpu" for t in (actual, x)):
        return np.asarray(actual), np.asarray(x)
    return None


def _block_ok(xp: Any, xb: Any, yb: Any, c: Any, s: Any, k: Any, layout: str, r: int, tiny: float) -> bool:
    """The float32 test of the module docstring on one block of rotated features."""
    from ...rope._core import split_pairs

    f32 = xp.float32
    xa, xb2 = (v if v.dtype == f32 else xp.astype(v, f32) for v in split_pairs(xb, layout, r))
    ya, yb2 = (v if v.dtype == f32 else xp.astype(v, f32) for v in split_pairs(yb, layout, r))
    S = xp.abs(xa) + xp.abs(xb2)
    da = xp.abs(xa * c - xb2 * s - ya)
    db = xp.abs(xb2 * c + xa * s - yb2)
    excess = xp.max(xp.maximum(da, db) - S * k)
    if not bool(excess <= 0) or not bool(xp.max(S) < math.inf):
        return False
    return not bool(xp.any(xp.logical_and(S > 0, S < tiny)))


def _passthrough_ok(xp: Any, actual: Any, x: Any, r: int) -> bool:
    """Features beyond the rotary dim: unchanged (the exact path allows a rounding to a narrower dtype)."""
    if r == x.shape[-1]:
        return True
    if actual.dtype != x.dtype:
        return False
    xs = x[..., r:]
    return bool(xp.all(actual[..., r:] == xs)) and bool(xp.all(xp.isfinite(xs)))


def _decide_numpy(a: np.ndarray, x: np.ndarray, c32: np.ndarray, s32: np.ndarray, k32: np.ndarray,
                  layout: str, r: int, h: int, tiny: float) -> bool:
    lead = tuple(x.shape[:-1])
    c, s, k = (np.broadcast_to(t, lead + (h,)) for t in (c32, s32, k32))
    xr, ar = x[..., :r], a[..., :r]
    blocks, _ = _blocks(lead, r, _BLOCK)
    blocks = _order(blocks, c.strides[:-1])
    failed: list[bool] = []

    def work(chunk: list[tuple]) -> None:
        for idx in chunk:
            if failed or not _block_ok(np, xr[idx], ar[idx], c[idx], s[idx], k[idx], layout, r, tiny):
                failed.append(True)
                return

    _run_blocks(blocks, work, xr.size)
    return not failed and _passthrough_ok(np, a, x, r)


def _decide_device(xp: Any, actual: Any, x: Any, c32: np.ndarray, s32: np.ndarray, k32: np.ndarray,
                   layout: str, r: int, tiny: float) -> bool:
    dev = _compat.device_of(x)
    c, s, k = (xp.asarray(t, device=dev) for t in (c32, s32, k32))
    return _block_ok(xp, x[..., :r], actual[..., :r], c, s, k, layout, r, tiny) and _passthrough_ok(xp, actual, x, r)
