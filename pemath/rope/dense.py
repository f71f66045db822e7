"""The dense block-rotation matrix of RoPE: a slow, obviously-correct reference."""

from __future__ import annotations

import math
import numpy as np

from .. import _compat
from .._validate import as_positions, check_real, check_rotary_dim, check_size
from ..scaling import RopeScaling
from . import _core

__all__ = ["matrix"]


def matrix(
    position: float,
    dim: int,
    *,
    layout: str | None = None,
    base: float = 10000.0,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
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
    layout = _core.check_layout(layout)
    dim = check_size("dim", dim, minimum=1)
    r = check_rotary_dim(rotary_dim, dim, dim_name="dim")
    freq, factor = _core.frequencies(r, base, scaling, seq_len)
    R = np.eye(dim, dtype=np.float64)
    h = r // 2
    for i, theta in enumerate(freq.tolist()):
        a, b = (i, i + h) if layout == "half" else (2 * i, 2 * i + 1)
        c, s = math.cos(position * theta), math.sin(position * theta)
        R[a, a] = R[b, b] = factor * c
        R[a, b] = -factor * s
        R[b, a] = factor * s
    return R
