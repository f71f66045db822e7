"""Published statements about positional encodings, each with a verdict.

``sinusoidal.wavelengths`` (theorem): the wavelengths are geometric, with exact end points.
``vaswani.wavelengths``: "a geometric progression from 2 pi to 10000 * 2 pi" (Vaswani et al. 2017).
``pi.theorem_2_1``: Position Interpolation's interpolation bound (Chen et al. 2023, Theorem 2.1).
``barbero.prop_3_2``: "Gaussian queries and keys do not decay" (Barbero et al. 2024, Proposition 3.2).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import Derivation
from ..symbolic._decide import unevaluated as _unevaluated
from ..symbolic import bridge
from ..symbolic import published as sym
from ..symbolic.notation import label
from ._inputs import Choice, Floats, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import U64, phase_bound
from .. import rope
from .. import sinusoidal

_VASWANI = "Vaswani et al. 2017 (Attention Is All You Need), section 3.5"
_PI = ("Chen et al. 2023 (Extending Context Window of Large Language Models via Positional Interpolation), "
       "Theorem 2.1, eq. 5-7, Appendix A eq. 9-17")
_BARBERO = ("Barbero et al. 2024 (Round and Round We Go! What makes Rotary Positional Encodings useful?), "
            "section 3, Proposition 3.2")

# ----------------------------------------------------------------------------------------------
# sinusoidal.wavelengths (theorem) and vaswani.wavelengths (published claim)
# ----------------------------------------------------------------------------------------------


def _wave_proof() -> Verdict:
    d = sym.wavelengths("interleaved")
    d.steps.extend(sym.wavelengths("tensor2tensor").steps)
    return Verdict(d)


def _wave_statement() -> sp.Basic:
    i, d, b = sp.Symbol("i", integer=True, nonnegative=True), sp.Symbol("d", even=True, positive=True), sp.Symbol("b")
    return sp.Eq(sym.LAMBDA_I, 2 * sp.pi * b ** (2 * i / d))


def _wave_numeric() -> str:

    b = sp.Symbol("b", positive=True)
    derived = {c: sym.wavelengths(c).result for c in ("interleaved", "tensor2tensor")}
    last = {c: sp.lambdify((sym._h, b), r["last"].subs(sym._beta, b - 1), "math") for c, r in derived.items()}
    ratio = {c: sp.lambdify((sym._h, b), r["ratio"].subs(sym._beta, b - 1), "math") for c, r in derived.items()}

    def check(half: int, base: float, convention: str) -> None:
        if convention == "tensor2tensor" and half < 2:
            half = 2
        lam = np.asarray(sinusoidal.wavelengths(2 * half, base=base, convention=convention))
        tol = 16 * U64
        assert len(lam) == half, f"{len(lam)} wavelengths for d = {2 * half}"
        assert abs(lam[0] / (2 * math.pi) - 1) <= tol, f"first wavelength {lam[0]!r} is not 2 pi"
        want = last[convention](half, base)
        assert abs(lam[-1] / want - 1) <= tol * (1 + math.log(base)), f"last {lam[-1]!r} != derived {want!r}"
        if half > 1:
            q = lam[1:] / lam[:-1]
            rq = ratio[convention](half, base)
            assert np.max(np.abs(q / rq - 1)) <= 2 * tol * (1 + math.log(base)), "ratios are not constant"
        if convention == "interleaved" and base > 1:
            assert lam[-1] < 2 * math.pi * base, "the last wavelength reaches 2 pi b"

    return for_all(check, examples=40, half=Ints(1, 512), base=Choice([10000.0, 500000.0, 10.0, 1e6]),
                   convention=Choice(["interleaved", "tensor2tensor"]))


def _wave_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(50):
        for dim in (8, 128, 512, 4096):
            for conv in ("interleaved", "tensor2tensor"):
                lam = sinusoidal.wavelengths(dim, convention=conv)
                h = dim // 2
                for i in (0, h // 2, h - 1):
                    e = mpmath.mpf(2 * i) / dim if conv == "interleaved" else mpmath.mpf(i) / (h - 1)
                    ref = 2 * mpmath.pi * mpmath.mpf(10000) ** e
                    rel = abs(float(ref) / lam[i] - 1)
                    if rel > 16 * U64 * (1 + math.log(10000)):
                        raise CheckFailure(
                            f"wavelengths({dim}, {conv})[{i}] = {lam[i]!r}, 50 digits {mpmath.nstr(ref, 20)}")
                    worst = max(worst, rel)
    return f"float64 wavelengths within {worst:.2g} (relative) of 50-digit values, d up to 4096"


def _wave_formal() -> tuple:
    """For every d = 2h and base b = 1 + beta > 1: lambda_i = 2 pi b^(2i/d) has the ratio b^(2/d) from one pair
    to the next, lambda_0 = 2 pi, and the last, 2 pi b^((2h - 2)/(2h)), is 2 pi b times b^(-1/h) < 1; for
    tensor2tensor's lambda_i = 2 pi b^(i/(h - 1)) (h > 1) the ratio is b^(1/(h - 1)) and lambda_0 = 2 pi. (Its
    last wavelength, 2 pi b exactly, is decided by the SymPy kernel only.)"""
    beta, h = sp.Symbol("beta", positive=True), sp.Symbol("h", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    b, pi = 1 + beta, sp.pi
    rels = []
    for expo in (lambda j: 2 * j / (2 * h), lambda j: j / (h - 1)):
        lam = lambda j, e=expo: 2 * pi * b ** e(j)  # noqa: E731
        rels += [sp.Eq(lam(i + 1) / lam(i), b ** expo(1), evaluate=False),
                 sp.Eq(_unevaluated(lam, 0), 2 * pi, evaluate=False)]
    with sp.evaluate(False):
        gap = -sp.log(b) + ((2 * h - 2) / (2 * h)) * sp.log(b)
    rels += [sp.Eq(gap, -sp.log(b) / h, evaluate=False), sp.Lt(-sp.log(b) / h, 0, evaluate=False)]
    return bridge.formal(rels, [sp.StrictLessThan(1, h)])


register(
    Claim(
        id="sinusoidal.wavelengths",
        name="The sinusoidal wavelengths are geometric",
        title="For b > 1, the wavelengths 2 pi b^{2i/d} are geometric (ratio b^{2/d}) from 2 pi to 2 pi b^{1-2/d} "
              "< 2 pi b; "
              "tensor2tensor's 2 pi b^{i/(h-1)} are geometric from 2 pi to exactly 2 pi b, for d >= 4 (that end "
              "point verified by the checker, outside the formal statement)",
        kind="theorem",
        family="published",
        statement=_wave_statement,
        formal=_wave_formal,
        proof=_wave_proof,
        checks=(Check("numeric", _wave_numeric), Check("mpmath", _wave_mpmath)),
        references=(_VASWANI, "tensor2tensor get_timing_signal_1d (timescales min..max exactly)"),
    )
)


def _vaswani_proof() -> Verdict:
    d = Derivation("Vaswani et al.'s wavelengths")
    fair_prop = _vaswani_fair()
    with d.part("fair reading"):  # decided once, in sinusoidal.wavelengths: used here by reference
        for text, r in zip(("the ratio of consecutive wavelengths is b^(1/h)", "the first wavelength is 2 pi",
                            "log(last / (2 pi b)) = -(1/h) log b", "which is negative: the last is below 2 pi b"),
                           fair_prop[3][1:]):
            d.from_claim(text, "sinusoidal.wavelengths", _alone(fair_prop, r))
    e = sym.vaswani_end_point(512)
    d.include(e.steps, part="counterexample")
    r = e.result
    cx = (f"with PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), i = 0..d/2 - 1, the wavelengths are 2 pi 10000^(2i/d): "
          f"geometric (ratio 10000^(2/d)) from 2 pi, but they end at 2 pi 10000^((d-2)/d), never 10000 * 2 pi; for the "
          f"paper's d_model = 512 the last, 2 pi 10000^(255/256), is below 10000 * 2 pi (decided): about "
          f"{mpmath.nstr(r['last'], 6)}, {mpmath.nstr(100 * r['fraction'], 3)}% of {mpmath.nstr(r['claimed'], 6)} "
          "(checked numerically). The stated end point is reached only in the limit d -> infinity (SymPy-decided, "
          "in sinusoidal.wavelengths), or in tensor2tensor's convention (frequencies 10000^(-i/(d/2 - 1)): "
          "checked numerically at d = 512)")
    fair = ("the wavelengths form a geometric progression from 2 pi up to, not reaching, 10000 * 2 pi: ratio "
            "10000^(2/d), first 2 pi, last 2 pi 10000^((d-2)/d) < 10000 * 2 pi (decided in sinusoidal.wavelengths, "
            "used above); it tends to 10000 * 2 pi as d grows (a reading)")
    d.remark("Fair reading (decided for every d in sinusoidal.wavelengths, used above): " + fair)
    return Verdict(d, cx, fair)


def _alone(prop: tuple, r: tuple) -> tuple:
    """Relation ``r`` of ``prop`` as a proposition of its own: the binders it names, the hypotheses of ``prop``."""
    from ..kernel.terms import variables

    names = {v[1] for v in variables(r[1]) | variables(r[2])}
    return ("forall", tuple(b for b in prop[1] if b[1] in names), prop[2], r)


def _vaswani_formal() -> tuple:
    """As stated: for every d = 2h, the wavelengths 2 pi 10000^(i/h), i = 0..h-1, run from 2 pi to 10000 * 2 pi."""
    h = sp.Symbol("h", integer=True, positive=True)
    with sp.evaluate(False):
        first = 2 * sp.pi * sp.Pow(10000, 0 / h)
        last = 2 * sp.pi * sp.Pow(10000, (h - 1) / h)
        return bridge.formal([sp.Eq(first, 2 * sp.pi), sp.Eq(last, 10000 * (2 * sp.pi))])


def _vaswani_witness() -> tuple:
    return (1, (("h", ("num", 256, 1)),))  # the paper's d_model = 512: the end point fails


def _vaswani_fair() -> tuple:
    """The fair reading, as decided for every base b = 1 + beta > 1 and d = 2h: the ratio of consecutive
    wavelengths is b^(1/h) for every i (a geometric progression), the first is 2 pi, and the last over 2 pi,
    b^((h-1)/h), stays below b: in logarithms, ((h-1)/h) log b - log b = -(1/h) log b, which is negative."""
    h = sp.Symbol("h", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    beta = sp.Symbol("beta", positive=True)
    with sp.evaluate(False):
        b = 1 + beta
        ratio = sp.Eq(sp.exp((1 + i) / h * sp.log(b)) * sp.exp(-i / h * sp.log(b)), sp.exp(1 / h * sp.log(b)))
        first = sp.Eq(2 * sp.pi * sp.exp(0 / h * sp.log(b)), 2 * sp.pi)
        gap = sp.Eq((h - 1) / h * sp.log(b) - sp.log(b), -(1 / h) * sp.log(b))
        below = sp.Lt(-(1 / h) * sp.log(b), 0)
        return bridge.formal([ratio, first, gap, below])


def _vaswani_numeric() -> str:

    lam = sinusoidal.wavelengths(512, convention="interleaved")
    t2t = sinusoidal.wavelengths(512, convention="tensor2tensor")
    claimed = 10000 * 2 * math.pi
    if not lam[-1] < claimed * (1 - 0.03):
        raise CheckFailure(f"interleaved d = 512: last wavelength {lam[-1]!r} is not 3.5% short of {claimed!r}")
    if abs(t2t[-1] / claimed - 1) > 64 * U64:
        raise CheckFailure(f"tensor2tensor d = 512: last wavelength {t2t[-1]!r} should be 10000 * 2 pi")
    return (f"sinusoidal.wavelengths(512): last {lam[-1]:.6g} (interleaved) vs 10000*2pi = {claimed:.6g}; "
            f"tensor2tensor's last {t2t[-1]:.6g}")


register(
    Claim(
        id="vaswani.wavelengths",
        name="Vaswani et al. on the range of the wavelengths",
        title="Vaswani et al.: 'The wavelengths form a geometric progression from 2 pi to 10000 * 2 pi'",
        kind="published claim",
        family="published",
        statement=lambda: sp.Eq(label("lambda_{d/2-1}", r"\lambda_{d/2-1}"), 10000 * 2 * sp.pi, evaluate=False),
        formal=_vaswani_formal,
        witness=_vaswani_witness,
        fair=_vaswani_fair,
        proof=_vaswani_proof,
        uses=("sinusoidal.wavelengths",),
        checks=(Check("numeric", _vaswani_numeric), Check("mpmath", _wave_mpmath)),
        references=(_VASWANI,),
    )
)

# ----------------------------------------------------------------------------------------------
# pi.theorem_2_1 (published claim)
# ----------------------------------------------------------------------------------------------


#: (d, c, the constant in the bound's denominator): PI's Theorem 2.1 as the paper states it, d = 128, c = 10000,
#: 8 ln c. The title is written from it: the constant decided is the constant stated.
PI_CASE = (128, 10000, 8)


def _pi_proof() -> Verdict:
    v = sym.pi_interpolation_bound(*PI_CASE)
    v.derivation.steps.extend(sym.pi_corrected_constant().steps)
    cx = None if v.counterexample is None else v.counterexample + " (a corrected constant, d/(8 ln c) + 1/2, is " \
        "derived for every even d and every c > 1 below: its key rewrites are SymPy-decided, not verified by the " \
        "checker)"
    return Verdict(v.derivation, cx)


def _pi_formal() -> tuple:
    """PI's bound at the paper's d = 128, c = 10000 (:data:`PI_CASE`), for the aligned pair products h_j =
    e^{-i s_mid theta_j} (max_j |h_j| = 1), where a(t) = sum_{j < d/2} cos((t - s_mid) theta_j), theta_j =
    c^(-2j/d), and s_1 = s - alpha, s_2 = s + beta (alpha, beta > 0): |a(s) - a_linear(s)| <= d alpha beta /
    (8 ln c) for every s, s_mid, alpha and beta. An instance of the theorem (one family of h), so a counterexample
    to it refutes the theorem; it is false at s = s_mid = alpha = beta = 1/2 (:func:`_pi_witness`)."""
    dim, base, den = PI_CASE
    j = sp.Symbol("j", integer=True, nonnegative=True)
    s, s_mid = sp.Symbol("s", real=True), sp.Symbol("s_mid", real=True)
    alpha, beta = sp.Symbol("alpha", positive=True), sp.Symbol("beta", positive=True)

    def a(t):  # noqa: ANN001, ANN202
        return sp.Sum(sp.cos((t - s_mid) * sp.Integer(base) ** (-2 * j / sp.Integer(dim))), (j, 0, dim // 2 - 1))

    with sp.evaluate(False):
        gap = a(s) - (beta * a(s - alpha) + alpha * a(s + beta)) / (alpha + beta)
        return bridge.formal([sp.Le(sp.Abs(gap), dim * alpha * beta / (den * sp.log(base)))])


def _pi_witness() -> tuple:
    half = ("num", 1, 2)  # the unit interval [0, 1] and its midpoint, integer grid points as PI intends
    return (0, (("s", half), ("s_mid", half), ("alpha", half), ("beta", half)))


def _pi_statement() -> sp.Basic:
    s, s1, s2, c, d = sp.symbols("s s_1 s_2 c d", positive=True)
    H = label("max|h_j|", r"\max_j |h_j|", positive=True)
    return sp.Le(label("|a(s) - a_linear(s)|", r"\left|a(s) - a_{\mathrm{linear}}(s)\right|"), d * H * (s - s1) * (s2 - s) / (PI_CASE[2] * sp.log(c)))


def _aligned_qk(dim: int, base: float, s_mid: float) -> tuple[np.ndarray, np.ndarray]:
    """q, k (interleaved) with pair products h_j = q_j conj(k_j) = e^{-i s_mid theta_j}."""

    th = rope.inv_freq(dim, base=base)
    q = np.empty(dim)
    q[0::2], q[1::2] = np.cos(-s_mid * th), np.sin(-s_mid * th)
    k = np.zeros(dim)
    k[0::2] = 1.0
    return q, k


def _score(q: np.ndarray, k: np.ndarray, s: float, base: float = 10000.0) -> float:
    """a(s) = <R(s) q, R(0) k> from pemath's real rotation (fractional s is exact)."""

    return float(rope.apply(q, s, layout="interleaved", base=base) @ rope.apply(k, 0, layout="interleaved", base=base))


def _pi_numeric() -> str:

    # the counterexample, through pemath.rope.apply: d = 128, s1 = 0, s2 = 1, s = 1/2
    dim = 128
    q, k = _aligned_qk(dim, 10000.0, 0.5)
    err = _score(q, k, 0.5) - (_score(q, k, 0.0) + _score(q, k, 1.0)) / 2
    claimed = dim * 0.25 / (8 * math.log(10000))
    tol = phase_bound(1.0, terms=4 * dim, scale=2.0)
    if not err > claimed + tol:
        raise CheckFailure(f"apply(): a(1/2) - a_linear(1/2) = {err!r} does not exceed PI's bound {claimed!r}")

    # the corrected bound d/(8 ln c) + 1/2 holds on random q, k, s
    def check(draw_seed: int, s1: int, frac: float, half: int, base: float) -> None:
        d = 2 * half
        rng = np.random.default_rng(draw_seed)
        qq, kk = rng.standard_normal((2, d))
        s = s1 + frac
        lin = (1 - frac) * _score(qq, kk, s1, base) + frac * _score(qq, kk, s1 + 1, base)
        e = abs(_score(qq, kk, s, base) - lin)
        hmax = float(np.max(np.hypot(qq[0::2], qq[1::2]) * np.hypot(kk[0::2], kk[1::2])))
        theta = rope.inv_freq(d, base=base)
        sharp = 0.5 * float(np.sum(theta**2))
        bound = hmax * frac * (1 - frac) * sharp
        t = phase_bound(abs(s1) + 1, terms=6 * d, scale=hmax)
        assert e <= bound + t, f"|a - a_linear| = {e:.6g} > (1/2) sum theta^2 max|h| (s-s1)(s2-s) = {bound:.6g}"
        assert sharp <= d / (8 * math.log(base)) + 0.5 + 1e-12, "sum theta^2 / 2 exceeds d/(8 ln c) + 1/2"

    summary = for_all(check, examples=30, draw_seed=Ints(0, 2**31), s1=Ints(0, 10**5), frac=Floats(0.0, 1.0),
                      half=Ints(1, 64), base=Choice([10000.0, 500000.0, 100.0]))
    return (f"apply(): a(1/2) - a_linear(1/2) = {err:.6f} > PI's {claimed:.6f} (d = 128); corrected bound "
            f"holds on {summary}")


def _pi_mpmath() -> str:
    dim = 128
    q, k = _aligned_qk(dim, 10000.0, 0.5)
    got = _score(q, k, 0.5) - (_score(q, k, 0.0) + _score(q, k, 1.0)) / 2
    with mpmath.workdps(50):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * j) / dim) for j in range(dim // 2)]
        ref = mpmath.fsum(1 - mpmath.cos(t / 2) for t in th)
        claimed = mpmath.mpf(dim) / (32 * mpmath.log(10000))
        # the Taylor constant is sharp: on [0, L] with L -> 0 the error over L^2/4 tends to (1/2) sum theta^2
        L = mpmath.mpf(10) ** -6
        ratio = mpmath.fsum(1 - mpmath.cos(L * t / 2) for t in th) / (L**2 / 4) / (mpmath.fsum(t * t for t in th) / 2)
    tol = phase_bound(1.0, terms=4 * dim, scale=2.0)
    if abs(got - float(ref)) > tol:
        raise CheckFailure(f"float64 error {got!r} vs 50-digit {mpmath.nstr(ref, 15)}")
    if abs(ratio - 1) > mpmath.mpf(10) ** -6:
        raise CheckFailure(f"the Taylor constant is not attained: ratio {mpmath.nstr(ratio, 10)}")
    return (f"50 digits: error {mpmath.nstr(ref, 12)} > bound {mpmath.nstr(claimed, 12)} "
            f"(excess {mpmath.nstr(100 * (ref / claimed - 1), 3)}%); "
            f"float64 apply() agrees to {abs(got - float(ref)):.2g}; "
            f"(1/2) sum theta^2 is attained as s2 - s1 -> 0 (ratio {mpmath.nstr(ratio, 10)})")


register(
    Claim(
        id="pi.theorem_2_1",
        name="Position Interpolation, Theorem 2.1",
        title=f"PI Theorem 2.1: |a(s) - a_linear(s)| <= d max_j|h_j| (s - s1)(s2 - s) / ({PI_CASE[2]} ln c)",
        kind="published claim",
        family="published",
        statement=_pi_statement,
        formal=_pi_formal,
        witness=_pi_witness,
        proof=_pi_proof,
        checks=(Check("numeric", _pi_numeric), Check("mpmath", _pi_mpmath)),
        references=(_PI,),
    )
)

# ----------------------------------------------------------------------------------------------
# barbero.prop_3_2 (published claim)
# ----------------------------------------------------------------------------------------------


def _barbero_proof() -> Verdict:
    d = sym.gaussian_no_decay()
    d.steps.extend(sym.gaussian_no_decay(independent=False).steps[1:])
    d.steps.extend(sym.gaussian_moments_checked().steps)
    d.remark("So the proposition needs q and k independent (as its text says: 'sampled independently'): "
          "for k = q the expected score is the decaying curve 2 sum_i cos(r theta_i).")
    return Verdict(d)


def _barbero_statement() -> sp.Basic:
    return sp.Eq(label("E_{q,k ~ N(0,I)}[q^T R^r k]", r"\mathbb{E}_{q,k \sim \mathcal{N}(0, I)}\left[q^{T} R^{r} k\right]"), 0)


def _barbero_formal() -> tuple:
    """The expected score from the moments, for every head of h pairs (interleaved) and every distance r.

    Written here from the definitions, apart from the proof: E[q^T R^r k] = sum_{a,b} (R^r)_ab E[q_a k_b] (the
    linearity of expectation, cited) with mu(a, b) = E[q_a k_b]; independent zero-mean q, k have mu = 0 everywhere
    (cited too), so what is decided is the algebra: the block sum against mu is 0. Pair i is the block
    [[cos, -sin], [sin, cos]] of r theta(i) on features 2i, 2i + 1. (The contrast k = q is decided beside it.)
    """
    h, r, i = ("var", "h", "posint"), ("var", "r", "real"), ("var", "i", "int")
    a, b = ("var", "a1", "int"), ("var", "b1", "int")
    zero, one, two = ("num", 0, 1), ("num", 1, 1), ("num", 2, 1)
    last = ("add", h, ("num", -1, 1))
    cos, sin = ("cos", ("mul", r, ("app", "theta", i))), ("sin", ("mul", r, ("app", "theta", i)))
    f0, f1 = ("mul", two, i), ("add", ("mul", two, i), one)

    def expected(w: str) -> tuple:  # sum over the pairs of sum_{a,b in the pair} A_ab w(a, b)
        def m(x: tuple, y: tuple) -> tuple:
            return ("app", w, x, y)
        entries = ("add", ("mul", cos, m(f0, f0)), ("mul", ("num", -1, 1), sin, m(f0, f1)), ("mul", sin, m(f1, f0)),
                   ("mul", cos, m(f1, f1)))
        return ("sum", entries, "i", zero, last)

    hyps = (("all", (a, b), ("eq", ("app", "mu", a, b), zero)),)
    return ("forall", (h, r, ("fun", "theta", 1, "pos"), ("fun", "mu", 2, "real")), hyps, ("eq", expected("mu"), zero))


def _barbero_numeric() -> str:
    """Monte Carlo with pemath.rope.apply; tolerance 6 standard errors from the exact variances."""

    n, dim = 8000, 64
    rng = np.random.default_rng(2024)
    q, k = rng.standard_normal((2, n, dim))
    th = rope.inv_freq(dim)
    worst_ind, worst_cor = 0.0, 0.0
    for r in (0, 1, 7, 100, 2500):
        rq = rope.apply(q, r, layout="interleaved")
        s_ind = np.einsum("nd,nd->n", rq, k)  # (R^r q)^T k = q^T R^-r k: the score at distance -r
        s_cor = np.einsum("nd,nd->n", rq, q)
        se_ind = math.sqrt(dim / n)  # Var(q^T A k) = tr(A A^T) = d for orthogonal A
        mean_cor = 2 * float(np.sum(np.cos(r * th)))  # E[q^T A q] = tr A
        se_cor = math.sqrt(4 * float(np.sum(np.cos(r * th) ** 2)) / n)  # Var = 2 tr(A_sym^2)
        z_ind = abs(float(np.mean(s_ind))) / se_ind
        z_cor = abs(float(np.mean(s_cor)) - mean_cor) / se_cor
        if z_ind > 6:
            raise CheckFailure(f"r = {r}: mean score {np.mean(s_ind):.4g} is {z_ind:.1f} standard errors from 0")
        if z_cor > 6:
            raise CheckFailure(
                f"r = {r}, k = q: mean {np.mean(s_cor):.4g} is {z_cor:.1f} SE from tr R^r = {mean_cor:.4g}")
        worst_ind, worst_cor = max(worst_ind, z_ind), max(worst_cor, z_cor)
    return (f"{n} samples, d = {dim}, r in (0, 1, 7, 100, 2500): independent q, k within {worst_ind:.2f} SE of 0; "
            f"k = q within {worst_cor:.2f} SE of tr R^r (tolerance 6 SE from the exact variances)")


def _barbero_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(50):
        for dim in (8, 128):
            th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
            for r in (1, 100, 10**6):
                # E[q^T R^r q] = tr R^r for q ~ N(0, I): the trace of pemath's rotation matrix
                trace = float(np.trace(rope.matrix(r, dim, layout="interleaved")))
                want = 2 * mpmath.fsum(mpmath.cos(r * t) for t in th)
                tol = phase_bound(r, terms=dim)
                err = abs(trace - float(want))
                if err > tol:
                    raise CheckFailure(f"tr R^{r} = {trace!r} vs 2 sum cos(r theta_i) = {mpmath.nstr(want, 20)} (d = {dim})")
                worst = max(worst, err / tol)
    return f"E[q^T R^r q] = tr R^r = 2 sum_i cos(r theta_i) at 50 digits, within {worst:.2g} of the float64 bound"


register(
    Claim(
        id="barbero.prop_3_2",
        name="Barbero et al., Proposition 3.2",
        title="Barbero et al. Prop. 3.2: for independent q, k ~ N(0, I), E[q^T R^r k] = 0 at every distance r "
              "(the linearity of expectation and the zero moments E[q_a k_b] = 0 cited; the sum decided)",
        kind="published claim",
        family="published",
        statement=_barbero_statement,
        formal=_barbero_formal,
        proof=_barbero_proof,
        checks=(Check("monte-carlo", _barbero_numeric), Check("mpmath", _barbero_mpmath)),
        references=(_BARBERO,),
    )
)
