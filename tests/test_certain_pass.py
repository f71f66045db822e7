"""The oracle's float32 pass test (pemath.testing._rope.certain): sound, and taken by honest kernels.

Soundness: whenever it answers "certainly passes", the exact float64 comparison passes
too, tested on outputs placed on purpose at the edge of the tolerance (in every dtype,
at long positions, with an attention factor, with partial rotary, with tiny and zero
pairs). Usefulness: honest kernels take it, on NumPy, on torch's CPU tensors and through
the array API (the CuPy stand-in) without bringing the arrays to the host.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from pemath import scaling as sc
from pemath.testing import assert_rope_close
from pemath.testing._core.arrays import as_host, rope_case
from pemath.testing._core.report import compare
from pemath.testing._core.tolerance import dtype_name, unit_roundoff
from pemath.testing._rope.certain import certain_rope_pass
from pemath.testing._rope.tolerance import rope_bound

ml_dtypes = pytest.importorskip("ml_dtypes")
DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def exact_passes(actual, x, pos, **kw) -> bool:
    """The exact path's verdict (float64 truth and derived tolerance), without the float32 test."""
    case = rope_case(x, pos, **kw)
    a = as_host("actual", actual)[0].reshape(case.x2.shape)
    expected = np.asarray(rope.apply(case.x2, case.pos, **case.kwargs()))
    tol = rope_bound(case.x2, case.pos, case.freq, case.factor, case.layout, case.r,
                     unit_roundoff(dtype_name(actual.dtype)), case.cfreq)
    return compare(a, expected, tol).passed


def honest(x, pos, dtype, **kw):
    """An honest kernel: the float64 rotation of x rounded once to the output dtype."""
    return np.asarray(rope.apply(x.astype(np.float64), pos, **kw)).astype(dtype)


@st.composite
def edge_cases(draw):
    name = draw(st.sampled_from(sorted(DTYPES)))
    dt = DTYPES[name]
    layout = draw(st.sampled_from(["half", "interleaved"]))
    d = draw(st.sampled_from([4, 8, 16, 64]))
    r = draw(st.sampled_from([d, d // 2])) if d > 4 else d
    rows = draw(st.integers(1, 12))
    pos = np.asarray(draw(st.lists(st.integers(0, 300_000), min_size=rows, max_size=rows)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-3, 3, size=(rows, d))
    x = rng.standard_normal((rows, d)) * scale
    special = draw(st.sampled_from(["none", "zero pair", "tiny pair", "subnormal"]))
    if special == "zero pair":
        x[0, :] = 0.0
    elif special == "tiny pair":
        x[0, :] = 1e-35
    elif special == "subnormal":
        x[-1, 0] = 1e-40
    x = x.astype(np.float32).astype(dt)
    kw = {"layout": layout, "rotary_dim": r}
    if draw(st.booleans()):
        kw["scaling"] = sc.YaRN(draw(st.sampled_from([4.0, 16.0])), 4096)
    # Push chosen elements to (delta * their tolerance) from the truth, then round to the dtype.
    case = rope_case(x, pos, **kw)
    truth = np.asarray(rope.apply(case.x2, case.pos, **case.kwargs()))
    tol = rope_bound(case.x2, case.pos, case.freq, case.factor, case.layout, case.r, unit_roundoff(name), case.cfreq)
    delta = draw(st.sampled_from([0.0, 0.5, 0.9, 0.99, 0.999, 1.0, 1.001, 1.01, 1.5]))
    mask = rng.random(truth.shape) < draw(st.sampled_from([0.05, 0.5, 1.0]))
    sign = np.where(rng.random(truth.shape) < 0.5, -1.0, 1.0)
    actual = (truth + mask * sign * delta * tol).reshape(x.shape).astype(dt)
    return actual, x, pos, kw


@given(edge_cases())
def test_a_certain_pass_is_an_exact_pass(case):
    actual, x, pos, kw = case
    if certain_rope_pass(actual, x, pos, None, spec=None, **kw):
        assert exact_passes(actual, x, pos, **kw)


LAYOUTS = ["half", "interleaved"]


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("r", [64, 32])
def test_honest_numpy_kernels_take_the_float32_test(name, layout, r):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 257, 64)).astype(np.float32).astype(DTYPES[name])
    pos = np.concatenate([np.arange(250), [4097, 30_000, 65_000, 100_000, 200_000, 250_000, 300_000]])
    for kw in ({"layout": layout, "rotary_dim": r}, {"layout": layout, "rotary_dim": r, "scaling": sc.YaRN(16.0, 4096)}):
        y = honest(x, pos, DTYPES[name], **kw)
        assert certain_rope_pass(y, x, pos, None, spec=None, **kw)
        assert exact_passes(y, x, pos, **kw)


def test_a_spec_and_per_row_positions_take_it_too():
    spec = rope.from_hf_config({"model_type": "llama", "head_dim": 64, "rope_theta": 500000.0,
                                "num_attention_heads": 8, "hidden_size": 512,
                                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0,
                                                 "original_max_position_embeddings": 8192}})
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 2, 40, 64)).astype(np.float32)
    pos = (np.arange(40)[None, :] + np.array([[0], [7], [300]]))[:, None, :]  # distinct offsets per batch row
    y = honest(x, pos, np.float32, spec=spec)
    assert certain_rope_pass(y, x, pos, None, spec=spec)


@pytest.mark.parametrize("what", ["wrong position", "nan output", "inf input", "tiny pair", "long positions",
                                  "narrower pass-through", "mismatched shape", "float64"])
def test_it_declines_what_it_cannot_certify(what):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    pos = np.arange(16)
    kw = {"layout": "half"}
    y = honest(x, pos, np.float32, **kw)
    if what == "wrong position":
        y = honest(x, pos + 1, np.float32, **kw)
    elif what == "nan output":
        y[3, 5] = np.nan
    elif what == "inf input":
        x[2, 40] = np.inf
    elif what == "tiny pair":
        x[1, :] = 1e-33
        y = honest(x, pos, np.float32, **kw)
    elif what == "long positions":  # where an element's tolerance may be vacuous: the exact path warns
        pos = np.full(16, 2_000_000)
        y = honest(x, pos, np.float32, **kw)
    elif what == "narrower pass-through":
        kw["rotary_dim"] = 32
        y = honest(x, pos, np.float16, **kw)
    elif what == "mismatched shape":
        y = y[:8]
    elif what == "float64":
        x = x.astype(np.float64)
        y = honest(x, pos, np.float64, **kw)
    assert not certain_rope_pass(y, x, pos, None, spec=None, **kw)


def test_bad_arguments_still_get_the_exact_paths_errors():
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="layout"):
        assert_rope_close(x, x, np.arange(4), layout="sideways")
    with pytest.raises(TypeError, match="spec"):
        assert_rope_close(x, x, np.arange(4), layout="half", spec=rope.Spec(layout="half"))


def test_the_device_path_keeps_the_arrays_on_the_device(monkeypatch):
    """Through the array API (array-api-strict stands in for CuPy): no host copy of x or actual on a pass."""
    xs = pytest.importorskip("array_api_strict")
    from pemath.testing._core import arrays as _arrays

    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 33, 64)).astype(np.float32)
    pos = np.arange(33)
    y = honest(x, pos, np.float32, layout="interleaved")
    xd, yd = xs.asarray(x), xs.asarray(y)
    real = _arrays.as_host

    def refuse_big(name, a, **kw):
        if name in ("x", "actual"):
            raise AssertionError(f"{name} was brought to the host")
        return real(name, a, **kw)

    monkeypatch.setattr(_arrays, "as_host", refuse_big)
    assert certain_rope_pass(yd, xd, pos, None, spec=None, layout="interleaved")
    assert_rope_close(yd, xd, pos, layout="interleaved")
    monkeypatch.setattr(_arrays, "as_host", real)
    bad = xs.asarray(honest(x, pos + 1, np.float32, layout="interleaved"))
    assert not certain_rope_pass(bad, xd, pos, None, spec=None, layout="interleaved")
    with pytest.raises(AssertionError, match="shifted by \\+1"):
        assert_rope_close(bad, xd, pos, layout="interleaved")


@pytest.mark.torch
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_torch_cpu_tensors_take_it(name):
    torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 50, 64)).astype(np.float32)
    pos = np.arange(50)
    y = honest(x, pos, np.float32, layout="half")
    dt = getattr(torch, name)
    yt, xt = torch.from_numpy(y).to(dt), torch.from_numpy(x).to(dt)
    assert certain_rope_pass(yt, xt, pos, None, spec=None, layout="half")


def test_a_tiny_attention_factor_is_left_to_the_exact_path():
    # found by review: |a| S underflowed float32's products while S itself was above the guard
    from pemath import scaling as sc

    s = sc.YaRN(4.0, 4096, attention_factor=1e-30)
    x = np.full((1, 8), 2.0**-99, np.float32)
    zeros = np.zeros_like(x)
    assert not certain_rope_pass(zeros, x, np.arange(1), None, spec=None, layout="half", scaling=s)
    # the exact path: the truth, about 1.6e-60, is below float32's smallest subnormal (1.4e-45); an honest float32
    # output underflows to 0, within the bound's subnormal floor (_core.tolerance.output_floor), and 2^-149 is too
    assert exact_passes(zeros, x, np.arange(1), layout="half", scaling=s)
    assert not exact_passes(np.full_like(x, 1e-40), x, np.arange(1), layout="half", scaling=s)
