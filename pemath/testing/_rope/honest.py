r"""Honest computations that the derived bound does not cover: recognised by emulating them.

The bound of ``_tolerance`` covers the frequencies computed per pair (``1 / b ** e`` or
``exp(-e ln b)``), whose relative error is a few units :math:`u = 2^{-24}` whatever the
pair. One honest computation in wide use is different: **the float32 recurrence** of
llama.cpp's CPU kernel (``ggml_rope_cache_init``: ``theta *= theta_scale``), where the
angle of pair :math:`i` is :math:`t_i = \mathrm{fl}_{32}(t_{i-1} s)`, :math:`t_0 = \mathrm{fl}_{32}(p)`,
with :math:`s = \mathrm{powf}(b, \mathrm{fl}_{32}(-2/d_r))`. Its relative phase error is
up to :math:`i` roundings plus :math:`i` times the error of :math:`s`:

.. math:: |t_i - p\,b^{-2i/d_r}| \le i\,(C_s + 1)\, u\, |t_i|, \qquad C_s = e_1 (\ln b + 1) + 8 ,

(``_tolerance.recurrence_constants``), which at the last pair of :math:`d_r = 512` is about :math:`2300 u`, against the
:math:`39 u` that the per-pair forms need. A bound that wide would let positions off by
one through, in the upper half of the pairs, from position :math:`\approx 3600`: it is not
the fix. The phases of the recurrence are not random, though: they are fixed by
:math:`p` and :math:`s`, so the oracle **recognises** them. When an output fails the
bound, it recomputes the recurrence's float32 phases exactly
(as ``pipelines.llama_cpp`` computes them) for :math:`s` the correctly rounded
``powf`` and its two float32 neighbours (a libm within 1 ulp, as glibc's and Apple's
are), and accepts the output when it is within the bound of everything after the phase:
cos and sin (2 ulp), the attention factor, the rounding to ``T`` and the products
(:math:`3 u_T`), pemath's float64 evaluation:

.. math:: \tau_{\text{rec}} = \sigma\, a\, S \left[ (2 + 2[a \ne 1])\, u + 3 u_T + u_{64}(|t_i| + 8) \right].

A kernel is accepted this way only if its output agrees with the recurrence at that
tightness for every element: a bug elsewhere (a wrong position, base, layout, factor)
moves some element by far more, and the position's own rounding is part of the
emulation. Recognised for single-axis RoPE with integer positions and no scaling,
linear scaling (ggml's ``freq_scale``) or Llama 3's per-pair factors (the GGUF's
``rope_freqs``), the configurations llama.cpp runs this way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.tolerance import C_ATTENTION, C_OUTPUT, C_TRIG, SAFETY, U32, U64
from .tolerance import pair_bounds

__all__ = ["RECOGNISED", "recognised", "recurrence_applies"]

#: The honest computations recognised by emulation, by the name a report uses.
RECOGNISED = ("the float32 recurrence of the angles (llama.cpp's CPU kernel, theta *= theta_scale)",)

#: Rows checked first (the worst of the failed comparison): a bug is refused on them.
_FIRST_ROWS = 16


def _neighbours(s: np.float32) -> tuple[np.float32, ...]:
    return (s, np.nextafter(s, np.float32(0.0)), np.nextafter(s, np.float32(1.0)))


def _recurrence_setup(case: Any) -> tuple[np.float32, np.ndarray | None, float] | None:
    """``(theta_scale, freq_factors, freq_scale)`` for a case llama.cpp computes by the recurrence, or None."""
    from .. import pipelines

    spec = case.spec
    if spec.is_multi_axis or spec.out_layout is not None or spec.inv_freq is not None:
        return None
    if not np.all(case.pos == np.round(case.pos)) or np.any(np.abs(case.pos) >= 2**31):
        return None  # ggml's positions are int32
    try:
        ff, fs = pipelines._ggml_factors(spec, case.r)
        s = pipelines._theta_scale_f32(spec.base, case.r)
    except (ValueError, TypeError, OverflowError):
        return None
    return s, ff, fs


def recurrence_applies(case: Any) -> bool:
    """Whether llama.cpp's recurrence is a way to compute this case (single axis, integer positions, ...)."""
    return _recurrence_setup(case) is not None


def _judge(case: Any, a2: np.ndarray, rows: np.ndarray, inverse: np.ndarray, cos: np.ndarray, sin: np.ndarray,
           k: np.ndarray, u_t: float) -> bool:
    """Whether every element of ``rows`` is within ``tau_rec`` of the rotation by the given table."""
    from ...rope import _core

    r, layout = case.r, case.layout
    x = case.x2[rows].astype(np.float64)
    a = a2[rows].astype(np.float64)
    idx = inverse[rows]
    truth = _core.rotate(x, cos[idx], sin[idx], layout, r, np, np.float64)
    tol = np.empty_like(x)
    tol[:, :r] = pair_bounds(x[:, :r], k[idx], layout, r)
    tol[:, r:] = u_t * np.abs(x[:, r:])
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a - truth) <= tol))


def recognised(case: Any, a2: np.ndarray, u_t: float, row_ratio: np.ndarray) -> str | None:
    """The name of the honest computation that ``a2`` (``(N, d)``) is, or None.

    Called only for an output that failed the derived bound; ``row_ratio`` (each row's
    largest error / tolerance) orders the rows so that a bug is refused on its worst rows
    first.
    """
    from .. import pipelines

    setup = _recurrence_setup(case)
    if setup is None or not np.all(np.isfinite(a2)):
        return None
    s0, ff, fs = setup
    n = case.x2.shape[0]
    order = np.argsort(-np.nan_to_num(row_ratio, nan=np.inf), kind="stable")
    first, rest = order[:_FIRST_ROWS], order[_FIRST_ROWS:]
    factor = case.factor
    c_abs = (C_TRIG + (C_ATTENTION if factor != 1.0 else 0.0)) * U32 + C_OUTPUT * u_t

    def table(pos: np.ndarray, s: np.float32) -> tuple[np.ndarray, ...]:
        distinct, inverse = np.unique(pos, return_inverse=True)
        phase = pipelines._recurrence_phases(distinct, s, case.r // 2, ff, fs).astype(np.float64)
        k = SAFETY * abs(factor) * (c_abs + U64 * (np.abs(phase) + 8.0))
        return inverse.reshape(-1), np.cos(phase) * factor, np.sin(phase) * factor, k

    for s in _neighbours(s0):
        inv, cos, sin, k = table(case.pos[first], s)  # the worst rows first: a bug is refused there, cheaply
        if not _judge(case, a2, first, _scatter(n, first, inv),
                      cos, sin, k, u_t):
            continue
        if rest.size == 0:
            return RECOGNISED[0]
        inv, cos, sin, k = table(case.pos, s)
        if all(_judge(case, a2, rest[i:i + 4096], inv, cos, sin, k, u_t) for i in range(0, rest.size, 4096)):
            return RECOGNISED[0]
    return None


def _scatter(n: int, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """An index array of length ``n`` holding ``values`` at ``rows`` (0 elsewhere)."""
    out = np.zeros(n, dtype=np.int64)
    out[rows] = values
    return out
