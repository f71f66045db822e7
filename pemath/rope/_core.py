"""The portable rotation kernel shared by every RoPE entry point.

Written against the array API standard only: it runs unchanged on NumPy, CuPy,
torch, JAX and array-api-strict.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _compat
from .._frequencies import base_inv_freq
from .._validate import check_choice, check_real, check_seq_len, check_size, show
from ..scaling import RopeScaling

LAYOUTS = ("interleaved", "half")


def check_layout(layout: Any, name: str = "layout") -> str:
    if layout is None:
        raise TypeError(
            f"{name} is required: 'interleaved' rotates pairs (2i, 2i+1) (RoFormer, GPT-J, Meta's "
            "complex form, torchtune); 'half' rotates pairs (i, i + d/2) (GPT-NeoX, HF rotate_half, "
            "flash-attn)"
        )
    return check_choice(name, layout, LAYOUTS)


def check_base(base: Any) -> float:
    return check_real("base", base, positive=True)


def check_scaling(scaling: Any) -> RopeScaling | None:
    if scaling is not None and not isinstance(scaling, RopeScaling):
        raise TypeError(
            "scaling must be None or a pemath.scaling variant (Linear, NTK, DynamicNTK, YaRN, "
            f"Llama3, LongRoPE, Proportional), got {show(scaling)}"
        )
    return scaling


def frequencies(dim: int, base: float, scaling: RopeScaling | None, seq_len: int | None) -> tuple[np.ndarray, float]:
    """Validated float64 inverse frequencies and attention factor."""
    dim = check_size("dim", dim, minimum=2)
    if dim % 2:
        raise ValueError(f"dim must be even for RoPE, got {dim} (features are rotated in pairs)")
    base = check_base(base)
    scaling = check_scaling(scaling)
    seq_len = check_seq_len(seq_len)
    if scaling is None:
        return base_inv_freq(dim, base), 1.0
    freq = np.asarray(scaling.inv_freq(dim, base, seq_len=seq_len), dtype=np.float64)
    if freq.shape != (dim // 2,) or not np.all(np.isfinite(freq)):
        raise ValueError(f"{scaling!r} produced invalid frequencies for dim {dim}")
    return freq, float(scaling.attention_factor_at(seq_len))


def angle_table(pos: Any, freq: np.ndarray, xp: Any, device: Any, wdt: Any) -> Any:
    """``pos[..., None] * freq`` in the working dtype: the phases, shape pos.shape + (d/2,)."""
    f = xp.asarray(freq.tolist(), dtype=wdt, device=device)
    return pos[..., None] * f


def expand(table: Any, layout: str, xp: Any) -> Any:
    """A per-pair table (..., d/2) laid out per feature (..., d): HF's cat for half, repeat for interleaved."""
    if layout == "half":
        return xp.concat([table, table], axis=-1)
    shape = tuple(table.shape[:-1]) + (2 * table.shape[-1],)
    return xp.reshape(xp.stack([table, table], axis=-1), shape)


def split_pairs(x: Any, layout: str, r: int) -> tuple[Any, Any]:
    """The two members of each rotated pair, each of shape (..., r/2)."""
    if layout == "half":
        return x[..., : r // 2], x[..., r // 2 : r]
    return x[..., 0:r:2], x[..., 1:r:2]


def merge_pairs(a: Any, b: Any, layout: str, xp: Any) -> Any:
    """Inverse of :func:`split_pairs`."""
    if layout == "half":
        return xp.concat([a, b], axis=-1)
    shape = tuple(a.shape[:-1]) + (2 * a.shape[-1],)
    return xp.reshape(xp.stack([a, b], axis=-1), shape)


def rotate(x: Any, cos: Any, sin: Any, layout: str, r: int, xp: Any, wdt: Any) -> Any:
    """Rotate the first ``r`` features of ``x`` by per-pair (cos, sin) tables of shape (..., r/2).

    Arithmetic in ``wdt`` (float64), one rounding to x's dtype at the end; the features
    beyond ``r`` are passed through bit-identical.
    """
    x1, x2 = split_pairs(x, layout, r)
    x1 = xp.astype(x1, wdt)
    x2 = xp.astype(x2, wdt)
    # inf in x gives inf * 0 = NaN where a sine or cosine vanishes: the IEEE answer, not an
    # error to warn about (NumPy's warning state; no effect on the other backends)
    with np.errstate(invalid="ignore", over="ignore"):
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
    out = xp.astype(merge_pairs(o1, o2, layout, xp), x.dtype)
    if r < x.shape[-1]:
        out = xp.concat([out, x[..., r:]], axis=-1)
    return out


def check_x(x: Any, name: str = "x") -> Any:
    if not _compat.is_array(x):
        raise TypeError(f"{name} must be an array (NumPy, CuPy, torch, JAX, ...), got {show(x)}")
    xp = _compat.namespace(x, names=(name,))
    if not _compat.is_real_floating(xp, x.dtype):
        raise TypeError(f"{name} must have a real floating dtype, got {show(x)}")
    if x.ndim < 1:
        raise ValueError(f"{name} must have at least one axis (the feature axis is the last), got a 0-d array")
    return xp


def rotate_into(x: Any, pos: Any, freq: np.ndarray, factor: float, layout: str, r: int, out: Any, *, xp: Any,
                wdt: Any) -> Any:
    """The portable kernel, with the kernel contract of ``rope.apply`` (see ``_fast_numpy.rotate_into``).

    ``freq`` comes negated for the inverse rotation; cos and sin are multiplied by
    ``factor``; phases, cos, sin and products in ``wdt``, rounded once to ``x.dtype``.
    """
    theta = angle_table(pos, freq, xp, _compat.device_of(x), wdt)
    cos, sin = xp.cos(theta), xp.sin(theta)
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    result = rotate(x, cos, sin, layout, r, xp, wdt)
    if out is None:
        return result
    out[...] = result
    return out
