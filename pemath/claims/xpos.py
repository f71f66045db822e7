"""xPos: the scaled rotary score depends on the distance n - m only (Sun et al. 2022)."""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from . import _formal as F
from ..symbolic import rope as rsym
from ..symbolic import xpos as sym
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import phase_bound
from ..rope import xpos


def _proof() -> Verdict:
    d = sym.relative_symbolic_d()
    d.steps.extend(sym.relative_block().steps)
    for dim in (2, 4):
        for layout in rsym.LAYOUTS:
            d.steps.extend(sym.relative_expanded(dim, layout).steps)
    return Verdict(d)


def _statement() -> sp.Basic:
    i, h = sp.Symbol("i", integer=True, nonnegative=True), sp.Symbol("h", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    qi, ki = sp.Matrix([q[i, 0], q[i, 1]]), sp.Matrix([k[i, 0], k[i, 1]])
    zi, ti = sym.ZETA_I(i), sp.Function("theta")(i)
    lhs = sp.Sum(label("<zeta_i^((m-c)/B) R(m theta_i) q_i, zeta_i^(-(n-c)/B) R(n theta_i) k_i>",
                       r"\langle \zeta_i^{(m-c)/B} R(m\theta_i)\,q_i,\; \zeta_i^{-(n-c)/B} R(n\theta_i)\,k_i \rangle"), (i, 0, h - 1))
    rhs = sp.Sum(zi ** ((sym.m - sym.n) / sym.SCALE_BASE) * (qi.T * rsym.block((sym.n - sym.m) * ti) * ki)[0],
                 (i, 0, h - 1))
    return sp.Eq(lhs, rhs, evaluate=False)


@functools.lru_cache(maxsize=2)
def _score(module: str):
    """The derived per-pair score zeta^((m-n)/B) q^T R((n-m) theta) k as a function."""
    args = (sp.Matrix(sp.symbols("q_0 q_1", real=True)), sp.Matrix(sp.symbols("k_0 k_1", real=True)),
            sym.ZETA, sym.SCALE_BASE, sym.theta, sym.m, sym.n)
    return sp.lambdify(args, sym.relative_block().result["score"], module)


def _zeta(dim: int, gamma: float) -> np.ndarray:
    """The paper's per-pair base (2i/d + gamma) / (1 + gamma), i < d/2."""
    return np.array([(2 * i / dim + gamma) / (1 + gamma) for i in range(dim // 2)])


def _numeric() -> str:

    score = _score("numpy")

    def check(draw_seed: int, m: int, n: int, half: int, layout: str, base: float, gamma: float,
              scale_base: float, center: int) -> None:
        dim = 2 * half
        rng = np.random.default_rng(draw_seed)
        q, k = rng.standard_normal((2, dim))
        kw = dict(layout=layout, base=base, gamma=gamma, scale_base=scale_base)
        got = xpos.apply(q, m, role="query", center=center, **kw) @ xpos.apply(k, n, role="key", center=center, **kw)
        th = [base ** (-2.0 * i / dim) for i in range(half)]
        z = _zeta(dim, gamma)
        want = sum(score(q[[a, b]].reshape(2, 1), k[[a, b]].reshape(2, 1), z[i], scale_base, th[i], m, n)
                   for i, (a, b) in enumerate(rsym.pair_indices(dim, layout)))
        # phase error as for RoPE, plus the exponent (n - c)/B log(zeta) of each scale, carried relatively
        lnz = abs(math.log(z[0]))
        big = float(np.max(z ** ((m - n) / scale_base)))
        tol = 2 * phase_bound(abs(m) + abs(n) + (abs(m - center) + abs(n - center) + abs(m - n)) / scale_base * lnz,
                              terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))) * big)
        assert abs(got - want) <= tol, f"score {got!r} != derived form {want!r} (tol {tol:.3g})"
        other = xpos.apply(q, m, role="query", **kw) @ xpos.apply(k, n, role="key", **kw)
        assert abs(other - got) <= tol, f"the centre {center} changed the score: {got!r} vs {other!r}"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-2048, 2048), n=Ints(-2048, 2048),
                   half=Ints(1, 64), layout=Choice(rsym.LAYOUTS), base=Choice([10000.0, 500000.0]),
                   gamma=Choice([0.4, 0.1, 2.0]), scale_base=Choice([512.0, 256.0, 2048.0]), center=Ints(-1024, 1024))


def _mpmath() -> str:

    score = _score("mpmath")
    rng = np.random.default_rng(5)
    dim = 8
    q, k = rng.standard_normal((2, dim))
    z = _zeta(dim, 0.4)
    worst = 0.0
    with mpmath.workdps(60):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        zs = [(mpmath.mpf(2 * i) / dim + mpmath.mpf("0.4")) / (1 + mpmath.mpf("0.4")) for i in range(dim // 2)]
        B = mpmath.mpf(512)
        for m, n, c in ((10**6, 10**6 + 300, 10**6), (2**40, 2**40 - 1000, 2**40), (5, 1029, 0)):
            direct, relative = [], []
            for i in range(dim // 2):
                qa, qb, ka, kb = (mpmath.mpf(float(v)) for v in (q[2 * i], q[2 * i + 1], k[2 * i], k[2 * i + 1]))
                sq, sk = zs[i] ** ((m - c) / B), zs[i] ** (-(n - c) / B)
                cq, snq = mpmath.cos(m * th[i]), mpmath.sin(m * th[i])
                ck, snk = mpmath.cos(n * th[i]), mpmath.sin(n * th[i])
                rq = (qa * cq - qb * snq, qb * cq + qa * snq)  # R(m theta) q, straight from the rotation
                rk = (ka * ck - kb * snk, kb * ck + ka * snk)
                direct.append(sq * sk * (rq[0] * rk[0] + rq[1] * rk[1]))
                relative.append(score(mpmath.matrix([qa, qb]), mpmath.matrix([ka, kb]), zs[i], B, th[i], m, n))
            gap = abs(mpmath.fsum(direct) - mpmath.fsum(relative))
            if gap > mpmath.mpf(10) ** -40:
                raise CheckFailure(f"relative form off by {mpmath.nstr(gap, 5)} at m={m}, n={n}")
            got = (xpos.apply(q, m, layout="interleaved", role="query", center=c)
                   @ xpos.apply(k, n, layout="interleaved", role="key", center=c))
            big = float(np.max(z ** ((m - n) / 512.0)))
            lnz = abs(math.log(z[0]))
            tol = 2 * phase_bound(abs(m) + abs(n) + (abs(m - c) + abs(n - c) + abs(m - n)) / 512.0 * lnz,
                                  terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))) * big)
            err = abs(got - float(mpmath.fsum(direct)))
            if err > tol:
                raise CheckFailure(f"float64 xpos score off by {err:.3g} > {tol:.3g} at m={m}, n={n}")
            worst = max(worst, err / tol)
    return f"exact at 60 digits up to m = 2**40; float64 xpos.apply within {worst:.2g} of its bound"


def _formal() -> tuple:
    """For every positive scale zeta(i) and frequency theta(i) per pair, scale base B and centre c, over 2h
    features in both layouts: the query at m scaled by zeta_i^((m - c)/B), the key at n by zeta_i^((c - n)/B),
    <.,.> = sum_i zeta_i^((m - n)/B) q_i^T R((n - m) theta_i) k_i."""
    B, c = sp.Symbol("B", positive=True), sp.Symbol("c", real=True)
    zeta = sp.Function("zeta", positive=True)
    scale = (lambda i: zeta(i) ** ((F.M - c) / B), lambda i: zeta(i) ** ((c - F.N) / B))
    return bridge.formal([sp.Eq(F.rope_score(layout, scale=scale, partial=False),
                                F.relative_score(layout, factor=lambda i: zeta(i) ** ((F.M - F.N) / B),
                                                 partial=False))
                          for layout in F.LAYOUTS])


register(
    Claim(
        id="xpos.relative",
        name="xPos's score depends only on the relative position",
        title="xPos: (zeta^(m/B) R(m)q)·(zeta^(-n/B) R(n)k) = zeta^((m-n)/B) q^T R(n-m) k, a function of n - m only",
        kind="theorem",
        family="xpos",
        statement=_statement,
        formal=_formal,
        proof=_proof,
        checks=(Check("numeric", _numeric), Check("mpmath", _mpmath)),
        references=(
            "Sun et al. 2022, 'A Length-Extrapolatable Transformer' (arXiv:2212.10554v1), section 3.2, eqs. 9-10: "
            "eq. 9 gives zeta_i = (i/(d/2) + gamma)/(1 + gamma), eq. 10 scales the query at position n by zeta_i^n "
            "and the key by zeta_i^(-n); the paper gives no value of gamma and no scale base",
            "torchscale XPOS (gamma = 0.4 and the scale base B = 512, the exponent n/B); rotary-embedding-torch "
            "use_xpos",
        ),
    )
)
