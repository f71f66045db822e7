r"""Multi-dimensional RoPE: axial N-D RoPE is relative per axis; M-RoPE reduces to RoPE on text.

Both variants rotate feature pair ``i`` by one position component times one frequency,
:math:`\phi_i = p_{c(i)} \theta_i`: axial RoPE gives each axis ``a`` its own group of
pairs (frequencies :math:`\theta_{a,j}`), M-RoPE assigns each frequency index ``i`` of
one RoPE to a component ``c(i)`` (Qwen2-VL's contiguous sections, Qwen3-VL's
interleaved pattern).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from . import pairs
from ._decide import Derivation, unevaluated
from .notation import label
from .rope import TRIG, block, frequency, pair_indices

__all__ = [
    "P",
    "PK",
    "A",
    "J",
    "THETA_AJ",
    "component_rotation",
    "axial_rotation",
    "contiguous_components",
    "interleaved_components",
    "axial_relative_symbolic",
    "axial_relative_expanded",
    "mrope_reduces_symbolic",
    "mrope_reduces_expanded",
]

#: Query position components p_a and key position components p'_a.
P = sp.IndexedBase("p", real=True)
PK = sp.IndexedBase("p'", real=True)
#: Axis index a and pair index j inside the axis' group.
A = sp.Symbol("a", integer=True, nonnegative=True)
J = sp.Symbol("j", integer=True, nonnegative=True)
#: The frequency of pair j of axis a: any positive function (b^(-2j/d_a) per axis, or Pixtral's strided one).
THETA_AJ = sp.Function("theta", positive=True)

_m = sp.Symbol("m", real=True)  # the common position of a text token (M-RoPE)
_i = sp.Symbol("i", integer=True, nonnegative=True)
_c = sp.Function("c", integer=True, nonnegative=True)  # the component of frequency index i
_z = sp.Symbol("z", real=True)  # a value, for congruence


def component_rotation(
    angles: Sequence[sp.Expr], d: int, layout: str
) -> sp.Matrix:
    """The dense d x d matrix rotating pair i of ``layout`` by ``angles[i]``."""
    R = sp.zeros(d, d)
    for i, (a, b) in enumerate(pair_indices(d, layout)):
        B = block(angles[i])
        R[a, a], R[a, b], R[b, a], R[b, b] = B[0, 0], B[0, 1], B[1, 0], B[1, 1]
    return R


def axial_rotation(
    pos: Sequence[sp.Expr], axis_dims: Sequence[int], layout: str, *, base: sp.Expr | None = None
) -> sp.Matrix:
    """Axial RoPE as a dense matrix: block ``a`` (``axis_dims[a]`` features) is RoPE of size d_a at ``pos[a]``.

    Frequencies per axis, theta_{a,j} = b^(-2j/d_a) (pemath's ``frequencies="per_axis"``,
    ``grouping="features"``).
    """
    b = base if base is not None else sp.Symbol("b", positive=True)
    blocks = []
    for p, da in zip(pos, axis_dims):
        blocks.append(component_rotation([p * frequency(j, da, b) for j in range(da // 2)], da, layout))
    return sp.diag(*blocks)


def contiguous_components(sections: Sequence[int]) -> list[int]:
    """Qwen2-VL's M-RoPE: the first s_0 frequency indices use component 0, the next s_1 component 1, ..."""
    return [c for c, s in enumerate(sections) for _ in range(s)]


def interleaved_components(sections: Sequence[int]) -> list[int]:
    """Qwen3-VL's interleaved M-RoPE: index i uses component i mod k if that is >= 1 and i < k s_c, else 0."""
    k = len(sections)
    out = []
    for i in range(sum(sections)):
        c = i % k
        out.append(c if c >= 1 and i < k * sections[c] else 0)
    return out


def key_axis(a: sp.Expr) -> sp.Expr:
    """The position component that turns the key's group of axis ``a``: ``a`` itself."""
    return a


def axial_relative_symbolic() -> Derivation:
    """The axial score depends on the per-axis differences p'_a - p_a only, for any number of axes and sizes.

    :func:`key_axis` says which position component rotates the key's group ``a`` (``a`` itself; the
    mutation tests patch a wrong pairing, e.g. ``a + 1``).
    The summand of one pair of one axis is proved for a symbolic axis index, pair index
    and frequency, so the proof costs the same for any number of axes and any sizes.
    """
    d = Derivation("axial RoPE relative inner product, any number of axes")
    a, j = A, J
    th = THETA_AJ(a, j)
    ka = key_axis(a)
    d.define(
        "Axial RoPE rotates pair j of the group of axis a by the coordinate of that axis, p_a theta_{a,j} "
        "(theta_{a,j} any positive frequency: b^(-2j/d_a), or Pixtral's strided ones):",
        sp.Eq(label("phi_{a,j}", r"\phi_{a,j}"), P[a] * th, evaluate=False),
    )
    q = sp.IndexedBase("q", real=True)
    k = sp.IndexedBase("k", real=True)
    qv = sp.Matrix([q[a, j, 0], q[a, j, 1]])
    kv = sp.Matrix([k[a, j, 0], k[a, j, 1]])
    summand = ((block(P[a] * th) * qv).T * (block(PK[ka] * th) * kv))[0]
    target = (qv.T * block((PK[a] - P[a]) * th) * kv)[0]
    d.define("One pair of one axis contributes to the score of a query at p and a key at p':", summand)
    d.equal(
        "summand: <R(p_a th) q_{a,j}, R(p'_a th) k_{a,j}> = q_{a,j}^T R((p'_a - p_a) th) k_{a,j}",
        summand, target, methods=TRIG,
    )
    delta = sp.IndexedBase("delta", real=True)
    shifted = target.subs(PK[a], P[a] + delta[a])
    d.zero("with p' = p + delta, the summand does not depend on p: it is a function of the per-axis "
           "differences delta_a = p'_a - p_a", sp.Derivative(shifted, P[a]))
    axis = sp.Function("c")  # the axis (position component) of pair i: any assignment
    i = pairs_index = sp.Symbol("i", integer=True, nonnegative=True)
    th_i = sp.Function("theta", positive=True)(i)
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    d.define("Number the rotary pairs i = 0..h-1 of the whole head in either layout (pemath's grouping='pairs', "
             "M-RoPE's sections, interleaved or not): pair i belongs to axis c(i), any assignment, and is turned by "
             "p_{c(i)} theta_i; features past the rotary ones pass through")
    for layout in pairs.LAYOUTS:
        qa, qb = pairs.features(pairs_index, layout)
        qi, ki = sp.Matrix([q[qa], q[qb]]), sp.Matrix([k[qa], k[qb]])
        uq, vk = block(P[axis(i)] * th_i) * qi, block(PK[key_axis(axis(i))] * th_i) * ki
        whole = pairs.inner_over_pairs(d, layout, u, v, partial=True)
        unfolded = whole.xreplace({u[qa]: uq[0], u[qb]: uq[1], v[qa]: vk[0], v[qb]: vk[1],
                                   u[pairs.J]: q[pairs.J], v[pairs.J]: k[pairs.J]})
        rel = (sp.Sum((qi.T * block((PK[axis(i)] - P[axis(i)]) * th_i) * ki)[0], (i, 0, pairs.H - 1))
               + sp.Sum(q[pairs.J] * k[pairs.J], (pairs.J, 2 * pairs.H, 2 * pairs.H + pairs.PASS - 1)))
        d.equal(f"{layout} pairs: the score <R(p) q, R(p') k> = sum_i q_i^T B((p'_c(i) - p_c(i)) theta_i) k_i "
                "+ sum_(pass-through) q_j k_j", unfolded, rel, methods=("sums",))
        moved = rel.replace(lambda e: isinstance(e, sp.Indexed) and e.base == PK,
                            lambda e: P[e.indices[0]] + delta[e.indices[0]])
        d.define("with p' = p + delta:", moved)
        d.free_of(f"{layout} pairs: with p' = p + delta it does not involve p: the score depends on the per-axis "
                  "differences only, for any number of axes and any sizes", moved, [P.label])
    d.remark("grouping='features' with the half layout inside each axis's block pairs (o_a + j, o_a + j + d_a/2): "
             "decided on the dense matrices for the axis sizes of multidim.axial_relative, not for every size.")
    d.result["score"] = target
    return d


def axial_relative_expanded(
    axis_dims: Sequence[int], layout: str
) -> Derivation:
    """Dense check for concrete axis sizes: R(p)^T R(p') = R(p' - p), so q^T R(p)^T R(p') k is relative.

    The key's group ``a`` is rotated by component :func:`key_axis` ``(a)`` (the mutation tests patch a
    permutation of the axes).
    """
    n = len(axis_dims)
    d = Derivation(f"axial RoPE relative inner product, axis sizes {tuple(axis_dims)}, {layout}")
    p = [P[a] for a in range(n)]
    pk = [PK[a] for a in range(n)]
    perm = [int(key_axis(a)) for a in range(n)]
    Rq = axial_rotation(p, axis_dims, layout)
    Rk = axial_rotation([pk[perm[a]] for a in range(n)], axis_dims, layout)
    Rr = axial_rotation([pk[a] - p[a] for a in range(n)], axis_dims, layout)
    d.define(f"The axial rotation for axis sizes {tuple(axis_dims)}, layout {layout}: block a is RoPE of size "
          "d_a at p_a, frequencies b^(-2j/d_a).")
    d.equal(f"R(p)^T R(p') = R(p' - p) for axis sizes {tuple(axis_dims)} ({layout}): the score "
            "(R(p) q)^T (R(p') k) = q^T R(p' - p) k", Rq.T * Rk, Rr, methods=TRIG)
    return d


def mrope_frequency(i: sp.Expr, c: sp.Expr, r: sp.Expr, b: sp.Expr) -> sp.Expr:
    """M-RoPE's frequency of index i, driven by component c: b^(-2i/d_r) (d_r the rotary dimension), whatever c is."""
    return frequency(i, r, b)


def mrope_reduces_symbolic() -> Derivation:
    """With every position component equal to m, M-RoPE's angle of frequency index i is RoPE's m theta_i.

    The frequency of index ``i`` driven by component ``c`` is :func:`mrope_frequency` (b^(-2i/d_r), the same as
    plain RoPE over the rotary dimension r, whatever c is; the mutation tests patch per-section
    frequencies, which do not reduce).
    """
    d = Derivation("M-RoPE reduces to RoPE when the position components are equal")
    r2 = sp.Symbol("h", integer=True, positive=True)  # r = 2h
    b = sp.Symbol("b", positive=True)
    i, c = _i, _c(_i)
    th = mrope_frequency(i, c, 2 * r2, b)
    phi = P[c] * th
    d.define("M-RoPE rotates pair i by the component c(i) of the position assigned to it (any assignment: "
          "contiguous sections, or Qwen3-VL's interleaved pattern), times theta_i:",
          sp.Eq(sp.Symbol("phi_i"), phi, evaluate=False))
    same = phi.replace(lambda e: isinstance(e, sp.Indexed) and e.base == P, lambda e: _m)
    text = d.hypothesis("A text token has every component equal to its position m: p_t = p_h = p_w = m, so the "
                        "component c(i) assigned to pair i holds m, whatever the assignment.", sp.Eq(P[c], _m))
    rope_angle = P[c] * frequency(i, 2 * r2, b)
    angle = unevaluated(lambda: P[c] * th)
    d.equal("M-RoPE's frequency of pair i is RoPE's over the rotary dimension, whichever component drives it: "
            "p_c(i) theta_i^M = p_c(i) b^(-2i/d_r)", angle, rope_angle, methods=("expand",))
    d.apply("so, with p_c(i) = m, phi_i = p_c(i) b^(-2i/d_r) = m b^(-2i/d_r) = m theta_i: the angle of plain RoPE at "
            "position m, for every i and every assignment c", text, sp.Lambda(_z, _z * frequency(i, 2 * r2, b)))
    x, w = sp.IndexedBase("x", real=True), sp.IndexedBase("w", real=True)
    for layout in pairs.LAYOUTS:
        xa, xb = pairs.features(i, layout)
        xi = sp.Matrix([x[xa], x[xb]])
        pairs.weak_equality(d, f"{layout} layout, every even rotary dim: M-RoPE(x, (m, m, m)) = RoPE(x, m), "
                            "pair by pair B(phi_i) x_i = B(m theta_i) x_i", layout, w, tuple(block(same) * xi),
                            tuple(block(_m * frequency(i, 2 * r2, b)) * xi))
    return d


def mrope_reduces_expanded(
    sections: Sequence[int], layout: str, *, interleaved: bool = False,
) -> Derivation:
    """Dense check for concrete sections: the M-RoPE matrix at (m, ..., m) equals RoPE's R(m)."""
    comp = interleaved_components(sections) if interleaved else contiguous_components(sections)
    h = len(comp)
    r = 2 * h
    b = sp.Symbol("b", positive=True)
    f = lambda i, c: mrope_frequency(i, c, r, b)  # noqa: E731
    kind = "interleaved" if interleaved else "contiguous"
    d = Derivation(f"M-RoPE at equal components, sections {tuple(sections)} ({kind}), {layout}")
    d.define(f"Components of the frequency indices 0..{h - 1} ({kind} sections {tuple(sections)}):", comp)
    angles = [P[c] * f(i, c) for i, c in enumerate(comp)]
    Rrope = component_rotation([_m * frequency(i, r, b) for i in range(h)], r, layout)
    d.equal(f"sections {tuple(sections)} ({kind}), layout {layout}: M-RoPE(m, ..., m) = RoPE R(m) as {r} x {r} "
            "matrices", unevaluated(lambda: component_rotation([e.subs({P[c]: _m for c in range(len(sections))})
                                                               for e in angles], r, layout)), Rrope,
            methods=("expand",))
    return d
