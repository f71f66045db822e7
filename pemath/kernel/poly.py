"""Exact normal forms: a term as a polynomial over the rationals in its atoms, with a cost bounded before any work.

An *atom* is a variable, pi, or an application the checker does not expand (cos, sin, exp, inv, an arbitrary
function, a sum), its arguments themselves in normal form, and a sum's bound variable renamed canonically. Two
terms have the same normal form only if they are equal wherever both are defined: the normal form uses only the
commutative-ring laws of the rationals, congruence (equal arguments give equal values), the values of
functions at rational points where the value is rational by definition (1/q, |q|, floor(q), exp(0) = cos(0) =
1, sin(0) = 0, log(1) = 0), the linearity of a finite sum in its body, and what the sorts alone decide (:func:`sign`):
floor(u + q) = u + floor(q) for u integer-valued and q rational, min and max of two terms the sorts order, a conditional on a relation the
sorts decide. No other identity of any function is used here; those enter a proof only as relations a
certificate names (:mod:`pemath.kernel.rules`).

A polynomial is a dict from a monomial (a sorted tuple of ``(atom key, exponent)``) to a nonzero Fraction.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .terms import MAX_WALK, WALK, names, walked
from .terms import (INTEGER_SORTS, NONNEG_SORTS, POSITIVE_SORTS, KernelError, ZERO, num, substitute,
                    variables)

__all__ = ["MAX_TERMS", "MAX_BITS", "normal", "term_of", "atom_term", "cost", "is_integer_valued", "sign",
           "nonneg", "positive", "Poly", "add_poly", "mul_poly", "FUNCTION_SORTS", "function_sorts", "budget",
           "MAX_WORK"]

Poly = dict
#: The most monomials a normal form may reach (estimated from the term before any expansion).
MAX_TERMS = 100_000
#: The most bits the rational coefficients of a normal form may reach (estimated likewise).
MAX_BITS = 200_000
#: The most work (monomials produced, arguments and products included) one normal form may take.
MAX_WORK = 250_000

_ATOMS: dict[str, tuple] = {}  # atom key -> its canonical term (so a polynomial reads back as a term)
_SHAPES: dict[str, str] = {}  # an application's shape (its head and its arguments' normal forms, by keys) -> key
_FREE: dict[str, frozenset] = {}  # atom key -> its free variables
_PARTS: dict[str, tuple] = {}  # application atom key -> its shape (its arguments' normal forms, as keys)
_NEXT = [0]  # the number of the next application atom (never reused, so a stale key names nothing new)
#: the value sorts a function binder may have
FUNCTION_SORTS = ("real", "pos", "nonneg")


class _FunctionSorts:
    """The value sorts of the functions bound by the proposition being checked (a sign is read from them)."""

    def __init__(self) -> None:
        self.stack: list[dict] = [{}]

    def current(self) -> dict:
        return self.stack[-1]

    def __call__(self, sorts: dict) -> "_FunctionSorts":
        self._next = dict(sorts)
        return self

    def __enter__(self) -> None:
        self.stack.append(self._next)
        _SIGNS.append({})  # the atoms' signs depend on the function sorts: remembered per scope

    def __exit__(self, *exc: object) -> None:
        self.stack.pop()
        _SIGNS.pop()


function_sorts = _FunctionSorts()
_SIGNS: list[dict] = [{}]


def cost(t: tuple) -> tuple[int, int, int]:
    """Upper bounds on (monomials, coefficient bits) of ``normal(t)`` and on the work of computing it (monomials
    produced, every atom's arguments and every product's pairs included), from the tree alone and capped just past
    the limits, so the bound itself is cheap. ``normal`` refuses a term over a limit before any work."""
    cap_t, cap_b, cap_w = MAX_TERMS + 1, MAX_BITS + 1, MAX_WORK + 1
    walked()
    head = t[0]
    if head == "num":
        return 1, max(abs(t[1]).bit_length(), t[2].bit_length(), 1), 1
    if head in ("var", "pi"):
        return 1, 1, 1
    if head == "sum":  # linear in its body: at most the body's monomials, each a sum atom times what is free of k
        cb = [cost(a) for a in t[1:] if isinstance(a, tuple)]
        if any(c[0] > MAX_TERMS or c[1] > MAX_BITS for c in cb):
            return next(c for c in cb if c[0] > MAX_TERMS or c[1] > MAX_BITS)
        return cb[0][0], cb[0][1], min(sum(c[2] + c[0] for c in cb) + 2 * cb[0][0], cap_w)
    if head in ("app", "inv", "cos", "sin", "exp", "log", "abs", "sqrt", "floor", "min", "max", "if"):
        w, n, b = 1, 1, 1
        for i, a in enumerate(t[1][1:] + t[2:] if head == "if" else t[1:]):  # arguments are normalised too
            if isinstance(a, tuple):
                ca = cost(a)
                if ca[0] > MAX_TERMS or ca[1] > MAX_BITS:
                    return ca
                w = min(w + ca[2] + ca[0] + ca[1] // 64, cap_w)  # an argument's literals are read and printed
                if head in ("floor", "min", "max") or (head == "if" and i >= 2):  # the value may be this argument
                    n, b = max(n, ca[0]), max(b, ca[1])
                if w >= cap_w:
                    break  # over the work limit already: the rest need not be costed (the ninth audit's route 6)
        return n, b, w
    if head == "add":
        n = b = w = 0
        for a in t[1:]:
            ca = cost(a)
            n, b, w = min(n + ca[0], cap_t), min(max(b, ca[1]) + 1, cap_b), min(w + ca[2] + n, cap_w)
            if n >= cap_t or b >= cap_b or w >= cap_w:
                break  # over a limit already: the rest need not be costed
        return n, b, w
    if head == "mul":
        n, b, w = 1, 0, 0
        for a in t[1:]:
            ca = cost(a)
            w = min(w + ca[2] + n * ca[0], cap_w)
            n, b = min(n * ca[0], cap_t), min(b + ca[1] + ca[0].bit_length(), cap_b)
            if n >= cap_t or b >= cap_b or w >= cap_w:
                break
        return n, b, w
    if head == "diff":
        from .calculus import derivative

        return cost(derivative(t[1], t[2]))
    if head == "pow":
        if t[2] == 0:  # u^0 = 1: its base is never costed (nor normalised)
            return 1, 1, 1
        cb = cost(t[1])
        e = t[2]
        n = cb[0] if cb[0] <= 1 else (cap_t if e * (cb[0].bit_length() - 1) > 64 else min(cb[0] ** e, cap_t))
        return n, min(e * (cb[1] + cb[0].bit_length()), cap_b), min(cb[2] + e * n * cb[0], cap_w)
    raise KernelError(f"no normal form for a term of kind {head!r}")


class _Budget:
    """The work one check may do, counted as it goes (reset by :func:`pemath.kernel.check`): monomials of
    normal forms, and bit-operations of enclosures and exact evaluations."""

    LIMITS = {"monomials": 300_000, "bits": 4_000_000}

    def __init__(self) -> None:
        self.used = dict.fromkeys(self.LIMITS, 0)
        self.active = False  # counted inside a check only (each normal form is bounded on its own anyway)

    def reset(self) -> None:
        self.used = dict.fromkeys(self.LIMITS, 0)

    def scope(self) -> "_Scope":
        """A ``with`` block in which work is counted from zero (a check, or a verdict derived from checked
        propositions); the atom cache is emptied first when it has grown past a million atoms."""
        return _Scope(self)

    def spend(self, kind: str, amount: int) -> None:
        if not self.active:
            return
        self.used[kind] += amount
        if self.used[kind] > self.LIMITS[kind]:
            raise KernelError(f"refused: this check's work passed its bound ({self.LIMITS[kind]} {kind})")


class _Scope:
    def __init__(self, b: _Budget) -> None:
        self.b = b

    def __enter__(self) -> None:
        self.saved = (self.b.used, self.b.active, tuple(WALK))
        self.b.reset()
        self.b.active = True
        WALK[:] = [0, MAX_WALK]
        if len(_ATOMS) > 1_000_000:
            _ATOMS.clear()
            _SHAPES.clear()
            _FREE.clear()
            _PARTS.clear()

    def __exit__(self, *exc: object) -> None:
        self.b.used, self.b.active, walk = self.saved
        WALK[:] = walk


budget = _Budget()


def _key(poly: Poly) -> tuple:
    return tuple(sorted(poly.items()))


def term_of(poly: Poly) -> tuple:
    """The canonical term of a polynomial (monomials in key order): equal polynomials give equal terms."""
    if not poly:
        return ZERO
    out = []
    for mono, c in sorted(poly.items()):
        factors = [(_ATOMS[a] if e == 1 else ("pow", _ATOMS[a], e)) for a, e in mono]
        if c != 1 or not factors:
            factors.insert(0, num(c))
        out.append(factors[0] if len(factors) == 1 else ("mul", *factors))
    return out[0] if len(out) == 1 else ("add", *out)


def atom_term(key: str) -> tuple:
    return _ATOMS[key]


def _atom(t: tuple, *shape: object) -> Poly:
    """The atom of term ``t``: a variable or pi keyed by its repr; an application keyed by a number given to its
    shape (its head and its arguments' normal forms, which name their own atoms by key), so a key is short
    however large the term behind it, and two applications are one atom exactly when their shapes are equal."""
    if not shape:
        k = repr(t)
        _ATOMS.setdefault(k, t)
        return {((k, 1),): Fraction(1)}
    sh = repr(shape)
    k = _SHAPES.get(sh)
    if k is None:
        _NEXT[0] += 1
        k = _SHAPES[sh] = f"@{_NEXT[0]}"
        _ATOMS[k] = t
        _PARTS[k] = shape
    return {((k, 1),): Fraction(1)}


def _free(key: str) -> frozenset:
    """The free variables of an atom (remembered per atom)."""
    out = _FREE.get(key)
    if out is None:
        out = _FREE[key] = frozenset(variables(_ATOMS[key]))
    return out


_BIG = 1 << 64


def _put(out: Poly, m: tuple, c: Fraction) -> None:
    """Add c to the coefficient of monomial m, dropping it when it cancels to 0. Inside a check, a coefficient
    past 64 bits is charged its size to the check's bit budget (the bounds on a term's cost cannot foresee how
    far sums of rationals grow their denominators)."""
    v = out.get(m, 0) + c
    if v:
        out[m] = v
        if budget.active and (v.denominator > _BIG or not -_BIG < v.numerator < _BIG):
            budget.spend("bits", v.numerator.bit_length() + v.denominator.bit_length())
    else:
        out.pop(m, None)


def add_poly(p: Poly, q: Poly, scale: Fraction = Fraction(1)) -> Poly:
    out = dict(p)
    for m, c in q.items():
        _put(out, m, scale * c)
    return out


def _mono_mul(a: tuple, b: tuple) -> tuple:
    d = dict(a)
    for k, e in b:
        d[k] = d.get(k, 0) + e
    return tuple(sorted(d.items()))


def mul_poly(p: Poly, q: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in p.items():
        for mb, cb in q.items():
            _put(out, _mono_mul(ma, mb), ca * cb)
    return out


def _rational(p: Poly) -> Fraction | None:
    """The value of a constant polynomial, or None."""
    if not p:
        return Fraction(0)
    return p[()] if list(p) == [()] else None


def _value_at(head: str, q: Fraction) -> Fraction | None:
    """A function's value at the rational q where it is rational by the function's definition: exp(0) = cos(0) =
    1, sin(0) = 0, log(1) = 0, |q| and 1/q (refused at 0); None elsewhere (an atom then)."""
    if head == "inv":
        if not q:
            raise KernelError("an inverse of 0 has no normal form")
        budget.spend("bits", q.numerator.bit_length() + q.denominator.bit_length())
        return 1 / q
    if head == "abs":
        return abs(q)
    if head == "sqrt":  # rational exactly where q >= 0 is the square of a rational
        return rational_sqrt(q)
    return {("exp", 0): Fraction(1), ("cos", 0): Fraction(1), ("sin", 0): Fraction(0),
            ("log", 1): Fraction(0)}.get((head, q))


def rational_sqrt(q: Fraction) -> Fraction | None:
    """The square root of ``q`` >= 0 where it is rational (q the square of a rational), else None; its work (the
    operand's bits) charged. A negative q is refused: a square root is defined only where its argument is >= 0."""
    if q < 0:
        raise KernelError("a square root of a negative number")
    budget.spend("bits", q.numerator.bit_length() + q.denominator.bit_length())
    n, d = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(n, d) if n * n == q.numerator and d * d == q.denominator else None


def _fresh(base: str, taken: set) -> str:
    i = 0
    while f"{base}{i}" in taken:
        i += 1
    return f"{base}{i}"


def normal(t: tuple) -> Poly:
    """The normal form of a validated term; refuses (KernelError) a term whose cost bound is over the limits,
    before expanding anything."""
    n, b, w = cost(t)
    words = 1 + b // 64  # a step on coefficients of b bits costs about words^2 (products and their gcds)
    if n > MAX_TERMS or b > MAX_BITS or w > MAX_WORK or w * words * words > MAX_WORK * 16:
        raise KernelError(f"refused before any work: the normal form may reach {n} monomials or {b} coefficient bits, "
                          f"or take {w} steps on {b}-bit coefficients (limits {MAX_TERMS} monomials, {MAX_BITS} "
                          f"bits, {MAX_WORK} steps of 256 bits)")
    budget.spend("monomials", w)
    return _normal(t)


def _normal(t: tuple) -> Poly:
    head = t[0]
    if head == "num":
        v = Fraction(t[1], t[2])
        return {(): v} if v else {}
    if head in ("var", "pi"):
        return _atom(t)
    if head == "add":
        out: Poly = {}
        for a in t[1:]:
            out = add_poly(out, _normal(a))
        return out
    if head == "mul":
        out = {(): Fraction(1)}
        for a in t[1:]:
            out = mul_poly(out, _normal(a))
        return out
    if head == "pow":
        if t[2] == 0:  # u^0 = 1 for every u (0^0 = 1 too): the base is never expanded (the fourteenth audit: its
            return {(): Fraction(1)}  # cost was not counted, and a product of 20 sums took 18 s to be thrown away)
        base, out = _normal(t[1]), {(): Fraction(1)}
        for _ in range(t[2]):
            out = mul_poly(out, base)
        return out
    if head == "floor":
        arg = _normal(t[1])
        q = arg.get((), Fraction(0))
        rest = {m: c for m, c in arg.items() if m}
        if not is_integer_valued(rest):
            return _atom(("floor", term_of(arg)), "floor", _key(arg))
        v = Fraction(q.numerator // q.denominator)  # floor(u + q) = u + floor(q) for u integer-valued
        return add_poly(rest, {(): v} if v else {})
    if head in ("inv", "cos", "sin", "exp", "log", "abs", "sqrt"):
        arg = _normal(t[1])
        q = _rational(arg)
        v = None if q is None else _value_at(head, q)
        if v is not None:
            return {(): v} if v else {}
        if head in ("inv", "abs"):  # 1/(c u) = (1/c)(1/u), |c u| = |c| |u|: u's first coefficient made 1
            c = arg[min(arg)]
            if c != 1:
                arg = {m: x / c for m, x in arg.items()}
                return {m: (1 / c if head == "inv" else abs(c)) * x for m, x in _atom((head, term_of(arg)), head,
                                                                                        _key(arg)).items()}
        return _atom((head, term_of(arg)), head, _key(arg))
    if head in ("min", "max"):  # symmetric: the two arguments in key order
        args = [_normal(a) for a in t[1:]]
        d = add_poly(args[0], args[1], -1)
        if nonneg(d) or nonneg(add_poly({}, d, -1)):  # the sorts order them: min and max are the two arguments
            first_larger = nonneg(d)
            return args[1] if first_larger == (head == "min") else args[0]
        args.sort(key=lambda a: repr(_key(a)))
        return _atom((head, *(term_of(a) for a in args)), head, *(_key(a) for a in args))
    if head == "if":
        r = t[1]
        ra, rb = _normal(r[1]), _normal(r[2])  # each side once
        d = add_poly(rb, ra, -1)  # b - a
        holds = _decided(r[0], d)
        if holds is not None:
            return _normal(t[2] if holds else t[3])
        a, b = _normal(t[2]), _normal(t[3])
        return _atom(("if", (r[0], term_of(ra), term_of(rb)), term_of(a), term_of(b)),
                     "if", r[0], _key(ra), _key(rb), _key(a), _key(b))
    if head == "app":
        args = [_normal(a) for a in t[2:]]
        return _atom(("app", t[1], *(term_of(a) for a in args)), "app", t[1], *(_key(a) for a in args))
    if head == "diff":
        from .calculus import derivative

        return _normal(derivative(t[1], t[2]))
    if head == "sum":  # linear: sum(c a(k) b) = c b sum(a(k)) for c rational and b free of k, monomial by monomial
        body, k, lo, hi = t[1:]
        # each level walks its whole body (names, variables, the index renamed): nested sums walk depth x size (the
        # eighth audit's route 1), each node counted (terms.WALK)
        if any(v[0] == "var" and v[1] == k and v[2] != "int" for v in variables(body)):
            raise KernelError(f"a sum's index {k!r} is of sort int in its body")
        # the index renamed before the body is normalised: the first k_i that is no other name of the sum
        canon = _fresh("k_", (names(body) | names(lo) | names(hi)) - {k})
        cv = ("var", canon, "int")
        lo_p, hi_p = _normal(lo), _normal(hi)
        parts: dict[tuple, Poly] = {}
        for mono, c in _normal(substitute(body, {k: cv})).items():
            inside = tuple((a, e) for a, e in mono if cv in _free(a))
            outside = tuple((a, e) for a, e in mono if cv not in _free(a))
            _put(parts.setdefault(inside, {}), outside, c)  # in place: copying the growing part per monomial was
        out: Poly = {}  # quadratic in the body's monomials, and charged as linear (the fifteenth audit: 12 s)
        bounds = term_of(lo_p), term_of(hi_p), _key(lo_p), _key(hi_p)  # once (the sixteenth audit: once per part)
        for inside, rest in parts.items():
            budget.spend("monomials", len(lo_p) + len(hi_p))  # each part's atom holds the bounds: charged
            term = ("sum", term_of({inside: Fraction(1)}), canon, bounds[0], bounds[1])
            for m, c in mul_poly(rest, _atom(term, "sum", inside, canon, bounds[2], bounds[3])).items():
                _put(out, m, c)
        return out
    raise KernelError(f"no normal form for a term of kind {head!r}")


def _decided(kind: str, d: Poly) -> bool | None:
    """Whether a relation whose sides differ by d = b - a holds, where the sorts alone decide it; else None."""
    pos, neg = positive(d), positive(add_poly({}, d, -1))
    if kind in ("eq", "ne"):
        if not d:
            return kind == "eq"
        return (kind == "ne") if (pos or neg) else None
    if kind == "lt":
        return True if pos else False if nonneg(add_poly({}, d, -1)) else None
    return True if nonneg(d) else False if neg else None


# --- what the sorts give: integer values and signs, read from the normal form alone --------------------------

def _atom_sign(key: str) -> str | None:
    """'pos', 'nonneg' or None (unknown) for an atom, from its sort or its function; remembered per atom within a
    check (the function value sorts are the check's), its arguments' normal forms charged to the check's work."""
    memo = _SIGNS[-1]
    if key not in memo:
        memo[key] = _atom_sign_of(key)
    return memo[key]


def _atom_sign_of(key: str) -> str | None:
    t = _ATOMS[key]
    if t[0] == "var":
        return "pos" if t[2] in POSITIVE_SORTS else "nonneg" if t[2] in NONNEG_SORTS else None
    if t[0] in ("pi", "exp"):
        return "pos"  # every term is real, so exp of it is positive
    if t[0] == "abs":
        return "nonneg"
    if t[0] == "sqrt":  # the nonnegative root; positive where its argument is
        return "pos" if positive(normal(t[1])) else "nonneg"
    if t[0] == "log":  # log u > 0 exactly where u > 1, >= 0 where u >= 1
        rest = add_poly(normal(t[1]), {(): Fraction(1)}, -1)
        return "pos" if positive(rest) else "nonneg" if nonneg(rest) else None
    if t[0] == "app":
        v = function_sorts.current().get(t[1])
        return v if v in ("pos", "nonneg") else None
    if t[0] == "inv":
        return "pos" if positive(normal(t[1])) else None
    # floor, min and max read their arguments' normal forms from the atom's shape (never normalised again)
    if t[0] == "floor":  # floor u >= 0 exactly where u >= 0, >= 1 where u >= 1
        u = dict(_PARTS[key][1])
        return "pos" if nonneg(add_poly(u, {(): Fraction(1)}, -1)) else "nonneg" if nonneg(u) else None
    if t[0] in ("min", "max"):  # min: both >= 0 (> 0); max: either
        got = [sign(dict(a)) for a in _PARTS[key][1:]]
        if t[0] == "min":
            return "pos" if got == ["pos", "pos"] else "nonneg" if None not in got else None
        return "pos" if "pos" in got else "nonneg" if got != [None, None] else None
    if t[0] == "sum":  # a sum of terms >= 0 is >= 0 (0 when empty); of terms > 0 over a nonempty range, > 0
        body = sign(normal(t[1]))
        if body == "pos" and positive(normal(("add", t[4], ("mul", num(-1), t[3]), num(1)))):
            return "pos"
        return "nonneg" if body else None
    return None


def is_integer_valued(poly: Poly) -> bool:
    """Integer coefficients and only variables of integer sorts and floors: an integer wherever the variables
    are."""
    return all(c.denominator == 1 for c in poly.values()) and all(
        (_ATOMS[a][0] == "var" and _ATOMS[a][2] in INTEGER_SORTS) or _ATOMS[a][0] == "floor" for m in poly for a, _ in m)


def sign(poly: Poly) -> str | None:
    """'pos' when every monomial is >= 0 by the sorts (a nonnegative coefficient, atoms of known sign or even
    powers) and one is > 0 everywhere; 'nonneg' when all are >= 0; None when the sorts do not tell. Where that
    fails and positive integers occur, again with each such v written v' + 1 (v' a natural number): d - 1 >= 0."""
    out = _monomial_sign(poly)
    if out is None and not _SHIFTING:
        ones = sorted({a for m in poly for a, _ in m if _ATOMS[a][0] == "var" and _ATOMS[a][2] == "posint"})
        if ones and len(poly) <= 64:
            t = term_of(poly)
            taken = names(t)
            if any(v[0] == "var" and v[1] in {_ATOMS[a][1] for a in ones} and v[2] != "posint" for v in variables(t)):
                return None  # a name with two sorts: substituting by name would conflate them
            shift = {}
            for a in ones:
                v = _ATOMS[a]
                w = _fresh(v[1] + "_", taken)
                taken.add(w)
                shift[v[1]] = ("add", ("var", w, "nat"), num(1))
            _SHIFTING.append(True)  # once: the shifted polynomial's own signs are read without shifting again
            try:
                out = _monomial_sign(normal(substitute(t, shift)))
            finally:
                _SHIFTING.pop()
    return out


_SHIFTING: list[bool] = []


def _monomial_sign(poly: Poly) -> str | None:
    strict = False
    for mono, c in poly.items():
        if c < 0:
            return None
        signs = [_atom_sign(a) if e % 2 else "pos" if _atom_sign(a) == "pos" else "even" for a, e in mono]
        if any(s is None for s in signs):
            return None
        if all(s == "pos" for s in signs):
            strict = True
    return "pos" if strict else "nonneg"


def positive(poly: Poly) -> bool:
    return sign(poly) == "pos"


def nonneg(poly: Poly) -> bool:
    return sign(poly) is not None or not poly


