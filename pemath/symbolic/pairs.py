r"""The pairs of a layout partition the features: every sum over features is a sum over pairs.

RoPE (and the sinusoidal encoding, xPos, every scaling) acts pair by pair, and a score
is a sum over features. Every "for every even d" statement rests on two facts about
indices, decided here for a symbolic number of pairs :math:`h` (``d = 2h``) and an
arbitrary function :math:`F` of the feature index:

* the layout's pairs enumerate the rotary features exactly once each:
  :math:`\sum_{j=0}^{2h-1} F(j) = \sum_{i=0}^{h-1} [F(a_i) + F(b_i)]` with
  :math:`(a_i, b_i) = (2i, 2i+1)` (interleaved) or :math:`(i, i + h)` (half), decided by
  induction on :math:`h` (:meth:`~pemath.symbolic.Derivation.induction`); taking
  :math:`F` the indicator of one feature shows each feature lies in exactly one pair;
* with partial rotary, the features past the rotary ones split off:
  :math:`\sum_{j=0}^{2h+e-1} F(j) = \sum_{j=0}^{2h-1} F(j) + \sum_{j=2h}^{2h+e-1} F(j)`
  (additivity of finite sums over adjacent ranges).

:func:`inner_over_pairs` instantiates both for the inner product of two vectors, the
shape every score takes.
"""

from __future__ import annotations

import sympy as sp

from ._decide import Derivation
from .indices import H, I, LAYOUTS

__all__ = ["F", "J", "PASS", "features", "partition", "pass_through", "inner_over_pairs", "weak_equality"]

#: An arbitrary function of the feature index (the lemmas hold for every one).
F = sp.Function("F")
#: A feature index.
J = sp.Symbol("j", integer=True, nonnegative=True)
#: The number of features past the rotary ones (partial rotary: head_dim = 2h + e).
PASS = sp.Symbol("e", integer=True, nonnegative=True)


def features(i: sp.Expr, layout: str, h: sp.Expr = H) -> tuple[sp.Expr, sp.Expr]:
    """The two features of pair ``i``: ``(2i, 2i + 1)`` interleaved, ``(i, i + h)`` half."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + h)


#: The names under which this module's steps are marked (Derivation.lemma): reports fold them.
PARTITION = "pair partition"
PASS_THROUGH = "pass-through split"


def partition(d: Derivation, layout: str) -> sp.Eq:
    """Decide, in ``d``, that the pairs of ``layout`` enumerate the features 0..2h-1 once each (for an
    arbitrary ``F``, by induction on h); return the equation proved."""
    def pair_sum(n: sp.Expr) -> sp.Expr:
        a, b = features(I, layout, n)
        return sp.Sum(F(a) + F(b), (I, 0, n - 1))

    pairs = "(2i, 2i + 1)" if layout == "interleaved" else "(i, i + h)"
    with d.lemma(PARTITION):
        return d.induction(f"the {layout} pairs {pairs}, i < h, enumerate the features 0..2h-1 once each: "
                           "sum_j F(j) = sum_i [F(a_i) + F(b_i)] for every function F and every h",
                           lambda n: sp.Sum(F(J), (J, 0, 2 * n - 1)), pair_sum, H, 1)


def pass_through(d: Derivation) -> sp.Eq:
    """Decide, in ``d``, that a sum over 2h + e features is the rotary part plus the p features past it."""
    lhs = sp.Sum(F(J), (J, 0, 2 * H + PASS - 1))
    rhs = sp.Sum(F(J), (J, 0, 2 * H - 1)) + sp.Sum(F(J), (J, 2 * H, 2 * H + PASS - 1))
    with d.lemma(PASS_THROUGH):
        d.equal("with head_dim 2h + e (partial rotary), the features 2h..2h+e-1 past the rotary ones split off: "
                "sum_{j<2h+e} F(j) = sum_{j<2h} F(j) + sum_{2h<=j<2h+e} F(j)", lhs, rhs, methods=("sums",))
    return sp.Eq(lhs, rhs, evaluate=False)


def inner_over_pairs(d: Derivation, layout: str, u: sp.IndexedBase, v: sp.IndexedBase, *,
                     partial: bool = False) -> sp.Expr:
    """Decide ``<u, v> = sum_i (u_a v_a + u_b v_b) [+ sum over the pass-through features]`` for vectors of
    symbolic length ``2h`` (``2h + e`` when ``partial``) and return the right side."""
    product = sp.Lambda(J, u[J] * v[J])
    rotary = partition(d, layout)
    with d.lemma(PARTITION):
        rotary = d.instance(f"so <{u}, {v}> over the rotary features is the sum over the {layout} pairs",
                            rotary, F, product)
    if not partial:
        return rotary.rhs
    whole = pass_through(d)
    with d.lemma(PASS_THROUGH):
        whole = d.instance(f"and <{u}, {v}> over all 2h + e features is the rotary part plus the pass-through part",
                           whole, F, product)
    rest = whole.rhs - rotary.lhs
    return rotary.rhs + rest


def weak_equality(d: Derivation, text: str, layout: str, w: sp.IndexedBase, left: tuple[sp.Expr, sp.Expr],
                  right: tuple[sp.Expr, sp.Expr], *, methods: tuple[str, ...] = ("sums",)) -> None:
    """Decide two vectors of length 2h are equal, given their entries at pair i's features ``(a_i, b_i)``:
    ``<w, left - right> = 0`` for every vector ``w`` (take ``w`` the basis vector of any feature)."""
    a, b = features(I, layout)
    z = sp.IndexedBase("z")
    pair_sum = inner_over_pairs(d, layout, w, z)
    # each difference built unevaluated: SymPy would cancel equal sides on construction, leaving sum(0) = 0, which
    # says nothing; kept, the checker verifies the identity itself (the fourth reading of the records)
    diff = [sp.Add(lhs, sp.Mul(-1, rhs, evaluate=False), evaluate=False) for lhs, rhs in zip(left, right)]
    filled = pair_sum.xreplace({z[a]: diff[0], z[b]: diff[1]})
    d.equal(text, filled, sp.S.Zero, methods=methods)


def score_over_pairs(d: Derivation, layout: str, text: str, query: sp.Matrix, key: sp.Matrix, target: sp.Expr,
                     q: sp.IndexedBase, k: sp.IndexedBase, *, i: sp.Symbol = I) -> sp.Expr:
    """Decide ``<u, v> = sum_i target(i)`` for every h, where pair ``i`` of ``u`` is ``query`` and of ``v`` is
    ``key``; the expressions name pair i of ``q`` and ``k`` as ``q[i, 0], q[i, 1]`` and are read at the
    layout's features ``(a_i, b_i)``. Returns the sum."""
    if i != I:
        raise ValueError(f"the pair index must be {I}, got {i}")
    a, b = features(i, layout)
    at = {q[i, 0]: q[a], q[i, 1]: q[b], k[i, 0]: k[a], k[i, 1]: k[b]}
    u, v = sp.IndexedBase("u"), sp.IndexedBase("v")
    inner = inner_over_pairs(d, layout, u, v)
    qp, kp = query.xreplace(at), key.xreplace(at)
    unfolded = inner.xreplace({u[a]: qp[0], u[b]: qp[1], v[a]: kp[0], v[b]: kp[1]})
    total = sp.Sum(target.xreplace(at), (i, 0, H - 1))
    d.equal(text, unfolded, total, methods=("sums",))
    return total
