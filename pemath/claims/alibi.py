"""ALiBi (Press, Smith and Lewis 2022): relative biases, softmax row invariance, geometric slopes."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import alibi as sym
from ..symbolic import bridge
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import U64, phase_bound
from .. import alibi

_REFS = (
    "Press, Smith and Lewis 2022, 'Train Short, Test Long' (ALiBi), section 3 and figure 3",
    "ofirpress/attention_with_linear_biases (fairseq fork), get_slopes and the future mask",
)

# ----------------------------------------------------------------------------------------------
# alibi.relative
# ----------------------------------------------------------------------------------------------


def _relative_proof() -> Verdict:
    return Verdict(sym.relative())


def _relative_statement() -> sp.Basic:
    s = sp.Symbol("s", integer=True)
    return sp.Eq(sym.causal(sym.i + s, sym.j + s), sym.causal(sym.i, sym.j), evaluate=False)


def _relative_formal() -> tuple:
    i, j = sp.symbols("i j", integer=True, nonnegative=True)
    s, m = sp.Symbol("s", integer=True), sp.Symbol("m", positive=True)
    with sp.evaluate(False):  # the statement as written: SymPy would cancel s on construction
        shifted_bias, bias = -m * ((i + s) - (j + s)), -m * (i - j)
        mask_shifted, mask = (j + s) - (i + s), j - i
        sym_shifted, sym_bias = -m * sp.Abs((i + s) - (j + s)), -m * sp.Abs(i - j)
        return bridge.formal([sp.Eq(shifted_bias, bias), sp.Eq(mask_shifted, mask), sp.Eq(sym_shifted, sym_bias),
                              sp.Eq(m * j, bias + m * i)])


def _relative_numeric() -> str:

    causal = sp.lambdify((sym.i, sym.j, sym.slope), sym.causal(sym.i, sym.j), "numpy")

    def check(heads: int, q_len: int, k_len: int, offset: int, shift: int, form: str) -> None:
        b = alibi.bias(heads, q_len, k_len, form=form, offset=offset)
        assert np.array_equal(b[:, 1:, 1:], b[:, :-1, :-1]), f"{form} bias is not constant along the diagonals"
        m = alibi.slopes(heads)[:, None, None]
        qi = offset + np.arange(q_len)[:, None]
        kj = np.arange(k_len)[None, :]
        want = causal(qi, kj, m)
        want = -np.abs(want) if form == "symmetric" else np.where(kj > qi, -np.inf, want)
        tol = 2 * U64 * np.abs(want[np.isfinite(want)]).max(initial=0.0)
        fin = np.isfinite(want)
        assert np.array_equal(np.isfinite(b), fin), f"{form}: the mask is not j > i"
        assert np.max(np.abs(b[fin] - want[fin]), initial=0.0) <= tol, f"{form}: bias is not -m (i - j)"
        # the same relative positions at another offset give the same values
        b2 = alibi.bias(heads, q_len, k_len + shift, form=form, offset=offset + shift)
        assert np.array_equal(b2[:, :, shift:], b), f"{form}: moving queries and keys by {shift} changed the bias"
        if form == "causal":
            sh = alibi.bias(heads, q_len, k_len, form="shifted", offset=offset)
            row = np.where(fin, sh, 0.0) - np.where(fin, b, 0.0)
            err = float(np.max(np.abs(np.where(fin, row - m * qi, 0.0))))
            assert err <= 4 * U64 * (m.max() * (offset + q_len + k_len)), "shifted - causal is not m i along each row"

    return for_all(check, examples=30, heads=Ints(1, 24), q_len=Ints(1, 24), k_len=Ints(24, 48),
                   offset=Ints(0, 10**6), shift=Ints(0, 7), form=Choice(("causal", "symmetric")))


register(
    Claim(
        id="alibi.relative",
        name="ALiBi's bias depends only on the relative position",
        title="ALiBi's bias -m(i - j) and its mask j > i depend on i - j only; the reference m j adds m i per row",
        kind="theorem",
        family="alibi",
        statement=_relative_statement,
        formal=_relative_formal,
        proof=_relative_proof,
        checks=(Check("numeric", _relative_numeric),),
        references=_REFS,
    )
)

# ----------------------------------------------------------------------------------------------
# alibi.softmax_shift
# ----------------------------------------------------------------------------------------------


def _softmax_proof() -> Verdict:
    d = sym.softmax_shift()
    d.steps.extend(sym.softmax_shift_symbolic_n().steps)
    d.steps.extend(sym.causal_equals_shifted().steps)
    return Verdict(d)


def _softmax_statement() -> sp.Basic:
    x = sp.IndexedBase("x", real=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    N = sp.Symbol("N", integer=True, positive=True)
    i = sym.i
    lhs = sp.exp(x[i] + sym.c) / sp.Sum(sp.exp(x[k] + sym.c), (k, 0, N - 1))
    return sp.Eq(lhs, sp.exp(x[i]) / sp.Sum(sp.exp(x[k]), (k, 0, N - 1)), evaluate=False)


def _softmax_formal() -> tuple:
    """For every length N, shift c and logits x: softmax(x + c)_i = softmax(x)_i; and in every row i the shifted
    bias m j is the causal -m (i - j) plus the row's constant m i."""
    N, i, k = sp.Symbol("N", integer=True, positive=True), *sp.symbols("i k", integer=True, nonnegative=True)
    j, m, c = sp.Symbol("j", integer=True, nonnegative=True), sp.Symbol("m", positive=True), sp.Symbol("c", real=True)
    x = sp.IndexedBase("x", real=True)
    with sp.evaluate(False):
        shifted = sp.exp(x[i] + c) / sp.Sum(sp.exp(x[k] + c), (k, 0, N - 1))
        plain = sp.exp(x[i]) / sp.Sum(sp.exp(x[k]), (k, 0, N - 1))
        row = sp.Eq(m * j - (-m * (i - j)), m * i)
    return bridge.formal([sp.Eq(shifted, plain), row])


def _plain_softmax(b: np.ndarray) -> np.ndarray:
    """exp(x) / sum exp(x) along the keys, with no max subtracted (that would assume the claim)."""
    e = np.exp(b)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_numeric() -> str:

    def check(heads: int, q_len: int, k_len: int, offset: int) -> None:
        causal = alibi.bias(heads, q_len, k_len, form="causal", offset=offset)
        shifted = alibi.bias(heads, q_len, k_len, form="shifted", offset=offset)
        top = float(np.max(np.abs(np.where(np.isfinite(shifted), shifted, 0.0))))
        top = max(top, float(np.max(np.abs(np.where(np.isfinite(causal), causal, 0.0)))))
        pa, pb = _plain_softmax(causal), _plain_softmax(shifted)
        err = float(np.max(np.abs(pa - pb)))
        tol = 2 * phase_bound(top, terms=k_len)
        assert err <= tol, f"causal and shifted attention differ by {err:.3g} > {tol:.3g}"

    return for_all(check, examples=30, heads=Ints(1, 16), q_len=Ints(1, 32), k_len=Ints(32, 300),
                   offset=Ints(0, 300))


def _softmax_mpmath() -> str:

    heads, k_len = 8, 4096
    m = alibi.slopes(heads)
    worst, worst64 = mpmath.mpf(0), 0.0
    with mpmath.workdps(50):
        for h, qi in ((0, 0), (0, 17), (7, 1023), (3, k_len - 1)):
            mh = mpmath.mpf(float(m[h]))
            xs = [-mh * (qi - j) for j in range(qi + 1)]  # causal, exact integers times the float64 slope
            ys = [mh * j for j in range(qi + 1)]  # shifted
            ex, ey = [mpmath.exp(v) for v in xs], [mpmath.exp(v) for v in ys]
            sx, sy = mpmath.fsum(ex), mpmath.fsum(ey)
            worst = max(worst, max(abs(a / sx - b / sy) for a, b in zip(ex, ey)))
            # pemath's float64 rows, with a stable softmax, against the 50-digit one
            for form in ("causal", "shifted"):
                row = alibi.bias(heads, 1, qi + 1, form=form, offset=qi)[h, 0]
                p = np.exp(row - row.max())
                p /= p.sum()
                worst64 = max(worst64, max(abs(float(a / sx) - b) for a, b in zip(ex, p)))
    if worst > mpmath.mpf(10) ** -45:
        raise CheckFailure(f"causal and shifted softmax differ by {mpmath.nstr(worst, 5)} at 50 digits")
    tol = phase_bound(float(m.max()) * k_len, terms=k_len)
    if worst64 > tol:
        raise CheckFailure(f"float64 attention from pemath's bias off by {worst64:.3g} > {tol:.3g}")
    return f"identical to {mpmath.nstr(worst, 3)} at 50 digits over rows of 4096 keys; float64 within {worst64:.2g}"


register(
    Claim(
        id="alibi.softmax_shift",
        name="Softmax ignores a shift per row, so both ALiBi forms agree",
        title="softmax(x + c) = softmax(x): the causal -m(i-j) and the shifted m j ALiBi give the same attention",
        kind="theorem",
        family="alibi",
        statement=_softmax_statement,
        formal=_softmax_formal,
        proof=_softmax_proof,
        checks=(Check("numeric", _softmax_numeric), Check("mpmath", _softmax_mpmath)),
        references=_REFS + ("HF BLOOM build_alibi_tensor (the shifted form)",),
    )
)

# ----------------------------------------------------------------------------------------------
# alibi.slopes_geometric
# ----------------------------------------------------------------------------------------------

_POWERS = tuple(2**e for e in range(11))


def _slopes_proof() -> Verdict:
    d = sym.slopes_symbolic()
    d.steps.extend(sym.slopes_exact(_POWERS).steps)
    return Verdict(d)


def _slopes_statement() -> sp.Basic:
    k = sp.Symbol("k", integer=True, positive=True)
    jj = sp.Symbol("j", integer=True, nonnegative=True)
    n = 2**jj
    start = sp.Integer(2) ** (-sp.Integer(2) ** (-(jj - 3)))
    return sp.Eq(sp.Mul(start, sp.Pow(start, k - 1, evaluate=False), evaluate=False),
                 sp.Integer(2) ** (-8 * k / n), evaluate=False)


def _slopes_numeric() -> str:

    checked = 0
    for n in _POWERS:
        got = alibi.slopes(n)
        # the reference's float recipe: start * ratio**k, start = 2**(-2**-(log2(n) - 3))
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ref = np.array([start * start**k for k in range(n)])
        # start carries one rounding, which start**k multiplies by k: (k + 2) roundings in all, doubled
        rel = np.abs(got - ref) / got / (2 * (np.arange(n) + 2) * U64)
        if rel.max() > 1:
            k = int(np.argmax(rel))
            raise CheckFailure(f"n = {n}: slope {k} differs from the reference float recipe {ref[k]!r} by more "
                               f"than {2 * (k + 2)} ulp: {got[k]!r}")
        checked += n
    # beyond powers of two: the extra heads take every other slope of 2c heads
    for n in (3, 5, 6, 7, 12, 20, 24, 40, 48, 96):
        c = 1 << (n.bit_length() - 1)
        got = alibi.slopes(n)
        extra = alibi.slopes(2 * c)[0::2][: n - c]
        if not (np.array_equal(got[:c], alibi.slopes(c)) and np.array_equal(got[c:], extra)):
            raise CheckFailure(f"n = {n}: slopes are not those of {c} heads then every other one of {2 * c}")
    return f"{checked} slopes within 2(k + 2) ulp of the reference float recipe; 10 non-powers of two as documented"


def _slopes_mpmath() -> str:

    n_checked = 0
    with mpmath.workdps(50):
        for n in _POWERS:
            got = alibi.slopes(n)
            for k in range(1, n + 1):
                exact = float(mpmath.power(2, mpmath.mpf(-8 * k) / n))  # the float64 nearest 2^(-8k/n)
                if got[k - 1] != exact:
                    raise CheckFailure(f"slopes({n})[{k - 1}] = {got[k - 1]!r} is not the float64 nearest "
                                       f"2^(-8*{k}/{n}) = {exact!r}")
                n_checked += 1
    return f"{n_checked} slopes equal the float64 nearest 2^(-8k/n) (50-digit reference)"


def _slopes_formal() -> tuple:
    """For n = 2^j heads (every j): the reference start 2^(-2^(3 - j)) is 2^(-8/n), and slope k (k >= 1),
    start times ratio^(k - 1) with ratio = start, is 2^(-8k/n)."""
    jj, k = sp.Symbol("j", integer=True, nonnegative=True), sp.Symbol("k", integer=True, positive=True)
    two, n = sp.Integer(2), 2 ** sp.Symbol("j", integer=True, nonnegative=True)
    start = two ** (-two ** (3 - jj))
    return bridge.formal([sp.Eq(start, two ** (-8 / n)), sp.Eq(start * start ** (k - 1), two ** (-8 * k / n))])


register(
    Claim(
        id="alibi.slopes_geometric",
        name="ALiBi's slopes are geometric",
        title="For n = 2^j heads the reference slopes are 2^(-8k/n), k = 1..n (start = ratio = 2^(-8/n))",
        kind="theorem",
        family="alibi",
        statement=_slopes_statement,
        formal=_slopes_formal,
        proof=_slopes_proof,
        checks=(Check("numeric", _slopes_numeric), Check("mpmath", _slopes_mpmath)),
        references=_REFS,
    )
)
