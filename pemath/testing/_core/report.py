"""Comparison and the shared parts of the oracle's failure messages."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = ["Candidate", "Verdict", "compare", "fmt", "index_of", "mismatch_line", "diagnosis_lines", "first_match", "locate",
           "axis_names"]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Where ``actual`` is within ``tol`` of ``expected``; NaN anywhere is a mismatch."""

    ok: np.ndarray  # bool, elementwise
    err: np.ndarray  # |actual - expected| (NaN where either is NaN)
    ratio: np.ndarray  # err / tol (inf where tol == 0 < err, NaN -> inf)
    #: whether the alternative is told apart from the right answer under the same tolerance (a diagnosis names
    #: only an alternative the right output would fail: at very long positions an off-by-one is not)
    separated: bool = True
    #: per row (2-D verdicts), whether the alternative is told apart from the right answer there (None: not computed)
    separated_rows: np.ndarray | None = None

    @property
    def passed(self) -> bool:
        return bool(self.ok.all())

    @property
    def mismatches(self) -> int:
        return int((~self.ok).sum())

    @property
    def worst(self) -> int:
        """Flat index of the largest error/tolerance ratio (NaN counts as the worst)."""
        return int(np.argmax(self.ratio))


#: A named alternative: its label (what the message prints) and a thunk giving its ``Verdict`` (None: does not apply).
Candidate = tuple[str, Callable[[], "Verdict | None"]]


def compare(actual: np.ndarray, expected: np.ndarray, tol: Any) -> Verdict:
    """Elementwise ``|actual - expected| <= tol``; equal infinities match, NaN never does."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(actual - expected)
        odd = ~np.isfinite(err)  # an infinity or a NaN on either side: rare, handled apart
        if odd.any():
            same_inf = np.isinf(actual) & (actual == expected)
            err[same_inf] = 0.0
        ratio = err / tol
        ok = err <= tol
        nan = np.isnan(ratio)  # 0/0 (an exact match where the tolerance is 0) or a NaN error
        if nan.any():
            ratio[nan] = np.where(err[nan] == 0, 0.0, np.inf)
    return Verdict(ok=ok, err=err, ratio=ratio)


def fmt(v: Any) -> str:
    """A number with 8 significant digits."""
    v = float(v)
    if np.isnan(v) or np.isinf(v):
        return repr(v)
    return f"{v:.8g}"


def index_of(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def mismatch_line(v: Verdict) -> str:
    n, m = v.mismatches, v.ok.size
    return f"Mismatched elements: {n} / {m} ({100.0 * n / max(m, 1):.3g}%)"


def nonfinite_line(actual: np.ndarray) -> str | None:
    bad = int((~np.isfinite(actual)).sum())
    if not bad:
        return None
    return f"actual holds {bad} NaN or infinite value(s) (counted as mismatches)"


def first_match(
    candidates: Iterable[tuple[str, Callable[[], Verdict | None]]],
    rows: list[tuple[str, np.ndarray]] | None = None,
    ratios: dict[str, float] | None = None,
) -> tuple[list[str], list[str], int]:
    """Evaluate each candidate: ``(labels that match, labels tried, number that raised)``.

    A candidate returns ``None`` when it does not apply. One that raises is skipped and
    counted: a failure inside the diagnosis must never hide the assertion itself. With
    ``rows``, each tried candidate's per-row verdict (the rows it explains) is appended
    there as ``(label, rows_ok)``; with ``ratios``, its largest error / tolerance is stored
    under its label.
    """
    matched: list[str] = []
    tried: list[str] = []
    raised = 0
    iterator = iter(candidates)
    while True:
        try:
            label, thunk = next(iterator)
        except StopIteration:
            break
        except Exception:  # noqa: BLE001 - a generator of candidates that failed half-way
            raised += 1
            break
        try:
            verdict = thunk()
        except (ValueError, TypeError, ImportError):
            verdict = None  # does not apply to this configuration (e.g. no ml_dtypes, an odd head dim)
        except Exception:  # noqa: BLE001 - the assertion matters more than one alternative
            raised += 1
            continue
        if verdict is None:
            continue
        tried.append(label)
        if rows is not None and verdict.ok.ndim == 2:
            explained = verdict.ok.all(axis=1)
            if verdict.separated_rows is not None:
                explained = explained & verdict.separated_rows
            rows.append((label, explained))
        if ratios is not None:
            ratios[label] = float(np.max(verdict.ratio)) if verdict.ratio.size else 0.0
        if verdict.passed and verdict.separated:
            matched.append(label)
    return matched, tried, raised


def diagnosis_lines(matched: list[str], tried: list[str], raised: int = 0, *, note: str = "") -> list[str]:
    if matched:
        lines = [f"Diagnosis: the output matches {matched[0]} (max error within tolerance)"]
        if len(matched) > 1:
            lines.append("  also consistent with: " + "; ".join(matched[1:]))
    else:
        lines = [f"Diagnosis: no known bug explains the mismatch ({len(tried)} alternatives tried)"]
    if raised:
        lines.append(f"  ({raised} alternative(s) raised an error and were skipped: please report it to pemath)")
    if note:
        lines.append(note)
    return lines


def ranges(idx: Any) -> str:
    """Sorted distinct integers as ``0-3, 7, 9-12`` (at most 8 runs, then ``...``)."""
    idx = np.unique(np.asarray(idx, dtype=np.int64))
    if idx.size == 0:
        return "none"
    parts: list[str] = []
    start = prev = int(idx[0])
    for v in [int(t) for t in idx[1:]] + [None]:  # type: ignore[list-item]
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    text = ", ".join(parts[:8])
    return text + (", ..." if len(parts) > 8 else "")


def axis_names(rows_shape: tuple[int, ...], positions: np.ndarray | None) -> list[str]:
    """A name for each axis of the rows (``x.shape[:-1]``): the axis along which the positions vary is
    "position"; with three axes the other two are "batch" and "head", in order; else "axis k"."""
    n = len(rows_shape)
    names = [f"axis {k}" for k in range(n)]
    if positions is None or n == 0:
        return names
    p = np.broadcast_to(np.asarray(positions), rows_shape)
    varies = [k for k in range(n) if rows_shape[k] > 1 and np.ptp(p, axis=k).max(initial=0) > 0]
    if len(varies) != 1:
        return names
    names[varies[0]] = "position"
    others = [k for k in range(n) if k != varies[0]]
    if n == 3:
        names[others[0]], names[others[1]] = "batch", "head"
    return names


def locate(rows: np.ndarray, rows_shape: tuple[int, ...], positions: np.ndarray | None = None) -> str:
    """Where the flat ``rows`` lie, by axis of ``x.shape[:-1]``: ``batch all (2), head 4-7 (of 8), position all (30)``
    when they form a block (every combination of the indices listed), else the first few index tuples."""
    rows = np.unique(np.asarray(rows, dtype=np.int64))
    if not rows_shape:
        return "the single row"
    idx = np.unravel_index(rows, rows_shape)
    names = axis_names(rows_shape, positions)
    per_axis = [np.unique(i) for i in idx]
    if rows.size == int(np.prod([a.size for a in per_axis])):
        parts = []
        for name, a, size in zip(names, per_axis, rows_shape):
            parts.append(f"{name} all ({size})" if a.size == size else f"{name} {ranges(a)} (of {size})")
        return ", ".join(parts)
    shown = "; ".join("(" + ", ".join(f"{n} {int(i[k])}" for n, i in zip(names, idx)) + ")" for k in range(min(4, rows.size)))
    return f"{rows.size} rows, not a block: " + shown + (", ..." if rows.size > 4 else "")
