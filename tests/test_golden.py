"""pemath.testing.golden: versioned golden vectors, their generator and the stdlib checker."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pemath import rope
from pemath.testing import golden
from pemath.testing.golden import check as C
from pemath.testing.golden import make_golden

HERE = Path(golden.__file__).resolve().parent
V1 = HERE / "v1"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "peers"
EXPECTED_NAMES = [
    "deepseek-v3",
    "gpt-j-6b",
    "gpt-neox-20b",
    "llama-3.1-8b",
    "phi-3-mini-128k",
    "qwen2-7b",
    "qwen2.5-7b-instruct-yarn",
]


def kwargs_of(doc: dict) -> dict:
    """pemath.rope.apply arguments rebuilt from the file's HF config, as the README says."""
    args = {k: v for k, v in doc["from_hf"].items() if k != "rope_parameters"}
    spec = rope.from_hf(doc["hf_config"].get("rope_scaling"), layout=doc["rope"]["layout"], **args)
    return {"layout": spec.layout, "base": spec.base, "rotary_dim": spec.rotary_dim, "scaling": spec.scaling}


def all_cases():
    return [(name, i) for name in EXPECTED_NAMES for i in range(len(golden.load(name, version=1)["cases"]))]


# --------------------------------------------------------------------------- files


def test_files_are_reproduced_by_the_generator(tmp_path):
    written = make_golden.write_all(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in V1.glob("*.json"))
    for path in written:
        assert path.read_bytes() == (V1 / path.name).read_bytes(), f"{path.name} differs from the generator's"


def test_files_are_small():
    total = sum(p.stat().st_size for p in V1.glob("*.json"))
    assert total < 200_000, f"{total} bytes"


def test_names_and_load():
    assert golden.names(1) == EXPECTED_NAMES and golden.names() == golden.names(golden.FORMAT_VERSION)
    for name in EXPECTED_NAMES:
        doc = golden.load(name, version=1)
        assert doc["format"] == "pemath.testing.golden.rope" and doc["format_version"] == 1
        assert doc["name"] == name and doc["pemath_version"]
        r, d = doc["rope"]["rotary_dim"], doc["rope"]["head_dim"]
        for case in doc["cases"]:
            assert len(case["inv_freq"]) == len(case["phase_error_units"]) == r // 2
            shape = np.shape(case["x"])
            assert shape == np.shape(case["expected"]) == (2, len(case["positions"]), d)
        long_positions = {p for case in doc["cases"] for p in case["positions"]}
        assert {8191, 65535, 131071} <= long_positions


def test_load_errors():
    with pytest.raises(ValueError, match="name"):
        golden.load("llama-9", version=1)
    with pytest.raises(TypeError, match="name"):
        golden.load(3)
    with pytest.raises(ValueError, match="version"):
        golden.load("qwen2-7b", version=3)
    with pytest.raises(TypeError, match="version"):
        golden.names(version="1")


def test_configs_rebuild_the_recorded_rope():
    for name in EXPECTED_NAMES:
        doc = golden.load(name, version=1)
        kw = kwargs_of(doc)
        assert kw["base"] == doc["rope"]["base"] and kw["rotary_dim"] == doc["rope"]["rotary_dim"]
        a = 1.0 if kw["scaling"] is None else kw["scaling"].attention_factor
        assert a == doc["rope"]["attention_factor"]
        for case in doc["cases"]:
            freq = rope.inv_freq(kw["rotary_dim"], base=kw["base"], scaling=kw["scaling"], seq_len=case["seq_len"])
            assert freq.tolist() == case["inv_freq"]


def test_known_values():
    llama = golden.load("llama-3.1-8b", version=1)["rope"]
    assert llama["base"] == 500000.0
    assert (llama["scaling"]["factor"], llama["scaling"]["original_max_position"]) == (8.0, 8192)
    qwen = golden.load("qwen2.5-7b-instruct-yarn", version=1)["rope"]
    assert qwen["attention_factor"] == pytest.approx(0.1 * np.log(4.0) + 1, rel=1e-15)
    phi = golden.load("phi-3-mini-128k", version=1)
    assert phi["rope"]["attention_factor"] == pytest.approx(np.sqrt(1 + np.log(32) / np.log(4096)), rel=1e-15)
    short, long = phi["cases"]
    # long factors (~1.07 .. 64.8) divide the frequencies more than the short ones (1.1 .. 3.05)
    assert all(lf < sf for lf, sf in zip(long["inv_freq"][1:], short["inv_freq"][1:]))
    assert golden.load("gpt-j-6b", version=1)["rope"]["rotary_dim"] == 64
    assert golden.load("deepseek-v3", version=1)["rope"]["attention_factor"] == 1.0


@pytest.mark.parametrize(
    "name, fixture_case",
    [
        ("llama-3.1-8b", "inv_freq/llama3_llama31_8b"),
        ("qwen2.5-7b-instruct-yarn", "inv_freq/yarn_qwen25_f4"),
        ("deepseek-v3", "inv_freq/yarn_deepseek_v3"),
    ],
)
def test_frequencies_agree_with_recorded_hf(name, fixture_case):
    # HF's float32 frequencies (recorded) are the golden float64 ones within HF's float32 error.
    path = FIXTURES / "hf_rope.npz"
    if not path.exists():
        pytest.skip("fixture hf_rope.npz absent")
    with np.load(path) as z:
        hf = z[fixture_case + "/inv_freq"].astype(np.float64)
        hf_attention = float(z[fixture_case + "/attention_factor"])
    doc = golden.load(name, version=1)
    ours = np.array(doc["cases"][0]["inv_freq"])
    units = np.array(doc["cases"][0]["phase_error_units"])
    assert np.all(np.abs(hf - ours) <= units * 2.0**-24 * ours)
    assert hf_attention == doc["rope"]["attention_factor"]


# --------------------------------------------------------------------------- the stdlib checker


@pytest.mark.parametrize("name, i", all_cases())
def test_checker_accepts_pemath_float64(name, i):
    doc = golden.load(name, version=1)
    case = doc["cases"][i]
    kw = kwargs_of(doc)
    out = rope.apply(np.array(case["x"]), case["positions"], seq_len=case["seq_len"], **kw)
    report = C.compare(doc, case, out.tolist(), dtype="float64")
    assert report["ok"], C.describe(report)
    assert report["worst"]["excess"] < 0.5


@pytest.mark.parametrize("name, i", all_cases())
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_checker_accepts_honest_low_precision_pipelines(name, i, dtype):
    pytest.importorskip("ml_dtypes")
    from pemath.testing import pipelines

    doc = golden.load(name, version=1)
    case = doc["cases"][i]
    kw = kwargs_of(doc)
    x, pos = np.array(case["x"]), np.array(case["positions"])
    if name == "gpt-j-6b":
        out = pipelines.gptj(x, pos, dtype=dtype, rotary_dim=kw["rotary_dim"])
    else:
        out = pipelines.hf(x, pos, dtype=dtype, seq_len=case["seq_len"], **kw)
    report = C.compare(doc, case, out.astype(np.float64).tolist(), dtype=dtype)
    assert report["ok"], C.describe(report)
    assert report["worst"]["excess"] > 0.02  # the bound is not absurdly loose for honest float32 phases


def _bugs(doc, case):
    kw = kwargs_of(doc)
    x, pos = np.array(case["x"]), np.array(case["positions"])
    other = "interleaved" if kw["layout"] == "half" else "half"
    out = {
        "position + 1": rope.apply(x, pos + 1, seq_len=case["seq_len"], **kw),
        "other layout": rope.apply(x, pos, seq_len=case["seq_len"], **{**kw, "layout": other}),
        "inverse rotation": rope.apply(x, pos, seq_len=case["seq_len"], inverse=True, **kw),
        "positions in float16": rope.apply(
            x, np.minimum(pos, 65504).astype(np.float16).astype(np.float64), seq_len=case["seq_len"], **kw
        ),
    }
    if kw["scaling"] is not None:
        out["scaling left out"] = rope.apply(x, pos, **{**kw, "scaling": None})
    return out


@pytest.mark.parametrize("name, i", all_cases())
def test_checker_rejects_buggy_outputs_even_at_bfloat16(name, i):
    doc = golden.load(name, version=1)
    case = doc["cases"][i]
    for bug, out in _bugs(doc, case).items():
        report = C.compare(doc, case, out.tolist(), dtype="bfloat16")
        assert not report["ok"], f"{name}/{case['name']}: {bug} passed: {C.describe(report)}"


def test_checker_rejects_one_perturbed_element_and_names_it():
    doc = golden.load("llama-3.1-8b", version=1)
    case = doc["cases"][0]
    out = [[list(row) for row in head] for head in case["expected"]]
    bound = C.bounds(doc, case, dtype="float32")[1][3][70]
    out[1][3][70] += 3 * bound
    report = C.compare(doc, case, out, dtype="float32")
    assert not report["ok"] and report["mismatches"] == 1
    w = report["worst"]
    assert (w["head"], w["position_index"], w["position"], w["feature"], w["frequency_index"]) == (1, 3, 131071, 70, 6)
    text = C.describe(report)
    assert "FAIL" in text and "position 131071" in text and "frequency index 6" in text
    # pass-through features must be copied exactly
    neox = golden.load("gpt-neox-20b", version=1)
    out = [[list(row) for row in head] for head in neox["cases"][0]["expected"]]
    out[0][0][50] += 1e-12
    report = C.compare(neox, neox["cases"][0], out, dtype="float32")
    assert report["mismatches"] == 1 and "not rotated" in C.describe(report)


def test_checker_validates_its_inputs():
    doc = golden.load("qwen2-7b", version=1)
    with pytest.raises(ValueError, match="shape"):
        C.compare(doc, "default", [[1.0]])
    with pytest.raises(ValueError, match="dtype"):
        C.compare(doc, "default", doc["cases"][0]["expected"], dtype="float8")
    with pytest.raises(ValueError, match="case"):
        C.compare(doc, "long", doc["cases"][0]["expected"])
    with pytest.raises(ValueError, match="format"):
        C.check({"format": "other"})
    phi = golden.load("phi-3-mini-128k", version=1)
    with pytest.raises(ValueError, match="dict by case name"):
        C.check(phi, phi["cases"][0]["expected"])


def test_check_script_uses_only_the_standard_library(tmp_path):
    tree = ast.parse((HERE / "check.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    # ... and runs from a bare copy with no site-packages (-S: no NumPy, no pemath)
    script = tmp_path / "check.py"
    script.write_text((HERE / "check.py").read_text())
    good = subprocess.run([sys.executable, "-S", "-I", str(script), str(V1 / "phi-3-mini-128k.json")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.count(": OK:") == 2
    doc = golden.load("gpt-j-6b", version=1)
    doc["cases"][0]["expected"][0][2][7] += 1e-9
    bad_file = tmp_path / "tampered.json"
    bad_file.write_text(json.dumps(doc))
    bad = subprocess.run([sys.executable, "-S", "-I", str(script), str(bad_file)], capture_output=True, text=True)
    assert bad.returncode == 1 and "FAIL: 1 of 2048" in bad.stdout


def test_check_main_with_actual_outputs(tmp_path, capsys):
    doc = golden.load("gpt-neox-20b", version=1)
    case = doc["cases"][0]
    out = rope.apply(np.array(case["x"]), case["positions"], **kwargs_of(doc)).astype(np.float32)
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"default": out.astype(np.float64).tolist()}))
    assert C.main([str(V1 / "gpt-neox-20b.json"), str(mine), "--dtype", "float32"]) == 0
    assert "OK" in capsys.readouterr().out
    shifted = rope.apply(np.array(case["x"]), np.array(case["positions"]) + 1, **kwargs_of(doc))
    mine.write_text(json.dumps(shifted.tolist()))  # a bare list is fine for a one-case file
    assert C.main([str(V1 / "gpt-neox-20b.json"), str(mine)]) == 1


def test_readme_example_is_fifteen_lines_and_runs(monkeypatch, capsys):
    text = (HERE / "README.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    assert len(code.strip().splitlines()) <= 15
    monkeypatch.chdir(V1)
    exec(compile(code, "README.md", "exec"), {})
    worst = float(re.search(r"max \|difference\| = (\S+)", capsys.readouterr().out).group(1))
    assert 0 < worst < 1e-9
