"""Tests written to kill surviving mutants of the encodings (T5, ALiBi, sinusoidal, positions).

Each test states a property, a hand-computed or published value, or an error a bad argument
must raise; none re-implements the function under test with its own formula.
See tests/mutation/survivors.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pemath import t5

# --- T5 ----------------------------------------------------------------------------------------


def _k_float32_bruteforce(n: np.ndarray, h: int, md: int) -> np.ndarray:
    """T5's ``int(log(float32(n) / me) / log(md / me) * (h - me))`` evaluated array-wise in float32.

    The float32 logarithm is taken as the float64 logarithm rounded to float32 (a double rounding
    that differs from the correctly rounded one only within 2**-29 of a float32 midpoint; checked
    not to happen at the points used here). Independent of pemath's per-point mpmath evaluation.
    """
    me = h // 2
    x = n.astype(np.float32) / np.float32(me)
    lg = np.log(x.astype(np.float64)).astype(np.float32)
    q = lg / np.float32(math.log(md / me))
    return np.floor((q * np.float32(h - me)).astype(np.float64)).astype(np.int64)


@pytest.mark.parametrize(("h", "md"), [(64, 10**9), (16, 2**40)])
def test_float32_thresholds_far_from_exact_match_a_scan(h, md):
    # With a huge max_distance float32 (float32(n) itself rounds beyond 2**24) puts the bucket
    # starts hundreds to tens of thousands of positions away from the exact ones, on both sides:
    # the threshold search must walk that far. Reference: the first n of a scan with K(n) >= k.
    kw = dict(bidirectional=False, num_buckets=h, max_distance=md)
    exact = t5.thresholds(exact=True, **kw)
    ours = t5.thresholds(**kw)
    assert all(type(t) is int for t in ours)
    gaps = [a - b for a, b in zip(ours, exact)]
    assert min(gaps) < -100 and max(gaps) > 3  # both directions, far: the test is not vacuous
    for k, t in enumerate(exact, 1):
        w = 3 * max(1000, t >> 20)
        n = np.arange(max(h // 2, t - w), t + w)
        kk = _k_float32_bruteforce(n, h, md)
        assert np.all(np.diff(kk) >= 0) and kk[0] < k <= kk[-1]
        assert ours[k - 1] == int(n[np.argmax(kk >= k)]), k


def test_defaults_are_float32_where_it_differs_from_exact():
    # h = 36, D = 50: float32 puts n = 30 in bucket 26, the exact floor in 27 (published finding,
    # tests/test_t5.py::DISAGREE); so bucket 27 starts at 31 for float32, at 30 exactly.
    kw = dict(bidirectional=False, num_buckets=36, max_distance=50)
    assert t5.thresholds(**kw)[27 - 18 - 1] == 31
    assert t5.thresholds(exact=True, **kw)[27 - 18 - 1] == 30
    table = np.arange(36.0)[:, None]
    assert t5.bias(table, 1, 31, **kw)[0, 0, 0] == 26.0  # key 0, query 30: distance 30
    assert t5.bias(table, 1, 31, exact=True, **kw)[0, 0, 0] == 27.0


def test_bias_default_max_distance_is_128():
    # 32 buckets bidirectional, D = 128: bucket 8 + floor(2 log2(n / 8)), so n = 16 is bucket 10;
    # with D = 129 it would be 9 (8 * 16.125**(1/4) = 16.03 > 16)
    table = np.arange(32.0)[:, None]
    row = t5.bias(table, 1, 17)[0, 0]  # query 16, keys 0..16
    assert row[0] == 10.0 and row[4] == 9.0  # distances 16 and 12
    assert t5.bias(table, 1, 17, max_distance=129)[0, 0, 0] == 9.0


def test_bias_single_key():
    table = np.arange(32.0 * 2).reshape(32, 2)
    out = t5.bias(table, 1, 1)
    assert out.shape == (2, 1, 1) and out[:, 0, 0].tolist() == [0.0, 1.0]  # distance 0: bucket 0


def test_bias_offset_range():
    table = np.arange(32.0)[:, None]
    # the first query may sit anywhere in [-2**53, 2**53] (positions stay exact in float64)
    assert t5.bias(table, 1, 2, offset=2**53)[0].tolist() == [[15.0, 15.0]]  # far before: last bucket
    assert t5.bias(table, 1, 2, offset=-(2**53))[0].tolist() == [[31.0, 31.0]]  # far after
    assert t5.bias(table, 1, 2, offset=1000)[0].tolist() == [[15.0, 15.0]]
    for bad in (2**53 + 1, -(2**53) - 1, 2**60):
        with pytest.raises(ValueError, match="offset"):
            t5.bias(table, 1, 2, offset=bad)


def test_int64_min_anywhere_in_the_array_is_refused():
    with pytest.raises(ValueError, match="relative_position holds -2..63"):
        t5.bucket(np.array([5, -(2**63), 7]))


def test_max_exact_in_the_message_is_an_integer():
    # unidirectional, 33 buckets: max_exact = 33 // 2 = 16
    with pytest.raises(ValueError, match=r"max_distance must be > max_exact = 16 \("):
        t5.bucket([0], bidirectional=False, num_buckets=33, max_distance=16)
    assert t5.bucket([-16], bidirectional=False, num_buckets=33, max_distance=17).tolist() == [16]


# --- ALiBi -------------------------------------------------------------------------------------

from pemath import alibi  # noqa: E402


def test_alibi_offset_bounds():
    # the last query position offset + q_len - 1 must stay below 2**53 (exact in float64)
    out = alibi.bias(2, 2, 2, form="causal", offset=2**53 - 2)
    assert out.shape == (2, 2, 2) and out[0, 0, 0] == -(2.0**53 - 2) / 16  # slope 2**-4
    for bad in (2**53 - 1, 2**53, 2**54):
        with pytest.raises(ValueError, match="offset must be <= 9007199254740990"):
            alibi.bias(2, 2, 2, form="causal", offset=bad)
    assert alibi.bias(2, 1, 2, form="symmetric", offset=-(2**53))[0, 0, 0] == -(2.0**49)
    with pytest.raises(ValueError, match="offset must be >= -9007199254740992"):
        alibi.bias(2, 1, 2, form="symmetric", offset=-(2**53) - 1)
    # an ordinary large offset: -m (i - j) with m = 1/16, i = 1000
    assert alibi.bias(2, 1, 3, form="causal", offset=1000)[0].tolist() == [[-62.5, -62.4375, -62.375]]


def test_alibi_xp_must_be_a_namespace():
    import types

    for fake in (types.SimpleNamespace(asarray=np.asarray), types.SimpleNamespace(arange=np.arange)):
        with pytest.raises(TypeError, match="xp must be an array namespace"):
            alibi.bias(4, 2, 3, form="causal", xp=fake)


# --- sinusoidal, frequencies ---------------------------------------------------------------------

from pemath import sinusoidal  # noqa: E402
from pemath._frequencies import base_inv_freq  # noqa: E402


def test_frequency_tables_are_read_only():
    # cached tables are shared between calls: writing into one must fail, not corrupt the cache
    for table in (sinusoidal.wavelengths(8, convention="concat"), sinusoidal.frequencies(8, convention="concat"), base_inv_freq(8, 10000.0)):
        with pytest.raises(ValueError, match="read-only"):
            table[0] = 1.0
    assert base_inv_freq(8, 10000.0)[0] == 1.0


# --- positions ---------------------------------------------------------------------------------

from pemath import positions  # noqa: E402


def test_attention_mask_without_columns():
    out = positions.from_attention_mask(np.zeros((3, 0), dtype=np.int64))
    assert out.shape == (3, 0) and out.dtype == np.int64


def test_attention_mask_error_counts_the_bad_values():
    # 4 bad values (2, 3, 5, 7), 2 zeros, 2 ones: a count of the wrong kind differs
    with pytest.raises(ValueError, match=r"got 4 other value\(s\)"):
        positions.from_attention_mask([[0, 1, 2, 3], [0, 5, 7, 1]])


def test_cu_seqlens_decreasing_is_refused_and_located():
    with pytest.raises(ValueError, match=r"cu_seqlens\[1\] = -1 < cu_seqlens\[0\] = 0"):
        positions.from_cu_seqlens([0, -1])
    # an empty sequence (step 0) before the decrease: the decrease is what is reported
    with pytest.raises(ValueError, match=r"cu_seqlens\[3\] = 2 < cu_seqlens\[2\] = 3"):
        positions.from_cu_seqlens([0, 3, 3, 2])


def test_max_exact_position_ml_dtypes_integers():
    pytest.importorskip("ml_dtypes")
    assert positions.max_exact_position("int4") == 7
    assert positions.max_exact_position("uint4") == 15


def test_max_exact_position_bad_dtypes():
    import array_api_strict as xs

    for d in (xs.bool, xs.complex64):
        with pytest.raises(TypeError, match="dtype must be a real floating or integer dtype"):
            positions.max_exact_position(d)
    pytest.importorskip("ml_dtypes")
    # a name that is an attribute of ml_dtypes but not a dtype
    with pytest.raises(ValueError, match="'__version__' is not a known dtype name"):
        positions.max_exact_position("__version__")


def test_max_exact_position_names_without_ml_dtypes(monkeypatch):
    from pemath import _dtypes

    monkeypatch.setattr(_dtypes, "ml_dtypes", lambda required_for=None: None)
    with pytest.raises(ValueError, match="'__class__' is not a known dtype name"):
        positions.max_exact_position("__class__")


# --- argument ranges at their exact edges (third pass) -----------------------------------------


def test_t5_num_buckets_limit_is_4096():
    with pytest.raises(ValueError, match="num_buckets"):
        t5.thresholds(bidirectional=False, num_buckets=4097, max_distance=10**6)
    with pytest.raises(ValueError, match="num_buckets"):
        t5.bucket(0, bidirectional=True, num_buckets=4097, max_distance=10**6)


def test_t5_max_distance_limit_is_int64_max():
    # 4 bidirectional buckets: max_exact = 1 and a single logarithmic bucket, so no thresholds
    # to search: the only thing under test is the range of max_distance
    assert t5.thresholds(num_buckets=4, max_distance=2**63 - 1) == ()
    assert t5.bucket([-5, 0, 5], num_buckets=4, max_distance=2**63 - 1).tolist() == [1, 0, 3]
    for md in (2**63, 2**64):
        with pytest.raises(ValueError, match="max_distance"):
            t5.thresholds(num_buckets=4, max_distance=md)


def test_attention_mask_pad_value_is_any_int64():
    from pemath import positions

    mask = [[0, 1, 1]]
    for pad in (-(2**63), 2**63 - 1):
        assert positions.from_attention_mask(mask, pad_value=pad).tolist() == [[pad, 0, 1]]
    for pad in (-(2**63) - 1, 2**63):
        with pytest.raises(ValueError, match="pad_value"):
            positions.from_attention_mask(mask, pad_value=pad)
