r"""RoPE's algebra: the rotations form a group, its forms agree, and its calculus.

Every function returns a :class:`~pemath.symbolic.Derivation` whose decided steps
reduce to exactly zero, or raises :class:`~pemath.symbolic.ProofFailure`. The parts a
mistaken implementation would change (the 2x2 block, the frequencies, the layout's
``rotate``, the permutation, the sign of the inverse, the vector-Jacobian product) are
parameters, so the tests can feed wrong statements and watch them fail.

Conventions (as in :mod:`pemath.symbolic.rope`): the block is
:math:`B(x) = \begin{pmatrix}\cos x & -\sin x\\ \sin x & \cos x\end{pmatrix}`, pair ``i`` of
the layout (``(2i, 2i+1)`` interleaved, ``(i, i + d/2)`` half) is rotated by
:math:`B(m\theta_i)`, and :math:`P` (:func:`pemath.symbolic.rope.permutation`) takes the
interleaved layout to the half one.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from ._decide import Derivation, reduce_to_zero
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


def elementwise(x: sp.Matrix, pos: sp.Expr, layout: str, *, freq: Freq | None = None,
                rotate: Callable[[sp.Matrix, str], sp.Matrix] = rotate_features) -> sp.Matrix:
    """RoFormer eq. 34: ``x * cos(pos theta) + rotate(x) * sin(pos theta)``, elementwise."""
    d = len(x)
    cos = feature_table(sp.cos, pos, d, layout, freq)
    sin = feature_table(sp.sin, pos, d, layout, freq)
    return x.multiply_elementwise(cos) + rotate(x, layout).multiply_elementwise(sin)


def half_index(j: sp.Expr, h: sp.Expr) -> sp.Expr:
    """Where :math:`P` sends interleaved feature ``j``: ``floor(j/2) + h (j mod 2)``."""
    return sp.floor(j / sp.Integer(2)) + h * sp.Mod(j, 2)


# --------------------------------------------------------------------------- the group


def group_block(blk: Block = block) -> Derivation:
    """One 2x2 block: B(a)B(b) = B(a+b), B(a)^T = B(-a), det B = 1, |B(a)x| = |x|."""
    d = Derivation("RoPE rotations form a group, one block")
    a, b = ALPHA, BETA
    x = _vec("x", 2)
    d.say("The block of a pair rotated by the angle alpha:", sp.Eq(sp.Symbol("B(alpha)"), blk(a), evaluate=False))
    d.equal("rotating by alpha then by beta is rotating by alpha + beta: B(alpha) B(beta) = B(alpha + beta)",
            blk(a) * blk(b), blk(a + b), methods=TRIG)
    d.equal("the transpose is the rotation back: B(alpha)^T = B(-alpha)", blk(a).T, blk(-a), methods=TRIG)
    d.equal("so B(alpha)^T B(alpha) = B(-alpha) B(alpha) = B(0) = I: the block is orthogonal",
            blk(a).T * blk(a), sp.eye(2), methods=TRIG)
    d.equal("its determinant is cos^2 alpha + sin^2 alpha = 1", blk(a).det(), sp.S.One, methods=TRIG)
    d.equal("hence it preserves the norm: |B(alpha) x|^2 = |x|^2",
            (blk(a) * x).dot(blk(a) * x), x.dot(x), methods=TRIG)
    d.result["product"] = blk(a + b)
    return d


def group_symbolic_d(blk: Block = block, rhs_angle: Callable[[sp.Expr, sp.Expr], sp.Expr] | None = None) -> Derivation:
    """The group laws for every even d and both layouts, by the block-diagonal structure.

    ``rhs_angle(m, n)`` is the angle of block ``i`` of the claimed product R(m)R(n)
    (default ``(m + n) theta_i``; the tests pass a frequency off by one index). The
    steps are decided for a symbolic block index i, so the cost does not depend on d.
    """
    d = Derivation("RoPE rotations form a group, every even d")
    i, h = I, H
    th = THETA(i)
    angle = rhs_angle(m, n) if rhs_angle is not None else (m + n) * th
    Bm, Bn = blk(m * th), blk(n * th)
    d.say("In either layout R(m) = Q D(m) Q^T with D(m) = diag(B(m theta_0), ..., B(m theta_{h-1})), "
          "d = 2h, and Q a permutation matrix (Q = I interleaved, Q = P half), so Q^T Q = I. "
          "Hence R(m) R(n) = Q D(m) D(n) Q^T, R(m)^T = Q D(m)^T Q^T and |R(m) x| = |D(m) Q^T x|; "
          "block i of each is the block i below, for any frequencies theta_i:",
          sp.Eq(sp.MatrixSymbol("R(m)", 2 * h, 2 * h),
                sp.MatMul(sp.MatrixSymbol("Q", 2 * h, 2 * h), sp.MatrixSymbol("D(m)", 2 * h, 2 * h),
                          sp.MatrixSymbol("Q", 2 * h, 2 * h).T), evaluate=False))
    d.equal("block i of D(m) D(n) is B(m theta_i) B(n theta_i) = B((m + n) theta_i): R(m) R(n) = R(m + n)",
            Bm * Bn, blk(angle), methods=TRIG)
    d.equal("block i of D(m)^T is B(m theta_i)^T = B(-m theta_i): R(m)^T = R(-m) = R(m)^(-1)",
            Bm.T, blk(-m * th), methods=TRIG)
    det_i = Bm.det()
    d.equal("det B(m theta_i) = 1 for every block i", det_i, sp.S.One, methods=TRIG)
    d.say("The determinant of a block-diagonal matrix is the product of its blocks' determinants, "
          "and det Q det Q^T = det(Q Q^T) = 1:",
          sp.Eq(sp.Symbol("det R(m)"), sp.Product(sp.Symbol("det B_i"), (i, 0, h - 1)), evaluate=False))
    d.equal("each factor reduces to 1, so det R(m) = prod_{i<h} 1 = 1 for every h",
            sp.Product(1 + _reduced(det_i - 1), (i, 0, h - 1)).doit(), sp.S.One,
            methods=("expand",))
    xi = sp.IndexedBase("x", real=True)
    xv = sp.Matrix([xi[i, 0], xi[i, 1]])
    gap = (Bm * xv).dot(Bm * xv) - xv.dot(xv)
    d.equal("|B(m theta_i) x_i|^2 = |x_i|^2 for the pair x_i = (Q^T x)_i of every block",
            (Bm * xv).dot(Bm * xv), xv.dot(xv), methods=TRIG)
    d.equal("summing over the h blocks, |R(m) x|^2 - |x|^2 = sum_i (|B x_i|^2 - |x_i|^2) = sum_i 0 = 0",
            sp.Sum(_reduced(gap), (i, 0, h - 1)).doit(), sp.S.Zero, methods=("expand",))
    return d


def group_dense(dim: int, layout: str, *, blk: Block = block, freq: Freq | None = None) -> Derivation:
    """The group laws on the dense d x d matrix of ``layout`` (small d, every entry expanded)."""
    d = Derivation(f"RoPE rotations form a group, d = {dim}, {layout}")
    R = lambda p: rotation(p, dim, layout, freq=freq, blk=blk)  # noqa: E731
    x = _vec("x", dim)
    Rm = R(m)
    d.equal(f"d = {dim}, {layout}: R(m) R(n) = R(m + n)", Rm * R(n), R(m + n), methods=TRIG)
    d.equal(f"d = {dim}, {layout}: R(m)^T = R(-m)", Rm.T, R(-m), methods=TRIG)
    d.equal(f"d = {dim}, {layout}: det R(m) = 1", Rm.det(method="berkowitz"), sp.S.One, methods=TRIG)
    d.equal(f"d = {dim}, {layout}: |R(m) x|^2 = |x|^2", (Rm * x).dot(Rm * x), x.dot(x), methods=TRIG)
    return d


# --------------------------------------------------------------------------- forms


def elementwise_form(dim: int, layout: str, *, rotate: Callable[[sp.Matrix, str], sp.Matrix] = rotate_features,
                     freq: Freq | None = None, blk: Block = block) -> Derivation:
    """RoFormer eq. 34 equals the block-diagonal matrix form: x*cos + rotate(x)*sin = R(m) x.

    ``freq`` feeds the elementwise tables only (the matrix keeps b^(-2i/d)); ``rotate``
    and ``blk`` are the parts a mutant changes.
    """
    d = Derivation(f"RoPE elementwise form = matrix form, d = {dim}, {layout}")
    x = _vec("x", dim)
    lhs = elementwise(x, m, layout, freq=freq, rotate=rotate)
    rhs = rotation(m, dim, layout, blk=blk) * x
    d.say(f"rotate(x) in the {layout} layout:", rotate(x, layout).T)
    d.equal(f"d = {dim}, {layout}: x * cos(m theta) + rotate(x) * sin(m theta) = R(m) x", lhs, rhs,
            methods=("expand",))
    d.result["R"] = rotation(m, dim, layout)
    return d


def complex_form(*, blk: Block = block, sign: int = 1, swap: bool = False) -> Derivation:
    """(x_a + i x_b) e^{i m theta_i} is the pair B(m theta_i)(x_a, x_b) read as a + i b.

    ``sign`` is the sign of the exponent (Meta's ``freqs_cis``: +1) and ``swap`` reads
    the pair as x_b + i x_a; both are mutants.
    """
    d = Derivation("RoPE complex form = real form")
    th = THETA(I)
    xa, xb = sp.symbols("x_a x_b", real=True)
    z = (xb + sp.I * xa) if swap else (xa + sp.I * xb)
    lhs = z * sp.exp(sign * sp.I * m * th)
    rot = blk(m * th) * sp.Matrix([xa, xb])
    rhs = rot[0] + sp.I * rot[1]
    d.say("Pair i of either layout, (x_a, x_b), is the complex number z_i = x_a + i x_b "
          "(Meta's view_as_complex); Meta rotates it by freqs_cis = e^{i m theta_i}:", sp.Eq(sp.Symbol("z_i"), z))
    d.equal("z_i e^{i m theta_i} = (R(m) x)_a + i (R(m) x)_b, decided by Euler's formula "
            "(rewrite in exponentials, expand the complex parts)", lhs, rhs, methods=("rewrite(exp)",))
    d.equal("so the real part is x_a cos - x_b sin, the imaginary part x_a sin + x_b cos",
            sp.Matrix([sp.re(sp.expand_complex(lhs)), sp.im(sp.expand_complex(lhs))]), rot,
            methods=("expand", "rewrite(exp)"))
    d.result["rotated"] = lhs
    return d


def layout_symbolic_d(index: Callable[[sp.Expr, sp.Expr], sp.Expr] = half_index) -> Derivation:
    """For every d, P carries the interleaved pair (2i, 2i+1) onto the half pair (i, i + h).

    ``index(j, h)`` is where P sends interleaved feature j (default :func:`half_index`;
    the tests pass wrong maps).
    """
    d = Derivation("RoPE half layout = P (interleaved) P^T, every even d")
    j = sp.Symbol("j", integer=True, nonnegative=True)
    d.say("P sends interleaved feature j to half feature sigma(j) = floor(j/2) + h (j mod 2), d = 2h:",
          sp.Eq(sp.Function("sigma")(j), index(j, H)))
    d.equal("sigma(2i) = i and sigma(2i + 1) = i + h for a symbolic pair index i, so conjugating by P carries "
            "the interleaved block B(m theta_i) on (2i, 2i+1) onto the half block on (i, i + h): "
            "P R_interleaved(m) P^T = R_half(m) for every d",
            sp.Matrix([index(2 * I, H), index(2 * I + 1, H)]), sp.Matrix([I, I + H]))
    return d


def layout_conjugacy(dim: int, *, perm: sp.Matrix | None = None, blk: Block = block,
                     index: Callable[[sp.Expr, sp.Expr], sp.Expr] = half_index) -> Derivation:
    """R_half(m) = P R_interleaved(m) P^T with P = :func:`pemath.symbolic.rope.permutation`, d = ``dim``.

    ``perm`` replaces P (the tests pass the inverse permutation P^T, the other direction).
    """
    d = Derivation(f"RoPE half layout = P (interleaved) P^T, d = {dim}")
    P = permutation(dim) if perm is None else perm
    d.say(f"P for d = {dim}: (P x)[i] = x[2i], (P x)[i + h] = x[2i + 1]", P)
    d.equal(f"d = {dim}: P P^T = I (P is a permutation)", P * P.T, sp.eye(dim), methods=("expand",))
    d.equal(f"d = {dim}: R_half(m) = P R_interleaved(m) P^T",
            rotation(m, dim, "half", blk=blk), P * rotation(m, dim, "interleaved", blk=blk) * P.T,
            methods=("expand",))
    d.enumerated(f"d = {dim}: P has its 1s exactly at (sigma(j), j)",
                 [(r, col) for r in range(dim) for col in range(dim)],
                 lambda rc: sp.Eq(P[rc[0], rc[1]], 1 if rc[0] == index(rc[1], dim // 2) else 0))
    d.result["P"] = P
    return d


def weight_permutation(dim: int, *, in_features: int = 2, perm: sp.Matrix | None = None,
                       blk: Block = block) -> Derivation:
    """Meta -> HF: with W_hf = P W_meta, every q.k score is unchanged.

    (R_half(m) W_hf x)^T (R_half(n) W_hf y) = (R_int(m) W x)^T (R_int(n) W y) for a
    symbolic head weight W (dim x in_features) and inputs x, y. ``perm`` replaces P.
    """
    d = Derivation(f"Meta -> HF q/k weight permutation keeps every score, d = {dim}")
    P = permutation(dim) if perm is None else perm
    W = sp.Matrix(dim, in_features, lambda r, s: sp.Symbol(f"W_{r}{s}", real=True))
    x, y = _vec("x", in_features), _vec("y", in_features)
    Rh = lambda p: rotation(p, dim, "half", blk=blk)  # noqa: E731
    Ri = lambda p: rotation(p, dim, "interleaved", blk=blk)  # noqa: E731
    d.say("Per head, HF's checkpoint converter permutes the output rows of W_q and W_k: W_hf = P W_meta", P)
    hf = ((Rh(m) * P * W * x).T * (Rh(n) * P * W * y))[0]
    meta = ((Ri(m) * W * x).T * (Ri(n) * W * y))[0]
    d.equal(f"d = {dim}: (R_half(m) W_hf x)^T (R_half(n) W_hf y) = (R_int(m) W x)^T (R_int(n) W y)",
            hf, meta, methods=("expand",))
    return d


# --------------------------------------------------------------------------- calculus


def translation_symbolic_d(blk: Block = block, key_shift: sp.Expr | None = None) -> Derivation:
    """Shifting every position by c leaves every score unchanged, every even d.

    ``key_shift`` is the shift applied to the keys (default ``c``, the same as the
    queries'; the tests pass 0: re-rotating the queries but not the cached keys).
    """
    d = Derivation("RoPE scores are invariant under a common shift of positions, every even d")
    i, h = I, H
    th = THETA(i)
    ks = c if key_shift is None else key_shift
    q, k = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True)
    qi, ki = sp.Matrix([q[i, 0], q[i, 1]]), sp.Matrix([k[i, 0], k[i, 1]])
    score = lambda a, b: ((blk(a * th) * qi).T * (blk(b * th) * ki))[0]  # noqa: E731
    d.say("S[i, j] = <R(m_i) q_i, R(n_j) k_j> is a sum over blocks; block i of a query at m and a key at n:",
          sp.Eq(sp.Symbol("s_i(m, n)"), score(m, n)))
    d.equal("by the group law, B((m + c) theta_i)^T B((n + c) theta_i) = B(-(m + c) theta_i) B((n + c) theta_i) "
            "= B((n - m) theta_i)", blk((m + c) * th).T * blk((n + ks) * th), blk((n - m) * th), methods=TRIG)
    d.equal("so s_i(m + c, n + c) = s_i(m, n) for every block i and every shift c",
            score(m + c, n + ks), score(m, n), methods=TRIG)
    d.equal("summing over the h blocks, S(m + c, n + c) - S(m, n) = sum_i (s_i(m + c, n + c) - s_i(m, n)) "
            "= sum_i 0 = 0 for every entry of the score matrix and every d",
            sp.Sum(_reduced(score(m + c, n + ks) - score(m, n)), (i, 0, h - 1)).doit(), sp.S.Zero,
            methods=("expand",))
    d.say("So a key cached as R(n_j) k_j never needs re-rotation when positions move together: "
          "only the offset n - m enters the score.",
          sp.Eq(sp.Sum(score(m + c, n + c), (i, 0, h - 1)), sp.Sum(score(m, n), (i, 0, h - 1)), evaluate=False))
    d.result["score"] = score(m, n)
    return d


def translation_dense(dim: int, layout: str, *, length: int = 2, blk: Block = block,
                      key_shift: sp.Expr | None = None) -> Derivation:
    """The whole ``length x length`` score matrix at symbolic positions, dense d x d rotations."""
    d = Derivation(f"RoPE score matrix under a shift, d = {dim}, {layout}")
    ks = c if key_shift is None else key_shift
    ms = sp.symbols(f"m_0:{length}", real=True)
    ns = sp.symbols(f"n_0:{length}", real=True)
    qs = [_vec(f"q{r}", dim) for r in range(length)]
    ks_ = [_vec(f"k{s}", dim) for s in range(length)]
    R = lambda p: rotation(p, dim, layout, blk=blk)  # noqa: E731
    S = lambda sq, sk: sp.Matrix(length, length,  # noqa: E731
                                 lambda r, s: ((R(ms[r] + sq) * qs[r]).T * (R(ns[s] + sk) * ks_[s]))[0])
    d.equal(f"d = {dim}, {layout}: S(m + c, n + c) = S(m, n) for a {length} x {length} score matrix",
            S(c, ks), S(0, 0), methods=TRIG)
    return d


def backward_symbolic_d(blk: Block = block, rhs_sign: int = -1) -> Derivation:
    """Block i of the Jacobian of x -> R(m)x is B(m theta_i); its transpose is B(-m theta_i)."""
    d = Derivation("RoPE backward pass is the inverse rotation, every even d")
    th = THETA(I)
    xa, xb = sp.symbols("x_a x_b", real=True)
    f = blk(m * th) * sp.Matrix([xa, xb])
    J = f.jacobian([xa, xb])
    d.equal("R(m) is linear, so its Jacobian is itself, block by block: d(B x_i)/d x_i = B(m theta_i)",
            J, blk(m * th), methods=("expand",))
    d.equal("and J_i^T = B(-m theta_i): the vector-Jacobian product rotates back, block by block",
            J.T, blk(rhs_sign * m * th), methods=TRIG)
    return d


def backward_dense(dim: int, layout: str, *, rotate: Callable[[sp.Matrix, str], sp.Matrix] = rotate_features,
                   vjp: Callable[[sp.Matrix, sp.Matrix], sp.Matrix] | None = None, rhs_sign: int = -1,
                   blk: Block = block) -> Derivation:
    """Jacobian of the elementwise form is R(m); the VJP v^T J is R(-m) v: ``apply(v, m, inverse=True)``.

    ``vjp(J, v)`` is the claimed vector-Jacobian product as a column (default ``J^T v``;
    the tests pass ``J v``, the Jacobian transposed wrongly) and ``rhs_sign`` the sign
    of the claimed inverse rotation (the tests pass +1, the forward rotation).
    """
    d = Derivation(f"RoPE backward pass, d = {dim}, {layout}")
    x, v = _vec("x", dim), _vec("v", dim)
    f = elementwise(x, m, layout, rotate=rotate)
    J = f.jacobian(list(x))
    R = rotation(m, dim, layout, blk=blk)
    d.equal(f"d = {dim}, {layout}: the Jacobian of x -> x cos + rotate(x) sin (sympy jacobian) is R(m)",
            J, R, methods=("expand",))
    grad = sp.Matrix([sp.diff(v.dot(f), xj) for xj in x])
    claimed = (J.T * v) if vjp is None else vjp(J, v)
    d.equal(f"d = {dim}, {layout}: the gradient of <v, f(x)> with respect to x, differentiated entry by entry, "
            "is the claimed vector-Jacobian product (v^T J)^T = J^T v", grad, claimed, methods=("expand",))
    d.equal(f"d = {dim}, {layout}: J^T v = R(m)^T v = R(-m) v, the inverse rotation",
            claimed, rotation(rhs_sign * m, dim, layout, blk=blk) * v, methods=TRIG)
    d.result["J"] = J
    return d
