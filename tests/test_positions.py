"""Position ids from masks and packed lengths, and the exact integer range of dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pemath import _compat, positions

from .conftest import to_np

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)


# ----------------------------------------------------------------------------- from_attention_mask


@fixture_ok
@given(rows=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=4),
       as_bool=st.booleans(), pad_value=st.integers(-3, 3))
def test_left_padded_rows_count_from_zero(xp, rows, as_bool, pad_value):
    seq = max(p + n for p, n in rows) or 1
    mask = np.zeros((len(rows), seq), dtype=np.int64)
    for b, (pad, n) in enumerate(rows):
        mask[b, seq - n:] = 1  # left padding: n real tokens at the end of the row
    m = xp.asarray(mask.astype(bool) if as_bool else mask)
    out = positions.from_attention_mask(m, pad_value=pad_value)
    assert _compat.namespace(out) is _compat.namespace(m)
    got = to_np(out)
    for b, (_, n) in enumerate(rows):
        assert got[b, seq - n:].tolist() == list(range(n))
        assert got[b, : seq - n].tolist() == [pad_value] * (seq - n)


def test_hf_convention_and_right_padding(xp):
    mask = xp.asarray([[0, 0, 1, 1], [1, 1, 1, 0], [1, 0, 1, 1]])
    got = to_np(positions.from_attention_mask(mask))
    # HF: cumsum - 1, then masked_fill(mask == 0, 1); holes keep counting real tokens
    assert got.tolist() == [[1, 1, 0, 1], [0, 1, 2, 1], [0, 1, 1, 2]]
    assert got.dtype == np.int64


def test_list_input_gives_numpy():
    out = positions.from_attention_mask([[True, True], [False, True]], pad_value=0)
    assert isinstance(out, np.ndarray) and out.tolist() == [[0, 1], [0, 0]]


@pytest.mark.parametrize(
    "mask, kwargs, exc, match",
    [
        (np.ones(4, dtype=np.int64), {}, ValueError, "mask must be 2-D"),
        (np.ones((2, 2, 2), dtype=np.int64), {}, ValueError, "mask must be 2-D"),
        (np.ones((2, 3)), {}, TypeError, "mask"),
        ([[1.0, 0.0]], {}, TypeError, "mask"),
        (np.array([[1, 2, 0]]), {}, ValueError, "mask must hold only 0 and 1"),
        (np.array([[1, -1]]), {}, ValueError, "mask"),
        ("1100", {}, TypeError, "mask"),
        (None, {}, TypeError, "mask"),
        ([[1, 1], [1]], {}, ValueError, "mask"),
        (np.ones((1, 2), dtype=np.int64), dict(pad_value=1.0), TypeError, "pad_value"),
        (np.ones((1, 2), dtype=np.int64), dict(pad_value=True), TypeError, "pad_value"),
    ],
)
def test_mask_bad_arguments(mask, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        positions.from_attention_mask(mask, **kwargs)


# ----------------------------------------------------------------------------- from_cu_seqlens


@fixture_ok
@given(lengths=st.lists(st.integers(0, 7), max_size=6), dtype=st.sampled_from(["int32", "int64"]))
def test_packed_positions_restart_per_sequence(xp, lengths, dtype):
    cu = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(dtype)
    out = positions.from_cu_seqlens(xp.asarray(cu))
    assert _compat.namespace(out) is _compat.namespace(xp.asarray(cu))
    expected = [t for n in lengths for t in range(n)]
    assert to_np(out).tolist() == expected


def test_cu_seqlens_examples():
    assert positions.from_cu_seqlens([0]).tolist() == []
    assert positions.from_cu_seqlens([0, 0, 2]).tolist() == [0, 1]
    assert positions.from_cu_seqlens(np.array([0, 4], dtype=np.int32)).dtype == np.int64


@pytest.mark.parametrize(
    "cu, exc, match",
    [
        ([1, 3], ValueError, "must start at 0"),
        ([0, 3, 2], ValueError, r"non-decreasing.*cu_seqlens\[2\] = 2"),
        (np.array([0.0, 2.0]), TypeError, "cu_seqlens must have an integer dtype"),
        (np.array([False, True]), TypeError, "cu_seqlens"),
        ([0.0, 1.5], TypeError, "cu_seqlens"),
        (np.zeros((2, 2), dtype=np.int64), ValueError, "1-D"),
        (np.zeros(0, dtype=np.int64), ValueError, "non-empty"),
        (3, TypeError, "cu_seqlens"),
    ],
)
def test_cu_seqlens_bad_arguments(cu, exc, match):
    with pytest.raises(exc, match=match):
        positions.from_cu_seqlens(cu)


# ----------------------------------------------------------------------------- max_exact_position


@pytest.mark.parametrize(
    "dtype, n",
    [("float16", 2048), ("bfloat16", 256), ("float32", 2**24), ("float64", 2**53),
     (np.float16, 2048), (np.dtype("float32"), 2**24), ("int32", 2**31 - 1), ("uint8", 255),
     ("float8_e4m3fn", 16), ("float8_e5m2", 8), ("float8_e3m4", 15)],
)
def test_published_values(dtype, n):
    if isinstance(dtype, str) and dtype.startswith(("bfloat", "float8")):
        pytest.importorskip("ml_dtypes")
    assert positions.max_exact_position(dtype) == n


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                  "float8_e3m4", "float6_e2m3fn", "float4_e2m1fn"])
def test_brute_force_small_formats(name):
    # independent of finfo: cast 0..N+1 and read back
    if name != "float16":
        ml = pytest.importorskip("ml_dtypes")
        if not hasattr(ml, name):
            pytest.skip(f"ml_dtypes has no {name}")
        dt = np.dtype(getattr(ml, name))
    else:
        dt = np.dtype(name)
    n = positions.max_exact_position(name)
    ints = np.arange(n + 2, dtype=np.float64)
    with np.errstate(all="ignore"):
        back = ints.astype(dt).astype(np.float64)
    assert np.array_equal(back[: n + 1], ints[: n + 1])
    assert back[n + 1] != n + 1


def test_other_dtype_objects():
    ml = pytest.importorskip("ml_dtypes")
    assert positions.max_exact_position(ml.bfloat16) == 256
    assert positions.max_exact_position(np.dtype(ml.float8_e4m3fn)) == 16
    import array_api_strict as s

    assert positions.max_exact_position(s.float32) == 2**24
    assert positions.max_exact_position(s.int8) == 127


def test_torch_dtypes():
    torch = pytest.importorskip("torch")
    assert positions.max_exact_position(torch.bfloat16) == 256
    assert positions.max_exact_position(torch.float16) == 2048
    assert positions.max_exact_position(torch.float64) == 2**53
    assert positions.max_exact_position(torch.int64) == 2**63 - 1
    with pytest.raises(TypeError, match="dtype"):
        positions.max_exact_position(torch.bool)


def test_no_torch_import_for_other_dtypes():
    import subprocess
    import sys

    code = ("import sys; from pemath import positions; positions.max_exact_position('float32'); "
            "positions.from_attention_mask([[1]]); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "dtype, exc, match",
    [
        (None, TypeError, "dtype"),
        (3, TypeError, "dtype"),
        (True, TypeError, "dtype"),
        ("float33", ValueError, "float33"),
        ("bool", TypeError, "dtype"),
        (np.complex64, TypeError, "dtype"),
        ("float8_e8m0fnu", ValueError, "cannot represent 0"),
    ],
)
def test_max_exact_position_bad(dtype, exc, match):
    if dtype == "float8_e8m0fnu":
        ml = pytest.importorskip("ml_dtypes")
        if not hasattr(ml, "float8_e8m0fnu"):
            pytest.skip("old ml_dtypes")
    with pytest.raises(exc, match=match):
        positions.max_exact_position(dtype)


def test_narrow_format_table_matches_ml_dtypes():
    """The by-name table used without ml_dtypes agrees with ml_dtypes' own formats."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from pemath._dtypes import NARROW_FORMATS

    for name, n in NARROW_FORMATS.items():
        if hasattr(ml_dtypes, name):
            assert positions.max_exact_position(getattr(ml_dtypes, name)) == n, name
