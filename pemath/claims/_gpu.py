"""The CuPy checks' gate: CuPy and a CUDA device, or a Skip that says which is missing."""

from __future__ import annotations

from typing import Any

from ._model import Skip

__all__ = ["require_cupy"]


def require_cupy() -> Any:
    """The ``cupy`` module, or raise :class:`Skip` naming what is missing."""
    try:
        import cupy as cp
    except ImportError:
        raise Skip("CuPy not installed") from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no runtime
        raise Skip(f"CUDA unavailable: {exc}") from None
    if count < 1:
        raise Skip("no CUDA device")
    return cp
