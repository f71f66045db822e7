r"""RoFormer's long-term decay bound (section 3.4.3): Abel summation of the RoPE score.

With :math:`h_i = q_{[2i:2i+1]} k^*_{[2i:2i+1]}` (pair ``i`` of the query times the
conjugate of pair ``i`` of the key, as complex numbers), the score of a query at ``m``
and a key at ``n`` is :math:`\mathrm{Re}\sum_{i=0}^{d/2-1} h_i e^{\mathrm{i}(m-n)\theta_i}`.
With the partial sums :math:`S_j = \sum_{i<j} e^{\mathrm{i}(m-n)\theta_i}`
(:math:`S_0 = 0`) and :math:`h_{d/2} = 0`, summation by parts gives

.. math::

    \sum_{i=0}^{d/2-1} h_i e^{\mathrm{i}(m-n)\theta_i}
    = \sum_{i=0}^{d/2-1} S_{i+1} (h_i - h_{i+1}),

hence :math:`|\cdot| \le (\max_i |h_{i+1} - h_i|) \sum_{j=1}^{d/2} |S_j|`.
"""

from __future__ import annotations

import sympy as sp

from ._decide import Derivation, unevaluated

__all__ = ["curve", "abel_symbolic_d", "abel_checked", "abel_expanded", "bound", "r", "N"]

r = sp.Symbol("r", real=True)  # the relative distance m - n
N = sp.Symbol("N", integer=True, nonnegative=True)  # the number of pairs, d/2
_i = sp.Symbol("i", integer=True, nonnegative=True)


#: The index offset of the partial sum in RoFormer's Abel form, S_{i+1} (h_i - h_{i+1}).
PARTIAL_SUM_SHIFT = 1


def abel_symbolic_d() -> Derivation:
    """Summation by parts for any number of pairs N = d/2, decided on the general term.

    The claimed form is ``S_{i+s} (h_i - h_{i+1})`` with s = :data:`PARTIAL_SUM_SHIFT` (RoFormer: 1; the
    mutation tests patch 0, a common slip).
    The cost does not depend on ``d``: the proof is a term identity and an induction.
    """
    d = Derivation("Abel summation of the RoPE score, every even d")
    h, S = sp.Function("h"), sp.Function("S")
    i = _i
    e = sp.Function("e")  # e(i) = exp(i r theta_i), any complex numbers
    d.define("Let e_i = e^{i r theta_i} with r = m - n, and define the partial sums by S_0 = 0, "
             "S_{j+1} = S_j + e_j, i.e. S_j = sum_{i<j} e_i; then e_i = S_{i+1} - S_i, so the score is "
             "Re sum_{i<N} h_i (S_{i+1} - S_i), with N = d/2 pairs.",
             sp.Eq(sp.Sum(h(i) * e(i), (i, 0, N - 1)), sp.Sum(h(i) * (S(i + 1) - S(i)), (i, 0, N - 1))))
    d.equal("General term: h_i (S_{i+1} - S_i) + S_{i+1} (h_{i+1} - h_i) = h_{i+1} S_{i+1} - h_i S_i "
            "(a difference of consecutive terms of T_i = h_i S_i)",
            h(i) * (S(i + 1) - S(i)) + S(i + PARTIAL_SUM_SHIFT) * (h(i + 1) - h(i)), h(i + 1) * S(i + 1) - h(i) * S(i),
            methods=("expand",))
    identity = d.induction("summation by parts, for all sequences h, S and every N >= 0: sum_{i<N} h_i (S_{i+1} - S_i) "
                           "= -sum_{i<N} S_{i+1} (h_{i+1} - h_i) + h_N S_N - h_0 S_0",
                           lambda k: sp.Sum(h(i) * (S(i + 1) - S(i)), (i, 0, k - 1)),
                           lambda k: -sp.Sum(S(i + PARTIAL_SUM_SHIFT) * (h(i + 1) - h(i)), (i, 0, k - 1)) + h(k) * S(k)
                           - h(0) * S(0), N, 0)
    lhs = sp.Sum(h(i) * (S(i + 1) - S(i)), (i, 0, N - 1))
    rhs = sp.Sum(S(i + 1) * (h(i) - h(i + 1)), (i, 0, N - 1))
    d.hypothesis("h_N = 0 (h_{d/2} := 0, past the last pair) and S_0 = 0 (the empty sum)")
    d.equal("so, for every number of pairs (RoFormer eq. 36): sum_{i<N} h_i e_i = sum_{i<N} S_{i+1} (h_i - h_{i+1})",
            identity.rhs.subs({h(N): 0, S(0): 0}), rhs, methods=("sums",))
    d.result["identity"] = sp.Eq(lhs, rhs, evaluate=False)
    return d


def abel_checked() -> Derivation:
    """Summation by parts for complex sequences h, S (their real and imaginary parts arbitrary real functions of the
    index) and every N >= 0, one equation per part, each by induction on N, decided by pemath.kernel alone (the
    proposer finds the certificates)."""
    from .kterms import app, minus, num, var
    from . import bridge

    d = Derivation("Abel summation, in the checker's terms")
    n, i = var("N", "nat"), var("i", "int")

    def times(a: tuple, b: tuple) -> tuple:  # (real part, imaginary part) of the product of two complex numbers
        return (minus(("mul", a[0], b[0]), ("mul", a[1], b[1])), ("add", ("mul", a[0], b[1]), ("mul", a[1], b[0])))

    def seq(name: str, x: tuple) -> tuple:
        return app(name + "_r", x), app(name + "_i", x)

    def step(name: str, x: tuple) -> tuple:  # name_{x+1} - name_x
        return tuple(minus(a, b) for a, b in zip(seq(name, ("add", x, num(1))), seq(name, x)))

    top = ("add", n, num(-1))
    binders = tuple(("fun", f, 1, "real") for f in ("h_r", "h_i", "S_r", "S_i")) + (n,)
    lhs = times(seq("h", i), step("S", i))
    rhs = times(seq("S", ("add", i, num(1))), step("h", i))
    end, start = times(seq("S", n), seq("h", n)), times(seq("S", num(0)), seq("h", num(0)))
    for part, where in ((0, "real"), (1, "imaginary")):
        r = ("eq", ("sum", lhs[part], "i", num(0), top),
             ("add", ("mul", num(-1), ("sum", rhs[part], "i", num(0), top)), end[part], ("mul", num(-1), start[part])))
        prop = ("forall", binders, (), r)
        d.checked(f"Summation by parts, {where} part, for every N >= 0 and complex h_i = h_r(i) + i h_i(i), S_i = "
                  "S_r(i) + i S_i(i): sum_{i<N} h_i (S_{i+1} - S_i) = -sum_{i<N} S_{i+1} (h_{i+1} - h_i) + h_N S_N - "
                  "h_0 S_0, by induction on N", prop, bridge.certificate("induction", prop))
    return d


def abel_expanded(pairs: int) -> Derivation:
    """The identity expanded in full for ``pairs`` = d/2 concrete pairs, with complex ``h_i``."""
    d = Derivation(f"Abel summation of the RoPE score, d = {2 * pairs}")
    hs = [sp.Symbol(f"h_{j}") for j in range(pairs)] + [sp.Integer(0)]  # h_{d/2} = 0
    th = sp.symbols(f"theta_0:{pairs}", positive=True)
    es = [sp.exp(sp.I * r * t) for t in th]
    S = [sp.Add(*es[:j]) for j in range(pairs + 2)]  # S_0 = 0, S_j = e_0 + ... + e_{j-1}
    lhs = sp.Add(*[hs[j] * es[j] for j in range(pairs)])
    d.equal(f"sum_(i<{pairs}) h_i e^(i r theta_i) = sum_(i<{pairs}) S_(i+1) (h_i - h_(i+1)), h_{pairs} = 0",
            lhs,
            unevaluated(lambda: sp.Add(*[S[j + PARTIAL_SUM_SHIFT] * (hs[j] - hs[j + 1]) for j in range(pairs)])),
            methods=("expand",))
    return d


def bound() -> Derivation:
    """From the Abel form to RoFormer's bound (eq. 37); the inequalities are the textbook ones."""
    d = Derivation("RoFormer's relative upper bound")
    d.cite("Take absolute values of the Abel form. The triangle inequality |sum z_i| <= sum |z_i| and "
          "|a b| = |a| |b| give |sum_i h_i e^{i r theta_i}| <= sum_{i<d/2} |S_{i+1}| |h_{i+1} - h_i|, and "
          "the real part (the score) is at most the modulus.",
                          source="Rudin, Principles of Mathematical Analysis, Theorem 1.33(e) (triangle inequality)")
    n_pairs = sp.Symbol("K", integer=True, positive=True)  # d/2 (N in the Abel form, which also takes N = 0)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    A = sp.Function("A", nonnegative=True)  # A(i) = |S_{i+1}|
    t = sp.Function("t", nonnegative=True)  # t(i) = M - c_i
    M = sp.Symbol("M", real=True)
    X = sp.Symbol("X", nonnegative=True)  # |score(r)|
    u = sp.Symbol("u", nonnegative=True)  # the cited inequality's slack
    d.define("Write K = d/2, A_i = |S_{i+1}|, c_i = |h_{i+1} - h_i|, and M = max_i c_i (the maximum includes "
             "c_{d/2-1} = |h_{d/2-1}|, since h_{d/2} = 0): by the definition of the maximum, c_i = M - t_i with "
             "t_i >= 0 for every i. Write X = |score(r)|.")
    pairs_sum = lambda body: sp.Sum(body, (i, 0, n_pairs - 1))  # noqa: E731
    cited = d.hypothesis("The cited inequality, with its slack u >= 0: X + u = sum_{i<K} A_i (M - t_i) (a premise of "
                         "this statement: the triangle inequality above)", sp.Eq(X + u, pairs_sum(A(i) * (M - t(i)))))
    linear = sp.Eq(pairs_sum(A(i) * (M - t(i))), M * pairs_sum(A(i)) - pairs_sum(A(i) * t(i)), evaluate=False)
    d.equal("a sum is linear in its body: sum_i A_i (M - t_i) = M sum_i A_i - sum_i A_i t_i", linear.lhs, linear.rhs,
            methods=("expand", "sums"))
    d.rewrite_with("so X + u = M sum_i A_i - sum_i A_i t_i, i.e. M sum_i A_i - X = u + sum_i A_i t_i", linear,
                   sp.Eq(cited.rhs, cited.lhs, evaluate=False))
    d.assumed("and u + sum_i A_i t_i >= 0: u >= 0, and a sum of products of numbers >= 0", u + pairs_sum(A(i) * t(i)),
              "nonnegative")
    from . import bridge

    d.checked("so X <= M sum_i A_i: M sum_i A_i - X, less the premise's two sides' difference times -1, is "
              "u + sum_i A_i t_i, >= 0 by the sorts", bridge.formal([sp.Le(X, M * pairs_sum(A(i)), evaluate=False)],
                                                                  [cited]), ("sign", ((("hyp", 0), ("num", -1, 1)),)))
    d.remark("Reading: M sum_i A_i - X = u + sum_i A_i t_i >= 0, i.e. |score(r)| <= (max_i |h_{i+1} - h_i|) "
             "sum_{j=1}^{d/2} |S_j(r)| = (max_i |h_{i+1} - h_i|) (d/2) B(r), B(r) = (1/(d/2)) sum_j |S_j(r)| the "
             "curve of RoFormer's Figure 2 (pemath.rope.long_term_decay).")
    j = sp.Symbol("j", integer=True, positive=True)
    half = sp.Symbol("h", integer=True, positive=True)
    b0 = sp.summation(j, (j, 1, half)) / half
    d.equal("At r = 0 every e_i = 1, so |S_j| = j and B(0) = (1/(d/2)) sum_{j=1}^{d/2} j = (d/2 + 1)/2",
            b0, (half + 1) / 2, methods=("expand", "simplify"))
    d.cite("|S_j(r)| <= j for every r (triangle inequality, each |e_i| = 1), so B(r) <= B(0): the bound is largest "
           "at distance 0.", source="Rudin, Principles of Mathematical Analysis, Theorem 1.33(e) (triangle inequality)")
    return d


def curve(r: int | sp.Expr, dim: int, base: int) -> sp.Expr:
    """B(r) = (1/(d/2)) sum_{j=1}^{d/2} |S_j(r)|, S_j(r) = sum_{i<j} e^{i r theta_i}, theta_i = base^(-2i/d), exactly
    (each modulus as the square root of its real part squared plus its imaginary part squared), as finite sums."""
    i = sp.Symbol("i", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True, positive=True)
    th = sp.Integer(base) ** (sp.Rational(-2, dim) * i)
    re, im = sp.Sum(sp.cos(r * th), (i, 0, j - 1)), sp.Sum(sp.sin(r * th), (i, 0, j - 1))
    return sp.Sum(sp.sqrt(re**2 + im**2), (j, 1, dim // 2)) / (dim // 2)
