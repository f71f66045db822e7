"""Every bad argument to the RoPE entry points gets a clear error that names it."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import rope, scaling

X = np.zeros((2, 3, 8))
POS = np.arange(3)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(layout="interleavd"), ValueError, r"layout must be one of 'interleaved', 'half', got 'interleavd'"),
        (dict(layout=None), TypeError, "layout is required"),
        (dict(layout="half", base=0.0), ValueError, "base must be > 0, got 0.0"),
        (dict(layout="half", base=-5), ValueError, "base must be > 0"),
        (dict(layout="half", base=float("nan")), ValueError, "base must be finite"),
        (dict(layout="half", base=float("inf")), ValueError, "base must be finite"),
        (dict(layout="half", base="10000"), TypeError, "base must be a real number"),
        (dict(layout="half", rotary_dim=3), ValueError, r"rotary_dim must be an even integer in \[2, 8\].*got 3"),
        (dict(layout="half", rotary_dim=0), ValueError, "rotary_dim must be an even integer"),
        (dict(layout="half", rotary_dim=-2), ValueError, "rotary_dim must be an even integer"),
        (dict(layout="half", rotary_dim=10), ValueError, "rotary_dim must be an even integer"),
        (dict(layout="half", rotary_dim=4.0), TypeError, "rotary_dim must be an integer"),
        (dict(layout="half", scaling="yarn"), TypeError, "scaling must be None or a pemath.scaling"),
        (dict(layout="half", seq_len=0), ValueError, "seq_len must be >= 1"),
        (dict(layout="half", seq_len=2.5), TypeError, "seq_len must be an integer"),
        (dict(layout="half", inverse=1), TypeError, "inverse must be True or False"),
    ],
)
def test_apply_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rope.apply(X, POS, **kwargs)


def test_layout_has_no_default():
    with pytest.raises(TypeError, match="layout is required"):
        rope.apply(X, POS)


def test_odd_feature_dim():
    with pytest.raises(ValueError, match="x.shape\\[-1\\] must be even for RoPE, got 7"):
        rope.apply(np.zeros((3, 7)), POS, layout="half")
    # an odd head dim is fine when only an even leading slice rotates
    out = rope.apply(np.ones((3, 7)), POS, layout="half", rotary_dim=4)
    np.testing.assert_array_equal(out[:, 4:], 1.0)
    with pytest.raises(ValueError, match="dim must be even for RoPE, got 63"):
        rope.inv_freq(63)


@pytest.mark.parametrize(
    "positions, exc, match",
    [
        (np.array([0.0, np.nan, 2.0]), ValueError, r"positions must be finite, got 1 NaN or infinite"),
        (np.array([0.0, np.inf, -np.inf]), ValueError, r"positions must be finite, got 2 NaN"),
        (np.arange(4), ValueError, r"positions of shape \(4,\) does not broadcast against x.shape\[:-1\] = \(2, 3\)"),
        (np.zeros((5, 2, 3)), ValueError, "does not broadcast"),
        ("0 1 2", TypeError, "positions must be integers or real numbers"),
        (["a", "b", "c"], TypeError, "positions must be integers or real numbers"),
        (np.array([True, False, True]), TypeError, "positions must have an integer or real floating dtype"),
        ([True, False, True], TypeError, "positions must be integers or real numbers"),
        (np.array([1 + 2j, 0, 0]), TypeError, "positions must have an integer or real floating dtype"),
        (None, TypeError, "positions must be integers"),
        (np.array([0, 2**60, 1]), ValueError, r"beyond 2\*\*53"),
    ],
)
def test_bad_positions(positions, exc, match):
    with pytest.raises(exc, match=match):
        rope.apply(X, positions, layout="half")


def test_bad_x():
    with pytest.raises(TypeError, match="x must be an array"):
        rope.apply([[1.0, 2.0]], 0, layout="half")
    with pytest.raises(TypeError, match="x must have a real floating dtype"):
        rope.apply(np.zeros((2, 4), dtype=np.int64), 0, layout="half")
    with pytest.raises(TypeError, match="x must have a real floating dtype"):
        rope.apply(np.zeros((2, 4), dtype=np.complex128), 0, layout="half")
    with pytest.raises(ValueError, match="at least one axis"):
        rope.apply(np.float64(1.0) * np.ones(()), 0, layout="half")


def test_mixed_backends_are_refused():
    xs = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="positions .* from numpy, but x is a array_api_strict array"):
        rope.apply(xs.asarray(X), POS, layout="half")


def test_other_entry_points_validate():
    with pytest.raises(ValueError, match="dim must be >= 2"):
        rope.inv_freq(0)
    with pytest.raises(TypeError, match="dim must be an integer"):
        rope.inv_freq(8.0)
    with pytest.raises(ValueError, match="layout must be one of"):
        rope.cos_sin([0, 1], 8, layout="neox")
    with pytest.raises(TypeError, match="layout is required"):
        rope.matrix(0, 8)
    with pytest.raises(ValueError, match="position must be finite"):
        rope.matrix(float("nan"), 8, layout="half")
    with pytest.raises(ValueError, match="src must be one of|layout must be one of"):
        rope.convert_layout(np.zeros(8), src="gptj", dst="half")
    with pytest.raises(ValueError, match="n_heads=3"):
        rope.permute_qk_weight(np.zeros((8, 4)), n_heads=3)
    with pytest.raises(ValueError, match="n_heads must be >= 1"):
        rope.permute_qk_weight(np.zeros((8, 4)), n_heads=0)
    with pytest.raises(TypeError, match="n_heads must be an integer"):
        rope.permute_qk_weight(np.zeros((8, 4)), n_heads=2.0)
    with pytest.raises(ValueError, match="n_kv_heads must be >= 1"):
        rope.permute_qk_weights(np.zeros((8, 4)), np.zeros((8, 4)), n_heads=2, n_kv_heads=0)
    with pytest.raises(TypeError, match="z must have a complex dtype"):
        rope.apply_complex(np.zeros(4), 0)
    with pytest.raises(ValueError, match="LongRoPE|short_factor"):
        rope.inv_freq(8, scaling=scaling.LongRoPE([1.0] * 3, [1.0] * 3, 4096, factor=2.0))


def test_a_grouped_query_k_permuted_with_the_query_head_count_is_refused():
    """Issue 23: permute_qk_weight(s) accepted a GQA k permuted with n_heads (it changes every score:
    failures.gqa_wrong_heads); the head dim, given or read from wq, now tells."""
    head_dim, n_q, n_kv = 4, 8, 2
    wq, wk = np.zeros((n_q * head_dim, 3)), np.zeros((n_kv * head_dim, 3))
    with pytest.raises(ValueError, match=r"not this projection's head count \(2 heads of 4 would fit"):
        rope.permute_qk_weight(wk, n_heads=n_q, head_dim=head_dim)
    with pytest.raises(ValueError, match="n_kv_heads was left out"):
        rope.permute_qk_weights(wq, wk, n_heads=n_q)
    q2, k2 = rope.permute_qk_weights(wq, wk, n_heads=n_q, n_kv_heads=n_kv)
    assert q2.shape == wq.shape and k2.shape == wk.shape
    assert np.array_equal(rope.permute_qk_weight(np.arange(8), n_heads=2, head_dim=4),
                          rope.permute_qk_weight(np.arange(8), n_heads=2))
    with pytest.raises(ValueError, match="not a multiple of head_dim=3"):
        rope.permute_qk_weight(np.arange(8), n_heads=2, head_dim=3)
    for bad in (0, 1, 2.0, "4"):
        with pytest.raises((TypeError, ValueError), match="head_dim"):
            rope.permute_qk_weight(np.arange(8), n_heads=2, head_dim=bad)


def test_a_spec_passed_as_dim_says_spec_is_a_keyword():
    from pemath import rope

    with pytest.raises(TypeError, match=r"pass a Spec as spec= \(keyword\)"):
        rope.inv_freq(rope.Spec("half", rotary_dim=8))


def test_positions_along_seq_of_a_heads_layout_say_how_to_reshape():
    import numpy as np

    from pemath.testing import assert_rope_close

    x = np.zeros((1, 64, 2, 8), np.float32)  # (batch, seq, heads, dim)
    with pytest.raises(ValueError, match=r"if axis 1 of x is the sequence, pass positions with shape \(64, 1\) "
                                         r"\(e\.g\. positions\[:, None\]\)"):
        assert_rope_close(x, x, np.arange(64), layout="half")
