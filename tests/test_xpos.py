"""xPos: relative scores, the decay per pair, the centring conventions, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pemath import rope
from pemath.rope import xpos

from .conftest import to_np

LAYOUTS = ["interleaved", "half"]
layouts = st.sampled_from(LAYOUTS)
dims = st.sampled_from([2, 4, 8, 16, 64])
seeds = st.integers(0, 2**32 - 1)
U64 = 2.0**-52
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)


def _rand(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _zeta(d, gamma):
    # torchscale's spelling: (arange(0, d, 2) + gamma * d) / ((1 + gamma) * d)
    return (np.arange(0, d, 2) + gamma * d) / ((1 + gamma) * d)


def _pair_norms(v, layout):
    h = v.shape[-1] // 2
    a, b = (v[..., :h], v[..., h:]) if layout == "half" else (v[..., 0::2], v[..., 1::2])
    return np.hypot(a, b)


@fixture_ok
@given(dim=dims, n=st.integers(-2000, 2000), m=st.integers(-2000, 2000), c=st.integers(-2000, 2000),
       layout=layouts, seed=seeds)
def test_score_depends_on_distance_only(xp, dim, n, m, c, layout, seed):
    q, k = _rand(seed, (2, dim))
    qa, ka = xp.asarray(q), xp.asarray(k)

    def score(i, j):
        qq = to_np(xpos.apply(qa, i, layout=layout, role="query"))
        kk = to_np(xpos.apply(ka, j, layout=layout, role="key"))
        return float(qq @ kk)

    # every term of the score carries zeta_i ** ((n - m)/B); bound the rounding by the largest
    worst = float(np.max(_zeta(dim, 0.4) ** ((n - m) / 512.0)))
    scale = float(np.sum(_pair_norms(q, layout) * _pair_norms(k, layout))) * worst
    tol = 64 * (abs(n) + abs(m) + abs(c) + 2) * U64 * scale
    assert abs(score(n, m) - score(n + c, m + c)) <= tol


@given(dim=dims, n=st.integers(-3000, 3000), layout=layouts, seed=seeds,
       gamma=st.floats(0.05, 5.0), role=st.sampled_from(["query", "key"]))
def test_each_pair_norm_scales_by_zeta_power(dim, n, layout, seed, gamma, role):
    x = _rand(seed, (dim,))
    y = xpos.apply(x, n, layout=layout, role=role, gamma=gamma)
    sign = 1 if role == "query" else -1
    expected = _pair_norms(x, layout) * _zeta(dim, gamma) ** (sign * n / 512.0)
    np.testing.assert_allclose(_pair_norms(y, layout), expected, rtol=1e-12)


@pytest.mark.parametrize("gamma", [0.4, 1.0, 0.1])
@pytest.mark.parametrize("n", [512, -300, 7])
def test_hand_computed_two_dims(gamma, n):
    # d = 2: one pair, theta_0 = 1, zeta_0 = gamma / (1 + gamma)
    z = gamma / (1 + gamma)
    for layout in LAYOUTS:
        y = xpos.apply(np.array([1.0, 0.0]), n, layout=layout, role="query", gamma=gamma)
        s = z ** (n / 512.0)
        np.testing.assert_allclose(y, [s * math.cos(n), s * math.sin(n)], rtol=1e-13, atol=1e-300)
        yk = xpos.apply(np.array([0.0, 1.0]), n, layout=layout, role="key", gamma=gamma, scale_base=64.0)
        s = z ** (-n / 64.0)
        np.testing.assert_allclose(yk, [-s * math.sin(n), s * math.cos(n)], rtol=1e-13)


def test_second_pair_of_four_dims_by_hand():
    # pair 1 of d = 4: theta_1 = base**(-1/2) = 0.01 for base 1e4, zeta_1 = (1/2 + 0.4) / 1.4
    n = 1000
    z1 = 0.9 / 1.4
    s = z1 ** (n / 512.0)
    for layout, idx in (("interleaved", (2, 3)), ("half", (1, 3))):
        x = np.zeros(4)
        x[idx[0]] = 1.0
        y = xpos.apply(x, n, layout=layout, role="query")
        assert y[idx[0]] == pytest.approx(s * math.cos(10.0), rel=1e-13)
        assert y[idx[1]] == pytest.approx(s * math.sin(10.0), rel=1e-13)


def test_matches_torchscale_values():
    # torchscale 0.3.0 XPOS(head_dim=4, scale_base=2), float64, on x of shape (1, 3, 4),
    # offset 0: query (downscale=False) and key (downscale=True). Its centre is ceil(3/2) = 2.
    x = np.arange(12.0).reshape(1, 3, 4) / 4 - 0.5
    query = [[-1.75, -0.875, 0.0, 0.388888888889],
             [-0.675279518813, 1.545233824207, 1.231566789212, 1.57141794403],
             [-2.215490751766, 0.635689176281, 1.954603013273, 2.289547348386]]
    key = [[-0.142857142857, -0.071428571429, 0.0, 0.160714285714],
           [-0.192937005375, 0.441495378345, 0.791721507351, 1.010197249734],
           [-2.215490751766, 0.635689176281, 1.954603013273, 2.289547348386]]
    pos = np.arange(3)
    kw = dict(layout="interleaved", scale_base=2.0, center="torchscale", seq_len=3)
    np.testing.assert_allclose(xpos.apply(x, pos, role="query", **kw)[0], query, atol=1e-11)
    np.testing.assert_allclose(xpos.apply(x, pos, role="key", **kw)[0], key, atol=1e-11)
    # the same with the explicit centre, and a different centre gives different vectors
    np.testing.assert_array_equal(
        xpos.apply(x, pos, role="query", layout="interleaved", scale_base=2.0, center=2.0),
        xpos.apply(x, pos, role="query", **kw),
    )
    assert not np.allclose(xpos.apply(x, pos, role="query", layout="interleaved", scale_base=2.0)[0], query)


def test_center_conventions():
    assert [xpos.center_of(L, "torchscale") for L in (1, 2, 5, 8)] == [1, 1, 3, 4]
    assert [xpos.center_of(L, "rotary-embedding-torch") for L in (1, 2, 5, 8)] == [0, 1, 2, 4]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("role", ["query", "key"])
def test_exactly_rope_where_exponent_is_zero(xp, layout, role):
    # zeta ** 0 == 1 exactly: at the centre xPos is RoPE, bit for bit
    x = xp.asarray(_rand(1, (3, 16)))
    for c in (0, 37, -5):
        got = xpos.apply(x, c, layout=layout, role=role, center=float(c))
        np.testing.assert_array_equal(to_np(got), to_np(rope.apply(x, c, layout=layout)))


@given(n=st.integers(-5000, 5000), layout=layouts, seed=seeds)
def test_large_gamma_tends_to_rope(n, layout, seed):
    # |ln zeta_i| <= ln(1 + 1/gamma) <= 1/gamma, so each element moves by at most
    # (exp(|n|/(B gamma)) - 1) * |pair|
    gamma = 1e7
    x = _rand(seed, (2, 16))
    diff = np.abs(xpos.apply(x, n, layout=layout, role="query", gamma=gamma) - rope.apply(x, n, layout=layout))
    bound = math.expm1(abs(n) / (512.0 * gamma)) * np.max(np.abs(x)) * 2 + 1e-13 * (abs(n) + 2)
    assert np.max(diff) <= bound


@given(dim=dims, n=st.integers(-3000, 3000), c=st.integers(-3000, 3000), layout=layouts, seed=seeds,
       role=st.sampled_from(["query", "key"]))
def test_inverse_undoes(dim, n, c, layout, seed, role):
    x = _rand(seed, (2, dim))
    y = xpos.apply(x, n, layout=layout, role=role, center=float(c))
    back = xpos.apply(y, n, layout=layout, role=role, center=float(c), inverse=True)
    np.testing.assert_allclose(back, x, rtol=1e-9, atol=1e-9 * np.max(np.abs(x)))


def test_centre_cancels_in_score():
    q, k = _rand(3, (2, 32))
    s = [
        float(xpos.apply(q, 900, layout="half", role="query", center=c)
              @ xpos.apply(k, 100, layout="half", role="key", center=c))
        for c in (0.0, 500.0, -250.5)
    ]
    np.testing.assert_allclose(s, s[0], rtol=1e-12)


def test_rotary_dim_passthrough_and_dtype(xp):
    x = xp.asarray(_rand(4, (5, 12)), dtype=xp.float32)
    y = xpos.apply(x, xp.arange(5), layout="half", role="key", rotary_dim=8)
    assert y.dtype == xp.float32
    np.testing.assert_array_equal(to_np(y)[:, 8:], to_np(x)[:, 8:])
    y64 = xpos.apply(to_np(x).astype(np.float64), np.arange(5), layout="half", role="key", rotary_dim=8)
    np.testing.assert_allclose(to_np(y), y64, rtol=2e-7, atol=1e-6)


def test_decays_with_distance():
    q = np.zeros(8)
    q[0] = 1.0
    scores = [float(xpos.apply(q, d, layout="interleaved", role="query", base=1e30)
                    @ xpos.apply(q, 0, layout="interleaved", role="key", base=1e30)) for d in (0, 512, 1024)]
    # pair 0 has theta_0 = 1: score = zeta_0 ** (d/512) cos(d)
    z0 = 0.4 / 1.4
    np.testing.assert_allclose(scores, [1.0, z0 * math.cos(512), z0**2 * math.cos(1024)], rtol=1e-12)


# ----------------------------------------------------------------------------- errors

X = np.ones((3, 8))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(layout="half"), TypeError, "role is required"),
        (dict(layout="half", role="value"), ValueError, "role"),
        (dict(role="query"), TypeError, "layout"),
        (dict(layout="half", role="query", gamma=0.0), ValueError, "gamma"),
        (dict(layout="half", role="query", gamma=-1.0), ValueError, "gamma"),
        (dict(layout="half", role="query", scale_base=0), ValueError, "scale_base"),
        (dict(layout="half", role="query", scale_base=math.inf), ValueError, "scale_base"),
        (dict(layout="half", role="query", center="middle", seq_len=4), ValueError, "center"),
        (dict(layout="half", role="query", center="torchscale"), TypeError, "seq_len"),
        (dict(layout="half", role="query", center=1.0, seq_len=4), ValueError, "seq_len"),
        (dict(layout="half", role="query", center=[1.0]), TypeError, "center"),
        (dict(layout="half", role="query", center=math.nan), ValueError, "center"),
        (dict(layout="half", role="query", center="torchscale", seq_len=0), ValueError, "seq_len"),
        (dict(layout="half", role="query", rotary_dim=3), ValueError, "rotary_dim"),
        (dict(layout="half", role="query", inverse=1), TypeError, "inverse"),
        (dict(layout="half", role="query", base=-2.0), ValueError, "base"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        xpos.apply(X, [0, 1, 2], **kwargs)


def test_bad_positions_and_x():
    with pytest.raises(ValueError, match="positions"):
        xpos.apply(X, [0, 1], layout="half", role="query")
    with pytest.raises(ValueError, match="positions"):
        xpos.apply(X, [0.0, math.nan, 1.0], layout="half", role="query")
    with pytest.raises(TypeError, match="x must"):
        xpos.apply([[1.0, 2.0]], 0, layout="half", role="query")


def test_overflow_is_refused_not_inf():
    with pytest.raises(ValueError, match="center"):  # zeta_0 ** (-1e6/512) overflows float64
        xpos.apply(X, [0, 1, 1_000_000], layout="half", role="key")
    with pytest.raises(ValueError, match="overflows float16"):  # fine in float64, not in float16
        xpos.apply(X.astype(np.float16), [0, 1, 10_000], layout="half", role="key")
    # centring near the positions makes it fine
    out = xpos.apply(X, [999_998, 999_999, 1_000_000], layout="half", role="key", center=999_999.0)
    assert np.all(np.isfinite(out))


def test_zeta_values_and_errors():
    np.testing.assert_allclose(xpos.zeta(8), _zeta(8, 0.4), rtol=1e-15)
    assert xpos.zeta(2, gamma=1.0)[0] == 0.5
    with pytest.raises(ValueError, match="dim"):
        xpos.zeta(5)
    with pytest.raises(ValueError, match="gamma"):
        xpos.zeta(4, gamma=0)
