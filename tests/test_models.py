"""The model registry against each model's own transformers code (recorded fixtures, no torch needed).

``tests/fixtures/make_model_fixtures.py`` recorded, for every registered RoPE model whose
modeling code is in transformers, the model's rotary-embedding class and apply function
on seeded float32 inputs, in every regime its config has and for every RoPE layer type.
Here ``rope.from_hf_config`` of the same config.json keys must reproduce them within
pemath's derived float32 tolerance, and a wrong spec (the other layout, positions off
by one) must not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pemath import models, rope
from pemath.testing import assert_rope_close, rope_tolerance

PEERS = Path(__file__).resolve().parent / "fixtures" / "peers"
MANIFEST = json.loads((PEERS / "hf_models.json").read_text())
CASES = sorted(MANIFEST["cases"])


def _arrays(case: str) -> dict[str, np.ndarray]:
    with np.load(PEERS / "hf_models.npz") as z:
        return {k[len(case) + 1:]: z[k] for k in z.files if k.startswith(case + "/") and
                "/" not in k[len(case) + 1:]}


def _positions(params: dict, pid: np.ndarray, component: int | None = None) -> np.ndarray:
    """HF's position_ids broadcast as pemath.rope.apply takes them (see from_hf_config's contract)."""
    if params["position_ids"].startswith("mrope"):
        if component is not None:
            return pid[component][:, None, :]
        return pid[:, :, None, :]  # (3, batch, seq) -> (3, batch, 1, seq) against (batch, heads, seq, dim)
    return pid[:, None, :] if params["x_layout"] == "bhsd" else pid[:, :, None]


def _spec(params: dict) -> rope.Spec:
    """The Spec of the layers the recording stands for: the recorder ran the rotary class and apply function,
    which is what every RoPE layer does (a model that mixes in NoPE layers: layer 0, a RoPE layer in all)."""
    try:
        spec = rope.from_hf_config(params["config"], layer_type=params["layer_type"])
    except ValueError as exc:
        if "mixes RoPE and NoPE" not in str(exc):
            raise
        spec = rope.from_hf_config(params["config"], layer=0)
        assert isinstance(spec, rope.Spec)
        if params["model"] in models.names():
            assert models.get(params["model"]).layers()[0] == spec
        return spec
    if params["model"] in models.names():
        assert models.get(params["model"]).spec(params["layer_type"]) == spec
    return spec


def _check(params: dict, a: dict[str, np.ndarray], spec: rope.Spec, positions_shift: int = 0) -> None:
    x, pid, out = a["x"], a["position_ids"] + positions_shift, a["out"]
    seq_len = params["seq_len"]
    if spec.out_layout is not None:  # DeepSeek-V3: interleaved in, half-split out
        r = spec.rotary_dim
        y = rope.apply(x, _positions(params, pid), spec=spec, seq_len=seq_len)
        inner = spec.replace(out_layout=None)
        back = rope.convert_layout(out, src=spec.out_layout, dst=spec.layout, rotary_dim=r)
        assert_rope_close(back, x, _positions(params, pid), spec=inner, seq_len=seq_len)
        tol = rope_tolerance(x, _positions(params, pid), spec=inner, seq_len=seq_len)
        tol = rope.convert_layout(tol, src=spec.layout, dst=spec.out_layout, rotary_dim=r)
        assert np.all(np.abs(y - out) <= tol)
        return
    if spec.is_multi_axis:
        plain = spec.replace(mrope_section=None, mrope_interleaved=False)
        expected = rope.apply(x.astype(np.float64), _positions(params, pid), spec=spec, seq_len=seq_len)
        tol = np.max([rope_tolerance(x, _positions(params, pid, c), spec=plain, seq_len=seq_len)
                      for c in range(pid.shape[0])], axis=0)
        err = np.abs(out.astype(np.float64) - expected)
        assert np.all(err <= tol), f"M-RoPE: worst error {err.max():.3g}, {int(np.sum(err > tol))} elements over"
        if params["variant"] == "text":  # text tokens: M-RoPE is the plain RoPE of the shared position
            assert_rope_close(out, x, _positions(params, pid, 0), spec=plain, seq_len=seq_len)
        return
    assert_rope_close(out, x, _positions(params, pid), spec=spec, seq_len=seq_len)


@pytest.mark.parametrize("case", CASES)
def test_registry_spec_reproduces_the_models_own_hf_code(case):
    params = MANIFEST["cases"][case]
    _check(params, _arrays(case), _spec(params))


@pytest.mark.parametrize("case", CASES)
def test_a_wrong_spec_is_caught(case):
    """The comparison discriminates: the other layout, or positions shifted by one, fail it."""
    params = MANIFEST["cases"][case]
    a = _arrays(case)
    spec = _spec(params)
    other = "half" if spec.layout == "interleaved" else "interleaved"
    with pytest.raises(AssertionError):
        _check(params, a, spec.replace(layout=other))
    with pytest.raises(AssertionError):
        _check(params, a, spec, positions_shift=1)


def test_fixture_is_the_recorded_one():
    import hashlib

    assert hashlib.sha256((PEERS / "hf_models.npz").read_bytes()).hexdigest() == MANIFEST["sha256"]


def test_every_registered_rope_model_is_recorded_or_explained():
    recorded = {p["model"] for p in MANIFEST["cases"].values()}
    rope_models = set(models.names(encoding="rope"))
    missing = rope_models - recorded - set(MANIFEST["not_recorded"])
    assert not missing, f"registered RoPE models with neither a recording nor a reason: {sorted(missing)}"
    assert set(MANIFEST["not_recorded"]) <= rope_models


def test_coverage_figures(capsys):
    """The figures quoted in the notes: printed here (run with -rP or -s to see them)."""
    names = models.names()
    cases = MANIFEST["cases"]
    recorded = {p["model"] for p in cases.values()}
    regimes = sorted({p["regime"] for p in cases.values()})
    layer_types = sorted({p["layer_type"] for p in cases.values() if p["layer_type"]})
    by = {e: len(models.names(encoding=e)) for e in ("rope", "alibi", "t5")}
    reconstructed = sum(models.get(n).reconstructed for n in names)
    lines = [
        f"models registered: {len(names)} ({by['rope']} RoPE, {by['alibi']} ALiBi, {by['t5']} T5; "
        f"{reconstructed} reconstructed, {len(names) - reconstructed} read from a copy of the file)",
        f"configs matched against recorded HF output: {len(recorded & set(names))} registered RoPE models, "
        f"{sum(r.startswith('defaults-') for r in recorded)} model types on a config.json without rope keys "
        f"(the class defaults), {len(recorded - set(names)) - sum(r.startswith('defaults-') for r in recorded)} "
        f"test-only configs (PhiMoE, dynamic NTK); {len(cases)} recorded cases",
        f"regimes covered: {', '.join(regimes)}; layer types: {', '.join(layer_types)}; M-RoPE cases: "
        f"{sum(p['position_ids'].startswith('mrope') for p in cases.values())}",
        f"not recorded: {MANIFEST['not_recorded']}",
        f"recorded with: {MANIFEST['versions']}",
    ]
    print("\n".join(lines))
    assert len(names) >= 40 and by["rope"] >= 40
    assert {"short", "long", "default"} <= set(regimes)


def test_config_class_defaults_where_the_file_is_silent():
    """What a config.json leaves out is the model class's default, as transformers reads it."""
    gemma = {"model_type": "gemma3_text", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 1e6,
             "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert rope.from_hf_config(gemma, layer_type="sliding_attention") == rope.Spec("half", base=1e4, head_dim=256)
    assert rope.from_hf_config(gemma, layer_type="full_attention").scaling is not None
    with pytest.raises(ValueError, match="rope_local_base_freq'] is null"):
        rope.from_hf_config({**gemma, "rope_local_base_freq": None}, layer_type="full_attention")
    bert = {"model_type": "modernbert", "hidden_size": 768, "num_attention_heads": 12}
    assert rope.from_hf_config(bert, layer_type="full_attention").base == 160000.0
    gptj = {"model_type": "gptj", "n_embd": 4096, "n_head": 16}
    assert rope.from_hf_config(gptj).rotary_dim == 64
    assert rope.from_hf_config({**gptj, "rotary_dim": None}).rotary_dim == 256
    with pytest.raises(ValueError, match="fixes RoPE's base at 10000"):
        rope.from_hf_config({**gptj, "rope_theta": 5e5})
    # every default of pemath's table is checked against the model's own code (the defaults-* recordings)
    recorded = {p["model"] for p in MANIFEST["cases"].values()}
    assert sum(name.startswith("defaults-") for name in recorded) >= 30


def test_what_the_model_code_does_whatever_the_file_says():
    neox = {"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4}
    with pytest.raises(ValueError, match=r"config\['rope_theta'\] is set, but model_type 'gpt_neox'"):
        rope.from_hf_config({**neox, "rope_theta": 5e5})
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        rope.from_hf_config({**neox, "partial_rotary_factor": 0.5})
    assert rope.from_hf_config({**neox, "rotary_emb_base": 5e5, "rotary_pct": 0.5}).rotary_dim == 32
    vl3 = {"model_type": "qwen3_vl", "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 512,
                                                     "num_attention_heads": 4, "head_dim": 128}}
    spec = rope.from_hf_config(vl3)
    assert spec.mrope_section == (24, 20, 20) and spec.mrope_interleaved  # the code's, though the file is silent
    vl2 = rope.from_hf_config({"model_type": "qwen2_vl", "hidden_size": 512, "num_attention_heads": 4})
    assert vl2.mrope_section == (16, 24, 24) and not vl2.mrope_interleaved
