"""rope.from_gguf: the RoPE llama.cpp computes for a GGUF file, on files written here with gguf.GGUFWriter."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from pemath import GGUFWarning, rope
from pemath import scaling as sc
from tests.gguf_records import write_kv

gguf = pytest.importorskip("gguf", reason="gguf is optional (pip install 'pemath[gguf]')")


def write(tmp_path, arch: str, kv: dict, tensors: dict | None = None, name: str = "m.gguf") -> str:
    """A GGUF file with the given metadata (ints as uint32, floats as float32, lists as arrays) and tensors."""
    return write_kv(tmp_path / name, arch, kv, tensors)


LLAMA = {"embedding_length": 4096, "attention.head_count": 32, "block_count": 32, "context_length": 131072,
         "rope.freq_base": 500000.0, "rope.dimension_count": 128}


def test_llama_is_norm_and_its_defaults_are_llama_cpps(tmp_path):
    spec = rope.from_gguf(write(tmp_path, "llama", {"embedding_length": 512, "attention.head_count": 8}))
    assert spec == rope.Spec("interleaved", base=10000.0, head_dim=64, rotary_dim=64)  # freq_base 10000, n_rot


def test_llama_31_rope_freqs_are_its_frequency_factors(tmp_path):
    """llama.cpp divides each pair's angle by rope_freqs; equal to HF's Llama 3.1 smoothing (float32 factors)."""
    llama3 = sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0)
    plain = np.asarray(rope.inv_freq(128, base=500000.0))
    scaled = np.asarray(rope.inv_freq(128, base=500000.0, scaling=llama3))
    ff = (plain / scaled).astype(np.float32)
    spec = rope.from_gguf(write(tmp_path, "llama", LLAMA, {"rope_freqs.weight": ff}))
    assert spec.layout == "interleaved" and spec.rotary_dim == 128
    got = np.asarray(rope.inv_freq(128, spec=spec))
    np.testing.assert_allclose(got, plain / ff.astype(np.float64), rtol=1e-15)
    np.testing.assert_allclose(got, scaled, rtol=2**-23)  # the factors are stored in float32
    assert spec.frequencies(128, None)[1] == 1.0  # no amplitude


def test_qwen2_is_neox_and_yarn_follows_llama_cpps_rules(tmp_path):
    kv = {"embedding_length": 3584, "attention.head_count": 28, "rope.freq_base": 1000000.0,
          "rope.scaling.type": "yarn", "rope.scaling.factor": 4.0, "rope.scaling.original_context_length": 32768,
          "rope.scaling.yarn_beta_fast": 8.0}  # the betas in the file are not read by qwen2's graph
    with pytest.warns(GGUFWarning, match="qwen2.rope.scaling.yarn_beta_fast = 8, but llama.cpp does not read it"):
        spec = rope.from_gguf(write(tmp_path, "qwen2", kv))
    assert spec.layout == "half" and spec.head_dim == 128
    y = spec.scaling
    assert isinstance(y, sc.YaRN) and (y.factor, y.original_max_position, y.beta_fast, y.beta_slow) == \
        (4.0, 32768, 32.0, 1.0)
    assert y.truncate and spec.frequencies(128, None)[1] == pytest.approx(1 + 0.1 * math.log(4.0))


def test_linear_scaling_by_the_old_key_and_none_never_scales(tmp_path):
    spec = rope.from_gguf(write(tmp_path, "llama", {**LLAMA, "rope.scale_linear": 4.0}))
    assert spec.scaling == sc.Linear(4.0)
    spec = rope.from_gguf(write(tmp_path, "llama", {**LLAMA, "rope.scaling.type": "none",
                                                    "rope.scaling.factor": 8.0}, name="none.gguf"))
    assert spec.scaling is None


def test_partial_rotary_from_the_dimension_count(tmp_path):
    spec = rope.from_gguf(write(tmp_path, "gptneox", {"embedding_length": 2048, "attention.head_count": 8,
                                                      "rope.dimension_count": 64}))
    assert (spec.layout, spec.head_dim, spec.rotary_dim) == ("half", 256, 64)


def test_phi3_longrope_factors_are_chosen_by_the_context(tmp_path):
    short, long = np.linspace(1.0, 2.0, 48), np.linspace(1.0, 40.0, 48)
    kv = {"embedding_length": 3072, "attention.head_count": 32, "rope.dimension_count": 96,
          "context_length": 131072, "rope.scaling.original_context_length": 4096,
          "rope.scaling.attn_factor": 1.19}
    path = write(tmp_path, "phi3", kv, {"rope_factors_long.weight": long, "rope_factors_short.weight": short})
    with pytest.raises(TypeError, match="pass n_ctx"):
        rope.from_gguf(path)
    for n_ctx, want in ((4096, short), (8192, long)):
        spec = rope.from_gguf(path, n_ctx=n_ctx)
        f, a = spec.frequencies(96, 100)
        np.testing.assert_allclose(f, np.asarray(rope.inv_freq(96, base=10000.0)) / want.astype(np.float32),
                                   rtol=1e-15)
        assert a == pytest.approx(np.float32(1.19))


def test_gemma3_sliding_window_layers_have_their_own_base(tmp_path):
    kv = {"embedding_length": 2560, "attention.head_count": 8, "attention.key_length": 256, "block_count": 34,
          "rope.freq_base": 1000000.0, "rope.scaling.type": "linear", "rope.scaling.factor": 8.0,
          "attention.sliding_window": 1024}
    path = write(tmp_path, "gemma3", kv)
    with pytest.raises(TypeError, match="pass layer="):
        rope.from_gguf(path)
    local, glob = rope.from_gguf(path, layer=0), rope.from_gguf(path, layer=5)
    assert (local.base, local.scaling) == (10000.0, None)
    assert (glob.base, glob.scaling) == (1000000.0, sc.Linear(8.0))
    assert [rope.from_gguf(path, layer=i).base for i in range(12)] == [10000.0] * 5 + [1e6] + [10000.0] * 5 + [1e6]


def test_gemma2_and_gpt_oss_sliding_layers_keep_the_global_rope_unless_the_file_says(tmp_path):
    # load_swa_pattern(ml, 2) with the sliding base and scale defaulting to the global ones
    kv = {"embedding_length": 3584, "attention.head_count": 16, "attention.key_length": 256, "block_count": 42,
          "rope.freq_base": 10000.0}
    path = write(tmp_path, "gemma2", kv)
    assert rope.from_gguf(path) == rope.from_gguf(path, layer=0) == rope.from_gguf(path, layer=1)
    path = write(tmp_path, "gemma2", {**kv, "rope.freq_base_swa": 5000.0}, name="swa.gguf")
    with pytest.raises(TypeError, match="pass layer="):
        rope.from_gguf(path)
    assert [rope.from_gguf(path, layer=i).base for i in range(4)] == [5000.0, 10000.0, 5000.0, 10000.0]
    oss = {"embedding_length": 2880, "attention.head_count": 64, "attention.key_length": 64, "block_count": 24,
           "rope.freq_base": 150000.0, "attention.sliding_window": 128, "rope.scaling.type": "yarn",
           "rope.scaling.factor": 32.0, "rope.scaling.original_context_length": 4096}
    path = write(tmp_path, "gpt-oss", oss, name="oss.gguf")
    assert rope.from_gguf(path, layer=0) == rope.from_gguf(path, layer=1) == rope.from_gguf(path)
    assert isinstance(rope.from_gguf(path).scaling, sc.YaRN)


def test_olmo3_sliding_layers_are_plain_and_modernbert_is_dense_first(tmp_path):
    # OLMo 2's graph: sliding layers (pattern 4) take freq_scale 1, ext_factor 0, attn_factor 1: plain RoPE
    kv = {"embedding_length": 4096, "attention.head_count": 32, "block_count": 32, "rope.freq_base": 500000.0,
          "attention.sliding_window": 4096, "rope.scaling.type": "yarn", "rope.scaling.factor": 8.0,
          "rope.scaling.original_context_length": 8192, "rope.freq_base_swa": 1.0}  # the graph ignores this key
    path = write(tmp_path, "olmo2", kv)
    with pytest.raises(TypeError, match="sliding-window layers .* pass layer="):
        rope.from_gguf(path)
    specs = [rope.from_gguf(path, layer=i) for i in range(4)]
    assert [s.scaling is None for s in specs] == [True, True, True, False]
    assert {s.base for s in specs} == {500000.0}
    olmo2 = write(tmp_path, "olmo2", {k: v for k, v in kv.items() if k != "attention.sliding_window"}, name="o2.gguf")
    assert isinstance(rope.from_gguf(olmo2).scaling, sc.YaRN)  # no window: every layer the global call
    # ModernBERT: load_swa_pattern(ml, 3, dense_first=true): layers 0, 3, 6 global, the others sliding
    bert = {"embedding_length": 768, "attention.head_count": 12, "block_count": 22, "rope.freq_base": 160000.0,
            "rope.freq_base_swa": 10000.0, "attention.sliding_window": 128}
    path = write(tmp_path, "modern-bert", bert, name="bert.gguf")
    assert [rope.from_gguf(path, layer=i).base for i in range(7)] == [160000.0] + [10000.0] * 2 + [160000.0] + \
        [10000.0] * 2 + [160000.0]


def test_mrope_sections(tmp_path):
    kv = {"embedding_length": 3584, "attention.head_count": 28, "rope.freq_base": 1000000.0,
          "rope.dimension_sections": [16, 24, 24, 0]}
    spec = rope.from_gguf(write(tmp_path, "qwen2vl", kv))
    assert (spec.layout, spec.mrope_section, spec.mrope_interleaved) == ("half", (16, 24, 24), False)
    spec = rope.from_gguf(write(tmp_path, "qwen3vl", {**kv, "rope.dimension_sections": [24, 20, 20, 0]},
                                name="q3.gguf"))
    assert spec.mrope_section == (24, 20, 20) and spec.mrope_interleaved


def test_architectures_without_rope(tmp_path):
    for arch in ("bloom", "starcoder"):  # starcoder: NORM in llama.cpp's table, but its graph applies no RoPE
        out = rope.from_gguf(write(tmp_path, arch, {"embedding_length": 256, "attention.head_count": 4},
                                   name=f"{arch}.gguf"))
        assert isinstance(out, rope.NoRope) and out.head_dim == 64


def test_factors_an_architecture_ignores_are_warned_about(tmp_path):
    path = write(tmp_path, "qwen2", {"embedding_length": 256, "attention.head_count": 4},
                 {"rope_freqs.weight": np.ones(32)})
    with pytest.warns(GGUFWarning, match="rope_freqs.weight, which llama.cpp's 'qwen2' graph does not read"):
        spec = rope.from_gguf(path)
    assert spec.scaling is None


@pytest.mark.parametrize("arch, kv, tensors, error, match", [
    ("llama", {"embedding_length": 256, "attention.head_count": 4}, {"rope_freqs.weight": np.ones(7)}, ValueError,
     "rope_freqs.weight has 7 values; llama.cpp needs n_rot/2 = 32"),
    ("llama", {"embedding_length": 256, "attention.head_count": 4, "rope.dimension_count": 32}, None, ValueError,
     "llama.cpp refuses this file"),
    ("notanarch", {"embedding_length": 256, "rope.freq_base": 5.0}, None, ValueError,
     r"'notanarch' is not in llama.cpp's table .* RoPE keys found: \['notanarch.rope.freq_base'\]"),
    ("grok", {"embedding_length": 256, "attention.head_count": 4}, None, ValueError,
     r"RoPE handling pemath does not model \(.*YaRN's ext_factor read from the file"),
    ("llama", {"embedding_length": 256, "attention.head_count": 4, "rope.scaling.type": "ntk"}, None, ValueError,
     "llama.cpp knows none, linear, yarn, longrope"),
    ("llama", {"embedding_length": 256, "attention.head_count": 4, "rope.dimension_sections": [1, 2]}, None,
     GGUFWarning, "llama.cpp rotates 'llama' with its NORM rope type, without M-RoPE sections"),
])
def test_bad_files_are_refused_with_the_reason(tmp_path, arch, kv, tensors, error, match):
    path = write(tmp_path, arch, kv, tensors)
    if error is GGUFWarning:
        with pytest.warns(GGUFWarning, match=match):
            rope.from_gguf(path)
        return
    with pytest.raises(error, match=match):
        rope.from_gguf(path)


def test_not_a_gguf_file_and_bad_arguments(tmp_path):
    p = tmp_path / "x.gguf"
    p.write_bytes(b"PK\x03\x04 not gguf")
    with pytest.raises(ValueError, match="is not a GGUF file"):
        rope.from_gguf(p)
    with pytest.raises(ValueError, match="is not a file"):
        rope.from_gguf(tmp_path / "missing.gguf")
    with pytest.raises(TypeError, match="path must be a path to a GGUF file"):
        rope.from_gguf(3)
    path = write(tmp_path, "llama", LLAMA)
    with pytest.raises(ValueError, match="layer"):
        rope.from_gguf(path, layer=32)
    with pytest.raises(ValueError, match="n_ctx"):
        rope.from_gguf(path, n_ctx=0)


def test_the_table_is_llama_cpps():
    table = rope.gguf_architectures()
    assert len(table) > 100 and rope.LLAMA_CPP["commit"] and rope.LLAMA_CPP["date"]
    assert table["llama"]["rope_type"] == "norm" and table["qwen2"]["rope_type"] == "neox"
    assert table["qwen2vl"]["rope_type"] == "mrope" and table["qwen3vl"]["rope_type"] == "imrope"
    assert table["glm4"]["rope_type"] == ["conditional", "mrope", "norm"]
    assert table["bloom"]["rope_type"] == "none"
    # an architecture whose graph ignores the frequency factors, and one that reads them
    assert not table["qwen2"]["factors"] and table["llama"]["factors"]


def test_a_gguf_reader_is_accepted(tmp_path):
    reader = gguf.GGUFReader(write(tmp_path, "qwen3", {"embedding_length": 256, "attention.head_count": 4,
                                                       "attention.key_length": 128}))
    assert rope.from_gguf(reader) == rope.Spec("half", base=10000.0, head_dim=128, rotary_dim=128)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rope.from_gguf(reader)


def test_llama4_and_smollm3_skip_rope_on_every_fourth_layer(tmp_path):
    kv = {"embedding_length": 2048, "attention.head_count": 16, "block_count": 36, "rope.freq_base": 5000000.0}
    path = write(tmp_path, "smollm3", kv)
    with pytest.raises(TypeError, match=r"\(il \+ 1\) % 4 == 0"):
        rope.from_gguf(path)
    kinds = [type(rope.from_gguf(path, layer=i)).__name__ for i in range(8)]
    assert kinds == ["Spec"] * 3 + ["NoRope"] + ["Spec"] * 3 + ["NoRope"]
    assert "skips RoPE on layer 3" in rope.from_gguf(path, layer=3).reason
    # Llama 4 with attention.sliding_window = 0: llama.cpp's "always use rope" step is the layer count, so only
    # the last layer has none
    llama4 = {"embedding_length": 5120, "attention.head_count": 40, "attention.key_length": 128, "block_count": 48,
              "rope.freq_base": 500000.0, "attention.sliding_window": 0}
    path = write(tmp_path, "llama4", llama4, name="l4.gguf")
    assert [isinstance(rope.from_gguf(path, layer=i), rope.NoRope) for i in (3, 46, 47)] == [False, False, True]
    # without block_count that last layer is unknown: refused (llama.cpp refuses the file), not "every layer rotates"
    del llama4["block_count"]
    with pytest.raises(ValueError, match="block_count"):
        rope.from_gguf(write(tmp_path, "llama4", llama4, name="l4b.gguf"), layer=3)


def test_ministral3_reads_yarns_beta_and_log_multiplier_keys(tmp_path):
    kv = {"embedding_length": 3072, "attention.head_count": 32, "attention.key_length": 128, "block_count": 26,
          "rope.freq_base": 1000000.0, "rope.scaling.type": "yarn", "rope.scaling.factor": 16.0,
          "rope.scaling.original_context_length": 16384, "rope.scaling.yarn_beta_fast": 16.0,
          "rope.scaling.yarn_beta_slow": 2.0, "rope.scaling.yarn_log_multiplier": 0.5}
    s = rope.from_gguf(write(tmp_path, "mistral3", kv)).scaling
    assert (s.beta_fast, s.beta_slow) == (16.0, 2.0)
    # llama_context: get_mscale(16, 1) / get_mscale(16, 0.5), and ggml's (1 + 0.1 ln s) cancels its division
    assert s.attention_factor == pytest.approx((1 + 0.1 * math.log(16)) / (1 + 0.05 * math.log(16)), rel=1e-12)


def test_deepseek2_rotates_the_trailing_slice_with_its_yarn_multiplier(tmp_path):
    # DeepSeek-V2-Lite as llama.cpp's converter writes it: yarn_log_multiplier = 0.1 * mscale_all_dim
    kv = {"embedding_length": 2048, "attention.head_count": 16, "attention.key_length": 576,
          "attention.key_length_mla": 192, "block_count": 27, "rope.dimension_count": 64, "rope.freq_base": 10000.0,
          "rope.scaling.type": "yarn", "rope.scaling.factor": 40.0, "rope.scaling.original_context_length": 4096,
          "rope.scaling.yarn_log_multiplier": 0.0707}
    spec = rope.from_gguf(write(tmp_path, "deepseek2", kv))
    assert (spec.layout, spec.head_dim, spec.rotary_dim, spec.rotary_offset) == ("interleaved", 192, 64, 128)
    assert spec.scaling.attention_factor == pytest.approx(1.0, rel=1e-7)  # get_mscale(s, 0.707) / itself
    # kq_scale: mscale = 1 * (1 + 0.1 * 0.707 * ln 40), squared; the config's softmax_scale
    assert spec.softmax_scale == pytest.approx((1 + 0.0707 * math.log(40)) ** 2, rel=1e-6)
    from pemath import models

    assert rope.gguf_differences(write(tmp_path, "deepseek2", kv, name="b.gguf"),
                                 models.get("deepseek-v2-lite").config) == []
    # YaRN's betas are not read for deepseek2: a file that holds others is warned about, and they are not used
    with pytest.warns(GGUFWarning, match="yarn_beta_fast = 16, but llama.cpp does not read it"):
        spec = rope.from_gguf(write(tmp_path, "deepseek2", {**kv, "rope.scaling.yarn_beta_fast": 16.0}, name="c.gguf"))
    assert spec.scaling.beta_fast == 32.0


def test_sliding_window_edge_cases_read_as_llama_cpp_reads_them(tmp_path):
    g2 = {"embedding_length": 3584, "attention.head_count": 16, "attention.key_length": 256, "block_count": 42,
          "rope.freq_base": 10000.0}
    # type "none" resets only the global layers' freq_scale: the sliding ones keep 1 / factor as read
    path = write(tmp_path, "gemma2", {**g2, "rope.scaling.type": "none", "rope.scaling.factor": 8.0})
    assert (rope.from_gguf(path, layer=0).scaling, rope.from_gguf(path, layer=1).scaling) == (sc.Linear(8.0), None)
    with pytest.raises(TypeError, match="sliding-window layers .* pass layer="):
        rope.from_gguf(path)
    # gemma3 under type "none": no layer scales, so no layer= is needed
    g3 = {"embedding_length": 2560, "attention.head_count": 8, "attention.key_length": 256, "block_count": 34,
          "rope.freq_base": 10000.0, "rope.scaling.type": "none", "rope.scaling.factor": 8.0,
          "attention.sliding_window": 1024}
    assert rope.from_gguf(write(tmp_path, "gemma3", g3, name="g3.gguf")).scaling is None
    # the sliding layers' own dims are not modelled: refused
    with pytest.raises(ValueError, match="dimension_count_swa"):
        rope.from_gguf(write(tmp_path, "gemma3", {**g3, "rope.dimension_count_swa": 128}, name="d.gguf"), layer=0)
    # a pattern array shorter than the layers: the rest are dense; an all-false array needs no layer=
    arr = {**g3, "rope.scaling.type": "linear", "attention.sliding_window_pattern": [True, True]}
    path = write(tmp_path, "gemma3", arr, name="a.gguf")
    assert [rope.from_gguf(path, layer=i).base for i in (0, 1, 2, 5)] == [10000.0, 10000.0, 10000.0, 10000.0]
    assert [rope.from_gguf(path, layer=i).scaling for i in (1, 2)] == [None, sc.Linear(8.0)]
    flat = write(tmp_path, "gemma3", {**g3, "attention.sliding_window_pattern": [False, False]}, name="f.gguf")
    assert rope.from_gguf(flat).scaling is None
    with pytest.raises(ValueError, match="llama.cpp reads a bool array"):
        rope.from_gguf(write(tmp_path, "gemma3", {**g3, "attention.sliding_window_pattern": [1.0, 0.0]},
                             name="x.gguf"), layer=0)
    # gpt-oss: llama.cpp requires attention.sliding_window
    oss = {"embedding_length": 2880, "attention.head_count": 64, "attention.key_length": 64, "block_count": 24}
    with pytest.raises(ValueError, match="requires"):
        rope.from_gguf(write(tmp_path, "gpt-oss", oss, name="o.gguf"))
