"""Derivatives of terms, computed by the checker from the rules of differentiation, nothing else.

``derivative(t, v)`` is the term of dt/dv for a term built from rationals, variables, pi, sums, products,
natural powers, 1/u, cos, sin, exp, log and finite sums whose bounds do not involve v: functions differentiable
wherever the term is defined (1/u where u != 0, log u where u > 0). A term holding |u|, floor, min, max, a
conditional, or an arbitrary function of v, is refused: it need not have a derivative everywhere it is defined.
"""

from __future__ import annotations

from .terms import ONE, ZERO, KernelError, num, variables

__all__ = ["derivative"]


def _has(t: tuple, v: str) -> bool:
    return any(w[0] == "var" and w[1] == v for w in variables(t))


def derivative(t: tuple, v: str) -> tuple:
    head = t[0]
    if not _has(t, v):
        return ZERO
    if head == "var":
        return ONE
    if head == "add":
        return ("add", *(derivative(a, v) for a in t[1:]))
    if head == "mul":  # the product rule, one factor differentiated per term
        return ("add", *(("mul", *t[1:i], derivative(t[i], v), *t[i + 1:]) for i in range(1, len(t))))
    if head == "pow":
        n = t[2]
        return ("mul", num(n), ("pow", t[1], n - 1), derivative(t[1], v))
    if head == "inv":
        return ("mul", num(-1), ("pow", ("inv", t[1]), 2), derivative(t[1], v))
    if head == "cos":
        return ("mul", num(-1), ("sin", t[1]), derivative(t[1], v))
    if head == "sin":
        return ("mul", ("cos", t[1]), derivative(t[1], v))
    if head == "exp":
        return ("mul", t, derivative(t[1], v))
    if head == "log":
        return ("mul", ("inv", t[1]), derivative(t[1], v))
    if head == "sum":
        if _has(t[3], v) or _has(t[4], v):
            raise KernelError("a derivative of a sum whose bounds involve the variable is refused")
        if t[2] == v:
            return ZERO
        return ("sum", derivative(t[1], v), t[2], t[3], t[4])
    if head == "diff":
        return derivative(derivative(t[1], t[2]), v)
    raise KernelError(f"no derivative of {head} in {v!r}: it need not exist everywhere the term is defined")
