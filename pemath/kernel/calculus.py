"""Derivatives of terms, computed by the checker from the rules of differentiation, nothing else.

``derivative(t, v)`` is the term of dt/dv for a term built from rationals, variables, pi, sums, products,
natural powers, 1/u, cos, sin, exp, log and finite sums whose bounds do not involve v: functions differentiable
wherever the term is defined (1/u where u != 0, log u where u > 0). A term holding |u|, floor, min, max, a
conditional, or an arbitrary function of v, is refused: it need not have a derivative everywhere it is defined.
"""

from __future__ import annotations

from .poly import budget
from .terms import ONE, ZERO, KernelError, num, tree_size, variables

__all__ = ["derivative", "MAX_NODES"]

MAX_NODES = 50_000  # nodes a derivative's term may have: refused past it, as it is built


def _has(t: tuple, v: str) -> bool:
    return any(w[0] == "var" and w[1] == v for w in variables(t))


def derivative(t: tuple, v: str) -> tuple:
    """d t / d v, built under a bound on the work and on its size (nested derivatives grow fast)."""
    if tree_size(t, MAX_NODES) > MAX_NODES:
        raise KernelError(f"refused: a derivative of a term of more than {MAX_NODES} nodes")
    key = (t, v)
    if key in _MEMO:
        out, work = _MEMO[key]
        budget.spend("monomials", work)  # using it again is work again (a caller walks it)
        return out
    count = [0]
    out = _derivative(t, v, count, {})
    size = tree_size(out, MAX_NODES)
    if size > MAX_NODES:
        raise KernelError(f"refused: a derivative of more than {MAX_NODES} nodes")
    budget.spend("monomials", count[0] + size)  # building it is work of the check
    if len(_MEMO) > 10_000:
        _MEMO.clear()
    _MEMO[key] = (out, count[0] + size)
    return out


_MEMO: dict = {}


def _derivative(t: tuple, v: str, count: list, has: dict) -> tuple:
    count[0] += 1
    if count[0] > MAX_NODES:
        raise KernelError(f"refused: a derivative of more than {MAX_NODES} nodes")
    d = lambda a: _derivative(a, v, count, has)  # noqa: E731
    head = t[0]
    key = id(t)
    if key not in has:
        has[key] = (_has(t, v), t)  # the term is kept so its id stays its own
    if not has[key][0]:
        return ZERO
    if head == "var":
        return ONE
    if head == "add":
        return ("add", *(d(a) for a in t[1:]))
    if head == "mul":  # the product rule, one factor differentiated per term: k terms of k factors, counted first
        count[0] += (len(t) - 1) ** 2  # (the sixteenth audit: 30,000 factors built 9e8 entries, then were refused)
        if count[0] > MAX_NODES:
            raise KernelError(f"refused: a derivative of more than {MAX_NODES} nodes")
        return ("add", *(("mul", *t[1:i], d(t[i]), *t[i + 1:]) for i in range(1, len(t))))
    if head == "pow":
        n = t[2]
        if n == 0:
            return ZERO
        return ("mul", num(n), ("pow", t[1], n - 1), d(t[1]))
    if head == "inv":
        return ("mul", num(-1), ("pow", ("inv", t[1]), 2), d(t[1]))
    if head == "cos":
        return ("mul", num(-1), ("sin", t[1]), d(t[1]))
    if head == "sin":
        return ("mul", ("cos", t[1]), d(t[1]))
    if head == "exp":
        return ("mul", t, d(t[1]))
    if head == "log":
        return ("mul", ("inv", t[1]), d(t[1]))
    if head == "sum":
        if _has(t[3], v) or _has(t[4], v):
            raise KernelError("a derivative of a sum whose bounds involve the variable is refused")
        if t[2] == v:
            return ZERO
        return ("sum", d(t[1]), t[2], t[3], t[4])
    if head == "diff":
        return d(_derivative(t[1], t[2], count, {}))
    raise KernelError(f"no derivative of {head} in {v!r}: it need not exist everywhere the term is defined")
