"""The checker's own terms: nested tuples, built and validated here, never by a simplifier.

A term is one of::

    ("num", p, q)             the rational p/q (ints, q > 0, in lowest terms)
    ("var", name, sort)       a variable of a sort in SORTS
    ("pi",)                   the constant pi
    ("add", t1, t2, ...)      a sum (two or more terms)
    ("mul", t1, t2, ...)      a product (two or more terms)
    ("pow", t, n)             t to a natural-number literal n (0 <= n <= MAX_EXPONENT)
    ("inv", t)                1/t: defined only where t is nonzero (a proposition using it must show that)
    ("cos", t) ("sin", t) ("exp", t)
    ("log", t)                the natural logarithm: defined only where t is positive
    ("abs", t) ("floor", t)   |t| and the largest integer <= t
    ("sqrt", t)               the nonnegative square root: defined only where t is >= 0 by the sorts
    ("min", a, b) ("max", a, b)
    ("if", r, a, b)           a where the atomic relation r holds, b elsewhere (both must be defined)
    ("diff", t, v)            the derivative of t in the variable named v (:mod:`pemath.kernel.calculus`)
    ("app", name, t1, ...)    an arbitrary function (a variable of the proposition) applied to terms
    ("sum", body, k, lo, hi)  the sum of body over the integers k = lo..hi (0 when hi < lo); k is the name of
                              the bound variable, of sort "int" in body; lo and hi are integer-valued

Every term is real-valued where it is defined: there is no imaginary unit, and every sort is a subset of the
reals. Nothing here evaluates or rewrites: a term means exactly what its tuple says.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["SORTS", "MAX_EXPONENT", "KernelError", "num", "var", "add", "mul", "pow_", "inv", "fn", "app",
           "sum_", "PI", "ZERO", "ONE", "validate", "variables", "substitute", "from_json", "to_json", "show",
           "show_relation", "show_proposition", "substitute_relation", "tree_size", "names"]

#: The sorts of variables: each a subset of the reals, given by what it is declared to be.
SORTS = ("real", "pos", "nonneg", "int", "nat", "posint")
INTEGER_SORTS = ("int", "nat", "posint")
NONNEG_SORTS = ("pos", "nonneg", "nat", "posint")
POSITIVE_SORTS = ("pos", "posint")
FUNCTIONS = ("cos", "sin", "exp", "log", "abs", "floor", "sqrt")
BINARY = ("min", "max")
RELATION_KINDS = ("eq", "lt", "le", "ne")
#: Names no variable, function or index may take: the checker's own terms and words, printed as they are named.
RESERVED = frozenset(FUNCTIONS + BINARY + RELATION_KINDS + ("num", "var", "pi", "add", "mul", "pow", "inv", "if",
                                                            "app", "diff", "sum", "lambda", "and", "all", "in", "fun",
                                                            "forall"))
MAX_EXPONENT = 4096
MAX_DEPTH = 200

#: The nodes every walk of terms visits during one check, counted as it goes: ``[visited, limit]`` (no limit
#: outside a check; :func:`pemath.kernel.check` arms it through the budget's scope). A term may share subterms
#: (a DAG), and a walk reads it as a tree, so a walk's work is counted where it is done, never estimated from a
#: size computed elsewhere: past the limit the walk is refused, however the term was built.
WALK: list = [0, None]
MAX_WALK = 2_000_000


def walked(n: int = 1) -> None:
    """Count ``n`` nodes visited by a walk; refuse past this check's limit."""
    WALK[0] += n
    if WALK[1] is not None and WALK[0] > WALK[1]:
        raise KernelError(f"refused: this check's walks of terms passed their bound ({WALK[1]} nodes visited)")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_']{0,63}\Z")  # ASCII only: no letter that looks like another


class KernelError(ValueError):
    """A term, proposition or certificate the checker refuses, with the reason."""


def _name(name: Any, what: str) -> str:
    """Identifiers are compared by their full identity, so a name must be unambiguous to a reader: ASCII letters,
    digits, underscores and primes (Greek is spelled out: theta), so no invisible or look-alike character."""
    if not isinstance(name, str) or not _NAME.match(name) or unicodedata.normalize("NFKC", name) != name:
        raise KernelError(f"{what} name {name!r} is refused: a name is 1-64 ASCII letters, digits, underscores "
                          "or primes, starting with a letter (ASCII only: no invisible or confusable characters)")
    if name in RESERVED:
        raise KernelError(f"{what} name {name!r} is refused: it is the name of one of the checker's own terms, "
                          "which a statement would print the same way (the seventeenth audit's route 5)")
    return name


def term_is_valid_name(name: Any) -> bool:
    """Whether ``name`` is a name the checker accepts (see :func:`_name`)."""
    try:
        _name(name, "a")
    except KernelError:
        return False
    return True


def num(value: Any) -> tuple:
    if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        raise KernelError(f"a number is an int or a Fraction (exact), got {value!r}")
    f = Fraction(value)
    return ("num", f.numerator, f.denominator)


ZERO, ONE = num(0), num(1)
PI = ("pi",)


def var(name: str, sort: str = "real") -> tuple:
    if sort not in SORTS:
        raise KernelError(f"the sort of {name!r} must be one of {SORTS}, got {sort!r}")
    return ("var", _name(name, "a variable's"), sort)


def add(*ts: Any) -> tuple:
    return ts[0] if len(ts) == 1 else ("add", *ts)


def mul(*ts: Any) -> tuple:
    return ts[0] if len(ts) == 1 else ("mul", *ts)


def pow_(t: Any, n: int) -> tuple:
    return ("pow", t, n)


def inv(t: Any) -> tuple:
    return ("inv", t)


def fn(name: str, t: Any) -> tuple:
    return (name, t)


def app(name: str, *args: Any) -> tuple:
    return ("app", _name(name, "a function's"), *args)


def sum_(body: Any, k: str, lo: Any, hi: Any) -> tuple:
    return ("sum", body, _name(k, "a bound variable's"), lo, hi)


def validate(t: Any, depth: int = 0) -> tuple:
    """Check that ``t`` is a well-formed term (shape, names, sorts, literal sizes); return it."""
    walked()
    if depth > MAX_DEPTH:
        raise KernelError(f"a term nested deeper than {MAX_DEPTH} levels is refused")
    if not isinstance(t, tuple) or not t or not isinstance(t[0], str):
        raise KernelError(f"a term is a tuple whose first entry names its kind, got {t!r:.120}")
    head, args = t[0], t[1:]
    if head == "num":
        if len(args) != 2 or not all(type(a) is int for a in args) or args[1] <= 0:
            raise KernelError(f"a number is ('num', p, q) with ints p, q > 0, got {t!r:.120}")
        if max(abs(args[0]), args[1]).bit_length() > 4096:
            raise KernelError("a number literal longer than 4096 bits is refused")
        walked(max(abs(args[0]), args[1]).bit_length() // 64)  # its gcd: counted as the nodes it costs, about
        if Fraction(args[0], args[1]).denominator != args[1]:
            raise KernelError(f"a number is in lowest terms, got {t!r:.120}")
        return t
    if head == "var":
        if len(args) != 2:
            raise KernelError(f"a variable is ('var', name, sort), got {t!r:.120}")
        var(args[0], args[1])
        return t
    if head == "pi":
        if args:
            raise KernelError("pi takes no arguments")
        return t
    if head in ("add", "mul"):
        if len(args) < 2:
            raise KernelError(f"{head} takes two or more terms, got {len(args)}")
    elif head == "pow":
        if len(args) != 2 or type(args[1]) is not int or not 0 <= args[1] <= MAX_EXPONENT:
            raise KernelError(f"a power is ('pow', t, n) with an int 0 <= n <= {MAX_EXPONENT}, got {t!r:.120}")
        validate(args[0], depth + 1)
        return t
    elif head in ("inv",) + FUNCTIONS:
        if len(args) != 1:
            raise KernelError(f"{head} takes one term, got {len(args)}")
    elif head in BINARY:
        if len(args) != 2:
            raise KernelError(f"{head} takes two terms, got {len(args)}")
    elif head == "if":
        r = args[0] if args else None
        if len(args) != 3 or not (isinstance(r, tuple) and len(r) == 3 and r[0] in RELATION_KINDS):
            raise KernelError("a conditional is ('if', (relation, a, b), then, else)")
        args = (r[1], r[2], args[1], args[2])
    elif head == "app":
        if len(args) < 2:
            raise KernelError("an application names its function and takes one or more terms")
        _name(args[0], "a function's")
        args = args[1:]
    elif head == "diff":
        if len(args) != 2:
            raise KernelError("a derivative is ('diff', t, variable name)")
        _name(args[1], "a derivative's variable")
        args = (args[0],)
    elif head == "sum":
        if len(args) != 4:
            raise KernelError("a sum is ('sum', body, k, lo, hi)")
        _name(args[1], "a bound variable's")
        args = (args[0], args[2], args[3])
    else:
        raise KernelError(f"the checker knows no function {head!r}: a formula uses only num, var, pi, add, mul, pow, "
                          f"inv, {', '.join(FUNCTIONS + BINARY)}, if, app and sum")
    for a in args:
        validate(a, depth + 1)
    return t


def variables(t: tuple, bound: frozenset = frozenset()) -> set:
    """The free variables of ``t`` (as their ('var', name, sort) tuples) and its function names ('app', name)."""
    walked()
    head = t[0]
    if head == "var":
        return set() if t[1] in bound else {t}
    if head in ("num", "pi"):
        return set()
    if head in ("pow", "diff"):
        return variables(t[1], bound)
    if head == "app":
        out = {("app", t[1])}
        for a in t[2:]:
            out |= variables(a, bound)
        return out
    if head == "sum":
        return variables(t[1], bound | {t[2]}) | variables(t[3], bound) | variables(t[4], bound)
    if head == "if":
        return variables(t[1][1], bound) | variables(t[1][2], bound) | variables(t[2], bound) | variables(t[3], bound)
    out = set()
    for a in t[1:]:
        out |= variables(a, bound)
    return out


def names(t: Any) -> set:
    """Every name a term uses: its variables' (free or bound), its functions', its sums' indices and its
    derivatives' variables (so a fresh name is fresh against all of them)."""
    walked()
    if not isinstance(t, tuple):
        return {t} if isinstance(t, str) else set()
    if t[:1] == ("num",):
        return set()
    out: set = set()
    for a in t[1:]:
        out |= names(a)
    return out


def free_of_value(value: tuple) -> set:
    """The free variable names of a substitution's value: a term, or a ``("lambda", params, body)`` for a
    function (its parameters are not free)."""
    if value[0] == "lambda":
        return {w[1] for w in variables(value[2]) if w[0] == "var"} - set(value[1])
    return {w[1] for w in variables(value) if w[0] == "var"}


def substitute(t: tuple, values: dict) -> tuple:
    """``t`` with each free variable named in ``values`` replaced by its term, and each function named in it
    replaced by its ``("lambda", params, body)`` (applied: the body at the arguments); a replacement that a sum's
    bound variable would capture is refused."""
    walked()
    head = t[0]
    if head == "var":
        v = values.get(t[1], t)
        if v[0] == "lambda":
            raise KernelError(f"{t[1]!r} is a variable, replaced by a function")
        return v
    if head in ("num", "pi"):
        return t
    if head == "pow":
        return ("pow", substitute(t[1], values), t[2])
    if head == "diff":
        if t[2] in values:
            raise KernelError(f"a value for {t[2]!r} inside a derivative in {t[2]!r}: differentiate first")
        if any(t[2] in free_of_value(v) for v in values.values()):
            raise KernelError(f"substituting into a derivative in {t[2]!r} would capture a free {t[2]!r}")
        return ("diff", substitute(t[1], values), t[2])
    if head == "app":
        args = tuple(substitute(a, values) for a in t[2:])
        f = values.get(t[1])
        if f is None:
            return ("app", t[1], *args)
        if f[0] != "lambda" or len(f[1]) != len(args):
            raise KernelError(f"the function {t[1]!r} is replaced by a function of {len(args)} arguments")
        return substitute(f[2], dict(zip(f[1], args)))
    if head == "sum":  # the index hides a variable of its name, never a function's
        inner = {k: v for k, v in values.items() if k != t[2] or v[0] == "lambda"}
        if any(t[2] in free_of_value(v) for v in inner.values()):
            raise KernelError(f"substituting into a sum over {t[2]!r} would capture a free {t[2]!r}")
        return ("sum", substitute(t[1], inner), t[2], substitute(t[3], values), substitute(t[4], values))
    if head == "if":
        r = t[1]
        return ("if", (r[0], substitute(r[1], values), substitute(r[2], values)), substitute(t[2], values),
                substitute(t[3], values))
    return (head, *(substitute(a, values) for a in t[1:]))


def substitute_relation(r: tuple, values: dict) -> tuple:
    """An atomic relation, an ``("and", ...)`` of them, or a universal hypothesis ``("all", binders, relation)``,
    with ``values`` substituted in every side (never for a universal's own binders, and refused where a value
    would be captured by one)."""
    if r[0] == "and":
        return ("and", *(substitute_relation(x, values) for x in r[1:]))
    if r[0] == "all":
        own = {b[1] for b in r[1]}
        inner = {k: v for k, v in values.items() if k not in own}
        if any(own & free_of_value(v) for v in inner.values()):
            raise KernelError("a substituted value would be captured by a universal hypothesis's bound variable")
        return ("all", r[1], substitute_relation(r[2], inner))
    return (r[0], substitute(r[1], values), substitute(r[2], values))


def tree_size(t: Any, limit: int | None = None) -> int:
    """Nodes of ``t`` as a tree (shared subterms counted at every use); with ``limit``, counting stops just past
    it, so the count itself costs at most about that many steps."""
    n, stack = 0, [t]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            n += 1
            if limit is not None and n > limit:
                break
            stack.extend(x)
    walked(n)  # a count is a walk like any other (every caller gives a limit)
    return n


#: what malformed plain data raises while it is read; the checker turns each into a KernelError
MALFORMED = (TypeError, IndexError, KeyError, AttributeError, ValueError, ArithmeticError, RecursionError)
MAX_TREE = 400_000  # nodes of a proposition or certificate, shared subterms counted at every use


_F = TypeVar("_F", bound=Callable[..., Any])


def refusing(f: _F) -> _F:
    """A public function of the checker whose malformed input is refused with KernelError (never another
    exception: the ninth audit crashed ``show``, ``to_json``, ``from_json`` and the verdict's helpers). The
    wrapper keeps the function's name, docstring and annotations, and chains the original exception."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except KernelError:
            raise
        except MALFORMED as exc:
            raise KernelError(f"malformed input to {f.__name__} ({type(exc).__name__}: {exc})"[:300]) from exc

    for attr in ("__name__", "__qualname__", "__doc__", "__module__", "__annotations__"):
        setattr(wrapper, attr, getattr(f, attr))
    wrapper.__wrapped__ = f  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


@refusing
def to_json(t: Any) -> Any:
    return _to_json(t)


def _to_json(t: Any) -> Any:  # the recursion unwrapped: one wrapper per call, not per level
    return [_to_json(a) if isinstance(a, tuple) else a for a in t]


@refusing
def from_json(j: Any) -> tuple:
    if not isinstance(j, list):
        raise KernelError(f"a stored term is a JSON array, got {j!r:.80}")
    return _from_json(j)


def _from_json(j: list) -> tuple:
    return tuple(_from_json(a) if isinstance(a, list) else a for a in j)


_SORT_WORDS = {"real": "real", "pos": "positive real", "nonneg": "nonnegative real", "int": "integer",
               "nat": "natural number (>= 0)", "posint": "positive integer"}


@refusing
def show(t: tuple, prec: int = 0) -> str:
    """Plain text of a term, for titles and messages (the JSON form is the record): ``prec`` is the binding of the
    place it stands in (0 a side or an argument, 1 a factor, 2 a power's base), so brackets appear where needed."""
    head = t[0]
    if head == "num":
        text = str(t[1]) if t[2] == 1 else f"{t[1]}/{t[2]}"
        return f"({text})" if (prec and (t[1] < 0 or t[2] != 1)) else text
    if head == "var":
        return t[1]
    if head == "pi":
        return "pi"
    if head == "add":
        text = show(t[1], 0)
        for a in t[2:]:
            neg = _negated(a)
            text += f" - {show(neg, 1)}" if neg is not None else f" + {show(a, 0)}"
        return f"({text})" if prec else text
    if head == "mul":
        neg = _negated(t)
        if neg is not None:
            text = "-" + show(neg, 1)
            return f"({text})" if prec else text
        text = "*".join(show(a, 1) for a in t[1:])
        return f"({text})" if prec >= 2 else text
    if head == "pow":
        text = f"{show(t[1], 2)}^{t[2]}"
        return f"({text})" if prec >= 2 else text
    if head == "inv":
        text = f"1/{show(t[1], 2)}"
        return f"({text})" if prec >= 1 else text
    if head == "app":
        return f"{t[1]}({', '.join(show(a) for a in t[2:])})"
    if head == "sum":
        return f"sum({show(t[1])}, {t[2]} = {show(t[3])}..{show(t[4])})"
    if head == "if":
        return f"({show(t[2])} if {show_relation(t[1])} else {show(t[3])})"
    if head == "abs":
        return f"|{show(t[1])}|"
    if head == "diff":
        text = f"d/d{t[2]} {show(t[1], 2)}"
        return f"({text})" if prec >= 1 else text
    return f"{head}({', '.join(show(a) for a in t[1:])})"


def _negated(t: tuple) -> tuple | None:
    """The term without its leading -1 factor (a product starting with -1, or a negative number), else None."""
    if t[0] == "num" and t[1] < 0:
        return ("num", -t[1], t[2])
    if t[0] == "mul" and t[1] == ("num", -1, 1):
        return t[2] if len(t) == 3 else ("mul", *t[2:])
    if t[0] == "mul" and t[1][0] == "num" and t[1][1] < 0:
        return ("mul", ("num", -t[1][1], t[1][2]), *t[2:])
    return None


_REL = {"eq": "=", "lt": "<", "le": "<=", "ne": "!="}


def show_relation(r: tuple) -> str:
    if r[0] == "all":
        return f"(for every {', '.join(f'{b[1]} {_SORT_WORDS[b[2]]}' for b in r[1])}: {show_relation(r[2])})"
    if r[0] == "in":
        rows = ", ".join("(" + ", ".join(show(c) for c in row) + ")" for row in r[2])
        return f"({', '.join(v[1] for v in r[1])}) in {{{rows}}}"
    return f"{show(r[1])} {_REL[r[0]]} {show(r[2])}"


def show_proposition(prop: tuple) -> str:
    """The proposition in words and plain formulas: its binders with their sorts, its hypotheses, its conclusion.
    A claim's title is this text, so a record's title is checked against its statement."""
    _, binders, hyps, concl = prop
    groups: dict[str, list[str]] = {}
    funs = []
    for b in binders:
        if b[0] == "fun":
            into = {"real": "R", "pos": "(0, oo)", "nonneg": "[0, oo)"}[b[3]]
            funs.append(f"{b[1]}: R^{b[2]} -> {into}" if b[2] > 1 else f"{b[1]}: R -> {into}")
        else:
            groups.setdefault(_SORT_WORDS[b[2]], []).append(b[1])
    parts = [f"{', '.join(v)} {w}" for w, v in groups.items()] + [f"every function {f}" for f in funs]
    rels = list(concl[1:]) if concl[0] == "and" else [concl]
    text = " and ".join(show_relation(r) for r in rels)
    if hyps:
        text = f"if {' and '.join(show_relation(h) for h in hyps)}, then {text}"
    return f"for all {'; '.join(parts)}: {text}" if parts else text
