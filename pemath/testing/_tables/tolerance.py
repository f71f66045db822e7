"""The derived tolerances of sinusoidal tables and ALiBi biases (the derivation: ``docs/tolerance.rst``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.tolerance import C_FREQ, C_TRIG, SAFETY, U32, U64, phase_error, unit_roundoff

__all__ = ["sinusoidal_columns", "sinusoidal_exponents", "sinusoidal_tolerance", "sinusoidal_bound", "C_SLOPE",
           "alibi_bound", "alibi_tolerance"]


def sinusoidal_columns(dim: int, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """(frequency index, is-sine) of each column of a sinusoidal table; index -1 for a zero column."""
    half = dim // 2
    if convention == "interleaved":
        idx = np.arange(dim) // 2
        sine = np.arange(dim) % 2 == 0
    elif convention == "concat":
        n = (dim + 1) // 2
        idx = np.concatenate([np.arange(n), np.arange(half)])
        sine = np.arange(dim) < n
    else:
        idx = np.concatenate([np.arange(half), np.arange(half), np.full(dim % 2, -1)])
        sine = np.arange(dim) < half
    return idx.astype(np.int64), sine


def sinusoidal_exponents(dim: int, convention: str) -> np.ndarray:
    """The exponents :math:`e_i` with :math:`\\omega_i = b^{-e_i}`."""
    if convention == "tensor2tensor":
        half = dim // 2
        return np.arange(half, dtype=np.float64) / (half - 1)
    return np.arange((dim + 1) // 2, dtype=np.float64) * 2.0 / dim


def sinusoidal_tolerance(
    positions: Any,
    dim: int,
    *,
    convention: str | None = None,
    dtype: Any = "float32",
    base: float = 10000.0,
) -> np.ndarray:
    r"""The oracle's default absolute tolerance for each entry of a sinusoidal table.

    An honest table computes :math:`p\,\omega_i` in float32 or better, sin and cos in
    float32 or better, and rounds to ``dtype``:

    .. math::

        \tau = \sigma \left[ (C_\omega + 1)\, u\, |p\,\omega_i| + \omega_i\,|\mathrm{fl}_{32}(p) - p|
            + 2u + u_T + u_{64}(|p\,\omega_i| + 8) \right]

    with :math:`C_\omega = 3 e_i \ln b + e_i + 10` (0 for :math:`e_i = 0`) as for RoPE's frequencies
    (:math:`\omega_i = b^{-e_i}`), :math:`u = 2^{-24}`, :math:`\sigma = 2`. A zero column
    (odd ``dim``, tensor2tensor) must be exactly zero.

    Returns
    -------
    numpy.ndarray
        float64, shape ``positions.shape + (dim,)``.

    Examples
    --------
    >>> from pemath.testing import sinusoidal_tolerance
    >>> sinusoidal_tolerance([0, 10**6], 4, convention="concat").shape
    (2, 4)
    """
    from .._core import arrays as _arrays

    case = _arrays.sinusoidal_case(positions, dim, base=base, convention=convention)
    u_t = unit_roundoff(dtype)
    return sinusoidal_bound(case.pos, case.freq, case.base, case.dim, case.convention, u_t).reshape(
        case.shape + (case.dim,)
    )


def sinusoidal_bound(
    pos: np.ndarray, freq: np.ndarray, base: float, dim: int, convention: str, u_t: float
) -> np.ndarray:
    """:func:`sinusoidal_tolerance` on host float64 positions ``(N,)``: ``(N, dim)``."""
    e = sinusoidal_exponents(dim, convention)
    cfreq = 3.0 * e * abs(math.log(base)) + e + np.where(e > 0, C_FREQ, 0.0)
    per_freq = SAFETY * (phase_error(pos, freq, cfreq) + C_TRIG * U32 + u_t)
    idx, _ = sinusoidal_columns(dim, convention)
    out = per_freq[:, np.maximum(idx, 0)]
    out[:, idx < 0] = 0.0
    return out


# --------------------------------------------------------------------------- ALiBi

#: The slopes in float32: ``powf`` within 4 ulp (8 u32), then the product with the distance
#: and the distance's own rounding beyond 2**24 (counted separately): 10 u32 relative.
C_SLOPE = 10.0


def alibi_bound(truth: np.ndarray, u_t: float, max_distance: float) -> np.ndarray:
    """Per-entry bound of :func:`alibi_tolerance` (0 where ``truth`` is -inf)."""
    extra = U32 if max_distance > 2**24 else 0.0
    mag = np.where(np.isfinite(truth), np.abs(truth), 0.0)
    return SAFETY * mag * (C_SLOPE * U32 + extra + u_t + 2 * U64)


def alibi_tolerance(
    heads: Any,
    q_len: int,
    k_len: int,
    *,
    form: str | None = None,
    offset: int | None = None,
    dtype: Any = "float32",
) -> np.ndarray:
    r"""The oracle's default absolute tolerance for each entry of an ALiBi bias.

    An honest bias computes the slopes and their products with the (exact, integer)
    distances in float32 or better and rounds once to ``dtype``:

    .. math:: \tau = \sigma\, |B_{ij}| \left( 10 u + u_T \right)

    (``powf`` within 4 ulp, the product one rounding; :math:`u = 2^{-24}`, one more
    :math:`u` when distances exceed :math:`2^{24}`). Masked entries (``-inf``) are judged
    separately by :func:`pemath.testing.assert_alibi_close`.

    Examples
    --------
    >>> from pemath.testing import alibi_tolerance
    >>> alibi_tolerance(8, 4, 4, form="causal").shape
    (8, 4, 4)
    """
    from ... import alibi

    truth = np.asarray(alibi.bias(heads, q_len, k_len, form=form, offset=offset))
    u_t = unit_roundoff(dtype)
    dist = max(int(q_len), int(k_len)) + abs(int(offset or 0))
    return alibi_bound(truth, u_t, dist)
