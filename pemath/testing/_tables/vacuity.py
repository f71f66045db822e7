"""Which entries of a sinusoidal table have a vacuous derived tolerance (the definition: ``_core/vacuity.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["sinusoidal_vacuous"]


def sinusoidal_vacuous(case: Any, expected: np.ndarray, tol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(vacuous, frequency index)`` for a SinusoidalCase: boolean ``(N, dim)``; index -1 for a zero column."""
    from .tolerance import sinusoidal_columns

    idx, _ = sinusoidal_columns(case.dim, case.convention)
    out = (tol >= 1.0 + np.abs(expected)) & (idx >= 0)[None, :]
    return out, idx
