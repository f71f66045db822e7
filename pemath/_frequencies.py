"""The unscaled RoPE inverse frequencies, correctly rounded to float64."""

from __future__ import annotations

import functools

import mpmath
import numpy as np

__all__ = ["base_inv_freq"]


@functools.lru_cache(maxsize=256)
def _base_inv_freq(dim: int, base: float, denominator: int) -> np.ndarray:
    with mpmath.workdps(40):
        b = mpmath.mpf(base)
        vals = [float(b ** (-mpmath.mpf(2 * i) / denominator)) for i in range(dim // 2)]
    out = np.array(vals, dtype=np.float64)
    if not np.all(np.isfinite(out)) or (dim >= 4 and not np.all(out > 0)):
        raise ValueError(
            f"base = {base!r} gives frequencies base**(-2i/{denominator}) beyond the float64 range "
            f"(from {out.min()} to {out.max()}); pass a base in [1e-300, 1e300]"
        )
    out.setflags(write=False)
    return out


def base_inv_freq(dim: int, base: float, *, denominator: int | None = None) -> np.ndarray:
    r"""``base ** (-2i / denominator)`` for i in [0, dim/2), each value correctly rounded.

    ``denominator`` defaults to ``dim`` (it differs only for proportional RoPE, whose
    exponents run over the full head dimension). Evaluated with mpmath at 40 digits
    and rounded once, so the result is the float64 nearest the exact value: a
    reference that is exact to half an ulp, not to the few ulps of ``np.power``.
    The returned array is read-only and cached.
    """
    return _base_inv_freq(int(dim), float(base), int(denominator or dim))
