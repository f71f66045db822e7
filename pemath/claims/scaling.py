"""Claims about RoPE's scaling variants (Linear, NTK, Dynamic NTK, YaRN, Llama 3.1, LongRoPE, p-RoPE)."""

from __future__ import annotations

import functools
import math
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from ..symbolic import bridge
from ..symbolic.notation import label
from . import _formal as F
from ..symbolic import rope as rsym
from ..symbolic import scaling as sym
from ._inputs import Choice, Floats, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._gpu import require_cupy
from ._registry import register
from ._tolerance import U64, phase_bound
from .. import rope
from .. import scaling

FAMILY = "scaling"
BASES = [10000.0, 500000.0, 1e6, 100.0]
YARN_PAPER = "Peng et al. 2023 (YaRN, arXiv:2309.00071)"
HF_ROPE = "Hugging Face transformers, modeling_rope_utils.py (ROPE_INIT_FUNCTIONS)"


@functools.lru_cache(maxsize=None)
def _derived(name: str) -> Any:
    """The derivation ``pemath.symbolic.scaling.<name>()``, derived once per process.

    The proof, the statement and the checks of a claim share it (SymPy's solve and
    limit are the costly steps); a derivation that fails raises and is not cached.
    """
    return getattr(sym, name)()


# ---------------------------------------------------------------------------------------
# scaling.relative


VARIANTS = ("Linear", "NTK", "DynamicNTK", "YaRN", "YaRN-ratio", "Llama3", "LongRoPE", "Proportional")


def _variant(name: str, rng: np.random.Generator, half: int) -> tuple[Any, int | None]:
    """A pemath.scaling instance of the named variant with drawn parameters, and a seq_len."""

    s = float(rng.uniform(0.25, 32.0))
    L0 = int(rng.integers(16, 2**15))
    seq = int(rng.integers(1, 4 * L0))
    if name == "Linear":
        return scaling.Linear(s), None
    if name == "NTK":
        return scaling.NTK(s), None
    if name == "DynamicNTK":
        return scaling.DynamicNTK(s, L0), seq
    if name == "YaRN":
        return scaling.YaRN(s, L0), None
    if name == "YaRN-ratio":
        return scaling.YaRN(s, L0, ramp="ratio", beta_fast=float(rng.uniform(8, 64)), beta_slow=1.0), None
    if name == "Llama3":
        return scaling.Llama3(s, L0, low_freq_factor=1.0, high_freq_factor=float(rng.uniform(2, 8))), None
    if name == "LongRoPE":
        short, long = rng.uniform(0.5, 2.0, half), rng.uniform(1.0, 64.0, half)
        return scaling.LongRoPE(short.tolist(), long.tolist(), L0, factor=s), seq
    return scaling.Proportional(float(rng.uniform(0, 1)), factor=s), None


def _score_fn(module: str) -> Any:
    """The derived score a^2 q_i^T R((n-m) g_i) k_i of one pair, lambdified."""
    der = _derived("per_frequency_relative")
    qi, ki, g_i, a = der.result["symbols"]
    plain = sp.symbols("q0 q1 k0 k1 g")
    expr = der.result["score"].subs(dict(zip([qi[0], qi[1], ki[0], ki[1], g_i], plain)))
    return sp.lambdify((*plain, a, rsym.m, rsym.n), expr, module)


def _relative_proof() -> Verdict:
    return Verdict(_derived("per_frequency_relative"))


def _relative_statement() -> sp.Basic:
    der = _derived("per_frequency_relative")
    i, h = rsym.I, rsym.H
    lhs = sp.Sum(label("<a R(m g_i) q_i, a R(n g_i) k_i>", r"\langle a R(m g_i)\,q_i,\; a R(n g_i)\,k_i \rangle"), (i, 0, h - 1))
    return sp.Eq(lhs, sp.Sum(der.result["score"], (i, 0, h - 1)), evaluate=False)


def _relative_numeric() -> str:

    score = _score_fn("numpy")

    def check(draw_seed: int, variant: str, m: int, n: int, shift: int, half: int, layout: str, base: float) -> None:
        rng = np.random.default_rng(draw_seed)
        dim = 2 * half
        sc, seq = _variant(variant, rng, half)
        q, k = rng.standard_normal((2, dim))
        kw = dict(layout=layout, base=base, scaling=sc, seq_len=seq)
        got = rope.apply(q, m, **kw) @ rope.apply(k, n, **kw)
        g = rope.inv_freq(dim, base=base, scaling=sc, seq_len=seq)
        a = sc.attention_factor
        pairs = rsym.pair_indices(dim, layout)
        want = sum(score(q[x], q[y], k[x], k[y], g[i], a, m, n) for i, (x, y) in enumerate(pairs))
        size = a * a * float(np.max(np.abs(q)) * np.max(np.abs(k)))
        gmax = float(np.max(g))
        tol = phase_bound((abs(m) + abs(n)) * gmax, terms=2 * dim, scale=size)
        assert abs(got - want) <= tol, f"{sc!r}: score {got!r} != a^2 q^T R((n-m) g) k = {want!r} (tol {tol:.3g})"
        moved = rope.apply(q, m + shift, **kw) @ rope.apply(k, n + shift, **kw)
        tol2 = tol + phase_bound((abs(m) + abs(n) + 2 * abs(shift)) * gmax, terms=2 * dim, scale=size)
        assert abs(moved - got) <= tol2, f"{sc!r}: shifting both positions by {shift} changes the score"

    return for_all(check, draw_seed=Ints(0, 2**31), variant=Choice(VARIANTS), m=Ints(-10**5, 10**5),
                   n=Ints(-10**5, 10**5), shift=Ints(-10**5, 10**5), half=Ints(2, 48),
                   layout=Choice(rsym.LAYOUTS), base=Choice(BASES), examples=48)


def _relative_mpmath() -> str:

    score = _score_fn("mpmath")
    rng = np.random.default_rng(3)
    dim = 8
    q, k = rng.standard_normal((2, dim))
    cases = (scaling.YaRN(16.0, 4096), scaling.LongRoPE([1.0] * 4, [2.0, 5.0, 17.0, 40.0], 4096, factor=32.0))
    worst = 0.0
    with mpmath.workdps(60):
        for sc in cases:
            g = [mpmath.mpf(float(x)) for x in sc.inv_freq(dim, 10000.0, seq_len=8192)]
            a = mpmath.mpf(sc.attention_factor)

            def rot(x: np.ndarray, p: int) -> list:
                out = []
                for i, t in enumerate(g):
                    c, sn = a * mpmath.cos(p * t), a * mpmath.sin(p * t)
                    u, v = mpmath.mpf(float(x[2 * i])), mpmath.mpf(float(x[2 * i + 1]))
                    out += [u * c - v * sn, v * c + u * sn]
                return out

            for m, n in ((10**6, 10**6 + 5), (10**9, 3), (2**40, 2**40 - 17)):
                direct = mpmath.fsum(x * y for x, y in zip(rot(q, m), rot(k, n)))
                rel = mpmath.fsum(score(q[2 * i], q[2 * i + 1], k[2 * i], k[2 * i + 1], t, a, m, n)
                                  for i, t in enumerate(g))
                if abs(direct - rel) > mpmath.mpf(10) ** -40:
                    raise CheckFailure(f"{sc!r}: a^2-relative form off by {mpmath.nstr(abs(direct - rel), 5)} "
                                       f"at m={m}, n={n}")
                kw = dict(layout="interleaved", base=10000.0, scaling=sc, seq_len=8192)
                got = rope.apply(q, m, **kw) @ rope.apply(k, n, **kw)
                tol = phase_bound(abs(m) + abs(n), terms=2 * dim,
                                  scale=float(a * a) * float(np.max(np.abs(q)) * np.max(np.abs(k))))
                err = abs(got - float(direct))
                if err > tol:
                    raise CheckFailure(f"{sc!r}: float64 score off by {err:.3g} > {tol:.3g} at m={m}, n={n}")
                worst = max(worst, err / tol)
    return f"a^2 form exact at 60 digits up to m = 2**40 (YaRN, LongRoPE); apply() within {worst:.2g} of its bound"


def _cuda() -> Any:
    cp = require_cupy()
    return cp


def _relative_cupy() -> str:
    cp = _cuda()

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64))
    pos = np.arange(8) * 1000
    for name in VARIANTS:
        sc, seq = _variant(name, np.random.default_rng(1), 32)
        kw = dict(layout="half", scaling=sc, seq_len=seq)
        host = rope.apply(x, pos, **kw)
        dev = cp.asnumpy(rope.apply(cp.asarray(x), cp.asarray(pos), **kw))
        err = float(np.max(np.abs(host - dev)))
        if err > phase_bound(8000 * float(np.max(rope.inv_freq(64, scaling=sc, seq_len=seq))), terms=2,
                             scale=sc.attention_factor * float(np.max(np.abs(x)))):
            raise CheckFailure(f"{sc!r}: CuPy and NumPy differ by {err:.3g}")
    return f"CuPy matches NumPy within the phase bound for {len(VARIANTS)} variants"


def _relative_formal() -> tuple:
    """For every real frequency g(i) per pair (0 included) and attention factor a > 0, over 2h features in
    both layouts: <a R(m g_i) q, a R(n g_i) k> = a^2 sum_i q_i^T R((n - m) g_i) k_i."""
    a, g = sp.Symbol("a", positive=True), sp.Function("g", real=True)
    return bridge.formal([sp.Eq(F.rope_score(layout, theta=g, scale=a, partial=False),
                                F.relative_score(layout, theta=g, factor=a ** 2, partial=False))
                          for layout in F.LAYOUTS])


register(
    Claim(
        id="scaling.relative",
        name="Every per-frequency scaling keeps RoPE relative",
        title="Within one forward pass (the sequence length, hence DynamicNTK's base and LongRoPE's regime, fixed), "
              "every per-frequency scaling keeps RoPE relative: for every attention factor a > 0 and per-pair "
              "frequencies g_i, <aR(m g_i)q, aR(n g_i)k> = a² qᵀR((n−m) g_i)k (Linear, YaRN, Llama 3.1, LongRoPE and "
              "p-RoPE checker-verified instances, NTK and DynamicNTK SymPy-decided ones); across steps with "
              "different lengths, see failures.mixed_frequencies",
        kind="theorem",
        family=FAMILY,
        statement=_relative_statement,
        formal=_relative_formal,
        proof=_relative_proof,
        checks=(Check("numeric", _relative_numeric), Check("mpmath", _relative_mpmath), Check("cupy", _relative_cupy)),
        references=("Su et al. 2021 (RoFormer), section 3.2.2, eq. 16", "Chen et al. 2023 (Position Interpolation), section 2",
                    f"{YARN_PAPER}, sections 3.1-3.4", HF_ROPE),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.ntk_base


def _ntk_tol(dim: int, s: float) -> float:
    """Relative error bound of b s^(d/(d-2)) in float64 (exponent, pow, product) and of the frequencies."""
    return 8 * U64 * (3 + dim / (dim - 2) * abs(math.log(s)))


def _ntk_numeric() -> str:

    b, s, D = _derived("ntk_base").result["symbols"]
    formula = sp.lambdify((b, s, D), _derived("ntk_base").result["base"], "math")

    def check(half: int, s_: float, base: float) -> None:
        dim = 2 * half
        ntk = scaling.NTK(s_)
        tol = _ntk_tol(dim, s_)
        got = ntk.scaled_base(dim, base)
        want = formula(base, s_, dim)
        assert abs(got / want - 1) <= tol, f"scaled_base {got!r} != b s^(d/(d-2)) = {want!r}"
        f, f0 = rope.inv_freq(dim, base=base, scaling=ntk), rope.inv_freq(dim, base=base)
        assert f[0] == 1.0, f"highest frequency changed: {f[0]!r}"
        assert abs(f[-1] * s_ / f0[-1] - 1) <= tol, f"lowest frequency {f[-1]!r} is not {f0[-1]!r} / {s_}"
        i = np.arange(half)
        ratio = f / f0 / s_ ** (-2.0 * i / (dim - 2))
        assert np.max(np.abs(ratio - 1)) <= 2 * tol, "theta'_i / theta_i is not s^(-2i/(d-2))"

    return for_all(check, half=Ints(2, 128), s_=Floats(0.1, 64.0), base=Choice(BASES))


def _ntk_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(50):
        for dim in (4, 64, 128, 256):
            for s_ in (0.5, 2.0, 8.0, 64.0):
                for base in (10000.0, 500000.0):
                    bp = mpmath.mpf(base) * mpmath.mpf(s_) ** (mpmath.mpf(dim) / (dim - 2))
                    e = -mpmath.mpf(dim - 2) / dim
                    resid = abs(bp**e * s_ - mpmath.mpf(base) ** e)
                    if resid > mpmath.mpf(10) ** -45:
                        raise CheckFailure(f"b s^(d/(d-2)) misses the lowest frequency by {mpmath.nstr(resid, 3)}")
                    ntk = scaling.NTK(s_)
                    rel = float(abs(mpmath.mpf(ntk.scaled_base(dim, base)) / bp - 1))
                    f = ntk.inv_freq(dim, base)
                    relf = max(float(abs(mpmath.mpf(float(x)) / bp ** (-mpmath.mpf(2 * i) / dim) - 1))
                               for i, x in enumerate(f))
                    tol = _ntk_tol(dim, s_)
                    if max(rel, relf) > tol:
                        raise CheckFailure(
                            f"NTK({s_}) d={dim} b={base}: relative error {max(rel, relf):.3g} > {tol:.3g}"
                        )
                    worst = max(worst, max(rel, relf) / tol)
    return f"b' exact at 50 digits; scaled_base and inv_freq within {worst:.2g} of the derived bound"


def _ntk_formal() -> tuple:
    """For every even d > 2, written d = 2q + 4 (q >= 0), every base b > 0 and factor s > 0, the NTK-aware base
    b s^(d/(d-2)) keeps the highest frequency (its power -2*0/d is 1), divides the lowest by s ((b s^(d/(d-2)))^(-(d-2)/d)
    = b^(-(d-2)/d) / s), and scales frequency i by s^(-2i/(d-2)) in between; and every base B > 0 that divides
    the lowest by s is b s^(d/(d-2)) (the statement's one hypothesis, which only this last relation names)."""
    q = sp.Symbol("q", integer=True, nonnegative=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    b, s = sp.Symbol("b", positive=True), sp.Symbol("s", positive=True)
    other = sp.Symbol("B", positive=True)
    d = 2 * q + 4
    base = b * s ** (d / (d - 2))
    x = -2 * i / d
    with sp.evaluate(False):
        highest = base ** (-2 * sp.Integer(0) / d)
        ratio = base ** x / b ** x  # theta'_i / theta_i, as the quotient it is
    return bridge.formal([sp.Eq(highest, 1, evaluate=False),
                          sp.Eq(base ** (-(d - 2) / d), b ** (-(d - 2) / d) / s, evaluate=False),
                          sp.Eq(ratio, s ** (-2 * i / (d - 2)), evaluate=False),
                          sp.Eq(other, base, evaluate=False)],
                         [sp.Eq(other ** (-(d - 2) / d), b ** (-(d - 2) / d) / s, evaluate=False)])


register(
    Claim(
        id="scaling.ntk_base",
        name="The NTK-aware base",
        title="NTK-aware base: b' = b·s^(d/(d−2)) keeps θ_0 = 1 and divides the lowest b^(−(d−2)/d) by s, and "
              "it is the only base that does, for every even d > 2",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Eq(sp.Symbol("b'", positive=True), _derived("ntk_base").result["base"]),
        formal=_ntk_formal,
        proof=lambda: Verdict(_derived("ntk_base")),
        checks=(Check("numeric", _ntk_numeric), Check("mpmath", _ntk_mpmath)),
        references=("bloc97, 'NTK-Aware Scaled RoPE', r/LocalLLaMA, June 2023",
                    f"{YARN_PAPER}, section 3.1 (b' = b s^(|D|/(|D|-2)))"),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.dynamic_continuity


def _dynamic_numeric() -> str:

    der = _derived("dynamic_continuity")
    b, s, h, L, L0 = der.result["symbols"]
    # the reference is evaluated at 30 digits: HF's form s L / L0 - (s - 1) cancels in float64
    formula = sp.lambdify((b, s, h, L, L0), der.result["base"], "mpmath")

    def check(s_: float, L0_: int, half: int, base: float, extra: int) -> None:
        dim = 2 * half
        dyn = scaling.DynamicNTK(s_, L0_)
        plain = rope.inv_freq(dim, base=base)
        for L_ in (None, L0_ - 1, L0_):
            if L_ is not None and L_ < 1:
                continue
            got = rope.inv_freq(dim, base=base, scaling=dyn, seq_len=L_)
            assert np.array_equal(got, plain), f"seq_len={L_} <= L0={L0_} is not plain RoPE"
        tol = _ntk_tol(dim, 1 + s_ * max(1, extra) / L0_)
        for L_ in (L0_ + 1, L0_ + extra):
            with mpmath.workdps(30):
                want = formula(mpmath.mpf(base), mpmath.mpf(s_), half, L_, L0_)
                got_b = dyn.scaled_base(dim, base, seq_len=L_)
                err = float(abs(got_b / want - 1))
            assert err <= tol, f"base at L={L_}: {got_b!r} != {mpmath.nstr(want, 20)} (relative error {err:.3g})"
        # continuity: one token past L0 moves every frequency by at most s/L0 (relative)
        near = rope.inv_freq(dim, base=base, scaling=dyn, seq_len=L0_ + 1)
        jump = float(np.max(np.abs(near / plain - 1)))
        assert jump <= s_ / L0_ + tol, f"frequencies jump by {jump:.3g} > s/L0 = {s_ / L0_:.3g} at L0 + 1"

    return for_all(check, s_=Floats(0.5, 32.0), L0_=Ints(1, 2**17), half=Ints(2, 64), base=Choice(BASES),
                   extra=Ints(1, 2**17))


def _dynamic_mpmath() -> str:

    der = _derived("dynamic_continuity")
    b, s, h, L, L0 = der.result["symbols"]
    formula = sp.lambdify((b, s, h, L, L0), der.result["base"], "mpmath")
    worst = 0.0
    with mpmath.workdps(50):
        for s_, L0_, half, base in ((2.0, 4096, 64, 10000.0), (8.0, 2048, 32, 500000.0), (32.0, 8192, 4, 10000.0)):
            # continuity at 50 digits: b'(L0 + eps) - b = O(eps), to eps = 10^-40
            for e in (10, 20, 40):
                eps = mpmath.mpf(10) ** -e
                gap = abs(formula(mpmath.mpf(base), mpmath.mpf(s_), half, L0_ + eps, L0_) - base)
                if gap > 10 * base * s_ * 2 * eps:
                    raise CheckFailure(f"b'(L0 + 1e-{e}) - b = {mpmath.nstr(gap, 5)}: not continuous at L0 = {L0_}")
            dyn = scaling.DynamicNTK(s_, L0_)
            for L_ in (L0_ + 1, 2 * L0_, 64 * L0_):
                want = formula(mpmath.mpf(base), mpmath.mpf(s_), half, L_, L0_)
                got = dyn.scaled_base(2 * half, base, seq_len=L_)
                err = float(abs(got / want - 1))
                tol = _ntk_tol(2 * half, 1 + s_ * L_ / L0_)
                if err > tol:
                    raise CheckFailure(f"DynamicNTK base at L = {L_}: {got!r} vs 50 digits {mpmath.nstr(want, 20)}")
                worst = max(worst, err / tol)
    return f"continuous at L0 to eps = 1e-40 (50 digits); scaled_base within {worst:.2g} of its bound from 50 digits"


def _dynamic_formal() -> tuple:
    """Dynamic NTK's ratio s L/L0 - (s - 1), whose power scales the base: 1 at L = L0 (so the base there is b),
    and 1 + (s/L0)(L - L0) with s/L0 > 0: above 1 exactly when L > L0. (The base's power and its limit at L0 are
    decided by the SymPy kernel only.)"""
    s, L, L0 = sp.symbols("s L L_0", positive=True)
    with sp.evaluate(False):
        rels = [sp.Eq(s * L0 / L0 - (s - 1), 1), sp.Lt(0, s / L0),
                sp.Eq(s * L / L0 - (s - 1), 1 + (s / L0) * (L - L0))]
    return bridge.formal(rels)


register(
    Claim(
        id="scaling.dynamic_continuity",
        name="Dynamic NTK's base ratio is exactly 1 at the original length and grows past it",
        title="Dynamic NTK: b'(L) = b(sL/L0 − (s−1))^(d/(d−2)): its ratio sL/L0 − (s−1) is exactly 1 at L = L0 "
              "and is 1 + (s/L0)(L − L0), slope s/L0 > 0 (that it exceeds 1 above L0, and b' > b there, follows: a "
              "reading; the value b'(L0) = b and the limit are SymPy-decided); RoPE for L ≤ L0, by definition",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Eq(
            sp.Limit(_derived("dynamic_continuity").result["base"], sym.seq_len, sym.L0, "+"), sym.b
        ),
        formal=_dynamic_formal,
        proof=lambda: Verdict(_derived("dynamic_continuity")),
        checks=(Check("numeric", _dynamic_numeric), Check("mpmath", _dynamic_mpmath)),
        references=("emozilla, 'Dynamically Scaled RoPE', r/LocalLLaMA, June 2023",
                    f"{YARN_PAPER}, section 3.3 (Dynamic Scaling: the concept; the formula with a factor is emozilla's and HF's)",
                    HF_ROPE + ", _compute_dynamic_ntk_parameters"),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.llama3_is_yarn


def _llama_tol(s_: float, low: float, high: float) -> float:
    """Relative error bound of one blended frequency (ramp weight error times |1 - 1/s|, plus the blend)."""
    return 4 * U64 * ((5 * high / (high - low) + 2) * abs(1 - 1 / s_) + 4 * max(1.0, 1 / s_))


def _llama_fns(module: str) -> tuple[Any, Any]:
    der = _derived("llama3_is_yarn")
    args = (sym.theta, sym.s, sym.L0, sym.low, sym.high)
    return sp.lambdify(args, der.result["llama3"], module), sp.lambdify(args, der.result["yarn"], module)


def _llama_numeric() -> str:

    llama_sym, _ = _llama_fns("numpy")

    def check(s_: float, L0_: int, low: float, gap: float, half: int, base: float) -> None:
        dim, high = 2 * half, low + gap
        llama = scaling.Llama3(s_, L0_, low_freq_factor=low, high_freq_factor=high)
        yarn = scaling.YaRN(s_, L0_, beta_fast=high, beta_slow=low, ramp="ratio", attention_factor=1.0)
        f_l, f_y = rope.inv_freq(dim, base=base, scaling=llama), rope.inv_freq(dim, base=base, scaling=yarn)
        th = rope.inv_freq(dim, base=base)
        tol = _llama_tol(s_, low, high)
        err = float(np.max(np.abs(f_l - f_y) / th))
        assert err <= 2 * tol, f"Llama3 and YaRN(ratio) differ by {err:.3g} (relative) > {2 * tol:.3g}"
        want = np.asarray(llama_sym(th, s_, float(L0_), low, high), dtype=np.float64)
        err = float(np.max(np.abs(f_l - want) / th))
        assert err <= 2 * tol, f"Llama3 differs from the derived piecewise form by {err:.3g}"
        assert yarn.attention_factor == 1.0 == llama.attention_factor

    return for_all(check, s_=Floats(0.25, 64.0), L0_=Ints(64, 2**18), low=Floats(0.25, 4.0), gap=Floats(0.25, 32.0),
                   half=Ints(1, 64), base=Choice(BASES))


def _llama_mpmath() -> str:

    llama_mp, yarn_mp = _llama_fns("mpmath")
    worst = mpmath.mpf(0)
    worst_f = 0.0
    with mpmath.workdps(50):
        for s_, L0_, low, high in ((8, 8192, 1, 4), (4, 4096, 2, 32), (32, 2**17, 0.5, 3)):
            S, L, lo, hi = mpmath.mpf(s_), mpmath.mpf(L0_), mpmath.mpf(low), mpmath.mpf(high)
            edges = [L / hi, L / lo]
            waves = edges + [e * (1 + sg * mpmath.mpf(10) ** -j) for e in edges for sg in (-1, 1) for j in (40, 20, 5)]
            waves += [mpmath.mpf(2) ** (x / mpmath.mpf(4)) for x in range(0, 4 * 24)]
            for w in waves:
                th = 2 * mpmath.pi / w
                diff = abs(llama_mp(th, S, L, lo, hi) - yarn_mp(th, S, L, lo, hi))
                worst = max(worst, diff / th)
            # pemath's float64 Llama3 against the 50-digit rule at its own frequencies
            dim, base = 128, 500000.0
            llama = scaling.Llama3(float(s_), L0_, low_freq_factor=float(low), high_freq_factor=float(high))
            f = llama.inv_freq(dim, base)
            tol = _llama_tol(float(s_), float(low), float(high))
            for i, x in enumerate(f):
                th = mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / dim)
                err = float(abs(mpmath.mpf(float(x)) - llama_mp(th, S, L, lo, hi)) / th)
                if err > tol:
                    raise CheckFailure(f"Llama3 float64 frequency {i} off by {err:.3g} > {tol:.3g} (relative)")
                worst_f = max(worst_f, err / tol)
    if worst > mpmath.mpf(10) ** -45:
        raise CheckFailure(f"Llama3 and YaRN(ratio) differ by {mpmath.nstr(worst, 3)} at 50 digits")
    return (f"agree to {mpmath.nstr(worst, 2)} at 50 digits on {len(waves)} wavelengths incl. the exact band edges; "
            f"Llama3 float64 within {worst_f:.2g} of its bound")


def _llama3_yarn_formal() -> tuple:
    """For factors l < h, r = L0/lambda turns of a wavelength in L0 (theta = 2 pi / lambda): Llama's smoothing
    (L0/lambda - l)/(h - l) is YaRN's ramp (r - alpha)/(beta - alpha) at alpha = l, beta = h; inside the band
    (r = l + u (h - l), 0 <= u <= 1) the ramp is u and both blend theta/s and theta alike; above it
    (r = beta + t, t > 0, beta = alpha + delta) the ramp is 1 + t/delta and YaRN's clip gives theta, below it
    (r = alpha - t) the ramp is -t/delta and the clip gives theta/s; at the edges
    Llama's weight is 1 (lambda = L0/h) and 0 (lambda = L0/l)."""
    L0, l, h, r, s, th, lam = sp.symbols("L_0 l h_f r s theta lambda", positive=True)
    u, t, dl = sp.Symbol("u", nonnegative=True), *sp.symbols("t delta", positive=True)
    pi = sp.pi
    with sp.evaluate(False):
        gamma = lambda w: (L0 / w - l) / (h - l)  # noqa: E731 - Llama's smoothing weight at wavelength w
        ramp = lambda x: (x - l) / (h - l)  # noqa: E731 - YaRN's ramp, alpha = l, beta = h
        mix = lambda g: (1 - g) * th / s + g * th  # noqa: E731
        clip = lambda g: sp.Min(sp.Max(g, 0), 1)  # noqa: E731
        rels = [
            sp.Eq(gamma(L0 / r), ramp(r)),
            sp.Eq(mix(gamma(2 * pi / th)), mix(ramp(L0 * th / (2 * pi)))),
            sp.Eq(ramp(l + u * (h - l)), u),
            sp.Eq((l + dl + t - l) / (l + dl - l), 1 + t / dl), sp.Eq(mix(clip(1 + t / dl)), th),
            sp.Eq((l - t - l) / (l + dl - l), -t / dl), sp.Eq(mix(clip(-t / dl)), th / s),
            sp.Eq(gamma(L0 / h), 1), sp.Eq(gamma(L0 / l), 0),
        ]
    return bridge.formal(rels, [sp.StrictLessThan(l, h)])


register(
    Claim(
        id="scaling.llama3_is_yarn",
        name="Llama 3.1's rule is YaRN's NTK-by-parts ramp",
        title="Llama 3.1's rule is YaRN's NTK-by-parts ramp in wavelength form: "
              "γ = (L0/λ − l)/(h_f − l) = (r − α)/(β − α) "
              "with r = L0/λ, α = low_freq_factor l, β = high_freq_factor h_f, for l < h_f (as Llama 3.1's "
              "configs have): inside the band Llama's γ is YaRN's unclipped ramp, which is u at r = α + u(β − α) "
              "(the clip inactive there for 0 ≤ u ≤ 1: a reading), above it (r = β + t) YaRN's clipped ramp gives "
              "θ and below it (r = α − t) θ/s, Llama's two outer branches, and at the edges γ is 1 and 0 (each "
              "decided; that a wavelength test of Llama's picks the r-region, r = L0/λ, is read)",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Eq(
            sym.llama3_frequency(sym.theta), sym.yarn_ratio_frequency(sym.theta, sym.low, sym.high)
        ),
        formal=_llama3_yarn_formal,
        proof=lambda: Verdict(_derived("llama3_is_yarn")),
        checks=(Check("numeric", _llama_numeric), Check("mpmath", _llama_mpmath)),
        references=("Meta llama-models, apply_scaling (Llama 3.1 reference implementation)",
                    f"{YARN_PAPER}, section 3.2 (NTK-by-parts: r = L/λ, ramp γ(r))",
                    HF_ROPE + ", _compute_llama3_parameters and _compute_yarn_parameters"),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.llama3_continuity


def _continuity_numeric() -> str:

    def check(s_: float, L0_: int, low: float, gap: float, edge: str, ulps: int) -> None:
        high = low + gap
        llama = scaling.Llama3(s_, L0_, low_freq_factor=low, high_freq_factor=high)
        factor = high if edge == "high" else low
        # dim 4: theta_1 = base^(-1/2); this base puts theta_1 on the edge lambda = L0 / factor
        base = (L0_ / (2 * math.pi * factor)) ** 2
        for _ in range(abs(ulps)):
            base = float(np.nextafter(base, math.inf if ulps > 0 else 0.0))
        got = rope.inv_freq(4, base=base, scaling=llama)[1]
        th = rope.inv_freq(4, base=base)[1]
        want = th if edge == "high" else th / s_
        tol = 4 * U64 * ((5 + abs(ulps)) * high / (high - low) + 6) * max(1.0, 1 / s_)
        assert abs(got - want) <= tol * th, (
            f"at the {edge} band edge ({ulps:+d} ulps of base) Llama3 gives {got!r}, the adjacent branch {want!r}: "
            f"a jump of {abs(got - want) / th:.3g} theta"
        )

    return for_all(check, s_=Floats(1.5, 64.0), L0_=Ints(64, 2**18), low=Floats(0.25, 4.0), gap=Floats(0.25, 32.0),
                   edge=Choice(["high", "low"]), ulps=Ints(-64, 64))


def _continuity_mpmath() -> str:
    der = _derived("llama3_continuity")
    args = (sym.lam, sym.s, sym.L0, sym.low, sym.high)
    smooth = sp.lambdify(args, der.result["smooth"], "mpmath")
    piece = sp.lambdify(args, sym.llama3_frequency(2 * sp.pi / sym.lam), "mpmath")
    at_edge, near_edge = mpmath.mpf(0), mpmath.mpf(0)
    with mpmath.workdps(50):
        for s_, L0_, low, high in ((8, 8192, 1, 4), (4, 4096, 2, 32), (32, 2**17, 0.5, 3)):
            S, L, lo, hi = mpmath.mpf(s_), mpmath.mpf(L0_), mpmath.mpf(low), mpmath.mpf(high)
            # each edge with its outer branch: theta = 2 pi / lambda (kept) and theta / s (interpolated)
            for edge, outer in ((L / hi, lambda w: 2 * mpmath.pi / w), (L / lo, lambda w: 2 * mpmath.pi / (w * S))):
                at_edge = max(at_edge, abs(smooth(edge, S, L, lo, hi) - outer(edge)) / outer(edge))
                for sg in (-1, 1):
                    w = edge * (1 + sg * mpmath.mpf(10) ** -40)
                    near_edge = max(near_edge, abs(piece(w, S, L, lo, hi) - outer(w)) / outer(w))
    if at_edge > mpmath.mpf(10) ** -45 or near_edge > mpmath.mpf(10) ** -35:
        raise CheckFailure(f"Llama3 jumps at a band edge at 50 digits: {mpmath.nstr(at_edge, 3)} on the edge, "
                           f"{mpmath.nstr(near_edge, 3)} at 1e-40 from it (relative)")
    return (f"smoothed value meets the adjacent branch to {mpmath.nstr(at_edge, 2)} on both edges and to "
            f"{mpmath.nstr(near_edge, 2)} at 1e-40 either side (50 digits)")


def _llama3_continuity_formal() -> tuple:
    """For factors l < h: at lambda = L0/h Llama's smoothing weight is 1 and the smoothed frequency is theta =
    2 pi / lambda, the branch below; at lambda = L0/l the weight is 0 and the frequency theta/s, the branch above.
    (The limits of the branches, also decided, are outside what the checker states.)"""
    L0, l, h, s = sp.symbols("L_0 l h_f s", positive=True)
    pi = sp.pi
    with sp.evaluate(False):
        gamma = lambda w: (L0 / w - l) / (h - l)  # noqa: E731
        smooth = lambda w: (1 - gamma(w)) * (2 * pi / w) / s + gamma(w) * (2 * pi / w)  # noqa: E731
        rels = [sp.Eq(gamma(L0 / h), 1), sp.Eq(smooth(L0 / h), 2 * pi * h / L0),
                sp.Eq(gamma(L0 / l), 0), sp.Eq(smooth(L0 / l), 2 * pi * l / L0 / s)]
    return bridge.formal(rels, [sp.StrictLessThan(l, h)])


register(
    Claim(
        id="scaling.llama3_continuity",
        name="Llama 3.1's smoothing meets the adjacent branch at both band edges",
        title="For factors l < h, Llama 3.1's smoothed frequency equals the adjacent branch at both band edges: θ "
              "at λ = L0/h, θ/s at λ = L0/l (so the rule, each branch continuous, is continuous: a reading)",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Tuple(*(  # the smoothed frequency at each edge is the adjacent branch's, 2 pi / lambda
            sp.Eq(sp.Subs(_derived("llama3_continuity").result["smooth"], sym.lam, edge), value, evaluate=False)
            for edge, value in ((sym.L0 / sym.high, 2 * sp.pi * sym.high / sym.L0),
                                (sym.L0 / sym.low, 2 * sp.pi * sym.low / (sym.L0 * sym.s))))),
        formal=_llama3_continuity_formal,
        proof=lambda: Verdict(_derived("llama3_continuity")),
        checks=(Check("numeric", _continuity_numeric), Check("mpmath", _continuity_mpmath)),
        references=("Meta llama-models, apply_scaling (Llama 3.1 reference implementation)",
                    HF_ROPE + ", _compute_llama3_parameters"),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.proportional_limits


def _proportional_numeric() -> str:

    def check(draw_seed: int, half: int, layout: str, m: int, n: int, base: float, p: float) -> None:
        rng = np.random.default_rng(draw_seed)
        dim = 2 * half
        q, k = rng.standard_normal((2, dim))
        kw = dict(layout=layout, base=base)
        nope = scaling.Proportional(0.0)
        assert np.array_equal(rope.apply(q, m, scaling=nope, **kw), q), "p = 0 rotates"
        score = rope.apply(q, m, scaling=nope, **kw) @ rope.apply(k, n, scaling=nope, **kw)
        assert score == q @ k, f"p = 0 score {score!r} != q.k = {q @ k!r}"
        full = scaling.Proportional(1.0)
        assert np.array_equal(rope.apply(q, m, scaling=full, **kw), rope.apply(q, m, **kw)), "p = 1 is not RoPE"
        part = scaling.Proportional(p)
        f, f0 = rope.inv_freq(dim, base=base, scaling=part), rope.inv_freq(dim, base=base)
        kept = int(np.count_nonzero(f))
        assert kept == math.floor(p * dim / 2), f"{kept} pairs rotated, not floor(p d/2) = {math.floor(p * dim / 2)}"
        assert np.array_equal(f[:kept], f0[:kept]), "the rotated pairs are not the first (highest-frequency) ones"
        if 0 < kept < half:
            assert f0[kept - 1] > np.max(f0[kept:]), "a dropped frequency exceeds a kept one"
        out = rope.apply(q, m, scaling=part, **kw)
        for i, (x, y) in enumerate(rsym.pair_indices(dim, layout)):
            if i >= kept:
                assert out[x] == q[x] and out[y] == q[y], f"dropped pair {i} was rotated"

    return for_all(check, draw_seed=Ints(0, 2**31), half=Ints(1, 64), layout=Choice(rsym.LAYOUTS),
                   m=Ints(-10**6, 10**6), n=Ints(-10**6, 10**6), base=Choice(BASES), p=Floats(0.0, 1.0))


def _proportional_mpmath() -> str:

    worst = 0.0
    with mpmath.workdps(50):
        for dim, base, p in ((8, 10000.0, 0.5), (128, 10000.0, 0.25), (256, 1e6, 0.75)):
            f = rope.inv_freq(dim, base=base, scaling=scaling.Proportional(p))
            kept = math.floor(p * dim / 2)
            for i in range(dim // 2):
                want = mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / dim) if i < kept else mpmath.mpf(0)
                err = float(abs(f[i] - want) / (want if want else 1))
                if err > 4 * U64:
                    raise CheckFailure(f"p-RoPE frequency {i} (d = {dim}, p = {p}): {f[i]!r} vs 50-digit "
                                       f"{mpmath.nstr(want, 20)}")
                worst = max(worst, err / (4 * U64))
    return f"p-RoPE's kept frequencies equal b^(-2i/d) at 50 digits within {worst:.2g} of 4 ulp, the others 0"


def _proportional_formal() -> tuple:
    """p-RoPE rotates pair i when i < k = floor(p d/2), d = 2h (every h > i: h = i + 1 + t). At p = 0, k = 0, no
    pair i >= 0 is rotated, and the rotation by frequency 0 is the identity: NoPE. At p = 1, k = h and every pair
    i < h is rotated: RoPE. And the frequency b^(-2i/d) falls with the pair for every base b = 1 + c > 1: for
    pairs i_1 < j_1 (the statement's one hypothesis, which only this last relation names), theta_{j_1} <
    theta_{i_1}, so the kept pairs i < k have the highest frequencies."""
    i, t = sp.symbols("i t", integer=True, nonnegative=True)
    m, h = sp.Symbol("m", real=True), i + 1 + t
    i1, j1 = sp.symbols("i_1 j_1", integer=True, nonnegative=True)
    h1, c = sp.Symbol("h", integer=True, positive=True), sp.Symbol("c", positive=True)
    with sp.evaluate(False):
        rels = [sp.Eq(sp.floor(0 * 2 * h / 2), 0), sp.Le(0, i), sp.Eq(sp.cos(m * 0), 1), sp.Eq(-sp.sin(m * 0), 0),
                sp.Eq(sp.sin(m * 0), 0), sp.Eq(sp.floor(1 * 2 * h / 2), h), sp.Lt(i, h),
                sp.Lt((1 + c) ** (-2 * j1 / (2 * h1)), (1 + c) ** (-2 * i1 / (2 * h1)))]
    return bridge.formal(rels, [sp.Lt(i1, j1)])


register(
    Claim(
        id="scaling.proportional_limits",
        name="p-RoPE runs from NoPE to RoPE",
        title="p-RoPE: p = 0 is NoPE (R = I, score qᵀk), p = 1 is RoPE, and p keeps the highest frequencies "
              "(it keeps pairs i < floor(p d/2), and θ_i falls with i for every base b > 1)",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Eq(rsym.block(rsym.m * 0), sp.eye(2), evaluate=False),
        formal=_proportional_formal,
        proof=lambda: Verdict(_derived("proportional_limits")),
        checks=(Check("numeric", _proportional_numeric), Check("mpmath", _proportional_mpmath)),
        references=("Barbero et al. 2024, 'Round and Round We Go! What makes Rotary Positional Encodings useful?' "
                    "(arXiv:2410.06205), section 6.1 (p-RoPE)", HF_ROPE + ", proportional"),
    )
)


# ---------------------------------------------------------------------------------------
# scaling.unit_factor


def _unit_numeric() -> str:

    der = _derived("unit_factor")
    b, D, L, L0 = der.result["symbols"]
    dyn_base = sp.lambdify((b, D, L, L0), der.result["dynamic_at_one"], "math")

    def check(half: int, base: float, L0_: int, extra: int) -> None:
        dim = 2 * half
        plain = rope.inv_freq(dim, base=base)
        for sc in (scaling.Linear(1.0), scaling.NTK(1.0), scaling.YaRN(1.0, L0_), scaling.YaRN(1.0, L0_, ramp="ratio"),
                   scaling.Llama3(1.0, L0_)):
            f = rope.inv_freq(dim, base=base, scaling=sc)
            err = float(np.max(np.abs(f - plain) / plain))
            assert err <= 4 * U64, f"{sc!r} is not RoPE: relative difference {err:.3g}"
            assert sc.attention_factor == 1.0, f"{sc!r} has attention factor {sc.attention_factor}"
        dyn = scaling.DynamicNTK(1.0, L0_)
        got = dyn.scaled_base(dim, base, seq_len=L0_ + extra)
        want = dyn_base(base, dim, L0_ + extra, L0_)
        tol = _ntk_tol(dim, 1 + extra / L0_)
        assert abs(got / want - 1) <= tol, f"DynamicNTK(1) base {got!r} != b (L/L0)^(d/(d-2)) = {want!r}"
        assert got > base, "DynamicNTK(1) kept the base above L0"

    return for_all(check, half=Ints(2, 64), base=Choice(BASES), L0_=Ints(1, 2**17), extra=Ints(1, 2**17))


def _unit_mpmath() -> str:

    der = _derived("unit_factor")
    b, D, L, L0 = der.result["symbols"]
    dyn_base = sp.lambdify((b, D, L, L0), der.result["dynamic_at_one"], "mpmath")
    worst = 0.0
    with mpmath.workdps(50):
        for dim, base, L0_ in ((128, 10000.0, 4096), (64, 500000.0, 8192), (8, 10000.0, 2048)):
            for L_ in (L0_ + 1, 4 * L0_):
                want = dyn_base(mpmath.mpf(base), dim, L_, L0_)
                got = scaling.DynamicNTK(1.0, L0_).scaled_base(dim, base, seq_len=L_)
                err = float(abs(got / want - 1))
                tol = _ntk_tol(dim, mpmath.mpf(L_) / L0_)
                if err > tol:
                    raise CheckFailure(f"DynamicNTK(1) base at L = {L_}: {got!r} vs 50 digits {mpmath.nstr(want, 20)}")
                worst = max(worst, err / tol)
        for name, a in (("YaRN", scaling.YaRN(1.0, 4096).attention_factor),
                        ("0.1 ln s + 1 at s = 1", mpmath.mpf("0.1") * mpmath.log(1) + 1)):
            if a != 1:
                raise CheckFailure(f"{name}: attention factor {a} != 1")
    return f"DynamicNTK(1) base b (L/L0)^(d/(d-2)) against 50 digits within {worst:.2g} of its bound; factors 1"


def _unit_formal() -> tuple:
    """At s = 1: Linear's theta/s and Llama's theta/s are theta; NTK's base b s^(d/(d-2)) is b (every even d >= 4,
    d = 2q + 4); YaRN's blend gamma theta + (1 - gamma) theta/s is theta and its factor 0.1 ln s + 1 is 1; Dynamic
    NTK's ratio s L/L0 - (s - 1) is L/L0, and above L0 (the statement's one hypothesis, L0 < L) its base
    b (L/L0)^(d/(d-2)) is larger than b: not RoPE."""
    theta, b, L, L0 = sp.Symbol("theta", positive=True), *sp.symbols("b L L_0", positive=True)
    gamma, q = sp.Symbol("gamma", nonnegative=True), sp.Symbol("q", integer=True, nonnegative=True)
    d, one = 2 * q + 4, sp.Integer(1)
    with sp.evaluate(False):
        rels = [sp.Eq(theta / one, theta), sp.Eq(b * one ** (d / (d - 2)), b),
                sp.Eq(gamma * theta + (1 - gamma) * theta / one, theta), sp.Eq(1 + sp.log(one) / 10, 1),
                sp.Eq(one * L / L0 - (one - 1), L / L0), sp.Lt(b, b * (L / L0) ** (d / (d - 2)))]
    return bridge.formal(rels, [sp.Lt(L0, L)])


register(
    Claim(
        id="scaling.unit_factor",
        name="At factor 1 Linear, NTK, YaRN and Llama 3.1 are RoPE; Dynamic NTK is not",
        title="At s = 1 Linear, NTK, YaRN (attention factor 0.1 ln 1 + 1 = 1) and Llama 3.1 are RoPE; "
              "Dynamic NTK is not: above L0 its base is b(L/L0)^(d/(d−2)) > b",
        kind="theorem",
        family=FAMILY,
        statement=lambda: sp.Eq(label("b'_dynamic(s=1)", r"b'_{\mathrm{dynamic}}\big|_{s=1}"), _derived("unit_factor").result["dynamic_at_one"]),
        formal=_unit_formal,
        proof=lambda: Verdict(_derived("unit_factor")),
        checks=(Check("numeric", _unit_numeric), Check("mpmath", _unit_mpmath)),
        references=(f"{YARN_PAPER}, section 3.4 (sqrt(1/t) = 0.1 ln s + 1)", HF_ROPE),
    )
)
