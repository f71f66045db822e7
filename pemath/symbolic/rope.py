"""RoPE's rotation as exact SymPy matrices, and its relative inner-product property."""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from . import pairs
from ._decide import Derivation
from .indices import H, I, LAYOUTS

__all__ = [
    "LAYOUTS",
    "block",
    "pair_indices",
    "permutation",
    "rotation",
    "frequency",
    "relative_block",
    "relative_symbolic_d",
    "relative_expanded",
    "relative_angle",
    "difference_rotation",
]


#: Trigonometric polynomials in sums of angles close under these rewrites; restricting
#: to them keeps a failing (mutated) statement from trying every costly rewrite.
TRIG = ("expand", "expand_trig", "expand_trig+pythagoras")

m, n = sp.symbols("m n", real=True)
theta = sp.Symbol("theta", positive=True)


def block(x: sp.Expr) -> sp.Matrix:
    """The 2x2 rotation by angle ``x``: [[cos x, -sin x], [sin x, cos x]]."""
    return sp.Matrix([[sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]])


def frequency(i: sp.Expr, d: sp.Expr, base: sp.Expr | None = None) -> sp.Expr:
    """theta_i = b^(-2i/d) (b a positive symbol unless given)."""
    b = base if base is not None else sp.Symbol("b", positive=True)
    return b ** (-2 * sp.sympify(i) / d)


def pair_indices(d: int, layout: str) -> list[tuple[int, int]]:
    """The feature indices (a, b) rotated together, pair by pair."""
    h = d // 2
    return [(i, i + h) if layout == "half" else (2 * i, 2 * i + 1) for i in range(h)]


def permutation(d: int) -> sp.Matrix:
    """P with (P x)[i] = x[2i], (P x)[i + d/2] = x[2i+1]: interleaved to half."""
    P = sp.zeros(d, d)
    for i, (a, b) in enumerate(pair_indices(d, "interleaved")):
        P[i, a] = 1
        P[i + d // 2, b] = 1
    return P


def rotation(
    pos: sp.Expr,
    d: int,
    layout: str,
    *,
    freq: Callable[[int], sp.Expr] | None = None,
) -> sp.Matrix:
    """The dense d x d RoPE matrix R(pos) in ``layout``.

    ``freq(i)`` gives the i-th frequency (default b^(-2i/d) with a positive symbol b); the 2x2
    blocks are :func:`block`.
    """
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    freq = freq or (lambda i: frequency(i, d))
    R = sp.zeros(d, d)
    for i, (a, b) in enumerate(pair_indices(d, layout)):
        B = block(pos * freq(i))
        R[a, a], R[a, b], R[b, a], R[b, b] = B[0, 0], B[0, 1], B[1, 0], B[1, 1]
    return R


def relative_block() -> Derivation:
    """<R(m theta) q, R(n theta) k> = q^T R((n-m) theta) k for one 2-D block."""
    d = Derivation("RoPE relative inner product, one block")
    q = sp.Matrix(sp.symbols("q_0 q_1", real=True))
    k = sp.Matrix(sp.symbols("k_0 k_1", real=True))
    lhs = ((block(m * theta) * q).T * (block(n * theta) * k))[0]
    rhs = (q.T * block((n - m) * theta) * k)[0]
    d.define("Score of a query at m and a key at n, one block:", lhs)
    d.equal("<R(m th) q, R(n th) k> = q^T R((n-m) th) k", lhs, rhs, methods=TRIG)
    d.zero("the score is unchanged when m and n shift together: (d/dm + d/dn) score = 0",
           sp.Derivative(lhs, m) + sp.Derivative(lhs, n))
    d.result["score"] = rhs
    return d


THETA = sp.Function("theta", positive=True)  # the frequency of pair i, any positive function


def relative_angle(m_: sp.Expr, n_: sp.Expr) -> sp.Expr:
    """The angle of pair i in the relative form: (n - m) theta_i."""
    return (n_ - m_) * THETA(I)


def relative_symbolic_d(*, layout: str = "interleaved") -> Derivation:
    """The relative property for every even rotary dim 2h, head_dim 2h + e (partial rotary), one layout.

    The claimed relative form turns pair i by :func:`relative_angle` (the mutation tests patch it, and
    :func:`block`, with wrong ones).

    The score is the inner product over the 2h + p features. It is decided to be the sum over the
    layout's pairs plus the pass-through features (:mod:`pemath.symbolic.pairs`: induction on h), and
    the pair summand is decided identical to the relative form for a symbolic pair index i, symbolic h and
    any frequencies; so the cost does not depend on d.
    """
    d = Derivation(f"RoPE relative inner product, every even rotary dim 2h and head_dim 2h + e, {layout} layout")
    i, h = I, H
    th_i = THETA(i)
    angle = relative_angle(m, n)
    a, b = pairs.features(i, layout)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    qi, ki = sp.Matrix([q[a], q[b]]), sp.Matrix([k[a], k[b]])
    uq, vk = block(m * th_i) * qi, block(n * th_i) * ki
    d.define(f"u = R(m) q: pair i = ({a}, {b}) of the {layout} layout is turned by its own frequency theta_i "
             "(any positive numbers: RoPE's b^(-2i/2h), scaled ones included); features j >= 2h pass through "
             "(u_j = q_j); likewise v = R(n) k", sp.Eq(sp.Matrix([u[a], u[b]]), uq, evaluate=False))
    score = pairs.inner_over_pairs(d, layout, u, v, partial=True)
    unfolded = score.xreplace({u[a]: uq[0], u[b]: uq[1], v[a]: vk[0], v[b]: vk[1],
                               u[pairs.J]: q[pairs.J], v[pairs.J]: k[pairs.J]})
    target = (sp.Sum((qi.T * block(angle) * ki)[0], (i, 0, h - 1))
              + sp.Sum(q[pairs.J] * k[pairs.J], (pairs.J, 2 * h, 2 * h + pairs.PASS - 1)))
    d.equal("with the definition of u and v substituted, pair by pair: <R(m) q, R(n) k> = "
            "sum_i q_i^T B((n-m) theta_i) k_i + sum_{j >= 2h} q_j k_j", unfolded, target, methods=("sums",))
    r = sp.Symbol("r", real=True)
    shifted = d.specialize("with n = m + r:", sp.Eq(unfolded, target, evaluate=False), {n: m + r}).rhs
    if sp.expand(shifted) != shifted:  # an angle written (n theta - m theta) cancels m only once expanded
        d.equal("expanded", shifted, sp.expand(shifted), methods=("expand",))
        shifted = sp.expand(shifted)
    d.free_of("which depends on m and n only through r = n - m: with n = m + r it does not involve m", shifted, [m])
    d.zero("so the score is unchanged when m and n shift together: (d/dm + d/dn) score = 0",
           sp.Derivative(target, m) + sp.Derivative(target, n), methods=("sums",))
    d.result["score"] = target
    return d


def difference_rotation(pos: sp.Expr, dim: int, layout: str) -> sp.Matrix:
    """R(n - m) in the claimed relative form: the rotation of the same layout."""
    return rotation(pos, dim, layout)


def relative_expanded(dim: int, layout: str) -> Derivation:
    """Full expansion for a concrete d: (R(m) q)^T (R(n) k) = q^T R(n-m) k.

    R(n-m) is :func:`difference_rotation` (the mutation tests build it in the other layout).
    """
    d = Derivation(f"RoPE relative inner product, d = {dim}, {layout}")
    q = sp.Matrix(sp.symbols(f"q_0:{dim}", real=True))
    k = sp.Matrix(sp.symbols(f"k_0:{dim}", real=True))
    Rm, Rn = rotation(m, dim, layout), rotation(n, dim, layout)
    Rr = difference_rotation(n - m, dim, layout)
    d.define(f"R(m) for d = {dim}, layout {layout}:", Rm)
    d.equal("(R(m) q)^T (R(n) k) = q^T R(n-m) k", ((Rm * q).T * (Rn * k))[0], (q.T * Rr * k)[0], methods=TRIG)
    return d
