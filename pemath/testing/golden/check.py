"""Check RoPE outputs against a pemath golden vector, with the Python standard library only.

Copy this file and a golden JSON file anywhere (no pemath, no NumPy needed)::

    python check.py llama-3.1-8b.json                     # the file's own values agree with math.cos/sin
    python check.py llama-3.1-8b.json mine.json --dtype bfloat16

``mine.json`` holds your outputs, one nested list per case, shaped like that case's
``expected`` (``[head][position index][feature]``)::

    {"default": [[[...], ...], ...]}

(a bare nested list is accepted for a file with a single case). Exit status 0 when
every element is within the bound, 1 otherwise; the report names the worst element,
its head, position, feature and frequency index.

The bound
---------
For a rotated pair :math:`(a, b)` with frequency :math:`f_i` at position :math:`p`
(phase :math:`\\phi = p f_i`) and attention factor :math:`A`, an honest implementation
whose frequencies and phases are computed in a format of unit roundoff ``u_phase``
and whose output is rounded to a format of unit roundoff ``u_out`` satisfies

    |actual - expected| <= A (|x_a| + |x_b|) (units_i * u_phase * |phi| + 8 * u_out)

where ``units_i`` is the case's ``phase_error_units[i]`` (the float roundings of the
frequency and phase computations, counted per pair by the generator) and 8 counts
cos, sin, the attention factor, the two products and the sum. Features beyond the
rotary dim must be copied exactly. ``--dtype`` sets ``u_out`` (float64, float32,
float16, bfloat16); ``u_phase`` is float32's unless ``--phase-dtype`` says otherwise
(most pipelines compute phases in float32 whatever the model dtype; a phase computed
in bfloat16 is a bug that this check is meant to catch).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

__all__ = ["UNIT_ROUNDOFF", "pairs", "out_pairs", "rotate", "bounds", "compare", "check", "main"]

UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
OUTPUT_UNITS = 8


def _unit(name: str, what: str) -> float:
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"{what} must be one of {', '.join(UNIT_ROUNDOFF)}, got {name!r}")
    return UNIT_ROUNDOFF[name]


def pairs(rope: dict) -> list:
    """The rotated feature pairs (a, b), pair i rotating with frequency inv_freq[i]."""
    h = rope["rotary_dim"] // 2
    if rope["layout"] == "half":
        return [(i, i + h) for i in range(h)]
    if rope["layout"] == "interleaved":
        return [(2 * i, 2 * i + 1) for i in range(h)]
    raise ValueError(f"unknown layout {rope['layout']!r}")


def _rope(doc: dict, case: dict) -> dict:
    """Format 1 keeps one RoPE per file; format 2 one per case (layer types, regimes)."""
    return case["rope"] if "rope" in case else doc["rope"]


def out_pairs(rope: dict) -> list:
    """Where pair i's two outputs are written: the pairs of ``out_layout`` (format 2), else the input's."""
    return pairs(dict(rope, layout=rope.get("out_layout") or rope["layout"]))


def _pair_positions(case: dict, rope: dict) -> list:
    """The position each pair turns by, per row: one position per row, or M-RoPE's per-pair component."""
    n = rope["rotary_dim"] // 2
    if "position_components" in case:
        comp, pc = rope["components"], case["position_components"]
        return [[pc[comp[i]][t] for i in range(n)] for t in range(len(pc[0]))]
    return [[p] * n for p in case["positions"]]


def _case(doc: dict, case: Any) -> dict:
    if isinstance(case, dict):
        return case
    for c in doc["cases"]:
        if c["name"] == case:
            return c
    raise ValueError(f"case must be one of {[c['name'] for c in doc['cases']]}, got {case!r}")


def rotate(doc: dict, case: Any) -> list:
    """The rotation of the case's x, recomputed in float64 with math.cos and math.sin."""
    case = _case(doc, case)
    rope = _rope(doc, case)
    a = rope["attention_factor"]
    out = []
    for head in case["x"]:
        rows = []
        for ps, x in zip(_pair_positions(case, rope), head):
            y = list(x)
            for (ia, ib), (oa, ob), f, p in zip(pairs(rope), out_pairs(rope), case["inv_freq"], ps):
                c, s = math.cos(p * f), math.sin(p * f)
                y[oa], y[ob] = a * (x[ia] * c - x[ib] * s), a * (x[ib] * c + x[ia] * s)
            rows.append(y)
        out.append(rows)
    return out


def bounds(doc: dict, case: Any, *, dtype: str = "float32", phase_dtype: str | None = None) -> list:
    """Per-element bound on |actual - expected| for an honest implementation (module notes)."""
    case = _case(doc, case)
    rope = _rope(doc, case)
    u_out = _unit(dtype, "dtype")
    u_phase = _unit(phase_dtype or ("float64" if dtype == "float64" else "float32"), "phase_dtype")
    a = rope["attention_factor"]
    units = case["phase_error_units"]
    out = []
    for head in case["x"]:
        rows = []
        for ps, x in zip(_pair_positions(case, rope), head):
            tol = [0.0] * len(x)
            for i, ((ia, ib), (oa, ob), f) in enumerate(zip(pairs(rope), out_pairs(rope), case["inv_freq"])):
                t = a * (abs(x[ia]) + abs(x[ib])) * (units[i] * u_phase * abs(ps[i] * f) + OUTPUT_UNITS * u_out)
                tol[oa] = tol[ob] = t
            rows.append(tol)
        out.append(rows)
    return out


def compare(doc: dict, case: Any, actual: list, *, dtype: str = "float32", phase_dtype: str | None = None) -> dict:
    """Compare ``actual`` with the case's ``expected``; a report dict (``ok``, counts, ``worst``)."""
    case = _case(doc, case)
    expected = case["expected"]
    tol = bounds(doc, case, dtype=dtype, phase_dtype=phase_dtype)
    shape = (len(expected), len(expected[0]), len(expected[0][0]))
    try:
        ok_shape = len(actual) == shape[0] and all(
            len(rows) == shape[1] and all(len(row) == shape[2] for row in rows) for rows in actual
        )
    except TypeError:
        ok_shape = False
    if not ok_shape:
        raise ValueError(f"actual must be nested lists of shape {list(shape)} [head][position index][feature]")
    feature_pair = {}
    for i, (ia, ib) in enumerate(out_pairs(_rope(doc, case))):
        feature_pair[ia] = feature_pair[ib] = i
    bad, worst = 0, None
    for h in range(shape[0]):
        for t in range(shape[1]):
            for j in range(shape[2]):
                got, want, bound = float(actual[h][t][j]), expected[h][t][j], tol[h][t][j]
                diff = abs(got - want) if math.isfinite(got) else math.inf
                excess = diff / bound if bound > 0 else (0.0 if diff == 0 else math.inf)
                if excess > 1:
                    bad += 1
                if worst is None or excess > worst["excess"]:
                    worst = {
                        "excess": excess, "head": h, "position_index": t,
                        "position": case["positions"][t] if "positions" in case
                        else [c[t] for c in case["position_components"]],
                        "feature": j, "frequency_index": feature_pair.get(j), "actual": got, "expected": want,
                        "difference": diff, "bound": bound,
                    }
    return {"case": case["name"], "ok": bad == 0, "mismatches": bad, "total": shape[0] * shape[1] * shape[2],
            "worst": worst}


def describe(report: dict) -> str:
    w = report["worst"]
    where = (
        f"head {w['head']}, position {w['position']} (index {w['position_index']}), feature {w['feature']}"
        + (f" (frequency index {w['frequency_index']})" if w["frequency_index"] is not None else " (not rotated)")
    )
    status = "OK" if report["ok"] else "FAIL"
    return (
        f"case {report['case']}: {status}: {report['mismatches']} of {report['total']} elements outside the bound; "
        f"worst at {where}: actual {w['actual']!r}, expected {w['expected']!r}, |difference| {w['difference']:.3g}, "
        f"bound {w['bound']:.3g}"
    )


def check(doc: dict, actual: Any = None, *, dtype: str = "float32", phase_dtype: str | None = None) -> list:
    """Reports for every case: ``actual`` (dict by case name, or a nested list for one case) or, when
    None, the file's own consistency (expected against :func:`rotate`, float64 bound)."""
    if doc.get("format") != "pemath.testing.golden.rope" or doc.get("format_version") not in (1, 2):
        raise ValueError(f"not a format-1 or -2 pemath golden RoPE file: format {doc.get('format')!r}, "
                         f"version {doc.get('format_version')!r}")
    reports = []
    for case in doc["cases"]:
        if actual is None:
            reports.append(compare(doc, case, rotate(doc, case), dtype="float64"))
            continue
        if isinstance(actual, dict):
            if case["name"] not in actual:
                raise ValueError(f"actual has no outputs for case {case['name']!r} (has {sorted(actual)})")
            mine = actual[case["name"]]
        elif len(doc["cases"]) == 1:
            mine = actual
        else:
            raise ValueError(f"this file has cases {[c['name'] for c in doc['cases']]}: give a dict by case name")
        reports.append(compare(doc, case, mine, dtype=dtype, phase_dtype=phase_dtype))
    return reports


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check RoPE outputs against a pemath golden vector.")
    parser.add_argument("golden", help="a golden JSON file (pemath/testing/golden/v1/*.json or v2/*.json)")
    parser.add_argument("actual", nargs="?", help="your outputs as JSON (omit to check the file itself)")
    parser.add_argument("--dtype", default="float32", choices=sorted(UNIT_ROUNDOFF), help="your output dtype")
    parser.add_argument("--phase-dtype", default=None, choices=sorted(UNIT_ROUNDOFF),
                        help="the dtype of your phases (default float32; float64 for --dtype float64)")
    args = parser.parse_args(argv)
    with open(args.golden, encoding="utf-8") as fh:
        doc = json.load(fh)
    actual = None
    if args.actual:
        with open(args.actual, encoding="utf-8") as fh:
            actual = json.load(fh)
    reports = check(doc, actual, dtype=args.dtype, phase_dtype=args.phase_dtype)
    print(f"{doc['name']} ({doc['model']}):")
    for report in reports:
        print("  " + describe(report))
    return 0 if all(r["ok"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
