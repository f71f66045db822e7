"""pemath.sinusoidal: the three layouts, their odd dimensions, identities and bad input."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from .conftest import to_np
from hypothesis import given
from hypothesis import strategies as st

from pemath import sinusoidal

EPS = np.finfo(np.float64).eps
CONVENTIONS = sinusoidal.CONVENTIONS


# --- hand-computed values -----------------------------------------------------------------

SIN1, COS1 = 0.8414709848078965, 0.5403023058681398  # sin(1), cos(1)
SIN01, COS01 = 0.09983341664682815, 0.9950041652780258  # sin(0.1), cos(0.1)


def test_hand_values_dim4_base100():
    # base 100, dim 4: frequencies 1 and 100**(-2/4) = 0.1
    np.testing.assert_allclose(
        sinusoidal.encode(1, 4, base=100.0, convention="interleaved"), [SIN1, COS1, SIN01, COS01], rtol=0, atol=1e-16
    )
    np.testing.assert_allclose(
        sinusoidal.encode(1, 4, base=100.0, convention="concat"), [SIN1, SIN01, COS1, COS01], rtol=0, atol=1e-16
    )
    # tensor2tensor, dim 4: frequencies exp(-i ln(100) / 1) = 1, 1/100
    np.testing.assert_allclose(
        sinusoidal.encode(1, 4, base=100.0, convention="tensor2tensor"),
        [SIN1, 0.009999833334166664, COS1, 0.9999500004166653],
        rtol=0,
        atol=1e-16,
    )


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_position_zero(convention):
    pe = sinusoidal.encode(0, 8, convention=convention)
    expected = [0, 1, 0, 1, 0, 1, 0, 1] if convention == "interleaved" else [0, 0, 0, 0, 1, 1, 1, 1]
    assert pe.tolist() == expected


def test_shapes_and_dtype():
    pe = sinusoidal.encode([[0, 1, 2], [3, 4, 5]], 6, convention="concat")
    assert pe.shape == (2, 3, 6) and pe.dtype == np.float64
    assert sinusoidal.encode(3, 5, convention="interleaved").shape == (5,)
    assert sinusoidal.encode([], 4, convention="concat").shape == (0, 4)
    assert sinusoidal.encode([1, 2], 4, convention="interleaved", dtype=np.float32).dtype == np.float32


def test_fractional_positions_are_not_truncated():
    a = sinusoidal.encode(0.5, 4, base=100.0, convention="interleaved")
    assert a[0] == pytest.approx(math.sin(0.5), abs=1e-16)
    assert not np.array_equal(a, sinusoidal.encode(0, 4, base=100.0, convention="interleaved"))


# --- frequencies ----------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [4, 6, 10, 64, 65, 512])
@pytest.mark.parametrize("base", [100.0, 10000.0, 500000.0])
def test_tensor2tensor_frequencies_correctly_rounded(dim, base):
    # exp(-i ln b / (h - 1)) at 50 digits: an independent route to base**(-i/(h-1))
    h = dim // 2
    freq = sinusoidal.frequencies(dim, base=base, convention="tensor2tensor")
    with mpmath.workdps(50):
        expected = [float(mpmath.exp(-i * mpmath.log(base) / (h - 1))) for i in range(h)]
    assert freq.tolist() == expected
    assert freq[0] == 1.0 and freq[-1] == 1.0 / base


@pytest.mark.parametrize("dim", [1, 2, 3, 8, 9, 128, 129])
def test_vaswani_frequencies_correctly_rounded(dim):
    freq = sinusoidal.frequencies(dim, base=10000.0, convention="interleaved")
    assert freq.shape == ((dim + 1) // 2,)
    with mpmath.workdps(50):
        expected = [float(mpmath.exp(-mpmath.mpf(2 * i) / dim * mpmath.log(10000))) for i in range((dim + 1) // 2)]
    assert freq.tolist() == expected
    assert np.array_equal(freq, sinusoidal.frequencies(dim, convention="concat"))


def test_wavelengths():
    for convention in CONVENTIONS:
        wl = sinusoidal.wavelengths(8, convention=convention)
        assert wl[0] == 2 * math.pi
        assert np.all(np.diff(wl) > 0)
    # the paper: wavelengths from 2 pi to 10000 * 2 pi (the last one for tensor2tensor)
    assert sinusoidal.wavelengths(8, convention="tensor2tensor")[-1] == pytest.approx(2 * math.pi * 1e4, rel=1e-15)
    assert sinusoidal.wavelengths(8, convention="interleaved")[-1] == pytest.approx(2 * math.pi * 1e4**0.75, rel=1e-15)


# --- the origins, odd dims included (their per-column formulas, from their sources) ---------


def _xlm_table(n_pos: int, dim: int) -> np.ndarray:
    # HF XLM create_sinusoidal_embeddings: column j has angle pos / 10000**(2*(j//2)/dim)
    angle = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(n_pos)])
    out = np.empty((n_pos, dim))
    out[:, 0::2] = np.sin(angle[:, 0::2])
    out[:, 1::2] = np.cos(angle[:, 1::2])
    return out


def _marian_table(n_pos: int, dim: int) -> np.ndarray:
    # HF Marian create_weight: the same angles, sines first, sentinel = ceil(dim / 2)
    angle = np.array([[p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for p in range(n_pos)])
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out = np.empty((n_pos, dim))
    out[:, :sentinel] = np.sin(angle[:, 0::2])
    out[:, sentinel:] = np.cos(angle[:, 1::2])
    return out


def _fairseq_table(n_pos: int, dim: int) -> np.ndarray:
    # fairseq / M2M100 get_embedding, in float64: exp(-i ln(10000)/(half-1)), [sin | cos], zero pad
    half = dim // 2
    freq = np.exp(np.arange(half) * -(math.log(10000) / (half - 1)))
    angle = np.arange(n_pos)[:, None] * freq[None, :]
    out = np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    if dim % 2:
        out = np.concatenate([out, np.zeros((n_pos, 1))], axis=1)
    return out


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5, 7, 8, 9, 16, 33])
def test_matches_xlm_and_marian(dim):
    pos = np.arange(60)
    inter = sinusoidal.encode(pos, dim, convention="interleaved")
    np.testing.assert_allclose(inter, _xlm_table(60, dim), rtol=0, atol=1e-13)
    cat = sinusoidal.encode(pos, dim, convention="concat")
    np.testing.assert_allclose(cat, _marian_table(60, dim), rtol=0, atol=1e-13)


@pytest.mark.parametrize("dim", [4, 5, 6, 7, 16, 33, 512])
def test_matches_fairseq(dim):
    pos = np.arange(60)
    got = sinusoidal.encode(pos, dim, convention="tensor2tensor")
    np.testing.assert_allclose(got, _fairseq_table(60, dim), rtol=0, atol=1e-13)
    if dim % 2:
        assert np.all(got[:, -1] == 0.0)


@pytest.mark.parametrize("dim", [1, 2, 5, 8, 13])
def test_concat_is_a_column_permutation_of_interleaved(dim):
    pos = np.array([0, 1, 7, 1000, 123456])
    inter = sinusoidal.encode(pos, dim, convention="interleaved")
    cat = sinusoidal.encode(pos, dim, convention="concat")
    n_sin = (dim + 1) // 2
    assert np.array_equal(inter[:, 0::2], cat[:, :n_sin])
    assert np.array_equal(inter[:, 1::2], cat[:, n_sin:])


# --- identities (hypothesis) ---------------------------------------------------------------

positions = st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False))
even_dims = st.integers(2, 48).map(lambda h: 2 * h)


def _pairs(pe: np.ndarray, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """The (sin, cos) columns of each frequency."""
    h = pe.shape[-1] // 2
    if convention == "interleaved":
        return pe[..., 0 : 2 * h : 2], pe[..., 1 : 2 * h : 2]
    return pe[..., :h], pe[..., h : 2 * h]


@given(t=positions, k=st.integers(-10**4, 10**4), dim=even_dims, convention=st.sampled_from(CONVENTIONS))
def test_shift_is_a_fixed_rotation_per_frequency(t, k, dim, convention):
    # (sin, cos)((t+k) w) = R(k w) (sin, cos)(t w), R depending on k and w only (Vaswani et al. 3.5)
    freq = sinusoidal.frequencies(dim, convention=convention)
    s0, c0 = _pairs(sinusoidal.encode(t, dim, convention=convention), convention)
    s1, c1 = _pairs(sinusoidal.encode(t + k, dim, convention=convention), convention)
    ck, sk = np.cos(k * freq), np.sin(k * freq)
    tol = 8 * (abs(t) + abs(k) + 1) * EPS
    np.testing.assert_allclose(s1, s0 * ck + c0 * sk, rtol=0, atol=tol)
    np.testing.assert_allclose(c1, c0 * ck - s0 * sk, rtol=0, atol=tol)


@given(t=positions, dim=st.integers(1, 97), convention=st.sampled_from(CONVENTIONS))
def test_squared_norm(t, dim, convention):
    if convention == "tensor2tensor" and dim < 4:
        return
    pe = sinusoidal.encode(t, dim, convention=convention)
    norm2 = float(np.sum(pe * pe))
    half = dim // 2
    if dim % 2 and convention != "tensor2tensor":
        # the extra sine column: sin^2 of the last frequency
        w = sinusoidal.frequencies(dim, convention=convention)[-1]
        norm2 -= math.sin(t * w) ** 2
    assert norm2 == pytest.approx(half, abs=4 * dim * EPS + 4 * (abs(t) + 1) * EPS)


@given(t1=positions, t2=positions, k=st.integers(-5000, 5000), dim=even_dims, convention=st.sampled_from(CONVENTIONS))
def test_dot_product_depends_only_on_offset(t1, t2, k, dim, convention):
    freq = sinusoidal.frequencies(dim, convention=convention)
    expected = float(np.sum(np.cos(k * freq)))  # sum_i cos(k w_i)
    tol = 16 * dim * (max(abs(t1), abs(t2)) + abs(k) + 1) * EPS
    for t in (t1, t2):
        a, b = (sinusoidal.encode(x, dim, convention=convention) for x in (t, t + k))
        dot = float(a @ b)
        assert dot == pytest.approx(expected, abs=tol)


# --- backends -------------------------------------------------------------------------------


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("dim", [6, 7])
def test_backends(xp, convention, dim):
    host = np.array([[0, 3, 17], [250, 1024, 99999]])
    ref = sinusoidal.encode(host, dim, convention=convention)
    for dt in (xp.int64, xp.int32, xp.float64, xp.float32):
        pos = xp.asarray(host.tolist(), dtype=dt)
        out = sinusoidal.encode(pos, dim, convention=convention)
        assert type(out) is type(pos) and out.dtype == xp.float64 and tuple(out.shape) == (2, 3, dim)
        np.testing.assert_allclose(to_np(out), ref, rtol=0, atol=1e-11)
    out32 = sinusoidal.encode(xp.asarray([1, 2]), dim, convention=convention, dtype=xp.float32)
    assert out32.dtype == xp.float32


# --- bad input ------------------------------------------------------------------------------


def test_convention_required():
    with pytest.raises(TypeError, match="convention is required.*'interleaved'.*'concat'.*'tensor2tensor'"):
        sinusoidal.encode([0, 1], 4)
    with pytest.raises(TypeError, match="convention"):
        sinusoidal.frequencies(4)
    with pytest.raises(ValueError, match="convention must be one of 'interleaved', 'concat', 'tensor2tensor'"):
        sinusoidal.encode([0, 1], 4, convention="half")
    with pytest.raises(TypeError, match="convention"):
        sinusoidal.encode([0, 1], 4, convention=1)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"dim": 0}, ValueError, "dim must be >= 1"),
        ({"dim": -4}, ValueError, "dim"),
        ({"dim": 4.0}, TypeError, "dim must be an integer"),
        ({"dim": True}, TypeError, "dim"),
        ({"dim": 3, "convention": "tensor2tensor"}, ValueError, "dim must be >= 4 for convention='tensor2tensor'"),
        ({"dim": 2, "convention": "tensor2tensor"}, ValueError, "dim"),
        ({"base": 0.0}, ValueError, "base must be > 0"),
        ({"base": -10.0}, ValueError, "base"),
        ({"base": float("nan")}, ValueError, "base"),
        ({"base": "10000"}, TypeError, "base"),
        ({"dtype": np.int32}, TypeError, "dtype must be a real floating dtype"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    args = {"dim": 4, "convention": "interleaved", **kwargs}
    dim = args.pop("dim")
    with pytest.raises(exc, match=match):
        sinusoidal.encode([0, 1], dim, **args)


@pytest.mark.parametrize(
    ("positions", "exc"),
    [
        ("12", TypeError),
        (None, TypeError),
        ([1 + 2j], TypeError),
        ([True, False], TypeError),
        ([0.0, float("nan")], ValueError),
        ([float("inf")], ValueError),
        ([2**60], ValueError),
    ],
)
def test_bad_positions(positions, exc):
    with pytest.raises(exc, match="positions"):
        sinusoidal.encode(positions, 4, convention="concat")
