"""What the CPU benchmarks share: the repository on the import path, and a best-of-N timer."""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def best(fn, repeat):
    """The shortest of ``repeat`` timed calls of ``fn`` (after one untimed call), in seconds."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def float32_input(description: str, shape: list[int], repeat: int, argv=None):
    """``--shape`` and ``--repeat`` from the command line, and the benchmark's input: ``(args, x, positions)``,
    x standard normal float32 of that shape, positions ``arange(shape[-2])``."""
    import argparse

    import numpy as np

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--shape", type=int, nargs="+", default=shape)
    ap.add_argument("--repeat", type=int, default=repeat)
    args = ap.parse_args(argv)
    args.shape = tuple(args.shape)
    x = np.random.default_rng(0).standard_normal(args.shape).astype(np.float32)
    return args, x, np.arange(args.shape[-2])
