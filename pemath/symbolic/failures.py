"""Derivations behind bugs users hit (reported in public issue trackers; each claim names the issue), decided exactly.

* A rotation (with its attention factor) applied twice is one rotation by the doubled angle
  with the squared factor: what a kernel that rotates twice computes (TensorRT-LLM #16378).
* bfloat16 holds every integer up to 256 and not 257; float16 up to 2048 and not 2049: a
  position cast to them is rounded beyond (candle #3520).
* Keys rotated under one frequency and queries under another (a length-driven scaling whose
  base changed between the steps of one KV cache): the score depends on the absolute
  positions, and is relative exactly when the two frequencies agree.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ._decide import Derivation
from .published import _hi, _lo

__all__ = ["rotation_twice", "integers_exact", "representable", "mixed_frequencies", "hf_permutation",
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
             sp.Eq(a**2, a), a, sp.Interval.open(0, sp.oo), [1])
    return d


def representable(n: int, bits: int) -> bool:
    """Whether the non-negative integer ``n`` has at most ``bits`` significant bits (exact integer arithmetic)."""
    if n == 0:
        return True
    while n % 2 == 0:
        n //= 2
    return n.bit_length() <= bits


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


def integers_exact(fmt: str = "bfloat16", bits: int | None = None) -> Derivation:
    """Every integer 0..2^p is exact with p significant bits; 2^p + 1 is not (it rounds to 2^p)."""
    p = bits if bits is not None else {"bfloat16": 8, "float16": 11}[fmt]
    top = 2**p
    d = Derivation(f"{fmt}: the integers it holds exactly")
    d.define(f"{fmt} keeps {p} significant bits (its exponent range covers these integers). An integer is exact iff "
          f"it has at most {p} significant bits.")
    d.enumerated(f"every integer 0..{top} has at most {p} significant bits: exact in {fmt}", range(top + 1),
                 lambda n: representable(n, p))
    d.enumerated(f"{top + 1} = 2^{p} + 1 needs {p + 1}: rounded to nearest even it becomes {top}",
                 [top + 1], lambda n: round_to_bits(n, p) == top)
    d.result["limit"] = top
    return d


def mixed_frequencies() -> Derivation:
    """q rotated with theta_q at m, k with theta_k at n: relative exactly when theta_q = theta_k."""
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
    shifted = rel.subs({m: m + t, n: n + t})
    d.equal("shifting both positions by t turns the angle by t (theta_k - theta_q)",
            sp.expand((n + t) * tk - (m + t) * tq) - (n * tk - m * tq), t * (tk - tq))
    d.equal("so d(score)/dt at t = 0 is (theta_k - theta_q) times q^T R'(angle) k",
            sp.diff(shifted, t).subs(t, 0),
            (tk - tq) * (q.T * sp.diff(_rot(sp.Symbol("x")), sp.Symbol("x")).subs(sp.Symbol("x"), n * tk - m * tq)
                         * k)[0], methods=("expand",))
    xs = sp.Symbol("x", real=True)
    d.equal("R'(x) has determinant 1, so it is never zero: some q, k make q^T R'(x) k nonzero",
            sp.diff(_rot(xs), xs).det(), sp.S.One)
    d.solved("so the derivative vanishes for every q, k only if theta_k - theta_q = 0: the score is relative exactly when "
             "the frequencies agree", sp.Eq(tk - tq, 0), tk, sp.Interval.open(0, sp.oo), [tq])
    d.result["score"] = rel
    return d


def hf_permutation(rows: int, heads: int) -> list[int]:
    """transformers' ``permute(w, n_heads)``: within each head, Meta's interleaved rows (2i, 2i + 1) become
    the half layout (i, i + d/2). Row order of the result, as indices into the input rows."""
    per = rows // heads
    return [h * per + 2 * i + j for h in range(heads) for j in (0, 1) for i in range(per // 2)]


def gqa_wrong_heads(head_dim: int = 4, kv_heads: int = 1, heads: int = 2) -> Derivation:
    """K converted with n_heads instead of n_kv_heads: HF's RoPE then pairs the wrong features; the score changes."""
    from .rope import rotation

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
    meta = (rotation(m, head_dim, "interleaved", freq=theta) * q).dot(rotation(n, head_dim, "interleaved",
                                                                               freq=theta) * k)
    perm = lambda order, v: sp.Matrix([v[j] for j in order])  # noqa: E731
    hf_right = (rotation(m, head_dim, "half", freq=theta) * perm(right, q)).dot(
        rotation(n, head_dim, "half", freq=theta) * perm(right, k))
    hf_wrong = (rotation(m, head_dim, "half", freq=theta) * perm(right, q)).dot(
        rotation(n, head_dim, "half", freq=theta) * perm(wrong, k))
    d.zero("with the right count, HF's half-layout score equals Meta's interleaved one (q = e_0, k = e_1, "
           "positions 0 and 1, theta = (pi/2, pi/3))", hf_right - meta)
    d.true(f"with the query head count it does not: the scores differ ({sp.sstr(sp.simplify(hf_wrong))} vs "
           f"{sp.sstr(sp.simplify(meta))})", sp.Ne(sp.simplify(hf_wrong - meta), 0))
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
            _rot((p / sf) * th), _rot(p * scaled_frequency(th, sf)))
    d.solved("and it is plain RoPE only for s = 1", sp.Eq(scaled_frequency(th, sf), th), sf,
             sp.Interval.open(0, sp.oo), [1])
    return d


def static_ntk(alpha: int = 4, dim: int = 128, *, digits: int = 30) -> Derivation:
    """Dynamic NTK's base evaluated once at the largest length alpha L0 and used everywhere (vLLM #41236)."""
    import mpmath
    from mpmath import iv

    al, L0, b = sp.Symbol("alpha", positive=True), sp.Symbol("L_0", positive=True), sp.Symbol("b", positive=True)
    dd = sp.Symbol("d", positive=True)
    d = Derivation("dynamic NTK with a static base")
    dynamic = b * (al * sp.Symbol("L", positive=True) / L0 - (al - 1)) ** (dd / (dd - 2))
    d.define("HF's dynamic NTK base at length L > L0 (below L0 the base is b):", dynamic)
    at_max = dynamic.subs(sp.Symbol("L", positive=True), al * L0)
    d.equal("evaluated once at L = alpha L0 it is b (alpha^2 - alpha + 1)^(d/(d-2)), at every position",
            at_max, b * (al**2 - al + 1) ** (dd / (dd - 2)), methods=("expand", "powsimp"))
    ratio = sp.Integer(alpha**2 - alpha + 1) ** sp.Rational(dim, dim - 2)
    old = iv.dps
    iv.dps = digits
    try:
        enc = iv.mpf(alpha**2 - alpha + 1) ** (iv.mpf(dim) / (dim - 2))
    finally:
        iv.dps = old
    shown = f"[{mpmath.nstr(_lo(enc), 6)}, {mpmath.nstr(_hi(enc), 6)}]"
    d.interval(f"alpha = {alpha}, d = {dim}: the base is multiplied by {sp.sstr(ratio)} in {shown}: more than 13 ...",
               enc, ">", 13, precision=f"{digits} digits")
    d.interval("... and less than 14, also inside the original context", enc, "<", 14, precision=f"{digits} digits")
    d.result["ratio"] = ratio
    return d


def factor_twice(s_value: int = 128, *, digits: int = 30) -> Derivation:
    """YaRN's attention factor a multiplies queries and keys: applied twice, scores scale by a^4, not a^2."""
    from mpmath import iv

    q0, q1, k0, k1, ang = sp.symbols("q_0 q_1 k_0 k_1 phi", real=True)
    q, k = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])
    d = Derivation("an attention factor applied twice")
    once = (a * _rot(ang) * q).dot(a * k)
    d.equal("the factor on cos/sin of both q and k scales the score by a^2", once, a**2 * (_rot(ang) * q).dot(k))
    twice = (a**2 * _rot(ang) * q).dot(a**2 * k)
    d.equal("applied twice, by a^4", twice, a**4 * (_rot(ang) * q).dot(k))
    old = iv.dps
    iv.dps = digits
    try:
        af = iv.mpf(1) / 10 * iv.log(iv.mpf(s_value)) + 1
        sq = af * af
    finally:
        iv.dps = old
    for what, v, lo, hi in (("a = 0.1 ln s + 1", af, sp.Rational(14851, 10000), sp.Rational(14853, 10000)),
                            ("the factor applied twice, a^2,", sq, sp.Rational(22057, 10000), sp.Rational(22059, 10000))):
        d.interval(f"s = {s_value}: {what} is above {lo} (SGLang #33558: 1.4852 -> 2.2058) ...", v, ">", lo,
                   precision=f"{digits} digits")
        d.interval(f"... and below {hi}", v, "<", hi, precision=f"{digits} digits")
    return d


def positions_rounded(bits: int = 8, top: int = 2**16) -> Derivation:
    """Positions cast to a format with ``bits`` significant bits: off by up to p 2^-bits, e.g. bf16(15962) = 15936."""
    d = Derivation("positions rounded to a low-precision dtype")
    d.define(f"Rounding a position p to {bits} significant bits (ties to even) moves it by at most half a unit in the "
          f"last place, p 2^-{bits} for p < 2^e with 2^(e-1) <= p; for every p < {top}:")
    d.enumerated(f"|round(p) - p| <= 2^(e - {bits} - 1) <= p 2^-{bits} for every position 1..{top - 1}",
                 range(1, top), lambda p: 2 * abs(round_to_bits(p, bits) - p) * 2**bits <= 2**p.bit_length())
    d.enumerated(f"candle #3520's example: 15962 rounds to 15936 ({bits} bits)", [15962],
                 lambda p: round_to_bits(p, bits) == 15936)
    return d
