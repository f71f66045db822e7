"""RoFormer's long-term decay (section 3.4.3): the Abel-summation bound, and whether it decays."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from .. import kernel
from ..symbolic import bridge
from ..symbolic import decay as sym
from ..symbolic import rope as rope_sym
from ..symbolic._decide import Derivation, ProofFailure, unevaluated
from ..symbolic._enclose import enclose
from ._inputs import Choice, Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._gpu import require_cupy
from ._registry import register
from ._tolerance import phase_bound
from .. import rope

_ROFORMER = "Su et al. 2021 (RoFormer), section 3.4.3, eq. 35-37 and Figure 2"

# ----------------------------------------------------------------------------------------------
# rope.decay_abel
# ----------------------------------------------------------------------------------------------


def _abel_proof() -> Verdict:
    d = sym.abel_symbolic_d()
    for pairs in (1, 2, 4):
        d.steps.extend(sym.abel_expanded(pairs).steps)
    d.steps.extend(sym.abel_checked().steps)
    d.steps.extend(sym.bound().steps)
    return Verdict(d)


def _abel_statement() -> sp.Basic:
    return sym.abel_symbolic_d().result["identity"]


def _abel_formal() -> tuple:
    """Summation by parts (RoFormer eq. 36), for every number of pairs N >= 0 and complex sequences h, S, written as
    their real and imaginary parts (arbitrary real functions of the index), one equation per part:
    sum_{i<N} h_i (S_{i+1} - S_i) = -sum_{i<N} S_{i+1} (h_{i+1} - h_i) + h_N S_N - h_0 S_0. (With S the partial sums
    of e_i = e^{i r theta_i}, S_0 = 0, and h_N = 0 past the last pair, this is eq. 36: the boundary terms vanish.)

    And the bound's step: over K = d/2 pairs, with A_i = |S_{i+1}| >= 0 and c_i = |h_{i+1} - h_i| = M - t_i,
    t_i >= 0 (M the largest c_i), and X = |score(r)|, under the cited triangle inequality X <= sum_i A_i c_i written
    with its slack u >= 0 (the statement's hypothesis, not decided here): X + u = M sum_i A_i - sum_i A_i t_i and
    u + sum_i A_i t_i >= 0, so X <= M sum_i A_i."""
    k = sp.Symbol("K", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, nonnegative=True)
    a, t = sp.Function("A", nonnegative=True), sp.Function("t", nonnegative=True)
    m, x, u = sp.Symbol("M", real=True), sp.Symbol("X", nonnegative=True), sp.Symbol("u", nonnegative=True)

    def over_pairs(body):  # noqa: ANN001, ANN202
        return sp.Sum(body, (i, 0, k - 1))

    bound = bridge.formal([sp.Eq(x + u, m * over_pairs(a(i)) - over_pairs(a(i) * t(i)), evaluate=False),
                           sp.Le(0, u + over_pairs(a(i) * t(i)), evaluate=False),
                           sp.Le(x, m * over_pairs(a(i)), evaluate=False)],
                          [sp.Eq(x + u, over_pairs(a(i) * (m - t(i))))])
    n, j = sp.Symbol("N", integer=True, nonnegative=True), sp.Symbol("j", integer=True)
    hr, hi, sr, si = (sp.Function(f, real=True) for f in ("h_r", "h_i", "S_r", "S_i"))
    h, s = (lambda q: hr(q) + sp.I * hi(q)), (lambda q: sr(q) + sp.I * si(q))  # noqa: E731

    def parts(z):  # noqa: ANN001, ANN202 - the real and imaginary parts of a polynomial in the sequences
        z = sp.expand(z)
        return sp.re(z), sp.im(z)

    lhs = parts(h(j) * (s(j + 1) - s(j)))
    rhs = parts(s(j + 1) * (h(j + 1) - h(j)))
    ends = parts(h(n) * s(n) - h(0) * s(0))
    identity = bridge.formal([sp.Eq(sp.Sum(lhs[p], (j, 0, n - 1)), -sp.Sum(rhs[p], (j, 0, n - 1)) + ends[p],
                                    evaluate=False) for p in (0, 1)])
    return kernel.well_formed(("forall", bound[1] + identity[1], bound[2], ("and", *identity[3][1:], *bound[3][1:])))


def _pairs(q: np.ndarray, layout: str) -> np.ndarray:
    """The complex numbers x_a + i x_b of the rotated pairs, in pair order."""
    idx = rope_sym.pair_indices(q.shape[-1], layout)
    return np.array([q[a] + 1j * q[b] for a, b in idx])


def _abel_numeric() -> str:

    def check(draw_seed: int, m: int, n: int, half: int, layout: str, base: float) -> None:
        dim = 2 * half
        rng = np.random.default_rng(draw_seed)
        q, k = rng.standard_normal((2, dim))
        score = float(rope.apply(q, m, layout=layout, base=base) @ rope.apply(k, n, layout=layout, base=base))
        h = np.append(_pairs(q, layout) * np.conj(_pairs(k, layout)), 0.0)  # h_{d/2} = 0
        th = rope.inv_freq(dim, base=base)
        S = np.concatenate([[0.0], np.cumsum(np.exp(1j * (m - n) * th))])  # S_0 .. S_{d/2}
        abel = float(np.sum(S[1:] * (h[:-1] - h[1:])).real)
        scale = float(np.max(np.abs(q)) * np.max(np.abs(k)))
        tol = phase_bound(abs(m) + abs(n), terms=4 * dim, scale=scale) * (half + 1)
        assert abs(score - abel) <= tol, f"score {score!r} != Abel form {abel!r} (tol {tol:.3g})"
        bound = float(np.max(np.abs(np.diff(h)))) * half * float(rope.long_term_decay(m - n, dim, base=base))
        assert abs(score) <= bound + tol, f"|score| = {abs(score):.6g} exceeds RoFormer's bound {bound:.6g}"

    return for_all(check, examples=30, draw_seed=Ints(0, 2**31), m=Ints(-10**5, 10**5), n=Ints(-10**5, 10**5),
                   half=Ints(1, 64), layout=Choice(rope_sym.LAYOUTS), base=Choice([10000.0, 500000.0, 10.0]))


def _abel_mpmath() -> str:

    rng = np.random.default_rng(7)
    dim = 64
    q, k = rng.standard_normal((2, dim))
    worst = mpmath.mpf(0)
    with mpmath.workdps(50):
        hs = [mpmath.mpc(float(a), float(b)) * mpmath.conj(mpmath.mpc(float(c), float(e)))
              for a, b, c, e in zip(q[0::2], q[1::2], k[0::2], k[1::2])] + [mpmath.mpc(0)]
        th = [mpmath.mpf(10000) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]
        for m, n in ((2**40 + 3, 0), (10**9, 10**9 - 1), (7, 2**33)):
            es = [mpmath.expj((m - n) * t) for t in th]
            direct = mpmath.fsum(hh * e for hh, e in zip(hs, es))
            S, acc = [mpmath.mpc(0)], mpmath.mpc(0)
            for e in es:
                acc += e
                S.append(acc)
            abel = mpmath.fsum(S[i + 1] * (hs[i] - hs[i + 1]) for i in range(dim // 2))
            worst = max(worst, abs(direct - abel))
            got = float(rope.apply(q, m, layout="interleaved") @ rope.apply(k, n, layout="interleaved"))
            tol = phase_bound(abs(m) + abs(n), terms=2 * dim, scale=float(np.max(np.abs(q)) * np.max(np.abs(k))))
            if abs(got - float(direct.real)) > tol:
                raise CheckFailure(f"float64 score at m={m}, n={n} off by {abs(got - float(direct.real)):.3g}")
        if worst > mpmath.mpf(10) ** -35:
            raise CheckFailure(f"Abel form off by {mpmath.nstr(worst, 5)} at 50 digits")
    return f"identity exact to {mpmath.nstr(worst, 3)} at 50 digits up to r = 2**40; apply() within its bound"


register(
    Claim(
        id="rope.decay_abel",
        name="Abel summation bounds the RoPE score",
        title="Abel summation: sum_{i<N} h_i (S_{i+1} - S_i) = -sum_{i<N} S_{i+1}(h_{i+1} - h_i) + h_N S_N - h_0 S_0 "
              "for every N and complex h, S (reading: with S_j = sum_{i<j} e^{i r theta_i}, so S_0 = 0, and "
              "h_{d/2} = 0 the boundary terms vanish, RoFormer's eq. 36); given the cited triangle inequality as "
              "a premise (X + u = sum_{j<K} A_j (M - t_j); X, u, t_j, A_j >= 0; K >= 1), X <= M sum_j A_j "
              "(reading, with "
              "X = |score|, A_j = |S_{j+1}|, M = max|h_{i+1} - h_i|: |score| <= max|h_{i+1} - h_i| sum_j |S_j|)",
        kind="theorem",
        family="rope_decay",
        statement=_abel_statement,
        formal=_abel_formal,
        proof=_abel_proof,
        checks=(Check("numeric", _abel_numeric), Check("mpmath", _abel_mpmath)),
        references=(_ROFORMER,),
    )
)

# ----------------------------------------------------------------------------------------------
# roformer.long_term_decay (published claim)
# ----------------------------------------------------------------------------------------------

DIM, BASE = 128, 10000
_IV_DPS = 40


def _mp(x) -> mpmath.mpf:
    return mpmath.mpf(x.a.a)


def decay_verdict(dim: int = DIM, base: int = BASE, *, distances: int = 250) -> Verdict:
    """Decide RoFormer's "B(r) decays as r grows" on r = 0..distances: a rigorous counterexample or none."""

    d = Derivation(f"RoFormer's long-term decay, d = {dim}, base {base}")
    d.define("RoFormer (section 3.4.3): 'the value of (1/(d/2)) sum_{i=1}^{d/2} |S_i| decay with the relative "
          "distance m - n increases by setting theta_i = 10000^{-2i/d}, as shown in Figure (2)'. The paper does "
          f"not state the d of its figure; take d = {dim} (a common head size; d = 64, 256, 512 behave alike).")
    d.steps.extend(sym.bound().steps[-2:])
    curve = np.asarray(rope.long_term_decay(np.arange(distances + 1), dim, base=float(base)))
    ups = np.nonzero(np.diff(curve) > 0)[0]
    d.remark(f"pemath.rope.long_term_decay on r = 0, ..., {distances}: B falls from {curve[0]:.4g} to "
          f"{curve[-1]:.4g}, but B(r + 1) > B(r) at {len(ups)} of the {distances} steps "
          f"(first at r = {', '.join(str(int(u)) for u in ups[:6])}, ...): it oscillates.")
    if not len(ups):
        raise ProofFailure(f"{d.title}: no increase found on 0..{distances}; monotone decay is not decided by a scan")
    r0 = int(ups[0])
    lo, hi = sym.curve(r0, dim, base), sym.curve(r0 + 1, dim, base)
    with d.part("counterexample"):
        d.interval(f"B({r0 + 1}) > B({r0}) (interval enclosures of both sums of moduli)", hi, ">", lo,
                   digits=_IV_DPS)
    e_lo, e_hi = enclose(lo, _IV_DPS), enclose(hi, _IV_DPS)
    top = sp.Rational(dim // 2 + 1, 2)
    far = distances
    with d.part("fair reading"):
        d.equal(f"B(0) = (d/2 + 1)/2 = {top}: every |S_j(0)| = j", unevaluated(lambda: sym.curve(0, dim, base)), top,
                methods=("expand", "doit"))
        d.interval(f"and B({far}) < B(0)/4: the bound falls below a quarter of its maximum by distance {far}",
                   sym.curve(far, dim, base), "<", top / 4, digits=_IV_DPS)
    d.remark("So the bound is not a decreasing function of the distance. What is true: it is largest at r = 0 "
             "(B(r) <= B(0) for every r, the cited triangle inequality), its envelope falls over the first few "
             "hundred positions, and beyond that it oscillates around the random-phase level of about "
             f"sqrt(pi d/2)/3 ({np.sqrt(np.pi * dim / 2) / 3:.3g} for d = {dim}) without decaying to zero (the "
             "checks, numerically).")
    cx = (f"d = {dim}, theta_i = {base}^(-2i/d): B({r0}) < B({r0 + 1}) (decided by interval arithmetic; about "
          f"{mpmath.nstr(_mp(e_lo), 6)} and {mpmath.nstr(_mp(e_hi), 6)}); checked numerically: B increases at "
          f"{len(ups)} of the steps r -> r + 1 for r < {distances}, and over r in [5000, 20000] it oscillates with "
          f"a mean near sqrt(pi d/2)/3 = {np.sqrt(np.pi * dim / 2) / 3:.3g} (the check gives the mean and the "
          "minimum), not near 0")
    d.result.update(r0=r0, increases=len(ups))
    fair = (f"the bound falls below a quarter of B(0) = (d/2 + 1)/2 = {top} by distance {far} (decided by interval "
            f"arithmetic; the value of B(0) is SymPy-decided); that it is largest at distance 0 (B(r) <= B(0) for "
            "every r) is the triangle inequality, cited; that it falls over the first few hundred positions and "
            "then oscillates near sqrt(pi d/2)/3 is checked numerically, not proved")
    return Verdict(d, cx, fair)


def _decay_proof() -> Verdict:
    return decay_verdict()


def _decay_statement() -> sp.Basic:
    r1, r2 = sp.symbols("r_1 r_2", nonnegative=True)
    return sp.Implies(sp.Lt(r1, r2), sp.Le(sp.Function("B")(r2), sp.Function("B")(r1)))


def _decay_B(r: sp.Expr) -> sp.Expr:
    """RoFormer's curve at d = 128, base 10000, written for the statement: B(r) = (1/64) sum_{j=1}^{64} |S_j(r)|,
    |S_j(r)| = sqrt((sum_{i<j} cos(r theta_i))^2 + (sum_{i<j} sin(r theta_i))^2), theta_i = 10000^(-2i/128)."""
    i = sp.Symbol("i", integer=True, nonnegative=True)
    j = sp.Symbol("j", integer=True, positive=True)
    th = sp.Integer(BASE) ** (sp.Rational(-2, DIM) * i)
    re, im = sp.Sum(sp.cos(r * th), (i, 0, j - 1)), sp.Sum(sp.sin(r * th), (i, 0, j - 1))
    return sp.Sum(sp.sqrt(re**2 + im**2), (j, 1, DIM // 2)) / (DIM // 2)


def _decay_formal() -> tuple:
    """As stated, at d = 128 (the figure's d is not stated; :data:`DIM`): for every distance r >= 0 and every
    t >= 1, B(r + t) <= B(r). False at r = 18, t = 1 (:func:`_decay_witness`)."""
    r = sp.Symbol("r", integer=True, nonnegative=True)
    t = sp.Symbol("t", integer=True, positive=True)
    with sp.evaluate(False):
        return bridge.formal([sp.Le(_decay_B(r + t), _decay_B(r))])


def _decay_witness() -> tuple:
    return (0, (("r", ("num", 18, 1)), ("t", ("num", 1, 1))))  # B(19) > B(18): the first increase


def _decay_fair() -> tuple:
    """The fair reading as checked: B(250) < B(0)/4 = (d/2 + 1)/8 = 65/8 (that B(0) = 65/2 is decided by the SymPy
    kernel; B(r) <= B(0) for every r is the cited triangle inequality)."""
    with sp.evaluate(False):
        return bridge.formal([sp.Lt(_decay_B(sp.Integer(250)), sp.Rational(DIM // 2 + 1, 8))])


def _decay_numeric() -> str:

    r = np.arange(0, 20001)
    parts = []
    for dim in (64, 128, 256):
        B = np.asarray(rope.long_term_decay(r, dim))
        tol = phase_bound(float(r[-1]), terms=dim // 2)
        top = (dim // 2 + 1) / 2
        if abs(B[0] - top) > tol or not np.all(B[1:] < top):
            raise CheckFailure(f"d = {dim}: B(0) = {B[0]!r} should be the maximum {top}")
        neg = np.asarray(rope.long_term_decay(-r[:500], dim))
        if np.max(np.abs(neg - B[:500])) > tol:
            raise CheckFailure(f"d = {dim}: B is not even in r")
        ups = int(np.sum(np.diff(B[:251]) > 0))
        plateau = float(np.mean(B[5000:]))
        level = float(np.sqrt(np.pi * dim / 2) / 3)
        if ups == 0 or not 0.8 * level < plateau < 1.2 * level or float(np.min(B[1:])) <= 0.1:
            raise CheckFailure(f"d = {dim}: {ups} increases, plateau {plateau:.4g} vs {level:.4g}")
        parts.append(f"d={dim}: {ups}/250 increases, mean over r in [5000, 20000] {plateau:.3f} "
                     f"(sqrt(pi d/2)/3 = {level:.3f}), min {float(np.min(B[1:])):.3f}")
    return "; ".join(parts)


def _decay_mpmath() -> str:

    pts = (0, 1, 18, 19, 100, 250, 1000, 2**20)
    got = np.asarray(rope.long_term_decay(np.array(pts), DIM))
    worst = 0.0
    with mpmath.workdps(50):
        th = [mpmath.mpf(BASE) ** (-mpmath.mpf(2 * j) / DIM) for j in range(DIM // 2)]
        for p, g in zip(pts, got):
            acc, tot = mpmath.mpc(0), mpmath.mpf(0)
            for t in th:
                acc += mpmath.expj(p * t)
                tot += abs(acc)
            ref = tot / (DIM // 2)
            tol = phase_bound(float(p), terms=DIM // 2)
            err = abs(float(ref) - float(g))
            if err > tol:
                raise CheckFailure(f"long_term_decay({p}) = {g!r} off the 50-digit {mpmath.nstr(ref, 15)} by {err:.3g}")
            worst = max(worst, err / tol)
    return f"long_term_decay matches 50-digit values at r in {pts} (worst {worst:.2g} of its bound)"


def _decay_cupy() -> str:
    cp = require_cupy()

    r = np.arange(0, 4097)
    host = np.asarray(rope.long_term_decay(r, DIM))
    dev = cp.asnumpy(rope.long_term_decay(cp.asarray(r), DIM))
    err = float(np.max(np.abs(host - dev)))
    if err > phase_bound(float(r[-1]), terms=DIM):
        raise CheckFailure(f"CuPy and NumPy curves differ by {err:.3g}")
    return f"CuPy matches NumPy to {err:.2g} on r = 0..4096"


register(
    Claim(
        id="roformer.long_term_decay",
        name="RoFormer's long-term decay",
        title="RoFormer: the relative upper bound (1/(d/2)) sum_j |S_j| decays as the relative distance grows",
        kind="published claim",
        family="rope_decay",
        statement=_decay_statement,
        formal=_decay_formal,
        witness=_decay_witness,
        fair=_decay_fair,
        proof=_decay_proof,
        checks=(Check("numeric", _decay_numeric), Check("mpmath", _decay_mpmath), Check("cupy", _decay_cupy)),
        references=(_ROFORMER, "Barbero et al. 2024, section 3 (the decay assumes aligned queries and keys)"),
    )
)
