"""Tests written for mutants of the RoPE core that survived the numeric mutation run.

Each asserts a property the old tests left open: the attention factor in the complex
and dense forms, the inverse with a factor, batches of more than two axes, a scaling
that returns the wrong number of frequencies.
"""

from __future__ import annotations

import numpy as np
import pytest

from pemath import rope, scaling

from .conftest import to_np

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


# ------------------------------------------------------------------------------------------------
# third pass: rope.apply / cos_sin / the NumPy fast path, and the open core survivors


def _yarn(factor):
    return scaling.YaRN(4.0, 64, attention_factor=factor)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_attention_factor_two_doubles_the_rotation_exactly(xp, dtype, layout):
    """A factor of 2 scales cos and sin by a power of two: exactly twice the factor-1 result."""
    if not hasattr(xp, dtype):
        pytest.skip(f"{xp.__name__} has no {dtype}")
    x = xp.asarray(_x((3, 8), 4), dtype=getattr(xp, dtype))
    pos = xp.asarray([0.0, 3.0, 70.0])
    one = rope.apply(x, pos, layout=layout, scaling=_yarn(1.0))
    two = rope.apply(x, pos, layout=layout, scaling=_yarn(2.0))
    np.testing.assert_array_equal(to_np(two), 2 * to_np(one))
    # at position 0 (cos 1, sin 0) the result is the factor times x
    np.testing.assert_array_equal(to_np(two)[0], 2 * to_np(x)[0])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cos_sin_tables_carry_an_attention_factor_of_two(layout):
    pos = np.array([0.0, 1.0, 9.0])
    c1, s1 = rope.cos_sin(pos, 8, layout=layout, scaling=_yarn(1.0))
    c2, s2 = rope.cos_sin(pos, 8, layout=layout, scaling=_yarn(2.0))
    np.testing.assert_array_equal(c2, 2 * c1)
    np.testing.assert_array_equal(s2, 2 * s1)
    assert np.all(np.abs(s1[1:]) > 0)  # the sin table is not trivially zero


def test_cos_sin_default_base_is_10000():
    """d = 4: theta = (1, 10000^(-1/2) = 0.01); at m = 1, half layout [t0, t1, t0, t1]."""
    c, s = rope.cos_sin(1, 4, layout="half")
    np.testing.assert_allclose(c, np.cos([1.0, 0.01, 1.0, 0.01]), rtol=0, atol=1e-16)
    np.testing.assert_allclose(s, np.sin([1.0, 0.01, 1.0, 0.01]), rtol=0, atol=1e-16)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cos_sin_dtype_rounds_each_table_once(layout):
    pos = np.array([1.0, 2.0, 30.0])
    c64, s64 = rope.cos_sin(pos, 8, layout=layout)
    c32, s32 = rope.cos_sin(pos, 8, layout=layout, dtype=np.float32)
    assert c32.dtype == s32.dtype == np.float32
    np.testing.assert_array_equal(c32, c64.astype(np.float32))
    np.testing.assert_array_equal(s32, s64.astype(np.float32))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cos_sin_tables_with_two_position_axes(layout):
    """Per-feature tables of a (2, 3) grid of positions: each entry is the table of its position."""
    pos = np.arange(6.0).reshape(2, 3) * 5
    c, s = rope.cos_sin(pos, 6, layout=layout)
    assert c.shape == s.shape == (2, 3, 6)
    for i, j in np.ndindex(2, 3):
        ci, si = rope.cos_sin(float(pos[i, j]), 6, layout=layout)
        np.testing.assert_array_equal(c[i, j], ci)
        np.testing.assert_array_equal(s[i, j], si)


def test_from_complex_of_a_single_vector():
    z = np.array([1 + 2j, 3 + 4j])
    np.testing.assert_array_equal(rope.from_complex(z, layout="interleaved"), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(rope.from_complex(z, layout="half"), [1.0, 3.0, 2.0, 4.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shift", [1, -1])
def test_out_overlapping_x_by_a_row(monkeypatch, dtype, layout, shift):
    """``out`` one row off ``x`` in the same buffer (documented safe): small blocks, so a block
    written before a later block of x is read would clobber it."""
    from pemath.rope import _fast_numpy

    monkeypatch.setattr(_fast_numpy, "_BLOCK", 16)
    buf = _x((9, 8), 5).astype(dtype)
    x, out = (buf[:8], buf[1:]) if shift == 1 else (buf[1:], buf[:8])
    pos = np.arange(8.0) * 3
    want = rope.apply(x.copy(), pos, layout=layout)
    got = rope.apply(x, pos, layout=layout, out=out)
    assert got is out
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_float32_with_a_strided_feature_axis(layout):
    """x[..., ::2] of a float32 array: the feature axis is not contiguous."""
    base = _x((3, 16), 6).astype(np.float32)
    x = base[:, ::2]
    pos = np.array([1.0, 2.0, 50.0])
    got = rope.apply(x, pos, layout=layout)
    want = rope.apply(np.ascontiguousarray(x).astype(np.float64), pos, layout=layout).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2**-23, atol=0)


def test_rows_longer_than_a_block(monkeypatch):
    """A row of x larger than the block size (a single row per block): still every row rotated."""
    from pemath.rope import _fast_numpy

    monkeypatch.setattr(_fast_numpy, "_BLOCK", 4)
    x = _x((2, 3, 8), 7)
    pos = np.arange(6.0).reshape(2, 3)
    got = rope.apply(x, pos, layout="half")
    for idx in np.ndindex(2, 3):
        np.testing.assert_array_equal(got[idx], rope.apply(x[idx], float(pos[idx]), layout="half"))


def test_num_threads_default_is_the_cpus_available_capped_at_8(monkeypatch):
    import os

    from pemath.rope import _fast_numpy

    monkeypatch.delenv("PEMATH_NUM_THREADS", raising=False)
    if hasattr(os, "sched_getaffinity"):
        for cpus, want in ((1, 1), (3, 3), (8, 8), (20, 8)):
            monkeypatch.setattr(os, "sched_getaffinity", lambda pid, n=cpus: set(range(n)))
            assert _fast_numpy.num_threads() == want
        monkeypatch.delattr(os, "sched_getaffinity")
    # without sched_getaffinity (not Linux): os.cpu_count(), or 1 when unknown
    for count, want in ((None, 1), (3, 3), (12, 8)):
        monkeypatch.setattr(os, "cpu_count", lambda c=count: c)
        assert _fast_numpy.num_threads() == want


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_setaffinity"), reason="Linux only")
def test_num_threads_follows_this_threads_affinity(monkeypatch):
    import os

    from pemath.rope import _fast_numpy

    monkeypatch.delenv("PEMATH_NUM_THREADS", raising=False)
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(saved)})
    try:
        assert _fast_numpy.num_threads() == 1
    finally:
        os.sched_setaffinity(0, saved)


@pytest.mark.parametrize("src,dst,want", [("interleaved", "half", [0, 2, 1, 3, 4, 5]),
                                          ("half", "interleaved", [0, 2, 1, 3, 4, 5])])
def test_convert_layout_keeps_the_features_beyond_rotary_dim(src, dst, want):
    """rotary_dim = 4 of 6: pairs (0, 1), (2, 3) <-> (0, 2), (1, 3); features 4, 5 pass through."""
    np.testing.assert_array_equal(rope.convert_layout(np.arange(6), src=src, dst=dst, rotary_dim=4), want)
    x = np.arange(2 * 3 * 6).reshape(2, 3, 6)
    out = rope.convert_layout(x, src=src, dst=dst, rotary_dim=4)
    assert out.shape == x.shape
    np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
    np.testing.assert_array_equal(out[..., :4], x[..., np.array(want[:4])])


def test_xpos_scale_underflow_is_an_error():
    """A query 10^6 positions from the centre: zeta**(10^6/512) underflows to 0 for every pair
    (0.2857**1953 ~ 1e-1063), which would silently zero the query."""
    from pemath.rope import xpos

    with pytest.raises(ValueError, match="underflows"):
        xpos.apply(np.ones((1, 4)), [1e6], layout="half", role="query")


@pytest.mark.parametrize("center", [[1.0], True, 1 + 2j])
def test_xpos_bad_center_message_lists_the_named_centres(center):
    from pemath.rope import xpos

    with pytest.raises(TypeError, match="center must be a real number or one of 'torchscale'"):
        xpos.apply(np.ones((1, 4)), [0.0], layout="half", role="query", center=center)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_float32_into_a_strided_out(layout):
    """``out`` a view with a non-contiguous feature axis (same shape and dtype as x: allowed)."""
    x = _x((3, 8), 8).astype(np.float32)
    pos = np.array([1.0, 2.0, 50.0])
    out = np.zeros((3, 16), dtype=np.float32)[:, ::2]
    got = rope.apply(x, pos, layout=layout, out=out)
    assert got is out
    np.testing.assert_array_equal(out, rope.apply(x, pos, layout=layout))


def test_axial_sequences_are_refused_as_strings():
    from pemath.rope import axial

    with pytest.raises(TypeError, match="mrope_section must be a sequence of integers"):
        axial.mrope_components("211")


def test_axial_default_split_needs_equal_even_groups():
    """6 features over 2 axes: 3 each, odd: refused (no pairs to rotate)."""
    with pytest.raises(ValueError, match="cannot be split into 2 equal even groups"):
        rope.apply_axial(np.ones((1, 6)), np.zeros((1, 2)), layout="half")


def test_axial_dims_may_use_every_feature():
    """axis_dims summing to x.shape[-1]: group 0 (2 features) rotated by axis 0, group 1 (4) by axis 1."""
    x = _x((3, 6), 9)
    pos = np.array([[1.0, 2.0], [3.0, 0.0], [7.0, 5.0]])
    got = rope.apply_axial(x, pos, layout="half", axis_dims=[2, 4])
    np.testing.assert_allclose(got[:, :2], rope.apply(x[:, :2], pos[:, 0], layout="half"), atol=1e-14)
    np.testing.assert_allclose(got[:, 2:], rope.apply(x[:, 2:], pos[:, 1], layout="half"), atol=1e-14)


def test_mrope_default_is_not_interleaved_and_inverse_undoes():
    x = _x((4, 8), 10)
    pos = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 1.0, 0.0, 9.0], [2.0, 8.0, 4.0, 1.0]])
    got = rope.apply_mrope(x, pos, mrope_section=[2, 1, 1])
    np.testing.assert_array_equal(got, rope.apply_mrope(x, pos, mrope_section=[2, 1, 1], interleaved=False))
    assert not np.allclose(got, rope.apply_mrope(x, pos, mrope_section=[2, 1, 1], interleaved=True))
    back = rope.apply_mrope(got, pos, mrope_section=[2, 1, 1], inverse=True)
    np.testing.assert_allclose(back, x, atol=1e-13)
