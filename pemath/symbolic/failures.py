"""Derivations behind bugs users hit (reported in public issue trackers; each claim names the issue or pull request), decided exactly.

* A rotation (with its attention factor) applied twice is one rotation by the doubled angle
  with the squared factor: what a kernel that rotates twice computes (TensorRT-LLM #16378).
* bfloat16 holds every integer up to 256 and not 257; float16 up to 2048 and not 2049: a
  position cast to them is rounded beyond (candle #3520).
* Keys rotated under one frequency and queries under another (a length-driven scaling whose
  base changed between the steps of one KV cache): the score depends on the absolute
  positions whenever the two frequencies differ in (0, pi) (at integer positions a difference in 2 pi Z is
  invisible).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ._decide import Derivation, ProofFailure, unevaluated
from .rope import rotation
from .notation import label

__all__ = ["rotation_twice", "integers_exact", "rounded", "bit_length", "round_to_bits", "mixed_frequencies", "hf_permutation",
           "gqa_wrong_heads", "linear_two_ways", "static_ntk", "factor_twice", "positions_rounded"]

phi, a = sp.Symbol("phi", real=True), sp.Symbol("a", positive=True)


def _rot(angle: sp.Expr) -> sp.Matrix:
    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def rotation_twice() -> Derivation:
    """(a R(phi)) (a R(phi)) = a^2 R(2 phi)."""
    d = Derivation("a rotation applied twice")
    d.define("One pair, rotated by the angle phi = p theta and scaled by the attention factor a:", a * _rot(phi))
    d.equal("applied twice it is a^2 R(2 phi): the doubled angle (position 2p) with the factor squared",
            (a * _rot(phi)) * (a * _rot(phi)), a**2 * _rot(2 * phi))
    d.solved("and a^2 = a only for a = 1 (a > 0): with an attention factor the amplitude is wrong as well",
             sp.Eq(a**2, a), a, [1])
    return d


def round_to_bits(n: int, bits: int) -> int:
    """``n`` rounded to ``bits`` significant bits, ties to even (exact rational arithmetic)."""
    if n == 0 or n.bit_length() <= bits:
        return n
    shift = n.bit_length() - bits
    q = Fraction(n, 2**shift)
    lo = q.numerator // q.denominator
    rest = q - lo
    up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and lo % 2 == 1)
    return (lo + up) * 2**shift


def rounded(n: sp.Expr, bits: int, e: sp.Expr | None = None) -> sp.Expr:
    """``n`` (a positive integer) rounded to ``bits`` significant bits, ties to even, as a SymPy formula: with e its
    bit length (2^(e-1) <= n < 2^e; floor(log2 n) + 1 when not given), the spacing u = 2^max(e - bits, 0), the
    nearest multiple of u (an even one on a tie). :func:`round_to_bits` computes the same in integers."""
    if e is None:
        e = sp.floor(sp.log(n) / sp.log(2)) + 1
    u = sp.Integer(2) ** sp.Max(e - bits, 0)
    lo = sp.floor(n / u)
    rest = n / u - lo
    odd = sp.Eq(lo - 2 * sp.floor(lo / 2), 1)  # lo mod 2 = 1
    up = sp.Piecewise((1, rest > sp.S.Half), (sp.Piecewise((1, odd), (0, True)), sp.Eq(rest, sp.S.Half)), (0, True))
    return (lo + up) * u


def bit_length(n: sp.Expr, e: sp.Expr) -> list:
    """e is the bit length of the integer n >= 1: 2^(e-1) - 1 < n < 2^e."""
    return [sp.Lt(sp.Integer(2) ** (e - 1) - 1, n), sp.Lt(n, sp.Integer(2) ** e)]


_N = sp.Symbol("n", integer=True, positive=True)
_WANT = label("want", r"\mathrm{want}", integer=True)


def integers_exact(fmt: str = "bfloat16", bits: int | None = None) -> Derivation:
    """Every integer 1..2^p - 1 (bit length e <= p) is unchanged by rounding to p bits, and so is 2^p; 2^p + 1 is
    not (it rounds to 2^p)."""
    p = bits if bits is not None else {"bfloat16": 8, "float16": 11}[fmt]
    top = 2**p
    n = sp.Symbol(f"n_{p}", integer=True, positive=True)  # named per format: one statement holds both formats
    g = sp.Symbol(f"g_{p}", integer=True, nonnegative=True)
    d = Derivation(f"{fmt}: the integers it holds exactly")
    d.define(f"{fmt} keeps {p} significant bits (its exponent range covers these integers): an integer n >= 1 of bit "
             f"length e (2^(e-1) <= n < 2^e) is exact iff rounding it to {p} significant bits leaves it unchanged",
             rounded(_N, p, sp.Symbol("e", integer=True, positive=True)))
    d.equal(f"an integer of at most {p} bits, e = {p} - g (g >= 0): the spacing is 2^max(-g, 0) = 1, so rounding "
            f"leaves it unchanged: every integer 1..2^{p} - 1 is exact", unevaluated(rounded, n, p, p - g), n)
    for n, e, want, why in ((top, p + 1, top, f"2^{p}, of {p + 1} bits, is a multiple of its spacing 2: exact"),
                            (top + 1, p + 1, top, f"2^{p} + 1 is not: a tie between 2^{p} and 2^{p} + 2, to the even "
                                                  f"one, {top}")):
        with sp.evaluate(False):
            case = sp.And(*bit_length(sp.Integer(n), sp.Integer(e)),
                          sp.Eq(rounded(sp.Integer(n), p, sp.Integer(e)), want))
        d.true(f"decided at the edge: {why} (its bit length {e}: 2^{e - 1} - 1 < {n} < 2^{e})", case)
    d.result["limit"] = top
    return d


def mixed_frequencies() -> Derivation:
    """q rotated with theta_q at m, k with theta_k at n: for frequencies in (0, pi), relative only when they agree;
    at integer positions a difference in 2 pi Z is invisible."""
    d = Derivation("keys and queries rotated with different frequencies")
    m, n, t = sp.symbols("m n t", integer=True)
    tq, tk = sp.symbols("theta_q theta_k", positive=True)
    q0, q1, k0, k1 = sp.symbols("q_0 q_1 k_0 k_1", real=True)
    q, k = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])
    score = ((_rot(m * tq) * q).T * (_rot(n * tk) * k))[0]
    d.define("The query at position m turned by theta_q (one base), the key at n by theta_k (another: a base "
          "recomputed between the steps of one KV cache):", score)
    rel = (q.T * _rot(n * tk - m * tq) * k)[0]
    d.equal("the score is q^T R(n theta_k - m theta_q) k", score, rel, methods=("expand_trig",))
    d.equal("shifting both positions by t turns the angle by t (theta_k - theta_q)",
            unevaluated(lambda: ((n + t) * tk - (m + t) * tq) - (n * tk - m * tq)), t * (tk - tq))
    one = {q0: 1, q1: 0, k0: 1, k1: 0}
    d.equal("with q = k = e_0 the score at (m, n) is cos(n theta_k - m theta_q): 1 at (0, 0), cos(theta_k - theta_q) "
            "at (1, 1), one shift later", unevaluated(lambda: sp.Matrix([rel.subs({**one, m: 0, n: 0}),
                                                                         rel.subs({**one, m: 1, n: 1})])),
            sp.Matrix([1, sp.cos(tk - tq)]))
    x = sp.Symbol("x", real=True)
    nn = sp.Dummy("n", integer=True)
    d.solved("cos x = 1 exactly at the multiples of 2 pi", sp.Eq(sp.cos(x), 1), x,
             sp.ImageSet(sp.Lambda(nn, 2 * nn * sp.pi), sp.S.Integers))
    d.true("and the only multiple of 2 pi in (-pi, pi) is 0: for theta_q, theta_k in (0, pi) (every RoPE frequency "
           "is in (0, 1]), theta_k - theta_q is in (-pi, pi), so the shift changes the score unless theta_k = theta_q: "
           "it depends on the absolute positions",
           sp.Eq(sp.Intersection(sp.ImageSet(sp.Lambda(nn, 2 * nn * sp.pi), sp.S.Integers),
                                 sp.Interval.open(-sp.pi, sp.pi), evaluate=False), sp.FiniteSet(0), evaluate=False))
    j = sp.Symbol("j", integer=True)
    d.equal("at integer positions a difference of 2 pi j is invisible: theta_k = theta_q + 2 pi j gives the same "
            "score as theta_q (so 'relative exactly when the frequencies agree' needs them in (0, pi))",
            unevaluated(lambda: rel.subs(tk, tq + 2 * sp.pi * j)), rel.subs(tk, tq), methods=("expand_trig",))
    d.result["score"] = rel
    return d


def hf_permutation(rows: int, heads: int) -> list[int]:
    """transformers' ``permute(w, n_heads)``: within each head, Meta's interleaved rows (2i, 2i + 1) become
    the half layout (i, i + d/2). Row order of the result, as indices into the input rows."""
    per = rows // heads
    return [h * per + 2 * i + j for h in range(heads) for j in (0, 1) for i in range(per // 2)]


def gqa_wrong_heads(head_dim: int = 4, kv_heads: int = 1, heads: int = 2) -> Derivation:
    """K converted with n_heads instead of n_kv_heads: HF's RoPE then pairs the wrong features; the score changes."""
    d = Derivation("K converted with the query head count")
    rows = head_dim * kv_heads
    right, wrong = hf_permutation(rows, kv_heads), hf_permutation(rows, heads)
    d.define(f"One K head of dim {head_dim} ({kv_heads} KV head(s), {heads} query heads): converting Meta's rows to "
          f"HF's layout with n_kv_heads = {kv_heads} orders them {right}; with n_heads = {heads}, {wrong}.")
    m, n = sp.Integer(0), sp.Integer(1)

    def theta(i: int) -> sp.Expr:
        return sp.pi / 2 if i == 0 else sp.pi / 3

    q = sp.Matrix([1, 0, 0, 0])[:head_dim, :]
    k = sp.Matrix([0, 1, 0, 0])[:head_dim, :]
    perm = lambda order, v: sp.Matrix([v[j] for j in order])  # noqa: E731

    def meta() -> sp.Expr:
        return (rotation(m, head_dim, "interleaved", freq=theta) * q).dot(
            rotation(n, head_dim, "interleaved", freq=theta) * k)

    def hf(q_order: list[int], k_order: list[int]) -> sp.Expr:
        return (rotation(m, head_dim, "half", freq=theta) * perm(q_order, q)).dot(
            rotation(n, head_dim, "half", freq=theta) * perm(k_order, k))

    d.equal("with the right count, HF's half-layout score equals Meta's interleaved one (q = e_0, k = e_1, "
            "positions 0 and 1, theta = (pi/2, pi/3))", unevaluated(hf, right, right), unevaluated(meta))
    d.true(f"with the query head count it does not: the scores differ ({sp.sstr(hf(right, wrong))} vs "
           f"{sp.sstr(meta())})", sp.Ne(unevaluated(hf, right, wrong), unevaluated(meta), evaluate=False))
    d.result["orders"] = (right, wrong)
    return d


def scaled_frequency(theta: sp.Expr, s: sp.Expr) -> sp.Expr:
    """Linear scaling's frequency: theta / s (HF's ``inv_freq / factor``)."""
    return theta / s


def linear_two_ways() -> Derivation:
    """Linear scaling on the positions or on the frequencies: the same rotation (they differ only in rounding)."""
    p, th, sf = sp.Symbol("p", real=True), sp.Symbol("theta", positive=True), sp.Symbol("s", positive=True)
    d = Derivation("linear scaling on positions or on frequencies")
    d.equal("R((p/s) theta) = R(p (theta/s)): dividing the position or the frequency by s is one rotation",
            unevaluated(lambda: _rot((p / sf) * th)), _rot(p * scaled_frequency(th, sf)))
    d.solved("and it is plain RoPE only for s = 1", sp.Eq(scaled_frequency(th, sf), th), sf, [1])
    return d


def static_ntk(factor: int = 4, dim: int = 128, *, digits: int = 30) -> Derivation:
    """Dynamic NTK's base evaluated once at the largest length s L0 (s its factor) and used everywhere (vLLM #41236)."""
    al, L0, b = sp.Symbol("s", positive=True), sp.Symbol("L_0", positive=True), sp.Symbol("b", positive=True)
    dd = sp.Symbol("d", positive=True)
    d = Derivation("dynamic NTK with a static base")
    dynamic = b * (al * sp.Symbol("L", positive=True) / L0 - (al - 1)) ** (dd / (dd - 2))
    d.define("HF's dynamic NTK base at length L > L0 (below L0 the base is b):", dynamic)
    d.equal("evaluated once at L = s L0 it is b (s^2 - s + 1)^(d/(d-2)), at every position",
            unevaluated(lambda: dynamic.subs(sp.Symbol("L", positive=True), al * L0)),
            b * (al**2 - al + 1) ** (dd / (dd - 2)), methods=("expand", "powsimp"))
    ratio = sp.Integer(factor**2 - factor + 1) ** sp.Rational(dim, dim - 2)
    d.interval(f"s = {factor}, d = {dim}: the base is multiplied by {sp.sstr(ratio)}, 13.54 to four figures: more "
               "than 13.535 ...", ratio, ">", sp.Rational(13535, 1000), digits=digits)
    d.interval("... and less than 13.545, also inside the original context", ratio, "<", sp.Rational(13545, 1000),
               digits=digits)
    d.result["ratio"] = ratio
    return d


def factor_twice(s_value: int = 128, *, digits: int = 30) -> Derivation:
    """YaRN's attention factor a multiplies queries and keys: applied twice, scores scale by a^4, not a^2."""
    q0, q1, k0, k1, ang = sp.symbols("q_0 q_1 k_0 k_1 phi", real=True)
    q, k = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])
    d = Derivation("an attention factor applied twice")
    once = (a * _rot(ang) * q).dot(a * k)
    d.equal("the factor on cos/sin of both q and k scales the score by a^2", once, a**2 * (_rot(ang) * q).dot(k))
    twice = (a**2 * _rot(ang) * q).dot(a**2 * k)
    d.equal("applied twice, by a^4", twice, a**4 * (_rot(ang) * q).dot(k))
    af = sp.log(sp.Integer(s_value)) / 10 + 1
    for what, v, lo, hi in (("a = 0.1 ln s + 1", af, sp.Rational(14851, 10000), sp.Rational(14853, 10000)),
                            ("the factor applied twice, a^2,", af**2, sp.Rational(22057, 10000),
                             sp.Rational(22059, 10000))):
        d.interval(f"s = {s_value}: {what} is above {lo} (SGLang #33558: 1.4852 -> 2.2058) ...", v, ">", lo,
                   digits=digits)
        d.interval(f"... and below {hi}", v, "<", hi, digits=digits)
    return d


def _bound_checked(d: Derivation, r: sp.Symbol, bound: sp.Expr, cited: sp.Eq, split: sp.Eq) -> None:
    """r <= p 2^-bits under the cited bound, decided by pemath.kernel alone as one relation: p 2^-bits - r less the
    combination that proves the split of p 2^-bits (its certificate, found by the proposer) and the cited equation
    is u + t 2^-bits, nonnegative by the sorts."""
    from ..kernel.terms import num
    from . import bridge

    prop = bridge.formal([sp.Le(r, bound, evaluate=False)], [cited])
    _, split_cert, _ = bridge.certify("rewrite", split, "expand")
    if split_cert[0] != "ideal":
        raise ProofFailure(f"the split of p 2^-bits has no ideal certificate: {split_cert[0]!r}")
    cert = ("sign", split_cert[1] + ((("hyp", 0), num(-1)),))
    d.checked("so r <= p 2^-bits, one relation decided by pemath.kernel: p 2^-bits - r is, once the split and the "
              "cited bound are taken away, u + t 2^-bits, nonnegative by the sorts", prop, cert)


def positions_rounded(bits: int = 8) -> Derivation:
    """Positions cast to a format with ``bits`` significant bits: off by up to p 2^-bits, e.g. bf16(15962) = 15936.
    The rounding bound is cited; what is decided is that half the spacing is at most p 2^-bits, so the cited bound,
    written with its slack, gives |bf16(p) - p| + (its slack) + t 2^-bits = p 2^-bits."""
    d = Derivation("positions rounded to a low-precision dtype")
    e = sp.Symbol("e", integer=True, positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)
    r = sp.Symbol("r", nonnegative=True)  # |bf16(p) - p|
    u = sp.Symbol("u", nonnegative=True)  # the cited bound's slack
    pos = sp.Integer(2) ** (e - 1) + t  # any position with bit length e: 2^(e-1) <= p (< 2^e)
    scale = sp.Integer(2) ** (-bits)
    d.define(f"A position p >= 1 with bit length e, p = 2^(e-1) + t (t >= 0), rounded to {bits} significant bits: "
             f"exact if e <= {bits}; otherwise a multiple of 2^(e - {bits}), the nearest one. Write r = |bf16(p) - p|",
             pos)
    d.cite(f"rounding to nearest moves a number by at most half the spacing of the representable numbers around it: "
           f"2^(e - {bits})/2 for 2^(e-1) <= p < 2^e",
           source="Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Theorem 2.2")
    half = sp.Integer(2) ** (e - bits - 1)
    cited = d.hypothesis(f"The cited bound, with its slack u >= 0: r + u = 2^(e - {bits + 1}) (a premise of this "
                         "statement: the rounding bound above)", sp.Eq(r + u, half))
    split = sp.Eq(pos * scale, half + t * scale, evaluate=False)
    d.equal(f"half the spacing is p 2^-{bits} less t 2^-{bits}: p 2^-{bits} = 2^(e - {bits + 1}) + t 2^-{bits}",
            split.lhs, split.rhs, methods=("expand", "powsimp"))
    d.rewrite_with(f"so r + u + t 2^-{bits} = p 2^-{bits}", sp.Eq(split.lhs, cited.rhs + t * scale, evaluate=False),
                   sp.Eq(cited.rhs, cited.lhs, evaluate=False))
    d.assumed(f"and u + t 2^-{bits} >= 0: r <= p 2^-{bits} for every position p >= 1", u + t * scale, "nonnegative")
    _bound_checked(d, r, pos * scale, cited, split)
    with sp.evaluate(False):
        case = sp.And(*bit_length(sp.Integer(15962), sp.Integer(14)),
                      sp.Eq(rounded(sp.Integer(15962), bits, sp.Integer(14)), 15936))
    d.true(f"candle #3520's example: 15962, of bit length 14 (2^13 - 1 < 15962 < 2^14), rounds to 15936 ({bits} bits)",
           case)
    d.result.update(e=e, t=t, r=r, u=u, position=pos, half_spacing=half, scale=scale)
    return d
