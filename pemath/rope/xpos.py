r"""xPos: RoPE with an exponential decay per frequency (Sun et al. 2022).

"A Length-Extrapolatable Transformer" (arXiv:2212.10554) multiplies each RoPE pair by
a per-frequency scale raised to the position, upward for queries and downward for
keys, so that the attention score decays with the distance ``n - m`` and depends on
nothing else:

.. math::

    q_n \mapsto \zeta^{(n-c)/B} \odot R(n\theta)\, q, \qquad
    k_m \mapsto \zeta^{-(m-c)/B} \odot R(m\theta)\, k, \qquad
    \zeta_i = \frac{2i/d + \gamma}{1 + \gamma}

with :math:`\gamma = 0.4` and the scale base :math:`B = 512` (torchscale's ``XPOS``,
rotary-embedding-torch's ``use_xpos``). The centre :math:`c` cancels in
:math:`q_n \cdot k_m`; it only keeps the individual scales near 1 (see ``center``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from .. import _compat
from .._validate import as_positions, check_bool, check_choice, check_int, check_real, check_rotary_dim, check_size, show
from . import _core
from .spec import resolve

__all__ = ["apply", "zeta", "center_of", "ROLES", "CENTERS"]

ROLES = ("query", "key")

#: The named centring conventions of the xPos scale exponent (the rotation is never centred).
CENTERS = ("torchscale", "rotary-embedding-torch")


def zeta(dim: int, *, gamma: float = 0.4) -> np.ndarray:
    r"""The per-pair xPos bases :math:`\zeta_i = (2i/d + \gamma)/(1 + \gamma)`, ``i < d/2``.

    Each lies in :math:`[\gamma/(1+\gamma), 1)`: the lowest-index (highest-frequency)
    pairs decay fastest. torchscale writes it as
    ``(arange(0, d, 2) + 0.4 d) / (1.4 d)``.

    Parameters
    ----------
    dim : int
        The rotary dimension ``d`` (even).
    gamma : float
        :math:`\gamma > 0` (0.4 in the paper and both reference projects).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(dim // 2,)``.

    Examples
    --------
    >>> from pemath.rope import xpos
    >>> xpos.zeta(4, gamma=0.4).round(6)
    array([0.285714, 0.642857])
    """
    dim = check_size("dim", dim, minimum=2)
    if dim % 2:
        raise ValueError(f"dim must be even for xPos (features are rotated in pairs), got {dim}")
    gamma = check_real("gamma", gamma, positive=True)
    i = np.arange(dim // 2, dtype=np.float64)
    return (2.0 * i / dim + gamma) / (1.0 + gamma)


def center_of(seq_len: int, convention: str) -> int:
    r"""The centre :math:`c` of the scale exponent ``(n - c) / B`` under a named convention.

    ``"torchscale"``
        :math:`c = \lceil L/2 \rceil`. torchscale's ``XPOS.forward`` builds the scale
        exponents ``arange(-(L + offset) // 2, ...)`` (Python floor division of a
        negative number), i.e. token ``n`` of a sequence of total length ``L``
        (cached keys included) is scaled by ``zeta ** ((n - ceil(L/2)) / B)`` while it
        is rotated by ``n``.
    ``"rotary-embedding-torch"``
        :math:`c = \lfloor L/2 \rfloor`: lucidrains' ``get_scale`` uses
        ``(t - len(t) // 2) / scale_base``. (Its ``rotate_queries_with_cached_keys``
        centres queries on ``q_len // 2`` and keys on ``k_len // 2``; the score is then
        relative only when both lengths agree.)

    The two differ for odd ``L``. Either way the centre cancels in the q·k score as long
    as queries and keys use the same one.

    Examples
    --------
    >>> from pemath.rope import xpos
    >>> xpos.center_of(5, "torchscale"), xpos.center_of(5, "rotary-embedding-torch")
    (3, 2)
    """
    seq_len = check_int("seq_len", seq_len, minimum=1)
    convention = check_choice("center", convention, CENTERS)
    if convention == "torchscale":
        return (seq_len + 1) // 2
    return seq_len // 2


def _check_center(center: Any, seq_len: Any) -> float:
    if isinstance(center, str):
        if seq_len is None:
            raise TypeError(
                f"center={center!r} is defined relative to the sequence length: pass seq_len "
                "(the total length, cached keys included)"
            )
        return float(center_of(seq_len, center))
    if seq_len is not None:
        raise ValueError(
            f"seq_len is only used with a named center ({', '.join(map(repr, CENTERS))}); "
            f"got seq_len={seq_len!r} with center={center!r}"
        )
    if isinstance(center, (bool, np.bool_)) or not isinstance(center, numbers.Real):
        raise TypeError(
            f"center must be a real number or one of {', '.join(map(repr, CENTERS))}, got {show(center)}"
        )
    return check_real("center", center)


def apply(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    role: str | None = None,
    base: float | None = None,
    gamma: float = 0.4,
    scale_base: float = 512.0,
    center: float | str = 0.0,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
    inverse: bool = False,
    spec: Any = None,
) -> Any:
    r"""Rotate ``x`` by RoPE and scale each pair by xPos's decay.

    For pair :math:`i` of a token at position :math:`n`, with
    :math:`s = +1` for ``role="query"`` and :math:`s = -1` for ``role="key"``:

    .. math::

        \begin{pmatrix} x_a' \\ x_b' \end{pmatrix} = \zeta_i^{\,s (n - c)/B}
        \begin{pmatrix} \cos n\theta_i & -\sin n\theta_i \\ \sin n\theta_i & \cos n\theta_i \end{pmatrix}
        \begin{pmatrix} x_a \\ x_b \end{pmatrix},
        \qquad \zeta_i = \frac{2i/d_r + \gamma}{1+\gamma},\ \theta_i = b^{-2i/d_r}

    so that :math:`q_n' \cdot k_m' = \sum_i \zeta_i^{(n-m)/B}\,(\dots)` depends on
    :math:`n - m` only (and not on :math:`c`).

    Parameters
    ----------
    x : array
        Real floating; the last axis is the feature axis.
    positions : array or int/float or list
        Broadcasts against ``x.shape[:-1]`` (as in :func:`pemath.rope.apply`).
    layout : {"interleaved", "half"}
        Required. torchscale and rotary-embedding-torch both rotate ``"interleaved"``
        pairs (``rotate_every_two``); the scale follows the pair in either layout.
    role : {"query", "key"}
        Required: queries are scaled by :math:`\zeta^{+(n-c)/B}` (torchscale's
        ``downscale=False``), keys by :math:`\zeta^{-(n-c)/B}` (``downscale=True``).
    base : float
        RoPE's base :math:`b` (default 10000).
    gamma : float
        :math:`\gamma > 0`.
    scale_base : float
        :math:`B > 0`.
    center : float or {"torchscale", "rotary-embedding-torch"}
        :math:`c`, subtracted from the position in the scale exponent only (never in
        the rotation). ``0.0`` (default) is the paper's formula without centring; a
        name selects a project's convention and needs ``seq_len`` (see
        :func:`center_of`).
    seq_len : int, optional
        The total sequence length, for a named ``center``.
    rotary_dim : int, optional
        Rotate and scale only the first ``rotary_dim`` features (``d = r`` in the
        formulas); the rest pass through bit-identical.
    inverse : bool
        Undo :func:`apply` for the same role: rotate by :math:`-n\theta_i` and divide by
        the scale (and by a scaling's attention factor).
    spec : pemath.rope.Spec, optional
        Instead of ``layout``, ``base`` and ``rotary_dim`` (both given: ``TypeError``);
        its scaling (frequencies and attention factor) applies too, its length-driven
        regime chosen by ``seq_len``.

    Returns
    -------
    array
        Same namespace, device, shape and dtype as ``x``; phases and scales computed
        in float64 and rounded once.

    Raises
    ------
    ValueError
        If a scale :math:`\zeta_i^{\pm(n-c)/B}` overflows or underflows float64, or the
        scaled result overflows ``x.dtype`` (far from the centre the decay is
        exponential: centre the positions).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.rope import xpos
    >>> q = np.array([1.0, 0.0])
    >>> np.round(xpos.apply(q, 512, layout="interleaved", role="query"), 6)  # (2/7) (cos 512, sin 512)
    array([-0.28481,  0.02272])
    >>> k = xpos.apply(q, 512, layout="interleaved", role="key")
    >>> score = xpos.apply(q, 1024, layout="interleaved", role="query") @ k
    >>> bool(np.isclose(score, 2 / 7 * np.cos(512)))  # distance 512: one factor zeta_0
    True
    """
    xp = _core.check_x(x)
    if spec is None and rotary_dim is not None:
        check_rotary_dim(rotary_dim, int(x.shape[-1]), dim_name="x.shape[-1]")
    spec = resolve(spec, "xpos.apply", layout=layout, base=base, rotary_dim=rotary_dim)
    if spec.is_multi_axis or spec.out_layout is not None:
        raise ValueError(f"xpos.apply takes a single-axis, one-layout spec, got {spec!r}")
    layout = spec.layout
    if role is None:
        raise TypeError(
            "role is required: 'query' is scaled by zeta**(+(n - c)/scale_base), "
            "'key' by zeta**(-(n - c)/scale_base)"
        )
    role = check_choice("role", role, ROLES)
    inverse = check_bool("inverse", inverse)
    scale_base = check_real("scale_base", scale_base, positive=True)
    c = _check_center(center, seq_len)
    r = spec.rotary_dim_for(int(x.shape[-1]))
    if spec.rotary_offset:  # the rotated slice inside the head: xPos on it, the rest passed through
        o = spec.rotary_offset
        inner = spec.replace(rotary_offset=0, head_dim=None, rotary_dim=r)
        mid = apply(x[..., o:o + r], positions, role=role, gamma=gamma, scale_base=scale_base, center=center,
                    seq_len=seq_len, inverse=inverse, spec=inner)
        return xp.concat([x[..., :o], mid, x[..., o + r:]], axis=-1)
    freq, factor = spec.frequencies(r, seq_len)
    z = zeta(r, gamma=gamma)

    device = _compat.device_of(x)
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt, target_shape=tuple(x.shape[:-1]))
    theta = _core.angle_table(pos, freq, xp, device, wdt)
    sign = 1.0 if role == "query" else -1.0
    if inverse:
        theta = -theta
        sign = -sign
    exponent = (pos - c) * (sign / scale_base)
    zt = xp.asarray(z.tolist(), dtype=wdt, device=device)
    with warnings.catch_warnings():  # overflow is detected and reported below, not warned about
        warnings.simplefilter("ignore", RuntimeWarning)
        scale = xp.pow(zt, exponent[..., None])
        _check_scale(scale, xp)
        if factor != 1.0:  # a scaling's attention factor (spec=), divided out again by inverse=True
            scale = scale * (1.0 / factor if inverse else factor)
        cos, sin = xp.cos(theta) * scale, xp.sin(theta) * scale
        out = _core.rotate(x, cos, sin, layout, r, xp, wdt)
    if not bool(xp.all(xp.isfinite(out))) and bool(xp.all(xp.isfinite(x))):
        raise ValueError(
            f"the xPos-scaled result overflows {x.dtype}: the scale zeta**(+-(n - c)/scale_base) grows "
            "exponentially away from the centre; pass center= near the positions or a wider dtype"
        )
    return out


def _check_scale(scale: Any, xp: Any) -> None:
    if not scale.shape or not math.prod(int(s) for s in scale.shape):
        return
    ok = xp.isfinite(scale) & (scale > 0)
    if not bool(xp.all(ok)):
        raise ValueError(
            "the xPos scale zeta**(+-(n - c)/scale_base), zeta_i = (2i/d + gamma)/(1 + gamma), overflows or "
            "underflows float64 at some of the positions: |n - c| / scale_base is too large for this gamma; pass "
            "center= near the positions (the centre cancels in the q·k score), or a larger scale_base or gamma"
        )
