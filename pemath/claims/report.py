"""Rendering outcomes: a terminal table, JSON, and a step-by-step narration."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ._model import Outcome

__all__ = ["table", "to_json", "narrate", "summary_line", "exit_code"]

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


def table(outcomes: Sequence[Outcome]) -> str:
    _outcomes(outcomes)
    rows = [("id", "kind", "verdict", "seconds", "checks")]
    for o in outcomes:
        rows.append((o.id, o.kind, o.status, f"{o.seconds:.2f}", _check_cell(o.checks)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4])
        if n == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
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
    _outcomes(outcomes)
    counts = Counter(o.status for o in outcomes)
    total = sum(o.seconds for o in outcomes)
    parts = [f"{counts.get(s, 0)} {s}" for s in ("proved", "imprecise", "refuted", "failed", "error")]
    noun = "claim" if len(outcomes) == 1 else "claims"
    return f"{len(outcomes)} {noun}: " + ", ".join(parts) + f" in {total:.1f} s"


def exit_code(outcomes: Sequence[Outcome]) -> int:
    _outcomes(outcomes)
    return 1 if any(o.status in ("failed", "error") for o in outcomes) else 0


def to_json(outcomes: Sequence[Outcome]) -> str:
    _outcomes(outcomes)
    return json.dumps([o.as_json() for o in outcomes], indent=2)


def narrate(outcome: Outcome, *, latex: bool = False) -> str:
    """The derivation of one claim, step by step (pretty-printed or LaTeX)."""
    if not isinstance(outcome, Outcome):
        raise TypeError(f"outcome must be an Outcome (from run_claim), got {outcome!r}")
    if not isinstance(latex, bool):
        raise TypeError(f"latex must be True or False, got {latex!r}")
    lines = [f"== {outcome.id}: {outcome.title} [{outcome.kind}]"]
    d = outcome.derivation
    if d is not None:
        for n, step in enumerate(d.steps, 1):
            mark = {"proved": "[proved]", "failed": "[FAILED]", "info": f"[{step.role}]"}[step.status]
            how = (f" ({step.certificate}: {step.method})" if step.certificate and step.method and
                   step.certificate != "closed on construction" else
                   f" ({step.certificate})" if step.certificate else f" (by {step.method})" if step.method else "")
            lines.append(f"  {n}. {step.text} {mark}{how}".rstrip())
            body = step.latex() if latex else step.pretty()
            if body:
                lines.extend("       " + ln for ln in body.splitlines())
    lines.append(f"  => {outcome.status}" + (f": {outcome.message.strip()}" if outcome.message else ""))
    if outcome.counterexample:
        lines.append(f"     false as stated: {outcome.counterexample}")
    if outcome.fair_reading:
        lines.append(f"     fair reading {outcome.fair_reading}")
    for name, result in outcome.checks.items():
        lines.append(f"     check {name}: {result}")
    return "\n".join(lines)
