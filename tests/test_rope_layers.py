"""RoPE per layer: NoRope in every API that takes a spec, rope.layers, and transformers' length semantics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import models, rope, scaling
from pemath.testing import assert_rope_close

SMOL = models.get("smollm3-3b")
LLAMA4 = models.get("llama-4-scout-17b-16e")
COHERE2 = {"model_type": "cohere2", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 8,
           "rope_theta": 50000.0, "position_embedding_type": "rope_gptj", "sliding_window_pattern": 4}


# ------------------------------------------------------------------ NoRope in the numeric API


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 9), st.integers(-1000, 10**6))
def test_a_nope_layer_returns_x_unchanged(rows, pairs, p0):
    x = np.random.default_rng(rows * 31 + pairs).standard_normal((rows, 2 * pairs)).astype(np.float32)
    pos = p0 + np.arange(rows)
    y = rope.apply(x, pos, spec=rope.NoRope(2 * pairs))
    assert y.dtype == x.dtype and np.array_equal(y, x) and y is not x
    out = np.empty_like(x)
    assert rope.apply(x, pos, spec=rope.NoRope(), out=out) is out and np.array_equal(out, x)
    assert_rope_close(y, x, pos, spec=rope.NoRope(2 * pairs))


def test_nope_refuses_what_it_cannot_mean():
    x = np.zeros((2, 8))
    with pytest.raises(TypeError, match="layout"):
        rope.apply(x, [0, 1], spec=rope.NoRope(8), layout="half")
    with pytest.raises(ValueError, match="head_dim is 16"):
        rope.apply(x, [0, 1], spec=rope.NoRope(16))
    with pytest.raises(ValueError, match="positions|broadcast"):
        rope.apply(x, [0, 1, 2], spec=rope.NoRope(8))
    for call in (lambda: rope.inv_freq(spec=rope.NoRope(8)), lambda: rope.cos_sin([0, 1], spec=rope.NoRope(8)),
                 lambda: rope.matrix(3, 8, spec=rope.NoRope(8))):
        with pytest.raises(ValueError, match="applies no RoPE"):
            call()
    with pytest.raises(TypeError, match="head_dim"):
        rope.NoRope("8")
    with pytest.raises(TypeError, match="reason"):
        rope.NoRope(8, reason=3)


def test_the_oracle_names_a_rotation_applied_to_a_nope_layer():
    x = np.random.default_rng(1).standard_normal((2, 8, 64)).astype(np.float32)
    pos = np.arange(8)
    nope = rope.NoRope(64, reason="layer 3 of SmolLM3")
    with pytest.raises(AssertionError) as err:
        assert_rope_close(rope.apply(x, pos, layout="half"), x, pos, spec=nope)
    msg = str(err.value)
    assert "layer 3 of SmolLM3" in msg and "half pairs" in msg and "applied RoPE on a layer" in msg
    with pytest.raises(AssertionError, match=r"x times 1\.5"):
        assert_rope_close(x * np.float32(1.5), x, pos, spec=nope)
    nudged = x.copy()
    nudged[0, 0, 0] = np.nextafter(nudged[0, 0, 0], np.float32(np.inf))
    with pytest.raises(AssertionError, match="1 of 1024 elements differ"):
        assert_rope_close(nudged, x, pos, spec=nope)
    assert_rope_close(nudged, x, pos, spec=nope, rtol=1e-6, atol=0.0)  # a tolerance the user chose


# ------------------------------------------------------------------ layers of a config


def test_smollm3_every_fourth_layer_is_nope():
    specs = SMOL.layers()
    assert len(specs) == 36
    nope = [i for i, s in enumerate(specs) if isinstance(s, rope.NoRope)]
    assert nope == list(range(3, 36, 4)) == list(SMOL.nope_layers)
    assert len({s for s in specs if isinstance(s, rope.Spec)}) == 1
    assert rope.from_hf_config(SMOL.config, layer=3) == specs[3]
    assert rope.from_hf_config(SMOL.config, layer=0) == specs[0] == SMOL.rope_spec()
    with pytest.raises(ValueError, match=r"layers \[3, 7, 11.*apply no RoPE.*pass layer="):
        rope.from_hf_config(SMOL.config)


def test_llama4_nope_layers_follow_the_interval_when_the_list_is_absent():
    cfg = LLAMA4.config
    text = cfg["text_config"]
    assert [i for i, s in enumerate(rope.layers(cfg)) if isinstance(s, rope.NoRope)] == list(range(3, 48, 4))
    text.pop("no_rope_layers", None)
    text["no_rope_layer_interval"] = 3
    assert [i for i, s in enumerate(rope.layers(cfg)) if isinstance(s, rope.NoRope)] == list(range(2, 48, 3))
    assert "attn_temperature_tuning" in rope.layers(cfg)[2].reason  # beyond RoPE, said, not applied
    text["attn_temperature_tuning"] = False
    assert "temperature" not in rope.layers(cfg)[2].reason
    text["no_rope_layers"] = [1] * 47
    with pytest.raises(ValueError, match="no_rope_layers.*48 flags"):
        rope.layers(cfg)


def test_cohere2_global_layers_are_nope_and_its_rope_gptj_key_is_rope():
    specs = rope.layers(COHERE2)
    assert [isinstance(s, rope.NoRope) for s in specs] == [False, False, False, True] * 2
    assert specs[0].layout == "interleaved" and specs[0].base == 50000.0
    assert isinstance(rope.from_hf_config(COHERE2, layer_type="full_attention"), rope.NoRope)
    assert rope.from_hf_config(COHERE2, layer_type="sliding_attention") == specs[0]
    bad = {**COHERE2, "position_embedding_type": "absolute"}
    with pytest.raises(ValueError, match="does not use RoPE"):
        rope.from_hf_config(bad, layer=0)


def test_gemma3_layers_follow_its_pattern():
    specs = models.get("gemma-3-4b-it").layers()
    full = [i for i, s in enumerate(specs) if s.scaling is not None]
    assert full == list(range(5, 34, 6))


def test_layer_argument_is_checked():
    for bad, exc in ((-1, TypeError), (True, TypeError), ("0", TypeError), (1.0, TypeError)):
        with pytest.raises(exc, match="layer"):
            rope.from_hf_config(SMOL.config, layer=bad)
    with pytest.raises(ValueError, match=r"layer must be an int in \[0, 36\)"):
        rope.from_hf_config(SMOL.config, layer=36)
    with pytest.raises(TypeError, match="not both"):
        rope.from_hf_config(SMOL.config, layer=0, layer_type="full_attention")
    cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5e5}
    with pytest.raises(ValueError, match="num_hidden_layers"):
        rope.layers(cfg)  # the registered keys leave the layer count out: pemath does not guess it
    assert rope.from_hf_config(cfg, layer=5) == rope.from_hf_config(cfg)


# ------------------------------------------------------------------ transformers' length semantics


def test_seq_len_none_is_the_forward_length_for_dynamic_ntk_and_longrope():
    x = np.random.default_rng(2).standard_normal((6, 16))
    dyn = rope.Spec("half", base=1e4, scaling=scaling.DynamicNTK(4.0, 64))
    pos = np.array([0, 1, 5, 63, 64, 300])
    assert np.array_equal(rope.apply(x, pos, spec=dyn), rope.apply(x, pos, spec=dyn, seq_len=301))
    assert not np.array_equal(rope.apply(x, pos, spec=dyn), rope.apply(x, pos, spec=dyn, seq_len=64))
    c1, s1 = rope.cos_sin(pos, 16, spec=dyn)
    c2, s2 = rope.cos_sin(pos, 16, spec=dyn, seq_len=301)
    assert np.array_equal(c1, c2) and np.array_equal(s1, s2)
    lr = rope.Spec("half", base=1e4, scaling=scaling.LongRoPE(np.ones(8), np.full(8, 4.0), 64, factor=2.0))
    y = rope.apply(x, pos, spec=lr)  # past 64: the long factors, as transformers' forward
    assert np.array_equal(y, rope.apply(x, pos, spec=lr, seq_len=301))
    assert_rope_close(y.astype(np.float32), x.astype(np.float32), pos, spec=lr)
    with pytest.raises(AssertionError):  # an engine that keeps the short regime is told so
        assert_rope_close(rope.apply(x, pos, spec=lr, seq_len=64).astype(np.float32), x.astype(np.float32), pos,
                          spec=lr)
    assert_rope_close(rope.apply(x, pos, spec=lr, seq_len=64).astype(np.float32), x.astype(np.float32), pos,
                      spec=lr, seq_len=64)  # ... and passes where the engine's length is given


def test_seq_len_none_leaves_length_free_scalings_alone():
    x = np.random.default_rng(3).standard_normal((3, 8))
    spec = rope.Spec("half", base=1e4, scaling=scaling.YaRN(4.0, 64))
    assert np.array_equal(rope.apply(x, [0, 1, 500], spec=spec), rope.apply(x, [0, 1, 500], spec=spec, seq_len=2))


def test_a_snapshot_directory_is_a_config_path(tmp_path):
    import json

    (tmp_path / "config.json").write_text(json.dumps(SMOL.config))
    assert rope.layers(tmp_path) == SMOL.layers()
    assert rope.layers(str(tmp_path)) == SMOL.layers()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="directory without a config.json"):
        rope.layers(empty)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        rope.layers(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="cannot read"):
        rope.layers(tmp_path / "missing.json")


def test_the_command_line_names_flags(capsys):
    from pemath.cli import main

    with pytest.raises(SystemExit):
        main(["inv-freq", "--config", "smollm3-3b"])
    err = capsys.readouterr().err
    assert "pass --layer" in err and "layer=" not in err
    assert main(["inv-freq", "--config", "smollm3-3b", "--layer", "3"]) == 0
    assert "applies no RoPE" in capsys.readouterr().out
    assert main(["inv-freq", "--config", "smollm3-3b", "--layer", "2"]) == 0
    assert "theta_i" in capsys.readouterr().out


def test_an_unknown_model_type_without_transformers_is_refused_with_what_to_do(monkeypatch):
    from pemath.rope.hf import probe

    monkeypatch.setattr(probe, "available", lambda: False)
    cfg = {"model_type": "brand_new", "hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 1e6,
           "num_hidden_layers": 4}
    with pytest.raises(ValueError, match=r"pemath\[hf\].*layout='half'"):
        rope.from_hf_config(cfg)
    assert rope.from_hf_config(cfg, layout="half") == rope.Spec("half", base=1e6, head_dim=128)
    for key, value in (("rotary_dim", 64), ("no_rope_layers", [1, 1, 1, 0]), ("full_attention_interval", 4),
                       ("layer_types", ["sliding_attention", "full_attention"] * 2), ("use_rotary_pos_emb", True)):
        with pytest.raises(ValueError, match=rf"\['{key}'\] may change the RoPE"):
            rope.from_hf_config({**cfg, key: value}, layout="half")


@pytest.mark.gpu
def test_nope_and_the_forward_length_on_cupy():
    from .conftest import _cupy_or_skip

    cp = _cupy_or_skip()
    x = cp.random.standard_normal((2, 8, 16, 128), dtype=cp.float32)
    pos = cp.arange(16)
    y = rope.apply(x, pos, spec=rope.NoRope(128))
    assert isinstance(y, cp.ndarray) and bool(cp.all(y == x)) and y.data.ptr != x.data.ptr
    assert_rope_close(y, x, pos, spec=rope.NoRope(128))
    dyn = rope.Spec("half", base=1e4, head_dim=128, scaling=scaling.DynamicNTK(4.0, 8))
    a = rope.apply(x, pos, spec=dyn)
    assert bool(cp.all(a == rope.apply(x, pos, spec=dyn, seq_len=16)))
    assert_rope_close(a, x, pos, spec=dyn)


def test_cohere2_without_a_sliding_window_rotates_no_layer():
    """Cohere 2's code applies RoPE only where it slides: sliding_window null makes every layer NoPE."""
    specs = rope.layers({**COHERE2, "sliding_window": None})
    assert all(isinstance(s, rope.NoRope) for s in specs)


def test_the_moved_names_warn_and_name_their_replacement():
    import importlib

    with pytest.warns(DeprecationWarning, match="from pemath.rope import from_hf_config"):
        old = importlib.import_module("pemath.rope.hf_config").from_hf_config
    assert old is rope.from_hf_config
    with pytest.warns(DeprecationWarning, match="pemath.rope.apply_mrope"):
        from pemath.rope.axial import apply_mrope
    assert apply_mrope is rope.apply_mrope
