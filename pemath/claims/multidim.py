"""Multi-dimensional RoPE: axial N-D RoPE is relative per axis; M-RoPE reduces to RoPE on text tokens."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from . import _formal as F
from ..symbolic import multidim as sym
from ..symbolic import rope as rsym
from . import _mp
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._gpu import require_cupy
from ._registry import register
from ._tolerance import phase_bound
from .. import rope

# ----------------------------------------------------------------------------------------------
# multidim.axial_relative
# ----------------------------------------------------------------------------------------------


def _axial_proof() -> Verdict:
    d = sym.axial_relative_symbolic()
    for dims in ((2, 2), (4, 4), (2, 2, 4)):
        for layout in rsym.LAYOUTS:
            d.steps.extend(sym.axial_relative_expanded(dims, layout).steps[1:])
    return Verdict(d)


def _axial_statement() -> sp.Basic:
    a, j = sym.A, sym.J
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    qv, kv = sp.Matrix([q[a, j, 0], q[a, j, 1]]), sp.Matrix([k[a, j, 0], k[a, j, 1]])
    N, h = sp.Symbol("N", integer=True, positive=True), sp.Symbol("h_a", integer=True, positive=True)
    rel = (qv.T * rsym.block((sym.PK[a] - sym.P[a]) * sym.THETA_AJ(a, j)) * kv)[0]
    lhs = label("<R(p)q, R(p')k>", r"\langle R(p)\,q,\; R(p')\,k \rangle")
    return sp.Eq(lhs, sp.Sum(sp.Sum(rel, (j, 0, h - 1)), (a, 0, N - 1)), evaluate=False)


@functools.lru_cache(maxsize=2)
def _pair_score(module: str):
    """The derived relative score of one pair, as a function (q0, q1, k0, k1, theta, p_a, p'_a)."""
    a, j = sym.A, sym.J
    target = sym.axial_relative_symbolic().result["score"]
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    names = sp.symbols("q0 q1 k0 k1 th pa pka", real=True)
    sub = {q[a, j, 0]: names[0], q[a, j, 1]: names[1], k[a, j, 0]: names[2], k[a, j, 1]: names[3],
           sym.THETA_AJ(a, j): names[4], sym.P[a]: names[5], sym.PK[a]: names[6]}
    return sp.lambdify(names, target.xreplace(sub), module)


def _axial_pairs(dims: list[int], layout: str, grouping: str, frequencies: str, base: float):
    """(feature a, feature b, axis, theta) for every rotated pair, from the documented conventions."""
    n_axes, total = len(dims), sum(dims)
    out = []
    if grouping == "features":
        start = 0
        for ax, da in enumerate(dims):
            for jj, (fa, fb) in enumerate(rsym.pair_indices(da, layout)):
                out.append((start + fa, start + fb, ax, jj))
            start += da
    else:
        owner = [(ax, jj) for ax, da in enumerate(dims) for jj in range(da // 2)]
        for i, (fa, fb) in enumerate(rsym.pair_indices(total, layout)):
            out.append((fa, fb) + owner[i])
    res = []
    for fa, fb, ax, jj in out:
        if frequencies == "per_axis":
            th = base ** (-2.0 * jj / dims[ax])
        else:  # Pixtral: the frequencies of one RoPE over `total` dealt to the axes in turn
            th = base ** (-2.0 * (n_axes * jj + ax) / total)
        res.append((fa, fb, ax, th))
    return res


def _axial_numeric() -> str:

    score = _pair_score("numpy")

    def check(draw_seed: int, n_axes: int, layout: str, grouping: str, base: float, scale: int) -> None:
        rng = np.random.default_rng(draw_seed)
        halves = rng.integers(1, 7, size=n_axes)
        equal = bool(rng.integers(0, 2))
        if equal:
            halves[:] = halves[0]
        dims = [int(2 * h) for h in halves]
        frequencies = "strided" if equal and rng.integers(0, 2) else "per_axis"
        extra = int(rng.integers(0, 3))
        dim = sum(dims) + extra
        q, k = rng.standard_normal((2, dim))
        p = rng.integers(-scale, scale + 1, size=n_axes)
        pk = rng.integers(-scale, scale + 1, size=n_axes)
        kw = dict(layout=layout, base=base, axis_dims=dims, grouping=grouping, frequencies=frequencies)
        got = rope.apply_axial(q, p, **kw) @ rope.apply_axial(k, pk, **kw)
        want = sum(score(q[fa], q[fb], k[fa], k[fb], th, p[ax], pk[ax])
                   for fa, fb, ax, th in _axial_pairs(dims, layout, grouping, frequencies, base))
        want += float(q[sum(dims):] @ k[sum(dims):])
        tol = phase_bound(4 * scale, terms=2 * dim,
                          scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
        assert abs(got - want) <= tol, f"score {got!r} != derived relative form {want!r} (tol {tol:.3g}), {kw}"
        shift = rng.integers(-scale, scale + 1, size=n_axes)
        moved = rope.apply_axial(q, p + shift, **kw) @ rope.apply_axial(k, pk + shift, **kw)
        assert abs(moved - got) <= 2 * tol, f"shifting every axis by {shift.tolist()} changed the score"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), n_axes=Ints(1, 3), layout=Choice(rsym.LAYOUTS),
                   grouping=Choice(("features", "pairs")), base=Choice([10000.0, 100.0, 1e6]),
                   scale=Choice([10, 1000, 10**5]))


def _axial_mpmath() -> str:

    score = _pair_score("mpmath")
    rng = np.random.default_rng(3)
    dims = [4, 4]
    q, k = rng.standard_normal((2, 8))
    worst = 0.0
    with mpmath.workdps(60):
        for p, pk in (((10**6, 7), (10**6 + 5, -3)), ((2**40, 2**33), (2**40 - 17, 2**33 + 1))):
            direct, relative = [], []
            start = 0
            for ax, da in enumerate(dims):
                for jj in range(da // 2):
                    th = mpmath.mpf(10000) ** (-mpmath.mpf(2 * jj) / da)
                    fa, fb = start + 2 * jj, start + 2 * jj + 1
                    qa, qb, ka, kb = (mpmath.mpf(float(v)) for v in (q[fa], q[fb], k[fa], k[fb]))
                    cq, sq = mpmath.cos(p[ax] * th), mpmath.sin(p[ax] * th)
                    ck, sk = mpmath.cos(pk[ax] * th), mpmath.sin(pk[ax] * th)
                    direct.append((qa * cq - qb * sq) * (ka * ck - kb * sk) + (qb * cq + qa * sq) * (kb * ck + ka * sk))
                    relative.append(score(qa, qb, ka, kb, th, p[ax], pk[ax]))
                start += da
            gap = abs(mpmath.fsum(direct) - mpmath.fsum(relative))
            if gap > mpmath.mpf(10) ** -40:
                raise CheckFailure(f"relative form off by {mpmath.nstr(gap, 5)} at p={p}, p'={pk}")
            got = (rope.apply_axial(q, list(p), layout="interleaved", axis_dims=dims)
                   @ rope.apply_axial(k, list(pk), layout="interleaved", axis_dims=dims))
            tol = phase_bound(max(abs(a) + abs(b) for a, b in zip(p, pk)), terms=16,
                              scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
            err = abs(got - float(mpmath.fsum(direct)))
            if err > tol:
                raise CheckFailure(f"float64 apply_axial score off by {err:.3g} > {tol:.3g} at p={p}")
            worst = max(worst, err / tol)
    return f"exact at 60 digits up to p = 2**40; float64 apply_axial within {worst:.2g} of its bound"


def _cupy() -> str:
    cp = require_cupy()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64))
    pos = np.stack([np.arange(16) * 1000, np.arange(16)[::-1] * 7], axis=-1)
    sec = [8, 12, 12]
    mpos = np.stack([np.arange(16) * 1000] * 3)
    for layout in rsym.LAYOUTS:
        for name, host, dev in (
            ("apply_axial", rope.apply_axial(x, pos, layout=layout),
             rope.apply_axial(cp.asarray(x), cp.asarray(pos), layout=layout)),
            ("apply_mrope", rope.apply_mrope(x, mpos, mrope_section=sec, layout=layout),
             rope.apply_mrope(cp.asarray(x), cp.asarray(mpos), mrope_section=sec, layout=layout)),
        ):
            err = float(np.max(np.abs(host - cp.asnumpy(dev))))
            if err > phase_bound(16000, terms=2):
                raise CheckFailure(f"CuPy and NumPy {name} differ by {err:.3g} ({layout})")
    return "CuPy apply_axial and apply_mrope match NumPy within the phase bound"


def _axial_formal() -> tuple:
    """For every assignment c(i) of pairs to axes, positions p(a), p'(a) per axis and positive frequencies, over
    2h + e features in both layouts: <R(p) q, R(p') k> = sum_i q_i^T R((p'_c(i) - p_c(i)) theta_i) k_i (+ the
    pass-through part): the positions enter only through the per-axis differences."""
    c, p, p2 = sp.Function("c", real=True), sp.Function("p", real=True), sp.Function("p'", real=True)
    return bridge.formal([sp.Eq(F.rope_score(layout, p(c(F.I)), p2(c(F.I))),
                                F.relative_score(layout, p2(c(F.I)) - p(c(F.I)))) for layout in F.LAYOUTS])


register(
    Claim(
        id="multidim.axial_relative",
        name="Axial RoPE is relative along every axis",
        title="Axial N-D RoPE: <R(p)q, R(p')k> depends on q, k and the per-axis differences p'_a - p_a only, for "
              "every assignment of the head's pairs (interleaved or half) to axes; grouping='features' (half pairs "
              "inside each axis's block) is decided at axis sizes (2, 2), (4, 4) and (2, 2, 4) only",
        kind="theorem",
        family="multidim",
        statement=_axial_statement,
        formal=_axial_formal,
        proof=_axial_proof,
        checks=(Check("numeric", _axial_numeric), Check("mpmath", _axial_mpmath), Check("cupy", _cupy)),
        references=(
            "Heo et al. 2024, 'Rotary Position Embedding for Vision Transformer' (arXiv:2403.13298), section 3.2 "
            "('RoPE for 2D images', axial frequency), eq. 12 (RoPE-Axial)",
            "Su et al. 2021 (RoFormer), section 3.2.2, eq. 16 (the 1-D property, applied per axis)",
        ),
    )
)

# ----------------------------------------------------------------------------------------------
# multidim.mrope_reduces
# ----------------------------------------------------------------------------------------------

#: (mrope_section, interleaved) of released models and small ones for the dense proof.
_MROPE_CONFIGS = (((16, 24, 24), False), ((24, 20, 20), True), ((8, 12, 12), False), ((2, 1, 1), False),
                  ((2, 1, 1), True), ((4, 2, 2), True))


def _mrope_proof() -> Verdict:
    d = sym.mrope_reduces_symbolic()
    for layout in rsym.LAYOUTS:
        for sections, inter in (((2, 1, 1), False), ((2, 1, 1), True), ((2, 2, 2), True)):
            d.steps.extend(sym.mrope_reduces_expanded(sections, layout, interleaved=inter).steps[1:])
    return Verdict(d)


def _mrope_statement() -> sp.Basic:
    i = sp.Symbol("i", integer=True, nonnegative=True)
    h = sp.Symbol("h", integer=True, positive=True)
    m = sp.Symbol("m", real=True)
    c = sp.Function("c")(i)
    th = rsym.frequency(i, 2 * h)
    return sp.Eq(sp.Subs(sym.P[c] * th, sym.P[c], m), m * th, evaluate=False)


def _mrope_formal() -> tuple:
    """Pair i of the r = 2h rotary features is turned by the position component c(i) assigned to it (any
    assignment: contiguous or interleaved sections) times b^(-2i/r). Under the hypothesis that this component holds
    the token's position m (a text token: p_t = p_h = p_w = m), the angle is RoPE's m b^(-2i/r), for every i, h,
    b, assignment c and component values p. (The rotation of a pair is a function of its angle, so M-RoPE's
    rotation is then RoPE's; the dense checks at sections (2, 1, 1) and (2, 2, 2) are in the record.)"""
    i = sp.Symbol("i", integer=True, nonnegative=True)
    h = sp.Symbol("h", integer=True, positive=True)
    b, m = sp.Symbol("b", positive=True), sp.Symbol("m", real=True)
    c = sp.Function("c", integer=True, nonnegative=True)(i)
    p = sp.IndexedBase("p", real=True)
    theta = b ** (-2 * i / (2 * h))
    return bridge.formal([sp.Eq(p[c] * theta, m * theta, evaluate=False)], [sp.Eq(p[c], m)])


def _components(sections, inter):
    return sym.interleaved_components(sections) if inter else sym.contiguous_components(sections)


def _mrope_numeric() -> str:

    def check(draw_seed: int, config: int, layout: str, base: float, p: int) -> None:
        sections, inter = _MROPE_CONFIGS[config]
        r = 2 * sum(sections)
        rng = np.random.default_rng(draw_seed)
        x = rng.standard_normal(r)
        kw = dict(mrope_section=list(sections), layout=layout, base=base, interleaved=inter)
        got = rope.apply_mrope(x, [p] * len(sections), **kw)
        want = rope.apply(x, p, layout=layout, base=base)
        tol = phase_bound(abs(p), terms=2, scale=float(np.max(np.abs(x))))
        err = float(np.max(np.abs(got - want)))
        assert err <= tol, f"M-RoPE at equal components differs from RoPE by {err:.3g} > {tol:.3g} ({kw})"
        # distinct components: pair i is RoPE's pair i at position p_{c(i)} (phi_i = p_{c(i)} theta_i)
        comps = [int(v) for v in rng.integers(-abs(p) - 1, abs(p) + 2, size=len(sections))]
        got = rope.apply_mrope(x, comps, **kw)
        per = [rope.apply(x, v, layout=layout, base=base) for v in comps]
        for i, (a, b) in enumerate(rsym.pair_indices(r, layout)):
            c = _components(sections, inter)[i]
            e = max(abs(got[a] - per[c][a]), abs(got[b] - per[c][b]))
            assert e <= phase_bound(abs(p) + 2, terms=2, scale=float(np.max(np.abs(x)))), (
                f"pair {i} is not rotated by component {c} ({kw}, positions {comps})")

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), config=Ints(0, len(_MROPE_CONFIGS) - 1),
                   layout=Choice(rsym.LAYOUTS), base=Choice([10000.0, 1e6, 5e6]), p=Ints(-2**40, 2**40))


def _mrope_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(_mp.DPS):
        for config in range(len(_MROPE_CONFIGS)):
            sections, inter = _MROPE_CONFIGS[config]
            r = 2 * sum(sections)
            x = np.random.default_rng(config).standard_normal(r)
            th = _mp.thetas(r, 1e6)
            for layout in rsym.LAYOUTS:
                for p in (5, 10**6, 2**40):
                    want = _mp.rotate(x, p, th, layout)  # RoPE at 60 digits
                    got = rope.apply_mrope(x, [p] * len(sections), mrope_section=list(sections), layout=layout,
                                           base=1e6, interleaved=inter)
                    err = max(abs(float(g) - float(w)) for g, w in zip(got, want))
                    tol = phase_bound(p, terms=2, scale=float(np.max(np.abs(x))))
                    if err > tol:
                        raise CheckFailure(f"M-RoPE at equal components off 60-digit RoPE by {err:.3g} > {tol:.3g} "
                                           f"(sections {sections}, interleaved={inter}, {layout}, p = {p})")
                    worst = max(worst, err / tol)
    return f"apply_mrope(x, (p, p, p)) against 60-digit RoPE, p up to 2**40: within {worst:.2g} of the float64 bound"


register(
    Claim(
        id="multidim.mrope_reduces",
        name="M-RoPE on text tokens is 1-D RoPE",
        title="M-RoPE with equal position components (text tokens) is 1-D RoPE: phi_i = p_c(i) theta_i = m theta_i",
        kind="theorem",
        family="multidim",
        statement=_mrope_statement,
        formal=_mrope_formal,
        proof=_mrope_proof,
        checks=(Check("numeric", _mrope_numeric), Check("mpmath", _mrope_mpmath)),
        references=(
            "Wang et al. 2024 (Qwen2-VL, arXiv:2409.12191), section 2.1, 'Multimodal Rotary Position Embedding "
            "(M-RoPE)' and Figure 3: 'For text inputs, these components utilize identical position IDs, making "
            "M-RoPE functionally equivalent to 1D-RoPE'",
            "Qwen3-VL technical report 2025 (interleaved MRoPE)",
        ),
    )
)
