"""The relations a certificate may use: each a polynomial that is zero wherever its side condition holds.

These are the only facts about functions the checker knows. Each is a textbook identity of the real functions,
stated here once, with its side condition checked from the sorts (and, for ``inv``, the proposition's
hypotheses) before it is used::

    =================  ===========================================  ==========================================
    rule (arguments)   relation (= 0)                               side condition
    =================  ===========================================  ==========================================
    pyth (u)           cos(u)^2 + sin(u)^2 - 1
    cos_add (u, v)     cos(u+v) - cos(u) cos(v) + sin(u) sin(v)
    sin_add (u, v)     sin(u+v) - sin(u) cos(v) - cos(u) sin(v)
    cos_neg (u)        cos(-u) - cos(u)
    sin_neg (u)        sin(-u) + sin(u)
    exp_add (u, v)     exp(u+v) - exp(u) exp(v)
    cos_zero, sin_zero cos(0) - 1, sin(0)
    exp_zero           exp(0) - 1
    cos_pi, sin_pi     cos(pi) + 1, sin(pi)
    cos_half_pi        cos(pi/2)
    sin_half_pi        sin(pi/2) - 1
    cos_2pi_int (k)    cos(2 pi k) - 1                              k integer-valued (by its sorts)
    sin_2pi_int (k)    sin(2 pi k)                                  k integer-valued
    inv (u)            u inv(u) - 1                                 u nonzero (sorts, or a hypothesis u != 0)
    exp_log (u)        exp(log(u)) - u                              u positive (sorts, or a hypothesis 0 < u)
    exp_log_int (u,n)  exp(n log(u)) - u^n                          u positive; n an integer, |n| <= 4096
    log_exp (u)        log(exp(u)) - u
    log_mul (u, v)     log(u v) - log(u) - log(v)                   u, v positive
    abs_sq (u)         |u|^2 - u^2
    sum_step (f,k,a,   sum(f,k,a,n+1) - sum(f,k,a,n) - f[k:=n+1]    a, n integer-valued; n + 1 - a >= 0
      n)
    sum_empty (f,k,a)  sum(f,k,a,a-1)                               a integer-valued
    sum_shift (f,k,a,  sum(f,k,a,b) - sum(f[k:=k-c],k,a+c,b+c)      a, b, c integer-valued; c free of k
      b,c)
    sum_split (f,k,a,  sum(f,k,a,b) - sum(f,k,a,c) - sum(f,k,c+1,b)
      c,b)                                                          a, b, c integer-valued; a - 1 <= c <= b
    sum_count (k,a,b)  sum(1,k,a,b) - (b - a + 1)                   a, b integer-valued; b - a + 1 >= 0
    min_left (a, b)    min(a, b) - a                                a <= b (by the sorts, or a hypothesis)
    max_left (a, b)    max(a, b) - a                                b <= a
    if_true (r, a, b)  (a if r else b) - a                          r holds (by the sorts, or a hypothesis)
    if_false (r, a, b) (a if r else b) - b                          r's negation holds
    =================  ===========================================  ==========================================

A sum is linear in its body by its normal form (:mod:`pemath.kernel.poly`), and a certificate may use the sum
over k = a..b of relations that hold at every k (:mod:`pemath.kernel.check`, the ``sum_of`` generator).

The inequalities a sign certificate may use as facts, each >= 0 (> 0 where strict) where its side condition
holds::

    =================  ===========================================  ==========================================
    inequality (args)  fact                                         side condition
    =================  ===========================================  ==========================================
    floor_le (u)       u - floor(u) >= 0
    floor_gt (u)       floor(u) + 1 - u > 0
    exp_ge (u)         exp(u) - 1 - u >= 0
    log_le (u)         u - 1 - log(u) >= 0                          u positive (sorts, or a hypothesis 0 < u)
    log_lt (u)         u - 1 - log(u) > 0                           u positive; u - 1 nonzero (sorts, or a
                                                                    hypothesis u != 1, 1 < u or u < 1)
    log_ge (u)         log(u) - 1 + inv(u) >= 0                     u positive
    min_le (a, b)      a - min(a, b) >= 0
    max_ge (a, b)      max(a, b) - a >= 0
    =================  ===========================================  ==========================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .poly import Poly, add_poly, budget, is_integer_valued, nonneg, normal, positive
from .terms import PI, KernelError, ONE, ZERO, num, substitute, validate, variables

__all__ = ["RULES", "INEQUALITIES", "relation", "inequality", "negated"]


def _p(t: tuple) -> Poly:
    return normal(t)


def _sub(a: tuple, b: tuple) -> Poly:
    return add_poly(normal(a), normal(b), -1)


def _neg(u: tuple) -> tuple:
    return ("mul", num(-1), u)


def _integer(u: tuple, rule: str) -> None:
    if not is_integer_valued(normal(u)):
        raise KernelError(f"{rule}: its argument must be integer-valued by its variables' sorts")


def _nonzero(u: tuple, hyps: Sequence[tuple], rule: str) -> None:
    budget.spend("monomials", len(hyps))  # the scan below, charged (the tenth audit's route 5)
    p = normal(u)
    if p and (positive(p) or positive(add_poly({}, p, -1))):
        return
    for h in hyps:  # a hypothesis a != b or a < b with a - b = +-u
        if h[0] in ("ne", "lt") and _sub(h[1], h[2]) in (p, add_poly({}, p, -1)):
            return
    raise KernelError(f"{rule}: {u!r:.100} is not shown nonzero (by the sorts or a hypothesis u != 0)")


def _positive(u: tuple, hyps: Sequence[tuple], rule: str) -> None:
    budget.spend("monomials", len(hyps))
    p = normal(u)
    if positive(p):
        return
    for h in hyps:  # a hypothesis a < b with b - a = u
        if h[0] == "lt" and _sub(h[2], h[1]) == p:
            return
    raise KernelError(f"{rule}: {u!r:.100} is not shown positive (by the sorts or a hypothesis 0 < u)")


def _sum_step(f: tuple, k: str, a: tuple, n: tuple, hyps: Sequence[tuple]) -> Poly:
    _integer(a, "sum_step")
    _integer(n, "sum_step")
    if not nonneg(_sub(("add", n, ONE), a)):
        raise KernelError("sum_step: n + 1 - a must be nonnegative by the sorts (the sum up to n + 1 has the term "
                          "at n + 1)")
    n1 = ("add", n, ONE)
    return add_poly(_sub(("sum", f, k, a, n1), ("sum", f, k, a, n)), normal(substitute(f, {k: n1})), -1)


def _sum_empty(f: tuple, k: str, a: tuple, hyps: Sequence[tuple]) -> Poly:
    _integer(a, "sum_empty")
    return normal(("sum", f, k, a, ("add", a, num(-1))))


def _exp_log_int(u: tuple, n: tuple, hyps: Sequence[tuple]) -> Poly:
    if not (isinstance(n, tuple) and n[:1] == ("num",) and len(n) == 3 and n[2] == 1 and abs(n[1]) <= 4096):
        raise KernelError("exp_log_int: n is an integer literal of at most 4096 in size")
    _positive(u, hyps, "exp_log_int")
    power = ("pow", u, abs(n[1]))
    return _sub(("exp", ("mul", n, ("log", u))), power if n[1] >= 0 else ("inv", power))


def _sum_shift(f: tuple, k: str, a: tuple, b: tuple, c: tuple, hyps: Sequence[tuple]) -> Poly:
    for x in (a, b, c):
        _integer(x, "sum_shift")
    if any(v[0] == "var" and v[1] == k for v in variables(c)):
        raise KernelError("sum_shift: the shift must be free of the bound variable")
    kc = ("add", ("var", k, "int"), ("mul", num(-1), c))
    return _sub(("sum", f, k, a, b), ("sum", substitute(f, {k: kc}), k, ("add", a, c), ("add", b, c)))


def _sum_count(k: str, a: tuple, b: tuple, hyps: Sequence[tuple]) -> Poly:
    for x in (a, b):
        _integer(x, "sum_count")
    count = ("add", b, ("mul", num(-1), a), ONE)
    if not nonneg(normal(count)):
        raise KernelError("sum_count: b - a + 1 >= 0 must hold by the sorts (an empty range counts 0, not less)")
    return _sub(("sum", ONE, k, a, b), count)


def _sum_split(f: tuple, k: str, a: tuple, c: tuple, b: tuple, hyps: Sequence[tuple]) -> Poly:
    for x in (a, b, c):
        _integer(x, "sum_split")
    if not (nonneg(_sub(("add", c, ONE), a)) and nonneg(_sub(b, c))):
        raise KernelError("sum_split: a - 1 <= c <= b must hold by the sorts (each part a range of the whole)")
    whole, left = normal(("sum", f, k, a, b)), normal(("sum", f, k, a, c))
    return add_poly(add_poly(whole, left, -1), normal(("sum", f, k, ("add", c, ONE), b)), -1)


_NEGATED = {"eq": ("ne", 1, 2), "ne": ("eq", 1, 2), "lt": ("le", 2, 1), "le": ("lt", 2, 1)}


def _holds(r: tuple, hyps: Sequence[tuple], rule: str) -> None:
    """Relation r holds wherever the hypotheses do: by the sorts (the sign of b - a), or r is a hypothesis (a
    hypothesis a < b also gives a <= b and a != b)."""
    if not (isinstance(r, tuple) and len(r) == 3 and r[0] in _NEGATED):
        raise KernelError(f"{rule}: {r!r:.80} is not a relation (eq, ne, lt, le)")
    budget.spend("monomials", len(hyps))
    d = _sub(r[2], r[1])
    if {"eq": not d, "le": nonneg(d), "lt": positive(d), "ne": positive(d) or positive(add_poly({}, d, -1))}[r[0]]:
        return
    for h in hyps:
        if h[0] in ("eq", "ne", "lt", "le") and (h[0] == r[0] or (h[0] == "lt" and r[0] in ("le", "ne"))):
            hd = _sub(h[2], h[1])
            if hd == d or (r[0] in ("eq", "ne") and hd == add_poly({}, d, -1)):
                return
    raise KernelError(f"{rule}: {r!r:.100} is not shown to hold (by the sorts or a hypothesis)")


def negated(r: tuple, what: str = "a negation") -> tuple:
    """The negation of an atomic relation: a != b for a = b, b <= a for a < b, and so on."""
    if not (isinstance(r, tuple) and len(r) == 3 and r[0] in _NEGATED):
        raise KernelError(f"{what}: {r!r:.80} is not a relation (eq, ne, lt, le)")
    kind, a, b = _NEGATED[r[0]]
    return (kind, r[a], r[b])


RULES: dict[str, tuple[int, Callable[..., Poly]]] = {
    "pyth": (1, lambda u, h: _sub(("add", ("pow", ("cos", u), 2), ("pow", ("sin", u), 2)), ONE)),
    "cos_add": (2, lambda u, v, h: _sub(("cos", ("add", u, v)),
                                        ("add", ("mul", ("cos", u), ("cos", v)),
                                         _neg(("mul", ("sin", u), ("sin", v)))))),
    "sin_add": (2, lambda u, v, h: _sub(("sin", ("add", u, v)),
                                        ("add", ("mul", ("sin", u), ("cos", v)), ("mul", ("cos", u), ("sin", v))))),
    "cos_neg": (1, lambda u, h: _sub(("cos", _neg(u)), ("cos", u))),
    "sin_neg": (1, lambda u, h: add_poly(_p(("sin", _neg(u))), _p(("sin", u)))),
    "exp_add": (2, lambda u, v, h: _sub(("exp", ("add", u, v)), ("mul", ("exp", u), ("exp", v)))),
    "cos_zero": (0, lambda h: _sub(("cos", ZERO), ONE)),
    "sin_zero": (0, lambda h: _p(("sin", ZERO))),
    "exp_zero": (0, lambda h: _sub(("exp", ZERO), ONE)),
    "cos_pi": (0, lambda h: add_poly(_p(("cos", PI)), _p(ONE))),
    "sin_pi": (0, lambda h: _p(("sin", PI))),
    "cos_half_pi": (0, lambda h: _p(("cos", ("mul", ("num", 1, 2), PI)))),
    "sin_half_pi": (0, lambda h: _sub(("sin", ("mul", ("num", 1, 2), PI)), ONE)),
    "cos_2pi_int": (1, lambda k, h: (_integer(k, "cos_2pi_int"),
                                     _sub(("cos", ("mul", num(2), PI, k)), ONE))[1]),
    "sin_2pi_int": (1, lambda k, h: (_integer(k, "sin_2pi_int"), _p(("sin", ("mul", num(2), PI, k))))[1]),
    "inv": (1, lambda u, h: (_nonzero(u, h, "inv"), _sub(("mul", u, ("inv", u)), ONE))[1]),
    "exp_log": (1, lambda u, h: (_positive(u, h, "exp_log"), _sub(("exp", ("log", u)), u))[1]),
    "log_exp": (1, lambda u, h: _sub(("log", ("exp", u)), u)),
    "exp_log_int": (2, lambda u, n, h: _exp_log_int(u, n, h)),
    "log_mul": (2, lambda u, v, h: (_positive(u, h, "log_mul"), _positive(v, h, "log_mul"),
                                    _sub(("log", ("mul", u, v)), ("add", ("log", u), ("log", v))))[2]),
    "abs_sq": (1, lambda u, h: _sub(("pow", ("abs", u), 2), ("pow", u, 2))),
    "sum_step": (4, lambda f, k, a, n, h: _sum_step(f, k, a, n, h)),
    "sum_empty": (3, lambda f, k, a, h: _sum_empty(f, k, a, h)),
    "min_left": (2, lambda a, b, h: (_holds(("le", a, b), h, "min_left"), _sub(("min", a, b), a))[1]),
    "max_left": (2, lambda a, b, h: (_holds(("le", b, a), h, "max_left"), _sub(("max", a, b), a))[1]),
    "if_true": (3, lambda r, a, b, h: (_holds(r, h, "if_true"), _sub(("if", r, a, b), a))[1]),
    "if_false": (3, lambda r, a, b, h: (_holds(negated(r, "if_false"), h, "if_false"), _sub(("if", r, a, b), b))[1]),
    "sum_shift": (5, _sum_shift),
    "sum_count": (3, _sum_count),
    "sum_split": (5, _sum_split),
}


#: Inequalities: each a polynomial that is >= 0 (> 0 where marked strict) wherever its side condition holds;
#: textbook facts of the real functions, used by a sign certificate (:mod:`pemath.kernel.check`) with a
#: cofactor >= 0 by the sorts.
INEQUALITIES: dict[str, tuple[int, bool, Callable[..., Poly]]] = {
    # u - floor(u) >= 0 and floor(u) + 1 - u > 0: the definition of floor
    "floor_le": (1, False, lambda u, h: _sub(u, ("floor", u))),
    "floor_gt": (1, True, lambda u, h: add_poly(_sub(("floor", u), u), _p(ONE))),
    # exp(u) >= 1 + u: the tangent at 0 of a convex function
    "exp_ge": (1, False, lambda u, h: add_poly(_sub(("exp", u), u), _p(ONE), -1)),
    # log(u) <= u - 1 for u > 0, strictly where u != 1; log(u) >= 1 - 1/u (the first at 1/u)
    "log_le": (1, False, lambda u, h: (_positive(u, h, "log_le"),
                                       add_poly(_sub(u, ("log", u)), _p(ONE), -1))[1]),
    "log_lt": (1, True, lambda u, h: (_positive(u, h, "log_lt"), _nonzero(("add", u, num(-1)), h, "log_lt"),
                                      add_poly(_sub(u, ("log", u)), _p(ONE), -1))[2]),
    "log_ge": (1, False, lambda u, h: (_positive(u, h, "log_ge"),
                                       add_poly(_sub(("log", u), ONE), _p(("inv", u))))[1]),
    # min(a, b) <= a and max(a, b) >= a (both symmetric in their normal form: the other argument too)
    "min_le": (2, False, lambda a, b, h: _sub(a, ("min", a, b))),
    "max_ge": (2, False, lambda a, b, h: _sub(("max", a, b), a)),
}


def _entry(table: dict, kind: str, name: str, args: Any) -> tuple:
    """The entry of rule or inequality ``name``, once its name and its number of arguments are checked."""
    if name not in table:
        raise KernelError(f"no {kind} {name!r}: the {kind}s are {sorted(table)}")
    if not isinstance(args, (list, tuple)) or len(args) != table[name][0]:
        raise KernelError(f"{kind} {name} takes {table[name][0]} arguments, got {args!r:.100}")
    return table[name]


def _defined(terms: Sequence, what: str, hyps: Sequence[tuple]) -> None:
    from .check import _no_derivative, defined  # the definedness check lives with the propositions

    for a in terms:
        defined(_no_derivative(validate(a), what), tuple(hyps))


def inequality(name: str, args: Sequence, hyps: Sequence[tuple]) -> tuple[Poly, bool]:
    """The polynomial of inequality ``name`` at ``args`` (>= 0 wherever the hypotheses hold, > 0 when the bool is
    True), after its side condition is checked."""
    _, strict, make = _entry(INEQUALITIES, "inequality", name, args)
    _defined(args, f"inequality {name}'s argument", hyps)
    return make(*args, hyps), strict


def relation(name: str, args: Sequence, hyps: Sequence[tuple]) -> Poly:
    """The relation polynomial of rule ``name`` at ``args`` (terms; a sum's bound variable as its name), after its
    side condition is checked."""
    _, make = _entry(RULES, "rule", name, args)
    if name == "sum_count":
        if not isinstance(args[0], str):
            raise KernelError("sum_count: the first argument is the bound variable's name")
        checked = [validate(("sum", ONE, args[0], args[1], args[2]))]
    elif name.startswith("sum_"):
        if not isinstance(args[1], str):
            raise KernelError(f"{name}: the second argument is the bound variable's name")
        validate(("sum", args[0], args[1], args[2], args[2]))
        checked = [("sum", args[0], args[1], args[2], args[2])] + list(args[2:])
    elif name.startswith("if_"):
        checked = [validate(("if", *args))]
    else:
        checked = list(args)
    _defined(checked, f"rule {name}'s argument", hyps)
    return make(*args, hyps)
