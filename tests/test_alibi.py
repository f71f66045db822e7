"""pemath.alibi: slopes against published and hand-built values, the three bias forms."""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import alibi

from .conftest import to_np


def _pow2(exponents) -> list[float]:
    with mpmath.workdps(50):
        return [float(mpmath.mpf(2) ** (mpmath.mpf(e.numerator) / e.denominator)) for e in exponents]


# --- slopes ---------------------------------------------------------------------------------


def test_published_slopes_for_8_heads():
    # Press et al., section 3: 1/2, 1/4, ..., 1/256 for 8 heads
    assert alibi.slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


def test_published_slopes_for_16_heads():
    # ... and the geometric sequence starting at 1/sqrt(2) for 16 heads
    got = alibi.slopes(16)
    assert got[1::2].tolist() == [2.0**-k for k in range(1, 9)]
    assert got[0] == math.sqrt(0.5)  # both correctly rounded


# Built by hand from the reference rule: the c = 2**floor(log2 n) slopes of c heads, then
# every other slope of 2c heads (2**(-8/(2c)), 2**(-3*8/(2c)), ...).
HAND = {
    1: [F(-8)],
    2: [F(-4), F(-8)],
    3: [F(-4), F(-8), F(-2)],
    6: [F(-2), F(-4), F(-6), F(-8), F(-1), F(-3)],
    12: [F(-1), F(-2), F(-3), F(-4), F(-5), F(-6), F(-7), F(-8), F(-1, 2), F(-3, 2), F(-5, 2), F(-7, 2)],
    20: [F(-k, 2) for k in range(1, 17)] + [F(-1, 4), F(-3, 4), F(-5, 4), F(-7, 4)],
    40: [F(-k, 4) for k in range(1, 33)] + [F(-k, 8) for k in (1, 3, 5, 7, 9, 11, 13, 15)],
}


@pytest.mark.parametrize("n", sorted(HAND))
def test_hand_built_slopes(n):
    expected = _pow2(HAND[n])
    got = alibi.slopes(n)
    assert got.dtype == np.float64 and got.shape == (n,)
    assert got.tolist() == expected  # correctly rounded: bit-equal


def _reference_get_slopes(n: int) -> list[float]:
    # The reference code's recursion, in its own float arithmetic (start * ratio**i).
    def power_of_2(m: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start**i for i in range(m)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_2(c) + _reference_get_slopes(2 * c)[0::2][: n - c]


def _mpt_slopes(n: int) -> np.ndarray:
    # HF MPT build_mpt_alibi_tensor (alibi_bias_max=8): 1/2**(8k/P) for the next power of two P,
    # then the odd-indexed slopes followed by the even-indexed ones, truncated.
    p = 2 ** math.ceil(math.log2(n))
    s = 1.0 / np.power(2.0, np.arange(1, p + 1) * (8 / p))
    if p != n:
        s = np.concatenate([s[1::2], s[::2]])[:n]
    return s


@pytest.mark.parametrize("n", list(range(1, 70)) + [96, 100, 128, 255])
def test_against_reference_and_mpt_recipes(n):
    got = alibi.slopes(n)
    # Those recipes round several times; the correctly rounded values are within a few ulps.
    np.testing.assert_allclose(got, _reference_get_slopes(n), rtol=8 * n * np.finfo(float).eps, atol=0)
    np.testing.assert_allclose(got, _mpt_slopes(n), rtol=8 * np.finfo(float).eps, atol=0)


@given(st.integers(1, 300))
def test_slopes_structure(n):
    got = alibi.slopes(n)
    c = 2 ** (n.bit_length() - 1)
    assert np.all((got >= 2.0**-8) & (got < 1.0))
    assert len(set(got.tolist())) == n  # distinct
    # the first c are the slopes of c heads; all are slopes of 2c heads (bit-equal)
    assert got[:c].tolist() == alibi.slopes(c).tolist()
    assert set(got.tolist()) <= set(alibi.slopes(2 * c).tolist())
    # for a power of two, a geometric sequence with ratio = first slope
    if c == n and n > 1:
        np.testing.assert_allclose(got[1:] / got[:-1], got[0], rtol=4 * np.finfo(float).eps)


def test_slopes_read_only():
    with pytest.raises(ValueError):
        alibi.slopes(4)[0] = 1.0


@pytest.mark.parametrize(
    ("value", "exc"), [(0, ValueError), (-8, ValueError), (8.0, TypeError), (True, TypeError), ("8", TypeError)]
)
def test_bad_num_heads(value, exc):
    with pytest.raises(exc, match="num_heads"):
        alibi.slopes(value)


# --- bias -----------------------------------------------------------------------------------


def test_hand_values():
    inf = math.inf
    causal = alibi.bias([0.5, 0.25], 3, 3, form="causal")
    assert causal.shape == (2, 3, 3) and causal.dtype == np.float64
    assert causal[0].tolist() == [[0, -inf, -inf], [-0.5, 0, -inf], [-1.0, -0.5, 0]]
    assert causal[1].tolist() == [[0, -inf, -inf], [-0.25, 0, -inf], [-0.5, -0.25, 0]]
    shifted = alibi.bias([0.5], 3, 3, form="shifted")
    assert shifted[0].tolist() == [[0, -inf, -inf], [0, 0.5, -inf], [0, 0.5, 1.0]]
    sym = alibi.bias([0.5], 3, 3, form="symmetric")
    assert sym[0].tolist() == [[0, -0.5, -1.0], [-0.5, 0, -0.5], [-1.0, -0.5, 0]]
    assert not np.signbit(sym[0].diagonal()).any()  # +0.0, not -0.0


def test_heads_as_count_uses_reference_slopes():
    b = alibi.bias(8, 2, 2, form="causal")
    assert b[:, 1, 0].tolist() == [-s for s in alibi.slopes(8).tolist()]


def test_kv_cache_offset():
    full = alibi.bias(6, 7, 7, form="causal")
    # the last query alone, with the default offset k_len - q_len
    for form in alibi.FORMS:
        np.testing.assert_array_equal(alibi.bias(6, 1, 7, form=form), alibi.bias(6, 7, 7, form=form)[:, -1:, :])
        np.testing.assert_array_equal(alibi.bias(6, 3, 7, form=form), alibi.bias(6, 7, 7, form=form)[:, -3:, :])
    # an explicit offset: query 0 at position 2
    np.testing.assert_array_equal(alibi.bias(6, 2, 7, form="causal", offset=2), full[:, 2:4, :])
    # queries beyond the keys see every key
    assert np.all(np.isfinite(alibi.bias(2, 2, 3, form="causal", offset=5)))


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return z / np.sum(z, axis=-1, keepdims=True)


@given(
    heads=st.integers(1, 12),
    q_len=st.integers(1, 12),
    extra=st.integers(0, 12),
    offset=st.one_of(st.none(), st.integers(0, 30)),
)
def test_causal_and_shifted_have_the_same_softmax(heads, q_len, extra, offset):
    k_len = q_len + extra
    causal = alibi.bias(heads, q_len, k_len, form="causal", offset=offset)
    shifted = alibi.bias(heads, q_len, k_len, form="shifted", offset=offset)
    assert np.array_equal(np.isinf(causal), np.isinf(shifted))
    # they differ by a constant m * q_i along each row (on the visible keys)
    vis = ~np.isinf(causal)
    diff = np.where(vis, shifted, 0.0) - np.where(vis, causal, 0.0)
    row = diff[..., :1]  # key 0 is visible from every row
    np.testing.assert_allclose(diff, np.where(vis, row, 0.0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_softmax(causal), _softmax(shifted), rtol=0, atol=1e-12)


@given(heads=st.integers(1, 10), n=st.integers(2, 16), form=st.sampled_from(alibi.FORMS))
def test_depends_only_on_query_minus_key(heads, n, form):
    b = alibi.bias(heads, n, n, form=form)
    if form == "shifted":  # shifted depends on the key alone: every visible row is the same row
        vis = ~np.isinf(b)
        assert np.array_equal(np.where(vis, b, 0), np.where(vis, b[:, -1:, :], 0))
    else:  # Toeplitz
        assert np.array_equal(b[:, 1:, 1:], b[:, :-1, :-1])
    if form == "symmetric":
        assert np.array_equal(b, np.swapaxes(b, 1, 2))
        causal = alibi.bias(heads, n, n, form="causal")
        lower = np.tril(np.ones((n, n), dtype=bool))
        assert np.array_equal(b[:, lower], causal[:, lower])
    else:
        assert np.all(np.isinf(b[:, ~np.tril(np.ones((n, n), dtype=bool))]))


def test_bias_decreases_with_distance():
    b = alibi.bias(4, 1, 50, form="causal")[:, 0, :]
    assert np.all(np.diff(b, axis=-1) > 0)  # nearer keys (larger j) get larger bias
    # the head with the steepest slope decays fastest
    assert np.all(b[0, :-1] < b[-1, :-1])


@pytest.mark.parametrize("form", alibi.FORMS)
def test_backends(xp, form):
    out = alibi.bias(6, 3, 5, form=form, xp=xp)
    assert tuple(out.shape) == (6, 3, 5) and out.dtype == xp.float64
    np.testing.assert_array_equal(to_np(out), alibi.bias(6, 3, 5, form=form))
    assert alibi.bias([0.5], 2, 2, form=form, xp=xp, dtype=xp.float32).dtype == xp.float32


def test_slopes_array_input(xp):
    m = xp.asarray([0.5, 0.125])
    np.testing.assert_array_equal(alibi.bias(m, 2, 2, form="causal"), alibi.bias([0.5, 0.125], 2, 2, form="causal"))


# --- bad input ------------------------------------------------------------------------------


def test_form_required():
    with pytest.raises(TypeError, match="form is required.*'causal'.*'shifted'.*'symmetric'"):
        alibi.bias(8, 4, 4)
    with pytest.raises(ValueError, match="form must be one of 'causal', 'shifted', 'symmetric'"):
        alibi.bias(8, 4, 4, form="linear")


@pytest.mark.parametrize(
    ("heads", "exc"),
    [(0, ValueError), (-2, ValueError), (True, TypeError), ("8", TypeError), (None, TypeError), ([], ValueError),
     ([0.5, float("nan")], ValueError), ([[0.5]], TypeError), (8.0, TypeError)],
)
def test_bad_heads(heads, exc):
    with pytest.raises(exc, match="heads"):
        alibi.bias(heads, 2, 2, form="causal")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"q_len": 0}, ValueError, "q_len must be >= 1"),
        ({"k_len": 0}, ValueError, "k_len must be >= 1"),
        ({"q_len": 2.0}, TypeError, "q_len"),
        ({"offset": -1}, ValueError, "offset must be >= 0"),
        ({"offset": 1.0}, TypeError, "offset"),
        ({"q_len": 5, "k_len": 3}, ValueError, "q_len .5. > k_len .3..*offset"),
        ({"dtype": np.int64}, TypeError, "dtype"),
        ({"xp": "numpy"}, TypeError, "xp must be an array namespace"),
        ({"device": "cuda"}, ValueError, "device"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    args = {"q_len": 3, "k_len": 4, "form": "causal", **kwargs}
    q_len, k_len = args.pop("q_len"), args.pop("k_len")
    with pytest.raises(exc, match=match):
        alibi.bias(4, q_len, k_len, **args)


def test_symmetric_accepts_any_offset():
    b = alibi.bias([1.0], 2, 2, form="symmetric", offset=-3)
    assert b[0].tolist() == [[-3.0, -4.0], [-2.0, -3.0]]
    assert alibi.bias([1.0], 5, 3, form="symmetric").shape == (1, 5, 3)
