"""Tests written to kill surviving mutants of pemath.scaling (see tests/mutation/survivors.md).

Hand-computed values at the edges of the argument ranges, and the error each bad argument
must raise (naming the argument).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pemath.scaling import NTK, DynamicNTK, Llama3, LongRoPE


def test_ntk_base_below_one_is_fine_and_underflow_is_refused():
    assert NTK(0.5).scaled_base(4, 1.0) == 0.25  # 1 * 0.5**(4/2)
    with pytest.raises(ValueError, match="NTK-scaled base overflows float64"):
        NTK(1e-200).scaled_base(4, 1e-300)  # 1e-300 * 1e-400 underflows to 0


@pytest.mark.parametrize("base", [0.0, -1.0])
def test_ntk_base_must_be_positive(base):
    with pytest.raises(ValueError, match="base must be > 0"):
        NTK(2.0).scaled_base(4, base)
    with pytest.raises(ValueError, match="base must be > 0"):
        DynamicNTK(2.0, 8).scaled_base(4, base)
    with pytest.raises(ValueError, match="base must be > 0"):
        DynamicNTK(2.0, 8).scaled_base(4, base, seq_len=64)


def test_original_max_position_one_is_allowed():
    # DynamicNTK, L0 = 1, s = 2, seq_len 2: ratio 1 + 2 (2 - 1) / 1 = 3, base 100 * 3**(4/2)
    assert DynamicNTK(2.0, 1).scaled_base(4, 100.0, seq_len=2) == 900.0
    # Llama 3.1 with L0 = 1: every wavelength (2 pi, 20 pi) exceeds L0 / low_freq_factor = 1: all / 8
    assert Llama3(8.0, 1).inv_freq(4, 100.0).tolist() == [0.125, 0.0125]
    # LongRoPE: L0 = 1 is fine with an explicit attention factor, or when s = max_position / L0 <= 1
    assert LongRoPE([1, 1], [1, 1], 1, attention_factor=1.0).attention_factor == 1.0
    assert LongRoPE([1, 1], [1, 1], 1, max_position=1).attention_factor == 1.0
    assert LongRoPE([1, 1], [1, 1], 4, max_position=1).attention_factor == 1.0  # s = 1/4


def test_llama3_high_freq_factor_must_be_positive():
    with pytest.raises(ValueError, match="high_freq_factor must be > 0"):
        Llama3(8.0, 8192, high_freq_factor=0.0)


def test_longrope_long_factor_must_be_positive():
    with pytest.raises(ValueError, match="long_factor must hold numbers > 0"):
        LongRoPE([1, 1], [1, 0], 4, factor=2.0)


@pytest.mark.parametrize("max_position", [2, 8])
def test_longrope_attention_factor_needs_two_original_positions(max_position):
    # s = max_position / 1 > 1: sqrt(1 + ln s / ln 1) is undefined, so attention_factor is required
    with pytest.raises(ValueError, match="original_max_position must be >= 2"):
        LongRoPE([1, 1], [1, 1], 1, max_position=max_position)


def test_longrope_attention_factor_with_two_original_positions():
    # L0 = 2, s = 4: sqrt(1 + ln 4 / ln 2) = sqrt(3)
    assert math.isclose(LongRoPE([1, 1], [1, 1], 2, max_position=8).attention_factor, math.sqrt(3), rel_tol=1e-15)
    assert np.isfinite(LongRoPE([1, 1], [1, 1], 2, factor=4.0).attention_factor)


# ------------------------------------------------------------------------------------------------
# third pass: YaRN, RopeScaling.inv_freq


def test_yarn_attention_factor_for_factors_up_to_two():
    """0.1 ln s + 1 for every s > 1 (s = 2: 1.0693...), 1 at s = 1."""
    from pemath.scaling import YaRN

    assert YaRN(2.0, 64).attention_factor == pytest.approx(1.0693147180559945, rel=1e-15)
    assert YaRN(1.5, 64).attention_factor == pytest.approx(0.1 * math.log(1.5) + 1, rel=1e-15)
    assert YaRN(1.0, 64).attention_factor == 1.0


def test_yarn_accepts_an_original_length_of_one():
    from pemath.scaling import YaRN

    y = YaRN(4.0, 1)
    assert y.original_max_position == 1
    freq = y.inv_freq(8, 10000.0)
    # L0 = 1: both ramp bounds are negative, clipped to 0: pair 0 sits at the ramp's start
    # (weight 1, kept), pairs 1.. past its end (weight 0): theta_i / 4
    np.testing.assert_allclose(freq, [1.0, 0.1 / 4, 0.01 / 4, 0.001 / 4], rtol=1e-15)


def test_yarn_negative_mscale_all_dim_is_refused():
    from pemath.scaling import YaRN

    with pytest.raises(ValueError, match="mscale_all_dim"):
        YaRN(4.0, 64, mscale=1.0, mscale_all_dim=-1.0)


@pytest.mark.parametrize("ramp", ["index", "ratio"])
@pytest.mark.parametrize("base", [-10.0, 0.0])
def test_yarn_ramp_methods_check_base(ramp, base):
    from pemath.scaling import YaRN

    y = YaRN(4.0, 64, ramp=ramp)
    with pytest.raises(ValueError, match="base must be > 0"):
        y.correction_range(8, base)
    with pytest.raises(ValueError, match="base must be > 0"):
        y.ramp_weights(8, base)


def test_yarn_correction_range_is_clipped_to_dim_minus_one():
    """L0 = 4096, base 10, d = 8: low = 8 ln(4096/64pi)/(2 ln 10) = 5.24 -> 5,
    high = 8 ln(4096/2pi)/(2 ln 10) = 11.3 -> 12, clipped to d - 1 = 7 (HF)."""
    from pemath.scaling import YaRN

    assert YaRN(4.0, 4096, beta_slow=1.0).correction_range(8, 10.0) == (5, 7)


def test_yarn_correction_range_without_overflow_for_extreme_betas():
    """beta_slow = 1e-300: L0 / (2 pi beta) overflows float64; the bound is still
    d ln(L0 / 2 pi beta) / (2 ln b) (mpmath, 40 digits: 4.12269093508855847 for L0 = 1e10, b = 1e300)."""
    from pemath.scaling import YaRN

    y = YaRN(4.0, 10**10, beta_fast=1.0, beta_slow=1e-300, truncate=False)
    low, high = y.correction_range(8, 1e300)
    assert low == pytest.approx(0.12269093508855847, rel=1e-14)
    assert high == pytest.approx(4.122690935088558, rel=1e-14)


def test_yarn_correction_bound_is_hf_expression_bit_for_bit():
    """d ln(L0 / (beta 2 pi)) / (2 ln b) exactly as HF writes it: for L0 = 200, beta = 64 the
    log of the quotient and the difference of logs differ in the last bit."""
    from pemath.scaling import YaRN

    low, _ = YaRN(4.0, 200, beta_fast=64.0, beta_slow=1.0, truncate=False).correction_range(8, 0.5)
    assert low == 8 * math.log(200 / (64.0 * 2 * math.pi)) / (2 * math.log(0.5))


def test_scaling_base_checks_the_number_of_frequencies():
    """A RopeScaling subclass whose _inv_freq returns one (finite) value per feature is refused."""
    from pemath.scaling import RopeScaling

    class PerFeature(RopeScaling):
        def _inv_freq(self, dim, base, seq_len):
            return np.ones(dim)

    with pytest.raises(ValueError, match="PerFeature"):
        PerFeature().inv_freq(8, 10000.0)


# ---------------------------------------------------------------- issue 32's campaign: survivors of the test suite
# transformers (modeling_rope_utils.dynamic_rope_update, 5.25) takes seq_len = max(position_ids) + 1 in forward, for
# dynamic NTK and LongRoPE alike; rope.apply without seq_len must read the same regime.

@pytest.mark.parametrize("scaling", [DynamicNTK(factor=2.0, original_max_position=16),
                                     LongRoPE(short_factor=[1.0] * 4, long_factor=[2.0, 3.0, 4.0, 5.0],
                                              original_max_position=16, max_position=64)])
def test_seq_len_from_positions_is_the_largest_plus_one(scaling):
    from pemath import rope

    x = np.random.default_rng(0).standard_normal((17, 8))
    pos = np.arange(17)  # the largest position is L0 = 16: transformers' seq_len is 17 > L0, the long regime
    got = rope.apply(x, pos, base=100.0, layout="half", scaling=scaling)
    assert np.array_equal(got, rope.apply(x, pos, base=100.0, layout="half", scaling=scaling, seq_len=17))
    assert not np.allclose(got, rope.apply(x, pos, base=100.0, layout="half", scaling=scaling, seq_len=16))
    half = pos + 0.5  # floor(16.5) + 1 = 17 as well
    assert np.array_equal(rope.apply(x, half, base=100.0, layout="half", scaling=scaling),
                          rope.apply(x, half, base=100.0, layout="half", scaling=scaling, seq_len=17))


def test_dynamic_ntk_from_a_config_uses_max_position_embeddings_not_a_top_level_original():
    # transformers' _compute_dynamic_ntk_parameters reads config.max_position_embeddings, whatever
    # original_max_position_embeddings says (that key is YaRN's, Llama 3's and LongRoPE's)
    from pemath import rope

    cfg = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 4096,
           "rope_theta": 10000.0, "original_max_position_embeddings": 1024,
           "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    assert rope.from_hf_config(cfg).scaling == DynamicNTK(factor=2.0, original_max_position=4096)
