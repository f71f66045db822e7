"""The fused CUDA kernel of rope.apply, tested where there is a GPU and where there is not.

* host: the kernel's source compiled as C++ (``PEMATH_ROPE_HOST``) with the system's C++
  compiler and run over NumPy buffers: its index arithmetic (both layouts, partial rotary,
  per-token positions), its float64 phase and its one rounding, against pemath's NumPy path;
* nvcc: the source compiles for a Hopper GPU with the kernel's own options;
* gpu: ``rope.apply`` on CuPy arrays takes the kernel and matches the NumPy path.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from pemath import rope
from pemath.rope import _fast_cupy
from pemath.scaling import YaRN

LAYOUTS = ("interleaved", "half")

HARNESS = textwrap.dedent("""
    #define PEMATH_ROPE_HOST 1
    {source}
    #define RUN(NAME, T) \\
    extern "C" void NAME(const T* x, T* y, const double* pos, const double* inv_freq, double factor, \\
                         long long n_pairs, long long h, long long dim, int interleaved) {{ \\
        for (long long p = 0; p < n_pairs; ++p) \\
            pemath_rope_pair<T>(p, x, y, pos, inv_freq, factor, h, dim, interleaved); \\
    }}
    RUN(run_f32, float)
    RUN(run_f64, double)
""")


@pytest.fixture(scope="module")
def host_kernel(tmp_path_factory):
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler on this machine to build the kernel source for the host")
    d = tmp_path_factory.mktemp("kernel")
    src, lib = d / "rope_host.cpp", d / "rope_host.so"
    src.write_text(HARNESS.format(source=_fast_cupy.SOURCE))
    # -ffp-contract=off: no fused multiply-add, as --fmad=false on the device.
    subprocess.run([cxx, "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return ctypes.CDLL(str(lib))


def run_host(lib, x, pos_rows, freq, factor, layout, r, inverse=False):
    """The kernel over every pair of the first r features of x (rows, dim); the rest is copied.

    ``inverse`` negates the frequencies, as pemath.rope.apply does for every kernel."""
    x = np.ascontiguousarray(x)
    y = x.copy()
    rows, dim = x.shape
    fn = lib.run_f32 if x.dtype == np.float32 else lib.run_f64
    ptr = ctypes.c_void_p
    fn.argtypes = [ptr, ptr, ptr, ptr, ctypes.c_double, ctypes.c_longlong, ctypes.c_longlong,
                   ctypes.c_longlong, ctypes.c_int]
    pos_rows = np.ascontiguousarray(pos_rows, dtype=np.float64)
    freq = np.ascontiguousarray(-freq if inverse else freq, dtype=np.float64)
    fn(x.ctypes.data, y.ctypes.data, pos_rows.ctypes.data, freq.ctypes.data, factor,
       rows * (r // 2), r // 2, dim, int(layout == "interleaved"))
    return y


def _case(seed, rows, dim):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, dim)) * 3).astype(np.float32)
    pos = rng.integers(0, 2**24, size=rows).astype(np.float64)
    pos[:3] = [0, 1, 2**24]
    return x, pos


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("r, dim", [(64, 64), (24, 40), (2, 6)])
@pytest.mark.parametrize("inverse", [False, True])
def test_host_kernel_matches_the_numpy_path(host_kernel, layout, r, dim, inverse):
    x, pos = _case(r + dim, 37, dim)
    scaling = YaRN(factor=4.0, original_max_position=4096)  # attention factor != 1
    freq = rope.inv_freq(r, base=500000.0, scaling=scaling)
    factor = scaling.attention_factor
    kw = dict(layout=layout, rotary_dim=r, base=500000.0, scaling=scaling, inverse=inverse)
    wide = run_host(host_kernel, x.astype(np.float64), pos, freq, factor, layout, r, inverse)
    ref = rope.apply(x.astype(np.float64), pos, **kw)
    # Only sincos differs (libm vs NumPy, each within an ulp or so): a few float64 ulps of the pair's size.
    scale = np.abs(x).astype(np.float64).max() * factor
    np.testing.assert_allclose(wide, ref, rtol=0, atol=8 * np.finfo(np.float64).eps * scale)
    np.testing.assert_array_equal(wide[:, r:], x[:, r:].astype(np.float64))  # untouched features
    narrow = run_host(host_kernel, x, pos, freq, factor, layout, r, inverse)
    np.testing.assert_array_equal(narrow, wide.astype(np.float32))  # float64 value rounded once
    got32 = rope.apply(x, pos, **kw)
    assert np.max(np.abs(narrow.astype(np.float64) - got32)) <= np.max(np.spacing(np.abs(got32)))


def test_host_kernel_catches_a_layout_mix_up(host_kernel):
    """The host test can fail: the other layout's pairs give a different answer."""
    x, pos = _case(5, 9, 16)
    freq = rope.inv_freq(16)
    got = run_host(host_kernel, x, pos, freq, 1.0, "interleaved", 16)
    assert not np.allclose(got, rope.apply(x, pos, layout="half"), atol=1e-3)
    np.testing.assert_allclose(got, rope.apply(x, pos, layout="interleaved"), rtol=0, atol=1e-5)


def test_source_compiles_for_the_gpu(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc (the CUDA compiler) is not installed; CuPy compiles the kernel with NVRTC at first use")
    src = tmp_path / "rope.cu"
    src.write_text(_fast_cupy.SOURCE)
    ptx = tmp_path / "rope.ptx"
    opts = [o for o in _fast_cupy.OPTIONS]
    subprocess.run([nvcc, "--ptx", "-arch=compute_90", *opts, "-o", str(ptx), str(src)], check=True,
                   capture_output=True, text=True)
    text = ptx.read_text()
    for name in _fast_cupy.KERNELS.values():
        assert f".entry {name}(" in text
    # --fmad=false: the products are emitted as mul.rn (never contracted into an fma by ptxas).
    assert text.count("mul.rn.f64") >= 2 * 4


# ---------------------------------------------------------------- on the GPU


@pytest.fixture
def cp():
    from .conftest import _cupy_or_skip

    return _cupy_or_skip()


@pytest.mark.gpu
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cupy_apply_takes_the_kernel_and_matches_numpy(cp, layout, dtype):
    x, _ = _case(11, 2 * 3 * 50, 96)
    x = x.reshape(2, 3, 50, 96).astype(dtype)
    pos = np.random.default_rng(1).integers(0, 2**24, size=(2, 1, 50))  # per-token, per-sequence
    assert _fast_cupy.supports(cp.asarray(x))
    for kw in ({}, {"rotary_dim": 64}, {"inverse": True}, {"scaling": YaRN(factor=4.0, original_max_position=64)}):
        got = cp.asnumpy(rope.apply(cp.asarray(x), cp.asarray(pos), layout=layout, **kw))
        ref = rope.apply(x.astype(np.float64), pos, layout=layout, **kw)
        scale = np.abs(x).max() * 2
        tol = 8 * np.finfo(np.float64).eps * scale if dtype == "float64" else np.spacing(np.float32(scale))
        np.testing.assert_allclose(got, ref, rtol=0, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cupy_out_in_place_and_strided(cp, layout):
    x = cp.asarray(_case(12, 40, 64)[0])
    pos = cp.arange(40)
    expected = cp.asnumpy(rope.apply(x, pos, layout=layout))
    y = x.copy()
    assert rope.apply(y, pos, layout=layout, out=y) is y
    np.testing.assert_array_equal(cp.asnumpy(y), expected)
    strided = cp.asarray(np.asfortranarray(cp.asnumpy(x)))
    np.testing.assert_array_equal(cp.asnumpy(rope.apply(strided, pos, layout=layout)), expected)
    out = cp.empty((64, 40), dtype=cp.float32).T  # non-contiguous out
    rope.apply(x, pos, layout=layout, out=out)
    np.testing.assert_array_equal(cp.asnumpy(out), expected)
