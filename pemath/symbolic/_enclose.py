"""Interval enclosures of exact SymPy expressions (``mpmath.iv``): the kernel's interval certificate.

An expression is enclosed node by node: numbers exactly (a rational becomes an interval around p/q), ``pi``
and ``E`` by mpmath's enclosures, and every operation by mpmath's interval arithmetic, whose results contain
the true value. Nothing here evaluates in floating point first, so an enclosure that excludes a value is a
proof that the expression is not that value.
"""

from __future__ import annotations

from typing import Any

import mpmath
import sympy as sp
from mpmath import iv

__all__ = ["enclose", "ends"]


def _positive(v: Any, what: sp.Basic) -> Any:
    if not v.a > 0:
        raise ValueError(f"the enclosure of {sp.sstr(what)[:120]} is not positive ({v}): its log/power is undefined")
    return v


def _node(e: sp.Basic) -> Any:
    if isinstance(e, sp.Integer):
        return iv.mpf(int(e))
    if isinstance(e, sp.Rational):
        return iv.mpf(int(e.p)) / int(e.q)
    if e is sp.pi:
        return iv.pi + 0  # evaluated now, at this precision (iv.pi alone is a constant evaluated on use)
    if e is sp.E:
        return iv.e + 0
    if isinstance(e, sp.Float):
        raise TypeError(f"an interval certificate encloses exact expressions; {e} is a float")
    if isinstance(e, sp.Add):
        out = iv.mpf(0)
        for a in e.args:
            out = out + _node(a)
        return out
    if isinstance(e, sp.Mul):
        out = iv.mpf(1)
        for a in e.args:
            out = out * _node(a)
        return out
    if isinstance(e, sp.Pow):
        base, exp = e.args
        if isinstance(exp, sp.Integer):
            b = _node(base)
            n = int(exp)
            return b ** n if n >= 0 else iv.mpf(1) / (b ** (-n))
        if exp == sp.S.Half:
            return iv.sqrt(_node(base))
        return iv.exp(_node(exp) * iv.log(_positive(_node(base), base)))
    if isinstance(e, sp.exp):
        return iv.exp(_node(e.args[0]))
    if isinstance(e, sp.log):
        if len(e.args) != 1:
            raise TypeError(f"log with a base is not enclosed: {e}")
        return iv.log(_positive(_node(e.args[0]), e.args[0]))
    if isinstance(e, sp.cos):
        return iv.cos(_node(e.args[0]))
    if isinstance(e, sp.sin):
        return iv.sin(_node(e.args[0]))
    if isinstance(e, sp.Abs):
        return abs(_node(e.args[0]))
    if isinstance(e, sp.Sum) and len(e.limits) == 1:
        (v, lo, hi), = e.limits
        if not (lo.is_Integer and hi.is_Integer):
            raise ValueError(f"a finite sum is enclosed term by term; its limits must be integers, got {lo}, {hi}")
        a, b = int(lo), int(hi)
        sign, terms = (1, range(a, b + 1)) if b >= a - 1 else (-1, range(b + 1, a))  # SymPy's Karr convention
        out = iv.mpf(0)
        for k in terms:
            out = out + _node(e.function.xreplace({v: sp.Integer(k)}))
        return out if sign == 1 else -out
    raise TypeError(f"an interval certificate encloses numbers, pi, E, +, *, powers, exp, log, sin, cos, Abs and "
                    f"finite sums; got {type(e).__name__} in {sp.sstr(e)[:120]}")


def enclose(expr: Any, dps: int) -> Any:
    """An ``mpmath.iv`` interval containing the exact value of ``expr`` (no free symbols), at ``dps`` digits."""
    e = sp.sympify(expr, strict=True)
    if e.free_symbols:
        raise ValueError(f"an interval encloses a number; {sp.sstr(e)[:120]} has free symbols "
                         f"{sorted(map(str, e.free_symbols))}")
    old = iv.dps
    iv.dps = dps
    try:
        return _node(e)
    finally:
        iv.dps = old


def ends(v: Any) -> tuple[Any, Any]:
    """The lower and upper ends of an enclosure, as mpmath numbers with all their bits (no rounding: the ends
    keep the enclosure's outward rounding, whatever the working precision of the caller)."""
    a, b = v._mpi_  # the raw ends: made into mpf numbers as they are (make_mpf does not round)
    return mpmath.mp.make_mpf(a), mpmath.mp.make_mpf(b)
