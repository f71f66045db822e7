"""RoPE in complex form: each pair is a complex number multiplied by e^{i m θ} (Meta's llama)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _compat, _precision
from .._validate import as_positions, check_bool, show
from ..scaling import RopeScaling
from . import _core
from .spec import Spec, frequencies_of, hf_seq_len

__all__ = ["to_complex", "from_complex", "freqs_cis", "apply_complex"]


def to_complex(x: Any, *, layout: str | None = None) -> Any:
    r"""View each rotated pair :math:`(x_a, x_b)` as :math:`z = x_a + i x_b`.

    Shape ``(..., d)`` real → ``(..., d/2)`` complex128 (complex64 for float32 and
    narrower inputs would lose the reference's precision, so the result is always
    complex128 where the backend has it).
    """
    xp = _core.check_x(x)
    layout = _core.check_layout(layout)
    d = int(x.shape[-1])
    if d % 2:
        raise ValueError(f"x.shape[-1] must be even to form complex pairs, got {d}")
    wdt = _compat.working_dtype(xp, _compat.device_of(x))
    cdt = xp.complex128 if wdt == xp.float64 else xp.complex64
    a, b = _core.split_pairs(x, layout, d)
    return _complex(xp.astype(a, cdt), b, xp, cdt)


def _complex(re: Any, im: Any, xp: Any, cdt: Any) -> Any:
    """``re + i*im`` with ``re`` complex and ``im`` real, exact for non-finite ``im`` too.

    ``im * 1j`` turns an infinite ``im`` into ``nan + inf j`` (``inf * 0`` in the real
    part): the non-finite entries get their imaginary unit by addition instead.
    """
    finite = xp.isfinite(im)
    z = re + xp.astype(xp.where(finite, im, xp.zeros_like(im)), cdt) * 1j
    if not bool(xp.all(finite)):
        for v in (math.inf, -math.inf, math.nan):
            hit = xp.isnan(im) if v != v else im == v
            z = xp.where(hit, re + complex(0.0, v), z)
    return z


def from_complex(z: Any, *, layout: str | None = None, dtype: Any = None) -> Any:
    """Inverse of :func:`to_complex`: ``(..., d/2)`` complex → ``(..., d)`` real of ``dtype``."""
    if not _compat.is_array(z):
        raise TypeError(f"z must be a complex array, got {show(z)}")
    xp = _compat.namespace(z)
    if not xp.isdtype(z.dtype, "complex floating"):
        raise TypeError(f"z must have a complex dtype, got {show(z)}")
    if z.ndim < 1:
        raise ValueError("z must have at least one axis (the pair axis is the last), got a 0-d array")
    layout = _core.check_layout(layout)
    _precision.check_table_dtype(xp, dtype)
    out = _core.merge_pairs(xp.real(z), xp.imag(z), layout, xp)
    return out if dtype is None else xp.astype(out, dtype)


def freqs_cis(
    positions: Any,
    dim: int | None = None,
    *,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    spec: Spec | None = None,
    rotary_dim: int | None = None,
) -> Any:
    r""":math:`a\,e^{i m \theta_j}` for every position and pair: Meta's ``precompute_freqs_cis``.

    Shape ``positions.shape + (dim/2,)``, complex128 (NumPy for Python positions).
    ``a`` is the scaling's attention factor (1 for Meta's own Llama 3 scaling).
    ``base`` defaults to 10000; ``spec=`` (a :class:`pemath.rope.Spec`) replaces
    ``base`` and ``scaling`` (both given: ``TypeError``) and may fix ``dim``;
    ``rotary_dim`` is another name for ``dim``. ``seq_len=None``: ``max(positions) + 1``
    for the length-driven scalings, as in :func:`pemath.rope.apply`.
    """
    seq_len = hf_seq_len(spec.scaling if isinstance(spec, Spec) else scaling, positions, seq_len)
    freq, factor = frequencies_of("rope.freqs_cis", spec, dim, seq_len, rotary_dim=rotary_dim, base=base, scaling=scaling)
    if _compat.is_array(positions):
        xp, device = _compat.namespace(positions), _compat.device_of(positions)
    else:
        xp, device = _compat.namespace(np.empty(0)), "cpu"
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt)
    theta = _core.angle_table(pos, freq, xp, device, wdt)
    cdt = xp.complex128 if wdt == xp.float64 else xp.complex64
    return xp.astype(xp.cos(theta) * factor, cdt) + xp.astype(xp.sin(theta) * factor, cdt) * 1j


def apply_complex(
    z: Any,
    positions: Any,
    *,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    inverse: bool = False,
    spec: Spec | None = None,
) -> Any:
    r"""Rotate complex pairs: :math:`z_j \mapsto z_j\, a\, e^{\pm i m \theta_j}`.

    ``z`` has shape ``(..., d/2)``; ``positions`` broadcasts against ``z.shape[:-1]``.
    Equal to :func:`pemath.rope.apply` through :func:`to_complex` /
    :func:`from_complex` in either layout. ``base`` defaults to 10000; ``spec=``
    replaces ``base`` and ``scaling`` (both given: ``TypeError``); its rotary dim must
    be ``2 * z.shape[-1]``.
    """
    if not _compat.is_array(z):
        raise TypeError(f"z must be a complex array, got {show(z)}")
    xp = _compat.namespace(z)
    if not xp.isdtype(z.dtype, "complex floating"):
        raise TypeError(f"z must have a complex dtype, got {show(z)}")
    if z.ndim < 1:
        raise ValueError("z must have at least one axis (the pair axis is the last), got a 0-d array")
    inverse = check_bool("inverse", inverse)
    dim = 2 * int(z.shape[-1])
    if spec is not None and spec.rotary_dim is not None and spec.rotary_dim != dim:
        raise ValueError(f"z has {dim // 2} pairs, but the spec rotates {spec.rotary_dim // 2}: {spec!r}")
    seq_len = hf_seq_len(spec.scaling if isinstance(spec, Spec) else scaling, positions, seq_len)
    freq, factor = frequencies_of("rope.apply_complex", spec, dim, seq_len, base=base, scaling=scaling)
    device = _compat.device_of(z)
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt, target_shape=tuple(z.shape[:-1]), owner="z")
    theta = _core.angle_table(pos, freq, xp, device, wdt)
    sign = -1.0 if inverse else 1.0
    cdt = xp.complex128 if wdt == xp.float64 else xp.complex64
    rot = xp.astype(xp.cos(theta) * factor, cdt) + xp.astype(xp.sin(theta) * (sign * factor), cdt) * 1j
    # non-finite z: complex products of inf give NaN parts, the IEEE answer (no NumPy warning)
    with np.errstate(invalid="ignore", over="ignore"):
        return xp.astype(z, cdt) * rot
