r"""A fused CUDA kernel for :func:`pemath.rope.apply` on CuPy arrays.

One thread per rotated pair: it reads the pair once, computes the phase
:math:`m\theta_i` in float64 from the token's position and the float64 inverse
frequency (no cos/sin table: positions up to 2**53 keep their float64 phase), calls the
float64 ``sincos``, forms

.. math:: y_a = x_a c - x_b s, \qquad y_b = x_b c + x_a s

in float64 (multiplied by the attention factor as the portable kernel does), and writes
both members rounded once to x's dtype. Compiled with ``--fmad=false`` so the float64
expression is evaluated with the same roundings as the portable kernel; the only
difference from the CPU reference is the device's float64 ``sincos`` (within 1 ulp of
the correctly rounded value per the CUDA math documentation, like glibc's), so results
agree with the NumPy path to within a few float64 ulps before the final rounding.

Layouts: ``"interleaved"`` pairs ``(2i, 2i+1)``, ``"half"`` pairs ``(i, i + r/2)``,
over the first ``r`` features (partial rotary; the rest are copied). Positions are one
float64 per row of ``x`` (any per-token positions: the caller broadcasts them to
``x.shape[:-1]``). float32 and float64 only; float16 CuPy arrays take the portable path.

The same source compiles as host C++ (``PEMATH_ROPE_HOST``), which is how the kernel's
index arithmetic and float64 evaluation are tested on machines without a GPU
(``tests/test_rope_cupy_kernel.py``), and it is compiled with NVRTC there when CUDA's
compiler is installed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SOURCE", "KERNELS", "OPTIONS", "supports", "rotate_into"]

SOURCE = r"""
#ifdef PEMATH_ROPE_HOST
#include <math.h>
#define PEMATH_DEVICE static inline
#else
#define PEMATH_DEVICE __device__ __forceinline__
#endif

/* Rotate pair p (0 <= p < rows * h) of a C-contiguous (rows, dim) array x into y
   (y may be x). h = r / 2 pairs per row; interleaved != 0 pairs (2k, 2k+1), else
   (k, k + h). The inverse rotation comes as negated inv_freq (pemath.rope.apply's
   one place for it): pos * (-f) = -(pos * f) exactly. */
template <typename T>
PEMATH_DEVICE void pemath_rope_pair(long long p, const T* x, T* y, const double* pos,
                                    const double* inv_freq, double factor, long long h,
                                    long long dim, int interleaved)
{
    /* 32-bit division where it is exact (it is far cheaper on a GPU than 64-bit). */
    const long long row = (p < 2147483648LL && h < 2147483648LL)
        ? (long long)((unsigned int)p / (unsigned int)h) : p / h;
    const long long k = p - row * h;
    const long long a = row * dim + (interleaved ? 2 * k : k);
    const long long b = a + (interleaved ? 1 : h);
    const double theta = pos[row] * inv_freq[k];
    double s, c;
    sincos(theta, &s, &c);
    c = c * factor;
    s = s * factor;
    const double xa = (double)x[a];
    const double xb = (double)x[b];
    const double ya = xa * c - xb * s;
    const double yb = xb * c + xa * s;
    y[a] = (T)ya;
    y[b] = (T)yb;
}

#ifndef PEMATH_ROPE_HOST
#define PEMATH_ROPE_KERNEL(NAME, T)                                                        \
extern "C" __global__ void NAME(const T* __restrict__ x, T* y, const double* __restrict__ pos, \
                                const double* __restrict__ inv_freq, double factor,         \
                                long long n_pairs, long long h, long long dim,              \
                                int interleaved)                                            \
{                                                                                           \
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < n_pairs;       \
         p += (long long)blockDim.x * gridDim.x) {                                          \
        pemath_rope_pair<T>(p, x, y, pos, inv_freq, factor, h, dim, interleaved);           \
    }                                                                                       \
}
PEMATH_ROPE_KERNEL(pemath_rope_f32, float)
PEMATH_ROPE_KERNEL(pemath_rope_f64, double)
#endif
"""

KERNELS = {"float32": "pemath_rope_f32", "float64": "pemath_rope_f64"}
# --fmad=false: no fused multiply-add contraction, the portable kernel's roundings.
OPTIONS = ("--std=c++14", "--fmad=false")
_THREADS = 256

_modules: dict[int, Any] = {}


def supports(x: Any) -> bool:
    """Whether ``x`` takes the fused kernel: a CuPy float32/float64 array, not 0-size."""
    t = type(x)
    return (
        t.__module__.startswith("cupy")
        and t.__name__ == "ndarray"
        and str(x.dtype) in KERNELS
        and x.size > 0
    )


def _kernel(cp: Any, dtype_name: str) -> Any:
    dev = cp.cuda.Device().id
    mod = _modules.get(dev)
    if mod is None:
        mod = cp.RawModule(code=SOURCE, options=OPTIONS)
        _modules[dev] = mod
    return mod.get_function(KERNELS[dtype_name])


def rotate_into(x: Any, positions: Any, inv_freq: np.ndarray, factor: float, layout: str, r: int, out: Any) -> Any:
    """Write the rotation of CuPy ``x`` into ``out`` (same shape and dtype; may be ``x``; None: a new array).

    The kernel contract of :func:`pemath.rope.apply` (shared with the NumPy and portable
    kernels): ``positions`` a CuPy float64 array broadcasting against ``x.shape[:-1]``;
    ``inv_freq`` the ``r/2`` float64 frequencies, negated for the inverse rotation;
    ``factor`` the attention factor.
    """
    import cupy as cp

    if out is None:
        out = cp.empty(x.shape, dtype=x.dtype)
    lead = tuple(x.shape[:-1])
    dim = int(x.shape[-1])
    rows = int(np.prod(lead, dtype=np.int64)) if lead else 1
    h = r // 2
    in_place = out is x
    src = x
    if not in_place and cp.may_share_memory(x, out):  # possible overlap (bounds only, cheap): read a copy
        src = x.copy()
    if not src.flags.c_contiguous:
        src = cp.ascontiguousarray(src)
    dst = out if out.flags.c_contiguous else cp.empty(x.shape, dtype=x.dtype)
    if r < dim and dst is not src:
        dst[..., r:] = src[..., r:]
    pos = cp.ascontiguousarray(cp.broadcast_to(positions, lead), dtype=cp.float64)
    freq = cp.asarray(inv_freq, dtype=cp.float64)
    n_pairs = rows * h
    if n_pairs:
        dev = cp.cuda.Device()
        grid = int(min(-(-n_pairs // _THREADS), 32 * dev.attributes["MultiProcessorCount"]))
        _kernel(cp, str(x.dtype))(
            (grid,), (_THREADS,),
            (src, dst, pos, freq, np.float64(factor), np.int64(n_pairs), np.int64(h), np.int64(dim),
             np.int32(layout == "interleaved")),
        )
    if dst is not out:
        out[...] = dst
    return out
