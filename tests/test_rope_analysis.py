"""pemath.rope.long_term_decay: RoFormer's relative upper bound (1/(d/2)) sum_j |S_j(r)|."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope

from .conftest import to_np


def test_d4_closed_form(xp):
    # d = 4: theta = (1, b^(-1/2)) = (1, 1/10); |S_1| = 1, |S_2| = |e^{ir} + e^{ir/10}| = 2 |cos(r (1 - 1/10) / 2)|
    b = 100.0
    r = [0, 1, 2.5, 37, -11, 1000]
    got = to_np(rope.long_term_decay(xp.asarray(r, dtype=xp.float64), 4, base=b))
    want = [(1 + 2 * abs(math.cos(x * (1 - 0.1) / 2))) / 2 for x in r]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_keeps_the_namespace_and_shape(xp):
    r = xp.reshape(xp.arange(6, dtype=xp.int64), (2, 3))
    out = rope.long_term_decay(r, 8)
    assert tuple(out.shape) == (2, 3)
    assert out.dtype == xp.float64
    assert type(out) is type(r)


@given(half=st.integers(1, 128), base=st.sampled_from([10.0, 10000.0, 500000.0]))
def test_maximum_at_zero(half, base):
    # |S_j(0)| = j, so B(0) = (d/2 + 1)/2, and |S_j(r)| <= j everywhere
    r = np.arange(0, 300)
    B = rope.long_term_decay(r, 2 * half, base=base)
    assert abs(B[0] - (half + 1) / 2) <= 1e-12 * half
    assert np.all(B <= B[0] + 1e-12 * half)


@given(r=st.integers(-(10**6), 10**6), half=st.integers(1, 64))
def test_even_in_the_distance(r, half):
    a, b = rope.long_term_decay([r, -r], 2 * half)
    assert abs(a - b) <= 1e-9 * half


def test_single_pair_is_constant():
    # d = 2: S_1 = e^{ir theta_0}, so B(r) = 1 for every r
    np.testing.assert_allclose(rope.long_term_decay(np.arange(-50, 50), 2), 1.0, atol=1e-15)


def test_published_figure_values():
    # RoFormer's Figure 2 curve (d = 128, base 10000): 32.5 at 0, not monotone (B(19) > B(18))
    B = rope.long_term_decay(np.arange(0, 251), 128)
    assert B[0] == pytest.approx(32.5)
    assert B[19] > B[18]
    assert 6 < B[250] < 7


def test_scaling_uses_the_scaled_frequencies():
    # linear (PI) scaling by 4 divides every frequency by 4: B(r; scaled) = B(r / 4)
    from pemath.scaling import Linear

    r = np.array([0, 4, 40, 400])
    np.testing.assert_allclose(rope.long_term_decay(r, 64, scaling=Linear(4.0)),
                               rope.long_term_decay(r / 4, 64), atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(distances=[0, 1], dim=7), ValueError, "dim"),
        (dict(distances=[0, 1], dim=0), ValueError, "dim"),
        (dict(distances=[0, 1], dim=8.0), TypeError, "dim"),
        (dict(distances=[0, 1], dim=8, base=-1.0), ValueError, "base"),
        (dict(distances="far", dim=8), TypeError, "distances"),
        (dict(distances=[0.0, float("nan")], dim=8), ValueError, "distances"),
        (dict(distances=[1 + 2j], dim=8), TypeError, "distances"),
        (dict(distances=[0, 1], dim=8, seq_len=0), ValueError, "seq_len"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rope.long_term_decay(**kwargs)
