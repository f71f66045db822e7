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
