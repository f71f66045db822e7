"""Builders of the proof checker's terms and certificate pieces, for derivations that state a step in the checker's
own terms (:meth:`pemath.symbolic.Derivation.checked`). Plain constructors: nothing here decides anything."""

from __future__ import annotations

from ..kernel.terms import app, num, var

__all__ = ["app", "num", "var", "neg", "minus", "mul", "inv", "rule"]


def neg(t: tuple) -> tuple:
    """-t."""
    return ("mul", num(-1), t)


def minus(a: tuple, b: tuple) -> tuple:
    """a - b."""
    return ("add", a, neg(b))


def mul(*ts: tuple) -> tuple:
    """The product of the terms."""
    return ("mul", *ts)


def inv(t: tuple) -> tuple:
    """1/t."""
    return ("inv", t)


def rule(name: str, *args: tuple) -> tuple:
    """The generator (or fact) of rule or inequality ``name`` at ``args`` (:mod:`pemath.kernel.rules`)."""
    return ("rule", name, args)
