"""The precision guard: each PrecisionWarning fires exactly when its documented criterion holds.

Criteria (docs/tolerance.rst, "Precision warnings"; pemath/_precision.py):

* InexactPositionsWarning: floating positions with max |p| > max_exact_position(dtype); positions
  converted to a narrower working dtype beyond its range; pipelines' positions above 2**24.
* TablePrecisionWarning: a table in dtype T whose phases are computed in W (narrower than
  float64) with u_W max|p w| > u_T.
* VacuousToleranceWarning: an oracle assert whose derived tolerance admits every value of some
  element (tau >= |a| rho + |t| for RoPE, tau >= 1 + |t| for a sinusoid).

Clean cases must emit no warning at all (``warnings.simplefilter("error")``).
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pemath
from pemath import _compat, rope, sinusoidal
from pemath.positions import max_exact_position
from pemath.testing import assert_rope_close, assert_sinusoidal_close, pipelines, rope_tolerance

from .conftest import to_np

BF16 = ml_dtypes.bfloat16


def _one(record, category):
    got = [w for w in record if issubclass(w.category, pemath.PrecisionWarning)]
    assert len(got) == 1, [str(w.message) for w in got]
    assert got[0].category is category
    return got[0]


def test_the_classes_are_exported_and_filterable():
    for cls in (pemath.InexactPositionsWarning, pemath.TablePrecisionWarning, pemath.VacuousToleranceWarning):
        assert issubclass(cls, pemath.PrecisionWarning) and cls.__name__ in pemath.__all__
    assert issubclass(pemath.PrecisionWarning, UserWarning)
    # three distinct classes: a user can silence one and keep the others
    assert len({pemath.InexactPositionsWarning, pemath.TablePrecisionWarning, pemath.VacuousToleranceWarning}) == 3


# --------------------------------------------------------------------------- inexact positions


@pytest.mark.parametrize(
    "dtype, limit, past",
    [(np.float16, 2048, 2050), (BF16, 256, 258), (np.float32, 2**24, 2**24 + 2), (ml_dtypes.float8_e4m3fn, 16, 18)],
    ids=["float16", "bfloat16", "float32", "float8_e4m3fn"],
)
def test_numpy_floating_positions_warn_one_past_the_exact_range(dtype, limit, past):
    x = np.ones((2, 4))
    assert max_exact_position(np.dtype(dtype)) == limit
    at = np.array([0, limit], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.apply(x, at, layout="half")  # every integer up to the limit is exact: silent
        rope.apply(x, -at, layout="half")
    # limit + 1 is not representable: past is the next value of the dtype
    assert float(np.asarray(limit + 1, dtype=np.float64).astype(dtype)) != limit + 1
    assert float(np.asarray(past, dtype=np.float64).astype(dtype)) == past
    for sign in (1, -1):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            rope.apply(x, np.array([0, sign * past], dtype=dtype), layout="half")
        w = _one(rec, pemath.InexactPositionsWarning)
        msg = str(w.message)
        name = np.dtype(dtype).name
        for part in ("positions", f"are {name}", str(limit), f"is {int(past)}", "int64", "float64"):
            assert part in msg, (part, msg)
        assert w.filename == __file__  # attributed to the caller, not to pemath's internals


def test_every_backend_warns_for_float32_positions_beyond_2_24(xp):
    x = xp.ones((2, 4), dtype=xp.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.apply(x, xp.asarray([0.0, 2.0**24], dtype=xp.float32), layout="interleaved")
    with pytest.warns(pemath.InexactPositionsWarning, match=r"float32.*16777216 \(2\*\*24\).*16777218"):
        rope.apply(x, xp.asarray([0.0, 2.0**24 + 2], dtype=xp.float32), layout="interleaved")


def test_torch_half_and_bfloat16_positions():
    torch = pytest.importorskip("torch")
    x = torch.ones(2, 4, dtype=torch.float64)
    for dtype, limit, past in ((torch.float16, 2048, 2050), (torch.bfloat16, 256, 258)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rope.apply(x, torch.tensor([0, limit], dtype=dtype), layout="half")
        with pytest.warns(pemath.InexactPositionsWarning, match=rf"are {dtype}, .* {limit} .*is {past}:"):
            rope.apply(x, torch.tensor([0, past], dtype=dtype), layout="half")


@pytest.mark.parametrize(
    "call",
    [
        lambda p: rope.cos_sin(p, 4, layout="half"),
        lambda p: sinusoidal.encode(p, 4, convention="concat"),
        lambda p: rope.freqs_cis(p, 4),
        lambda p: rope.xpos.apply(np.ones((2, 4)), p, layout="half", role="query"),
        lambda p: rope.apply_axial(np.ones((2, 8)), np.stack([p, p], axis=-1), layout="half"),
        lambda p: rope.long_term_decay(p, 8),
        lambda p: assert_rope_close(rope.apply(np.ones((2, 4)), p.astype(np.float64), layout="half"),
                                    np.ones((2, 4)), p, layout="half"),
    ],
    ids=["cos_sin", "sinusoidal", "freqs_cis", "xpos", "axial", "long_term_decay", "assert_rope_close"],
)
def test_every_entry_point_that_takes_positions_is_guarded(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(np.array([1, 2048], dtype=np.float16))
    with pytest.warns(pemath.InexactPositionsWarning, match=r"float16.*2048.*4096"):
        call(np.array([1, 4096], dtype=np.float16))


def test_the_argument_name_is_the_callers():
    with pytest.warns(pemath.InexactPositionsWarning, match=r"^distances are bfloat16.*max \|distances\| is 512"):
        rope.long_term_decay(np.array([0, 512], dtype=BF16), 8)


def test_python_floats_are_float64_and_warn_only_beyond_2_53():
    x = np.ones((1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.apply(x, [2.0**53], layout="half")
        rope.apply(x, 2.0**24 + 1.0, layout="half")
    with pytest.warns(pemath.InexactPositionsWarning, match=r"Python floats \(float64\).*2\*\*53.*18014398509481984"):
        rope.apply(x, [2.0**54], layout="half")


def test_python_floats_are_not_rounded_to_torchs_default_float32():
    # torch.asarray([16777217.0]) is float32 by default and would hold 16777216: a silent loss
    torch = pytest.importorskip("torch")
    x = torch.ones(1, 2, dtype=torch.float64)
    p = 2.0**24 + 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = to_np(rope.apply(x, [p], layout="half", base=10.0))
    exact = np.array([math.cos(p) - math.sin(p), math.sin(p) + math.cos(p)])
    np.testing.assert_allclose(got[0], exact, rtol=0, atol=1e-8)
    rounded = np.array([math.cos(2.0**24) - math.sin(2.0**24), math.sin(2.0**24) + math.cos(2.0**24)])
    assert np.max(np.abs(got[0] - rounded)) > 0.1


def test_integer_positions_never_warn_and_beyond_2_53_are_refused():
    x = np.ones((3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.apply(x, np.array([0, 2**40, 2**53], dtype=np.int64), layout="half")
        rope.apply(x, np.array([0, 255, 127], dtype=np.uint8), layout="half")
    with pytest.raises(ValueError, match="positions holds 9007199254740993"):
        rope.apply(x, np.array([0, 1, 2**53 + 1], dtype=np.int64), layout="half")


@pytest.fixture
def float32_backend(monkeypatch):
    """NumPy made to behave like a backend without float64 (JAX without x64, Apple MPS)."""

    def working_dtype(xp, device):
        return xp.float32

    monkeypatch.setattr(_compat, "working_dtype", working_dtype)


def test_positions_converted_to_a_float32_working_dtype(float32_backend):
    x = np.ones((2, 2), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.apply(x, np.array([0, 2**24]), layout="half")
    with pytest.warns(pemath.InexactPositionsWarning, match=r"16777217.*converted to float32.*no float64"):
        rope.apply(x, np.array([0, 2**24 + 1]), layout="half")
    with pytest.warns(pemath.InexactPositionsWarning, match=r"converted to float32"):
        rope.apply(x, [0.0, 2.0**24 + 1], layout="half")


def test_pipelines_warn_beyond_float32_positions():
    x = np.ones((1, 4), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (pipelines.hf, pipelines.meta, pipelines.gptj):
            f(x, [2**24])
    for f in (pipelines.hf, pipelines.meta, pipelines.gptj):
        with pytest.warns(pemath.InexactPositionsWarning, match=r"positions reach 16777217, beyond 2\*\*24.*float32"):
            f(x, [2**24 + 1])
        with pytest.warns(pemath.InexactPositionsWarning, match="16777217"):
            f(x, [-(2**24) - 1])


# --------------------------------------------------------------------------- tables


def test_narrow_tables_from_float64_phases_are_correctly_rounded_and_silent():
    # The documented claim behind *not* warning: each value is within u_T |v| of the truth
    # (plus float64's own error, below 1e-8 here), at short and long positions alike.
    pos = np.array([0, 1, 99_999, 100_000, 999_999, 10**6, 2**24 + 1])
    w = 10000.0 ** (-np.arange(4) / 4.0)
    phase = pos[:, None].astype(np.float64) * w
    want_c, want_s = np.cos(phase), np.sin(phase)
    for dtype, u in ((np.float16, 2.0**-11), (BF16, 2.0**-8), (np.float32, 2.0**-24)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            c, s = rope.cos_sin(pos, 8, layout="interleaved", dtype=dtype)
            pe = sinusoidal.encode(pos, 8, convention="concat", dtype=dtype)
        for got, want in ((c[:, ::2], want_c), (s[:, ::2], want_s), (pe[:, :4], want_s), (pe[:, 4:], want_c)):
            err = np.abs(got.astype(np.float64) - want)
            assert np.all(err <= u * np.abs(want) + 1e-8), (dtype, err.max())


@pytest.mark.parametrize("dtype, u_t", [(np.float16, 2.0**-11), (BF16, 2.0**-8)], ids=["float16", "bfloat16"])
def test_tables_with_float32_phases_warn_once_the_phase_error_exceeds_u_t(float32_backend, dtype, u_t):
    edge = int(u_t / 2.0**-24)  # 8192 for float16, 65536 for bfloat16: u32 * phase == u_T at theta_0 = 1
    for table in (lambda p: rope.cos_sin(p, 4, layout="half", dtype=dtype),
                  lambda p: sinusoidal.encode(p, 4, convention="concat", dtype=dtype)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            table(np.array([0, edge]))  # u32 * edge == u_T: not more
            table(np.array([-edge, 3]))
        with pytest.warns(pemath.TablePrecisionWarning) as rec:
            table(np.array([0, edge + 1]))
        msg = str(rec[0].message)
        name = np.dtype(dtype).name
        for part in (f"in {name}", "float32", str(edge + 1), "float64", f"{u_t:.3g}"):
            assert part in msg, (part, msg)


def test_tables_without_a_requested_dtype_do_not_repeat_the_fallback_warning(float32_backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.cos_sin(np.arange(10**5), 4, layout="half")
        sinusoidal.encode(np.arange(10**5), 4, convention="concat")


def test_table_dtypes_that_cannot_hold_cos_and_sin_are_refused():
    for table in (lambda dt: rope.cos_sin([0, 1], 4, layout="half", dtype=dt),
                  lambda dt: sinusoidal.encode([0, 1], 4, convention="concat", dtype=dt)):
        with pytest.raises(TypeError, match="dtype must be a real floating dtype"):
            table(np.int8)
        with pytest.raises(ValueError, match="dtype float8_e8m0fnu cannot hold negative numbers or zero"):
            table(ml_dtypes.float8_e8m0fnu)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = table(ml_dtypes.float8_e4m3fn)
            for a in out if isinstance(out, tuple) else (out,):
                assert a.dtype == ml_dtypes.float8_e4m3fn and np.all(np.isfinite(a.astype(np.float32)))


# --------------------------------------------------------------------------- vacuous tolerances


def test_a_vacuous_tolerance_warns_and_indeed_cannot_fail():
    # d = 2, x = (1, 0): the pair rotates on the unit circle. At 2**26 the honest float32 phase is
    # uncertain by 4 radians, tau = 2 (2**26 u + ...) > 8 >= 1 + |t|: any point of the circle passes.
    x = np.array([[1.0, 0.0]], dtype=np.float32)
    p = [2**26]
    truth = rope.apply(x, p, layout="half")
    for wrong in (-truth, truth[:, ::-1], np.zeros_like(truth)):  # other phases, and not even on the circle
        with pytest.warns(pemath.VacuousToleranceWarning) as rec:
            assert_rope_close(wrong, x, p, layout="half")
    msg = str(rec[0].message)
    for part in ("cannot fail at 2 of 2 elements", "position 67108864", "frequency index 0", "rtol and atol"):
        assert part in msg, (part, msg)
    assert rec[0].filename == __file__


def test_short_positions_and_explicit_tolerances_are_silent():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 128)).astype(np.float32)
    pos = np.array([0, 1, 4096, 65_536, 100_000, 300_000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_rope_close(rope.apply(x, pos, layout="half"), x, pos, layout="half")
        big = np.array([2**26, 2**27])
        y = rope.apply(x[:2], big, layout="half")
        assert_rope_close(y, x[:2], big, layout="half", rtol=0.0, atol=1e-5)  # the caller's choice: not judged
        pe = sinusoidal.encode(pos, 64, convention="concat", dtype=np.float32)
        assert_sinusoidal_close(pe, pos, 64, convention="concat")


def test_a_zero_pair_is_never_vacuous():
    x = np.zeros((1, 4), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_rope_close(np.zeros((1, 4), dtype=np.float32), x, [2**30], layout="half")
    with pytest.raises(AssertionError):
        assert_rope_close(np.full((1, 4), 1e-3, dtype=np.float32), x, [2**30], layout="half")


def test_sinusoidal_vacuity():
    pos = np.array([2**26])
    truth = sinusoidal.encode(pos, 4, convention="concat")
    with pytest.warns(pemath.VacuousToleranceWarning, match=r"elements of the sinusoidal table: from position 67108864"):
        assert_sinusoidal_close(-truth, pos, 4, convention="concat")


@settings(max_examples=40)
@given(
    p=st.integers(0, 4 * 10**6),
    seed=st.integers(0, 2**32 - 1),
    layout=st.sampled_from(["half", "interleaved"]),
)
def test_the_warning_fires_exactly_when_some_element_admits_every_value(p, seed, layout):
    # The documented criterion, checked from the public pieces: the derived tolerance
    # (rope_tolerance) against the element's range [-rho, rho] around the truth.
    x = np.random.default_rng(seed).standard_normal((1, 8)).astype(np.float32)
    tol = rope_tolerance(x, [p], layout=layout, base=100.0)
    truth = np.asarray(rope.apply(x.astype(np.float64), [p], layout=layout, base=100.0))
    xa, xb = (x[:, :4], x[:, 4:]) if layout == "half" else (x[:, 0::2], x[:, 1::2])
    rho = np.hypot(xa.astype(np.float64), xb.astype(np.float64))
    rho = np.concatenate([rho, rho], axis=1) if layout == "half" else np.repeat(rho, 2, axis=1)
    expect = bool(np.any(tol >= rho + np.abs(truth)))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert_rope_close(truth.astype(np.float32), x, [p], layout=layout, base=100.0)
    got = any(issubclass(w.category, pemath.VacuousToleranceWarning) for w in rec)
    assert got == expect
    assert all(issubclass(w.category, pemath.VacuousToleranceWarning) for w in rec)


def test_dense_matrix_position_is_checked_like_positions():
    """rope.matrix's scalar position: ints beyond 2**53 refused, narrow floats beyond their exact range warned."""
    from pemath import rope

    with pytest.raises(ValueError, match="position"):
        rope.matrix(2**53 + 1, 4, layout="half")
    with pytest.warns(pemath.InexactPositionsWarning, match="position"):
        rope.matrix(np.float16(4096), 4, layout="half")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.matrix(np.float16(2048), 4, layout="half")
        rope.matrix(2**53, 4, layout="half")
