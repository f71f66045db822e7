"""The exact verdict of ``assert_rope_close`` in cache-sized blocks: what the report needs, not every array.

When the float32 test (``_certain``) cannot certify a call, every element is compared with
pemath's float64 truth and its derived tolerance, exactly as ``_report.compare`` does, but
block by block of rows (on the rope fast path's threads), keeping only what the failure
message uses: the number of mismatches, the worst element and its numbers, which rows
and features hold mismatches, and each row's largest error/tolerance ratio (to pick the
rows the diagnosis runs on). The truth is the portable kernel's float64 rotation with
rope.apply's cos/sin table; the tolerance is ``_tolerance.rope_bound``'s, per distinct
position and pair.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._core.report import compare

__all__ = ["Summary", "exact_summary"]

#: Elements per block (measured on the 2-core VM).
_BLOCK = 1 << 17


@dataclasses.dataclass
class Summary:
    """What the report of a RoPE comparison needs (the shape ``(N, d)`` of ``x2``)."""

    size: int
    mismatches: int
    worst: int  # flat index of the largest error / tolerance (NaN counts as the worst)
    worst_values: tuple[float, float, float, float]  # actual, expected, abs error, tolerance
    rows_bad: np.ndarray  # (N,) bool
    feats_bad: np.ndarray  # (d,) bool
    row_ratio: np.ndarray  # (N,) the largest error / tolerance of each row

    @property
    def passed(self) -> bool:
        return self.mismatches == 0

    @classmethod
    def of(cls, a2: np.ndarray, expected: np.ndarray, tol: np.ndarray, verdict: Any) -> Summary:
        """From whole arrays (the path that also checks vacuity)."""
        w = verdict.worst
        return cls(verdict.ok.size, verdict.mismatches, w,
                   (float(a2.flat[w]), float(expected.flat[w]), float(verdict.err.flat[w]), float(tol.flat[w])),
                   ~verdict.ok.all(axis=1), ~verdict.ok.all(axis=0), verdict.ratio.max(axis=1))


def exact_summary(case: Any, a2: np.ndarray, u_t: float, user: tuple[float, float] | None) -> Summary:
    """Compare ``a2`` (``(N, d)``, any float dtype) with the case's truth block by block."""
    from ...rope import _core
    from ...rope._fast_numpy import _cis, _run_blocks
    from .tolerance import pair_bounds, pair_scale

    n, d = case.x2.shape
    r, layout = case.r, case.layout
    distinct, inverse = np.unique(case.pos, return_inverse=True)
    inverse = inverse.reshape(-1)
    table = _cis(distinct[:, None] * case.freq[None, :], case.factor)  # a cos and a sin, as rope.apply's
    cos, sin = table.real, table.imag
    k = pair_scale(distinct, case.freq, case.cfreq, case.factor, u_t) if user is None else None
    rows = max(1, _BLOCK // max(d, 1))
    starts = list(range(0, n, rows))
    row_ratio = np.empty(n)
    rows_bad = np.empty(n, dtype=bool)
    parts: list[tuple[int, np.ndarray, int, float, tuple]] = []

    def work(chunk: list[int]) -> None:
        feats = np.zeros(d, dtype=bool)
        count, best, best_at, best_vals = 0, -1.0, 0, (0.0, 0.0, 0.0, 0.0)
        for s in chunk:
            e = min(n, s + rows)
            x = case.x2[s:e].astype(np.float64)
            a = a2[s:e].astype(np.float64)
            idx = inverse[s:e]
            truth = _core.rotate(x, cos[idx], sin[idx], layout, r, np, np.float64)
            if user is None:
                tol = np.empty_like(x)
                tol[:, :r] = pair_bounds(x[:, :r], k[idx], layout, r, u_t)
                tol[:, r:] = u_t * np.abs(x[:, r:])
            else:
                tol = user[1] + user[0] * np.abs(truth)
            v = compare(a, truth, tol)
            bad = ~v.ok
            per_row = np.count_nonzero(bad, axis=1)
            rows_bad[s:e] = per_row > 0
            ratio_rows = v.ratio.max(axis=1)
            row_ratio[s:e] = ratio_rows
            feats |= bad.any(axis=0)
            count += int(per_row.sum())
            i = int(np.argmax(ratio_rows))  # the first largest ratio: its row, then its feature
            w = i * d + int(np.argmax(v.ratio[i]))
            if v.ratio.flat[w] > best:
                best, best_at = float(v.ratio.flat[w]), s * d + w
                best_vals = (float(a.flat[w]), float(truth.flat[w]), float(v.err.flat[w]), float(tol.flat[w]))
        parts.append((count, feats, best_at, best, best_vals))

    _run_blocks(starts, work, n * d)
    count = sum(p[0] for p in parts)
    feats = np.logical_or.reduce([p[1] for p in parts])
    top = max(parts, key=lambda p: (p[3], -p[2]))
    return Summary(n * d, count, top[2], top[4], rows_bad, feats, row_ratio)
