"""Comparison and the shared parts of the oracle's failure messages."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = ["Verdict", "compare", "fmt", "index_of", "mismatch_line", "diagnosis_lines", "first_match"]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Where ``actual`` is within ``tol`` of ``expected``; NaN anywhere is a mismatch."""

    ok: np.ndarray  # bool, elementwise
    err: np.ndarray  # |actual - expected| (NaN where either is NaN)
    ratio: np.ndarray  # err / tol (inf where tol == 0 < err, NaN -> inf)

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
) -> tuple[list[str], list[str], int]:
    """Evaluate each candidate: ``(labels that match, labels tried, number that raised)``.

    A candidate returns ``None`` when it does not apply. One that raises is skipped and
    counted: a failure inside the diagnosis must never hide the assertion itself.
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
        if verdict.passed:
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
