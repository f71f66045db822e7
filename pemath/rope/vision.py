r"""Vision RoPE with explicit pixel frequencies (timm's ``in_pixels`` rotary embedding).

timm's default vision RoPE (``build_rotary_pos_embed(..., in_pixels=True)``, used by its
``RotaryEmbedding`` and EVA-style models) does not derive its frequencies from a base:
each of the two image axes gets the same :math:`n = d/4` bands

.. math::

    \omega_k = \pi\,\big(1 + k\,\tfrac{M/2 - 1}{n - 1}\big) \quad (\texttt{linear\_bands}),
    \qquad \omega_k = \pi\, 2^{k\,(\log_2 M - 1)/(n - 1)} \quad \text{(default)},

with :math:`M` = ``max_res``, on coordinates spread evenly over :math:`[-1, 1]` along
each axis. Pair :math:`k < n` turns by the row coordinate, pair :math:`n + k` by the
column coordinate, in interleaved pairs. In pemath that is a :class:`~pemath.rope.Spec`
with explicit ``inv_freq`` (the bands twice) and two blocked position components
(``mrope_section=[n, n]``): :func:`pixel_spec`. :func:`pixel_positions` gives the
coordinates of a feature map in timm's token order (row-major).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validate import check_bool, check_real, check_size, show
from .spec import Spec

__all__ = ["pixel_bands", "pixel_positions", "pixel_spec"]


def pixel_bands(num_bands: int, *, max_res: float = 224.0, linear: bool = False) -> np.ndarray:
    r"""timm's ``pixel_freq_bands``, in float64: :math:`\pi` times ``linspace(1, max_res/2, n)`` or
    ``2 ** linspace(0, log2(max_res) - 1, n)``.

    Examples
    --------
    >>> from pemath import rope
    >>> (rope.pixel_bands(3, max_res=8.0) / 3.141592653589793).tolist()
    [1.0, 2.0, 4.0]
    >>> (rope.pixel_bands(3, max_res=8.0, linear=True) / 3.141592653589793).tolist()
    [1.0, 2.5, 4.0]
    """
    n = check_size("num_bands", num_bands, minimum=1)
    m = check_real("max_res", max_res, minimum=2.0)
    linear = check_bool("linear", linear)
    if linear:
        k = np.linspace(1.0, m / 2.0, n)
    else:
        k = 2.0 ** np.linspace(0.0, math.log2(m) - 1.0, n)
    return k * math.pi


def pixel_positions(feat_shape: Any) -> np.ndarray:
    """Coordinates of an ``(H, W)`` feature map in ``[-1, 1]``: shape ``(2, H * W)``, row-major tokens.

    Component 0 is the row coordinate ``linspace(-1, 1, H)[i]``, component 1 the column
    coordinate ``linspace(-1, 1, W)[j]``, for token ``i * W + j`` (timm's ``ij`` grid).

    Examples
    --------
    >>> from pemath import rope
    >>> rope.pixel_positions((2, 3)).tolist()
    [[-1.0, -1.0, -1.0, 1.0, 1.0, 1.0], [-1.0, 0.0, 1.0, -1.0, 0.0, 1.0]]
    """
    if isinstance(feat_shape, (str, bytes)) or not hasattr(feat_shape, "__len__") or len(feat_shape) != 2:
        raise TypeError(f"feat_shape must be (H, W), two sizes, got {show(feat_shape)}")
    h, w = (check_size(f"feat_shape[{i}]", s, minimum=1) for i, s in enumerate(feat_shape))
    if h * w > 2**26:
        raise ValueError(f"feat_shape {h} x {w} is beyond pemath's limit of 2**26 tokens")
    rows = np.linspace(-1.0, 1.0, h) if h > 1 else np.array([-1.0])
    cols = np.linspace(-1.0, 1.0, w) if w > 1 else np.array([-1.0])
    gi, gj = np.meshgrid(rows, cols, indexing="ij")
    return np.stack([gi.reshape(-1), gj.reshape(-1)])


def pixel_spec(dim: int, *, max_res: float = 224.0, linear_bands: bool = False) -> Spec:
    """The :class:`~pemath.rope.Spec` of timm's ``in_pixels`` vision RoPE for head dim ``dim`` (a multiple of 4).

    Use with :func:`pixel_positions`: ``rope.apply(x, rope.pixel_positions((H, W)), spec=spec)``
    for ``x`` of shape ``(..., H * W, dim)``.

    Examples
    --------
    >>> from pemath import rope
    >>> s = rope.pixel_spec(8, max_res=8.0)
    >>> s.layout, s.mrope_section, [round(f / 3.141592653589793, 6) for f in s.inv_freq]
    ('interleaved', (2, 2), [1.0, 4.0, 1.0, 4.0])
    """
    d = check_size("dim", dim, minimum=4)
    if d % 4:
        raise ValueError(f"dim must be a multiple of 4 (two axes of interleaved pairs), got {d}")
    bands = pixel_bands(d // 4, max_res=max_res, linear=check_bool("linear_bands", linear_bands))
    return Spec("interleaved", head_dim=d, inv_freq=np.concatenate([bands, bands]),
                mrope_section=(d // 4, d // 4))
