"""The dense block-rotation matrix of RoPE: a slow, obviously-correct reference."""

from __future__ import annotations

import math
import numpy as np

from .. import _compat
from .._validate import as_positions, check_real, check_rotary_dim, check_size
from ..scaling import RopeScaling
from .spec import Spec, resolve
from .layout import convert_layout

__all__ = ["matrix"]


def matrix(
    position: float,
    dim: int | None = None,
    *,
    layout: str | None = None,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
    spec: Spec | None = None,
) -> np.ndarray:
    r"""The ``dim × dim`` matrix :math:`R(m)` with ``apply(x, m) == R(m) @ x``.

    Block-diagonal up to the layout's permutation: for each pair :math:`(a, b)` (the
    layout's pair indices) and frequency :math:`\theta_i`,

    .. math::

        R_{aa} = R_{bb} = \cos m\theta_i, \quad R_{ab} = -\sin m\theta_i, \quad
        R_{ba} = \sin m\theta_i

    times the scaling's attention factor; identity on the features beyond
    ``rotary_dim``. Built entry by entry with Python floats, sharing nothing with
    :func:`apply` but the frequencies: it is the reference the fast paths are tested
    against. O(dim²) memory: for checking, not for use.

    ``spec=`` (a :class:`pemath.rope.Spec`) replaces ``layout``, ``base``, ``scaling``
    and ``rotary_dim`` (giving both raises ``TypeError``); ``dim`` then defaults to the
    spec's ``head_dim``, and a spec with ``out_layout`` permutes the rows accordingly.

    Examples
    --------
    >>> from pemath import rope
    >>> R = rope.matrix(1, 2, layout="interleaved")
    >>> bool(abs(R[1, 0] - 0.8414709848078965) < 1e-15)
    True
    """
    check_real("position", position)  # a real scalar: no arrays, bools or strings
    # then the positions checks: integers beyond 2**53 refused (float64 would round them),
    # narrow floats beyond their exact-integer range warned about
    position = float(as_positions(position, _compat.namespace(np.empty(0)), "cpu", np.float64, name="position"))
    if spec is None and rotary_dim is not None and dim is not None:
        check_rotary_dim(rotary_dim, check_size("dim", dim, minimum=1), dim_name="dim")
    spec = resolve(spec, "rope.matrix", layout=layout, base=base, scaling=scaling, rotary_dim=rotary_dim)
    if spec.is_multi_axis:
        raise ValueError(f"rope.matrix takes one position, so a single-axis spec; got the M-RoPE {spec!r}")
    if dim is None:
        if spec.head_dim is None:
            raise TypeError("rope.matrix needs dim, or a spec with head_dim")
        dim = spec.head_dim
    dim = check_size("dim", dim, minimum=1)
    r = spec.rotary_dim_for(dim, "dim")
    layout = spec.layout
    freq, factor = spec.frequencies(r, seq_len)
    R = np.eye(dim, dtype=np.float64)
    h, o = r // 2, spec.rotary_offset
    for i, theta in enumerate(freq.tolist()):
        a, b = (o + i, o + i + h) if layout == "half" else (o + 2 * i, o + 2 * i + 1)
        c, s = math.cos(position * theta), math.sin(position * theta)
        R[a, a] = R[b, b] = factor * c
        R[a, b] = -factor * s
        R[b, a] = factor * s
    if spec.out_layout is not None:  # the output's rows permuted into out_layout
        R = convert_layout(R.T, src=layout, dst=spec.out_layout, rotary_dim=r).T
    return R
