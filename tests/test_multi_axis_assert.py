"""assert_rope_close for M-RoPE, axial and out_layout specs: each pair judged at its own component's position."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import models, rope
from pemath.testing import assert_rope_close

RNG = np.random.default_rng(21)
AX = rope.Spec("interleaved", head_dim=32, axial_dims=[16, 16], base=100.0)
GRID = np.stack(np.meshgrid(np.arange(3), np.arange(4), indexing="ij"), -1).reshape(12, 2)


def _message(actual, x, pos, **kw) -> str:
    with pytest.raises(AssertionError) as exc:
        assert_rope_close(actual, x, pos, **kw)
    return str(exc.value)


def test_axial_specs_are_asserted_with_distinct_per_axis_positions():
    x = RNG.standard_normal((2, 12, 32)).astype(np.float32)
    y = rope.apply(x, GRID, spec=AX).astype(np.float32)
    assert_rope_close(y, x, GRID, spec=AX)
    msg = _message(rope.apply(x, GRID[:, ::-1], spec=AX).astype(np.float32), x, GRID, spec=AX)
    assert "(axial RoPE)" in msg and "the axes in reverse order" in msg
    assert "Measured from the output: the component driving each pair of features 0..15: 11111111" in msg


def test_axial_tolerance_uses_each_axis_own_position():
    # one axis at long positions, the other short: a float32 kernel's error is allowed per axis, not the largest
    x = RNG.standard_normal((12, 32)).astype(np.float32)
    pos = GRID + np.array([200_000, 0])
    y = rope.apply(x, pos, spec=AX)
    bad = y.copy()
    bad[:, 16:] = rope.apply(x, pos + np.array([0, 1]), spec=AX)[:, 16:]  # the short axis off by one
    assert_rope_close(y.astype(np.float32), x, pos, spec=AX)
    assert "Mismatched elements" in _message(bad.astype(np.float32), x, pos, spec=AX)


def test_the_other_grouping_and_frequencies_are_named():
    x = RNG.standard_normal((12, 32)).astype(np.float32)
    msg = _message(rope.apply(x, GRID, spec=AX.replace(axial_frequencies="strided")).astype(np.float32), x, GRID,
                   spec=AX)
    assert "axial_frequencies='strided'" in msg.splitlines()[-1]
    half = AX.replace(layout="half")
    msg = _message(rope.apply(x, GRID, spec=half.replace(axial_grouping="pairs")).astype(np.float32), x, GRID,
                   spec=half)
    assert "axial_grouping='pairs'" in msg.splitlines()[-1]


def test_out_layout_not_applied_is_named():
    v3 = rope.Spec("interleaved", head_dim=16, out_layout="half")
    x = RNG.standard_normal((6, 16)).astype(np.float32)
    msg = _message(rope.apply(x, np.arange(6), spec=v3.replace(out_layout=None)).astype(np.float32), x,
                   np.arange(6), spec=v3)
    assert "out_layout='half' not applied" in msg


@pytest.mark.parametrize("pos, match", [
    (GRID[:, :1], "a trailing axis of 2 coordinates"),
    (np.arange(12), "a trailing axis of 2 coordinates"),
    (np.zeros((5, 2)), "positions\\[..., 0\\]"),
])
def test_axial_positions_of_the_wrong_shape(pos, match):
    x = np.ones((12, 32), np.float32)
    with pytest.raises(ValueError, match=match):
        assert_rope_close(x, x, pos, spec=AX)


def test_given_tolerances_apply_to_multi_axis_specs():
    x = RNG.standard_normal((12, 32)).astype(np.float32)
    y = rope.apply(x, GRID, spec=AX) + 1e-3
    assert_rope_close(y, x, GRID, spec=AX, rtol=0.0, atol=2e-3)
    with pytest.raises(AssertionError, match="Tolerance: given"):
        assert_rope_close(y, x, GRID, spec=AX, rtol=0.0, atol=1e-4)


def test_a_non_finite_x_is_refused_as_in_the_single_axis_assert():
    x = np.ones((12, 32), np.float32)
    x[3, 4] = np.nan
    with pytest.raises(ValueError, match="x must be finite"):
        assert_rope_close(x, x, GRID, spec=AX)


@pytest.mark.parametrize("model", ["qwen2-vl-7b-instruct", "deepseek-v3"])
def test_positions_from_another_library_are_read_on_the_host(model):
    """x, actual and positions all from one non-NumPy library (issue: torch positions were refused)."""
    xp = pytest.importorskip("array_api_strict")
    spec = models.get(model).spec()
    x = np.random.default_rng(5).standard_normal((1, 2, 5, spec.head_dim)).astype(np.float32)
    pos = np.arange(5)
    if spec.mrope_section is not None:
        pos = np.broadcast_to(pos[None, None, None, :], (3, 1, 1, 5)).copy()
    y = np.asarray(rope.apply(x, pos, spec=spec))
    assert_rope_close(xp.asarray(y), xp.asarray(x), xp.asarray(pos), spec=spec)
    with pytest.raises(AssertionError):
        assert_rope_close(xp.asarray(y), xp.asarray(x), xp.asarray(pos + 1), spec=spec)


@pytest.mark.torch
@pytest.mark.parametrize("model", ["qwen2-vl-7b-instruct", "deepseek-v3"])
def test_torch_inputs_for_multi_axis_and_out_layout_specs(model):
    torch = pytest.importorskip("torch")
    spec = models.get(model).spec()
    x = torch.randn(1, 2, 5, spec.head_dim, generator=torch.Generator().manual_seed(0))
    pos = torch.arange(5)
    if spec.mrope_section is not None:
        pos = pos[None, None, None, :].expand(3, 1, 1, 5)
    y = torch.from_numpy(np.asarray(rope.apply(x.numpy(), pos.numpy(), spec=spec)))
    assert_rope_close(y, x, pos, spec=spec)
    with pytest.raises(AssertionError):
        assert_rope_close(y, x, pos + 1, spec=spec)


def test_pairs_left_unrotated_are_measured_as_such():
    # llama.cpp's IMROPE gives Qwen3-VL's pairs 61 and 62 a fourth position stream that holds 0: never rotated
    spec = rope.from_hf_config(models.get("qwen3-vl-8b-instruct").config)
    x = RNG.standard_normal((4, 128)).astype(np.float32)
    i = np.arange(4)
    pos = np.stack([np.full(4, 100_000), 100_000 + i // 2, 100_000 + i % 2])
    y = np.asarray(rope.apply(x.astype(np.float64), pos, spec=spec))
    y[:, [61, 62, 125, 126]] = x[:, [61, 62, 125, 126]]
    msg = _message(y.astype(np.float32), x, pos, spec=spec)
    line = next(ln for ln in msg.splitlines() if ln.startswith("Measured from the output"))
    pattern = line.split(": ")[2].split(" ")[0]
    assert pattern[61:63] == "00" and "0" not in pattern[:61] + pattern[63:], line
    assert "0 not rotated" in line
