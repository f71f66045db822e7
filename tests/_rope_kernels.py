"""What the kernel tests share: the portable kernel's result, and a bitwise comparison."""

from __future__ import annotations

import numpy as np

from pemath import rope
from pemath.rope import _fast_numba, _fast_numpy


def portable(monkeypatch, x, pos, **kw):
    """``rope.apply`` with both CPU fast paths switched off: the portable array-API kernel."""
    with monkeypatch.context() as m:
        m.setattr(_fast_numpy, "supports", lambda a: False)
        m.setattr(_fast_numba, "supports", lambda a, out=None: False)
        return rope.apply(x, pos, **kw)


def bitwise(a, b):
    """Equal bit for bit (signed zeros and NaN payloads included)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
