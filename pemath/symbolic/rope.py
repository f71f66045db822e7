"""RoPE's rotation as exact SymPy matrices, and its relative inner-product property."""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from ._decide import Derivation

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
]

LAYOUTS = ("interleaved", "half")

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
    blk: Callable[[sp.Expr], sp.Matrix] = block,
) -> sp.Matrix:
    """The dense d x d RoPE matrix R(pos) in ``layout``.

    ``freq(i)`` gives the i-th frequency (default b^(-2i/d) with a positive symbol b);
    ``blk`` builds the 2x2 block (tests pass wrong blocks, e.g. the seed's matrix
    without its lower sin entry, to show the proofs reject them).
    """
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    freq = freq or (lambda i: frequency(i, d))
    R = sp.zeros(d, d)
    for i, (a, b) in enumerate(pair_indices(d, layout)):
        B = blk(pos * freq(i))
        R[a, a], R[a, b], R[b, a], R[b, b] = B[0, 0], B[0, 1], B[1, 0], B[1, 1]
    return R


def relative_block(blk: Callable[[sp.Expr], sp.Matrix] = block) -> Derivation:
    """<R(m theta) q, R(n theta) k> = q^T R((n-m) theta) k for one 2-D block."""
    d = Derivation("RoPE relative inner product, one block")
    q = sp.Matrix(sp.symbols("q_0 q_1", real=True))
    k = sp.Matrix(sp.symbols("k_0 k_1", real=True))
    lhs = ((blk(m * theta) * q).T * (blk(n * theta) * k))[0]
    rhs = (q.T * blk((n - m) * theta) * k)[0]
    d.say("Score of a query at m and a key at n, one block:", lhs)
    d.equal("<R(m th) q, R(n th) k> = q^T R((n-m) th) k", lhs, rhs, methods=TRIG)
    d.zero("the score is unchanged when m and n shift together: (d/dm + d/dn) score = 0",
           sp.diff(lhs, m) + sp.diff(lhs, n))
    d.result["score"] = rhs
    return d


H = sp.Symbol("h", integer=True, positive=True)  # d = 2h
I = sp.Symbol("i", integer=True, nonnegative=True)
THETA = sp.Function("theta", positive=True)  # the frequency of pair i, any positive function


def relative_symbolic_d(
    blk: Callable[[sp.Expr], sp.Matrix] = block,
    rhs_angle: Callable[[sp.Expr, sp.Expr], sp.Expr] | None = None,
) -> Derivation:
    """The relative property for every even d at once, by block decomposition.

    ``blk`` builds the rotation block and ``rhs_angle(m, n)`` the angle of the claimed
    relative form (default ``(n - m) theta_i``): the tests pass wrong ones.

    The score is a sum over the d/2 blocks (in either layout: the layouts only
    choose which features form block i). The summand is proved identical to the
    relative form for a symbolic block index i, symbolic d and base, so the sum over
    any number of blocks is too; the cost does not depend on d.
    """
    d = Derivation("RoPE relative inner product, every even d")
    i, h = I, H
    th_i = THETA(i)
    angle = rhs_angle(m, n) if rhs_angle is not None else (n - m) * th_i
    d.say("Pair i of either layout is rotated by its own frequency theta_i (RoPE: b^(-2i/d)); "
          "the proof holds for any frequencies, scaled ones included:", sp.Eq(th_i, frequency(i, 2 * h)))
    q = sp.IndexedBase("q", real=True)
    k = sp.IndexedBase("k", real=True)
    qi = sp.Matrix([q[i, 0], q[i, 1]])
    ki = sp.Matrix([k[i, 0], k[i, 1]])
    summand = ((blk(m * th_i) * qi).T * (blk(n * th_i) * ki))[0]
    target = (qi.T * blk(angle) * ki)[0]
    d.equal("summand: <R(m th_i) q_i, R(n th_i) k_i> = q_i^T R((n-m) th_i) k_i", summand, target, methods=TRIG)
    score = sp.Sum(summand, (i, 0, h - 1))
    rel = sp.Sum(target, (i, 0, h - 1))
    d.say("Hence, summing over the d/2 blocks:", sp.Eq(score, rel, evaluate=False))
    d.zero("which depends on m and n only through n - m", sp.diff(target.subs(n, m + sp.Symbol("r", real=True)), m))
    d.result["score"] = rel
    return d


def relative_expanded(dim: int, layout: str, *, blk: Callable[[sp.Expr], sp.Matrix] = block,
                      perm_layout: str | None = None) -> Derivation:
    """Full expansion for a concrete d: (R(m) q)^T (R(n) k) = q^T R(n-m) k.

    ``perm_layout`` builds R(n-m) in another layout than R(m), R(n) (a mutation used
    by the tests; the proof must fail then).
    """
    d = Derivation(f"RoPE relative inner product, d = {dim}, {layout}")
    q = sp.Matrix(sp.symbols(f"q_0:{dim}", real=True))
    k = sp.Matrix(sp.symbols(f"k_0:{dim}", real=True))
    Rm, Rn = rotation(m, dim, layout, blk=blk), rotation(n, dim, layout, blk=blk)
    Rr = rotation(n - m, dim, perm_layout or layout, blk=blk)
    d.say(f"R(m) for d = {dim}, layout {layout}:", Rm)
    d.equal("(R(m) q)^T (R(n) k) = q^T R(n-m) k", ((Rm * q).T * (Rn * k))[0], (q.T * Rr * k)[0], methods=TRIG)
    return d
