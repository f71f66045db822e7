"""Building blocks of the claims' formal statements, written here from the definitions, apart from the proofs.

A formal statement is built from plain SymPy (:func:`pemath.symbolic.bridge.formal`), never from the functions a
proof uses, so a mistake (or a mutant) in the proof code changes what is proved but not what is stated, and the
claim then fails. These helpers write the objects several statements share: the pairs of a layout, a plane
rotation, and a score summed over the pairs of a head of ``2h`` rotary features and ``e`` pass-through ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

#: the number of rotary pairs (head_dim = 2h + e), the pass-through features, a pair index, a feature index
H = sp.Symbol("h", integer=True, positive=True)
E = sp.Symbol("e", integer=True, nonnegative=True)
I = sp.Symbol("i", integer=True, nonnegative=True)
J = sp.Symbol("j", integer=True, nonnegative=True)
#: the query and key positions
M, N = sp.symbols("m n", real=True)
#: a query and a key (real entries), and a positive frequency per pair
Q, K = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
THETA = sp.Function("theta", positive=True)

LAYOUTS = ("interleaved", "half")


def features(layout: str, i: sp.Expr = I, h: sp.Expr = H) -> tuple[sp.Expr, sp.Expr]:
    """The two features of pair i: (2i, 2i + 1) interleaved (GPT-J), (i, i + h) half (GPT-NeoX)."""
    return (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + h)


def rotate(angle: sp.Expr, x: tuple[sp.Expr, sp.Expr]) -> tuple[sp.Expr, sp.Expr]:
    """R(angle) (x0, x1) = (x0 cos - x1 sin, x0 sin + x1 cos)."""
    c, s = sp.cos(angle), sp.sin(angle)
    return (x[0] * c - x[1] * s, x[0] * s + x[1] * c)


def dot(u: tuple[sp.Expr, sp.Expr], v: tuple[sp.Expr, sp.Expr]) -> sp.Expr:
    return u[0] * v[0] + u[1] * v[1]


def over_pairs(body: Callable[[tuple[sp.Expr, sp.Expr]], sp.Expr], layout: str, h: sp.Expr = H) -> sp.Expr:
    """sum over i = 0..h-1 of body(features of pair i)."""
    return sp.Sum(body(features(layout, I, h)), (I, 0, h - 1))


def pass_through(q: sp.IndexedBase = Q, k: sp.IndexedBase = K) -> sp.Expr:
    """The score's part on the e features 2h..2h+e-1 that no rotation touches."""
    return sp.Sum(k[J] * q[J], (J, 2 * H, 2 * H + E - 1))


def rope_score(layout: str, m: sp.Expr = M, n: sp.Expr = N, theta: Callable = THETA, scale: Any = 1, *,
               partial: bool = True) -> sp.Expr:
    """<R(m) q, R(n) k> over 2h + e features (2h without ``partial``): pair i of q turned by m theta(i), of k by
    n theta(i), the pass-through features as they are. ``scale`` multiplies both rotated pairs: an expression,
    or a pair ``(of q, of k)`` of functions of the pair index."""
    def pair(f: tuple[sp.Expr, sp.Expr]) -> sp.Expr:
        qi, ki = (Q[f[0]], Q[f[1]]), (K[f[0]], K[f[1]])
        rq, rk = rotate(m * theta(I), qi), rotate(n * theta(I), ki)
        sq, sk = (scale[0](I), scale[1](I)) if isinstance(scale, tuple) else (scale, scale)
        return dot((sk * rk[0], sk * rk[1]), (sq * rq[0], sq * rq[1]))
    return (pass_through() if partial else 0) + over_pairs(pair, layout)


def relative_score(layout: str, r: sp.Expr = N - M, theta: Callable = THETA, factor: Any = 1, *,
                   partial: bool = True) -> sp.Expr:
    """sum_i factor(i) q_i^T R(r theta(i)) k_i over the pairs (``factor`` an expression, or a function of the
    pair index), plus the pass-through part with ``partial``."""
    def pair(f: tuple[sp.Expr, sp.Expr]) -> sp.Expr:
        qi, ki = (Q[f[0]], Q[f[1]]), (K[f[0]], K[f[1]])
        # q^T R(a) k = q0 (k0 cos a - k1 sin a) + q1 (k0 sin a + k1 cos a)
        return (factor(I) if callable(factor) else factor) * dot(qi, rotate(r * theta(I), ki))
    return (pass_through() if partial else 0) + over_pairs(pair, layout)
