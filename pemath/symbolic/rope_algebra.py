r"""RoPE's algebra: the rotations form a group, its forms agree, and its calculus.

Every function returns a :class:`~pemath.symbolic.Derivation` whose decided steps
reduce to exactly zero, or raises :class:`~pemath.symbolic.ProofFailure`. The parts a
mistaken implementation would change (the 2x2 block, the frequencies, the layout's
``rotate``, the permutation, the sign of the inverse, the vector-Jacobian product) are
module-level functions and constants; the mutation tests (``tests/mutation``) patch them with
wrong ones and watch the derivations fail.

Conventions (as in :mod:`pemath.symbolic.rope`): the block is
:math:`B(x) = \begin{pmatrix}\cos x & -\sin x\\ \sin x & \cos x\end{pmatrix}`, pair ``i`` of
the layout (``(2i, 2i+1)`` interleaved, ``(i, i + d/2)`` half) is rotated by
:math:`B(m\theta_i)`, and :math:`P` (:func:`pemath.symbolic.rope.permutation`) takes the
interleaved layout to the half one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

from ..rope import _core as _rope_core
from ..rope import layout as _rope_layout
from ..rope.layout import convert_layout
from . import pairs, shipped
from ._decide import Derivation, ProofFailure, reduce_to_zero, unevaluated
from .notation import label
from .rope import H, I, LAYOUTS, THETA, TRIG, block, frequency, m, n, permutation, rotation

__all__ = [
    "LAYOUTS",
    "c",
    "ALPHA",
    "BETA",
    "rotate_features",
    "feature_table",
    "elementwise",
    "half_index",
    "group_block",
    "group_symbolic_d",
    "group_dense",
    "elementwise_form",
    "elementwise_symbolic_d",
    "weight_permutation_symbolic_d",
    "hf_pair",
    "complex_form",
    "layout_symbolic_d",
    "layout_conjugacy",
    "weight_permutation",
    "translation_symbolic_d",
    "translation_dense",
    "backward_symbolic_d",
    "backward_dense",
]

#: The common shift of every position (translation invariance).
c = sp.Symbol("c", real=True)
#: The two angles of the one-block group law.
ALPHA, BETA = sp.symbols("alpha beta", real=True)

Block = Callable[[sp.Expr], sp.Matrix]
Freq = Callable[[int], sp.Expr]


def _reduced(expr: sp.Expr) -> sp.Expr:
    """``expr`` after the trigonometric rewrites: exactly 0 when it is identically 0."""
    return reduce_to_zero(expr, methods=TRIG)[2]


def _vec(name: str, size: int) -> sp.Matrix:
    return sp.Matrix(sp.symbols(f"{name}_0:{size}", real=True))


# --------------------------------------------------------------------------- building blocks


def rotate_features(x: sp.Matrix, layout: str) -> sp.Matrix:
    """The layout's ``rotate``, written from its published definition.

    interleaved: ``(-x1, x0, -x3, x2, ...)`` (GPT-J's ``rotate_every_two``);
    half: ``(-x[h:], x[:h])`` (GPT-NeoX / HF's ``rotate_half``).
    """
    d = len(x)
    h = d // 2
    if layout == "half":
        return sp.Matrix([-x[j + h] for j in range(h)] + [x[j] for j in range(h)])
    out: list[sp.Expr] = []
    for j in range(h):
        out += [-x[2 * j + 1], x[2 * j]]
    return sp.Matrix(out)


def feature_table(f: Callable[[sp.Expr], sp.Expr], pos: sp.Expr, d: int, layout: str,
                  freq: Freq | None = None) -> sp.Matrix:
    """``f(pos theta_i)`` laid out per feature: ``[f_0, f_0, f_1, f_1, ...]`` interleaved,
    ``[f_0 .. f_{h-1}, f_0 .. f_{h-1}]`` half (HF's ``cat((freqs, freqs))``)."""
    freq = freq or (lambda i: frequency(i, d))
    vals = [f(pos * freq(i)) for i in range(d // 2)]
    if layout == "half":
        return sp.Matrix(vals + vals)
    return sp.Matrix([v for v in vals for _ in range(2)])


def elementwise(x: sp.Matrix, pos: sp.Expr, layout: str, *, freq: Freq | None = None) -> sp.Matrix:
    """RoFormer eq. 34: ``x * cos(pos theta) + rotate(x) * sin(pos theta)``, elementwise."""
    d = len(x)
    cos = feature_table(sp.cos, pos, d, layout, freq)
    sin = feature_table(sp.sin, pos, d, layout, freq)
    return x.multiply_elementwise(cos) + rotate_features(x, layout).multiply_elementwise(sin)


def _tau(k: sp.Expr, h: sp.Expr) -> sp.Expr:
    """sigma^-1: half feature k of P x holds interleaved feature tau(k) = 2k (k < h), 2(k - h) + 1 (k >= h)."""
    return sp.Piecewise((2 * k, k < h), (2 * (k - h) + 1, True))


def half_index(j: sp.Expr, h: sp.Expr) -> sp.Expr:
    """Where :math:`P` sends interleaved feature ``j``: ``floor(j/2) + h (j mod 2)``."""
    return sp.floor(j / sp.Integer(2)) + h * sp.Mod(j, 2)


# --------------------------------------------------------------------------- the group


def group_block() -> Derivation:
    """One 2x2 block: B(a)B(b) = B(a+b), B(a)^T = B(-a), det B = 1, |B(a)x| = |x|."""
    d = Derivation("RoPE rotations form a group, one block")
    a, b = ALPHA, BETA
    x = _vec("x", 2)
    d.define("The block of a pair rotated by the angle alpha:", sp.Eq(label("B(alpha)", r"B(\alpha)"), block(a), evaluate=False))
    d.equal("rotating by alpha then by beta is rotating by alpha + beta: B(alpha) B(beta) = B(alpha + beta)",
            block(a) * block(b), block(a + b), methods=TRIG)
    d.equal("the transpose is the rotation back: B(alpha)^T = B(-alpha)",
        unevaluated(lambda: block(a).T), unevaluated(block, -a), methods=TRIG)
    d.equal("so B(alpha)^T B(alpha) = B(-alpha) B(alpha) = B(0) = I: the block is orthogonal",
            block(a).T * block(a), sp.eye(2), methods=TRIG)
    d.equal("its determinant is cos^2 alpha + sin^2 alpha = 1", block(a).det(), sp.S.One, methods=TRIG)
    d.equal("hence it preserves the norm: |B(alpha) x|^2 = |x|^2",
            (block(a) * x).dot(block(a) * x), x.dot(x), methods=TRIG)
    d.result["product"] = block(a + b)
    return d


def _pair(x: sp.IndexedBase, layout: str) -> sp.Matrix:
    """Pair i of the vector ``x`` in ``layout``, as a column (its features ``(a_i, b_i)``)."""
    a, b = pairs.features(I, layout)
    return sp.Matrix([x[a], x[b]])


def _fill(expr: sp.Expr, x: sp.IndexedBase, layout: str, value: sp.Matrix) -> sp.Expr:
    """``expr`` with pair i of ``x`` replaced by ``value`` (a definition unfolded)."""
    a, b = pairs.features(I, layout)
    return expr.xreplace({x[a]: value[0], x[b]: value[1]})


def product_angle(m_: sp.Expr, n_: sp.Expr) -> sp.Expr:
    """The angle of pair i of R(m) R(n) in the group law: (m + n) theta_i."""
    return (m_ + n_) * THETA(I)


def group_symbolic_d(*, layout: str = "interleaved") -> Derivation:
    """The group laws for every even d = 2h in ``layout``, from the pair partition.

    The claimed product turns pair ``i`` by :func:`product_angle` (the mutation tests patch it, and
    :func:`~pemath.symbolic.rope.block`). Each law is decided as
    ``<w, left> = <w, right>`` for every vector w, the inner product summed over the layout's pairs
    (:mod:`pemath.symbolic.pairs`, induction on h) and the pair summand decided for a symbolic pair
    index i and any frequencies, so the cost does not depend on d.
    """
    d = Derivation(f"RoPE rotations form a group, every even d = 2h, {layout} layout")
    th = THETA(I)
    angle = product_angle(m, n)
    x, w = sp.IndexedBase("x", real=True), sp.IndexedBase("w", real=True)
    xi, wi = _pair(x, layout), _pair(w, layout)
    d.define(f"R(m) turns pair i of the {layout} layout by B(m theta_i), theta_i any positive frequencies: "
             "(R(m) x)_i = B(m theta_i) x_i", sp.Eq(sp.Symbol("(R(m) x)_i"), block(m * th) * xi, evaluate=False))
    pairs.weak_equality(d, "R(m) R(n) = R(m + n): pair i of R(m) (R(n) x) is B(m theta_i) B(n theta_i) x_i, which "
                        "equals B((m + n) theta_i) x_i, so <w, R(m) R(n) x - R(m + n) x> = 0 for every w",
                        layout, w, tuple(block(m * th) * block(n * th) * xi), tuple(block(angle) * xi))
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    inner = pairs.inner_over_pairs(d, layout, u, v)
    d.equal("R(m)^T = R(-m): <w, R(m) x> = <R(-m) w, x> for every w, x (the defining property of the transpose)",
            _fill(_fill(inner, u, layout, wi), v, layout, block(m * th) * xi),
            _fill(_fill(inner, u, layout, block(-m * th) * wi), v, layout, xi), methods=("sums",))
    pairs.weak_equality(d, "R(-m) R(m) = R(0) = I: the transpose is the inverse", layout, w,
                        tuple(block(-m * th) * block(m * th) * xi), tuple(xi))
    d.equal("|R(m) x|^2 = |x|^2: the rotation keeps every norm",
            _fill(_fill(inner, u, layout, block(m * th) * xi), v, layout, block(m * th) * xi),
            _fill(_fill(inner, u, layout, xi), v, layout, xi), methods=("sums",))
    d.remark("det R(m) = 1 is decided on the dense matrices (d = 2, 4, 8, both layouts); for every d it "
             "follows from the block structure, which is not re-derived here.")
    return d


def group_dense(dim: int, layout: str) -> Derivation:
    """The group laws on the dense d x d matrix of ``layout`` (small d, every entry expanded)."""
    d = Derivation(f"RoPE rotations form a group, d = {dim}, {layout}")
    R = lambda p: rotation(p, dim, layout)  # noqa: E731
    x = _vec("x", dim)
    Rm = R(m)
    d.equal(f"d = {dim}, {layout}: R(m) R(n) = R(m + n)", Rm * R(n), R(m + n), methods=TRIG)
    d.equal(f"d = {dim}, {layout}: R(m)^T = R(-m)", Rm.T, unevaluated(R, -m), methods=TRIG)
    d.equal(f"d = {dim}, {layout}: det R(m) = 1", Rm.det(method="berkowitz"), sp.S.One, methods=TRIG)
    d.equal(f"d = {dim}, {layout}: |R(m) x|^2 = |x|^2", (Rm * x).dot(Rm * x), x.dot(x), methods=TRIG)
    return d


# --------------------------------------------------------------------------- forms


def table_frequency(i: int, dim: int) -> sp.Expr:
    """The frequency the cos/sin tables of the elementwise form hold for pair i: b^(-2i/d)."""
    return frequency(i, dim)


def elementwise_form(dim: int, layout: str) -> Derivation:
    """RoFormer eq. 34 equals the block-diagonal matrix form: x*cos + rotate(x)*sin = R(m) x.

    The tables hold :func:`table_frequency` (the matrix keeps b^(-2i/d)); the mutation tests patch it,
    :func:`rotate_features` and the block.
    """
    d = Derivation(f"RoPE elementwise form = matrix form, d = {dim}, {layout}")
    x = _vec("x", dim)
    lhs = unevaluated(lambda: elementwise(x, m, layout, freq=lambda i: table_frequency(i, dim)))
    rhs = rotation(m, dim, layout) * x
    d.define(f"rotate(x) in the {layout} layout:", rotate_features(x, layout).T)
    eye = np.eye(dim)
    shipped = np.asarray(_rope_core.rotate(eye, np.zeros((dim, dim // 2)), np.ones((dim, dim // 2)), layout, dim, np,
                                           np.float64))  # row k: the shipped rotate of e_k (cos 0, sin 1)
    rot = sp.ImmutableMatrix(sp.Matrix.hstack(*[rotate_features(sp.eye(dim)[:, k], layout) for k in range(dim)]))
    r_, c_, v_ = sp.symbols("r c v", integer=True)
    d.enumerated(f"d = {dim}, {layout}: pemath.rope's rotate (its kernel with cos = 0, sin = 1) is rotate_features, "
                 "entry by entry on the basis vectors", (r_, c_, v_),
                 [(j, k, int(shipped[k, j])) for j in range(dim) for k in range(dim)],
                 sp.Eq(v_, rot[r_, c_], evaluate=False))
    d.equal(f"d = {dim}, {layout}: x * cos(m theta) + rotate(x) * sin(m theta) = R(m) x", lhs, rhs,
            methods=("expand",))
    d.result["R"] = rotation(m, dim, layout)
    return d


def elementwise_symbolic_d(layout: str = "interleaved") -> Derivation:
    """RoFormer eq. 34 equals the rotation for every even d = 2h: at pair i the cos/sin tables hold
    cos/sin(m theta_i) at both features (interleaved: each frequency repeated; half: ``cat(freqs, freqs)``),
    and ``rotate`` sends (x_a, x_b) to (-x_b, x_a) (``rotate_every_two`` / ``rotate_half``).

    Bound to the shipped kernel for every h: :func:`pemath.symbolic.shipped.kernel_rotate` runs ``pemath.rope``'s
    ``rotate`` on symbolic arrays and decides its entries at pair i; the enumeration over d = 2..64 checks the
    same on NumPy arrays (the semantics the symbolic arrays model)."""
    d = Derivation(f"RoPE elementwise form = matrix form, every even d = 2h, {layout} layout")
    th = THETA(I)
    x, w = sp.IndexedBase("x", real=True), sp.IndexedBase("w", real=True)
    xa, xb = _pair(x, layout)
    a, b = pairs.features(I, layout)
    name = "rotate_every_two" if layout == "interleaved" else "rotate_half"
    table = "repeated per pair" if layout == "interleaved" else "cat(freqs, freqs)"
    d.define(f"at pair i = ({a}, {b}): the tables ({table}) hold cos(m theta_i) and sin(m theta_i) at both "
             f"features, and {name}(x) holds (-x_b, x_a)",
             sp.Eq(sp.Matrix([label(f"{t}_{p}", rf"\mathrm{{{t}}}_{p}") for t in ("cos", "rot") for p in "ab"]),
                   sp.Matrix([sp.cos(m * th), sp.cos(m * th), -xb, xa]), evaluate=False))
    h_, i_, A, B, ra, rb = sp.symbols("h i A B r_a r_b", integer=True)
    fa, fb = pairs.features(i_, layout, h_)
    rows = []
    for hh in range(1, 33):  # d = 2..64: the shipped kernel's pairs and its rotate, against the features formula
        dim = 2 * hh
        xs = np.arange(1, dim + 1, dtype=np.float64)[None, :]  # x_j = j + 1
        s1, s2 = _rope_core.split_pairs(np.arange(dim), layout, dim)
        out = np.asarray(_rope_core.rotate(xs, np.zeros((1, hh)), np.ones((1, hh)), layout, dim, np, np.float64))[0]
        rows += [(hh, k, int(s1[k]), int(s2[k]), int(out[int(s1[k])]), int(out[int(s2[k])])) for k in range(hh)]
    d.enumerated(f"pemath.rope's kernel, for every d = 2..64: pair i is the features ({a}, {b}), and its rotate (cos 0, "
                 "sin 1) holds (-x_b, x_a) there (x_j = j + 1)", (h_, i_, A, B, ra, rb), rows,
                 sp.And(sp.Eq(A, fa, evaluate=False), sp.Eq(B, fb, evaluate=False),
                        sp.Eq(ra, -(B + 1), evaluate=False), sp.Eq(rb, A + 1, evaluate=False)))
    cos_i, sin_i = sp.IndexedBase("C", real=True), sp.IndexedBase("S", real=True)  # the kernel's cos/sin tables
    kernel = shipped.kernel_rotate(d, layout, x, cos_i, sin_i)
    left = tuple(v.xreplace({cos_i[I]: sp.cos(m * th), sin_i[I]: sp.sin(m * th)}) for v in kernel)
    pairs.weak_equality(d, f"x * cos(m theta) + {name}(x) * sin(m theta) = R(m) x for every d, as pemath.rope's "
                        "rotate computes it with the tables C_i = cos(m theta_i), S_i = sin(m theta_i): the two "
                        "agree at pair i, so <w, left - right> = 0 for every w", layout, w, left,
                        tuple(block(m * th) * sp.Matrix([xa, xb])))
    return d


#: The sign of the exponent of Meta's ``freqs_cis = e^{+i m theta}``.
COMPLEX_SIGN = 1


def complex_pair(xa: sp.Expr, xb: sp.Expr) -> sp.Expr:
    """Meta's ``view_as_complex`` reading of a pair: x_a + i x_b."""
    return xa + sp.I * xb


def complex_form() -> Derivation:
    """(x_a + i x_b) e^{i m theta_i} is the pair B(m theta_i)(x_a, x_b) read as a + i b.

    The exponent's sign is :data:`COMPLEX_SIGN` and the reading :func:`complex_pair` (the mutation tests
    flip one or swap the other).
    """
    d = Derivation("RoPE complex form = real form")
    th = THETA(I)
    xa, xb = sp.symbols("x_a x_b", real=True)
    z = complex_pair(xa, xb)
    lhs = z * sp.exp(COMPLEX_SIGN * sp.I * m * th)
    rot = block(m * th) * sp.Matrix([xa, xb])
    rhs = rot[0] + sp.I * rot[1]
    d.define("Pair i of either layout, (x_a, x_b), is the complex number z_i = x_a + i x_b "
          "(Meta's view_as_complex); Meta rotates it by freqs_cis = e^{i m theta_i}:", sp.Eq(sp.Symbol("z_i"), z))
    d.equal("z_i e^{i m theta_i} = (R(m) x)_a + i (R(m) x)_b, decided by Euler's formula "
            "(rewrite in exponentials, expand the complex parts)", lhs, rhs, methods=("rewrite(exp)",))
    d.equal("so the real part is x_a cos - x_b sin, the imaginary part x_a sin + x_b cos",
            sp.Matrix([sp.re(lhs, evaluate=False), sp.im(lhs, evaluate=False)]), rot,
            methods=("expand", "rewrite(exp)"))
    d.result["rotated"] = lhs
    _complex_checked(d, xa, xb)
    return d


def _complex_checked(d: Derivation, xa: sp.Symbol, xb: sp.Symbol) -> None:
    """The same identity decided by pemath.kernel alone, with the complex operations as stated hypotheses: the
    product's parts (a + i b)(c + i d) = (ac - bd) + i (ad + bc) and e^{i p} = cos p + i sin p (Euler), each
    for every real value; the pair read by :func:`complex_pair`, the exponent's sign :data:`COMPLEX_SIGN`."""
    z = complex_pair(xa, xb)
    kv = {xa: ("var", "x_a", "real"), xb: ("var", "x_b", "real")}
    parts = [z.as_real_imag()[0], z.as_real_imag()[1]]
    if not all(p in kv for p in parts) or COMPLEX_SIGN not in (1, -1):
        raise ProofFailure(f"the pair reads as {sp.sstr(z)} and the exponent's sign is {COMPLEX_SIGN}: not a complex "
                           "number x_a + i x_b or x_b + i x_a turned by e^{+-i m theta}")
    re, im = kv[parts[0]], kv[parts[1]]
    a1, b1, c1, d1, p1 = (("var", f"{v}1", "real") for v in "abcdp")
    neg = ("num", -1, 1)
    phase = ("mul", ("var", "m", "real"), ("var", "theta", "real"))
    turned = phase if COMPLEX_SIGN == 1 else ("mul", neg, phase)
    hyps = (("all", (a1, b1, c1, d1), ("eq", ("app", "mul_re", a1, b1, c1, d1),
                                       ("add", ("mul", a1, c1), ("mul", neg, b1, d1)))),
            ("all", (a1, b1, c1, d1), ("eq", ("app", "mul_im", a1, b1, c1, d1), ("add", ("mul", a1, d1), ("mul", b1, c1)))),
            ("all", (p1,), ("eq", ("app", "cis_re", p1), ("cos", p1))),
            ("all", (p1,), ("eq", ("app", "cis_im", p1), ("sin", p1))))
    args = (re, im, ("app", "cis_re", turned), ("app", "cis_im", turned))
    c, s = ("cos", phase), ("sin", phase)
    concl = ("and", ("eq", ("app", "mul_re", *args), ("add", ("mul", ("var", "x_a", "real"), c),
                                                         ("mul", neg, ("var", "x_b", "real"), s))),
             ("eq", ("app", "mul_im", *args), ("add", ("mul", ("var", "x_a", "real"), s),
                                                  ("mul", ("var", "x_b", "real"), c))))
    binders = tuple(("var", v, "real") for v in ("x_a", "x_b", "m", "theta")) + tuple(
        ("fun", f, k, "real") for f, k in (("mul_re", 4), ("mul_im", 4), ("cis_re", 1), ("cis_im", 1)))
    at = {"mul": lambda i: ("hyp_at", i, tuple(zip(("a1", "b1", "c1", "d1"), args))),
          "cis": lambda i: ("hyp_at", i, (("p1", turned),))}
    cert = ("and", (("ideal", ((at["mul"](0), ("num", 1, 1)), (at["cis"](2), re), (at["cis"](3), ("mul", neg, im)))),
                    ("ideal", ((at["mul"](1), ("num", 1, 1)), (at["cis"](3), re), (at["cis"](2), im)))))
    d.checked("With the complex operations as hypotheses (the product's parts; e^{i p} = cos p + i sin p, Euler), "
              "pemath.kernel alone: the parts of z_i e^{i m theta_i} are the rotated pair", ("forall", binders, hyps,
                                                                                           concl), cert)


def layout_symbolic_d() -> Derivation:
    """For every even d = 2h: P permutes the features and R_half(m) P = P R_interleaved(m).

    P sends interleaved feature j to :func:`half_index` (the mutation tests patch it with wrong maps).
    """
    d = Derivation("RoPE half layout = P (interleaved) P^T, every even d = 2h")
    j = sp.Symbol("j", integer=True, nonnegative=True)
    d.define("P sends interleaved feature j to half feature sigma(j) = floor(j/2) + h (j mod 2), d = 2h: "
             "(P x)_{sigma(j)} = x_j", sp.Eq(sp.Function("sigma")(j), half_index(j, H)))
    d.equal("sigma(2i) = i and sigma(2i + 1) = i + h for a symbolic pair index i: sigma sends interleaved pair i "
            "onto half pair i", unevaluated(lambda: sp.Matrix([half_index(2 * I, H), half_index(2 * I + 1, H)])),
            sp.Matrix([I, I + H]))
    inter = pairs.partition(d, "interleaved")
    half = pairs.partition(d, "half")
    d.equal("so sigma is a permutation of 0..2h-1: sum_j F(sigma(j)) = sum_j F(j) for every F (the interleaved "
            "partition read through sigma is the half partition)",
            unevaluated(lambda: inter.rhs.replace(pairs.F, sp.Lambda(pairs.J, pairs.F(half_index(pairs.J, H))))),
            half.rhs, methods=("sums",))
    x = sp.IndexedBase("x", real=True)
    th = THETA(I)
    t_ = sp.Symbol("t", integer=True, nonnegative=True)
    h_i = I + 1 + t_  # any h > i: pair i is one of the h pairs

    d.define("y = P x holds at half feature k the interleaved feature tau(k) = 2k (k < h), 2(k - h) + 1 (k >= h)",
             _tau(sp.Symbol("k", integer=True, nonnegative=True), H))
    d.equal("tau undoes sigma on every pair i < h (h = i + 1 + t): tau(sigma(2i)) = 2i, tau(sigma(2i + 1)) = 2i + 1",
            unevaluated(lambda: sp.Matrix([_tau(half_index(2 * I, h_i), h_i), _tau(half_index(2 * I + 1, h_i), h_i)])),
            sp.Matrix([2 * I, 2 * I + 1]))
    a, b = pairs.features(I, "half")
    d.equal("R_half(m) P x at half pair i, the features (i, i + h) of y = P x, is B(m theta_i) (x_tau(i), x_tau(i + h)) "
            "= B(m theta_i) (x_2i, x_2i+1): R_interleaved(m) x at interleaved pair i, which P moves to half pair i "
            "(sigma, above). So R_half(m) P = P R_interleaved(m), R_half(m) = P R_interleaved(m) P^T, for every d",
            unevaluated(lambda: block(m * th) * sp.Matrix([x[_tau(a.subs(H, h_i), h_i)], x[_tau(b.subs(H, h_i), h_i)]])),
            block(m * th) * sp.Matrix(_pair(x, "interleaved")), methods=("expand",))
    return d


def layout_permutation(dim: int) -> sp.Matrix:
    """P, interleaved to half, as :func:`~pemath.symbolic.rope.permutation` builds it."""
    return permutation(dim)


def layout_conjugacy(dim: int) -> Derivation:
    """R_half(m) = P R_interleaved(m) P^T with P = :func:`pemath.symbolic.rope.permutation`, d = ``dim``.

    P is :func:`layout_permutation` (the mutation tests patch it with P^T, the other direction).
    """
    d = Derivation(f"RoPE half layout = P (interleaved) P^T, d = {dim}")
    P = layout_permutation(dim)
    d.define(f"P for d = {dim}: (P x)[i] = x[2i], (P x)[i + h] = x[2i + 1]", P)
    d.equal(f"d = {dim}: P P^T = I (P is a permutation)", sp.MatMul(P, P.T), sp.eye(dim), methods=("expand",))
    d.equal(f"d = {dim}: R_half(m) = P R_interleaved(m) P^T",
            rotation(m, dim, "half"), sp.MatMul(P, rotation(m, dim, "interleaved"), P.T),
            methods=("expand",))
    shipped = np.asarray(convert_layout(np.eye(dim), src="interleaved", dst="half"))  # row j: P e_j
    r_, c_, v_ = sp.symbols("r c v", integer=True, nonnegative=True)
    at_sigma = sp.Piecewise((1, sp.Eq(r_, half_index(c_, dim // 2))), (0, True))
    d.enumerated(f"d = {dim}: P, and pemath.rope.convert_layout applied to each basis vector, have their 1s exactly "
                 "at (sigma(j), j)", (r_, c_, v_),
                 [(r, col, int(shipped[col, r])) for r in range(dim) for col in range(dim)],
                 sp.And(sp.Eq(sp.ImmutableMatrix(P)[r_, c_], at_sigma, evaluate=False),
                        sp.Eq(v_, at_sigma, evaluate=False)))
    d.result["P"] = P
    return d


def hf_pair(q: sp.IndexedBase) -> sp.Matrix:
    """Half pair i of P q, HF's permuted head: interleaved pair i of q, ``(q_{2i}, q_{2i+1})``."""
    return _pair(q, "interleaved")


def weight_permutation_symbolic_d() -> Derivation:
    """Meta -> HF for every even head dim 2h: with q_hf = P q (W_hf = P W_meta), every score is unchanged.

    Half pair i of q_hf is :func:`hf_pair` (the mutation tests patch it with other permutations)."""
    d = Derivation("Meta -> HF q/k weight permutation keeps every score, every even d = 2h")
    th = THETA(I)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    pq, pk = hf_pair(q), hf_pair(k)
    d.define("HF's converter permutes the output rows of W_q and W_k per head (W_hf = P W_meta), so q_hf = P q: "
             "half pair i of q_hf is interleaved pair i of q", sp.Eq(sp.Symbol("(q_hf)_i"), pq, evaluate=False))
    t_ = sp.Symbol("t", integer=True, nonnegative=True)
    h_i = I + 1 + t_
    a, b = pairs.features(I, "half")
    d.equal("decided from P: half pair i of q_hf = P q, the features (i, i + h), holds q at tau(i) and tau(i + h) "
            "(tau = sigma^-1, h = i + 1 + t > i): that is hf_pair",
            unevaluated(lambda: sp.Matrix([q[_tau(a.subs(H, h_i), h_i)], q[_tau(b.subs(H, h_i), h_i)]])), pq)
    for dim in (4, 8):
        rows = np.asarray(_rope_layout.permute_qk_weight(np.arange(dim), n_heads=1)).tolist()  # row r of W_hf
        r_, c_ = sp.symbols("r c", integer=True, nonnegative=True)
        d.enumerated(f"d = {dim}: pemath.rope.permute_qk_weight puts Meta's row sigma^-1(r) = tau(r) at HF's row r",
                     (r_, c_), list(enumerate(rows)), sp.Eq(c_, _tau(r_, dim // 2), evaluate=False))
    hf = pairs.inner_over_pairs(d, "half", u, v)
    meta = pairs.inner_over_pairs(d, "interleaved", u, v)
    d.equal("<R_half(m) q_hf, R_half(n) k_hf> = <R_int(m) q, R_int(n) k>: pair i of both is "
            "<B(m theta_i) (q_2i, q_2i+1), B(n theta_i) (k_2i, k_2i+1)>",
            unevaluated(lambda: _fill(_fill(hf, u, "half", block(m * th) * pq), v, "half", block(n * th) * pk)),
            _fill(_fill(meta, u, "interleaved", block(m * th) * _pair(q, "interleaved")), v, "interleaved",
                  block(n * th) * _pair(k, "interleaved")), methods=("sums",))
    return d


def weight_permutation(dim: int, *, in_features: int = 2) -> Derivation:
    """Meta -> HF: with W_hf = P W_meta, every q.k score is unchanged.

    (R_half(m) W_hf x)^T (R_half(n) W_hf y) = (R_int(m) W x)^T (R_int(n) W y) for a
    symbolic head weight W (dim x in_features) and inputs x, y; P is :func:`layout_permutation`.
    """
    d = Derivation(f"Meta -> HF q/k weight permutation keeps every score, d = {dim}")
    P = layout_permutation(dim)
    W = sp.Matrix(dim, in_features, lambda r, s: sp.Symbol(f"W_{r}{s}", real=True))
    x, y = _vec("x", in_features), _vec("y", in_features)
    Rh = lambda p: rotation(p, dim, "half")  # noqa: E731
    Ri = lambda p: rotation(p, dim, "interleaved")  # noqa: E731
    d.define("Per head, HF's checkpoint converter permutes the output rows of W_q and W_k: W_hf = P W_meta", P)
    hf = unevaluated(lambda: ((Rh(m) * P * W * x).T * (Rh(n) * P * W * y))[0])
    meta = ((Ri(m) * W * x).T * (Ri(n) * W * y))[0]
    d.equal(f"d = {dim}: (R_half(m) W_hf x)^T (R_half(n) W_hf y) = (R_int(m) W x)^T (R_int(n) W y)",
            hf, meta, methods=("expand",))
    return d


# --------------------------------------------------------------------------- calculus


def key_shift(shift: sp.Expr) -> sp.Expr:
    """The shift a cached key's position gets when every position moves by ``shift``: the same."""
    return shift


def translation_symbolic_d(*, layout: str = "interleaved") -> Derivation:
    """Shifting every position by c leaves every score unchanged, every even d = 2h.

    The keys move by :func:`key_shift` (the mutation tests patch it to 0: re-rotating the queries but
    not the cached keys).
    """
    d = Derivation(f"RoPE scores are invariant under a common shift of positions, every even d = 2h, {layout}")
    th = THETA(I)
    ks = key_shift(c)
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    u, v = sp.IndexedBase("u", real=True), sp.IndexedBase("v", real=True)
    qi, ki = _pair(q, layout), _pair(k, layout)
    inner = pairs.inner_over_pairs(d, layout, u, v)
    score = lambda sq, sk: _fill(_fill(inner, u, layout, block((m + sq) * th) * qi), v, layout,  # noqa: E731
                                 block((n + sk) * th) * ki)
    d.define("S[i, j] = <R(m_i) q_i, R(n_j) k_j>: one entry, a query at m and a key at n, summed over the pairs:",
             sp.Eq(sp.Symbol("S(m, n)"), score(0, 0), evaluate=False))
    d.equal("by the group law, B((m + c) theta_i)^T B((n + c) theta_i) = B(-(m + c) theta_i) B((n + c) theta_i) "
            "= B((n - m) theta_i)", block((m + c) * th).T * block((n + ks) * th), block((n - m) * th), methods=TRIG)
    d.equal("so S(m + c, n + c) = S(m, n) for every entry of the score matrix, every shift c and every d",
            score(c, ks), score(0, 0), methods=("sums",))
    d.remark("So a key cached as R(n_j) k_j never needs re-rotation when positions move together: "
             "only the offset n - m enters the score.")
    d.result["score"] = ((block(m * th) * sp.Matrix([q[I, 0], q[I, 1]])).T * (block(n * th) * sp.Matrix([k[I, 0], k[I, 1]])))[0]
    return d


def translation_dense(dim: int, layout: str, *, length: int = 2) -> Derivation:
    """The whole ``length x length`` score matrix at symbolic positions, dense d x d rotations."""
    d = Derivation(f"RoPE score matrix under a shift, d = {dim}, {layout}")
    ks = key_shift(c)
    ms = sp.symbols(f"m_0:{length}", real=True)
    ns = sp.symbols(f"n_0:{length}", real=True)
    qs = [_vec(f"q{r}", dim) for r in range(length)]
    ks_ = [_vec(f"k{s}", dim) for s in range(length)]
    R = lambda p: rotation(p, dim, layout)  # noqa: E731
    S = lambda sq, sk: sp.Matrix(length, length,  # noqa: E731
                                 lambda r, s: ((R(ms[r] + sq) * qs[r]).T * (R(ns[s] + sk) * ks_[s]))[0])
    d.equal(f"d = {dim}, {layout}: S(m + c, n + c) = S(m, n) for a {length} x {length} score matrix",
            S(c, ks), S(0, 0), methods=TRIG)
    return d


#: The sign of the rotation the backward pass applies: R(-m), the inverse.
INVERSE_SIGN = -1


def vjp(J: sp.Matrix, v: sp.Matrix) -> sp.Matrix:
    """The claimed vector-Jacobian product as a column: (v^T J)^T = J^T v."""
    return J.T * v


def backward_symbolic_d(*, layout: str = "interleaved") -> Derivation:
    """Block i of the Jacobian of x -> R(m)x is B(m theta_i); for every even d, <v, R(m) x> = <R(-m) v, x>:
    the vector-Jacobian product is the inverse rotation."""
    d = Derivation(f"RoPE backward pass is the inverse rotation, every even d = 2h, {layout}")
    th = THETA(I)
    xa, xb = sp.symbols("x_a x_b", real=True)
    f = block(m * th) * sp.Matrix([xa, xb])
    J = f.jacobian([xa, xb])
    d.equal("R(m) is linear, so its Jacobian is itself, block by block: d(B x_i)/d x_i = B(m theta_i)",
            sp.Matrix(2, 2, lambda r, c: sp.Derivative(f[r], (xa, xb)[c])), block(m * th),
            methods=("expand",))
    d.equal("and J_i^T = B(-m theta_i): the vector-Jacobian product rotates back, block by block",
            J.T, unevaluated(lambda: block(INVERSE_SIGN * m * th)), methods=TRIG)
    x, v = sp.IndexedBase("x", real=True), sp.IndexedBase("v", real=True)
    s_, t_ = sp.IndexedBase("s", real=True), sp.IndexedBase("t", real=True)
    inner = pairs.inner_over_pairs(d, layout, s_, t_)
    xi, vi = _pair(x, layout), _pair(v, layout)
    d.equal("for every d: <v, R(m) x> = <R(-m) v, x>, so the gradient of x -> <v, R(m) x> is R(-m) v",
            _fill(_fill(inner, s_, layout, vi), t_, layout, block(m * th) * xi),
            _fill(_fill(inner, s_, layout, block(INVERSE_SIGN * m * th) * vi), t_, layout, xi), methods=("sums",))
    return d


def backward_dense(dim: int, layout: str) -> Derivation:
    """Jacobian of the elementwise form is R(m); the VJP v^T J is R(-m) v: ``apply(v, m, inverse=True)``.

    The claimed product is :func:`vjp` and the claimed inverse rotation's sign :data:`INVERSE_SIGN` (the
    mutation tests patch them: ``J v``, the forward rotation).
    """
    d = Derivation(f"RoPE backward pass, d = {dim}, {layout}")
    x, v = _vec("x", dim), _vec("v", dim)
    f = elementwise(x, m, layout)
    J = f.jacobian(list(x))
    R = rotation(m, dim, layout)
    d.equal(f"d = {dim}, {layout}: the Jacobian of x -> x cos + rotate(x) sin (its partial derivatives) is R(m)",
            sp.Matrix(dim, dim, lambda r, c: sp.Derivative(f[r], x[c])), R, methods=("expand",))
    grad = sp.Matrix([sp.Derivative(v.dot(f), xj) for xj in x])
    claimed = vjp(J, v)
    d.equal(f"d = {dim}, {layout}: the gradient of <v, f(x)> with respect to x, differentiated entry by entry, "
            "is the claimed vector-Jacobian product (v^T J)^T = J^T v", grad, claimed, methods=("expand",))
    d.equal(f"d = {dim}, {layout}: J^T v = R(m)^T v = R(-m) v, the inverse rotation",
            claimed, unevaluated(lambda: rotation(INVERSE_SIGN * m, dim, layout) * v), methods=TRIG)
    d.result["J"] = J
    return d
