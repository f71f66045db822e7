"""Small calculus lemmas several derivations use, each recorded in the derivation that uses it."""

from __future__ import annotations

import sympy as sp

from ._decide import Derivation, unevaluated

__all__ = ["exp_above_tangent"]

_y = sp.Symbol("y", real=True)


def exp_above_tangent(d: Derivation) -> None:
    """Record e^y >= 1 + y for every real y (strictly for y != 0): the decided pieces and the cited theorem."""
    conv = sp.exp(_y) - 1 - _y
    d.zero("T(y) = e^y - 1 - y vanishes at y = 0", unevaluated(lambda: conv.subs(_y, 0)))
    d.zero("so does its derivative e^y - 1", unevaluated(lambda: sp.diff(conv, _y).subs(_y, 0)))
    d.true("its second derivative e^y is positive", sp.Gt(sp.Derivative(conv, _y, 2), 0, evaluate=False))
    d.cite("Taylor's theorem with the Lagrange remainder: a function vanishing with its derivative at 0 and with a "
           "positive second derivative is >= 0, and > 0 away from 0. So e^y = 1 + y + T with T >= 0 (T > 0 for "
           "y != 0), and log(1 + z) < z for z > 0",
                             source="Apostol, Calculus vol. 1, section 7.7 (Taylor's formula with remainder)")

