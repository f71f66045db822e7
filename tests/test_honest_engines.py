"""Honest ways to compute RoPE that real engines use: the oracle accepts every one, and still names bugs on top.

* the per-pair forms ``1 / b ** e`` and ``exp(-e ln b)`` in float32 (the derived bound);
* llama.cpp's CPU kernel, whose angles come from the float32 recurrence ``theta *= theta_scale``
  (recognised by emulation: ``pemath.testing._rope.honest``);
* fractional positions computed in float32 as a grid (torch's ``linspace``, ``start + k * step``),
  as timm's vision RoPE does (the grid term of ``_core.tolerance.position_rounding``).

``test_honest_figures`` prints the figures (``pytest -s``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pemath import VacuousToleranceWarning, rope
from pemath import scaling as sc
from pemath.testing import assert_rope_close, pipelines, rope_tolerance
from pemath.testing._rope.honest import recognised

#: Short and long positions, up to 2**24 (beyond, float32 positions themselves are rounded).
POSITIONS = np.array([0, 1, 2, 3, 100, 1000, 4096, 65_535, 2**20, 2**24 - 1, 2**24])
BASES = (10_000.0, 100_000.0, 500_000.0, 1_000_000.0)
RNG = np.random.default_rng(20261126)


def _accepts(y, x, pos, **kw) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the vacuity warning at 2**24 is tested in test_precision_guard
        try:
            assert_rope_close(y, x, pos, **kw)
        except AssertionError:
            return False
    return True


def _x(rows: int, r: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal((rows, r)).astype(dtype)


# --------------------------------------------------------------------------- frequencies per pair


def exp_log_kernel(x: np.ndarray, pos: np.ndarray, base: float, layout: str) -> np.ndarray:
    """tensor2tensor's form: ``exp(-(2i/d) ln b)`` in float32, phases and products in float32."""
    r = x.shape[-1]
    e = np.arange(0, r, 2, dtype=np.float32) / np.float32(r)
    inv = np.exp(-(e * np.float32(np.log(np.float32(base))))).astype(np.float32)
    phase = pos.astype(np.float32)[:, None] * inv
    c, s = np.cos(phase), np.sin(phase)
    xa, xb = (x[:, : r // 2], x[:, r // 2:]) if layout == "half" else (x[:, 0::2], x[:, 1::2])
    ya, yb = xa * c - xb * s, xa * s + xb * c
    return np.concatenate([ya, yb], -1) if layout == "half" else np.stack([ya, yb], -1).reshape(x.shape)


def _sweep(kernel, dims, bases=BASES) -> tuple[int, list]:
    rejected = []
    n = 0
    for base in bases:
        for r in dims:
            x = _x(POSITIONS.size, r)
            n += 1
            if not _accepts(kernel(x, POSITIONS, base), x, POSITIONS, layout="half", base=base):
                rejected.append((base, r))
    return n, rejected


def test_per_pair_forms_accepted_at_every_dim_up_to_1024():
    n, rejected = _sweep(lambda x, p, b: pipelines.hf(x, p, base=b), range(2, 1025, 2), BASES[:1])
    assert not rejected, rejected
    n, rejected = _sweep(lambda x, p, b: exp_log_kernel(x, p, b, "half"), range(64, 1025, 64))
    assert not rejected, rejected


# --------------------------------------------------------------------------- the float32 recurrence


def test_llama_cpp_recurrence_accepted_at_every_dim_up_to_1024():
    n, rejected = _sweep(lambda x, p, b: pipelines.llama_cpp(x, p, layout="half", base=b), range(2, 1025, 2),
                         BASES[:1])
    assert n == 512 and not rejected, rejected
    n, rejected = _sweep(lambda x, p, b: pipelines.llama_cpp(x, p, layout="half", base=b), range(64, 1025, 64))
    assert not rejected, rejected


@pytest.mark.parametrize("scaling", [None, sc.Linear(4.0), sc.Llama3(8.0, 8192), sc.YaRN(4.0, 4096)], ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_llama_cpp_recurrence_accepted_in_its_configurations(scaling, dtype, layout):
    pos = np.array([0, 1, 7, 100, 4096, 65_535, 131_071])[:, None]
    for r in (128, 512, 1024):
        x = RNG.standard_normal((pos.size, 2, r)).astype(dtype)
        y = pipelines.llama_cpp(x, pos, layout=layout, base=500_000.0, scaling=scaling)
        assert _accepts(y, x, pos, layout=layout, base=500_000.0, scaling=scaling), (r, scaling)


def test_the_recurrence_is_outside_the_bound_so_recognition_is_needed():
    """Without recognition the oracle raised a false alarm: the bound alone rejects llama.cpp at d_r = 512."""
    pos = np.arange(0, 8193, 512)
    x = np.random.default_rng(3).standard_normal((pos.size, 512)).astype(np.float32)
    y = pipelines.llama_cpp(x, pos, layout="half")
    truth = rope.apply(x.astype(np.float64), pos, layout="half")
    assert np.max(np.abs(y - truth) / rope_tolerance(x, pos, layout="half")) > 1.1
    assert _accepts(y, x, pos, layout="half")


@pytest.mark.parametrize("name, make, finding", [
    ("positions + 1", lambda x, p: pipelines.llama_cpp(x, p + 1, layout="half"), "positions shifted by +1"),
    ("interleaved", lambda x, p: pipelines.llama_cpp(x, p, layout="interleaved"), "the other layout"),
    ("base 10^5", lambda x, p: pipelines.llama_cpp(x, p, layout="half", base=1e5), "base=100000"),
    ("linear x2 applied", lambda x, p: pipelines.llama_cpp(x, p, layout="half", scaling=sc.Linear(2.0)), ""),
])
def test_bugs_on_top_of_the_recurrence_are_rejected_and_named(name, make, finding):
    pos = np.array([0, 1, 2, 3, 50, 100, 1000, 4096])
    x = _x(pos.size, 512)
    with pytest.raises(AssertionError) as info:
        assert_rope_close(make(x, pos), x, pos, layout="half")
    msg = str(info.value)
    assert finding in msg.split("Diagnosis:")[-1], msg
    if finding:
        assert "no known bug" not in msg


def test_recognition_refuses_a_recurrence_with_a_wrong_step():
    """theta_scale 16 ulp off (not a libm's 1): the recurrence is not recognised, the output is rejected."""
    from pemath.testing._core import arrays as _arrays

    pos = np.array([0, 1, 100, 4096, 65_535])
    x = _x(pos.size, 512)
    s = pipelines._theta_scale_f32(10_000.0, 512)
    bad = np.float32(s * np.float32(1 + 16 * 2.0**-24))
    phase = pipelines._recurrence_phases(pos, bad, 256).astype(np.float64)
    y = rope._core.rotate(x.astype(np.float64), np.cos(phase), np.sin(phase), "half", 512, np, np.float64)
    case = _arrays.rope_case(x, pos, layout="half", where="test")
    assert recognised(case, y, 2.0**-24, np.ones(pos.size)) is None
    good = pipelines.llama_cpp(x, pos, layout="half")
    assert recognised(case, good, 2.0**-24, np.ones(pos.size)) is not None
    assert not _accepts(y.astype(np.float32), x, pos, layout="half")


# --------------------------------------------------------------------------- float32 grids of positions


def torch_linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """torch's CPU ``linspace`` in float32: ``start + step*k`` up to halfway, ``end - step*(n-1-k)`` after."""
    if steps == 1:
        return np.array([start], dtype=np.float32)
    f = np.float32
    step = (f(end) - f(start)) / f(steps - 1)
    k = np.arange(steps)
    lo = f(start) + step * k.astype(np.float32)
    hi = f(end) - step * (steps - 1 - k).astype(np.float32)
    return np.where(k < steps // 2, lo, hi).astype(np.float32)


def fma_linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """``start + k * step`` over the whole range with one rounding (a fused multiply-add)."""
    if steps == 1:
        return np.array([start], dtype=np.float32)
    step = np.float32((np.float32(end) - np.float32(start)) / np.float32(steps - 1))
    return (np.float64(start) + np.arange(steps) * np.float64(step)).astype(np.float32)


def _grid(make, h: int, w: int) -> np.ndarray:
    gi, gj = np.meshgrid(make(-1.0, 1.0, h), make(-1.0, 1.0, w), indexing="ij")
    return np.stack([gi.reshape(-1), gj.reshape(-1)])


def vision_kernel(x: np.ndarray, grid32: np.ndarray, spec) -> np.ndarray:
    """timm's rotary in float32: each axis' coordinate times its bands (pi * linspace), cos and sin, products."""
    bands = np.asarray(spec.inv_freq, dtype=np.float32)
    n = bands.size // 2
    phase = np.concatenate([grid32[0][:, None] * bands[None, :n], grid32[1][:, None] * bands[None, n:]], axis=-1)
    c, s = np.cos(phase), np.sin(phase)
    ya = x[..., 0::2] * c - x[..., 1::2] * s
    yb = x[..., 0::2] * s + x[..., 1::2] * c
    return np.stack([ya, yb], -1).reshape(x.shape)


@pytest.mark.parametrize("make", [torch_linspace32, fma_linspace32], ids=["torch_linspace", "fma"])
@pytest.mark.parametrize("shape", [(7, 11), (37, 37), (14, 14), (1, 5)])
def test_float32_grids_of_positions_accepted(make, shape):
    h, w = shape
    spec = rope.pixel_spec(64, max_res=224.0)
    x = RNG.standard_normal((2, h * w, 64)).astype(np.float32)
    y = vision_kernel(x, _grid(make, h, w), spec)
    exact = rope.pixel_positions(shape)[:, None, :]
    assert _accepts(y, x, exact, spec=spec)


def test_float32_grid_term_does_not_hide_a_wrong_grid():
    """A grid off by one step (the centre moved), or its axes swapped, is still rejected."""
    spec = rope.pixel_spec(64, max_res=224.0)
    x = RNG.standard_normal((2, 7 * 11, 64)).astype(np.float32)
    grid = _grid(torch_linspace32, 7, 11)
    exact = rope.pixel_positions((7, 11))[:, None, :]
    shifted = grid + np.float32(2.0 / 10)
    assert not _accepts(vision_kernel(x, shifted.astype(np.float32), spec), x, exact, spec=spec)
    assert not _accepts(vision_kernel(x, grid[::-1], spec), x,
                        exact, spec=spec)


# --------------------------------------------------------------------------- the figures


def test_honest_figures():
    """Print what the sweeps above measure (pytest -s); the assertions are the tests above."""
    n1, r1 = _sweep(lambda x, p, b: pipelines.llama_cpp(x, p, layout="half", base=b), range(2, 1025, 2), BASES[:1])
    n2, r2 = _sweep(lambda x, p, b: pipelines.llama_cpp(x, p, layout="half", base=b), range(64, 1025, 64), BASES[1:])
    print(f"\nllama.cpp's float32 recurrence: {n1 + n2 - len(r1) - len(r2)} of {n1 + n2} configurations accepted "
          f"(rotary dims 2..1024 at base 1e4, 64..1024 at 1e5, 5e5, 1e6; positions 0..2^24)")
    assert not r1 and not r2


# --------------------------------------------------------------------------- found by an independent review


def gpu_pow_kernel(x: np.ndarray, pos: np.ndarray, base: float) -> np.ndarray:
    """llama.cpp's CUDA/Vulkan/SYCL form: theta = p * powf(theta_scale, i), in float32 (NumPy's powf)."""
    r = x.shape[-1]
    ts = np.power(np.float32(base), np.float32(-2.0) / np.float32(r))
    phase = pos.astype(np.float32)[:, None] * np.power(ts, np.arange(r // 2).astype(np.float32))
    c, s = np.cos(phase), np.sin(phase)
    a, b = x[:, : r // 2], x[:, r // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], -1)


def test_llama_cpp_gpu_form_is_recognised():
    """p * powf(theta_scale, i): about i times the rounding of theta_scale, one sign; up to 3x the bound at r=880."""
    rejected = []
    for base in (1e4, 1e6, 1e7):
        for r in range(64, 1025, 64):
            pos = np.arange(100_000, 100_032)
            x = _x(pos.size, r)
            if not _accepts(gpu_pow_kernel(x, pos, base), x, pos, layout="half", base=base):
                rejected.append((base, r))
    assert not rejected, rejected


def test_float16_outputs_in_the_subnormal_range_pass():
    """Rounding to a float16 subnormal has an absolute error of up to 2^-25: the bound has that floor."""
    pos = np.arange(8)
    x = (RNG.standard_normal((pos.size, 64)) * 1e-5).astype(np.float32)
    y = rope.apply(x.astype(np.float64), pos, layout="half").astype(np.float32).astype(np.float16)
    assert _accepts(y, x, pos, layout="half")
    # a zero pair stays exactly zero: no floor there
    from pemath.testing import rope_tolerance

    z = np.zeros((1, 4), dtype=np.float16)
    assert np.all(rope_tolerance(z, [3], layout="half") == 0)


def test_one_fractional_position_does_not_widen_every_rows_bound():
    """Positions 0..14 and one fractional one are no float32 grid: an off-by-one on the integer rows is caught."""
    pos = np.concatenate([np.arange(15), [2**21 + 0.5]])
    x = _x(pos.size, 64)
    y = rope.apply(x.astype(np.float64), pos, layout="half")
    y[:15] = rope.apply(x[:15].astype(np.float64), pos[:15] + 1, layout="half")
    assert not _accepts(y.astype(np.float32), x, pos, layout="half")


def test_no_name_that_the_right_output_would_also_match():
    """At p = 2^22 an off-by-one is within the bound: a kernel that is wrong otherwise is not called off-by-one."""
    pos = np.arange(2**22, 2**22 + 16)
    x = _x(pos.size, 512)
    inv = (1.0 / 10_001.0 ** (np.arange(0, 512, 2) / 512)).astype(np.float32)  # base 10001, per pair
    phase = pos.astype(np.float32)[:, None] * inv
    c, s = np.cos(phase), np.sin(phase)
    y = np.concatenate([x[:, :256] * c - x[:, 256:] * s, x[:, :256] * s + x[:, 256:] * c], -1)
    # at p = 2^22 the lowest pairs' phases are so uncertain in float32 that some elements cannot fail: warned
    with pytest.raises(AssertionError) as info, pytest.warns(VacuousToleranceWarning, match="cannot fail"):
        assert_rope_close(y, x, pos, layout="half")
    diagnosis = str(info.value).split("Diagnosis:")[1]
    assert "shifted by" not in diagnosis and "stored in" not in diagnosis, diagnosis


def test_llama_cpp_yarn_is_recognised_at_large_rotary_dims():
    """ggml's YaRN mixes the recurrence's angles with its ramp: rejected at r = 576..992 before it was emulated."""
    y = sc.YaRN(4.0, 4096)
    rejected = []
    for r in range(256, 1025, 32):
        pos = np.arange(100_000, 100_016)
        x = _x(pos.size, r)
        if not _accepts(pipelines.llama_cpp(x, pos, layout="half", scaling=y), x, pos, layout="half", scaling=y):
            rejected.append(r)
    assert not rejected, rejected
