"""Time pemath.rope.apply against the memory-traffic floor, and its cost curve.

Run from the repository root::

    python benchmarks/rope_apply.py [--shape 4 16 2048 128] [--repeat 7] [--no-curve]

Prints, for float32 and float64 and each layout, the best-of-N time of

* ``x.copy()``: reading x and writing a result of the same size, the floor for any
  out-of-place kernel;
* ``rope.apply`` and ``rope.apply(..., out=buf)`` (no allocation), then with partial rotary
  (rotary_dim = d/2) and with per-row positions (one offset per batch row);
* the naive NumPy formula in float64 (full-size float64 temporaries, one rounding,
  the same precision as ``rope.apply``);
* HF-style torch code (float32 tables and float32 products: less precise) on the same
  data, when torch is installed;

each as a ratio to ``x.copy()`` measured in the same run. Then the cost curve: nanoseconds
per element of ``rope.apply(..., out=)`` from 2^12 to 2^26 elements, for head dims 64 to 256
and sequence lengths 1 to 32768, with decode-sized calls in microseconds. Which kernel ran is
printed (the compiled one needs numba: ``pip install 'pemath[fast]'``; ``PEMATH_KERNEL=numpy``
forces the NumPy fast path). Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from _timing import best  # noqa: E402  (puts the repository on the path)
from pemath import rope  # noqa: E402
from pemath.rope import _fast_numpy  # noqa: E402


def naive_numpy(x, pos, layout, base=10000.0):
    d = x.shape[-1]
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    theta = pos.astype(np.float64)[:, None] * inv
    c, s = np.cos(theta), np.sin(theta)
    x64 = x.astype(np.float64)
    if layout == "half":
        c, s = np.concatenate([c, c], -1), np.concatenate([s, s], -1)
        rot = np.concatenate([-x64[..., d // 2:], x64[..., : d // 2]], -1)
    else:
        c, s = np.repeat(c, 2, -1), np.repeat(s, 2, -1)
        rot = np.stack([-x64[..., 1::2], x64[..., 0::2]], -1).reshape(x.shape)
    return (x64 * c + rot * s).astype(x.dtype)


def torch_hf_style(torch, layout, d, pos, base=10000.0):
    """Tables built once (as HF's rotary module does per forward), then the apply step."""
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64, device=pos.device).float() / d))
    freqs = pos.float()[:, None] * inv[None, :]
    if layout == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
    else:
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
    cos, sin = emb.cos(), emb.sin()

    def rotate_half(x):
        return torch.cat((-x[..., d // 2:], x[..., : d // 2]), dim=-1)

    def rotate_pairs(x):
        return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)

    rot = rotate_half if layout == "half" else rotate_pairs
    return lambda x: x * cos + rot(x) * sin


def _kernel_name(x):
    from pemath.rope import _fast_numba

    return "compiled (numba)" if _fast_numba.supports(x, None) else "NumPy fast path"


def ratios(x, pos, repeat, torch):
    buf = np.empty_like(x)
    d = x.shape[-1]
    rows = np.arange(x.shape[0])[:, None, None] * 977 + pos  # one offset per batch row: positions (b, 1, s)
    floor = best(lambda: x.copy(), repeat)
    print(f"{x.dtype} x.copy(): {floor * 1e3:.1f} ms; kernel: {_kernel_name(x)}")
    print(f"{'layout':<12} {'apply':>7} {'apply(out=)':>12} {'cold out=':>10} {'partial out=':>13} "
          f"{'per-row out=':>13} {'naive NumPy f64':>16} {'HF-style torch f32':>19}")
    for layout in ("interleaved", "half"):
        r_apply = best(lambda: rope.apply(x, pos, layout=layout), repeat) / floor
        r_out = best(lambda: rope.apply(x, pos, layout=layout, out=buf), repeat) / floor
        r_cold = best(lambda: (_fast_numpy.clear_tables(), rope.apply(x, pos, layout=layout, out=buf)), repeat) / floor
        r_part = best(lambda: rope.apply(x, pos, layout=layout, rotary_dim=d // 2, out=buf), repeat) / floor
        r_rows = best(lambda: rope.apply(x, rows, layout=layout, out=buf), repeat) / floor
        r_naive = best(lambda: naive_numpy(x, pos, layout), repeat) / floor
        if torch is not None and x.dtype == np.float32:
            tx, f = torch.from_numpy(x), torch_hf_style(torch, layout, d, torch.from_numpy(pos))
            r_torch = f"{best(lambda: f(tx), repeat) / floor:.2f}x"
        else:
            r_torch = "n/a"
        print(f"{layout:<12} {r_apply:>6.2f}x {r_out:>11.2f}x {r_cold:>9.2f}x {r_part:>12.2f}x {r_rows:>12.2f}x "
              f"{r_naive:>15.2f}x {r_torch:>19}")


def curve(repeat):
    """ns per element of rope.apply(out=) against the size, the head dim and the sequence length."""
    rng = np.random.default_rng(1)

    def per_element(shape, layout="half"):
        x = rng.standard_normal(shape).astype(np.float32)
        buf, pos = np.empty_like(x), np.arange(shape[-2])
        t = best(lambda: rope.apply(x, pos, layout=layout, out=buf), repeat)
        cold = best(lambda: (_fast_numpy.clear_tables(), rope.apply(x, pos, layout=layout, out=buf)), repeat)
        return t, t / x.size * 1e9, cold / x.size * 1e9

    print("cost curve, float32, half layout, rope.apply(x, arange(s), out=buf); 'cold' recomputes the cos/sin table,")
    print("the others reuse it (the layers of one forward pass share their positions):")
    print(f"{'elements':>10} {'shape (b, heads, s, d)':>26} {'time':>10} {'ns/element':>11} {'cold ns/el.':>12}")
    for e in range(12, 27, 2):
        n = 1 << e
        s_ = max(1, min(4096, n // (8 * 128)))
        shape = (max(1, n // (8 * s_ * 128)), 8, s_, 128)
        t, ns, cold = per_element(shape)
        print(f"{'2^' + str(e):>10} {str(shape):>26} {t * 1e6:>8.0f}us {ns:>11.3f} {cold:>12.3f}")
    print("head dims at 2^22 elements:")
    for d in (64, 128, 256):
        shape = (4, 8, (1 << 22) // (32 * d), d)
        t, ns, cold = per_element(shape)
        print(f"{'d = ' + str(d):>10} {str(shape):>26} {t * 1e6:>8.0f}us {ns:>11.3f} {cold:>12.3f}")
    print("sequence lengths (8 heads, d = 128; s = 1 is one decode token, its time is overhead):")
    for s_ in (1, 16, 256, 4096, 32768):
        shape = (1, 8, s_, 128)
        t, ns, cold = per_element(shape)
        print(f"{'s = ' + str(s_):>10} {str(shape):>26} {t * 1e6:>8.1f}us {ns:>11.3f} {cold:>12.3f}")


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", type=int, nargs="+", default=[4, 16, 2048, 128])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-curve", action="store_true")
    args = ap.parse_args(argv)
    shape = tuple(args.shape)
    try:
        import torch
    except ImportError:
        torch = None
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except OSError:
        load = "n/a"
    print(f"x: {shape}, positions arange({shape[-2]}), best of {args.repeat}; load average {load}")
    print(f"numpy {np.__version__}, python {platform.python_version()}, {os.cpu_count()} CPU(s), "
          f"pemath threads {_fast_numpy.num_threads()} (PEMATH_NUM_THREADS)"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch not installed"))
    pos = np.arange(shape[-2])
    for dtype in (np.float32, np.float64):
        x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
        ratios(x, pos, args.repeat, torch)
    if not args.no_curve:
        curve(max(3, args.repeat // 2))


if __name__ == "__main__":
    main()
