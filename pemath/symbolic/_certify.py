"""How each certificate is decided from its formula alone: one home, used by the kernel and by the re-checker.

A decided step stores a *formula* (a SymPy object) and a *method*; :func:`decide` re-establishes the
certificate from those two and from the formulas decided before it in the same derivation, and nothing else
(no claim code, no caller's bool). The kernel (:class:`pemath.symbolic.Derivation`) calls it before it records
a step; ``pemath prove --recheck`` calls it again, in a fresh process, on the formulas read back from the
record. The formula of each certificate:

=====================  ==============================================================================
certificate            formula, and what deciding it means
=====================  ==============================================================================
rewrite                ``Eq(lhs, rhs)``: ``lhs - rhs`` reduces to exactly zero by the rewrites up to
                       the one named in ``method`` (:data:`REWRITES`)
closed on construction ``Eq(lhs, rhs)``: ``lhs - rhs`` evaluates to zero as SymPy builds it
exact boolean          an unevaluated relational (or And/Or/Not of them): re-evaluated, it is ``true``
enumeration            ``Tuple(variables, domain, predicate)``: the predicate, a SymPy boolean in the
                       variables, is ``true`` at every element of the finite domain
interval               an unevaluated relational between two exact constants: their ``mpmath.iv``
                       enclosures at the digits of ``method`` are ordered as the relation says
assumption query       ``Q.<property>(expr)``: SymPy's assumptions answer ``expr.is_<property>`` True
                       from the declared assumptions of its symbols
free symbols           ``Tuple(expr, Tuple(symbols))``: no symbol is a free symbol of ``expr``
solution set           ``Tuple(equation, symbol, FiniteSet(solutions))``: ``solveset`` over the domain
                       the symbol's own assumptions give returns exactly that set
induction              ``Tuple(n, base, Lambda(n, lhs), Lambda(n, rhs))``: the base case and the step
                       n -> n + 1 reduce to zero (finite sums unrolled)
instance               ``Tuple(lemma, g(args), Lambda, result)``: ``lemma`` was decided earlier in the
                       derivation, ``result`` is it with ``g`` replaced, and the replacement has every
                       property the lemma's ``g`` was declared with, at every point where it is applied
substitution           ``Tuple(premise, Dict(values), result)``: ``premise`` was decided earlier,
                       ``result`` is it at ``values``, each value having the assumptions of the symbol it
                       replaces; or ``Tuple(target, using, result)``: both decided earlier, ``result`` is
                       ``target`` with ``using.lhs`` replaced by ``using.rhs``; or
                       ``Tuple(premise, Lambda, result)``: the function applied to both sides
=====================  ==============================================================================
"""

from __future__ import annotations

import ast
import functools
import itertools
import operator
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import sympy as sp
import sympy.stats as stats
from sympy.core.assumptions import _assume_defined as _ASSUME_DEFINED
from sympy.printing.repr import ReprPrinter

from ._enclose import enclose, ends
from .notation import Label, MatrixLabel

__all__ = ["ProofFailure", "REWRITES", "reduce_to_zero", "increment", "decide", "conclusion", "dump", "load",
           "evaluated", "FACTS", "known_facts", "domain_of", "MAX_CASES"]

#: The assumptions a substitution or instance must preserve, and an assumption query may ask.
FACTS = ("positive", "nonnegative", "negative", "nonpositive", "nonzero", "integer", "real", "rational", "even",
         "odd")

#: The largest domain an enumeration may run over (a bound on the re-checker's work, not on logic), and the most
#: predicate nodes it may evaluate, cases times the predicate's size (the nineteenth audit: 200,000 cases of a
#: trivial predicate took 8 s). pemath's largest enumeration has 1,025 cases.
MAX_CASES = 20_000
MAX_CASE_NODES = 2_000_000


class ProofFailure(AssertionError):
    """A step of a derivation did not reduce to exactly zero (or to ``True``), or its certificate was refused."""

    def __init__(self, message: str, residual: Any = None) -> None:
        super().__init__(message)
        self.residual = residual


# --- rewrites -----------------------------------------------------------------------------------------------

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
            if v in coeff.free_symbols or _K in t.free_symbols:  # _K free in the term would be captured
                return e
            if lo.is_integer is not True:  # the index runs over lo, lo + 1, ...: an integer only from an integer
                rest += t
                continue
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
    ("power_base+powsimp", lambda e: _powsimp(sp.expand_power_base(e))),  # (a b)^x = a^x b^x, a, b > 0 only
    ("sums", _sums),
    ("trigsimp", _trig),
    ("rewrite(exp)", _exp),
    ("rewrite(exp)+powsimp", _exp_powsimp),
    ("rewrite(floor)", lambda e: sp.expand(e.rewrite(sp.floor))),
    ("doit", lambda e: (_smooth_derivatives(e), sp.expand(sp.simplify(e.doit())))[1]),  # limits, derivatives
    ("simplify", sp.simplify),
)
_NAMES = [name for name, _ in REWRITES]


def reduce_to_zero(expr: Any, *, methods: Sequence[str] | None = None) -> tuple[bool, str | None, Any]:
    """Try to rewrite ``expr`` (expression or matrix) to exactly zero.

    Returns ``(proved, method, residual)``: the first rewrite that reaches zero, or
    ``(False, None, residual)`` with the simplest residual seen.
    """
    if methods is not None:
        if isinstance(methods, (str, bytes)) or not isinstance(methods, Sequence):
            raise TypeError(f"methods must be None or a sequence of rewrite names from {_NAMES}, got {methods!r}")
        unknown = [m for m in methods if not isinstance(m, str) or m not in _NAMES]
        if unknown:
            raise ValueError(f"methods must name rewrites from {_NAMES}, got unknown {unknown!r}")
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
        order = ["identical"] + _NAMES
        return True, max(used, key=order.index) if used else "identical", residual
    try:
        e = sp.sympify(expr, strict=True)
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise TypeError(f"expr must be a SymPy expression or matrix, got {expr!r} ({type(expr).__name__})") from exc
    if not isinstance(e, sp.Expr):
        raise TypeError(f"expr must be a SymPy expression or matrix, got {expr!r} ({type(e).__name__})")
    _no_floats(e, "expr")
    if e is sp.S.Zero:
        return True, "identical", e
    residual = e
    for name, rewrite in rewrites:
        try:
            r = rewrite(e)
        except (TypeError, ValueError, NotImplementedError, AttributeError, RecursionError):
            continue  # a rewrite SymPy cannot apply to this expression decides nothing
        if r is sp.S.Zero or r == 0:
            return True, name, sp.S.Zero
        if _ops(r) < _ops(residual):
            residual = r
    return False, None, residual


def _ops(e: Any) -> float:
    try:
        return sp.count_ops(e)
    except TypeError:  # count_ops cannot read some unevaluated trees: never the simplest residual
        return float("inf")


def _no_floats(e: Any, what: str) -> None:
    floats = e.atoms(sp.Float) if isinstance(e, sp.Basic) else set()
    if floats:  # a float can absorb a term (Float(1e20) + 1 - Float(1e20) is 0): never proof
        raise TypeError(f"{what} holds floating-point numbers {sorted(map(float, floats))[:4]}: symbolic proofs use "
                        "exact numbers (sp.Rational, sp.Integer, symbols)")


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


# --- formulas ---------------------------------------------------------------------------------------------

#: Functions whose derivative SymPy writes with a convention where none exists (sign(0) = 0, Heaviside(0) = 1/2):
#: a derivative of an expression holding one is never taken by the kernel.
_NOT_SMOOTH = (sp.Abs, sp.sign, sp.Max, sp.Min, sp.Heaviside, sp.Piecewise, sp.floor, sp.ceiling, sp.frac,
               sp.DiracDelta, sp.re, sp.im, sp.arg, sp.conjugate, sp.Mod, sp.SingularityFunction)


def _smooth_derivatives(e: Any) -> None:
    for d in (e.atoms(sp.Derivative) if isinstance(e, sp.Basic) else ()):
        rough = d.expr.atoms(*_NOT_SMOOTH)
        if rough:
            raise ProofFailure(f"the derivative {sp.sstr(d)[:120]} is of {sp.sstr(next(iter(rough)))[:60]}, which is "
                               "not differentiable everywhere: SymPy's value there is a convention, not a derivative",
                               d)


def _bound_symbols(e: Any) -> set:
    """Every variable bound inside ``e`` (by a Sum, Product, Integral, Lambda, Subs, ...)."""
    out: set = set()
    for node in (sp.preorder_traversal(e) if isinstance(e, sp.Basic) else ()):
        out |= set(getattr(node, "bound_symbols", ()) or ())
        if isinstance(node, sp.Lambda):
            out |= set(node.variables)
    return out


def _fresh_index(v: Any, lo: Any, hi: Any, integral: bool) -> Any:
    """The bound variable of a sum, product or integral, replaced by a dummy that has only what its range gives it
    (an integer index from an integer start; a real variable between real ends), never its declared assumptions,
    which the range may contradict. The same (name, range kind) gives the same dummy, so equal sums stay equal."""
    if integral:
        kind = {"real": True} if (lo.is_extended_real and hi.is_extended_real) else {}
    else:
        kind = {"integer": True} if lo.is_integer else {}
    index = zlib.crc32(f"pemath-bound:{v}:{','.join(kind)}".encode())  # the same in every process
    return sp.Dummy(f"{v}", dummy_index=index, **kind)

def rebuilt(e: Any) -> Any:
    """``e`` rebuilt bottom-up with SymPy's evaluation on: a side recorded unevaluated (built under
    ``sp.evaluate(False)``, so the record shows how it was constructed) becomes the expression SymPy makes of it."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.shape[0], e.shape[1], [rebuilt(x) for x in e])
    if not isinstance(e, sp.Basic) or not e.args or isinstance(e, (sp.Lambda,)):
        return e
    if isinstance(e, sp.Derivative):  # a derivative recorded unevaluated is taken when the formula is evaluated
        inner = rebuilt(e.expr)
        _smooth_derivatives(sp.Derivative(inner, *e.variable_count, evaluate=False))
        return sp.diff(inner, *e.variable_count)
    if isinstance(e, (sp.Sum, sp.Product)):
        odd = [z for lim in e.limits for z in lim[1:] if z.is_finite is not True and z not in (sp.oo, -sp.oo)]
        if odd:  # a limit that is infinite in disguise (a divergent integral) would get past the check below
            raise ProofFailure(f"{sp.sstr(e)[:120]}: the limit {sp.sstr(odd[0])[:80]} is neither known finite nor "
                               "+-oo", e)
    if isinstance(e, sp.Integral):  # improper or singular: its value must come out finite
        try:
            value = e.doit()
        except (NotImplementedError, TypeError, ValueError, AttributeError, RecursionError):
            value = e
        if value.has(sp.Integral) or value.atoms(sp.oo, -sp.oo, sp.zoo, sp.nan) or value.is_finite is False:
            raise ProofFailure(f"{sp.sstr(e)[:120]} is an integral SymPy does not evaluate to a finite value: its "
                               "value (and linearity) is not decided", e)
    if isinstance(e, (sp.Sum, sp.Product)) and any(z.is_infinite for lim in e.limits for z in lim[1:]):
        try:
            convergent = e.is_convergent()
        except (NotImplementedError, TypeError, ValueError, AttributeError, RecursionError):
            convergent = None
        if convergent is not sp.true:
            raise ProofFailure(f"{sp.sstr(e)[:120]} is an infinite {type(e).__name__.lower()} SymPy does not decide "
                               "convergent: its value (and linearity, reindexing) is not defined", e)
    if isinstance(e, (sp.Sum, sp.Product, sp.Integral)) and all(len(lim) == 3 for lim in e.limits):
        # each bound variable re-made with what its range gives it (not its declared assumptions)
        body, limits = e.function, []
        for v, lo, hi in e.limits:
            lo, hi = rebuilt(lo), rebuilt(hi)
            fresh = _fresh_index(v, lo, hi, isinstance(e, sp.Integral))
            if fresh in e.free_symbols:
                raise ProofFailure(f"{sp.sstr(e)[:120]} holds, free, the dummy the kernel re-makes its index as: it "
                                   "would be captured", e)
            body = body.xreplace({v: fresh})
            limits.append((fresh, lo, hi))
        return e.func(rebuilt(body), *limits)
    if isinstance(e, sp.Abs):  # kept as a node: its value is what matters (an enclosure takes it), not its form
        return sp.Abs(rebuilt(e.args[0]), evaluate=False)
    if isinstance(e, sp.Subs):  # a point outside the bound variable's assumptions would be evaluated wrongly
        for var, point in zip(e.variables, e.point):
            lost = _keeps_facts(var, point)
            if lost:
                raise ProofFailure(f"Subs at {var} = {sp.sstr(point)}: {var} is declared {', '.join(lost)}", e)
    return e.func(*[rebuilt(a) for a in e.args])


def evaluated(b: Any) -> Any:
    """An unevaluated boolean formula, evaluated: each relational rebuilt by SymPy (which decides it from exact
    values and the symbols' assumptions), then And/Or/Not."""
    if isinstance(b, sp.logic.boolalg.BooleanAtom):
        return b
    if isinstance(b, sp.core.relational.Relational):
        lhs, rhs = rebuilt(b.lhs), rebuilt(b.rhs)
        for side in (lhs, rhs, lhs - rhs if isinstance(lhs, sp.Expr) and isinstance(rhs, sp.Expr) else None):
            if isinstance(side, sp.Expr):
                _constant_signs(side)
        kinds = [s for s in (lhs, rhs) if not isinstance(s, (sp.Expr, sp.MatrixBase)) and not _rational_set(s)]
        if kinds:  # SymPy compares sets, tuples and booleans by their form: Interval(0, x) != {0} "for x >= 0"
            raise ProofFailure(f"{sp.sstr(b)[:120]}: {sp.sstr(kinds[0])[:60]} is a {type(kinds[0]).__name__}, not a "
                               "number, a matrix or a finite set of rational numbers: its relation would be decided "
                               "by its form, not its value", b)
        undefined = [s for s in (lhs, rhs) if isinstance(s, sp.Basic) and s.atoms(sp.zoo, sp.nan)]
        if undefined:
            raise ProofFailure(f"{sp.sstr(b)[:120]}: a side is undefined ({sp.sstr(undefined[0])[:80]}), so nothing "
                               "is compared", b)
        if isinstance(b, (sp.Eq, sp.Ne)):
            return type(b)(lhs, rhs)
        # the comparison operators, which dispatch to an expression's own rules (frac(z) < 1, ...)
        return {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[b.rel_op](lhs, rhs)
    if isinstance(b, sp.logic.boolalg.BooleanFunction):
        return b.func(*[evaluated(a) for a in b.args])
    raise TypeError(f"an exact boolean is a relational (or And/Or/Not of them), got {type(b).__name__}: "
                    f"{sp.sstr(b)[:120]}")


def _rational_set(s: Any) -> bool:
    """A finite set of exact rational numbers (as SymPy evaluated it): its equality is its elements'."""
    return isinstance(s, sp.FiniteSet) and all(isinstance(x, sp.Rational) for x in s.args)


def _relations(b: Any) -> list[Any]:
    if isinstance(b, sp.core.relational.Relational):
        return [b]
    if isinstance(b, sp.logic.boolalg.BooleanFunction):
        return [r for a in b.args for r in _relations(a)]
    return []


def domain_of(symbol: sp.Symbol) -> sp.Set:
    """The set a symbol ranges over, read from its own assumptions (never chosen by the caller)."""
    if symbol.is_integer:
        lo = 1 if symbol.is_positive else 0 if symbol.is_nonnegative else None
        hi = -1 if symbol.is_negative else 0 if symbol.is_nonpositive else None
        return sp.Range(lo if lo is not None else -sp.oo, (hi + 1) if hi is not None else sp.oo)
    if symbol.is_real:
        if symbol.is_positive:
            return sp.Interval.open(0, sp.oo)
        if symbol.is_nonnegative:
            return sp.Interval(0, sp.oo)
        if symbol.is_negative:
            return sp.Interval.open(-sp.oo, 0)
        if symbol.is_nonpositive:
            return sp.Interval(-sp.oo, 0)
        return sp.S.Reals
    return sp.S.Complexes


def _same_image(a: Any, b: Any) -> bool:
    """Two ImageSets over the same base sets with the same map, up to the name of the bound variable."""
    if not (isinstance(a, sp.ImageSet) and isinstance(b, sp.ImageSet)) or a.base_sets != b.base_sets:
        return False
    va, vb = a.lamda.variables, b.lamda.variables
    if len(va) != len(vb):
        return False
    fresh = [sp.Dummy() for _ in va]
    return sp.expand(a.lamda.expr.xreplace(dict(zip(va, fresh))) - b.lamda.expr.xreplace(dict(zip(vb, fresh)))) == 0


def _explicit(m: Any) -> sp.Matrix:
    return sp.Matrix(m.doit() if isinstance(m, sp.MatrixExpr) else m)


def _cases(domain: sp.Set) -> list[Any]:
    if isinstance(domain, sp.FiniteSet):
        return list(domain)
    if isinstance(domain, sp.Range):
        if not domain.is_finite_set:
            raise ProofFailure(f"an enumeration runs over a finite set, got {domain}")
        return list(domain)
    if isinstance(domain, sp.ProductSet):
        return [sp.Tuple(*c) for c in itertools.product(*[_cases(s) for s in domain.sets])]
    raise ProofFailure(f"an enumeration runs over a FiniteSet, a finite Range or a ProductSet of them, got "
                       f"{type(domain).__name__}")


def known_facts(e: Any) -> list[str]:
    """The properties among :data:`FACTS` that SymPy knows ``e`` has (for a symbol: declared or implied)."""
    return [k for k in FACTS if getattr(e, f"is_{k}", None) is True]


def _declared(symbol: Any) -> list[str]:
    """Every property a symbol (or an applied undefined function) is known to have, its declared assumptions and
    what they imply: prime, imaginary, finite, ... (not only :data:`FACTS`)."""
    facts = getattr(symbol, "assumptions0", None)
    if facts is None or isinstance(symbol, sp.core.function.AppliedUndef):
        facts = {k: getattr(symbol, f"is_{k}") for k in _ASSUME_DEFINED}
    return sorted(k for k, v in facts.items() if v is True)


def _keeps_facts(symbol: Any, value: Any) -> list[str]:
    """The properties the symbol is declared with (all of them, implied ones included) that the value is not
    known to have (asked of the value as the kernel rebuilds it: a bound variable has what its range gives it)."""
    r = rebuilt(value) if isinstance(value, sp.Basic) else value
    try:
        _constant_signs(r)  # once for every property below
    except ProofFailure:
        return _declared(symbol)
    return [k for k in _declared(symbol) if getattr(r, f"is_{k}", None) is not True]


_UNDEFINED = (sp.nan, sp.zoo, sp.oo, -sp.oo)


def _undefined_in(out: Any, before: Any, what: str, raw: Any = None) -> None:
    """Refuse ``out`` (a premise rewritten, specialised or instantiated) where it is undefined and ``before`` was not:
    an identity SymPy holds generically (``y/y = 1``) is not carried to a point where it is undefined. ``raw`` is
    ``out`` built without evaluation (``X/X`` before SymPy cancels it): its divisions are checked too."""
    if raw is not None:
        try:
            _defined(raw)
        except ProofFailure as exc:
            raise ProofFailure(f"{what} is not defined there: {exc}", out) from None
    new = out.atoms(*_UNDEFINED) - before.atoms(*_UNDEFINED) if isinstance(out, sp.Basic) else set()
    if not new and isinstance(out, sp.Basic):
        new = rebuilt(out).atoms(sp.nan, sp.zoo) - before.atoms(sp.nan, sp.zoo)
    if new or isinstance(out, sp.logic.boolalg.BooleanAtom):
        raise ProofFailure(f"{what} is undefined there ({sp.sstr(out)[:160]}): an identity SymPy holds generically is "
                           "not carried to a point where it is undefined", out)


def _plain_functions(formula: Any) -> None:
    """Every undefined function in ``formula`` is arbitrary: declared with assumptions only (``Function('f',
    fdiff=...)`` or ``eval=`` would give it a derivative or values by fiat, and a lemma "for every f" about it would
    not be about every f)."""
    for a in (formula.atoms(sp.core.function.AppliedUndef) if isinstance(formula, sp.Basic) else ()):
        extra = set(getattr(a.func, "_kwargs", {}) or {}) - set(_ASSUME_DEFINED)
        if extra:
            raise ProofFailure(f"the function {a.func} is declared with {sorted(extra)}, not assumptions alone: it is "
                               "not an arbitrary function", a)


#: Functions with poles the kernel does not track: a formula holding one decides nothing.
_POLES = (sp.gamma, sp.loggamma, sp.polygamma, sp.digamma, sp.zeta, sp.beta, sp.atanh, sp.acoth, sp.asec, sp.acsc,
          sp.asech, sp.acsch, sp.Ei, sp.li, sp.LambertW, sp.expint, sp.uppergamma, sp.lowergamma)


def _must_not_vanish(z: Any) -> Any:
    """What must be nonzero for the node ``z`` to be defined: a power's base (when its exponent may be negative), a
    log's argument, the cosine under tan and sec, the sine under cot and csc, sinh under coth and csch; else None."""
    if isinstance(z, sp.Pow) and isinstance(z.base, sp.Expr) and not isinstance(z.base, sp.Number):
        return None if _nonnegative_exponent(z.exp) else z.base
    if isinstance(z, sp.log):
        return z.args[0]
    if isinstance(z, (sp.tan, sp.sec)):
        return sp.cos(z.args[0])
    if isinstance(z, (sp.cot, sp.csc)):
        return sp.sin(z.args[0])
    if isinstance(z, (sp.coth, sp.csch)):
        return sp.sinh(z.args[0])
    return None


@functools.lru_cache(maxsize=8192)
def _nonnegative_exponent(e: Any) -> bool:
    if e.is_Number:
        return bool(e.is_extended_nonnegative) and e.is_finite is True  # nan, zoo: not known nonnegative
    return rebuilt(e).is_nonnegative is True


def _sample(symbols: set) -> dict | None:
    """One point inside every symbol's declared assumptions (integer symbols at +-3, or 4 if even; the others at
    +-7/3), or None when some free symbol is not a plain symbol (an indexed entry, a function's value)."""
    point = {}
    for s in symbols:
        if not isinstance(s, sp.Symbol):
            return None
        sign = -1 if (s.is_negative or s.is_nonpositive) else 1
        if s.is_integer:
            v = sp.Integer(sign * (4 if s.is_even else 3))
        else:
            v = sign * sp.Rational(7, 3)
        if any(getattr(v, f"is_{k}") is not True for k in _declared(s)):  # outside the symbol's domain: no sample
            return None
        point[s] = v
    return point


def _encloses_nonzero(e: Any) -> bool:
    """An enclosure at 30 digits excludes 0: of ``e``, or, for a complex constant, of its real or imaginary part."""
    parts = [e]
    if e.is_real is not True and not e.free_symbols:
        try:
            parts = list(e.as_real_imag())
        except (TypeError, ValueError, NotImplementedError, AttributeError):
            return False
    for part in parts:
        try:
            lo, hi = ends(enclose(part, 30))
        except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
            continue
        if lo > 0 or hi < 0:
            return True
    return False


#: The sign facts SymPy infers for a constant by evaluating it numerically: at a hidden zero
#: (``sin(sin(1)^2 + cos(1)^2 - 1)``) it answers "negative", so each is confirmed by an enclosure.
_SIGNS = {"positive": lambda lo, hi: lo > 0, "negative": lambda lo, hi: hi < 0, "nonzero": lambda lo, hi: lo > 0 or hi < 0,
          "nonnegative": lambda lo, hi: lo >= 0, "nonpositive": lambda lo, hi: hi <= 0}


def _constant_signs(formula: Any) -> None:
    """Every sign SymPy holds of a constant subexpression of ``formula`` (no free symbol, not a rational) is confirmed
    by an enclosure at 30 digits, or the formula is refused: SymPy's rewrites, relations and assumption answers use
    those signs, and for a constant it gets them by numeric evaluation, which a hidden zero fools."""
    seen: set = set()
    for z in (sp.preorder_traversal(formula) if isinstance(formula, sp.Basic) else ()):
        if (not isinstance(z, sp.Expr) or isinstance(z, (sp.Rational, sp.NumberSymbol)) or z in seen
                or isinstance(z, (sp.MatrixBase, sp.MatrixExpr))
                or z.has(sp.Sum, sp.Product, sp.Integral, sp.Limit, sp.Derivative)):
            continue
        seen.add(z)
        if z.free_symbols and _rebuilt_free(z):  # symbols that cancel (sin(X + y - y)) leave a constant
            continue
        problem = _sign_problem(z)
        if problem:
            raise ProofFailure(problem, z)


@functools.lru_cache(maxsize=8192)
def _rebuilt_free(z: Any) -> bool:
    """``z`` still has free symbols once SymPy evaluates it (memoised)."""
    return bool(rebuilt(z).free_symbols)


@functools.lru_cache(maxsize=8192)
def _sign_problem(z: Any) -> str | None:
    """Why SymPy's signs of the constant ``z`` (as SymPy evaluates it: a condition's side, before the condition is
    decided) are not confirmed by an enclosure, or None (a pure function of ``z``: memoised)."""
    z = rebuilt(z)
    if isinstance(z, (sp.Rational, sp.NumberSymbol)) or not z.atoms(sp.Function, sp.Pow, sp.Add):
        return None
    try:
        lo, hi = ends(enclose(z, 30))
    except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
        lo = hi = None
    if lo is not None and (lo > 0 or hi < 0):  # its sign is decided: SymPy must not hold the other one
        wrong = ("negative", "nonpositive") if lo > 0 else ("positive", "nonnegative")
        held = [k for k in wrong if getattr(z, f"is_{k}", None) is True]
    else:  # 0 is inside the enclosure, or there is none: SymPy may hold no sign but "nonnegative" of an even power
        held = [k for k in _SIGNS if getattr(z, f"is_{k}", None) is True and (lo is None or not _SIGNS[k](lo, hi))]
    if not held:
        return None
    return (f"SymPy holds the constant {sp.sstr(z)[:100]} {', '.join(held)}, which no enclosure at 30 digits confirms "
            "(SymPy infers a constant's sign numerically; a hidden zero fools it)")


#: Functions whose value jumps: SymPy evaluates them at a constant from the constant's sign (sign(c), Heaviside(c),
#: a Piecewise condition c < 0), so that sign must be confirmed.
_JUMPS = (sp.sign, sp.Heaviside, sp.Piecewise, sp.floor, sp.ceiling, sp.frac, sp.Mod, sp.DiracDelta, sp.arg, sp.atan2)


def _discontinuities(formula: Any) -> None:
    """The constants a jump function of ``formula`` is evaluated at have their signs confirmed
    (:func:`_constant_signs`): ``sign(sin(sin(1)^2 + cos(1)^2 - 1)) = -1`` is SymPy's, and false (it is 0)."""
    for z in (formula.atoms(*_JUMPS) if isinstance(formula, sp.Basic) else ()):
        for a in z.args:
            _constant_signs(a)


def _confirmed(e: Any, prop: str) -> bool:
    """SymPy holds ``prop`` of ``e`` as the kernel rebuilds it, and every sign it holds of a constant inside is
    confirmed by an enclosure (``y sin(sin(1)^2 + cos(1)^2 - 1)`` is not nonzero for y nonzero: it is 0)."""
    r = rebuilt(e) if isinstance(e, sp.Basic) else e
    if getattr(r, f"is_{prop}", None) is not True:
        return False
    try:
        _constant_signs(r)
    except ProofFailure:
        return False
    return True


def _defined(formula: Any) -> None:
    """Every division, log, tan, ... in ``formula`` is defined somewhere. A constant that must be nonzero is decided
    nonzero (by SymPy, or by an enclosure that excludes 0: ``(sin(1)^2 + cos(1)^2 - 1)/(sin(1)^2 + cos(1)^2 - 1)``
    is 0/0, not 1). An expression in symbols is read generically (the docs say so), but only if it is not
    identically 0: it is nonzero at a sample point inside its symbols' assumptions, or no rewrite reduces it to 0."""
    for s in (formula.atoms(sp.Sum, sp.Product) if isinstance(formula, sp.Basic) else ()):
        for v, lo, hi in (lim for lim in s.limits if len(lim) == 3):
            for z in sp.preorder_traversal(s.function):
                b = _must_not_vanish(z)
                if b is not None and v in b.free_symbols:
                    problem = _vanishes_on(b, v, lo, hi)
                    if problem:
                        raise ProofFailure(f"{sp.sstr(z)[:120]} needs {sp.sstr(b)[:80]} nonzero for {v} from "
                                           f"{sp.sstr(lo)} to {sp.sstr(hi)}: {problem}", z)
    for z in (sp.preorder_traversal(formula) if isinstance(formula, sp.Basic) else ()):
        if isinstance(z, _POLES):
            raise ProofFailure(f"{sp.sstr(z)[:120]}: {type(z).__name__} has poles the kernel does not track", z)
        b = _must_not_vanish(z)
        if b is not None:
            problem = _vanishes(b)
            if problem:
                raise ProofFailure(f"{sp.sstr(z)[:120]} needs {sp.sstr(b)[:80]} nonzero: {problem}", z)


def _vanishes_on(b: Any, v: Any, lo: Any, hi: Any) -> str | None:
    """Why ``b`` may vanish for the bound index ``v`` somewhere in ``lo..hi`` (an index is no generic symbol: it takes
    every value of its range), or None: term by term over a range of integers, else no integer root inside it."""
    lo, hi = rebuilt(lo), rebuilt(hi)
    if lo.is_Integer and hi.is_Integer and hi - lo < 2000:
        for value in range(int(lo), int(hi) + 1):
            problem = _vanishes(b.xreplace({v: sp.Integer(value)}))
            if problem:
                return f"at {v} = {value}, {problem}"
        return None
    u = sp.Dummy(str(v), integer=True)
    try:
        roots = sp.solveset(rebuilt(b.xreplace({v: u})), u, sp.S.Integers)
    except (NotImplementedError, TypeError, ValueError):
        return "its integer roots are not decided"
    if roots is sp.S.EmptySet:
        return None
    if not isinstance(roots, sp.FiniteSet):
        return f"its integer roots {sp.sstr(roots)[:60]} are not a finite set"
    for r in roots:
        outside = sp.Or(sp.Lt(r, lo), sp.Gt(r, hi))
        if outside is not sp.true:
            return f"it is 0 at {v} = {sp.sstr(r)}, which may lie in the range"
    return None


@functools.lru_cache(maxsize=8192)
def _vanishes(b: Any) -> str | None:
    """Why ``b`` (which must be nonzero) may vanish, or None (a pure function of ``b``: memoised)."""
    b = rebuilt(b)  # a symbol that cancels (X + y - y) or a bound index (X + k - k) leaves the constant
    if isinstance(b, sp.Number):
        return None if b != 0 else "it is 0"
    if b.is_zero is True:
        return "it is 0"
    if not b.free_symbols:
        return None if _encloses_nonzero(b) else ("a constant not decided nonzero (SymPy does not say, and no enclosure "
                                                  "at 30 digits excludes 0)")
    if _confirmed(b, "nonzero"):
        return None
    point = _sample(frozenset(b.free_symbols))
    if point is not None and _encloses_nonzero(b.xreplace(point)):
        return None
    return "it is identically 0" if reduce_to_zero(b)[0] else None


class Premise(tuple):
    """A formula a substitution or an instance may start from, with the symbols it holds *fixed*: a hypothesis is
    about its symbols, not quantified over them, except those it declares ``forall``; a decided step resting on a
    hypothesis keeps that hypothesis's fixed symbols. A fixed symbol is never specialised."""

    def __new__(cls, expr: Any, fixed: Any = ()) -> "Premise":
        return super().__new__(cls, (expr, frozenset(fixed)))

    @property
    def expr(self) -> Any:
        return self[0]

    @property
    def fixed(self) -> frozenset:
        return self[1]


def _as_premise(e: Any) -> Premise:
    return e if isinstance(e, Premise) else Premise(e)


def match(formula: Any, earlier: Sequence[Any], *, either_way: bool = False) -> Premise | None:
    """The premise among ``earlier`` that ``formula`` is (as built, as SymPy evaluates it, or, with ``either_way``,
    an equation read right to left), or None."""
    cands = [formula]
    if either_way and isinstance(formula, sp.Eq):
        cands.append(sp.Eq(formula.rhs, formula.lhs, evaluate=False))
    for f in cands:
        for e in map(_as_premise, earlier):
            if f == e.expr:
                return e
    for f in cands:
        rf = rebuilt(f)
        for e in map(_as_premise, earlier):
            if rf == rebuilt(e.expr):
                return e
    return None


def _earlier(formula: Any, earlier: Sequence[Any], what: str, *, either_way: bool = False) -> Premise:
    found = match(formula, earlier, either_way=either_way)
    if found is None:
        raise ProofFailure(f"{what} {sp.sstr(formula)[:200]} is neither decided earlier in this derivation nor one of "
                           "its hypotheses (a definition or a cited fact is never a premise of a decided step)", formula)
    return found


def fixed_of(certificate: str, formula: Any, earlier: Sequence[Any]) -> frozenset:
    """The symbols a decided substitution or instance holds fixed: those its premises hold fixed."""
    if certificate not in ("substitution", "instance"):
        return frozenset()
    out: set = set()
    first = match(formula[0], earlier)
    if first is not None:
        out |= first.fixed
    if certificate == "substitution" and isinstance(formula[1], sp.Eq):
        used = match(formula[1], earlier, either_way=True)
        if used is not None:
            out |= used.fixed
    return frozenset(out)


def used_premises(certificate: str, formula: Any) -> list[Any]:
    """The formulas a decided substitution or instance starts from (its premise, and the equation a rewrite uses)."""
    if certificate not in ("substitution", "instance"):
        return []
    return [formula[0]] + ([formula[1]] if certificate == "substitution" and isinstance(formula[1], sp.Eq) else [])


def rests_of(used: Sequence[Any], sources: Sequence[tuple[Any, tuple[str, ...]]]) -> tuple[str, ...]:
    """The hypotheses the premises ``used`` rest on, in order, each once: ``sources`` pairs each premise with the
    hypotheses it rests on; the first premise a formula matches is the one it starts from."""
    found: list[str] = []
    premises = [p for p, _ in sources]
    for f in used:
        hit = match(f, premises, either_way=True)
        for p, hyps in sources:
            if hit is not None and p == hit:
                found += [h for h in hyps if h not in found]
                break
    return tuple(found)


_NOT_A_VALUE = (sp.Derivative, sp.Integral, sp.Limit, sp.Subs, sp.Sum, sp.Product, sp.Order)


def _same(a: Any, b: Any) -> bool:
    if a == b or rebuilt(a) == rebuilt(b):
        return True
    try:
        return bool(sp.expand(a.lhs - b.lhs) == 0 and sp.expand(a.rhs - b.rhs) == 0)
    except (AttributeError, TypeError):
        return False


#: the most terms a sum or product with concrete bounds may have, and the most bits a number may reach, before
#: the kernel refuses a formula without evaluating anything (a bound on work, checked first)
MAX_SUM_TERMS = 20_000
MAX_NUMBER_BITS = 100_000
_MAX_NODES = 200_000


def _value_bits(e: Any) -> float:
    """An upper bound on log2 |value| of a number given as an integer literal or a tower of integer powers and
    exponentials (``10**(10**10)``, ``exp(exp(10**6))``), from its tree alone; 0 for anything else, whose size
    the kernel's evaluation does not blow up."""
    if isinstance(e, sp.Integer):
        return float(max(int(e).bit_length(), 1))
    if isinstance(e, sp.Pow) and isinstance(e.base, sp.Integer) and e.exp.is_number:
        ex = _value_bits(e.exp) if not isinstance(e.exp, sp.Integer) else float(abs(int(e.exp)).bit_length())
        return float("inf") if ex > 60 else (2.0 ** ex) * max(int(e.base).bit_length(), 1)
    if isinstance(e, sp.exp) and e.args[0].is_number:
        ex = _value_bits(e.args[0])
        return float("inf") if ex > 60 else (2.0 ** ex) * 1.5
    return 0.0


def _size_bound(domain: Any) -> int | None:
    """An upper bound on the number of elements of a finite SymPy set, from its form alone (no element is built);
    None when its form gives none."""
    if isinstance(domain, sp.Range):
        size = domain.size
        return int(size) if size.is_Integer else None
    if isinstance(domain, sp.FiniteSet):
        return len(domain.args)
    if isinstance(domain, sp.ProductSet):
        out = 1
        for part in domain.args:
            b = _size_bound(part)
            if b is None:
                return None
            out *= b
        return out
    if isinstance(domain, sp.Union):
        parts = [_size_bound(p) for p in domain.args]
        return None if None in parts else sum(parts)
    if isinstance(domain, (sp.Intersection, sp.Complement)):
        parts = [b for b in (_size_bound(p) for p in domain.args[:1 if isinstance(domain, sp.Complement) else None])
                 if b is not None]
        return min(parts) if parts else None
    return None


def _bounded(formula: Any) -> None:
    """Refuse, before any evaluation, a formula whose work is past the limits: a sum or product over more than
    MAX_SUM_TERMS concrete terms (it would be unrolled or enclosed term by term), a number past MAX_NUMBER_BITS
    (10^(10^10) would be computed in full), a tree of more than 200,000 nodes."""
    stack, seen = [formula], 0
    while stack:
        e = stack.pop()
        seen += 1
        if seen > _MAX_NODES:
            raise ProofFailure(f"refused before any work: the formula has more than {_MAX_NODES} nodes")
        if not isinstance(e, sp.Basic):
            continue
        if isinstance(e, (sp.Sum, sp.Product)):
            for _, lo, hi in e.limits:
                if isinstance(lo, sp.Integer) and isinstance(hi, sp.Integer) and int(hi) - int(lo) + 1 > MAX_SUM_TERMS:
                    raise ProofFailure(f"refused before any work: a sum or product of {int(hi) - int(lo) + 1} terms "
                                       f"(at most {MAX_SUM_TERMS} concrete terms)")
        if isinstance(e, (sp.Pow, sp.exp)) and e.is_number and not e.free_symbols:
            if _value_bits(e) > MAX_NUMBER_BITS:
                raise ProofFailure(f"refused before any work: a number of more than {MAX_NUMBER_BITS} bits "
                                   f"({sp.sstr(e)[:80]})")
            continue
        stack.extend(e.args)
    if _expanded_terms(formula) > MAX_EXPANDED:
        raise ProofFailure(f"refused before any work: expanded, the formula would have more than {MAX_EXPANDED} terms "
                           "(a power or product of sums)")


#: The most terms a formula may have once products and integer powers of sums are multiplied out (what ``expand``,
#: a rewrite's first step, builds: the nineteenth audit's (a+b+c+d+e+1)^24 took 34 s before it was refused).
MAX_EXPANDED = 16_000


def _expanded_terms(e: Any) -> int:
    """An upper bound on the terms of ``e`` multiplied out, capped just past MAX_EXPANDED (so the bound is cheap)."""
    import math

    cap = MAX_EXPANDED + 1
    if not isinstance(e, sp.Basic) or not e.args:
        return 1
    if isinstance(e, sp.Add):
        return min(sum(_expanded_terms(a) for a in e.args if a != 0), cap)
    if isinstance(e, sp.Mul):
        if any(a == 0 for a in e.args):  # a product with a factor 0 (kept unevaluated) expands to nothing
            return 1
        out = 1
        for a in e.args:
            out = min(out * _expanded_terms(a), cap)
        return out
    if isinstance(e, sp.Pow) and isinstance(e.exp, sp.Integer) and e.exp > 1:
        k, n = _expanded_terms(e.base), int(e.exp)
        return cap if n > 64 and k > 1 else min(math.comb(n + k - 1, k - 1) if k > 1 else 1, cap)
    return min(max(_expanded_terms(a) for a in e.args), cap)


def decide(certificate: str, formula: Any, method: str | None, earlier: Sequence[Any] = (), *,
           allowed: Sequence[str] | None = None, strict: bool = True) -> str:
    """Establish ``certificate`` for ``formula`` (and ``method``) from the formula alone, or raise
    :class:`ProofFailure` saying why not. ``earlier`` holds the conclusions decided before it in the same
    derivation (the only premises a substitution or an instance may start from). Returns ``method`` as
    established (the rewrite that closed it, the enumeration's size, ...). For a rewrite, ``method=None`` tries
    the rewrites in order (only those named in ``allowed``, when given) and returns the first that closes it.
    ``strict`` (the kernel, minting a step) also refuses formulas that decide nothing the text could mean (two
    identical sides, a relation between two bare numbers); the re-checker asks only whether the formula holds."""
    if certificate == "checked":  # the checker's own proposition and certificate: pemath.kernel alone decides
        from .. import kernel
        from .bridge import Untranslatable, checked_parts

        try:
            prop, cert = checked_parts(formula)
            kernel.check(prop, cert)
        except (Untranslatable, kernel.KernelError) as exc:
            raise ProofFailure(f"pemath.kernel refuses it: {exc}"[:400]) from None
        return "pemath.kernel"
    _no_floats(formula, f"the {certificate} formula")
    _bounded(formula)
    _plain_functions(formula)
    _defined(formula)
    _discontinuities(formula)
    if certificate in ("rewrite", "closed on construction"):
        if not isinstance(formula, sp.Eq):
            raise ProofFailure(f"a {certificate} certificate decides an equation, got {sp.sstr(formula)[:120]}")
        lhs, rhs = formula.lhs, formula.rhs
        if strict and lhs == rhs:
            raise ProofFailure(f"both sides are the same expression ({sp.sstr(lhs)[:120]}): nothing is decided (where "
                               "SymPy's evaluation is the argument, build the sides under sp.evaluate(False) so the "
                               "record shows them)", formula)
        matrix = isinstance(lhs, (sp.MatrixBase, sp.MatrixExpr))
        diff = (_explicit(rebuilt(lhs)) - _explicit(rebuilt(rhs))) if matrix else rebuilt(lhs) - rebuilt(rhs)
        if certificate == "closed on construction":
            zero = all(x == 0 for x in diff) if isinstance(diff, sp.MatrixBase) else diff is sp.S.Zero
            if not zero:
                raise ProofFailure(f"the difference is {sp.sstr(diff)[:200]}, not zero on construction", diff)
            return "identical"
        if method is None:
            methods = allowed
        elif method in _NAMES:
            methods = _NAMES[: _NAMES.index(method) + 1]
        else:
            raise ProofFailure(f"a rewrite certificate names a rewrite from {_NAMES}, got {method!r}")
        ok, how, residual = reduce_to_zero(diff, methods=methods)
        if not ok:
            raise ProofFailure(f"residual {sp.sstr(residual)[:300]}", residual)
        return how
    if certificate == "exact boolean":
        if isinstance(formula, sp.logic.boolalg.BooleanAtom):
            raise ProofFailure(f"an exact boolean decides a stored relation; {formula} is already evaluated (build "
                               "the relation with evaluate=False, so its two sides are recorded)", formula)
        relations = _relations(formula)
        if not relations:
            raise ProofFailure(f"an exact boolean decides relations, got {sp.sstr(formula)[:120]}", formula)
        bare = [r for r in relations if all(isinstance(s, sp.Rational) for s in (r.lhs, r.rhs))]
        if strict and len(bare) == len(relations):
            raise ProofFailure(f"{sp.sstr(formula)[:160]} compares numbers computed outside the kernel: put the "
                               "computation in the formula (expressions the kernel evaluates)", formula)
        value = evaluated(formula)
        if value is not sp.true:
            raise ProofFailure(f"{sp.sstr(formula)[:200]} evaluates to {sp.sstr(value)[:200]}, not True", value)
        return "exact"
    if certificate == "enumeration":
        if not (isinstance(formula, sp.Tuple) and len(formula) == 3):
            raise ProofFailure(f"an enumeration's formula is Tuple(variables, domain, predicate), got "
                               f"{sp.sstr(formula)[:120]}")
        variables, domain, predicate = formula
        variables = tuple(variables) if isinstance(variables, sp.Tuple) else (variables,)
        if len(set(variables)) != len(variables) or not all(isinstance(v, sp.Symbol) for v in variables):
            raise ProofFailure(f"an enumeration names each variable once, each a symbol, got {variables}", formula)
        if not isinstance(predicate, sp.logic.boolalg.Boolean) or isinstance(predicate, sp.logic.boolalg.BooleanAtom):
            raise ProofFailure(f"an enumeration's predicate is a SymPy boolean in its variables, got "
                               f"{sp.sstr(predicate)[:120]}", predicate)
        if not set(variables) & predicate.free_symbols:
            raise ProofFailure(f"the predicate {sp.sstr(predicate)[:120]} does not involve the enumerated variables "
                               f"{variables}: it decides nothing about them", predicate)
        if domain.is_finite_set is not True:
            raise ProofFailure(f"an enumeration runs over a finite set, got {sp.sstr(domain)[:120]}")
        bound = _size_bound(domain)
        if bound is None or bound > MAX_CASES:
            raise ProofFailure(f"refused before any case is built: the domain has {bound or 'an uncomputed number of'} "
                               f"cases (at most {MAX_CASES}, bounded from the set's form first)")
        if domain.is_empty is not False:
            raise ProofFailure(f"an enumeration needs at least one case; {sp.sstr(domain)[:120]} is empty")
        size = int(domain.size) if isinstance(domain, sp.Range) else None
        if size is not None and size > MAX_CASES:
            raise ProofFailure(f"an enumeration of {size} cases (more than {MAX_CASES})")
        cases = _cases(domain)
        if len(cases) > MAX_CASES:
            raise ProofFailure(f"an enumeration of {len(cases)} cases (more than {MAX_CASES})")
        nodes = sum(1 for _ in sp.preorder_traversal(predicate))
        if nodes * len(cases) > MAX_CASE_NODES:
            raise ProofFailure(f"an enumeration of {len(cases)} cases of a predicate of {nodes} nodes (more than "
                               f"{MAX_CASE_NODES} nodes evaluated in all)")
        for c in cases:
            values = tuple(c) if len(variables) > 1 else (c,)
            if len(values) != len(variables):
                raise ProofFailure(f"case {c} does not give a value to each of {variables}", c)
            value = evaluated(rebuilt(predicate.xreplace(dict(zip(variables, values)))).doit())
            if value is not sp.true:
                raise ProofFailure(f"false at {', '.join(f'{v} = {w}' for v, w in zip(variables, values))} "
                                   f"(decided {sp.sstr(value)[:160]})", c)
        return f"{len(cases)} cases"
    if certificate == "interval":
        if not isinstance(formula, sp.core.relational.Relational) or isinstance(formula, (sp.Eq, sp.Ne)):
            raise ProofFailure(f"an interval certificate decides <, <=, > or >=, got {sp.sstr(formula)[:120]}")
        if strict and all(isinstance(z, sp.Rational) for z in (formula.lhs, formula.rhs)):
            raise ProofFailure(f"{sp.sstr(formula)[:160]} compares numbers computed outside the kernel: put the "
                               "computation in the formula (expressions the kernel encloses)", formula)
        try:
            dps = int(str(method).split()[0])
        except (ValueError, IndexError):
            raise ProofFailure(f"an interval certificate's method gives its digits ('30 digits'), got {method!r}")
        try:
            lo_l, hi_l = ends(enclose(rebuilt(formula.lhs), dps))
            lo_r, hi_r = ends(enclose(rebuilt(formula.rhs), dps))
        except (ValueError, TypeError, ZeroDivisionError, ArithmeticError) as exc:  # mpmath's ComplexResult too
            raise ProofFailure(f"the sides cannot be enclosed as real numbers: {exc}", formula) from None
        if any(mpmath.isinf(z) or mpmath.isnan(z) for z in (lo_l, hi_l, lo_r, hi_r)):
            raise ProofFailure(f"an enclosure of {sp.sstr(formula)[:120]} is unbounded (a pole, or a division by an "
                               "interval holding 0): nothing is decided", formula)
        op = formula.rel_op
        ok = {">": lo_l > hi_r, ">=": lo_l >= hi_r, "<": hi_l < lo_r, "<=": hi_l <= lo_r}[op]
        shown = (f"[{mpmath.nstr(lo_l, 8)}, {mpmath.nstr(hi_l, 8)}] {op} "
                 f"[{mpmath.nstr(lo_r, 8)}, {mpmath.nstr(hi_r, 8)}]")
        if not ok:
            raise ProofFailure(f"the enclosures {shown} at {dps} digits do not decide it", formula)
        return f"{dps} digits: {shown}"
    if certificate == "assumption query":
        if not isinstance(formula, sp.assumptions.assume.AppliedPredicate):
            raise ProofFailure(f"an assumption query's formula is Q.<property>(expr), got {sp.sstr(formula)[:120]}")
        prop = formula.function.name
        if prop not in FACTS:
            raise ProofFailure(f"an assumption query asks one of {FACTS}, got {prop!r}")
        (e,) = formula.arguments
        if not _confirmed(e, prop):  # a bound variable has only what its range gives it; a constant's sign is enclosed
            raise ProofFailure(f"{sp.sstr(e)[:200]} is_{prop} is not True from its symbols' assumptions", e)
        given = sorted(f"{s} {', '.join(known_facts(s))}" for s in e.free_symbols)
        return f"is_{prop} from: " + ("; ".join(given) or "exact numbers")
    if certificate == "free symbols":
        e, symbols = formula
        if e.atoms(stats.rv.RandomSymbol):
            raise ProofFailure(f"{sp.sstr(e)[:120]} holds random symbols, whose free symbols omit their distributions' "
                               "parameters: free_of decides nothing about it", e)
        hit = e.free_symbols & set(symbols)
        if hit:
            raise ProofFailure(f"{sp.sstr(e)[:200]} involves {sorted(map(str, hit))}", e)
        return "free of " + ", ".join(sorted(map(str, symbols)))
    if certificate == "solution set":
        equation, symbol, expected = formula
        equation, expected = rebuilt(equation), rebuilt(expected)  # bound variables re-made from their ranges
        others = equation.free_symbols - {symbol}
        if others:  # solveset answers for generic parameters: only where no parameter value can degenerate it
            lhs_rhs = equation.lhs - equation.rhs if isinstance(equation, sp.Eq) else equation
            try:
                poly = sp.Poly(sp.numer(sp.together(rebuilt(lhs_rhs))), symbol)
                lead = poly.LC()
            except (sp.PolynomialError, sp.GeneratorsNeeded, TypeError, ValueError):
                poly, lead = None, None
            if poly is None or not 1 <= poly.degree() <= 2 or not _confirmed(lead, "nonzero"):
                raise ProofFailure(
                    f"{sp.sstr(equation)[:120]} also holds {sorted(map(str, others))}: a solution set with parameters is "
                    f"decided only for a polynomial in {symbol} of degree 1 or 2 whose leading coefficient is nonzero for "
                    "every value the parameters' assumptions allow (got "
                    f"{sp.sstr(lead) if lead is not None else 'no polynomial'}, degree "
                    f"{poly.degree() if poly is not None else '-'}), since solveset does not split out the values where "
                    "the equation or its roots' formula degenerates (Cardano's roots divide by a cube root)", equation)
        roots = [z for z in equation.atoms(sp.Pow) if symbol in z.base.free_symbols and not z.exp.is_integer]
        if roots:
            raise ProofFailure(f"{sp.sstr(roots[0])} is a power with a non-integer exponent of {symbol}: solveset's "
                               "real branch and SymPy's principal value differ, so it is not decided", equation)
        domain = domain_of(symbol)
        got = sp.solveset(equation, symbol, domain)
        same = (sp.Eq(got, expected) is sp.true) if isinstance(got, sp.FiniteSet) else (
            isinstance(got, sp.ImageSet) and _same_image(got, expected))
        if not same:
            raise ProofFailure(f"solveset over {sp.sstr(domain)} (the domain {symbol}'s assumptions give) returned "
                               f"{sp.sstr(got)[:200]}, not {sp.sstr(expected)[:200]}", got)
        return f"solveset over {sp.sstr(domain)}: {sp.sstr(got)}"
    if certificate == "induction":
        var, base, lhs, rhs = formula
        if not (isinstance(var, sp.Symbol) and var.is_integer):
            raise ProofFailure(f"induction runs over an integer symbol, got {var!r}")
        broken = [k for k in ("even", "odd", "prime", "composite", "zero") if getattr(var, f"is_{k}") is True]
        if var.is_nonzero and not (var.is_positive or var.is_negative):
            broken.append("nonzero")
        if broken:
            raise ProofFailure(f"{var} is declared {', '.join(broken)}, which n -> n + 1 does not keep: the step's "
                               "assumptions would not hold along the chain", var)
        if strict and lhs(var) == rhs(var):
            raise ProofFailure(f"both sides are the same expression ({sp.sstr(lhs(var))[:120]}): nothing is decided "
                               "by the induction", formula)
        for side in (lhs(var), rhs(var)):  # reduced generically: refused where a side is undefined on the chain
            for z in (sp.preorder_traversal(side) if isinstance(side, sp.Basic) else ()):
                b = _must_not_vanish(z)
                problem = _vanishes_on(b, var, base, sp.oo) if b is not None and var in b.free_symbols else None
                if problem:
                    raise ProofFailure(f"{sp.sstr(side)[:120]} is undefined on the chain from the base ({sp.sstr(z)[:60]}: "
                                       f"{problem}): the step, reduced generically, says nothing there", side)
        outside = _keeps_facts(var, base)
        if outside:
            raise ProofFailure(f"the base {sp.sstr(base)} is not known to be {', '.join(outside)}, as {var} is declared: "
                               "the step is reduced under those assumptions, so the chain must start inside them", base)
        zero_base = sp.expand((lhs(base) - rhs(base)).doit())
        ok_b, how_b, res_b = reduce_to_zero(zero_base, methods=allowed)
        if not ok_b:
            raise ProofFailure(f"base case {var} = {base}: residual {sp.sstr(res_b)[:300]}", res_b)
        ok_s, how_s, res_s = reduce_to_zero(sp.expand(increment(lhs, var) - increment(rhs, var)), methods=allowed)
        if not ok_s:
            raise ProofFailure(f"step {var} -> {var} + 1: residual {sp.sstr(res_s)[:300]}", res_s)
        said = {"identical": "exact evaluation"}
        return (f"on {var} >= {base}: base case by {said.get(how_b, how_b)}, step {var} -> {var} + 1 by "
                f"{said.get(how_s, how_s)}")
    if certificate == "instance":
        lemma, applied, replacement, result = formula
        _earlier(lemma, earlier, "the lemma")
        function = applied.func
        if not isinstance(function, sp.core.function.UndefinedFunction):
            raise ProofFailure(f"an instance replaces an undefined function (an arbitrary one the lemma holds for), "
                               f"got {function}")
        if not isinstance(replacement, sp.Lambda):
            raise ProofFailure(f"an instance replaces a function by a Lambda, got {replacement!r}")
        if replacement.atoms(*_UNDEFINED):
            raise ProofFailure(f"{sp.sstr(replacement)} takes the value oo, zoo or nan: not a function to numbers",
                               replacement)
        captured = replacement.free_symbols & _bound_symbols(lemma)
        if captured:
            raise ProofFailure(f"{sp.sstr(replacement)} holds {sorted(map(str, captured))}, bound inside the lemma: the "
                               "replacement would be captured by the lemma's sum or integral", replacement)
        out = lemma.replace(function, replacement)
        if not (out == result or rebuilt(out) == rebuilt(result)):
            raise ProofFailure(f"the lemma with {function} := {sp.sstr(replacement)} is {sp.sstr(out)[:200]}, not "
                               f"the recorded {sp.sstr(result)[:200]}", out)
        if function in {f.func for f in out.atoms(sp.core.function.AppliedUndef)}:
            raise ProofFailure(f"{function} survives the substitution", out)
        if type(out) is not type(lemma):
            raise ProofFailure(f"the lemma with {function} := {sp.sstr(replacement)} evaluates to {sp.sstr(out)[:120]}",
                               out)
        with sp.evaluate(False):
            raw = lemma.replace(function, replacement)
        _undefined_in(out, lemma, f"the lemma with {function} := {sp.sstr(replacement)}", raw)
        for a in lemma.atoms(sp.core.function.AppliedUndef):
            if a.func == function:
                lost = _keeps_facts(a, replacement(*a.args))
                if lost:
                    raise ProofFailure(f"the lemma's {a} is declared {', '.join(lost)}, and {sp.sstr(replacement)} "
                                       f"at {a.args} is not known to be", a)
        return f"{function} := {sp.sstr(replacement)}"
    if certificate == "substitution":
        premise, values, result = formula
        source = _earlier(premise, earlier, "the premise")
        if isinstance(values, sp.Lambda):  # congruence: the same function applied to both sides
            if values.expr.atoms(*_NOT_A_VALUE):
                raise ProofFailure(f"congruence applies a function of the value; {sp.sstr(values)} reads the form of "
                                   "its argument (a derivative, limit, sum or substitution)", values)
            out = sp.Eq(values(premise.lhs), values(premise.rhs), evaluate=False)
            _undefined_in(out, premise, f"{sp.sstr(values)} on both sides")
            if not _same(out, result):
                raise ProofFailure(f"{sp.sstr(values)} on both sides gives {sp.sstr(out)[:200]}, not "
                                   f"{sp.sstr(result)[:200]}", out)
            return f"{sp.sstr(values)} applied to both sides"
        if isinstance(values, sp.Eq):  # a rewrite with another decided equation
            _earlier(values, earlier, "the equation used", either_way=True)  # an equation may be read either way
            captured = values.lhs.free_symbols & _bound_symbols(premise)
            if captured:
                raise ProofFailure(f"{sp.sstr(values.lhs)} holds {sorted(map(str, captured))}, bound inside the "
                                   "premise: rewriting under the binder would change what it ranges over", values)
            out = sp.Eq(premise.lhs.xreplace({values.lhs: values.rhs}), premise.rhs.xreplace({values.lhs: values.rhs}),
                        evaluate=False)
            if out == premise:
                raise ProofFailure(f"{sp.sstr(values.lhs)} does not occur in the premise", premise)
            with sp.evaluate(False):
                raw = premise.xreplace({values.lhs: values.rhs})
            _undefined_in(out, premise, f"the premise rewritten with {sp.sstr(values)}", raw)
            if not _same(out, result):
                raise ProofFailure(f"the rewrite gives {sp.sstr(out)[:200]}, not {sp.sstr(result)[:200]}", out)
            return f"with {sp.sstr(values)}"
        values = dict(values)
        for s, v in values.items():
            if s not in premise.free_symbols:
                raise ProofFailure(f"{s} is not a free symbol of the premise", s)
            if s in source.fixed:
                raise ProofFailure(f"{s} is fixed by a hypothesis the premise rests on (it is about one {s}, not every "
                                   f"{s}): it is not specialised", s)
            lost = _keeps_facts(s, v)
            if lost:
                raise ProofFailure(f"{s} is declared {', '.join(lost)}; the value {sp.sstr(v)} is not known to be "
                                   f"(a specialisation stays inside the premise's quantifier)", v)
        out = sp.Eq(premise.lhs.subs(values), premise.rhs.subs(values), evaluate=False)
        with sp.evaluate(False):
            raw = premise.xreplace(values)
        _undefined_in(out, premise, f"the premise at {values}", raw)
        if not _same(out, result):
            raise ProofFailure(f"the premise at {values} is {sp.sstr(out)[:200]}, not {sp.sstr(result)[:200]}", out)
        return "at " + ", ".join(f"{sp.sstr(k)} = {sp.sstr(v)}" for k, v in values.items())
    raise ProofFailure(f"unknown certificate {certificate!r}")


def conclusion(certificate: str, formula: Any) -> Any:
    """What a decided step establishes, as a SymPy object (a later substitution or instance may start from it)."""
    if certificate in ("rewrite", "closed on construction", "exact boolean", "interval", "assumption query"):
        return formula
    if certificate == "induction":
        var, _, lhs, rhs = formula
        return sp.Eq(lhs(var), rhs(var), evaluate=False)
    if certificate in ("instance", "substitution"):
        return formula[-1]
    if certificate == "solution set":  # "the solutions are ...": not an equation a substitution may start from
        return formula
    return formula


class _Repr(ReprPrinter):
    """``srepr`` that keeps what the default drops and a formula's meaning depends on: the assumptions of an
    undefined function (``Function('g', real=True)``), and a :class:`~pemath.symbolic.notation.Label`'s spelling."""

    def _print_FunctionClass(self, expr: Any) -> str:
        kw = getattr(expr, "_kwargs", None)
        if isinstance(expr, sp.core.function.UndefinedFunction) and kw:
            given = ", ".join(f"{k}={v!r}" for k, v in sorted(kw.items()))
            return f"Function({expr.__name__!r}, {given})"
        return super()._print_FunctionClass(expr)

    def _print_Label(self, expr: Any) -> str:
        given = "".join(f", {k}={v!r}" for k, v in sorted(expr._assumptions_orig.items()))
        return f"Label({expr.name!r}, {expr.tex!r}{given})"

    def _print_MatrixLabel(self, expr: Any) -> str:
        return f"MatrixLabel({expr.name!r}, {self._print(expr.shape[0])}, {self._print(expr.shape[1])}, {expr.tex!r})"


def _evaluating(build: Any) -> Any:
    """A constructor that evaluates while a formula is read unevaluated: sets, limits and the like are objects,
    not expressions whose construction the record shows, and some of them cannot be built unevaluated."""
    def make(*args: Any, **kwargs: Any) -> Any:
        with sp.evaluate(True):
            return build(*args, **kwargs)
    return make


def _namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {k: getattr(sp, k) for k in dir(sp) if not k.startswith("_")}
    ns.update({k: getattr(stats, k) for k in dir(stats) if not k.startswith("_") and k not in ns})  # E is e
    ns.update({"ImmutableDenseMatrix": sp.ImmutableDenseMatrix, "MutableDenseMatrix": sp.ImmutableDenseMatrix,
               "Q": sp.Q, "AppliedPredicate": sp.assumptions.assume.AppliedPredicate, "Label": Label,
               "MatrixLabel": MatrixLabel, "ExprCondPair": sp.functions.elementary.piecewise.ExprCondPair,
               "RandomSymbol": stats.rv.RandomSymbol,
               "MatrixElement": sp.matrices.expressions.matexpr.MatrixElement,
               "Str": sp.core.symbol.Str})  # a name, never parsed: a checked step's JSON is held in one
    for name in ("Range", "Interval", "FiniteSet", "ProductSet", "ImageSet", "Intersection", "Union", "Complement",
                 "Limit", "Integers", "Naturals", "Naturals0", "Reals", "Complexes", "NormalDistribution",
                 "SingleContinuousPSpace", "IndependentProductPSpace"):
        obj = ns.get(name) or getattr(stats.crv_types, name, None) or getattr(stats.crv, name, None) or \
            getattr(stats.rv, name, None)
        if obj is not None and callable(obj):
            ns[name] = _evaluating(obj)
    return ns


def dump(formula: Any) -> str:
    """A formula as text that :func:`load` reads back to the same SymPy object (``srepr``, keeping the
    assumptions of undefined functions)."""
    return _Repr().doprint(formula)


#: Constructors that take a name (a string) as an argument; a string anywhere else is refused, since SymPy
#: parses (and so evaluates) a string it is given as an expression.
_NAMED = {"Symbol": (0,), "Dummy": (0,), "Function": (0,), "Str": (0,), "Label": (0, 1), "MatrixLabel": (0, 3),
          "IndexedBase": (0,), "Idx": (0,), "MatrixSymbol": (0,), "Wild": (0,)}
#: Callables never reachable from a record: they parse or compile text.
_REFUSED = {"sympify", "S", "parse_expr", "lambdify", "sympify_method_args", "var", "symbols", "init_printing",
            "preview", "srepr", "pprint", "print_python", "python", "rcode", "ccode"}
#: The only constructors a record may call: those srepr writes for the formulas pemath records, and the
#: classes of the routes the tests keep (each builds its object without computing: under evaluate(False) a
#: function class records its arguments). Anything else SymPy exports is refused before it runs (the eighteenth
#: audit called nextprime and multinomial_coefficients: minutes and a gigabyte before any bound).
_CONSTRUCTORS = frozenset("""
    Symbol Dummy Wild Function Str Label MatrixLabel Integer Rational Float Add Mul Pow Abs Mod floor ceiling sign
    exp log sin cos tan cot sec csc asin acos atan acot atan2 sinh cosh tanh re im arg conjugate Max Min
    Heaviside
    Sum Product Integral Limit Derivative Subs Lambda Tuple Dict Piecewise ExprCondPair
    Equality Unequality LessThan StrictLessThan GreaterThan StrictGreaterThan Eq Ne Lt Le Gt Ge
    And Or Not Xor Implies Equivalent ITE Contains
    Indexed IndexedBase Idx MatrixSymbol MatrixElement MatMul MatAdd MatPow Transpose Inverse Trace Determinant
    HadamardProduct Identity ZeroMatrix ImmutableDenseMatrix MutableDenseMatrix
    FiniteSet Interval Range ImageSet Intersection Union Complement ProductSet
    AppliedPredicate RandomSymbol NormalDistribution SingleContinuousPSpace IndependentProductPSpace Expectation
    """.split())
#: The only constant names: SymPy's singletons and sets as srepr writes them, and the predicates' holder Q.
_CONSTANTS = frozenset("I pi E oo zoo nan true false Integers Naturals Naturals0 Reals Complexes EmptySet Q".split())


def _check_record_text(text: str, ns: dict[str, Any]) -> None:
    """Refuse anything but calls of SymPy constructors on numbers, names and other such calls (srepr's grammar):
    no attribute access (but ``Q.<predicate>``), no underscore names, no string except a constructor's name."""
    tree = ast.parse(text, mode="eval")

    def bad(node: ast.AST, why: str) -> None:
        raise ValueError(f"a record formula holds {why} ({ast.dump(node)[:80]}): it is not srepr")

    allowed_strings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                name = node.func.id
                if name not in _CONSTRUCTORS or name not in ns:
                    bad(node, f"a call of {name!r}, not a constructor a record holds")
                for i in _NAMED.get(name, ()):
                    if i < len(node.args):
                        allowed_strings.add(id(node.args[i]))
            elif isinstance(node.func, ast.Call) and isinstance(node.func.func, ast.Name) and \
                    node.func.func.id == "Function":
                pass  # an undefined function applied: Function('g', real=True)(x), the inner call checked too
            elif not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                      and node.func.value.id == "Q" and not node.func.attr.startswith("_")):
                bad(node, "a call of something other than a SymPy constructor")
            for kw in node.keywords:
                if kw.arg is None or kw.arg.startswith("_"):
                    bad(node, "a keyword that is not a name")
        elif isinstance(node, ast.Name):
            if node.id not in ns or not (node.id in _CONSTANTS or node.id in _CONSTRUCTORS):
                bad(node, f"the name {node.id!r}")
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "Q" and not node.attr.startswith("_")):
                bad(node, "an attribute access")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and id(node) not in allowed_strings:
                bad(node, "a string where SymPy would parse it")
            if not isinstance(node.value, (str, int, float, bool, type(None))):
                bad(node, "a constant of another kind")
        elif not isinstance(node, (ast.Expression, ast.keyword, ast.Tuple, ast.List, ast.Load, ast.UnaryOp,
                                   ast.USub, ast.UAdd)):
            bad(node, f"a {type(node).__name__}")


def load(text: str) -> Any:
    """Read a formula written by :func:`dump`, without evaluating it (each relation keeps its two sides). The text
    is checked to be srepr's grammar first (calls of SymPy constructors only), so a tampered record cannot run
    code."""
    if not isinstance(text, str):
        raise TypeError(f"a formula is read from its srepr text, got {type(text).__name__}")
    ns = _namespace()
    _check_record_text(text, ns)
    with sp.evaluate(False):
        return eval(text, {"__builtins__": {}}, ns)  # noqa: S307 - checked above: srepr's grammar only
