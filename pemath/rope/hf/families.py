"""What a Hugging Face ``model_type`` fixes about its RoPE that its config.json does not say.

One entry per model type whose transformers modeling code pemath has checked: the
layout its apply function uses, the config class's default ``rope_theta`` (used when
the file has none: Llama 2 and Falcon ship without one), and where its code departs
from the generic reading of the config. ``from_hf_config`` reads this table and nothing
else about model types.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Family", "FAMILIES", "ALIBI_TYPES", "T5_TYPES", "FIXED_BASE", "DEFAULT_ROTARY_DIM", "DEFAULT_QK_ROPE_HEAD_DIM"]


@dataclasses.dataclass(frozen=True)
class Family:
    #: how the model's apply function pairs features ("half": rotate_half, "interleaved")
    layout: str
    #: the config class's rope_theta, used where the file has none (Llama 2 and Falcon ship none)
    default_theta: float = 10000.0
    #: the config class's partial rotary factor where the file has none (GPT-NeoX 0.25, Phi 0.5, ...)
    default_partial: float | None = None
    #: the config class's head_dim where the file has none and the class does not derive it
    default_head_dim: int | None = None
    #: the config class's whole RoPE dict where the file has none (gpt-oss, Ministral 3: YaRN)
    default_rope: tuple | None = None
    #: M-RoPE: the code's sections where the file has none (Qwen2-VL [16, 24, 24], Qwen3-VL [24, 20, 20])
    default_mrope: tuple | None = None
    #: M-RoPE: the code's section pattern whatever the file says (Qwen3-VL: always interleaved)
    mrope_interleaved: bool | None = None
    #: top-level keys the config class does not read (GPT-NeoX: rope_theta, partial_rotary_factor)
    unread: tuple = ()
    #: the layout the code returns, where it differs (DeepSeek-V3 with rope_interleave)
    out_layout: str | None = None
    #: the code reads the partial rotary size from this key instead of partial_rotary_factor
    rotary_key: str | None = None
    #: which layers apply RoPE, where not all do: "no_rope_layers" (the config's 0/1 list, 1 = RoPE; absent:
    #: every no_rope_layer_interval-th layer is NoPE, Llama 4 and SmolLM3), "sliding" (only the sliding-window
    #: layers of layer_types, Cohere 2's global layers are NoPE); None: every attention layer
    rope_layers: str | None = None
    #: how the config class derives layer_types where the file has none: (key, default n, where) with layer i
    #: full attention when (i + 1) % n == 0 ("last" of each group: Gemma 3, Cohere 2) or i % n == 0 ("first":
    #: ModernBERT), sliding otherwise
    layer_pattern: tuple | None = None
    #: the RoPE part of the head is its own size under this key (DeepSeek's MLA: qk_rope_head_dim, default 64)
    rope_head_key: str | None = None
    #: a config flag that, when false, makes the code rotate half-split pairs in and out (DeepSeek-V3's
    #: rope_interleave, default true)
    interleave_key: str | None = None
    #: a base under another key where the file has no rope_theta (GPT-NeoX: rotary_emb_base)
    theta_key: str | None = None
    #: the RoPE of each layer type where the config keeps them apart without a per-type rope dict:
    #: {layer type: (key of its base, class default base, whether the config's rope dict applies to it)}
    per_type: tuple | None = None
    #: the rope dict's short_mscale / long_mscale are the attention factors of LongRoPE's regimes (PhiMoE)
    longrope_mscales: bool = False
    #: YaRN's mscale_all_dim also multiplies the softmax scale, by its square (DeepSeek)
    softmax_mscale: bool = False
    #: the NoPE layers scale their queries by the token's index, outside RoPE (Llama 4's attn_temperature_tuning):
    #: (flag key, flag default, floor_scale key and default, attn_scale key and default)
    nope_temperature: tuple | None = None
    #: what the code does that a reader would not guess
    note: str = ""


#: Gemma 3 (v4 files): the full layers take rope_theta (1e6) and the rope dict, the sliding layers plain RoPE at
#: rope_local_base_freq (10000)
_GEMMA3 = (("full_attention", "rope_theta", 1_000_000.0, True), ("sliding_attention", "rope_local_base_freq", 10_000.0,
                                                                 False))


def _f(layout: str = "half", **kw) -> Family:
    return Family(layout, **kw)


#: Read from transformers 5.23.0: each model type's modeling code (layout) and config class
#: (defaults). tests/test_models.py checks every default against the recorded output of the
#: model's own code on a config.json that omits them (tests/fixtures/make_model_fixtures.py).
FAMILIES: dict[str, Family] = {
    **{t: _f() for t in ("llama", "mistral", "ministral", "qwen2", "qwen2_moe", "qwen3_moe", "phi3", "gemma",
                         "gemma2", "falcon", "olmo", "olmo2", "granite", "granitemoe", "starcoder2", "internlm3")},
    "mixtral": _f(default_theta=1e6),
    "mistral3": _f(default_theta=1e9, default_head_dim=128,
                   note="a wrapper: its text_config (Ministral 3) is what a shipped file holds"),
    "qwen3": _f(default_head_dim=128),
    "gemma": _f(default_head_dim=256),
    "gemma2": _f(default_head_dim=256),
    "gemma3": _f(default_head_dim=256, layer_pattern=("sliding_window_pattern", 6, "last"), per_type=_GEMMA3, note="sliding layers: rope_local_base_freq (10000) and no scaling; full "
                                            "layers: rope_theta (1e6) and rope_scaling"),
    "gemma3_text": _f(default_head_dim=256, layer_pattern=("sliding_window_pattern", 6, "last"), per_type=_GEMMA3,
                      note="sliding layers: rope_local_base_freq (10000) and no scaling; full "
                                                 "layers: rope_theta (1e6) and rope_scaling"),
    "modernbert": _f(layer_pattern=("global_attn_every_n_layers", 3, "first"), per_type=(
        ("full_attention", "global_rope_theta", 160000.0, False), ("sliding_attention", "local_rope_theta", 10000.0,
                                                                    False)), note="global layers: global_rope_theta (160000); local layers: local_rope_theta (10000)"),
    "stablelm": _f(default_partial=0.25),
    "persimmon": _f(default_partial=0.5),
    "phi": _f(default_partial=0.5),
    "smollm3": _f(default_theta=2e6, rope_layers="no_rope_layers",
                  note="no_rope_layers[i] = 0 makes layer i NoPE (default: every 4th layer)"),
    **{t: _f(default_theta=1e6, default_mrope=(16, 24, 24), mrope_interleaved=False)
       for t in ("qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text")},
    **{t: _f(default_theta=5e5, default_head_dim=128, default_mrope=(24, 20, 20), mrope_interleaved=True,
             note="the rotary class always deals the sections out interleaved (THW...): it does not read "
                  "mrope_interleaved")
       for t in ("qwen3_vl", "qwen3_vl_text")},
    "gpt_oss": _f(default_head_dim=64, default_rope=(
        ("rope_type", "yarn"), ("factor", 32.0), ("beta_fast", 32.0), ("beta_slow", 1.0), ("truncate", False),
        ("original_max_position_embeddings", 4096), ("rope_theta", 150000.0))),
    "ministral3": _f(default_head_dim=128, default_rope=(
        ("rope_type", "yarn"), ("rope_theta", 1e6), ("factor", 16.0), ("original_max_position_embeddings", 16384),
        ("beta_fast", 32.0), ("beta_slow", 1.0), ("mscale_all_dim", 1.0), ("mscale", 1.0),
        ("llama_4_scaling_beta", 0.1))),
    "phimoe": _f(default_theta=1e6, longrope_mscales=True,
                 note="transformers' PhimoeRotaryEmbedding recomputes the LongRoPE frequencies without seq_len in "
                      "forward, so they stay the short ones in every regime; cos/sin are multiplied by long_mscale "
                      "above original_max_position_embeddings, short_mscale up to it. pemath follows HF (the "
                      "original release used the long factors)"),
    "gpt_neox": _f(default_partial=0.25, rotary_key="rotary_pct", theta_key="rotary_emb_base", unread=("rope_theta", "partial_rotary_factor"),
                   note="the config class reads rotary_emb_base and rotary_pct (or rope_parameters); a top-level "
                        "rope_theta or partial_rotary_factor is ignored by it"),
    "gptj": _f("interleaved", rotary_key="rotary_dim",
               note="rotate_every_two on the first rotary_dim (default 64) features; the code fixes the base at 10000"),
    "codegen": _f("interleaved", rotary_key="rotary_dim", note="GPT-J's rotation; the base is fixed at 10000"),
    "cohere": _f("interleaved", default_theta=5e5, note="rotate_half on x[..., ::2], x[..., 1::2]: interleaved pairs"),
    "cohere2": _f("interleaved", rope_layers="sliding", layer_pattern=("sliding_window_pattern", 4, "last"),
                  note="rotate_half on x[..., ::2], x[..., 1::2]: interleaved pairs; RoPE on the sliding-window "
                       "layers only (layer_types; default every 4th layer global, NoPE)"),
    "glm": _f("interleaved", default_partial=0.5, default_head_dim=128,
              note="GLM's rotate_half pairs (2i, 2i+1) on the first half of the head"),
    "glm4": _f("interleaved", default_partial=0.5, default_head_dim=128,
               note="GLM's rotate_half pairs (2i, 2i+1) on the first half of the head"),
    **{t: _f("interleaved", default_theta=5e5, default_head_dim=128, rope_layers="no_rope_layers",
             nope_temperature=("attn_temperature_tuning", True, "floor_scale", 8192, "attn_scale", 0.1),
             note="complex freqs_cis on view_as_complex(x.reshape(..., -1, 2)): interleaved pairs; "
                  "no_rope_layers[i] = 0 makes layer i NoPE (default: every 4th layer)")
       for t in ("llama4", "llama4_text")},
    "deepseek_v2": _f("interleaved", rope_head_key="qk_rope_head_dim", softmax_mscale=True, note="complex multiply on interleaved q_pe/k_pe; returns them interleaved"),
    "deepseek_v3": _f("interleaved", out_layout="half", rope_head_key="qk_rope_head_dim", interleave_key="rope_interleave",
                      softmax_mscale=True,
                      note="with rope_interleave (default true) the code de-interleaves q_pe/k_pe, then applies "
                           "rotate_half: interleaved in, half-split out; rope_interleave false: half in and out"),
}

#: The GPT-J-style models whose code fixes RoPE's base (no rope_theta is read)
FIXED_BASE = {"gptj": 10000.0, "codegen": 10000.0}
#: GPT-J's rotary_dim where the file has none
DEFAULT_ROTARY_DIM = {"gptj": 64, "codegen": 64}
#: DeepSeek's qk_rope_head_dim where the file has none
DEFAULT_QK_ROPE_HEAD_DIM = 64

#: model types whose position encoding is ALiBi (pemath.alibi), with the config key that says so
ALIBI_TYPES = {"bloom": None, "mpt": "attn_config.alibi", "falcon": "alibi"}

#: model types with T5's relative position buckets (pemath.t5)
T5_TYPES = ("t5", "mt5", "umt5", "longt5", "switch_transformers")
