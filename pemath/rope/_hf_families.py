"""What a Hugging Face ``model_type`` fixes about its RoPE that its config.json does not say.

One entry per model type whose transformers modeling code pemath has checked: the
layout its apply function uses, the config class's default ``rope_theta`` (used when
the file has none: Llama 2 and Falcon ship without one), and where its code departs
from the generic reading of the config. ``from_hf_config`` reads this table and nothing
else about model types.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Family", "FAMILIES", "ALIBI_TYPES", "T5_TYPES"]


@dataclasses.dataclass(frozen=True)
class Family:
    #: how the model's apply function pairs features ("half": rotate_half, "interleaved")
    layout: str
    #: the config class's rope_theta when the file has none (None: the file must give it)
    default_theta: float | None = 10000.0
    #: the layout the code returns, where it differs (DeepSeek-V3 with rope_interleave)
    out_layout: str | None = None
    #: the code reads the partial rotary size from this key instead of partial_rotary_factor
    rotary_key: str | None = None
    #: what the code does that a reader would not guess
    note: str = ""


_HALF = Family("half")

FAMILIES: dict[str, Family] = {
    **{
        t: _HALF
        for t in (
            "llama", "mistral", "mixtral", "ministral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi", "phi3",
            "gemma", "gemma2", "gemma3", "gemma3_text", "falcon", "stablelm", "persimmon", "olmo", "olmo2",
            "granite", "granitemoe", "modernbert", "gpt_oss", "smollm3", "starcoder2", "qwen2_vl", "qwen2_vl_text",
            "qwen2_5_vl", "qwen2_5_vl_text", "qwen3_vl", "qwen3_vl_text", "internlm3", "ministral3", "mistral3",
        )
    },
    "phimoe": Family("half", note="transformers' PhimoeRotaryEmbedding recomputes the LongRoPE frequencies without "
                                  "seq_len in forward, so they stay the short ones in every regime; cos/sin are "
                                  "multiplied by long_mscale above original_max_position_embeddings, short_mscale "
                                  "up to it. pemath follows HF (the original release used the long factors)"),
    "gpt_neox": Family("half", rotary_key="rotary_pct",
                       note="v4 configs spell the base rotary_emb_base and the partial factor rotary_pct"),
    "gptj": Family("interleaved", rotary_key="rotary_dim",
                   note="rotate_every_two on the first rotary_dim features; the base is fixed at 10000 in the code"),
    "codegen": Family("interleaved", rotary_key="rotary_dim", note="GPT-J's rotation"),
    "cohere": Family("interleaved", note="rotate_half on x[..., ::2], x[..., 1::2]: interleaved pairs"),
    "cohere2": Family("interleaved", note="rotate_half on x[..., ::2], x[..., 1::2]: interleaved pairs"),
    "glm": Family("interleaved", note="GLM's rotate_half pairs (2i, 2i+1) on the first half of the head"),
    "glm4": Family("interleaved", note="GLM's rotate_half pairs (2i, 2i+1) on the first half of the head"),
    "llama4": Family("interleaved", default_theta=500000.0,
                     note="complex freqs_cis on view_as_complex(x.reshape(..., -1, 2)): interleaved pairs"),
    "llama4_text": Family("interleaved", default_theta=500000.0,
                          note="complex freqs_cis on view_as_complex(x.reshape(..., -1, 2)): interleaved pairs"),
    "deepseek_v2": Family("interleaved",
                          note="complex multiply on interleaved q_pe/k_pe; returns them interleaved"),
    "deepseek_v3": Family("interleaved", out_layout="half",
                          note="with rope_interleave (default true) the code de-interleaves q_pe/k_pe, then applies "
                               "rotate_half: interleaved in, half-split out; rope_interleave false: half in and out"),
}

#: model types whose position encoding is ALiBi (pemath.alibi), with the config key that says so
ALIBI_TYPES = {"bloom": None, "mpt": "attn_config.alibi", "falcon": "alibi"}

#: model types with T5's relative position buckets (pemath.t5)
T5_TYPES = ("t5", "mt5", "umt5", "longt5", "switch_transformers")
