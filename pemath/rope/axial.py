r"""Multi-dimensional RoPE: axial N-D RoPE (images, video) and M-RoPE (Qwen2-VL, Qwen3-VL).

Both rotate each feature pair by one position component. They differ in where the
frequencies come from:

* :func:`apply_axial` splits the features into one group per axis and gives each
  group the frequencies of a RoPE of the group's own size,
  :math:`\theta_{a,j} = b^{-2j/d_a}` (vision encoders: FLUX, EVA-02, Llama 4, Qwen-VL,
  Gemma 4, Pixtral, rotary-embedding-torch's ``get_axial_freqs``);
* :func:`apply_mrope` keeps the frequencies of one RoPE over the whole rotary dimension,
  :math:`\theta_i = b^{-2i/d_r}`, and assigns each frequency index to a position
  component (Qwen2-VL's text model and its successors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _compat
from .._validate import as_positions, check_bool, check_choice, show
from . import _core
from .spec import resolve
from ._axes import AXIAL_FREQUENCIES, GROUPINGS, int_list as _int_list, mrope_components

__all__ = ["apply_axial", "mrope_components", "GROUPINGS", "AXIAL_FREQUENCIES"]

def _positions_with_axis(
    positions: Any, xp: Any, device: Any, wdt: Any, batch_shape: tuple[int, ...], *, leading: bool
) -> Any:
    """Positions with a component axis (last if not ``leading``), each component broadcasting to ``batch_shape``."""
    pos = as_positions(positions, xp, device, wdt)
    where = "leading" if leading else "trailing"
    if pos.ndim < 1:
        raise ValueError(
            f"positions must have a {where} axis of position components, got a 0-d value ({show(positions)})"
        )
    n = int(pos.shape[0] if leading else pos.shape[-1])
    for a in range(n):
        comp = pos[a, ...] if leading else pos[..., a]
        label = f"positions[{a}]" if leading else f"positions[..., {a}]"
        as_positions(comp, xp, device, wdt, target_shape=batch_shape, name=label)
    return pos


def _axis_dims(axis_dims: Any, n_axes: int, dim: int) -> list[int]:
    if axis_dims is None:
        if dim % (2 * n_axes):
            raise ValueError(
                f"x.shape[-1] = {dim} cannot be split into {n_axes} equal even groups (one per axis of "
                f"positions); pass axis_dims (even sizes summing to at most {dim})"
            )
        return [dim // n_axes] * n_axes
    dims = _int_list("axis_dims", axis_dims)
    if len(dims) != n_axes:
        raise ValueError(
            f"axis_dims has {len(dims)} entries but positions has {n_axes} axes (its last axis); "
            "give one even size per axis"
        )
    odd = [d for d in dims if d % 2]
    if odd:
        raise ValueError(f"axis_dims must hold even sizes (features are rotated in pairs), got {dims}")
    if sum(dims) > dim:
        raise ValueError(f"axis_dims sums to {sum(dims)}, more than x.shape[-1] = {dim}; got {dims}")
    return dims


def axis_frequencies(dims: list[int], base: float, frequencies: str) -> list[np.ndarray]:
    """The float64 frequencies of each axis group (``"per_axis"`` or ``"strided"``, see :func:`apply_axial`)."""
    n_axes = len(dims)
    if frequencies == "strided":
        if len(set(dims)) != 1:
            raise ValueError(f"frequencies='strided' needs equal axis_dims (Pixtral), got {dims}")
        full = _core.frequencies(sum(dims), base, None, None)[0]
        return [full[a::n_axes] for a in range(n_axes)]
    return [_core.frequencies(d, base, None, None)[0] for d in dims]


def apply_axial(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    base: float | None = None,
    axis_dims: Any = None,
    grouping: str | None = None,
    frequencies: str | None = None,
    inverse: bool = False,
    spec: Any = None,
) -> Any:
    r"""Axial N-D RoPE: one group of features per position axis.

    ``positions[..., a]`` (the coordinate of axis ``a``: row, column, frame...) rotates
    group ``a``, of ``axis_dims[a]`` features, by plain RoPE. With
    ``frequencies="per_axis"`` the frequencies are those of a RoPE of the group's own
    size:

    .. math:: \theta_{a,j} = b^{-2j/d_a}, \qquad j = 0, \dots, d_a/2 - 1

    so that :math:`q_{p} \cdot k_{p'}` depends on the per-axis differences
    :math:`p_a - p'_a` only. Features beyond :math:`\sum_a d_a` pass through.

    Parameters
    ----------
    x : array
        Real floating; the last axis is the feature axis.
    positions : array or list
        Shape ``(..., n_axes)``; ``positions[..., a]`` broadcasts against
        ``x.shape[:-1]`` without enlarging it (e.g. ``(seq, 2)`` for ``x`` of shape
        ``(batch, heads, seq, dim)``). Integer or real.
    layout : {"interleaved", "half"}
        Required.
    base : float
    axis_dims : sequence of int, optional
        The group sizes ``d_a`` (even, in axis order); default ``x.shape[-1]`` split
        equally.
    grouping : {"features", "pairs"}
        ``"features"`` (default): group ``a`` is a consecutive block of features,
        rotated by its own RoPE in ``layout`` (with ``"half"``, pairs
        ``(j, j + d_a/2)`` inside the block: Gemma 4's vision
        ``apply_multidimensional_rope``). ``"pairs"``: the rotated pairs of the whole
        ``sum(axis_dims)`` features in ``layout`` are split into consecutive blocks of
        ``d_a/2`` pairs (with ``"half"``, axis ``a`` owns features in both halves:
        Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V and Pixtral vision towers, whose cos/sin
        are ``cat(cat(f_h, f_w), cat(f_h, f_w))``). With ``layout="interleaved"`` the two
        are identical (FLUX's ``EmbedND``, EVA-02, Llama 4 vision, rotary-embedding-torch).
    frequencies : {"per_axis", "strided"}
        ``"per_axis"`` (default): :math:`b^{-2j/d_a}` as above (all the projects named
        above except Pixtral). ``"strided"``: the frequencies of one RoPE over
        :math:`D = \sum_a d_a` dealt to the axes in turn, axis ``a`` of ``n`` taking
        :math:`\theta_{a,j} = b^{-2(nj + a)/D}` (Pixtral's
        ``cat(inv_freq[0::2], inv_freq[1::2])``); needs equal ``axis_dims``. For axis 0
        the two agree.
    inverse : bool
        Rotate by the negated angles (undoes :func:`apply_axial`).
    spec : pemath.rope.Spec, optional
        An axial spec (``axial_dims`` set) instead of ``layout``, ``base``,
        ``axis_dims``, ``grouping`` and ``frequencies`` (both given: ``TypeError``);
        ``rope.apply(x, positions, spec=spec)`` is the same call.

    Returns
    -------
    array
        Same namespace, device, shape and dtype as ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> x = np.ones(8)
    >>> y = rope.apply_axial(x, [2, 3], layout="interleaved")  # (row 2, column 3)
    >>> bool(np.allclose(y[:4], rope.apply(x[:4], 2, layout="interleaved")))
    True
    """
    xp = _core.check_x(x)
    if spec is not None:
        spec = resolve(spec, "rope.apply_axial", layout=layout, base=base, axis_dims=axis_dims, grouping=grouping,
                       frequencies=frequencies)
        if spec.axial_dims is None:
            raise ValueError(f"rope.apply_axial needs a spec with axial_dims, got {spec!r}")
        spec.rotary_dim_for(int(x.shape[-1]))  # checks head_dim
        layout, base, axis_dims = spec.layout, spec.base, list(spec.axial_dims)
        grouping, frequencies = spec.axial_grouping, spec.axial_frequencies
    layout = _core.check_layout(layout)
    grouping = check_choice("grouping", "features" if grouping is None else grouping, GROUPINGS)
    frequencies = check_choice("frequencies", "per_axis" if frequencies is None else frequencies, AXIAL_FREQUENCIES)
    inverse = check_bool("inverse", inverse)
    base = _core.check_base(10000.0 if base is None else base)
    device = _compat.device_of(x)
    wdt = _compat.working_dtype(xp, device)
    batch_shape = tuple(x.shape[:-1])
    pos = _positions_with_axis(positions, xp, device, wdt, batch_shape, leading=False)
    n_axes = int(pos.shape[-1])
    if n_axes < 1:
        raise ValueError("positions must have at least one axis component (its last axis has length 0)")
    dim = int(x.shape[-1])
    dims = _axis_dims(axis_dims, n_axes, dim)
    total = sum(dims)
    freqs = axis_frequencies(dims, base, frequencies)

    sign = -1.0 if inverse else 1.0
    tables = [_core.angle_table(pos[..., a], freqs[a], xp, device, wdt) * sign for a in range(n_axes)]
    if grouping == "pairs":
        theta = xp.concat(tables, axis=-1)
        return _core.rotate(x, xp.cos(theta), xp.sin(theta), layout, total, xp, wdt)
    parts = []
    start = 0
    for a, d in enumerate(dims):
        part = x[..., start : start + d]
        parts.append(_core.rotate(part, xp.cos(tables[a]), xp.sin(tables[a]), layout, d, xp, wdt))
        start += d
    if total < dim:
        parts.append(x[..., total:])
    return xp.concat(parts, axis=-1) if len(parts) > 1 else parts[0]


def rotate_mrope(x: Any, positions: Any, plain: Any, sections: tuple[int, ...], interleaved: bool, r: int,
                 seq_len: Any, inverse: bool) -> Any:
    """The M-RoPE rotation: ``plain``'s frequencies, index ``i`` driven by component ``c(i)``."""
    xp = _compat.namespace(x)
    comp = mrope_components(list(sections), interleaved=interleaved)
    k = len(sections)
    if 2 * comp.shape[0] != r:
        raise ValueError(
            f"mrope_section sums to {comp.shape[0]}, but it must sum to half the rotary dimension "
            f"({r} // 2 = {r // 2}); pass rotary_dim for a partial rotation"
        )
    freq, factor = plain.frequencies(r, seq_len)
    device = _compat.device_of(x)
    wdt = _compat.working_dtype(xp, device)
    batch_shape = tuple(x.shape[:-1])
    pos = _positions_with_axis(positions, xp, device, wdt, batch_shape, leading=True)
    if int(pos.shape[0]) != k:
        raise ValueError(
            f"positions has {int(pos.shape[0])} components along its leading axis but mrope_section "
            f"has {k} entries; pass positions of shape ({k}, ...)"
        )
    theta = _core.angle_table(pos[0, ...], freq, xp, device, wdt)
    for c in range(1, k):
        mask = xp.asarray((comp == c).tolist(), dtype=xp.bool, device=device)
        theta = xp.where(mask, _core.angle_table(pos[c, ...], freq, xp, device, wdt), theta)
    if inverse:
        theta = -theta
    cos, sin = xp.cos(theta), xp.sin(theta)
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return _core.rotate(x, cos, sin, plain.layout, r, xp, wdt)


def __getattr__(name: str) -> Any:
    """``apply_mrope`` moved to :mod:`pemath.rope.apply` (``pemath.rope.apply_mrope`` is unchanged)."""
    if name == "apply_mrope":
        import warnings

        warnings.warn("pemath.rope.axial.apply_mrope is deprecated and goes in the next release: use "
                      "pemath.rope.apply_mrope", DeprecationWarning, stacklevel=2)
        from .apply import apply_mrope  # the deprecated path only: apply imports this module

        return apply_mrope
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
