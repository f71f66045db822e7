"""Fuzzing pemath.testing (the asserts, the tolerances, the emulated pipelines, the strategies)."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from typing import Any

import array_api_strict as xps
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath.rope import xpos as xpos_mod
from pemath import alibi, rope, sinusoidal, t5
from pemath import scaling as sc
from pemath import testing as pt
from pemath.testing import pipelines, strategies

from ._common import LEADS, SCALINGS, check_array, floats_array, int_positions, suffix_shapes
from ._fuzz import (
    H,
    Spec,
    choices,
    covers,
    equiv,
    float_array_variants,
    fuzz_settings,
    ints,
    layout_variants,
    loosen,
    maybe,
    nonfinite_variants,
    positions_variants,
    reals,
    reject,
    run_spec,
    valid,
)
from .test_fuzz_rope import LAYOUTS, _rotary_kind, scaling_kind, to_np

PASSED = "passed"

# libm="torch" needs torch: without it the only valid choice is "exact" (ImportError otherwise, by design)
LIBMS = ("exact", "torch") if importlib.util.find_spec("torch") is not None else ("exact",)


def _host(h: H) -> H:
    """Positions of a host-side check: what must be refused stays refused, except mixed backends
    (the oracle compares on the host: a strict array next to NumPy ones is harmless); the rest may
    or may not be the question asked."""
    return h if h.expect == "reject" and "strict" not in h.label else maybe(h.value, h.label)


def _verdict(fn):
    """An assert as a function of its verdict: 'passed', or ('failed', message) for its AssertionError."""

    def call(**kw: Any) -> Any:
        try:
            fn(**kw)
        except AssertionError as exc:
            assert str(exc).strip(), "an empty AssertionError message"
            return ("failed", type(exc).__name__)
        return PASSED

    call.__name__ = fn.__name__
    return call


def _must_fail_on_nan(result: Any, kw: dict[str, Any]) -> None:
    assert result == PASSED or (isinstance(result, tuple) and result[0] == "failed")
    a = kw["actual"]
    an = np.asarray(to_np(a) if hasattr(a, "shape") else a, dtype=np.float64)
    if np.any(np.isnan(an)):
        assert result != PASSED, "an output holding NaN passed the assert"


def _tolerance_kinds() -> dict[str, Any]:
    # one without the other is refused: their validity depends on each other
    return {"rtol": loosen(reals(nonnegative=True, optional=True, typical=(1e-3,))),
            "atol": loosen(reals(nonnegative=True, optional=True, typical=(1e-3,)))}


def _actual_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    with np.errstate(all="ignore"):
        return _actual_variants(base["actual"])


def _actual_variants(a: Any) -> st.SearchStrategy[H]:
    if not isinstance(a, np.ndarray):
        return st.sampled_from([valid(a)])
    out = [h for h in layout_variants(a)] + [valid(a)] + [maybe(h.value, h.label) for h in nonfinite_variants(a)]
    out += [maybe(a.astype(np.float32), "float32"), maybe(a.astype(np.float16), "float16"),
            maybe(a.astype(ml_dtypes.bfloat16), "bfloat16"), maybe(xps.asarray(a), "strict"),
            reject(a.astype(np.complex128), "complex"), reject(a.astype(str), "str"), maybe(a.tolist(), "list"),
            reject(a.reshape(-1)[:-1] if a.size else np.zeros(3), "wrong shape"), reject(None), reject("x"),
            maybe(a.astype(np.int64), "int"), maybe(a.astype(bool), "bool")]
    return st.sampled_from(out)


# ---------------------------------------------------------------------------------------
# the asserts


@st.composite
def _rope_assert_base(draw) -> dict[str, Any]:
    d = draw(st.sampled_from([2, 4, 8]))
    lead = draw(st.sampled_from(LEADS[:4]))
    x = draw(floats_array(lead + (d,))).astype(np.float32)
    pos = draw(int_positions(draw(suffix_shapes(lead)), lo=0, hi=3000))
    layout = draw(st.sampled_from(LAYOUTS))
    scaling = draw(st.sampled_from(SCALINGS))
    actual = rope.apply(x, pos, layout=layout, scaling=scaling)
    return {"actual": actual, "x": x, "positions": pos, "layout": layout, "scaling": scaling}


ASSERT_ROPE = Spec(
    _verdict(pt.assert_rope_close),
    _rope_assert_base(),
    {"actual": _actual_kind, "x": loosen(lambda b: st.sampled_from(float_array_variants(b["x"]))),
     "positions": lambda b: st.sampled_from([_host(h) for h in
                                             positions_variants(b["positions"], tuple(b["x"].shape[:-1]),
                                                                strict=False)]),
     "layout": choices(LAYOUTS), "base": loosen(reals(positive=True, typical=(10000.0,), optional=True)),
     "rotary_dim": loosen(_rotary_kind), "scaling": loosen(scaling_kind),
     "seq_len": loosen(ints(minimum=1, optional=True, typical=(10,), huge="maybe")), **_tolerance_kinds()},
    _must_fail_on_nan,
    aliases={"actual": ("x",), "x": ("x.shape", "actual"), "rtol": ("atol",), "atol": ("rtol",),
             "rotary_dim": ("x.shape",)},
)


def _backward_base(b: dict[str, Any]) -> dict[str, Any]:
    """The forward base as a backward call: dy for x, dx = R(p)^T dy for actual."""
    out = {k: v for k, v in b.items() if k != "x"}
    out["dy"] = b["x"]
    out["actual"] = rope.apply(b["x"], b["positions"], layout=b["layout"], scaling=b["scaling"], inverse=True)
    return out


ASSERT_ROPE_BACKWARD = Spec(
    _verdict(pt.assert_rope_backward_close),
    _rope_assert_base().map(_backward_base),
    {**{k: v for k, v in ASSERT_ROPE.kinds.items() if k not in ("x", "positions")},
     "dy": loosen(lambda b: st.sampled_from(float_array_variants(b["dy"]))),
     "positions": lambda b: st.sampled_from([_host(h) for h in positions_variants(
         b["positions"], tuple(b["dy"].shape[:-1]), strict=False)]),
     "rotary_dim": loosen(lambda b: _rotary_kind({"x": b["dy"]}))},
    _must_fail_on_nan,
    aliases={"actual": ("x", "dy"), "dy": ("x.shape", "x", "actual"), "rtol": ("atol",), "atol": ("rtol",),
             "rotary_dim": ("x.shape",)},
)


@st.composite
def _xpos_base(draw) -> dict[str, Any]:
    d = draw(st.sampled_from([2, 4, 8]))
    lead = draw(st.sampled_from(LEADS[:4]))
    x = draw(floats_array(lead + (d,))).astype(np.float32)
    pos = draw(int_positions(draw(suffix_shapes(lead)), lo=0, hi=3000))
    layout = draw(st.sampled_from(LAYOUTS))
    role = draw(st.sampled_from(["query", "key"]))
    with np.errstate(all="ignore"):
        actual = xpos_mod.apply(x, pos, layout=layout, role=role, center=1500.0)
    return {"actual": actual, "x": x, "positions": pos, "layout": layout, "role": role, "center": 1500.0}


def _xpos_kinds() -> dict[str, Any]:
    return {"x": loosen(lambda b: st.sampled_from(float_array_variants(b["x"]))),
            "positions": lambda b: st.sampled_from([_host(h) for h in positions_variants(
                b["positions"], tuple(b["x"].shape[:-1]), strict=False)]),
            "layout": choices(LAYOUTS), "role": choices(("query", "key")),
            "base": loosen(reals(positive=True, typical=(10000.0,), optional=True)),
            "gamma": loosen(reals(positive=True, typical=(0.4,))),
            "scale_base": loosen(reals(positive=True, typical=(512.0,))),
            "center": lambda b: st.sampled_from([valid(0.0), valid(1500.0), maybe("torchscale"), reject("middle"),
                                                 reject(None), reject(True)]),
            "rotary_dim": loosen(_rotary_kind)}


def _no_raise_on_overflow(result: Any, kw: dict[str, Any]) -> None:
    assert result == PASSED or (isinstance(result, tuple) and result[0] == "failed")


ASSERT_XPOS = Spec(
    _verdict(pt.assert_xpos_close), _xpos_base(),
    {"actual": _actual_kind, **_xpos_kinds(), **_tolerance_kinds()},
    _no_raise_on_overflow,
    aliases={"actual": ("x",), "x": ("x.shape", "actual"), "rtol": ("atol",), "atol": ("rtol",),
             "rotary_dim": ("x.shape",), "center": ("seq_len",), "positions": ("scale", "xPos")},
)
XPOS_TOL = Spec(
    pt.xpos_tolerance,
    st.builds(lambda b: {k: b[k] for k in ("x", "positions", "layout", "role", "center")}, _xpos_base()),
    {**_xpos_kinds(), "dtype": lambda b: st.sampled_from(
        [valid(None), valid(np.float32), valid("float16"), reject(np.int32), reject("nope")])},
    lambda result, kw: _check_rope_tol(result, kw),
    aliases={"x": ("x.shape", "dtype"), "rotary_dim": ("x.shape",), "center": ("seq_len",),
             "positions": ("scale", "xPos")},
)


@st.composite
def _sin_assert_base(draw) -> dict[str, Any]:
    pos = draw(int_positions(draw(st.sampled_from([(), (3,), (2, 2)])), lo=0, hi=3000))
    dim = draw(st.sampled_from([4, 8]))
    conv = draw(st.sampled_from(sinusoidal.CONVENTIONS))
    actual = sinusoidal.encode(pos, dim, convention=conv, dtype=np.float32)
    return {"actual": actual, "positions": pos, "dim": dim, "convention": conv}


ASSERT_SIN = Spec(
    _verdict(pt.assert_sinusoidal_close),
    _sin_assert_base(),
    {"actual": _actual_kind, "dim": loosen(ints(minimum=1, typical=(4,))),
     "positions": lambda b: st.sampled_from([_host(h) for h in
                                             positions_variants(b["positions"], None, strict=False)]),
     "base": loosen(reals(positive=True, typical=(10000.0,))), "convention": choices(sinusoidal.CONVENTIONS),
     **_tolerance_kinds()},
    _must_fail_on_nan,
    aliases={"actual": ("positions", "dim"), "dim": ("actual", "convention"), "positions": ("actual",),
             "rtol": ("atol",), "atol": ("rtol",)},
)


@st.composite
def _alibi_assert_base(draw) -> dict[str, Any]:
    heads, q, k = draw(st.sampled_from([1, 4])), draw(st.integers(1, 3)), draw(st.integers(3, 5))
    form = draw(st.sampled_from(alibi.FORMS))
    return {"actual": alibi.bias(heads, q, k, form=form, dtype=np.float32), "heads": heads, "q_len": q,
            "k_len": k, "form": form}


ASSERT_ALIBI = Spec(
    _verdict(pt.assert_alibi_close),
    _alibi_assert_base(),
    {"actual": _actual_kind, "heads": lambda b: loosen(ints(minimum=1, typical=(4,)))(b).map(
        lambda h: maybe(h.value, h.label) if h.label in ("1-d array", "list") else h),
     "q_len": loosen(ints(minimum=1, typical=(2,))), "k_len": loosen(ints(minimum=1, typical=(4,))),
     "form": choices(alibi.FORMS), "offset": loosen(ints(optional=True, typical=(0,))), **_tolerance_kinds()},
    _must_fail_on_nan,
    aliases={"actual": ("heads", "q_len", "k_len"), "heads": ("actual",), "q_len": ("actual", "k_len", "offset"),
             "k_len": ("actual", "q_len", "offset"), "offset": ("q_len", "k_len"), "rtol": ("atol",),
             "atol": ("rtol",), "form": ("q_len", "k_len")},
)


@st.composite
def _t5_assert_base(draw) -> dict[str, Any]:
    rp = draw(int_positions(draw(st.sampled_from([(), (4,), (2, 3)])), lo=-200, hi=200))
    return {"actual": t5.bucket(rp), "relative_position": rp}


def _bucket_actual_kind(base):
    a = base["actual"]
    out = [valid(a), *layout_variants(a), maybe(a.astype(np.int32), "int32"), maybe(a + 1, "shifted"),
           maybe(a.astype(np.float64), "float"), reject(a.astype(np.complex128), "complex"), maybe(a.tolist()),
           reject(None), reject("3"), maybe(xps.asarray(a), "strict"), maybe(a.astype(bool), "bool"),
           reject(a.reshape(-1)[:-1] if a.size > 1 else np.zeros(5, np.int64), "wrong shape")]
    return st.sampled_from(out)


def _check_bucket_verdict(result: Any, kw: dict[str, Any]) -> None:
    assert result == PASSED or result[0] == "failed"


ASSERT_T5 = Spec(
    _verdict(pt.assert_t5_buckets_equal),
    _t5_assert_base(),
    {"actual": _bucket_actual_kind,
     "relative_position": lambda b: st.sampled_from([_host(h) for h in
                                                     positions_variants(b["relative_position"], None, strict=False,
                                                                        floats_ok=False, exact_limit=False)]),
     "bidirectional": loosen(lambda b: st.sampled_from([valid(True), valid(False), reject(1), reject("yes"),
                                                        reject(None)])),
     "num_buckets": loosen(ints(minimum=4, typical=(32,))), "max_distance": loosen(ints(minimum=2, typical=(128,))),
     "exact": loosen(lambda b: st.sampled_from([valid(True), valid(False), reject(0), reject(None)]))},
    _check_bucket_verdict,
    aliases={"actual": ("relative_position",), "relative_position": ("actual",),
             "num_buckets": ("max_distance",), "max_distance": ("num_buckets",)},
)


# ---------------------------------------------------------------------------------------
# the tolerances


def _check_rope_tol(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    t = check_array(result, shape=tuple(np.shape(to_np(x) if hasattr(x, "shape") else x)), dtype=np.float64,
                    backend=np)
    assert np.all(t >= 0) and not np.any(np.isnan(t))


ROPE_TOL = Spec(
    pt.rope_tolerance,
    st.builds(lambda b: {k: b[k] for k in ("x", "positions", "layout", "scaling")}, _rope_assert_base()),
    # the default tolerance follows x's dtype: a narrower x is not the same question
    {"x": lambda b: st.sampled_from([h if not any(k in h.label for k in ("strict", "float", "list")) else
                                     maybe(h.value, h.label) for h in
                                     float_array_variants(b["x"], keeps_dtype=False) + nonfinite_variants(b["x"])]),
     "positions": lambda b: st.sampled_from(positions_variants(b["positions"], tuple(b["x"].shape[:-1]),
                                                               strict=False)),
     "layout": choices(LAYOUTS), "dtype": lambda b: st.sampled_from(
         [valid(None), valid(np.float32), valid("float16"), valid(ml_dtypes.bfloat16), maybe("float8_e4m3fn"),
          reject(np.int32), reject("complex64"), reject("nope"), reject(3), reject(np.bool_)]),
     "base": loosen(reals(positive=True, typical=(10000.0,), optional=True)), "rotary_dim": _rotary_kind,
     "scaling": scaling_kind, "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe")},
    _check_rope_tol,
    aliases={"x": ("x.shape", "dtype"), "rotary_dim": ("x.shape",)},
)


def _check_sin_tol(result: Any, kw: dict[str, Any]) -> None:
    t = check_array(result, dtype=np.float64, backend=np)
    assert t.shape[-1] == int(kw["dim"]) and np.all(t >= 0) and not np.any(np.isnan(t))


SIN_TOL = Spec(
    pt.sinusoidal_tolerance,
    st.builds(lambda b: {k: b[k] for k in ("positions", "dim", "convention")}, _sin_assert_base()),
    {"positions": lambda b: st.sampled_from([_host(h) for h in
                                             positions_variants(b["positions"], None, strict=False)]),
     "dim": loosen(ints(minimum=1, typical=(4,))), "convention": choices(sinusoidal.CONVENTIONS),
     "dtype": lambda b: st.sampled_from([valid("float32"), valid(np.float16), reject(np.int8), reject("x"),
                                         reject(None) if False else maybe(None), reject(2.0)]),
     "base": reals(positive=True, typical=(10000.0,))},
    _check_sin_tol,
    aliases={"dim": ("convention",)},
)


def _check_alibi_tol(result: Any, kw: dict[str, Any]) -> None:
    t = check_array(result, dtype=np.float64, backend=np)
    assert t.ndim == 3 and np.all(t >= 0) and not np.any(np.isnan(t))


ALIBI_TOL = Spec(
    pt.alibi_tolerance,
    st.builds(lambda b: {k: b[k] for k in ("heads", "q_len", "k_len", "form")}, _alibi_assert_base()),
    {"heads": lambda b: loosen(ints(minimum=1, typical=(4,)))(b).map(  # a 1-d list of slopes is valid
        lambda h: maybe(h.value, h.label) if h.label in ("1-d array", "list") else h),
     "q_len": loosen(ints(minimum=1, typical=(2,))),
     "k_len": loosen(ints(minimum=1, typical=(4,))), "form": choices(alibi.FORMS),
     "offset": loosen(ints(optional=True, typical=(0,))),
     "dtype": lambda b: st.sampled_from([valid("float32"), valid(np.float16), reject(np.int8), reject("x"),
                                         maybe(None), reject(2.0)])},
    _check_alibi_tol,
    aliases={"q_len": ("k_len", "offset"), "k_len": ("q_len", "offset"), "offset": ("q_len", "k_len"),
             "form": ("q_len", "k_len")},
)


def _check_roundoff(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, float) and 0 < result < 0.5
    assert math.log2(result).is_integer()


UNIT_ROUNDOFF = Spec(
    pt.unit_roundoff,
    st.just({"dtype": "float32"}),
    {"dtype": lambda b: st.sampled_from(
        [valid(d) for d in ("float32", "float16", "bfloat16", "float64", np.float32, np.dtype("float16"),
                            ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, xps.float32)]
        + [reject(d) for d in (np.int32, "int8", np.bool_, "complex64", np.complex64, None, 3, 1.5, "", "nope",
                               [np.float32], object, xps.int64, xps.bool)])},
    _check_roundoff,
)


# ---------------------------------------------------------------------------------------
# the emulated pipelines


@st.composite
def _pipe_base(draw) -> dict[str, Any]:
    d = draw(st.sampled_from([2, 4, 8]))
    lead = draw(st.sampled_from(LEADS[:4]))
    x = draw(floats_array(lead + (d,)))
    pos = draw(int_positions(draw(suffix_shapes(lead)), lo=0, hi=3000))
    return {"x": x, "positions": pos, "dtype": draw(st.sampled_from(["float32", "bfloat16", "float16", None]))}


def _check_pipe(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    r = check_array(result, shape=tuple(np.shape(x)), backend=np)
    xn = np.asarray(to_np(x) if hasattr(x, "shape") else x, dtype=np.float64)
    # the pipelines emulate a model in float32 (or narrower): values beyond its range overflow there too
    rows = np.all(np.abs(xn) < 1e4, axis=-1)
    assert np.all(np.isfinite(r.astype(np.float64)[rows]))


def _pipe_dtype_kind(base):
    return st.sampled_from([valid(d) for d in (None, "float32", "float16", "bfloat16", "float64", np.float32,
                                                ml_dtypes.bfloat16)]
                           + [maybe(d) for d in ("float8_e4m3fn", "float8_e5m2")]
                           + [reject(d) for d in (np.int32, "int8", "complex64", "nope", 3, np.bool_, xps.int64)])


def _pipe_kinds(**extra: Any) -> dict[str, Any]:
    return {
        "x": lambda b: st.sampled_from(
            [h for h in float_array_variants(b["x"], keeps_dtype=False) if "float16" not in h.label
             and "bfloat16" not in h.label and "float32" not in h.label and "strict" not in h.label]
            + [maybe(xps.asarray(b["x"]), "strict"), maybe(b["x"][..., :-1], "odd"), reject(np.array(1.0), "0-d")]
            + nonfinite_variants(b["x"])),
        "positions": lambda b: st.sampled_from(
            [_host(h) for h in positions_variants(b["positions"], tuple(b["x"].shape[:-1]), strict=False)]),
        "dtype": _pipe_dtype_kind, "base": loosen(reals(positive=True, typical=(10000.0,))),
        "libm": loosen(choices(LIBMS)), **extra}


HF_PIPE = Spec(pipelines.hf, _pipe_base(),
               _pipe_kinds(layout=choices(LAYOUTS, optional=True), rotary_dim=_rotary_kind,
                           scaling=loosen(scaling_kind),
                           base=loosen(reals(positive=True, typical=(10000.0,), optional=True)),
                           seq_len=ints(minimum=1, optional=True, typical=(10,), huge="maybe")),
               _check_pipe, aliases={"x": ("x.shape", "dtype"), "rotary_dim": ("x.shape",)})
GPTJ_PIPE = Spec(pipelines.gptj, _pipe_base(), _pipe_kinds(rotary_dim=_rotary_kind), _check_pipe,
                 aliases={"x": ("x.shape", "dtype"), "rotary_dim": ("x.shape",)})
LLAMA_CPP_PIPE = Spec(
    pipelines.llama_cpp, _pipe_base().map(
        lambda b: {**b, "layout": "half", "dtype": "float32" if b["dtype"] != "float16" else b["dtype"]}),
    {k: v for k, v in _pipe_kinds(
        layout=choices(LAYOUTS), rotary_dim=_rotary_kind,
        base=loosen(reals(positive=True, typical=(10000.0,), optional=True)),
        dtype=lambda b: st.sampled_from([maybe(None), valid("float32"), valid(np.float16)]
                                                + [reject(d) for d in ("bfloat16", "float64", np.int32, "nope", 3)]),
                scaling=lambda b: st.sampled_from([valid(None), valid(sc.Linear(2.0)), valid(sc.Llama3(8.0, 64)),
                                                   maybe(sc.YaRN(4.0, 64)), reject(sc.YaRN(4.0, 64, truncate=False)), reject(sc.NTK(2.0)), reject("linear"),
                                                   reject(3)])).items() if k != "libm"},
    _check_pipe, aliases={"x": ("x.shape", "dtype"), "rotary_dim": ("x.shape",), "dtype": ("x",)})
META_PIPE = Spec(pipelines.meta, _pipe_base(), _pipe_kinds(scaling=lambda b: st.sampled_from(
    [valid(None), valid(sc.Llama3(8.0, 64)), reject(sc.Linear(2.0)), reject(sc.YaRN(4.0, 64)), reject("llama3"),
     reject(3)])), _check_pipe, aliases={"x": ("x.shape", "dtype")})


def _check_hf_inv(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, tuple) and len(result) == 2
    f, a = result
    check_array(f, shape=(int(kw["dim"]) // 2,), backend=np)
    assert np.all(np.isfinite(f.astype(np.float64))) and math.isfinite(a) and a > 0


HF_INV = Spec(
    pipelines.hf_inv_freq,
    st.fixed_dictionaries({"dim": st.sampled_from([4, 8, 64]), "scaling": st.sampled_from(SCALINGS),
                           "base": st.just(10000.0)}),
    {"dim": loosen(ints(minimum=2, even=True, typical=(8,))), "base": loosen(reals(positive=True, optional=True,
                                                                                    typical=(10000.0,))),
     "scaling": loosen(scaling_kind), "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
     "libm": loosen(choices(LIBMS))},
    _check_hf_inv,
)


SPECS = {
    "pemath.testing.assert_rope_close": ASSERT_ROPE,
    "pemath.testing.assert_rope_backward_close": ASSERT_ROPE_BACKWARD,
    "pemath.testing.assert_sinusoidal_close": ASSERT_SIN,
    "pemath.testing.assert_alibi_close": ASSERT_ALIBI,
    "pemath.testing.assert_t5_buckets_equal": ASSERT_T5,
    "pemath.testing.rope_tolerance": ROPE_TOL,
    "pemath.testing.assert_xpos_close": ASSERT_XPOS,
    "pemath.testing.xpos_tolerance": XPOS_TOL,
    "pemath.testing.sinusoidal_tolerance": SIN_TOL,
    "pemath.testing.alibi_tolerance": ALIBI_TOL,
    "pemath.testing.unit_roundoff": UNIT_ROUNDOFF,
    "pemath.testing.pipelines.hf": HF_PIPE,
    "pemath.testing.pipelines.gptj": GPTJ_PIPE,
    "pemath.testing.pipelines.meta": META_PIPE,
    "pemath.testing.pipelines.llama_cpp": LLAMA_CPP_PIPE,
    "pemath.testing.pipelines.hf_inv_freq": HF_INV,
}


@covers(*SPECS)
@pytest.mark.parametrize("name", sorted(SPECS))
@fuzz_settings()
@given(data=st.data())
def test_testing(name, data):
    run_spec(SPECS[name], data)


# ---------------------------------------------------------------------------------------
# the strategies: hostile arguments at construction; accepted ones must draw valid values


def _draws_ok(kind: str, value: Any, kw: dict[str, Any]) -> None:
    if kind == "head_dims":
        assert isinstance(value, int) and value % 2 == 0
        assert kw.get("min_dim", 2) <= value <= kw.get("max_dim", 256)
    elif kind == "bases":
        assert isinstance(value, float) and value > 1
    elif kind == "scalings":
        assert isinstance(value, sc.RopeScaling)
        f = value.inv_freq(int(kw["rotary_dim"]), 10000.0)
        assert np.all(np.isfinite(f))
    elif kind == "rope_configs":
        assert isinstance(value, strategies.RopeConfig)
        x = np.ones((2, value.head_dim))
        assert rope.apply(x, [0, 1], **value.kwargs()).shape == x.shape
    elif kind == "positions":
        assert isinstance(value, int) and kw.get("min_position", 0) <= value <= kw.get("max_position", 131071)
    elif kind == "position_arrays":
        assert isinstance(value, np.ndarray) and np.all(value >= 0)
    elif kind == "activations":
        assert isinstance(value, np.ndarray) and np.all(np.isfinite(value.astype(np.float64)))


_STRAT_BASES = {
    "head_dims": {"min_dim": 2, "max_dim": 64},
    "bases": {},
    "scalings": {"rotary_dim": 8},
    "rope_configs": {"max_head_dim": 16},
    "positions": {"max_position": 4096},
    "position_arrays": {"shape": (3,), "max_position": 4096},
    "activations": {"shape": (2, 4), "dtype": "float32"},
}
_STRAT_KINDS = {
    "head_dims": {"min_dim": loosen(ints(minimum=2, typical=(2, 8), huge="maybe")),
                  "max_dim": loosen(ints(minimum=2, typical=(64,), huge="maybe"))},
    "bases": {},
    "scalings": {"rotary_dim": loosen(ints(minimum=2, even=True, typical=(8,))),
                 "kinds": lambda b: st.sampled_from([valid(("linear",)), maybe(["yarn", "ntk"]), reject(()),
                                                      reject("linear"), reject(("nope",)), reject(None), reject(3),
                                                      reject((3,)), reject(("linear", None))])},
    "rope_configs": {"max_head_dim": loosen(ints(minimum=2, typical=(16,))),
                     "layouts": lambda b: st.sampled_from([valid(("half",)), maybe(["half"]), reject(()),
                                                            reject("half"), reject(("x",)), reject(None), reject(3),
                                                            reject(({"a": 1},))]),
                     "partial": lambda b: st.sampled_from([valid(True), valid(False), reject(1), reject(None)]),
                     "scaling": lambda b: st.sampled_from([valid(True), valid(False), reject("yes"), reject(None)])},
    "positions": {"max_position": loosen(ints(minimum=0, typical=(4096,), huge="maybe")),
                  "min_position": loosen(ints(minimum=0, typical=(0, 10), huge="maybe")),
                  "dtype": lambda b: st.sampled_from([valid("float32"), valid(np.float16), maybe("int8"),
                                                      reject("complex64"), reject(None), reject(3)])},
    "position_arrays": {"shape": lambda b: st.sampled_from([valid(3), valid((2, 2)), maybe(()), maybe((0,)),
                                                            reject("3"), reject(None), reject(-1), reject((-1,)),
                                                            reject(2.5), reject((2.0,))]),
                        "max_position": loosen(ints(minimum=0, typical=(4096,), huge="maybe"))},
    "activations": {"shape": lambda b: st.sampled_from([valid(3), valid((2, 2)), maybe(()), maybe((0, 2)),
                                                        reject("3"), reject(None), reject(-1), reject((-1,)),
                                                        reject(2.5)]),
                    "dtype": lambda b: st.sampled_from([valid("float32"), valid("float16"), valid("bfloat16"),
                                                        maybe(np.float64), reject("int8"), reject("nope"),
                                                        reject(None), reject(3)]),
                    "max_magnitude": reals(positive=True, typical=(8.0,))},
}


@covers(*(f"pemath.testing.strategies.{n}" for n in _STRAT_BASES if _STRAT_KINDS[n]),
        "pemath.testing.strategies.boundary_positions")
@pytest.mark.parametrize("name", sorted(n for n in _STRAT_BASES if _STRAT_KINDS[n]))
@fuzz_settings()
@given(data=st.data())
def test_strategies(name, data):
    fn = getattr(strategies, name)

    def check(result: Any, kw: dict[str, Any]) -> None:
        assert isinstance(result, st.SearchStrategy)
        _draws_ok(name, data.draw(result, label="drawn"), kw)

    aliases = {"min_dim": ("max_dim", "head dim"), "max_dim": ("min_dim", "head dim"),
               "min_position": ("max_position",), "max_position": ("min_position",), "rotary_dim": ("kinds",),
               "partial": ("scaling",), "scaling": ("partial",)}
    # strategies compare by identity: an accepted value is judged by what it draws, not by equality
    kinds = {k: loosen(v) for k, v in _STRAT_KINDS[name].items()}
    run_spec(Spec(fn, st.just(_STRAT_BASES[name]), kinds, check, aliases=aliases), data)


@fuzz_settings()
@given(st.data())
def test_boundary_positions(data):
    def check(result: Any, kw: dict[str, Any]) -> None:
        assert isinstance(result, list) and result == sorted(result) and all(type(p) is int for p in result)
        assert all(0 <= p <= int(kw["max_position"]) for p in result)

    spec = Spec(strategies.boundary_positions, st.just({"dtype": "float32", "max_position": 4096}),
                {"dtype": _STRAT_KINDS["positions"]["dtype"],
                 "max_position": ints(minimum=0, typical=(4096,), huge="maybe")}, check)
    run_spec(spec, data)





# ---------------------------------------------------------------------------------------
# the golden vectors


def _check_golden(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, (list, dict)) and result


@covers("pemath.testing.golden.names", "pemath.testing.golden.load")
@fuzz_settings()
@given(st.data())
def test_golden(data):
    from pemath.testing import golden

    first = sorted(set(golden.names(1)) & set(golden.names()))[0]  # a name in every version
    version = ints(minimum=1, maximum=golden.FORMAT_VERSION, typical=(golden.FORMAT_VERSION,))
    spec = data.draw(st.sampled_from([
        Spec(golden.names, st.just({}), {"version": version}, _check_golden),
        Spec(golden.load, st.just({"name": first}), {
            "name": lambda b: st.sampled_from([valid(first), reject(first.upper() + "x"), reject(""), reject(None),
                                               reject(3), reject([first]), reject("../" + first),
                                               reject(first + ".json"), reject("/etc/passwd")]),
            "version": version}, _check_golden),
    ]))
    run_spec(spec, data)


# --------------------------------------------------------------------------- recover_rope


def _check_recovery(rec: Any, kw: dict[str, Any]) -> None:
    assert isinstance(rec, pt.RopeRecovery) and rec.layout in LAYOUTS and rec.rotary_dim % 2 == 0
    assert rec.angle.shape == rec.amplitude.shape == rec.uncertainty.shape == (rec.rows, rec.rotary_dim // 2)
    fin = np.isfinite(rec.angle)
    assert np.all(np.abs(rec.angle[fin]) <= np.pi) and np.all(rec.amplitude[fin] >= 0)


def _recover_base(draw) -> dict[str, Any]:
    x = np.random.default_rng(draw(st.integers(0, 99))).standard_normal((3, 8))
    lay = draw(st.sampled_from(LAYOUTS))
    return {"actual": rope.apply(x, [0, 1, 5], layout=lay), "x": x, "layout": None, "rotary_dim": None}


RECOVER = Spec(
    pt.recover_rope,
    st.composite(_recover_base)(),
    {"actual": lambda b: st.sampled_from(float_array_variants(b["actual"])),
     "x": lambda b: st.sampled_from(float_array_variants(b["x"])),
     "layout": choices(LAYOUTS, optional=True),
     "rotary_dim": lambda b: st.sampled_from([valid(None), valid(4), valid(8), reject(3), reject(10), reject(0),
                                              reject(4.0), reject("4")])},
    _check_recovery,
    aliases={"actual": ("x", "shape"), "x": ("actual", "shape", "feature")},
)


@covers("pemath.testing.recover_rope")
@fuzz_settings()
@given(st.data())
def test_recover_rope(data):
    run_spec(RECOVER, data)


# --------------------------------------------------------------------------- check_rope_kernel


def _kernel_half(x, p):
    return rope.apply(x, p[:, :, None], layout="half")


def _check_conformance(report: Any, kw: dict[str, Any]) -> None:
    assert isinstance(report, pt.ConformanceReport) and report.rows
    assert report.passed, report  # the kernel is honest: every case, every dtype passes
    assert {r.dtype for r in report.rows} == set(kw["dtypes"])


CONFORMANCE = Spec(
    pt.check_rope_kernel,
    st.fixed_dictionaries({"fn": st.just(_kernel_half), "layout": st.just("half"), "head_dim": st.just(8),
                           "heads": st.just(1), "dtypes": st.just(("float32",)), "max_position": st.just(4097),
                           "seed": st.just(0)}),
    {"fn": lambda b: st.sampled_from([valid(_kernel_half), reject(3), reject(None), reject("rope")]),
     "head_dim": ints(minimum=2, even=True, typical=(8, 16)),
     "heads": ints(minimum=1, maximum=1024, typical=(1, 2)),
     "max_position": ints(minimum=4097, maximum=2**53, typical=(4097, 10**6)),
     "seed": ints(minimum=0, maximum=2**63 - 1, typical=(0, 7)),
     "dtypes": lambda b: st.sampled_from([valid(("float32",)), valid(["float16", "bfloat16"]), reject("float32"),
                                          reject(()), reject(("float8",)), reject((np.float32,)), reject(None),
                                          reject(("float32", 3))]),
     "backend": choices(("numpy",)), "direction": choices(("forward", "backward"))},
    _check_conformance,
    args=("fn",),
)


@covers("pemath.testing.check_rope_kernel")
@fuzz_settings(scale=0.1)
@given(st.data())
def test_check_rope_kernel(data):
    run_spec(CONFORMANCE, data)


# --------------------------------------------------------------------------- pipelines.bloom_alibi


def _check_bloom(result: Any, kw: dict[str, Any]) -> None:
    mask = np.asarray(kw["attention_mask"])
    want = np.dtype(kw.get("dtype", ml_dtypes.bfloat16) if kw.get("dtype") is not None else ml_dtypes.bfloat16)
    assert result.dtype == want and result.shape == (mask.shape[0], kw["heads"], 1, mask.shape[1])
    vals = result.astype(np.float64)
    assert np.all(np.isfinite(vals)) and np.all(vals >= 0)


BLOOM = Spec(
    pipelines.bloom_alibi,
    st.fixed_dictionaries({"heads": st.sampled_from([1, 3, 8, 12]),
                           "attention_mask": st.sampled_from([np.ones((1, 6), dtype=np.int64),
                                                              np.array([[0, 0, 1, 1], [1, 1, 1, 1]])]),
                           "libm": st.just("exact"), "dtype": st.just("bfloat16")}),
    {"heads": ints(minimum=1, maximum=2**20, typical=(4, 40)),
     "attention_mask": lambda b: st.sampled_from([
         valid(np.ones((2, 3), dtype=np.int32)), equiv([[1, 1, 0]], np.array([[1, 1, 0]]), "list"),
         reject(np.ones((2, 3))), reject(np.ones(3, dtype=np.int64)), reject(np.full((1, 3), 2)),
         reject(np.zeros((0, 3), dtype=np.int64)), reject(None), reject("mask"),
         reject(np.ones((1, 3), dtype=bool))]),
     "libm": choices(LIBMS),
     "dtype": lambda b: st.sampled_from([valid("bfloat16"), valid(np.float32), valid("float16"),
                                         reject(np.int32), reject("nope"), reject(3)])},
    _check_bloom,
)


FALCON = Spec(pipelines.falcon_alibi, BLOOM.base.map(lambda b: {k: v for k, v in b.items() if k != "dtype"}),
              {k: v for k, v in BLOOM.kinds.items() if k != "dtype"}, _check_bloom)


@covers("pemath.testing.pipelines.bloom_alibi")
@fuzz_settings(scale=0.3)
@given(st.data())
def test_bloom_alibi(data):
    run_spec(BLOOM, data)


@covers("pemath.testing.pipelines.falcon_alibi")
@fuzz_settings(scale=0.3)
@given(st.data())
def test_falcon_alibi(data):
    run_spec(FALCON, data)
