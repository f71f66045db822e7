"""RoPE's scaling variants as exact SymPy derivations.

Each function returns a :class:`~pemath.symbolic.Derivation` whose decided steps
raise :class:`~pemath.symbolic.ProofFailure` the moment they do not reduce to
exactly zero (or ``True``). The parts a wrong implementation would change (the
frequency, the exponent, the ramp bounds, the smoothing, the kept pairs) are
module-level functions and constants; the mutation tests (``tests/mutation``) patch them with the
field's bugs and see the proofs fail.
"""

from __future__ import annotations


import sympy as sp

from .. import scaling as _scaling
from ..scaling.proportional import Proportional as _Proportional
from . import shipped as _shipped
from . import pairs
from ._decide import Derivation, unevaluated
from .notation import label
from .rope import H, I, TRIG, block, frequency, m, n

__all__ = [
    "G",
    "a",
    "b",
    "s",
    "L0",
    "low",
    "high",
    "theta",
    "lam",
    "seq_len",
    "variant_frequencies",
    "per_frequency_relative",
    "Q",
    "D",
    "show_d",
    "ntk_base",
    "dynamic_ratio",
    "dynamic_continuity",
    "llama3_gamma",
    "llama3_frequency",
    "yarn_ratio_frequency",
    "llama3_is_yarn",
    "llama3_continuity",
    "proportional_kept",
    "proportional_limits",
    "unit_factor",
]

#: The frequency of pair i after any per-frequency change: an arbitrary positive function.
G = sp.Function("g", real=True)  # any real frequency per pair: p-RoPE sets some to 0
a = sp.Symbol("a", positive=True)  # the attention factor multiplying cos and sin
b = sp.Symbol("b", positive=True)  # RoPE's base
s = sp.Symbol("s", positive=True)  # the scaling factor
L0 = sp.Symbol("L_0", positive=True)  # the original (pre-training) context length
low = sp.Symbol("l", positive=True)  # Llama 3.1's low_freq_factor
high = sp.Symbol("h_f", positive=True)  # Llama 3.1's high_freq_factor
theta = sp.Symbol("theta", positive=True)  # one frequency
lam = sp.Symbol("lambda", positive=True)  # its wavelength 2 pi / theta
seq_len = sp.Symbol("L", positive=True)  # the sequence length (a constant of one forward pass)
RATIO_RAMP = sp.symbols("alpha beta", positive=True)  # YaRN's ramp over r = L0 / lambda: from alpha to beta
INDEX_RAMP = sp.symbols("c_lo c_hi", nonnegative=True)  # YaRN's ramp over the pair index: from c_lo to c_hi

_SOLVE = ("expand", "powsimp", "simplify")


# ---------------------------------------------------------------------------------------
# 1. Any per-frequency change keeps the relative property.


def variant_frequencies() -> dict[str, sp.Expr]:
    r"""The scaled frequency :math:`\theta'_i` of every variant, as SymPy expressions.

    Written in the pair index ``i``, ``d = 2h``, the base and each variant's constant
    parameters; the sequence length ``L`` of DynamicNTK and LongRoPE is one number for a
    whole forward pass, not a position.
    """
    i, d = I, 2 * H
    th = frequency(i, d, b)
    r = L0 * th / (2 * sp.pi)
    alpha, beta = RATIO_RAMP
    lo, hi = INDEX_RAMP
    f_ext = sp.IndexedBase("f", positive=True)
    k = sp.floor(sp.Symbol("p", nonnegative=True) * d / 2)
    yarn_gamma = lambda g: sp.Min(sp.Max(g, 0), 1)  # noqa: E731
    return {
        "Linear": th / s,
        "NTK": frequency(i, d, b * s ** (d / (d - 2))),
        "DynamicNTK": frequency(i, d, b * dynamic_ratio(sp.Max(seq_len, L0), L0, s) ** (d / (d - 2))),
        "YaRN (index ramp)": th / s * yarn_gamma((i - lo) / (hi - lo))
        + th * (1 - yarn_gamma((i - lo) / (hi - lo))),
        "YaRN (ratio ramp)": th / s * (1 - yarn_gamma((r - alpha) / (beta - alpha)))
        + th * yarn_gamma((r - alpha) / (beta - alpha)),
        "Llama3": llama3_frequency(th),
        "LongRoPE": th / f_ext[i],
        "Proportional": sp.Piecewise((th / s, i < k), (0, True)),
    }


def scaled_frequency(i: sp.Expr, pos: sp.Expr) -> sp.Expr:
    """The frequency pair i is turned by at position ``pos``: g(i), the same at every position."""
    return G(i)


#: The power of the attention factor a in the score: q and k are each multiplied by a.
FACTOR_POWER = 2


def per_frequency_relative() -> Derivation:
    r"""<a R(m g_i) q_i, a R(n g_i) k_i> = a^2 q_i^T R((n-m) g_i) k_i for any g, then each variant.

    Pair ``i`` turns by :func:`scaled_frequency` at each position and the score carries the factor to the
    power :data:`FACTOR_POWER`; the variants checked position-free are :func:`variant_frequencies`. The
    mutation tests patch a frequency that moves with the position, power 1, and a variant driven by the
    position.
    """
    d = Derivation("Any per-frequency scaling keeps RoPE relative")
    i = I
    f = scaled_frequency
    g_i = G(i)
    q = sp.IndexedBase("q", real=True)
    k = sp.IndexedBase("k", real=True)
    qi = sp.Matrix([q[i, 0], q[i, 1]])
    ki = sp.Matrix([k[i, 0], k[i, 1]])
    d.hypothesis("One forward pass, so the sequence length that DynamicNTK's base and LongRoPE's regime "
          "depend on is one fixed number for queries and keys alike. A scaling then replaces RoPE's frequency of "
          "pair i by a real number g(i) (0 for a pair p-RoPE drops), and may multiply cos and sin by an attention "
          "factor a: pair i of a vector at position m is multiplied by", a * block(m * f(i, m)))
    summand = ((a * block(m * f(i, m)) * qi).T * (a * block(n * f(i, n)) * ki))[0]
    target = a**FACTOR_POWER * (qi.T * block((n - m) * g_i) * ki)[0]
    d.equal("The factor a multiplies q and k alike, so it enters the score squared: "
            "<a R(m g_i) q_i, a R(n g_i) k_i> = a^2 q_i^T R((n-m) g_i) k_i",
            summand, target, methods=TRIG)
    for layout in pairs.LAYOUTS:
        pairs.score_over_pairs(d, layout, f"{layout} pairs: summed over the d/2 pairs, for any real g (a zero "
                               "frequency included), the score "
                               "is sum_i a^2 q_i^T R((n-m) g_i) k_i for every even d",
                               a * block(m * f(i, m)) * qi, a * block(n * f(i, n)) * ki, target, q, k, i=i)
    d.zero("which depends on the positions only through n - m: the score is unchanged when m and n shift "
           "together", unevaluated(lambda: sp.diff(target.subs(n, m + sp.Symbol("r", real=True)), m)))
    d.hypothesis("Each ramp's ends are ordered (the variants divide by their difference): c_lo < c_hi for YaRN's "
                 "index ramp, alpha < beta for its ratio ramp, l < h for Llama 3.1's factors",
                 [sp.StrictLessThan(*INDEX_RAMP), sp.StrictLessThan(*RATIO_RAMP), sp.StrictLessThan(low, high)])
    d.remark("The proof used nothing about g but that it is a number per pair, the same at every position. "
          "So it holds for every variant whose frequency is a function of i, d, the base and constant "
          "parameters, and never of m or n:")
    for name, expr in variant_frequencies().items():
        d.define(f"{name}'s frequency theta'_i", expr)
        d.free_of(f"{name}: theta'_i = {sp.sstr(expr)} involves neither m nor n, so it is an instance of g",
                  expr, {m, n})
    shipped_variants(d)
    d.result["score"] = target
    d.result["symbols"] = (qi, ki, g_i, a)
    return d


def yarn_bound(turns: sp.Expr, dim: int, base: sp.Expr, original: sp.Expr) -> sp.Expr:
    """c(beta) = d ln(L0 / (2 pi beta)) / (2 ln b): the fractional pair index whose wavelength fits beta times in
    L0 (YaRN's index ramp, before HF's floor/ceil and clip)."""
    return dim * sp.log(original / (2 * sp.pi * turns)) / (2 * sp.log(base))


def shipped_variants(d: Derivation, dim: int = 128, base: int = 10000) -> None:
    """Each variant's formula, at one concrete configuration, against the shipped :mod:`pemath.scaling` class."""
    shipped = _scaling
    forms = variant_frequencies()
    fs, l0, seq = 8, 4096, 16384
    common = {H: sp.Integer(dim // 2), b: sp.Integer(base), s: sp.Integer(fs), L0: sp.Integer(l0)}
    alpha, beta = RATIO_RAMP
    lo, hi = INDEX_RAMP
    c_lo = sp.Max(sp.floor(yarn_bound(32, dim, sp.Integer(base), sp.Integer(l0))), 0)
    c_hi = sp.Min(sp.ceiling(yarn_bound(1, dim, sp.Integer(base), sp.Integer(l0))), dim - 1)
    factors = [sp.Rational(32 + j, 32) for j in range(dim // 2)]
    f_ext = sp.IndexedBase("f", positive=True)
    cases = [
        ("Linear", shipped.Linear(fs), {}, None),
        ("NTK", shipped.NTK(fs), {}, None),
        ("DynamicNTK", shipped.DynamicNTK(fs, l0), {seq_len: sp.Integer(seq)}, seq),
        ("YaRN (index ramp)", shipped.YaRN(fs, l0, beta_fast=32, beta_slow=1), {lo: c_lo, hi: c_hi}, None),
        ("YaRN (ratio ramp)", shipped.YaRN(fs, l0, beta_fast=32, beta_slow=1, ramp="ratio"),
         {alpha: sp.Integer(1), beta: sp.Integer(32)}, None),
        ("Llama3", shipped.Llama3(fs, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
         {L0: sp.Integer(8192), low: sp.Integer(1), high: sp.Integer(4)}, None),
        ("Proportional", shipped.Proportional(0.5, factor=float(fs)), {sp.Symbol("p", nonnegative=True): sp.S.Half},
         None),
    ]
    for name, scaling, extra, length in cases:
        values = {**common, **extra}
        _shipped.scaled(d, name, scaling, forms[name], I, values, dim, base, seq_len=length,
                        describe=lambda v=values: f"d = {dim}, " + ", ".join(
                            f"{sp.sstr(k)} = {sp.sstr(w)}" for k, w in v.items() if k is not H))
    yarn = shipped.YaRN(fs, l0)
    _shipped.agrees(d, f"pemath.scaling.YaRN's attention factor is 0.1 ln s + 1 (s = {fs})",
                    [yarn.attention_factor], [sp.log(sp.Integer(fs)) / 10 + 1])
    long = shipped.LongRoPE([float(f) for f in factors], [float(f) for f in factors], l0, max_position=4 * l0)
    _shipped.scaled(d, "LongRoPE", long, forms["LongRoPE"], I, common, dim, base,
                    describe=lambda: f"d = {dim}, base {base}, factors f_i = (32 + i)/32",
                    per_index=lambda k: {f_ext[k]: factors[k]})


# ---------------------------------------------------------------------------------------
# 2. The NTK-aware base.


Q = sp.Symbol("q", integer=True, nonnegative=True)  # d = 2q + 4: every even d > 2
D = sp.Symbol("d", integer=True, positive=True)  # d, for display


def show_d(expr: sp.Basic) -> sp.Basic:
    """``expr`` with d = 2q + 4 written back in terms of d (for display only)."""
    return expr.subs(Q, (D - 4) / 2)


def ntk_formula(base: sp.Expr, factor: sp.Expr, dim: sp.Expr) -> sp.Expr:
    """The NTK-aware base the derivation checks its solution against: b s^(d/(d-2))."""
    return base * factor ** (dim / (dim - 2))


def ntk_base() -> Derivation:
    r"""Solve for the base b' that divides the lowest frequency by s and keeps the highest.

    The solution is checked against :func:`ntk_formula`, :math:`b s^{d/(d-2)}` (the mutation tests patch
    the exponent ``d/(d-1)``). Every even
    ``d > 2`` is written ``d = 2q + 4`` (q >= 0), so that ``d - 2 > 0`` is known and
    powers of positive numbers combine exactly.
    """
    der = Derivation("The NTK-aware base")
    d = 2 * Q + 4
    bp = sp.Symbol("b'", positive=True)
    lowest = d / 2 - 1
    der.define("RoPE's frequencies are theta_i = b^(-2i/d), i = 0 .. d/2 - 1, for an even d > 2 (at d = 2 the "
            "lowest and highest coincide); write d = 2q + 4, q >= 0.", sp.Eq(sp.Symbol("theta_i"), frequency(I, D, b)))
    der.equal("The highest frequency, i = 0, is 1 whatever the base: it is unchanged by any b'",
              unevaluated(lambda: frequency(0, d, bp)), sp.S.One)
    der.equal("The lowest, i = d/2 - 1, is b^(-(d-2)/d)",
        unevaluated(lambda: frequency(lowest, d, b)), b ** (-(d - 2) / d),
              methods=("expand", "powsimp"))
    requirement = sp.Eq(bp ** (-(d - 2) / d), b ** (-(d - 2) / d) / s)
    der.define("Require the new lowest frequency to be the old one divided by s:", show_d(requirement))
    sols = sp.solve(requirement, bp)
    if len(sols) != 1:
        der.fail(f"expected SymPy to find one solution b', found {len(sols)}")
    solution = sols[0]
    der.define("SymPy's solution (that no other base solves it is decided below, by pemath.kernel)",
               sp.Eq(bp, show_d(solution)))
    target = ntk_formula(b, s, d)
    der.equal("which is b' = b s^(d/(d-2))", solution, target, methods=_SOLVE)
    der.zero("Check: b s^(d/(d-2)) divides the lowest frequency by s",
             target ** (-(d - 2) / d) - b ** (-(d - 2) / d) / s, methods=_SOLVE)
    der.equal("In between, theta'_i / theta_i = s^(-2i/(d-2)): from 1 at i = 0 to 1/s at i = d/2 - 1, "
              "geometrically", unevaluated(lambda: frequency(I, d, target) / frequency(I, d, b)),
              s ** (-2 * I / (d - 2)),
              methods=_SOLVE + ("power_base+powsimp",))
    for step in der.steps:  # shown in terms of d; decided in terms of q
        shown = show_d(step.expr) if step.expr is not None else None
        if shown is not None and not isinstance(shown, sp.logic.boolalg.BooleanAtom):
            step.expr = shown
    _ntk_unique_checked(der)
    der.result["base"] = show_d(target)
    der.result["symbols"] = (b, s, D)
    return der


def _ntk_unique_checked(der: Derivation) -> None:
    """Every base B > 0 that divides the lowest frequency by s is b s^(d/(d-2)), d = 2q + 4: decided by
    pemath.kernel alone (log of both sides, solve the linear equation in log B, exp of both sides)."""
    from .kterms import num, rule, var

    B, b, q, s = var("B", "pos"), var("b", "pos"), var("q", "nat"), var("s", "pos")
    one = num(1)
    P = ("add", num(4), ("mul", num(2), q))  # d
    Q = ("add", num(2), ("mul", num(2), q))  # d - 2
    c = ("mul", ("inv", P), ("mul", num(-1), Q))  # -(d - 2)/d
    X, Y = ("mul", c, ("log", B)), ("mul", c, ("log", b))
    W = ("mul", ("inv", Q), P, ("log", s))  # (d/(d - 2)) log s
    z = var("z_")

    hyp = ("eq", ("exp", X), ("mul", ("exp", Y), ("inv", s)))  # B^(-(d-2)/d) = b^(-(d-2)/d) / s
    logs = ("eq", X, ("add", Y, ("mul", num(-1), ("log", s))))  # its log
    c_logs = ("ideal", ((rule("log_exp", X), num(-1)), (("cong", ("log", z), "z_", ("exp", X), hyp[2], ((("hyp", 0), one),)), one),
                        (rule("log_mul", ("exp", Y), ("inv", s)), one), (rule("log_exp", Y), one),
                        (("cong", ("log", z), "z_", ("mul", s, ("inv", s)), one, ((rule("inv", s), one),)), one),
                        (rule("log_mul", s, ("inv", s)), num(-1))))
    diff = ("add", ("log", B), ("mul", num(-1), ("log", b)))  # log B - log b = (d/(d - 2)) log s, from the above
    solved = (("hyp", 1), ("mul", num(-1), P, ("inv", Q))), (rule("inv", P), ("mul", num(-1), diff, Q, ("inv", Q))), \
        (rule("inv", Q), ("mul", num(-1), diff))
    c_base = ("ideal", ((rule("exp_log", B), num(-1)), (("cong", ("exp", z), "z_", ("log", B), ("add", ("log", b), W), solved),
                                                         one),
                        (rule("exp_add", ("log", b), W), one), (rule("exp_log", b), ("exp", W))))
    der.checked("And no other base does: for every B > 0 with B^(-(d-2)/d) = b^(-(d-2)/d) / s, the log of both sides "
                "gives -(d-2)/d log B = -(d-2)/d log b - log s, so log B = log b + d/(d-2) log s and B = b "
                "s^(d/(d-2)) (d = 2q + 4)",
                ("forall", (B, b, q, s), (hyp,), ("eq", B, ("mul", b, ("exp", W)))),
                ("cut", logs, c_logs, c_base))


# ---------------------------------------------------------------------------------------
# 3. Dynamic NTK.


def dynamic_ratio(length: sp.Expr, original: sp.Expr, factor: sp.Expr) -> sp.Expr:
    """Hugging Face's dynamic NTK ratio s L / L0 - (s - 1)."""
    return factor * length / original - (factor - 1)


def dynamic_continuity() -> Derivation:
    r"""b'(L) = b ratio(L)^(d/(d-2)) for L > L0, b for L <= L0, is continuous at L0.

    The ratio is :func:`dynamic_ratio` (the mutation tests patch ``s L / L0``, the formula without its
    ``-(s - 1)`` term).
    """
    der = Derivation("Dynamic NTK at the original length")
    h = H
    d = 2 * h
    L = seq_len
    rho = dynamic_ratio(L, L0, s)
    above = b * rho ** (d / (d - 2))
    der.define("At sequence length L the base is b for L <= L0 (plain RoPE) and, above L0 (d = 2h),",
            sp.Eq(sp.Symbol("b'(L)"), above))
    der.zero("At L = L0 the ratio is exactly 1", unevaluated(lambda: rho.subs(L, L0) - 1), methods=("expand",))
    der.equal("so the formula gives b there: the value above L0 meets plain RoPE's base",
              unevaluated(lambda: above.subs(L, L0)), b, methods=("expand", "powsimp"))
    der.define("Its limit from above:", sp.Limit(above, L, L0, "+"))
    der.equal("is b: b' is continuous at L0", sp.Limit(above, L, L0, "+"), b, methods=("expand", "powsimp", "doit"))
    der.assumed("The ratio grows with L (its slope s/L0 is positive), so b' >= b for L >= L0", sp.diff(rho, L),
                "positive")
    der.equal("The ratio is 1 + s (L - L0)/L0: the form pemath evaluates, exactly 1 at L0",
              unevaluated(lambda: dynamic_ratio(L, L0, s)), 1 + s * (L - L0) / L0, methods=("expand",))
    der.result["base"] = above
    der.result["symbols"] = (b, s, h, L, L0)
    return der


# ---------------------------------------------------------------------------------------
# 4-5. Llama 3.1's rule and YaRN's NTK-by-parts.


def llama3_gamma(wavelength: sp.Expr) -> sp.Expr:
    """Llama 3.1's smoothing (L0 / lambda - l) / (h - l)."""
    return (L0 / wavelength - low) / (high - low)


def llama3_frequency(th: sp.Expr) -> sp.Expr:
    """Llama 3.1's scaled frequency of one frequency ``th``, piecewise in its wavelength."""
    w = 2 * sp.pi / th
    g = llama3_gamma(w)
    return sp.Piecewise((th, w < L0 / high), (th / s, w > L0 / low), ((1 - g) * th / s + g * th, True))


def yarn_ratio_frequency(th: sp.Expr, alpha: sp.Expr, beta: sp.Expr) -> sp.Expr:
    """YaRN's paper ramp: gamma = clip((r - alpha)/(beta - alpha), 0, 1), r = L0 th / 2 pi."""
    r = L0 * th / (2 * sp.pi)
    g = sp.Min(sp.Max((r - alpha) / (beta - alpha), 0), 1)
    return (1 - g) * th / s + g * th


#: YaRN's ramp bounds matched to Llama's factors: alpha = low_freq_factor, beta = high_freq_factor.
YARN_BOUNDS = (low, high)


def llama3_is_yarn() -> Derivation:
    r"""Llama 3.1's rule is YaRN's ratio ramp with alpha = low_freq_factor, beta = high_freq_factor.

    The bounds are :data:`YARN_BOUNDS` (the mutation tests swap them).
    """
    alpha, beta = YARN_BOUNDS
    der = Derivation("Llama 3.1 scaling is YaRN's NTK-by-parts with alpha = l, beta = h")
    der.hypothesis("The factors are ordered, l < h (Llama 3.1 ships l = 1, h = 4): the smoothing divides by h - l",
                   sp.StrictLessThan(low, high))
    th, w = theta, lam
    r = sp.Symbol("r", positive=True)
    der.define("Llama 3.1 (apply_scaling): with wavelength lambda = 2 pi / theta, factors l < h and "
            "original length L0,", sp.Eq(label("theta'", r"\theta'"), llama3_frequency(th)))
    der.define("YaRN (paper, NTK-by-parts): with r = L0 / lambda, the number of turns a wavelength makes in "
            "L0, and gamma(r) = clip((r - alpha)/(beta - alpha), 0, 1),",
            sp.Eq(label("theta'", r"\theta'"), yarn_ratio_frequency(th, alpha, beta)))
    r_of = L0 * th / (2 * sp.pi)
    der.equal("The turn count: L0 / lambda = L0 theta / (2 pi)",
        unevaluated(lambda: (L0 / w).subs(w, 2 * sp.pi / th)), r_of)
    gamma_yarn = (r - alpha) / (beta - alpha)
    der.equal("Llama's smoothing, written in r (lambda = L0 / r), is YaRN's ramp with alpha = l, beta = h: "
              "(L0/lambda - l)/(h - l) = (r - alpha)/(beta - alpha)",
              unevaluated(lambda: llama3_gamma(L0 / r)), gamma_yarn, methods=("expand", "simplify"))
    der.equal("Upper band edge: L0/h - lambda = (lambda/beta)(r - beta), with lambda = L0 / r",
              (L0 / high - w).subs(w, L0 / r), ((w / beta) * (r - beta)).subs(w, L0 / r),
              methods=("expand", "simplify"))
    der.assumed("and lambda/beta > 0, so lambda < L0/h <=> r > beta, and lambda = L0/h <=> r = beta", w / beta,
                "positive")
    der.equal("Lower band edge: L0/l - lambda = (lambda/alpha)(r - alpha)",
              (L0 / low - w).subs(w, L0 / r), ((w / alpha) * (r - alpha)).subs(w, L0 / r),
              methods=("expand", "simplify"))
    der.assumed("and lambda/alpha > 0, so lambda > L0/l <=> r < alpha, and lambda = L0/l <=> r = alpha",
                w / alpha, "positive")
    mix = lambda g: (1 - g) * th / s + g * th  # noqa: E731
    der.equal("Inside the band both blend theta/s and theta with the same weight: Llama's smoothed "
              "frequency is YaRN's (1 - gamma(r)) theta/s + gamma(r) theta",
              unevaluated(lambda: mix(llama3_gamma(2 * sp.pi / th))), mix(gamma_yarn.subs(r, r_of)), methods=("expand",))
    u = sp.Symbol("u", nonnegative=True)
    der.equal("There YaRN's clip is inactive: r = alpha + u (beta - alpha) with 0 <= u <= 1 gives gamma = u",
              unevaluated(lambda: gamma_yarn.subs(r, alpha + u * (beta - alpha))), u, methods=("expand", "simplify"))
    tt, dl = sp.Symbol("t", positive=True), sp.Symbol("delta", positive=True)
    der.equal("Above the band, r = beta + t (t > 0; beta = alpha + delta, delta > 0): gamma(r) = 1 + t/delta ...",
              unevaluated(lambda: gamma_yarn.subs(r, beta + tt).subs(beta, alpha + dl)), 1 + tt / dl)
    der.equal("... which YaRN clips to 1: its frequency is theta, Llama's first branch",
              unevaluated(lambda: mix(sp.Min(sp.Max(1 + tt / dl, 0), 1))), th)
    der.equal("Below it, r = alpha - t (t > 0): gamma(r) = -t/delta ...",
              unevaluated(lambda: gamma_yarn.subs(r, alpha - tt).subs(beta, alpha + dl)), -tt / dl)
    der.equal("... which YaRN clips to 0: its frequency is theta/s, Llama's second branch",
              unevaluated(lambda: mix(sp.Min(sp.Max(-tt / dl, 0), 1))), th / s)
    der.equal("At the edge r = beta (lambda = L0/h: Llama's tests are both false, it smooths) "
              "Llama's gamma is 1, YaRN's clip is 1",
              unevaluated(lambda: llama3_gamma(L0 / beta)), sp.S.One, methods=("expand",))
    der.equal("At the edge r = alpha (lambda = L0/l) Llama's gamma is 0, YaRN's clip is 0",
              unevaluated(lambda: llama3_gamma(L0 / alpha)), sp.S.Zero, methods=("expand",))
    der.remark("Reading: the five cases above (inside the band, above, below, and the two edges, where the strict "
               "inequalities do not matter as each edge gets the value of both adjacent branches) are every "
               "wavelength, so Llama3(s, L0, l, h) = YaRN(s, L0, beta_fast = h, beta_slow = l, ramp = ratio, "
               "attention factor 1); scaling.relative decides the two shipped classes against these formulas.")
    der.result["llama3"] = llama3_frequency(th)
    der.result["yarn"] = yarn_ratio_frequency(th, alpha, beta)
    return der


def llama3_continuity() -> Derivation:
    r"""Llama 3.1's smoothed frequency meets theta at lambda = L0/h and theta/s at lambda = L0/l.

    The smoothing is :func:`llama3_gamma` (the mutation tests patch the one with l and h swapped).
    """
    der = Derivation("Llama 3.1 scaling is continuous at both band edges")
    der.hypothesis("The factors are ordered, l < h (Llama 3.1 ships l = 1, h = 4): the smoothing divides by h - l",
                   sp.StrictLessThan(low, high))
    w = lam
    th = 2 * sp.pi / w
    g = llama3_gamma(w)
    smooth = (1 - g) * th / s + g * th
    keep, interp = th, th / s
    der.define("As a function of the wavelength lambda (theta = 2 pi / lambda) the three branches are "
            "theta (lambda < L0/h), theta/s (lambda > L0/l), and in between", smooth)
    for edge, other, name, gval in ((L0 / high, keep, "L0/h", 1), (L0 / low, interp, "L0/l", 0)):
        der.equal(f"At lambda = {name} the smoothing weight is {gval}",
            unevaluated(lambda: g.subs(w, edge)), sp.Integer(gval),
                  methods=("expand",))
        der.equal(f"so the smoothed frequency there equals the adjacent branch "
                  f"{'theta' if gval else 'theta/s'}", unevaluated(lambda: smooth.subs(w, edge)), other.subs(w, edge),
                  methods=("expand",))
        der.zero(f"and the two branches have the same limit as lambda -> {name}: no jump",
                 sp.Limit(smooth, w, edge) - sp.Limit(other, w, edge), methods=("expand", "doit"))
    der.result["smooth"] = smooth
    return der


# ---------------------------------------------------------------------------------------
# 6. p-RoPE.


def proportional_kept(i: sp.Expr, k: sp.Expr, h: sp.Expr) -> sp.Basic:
    """p-RoPE rotates pair i when i < k (the k highest frequencies)."""
    return sp.StrictLessThan(i, k)


def proportional_limits() -> Derivation:
    r"""p = 0 is NoPE, p = 1 is RoPE, and p keeps the highest frequencies.

    :func:`proportional_kept` says whether pair ``i`` of ``h`` is rotated when ``k`` are kept (``i < k``;
    the mutation tests patch ``i >= h - k``, keeping the lowest, which agrees at p = 0 and p = 1 and is
    caught at p = 1/2).
    """
    der = Derivation("p-RoPE: p = 0 is NoPE, p = 1 is RoPE, p keeps the highest frequencies")
    i = sp.Symbol("i", integer=True, nonnegative=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)
    h = i + 1 + t  # any number of pairs h containing pair i: 0 <= i <= h - 1
    p = sp.Symbol("p", nonnegative=True)
    k_of = lambda frac, half: sp.floor(frac * 2 * half / 2)  # noqa: E731
    der.define("Of the d/2 = h pairs, p-RoPE keeps k = floor(p d / 2) and sets the other frequencies to 0; "
            "take any pair i, 0 <= i <= h - 1 (h = i + 1 + t, t >= 0):",
            sp.Eq(label("theta'_i", r"\theta'_i"), sp.Piecewise((frequency(I, 2 * H, b), proportional_kept(I, k_of(p, H), H)), (0, True))))
    k0, k1 = k_of(sp.S.Zero, h), k_of(sp.S.One, h)
    der.equal("p = 0 keeps k = floor(0 * d/2) = 0 pairs", unevaluated(lambda: k_of(sp.S.Zero, h)), sp.S.Zero)
    der.true("so no pair is rotated", unevaluated(lambda: sp.Not(proportional_kept(i, k0, h))))
    der.equal("every frequency is 0 and R(m * 0) is the identity: the score is q^T k (NoPE)",
              unevaluated(lambda: block(m * 0)), sp.eye(2))
    der.equal("p = 1 keeps k = floor(1 * d/2) = d/2 = h pairs", unevaluated(lambda: k_of(sp.S.One, h)), h)
    der.true("so every pair is rotated with its own theta_i: RoPE", unevaluated(lambda: proportional_kept(i, k1, h)))
    c = sp.Symbol("c", positive=True)
    base = 1 + c
    der.remark("In between, p-RoPE keeps the highest frequencies: theta_i = b^(-2i/d) falls with i for b > 1 "
            "(b = 1 + c), as ln theta_i = -(2i/d) ln b. For concrete d:")
    for dim, frac in ((8, sp.Rational(1, 2)), (12, sp.Rational(1, 3)), (12, sp.Rational(1, 2))):
        half = dim // 2
        k = k_of(frac, half)
        rotated = [j for j in range(half) if bool(proportional_kept(sp.Integer(j), k, sp.Integer(half)))]
        dropped = [j for j in range(half) if j not in rotated]
        jj_, kept_ = sp.Symbol("j", integer=True, nonnegative=True), label("kept", r"\mathrm{kept}")
        shipped = _Proportional(float(frac)).inv_freq(dim, 10000.0)
        der.enumerated(f"d = {dim}, p = {frac}: pemath.scaling.Proportional rotates exactly the first k = {k} of the "
                       f"{half} pairs (its nonzero frequencies)", (jj_, kept_),
                       [(j, sp.true if shipped[j] != 0 else sp.false) for j in range(half)],
                       sp.Equivalent(kept_, proportional_kept(jj_, k, sp.Integer(half))))
        lnf = lambda j: -sp.Rational(2 * j, dim) * sp.log(base)  # noqa: E731
        gaps = [sp.Gt(lnf(j) - lnf(jj), 0, evaluate=False) for j in rotated for jj in dropped]
        der.true(f"d = {dim}, p = {frac}: every rotated frequency (pairs {rotated}) exceeds every dropped one "
                 f"(pairs {dropped})", sp.And(*gaps))
    _frequencies_fall_checked(der)
    return der


def _frequencies_fall_checked(der: Derivation) -> None:
    """theta_j < theta_i for every pair i < j and every base b = 1 + c > 1 (d = 2h): the kept pairs i < k, for any
    k, have the highest frequencies. Decided by pemath.kernel alone: theta_i = theta_j e^delta, delta = (j - i)
    log(b)/h > 0, and e^delta >= 1 + delta."""
    from .kterms import num, var

    i_, j_, h_, c_ = var("i_1", "nat"), var("j_1", "nat"), var("h", "posint"), var("c", "pos")
    L = ("log", ("add", num(1), c_))

    def theta(k: tuple) -> tuple:  # b^(-2k/d)
        return ("exp", ("mul", num(-1), k, L, ("inv", h_)))

    yj = ("mul", num(-1), j_, L, ("inv", h_))
    delta = ("mul", ("add", j_, ("mul", num(-1), i_)), L, ("inv", h_))
    cert = ("sign", ((("rule", "exp_add", (yj, delta)), num(1)),),
            ((("rule", "exp_ge", (delta,)), ("exp", yj)), (("hyp", 0), ("mul", ("exp", yj), L, ("inv", h_)))))
    der.checked("For every d = 2h and b = 1 + c > 1, the frequency falls with the pair: theta_j < theta_i for i < j "
                "(theta_i = theta_j e^delta with delta = (j - i) ln(b)/h > 0, and e^delta >= 1 + delta): the kept "
                "pairs i < k have the highest frequencies",
                ("forall", (c_, h_, i_, j_), (("lt", i_, j_),), ("lt", theta(j_), theta(i_))), cert)


# ---------------------------------------------------------------------------------------
# 7. A factor of 1.


def blend(g: sp.Expr, th: sp.Expr, factor: sp.Expr) -> sp.Expr:
    return (1 - g) * th / factor + g * th


def unit_factor() -> Derivation:
    r"""At s = 1 Linear, NTK, YaRN and Llama 3.1 are RoPE; Dynamic NTK is not, above L0.

    The YaRN/Llama blend is :math:`(1-\gamma)\theta/s + \gamma\theta` (the mutation tests patch one that
    forgets a weight).
    """
    der = Derivation("A scaling factor of 1")
    th = theta
    g = sp.Symbol("gamma", nonnegative=True)
    h = Q
    d = 2 * h + 4
    der.equal("Linear: theta/s at s = 1 is theta", unevaluated(lambda: (th / s).subs(s, 1)), th)
    der.equal("NTK: b s^(d/(d-2)) at s = 1 is b", unevaluated(lambda: (b * s ** (d / (d - 2))).subs(s, 1)), b)
    der.equal("YaRN and Llama 3.1: the blend (1 - gamma) theta/s + gamma theta at s = 1 is theta, whatever "
              "the ramp weight gamma (index or ratio ramp)", blend(g, th, s).subs(s, 1), th, methods=("expand",))
    der.equal("and Llama's interpolated branch theta/s is theta", unevaluated(lambda: (th / s).subs(s, 1)), th)
    mscale = sp.Rational(1, 10) * sp.log(s) + 1
    der.equal("YaRN's attention factor 0.1 ln s + 1 is 1 at s = 1", unevaluated(lambda: mscale.subs(s, 1)), sp.S.One)
    der.define("It multiplies q and k, so the logits by (0.1 ln s + 1)^2: the paper's 1/t with "
            "sqrt(1/t) = 0.1 ln s + 1.", sp.Eq(sp.Symbol("1/t"), mscale**2))
    L = seq_len
    rho = dynamic_ratio(L, L0, sp.S.One)
    der.equal("Dynamic NTK is different: at s = 1 its ratio is L/L0, so above L0 the base still grows, to "
              "b (L/L0)^(d/(d-2)); its factor sets the slope, not whether it scales",
              unevaluated(lambda: dynamic_ratio(L, L0, sp.S.One)), L / L0,
              methods=("expand",))
    _dynamic_grows_checked(der)
    der.result["dynamic_at_one"] = show_d(b * rho ** (d / (d - 2)))
    der.result["symbols"] = (b, D, L, L0)
    return der


def _dynamic_grows_checked(der: Derivation) -> None:
    """Above L0, Dynamic NTK's base at s = 1, b (L/L0)^(d/(d-2)), is larger than b (so it is not RoPE): decided by
    pemath.kernel alone, from e^y >= 1 + y and log u >= 1 - 1/u > 0 for u = L/L0 > 1."""
    from .kterms import num, rule, var

    b_, L_, L0_, q = var("b", "pos"), var("L", "pos"), var("L_0", "pos"), var("q", "nat")
    P = ("add", num(4), ("mul", num(2), q))  # d
    c = ("mul", P, ("inv", ("add", P, num(-2))))  # d/(d - 2)
    u = ("mul", L_, ("inv", L0_))
    y = ("mul", c, ("log", u))
    bc = ("mul", b_, c)

    cert = ("sign", ((rule("inv", u), ("mul", num(-1), bc)), (rule("inv", L0_), ("mul", bc, ("inv", u)))),
            ((rule("exp_ge", y), b_), (rule("log_ge", u), bc), (("hyp", 0), ("mul", bc, ("inv", u), ("inv", L0_)))))
    der.checked("So above L0 (L0 < L) it is not RoPE: b (L/L0)^(d/(d-2)) > b, as e^y >= 1 + y and y = d/(d-2) log(L/L0) "
                "> 0 (log u >= 1 - 1/u > 0 for u = L/L0 > 1)",
                ("forall", (L_, L0_, b_, q), (("lt", L0_, L_),), ("lt", b_, ("mul", b_, ("exp", y)))), cert)
