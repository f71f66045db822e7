"""Tests written for mutants of pemath/testing/_tolerance.py that survived the numeric mutation run.

The float32 frequency constants C_theta of each scaling variant, checked against the values the
docstring of ``frequency_constants`` documents, worked by hand at small rotary dims; and the float64
slack of the phase bound.
"""

from __future__ import annotations

import numpy as np
import pytest

from pemath import scaling as sc
from pemath.testing import _tolerance as T

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
    got = T.rope_tolerance(x, pos, layout="half")
    np.testing.assert_array_equal(got, T.rope_tolerance(x, pos, layout="half", base=10000.0))
    assert not np.array_equal(got, T.rope_tolerance(x, pos, layout="half", base=20000.0))


@pytest.mark.parametrize("convention,idx,sine", [
    ("interleaved", [0, 0, 1, 1, 2], [1, 0, 1, 0, 1]),   # sin w0, cos w0, sin w1, cos w1, sin w2
    ("concat", [0, 1, 2, 0, 1], [1, 1, 1, 0, 0]),        # 3 sines, then 2 cosines
    ("tensor2tensor", [0, 1, 0, 1, -1], [1, 1, 0, 0, 0]),  # 2 sines, 2 cosines, a zero column
    ("half", [0, 1, 0, 1, -1], [1, 1, 0, 0, 0]),
])
def test_sinusoidal_columns_of_an_odd_dim(convention, idx, sine):
    got_idx, got_sine = T.sinusoidal_columns(5, convention)
    np.testing.assert_array_equal(got_idx, idx)
    np.testing.assert_array_equal(got_sine, np.array(sine, dtype=bool))


def test_sinusoidal_exponents_by_hand():
    np.testing.assert_allclose(T.sinusoidal_exponents(6, "tensor2tensor"), [0.0, 0.5, 1.0], rtol=1e-15)  # i/(h-1)
    np.testing.assert_allclose(T.sinusoidal_exponents(5, "tensor2tensor"), [0.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose(T.sinusoidal_exponents(5, "interleaved"), [0.0, 0.4, 0.8], rtol=1e-15)  # 2i/d


def test_rope_bound_of_a_slice_that_does_not_start_at_zero():
    """Rotating features 2..5 of 8: those get the bound of the same slice rotated on its own, the others
    the pass-through bound u |x_j|."""
    x2 = np.random.default_rng(1).standard_normal((3, 8))
    pos = np.array([1.0, 40.0, 900.0])
    freq, cfreq = np.array([1.0, 0.01]), np.array([0.0, 24.0])
    u = 2.0**-24
    got = T.rope_bound(x2, pos, freq, 1.0, "half", 4, u, cfreq, start=2)
    alone = T.rope_bound(x2[:, 2:6], pos, freq, 1.0, "half", 4, u, cfreq)
    np.testing.assert_array_equal(got[:, 2:6], alone)
    np.testing.assert_array_equal(got[:, [0, 1, 6, 7]], u * np.abs(x2[:, [0, 1, 6, 7]]))
