"""The derived tolerance of a RoPE output, element by element (the derivation: ``_core/tolerance.py``).

:func:`rope_tolerance` is the public face; ``rope_bound``, ``pair_scale`` and
``pair_bounds`` are the pieces the asserts, the float32 pass test and the diagnosis share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.tolerance import C_ATTENTION, C_OUTPUT, C_TRIG, SAFETY, U32, output_floor, phase_error, unit_roundoff

__all__ = ["element_bound", "pair_scale", "pair_bounds", "rope_bound", "rope_tolerance"]


def element_bound(s_el: np.ndarray, pos: np.ndarray, freq_el: np.ndarray, cfreq_el: np.ndarray, factor: float,
                  u_t: float) -> np.ndarray:
    """The bound of the module docstring for rotated elements ``(N, k)``.

    Each element has its pair's ``S = |x_a| + |x_b|`` (``s_el``), its frequency
    ``freq_el`` ``(k,)`` and frequency constant ``cfreq_el`` ``(k,)``; ``pos`` is ``(N,)``.
    """
    k = _by_position(pos, lambda p: pair_scale(p, freq_el, cfreq_el, factor, u_t))
    with np.errstate(invalid="ignore"):  # a zero pair at an infinite phase error: it stays zero, bound 0
        return np.where(s_el == 0, 0.0, s_el * k)


def _by_position(pos: np.ndarray, table: Any) -> np.ndarray:
    """``table(pos)`` for ``(N,)`` positions, computed once per distinct position (rows repeat them:
    every head and batch row of a (batch, heads, seq) call shares the sequence's positions)."""
    if pos.size <= 64:
        return table(pos)
    distinct, inverse = np.unique(pos, return_inverse=True)
    if 2 * distinct.size > pos.size:
        return table(pos)
    return table(distinct)[inverse.reshape(-1)]


def pair_scale(pos: np.ndarray, freq: np.ndarray, cfreq: np.ndarray, factor: float, u_t: float) -> np.ndarray:
    """The bound per unit of ``S``: ``tau = S * pair_scale``, shape ``pos.shape + freq.shape``."""
    dphi = phase_error(pos, freq, cfreq)
    c_abs = (C_TRIG + (C_ATTENTION if factor != 1.0 else 0.0)) * U32 + C_OUTPUT * u_t
    return SAFETY * abs(factor) * (dphi + c_abs)


def pair_bounds(x_rot: np.ndarray, k: np.ndarray, layout: str, r: int, u_t: float | None = None) -> np.ndarray:
    """The bound of each rotated element ``(N, r)``: its pair's ``S = |x_a| + |x_b|`` times ``k`` ``(N, r/2)``,
    the bound per unit of ``S`` (``pair_scale``), written in ``layout``; a zero pair's bound is 0. With ``u_t``,
    plus the output rounding's absolute part (``_core.tolerance.output_floor``: subnormal outputs)."""
    from ...rope import _core

    xa, xb = _core.split_pairs(x_rot, layout, r)
    with np.errstate(invalid="ignore"):
        b = np.abs(xa)
        b += np.abs(xb)
        if not np.all(np.isfinite(k)):  # a zero pair at an infinite phase error: it stays zero, bound 0
            k = np.where(b == 0, 0.0, k)
        b *= k
    if u_t is not None:
        floor = output_floor(u_t)
        if floor:  # a zero pair stays exactly zero: no floor there
            b = np.where(b > 0, b + floor, b)
    return _core.merge_pairs(b, b, layout, np)


def rope_bound(
    x2: np.ndarray,
    pos: np.ndarray,
    freq: np.ndarray,
    factor: float,
    layout: str,
    r: int,
    u_t: float,
    cfreq: np.ndarray,
    *,
    start: int = 0,
) -> np.ndarray:
    """The per-element bound of the module docstring on host float64 arrays.

    ``x2`` is ``(N, d)``, ``pos`` ``(N,)``; the rotated slice is ``x2[:, start:start + r]``,
    the other features are passed through (:math:`u_T |x_j|`).
    """
    k = _by_position(pos, lambda p: pair_scale(p, freq, cfreq, factor, u_t))  # (N, r/2): per pair, then per element
    out = np.empty(x2.shape, dtype=np.float64)
    out[:, start : start + r] = pair_bounds(x2[:, start : start + r], k, layout, r, u_t)
    rest = np.ones(x2.shape[1], dtype=bool)
    rest[start : start + r] = False
    if rest.any():
        out[:, rest] = u_t * np.abs(x2[:, rest])
    return out


def rope_tolerance(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    dtype: Any = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: Any = None,
    seq_len: int | None = None,
    spec: Any = None,
) -> np.ndarray:
    r"""The oracle's default absolute tolerance for each element of a RoPE output.

    .. math::

        \tau = \sigma\, a\, S \left[ (C_\theta + 1)\, u\, |p\,\theta_i| + \theta_i\,|\mathrm{fl}_{32}(p) - p|
            + (2 + 2[a \ne 1])\, u + 3 u_T + u_{64} (|p\,\theta_i| + 8) \right]

    for rotated features (:math:`S = |x_a| + |x_b|` of the element's pair, :math:`a` the
    attention factor, :math:`u = 2^{-24}`, :math:`\sigma = 2`), :math:`u_T |x_j|` for the
    features beyond ``rotary_dim``. The derivation is in the module docstring of
    ``pemath.testing._core.tolerance`` and in ``docs/tolerance.rst``.

    Parameters
    ----------
    x : array
        The kernel's input (any backend and floating dtype).
    positions
        As in :func:`pemath.rope.apply`.
    layout : {"interleaved", "half"}
    dtype : optional
        The kernel's output dtype (default: ``x``'s).
    base, rotary_dim, scaling, seq_len
        As in :func:`pemath.rope.apply`.
    spec : pemath.rope.Spec, optional
        Instead of ``layout``, ``base``, ``rotary_dim`` and ``scaling`` (giving both
        raises ``TypeError``).

    Returns
    -------
    numpy.ndarray
        float64, ``x``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import rope_tolerance
    >>> x = np.ones((2, 4), dtype=np.float32)
    >>> tol = rope_tolerance(x, [0, 1_000_000], layout="half")
    >>> float(np.round(tol[0, 0] * 2**24, 6))   # σ S (2u + 3u_T) = 2 * 2 * 5 units of 2^-24
    20.0
    >>> bool(tol[1, 0] > 0.1)    # at position 10^6 the float32 phase itself is that uncertain
    True
    """
    from .._core import arrays as _arrays

    case = _arrays.rope_case(
        x, positions, layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling, seq_len=seq_len, spec=spec,
        where="rope_tolerance",
    )
    u_t = unit_roundoff(case.x_dtype if dtype is None else dtype)
    tol = rope_bound(case.x2, case.pos, case.freq, case.factor, case.layout, case.r, u_t, case.cfreq)
    return case.to_x_order(tol).reshape(case.shape)


