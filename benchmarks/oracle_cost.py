"""What pemath's oracle costs, as a ratio to ``x.copy()`` measured in the same run.

Run from the repository root::

    python benchmarks/oracle_cost.py [--shape 1 32 4096 128] [--repeat 5]

On a float32 ``x`` (default 16 M elements) and an honest output, prints the best-of-N
time of

* ``x.copy()``: the floor, one read and one write of the data;
* a passing ``assert_rope_close`` (the float32 certain-pass test of
  ``pemath.testing._rope.certain``, the truth and the tolerance included), per layout;
* the same call forced onto the exact float64 path (what every call cost before);
* a failing ``assert_rope_close`` (positions off by one) with its full report and
  diagnosis;
* a failing one that no alternative explains (the output plus noise of 1e-3): every
  candidate tried, the recurrence recognition and the per-row search included;
* ``torch.testing.assert_close`` comparing two ready tensors, when torch is installed;

each as a ratio to ``x.copy()``. The issue's goals: passing at most 10x, failing at most
50x. Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from _timing import best, float32_input  # noqa: E402  (puts the repository on the path)
from pemath import rope  # noqa: E402
from pemath.rope import _fast_numpy  # noqa: E402
from pemath.testing import assert_rope_close  # noqa: E402
from pemath.testing._rope import asserts as _asserts  # noqa: E402


def failing(actual, x, pos, layout):
    try:
        assert_rope_close(actual, x, pos, layout=layout)
    except AssertionError:
        return
    raise RuntimeError("the failing case passed")


def main(argv=None):
    args, x, pos = float32_input(__doc__.splitlines()[0], [1, 32, 4096, 128], 5, argv)
    shape = args.shape
    try:
        import torch
    except ImportError:
        torch = None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"x: float32 {shape} ({x.size / 2**20:.0f} M elements), positions arange({shape[-2]}), best of {args.repeat}")
    print(f"numpy {np.__version__}, python {platform.python_version()}, {os.cpu_count()} CPU(s), "
          f"pemath threads {_fast_numpy.num_threads()}, load average {load:.2f}"
          + (f", torch {torch.__version__}" if torch else ", torch not installed"))
    floor = best(lambda: x.copy(), args.repeat)
    print(f"x.copy(): {floor * 1e3:.1f} ms")
    print(f"{'layout':<12} {'passing':>8} {'passing, exact path':>20} {'failing + diagnosis':>20} "
          f"{'failing, unexplained':>21} {'torch assert_close':>19}")
    noise = (np.float32(1e-3) * np.random.default_rng(1).standard_normal(x.shape)).astype(np.float32)
    for layout in ("half", "interleaved"):
        y = rope.apply(x, pos, layout=layout)
        bad = rope.apply(x, pos + 1, layout=layout)
        r_pass = best(lambda: assert_rope_close(y, x, pos, layout=layout), args.repeat) / floor
        certain = _asserts.certain_rope_pass
        _asserts.certain_rope_pass = lambda *a, **k: False
        try:
            r_exact = best(lambda: assert_rope_close(y, x, pos, layout=layout), max(1, args.repeat // 2)) / floor
        finally:
            _asserts.certain_rope_pass = certain
        r_fail = best(lambda: failing(bad, x, pos, layout), max(1, args.repeat // 2)) / floor
        noisy = y + noise
        r_none = best(lambda: failing(noisy, x, pos, layout), max(1, args.repeat // 2)) / floor
        if torch is not None:
            ty, tz = torch.from_numpy(y), torch.from_numpy(y.copy())
            r_torch = f"{best(lambda: torch.testing.assert_close(ty, tz), args.repeat) / floor:.1f}x"
        else:
            r_torch = "n/a"
        print(f"{layout:<12} {r_pass:>7.1f}x {r_exact:>19.1f}x {r_fail:>19.1f}x {r_none:>20.1f}x {r_torch:>19}")


if __name__ == "__main__":
    main()
