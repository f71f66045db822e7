"""Time pemath.rope.apply against the memory-traffic floor and two baselines.

Run from the repository root::

    python benchmarks/rope_apply.py [--shape 4 16 2048 128] [--repeat 7]

Prints, for each layout, the best-of-N time of

* ``x.copy()``: reading x and writing a result of the same size, the floor for any
  out-of-place kernel;
* ``rope.apply`` (the NumPy fast path) and ``rope.apply(..., out=buf)`` (no allocation);
* the naive NumPy formula in float64 (full-size float64 temporaries, one rounding,
  the same precision as ``rope.apply``);
* HF-style torch code (float32 tables and float32 products: less precise) on the same
  data, when torch is installed;

each as a ratio to ``x.copy()``. Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from _timing import best, float32_input  # noqa: E402  (puts the repository on the path)
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


def main(argv=None):
    args, x, pos = float32_input(__doc__.splitlines()[0], [4, 16, 2048, 128], 7, argv)
    shape = args.shape
    buf = np.empty_like(x)
    try:
        import torch
    except ImportError:
        torch = None
    print(f"x: float32 {shape} ({x.nbytes / 2**20:.0f} MiB), positions arange({shape[-2]}), best of {args.repeat}")
    print(f"numpy {np.__version__}, python {platform.python_version()}, {os.cpu_count()} CPU(s), "
          f"pemath threads {_fast_numpy.num_threads()} (PEMATH_NUM_THREADS)"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch not installed"))
    floor = best(lambda: x.copy(), args.repeat)
    print(f"x.copy(): {floor * 1e3:.1f} ms")
    print(f"{'layout':<12} {'apply':>7} {'apply(out=)':>12} {'naive NumPy f64':>16} {'HF-style torch f32':>19}")
    for layout in ("interleaved", "half"):
        r_apply = best(lambda: rope.apply(x, pos, layout=layout), args.repeat) / floor
        r_out = best(lambda: rope.apply(x, pos, layout=layout, out=buf), args.repeat) / floor
        r_naive = best(lambda: naive_numpy(x, pos, layout), args.repeat) / floor
        if torch is not None:
            tx, f = torch.from_numpy(x), torch_hf_style(torch, layout, shape[-1], torch.from_numpy(pos))
            r_torch = f"{best(lambda: f(tx), args.repeat) / floor:.2f}x"
        else:
            r_torch = "n/a"
        print(f"{layout:<12} {r_apply:>6.2f}x {r_out:>11.2f}x {r_naive:>15.2f}x {r_torch:>19}")


if __name__ == "__main__":
    main()
