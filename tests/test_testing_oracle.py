"""pemath.testing's asserts: honest kernels pass, wrong ones fail with a useful message, bad arguments raise.

The honest kernels here are written from scratch (float32 frequencies and phases, cos/sin
rounded to the output dtype, products in that dtype), not with pemath; the tolerance's
constants are checked against values worked out by hand from the documented formula.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pemath.testing as pt
from pemath import alibi, rope, sinusoidal, t5
from pemath import scaling as sc
from pemath.testing import (
    assert_alibi_close,
    assert_rope_close,
    assert_sinusoidal_close,
    assert_t5_buckets_equal,
    rope_tolerance,
    unit_roundoff,
)

from .conftest import to_np

# Positions up to 10**6 are tested on purpose; there a few elements' derived tolerance admits every
# value (pemath.VacuousToleranceWarning, tested in tests/test_precision_guard.py), which is not what
# this file examines.
pytestmark = pytest.mark.filterwarnings("ignore::pemath.VacuousToleranceWarning")

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16
U32 = 2.0**-24
U64 = 2.0**-53
RNG = np.random.default_rng(7)
LONG = np.concatenate([np.arange(16), [4097, 65_537, 100_000, 333_333, 999_999, 1_000_000]])


def honest(x, pos, *, layout, base=10000.0, r=None, dtype=np.float32, form="pow"):
    """A RoPE kernel done right: float32 phases, cos/sin rounded to dtype, products in dtype."""
    d = x.shape[-1]
    r = r or d
    e = np.arange(0, r, 2, dtype=np.float32) / np.float32(r)
    if form == "pow":
        inv = np.float32(1.0) / np.power(np.float32(base), e)
    else:  # exp(-e ln b), as tensor2tensor-style code
        inv = np.exp(-e * np.float32(math.log(base)))
    phase = np.asarray(pos, dtype=np.float32)[..., None] * inv.astype(np.float32)
    c, s = np.cos(phase).astype(dtype), np.sin(phase).astype(dtype)
    xt = x.astype(dtype)
    if layout == "half":
        a, b = xt[..., : r // 2], xt[..., r // 2 : r]
    else:
        a, b = xt[..., 0:r:2], xt[..., 1:r:2]
    ya, yb = (a * c - b * s).astype(dtype), (b * c + a * s).astype(dtype)
    if layout == "half":
        out = np.concatenate([ya, yb], axis=-1)
    else:
        out = np.stack([ya, yb], axis=-1).reshape(*ya.shape[:-1], r)
    return np.concatenate([out, xt[..., r:]], axis=-1)


def diagnosis(exc_info) -> str:
    return next(ln for ln in str(exc_info.value).splitlines() if ln.startswith("Diagnosis:"))


# --------------------------------------------------------------------------- package hygiene


def test_import_pulls_in_no_backend_and_no_hypothesis():
    code = (
        "import sys, pemath.testing\n"
        "print(','.join(m for m in ('torch', 'cupy', 'jax', 'hypothesis', 'ml_dtypes') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names_and_lazy_submodules():
    for name in pt.__all__:
        if name not in ("pipelines", "strategies", "golden"):
            assert callable(getattr(pt, name)), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pt.nope  # noqa: B018
    try:
        mod = pt.pipelines
    except ImportError:
        pytest.skip("pemath.testing.pipelines is not there yet")
    assert mod.__name__ == "pemath.testing.pipelines"


def test_asserts_hide_their_frames_from_pytest_tracebacks():
    for f in (assert_rope_close, assert_sinusoidal_close, assert_alibi_close, assert_t5_buckets_equal):
        assert "__tracebackhide__" in f.__code__.co_varnames


# --------------------------------------------------------------------------- the tolerance


def test_unit_roundoffs():
    assert unit_roundoff("float64") == U64 and unit_roundoff(np.float32) == U32
    assert unit_roundoff(np.dtype(np.float16)) == 2.0**-11 and unit_roundoff(BF16) == 2.0**-8
    assert unit_roundoff("float8_e4m3fn") == 2.0**-4 and unit_roundoff("float8_e5m2") == 2.0**-3
    with pytest.raises(TypeError, match="dtype"):
        unit_roundoff("int32")


def test_tolerance_matches_the_formula_worked_by_hand():
    # one pair, x = (1, 0), float32 output: S = 1, a = 1, σ = 2.
    x = np.array([1.0, 0.0], dtype=np.float32)
    tol = rope_tolerance(x, 0, layout="half")
    # φ = 0: σ S [(2 + 3) u32 + 8 u64]
    assert tol[0] == pytest.approx(2 * (5 * U32 + 8 * U64), rel=1e-12)
    # p = 1000, θ_0 = 1 = b^0 exactly (C_θ = 0): phase term (C_θ + 1) u32 * 1000
    tol = rope_tolerance(x, 1000, layout="half")
    assert tol[0] == pytest.approx(2 * (1 * U32 * 1000 + 5 * U32 + U64 * 1008), rel=1e-12)
    # second pair of d = 4, base 100: e = 1/2, θ = 0.1, C_θ = 3 (1/2) ln 100 + 1/2 + 10
    x4 = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
    c = 1.5 * math.log(100.0) + 0.5 + 10
    tol = rope_tolerance(x4, 1000, layout="interleaved", base=100.0)
    assert tol[0] == tol[1] == 0.0
    assert tol[2] == tol[3] == pytest.approx(2 * ((c + 1) * U32 * 100 + 5 * U32 + U64 * 108), rel=1e-12)
    # bfloat16 output: the 3 u_T term with u_T = 2^-8
    tol = rope_tolerance(x, 0, layout="half", dtype="bfloat16")
    assert tol[0] == pytest.approx(2 * (2 * U32 + 3 * 2.0**-8 + 8 * U64), rel=1e-12)
    # the position rounded to float32 above 2**24: |fl32(2**24 + 1) - (2**24 + 1)| = 1 radian at θ = 1
    lo, hi = rope_tolerance(x, 2**24, layout="half")[0], rope_tolerance(x, 2**24 + 1, layout="half")[0]
    assert hi - lo == pytest.approx(2 * (1.0 + 11 * U32 + U64), rel=1e-6)


def test_tolerance_of_a_scaled_pair_and_pass_through():
    y = sc.YaRN(16.0, 4096)
    x = np.array([3.0, -4.0, 0.5, 0.25, 7.0, -2.0], dtype=np.float32)
    tol = rope_tolerance(x, 0, layout="interleaved", scaling=y, rotary_dim=4)
    a = y.attention_factor
    assert tol[0] == tol[1] == pytest.approx(2 * a * 7.0 * (4 * U32 + 3 * U32 + 8 * U64), rel=1e-12)
    assert tol[4] == pytest.approx(7.0 * U32) and tol[5] == pytest.approx(2.0 * U32)  # u_T |x|


@settings(max_examples=40, deadline=None)
@given(p=st.integers(0, 2**24), q=st.integers(0, 2**24), scale=st.floats(0.01, 100.0))
def test_tolerance_grows_with_position_and_scales_with_x(p, q, scale):
    # positions exact in float32 (<= 2**24): the bound grows with the phase
    x = RNG.standard_normal(8)
    lo, hi = sorted((p, q))
    t_lo, t_hi = rope_tolerance(x, lo, layout="half"), rope_tolerance(x, hi, layout="half")
    assert np.all(t_hi >= t_lo * (1 - 1e-12))
    np.testing.assert_allclose(rope_tolerance(scale * x, lo, layout="half"), scale * t_lo, rtol=1e-12)


def test_tolerance_counts_the_float32_rounding_of_large_positions():
    # float32 spaces 2**25 .. 2**26 by 4: 2**25 + 1 rounds to 2**25 (off by 1 radian at θ = 1),
    # 2**25 + 4 is exact. The bound drops by σ S (1 - 3 u32 - 3 u64).
    x = np.array([1.0, 0.0])
    t1 = rope_tolerance(x, 2**25 + 1, layout="half")[0]
    t2 = rope_tolerance(x, 2**25 + 4, layout="half")[0]
    assert t1 - t2 == pytest.approx(2 * (1.0 - 3 * U32 - 3 * U64), rel=1e-12)


def test_tolerance_orders_the_dtypes_and_is_zero_for_zero_input():
    x = RNG.standard_normal((4, 16)) + 3.0
    pos = [0, 5, 500, 5000]
    tols = [rope_tolerance(x, pos, layout="half", dtype=dt) for dt in ("float64", "float32", "float16", "bfloat16")]
    for a, b in zip(tols, tols[1:]):
        assert np.all(a < b)
    assert not rope_tolerance(np.zeros((2, 4)), [1, 2], layout="half").any()


# --------------------------------------------------------------------------- honest kernels pass

HONEST = [(dt, layout, d) for dt in (np.float32, np.float16, BF16) for layout in ("half", "interleaved")
          for d in (64, 128)]


@pytest.mark.parametrize("dtype, layout, d", HONEST, ids=[f"{np.dtype(h[0]).name}-{h[1]}-{h[2]}" for h in HONEST])
def test_honest_kernels_pass_at_long_positions(dtype, layout, d):
    x = RNG.standard_normal((LONG.size, d)).astype(np.float32).astype(dtype)
    for base in (10000.0, 500000.0, 1e6):
        assert_rope_close(honest(x, LONG, layout=layout, base=base, dtype=dtype), x, LONG, layout=layout, base=base)


@settings(max_examples=50, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float16", "bfloat16"]),
    layout=st.sampled_from(["half", "interleaved"]),
    pairs=st.integers(1, 80),
    part=st.floats(0.1, 1.0),
    base=st.sampled_from([100.0, 10000.0, 500000.0, 1e6, 1e7]),
    form=st.sampled_from(["pow", "exp"]),
    positions=st.lists(st.integers(0, 2**26), min_size=1, max_size=6),
)
def test_honest_kernels_pass_property(dtype, layout, pairs, part, base, form, positions):
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    d = 2 * pairs
    r = max(2, 2 * int(pairs * part))
    pos = np.array(positions)
    x = RNG.standard_normal((pos.size, d)).astype(np.float32).astype(dt)
    actual = honest(x, pos, layout=layout, base=base, r=r, dtype=dt, form=form)
    assert_rope_close(actual, x, pos, layout=layout, base=base, rotary_dim=r)


def test_honest_fractional_positions_and_positions_beyond_float32_integers():
    pos = np.array([0.5, 1.25, 12345.75, 999_999.5, 2**24 + 1, 2**27 + 3, 2**31 - 1])
    x = RNG.standard_normal((pos.size, 32)).astype(np.float32)
    assert_rope_close(honest(x, pos, layout="half"), x, pos, layout="half")


def test_every_hf_rope_type_through_the_pipeline_emulation_passes():
    pipelines = pytest.importorskip("pemath.testing.pipelines")
    pos = np.concatenate([np.arange(8), [70_000, 999_999]])
    seq_len = int(pos.max()) + 1
    variants = [None, sc.Linear(4.0), sc.DynamicNTK(2.0, 4096), sc.YaRN(16.0, 4096),
                sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
                sc.LongRoPE(list(np.linspace(1, 2, 32)), list(np.linspace(1, 8, 32)), 4096, factor=32.0)]
    for scaling in variants:
        for dtype in ("float32", "bfloat16"):
            x = RNG.standard_normal((pos.size, 64)).astype(np.float32)
            y = pipelines.hf(x, pos, layout="half", dtype=dtype, base=500000.0, scaling=scaling, seq_len=seq_len)
            assert_rope_close(y, x.astype(y.dtype), pos, layout="half", base=500000.0, scaling=scaling,
                              seq_len=seq_len)


def test_truth_uses_the_exact_values_of_a_low_precision_x():
    x = RNG.standard_normal((8, 16)).astype(BF16)
    pos = np.arange(8) * 1000
    exact = np.asarray(rope.apply(x.astype(np.float64), pos, layout="half")).astype(BF16)
    assert_rope_close(exact, x, pos, layout="half")  # correctly rounded: passes
    # the same rotation of x before its rounding to bfloat16 is another input: the difference shows in float32
    x32 = RNG.standard_normal((8, 16)).astype(np.float32)
    other = np.asarray(rope.apply(x32.astype(np.float64), pos, layout="half")).astype(np.float32)
    with pytest.raises(AssertionError):
        assert_rope_close(other, x32.astype(BF16), pos, layout="half")


# --------------------------------------------------------------------------- backends


def test_any_backend(xp):
    x_np = RNG.standard_normal((3, 10, 32))
    x = xp.asarray(x_np.astype(np.float32))
    pos = xp.arange(10)
    assert_rope_close(rope.apply(x, pos, layout="interleaved"), x, pos, layout="interleaved")
    with pytest.raises(AssertionError) as exc:
        assert_rope_close(rope.apply(x, pos, layout="interleaved", inverse=True), x, pos, layout="interleaved")
    assert "inverse rotation" in diagnosis(exc)
    assert to_np(x).shape == (3, 10, 32)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_torch_low_precision_tensors(dtype):
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    x = torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(0)).to(dt)
    pos = torch.arange(8)
    good = rope.apply(x.float(), pos, layout="half").to(dt)
    assert_rope_close(good, x, pos, layout="half")
    with pytest.raises(AssertionError) as exc:
        assert_rope_close(rope.apply(x.float(), pos + 1, layout="half").to(dt), x, pos, layout="half")
    assert "shifted by +1" in diagnosis(exc)
    assert f"derived for a {dtype} output" in str(exc.value)


# --------------------------------------------------------------------------- the message


def test_message_reports_count_worst_element_position_and_pair():
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    pos = np.arange(6)
    actual = honest(x, pos, layout="half")
    actual[3, 6] += 0.01  # one element off: row 3 (position 3), feature 6 = pair 2, member b
    with pytest.raises(AssertionError) as exc:
        assert_rope_close(actual, x, pos, layout="half")
    msg = str(exc.value)
    assert "Mismatched elements: 1 / 48 (2.08%)" in msg
    assert "Worst element (largest error / tolerance) at index (3, 6): actual " in msg
    assert "  position 3, feature 6: pair 2 (frequency index 2), member b" in msg
    m = re.search(r"abs error ([0-9.e+-]+), tolerance ([0-9.e+-]+)", msg)
    assert m and float(m.group(1)) == pytest.approx(0.01, rel=1e-3) and float(m.group(2)) < 1e-5
    assert "no known bug explains the mismatch" in diagnosis(exc)


def test_nan_in_actual_is_a_mismatch_and_is_reported():
    x = RNG.standard_normal((4, 8))
    actual = np.asarray(rope.apply(x, np.arange(4), layout="half"))
    actual[1, 1] = np.nan
    with pytest.raises(AssertionError, match=r"1 NaN or infinite value") as exc:
        assert_rope_close(actual, x, np.arange(4), layout="half")
    assert "index (1, 1): actual nan" in str(exc.value)


def test_large_inputs_are_diagnosed_on_a_sample(monkeypatch):
    from pemath.testing._rope import diagnose as _diagnose

    monkeypatch.setattr(_diagnose, "MAX_DIAGNOSIS_ELEMENTS", 256)
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    pos = np.arange(64)
    with pytest.raises(AssertionError) as exc:
        assert_rope_close(honest(x, pos, layout="interleaved"), x, pos, layout="half")
    assert "the other layout" in diagnosis(exc)
    assert "diagnosis run on" in str(exc.value)


def test_a_failing_alternative_never_hides_the_assertion(monkeypatch):
    from pemath.testing._rope import diagnose as _diagnose

    def broken(j, rotation):
        raise RuntimeError("boom")

    monkeypatch.setattr(_diagnose, "_table_mix", broken)
    x = RNG.standard_normal((4, 8))
    with pytest.raises(AssertionError, match=r"2 alternative\(s\) raised an error") as exc:
        assert_rope_close(np.asarray(rope.apply(x, np.arange(4) + 1, layout="half")), x, np.arange(4), layout="half")
    assert "shifted by +1" in diagnosis(exc)


def test_every_public_function_is_listed():
    import types

    for attr, value in vars(pt).items():
        if attr.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
            continue
        if getattr(value, "__module__", "").startswith("pemath.testing"):
            assert attr in pt.__all__, attr


def test_user_tolerance_overrides_the_derived_one():
    x = RNG.standard_normal((8, 16)).astype(BF16)
    pos = np.arange(8)
    actual = honest(x, pos, layout="half", dtype=BF16)
    assert_rope_close(actual, x, pos, layout="half")
    with pytest.raises(AssertionError, match="Tolerance: given, atol=0 "):
        assert_rope_close(actual, x, pos, layout="half", rtol=0.0, atol=0.0)
    wrong = honest(x, pos + 1, layout="half", dtype=BF16)
    assert_rope_close(wrong, x, pos, layout="half", rtol=0.0, atol=10.0)


# --------------------------------------------------------------------------- bad arguments


def test_argument_errors_name_the_argument():
    x = np.ones((4, 8), dtype=np.float32)
    ok = np.asarray(rope.apply(x, np.arange(4), layout="half"))
    pos = np.arange(4)
    with pytest.raises(ValueError, match="actual has shape"):
        assert_rope_close(ok[:, :6], x, pos, layout="half")
    with pytest.raises(TypeError, match="actual must be an array"):
        assert_rope_close(ok.tolist(), x, pos, layout="half")
    with pytest.raises(TypeError, match="actual must have a real floating dtype"):
        assert_rope_close(ok.astype(np.int32), x, pos, layout="half")
    with pytest.raises(TypeError, match="x must have a real floating dtype"):
        assert_rope_close(ok, x.astype(np.int64), pos, layout="half")
    with pytest.raises(ValueError, match="x must be finite"):
        assert_rope_close(ok, np.full((4, 8), np.nan), pos, layout="half")
    with pytest.raises(TypeError, match="layout is required"):
        assert_rope_close(ok, x, pos)
    with pytest.raises(ValueError, match="layout must be one of"):
        assert_rope_close(ok, x, pos, layout="rotate_half")
    with pytest.raises(ValueError, match="positions of shape"):
        assert_rope_close(ok, x, np.arange(5), layout="half")
    with pytest.raises(TypeError, match="positions must be"):
        assert_rope_close(ok, x, "0123", layout="half")
    with pytest.raises(ValueError, match="rotary_dim must be an even"):
        assert_rope_close(ok, x, pos, layout="half", rotary_dim=3)
    with pytest.raises(ValueError, match="base must be > 0"):
        assert_rope_close(ok, x, pos, layout="half", base=-1.0)
    with pytest.raises(TypeError, match="scaling must be"):
        assert_rope_close(ok, x, pos, layout="half", scaling="yarn")
    with pytest.raises(ValueError, match="rtol and atol must be given together"):
        assert_rope_close(ok, x, pos, layout="half", rtol=1e-3)
    with pytest.raises(ValueError, match="atol must be >= 0"):
        assert_rope_close(ok, x, pos, layout="half", rtol=0.0, atol=-1.0)
    with pytest.raises(TypeError, match="rtol must be a real number"):
        assert_rope_close(ok, x, pos, layout="half", rtol="1e-3", atol=0.0)


# --------------------------------------------------------------------------- sinusoidal


def honest_sinusoidal(pos, dim, convention, dtype=np.float32):
    half = dim // 2
    if convention == "tensor2tensor":
        w = np.exp(np.arange(half, dtype=np.float32) * np.float32(-math.log(10000.0) / (half - 1)))
    else:
        w = np.float32(1.0) / np.power(np.float32(10000.0), np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))
    ang = np.asarray(pos, dtype=np.float32)[:, None] * w.astype(np.float32)
    s, c = np.sin(ang), np.cos(ang)
    if convention == "interleaved":
        out = np.stack([s, c], axis=-1).reshape(len(pos), dim)
    else:
        out = np.concatenate([s, c], axis=-1)
    return out.astype(dtype)


@pytest.mark.parametrize("convention", sinusoidal.CONVENTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_honest_sinusoidal_tables_pass(convention, dtype):
    assert_sinusoidal_close(honest_sinusoidal(LONG, 64, convention, dtype), LONG, 64, convention=convention)


@pytest.mark.parametrize(
    "make, cause",
    [
        (lambda p: honest_sinusoidal(p, 32, "tensor2tensor"), "convention='tensor2tensor'"),
        (lambda p: honest_sinusoidal(p + 1, 32, "concat"), "shifted by +1"),
        (lambda p: honest_sinusoidal(p + 2, 32, "concat"), "padding_idx + 1"),
        (lambda p: honest_sinusoidal(p + 40, 32, "concat"), "shifted by +40"),
        (lambda p: np.roll(honest_sinusoidal(p, 32, "concat"), 16, axis=1), "sin and cos swapped"),
    ],
    ids=["convention", "+1", "fairseq offset", "constant", "swapped"],
)
def test_sinusoidal_bugs_are_diagnosed(make, cause):
    pos = np.arange(40)
    with pytest.raises(AssertionError) as exc:
        assert_sinusoidal_close(make(pos), pos, 32, convention="concat")
    assert cause in diagnosis(exc)
    assert "Mismatched elements: " in str(exc.value) and "frequency index" in str(exc.value)


def test_sinusoidal_argument_errors():
    pe = honest_sinusoidal(np.arange(4), 8, "concat")
    with pytest.raises(ValueError, match="actual has shape"):
        assert_sinusoidal_close(pe, np.arange(5), 8, convention="concat")
    with pytest.raises(TypeError, match="convention is required"):
        assert_sinusoidal_close(pe, np.arange(4), 8)
    with pytest.raises(ValueError, match="dim must be >= 1"):
        assert_sinusoidal_close(pe, np.arange(4), 0, convention="concat")
    with pytest.raises(TypeError, match="actual must be an array"):
        assert_sinusoidal_close(pe.tolist(), np.arange(4), 8, convention="concat")


# --------------------------------------------------------------------------- ALiBi


def honest_alibi(n, q_len, k_len, dtype=np.float32, mask=-np.inf):
    # the reference get_slopes, in float32; queries the last q_len keys
    def pow2(k):
        start = np.float32(2.0 ** (-(2.0 ** -(math.log2(k) - 3))))
        return [start * start**i for i in range(k)]

    c = 2 ** math.floor(math.log2(n))
    slopes = pow2(c) + (pow2(2 * c)[0::2][: n - c] if n > c else [])
    m = np.array(slopes, dtype=np.float32)[:, None, None]
    i = np.arange(q_len)[:, None] + (k_len - q_len)
    j = np.arange(k_len)[None, :]
    out = m * (j - i).astype(np.float32)
    return np.where(j > i, np.float32(mask), out).astype(dtype)


@pytest.mark.parametrize("n", [8, 12])
def test_honest_alibi_passes_with_inf_or_finite_masks(n):
    assert_alibi_close(honest_alibi(n, 16, 16), n, 16, 16, form="causal")
    assert_alibi_close(honest_alibi(n, 4, 4000, np.float16), n, 4, 4000, form="causal")
    assert_alibi_close(honest_alibi(n, 16, 16, mask=np.finfo(np.float32).min), n, 16, 16, form="causal")
    with pytest.raises(AssertionError, match="masked"):
        assert_alibi_close(honest_alibi(n, 16, 16, mask=-1.0), n, 16, 16, form="causal")


@pytest.mark.parametrize(
    "actual, heads, q_len, cause",
    [
        (alibi.bias(8, 6, 6, form="shifted"), 8, 6, "form='shifted'"),
        (np.broadcast_to(alibi.slopes(8)[:, None, None] * np.arange(6.0), (8, 6, 6)), 8, 6,
         "without its causal mask"),
        (-alibi.bias(8, 6, 6, form="symmetric"), 8, 6, "sign of the bias flipped"),
        (alibi.bias(8, 6, 6, form="causal")[::-1], 8, 6, "reverse order"),
        (alibi.bias([2.0 ** (-8 * (k + 1) / 12) for k in range(12)], 6, 6, form="causal"), 12, 6, "naive slopes"),
        (alibi.bias(8, 2, 6, form="causal", offset=0), 8, 2, "offset=0"),
        (np.swapaxes(alibi.bias(8, 6, 6, form="causal"), 1, 2), 8, 6, "transposed"),
    ],
    ids=["form", "unmasked", "sign", "reversed", "naive", "offset", "transposed"],
)
def test_alibi_bugs_are_diagnosed(actual, heads, q_len, cause):
    form = "symmetric" if cause.startswith("sign") else "causal"
    with pytest.raises(AssertionError) as exc:
        assert_alibi_close(np.ascontiguousarray(actual), heads, q_len, 6, form=form)
    assert cause in diagnosis(exc)
    assert re.search(r"Mismatched elements: \d+ / \d+", str(exc.value)) and "head " in str(exc.value)


def test_alibi_argument_errors():
    b = alibi.bias(8, 4, 4, form="causal")
    with pytest.raises(ValueError, match="actual has shape"):
        assert_alibi_close(b[:4], 8, 4, 4, form="causal")
    with pytest.raises(TypeError, match="form is required"):
        assert_alibi_close(b, 8, 4, 4)
    with pytest.raises(ValueError, match="q_len must be >= 1"):
        assert_alibi_close(b, 8, 0, 4, form="causal")


# --------------------------------------------------------------------------- T5


def test_t5_buckets_exact_and_diagnosed():
    rel = np.arange(-200, 200)[None, :] - np.arange(3)[:, None]
    assert_t5_buckets_equal(t5.bucket(rel), rel)
    cases = [
        (t5.bucket(-rel), "query - key instead of key - query"),
        (t5.bucket(rel, bidirectional=False), "bidirectional=False"),
        (t5.bucket(rel, max_distance=256), "max_distance=256"),
    ]
    for actual, cause in cases:
        with pytest.raises(AssertionError) as exc:
            assert_t5_buckets_equal(actual, rel)
        assert cause in diagnosis(exc)
        assert "First mismatch at index" in str(exc.value)
    off = np.asarray(t5.bucket(rel)).copy()
    off[1, 5] += 1
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 1200") as exc:
        assert_t5_buckets_equal(off, rel)
    assert "no known bug" in diagnosis(exc)


def test_t5_exact_floor_differs_from_float32_and_is_diagnosed():
    # num_buckets 72 unidirectional, max_distance 100: the float32 and exact floors differ at distance 60
    rel = -np.arange(0, 100)
    f32 = t5.bucket(rel, bidirectional=False, num_buckets=72, max_distance=100)
    exact = t5.bucket(rel, bidirectional=False, num_buckets=72, max_distance=100, exact=True)
    assert not np.array_equal(f32, exact)
    with pytest.raises(AssertionError) as exc:
        assert_t5_buckets_equal(exact, rel, bidirectional=False, num_buckets=72, max_distance=100)
    assert "exact floor" in diagnosis(exc)


def test_t5_argument_errors():
    rel = np.arange(-5, 5)
    with pytest.raises(TypeError, match="actual must hold integers"):
        assert_t5_buckets_equal(np.asarray(t5.bucket(rel), dtype=np.float32), rel)
    with pytest.raises(ValueError, match="actual has shape"):
        assert_t5_buckets_equal(t5.bucket(rel)[:5], rel)
    with pytest.raises(ValueError, match="num_buckets must be >= 4"):
        assert_t5_buckets_equal(t5.bucket(rel), rel, num_buckets=2)
    with pytest.raises(TypeError, match="relative_position must hold integers"):
        assert_t5_buckets_equal(t5.bucket(rel), rel.astype(np.float64))
