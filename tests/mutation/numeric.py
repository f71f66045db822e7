"""Mutation testing of pemath's numeric core, with a mutant set of our own.

Each mutant is one small textual change of one target module, generated from its AST
(operator swapped, sign dropped, constant off by one, comparison loosened, slice bounds
swapped, sin <-> cos, a factor or term dropped, ...). The mutants run in throw-away
copies of the repository (never in the working tree): each copy gets one mutated file
at a time and runs the targeted tests of that module (``-x -q``, a timeout per mutant).

Outcomes: ``killed`` (a test failed), ``survived`` (every test passed), ``timeout``,
``incompetent`` (the mutant does not import / collect). A survivor listed in
:data:`EQUIVALENT` is reported as ``equivalent`` with its justification (see
``tests/mutation/survivors.md``).

Run::

    python -m tests.mutation.numeric [--modules PATH ...] [--jobs 2] [--limit N] [--json FILE]

Workers fork from a process that has already imported NumPy, SymPy, hypothesis and
pytest (but never pemath), so a mutant costs its tests, not an interpreter start-up.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Target modules, in the order they run, and the tests each one is checked by
#: (globs relative to the repository root; the module itself is added, for its doctests).
#: The killer tests written for the mutants (tests/test_mutation_killers_*.py) join by area.
_ROPE = ["tests/test_rope.py", "tests/test_rope_errors.py", "tests/test_golden.py", "tests/test_conformance.py",
         "tests/test_mutation_killers_rope.py"]
TARGETS: dict[str, list[str]] = {
    "pemath/_frequencies.py": ["tests/test_rope.py", "tests/test_sinusoidal.py", "tests/test_scaling.py",
                               "tests/test_mutation_killers_rope.py", "tests/test_mutation_killers_encodings.py"],
    "pemath/rope/_core.py": _ROPE + ["tests/test_rope_fast.py"],
    "pemath/rope/dense.py": _ROPE,
    "pemath/rope/complex_form.py": _ROPE,
    "pemath/rope/layout.py": _ROPE + ["tests/test_from_hf.py"],
    "pemath/rope/xpos.py": ["tests/test_xpos.py", "tests/test_mutation_killers_rope.py"],
    "pemath/rope/axial.py": ["tests/test_axial.py", "tests/test_mutation_killers_rope.py"],
    "pemath/scaling/_base.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/linear.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/ntk.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/yarn.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/llama3.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/longrope.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/scaling/proportional.py": ["tests/test_scaling.py", "tests/test_mutation_killers_scaling.py"],
    "pemath/sinusoidal.py": ["tests/test_sinusoidal.py", "tests/test_mutation_killers_encodings.py"],
    "pemath/alibi.py": ["tests/test_alibi.py", "tests/test_mutation_killers_encodings.py"],
    "pemath/t5.py": ["tests/test_t5.py", "tests/test_mutation_killers_encodings.py"],
    "pemath/positions.py": ["tests/test_positions.py", "tests/test_mutation_killers_encodings.py"],
    "pemath/testing/_core/tolerance.py": ["tests/test_testing_oracle.py", "tests/test_docs_testing.py",
                                          "tests/test_precision_guard.py", "tests/test_mutation_killers_tolerance.py"],
    "pemath/testing/_rope/tolerance.py": ["tests/test_testing_oracle.py", "tests/test_docs_testing.py",
                                          "tests/test_precision_guard.py", "tests/test_mutation_killers_tolerance.py"],
    "pemath/testing/_tables/tolerance.py": ["tests/test_testing_oracle.py", "tests/test_docs_testing.py",
                                            "tests/test_precision_guard.py", "tests/test_mutation_killers_tolerance.py"],
    # being rewritten by the lead: run last
    "pemath/rope/apply.py": _ROPE + ["tests/test_rope_fast.py"],
    "pemath/rope/_fast_numpy.py": _ROPE + ["tests/test_rope_fast.py"],
}

#: Survivors justified as equivalent or not observable: key -> reason (the diffs are in survivors.md).
EQUIVALENT: dict[str, str] = {}

PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not torch and not gpu", "--no-header",
               "-o", "addopts=--strict-markers --doctest-modules"]


# --------------------------------------------------------------------------------------------
# mutant generation


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int
    start: int  # byte offsets of the replaced span
    end: int
    replacement: str
    operator: str
    original: str
    scope: str  # enclosing function / class qualname

    @property
    def key(self) -> str:
        return f"{self.path}::{self.scope}::{self.operator}::{self.original} -> {self.replacement}"


_BINOP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
               ast.Pow: "**"}
_BINOP_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
               ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult}
_CMP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq}
_NAME_SWAP = {"sin": "cos", "cos": "sin", "floor": "ceil", "ceil": "floor", "max": "min", "min": "max",
              "maximum": "minimum", "minimum": "maximum", "float32": "float64"}


def _is_docstring(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))


class _Collector(ast.NodeVisitor):
    def __init__(self, path: str, src: bytes) -> None:
        self.path, self.src = path, src
        self.starts = [0]
        for i, ch in enumerate(src):
            if ch == 10:
                self.starts.append(i + 1)
        self.scope: list[str] = []
        self.out: list[Mutant] = []

    # -- helpers
    def off(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.off(node.lineno, node.col_offset), self.off(node.end_lineno, node.end_col_offset)

    def text(self, a: int, b: int) -> str:
        return self.src[a:b].decode()

    def add(self, node: ast.AST, a: int, b: int, replacement: str, operator: str) -> None:
        original = self.text(a, b)
        if original == replacement:
            return
        self.out.append(Mutant(self.path, node.lineno, a, b, replacement, operator, original,
                               ".".join(self.scope) or "<module>"))

    def token_between(self, left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
        a, b = self.span(left)[1], self.span(right)[0]
        between = self.text(a, b)
        stripped = between.replace("(", " ").replace(")", " ")
        if stripped.split() != [token]:
            return None
        i = between.index(token)
        return a + len(between[:i].encode()), a + len(between[:i].encode()) + len(token)

    # -- skipped subtrees
    def visit_Import(self, node):  # noqa: N802
        pass

    visit_ImportFrom = visit_Import

    def visit_Raise(self, node):  # noqa: N802  (error messages: not numerics)
        pass

    def visit_JoinedStr(self, node):  # noqa: N802
        pass

    def visit_Assign(self, node):  # noqa: N802
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node):  # noqa: N802
        if node.value is not None:
            self.visit(node.value)

    def visit_Expr(self, node):  # noqa: N802
        if _is_docstring(node):
            return
        self.generic_visit(node)

    def visit_If(self, node):  # noqa: N802
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self.generic_visit(node)

    def _visit_def(self, node):
        self.scope.append(node.name)
        for d in getattr(node, "decorator_list", []):
            self.visit(d)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self.visit(default)
        else:
            for base in node.bases:
                self.visit(base)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    # -- mutation points
    def visit_BinOp(self, node):  # noqa: N802
        op = type(node.op)
        if op in _BINOP_SWAP:
            tok = _BINOP_TEXT[op]
            where = self.token_between(node.left, node.right, tok)
            if where is not None:
                self.add(node, *where, _BINOP_TEXT[_BINOP_SWAP[op]], "binop")
        if op in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            a, b = self.span(node)
            la, lb = self.span(node.left)
            ra, rb = self.span(node.right)
            self.add(node, a, b, f"({self.text(la, lb)})", "drop-right")
            if op in (ast.Add, ast.Mult):
                self.add(node, a, b, f"({self.text(ra, rb)})", "drop-left")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):  # noqa: N802
        if isinstance(node.op, (ast.USub, ast.Not)):
            a, b = self.span(node)
            oa, ob = self.span(node.operand)
            self.add(node, a, b, f"({self.text(oa, ob)})", "drop-sign" if isinstance(node.op, ast.USub) else "drop-not")
        self.generic_visit(node)

    def visit_Compare(self, node):  # noqa: N802
        if len(node.ops) == 1 and type(node.ops[0]) in _CMP_SWAP:
            op = type(node.ops[0])
            where = self.token_between(node.left, node.comparators[0], _CMP_TEXT[op])
            if where is not None:
                self.add(node, *where, _CMP_TEXT[_CMP_SWAP[op]], "compare")
        self.generic_visit(node)

    def visit_BoolOp(self, node):  # noqa: N802
        tok, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        where = self.token_between(node.values[0], node.values[1], tok)
        if where is not None:
            self.add(node, *where, other, "boolop")
        self.generic_visit(node)

    def visit_Constant(self, node):  # noqa: N802
        v = node.value
        a, b = self.span(node)
        if isinstance(v, bool):
            self.add(node, a, b, str(not v), "constant")
        elif isinstance(v, int):
            self.add(node, a, b, str(v + 1), "constant")
        elif isinstance(v, float):
            self.add(node, a, b, repr(v * 2 if v not in (0.0,) else 1.0), "constant")

    def visit_Name(self, node):  # noqa: N802
        if node.id in _NAME_SWAP and isinstance(node.ctx, ast.Load):
            a, b = self.span(node)
            self.add(node, a, b, _NAME_SWAP[node.id], "name")

    def visit_Attribute(self, node):  # noqa: N802
        self.visit(node.value)
        if node.attr in _NAME_SWAP:
            a, b = self.span(node)
            va, vb = self.span(node.value)
            self.add(node, a, b, f"{self.text(va, vb)}.{_NAME_SWAP[node.attr]}", "name")

    def visit_Slice(self, node):  # noqa: N802
        a, b = self.span(node)
        lo, up, st = node.lower, node.upper, node.step
        if st is None and (lo is None) != (up is None):
            bound = lo if lo is not None else up
            t = self.text(*self.span(bound))
            self.add(node, a, b, f":{t}" if lo is not None else f"{t}:", "slice-swap")
        elif lo is None and up is None and st is not None:
            self.add(node, a, b, f"1::{self.text(*self.span(st))}", "slice-offset")
        self.generic_visit(node)

    def visit_keyword(self, node):  # noqa: N802
        self.visit(node.value)

    def visit_arg(self, node):  # noqa: N802  (annotations)
        pass

    def visit_arguments(self, node):  # noqa: N802
        pass


def generate(path: str, root: Path = ROOT) -> list[Mutant]:
    """Every mutant of ``path`` (relative to ``root``), in source order, duplicates removed."""
    src = (root / path).read_bytes()
    c = _Collector(path, src)
    c.visit(ast.parse(src))
    seen, out = set(), []
    for mu in sorted(c.out, key=lambda m: (m.start, m.end, m.operator, m.replacement)):
        text = apply(src, mu)
        if text in seen:
            continue
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        seen.add(text)
        out.append(mu)
    return out


def apply(src: bytes, mu: Mutant) -> bytes:
    return src[: mu.start] + mu.replacement.encode() + src[mu.end:]


def diff(src: bytes, mu: Mutant) -> str:
    a = src.decode().splitlines(keepends=True)
    b = apply(src, mu).decode().splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{mu.path}", f"b/{mu.path}", n=1))


# --------------------------------------------------------------------------------------------
# the copies and the workers


def repo_files(root: Path = ROOT) -> list[str]:
    """git ls-files plus untracked files git does not ignore (what the working tree holds)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return sorted({f for f in out if f and (root / f).is_file()})


def make_copy(dest: Path, root: Path = ROOT) -> None:
    for f in repo_files(root):
        target = dest / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f, target)


def tests_for(path: str, copy: Path) -> list[str]:
    found = []
    for pattern in TARGETS.get(path, []):
        found += sorted(str(p.relative_to(copy)) for p in copy.glob(pattern))
    return [path] + list(dict.fromkeys(found))


@dataclass
class Result:
    key: str
    path: str
    line: int
    operator: str
    original: str
    replacement: str
    status: str  # killed, survived, timeout, incompetent, error, equivalent
    seconds: float
    detail: str = ""
    diff: str = ""


def _run_one(copy: Path, tests: list[str], timeout: float, log: Path) -> tuple[str, float, str]:
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child: fresh pemath from the copy, then pytest
        try:
            os.chdir(copy)
            # forget this checkout: the copy's tests and pemath are the ones to import
            for name in [m for m in sys.modules if m == "tests" or m.startswith("tests.")]:
                del sys.modules[name]
            sys.path[:] = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != ROOT]
            sys.path.insert(0, str(copy))
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            import pytest

            rc = pytest.main(PYTEST_ARGS + tests)
        except BaseException:  # noqa: BLE001
            rc = 99
        os._exit(int(rc))
    deadline = t0 + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - t0, ""
        time.sleep(0.02)
    rc = os.waitstatus_to_exitcode(status)
    dt = time.monotonic() - t0
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    if rc == 0:
        return "survived", dt, ""
    if rc == 1:
        failed = [ln for ln in tail.splitlines() if ln.startswith(("FAILED", "ERROR"))]
        return "killed", dt, (failed[0] if failed else "")[:200]
    if rc == 2 and ("ERROR collecting" in tail or "Interrupted" in tail or "ImportError" in tail):
        return "incompetent", dt, tail.strip().splitlines()[-1][:200] if tail.strip() else ""
    return "error", dt, f"pytest exit {rc}: " + (tail.strip().splitlines()[-1][:200] if tail.strip() else "")


def _preimport() -> None:
    sys.dont_write_bytecode = True  # a mutated file never meets a stale .pyc of another mutant
    import array_api_compat  # noqa: F401
    import array_api_strict  # noqa: F401
    import hypothesis  # noqa: F401
    import mpmath  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import sympy  # noqa: F401

    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        pass
    from hypothesis import HealthCheck, Phase, settings

    # no shrinking, no database, fewer examples: a mutant needs one failing example, not the smallest
    settings.register_profile("mutation", max_examples=25, deadline=None, derandomize=True, database=None,
                              phases=(Phase.explicit, Phase.generate), print_blob=False,
                              suppress_health_check=list(HealthCheck))
    assert not any(m == "pemath" or m.startswith("pemath.") for m in sys.modules), "pemath imported before fork"


def _worker(jobs: list[tuple[int, Mutant]], timeout_factor: float, queue) -> None:
    try:
        _work(jobs, timeout_factor, queue)
    except BaseException as exc:  # noqa: BLE001  (tell the parent, never hang it)
        queue.put(("fatal", repr(exc)))
    queue.put(None)


def _work(jobs: list[tuple[int, Mutant]], timeout_factor: float, queue) -> None:
    _preimport()
    os.environ["PEMATH_HYPOTHESIS_PROFILE"] = "mutation"
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="pemath-mut-") as tmp:
        copy = Path(tmp) / "repo"
        make_copy(copy)
        log = Path(tmp) / "pytest.log"
        baseline: dict[str, float] = {}
        for idx, mu in jobs:
            target = copy / mu.path
            original = target.read_bytes()
            tests = tests_for(mu.path, copy)
            if mu.path not in baseline:
                status, dt, detail = _run_one(copy, tests, 600, log)
                if status != "survived":
                    raise SystemExit(f"baseline tests of {mu.path} do not pass unmutated ({status}): {detail}\n"
                                     f"{log.read_text(errors='replace')[-3000:]}")
                baseline[mu.path] = dt
            target.write_bytes(apply(original, mu))
            try:
                status, dt, detail = _run_one(copy, tests, max(30.0, timeout_factor * baseline[mu.path]), log)
            finally:
                target.write_bytes(original)
            queue.put((idx, status, dt, detail))


def run(mutants: list[Mutant], jobs: int = 2, timeout_factor: float = 4.0, out=sys.stdout) -> list[Result]:
    """Run every mutant, ``jobs`` workers (each its own copy); print one line per mutant as it finishes."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    # modules in order; within a module, mutants dealt round-robin so both workers stay busy
    shares: list[list[tuple[int, Mutant]]] = [[] for _ in range(jobs)]
    for idx, mu in enumerate(mutants):
        shares[idx % jobs].append((idx, mu))
    procs = [ctx.Process(target=_worker, args=(share, timeout_factor, queue)) for share in shares if share]
    for p in procs:
        p.start()
    results: dict[int, Result] = {}
    sources = {p: (ROOT / p).read_bytes() for p in {m.path for m in mutants}}
    alive = len(procs)
    t0 = time.monotonic()
    while alive:
        item = queue.get()
        if item is None:
            alive -= 1
            continue
        if item[0] == "fatal":
            for p in procs:
                p.kill()
            raise SystemExit(f"a worker failed: {item[1]}")
        idx, status, dt, detail = item
        mu = mutants[idx]
        if status == "survived" and mu.key in EQUIVALENT:
            status, detail = "equivalent", EQUIVALENT[mu.key]
        results[idx] = Result(mu.key, mu.path, mu.line, mu.operator, mu.original, mu.replacement, status, dt,
                              detail, diff(sources[mu.path], mu) if status in ("survived", "equivalent") else "")
        print(f"[{len(results):4d}/{len(mutants)} {time.monotonic() - t0:6.0f}s] {status:11s} {mu.path}:{mu.line} "
              f"{mu.operator}: {mu.original!r} -> {mu.replacement!r}  {detail[:90]}", file=out, flush=True)
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a worker failed (exit {p.exitcode})")
    return [results[i] for i in sorted(results)]


def summary(results: list[Result], out=sys.stdout) -> dict:
    count = {s: sum(r.status == s for r in results) for s in
             ("killed", "survived", "equivalent", "timeout", "incompetent", "error")}
    competent = count["killed"] + count["survived"] + count["equivalent"] + count["timeout"]
    survivors = [r for r in results if r.status == "survived"]
    for r in survivors:
        print(f"\nSURVIVOR {r.key}\n{r.diff}", file=out)
    per_module: dict[str, list[int]] = {}
    for r in results:
        k, t = per_module.setdefault(r.path, [0, 0])
        per_module[r.path] = [k + (r.status in ("killed", "timeout")), t + (r.status != "incompetent")]
    print("\nper module (killed or timed out / competent):", file=out)
    for path, (k, t) in per_module.items():
        print(f"  {path:34s} {k:4d}/{t:<4d} {100 * k / max(t, 1):6.2f} %", file=out)
    killed = count["killed"] + count["timeout"]
    raw = killed / competent if competent else 1.0
    justified = (killed + count["equivalent"]) / competent if competent else 1.0
    print(f"\n{len(results)} mutants: " + ", ".join(f"{v} {k}" for k, v in count.items()), file=out)
    print(f"kill rate: {100 * raw:.2f} % of {competent} competent mutants "
          f"({100 * justified:.2f} % counting the {count['equivalent']} justified equivalents)", file=out)
    return {"counts": count, "kill_rate": raw, "kill_rate_with_equivalents": justified}


def write_survivors(results: list[Result], path: Path) -> None:
    """The survivors (and justified equivalents), grouped by module, with their diffs."""
    lines = ["# Surviving numeric mutants", "", "Generated by `python -m tests.mutation.numeric --survivors-md ...`.", ""]
    for status in ("survived", "equivalent"):
        rows = [r for r in results if r.status == status]
        lines += [f"## {status} ({len(rows)})", ""]
        for r in rows:
            lines += [f"### `{r.key}`", ""] + ([f"Justification: {r.detail}", ""] if r.detail else [])
            lines += ["```diff", r.diff.rstrip(), "```", ""]
    path.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation.numeric", description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="*", default=list(TARGETS), help="target modules (default: all, in order)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="at most N mutants per module (a quick look)")
    ap.add_argument("--operators", nargs="*", default=None, help="only these operators")
    ap.add_argument("--timeout-factor", type=float, default=4.0, help="timeout = factor x the unmutated run (>= 30 s)")
    ap.add_argument("--json", default=None, help="write every result to this file")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--survivors-md", default=None, help="write the survivors and their diffs to this markdown file")
    args = ap.parse_args(argv)
    mutants: list[Mutant] = []
    for path in args.modules:
        if path not in TARGETS:
            ap.error(f"unknown module {path!r}; targets: {', '.join(TARGETS)}")
        ms = [m for m in generate(path) if args.operators is None or m.operator in args.operators]
        mutants += ms[: args.limit] if args.limit else ms
    if args.list:
        for m in mutants:
            print(f"{m.path}:{m.line} {m.operator}: {m.original!r} -> {m.replacement!r}")
        print(f"{len(mutants)} mutants")
        return 0
    t0 = time.monotonic()
    results = run(mutants, jobs=args.jobs, timeout_factor=args.timeout_factor)
    s = summary(results)
    print(f"wall time {time.monotonic() - t0:.0f} s with {args.jobs} workers")
    if args.survivors_md:
        write_survivors(results, Path(args.survivors_md))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": s, "results": [asdict(r) for r in results]}, indent=1))
    return 1 if s["counts"]["survived"] or s["counts"]["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
