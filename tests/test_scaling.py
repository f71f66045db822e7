"""The RoPE scaling variants: identities, hand-derived and published values, bad inputs.

Reference frequencies here are computed with NumPy's ``base ** (-2i/d)`` (pemath uses
correctly rounded mpmath values), so comparisons allow a few ulps.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from pemath.scaling import NTK, DynamicNTK, Linear, Llama3, LongRoPE, Proportional, RopeScaling, YaRN

from .conftest import to_np

LAYOUTS = ["interleaved", "half"]
RTOL = 1e-14  # a few ulps: numpy's pow vs pemath's correctly rounded frequencies

even_dims = st.integers(2, 128).map(lambda n: 2 * n)  # 4 .. 256
bases = st.floats(1e3, 1e7)
factors = st.floats(1.01, 1000.0)
contexts = st.integers(64, 1_000_000)


def plain(dim: int, base: float) -> np.ndarray:
    return base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)


def _rand(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _all_variants() -> list[RopeScaling]:
    return [
        Linear(4.0),
        NTK(8.0),
        DynamicNTK(2.0, 2048),
        YaRN(16.0, 4096),
        YaRN(40.0, 4096, mscale=0.707, mscale_all_dim=1.0),
        Llama3(8.0, 8192),
        LongRoPE([1.0] * 8, [2.0] * 8, 4096, factor=32.0),
        Proportional(0.25),
    ]


# ----------------------------------------------------------------------------- Linear


@pytest.mark.parametrize("layout", LAYOUTS)
def test_linear_equals_dividing_positions(xp, layout):
    s = 3.7
    x = _rand(0, (6, 16))
    p = np.array([0.0, 1.0, 2.5, 17.0, 1000.25, 123456.0])
    scaled = rope.apply(xp.asarray(x), xp.asarray(p), layout=layout, scaling=Linear(s))
    moved = rope.apply(xp.asarray(x), xp.asarray(p / s), layout=layout)
    np.testing.assert_allclose(to_np(scaled), to_np(moved), rtol=0, atol=1e-9)


@given(s=st.floats(0.01, 1000.0), p=st.floats(-1e5, 1e5), seed=st.integers(0, 2**32 - 1))
def test_linear_equals_dividing_positions_property(s, p, seed):
    x = _rand(seed, (32,))
    lhs = rope.apply(x, p, layout="half", scaling=Linear(s))
    rhs = rope.apply(x, p / s, layout="half")
    # phases p*(theta/s) and (p/s)*theta differ by a few ulps of |p/s|
    assert np.max(np.abs(lhs - rhs)) <= 64 * (abs(p / s) + 2) * 2.0**-52 * np.abs(x).sum()


# ----------------------------------------------------------------------------- NTK


@given(dim=even_dims, base=bases, s=st.floats(0.05, 1000.0))
def test_ntk_lowest_divided_highest_kept(dim, base, s):
    f = NTK(s).inv_freq(dim, base)
    assert f[0] == 1.0
    lowest = base ** (-(dim - 2) / dim)
    assert f[-1] == pytest.approx(lowest / s, rel=1e-12)
    assert np.all(np.diff(f) < 0)


def test_ntk_hand_value():
    # d = 4: b' = b s^2 and the frequencies are 1 and b'^(-1/2) = b^(-1/2) / s.
    assert NTK(3.0).scaled_base(4, 100.0) == pytest.approx(900.0, rel=1e-15)
    np.testing.assert_allclose(NTK(3.0).inv_freq(4, 100.0), [1.0, 1 / 30], rtol=1e-15)


# ----------------------------------------------------------------------------- DynamicNTK


@given(dim=even_dims, base=bases, s=factors, L0=contexts, frac=st.floats(0.0, 1.0))
def test_dynamic_is_plain_rope_up_to_original(dim, base, s, L0, frac):
    dyn = DynamicNTK(s, L0)
    seq_len = max(1, int(frac * L0))
    unscaled = rope.inv_freq(dim, base=base)
    np.testing.assert_array_equal(dyn.inv_freq(dim, base, seq_len=seq_len), unscaled)
    np.testing.assert_array_equal(dyn.inv_freq(dim, base, seq_len=L0), unscaled)
    np.testing.assert_array_equal(dyn.inv_freq(dim, base), unscaled)


@given(dim=even_dims, base=bases, s=factors, L0=contexts)
def test_dynamic_continuous_at_original(dim, base, s, L0):
    dyn = DynamicNTK(s, L0)
    at, after = dyn.scaled_base(dim, base, L0), dyn.scaled_base(dim, base, L0 + 1)
    assert at == base
    # b'(L0+1)/b = (1 + s/L0)^(d/(d-2)) - 1 <= 2 s/L0 * d/(d-2) for s/L0 small
    assert 0 < after / base - 1 <= 2.5 * (s / L0) * dim / (dim - 2) or s / L0 > 0.1


@given(dim=even_dims, base=bases, s=factors, L0=contexts, extra=st.floats(1.0, 64.0))
def test_dynamic_equals_static_ntk_of_effective_factor(dim, base, s, L0, extra):
    L = int(L0 * extra) + 1
    effective = s * L / L0 - (s - 1)
    np.testing.assert_allclose(
        DynamicNTK(s, L0).inv_freq(dim, base, seq_len=L), NTK(effective).inv_freq(dim, base), rtol=1e-12
    )


def test_dynamic_seq_len_reaches_apply():
    dyn = DynamicNTK(2.0, 16)
    x = _rand(1, (5, 8))
    pos = np.arange(5)
    short = rope.apply(x, pos, layout="half", scaling=dyn, seq_len=10)
    np.testing.assert_array_equal(short, rope.apply(x, pos, layout="half"))
    long = rope.apply(x, pos, layout="half", scaling=dyn, seq_len=48)
    # L = 48 = 3 L0: ratio 2*3 - 1 = 5, base' = 10000 * 5^(8/6)
    same = rope.apply(x, pos, layout="half", base=10000.0 * 5 ** (8 / 6))
    np.testing.assert_allclose(long, same, rtol=0, atol=1e-13)


def test_dynamic_monotone_in_seq_len():
    dyn = DynamicNTK(4.0, 1024)
    lows = [dyn.inv_freq(64, 1e4, seq_len=L)[-1] for L in (1024, 2048, 4096, 65536)]
    assert all(a > b for a, b in zip(lows, lows[1:]))


# ----------------------------------------------------------------------------- YaRN


def _turns(L0: int, dim: int, base: float) -> np.ndarray:
    """How many full turns each pair makes over L0 positions: r_i = L0 theta_i / 2 pi."""
    return L0 * plain(dim, base) / (2 * math.pi)


def test_yarn_hand_computed_bands():
    # d=128, b=1e4, L0=4096: c(32) = 128 ln(4096/64pi) / (2 ln 1e4) = 20.94 -> 20,
    # c(1) = 128 ln(4096/2pi) / (2 ln 1e4) = 45.03 -> 46.
    y = YaRN(16.0, 4096)
    assert y.correction_range(128, 1e4) == (20, 46)
    f, p = y.inv_freq(128, 1e4), plain(128, 1e4)
    np.testing.assert_allclose(f[:21], p[:21], rtol=RTOL)
    np.testing.assert_allclose(f[46:], p[46:] / 16, rtol=RTOL)
    assert np.all((f[21:46] < p[21:46]) & (f[21:46] > p[21:46] / 16))


@pytest.mark.parametrize("truncate", [True, False])
@given(dim=even_dims, base=bases, s=factors, L0=st.integers(256, 200_000))
def test_yarn_fast_pairs_kept_slow_pairs_interpolated(truncate, dim, base, s, L0):
    y = YaRN(s, L0, truncate=truncate)
    f, p, r = y.inv_freq(dim, base), plain(dim, base), _turns(L0, dim, base)
    fast, slow = r > 32 * (1 + 1e-12), r < 1 * (1 - 1e-12)
    np.testing.assert_allclose(f[fast], p[fast], rtol=RTOL)
    np.testing.assert_allclose(f[slow], p[slow] / s, rtol=RTOL)
    assert f[0] == 1.0 or not fast[0]
    assert np.all(f <= p * (1 + RTOL)) and np.all(f >= p / s * (1 - RTOL))


@pytest.mark.parametrize("ramp", ["index", "ratio"])
@given(dim=even_dims, base=bases, s=factors, L0=st.integers(256, 200_000))
def test_yarn_ramp_weights_in_unit_interval_and_monotone(ramp, dim, base, s, L0):
    w = YaRN(s, L0, ramp=ramp).ramp_weights(dim, base)
    assert w.shape == (dim // 2,)
    assert np.all((w >= 0) & (w <= 1))
    assert np.all(np.diff(w) <= 0)  # higher pair index = lower frequency = more interpolation


def test_yarn_ratio_ramp_boundaries_and_linearity():
    y = YaRN(8.0, 8192, ramp="ratio", beta_fast=32.0, beta_slow=1.0)
    dim, base = 256, 10000.0
    w, r = y.ramp_weights(dim, base), _turns(8192, dim, base)
    assert np.all(w[r >= 32] == 1.0)
    assert np.all(w[r <= 1] == 0.0)
    mid = (r > 1) & (r < 32)
    assert mid.sum() >= 5 and np.all((w[mid] > 0) & (w[mid] < 1))
    # linear in r, 0 at r = beta_slow, 1 at r = beta_fast: the line through (1, 0) and (32, 1)
    np.testing.assert_allclose(w[mid], (r[mid] - 1) / 31, rtol=1e-12)
    # and the frequencies interpolate between theta/s and theta with those weights
    p = plain(dim, base)
    f = y.inv_freq(dim, base)
    np.testing.assert_allclose(f[mid], p[mid] * (w[mid] + (1 - w[mid]) / 8), rtol=1e-12)


@pytest.mark.parametrize(
    "s, expected",
    [(16.0, 1.2772588722239781), (40.0, 1.3688879454113936), (1.0, 1.0), (0.5, 1.0), (math.e, 1.1)],
)
def test_yarn_attention_factor_is_0_1_ln_s_plus_1(s, expected):
    assert YaRN(s, 4096).attention_factor == pytest.approx(expected, rel=1e-15)


def test_yarn_mscale_ratio():
    ln40 = math.log(40.0)
    # DeepSeek-V3 (mscale = mscale_all_dim = 1): the ratio is exactly 1
    assert YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=1.0).attention_factor == 1.0
    got = YaRN(40.0, 4096, mscale=0.707, mscale_all_dim=1.0).attention_factor
    assert got == pytest.approx((1 + 0.0707 * ln40) / (1 + 0.1 * ln40), rel=1e-15)
    # HF reads either one alone (or a zero) as "absent": 0.1 ln s + 1
    for kw in ({"mscale": 0.707}, {"mscale_all_dim": 0.5}, {"mscale": 0.0, "mscale_all_dim": 1.0}):
        assert YaRN(40.0, 4096, **kw).attention_factor == pytest.approx(0.1 * ln40 + 1, rel=1e-15)
    assert YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=1.0, attention_factor=0.5).attention_factor == 0.5


def test_yarn_attention_factor_multiplies_at_position_zero(xp):
    y = YaRN(16.0, 4096)
    x = _rand(2, (3, 64))
    out = to_np(rope.apply(xp.asarray(x), xp.asarray([0, 0, 0]), layout="half", scaling=y))
    np.testing.assert_allclose(out, x * y.attention_factor, rtol=1e-15)


# ----------------------------------------------------------------------------- Llama 3


@given(
    dim=even_dims,
    base=bases,
    s=factors,
    L0=st.integers(64, 200_000),
    lo=st.floats(0.25, 4.0),
    width=st.floats(0.1, 8.0),
)
def test_llama3_bands(dim, base, s, L0, lo, width):
    hi = lo + width
    f, p = Llama3(s, L0, low_freq_factor=lo, high_freq_factor=hi).inv_freq(dim, base), plain(dim, base)
    wavelen = 2 * math.pi / p
    margin = 1e-12
    short, long_ = wavelen < (L0 / hi) * (1 - margin), wavelen > (L0 / lo) * (1 + margin)
    np.testing.assert_allclose(f[short], p[short], rtol=RTOL)
    np.testing.assert_allclose(f[long_], p[long_] / s, rtol=RTOL)
    mid = ~short & ~long_
    assert np.all(f[mid] <= p[mid] * (1 + RTOL)) and np.all(f[mid] >= p[mid] / s * (1 - RTOL))
    ratio = f / p  # 1 for short wavelengths, falling to 1/s for long ones
    assert np.all(np.diff(ratio) <= 1e-12)
    # in the band, Meta's blend: theta' = theta (g + (1 - g)/s), g = (L0/wavelength - lo)/(hi - lo)
    g = (L0 / wavelen[mid] - lo) / (hi - lo)
    np.testing.assert_allclose(ratio[mid], g + (1 - g) / s, rtol=1e-12)


def test_llama3_ratio_has_no_jumps():
    # Sweep the wavelength of pair 1 (dim 4: wavelength 2 pi sqrt(b)) across both band
    # edges on a fine grid: the kept fraction theta'/theta must move continuously
    # (piecewise linear in 1/wavelength, slope at most L0 (1 - 1/s)/(hi - lo) / wavelength^2).
    L0, s, lo, hi = 8192, 8.0, 1.0, 4.0
    scaling = Llama3(s, L0, low_freq_factor=lo, high_freq_factor=hi)
    wavelengths = np.geomspace(L0 / hi / 2, 2 * L0 / lo, 4001)
    bases = (wavelengths / (2 * math.pi)) ** 2
    ratio = np.array([scaling.inv_freq(4, b)[1] / b**-0.5 for b in bases])
    assert ratio[0] == pytest.approx(1.0, rel=1e-12) and ratio[-1] == pytest.approx(1 / s, rel=1e-12)
    step = np.abs(np.diff(ratio))
    bound = L0 * (1 - 1 / s) / (hi - lo) * np.abs(np.diff(1 / wavelengths))
    assert np.all(step <= bound * (1 + 1e-6) + 1e-12)


@pytest.mark.parametrize("edge", ["high", "low"])
def test_llama3_smoothing_continuous_at_edges(edge):
    # dim = 4: theta_1 = b^(-1/2), wavelength 2 pi sqrt(b). Place it at the band edge
    # (and a hair either side) by choosing b.
    L0, s, lo, hi = 8192, 8.0, 1.0, 4.0
    scaling = Llama3(s, L0, low_freq_factor=lo, high_freq_factor=hi)
    target = L0 / hi if edge == "high" else L0 / lo
    ratios = []
    for rel in (-1e-9, 0.0, 1e-9):
        b = (target * (1 + rel) / (2 * math.pi)) ** 2
        ratios.append(scaling.inv_freq(4, b)[1] / b**-0.5)
    expected = 1.0 if edge == "high" else 1 / s
    np.testing.assert_allclose(ratios, expected, rtol=0, atol=1e-8)


def test_llama31_8b_published_configuration():
    # Llama 3.1 8B: head dim 128, rope_theta 500000, factor 8, low 1, high 4, L0 8192.
    # Wavelength 2 pi 500000^(i/64) < 8192/4 = 2048 for i <= 28, > 8192 for i >= 35.
    dim, base, s, L0 = 128, 500000.0, 8.0, 8192
    f = Llama3(s, L0, low_freq_factor=1.0, high_freq_factor=4.0).inv_freq(dim, base)
    p = plain(dim, base)
    np.testing.assert_allclose(f[:29], p[:29], rtol=RTOL)
    np.testing.assert_allclose(f[35:], p[35:] / s, rtol=RTOL)
    # the six smoothed pairs, independently in mpmath: theta (gamma + (1 - gamma)/s),
    # gamma = (L0 / wavelength - 1) / 3 = (L0 theta / 2 pi - 1) / 3
    with mpmath.workdps(30):
        for i in range(29, 35):
            theta = mpmath.mpf(500000) ** (-mpmath.mpf(i) / 64)
            gamma = (L0 * theta / (2 * mpmath.pi) - 1) / 3
            assert 0 < gamma < 1
            assert f[i] == pytest.approx(float(theta * (gamma + (1 - gamma) / 8)), rel=1e-13)


# ----------------------------------------------------------------------------- LongRoPE


def test_longrope_short_up_to_original_long_beyond():
    short = np.linspace(1.0, 2.0, 8)
    long_ = np.linspace(1.0, 40.0, 8)
    lr = LongRoPE(short, long_, 4096, factor=32.0)
    p = plain(16, 1e4)
    for seq_len in (None, 1, 4095, 4096):
        np.testing.assert_allclose(lr.inv_freq(16, 1e4, seq_len=seq_len), p / short, rtol=RTOL)
    for seq_len in (4097, 131072):
        np.testing.assert_allclose(lr.inv_freq(16, 1e4, seq_len=seq_len), p / long_, rtol=RTOL)


def test_longrope_attention_factor():
    # Phi-3-mini-128k: s = 131072 / 4096 = 32 = 2^5, L0 = 4096 = 2^12: sqrt(1 + 5/12)
    expected = math.sqrt(17 / 12)
    ones = [1.0] * 48
    assert LongRoPE(ones, ones, 4096, factor=32.0).attention_factor == pytest.approx(expected, rel=1e-15)
    assert LongRoPE(ones, ones, 4096, max_position=131072).attention_factor == pytest.approx(expected, rel=1e-15)
    # factor wins over max_position, as HF (which only falls back to the ratio)
    assert LongRoPE(ones, ones, 4096, factor=2.0, max_position=131072).attention_factor == pytest.approx(
        math.sqrt(1 + 1 / 12), rel=1e-15
    )
    assert LongRoPE(ones, ones, 4096, factor=1.0).attention_factor == 1.0
    assert LongRoPE(ones, ones, 4096, factor=0.5).attention_factor == 1.0
    assert LongRoPE(ones, ones, 4096, factor=32.0, attention_factor=1.5).attention_factor == 1.5


def test_longrope_attention_factor_through_apply(xp):
    lr = LongRoPE([1.0] * 4, [3.0] * 4, 4096, factor=32.0)
    x = _rand(3, (2, 8))
    out = to_np(rope.apply(xp.asarray(x), xp.asarray([0, 0]), layout="interleaved", scaling=lr, seq_len=9000))
    np.testing.assert_allclose(out, x * math.sqrt(17 / 12), rtol=1e-15)


def test_longrope_lengths_checked_against_rotary_dim():
    lr = LongRoPE([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], 4096, factor=4.0)
    with pytest.raises(ValueError, match=r"short_factor.*3.*4 pairs"):
        lr.inv_freq(8, 1e4)
    with pytest.raises(ValueError, match=r"short_factor.*3.*4 pairs"):
        rope.apply(np.ones(8), 0, layout="half", scaling=lr)
    assert lr.inv_freq(6, 1e4).shape == (3,)


# ----------------------------------------------------------------------------- Proportional


@pytest.mark.parametrize("layout", LAYOUTS)
def test_proportional_one_is_plain_rope(xp, layout):
    x = _rand(4, (4, 16))
    pos = xp.asarray([0, 3, 70, 5000])
    got = rope.apply(xp.asarray(x), pos, layout=layout, scaling=Proportional(1.0))
    want = rope.apply(xp.asarray(x), pos, layout=layout)
    np.testing.assert_array_equal(to_np(got), to_np(want))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_proportional_zero_is_identity(xp, layout):
    x = _rand(5, (4, 16))
    out = rope.apply(xp.asarray(x), xp.asarray([0, 3, 70, 5000]), layout=layout, scaling=Proportional(0.0))
    np.testing.assert_array_equal(to_np(out), x)


@pytest.mark.parametrize(
    "p, dim, kept",
    [(0.25, 256, 32), (0.25, 512, 64), (0.5, 8, 2), (0.3, 10, 1), (0.0, 64, 0), (1.0, 64, 32), (0.99, 8, 3)],
)
def test_proportional_kept_pairs(p, dim, kept):
    prop = Proportional(p)
    assert prop.kept_pairs(dim) == kept
    f = prop.inv_freq(dim, 1e4)
    # kept frequencies use exponents over the whole dim, not over 2*kept
    np.testing.assert_allclose(f[:kept], plain(dim, 1e4)[:kept], rtol=RTOL)
    assert np.all(f[kept:] == 0.0)


def test_proportional_factor_divides_kept():
    f = Proportional(0.5, factor=4.0).inv_freq(8, 100.0)
    # frequencies 1, 100^(-1/4), 0.1, 100^(-3/4); the first two kept, then divided by 4
    np.testing.assert_allclose(f, [0.25, 100.0**-0.25 / 4, 0.0, 0.0], rtol=RTOL)


def test_proportional_rotates_only_kept_pairs():
    x = _rand(6, (16,))
    out = rope.apply(x, 7, layout="half", scaling=Proportional(0.5))
    # half layout: pairs (i, i+8); kept pairs i < 4 -> features 0..3 and 8..11 move
    still = [4, 5, 6, 7, 12, 13, 14, 15]
    np.testing.assert_array_equal(out[still], x[still])
    assert np.all(out[[0, 8]] != x[[0, 8]])


# ----------------------------------------------------------------------------- common


@pytest.mark.parametrize("scaling", _all_variants(), ids=repr)
def test_attention_factor_is_a_float(scaling):
    assert type(scaling.attention_factor) is float
    assert scaling.attention_factor > 0


@pytest.mark.parametrize("scaling", _all_variants(), ids=repr)
def test_relativity_survives_scaling(scaling):
    q, k = _rand(7, (2, 16))
    kw = {"layout": "half", "scaling": scaling}
    a = rope.apply(q, 1000, **kw) @ rope.apply(k, 990, **kw)
    b = rope.apply(q, 30, **kw) @ rope.apply(k, 20, **kw)
    assert a == pytest.approx(b, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("scaling", _all_variants(), ids=repr)
def test_equality_hash_repr(scaling):
    import pemath.scaling as ns

    clone = eval(repr(scaling), {**vars(ns)})
    assert clone == scaling and hash(clone) == hash(scaling)
    assert clone is not scaling
    assert len({scaling, clone}) == 1
    assert scaling != "not a scaling"
    with pytest.raises(AttributeError, match="immutable"):
        scaling.factor = 99.0


def test_equality_distinguishes_parameters_and_classes():
    assert Linear(2) == Linear(2.0) and hash(Linear(2)) == hash(Linear(2.0))
    assert Linear(2.0) != Linear(3.0)
    assert Linear(2.0) != NTK(2.0)
    assert YaRN(4.0, 4096) != YaRN(4.0, 4096, truncate=False)
    assert YaRN(4.0, 4096) != YaRN(4.0, 4096, attention_factor=1.0)
    assert LongRoPE([1, 2], [3, 4], 10, factor=2) == LongRoPE([1.0, 2.0], (3.0, 4.0), 10, factor=2.0)
    assert LongRoPE([1, 2], [3, 4], 10, factor=2) != LongRoPE([1, 2], [3, 5], 10, factor=2)
    assert len({Linear(2.0), Linear(2.0), NTK(2.0), DynamicNTK(2.0, 10), DynamicNTK(2.0, 11)}) == 4


# ----------------------------------------------------------------------------- bad inputs

NAN, INF = float("nan"), float("inf")

BAD = [
    # (constructor, args, kwargs, exception, the argument the message must name)
    (Linear, (0.0,), {}, ValueError, "factor"),
    (Linear, (-2.0,), {}, ValueError, "factor"),
    (Linear, (NAN,), {}, ValueError, "factor"),
    (Linear, (INF,), {}, ValueError, "factor"),
    (Linear, ("2",), {}, TypeError, "factor"),
    (Linear, (True,), {}, TypeError, "factor"),
    (NTK, (0,), {}, ValueError, "factor"),
    (NTK, (None,), {}, TypeError, "factor"),
    (DynamicNTK, (-1.0, 2048), {}, ValueError, "factor"),
    (DynamicNTK, (2.0, 0), {}, ValueError, "original_max_position"),
    (DynamicNTK, (2.0, 2048.0), {}, TypeError, "original_max_position"),
    (YaRN, (0.0, 4096), {}, ValueError, "factor"),
    (YaRN, (NAN, 4096), {}, ValueError, "factor"),
    (YaRN, (4.0, -1), {}, ValueError, "original_max_position"),
    (YaRN, (4.0, 4096), {"beta_fast": 1.0, "beta_slow": 32.0}, ValueError, "beta_fast"),
    (YaRN, (4.0, 4096), {"beta_fast": 8.0, "beta_slow": 8.0, "ramp": "ratio"}, ValueError, "beta_fast"),
    (YaRN, (4.0, 4096), {"beta_fast": INF}, ValueError, "beta_fast"),
    (YaRN, (4.0, 4096), {"beta_slow": 0.0}, ValueError, "beta_slow"),
    (YaRN, (4.0, 4096), {"ramp": "linear"}, ValueError, "ramp"),
    (YaRN, (4.0, 4096), {"ramp": 1}, TypeError, "ramp"),
    (YaRN, (4.0, 4096), {"truncate": 1}, TypeError, "truncate"),
    (YaRN, (4.0, 4096), {"mscale": -1.0}, ValueError, "mscale"),
    (YaRN, (4.0, 4096), {"mscale_all_dim": NAN}, ValueError, "mscale_all_dim"),
    (YaRN, (4.0, 4096), {"attention_factor": 0.0}, ValueError, "attention_factor"),
    (YaRN, (4.0, 4096), {"attention_factor": "1"}, TypeError, "attention_factor"),
    (Llama3, (0.0, 8192), {}, ValueError, "factor"),
    (Llama3, (8.0, 8192), {"low_freq_factor": 5.0, "high_freq_factor": 4.0}, ValueError, "low_freq_factor"),
    (Llama3, (8.0, 8192), {"low_freq_factor": 5.0, "high_freq_factor": 4.0}, ValueError, "high_freq_factor"),
    (Llama3, (8.0, 8192), {"low_freq_factor": 0.0}, ValueError, "low_freq_factor"),
    (Llama3, (8.0, 8192), {"high_freq_factor": NAN}, ValueError, "high_freq_factor"),
    (Llama3, (8.0, 8192.5), {}, TypeError, "original_max_position"),
    (LongRoPE, ([1.0, 1.0], [1.0, 1.0, 1.0], 4096), {"factor": 2.0}, ValueError, r"short_factor.*2.*3"),
    (LongRoPE, ([1.0, 0.0], [1.0, 1.0], 4096), {"factor": 2.0}, ValueError, "short_factor"),
    (LongRoPE, ([1.0, 1.0], [1.0, NAN], 4096), {"factor": 2.0}, ValueError, "long_factor"),
    (LongRoPE, ("ab", [1.0, 1.0], 4096), {"factor": 2.0}, TypeError, "short_factor"),
    (LongRoPE, ([[1.0]], [1.0], 4096), {"factor": 2.0}, TypeError, "short_factor"),
    (LongRoPE, ([1.0], [1.0], 4096), {}, ValueError, "factor"),
    (LongRoPE, ([1.0], [1.0], 0), {"factor": 2.0}, ValueError, "original_max_position"),
    (LongRoPE, ([1.0], [1.0], 4096), {"factor": -2.0}, ValueError, "factor"),
    (LongRoPE, ([1.0], [1.0], 4096), {"max_position": 0}, ValueError, "max_position"),
    (LongRoPE, ([1.0], [1.0], 4096), {"attention_factor": -1.0}, ValueError, "attention_factor"),
    (Proportional, (1.5,), {}, ValueError, "fraction"),
    (Proportional, (-0.1,), {}, ValueError, "fraction"),
    (Proportional, (NAN,), {}, ValueError, "fraction"),
    (Proportional, (0.5,), {"factor": 0.0}, ValueError, "factor"),
    (Proportional, ("half",), {}, TypeError, "fraction"),
]


@pytest.mark.parametrize("cls, args, kwargs, exc, name", BAD, ids=lambda v: repr(v)[:40])
def test_bad_constructor_arguments(cls, args, kwargs, exc, name):
    with pytest.raises(exc, match=name):
        cls(*args, **kwargs)


@pytest.mark.parametrize("scaling", _all_variants(), ids=repr)
@pytest.mark.parametrize(
    "dim, base, seq_len, exc, name",
    [
        (7, 1e4, None, ValueError, "dim"),
        (0, 1e4, None, ValueError, "dim"),
        (8.0, 1e4, None, TypeError, "dim"),
        (16, 0.0, None, ValueError, "base"),
        (16, NAN, None, ValueError, "base"),
        (16, "1e4", None, TypeError, "base"),
        (16, 1e4, 0, ValueError, "seq_len"),
        (16, 1e4, 2.5, TypeError, "seq_len"),
    ],
)
def test_bad_inv_freq_arguments(scaling, dim, base, seq_len, exc, name):
    with pytest.raises(exc, match=name):
        scaling.inv_freq(dim, base, seq_len=seq_len)


def test_bad_helper_arguments():
    with pytest.raises(ValueError, match="dim"):
        NTK(2.0).inv_freq(2, 1e4)  # the exponent d/(d-2) needs d > 2
    with pytest.raises(ValueError, match="dim"):
        DynamicNTK(2.0, 16).scaled_base(2, 1e4, 100)
    with pytest.raises(TypeError, match="seq_len"):
        DynamicNTK(2.0, 16).scaled_base(8, 1e4, 100.7)
    with pytest.raises(ValueError, match="overflow"):
        NTK(1e300).inv_freq(4, 1e4)
    with pytest.raises(ValueError, match="dim"):
        YaRN(4.0, 4096).ramp_weights(9, 1e4)
    with pytest.raises(ValueError, match="base"):
        YaRN(4.0, 4096).correction_range(16, 1.0)
    with pytest.raises(ValueError, match="dim"):
        Proportional(0.5).kept_pairs(5)


def test_yarn_equal_betas_take_the_reference_codes_widened_ramp():
    """Kimi K2 ships beta_fast = beta_slow = 1: HF (and the reference code) widen the zero-width ramp by 0.001."""
    y = YaRN(32.0, 4096, beta_fast=1.0, beta_slow=1.0, truncate=False)
    low, high = y.correction_range(64, 50000.0)
    assert low == high
    i = np.arange(32, dtype=np.float64)
    gamma = 1.0 - np.clip((i - low) / (high + 0.001 - low), 0.0, 1.0)
    assert np.array_equal(y.ramp_weights(64, 50000.0), gamma)
    assert set(np.unique(gamma)) <= {0.0, 1.0}  # a step: each pair is kept or divided by the factor
