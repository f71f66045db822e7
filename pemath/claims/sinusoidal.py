"""Claims about the sinusoidal encoding (Vaswani et al. 2017, section 3.5)."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from .. import kernel
from ..symbolic.notation import label
from ..symbolic import bridge
from ..symbolic import sinusoidal as sym
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import phase_bound
from .. import sinusoidal


def _shift_proof() -> Verdict:
    d = sym.shift_block_diagonal(order="sin_cos")
    for order in sym.ORDERS[1:]:
        d.steps.extend(sym.shift_matrix(order).steps)
    for dim in (4, 8):
        d.steps.extend(sym.shift_block_diagonal(dim).steps[-1:])
    d.steps.extend(sym.shift_unique_checked().steps)
    return Verdict(d)


def _shift_statement() -> sp.Basic:
    M = sym.shift_matrix("sin_cos").result["M"]
    return sp.Eq(sp.MatMul(M, sym.pair("sin_cos", sym.t)), sym.pair("sin_cos", sym.t + sym.k), evaluate=False)


def _shift_numeric() -> str:

    M = sp.lambdify((sym.w, sym.k), sym.shift_matrix("sin_cos").result["M"], "numpy")

    def check(t: int, k: int, half: int, base: float) -> None:
        dim = 2 * half
        pe = sinusoidal.encode(np.array([t, t + k]), dim, base=base, convention="interleaved")
        w = base ** (-2.0 * np.arange(half) / dim)
        for i in range(half):
            got = np.asarray(M(w[i], k), dtype=float) @ pe[0, 2 * i : 2 * i + 2]
            err = np.max(np.abs(got - pe[1, 2 * i : 2 * i + 2]))
            tol = phase_bound(abs(t) + 2 * abs(k), terms=2)
            assert err <= tol, f"pair {i}: |M(k) PE(t) - PE(t+k)| = {err:.3g} > {tol:.3g}"

    return for_all(check, t=Ints(-10**6, 10**6), k=Ints(-10**4, 10**4), half=Ints(1, 64),
                   base=Choice([10000.0, 500000.0, 10.0]))


def _shift_mpmath() -> str:

    M = sp.lambdify((sym.w, sym.k), sym.shift_matrix("sin_cos").result["M"], "mpmath")
    with mpmath.workdps(60):
        worst = mpmath.mpf(0)
        for t in (10**6, 10**9, 10**12):
            for k in (1, 37, -4096):
                for w in (mpmath.mpf(1), mpmath.mpf(10000) ** (-mpmath.mpf(2) / 8)):
                    lhs = M(w, k) * mpmath.matrix([mpmath.sin(w * t), mpmath.cos(w * t)])
                    rhs = mpmath.matrix([mpmath.sin(w * (t + k)), mpmath.cos(w * (t + k))])
                    worst = max(worst, mpmath.norm(lhs - rhs))
        if worst > mpmath.mpf(10) ** -45:
            raise CheckFailure(f"identity off by {mpmath.nstr(worst, 5)} at 60 digits")
        # pemath's float64 table against 60-digit values at large positions
        dim = 16
        for t in (10**4, 10**6, 2**40):
            got = sinusoidal.encode(np.array([t]), dim, convention="interleaved")[0]
            for i in range(dim // 2):
                w = mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim)
                for j, f in enumerate((mpmath.sin, mpmath.cos)):
                    err = abs(float(f(w * t)) - got[2 * i + j])
                    tol = phase_bound(float(w * t))
                    if err > tol:
                        raise CheckFailure(f"encode({t})[{2 * i + j}] off by {err:.3g} > {tol:.3g}")
    return f"identity to {mpmath.nstr(worst, 3)} at 60 digits; encode() within phase bound up to t = 2**40"


def _shift_formal() -> tuple:
    """With PE(t) = (sin wt, cos wt) per frequency and M(k) = [[cos wk, sin wk], [-sin wk, cos wk]] (no t in it):
    M(k) PE(t) = PE(t + k); M(k1) M(k2) = M(k1 + k2); over every even d = 2h with w_i = b^(-i/h), the
    block-diagonal diag(M_i(k)) takes PE(t) to PE(t + k) (every vector v sees them equal); and M(k) is the only
    2x2 matrix free of t that shifts PE (for one frequency: over d features the block-diagonal map is unique only
    where the frequencies are distinct, which b = 1 breaks; that is not stated)."""
    t, k, k1, k2 = sp.symbols("t k k_1 k_2", real=True)
    w = sp.Symbol("omega", positive=True)

    def M(kk, ww):  # noqa: ANN001, ANN202
        return ((sp.cos(kk * ww), sp.sin(kk * ww)), (-sp.sin(kk * ww), sp.cos(kk * ww)))

    def pe(tt, ww):  # noqa: ANN001, ANN202
        return (sp.sin(ww * tt), sp.cos(ww * tt))

    def apply(m, v):  # noqa: ANN001, ANN202
        return tuple(m[r][0] * v[0] + m[r][1] * v[1] for r in range(2))

    shifted = apply(M(k, w), pe(t, w))
    rels = [sp.Eq(shifted[r], pe(t + k, w)[r]) for r in range(2)]
    product = M(k1, w), M(k2, w)
    rels += [sp.Eq(sum(product[0][r][j] * product[1][j][c] for j in range(2)), M(k1 + k2, w)[r][c])
             for r in range(2) for c in range(2)]
    b, h = sp.Symbol("b", positive=True), sp.Symbol("h", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    v = sp.IndexedBase("w", real=True)
    wi = b ** (-i / h)
    got, want = apply(M(k, wi), pe(t, wi)), pe(t + k, wi)
    rels.append(sp.Eq(sp.Sum((got[0] - want[0]) * v[2 * i] + (got[1] - want[1]) * v[2 * i + 1], (i, 0, h - 1)), 0))
    stated = bridge.formal(rels)
    # unique (one frequency): every 2x2 matrix A(omega, k) = (a_ij(omega, k)) of functions free of t, with
    # A PE(t) = PE(t + k) for every omega > 0, t and k (the hypotheses, one per row), is M(k)
    from ..kernel.terms import var as kv

    r, u, l, kk, om = kv("r", "pos"), kv("u"), kv("l"), kv("k"), kv("omega", "pos")
    names = ("a_11", "a_12", "a_21", "a_22")

    def a(name: str, x: tuple, y: tuple) -> tuple:
        return ("app", name, x, y)

    def row(first: str, second: str, f: str) -> tuple:
        return ("all", (r, u, l), ("eq", ("add", ("mul", a(first, r, l), ("sin", ("mul", r, u))),
                                              ("mul", a(second, r, l), ("cos", ("mul", r, u)))),
                                     (f, ("mul", r, ("add", u, l)))))

    wk = ("mul", om, kk)
    unique = (("eq", a("a_11", om, kk), ("cos", wk)), ("eq", a("a_12", om, kk), ("sin", wk)),
              ("eq", a("a_21", om, kk), ("mul", ("num", -1, 1), ("sin", wk))), ("eq", a("a_22", om, kk), ("cos", wk)))
    return kernel.well_formed(("forall", stated[1] + tuple(("fun", n, 2, "real") for n in names),
                               stated[2] + (row("a_11", "a_12", "sin"), row("a_21", "a_22", "cos")),
                               ("and", *stated[3][1:], *unique)))


register(
    Claim(
        id="sinusoidal.shift",
        name="The sinusoidal shift is a rotation independent of t",
        title="PE(t+k) is a rotation M(k) of PE(t), derived, independent of t, and the only 2x2 matrix whose entries "
              "are functions of the frequency and the shift alone (free of t) that does it for every frequency and "
              "shift; over d = 2h features the block-diagonal diag(M_i(k)) does it",
        kind="theorem",
        family="sinusoidal",
        statement=_shift_statement,
        formal=_shift_formal,
        proof=_shift_proof,
        checks=(Check("numeric", _shift_numeric), Check("mpmath", _shift_mpmath)),
        references=("Vaswani et al. 2017, section 3.5", "Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io (solving for the unknown entries)"),
    )
)


def _dot_proof() -> Verdict:
    return Verdict(sym.dot_product())


def _dot_numeric() -> str:

    def check(t: int, k: int, half: int) -> None:
        dim = 2 * half
        pe = sinusoidal.encode(np.array([t, t + k, 0, k, -k]), dim, convention="interleaved")
        w = 10000.0 ** (-2.0 * np.arange(half) / dim)
        expected = np.sum(np.cos(w * k))
        tol = phase_bound(abs(t) + 2 * abs(k), terms=dim)
        assert abs(pe[0] @ pe[1] - expected) <= tol, "dot product is not sum cos(w_i k)"
        assert abs(pe[0] @ pe[1] - pe[2] @ pe[3]) <= 2 * tol, "dot product depends on t"
        assert abs(pe[2] @ pe[3] - pe[2] @ pe[4]) <= 2 * tol, "dot product is not even in k"
        assert abs(pe[0] @ pe[0] - half) <= tol, "|PE(t)|^2 != d/2"

    return for_all(check, t=Ints(-10**5, 10**5), k=Ints(-10**3, 10**3), half=Ints(1, 64))


def _dot_mpmath() -> str:
    """PE(t)·PE(t+k) at 60 digits for t up to 10^12, against sum cos(w_i k), and pemath's float64 table."""

    dim, worst = 16, 0.0
    with mpmath.workdps(60):
        w = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        for t, k in ((10**12, 7), (123456789, -300), (5, 1000)):
            dot = mpmath.fsum(mpmath.sin(wi * t) * mpmath.sin(wi * (t + k)) + mpmath.cos(wi * t) * mpmath.cos(wi * (t + k))
                              for wi in w)
            want = mpmath.fsum(mpmath.cos(wi * k) for wi in w)
            if abs(dot - want) > mpmath.mpf(10) ** -40:
                raise CheckFailure(f"PE(t).PE(t+k) - sum cos(w k) = {mpmath.nstr(dot - want, 5)} at t={t}, k={k}")
            if abs(t) <= 10**9:
                pe = sinusoidal.encode(np.array([t, t + k]), dim, convention="interleaved")
                err = abs(float(pe[0] @ pe[1]) - float(want))
                tol = phase_bound(abs(t) + 2 * abs(k), terms=dim)
                if err > tol:
                    raise CheckFailure(f"float64 table dot product off by {err:.3g} > {tol:.3g} at t={t}")
                worst = max(worst, err / tol)
    return f"equal to 40 digits (60-digit arithmetic) up to t = 10^12; pemath's float64 table within {worst:.2g} of its bound"


def _dot_formal() -> tuple:
    """As stated, for every even d = 2h and base b: with w_i = b^(-i/h), PE(t)·PE(t+k) summed over the h pairs
    is sum_i cos(w_i k) (no t in it), that sum is even in k, and |PE(t)|^2 = h = d/2."""
    b, h = sp.Symbol("b", positive=True), sp.Symbol("h", integer=True, positive=True)
    t, k = sp.symbols("t k", real=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    w = b ** (-i / h)
    with sp.evaluate(False):
        dot = sp.Sum(sp.sin(w * t) * sp.sin(w * (t + k)) + sp.cos(w * t) * sp.cos(w * (t + k)), (i, 0, h - 1))
        cosines = sp.Sum(sp.cos(w * k), (i, 0, h - 1))
        mirrored = sp.Sum(sp.cos(w * (-k)), (i, 0, h - 1))
        norm = sp.Sum(sp.sin(w * t) ** 2 + sp.cos(w * t) ** 2, (i, 0, h - 1))
    return bridge.formal([sp.Eq(dot, cosines), sp.Eq(mirrored, cosines), sp.Eq(norm, h)])


register(
    Claim(
        id="sinusoidal.dot_product",
        name="The sinusoidal dot product depends on the offset only",
        title="PE(t)·PE(t+k) = Σ cos(ω_i k): a function of k only, even in k; |PE(t)|² = d/2",
        kind="theorem",
        family="sinusoidal",
        statement=lambda: sp.Eq(label("PE(t)·PE(t+k)", r"PE(t) \cdot PE(t+k)"), sym.dot_product().result["dot"], evaluate=False),
        formal=_dot_formal,
        proof=_dot_proof,
        checks=(Check("numeric", _dot_numeric), Check("mpmath", _dot_mpmath)),
        references=("Vaswani et al. 2017, section 3.5",),
    )
)
