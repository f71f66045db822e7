"""Position axes of multi-axis RoPE: the choices of axial RoPE and M-RoPE's component pattern.

The values a :class:`pemath.rope.Spec` validates its multi-axis fields against, kept apart from
the rotation code (:mod:`pemath.rope.axial`) so that the Spec and the code that uses it both
import them without importing each other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_bool, check_size, show

__all__ = ["GROUPINGS", "AXIAL_FREQUENCIES", "int_list", "mrope_components"]

#: How apply_axial maps axis groups onto the features.
GROUPINGS = ("features", "pairs")
#: Where apply_axial takes each axis' frequencies from.
AXIAL_FREQUENCIES = ("per_axis", "strided")


def int_list(name: str, values: Any) -> list[int]:
    if isinstance(values, (str, bytes)) or values is None or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers, got {show(values)}")
    out = [check_size(f"{name}[{k}]", v, minimum=1) for k, v in enumerate(values)]
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def mrope_components(mrope_section: Any, *, interleaved: bool = False) -> np.ndarray:
    r"""Which position component drives each frequency index of M-RoPE.

    With sections :math:`(s_0, \dots, s_{k-1})` summing to :math:`r/2`:

    * ``interleaved=False`` (Qwen2-VL, Qwen2.5-VL, GLM-4V): contiguous blocks,
      indices :math:`[0, s_0)` use component 0 (temporal), the next :math:`s_1` component
      1 (height), and so on;
    * ``interleaved=True`` (Qwen3-VL, "interleaved MRoPE"): index ``i`` uses component
      ``c = i mod k`` if ``c >= 1`` and :math:`i < k\,s_c`, and component 0 otherwise
      (``THWTHW...TT``). The sections must be such that each component gets exactly
      :math:`s_c` indices (e.g. ``[24, 20, 20]``); otherwise this raises, where HF would
      silently give fewer.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(sum(mrope_section),)``.

    Examples
    --------
    >>> from pemath.rope import mrope_components
    >>> mrope_components([2, 1, 1]).tolist()
    [0, 0, 1, 2]
    >>> mrope_components([2, 1, 1], interleaved=True).tolist()
    [0, 1, 2, 0]
    """
    sections = int_list("mrope_section", mrope_section)
    interleaved = check_bool("interleaved", interleaved)
    k = len(sections)
    half = sum(sections)
    if not interleaved:
        return np.repeat(np.arange(k, dtype=np.int64), sections)
    i = np.arange(half)
    comp = np.zeros(half, dtype=np.int64)
    for c in range(1, k):
        comp[(i % k == c) & (i < k * sections[c])] = c
    counts = np.bincount(comp, minlength=k).tolist()
    if counts != sections:
        raise ValueError(
            f"mrope_section={sections} cannot be interleaved over {half} frequencies: the pattern "
            f"index i -> component i mod {k} (for i < {k} * section) gives counts {counts}; each "
            f"section c >= 1 must satisfy {k} * section[c] <= {half} + c"
        )
    return comp
