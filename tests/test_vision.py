"""Vision encodings against timm (recorded) and against the MAE / MoCo v3 formulas written out here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from pemath import rope, sinusoidal
from pemath.testing import assert_rope_close, rope_tolerance

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"
MANIFEST = json.loads((PEERS / "timm_vision.json").read_text())
U32 = 2.0**-24


def _arrays(case):
    with np.load(PEERS / "timm_vision.npz") as z:
        return {k[len(case) + 1:]: z[k] for k in z.files if k.startswith(case + "/")}


def test_fixture_is_the_recorded_one():
    assert hashlib.sha256((PEERS / "timm_vision.npz").read_bytes()).hexdigest() == MANIFEST["sha256"]


@pytest.mark.parametrize("case", sorted(c for c, v in MANIFEST["cases"].items() if v["kind"] == "sincos2d"))
def test_2d_table_is_timms(case):
    p = MANIFEST["cases"][case]
    got = sinusoidal.encode_2d(p["feat_shape"], p["dim"],
                               convention="timm_interleaved" if p["interleave_sin_cos"] else "timm")
    theirs = _arrays(case)["table"].astype(np.float64)
    h, w = p["feat_shape"]
    angle = max(h, w)  # the largest angle: coordinate x frequency 1; float32 phase and sin/cos roundings
    np.testing.assert_allclose(got, theirs, rtol=0, atol=4 * U32 * angle + 2 * U32)
    other = sinusoidal.encode_2d(p["feat_shape"], p["dim"], convention="timm" if p["interleave_sin_cos"] else "mae")
    assert np.abs(other - theirs).max() > 0.1  # the other conventions are not timm's table


def _sincos_1d(pos, d):  # MAE's get_1d_sincos_pos_embed_from_grid, as its formula reads
    omega = 1.0 / 10000 ** (np.arange(d // 2) / (d / 2.0))
    out = np.outer(pos, omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


@pytest.mark.parametrize("shape", [(3, 5), (4, 4), (1, 7)])
def test_2d_tables_of_mae_and_mocov3_follow_their_grids(shape):
    h, w = shape
    d = 16
    gw, gh = np.meshgrid(np.arange(w), np.arange(h))  # MAE: meshgrid(grid_w, grid_h), xy indexing
    mae = np.concatenate([_sincos_1d(gw.reshape(-1), d // 2), _sincos_1d(gh.reshape(-1), d // 2)], axis=1)
    np.testing.assert_allclose(sinusoidal.encode_2d(shape, d, convention="mae"), mae, rtol=0, atol=1e-14)
    gw, gh = np.meshgrid(np.arange(w), np.arange(h), indexing="ij")  # MoCo v3: ij over (w, h)
    moco = np.concatenate([_sincos_1d(gw.reshape(-1), d // 2), _sincos_1d(gh.reshape(-1), d // 2)], axis=1)
    np.testing.assert_allclose(sinusoidal.encode_2d(shape, d, convention="mocov3"), moco, rtol=0, atol=1e-14)


def test_2d_table_arguments():
    with pytest.raises(TypeError, match="convention is required"):
        sinusoidal.encode_2d((2, 2), 8)
    with pytest.raises(ValueError, match="convention must be one of"):
        sinusoidal.encode_2d((2, 2), 8, convention="vit")
    with pytest.raises(ValueError, match="dim must be a multiple of 4"):
        sinusoidal.encode_2d((2, 2), 6, convention="mae")
    with pytest.raises(TypeError, match="grid_shape must be"):
        sinusoidal.encode_2d(4, 8, convention="mae")
    with pytest.raises(ValueError, match=r"grid_shape\[1\]"):
        sinusoidal.encode_2d((2, 0), 8, convention="mae")


@pytest.mark.parametrize("case", sorted(c for c, v in MANIFEST["cases"].items() if v["kind"] == "rope_pixels"))
def test_pixel_rope_is_timms(case):
    p = MANIFEST["cases"][case]
    a = _arrays(case)
    spec = rope.pixel_spec(p["dim"], max_res=p["max_res"], linear_bands=p["linear_bands"])
    # timm's float32 linspace is within an ulp of 1 of the exact coordinates (not of each value: its
    # middle "0" is 1e-8), so the rotation is compared at timm's own coordinates
    np.testing.assert_allclose(rope.pixel_positions(p["feat_shape"]), a["grid"], rtol=0, atol=2 * U32)
    pos = a["grid"].astype(np.float64)[:, None, :]  # (2, heads, tokens)
    y = rope.apply(a["x"].astype(np.float64), pos, spec=spec)
    plain = spec.replace(mrope_section=None)
    tol = np.max([rope_tolerance(a["x"], pos[c], spec=plain) for c in range(2)], axis=0)
    assert np.all(np.abs(y - a["out"]) <= tol), np.abs(y - a["out"]).max()
    if p["feat_shape"][0] == p["feat_shape"][1]:  # square maps: the two axes swapped is a real bug, caught
        swapped = rope.apply(a["x"].astype(np.float64), pos[::-1], spec=spec)
        assert np.any(np.abs(swapped - a["out"]) > tol)
    half = rope.apply(a["x"].astype(np.float64), pos, spec=spec.replace(layout="half"))
    assert np.any(np.abs(half - a["out"]) > tol)


def test_pixel_helpers_validate():
    with pytest.raises(ValueError, match="multiple of 4"):
        rope.pixel_spec(30)
    with pytest.raises(TypeError, match="feat_shape must be"):
        rope.pixel_positions(16)
    with pytest.raises(ValueError, match="max_res"):
        rope.pixel_bands(4, max_res=1.0)
