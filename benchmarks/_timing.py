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
