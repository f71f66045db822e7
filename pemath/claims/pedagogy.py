"""The seeds' teaching encodings: integer (unbounded), normalized (length-dependent), binary (jumpy)."""

from __future__ import annotations

import functools
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from ..symbolic import pedagogy as sym
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from ._tolerance import U64, phase_bound
from .. import pedagogy
from .. import sinusoidal

_SEED_INTRO = "Fleetwood, 'You could have designed state of the art positional encoding', huggingface.co/blog/designing-positional-encoding, 2024: integer, normalized, binary"
_SEED_RENARD = "Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io"
_SEED_003 = "'Position Embeddings' (study notes after kazemnejad.com/blog/transformer_architecture_positional_encoding) (learned tables are bounded in length; binary positions 'in the world of floats')"

# ----------------------------------------------------------------------------------------------
# pedagogy.integer_unbounded
# ----------------------------------------------------------------------------------------------


def _integer_proof() -> Verdict:
    return Verdict(sym.integer_unbounded())


def _integer_statement() -> sp.Basic:
    B = sp.Symbol("B", integer=True, nonnegative=True)
    return sp.Gt(label("PE(B + 1)_j", r"PE(B + 1)_j"), B)


def _integer_numeric() -> str:

    def check(bound: int, dim: int) -> None:
        pe = pedagogy.integer([bound, bound + 1], dim)
        assert np.all(pe[1] > bound), f"PE({bound + 1}) = {pe[1]} does not exceed {bound}"
        assert np.all(pe[1] == bound + 1) and np.all(pe[0] == bound), "entries are not the position, exactly"
        # the norm sqrt(d p^2) carries a few roundings: allow 4 ulp below p
        assert np.linalg.norm(pe[1]) >= float(bound + 1) * (1 - 4 * U64), "the norm is below the largest entry"

    return for_all(check, examples=25, bound=Ints(0, 2**53 - 1), dim=Ints(1, 64))


def _integer_formal() -> tuple:
    """Every bound B is exceeded by the entry at position B + 1, and |PE(p)|^2 = d p^2 is at least p^2."""
    B, p = sp.symbols("B p", integer=True, nonnegative=True)
    d = sp.Symbol("d", integer=True, positive=True)
    return bridge.formal([sp.Lt(B, B + 1, evaluate=False), sp.Le(p ** 2, d * p ** 2, evaluate=False)])


register(
    Claim(
        id="pedagogy.integer_unbounded",
        name="The integer encoding is unbounded",
        title="The integer encoding PE(p)_j = p is unbounded: for every integer bound B >= 0, position B + 1 "
              "exceeds it (a real bound reduces to its ceiling: a reading)",
        kind="theorem",
        family="pedagogy",
        statement=_integer_statement,
        formal=_integer_formal,
        proof=_integer_proof,
        checks=(Check("numeric", _integer_numeric),),
        references=(_SEED_INTRO, _SEED_RENARD),
    )
)

# ----------------------------------------------------------------------------------------------
# pedagogy.normalized_depends_on_length
# ----------------------------------------------------------------------------------------------


def _normalized_proof() -> Verdict:
    return Verdict(sym.normalized_depends_on_length())


def _normalized_statement() -> sp.Basic:
    return sp.Ne(sp.Rational(2, 4), sp.Rational(2, 8), evaluate=False)


def _normalized_numeric() -> str:

    a = pedagogy.normalized(2, 3, length=4)
    b = pedagogy.normalized(2, 3, length=8)
    if not (np.all(a == 0.5) and np.all(b == 0.25)):
        raise CheckFailure(f"normalized(2, length=4) = {a}, length=8: {b}; expected 1/2 and 1/4 exactly")

    def check(p: int, length: int, extra: int, dim: int) -> None:
        p = min(p, length - 1)
        other = length + extra
        x, y = pedagogy.normalized([p], dim, length=length), pedagogy.normalized([p], dim, length=other)
        # p / L is correctly rounded (one IEEE division of exact integers): compare to the exact rational
        assert np.all(x == float(Fraction(p, length))) and np.all(y == float(Fraction(p, other))), "not p / L"
        if p >= 1:
            assert np.all(x != y), f"position {p} has the same encoding at lengths {length} and {other}"
        assert np.all((x >= 0) & (x < 1)), "not in [0, 1)"

    summary = for_all(check, examples=25, p=Ints(0, 10**6), length=Ints(1, 10**6), extra=Ints(1, 10**6),
                      dim=Ints(1, 16))
    return f"2 at lengths 4 and 8: 1/2 and 1/4 exactly; {summary}"


def _normalized_formal() -> tuple:
    """Position 2 is 2/4 at length 4 and 2/8 at length 8; for every position p and lengths L < L + delta, the
    cross-multiplied difference p (L + delta) - L p = delta p is positive, as are the denominators, so p/L !=
    p/(L + delta); and the distance from the last position L - 1 - t to 1 is (1 + t)/L > 0."""
    L, dl, p = sp.symbols("L delta p", integer=True, positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)
    with sp.evaluate(False):
        rels = [sp.Ne(sp.Integer(2) / 4, sp.Integer(2) / 8), sp.Eq(p * (L + dl) - L * p, dl * p), sp.Lt(0, p * dl),
                sp.Lt(0, L * (L + dl)), sp.Eq(1 - (L - 1 - t) / L, (1 + t) / L), sp.Lt(0, (1 + t) / L)]
    return bridge.formal(rels)


register(
    Claim(
        id="pedagogy.normalized_depends_on_length",
        name="The length-normalized encoding depends on the length",
        title="The length-normalized encoding p / L gives every position p >= 1 different vectors at different "
              "lengths (p = 0 is 0 at every length, by definition)",
        kind="theorem",
        family="pedagogy",
        statement=_normalized_statement,
        formal=_normalized_formal,
        proof=_normalized_proof,
        checks=(Check("numeric", _normalized_numeric),),
        references=(_SEED_INTRO, _SEED_RENARD),
    )
)

# ----------------------------------------------------------------------------------------------
# pedagogy.binary_bounded_unique_discontinuous
# ----------------------------------------------------------------------------------------------


def _binary_proof() -> Verdict:
    d = sym.binary_bounded_unique()
    d.steps.extend(sym.binary_jump().steps)
    d.steps.extend(sym.sinusoid_step().steps)
    return Verdict(d)


def _binary_formal() -> tuple:
    """At d = 8 (the largest d decided; d = 1..7 are decided by the SymPy kernel, from the shipped codes), with bit
    j of p written floor(p / 2^j) - 2 floor(p / 2^(j+1)): for every 0 <= p <= 255 each bit is in [0, 1] and the
    bits decode to p (so the 256 codes are distinct); for every 0 <= j <= 7 the codes of 2^j and 2^j - 1 differ
    in j + 1 places, squared distance j + 1; and for every t and w > 0 one sinusoidal pair moves by 2 - 2 cos w
    from t to t + 1."""
    p = sp.Symbol("p", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    t, w = sp.Symbol("t", real=True), sp.Symbol("omega", positive=True)

    def bit(x, k):  # noqa: ANN001, ANN202
        return sp.floor(x / sp.Integer(2) ** k) - 2 * sp.floor(x / sp.Integer(2) ** (k + 1))

    with sp.evaluate(False):
        bits = [bit(p, k) for k in range(8)]
        top = sp.Integer(2) ** j
        rels = [sp.Eq(sp.Add(*[sp.Integer(2) ** k * bits[k] for k in range(8)]), p),
                *[sp.Le(0, x) for x in bits], *[sp.Le(x, 1) for x in bits],
                sp.Eq(sp.Add(*[(bit(top, k) - bit(top - 1, k)) ** 2 for k in range(8)]), j + 1),
                sp.Eq((sp.sin(w * (t + 1)) - sp.sin(w * t)) ** 2 + (sp.cos(w * (t + 1)) - sp.cos(w * t)) ** 2,
                      2 - 2 * sp.cos(w))]
    with sp.evaluate(False):
        hyps = [sp.Le(0, p), sp.Le(p, 255), sp.Le(0, j), sp.Le(j, 7)]
    return bridge.formal(rels, hyps)


def _binary_statement() -> sp.Basic:
    j = sp.Symbol("j", integer=True, nonnegative=True)
    return sp.Eq(label("|PE(2^j) - PE(2^j - 1)|^2", r"\lVert PE(2^j) - PE(2^j - 1) \rVert^2"), j + 1, evaluate=False)


@functools.lru_cache(maxsize=1)
def _pair_step():
    s = sym.sinusoid_step().result
    return sp.lambdify(s["omega"], s["pair_step"], "numpy"), sp.lambdify(s["omega"], s["pair_step"], "mpmath")


def _binary_numeric() -> str:

    for dim in range(1, 15):
        p = np.arange(2**dim)
        codes = pedagogy.binary(p, dim)
        if not np.all((codes == 0) | (codes == 1)):
            raise CheckFailure(f"d = {dim}: an entry is outside {{0, 1}}")
        if len(np.unique(codes, axis=0)) != 2**dim:
            raise CheckFailure(f"d = {dim}: two positions share a code")
        if not np.array_equal(codes @ (2.0 ** np.arange(dim)), p.astype(float)):
            raise CheckFailure(f"d = {dim}: sum_j 2^j PE(p)_j is not p")
        steps = np.sum(np.diff(codes, axis=0) ** 2, axis=1)
        jumps = steps[2 ** np.arange(dim) - 1]  # from 2^j - 1 to 2^j
        if not (np.array_equal(jumps, np.arange(1, dim + 1)) and steps.max() == dim):
            raise CheckFailure(f"d = {dim}: squared steps at 2^j - 1 are {jumps.tolist()}, not j + 1")
    step, _ = _pair_step()

    def check(t: int, half: int, base: float) -> None:
        dim = 2 * half
        pe = sinusoidal.encode(np.array([t, t + 1]), dim, base=base, convention="interleaved")
        w = base ** (-2.0 * np.arange(half) / dim)
        got = float(np.sum((pe[1] - pe[0]) ** 2))
        want = float(np.sum(step(w)))
        tol = phase_bound(abs(t) + 1, terms=2 * dim, scale=4.0)
        assert abs(got - want) <= tol, f"|PE(t+1) - PE(t)|^2 = {got!r}, derived sum(2 - 2 cos w_i) = {want!r}"
        assert got <= float(np.sum(w**2)) + tol, "the sinusoid's step exceeds sum w_i^2"

    summary = for_all(check, examples=25, t=Ints(0, 10**6), half=Ints(1, 64), base=Choice([10000.0, 10.0, 1e6]))
    return f"binary: d = 1..14 exhaustively (bounded, unique, jumps sqrt(j + 1)); sinusoid step: {summary}"


def _binary_mpmath() -> str:

    _, step = _pair_step()
    dim = 16
    worst = 0.0
    with mpmath.workdps(60):
        w = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        want = mpmath.fsum(step(x) for x in w)
        for t in (10**6, 10**9, 2**40):
            direct = mpmath.fsum((mpmath.sin(x * (t + 1)) - mpmath.sin(x * t)) ** 2
                                 + (mpmath.cos(x * (t + 1)) - mpmath.cos(x * t)) ** 2 for x in w)
            if abs(direct - want) > mpmath.mpf(10) ** -45:
                raise CheckFailure(f"step at t = {t} is {mpmath.nstr(direct, 20)}, not sum(2 - 2 cos w_i)")
            pe = sinusoidal.encode(np.array([t, t + 1]), dim, convention="interleaved")
            got = float(np.sum((pe[1] - pe[0]) ** 2))
            tol = phase_bound(t + 1, terms=2 * dim, scale=4.0)
            if abs(got - float(want)) > tol:
                raise CheckFailure(f"float64 step at t = {t} off by {abs(got - float(want)):.3g} > {tol:.3g}")
            worst = max(worst, abs(got - float(want)) / tol)
    return (f"the step is the same at t = 10^6, 10^9, 2^40 to 1e-45 (60 digits); encode() within {worst:.2g} "
            "of its bound")


register(
    Claim(
        id="pedagogy.binary_bounded_unique_discontinuous",
        name="The 8-bit binary encoding is bounded and unique, but jumps",
        title="Binary encoding at d = 8: entries in {0, 1}, unique on [0, 2^d), but 2^j - 1 -> 2^j jumps by "
              "sqrt(j + 1); "
              "one sinusoid pair's squared step is 2 - 2 cos w at every t",
        kind="theorem",
        family="pedagogy",
        statement=_binary_statement,
        formal=_binary_formal,
        proof=_binary_proof,
        checks=(Check("numeric", _binary_numeric), Check("mpmath", _binary_mpmath)),
        references=(_SEED_INTRO, _SEED_RENARD, _SEED_003),
    )
)
