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

__all__ = ["ProofFailure", "Step", "Derivation", "reduce_to_zero", "CERTIFICATES"]

#: What decided a step (``Step.certificate``):
#:
#: * ``"rewrite"``: the difference reduced to exactly zero by the rewrite named in ``method``;
#: * ``"closed on construction"``: SymPy's automatic evaluation had already made it zero
#:   when the expression was built (no rewrite was needed: the identity is structural);
#: * ``"exact boolean"``: a SymPy relational between exact quantities evaluated to ``True``;
#: * ``"enumeration"``: every case of a finite set checked exactly (``method`` gives its size);
#: * ``"interval"``: an interval enclosure decided it (``method`` gives its precision);
#: * ``"assumption query"``: SymPy's assumptions system answered ``True`` from the declared
#:   assumptions of the symbols (``method`` lists them);
#: * ``"free symbols"``: the expression's free symbols exclude the named ones, so it is constant in them;
#: * ``"solution set"``: ``solveset`` over a stated domain returned this finite set (complete by construction).
CERTIFICATES = ("rewrite", "closed on construction", "exact boolean", "enumeration", "interval", "assumption query",
                "free symbols", "solution set")


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
    floats = e.atoms(sp.Float)
    if floats:  # a float can absorb a term (Float(1e20) + 1 - Float(1e20) is 0): never proof
        raise TypeError(f"expr holds floating-point numbers {sorted(map(float, floats))[:4]}: symbolic proofs use "
                        "exact numbers (sp.Rational, sp.Integer, symbols)")
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


_SHOWN = ("positive", "nonnegative", "negative", "nonpositive", "nonzero", "integer", "real")


def _kind(method: str | None) -> str:
    return "closed on construction" if method == "identical" else "rewrite"


def _np_bools() -> tuple[type, ...]:
    import numpy as np

    return (np.bool_,)


def _ends(v: Any) -> tuple[Any, Any]:
    """The ends of an mpmath interval, or of an enclosure of an exact number (a float is refused)."""
    import mpmath
    from mpmath import iv

    if not isinstance(v, mpmath.ctx_iv.ivmpf):
        if isinstance(v, bool) or not isinstance(v, (int, sp.Integer, sp.Rational)):
            raise TypeError(f"an interval step compares mpmath.iv enclosures or exact numbers, got {v!r}")
        q = sp.Rational(v)
        v = iv.mpf(int(q.p)) / int(q.q)
    return mpmath.mpf(v.a.a), mpmath.mpf(v.b.b)


def _nstr(v: Any) -> str:
    import mpmath

    return mpmath.nstr(v, 8)


def _no_floats(condition: Any, title: str, text: str) -> None:
    if isinstance(condition, sp.Basic) and condition.atoms(sp.Float):
        raise ProofFailure(f"{title}: not proved: {text} (it holds floating-point numbers: decide it exactly)",
                           condition)


@dataclass
class Step:
    """One line of a derivation: a claim about expressions, and how it was decided."""

    text: str
    expr: Any = None
    status: str = "info"  # "info" (narration), "proved", "failed"
    method: str | None = None
    certificate: str | None = None  # what decided a proved step: one of CERTIFICATES

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Step text must be a string, got {self.text!r}")
        if self.status not in ("info", "proved", "failed"):
            raise ValueError(f"Step status must be 'info', 'proved' or 'failed', got {self.status!r}")
        if self.method is not None and not isinstance(self.method, str):
            raise TypeError(f"Step method must be None or a string, got {self.method!r}")
        if self.certificate is not None and self.certificate not in CERTIFICATES:
            raise ValueError(f"Step certificate must be None or one of {CERTIFICATES}, got {self.certificate!r}")
        if self.status == "proved" and self.certificate is None:
            raise ValueError(f"Step status 'proved' needs a certificate saying what decided it (one of {CERTIFICATES}), "
                             "got certificate=None")

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
        self.steps.append(Step(text, expr, "proved", how, _kind(how)))

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
        self.steps.append(Step(text, shown, "proved", how, _kind(how)))

    def true(self, text: str, condition: Any) -> None:
        """Decide a SymPy boolean (a relational between exact quantities) is True, or fail.

        A Python ``bool`` is refused: it says nothing about how it was decided. Use
        :meth:`enumerated`, :meth:`interval`, :meth:`assumed`, :meth:`free_of` or :meth:`solved`,
        which record their certificate."""
        if isinstance(condition, (bool, _np_bools())) or not isinstance(condition, sp.Basic):
            raise TypeError(f"{self.title}: {text}: Derivation.true takes a SymPy boolean, got {condition!r}; a Python "
                            "bool carries no certificate (use enumerated, interval, assumed, free_of or solved)")
        value = sp.sympify(condition)
        if value is not sp.true:
            self.steps.append(Step(text, value if value is not sp.false else None, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} (decided {value})", value)
        _no_floats(condition, self.title, text)
        self.steps.append(Step(text, condition, "proved", "exact", "exact boolean"))

    def enumerated(self, text: str, cases: Sequence[Any], holds: Callable[[Any], Any], *, over: str | None = None) -> None:
        """Decide ``holds(case)`` for every case of a finite set, or fail. Each case is computed exactly
        (integers, rationals, SymPy): ``holds`` returns a SymPy boolean or an exact Python comparison.
        ``over`` describes the enumerated set when the cases summarise a larger one (e.g. a count)."""
        cases = list(cases)
        if not cases:
            raise ValueError(f"{self.title}: {text}: an enumeration needs at least one case")
        for c in cases:
            value = holds(c)
            ok = bool(value) if isinstance(value, (bool, _np_bools())) else sp.sympify(value) is sp.true
            if not ok:
                self.steps.append(Step(f"{text} (case {c!r})", None, "failed"))
                raise ProofFailure(f"{self.title}: not proved: {text} at case {c!r} (decided {value})", c)
        self.steps.append(Step(text, None, "proved", over or f"{len(cases)} cases", "enumeration"))

    def assumed(self, text: str, expr: Any, prop: str) -> None:
        """Decide ``expr.is_<prop>`` is True from the symbols' declared assumptions, or fail."""
        if prop not in ("positive", "nonnegative", "negative", "nonpositive", "nonzero", "integer", "real"):
            raise ValueError(f"prop must be a SymPy assumption such as 'positive', got {prop!r}")
        e = sp.sympify(expr)
        _no_floats(e, self.title, text)
        if getattr(e, f"is_{prop}") is not True:
            self.steps.append(Step(text, e, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} ({sp.sstr(e)} is_{prop} is not True)", e)
        given = sorted(f"{sym} {', '.join(k for k, v in sorted(sym.assumptions0.items()) if v and k in _SHOWN)}"
                       for sym in e.free_symbols)
        self.steps.append(Step(text, e, "proved", f"is_{prop} from: " + ("; ".join(given) or "exact numbers"),
                               "assumption query"))

    def free_of(self, text: str, expr: Any, symbols: Any) -> None:
        """Decide ``expr`` does not involve ``symbols`` (none is among its free symbols), or fail."""
        e = sp.sympify(expr)
        hit = e.free_symbols & set(symbols)
        if hit:
            self.steps.append(Step(text, e, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} (it involves {sorted(map(str, hit))})", e)
        self.steps.append(Step(text, e, "proved", "free of " + ", ".join(sorted(map(str, symbols))), "free symbols"))

    def solved(self, text: str, equation: Any, symbol: Any, domain: Any, expected: Any) -> None:
        """Decide the complete solution set of ``equation`` for ``symbol`` over ``domain`` is ``expected``."""
        got = sp.solveset(equation, symbol, domain)
        want = sp.FiniteSet(*expected) if not isinstance(expected, sp.Set) else expected
        if not isinstance(got, sp.FiniteSet) or sp.Eq(got, want) is not sp.true:
            self.steps.append(Step(text, got, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} (solveset gave {sp.sstr(got)})", got)
        self.steps.append(Step(text, sp.Eq(symbol, want.args[0]) if len(want) == 1 else want, "proved",
                               f"solveset over {sp.sstr(domain)}: {sp.sstr(got)}", "solution set"))

    def interval(self, text: str, left: Any, relation: str, right: Any, *, precision: str) -> None:
        """Decide ``left relation right`` from interval enclosures (``mpmath.iv`` intervals, or exact numbers), or
        fail: ``>`` holds when the lower end of ``left`` exceeds the upper end of ``right``, and so on. Enclosures
        that overlap decide nothing and fail."""
        lo_l, hi_l = _ends(left)
        lo_r, hi_r = _ends(right)
        decided = {">": lo_l > hi_r, ">=": lo_l >= hi_r, "<": hi_l < lo_r, "<=": hi_l <= lo_r}
        if relation not in decided:
            raise ValueError(f"relation must be one of {sorted(decided)}, got {relation!r}")
        shown = f"[{_nstr(lo_l)}, {_nstr(hi_l)}] {relation} [{_nstr(lo_r)}, {_nstr(hi_r)}]"
        if not decided[relation]:
            self.steps.append(Step(text, None, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} (enclosures {shown} at {precision})", None)
        self.steps.append(Step(text, None, "proved", f"{precision}: {shown}", "interval"))

    def fail(self, text: str, expr: Any = None) -> None:
        self.steps.append(Step(text, expr, "failed"))
        raise ProofFailure(f"{self.title}: {text}", expr)
