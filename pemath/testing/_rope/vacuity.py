"""Which RoPE elements' derived tolerance is vacuous (the definition: ``_core/vacuity.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["rope_vacuous", "rope_may_be_vacuous", "scale_may_be_vacuous"]


def rope_vacuous(case: Any, expected: np.ndarray, tol: np.ndarray, u_t: float) -> tuple[np.ndarray, np.ndarray]:
    """``(vacuous, pair)`` for a RopeCase: boolean ``(N, d)`` and each element's pair index (-1: not rotated)."""
    from ...rope import _core

    r, layout = case.r, case.layout
    idx = np.arange(r // 2)[None, :]
    pair = np.full(case.d, -1, dtype=np.int64)
    pair[:r] = _core.merge_pairs(idx, idx, layout, np)[0]
    out = np.zeros(case.x2.shape, dtype=bool)
    if not rope_may_be_vacuous(case, u_t):
        return out, pair
    xa, xb = _core.split_pairs(case.x2, layout, r)
    rho = np.hypot(xa, xb)
    rho_el = _core.merge_pairs(rho, rho, layout, np)
    amp = abs(case.factor) * rho_el
    out[:, :r] = (rho_el > 0) & (tol[:, :r] >= amp + np.abs(expected[:, :r]))
    return out, pair


def rope_may_be_vacuous(case: Any, u_t: float) -> bool:
    """False when no rotated element can be vacuous, decided on the bound's table per position and pair.

    ``tau = S K(p, i)`` (``_tolerance.pair_scale``) with ``S <= sqrt(2) rho``, so
    ``tau >= |a| rho + |t|`` needs ``sqrt(2) K >= |a|`` at that position and pair.
    """
    from .tolerance import pair_scale

    k = pair_scale(np.unique(case.pos), case.freq, case.cfreq, case.factor, u_t)
    return scale_may_be_vacuous(k, case.factor)


def scale_may_be_vacuous(k: np.ndarray, factor: float) -> bool:
    """Whether a table of bounds per unit of S (``pair_scale``) lets some element be vacuous: ``sqrt(2) K >= |a|``
    somewhere (or a bound that is not finite)."""
    return not np.all(np.isfinite(k)) or bool(np.any(np.sqrt(2.0) * k >= abs(factor) * (1.0 - 1e-9)))
