"""SymPy proposes, the checker disposes: formulas translated to the checker's terms, and certificates found for them.

Nothing here is trusted. :func:`proposition` translates a decided step's SymPy formula, as it was built, into a
proposition of :mod:`pemath.kernel` (refusing every function the checker has no rules for, every float, every
symbol whose name is ambiguous and every undefined function declared with properties); :func:`certificate` finds
a certificate for it (cofactors of the checker's relations, found by rewriting with them; a sign; an enclosure's
precision; an induction's two halves). :func:`certify` does both and has :func:`pemath.kernel.check` verify the
result: a mistake here can only make a step go unchecked, never make a false one checked.
"""

from __future__ import annotations

import math
import unicodedata
import zlib
from fractions import Fraction
from collections.abc import Sequence
from typing import Any

import sympy as sp
from sympy.core.symbol import Str

from .. import kernel
from ..kernel import poly as KP
from ..kernel.rules import relation
from ..kernel.terms import PI, RESERVED, KernelError, names, num, term_is_valid_name

__all__ = ["Untranslatable", "NoCertificate", "Translator", "proposition", "certificate", "certify", "formal"]


class Untranslatable(ValueError):
    """The formula uses something the checker has no rules for (or cannot name unambiguously)."""


class NoCertificate(ValueError):
    """The proposer found no certificate the checker accepts."""


# --- translation ----------------------------------------------------------------------------------------------

_RELATIONS = {sp.Eq: "eq", sp.Ne: "ne", sp.StrictLessThan: "lt", sp.LessThan: "le"}
_FLIPPED = {sp.StrictGreaterThan: "lt", sp.GreaterThan: "le"}


def _sort(s: sp.Symbol) -> str:
    if s.is_integer:
        return "posint" if s.is_positive else "nat" if s.is_nonnegative else "int"
    if s.is_positive:
        return "pos"
    if s.is_nonnegative:
        return "nonneg"
    if s.is_real:
        return "real"
    raise Untranslatable(f"the symbol {s.name!r} is not declared real (the checker's variables are real)")


class Translator:
    """SymPy to checker terms, one name per symbol: a name the checker accepts as it is, or, for a notation label
    (:class:`~pemath.symbolic.notation.Label`), a name derived from its text; two different symbols never share
    a name, and a plain symbol whose name is not one the checker accepts is refused."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}
        self.binders: dict[str, tuple] = {}
        self.index: set = set()  # the indices of the sums being translated: of sort int, whatever declared
        self.lower: dict[str, tuple] = {}  # each enclosing sum's index name: its lower bound (the index is >= it)

    def _name(self, obj: Any, name: str, *, label: bool) -> str:
        if name in RESERVED:  # a plain name that is one of the checker's own words (lambda): spelled with a "_"
            name += "_"
        if not term_is_valid_name(name):
            if not label or any(unicodedata.category(ch) in ("Cf", "Cc", "Zl", "Zp") for ch in name):
                raise Untranslatable(f"the name {name!r} is not one the checker accepts (invisible, confusable or "
                                     "punctuation characters)")
            name = f"L{zlib.crc32(name.encode('utf-8')):08x}"
        if isinstance(obj, sp.Dummy):
            name = f"{name}_d{obj.dummy_index}"
        if self.names.setdefault(name, obj) != obj:
            raise Untranslatable(f"two different symbols are named {name!r}")
        return name

    def var(self, s: sp.Symbol) -> tuple:
        from .notation import Label

        name = self._name(s, s.name, label=isinstance(s, Label))
        t = ("var", name, "int" if s in self.index else _sort(s))
        self.binders[name] = t
        return t

    def term(self, e: Any) -> tuple:
        if isinstance(e, bool) or not isinstance(e, sp.Basic):
            raise Untranslatable(f"not a SymPy expression: {e!r:.80}")
        if e.is_Integer or e.is_Rational:
            return num(Fraction(int(e.p), int(e.q)))
        if e is sp.pi:
            return PI
        if e is sp.E:
            return ("exp", num(1))
        if isinstance(e, sp.Symbol):
            return self.var(e)
        if isinstance(e, sp.Add):
            return ("add", *(self.term(a) for a in e.args))
        if isinstance(e, sp.Mul):
            return ("mul", *(self.term(a) for a in e.args))
        if isinstance(e, sp.Pow):
            b, x = e.args
            if x.is_Integer:
                n = int(x)
                if abs(n) > 4096:
                    raise Untranslatable("a power beyond 4096")
                t = self.term(b)
                p = t if abs(n) == 1 else ("pow", t, abs(n))
                return p if n >= 0 else ("inv", p)
            if b.is_positive:  # b^x = exp(x log b), the definition for a positive base
                return ("exp", ("mul", self.term(x), ("log", self.term(b))))
            if x == sp.S.Half:  # the nonnegative square root (the checker requires b >= 0 by the sorts)
                return ("sqrt", self.term(b))
            raise Untranslatable(f"a power with exponent {sp.sstr(x)[:40]} of a base not declared positive")
        if isinstance(e, (sp.cos, sp.sin, sp.exp, sp.floor)):
            return (type(e).__name__, self.term(e.args[0]))
        if isinstance(e, sp.log) and len(e.args) == 1:
            return ("log", self.term(e.args[0]))
        if isinstance(e, sp.Abs):
            return ("abs", self.term(e.args[0]))
        if isinstance(e, sp.ceiling):
            return ("mul", num(-1), ("floor", ("mul", num(-1), self.term(e.args[0]))))
        if isinstance(e, sp.frac):
            a = self.term(e.args[0])
            return ("add", a, ("mul", num(-1), ("floor", a)))
        if isinstance(e, sp.Mod):  # SymPy's Mod(a, b) = a - b floor(a / b)
            a, b = self.term(e.args[0]), self.term(e.args[1])
            return ("add", a, ("mul", num(-1), b, ("floor", ("mul", a, ("inv", b)))))
        if isinstance(e, (sp.Min, sp.Max)):
            out = self.term(e.args[-1])
            for a in reversed(e.args[:-1]):
                out = (type(e).__name__.lower(), self.term(a), out)
            return out
        if isinstance(e, sp.Piecewise):
            return self._piecewise(list(e.args))
        if isinstance(e, sp.matrices.expressions.matexpr.MatrixElement) and isinstance(e.args[0], sp.MatrixBase):
            return self._element(e.args[0], self.term(e.args[1]), self.term(e.args[2]))
        if isinstance(e, sp.Indexed):  # an indexed base declared positive (nonnegative) is a function of that sort
            lab = e.base.label
            sort = "pos" if lab.is_positive is True else "nonneg" if lab.is_nonnegative is True else "real"
            return ("app", self._fun(lab, len(e.indices), label=False, sort=sort),
                    *(self.term(i) for i in e.indices))
        if isinstance(e, sp.core.function.AppliedUndef):
            f = type(e)
            kw = dict(getattr(f, "_kwargs", None) or {})
            # the checker's function binders are real-valued, of a sign or not; a function declared with more
            # (integer values, ...) is still one of these, so a theorem about these holds for it
            sort = "pos" if kw.get("positive") is True else "nonneg" if kw.get("nonnegative") is True else \
                "real" if kw.get("real") is True or not kw else None
            if sort is None:
                raise Untranslatable(f"the function {f.__name__!r} is not declared real-valued")
            return ("app", self._fun(f, len(e.args), label=False, sort=sort), *(self.term(a) for a in e.args))
        if isinstance(e, sp.Derivative):
            out = self.term(e.expr)
            for v, count in e.variable_count:
                if not isinstance(v, sp.Symbol) or not count.is_Integer or int(count) > 8:
                    raise Untranslatable("a derivative in something other than a symbol, or of order above 8")
                name = self.var(v)[1]
                for _ in range(int(count)):
                    out = ("diff", out, name)
            return out
        if isinstance(e, sp.Sum) and len(e.limits) == 1:
            k, lo, hi = e.limits[0]
            # SymPy's Sum with hi < lo - 1 is Karr's -sum(hi + 1 .. lo - 1), the checker's is 0: translated only
            # where the sorts give hi - lo + 1 >= 0, so the two agree (the eleventh audit's route 6)
            try:
                empty_ok = KP.nonneg(KP.normal(self._bound_term(hi - lo + 1)))
            except (KernelError, Untranslatable):
                empty_ok = False
            if not empty_ok:
                raise Untranslatable("a sum whose range the sorts do not show is of length >= 0 (SymPy reads a "
                                     "reversed range by Karr's convention, the checker as empty)")
            inner = Translator()  # the index is bound by the sum, not the proposition
            inner.names, inner.index = dict(self.names), self.index | {k}
            kname = inner._name(k, k.name, label=False)
            inner.lower = {**self.lower, kname: self._bound_term(lo)}
            body = inner.term(e.function)
            self.binders.update({n: t for n, t in inner.binders.items() if n != kname})
            self.names.update({n: o for n, o in inner.names.items() if n != kname})
            return ("sum", body, kname, self.term(lo), self.term(hi))
        raise Untranslatable(f"the checker has no rules for {type(e).__name__}")

    def _piecewise(self, pieces: list) -> tuple:
        """A Piecewise as nested conditionals. A branch whose condition the sorts decide false is dropped, and one
        they decide true ends it (the traced kernel's ``j % 2 == 0`` / ``== 1`` at j = 2i, 2i + 1, a pass-through
        test 2h + j < 2h): so a Piecewise without a final True branch is translated where the sorts decide which
        branch it takes for every value, and refused elsewhere (it is not defined everywhere)."""
        if not pieces:
            raise Untranslatable("a Piecewise without a final True branch is not defined everywhere (its conditions "
                                 "are not decided by the sorts)")
        (val, c), rest = pieces[0], pieces[1:]
        if c is sp.true:
            return self.term(val)
        r = self.relation(c)
        try:
            holds = KP._decided(r[0], KP.add_poly(KP.normal(r[2]), KP.normal(r[1]), -1))
        except KernelError:  # a side the checker refuses to normalise: the condition is left undecided
            holds = None
        if holds is True:
            return self.term(val)
        if holds is False:
            return self._piecewise(rest)
        return ("if", r, self.term(val), self._piecewise(rest))

    def _element(self, m: sp.MatrixBase, row: tuple, col: tuple) -> tuple:
        """Entry (row, col) of an explicit matrix as conditionals on the indices: where row = r and col = c, M_rc,
        for r = -n..n-1 as Python reads an index (r < 0 counts from the end); past those SymPy has no element (an
        IndexError) and the translation its last entry."""
        if m.rows * m.cols > 256:
            raise Untranslatable("an element of an explicit matrix of more than 256 entries")

        def pick(index: tuple, items: list) -> tuple:
            n = len(items)
            out = items[-1]
            for k in range(n - 2, -n - 1, -1):  # n - 2 .. -n: the last entry (n - 1) is the fall-through
                out = ("if", ("eq", index, num(k)), items[k % n], out)
            return out
        return pick(row, [pick(col, [self.term(m[i, j]) for j in range(m.cols)]) for i in range(m.rows)])

    def _bound_term(self, e: Any) -> tuple:
        """A sum's bound (or its length) translated on the side (its names not bound by the proposition), each
        enclosing sum's index written as its lower bound plus a natural number (so j - 1 >= 0 inside j = 1..n)."""
        from ..kernel.terms import substitute

        side = Translator()
        side.names, side.index, side.lower = dict(self.names), set(self.index), dict(self.lower)
        t = side.term(e)
        taken = set(side.names) | set(self.lower) | {str(s) for s in getattr(e, "free_symbols", ())}

        def fresh(k: str) -> str:  # a name no symbol of the formula has (the review found i_above taken)
            name = f"{k}_above"
            while name in taken:
                name += "'"
            taken.add(name)
            return name
        return substitute(t, {k: ("add", lo, ("var", fresh(k), "nat")) for k, lo in self.lower.items()})

    def _fun(self, f: Any, arity: int, *, label: bool, sort: str) -> str:
        name = self._name(f, str(getattr(f, "__name__", f)), label=label)
        self.binders[name] = ("fun", name, arity, sort)
        return name

    def relation(self, r: Any) -> tuple:
        for cls, kind in _RELATIONS.items():
            if type(r) is cls:
                return (kind, self.term(r.lhs), self.term(r.rhs))
        for cls, kind in _FLIPPED.items():
            if type(r) is cls:
                return (kind, self.term(r.rhs), self.term(r.lhs))
        raise Untranslatable(f"not a relation the checker decides: {type(r).__name__}")

    def _entries(self, e: Any) -> list:
        """An explicit matrix, or a product, sum or transpose of explicit matrices (and scalars), as rows of
        checker terms, each entry written from the definition (a product's entry is the sum over k of
        A_ik B_kj, built as a term, never computed by SymPy)."""
        if isinstance(e, sp.MatrixBase):
            if e.rows * e.cols > 256 or not e.rows or not e.cols:
                raise Untranslatable("an explicit matrix that is empty or of more than 256 entries")
            return [[self.term(e[i, j]) for j in range(e.cols)] for i in range(e.rows)]
        if isinstance(e, sp.Transpose):
            inner = self._entries(e.arg)
            return [list(col) for col in zip(*inner)]
        if isinstance(e, sp.MatAdd):
            parts = [self._entries(a) for a in e.args]
            if any(len(p) != len(parts[0]) or len(p[0]) != len(parts[0][0]) for p in parts):
                raise Untranslatable("a sum of matrices of different shapes")
            return [[("add", *(p[i][j] for p in parts)) for j in range(len(parts[0][0]))] for i in range(len(parts[0]))]
        if isinstance(e, sp.MatMul):
            scalars = [self.term(a) for a in e.args if not isinstance(a, (sp.MatrixBase, sp.MatrixExpr))]
            mats = [self._entries(a) for a in e.args if isinstance(a, (sp.MatrixBase, sp.MatrixExpr))]
            out = mats[0]
            for m in mats[1:]:
                if len(out[0]) != len(m) or len(out) * len(m) * len(m[0]) > 4096:
                    raise Untranslatable("a matrix product of mismatched or too large shapes")
                out = [[("add", *(("mul", out[i][k], m[k][j]) for k in range(len(m)))) if len(m) > 1 else
                        ("mul", out[i][0], m[0][j]) for j in range(len(m[0]))] for i in range(len(out))]
            return [[("mul", *scalars, t) if scalars else t for t in row] for row in out]
        raise Untranslatable(f"the checker has no rules for {type(e).__name__}")

    def conclusion(self, r: Any) -> tuple:
        matrices = (sp.MatrixBase, sp.MatMul, sp.MatAdd, sp.Transpose)
        if isinstance(r, sp.Eq) and isinstance(r.lhs, matrices) and isinstance(r.rhs, matrices):
            left, right = self._entries(r.lhs), self._entries(r.rhs)
            if len(left) != len(right) or len(left[0]) != len(right[0]):
                raise Untranslatable("matrices of different shapes")
            out = [("eq", a, b) for ra, rb in zip(left, right) for a, b in zip(ra, rb)]
            return out[0] if len(out) == 1 else ("and", *out)
        if isinstance(r, sp.And):
            return ("and", *(self.relation(a) for a in r.args))
        if r is sp.true:
            raise Untranslatable("a predicate SymPy already evaluated to True")
        if isinstance(r, sp.Not) and isinstance(r.args[0], sp.Contains) and \
                isinstance(r.args[0].args[1], sp.FiniteSet):
            x, members = r.args[0].args  # x not in {a, b, ...}: x != a and x != b and ...
            if not members.args:
                raise Untranslatable("membership of an empty set")
            out = [("ne", self.term(x), self.term(a)) for a in members.args]
            return out[0] if len(out) == 1 else ("and", *out)
        if isinstance(r, sp.Not):
            from ..kernel.verdict import negation

            return negation(self.relation(r.args[0]))
        return self.relation(r)

    def proposition(self, hyps: tuple, concl: tuple) -> tuple:
        binders = tuple(self.binders[n] for n in sorted(self.binders))
        return ("forall", binders, hyps, concl)


def proposition(certificate: str, formula: Any, hypotheses: Sequence[Any] = ()) -> tuple:
    """The checker's proposition of a decided step's formula (for the certificates it covers), or Untranslatable;
    with ``hypotheses`` (relations of the claim's stated hypotheses, for an equation whose sides are defined only
    under them), a rewrite's proposition holds under them."""
    if certificate == "checked":  # the step states the checker's own proposition: nothing to translate
        if hypotheses:
            raise Untranslatable("a step stated in the checker's terms takes its hypotheses in its proposition")
        return kernel.well_formed(checked_parts(formula)[0])
    tr = Translator()
    if hypotheses and certificate not in ("rewrite", "closed on construction", "free symbols", "substitution"):
        raise Untranslatable(f"steps decided by {certificate!r} take no hypotheses")
    hyps = tuple(tr.relation(h) for h in hypotheses)
    if certificate in ("rewrite", "closed on construction", "exact boolean", "interval"):
        return tr.proposition(hyps, tr.conclusion(formula))
    if certificate == "assumption query":
        kind = formula.function.name if hasattr(formula, "function") else None
        e = tr.term(formula.arguments[0])
        forms = {"positive": ("lt", num(0), e), "nonnegative": ("le", num(0), e), "nonzero": ("ne", e, num(0)),
                 "negative": ("lt", e, num(0)), "nonpositive": ("le", e, num(0))}
        if kind not in forms:
            raise Untranslatable(f"the checker has no proposition for the assumption {kind!r}")
        return tr.proposition((), forms[kind])
    if certificate == "free symbols":
        # "expr does not involve t": for every t and t', expr at t equals expr at t'
        expr, syms = formula
        primed = {v: sp.Symbol(v.name + "'", **v.assumptions0) for v in syms}
        moved = expr.xreplace(primed)
        if isinstance(expr, sp.MatrixBase):
            return tr.proposition(hyps, tr.conclusion(sp.Eq(sp.ImmutableMatrix(expr), sp.ImmutableMatrix(moved),
                                                            evaluate=False)))
        for v in list(syms) + list(primed.values()):
            tr.var(v)
        return tr.proposition(hyps, ("eq", tr.term(expr), tr.term(moved)))
    if certificate in ("substitution", "instance"):
        # the result on its own (its premise is not used: the checker decides it from scratch, or not at all)
        result = formula[-1]
        if not isinstance(result, sp.Eq):
            raise Untranslatable("a substitution whose result is not an equation")
        return tr.proposition(hyps, tr.conclusion(result))
    if certificate == "enumeration":
        variables, domain, predicate = formula
        names = list(variables) if isinstance(variables, sp.Tuple) else [variables]
        if not all(isinstance(v, sp.Symbol) and v.is_integer for v in names):
            raise Untranslatable("an enumeration over a variable that is not an integer symbol")
        try:
            cases = [tuple(c) if isinstance(c, sp.Tuple) else (c,) for c in domain]
        except TypeError:
            raise Untranslatable("an enumeration over a domain that is not finite") from None
        if not cases or any(len(c) != len(names) or not all(x.is_Integer for x in c) for c in cases):
            raise Untranslatable("an enumeration whose cases are not integer tuples")
        ranges = [(min(int(c[i]) for c in cases), max(int(c[i]) for c in cases)) for i in range(len(names))]
        if len(set(cases)) != math.prod(hi - lo + 1 for lo, hi in ranges):  # a table: the rows listed
            vs = tuple(tr.var(v) for v in names)
            rows = tuple(tuple(num(int(x)) for x in c) for c in sorted(set(cases)))
            return tr.proposition((("in", vs, rows),), tr.conclusion(predicate))
        hyps = []
        for v, (lo, hi) in zip(names, ranges):
            t = tr.var(v)
            hyps += [("le", num(lo), t), ("le", t, num(hi))]
        return tr.proposition(tuple(hyps), tr.conclusion(predicate))
    if certificate == "solution set":  # "the solutions are {s}": every solution in the domain is s
        equation, symbol, solutions = formula
        if not (isinstance(solutions, sp.FiniteSet) and len(solutions) == 1 and isinstance(equation, sp.Eq)):
            raise Untranslatable("a solution set the checker states is one solution of one equation")
        return tr.proposition((tr.relation(equation),), ("eq", tr.var(symbol), tr.term(solutions.args[0])))
    if certificate == "induction":
        var, base, lhs, rhs = formula
        v = tr.var(var)
        concl = ("eq", tr.term(lhs(var)), tr.term(rhs(var)))
        implied = {"nat": 0, "posint": 1}.get(v[2])
        hyps = () if implied is not None and int(base) <= implied else (("le", num(int(base)), v),)
        return tr.proposition(hyps, concl)
    raise Untranslatable(f"steps decided by {certificate!r} are not yet translated for the checker")


def formal(conclusion: Any, hypotheses: Any = ()) -> tuple:
    """A claim's formal statement from SymPy: ``conclusion`` (a relation, an ``And`` of relations or a list of
    them) for every value of its symbols in their declared sorts, under ``hypotheses`` (relations). Build it from
    plain SymPy expressions written for the statement, not from the functions the proof (or a mutant) uses."""
    tr = Translator()
    if isinstance(conclusion, (list, tuple)):
        rels = [tr.relation(r) for r in conclusion]
        concl = rels[0] if len(rels) == 1 else ("and", *rels)
    else:
        concl = tr.conclusion(conclusion)
    hyps = tuple(tr.relation(h) for h in hypotheses)
    return kernel.well_formed(tr.proposition(hyps, concl))


# --- proposing certificates -------------------------------------------------------------------------------------

def _poly_of_atom(key: str) -> dict:
    return {((key, 1),): Fraction(1)}


def _divide(N: dict, D: dict) -> dict | None:
    """N / D when D divides N exactly as polynomials in their atoms (SymPy divides), else None."""
    atoms = sorted({x for P in (N, D) for m in P for x, _ in m})
    if not atoms or not N or len(N) * len(D) > 4096:
        return None
    gens = sp.symbols(f"a0:{len(atoms)}")
    index = {x: g for x, g in zip(atoms, gens)}

    def expr(P: dict) -> sp.Expr:
        return sp.Add(*[sp.Rational(c.numerator, c.denominator) * sp.Mul(*[index[x] ** e for x, e in m])
                        for m, c in P.items()])

    q, r = sp.div(sp.Poly(expr(N), *gens), sp.Poly(expr(D), *gens))
    if not r.is_zero or q.is_zero:
        return None
    return {tuple(sorted((atoms[i], e) for i, e in enumerate(mono) if e)): Fraction(int(c.p), int(c.q))
            for mono, c in q.terms()}


def _pow(p: dict, n: int) -> dict:
    out = {(): Fraction(1)}
    for _ in range(n):
        out = KP.mul_poly(out, p)
    return out


def _substitute_atom(P: dict, X: str, Y: dict) -> tuple[dict, dict]:
    """P with atom X replaced by Y, and Q with P - P[X:=Y] = (X - Y) Q."""
    new: dict = {}
    Q: dict = {}
    Xp = _poly_of_atom(X)
    for mono, c in P.items():
        k = dict(mono).get(X, 0)
        rest = {tuple((a, e) for a, e in mono if a != X): c}
        if not k:
            new = KP.add_poly(new, rest)
            continue
        new = KP.add_poly(new, KP.mul_poly(rest, _pow(Y, k)))
        for i in range(k):
            Q = KP.add_poly(Q, KP.mul_poly(rest, KP.mul_poly(_pow(Xp, k - 1 - i), _pow(Y, i))))
        if len(new) > KP.MAX_TERMS or len(Q) > KP.MAX_TERMS:
            raise NoCertificate("the rewriting grew past the checker's limits")
    return new, Q


def _frac_gcd(a: Fraction, b: Fraction) -> Fraction:
    return Fraction(math.gcd(a.numerator, b.numerator), math.lcm(a.denominator, b.denominator))


_REWRITTEN = frozenset({"log", "exp", "cos", "sin", "inv", "min", "max", "if"})


def _holds_head(t: Any, heads: frozenset) -> bool:
    """Whether term ``t`` has a subterm whose head is in ``heads`` (at any depth)."""
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple) and x:
            if x[0] in heads:
                return True
            stack.extend(y for y in x[1:] if isinstance(y, tuple))
    return False


class _Proposer:
    def __init__(self, hyps: tuple) -> None:
        self.hyps = hyps
        self.gens: list[tuple[tuple, dict]] = []

    def use(self, gen: tuple, cof: dict) -> None:
        if cof:
            self.gens.append((gen, cof))

    def rule(self, name: str, args: tuple) -> tuple[tuple, dict]:
        gen = ("rule", name, args)
        try:
            return gen, relation(name, args, self.hyps)
        except KernelError as exc:
            raise NoCertificate(f"rule {name}: {exc}") from None

    def rewrite(self, P: dict, X: str, name: str, args: tuple) -> dict:
        """Rewrite atom X with the rule instance whose relation is X - Y (X's coefficient 1)."""
        gen, g = self.rule(name, args)
        Xp = _poly_of_atom(X)
        if g.get(((X, 1),)) != 1:
            raise NoCertificate(f"rule {name} does not rewrite the atom it was chosen for")
        Y = KP.add_poly(Xp, g, -1)
        P, Q = _substitute_atom(P, X, Y)
        self.use(gen, Q)
        return P

    # the function atoms, their arguments split over base angles
    def bases(self, P: dict) -> dict:
        g: dict = {}
        for mono in P:
            for a, _ in mono:
                t = KP.atom_term(a)
                if t[0] in ("cos", "sin", "exp"):
                    for m, c in KP.normal(t[1]).items():
                        g[m] = _frac_gcd(g[m], c) if m in g else abs(c)
        for m in g:
            if m == (("('pi',)", 1),) and all(c % Fraction(1, 2) == 0 for c in [g[m]]):
                g[m] = min(g[m], Fraction(1, 2))
        return g

    def step(self, P: dict) -> dict | None:
        """One rewrite of a function atom whose argument is not a base angle; None when all are."""
        base = self.bases(P)
        for mono in sorted(P, key=lambda m: (-len(m), m)):
            for a, _ in mono:
                t = KP.atom_term(a)
                f = t[0]
                if f in ("cos", "sin", "exp", "log", "inv", "floor", "abs", "min", "max", "if"):
                    nxt = self.inside(P, a, t)
                    if nxt is not None:
                        return nxt
                if f == "log":
                    nxt = self.split_log(P, a, KP.normal(t[1]))
                    if nxt is not None:
                        return nxt
                    continue
                if f not in ("cos", "sin", "exp"):
                    continue
                u = KP.normal(t[1])
                if not u:
                    return self.rewrite(P, a, f + "_zero", ())
                if f in ("cos", "sin"):
                    per = {m: c for m, c in u.items() if _periodic(m, c)}
                    if per:
                        rest = {m: c for m, c in u.items() if m not in per}
                        K = KP.term_of({_drop_pi(m): c / 2 for m, c in per.items()})
                        if rest:
                            return self.rewrite(P, a, f + "_add", (KP.term_of(rest), KP.term_of(per)))
                        return self.rewrite(P, a, f + "_2pi_int", (K,))
                if f == "exp" and len(u) == 1:
                    (m, c), = u.items()
                    if len(m) == 1 and m[0][1] == 1 and KP.atom_term(m[0][0])[0] == "log" and c == 1:
                        return self.rewrite(P, a, "exp_log", (KP.atom_term(m[0][0])[1],))
                    if len(m) == 1 and m[0][1] == 1 and KP.atom_term(m[0][0])[0] == "log" and c.denominator == 1:
                        try:
                            return self.rewrite(P, a, "exp_log_int", (KP.atom_term(m[0][0])[1], num(int(c))))
                        except NoCertificate:
                            pass
                if len(u) >= 2:
                    (m0, c0), *rest = sorted(u.items())
                    return self.rewrite(P, a, f + "_add", (KP.term_of({m0: c0}), KP.term_of(dict(rest))))
                (m, c), = u.items()
                k = c / base[m]
                b = KP.term_of({m: base[m]})
                if k == 1:
                    if m == (("('pi',)", 1),) and base[m] == Fraction(1, 2):
                        return self.rewrite(P, a, f + "_half_pi", ()) if f != "exp" else None
                    continue
                if k < 0 and f in ("cos", "sin"):
                    return self.rewrite(P, a, f + "_neg", (KP.term_of({m: -c}),))
                if k == -1:
                    continue  # exp(-b): paired with exp(b) at the end
                step_ = base[m] if k > 0 else -base[m]
                return self.rewrite(P, a, f + "_add", (KP.term_of({m: step_}), KP.term_of({m: c - step_})))
        return None

    def rewrite_all(self, P: dict, depth: int) -> dict:
        """Sums, cases and every function atom rewritten to base angles; what remains."""
        P = self.sums(P, depth)
        P = self.cases(P)
        for _ in range(2000):
            nxt = self.step(P)
            if nxt is None:
                return P
            P = nxt
        raise NoCertificate("the rewriting did not end within 2000 steps")

    def inside(self, P: dict, a: str, t: tuple) -> dict | None:
        """f(u) -> f(u') where u' is u with its logarithms of products and of exponentials split (an equation u =
        u' the checker verifies, carried into f by congruence); for an atom of several arguments (min, max, a
        conditional's sides and branches), the first argument that changes."""
        if t[0] in ("cos", "sin", "exp", "log", "inv", "floor", "abs"):
            return self._inside_at(P, a, t, (1,))
        places = {"min": [(1,), (2,)], "max": [(1,), (2,)], "if": [(1, 1), (1, 2), (2,), (3,)]}.get(t[0], [])
        for place in places:
            nxt = self._inside_at(P, a, t, place)
            if nxt is not None:
                return nxt
        return None

    def _inside_at(self, P: dict, a: str, t: tuple, place: tuple) -> dict | None:
        arg = t[place[0]] if len(place) == 1 else t[place[0]][place[1]]
        u = KP.normal(arg)
        if not any(_holds_head(KP.atom_term(x), _REWRITTEN) for m in u for x, _ in m):
            return None
        sub, new = _Proposer(self.hyps), u
        for _ in range(200):
            nxt = next((r for m in list(new) for x, _ in m if KP.atom_term(x)[0] == "log"
                        for r in [sub.split_log(new, x, KP.normal(KP.atom_term(x)[1]))] if r is not None), None)
            if nxt is None:
                try:
                    nxt = sub.step(new)
                except NoCertificate:
                    nxt = None
            if nxt is None:
                nxt = sub.cancel_inv(new)
            if nxt is None:
                decided = sub.cases(new)  # a min, max or conditional the sorts or the hypotheses decide
                nxt = decided if decided != new else None
            if nxt is None:
                break
            new = nxt
        if new == u:
            return None
        x = next(f"u{i}" for i in range(10_000) if f"u{i}" not in _hyp_names(self.hyps) | names(t))
        hole = ("var", x, "real")
        if len(place) == 1:
            ctx = t[:place[0]] + (hole,) + t[place[0] + 1:]
        else:
            r = t[place[0]]
            ctx = t[:place[0]] + (r[:place[1]] + (hole,) + r[place[1] + 1:],) + t[place[0] + 1:]
        cong = ("cong", ctx, x, arg, KP.term_of(new), tuple((g, KP.term_of(c)) for g, c in sub.gens))
        Y = KP.normal(_subst(ctx, hole, KP.term_of(new)))
        P, Q = _substitute_atom(P, a, Y)
        self.use(cong, Q)
        return P

    def cancel_inv(self, P: dict) -> dict | None:
        """u (1/u) -> 1 where the terms holding 1/u (to the first power) are a multiple of u: one instance of the
        rule inv, its cofactor the quotient (SymPy divides; the checker verifies the identity). None when none."""
        for a in sorted({x for m in P for x, e in m if KP.atom_term(x)[0] == "inv" and e == 1}):
            part = {tuple(f for f in m if f != (a, 1)): c for m, c in P.items() if (a, 1) in m}
            W = KP.normal(KP.atom_term(a)[1])
            # the terms of 1/u grouped by their atoms other than u's (a log b apart from a log s): each group
            # that u divides is cancelled
            wvars = {x for m in W for x, _ in m}
            groups: dict = {}
            for m, c in part.items():
                groups.setdefault(tuple(f for f in m if f[0] not in wvars), {})[m] = c
            R: dict = {}
            for g in groups.values():
                got = _divide(g, W)
                if got is not None:
                    R = KP.add_poly(R, got)
            if not R:
                continue
            try:
                gen, g = self.rule("inv", (KP.atom_term(a)[1],))
            except NoCertificate:
                continue
            self.use(gen, R)
            return KP.add_poly(P, KP.mul_poly(R, g), -1)
        return None

    def split_log(self, P: dict, a: str, u: dict) -> dict | None:
        """log(exp x) -> x; log of a product of positive factors -> the sum of their logs."""
        if len(u) != 1:
            return None
        (mono, c), = u.items()
        factors = [KP.term_of({(): c})] if c != 1 else []
        for x, e in mono:
            factors += [KP.atom_term(x)] * e
        try:
            if len(factors) == 1 and factors[0][0] == "exp":
                return self.rewrite(P, a, "log_exp", (factors[0][1],))
            if len(factors) >= 2:
                rest = factors[1:]
                return self.rewrite(P, a, "log_mul", (factors[0], rest[0] if len(rest) == 1 else ("mul", *rest)))
        except NoCertificate:
            return None
        return None

    def reduce(self, P: dict, depth: int = 0) -> None:
        """Append generators with P = sum cof * gen, or raise NoCertificate."""
        P = self.rewrite_all(P, depth)
        inv = sorted({a for m in P for a, _ in m if KP.atom_term(a)[0] == "inv"})
        if inv and depth < 8:
            self.clear(P, inv[0], depth)
            return
        P = self.pythagoras(P)
        P = self.exp_pairs(P)
        if P:
            raise NoCertificate(f"{len(P)} monomials remain after the rewrites, e.g. "
                                f"{kernel.show(KP.term_of(dict(list(P.items())[:3])))[:200]}")

    def clear(self, P: dict, J: str, depth: int) -> None:
        """P = Q1 (u J - 1) + J^e R with R free of J = inv(u); R reduced in turn, its cofactors times J^e."""
        u = KP.atom_term(J)[1]
        up = KP.normal(u)
        parts: dict[int, dict] = {}
        for mono, c in P.items():
            k = dict(mono).get(J, 0)
            parts.setdefault(k, {})
            parts[k] = KP.add_poly(parts[k], {tuple((a, e) for a, e in mono if a != J): c})
        e = max(parts)
        uJ = KP.mul_poly(up, _poly_of_atom(J))
        Q1: dict = {}
        R: dict = {}
        for i, Pi in parts.items():
            R = KP.add_poly(R, KP.mul_poly(Pi, _pow(up, e - i)))
            inner: dict = {}
            for j in range(e - i):
                inner = KP.add_poly(inner, _pow(uJ, j))
            Q1 = KP.add_poly(Q1, KP.mul_poly(KP.mul_poly(Pi, _pow(_poly_of_atom(J), i)), inner), -1)
            if len(R) > KP.MAX_TERMS or len(Q1) > KP.MAX_TERMS:
                raise NoCertificate("clearing a denominator grew past the checker's limits")
        gen, _ = self.rule("inv", (u,))
        self.use(gen, Q1)
        sub = _Proposer(self.hyps)
        sub.reduce(R, depth + 1)
        Je = _pow(_poly_of_atom(J), e)
        for g, c in sub.gens:
            self.use(g, KP.mul_poly(Je, c))

    # finite sums: shift a sum's index to take a constant off its arguments, split a range at another sum's end,
    # and rewrite the bodies of sums over the same range together (the sum over k of relations at k)
    def sums(self, P: dict, depth: int) -> dict:
        for rounds in range(2):
            for _ in range(200):
                nxt = None
                for move in (self.shift_sum, self.split_sum, self.count_sum):
                    nxt = move(P)
                    if nxt is not None:  # (an empty dict, P reduced to 0, is a move too)
                        break
                if nxt is None:
                    break
                P = nxt
            if rounds == 0 and depth < 4:
                P = self.sum_bodies(P, depth)
        return P

    @staticmethod
    def _sum_atoms(P: dict) -> list[tuple[str, tuple]]:
        return sorted({(a, KP.atom_term(a)) for m in P for a, _ in m if KP.atom_term(a)[0] == "sum"})

    def shift_sum(self, P: dict) -> dict | None:
        """sum(f(k + c), k, a..b) -> sum(f(k), k, a+c..b+c) where that removes every variable of c from f."""
        for a, t in self._sum_atoms(P):
            body, k, lo, hi = t[1:]
            kv = ("var", k, "int")
            for arg in _app_arguments(body):
                p = KP.normal(arg)
                if p.get(((repr(kv), 1),)) != 1:
                    continue
                c = KP.add_poly(p, KP.normal(kv), -1)
                cvars = {v for m in c for x, _ in m for v in _term_vars(KP.atom_term(x))}
                if not c or kv in cvars or not cvars:
                    continue
                shifted = KP.normal(_subst(body, kv, ("add", kv, ("mul", num(-1), KP.term_of(c)))))
                if cvars & {v for m in shifted for x, _ in m for v in _term_vars(KP.atom_term(x))}:
                    continue
                try:
                    return self.rewrite(P, a, "sum_shift", (body, k, lo, hi, KP.term_of(c)))
                except NoCertificate:
                    continue
        return None

    def count_sum(self, P: dict) -> dict | None:
        """sum(1, k, a..b) -> b - a + 1 where the sorts show b - a + 1 >= 0."""
        for a, t in self._sum_atoms(P):
            if t[1] == num(1):
                try:
                    return self.rewrite(P, a, "sum_count", (t[2], t[3], t[4]))
                except NoCertificate:
                    continue
        return None

    def split_sum(self, P: dict) -> dict | None:
        """sum(f, a..b) -> sum(f, a..c) + sum(f, c+1..b) where another sum of f starts at a and ends at c, or
        ends at b and starts at c + 1."""
        atoms = self._sum_atoms(P)
        for a, t in atoms:
            for b, u in atoms:
                if a == b or t[1:3] != u[1:3]:
                    continue
                if t[3] == u[3]:
                    cut = u[4]
                elif t[4] == u[4]:
                    cut = KP.term_of(KP.add_poly(KP.normal(u[3]), {(): Fraction(1)}, -1))
                else:
                    continue
                try:
                    return self.rewrite(P, a, "sum_split", (t[1], t[2], t[3], cut, t[4]))
                except NoCertificate:
                    continue
        return None

    def sum_bodies(self, P: dict, depth: int) -> dict:
        """For the monomials with one sum (to the first power), those over one range together: the sum over k
        of their bodies (times what is outside) reduced as a polynomial at k, one generator ``sum_of``."""
        groups: dict[tuple, dict] = {}
        taken = set(_hyp_names(self.hyps))
        for a, t in self._sum_atoms(P):
            taken |= _names(t)
        j = next(f"j{i}" for i in range(len(taken) + 1) if f"j{i}" not in taken)
        jv = ("var", j, "int")
        for mono, c in P.items():
            sums = [(x, e) for x, e in mono if KP.atom_term(x)[0] == "sum"]
            if len(sums) != 1 or sums[0][1] != 1:
                continue
            t = KP.atom_term(sums[0][0])
            body = _subst(t[1], ("var", t[2], "int"), jv)
            outside = {tuple(p for p in mono if p != sums[0]): c}
            key = (t[3], t[4])
            groups[key] = KP.add_poly(groups.get(key, {}), KP.mul_poly(outside, KP.normal(body)))
        for (lo, hi), Q in groups.items():
            if not Q:
                continue
            inside = self.hyps + (("le", lo, jv), ("le", jv, hi))
            sub, rest = _Proposer(inside), {}
            try:
                sub.reduce(Q, depth + 1)
            except NoCertificate:  # then the bodies as far as the rewrites take them (e.g. cos^2 + sin^2 to 1)
                sub = _Proposer(inside)
                try:
                    rest = sub.pythagoras(sub.rewrite_all(Q, depth + 1))
                except NoCertificate:
                    continue
                if rest == Q:
                    continue
            gen = ("sum_of", j, lo, hi, tuple((g, KP.term_of(cf)) for g, cf in sub.gens))
            self.use(gen, {(): Fraction(1)})
            done = KP.add_poly(Q, rest, -1)
            P = KP.add_poly(P, KP.normal(("sum", KP.term_of(done), j, lo, hi)), -1)
        return P

    def cases(self, P: dict) -> dict:
        """min, max, a conditional or a floor whose value the sorts (or the hypotheses) decide, replaced by it."""
        for _ in range(500):
            done = True
            for a in sorted({x for m in P for x, _ in m}):
                t = KP.atom_term(a)
                if t[0] in ("min", "max"):
                    tries = [(t[0] + "_left", t[1:3]), (t[0] + "_left", (t[2], t[1]))]
                elif t[0] == "if":
                    tries = [("if_true", t[1:4]), ("if_false", t[1:4])]
                else:
                    continue
                for name, args in tries:
                    try:
                        P = self.rewrite(P, a, name, tuple(args))
                    except NoCertificate:
                        continue
                    done = False
                    break
                if not done:
                    break
            if done:
                return P
        return P

    def reduce_monomials(self, P: dict, pick: Any, what: str) -> dict:
        """Rewrite, pass after pass, each monomial ``pick`` finds a relation for: ``pick(mono)`` gives ``(rest,
        [(rule name, args, sign), ...])`` where mono = rest * (the signed sum of the rules' relations + what
        remains), or None; each relation gets cofactor sign * coefficient * rest."""
        for _ in range(1000):
            hits = [(m, pick(m)) for m in list(P)]
            hits = [(m, h) for m, h in hits if h is not None]
            if not hits:
                return P
            for mono, (rest_mono, uses) in hits:
                c = P.get(mono)
                if c is None:  # cancelled by an earlier rewrite of this pass
                    continue
                rest = {rest_mono: c}
                for name, args, sgn in uses:
                    gen, g = self.rule(name, args)
                    self.use(gen, KP.add_poly({}, rest, sgn))
                    P = KP.add_poly(P, KP.mul_poly(rest, g), -sgn)
                if len(P) > KP.MAX_TERMS:
                    raise NoCertificate(f"the {what} grew past the checker's limits")
        raise NoCertificate(f"the {what} did not end")

    def pythagoras(self, P: dict) -> dict:
        """sin(u)^k -> sin(u)^(k-2) (1 - cos(u)^2), by the relation cos^2 + sin^2 - 1."""
        def pick(mono: tuple) -> Any:
            for a, e in mono:
                t = KP.atom_term(a)
                if t[0] == "sin" and e >= 2:
                    rest = tuple((x, y - 2) if x == a else (x, y) for x, y in mono if (x, y) != (a, 2))
                    return rest, [("pyth", (t[1],), 1)]
            return None
        return self.reduce_monomials(P, pick, "Pythagorean reduction")

    def exp_pairs(self, P: dict) -> dict:
        """exp(b) exp(-b) -> 1, by exp(0) - 1 minus exp(0) - exp(b) exp(-b)."""
        def pick(mono: tuple) -> Any:
            atoms = dict(mono)
            for a in atoms:
                t = KP.atom_term(a)
                if t[0] == "exp":
                    (neg, _), = next(iter(KP.normal(("exp", ("mul", num(-1), t[1])))))
                    if neg in atoms:
                        rest = tuple(sorted((x, y - (x in (a, neg))) for x, y in mono if y - (x in (a, neg))))
                        return rest, [("exp_zero", (), 1), ("exp_add", (t[1], ("mul", num(-1), t[1])), -1)]
            return None
        return self.reduce_monomials(P, pick, "exponential pairing")


def _app_arguments(t: Any) -> list[tuple]:
    """The arguments of every application of a bound function in term ``t``."""
    out: list[tuple] = []
    if isinstance(t, tuple) and t and t[0] != "num":
        if t[0] == "app":
            out.extend(t[2:])
        for x in t[1:]:
            out.extend(_app_arguments(x))
    return out


def _term_vars(t: tuple) -> set:
    from ..kernel.terms import variables

    return {v for v in variables(t) if v[0] == "var"}


def _names(t: Any) -> set:
    from ..kernel.terms import names

    return names(t)


def _hyp_names(hyps: tuple) -> set:
    out: set = set()
    for h in hyps:
        out |= _names(h)
    return out


def _periodic(m: tuple, c: Fraction) -> bool:
    """Whether c * m is 2 pi times an integer-valued monomial."""
    d = dict(m)
    if d.get("('pi',)") != 1 or (c / 2).denominator != 1:
        return False
    rest = _drop_pi(m)
    return not rest or KP.is_integer_valued({rest: Fraction(1)})


def _drop_pi(m: tuple) -> tuple:
    return tuple((a, e) for a, e in m if a != "('pi',)")


def _ideal(prop: tuple, rel: tuple) -> tuple:
    P = KP.add_poly(KP.normal(rel[1]), KP.normal(rel[2]), -1)
    pr = _Proposer(prop[2])
    # a hypothesis X = Y (X an atom, Y free of it) rewrites X: P = P[X := Y] + (X - Y) Q
    for j, h in enumerate(prop[2]):
        if h[0] != "eq":
            continue
        H = KP.add_poly(KP.normal(h[1]), KP.normal(h[2]), -1)
        for mono, c in H.items():
            if len(mono) == 1 and mono[0][1] == 1 and abs(c) == 1 and any(a == mono[0][0] for m in P for a, _ in m):
                X = mono[0][0]
                Y = {m: -d / c for m, d in H.items() if m != mono}
                if not any(a == X for m in Y for a, _ in m):
                    P, Q = _substitute_atom(P, X, Y)
                    pr.use(("hyp", j), {m: d / c for m, d in Q.items()})
                    break
    pr.reduce(P)
    return ("ideal", tuple((g, KP.term_of(c)) for g, c in pr.gens))


def _relation_cert(prop: tuple, rel: tuple, bits: int | None) -> tuple:
    if rel[0] == "eq":
        return _ideal(prop, rel)
    closed = not prop[1]
    if bits is not None or closed:
        d = KP.add_poly(KP.normal(rel[2]), KP.normal(rel[1]), -1)
        if closed and (not d or list(d) != [()]):
            return ("interval", _affordable_bits(rel, bits or 128))
    return ("sign",)


def _affordable_bits(rel: tuple, bits: int) -> int:
    """The precision asked for, lowered (to 32 bits at least) where the checker's bounds would refuse it: an
    enclosure's nodes times bits, and a check's bits budget, which charges every node its precision and every
    elementary evaluation at least 64 bits more. A sum of many terms is enclosed at fewer bits rather than not at
    all."""
    from ..kernel.interval import MAX_NODES, MAX_WORK, _nodes
    from ..kernel.poly import budget

    try:
        n = _nodes(("add", rel[2], ("mul", num(-1), rel[1])), MAX_NODES)
    except KernelError:
        return bits
    return max(32, min(bits, MAX_WORK // max(n, 1), budget.LIMITS["bits"] // (3 * max(n, 1))))


def certificate(certificate_kind: str, prop: tuple, method: str | None = None) -> tuple:
    """A certificate for ``prop`` (the translation of a step decided by ``certificate_kind``), or NoCertificate."""
    bits = None
    if certificate_kind == "interval":
        digits = int(str(method).split()[0]) if method else 30
        bits = int(digits * 3.33) + 16
    concl = prop[3]
    if certificate_kind == "induction":
        try:
            return _induction(prop)
        except NoCertificate as exc:  # the proposition may follow directly (split and shifted sums)
            try:
                return _relation_cert(prop, concl, bits)
            except NoCertificate:
                raise exc from None
    if certificate_kind == "enumeration":
        return _enumeration(prop)
    if concl[0] == "and":
        return ("and", tuple(_relation_cert(prop, r, bits) for r in concl[1:]))
    return _relation_cert(prop, concl, bits)


def _solution_cert(formula: Any, prop: tuple) -> tuple:
    """x = s from the hypothesis H = 0 where H factors (SymPy proposes) as g (x - s), g nonzero: x - s = H / g."""
    equation, symbol, solutions = formula
    s0 = solutions.args[0]
    g = sp.cancel(sp.factor(equation.lhs - equation.rhs) / (symbol - s0))
    if g.has(symbol - s0) or g == 0:
        raise NoCertificate("the equation does not factor through x - s")
    tr = Translator()
    inv_g = tr.term(1 / g)
    concl = prop[3]
    H = KP.add_poly(KP.normal(prop[2][0][1]), KP.normal(prop[2][0][2]), -1)
    P = KP.add_poly(KP.add_poly(KP.normal(concl[1]), KP.normal(concl[2]), -1), KP.mul_poly(KP.normal(inv_g), H), -1)
    pr = _Proposer(prop[2])
    pr.use(("hyp", 0), KP.normal(inv_g))
    pr.reduce(P)
    return ("ideal", tuple((gen, KP.term_of(c)) for gen, c in pr.gens))


def _closed_cert(rel: tuple) -> tuple:
    """For a closed relation: exact evaluation where both sides are rational, else an enclosure."""
    from ..kernel.interval import exact

    try:
        exact(rel[1]), exact(rel[2])
        return ("eval",)
    except KernelError:
        pass
    if rel[0] == "eq":
        return _ideal(("forall", (), (), rel), rel)
    return ("interval", 128)


def _enumeration(prop: tuple) -> tuple:
    """Nested enumerations, one per integer variable bounded by two literal hypotheses, each case decided
    exactly or by an enclosure."""
    from ..kernel.terms import substitute

    _, binders, hyps, concl = prop

    def case(rel: tuple, rest: tuple) -> tuple:  # one case: closed, or about the variables not enumerated
        if not _vars_of(rel):
            return _closed_cert(rel)
        return _relation_cert(("forall", rest, (), rel), rel, None)

    if hyps and hyps[0][0] == "in":
        vs, rows = hyps[0][1], hyps[0][2]
        rest = tuple(b for b in binders if b not in vs)
        rels = concl[1:] if concl[0] == "and" else (concl,)
        certs = []
        for row in rows:
            s2 = {v[1]: c for v, c in zip(vs, row)}
            one = [case((r[0], substitute(r[1], s2), substitute(r[2], s2)), rest) for r in rels]
            certs.append(("and", tuple(one)) if concl[0] == "and" else one[0])
        return ("enumset", 0, tuple(certs))
    bounded = [(hyps[i][2], hyps[i][1][1], hyps[i + 1][2][1]) for i in range(0, len(hyps), 2)]
    rest = tuple(b for b in binders if b not in {v for v, _, _ in bounded})
    if math.prod(hi - lo + 1 for _, lo, hi in bounded) > kernel.MAX_CASES:
        raise NoCertificate("too many cases")

    def level(i: int, sub: dict) -> tuple:
        v, lo, hi = bounded[i]
        certs = []
        for c in range(lo, hi + 1):
            s2 = {**sub, v[1]: num(c)}
            if i + 1 < len(bounded):
                certs.append(level(i + 1, s2))
                continue
            rels = concl[1:] if concl[0] == "and" else (concl,)
            one = [case((r[0], substitute(r[1], s2), substitute(r[2], s2)), rest) for r in rels]
            certs.append(("and", tuple(one)) if concl[0] == "and" else one[0])
        return ("enum", v[1], tuple(certs))

    return level(0, {})


def _unroll(P: dict, pr: _Proposer, target: dict | None = None) -> dict:
    """Unroll the sums of P: each sum up to hi whose hi - lo + 1 is a natural-number constant down to its empty
    sum; with ``target`` (the sums of the induction hypothesis), only a sum one term past one of them."""
    for _ in range(10_000):
        hit = None
        for mono in sorted(P):
            for a, _ in mono:
                t = KP.atom_term(a)
                if t[0] != "sum":
                    continue
                f, k, lo, hi = t[1:]
                hi1 = KP.term_of(KP.add_poly(KP.normal(hi), {(): Fraction(1)}, -1))
                if target is not None:
                    for ta in target:
                        tt = KP.atom_term(ta)
                        if tt[1:4] == (f, k, lo):
                            gap = KP.add_poly(KP.normal(hi), KP.normal(tt[4]), -1)
                            if list(gap) == [()] and gap[()] > 0 and gap[()].denominator == 1:
                                hit = (a, "sum_step", (f, k, lo, hi1))
                else:
                    span = KP.add_poly(KP.normal(hi), KP.normal(lo), -1)
                    if not span or list(span) == [()]:
                        n = span.get((), Fraction(0))
                        if n == -1:
                            hit = (a, "sum_empty", (f, k, lo))
                        elif n >= 0 and n.denominator == 1:
                            hit = (a, "sum_step", (f, k, lo, hi1))
                if hit:
                    break
            if hit:
                break
        if not hit:
            return P
        P = pr.rewrite(P, *hit)
    raise NoCertificate("unrolling the sums did not end")


def _induction(prop: tuple) -> tuple:
    _, binders, hyps, concl = prop
    if hyps:
        (_, base, v), = hyps
    else:
        v = next(b for b in binders if b[0] == "var" and b[2] in ("nat", "posint") and
                 any(x == b for x in _vars_of(concl)))
        base = num(0 if v[2] == "nat" else 1)
    base_prop = ("forall", tuple(b for b in binders if b != v), (),
                 ("eq", _subst(concl[1], v, base), _subst(concl[2], v, base)))
    pr = _Proposer(())
    P = KP.add_poly(KP.normal(base_prop[3][1]), KP.normal(base_prop[3][2]), -1)
    P = _unroll(P, pr)
    pr.reduce(P)
    base_cert = ("ideal", tuple((g, KP.term_of(c)) for g, c in pr.gens))
    taken = {b[1] for b in binders}
    m = next(("var", f"m{i}", "nat") for i in range(len(taken) + 1) if f"m{i}" not in taken)
    at = ("add", base, m)
    at1 = ("add", at, num(1))
    hyp = ("eq", _subst(concl[1], v, at), _subst(concl[2], v, at))
    goal = ("eq", _subst(concl[1], v, at1), _subst(concl[2], v, at1))
    H = KP.add_poly(KP.normal(hyp[1]), KP.normal(hyp[2]), -1)
    target = {a for mono in H for a, _ in mono if KP.atom_term(a)[0] == "sum"}
    pr = _Proposer((hyp,))
    P = KP.add_poly(KP.normal(goal[1]), KP.normal(goal[2]), -1)
    P = _unroll(P, pr, target)
    pr.use(("hyp", 0), {(): Fraction(1)})
    pr.reduce(KP.add_poly(P, H, -1))
    step_cert = ("ideal", tuple((g, KP.term_of(c)) for g, c in pr.gens))
    return ("induction", v[1], base_cert, step_cert)


def instance(formula: Any, lemma: tuple, lemma_cert: tuple) -> tuple[tuple, tuple, kernel.Theorem]:
    """An instance step (``Tuple(lemma, g(args), Lambda, result)``) as the checker's instance of the lemma's
    theorem (proposition ``lemma``, verified again with ``lemma_cert``) at g := the Lambda: ``(proposition,
    certificate, theorem)``."""
    _, g_applied, lam, _ = formula
    thm = kernel.check(lemma, lemma_cert)
    prop = proposition("instance", formula)
    tr = Translator()
    gname = tr._fun(type(g_applied), len(g_applied.args), label=False, sort="real")
    params = tuple(tr.var(p)[1] for p in lam.variables)
    lam_term = ("lambda", params, tr.term(lam.expr))
    cert = ("instance", 0, ((gname, lam_term),))
    with KP.function_sorts({b[1]: b[3] for b in prop[1] if b[0] == "fun"}):
        return prop, cert, kernel.check(prop, cert, (thm,))


def _vars_of(concl: tuple) -> set:
    from ..kernel.terms import variables

    return variables(concl[1]) | variables(concl[2])


def _subst(t: tuple, v: tuple, value: tuple) -> tuple:
    from ..kernel.terms import substitute

    return substitute(t, {v[1]: value})


def checked_parts(formula: Any) -> tuple[tuple, tuple]:
    """The proposition and certificate a "checked" step's formula holds (``Tuple(Str(json), Str(json))``: the
    checker's own terms, written by the claim, so nothing is translated from SymPy)."""
    import json

    if not (isinstance(formula, sp.Tuple) and len(formula) == 2 and all(isinstance(x, Str) for x in formula)):
        raise Untranslatable("a checked step's formula is Tuple(Str(proposition), Str(certificate)) in JSON")
    try:
        return kernel.from_json(json.loads(formula[0].name)), kernel.from_json(json.loads(formula[1].name))
    except (ValueError, RecursionError) as exc:  # KernelError is a ValueError; deep JSON a RecursionError
        raise Untranslatable(f"a checked step's formula is not JSON the checker reads ({type(exc).__name__})") from None


def certify(certificate_kind: str, formula: Any, method: str | None = None,
            context: tuple = (), hypotheses: Sequence[Any] = ()) -> tuple[tuple, tuple, kernel.Theorem]:
    """Translate, propose, and have the checker verify: ``(proposition, certificate, theorem)``; raises
    Untranslatable, NoCertificate or KernelError (the checker's refusal) otherwise."""
    prop = proposition(certificate_kind, formula, hypotheses)
    if certificate_kind == "checked":
        return prop, checked_parts(formula)[1], kernel.check(prop, checked_parts(formula)[1], context)
    with KP.function_sorts({b[1]: b[3] for b in prop[1] if b[0] == "fun"}):
        cert = _solution_cert(formula, prop) if certificate_kind == "solution set" else \
            certificate(certificate_kind, prop, method)
    return prop, cert, kernel.check(prop, cert, context)
