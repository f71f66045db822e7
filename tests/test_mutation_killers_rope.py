"""Tests written for mutants of the RoPE core that survived the numeric mutation run.

Each asserts a property the old tests left open: the attention factor in the complex
and dense forms, the inverse with a factor, batches of more than two axes, a scaling
that returns the wrong number of frequencies.
"""

from __future__ import annotations

import numpy as np
import pytest

from pemath import rope, scaling

YARN = scaling.YaRN(4.0, 64)  # attention factor 0.1 ln 4 + 1 = 1.1386...
LAYOUTS = ("interleaved", "half")


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_yarn_factor_is_not_one():
    assert abs(YARN.attention_factor - (0.1 * np.log(4.0) + 1)) < 1e-15


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("inverse", [False, True])
def test_complex_form_carries_the_attention_factor(layout, inverse):
    x = _x((2, 3, 8))
    pos = np.arange(6.0).reshape(2, 3) * 7
    want = rope.apply(x, pos, layout=layout, scaling=YARN, inverse=inverse)
    z = rope.apply_complex(rope.to_complex(x, layout=layout), pos, scaling=YARN, inverse=inverse)
    np.testing.assert_allclose(rope.from_complex(z, layout=layout), want, rtol=0, atol=1e-12)
    # |z e^{i m theta} a| = a |z|: the factor scales every pair's modulus
    np.testing.assert_allclose(np.abs(z), YARN.attention_factor * np.abs(rope.to_complex(x, layout=layout)),
                               rtol=1e-13)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_forward_then_inverse_scales_by_factor_squared(layout):
    x = _x((4, 8), 1)
    pos = np.array([0.0, 1.0, 5.0, 1000.0])
    back = rope.apply(rope.apply(x, pos, layout=layout, scaling=YARN), pos, layout=layout, scaling=YARN, inverse=True)
    np.testing.assert_allclose(back, YARN.attention_factor**2 * x, rtol=1e-12, atol=1e-12)
    z = rope.to_complex(x, layout=layout)
    zb = rope.apply_complex(rope.apply_complex(z, pos, scaling=YARN), pos, scaling=YARN, inverse=True)
    np.testing.assert_allclose(zb, YARN.attention_factor**2 * z, rtol=1e-12, atol=1e-12)


def test_inverse_complex_rotation_is_the_conjugate():
    """e^{-i m theta}: at m = 1, d = 2 (theta = 1) the pair 1 + 0i goes to cos 1 - i sin 1."""
    z = rope.apply_complex(np.array([1.0 + 0j]), 1.0, inverse=True)
    assert abs(z[0] - complex(np.cos(1.0), -np.sin(1.0))) < 1e-15
    z = rope.apply_complex(np.array([1.0 + 0j]), 1.0)
    assert abs(z[0] - complex(np.cos(1.0), np.sin(1.0))) < 1e-15


def test_freqs_cis_values_and_factor():
    # d = 4: theta = (1, 10000^(-1/2) = 0.01); positions of shape (1, 2)
    f = rope.freqs_cis(np.array([[1.0, 2.0]]), 4)
    assert f.shape == (1, 2, 2)
    want = np.exp(1j * np.array([[[1.0, 0.01], [2.0, 0.02]]]))
    np.testing.assert_allclose(f, want, rtol=0, atol=1e-15)
    g = rope.freqs_cis(np.array([3.0, 4.0]), 8, scaling=YARN)
    np.testing.assert_allclose(np.abs(g), YARN.attention_factor, rtol=1e-14)
    np.testing.assert_allclose(np.angle(g[0]), np.angle(np.exp(1j * 3.0 * YARN.inv_freq(8, 10000.0))), atol=1e-13)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_dense_matrix_with_attention_factor(layout):
    R = rope.matrix(3.0, 8, layout=layout, scaling=YARN)
    a = YARN.attention_factor
    np.testing.assert_allclose(R.T @ R, a * a * np.eye(8), atol=1e-13)  # a times a rotation
    x = _x((8,), 2)
    np.testing.assert_allclose(R @ x, rope.apply(x, 3.0, layout=layout, scaling=YARN), atol=1e-12)


def test_dense_matrix_pairs_in_the_half_layout():
    """d = 4, half: pair 0 is (0, 2), pair 1 is (1, 3); m = 1, theta = (1, 0.01)."""
    R = rope.matrix(1.0, 4, layout="half")
    c, s = np.cos([1.0, 0.01]), np.sin([1.0, 0.01])
    want = np.array([[c[0], 0, -s[0], 0], [0, c[1], 0, -s[1]], [s[0], 0, c[0], 0], [0, s[1], 0, c[1]]])
    np.testing.assert_allclose(R, want, atol=1e-16)


def test_dense_matrix_passes_the_features_beyond_rotary_dim():
    """The features beyond rotary_dim are the identity block of R."""
    np.testing.assert_array_equal(rope.matrix(5.0, 6, layout="interleaved", rotary_dim=4)[4:, 4:], np.eye(2))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_three_batch_axes_equal_row_by_row(layout):
    x = _x((2, 3, 4, 6), 3)
    pos = np.arange(24.0).reshape(2, 3, 4) * 3
    out = rope.apply(x, pos, layout=layout)
    for idx in np.ndindex(2, 3, 4):
        np.testing.assert_allclose(out[idx], rope.apply(x[idx], float(pos[idx]), layout=layout), atol=1e-14)
    z = rope.apply_complex(rope.to_complex(x, layout=layout), pos)
    np.testing.assert_allclose(rope.from_complex(z, layout=layout), out, atol=1e-12)


class _WrongCount(scaling.RopeScaling):
    """A variant that overrides inv_freq and returns one frequency per feature instead of per pair."""

    def _inv_freq(self, dim, base, seq_len):
        return np.ones(dim // 2)

    def inv_freq(self, dim, base, *, seq_len=None):
        return np.ones(dim)


def test_scaling_with_the_wrong_number_of_frequencies_is_refused():
    with pytest.raises(ValueError, match="invalid frequencies"):
        rope.apply(np.ones((2, 8)), np.arange(2.0), layout="half", scaling=_WrongCount())
