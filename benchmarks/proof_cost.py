"""The cost of pemath's symbolic-d proofs does not depend on d; the dense expansions' does.

Run from the repository root::

    python benchmarks/proof_cost.py [--repeat 3] [--dense 2 4 8 16 32]

For every derivation that holds for all even d at once (the block index ``i`` and the
number of blocks ``h = d/2`` are SymPy symbols), it times

* the proof itself, then the proof *and* its specialisation to d = 8 and to d = 4096
  (``h`` substituted in every result, the per-block identity kept: nothing is expanded),
  and prints the ratio of the two: about 1;

and, for contrast, the dense proof of the relative property expanded for a concrete d
(``pemath.symbolic.rope.relative_expanded``), whose cost grows with d. Finally it times
the whole ``pemath prove`` run (the goal is at most 20 s on the project's 2-core VM).
Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import sympy as sp  # noqa: E402

from pemath.symbolic import decay, rope, rope_algebra, xpos  # noqa: E402

SYMBOLIC_D = {
    "rope.relative (symbolic d)": rope.relative_symbolic_d,
    "rope.group (symbolic d)": rope_algebra.group_symbolic_d,
    "rope.layout (symbolic d)": rope_algebra.layout_symbolic_d,
    "rope.translation (symbolic d)": rope_algebra.translation_symbolic_d,
    "rope.backward (symbolic d)": rope_algebra.backward_symbolic_d,
    "rope.abel (symbolic d)": decay.abel_symbolic_d,
    "xpos.relative (symbolic d)": xpos.relative_symbolic_d,
}


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        sp.core.cache.clear_cache()  # every run pays its own SymPy work
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# The symbols that stand for the number of rotated pairs d/2.
PAIRS = (rope.H, decay.N)


def specialised(proof, d):
    """Run the proof, then instantiate every result at d/2 pairs (no expansion of the sums).

    Returns the number of results that mentioned the number of pairs.
    """
    derivation = proof()
    hits = 0
    for key, value in derivation.result.items():
        if isinstance(value, sp.Basic) and value.free_symbols & set(PAIRS):
            derivation.result[key] = value.subs({s: d // 2 for s in PAIRS})
            hits += 1
    return hits


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dense", type=int, nargs="*", default=[2, 4, 8, 16])
    ap.add_argument("--no-prove", action="store_true", help="skip timing the whole `pemath prove`")
    args = ap.parse_args(argv)
    print(f"sympy {sp.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} CPU(s), best of {args.repeat}")
    print(f"{'derivation':<32} {'proof':>8} {'d = 8':>8} {'d = 4096':>9} {'4096 / 8':>9}  specialised")
    for name, proof in SYMBOLIC_D.items():
        t = best(proof, args.repeat)
        t8 = best(lambda: specialised(proof, 8), args.repeat)
        t4096 = best(lambda: specialised(proof, 4096), args.repeat)
        what = "sum over d/2 pairs" if specialised(proof, 8) else "per-pair identity (no d in it)"
        print(f"{name:<32} {t:>7.3f}s {t8:>7.3f}s {t4096:>8.3f}s {t4096 / t8:>8.2f}x  {what}")
    print()
    print("for contrast, the relative property expanded for a concrete d (cost grows with d):")
    for d in args.dense:
        t = best(lambda: rope.relative_expanded(d, "half"), 1)
        print(f"  d = {d:<5} {t:7.3f}s")
    if not args.no_prove:
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pemath.cli", "prove"], capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        lines = [ln for ln in proc.stdout.splitlines() if " claims: " in ln]  # the summary, not the legend after it
        summary = lines[-1] if lines else proc.stderr[-300:]
        print(f"\n`pemath prove` (every claim, with its checks): {elapsed:.1f} s, exit {proc.returncode}: {summary}")


if __name__ == "__main__":
    main()
