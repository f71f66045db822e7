"""Computing with RoPE: scores survive a common shift of positions, and the backward pass rotates back."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from . import _formal as F
from ..symbolic import rope as R
from ..symbolic import rope_algebra as A
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._gpu import require_cupy
from ._registry import register
from ._tolerance import phase_bound
from .. import rope

_BASES = Choice([10000.0, 500000.0, 100.0])
_b = sp.Symbol("b", positive=True)  # the base symbol of pemath.symbolic.rope.frequency
_t = sp.Symbol("t", positive=True)  # theta_i, replacing the function THETA(i) before lambdify


# ------------------------------------------------------------------- rope.translation_invariance


def _translation_proof() -> Verdict:
    d = A.translation_symbolic_d(layout="interleaved")
    d.steps.extend(A.translation_symbolic_d(layout="half").steps)
    d.steps.extend(A.translation_dense(2, "interleaved", length=2).steps)
    for layout in R.LAYOUTS:
        d.steps.extend(A.translation_dense(4, layout, length=1).steps)
    return Verdict(d)


def _block_score(module: str):
    q, k = sp.symbols("q_0 q_1", real=True), sp.symbols("k_0 k_1", real=True)
    qi, ki = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    expr = A.translation_symbolic_d().result["score"].subs(R.THETA(R.I), _t)
    expr = expr.subs({qi[R.I, 0]: q[0], qi[R.I, 1]: q[1], ki[R.I, 0]: k[0], ki[R.I, 1]: k[1]})
    return sp.lambdify((q, k, R.m, R.n, _t), expr, module)


def _translation_numeric() -> str:

    block_score = _block_score("numpy")

    def check(draw_seed: int, length: int, span: int, shift: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        rng = np.random.default_rng(draw_seed)
        q, k = rng.standard_normal((2, length, dim))
        mq = rng.integers(0, span + 1, size=length)
        nk = rng.integers(0, span + 1, size=length)
        S = rope.apply(q, mq, layout=layout, base=base) @ rope.apply(k, nk, layout=layout, base=base).T
        S_shift = (rope.apply(q, mq + shift, layout=layout, base=base)
                   @ rope.apply(k, nk + shift, layout=layout, base=base).T)
        scale = float(np.max(np.abs(q)) * np.max(np.abs(k)))
        tol = phase_bound(2 * (span + abs(shift)), terms=2 * dim, scale=scale)
        assert np.max(np.abs(S - S_shift)) <= tol, f"S changes by {np.max(np.abs(S - S_shift)):.3g} under a shift"
        th = rope.inv_freq(dim, base=base)
        pairs = R.pair_indices(dim, layout)
        r, s = int(rng.integers(length)), int(rng.integers(length))
        want = sum(block_score(q[r, [a, b]], k[s, [a, b]], int(mq[r]), int(nk[s]), th[i])
                   for i, (a, b) in enumerate(pairs))
        assert abs(S_shift[r, s] - want) <= tol, "shifted score != the symbolic block scores at the unshifted positions"

    return for_all(check, examples=25, draw_seed=Ints(0, 2**31), length=Ints(1, 8), span=Ints(0, 10**4),
                   shift=Ints(-10**6, 10**6), half=Ints(1, 32), layout=Choice(R.LAYOUTS), base=_BASES)


def _translation_mpmath() -> str:

    block_score = _block_score("mpmath")
    dim, length = 8, 3
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, length, dim))
    mq, nk = np.array([0, 5, 17]), np.array([2, 3, 11])
    worst = 0.0
    with mpmath.workdps(60):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]

        def score(r: int, s: int, m: int, n: int):
            return mpmath.fsum(block_score([mpmath.mpf(float(v)) for v in q[r, 2 * i:2 * i + 2]],
                                           [mpmath.mpf(float(v)) for v in k[s, 2 * i:2 * i + 2]], m, n, t)
                               for i, t in enumerate(th))

        for shift in (10**6, 10**12, 2**40):
            got = (rope.apply(q, mq + shift, layout="interleaved")
                   @ rope.apply(k, nk + shift, layout="interleaved").T)
            tol = phase_bound(2 * (shift + 17), terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
            for r in range(length):
                for s in range(length):
                    exact = score(r, s, int(mq[r]), int(nk[s]))
                    shifted = score(r, s, int(mq[r]) + shift, int(nk[s]) + shift)
                    if abs(exact - shifted) > mpmath.mpf(10) ** -40:
                        raise CheckFailure(f"60-digit score moves by {mpmath.nstr(abs(exact - shifted), 5)} "
                                           f"under shift {shift}")
                    err = abs(got[r, s] - float(exact))
                    if err > tol:
                        raise CheckFailure(f"float64 S[{r},{s}] at shift {shift} off by {err:.3g} > {tol:.3g}")
                    worst = max(worst, err / tol)
    return f"invariant at 60 digits up to a shift of 2**40; float64 scores within {worst:.2g} of their bound"


def _translation_formal() -> tuple:
    """For every 2h features, both layouts, every positive frequency per pair: moving both positions by c keeps
    <R(m) q, R(n) k>."""
    c = sp.Symbol("c", real=True)
    return bridge.formal([sp.Eq(F.rope_score(layout, F.M + c, F.N + c, partial=False),
                                F.rope_score(layout, partial=False)) for layout in F.LAYOUTS])


register(
    Claim(
        id="rope.translation_invariance",
        name="Shifting every position together keeps the scores",
        title="S[i,j] = <R(m_i)q_i, R(n_j)k_j> is unchanged when every position shifts by c",
        kind="theorem",
        family="rope_calculus",
        statement=lambda: sp.Eq(sp.Function("S")(sp.Symbol("m", real=True) + A.c, sp.Symbol("n", real=True) + A.c),
                                sp.Function("S")(sp.Symbol("m", real=True), sp.Symbol("n", real=True)),
                                evaluate=False),
        formal=_translation_formal,
        proof=_translation_proof,
        checks=(Check("numeric", _translation_numeric), Check("mpmath", _translation_mpmath)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.2.2, eq. 16 (the score depends on n - m)",
            "'Position Embeddings' (study notes after kazemnejad.com/blog/transformer_architecture_positional_encoding) (RoPE advantages: 'You can do key value cache in inference time')",
        ),
    )
)


# ------------------------------------------------------------------- rope.backward


def _backward_proof() -> Verdict:
    d = A.backward_symbolic_d(layout="interleaved")
    d.steps.extend(A.backward_symbolic_d(layout="half").steps)
    for dim in (2, 4, 8):
        for layout in R.LAYOUTS:
            d.steps.extend(A.backward_dense(dim, layout).steps)
    return Verdict(d)


@functools.lru_cache(maxsize=None)
def _jacobian(dim: int, layout: str, module: str):
    """J(m, b): the sympy Jacobian of the elementwise form, lambdified."""
    x = sp.Matrix(sp.symbols(f"x_0:{dim}", real=True))
    J = A.elementwise(x, R.m, layout).jacobian(list(x))
    return sp.lambdify((R.m, _b), J, module)


def _backward_numeric() -> str:

    def check(draw_seed: int, m: int, dim: int, layout: str, base: float) -> None:
        rng = np.random.default_rng(draw_seed)
        x, v = rng.standard_normal((2, dim))
        J = np.asarray(_jacobian(dim, layout, "numpy")(m, base), dtype=float)
        tol = phase_bound(abs(m), terms=2 * dim)
        # exact linearity: apply's columns are apply(e_j), and they are the symbolic Jacobian's columns
        cols = rope.apply(np.eye(dim), m, layout=layout, base=base).T
        assert np.max(np.abs(cols - J)) <= tol, "apply(e_j, m) is not column j of the symbolic Jacobian"
        # a central difference of apply in direction v (exact for a linear map, up to rounding)
        h = 2.0**-4
        fd = (rope.apply(x + h * v, m, layout=layout, base=base)
              - rope.apply(x - h * v, m, layout=layout, base=base)) / (2 * h)
        fd_tol = tol * (1 + float(np.max(np.abs(x)) + np.max(np.abs(v)))) / h
        assert np.max(np.abs(fd - J @ v)) <= fd_tol, "central difference of apply != J v"
        # the vector-Jacobian product is the inverse rotation
        vjp = rope.apply(v, m, layout=layout, base=base, inverse=True)
        assert np.max(np.abs(vjp - J.T @ v)) <= tol * float(np.max(np.abs(v))), \
            "apply(v, m, inverse=True) != J^T v"
        assert abs(vjp @ x - v @ rope.apply(x, m, layout=layout, base=base)) <= tol * float(
            np.max(np.abs(v)) * np.max(np.abs(x))) * 2, "<R(-m) v, x> != <v, R(m) x>: not the adjoint"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**6, 10**6), dim=Choice([2, 4, 8]),
                   layout=Choice(R.LAYOUTS), base=_BASES)


def _backward_mpmath() -> str:

    dim = 8
    v = np.random.default_rng(11).standard_normal(dim)
    worst = 0.0
    with mpmath.workdps(60):
        base = mpmath.mpf(10000)
        for layout in R.LAYOUTS:
            J = _jacobian(dim, layout, "mpmath")
            for m in (10**6, 10**12, 2**40):
                Jm = J(m, base)
                gap = mpmath.norm(Jm.T * Jm - mpmath.eye(dim))
                if gap > mpmath.mpf(10) ** -45:
                    raise CheckFailure(f"J^T J - I = {mpmath.nstr(gap, 5)} at 60 digits, m={m}")
                want = Jm.T * mpmath.matrix([float(t) for t in v])
                got = rope.apply(v, m, layout=layout, inverse=True)
                tol = phase_bound(m, terms=2 * dim, scale=float(np.max(np.abs(v))))
                for j in range(dim):
                    err = abs(got[j] - float(want[j]))
                    if err > tol:
                        raise CheckFailure(f"apply(v, {m}, inverse=True)[{j}] ({layout}) off by {err:.3g} > {tol:.3g}")
                    worst = max(worst, err / tol)
    return f"J^T J = I at 60 digits up to m = 2**40; float64 inverse apply() within {worst:.2g} of its bound"


def _backward_cupy() -> str:
    cp = require_cupy()

    v = np.random.default_rng(0).standard_normal((8, 128))
    pos = np.arange(8) * 1000
    for layout in R.LAYOUTS:
        host = rope.apply(v, pos, layout=layout, inverse=True)
        dev = cp.asnumpy(rope.apply(cp.asarray(v), cp.asarray(pos), layout=layout, inverse=True))
        err = float(np.max(np.abs(host - dev)))
        if err > phase_bound(8000, terms=2, scale=float(np.max(np.abs(v)))):
            raise CheckFailure(f"CuPy and NumPy inverse rotations differ by {err:.3g} ({layout})")
    return "CuPy's inverse rotation matches NumPy's within the phase bound"


def _backward_formal() -> tuple:
    """Pair i of x -> R(m) x has the Jacobian R(m theta_i) (its four partial derivatives), R(m theta_i)^T is
    R(-m theta_i) entry by entry, and over 2h features, both layouts: <R(m) x, v> = <x, R(-m) v>, so the
    backward pass of the rotation is the rotation by -m."""
    xa, xb = sp.symbols("x_a x_b", real=True)
    a = F.M * F.THETA(F.I)
    c, s_ = sp.cos(a), sp.sin(a)
    with sp.evaluate(False):
        ma = -F.M * F.THETA(F.I)
    rows = F.rotate(a, (xa, xb))
    rels = [sp.Eq(sp.Derivative(rows[0], xa), c), sp.Eq(sp.Derivative(rows[0], xb), -s_),
            sp.Eq(sp.Derivative(rows[1], xa), s_), sp.Eq(sp.Derivative(rows[1], xb), c),
            sp.Eq(c, sp.cos(ma)), sp.Eq(s_, -sp.sin(ma)), sp.Eq(-s_, sp.sin(ma))]  # R(m)^T = R(-m)
    x, v = sp.IndexedBase("x", real=True), sp.IndexedBase("v", real=True)
    p = sp.Symbol("p", integer=True, nonnegative=True)  # the pair index (i above is one pair)
    for layout in F.LAYOUTS:
        f = F.features(layout, p)
        xp, vp = (x[f[0]], x[f[1]]), (v[f[0]], v[f[1]])
        angle = F.M * F.THETA(p)
        rels.append(sp.Eq(sp.Sum(F.dot(F.rotate(angle, xp), vp), (p, 0, F.H - 1)),
                          sp.Sum(F.dot(xp, F.rotate(-angle, vp)), (p, 0, F.H - 1))))
    return bridge.formal(rels)


register(
    Claim(
        id="rope.backward",
        name="RoPE's backward pass rotates back",
        title="The Jacobian of x -> R(m)x is R(m); the backward pass v -> R(m)^T v = R(-m) v rotates back",
        kind="theorem",
        family="rope_calculus",
        statement=lambda: sp.Tuple(
            sp.Eq(label("d(R(m) x)/dx", r"\frac{\partial\, (R(m)\,x)}{\partial x}"), sp.MatrixSymbol("R(m)", 4, 4), evaluate=False),
            sp.Eq(sp.MatMul(sp.Transpose(sp.MatrixSymbol("R(m)", 4, 4)), sp.MatrixSymbol("v", 4, 1)),
                  sp.MatMul(sp.MatrixSymbol("R(-m)", 4, 4), sp.MatrixSymbol("v", 4, 1)), evaluate=False),
        ),
        formal=_backward_formal,
        proof=_backward_proof,
        checks=(Check("numeric", _backward_numeric), Check("mpmath", _backward_mpmath), Check("cupy", _backward_cupy)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.4.2, eq. 34 (the map differentiated)",
            "flash-attn flash_attn/layers/rotary.py: ApplyRotaryEmb.backward rotates with conjugate=True",
        ),
    )
)
