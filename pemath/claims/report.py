"""Rendering outcomes: a terminal table, JSON, and a step-by-step narration."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ._model import Outcome

__all__ = ["table", "to_json", "narrate", "summary_line", "checker_line", "uses_line", "checker_size", "exit_code", "LEGEND",
           "terminal_width"]

def _outcomes(outcomes: Any) -> Sequence[Outcome]:
    if isinstance(outcomes, (str, bytes, Outcome)) or not isinstance(outcomes, Sequence):
        raise TypeError(f"outcomes must be a sequence of Outcome (from run_claims), got {type(outcomes).__name__}")
    bad = [o for o in outcomes if not isinstance(o, Outcome)]
    if bad:
        raise TypeError(f"outcomes must hold Outcome objects (from run_claim), got {bad[0]!r}")
    return outcomes


_MARK = {"passed": "ok", "failed": "FAIL", "error": "ERR", "skipped": "skip", "refuted": "refuted"}


def _check_cell(checks: dict[str, str]) -> str:
    cells = []
    for name, result in checks.items():
        head = result.split(":", 1)[0]
        cells.append(f"{name}:{_MARK.get(head, head)}")
    return " ".join(cells)


#: What each verdict means, printed under the table.
LEGEND = (
    "verdicts: proved = decided true (a theorem, or a published claim true as stated); "
    "imprecise = a published claim false as stated, its fair reading proved; "
    "refuted = a published claim pemath found false (not a failure of pemath); "
    "failed = a theorem or a check did not hold (a defect: exit 1); error = pemath's own code raised"
)


def table(outcomes: Sequence[Outcome]) -> str:
    """The outcomes as a table, one block of rows per family (the proofs/ script that narrates it)."""
    _outcomes(outcomes)
    rows = [("id", "kind", "verdict", "seconds", "checks")]
    for o in outcomes:
        rows.append((o.id, o.kind, o.status, f"{o.seconds:.2f}", _check_cell(o.checks)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    fmt = lambda r: ("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4]).rstrip()  # noqa: E731
    lines = [fmt(rows[0]), "  ".join("-" * w for w in widths) + "  " + "-" * 6]
    family = None
    for o, r in zip(outcomes, rows[1:]):
        if o.family != family:
            family = o.family
            lines.append(f"[{family}]")
        lines.append(fmt(r))
    details = []
    for o in outcomes:
        if o.status in ("failed", "error"):
            details.append(f"\n{o.id}: {o.status}\n  {o.message.strip()}")
        if o.counterexample:
            details.append(f"\n{o.id}: {o.status}; false as stated: {o.counterexample}")
        if o.fair_reading:
            details.append(f"  fair reading {o.fair_reading}")
        for name, result in o.checks.items():
            if result.startswith(("failed", "error")):
                details.append(f"  {o.id} [{name}] {result}")
    return "\n".join(lines + details)


def summary_line(outcomes: Sequence[Outcome]) -> str:
    """One line counting the outcomes by status (proved, imprecise, refuted, failed, error) and their total time."""
    _outcomes(outcomes)
    counts = Counter(o.status for o in outcomes)
    total = sum(o.seconds for o in outcomes)
    parts = [f"{counts.get(s, 0)} {s}" for s in ("proved", "imprecise", "refuted", "failed", "error")]
    noun = "claim" if len(outcomes) == 1 else "claims"
    return f"{len(outcomes)} {noun}: " + ", ".join(parts) + f" in {total:.1f} s"


def checker_size() -> dict:
    """The proof checker's size: lines of code per module of :mod:`pemath.kernel` (docstrings, comments and blank
    lines excluded) and the modules it imports."""
    import ast
    import pathlib

    from .. import kernel

    out: dict = {"modules": {}, "imports": set()}
    for path in sorted(pathlib.Path(kernel.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        doc = set()
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                    isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
                doc |= set(range(body[0].lineno, body[0].end_lineno + 1))
            if isinstance(node, ast.Import):
                out["imports"] |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                out["imports"].add((node.module or "").split(".")[0])
        lines = path.read_text(encoding="utf-8").splitlines()
        out["modules"][path.name] = sum(1 for i, ln in enumerate(lines, 1)
                                        if ln.strip() and not ln.strip().startswith("#") and i not in doc)
    out["lines"] = sum(out["modules"].values())
    out["imports"] = sorted(out["imports"] - {"__future__"})
    return out


def checker_line(outcomes: Sequence[Outcome]) -> str:
    """How much of the outcomes the proof checker verified: decided steps whose proposition and certificate
    :mod:`pemath.kernel` checked (the rest decided by the SymPy kernel alone), claims whose verdict is derived
    from a formal statement, and the checker's size."""
    _outcomes(outcomes)
    decided = [s for o in outcomes if o.derivation is not None for s in o.derivation.steps if s.status == "proved"]
    checked = sum(1 for s in decided if isinstance(s.kernel, dict) and "proposition" in s.kernel)
    formal = sum(1 for o in outcomes if o.statement is not None)
    size = checker_size()
    return (f"checker: {checked}/{len(decided)} decided steps verified by pemath.kernel ({size['lines']} lines, "
            f"imports {', '.join(size['imports'])}); {formal}/{len(outcomes)} claims with a formal statement")


def uses_line(outcomes: Sequence[Outcome]) -> str:
    """The graph of claims using claims (``Claim.uses``): each edge with the number of reference steps the checker
    verified through it; "none" when no claim uses another."""
    _outcomes(outcomes)
    edges = []
    for o in outcomes:
        for used in o.uses:
            n = sum(1 for s in (o.derivation.steps if o.derivation is not None else ())
                    if s.status == "proved" and s.certificate == "reference" and s.formula[2].name == used)
            edges.append(f"{o.id} -> {used} ({n} reference step{'s' if n != 1 else ''})")
    return "claims used by claims: " + ("; ".join(edges) if edges else "none")


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """The command line's exit code for these outcomes: 1 when a claim failed or raised, 0 otherwise."""
    _outcomes(outcomes)
    return 1 if any(o.status in ("failed", "error") for o in outcomes) else 0


def to_json(outcomes: Sequence[Outcome], *, latex: bool = False) -> str:
    """The outcomes as a JSON array (``pemath prove --json``): each claim's verdict, steps with their formulas,
    assumptions, hypotheses, ``pemath_version`` and ``registry_version``; ``latex=True`` adds each step's LaTeX
    (display, for reading: the re-checker takes records without it)."""
    _outcomes(outcomes)
    if not isinstance(latex, bool):
        raise TypeError(f"latex must be True or False, got {latex!r}")
    return json.dumps([o.as_json(latex=latex) for o in outcomes], indent=2)


def terminal_width() -> int:
    """The terminal's width in columns (80 when stdout is not a terminal), at least 40: what the command
    line wraps its text at (``pemath prove``, ``proofs/*.py``)."""
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def narrate(outcome: Outcome, *, latex: bool = False, width: int = 100) -> str:
    """The derivation of one claim, step by step (pretty-printed or LaTeX), wrapped at ``width`` columns; each
    derivation the record combines is headed by its title (which d, which layout)."""
    import textwrap

    if not isinstance(outcome, Outcome):
        raise TypeError(f"outcome must be an Outcome (from run_claim), got {outcome!r}")
    if not isinstance(latex, bool):
        raise TypeError(f"latex must be True or False, got {latex!r}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 40:
        raise ValueError(f"width must be an int >= 40 (columns), got {width!r}")
    lines = [f"== {outcome.id}: {outcome.title} [{outcome.kind}]"]
    d = outcome.derivation
    if d is not None:
        section = None
        for n, step in enumerate(d.steps, 1):
            if step.section is not None and step.section != section:
                section = step.section
                lines.append(f"  -- {section}")
            mark = {"proved": "[proved]", "failed": "[FAILED]", "info": f"[{step.role}]"}[step.status]
            how = (f" ({step.certificate}: {step.method})" if step.certificate and step.method and
                   step.certificate != "closed on construction" else
                   f" ({step.certificate})" if step.certificate else f" (by {step.method})" if step.method else "")
            lines.extend(textwrap.wrap(f"{n}. {step.text} {mark}{how}", width=width, initial_indent="  ",
                                       subsequent_indent="     "))
            body = None if step.trivial else step.latex() if latex else step.pretty(width=width - 7)
            if body:
                lines.extend("       " + ln for ln in body.splitlines())
    lines.append(f"  => {outcome.status}" + (f": {outcome.message.strip()}" if outcome.message else ""))
    if outcome.counterexample:
        lines.extend(textwrap.wrap(f"false as stated: {outcome.counterexample}", width=width,
                                   initial_indent="     ", subsequent_indent="       "))
    if outcome.fair_reading:
        lines.extend(textwrap.wrap(f"fair reading {outcome.fair_reading}", width=width, initial_indent="     ",
                                   subsequent_indent="       "))
    for name, result in outcome.checks.items():
        lines.extend(textwrap.wrap(f"check {name}: {result}", width=width, initial_indent="     ",
                                   subsequent_indent="       "))
    return "\n".join(lines)
