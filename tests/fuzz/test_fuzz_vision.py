"""Fuzzing the vision helpers: pixel-frequency RoPE and the 2-D sin-cos tables."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope, sinusoidal

from ._fuzz import H, Spec, _junk, bools, choices, covers, fuzz_settings, ints, reals, reject, run_spec, valid


def _shape_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    out = [valid((2, 3)), valid([4, 4]), valid((1, 1)), reject(4), reject((2, 3, 4)), reject((0, 3)),
           reject((2, -1)), reject((2.0, 3)), reject("23"), reject(None), reject((True, 2)), reject((2**20, 2**20))]
    return st.one_of(st.sampled_from(out), _junk(False))


def _check_table(t: Any, kw: dict[str, Any]) -> None:
    h, w = kw["grid_shape"]
    assert t.shape == (h * w, int(kw["dim"])) and t.dtype == np.float64 and np.all(np.abs(t) <= 1.0)


ENCODE_2D = Spec(
    sinusoidal.encode_2d,
    st.fixed_dictionaries({"grid_shape": st.just((3, 4)), "dim": st.sampled_from([8, 16]),
                           "convention": st.sampled_from(sinusoidal.CONVENTIONS_2D), "base": st.just(10000.0)}),
    {"grid_shape": _shape_kind, "dim": lambda b: st.sampled_from(
        [valid(8), valid(64), reject(6), reject(2), reject(0), reject(8.0), reject("8"), reject(None), reject(2**40)]),
     "convention": choices(sinusoidal.CONVENTIONS_2D), "base": reals(positive=True, typical=(10000.0, 100.0))},
    _check_table,
    aliases={"grid_shape": ("grid_shape",), "base": ("frequencies", "dim")},
)


@covers("pemath.sinusoidal.encode_2d")
@fuzz_settings()
@given(st.data())
def test_encode_2d(data):
    run_spec(ENCODE_2D, data)


PIXEL_BANDS = Spec(
    rope.pixel_bands,
    st.just({"num_bands": 8, "max_res": 224.0, "linear": False}),
    {"num_bands": ints(minimum=1, maximum=2**20, typical=(8,)), "max_res": reals(minimum=2.0, typical=(224.0,)),
     "linear": bools()},
    lambda f, kw: f.shape == (int(kw["num_bands"]),) and np.all(np.isfinite(f)) and np.all(f > 0),
)


@covers("pemath.rope.pixel_bands")
@fuzz_settings()
@given(st.data())
def test_pixel_bands(data):
    run_spec(PIXEL_BANDS, data)


PIXEL_POSITIONS = Spec(
    rope.pixel_positions,
    st.just({"feat_shape": (3, 4)}),
    {"feat_shape": _shape_kind},
    lambda p, kw: p.shape == (2, int(np.prod(kw["feat_shape"]))) and np.all(np.abs(p) <= 1.0),
)


@covers("pemath.rope.pixel_positions")
@fuzz_settings()
@given(st.data())
def test_pixel_positions(data):
    run_spec(PIXEL_POSITIONS, data)


def _check_spec(s: Any, kw: dict[str, Any]) -> None:
    assert isinstance(s, rope.Spec) and s.head_dim == int(kw["dim"]) and s.mrope_section == (s.head_dim // 4,) * 2
    x = np.ones((4, s.head_dim))
    y = rope.apply(x, rope.pixel_positions((2, 2)), spec=s)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


PIXEL_SPEC = Spec(
    rope.pixel_spec,
    st.just({"dim": 16, "max_res": 224.0, "linear_bands": False}),
    {"dim": lambda b: st.sampled_from([valid(16), valid(64), reject(30), reject(2), reject(16.0), reject(None),
                                       reject("16"), reject(2**40)]),
     "max_res": reals(minimum=2.0, typical=(224.0,)), "linear_bands": bools()},
    _check_spec,
)


@covers("pemath.rope.pixel_spec")
@fuzz_settings()
@given(st.data())
def test_pixel_spec(data):
    run_spec(PIXEL_SPEC, data)
