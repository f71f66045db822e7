"""RoPE's identities, on every backend, for both layouts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope, scaling

from .conftest import to_np

LAYOUTS = ["interleaved", "half"]
dims = st.sampled_from([2, 4, 6, 8, 10, 64, 96])
positions = st.integers(min_value=-20000, max_value=20000)
layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**32 - 1)

# float64 everywhere below: a phase p*theta of size P is computed with absolute error
# <= P * 2**-52 (one rounding of the product; theta is correctly rounded), so
# cos/sin, and the rotated features, are off by at most ~ (P + 2) * 2**-52 * |x|.
# 64 * that covers the sums in a d <= 96 dot product.
U64 = 2.0**-52


def _tol(p: float, scale: float) -> float:
    return 64 * (abs(p) + 2) * U64 * scale


def _rand(seed, shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@given(dim=dims, m=positions, n=positions, layout=layouts, seed=seeds)
def test_relative_inner_product(dim, m, n, layout, seed):
    q, k = _rand(seed, (2, dim))
    lhs = rope.apply(q, m, layout=layout) @ rope.apply(k, n, layout=layout)
    rhs = q @ rope.apply(k, n - m, layout=layout)
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert abs(lhs - rhs) <= _tol(abs(m) + abs(n), scale)


@given(dim=dims, m=positions, layout=layouts, seed=seeds)
def test_norm_preserved_and_inverse_undoes(dim, m, layout, seed):
    x = _rand(seed, (3, dim))
    y = rope.apply(x, m, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=_tol(m, 1.0))
    back = rope.apply(y, m, layout=layout, inverse=True)
    assert np.max(np.abs(back - x)) <= _tol(m, np.max(np.abs(x)))


@given(dim=dims, m=st.floats(-5000, 5000, allow_nan=False), layout=layouts, seed=seeds)
def test_matrix_form_equals_elementwise(dim, m, layout, seed):
    x = _rand(seed, (dim,))
    R = rope.matrix(m, dim, layout=layout)
    assert np.max(np.abs(R @ x - rope.apply(x, m, layout=layout))) <= _tol(m, np.abs(x).sum())


@given(dim=dims, m=positions, seed=seeds)
def test_layouts_are_conjugate_by_the_permutation(dim, m, seed):
    x = _rand(seed, (dim,))
    via_half = rope.apply(rope.convert_layout(x, src="interleaved", dst="half"), m, layout="half")
    via_inter = rope.convert_layout(rope.apply(x, m, layout="interleaved"), src="interleaved", dst="half")
    np.testing.assert_array_equal(via_half, via_inter)  # same arithmetic, same order: bit-identical
    back = rope.convert_layout(rope.convert_layout(x, src="interleaved", dst="half"), src="half", dst="interleaved")
    np.testing.assert_array_equal(back, x)


@given(dim=dims, m=positions, layout=layouts, seed=seeds)
def test_complex_form_equals_real_form(dim, m, layout, seed):
    x = _rand(seed, (2, dim))
    z = rope.apply_complex(rope.to_complex(x, layout=layout), m)
    out = rope.from_complex(z, layout=layout)
    assert np.max(np.abs(out - rope.apply(x, m, layout=layout))) <= _tol(m, np.max(np.abs(x)))
    cis = rope.freqs_cis([m], dim)[0]
    assert np.max(np.abs(rope.to_complex(x, layout=layout) * cis - z)) <= _tol(m, np.max(np.abs(x)))


@given(
    n_heads=st.integers(1, 4), group=st.sampled_from([1, 2]), head_dim=st.sampled_from([2, 4, 8]),
    m=positions, n=positions, seed=seeds,
)
def test_meta_to_hf_weight_permutation_keeps_scores(n_heads, group, head_dim, m, n, seed):
    """Meta weights + interleaved RoPE give the same q·k as HF-permuted weights + half RoPE."""
    n_kv = n_heads
    n_q = n_heads * group  # grouped-query attention: group query heads per kv head
    d_in = 6
    rng = np.random.default_rng(seed)
    wq, wk = rng.standard_normal((n_q * head_dim, d_in)), rng.standard_normal((n_kv * head_dim, d_in))
    bq = rng.standard_normal(n_q * head_dim)
    h_q, h_k = rng.standard_normal((2, d_in))
    wq2, wk2 = rope.permute_qk_weights(wq, wk, n_heads=n_q, n_kv_heads=n_kv)
    bq2 = rope.permute_qk_weight(bq, n_heads=n_q)

    def scores(wq_, wk_, bq_, layout):
        q = (wq_ @ h_q + bq_).reshape(n_q, head_dim)
        k = (wk_ @ h_k).reshape(n_kv, head_dim)
        q = rope.apply(q, m, layout=layout)
        k = rope.apply(k, n, layout=layout)
        return np.einsum("gd,gd->g", q, np.repeat(k, group, axis=0))

    a = scores(wq, wk, bq, "interleaved")
    b = scores(wq2, wk2, bq2, "half")
    scale = np.abs(wq).sum() * np.abs(wk).sum() * 10
    assert np.max(np.abs(a - b)) <= _tol(abs(m) + abs(n), scale)
    wq3, wk3 = rope.permute_qk_weights(wq2, wk2, n_heads=n_q, n_kv_heads=n_kv, src="half", dst="interleaved")
    np.testing.assert_array_equal(wq3, wq)
    np.testing.assert_array_equal(wk3, wk)


def test_hand_computed_values():
    # d = 2: one pair, theta = 1; position m rotates (1, 0) to (cos m, sin m).
    for layout in LAYOUTS:
        np.testing.assert_array_equal(rope.apply(np.array([1.0, 0.0]), 3, layout=layout), [math.cos(3), math.sin(3)])
    # d = 4, base 100: theta = (1, 0.1); interleaved pairs (0,1), (2,3); half pairs (0,2), (1,3).
    x = np.array([1.0, 2.0, 3.0, 4.0])
    c0, s0, c1, s1 = math.cos(2), math.sin(2), math.cos(0.2), math.sin(0.2)
    inter = [1 * c0 - 2 * s0, 2 * c0 + 1 * s0, 3 * c1 - 4 * s1, 4 * c1 + 3 * s1]
    half = [1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1]
    np.testing.assert_allclose(rope.apply(x, 2, layout="interleaved", base=100.0), inter, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rope.apply(x, 2, layout="half", base=100.0), half, rtol=0, atol=1e-15)
    assert not np.allclose(inter, half)


def test_inv_freq_is_correctly_rounded():
    import mpmath

    f = rope.inv_freq(128, base=500000.0)
    with mpmath.workdps(50):
        for i in (0, 1, 17, 63):
            exact = mpmath.mpf(500000) ** (-mpmath.mpf(2 * i) / 128)
            assert float(exact) == f[i]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_backends_agree_with_numpy(xp, layout):
    x = _rand(0, (2, 3, 5, 12))
    pos = np.arange(5) * 997
    expected = rope.apply(x, pos, layout=layout, rotary_dim=8)
    out = rope.apply(xp.asarray(x), xp.asarray(pos), layout=layout, rotary_dim=8)
    assert type(out) is type(xp.asarray(x))
    c, s = rope.cos_sin(xp.asarray(pos), 8, layout=layout)
    c0, s0 = rope.cos_sin(pos, 8, layout=layout)
    if xp.__name__ == "cupy":
        # CUDA's cos and sin are not glibc's (2 ulp at most, CUDA's math docs) and the fused kernel may round the
        # phase p * theta once more differently (FMA): one ulp of the largest phase plus 2 ulp of the result each
        from pemath.testing import assert_rope_close

        assert_rope_close(to_np(out), x, pos, layout=layout, rotary_dim=8)
        atol = 2 * float(np.spacing(float(pos.max()))) + 4 * 2.0**-53
        np.testing.assert_allclose(to_np(c), c0, rtol=0, atol=atol)
        np.testing.assert_allclose(to_np(s), s0, rtol=0, atol=atol)
        return
    np.testing.assert_array_equal(to_np(out), expected)
    np.testing.assert_array_equal(to_np(c), c0)
    np.testing.assert_array_equal(to_np(s), s0)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_input_is_rounded_once(layout, dtype):
    """float64 phases and products, one rounding at the end: equal to the float64 result cast."""
    x = _rand(1, (4, 7, 64), dtype)
    pos = np.arange(7) * 4099
    out = rope.apply(x, pos, layout=layout)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, rope.apply(x.astype(np.float64), pos, layout=layout).astype(dtype))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_partial_rotary_passes_the_rest_through(layout):
    x = _rand(2, (3, 10)).astype(np.float32)
    out = rope.apply(x, [5, 6, 7], layout=layout, rotary_dim=4)
    np.testing.assert_array_equal(out[:, 4:], x[:, 4:])
    np.testing.assert_array_equal(out[:, :4], rope.apply(x[:, :4], [5, 6, 7], layout=layout))
    # frequencies over rotary_dim, not over the head dim
    assert not np.allclose(out[:, :4], rope.apply(x, [5, 6, 7], layout=layout)[:, :4])


@pytest.mark.parametrize(
    "x_shape, pos_shape",
    [((2, 4, 6, 8), (6,)), ((2, 4, 6, 8), (2, 1, 6)), ((2, 6, 4, 8), (2, 6, 1)), ((6, 8), (6,)), ((8,), ())],
)
def test_positions_broadcast_over_any_axis_order(x_shape, pos_shape):
    x = _rand(3, x_shape)
    pos = np.arange(int(np.prod(pos_shape))).reshape(pos_shape) * 3 + 1
    out = rope.apply(x, pos, layout="half")
    full = np.broadcast_to(pos, x_shape[:-1])
    for idx in np.ndindex(*x_shape[:-1]):
        np.testing.assert_array_equal(out[idx], rope.apply(x[idx], int(full[idx]), layout="half"))


def test_fractional_positions_are_not_truncated():
    x = _rand(4, (8,))
    a = rope.apply(x, 2.5, layout="interleaved")
    assert not np.allclose(a, rope.apply(x, 2, layout="interleaved"))
    np.testing.assert_allclose(a, rope.matrix(2.5, 8, layout="interleaved") @ x, atol=1e-14)
    # Linear scaling by s at position p is RoPE at p / s.
    np.testing.assert_allclose(
        rope.apply(x, 5, layout="interleaved", scaling=scaling.Linear(2.0)),
        rope.apply(x, 2.5, layout="interleaved"),
        atol=1e-14,
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_attention_factor_multiplies_rotated_features_only(layout):
    s = scaling.YaRN(4.0, 64)
    x = _rand(5, (2, 12))
    out = rope.apply(x, [3, 9], layout=layout, rotary_dim=8, scaling=s)
    plain_freq = rope.apply(x, [3, 9], layout=layout, rotary_dim=8, scaling=scaling.YaRN(4.0, 64, attention_factor=1.0))
    np.testing.assert_allclose(out[:, :8], plain_freq[:, :8] * s.attention_factor, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(out[:, 8:], x[:, 8:])
    c, _ = rope.cos_sin([0], 8, layout=layout, scaling=s)
    np.testing.assert_allclose(c, s.attention_factor, rtol=1e-15)


def test_cos_sin_layouts():
    c, s = rope.cos_sin([2], 6, layout="half", base=9.0)
    c2, s2 = rope.cos_sin([2], 6, layout="interleaved", base=9.0)
    f = rope.inv_freq(6, base=9.0)
    np.testing.assert_array_equal(c[0], np.cos(2 * np.concatenate([f, f])))
    np.testing.assert_array_equal(s2[0], np.sin(2 * np.repeat(f, 2)))
    np.testing.assert_array_equal(c2[0], np.cos(2 * np.repeat(f, 2)))
    assert s.shape == (1, 6)
    c3, _ = rope.cos_sin(np.arange(3), 6, layout="half", dtype=np.float32)
    assert c3.dtype == np.float32


def test_ml_dtypes_bfloat16_is_a_floating_input():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _rand(6, (3, 8)).astype(ml_dtypes.bfloat16)
    out = rope.apply(x, [1, 2, 3], layout="half")
    assert out.dtype == ml_dtypes.bfloat16
    expected = rope.apply(x.astype(np.float64), [1, 2, 3], layout="half").astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float64), expected.astype(np.float64))
