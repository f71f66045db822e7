"""pemath.pedagogy: the teaching encodings (integer, normalized, binary, learned table)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import pedagogy

from .conftest import to_np


# --- integer -------------------------------------------------------------------------------


def test_integer():
    out = pedagogy.integer([[0, 1], [2, 1000]], 3)
    assert out.shape == (2, 2, 3) and out.dtype == np.float64
    assert out.tolist() == [[[0, 0, 0], [1, 1, 1]], [[2, 2, 2], [1000, 1000, 1000]]]
    assert pedagogy.integer(7, 2, dtype=np.float32).dtype == np.float32
    assert pedagogy.integer(2**53, 1).tolist() == [2.0**53]  # exact up to 2**53
    out[0, 0, 0] = 5.0  # a fresh array, not a read-only broadcast view


def test_integer_is_unbounded():
    # the seeds' objection: the value grows with the position, without bound
    assert np.all(pedagogy.integer(10**6, 4) == 10**6)


# --- normalized ----------------------------------------------------------------------------


def test_normalized_values():
    out = pedagogy.normalized([0, 1, 2, 3], 2, length=4)
    assert out.tolist() == [[0, 0], [0.25, 0.25], [0.5, 0.5], [0.75, 0.75]]


@given(p=st.integers(0, 1000), extra=st.integers(1, 1000), other=st.integers(1, 1000), dim=st.integers(1, 8))
def test_normalized_depends_on_the_sequence_length(p, extra, other, dim):
    length = p + extra
    a = pedagogy.normalized(p, dim, length=length)
    assert np.all((a >= 0) & (a < 1))
    b = pedagogy.normalized(p, dim, length=length + other)
    if p == 0:
        assert np.array_equal(a, b)
    else:  # the same position, a different vector in a longer sequence
        assert np.all(b < a)


# --- binary --------------------------------------------------------------------------------


def test_binary_seed_example():
    # "You could have designed ...": 252 = 11111100, least significant bit first
    assert pedagogy.binary(252, 8).tolist() == [0, 0, 1, 1, 1, 1, 1, 1]
    assert pedagogy.binary([0, 1, 2, 3], 2).tolist() == [[0, 0], [1, 0], [0, 1], [1, 1]]
    assert pedagogy.binary(255, 8).tolist() == [1] * 8
    assert pedagogy.binary(5, 70).tolist() == [1, 0, 1] + [0] * 67  # more bits than int64 holds


@given(dim=st.integers(1, 60), data=st.data())
def test_binary_reconstructs_the_position(dim, data):
    p = data.draw(st.integers(0, 2**dim - 1))
    bits = pedagogy.binary(p, dim)
    assert set(bits.tolist()) <= {0.0, 1.0}
    assert sum(int(b) << j for j, b in enumerate(bits.tolist())) == p


def test_binary_bit_periods():
    # component j has period 2**(j+1): it flips every 2**j positions
    table = pedagogy.binary(np.arange(64), 6)
    for j in range(6):
        flips = np.flatnonzero(np.diff(table[:, j]) != 0) + 1
        assert np.array_equal(flips, np.arange(2**j, 64, 2**j))
    assert len({tuple(r) for r in table.tolist()}) == 64  # unique


# --- learned table -------------------------------------------------------------------------


def test_learned_table_lookup():
    w = np.arange(12.0).reshape(6, 2)
    pe = pedagogy.LearnedTable(w)
    assert pe.num_rows == 6 and pe.dim == 2 and pe.table is w
    assert pe([5, 0]).tolist() == [[10, 11], [0, 1]]
    assert pe.lookup([[1], [2]]).shape == (2, 1, 2)
    assert pe(3).tolist() == [6, 7]
    assert "rows=6" in repr(pe)


def test_learned_table_out_of_range_message():
    pe = pedagogy.LearnedTable(np.zeros((512, 4)))
    with pytest.raises(ValueError, match=r"^learned table has 512 rows, position 520 is outside \[0, 512\)$"):
        pe([0, 520, 3])
    with pytest.raises(ValueError, match=r"learned table has 512 rows, position -1 is outside \[0, 512\)"):
        pe(-1)
    with pytest.raises(ValueError, match="position 512 "):
        pe(np.array([511, 512]))


def test_learned_table_backends(xp):
    host = np.arange(20.0).reshape(10, 2)
    table = xp.asarray(host.tolist(), dtype=xp.float32)
    pe = pedagogy.LearnedTable(table)
    for positions in ([[9, 0], [3, 3]], xp.asarray([[9, 0], [3, 3]]), xp.asarray([[9, 0], [3, 3]], dtype=xp.int16)):
        out = pe(positions)
        assert type(out) is type(table) and out.dtype == xp.float32 and tuple(out.shape) == (2, 2, 2)
        assert np.array_equal(to_np(out), host[[[9, 0], [3, 3]]])
    with pytest.raises(ValueError, match="position 10 is outside"):
        pe(xp.asarray([10]))
    with pytest.raises(TypeError, match="positions must hold integers"):
        pe(xp.asarray([1.0]))


def test_learned_table_rejects_other_backends():
    import array_api_strict as xps

    pe = pedagogy.LearnedTable(np.zeros((4, 2)))
    with pytest.raises(TypeError, match="positions .*from the same array library"):
        pe(xps.asarray([1]))


@pytest.mark.parametrize(
    ("table", "exc", "match"),
    [
        (np.zeros(4), ValueError, "table must be 2-D"),
        (np.zeros((0, 4)), ValueError, "at least one row"),
        (np.zeros((3, 2), dtype=np.int32), TypeError, "real floating"),
        ("abc", TypeError, "table"),
        ([["a"]], TypeError, "table"),
        (None, TypeError, "table"),
    ],
)
def test_learned_table_bad_table(table, exc, match):
    with pytest.raises(exc, match=match):
        pedagogy.LearnedTable(table)


def test_learned_table_accepts_lists():
    pe = pedagogy.LearnedTable([[0, 1], [2, 3]])
    assert pe(1).dtype == np.float64 and pe(1).tolist() == [2, 3]


# --- backends and bad input ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["integer", "normalized", "binary"])
def test_backends(xp, name):
    fn = getattr(pedagogy, name)
    kw = {"length": 16} if name == "normalized" else {}
    host = [[0, 5], [9, 15]]
    for dt in (xp.int64, xp.int32, xp.uint8):
        out = fn(xp.asarray(host, dtype=dt), 4, **kw)
        assert out.dtype == xp.float64 and tuple(out.shape) == (2, 2, 4)
        assert np.array_equal(to_np(out), fn(host, 4, **kw))
    assert fn(xp.asarray(host), 4, dtype=xp.float32, **kw).dtype == xp.float32


@pytest.mark.parametrize("name", ["integer", "normalized", "binary"])
@pytest.mark.parametrize(
    ("positions", "exc", "match"),
    [
        ([1.5], TypeError, "positions must be integers"),
        ([1.0], TypeError, "positions"),
        (np.array([2.0]), TypeError, "positions must hold integers"),
        (True, TypeError, "positions"),
        ("3", TypeError, "positions"),
        (None, TypeError, "positions"),
        ([-1, 2], ValueError, "positions must be >= 0, got -1"),
    ],
)
def test_bad_positions(name, positions, exc, match):
    kw = {"length": 8} if name == "normalized" else {}
    with pytest.raises(exc, match=match):
        getattr(pedagogy, name)(positions, 3, **kw)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: pedagogy.integer([1], 0), ValueError, "dim must be >= 1"),
        (lambda: pedagogy.integer([1], 2.0), TypeError, "dim"),
        (lambda: pedagogy.integer([2**53 + 1], 2), ValueError, "2\\*\\*53"),
        (lambda: pedagogy.integer([1], 2, dtype=np.int64), TypeError, "dtype"),
        (lambda: pedagogy.normalized([1], 2, length=0), ValueError, "length must be >= 1"),
        (lambda: pedagogy.normalized([1], 2, length=1.0), TypeError, "length"),
        (lambda: pedagogy.normalized([4], 2, length=4), ValueError, "positions must be < length = 4.*got 4"),
        (lambda: pedagogy.normalized([1], 2), TypeError, "length"),
        (lambda: pedagogy.binary([256], 8), ValueError, r"must be < 2\*\*dim = 256 to fit in dim=8 bits, got 256"),
        (lambda: pedagogy.binary([1], 0), ValueError, "dim"),
    ],
)
def test_bad_parameters(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
