"""Axial N-D RoPE and M-RoPE: reduction to RoPE, relative scores, the section patterns, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import rope

from .conftest import to_np

LAYOUTS = ["interleaved", "half"]
layouts = st.sampled_from(LAYOUTS)
seeds = st.integers(0, 2**32 - 1)
coords = st.integers(-500, 500)
U64 = 2.0**-52


def _rand(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _tol(p, scale):
    return 64 * (abs(p) + 2) * U64 * scale


# ----------------------------------------------------------------------------- axial


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("grouping", ["features", "pairs"])
@pytest.mark.parametrize("frequencies", ["per_axis", "strided"])
def test_one_axis_is_rope_exactly(xp, layout, grouping, frequencies):
    x = xp.asarray(_rand(0, (2, 5, 16)))
    p = np.array([0, 3, -7, 1000, 12345])
    got = rope.apply_axial(x, xp.asarray(p[:, None]), layout=layout, grouping=grouping, frequencies=frequencies)
    np.testing.assert_array_equal(to_np(got), to_np(rope.apply(x, xp.asarray(p), layout=layout)))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_feature_groups_are_rope_on_each_block(xp, layout):
    x = xp.asarray(_rand(1, (4, 20)))
    pos = np.array([[1, 2, 3], [40, -5, 6], [0, 0, 0], [7, 800, 9]])
    dims = [8, 4, 6]  # 18 of 20 features rotated, the last 2 pass through
    got = to_np(rope.apply_axial(x, xp.asarray(pos), layout=layout, axis_dims=dims))
    start = 0
    for a, d in enumerate(dims):
        block = rope.apply(x[:, start:start + d], xp.asarray(pos[:, a]), layout=layout)
        np.testing.assert_array_equal(got[:, start:start + d], to_np(block))
        start += d
    np.testing.assert_array_equal(got[:, 18:], to_np(x)[:, 18:])


def test_pairs_grouping_is_interleaved_axial_in_the_half_basis(xp):
    # grouping="pairs" with layout="half" is the interleaved axial RoPE conjugated by the
    # half <-> interleaved permutation (Qwen-VL vision vs FLUX/EVA-02)
    x = xp.asarray(_rand(2, (3, 16)))
    pos = xp.asarray(np.array([[3, 9], [-4, 100], [0, 1]]))
    got = rope.apply_axial(x, pos, layout="half", grouping="pairs")
    via = rope.convert_layout(
        rope.apply_axial(rope.convert_layout(x, src="half", dst="interleaved"), pos, layout="interleaved"),
        src="interleaved", dst="half",
    )
    np.testing.assert_array_equal(to_np(got), to_np(via))
    assert not np.allclose(to_np(got), to_np(rope.apply_axial(x, pos, layout="half", grouping="features")))


@settings(max_examples=40)
@given(n_axes=st.integers(1, 3), layout=layouts, seed=seeds, data=st.data(),
       grouping=st.sampled_from(["features", "pairs"]), frequencies=st.sampled_from(["per_axis", "strided"]))
def test_score_depends_on_per_axis_differences(n_axes, layout, seed, data, grouping, frequencies):
    dim = 8 * n_axes
    q, k = _rand(seed, (2, dim))
    p = np.array(data.draw(st.lists(coords, min_size=n_axes, max_size=n_axes)))
    p2 = np.array(data.draw(st.lists(coords, min_size=n_axes, max_size=n_axes)))
    shift = np.array(data.draw(st.lists(coords, min_size=n_axes, max_size=n_axes)))
    kw = dict(layout=layout, grouping=grouping, frequencies=frequencies)

    def score(a, b):
        return float(rope.apply_axial(q, a, **kw) @ rope.apply_axial(k, b, **kw))

    scale = np.linalg.norm(q) * np.linalg.norm(k)
    big = np.abs(np.concatenate([p, p2, shift])).sum() * 2
    s = score(p, p2)
    assert abs(s - score(p + shift, p2 + shift)) <= _tol(big, scale)
    assert abs(s - float(q @ rope.apply_axial(k, p2 - p, **kw))) <= _tol(big, scale)


def test_axes_are_not_interchangeable():
    q = np.zeros(8)
    q[0] = 1.0  # pair 0 of axis 0 only
    y = rope.apply_axial(q, [1, 0], layout="interleaved")
    z = rope.apply_axial(q, [0, 1], layout="interleaved")
    np.testing.assert_allclose(y[:2], [math.cos(1), math.sin(1)], rtol=1e-15)
    np.testing.assert_array_equal(z, q)  # axis 1 does not touch axis 0's features


def test_strided_frequencies_by_hand():
    # Pixtral: D = 8, two axes; axis 1, pair j has theta = base ** (-2 (2 j + 1) / 8)
    base = 100.0
    m = 3.0
    for j in range(2):
        x = np.zeros(8)
        x[2 + j] = 1.0  # with layout half and grouping pairs, axis 1 owns pairs 2, 3: features (2, 6), (3, 7)
        y = rope.apply_axial(x, [0.0, m], layout="half", base=base, grouping="pairs", frequencies="strided")
        theta = base ** (-2 * (2 * j + 1) / 8)
        assert y[2 + j] == pytest.approx(math.cos(m * theta), rel=1e-14)
        assert y[6 + j] == pytest.approx(math.sin(m * theta), rel=1e-14)
        y2 = rope.apply_axial(x, [0.0, m], layout="half", base=base, grouping="pairs")
        assert y2[6 + j] == pytest.approx(math.sin(m * base ** (-2 * j / 4)), rel=1e-14)


def test_inverse_and_float_positions(xp):
    x = xp.asarray(_rand(5, (6, 12)))
    pos = xp.asarray(_rand(6, (6, 3)) * 50)
    y = rope.apply_axial(x, pos, layout="half")
    back = rope.apply_axial(y, pos, layout="half", inverse=True)
    np.testing.assert_allclose(to_np(back), to_np(x), atol=1e-12)


def test_axial_dtype_and_broadcast(xp):
    x = xp.asarray(_rand(7, (2, 3, 4, 8)), dtype=xp.float32)  # (batch, heads, seq, dim)
    pos = xp.asarray(np.array([[0, 0], [0, 1], [1, 0], [1, 1]]))  # (seq, 2)
    y = rope.apply_axial(x, pos, layout="interleaved")
    assert y.dtype == xp.float32 and tuple(y.shape) == (2, 3, 4, 8)


AX = np.ones((4, 8))
POS = np.zeros((4, 2), dtype=np.int64)


@pytest.mark.parametrize(
    "positions, kwargs, exc, match",
    [
        (POS, dict(), TypeError, "layout"),
        (POS, dict(layout="half", axis_dims=[4, 3]), ValueError, "axis_dims"),
        (POS, dict(layout="half", axis_dims=[4, 4, 2]), ValueError, "axis_dims"),
        (POS, dict(layout="half", axis_dims=[6, 4]), ValueError, "axis_dims"),
        (POS, dict(layout="half", axis_dims=[4, 0]), ValueError, "axis_dims"),
        (POS, dict(layout="half", axis_dims=4), TypeError, "axis_dims"),
        (POS, dict(layout="half", axis_dims=[4.0, 4]), TypeError, "axis_dims"),
        (POS, dict(layout="half", grouping="blocks"), ValueError, "grouping"),
        (POS, dict(layout="half", frequencies="pixel"), ValueError, "frequencies"),
        (POS, dict(layout="half", axis_dims=[4, 2], frequencies="strided"), ValueError, "strided"),
        (POS, dict(layout="half", inverse="no"), TypeError, "inverse"),
        (POS, dict(layout="half", base=0.0), ValueError, "base"),
        (np.zeros((4, 3)), dict(layout="half"), ValueError, "axis_dims"),  # 8 features / 3 axes
        (np.zeros((5, 2)), dict(layout="half"), ValueError, r"positions\[\.\.\., 0\]"),
        (3, dict(layout="half"), ValueError, "positions"),
        (np.zeros((4, 0)), dict(layout="half"), ValueError, "positions"),
        ([[0.0, math.inf]] * 4, dict(layout="half"), ValueError, "positions"),
        ("0", dict(layout="half"), TypeError, "positions"),
    ],
)
def test_axial_bad_arguments(positions, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rope.apply_axial(AX, positions, **kwargs)


# ----------------------------------------------------------------------------- M-RoPE


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("interleaved", [False, True])
def test_mrope_equal_components_is_rope_exactly(xp, layout, interleaved):
    sections = [24, 20, 20] if interleaved else [16, 24, 24]
    x = xp.asarray(_rand(8, (2, 7, 128)))
    p = np.array([0, 1, 5, 77, -3, 4096, 100000])
    pos = xp.asarray(np.stack([p, p, p]))
    got = rope.apply_mrope(x, pos, mrope_section=sections, layout=layout, interleaved=interleaved, base=1e6)
    np.testing.assert_array_equal(to_np(got), to_np(rope.apply(x, xp.asarray(p), layout=layout, base=1e6)))


def test_mrope_partial_rotary_equal_components_is_rope(xp):
    x = xp.asarray(_rand(9, (3, 16)))
    p = np.array([2, 9, 40])
    got = rope.apply_mrope(x, xp.asarray(np.stack([p] * 3)), mrope_section=[2, 1, 1], layout="interleaved",
                           rotary_dim=8)
    np.testing.assert_array_equal(to_np(got), to_np(rope.apply(x, xp.asarray(p), layout="interleaved",
                                                               rotary_dim=8)))


def test_mrope_components_patterns():
    np.testing.assert_array_equal(rope.mrope_components([16, 24, 24]), [0] * 16 + [1] * 24 + [2] * 24)
    # Qwen3-VL: THW THW ... (20 times) then TTTT
    expected = [0, 1, 2] * 20 + [0] * 4
    np.testing.assert_array_equal(rope.mrope_components([24, 20, 20], interleaved=True), expected)
    assert rope.mrope_components([1, 1], interleaved=True).tolist() == [0, 1]


@pytest.mark.parametrize("interleaved, sections", [(False, [16, 24, 24]), (True, [24, 20, 20])])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_mrope_each_index_follows_its_component(xp, interleaved, sections, layout):
    # temporal position m, height = width = 0: the H and W frequencies are not rotated at all,
    # the T ones exactly as RoPE at m
    comp = rope.mrope_components(sections, interleaved=interleaved)
    x = xp.asarray(_rand(10, (3, 128)))
    m = 321
    got = to_np(rope.apply_mrope(x, xp.asarray([m, 0, 0]), mrope_section=sections, layout=layout,
                                 interleaved=interleaved))
    ref = to_np(rope.apply(x, m, layout=layout))
    xs = to_np(x)
    idx = np.arange(64)
    feats = (lambda i: [i, i + 64]) if layout == "half" else (lambda i: [2 * i, 2 * i + 1])
    for i in idx:
        f = feats(i)
        if comp[i] == 0:
            np.testing.assert_array_equal(got[:, f], ref[:, f])
        else:
            np.testing.assert_array_equal(got[:, f], xs[:, f])


@given(seed=seeds, data=st.data(), interleaved=st.booleans(), layout=layouts)
def test_mrope_score_depends_on_component_differences(seed, data, interleaved, layout):
    q, k = _rand(seed, (2, 24))
    draw3 = lambda: np.array(data.draw(st.lists(coords, min_size=3, max_size=3)))  # noqa: E731
    p, p2, s = draw3(), draw3(), draw3()
    kw = dict(mrope_section=[4, 4, 4], layout=layout, interleaved=interleaved)

    def score(a, b):
        return float(rope.apply_mrope(q, a, **kw) @ rope.apply_mrope(k, b, **kw))

    tol = _tol(2 * np.abs(np.concatenate([p, p2, s])).sum(), np.linalg.norm(q) * np.linalg.norm(k))
    assert abs(score(p, p2) - score(p + s, p2 + s)) <= tol


def test_mrope_broadcast_hf_shape(xp):
    # HF's position_ids (3, batch, seq) against x (batch, heads, seq, dim): insert the heads axis
    x = xp.asarray(_rand(11, (2, 3, 5, 16)))
    pid = np.random.default_rng(0).integers(0, 20, (3, 2, 5))
    got = rope.apply_mrope(x, xp.asarray(pid[:, :, None, :]), mrope_section=[4, 2, 2])
    assert tuple(got.shape) == (2, 3, 5, 16)
    one = rope.apply_mrope(x[1, 2, 4, :], xp.asarray(pid[:, 1, 4]), mrope_section=[4, 2, 2])
    np.testing.assert_array_equal(to_np(got)[1, 2, 4], to_np(one))


MX = np.ones((2, 16))
MPOS = np.zeros((3, 2), dtype=np.int64)


@pytest.mark.parametrize(
    "positions, kwargs, exc, match",
    [
        (MPOS, dict(mrope_section=[2, 2, 2]), ValueError, "mrope_section sums to 6"),
        (MPOS, dict(mrope_section=[4, 2, 2], rotary_dim=8), ValueError, "mrope_section"),
        (MPOS, dict(mrope_section=[]), ValueError, "mrope_section"),
        (MPOS, dict(mrope_section="442"), TypeError, "mrope_section"),
        (MPOS, dict(mrope_section=[4, 2, 2.0]), TypeError, r"mrope_section\[2\]"),
        (MPOS, dict(mrope_section=[4, 0, 4]), ValueError, r"mrope_section\[1\]"),
        (MPOS, dict(mrope_section=[2, 4, 2], interleaved=True), ValueError, "mrope_section"),
        (MPOS, dict(mrope_section=[4, 2, 2], interleaved=1), TypeError, "interleaved"),
        (MPOS, dict(mrope_section=[4, 2, 2], layout="rotate"), ValueError, "layout"),
        (MPOS, dict(mrope_section=[4, 2, 2], inverse=None), TypeError, "inverse"),
        (np.zeros((2, 2)), dict(mrope_section=[4, 2, 2]), ValueError, "3 entries"),
        (np.zeros((3, 3)), dict(mrope_section=[4, 2, 2]), ValueError, r"positions\[0\]"),
        (5, dict(mrope_section=[4, 2, 2]), ValueError, "positions"),
    ],
)
def test_mrope_bad_arguments(positions, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rope.apply_mrope(MX, positions, **kwargs)


def test_mrope_requires_section():
    with pytest.raises(TypeError, match="mrope_section"):
        rope.apply_mrope(MX, MPOS)  # type: ignore[call-arg]
