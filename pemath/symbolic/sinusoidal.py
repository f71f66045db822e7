"""Sinusoidal encoding: the shift of t by k is a rotation, derived by solving for it."""

from __future__ import annotations

import sympy as sp

from . import pairs
from ._decide import Derivation

__all__ = ["ORDERS", "pair", "shift_matrix", "shift_unique_checked", "shift_block_diagonal", "dot_product"]

ORDERS = ("sin_cos", "cos_sin")

t, k = sp.symbols("t k", real=True)
w = sp.Symbol("omega", positive=True)


def pair(order: str, x: sp.Expr, freq: sp.Expr = w) -> sp.Matrix:
    """One frequency's pair of the encoding at position ``x``, in the given order."""
    s, c = sp.sin(freq * x), sp.cos(freq * x)
    return sp.Matrix([s, c]) if order == "sin_cos" else sp.Matrix([c, s])


def shift_matrix(order: str = "sin_cos") -> Derivation:
    """Derive the 2x2 matrix M(k) with M(k) PE(t) = PE(t + k) for one frequency.

    The pair is :func:`pair` (the mutation tests patch it with wrong encodings).
    for the four unknown entries, never assumed.
    """
    d = Derivation(f"sinusoidal shift matrix ({order.replace('_', ', ')})")
    a, b, c, e = sp.symbols("a b c d")
    M = sp.Matrix([[a, b], [c, e]])
    d.define("Unknown matrix M, independent of t by assumption to be checked:", M)
    lhs, rhs = M * pair(order, t), pair(order, t + k)
    d.define("Require M PE(t) = PE(t+k) for all t:", sp.Eq(lhs, rhs, evaluate=False))
    resid = (lhs - rhs).applyfunc(lambda z: sp.expand(sp.expand_trig(sp.expand(z))))
    S, C = sp.sin(w * t), sp.cos(w * t)
    # Coefficients of sin(wt) and cos(wt) after expanding sin(w(t+k)), cos(w(t+k)).
    coeffs = []
    for z in resid:
        poly = sp.Poly(z, S, C)
        if poly.total_degree() > 1 or poly.coeff_monomial(1) != 0:
            d.fail("the residual is not linear in sin(wt), cos(wt)", z)
        coeffs += [poly.coeff_monomial(S), poly.coeff_monomial(C)]
    wronskian = sp.Matrix([[S, C], [sp.diff(S, t), sp.diff(C, t)]]).det()
    d.equal("the Wronskian of sin(wt) and cos(wt) is -w", wronskian, -w, methods=("trigsimp",))
    d.true("-w is nonzero (w is nonzero), so sin(wt) and cos(wt) are linearly independent",
           sp.Ne(-w, 0, evaluate=False))
    d.cite("functions whose Wronskian is nonzero at a point are linearly independent; so each coefficient of sin(wt) "
           "and cos(wt) in the residual must vanish", source="Boyce & DiPrima, Elementary Differential Equations, "
                                                             "Theorem 3.3.1")
    system = [sp.Eq(cf, 0) for cf in coeffs]
    d.define("Linear system in the unknowns:", system)
    A, _ = sp.linear_eq_to_matrix(coeffs, [a, b, c, e])
    with sp.evaluate(False):
        det = A.det(method="laplace")
    d.true(f"its determinant {sp.sstr(A.det())} is nonzero: the system has a unique solution",
           sp.Ne(det, 0, evaluate=False))
    sol = sp.solve(coeffs, [a, b, c, e], dict=True)
    if len(sol) != 1:
        d.fail(f"expected one solution, found {len(sol)}")
    Mk = M.subs(sol[0])
    d.define("Solved:", Mk)
    d.free_of("M(k) does not depend on t", Mk, [t])
    d.equal("M(k) PE(t) = PE(t+k)", Mk * pair(order, t), pair(order, t + k), methods=("expand_trig",))
    d.equal("M(k) is orthogonal: M(k)^T M(k) = I", Mk.T * Mk, sp.eye(2))
    d.zero("det M(k) = 1", Mk.det() - 1)
    k1, k2 = sp.symbols("k_1 k_2", real=True)
    d.equal(
        "M(k1) M(k2) = M(k1 + k2)",
        Mk.subs(k, k1) * Mk.subs(k, k2),
        Mk.subs(k, k1 + k2),
        methods=("expand_trig",),
    )
    d.result["M"] = Mk
    return d


def shift_unique_checked() -> Derivation:
    """Every 2x2 matrix A(w, k) of functions of w and k alone (free of t) with A PE(t) = PE(t + k) for every t,
    PE(t) = (sin wt, cos wt), is M(k): decided by pemath.kernel alone, from the requirement at t = 0 and at
    t = pi/(2w)."""
    from ..kernel.terms import PI
    from .kterms import neg, num, rule, var

    d = Derivation("the sinusoidal shift matrix is unique (pemath.kernel)")
    names = ("a_11", "a_12", "a_21", "a_22")
    kk, om = var("k"), var("omega", "pos")
    w_, u, k_ = var("r", "pos"), var("u"), var("l")  # the requirement's own variables
    one, half_pi = num(1), ("mul", ("num", 1, 2), PI)
    wk = ("mul", om, kk)

    def a(name: str, w: tuple, k: tuple) -> tuple:
        return ("app", name, w, k)

    def row(first: str, second: str, f: str) -> tuple:  # a(r, l) sin(r u) + b(r, l) cos(r u) = f(r (u + l))
        return ("all", (w_, u, k_), ("eq", ("add", ("mul", a(first, w_, k_), ("sin", ("mul", w_, u))),
                                                   ("mul", a(second, w_, k_), ("cos", ("mul", w_, u)))),
                                          (f, ("mul", w_, ("add", u, k_)))))

    hyps = (row("a_11", "a_12", "sin"), row("a_21", "a_22", "cos"))
    quarter = ("mul", ("num", 1, 2), PI, ("inv", om))  # t = pi/(2w): w t = pi/2

    def at(i: int, value: tuple) -> tuple:
        return ("hyp_at", i, (("r", om), ("u", value), ("l", kk)))

    def to_half_pi(f: str, extra: tuple | None = None) -> tuple:  # f(w t + extra) = f(pi/2 + extra), w t - pi/2 = 0
        z = var("z_")
        x, y = ("mul", om, quarter), half_pi
        if extra is not None:
            x, y = ("mul", om, ("add", quarter, kk)), ("add", half_pi, extra)
        return ("cong", (f, z), "z_", x, y, ((rule("inv", om), half_pi),))

    a11, a12, a21, a22 = (a(n, om, kk) for n in names)
    concl = ("and", ("eq", a11, ("cos", wk)), ("eq", a12, ("sin", wk)), ("eq", a21, neg(("sin", wk))),
             ("eq", a22, ("cos", wk)))
    cert = ("and", (
        ("ideal", ((at(0, quarter), one), (to_half_pi("sin"), neg(a11)), (rule("sin_half_pi"), ("add", neg(a11), ("cos", wk))),
                   (to_half_pi("cos"), neg(a12)), (rule("cos_half_pi"), ("add", neg(a12), ("sin", wk))),
                   (to_half_pi("sin", wk), one), (rule("sin_add", half_pi, wk), one))),
        ("ideal", ((at(0, num(0)), one),)),
        ("ideal", ((at(1, quarter), one), (to_half_pi("sin"), neg(a21)), (rule("sin_half_pi"), ("add", neg(a21), neg(("sin", wk)))),
                   (to_half_pi("cos"), neg(a22)), (rule("cos_half_pi"), ("add", neg(a22), ("cos", wk))),
                   (to_half_pi("cos", wk), one), (rule("cos_add", half_pi, wk), one))),
        ("ideal", ((at(1, num(0)), one),))))
    binders = tuple(("fun", n, 2, "real") for n in names) + (kk, om)
    d.checked("Unique: a 2x2 matrix A(w, k) = (a_ij(w, k)), free of t, with A PE(t) = PE(t + k) for every t, w and "
              "k is M(k): at t = 0 the requirement gives a_12 = sin(wk) and a_22 = cos(wk); at t = pi/(2w), "
              "a_11 = sin(pi/2 + wk) = cos(wk) and a_21 = cos(pi/2 + wk) = -sin(wk)",
              ("forall", binders, hyps, concl), cert)
    return d


def shift_block_diagonal(dim: int | None = None, order: str = "sin_cos", *, base: sp.Expr | None = None) -> Derivation:
    """The full shift matrix is block-diagonal with the blocks M_i(k) at frequencies w_i.

    ``dim=None`` proves it for every even d at once: the block derivation holds for any
    positive frequency, and every w_i = b^(-2i/d) is positive. A concrete ``dim`` also
    builds the dense matrix and checks it entry by entry.
    """
    d = Derivation(f"sinusoidal shift is block-diagonal ({'every even d' if dim is None else f'd = {dim}'})")
    block = shift_matrix(order)
    d.steps.extend(block.steps)
    Mk = block.result["M"]
    i = sp.Symbol("i", integer=True, nonnegative=True)
    n = sp.Symbol("n", integer=True, positive=True)  # d = 2n
    b = base if base is not None else sp.Symbol("b", positive=True)
    wi = b ** (-2 * i / (2 * n))
    d.assumed("every frequency w_i = b^(-2i/d) is positive, so each block derivation applies", wi, "positive")
    if dim is None:
        wv = sp.IndexedBase("w", real=True)
        wi_ = b ** (-pairs.I / pairs.H)
        d.define("PE(t) holds pair i = (2i, 2i + 1) at frequency w_i = b^(-2i/d) (d = 2h); M = diag(M_i(k)) turns "
                 "pair i by M(k) at w_i", sp.Eq(sp.Symbol("(M PE(t))_i"), Mk.subs(w, wi_) * pair(order, t, wi_),
                                                  evaluate=False))
        pairs.weak_equality(d, "diag(M_i(k)) PE(t) = PE(t+k) for every even d: the two agree at pair i, so "
                            "<v, diag(M_i(k)) PE(t) - PE(t+k)> = 0 for every v", "interleaved", wv,
                            tuple(Mk.subs(w, wi_) * pair(order, t, wi_)), tuple(pair(order, t + k, wi_)),
                            methods=("sums", "expand_trig"))
    if dim is not None:
        if dim % 2:
            d.fail(f"d must be even, got {dim}")
        h = dim // 2
        ws = [b ** sp.Rational(-2 * j, dim) for j in range(h)]
        pe = lambda x: sp.Matrix([comp for wj in ws for comp in pair(order, x, wj)])  # noqa: E731
        big = sp.diag(*[Mk.subs(w, wj) for wj in ws])
        d.equal(f"diag(M_i(k)) PE(t) = PE(t+k) for d = {dim}", big * pe(t), pe(t + k), methods=("expand_trig",))
        d.result["M"] = big
    return d


def dot_product() -> Derivation:
    """PE(t)·PE(t+k) = Σ_i cos(w_i k): depends on k only, even in k; |PE(t)|² = d/2."""
    d = Derivation("sinusoidal dot product")
    a = pair("sin_cos", t)
    bvec = pair("sin_cos", t + k)
    term = (a.T * bvec)[0]
    d.equal("one frequency contributes sin(wt)sin(w(t+k)) + cos(wt)cos(w(t+k)) = cos(wk)", term, sp.cos(w * k))
    d.free_of("which does not depend on t", sp.cos(w * k), [t])
    with sp.evaluate(False):
        mirrored = sp.cos(w * (-k))
    d.equal("and is even in k", mirrored, sp.cos(w * k))
    d.equal("|pair|^2 = 1, so |PE(t)|^2 = d/2 (d/2 pairs)", (a.T * a)[0], sp.Integer(1), methods=("trigsimp",))
    b = sp.Symbol("b", positive=True)
    wi = b ** (-pairs.I / pairs.H)
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    inner = pairs.inner_over_pairs(d, "interleaved", u, v)
    a_, b_ = pairs.features(pairs.I, "interleaved")
    pe_t, pe_tk = pair("sin_cos", t, wi), pair("sin_cos", t + k, wi)
    total = sp.Sum(sp.cos(wi * k), (pairs.I, 0, pairs.H - 1))
    d.equal("summing over the d/2 = h pairs (2i, 2i + 1), w_i = b^(-2i/d): PE(t)·PE(t+k) = sum_i cos(w_i k), "
            "for every even d", inner.xreplace({u[a_]: pe_t[0], u[b_]: pe_t[1], v[a_]: pe_tk[0], v[b_]: pe_tk[1]}),
            total, methods=("sums",))
    with sp.evaluate(False):
        mirrored_total = sp.Sum(sp.cos(wi * (-k)), (pairs.I, 0, pairs.H - 1))
    d.equal("which is even in k, term by term", mirrored_total, total, methods=("sums",))
    d.equal("and |PE(t)|^2 = sum_i (sin^2(w_i t) + cos^2(w_i t)) = h = d/2, for every even d",
            inner.xreplace({u[a_]: pe_t[0], u[b_]: pe_t[1], v[a_]: pe_t[0], v[b_]: pe_t[1]}), pairs.H,
            methods=("sums", "doit"))
    d.result["dot"] = total
    return d
