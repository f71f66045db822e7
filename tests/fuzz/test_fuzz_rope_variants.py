"""Fuzzing xPos and the multi-axis RoPEs (axial, M-RoPE) with hostile inputs."""

from __future__ import annotations

from typing import Any

import array_api_strict as xps
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from pemath.rope import xpos

from ._common import LEADS, check_array, floats_array, int_positions, np64, suffix_shapes, xp_of
from ._fuzz import (
    H,
    Spec,
    bools,
    choices,
    covers,
    fuzz_settings,
    ints,
    loosen,
    maybe,
    positions_variants,
    reals,
    reject,
    run_spec,
    valid,
)
from .test_fuzz_rope import LAYOUTS, _pair_norms_preserved, _pos_kind_for, _rotary_kind, _x_kind, to_np

# ---------------------------------------------------------------------------------------
# xPos


@st.composite
def _xpos_base(draw) -> dict[str, Any]:
    d = draw(st.sampled_from([2, 4, 8]))
    lead = draw(st.sampled_from(LEADS))
    x = draw(floats_array(lead + (d,)))
    pos = draw(int_positions(draw(suffix_shapes(lead)), lo=-100, hi=600))
    strict = draw(st.booleans())
    center = draw(st.sampled_from([0.0, 3.5, "torchscale", "rotary-embedding-torch"]))
    return {"x": xps.asarray(x) if strict else x, "positions": xps.asarray(pos) if strict else pos,
            "layout": draw(st.sampled_from(LAYOUTS)), "role": draw(st.sampled_from(xpos.ROLES)),
            "center": center, "seq_len": 600 if isinstance(center, str) else None,
            "rotary_dim": draw(st.sampled_from([None, 2])), "inverse": draw(st.booleans())}


def _check_xpos(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    r = check_array(result, like=x, shape=tuple(x.shape), dtype=x.dtype)
    rd = kw.get("rotary_dim") or x.shape[-1]
    xn = np64(x)
    fin = np.isfinite(xn[..., rd:])
    assert np.array_equal(r.astype(np.float64)[..., rd:][fin], xn[..., rd:][fin])
    assert np.all(np.isfinite(r[np.all(np.isfinite(xn), axis=-1)])), "finite x gave a non-finite result"


def _center_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    named = base["seq_len"] is not None
    out = [valid(c) if named else reject(c) for c in xpos.CENTERS]
    out += [reject("middle"), reject(None), reject(True), reject(np.nan), reject(np.inf), reject([0.0]),
            reject(1 + 1j), reject(np.array([1.0]))]
    out += [maybe(v) if not named else reject(v) for v in (0.0, 5, -3.5, np.float64(2.0), 1e300)]
    return st.sampled_from(out)


XPOS = Spec(
    xpos.apply,
    _xpos_base(),
    {
        "x": _x_kind,
        "positions": _pos_kind_for(lambda b: tuple(b["x"].shape[:-1])),
        "layout": choices(LAYOUTS),
        "role": choices(xpos.ROLES),
        "base": reals(positive=True, typical=(10000.0,), optional=True),
        "gamma": reals(positive=True, typical=(0.4,)),
        "scale_base": reals(positive=True, typical=(512.0,)),
        "center": _center_kind,
        "seq_len": loosen(ints(minimum=1, optional=True, typical=(600,), huge="maybe")),
        "rotary_dim": _rotary_kind,
        "inverse": bools(),
    },
    _check_xpos,
    aliases={"x": ("x.shape", "xPos-scaled result"), "rotary_dim": ("x.shape",),
             "positions": ("xPos scale", "center"), "gamma": ("xPos scale",), "scale_base": ("xPos scale",),
             "center": ("seq_len", "xPos scale"), "seq_len": ("center",)},
)


@covers("pemath.rope.xpos.apply")
@fuzz_settings(2)
@given(st.data())
def test_xpos_apply(data):
    run_spec(XPOS, data)


def _check_zeta(result: Any, kw: dict[str, Any]) -> None:
    z = check_array(result, shape=(int(kw["dim"]) // 2,), dtype=np.float64, backend=np)
    assert np.all(np.isfinite(z)) and np.all(z > 0) and np.all(z <= 1.0 + 1e-15)


ZETA = Spec(xpos.zeta, st.fixed_dictionaries({"dim": st.sampled_from([2, 8]), "gamma": st.just(0.4)}),
            {"dim": ints(minimum=2, even=True, typical=(4, 5)), "gamma": reals(positive=True, typical=(0.4,))},
            _check_zeta)


@covers("pemath.rope.xpos.zeta")
@fuzz_settings()
@given(st.data())
def test_xpos_zeta(data):
    run_spec(ZETA, data)


def _check_center_of(result: Any, kw: dict[str, Any]) -> None:
    assert type(result) is int and 0 <= result <= int(kw["seq_len"])


CENTER_OF = Spec(
    xpos.center_of,
    st.fixed_dictionaries({"seq_len": st.integers(1, 10**6), "convention": st.sampled_from(xpos.CENTERS)}),
    {"seq_len": ints(minimum=1, typical=(7,), huge="maybe"), "convention": choices(xpos.CENTERS)},
    _check_center_of,
    aliases={"convention": ("center",)},
)


@covers("pemath.rope.xpos.center_of")
@fuzz_settings()
@given(st.data())
def test_xpos_center_of(data):
    run_spec(CENTER_OF, data)


# ---------------------------------------------------------------------------------------
# axial RoPE


@st.composite
def _axial_base(draw) -> dict[str, Any]:
    n_axes = draw(st.sampled_from([1, 2, 3]))
    axis = draw(st.sampled_from([2, 4]))
    d = n_axes * axis + draw(st.sampled_from([0, 2]))
    lead = draw(st.sampled_from(LEADS))
    x = draw(floats_array(lead + (d,)))
    pshape = draw(suffix_shapes(lead)) + (n_axes,)
    pos = draw(int_positions(pshape, lo=-50, hi=500))
    strict = draw(st.booleans())
    return {"x": xps.asarray(x) if strict else x, "positions": xps.asarray(pos) if strict else pos,
            "layout": draw(st.sampled_from(LAYOUTS)), "axis_dims": [axis] * n_axes,
            "grouping": draw(st.sampled_from(["features", "pairs"])),
            "frequencies": draw(st.sampled_from(["per_axis", "strided"])), "inverse": draw(st.booleans())}


def _check_axial(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    r = check_array(result, like=x, shape=tuple(x.shape), dtype=x.dtype).astype(np.float64)
    xn = np64(x)
    dims = kw.get("axis_dims")
    total = sum(int(d) for d in dims) if dims is not None else x.shape[-1]
    fin = np.isfinite(xn[..., total:])
    assert np.array_equal(r[..., total:][fin], xn[..., total:][fin])
    # the whole rotated block keeps its norm (every axis group is a rotation)
    # norms scaled by the row's largest |x| first, so huge finite values are checked too (no overflow)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.max(np.abs(xn[..., :total]), axis=-1, keepdims=True) if total else np.zeros(xn.shape[:-1] + (1,))
        ok = np.isfinite(scale[..., 0]) & (scale[..., 0] > 0) & np.all(np.isfinite(r[..., :total]), axis=-1)
        safe = np.where(scale > 0, scale, 1.0)
        n_in = np.sqrt(np.sum((xn[..., :total] / safe) ** 2, axis=-1))
        n_out = np.sqrt(np.sum((r[..., :total] / safe) ** 2, axis=-1))
    tol = 1e-12 if r.dtype == np.float64 and to_np(result).dtype == np.float64 else 2e-2
    assert np.all(np.abs(n_out - n_in)[ok] <= tol * n_in[ok] + tol)


def _axial_pos_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    p = base["positions"]
    pn = to_np(p).astype(np.int64)
    strict = xp_of(base["x"]) is xps
    out = [h for h in positions_variants(pn, None, strict=strict) if h.expect == "reject" and "0-d" not in h.label
           and "broadcast" not in h.label and "empty" not in h.label and "zero-size" not in h.label]
    out += [valid(p), maybe(p[..., :1], "fewer axes"), maybe(np.zeros(pn.shape[:-1] + (0,), np.int64), "no axes"),
            reject(np.zeros((7,) * (len(base["x"].shape) + 1), np.int64), "enlarging"),
            maybe(pn.astype(np.float64) + 0.5, "fractional") if not strict else maybe(xps.asarray(pn + 0.5)),
            maybe(pn.tolist(), "list")]
    return st.sampled_from(out)


def _axis_dims_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    dims = base["axis_dims"]
    out = [valid(dims), valid(tuple(dims)), maybe(np.array(dims), "array"), maybe([np.int64(d) for d in dims]),
           valid(None) if len(set(dims)) == 1 and base["x"].shape[-1] % (2 * len(dims)) == 0 else maybe(None),
           reject([]), reject([d + 1 for d in dims], "odd"), reject([0] * len(dims)), reject([-2] * len(dims)),
           reject([2.0] * len(dims), "floats"), reject([True] * len(dims)), reject("22"), reject(4),
           reject([d * 1000 for d in dims], "too large"), reject(dims + [2, 2, 2, 2, 2], "too many"),
           reject([2**63] * len(dims)), reject([None] * len(dims)), reject({"a": 2})]
    return st.sampled_from(out)


AXIAL = Spec(
    rope.apply_axial,
    _axial_base(),
    {
        "x": loosen(_x_kind),
        "positions": _axial_pos_kind,
        "layout": choices(LAYOUTS),
        "base": reals(positive=True, typical=(10000.0,), optional=True),
        "axis_dims": _axis_dims_kind,
        "grouping": choices(("features", "pairs"), optional=True),
        "frequencies": loosen(choices(("per_axis", "strided"), optional=True)),
        "inverse": bools(),
    },
    _check_axial,
    aliases={"x": ("x.shape", "axis_dims"), "positions": ("axis_dims",), "axis_dims": ("x.shape",),
             "frequencies": ("axis_dims",)},
)


@covers("pemath.rope.apply_axial")
@fuzz_settings(2)
@given(st.data())
def test_apply_axial(data):
    run_spec(AXIAL, data)


# ---------------------------------------------------------------------------------------
# M-RoPE


@st.composite
def _mrope_base(draw) -> dict[str, Any]:
    interleaved = draw(st.booleans())
    section = [2, 1, 1] if not interleaved else draw(st.sampled_from([[2, 1, 1], [4, 2, 2]]))
    r = 2 * sum(section)
    d = r + draw(st.sampled_from([0, 2]))
    lead = draw(st.sampled_from(LEADS))
    x = draw(floats_array(lead + (d,)))
    pos = draw(int_positions((3,) + draw(suffix_shapes(lead)), lo=0, hi=500))
    strict = draw(st.booleans())
    return {"x": xps.asarray(x) if strict else x, "positions": xps.asarray(pos) if strict else pos,
            "mrope_section": section, "layout": draw(st.sampled_from(LAYOUTS)), "interleaved": interleaved,
            "rotary_dim": r if d != r else draw(st.sampled_from([None, r])), "inverse": draw(st.booleans())}


def _check_mrope(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    r = check_array(result, like=x, shape=tuple(x.shape), dtype=x.dtype).astype(np.float64)
    rd = kw.get("rotary_dim") or x.shape[-1]
    _pair_norms_preserved(np64(x), r, rd, kw["layout"] or "half", 1.0, to_np(result).dtype)


def _section_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    s = base["mrope_section"]
    out = [valid(s), valid(tuple(s)), maybe(np.array(s)), reject([]), reject([0, 0, 0]), reject([-1, 2, 3]),
           reject([2.0, 1.0, 1.0]), reject([True, 1, 1]), reject("211"), reject(4), reject(None),
           reject([2**63, 1, 1]), maybe(s[:2], "two components"), maybe([s[0] + 1] + s[1:], "wrong sum"),
           reject([None, 1, 1]), reject([[2], [1], [1]])]
    return st.sampled_from(out)


def _mrope_pos_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    p = base["positions"]
    pn = to_np(p).astype(np.int64)
    strict = xp_of(base["x"]) is xps
    out = [h for h in positions_variants(pn, None, strict=strict) if h.expect == "reject" and "0-d" not in h.label]
    out += [valid(p), maybe(p[:2, ...], "two components"), maybe(pn.tolist(), "list"),
            reject(np.zeros((3,) + (7,) * len(base["x"].shape), np.int64), "enlarging"),
            maybe(pn.astype(np.float64) + 0.5, "fractional") if not strict else maybe(xps.asarray(pn + 0.5))]
    return st.sampled_from(out)


MROPE = Spec(
    rope.apply_mrope,
    _mrope_base(),
    {
        "x": loosen(_x_kind),
        "positions": _mrope_pos_kind,
        "mrope_section": _section_kind,
        "layout": choices(LAYOUTS, optional=True),  # default "half"
        "base": reals(positive=True, typical=(10000.0,), optional=True),
        "interleaved": loosen(bools(optional=True)),
        "rotary_dim": loosen(_rotary_kind),
        "inverse": bools(),
    },
    _check_mrope,
    aliases={"x": ("x.shape", "rotary_dim", "mrope_section"), "positions": ("mrope_section",),
             "mrope_section": ("rotary_dim",), "interleaved": ("mrope_section",),
             "rotary_dim": ("x.shape", "mrope_section")},
)


@covers("pemath.rope.apply_mrope")
@fuzz_settings(2)
@given(st.data())
def test_apply_mrope(data):
    run_spec(MROPE, data)


def _check_components(result: Any, kw: dict[str, Any]) -> None:
    s = [int(v) for v in kw["mrope_section"]]
    c = check_array(result, shape=(sum(s),), dtype=np.int64, backend=np)
    assert np.array_equal(np.bincount(c, minlength=len(s)), s), "each component gets its section's count"


COMPONENTS = Spec(
    rope.mrope_components,
    st.fixed_dictionaries({"mrope_section": st.sampled_from([[2, 1, 1], [16, 24, 24], [24, 20, 20], [3]]),
                           "interleaved": st.booleans()}),
    {"mrope_section": loosen(_section_kind, lambda b: b["interleaved"]), "interleaved": loosen(bools())},
    _check_components,
    aliases={"interleaved": ("mrope_section",)},
)


@covers("pemath.rope.mrope_components")
@fuzz_settings()
@given(st.data())
def test_mrope_components(data):
    run_spec(COMPONENTS, data)

