"""The docs' numbers and calls are the code's: the tolerance table is generated, its estimates recomputed,
and every ``scaling.X(...)`` a page shows names parameters X has."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from pemath import scaling
from pemath.testing import rope_tolerance

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _ext(name: str):
    """A docs/_ext module, imported as the docs build does (from that folder)."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def test_the_tolerance_table_is_generated_from_rope_tolerance():
    text = (DOCS / "tolerance.rst").read_text()
    assert ".. pemath-tolerance-table::" in text
    for stale in ("2.62", "2.63", "2.67", "3 \\cdot 10^5"):  # the hand-typed figures the page once had
        assert stale not in text
    tolerance_table = _ext("tolerance_table")
    rows = {r[0]: r[1:] for r in tolerance_table.rows()}
    x = np.zeros(128)
    x[0] = x[1] = 1.0
    assert float(rows["float32"][2]) == pytest.approx(rope_tolerance(x, 10**6, layout="interleaved",
                                                                     dtype=np.float32)[0], rel=1e-2)
    assert float(rows["float32"][2]) == pytest.approx(0.238, rel=1e-2)  # 4 u 10^6 (+ small terms), pair 0


def test_the_off_by_one_estimates_follow_from_the_formula():
    text = (DOCS / "tolerance.rst").read_text()
    u = 2.0**-24
    for c_theta, shown in ((12, "6.5 \\cdot 10^5"), (0, "8.4 \\cdot 10^6")):
        limit = 1 / (2 * (c_theta + 1) * u)
        assert shown in text
        mantissa, exponent = re.match(r"([\d.]+) \\cdot 10\^(\d+)", shown).groups()
        assert float(mantissa) * 10 ** int(exponent) == pytest.approx(limit, rel=0.01)


def test_every_scaling_call_in_the_docs_names_real_parameters():
    calls = []
    for page in DOCS.rglob("*.rst"):
        calls += re.findall(r"``scaling\.(\w+)\(([^`]*)\)``", page.read_text())
    assert len(calls) >= 7
    for name, args in calls:
        params = inspect.signature(getattr(scaling, name)).parameters
        names = list(params)
        for k, arg in enumerate(a.strip() for a in args.split(",") if a.strip() and a.strip() != "..."):
            if "=" in arg:
                assert arg.split("=")[0] in params, f"scaling.{name}: no parameter {arg.split('=')[0]!r}"
            else:
                assert k < len(names) and arg == names[k], f"scaling.{name}: argument {k} is {names[k]!r}, not {arg!r}"


def test_the_scaling_formulas_shown_are_the_code_s():
    """Each formula on the scaling page, evaluated at numbers, equals pemath.rope.inv_freq with that scaling."""
    import sympy as sp

    from pemath import rope
    from pemath.symbolic import scaling as S
    from pemath.symbolic.rope import H, I

    scaling_formulas = _ext("scaling_formulas")
    shown = {name: tex for name, _, _, tex, _ in scaling_formulas.rows()}
    formulas = S.variant_frequencies()
    assert shown == {name: sp.latex(e) for name, e in formulas.items()}
    assert ".. pemath-scaling-formulas::" in (DOCS / "theory" / "scaling.rst").read_text()
    d, base = 64, 10000.0
    f_ext = [1.0 + 0.05 * k for k in range(d // 2)]
    cases = {
        "Linear": ({S.s: 4}, scaling.Linear(4.0), None),
        "NTK": ({S.s: 4}, scaling.NTK(4.0), None),
        "DynamicNTK": ({S.s: 2, S.L0: 4096, S.seq_len: 10000}, scaling.DynamicNTK(2.0, 4096), 10000),
        "Llama3": ({S.s: 8, S.L0: 8192, S.low: 1, S.high: 4}, scaling.Llama3(8.0, 8192), None),
        "Proportional": ({S.s: 1, sp.Symbol("p", nonnegative=True): sp.Rational(1, 4)}, scaling.Proportional(0.25),
                         None),
        "LongRoPE": ({}, scaling.LongRoPE(f_ext, f_ext, 4096, factor=4.0), 100),
    }
    for name, (subs, sc, seq) in cases.items():
        expr = formulas[name].subs({S.b: base, H: d // 2, **subs})

        def at(i, expr=expr):
            e = expr.subs(I, i)  # LongRoPE's f_i: the factor list's entry
            return e.replace(lambda z: isinstance(z, sp.Indexed), lambda z: sp.Float(f_ext[int(z.indices[0])]))

        got = rope.inv_freq(d, base=base, scaling=sc, seq_len=seq)
        want = [float(at(i)) for i in range(d // 2)]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=name)


def test_the_model_table_names_each_rope_models_golden_file():
    from pemath import models
    from pemath.testing import golden

    models_table = _ext("models_table")
    column = models_table.HEADER.index("golden file")
    shown = {row[0].split("``")[1]: row[column] for row in models_table.rows()}
    assert set(shown) == set(models.names())
    for name in models.names():
        if models.get(name).encoding == "rope":
            got = re.fullmatch(r"``v(\d+)/(.+)\.json`` \((\d+) cases?\)", shown[name])
            assert got, shown[name]
            version, file, cases = int(got[1]), got[2], int(got[3])
            assert version == golden.FORMAT_VERSION and file == name
            assert cases == len(golden.load(name, version=version)["cases"]) >= 1
        else:
            assert shown[name] == "(none)" and name not in golden.names()
