r"""The teaching encodings before the sinusoid, and the faults the introductions ascribe to them.

* integer: :math:`PE(p)_j = p` is unbounded;
* normalized: :math:`PE(p)_j = p/L` depends on the sequence length :math:`L`;
* binary: :math:`PE(p)_j = \lfloor p/2^j \rfloor \bmod 2` is bounded and unique on
  :math:`[0, 2^d)`, but jumps: from :math:`2^j - 1` to :math:`2^j` flips :math:`j + 1`
  bits, while the sinusoid moves by the same small step at every position.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .. import pedagogy as _shipped
from ._decide import Derivation, unevaluated
from .rope import TRIG

__all__ = ["bit_formula", 
    "binary_bits",
    "integer_unbounded",
    "normalized_depends_on_length",
    "binary_bounded_unique",
    "binary_jump",
    "sinusoid_step",
]


def binary_bits(p: int, d: int) -> list[int]:
    """The d entries of the shipped :func:`pemath.pedagogy.binary` at position p (least significant first), as
    exact integers (its float64 entries are 0.0 and 1.0; anything else is returned as it is, to fail)."""
    if d == 0:
        return []
    row = _shipped.binary([p], d)[0]
    return [int(v) if float(v).is_integer() else sp.nsimplify(float(v)) for v in row]


def integer_entry(p: sp.Expr) -> sp.Expr:
    """Every entry of the integer encoding at position p: p."""
    return p


def normalized_entry(p: sp.Expr, L: sp.Expr) -> sp.Expr:
    """Every entry of the length-normalized encoding at position p of a sequence of length L: p/L."""
    return p / L


def integer_unbounded() -> Derivation:
    """For every bound B, the position B + 1 has entries above B.

    The entries are :func:`integer_entry` (the mutation tests patch bounded ones).
    """
    encoding = integer_entry
    d = Derivation("the integer encoding is unbounded")
    B = sp.Symbol("B", integer=True, nonnegative=True)
    dim = sp.Symbol("d", integer=True, positive=True)
    p = sp.Symbol("p", integer=True, nonnegative=True)
    d.define("Every entry of the integer encoding at position p is", encoding(p))
    d.hypothesis("Any real bound on the entries is below an integer bound B >= 0 (its ceiling), so take B an "
          "integer. Position p = B + 1 is a valid position (the encoding accepts every p >= 0).")
    d.true("its entries exceed B: PE(B + 1)_j > B", unevaluated(lambda: sp.Gt(encoding(B + 1), B)))
    e = encoding(p)
    d.define("Its squared Euclidean norm, over d equal entries, is", dim * e**2)
    d.equal("|PE(p)|^2 - PE(p)_j^2 = (d - 1) PE(p)_j^2 ...", dim * e**2 - e**2, (dim - 1) * e**2, methods=("expand",))
    d.true("... >= 0 (d >= 1): the norm is at least any entry, so it exceeds B at p = B + 1 too",
           unevaluated(lambda: sp.Ge((dim - 1) * e**2, 0)))
    d.remark("So no bound holds for all positions: against token embeddings of norm O(1), the encoding "
          "eventually dominates.")
    return d


def normalized_depends_on_length() -> Derivation:
    """The same position gets different encodings in sequences of different lengths.

    The entries are :func:`normalized_entry` (the mutation tests patch a length-independent one).
    """
    encoding = normalized_entry
    d = Derivation("the length-normalized encoding depends on the length")
    two, four, eight = sp.Integer(2), sp.Integer(4), sp.Integer(8)
    a, b = encoding(two, four), encoding(two, eight)
    d.define("Position 2 in a sequence of length 4, and in one of length 8 (exact rationals):", [a, b])
    d.true("the two encodings differ: position 2 has no length-independent meaning", unevaluated(lambda: sp.Ne(encoding(two, four), encoding(two, eight))))
    p = sp.Symbol("p", integer=True, positive=True)
    L = sp.Symbol("L", integer=True, positive=True)
    delta = sp.Symbol("delta", integer=True, positive=True)
    d.equal("in general, for p >= 1 and lengths L < L + delta: (PE_L(p) - PE_{L+delta}(p)) L (L + delta) = p delta",
            encoding(p, L) * L * (L + delta) - encoding(p, L + delta) * L * (L + delta), p * delta,
            methods=("expand",))
    d.true("which is positive, as is L (L + delta): every position p >= 1 changes with the length",
           unevaluated(lambda: sp.And(sp.Gt(p * delta, 0), sp.Gt(L * (L + delta), 0))))
    t = sp.Symbol("t", integer=True, nonnegative=True)
    top = encoding(L - 1 - t, L)
    d.equal("(it is bounded: at p = L - 1 - t, 1 - PE = (1 + t)/L ...", 1 - top, (1 + t) / L, methods=("expand",))
    d.true("... > 0, so PE < 1; and PE >= 0 for p >= 0)", unevaluated(lambda: sp.Gt((1 + t) / L, 0)))
    return d


_D = sp.Symbol("d", integer=True, positive=True)
_P = sp.Symbol("p", integer=True, nonnegative=True)
_J = sp.Symbol("j", integer=True, nonnegative=True)
_I = sp.Symbol("i", integer=True, nonnegative=True)


def bit(p: sp.Expr, j: sp.Expr) -> sp.Expr:
    """Bit ``j`` of ``p``, as a SymPy expression: floor(p / 2^j) mod 2."""
    return sp.Mod(sp.floor(p / sp.Integer(2) ** j), 2)


def _code(name: str, d: int) -> list[sp.Symbol]:
    return [sp.Symbol(f"{name}_{j}", integer=True) for j in range(d)]


def binary_bounded_unique(dims: Sequence[int] = tuple(range(1, 9))) -> Derivation:
    """The shipped codes are the bits floor(p / 2^j) mod 2 (so entries in {0, 1}), and decoding sum_j 2^j b_j gives
    p back, so the 2^d codes of [0, 2^d) are distinct."""
    d = Derivation("the binary encoding is bounded and unique")
    d.define("PE(p)_j = floor(p / 2^j) mod 2, j = 0..d-1: a remainder mod 2 is 0 or 1", bit(_P, _J))
    for n in dims:
        b = _code("b", n)
        ok = sp.And(sp.Eq(sp.Add(*[sp.Integer(2) ** j * b[j] for j in range(n)]), _P, evaluate=False),
                    *[sp.Eq(b[j], bit(_P, j), evaluate=False) for j in range(n)])
        d.enumerated(f"d = {n}: pemath.pedagogy.binary gives each p < 2^d the bits floor(p / 2^j) mod 2, which decode "
                     "to p (so the 2^d codes are distinct), decided exhaustively", (_P, *b),
                     [(p, *binary_bits(p, n)) for p in range(2**n)], ok)
    n = max(dims)
    with sp.evaluate(False):  # the bits as the formula floor(p / 2^j) - 2 floor(p / 2^(j+1)), for every p < 2^d
        bits = [bit_formula(_P, j) for j in range(n)]
        decoded = sp.And(sp.Eq(sp.Add(*[sp.Integer(2) ** j * bits[j] for j in range(n)]), _P),
                         *[sp.Le(0, x) for x in bits], *[sp.Le(x, 1) for x in bits])
    d.enumerated(f"d = {n}, the formula itself: for every p < 2^{n}, each bit floor(p / 2^j) - 2 floor(p / 2^(j+1)) is 0 "
                 "or 1 (an integer in [0, 1]) and the bits decode to p", _P, range(2**n), decoded)
    return d


def bit_formula(p: sp.Expr, j: sp.Expr) -> sp.Expr:
    """Bit ``j`` of ``p`` >= 0 without a remainder: floor(p / 2^j) - 2 floor(p / 2^(j+1)) (= floor(p / 2^j) mod 2)."""
    return sp.floor(p / sp.Integer(2) ** j) - 2 * sp.floor(p / sp.Integer(2) ** (j + 1))


def binary_jump(dims: Sequence[int] = tuple(range(1, 9))) -> Derivation:
    """From 2^j - 1 to 2^j, j + 1 bits flip: |PE(2^j) - PE(2^j - 1)| = sqrt(j + 1)."""
    d = Derivation("the binary encoding jumps")
    i = sp.Symbol("i", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    d.equal("2^j - 1 = sum_{i<j} 2^i: its bits 0..j-1 are 1, the others 0", sp.Sum(2**i, (i, 0, j - 1)),
            2**j - 1, methods=("expand", "doit"))
    d.cite("2^j has bit j alone, so the codes of 2^j - 1 and 2^j differ in bits 0..j, each by 1",
           source="Knuth, The Art of Computer Programming vol. 2, section 4.1 (positional number systems)")
    d.equal("|PE(2^j) - PE(2^j - 1)|^2 = sum_{i=0}^{j} 1 = j + 1", sp.Sum(1, (i, 0, j)), j + 1,
            methods=("expand", "doit"))
    for n in dims:
        a, c = _code("a", n), _code("c", n)
        sq = sp.Add(*[(c[k] - a[k]) ** 2 for k in range(n)])
        d.enumerated(f"d = {n}: the codes pemath.pedagogy.binary gives 2^j - 1 and 2^j are j + 1 apart squared "
                     "(j < d) ...", (_J, *a, *c),
                     [(q, *binary_bits(2**q - 1, n), *binary_bits(2**q, n)) for q in range(n)],
                     sp.Eq(sq, _J + 1, evaluate=False))
        d.enumerated(f"d = {n}: ... and no two neighbours are more than d apart squared (the diameter of {{0, 1}}^d): "
                     f"positions {2**(n - 1) - 1} and {2**(n - 1)} are sqrt(d) apart, while 0 and {2**(n - 1)} are 1 "
                     "apart", (_P, *a, *c), [(p, *binary_bits(p, n), *binary_bits(p + 1, n)) for p in range(2**n - 1)],
                     sp.Le(sq, n, evaluate=False))
    n = max(dims)
    with sp.evaluate(False):  # the same from the formula, for every j < d
        top = sp.Integer(2) ** _J
        jump = sp.Eq(sp.Add(*[(bit_formula(top, k) - bit_formula(top - 1, k)) ** 2 for k in range(n)]), _J + 1)
    d.enumerated(f"d = {n}, the formula itself: for every j < {n}, the bits of 2^j and 2^j - 1 differ in j + 1 places: "
                 "|PE(2^j) - PE(2^j - 1)|^2 = j + 1", _J, range(n), jump)
    return d


def sinusoid_step() -> Derivation:
    """The sinusoid's step: |PE(t+1) - PE(t)|^2 = sum_i (2 - 2 cos w_i) <= sum_i w_i^2, at every t."""
    d = Derivation("the sinusoid moves by the same small step at every position")
    t = sp.Symbol("t", real=True)
    w = sp.Symbol("omega", positive=True)
    x = sp.Symbol("x", nonnegative=True)
    step = (sp.sin(w * (t + 1)) - sp.sin(w * t)) ** 2 + (sp.cos(w * (t + 1)) - sp.cos(w * t)) ** 2
    d.equal("one pair: (sin w(t+1) - sin wt)^2 + (cos w(t+1) - cos wt)^2 = 2 - 2 cos w, whatever t",
            step, 2 - 2 * sp.cos(w), methods=TRIG)
    v = sp.Symbol("v", nonnegative=True)
    d.equal("with w = 2v: 2 - 2 cos w = 4 sin^2(v)", 2 - 2 * sp.cos(2 * v), 4 * sp.sin(v) ** 2, methods=TRIG)
    d.equal("and sin x <= x for x >= 0: (x - sin x)' = 1 - cos x, which at x = 2v is 1 - cos 2v = 2 sin^2 v ...",
            sp.diff(x - sp.sin(x), x).subs(x, 2 * v), 2 * sp.sin(v) ** 2, methods=TRIG)
    d.true("... >= 0", unevaluated(lambda: sp.Ge(2 * sp.sin(v) ** 2, 0)))
    d.equal("and -sin x <= x: (x + sin x)' = 1 + cos x, which at x = 2v is 1 + cos 2v = 2 cos^2 v ...",
            sp.diff(x + sp.sin(x), x).subs(x, 2 * v), 2 * sp.cos(v) ** 2, methods=TRIG)
    d.true("... >= 0", unevaluated(lambda: sp.Ge(2 * sp.cos(v) ** 2, 0)))
    d.cite("a function with a non-negative derivative on x >= 0 is non-decreasing there (mean value theorem); "
           "x - sin x and x + sin x are 0 at x = 0, so |sin x| <= x for x >= 0, and |sin(w/2)| <= w/2", source="Apostol, Calculus vol. 1, Theorem 4.7 (mean value theorem, monotonicity)")
    d.remark("so 4 sin^2(w/2) <= 4 (w/2)^2 = w^2, and summing over the pairs, |PE(t+1) - PE(t)|^2 = sum_i (2 - 2 cos w_i) "
          "<= sum_i w_i^2 at every position t: no jumps.")
    d.result["pair_step"] = 2 - 2 * sp.cos(w)
    d.result["omega"] = w
    return d

