"""pemath.t5: relative position buckets (float32 as T5 computes them, and exact) and the bias."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import t5

from .conftest import to_np

# (num_buckets, max_distance, bidirectional): T5 v1/v1.1, mT5, LongT5, UL2, ByT5 and variants
COMMON = [(32, 128, True), (32, 128, False), (64, 256, True), (64, 256, False), (128, 256, True),
          (128, 512, True), (32, 64, True), (16, 64, True)]


# --- hand-computed values ------------------------------------------------------------------


def test_hand_values_bidirectional_32_128():
    # 16 buckets per direction, 8 exact; bucket 8 + floor(8 ln(n/8) / ln 16) = 8 + floor(2 log2(n/8))
    rel = [0, -1, -7, -8, -11, -12, -15, -16, -22, -23, -32, -45, -46, -64, -90, -91, -127, -128, -10**6,
           1, 7, 8, 16, 127, 128, 10**6]
    expected = [0, 1, 7, 8, 8, 9, 9, 10, 10, 11, 12, 12, 13, 14, 14, 15, 15, 15, 15,
                17, 23, 24, 26, 31, 31, 31]
    assert t5.bucket(rel).tolist() == expected
    assert t5.bucket(rel, exact=True).tolist() == expected


def test_hand_values_unidirectional_32_128():
    # 32 buckets, 16 exact; bucket 16 + floor(16 ln(n/16) / ln 8); keys after the query: bucket 0
    rel = [0, -1, -15, -16, -18, -19, -20, -21, -127, -128, -5000, 1, 50]
    expected = [0, 1, 15, 16, 16, 17, 17, 18, 31, 31, 31, 0, 0]
    assert t5.bucket(rel, bidirectional=False).tolist() == expected


def test_thresholds_hand_values():
    # ceil(8 * 2**(k/2)), k = 1..7
    assert t5.thresholds() == (12, 16, 23, 32, 46, 64, 91)
    # ceil(16 * 8**(k/16)), k = 1..15
    expected = tuple(math.ceil(16 * 8 ** (k / 16) - 1e-12) for k in range(1, 16))
    assert t5.thresholds(bidirectional=False) == expected
    assert t5.thresholds(bidirectional=False, exact=True) == expected


# --- the float formula in NumPy (float32 and float64) against pemath --------------------------


def _numpy_formula(rel: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int, ft) -> np.ndarray:
    # HF's _relative_position_bucket with its float32 cast made a parameter
    out = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        out += (rel > 0).astype(np.int64) * num_buckets
        n = np.abs(rel)
    else:
        n = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(n.astype(ft) / ft(max_exact)) / ft(math.log(max_distance / max_exact)) * ft(num_buckets - max_exact)
        large = max_exact + np.where(n < max_exact, 0, x).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return out + np.where(n < max_exact, n, large)


@pytest.mark.parametrize(("num_buckets", "max_distance", "bidirectional"), COMMON)
def test_common_configs_float32_float64_and_exact_agree(num_buckets, max_distance, bidirectional):
    # The finding for the configurations in use: no relative position up to 4096 is bucketed
    # differently by float32, float64 and the exact floor.
    rel = np.arange(-4096, 4097)
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    ours = t5.bucket(rel, **kw)
    assert np.array_equal(ours, t5.bucket(rel, exact=True, **kw))
    assert np.array_equal(ours, _numpy_formula(rel, bidirectional, num_buckets, max_distance, np.float32))
    assert np.array_equal(ours, _numpy_formula(rel, bidirectional, num_buckets, max_distance, np.float64))
    # every bucket is used, except bucket num_buckets // 2 when bidirectional: keys after the
    # query have distance >= 1, so the upper half starts at num_buckets // 2 + 1 (as in T5)
    used = set(range(num_buckets)) - ({num_buckets // 2} if bidirectional else set())
    assert set(ours.tolist()) == used


# Where float32 and the exact floor part (per-direction buckets h = num_buckets, unidirectional).
# float32 values: T5's formula in IEEE float32 with a correctly rounded log, which is what HF's
# torch CPU gives at these points (checked once against HF's own code).
DISAGREE = [  # (h, max_distance, distance, float32 bucket, exact bucket)
    (36, 50, 30, 26, 27),
    (72, 100, 60, 53, 54),
    (72, 784, 168, 53, 54),
    (83, 1000, 796, 80, 79),
    (99, 784, 426, 88, 87),
]


@pytest.mark.parametrize(("h", "md", "n", "f32", "exact"), DISAGREE)
def test_float32_and_exact_disagreements(h, md, n, f32, exact):
    kw = dict(bidirectional=False, num_buckets=h, max_distance=md)
    assert t5.bucket(-n, **kw).item() == f32
    assert t5.bucket(-n, exact=True, **kw).item() == exact
    # neighbours agree
    assert np.array_equal(t5.bucket([-n + 1, -n - 1], **kw), t5.bucket([-n + 1, -n - 1], exact=True, **kw))
    # the exact quotient sits within float32 rounding of an integer boundary
    me = h // 2
    with mpmath.workdps(40):
        q = (h - me) * mpmath.log(mpmath.mpf(n) / me) / mpmath.log(mpmath.mpf(md) / me)
    assert abs(q - round(q)) < 1e-5


def test_float64_would_disagree_at_exact_boundaries():
    # h = 9, D = 128: the quotient log(n/4)/log(32)*5 = log2(n/4) is an integer at n = 8, 16, 64;
    # T5's float32 lands on it, float64 falls just below.
    n = np.array([8, 16, 64])
    ours = t5.bucket(-n, bidirectional=False, num_buckets=9, max_distance=128)
    assert ours.tolist() == [5, 6, 8]
    assert ours.tolist() == t5.bucket(-n, bidirectional=False, num_buckets=9, max_distance=128, exact=True).tolist()
    f64 = _numpy_formula(-n, False, 9, 128, np.float64)
    assert f64.tolist() == [4, 5, 7]


# --- properties ------------------------------------------------------------------------------

configs = st.tuples(st.booleans(), st.integers(2, 300), st.integers(1, 5000)).filter(
    lambda c: c[1] >= (4 if c[0] else 2) and c[2] > (c[1] // 2 if c[0] else c[1]) // 2
)


def _exact_by_mpmath(n: int, h: int, md: int) -> int:
    me = h // 2
    if n < me:
        return n
    with mpmath.workdps(60):
        q = (h - me) * mpmath.log(mpmath.mpf(n) / me) / mpmath.log(mpmath.mpf(md) / me)
        k = int(mpmath.nint(q)) if abs(q - mpmath.nint(q)) < mpmath.mpf(10) ** -40 else int(mpmath.floor(q))
    return me + min(k, h - me - 1)


@given(cfg=configs, n=st.integers(0, 20000))
def test_exact_is_the_mathematical_floor(cfg, n):
    bidir, nb, md = cfg
    h = nb // 2 if bidir else nb
    got = t5.bucket(-n, bidirectional=bidir, num_buckets=nb, max_distance=md, exact=True).item()
    assert got == _exact_by_mpmath(n, h, md)


@given(cfg=configs, n=st.integers(0, 20000))
def test_float32_within_one_of_exact_and_only_near_a_boundary(cfg, n):
    bidir, nb, md = cfg
    kw = dict(bidirectional=bidir, num_buckets=nb, max_distance=md)
    a, b = t5.bucket(-n, **kw).item(), t5.bucket(-n, exact=True, **kw).item()
    if a != b:
        h = nb // 2 if bidir else nb
        me = h // 2
        with mpmath.workdps(40):
            q = (h - me) * mpmath.log(mpmath.mpf(n) / me) / mpmath.log(mpmath.mpf(md) / me)
        assert abs(a - b) == 1 and abs(q - mpmath.nint(q)) < 1e-4 * (h - me)


@given(cfg=configs, exact=st.booleans())
def test_bucket_structure(cfg, exact):
    bidir, nb, md = cfg
    kw = dict(bidirectional=bidir, num_buckets=nb, max_distance=md, exact=exact)
    h = nb // 2 if bidir else nb
    me = h // 2
    n = np.arange(0, 2 * md + 2)
    before = t5.bucket(-n, **kw)  # keys before the query
    after = t5.bucket(n, **kw)
    assert before.dtype == np.int64
    assert np.all(np.diff(before) >= 0)  # monotone in distance
    assert np.array_equal(before[:me], n[:me])  # exact below max_exact
    assert before[me] == me and before[-1] == h - 1  # the log part starts at me; all beyond max_distance share h - 1
    assert np.all(before[n >= md] == h - 1)
    assert np.all((before >= 0) & (before < h))
    if bidir:
        assert np.array_equal(after[1:], before[1:] + h)  # keys after the query: upper half
    else:
        assert np.all(after == 0)


def test_odd_num_buckets_bidirectional_leaves_the_last_unused():
    b = t5.bucket(np.arange(-5000, 5001), num_buckets=33, max_distance=128)
    assert set(b.tolist()) == set(range(32)) - {16}


def test_large_relative_positions():
    big = np.array([-(2**62), 2**62, -(2**40), 2**31])
    assert t5.bucket(big).tolist() == [15, 31, 15, 31]
    assert t5.bucket(big, bidirectional=False).tolist() == [31, 0, 31, 0]


# --- backends ------------------------------------------------------------------------------


@pytest.mark.parametrize("exact", [False, True])
def test_bucket_backends(xp, exact):
    host = np.arange(-300, 303).reshape(3, 201)
    for dt in (xp.int64, xp.int32, xp.int16):
        rel = xp.asarray(host.tolist(), dtype=dt)
        out = t5.bucket(rel, exact=exact)
        assert type(out) is type(rel) and out.dtype == xp.int64 and tuple(out.shape) == (3, 201)
        assert np.array_equal(to_np(out), t5.bucket(host, exact=exact))
    assert t5.bucket(xp.asarray(-20)).shape == ()


# --- bias ----------------------------------------------------------------------------------


def test_bias_hand_values():
    table = np.stack([np.arange(32.0), 100 + np.arange(32.0)], axis=1)  # head 1 = bucket + 100
    b = t5.bias(table, 2, 3)
    assert b.shape == (2, 2, 3) and b.dtype == np.float64
    # queries at positions 1, 2 (default offset k_len - q_len); keys 0, 1, 2
    assert b[0].tolist() == [[1, 0, 17], [2, 1, 0]]
    assert b[1].tolist() == [[101, 100, 117], [102, 101, 100]]


def test_bias_is_the_table_row_of_each_bucket():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((32, 6)).astype(np.float32)
    b = t5.bias(table, 5, 9, bidirectional=False, offset=3)
    assert b.dtype == np.float32 and b.shape == (6, 5, 9)
    rel = np.arange(9)[None, :] - (np.arange(5)[:, None] + 3)
    expected = np.moveaxis(table[t5.bucket(rel, bidirectional=False)], -1, 0)
    assert np.array_equal(b, expected)


def test_bias_kv_cache_rows():
    table = np.arange(64.0 * 3).reshape(64, 3)
    full = t5.bias(table, 20, 20, bidirectional=False, max_distance=256)
    assert np.array_equal(t5.bias(table, 1, 20, bidirectional=False, max_distance=256), full[:, -1:, :])
    assert np.array_equal(t5.bias(table, 4, 20, bidirectional=False, max_distance=256), full[:, -4:, :])
    # Toeplitz: depends on key - query only
    assert np.array_equal(full[:, 1:, 1:], full[:, :-1, :-1])


def test_bias_backends(xp):
    host = np.arange(32.0 * 4).reshape(32, 4)
    table = xp.asarray(host.tolist(), dtype=xp.float32)
    out = t5.bias(table, 3, 7)
    assert type(out) is type(table) and out.dtype == xp.float32 and tuple(out.shape) == (4, 3, 7)
    assert np.array_equal(to_np(out), t5.bias(host, 3, 7).astype(np.float32))


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "exc"),
    [(1.0, TypeError), ([0.5, 1.0], TypeError), (np.array([1.0]), TypeError), (True, TypeError),
     ([True], TypeError), ("3", TypeError), (None, TypeError), ([2**70], TypeError),
     (np.array([-(2**63)]), ValueError), (np.array([2**63], dtype=np.uint64), ValueError)],
)
def test_bad_relative_position(value, exc):
    with pytest.raises(exc, match="relative_position"):
        t5.bucket(value)


def test_float_array_from_another_backend(xp):
    with pytest.raises(TypeError, match="relative_position must hold integers"):
        t5.bucket(xp.asarray([1.0, 2.0]))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num_buckets": 3}, ValueError, "num_buckets must be >= 4 for bidirectional=True"),
        ({"num_buckets": 1, "bidirectional": False}, ValueError, "num_buckets must be >= 2 for bidirectional=False"),
        ({"num_buckets": 32.0}, TypeError, "num_buckets must be an integer"),
        ({"max_distance": 8}, ValueError, "max_distance must be > max_exact = 8"),
        ({"max_distance": 16, "bidirectional": False}, ValueError, "max_distance must be > max_exact = 16"),
        ({"max_distance": 128.0}, TypeError, "max_distance"),
        ({"bidirectional": 1}, TypeError, "bidirectional"),
        ({"exact": "yes"}, TypeError, "exact"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        t5.bucket([0, 1], **kwargs)


@pytest.mark.parametrize(
    ("table", "kwargs", "exc", "match"),
    [
        (np.zeros(32), {}, ValueError, "table must be 2-D"),
        (np.zeros((32, 2), dtype=np.int64), {}, TypeError, "table must have a real floating dtype"),
        ("table", {}, TypeError, "table"),
        (np.zeros((32, 2)), {"num_buckets": 16}, ValueError, "num_buckets .16. must equal table.shape.0. .32."),
        (np.zeros((32, 2)), {"q_len": 0}, ValueError, "q_len"),
        (np.zeros((32, 2)), {"offset": 0.5}, TypeError, "offset"),
        (np.zeros((3, 2)), {}, ValueError, "num_buckets"),
    ],
)
def test_bad_bias_input(table, kwargs, exc, match):
    args = {"q_len": 2, "k_len": 3, **kwargs}
    q_len, k_len = args.pop("q_len"), args.pop("k_len")
    with pytest.raises(exc, match=match):
        t5.bias(table, q_len, k_len, **args)
