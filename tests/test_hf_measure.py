"""The RoPE of every layer, measured from each model's own transformers code (recorded probes, replayed).

``tests/fixtures/make_probe_fixtures.py`` ran every registered RoPE model, every model type
of pemath's family table (on its config class's defaults) and the real recent configs of
``tests/fixtures/configs/recent/`` through their transformers code on probes, and recorded
each attention layer's query and key after RoPE. Here the recordings go through
:func:`pemath.rope.hf.measure.measure_probe`, the same code that reads a live
measurement: every table entry must agree with the code on every layer (NoPE layers
included), and every recent config must go in whole, its pemath-only answer (the family
table, or the generic reading with ``layout=``) either refused or equal to what the code
does. ``test_live_*`` (marked ``hf``) run the capture itself where torch and transformers
are installed (CI installs them).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from pemath import models, rope
from pemath.rope.hf import families
from pemath.rope.hf.measure import MeasurementMismatch, check_spec, measure_probe
from pemath.rope.hf.probe import Probe

PROBES = Path(__file__).resolve().parent / "fixtures" / "probes"
RECENT = Path(__file__).resolve().parent / "fixtures" / "configs" / "recent"
MANIFEST = json.loads((PROBES / "hf_probes.json").read_text())
CASES = sorted(MANIFEST["cases"])


@lru_cache(maxsize=None)
def _npz() -> dict[str, np.ndarray]:
    with np.load(PROBES / "hf_probes.npz") as z:
        return {k: z[k] for k in z.files}


def probe(case: str) -> Probe:
    prefix = case + "/"
    arrays = {k[len(prefix):]: v for k, v in _npz().items() if k.startswith(prefix)}
    return Probe.from_npz(arrays, MANIFEST["cases"][case])


@lru_cache(maxsize=None)
def measured(case: str):
    """measure_probe of a recorded case, once per session (the table is not patched here)."""
    return measure_probe(probe(case))


def test_fixture_is_the_recorded_one():
    import hashlib

    assert hashlib.sha256((PROBES / "hf_probes.npz").read_bytes()).hexdigest() == MANIFEST["sha256"]
    total = sum(p.stat().st_size for p in PROBES.iterdir())
    assert total < 3 * 2**20, f"the probe recordings take {total} bytes; keep them under 3 MiB"


@pytest.mark.parametrize("case", CASES)
def test_every_layer_is_measured_and_the_table_agrees(case):
    m = measured(case)  # a table entry that disagrees with the code raises MeasurementMismatch
    if case.startswith("recent/") and m.refusals:  # refused with the reason, never a silent answer
        assert all(len(w) > 40 for w in m.refusals.values())
        with pytest.raises(ValueError, match="cannot give this model's RoPE"):
            m.specs_or_raise()
        return
    assert not m.refusals, m.refusals
    assert len(m.specs) == MANIFEST["cases"][case]["num_layers"]
    assert all(isinstance(s, (rope.Spec, rope.NoRope)) and s.provenance for s in m.specs)
    if case.startswith(("registry/", "defaults/")):
        assert set(m.source.values()) <= {"table", "nope"}, m.source


@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("registry/")])
def test_registered_models_per_layer_equal_the_recorded_code(case):
    """rope.layers of the registered config (no torch) is what the model's code did, layer by layer."""
    name = case.split("/", 1)[1]
    m = measured(case)
    cfg = models.get(name).config
    text = cfg.get("text_config") or cfg
    if text.get("num_hidden_layers") is None:
        cfg = json.loads(json.dumps(cfg))
        (cfg.get("text_config") or cfg)["num_hidden_layers"] = len(m.specs)
    assert rope.layers(cfg) == m.specs


def _alone(case: str) -> str:
    """What pemath answers for a recent config without transformers: "equal" to the code, "refused", or "WRONG"."""
    m = measured(case)
    cfg = json.loads((RECENT / (case.split("/", 1)[1] + ".json")).read_text())
    layouts = {s.layout for s in m.specs if isinstance(s, rope.Spec)} or {"half"}
    layout = None if _in_table(cfg) else sorted(layouts)[0]
    try:
        alone = rope.layers(cfg, layout=layout)  # the table, or the generic reading: transformers is not used
    except ValueError:
        return "refused"  # with its reason: allowed
    return "equal" if alone == m.specs else "WRONG"


@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("recent/")])
def test_recent_configs_go_in_whole_and_pemath_alone_is_never_silently_wrong(case, monkeypatch):
    from pemath.rope.hf import probe as probe_module

    refused = bool(measured(case).refusals)
    monkeypatch.setattr(probe_module, "available", lambda: False)  # pemath on its own
    if refused:  # what the measurement cannot certify, pemath on its own must not answer either
        cfg = json.loads((RECENT / (case.split("/", 1)[1] + ".json")).read_text())
        for layout in ("half", "interleaved"):
            with pytest.raises(ValueError):
                rope.layers(cfg, layout=None if _in_table(cfg) else layout)
        return
    assert _alone(case) != "WRONG", f"{case}: pemath without transformers answered differently from the code"


def _in_table(cfg: dict) -> bool:
    text = cfg.get("text_config") or cfg
    return (text.get("model_type") or cfg.get("model_type")) in families.FAMILIES


def test_coverage_figures(capsys):
    """The figures quoted in the issue notes (run with -s to see them)."""
    groups: dict[str, list] = {}
    for case in CASES:
        groups.setdefault(case.split("/")[0], []).append(case)
    lines = []
    for group, cases in sorted(groups.items()):
        nope = layers = 0
        sources: dict[str, int] = {}
        whole = [c for c in cases if not measured(c).refusals]
        refused = sorted(set(cases) - set(whole))
        for c in whole:
            m = measured(c)
            layers += len(m.specs)
            nope += sum(isinstance(s, rope.NoRope) for s in m.specs)
            for v in m.source.values():
                sources[v] = sources.get(v, 0) + 1
        missing = sorted(k for k in MANIFEST["not_recorded"] if k.startswith(group + "/"))
        lines.append(f"{group}: {len(whole)} configs measured whole ({layers} layers, {nope} without RoPE; layer "
                     f"answers by source {sources}); measured and refused: {len(refused)} {refused}; not measurable: "
                     f"{len(missing)} {missing}")
        groups[group] = whole
    from pemath.rope.hf import probe as probe_module

    real = probe_module.available
    probe_module.available = lambda: False
    try:
        alone = [_alone(c) for c in groups["recent"]]
    finally:
        probe_module.available = real
    lines.append(f"recent configs, pemath without transformers (family table or layout=): "
                 f"{alone.count('equal')} equal to the code on every layer, {alone.count('refused')} refused with "
                 f"the reason, {alone.count('WRONG')} silently different")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert alone.count("WRONG") == 0
    assert len(groups["recent"]) >= 15


# ------------------------------------------------------------------ the measurement can fail


def test_a_wrong_table_entry_is_an_error_naming_both(monkeypatch):
    case = "registry/smollm3-3b"
    fam = families.FAMILIES["smollm3"]
    monkeypatch.setitem(families.FAMILIES, "smollm3", families.Family(fam.layout, default_theta=fam.default_theta))
    with pytest.raises(MeasurementMismatch, match=r"layer 3: pemath's family table gives Spec.*disagrees: query at position 1.*turned by 0 rad"):
        measure_probe(probe(case))
    monkeypatch.setitem(families.FAMILIES, "smollm3", families.Family("interleaved", rope_layers="no_rope_layers"))
    with pytest.raises(MeasurementMismatch, match=r"layer 0: .*layout='interleaved'.*disagrees: query"):
        measure_probe(probe(case))


def test_a_tampered_recording_is_not_explained_by_the_table():
    p = probe("registry/llama-3.1-8b")
    q = p.query[0][0].copy()
    q[:, 1, :, :] = q[:, 2, :, :]  # position 1 recorded as if it were position 2
    p.query[0] = {**p.query[0], 0: q}
    with pytest.raises(MeasurementMismatch, match="position 1"):
        measure_probe(p)


def test_check_spec_decides_both_ways():
    p = probe("registry/qwen2.5-7b-instruct")
    qs = [p.query[s][0] for s in range(len(p.positions))]
    ks = [p.key[s][0] for s in range(len(p.positions))]
    good = models.get("qwen2.5-7b-instruct").spec()
    assert check_spec(good, qs, ks, p.positions, [None] * len(qs)) is None
    assert "pair" in check_spec(good.replace(base=good.base * 1.001), qs, ks, p.positions, [None] * len(qs))
    assert "rotates" in check_spec(rope.NoRope(good.head_dim), qs, ks, p.positions, [None] * len(qs))
    assert "attention factor" in check_spec(good, qs, ks, p.positions, [1.5] * len(qs))


def test_probe_round_trip_keeps_every_array():
    p = probe("recent/olmo-3.1-32b-instruct")
    arrays, meta = p.to_npz()
    back = Probe.from_npz(arrays, meta)
    for s in range(len(p.positions)):
        assert sorted(back.query[s]) == sorted(p.query[s])
        for i in p.query[s]:
            assert np.array_equal(back.query[s][i], p.query[s][i]) and np.array_equal(back.key[s][i], p.key[s][i])


# ------------------------------------------------------------------ live: the capture itself


@pytest.mark.hf
@pytest.mark.parametrize("case", ["registry/smollm3-3b", "registry/llama-3.1-8b", "recent/olmo-3.1-32b-instruct",
                                  "recent/qwen3-next-80b-a3b-thinking", "defaults/cohere2"])
def test_live_measurement_equals_the_recording(case):
    pytest.importorskip("transformers")
    from pemath.rope.hf.measure import measure

    recorded = measure_probe(probe(case))
    live = measure(MANIFEST["cases"][case]["config"])
    assert live.specs == recorded.specs
    assert live.source == recorded.source


@pytest.mark.hf
def test_live_unknown_model_type_is_measured_by_from_hf_config():
    pytest.importorskip("transformers")
    cfg = json.loads((RECENT / "exaone-4.0-32b.json").read_text())
    specs = rope.layers(cfg)
    assert [i for i, s in enumerate(specs) if isinstance(s, rope.NoRope)] == list(range(3, 64, 4))
    assert all("measured from transformers" in s.provenance for s in specs)
    with pytest.raises(ValueError, match="layers differ"):
        rope.from_hf_config(cfg)
    assert isinstance(rope.from_hf_config(cfg, layer=3), rope.NoRope)


# ------------------------------------------------------------------ the reading itself, on synthetic probes


def _synthetic(spec: rope.Spec, hf_config: dict, *, nope_layer: bool = True, sign: float = 1.0,
               amplitude: float = 1.0) -> Probe:
    """A probe whose layer 0 is ``spec`` applied by pemath itself (positions times ``sign``), layer 1 still."""
    positions = [[0, 1, 2, 100, 8191], [0, 1, 2, 100, 8192]]
    x = np.random.default_rng(7).standard_normal((1, 1, 1, spec.head_dim))
    query, key = [], []
    for pos in positions:
        p = np.asarray(pos, dtype=np.float64)
        q = np.stack([np.asarray(rope.apply(x[0, 0, 0], sign * v, spec=spec, seq_len=max(pos) + 1)) for v in p])
        q = q[None, :, None, :].astype(np.float32).astype(np.float64)
        still = np.broadcast_to(x, (1, len(pos), 1, spec.head_dim)).copy()
        query.append({0: q, **({1: still} if nope_layer else {})})
        key.append({0: q, **({1: still} if nope_layer else {})})
    return Probe(config={"model_type": "synthetic_rope", **hf_config}, hf_config=hf_config,
                 model_type="synthetic_rope", num_layers=2 if nope_layer else 1, positions=positions, query=query,
                 key=key, attention_modules={0: ["SyntheticAttention"], 1: ["SyntheticAttention"]},
                 rotary=[{"rotary_emb|": amplitude}] * 2, provenance="synthetic", seconds=0.0,
                 rotary_classes=["SyntheticRotaryEmbedding"])


LLAMA3_12M = {"hidden_size": 256, "num_attention_heads": 2, "max_position_embeddings": 65536,
              "rope_parameters": {"rope_type": "llama3", "rope_theta": 12e6, "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}


def test_the_reading_finds_every_rotated_pair_even_those_still_at_position_1():
    """Base 12e6 with Llama 3 scaling: the last pairs turn by less than a float32 unit at position 1 (a reading at
    position 1 alone took 124 rotated features and the wrong pairing)."""
    spec = rope.from_hf({**LLAMA3_12M["rope_parameters"]}, head_dim=128, layout="half", max_position_embeddings=65536)
    m = measure_probe(_synthetic(spec, LLAMA3_12M))
    assert not m.refusals
    assert m.specs[0] == spec and m.source[0] == "generic"
    assert isinstance(m.specs[1], rope.NoRope) and m.source[1] == "nope"
    assert m.readings[0].rotary_dim == 128 and m.readings[0].layout == "half"


def test_what_no_spec_expresses_is_refused_with_what_did_not_fit():
    spec = rope.from_hf({**LLAMA3_12M["rope_parameters"]}, head_dim=128, layout="half", max_position_embeddings=65536)
    backwards = measure_probe(_synthetic(spec, LLAMA3_12M, sign=-1.0))  # a code that turns the other way
    assert backwards.specs[0] is None and "pair 0 turned by" in backwards.refusals[0]
    with pytest.raises(ValueError, match="cannot give this model's RoPE"):
        backwards.specs_or_raise()
    scaled = measure_probe(_synthetic(spec, LLAMA3_12M, amplitude=1.25))  # a rotary module with another factor
    assert scaled.specs[0] is None and "attention factor" in scaled.refusals[0]


def test_a_model_whose_positions_never_move_anything_is_not_called_nope():
    spec = rope.Spec("half", base=1e4, head_dim=64)
    p = _synthetic(spec, {"hidden_size": 128, "num_attention_heads": 2, "rope_parameters": {"rope_theta": 1e4}})
    for s in range(len(p.positions)):
        p.query[s][0] = p.query[s][1]
        p.key[s][0] = p.key[s][1]
    m = measure_probe(p)
    assert all(s is None for s in m.specs) and "does not conclude" in m.refusals[0]


def test_a_new_model_type_over_a_checked_class_is_read_by_the_table():
    """Kimi K2 ships model_type kimi_k2 and runs DeepseekV3's code: the table's DeepSeek-V3 entry (interleaved in,
    half out, the softmax scale), which the probe alone cannot see, checked against the recording."""
    m = measured("recent/kimi-k2-instruct")
    spec = m.specs[0]
    assert set(m.source.values()) == {"table"}
    assert (spec.layout, spec.out_layout) == ("interleaved", "half") and spec.softmax_scale > 1.5


def test_arguments_are_checked_before_anything_is_measured(monkeypatch):
    from pemath.rope.hf import probe as probe_module

    def never(*a, **k):  # a measurement must not start
        raise AssertionError("measured")

    from pemath.rope.hf import measure as measure_module

    monkeypatch.setattr(probe_module, "available", lambda: True)
    monkeypatch.setattr(measure_module, "run_probe", never)
    cfg = {"model_type": "brand_new", "hidden_size": 256, "num_attention_heads": 2}
    with pytest.raises(ValueError, match="layout"):
        rope.from_hf_config(cfg, layout="bogus")
    with pytest.raises(TypeError, match="layer must be a non-negative int"):
        rope.from_hf_config(cfg, layer=-1)


@pytest.mark.hf
def test_live_a_wrapper_is_measured_from_the_file_as_given():
    """A LLaVA file whose text_config names no model_type: transformers builds a 4-layer Llama at base 1e6 from
    it; the answer must be that model's, not the class defaults of a flattened reading."""
    pytest.importorskip("transformers")
    cfg = {"model_type": "llava", "text_config": {"num_hidden_layers": 4, "rope_theta": 1e6, "hidden_size": 256,
                                                  "num_attention_heads": 4}}
    specs = rope.layers(cfg)
    assert len(specs) == 4 and {s.base for s in specs} == {1e6} and specs[0].head_dim == 64


def test_a_config_the_table_refuses_is_not_answered_around_the_table():
    p = probe("registry/smollm3-3b")
    p.config = {**p.config, "no_rope_layers": [1, 0]}  # not one flag per layer: the table refuses it
    m = measure_probe(p)
    assert all(s is None for s in m.specs) and "family table refuses this config" in m.refusals[0]
