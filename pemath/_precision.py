r"""The precision guard: warnings where a dtype choice would lose precision silently.

Two checks, each with its own warning class (``pemath._errors``):

* :func:`check_positions` (called by ``_validate.as_positions``, so by every public
  function that takes positions): :class:`~pemath.InexactPositionsWarning` when

  - floating positions reach :math:`\max |p| > N_{\text{dtype}}`, with
    :math:`N` = :func:`pemath.positions.max_exact_position` of their own dtype
    (float16 2048, bfloat16 256, float32 :math:`2^{24}`, float64 :math:`2^{53}`):
    beyond it consecutive integer positions may have merged before pemath saw them;
  - or positions of any dtype are converted to a floating dtype ``target`` narrower
    than float64 (the float32 working dtype of a backend without float64) with
    :math:`\max |p| > N_{\text{target}}`.

  At :math:`\max |p| = N` exactly there is no warning: every integer up to it is exact.

* :func:`check_table_phases` (``rope.cos_sin``, ``sinusoidal.encode``):
  :class:`~pemath.TablePrecisionWarning` when a table requested in ``dtype`` has its
  phases computed in a working dtype ``W`` narrower than float64 and
  :math:`u_W \max|p\,\omega| > u_T` (the phase's rounding error exceeds the unit
  roundoff of the requested dtype ``T``). With float64 phases pemath's tables are
  within :math:`u_T` of the truth at every position and no warning is due.

The warnings point at the caller's line outside pemath (:func:`warn`).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from . import _compat, _dtypes
from ._errors import InexactPositionsWarning, TablePrecisionWarning

__all__ = [
    "warn",
    "dtype_label",
    "exact_limit",
    "unit_roundoff",
    "check_positions",
    "check_table_dtype",
    "check_table_phases",
]


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` attributed to the first caller outside the pemath package."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "pemath":
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def dtype_label(dtype: Any) -> str:
    """A short name for a dtype of any backend: 'float16', 'torch.bfloat16', 'bfloat16'..."""
    return _dtypes.label(dtype)


def exact_limit(xp: Any, dtype: Any) -> int | None:
    """:func:`pemath.positions.max_exact_position` of a real floating ``dtype``; None otherwise."""
    if not _compat.is_real_floating(xp, dtype):
        return None
    try:
        return _dtypes.max_exact_position(dtype)
    except (TypeError, ValueError):  # a format pemath cannot size: nothing to compare with
        return None


def unit_roundoff(xp: Any, dtype: Any) -> float | None:
    """:math:`u = \\epsilon / 2` of a real floating dtype (None if unknown)."""
    if not _compat.is_real_floating(xp, dtype):
        return None
    try:
        return _dtypes.unit_roundoff(dtype)
    except (TypeError, ValueError, ImportError):
        pass
    for finfo in (getattr(sys.modules.get("torch"), "finfo", None), getattr(xp, "finfo", None)):
        try:
            return float(finfo(dtype).eps) / 2
        except Exception:  # not this library's dtype
            continue
    return None


def _show_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _show_limit(n: int) -> str:
    k = n.bit_length() - 1
    return f"{n} (2**{k})" if n == 2**k and k > 8 else str(n)


def _max_abs(arr: Any, xp: Any) -> float:
    if _compat.is_integer_dtype(xp, arr.dtype):
        return float(int(xp.max(xp.abs(xp.astype(arr, xp.int64)))))
    return float(xp.max(xp.abs(arr)))


def check_positions(arr: Any, xp: Any, target: Any, name: str, *, host: np.ndarray | None = None) -> None:
    """Warn (:class:`~pemath.InexactPositionsWarning`) when positions are not exact integers in their dtype.

    ``arr`` holds validated finite positions of ``xp``; ``target`` is the dtype they
    are about to be converted to. ``host``: the NumPy array of the Python numbers the
    positions were given as (their floats are float64, whatever dtype ``arr`` got), or
    None for an array argument. See the module docstring for the criterion.
    """
    if not _size(arr):
        return
    python = host is not None
    if python:
        own = 2**53 if host.dtype.kind == "f" else None
    else:
        own = exact_limit(xp, arr.dtype)
    goal = exact_limit(xp, target)
    if goal is not None and goal >= 2**53:
        goal = None  # float64 or wider: integers beyond 2**53 are refused by as_positions
    if own is None and goal is None:
        return
    big = float(np.max(np.abs(host.astype(np.float64)))) if python else _max_abs(arr, xp)
    src = "Python floats (float64)" if python else dtype_label(arr.dtype)
    if own is not None and big > own and (goal is None or own < goal):
        fix = (
            "pass integer positions (int32 or int64) or float64"
            if own < 2**53
            else "no floating dtype tells such positions apart; pass integer positions up to 2**53"
        )
        warn(
            f"{name} are {src}, a dtype that holds every integer exactly only up to {_show_limit(own)} "
            f"(pemath.positions.max_exact_position), but max |{name}| is {_show_number(big)}: consecutive "
            f"integer positions above {own} may have merged (rounded to a common value) before pemath received "
            f"them; {fix}",
            InexactPositionsWarning,
        )
        return
    if goal is not None and big > goal:
        warn(
            f"{name} reach max |{name}| = {_show_number(big)}, but are converted to {dtype_label(target)} "
            f"(the working dtype on this backend, which has no float64), which holds every integer exactly only "
            f"up to {_show_limit(goal)}: positions above it are rounded and consecutive ones merge; use a "
            "backend or device with float64 (JAX: enable x64)",
            InexactPositionsWarning,
        )


def check_table_dtype(xp: Any, dtype: Any, name: str = "dtype") -> None:
    """A table dtype must be real floating and hold negative numbers and zero (refused otherwise).

    ``xp.astype`` would otherwise truncate cos and sin to integers (``int8``: 0 and
    +-1) or turn them into NaN (ml_dtypes' unsigned ``float8_e8m0fnu``): garbage, not
    a loss of precision, so an error rather than a warning.
    """
    if dtype is None:
        return
    if not _compat.is_real_floating(xp, dtype):
        raise TypeError(f"{name} must be a real floating dtype of {_compat.backend_name(xp)}, got {dtype!r}")
    if _compat.is_numpy(xp) and _compat._is_ml_dtypes_float(np.dtype(dtype)):
        probe = np.asarray([-0.5, 0.0]).astype(dtype).astype(np.float64)
        if not (probe[0] < 0 and probe[1] == 0):
            raise ValueError(
                f"{name} {dtype_label(dtype)} cannot hold negative numbers or zero, so it cannot hold cos and sin "
                "(they would become NaN); pass a signed floating dtype"
            )


def check_table_phases(pos: Any, freq: np.ndarray, xp: Any, wdt: Any, dtype: Any, what: str) -> None:
    """Warn (:class:`~pemath.TablePrecisionWarning`) when float32 phases make a ``dtype`` table inaccurate.

    ``pos`` are the positions in the working dtype ``wdt``, ``freq`` the angular
    frequencies (host float64). Nothing is checked when ``wdt`` is float64 or no
    ``dtype`` was requested (the fallback itself is announced by
    ``_compat.working_dtype``). Otherwise: warn when :math:`u_W \\max|p|\\max|\\omega| > u_T`.
    """
    if dtype is None or wdt == xp.float64 or not _size(pos) or not freq.size:
        return
    u_w, u_t = unit_roundoff(xp, wdt), unit_roundoff(xp, dtype)
    if u_w is None or u_t is None:
        return
    phase = _max_abs(pos, xp) * float(np.max(np.abs(freq)))
    if u_w * phase <= u_t:
        return
    warn(
        f"{what} in {dtype_label(dtype)} cannot be accurate to its dtype: this backend has no float64, so the "
        f"phases are computed in {dtype_label(wdt)}, and at the largest phase, {phase:.6g} rad, their rounding "
        f"error (up to {u_w * phase:.3g} rad) exceeds the unit roundoff of {dtype_label(dtype)} ({u_t:.3g}); "
        f"keep phases below {u_t / u_w:.6g} rad (positions below {u_t / u_w / float(np.max(np.abs(freq))):.6g}) "
        "or use a backend or device with float64",
        TablePrecisionWarning,
    )


def _size(a: Any) -> int:
    n = 1
    for s in a.shape:
        n *= int(s)
    return n
