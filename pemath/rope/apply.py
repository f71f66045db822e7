"""RoPE's public numeric entry points: frequencies, cos/sin tables, and the rotation."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import _compat, _precision
from .._validate import as_positions, check_bool, check_not_traced, check_rotary_dim, check_seq_len, show
from ..scaling import RopeScaling
from . import _core, _fast_cupy, _fast_numba, _fast_numpy
from .axial import apply_axial, rotate_mrope
from .layout import convert_layout
from .spec import NoRope, Spec, frequencies_of, hf_seq_len, resolve

__all__ = ["inv_freq", "apply", "cos_sin", "apply_mrope"]


def inv_freq(
    dim: int | None = None,
    *,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    spec: Spec | None = None,
    rotary_dim: int | None = None,
) -> np.ndarray:
    r"""The ``dim/2`` inverse frequencies of RoPE, after scaling.

    .. math:: \theta_i = b^{-2i/d}, \qquad i = 0, \dots, d/2 - 1

    each correctly rounded to float64, then changed by ``scaling``.

    Parameters
    ----------
    dim : int
        The rotary dimension ``d`` (even). Optional with a ``spec`` that fixes it.
    base : float
        ``b > 0`` (HF's ``rope_theta``); default 10000.
    scaling : pemath.scaling.RopeScaling, optional
    seq_len : int, optional
        The sequence length, for the variants driven by it (DynamicNTK, LongRoPE).
    spec : pemath.rope.Spec, optional
        Instead of ``base`` and ``scaling`` (giving both raises ``TypeError``).
    rotary_dim : int, optional
        Another name for ``dim`` (both given must agree).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(dim // 2,)``, read-only for the unscaled case.

    Examples
    --------
    >>> from pemath import rope
    >>> rope.inv_freq(8)
    array([1.   , 0.1  , 0.01 , 0.001])
    >>> rope.inv_freq(spec=rope.Spec("half", base=100.0, rotary_dim=4))
    array([1. , 0.1])
    """
    freq, _ = frequencies_of("rope.inv_freq", spec, dim, seq_len, rotary_dim=rotary_dim, multi_axis_ok=True,
                             base=base, scaling=scaling)
    return freq


def apply(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    inverse: bool = False,
    out: Any = None,
    spec: Spec | None = None,
) -> Any:
    r"""Rotate ``x`` by RoPE at ``positions``.

    For each rotated pair :math:`(x_a, x_b)` with frequency :math:`\theta_i` and
    position :math:`m`:

    .. math::

        \begin{pmatrix} x_a' \\ x_b' \end{pmatrix} = a
        \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
        \begin{pmatrix} x_a \\ x_b \end{pmatrix}

    where ``a`` is the scaling's attention factor, and the pairs are
    ``(2i, 2i+1)`` for ``layout="interleaved"`` and ``(i, i + r/2)`` for ``"half"``.

    Parameters
    ----------
    x : array
        Any real floating array; the last axis is the feature axis.
    positions : array or int/float or list
        Broadcasts against ``x.shape[:-1]`` without enlarging it: ``(seq,)`` for
        ``x`` of shape ``(batch, heads, seq, dim)``, ``(batch, seq, 1)`` for
        ``(batch, seq, heads, dim)``. Integers or floats (fractional positions are
        exact, never truncated).
    layout : {"interleaved", "half"}
        Required (here or in ``spec``): there is no safe default.
    base : float
        Default 10000.
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features, with frequencies computed over
        ``rotary_dim``; the rest pass through bit-identical.
    scaling : pemath.scaling.RopeScaling, optional
    seq_len : int, optional
        For the sequence-length-driven scalings (dynamic NTK, LongRoPE). Default: the
        length transformers' forward computes, ``max(positions) + 1`` (its dynamic NTK
        also keeps the longest length seen; pemath is stateless). An engine that fixes the
        regime for a whole run (vLLM's ``max_model_len``, llama.cpp's context size)
        passes that length here.
    inverse : bool
        Rotate by :math:`-m\theta_i`, times the same attention factor: the transpose of
        the rotation, i.e. the backward pass. It undoes ``apply`` exactly when the
        attention factor is 1 (otherwise it leaves the factor squared).
    out : array, optional
        Where to write the result: same namespace, device, shape and dtype as ``x``
        (and writable). It may be ``x`` itself, for an in-place rotation; any other
        overlap with ``x`` is also safe (``x`` is read before ``out`` is written).
    spec : pemath.rope.Spec, optional
        The whole configuration instead of ``layout``, ``base``, ``rotary_dim`` and
        ``scaling`` (giving both raises ``TypeError``). A spec with ``mrope_section``
        takes positions with a leading component axis (HF's ``position_ids`` of shape
        ``(3, batch, seq)``, as ``position_ids[:, :, None, :]`` for ``x`` of shape
        ``(batch, heads, seq, dim)``); one with ``out_layout`` returns the output in
        that layout (and, with ``inverse=True``, takes its input in it).

    Returns
    -------
    array
        Same namespace, device, shape and dtype as ``x`` (``out`` when given). Phases,
        cos, sin and the products are computed in float64 and rounded once. On contiguous
        NumPy float32/64 input, with numba installed (``pemath[fast]``), a compiled kernel
        makes one pass over memory, bit-identical to the portable kernel
        (``pemath.rope._fast_numba``); other NumPy float16/32/64 input runs on cache-sized
        blocks (``pemath.rope._fast_numpy``). Both use a few threads (``PEMATH_NUM_THREADS``
        sets the count, results do not depend on it; ``PEMATH_KERNEL=numpy`` forces the
        second; the compiled kernel keeps the cos/sin tables of the last few distinct
        positions, so the layers of one forward pass compute them once, with the same bits);
        on CuPy float32/float64 input one fused CUDA kernel computes
        each phase in float64 (``pemath.rope._fast_cupy``). JAX arrays without
        ``jax_enable_x64`` are rotated on the host in float64 NumPy and put back on
        their device, rounded once; inside ``jax.jit`` (a tracer, no host values) the
        rotation stays in the graph with float32 phases and a
        :class:`~pemath.PrecisionWarning` (enable x64 there). MLX arrays are refused
        with a ``TypeError`` saying how to convert them.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> q = np.array([1.0, 0.0, 1.0, 0.0])
    >>> np.round(rope.apply(q, 1, layout="interleaved", base=100.0), 6)
    array([0.540302, 0.841471, 0.995004, 0.099833])
    """
    xp = _core.check_x(x)
    if isinstance(spec, NoRope):
        return _identity(x, positions, spec, layout, base, rotary_dim, scaling, seq_len, inverse, out, xp)
    if spec is None and rotary_dim is not None:  # the range message names x's feature size
        check_rotary_dim(rotary_dim, int(x.shape[-1]), dim_name="x.shape[-1]")
    spec = resolve(spec, "rope.apply", layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
    seq_len = hf_seq_len(spec.scaling, positions, seq_len)
    inverse = check_bool("inverse", inverse)
    if out is not None:
        _check_out(out, x, xp)
    r = spec.rotary_dim_for(int(x.shape[-1]))
    if spec.rotary_offset:  # the rotated slice inside the head: rotate it, pass the rest through
        return _apply_offset(x, positions, spec, r, seq_len, inverse, out, xp)
    device = _compat.device_of(x)
    check_not_traced(positions)
    if _compat.host_route(xp, device, x, positions):  # JAX without x64: float64 on the host, rounded once
        if out is not None:
            raise TypeError("out is not supported for JAX arrays (they are immutable); use the returned array")
        host_pos = _compat.to_numpy(positions) if _compat.is_array(positions) else positions
        y = apply(np.asarray(x), host_pos, spec=spec, seq_len=seq_len, inverse=inverse)
        return _compat.from_host(y, device)
    if spec.out_layout is not None or spec.is_multi_axis:
        return _apply_structured(x, positions, spec, r, seq_len, inverse, out, xp)
    freq, factor = spec.frequencies(r, seq_len)
    if inverse:  # the one place for it, whatever the kernel: p * (-f) = -(p * f) exactly
        freq = -freq
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt, target_shape=tuple(x.shape[:-1]))
    return _kernel(x, xp, wdt, out)(x, pos, freq, factor, spec.layout, r, out)


def _apply_offset(x: Any, positions: Any, spec: Spec, r: int, seq_len: Any, inverse: bool, out: Any, xp: Any) -> Any:
    """``rope.apply`` with ``spec.rotary_offset``: features ``[o, o + r)`` rotated by the spec without offset."""
    o = spec.rotary_offset
    inner = spec.replace(rotary_offset=0, head_dim=None, rotary_dim=r)
    mid = apply(x[..., o:o + r], positions, spec=inner, seq_len=seq_len, inverse=inverse)
    y = xp.concat([x[..., :o], mid, x[..., o + r:]], axis=-1)
    if out is None:
        return y
    out[...] = y
    return out


def _identity(x: Any, positions: Any, spec: NoRope, layout: Any, base: Any, rotary_dim: Any, scaling: Any,
              seq_len: Any, inverse: Any, out: Any, xp: Any) -> Any:
    """``rope.apply`` of a layer without RoPE: ``x`` unchanged, the arguments checked all the same."""
    given = {"layout": layout, "base": base, "rotary_dim": rotary_dim, "scaling": scaling}
    both = sorted(k for k, v in given.items() if v is not None)
    if both:
        raise TypeError(f"rope.apply: pass spec= or the keywords it replaces, not both; got spec={spec!r} and "
                        + ", ".join(f"{k}={given[k]!r}" for k in both))
    check_bool("inverse", inverse)
    spec.check_x(int(x.shape[-1]))
    check_not_traced(positions)
    check_seq_len(seq_len)
    device = _compat.device_of(x)
    if not _compat.host_route(xp, device, x, positions):
        as_positions(positions, xp, device, _compat.working_dtype(xp, device), target_shape=tuple(x.shape[:-1]))
    if out is not None:
        _check_out(out, x, xp)
        out[...] = x
        return out
    return xp.asarray(x, copy=True)


def _kernel(x: Any, xp: Any, wdt: Any, out: Any = None) -> Any:
    """The rotation kernel for ``x``: one contract ``(x, pos, freq, factor, layout, r, out)`` for all four.

    A fused CUDA kernel for CuPy float32/float64; a compiled one-pass kernel for contiguous NumPy
    float32/float64 when numba is installed (``pemath[fast]``); cache-blocked complex multiplies
    for other NumPy float16/32/64; and the portable array-API kernel for everything else. All
    compute phases, cos, sin and products in float64 (where the backend has it) and round once,
    so they agree bit for bit where their libm does (tests/test_rope_fast.py, tests/test_rope_numba.py).
    """
    if _fast_cupy.supports(x) and wdt == xp.float64:
        return _fast_cupy.rotate_into
    if _fast_numba.supports(x, out):
        return _fast_numba.rotate_into
    if _fast_numpy.supports(x):
        return _fast_numpy.rotate_into
    return functools.partial(_core.rotate_into, xp=xp, wdt=wdt)


def _apply_structured(x: Any, positions: Any, spec: Spec, r: int, seq_len: Any, inverse: bool, out: Any,
                      xp: Any) -> Any:
    """M-RoPE and a change of layout on output: the plain rotation composed with them."""
    if spec.axial_dims is not None:
        y = apply_axial(x, positions, spec=spec, inverse=inverse)  # Spec refuses axial with out_layout
        if out is None:
            return y
        out[...] = y
        return out
    plain = spec.replace(out_layout=None, mrope_section=None, mrope_interleaved=False)
    if inverse and spec.out_layout is not None:
        x = convert_layout(x, src=spec.out_layout, dst=spec.layout, rotary_dim=r)
    if spec.is_multi_axis:
        y = rotate_mrope(x, positions, plain, spec.mrope_section, spec.mrope_interleaved, r, seq_len, inverse)
    else:
        y = apply(x, positions, spec=plain, seq_len=seq_len, inverse=inverse)
    if not inverse and spec.out_layout is not None:
        y = convert_layout(y, src=spec.layout, dst=spec.out_layout, rotary_dim=r)
    if out is None:
        return y
    out[...] = y
    return out


def _check_out(out: Any, x: Any, xp: Any) -> None:
    if not _compat.is_array(out) or _compat.namespace(out) is not xp:
        raise TypeError(f"out must be an array of the same library as x ({_compat.backend_name(xp)}), got {show(out)}")
    if out.dtype != x.dtype:
        raise TypeError(f"out must have x's dtype {x.dtype}, got out.dtype = {out.dtype}")
    if tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"out must have x's shape {tuple(x.shape)}, got out.shape = {tuple(out.shape)}")
    if _compat.device_of(out) != _compat.device_of(x):
        raise ValueError(f"out must be on x's device {_compat.device_of(x)!r}, got {_compat.device_of(out)!r}")
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError("out must be writable, got a read-only NumPy array")


def cos_sin(
    positions: Any,
    dim: int | None = None,
    *,
    layout: str | None = None,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    dtype: Any = None,
    spec: Spec | None = None,
    rotary_dim: int | None = None,
) -> tuple[Any, Any]:
    r"""The cos and sin tables of RoPE, laid out per feature.

    Shape ``positions.shape + (dim,)``: for ``"half"`` the per-pair values repeated as
    ``[c_0 .. c_{d/2-1}, c_0 .. c_{d/2-1}]`` (HF's ``cat((freqs, freqs))``), for
    ``"interleaved"`` as ``[c_0, c_0, c_1, c_1, ...]``. Both multiplied by the
    scaling's attention factor, as HF does.

    Parameters
    ----------
    positions : array or int/float or list
        Arrays keep their namespace and device; Python values give NumPy.
    dim : int
        The rotary dimension (even). Optional with a ``spec`` that fixes it.
    layout : {"interleaved", "half"}
    base, scaling, seq_len
        As in :func:`apply`.
    spec : pemath.rope.Spec, optional
        Instead of ``layout``, ``base`` and ``scaling`` (giving both raises
        ``TypeError``). Single-axis specs only.
    rotary_dim : int, optional
        Another name for ``dim`` (both given must agree).
    dtype : optional
        A real floating dtype of the namespace: the float64 tables are cast to it once,
        at the end, so each value is within the dtype's unit roundoff of the truth at
        every position (float16 at position :math:`10^6` included). Where the backend
        has no float64 and computes the phases in float32, a
        :class:`~pemath.TablePrecisionWarning` says when their rounding error,
        :math:`2^{-24} \max|m\theta_i|`, exceeds that unit roundoff
        (``docs/tolerance.rst``, "Precision warnings").

    Examples
    --------
    >>> from pemath import rope
    >>> c, s = rope.cos_sin([0, 1], 4, layout="half", base=100.0)
    >>> c.shape
    (2, 4)
    """
    if rotary_dim is not None:  # another name for dim (so a spec's or from_hf's fields spread)
        if spec is not None:
            resolve(spec, "rope.cos_sin", rotary_dim=rotary_dim)  # raises: both
        if dim is not None and dim != rotary_dim:
            raise ValueError(f"rope.cos_sin: dim and rotary_dim must agree, got {dim!r} and {rotary_dim!r}")
        dim = rotary_dim
    spec = resolve(spec, "rope.cos_sin", layout=layout, base=base, scaling=scaling)
    if spec.is_multi_axis or spec.out_layout is not None:
        raise ValueError(f"rope.cos_sin takes a single-axis spec in one layout; got {spec!r} (for a change of "
                         "layout, build the tables in spec.layout, or use rope.apply)")
    if dim is None and spec.rotary_dim is None:
        raise TypeError("rope.cos_sin needs dim (the rotary dimension), or a spec that fixes it")
    seq_len = hf_seq_len(spec.scaling, positions, seq_len)
    layout = spec.layout
    freq, factor = spec.frequencies(dim, seq_len)
    if _compat.is_array(positions):
        xp = _compat.namespace(positions)
        device = _compat.device_of(positions)
    else:
        xp = _compat.namespace(np.empty(0))
        device = "cpu"
    _precision.check_table_dtype(xp, dtype)
    if _compat.host_route(xp, device, positions):  # JAX without x64: float64 tables on the host, rounded once
        c, s = cos_sin(_compat.to_numpy(positions), dim, spec=spec, seq_len=seq_len)
        to = np.float32 if dtype is None else np.dtype(dtype)
        return _compat.from_host(c.astype(to), device), _compat.from_host(s.astype(to), device)
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt)
    _precision.check_table_phases(pos, freq, xp, wdt, dtype, "rope.cos_sin's tables")
    theta = _core.angle_table(pos, freq, xp, device, wdt)
    cos, sin = xp.cos(theta), xp.sin(theta)
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    cos, sin = _core.expand(cos, layout, xp), _core.expand(sin, layout, xp)
    if dtype is not None:
        cos, sin = xp.astype(cos, dtype), xp.astype(sin, dtype)
    return cos, sin


def apply_mrope(
    x: Any,
    positions: Any,
    *,
    mrope_section: Any = None,
    layout: str | None = None,
    base: float | None = None,
    interleaved: bool | None = None,
    rotary_dim: int | None = None,
    scaling: Any = None,
    seq_len: int | None = None,
    inverse: bool = False,
    spec: Any = None,
) -> Any:
    r"""Multimodal RoPE (M-RoPE, Qwen2-VL): frequency index ``i`` is driven by one position component.

    .. math::

        \phi_i = p_{c(i)}\,\theta_i, \qquad \theta_i = b^{-2i/d_r}, \quad i = 0, \dots, d_r/2 - 1

    where :math:`p = (p_t, p_h, p_w)` and :math:`c(i)` is given by
    :func:`mrope_components` (contiguous sections, or interleaved). The frequencies are
    those of plain RoPE over the whole rotary dimension, so with
    :math:`p_t = p_h = p_w = m` this is exactly :func:`pemath.rope.apply` at ``m``
    (text tokens in Qwen2-VL).

    Parameters
    ----------
    x : array
        Real floating; the last axis is the feature axis.
    positions : array or list
        Shape ``(k, ...)`` with ``k = len(mrope_section)`` (3: temporal, height, width);
        each ``positions[c]`` broadcasts against ``x.shape[:-1]``. HF's ``position_ids``
        of shape ``(3, batch, seq)`` with ``x`` of shape ``(batch, heads, seq, dim)``
        go in as ``position_ids[:, :, None, :]``.
    mrope_section : sequence of int
        Required (here or in ``spec``). Frequency-index counts per component, summing to ``rotary_dim / 2``
        (Qwen2-VL: ``[16, 24, 24]`` for head_dim 128; Qwen3-VL: ``[24, 20, 20]``).
    layout : {"half", "interleaved"}
        ``"half"`` (HF's ``rotate_half``: Qwen2-VL, Qwen2.5-VL, Qwen3-VL) or
        ``"interleaved"`` (GLM-4V's ``rotate_half_llm``). Default ``"half"``.
    base : float
        Default 10000.
    interleaved : bool
        ``False``: contiguous sections (Qwen2-VL); ``True``: Qwen3-VL's interleaved
        THW pattern. Unrelated to ``layout``.
    rotary_dim : int, optional
        Rotate only the first ``rotary_dim`` features (GLM-4V's partial rotary); the
        frequencies run over ``rotary_dim``.
    scaling : pemath.scaling.RopeScaling, optional
        Applied to the frequencies as in :func:`pemath.rope.apply`.
    seq_len : int, optional
        For the sequence-length-driven scalings.
    inverse : bool
        Rotate by the negated angles.
    spec : pemath.rope.Spec, optional
        A multi-axis spec (``mrope_section`` set) instead of ``mrope_section``,
        ``layout``, ``base``, ``interleaved``, ``rotary_dim`` and ``scaling``; giving
        both raises ``TypeError``. ``rope.apply(x, positions, spec=spec)`` is the same call.

    Returns
    -------
    array
        Same namespace, device, shape and dtype as ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> x = np.arange(8.0)
    >>> y = rope.apply_mrope(x, [5, 5, 5], mrope_section=[2, 1, 1])
    >>> bool(np.array_equal(y, rope.apply(x, 5, layout="half")))
    True
    """
    _core.check_x(x)
    if spec is None:
        if mrope_section is None:
            raise TypeError("mrope_section is required (or a spec= with one), e.g. [16, 24, 24] for Qwen2-VL")
        spec = resolve(None, "rope.apply_mrope", layout="half" if layout is None else layout, base=base,
                       rotary_dim=rotary_dim, scaling=scaling, mrope_section=mrope_section,
                       mrope_interleaved=interleaved)
    else:
        spec = resolve(spec, "rope.apply_mrope", mrope_section=mrope_section, layout=layout, base=base,
                       interleaved=interleaved, rotary_dim=rotary_dim, scaling=scaling)
        if not spec.is_multi_axis:
            raise ValueError(f"rope.apply_mrope needs a spec with mrope_section, got {spec!r}")
    return apply(x, positions, spec=spec, seq_len=seq_len, inverse=inverse)
