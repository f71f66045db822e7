"""The small arithmetic of reading an output: angles modulo 2π, and fitted constants snapped to round numbers."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["wrap", "snap", "unwrap_shift"]


def wrap(t: np.ndarray) -> np.ndarray:
    """Angles brought into ``[-π, π)``."""
    return (t + math.pi) % (2 * math.pi) - math.pi


def snap(v: float, digits: int = 4) -> float:
    """A fitted constant rounded to ``digits`` significant digits (configs hold round numbers; the fitted formula
    is judged again against every element afterwards)."""
    if not math.isfinite(v) or v == 0:
        return v
    return float(f"{v:.{digits}g}")


def unwrap_shift(delta: np.ndarray, freq: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``c`` with ``delta[:, i] ≈ c freq[i] (mod 2π)``, unwrapped from the lowest frequency up.

    Returns ``(c, found)``; rows without a usable entry have ``found`` False.
    """
    shift = np.zeros(delta.shape[0])
    found = np.zeros(delta.shape[0], dtype=bool)
    for i in np.argsort(freq):
        th = freq[i]
        if not th > 0:
            continue
        v = valid[:, i] & np.isfinite(delta[:, i])
        with np.errstate(invalid="ignore"):
            step = wrap(delta[:, i] - wrap(shift * th)) / th
        shift = np.where(v, shift + step, shift)
        found |= v
    return shift, found
