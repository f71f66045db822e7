"""RoPE's defining property: the score of a query at m and a key at n depends on n - m."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from . import _formal as F
from ..symbolic import rope as sym
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._gpu import require_cupy
from ._registry import register
from ._tolerance import phase_bound
from .. import rope


def _proof() -> Verdict:
    d = sym.relative_symbolic_d(layout="interleaved")
    d.steps.extend(sym.relative_symbolic_d(layout="half").steps)
    d.steps.extend(sym.relative_block().steps)
    for dim in (2, 4, 8):
        for layout in sym.LAYOUTS:
            d.steps.extend(sym.relative_expanded(dim, layout).steps[1:])
    return Verdict(d)


def _statement() -> sp.Basic:
    i = sp.Symbol("i", integer=True, nonnegative=True)
    h = sp.Symbol("h", integer=True, positive=True)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    th = sym.frequency(i, 2 * h)
    qi, ki = sp.Matrix([q[i, 0], q[i, 1]]), sp.Matrix([k[i, 0], k[i, 1]])
    lhs = sp.Sum(label("<R(m)q_i, R(n)k_i>", r"\langle R(m)\,q_i,\; R(n)\,k_i \rangle"), (i, 0, h - 1))
    rhs = sp.Sum((qi.T * sym.block((sym.n - sym.m) * th) * ki)[0], (i, 0, h - 1))
    return sp.Eq(lhs, rhs, evaluate=False)


def _numeric() -> str:

    score = sp.lambdify(
        (sp.Matrix(sp.symbols("q_0 q_1")), sp.Matrix(sp.symbols("k_0 k_1")), sym.theta, sym.m, sym.n),
        sym.relative_block().result["score"],
        "numpy",
    )

    def check(draw_seed: int, m: int, n: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        rng = np.random.default_rng(draw_seed)
        q, k = rng.standard_normal((2, dim))
        got = rope.apply(q, m, layout=layout, base=base) @ rope.apply(k, n, layout=layout, base=base)
        pairs = sym.pair_indices(dim, layout)
        th = rope.inv_freq(dim, base=base)
        want = sum(
            score(q[[a, b]].reshape(2, 1), k[[a, b]].reshape(2, 1), th[i], m, n) for i, (a, b) in enumerate(pairs)
        )
        tol = phase_bound(abs(m) + abs(n), terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
        assert abs(got - want) <= tol, f"score {got!r} != symbolic relative form {want!r} (tol {tol:.3g})"

    return for_all(check, draw_seed=Ints(0, 2**31), m=Ints(-10**5, 10**5), n=Ints(-10**5, 10**5),
                   half=Ints(1, 64), layout=Choice(sym.LAYOUTS), base=Choice([10000.0, 500000.0, 1e6]))


def _cupy() -> str:
    cp = require_cupy()

    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 8, 128))
    pos = np.arange(8) * 1000
    for layout in sym.LAYOUTS:
        host = rope.apply(q, pos, layout=layout)
        dev = cp.asnumpy(rope.apply(cp.asarray(q), cp.asarray(pos), layout=layout))
        err = float(np.max(np.abs(host - dev)))
        if err > phase_bound(8000, terms=2):
            raise CheckFailure(f"CuPy and NumPy differ by {err:.3g} ({layout})")
    return "CuPy matches NumPy within the phase bound"


def _mpmath() -> str:

    score = sp.lambdify(
        (sp.Matrix(sp.symbols("q_0 q_1")), sp.Matrix(sp.symbols("k_0 k_1")), sym.theta, sym.m, sym.n),
        sym.relative_block().result["score"],
        "mpmath",
    )
    rng = np.random.default_rng(1)
    dim = 8
    q, k = rng.standard_normal((2, dim))
    worst_rel = 0.0
    with mpmath.workdps(60):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        for m, n in ((10**6, 10**6 + 5), (10**9, 3), (2**40, 2**40 - 17)):
            # 60-digit score straight from the rotation (no relative form used) ...
            def rot(x, p):
                out = []
                for i, t in enumerate(th):
                    c, s = mpmath.cos(p * t), mpmath.sin(p * t)
                    a, b = mpmath.mpf(float(x[2 * i])), mpmath.mpf(float(x[2 * i + 1]))
                    out += [a * c - b * s, b * c + a * s]
                return out

            direct = mpmath.fsum(a * b for a, b in zip(rot(q, m), rot(k, n)))
            relative = mpmath.fsum(
                score(mpmath.matrix([q[2 * i], q[2 * i + 1]]), mpmath.matrix([k[2 * i], k[2 * i + 1]]), t, m, n)
                for i, t in enumerate(th)
            )
            if abs(direct - relative) > mpmath.mpf(10) ** -40:
                raise CheckFailure(f"relative form off by {mpmath.nstr(abs(direct - relative), 5)} at m={m}, n={n}")
            got = rope.apply(q, m, layout="interleaved") @ rope.apply(k, n, layout="interleaved")
            tol = phase_bound(abs(m) + abs(n), terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
            err = abs(got - float(direct))
            if err > tol:
                raise CheckFailure(f"float64 score off by {err:.3g} > {tol:.3g} at m={m}, n={n}")
            worst_rel = max(worst_rel, err / tol)
    return f"exact at 60 digits up to m = 2**40; float64 apply() within {worst_rel:.2g} of its bound"


def _formal() -> tuple:
    """For every head of 2h rotary features and e pass-through ones, both layouts, every positive frequency per
    pair: <R(m) q, R(n) k> = sum_i q_i^T R((n - m) theta_i) k_i (+ the pass-through part), and that score
    depends on m and n through n - m only (its derivatives in m and n cancel)."""
    rels = []
    for layout in F.LAYOUTS:
        relative = F.relative_score(layout)
        rels += [sp.Eq(F.rope_score(layout), relative),
                 sp.Eq(sp.Derivative(relative, F.M) + sp.Derivative(relative, F.N), 0)]
    return bridge.formal(rels)


register(
    Claim(
        id="rope.relative",
        name="RoPE's score depends only on the relative position",
        title="<R(m)q, R(n)k> = q^T R(n-m) k: the score depends on q, k and n - m only",
        kind="theorem",
        family="rope_relative",
        statement=_statement,
        formal=_formal,
        proof=_proof,
        checks=(Check("numeric", _numeric), Check("mpmath", _mpmath), Check("cupy", _cupy)),
        references=("Su et al. 2021 (RoFormer), section 3.2.2, eq. 16", "Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io"),
    )
)
