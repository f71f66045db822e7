r"""ALiBi (Press, Smith and Lewis 2022): relative biases, the softmax's row invariance, the slopes.

* The causal bias :math:`-m(i - j)` (and its mask :math:`j > i`) depends on :math:`i - j` only;
  the reference code's :math:`m\,j` differs from it by :math:`m\,i`, constant along the row.
* :math:`\mathrm{softmax}(x + c) = \mathrm{softmax}(x)`, so both give the same attention.
* For :math:`n = 2^j` heads the reference ``get_slopes`` (start :math:`2^{-2^{-(\log_2 n - 3)}}`,
  ratio equal to the start) gives :math:`m_k = 2^{-8k/n}`, :math:`k = 1 \dots n`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .. import alibi as _alibi
from . import shipped as _shipped
from ._decide import Derivation, unevaluated

__all__ = [
    "causal",
    "shifted",
    "symmetric",
    "reference_slopes",
    "reference_exponents",
    "relative",
    "softmax_shift",
    "softmax_shift_symbolic_n",
    "causal_equals_shifted",
    "slopes_exact",
    "slopes_symbolic",
]

i, j = sp.symbols("i j", integer=True, nonnegative=True)  # query and key positions
slope = sp.Symbol("m", positive=True)
c = sp.Symbol("c", real=True)


def causal(q: sp.Expr, k: sp.Expr, m: sp.Expr = slope) -> sp.Expr:
    """The paper's bias on a visible entry (k <= q): -m (q - k)."""
    return -m * (q - k)


def shifted(q: sp.Expr, k: sp.Expr, m: sp.Expr = slope) -> sp.Expr:
    """The reference code's (and BLOOM's) bias on a visible entry: m k."""
    return m * k


def symmetric(q: sp.Expr, k: sp.Expr, m: sp.Expr = slope) -> sp.Expr:
    """The bidirectional bias: -m |q - k|."""
    return -m * sp.Abs(q - k)


def _lg(n: int) -> int:
    lg = n.bit_length() - 1
    if n < 1 or n != 1 << lg:
        raise ValueError(f"n must be a power of two, got {n}")
    return lg


def slope_ratio(start: sp.Expr) -> sp.Expr:
    """The reference's ratio between consecutive slopes: the start itself."""
    return start


def reference_slopes(n: int) -> list[sp.Expr]:
    """The reference ``get_slopes_power_of_2(n)`` in exact arithmetic.

    ``start = 2**(-2**-(log2(n) - 3))``, ``ratio = start``, slopes ``start * ratio**k`` for
    ``k = 0 .. n-1``; the ratio is :func:`slope_ratio` (the mutation tests patch wrong ones).
    """
    start = sp.Integer(2) ** (-sp.Integer(2) ** (-(sp.Integer(_lg(n)) - 3)))
    r = slope_ratio(start)
    return [start * r**k for k in range(n)]


def reference_exponents(n: int) -> list[sp.Expr]:
    """The base-2 logarithms of :func:`reference_slopes`, exactly: log2(start) + k log2(ratio).

    Cheaper than the powers themselves for large n (rational arithmetic only).
    """
    e_start = -sp.Integer(2) ** (-(sp.Integer(_lg(n)) - 3))
    e_ratio = sp.expand_log(sp.log(slope_ratio(sp.Integer(2) ** e_start)), force=True, factor=True) / sp.log(2)
    return [e_start + k * e_ratio for k in range(n)]


def claimed_bias(q: sp.Expr, k: sp.Expr) -> sp.Expr:
    """The bias the claim calls relative: the causal form -m (i - j)."""
    return causal(q, k)


def relative() -> Derivation:
    """The causal and symmetric biases, and the mask, depend on i - j only.

    The bias claimed relative is :func:`claimed_bias` (the mutation tests patch :func:`shifted` in, which is
    not).
    """
    d = Derivation("ALiBi's bias is a function of i - j")
    s = sp.Symbol("s", integer=True)
    b = claimed_bias(i, j)
    d.define("Bias of query i and key j (visible, j <= i):", sp.Eq(sp.Symbol("B_ij"), b, evaluate=False))
    d.zero("shifting both positions by s leaves it unchanged: B(i+s, j+s) - B(i, j) = 0",
        unevaluated(lambda: claimed_bias(i + s, j + s) - b),
           methods=("expand",))
    d.zero("the mask j > i is the sign of j - i, which the same shift leaves unchanged",
        unevaluated(lambda: ((j + s) - (i + s)) - (j - i)),
           methods=("expand",))
    d.zero("the symmetric (bidirectional) form -m|i - j| is unchanged too",
        unevaluated(lambda: symmetric(i + s, j + s) - symmetric(i, j)),
           methods=("expand",))
    d.zero("the reference code's m j differs from -m(i - j) by m i, the same for every key j of row i",
           unevaluated(lambda: sp.diff(shifted(i, j) - causal(i, j), j)), methods=("expand",))
    d.equal("that row constant is m i", shifted(i, j) - causal(i, j), slope * i, methods=("expand",))
    return d


def logit_shift(k: int) -> sp.Expr:
    """The constant added to logit k: the same c for every k."""
    return c


def normaliser(v: sp.Expr) -> sp.Expr:
    """softmax's function of each logit: exp."""
    return sp.exp(v)


def softmax_shift(lengths: Sequence[int] = (3, 4, 5)) -> Derivation:
    """softmax(x + c) = softmax(x) for symbolic x of each length and symbolic c.

    Decided by cross-multiplication: both denominators are sums of exponentials of reals,
    hence positive (decided), so the fractions are equal iff the cross products are
    (decided by expanding exp(x + c) = exp(x) exp(c)). Entry k gets :func:`logit_shift` and the
    normaliser is :func:`normaliser`: the mutation tests patch a shift that varies with k and plain
    normalisation, which are not invariant.
    """
    d = Derivation("softmax is invariant to adding a constant to every logit")
    for L in lengths:
        x = sp.symbols(f"x_0:{L}", real=True)
        y = [x[k] + logit_shift(k) for k in range(L)]
        num_x, num_y = [normaliser(v) for v in x], [normaliser(v) for v in y]
        den_x = unevaluated(lambda: sp.Add(*[normaliser(v) for v in x]))  # noqa: B023
        den_y = unevaluated(lambda: sp.Add(*[normaliser(v) for v in y]))  # noqa: B023
        d.true(f"length {L}: both denominators are positive",
               sp.And(sp.Gt(den_x, 0, evaluate=False), sp.Gt(den_y, 0, evaluate=False)))
        cross = unevaluated(lambda: sp.Matrix([num_y[k] * den_x - num_x[k] * den_y for k in range(L)]))  # noqa: B023
        d.zero(f"length {L}: softmax(x + c)_k = softmax(x)_k for every k, as the cross products "
               "exp(x_k + c) sum_j exp(x_j) and exp(x_k) sum_j exp(x_j + c) are equal", cross, methods=("expand",))
    return d


def softmax_shift_symbolic_n() -> Derivation:
    """Any length N at once: sum_j f(x_j + c) = e^c sum_j f(x_j), so the e^c cancels."""
    d = Derivation("softmax is invariant to a constant, any length")
    x = sp.IndexedBase("x", real=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    N = sp.Symbol("N", integer=True, positive=True)
    d.zero("each term: f(x_k + c) = e^c f(x_k)", normaliser(x[k] + c) - sp.exp(c) * normaliser(x[k]), methods=("expand",))
    S = sp.Sum(sp.exp(x[k]), (k, 0, N - 1))
    d.equal("so a constant factor leaves the sum: the denominator of softmax(x + c) is e^c times that of softmax(x)",
            sp.Sum(sp.exp(x[k] + c), (k, 0, N - 1)), sp.exp(c) * S, methods=("sums",))
    d.true("e^c > 0, so it cancels from softmax(x + c)_i = e^c exp(x_i) / (e^c sum_k exp(x_k))",
        unevaluated(lambda: sp.Gt(sp.exp(c), 0)))
    d.equal("leaving softmax(x)_i",
        unevaluated(lambda: sp.exp(c) * sp.exp(x[i]) / (sp.exp(c) * S)), sp.exp(x[i]) / S, methods=("expand",))
    d.equal("so softmax(x + c)_i = softmax(x)_i for every length N and every shift c, in one step",
            sp.exp(x[i] + c) / sp.Sum(sp.exp(x[k] + c), (k, 0, N - 1)), sp.exp(x[i]) / S,
            methods=("expand", "sums", "simplify"))
    return d


def causal_equals_shifted(
    rows: Sequence[int] = (2, 3, 4)
) -> Derivation:
    """Row i of the causal and the shifted bias give the same softmax (over the visible keys j <= i)."""
    d = Derivation("causal and shifted ALiBi give the same attention")
    d.define("Masked entries (j > i) are -oo in both forms: the softmax of row i runs over the visible keys j = 0..i.")
    d.equal("in every row i, at every key j: the shifted logit is the causal one plus m i, one constant per row, so "
            "softmax (invariant to a constant) gives the same attention", shifted(i, j) - causal(i, j), slope * i)
    for row in rows:
        x = [causal(sp.Integer(row), sp.Integer(k)) for k in range(row + 1)]
        y = [shifted(sp.Integer(row), sp.Integer(k)) for k in range(row + 1)]
        key = sp.Symbol("j", integer=True, nonnegative=True)
        d.enumerated(f"row {row}: the shifted logits are the causal ones plus one constant, m i = {row} m", key,
                     range(row + 1), sp.Eq(shifted(sp.Integer(row), key) - causal(sp.Integer(row), key), slope * row,
                                           evaluate=False))
        den_x, den_y = sp.Add(*[sp.exp(v) for v in x]), sp.Add(*[sp.exp(v) for v in y])
        d.true(f"row {row}: both denominators are positive", unevaluated(lambda: sp.And(den_x > 0, den_y > 0)))
        cross = sp.Matrix([sp.exp(y[k]) * den_x - sp.exp(x[k]) * den_y for k in range(row + 1)])
        d.zero(f"row {row}: hence the same softmax (the cross products are equal)", cross, methods=("expand",))
    return d


def slopes_exact(ns: Sequence[int] = tuple(2**e for e in range(11))) -> Derivation:
    """Decide, head by head in exact arithmetic, that the reference slopes are 2^(-8k/n)."""
    d = Derivation("ALiBi slopes for n = 1, 2, 4, ..., exact")
    d.define("The reference get_slopes_power_of_2(n): start = 2^(-2^-(log2 n - 3)), ratio = start, "
             "slopes start * ratio^k for k = 0..n-1, each a power of 2 with exponent log2(start) + k log2(ratio).")
    x_, y_, t_ = sp.symbols("x y t", real=True)
    d.equal("2^x / 2^y = 2^(x - y)", unevaluated(lambda: sp.Integer(2) ** x_ / sp.Integer(2) ** y_),
            sp.Integer(2) ** (x_ - y_), methods=("expand", "powsimp"))
    d.solved("2^t = 1 only at t = 0 on the reals, so 2^x = 2^y (2^(x - y) = 1) only at x = y: two slopes are equal "
             "iff their exponents are, exact rationals", sp.Eq(sp.Integer(2) ** t_, 1), t_, [0])
    small = [n for n in ns if n <= 8]
    k_ = sp.Symbol("k", integer=True, nonnegative=True)
    for n in small:
        start = sp.Integer(2) ** (-sp.Integer(2) ** (-(sp.Integer(_lg(n)) - 3)))
        d.enumerated(f"n = {n}: the slopes start * ratio^k (k = 0..{n - 1}) are 2^(-8(k+1)/n)", k_, range(n),
                     sp.Eq(start * slope_ratio(start) ** k_, sp.Integer(2) ** (-8 * (k_ + 1) / sp.Integer(n)),
                           evaluate=False))
    for n in ns:
        if n <= 64:  # the shipped slopes, against the formula (larger n: the exponents below, exactly)
            _shipped.agrees(d, f"n = {n}: pemath.alibi.slopes(n) computes 2^(-8k/n), k = 1..{n}", _alibi.slopes(n),
                            [sp.Integer(2) ** sp.Rational(-8 * k, n) for k in range(1, n + 1)])
        e_start = -sp.Integer(2) ** (-(sp.Integer(_lg(n)) - 3))
        e_ratio = sp.expand_log(sp.log(slope_ratio(sp.Integer(2) ** e_start)), force=True, factor=True) / sp.log(2)
        d.enumerated(f"n = {n}: every exponent log2(start) + k log2(ratio) is -8(k+1)/n, k = 0..{n - 1}", k_,
                     range(n), sp.Eq(e_start + k_ * e_ratio, -8 * (k_ + 1) / sp.Integer(n), evaluate=False))
    return d


def slopes_symbolic() -> Derivation:
    """For n = 2^j (j symbolic): start = 2^(-8/n) and slope_k = start * ratio^(k-1) = 2^(-8k/n)."""
    d = Derivation("ALiBi slopes for n = 2^j, every j")
    jj = sp.Symbol("j", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True, positive=True)
    n = 2**jj
    start = sp.Integer(2) ** (-sp.Integer(2) ** (-(jj - 3)))
    d.define("For n = 2^j heads, log2 n = j and the reference start is", start)
    d.equal("start = 2^(-2^(3-j)) = 2^(-8/n)", start, sp.Integer(2) ** (-8 / n), methods=("expand", "powsimp"))
    slope_k = start * slope_ratio(start) ** (k - 1)
    d.define("The k-th slope (k = 1..n) is start * ratio^(k-1):", slope_k)
    d.equal("with ratio = start: slope_k = start^k = 2^(-8k/n)", slope_k, sp.Integer(2) ** (-8 * k / n),
            methods=("expand", "powsimp"))
    d.remark("So the slopes form the geometric sequence 2^(-8/n), 2^(-16/n), ..., 2^(-8) = 1/256: "
          "the first and the ratio are both 2^(-8/n).")
    return d
