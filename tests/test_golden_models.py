"""Format-2 golden vectors: one per registered model, reproduced by their generator, checked by check.py."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import models, rope
from pemath.testing import golden
from pemath.testing.golden import check as C
from pemath.testing.golden import make_models

NAMES = golden.names(2)
CASES = [(n, i) for n in NAMES for i in range(len(golden.load(n, version=2)["cases"]))]


def test_one_file_per_registered_rope_model():
    assert NAMES == models.names(encoding="rope")


def test_files_are_reproduced_by_the_generator(tmp_path):
    written = make_models.write_all(tmp_path)
    assert sorted(p.stem for p in written) == NAMES
    for p in written:
        assert p.read_bytes() == (make_models.OUT / p.name).read_bytes(), p.name


def _rope_spec(doc: dict, case: dict) -> rope.Spec:
    """The Spec of the layers the case stands for (a model that mixes in NoPE layers: the one its RoPE layers share)."""
    if doc.get("nope_layers"):
        specs = {s for s in rope.layers(doc["config"]) if isinstance(s, rope.Spec)}
        assert len(specs) == 1
        return specs.pop()
    return rope.from_hf_config(doc["config"], layer_type=case["layer_type"])


def _pemath(doc: dict, case: dict, dtype=np.float64) -> np.ndarray:
    spec = _rope_spec(doc, case)
    x = np.array(case["x"], dtype=dtype)
    if "position_components" in case:
        pos = np.array(case["position_components"])[:, None, :]  # (3, heads 1, seq)
    else:
        pos = np.array(case["positions"])
    return rope.apply(x, pos, spec=spec, seq_len=case["seq_len"])


@pytest.mark.parametrize("name, i", CASES)
def test_file_is_consistent_and_pemath_agrees(name, i):
    doc = golden.load(name, version=2)
    case = doc["cases"][i]
    assert all(r["ok"] for r in C.check({**doc, "cases": [case]}))  # expected against math.cos/sin
    spec = _rope_spec(doc, case)
    if doc.get("nope_layers"):
        assert doc["nope_layers"] == [i for i, s in enumerate(rope.layers(doc["config"])) if isinstance(s, rope.NoRope)]
    assert case["rope"]["layout"] == spec.layout and case["rope"]["out_layout"] == spec.output_layout
    assert case["inv_freq"] == rope.inv_freq(spec=spec, seq_len=case["seq_len"]).tolist()
    report = C.compare(doc, case, _pemath(doc, case).tolist(), dtype="float64")
    assert report["ok"], C.describe(report)
    f32 = _pemath(doc, case, np.float32).astype(np.float64)  # an honest float32 kernel
    report = C.compare(doc, case, f32.tolist(), dtype="float32")
    assert report["ok"], C.describe(report)


@pytest.mark.parametrize("name, i", CASES)
def test_checker_rejects_a_shifted_position_and_the_wrong_output_layout(name, i):
    doc = golden.load(name, version=2)
    case = doc["cases"][i]
    shifted = dict(case)
    if "position_components" in case:
        shifted["position_components"] = [[p + 1 for p in c] for c in case["position_components"]]
    else:
        shifted["positions"] = [p + 1 for p in case["positions"]]
    bad = _pemath(doc, shifted).tolist()
    assert not C.compare(doc, case, bad, dtype="bfloat16")["ok"]
    r = case["rope"]
    if r["out_layout"] != r["layout"]:
        wrong = rope.convert_layout(np.array(case["expected"]), src=r["out_layout"], dst=r["layout"],
                                    rotary_dim=r["rotary_dim"])
        assert not C.compare(doc, case, wrong.tolist(), dtype="bfloat16")["ok"]
