"""The index symbols and layouts every derivation over "every even d" shares: one home, imported by
:mod:`~pemath.symbolic.rope` and :mod:`~pemath.symbolic.pairs` alike (so neither imports the other to get them)."""

from __future__ import annotations

import sympy as sp

__all__ = ["H", "I", "LAYOUTS"]

#: RoPE's two pairings of the rotary features: (2i, 2i + 1) and (i, i + d/2).
LAYOUTS = ("interleaved", "half")

H = sp.Symbol("h", integer=True, positive=True)  # d = 2h
I = sp.Symbol("i", integer=True, nonnegative=True)  # a pair index
