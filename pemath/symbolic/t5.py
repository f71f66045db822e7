r"""T5's relative position buckets (Raffel et al. 2020, section 2.1): structure, monotonicity, counts.

With :math:`n_b` buckets per direction, :math:`M = \lfloor n_b/2 \rfloor` (``max_exact``),
:math:`E = n_b - M` logarithmic buckets and :math:`D` = ``max_distance``, a distance
:math:`n \ge 0` goes to

.. math::

    b(n) = \begin{cases} n & n < M \\
        M + \min\!\left(K(n),\, E - 1\right),\quad
        K(n) = \left\lfloor E \dfrac{\ln(n/M)}{\ln(D/M)} \right\rfloor & n \ge M
    \end{cases}

and a relative position :math:`r` = key - query to :math:`b(|r|) + n_b[r > 0]`
(bidirectional) or :math:`b(\max(-r, 0))` (unidirectional). Symbolically
:math:`D = M(1 + \sigma)` with :math:`\sigma > 0` (so :math:`\ln(D/M) > 0`).

Concrete configurations are evaluated in exact integer arithmetic: :math:`K(n) \ge k`
iff :math:`(n/M)^E \ge (D/M)^k` iff :math:`n^E M^k \ge D^k M^E`.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from typing import Any

import sympy as sp

import numpy as np

from .. import t5 as _shipped
from .kterms import inv, mul, neg, num, rule, var
from ._decide import Derivation, unevaluated

__all__ = [
    "STANDARD",
    "M",
    "E",
    "SIGMA",
    "log_index",
    "branches",
    "formula",
    "bucket_exact",
    "relative",
    "exact_below_max_exact",
    "monotone",
    "bucket_count",
    "every_log_bucket_reached",
    "count_hypothesis",
]

#: (num_buckets, max_distance, bidirectional): T5's 32/128 for the encoder and the decoder (also mT5,
#: ByT5, LongT5, UMT5, Switch), and the other configurations documented by :func:`pemath.t5.bucket`.
STANDARD: tuple[tuple[int, int, bool], ...] = (
    (32, 128, True),
    (32, 128, False),
    (64, 256, True),
    (128, 256, True),
    (128, 512, True),
    (32, 64, True),
    (16, 64, True),
)

M = sp.Symbol("M", integer=True, positive=True)  # max_exact
E = sp.Symbol("E", integer=True, positive=True)  # number of logarithmic buckets, n_b - M
SIGMA = sp.Symbol("sigma", positive=True)  # D = M (1 + sigma) > M
D = M * (1 + SIGMA)


#: The parts of T5's bucket formula: the exact branch ends at ``cut``, the logarithmic one starts at bucket
#: ``offset`` and is capped at ``offset + cap``; K(n) = floor(e log(n/ref) / log(top/ref)). The mutation tests
#: patch entries with wrong ones.
RULE: dict[str, Any] = {"cut": M, "offset": M, "cap": E - 1, "exact": lambda x: x, "ref": M, "top": D, "e": E,
                        "log": sp.log}


def log_index(n: sp.Expr) -> sp.Expr:
    """K(n) = floor(E log(n/M) / log(D/M))."""
    r = RULE
    return sp.floor(r["e"] * r["log"](n / r["ref"]) / r["log"](r["top"] / r["ref"]))


def branches(n: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(distance where the exact branch ends, exact branch, logarithmic branch) at distance n, from :data:`RULE`."""
    r = RULE
    return r["cut"], r["exact"](n), r["offset"] + sp.Min(log_index(n), r["cap"])


def _branches_in(d: Derivation, n: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """:func:`branches` inside a derivation: a logarithmic index that SymPy cannot compare with the cap
    (complex, or infinite, e.g. when log(D/M) is not positive) fails the derivation instead of raising
    SymPy's ``ValueError`` / ``TypeError``."""
    try:
        return branches(n)
    except (ValueError, TypeError) as exc:
        d.fail(f"the logarithmic bucket at n = {sp.sstr(n)} is undefined: min(K(n), cap) is not decidable "
               f"({exc})", log_index(n))
        raise  # unreachable: fail() raises


def formula(n: sp.Expr) -> sp.Expr:
    """The bucket of distance n (before the direction offset), as a Piecewise."""
    cut, ex, lg = branches(n)
    return sp.Piecewise((ex, n < cut), (lg, True))


def max_exact(h: int) -> int:
    """T5's max_exact for n_b buckets per direction: n_b // 2."""
    return h // 2


@functools.lru_cache(maxsize=64)
def _powers(e: int, me: int, md: int) -> tuple[int, ...]:
    """md^k me^(e-k) for k = 1 .. e-1: K(n) >= k iff n^e >= md^k me^(e-k)."""
    return tuple(md**k * me ** (e - k) for k in range(1, e))


def _k_exact(n: int, e: int, me: int, md: int) -> int:
    """K(n) capped at e - 1, exactly: how many of the integer thresholds n^e reaches."""
    return bisect.bisect_right(_powers(e, me, md), n**e)


def bucket_exact(r: int, num_buckets: int, max_distance: int, bidirectional: bool) -> int:
    """T5's bucket of relative position r (key - query), by exact integer arithmetic.

    max_exact is :func:`max_exact`, ``h // 2`` (the mutation tests patch ``h // 2 + 1``).
    """
    h = num_buckets // 2 if bidirectional else num_buckets
    me = max_exact(h)
    e = h - me
    if bidirectional:
        n, base = abs(r), (h if r > 0 else 0)
    else:
        n, base = max(-r, 0), 0
    return base + (n if n < me else me + _k_exact(n, e, me, max_distance))


def bucket_formula(r: sp.Expr, num_buckets: int, max_distance: int, bidirectional: bool) -> sp.Expr:
    """:func:`bucket_exact` as a SymPy expression in the relative position ``r``: the same integer thresholds
    (K(n) >= k iff n^E M^k >= D^k M^E), so an enumeration's formula states the bucket it checks."""
    h = num_buckets // 2 if bidirectional else num_buckets
    me = max_exact(h)
    e = h - me
    if bidirectional:
        n, base = sp.Abs(r), sp.Piecewise((h, r > 0), (0, True))
    else:
        n, base = sp.Max(-r, 0), sp.S.Zero
    k = sp.Add(*[sp.Piecewise((1, n**e * me**kk >= sp.Integer(max_distance) ** kk * me**e), (0, True))
                 for kk in range(1, e)])
    return base + sp.Piecewise((n, n < me), (me + k, True))


def _witnesses(num_buckets: int, max_distance: int, bidirectional: bool, span: int) -> dict[int, int]:
    """For each bucket the shipped :func:`pemath.t5.bucket` (exact mode) produces over |r| <= span * max_distance,
    the relative position of smallest |r| giving it: the enumeration then checks the shipped value against the
    formula."""
    rs = sorted(range(-span * max_distance, span * max_distance + 1), key=lambda r: (abs(r), r))
    got = np.asarray(_shipped.bucket(np.asarray(rs), bidirectional=bidirectional, num_buckets=num_buckets,
                                     max_distance=max_distance, exact=True)).tolist()
    out: dict[int, int] = {}
    for r, b in zip(rs, got):
        out.setdefault(int(b), r)
    return out


def _count_decided(d: Derivation, nb: int, md: int, bi: bool, span: int, text: str) -> int:
    """Decide which buckets the relative positions |r| <= span * md produce: a witness for each produced bucket,
    and, for each bucket 0..nb-1 not produced, that no position in the range gives it. Returns the count."""
    rr, bb = sp.Symbol("r", integer=True), sp.Symbol("b", integer=True, nonnegative=True)
    wit = _witnesses(nb, md, bi, span)
    d.enumerated(f"{text}: a witness r for each of the {len(wit)} buckets produced", (bb, rr),
                 sorted(wit.items()), sp.Eq(bucket_formula(rr, nb, md, bi), bb, evaluate=False))
    # bucket h both ways is never produced (decided for every configuration: distance >= 1 gives bucket >= 1)
    missing = sorted(set(range(nb)) - set(wit) - ({nb // 2} if bi else set()))
    if missing:
        d.enumerated(f"{text}: no relative position |r| <= {span * md} gives bucket "
                     f"{', '.join(map(str, missing))} (beyond, every bucket is the last)", rr,
                     range(-span * md, span * md + 1),
                     sp.Not(sp.Contains(bucket_formula(rr, nb, md, bi), sp.FiniteSet(*missing), evaluate=False)))
    return len(wit)


def relative_position(q: sp.Expr, k: sp.Expr) -> sp.Expr:
    """The argument of T5's bucket function for query q and key k: k - q."""
    return k - q


def relative() -> Derivation:
    """The bias of query i and key j is T[b(j - i)]: shifting both positions changes nothing.

    The bucket function's argument is :func:`relative_position` (``k - q``; the mutation tests patch ones
    that are not relative).
    """
    d = Derivation("T5's bias is a function of key - query")
    q, k, s = sp.symbols("i j s", integer=True)
    b, T = sp.Function("b"), sp.Function("T")
    rel = relative_position
    bias = T(b(rel(q, k)))
    d.define("T5's bias of query i and key j looks up the learned table T at the bucket of the relative "
          "position j - i (b any bucket function):", sp.Eq(sp.Symbol("B_ij"), bias, evaluate=False))
    d.zero("shifting both positions by s: B(i+s, j+s) - B(i, j) = 0",
        unevaluated(lambda: T(b(rel(q + s, k + s))) - bias),
           methods=("expand",))
    r = sp.Symbol("r", integer=True)
    d.remark("Inside b, the distance |r| and the direction [r > 0] (bidirectional), or max(-r, 0) "
          "(unidirectional), are functions of r = j - i alone:", [sp.Abs(r), sp.Max(-r, 0)])
    return d


def exact_below_max_exact(configs: Sequence[tuple[int, int, bool]] = STANDARD + ((33, 128, False),)) -> Derivation:
    """Below max_exact the bucket is the distance; the logarithmic buckets start at M with bucket M.

    The symbolic formula is :data:`RULE`'s, the concrete one :func:`bucket_exact` (the mutation tests patch
    either).
    """
    d = Derivation("T5 buckets are exact below max_exact")
    t = sp.Symbol("t", integer=True, nonnegative=True)
    u = sp.Symbol("u", nonnegative=True)
    d.define("T5's bucket of a distance n, with M = max_exact, E = n_b - M log buckets and D = M (1 + sigma):",
          formula(sp.Symbol("n", integer=True, nonnegative=True)))
    cut, ex, _ = _branches_in(d, M - 1 - t)
    d.true("every n = M - 1 - t (t >= 0) is below M, in the exact branch", unevaluated(lambda: sp.Lt(M - 1 - t, cut)))
    d.zero("where the bucket is n itself", unevaluated(lambda: ex - (M - 1 - t)), methods=("expand",))
    cut, _, lg = _branches_in(d, M)
    d.true("n = M is not below M: the logarithmic branch starts there", unevaluated(lambda: sp.Ge(M, cut)))
    d.zero("with K(M) = floor(E log 1 / log(D/M)) = 0: bucket M", unevaluated(lambda: lg - M), methods=("expand",))
    cut, _, lg = _branches_in(d, M * (1 + u))
    d.true("every n = M (1 + u) with u >= 0 is in the logarithmic branch",
           sp.Ge(sp.expand(M * (1 + u) - cut), 0, evaluate=False))
    d.true("where log(n/M) = log(1 + u) >= 0, so K(n) >= 0 and the bucket is >= M: no distance >= M "
           "shares an exact bucket", unevaluated(lambda: sp.Ge(lg - M, 0)))
    d.define("Concrete configurations, in exact integer arithmetic (K(n) >= k iff n^E M^k >= D^k M^E):")
    for nb, md, bi in configs:
        h = nb // 2 if bi else nb
        me = h // 2
        nn, bb = sp.Symbol("n", integer=True, nonnegative=True), sp.Symbol("b", integer=True)
        shipped = np.asarray(_shipped.bucket(-np.arange(me + 2), bidirectional=bi, num_buckets=nb, max_distance=md,
                                             exact=True)).tolist()
        d.enumerated(f"{nb}/{md} {'bidirectional' if bi else 'unidirectional'}: pemath.t5.bucket gives distances "
                     f"0..{me + 1} the buckets 0..{me}, {me}, as the formula does: exact up to max_exact = {me}, and "
                     f"distance {me + 1} shares the first logarithmic bucket", (nn, bb),
                     list(enumerate(shipped)),
                     sp.And(sp.Eq(bucket_formula(-nn, nb, md, bi), bb, evaluate=False),
                            sp.Eq(bb, sp.Min(nn, me), evaluate=False)))
    return d


def monotone() -> Derivation:
    """The bucket is non-decreasing in the distance (within each direction)."""
    d = Derivation("T5 buckets are monotone in the distance")
    n = sp.Symbol("x", positive=True)  # the distance as a real variable: g is defined for every x > 0
    log = RULE["log"]
    arg = RULE["e"] * log(n / RULE["ref"]) / log(RULE["top"] / RULE["ref"])
    d.define("For n >= M the bucket is M + min(floor(g(n)), E - 1) with g, on the reals x > 0,",
             sp.Eq(sp.Symbol("g(x)"), arg, evaluate=False))
    d.true("g is increasing: g'(x) = E / (x log(1 + sigma)) > 0 (log(D/M) = log(1 + sigma) > 0)",
           sp.Gt(sp.Derivative(arg, n), 0, evaluate=False))
    d.cite("floor is non-decreasing: a <= b gives floor(a) <= a <= b, and floor(b) is the largest integer "
          "<= b, so floor(a) <= floor(b); min(., E - 1) is non-decreasing too. Hence the logarithmic "
          "branch is non-decreasing in n.",
           source="Graham, Knuth & Patashnik, Concrete Mathematics, section 3.1 (floor is monotone)")
    _, below, _ = _branches_in(d, M - 1)
    _, _, at = _branches_in(d, M)
    d.zero("at the junction the bucket steps from M - 1 (exact branch, n = M - 1) to M (logarithmic "
           "branch, n = M): up by one", unevaluated(lambda: at - below - 1), methods=("expand",))
    t = sp.Symbol("t", integer=True, nonnegative=True)
    _, e1, _ = _branches_in(d, t)
    _, e2, _ = _branches_in(d, t + 1)
    d.zero("and the exact branch steps by one: b(n + 1) - b(n) = 1 for n + 1 < M",
        unevaluated(lambda: e2 - e1 - 1), methods=("expand",))
    d.remark("With the direction: bidirectional r > 0 adds n_b to b(r) (increasing in r), r < 0 uses b(-r) "
          "(non-decreasing in |r|); unidirectional keys after the query (r >= 0) are all bucket 0.")
    _monotone_checked(d)
    return d


def _monotone_checked(d: Derivation) -> None:
    """bucket(n) <= bucket(n2) for every 1 <= n <= n2 and every configuration, decided by pemath.kernel alone: by
    cases on which branch each distance takes."""
    one, e, m, L = _ONE, _KE, _KM, _KL
    n1, n2 = var("n", "posint"), var("n2", "posint")
    em1, eil = ("add", e, num(-1)), mul(e, inv(L))
    b1, b2 = _bucket(n1), _bucket(n2)
    g1, g2 = _index(n1), _index(n2)
    f1, f2 = ("floor", g1), ("floor", g2)

    def hyp(i: int) -> tuple:
        return ("hyp", i)

    def branch(b: tuple, exact: bool) -> tuple:
        return rule("if_true" if exact else "if_false", *b[1:])

    # hypothesis 0: n <= n2; then 1: n2 < M or M <= n2; 2: n < M or M <= n; further ones the lemmas ("cut")
    c_exact = ("cut", ("lt", n1, m), ("sign", (), ((hyp(0), one), (hyp(1), one))),  # both exact: n <= n2
               ("sign", ((branch(b2, True), one), (branch(b1, True), num(-1))), ((hyp(0), one),)))
    u = mul(n2, inv(m))  # g(n2) >= 0 for n2 >= M: log u >= 1 - 1/u, u - 1 = (n2 - M)/M
    c_g2 = ("sign", ((rule("inv", u), neg(eil)), (rule("inv", m), mul(eil, inv(u)))),
            ((rule("log_ge", u), eil), (hyp(1), mul(eil, inv(u), inv(m)))))
    floor_nonneg = ("int", ("sign", (), ((rule("floor_gt", g2), one), (hyp(4), one))))
    c_mixed = ("cut", ("le", ("add", n1, one), m), ("int", ("sign", (), ((hyp(2), one),))),  # n <= M - 1 < bucket(n2)
               ("cut", ("le", num(0), g2), c_g2, ("cut", ("le", num(0), f2), floor_nonneg,
                ("cases", ("le", f2, em1),
                 ("sign", ((branch(b2, False), one), (branch(b1, True), num(-1)), (rule("min_left", f2, em1), one)),
                  ((hyp(3), one), (hyp(5), one))),
                 ("sign", ((branch(b2, False), one), (branch(b1, True), num(-1)), (rule("min_left", em1, f2), one)),
                  ((hyp(3), one),))))))
    w = mul(n2, inv(n1))  # both logarithmic: log(n2/M) = log(n/M) + log(n2/n), log(n2/n) >= 1 - n/n2 >= 0
    split = ("eq", ("log", mul(n2, inv(m))), ("add", ("log", mul(n1, inv(m))), ("log", w)))
    cong = ("cong", ("log", var("z_")), "z_", mul(mul(n1, inv(m)), w), mul(n2, inv(m)),
            ((rule("inv", n1), mul(n2, inv(m))),))
    c_split = ("ideal", ((cong, num(-1)), (rule("log_mul", mul(n1, inv(m)), w), one)))
    c_g = ("sign", ((hyp(3), eil), (rule("inv", w), neg(eil)), (rule("inv", n1), mul(eil, inv(w)))),
           ((rule("log_ge", w), eil), (hyp(0), mul(eil, inv(w), inv(n1)))))
    c_f = ("int", ("sign", (), ((rule("floor_gt", g2), one), (hyp(4), one), (rule("floor_le", g1), one))))
    both = ((branch(b2, False), one), (branch(b1, False), num(-1)))
    c_log = ("cut", split, c_split, ("cut", ("le", g1, g2), c_g, ("cut", ("le", f1, f2), c_f,
             ("cases", ("le", f1, em1),  # min(floor g, E - 1) is non-decreasing in floor g
              ("cases", ("le", f2, em1),
               ("sign", both + ((rule("min_left", f2, em1), one), (rule("min_left", f1, em1), num(-1))),
                ((hyp(5), one),)),
               ("sign", both + ((rule("min_left", em1, f2), one), (rule("min_left", f1, em1), num(-1))),
                ((hyp(6), one),))),
              ("cut", ("le", em1, f2), ("sign", (), ((hyp(6), one), (hyp(5), one))),
               ("sign", both + ((rule("min_left", em1, f2), one), (rule("min_left", em1, f1), num(-1))), ()))))))
    d.checked("For every configuration and distances 1 <= n <= n2: bucket(n) <= bucket(n2), by cases: both below M "
              "(n <= n2); n below M, n2 not (n <= M - 1, and min(floor(g(n2)), E - 1) >= 0 as g(n2) >= 0: log u >= "
              "1 - 1/u); neither (g(n) <= g(n2), as log(n2/n) >= 1 - n/n2 >= 0; floor and min(., E - 1) keep the "
              "order)", ("forall", (e, m, n1, n2, _KSIGMA), (("le", n1, n2),), ("le", b1, b2)),
              ("cases", ("lt", n2, m), c_exact, ("cases", ("lt", n1, m), c_mixed, c_log)))


#: Odd counts besides the standard ones: 33 both ways (half 16, 31 buckets) and one way (half 33, max_exact 16: an odd
#: half, where half // 2 and (half + 1) // 2 differ).
ODD: tuple[tuple[int, int, bool], ...] = ((33, 128, True), (33, 128, False))


def bucket_count(configs: Sequence[tuple[int, int, bool]] = STANDARD + ODD, *,
                 span: int = 4) -> Derivation:
    """How many buckets T5 uses: num_buckets unidirectional, num_buckets - 1 bidirectional (even num_buckets).

    The result ``counts`` maps each configuration to the number of distinct buckets.
    """
    d = Derivation("how many T5 buckets are used")
    tt = sp.Symbol("t", nonnegative=True)
    _, _, at_d = _branches_in(d, D)
    d.zero("at n = D: K(D) = floor(E log(D/M) / log(D/M)) = E, capped: bucket M + E - 1 = n_b - 1, the last",
           unevaluated(lambda: at_d - (M + E - 1)), methods=("expand",))
    k_beyond = sp.expand(log_index(D * (1 + tt)))
    d.true("beyond D, n = D (1 + t): K(n) = E + floor(E log(1 + t)/log(1 + sigma)) >= E, capped at E - 1: "
           "every n >= D is in bucket n_b - 1", unevaluated(lambda: sp.Ge(k_beyond - E, 0)))
    x = sp.Symbol("x", nonnegative=True)
    gp = sp.diff(x - sp.log(1 + x), x)
    d.equal("log(1 + x) <= x for x >= 0: (x - log(1 + x))' = x/(1 + x) ...", gp, x / (1 + x), methods=("simplify",))
    d.true("... >= 0, and x - log(1 + x) = 0 at x = 0", unevaluated(lambda: sp.Ge(x / (1 + x), 0)))
    uu = sp.Symbol("u", nonnegative=True)
    nn = M * (1 + uu)
    d.equal("between consecutive distances n = M (1 + u) and n + 1 the real-valued index E log(n/M)/log(D/M) "
            "grows by E log(1 + 1/n)/log(1 + sigma)",
            sp.expand_log(E * sp.log((nn + 1) / M) / sp.log(1 + SIGMA) - E * sp.log(nn / M) / sp.log(1 + SIGMA),
                          force=True),
            sp.expand_log(E * sp.log(1 + 1 / nn) / sp.log(1 + SIGMA), force=True), methods=("expand", "simplify"))
    d.assumed("which is at most E/(n log(1 + sigma)) (log(1 + x) <= x, x = 1/n, above) and that at most "
              "E/(M log(1 + sigma)), as n >= M: E/(M log(1 + sigma)) - E/(n log(1 + sigma)) >= 0",
              sp.factor(E / (M * sp.log(1 + SIGMA)) - E / (nn * sp.log(1 + SIGMA))), "nonnegative")
    d.hypothesis("Hypothesis of the count: E <= M log(D/M); under it every logarithmic bucket M..n_b-1 is reached "
                 "(decided below for every configuration, with a witness distance per bucket). It is sufficient, "
                 "not necessary: some configurations that violate it skip buckets, others still use them all "
                 "(decided below).")
    for nb, md, bi in ((32, 12, True), (32, 20, False), (32, 20, True), (32, 21, True), (64, 40, True)):
        h0 = nb // 2 if bi else nb
        e0, m0 = h0 - h0 // 2, h0 // 2
        d.true(f"{nb}/{md}: E = {e0} > M log(D/M) = {m0} log({sp.Rational(md, m0)}): the hypothesis fails",
               sp.Gt(sp.Integer(e0), m0 * sp.log(sp.Rational(md, m0)), evaluate=False))
        with d.part("statement"):
            n_used = _count_decided(d, nb, md, bi, 4, f"{nb}/{md} {'bidirectional' if bi else 'unidirectional'}")
        d.remark(f"{nb}/{md} {'bidirectional' if bi else 'unidirectional'} uses {n_used} of the "
                 f"{2 * h0 - 1 if bi else h0} buckets the count gives")
    n1 = sp.Symbol("n", integer=True, positive=True)
    u = sp.Symbol("u", nonnegative=True)
    _, ex, _ = _branches_in(d, n1)
    _, _, lg = _branches_in(d, M * (1 + u))
    d.true("every distance n >= 1 has bucket >= 1: n in the exact branch ...", unevaluated(lambda: sp.Ge(ex, 1)))
    d.true("... and bucket >= M >= 1 in the logarithmic branch",
        unevaluated(lambda: sp.And(sp.Ge(lg - M, 0), sp.Ge(M, 1))))
    d.remark("Hence unidirectional: r >= 0 gives bucket 0 and r < 0 gives 1..n_b-1: n_b = num_buckets buckets. "
          "Bidirectional: r <= 0 gives 0..n_b-1, r > 0 gives n_b + (1..n_b-1): bucket n_b is never produced, "
          "2 n_b - 1 buckets, n_b = floor(num_buckets / 2): num_buckets - 1 for an even count, num_buckets - 2 "
          "for an odd one (33/128 both ways uses 31).")
    counts = {}
    for nb, md, bi in configs:
        h = nb // 2 if bi else nb
        me = h // 2
        e = h - me
        d.true(f"{nb}/{md}: E/(M log(D/M)) = {e}/({me} log({sp.Rational(md, me)})) <= 1",
               sp.Le(sp.Integer(e), me * sp.log(sp.Rational(md, me)), evaluate=False))
        counts[(nb, md, bi)] = _count_decided(
            d, nb, md, bi, span, f"{nb}/{md} {'bidirectional' if bi else 'unidirectional'} (pemath.t5.bucket)")
    d.result["counts"] = counts
    return d


# --- T5's bucket in the checker's terms (pemath.kernel), for the steps it decides alone ------------------------

_ONE = num(1)
_KE, _KM, _KSIGMA = var("E", "posint"), var("M", "posint"), var("sigma", "pos")
_KL = ("log", ("add", _ONE, _KSIGMA))  # log(D/M), D = M (1 + sigma)






def _index(dist: tuple) -> tuple:
    """g(n) = E log(n/M) / log(D/M)."""
    return mul(_KE, inv(_KL), ("log", mul(dist, inv(_KM))))


def _bucket(dist: tuple) -> tuple:
    """T5's bucket of a distance n >= 1: n below M, else M + min(floor(g(n)), E - 1)."""
    return ("if", ("lt", dist, _KM), dist, ("add", _KM, ("min", ("floor", _index(dist)), ("add", _KE, num(-1)))))


def count_hypothesis(e: tuple, m: tuple, log_ratio: tuple) -> tuple[tuple, ...]:
    """E <= M log(D/M), in the checker's terms (the mutation tests drop it: the derivation must then fail)."""
    return (("le", e, ("mul", m, log_ratio)),)


def every_log_bucket_reached() -> Derivation:
    r"""Under E <= M log(D/M), every logarithmic bucket M + k, k = 0..E-1, is reached, and no distance n >= 1
    has a bucket past M + E - 1, for every configuration; decided by :mod:`pemath.kernel` alone.

    The witness of bucket M + k is the distance :math:`n_k = \lfloor x_k \rfloor + 1` with
    :math:`x_k = M (D/M)^{k/E}`, where the real index :math:`g(x) = E \log(x/M)/\log(D/M)` equals k:
    :math:`n_k > x_k` gives :math:`g(n_k) > k` (log u >= 1 - 1/u), and :math:`n_k \le x_k + 1` with
    :math:`\log u < u - 1` (u != 1) gives :math:`g(n_k) < k + E/(x_k \log(D/M)) \le k + 1`.
    """
    d = Derivation("T5: every logarithmic bucket is reached when E <= M log(D/M), every configuration")
    one, e, m, L = _ONE, _KE, _KM, _KL
    k, n = var("k", "nat"), var("n", "posint")
    index, bucket = _index, _bucket
    w = mul(k, L, inv(e))  # x_k = M e^w: g(x_k) = k
    x = mul(m, ("exp", w))
    nk = ("add", ("floor", x), one)  # the witness distance

    binders = (e, m, k, n, _KSIGMA)
    hyps = (("le", ("add", k, one), e),) + count_hypothesis(e, m, L)
    g, em1 = index(nk), ("add", e, num(-1))
    v = mul(inv(x), nk)  # n_k / x_k > 1
    eil = mul(e, inv(L))

    # lemmas, each a further hypothesis once decided ("cut"), in this order (their indices 2, 3, ...):
    split = ("eq", ("log", mul(nk, inv(m))), ("add", ("log", v), w))  # log(n_k/M) = log(n_k/x_k) + w
    cong = ("cong", ("log", var("z_")), "z_", mul(v, ("exp", w)), mul(nk, inv(m)),
            ((rule("inv", x), mul(nk, inv(m))), (rule("inv", m), neg(mul(nk, ("exp", w), inv(x))))))
    c_split = ("ideal", ((cong, num(-1)), (rule("log_mul", v, ("exp", w)), one), (rule("log_exp", w), one)))
    cancel = ((rule("inv", e), mul(k, L, inv(L))), (rule("inv", L), k))  # E w / log(D/M) = k
    above = ("le", k, g)  # g(n_k) >= k: log(n_k/x_k) >= 1 - x_k/n_k > 0
    c_above = ("sign", ((("hyp", 2), eil),) + cancel + ((rule("inv", v), neg(eil)), (rule("inv", x), mul(eil, inv(v)))),
               ((rule("log_ge", v), eil), (rule("floor_gt", x), mul(eil, inv(v), inv(x)))))
    past = ("lt", one, v)  # n_k > x_k
    c_past = ("sign", ((rule("inv", x), one),), ((rule("floor_gt", x), inv(x)),))
    below = ("lt", g, ("add", k, one))  # g(n_k) < k + 1: log u < u - 1, n_k <= x_k + 1, x_k >= M, the hypothesis
    c_below = ("sign", tuple((gen, neg(c)) for gen, c in ((("hyp", 2), eil),) + cancel) + (
        (rule("inv", x), neg(eil)), (rule("inv", L), neg(one)), (rule("inv", m), neg(mul(inv(L), L))),
        (rule("inv", x), neg(mul(inv(L), e, inv(m)))), (rule("inv", m), mul(inv(L), e, inv(x)))),
        ((rule("log_lt", v), eil), (rule("floor_le", x), mul(eil, inv(x))), (("hyp", 1), mul(inv(L), inv(m))),
         (rule("exp_ge", w), mul(inv(L), e, inv(m), inv(x), m))))
    floor_g = ("floor", g)
    exact = ("eq", floor_g, k)  # k <= g(n_k) < k + 1
    c_exact = ("antisym", ("int", ("sign", (), ((("hyp", 5), one), (rule("floor_le", g), one)))),
               ("int", ("sign", (), ((("hyp", 3), one), (rule("floor_gt", g), one)))))
    start = ("le", m, nk)  # n_k > x_k >= M e^0
    c_start = ("sign", (), ((rule("floor_gt", x), one), (rule("exp_ge", w), m)))
    capped = ("le", floor_g, em1)  # k <= E - 1
    c_capped = ("sign", ((("hyp", 6), num(-1)),), ((("hyp", 0), one),))
    b = bucket(nk)
    c_reached = ("ideal", ((rule("if_false", *b[1:]), one), (rule("min_left", floor_g, em1), one), (("hyp", 6), one)))
    cert = c_reached
    for lemma, c in reversed(((split, c_split), (above, c_above), (past, c_past), (below, c_below),
                              (exact, c_exact), (start, c_start), (capped, c_capped))):
        cert = ("cut", lemma, c, cert)
    # no bucket past M + E - 1: n < M gives n <= M - 1; else min(., E - 1) <= E - 1
    bn = bucket(n)
    c_small = ("cut", ("le", ("add", n, one), m), ("int", ("sign", (), ((("hyp", 2), one),))),
               ("sign", ((rule("if_true", *bn[1:]), num(-1)),), ((("hyp", 3), one),)))
    c_large = ("sign", ((rule("if_false", *bn[1:]), num(-1)),), ((rule("min_le", em1, bn[3][2][1]), one),))
    concl = ("and", start, ("eq", b, ("add", m, k)), ("le", bn, ("add", m, em1)))
    d.define("In the checker's terms: M, E positive integers (max_exact and the logarithmic buckets), D = M (1 + "
             "sigma), sigma > 0; bucket(n) = n below M, else M + min(floor(g(n)), E - 1), g(n) = E log(n/M) / "
             "log(D/M). Bucket M + k, k = 0..E-1, has the witness distance n_k = floor(x_k) + 1, x_k = M e^(k "
             "log(D/M)/E), where g(x_k) = k", sp.Eq(sp.Symbol("g(x_k)"), sp.Symbol("k"), evaluate=False))
    d.checked("Under E <= M log(D/M): n_k >= M (n_k > x_k >= M, e^y >= 1 + y); bucket(n_k) = M + k, from the lemmas "
              "log(n_k/M) = log(n_k/x_k) + k log(D/M)/E; k <= g(n_k) (log u >= 1 - 1/u at u = n_k/x_k); 1 < n_k/x_k; "
              "g(n_k) < k + 1 (log u < u - 1 for u != 1, n_k <= x_k + 1, x_k >= M and E/(M log(D/M)) <= 1); "
              "floor(g(n_k)) = k (an integer within 1 of k both ways); and no distance n >= 1 has a bucket past "
              "M + E - 1 (below M, n <= M - 1; else min(., E - 1) <= E - 1)",
              ("forall", binders, hyps, concl),
              ("and", (c_start, cert, ("cases", bn[1], c_small, c_large))))
    return d
