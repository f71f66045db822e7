"""Propositions, certificates and the one function that turns a checked certificate into a Theorem.

A proposition::

    ("forall", binders, hypotheses, conclusion)

``binders`` is a tuple of variables (``("var", name, sort)``) and functions (``("fun", name, arity, sort)``:
every function of that many real arguments whose values are of that sort: real, positive or nonnegative); ``hypotheses`` a tuple of atomic relations, memberships (below) and
universal hypotheses ``("all", (("var", name, sort), ...), relation)``: the atomic relation holds for every value
of those variables in their sorts; it is closed (its variables are its own, their names bound nowhere else in the
proposition; its functions are the proposition's); ``conclusion`` an
atomic relation or ``("and", r1, r2, ...)``. An atomic relation is ``("eq"|"lt"|"le"|"ne", a, b)``. It means: for
every value of the binders in their sorts at which every hypothesis holds, the conclusion holds. A proposition
is refused unless every free variable is bound with that sort, every ``inv`` is of a term shown nonzero (by the
sorts or a hypothesis), and every sum's bounds are integer-valued.

A certificate (all plain data, so a record stores it and the re-checker replays it):

* ``("ideal", ((generator, cofactor), ...))`` for an equation a = b: the normal form of a - b equals the sum of
  cofactor x generator exactly. A generator is ``("rule", name, args)`` (:mod:`pemath.kernel.rules`),
  ``("hyp", i)`` (hypothesis i, an equation), ``("hyp_at", i, substitution)`` (universal hypothesis i, an
  equation, at a value of each of its variables, each in its sort), ``("thm", j, substitution)`` (the equation of theorem j of the
  context, at the substitution; its hypotheses, substituted, must be among this proposition's) or
  ``("sum_of", k, a, b, ((generator, cofactor), ...))`` (the sum over k = a..b of such a combination, its
  generators checked with a <= k <= b as further hypotheses; k a name the hypotheses and bounds do not use), or
  ``("cong", c, x, a, b, ((generator, cofactor), ...))`` (c[x := a] - c[x := b], where the combination is
  exactly a - b: equals in one context give equals).
* ``("and", (certificate, ...))`` for a conjunction, one certificate per conjunct.
* ``("sign",)`` for a < b, a <= b or a != b: b - a (a - b either way for !=) is positive, or nonnegative, by the
  sorts alone (:func:`pemath.kernel.poly.sign`); ``("sign", ((generator, cofactor), ...))``: the same of b - a
  less that combination of equations (as an ideal certificate's, each zero wherever the hypotheses hold).
  ``("sign", combination, ((fact, cofactor), ...))``: for a < b or a <= b, also less a sum of facts (each >= 0
  where the hypotheses hold: ``("rule", name, args)`` an inequality of :mod:`pemath.kernel.rules`, ``("hyp", i)``
  or ``("hyp_at", i, substitution)`` a hypothesis a <= b or a < b, as b - a) times cofactors >= 0 by the sorts;
  a < b where what is left is > 0, or >= 0 with a strict fact times a cofactor > 0 by the sorts.
* ``("int", certificate)`` for a <= b (a < b) with b - a integer-valued: the certificate of a - 1 < b (a + 1 <= b).
* ``("antisym", c1, c2)`` for a = b: c1 of a <= b, c2 of b <= a.
* ``("cut", r, c1, c2)``: r an atomic relation of the proposition's variables, defined where its hypotheses hold;
  c1 decides it, c2 the proposition with r a further hypothesis (the last one).
* ``("cases", r, c1, c2)``: c1 decides the proposition with r a further hypothesis, c2 with r's negation.
* ``("interval", bits)`` for a closed relation: enclosures of a - b at that precision decide it.
* ``("eval",)`` for a closed relation between rational terms (numbers, +, *, powers, inverses, |.|, floor, min,
  max, conditionals): their exact values decide it.
* ``("enum", v, certificate or (certificate, ...))``: v an integer binder with hypotheses lo <= v and v <= hi
  (integer literals); the proposition at each v = lo..hi, decided by the certificate (or the one for that case).
  The count is bounded before any case is built.
* ``("enumset", i, certificate or (certificate, ...))``: hypothesis i a membership ``("in", (v1, ...), rows)``
  (the variables take one of the listed rows of literals); the proposition at each row, decided by the
  certificate (or the one for that row).
* ``("induction", v, base_certificate, step_certificate)``: v an integer binder with a hypothesis base <= v (a
  literal), or, without one, of sort nat (base 0) or posint (base 1), and a conclusion that is one equation; the proposition at v = base, and, for a fresh natural m, the
  proposition at v = base + m + 1 with the one at base + m as a further hypothesis (the last one).
* ``("instance", j, substitution)``: this proposition's conclusion is theorem j's at the substitution (the same
  relation, its difference of the same normal form), each value in its binder's sort, and theorem j's
  hypotheses, substituted, are among this proposition's.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from .interval import enclose, exact
from .poly import (FUNCTION_SORTS, MAX_TERMS, budget, function_sorts, add_poly, mul_poly, is_integer_valued, nonneg,
                   normal, positive, sign, term_of)
from .rules import inequality, negated, relation
from .terms import (INTEGER_SORTS, MALFORMED, MAX_TREE, KernelError, names, num, refusing, substitute,
                    substitute_relation, tree_size, validate, var, variables, walked)

__all__ = ["Theorem", "check", "RELATIONS", "MAX_CASES", "MAX_GENERATORS", "well_formed", "defined", "same"]

RELATIONS = ("eq", "lt", "le", "ne")
MAX_CASES = 100_000
MAX_GENERATORS = 20_000
_TOKEN = object()
_CASES = [0]  # cases enumerated so far in the check under way (nested enumerations share the bound)


class Theorem:
    """A proposition the checker has verified a certificate for. Only :func:`check` makes one; its proposition is
    held by the checker (``_PROVED``), not by the object, so no attribute of it can be rewritten (the eighteenth
    audit set a slot with object.__setattr__)."""

    __slots__ = ("__weakref__",)

    def __init__(self, prop: tuple, token: object = None) -> None:
        if token is not _TOKEN:
            raise TypeError("a Theorem is made only by pemath.kernel.check, after it verifies a certificate")
        _PROVED[self] = prop

    prop = property(lambda self: _PROVED[self], doc="The proposition verified.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Theorem is immutable")

    def __repr__(self) -> str:
        return f"Theorem({self.prop!r:.200})"


_PROVED: "weakref.WeakKeyDictionary[Theorem, tuple]" = weakref.WeakKeyDictionary()


# --- propositions -------------------------------------------------------------------------------------------

def _relation_terms(r: Any) -> None:
    if not (isinstance(r, tuple) and len(r) == 3 and r[0] in RELATIONS):
        raise KernelError(f"a relation is (kind, a, b) with kind in {RELATIONS}, got {r!r:.120}")
    validate(r[1])
    validate(r[2])


def _subterms(t: tuple, bound: frozenset = frozenset()):
    """Every subterm of ``t`` with the names bound around it, walked with an explicit stack (each subterm once,
    whatever its depth)."""
    stack = [(t, bound)]
    while stack:
        t, bound = stack.pop()
        walked()
        yield t, bound
        head = t[0]
        if head in ("num", "var", "pi"):
            continue
        if head in ("pow", "diff"):
            stack.append((t[1], bound))
        elif head == "app":
            stack.extend((a, bound) for a in t[2:])
        elif head == "sum":
            stack.extend(((t[1], bound | {t[2]}), (t[3], bound), (t[4], bound)))
        elif head == "if":
            stack.extend((a, bound) for a in t[1][1:] + t[2:])
        else:
            stack.extend((a, bound) for a in t[1:])


def _shown(rule: str, u: tuple, hyps: tuple) -> None:
    """The side condition of ``rule`` at ``u`` (nonzero for inv, positive for exp_log), without checking u's own
    subterms again (the caller walks them)."""
    from .rules import _nonzero, _positive

    (_nonzero if rule == "inv" else _positive)(u, hyps, rule)


def _no_derivative(t: tuple, what: str) -> tuple:
    """A certificate's terms (cofactors, relations' arguments, substituted values) hold no derivative: normal forms
    never do, and a derivative is checked against the proposition's binders only where the proposition states it."""
    if any(sub[0] == "diff" for sub, _ in _subterms(t)):
        raise KernelError(f"a derivative in {what} is refused (only a proposition states one)")
    return t


@refusing
def defined(t: tuple, hyps: tuple, names: dict | None = None) -> tuple:
    """Check ``t`` is defined wherever the hypotheses hold: every ``inv`` of a term shown nonzero (by the sorts or a
    hypothesis; positive by the sorts inside a sum, where the index has no sign), every sum's bounds integer-valued,
    every function applied to as many arguments as it is bound with. Returns ``t``."""
    for sub, bound in _subterms(t):
        if sub[0] == "app" and names is not None and len(sub) - 2 != names[sub[1]][2]:
            raise KernelError(f"{sub[1]!r} takes {names[sub[1]][2]} arguments, applied to {len(sub) - 2}")
        if sub[0] == "sqrt" and not nonneg(normal(sub[1])):  # sqrt u needs u >= 0, by the sorts alone
            raise KernelError("a square root of a term the sorts do not show >= 0")
        if sub[0] in ("inv", "log"):  # 1/u needs u nonzero, log u needs u positive
            if bound & {v[1] for v in variables(sub[1]) if v[0] == "var"}:
                if not positive(normal(sub[1])):  # in a sum's index, which has no sign: positive by the sorts
                    raise KernelError(f"{sub[0]} of a term in a sum's index needs it positive by the sorts")
            else:
                _shown("inv" if sub[0] == "inv" else "exp_log", sub[1], hyps)
        if sub[0] == "diff":
            from .calculus import derivative

            if names is None or names.get(sub[2], ("",))[0] != "var" or names[sub[2]][2] not in ("real", "pos",
                                                                                                   "nonneg"):
                raise KernelError(f"a derivative is in a variable the proposition binds as real, not {sub[2]!r}")
            defined(derivative(sub[1], sub[2]), hyps, names)
        if sub[0] == "sum":
            if names is not None and names.get(sub[2], ("",))[0] == "fun":
                raise KernelError(f"a sum's index {sub[2]!r} is the name of a function (a substitution for the "
                                  "function would not reach inside the sum)")
            if any(w[0] == "var" and w[1] == sub[2] and w[2] != "int" for w in variables(sub[1])):
                raise KernelError(f"a sum's index {sub[2]!r} is of sort int in its body")
            for end in sub[3:]:
                if not is_integer_valued(normal(end)):
                    raise KernelError("a sum's bounds must be integer-valued by their variables' sorts")
    return t


def well_formed(prop: Any) -> tuple:
    """Check ``prop`` is a well-formed, everywhere-defined proposition; return it. Its size is measured first and
    its work bounded (a budget of its own when no check is running)."""
    _plain(prop, "proposition")
    return _bounded(_well_formed, prop)


def _bounded(f: Any, *args: Any) -> Any:
    """``f(*args)`` within a check's budget (its own when none is running); malformed input is a KernelError."""
    try:
        if budget.active:
            return f(*args)
        with budget.scope():
            return f(*args)
    except KernelError:
        raise
    except MALFORMED as exc:
        raise KernelError(f"malformed proposition ({type(exc).__name__}: {exc})"[:300]) from None


def _well_formed(prop: Any) -> tuple:
    if not (isinstance(prop, tuple) and len(prop) == 4 and prop[0] == "forall"):
        raise KernelError(f"a proposition is ('forall', binders, hypotheses, conclusion), got {prop!r:.120}")
    _, binders, hyps, concl = prop
    if not isinstance(binders, tuple) or not isinstance(hyps, tuple):
        raise KernelError("a proposition's binders and hypotheses are tuples")
    names: dict[str, tuple] = {}
    for b in binders:
        if isinstance(b, tuple) and len(b) == 4 and b[0] == "fun" and type(b[2]) is int and 1 <= b[2] <= 8 \
                and b[3] in FUNCTION_SORTS:
            validate(("app", b[1], *(num(0),) * b[2]))
        else:
            validate(b)
            if b[0] != "var":
                raise KernelError(f"a binder is a variable or ('fun', name, arity, value sort) with a value sort in "
                                  f"{FUNCTION_SORTS}, got {b!r:.80}")
        if b[1] in names:
            raise KernelError(f"{b[1]!r} is bound twice")
        names[b[1]] = b
    if isinstance(concl, tuple) and concl[:1] == ("and",) and len(concl) < 2:
        raise KernelError("a conjunction has one or more relations")
    with function_sorts({b[1]: b[3] for b in names.values() if b[0] == "fun"}):  # signs read from its own binders
        atoms = [h for h in hyps if not _membership(h, names) and not _universal(h, names, hyps)] + \
            (list(concl[1:]) if isinstance(concl, tuple) and concl[:1] == ("and",) else [concl])
        for r in atoms:
            _atomic(r, names, hyps)
    return prop


def _atomic(r: Any, names: dict, hyps: tuple) -> None:
    """An atomic relation of the proposition: its variables bound with their sorts, its functions bound, its
    sides defined wherever the hypotheses hold."""
    _relation_terms(r)
    for side in r[1:]:
        for v in variables(side):
            if v[0] == "var" and names.get(v[1]) != v:
                raise KernelError(f"the variable {v[1]!r} of sort {v[2]!r} is not bound with that sort")
            if v[0] == "app" and (names.get(v[1], ("",))[0] != "fun"):
                raise KernelError(f"the function {v[1]!r} is not bound")
        defined(side, hyps, names)


def _universal(h: Any, names: dict, hyps: tuple) -> bool:
    """Whether ``h`` is a universal hypothesis ``("all", (variables), relation)``. Checks it when it is one: its
    variables distinct, each named nowhere else in the proposition's binders; the relation's variables all its
    own (closed), its functions bound by the proposition, its sides defined for every value in their sorts."""
    if not (isinstance(h, tuple) and h[:1] == ("all",)):
        return False
    if len(h) != 3 or not isinstance(h[1], tuple) or not h[1]:
        raise KernelError("a universal hypothesis is ('all', (variables), relation)")
    own: dict[str, tuple] = {}
    for b in h[1]:
        if validate(b)[0] != "var" or b[1] in names or b[1] in own:
            raise KernelError("a universal hypothesis binds distinct variables, each named nowhere in the binders")
        own[b[1]] = b
    r = h[2]
    _relation_terms(r)
    for side in r[1:]:
        for v in variables(side):
            if v[0] == "var" and own.get(v[1]) != v:
                raise KernelError(f"a universal hypothesis is closed: {v[1]!r} is not one of its own variables")
            if v[0] == "app" and names.get(v[1], ("",))[0] != "fun":
                raise KernelError(f"the function {v[1]!r} is not bound")
        defined(side, hyps, {**names, **own})
    return True


def _membership(h: Any, names: dict) -> bool:
    """Whether ``h`` is a membership hypothesis ``("in", (v1, ..., vn), ((c11, ..., c1n), ...))``: the variables
    (bound, distinct) take one of the listed tuples of rational literals. Checks it when it is one."""
    if not (isinstance(h, tuple) and h[:1] == ("in",)):
        return False
    if len(h) != 3 or not isinstance(h[1], tuple) or not isinstance(h[2], tuple) or not h[1] or not h[2]:
        raise KernelError("a membership is ('in', (variables), (rows of literals))")
    if len(h[2]) > MAX_CASES:
        raise KernelError(f"a membership lists at most {MAX_CASES} rows")
    if len(set(h[1])) != len(h[1]) or any(v[:1] != ("var",) or names.get(v[1]) != v for v in h[1]):
        raise KernelError("a membership's variables are distinct variables bound with their sorts")
    for row in h[2]:
        if not isinstance(row, tuple) or len(row) != len(h[1]) or any(validate(c)[0] != "num" for c in row):
            raise KernelError("a membership's rows are tuples of number literals, one per variable")
    return True


def same(p: tuple, q: tuple) -> bool:
    """Whether two propositions say the same: the same binders, the same hypotheses in order and the same
    conclusion, each relation compared by its kind and the normal form of its difference (sizes measured first,
    work bounded)."""
    _plain(p, "proposition")
    _plain(q, "proposition")
    return _bounded(_same, p, q)


def _same(p: tuple, q: tuple) -> bool:
    if p[0] != "forall" or q[0] != "forall" or set(p[1]) != set(q[1]) or len(p[2]) != len(q[2]):
        return False
    return all(_same_rel(a, b) for a, b in zip(p[2], q[2])) and _same_concl(p[3], q[3])


def _diff(r: tuple) -> dict:
    return add_poly(normal(r[1]), normal(r[2]), -1)


def _same_rel(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] in ("in", "all"):
        if a is b:
            return True
        budget.spend("monomials", tree_size(a, MAX_TREE))  # == walks it: charged (the eleventh audit's routes 1-2)
        return a == b
    da, db = _diff(a), _diff(b)
    return da == db or (a[0] in ("eq", "ne") and da == add_poly({}, db, -1))


def _same_concl(a: tuple, b: tuple) -> bool:
    if a[0] == "and" or b[0] == "and":
        return a[0] == b[0] == "and" and len(a) == len(b) and all(_same_rel(x, y) for x, y in zip(a[1:], b[1:]))
    return _same_rel(a, b)


# --- certificates -------------------------------------------------------------------------------------------

def _in_sort(value: tuple, sort: str) -> bool:
    p = normal(value)
    if sort in INTEGER_SORTS and not is_integer_valued(p):
        return False
    if sort in ("nat", "nonneg"):
        return nonneg(p)
    if sort in ("posint", "pos"):
        return positive(p)
    return True


def _substitution(subst: Any, binders: tuple, hyps: tuple) -> dict:
    """A substitution for some of ``binders``: each variable's value validated, defined where ``hyps`` hold, and
    shown to be in its binder's sort; each function's value a ``("lambda", params, body)`` of its arity whose body
    is defined for every real value of its parameters and has the function's value sort."""
    if not isinstance(subst, tuple):
        raise KernelError("a substitution is a tuple of (name, term) pairs")
    sorts = {b[1]: b for b in binders}
    out = {}
    for pair in subst:
        if not (isinstance(pair, tuple) and len(pair) == 2 and pair[0] in sorts):
            raise KernelError(f"a substitution pairs a bound name with a value, got {pair!r:.100}")
        if pair[0] in out:
            raise KernelError(f"a substitution gives {pair[0]!r} two values")
        b, value = sorts[pair[0]], pair[1]
        if b[0] == "fun":
            if not (isinstance(value, tuple) and len(value) == 3 and value[0] == "lambda"
                    and isinstance(value[1], tuple) and len(value[1]) == b[2] and len(set(value[1])) == b[2]):
                raise KernelError(f"the function {b[1]!r} is replaced by ('lambda', ({b[2]} names), body)")
            params = tuple(var(p_, "real") for p_ in value[1])
            body = substitute(_no_derivative(validate(value[2]), "a function's value"), {p_[1]: p_ for p_ in params})
            defined(body, ())  # for every real argument: no hypothesis of the proposition speaks of its parameters
            if b[3] != "real" and not (positive(normal(body)) if b[3] == "pos" else nonneg(normal(body))):
                raise KernelError(f"the body replacing {b[1]!r} is not shown {b[3]!r} for every real argument")
            out[b[1]] = ("lambda", value[1], body)
            continue
        defined(_no_derivative(validate(value), "a substituted value"), hyps)
        if not _in_sort(value, b[2]):
            raise KernelError(f"{value!r:.80} is not shown to be of sort {b[2]!r} (the sort of {b[1]!r})")
        out[b[1]] = value
    return out


def _instance(thm: Theorem, subst: Any, hyps: tuple) -> tuple:
    """Theorem ``thm``'s conclusion at ``subst``, after its hypotheses at ``subst`` are found among ``hyps``."""
    _, binders, thyps, concl = thm.prop
    # each use walks the theorem's binders and compares each of its hypotheses with each of this proposition's:
    # charged (the tenth audit's routes 2 and 4: a theorem of 90,000 binders used 2,000 times, uncharged)
    budget.spend("monomials", len(binders) + (len(subst) if isinstance(subst, tuple) else 0) + len(thyps) * len(hyps))
    here = function_sorts.current()
    replaced = {p[0] for p in subst if isinstance(p, tuple) and p} if isinstance(subst, tuple) else set()
    for b in binders:
        if b[0] == "fun" and b[1] not in replaced and here.get(b[1]) != b[3]:
            raise KernelError(f"a theorem about every function {b[1]!r} of values {b[3]!r} is used where "
                              f"{b[1]!r} is not bound so")
    values = _substitution(subst, binders, hyps)
    functions = {k: v for k, v in values.items() if v[0] == "lambda"}  # all a closed universal can change
    for h in thyps:
        if h[0] == "in":
            raise KernelError("a theorem with a membership hypothesis is not instantiated")
        if h[0] == "all":
            budget.spend("monomials", len(functions))  # its capture check reads each function's value
        hs = _measured(substitute_relation(h, functions if h[0] == "all" else values))
        if not any(_same_rel(hs, g) for g in hyps):
            raise KernelError(f"a theorem used needs the hypothesis {hs!r:.120}, which this proposition does not have")
    return _measured(substitute_relation(concl, values))


def _measured(r: tuple, what: str = "an instance") -> tuple:
    """A term or relation built by substitution, its size with shared subterms expanded measured (with a limit) and
    charged before any walk: a substituted value is shared at every use, and a function applied inside its own
    argument doubles the tree at every level (the ninth audit's routes 5 and 6: a few dozen nodes of certificate,
    minutes of walking)."""
    size = tree_size(r, MAX_TREE)
    if size > MAX_TREE:
        raise KernelError(f"{what} of more than {MAX_TREE} nodes once its shared subterms are expanded")
    budget.spend("monomials", size)
    return r


def _generator(g: Any, hyps: tuple, context: Sequence[Theorem]) -> dict:
    if not isinstance(g, tuple) or not g:
        raise KernelError(f"a generator is ('rule', name, args), ('hyp', i) or ('thm', j, substitution), got {g!r:.80}")
    if g[0] == "rule" and len(g) == 3:
        return relation(g[1], g[2], hyps)
    if g[0] == "sum_of" and len(g) == 5:
        return _sum_of(g, hyps, context)
    if g[0] == "cong" and len(g) == 6:
        return _congruence(g, hyps, context)
    if g[0] == "hyp" and len(g) == 2 and type(g[1]) is int and 0 <= g[1] < len(hyps) and hyps[g[1]][0] == "eq":
        return _diff(hyps[g[1]])
    if g[0] == "hyp_at" and len(g) == 3 and type(g[1]) is int and 0 <= g[1] < len(hyps) \
            and hyps[g[1]][0] == "all" and hyps[g[1]][2][0] == "eq":
        return _diff(_universal_at(g, hyps))
    if g[0] == "thm" and len(g) == 3 and type(g[1]) is int and 0 <= g[1] < len(context):
        inst = _instance(context[g[1]], g[2], hyps)
        if inst[0] != "eq":
            raise KernelError("a theorem used as a generator must conclude one equation")
        return _diff(inst)
    raise KernelError(f"unusable generator {g!r:.120}")


def _universal_at(g: tuple, hyps: tuple) -> tuple:
    """("hyp_at", i, substitution): universal hypothesis i's relation at a value of each of its variables."""
    _, own, r = hyps[g[1]]
    values = _substitution(g[2], own, hyps)
    if set(values) != {b[1] for b in own}:
        raise KernelError("a universal hypothesis is used at a value of each of its variables")
    return _measured(substitute_relation(r, values))


def _fact(f: Any, hyps: tuple) -> tuple[dict, bool]:
    """A polynomial >= 0 wherever the hypotheses hold, and whether it is > 0: an inequality of
    :mod:`pemath.kernel.rules` at its arguments, or hypothesis i (a <= b or a < b: b - a), universal ones at a value
    of each variable."""
    if isinstance(f, tuple) and len(f) == 3 and f[0] == "rule":
        return inequality(f[1], f[2], hyps)
    if isinstance(f, tuple) and len(f) in (2, 3) and f[0] in ("hyp", "hyp_at") and type(f[1]) is int \
            and 0 <= f[1] < len(hyps):
        h = hyps[f[1]]
        if f[0] == "hyp_at" and len(f) == 3 and h[0] == "all":
            h = _universal_at(f, hyps)
        elif f[0] != "hyp" or len(f) != 2:
            h = ("",)
        if h[0] in ("le", "lt"):
            return add_poly(normal(h[2]), normal(h[1]), -1), h[0] == "lt"
    raise KernelError(f"a fact is ('rule', inequality, args), ('hyp', i) or ('hyp_at', i, substitution) of a < or "
                      f"<=, got {f!r:.120}")


def _facts(pairs: Any, hyps: tuple) -> tuple[dict, bool]:
    """The sum of cofactor x fact over (fact, cofactor) pairs, each cofactor >= 0 by the sorts: >= 0, and > 0
    (the bool) when some fact is > 0 with a cofactor > 0 by the sorts."""
    if not isinstance(pairs, tuple) or len(pairs) > MAX_GENERATORS:
        raise KernelError(f"a sign certificate's facts are a tuple of at most {MAX_GENERATORS} (fact, cofactor) pairs")
    total: dict = {}
    strict = False
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise KernelError("a sign certificate's facts are (fact, cofactor) pairs")
        p, s = _fact(pair[0], hyps)
        c = normal(defined(_no_derivative(validate(pair[1]), "a cofactor"), hyps))
        if not nonneg(c):
            raise KernelError(f"a fact's cofactor must be >= 0 by the sorts, got {pair[1]!r:.80}")
        if len(c) * len(p) > MAX_TERMS:
            raise KernelError(f"refused before any work: a product of {len(c)} x {len(p)} monomials")
        budget.spend("monomials", len(c) * len(p) + len(total))
        strict = strict or (s and positive(c))
        total = add_poly(total, mul_poly(c, p))
    return total, strict


_HYP_NAMES: dict[int, tuple[tuple, frozenset]] = {}


def _hyp_names(hyps: tuple) -> frozenset:
    """Every name the hypotheses use, walked once per hypotheses tuple in a check (a certificate's generators
    each ask again: walking them once per generator took minutes, the eighth audit's route 2). Charged."""
    got = _HYP_NAMES.get(id(hyps))
    if got is not None and got[0] is hyps:
        return got[1]
    out = frozenset(n for h in hyps for n in names(h))  # each node counted (terms.WALK)
    _HYP_NAMES[id(hyps)] = (hyps, out)  # the tuple is held, so its id is not reused while cached
    return out


def _sum_of(g: tuple, hyps: tuple, context: Sequence[Theorem]) -> dict:
    """("sum_of", k, a, b, ((generator, cofactor), ...)): the sum over k = a..b of a combination of relations
    that hold at every such k (checked with the hypotheses a <= k and k <= b added); k is a name the
    hypotheses and the bounds do not use."""
    _, k, a, b, gens = g
    if not isinstance(k, str) or not isinstance(gens, tuple):
        raise KernelError("sum_of is ('sum_of', index name, lower, upper, ((generator, cofactor), ...))")
    for end in (a, b):
        if not is_integer_valued(normal(defined(_no_derivative(validate(end), "a bound"), hyps))):
            raise KernelError("sum_of: the bounds must be integer-valued by their variables' sorts")
    if k in names(a) or k in names(b) or k in _hyp_names(hyps):
        raise KernelError(f"sum_of: the index {k!r} is a name the bounds or the hypotheses use")
    kv = var(k, "int")
    budget.spend("monomials", len(hyps))  # the hypotheses copied with the two bounds (the fourteenth audit)
    total = _combination(gens, hyps + (("le", a, kv), ("le", kv, b)), context)
    return normal(validate(("sum", term_of(total), k, a, b)))


def _congruence(g: tuple, hyps: tuple, context: Sequence[Theorem]) -> dict:
    """("cong", c, x, a, b, ((generator, cofactor), ...)): c[x := a] - c[x := b], where the combination is exactly
    a - b (so a = b wherever the hypotheses hold, and equals put in one context give equals); x is a name the
    hypotheses do not use, and both sides are defined wherever the hypotheses hold."""
    _, ctx, x, a, b, gens = g
    if not isinstance(x, str) or x in _hyp_names(hyps):
        raise KernelError("cong: the placeholder is a name the hypotheses do not use")
    for t in (a, b):
        defined(_no_derivative(validate(t), "cong's side"), hyps)
    if add_poly(_combination(gens, hyps, context), add_poly(normal(a), normal(b), -1), -1):
        raise KernelError("cong: the combination is not a - b")
    sides = [defined(_no_derivative(validate(_measured(substitute(ctx, {x: t}), "cong: a term")), "cong's term"),
                     hyps) for t in (a, b)]
    return add_poly(normal(sides[0]), normal(sides[1]), -1)


def _combination(gens: Any, hyps: tuple, context: Sequence[Theorem]) -> dict:
    """The sum of cofactor x generator over the (generator, cofactor) pairs ``gens``."""
    if not isinstance(gens, tuple) or len(gens) > MAX_GENERATORS:
        raise KernelError(f"an ideal certificate is a tuple of at most {MAX_GENERATORS} (generator, cofactor) pairs")
    total: dict = {}
    for pair in gens:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise KernelError("an ideal certificate's entries are (generator, cofactor) pairs")
        g = _generator(pair[0], hyps, context)
        c = normal(defined(_no_derivative(validate(pair[1]), "a cofactor"), hyps))
        if len(c) * len(g) > MAX_TERMS:
            raise KernelError(f"refused before any work: a product of {len(c)} x {len(g)} monomials")
        budget.spend("monomials", len(c) * len(g) + len(total))
        total = add_poly(total, mul_poly(c, g))
    return total


def _ideal(diff: dict, gens: Any, hyps: tuple, context: Sequence[Theorem]) -> None:
    rest = add_poly(diff, _combination(gens, hyps, context), -1)
    if rest:
        raise KernelError(f"the certificate does not account for the difference: {len(rest)} monomials remain")


def _decide(prop: tuple, cert: Any, context: Sequence[Theorem]) -> None:
    _, binders, hyps, concl = prop
    if not isinstance(cert, tuple) or not cert:
        raise KernelError(f"a certificate is a tuple naming its kind, got {cert!r:.80}")
    kind = cert[0]
    if kind == "and":
        if concl[0] != "and" or len(cert) != 2 or not isinstance(cert[1], tuple) or len(cert[1]) != len(concl) - 1:
            raise KernelError("an 'and' certificate holds one certificate per conjunct")
        for r, c in zip(concl[1:], cert[1]):
            _decide(("forall", binders, hyps, r), c, context)
        return
    if concl[0] == "and" and kind not in ("enum", "enumset", "instance"):
        raise KernelError("a conjunction needs an 'and' certificate (or an enumeration's, or an instance)")
    if kind == "ideal" and len(cert) == 2:
        if concl[0] != "eq":
            raise KernelError("an ideal certificate decides an equation")
        _ideal(_diff(concl), cert[1], hyps, context)
    elif kind == "sign" and len(cert) in (1, 2, 3):
        if concl[0] == "eq" or (len(cert) == 3 and concl[0] == "ne"):
            raise KernelError("a sign certificate decides <, <= or != (with facts, < or <=)")
        d = add_poly(normal(concl[2]), normal(concl[1]), -1)
        if len(cert) >= 2:  # what is left once a combination of equations (each 0 here) is taken away
            d = add_poly(d, _combination(cert[1], hyps, context), -1)
        strict = False
        if len(cert) == 3:  # and a sum of facts (each >= 0 here) times cofactors >= 0
            total, strict = _facts(cert[2], hyps)
            d = add_poly(d, total, -1)
        ok = (positive(d) or (strict and nonneg(d))) if concl[0] == "lt" else nonneg(d) if concl[0] == "le" else \
            positive(d) or positive(add_poly({}, d, -1))
        if not ok:
            raise KernelError(f"the sorts do not give {concl[0]}: the difference's sign is {sign(d)}")
    elif kind == "int" and len(cert) == 2:  # b - a an integer: a <= b from a - 1 < b, a < b from a + 1 <= b
        if concl[0] not in ("le", "lt") or not is_integer_valued(_diff(concl)):
            raise KernelError("an int certificate decides a <= b or a < b with b - a integer-valued by the sorts")
        step = ("lt", ("add", concl[1], num(-1)), concl[2]) if concl[0] == "le" else \
            ("le", ("add", concl[1], num(1)), concl[2])
        _decide(("forall", binders, hyps, step), cert[1], context)
    elif kind == "antisym" and len(cert) == 3:  # a = b from a <= b and b <= a
        if concl[0] != "eq":
            raise KernelError("an antisym certificate decides an equation")
        _decide(("forall", binders, hyps, ("le", concl[1], concl[2])), cert[1], context)
        _decide(("forall", binders, hyps, ("le", concl[2], concl[1])), cert[2], context)
    elif kind in ("cut", "cases") and len(cert) == 4:
        r = cert[1]
        if not (isinstance(r, tuple) and r[:1] in (("eq",), ("lt",), ("le",), ("ne",))):
            raise KernelError(f"a {kind} certificate names an atomic relation, got {r!r:.80}")
        # r alone is checked (the rest was, with the proposition): its terms bound and defined where the hypotheses
        # hold; each node it walks counted (the twelfth audit's route 1: the proposition walked again at every node)
        budget.spend("monomials", len(binders) + tree_size(r, MAX_TREE))
        _atomic(_no_derivative(r, f"a {kind}'s relation"), {b[1]: b for b in binders}, hyps)
        if kind == "cut":  # the lemma r, decided, then a further hypothesis
            _decide(("forall", binders, hyps, r), cert[2], context)
            _decide(("forall", binders, hyps + (r,), concl), cert[3], context)
        else:  # r holds or its negation does
            for extra, c in ((r, cert[2]), (negated(r), cert[3])):
                _decide(("forall", binders, hyps + (extra,), concl), c, context)
    elif kind == "eval" and len(cert) == 1:
        if binders:
            raise KernelError("an eval certificate decides a closed relation (no binders)")
        a, b = exact(concl[1]), exact(concl[2])
        if not {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b}[concl[0]]:
            raise KernelError(f"exactly, {a} {concl[0]} {b} is false")
    elif kind == "interval" and len(cert) == 2:
        if binders:
            raise KernelError("an interval certificate decides a closed relation (no binders)")
        lo, hi = enclose(("add", concl[2], ("mul", num(-1), concl[1])), cert[1])  # b - a
        ok = {"lt": lo > 0, "le": lo >= 0, "ne": lo > 0 or hi < 0, "eq": False}[concl[0]]
        if not ok:
            raise KernelError(f"the enclosure [{lo}, {hi}] of b - a does not decide {concl[0]}")
    elif kind == "enum" and len(cert) == 3:
        _enum(prop, cert[1], cert[2], context)
    elif kind == "enumset" and len(cert) == 3:
        _enumset(prop, cert[1], cert[2], context)
    elif kind == "induction" and len(cert) == 4:
        _induction(prop, cert[1], cert[2], cert[3], context)
    elif kind == "instance" and len(cert) == 3:
        if type(cert[1]) is not int or not 0 <= cert[1] < len(context):
            raise KernelError("an instance names a theorem of the context by its index")
        inst = _instance(context[cert[1]], cert[2], hyps)
        if not _same_concl(inst, concl):
            raise KernelError("the conclusion is not the theorem's at the substitution")
    else:
        raise KernelError(f"unknown certificate {cert!r:.80}")


def _bound_var(binders: tuple, name: Any) -> tuple:
    budget.spend("monomials", len(binders))
    for b in binders:
        if b[0] == "var" and b[1] == name and b[2] in INTEGER_SORTS:
            return b
    raise KernelError(f"{name!r} is not an integer variable bound by the proposition")


def _literal_bound(hyps: tuple, v: tuple, side: str) -> tuple[int, int]:
    """(index, value) of the hypothesis ``lit <= v`` (side 'lo') or ``v <= lit`` (side 'hi'). The scan is charged
    (the thirteenth audit: empty enumerations under an induction scanned 12,000 hypotheses each, uncharged, 25 s)."""
    budget.spend("monomials", len(hyps))
    for i, h in enumerate(hyps):
        lit, x = (h[1], h[2]) if side == "lo" else (h[2], h[1])
        if h[0] == "le" and x == v and lit[0] == "num" and lit[2] == 1:
            return i, lit[1]
    raise KernelError(f"no hypothesis bounds {v[1]!r} by an integer literal ({side})")


def _instantiate(prop: tuple, values: dict, drop: set, extra: tuple = ()) -> tuple:
    """``prop`` with ``values`` substituted: the binders they name removed (``extra`` added), the hypotheses at
    the indices ``drop`` removed, the proposition checked well-formed again. Its size is charged to the work."""
    _, binders, hyps, concl = prop
    kept = tuple(h for i, h in enumerate(hyps) if i not in drop)
    # each case rebuilds the proposition, each node it walks counted (never the dropped table of an enumset, which
    # the case does not read: measuring it per case cost rows x cases)
    budget.spend("monomials", len(hyps))
    named = set(values)  # once, not once per kept membership (the eleventh audit's route 3)
    for i, h in enumerate(hyps):
        if i not in drop and h[0] == "in" and any(v[1] in named for v in h[1]):
            raise KernelError("a variable of a membership is enumerated by 'enumset', with the whole membership")
    # a membership is dropped or kept as it is; a universal hypothesis is closed, so no variable's value reaches it
    nh = tuple(h if h[0] in ("in", "all") else substitute_relation(h, values) for h in kept)
    nb = tuple(b for b in binders if b[1] not in values) + extra
    return _well_formed(("forall", nb, nh, substitute_relation(concl, values)))


def _cases(prop: tuple, cert: Any) -> int:
    """How many cases ``cert`` enumerates for ``prop``, nested enumerations multiplied, from the literal bounds
    alone (no case is built); capped just past MAX_CASES."""
    if not isinstance(cert, tuple) or not cert:
        return 1
    # each level rebuilds its inner proposition: charged, or per-case certificates against many hypotheses
    budget.spend("monomials", len(prop[1]) + len(prop[2]) + 1)  # cost cases x hypotheses (the eighth audit's route 3)
    if cert[0] == "enumset" and len(cert) == 3 and type(cert[1]) is int and 0 <= cert[1] < len(prop[2]) \
            and prop[2][cert[1]][0] == "in":
        h = prop[2][cert[1]]
        members = set(h[1]) if isinstance(h[1], tuple) else set()  # a set: linear, not binders x variables
        inner = ("forall", tuple(b for b in prop[1] if b not in members),
                 tuple(g for i, g in enumerate(prop[2]) if i != cert[1]), prop[3])
        subs = cert[2]
        if isinstance(subs, tuple) and subs and isinstance(subs[0], tuple):
            return min(sum(_cases(inner, c) for c in subs[:len(h[2])]), MAX_CASES + 1)
        return min(len(h[2]) * _cases(inner, subs), MAX_CASES + 1)
    if cert[0] == "and" and len(cert) == 2 and isinstance(cert[1], tuple):
        return min(sum(_cases(prop, c) for c in cert[1]), MAX_CASES + 1)
    if cert[0] in ("int", "antisym") and len(cert) in (2, 3):  # the same hypotheses, another conclusion
        return min(sum(_cases(prop, c) for c in cert[1:]), MAX_CASES + 1)
    if cert[0] == "induction" and len(cert) == 4:  # the base and the step, each about as many hypotheses
        return min(_cases(prop, cert[2]) + _cases(prop, cert[3]), MAX_CASES + 1)
    if cert[0] in ("cut", "cases") and len(cert) == 4 and isinstance(cert[1], tuple):  # one more hypothesis
        more = ("forall", prop[1], prop[2] + (cert[1],), prop[3])
        if cert[0] == "cut":
            return min(_cases(prop, cert[2]) + _cases(more, cert[3]), MAX_CASES + 1)
        other = ("forall", prop[1], prop[2] + (negated(cert[1]),), prop[3])  # the second case: r's negation
        return min(_cases(more, cert[2]) + _cases(other, cert[3]), MAX_CASES + 1)
    if cert[0] != "enum" or len(cert) != 3:
        return 1
    v = _bound_var(prop[1], cert[1])
    i_lo, lo = _literal_bound(prop[2], v, "lo")
    i_hi, hi = _literal_bound(prop[2], v, "hi")
    count = max(hi - lo + 1, 1)  # an empty range still costs its case's setup
    if count > MAX_CASES:
        return MAX_CASES + 1
    inner = ("forall", tuple(b for b in prop[1] if b != v), tuple(h for i, h in enumerate(prop[2])
                                                                     if i not in (i_lo, i_hi)), prop[3])
    subs = cert[2]
    if isinstance(subs, tuple) and subs and isinstance(subs[0], tuple):
        return min(count + sum(_cases(inner, c) for c in subs[:count]), MAX_CASES + 1)
    return min(count * max(_cases(inner, subs), 1) + count, MAX_CASES + 1)


def _enum(prop: tuple, name: Any, certs: Any, context: Sequence[Theorem]) -> None:
    v = _bound_var(prop[1], name)
    i_lo, lo = _literal_bound(prop[2], v, "lo")
    i_hi, hi = _literal_bound(prop[2], v, "hi")
    count = hi - lo + 1
    if count + _CASES[0] > MAX_CASES:
        raise KernelError(f"refused before any case is built: {count} cases, {_CASES[0]} already (at most {MAX_CASES} "
                          "in one check, nested enumerations together)")
    _CASES[0] += max(count, 0)
    per_case = isinstance(certs, tuple) and certs and isinstance(certs[0], tuple)
    if per_case and len(certs) != max(count, 0):
        raise KernelError(f"an enumeration of {count} cases holds {len(certs)} certificates")
    for n, value in enumerate(range(lo, hi + 1)):
        _decide(_instantiate(prop, {v[1]: num(value)}, {i_lo, i_hi}), certs[n] if per_case else certs, context)


def _enumset(prop: tuple, index: Any, certs: Any, context: Sequence[Theorem]) -> None:
    """Each row of membership hypothesis ``index``: the proposition with its variables at the row's values."""
    _, binders, hyps, concl = prop
    if type(index) is not int or not 0 <= index < len(hyps) or hyps[index][0] != "in":
        raise KernelError("an 'enumset' certificate names a membership hypothesis by its index")
    vs, rows = hyps[index][1], hyps[index][2]
    per_case = isinstance(certs, tuple) and certs and isinstance(certs[0], tuple)
    if per_case and len(certs) != len(rows):
        raise KernelError(f"an enumeration of {len(rows)} rows holds {len(certs)} certificates")
    _CASES[0] += len(rows)
    if _CASES[0] > MAX_CASES:
        raise KernelError(f"refused: more than {MAX_CASES} cases in one check")
    for n, row in enumerate(rows):
        values = {v[1]: c for v, c in zip(vs, row)}
        _decide(_instantiate(prop, values, {index}), certs[n] if per_case else certs, context)


def _induction(prop: tuple, name: Any, base_cert: Any, step_cert: Any, context: Sequence[Theorem]) -> None:
    v = _bound_var(prop[1], name)
    try:
        i_lo, base = _literal_bound(prop[2], v, "lo")
    except KernelError:  # no hypothesis: the sort's least value (a natural number from 0, a positive one from 1)
        if v[2] not in ("nat", "posint"):
            raise
        i_lo, base = -1, 0 if v[2] == "nat" else 1
    if prop[3][0] != "eq":
        raise KernelError("an induction concludes one equation")
    others = [h for i, h in enumerate(prop[2]) if i != i_lo]
    if any(v in h[1] if h[0] == "in" else False if h[0] == "all" else v in variables(h[1]) | variables(h[2])
           for h in others):  # a universal hypothesis is closed: it involves no binder
        raise KernelError(f"an induction's other hypotheses must not involve {v[1]!r}")
    _decide(_instantiate(prop, {v[1]: num(base)}, {i_lo}), base_cert, context)
    taken = {b[1] for b in prop[1]} | _hyp_names(prop[2])  # fresh against a universal hypothesis's names too
    m = next(("var", f"m{i}", "nat") for i in range(len(taken) + 1) if f"m{i}" not in taken)
    at = ("add", num(base), m)
    step = _instantiate(prop, {v[1]: ("add", at, num(1))}, {i_lo}, (m,))
    hyp = _instantiate(prop, {v[1]: at}, {i_lo}, (m,))[3]
    _decide(_well_formed(("forall", step[1], step[2] + (hyp,), step[3])), step_cert, context)


def _plain(data: Any, what: str) -> None:
    """Refuse anything but plain tuples, strings and ints (a subclass could lie through repr or ==), and a tree of
    more than MAX_TREE nodes (counted with shared subterms memoised, so counting itself is cheap)."""
    sizes: dict[int, int] = {}

    def size(x: Any, depth: int) -> int:
        if type(x) is int:  # an int and a string count as their size: a message printing any part stays bounded
            return 1 + x.bit_length() // 64  # (the nineteenth audit: 4,300-digit ints in 250,000 slots, 56 s, 1 GB)
        if type(x) is str:
            return 1 + len(x) // 8
        if type(x) is not tuple:
            raise KernelError(f"a {what} holds only tuples, strings and ints, got {type(x).__name__}")
        if depth > 400:
            raise KernelError(f"a {what} nested deeper than 400 levels is refused")
        if id(x) in sizes:
            return sizes[id(x)]
        n = 1
        for a in x:
            n += size(a, depth + 1)
            if n > MAX_TREE:
                raise KernelError(f"a {what} of more than {MAX_TREE} nodes is refused")
        sizes[id(x)] = n
        return n

    size(data, 0)


def _brief(v: Any) -> str:
    """A short, bounded rendering of a name or sort for a message (never the repr of a large value)."""
    return repr(v) if isinstance(v, str) and len(v) <= 64 else f"a {type(v).__name__}"


def _one_sort_per_name(prop: tuple, cert: Any) -> None:
    """Every variable the certificate names has one sort, the one the proposition binds it with if it binds it:
    names are compared by their full identity, so a name read with another sort (an integer n beside a positive
    n) cannot be conflated where a term is substituted by name."""
    seen = {b[1]: b for b in prop[1] if isinstance(b, tuple) and b[:1] == ("var",)}
    visited: set = set()
    stack = [cert]
    while stack:
        x = stack.pop()
        if not isinstance(x, tuple) or id(x) in visited:
            continue
        visited.add(id(x))
        if len(x) == 3 and x[0] == "var" and isinstance(x[1], str):
            if seen.setdefault(x[1], x) != x:
                raise KernelError(f"the certificate names {_brief(x[1])} with the sort {_brief(x[2])}, the "
                                  f"proposition or another term of it with {_brief(seen[x[1]][2])}: one name, "
                                  "one sort")
            continue
        stack.extend(x)


def check(prop: Any, cert: Any, context: Sequence[Theorem] = ()) -> Theorem:
    """Verify ``cert`` for ``prop`` (both plain data), theorems of ``context`` available to it; return the
    Theorem, or raise :class:`~pemath.kernel.terms.KernelError` saying why not. Malformed data of any shape is
    refused (the error names what broke): only a verified certificate returns."""
    if not isinstance(context, (list, tuple)) or not all(isinstance(t, Theorem) for t in context):
        raise KernelError("a context holds Theorems the checker made")
    _plain(prop, "proposition")  # sizes first: no message formats the input before it is measured
    _plain(cert, "certificate")
    if not (isinstance(prop, tuple) and len(prop) == 4 and prop[0] == "forall" and isinstance(prop[1], tuple)):
        raise KernelError(f"a proposition is ('forall', binders, hypotheses, conclusion), got a "
                          f"{type(prop).__name__} of {len(prop) if isinstance(prop, tuple) else 0} entries")
    sorts = {b[1]: b[3] for b in prop[1] if isinstance(b, tuple) and len(b) == 4 and b[0] == "fun"
             and isinstance(b[1], str)}
    try:
        _one_sort_per_name(prop, cert)
        with budget.scope(), function_sorts(sorts):
            _HYP_NAMES.clear()
            try:
                _well_formed(prop)
                _CASES[0] = 0
                total = _cases(prop, cert)
                if total > MAX_CASES:
                    raise KernelError(f"refused before any case is built: more than {MAX_CASES} cases, nested "
                                      "enumerations multiplied")
                _decide(prop, cert, context)
            finally:
                _HYP_NAMES.clear()  # the hypotheses it holds are not kept alive past the check
    except KernelError:
        raise
    except MALFORMED as exc:
        raise KernelError(f"malformed proposition or certificate ({type(exc).__name__}: {exc})"[:300]) from None
    return Theorem(prop, _TOKEN)
