r"""Multi-dimensional RoPE: axial N-D RoPE is relative per axis; M-RoPE reduces to RoPE on text.

Both variants rotate feature pair ``i`` by one position component times one frequency,
:math:`\phi_i = p_{c(i)} \theta_i`: axial RoPE gives each axis ``a`` its own group of
pairs (frequencies :math:`\theta_{a,j}`), M-RoPE assigns each frequency index ``i`` of
one RoPE to a component ``c(i)`` (Qwen2-VL's contiguous sections, Qwen3-VL's
interleaved pattern).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp

from ._decide import Derivation
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


def component_rotation(
    angles: Sequence[sp.Expr], d: int, layout: str, *, blk: Callable[[sp.Expr], sp.Matrix] = block
) -> sp.Matrix:
    """The dense d x d matrix rotating pair i of ``layout`` by ``angles[i]``."""
    R = sp.zeros(d, d)
    for i, (a, b) in enumerate(pair_indices(d, layout)):
        B = blk(angles[i])
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


def axial_relative_symbolic(
    key_axis: Callable[[sp.Expr], sp.Expr] | None = None,
    blk: Callable[[sp.Expr], sp.Matrix] = block,
) -> Derivation:
    """The axial score depends on the per-axis differences p'_a - p_a only, for any number of axes and sizes.

    ``key_axis(a)`` says which position component rotates the key's group ``a``
    (``a`` itself for axial RoPE; the tests pass a wrong pairing, e.g. ``a + 1``).
    The summand of one pair of one axis is proved for a symbolic axis index, pair index
    and frequency, so the proof costs the same for any number of axes and any sizes.
    """
    d = Derivation("axial RoPE relative inner product, any number of axes")
    a, j = A, J
    th = THETA_AJ(a, j)
    ka = key_axis(a) if key_axis is not None else a
    d.say(
        "Axial RoPE rotates pair j of the group of axis a by the coordinate of that axis, p_a theta_{a,j} "
        "(theta_{a,j} any positive frequency: b^(-2j/d_a), or Pixtral's strided ones):",
        sp.Eq(sp.Symbol("phi_{a,j}"), P[a] * th, evaluate=False),
    )
    q = sp.IndexedBase("q", real=True)
    k = sp.IndexedBase("k", real=True)
    qv = sp.Matrix([q[a, j, 0], q[a, j, 1]])
    kv = sp.Matrix([k[a, j, 0], k[a, j, 1]])
    summand = ((blk(P[a] * th) * qv).T * (blk(PK[ka] * th) * kv))[0]
    target = (qv.T * blk((PK[a] - P[a]) * th) * kv)[0]
    d.say("One pair of one axis contributes to the score of a query at p and a key at p':", summand)
    d.equal(
        "summand: <R(p_a th) q_{a,j}, R(p'_a th) k_{a,j}> = q_{a,j}^T R((p'_a - p_a) th) k_{a,j}",
        summand, target, methods=TRIG,
    )
    h = sp.Symbol("h_a", integer=True, positive=True)
    n_axes = sp.Symbol("N", integer=True, positive=True)
    score = sp.Sum(sp.Sum(target, (j, 0, h - 1)), (a, 0, n_axes - 1))
    d.say("Summing over the N axes and the d_a/2 pairs of each (features beyond sum d_a pass through "
          "and contribute q_f k_f, independent of the positions):", score)
    delta = sp.IndexedBase("delta", real=True)
    shifted = target.subs(PK[a], P[a] + delta[a])
    d.zero("with p' = p + delta, the summand does not depend on p: it is a function of the per-axis "
           "differences delta_a = p'_a - p_a", sp.diff(shifted, P[a]))
    d.say("The argument never used which pairs form the group of axis a: it covers pemath's "
          "grouping='features' and 'pairs', both layouts, and M-RoPE with frequency i driven by "
          "component c(i).")
    d.result["score"] = target
    return d


def axial_relative_expanded(
    axis_dims: Sequence[int], layout: str, *, key_perm: Sequence[int] | None = None
) -> Derivation:
    """Dense check for concrete axis sizes: R(p)^T R(p') = R(p' - p), so q^T R(p)^T R(p') k is relative.

    ``key_perm`` rotates the key's group ``a`` by component ``key_perm[a]`` (a mutant: the wrong
    axis pairing).
    """
    n = len(axis_dims)
    d = Derivation(f"axial RoPE relative inner product, axis sizes {tuple(axis_dims)}, {layout}")
    p = [P[a] for a in range(n)]
    pk = [PK[a] for a in range(n)]
    perm = list(key_perm) if key_perm is not None else list(range(n))
    Rq = axial_rotation(p, axis_dims, layout)
    Rk = axial_rotation([pk[perm[a]] for a in range(n)], axis_dims, layout)
    Rr = axial_rotation([pk[a] - p[a] for a in range(n)], axis_dims, layout)
    d.say(f"The axial rotation for axis sizes {tuple(axis_dims)}, layout {layout}: block a is RoPE of size "
          "d_a at p_a, frequencies b^(-2j/d_a).")
    d.equal(f"R(p)^T R(p') = R(p' - p) for axis sizes {tuple(axis_dims)} ({layout}): the score "
            "(R(p) q)^T (R(p') k) = q^T R(p' - p) k", Rq.T * Rk, Rr, methods=TRIG)
    return d


def mrope_reduces_symbolic(freq: Callable[[sp.Expr, sp.Expr], sp.Expr] | None = None) -> Derivation:
    """With every position component equal to m, M-RoPE's angle of frequency index i is RoPE's m theta_i.

    ``freq(i, c)`` is the frequency of index ``i`` driven by component ``c`` (M-RoPE:
    b^(-2i/r), the same as plain RoPE over the rotary dimension r, whatever c is); the
    tests pass per-section frequencies, which do not reduce.
    """
    d = Derivation("M-RoPE reduces to RoPE when the position components are equal")
    r2 = sp.Symbol("h", integer=True, positive=True)  # r = 2h
    b = sp.Symbol("b", positive=True)
    i, c = _i, _c(_i)
    th = freq(i, c) if freq is not None else frequency(i, 2 * r2, b)
    phi = P[c] * th
    d.say("M-RoPE rotates pair i by the component c(i) of the position assigned to it (any assignment: "
          "contiguous sections, or Qwen3-VL's interleaved pattern), times theta_i:",
          sp.Eq(sp.Symbol("phi_i"), phi, evaluate=False))
    same = phi.replace(lambda e: isinstance(e, sp.Indexed) and e.base == P, lambda e: _m)
    d.say("A text token has every component equal to its position m: p_t = p_h = p_w = m.", same)
    d.equal("so phi_i = m theta_i = m b^(-2i/r): the angle of plain RoPE at position m, for every i "
            "and every assignment c", same, _m * frequency(i, 2 * r2, b), methods=("expand",))
    d.say("Equal angles pair by pair, in the same layout, give the same rotation: M-RoPE(x, (m, m, m)) "
          "= RoPE(x, m).")
    return d


def mrope_reduces_expanded(
    sections: Sequence[int], layout: str, *, interleaved: bool = False,
    freq: Callable[[int, int], sp.Expr] | None = None,
) -> Derivation:
    """Dense check for concrete sections: the M-RoPE matrix at (m, ..., m) equals RoPE's R(m)."""
    comp = interleaved_components(sections) if interleaved else contiguous_components(sections)
    h = len(comp)
    r = 2 * h
    b = sp.Symbol("b", positive=True)
    f = freq or (lambda i, c: frequency(i, r, b))
    kind = "interleaved" if interleaved else "contiguous"
    d = Derivation(f"M-RoPE at equal components, sections {tuple(sections)} ({kind}), {layout}")
    d.say(f"Components of the frequency indices 0..{h - 1} ({kind} sections {tuple(sections)}):", comp)
    angles = [P[c] * f(i, c) for i, c in enumerate(comp)]
    Rm = component_rotation([e.subs({P[c]: _m for c in range(len(sections))}) for e in angles], r, layout)
    Rrope = component_rotation([_m * frequency(i, r, b) for i in range(h)], r, layout)
    d.equal(f"sections {tuple(sections)} ({kind}), layout {layout}: M-RoPE(m, ..., m) = RoPE R(m) as {r} x {r} "
            "matrices", Rm, Rrope, methods=("expand",))
    return d
