"""Interval enclosures of closed terms, outward-rounded by mpmath's ``iv`` context, with bounded cost.

Every operation of a closed term (no variables, no arbitrary functions) is enclosed at ``prec`` bits; an
inverse of an interval holding 0, an exp of an argument beyond 2^20 in magnitude, a power of a magnitude beyond
2^20 bits, a sum of more than MAX_SUM_TERMS terms, or an infinite or NaN end is refused before or as it is met,
so an enclosure never hangs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from .poly import budget, rational_sqrt
from .terms import KernelError, substitute, tree_size

__all__ = ["enclose", "exact", "MAX_PREC", "MAX_SUM_TERMS", "MAX_NODES", "MAX_BITS", "MAX_WORK"]

MAX_BITS = 200_000
MAX_WORK = 12_000_000  # enclosed nodes times bits of precision, in one enclosure (B(19) > B(18): 1.4 s)
MAX_PREC = 4000  # bits
MAX_SUM_TERMS = 20_000
MAX_NODES = 200_000  # enclosed nodes of one term, sums unrolled, counted before enclosing
_EXP_ARG = 2 ** 20
_iv = mpmath.iv


def _nodes(t: tuple, budget: int = MAX_NODES) -> int:
    """The number of nodes the enclosure visits, sums unrolled (their bounds must be integers, exactly); counting
    stops just past ``budget``, so the count itself costs at most about that many steps."""
    head = t[0]
    if head in ("num", "pi"):
        return 1
    if head in ("var", "app"):
        raise KernelError(f"an enclosure is of a closed term: {t[0]} {t[1]!r} has no value")
    if head == "sum":
        lo, hi = _int_literal(t[3]), _int_literal(t[4])
        if hi - lo + 1 > MAX_SUM_TERMS:
            raise KernelError(f"refused before any work: a sum of {hi - lo + 1} terms (at most {MAX_SUM_TERMS} are "
                              "enclosed term by term)")
        n, body = 1, tree_size(t[1], budget)  # each term substitutes into the whole body, then encloses it
        for k in range(lo, hi + 1):
            n += body
            if n > budget:
                break
            n += _nodes(substitute(t[1], {t[2]: ("num", k, 1)}), budget - n)
            if n > budget:
                break
        return n
    n = 1
    for a in (t[1][1:] + t[2:] if head == "if" else t[1:]):
        if isinstance(a, tuple):
            n += _nodes(a, budget - n)
            if n > budget:
                break
    return n


def _int_literal(t: tuple) -> int:
    """An enclosed sum's bound: an integer literal, or a closed term of rationals whose exact value is an integer
    (an inner sum's bound j - 1 once the outer index j is a number)."""
    if t[0] == "num" and t[2] == 1:
        return t[1]
    if tree_size(t, 64) > 64:
        raise KernelError("an enclosed sum's bound is an integer literal or a closed term of at most 64 nodes")
    try:
        v = _exact(t)
    except KernelError:
        v = None
    if v is None or v.denominator != 1:
        raise KernelError(f"an enclosed sum's bounds are integers, exactly, got {t!r:.80}")
    return int(v)


_MAX_MAGNITUDE = 2 ** 20  # bits: the largest |end| an enclosure may reach is 2^(2^20)


def _ends(x: object) -> tuple:
    """The exact ends of an interval (its raw binary values, never rounded to mpmath's working precision)."""
    lo, hi = x._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _finite(x: object) -> object:
    for raw in x._mpi_:
        if raw in (mpmath.libmp.finf, mpmath.libmp.fninf, mpmath.libmp.fnan):
            raise KernelError("an enclosure reached an infinite or undefined end")
        if raw[1] and raw[2] + raw[3] > _MAX_MAGNITUDE:  # mantissa bits + exponent: the end's magnitude in bits
            raise KernelError(f"an enclosure past 2^{_MAX_MAGNITUDE} in magnitude is refused")
    budget.spend("bits", _iv.prec)
    return x


_GUARD = 40  # extra bits at which an elementary function is computed before its ends are widened


def _elementary(f: object, b: object, *, charge: bool = True) -> object:
    """``f(b)`` for an elementary function of mpmath's iv context, made rigorous: mpmath's own directed rounding of
    exp, log, cos and sin is not (its fixed-point argument reduction keeps only about prec + 14 guard bits), so
    the value is computed at 40 more bits and each end is then moved outward by (|end| + 1) 2^-prec, with the
    iv context's basic arithmetic, whose outward rounding is exact."""
    prec = _iv.prec
    # each evaluation is charged: an elementary function costs tens of microseconds however small its precision,
    # so a cheap tree of many (the audit of sqrt: 100,000 sin(pi) at 32 bits, 8 s) is refused by the bits budget
    if charge:
        budget.spend("bits", max(prec, _ELEMENTARY_BITS))
    _iv.prec = prec + _GUARD
    try:
        r = f(b)
    finally:
        _iv.prec = prec
    return r + (abs(r) + 1) * _iv.mpf([-1, 1]) * _iv.mpf(2) ** (-prec)


_ELEMENTARY_BITS = 64  # what one elementary evaluation is charged at least: 4,000,000 bits allow 62,500 of them
_PI: dict = {}


def _floor(v: object) -> int:
    return mpmath.libmp.to_int(mpmath.libmp.mpf_floor(v._mpf_, 0))


def _enc(t: tuple) -> object:
    head = t[0]
    if head == "num":
        return _iv.mpf(t[1]) / t[2] if t[2] != 1 else _iv.mpf(t[1])
    if head == "pi":  # one enclosure per precision, kept (pi is a constant); every use charged the same
        budget.spend("bits", max(_iv.prec, _ELEMENTARY_BITS))
        if _iv.prec not in _PI:
            _PI[_iv.prec] = _elementary(lambda _: _iv.pi, None, charge=False)
        return _PI[_iv.prec]
    if head == "add":
        out = _enc(t[1])
        for a in t[2:]:
            out = out + _enc(a)
        return _finite(out)
    if head == "mul":
        out = _enc(t[1])
        for a in t[2:]:
            out = out * _enc(a)
        return _finite(out)
    if head == "pow":
        b = _enc(t[1])
        bits = max(raw[2] + raw[3] for raw in b._mpi_ if raw[1]) if any(raw[1] for raw in b._mpi_) else 0
        if bits > 0 and t[2] * bits > _MAX_MAGNITUDE:
            raise KernelError(f"a power of more than 2^{_MAX_MAGNITUDE} in magnitude is refused")
        return _finite(b ** t[2])
    if head == "inv":
        b = _enc(t[1])
        lo, hi = _ends(b)
        if lo <= 0 <= hi:
            raise KernelError("an inverse of an interval holding 0 is refused (the divisor is not shown nonzero)")
        return _finite(1 / b)
    if head in ("cos", "sin"):
        b = _enc(t[1])
        if max(abs(e) for e in _ends(b)) > _EXP_ARG:
            raise KernelError(f"{head} of an argument beyond {_EXP_ARG} in magnitude is refused (its reduction "
                              "would need pi to as many bits)")
        return _finite(_elementary(getattr(_iv, head), b))
    if head == "exp":
        b = _enc(t[1])
        if max(abs(e) for e in _ends(b)) > _EXP_ARG:
            raise KernelError(f"exp of an argument beyond {_EXP_ARG} in magnitude is refused")
        return _finite(_elementary(_iv.exp, b))
    if head == "diff":
        from .calculus import derivative

        return _enc(derivative(t[1], t[2]))
    if head == "log":
        b = _enc(t[1])
        if _ends(b)[0] <= 0:
            raise KernelError("a log of an interval reaching 0 or below is refused")
        return _finite(_elementary(_iv.log, b))
    if head == "abs":
        return _finite(abs(_enc(t[1])))  # the iv context's |.|, outward-rounded
    if head == "sqrt":  # its argument is >= 0 (a proposition shows it): an end below 0 is the enclosure's width
        lo, hi = _ends(_enc(t[1]))
        if hi < 0:
            raise KernelError("a square root of an interval below 0 is refused")
        return _finite(_elementary(_iv.sqrt, _iv.mpf([max(lo, 0), hi])))
    if head == "floor":
        lo, hi = (_floor(e) for e in _ends(_enc(t[1])))
        if lo != hi:
            raise KernelError("a floor of an enclosure that straddles an integer is refused (not decided)")
        return _finite(_iv.mpf(lo))
    if head in ("min", "max"):
        (alo, ahi), (blo, bhi) = _ends(_enc(t[1])), _ends(_enc(t[2]))
        pick = min if head == "min" else max
        return _finite(_iv.mpf([pick(alo, blo), pick(ahi, bhi)]))
    if head == "if":
        holds = _decides(t[1])
        return _enc(t[2] if holds else t[3])
    if head == "sum":
        lo, hi = _int_literal(t[3]), _int_literal(t[4])
        out = _iv.mpf(0)
        for k in range(lo, hi + 1):
            out = out + _enc(substitute(t[1], {t[2]: ("num", k, 1)}))
        return _finite(out)
    raise KernelError(f"no enclosure of a term of kind {head!r}")


def _decides(r: tuple) -> bool:
    """Whether the closed relation r holds, from an enclosure of r's b - a; refused when it does not tell."""
    d = _enc(("add", r[2], ("mul", ("num", -1, 1), r[1])))
    lo, hi = _ends(d)
    verdict = {"lt": (lo > 0, hi <= 0), "le": (lo >= 0, hi < 0), "eq": (lo == hi == 0, lo > 0 or hi < 0),
               "ne": (lo > 0 or hi < 0, lo == hi == 0)}[r[0]]
    if verdict[0] == verdict[1]:
        raise KernelError(f"the enclosure of a condition ({r[0]}) does not decide it")
    return verdict[0]


def exact(t: tuple, top: bool = True) -> Fraction:
    """The exact rational value of a closed term made of numbers, +, *, powers, inverses, |.|, square roots of
    rational squares, floor, min, max and conditionals; refuses any other term (pi, cos, ...), any value past
    MAX_BITS and any evaluation whose work (the bits of every intermediate value, added up) passes MAX_WORK."""
    return _exact(t)


def _exact(t: tuple) -> Fraction:
    head = t[0]
    if head == "num":
        return Fraction(t[1], t[2])
    if head in ("add", "mul"):
        out = _exact(t[1])
        for a in t[2:]:
            out = out + _exact(a) if head == "add" else out * _exact(a)
            _bits(out)
        return out
    if head == "pow":
        b = _exact(t[1])
        if t[2] * max(b.numerator.bit_length(), b.denominator.bit_length()) > MAX_BITS:
            raise KernelError(f"refused before any work: a power of more than {MAX_BITS} bits")
        out = b ** t[2]
        _bits(out)
        return out
    if head == "inv":
        b = _exact(t[1])
        if not b:
            raise KernelError("an inverse of 0")
        _bits(b)  # charged like a sum's or a product's value (the audit of sqrt timed inverses of 4,000-bit values)
        return 1 / b
    if head == "abs":
        return abs(_exact(t[1]))
    if head == "sqrt":  # exact only for the square of a rational
        root = rational_sqrt(_exact(t[1]))
        if root is None:
            raise KernelError("no exact rational value for the square root of a number that is not a rational square")
        return root
    if head == "floor":
        return Fraction(math.floor(_exact(t[1])))
    if head in ("min", "max"):
        return (min if head == "min" else max)(_exact(t[1]), _exact(t[2]))
    if head == "if":
        r = t[1]
        a, b = _exact(r[1]), _exact(r[2])
        holds = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b}[r[0]]
        return _exact(t[2] if holds else t[3])
    raise KernelError(f"no exact rational value for a term of kind {head!r}")


def _bits(x: Fraction) -> None:
    bits = max(x.numerator.bit_length(), x.denominator.bit_length())
    if bits > MAX_BITS:
        raise KernelError(f"an exact value past {MAX_BITS} bits is refused")
    budget.spend("bits", bits)


def enclose(t: tuple, prec: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """An enclosure [lo, hi] of the closed term ``t`` at ``prec`` bits; refuses what it cannot bound."""
    if type(prec) is not int or not 32 <= prec <= MAX_PREC:
        raise KernelError(f"an enclosure's precision is an int of 32..{MAX_PREC} bits, got {prec!r}")
    n = _nodes(t)
    if n > MAX_NODES or n * prec > MAX_WORK:
        raise KernelError(f"refused before any work: enclosing visits {n} nodes at {prec} bits (at most {MAX_NODES} "
                          f"nodes, and {MAX_WORK} nodes times bits)")
    old = _iv.prec
    _iv.prec = prec
    try:
        return _ends(_enc(t))
    finally:
        _iv.prec = old
