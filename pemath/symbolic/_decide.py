"""Deciding symbolic identities, and recording a derivation step by step.

A proof here is a decision: a difference is reduced to *exactly* zero (the SymPy
``S.Zero`` object, or a zero matrix) by one of a fixed list of rewrites, or the step
fails and raises :class:`ProofFailure`. ``simplify`` not reaching zero, or ``.equals``
answering ``None``, is a failure, never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

__all__ = ["ProofFailure", "Step", "Derivation", "reduce_to_zero", "CERTIFICATES", "ROLES"]

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
#: * ``"solution set"``: ``solveset`` over a stated domain returned this finite set (complete by construction);
#: * ``"induction"``: the base case and the step from ``n`` to ``n + 1`` each reduced to exactly zero (``method``
#:   names the variable, the base and the rewrites);
#: * ``"instance"``: an identity proved earlier in the same derivation for an arbitrary function, with that
#:   function replaced by a given one (substitution into a universally quantified statement);
#: * ``"substitution"``: an equation of the same derivation (proved, or a definition, hypothesis or cited fact,
#:   quantified over its free symbols) specialised at given values, or rewritten with another such equation.
CERTIFICATES = ("rewrite", "closed on construction", "exact boolean", "enumeration", "interval", "assumption query",
                "free symbols", "solution set", "induction", "instance", "substitution")

#: What a narrated (undecided) step is. None of them carries logic a later step rests on:
#:
#: * ``"definition"``: notation, the objects studied, or the published text being examined;
#: * ``"hypothesis"``: what the claim assumes (it is part of the statement, not proved);
#: * ``"remark"``: commentary (context, a reading of what was proved); nothing later depends on it;
#: * ``"cited"``: a standard textbook fact the argument uses without deciding it here (named, e.g. the
#:   triangle inequality); ``pemath prove --json`` lists every one, so a reader sees exactly what is trusted.
ROLES = ("definition", "hypothesis", "remark", "cited")


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


_K = sp.Dummy("k", integer=True)


def _reduce_summand(f: sp.Expr) -> sp.Expr:
    for _, rewrite in REWRITES[:3]:
        r = rewrite(f)
        if r is sp.S.Zero or r == 0:
            return sp.S.Zero
    return f


def _sums(e: sp.Expr) -> sp.Expr:
    """Linearity and additivity of finite sums, then each summand reduced: sums over the same range are
    combined into one (constant factors taken inside), sums with the same summand over adjacent ranges
    are joined, and a sum whose summand reduces to exactly zero is zero."""
    groups: dict[tuple[sp.Expr, sp.Expr], sp.Expr] = {}
    rest = sp.S.Zero
    for t in sp.Add.make_args(sp.expand(e)):
        coeff, z = t.as_independent(sp.Sum, as_Add=False)
        if isinstance(z, sp.Sum) and len(z.limits) == 1 and not coeff.has(sp.Sum):
            (v, lo, hi), = z.limits
            if v in coeff.free_symbols:
                return e
            key = (sp.expand(lo), sp.expand(hi))
            groups[key] = groups.get(key, sp.S.Zero) + coeff * z.function.xreplace({v: _K})
        else:
            rest += t
    merged = True
    while merged:
        merged = False
        groups = {key: f for key, f in groups.items() if _reduce_summand(f) != 0}
        for (lo1, hi1), f1 in list(groups.items()):
            for (lo2, hi2), f2 in list(groups.items()):
                if (lo1, hi1) != (lo2, hi2) and sp.expand(lo2 - hi1 - 1) == 0 and \
                        _reduce_summand(sp.expand(f1 - f2)) == 0:
                    del groups[(lo1, hi1)], groups[(lo2, hi2)]
                    groups[(lo1, hi2)] = groups.get((lo1, hi2), sp.S.Zero) + f1
                    merged = True
                    break
            if merged:
                break
    return sp.expand(rest + sp.Add(*[sp.Sum(f, (_K, lo, hi)) for (lo, hi), f in groups.items()]))


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
    ("sums", _sums),
    ("trigsimp", _trig),
    ("rewrite(exp)", _exp),
    ("rewrite(exp)+powsimp", _exp_powsimp),
    ("rewrite(floor)", lambda e: sp.expand(e.rewrite(sp.floor))),
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


class _Steps(list):
    """A derivation's steps: a step appended without a section gets the derivation's title, and, inside
    :meth:`Derivation.lemma`, the lemma's name; steps taken from another derivation keep theirs."""

    def __init__(self, title: str, steps: Any = ()) -> None:
        super().__init__()
        self.title = title
        self.lemma: str | None = None
        self.extend(steps)

    def append(self, step: Any) -> None:
        if isinstance(step, Step):
            if step.section is None:
                step.section = self.title
            if step.lemma is None:
                step.lemma = self.lemma
        super().append(step)

    def extend(self, steps: Any) -> None:
        for step in steps:
            self.append(step)


def increment(f: Callable[[Any], Any], var: sp.Symbol) -> sp.Expr:
    """``f(var + 1) - f(var)`` with every finite sum unrolled exactly: a sum whose summand or upper limit
    depends on ``var`` grows by the sum of its summand's change and the terms its range gains
    (``sum_{i=a}^{U(n+1)} g(i, n+1) - sum_{i=a}^{U(n)} g(i, n) = sum_{i=a}^{U(n)} [g(i, n+1) - g(i, n)] +
    sum_{i=U(n)+1}^{U(n+1)} g(i, n+1)``, linearity and additivity of finite sums); the gained range must have a
    fixed number of terms, so it is written out term by term."""
    now = sp.expand(f(var))

    def grow(z: sp.Sum) -> sp.Expr:
        if len(z.limits) != 1:
            raise ProofFailure(f"increment: one index per sum, got {z}", z)
        (i, lo, hi), = z.limits
        if var in lo.free_symbols:
            raise ProofFailure(f"increment: a sum whose lower limit depends on {var} is not unrolled: {z}", z)
        gained = sp.expand(hi.subs(var, var + 1) - hi)
        if not (gained.is_Integer and gained >= 0):
            raise ProofFailure(f"increment: the range of {z} gains {gained} terms: not a fixed count", z)
        g_next = z.function.subs(var, var + 1)
        change = sp.Sum(sp.expand(g_next - z.function), (i, lo, hi)).doit()
        return change + sp.Add(*[g_next.subs(i, hi + 1 + t) for t in range(int(gained))])

    out = sp.S.Zero
    for t in sp.Add.make_args(now):
        coeff, rest = t.as_independent(sp.Sum, as_Add=False)
        if isinstance(rest, sp.Sum) and var not in coeff.free_symbols:
            out += coeff * grow(rest)
        elif t.has(sp.Sum):
            raise ProofFailure(f"increment: only plain sums are unrolled, got the term {t}", t)
        else:
            out += t.subs(var, var + 1) - t
    return sp.expand(out)


@dataclass
class Step:
    """One line of a derivation: a claim about expressions, and how it was decided."""

    text: str
    expr: Any = None
    status: str = "info"  # "info" (narration), "proved", "failed"
    method: str | None = None
    certificate: str | None = None  # what decided a proved step: one of CERTIFICATES
    role: str | None = None  # what a narrated step is: one of ROLES
    section: str | None = None  # the title of the derivation that made the step (kept when steps are combined)
    lemma: str | None = None  # the shared lemma the step belongs to (Derivation.lemma), e.g. "pair partition"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Step text must be a string, got {self.text!r}")
        if self.status not in ("info", "proved", "failed"):
            raise ValueError(f"Step status must be 'info', 'proved' or 'failed', got {self.status!r}")
        if self.method is not None and not isinstance(self.method, str):
            raise TypeError(f"Step method must be None or a string, got {self.method!r}")
        if self.certificate is not None and self.certificate not in CERTIFICATES:
            raise ValueError(f"Step certificate must be None or one of {CERTIFICATES}, got {self.certificate!r}")
        if self.section is not None and not isinstance(self.section, str):
            raise TypeError(f"Step section must be None or a string (a derivation's title), got {self.section!r}")
        if self.lemma is not None and (not isinstance(self.lemma, str) or not self.lemma):
            raise TypeError(f"Step lemma must be None or a lemma's name (a non-empty string), got {self.lemma!r}")
        if self.status == "info" and (not isinstance(self.role, str) or self.role not in ROLES):
            raise ValueError(f"Step role must be one of {ROLES} for a narrated step (status 'info': it carries no "
                             f"logic), got {self.role!r}")
        if self.status != "info" and self.role is not None:
            raise ValueError(f"Step role must be None for a step with status {self.status!r} (only narrated steps, "
                             f"status 'info', have a role), got {self.role!r}")
        if self.status == "proved" and self.certificate is None:
            raise ValueError(f"Step status 'proved' needs a certificate saying what decided it (one of {CERTIFICATES}), "
                             "got certificate=None")

    def latex(self) -> str | None:
        if self.expr is None:
            return None
        return sp.latex(self.expr)

    @property
    def trivial(self) -> bool:
        """Whether the step's expression adds nothing to its text: none, a bare ``True`` or an exact zero
        (scalar or matrix), where the certificate already says what was decided. Reports print no
        formula for such a step (``pemath prove --narrate``, the docs)."""
        e = self.expr
        if e is None or e is True or e is sp.true:
            return True
        if isinstance(e, sp.MatrixBase):
            return all(x == 0 for x in e)
        if isinstance(e, (int, sp.Basic)) and not isinstance(e, bool):
            return e == 0
        return False

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
        self.steps = _Steps(self.title, self.steps)

    @contextmanager
    def lemma(self, name: str) -> Iterator[None]:
        """Mark the steps made inside the ``with`` block as those of the shared lemma ``name`` (reports may
        fold them into one line: the docs' argument of a claim does). Not nested."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"lemma name must be a non-empty string, got {name!r}")
        if self.steps.lemma is not None:
            raise ValueError(f"lemma {name!r} inside lemma {self.steps.lemma!r}: lemmas are not nested")
        self.steps.lemma = name
        try:
            yield
        finally:
            self.steps.lemma = None

    def define(self, text: str, expr: Any = None) -> Any:
        """Narrate a definition: notation, the objects studied, or the published text examined (no decision)."""
        self.steps.append(Step(text, expr, "info", role="definition"))
        return expr

    def hypothesis(self, text: str, expr: Any = None) -> Any:
        """Narrate a hypothesis of the claim: part of its statement, assumed, not proved."""
        self.steps.append(Step(text, expr, "info", role="hypothesis"))
        return expr

    def remark(self, text: str, expr: Any = None) -> Any:
        """Narrate commentary: context or a reading of what was proved. No later step may rest on it."""
        self.steps.append(Step(text, expr, "info", role="remark"))
        return expr

    def cite(self, text: str, expr: Any = None) -> Any:
        """Use a standard textbook fact without deciding it here (say which): listed as trusted, never proved."""
        self.steps.append(Step(text, expr, "info", role="cited"))
        return expr

    def _proved_exprs(self) -> list[Any]:
        return [s.expr for s in self.steps if s.status == "proved" and s.expr is not None]

    def _premise(self, eq: Any) -> str:
        for st in self.steps:
            if st.status == "failed" or st.role == "remark":
                continue
            exprs = st.expr if isinstance(st.expr, (list, tuple)) else [st.expr]
            if any(eq == e for e in exprs if e is not None):
                return st.certificate or st.role or ""
        raise ProofFailure(f"{self.title}: not proved: {sp.sstr(eq)[:200]} is not an equation of this derivation "
                           "(proved, or a definition, hypothesis or cited fact)", eq)

    def specialize(self, text: str, premise: Any, values: dict[Any, Any]) -> Any:
        """The equation ``premise`` (a step of this derivation, quantified over its free symbols) at ``values``."""
        if not isinstance(premise, sp.Eq):
            raise TypeError(f"{self.title}: {text}: specialize takes a SymPy Eq, got {premise!r}")
        kind = self._premise(premise)
        out = sp.Eq(premise.lhs.subs(values), premise.rhs.subs(values), evaluate=False)
        shown = ", ".join(f"{sp.sstr(k)} = {sp.sstr(v)}" for k, v in values.items())
        self.steps.append(Step(text, out, "proved", f"{kind} equation at {shown}", "substitution"))
        return out

    def rewrite_with(self, text: str, target: Any, using: Any) -> Any:
        """``target`` with ``using.lhs`` replaced by ``using.rhs`` (both equations of this derivation)."""
        if not (isinstance(target, sp.Eq) and isinstance(using, sp.Eq)):
            raise TypeError(f"{self.title}: {text}: rewrite_with takes two SymPy Eq, got {target!r}, {using!r}")
        self._premise(target)
        self._premise(using)
        out = sp.Eq(target.lhs.xreplace({using.lhs: using.rhs}), target.rhs.xreplace({using.lhs: using.rhs}),
                    evaluate=False)
        if out == target:
            raise ProofFailure(f"{self.title}: not proved: {text} ({sp.sstr(using.lhs)} does not occur)", target)
        self.steps.append(Step(text, out, "proved", f"with {sp.sstr(using)}", "substitution"))
        return out

    def instance(self, text: str, lemma: Any, function: Any, replacement: Any) -> Any:
        """Instantiate ``lemma``, an equation proved earlier in this derivation for an arbitrary (undefined)
        ``function``, with ``function`` replaced by ``replacement`` (a ``Lambda``). Returns the instance."""
        if not any(lemma == e for e in self._proved_exprs()):
            raise ProofFailure(f"{self.title}: not proved: {text} (the lemma {sp.sstr(lemma)[:200]} is not a proved "
                               "step of this derivation)", lemma)
        if not (isinstance(function, sp.core.function.UndefinedFunction) and isinstance(replacement, sp.Lambda)):
            raise TypeError(f"{self.title}: {text}: instance replaces an undefined function by a Lambda, got "
                            f"{function!r} -> {replacement!r}")
        out = lemma.replace(function, replacement)
        if function in {f.func for f in out.atoms(sp.core.function.AppliedUndef)}:
            raise ProofFailure(f"{self.title}: not proved: {text} ({function} survives the substitution)", out)
        self.steps.append(Step(text, out, "proved", f"{function} := {sp.sstr(replacement)}", "instance"))
        return out

    def induction(self, text: str, lhs: Callable[[Any], Any], rhs: Callable[[Any], Any], var: Any, base: int,
                  *, methods: Sequence[str] | None = None) -> Any:
        """Decide ``lhs(n) == rhs(n)`` for every integer ``n >= base`` by induction on ``var``: the base case
        reduces to zero, and so does ``[lhs(n+1) - lhs(n)] - [rhs(n+1) - rhs(n)]`` (finite sums in ``n`` are
        unrolled by :func:`increment`). Returns the equation proved."""
        if not (isinstance(var, sp.Symbol) and var.is_integer):
            raise TypeError(f"{self.title}: {text}: induction runs over an integer symbol, got {var!r}")
        if isinstance(base, bool) or not isinstance(base, int):
            raise TypeError(f"{self.title}: {text}: base must be an int, got {base!r}")
        zero_base = sp.expand((lhs(sp.Integer(base)) - rhs(sp.Integer(base))).doit())
        ok_b, how_b, res_b = reduce_to_zero(zero_base, methods=methods)
        step = sp.expand(increment(lhs, var) - increment(rhs, var))
        ok_s, how_s, res_s = reduce_to_zero(step, methods=methods)
        if not (ok_b and ok_s):
            bad = "base case" if not ok_b else "step"
            res = res_b if not ok_b else res_s
            self.steps.append(Step(text, res, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} ({bad} of the induction; residual "
                               f"{sp.sstr(res)[:300]})", res)
        eq = sp.Eq(lhs(var), rhs(var), evaluate=False)
        said = {"identical": "exact evaluation"}
        self.steps.append(Step(text, eq, "proved", f"on {var} >= {base}: base case by {said.get(how_b, how_b)}, "
                               f"step {var} -> {var} + 1 by {said.get(how_s, how_s)}", "induction"))
        return eq

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
