"""Production mutants judged by ``pemath prove``: a wrong constant, bound or rounding in the shipped code under
``pemath/`` (not in the proofs) must make the main command fail.

Each mutant is a one-place textual change to one file of ``pemath/``, applied to a throw-away copy of the package
(the working tree is never touched); ``pemath prove`` then runs on that copy (``PYTHONPATH`` puts it first; the
run checks it imported the copy). Killed: ``pemath prove`` exits non-zero. Survived: it exits 0, which is a defect
unless the mutant is listed in :data:`JUSTIFIED` with the reason.

    python -m tests.mutation.production [--jobs 2] [--only NAME ...] [--no-checks] [--full]

Prints each mutant's outcome, the kill rate, and exits 1 if an unjustified mutant survives.

Each mutant is first judged by ``pemath prove`` on the claims :data:`KILLERS` names for it (those that failed
on it in a full run): a claim that fails there fails in the full run too, so "killed" is exact. A mutant those
claims do not kill is judged by the full ``pemath prove``, so a stale entry costs time, never a verdict.
A justified survivor (:data:`JUSTIFIED`) is judged on its named claims only. ``--full`` judges every mutant by the
full run (and prints which claims failed, to refresh :data:`KILLERS`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root, inside pemath/
    old: str  # occurs exactly once in the file
    new: str


MUTANTS: tuple[Mutant, ...] = (
    # the three the issue-22 audit found pemath prove blind to
    Mutant("YaRN's index ramp rounded inwards", "pemath/scaling/yarn.py",
           "low, high = math.floor(low), math.ceil(high)", "low, high = math.ceil(low), math.floor(high)"),
    Mutant("T5's max_exact = (half + 1) // 2 in the bucket function", "pemath/t5.py",
           "def _bucket(rel: Any, xp: Any, device: Any, bidirectional: bool, half: int, md: int, exact: bool) -> Any:\n"
           "    me = half // 2",
           "def _bucket(rel: Any, xp: Any, device: Any, bidirectional: bool, half: int, md: int, exact: bool) -> Any:\n"
           "    me = (half + 1) // 2"),
    Mutant("PI's denominator 8 -> 4 in the computation", "pemath/claims/published.py",
           "PI_CASE = (128, 10000, 8)", "PI_CASE = (128, 10000, 4)"),
    # frequencies and scalings
    Mutant("RoPE's exponent 2i/d -> i/d", "pemath/_frequencies.py",
           "vals = [float(b ** (-mpmath.mpf(2 * i) / denominator)) for i in range(dim // 2)]",
           "vals = [float(b ** (-mpmath.mpf(i) / denominator)) for i in range(dim // 2)]"),
    Mutant("linear scaling multiplies", "pemath/scaling/linear.py",
           "return base_inv_freq(dim, base) / self.factor", "return base_inv_freq(dim, base) * self.factor"),
    Mutant("dynamic NTK's ratio without the + 1", "pemath/scaling/ntk.py",
           "ratio = 1.0 + self.factor * (seq_len - L0) / L0", "ratio = self.factor * (seq_len - L0) / L0"),
    Mutant("YaRN's blend weights swapped", "pemath/scaling/yarn.py",
           "return freq / self.factor * (1 - gamma) + freq * gamma",
           "return freq / self.factor * gamma + freq * (1 - gamma)"),
    Mutant("YaRN's ratio ramp with beta_fast and beta_slow swapped", "pemath/scaling/yarn.py",
           "return np.clip((r - self.beta_slow) / (self.beta_fast - self.beta_slow), 0.0, 1.0)",
           "return np.clip((r - self.beta_fast) / (self.beta_slow - self.beta_fast), 0.0, 1.0)"),
    Mutant("YaRN's attention factor 0.1 -> 0.2", "pemath/scaling/yarn.py",
           "return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0",
           "return 1.0 if scale <= 1 else 0.2 * mscale * math.log(scale) + 1.0"),
    Mutant("Llama 3's smoothing weight reversed", "pemath/scaling/llama3.py",
           "smooth = (L0 / wavelen - lo) / (hi - lo)", "smooth = (hi - L0 / wavelen) / (hi - lo)"),
    Mutant("Llama 3's band edges swapped", "pemath/scaling/llama3.py",
           "            wavelen < L0 / hi,\n            freq,",
           "            wavelen < L0 / lo,\n            freq,"),
    Mutant("p-RoPE keeps one pair more", "pemath/scaling/proportional.py",
           "return int(self.fraction * dim // 2)", "return int(self.fraction * dim // 2) + 1"),
    Mutant("LongRoPE multiplies by its factors", "pemath/scaling/longrope.py",
           "return base_inv_freq(dim, base) / ext", "return base_inv_freq(dim, base) * ext"),
    # encodings
    Mutant("ALiBi's slopes squared", "pemath/alibi.py",
           "out = np.array([_pow2(e) for e in _exponents(num_heads)], dtype=np.float64)",
           "out = np.array([_pow2(2 * e) for e in _exponents(num_heads)], dtype=np.float64)"),
    Mutant("T5's direction offset at r >= 0", "pemath/t5.py",
           "out = out + xp.astype(rel > 0, xp.int64) * half", "out = out + xp.astype(rel >= 0, xp.int64) * half"),
    Mutant("the binary encoding's bits shifted by one", "pemath/pedagogy.py",
           "bits = xp.bitwise_and(xp.bitwise_right_shift(pos[..., None], shifts), 1)",
           "bits = xp.bitwise_and(xp.bitwise_right_shift(pos[..., None], shifts + 1), 1)"),
    Mutant("the interleaved-to-half conversion reads (2i + 1, 2i)", "pemath/rope/_core.py",
           "    return x[..., 0:r:2], x[..., 1:r:2]", "    return x[..., 1:r:2], x[..., 0:r:2]"),
    Mutant("the interleaved merge stacks (b, a)", "pemath/rope/_core.py",
           "return xp.reshape(xp.stack([a, b], axis=-1), shape)", "return xp.reshape(xp.stack([b, a], axis=-1), shape)"),
    Mutant("the half layout's second member one feature late", "pemath/rope/_core.py",
           "return x[..., : r // 2], x[..., r // 2 : r]", "return x[..., : r // 2], x[..., r // 2 + 1 : r + 1]"),
)

#: The claims that failed on each mutant in a full run (``--full`` prints them): each mutant is judged on these
#: first. A hint only: a mutant they do not kill is judged by the full run.
KILLERS: dict[str, tuple[str, ...]] = {
    "YaRN's index ramp rounded inwards": ('scaling.relative',),
    "T5's max_exact = (half + 1) // 2 in the bucket function": ('t5.exact_below_max_exact',),
    "RoPE's exponent 2i/d -> i/d": ('sinusoidal.shift',),
    'linear scaling multiplies': ('failures.linear_two_ways',),
    "dynamic NTK's ratio without the + 1": ('scaling.unit_factor',),
    "YaRN's blend weights swapped": ('scaling.llama3_is_yarn',),
    "YaRN's ratio ramp with beta_fast and beta_slow swapped": ('scaling.llama3_is_yarn',),
    "YaRN's attention factor 0.1 -> 0.2": ('failures.factor_twice',),
    "Llama 3's smoothing weight reversed": ('scaling.llama3_is_yarn',),
    "Llama 3's band edges swapped": ('scaling.llama3_is_yarn',),
    'p-RoPE keeps one pair more': ('scaling.proportional_limits',),
    'LongRoPE multiplies by its factors': ('scaling.relative',),
    "ALiBi's slopes squared": ('alibi.slopes_geometric',),
    "T5's direction offset at r >= 0": ('t5.relative',),
    "the binary encoding's bits shifted by one": ('pedagogy.binary_bounded_unique_discontinuous',),
    'the interleaved-to-half conversion reads (2i + 1, 2i)': ('rope.layout_conjugacy',),
    'the interleaved merge stacks (b, a)': ('rope.layout_conjugacy',),
    "the half layout's second member one feature late": ('rope.layout_conjugacy',),
    "PI's denominator 8 -> 4 in the computation": ("pi.theorem_2_1",),
}

#: Survivors with the reason they are not a wrong program that pemath prove misses. (None now. "PI's denominator
#: 8 -> 4" survived until pi.theorem_2_1 had a formal statement: the mutant states a different, true published
#: claim, |a - a_lin| <= ... / (4 ln c), which pemath proved by the SymPy kernel; its formal statement is not
#: established by the checked steps, so the claim fails, and the mutant is killed.)
JUSTIFIED: dict[str, str] = {}


def mutants() -> list[Mutant]:
    return list(MUTANTS)


def run(mutant: Mutant, *, checks: bool = True, timeout: int = 600, full: bool = False) -> tuple[str, str, float]:
    """Apply ``mutant`` to a copy of ``pemath/`` and run ``pemath prove`` there (first on the claims
    :data:`KILLERS` names for it, unless ``full``; then on all of them if those pass): ("killed" | "survived" |
    "incompetent", detail, seconds)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "pemath", Path(tmp) / "pemath", ignore=shutil.ignore_patterns("__pycache__"))
        target = Path(tmp) / mutant.path
        text = target.read_text()
        if text.count(mutant.old) != 1:
            return "incompetent", f"{mutant.path}: the text to change occurs {text.count(mutant.old)} times", 0.0
        target.write_text(text.replace(mutant.old, mutant.new))
        first = () if full else KILLERS.get(mutant.name, ())
        # a justified survivor is not run in full again: it survives by design (its reason says why)
        runs = ([list(first)] if first else []) + ([] if first and mutant.name in JUSTIFIED else [[]])
        for ids in runs:
            status, detail = _prove(tmp, ids + ([] if checks else ["--no-checks"]), timeout)
            if status == "killed" or not ids:  # survived or incompetent on the named claims (a stale id): full run
                break
    return status, (f"{detail} (on the claims it names: {', '.join(first)})" if first and ids else detail), \
        time.perf_counter() - t0


def _prove(tmp: str, argv: list[str], timeout: int) -> tuple[str, str]:
    """``pemath prove argv`` on the mutated copy in ``tmp``: ("killed" | "survived" | "incompetent", detail)."""
    env = {**os.environ, "PYTHONPATH": tmp + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = (f"import sys, pemath; assert pemath.__file__.startswith({tmp!r}), pemath.__file__; "
            "from pemath.cli import main; sys.exit(main(['prove'] + sys.argv[1:]))")
    try:
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                             timeout=timeout, cwd=tmp)
    except subprocess.TimeoutExpired:
        return "killed", "timeout"
    summary = next((ln for ln in out.stdout.splitlines() if re.match(r"\d+ claims?: ", ln)), "")
    if out.returncode != 0 and not summary:  # it did not get to run the claims
        return "incompetent", out.stderr.strip()[-300:]
    failed = [ln.split(":")[0].strip() for ln in out.stdout.splitlines()
              if ln.endswith(": failed") or ln.endswith(": error")]
    if out.returncode != 0:
        return "killed", f"{summary} [{', '.join(failed)}]"
    return "survived", summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--no-checks", action="store_true", help="judge by the symbolic proofs alone")
    parser.add_argument("--full", action="store_true", help="judge every mutant by the full pemath prove")
    args = parser.parse_args(argv)
    chosen = [m for m in mutants() if not args.only or m.name in args.only]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda m: (m, run(m, checks=not args.no_checks, full=args.full)), chosen))
    killed = sum(1 for _, (status, _, _) in results if status == "killed")
    bad = []
    for m, (status, detail, seconds) in results:
        print(f"{status:<11} {seconds:5.1f} s  {m.name}: {detail}")
        if status == "survived" and m.name not in JUSTIFIED or status == "incompetent":
            bad.append(m.name)
    print(f"production mutants killed by pemath prove{' --no-checks' if args.no_checks else ''}: "
          f"{killed}/{len(results)}" + (f"; justified survivors: {sorted(JUSTIFIED)}" if JUSTIFIED else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
