"""The xPos oracle: honest float32 kernels (torchscale's arithmetic) pass, wrong ones fail and are named.

``test_xpos_figures`` prints the figures (``pytest -s``).
"""

from __future__ import annotations

import numpy as np
import pytest

from pemath.rope import xpos
from pemath.testing import assert_xpos_close, xpos_tolerance

ml_dtypes = pytest.importorskip("ml_dtypes")
RNG = np.random.default_rng(20221220)
F = np.float32


def torchscale_kernel(x, pos, *, role, center=0.0, gamma=0.4, scale_base=512.0, dtype=np.float32, layout="interleaved",
                      base=10000.0):
    """torchscale's XPOS in float32: zeta = (arange(0, d, 2) + 0.4 d) / (1.4 d), zeta ** ((n - c) / B), 1 / scale for
    keys, cos and sin times the scale, products rounded to dtype."""
    d = x.shape[-1]
    zeta = (np.arange(0, d, 2, dtype=F) + F(gamma) * F(d)) / (F(1.0 + gamma) * F(d))
    e = (pos.astype(F) - F(center)) / F(scale_base)
    scale = np.power(zeta[None, :], e[:, None]).astype(F)
    if role == "key":
        scale = (F(1.0) / scale).astype(F)
    inv = (F(1.0) / np.power(F(base), np.arange(0, d, 2, dtype=F) / F(d))).astype(F)
    phase = pos.astype(F)[:, None] * inv[None, :]
    cos, sin = (np.cos(phase) * scale).astype(dtype), (np.sin(phase) * scale).astype(dtype)
    xt = x.astype(dtype)
    if layout == "interleaved":
        a, b = xt[:, 0::2], xt[:, 1::2]
    else:
        a, b = xt[:, : d // 2], xt[:, d // 2:]
    ya = (a.astype(F) * cos.astype(F) - b.astype(F) * sin.astype(F)).astype(dtype)
    yb = (b.astype(F) * cos.astype(F) + a.astype(F) * sin.astype(F)).astype(dtype)
    if layout == "interleaved":
        return np.stack([ya, yb], -1).reshape(x.shape)
    return np.concatenate([ya, yb], -1)


SEQ = 1024
POS = np.concatenate([np.arange(16), [100, 511, 512, 513, 1000, 1023]])
CENTER = xpos.center_of(SEQ, "torchscale")
KW = {"layout": "interleaved", "center": "torchscale", "seq_len": SEQ}


@pytest.mark.parametrize("role", xpos.ROLES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16], ids=["float32", "float16", "bf16"])
@pytest.mark.parametrize("d", [32, 64, 128])
def test_honest_float32_xpos_kernels_pass(role, dtype, d):
    x = RNG.standard_normal((POS.size, d)).astype(np.float32).astype(dtype)
    y = torchscale_kernel(x.astype(np.float32), POS, role=role, center=CENTER, dtype=dtype)
    assert_xpos_close(y, x, POS, role=role, **KW)


def test_honest_kernels_pass_far_from_the_centre_and_the_bound_is_tight_enough():
    """Exponents up to |n - c| / B = 8 (scales of zeta_0^8 = 4e-5 and its inverse): still accepted, and the
    bound stays below 1e-5 of the pair's magnitude."""
    pos = np.array([0, 1, 2047, 4095, 4096])
    x = RNG.standard_normal((pos.size, 64)).astype(np.float32)
    for role in xpos.ROLES:
        y = torchscale_kernel(x, pos, role=role)
        assert_xpos_close(y, x, pos, role=role, layout="interleaved")
        tol = xpos_tolerance(x, pos, role=role, layout="interleaved")
        truth = xpos.apply(x.astype(np.float64), pos, role=role, layout="interleaved")
        assert np.all(tol[:2] <= 1e-5 * (np.abs(truth[:2]) + 1.0))


WRONG = {
    "role swapped": (lambda x: torchscale_kernel(x, POS, role="key", center=CENTER), "the role swapped"),
    "scale missing": (lambda x: torchscale_kernel(x, POS, role="query", center=CENTER, gamma=1e9),
                      "plain RoPE: the xPos scale missing"),
    "centre 0": (lambda x: torchscale_kernel(x, POS, role="query", center=0.0), "the scale centred at 0"),
    "lucidrains' centre": (lambda x: torchscale_kernel(x, POS, role="query", center=SEQ // 2 - 1),
                           "centre c = 511 (fitted"),
    "half layout": (lambda x: torchscale_kernel(x, POS, role="query", center=CENTER, layout="half"),
                    "the other layout"),
    "positions + 1": (lambda x: torchscale_kernel(x, POS + 1, role="query", center=CENTER),
                      "positions shifted by +1"),
    "scale_base 256": (lambda x: torchscale_kernel(x, POS, role="query", center=CENTER, scale_base=256.0),
                       "scale_base B = 256 and centre c = 512 (fitted"),
    "gamma 0.5": (lambda x: torchscale_kernel(x, POS, role="query", center=CENTER, gamma=0.5),
                  "gamma = 0.5 instead of 0.4 (fitted"),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_xpos_kernels_fail_and_are_named(name):
    make, finding = WRONG[name]
    x = RNG.standard_normal((POS.size, 64)).astype(np.float32)
    with pytest.raises(AssertionError) as info:
        assert_xpos_close(make(x), x, POS, role="query", **KW)
    diagnosis = next(ln for ln in str(info.value).splitlines() if ln.startswith("Diagnosis:"))
    assert finding in diagnosis and "max error within tolerance" in diagnosis, str(info.value)


def test_the_measured_exponents_are_reported():
    x = RNG.standard_normal((POS.size, 64)).astype(np.float32)
    with pytest.raises(AssertionError) as info:
        assert_xpos_close(torchscale_kernel(x, POS, role="query", center=0.0), x, POS, role="query", **KW)
    msg = str(info.value)
    assert "Measured from the output: the scale's exponent e per row" in msg
    assert "position 0: 0 (expected -1)" in msg  # e = (0 - 0)/512 measured, (0 - 512)/512 expected


def test_arguments_are_validated():
    x = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(TypeError, match="role is required"):
        assert_xpos_close(x, x, [0, 1], layout="interleaved")
    with pytest.raises(ValueError, match="actual has shape"):
        assert_xpos_close(x[:1], x, [0, 1], layout="interleaved", role="query")
    with pytest.raises(TypeError, match="pass seq_len"):
        assert_xpos_close(x, x, [0, 1], layout="interleaved", role="query", center="torchscale")


def test_xpos_figures():
    """Print the honest and wrong kernels' verdicts (pytest -s)."""
    honest = total = 0
    for role in xpos.ROLES:
        for dtype in (np.float32, np.float16, ml_dtypes.bfloat16):
            for d in (32, 64, 128):
                total += 1
                x = RNG.standard_normal((POS.size, d)).astype(np.float32).astype(dtype)
                try:
                    assert_xpos_close(torchscale_kernel(x.astype(np.float32), POS, role=role, center=CENTER,
                                                        dtype=dtype), x, POS, role=role, **KW)
                    honest += 1
                except AssertionError:
                    pass
    named = 0
    for make, finding in WRONG.values():
        x = RNG.standard_normal((POS.size, 64)).astype(np.float32)
        try:
            assert_xpos_close(make(x), x, POS, role="query", **KW)
        except AssertionError as exc:
            named += finding in str(exc)
    print(f"\nxPos: {honest} of {total} honest float32 kernels accepted (torchscale's arithmetic, float32/float16/"
          f"bfloat16 outputs, both roles); {named} of {len(WRONG)} wrong kernels rejected and named")
    assert honest == total and named == len(WRONG)
