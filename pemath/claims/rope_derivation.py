"""RoPE derived, not assumed: the solution of RoFormer's defining equation is x e^{i m theta}."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import rope as rope_sym
from ..symbolic import rope_derivation as sym
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import phase_bound
from .. import rope

_SEED = "Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io (the RoPE derivation)"


def _proof() -> Verdict:
    return Verdict(sym.derive())


def _statement() -> sp.Basic:
    x = sp.Symbol("x")
    return sp.Eq(sp.Function("f")(x, sym.m), x * sp.exp(sp.I * sym.m * sym.theta), evaluate=False)


def _formal() -> tuple:
    """RoFormer's requirement in polar form, for arbitrary functions, and its conclusion at every integer position.

    Written here from the paper's equations, apart from the proof: a vector is its polar pair (r, a) with r > 0;
    f(x, m) = R_f(r, a, m) e^{i Theta_f(r, a, m)} (R_f >= 0, a modulus) and g(q, k, n - m) = R_g(...) e^{i
    Theta_g(...)}. The requirement f(q, m) conj(f(k, n)) = g(q, k, n - m) read as moduli and as angles taken
    exactly equal (no 2 pi jumps: stronger than the complex equation, as RoFormer's derivation reads it), and
    f(x, 0) = x, are hypotheses for every value of their variables; the conclusion is for natural m, at m and at
    -m (so every integer position), with theta = Theta_f(1, 0, 1): f(x, m) = x e^{i m theta}.
    """
    from ..kernel.terms import var as v

    def minus(x: tuple, y: tuple) -> tuple:
        return ("add", x, ("mul", ("num", -1, 1), y))

    zero, one = ("num", 0, 1), ("num", 1, 1)
    r, a, m = v("r", "pos"), v("a"), v("m", "nat")
    own = (v("r1", "pos"), v("a1"), v("r2", "pos"), v("a2"), v("m1", "int"), v("n1", "int"))
    r1, a1, r2, a2, m1, n1 = own
    rf = lambda *x: ("app", "R_f", *x)  # noqa: E731
    tf = lambda *x: ("app", "Theta_f", *x)  # noqa: E731
    moduli = ("eq", ("mul", rf(r1, a1, m1), rf(r2, a2, n1)), ("app", "R_g", r1, a1, r2, a2, minus(n1, m1)))
    angles = ("eq", minus(tf(r1, a1, m1), tf(r2, a2, n1)), ("app", "Theta_g", r1, a1, r2, a2, minus(n1, m1)))
    hyps = (("all", own, moduli), ("all", own, angles), ("all", own[:2], ("eq", rf(r1, a1, zero), r1)),
            ("all", own[:2], ("eq", tf(r1, a1, zero), a1)))
    theta_ = tf(one, zero, one)
    back = ("mul", ("num", -1, 1), m)
    concl = ("and", ("eq", rf(r, a, m), r), ("eq", rf(r, a, back), r),
             ("eq", tf(r, a, m), ("add", a, ("mul", m, theta_))), ("eq", tf(r, a, back), minus(a, ("mul", m, theta_))))
    binders = (("fun", "R_f", 3, "nonneg"), ("fun", "Theta_f", 3, "real"), ("fun", "R_g", 5, "real"),
               ("fun", "Theta_g", 5, "real"), r, a, m)
    return ("forall", binders, hyps, concl)


@functools.lru_cache(maxsize=1)
def _derived() -> sp.Lambda:
    return sym.derive().result["f"]


def _solution(module: str):
    """The derived f(x, m) as a numeric function of (|x|, arg x, m, theta)."""
    f = _derived()
    r_x, a_x, pos = f.variables
    return sp.lambdify((r_x, a_x, pos, sym.theta), f.expr, module)


def _numeric() -> str:

    f = _solution("numpy")

    def check(draw_seed: int, m: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        x = np.random.default_rng(draw_seed).standard_normal(dim)
        got = rope.apply(x, m, layout=layout, base=base)
        th = rope.inv_freq(dim, base=base)
        for i, (a, b) in enumerate(rope_sym.pair_indices(dim, layout)):
            z = complex(f(np.hypot(x[a], x[b]), np.arctan2(x[b], x[a]), m, th[i]))
            err = max(abs(z.real - got[a]), abs(z.imag - got[b]))
            tol = phase_bound(abs(m), terms=2, scale=float(np.hypot(x[a], x[b])))
            assert err <= tol, f"pair {i}: apply() differs from the derived x e^(i m theta) by {err:.3g} > {tol:.3g}"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**6, 10**6), half=Ints(1, 64),
                   layout=Choice(rope_sym.LAYOUTS), base=Choice([10000.0, 500000.0, 10.0]))


def _mpmath() -> str:

    f = _solution("mpmath")
    worst = mpmath.mpf(0)
    with mpmath.workdps(60):
        th = mpmath.mpf(10000) ** (-mpmath.mpf(2) / 8)
        q, k = (mpmath.mpf("1.25"), mpmath.mpf("0.5")), (mpmath.mpf("0.75"), mpmath.mpf("-2"))  # (|x|, arg x)

        def prod(a: int, b: int) -> mpmath.mpc:
            return f(q[0], q[1], a, th) * mpmath.conj(f(k[0], k[1], b, th))

        for m, n, t in ((10**6, 3, 17), (2**40, 2**40 - 5, -(2**39)), (-(2**35), 2**20, 2**40)):
            worst = max(worst, abs(prod(m, n) - prod(m + t, n + t)))
        if worst > mpmath.mpf(10) ** -40:
            raise CheckFailure(f"f(q, m) conj f(k, n) changes under a common shift by {mpmath.nstr(worst, 5)}")
        # pemath's float64 rotation against the 60-digit solution at large positions
        x = np.array([0.6, -0.8, 1.5, 0.25])
        for m in (10**6, 10**9, 2**40):
            got = rope.apply(x, m, layout="interleaved")
            for i in range(2):
                w = mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / 4)
                a, b = mpmath.mpf(float(x[2 * i])), mpmath.mpf(float(x[2 * i + 1]))
                z = f(mpmath.sqrt(a * a + b * b), mpmath.atan2(b, a), m, w)
                err = max(abs(float(z.real) - got[2 * i]), abs(float(z.imag) - got[2 * i + 1]))
                tol = phase_bound(float(m), terms=2, scale=float(mpmath.sqrt(a * a + b * b)))
                if err > tol:
                    raise CheckFailure(f"apply(x, {m}) pair {i} off the 60-digit solution by {err:.3g} > {tol:.3g}")
    return (f"the solution satisfies the defining equation to {mpmath.nstr(worst, 3)} at 60 digits for shifts up "
            "to 2**40; apply() within its phase bound up to m = 2**40")


register(
    Claim(
        id="rope.derivation",
        name="Deriving RoPE from the relative-position requirement",
        title="If the complex product f(q,m) conj(f(k,n)) = g(q,k,n-m) (stronger than the real inner product), "
              "f(x,0) = x, and the arguments satisfy the angle equation exactly (no 2 pi jumps), then "
              "f(x,m) = x e^{i m theta} for every integer position m and every x != 0: RoPE",
        kind="theorem",
        family="rope_derivation",
        statement=_statement,
        formal=_formal,
        proof=_proof,
        checks=(Check("numeric", _numeric), Check("mpmath", _mpmath)),
        references=("Su et al. 2021 (RoFormer), section 3.4.1, eqs. 20-33", _SEED),
    )
)
