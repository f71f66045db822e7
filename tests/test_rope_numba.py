"""The compiled kernel of rope.apply (numba, ``pemath[fast]``) is bit-identical to the portable kernel.

Every comparison is bitwise (signed zeros and NaN payloads included), for float32 and float64,
both layouts, partial rotary, per-row and broadcast positions, scaling factors, the inverse
rotation, ``out=`` and in place, and any thread count.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import rope
from pemath.rope import _fast_numba, _fast_numpy
from pemath.scaling import YaRN

from tests._rope_kernels import bitwise, portable

pytest.importorskip("numba", reason="numba is optional (pip install 'pemath[fast]'); the NumPy fast path is used "
                                    "without it")

LAYOUTS = ("interleaved", "half")
DTYPES = (np.float32, np.float64)


@pytest.fixture(autouse=True)
def compiled_kernel(monkeypatch):
    monkeypatch.delenv("PEMATH_KERNEL", raising=False)


def _rand(seed, shape, dtype):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


def test_the_compiled_kernel_is_taken_for_contiguous_float32_and_float64():
    assert _fast_numba.available()
    for dt in DTYPES:
        assert _fast_numba.supports(np.zeros((2, 4), dt), None)
    assert not _fast_numba.supports(np.zeros((2, 4), np.float16), None)  # float16: the NumPy fast path
    assert not _fast_numba.supports(np.zeros((4, 2), np.float32).T, None)  # strided: the NumPy fast path
    assert not _fast_numba.supports(np.zeros((2, 4), np.float32), np.zeros((4, 2), np.float32).T)
    taken = []
    orig = _fast_numba.rotate_into

    def spy(*a):
        taken.append(True)
        return orig(*a)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(_fast_numba, "rotate_into", spy)
        rope.apply(np.ones((3, 8), np.float32), np.arange(3), layout="half")
    assert taken


def test_pemath_kernel_selects_the_path(monkeypatch):
    monkeypatch.setenv("PEMATH_KERNEL", "numpy")
    assert not _fast_numba.available()
    monkeypatch.setenv("PEMATH_KERNEL", "numba")
    assert _fast_numba.available()
    monkeypatch.setenv("PEMATH_KERNEL", "fortran")
    with pytest.raises(ValueError, match="PEMATH_KERNEL must be 'numba' or 'numpy'.*'fortran'"):
        _fast_numba.available()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["plain", "partial", "per-row", "scaled", "inverse", "far"])
def test_bitwise_equal_to_the_portable_kernel(monkeypatch, layout, dtype, case):
    shape = (2, 3, 37, 64)
    x = _rand(1, shape, dtype)
    pos = np.arange(37)
    kw = dict(layout=layout)
    if case == "partial":
        kw["rotary_dim"] = 24
    if case == "per-row":
        pos = np.random.default_rng(2).integers(0, 10**5, size=(2, 1, 37))
    if case == "scaled":
        kw["scaling"] = YaRN(8.0, 4096)
    if case == "inverse":
        kw["inverse"] = True
    if case == "far":
        pos = np.arange(37) * 104729 + 10**9
    bitwise(rope.apply(x, pos, **kw), portable(monkeypatch, x, pos, **kw))


@pytest.mark.parametrize("dtype", DTYPES)
def test_out_in_place_and_overlap(monkeypatch, dtype):
    x = _rand(3, (4, 50, 32), dtype)
    pos = np.arange(50)
    want = portable(monkeypatch, x, pos, layout="half", rotary_dim=16)
    buf = np.full_like(x, np.nan)
    got = rope.apply(x, pos, layout="half", rotary_dim=16, out=buf)
    assert got is buf
    bitwise(buf, want)  # the pass-through features copied too
    y = x.copy()
    rope.apply(y, pos, layout="half", rotary_dim=16, out=y)
    bitwise(y, want)  # in place: the pass-through features left as they are
    z = np.concatenate([x.reshape(-1), np.zeros(32, dtype)])
    src = z[32:].reshape(x.shape)  # out overlaps x one row later
    src[...] = x
    rope.apply(src, pos, layout="half", rotary_dim=16, out=z[:-32].reshape(x.shape))
    bitwise(z[:-32].reshape(x.shape), want)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_any_thread_count_gives_the_same_bits(monkeypatch, threads):
    monkeypatch.setenv("PEMATH_NUM_THREADS", threads)
    monkeypatch.setattr(_fast_numpy, "_THREAD_MIN", 1)
    monkeypatch.setattr(_fast_numba, "_ROWS_BLOCK", 256)
    x = _rand(4, (3, 5, 70, 32), np.float32)
    pos = np.random.default_rng(5).integers(0, 2**20, size=(3, 5, 70))
    bitwise(rope.apply(x, pos, layout="interleaved"), portable(monkeypatch, x, pos, layout="interleaved"))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # the portable kernel's cast
def test_ieee_specials_pass_through_as_in_the_portable_kernel(monkeypatch):
    x = np.array([[np.inf, 1.0, -0.0, np.nan], [3e38, 3e38, 0.0, -0.0]], dtype=np.float32)
    pos = np.array([0.0, 7.0])
    for layout in LAYOUTS:
        bitwise(rope.apply(x, pos, layout=layout), portable(monkeypatch, x, pos, layout=layout))


@settings(max_examples=60, deadline=None)
@given(
    lead=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    half=st.integers(1, 24),
    extra=st.integers(0, 5),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from(DTYPES),
    broadcast=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_bitwise_for_any_shape(lead, half, extra, layout, dtype, broadcast, seed):
    d = 2 * half + 2 * extra
    x = _rand(seed, tuple(lead) + (d,), dtype)
    rng = np.random.default_rng(seed)
    pshape = tuple(1 if (broadcast and k % 2 == 0) else n for k, n in enumerate(lead))
    pos = rng.integers(-10**6, 10**6, size=pshape) if lead else int(rng.integers(0, 10**6))
    with pytest.MonkeyPatch.context() as m:
        got = rope.apply(x, pos, layout=layout, rotary_dim=2 * half)
        want = portable(m, x, pos, layout=layout, rotary_dim=2 * half)
    bitwise(got, want)


def test_the_table_cache_gives_the_same_bits_and_tells_signed_zeros_apart(monkeypatch):
    _fast_numpy.clear_tables()
    x = _rand(7, (2, 5, 64), np.float64)
    x[..., 1::2] = -0.0  # pair partners -0.0: sin(+-0) decides the sign of the zero results
    for pos in (np.zeros(5), -np.zeros(5), np.arange(5) * 3.5):
        cold = rope.apply(x, pos, layout="interleaved")
        warm = rope.apply(x, pos, layout="interleaved")
        bitwise(cold, warm)
        bitwise(warm, portable(monkeypatch, x, pos, layout="interleaved"))
    c1, _ = _fast_numpy.cos_sin(np.arange(5.0), np.ones(3), 1.0)
    c2, _ = _fast_numpy.cos_sin(np.arange(5.0), np.ones(3), 1.0)
    assert c1 is c2 and not c1.flags.writeable  # kept, and read-only
    c3, _ = _fast_numpy.cos_sin(np.arange(5.0), np.ones(3), 0.5)  # another factor: another table
    assert c3 is not c1 and np.array_equal(c3, c1 * 0.5)
    for k in range(10):
        _fast_numpy.cos_sin(np.arange(5.0) + k, np.ones(3), 1.0)
    assert len(_fast_numpy._TABLES) <= _fast_numpy._TABLES_KEEP
