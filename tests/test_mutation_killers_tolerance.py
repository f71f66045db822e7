"""Tests written for mutants of pemath/testing/_core/tolerance.py, _rope/tolerance.py and _tables/tolerance.py that survived the numeric mutation run.

The float32 frequency constants C_theta of each scaling variant, checked against the values the
docstring of ``frequency_constants`` documents, worked by hand at small rotary dims; and the float64
slack of the phase bound.
"""

from __future__ import annotations

import numpy as np
import pytest

from pemath import alibi
from pemath import scaling as sc
import pemath.testing as PT
from pemath.testing._core import tolerance as T
from pemath.testing._rope import tolerance as RT
from pemath.testing._tables import tolerance as TT

# r = 4, b = 10^4: e = (0, 1/2), C_theta = (0, 3 * 0.5 * ln 10^4 + 0.5 + 10) = (0, 24.315510557964274)
PLAIN = np.array([0.0, 24.315510557964274])


def test_plain_constants_by_hand():
    np.testing.assert_allclose(T.frequency_constants(4, 1e4), PLAIN, rtol=1e-15)


@pytest.mark.parametrize("variant,extra", [
    (sc.Linear(2.0), 2.0),          # one division by the factor
    (sc.DynamicNTK(2.0, 64), 8.0),  # seq_len None: the base itself, 8 for the run-time float32 base
    (sc.LongRoPE([1.0, 1.0], [2.0, 2.0], 64, max_position=128), 2.0),  # division by the pair's factor
])
def test_additive_constants_of_the_variants(variant, extra):
    np.testing.assert_allclose(T.frequency_constants(4, 1e4, variant), PLAIN + extra, rtol=1e-15)


def test_ntk_uses_the_enlarged_base():
    """NTK s = 2, d = 4: b' = 10^4 * 2^(4/2) = 4e4; C = (0, 1.5 ln 4e4 + 10.5) + 2."""
    want = np.array([0.0, 1.5 * 10.596634733096073 + 10.5]) + 2.0
    np.testing.assert_allclose(T.frequency_constants(4, 1e4, sc.NTK(2.0)), want, rtol=1e-15)


def test_llama3_smoothing_factor():
    """h = 4, l = 1: (1 + 4/3) (C + 5); pair 0: 7/3 * 5 = 35/3."""
    got = T.frequency_constants(4, 1e4, sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0))
    np.testing.assert_allclose(got, 7.0 / 3.0 * (PLAIN + 5.0), rtol=1e-15)
    assert got[0] == pytest.approx(35.0 / 3.0, rel=1e-15)


def test_unknown_variant_gets_16():
    class Mine(sc.RopeScaling):
        def _inv_freq(self, dim, base, seq_len):
            return base ** (-np.arange(0, dim, 2) / dim)

    np.testing.assert_allclose(T.frequency_constants(4, 1e4, Mine()), PLAIN + 16.0, rtol=1e-15)


def test_yarn_ramp_constant_by_hand():
    """d = 8, b = 10, L0 = 4096, beta_slow = 1: (low, high) = (5, 7);
    7 + (|7| + |5|)/(7 - 5) + 2 + |5|/(7 - 5) = 7 + 6 + 2 + 2.5 = 17.5 added to every pair."""
    y = sc.YaRN(4.0, 4096, beta_slow=1.0)
    assert y.correction_range(8, 10.0) == (5, 7)
    np.testing.assert_allclose(T.frequency_constants(8, 10.0, y) - T.frequency_constants(8, 10.0), 17.5,
                               rtol=1e-14)


def test_yarn_zero_width_ramp_constant():
    """L0 = 14074: both bounds are 7 (low = floor(7.38), high = min(ceil(13.4), 7)); high becomes 7.001:
    7 + 14.001/0.001 + 2 + 7/0.001 = 7 + 14001 + 2 + 7000 = 21010."""
    y = sc.YaRN(4.0, 14074, beta_slow=1.0)
    assert y.correction_range(8, 10.0) == (7, 7)
    np.testing.assert_allclose(T.frequency_constants(8, 10.0, y) - T.frequency_constants(8, 10.0), 21010.0,
                               rtol=1e-9)


def test_phase_error_float64_slack():
    """At position 0 the float32 terms vanish: the bound is u64 * 8 = 2^-50."""
    got = T.phase_error(np.array([0.0]), np.array([1.0]), np.array([0.0]))
    assert got.shape == (1, 1)
    assert got[0, 0] == 2.0**-50


def test_phase_error_by_hand():
    """pos 2, freq 1, C 0: (C + 1) u32 |m w| + |w| |fl32(m) - m| + u64 (|m w| + 8) = 2^-23 + 10 * 2^-53."""
    got = T.phase_error(np.array([2.0]), np.array([1.0]), np.array([0.0]))
    assert got[0, 0] == 2.0**-23 + 10 * 2.0**-53
    # 2^24 + 1 is not a float32: fl32 rounds it by 1; with freq 1/2 that term is 1/2
    got = T.phase_error(np.array([2.0**24 + 1]), np.array([0.5]), np.array([3.0]))
    phi = 0.5 * (2.0**24 + 1)
    assert got[0, 0] == pytest.approx(4 * 2.0**-24 * phi + 0.5 + 2.0**-53 * (phi + 8), rel=1e-15)


def test_rope_tolerance_default_base_is_10000():
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    pos = np.array([1.0, 500.0, 70000.0])
    got = PT.rope_tolerance(x, pos, layout="half")
    np.testing.assert_array_equal(got, PT.rope_tolerance(x, pos, layout="half", base=10000.0))
    assert not np.array_equal(got, PT.rope_tolerance(x, pos, layout="half", base=20000.0))


@pytest.mark.parametrize("convention,idx,sine", [
    ("interleaved", [0, 0, 1, 1, 2], [1, 0, 1, 0, 1]),   # sin w0, cos w0, sin w1, cos w1, sin w2
    ("concat", [0, 1, 2, 0, 1], [1, 1, 1, 0, 0]),        # 3 sines, then 2 cosines
    ("tensor2tensor", [0, 1, 0, 1, -1], [1, 1, 0, 0, 0]),  # 2 sines, 2 cosines, a zero column
    ("half", [0, 1, 0, 1, -1], [1, 1, 0, 0, 0]),
])
def test_sinusoidal_columns_of_an_odd_dim(convention, idx, sine):
    got_idx, got_sine = TT.sinusoidal_columns(5, convention)
    np.testing.assert_array_equal(got_idx, idx)
    np.testing.assert_array_equal(got_sine, np.array(sine, dtype=bool))


def test_sinusoidal_exponents_by_hand():
    np.testing.assert_allclose(TT.sinusoidal_exponents(6, "tensor2tensor"), [0.0, 0.5, 1.0], rtol=1e-15)  # i/(h-1)
    np.testing.assert_allclose(TT.sinusoidal_exponents(5, "tensor2tensor"), [0.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(TT.sinusoidal_exponents(5, "interleaved"), [0.0, 0.4, 0.8], rtol=1e-15)  # 2i/d


def test_rope_bound_of_a_slice_that_does_not_start_at_zero():
    """Rotating features 2..5 of 8: those get the bound of the same slice rotated on its own, the others
    the pass-through bound u |x_j|."""
    x2 = np.random.default_rng(1).standard_normal((3, 8))
    pos = np.array([1.0, 40.0, 900.0])
    freq, cfreq = np.array([1.0, 0.01]), np.array([0.0, 24.0])
    u = 2.0**-24
    got = RT.rope_bound(x2, pos, freq, 1.0, "half", 4, u, cfreq, start=2)
    alone = RT.rope_bound(x2[:, 2:6], pos, freq, 1.0, "half", 4, u, cfreq)
    np.testing.assert_array_equal(got[:, 2:6], alone)
    np.testing.assert_array_equal(got[:, [0, 1, 6, 7]], u * np.abs(x2[:, [0, 1, 6, 7]]))


# ----------------------------------------------------------------- sinusoidal_tolerance, by hand
U = 2.0**-24
LN_B = 9.210340371976184  # ln 10^4


def test_sinusoidal_tolerance_by_hand_default_base():
    """d = 4 (concat: sin w0, sin w1, cos w0, cos w1), b = 10^4 by default, w = (1, 1/100), p = 100 (exact
    in float32), float32: tau = 2 [(C + 1) u |p w| + 2u + u + 2^-53 (|p w| + 8)] with C = (0, 1.5 ln b + 10.5)."""
    c1 = 1.5 * LN_B + 0.5 + 10.0
    col0 = 2 * (1.0 * U * 100 + 3 * U + 2.0**-53 * 108)
    col1 = 2 * ((c1 + 1) * U * 1.0 + 3 * U + 2.0**-53 * 9)
    got = PT.sinusoidal_tolerance([100], 4, convention="concat")
    assert got.shape == (1, 4)
    np.testing.assert_allclose(got[0], [col0, col1, col0, col1], rtol=1e-13)


def test_sinusoidal_tolerance_bfloat16_and_a_rounded_position():
    """interleaved d = 2 (sin w0, cos w0), w0 = 1, p = 2^24 + 1 (float32 rounds it by 1), bfloat16
    u_T = 2^-8: tau = 2 [u p + 1 + 2u + 2^-8 + 2^-53 (p + 8)]."""
    p = 2.0**24 + 1
    want = 2 * (U * p + 1.0 + 2 * U + 2.0**-8 + 2.0**-53 * (p + 8))
    got = PT.sinusoidal_tolerance([p], 2, convention="interleaved", dtype="bfloat16")
    np.testing.assert_allclose(got[0], [want, want], rtol=1e-13)


def test_sinusoidal_tolerance_odd_tensor2tensor():
    """d = 5, tensor2tensor: e = (0, 1), w = (1, 10^-4); columns sin w0, sin w1, cos w0, cos w1 and a zero
    column that must be exactly zero. p = 3: C = (0, 3 ln b + 1 + 10)."""
    c1 = 3 * LN_B + 11.0
    col0 = 2 * (U * 3 + 3 * U + 2.0**-53 * 11)
    col1 = 2 * ((c1 + 1) * U * 3e-4 + 3 * U + 2.0**-53 * (3e-4 + 8))
    got = PT.sinusoidal_tolerance([3.0], 5, convention="tensor2tensor")
    np.testing.assert_allclose(got[0, :4], [col0, col1, col0, col1], rtol=1e-13)
    assert got[0, 4] == 0.0


def test_sinusoidal_tolerance_grows_with_the_phase():
    pos = np.array([0.0, 1.0, 7.0, 1e3, 1e6, 2.0**24 - 1, 2.0**24 + 1, 1e8])
    got = PT.sinusoidal_tolerance(pos, 8, convention="concat")
    assert np.all(np.diff(got, axis=0) > 0)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_honest_float32_table_passes(dtype):
    """A table computed the plain way in float32 (phase fl32(p) * fl32(w), sin / cos in float32, rounded
    to dtype) lies within the tolerance, also at the float32 position boundary 2^24 + 1."""
    ml = pytest.importorskip("ml_dtypes")
    pos = np.array([0.0, 1.0, 999.0, 2.0**24 - 1, 2.0**24 + 1, 1e6])
    d, b = 8, 1e4
    w = b ** (-np.arange(d // 2) * 2.0 / d)
    truth_phase = pos[:, None] * w
    truth = np.concatenate([np.sin(truth_phase), np.cos(truth_phase)], axis=1)
    ph32 = pos.astype(np.float32)[:, None] * w.astype(np.float32)
    t = np.dtype(ml.bfloat16) if dtype == "bfloat16" else np.float32
    got = np.concatenate([np.sin(ph32), np.cos(ph32)], axis=1).astype(t).astype(np.float64)
    tol = PT.sinusoidal_tolerance(pos, d, convention="concat", dtype=dtype)
    assert np.all(np.abs(got - truth) <= tol)


# ----------------------------------------------------------------- alibi_tolerance, by hand
def test_alibi_tolerance_by_hand():
    """One head (slope 2^-8), causal q = 2, k = 3: tau = 2 |B| (10 u + u_T) (up to the float64 slack,
    relative 2^-28 / 11), and 0 for a masked entry."""
    b = np.array([[-2.0**-8, 0.0, -np.inf], [-2.0**-7, -2.0**-8, 0.0]])
    got = PT.alibi_tolerance(1, 2, 3, form="causal")[0]
    want = np.where(np.isfinite(b), 2 * np.abs(b) * 11 * U, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-8)
    assert got[0, 2] == 0.0 and got[0, 1] == 0.0
    bf = PT.alibi_tolerance(1, 2, 3, form="causal", dtype="bfloat16")[0]
    np.testing.assert_allclose(bf, np.where(np.isfinite(b), 2 * np.abs(b) * (10 * U + 2.0**-8), 0.0), rtol=1e-8)


@pytest.mark.parametrize("q_len,k_len,offset,extra", [
    (1, 1, 2**24 - 1, 0),    # max(q, k) + |offset| = 2^24: distances are exact in float32
    (1, 1, -(2**24 - 1), 0),
    (1, 2, 2**24 - 1, 1),    # 2^24 + 1: one more u
    (2, 1, -(2**24 - 1), 1),
    (1, 1, 1000, 0),
])
def test_alibi_tolerance_position_bound(q_len, k_len, offset, extra):
    """The extra u is added when max(q_len, k_len) + |offset| exceeds 2^24, not at 2^24."""
    b = np.asarray(alibi.bias(1, q_len, k_len, form="symmetric", offset=offset))
    got = PT.alibi_tolerance(1, q_len, k_len, form="symmetric", offset=offset)
    np.testing.assert_allclose(got, 2 * np.abs(b) * (11 + extra) * U, rtol=1e-8)
