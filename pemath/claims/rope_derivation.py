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
              "f(x,m) = x e^{i m theta}: RoPE",
        kind="theorem",
        family="rope_derivation",
        statement=_statement,
        proof=_proof,
        checks=(Check("numeric", _numeric), Check("mpmath", _mpmath)),
        references=("Su et al. 2021 (RoFormer), section 3.4.1, eqs. 20-33", _SEED),
    )
)
