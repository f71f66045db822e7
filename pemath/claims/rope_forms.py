"""RoPE's forms and their algebra: the rotations form a group, and every way of writing them agrees.

The block-diagonal matrix (RoFormer eq. 15), the elementwise form (eq. 34), Meta's
complex form, the half layout (P R P^T) and the Meta -> HF weight permutation are the
same map; each claim proves one equivalence and checks it against pemath's
implementation of both sides.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label, matrix_label
from . import _formal as F
from ..symbolic import rope as R
from ..symbolic import rope_algebra as A
from . import _golden, _kernels, _mp
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import phase_bound
from .. import rope

_BASES = Choice([10000.0, 500000.0, 100.0])
_b = sp.Symbol("b", positive=True)  # the base symbol of pemath.symbolic.rope.frequency
_t = sp.Symbol("t", positive=True)  # theta_i, replacing the function THETA(i) before lambdify


def _rng_vec(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------- rope.group


def _group_proof() -> Verdict:
    d = A.group_symbolic_d(layout="interleaved")
    d.steps.extend(A.group_symbolic_d(layout="half").steps)
    d.steps.extend(A.group_block().steps)
    for dim in (2, 4, 8):
        for layout in R.LAYOUTS:
            d.steps.extend(A.group_dense(dim, layout).steps)
    return Verdict(d)


def _group_statement() -> sp.Basic:
    d = 2 * R.H
    Rm, Rn = sp.MatrixSymbol("R(m)", d, d), sp.MatrixSymbol("R(n)", d, d)
    return sp.Tuple(
        sp.Eq(sp.MatMul(Rm, Rn), sp.MatrixSymbol("R(m+n)", d, d), evaluate=False),
        sp.Eq(sp.Transpose(Rm), sp.MatrixSymbol("R(-m)", d, d), evaluate=False),
        sp.Eq(sp.Determinant(Rm), 1, evaluate=False),
        sp.Eq(label("|R(m) x|^2", r"\lVert R(m)\,x \rVert^2"), label("|x|^2", r"\lVert x \rVert^2"), evaluate=False),
        sp.Eq(label("B(alpha) B(beta)", r"B(\alpha)\,B(\beta)"), A.group_block().result["product"], evaluate=False),
    )


def _block_product():
    """B(a + b) lambdified from the symbolic group law, as a function of the two angles."""
    return sp.lambdify((A.ALPHA, A.BETA), A.group_block().result["product"], "numpy")


def _group_numeric() -> str:

    product = _block_product()

    def check(draw_seed: int, m: int, n: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        x = _rng_vec(draw_seed, dim)
        span = abs(m) + abs(n)
        tol = phase_bound(span, terms=2 * dim, scale=float(np.max(np.abs(x))))
        twice = rope.apply(rope.apply(x, m, layout=layout, base=base), n, layout=layout, base=base)
        once = rope.apply(x, m + n, layout=layout, base=base)
        assert np.max(np.abs(twice - once)) <= 2 * tol, "apply(apply(x, m), n) != apply(x, m + n)"
        th = rope.inv_freq(dim, base=base)
        for i, (a, b) in enumerate(R.pair_indices(dim, layout)):
            want = np.asarray(product(m * th[i], n * th[i]), dtype=float) @ x[[a, b]]
            assert np.max(np.abs(twice[[a, b]] - want)) <= 2 * tol, f"pair {i}: not the symbolic B(a + b) x_i"
        Rm = rope.matrix(m, dim, layout=layout, base=base)
        Rn = rope.matrix(n, dim, layout=layout, base=base)
        mtol = phase_bound(span, terms=2 * dim)
        assert np.max(np.abs(Rm @ Rn - rope.matrix(m + n, dim, layout=layout, base=base))) <= mtol, \
            "matrix(m) @ matrix(n) != matrix(m + n)"
        assert np.max(np.abs(Rm.T - rope.matrix(-m, dim, layout=layout, base=base))) <= mtol, \
            "matrix(m).T != matrix(-m)"
        assert np.max(np.abs(Rm.T @ Rm - np.eye(dim))) <= mtol, "matrix(m) is not orthogonal"
        assert abs(np.linalg.det(Rm) - 1.0) <= phase_bound(abs(m), terms=2 * dim), "det matrix(m) != 1"
        y = rope.apply(x, m, layout=layout, base=base)
        assert abs(y @ y - x @ x) <= phase_bound(abs(m), terms=2 * dim, scale=float(x @ x)), "|apply(x, m)| != |x|"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**5, 10**5), n=Ints(-10**5, 10**5),
                   half=Ints(1, 32), layout=Choice(R.LAYOUTS), base=_BASES)


def _group_mpmath() -> str:

    product = sp.lambdify((A.ALPHA, A.BETA), A.group_block().result["product"], "mpmath")
    blk = sp.lambdify(R.m, R.block(R.m), "mpmath")
    dim = 8
    x = _rng_vec(3, dim)
    worst = 0.0
    with mpmath.workdps(60):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        for a, b in ((2**40, 2**40 - 3), (10**12, -(10**12) + 7), (2**40, 2**39 + 1)):
            for t in th:
                # the group law, with B(a)B(b) multiplied out at 60 digits, at huge angles
                gap = mpmath.norm(blk(a * t) * blk(b * t) - product(a * t, b * t))
                det = mpmath.det(blk(a * t))
                if gap > mpmath.mpf(10) ** -45 or abs(det - 1) > mpmath.mpf(10) ** -50:
                    raise CheckFailure(f"group law off by {mpmath.nstr(gap, 5)} (det {det}) at 60 digits, a={a}, b={b}")
            # pemath's float64 rotation at the huge position a + b against the 60-digit R(a + b) x
            got = rope.apply(x, a + b, layout="interleaved")
            tol = phase_bound(abs(a + b), terms=2, scale=float(np.max(np.abs(x))))
            for i, t in enumerate(th):
                want = product(a * t, b * t) * mpmath.matrix([float(x[2 * i]), float(x[2 * i + 1])])
                for j in range(2):
                    err = abs(got[2 * i + j] - float(want[j]))
                    if err > tol:
                        raise CheckFailure(f"apply(x, {a + b})[{2 * i + j}] off by {err:.3g} > {tol:.3g}")
                    worst = max(worst, err / tol)
    return f"group law exact at 60 digits up to a + b = 2**41; float64 apply() within {worst:.2g} of its bound"


def _group_formal() -> tuple:
    """Over 2h features in both layouts, for every w and x (a vector equals another when every w sees them
    equal): R(m) R(n) x = R(m + n) x, R(m)^T = R(-m) (<R(m) x, w> = <x, R(-m) w>, R(-m) R(m) x = x), and
    |R(m) x|^2 = |x|^2; for d = 2, 4, 8 and every base b, det R(m) (the product of the blocks' cos^2 + sin^2)
    is 1."""
    x, w = sp.IndexedBase("x", real=True), sp.IndexedBase("w", real=True)
    m, n, th = F.M, F.N, F.THETA(F.I)
    rels = []
    for layout in F.LAYOUTS:
        def pairs(body):  # noqa: ANN001, ANN202 - the sum over the pairs of body(x_i, w_i)
            return F.over_pairs(lambda f: body((x[f[0]], x[f[1]]), (w[f[0]], w[f[1]])), layout)

        def diff(u, v):  # noqa: ANN001, ANN202
            return (u[0] - v[0], u[1] - v[1])

        rels += [
            sp.Eq(pairs(lambda xi, wi: F.dot(diff(F.rotate(m * th, F.rotate(n * th, xi)), F.rotate((m + n) * th, xi)),
                                             wi)), 0),
            sp.Eq(pairs(lambda xi, wi: F.dot(F.rotate(m * th, xi), wi)), pairs(lambda xi, wi: F.dot(xi, F.rotate(-m * th, wi)))),
            sp.Eq(pairs(lambda xi, wi: F.dot(diff(F.rotate(-m * th, F.rotate(m * th, xi)), xi), wi)), 0),
            sp.Eq(pairs(lambda xi, wi: F.dot(F.rotate(m * th, xi), F.rotate(m * th, xi))), pairs(lambda xi, wi: F.dot(xi, xi))),
        ]
    b = sp.Symbol("b", positive=True)
    for h in (1, 2, 4):
        blocks = [sp.cos(m * b ** sp.Rational(-i, h)) ** 2 + sp.sin(m * b ** sp.Rational(-i, h)) ** 2 for i in range(h)]
        rels.append(sp.Eq(sp.Mul(*blocks), 1))
    return bridge.formal(rels)


register(
    Claim(
        id="rope.group",
        name="RoPE's rotations form a group and keep lengths",
        title="R(m)R(n) = R(m+n), R(m)^T = R(-m), |R(m)x| = |x|: every even d, both layouts; det R = 1 for d = 2, 4, 8 "
              "as the product of the blocks' cos^2 + sin^2 (the construction)",
        kind="theorem",
        family="rope_forms",
        statement=_group_statement,
        formal=_group_formal,
        proof=_group_proof,
        checks=(Check("numeric", _group_numeric), Check("mpmath", _group_mpmath)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.2.2, eq. 15 (R is orthogonal: section 3.2.2; norm-preserving: section 3.3)",
            "Paleti, 'Positional Encoding Explained: A Deep Dive into Transformer PE', The Deep Hub (Medium), 2024 (The Basics of RoPE: 'this rotation preserves the norm of the embeddings')",
        ),
    )
)


# ------------------------------------------------------------------- rope.elementwise_form


def _elementwise_proof() -> Verdict:
    d = A.elementwise_symbolic_d("interleaved")
    d.steps.extend(A.elementwise_symbolic_d("half").steps)
    for dim in (2, 4, 8):
        for layout in R.LAYOUTS:
            d.steps.extend(A.elementwise_form(dim, layout).steps)
    return Verdict(d)


def _elementwise_formal() -> tuple:
    """What pemath.rope's kernel computes, for every number of pairs h and every pass-through count e >= 1, in both
    layouts: its ``rotate`` run on symbolic arrays (the shipped source, :mod:`pemath.symbolic.traced`; a head x, per
    pair tables C, S) returns 2h (+ e) features, holds (x_a C_i - x_b S_i, x_b C_i + x_a S_i) at pair i's features
    (F.features: (2i, 2i + 1) interleaved, (i, i + h) half) for every i < h (h = i + 1 + g: the pairs' relations
    are stated at that h), and passes feature 2h + j through for j < e (a hypothesis). With C_i = cos(m theta_i), S_i = sin(m theta_i) that is R(m) x, eq. 34. The pairs and the
    values are written here from the definitions; the left sides are what the shipped code computes."""
    from ..rope import _core
    from ..symbolic import traced

    g, g2, i, j = sp.symbols("g g' i j", integer=True, nonnegative=True)
    h, e = sp.Symbol("h", integer=True, positive=True), sp.Symbol("e", integer=True, positive=True)
    x, C, S = (sp.IndexedBase(n, real=True) for n in ("x", "C", "S"))
    pair = {h: i + 1 + g}
    rels = []
    for layout in R.LAYOUTS:
        a, b = F.features(layout, i, h)
        for total in (2 * h, 2 * h + e):
            out = _core.rotate(traced.vector(total, x), traced.vector(h, C), traced.vector(h, S), layout, 2 * h,
                               traced.NAMESPACE, "float64")
            for left, right in ((out.shape[0], total), (out(a), x[a] * C[i] - x[b] * S[i]),
                                (out(b), x[b] * C[i] + x[a] * S[i])):
                rels.append(sp.Eq(sp.sympify(left).xreplace(pair), sp.sympify(right).xreplace(pair), evaluate=False))
            if total != 2 * h:
                rels.append(sp.Eq(out(2 * h + j).xreplace({e: j + 1 + g2}), x[2 * h + j], evaluate=False))
    # feature 2h + j is a pass-through one for j < e: the hypothesis (the traced feature does not depend on e)
    prop = bridge.formal(rels, [sp.Lt(j, e)])
    unique = tuple(dict.fromkeys(prop[3][1:]))  # a relation both layouts give (the same terms) is stated once
    from ..kernel import well_formed

    return well_formed((prop[0], prop[1], prop[2], ("and", *unique)))


def _elementwise_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(_mp.DPS):
        for dim, base in ((8, 10000.0), (64, 500000.0)):
            th = _mp.thetas(dim, base)
            x = _rng_vec(dim, dim)
            for layout in R.LAYOUTS:
                for p in (-12345, 10**6, 2**40):
                    want = _mp.rotate(x, p, th, layout)  # the matrix form, pair by pair, at 60 digits
                    got = rope.apply(x, p, layout=layout, base=base)  # the elementwise form, float64
                    err = max(abs(float(g) - float(w)) for g, w in zip(got, want))
                    tol = phase_bound(abs(p), terms=2, scale=float(np.max(np.abs(x))))
                    if err > tol:
                        raise CheckFailure(f"rope.apply (elementwise) off the 60-digit R(p) x by {err:.3g} > {tol:.3g} "
                                           f"(d = {dim}, {layout}, p = {p})")
                    worst = max(worst, err / tol)
    return f"rope.apply within {worst:.2g} of its float64 bound from the 60-digit matrix form, p up to 2**40"


@functools.lru_cache(maxsize=None)
def _rotate(dim: int, layout: str):
    """The layout's rotate, lambdified from its symbolic definition (not pemath's kernel)."""
    x = sp.Matrix(sp.symbols(f"x_0:{dim}", real=True))
    f = sp.lambdify([list(x)], A.rotate_features(x, layout).T, "numpy")
    return lambda v: np.asarray(f(list(v)), dtype=float).reshape(dim)


def _elementwise_numeric() -> str:

    xs = sp.Matrix(sp.symbols("x_0:8", real=True))
    sym_form = {L: sp.lambdify((list(xs), R.m, _b), A.elementwise(xs, R.m, L).T, "numpy") for L in R.LAYOUTS}

    def check(draw_seed: int, m: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        x = _rng_vec(draw_seed, dim)
        got = rope.apply(x, m, layout=layout, base=base)
        cos, sin = rope.cos_sin(m, dim, layout=layout, base=base)
        tol = phase_bound(abs(m), terms=2, scale=float(np.max(np.abs(x))))
        # eq. 34 with pemath's cos/sin tables and the symbolic rotate
        eq34 = x * cos + _rotate(dim, layout)(x) * sin
        assert np.max(np.abs(got - eq34)) <= tol, "apply() != x * cos + rotate(x) * sin"
        dense = rope.matrix(m, dim, layout=layout, base=base) @ x
        assert np.max(np.abs(got - dense)) <= tol * dim, "apply() != matrix(m) @ x"
        x8 = _rng_vec(draw_seed + 1, 8)
        want = np.asarray(sym_form[layout](list(x8), m, base), dtype=float).reshape(8)
        assert np.max(np.abs(rope.apply(x8, m, layout=layout, base=base) - want)) <= tol * 8, \
            "apply() != the symbolic elementwise form (d = 8)"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**5, 10**5), half=Ints(1, 64),
                   layout=Choice(R.LAYOUTS), base=_BASES)


register(
    Claim(
        id="rope.elementwise_form",
        name="The element-wise cos/sin form is the matrix form",
        title="pemath.rope's rotate kernel, its source run on symbolic arrays, returns x_a C_i - x_b S_i and "
              "x_b C_i + x_a S_i at pair i and passes the rest through, for every h: with C, S = cos, sin(m theta) "
              "that is R(m) x (eq. 34, its symbolic form decided for d = 2, 4, 8); checked, not proved: the NumPy "
              "and numba kernels equal it bitwise on a stated set of inputs, and each registered RoPE model's config "
              "gives its golden vectors through each form its spec has",
        kind="theorem",
        family="rope_forms",
        statement=lambda: sp.Eq(
            sp.MatAdd(sp.HadamardProduct(sp.MatrixSymbol("x", 4, 1),
                                         matrix_label("cos(m theta)", 4, 1, r"\cos(m\theta)")),
                      sp.HadamardProduct(matrix_label("rotate(x)", 4, 1, r"\operatorname{rotate}(x)"),
                                         matrix_label("sin(m theta)", 4, 1, r"\sin(m\theta)")), evaluate=False),
            sp.MatMul(sp.MatrixSymbol("R(m)", 4, 4), sp.MatrixSymbol("x", 4, 1)), evaluate=False),
        formal=_elementwise_formal,
        proof=_elementwise_proof,
        checks=(Check("numeric", _elementwise_numeric), Check("mpmath", _elementwise_mpmath),
                Check("kernels", _kernels.check_kernels), Check("models", _golden.check_models)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.4.2, eq. 34",
            "GPT-NeoX / HF transformers rotate_half (half layout); GPT-J rotate_every_two (interleaved)",
        ),
    )
)


# ------------------------------------------------------------------- rope.complex_form


def _complex_proof() -> Verdict:
    return Verdict(A.complex_form())


def _complex_formal() -> tuple:
    """Meta's complex form, with complex arithmetic as hypotheses: the parts of (a + i b)(c + i d) and of
    e^{i p} = cos p + i sin p (Euler) for every real value; the pair z = x_a + i x_b (view_as_complex) turned by
    freqs_cis = e^{i m theta} has the parts of R(m theta) (x_a, x_b). Written here from the definitions."""
    x_a, x_b, m, th = (("var", v, "real") for v in ("x_a", "x_b", "m", "theta"))
    a, b, c, d, p = (("var", f"{v}1", "real") for v in "abcdp")
    minus = ("num", -1, 1)
    hyps = (("all", (a, b, c, d), ("eq", ("app", "mul_re", a, b, c, d), ("add", ("mul", a, c), ("mul", minus, b, d)))),
            ("all", (a, b, c, d), ("eq", ("app", "mul_im", a, b, c, d), ("add", ("mul", a, d), ("mul", b, c)))),
            ("all", (p,), ("eq", ("app", "cis_re", p), ("cos", p))),
            ("all", (p,), ("eq", ("app", "cis_im", p), ("sin", p))))
    angle = ("mul", m, th)
    z_cis = (x_a, x_b, ("app", "cis_re", angle), ("app", "cis_im", angle))
    rotated = (  # R(angle) (x_a, x_b), in the checker's terms
        ("add", ("mul", x_a, ("cos", angle)), ("mul", minus, x_b, ("sin", angle))),
        ("add", ("mul", x_a, ("sin", angle)), ("mul", x_b, ("cos", angle))))
    concl = ("and", ("eq", ("app", "mul_re", *z_cis), rotated[0]), ("eq", ("app", "mul_im", *z_cis), rotated[1]))
    binders = (x_a, x_b, m, th) + tuple(("fun", f, k, "real") for f, k in (("mul_re", 4), ("mul_im", 4),
                                                                          ("cis_re", 1), ("cis_im", 1)))
    return ("forall", binders, hyps, concl)


def _complex_lambdified(module: str):
    xa, xb = sp.symbols("x_a x_b", real=True)
    expr = A.complex_form().result["rotated"].subs(R.THETA(R.I), _t)
    return sp.lambdify((xa, xb, R.m, _t), expr, module)


def _complex_numeric() -> str:

    rotated = _complex_lambdified("numpy")
    cis = sp.lambdify((R.m, _t), sp.exp(sp.I * R.m * _t), "numpy")

    def check(draw_seed: int, m: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        x = _rng_vec(draw_seed, dim)
        th = rope.inv_freq(dim, base=base)
        tol = phase_bound(abs(m), terms=2, scale=float(np.max(np.abs(x))))
        z = rope.to_complex(x, layout=layout)
        pairs = R.pair_indices(dim, layout)
        assert all(z[i] == complex(x[a], x[b]) for i, (a, b) in enumerate(pairs)), "to_complex is not x_a + i x_b"
        fc = rope.freqs_cis(m, dim, base=base)
        assert np.max(np.abs(fc - cis(m, th))) <= phase_bound(abs(m), terms=2), "freqs_cis != e^{i m theta}"
        zr = rope.apply_complex(z, m, base=base)
        want = np.array([rotated(x[a], x[b], m, th[i]) for i, (a, b) in enumerate(pairs)])
        assert np.max(np.abs(zr - want)) <= tol, "apply_complex != the symbolic z e^{i m theta}"
        real = rope.apply(x, m, layout=layout, base=base)
        assert np.max(np.abs(rope.from_complex(zr, layout=layout) - real)) <= tol, \
            "from_complex(apply_complex(to_complex(x))) != apply(x)"
        back = rope.apply_complex(zr, m, base=base, inverse=True)
        assert np.max(np.abs(rope.from_complex(back, layout=layout) - x)) <= 2 * tol, "inverse does not undo"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**5, 10**5), half=Ints(1, 64),
                   layout=Choice(R.LAYOUTS), base=_BASES)


def _complex_mpmath() -> str:

    rotated = _complex_lambdified("mpmath")
    dim = 8
    x = _rng_vec(5, dim)
    worst = 0.0
    with mpmath.workdps(60):
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        for m in (10**6, 10**12, 2**40):
            z = rope.apply_complex(rope.to_complex(x, layout="half"), m)
            tol = phase_bound(m, terms=2, scale=float(np.max(np.abs(x))))
            for i, (a, b) in enumerate(R.pair_indices(dim, "half")):
                xa, xb = mpmath.mpf(float(x[a])), mpmath.mpf(float(x[b]))
                polar = (xa + 1j * xb) * mpmath.expj(m * th[i])
                real = rotated(xa, xb, m, th[i])
                if abs(polar - real) > mpmath.mpf(10) ** -45:
                    raise CheckFailure(f"complex and real forms differ by {mpmath.nstr(abs(polar - real), 5)} at m={m}")
                err = abs(complex(z[i]) - complex(polar))
                if err > tol:
                    raise CheckFailure(f"apply_complex at m={m}, pair {i} off by {err:.3g} > {tol:.3g}")
                worst = max(worst, err / tol)
    return f"forms agree at 60 digits up to m = 2**40; float64 apply_complex() within {worst:.2g} of its bound"


register(
    Claim(
        id="rope.complex_form",
        name="Meta's complex form is the real form",
        title="(x_a + i x_b) e^{i m theta} is the rotated pair: Meta's complex form = the real form",
        kind="theorem",
        family="rope_forms",
        statement=lambda: sp.Eq(A.complex_form().result["rotated"],
                                label("(R(m) x)_a", r"(R(m)\,x)_a") + sp.I * label("(R(m) x)_b", r"(R(m)\,x)_b"), evaluate=False),
        formal=_complex_formal,
        proof=_complex_proof,
        checks=(Check("numeric", _complex_numeric), Check("mpmath", _complex_mpmath)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.2.1, eqs. 12-13",
            "Meta llama model.py: precompute_freqs_cis / apply_rotary_emb (view_as_complex)",
            "Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io (complex form f(x, m) = x e^{i m theta})",
        ),
    )
)


# ------------------------------------------------------------------- rope.layout_conjugacy


def _conjugacy_proof() -> Verdict:
    d = A.layout_symbolic_d()
    for dim in (2, 4, 8):
        d.steps.extend(A.layout_conjugacy(dim).steps)
    return Verdict(d)


def _perm_matrix():
    j, h = sp.symbols("j h", integer=True, nonnegative=True)
    sigma = sp.lambdify((j, h), A.half_index(j, h), "numpy")

    def P(dim: int) -> np.ndarray:
        cols = np.arange(dim)
        out = np.zeros((dim, dim))
        out[np.asarray(sigma(cols, dim // 2), dtype=int), cols] = 1.0
        return out

    return P


def _conjugacy_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(_mp.DPS):
        for dim in (8, 128):
            th = _mp.thetas(dim, 10000.0)
            x = _rng_vec(dim + 1, dim)
            px = rope.convert_layout(x, src="interleaved", dst="half")
            for p in (7, 10**6, 2**40):
                ri = _mp.rotate(x, p, th, "interleaved")
                want = rope.convert_layout(np.array([float(v) for v in ri]), src="interleaved", dst="half")
                got = rope.apply(px, p, layout="half")
                err = float(np.max(np.abs(got - want)))
                tol = phase_bound(p, terms=2, scale=float(np.max(np.abs(x))))
                if err > tol:
                    raise CheckFailure(f"R_half P x off P R_int x (60 digits) by {err:.3g} > {tol:.3g} (d = {dim}, p = {p})")
                worst = max(worst, err / tol)
    return f"R_half(p) P x = P R_int(p) x against 60 digits, within {worst:.2g} of the float64 bound, p up to 2**40"


def _conjugacy_numeric() -> str:

    P = _perm_matrix()

    def check(draw_seed: int, m: int, half: int, base: float) -> None:
        dim = 2 * half
        x = _rng_vec(draw_seed, dim)
        Pd = P(dim)
        assert np.array_equal(rope.convert_layout(x, src="interleaved", dst="half"), Pd @ x), \
            "convert_layout(interleaved -> half) is not P x"
        assert np.array_equal(rope.convert_layout(x, src="half", dst="interleaved"), Pd.T @ x), \
            "convert_layout(half -> interleaved) is not P^T x"
        Ri = rope.matrix(m, dim, layout="interleaved", base=base)
        assert np.array_equal(rope.matrix(m, dim, layout="half", base=base), Pd @ Ri @ Pd.T), \
            "matrix(half) != P matrix(interleaved) P^T"
        half_of_int = rope.convert_layout(rope.apply(x, m, layout="interleaved", base=base), src="interleaved",
                                          dst="half")
        int_then_half = rope.apply(Pd @ x, m, layout="half", base=base)
        assert np.array_equal(half_of_int, int_then_half), "P apply_int(x) != apply_half(P x) bit for bit"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**6, 10**6), half=Ints(1, 64), base=_BASES)


def _conjugacy_formal() -> tuple:
    """P sends interleaved feature j to sigma(j) = floor(j/2) + h (j mod 2), d = 2h: sigma(2i) = i and
    sigma(2i + 1) = i + h, so sigma is a permutation (sum_j F(sigma(j)) over the pairs is the half partition,
    every F, every h); tau (2k below h, 2(k - h) + 1 from h on) undoes it on every pair i < h; and
    R_half(m) P x at half pair i is B(m theta_i) (x_2i, x_2i+1), R_interleaved(m) x at interleaved pair i."""
    i, t = sp.Symbol("i", integer=True, nonnegative=True), sp.Symbol("t", integer=True, nonnegative=True)
    h = sp.Symbol("h", integer=True, positive=True)
    sigma = lambda j, hh: sp.floor(j / sp.Integer(2)) + hh * sp.Mod(j, 2)  # noqa: E731
    tau = lambda r, hh: sp.Piecewise((2 * r, r < hh), (2 * (r - hh) + 1, True))  # noqa: E731
    Fn, x = sp.Function("F", real=True), sp.IndexedBase("x", real=True)
    hi = i + 1 + t  # any h > i
    m, th = sp.Symbol("m", real=True), sp.Function("theta", positive=True)(i)
    with sp.evaluate(False):
        rels = [sp.Eq(sigma(2 * i, h), i), sp.Eq(sigma(2 * i + 1, h), i + h),
                sp.Eq(sp.Sum(Fn(sigma(2 * i, h)) + Fn(sigma(2 * i + 1, h)), (i, 0, h - 1)),
                      sp.Sum(Fn(i) + Fn(i + h), (i, 0, h - 1))),
                sp.Eq(tau(sigma(2 * i, hi), hi), 2 * i), sp.Eq(tau(sigma(2 * i + 1, hi), hi), 2 * i + 1)]
        half = F.rotate(m * th, (x[tau(i, hi)], x[tau(i + hi, hi)]))
        inter = F.rotate(m * th, (x[2 * i], x[2 * i + 1]))
        rels += [sp.Eq(half[0], inter[0]), sp.Eq(half[1], inter[1])]
    return bridge.formal(rels)


register(
    Claim(
        id="rope.layout_conjugacy",
        name="The half and interleaved layouts differ by a fixed permutation",
        title="R_half(m) = P R_interleaved(m) P^T: the two layouts differ by a fixed permutation, every even d",
        kind="theorem",
        family="rope_forms",
        statement=lambda: sp.Eq(matrix_label("R_half(m)", 4, 4, r"R_{\mathrm{half}}(m)"),
                                sp.MatMul(R.permutation(4),
                                          matrix_label("R_interleaved(m)", 4, 4, r"R_{\mathrm{interleaved}}(m)"),
                                          R.permutation(4).T, evaluate=False), evaluate=False),
        formal=_conjugacy_formal,
        proof=_conjugacy_proof,
        checks=(Check("numeric", _conjugacy_numeric), Check("mpmath", _conjugacy_mpmath)),
        references=(
            "Su et al. 2021 (RoFormer), section 3.2.2, eq. 15 (interleaved pairs)",
            "GPT-NeoX / HF transformers rotate_half (half pairs)",
        ),
    )
)


# ------------------------------------------------------------------- rope.weight_permutation


def _weights_proof() -> Verdict:
    d = A.weight_permutation_symbolic_d()
    d.steps.extend(A.weight_permutation(4).steps)
    d.steps.extend(A.weight_permutation(8).steps)
    return Verdict(d)


def _weights_mpmath() -> str:

    worst = 0.0
    rng = np.random.default_rng(3)
    with mpmath.workdps(_mp.DPS):
        for head_dim, n_heads, n_kv in ((8, 4, 2), (128, 8, 1)):
            wq = rng.standard_normal((n_heads * head_dim, 16))
            wk = rng.standard_normal((n_kv * head_dim, 16))
            x, y = rng.standard_normal((2, 16))
            wq_hf, wk_hf = rope.permute_qk_weights(wq, wk, n_heads=n_heads, n_kv_heads=n_kv)
            th = _mp.thetas(head_dim, 10000.0)
            q, k = (wq[:head_dim] @ x), (wk[:head_dim] @ y)
            q_hf, k_hf = (wq_hf[:head_dim] @ x), (wk_hf[:head_dim] @ y)
            for m, n in ((3, 10**6), (2**40, 2**40 - 5)):
                want = _mp.dot(_mp.rotate(q, m, th, "interleaved"), _mp.rotate(k, n, th, "interleaved"))
                got = rope.apply(q_hf, m, layout="half") @ rope.apply(k_hf, n, layout="half")
                tol = phase_bound(max(m, n), terms=2 * head_dim,
                                  scale=float(np.max(np.abs(q)) * np.max(np.abs(k)))) + 4 * head_dim * 1.2e-16 * float(
                    np.abs(q) @ np.abs(k))
                err = abs(got - float(want))
                if err > tol:
                    raise CheckFailure(f"HF score off Meta's 60-digit score by {err:.3g} > {tol:.3g} "
                                       f"(head_dim {head_dim}, m = {m}, n = {n})")
                worst = max(worst, err / tol)
    return f"HF's permuted half-layout scores against Meta's at 60 digits, within {worst:.2g} of the float64 bound"


def _weights_numeric() -> str:

    P = _perm_matrix()

    def check(draw_seed: int, m: int, n: int, half: int, n_kv: int, group: int, in_features: int) -> None:
        head_dim, n_heads = 2 * half, n_kv * group
        rng = np.random.default_rng(draw_seed)
        wq = rng.standard_normal((n_heads * head_dim, in_features))
        wk = rng.standard_normal((n_kv * head_dim, in_features))
        x, y = rng.standard_normal((2, in_features))
        wq_hf, wk_hf = rope.permute_qk_weights(wq, wk, n_heads=n_heads, n_kv_heads=n_kv)
        Pd = P(head_dim)
        for h in range(n_heads):
            rows = slice(h * head_dim, (h + 1) * head_dim)
            assert np.array_equal(wq_hf[rows], Pd @ wq[rows]), f"head {h}: W_hf is not P W_meta"
        back = rope.permute_qk_weight(wq_hf, n_heads=n_heads, src="half", dst="interleaved")
        assert np.array_equal(back, wq), "the inverse permutation does not restore W_meta"
        q_meta = (wq @ x).reshape(n_heads, head_dim)
        k_meta = (wk @ y).reshape(n_kv, head_dim)
        q_hf = (wq_hf @ x).reshape(n_heads, head_dim)
        k_hf = (wk_hf @ y).reshape(n_kv, head_dim)
        s_meta = np.einsum("hd,hd->h", rope.apply(q_meta, m, layout="interleaved"),
                           np.repeat(rope.apply(k_meta, n, layout="interleaved"), group, axis=0))
        s_hf = np.einsum("hd,hd->h", rope.apply(q_hf, m, layout="half"),
                         np.repeat(rope.apply(k_hf, n, layout="half"), group, axis=0))
        scale = float(np.max(np.abs(q_meta)) * np.max(np.abs(k_meta)))
        tol = phase_bound(abs(m) + abs(n), terms=2 * head_dim, scale=scale)
        assert np.max(np.abs(s_meta - s_hf)) <= tol, f"scores differ by {np.max(np.abs(s_meta - s_hf)):.3g}"

    return for_all(check, examples=25, draw_seed=Ints(0, 2**31), m=Ints(0, 10**5), n=Ints(0, 10**5), half=Ints(1, 32),
                   n_kv=Ints(1, 4), group=Ints(1, 4), in_features=Ints(1, 16))


def _weights_formal() -> tuple:
    """HF's converter permutes each head's rows: the half pair i of q_hf = P q (features i, i + h) holds q at
    tau(i) = 2i and tau(i + h) = 2i + 1 (tau = sigma^-1: r -> 2r below h, 2(r - h) + 1 from h on; every h > i,
    h = i + 1 + t); so over every even d the score of the permuted q, k under half-layout RoPE is the score of q,
    k under interleaved RoPE."""
    i, t = sp.Symbol("i", integer=True, nonnegative=True), sp.Symbol("t", integer=True, nonnegative=True)
    h = i + 1 + t
    tau = lambda r: sp.Piecewise((2 * r, r < h), (2 * (r - h) + 1, True))  # noqa: E731
    q = sp.IndexedBase("q", real=True)
    with sp.evaluate(False):
        rels = [sp.Eq(q[tau(i)], q[2 * i]), sp.Eq(q[tau(i + h)], q[2 * i + 1])]
    # the half pair i of P q is (q_2i, q_2i+1): the half-layout score of (P q, P k) is the interleaved one of (q, k)
    hf = F.over_pairs(lambda f: F.dot(F.rotate(F.N * F.THETA(F.I), (F.K[2 * F.I], F.K[2 * F.I + 1])),
                                      F.rotate(F.M * F.THETA(F.I), (F.Q[2 * F.I], F.Q[2 * F.I + 1]))), "half")
    rels.append(sp.Eq(hf, F.rope_score("interleaved", partial=False), evaluate=False))
    return bridge.formal(rels)


register(
    Claim(
        id="rope.weight_permutation",
        name="Permuting Meta's weights into HF's layout keeps every rotated pair",
        title="Meta -> HF: W_hf = P W_meta per head sends Meta's pair (2i, 2i+1) to HF's (i, i + h), every even "
              "head dim (so the q.k scores agree: a reading)",
        kind="theorem",
        family="rope_forms",
        statement=lambda: sp.Eq(
            label("(R_half(m) P W x)^T (R_half(n) P W y)",
                  r"(R_{\mathrm{half}}(m)\,P W x)^{T} (R_{\mathrm{half}}(n)\,P W y)"),
            label("(R_int(m) W x)^T (R_int(n) W y)",
                  r"(R_{\mathrm{interleaved}}(m)\,W x)^{T} (R_{\mathrm{interleaved}}(n)\,W y)"), evaluate=False),
        formal=_weights_formal,
        proof=_weights_proof,
        checks=(Check("numeric", _weights_numeric), Check("mpmath", _weights_mpmath)),
        references=(
            "HF transformers convert_llama_weights_to_hf.py: permute() of wq and wk",
            "Meta llama model.py (complex form, interleaved pairs)",
        ),
    )
)
