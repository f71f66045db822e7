"""Claims behind bugs users hit (reported in public issue trackers): a rotation applied twice, the integers
bfloat16 and float16 hold, keys and queries rotated with different frequencies."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from ..symbolic.notation import label
from ..symbolic import bridge
from ..symbolic import failures as sym
from . import _formal as F
from ._model import Check, CheckFailure, Claim, Skip, Verdict
from ._registry import register
from .. import rope
from .. import scaling as sc



def _twice_numeric() -> str:

    spec = rope.Spec("half", base=10000.0, scaling=sc.YaRN(16.0, 4096))
    a = spec.scaling.attention_factor
    rng = np.random.default_rng(3)
    worst = 0.0
    for p in (1, 17, 1000, 65_000):
        x = rng.standard_normal((4, 64))
        twice = rope.apply(rope.apply(x, p, spec=spec), p, spec=spec)
        once = a * rope.apply(x, 2 * p, spec=spec)
        err = float(np.max(np.abs(twice - once)))
        tol = 64 * 2.0**-53 * (1 + 2 * p) * a * a * float(np.max(np.abs(x)))
        if err > tol:
            raise CheckFailure(f"rope.apply twice at p = {p} differs from a * rope.apply(x, 2p) by {err:.3g}")
        worst = max(worst, err / tol)
    return f"rope.apply twice (YaRN, a = {a:.6f}) = a * rope.apply(x, 2p) within {worst:.2g} of the bound"


def _twice_mpmath() -> str:
    with mpmath.workdps(50):
        a = mpmath.mpf("1.2772588722239781")
        for ph in (mpmath.mpf(1), mpmath.mpf(10) ** 6, mpmath.pi / 3):
            c, s = mpmath.cos(ph), mpmath.sin(ph)
            r = mpmath.matrix([[a * c, -a * s], [a * s, a * c]])
            two = r * r
            want = mpmath.matrix([[mpmath.cos(2 * ph), -mpmath.sin(2 * ph)], [mpmath.sin(2 * ph), mpmath.cos(2 * ph)]])
            gap = mpmath.mnorm(two - a * a * want, 1)
            if gap > mpmath.mpf(10) ** -45:
                raise CheckFailure(f"(a R)^2 - a^2 R(2 phi) = {mpmath.nstr(gap, 5)} at phi = {mpmath.nstr(ph, 8)}")
    return "(a R(phi))^2 = a^2 R(2 phi) to 45 digits at phi = 1, 10^6, pi/3"


def _integers_numeric() -> str:
    try:
        import ml_dtypes
    except ImportError:
        raise Skip("ml_dtypes is not installed (pip install ml_dtypes) for bfloat16") from None
    for name, dt, top in (("bfloat16", ml_dtypes.bfloat16, 256), ("float16", np.float16, 2048)):
        n = np.arange(top + 2, dtype=np.float64)
        back = n.astype(dt).astype(np.float64)
        exact = np.nonzero(back != n)[0]
        if exact.size != 1 or int(exact[0]) != top + 1 or back[top + 1] != top:
            raise CheckFailure(f"{name}: integers changed by the cast at {exact[:4].tolist()}")
    return "NumPy/ml_dtypes casts: 0..256 exact in bfloat16 and 257 -> 256; 0..2048 in float16 and 2049 -> 2048"


def _mixed_numeric() -> str:

    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, 64))
    score = lambda bq, bk, m, n: float(rope.apply(q, m, layout="half", base=bq) @ rope.apply(k, n, layout="half",  # noqa: E731
                                                                                          base=bk))
    for m, n, t in ((3, 10, 100), (500, 700, 4096)):
        same = abs(score(1e4, 1e4, m, n) - score(1e4, 1e4, m + t, n + t))
        moved = abs(score(1e4, 4e4, m, n) - score(1e4, 4e4, m + t, n + t))
        if same > 1e-9 or moved < 1e-3:
            raise CheckFailure(f"shift {t}: same bases moved the score by {same:.3g}, different ones by {moved:.3g}")
    return "rope.apply: equal bases keep the score under a common shift (< 1e-9), bases 1e4 / 4e4 move it (> 1e-3)"


def _mixed_mpmath() -> str:
    d = sym.mixed_frequencies()
    rel = d.result["score"]
    syms = sorted(rel.free_symbols, key=str)
    f = sp.lambdify(syms, rel, "mpmath")
    with mpmath.workdps(50):
        vals = {"k_0": mpmath.mpf("0.3"), "k_1": mpmath.mpf("-1.1"), "q_0": mpmath.mpf("0.7"), "q_1": mpmath.mpf("2"),
                "theta_k": mpmath.mpf("0.01"), "theta_q": mpmath.mpf("0.02"), "m": 123456, "n": 654321}
        got = f(*[vals[str(s)] for s in syms])
        aq, ak = vals["m"] * vals["theta_q"], vals["n"] * vals["theta_k"]
        rq = (vals["q_0"] * mpmath.cos(aq) - vals["q_1"] * mpmath.sin(aq), vals["q_1"] * mpmath.cos(aq) + vals["q_0"] * mpmath.sin(aq))
        rk = (vals["k_0"] * mpmath.cos(ak) - vals["k_1"] * mpmath.sin(ak), vals["k_1"] * mpmath.cos(ak) + vals["k_0"] * mpmath.sin(ak))
        direct = rq[0] * rk[0] + rq[1] * rk[1]
        if abs(got - direct) > mpmath.mpf(10) ** -40:
            raise CheckFailure(f"the derived score is off by {mpmath.nstr(abs(got - direct), 5)}")
    return "q^T R(n theta_k - m theta_q) k equals the two rotations' dot product to 40 digits at m, n ~ 10^5"


def _round(n: sp.Expr, bits: int, e: sp.Expr) -> sp.Expr:
    """The statement's rounding, written here for it: n >= 1 of bit length e to ``bits`` significant bits, ties to
    even (spacing u = 2^max(e - bits, 0); lo = floor(n/u); up by one past half a spacing, or at half of it when
    lo is odd)."""
    with sp.evaluate(False):
        u = sp.Integer(2) ** sp.Max(e - bits, 0)
        lo = sp.floor(n / u)
        rest = n / u - lo
        odd = sp.Eq(lo - 2 * sp.floor(lo / 2), 1)
        up = sp.Piecewise((1, rest > sp.S.Half), (sp.Piecewise((1, odd), (0, True)), sp.Eq(rest, sp.S.Half)),
                          (0, True))
        return (lo + up) * u


def _rounds_to(n: int, e: int, bits: int, want: int) -> list:
    """The closed relations: n has bit length e (2^(e-1) - 1 < n < 2^e), and rounds to ``want``."""
    with sp.evaluate(False):
        two, N = sp.Integer(2), sp.Integer(n)
        return [sp.Lt(two ** (sp.Integer(e) - 1) - 1, N), sp.Lt(N, two ** sp.Integer(e)),
                sp.Eq(_round(N, bits, sp.Integer(e)), want)]


def _integers_formal() -> tuple:
    """For bfloat16 (p = 8 bits) and float16 (p = 11): every n_p >= 1 whose bit length is e = p - g_p <= p
    (2^(e-1) - 1 < n_p < 2^e) is unchanged by rounding to p bits (so 1..2^p - 1 are exact; 0 is exact in every
    binary format, not stated here), 2^p (bit length p + 1) is unchanged and 2^p + 1 rounds to 2^p. Each format
    has its own n_p and g_p, so the two bit-length hypotheses never constrain each other."""
    rels, hyps = [], []
    for p in (8, 11):
        n = sp.Symbol(f"n_{p}", integer=True, positive=True)
        g = sp.Symbol(f"g_{p}", integer=True, nonnegative=True)
        rels.append(sp.Eq(_round(n, p, p - g), n, evaluate=False))
        rels += _rounds_to(2**p, p + 1, p, 2**p) + _rounds_to(2**p + 1, p + 1, p, 2**p)
        with sp.evaluate(False):
            hyps += [sp.Lt(sp.Integer(2) ** (p - g - 1) - 1, n), sp.Lt(n, sp.Integer(2) ** (p - g))]
    return bridge.formal(rels, hyps)


def _integers_proof() -> Verdict:
    d = sym.integers_exact("bfloat16")
    d.steps.extend(sym.integers_exact("float16").steps)
    return Verdict(d)


def _twice_formal() -> tuple:
    """(a R(phi))^2 = a^2 R(2 phi), entry by entry. (That a^2 = a only for a = 1 is decided too, under its own
    hypothesis a^2 = a; a formal statement has one list of hypotheses, so it is not part of this one.)"""
    a, phi = sp.Symbol("a", positive=True), sp.Symbol("phi", real=True)
    c, s_ = sp.cos(phi), sp.sin(phi)
    once = ((a * c, -a * s_), (a * s_, a * c))
    twice = ((a ** 2 * sp.cos(2 * phi), -a ** 2 * sp.sin(2 * phi)), (a ** 2 * sp.sin(2 * phi), a ** 2 * sp.cos(2 * phi)))
    return bridge.formal([sp.Eq(sum(once[r][t] * once[t][col] for t in range(2)), twice[r][col])
                          for r in range(2) for col in range(2)])


def _linear_formal() -> tuple:
    """R((p/s) theta) = R(p (theta/s)), entry by entry."""
    p, th, s_ = sp.Symbol("p", real=True), sp.Symbol("theta", positive=True), sp.Symbol("s", positive=True)
    with sp.evaluate(False):
        a, b = (p / s_) * th, p * (th / s_)
    return bridge.formal([sp.Eq(sp.cos(a), sp.cos(b)), sp.Eq(-sp.sin(a), -sp.sin(b)), sp.Eq(sp.sin(a), sp.sin(b))])


def _mixed_formal() -> tuple:
    """The query at m turned by theta_q, the key at n by theta_k: the score is q^T R(n theta_k - m theta_q) k;
    shifting both positions by t turns that angle by t (theta_k - theta_q); with q = k = e_0 the score is 1 at
    (0, 0) and cos(theta_k - theta_q) at (1, 1); and at integer positions theta_k = theta_q + 2 pi j gives the
    score of theta_q."""
    m, n, t, j = sp.symbols("m n t j", integer=True)
    tq, tk = sp.symbols("theta_q theta_k", positive=True)
    q, k = sp.symbols("q_0 q_1", real=True), sp.symbols("k_0 k_1", real=True)

    def score(mq, nk, qq=q, kk=k):  # noqa: ANN001, ANN202 - <R(mq) q, R(nk) k>
        return F.dot(F.rotate(mq, qq), F.rotate(nk, kk))

    def relative(angle, qq=q, kk=k):  # noqa: ANN001, ANN202 - q^T R(angle) k
        return F.dot(qq, F.rotate(angle, kk))

    e0 = (sp.Integer(1), sp.Integer(0))
    with sp.evaluate(False):
        shift = ((n + t) * tk - (m + t) * tq) - (n * tk - m * tq)
        at_origin, one_later = relative(0 * tk - 0 * tq, e0, e0), relative(1 * tk - 1 * tq, e0, e0)
    return bridge.formal([
        sp.Eq(score(m * tq, n * tk), relative(n * tk - m * tq)),
        sp.Eq(shift, t * (tk - tq)),
        sp.Eq(at_origin, 1, evaluate=False),
        sp.Eq(one_later, sp.cos(tk - tq), evaluate=False),
        sp.Eq(relative(n * (tq + 2 * sp.pi * j) - m * tq), relative(n * tq - m * tq)),
    ])


def _static_ntk_formal() -> tuple:
    """At s = 4, d = 128 the static base is b 13^(64/63), and 13.535 < 13^(64/63) < 13.545."""
    ratio = sp.Integer(13) ** sp.Rational(128, 126)
    return bridge.formal([sp.Lt(sp.Rational(13535, 1000), ratio, evaluate=False),
                          sp.Lt(ratio, sp.Rational(13545, 1000), evaluate=False)])


register(Claim(
    id="failures.rotation_twice",
    name="A rotation applied twice",
    title="A rotation with attention factor a applied twice is R(2p theta) with a^2: the doubled position, the "
          "factor squared",
    kind="theorem", family="failures",
    statement=lambda: sp.Eq((sym.a * sym._rot(sym.phi)) ** 2, sym.a**2 * sym._rot(2 * sym.phi), evaluate=False),
    formal=_twice_formal,
    proof=lambda: Verdict(sym.rotation_twice()),
    checks=(Check("numeric", _twice_numeric), Check("mpmath", _twice_mpmath)),
    references=("TensorRT-LLM #16378: keys rotated by 2 theta and scaled by the factor squared",),
))

register(Claim(
    id="failures.low_precision_integers",
    name="The integers bfloat16 and float16 hold exactly",
    title="bfloat16 holds the integers 1..256 exactly and rounds 257 to 256; float16 holds 1..2048 and rounds 2049 "
          "to 2048",
    kind="theorem", family="failures",
    statement=lambda: sp.And(sp.Eq(label("max_exact_bfloat16", r"\max\{N : 1..N \text{ exact in bfloat16}\}"), 256),
                              sp.Eq(label("max_exact_float16", r"\max\{N : 1..N \text{ exact in float16}\}"), 2048)),
    formal=_integers_formal,
    proof=_integers_proof,
    checks=(Check("numeric", _integers_numeric),),
    references=("candle #3520: positions cast to bfloat16, bf16(15962) = 15936",),
))

register(Claim(
    id="failures.mixed_frequencies",
    name="Queries and keys rotated with different frequencies",
    title="Queries and keys rotated with different frequencies theta_q, theta_k (a base changed within one KV "
          "cache), at integer positions m, n and shifts t: the score is q^T R(n theta_k - m theta_q) k, so a shift t "
          "of both positions moves its angle by "
          "t (theta_k - theta_q); for q = k = e_0 it is 1 at positions (0, 0) and cos(theta_k - theta_q) at (1, 1), "
          "which differ unless theta_k - theta_q is in 2 pi Z (that step SymPy-decided); and a difference in "
          "2 pi Z is invisible",
    kind="theorem", family="failures",
    statement=lambda: sp.Eq(label("<R(m theta_q) q, R(n theta_k) k>", r"\langle R(m\theta_q)\,q,\; R(n\theta_k)\,k \rangle"),
                            sym.mixed_frequencies().result["score"], evaluate=False),
    formal=_mixed_formal,
    proof=lambda: Verdict(sym.mixed_frequencies()),
    checks=(Check("numeric", _mixed_numeric), Check("mpmath", _mixed_mpmath)),
    references=("vLLM #41236 (dynamic NTK), uzu #604 (LongRoPE regimes mixed in one KV cache)",),
))


def _gqa_numeric() -> str:

    rng = np.random.default_rng(9)
    hd, kv, heads, din = 64, 2, 8, 32
    wk = rng.standard_normal((kv * hd, din))
    x = rng.standard_normal(din)
    q = rng.standard_normal(hd)  # one query head, already in each layout's order below
    k_meta = (wk @ x)[:hd]  # KV head 0
    worst_right, best_wrong = 0.0, np.inf
    for m, n in ((0, 1), (5, 300), (1000, 40)):
        meta = rope.apply(q, m, layout="interleaved") @ rope.apply(k_meta, n, layout="interleaved")
        q_hf = q[sym.hf_permutation(hd, 1)]
        for count in (kv, heads):
            k_hf = (wk[sym.hf_permutation(kv * hd, count)] @ x)[:hd]
            hf = rope.apply(q_hf, m, layout="half") @ rope.apply(k_hf, n, layout="half")
            if count == kv:
                worst_right = max(worst_right, abs(hf - meta))
            else:
                best_wrong = min(best_wrong, abs(hf - meta))
    if worst_right > 1e-9 or best_wrong < 1e-3:
        raise CheckFailure(f"right count off by {worst_right:.3g}, wrong count off by only {best_wrong:.3g}")
    return (f"rope.apply, head_dim 64, 2 KV / 8 query heads: the right count keeps the score ({worst_right:.1g}), "
            f"the query count changes it by >= {best_wrong:.3g}")


def _gqa_formal() -> tuple:
    """The witness, exactly: one K head of 4 features, q = e_0, k = e_1 at positions 0 and 1, frequencies
    (pi/2, pi/3). Meta's interleaved score pairs features (0, 1), (2, 3); HF's half layout pairs (0, 2), (1, 3) of
    the converted rows. With the KV head count (1) the rows are reordered (0, 2, 1, 3) and the score is Meta's;
    with the query head count (2) each half-head of 2 rows stays in place (0, 1, 2, 3) and the score differs.
    (That the right count gives Meta's score for every q, k and position is ``rope.weight_permutation``.)"""
    theta = (sp.pi / 2, sp.pi / 3)
    q, k = (1, 0, 0, 0), (0, 1, 0, 0)

    def score(pairs, qq, kk):  # noqa: ANN001, ANN202 - sum over pairs of <R(0 theta_i) q_i, R(1 theta_i) k_i>
        with sp.evaluate(False):
            return sp.Add(*[F.dot(F.rotate(0 * th, (qq[a], qq[b])), F.rotate(1 * th, (kk[a], kk[b])))
                            for th, (a, b) in zip(theta, pairs)])

    def rows(order, v):  # noqa: ANN001, ANN202 - the converted rows: row j of the result is row order[j]
        return tuple(sp.Integer(v[j]) for j in order)

    meta = score(((0, 1), (2, 3)), q, k)
    half = ((0, 2), (1, 3))
    return bridge.formal([sp.Eq(score(half, rows((0, 2, 1, 3), q), rows((0, 2, 1, 3), k)), meta, evaluate=False),
                          sp.Ne(score(half, rows((0, 2, 1, 3), q), rows((0, 1, 2, 3), k)), meta, evaluate=False)])


register(Claim(
    id="failures.gqa_wrong_heads",
    name="Keys converted with the query head count",
    title="K converted from Meta's to HF's layout with the query head count instead of the KV head count: HF's "
          "RoPE then pairs the wrong features and the scores can change (decided at one instance: d = 4, one KV "
          "head for two query heads, where the right count keeps Meta's score and the wrong one does not)",
    kind="theorem", family="failures",
    statement=lambda: sp.Ne(label("score_HF(P_{n_heads} k)", r"\operatorname{score}_{\mathrm{HF}}(P_{n_{\mathrm{heads}}} k)"),
                          label("score_Meta(k)", r"\operatorname{score}_{\mathrm{Meta}}(k)")),
    formal=_gqa_formal,
    proof=lambda: Verdict(sym.gqa_wrong_heads()),
    checks=(Check("numeric", _gqa_numeric),),
    references=("HF #31766, #31788: K permuted with n_heads instead of n_kv_heads",),
))


def _linear_numeric() -> str:

    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 64))
    pos = np.array([0, 1, 7, 1000, 65_000, 10**6])
    worst = 0.0
    for s in (2.0, 4.0, 8.0):
        on_freq = rope.apply(x, pos, layout="half", scaling=sc.Linear(s))
        on_pos = rope.apply(x, pos / s, layout="half")
        err = float(np.max(np.abs(on_freq - on_pos)))
        tol = 64 * 2.0**-53 * (1 + float(pos.max()) / s) * float(np.max(np.abs(x)))
        if err > tol:
            raise CheckFailure(f"Linear({s}) on frequencies vs positions / {s}: {err:.3g} > {tol:.3g}")
        worst = max(worst, err / tol)
    return f"rope.apply: Linear(s) frequencies = positions / s to {worst:.2g} of float64 rounding, s = 2, 4, 8"


def _linear_mpmath() -> str:

    x = np.array([0.3, -1.2, 0.7, 2.0])  # one head of 4: pairs (0, 2), (1, 3) in the half layout
    worst = 0.0
    for p, s in ((10**6, 8.0), (12345, 4.0)):
        got = rope.apply(x, p, layout="half", scaling=sc.Linear(s))
        with mpmath.workdps(50):
            for i in range(2):
                th = mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / 4) / mpmath.mpf(s)
                c, sn = mpmath.cos(p * th), mpmath.sin(p * th)
                a, b = mpmath.mpf(float(x[i])), mpmath.mpf(float(x[i + 2]))
                for got_v, want in ((got[i], a * c - b * sn), (got[i + 2], b * c + a * sn)):
                    err = abs(float(got_v) - float(want))
                    tol = 64 * 2.0**-53 * (1 + p / s) * 2.0
                    if err > tol:
                        raise CheckFailure(f"Linear({s}) at p = {p}: {float(got_v)!r} vs 50 digits "
                                           f"{mpmath.nstr(want, 17)}")
                    worst = max(worst, err / tol)
    return f"rope.apply with Linear(s) within {worst:.2g} of its bound against 50-digit R(p theta / s), p to 10^6"


register(Claim(
    id="failures.linear_two_ways",
    name="Linear scaling divides the position or the frequency",
    title="Linear scaling divides the position or the frequency: the same rotation R((p/s) theta) = R(p (theta/s)) "
          "(in floating point the two may round differently; not decided here)",
    kind="theorem", family="failures",
    statement=lambda: sp.Eq(label("R((p/s) theta)", r"R\big((p/s)\,\theta\big)"), label("R(p (theta/s))", r"R\big(p\,(\theta/s)\big)"),
                            evaluate=False),
    formal=_linear_formal,
    proof=lambda: Verdict(sym.linear_two_ways()),
    checks=(Check("numeric", _linear_numeric), Check("mpmath", _linear_mpmath)),
    references=("mlxcel #1688 (Llama 3.1 treated as linear: 1/factor on every frequency)",
                "Chen et al. 2023 (PI), section 2: divides the positions; HF's linear rope_type divides the frequencies"),
))


def _static_ntk_numeric() -> str:

    s = sc.DynamicNTK(4.0, 2048)
    ratio = s.scaled_base(128, 10000.0, 4 * 2048) / 10000.0
    want = float(sym.static_ntk().result["ratio"])
    if abs(ratio - want) > 1e-12 * want or s.scaled_base(128, 10000.0, 2000) != 10000.0:
        raise CheckFailure(f"DynamicNTK base ratio at 4 L0 is {ratio!r}, the derivation gives {want!r}")
    return f"DynamicNTK(4, 2048).scaled_base(128, 1e4, 8192) / 1e4 = {ratio:.10f}; at 2000 (< L0) the base is 1e4"


def _static_ntk_mpmath() -> str:
    with mpmath.workdps(50):
        r = mpmath.mpf(13) ** (mpmath.mpf(128) / 126)
    want = float(sym.static_ntk().result["ratio"])
    if abs(float(r) - want) > 1e-15 * want:
        raise CheckFailure(f"13^(128/126) = {mpmath.nstr(r, 20)} at 50 digits, the derivation {want!r}")
    return f"13^(128/126) = {mpmath.nstr(r, 20)} (50 digits)"


def _factor_twice_numeric() -> str:

    y = sc.YaRN(128.0, 4096)
    a = y.attention_factor
    rng = np.random.default_rng(13)
    q, k = rng.standard_normal((2, 64))
    once = rope.apply(q, 5, layout="half", scaling=y) @ rope.apply(k, 9, layout="half", scaling=y)
    y1 = sc.YaRN(128.0, 4096, attention_factor=1.0)  # the same frequencies, no factor
    plain = rope.apply(q, 5, layout="half", scaling=y1) @ rope.apply(k, 9, layout="half", scaling=y1)
    if abs(a - 1.4852030263919617) > 1e-12 or abs(once / plain - a * a) > 1e-9:
        raise CheckFailure(f"YaRN(128) attention factor {a!r}; score ratio {once / plain!r}")
    return f"YaRN(128).attention_factor = {a:.10f}; rope.apply scales the score by a^2 = {a * a:.6f}"


def _factor_twice_mpmath() -> str:

    got = sc.YaRN(128.0, 4096).attention_factor
    with mpmath.workdps(50):
        a = mpmath.log(128) / 10 + 1
        if abs(mpmath.mpf(got) - a) > 4 * 2.0**-53 * a or abs(mpmath.mpf(got) ** 2 - a * a) > 8 * 2.0**-53 * a * a:
            raise CheckFailure(f"YaRN(128).attention_factor = {got!r}, 50 digits {mpmath.nstr(a, 20)}")
    return f"YaRN(128).attention_factor = {got!r} against 50-digit a = {mpmath.nstr(a, 20)}, a^2 = {mpmath.nstr(a * a, 12)}"


register(Claim(
    id="failures.static_ntk",
    name="Dynamic NTK's base computed once",
    title="Dynamic NTK's base computed once at s L0 (s its factor): b (s^2 - s + 1)^(d/(d-2)) at every position "
          "(SymPy-decided); for s = 4, d = 128 that is 13^(64/63) b, between 13.535 b and 13.545 b (decided)",
    kind="theorem", family="failures",
    statement=lambda: sp.Eq(label("b_static / b", r"b_{\mathrm{static}} / b"), sym.static_ntk().result["ratio"], evaluate=False),
    formal=_static_ntk_formal,
    proof=lambda: Verdict(sym.static_ntk()),
    checks=(Check("numeric", _static_ntk_numeric), Check("mpmath", _static_ntk_mpmath)),
    references=("vLLM #41236 (fixed in #41277; earlier #3488): a static base under a dynamic name",),
))

def _factor_twice_formal() -> tuple:
    """As stated: with the factor a on the cos/sin tables of both q and k the score of q rotated by phi against k
    is a^2 times the plain score, applied twice a^4 times; at s = 128, a = 0.1 ln s + 1 is 1.4852 and a^2 2.2058
    (to the four places stated)."""
    q0, q1, k0, k1, phi = sp.symbols("q_0 q_1 k_0 k_1 phi", real=True)
    a = sp.Symbol("a", positive=True)
    with sp.evaluate(False):
        rq = (q0 * sp.cos(phi) - q1 * sp.sin(phi), q0 * sp.sin(phi) + q1 * sp.cos(phi))  # R(phi) q
        plain = k0 * rq[0] + k1 * rq[1]
        once = (a * k0) * (a * rq[0]) + (a * k1) * (a * rq[1])
        twice = (a ** 2 * k0) * (a ** 2 * rq[0]) + (a ** 2 * k1) * (a ** 2 * rq[1])
        factor = 1 + sp.log(128) / 10
        rels = [sp.Eq(once, a ** 2 * plain), sp.Eq(twice, a ** 4 * plain),
                sp.Lt(sp.Rational(14851, 10000), factor), sp.Lt(factor, sp.Rational(14853, 10000)),
                sp.Lt(sp.Rational(22057, 10000), factor ** 2), sp.Lt(factor ** 2, sp.Rational(22059, 10000))]
    return bridge.formal(rels)


register(Claim(
    id="failures.factor_twice",
    name="YaRN's attention factor applied twice",
    title="YaRN's attention factor applied twice scales scores by a^4 instead of a^2: at factor 128 the cos/sin "
          "tables carry a^2 (between 2.2057 and 2.2059) instead of a (between 1.4851 and 1.4853)",
    kind="theorem", family="failures",
    statement=lambda: sp.Eq(label("score_twice", r"\operatorname{score}_{\mathrm{twice}}"),
                            sym.a**4 * label("score_plain", r"\operatorname{score}_{\mathrm{plain}}"), evaluate=False),
    proof=lambda: Verdict(sym.factor_twice()),
    formal=_factor_twice_formal,
    checks=(Check("numeric", _factor_twice_numeric), Check("mpmath", _factor_twice_mpmath)),
    references=("SGLang #33558: attention_factor applied twice, 1.4852 -> 2.2058",),
))


def _rounded_formal() -> tuple:
    """A position p = 2^(e-1) + t of bit length e (t >= 0) and r = |bf16(p) - p|: under the cited rounding bound
    r <= 2^(e - 9), written with its slack u >= 0 (a hypothesis of the statement, not decided here), r <= p/256;
    and 15962, of bit length 14, rounds to 15936."""
    e = sp.Symbol("e", integer=True, positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)
    r, u = sp.Symbol("r", nonnegative=True), sp.Symbol("u", nonnegative=True)
    p = sp.Integer(2) ** (e - 1) + t
    return bridge.formal([sp.Le(r, p * sp.Rational(1, 256), evaluate=False), *_rounds_to(15962, 14, 8, 15936)],
                         [sp.Eq(r + u, sp.Integer(2) ** (e - 9))])


def _rounded_numeric() -> str:
    try:
        import ml_dtypes
    except ImportError:
        raise Skip("ml_dtypes is not installed (pip install ml_dtypes) for bfloat16") from None
    p = np.arange(2**16, dtype=np.float64)
    got = p.astype(ml_dtypes.bfloat16).astype(np.float64)
    want = np.array([sym.round_to_bits(int(v), 8) for v in p], dtype=np.float64)
    bad = np.nonzero(got != want)[0]
    if bad.size:
        raise CheckFailure(f"ml_dtypes bfloat16 and the exact rounding differ at positions {bad[:4].tolist()}")
    return f"ml_dtypes bfloat16 casts of 0..65535 equal the exact rounding; the largest move is {int(np.max(np.abs(got - p)))}"


register(Claim(
    id="failures.positions_rounded",
    name="Positions cast to bfloat16",
    title="Positions cast to bfloat16 move by up to p 2^-8, given the cited rounding bound of half an ulp: "
          "15962 becomes 15936",
    kind="theorem", family="failures",
    statement=lambda: sp.Le(label("|bf16(p) - p|", r"\left|\operatorname{bf16}(p) - p\right|"), sp.Symbol("p") * sp.Rational(1, 256)),
    formal=_rounded_formal,
    proof=lambda: Verdict(sym.positions_rounded()),
    checks=(Check("numeric", _rounded_numeric),),
    references=("candle #3520: positions cast to bfloat16, bf16(15962) = 15936",),
))
