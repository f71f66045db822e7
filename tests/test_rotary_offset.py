"""Spec.rotary_offset: the rotated slice starts inside the head (llama.cpp's ggml_rope_set_offset), everywhere."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import rope
from pemath.rope import xpos
from pemath.testing import (assert_rope_backward_close, assert_rope_close, check_rope_kernel, pipelines,
                            rope_tolerance)

SPEC = rope.Spec("interleaved", head_dim=24, rotary_dim=8, rotary_offset=16)
RNG = np.random.default_rng(7)
POS = np.arange(12)


def _manual(x, pos, spec, o, r):
    y = np.array(x, dtype=np.float64, copy=True)
    y[..., o:o + r] = rope.apply(np.asarray(x[..., o:o + r], dtype=np.float64), pos,
                                 spec=spec.replace(rotary_offset=0, head_dim=None, rotary_dim=r))
    return y


def test_apply_rotates_only_the_slice_at_the_offset():
    x = RNG.standard_normal((2, 12, 24))
    y = rope.apply(x, POS, spec=SPEC)
    np.testing.assert_array_equal(y, _manual(x, POS, SPEC, 16, 8))
    np.testing.assert_array_equal(y[..., :16], x[..., :16])
    out = np.empty_like(x)
    assert rope.apply(x, POS, spec=SPEC, out=out) is out and np.array_equal(out, y)
    np.testing.assert_allclose(rope.apply(y, POS, spec=SPEC, inverse=True), x, atol=1e-12)


def test_without_rotary_dim_the_slice_runs_to_the_end():
    s = rope.Spec("half", rotary_offset=4)
    x = RNG.standard_normal((12, 16))
    assert s.rotary_dim_for(16) == 12
    np.testing.assert_array_equal(rope.apply(x, POS, spec=s), _manual(x, POS, s, 4, 12))
    assert rope.Spec("half", head_dim=16, rotary_offset=4).rotary_dim == 12


def test_the_dense_matrix_and_xpos_place_the_slice_too():
    x = RNG.standard_normal(24)
    np.testing.assert_allclose(rope.matrix(5.0, spec=SPEC) @ x, rope.apply(x, 5, spec=SPEC), atol=1e-14)
    y = xpos.apply(x[None], [5], role="key", spec=SPEC)
    np.testing.assert_array_equal(y[0, :16], x[:16])
    inner = SPEC.replace(rotary_offset=0, head_dim=None)
    np.testing.assert_allclose(y[0, 16:], xpos.apply(x[None, 16:], [5], role="key", spec=inner)[0], atol=1e-15)


def test_the_oracle_accepts_the_honest_kernel_and_names_the_slice_taken_at_zero():
    x = RNG.standard_normal((12, 24)).astype(np.float32)
    assert_rope_close(rope.apply(x, POS, spec=SPEC).astype(np.float32), x, POS, spec=SPEC)
    tol = rope_tolerance(x, POS, spec=SPEC)
    assert np.all(tol[:, :16] <= 2.0**-24 * np.abs(x[:, :16]) + 1e-30)  # the passed-through features: one rounding
    with pytest.raises(AssertionError) as info:
        assert_rope_close(rope.apply(x, POS, spec=SPEC.replace(rotary_offset=0)), x, POS, spec=SPEC)
    msg = str(info.value)
    assert "features 16..23 rotated" in msg
    assert "the rotated slice taken at features 0..7 instead of 16..23 (rotary_offset=16 ignored)" in msg
    with pytest.raises(AssertionError, match=r"shifted by \+1"):
        assert_rope_close(rope.apply(x, POS + 1, spec=SPEC), x, POS, spec=SPEC)


def test_the_worst_element_is_reported_in_xs_own_feature_order():
    x = RNG.standard_normal((12, 24)).astype(np.float32)
    y = rope.apply(x, POS, spec=SPEC).astype(np.float32)
    y[5, 3] += 1.0  # a pass-through feature changed
    with pytest.raises(AssertionError) as info:
        assert_rope_close(y, x, POS, spec=SPEC)
    assert "Worst element (largest error / tolerance) at index (5, 3)" in str(info.value)
    assert "feature 3: outside the rotated slice, passed through" in str(info.value)


def test_backward_check_rope_kernel_and_llama_cpp_with_an_offset():
    dy = RNG.standard_normal((12, 24)).astype(np.float32)
    assert_rope_backward_close(rope.apply(dy, POS, spec=SPEC, inverse=True), dy, POS, spec=SPEC)
    report = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None], spec=SPEC), SPEC, dtypes=("float32",))
    assert report.passed, report
    s = rope.Spec("half", head_dim=192, rotary_dim=64, rotary_offset=128, base=10000.0)  # DeepSeek's rope part
    x = RNG.standard_normal((12, 192)).astype(np.float32)
    y = pipelines.llama_cpp(x, POS * 1000, spec=s)
    np.testing.assert_array_equal(y[:, :128], x[:, :128])
    assert_rope_close(y, x, POS * 1000, spec=s)
    with pytest.raises(ValueError, match="transformers has no rotary offset"):
        pipelines.hf(x, POS, spec=s)


def test_array_api_strict_backend():
    xps = pytest.importorskip("array_api_strict")
    x = RNG.standard_normal((12, 24))
    y = rope.apply(xps.asarray(x), xps.asarray(POS), spec=SPEC)
    np.testing.assert_allclose(np.asarray(y), rope.apply(x, POS, spec=SPEC), atol=1e-15)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"rotary_offset": -1}, TypeError, "rotary_offset must be an integer >= 0"),
    ({"rotary_offset": 1.5}, TypeError, "rotary_offset must be an integer >= 0"),
    ({"rotary_offset": True}, TypeError, "rotary_offset must be an integer >= 0"),
    ({"rotary_offset": 20, "head_dim": 24, "rotary_dim": 8}, ValueError, "exceeds head_dim 24"),
    ({"rotary_offset": 24, "head_dim": 24}, ValueError, "leaves nothing to rotate"),
    ({"rotary_offset": 2, "mrope_section": [2, 2], "rotary_dim": 8}, ValueError, "single-axis RoPE"),
])
def test_bad_offsets_are_refused_with_the_reason(kwargs, error, match):
    with pytest.raises(error, match=match):
        rope.Spec("half", **kwargs)
    with pytest.raises(ValueError, match="leaves nothing to rotate"):
        rope.apply(np.ones((1, 4)), [0], spec=rope.Spec("half", rotary_offset=4))
