"""Time pemath.rope.apply's fused CUDA kernel against a device copy and HF-style torch.

Run from the repository root on a machine with an NVIDIA GPU and CuPy::

    python benchmarks/rope_apply_cupy.py [--shape 4 16 2048 128] [--repeat 50]

Prints, for each layout, the median time (CUDA events, after a warm-up) of

* ``x.copy()`` on the device: reading x and writing a result of the same size, the floor;
* ``rope.apply`` (allocating) and ``rope.apply(..., out=buf)``;
* HF-style torch code on the same GPU (``x * cos + rotate_half(x) * sin`` with float32
  tables built once outside the timing), when torch with CUDA is installed;

each as a ratio to the copy, and the kernel's share of the copy's bandwidth
(``copy time / apply time``: the goal is at least 80 %). Timings only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pemath import rope  # noqa: E402
from rope_apply import torch_hf_style  # noqa: E402  (the same HF-style code as on the CPU)


def median_ms(cp, fn, repeat):
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", type=int, nargs="+", default=[4, 16, 2048, 128])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args(argv)
    import cupy as cp

    shape = tuple(args.shape)
    x = cp.asarray(np.random.default_rng(0).standard_normal(shape).astype(args.dtype))
    pos = cp.arange(shape[-2])
    buf = cp.empty_like(x)
    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(f"x: {args.dtype} {shape} ({x.nbytes / 2**20:.0f} MiB), positions arange({shape[-2]}), median of {args.repeat}")
    print(f"device: {props['name'].decode()}, CuPy {cp.__version__}, "
          + (f"torch {torch.__version__}" if torch else "torch (CUDA) not installed"))
    floor = median_ms(cp, lambda: x.copy(), args.repeat)
    gbs = 2 * x.nbytes / (floor * 1e-3) / 1e9
    print(f"x.copy(): {floor:.3f} ms ({gbs:.0f} GB/s read + write)")
    print(f"{'layout':<12} {'apply':>7} {'apply(out=)':>12} {'% of copy bandwidth':>20} {'HF-style torch':>15}")
    for layout in ("interleaved", "half"):
        t_apply = median_ms(cp, lambda: rope.apply(x, pos, layout=layout), args.repeat)
        t_out = median_ms(cp, lambda: rope.apply(x, pos, layout=layout, out=buf), args.repeat)
        if torch is not None:
            tx = torch.as_tensor(x, device="cuda")
            f = torch_hf_style(torch, layout, shape[-1], torch.as_tensor(pos, device="cuda"))
            r_torch = f"{median_ms(cp, lambda: f(tx), args.repeat) / floor:.2f}x"
        else:
            r_torch = "n/a"
        print(f"{layout:<12} {t_apply / floor:>6.2f}x {t_out / floor:>11.2f}x {100 * floor / t_out:>19.0f}% {r_torch:>15}")


if __name__ == "__main__":
    main()
