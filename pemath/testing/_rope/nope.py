"""The oracle for a layer that applies no RoPE: the output must be the input, exactly."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _compat
from ..._validate import as_positions
from .._core.arrays import as_host, check_finite

__all__ = ["assert_no_rope"]


def assert_no_rope(actual: Any, x: Any, positions: Any, spec: Any, user: tuple[float, float] | None) -> None:
    """Raise AssertionError unless ``actual`` equals ``x`` (within ``user``'s rtol/atol where given).

    A NoPE layer's honest output is ``x`` itself: no arithmetic, so no rounding and no
    derived tolerance. On failure the message says where the output moved and, where it
    reads as a rotation, which one (:func:`pemath.testing.recover_rope`).
    """
    __tracebackhide__ = True
    a, t_name = as_host("actual", actual)
    xh, _ = as_host("x", x)
    if a.shape != xh.shape:
        raise ValueError(f"actual has shape {tuple(a.shape)}, but x has shape {tuple(xh.shape)}")
    check_finite("x", xh)
    spec.check_x(int(xh.shape[-1]) if xh.ndim else 0)
    host_pos = _compat.to_numpy(positions) if _compat.is_array(positions) else positions
    as_positions(host_pos, np, "cpu", np.float64, target_shape=tuple(xh.shape[:-1]))  # as rope.apply checks them
    # x in the output's dtype: the identity, rounded once to what the kernel can hold (of any library)
    xr = _round_to(xh, t_name)
    rtol, atol = user if user is not None else (0.0, 0.0)
    diff = np.abs(a - xr)
    bad = ~(diff <= atol + rtol * np.abs(xr))
    if not np.any(bad):
        return
    d = int(xh.shape[-1])
    rows = np.unique(np.nonzero(bad.reshape(-1, d))[0])
    worst = np.unravel_index(int(np.nanargmax(np.where(bad, diff, -1.0))), a.shape)
    lines = [
        f"this layer applies no RoPE ({spec.reason or 'NoPE'}), so the output must equal x"
        + ("" if user is None else f" within rtol={rtol:g}, atol={atol:g}"),
        f"{int(bad.sum())} of {bad.size} elements differ, in {rows.size} of {bad.size // max(d, 1)} rows; "
        f"worst at index {tuple(int(i) for i in worst)}: actual {float(a[worst]):.9g}, x {float(xh[worst]):.9g} ({t_name})",
    ]
    lines.append("Diagnosis: " + _what_it_did(a, xh))
    raise AssertionError("\n".join(lines))


def _round_to(xh: np.ndarray, t_name: str) -> np.ndarray:
    """``x`` (float64 on the host) rounded to the output's dtype, back in float64."""
    if t_name in ("float16", "float32", "float64"):
        return xh.astype(np.dtype(t_name)).astype(np.float64)
    from ..._dtypes import ml_dtypes

    mld = ml_dtypes(f"checking a {t_name} output of a NoPE layer")
    return xh.astype(getattr(mld, t_name)).astype(np.float64)


def _what_it_did(a: np.ndarray, xh: np.ndarray) -> str:
    from .recover import recover_rope

    d = int(xh.shape[-1])
    if d < 2:
        return "the output is not x"
    try:
        rec = recover_rope(a, xh)
    except (TypeError, ValueError):
        return "the output is not x"
    with np.errstate(all="ignore"):
        amp = np.nanmedian(rec.amplitude) if np.isfinite(rec.amplitude).any() else float("nan")
        turned = np.nanmax(np.abs(rec.angle)) if np.isfinite(rec.angle).any() else 0.0
    if np.isfinite(amp) and abs(amp - 1.0) < 1e-2 and turned > 1e-3 and rec.passthrough_error < 1e-2:
        return (f"the kernel rotated the features ({rec.layout} pairs over the first {rec.rotary_dim} features, "
                f"angles up to {turned:.3g} rad): it applied RoPE on a layer whose model applies none")
    if np.isfinite(amp) and turned <= 1e-3 and abs(amp - 1.0) >= 1e-2:
        return f"the output is x times {amp:.6g}: a scale was applied on a layer that applies no RoPE"
    return "the output is not x and does not read as a rotation of it"
