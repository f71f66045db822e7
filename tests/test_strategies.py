"""pemath.testing.strategies: hypothesis strategies that hit what breaks RoPE kernels."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from pemath import positions as pm_positions
from pemath import rope
from pemath.scaling import DynamicNTK, LongRoPE
from pemath.testing import strategies as pst


@settings(max_examples=80)
@given(cfg=pst.rope_configs(), pos=pst.position_arrays(3))
def test_configs_are_accepted_by_rope_apply(cfg, pos):
    assert cfg.layout in ("interleaved", "half")
    assert cfg.head_dim % 2 == 0 and 2 <= cfg.rotary_dim <= cfg.head_dim and cfg.rotary_dim % 2 == 0
    x = np.linspace(-1.0, 1.0, 3 * cfg.head_dim).reshape(3, cfg.head_dim)
    y = rope.apply(x, pos, **cfg.kwargs())
    assert y.shape == x.shape and np.all(np.isfinite(y))
    np.testing.assert_array_equal(y[:, cfg.rotary_dim :], x[:, cfg.rotary_dim :])
    # rotation (times the attention factor) keeps each pair's norm
    a = 1.0 if cfg.scaling is None else cfg.scaling.attention_factor
    r = cfg.rotary_dim
    pairs = (lambda v: (v[:, : r // 2], v[:, r // 2 : r])) if cfg.layout == "half" else (
        lambda v: (v[:, 0:r:2], v[:, 1:r:2]))
    (xa, xb), (ya, yb) = pairs(x), pairs(y)
    np.testing.assert_allclose(np.hypot(ya, yb), a * np.hypot(xa, xb), rtol=1e-12, atol=1e-15)


@settings(max_examples=60)
@given(st.data())
def test_scalings_are_valid_for_their_rotary_dim(data):
    r = data.draw(pst.head_dims(max_dim=256))
    s = data.draw(pst.scalings(r))
    f = rope.inv_freq(r, base=data.draw(pst.bases()), scaling=s)
    assert f.shape == (r // 2,) and np.all(np.isfinite(f)) and np.all(f >= 0)
    assert s.attention_factor > 0


@pytest.mark.parametrize("kind", pst.SCALINGS)
def test_every_scaling_kind_is_reachable(kind):
    assert {s.rope_type for s in draws(pst.scalings(64, kinds=(kind,)), 5)} == {kind}


def draws(strategy, n):
    """``n`` generated examples (no shrinking, fixed seed): enumeration instead of a slow find."""
    out = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        out.append(value)

    collect()
    return out


def test_configs_cover_what_breaks_kernels():
    cfgs = draws(pst.rope_configs(), 300)
    seq = [c for c in cfgs if isinstance(c.scaling, (DynamicNTK, LongRoPE)) and c.seq_len is not None]
    assert any(c.seq_len > c.scaling.original_max_position for c in seq)
    assert any(c.seq_len <= c.scaling.original_max_position for c in seq)
    assert any(c.rotary_dim < c.head_dim for c in cfgs)
    assert any(c.head_dim & (c.head_dim - 1) for c in cfgs)  # not a power of two
    assert {c.layout for c in cfgs} == {"interleaved", "half"}
    assert len({type(c.scaling).__name__ for c in cfgs}) == len(pst.SCALINGS) + 1  # every variant, and None
    assert {c.layout for c in draws(pst.rope_configs(layouts=("half",)), 20)} == {"half"}
    assert all(c.scaling is None for c in draws(pst.rope_configs(scaling=False), 20))


def test_head_dims_include_non_powers_of_two_and_real_ones():
    for d in (72, 80, 96, 112, 160, 192):
        assert find(pst.head_dims(), lambda v, d=d: v == d) == d
    odd_power = find(pst.head_dims(min_dim=300, max_dim=400), lambda v: v & (v - 1) != 0)
    assert 300 <= odd_power <= 400 and odd_power % 2 == 0
    assert find(pst.head_dims(min_dim=3, max_dim=5), lambda v: True) == 4


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float8_e4m3fn"])
def test_positions_hit_the_dtype_exactness_boundary(dtype):
    n = pm_positions.max_exact_position(dtype)
    top = min(2 * n + 10, 2**25)
    edges = pst.boundary_positions(dtype, max_position=top)
    assert {n - 1, n, n + 1, n + 2} <= set(edges)
    for target in (n - 1, n, n + 1):
        assert find(pst.positions(dtype=dtype, max_position=top), lambda p, t=target: p == t) == target
    # the first integer the dtype cannot hold is one of them: it really rounds away
    if dtype in ("float16", "float32"):
        assert float(np.array(n + 1).astype(dtype)) != n + 1


def test_boundary_positions_known_values():
    assert pst.boundary_positions("bfloat16", max_position=20) == [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 20]
    assert {2**24 - 1, 2**24, 2**24 + 1, 2**24 + 2} <= set(pst.boundary_positions("float32", max_position=2**25))
    assert max(pst.boundary_positions("float16")) == 131071


@settings(max_examples=40)
@given(p=pst.positions(dtype="float16", max_position=5000, min_position=100))
def test_positions_stay_in_range(p):
    assert 100 <= p <= 5000 and isinstance(p, int)


@settings(max_examples=30)
@given(a=pst.position_arrays((2, 3), dtype="bfloat16", max_position=1000))
def test_position_arrays(a):
    assert a.shape == (2, 3) and a.dtype == np.int64 and a.min() >= 0 and a.max() <= 1000


@settings(max_examples=30)
@given(st.data())
def test_activations(data):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = data.draw(st.sampled_from(["float32", "float16", "bfloat16", "float64"]))
    x = data.draw(pst.activations((2, 8), dtype=dtype, max_magnitude=4.0))
    want = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    assert x.shape == (2, 8) and x.dtype == want
    v = x.astype(np.float64)
    assert np.all(np.isfinite(v)) and np.all(np.abs(v) <= 4.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="min_dim"):
        pst.head_dims(min_dim=10, max_dim=4)
    with pytest.raises(TypeError, match="max_dim"):
        pst.head_dims(max_dim=64.0)
    with pytest.raises(ValueError, match="max_position"):
        pst.positions(max_position=-1)
    with pytest.raises(ValueError, match="min_position"):
        pst.positions(min_position=10, max_position=5)
    with pytest.raises(ValueError, match="dtype"):
        pst.positions(dtype="float7")
    with pytest.raises(ValueError, match="rotary_dim"):
        pst.scalings(3)
    with pytest.raises(ValueError, match="kinds"):
        pst.scalings(8, kinds=("rope2",))
    with pytest.raises(ValueError, match="NTK"):
        pst.scalings(2, kinds=("ntk", "dynamic"))
    with pytest.raises(ValueError, match="layouts"):
        pst.rope_configs(layouts=("diagonal",))
    with pytest.raises(TypeError, match="shape"):
        pst.position_arrays("3")
    with pytest.raises(ValueError, match="dtype"):
        pst.activations(3, dtype="int8")
    with pytest.raises(ValueError, match="max_magnitude"):
        pst.activations(3, max_magnitude=-1.0)


def test_importing_pemath_testing_does_not_import_hypothesis():
    code = "import sys, pemath.testing; assert 'hypothesis' not in sys.modules, 'hypothesis imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
