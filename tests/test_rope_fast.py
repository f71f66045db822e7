"""The NumPy fast path of rope.apply has the portable kernel's precision, and `out=` works.

float16 and float64 (the real kernel) are bit-identical to the portable kernel. float32 (the
complex kernel) evaluates the same float64 expression but NumPy's complex multiply may fuse a
multiply and an add, so `same` accepts a differing element only where the portable float64
value lies within 2**-50 (relative) of the float32 rounding boundary between the two results.
"""

from __future__ import annotations

import array_api_strict
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import rope
from pemath.rope import _fast_numpy
from pemath.scaling import NTK, YaRN, Linear

from tests._rope_kernels import bitwise, portable

LAYOUTS = ("interleaved", "half")


def _rand(seed, shape, dtype=np.float32):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


@pytest.fixture(autouse=True)
def numpy_kernel(monkeypatch):
    """These tests are about the NumPy fast path: the compiled kernel (tests/test_rope_numba.py) is off."""
    monkeypatch.setenv("PEMATH_KERNEL", "numpy")


@pytest.fixture(params=[48, 1 << 14], ids=["tiny-blocks", "default-blocks"])
def block(request, monkeypatch):
    """Run every comparison with tiny blocks too, so multi-block splitting is exercised on small shapes."""
    monkeypatch.setattr(_fast_numpy, "_BLOCK", request.param)
    return request.param


def same(a, b, wide=None):
    """``a`` (fast) equals ``b`` (portable) bitwise, except float32 elements at a float64 rounding tie.

    ``wide`` is the portable kernel's float64 value (before its one rounding); without it
    the comparison is bitwise.
    """
    if wide is None or a.dtype != np.float32:
        bitwise(a, b)
        return
    assert a.dtype == b.dtype and a.shape == b.shape
    a, b, wide = (np.ascontiguousarray(v) for v in (a, b, wide))
    differ = a.view(np.uint32) != b.view(np.uint32)
    if not differ.any():
        return
    lo, hi = np.minimum(a[differ], b[differ]), np.maximum(a[differ], b[differ])
    assert np.all(np.nextafter(lo, np.float32(np.inf)) == hi), "differs by more than one float32 ulp"
    mid = (lo.astype(np.float64) + hi.astype(np.float64)) / 2  # exact in float64
    assert np.all(np.abs(wide[differ] - mid) <= 2.0**-50 * np.abs(wide[differ])), "differs away from a rounding tie"


def agree(monkeypatch, x, pos, **kw):
    """The fast path's result equals the portable kernel's (see `same`)."""
    wide = portable(monkeypatch, np.asarray(x, dtype=np.float64), pos, **kw) if np.asarray(x).dtype == np.float32 else None
    same(rope.apply(x, pos, **kw), portable(monkeypatch, x, pos, **kw), wide)


def test_fast_path_is_taken_for_numpy_floats():
    for dt in (np.float16, np.float32, np.float64):
        assert _fast_numpy.supports(np.zeros((2, 4), dt))
    assert not _fast_numpy.supports(np.zeros((0, 4), np.float32))
    assert not _fast_numpy.supports(np.zeros((2, 4), np.longdouble))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(
    "x_shape, pos_shape",
    [
        ((2, 3, 7, 16), (7,)),
        ((2, 3, 7, 16), (2, 1, 7)),
        ((2, 7, 3, 16), (2, 7, 1)),
        ((2, 3, 7, 16), (2, 3, 7)),
        ((5, 8), (5,)),
        ((8,), ()),
        ((3, 1, 9, 32), (1, 9)),
    ],
)
def test_bit_identical_to_portable(monkeypatch, block, layout, dtype, x_shape, pos_shape):
    x = _rand(1, x_shape, dtype)
    pos = (np.arange(int(np.prod(pos_shape))).reshape(pos_shape) * 977 + 3).astype(np.int64)
    agree(monkeypatch, x, pos, layout=layout)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "kw",
    [
        {"rotary_dim": 8},
        {"rotary_dim": 2},
        {"inverse": True},
        {"scaling": YaRN(factor=4.0, original_max_position=64)},  # attention factor != 1
        {"scaling": Linear(factor=2.0), "inverse": True, "rotary_dim": 12},
        {"scaling": NTK(factor=3.0), "base": 500000.0},
    ],
)
def test_options_bit_identical(monkeypatch, block, layout, kw):
    x = _rand(2, (2, 4, 9, 20))
    pos = np.arange(9) * 1234 + 7
    agree(monkeypatch, x, pos, layout=layout, **kw)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_float_positions_and_lists(monkeypatch, block, layout):
    x = _rand(3, (3, 6, 16), np.float64)
    pos = np.linspace(0.0, 5000.5, 6)
    agree(monkeypatch, x, pos, layout=layout)
    agree(monkeypatch, x, pos.tolist(), layout=layout)
    agree(monkeypatch, x[0, 0], 2.25, layout=layout)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_non_contiguous_and_read_only_inputs(monkeypatch, block, layout):
    base = _rand(4, (3, 10, 5, 40))
    pos = np.arange(10) * 31
    views = [
        base[:, :, 1, :16],  # strided leading axes
        base.transpose(0, 2, 1, 3)[:, 0],  # transposed
        base[..., ::2],  # strided feature axis
        base[::-1, :, :, 8:24],  # negative strides
        np.asfortranarray(base[:, :, 0]),
    ]
    ro = base[:, :, 2].copy()
    ro.flags.writeable = False
    views.append(ro)
    for v in views:
        p = pos if v.ndim == 3 else pos[:, None]  # (seq,) or (seq, 1) for (b, seq, heads, d)
        agree(monkeypatch, v, p, layout=layout)


def test_special_values_pass_bit_identically(monkeypatch, block):
    x = np.array([[0.0, -0.0, 1e-45, -3.0e38, 2.5, -0.0, 0.0, 7.0]] * 3, dtype=np.float32)
    pos = np.array([0, 1, 70000])
    for layout in LAYOUTS:
        agree(monkeypatch, x, pos, layout=layout)


@settings(max_examples=40, deadline=None)
@given(
    lead=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    half_r=st.integers(1, 12),
    extra=st.integers(0, 3),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
    block=st.sampled_from([16, 100, 1 << 14]),
    seed=st.integers(0, 2**16),
)
def test_property_bit_identical(lead, half_r, extra, layout, dtype, block, seed):
    d = 2 * half_r + 2 * extra
    x = _rand(seed, tuple(lead) + (d,), dtype)
    shape = tuple(lead)
    pos = np.random.default_rng(seed + 1).integers(0, 100000, size=shape) if shape else 5
    ref = rope.apply(array_api_strict.asarray(x.astype(np.float64)), array_api_strict.asarray(pos),
                     layout=layout, rotary_dim=2 * half_r) if shape else None
    old = _fast_numpy._BLOCK
    _fast_numpy._BLOCK = block
    try:
        got = rope.apply(x, pos, layout=layout, rotary_dim=2 * half_r)
    finally:
        _fast_numpy._BLOCK = old
    # rounded once: the float64 portable result (array_api_strict, never the fast path) cast once
    if ref is not None:
        same(got, np.asarray(ref).astype(dtype), np.asarray(ref))


# ---------------------------------------------------------------- out=


@pytest.mark.parametrize("layout", LAYOUTS)
def test_out_receives_the_result(layout):
    x = _rand(5, (2, 3, 6, 16))
    pos = np.arange(6)
    out = np.full_like(x, np.nan)
    res = rope.apply(x, pos, layout=layout, out=out, rotary_dim=12)
    assert res is out
    bitwise(out, rope.apply(x, pos, layout=layout, rotary_dim=12))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_out_may_be_x_for_in_place_rotation(layout):
    x = _rand(6, (2, 3, 6, 16))
    expected = rope.apply(x, np.arange(6), layout=layout)
    res = rope.apply(x, np.arange(6), layout=layout, out=x)
    assert res is x
    bitwise(x, expected)


def test_out_partially_overlapping_x_is_still_correct():
    buf = _rand(7, (20, 8))
    expected = rope.apply(buf[2:12].copy(), np.arange(10), layout="half")
    rope.apply(buf[2:12], np.arange(10), layout="half", out=buf[0:10])
    bitwise(buf[0:10], expected)


def test_out_on_array_api_strict(block):
    x = array_api_strict.asarray(_rand(8, (4, 8)))
    out = array_api_strict.zeros((4, 8), dtype=array_api_strict.float32)
    res = rope.apply(x, array_api_strict.asarray([0, 1, 2, 3]), layout="interleaved", out=out)
    assert res is out
    wide = np.asarray(rope.apply(array_api_strict.astype(x, array_api_strict.float64), array_api_strict.asarray([0, 1, 2, 3]), layout="interleaved"))
    same(rope.apply(np.asarray(x), np.arange(4), layout="interleaved"), np.asarray(out), wide)


@pytest.mark.parametrize(
    "out, exc",
    [
        (np.zeros((3, 8), np.float32), ValueError),  # shape
        (np.zeros((4, 8), np.float64), TypeError),  # dtype
        ([[0.0] * 8] * 4, TypeError),  # not an array
        (array_api_strict.zeros((4, 8), dtype=array_api_strict.float32), TypeError),  # other library
    ],
)
def test_bad_out_is_refused_naming_out(out, exc):
    with pytest.raises(exc, match="out"):
        rope.apply(np.zeros((4, 8), np.float32), np.arange(4), layout="half", out=out)


def test_read_only_out_is_refused():
    out = np.zeros((4, 8), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out"):
        rope.apply(np.zeros((4, 8), np.float32), np.arange(4), layout="half", out=out)


# ---------------------------------------------------------------- threads


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(monkeypatch, layout, dtype):
    """Blocks are fixed by the shape and _BLOCK, so 1, 2 or 3 threads give the same bits."""
    monkeypatch.setattr(_fast_numpy, "_THREAD_MIN", 0)
    monkeypatch.setattr(_fast_numpy, "_BLOCK", 64)
    x = _rand(9, (3, 5, 11, 24), dtype)
    pos = np.arange(11) * 4099 + 1
    results = []
    for n in ("1", "2", "3"):
        monkeypatch.setenv("PEMATH_NUM_THREADS", n)
        assert _fast_numpy.num_threads() == int(n)
        results.append(rope.apply(x, pos, layout=layout, rotary_dim=20, scaling=YaRN(factor=4.0, original_max_position=64)))
    bitwise(results[0], results[1])
    bitwise(results[0], results[2])
    monkeypatch.setenv("PEMATH_NUM_THREADS", "1")
    monkeypatch.setattr(_fast_numpy, "_BLOCK", 1 << 14)
    agree(monkeypatch, x, pos, layout=layout, rotary_dim=20, scaling=YaRN(factor=4.0, original_max_position=64))


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_thread_count_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv("PEMATH_NUM_THREADS", bad)
    with pytest.raises(ValueError, match="PEMATH_NUM_THREADS"):
        rope.apply(np.zeros((2, 4), np.float32), np.arange(2), layout="half")


def test_default_thread_count_is_the_available_cpus(monkeypatch):
    monkeypatch.delenv("PEMATH_NUM_THREADS", raising=False)
    assert 1 <= _fast_numpy.num_threads() <= 8
