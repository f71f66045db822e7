r"""xPos (Sun et al. 2022): the scaled rotation's score depends on the distance only.

A query at m is scaled by :math:`\zeta^{(m-c)/B}` and a key at n by
:math:`\zeta^{-(n-c)/B}` before (or after: they commute) RoPE's rotation, pair by pair.
Per pair the score is

.. math:: (\zeta^{(m-c)/B} R(m\theta) q)^T (\zeta^{-(n-c)/B} R(n\theta) k)
          = \zeta^{(m-n)/B}\, q^T R((n-m)\theta) k

for any positive :math:`\zeta`, :math:`B` and any centre :math:`c`.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from . import pairs
from ._decide import Derivation, unevaluated
from .notation import label
from .rope import TRIG, block, pair_indices, rotation

__all__ = ["ZETA", "SCALE_BASE", "CENTER", "ZETA_I", "relative_block", "relative_symbolic_d", "relative_expanded"]

m, n = sp.symbols("m n", real=True)
theta = sp.Symbol("theta", positive=True)
ZETA = sp.Symbol("zeta", positive=True)
SCALE_BASE = sp.Symbol("B", positive=True)
CENTER = sp.Symbol("c", real=True)
#: The xPos base of pair i: any positive function (the paper's (2i/d + gamma)/(1 + gamma)).
ZETA_I = sp.Function("zeta", positive=True)
_THETA_I = sp.Function("theta", positive=True)
_I = sp.Symbol("i", integer=True, nonnegative=True)
_H = sp.Symbol("h", integer=True, positive=True)


def _scale(z: sp.Expr, pos: sp.Expr, sign: int) -> sp.Expr:
    return z ** (sign * (pos - CENTER) / SCALE_BASE)


#: The sign of the key's scaling exponent: xPos scales a key at n by zeta^(-(n-c)/B), the query's inverse.
KEY_SIGN = -1


def relative_block() -> Derivation:
    """One pair: the scaled score is zeta^((m-n)/B) q^T R((n-m) theta) k.

    The key's exponent has the sign :data:`KEY_SIGN` (xPos: -1, the inverse of the query's); the
    mutation tests patch +1, the same sign for both, which is not relative.
    """
    d = Derivation("xPos relative score, one pair")
    q = sp.Matrix(sp.symbols("q_0 q_1", real=True))
    k = sp.Matrix(sp.symbols("k_0 k_1", real=True))
    qm = _scale(ZETA, m, +1) * block(m * theta) * q
    kn = _scale(ZETA, n, KEY_SIGN) * block(n * theta) * k
    lhs = (qm.T * kn)[0]
    rhs = ZETA ** ((m - n) / SCALE_BASE) * (q.T * block((n - m) * theta) * k)[0]
    d.define("A query at m is scaled by zeta^((m-c)/B), a key at n by zeta^(-(n-c)/B) (zeta, B > 0, any c):",
          sp.Eq(label("score", r"\operatorname{score}"), lhs, evaluate=False))
    d.equal("score = zeta^((m-n)/B) q^T R((n-m) theta) k: the centre c cancels", lhs, rhs, methods=TRIG)
    r = sp.Symbol("r", real=True)
    d.zero("with n = m + r the score does not depend on m: it is a function of the distance only",
           unevaluated(lambda: sp.diff(rhs.subs(n, m + r), m)))
    d.result["score"] = rhs
    return d


def relative_symbolic_d() -> Derivation:
    """Every even d at once: the summand of pair i, with symbolic zeta_i and theta_i, is relative."""
    d = Derivation("xPos relative score, every even d")
    i, h = _I, _H
    zi, ti = ZETA_I(i), _THETA_I(i)
    d.define("Pair i has its own rotation frequency theta_i and decay base zeta_i (xPos: "
          "zeta_i = (2i/d + gamma)/(1 + gamma), in (0, 1)); any positive values:",
          sp.Eq(zi, (2 * i / (2 * h) + sp.Symbol("gamma", positive=True)) / (1 + sp.Symbol("gamma", positive=True))))
    q = sp.IndexedBase("q", real=True)
    k = sp.IndexedBase("k", real=True)
    qi = sp.Matrix([q[i, 0], q[i, 1]])
    ki = sp.Matrix([k[i, 0], k[i, 1]])
    summand = ((_scale(zi, m, +1) * block(m * ti) * qi).T * (_scale(zi, n, KEY_SIGN) * block(n * ti) * ki))[0]
    target = zi ** ((m - n) / SCALE_BASE) * (qi.T * block((n - m) * ti) * ki)[0]
    d.equal("summand: zeta_i^((m-n)/B) q_i^T R((n-m) theta_i) k_i", summand, target, methods=TRIG)
    for layout in pairs.LAYOUTS:
        pairs.score_over_pairs(d, layout, f"{layout} pairs: the score, summed over the d/2 pairs, is "
                               "sum_i zeta_i^((m-n)/B) q_i^T R((n-m) theta_i) k_i for every even d",
                               _scale(zi, m, +1) * block(m * ti) * qi, _scale(zi, n, KEY_SIGN) * block(n * ti) * ki,
                               target, q, k, i=i)
    r = sp.Symbol("r", real=True)
    d.zero("which depends on m and n only through n - m", sp.Derivative(target.subs(n, m + r), m))
    d.result["score"] = target
    return d


def relative_expanded(dim: int, layout: str) -> Derivation:
    """Dense, for a concrete d: S(m)^T S'(n) = Z^((m-n)/B) R(n-m), with the scales as diagonal matrices."""
    d = Derivation(f"xPos relative score, d = {dim}, {layout}")
    zs = [sp.Symbol(f"zeta_{i}", positive=True) for i in range(dim // 2)]
    ts = [sp.Symbol(f"theta_{i}", positive=True) for i in range(dim // 2)]

    def diag(scale: Callable[[sp.Expr], sp.Expr]) -> sp.Matrix:
        D = sp.zeros(dim, dim)
        for i, (a, b) in enumerate(pair_indices(dim, layout)):
            D[a, a] = D[b, b] = scale(zs[i])
        return D

    Rm = diag(lambda z: _scale(z, m, +1)) * rotation(m, dim, layout, freq=lambda i: ts[i])
    Rn = diag(lambda z: _scale(z, n, KEY_SIGN)) * rotation(n, dim, layout, freq=lambda i: ts[i])
    rel = diag(lambda z: z ** ((m - n) / SCALE_BASE)) * rotation(n - m, dim, layout, freq=lambda i: ts[i])
    d.equal(f"(Z^((m-c)/B) R(m))^T (Z^(-(n-c)/B) R(n)) = Z^((m-n)/B) R(n-m) for d = {dim} ({layout})",
            Rm.T * Rn, rel, methods=TRIG)
    return d
