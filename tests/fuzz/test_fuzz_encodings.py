"""Fuzzing the other encodings (sinusoidal, ALiBi, T5, pedagogy) and pemath.positions with hostile inputs."""

from __future__ import annotations

import math
from typing import Any

import array_api_strict as xps
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pemath import alibi, pedagogy, sinusoidal, t5
from pemath import positions as pos_mod

from ._common import check_array, floats_array, int_positions, xp_of
from ._fuzz import (
    H,
    Spec,
    bools,
    choices,
    covers,
    dtypes,
    equiv,
    float_array_variants,
    fuzz_settings,
    ints,
    layout_variants,
    loosen,
    maybe,
    must,
    nonfinite_variants,
    positions_variants,
    reals,
    reject,
    run_spec,
    valid,
)
from .test_fuzz_rope import _positions_free_kind, to_np

CONVENTIONS = sinusoidal.CONVENTIONS


def _pshape(p: Any) -> tuple[int, ...]:
    return tuple(p.shape) if hasattr(p, "shape") else tuple(np.shape(p))


# ---------------------------------------------------------------------------------------
# sinusoidal


@st.composite
def _encode_base(draw) -> dict[str, Any]:
    pos = draw(int_positions(draw(st.sampled_from([(), (3,), (2, 3), (0,)])), lo=0, hi=5000))
    return {"positions": xps.asarray(pos) if draw(st.booleans()) else pos, "dim": draw(st.sampled_from([4, 6, 8])),
            "convention": draw(st.sampled_from(CONVENTIONS)), "base": 10000.0, "dtype": None}


def _check_encode(result: Any, kw: dict[str, Any]) -> None:
    p = kw["positions"]
    r = check_array(result, shape=_pshape(p) + (int(kw["dim"]),)).astype(np.float64)
    assert np.all(np.isfinite(r)) and np.all(np.abs(r) <= 1.0)


ENCODE = Spec(
    sinusoidal.encode,
    _encode_base(),
    {"positions": _positions_free_kind(), "dim": loosen(ints(minimum=1, typical=(4, 5))),
     "base": reals(positive=True, typical=(10000.0,)), "convention": choices(CONVENTIONS),
     "dtype": dtypes(lambda b: xp_of(b["positions"]))},
    _check_encode,
    aliases={"dim": ("convention",), "convention": ("dim",)},
)


def _check_freqs(result: Any, kw: dict[str, Any]) -> None:
    f = check_array(result, dtype=np.float64, backend=np)
    assert f.ndim == 1 and f.size >= 1 and np.all(np.isfinite(f)) and np.all(f > 0) and f[0] == 1.0


def _check_wavelengths(result: Any, kw: dict[str, Any]) -> None:
    w = check_array(result, dtype=np.float64, backend=np)
    f = sinusoidal.frequencies(kw["dim"], base=kw.get("base", 10000.0), convention=kw["convention"])
    np.testing.assert_allclose(w * f, 2 * np.pi, rtol=1e-14)


_FREQ_BASE = st.fixed_dictionaries({"dim": st.sampled_from([4, 6, 512]), "convention": st.sampled_from(CONVENTIONS),
                                    "base": st.sampled_from([10000.0, 2.0])})
_FREQ_KINDS = {"dim": loosen(ints(minimum=1, typical=(4, 5))), "base": reals(positive=True, typical=(10000.0,)),
               "convention": choices(CONVENTIONS)}
FREQS = Spec(sinusoidal.frequencies, _FREQ_BASE, _FREQ_KINDS, _check_freqs,
             aliases={"dim": ("convention",), "convention": ("dim",)})
WAVES = Spec(sinusoidal.wavelengths, _FREQ_BASE, _FREQ_KINDS, _check_wavelengths,
             aliases={"dim": ("convention",), "convention": ("dim",)})


# ---------------------------------------------------------------------------------------
# ALiBi


def _check_slopes(result: Any, kw: dict[str, Any]) -> None:
    n = int(kw["num_heads"])
    s = check_array(result, shape=(n,), dtype=np.float64, backend=np)
    assert np.all((s > 0) & (s < 1))
    if n & (n - 1) == 0:
        assert s[0] == 2.0 ** (-8 / n)


SLOPES = Spec(alibi.slopes, st.fixed_dictionaries({"num_heads": st.sampled_from([1, 3, 8, 12, 64])}),
              {"num_heads": ints(minimum=1, typical=(8, 12))}, _check_slopes)


@st.composite
def _alibi_base(draw) -> dict[str, Any]:
    form = draw(st.sampled_from(alibi.FORMS))
    q = draw(st.integers(1, 4))
    k = draw(st.integers(q, 6))
    heads = draw(st.sampled_from([1, 4, [0.5], [0.25, 1.0, 2.0]]))
    return {"heads": heads, "q_len": q, "k_len": k, "form": form, "offset": draw(st.sampled_from([None, 0, k - q])),
            "dtype": None, "xp": None}


def _check_alibi(result: Any, kw: dict[str, Any]) -> None:
    h = kw["heads"]
    nh = int(h) if isinstance(h, (int, np.integer)) else len(np.asarray(to_np(h) if hasattr(h, "shape") else h))
    q, k = int(kw["q_len"]), int(kw["k_len"])
    b = check_array(result, shape=(nh, q, k)).astype(np.float64)
    assert not np.any(np.isnan(b)) and not np.any(b == np.inf)
    if kw["form"] == "symmetric":
        assert np.all(np.isfinite(b)) and np.all(b <= 0)
    off = k - q if kw.get("offset") is None else int(kw["offset"])
    i, j = np.arange(q)[:, None] + off, np.arange(k)[None, :]
    if kw["form"] != "symmetric":
        assert np.all(np.isneginf(b[:, j > i])) and np.all(np.isfinite(b[:, np.broadcast_to(j <= i, (q, k))]))


def _heads_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    h = base["heads"]
    if isinstance(h, int):
        # a 1-d array or list of numbers is a valid list of slopes: only the type errors are certain
        return ints(minimum=1, typical=(h,))(base).map(
            lambda x: maybe(x.value, x.label) if x.label in ("1-d array", "list") else x)
    a = np.asarray(h, np.float64)
    out = [h if "int" not in h.label else maybe(h.value, h.label)  # integer slopes are reals too
           for h in float_array_variants(a, keeps_dtype=False) if "array_api_strict" not in h.label]
    out += [maybe(xps.asarray(a), "strict slopes"), reject([], "empty"), reject(np.zeros((0,)), "empty array"),
            reject(np.ones((2, 2)), "2-d"), reject([0.5, math.nan], "nan"), reject([math.inf], "inf"),
            maybe([-0.5], "negative slope"), maybe([0.0], "zero slope"), maybe([1e308], "huge slope"),
            reject(["a"], "str"), reject([[0.5]], "nested"), reject(0.5, "float scalar")]
    return st.sampled_from(out)


def _offset_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    # negative offsets are valid for the symmetric form only: context-dependent
    return loosen(ints(optional=True, typical=(0, 2, -1)))(base)


ALIBI = Spec(
    alibi.bias,
    _alibi_base(),
    {"heads": _heads_kind, "q_len": loosen(ints(minimum=1, typical=(3,))),
     "k_len": loosen(ints(minimum=1, typical=(3,))), "form": choices(alibi.FORMS), "offset": _offset_kind,
     "dtype": dtypes(lambda b: np),
     "device": lambda b: st.sampled_from([valid(None), maybe("cpu"), maybe("cuda"), maybe(3)]),
     "xp": lambda b: st.sampled_from([valid(None), maybe(np), maybe(xps), reject("numpy"), reject(math),
                                      reject(3)])},
    _check_alibi,
    aliases={"q_len": ("k_len", "offset"), "k_len": ("q_len", "offset"), "offset": ("q_len", "k_len"),
             "form": ("q_len", "k_len"), "device": ("xp",), "xp": ("device",)},
)


# ---------------------------------------------------------------------------------------
# T5


def _check_bucket(result: Any, kw: dict[str, Any]) -> None:
    rp = kw["relative_position"]
    b = check_array(result, shape=_pshape(rp))
    assert b.dtype == np.int64
    assert np.all((b >= 0) & (b < int(kw["num_buckets"])))


@st.composite
def _bucket_base(draw) -> dict[str, Any]:
    rp = draw(int_positions(draw(st.sampled_from([(), (4,), (2, 3), (0,)])), lo=-300, hi=300))
    return {"relative_position": xps.asarray(rp) if draw(st.booleans()) else rp,
            "bidirectional": draw(st.booleans()), "num_buckets": draw(st.sampled_from([32, 8])),
            "max_distance": draw(st.sampled_from([128, 20])), "exact": draw(st.booleans())}


def _t5_int_kinds():
    return {"bidirectional": bools(), "num_buckets": loosen(ints(minimum=2, typical=(32,))),
            "max_distance": loosen(ints(minimum=2, typical=(128,), huge="maybe")), "exact": bools()}


_T5_ALIASES = {"num_buckets": ("max_distance", "bidirectional"), "max_distance": ("num_buckets",),
               "bidirectional": ("num_buckets",)}

BUCKET = Spec(t5.bucket, _bucket_base(),
              {"relative_position": _positions_free_kind("relative_position", floats_ok=False, exact_limit=False),
               **_t5_int_kinds()},
              _check_bucket, aliases=_T5_ALIASES)


def _check_thresholds(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, tuple) and all(type(t) is int for t in result)
    assert list(result) == sorted(result)


THRESHOLDS = Spec(t5.thresholds, st.builds(lambda b: {k: v for k, v in b.items() if k != "relative_position"},
                                           _bucket_base()),
                  _t5_int_kinds(), _check_thresholds, aliases=_T5_ALIASES)


@st.composite
def _t5_bias_base(draw) -> dict[str, Any]:
    nb = draw(st.sampled_from([8, 32]))
    table = draw(floats_array((nb, draw(st.sampled_from([1, 2])))))
    q = draw(st.integers(1, 4))
    return {"table": xps.asarray(table) if draw(st.booleans()) else table, "q_len": q,
            "k_len": draw(st.integers(1, 5)), "bidirectional": draw(st.booleans()), "max_distance": 20,
            "offset": draw(st.sampled_from([None, 0, -3])), "exact": False}


def _check_t5_bias(result: Any, kw: dict[str, Any]) -> None:
    table = kw["table"]
    tn = to_np(table) if hasattr(table, "shape") else np.asarray(table, np.float64)
    r = check_array(result, shape=(tn.shape[1], int(kw["q_len"]), int(kw["k_len"])))
    for h in range(tn.shape[1]):
        assert np.all(np.isin(r[h], tn[:, h]) | np.isnan(r[h])), "a bias value that is not in the table"


def _table_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    t = base["table"]
    if xp_of(t) is xps:
        return st.sampled_from([valid(t), reject(xps.astype(t, xps.int64)), maybe(xps.astype(t, xps.float32)),
                                reject(xps.reshape(t, (-1,)), "1-d")])
    out = float_array_variants(t, keeps_dtype=True) + nonfinite_variants(t)
    out = [h if "int" not in h.label and "bool" not in h.label else maybe(h.value, h.label) for h in out]
    out += [reject(t[:, 0], "1-d"), reject(t[None], "3-d"), maybe(t[:-1], "rows != num_buckets"),
            maybe(np.zeros((t.shape[0], 0)), "no heads"), reject(np.array(1.0), "0-d")]
    return st.sampled_from(out)


T5_BIAS = Spec(
    t5.bias,
    _t5_bias_base(),
    {"table": _table_kind, "q_len": ints(minimum=1, typical=(3,)), "k_len": ints(minimum=1, typical=(3,)),
     "num_buckets": loosen(lambda b: ints(optional=True, typical=(int(b["table"].shape[0]),))(b)),
     **{k: v for k, v in _t5_int_kinds().items() if k != "num_buckets"},
     "offset": ints(optional=True, typical=(0, -2), huge="reject")},
    _check_t5_bias,
    aliases={**_T5_ALIASES, "table": ("num_buckets", "max_distance"), "num_buckets": ("table", "max_distance",
                                                                                       "bidirectional")},
)


# ---------------------------------------------------------------------------------------
# pedagogy


@st.composite
def _ped_base(draw) -> dict[str, Any]:
    p = draw(int_positions(draw(st.sampled_from([(), (3,), (2, 3), (0,)])), lo=0, hi=60))
    return {"positions": xps.asarray(p) if draw(st.booleans()) else p, "dim": draw(st.sampled_from([1, 3, 8])),
            "dtype": None}


def _check_integer(result: Any, kw: dict[str, Any]) -> None:
    p = kw["positions"]
    r = check_array(result, shape=_pshape(p) + (int(kw["dim"]),)).astype(np.float64)
    pn = np.asarray(to_np(p) if hasattr(p, "shape") else p, dtype=np.float64)
    assert np.array_equal(r, np.broadcast_to(pn[..., None], r.shape))


def _check_normalized(result: Any, kw: dict[str, Any]) -> None:
    p = kw["positions"]
    r = check_array(result, shape=_pshape(p) + (int(kw["dim"]),)).astype(np.float64)
    assert np.all((r >= 0) & (r < 1))


def _check_binary(result: Any, kw: dict[str, Any]) -> None:
    p = kw["positions"]
    r = check_array(result, shape=_pshape(p) + (int(kw["dim"]),)).astype(np.float64)
    assert np.all((r == 0) | (r == 1))


def _ped_kinds(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    def pos_kind(base):
        p = base["positions"]
        strict = xp_of(p) is xps
        pn = to_np(p).astype(np.int64)
        out = [h for h in positions_variants(pn, None, strict=strict, floats_ok=False, negative_ok=False)
               if "with strict" not in h.label and "with NumPy" not in h.label and "2**53" not in h.label]
        if strict:
            out = [H(h.value, "maybe") if not (hasattr(h.value, "shape") and xp_of(h.value) is xps) else h
                   for h in out]
        return st.sampled_from(out + [reject(-(2**53) - 1), maybe(2**53), maybe(10**6, "large")])

    return {"positions": pos_kind, "dim": ints(minimum=1, typical=(4,)),
            "dtype": dtypes(lambda b: xp_of(b["positions"])), **(extra or {})}


INTEGER = Spec(pedagogy.integer, _ped_base(), _ped_kinds(), _check_integer)
NORMALIZED = Spec(pedagogy.normalized, st.builds(lambda b: {**b, "length": 61}, _ped_base()),
                  _ped_kinds({"length": loosen(ints(minimum=1, typical=(61,), huge="maybe"))}), _check_normalized,
                  aliases={"positions": ("length",), "length": ("positions",)})
BINARY = Spec(pedagogy.binary, st.builds(lambda b: {**b, "dim": 8}, _ped_base()),
              _ped_kinds({"dim": loosen(ints(minimum=1, typical=(8,)))}), _check_binary,
              aliases={"positions": ("dim", "2**dim"), "dim": ("positions",)})


def _learned(table: Any, positions: Any) -> Any:
    return pedagogy.LearnedTable(table).lookup(positions)


@st.composite
def _learned_base(draw) -> dict[str, Any]:
    rows = draw(st.sampled_from([1, 4, 9]))
    table = draw(floats_array((rows, draw(st.sampled_from([1, 3])))))
    strict = draw(st.booleans())
    p = draw(int_positions(draw(st.sampled_from([(), (3,), (2, 2), (0,)])), lo=0, hi=rows - 1))
    return {"table": xps.asarray(table) if strict else table, "positions": xps.asarray(p) if strict else p}


def _check_learned(result: Any, kw: dict[str, Any]) -> None:
    t, p = kw["table"], kw["positions"]
    tn = to_np(t) if hasattr(t, "shape") else np.asarray(t)
    pn = np.asarray(to_np(p) if hasattr(p, "shape") else p).astype(np.int64)
    r = check_array(result, shape=pn.shape + (tn.shape[1],))
    expect = tn[pn]
    assert np.array_equal(r.astype(np.float64), expect.astype(np.float64), equal_nan=True)


def _learned_table_kind(base):
    t = base["table"]
    if xp_of(t) is xps:
        return st.sampled_from([valid(t), reject(xps.astype(t, xps.int64)), maybe(xps.astype(t, xps.float32))])
    out = [h if "int" not in h.label and "bool" not in h.label else maybe(h.value, h.label)
           for h in float_array_variants(t) + nonfinite_variants(t)]
    out = [h if "array_api_strict" not in h.label else maybe(h.value) for h in out]
    out += [reject(t[:, 0], "1-d"), reject(np.zeros((0, 2)), "no rows"), reject(np.zeros((2, 0)), "no columns"),
            reject(t[None], "3-d"), maybe(t[:1], "one row")]
    return st.sampled_from(out)


def _learned_pos_kind(base):
    p, t = base["positions"], base["table"]
    strict = xp_of(t) is xps
    pn = to_np(p).astype(np.int64)
    out = [h for h in positions_variants(pn, None, strict=strict, floats_ok=False, negative_ok=False)
           if "2**53" not in h.label and "0-d" not in h.label and "zero-size" not in h.label
           and "empty" not in h.label]
    out += [reject(int(t.shape[0]), "== rows"), reject(10**6, "beyond rows"), reject([0, -1], "negative")]
    return st.sampled_from(out)


LEARNED = Spec(_learned, _learned_base(), {"table": _learned_table_kind, "positions": _learned_pos_kind},
               _check_learned, aliases={"positions": ("rows", "table")})


# ---------------------------------------------------------------------------------------
# positions


@st.composite
def _mask_base(draw) -> dict[str, Any]:
    m = draw(hnp.arrays(np.int64, draw(st.sampled_from([(1, 4), (2, 3), (0, 3), (2, 0)])),
                        elements=st.integers(0, 1)))
    return {"mask": xps.asarray(m) if draw(st.booleans()) else m, "pad_value": draw(st.sampled_from([1, 0, -1]))}


def _check_mask(result: Any, kw: dict[str, Any]) -> None:
    m = kw["mask"]
    mn = np.asarray(to_np(m) if hasattr(m, "shape") else m)
    r = check_array(result, shape=mn.shape)
    assert r.dtype == np.int64
    real = mn.astype(bool)
    assert np.array_equal(r[real], (np.cumsum(real, axis=-1) - 1)[real])


def _mask_kind(base):
    m = base["mask"]
    if xp_of(m) is xps:
        return st.sampled_from([valid(m), valid(xps.astype(m, xps.bool)), valid(xps.astype(m, xps.int8)),
                                reject(xps.astype(m, xps.float64)), reject(xps.reshape(m, (-1,)) * 0 + 2, "2s")])
    out = [valid(m), must(m.astype(bool), m, "bool"), must(m.astype(np.uint8), m, "uint8"),
           must(m.tolist(), m, "list") if m.size else maybe(m.tolist(), "empty list"), *[h for h in layout_variants(m)], reject(m.astype(np.float64), "float"),
           reject(m.astype(np.complex128)), reject(m + 2, "values 2") if m.size else valid(m),
           reject(m * 0 - 1, "values -1") if m.size else valid(m), maybe(m.reshape(-1), "1-d"), maybe(m[None], "3-d"),
           reject(np.array(1)), reject([[1, 0], [1]], "ragged"), reject("11"), reject(None), reject(m.astype(str)),
           equiv(xps.asarray(m), xps.asarray(m), "strict")]
    return st.sampled_from(out)


MASK = Spec(pos_mod.from_attention_mask, _mask_base(),
            {"mask": _mask_kind, "pad_value": ints(typical=(1, 0, -5), huge="reject")}, _check_mask)


@st.composite
def _cu_base(draw) -> dict[str, Any]:
    lens = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return {"cu_seqlens": xps.asarray(cu) if draw(st.booleans()) else cu}


def _check_cu(result: Any, kw: dict[str, Any]) -> None:
    cu = kw["cu_seqlens"]
    cn = np.asarray(to_np(cu) if hasattr(cu, "shape") else cu).astype(np.int64)
    r = check_array(result, shape=(int(cn[-1]),))
    assert r.dtype == np.int64
    for a, b in zip(cn[:-1], cn[1:]):
        assert np.array_equal(r[a:b], np.arange(b - a))


def _cu_kind(base):
    cu = base["cu_seqlens"]
    if xp_of(cu) is xps:
        return st.sampled_from([valid(cu), valid(xps.astype(cu, xps.int32)), reject(xps.astype(cu, xps.float64))])
    out = [valid(cu), must(cu.tolist(), cu, "list"), must(cu.astype(np.int32), cu, "int32"),
           must(cu.astype(np.uint16), cu, "uint16"), *layout_variants(cu), reject(cu.astype(np.float64), "float"),
           reject(cu.astype(bool), "bool"), reject(cu + 1, "not starting at 0"), reject(cu[::-1] if cu.size > 1 and
                                                                                  cu[-1] else cu + 1, "decreasing"),
           reject(np.array([0, -1]), "negative"), reject(np.array([0, 2**62]), "huge"),
           reject(np.array([0, 2**63 - 1]), "int64 max"), reject(np.zeros((2, 2), np.int64), "2-d"),
           reject(np.array(0), "0-d"), reject(np.zeros(0, np.int64), "empty"), reject("0,3"), reject(None),
           reject([0, 2.5]), reject(np.array([0, 2**64 - 1], dtype=np.uint64), "uint64 max")]
    return st.sampled_from(out)


CU = Spec(pos_mod.from_cu_seqlens, _cu_base(), {"cu_seqlens": _cu_kind}, _check_cu)


def _check_max_exact(result: Any, kw: dict[str, Any]) -> None:
    assert type(result) is int and result >= 1


def _dtype_arg_kind(base):
    good = [np.float16, np.float32, np.float64, "float32", "bfloat16", ml_dtypes.bfloat16, np.dtype("float16"),
            np.int32, np.int64, np.uint8, "float8_e4m3fn", xps.float32, xps.int64, np.dtype(">f4")]
    bad = [np.bool_, bool, "bool", np.complex128, "complex64", "nope", "", None, 3, 2.5, [np.float32], object,
           np.dtype("O"), np.dtype("U3"), np.dtype("M8[s]"), xps.bool, xps.complex64, "float8_e8m0fnu", str]
    return st.sampled_from([valid(g) for g in good] + [reject(b) for b in bad] + [maybe(float), maybe(int)])


MAX_EXACT = Spec(pos_mod.max_exact_position, st.just({"dtype": np.float32}), {"dtype": _dtype_arg_kind},
                 _check_max_exact)

SPECS = {
    "pemath.sinusoidal.encode": ENCODE,
    "pemath.sinusoidal.frequencies": FREQS,
    "pemath.sinusoidal.wavelengths": WAVES,
    "pemath.alibi.slopes": SLOPES,
    "pemath.alibi.bias": ALIBI,
    "pemath.t5.bucket": BUCKET,
    "pemath.t5.thresholds": THRESHOLDS,
    "pemath.t5.bias": T5_BIAS,
    "pemath.pedagogy.integer": INTEGER,
    "pemath.pedagogy.normalized": NORMALIZED,
    "pemath.pedagogy.binary": BINARY,
    "pemath.pedagogy.LearnedTable": LEARNED,
    "pemath.positions.from_attention_mask": MASK,
    "pemath.positions.from_cu_seqlens": CU,
    "pemath.positions.max_exact_position": MAX_EXACT,
}


@covers(*SPECS)
@pytest.mark.parametrize("name", sorted(SPECS))
@fuzz_settings()
@given(data=st.data())
def test_encodings(name, data):
    run_spec(SPECS[name], data)

