"""Deciding symbolic identities, and recording a derivation step by step.

A proof here is a decision: a difference is reduced to *exactly* zero (the SymPy
``S.Zero`` object, or a zero matrix) by one of a fixed list of rewrites, or the step
fails and raises :class:`ProofFailure`. ``simplify`` not reaching zero, or ``.equals``
answering ``None``, is a failure, never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = ["ProofFailure", "Step", "Derivation", "reduce_to_zero"]


class ProofFailure(AssertionError):
    """A step of a derivation did not reduce to exactly zero (or to ``True``)."""

    def __init__(self, message: str, residual: Any = None) -> None:
        super().__init__(message)
        self.residual = residual


def _expand_trig(e: sp.Expr) -> sp.Expr:
    return sp.expand(sp.expand_trig(sp.expand(e)))


def _expand_trig_pythagoras(e: sp.Expr) -> sp.Expr:
    # expand_trig, then replace cos^2 by 1 - sin^2 (the only identity trig polynomials need)
    r = _expand_trig(e)
    r = r.replace(lambda z: z.is_Pow and isinstance(z.base, sp.cos) and z.exp.is_Integer and z.exp >= 2,
                  lambda z: (1 - sp.sin(z.base.args[0]) ** 2) * sp.cos(z.base.args[0]) ** (z.exp - 2))
    return sp.expand(r)


def _trig(e: sp.Expr) -> sp.Expr:
    return sp.trigsimp(sp.expand(e))


def _powsimp(e: sp.Expr) -> sp.Expr:
    return sp.expand(sp.powsimp(sp.expand(sp.expand_power_exp(e)), force=False))


def _exp(e: sp.Expr) -> sp.Expr:
    return sp.expand(sp.expand_complex(sp.expand(e.rewrite(sp.exp))))


def _exp_powsimp(e: sp.Expr) -> sp.Expr:
    return sp.expand(sp.powsimp(sp.expand(e.rewrite(sp.exp)), force=False))


#: (name, rewrite) pairs tried in order; each must map an expression to an expression
#: equal to it. Cheap ones first: most identities close at "expand".
REWRITES: tuple[tuple[str, Callable[[sp.Expr], sp.Expr]], ...] = (
    ("expand", sp.expand),
    ("expand_trig", _expand_trig),
    ("expand_trig+pythagoras", _expand_trig_pythagoras),
    ("powsimp", _powsimp),
    ("trigsimp", _trig),
    ("rewrite(exp)", _exp),
    ("rewrite(exp)+powsimp", _exp_powsimp),
    ("simplify", sp.simplify),
)


def reduce_to_zero(expr: Any, *, methods: Sequence[str] | None = None) -> tuple[bool, str | None, Any]:
    """Try to rewrite ``expr`` (expression or matrix) to exactly zero.

    Returns ``(proved, method, residual)``: the first rewrite that reaches zero, or
    ``(False, None, residual)`` with the simplest residual seen.
    """
    if methods is not None:
        known = [name for name, _ in REWRITES]
        if isinstance(methods, (str, bytes)) or not isinstance(methods, Sequence):
            raise TypeError(f"methods must be None or a sequence of rewrite names from {known}, got {methods!r}")
        unknown = [m for m in methods if not isinstance(m, str) or m not in known]
        if unknown:
            raise ValueError(f"methods must name rewrites from {known}, got unknown {unknown!r}")
    if isinstance(expr, (str, bytes)):
        # sympify would eval() the string: an expression is built with SymPy, never parsed here
        raise TypeError(f"expr must be a SymPy expression or matrix (not a string), got {expr!r}")
    rewrites = [r for r in REWRITES if methods is None or r[0] in methods]
    if isinstance(expr, sp.MatrixBase):
        used: list[str] = []
        residual = sp.zeros(*expr.shape)
        for idx in range(len(expr)):
            ok, how, res = reduce_to_zero(expr[idx], methods=methods)
            if not ok:
                residual[idx] = res
                return False, None, residual
            used.append(how or "")
        order = ["identical"] + [name for name, _ in REWRITES]
        return True, max(used, key=order.index) if used else "identical", residual
    try:
        e = sp.sympify(expr, strict=True)
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise TypeError(f"expr must be a SymPy expression or matrix, got {expr!r} ({type(expr).__name__})") from exc
    if not isinstance(e, sp.Expr):
        raise TypeError(f"expr must be a SymPy expression or matrix, got {expr!r} ({type(e).__name__})")
    if e is sp.S.Zero:
        return True, "identical", e
    residual = e
    for name, rewrite in rewrites:
        r = rewrite(e)
        if r is sp.S.Zero or r == 0:
            return True, name, sp.S.Zero
        if sp.count_ops(r) < sp.count_ops(residual):
            residual = r
    return False, None, residual


@dataclass
class Step:
    """One line of a derivation: a claim about expressions, and how it was decided."""

    text: str
    expr: Any = None
    status: str = "info"  # "info" (narration), "proved", "failed"
    method: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Step text must be a string, got {self.text!r}")
        if self.status not in ("info", "proved", "failed"):
            raise ValueError(f"Step status must be 'info', 'proved' or 'failed', got {self.status!r}")
        if self.method is not None and not isinstance(self.method, str):
            raise TypeError(f"Step method must be None or a string, got {self.method!r}")

    def latex(self) -> str | None:
        if self.expr is None:
            return None
        return sp.latex(self.expr)

    def pretty(self, width: int = 100, max_lines: int = 24) -> str | None:
        """Pretty-printed, or the plain string form when the picture would be too tall."""
        if self.expr is None:
            return None
        text = sp.pretty(self.expr, use_unicode=True, num_columns=width)
        if text.count("\n") < max_lines:
            return text
        plain = sp.sstr(self.expr)
        return plain if len(plain) <= 4 * width else plain[: 4 * width - 3] + "..."


@dataclass
class Derivation:
    """A derivation: narration and decided steps, in order.

    Every decided step raises :class:`ProofFailure` the moment it does not reduce to
    exactly zero (or ``True``), so a derivation that returns has proved every step.
    """

    title: str
    steps: list[Step] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise TypeError(f"Derivation title must be a string, got {self.title!r}")

    def say(self, text: str, expr: Any = None) -> Any:
        """Narrate (no decision): a definition, a substitution, a solution found."""
        self.steps.append(Step(text, expr, "info"))
        return expr

    def zero(self, text: str, expr: Any, *, methods: Sequence[str] | None = None) -> None:
        """Decide ``expr == 0`` exactly, or fail."""
        ok, how, residual = reduce_to_zero(expr, methods=methods)
        if not ok:
            self.steps.append(Step(text, residual, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text}; residual {sp.sstr(residual)[:300]}", residual)
        self.steps.append(Step(text, expr, "proved", how))

    def equal(self, text: str, lhs: Any, rhs: Any, *, methods: Sequence[str] | None = None) -> None:
        """Decide ``lhs == rhs`` exactly (as ``lhs - rhs`` reducing to zero), or fail."""
        ok, how, residual = reduce_to_zero(
            (lhs - rhs) if not isinstance(lhs, sp.MatrixBase) else sp.Matrix(lhs) - sp.Matrix(rhs), methods=methods
        )
        shown = sp.Eq(lhs, rhs, evaluate=False) if not isinstance(lhs, sp.MatrixBase) else sp.Eq(
            sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs), evaluate=False
        )
        if not ok:
            self.steps.append(Step(text, residual, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text}; residual {sp.sstr(residual)[:300]}", residual)
        self.steps.append(Step(text, shown, "proved", how))

    def true(self, text: str, condition: Any) -> None:
        """Decide a SymPy boolean (or Python bool computed exactly) is True, or fail."""
        value = sp.sympify(condition) if not isinstance(condition, bool) else sp.true if condition else sp.false
        if value is not sp.true:
            self.steps.append(Step(text, value if value is not sp.false else None, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} (decided {value})", value)
        self.steps.append(Step(text, condition if isinstance(condition, sp.Basic) else None, "proved", "exact"))

    def fail(self, text: str, expr: Any = None) -> None:
        self.steps.append(Step(text, expr, "failed"))
        raise ProofFailure(f"{self.title}: {text}", expr)
