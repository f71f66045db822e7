"""The testing docs stay true: the page's code runs, its sample message is what the oracle prints,
and the constants of the tolerance page are the code's."""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

# The page's long-position example reaches 10**6, where a few elements' derived tolerance admits every
# value (pemath.VacuousToleranceWarning, tested in tests/test_precision_guard.py); not what this file examines.
pytestmark = pytest.mark.filterwarnings("ignore::pemath.VacuousToleranceWarning")

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGE = DOCS / "testing_your_kernel.rst"
TOLERANCE = DOCS / "tolerance.rst"


def blocks(path: Path, language: str) -> list[str]:
    """The bodies of the ``.. code-block:: <language>`` directives of a reST file, dedented."""
    text = path.read_text()
    found = re.findall(rf"^\.\. code-block:: {language}\n\n((?:(?:    .*)?\n)+)", text, re.M)
    return [textwrap.dedent(b).strip("\n") + "\n" for b in found]


def test_the_page_has_its_five_lines():
    code = blocks(PAGE, "python")
    five = [ln for ln in code[1].splitlines() if ln.strip()]
    assert len(five) == 5 and five[-1].startswith("assert_rope_close(")


def test_every_python_block_of_the_page_runs(capsys):
    namespace: dict = {}
    for i, code in enumerate(blocks(PAGE, "python")):
        if "import torch" in code and importlib.util.find_spec("torch") is None:
            continue  # the torch example is self-contained
        exec(compile(code, f"{PAGE.name}[block {i}]", "exec"), namespace)
    printed = capsys.readouterr().out
    # the sample failure message on the page is the one the code printed (lines that do not depend
    # on the platform's float32 cos and sin)
    sample = blocks(PAGE, "text")[0].splitlines()
    for prefix in ("RoPE output differs", "Measured from the output:", "Mismatches at positions",
                   "Mismatched rows at:", "Tolerance:", "Diagnosis:"):
        line = next(ln for ln in sample if ln.startswith(prefix))
        assert line in printed.splitlines(), f"the page shows {line!r}; the oracle printed:\n{printed}"
    assert namespace["message"].splitlines()[-1] == sample[-1]


def test_the_page_claim_about_a_fixed_tolerance_holds():
    namespace: dict = {}
    exec(blocks(PAGE, "python")[0], namespace)
    np = namespace["np"]
    from pemath.testing import assert_rope_close

    x = np.random.default_rng(0).standard_normal((1, 2, 256, 128)).astype(np.float32)
    positions = np.arange(256)
    with pytest.raises(AssertionError, match=r"abs error 3.19\d*e-05, .*\n  position 227,"):
        assert_rope_close(namespace["my_rope"](x, positions), x, positions, layout="half", rtol=1e-5, atol=1e-5)


def test_the_tolerance_page_states_the_code_constants():
    from pemath.testing._core import tolerance as t
    from pemath.testing._tables import tolerance as tables

    text = TOLERANCE.read_text()
    assert (t.SAFETY, t.C_FREQ, t.C_TRIG, t.C_ATTENTION, t.C_OUTPUT, tables.C_SLOPE) == (2.0, 10.0, 2.0, 2.0, 3.0, 10.0)
    for fragment in (r"\sigma = 2", r"C_\theta = 3 e_i \ln b + e_i + 10", r"(2 + 2[a \ne 1])\, u + 3 u_T",
                     r"\left( 10 u + u_T \right)"):
        assert fragment in text, fragment
    assert r"\sigma = 2" in (t.__doc__ or "")


def test_the_conformance_table_on_the_page_is_what_check_rope_kernel_prints(capsys):
    pytest.importorskip("ml_dtypes")
    namespace: dict = {}
    code = blocks(PAGE, "python")
    exec(compile(code[0], f"{PAGE.name}[block 0]", "exec"), namespace)
    block = next(b for b in code if "check_rope_kernel(" in b)
    capsys.readouterr()
    exec(compile(block, f"{PAGE.name}[check_rope_kernel]", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    table = next(b for b in blocks(PAGE, "text") if b.startswith("RoPE kernel conformance"))
    assert printed == table.splitlines()


def test_the_multi_axis_example_prints_what_the_page_says(capsys):
    namespace: dict = {}
    code = blocks(PAGE, "python")
    for i in (0, 1):  # my_rope, then the imports and assert_rope_close
        exec(compile(code[i], f"{PAGE.name}[block {i}]", "exec"), namespace)
    block = next(b for b in code if "mrope_section=[12, 10, 10]" in b)
    exec(compile("from pemath import rope\n" + block, f"{PAGE.name}[M-RoPE]", "exec"), namespace)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    text = " ".join(PAGE.read_text().split("prints ``Diagnosis:", 1)[1].split("``.", 1)[0].split())
    assert printed == "Diagnosis:" + (" " + text if not text.startswith(" ") else text)


def test_the_xpos_example_prints_what_the_page_says(capsys):
    namespace: dict = {}
    code = blocks(PAGE, "python")
    exec(compile(code[0], f"{PAGE.name}[block 0]", "exec"), namespace)
    block = next(b for b in code if "assert_xpos_close" in b)
    capsys.readouterr()
    exec(compile(block, f"{PAGE.name}[xPos]", "exec"), namespace)
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    after = PAGE.read_text().split("assert_xpos_close(wrong_base", 1)[1]
    text = " ".join(after.split("prints ``Diagnosis:", 1)[1].split("``.", 1)[0].split())
    assert printed == "Diagnosis: " + text


def test_the_constants_of_the_new_tolerance_sections_are_the_codes():
    """xPos's C_zeta and scale constant, the float32 grid's C_grid and the recurrence's C_s, as the page shows them."""
    from pemath.testing._core import tolerance as _tolerance
    from pemath.testing._rope import xpos as _xpos

    text = TOLERANCE.read_text()
    assert _xpos.C_ZETA == 6 and r":math:`C_\zeta = 6`" in text
    assert _xpos.C_SCALE == 12 and r"\big(12 + |e|\,(C_\zeta + 2 |\ln \zeta_i|)\big)" in text
    assert _tolerance.C_GRID == 7 and r"C_{\text{grid}} = 7" in text
    assert _tolerance.C_SCALE_POW == 8 and r"C_s = e_1 (\ln b + 1) + 8" in text
    # the recurrence's constants: i (C_s + 1) per pair
    c = _tolerance.recurrence_constants(512, 10_000.0)
    e1 = 2 / 512
    assert c[255] == pytest.approx(255 * (e1 * (np.log(10_000.0) + 1) + 8 + 1))
    assert 2200 < c[255] < 2400  # "about 2300 u at the last pair of d_r = 512"


def test_the_gpu_form_and_output_floor_constants_are_the_codes():
    from pemath.testing._core import tolerance as t
    from pemath.testing._rope import honest

    text = TOLERANCE.read_text()
    assert honest._C_GPU_POW == 4 and "(CUDA's: 2 ulp, :math:`C_\\theta = 4`)" in text
    assert t.output_floor(2.0**-11) == 2 * 1.5 * 2.0**-24 and r"\sigma \cdot 1.5\,\eta_T" in text
    assert "(float16: :math:`2^{-24}`)" in text
