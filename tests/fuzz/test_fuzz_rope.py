"""Fuzzing pemath.rope (plain RoPE, its complex form, layouts, decay, HF configs) with hostile inputs."""

from __future__ import annotations

from typing import Any

import array_api_strict as xps
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from pemath import scaling as sc

from ._common import (
    LEADS,
    SCALINGS,
    check_array,
    floats_array,
    int_positions,
    np64,
    scaling_kind,
    suffix_shapes,
    xp_of,
)
from ._fuzz import (
    H,
    Spec,
    _junk,
    bools,
    call,
    choices,
    covers,
    dtypes,
    equiv,
    float_array_variants,
    loosen,
    fuzz_settings,
    ints,
    maybe,
    must,
    nonfinite_variants,
    positions_variants,
    reals,
    reject,
    run_spec,
    run_valid,
    valid,
)

LAYOUTS = ("interleaved", "half")
#: base 1 is refused by YaRN (its ramp divides by ln(base)): valid only without it
BASE_KIND = loosen(reals(positive=True, typical=(10000.0, 10.0), optional=True), lambda b: isinstance(b.get("scaling"), sc.YaRN))


def _factor(kw: dict[str, Any]) -> float:
    s = kw.get("scaling")
    return 1.0 if s is None else float(s.attention_factor)


def _rtol(dtype: Any) -> float:
    return {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}.get(np.dtype(dtype), 2e-2)


def _pair_norms_preserved(xn: np.ndarray, rn: np.ndarray, r: int, layout: str, factor: float, dtype: Any) -> None:
    """A rotation scales every pair's norm by the attention factor (where x is finite and moderate)."""
    if layout == "half":
        a, b = xn[..., : r // 2], xn[..., r // 2 : r]
        c, d = rn[..., : r // 2], rn[..., r // 2 : r]
    else:
        a, b, c, d = xn[..., 0:r:2], xn[..., 1:r:2], rn[..., 0:r:2], rn[..., 1:r:2]
    n_in = np.hypot(a, b) * factor
    n_out = np.hypot(c, d)
    ok = np.isfinite(n_in) & (np.abs(n_in) < 1e100)
    tol = _rtol(dtype) * n_in + 4 * np.finfo(np.float64).tiny + (_rtol(dtype) if np.dtype(dtype) != np.float64 else 0)
    with np.errstate(invalid="ignore"):  # inf - inf outside `ok`
        err = np.abs(n_out - n_in)
    assert np.all(err[ok] <= tol[ok]), "a pair's norm is not preserved by the rotation"


# ---------------------------------------------------------------------------------------
# inv_freq


def _check_inv_freq(result: Any, kw: dict[str, Any]) -> None:
    dim = int(kw["dim"])
    f = check_array(result, shape=(dim // 2,), dtype=np.float64, backend=np)
    assert np.all(np.isfinite(f)) and np.all(f >= 0), "frequencies must be finite and >= 0"
    if kw.get("scaling") is None:
        assert np.all(f > 0)
        assert f[0] == 1.0
        b = float(kw.get("base", 10000.0))
        if b > 1.0 and dim > 2:
            assert np.all(np.diff(f) <= 0), "unscaled frequencies decrease for base > 1"


INV_FREQ = Spec(
    rope.inv_freq,
    st.fixed_dictionaries(
        {"dim": st.sampled_from([2, 4, 8, 64]), "base": st.sampled_from([10000.0, 2.0, 500000.0]),
         "scaling": st.sampled_from(SCALINGS), "seq_len": st.sampled_from([None, 1, 100, 4096])}
    ),
    {
        "dim": ints(minimum=2, even=True, typical=(4, 6)),
        "base": loosen(reals(positive=True, typical=(10000.0, 3.0), optional=True),
                       lambda b: isinstance(b["scaling"], sc.YaRN)),
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(100,), huge="maybe"),
    },
    _check_inv_freq,
)


@covers("pemath.rope.inv_freq")
@fuzz_settings()
@given(st.data())
def test_inv_freq(data):
    run_spec(INV_FREQ, data)


# ---------------------------------------------------------------------------------------
# apply


@st.composite
def _apply_base(draw, *, strict: bool | None = None) -> dict[str, Any]:
    d = draw(st.sampled_from([2, 4, 6, 8]))
    lead = draw(st.sampled_from(LEADS))
    x = draw(floats_array(lead + (d,)))
    pos = draw(int_positions(draw(suffix_shapes(lead))))
    if strict is None:
        strict = draw(st.booleans())
    kw = {
        "x": xps.asarray(x) if strict else x,
        "positions": xps.asarray(pos) if strict else pos,
        "layout": draw(st.sampled_from(LAYOUTS)),
        "base": draw(st.sampled_from([10000.0, 100.0, 500000.0])),
        "rotary_dim": draw(st.sampled_from([None, 2, d])),
        "scaling": draw(st.sampled_from(SCALINGS)),
        "inverse": draw(st.booleans()),
    }
    return kw


def _check_apply(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    rn = check_array(result, like=x, shape=tuple(x.shape), dtype=x.dtype)
    xn = np64(x)
    r = kw.get("rotary_dim") or x.shape[-1]
    rn64 = rn.astype(np.float64)
    both = np.isfinite(xn[..., r:]) | np.isfinite(rn64[..., r:])
    assert np.array_equal(rn64[..., r:][both], xn[..., r:][both]), "features beyond rotary_dim changed"
    _pair_norms_preserved(xn, rn64, r, kw["layout"], _factor(kw), rn.dtype)


def _x_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    x = base["x"]
    if xp_of(x) is xps:
        return st.sampled_from([
            valid(x), reject(xps.astype(x, xps.int64), "int array"), reject(xps.astype(x, xps.bool), "bool array"),
            reject(xps.astype(x, xps.complex128), "complex array"), valid(xps.astype(x, xps.float32)),
            maybe(np.asarray(to_np(x)), "NumPy x with strict positions"),
        ])
    out = float_array_variants(x) + nonfinite_variants(x)
    # wrong shapes: odd, empty and 0-d feature axes; zero-size leading axes
    out += [maybe(x[..., :-1], "odd feature axis"), reject(np.zeros(x.shape[:-1] + (0,)), "empty feature axis"),
            reject(np.float64(1.0), "numpy scalar"), reject(np.array(1.0), "0-d array"), reject(1.0, "python float"),
            maybe(np.zeros((0,) + x.shape), "zero-size leading axis"), maybe(x[None], "extra axis")]
    return st.sampled_from(out)


def to_np(a: Any) -> np.ndarray:
    from pemath._compat import to_numpy

    return np.asarray(to_numpy(a))


def _pos_kind_for(target_of, *, floats_ok: bool = True, key: str = "positions", owner: str = "x"):
    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        p = base[key]
        strict = xp_of(base[owner]) is xps
        pn = np.asarray(to_np(p)) if not isinstance(p, np.ndarray) else p
        return st.sampled_from(positions_variants(pn.astype(np.int64), target_of(base), strict=strict,
                                                  floats_ok=floats_ok))

    return kind


def _rotary_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    d = int(base["x"].shape[-1])
    return ints(minimum=2, maximum=d, even=True, optional=True, typical=(2, d))(base)


def _out_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    x = base["x"]
    if xp_of(x) is xps:
        return st.sampled_from([valid(None), maybe(xps.zeros(x.shape, dtype=x.dtype), "strict out"),
                                reject(np.zeros(tuple(x.shape)), "NumPy out")])
    ro = np.zeros_like(x)
    ro.setflags(write=False)
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    out = [
        valid(None),
        equiv(np.zeros_like(x), None, "fresh out"),
        equiv(np.full_like(x, np.nan), None, "NaN-filled out"),
        equiv(big[..., ::2], None, "strided out"),
        reject(np.zeros(x.shape, np.float32), "wrong dtype"),
        reject(np.zeros(x.shape + (1,)), "wrong shape"),
        reject(np.zeros(x.shape[:-1] + (x.shape[-1] + 2,)), "wrong last axis"),
        reject(ro, "read-only"),
        reject(xps.zeros(x.shape, dtype=xps.float64), "strict out"),
        reject(x.tolist(), "list"),
        reject(np.zeros(x.shape, np.int64), "int out"),
    ]
    if x.size:
        out.append(reject(np.broadcast_to(np.zeros(x.shape[-1:]), x.shape), "zero-stride out"))
    return st.one_of(st.sampled_from(out), _junk(True))


APPLY_KINDS = {
    "x": _x_kind,
    "positions": _pos_kind_for(lambda b: tuple(b["x"].shape[:-1])),
    "layout": choices(LAYOUTS),
    "base": BASE_KIND,
    "rotary_dim": _rotary_kind,
    "scaling": scaling_kind,
    "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
    "inverse": bools(),
    "out": _out_kind,
}

APPLY = Spec(rope.apply, _apply_base(), APPLY_KINDS, _check_apply,
             aliases={"x": ("x.shape",), "rotary_dim": ("x.shape",)})


@covers("pemath.rope.apply")
@fuzz_settings(3)
@given(st.data())
def test_apply(data):
    run_spec(APPLY, data)


@fuzz_settings()
@given(st.data())
def test_apply_valid_and_inverse(data):
    """Valid calls: accepted, properties hold, and the inverse undoes the rotation."""
    kw = data.draw(_apply_base())
    run_valid(APPLY, data)
    y = rope.apply(**kw)
    back = rope.apply(y, kw["positions"], **{k: v for k, v in kw.items() if k not in ("x", "positions", "inverse")},
                      inverse=not kw["inverse"])
    f = _factor(kw)
    r = kw["rotary_dim"] or kw["x"].shape[-1]
    expect = to_np(kw["x"]).copy()
    expect[..., :r] *= f * f  # the features beyond rotary_dim pass through unscaled
    np.testing.assert_allclose(to_np(back), expect, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------
# cos_sin


@st.composite
def _cos_sin_base(draw) -> dict[str, Any]:
    shape = draw(st.sampled_from([(), (3,), (2, 3), (0,)]))
    pos = draw(int_positions(shape))
    strict = draw(st.booleans())
    return {"positions": xps.asarray(pos) if strict else pos, "dim": draw(st.sampled_from([2, 4, 8])),
            "layout": draw(st.sampled_from(LAYOUTS)), "base": draw(st.sampled_from([10000.0, 10.0])),
            "scaling": draw(st.sampled_from(SCALINGS)), "dtype": None}


def _check_cos_sin(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, tuple) and len(result) == 2
    p = kw["positions"]
    pshape = tuple(np.shape(p)) if not hasattr(p, "shape") else tuple(p.shape)
    dim = int(kw["dim"])
    c, s = (check_array(t, like=p if hasattr(p, "shape") else None, shape=pshape + (dim,)) for t in result)
    assert result[0].dtype == result[1].dtype
    c, s = c.astype(np.float64), s.astype(np.float64)
    assert np.all(np.isfinite(c)) and np.all(np.isfinite(s))
    f = _factor(kw)
    if kw.get("dtype") is None:
        np.testing.assert_allclose(c * c + s * s, f * f, rtol=1e-12)
    h = dim // 2
    if kw["layout"] == "half":
        assert np.array_equal(c[..., :h], c[..., h:])
    else:
        assert np.array_equal(c[..., 0::2], c[..., 1::2])


def _positions_free_kind(key: str = "positions", floats_ok: bool = True, exact_limit: bool = True):
    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        p = base[key]
        strict = xp_of(p) is xps
        pn = to_np(p).astype(np.int64)
        out = [h for h in positions_variants(pn, None, strict=strict, floats_ok=floats_ok, exact_limit=exact_limit)
               if "with strict" not in h.label and "with NumPy" not in h.label]
        if strict:  # Python values and NumPy arrays give NumPy results: not the clean strict call
            out = [H(h.value, "maybe") if not (hasattr(h.value, "shape") and xp_of(h.value) is xps) else h
                   for h in out]
        else:
            out.append(maybe(xps.asarray(pn), "strict positions"))
        return st.sampled_from(out)

    return kind


def _dtype_of_positions(base: dict[str, Any]) -> Any:
    return xp_of(base["positions"])


COS_SIN = Spec(
    rope.cos_sin,
    _cos_sin_base(),
    {
        "positions": _positions_free_kind(),
        "dim": ints(minimum=2, even=True, typical=(4, 6)),
        "layout": choices(LAYOUTS),
        "base": BASE_KIND,
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
        "dtype": dtypes(_dtype_of_positions),
    },
    _check_cos_sin,
)


@covers("pemath.rope.cos_sin")
@fuzz_settings(2)
@given(st.data())
def test_cos_sin(data):
    run_spec(COS_SIN, data)


# ---------------------------------------------------------------------------------------
# matrix


def _check_matrix(result: Any, kw: dict[str, Any]) -> None:
    dim = int(kw["dim"])
    R = check_array(result, shape=(dim, dim), dtype=np.float64, backend=np)
    assert np.all(np.isfinite(R))
    f = _factor(kw)
    r = kw.get("rotary_dim") or dim
    expect = np.eye(dim) * f * f
    expect[r:, r:] = np.eye(dim - r)
    np.testing.assert_allclose(R.T @ R, expect, atol=1e-12 * max(1.0, f * f))


MATRIX = Spec(
    rope.matrix,
    st.fixed_dictionaries({"position": st.sampled_from([0, 1, -7, 2.5, 1e6]), "dim": st.sampled_from([2, 4, 6]),
                           "layout": st.sampled_from(LAYOUTS), "scaling": st.sampled_from(SCALINGS),
                           "rotary_dim": st.just(None)}),
    {
        "position": reals(typical=(3.0, -2.0), huge_ok=True),
        "dim": loosen(ints(minimum=1, typical=(4, 5), maximum=4096)),
        "layout": choices(LAYOUTS),
        "base": BASE_KIND,
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
        "rotary_dim": lambda b: ints(minimum=2, maximum=int(b["dim"]), even=True, optional=True,
                                     typical=(2,))(b),
    },
    _check_matrix,
)


@covers("pemath.rope.matrix")
@fuzz_settings()
@given(st.data())
def test_matrix(data):
    run_spec(MATRIX, data)


# ---------------------------------------------------------------------------------------
# complex form


@st.composite
def _to_complex_base(draw) -> dict[str, Any]:
    lead = draw(st.sampled_from(LEADS))
    x = draw(floats_array(lead + (draw(st.sampled_from([2, 4])),)))
    return {"x": xps.asarray(x) if draw(st.booleans()) else x, "layout": draw(st.sampled_from(LAYOUTS))}


def _check_to_complex(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    z = check_array(result, like=x, shape=tuple(x.shape[:-1]) + (x.shape[-1] // 2,))
    assert z.dtype == np.complex128
    back = to_np(rope.from_complex(result, layout=kw["layout"], dtype=None))
    xn = np64(x)
    assert np.array_equal(back, xn, equal_nan=True), "from_complex(to_complex(x)) != x"


def _x_kind_plain(base: dict[str, Any]) -> st.SearchStrategy[H]:
    x = base["x"]
    if xp_of(x) is xps:
        return st.sampled_from([valid(x), reject(xps.astype(x, xps.int64)), reject(xps.astype(x, xps.complex128))])
    out = float_array_variants(x, keeps_dtype=False) + nonfinite_variants(x)
    out += [reject(x[..., :-1], "odd feature axis") if x.shape[-1] % 2 == 0 else maybe(x[..., :-1]),
            reject(np.array(1.0), "0-d"), maybe(np.zeros(x.shape[:-1] + (0,)), "empty feature axis")]
    return st.sampled_from(out)


TO_COMPLEX = Spec(rope.to_complex, _to_complex_base(), {"x": _x_kind_plain, "layout": choices(LAYOUTS)},
                  _check_to_complex, aliases={"x": ("x.shape",)})


@covers("pemath.rope.to_complex")
@fuzz_settings()
@given(st.data())
def test_to_complex(data):
    run_spec(TO_COMPLEX, data)


@st.composite
def _complex_base(draw, key: str = "z") -> dict[str, Any]:
    lead = draw(st.sampled_from(LEADS))
    k = draw(st.sampled_from([1, 2, 3]))
    re_ = draw(floats_array(lead + (k,)))
    im = draw(floats_array(lead + (k,)))
    z = re_ + 1j * im
    return {key: xps.asarray(z) if draw(st.booleans()) else z}


def _z_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    z = base["z"]
    if xp_of(z) is xps:
        return st.sampled_from([valid(z), reject(xps.real(z), "real"), valid(xps.astype(z, xps.complex64))])
    out = [
        valid(z),
        must(z.copy(order="F"), z, "fortran"),
        must(np.flip(np.flip(z, -1).copy(), -1), z, "negative strides"),
        equiv(xps.asarray(z), z, "strict", lambda r: xps.asarray(r) if isinstance(r, np.ndarray) else r),
        maybe(z.astype(np.complex64), "complex64"),
        reject(z.real, "real array"),
        reject(z.real.astype(np.int64), "int array"),
        reject(z.tolist(), "list"),
        reject(np.complex128(1 + 1j), "numpy scalar"),
        reject(1 + 1j, "python complex"),
        maybe(np.array(1 + 1j), "0-d"),
        maybe(np.full(z.shape, complex(np.nan, np.inf)), "nan/inf"),
    ]
    ro = z.copy()
    ro.setflags(write=False)
    out.append(must(ro, z, "read-only"))
    return st.sampled_from(out)


def _check_from_complex(result: Any, kw: dict[str, Any]) -> None:
    z = kw["z"]
    r = check_array(result, like=z, shape=tuple(z.shape[:-1]) + (2 * z.shape[-1],))
    if kw.get("dtype") is None:
        back = to_np(rope.to_complex(result, layout=kw["layout"]))
        zn = to_np(z).astype(np.complex128)
        assert np.array_equal(back, zn, equal_nan=True)
    assert r.dtype.kind == "f" or "float" in r.dtype.name


FROM_COMPLEX = Spec(
    rope.from_complex,
    st.builds(lambda b, layout: {**b, "layout": layout, "dtype": None}, _complex_base(), st.sampled_from(LAYOUTS)),
    {"z": _z_kind, "layout": choices(LAYOUTS), "dtype": dtypes(lambda b: xp_of(b["z"]))},
    _check_from_complex,
)


@covers("pemath.rope.from_complex")
@fuzz_settings()
@given(st.data())
def test_from_complex(data):
    run_spec(FROM_COMPLEX, data)


def _check_freqs_cis(result: Any, kw: dict[str, Any]) -> None:
    p = kw["positions"]
    pshape = tuple(p.shape) if hasattr(p, "shape") else tuple(np.shape(p))
    r = check_array(result, shape=pshape + (int(kw["dim"]) // 2,))
    assert r.dtype == np.complex128
    np.testing.assert_allclose(np.abs(r), _factor(kw), rtol=1e-12)


FREQS_CIS = Spec(
    rope.freqs_cis,
    st.builds(lambda b: {k: v for k, v in b.items() if k not in ("layout", "dtype")}, _cos_sin_base()),
    {
        "positions": _positions_free_kind(),
        "dim": ints(minimum=2, even=True, typical=(4, 6)),
        "base": BASE_KIND,
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
    },
    _check_freqs_cis,
)


@covers("pemath.rope.freqs_cis")
@fuzz_settings()
@given(st.data())
def test_freqs_cis(data):
    run_spec(FREQS_CIS, data)


@st.composite
def _apply_complex_base(draw) -> dict[str, Any]:
    b = draw(_complex_base())
    z = b["z"]
    lead = tuple(z.shape[:-1])
    pos = draw(int_positions(draw(suffix_shapes(lead))))
    return {"z": z, "positions": xps.asarray(pos) if xp_of(z) is xps else pos,
            "scaling": draw(st.sampled_from(SCALINGS)), "inverse": draw(st.booleans())}


def _check_apply_complex(result: Any, kw: dict[str, Any]) -> None:
    z = kw["z"]
    r = check_array(result, like=z, shape=tuple(z.shape))
    zn = to_np(z).astype(np.complex128)
    ok = np.isfinite(zn)
    np.testing.assert_allclose(np.abs(r)[ok], _factor(kw) * np.abs(zn)[ok], rtol=1e-6, atol=1e-300)


APPLY_COMPLEX = Spec(
    rope.apply_complex,
    _apply_complex_base(),
    {
        "z": _z_kind,
        "positions": _pos_kind_for(lambda b: tuple(b["z"].shape[:-1]), owner="z"),
        "base": BASE_KIND,
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
        "inverse": bools(),
    },
    _check_apply_complex,
    aliases={"z": ("z.shape",)},
)


@covers("pemath.rope.apply_complex")
@fuzz_settings(2)
@given(st.data())
def test_apply_complex(data):
    run_spec(APPLY_COMPLEX, data)


# ---------------------------------------------------------------------------------------
# layouts


@st.composite
def _convert_base(draw) -> dict[str, Any]:
    lead = draw(st.sampled_from(LEADS))
    d = draw(st.sampled_from([2, 4, 6, 8]))
    x = draw(floats_array(lead + (d,)))
    return {"x": xps.asarray(x) if draw(st.booleans()) else x, "src": draw(st.sampled_from(LAYOUTS)),
            "dst": draw(st.sampled_from(LAYOUTS)), "rotary_dim": draw(st.sampled_from([None, 2, d]))}


def _check_convert(result: Any, kw: dict[str, Any]) -> None:
    x = kw["x"]
    check_array(result, like=x, shape=tuple(x.shape))
    assert result.dtype == x.dtype
    back = rope.convert_layout(result, src=kw["dst"], dst=kw["src"], rotary_dim=kw.get("rotary_dim"))
    assert _eq(to_np(back), to_np(x)), "converting back does not give x"


def _eq(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN where the dtype has NaN (any dtype: a permutation moves anything)."""
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))


def _x_kind_any(base: dict[str, Any]) -> st.SearchStrategy[H]:
    x = base["x"]
    if xp_of(x) is xps:
        return st.sampled_from([valid(x), valid(xps.astype(x, xps.int64)), valid(xps.astype(x, xps.float32))])
    out = float_array_variants(x, ints_ok=True, keeps_dtype=True) + nonfinite_variants(x)
    out = [h for h in out if "nested list" not in h.label] + [reject(x.tolist(), "nested list")]
    out += [maybe(x[..., :-1], "odd"), reject(np.array(1.0), "0-d"), maybe(np.zeros(x.shape[:-1] + (0,)), "empty")]
    return st.sampled_from(out)


CONVERT = Spec(
    rope.convert_layout,
    _convert_base(),
    {"x": _x_kind_any, "src": choices(LAYOUTS), "dst": choices(LAYOUTS),
     "rotary_dim": lambda b: ints(minimum=2, maximum=int(b["x"].shape[-1]), even=True, optional=True,
                                  typical=(2,))(b)},
    _check_convert,
    aliases={"x": ("x.shape",), "rotary_dim": ("x.shape",)},
)


@covers("pemath.rope.convert_layout")
@fuzz_settings()
@given(st.data())
def test_convert_layout(data):
    run_spec(CONVERT, data)


@st.composite
def _permute_base(draw) -> dict[str, Any]:
    n_heads = draw(st.sampled_from([1, 2, 3]))
    head_dim = draw(st.sampled_from([2, 4]))
    shape = (n_heads * head_dim,) + draw(st.sampled_from([(), (3,), (1,)]))
    w = draw(floats_array(shape))
    return {"weight": xps.asarray(w) if draw(st.booleans()) else w, "n_heads": n_heads,
            "src": draw(st.sampled_from(LAYOUTS)), "dst": draw(st.sampled_from(LAYOUTS))}


def _check_permute(result: Any, kw: dict[str, Any]) -> None:
    w = kw["weight"]
    check_array(result, like=w, shape=tuple(w.shape))
    back = rope.permute_qk_weight(result, n_heads=kw["n_heads"], src=kw["dst"], dst=kw["src"])
    assert _eq(to_np(back), to_np(w))


def _weight_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    w = base["weight"]
    if xp_of(w) is xps:
        return st.sampled_from([valid(w), valid(xps.astype(w, xps.float32))])
    out = [h for h in float_array_variants(w, ints_ok=True) if "nested list" not in h.label]
    out += nonfinite_variants(w) + [reject(w.tolist(), "list"), reject(np.array(1.0), "0-d"),
                                    reject(np.zeros((2, 2, 2)), "3-d"), maybe(w[:-1], "rows not divisible"),
                                    maybe(np.zeros((0,) + w.shape[1:]), "no rows")]
    return st.sampled_from(out)


PERMUTE = Spec(
    rope.permute_qk_weight,
    _permute_base(),
    {"weight": _weight_kind, "n_heads": loosen(ints(minimum=1, typical=(1, 2))), "src": choices(LAYOUTS),
     "dst": choices(LAYOUTS),
     "head_dim": lambda b: st.sampled_from([
         valid(None), valid(int(b["weight"].shape[0]) // b["n_heads"], "the weight's head dim"),
         reject(int(b["weight"].shape[0]) // b["n_heads"] + 2, "another head dim"), reject(0), reject(1),
         reject(2.0), reject("4"), reject(True)])},
    _check_permute,
    aliases={"weight": ("output features",), "n_heads": ("output features",)},
)


@covers("pemath.rope.permute_qk_weight")
@fuzz_settings()
@given(st.data())
def test_permute_qk_weight(data):
    run_spec(PERMUTE, data)


@st.composite
def _permute2_base(draw) -> dict[str, Any]:
    b = draw(_permute_base())
    wk = b["weight"][: b["weight"].shape[0] // b["n_heads"], ...]  # one kv head
    return {"wq": b["weight"], "wk": wk, "n_heads": b["n_heads"], "n_kv_heads": 1, "src": b["src"], "dst": b["dst"]}


def _check_permute2(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, tuple) and len(result) == 2
    check_array(result[0], like=kw["wq"], shape=tuple(kw["wq"].shape))
    check_array(result[1], like=kw["wk"], shape=tuple(kw["wk"].shape))


PERMUTE2 = Spec(
    rope.permute_qk_weights,
    _permute2_base(),
    {"wq": loosen(lambda b: _weight_kind({"weight": b["wq"]})), "wk": loosen(lambda b: _weight_kind({"weight": b["wk"]})),
     "n_heads": loosen(ints(minimum=1, typical=(1, 2))),  # q's head dim must be k's: another count may not fit
     "n_kv_heads": loosen(ints(minimum=1, typical=(1,), optional=True)),
     "src": choices(LAYOUTS), "dst": choices(LAYOUTS)},
    _check_permute2,
    aliases={"wq": ("weight", "output features"), "wk": ("weight", "output features"),
             "n_heads": ("output features",), "n_kv_heads": ("n_heads", "output features")},
)


@covers("pemath.rope.permute_qk_weights")
@fuzz_settings()
@given(st.data())
def test_permute_qk_weights(data):
    run_spec(PERMUTE2, data)


# ---------------------------------------------------------------------------------------
# long_term_decay


def _check_decay(result: Any, kw: dict[str, Any]) -> None:
    p = kw["distances"]
    pshape = tuple(p.shape) if hasattr(p, "shape") else tuple(np.shape(p))
    r = check_array(result, shape=pshape, dtype=np.float64 if not hasattr(p, "shape") or xp_of(p) is np
                    else xps.float64)
    h = int(kw["dim"]) // 2
    assert np.all(np.isfinite(r)) and np.all(r >= 0) and np.all(r <= (h + 1) / 2 * (1 + 1e-12))


DECAY = Spec(
    rope.long_term_decay,
    st.builds(lambda b: {"distances": b["positions"], "dim": b["dim"], "scaling": b["scaling"]}, _cos_sin_base()),
    {
        "distances": _positions_free_kind("distances"),
        "dim": ints(minimum=2, even=True, typical=(4,)),
        "base": BASE_KIND,
        "scaling": scaling_kind,
        "seq_len": ints(minimum=1, optional=True, typical=(10,), huge="maybe"),
    },
    _check_decay,
)


@covers("pemath.rope.long_term_decay")
@fuzz_settings()
@given(st.data())
def test_long_term_decay(data):
    run_spec(DECAY, data)


# ---------------------------------------------------------------------------------------
# from_hf


_HF_CONFIGS = [
    None,
    {},
    {"rope_type": "default", "rope_theta": 10000.0},
    {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
    {"type": "dynamic", "factor": 2.0},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "rope_theta": 10000.0},
    {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 64, "rope_theta": 500000.0},
    {"rope_type": "longrope", "short_factor": [1.0, 1.0], "long_factor": [2.0, 3.0],
     "original_max_position_embeddings": 64, "rope_theta": 10000.0},
    {"rope_type": "proportional", "factor": 1.0, "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
]

_HF_VALUE_JUNK = [None, "2.0", True, -1.0, 0, float("nan"), float("inf"), [2.0], {"a": 1}, 1e308, 2**63,
                  np.float64(2.0), np.int64(64), np.array(2.0), np.array([2.0]), 1 + 1j, "linear", 0.5]


def _hf_params_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    cfg = base["rope_parameters"]

    @st.composite
    def mutate(draw) -> H:
        if not cfg:
            return draw(st.sampled_from([valid(cfg), reject([("rope_type", "default")]), reject("default"),
                                         maybe({"rope_type": "nope"}), maybe({"rope_theta": None})]))
        c = dict(cfg)
        how = draw(st.sampled_from(["value", "drop", "extra", "type"]))
        key = draw(st.sampled_from(sorted(c)))
        if how == "value":
            c[key] = draw(st.sampled_from(_HF_VALUE_JUNK))
            return maybe(c, f"{key}={c[key]!r}")
        if how == "drop":
            del c[key]
            return maybe(c, f"without {key}")
        if how == "extra":
            c[draw(st.sampled_from(["mrope_section", "low_freq_facter", "", 3, None]))] = 1
            return reject(c, "extra key")
        c["rope_type"] = draw(st.sampled_from(["Linear", "", "ntk", 3, None]))
        return maybe(c, "rope_type")

    return st.one_of(mutate(), st.sampled_from([reject([1, 2]), reject("yarn"), reject(3.0),
                                                reject({"full_attention": cfg})]))


def _check_from_hf(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, rope.Spec)
    assert isinstance(result.base, float) and result.base > 0
    assert type(result.rotary_dim) is int and result.rotary_dim % 2 == 0
    assert 2 <= result.rotary_dim <= int(kw["head_dim"]) == result.head_dim
    assert result.layout == kw["layout"]
    assert result.scaling is None or isinstance(result.scaling, sc.RopeScaling)
    out = call(rope.inv_freq, spec=result, seq_len=4096, names=("base", "factor", "scaling"))
    if out.accepted:  # an extreme rope_theta is refused by the frequencies, clearly
        assert np.all(np.isfinite(out.result)) and np.all(out.result >= 0)


def _check_from_hf_result(result: Any, kw: dict[str, Any]) -> None:
    _check_from_hf(result, kw)


FROM_HF = Spec(
    rope.from_hf,
    st.sampled_from(_HF_CONFIGS).flatmap(lambda cfg: st.fixed_dictionaries({
        "rope_parameters": st.just(cfg),
        "head_dim": st.just(4) if cfg and cfg.get("rope_type") == "longrope" else st.sampled_from([4, 64]),
        "max_position_embeddings": st.just(4096), "rope_theta": st.just(10000.0),
        "layout": st.sampled_from(LAYOUTS)})),
    {
        "rope_parameters": _hf_params_kind,
        "layout": choices(LAYOUTS),
        "head_dim": loosen(lambda b: ints(minimum=2, typical=(b["head_dim"],), maximum=2**16)(b)),
        "max_position_embeddings": loosen(ints(minimum=1, optional=True, typical=(4096,), huge="maybe")),
        "rope_theta": loosen(reals(positive=True, optional=True, typical=(10000.0,))),
        # 0 rotates nothing: refused, except by 'proportional' (in a non-empty dict: loosened)
        "partial_rotary_factor": loosen(reals(positive=True, maximum=1.0, optional=True, typical=(0.5,)),
                                        lambda b: bool(b["rope_parameters"])),
        "original_max_position_embeddings": loosen(ints(minimum=1, optional=True, typical=(64,), huge="maybe")),
    },
    _check_from_hf_result,
    aliases={"rope_parameters": ("rope_parameters", "rope_type"),
             "head_dim": ("head_dim",), "partial_rotary_factor": ("partial_rotary_factor",)},
)


@covers("pemath.rope.from_hf")
@fuzz_settings(2)
@given(st.data())
def test_from_hf(data):
    run_spec(FROM_HF, data)


@pytest.mark.parametrize("spec", [INV_FREQ, APPLY, COS_SIN, MATRIX, FREQS_CIS, CONVERT, PERMUTE, FROM_HF],
                         ids=lambda s: s.fn.__name__)
@fuzz_settings(0.5)
@given(data=st.data())
def test_valid_calls(spec, data):
    run_valid(spec, data)
