"""JAX without x64 keeps the float64-phase promise outside jit; MLX arrays are refused or read exactly."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pemath import PrecisionWarning, rope
from pemath.testing import assert_rope_close

X = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
POS = np.array([0, 300_000, 600_000, 900_001])  # float32 phases are off by ~1e-2 rad here


@pytest.fixture
def jax():
    jax = pytest.importorskip("jax", reason="JAX is optional (pip install jax)")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)  # these tests are about JAX's default config
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


def test_jax_eager_without_x64_is_computed_in_float64_on_the_host(jax):
    jnp = jax.numpy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = rope.apply(jnp.asarray(X), jnp.asarray(POS), layout="half")
        c, s = rope.cos_sin(jnp.asarray(POS), 8, layout="interleaved")
    assert isinstance(y, jax.Array) and y.dtype == jnp.float32
    assert np.array_equal(np.asarray(y), rope.apply(X, POS, layout="half"))  # same bits as NumPy float32
    c64, s64 = rope.cos_sin(POS, 8, layout="interleaved")
    assert np.array_equal(np.asarray(c), c64.astype(np.float32)) and np.array_equal(np.asarray(s), s64.astype(np.float32))
    spec = rope.Spec("half", head_dim=8, mrope_section=[2, 1, 1])
    pid = jnp.asarray(np.stack([POS, POS // 2, POS % 7]))
    assert np.array_equal(np.asarray(rope.apply(jnp.asarray(X), pid, spec=spec)),
                          rope.apply(X, np.asarray(pid), spec=spec))
    with pytest.raises(TypeError, match="out is not supported for JAX"):
        rope.apply(jnp.asarray(X), jnp.asarray(POS), layout="half", out=jnp.zeros_like(jnp.asarray(X)))


def test_jax_jit_needs_concrete_positions_and_says_phases_are_float32(jax):
    jnp = jax.numpy
    with pytest.raises(TypeError, match="positions is traced"):
        jax.jit(lambda a, p: rope.apply(a, p, layout="half"))(jnp.asarray(X), jnp.asarray(POS))
    pos = jnp.asarray(POS)
    f = jax.jit(lambda a: rope.apply(a, pos, layout="half"))
    with pytest.warns(PrecisionWarning, match="inside a traced function such as jax.jit"):
        z = np.asarray(f(jnp.asarray(X)))
    ref = rope.apply(X.astype(np.float64), POS, layout="half")
    err = np.abs(z - ref).max()
    bound = 4 * 2.0**-24 * POS.max() * 2 * np.abs(X).max()  # float32 phase error, times the pair size
    assert 1e-6 < err < bound  # float32 phases: measurably worse than float64, and as bad as predicted


def test_mlx_arrays_are_refused_by_the_kernels_and_read_exactly_by_the_oracle():
    mx = pytest.importorskip("mlx.core", reason="MLX is optional (pip install 'mlx[cpu]')")
    with pytest.raises(TypeError, match=r"x is an MLX array.*numpy\.array\(x\)"):
        rope.apply(mx.array(X), mx.array(POS), layout="half")
    with pytest.raises(TypeError, match="MLX"):
        rope.cos_sin(mx.array(POS), 8, layout="half")
    y = rope.apply(X, POS[:4] % 100, layout="half")
    assert_rope_close(mx.array(y), mx.array(X), POS[:4] % 100, layout="half")
    assert_rope_close(mx.array(y).astype(mx.bfloat16), X, POS[:4] % 100, layout="half")
    wrong = mx.array(rope.apply(X, POS[:4] % 100 + 1, layout="half"))
    with pytest.raises(AssertionError, match=r"shifted by \+1"):
        assert_rope_close(wrong, X, POS[:4] % 100, layout="half")


def test_mlx_outputs_are_read_by_every_assert():
    """The table asserts read MLX outputs too (their docstrings say so), and still name a wrong one."""
    mx = pytest.importorskip("mlx.core", reason="MLX is optional (pip install 'mlx[cpu]')")
    from pemath import alibi, sinusoidal, t5
    from pemath.testing import assert_alibi_close, assert_sinusoidal_close, assert_t5_buckets_equal

    pos = np.arange(12)
    assert_sinusoidal_close(mx.array(sinusoidal.encode(pos, 16, convention="concat", dtype=np.float32)), pos, 16,
                            convention="concat")
    with pytest.raises(AssertionError, match=r"shifted by \+1"):
        assert_sinusoidal_close(mx.array(sinusoidal.encode(pos + 1, 16, convention="concat", dtype=np.float32)), pos,
                                16, convention="concat")
    assert_alibi_close(mx.array(alibi.bias(8, 4, 4, form="causal", dtype=np.float32)), 8, 4, 4, form="causal")
    with pytest.raises(AssertionError, match="sign"):
        assert_alibi_close(-mx.array(alibi.bias(8, 4, 4, form="symmetric", dtype=np.float32)), 8, 4, 4,
                           form="symmetric")
    rel = np.arange(-200, 200)
    assert_t5_buckets_equal(mx.array(t5.bucket(rel)), rel)
